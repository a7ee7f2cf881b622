//! Fuzzing the vehicle file reader: random bytes and random mutations of the shipped files must
//! never panic, every error must point inside the file it names, and every vehicle that is
//! accepted must be one the simulation can run (finite, positive where it must be).
//!
//! A test run fuzzes for `FUZZ_SECONDS` (default 5 s); the README records a 10-minute run:
//! `FUZZ_SECONDS=600 cargo test --release --test integration vehicle_file_fuzz:: -- --nocapture`.
//! Set `FUZZ_SEED` to replay a run.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use bevy_vehicle_physics::assets::{FileBlockTypes, VehicleDescription};

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");
const VEHICLE: &str = "vehicles/hatchback.vehicle.ron";
const REFERENCED: &[&str] = &[
    "topologies/fwd.topology.ron",
    "tires/passenger_205_60r15.tire.ron",
    "engines/vw_ea211_1_4_tsi_110kw.csv",
];

/// xorshift64*: small, fast, and replayable from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that make interesting edits: syntax, extreme numbers, names from the schema.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "'",
    "//",
    "/*",
    "*/",
    "-",
    ".",
    "0",
    "0.0",
    "-1.0",
    "1e309",
    "-1e309",
    "NaN",
    "inf",
    "-inf",
    "1e-320",
    "18446744073709551616",
    "true",
    "None",
    "Some(",
    "r#\"",
    "#",
    "\\",
    "é",
    "\u{0}",
    "\n",
    "Wheel",
    "Engine",
    "Gearbox",
    "Differential",
    "Clutch",
    "Motor",
    "Csv(\"engines/vw_ea211_1_4_tsi_110kw.csv\")",
    "Csv(\"missing.csv\")",
    "\"topologies/rwd.topology.ron\"",
    "\"nowhere.ron\"",
    "ratio",
    "mass",
    "axles",
    "blocks",
    "connections",
    "wheel_fl",
    "differential.left",
    "out",
    "forward_ratios",
    "torque_curve",
    "stiffness",
    "tire",
    "z",
    "track",
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 | 2 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, token.bytes());
            }
            3 => {
                // Replace a number near `at` with an extreme one.
                let start = (at..bytes.len()).find(|&i| bytes[i].is_ascii_digit());
                if let Some(start) = start {
                    let end = (start..bytes.len())
                        .find(|&i| !(bytes[i].is_ascii_digit() || bytes[i] == b'.'))
                        .unwrap_or(bytes.len());
                    let token = ["0", "-5", "1e300", "NaN", "0.0000001", "-0.0"][rng.below(6)];
                    bytes.splice(start..end, token.bytes());
                }
            }
            4 => {
                // Duplicate a line.
                let line_start = bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let line_end = (at..bytes.len())
                    .find(|&i| bytes[i] == b'\n')
                    .unwrap_or(bytes.len());
                let line = bytes[line_start..line_end].to_vec();
                bytes.splice(line_end..line_end, [b"\n".as_slice(), &line].concat());
            }
            _ => {
                let b = rng.next() as u8;
                if at < bytes.len() {
                    bytes[at] = b;
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One case: reads `files[VEHICLE]` with the others as references. Panics (caught by the
/// caller) are the failures this test looks for; the other checks are asserted here.
fn check(files: &HashMap<String, String>, types: &FileBlockTypes) -> bool {
    let result = VehicleDescription::parse(VEHICLE, &files[VEHICLE], types, |p| {
        files
            .get(p)
            .cloned()
            .ok_or_else(|| "no such file".to_owned())
    });
    match result {
        Ok(d) => {
            assert!(d.chassis.mass > 0.0 && d.chassis.mass.is_finite());
            assert!(d.substeps >= 1);
            for axle in &d.axles {
                let s = &axle.wheel.suspension;
                assert!(axle.wheel.radius > 0.0 && s.stiffness > 0.0 && s.preload.is_finite());
                assert!(axle.track > 0.0 && axle.z.is_finite());
            }
            // What is accepted can be written and read back.
            let text = d.to_ron().expect("an accepted vehicle serializes");
            VehicleDescription::parse("again.vehicle.ron", &text, types, |_| Err(String::new()))
                .unwrap_or_else(|e| panic!("written vehicle refused: {e}"));
            true
        }
        Err(e) => {
            let file = e.file.to_string_lossy().into_owned();
            let text = files
                .get(&file)
                .unwrap_or_else(|| panic!("error names unknown file {file}: {e}"));
            let lines = text.split('\n').count();
            assert!(
                e.line >= 1 && e.line <= lines && e.column >= 1,
                "position outside {file} ({lines} lines): {e}"
            );
            assert!(!e.reason.is_empty());
            false
        }
    }
}

#[test]
fn random_edits_never_panic_and_errors_point_inside_their_file() {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe);
    let mut rng = Rng(seed | 1);
    let types = FileBlockTypes::default();
    let mut originals: HashMap<String, String> = HashMap::new();
    for path in core::iter::once(&VEHICLE).chain(REFERENCED) {
        let text = std::fs::read_to_string(format!("{ASSETS}/{path}")).unwrap();
        originals.insert((*path).to_owned(), text);
    }
    assert!(check(&originals, &types), "the unmutated files must load");

    let names: Vec<String> = originals.keys().cloned().collect();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut runs, mut accepted) = (0u64, 0u64);
    // Silence the default panic message: a panic is reported below with its input.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while Instant::now() < deadline {
        for _ in 0..64 {
            let mut files = originals.clone();
            if rng.below(8) == 0 {
                // Random bytes as the vehicle file.
                let len = rng.below(256);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                files.insert(VEHICLE.into(), String::from_utf8_lossy(&bytes).into_owned());
            } else {
                let name = &names[rng.below(names.len())];
                let mutated = mutate(&mut rng, &files[name]);
                files.insert(name.clone(), mutated);
            }
            match catch_unwind(AssertUnwindSafe(|| check(&files, &types))) {
                Ok(ok) => accepted += u64::from(ok),
                Err(panic) => {
                    std::panic::set_hook(hook);
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    let dump = std::env::temp_dir().join("vehicle_fuzz_failure.txt");
                    let mut text = String::new();
                    for (name, body) in &files {
                        text.push_str(&format!("===== {name}\n{body}\n"));
                    }
                    std::fs::write(&dump, text).ok();
                    panic!(
                        "run {runs} (seed {seed}): {message}; the files are in {}",
                        dump.display()
                    );
                }
            }
            runs += 1;
        }
    }
    std::panic::set_hook(hook);
    println!("{runs} runs in {seconds} s, {accepted} accepted, no panic (seed {seed})");
    assert!(runs > 0);
}
