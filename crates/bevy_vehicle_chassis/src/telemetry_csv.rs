//! Telemetry as CSV: the one column layout that `examples/headless_drive.rs` and the demo's
//! recorder write and `examples/plot_telemetry.rs` reads.
//!
//! Columns: `time` (s), `x`, `z` (m, world), `speed` (m/s, forward), `rpm`, `gear`,
//! `throttle`, `brake`, `clutch` (0..1), `steering` (−1..1, the applied one), `handbrake`
//! (0..1), `steering_torque` (N·m, the road's moment about the steered wheels' kingpins,
//! positive turning them left: [`VehicleTelemetry::steering_torque`]); then for each wheel `<name>_load` (N), `_slip_ratio`, `_slip_angle` (rad), `_fx`,
//! `_fy` (N, tire frame: forward, left), `_travel` (m, compression positive), `_grounded`
//! (0 or 1), `_toe` (rad, the suspension's steer, positive to the left), `_camber` (rad,
//! the inclination to the ground, positive when the wheel's top leans to its right) and
//! `_aligning_torque` (N·m, the tire's aligning moment, positive turning the wheel left).

use core::fmt::Write;

use bevy::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::{VehicleTelemetry, WheelState};

/// The vehicle's columns, in order.
pub const VEHICLE_COLUMNS: [&str; 12] = [
    "time",
    "x",
    "z",
    "speed",
    "rpm",
    "gear",
    "throttle",
    "brake",
    "clutch",
    "steering",
    "handbrake",
    "steering_torque",
];

/// Each wheel's columns, in order, after `<wheel name>_`.
pub const WHEEL_COLUMNS: [&str; 10] = [
    "load",
    "slip_ratio",
    "slip_angle",
    "fx",
    "fy",
    "travel",
    "grounded",
    "toe",
    "camber",
    "aligning_torque",
];

/// The header line, ending in `\n`, for wheels named `wheels` in the order their columns
/// will be written.
pub fn csv_header<'a>(wheels: impl IntoIterator<Item = &'a str>) -> String {
    let mut line = VEHICLE_COLUMNS.join(",");
    for name in wheels {
        for field in WHEEL_COLUMNS {
            // Writing to a String cannot fail.
            let _ = write!(line, ",{name}_{field}");
        }
    }
    line.push('\n');
    line
}

/// Appends one row, ending in `\n`, to `out`: the time `t` (s), the vehicle's world position,
/// telemetry and controls, and each wheel's state and sensors in header order (`None` writes
/// zeros, for a wheel that is gone).
pub fn write_csv_row<'a>(
    out: &mut impl Write,
    t: f64,
    position: Vec3,
    telemetry: &VehicleTelemetry,
    controls: &VehicleControls,
    wheels: impl IntoIterator<Item = (Option<&'a WheelState>, Option<&'a WheelSensors>)>,
) -> core::fmt::Result {
    write!(
        out,
        "{t:.4},{:.3},{:.3},{:.3},{:.0},{},{:.2},{:.2},{:.2},{:.3},{:.2},{:.2}",
        position.x,
        position.z,
        telemetry.forward_speed,
        telemetry.engine_rpm,
        telemetry.gear,
        controls.throttle,
        controls.brake,
        controls.clutch,
        telemetry.steering,
        controls.handbrake,
        telemetry.steering_torque,
    )?;
    for (state, sensors) in wheels {
        let force = sensors.map_or([0.0; 2], |s| s.force);
        let aligning = sensors.map_or(0.0, |s| s.aligning_torque);
        match state {
            Some(s) => write!(
                out,
                ",{:.1},{:.4},{:.4},{:.1},{:.1},{:.4},{},{:.5},{:.5},{:.2}",
                s.load,
                s.slip_ratio,
                s.slip_angle,
                force[0],
                force[1],
                s.travel,
                u8::from(s.grounded),
                s.toe,
                s.camber,
                aligning
            )?,
            None => out.write_str(",0.0,0.0000,0.0000,0.0,0.0,0.0000,0,0.00000,0.00000,0.00")?,
        }
    }
    out.write_char('\n')
}
