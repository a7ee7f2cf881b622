//! Test helpers: an app with controlled time, and a terse way to spawn blocks.
#![allow(dead_code)]

use bevy::ecs::component::Mutable;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::prelude::*;

/// A headless app running the vehicle plugins at `hz` fixed steps per second, where every
/// `app.update()` is exactly one fixed step.
pub fn create_app(hz: f64) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins))
        .insert_resource(Time::<Fixed>::from_hz(hz))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    // The first update only starts the clocks; no fixed step runs in it.
    app.update();
    app
}

/// Runs `steps` fixed steps.
pub fn tick(app: &mut App, steps: usize) {
    for _ in 0..steps {
        app.update();
    }
}

/// Spawns a vehicle entity with a drivetrain of `substeps` substeps.
pub fn spawn_vehicle(app: &mut App, name: &str, substeps: u32) -> Entity {
    app.world_mut()
        .spawn((Name::new(name.to_owned()), Drivetrain::new(substeps)))
        .id()
}

/// Spawns block `bundle` named `name` into `vehicle`, driven by `upstream` if given.
pub fn spawn_block(
    app: &mut App,
    vehicle: Entity,
    name: &str,
    bundle: impl Bundle,
    upstream: Option<(Entity, Port)>,
) -> Entity {
    let mut e = app
        .world_mut()
        .spawn((Name::new(name.to_owned()), BlockOf(vehicle), bundle));
    if let Some((up, port)) = upstream {
        e.insert(DrivenBy::port(up, port));
    }
    e.id()
}

/// A copy of component `T` of `entity`.
pub fn get<T: Component + Clone>(app: &App, entity: Entity) -> T {
    app.world()
        .get::<T>(entity)
        .unwrap_or_else(|| panic!("{entity} has no {}", core::any::type_name::<T>()))
        .clone()
}

/// Changes component `T` of `entity`.
pub fn set<T: Component<Mutability = Mutable>>(
    app: &mut App,
    entity: Entity,
    f: impl FnOnce(&mut T),
) {
    let mut c = app
        .world_mut()
        .get_mut::<T>(entity)
        .expect("component present");
    f(&mut c);
}

/// The vehicle's drivetrain.
pub fn drivetrain(app: &App, vehicle: Entity) -> &Drivetrain {
    app.world()
        .get::<Drivetrain>(vehicle)
        .expect("vehicle has a drivetrain")
}

/// Continuous state of `block`.
pub fn state(app: &App, vehicle: Entity, block: Entity) -> Vec<f64> {
    drivetrain(app, vehicle)
        .state(block)
        .expect("block is compiled")
        .to_vec()
}

/// Overwrites the continuous state of `block` (the next step makes it consistent first).
pub fn set_state(app: &mut App, vehicle: Entity, block: Entity, values: &[f64]) {
    let ok = app
        .world_mut()
        .get_mut::<Drivetrain>(vehicle)
        .unwrap()
        .set_state(block, values);
    assert!(ok, "could not set state of {block}");
}

/// Relative difference |a − b| / |b|.
pub fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// A frictionless motor that delivers a constant `torque` (N·m) at any speed below a very high
/// limit, with inertia `inertia` (kg·m²).
pub fn constant_torque_motor(torque: f64, inertia: f64) -> Motor {
    Motor {
        peak_torque: torque.abs().max(1e-9),
        max_power: 1e12,
        max_rpm: 1e9,
        inertia,
        viscous_friction: 0.0,
        command: if torque >= 0.0 { 1.0 } else { -1.0 },
    }
}

/// A lossless single-ratio gearbox in gear, shifting instantly.
pub fn gear(ratio: f64) -> Gearbox {
    Gearbox {
        forward_ratios: vec![ratio],
        reverse_ratios: vec![],
        shift_time: 0.0,
        efficiency: 1.0,
        gear: 1,
    }
}

/// A wheel of inertia `inertia` with `load`.
pub fn wheel(inertia: f64, load: WheelLoad) -> Wheel {
    Wheel {
        inertia,
        radius: 0.3,
        load,
        brake_torque: 0.0,
    }
}

/// Length of one fixed step (s), as the clock really has it (whole nanoseconds).
pub fn fixed_dt(app: &App) -> f64 {
    app.world()
        .resource::<Time<Fixed>>()
        .timestep()
        .as_secs_f64()
}
