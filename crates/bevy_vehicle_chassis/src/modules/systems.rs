//! Calling the modules: `begin_step` in the controls set, the stage functions inside the
//! drivetrain's RK4 stages, and (from the contact system) the suspension and anti-roll bars.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::controls::set_if_changed;
use bevy_vehicle_drivetrain::parallel::{self, ParallelStep};
use bevy_vehicle_drivetrain::prefetch;
use bevy_vehicle_drivetrain::prelude::*;
use bevy_vehicle_drivetrain::{BlockSlot, SensorWriter, StageWheels};
use core::marker::PhantomData;
use smallvec::SmallVec;

use super::builtin::{AxleSplit, stability_demand};
use super::context::{ModuleContext, ModuleWheel, StabilityDemand, VehicleState};
use super::install::{ModuleReport, VehicleModules};
use crate::components::{
    Brakes, Side, SpeedLimiter, Steering, Suspension, TractionControl, VehicleTelemetry,
    WheelMount, WheelState, compliance_toe,
};
use crate::validation::ChassisReady;
use crate::vehicle::Vehicle;

/// Per-wheel values held without a heap allocation (up to eight wheels).
type PerWheel = SmallVec<[f64; 8]>;

/// What a wheel is to the modules: its mount, its wheel block (for the radius) and its place
/// in the pass order; only wheels with sensors and a state count.
type WheelRows<'w, 's> = Query<
    'w,
    's,
    (&'static WheelMount, &'static Wheel, &'static BlockSlot),
    (With<WheelSensors>, With<WheelState>),
>;
/// What a wheel brings to each step: its spin (sensors) and its travel, load and steering angle
/// (state).
type WheelValues<'w, 's> = Query<
    'w,
    's,
    (
        &'static WheelSensors,
        &'static WheelState,
        Option<&'static Suspension>,
    ),
    (With<WheelMount>, With<Wheel>, With<BlockSlot>),
>;

/// Everything a [`ModuleContext`] is made of, gathered once per step.
#[derive(Default)]
pub(crate) struct ModuleInputs {
    pub wheels: SmallVec<[ModuleWheel; 8]>,
    pub spin: PerWheel,
    pub travel: PerWheel,
    pub load: PerWheel,
    /// Each wheel's tire peak longitudinal force (N): the last step's until the first stage of
    /// this one.
    pub peak_force: PerWheel,
    /// Each wheel's tire peak-force slip ratio (dimensionless), at the same times as
    /// `peak_force`.
    pub peak_slip: PerWheel,
    /// Each wheel's steering angle when the step began (rad): the angle the ground probe uses.
    pub probe_angle: PerWheel,
    /// Each wheel's toe this step (rad, positive to the left): its bump steer when the step
    /// is gathered, its compliance steer added before the drivetrain's step
    /// ([`Suspension::bump_toe`], [`Suspension::compliance_toe`]).
    pub toe: PerWheel,
    /// Each wheel's [`Suspension::compliance_steer`] (rad/N).
    pub compliance_steer: PerWheel,
    /// Each wheel's compliance steer (rad, positive to the left): the last step's until the
    /// drivetrain's step, then this step's.
    pub compliance_toe: PerWheel,
    /// Each wheel's lateral tire force on the body over the last step (N, positive to the
    /// left).
    pub lateral_force: PerWheel,
    /// The ground's velocity under each grounded wheel (world, m/s; `None` in the air), from
    /// [`WheelState::ground_velocity`].
    pub ground_velocity: SmallVec<[Option<Vec3>; 8]>,
    /// The mean of `ground_velocity` over the grounded wheels (world, m/s; zero with none):
    /// what `linear_velocity` is measured against.
    pub ground: Vec3,
    /// How the body moves each contact sideways per lateral impulse at each (m/(N·s),
    /// row-major in wheel order; see `BodyInertia::lateral_mobility`), measured by the ground
    /// probe for this step.
    pub lateral_mobility: SmallVec<[f64; 64]>,
    pub position: Vec3,
    pub rotation: Quat,
    pub linear_velocity: Vec3,
    pub angular_velocity: Vec3,
    pub command: VehicleControls,
    pub steering_input: f64,
    pub dt: f64,
    /// Length of the drivetrain's substep (s): the last step's until its first stage.
    pub substep: f64,
    pub brakes: Brakes,
    pub steering: Steering,
    /// The stability control's demand this step (decided in `begin_modules`).
    pub stability: Option<StabilityDemand>,
    /// The torque the airborne wheels' spin and the rotors with a known axis (an engine's
    /// crank, a motor's rotor) hand the body over this step (world, N·m): minus the change of
    /// their angular momentum about their axes, over the step (see `step_vehicles` and
    /// `rotor_reaction`).
    pub spin_reaction: Vec3,
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
                ground_velocity: self.ground,
                wheel_ground_velocity: &self.ground_velocity,
                wheel_spin: &self.spin,
                suspension_travel: &self.travel,
            },
            command: &self.command,
            steering_input: self.steering_input,
            dt: self.dt,
            time,
            substep: self.substep,
            load: &self.load,
            peak_force: &self.peak_force,
            peak_slip: &self.peak_slip,
            wheels: &self.wheels,
            brakes: &self.brakes,
            steering: &self.steering,
            stability: self.stability,
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
    /// Brake torque magnitude (N·m) each wheel gets from the brake module, as of the last
    /// stage the module ran.
    module_brakes: PerWheel,
    /// Brake torque (N·m) the traction control puts on each wheel at this stage.
    traction_brakes: PerWheel,
    /// Rack travel at the last stage (m).
    rack: f64,
    /// Whether the parking lock has engaged ([`Brakes::parking_max_speed`]): set once the
    /// driver's lock finds its axle's wheels slow enough, cleared when the driver releases it.
    parking_engaged: bool,
    /// The parking lock's axle's wheels' mean rim speed and mean speed over the ground at the
    /// start of the last step (m/s; 0 before the first, not a number while the lock was not
    /// selected), [`parking_axle_speeds`]: a sign change since then means the wheels stopped
    /// within the step.
    parking_speeds: [f64; 2],
    /// Whether `inputs.wheels` lists the vehicle's wheels as they are: cleared by
    /// [`note_wheel_changes`].
    wheels_known: bool,
    /// Whether a warning has said that a module returned a number that is not finite.
    invalid_warned: bool,
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

/// Marks the wheel lists of the vehicles whose wheels changed for
/// [`begin_modules`] to gather again: a wheel block added to a vehicle or moved to another,
/// a mount or wheel edited, a drivetrain recompiled (a new pass order).
pub(crate) fn note_wheel_changes(
    changed_wheels: Query<
        &BlockOf,
        Or<(
            Changed<WheelMount>,
            Changed<Wheel>,
            Changed<BlockSlot>,
            Added<WheelSensors>,
            Added<WheelState>,
        )>,
    >,
    changed_vehicles: Query<Entity, (Changed<Blocks>, With<ModuleScratch>)>,
    mut scratch: Query<&mut ModuleScratch>,
) {
    for vehicle in changed_wheels
        .iter()
        .map(|of| of.0)
        .chain(changed_vehicles.iter())
    {
        if let Ok(mut scratch) = scratch.get_mut(vehicle) {
            scratch.wheels_known = false;
        }
    }
}

/// Once per fixed step: the steering input's rate limit, the modules' inputs, and each
/// module's `begin_step`; on every compute thread ([`parallel::for_each_of`]), as each
/// vehicle writes its own components alone.
pub(crate) fn begin_modules(
    time: Res<Time>,
    parallel: Res<ParallelStep>,
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
    wheels: WheelRows<'_, '_>,
    values: WheelValues<'_, '_>,
) {
    let dt = time.delta_secs_f64();
    // Each vehicle's modules and wheel list start loading two vehicles ahead, its modules'
    // boxes and its wheels one ahead (see `step_vehicles`).
    let tasks = parallel.task_count(vehicles.iter().len());
    parallel::for_each_of(
        vehicles.iter_mut(),
        tasks,
        |(.., modules, scratch)| {
            prefetch::value(&**modules);
            prefetch::value(&scratch.inputs.wheels);
        },
        |(.., modules, scratch)| {
            modules.prefetch();
            for wheel in &scratch.inputs.wheels {
                if let Ok((sensors, state, suspension)) = values.get(wheel.entity) {
                    prefetch::value(sensors);
                    prefetch::value(state);
                    if let Some(suspension) = suspension {
                        prefetch::value(suspension);
                    }
                }
            }
        },
        |(transform, velocity, controls, brakes, steering, blocks, telemetry, modules, scratch)| {
            let (applied, mean) = rate_limited(
                telemetry.steering,
                controls.steering(),
                steering.max_rate.max(0.0),
                dt,
            );
            set_if_changed(&mut telemetry.steering, applied);

            let scratch: &mut ModuleScratch = scratch;
            // The wheels themselves (mount, radius, pass-order node) only when they changed
            // (`note_wheel_changes`); their spin, travel, load and steering angle every step. A
            // wheel that lost one of its components is gathered again.
            let current = scratch.wheels_known && gather_values(&mut scratch.inputs, &values);
            if !current {
                gather_wheels(&mut scratch.inputs, blocks, &wheels);
                gather_values(&mut scratch.inputs, &values);
                scratch.wheels_known = true;
            }
            let inputs = &mut scratch.inputs;
            inputs.position = transform.translation;
            inputs.rotation = transform.rotation;
            // Over the ground under the wheels, as a vehicle's own sensors (its wheel speeds)
            // measure it: on a moving platform or a ship's deck the controls measure slip
            // against that, not against the world (until 2026-12-02 an ABS on a platform
            // moving at 15 m/s read every wheel as locked or spinning, and the car barely
            // braked).
            let (sum, count) = inputs
                .ground_velocity
                .iter()
                .flatten()
                .fold((Vec3::ZERO, 0u32), |(sum, n), v| (sum + *v, n + 1));
            let ground = if count > 0 {
                sum / count as f32
            } else {
                Vec3::ZERO
            };
            inputs.linear_velocity = velocity.linear - ground;
            inputs.ground = ground;
            inputs.angular_velocity = velocity.angular;
            inputs.command.clone_from(controls);
            // The modules see the parking lock selected only once it has engaged.
            let speeds = parking_axle_speeds(inputs, brakes.handbrake_axle);
            let slow =
                |now: f64, before: f64| now.abs() <= brakes.parking_max_speed || now * before < 0.0;
            scratch.parking_engaged = controls.parking
                && (scratch.parking_engaged
                    || (slow(speeds[0], scratch.parking_speeds[0])
                        && slow(speeds[1], scratch.parking_speeds[1])));
            // A sign change counts only while the lock was selected over the whole step (a
            // car set moving as the lock is selected did not stop in between).
            scratch.parking_speeds = if controls.parking {
                speeds
            } else {
                [f64::NAN; 2]
            };
            inputs.command.parking = scratch.parking_engaged;
            // The wheels hold one angle for the step: the input's mean over it, which a ramp
            // reaches half a step before its end.
            inputs.steering_input = mean;
            inputs.dt = dt;
            inputs.brakes.clone_from(brakes);
            inputs.steering.clone_from(steering);

            // The stability control decides once per step, before any module: its brakes are the
            // brake module's to apply, its drive cut the stage hook's.
            let mut ctx = inputs.context(0.0);
            ctx.stability = None;
            let stability = brakes
                .stability_control
                .as_ref()
                .and_then(|esc| stability_demand(esc, &ctx));
            ctx.stability = stability;
            set_if_changed(
                &mut telemetry.stability_cut,
                stability.map_or(0.0, |demand| demand.drive_cut),
            );
            let modules: &mut VehicleModules = modules;
            modules.brake.begin_step(&ctx);
            modules.steering.begin_step(&ctx);
            if let Some(drivetrain) = &mut modules.drivetrain {
                drivetrain.begin_step(&ctx);
            }
            // For the contexts of the rest of the step.
            inputs.stability = stability;
        },
    );
}

/// How fast the wheels on `axle` roll at the start of the step, as `[rim, ground]` (m/s; 0
/// without any): the mean of their spins times their radii (what a parking pawl on the
/// differential's input turns with: the mean of its two wheels), and the mean speed of their
/// centres over their own ground along the chassis's forward axis, from the body's motion
/// ([`VehicleState::wheel_velocity`]). The ground speed is
/// current even where a wheel's spin is not yet (a spin set on the drivetrain's state shows
/// in its sensors only after the next step).
fn parking_axle_speeds(inputs: &ModuleInputs, axle: u8) -> [f64; 2] {
    let forward = inputs.rotation * Vec3::NEG_Z;
    let state = inputs.context(0.0).state;
    let (mut rim, mut ground, mut count) = (0.0, 0.0, 0.0);
    for (i, (wheel, spin)) in inputs.wheels.iter().zip(&inputs.spin).enumerate() {
        if wheel.mount.axle != axle {
            continue;
        }
        let velocity = state.wheel_velocity(i, wheel.mount.position);
        rim += spin * wheel.radius;
        ground += f64::from(velocity.dot(forward));
        count += 1.0;
    }
    if count > 0.0 {
        [rim / count, ground / count]
    } else {
        [0.0; 2]
    }
}

/// The vehicle's wheels (the blocks with a mount, a wheel, a pass-order slot, sensors and a
/// state), by axle from the front, left before right.
fn gather_wheels(inputs: &mut ModuleInputs, blocks: &Blocks, wheels: &WheelRows<'_, '_>) {
    inputs.wheels.clear();
    for block in blocks.iter() {
        if let Ok((mount, wheel, slot)) = wheels.get(block) {
            inputs.wheels.push(ModuleWheel {
                entity: block,
                mount: mount.clone(),
                radius: wheel.radius,
                inertia: wheel.inertia,
                node: slot.node,
            });
        }
    }
    // The sort is stable.
    inputs
        .wheels
        .sort_by_key(|w| (w.mount.axle, w.mount.side == Side::Right));
    let count = inputs.wheels.len();
    for values in [
        &mut inputs.spin,
        &mut inputs.travel,
        &mut inputs.load,
        &mut inputs.peak_force,
        &mut inputs.peak_slip,
        &mut inputs.probe_angle,
        &mut inputs.toe,
        &mut inputs.compliance_steer,
        &mut inputs.compliance_toe,
        &mut inputs.lateral_force,
    ] {
        values.clear();
        values.resize(count, 0.0);
    }
    inputs.ground_velocity.clear();
    inputs.ground_velocity.resize(count, None);
}

/// Each gathered wheel's spin, travel, load and steering angle at the start of the step;
/// `false` if a wheel no longer has all its components.
fn gather_values(inputs: &mut ModuleInputs, values: &WheelValues<'_, '_>) -> bool {
    for (i, wheel) in inputs.wheels.iter().enumerate() {
        let Ok((sensors, state, suspension)) = values.get(wheel.entity) else {
            return false;
        };
        inputs.spin[i] = sensors.speed;
        inputs.travel[i] = state.travel;
        inputs.load[i] = state.load;
        inputs.probe_angle[i] = state.steer_angle;
        inputs.lateral_force[i] = sensors.force[1];
        inputs.ground_velocity[i] = state.grounded.then_some(state.ground_velocity);
        (inputs.toe[i], inputs.compliance_steer[i]) = suspension.map_or((0.0, 0.0), |s| {
            (
                s.bump_toe(wheel.mount.side, state.travel),
                s.compliance_steer,
            )
        });
    }
    true
}

/// A rate-limited input moving from `from` toward `target` at no more than `max_rate` (1/s)
/// over a step of `dt` (s): its value at the step's end and its mean over the step (a ramp
/// that reaches `target` within the step holds it for the rest).
fn rate_limited(from: f64, target: f64, max_rate: f64, dt: f64) -> (f64, f64) {
    let max_step = max_rate * dt;
    let change = (target - from).clamp(-max_step, max_step);
    // The share of the step the ramp takes (1 while it is still moving at the end).
    let ramp = if max_step > 0.0 {
        (change / max_step).abs()
    } else {
        0.0
    };
    (from + change, from + change * (1.0 - 0.5 * ramp))
}

/// What [`step_vehicles`] steps: a vehicle's drivetrain, its modules and their scratch, and
/// what the step reports.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct SteppedVehicle {
    drivetrain: &'static mut Drivetrain,
    modules: &'static mut VehicleModules,
    scratch: &'static mut ModuleScratch,
    telemetry: &'static mut VehicleTelemetry,
    limiter: Option<&'static SpeedLimiter>,
    ready: Has<ChassisReady>,
    entity: Entity,
}

