//! Calling the modules: `begin_step` in the controls set, the stage functions inside the
//! drivetrain's RK4 stages, and (from the contact system) the suspension and anti-roll bars.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::controls::set_if_changed;
use bevy_vehicle_drivetrain::prelude::*;
use bevy_vehicle_drivetrain::{BlockSlot, SensorWriter, StageWheels};
use smallvec::SmallVec;

use super::context::{ModuleContext, ModuleWheel, VehicleState};
use super::install::{ModuleReport, VehicleModules};
use crate::components::{Brakes, Side, Steering, VehicleTelemetry, WheelMount, WheelState};
use crate::validation::ChassisReady;
use crate::vehicle::Vehicle;

/// Per-wheel values held without a heap allocation (up to eight wheels).
type PerWheel = SmallVec<[f64; 8]>;

/// Everything a [`ModuleContext`] is made of, gathered once per step.
#[derive(Default)]
pub(crate) struct ModuleInputs {
    pub wheels: SmallVec<[ModuleWheel; 8]>,
    pub spin: PerWheel,
    pub travel: PerWheel,
    pub load: PerWheel,
    /// Each wheel's steering angle when the step began (rad): the angle the ground probe uses.
    pub probe_angle: PerWheel,
    pub position: Vec3,
    pub rotation: Quat,
    pub linear_velocity: Vec3,
    pub angular_velocity: Vec3,
    pub command: VehicleControls,
    pub steering_input: f64,
    pub dt: f64,
    pub brakes: Brakes,
    pub steering: Steering,
}

impl ModuleInputs {
    /// The context at `time` (s) into the step.
    pub fn context(&self, time: f64) -> ModuleContext<'_> {
        ModuleContext {
            state: VehicleState {
                position: self.position,
                rotation: self.rotation,
                linear_velocity: self.linear_velocity,
                angular_velocity: self.angular_velocity,
                wheel_spin: &self.spin,
                suspension_travel: &self.travel,
            },
            command: &self.command,
            steering_input: self.steering_input,
            dt: self.dt,
            time,
            load: &self.load,
            wheels: &self.wheels,
            brakes: &self.brakes,
            steering: &self.steering,
        }
    }
}

/// On a vehicle entity: the modules' inputs and outputs, kept between steps so that no step
/// allocates.
#[derive(Component, Default)]
pub(crate) struct ModuleScratch {
    pub inputs: ModuleInputs,
    /// Brake torque (N·m), road-wheel angle (rad) and drive torque (N·m) of each wheel, as the
    /// modules returned them at the last stage.
    brakes: PerWheel,
    angles: PerWheel,
    drives: PerWheel,
    /// Rack travel at the last stage (m).
    rack: f64,
}

/// A module's number, or `fallback` (counted) when it is not finite.
#[inline]
pub(crate) fn finite_or(value: f64, fallback: f64, report: &mut ModuleReport) -> f64 {
    if value.is_finite() {
        value
    } else {
        report.invalid_outputs += 1;
        fallback
    }
}

/// Once per fixed step: the steering input's rate limit, the modules' inputs, and each
/// module's `begin_step`.
pub(crate) fn begin_modules(
    time: Res<Time>,
    mut vehicles: Query<
        (
            &Transform,
            &Velocity,
            &VehicleControls,
            &Brakes,
            &Steering,
            &Blocks,
            &mut VehicleTelemetry,
            &mut VehicleModules,
            &mut ModuleScratch,
        ),
        With<ChassisReady>,
    >,
    wheels: Query<(&WheelMount, &Wheel, &BlockSlot, &WheelSensors, &WheelState)>,
) {
    let dt = time.delta_secs_f64();
    for (
        transform,
        velocity,
        controls,
        brakes,
        steering,
        blocks,
        mut telemetry,
        mut modules,
        mut scratch,
    ) in &mut vehicles
    {
        let target = controls.steering();
        let max_step = steering.max_rate.max(0.0) * dt;
        let applied = telemetry.steering + (target - telemetry.steering).clamp(-max_step, max_step);
        set_if_changed(&mut telemetry.steering, applied);

        let inputs = &mut scratch.inputs;
        // Each wheel with its spin, travel, load and steering angle, in one lookup.
        let mut rows: SmallVec<[(ModuleWheel, [f64; 4]); 8]> = SmallVec::new();
        for block in blocks.iter() {
            if let Ok((mount, wheel, slot, sensors, state)) = wheels.get(block) {
                let wheel = ModuleWheel {
                    entity: block,
                    mount: mount.clone(),
                    radius: wheel.radius,
                    node: slot.node,
                };
                let values = [sensors.speed, state.travel, state.load, state.steer_angle];
                rows.push((wheel, values));
            }
        }
        // By axle from the front, left before right; the sort is stable.
        rows.sort_by_key(|(w, _)| (w.mount.axle, w.mount.side == Side::Right));
        inputs.wheels.clear();
        inputs.spin.clear();
        inputs.travel.clear();
        inputs.load.clear();
        inputs.probe_angle.clear();
        for (wheel, [spin, travel, load, angle]) in rows {
            inputs.wheels.push(wheel);
            inputs.spin.push(spin);
            inputs.travel.push(travel);
            inputs.load.push(load);
            inputs.probe_angle.push(angle);
        }
        inputs.position = transform.translation;
        inputs.rotation = transform.rotation;
        inputs.linear_velocity = velocity.linear;
        inputs.angular_velocity = velocity.angular;
        inputs.command.clone_from(controls);
        inputs.steering_input = applied;
        inputs.dt = dt;
        inputs.brakes.clone_from(brakes);
        inputs.steering.clone_from(steering);

        let ctx = inputs.context(0.0);
        let modules = &mut *modules;
        modules.brake.begin_step(&ctx);
        modules.steering.begin_step(&ctx);
        if let Some(drivetrain) = &mut modules.drivetrain {
            drivetrain.begin_step(&ctx);
        }
    }
}

