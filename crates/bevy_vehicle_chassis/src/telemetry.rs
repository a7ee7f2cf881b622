//! What a vehicle reports after each step, and where its wheels are drawn.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::parallel::{self, ParallelStep};
use bevy_vehicle_drivetrain::prefetch;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::{Suspension, VehicleTelemetry, WheelMount, WheelState};
use crate::modules::systems::ModuleScratch;
use crate::vehicle::Vehicle;

/// Fills [`VehicleTelemetry`] from the chassis's motion and the drivetrain's sensors, on every
/// compute thread ([`parallel::for_each_of`]): each vehicle writes its own telemetry alone.
pub(crate) fn update_telemetry(
    parallel: Res<ParallelStep>,
    mut vehicles: Query<
        (
            &Transform,
            &Velocity,
            &Blocks,
            Option<&ModuleScratch>,
            &mut VehicleTelemetry,
        ),
        With<Vehicle>,
    >,
    engines: Query<&EngineSensors>,
    motors: Query<&MotorSensors>,
    gearboxes: Query<&GearboxSensors>,
    automatics: Query<&AutomaticSensors>,
    cvts: Query<&CvtSensors>,
    wheels: Query<(
        &WheelState,
        &WheelMount,
        &WheelSensors,
        &Wheel,
        Option<&Suspension>,
    )>,
) {
    // Each vehicle's block and wheel lists start loading two vehicles ahead, its wheels one
    // ahead (see `step_vehicles`).
    let tasks = parallel.task_count(vehicles.iter().len());
    parallel::for_each_of(
        vehicles.iter_mut(),
        tasks,
        |(_, _, blocks, scratch, _)| {
            prefetch::slice(blocks.collection());
            if let Some(scratch) = scratch {
                prefetch::value(&scratch.inputs.wheels);
            }
        },
        |(.., scratch, _)| {
            for wheel in scratch.iter().flat_map(|s| &s.inputs.wheels) {
                if let Ok((state, mount, sensors, wheel, suspension)) = wheels.get(wheel.entity) {
                    prefetch::value(state);
                    prefetch::value(mount);
                    prefetch::value(sensors);
                    prefetch::value(wheel);
                    if let Some(suspension) = suspension {
                        prefetch::value(suspension);
                    }
                }
            }
        },
        |(transform, velocity, blocks, _, telemetry)| {
            let forward = transform.rotation * Vec3::NEG_Z;
            let right = transform.rotation * Vec3::X;
            let up = transform.rotation * Vec3::Y;
            telemetry.forward_speed = f64::from(velocity.linear.dot(forward));
            telemetry.lateral_speed = f64::from(velocity.linear.dot(right));
            telemetry.yaw_rate = f64::from(velocity.angular.dot(up));
            telemetry.grounded_wheels = 0;
            telemetry.aligning_torque = 0.0;
            telemetry.steering_torque = 0.0;
            // The engine's speed; a motor's where there is no engine (a hybrid's assist motor
            // does not count over its engine).
            let mut engine_found = false;
            for block in blocks.iter() {
                if let Ok((state, mount, sensors, wheel, suspension)) = wheels.get(block) {
                    telemetry.grounded_wheels += u32::from(state.grounded);
                    if mount.steered {
                        telemetry.aligning_torque += sensors.aligning_torque;
                        let trail = suspension.map_or(0.0, |s| s.mechanical_trail(wheel.radius));
                        telemetry.steering_torque +=
                            sensors.aligning_torque - trail * sensors.force[1];
                    }
                } else if let Ok(e) = engines.get(block) {
                    telemetry.engine_rpm = e.rpm;
                    engine_found = true;
                } else if let Ok(m) = motors.get(block) {
                    if !engine_found {
                        telemetry.engine_rpm = m.rpm;
                    }
                } else if let Ok(g) = gearboxes.get(block) {
                    telemetry.gear = g.gear;
                } else if let Ok(a) = automatics.get(block) {
                    telemetry.gear = a.gear;
                } else if let Ok(c) = cvts.get(block) {
                    telemetry.gear = c.selection;
                }
            }
        },
    );
}

/// Places each wheel entity (a child of its chassis) where the wheel is: raised by the
/// suspension travel, turned by the steering, leaned by the suspension's camber and rolled by
/// its spin. A wheel whose mount is not finite (refused by the chassis's checks, its vehicle
/// `Invalid`) stays where it was.
pub(crate) fn place_wheels(
    mut wheels: Query<
        (
            &WheelMount,
            &WheelState,
            &WheelSensors,
            Option<&Suspension>,
            &mut Transform,
        ),
        With<ChildOf>,
    >,
) {
    for (mount, state, sensors, suspension, mut transform) in &mut wheels {
        let translation = mount.position + Vec3::Y * state.travel as f32;
        // A positive inclination leans the top to the right: about the heading, −Z. A
        // camber gain past any suspension's leans it at most a quarter turn.
        let lean = suspension.map_or(0.0, |s| {
            (s.body_camber(mount.side, state.travel) + s.steer_camber(state.steer_angle))
                .clamp(-core::f64::consts::FRAC_PI_2, core::f64::consts::FRAC_PI_2)
        });
        let rotation = Quat::from_rotation_y(state.steer_angle as f32)
            * Quat::from_rotation_z(-lean as f32)
            * Quat::from_rotation_x(-(sensors.angle.rem_euclid(core::f64::consts::TAU)) as f32);
        let placed = Transform {
            translation,
            rotation,
            scale: transform.scale,
        };
        if !(translation.is_finite() && rotation.is_finite()) {
            continue;
        }
        if *transform != placed {
            *transform = placed;
        }
    }
}