/// Steps every vehicle's drivetrain, calling the brake, steering and drivetrain modules before
/// each RK4 stage; then turns each wheel's heading to its final steering angle.
///
/// Four ready vehicles in a row whose drivetrains have one shape are stepped together
/// ([`step_car_run`]), each with its own stage hook and tires. Each vehicle's step reads and
/// writes its own data only, so with more than one compute thread the vehicles are stepped on
/// all of them, each task on its own run ([`parallel::for_each_run`]), with the same result
/// bit for bit: each task writes its vehicles' block sensors right after their steps, and
/// once every step is done, what they leave on their wheels' states (a step reads its
/// wheels' states, so no task writes one while another may still read it).
pub(crate) fn step_vehicles(
    time: Res<Time>,
    parallel: Res<ParallelStep>,
    mut vehicles: Query<SteppedVehicle, With<Vehicle>>,
    states: Query<&mut WheelState>,
    slots: Query<&BlockSlot>,
    mut sensors: SensorWriter,
    mut buffer: Local<Vec<f64>>,
) {
    let dt = time.delta_secs_f64();
    if dt <= 0.0 {
        return;
    }
    let tasks = parallel.task_count(vehicles.iter().len());
    let mut items: Vec<_> = vehicles.iter_mut().collect();
    if tasks <= 1 {
        let read = &states.as_readonly();
        let states = &states;
        step_car_run(&mut items, dt, read, &slots, &mut buffer, |v| {
            // SAFETY: the system's own query, on this thread alone; the step that read it is
            // done.
            #[allow(unsafe_code)]
            unsafe {
                end_wheel_states(v, states, None)
            };
            // While the vehicle's program is still in cache.
            sensors.write(&mut v.drivetrain);
        });
    } else {
        let read = states.as_readonly();
        let sensors = &sensors;
        parallel::for_each_run(&mut items, tasks, Vec::new, |buffer, run| {
            step_car_run(run, dt, &read, &slots, buffer, |v| {
                // SAFETY: each vehicle is stepped in one task, and `sensors` is used by these
                // calls alone until the tasks are done.
                #[allow(unsafe_code)]
                unsafe {
                    sensors.write_owned(v.entity, &mut v.drivetrain)
                };
            });
        });
        let states = &states;
        parallel::for_each(
            &mut items,
            tasks,
            || (),
            |_, _| {},
            |_, _| {},
            // SAFETY: each vehicle is in one task, and `states` is used by these calls alone
            // until the tasks are done.
            #[allow(unsafe_code)]
            |_, v| unsafe { end_wheel_states(v, states, Some(&slots)) },
        );
    }
}

