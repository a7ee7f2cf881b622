//! [`ChassisPlugin`] and [`RapierSetupPlugin`]: where the chassis's systems run in a fixed step.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::DrivetrainSystems;
use bevy_vehicle_drivetrain::blocks::{AssistMotor, Engine, Motor};

use crate::contact::probe_ground;
use crate::first_step::hold_vehicles_over_new_ground;
use crate::forces::apply_forces;
use crate::hitch::{
    follow_tow_brakes, on_hitch_inserted, on_hitch_removed, preload_hitched_trailers,
};
use crate::modules::install::on_reset_vehicle;
use crate::modules::systems::{
    RotorSpeeds, begin_modules, note_rotor_speeds, note_wheel_changes, rotor_reaction,
    step_vehicles,
};
use crate::path_follower::follow_paths;
use crate::telemetry::{place_wheels, update_telemetry};
use crate::validation::{take_out_refused_drivetrains, validate_chassis};

/// The chassis's system sets, in `FixedUpdate`. One fixed step runs:
///
/// 0. [`PathFollower`](crate::PathFollower)s set their vehicles' controls; then
///    [`VehicleSystems::Validate`]: vehicles whose chassis settings were added or changed are
///    checked (see [`ChassisStatus`](crate::ChassisStatus)); refused vehicles are left out of
///    every later set.
/// 1. [`VehicleSystems::Controls`]: the steering input's rate limit, and the `begin_step` of
///    each vehicle's brake, steering and drivetrain modules (see [`crate::modules`]); in
///    [`DrivetrainSystems::Controls`], the driver's controls become block inputs.
/// 2. [`DrivetrainSystems::Rebuild`], then [`VehicleSystems::Contact`]: probe the ground, compute
///    suspension forces and tire loads, and feed each wheel its contact.
/// 3. [`DrivetrainSystems::SyncIn`], [`DrivetrainSystems::Step`] (substeps with RK4 stages:
///    before each stage the brake, steering and drivetrain modules; then the passes, wheel
///    spin and tire forces), [`DrivetrainSystems::SyncOut`].
/// 4. [`VehicleSystems::ApplyForces`]: vehicles whose drivetrain was refused in this step are
///    taken out of the simulation; then every force is summed into each chassis's
///    `ExternalForce`.
/// 5. Rapier's `PhysicsSet::{SyncBackend, StepSimulation, Writeback}`.
/// 6. [`VehicleSystems::Telemetry`]: telemetry and wheel placement.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VehicleSystems {
    /// Checks new and changed chassis settings and updates each vehicle's
    /// [`ChassisStatus`](crate::ChassisStatus). Systems that change settings in the fixed
    /// step belong before this set.
    Validate,
    /// The steering's rate limit and the modules' `begin_step`. Systems that set
    /// `VehicleControls` belong before this set.
    Controls,
    /// Ground probes, suspension, anti-roll bars, tire contacts.
    Contact,
    /// Forces into the chassis bodies (and reactions onto the ground).
    ApplyForces,
    /// Telemetry and wheel transforms, after Rapier has stepped.
    Telemetry,
}

/// The longest fixed step (s) the vehicles are validated at: 1/15 s, a fixed-step rate of
/// 15 Hz.
///
/// From 15 Hz up every shipped road vehicle's 0–100 km/h and stop stay within 2 % of its
/// 60 Hz figures, a car held at rest (brake pedal or parking lock) stands still, and the
/// tracked excavator stands, drives and pivots as at 60 Hz. Rapier moves the body once per
/// fixed step, so every spring between road and body is integrated explicitly at the fixed
/// step, whatever the drivetrain's substeps, unless the body answers it within the step: the
/// tires' contact patches do (fore and aft through each tire's share of the body's mass,
/// sideways through the body's response to all of its tires), and the suspension's bump stop
/// and damper are held within the step
/// ([`Suspension::force_at_step`](crate::Suspension::force_at_step)). Below 15 Hz the others
/// show (at 12 Hz the GTE rocks at rest after a stop). Driven off a 2 m ledge at 15 m/s a car
/// lands upright at 15 Hz, where it comes to rest after its landing scatters alike at every
/// rate; `docs/fixed_step_rate.md` has the measurements. The
/// [`ChassisPlugin`] warns once when the fixed step is longer than this
/// ([`fixed_step_warning`]).
pub const LONGEST_VALIDATED_STEP: f64 = 1.0 / 15.0;

/// Runs vehicles on Rapier bodies: contact, suspension, brakes, steering, forces, telemetry.
///
/// Needs [`DrivetrainPlugin`](bevy_vehicle_drivetrain::DrivetrainPlugin) in `FixedUpdate` and
/// Rapier in `FixedUpdate` (see [`RapierSetupPlugin`]). Run it at a fixed-step rate of at
/// least 15 Hz ([`LONGEST_VALIDATED_STEP`]).
#[derive(Default)]
pub struct ChassisPlugin;

