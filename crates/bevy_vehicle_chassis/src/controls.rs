//! From the driver's controls to brake torques and road-wheel angles.

use bevy::prelude::*;
use bevy_vehicle_drivetrain::controls::set_if_changed;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::{Brakes, Side, Steering, VehicleTelemetry, WheelMount, WheelState};
use crate::validation::ChassisReady;

/// Sets every wheel's brake torque from the pedal, the handbrake and the parking lock.
pub(crate) fn apply_brakes(
    vehicles: Query<
        (&VehicleControls, &Brakes, &Blocks),
        (Changed<VehicleControls>, With<ChassisReady>),
    >,
    mut wheels: Query<(&WheelMount, &mut Wheel)>,
) {
    for (controls, brakes, blocks) in &vehicles {
        let bias = brakes.front_bias.clamp(0.0, 1.0);
        // The front axle's share is the bias; the axles behind it split the rest equally. The
        // axle with the largest share gets the full torque, the others their proportion.
        let rear_axles = blocks
            .iter()
            .filter_map(|b| wheels.get(b).ok())
            .map(|(mount, _)| mount.axle)
            .max()
            .unwrap_or(0)
            .max(1);
        let (front, rear) = (bias, (1.0 - bias) / f64::from(rear_axles));
        let largest = front.max(rear);
        let (front, rear) = (front / largest, rear / largest);
        for block in blocks.iter() {
            let Ok((mount, mut wheel)) = wheels.get_mut(block) else {
                continue;
            };
            let share = if mount.axle == 0 { front } else { rear };
            let mut torque = controls.brake() * brakes.max_torque.max(0.0) * share;
            if mount.axle == brakes.handbrake_axle {
                torque += controls.handbrake() * brakes.handbrake_torque.max(0.0);
                if controls.parking {
                    torque += brakes.parking_torque.max(0.0);
                }
            }
            if wheel.brake_torque != torque {
                wheel.brake_torque = torque;
            }
        }
    }
}

/// Moves the applied steering toward the driver's at the steering's rate, and turns the steered
/// wheels with Ackermann geometry.
pub(crate) fn apply_steering(
    time: Res<Time>,
    mut vehicles: Query<
        (&VehicleControls, &Steering, &Blocks, &mut VehicleTelemetry),
        With<ChassisReady>,
    >,
    mut wheels: Query<(&WheelMount, &mut WheelState)>,
) {
    let dt = time.delta_secs_f64();
    for (controls, steering, blocks, mut telemetry) in &mut vehicles {
        let target = controls.steering();
        let max_step = steering.max_rate.max(0.0) * dt;
        let applied = telemetry.steering + (target - telemetry.steering).clamp(-max_step, max_step);
        set_if_changed(&mut telemetry.steering, applied);

        // Geometry from the mounts: the steered axle's position and track, and the line of the
        // unsteered axles the turn centre lies on.
        let (mut steered_z, mut steered_n, mut fixed_z, mut fixed_n) = (0.0, 0.0, 0.0, 0.0);
        let (mut track_min, mut track_max) = (f64::MAX, f64::MIN);
        for block in blocks.iter() {
            if let Ok((mount, _)) = wheels.get(block) {
                let z = f64::from(mount.position.z);
                if mount.steered {
                    steered_z += z;
                    steered_n += 1.0;
                    track_min = track_min.min(f64::from(mount.position.x));
                    track_max = track_max.max(f64::from(mount.position.x));
                } else {
                    fixed_z += z;
                    fixed_n += 1.0;
                }
            }
        }
        if steered_n == 0.0 {
            continue;
        }
        let reference_z = if fixed_n > 0.0 {
            fixed_z / fixed_n
        } else {
            steered_z / steered_n
        };
        let track = track_max - track_min;
        let inside = applied.abs() * steering.max_angle;
        // Turn centre on the reference line, `radius` from the centreline, on the turn's side.
        let wheelbase = (steered_z / steered_n - reference_z).abs();
        let radius = if inside > 1e-9 && wheelbase > 1e-9 {
            wheelbase / inside.tan() + 0.5 * track
        } else {
            f64::INFINITY
        };
        for block in blocks.iter() {
            let Ok((mount, mut state)) = wheels.get_mut(block) else {
                continue;
            };
            if !mount.steered {
                set_if_changed(&mut state.steer_angle, 0.0);
                continue;
            }
            // Lateral distance from this wheel to the turn centre (inside wheels are closer).
            let toward_turn = match (mount.side, applied > 0.0) {
                (Side::Right, true) | (Side::Left, false) => -1.0,
                _ => 1.0,
            };
            let offset =
                (f64::from(mount.position.x) - 0.5 * (track_min + track_max)).abs() * toward_turn;
            let lever = (f64::from(mount.position.z) - reference_z).abs();
            let ackermann = if radius.is_finite() {
                (lever / (radius + offset)).atan()
            } else {
                0.0
            };
            let angle = steering.ackermann.clamp(0.0, 1.0) * ackermann
                + (1.0 - steering.ackermann.clamp(0.0, 1.0)) * inside;
            // Positive angles turn left; positive steering turns right.
            set_if_changed(&mut state.steer_angle, -angle * applied.signum());
        }
    }
}