/// Steps a run of vehicles in order, four at a time where four ready vehicles in a row can
/// share a batch ([`step_four_vehicles`]), calling `stepped` on each once its step is done.
/// With thousands of vehicles their data is not in the cache: each vehicle's components start
/// loading a few batches ahead of its step, and what they point to (the drivetrain's boxed
/// cells, the modules' boxes, the wheels' states) a little later ([`prefetch::in_runs`]).
fn step_car_run(
    items: &mut [SteppedVehicleItem],
    dt: f64,
    states: &Query<&WheelState>,
    slots: &Query<&BlockSlot>,
    buffer: &mut Vec<f64>,
    mut stepped: impl FnMut(&mut SteppedVehicleItem),
) {
    let far = |v: &SteppedVehicleItem| {
        prefetch::value(&*v.drivetrain);
        prefetch::value(&*v.modules);
        prefetch::value(&v.scratch.inputs.wheels);
    };
    let near = |v: &SteppedVehicleItem| {
        v.drivetrain.prefetch();
        v.modules.prefetch();
        for wheel in &v.scratch.inputs.wheels {
            if let Ok(state) = states.get(wheel.entity) {
                prefetch::value(state);
            }
        }
    };
    prefetch::in_runs(items, far, near, |run, ahead| {
        let four = match run {
            [a, b, c, d, ..] => step_four_vehicles(dt, states, slots, buffer, [a, b, c, d], ahead),
            _ => false,
        };
        let count = if four { 4 } else { 1 };
        if !four && let Some(v) = run.first_mut() {
            step_vehicle(dt, states, slots, buffer, v);
        }
        for v in &mut run[..count] {
            stepped(v);
        }
        count
    });
}