impl Plugin for ChassisPlugin {
    fn build(&self, app: &mut App) {
        headless_transform_propagation(app);
        app.init_resource::<RotorSpeeds<Engine>>()
            .init_resource::<RotorSpeeds<Motor>>()
            .init_resource::<RotorSpeeds<AssistMotor>>()
            .configure_sets(
                FixedUpdate,
                (
                    VehicleSystems::Validate
                        .before(VehicleSystems::Controls)
                        .before(DrivetrainSystems::Controls),
                    VehicleSystems::Controls.before(DrivetrainSystems::Controls),
                    VehicleSystems::Contact
                        .after(DrivetrainSystems::Rebuild)
                        .after(VehicleSystems::Controls)
                        .before(DrivetrainSystems::Step),
                    VehicleSystems::ApplyForces
                        .after(DrivetrainSystems::SyncOut)
                        .before(PhysicsSet::SyncBackend),
                    VehicleSystems::Telemetry.after(PhysicsSet::Writeback),
                ),
            )
            .add_systems(
                FixedUpdate,
                (
                    (
                        warn_long_fixed_step,
                        (preload_hitched_trailers, validate_chassis).chain(),
                    )
                        .in_set(VehicleSystems::Validate),
                    follow_paths
                        .before(VehicleSystems::Validate)
                        .before(DrivetrainSystems::Controls),
                    // Before any block takes its controls (`DrivetrainSystems::Controls`): a
                    // trailer's brakes follow its tractor's within the step.
                    (follow_tow_brakes, note_wheel_changes, begin_modules)
                        .chain()
                        .in_set(VehicleSystems::Controls),
                    (
                        note_rotor_speeds::<Engine>,
                        note_rotor_speeds::<Motor>,
                        note_rotor_speeds::<AssistMotor>,
                    )
                        .after(DrivetrainSystems::SyncIn)
                        .before(DrivetrainSystems::Step),
                    step_vehicles.in_set(DrivetrainSystems::Step),
                    probe_ground.in_set(VehicleSystems::Contact),
                    (
                        take_out_refused_drivetrains,
                        // In one order: their reactions add up on the same body.
                        (
                            rotor_reaction::<Engine>,
                            rotor_reaction::<Motor>,
                            rotor_reaction::<AssistMotor>,
                        )
                            .chain(),
                        apply_forces,
                        hold_vehicles_over_new_ground,
                    )
                        .chain()
                        .in_set(VehicleSystems::ApplyForces),
                    (place_wheels, update_telemetry)
                        .chain()
                        .in_set(VehicleSystems::Telemetry),
                ),
            )
            .add_observer(on_reset_vehicle)
            .add_observer(on_hitch_inserted)
            .add_observer(on_hitch_removed);
        // Here rather than in `RapierSetupPlugin`, so that it also holds for a Rapier the game
        // sets up itself.
        app.add_systems(
            FixedUpdate,
            sync_rapier_timestep
                .before(VehicleSystems::Validate)
                .before(PhysicsSet::SyncBackend),
        );
        // Rapier brings its bodies' `GlobalTransform`s up to date with Bevy's transform
        // propagation before it reads them, and with Bevy's `multi_threaded` feature (in its
        // default features) that propagation skips every tree of entities that Bevy's
        // `mark_dirty_trees` did not mark changed. Bevy's `TransformPlugin` runs that in
        // `PostUpdate` only, after the fixed steps, and a headless app has none: a vehicle (a
        // tree, with its colliders) moved by its `Transform` in `Update` or between updates
        // kept its old `GlobalTransform`, and Rapier never moved it (a reset did nothing).
        // So the trees are marked again just before Rapier's propagation.
        app.add_systems(
            FixedUpdate,
            bevy::transform::systems::mark_dirty_trees
                .after(VehicleSystems::ApplyForces)
                .before(RapierTransformPropagateSet),
        );
    }

    fn finish(&self, app: &mut App) {
        if let Some(problem) = rapier_schedule_problem(app) {
            error!("{problem}");
        }
    }
}