/// Steps every vehicle's drivetrain, calling the brake, steering and drivetrain modules before
/// each RK4 stage; then turns each wheel's heading to its final steering angle.
pub(crate) fn step_vehicles(
    time: Res<Time>,
    mut vehicles: Query<
        (
            &mut Drivetrain,
            &mut VehicleModules,
            &mut ModuleScratch,
            &mut VehicleTelemetry,
            Has<ChassisReady>,
        ),
        With<Vehicle>,
    >,
    mut states: Query<&mut WheelState>,
    slots: Query<&BlockSlot>,
    mut sensors: SensorWriter,
    mut buffer: Local<Vec<f64>>,
) {
    let dt = time.delta_secs_f64();
    if dt <= 0.0 {
        return;
    }
    for (mut drivetrain, mut modules, mut scratch, mut telemetry, ready) in &mut vehicles {
        if !ready {
            drivetrain.step_with(dt, &mut buffer);
            sensors.write(&mut drivetrain);
            continue;
        }
        let ModuleScratch {
            inputs,
            brakes,
            angles,
            drives,
            rack,
        } = &mut *scratch;
        let VehicleModules {
            brake,
            steering,
            drivetrain: drive,
            report,
            ..
        } = &mut *modules;
        // The drivetrain may have been recompiled since the wheels were gathered.
        for wheel in &mut inputs.wheels {
            if let Ok(slot) = slots.get(wheel.entity) {
                wheel.node = slot.node;
            }
        }
        // Each wheel block integrates the contact `probe_ground` measured. Handed over here,
        // not there: the program is touched once per step, by the step that needs it.
        for wheel in &inputs.wheels {
            if let Ok(state) = states.get(wheel.entity)
                && let Some(runtime) = drivetrain.runtime_mut::<Wheel>(wheel.entity, wheel.node)
            {
                runtime.contact = WheelContact {
                    load: state.load,
                    velocity: state.velocity,
                    acceleration: state.acceleration,
                    friction: state.friction,
                };
            }
        }
        let count = inputs.wheels.len();
        for buffer in [&mut *brakes, &mut *angles, &mut *drives] {
            buffer.resize(count, 0.0);
        }
        let corrections_before = report.brake_corrections;
        // Stage-independent modules run at the first stage only; the wheels keep what they
        // set (see the module docs).
        let every_stage = brake.every_stage()
            || steering.every_stage()
            || drive.as_ref().is_some_and(|d| d.every_stage());
        let mut first_stage = true;
        drivetrain.step_hooked(dt, &mut buffer, &mut |stage: &mut StageWheels| {
            if !(every_stage || first_stage) {
                return;
            }
            first_stage = false;
            for (spin, wheel) in inputs.spin.iter_mut().zip(&inputs.wheels) {
                if let Some(s) = stage.spin(wheel.node) {
                    *spin = s;
                }
            }
            let ctx = inputs.context(stage.time());
            // Every module of the stage first, then one pass over the wheels.
            brakes.fill(0.0);
            brake.wheel_torques(&ctx, brakes);
            angles.fill(0.0);
            *rack = finite_or(steering.apply(&ctx, angles), *rack, report);
            drives.fill(0.0);
            if let Some(drive) = drive {
                drive.wheel_torques(&ctx, drives);
            }
            for (i, wheel) in inputs.wheels.iter().enumerate() {
                let Some(rt) = stage.wheel_mut(wheel.node) else {
                    continue;
                };
                let torque = finite_or(brakes[i], 0.0, report);
                if torque * inputs.spin[i] > 0.0 {
                    report.brake_corrections += 1;
                }
                rt.brake = torque.abs();
                let probe = inputs.probe_angle[i];
                rt.set_steer(finite_or(angles[i], probe, report) - probe);
                if drive.is_some() {
                    rt.drive = finite_or(drives[i], 0.0, report);
                }
            }
        });
        if corrections_before == 0 && report.brake_corrections > 0 {
            warn!(
                "brake module '{}' returned torques that would drive a wheel; they are applied \
                 against the spin instead (counted in ModuleReport::brake_corrections)",
                brake.name()
            );
        }
        // While the vehicle's program is still in cache.
        sensors.write(&mut drivetrain);
        set_if_changed(&mut telemetry.rack_travel, *rack);

        // Each wheel ends the step at its last stage's angle: its heading, and the velocity
        // measured in the tire frame, turn with it.
        for (i, wheel) in inputs.wheels.iter().enumerate() {
            let Some((turn, brake)) = drivetrain
                .runtime::<Wheel>(wheel.entity, wheel.node)
                .map(|rt| (rt.steer(), rt.brake))
            else {
                continue;
            };
            let Ok(mut state) = states.get_mut(wheel.entity) else {
                continue;
            };
            set_if_changed(&mut state.brake_torque, brake);
            let angle = inputs.probe_angle[i] + turn;
            if turn == 0.0 {
                set_if_changed(&mut state.steer_angle, angle);
                continue;
            }
            state.steer_angle = angle;
            state.heading = Quat::from_axis_angle(state.normal, turn as f32) * state.heading;
            let (s, c) = turn.sin_cos();
            let rotate = |[x, y]: [f64; 2]| [x * c + y * s, y * c - x * s];
            state.velocity = rotate(state.velocity);
            state.acceleration = rotate(state.acceleration);
        }
    }
}