/// One vehicle's step: its drivetrain with the modules at each stage, and what it reports.
/// Reads its wheels' states and writes nothing outside the vehicle.
fn step_vehicle(
    dt: f64,
    states: &Query<&WheelState>,
    slots: &Query<&BlockSlot>,
    buffer: &mut Vec<f64>,
    v: &mut SteppedVehicleItem,
) {
    let Some((drivetrain, mut car)) = CarStep::begin(states, slots, v) else {
        v.drivetrain.step_with(dt, buffer);
        v.scratch.inputs.spin_reaction = Vec3::ZERO;
        return;
    };
    drivetrain.step_hooked_within(dt, car.max_substep, buffer, &mut car.hook());
    car.end(dt, states, drivetrain);
}

/// Four ready vehicles' steps, as [`step_vehicle`] steps each, bit for bit: their drivetrains
/// in one batch ([`Drivetrain::step_four_hooked_within`]) if they have one shape and take the
/// same substeps, else one after another, giving out `ahead`'s hints for the next cars as
/// the batch computes. Returns `false`, having stepped none, if any of the four is not ready.
fn step_four_vehicles(
    dt: f64,
    states: &Query<&WheelState>,
    slots: &Query<&BlockSlot>,
    buffer: &mut Vec<f64>,
    [a, b, c, d]: [&mut SteppedVehicleItem; 4],
    ahead: &prefetch::Ahead<SteppedVehicleItem>,
) -> bool {
    if !(a.ready && b.ready && c.ready && d.ready) {
        return false;
    }
    let begun = [a, b, c, d].map(|v| CarStep::begin(states, slots, v).expect("ready"));
    let [(da, mut ca), (db, mut cb), (dc, mut cc), (dd, mut cd)] = begun;
    let max_substep = [
        ca.max_substep,
        cb.max_substep,
        cc.max_substep,
        cd.max_substep,
    ];
    // The next cars' hints while the batch computes: see `prefetch::in_runs`.
    let pace = prefetch::Ahead::pace;
    let mut hooks = [
        pace(Some(ahead), ca.hook()),
        pace(None, cb.hook()),
        pace(None, cc.hook()),
        pace(None, cd.hook()),
    ];
    let batched = Drivetrain::step_four_hooked_within(
        [&mut *da, &mut *db, &mut *dc, &mut *dd],
        dt,
        max_substep,
        buffer,
        hooks.each_mut(),
    )
    .is_some();
    drop(hooks);
    for (mut car, drivetrain) in [(ca, da), (cb, db), (cc, dc), (cd, dd)] {
        if !batched {
            // Their substeps differ: each steps on its own, on what `begin` set up.
            drivetrain.step_hooked_within(dt, car.max_substep, buffer, &mut car.hook());
        }
        car.end(dt, states, drivetrain);
    }
    true
}

