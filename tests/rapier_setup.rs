//! A game that sets up Rapier itself: with its own physics hooks, in its own plugin, or in the
//! wrong schedule. The vehicles need Rapier to step once per fixed step, by the fixed step's
//! length; each case is checked by how far a car falls freely in one second.

mod common;

use bevy::app::{PluginGroup, Plugins};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::chassis::{RapierSetupPlugin, rapier_schedule_problem};
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;
use common::*;

/// A game's physics hooks (they filter nothing; what matters is their type).
#[derive(SystemParam)]
struct GameHooks<'w, 's> {
    names: Query<'w, 's, &'static Name>,
}

impl BevyPhysicsHooks for GameHooks<'_, '_> {
    fn filter_contact_pair(&self, context: PairFilterContextView) -> Option<SolverFlags> {
        // Reads the query so that the hooks are a real system parameter.
        let _ = self.names.get(context.collider1());
        Some(SolverFlags::COMPUTE_IMPULSES)
    }
}

/// An app at `hz` fixed steps per second (one per update) with `plugins`, finished as
/// `App::run` would finish it, and its first update run.
fn app_with<M>(hz: f64, plugins: impl Plugins<M>) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(plugins)
        .insert_resource(Time::<Fixed>::from_hz(hz))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.finish();
    app.cleanup();
    app.update();
    app
}

/// Checks that `app`, at `hz` fixed steps per second, has Rapier where the vehicles need it
/// and steps it once per fixed step by the fixed step's length: the default car, let go far
/// from any ground, falls in one second as [`one_step_per_fixed_step`] has it, to 0.1 % (air
/// drag takes about 2 mm of the 4.9 m: 0.047 % at 30 and at 60 Hz, measured 2026-12-06).
fn assert_falls_freely(mut app: App, hz: usize) {
    assert_eq!(rapier_schedule_problem(&app), None);
    let car = spawn_car(
        &mut app,
        &CarBuilder::default(),
        Transform::from_xyz(0.0, 500.0, 0.0),
    );
    let start = position(&app, car).y;
    tick(&mut app, hz);
    let fallen = f64::from(start - position(&app, car).y);
    let solver_substeps = app
        .world_mut()
        .query::<&RapierContextSimulation>()
        .single(app.world())
        .expect("one Rapier context")
        .integration_parameters
        .num_solver_iterations;
    let expected = one_step_per_fixed_step(hz, 1.0 / hz as f64, solver_substeps);
    assert!(
        rel(fallen, expected) < 0.001,
        "fell {fallen:.3} m in 1 s at {hz} Hz, expected {expected:.3}"
    );
}

/// The fall (m) of a body Rapier steps once per fixed step of `dt` (s), `n` times, under
/// [`GRAVITY`]: Rapier integrates in its `solver_substeps` solver substeps
/// (`IntegrationParameters::num_solver_iterations`, 4 by default), each updating the velocity
/// before the position, so after `N = n·solver_substeps` substeps of `h = dt/solver_substeps`
/// the body has fallen `g·h²·N(N + 1)/2`.
fn one_step_per_fixed_step(n: usize, dt: f64, solver_substeps: usize) -> f64 {
    let (substeps, h) = ((n * solver_substeps) as f64, dt / solver_substeps as f64);
    GRAVITY * h * h * substeps * (substeps + 1.0) / 2.0
}

/// A game's `RapierPhysicsPlugin::<Hooks>` added before the vehicle plugins is the one Rapier:
/// the car falls 4.925 m in one second at 60 Hz (to 0.1 %: air drag takes 2 mm). Before, the
/// vehicle plugins added a second `RapierPhysicsPlugin::<NoUserData>`, and Bevy panicked at
/// the first fixed step (two of Rapier's systems of one type to order against).
#[test]
fn a_game_s_rapier_with_its_own_hooks_steps_once_per_fixed_step() {
    let app = app_with(
        60.0,
        (
            RapierPhysicsPlugin::<GameHooks>::default().in_fixed_schedule(),
            VehiclePhysicsPlugins,
        ),
    );
    assert_falls_freely(app, 60);
}