/// What is wrong with where Rapier steps in `app`, or `None` if it steps once per fixed step
/// in `FixedUpdate` and nowhere else, as the vehicles need: their forces are summed once per
/// fixed step for one Rapier step of the same length. The [`ChassisPlugin`] logs it as an
/// error when the app is finished (after every plugin is built).
///
/// Counts the systems in Rapier's `PhysicsSet::StepSimulation` in each schedule, so it finds
/// Rapier in another schedule (`RapierPhysicsPlugin` without `in_fixed_schedule()`), no
/// Rapier at all, and two Rapier plugins (a game's `RapierPhysicsPlugin::<Hooks>` added after
/// the vehicle plugins, which then add one of their own), which Bevy would otherwise report
/// at the first fixed step as an ambiguous system set, in a panic that names neither.
pub fn rapier_schedule_problem(app: &App) -> Option<String> {
    use bevy::ecs::schedule::graph::Direction;
    use bevy::ecs::schedule::{NodeId, ScheduleLabel};

    let schedules = app.world().get_resource::<Schedules>()?;
    let fixed = FixedUpdate.intern();
    let (mut in_fixed, mut elsewhere) = (0, Vec::new());
    for (label, schedule) in schedules.iter() {
        let graph = schedule.graph();
        let Some(set) = graph
            .system_sets
            .get_key(PhysicsSet::StepSimulation.intern())
        else {
            continue;
        };
        let steps = graph
            .hierarchy()
            .graph()
            .neighbors_directed(NodeId::Set(set), Direction::Outgoing)
            .filter(|node| matches!(node, NodeId::System(_)))
            .count();
        if label == &*fixed {
            in_fixed += steps;
        } else if steps > 0 {
            elsewhere.push(format!("{label:?}"));
        }
    }
    let fix = "add `RapierPhysicsPlugin::<YourHooks>::default().in_fixed_schedule()` before \
               `VehiclePhysicsPlugins` (which then adds no Rapier of its own), or leave Rapier \
               to `RapierSetupPlugin`";
    if !elsewhere.is_empty() {
        Some(format!(
            "Rapier steps in {} rather than in `FixedUpdate`, where the vehicles sum their \
             forces for it once per fixed step: {fix}",
            elsewhere.join(", ")
        ))
    } else if in_fixed == 0 {
        Some(format!(
            "Rapier does not step in `FixedUpdate`, so no vehicle moves: {fix}"
        ))
    } else if in_fixed > 1 {
        Some(format!(
            "the app has {in_fixed} `RapierPhysicsPlugin`s stepping in `FixedUpdate` (Bevy \
             refuses to order systems against Rapier's when its systems are there twice): {fix}"
        ))
    } else {
        None
    }
}

/// The warning for a fixed step of `dt` (s) longer than [`LONGEST_VALIDATED_STEP`]; `None`
/// for a validated one. The [`ChassisPlugin`] logs it once; a tool that sets the step itself
/// (the headless runner) may print it.
pub fn fixed_step_warning(dt: f64) -> Option<String> {
    (dt > LONGEST_VALIDATED_STEP * (1.0 + 1e-6)).then(|| {
        format!(
            "the fixed step is {dt:.4} s ({:.1} Hz): vehicles are validated from {:.0} Hz up; \
             at longer steps the springs between road and body may shake or throw them (see \
             `LONGEST_VALIDATED_STEP`)",
            1.0 / dt,
            1.0 / LONGEST_VALIDATED_STEP
        )
    })
}

/// Warns once if the fixed step is longer than [`LONGEST_VALIDATED_STEP`].
fn warn_long_fixed_step(time: Res<Time>, mut warned: Local<bool>) {
    if *warned {
        return;
    }
    if let Some(warning) = fixed_step_warning(time.delta_secs_f64()) {
        *warned = true;
        warn!("{warning}");
    }
}

/// What Rapier's transform propagation needs in an app without Bevy's `TransformPlugin` (a
/// headless app on `MinimalPlugins`): Rapier propagates its bodies' transforms with Bevy's own
/// system, which with Bevy's `multi_threaded` feature (in its default features) reads
/// `StaticTransformOptimizations`, made only by the `TransformPlugin`. Without it such an app
/// panicked at its first fixed step. (A `TransformPlugin` added later keeps it.) See also
/// [`ChassisPlugin`]'s `mark_dirty_trees`.
fn headless_transform_propagation(app: &mut App) {
    app.init_resource::<bevy::transform::StaticTransformOptimizations>();
}

/// Adds Rapier to `FixedUpdate`, unless the app already has a `RapierPhysicsPlugin` (with any
/// physics hooks: add yours before this plugin, in the fixed schedule). The
/// [`ChassisPlugin`] keeps Rapier's time step equal to `Time<Fixed>` every step, so physics
/// and drivetrain advance in lockstep, and reports a Rapier that steps elsewhere or twice
/// ([`rapier_schedule_problem`]).
#[derive(Default)]
pub struct RapierSetupPlugin;

impl Plugin for RapierSetupPlugin {
    fn build(&self, app: &mut App) {
        headless_transform_propagation(app);
        // Every `RapierPhysicsPlugin::<Hooks>` inserts it when built, whatever its hooks.
        if !app
            .world()
            .contains_resource::<RapierContextInitialization>()
        {
            // Registered as messages first, so their buffers are cleared every frame.
            app.add_message::<CollisionEvent>()
                .add_message::<ContactForceEvent>()
                .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule());
        }
    }
}

/// Keeps Rapier's fixed time step equal to the fixed clock's, keeping the substeps the game
/// set.
fn sync_rapier_timestep(time: Res<Time>, mode: Option<ResMut<TimestepMode>>) {
    let dt = time.delta_secs();
    // Without Rapier there is nothing to keep in step (`rapier_schedule_problem` says so).
    let Some(mut mode) = mode.filter(|_| dt > 0.0) else {
        return;
    };
    let substeps = match *mode {
        TimestepMode::Fixed { substeps, .. }
        | TimestepMode::Variable { substeps, .. }
        | TimestepMode::Interpolated { substeps, .. } => substeps,
    };
    let wanted = TimestepMode::Fixed { dt, substeps };
    if *mode != wanted {
        *mode = wanted;
    }
}