/// A vehicle's part in its drivetrain's step: the brake, steering and drive modules its stage
/// hook calls before each RK4 stage, and what they work with. [`CarStep::begin`] sets it up,
/// [`CarStep::stage`] runs at each stage and [`CarStep::end`] reports the step.
struct CarStep<'a> {
    vehicle: Entity,
    limiter: Option<&'a SpeedLimiter>,
    scratch: &'a mut ModuleScratch,
    modules: &'a mut VehicleModules,
    telemetry: &'a mut VehicleTelemetry,
    /// Whether a module acts on each stage's state, not only on the step's first.
    every_stage: bool,
    /// Whether the brake module decides at each substep's start.
    every_substep: bool,
    traction: Option<TractionControl>,
    /// Each wheel's brake at full pedal, the most the traction control may put on it (N·m).
    brake_limit: PerWheel,
    /// Direction of travel the selected gear asks for: −1, 0 or 1.
    direction: f64,
    /// The speed limiter's share of the drive, once per step (0..1).
    governed: f64,
    /// The stability control's share of the drive, set with its brakes (0..1).
    stabilized: f64,
    /// The traction control's share of the drive at the last stage (0..1).
    traction_limit: f64,
    first_stage: bool,
    /// The longest substep this step may take (s).
    max_substep: f64,
    corrections_before: u64,
}

impl<'a> CarStep<'a> {
    /// Sets up vehicle `v`'s step: hands each wheel block the contact `probe_ground` measured
    /// and the body's lateral mobility to the drivetrain, and reads what the modules need for
    /// the step. Returns the vehicle's drivetrain beside it, or `None` for a vehicle whose
    /// chassis is not ready (its drivetrain steps without modules).
    fn begin(
        states: &Query<&WheelState>,
        slots: &Query<&BlockSlot>,
        v: &'a mut SteppedVehicleItem,
    ) -> Option<(&'a mut Drivetrain, CarStep<'a>)> {
        if !v.ready {
            return None;
        }
        let limiter = v.limiter;
        let vehicle = v.entity;
        let drivetrain: &'a mut Drivetrain = &mut v.drivetrain;
        let ModuleScratch {
            inputs,
            brakes,
            angles,
            drives,
            module_brakes,
            traction_brakes,
            ..
        } = &mut *v.scratch;
        let VehicleModules {
            brake,
            steering,
            drivetrain: drive,
            report,
            ..
        } = &mut *v.modules;
        let telemetry: &VehicleTelemetry = &v.telemetry;
        for (i, wheel) in inputs.wheels.iter_mut().enumerate() {
            // The drivetrain may have been recompiled since the wheels were gathered: a wheel
            // no longer at its node is looked up again.
            if drivetrain
                .runtime::<Wheel>(wheel.entity, wheel.node)
                .is_none()
                && let Ok(slot) = slots.get(wheel.entity)
            {
                wheel.node = slot.node;
            }
            // Each wheel block integrates the contact `probe_ground` measured. Handed over
            // here, not there: the program is touched once per step, by the step that needs it.
            if let Ok(state) = states.get(wheel.entity)
                && let Some(runtime) = drivetrain.runtime_mut::<Wheel>(wheel.entity, wheel.node)
            {
                runtime.contact = WheelContact {
                    load: state.load,
                    velocity: [0, 1].map(|i| state.velocity[i] - state.ground_step[i]),
                    acceleration: state.acceleration,
                    friction: state.friction,
                    body_mass_fraction: state.body_mass_fraction,
                    body_mass: state.body_mass,
                    displacement: state.displacement,
                    camber: state.camber,
                    lateral_coupled: state.body_mass > 0.0,
                    on_dynamic_body: state.ground_body.is_some(),
                };
                // The compliance steer, solved with the tire's cornering stiffness as it
                // stands after the last step.
                let c = inputs.compliance_steer[i];
                if c != 0.0 {
                    let toe = compliance_toe(
                        c,
                        inputs.compliance_toe[i],
                        inputs.lateral_force[i],
                        runtime.tire.stiffness()[1],
                    );
                    inputs.compliance_toe[i] = toe;
                    inputs.toe[i] += toe;
                }
            }
        }
        // The body's answer to the tires' side forces within the step (room for a tracked
        // vehicle's road wheels on the stack).
        let nodes: SmallVec<[u32; 16]> = inputs.wheels.iter().map(|w| w.node).collect();
        drivetrain.set_lateral_mobility(&nodes, &inputs.lateral_mobility);
        let count = inputs.wheels.len();
        for buffer in [
            &mut *brakes,
            &mut *angles,
            &mut *drives,
            &mut *module_brakes,
            &mut *traction_brakes,
        ] {
            buffer.resize(count, 0.0);
        }
        // Stage-independent modules run at the first stage only; the wheels keep what they
        // set (see the module docs).
        let every_stage = brake.every_stage()
            || steering.every_stage()
            || drive.as_ref().is_some_and(|d| d.every_stage());
        // The traction control acts on each stage's slips, so it needs every stage.
        let traction = inputs.brakes.traction_control.clone();
        let brake_limit: PerWheel = match &traction {
            Some(_) => {
                let split = AxleSplit::new(&inputs.brakes, &inputs.wheels);
                let most = inputs.brakes.max_torque.max(0.0);
                inputs
                    .wheels
                    .iter()
                    .map(|w| most * split.share(w))
                    .collect()
            }
            None => PerWheel::new(),
        };
        let governed = limiter.map_or(1.0, |l| {
            l.drive_share(inputs.context(0.0).state.forward_speed())
        });
        // While the traction control cuts the drive, finer substeps for this step
        // (`TractionControl::SUBSTEP_SHARE`).
        let max_substep = if traction.is_some() && telemetry.traction_cut > 0.0 {
            drivetrain.max_substep * TractionControl::SUBSTEP_SHARE
        } else {
            drivetrain.max_substep
        };
        let direction = inputs.command.direction();
        let every_substep = brake.every_substep();
        let corrections_before = report.brake_corrections;
        let stabilized = 1.0 - telemetry.stability_cut;
        let car = CarStep {
            vehicle,
            limiter,
            direction,
            every_substep,
            corrections_before,
            stabilized,
            scratch: &mut v.scratch,
            modules: &mut v.modules,
            telemetry: &mut v.telemetry,
            every_stage,
            traction,
            brake_limit,
            governed,
            traction_limit: 1.0,
            first_stage: true,
            max_substep,
        };
        Some((drivetrain, car))
    }