/// With `RapierSetupPlugin` disabled the game's Rapier still steps by the fixed step's
/// length: at 30 Hz the car falls 4.946 m in one second (Rapier's default variable step,
/// capped at 1/60 s, would take it 1.24 m).
#[test]
fn a_game_s_rapier_steps_by_the_fixed_step_s_length() {
    let app = app_with(
        30.0,
        (
            VehiclePhysicsPlugins.build().disable::<RapierSetupPlugin>(),
            RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule(),
        ),
    );
    assert_falls_freely(app, 30);
}

/// A car moved by its `Transform` between steps (a reset, a game's teleport) moves in Rapier,
/// in a headless app (`MinimalPlugins`, no `TransformPlugin`) and in one with Bevy's
/// `TransformPlugin` before or after the vehicle plugins: lifted 0.6 m off the ground where it
/// stood at rest, it falls freely from there, `0.6 m − g·h²·N(N + 1)/2` above its rest height
/// after six steps at 30 Hz (to 0.1 mm; measured 0.003 mm off).
///
/// With Bevy's `multi_threaded` feature, in Bevy's default features, the transform
/// propagation Rapier runs first panicked in a headless app (it reads a resource only the
/// `TransformPlugin` makes), and then skipped every tree of entities nothing had marked
/// changed: the car, a tree with its colliders, kept its old `GlobalTransform`, and Rapier
/// never lifted it (it stayed at its rest height). The test suite's default build is
/// single-threaded, where that propagation is another function; `.ci/run` also runs this file
/// with `--features multi_threaded`.
#[test]
fn a_car_moved_by_its_transform_moves_in_rapier() {
    use bevy::transform::TransformPlugin;
    let headless = app_with(30.0, VehiclePhysicsPlugins);
    let before = app_with(30.0, (TransformPlugin, VehiclePhysicsPlugins));
    let after = app_with(30.0, (VehiclePhysicsPlugins, TransformPlugin));
    for (name, mut app) in [("headless", headless), ("before", before), ("after", after)] {
        spawn_flat_ground(&mut app, 0.9);
        let car = spawn_car_at_rest(&mut app, &CarBuilder::default());
        tick(&mut app, 30);
        let rest = position(&app, car).y;
        set::<Transform>(&mut app, car, |t| t.translation.y += 0.6);
        tick(&mut app, 6);
        let height = f64::from(position(&app, car).y - rest);
        let expected = 0.6 - one_step_per_fixed_step(6, 1.0 / 30.0, 4);
        assert!(
            (height - expected).abs() < 1e-4,
            "TransformPlugin {name}: {height:.4} m above its rest height, expected {expected:.4}"
        );
    }
}

/// Rapier set up where the vehicles cannot use it is named, with the fix, when the app is
/// finished: in `PostUpdate`, twice (a game's plugin added after the vehicle plugins, which
/// then added their own; Bevy panics at the first fixed step), or not at all.
#[test]
fn a_rapier_outside_the_fixed_step_is_reported() {
    let post_update = app_with(
        60.0,
        (
            RapierPhysicsPlugin::<NoUserData>::default(),
            VehiclePhysicsPlugins,
        ),
    );
    let problem = rapier_schedule_problem(&post_update).expect("Rapier in PostUpdate");
    assert!(problem.contains("PostUpdate"), "{problem}");
    assert!(problem.contains("in_fixed_schedule()"), "{problem}");

    let twice = app_with(
        60.0,
        (
            VehiclePhysicsPlugins,
            RapierPhysicsPlugin::<GameHooks>::default().in_fixed_schedule(),
        ),
    );
    let problem = rapier_schedule_problem(&twice).expect("two Rapier plugins");
    assert!(problem.contains("2 `RapierPhysicsPlugin`s"), "{problem}");

    let none = app_with(
        60.0,
        VehiclePhysicsPlugins.build().disable::<RapierSetupPlugin>(),
    );
    let problem = rapier_schedule_problem(&none).expect("no Rapier");
    assert!(problem.contains("does not step"), "{problem}");
}
