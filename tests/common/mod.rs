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

/// Spawns a fixed floor of friction `floor` (its top at y = −0.2 m, 400 m square) and on it a
/// free slab of `mass` (kg), 0.2 m thick with `half_extents` (m, x and z) across, its top at
/// y = 0, with friction 0.9; returns the slab.
pub fn spawn_slab_on_floor(
    app: &mut App,
    half_extents: [f32; 2],
    mass: f32,
    floor: bevy_vehicle_physics::rapier::prelude::Friction,
) -> Entity {
    use bevy_vehicle_physics::rapier::prelude::*;
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::cuboid(200.0, 1.0, 200.0),
        floor,
        Transform::from_xyz(0.0, -1.2, 0.0),
    ));
    let [x, z] = half_extents;
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(x, 0.1, z),
            ColliderMassProperties::Mass(mass),
            Friction::coefficient(0.9),
            ExternalImpulse::default(),
            Velocity::default(),
            ReadMassProperties::default(),
            Transform::from_xyz(0.0, -0.1, 0.0),
        ))
        .id()
}

/// Spawns a free 100 t deck 0.2 m thick, its top at y = 0 (40 m square, μ 0.9), resting on a
/// floor of μ 0.9 that holds it by friction ([`spawn_slab_on_floor`]): ground a hard landing
/// can sink a wheel through into the floor under it.
pub fn spawn_held_deck(app: &mut App) -> Entity {
    let floor = bevy_vehicle_physics::rapier::prelude::Friction::coefficient(0.9);
    spawn_slab_on_floor(app, [20.0, 20.0], 100_000.0, floor)
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

/// The vehicle block `block` belongs to.
pub fn vehicle_of(app: &App, block: Entity) -> Entity {
    app.world().get::<BlockOf>(block).expect("a block").0
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
        ..default()
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

/// The one entity of `vehicle`'s drivetrain that has component `T`.
pub fn block_entity<T: Component>(app: &mut App, vehicle: Entity) -> Entity {
    let world = app.world_mut();
    let mut q = world.query_filtered::<(Entity, &BlockOf), With<T>>();
    let found: Vec<Entity> = q
        .iter(world)
        .filter(|(_, b)| b.0 == vehicle)
        .map(|(e, _)| e)
        .collect();
    assert_eq!(found.len(), 1, "{}", core::any::type_name::<T>());
    found[0]
}

/// Length of one fixed step (s), as the clock really has it (whole nanoseconds).
pub fn fixed_dt(app: &App) -> f64 {
    app.world()
        .resource::<Time<Fixed>>()
        .timestep()
        .as_secs_f64()
}

// ---- Chassis helpers ------------------------------------------------------------------------

use bevy_rapier3d::prelude::{Collider, Friction, RigidBody, Velocity};

/// Standard gravity used by Rapier's default configuration (m/s²).
pub const G: f64 = 9.81;

/// The shortest distance (m) in which friction `mu` (dimensionless) can stop a body moving at
/// `speed` (m/s) on flat ground: `v²/(2·μ·g)`.
pub fn friction_stopping_distance(speed: f64, mu: f64) -> f64 {
    speed * speed / (2.0 * mu * G)
}

/// Spawns a flat, infinite road (a half-space at y = 0) with friction `mu`.
pub fn spawn_flat_ground(app: &mut App, mu: f32) -> Entity {
    app.world_mut()
        .spawn((
            Name::new("ground"),
            RigidBody::Fixed,
            Collider::halfspace(Vec3::Y).expect("unit normal"),
            Friction::coefficient(mu),
            Transform::default(),
        ))
        .id()
}

/// Spawns a kinematic box (`body` is `KinematicPositionBased` or `KinematicVelocityBased`) of
/// `half_extents` (m), its top at y = 0 over the origin, with friction `mu`, starting at
/// `velocity` (linear m/s, angular rad/s): a deck, turntable or tilt table the test moves.
pub fn spawn_kinematic_box(
    app: &mut App,
    body: RigidBody,
    half_extents: Vec3,
    mu: f32,
    velocity: Velocity,
) -> Entity {
    app.world_mut()
        .spawn((
            body,
            Collider::cuboid(half_extents.x, half_extents.y, half_extents.z),
            Friction::coefficient(mu),
            velocity,
            Transform::from_xyz(0.0, -half_extents.y, 0.0),
        ))
        .id()
}

/// Spawns a slab of road 200 m square whose top surface rises along −Z with `grade` (rise over
/// run, e.g. 0.3 for 30 %), its top passing through the origin; returns its rotation.
pub fn spawn_slope(app: &mut App, grade: f32, mu: f32) -> Quat {
    let angle = grade.atan();
    // Rotating about +X by +angle lifts the −Z side.
    let rotation = Quat::from_rotation_x(angle);
    let half = Vec3::new(100.0, 1.0, 100.0);
    app.world_mut().spawn((
        Name::new("slope"),
        RigidBody::Fixed,
        Collider::cuboid(half.x, half.y, half.z),
        Friction::coefficient(mu),
        Transform::from_translation(rotation * Vec3::new(0.0, -half.y, 0.0))
            .with_rotation(rotation),
    ));
    rotation
}

/// Spawns `car` at `transform` and returns the vehicle entity.
pub fn spawn_car(app: &mut App, car: &CarBuilder, transform: Transform) -> Entity {
    let world = app.world_mut();
    let mut commands = world.commands();
    let e = car.spawn(&mut commands, transform);
    world.flush();
    e
}

/// Spawns `car` at `transform` with [`CarBuilder::try_spawn`]: the vehicle entity, or the
/// error when a setting is refused (then nothing is spawned).
pub fn try_spawn_car(
    app: &mut App,
    car: &CarBuilder,
    transform: Transform,
) -> Result<Entity, ChassisError> {
    let world = app.world_mut();
    let mut commands = world.commands();
    let e = car.try_spawn(&mut commands, transform);
    world.flush();
    e
}

/// The vehicle's controls.
pub fn controls(app: &mut App, car: Entity, f: impl FnOnce(&mut VehicleControls)) {
    set::<VehicleControls>(app, car, f);
}

/// Position of the vehicle's origin (m).
pub fn position(app: &App, car: Entity) -> Vec3 {
    get::<Transform>(app, car).translation
}

/// Linear velocity of the vehicle (m/s).
pub fn velocity(app: &App, car: Entity) -> Vec3 {
    get::<Velocity>(app, car).linear
}

/// The vehicle's wheel block entities with their mounts.
pub fn wheels(app: &mut App, car: Entity) -> Vec<Entity> {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &BlockOf, &WheelMount)>();
    let mut v: Vec<(Entity, u8, bool)> = q
        .iter(world)
        .filter(|(_, b, _)| b.0 == car)
        .map(|(e, _, m)| (e, m.axle, m.side == Side::Right))
        .collect();
    v.sort_by_key(|&(_, axle, right)| (axle, right));
    v.into_iter().map(|(e, ..)| e).collect()
}

/// Height (m) of a vehicle file's body origin above flat ground when its wheels touch it
/// unloaded: where to spawn it so it settles without a drop.
pub fn rest_height(d: &VehicleDescription) -> f32 {
    d.axles
        .iter()
        .map(|a| a.wheel.radius as f32 - a.height)
        .fold(0.0, f32::max)
}

/// Height (m) of `car`'s chassis origin above flat ground when it rests at its design ride
/// height: where to spawn it so it stands without a drop.
pub fn car_rest_height(car: &CarBuilder) -> f32 {
    car.wheel.radius as f32 - car.wheel_height
}

/// Spawns `car` at the origin standing on flat ground at y = 0 (see [`car_rest_height`]).
pub fn spawn_car_at_rest(app: &mut App, car: &CarBuilder) -> Entity {
    spawn_car(
        app,
        car,
        Transform::from_xyz(0.0, car_rest_height(car), 0.0),
    )
}

/// The repository's asset folder.
pub const ASSET_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// The text of the shipped asset at `path` (an asset path), or the reading error: what a
/// description's parser asks for each file it references.
pub fn read_asset(path: &str) -> Result<String, String> {
    std::fs::read_to_string(format!("{ASSET_ROOT}/{path}")).map_err(|e| e.to_string())
}

/// Reads the shipped vehicle file `path` (an asset path), panicking with its error.
pub fn load_vehicle(path: &str) -> VehicleDescription {
    VehicleDescription::load(
        ASSET_ROOT,
        path,
        &bevy_vehicle_physics::assets::FileBlockTypes::default(),
    )
    .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The root of `f` in `[lo, hi]` by bisection, where `f(lo) > 0 > f(hi)` (asserted).
pub fn bisect(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let (mut lo, mut hi) = (lo, hi);
    assert!(f(lo) > 0.0 && f(hi) < 0.0, "no sign change in [{lo}, {hi}]");
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Spawns the vehicle `d` at `transform`; returns the vehicle entity.
pub fn spawn_described(app: &mut App, d: &VehicleDescription, transform: Transform) -> Entity {
    let world = app.world_mut();
    let mut commands = world.commands();
    let e = d.spawn(&mut commands, transform);
    world.flush();
    e
}

/// How a vehicle dropped onto the ground ended: see [`drop_described`].
pub struct Landing {
    /// The vehicle entity.
    pub car: Entity,
    /// The body's highest upward speed over the run (m/s, world +Y).
    pub rebound: f32,
    /// The body's height at the end (m, world Y of its origin).
    pub height: f32,
    /// The body's speed at the end (m/s).
    pub speed: f32,
    /// The world Y component of the body's up axis at the end (1 upright).
    pub up: f32,
}

/// Spawns the vehicle `d` upright at the origin with its body `height` (m) up, over whatever
/// ground `app` has, and runs `steps` fixed steps.
pub fn drop_described(app: &mut App, d: &VehicleDescription, height: f32, steps: usize) -> Landing {
    let car = spawn_described(app, d, Transform::from_xyz(0.0, height, 0.0));
    let mut rebound: f32 = 0.0;
    for _ in 0..steps {
        tick(app, 1);
        rebound = rebound.max(velocity(app, car).y);
    }
    Landing {
        car,
        rebound,
        height: position(app, car).y,
        speed: velocity(app, car).length(),
        up: (get::<Transform>(app, car).rotation * Vec3::Y).y,
    }
}

/// Spawns flat ground of friction `mu` and the vehicle `d` on it, upright at the origin with
/// its wheels `lift` (m) above their rest height, so it drops onto its springs.
pub fn spawn_on_flat_ground(app: &mut App, d: &VehicleDescription, mu: f32, lift: f32) -> Entity {
    spawn_flat_ground(app, mu);
    spawn_described(app, d, Transform::from_xyz(0.0, rest_height(d) + lift, 0.0))
}

/// Sets every wheel of `car` rolling at `speed` (m/s) with the body, for a flying start.
pub fn flying_start(app: &mut App, car: Entity, speed: f32) {
    let forward = get::<Transform>(app, car).rotation * Vec3::NEG_Z;
    set::<bevy_rapier3d::prelude::Velocity>(app, car, |v| v.linear = forward * speed);
    let first = wheels(app, car)[0];
    let radius = get::<Wheel>(app, first).radius;
    for w in wheels(app, car) {
        let mut s = state(app, car, w);
        s[1] = f64::from(speed) / radius;
        set_state(app, car, w, &s);
    }
    // Motor and engine turn with their wheels once the momentum pass runs.
}

/// Heading about +Y (rad), 0 facing −Z, positive turning left.
pub fn yaw(app: &App, e: Entity) -> f32 {
    let forward = app.world().get::<Transform>(e).unwrap().rotation * Vec3::NEG_Z;
    (-forward.x).atan2(-forward.z)
}

/// Ticks `app` by `steps` fixed steps and returns how far `e` turned (rad, positive to the
/// left), summed step by step so that a turn past half a revolution counts in full.
pub fn tick_turning(app: &mut App, e: Entity, steps: usize) -> f64 {
    use core::f32::consts::{PI, TAU};
    let mut turned = 0.0;
    let mut heading = yaw(app, e);
    for _ in 0..steps {
        tick(app, 1);
        let now = yaw(app, e);
        turned += f64::from((now - heading + PI).rem_euclid(TAU) - PI);
        heading = now;
    }
    turned
}

/// Angle between a tow vehicle's and its trailer's headings (rad, in (−π, π]).
pub fn articulation(app: &App, tow: Entity, trailer: Entity) -> f32 {
    let d = yaw(app, tow) - yaw(app, trailer);
    (d + core::f32::consts::PI).rem_euclid(core::f32::consts::TAU) - core::f32::consts::PI
}

/// Distance between the two coupling points of a trailer's [`Hitch`] in the world (m).
pub fn coupling_gap(app: &App, tow: Entity, trailer: Entity) -> f32 {
    let hitch = *app.world().get::<Hitch>(trailer).unwrap();
    let t = app.world().get::<Transform>(tow).unwrap();
    let r = app.world().get::<Transform>(trailer).unwrap();
    (t.transform_point(hitch.tow_point) - r.transform_point(hitch.trailer_point)).length()
}