    /// The stage hook: the modules at this stage's state, setting each wheel's brake,
    /// steering turn and drive.
    fn hook(&mut self) -> impl FnMut(&mut StageWheels) + '_ {
        |stage| self.stage(stage)
    }

    /// Before each RK4 stage: the traction control at the stage's slips, and the modules
    /// where they act at this stage; sets each wheel's brake, steering turn and drive.
    fn stage(&mut self, stage: &mut StageWheels) {
        let (every_stage, every_substep) = (self.every_stage, self.every_substep);
        let (direction, governed, stabilized) = (self.direction, self.governed, self.stabilized);
        let limiter = self.limiter;
        let CarStep {
            scratch,
            modules,
            traction,
            brake_limit,
            traction_limit,
            first_stage,
            ..
        } = self;
        let ModuleScratch {
            inputs,
            brakes,
            angles,
            drives,
            module_brakes,
            traction_brakes,
            rack,
            ..
        } = &mut **scratch;
        let VehicleModules {
            brake,
            steering,
            drivetrain: drive,
            report,
            ..
        } = &mut **modules;
        let first = *first_stage;
        *first_stage = false;
        inputs.substep = stage.substep();
        if first {
            // The wheels have set up their tires for this step's load and surface.
            for (i, wheel) in inputs.wheels.iter().enumerate() {
                if let Some(rt) = stage.wheel_mut(wheel.node) {
                    inputs.peak_force[i] = rt.peak_force[0];
                    inputs.peak_slip[i] = rt.peak_slip[0];
                }
            }
        }
        if let Some(tc) = traction {
            // The largest slip, looking ahead and measured against the tire's peak slip,
            // of a grounded tire in the direction the gear drives; and the brake on each
            // tire that spins on past the cut.
            let mut slip: f64 = 0.0;
            for (i, wheel) in inputs.wheels.iter().enumerate() {
                traction_brakes[i] = 0.0;
                if let Some((s, rate)) = stage.grounded_slip(wheel.node) {
                    let relative =
                        tc.relative_slip(s * direction, rate * direction, inputs.peak_slip[i]);
                    slip = slip.max(relative);
                    // Braking a wheel takes slip off its tire only while it turns the
                    // way the gear drives it. One at rest or turning back under a
                    // vehicle that rolls back against the gear (a hill start that slid
                    // back, a shift from reverse at speed) is dragged back by the road:
                    // braked, it locked and slid at full slip for as long as the
                    // vehicle rolled, and the control, reading that slip, kept the
                    // drive cut (until 2026-12-02).
                    let turning = stage
                        .spin(wheel.node)
                        .is_some_and(|spin| spin * direction > 0.0);
                    traction_brakes[i] = if turning {
                        tc.brake_torque(
                            relative,
                            inputs.peak_force[i],
                            wheel.radius,
                            brake_limit[i],
                        )
                    } else {
                        0.0
                    };
                }
            }
            *traction_limit = tc.drive_limit(slip);
        }
        if traction.is_some() || limiter.is_some() || stabilized < 1.0 {
            stage.set_drive_limit(traction_limit.min(governed).min(stabilized));
        }
        // Per-substep decisions, at the state committed at the substep's start.
        let decides = every_substep && stage.starts_substep();
        // The modules see this stage's wheel spins (gathered once for both calls).
        if decides || every_stage || first {
            for (i, wheel) in inputs.wheels.iter().enumerate() {
                if let Some(s) = stage.spin(wheel.node) {
                    inputs.spin[i] = s;
                }
            }
        }
        let changed = decides && brake.begin_substep(&inputs.context(stage.time()));
        if !(every_stage || first || changed) {
            if traction.is_some() {
                for (i, wheel) in inputs.wheels.iter().enumerate() {
                    if let Some(rt) = stage.wheel_mut(wheel.node) {
                        rt.brake = module_brakes[i] + traction_brakes[i];
                    }
                }
            }
            return;
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
            module_brakes[i] = torque.abs();
            rt.brake = module_brakes[i] + traction_brakes[i];
            let probe = inputs.probe_angle[i];
            rt.set_steer(finite_or(angles[i] + inputs.toe[i], probe, report) - probe);
            if drive.is_some() {
                rt.drive = finite_or(drives[i], 0.0, report);
            }
        }
    }

    /// After the drivetrain's step: the module warnings, the telemetry of the step and the
    /// airborne wheels' spin reaction on the body.
    fn end(self, dt: f64, states: &Query<&WheelState>, drivetrain: &Drivetrain) {
        let report = &mut self.modules.report;
        if self.corrections_before == 0 && report.brake_corrections > 0 {
            warn!(
                "brake module '{}' returned torques that would drive a wheel; they are applied \
             against the spin instead (counted in ModuleReport::brake_corrections)",
                self.modules.brake.name()
            );
        }
        // Once per vehicle: the numbers replaced are counted, and the vehicle drives on.
        if report.invalid_outputs > 0 && !self.scratch.invalid_warned {
            self.scratch.invalid_warned = true;
            let vehicle = self.vehicle;
            warn!(
                "vehicle {vehicle}: a module returned a number that is not finite (a brake \
             torque, a steering angle, a drive torque or a suspension force); it was replaced \
             by a neutral value (no torque or force, the angle measured) and the vehicle drives \
             on without it (counted in ModuleReport::invalid_outputs)"
            );
        }
        let telemetry = &mut *self.telemetry;
        set_if_changed(&mut telemetry.rack_travel, self.scratch.rack);
        set_if_changed(&mut telemetry.traction_cut, 1.0 - self.traction_limit);
        set_if_changed(&mut telemetry.speed_limit_cut, 1.0 - self.governed);

        // What turns a wheel in the air, its brake or its drive, turns the body the other
        // way: the caliper and the drive's housings are the body's. So the body takes minus
        // the airborne wheels' change of angular momentum about their axles (`I·Δω` along
        // the wheel's left, the axle a forward spin turns about). Without it a car braking
        // its spinning wheels in the air, or spinning them up, did not pitch at all. (On
        // the ground the body takes the road's push at the contact, and with it the road's
        // torque on the wheel; what it misses there is only the wheel's own `I·ω̇`, see
        // docs/known_gaps.md.)
        let inputs = &mut self.scratch.inputs;
        inputs.spin_reaction = Vec3::ZERO;
        for wheel in &inputs.wheels {
            let Ok(state) = states.get(wheel.entity) else {
                continue;
            };
            if state.grounded {
                continue;
            }
            let (Some(after), Some(rt)) = (
                drivetrain.state(wheel.entity),
                drivetrain.runtime::<Wheel>(wheel.entity, wheel.node),
            ) else {
                continue;
            };
            let left = state.normal.cross(state.heading).normalize_or_zero();
            inputs.spin_reaction +=
                spin_reaction(left, wheel.inertia, rt.spin_at_step_start, after[1], dt);
        }
    }
}

