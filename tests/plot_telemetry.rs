//! The plot command (`examples/plot_telemetry.rs`) turns a telemetry CSV in the columns
//! `examples/headless_drive.rs` and the demo's recorder write into a PNG of the stated size.

#[allow(dead_code)]
#[path = "../examples/plot_telemetry.rs"]
mod plot_example;

use std::fmt::Write as _;

use bevy_vehicle_physics::chassis::telemetry_csv::csv_header;

/// A 10 s drive in the headless example's columns: speed, rpm, gear, pedals, four wheels.
fn telemetry_csv() -> String {
    let wheels = ["wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"];
    let mut csv = csv_header(wheels);
    for i in 0..600 {
        let t = f64::from(i) / 60.0;
        let speed = 2.5 * t;
        write!(
            csv,
            "{t:.4},0.000,{:.3},{speed:.3},{:.0},{},1.00,0.00,0.00,0.000,0.00,0.00",
            -speed * t / 2.0,
            1000.0 + 400.0 * (t % 3.0),
            1 + (t / 3.0) as i32
        )
        .unwrap();
        for _ in wheels {
            write!(
                csv,
                ",3300.0,{:.4},0.0000,2000.0,0.0,0.0000,1,0.00000,-0.01000,0.00",
                0.05 / (1.0 + t)
            )
            .unwrap();
        }
        csv.push('\n');
    }
    csv
}

/// Width and height (px) from a PNG's header chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn plot_command_writes_a_png_of_the_stated_size() {
    let dir = std::env::temp_dir().join(format!("bvp_plot_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("drive.csv"), dir.join("drive.png"));
    std::fs::write(&input, telemetry_csv()).unwrap();
    let (panels, (width, height)) =
        plot_example::plot(input.to_str().unwrap(), output.to_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}"));
    // Speed, engine speed and gear, pedals, wheel slip.
    assert_eq!(panels, 4);
    assert_eq!(
        (width, height),
        (plot_example::WIDTH, 4 * plot_example::PANEL_HEIGHT)
    );
    let png = std::fs::read(&output).unwrap();
    assert_eq!(png_size(&png), (width, height), "the file's own size");
    // Four panels of axes, labels and lines compress to tens of kilobytes; a blank white
    // image of this size is a few.
    assert!(png.len() > 20_000, "{} bytes", png.len());
    // A CSV without any plottable column is refused, not drawn empty.
    std::fs::write(&input, "time,x\n0,0\n1,1\n").unwrap();
    assert!(plot_example::plot(input.to_str().unwrap(), output.to_str().unwrap()).is_err());
    std::fs::remove_dir_all(&dir).ok();
}
