//! Telemetry recording: F5 (or T) starts writing the player vehicle's channels to a CSV file
//! every fixed step, and stops it; the path is printed and shown on the HUD.
//!
//! The columns are the ones `examples/headless_drive.rs` writes, so `examples/plot_telemetry.rs`
//! plots a recording as it plots a headless run: `time,x,z,speed,rpm,gear,throttle,brake,
//! clutch,steering,handbrake`, then for each wheel (front axle first, left before right)
//! `<wheel>_load,<wheel>_slip_ratio,<wheel>_slip_angle,<wheel>_fx,<wheel>_fy,<wheel>_travel,
//! <wheel>_grounded,<wheel>_toe,<wheel>_camber,<wheel>_aligning_torque` (see the chassis
//! crate's `telemetry_csv` for units). Time starts at 0 when the recording starts.
//!
//! Files go to the folder in `DEMO_TELEMETRY_DIR`, or the working directory, named
//! `demo_telemetry_<unix seconds>.csv`. Switching vehicles ends the recording (the wheel
//! columns would change).

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy_vehicle_physics::chassis::telemetry_csv::{csv_header, write_csv_row};
use bevy_vehicle_physics::prelude::*;

use crate::vehicles::PlayerVehicle;

/// Adds the recorder: the key toggle in `Update`, a row per fixed step after the telemetry.
pub struct RecorderPlugin;

impl Plugin for RecorderPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Recorder>()
            .add_systems(Update, toggle_recording)
            .add_systems(FixedUpdate, record.after(VehicleSystems::Telemetry));
    }
}

/// An open recording.
struct Recording {
    file: BufWriter<File>,
    path: PathBuf,
    vehicle: Entity,
    /// The wheels in column order.
    wheels: Vec<Entity>,
    /// Fixed-clock time at the start (s).
    start: f64,
    /// Time of the last row, from the start (s).
    seconds: f64,
    rows: u64,
    /// The row being written, reused for every row.
    line: String,
}

/// The telemetry recorder's state.
#[derive(Resource, Default)]
pub struct Recorder {
    current: Option<Recording>,
    last: Option<(PathBuf, u64)>,
    /// Set by `toggle` to be handled by the next `toggle_recording` run.
    requested: bool,
}

impl Recorder {
    /// Whether a recording is running.
    pub fn is_recording(&self) -> bool {
        self.current.is_some()
    }

    /// The file being written, if recording.
    pub fn path(&self) -> Option<&Path> {
        self.current.as_ref().map(|r| r.path.as_path())
    }

    /// Seconds recorded so far.
    pub fn seconds(&self) -> f64 {
        self.current.as_ref().map_or(0.0, |r| r.seconds)
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.current.as_ref().map_or(0, |r| r.rows)
    }

    /// The last finished recording: its file and number of rows.
    pub fn last(&self) -> Option<(&Path, u64)> {
        self.last.as_ref().map(|(p, n)| (p.as_path(), *n))
    }

    /// Asks for a start or stop as if the key was pressed (the smoke run uses it).
    pub fn toggle(&mut self) {
        self.requested = true;
    }

    fn stop(&mut self) {
        if let Some(mut recording) = self.current.take() {
            match recording.file.flush() {
                Ok(()) => println!(
                    "telemetry: wrote {} rows ({:.1} s) to {}",
                    recording.rows,
                    recording.seconds,
                    recording.path.display()
                ),
                Err(e) => error!("telemetry: {}: {e}", recording.path.display()),
            }
            self.last = Some((recording.path, recording.rows));
        }
    }
}

fn toggle_recording(
    keys: Res<ButtonInput<KeyCode>>,
    mut recorder: ResMut<Recorder>,
    time: Res<Time<Fixed>>,
    vehicles: Query<(Entity, &Blocks), With<PlayerVehicle>>,
    wheels: Query<(&Name, &WheelMount)>,
) {
    let pressed = keys.any_just_pressed([KeyCode::F5, KeyCode::KeyT]);
    if !(pressed || recorder.requested) {
        return;
    }
    recorder.requested = false;
    if recorder.is_recording() {
        recorder.stop();
        return;
    }
    let Some((vehicle, blocks)) = vehicles.iter().next() else {
        warn!("telemetry: no vehicle to record");
        return;
    };
    let mut columns: Vec<(u8, bool, Entity, &str)> = blocks
        .iter()
        .filter_map(|b| {
            wheels
                .get(b)
                .ok()
                .map(|(n, m)| (m.axle, m.side == Side::Right, b, n.as_str()))
        })
        .collect();
    columns.sort_by_key(|c| (c.0, c.1));

    let folder = std::env::var_os("DEMO_TELEMETRY_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = folder.join(format!("demo_telemetry_{stamp}.csv"));
    let header = csv_header(columns.iter().map(|c| c.3));
    let file = File::create(&path).and_then(|f| {
        let mut f = BufWriter::new(f);
        f.write_all(header.as_bytes())?;
        Ok(f)
    });
    match file {
        Ok(file) => {
            println!("telemetry: recording to {}", path.display());
            recorder.current = Some(Recording {
                file,
                path,
                vehicle,
                wheels: columns.iter().map(|c| c.2).collect(),
                start: time.elapsed_secs_f64(),
                seconds: 0.0,
                rows: 0,
                line: String::with_capacity(512),
            });
        }
        Err(e) => error!("telemetry: cannot write {}: {e}", path.display()),
    }
}

fn record(
    time: Res<Time>,
    mut recorder: ResMut<Recorder>,
    vehicles: Query<(&Transform, &VehicleTelemetry, &VehicleControls)>,
    wheels: Query<(&WheelState, Option<&WheelSensors>)>,
) {
    if !recorder.is_recording() {
        return; // without touching the resource, so the HUD sees no change
    }
    let Some(recording) = recorder.current.as_mut() else {
        return;
    };
    let Ok((transform, tel, controls)) = vehicles.get(recording.vehicle) else {
        // The vehicle was switched or despawned: close the file.
        recorder.stop();
        return;
    };
    let t = time.elapsed_secs_f64() - recording.start;
    recording.line.clear();
    // Writing to a String cannot fail.
    let _ = write_csv_row(
        &mut recording.line,
        t,
        transform.translation,
        tel,
        controls,
        recording.wheels.iter().map(|w| match wheels.get(*w) {
            Ok((state, sensors)) => (Some(state), sensors),
            Err(_) => (None, None),
        }),
    );
    let result = recording.file.write_all(recording.line.as_bytes());
    recording.seconds = t;
    recording.rows += 1;
    if let Err(e) = result {
        error!("telemetry: {}: {e}", recording.path.display());
        recorder.stop();
    }
}