/// What a vehicle's step leaves on its wheels' states: the brake torque, the toe and the
/// steering angle each ended the step at, with its heading and the velocity measured in the
/// tire frame turned by the angle. With `slots`, only the vehicle's own wheels (those whose
/// [`BlockSlot`] names it) are written, as tasks stepping other vehicles may write theirs.
///
/// # Safety
///
/// Without `slots`, nothing else reaches `states` while this runs; with them, the contract of
/// [`parallel::owned_block_mut`] for `states`: calls for the same vehicle do not overlap, and
/// nothing else reaches `states` while they run.
#[allow(unsafe_code)]
unsafe fn end_wheel_states(
    v: &SteppedVehicleItem,
    states: &Query<&mut WheelState>,
    slots: Option<&Query<&BlockSlot>>,
) {
    if !v.ready {
        return;
    }
    let drivetrain = &v.drivetrain;
    let inputs = &v.scratch.inputs;
    // Each wheel ends the step at its last stage's angle: its heading, and the velocity
    // measured in the tire frame, turn with it.
    for (i, wheel) in inputs.wheels.iter().enumerate() {
        let Some((turn, brake)) = drivetrain
            .runtime::<Wheel>(wheel.entity, wheel.node)
            .map(|rt| (rt.steer(), rt.brake))
        else {
            continue;
        };
        // SAFETY: passed on to the caller.
        let state = unsafe {
            match slots {
                None => states.get_unchecked(wheel.entity).ok(),
                Some(slots) => {
                    parallel::owned_block_mut(states, slots, v.entity, wheel.entity, wheel.node)
                }
            }
        };
        let Some(mut state) = state else {
            continue;
        };
        set_if_changed(&mut state.brake_torque, brake);
        set_if_changed(&mut state.toe, inputs.toe[i]);
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

/// A block whose rotor spins in mounts on the vehicle's body: an [`Engine`]'s crank, a
/// [`Motor`]'s or an [`AssistMotor`]'s rotor. Each has its speed (rad/s) first in its state.
pub(crate) trait HeldRotor: Component {
    /// The rotor's spin axis in the body's frame and its inertia (kg·m²), if the axis is
    /// known.
    fn held_rotor(&self) -> Option<(BodyAxis, f64)>;
}

impl HeldRotor for Engine {
    fn held_rotor(&self) -> Option<(BodyAxis, f64)> {
        self.crank_axis.map(|axis| (axis, self.inertia))
    }
}

impl HeldRotor for Motor {
    fn held_rotor(&self) -> Option<(BodyAxis, f64)> {
        self.rotor_axis.map(|axis| (axis, self.inertia))
    }
}

impl HeldRotor for AssistMotor {
    fn held_rotor(&self) -> Option<(BodyAxis, f64)> {
        self.rotor_axis.map(|axis| (axis, self.inertia))
    }
}

/// The rotor speed (rad/s) at the start of the step of each block of type `B` whose rotor
/// axis is known ([`HeldRotor`]), for [`rotor_reaction`].
#[derive(Resource)]
pub(crate) struct RotorSpeeds<B>(bevy::ecs::entity::EntityHashMap<f64>, PhantomData<B>);

impl<B> Default for RotorSpeeds<B> {
    fn default() -> Self {
        Self(default(), PhantomData)
    }
}

/// Notes the rotor speed of each block of type `B` with a rotor axis just before the
/// drivetrains step: after anything that set it outright (a reset, a game's `set_state`),
/// which is not a spin-up the mounts take.
pub(crate) fn note_rotor_speeds<B: HeldRotor>(
    blocks: Query<(Entity, &B, &BlockOf)>,
    drivetrains: Query<&Drivetrain>,
    mut speeds: ResMut<RotorSpeeds<B>>,
) {
    speeds.0.clear();
    for (entity, block, block_of) in &blocks {
        if block.held_rotor().is_none() {
            continue;
        }
        if let Some(&[speed, ..]) = drivetrains
            .get(block_of.0)
            .ok()
            .and_then(|d| d.state(entity))
        {
            speeds.0.insert(entity, speed);
        }
    }
}

/// What spins a rotor up turns the body the other way: its mounts take it. For each block of
/// type `B` whose rotor axis is known ([`Engine::crank_axis`], [`Motor::rotor_axis`]), the
/// body takes minus the rotor's change of angular momentum over the step, `−I·Δω` along that
/// axis (turned with the body at the step's start), over the step, with the wheels' spin
/// reaction ([`ModuleInputs::spin_reaction`]).
pub(crate) fn rotor_reaction<B: HeldRotor>(
    time: Res<Time>,
    blocks: Query<(&B, &BlockOf)>,
    mut vehicles: Query<(&Drivetrain, &mut ModuleScratch)>,
    speeds: Res<RotorSpeeds<B>>,
) {
    let dt = time.delta_secs_f64();
    if dt <= 0.0 {
        return;
    }
    for (&entity, &before) in speeds.0.iter() {
        let Ok((block, block_of)) = blocks.get(entity) else {
            continue;
        };
        let (Some((axis, inertia)), Ok((drivetrain, mut scratch))) =
            (block.held_rotor(), vehicles.get_mut(block_of.0))
        else {
            continue;
        };
        let Some(&[after, ..]) = drivetrain.state(entity) else {
            continue;
        };
        let [x, y, z] = axis.vector().map(|c| c as f32);
        let axis = scratch.inputs.rotation * Vec3::new(x, y, z);
        scratch.inputs.spin_reaction += spin_reaction(axis, inertia, before, after, dt);
    }
}

/// The torque (N·m, world) on the body of a part the body holds (a wheel on its axle, a
/// crank in its mounts) whose spin about `axis` (world, unit) went from `before` to `after`
/// (rad/s) over a step of `dt` (s) with `inertia` (kg·m²) about it: minus its change of
/// angular momentum over the step. Zero where that is not finite.
fn spin_reaction(axis: Vec3, inertia: f64, before: f64, after: f64, dt: f64) -> Vec3 {
    let torque = axis * -(inertia * (after - before) / dt) as f32;
    if torque.is_finite() {
        torque
    } else {
        Vec3::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::rate_limited;

    #[test]
    fn a_rate_limited_input_ramps_and_holds_within_the_step() {
        // From 0 toward 0.1 at 2.5/s over 1/15 s: there after 0.04 s (0.6 of the step), so
        // the mean is 0.1 less half the ramp's share: 0.1·(1 − 0.3) = 0.07.
        let (end, mean) = rate_limited(0.0, 0.1, 2.5, 1.0 / 15.0);
        assert!(
            (end - 0.1).abs() < 1e-15 && (mean - 0.07).abs() < 1e-15,
            "{end} {mean}"
        );
        // Still moving at the end: half way on average.
        let (end, mean) = rate_limited(0.2, -1.0, 3.0, 0.1);
        assert!(
            (end + 0.1).abs() < 1e-15 && (mean - 0.05).abs() < 1e-15,
            "{end} {mean}"
        );
        // Held, and with no rate at all.
        assert_eq!(rate_limited(0.3, 0.3, 2.5, 0.1), (0.3, 0.3));
        assert_eq!(rate_limited(0.3, 1.0, 0.0, 0.1), (0.3, 0.3));
    }
}
