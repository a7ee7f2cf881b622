//! Vehicle physics benchmarks. Run with `cargo bench --bench vehicle_bench`.
//!
//! **Drivetrain alone**: the cost of one fixed step of the drivetrain systems (rebuild check,
//! input sync, four RK4 substeps, sensor sync) for engine → clutch → gearbox → differential →
//! 2 wheels, with a scripted driver changing the throttle of every vehicle every step, at 1,
//! 100 and 10 000 vehicles, single-threaded (built with the `multi_threaded` feature: on every
//! core, see `ParallelStep`). Reported in µs per vehicle-step, with ratios
//! against the 2 µs target and against the 100-vehicle figure (cost per vehicle must stay
//! flat), and the bytes one vehicle's drivetrain occupies (all heap, ECS storage included,
//! measured by a counting allocator). `BENCH_SETS=1` also times each part of the step (the
//! driver and the controls, the rebuild check and input sync, the step, the sensor sync) on
//! its own.
//!
//! **Full vehicle**: one whole fixed step (controls, ground probes, suspension, drivetrain with
//! four RK4 substeps and tires, forces, Rapier's own step, telemetry) for 1 to 4000 complete
//! cars driving on a flat box ground and on a heightfield, single-threaded (or as above),
//! against the same
//! number of chassis driven by Rapier's `DynamicRayCastVehicleController` in the same world
//! setup. Reported in µs per vehicle-step, with the ratio ours/Rapier, ours against the 5 µs
//! target, and the cost per vehicle against the 100-vehicle figure (it must stay flat).
//! Both kinds of car weave: their front wheels steer to and fro by a tenth of our car's full
//! lock (3.5°), so the tires work sideways as well as fore and aft, as a driven car's do.
//! `BENCH_STRAIGHT=1` drives them straight instead, as every run before run BU did (whose
//! tires then had no slip angle at all, about 5 % cheaper for ours).
//!
//! **What a car costs by its settings**: the full vehicle at 1000 cars on the box ground with
//! one setting changed at a time (ray probes, brush or linear tires, two substeps or one), then
//! the lightest car of them all, against the car the targets are for and against Rapier's
//! controller: what a game can save on vehicles whose handling nobody watches.

// The counting allocator needs `unsafe impl GlobalAlloc`; it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy_vehicle_physics::drivetrain::blocks::Tire;
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::tire::{BrushTire, LinearTire};

/// Counts live heap bytes.
struct CountingAlloc;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; we only count bytes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const HZ: f64 = 60.0;

/// How many threads step the vehicles: one, unless built with the `multi_threaded` feature
/// (then Bevy's compute task pool has one per core, and `ParallelStep` splits the vehicles
/// over them; Rapier's own step stays on one thread).
fn threads() -> String {
    if cfg!(feature = "multi_threaded") {
        let n = bevy::tasks::available_parallelism();
        format!("{n} compute threads (multi_threaded)")
    } else {
        "one thread".to_owned()
    }
}

/// `BENCH_TASKS=n` sets how many tasks the vehicle systems split their vehicles into
/// (`ParallelStep::tasks`; one per compute thread unless set): `1` measures the
/// multi-threaded build with the vehicles stepped on one thread.
fn parallel_step() -> ParallelStep {
    let tasks = std::env::var("BENCH_TASKS")
        .ok()
        .map(|n| n.parse().expect("BENCH_TASKS is a number"));
    ParallelStep { tasks, ..default() }
}

/// `MinimalPlugins`, with one compute thread per core when built with `multi_threaded` (Bevy's
/// default leaves half of a 2- or 4-core machine's threads to its IO and async pools).
fn minimal_plugins() -> impl PluginGroup {
    let cores = bevy::tasks::available_parallelism();
    MinimalPlugins.set(TaskPoolPlugin {
        task_pool_options: TaskPoolOptions {
            compute: bevy::app::TaskPoolThreadAssignmentPolicy {
                min_threads: cores,
                max_threads: cores,
                percent: 1.0,
                on_thread_spawn: None,
                on_thread_destroy: None,
            },
            ..default()
        },
    })
}
const TARGET_US: f64 = 2.0;

/// The scripted driver: every engine's throttle changes every step.
#[derive(Resource, Default)]
struct StepCount(u64);

fn driver(mut count: ResMut<StepCount>, mut engines: Query<&mut Engine>) {
    count.0 += 1;
    let throttle = 0.6 + 0.4 * ((count.0 as f64) * 0.05).sin();
    for mut e in &mut engines {
        e.throttle = throttle;
    }
}

fn spawn_car(world: &mut World) {
    let car = world.spawn(Drivetrain::new(4)).id();
    let engine = world.spawn((BlockOf(car), Engine::default())).id();
    let clutch = world
        .spawn((BlockOf(car), Clutch::default(), DrivenBy::new(engine)))
        .id();
    let gearbox = world
        .spawn((
            BlockOf(car),
            Gearbox {
                gear: 2,
                ..default()
            },
            DrivenBy::new(clutch),
        ))
        .id();
    let diff = world
        .spawn((
            BlockOf(car),
            Differential {
                lock_torque: 100.0,
                ..default()
            },
            DrivenBy::new(gearbox),
        ))
        .id();
    for port in [Port::LEFT, Port::RIGHT] {
        world.spawn((
            BlockOf(car),
            Wheel {
                load: WheelLoad::Vehicle {
                    mass: 650.0,
                    rolling_resistance: 0.012,
                    drag_area: 0.33,
                    air_density: 1.2,
                },
                ..default()
            },
            DrivenBy::port(diff, port),
        ));
    }
}

/// Runs the fixed-step schedule once, with the fixed clock as `Time`, as Bevy's fixed loop does.
fn fixed_step(app: &mut App, clock: &mut Time) {
    clock.advance_by(Duration::from_secs_f64(1.0 / HZ));
    *app.world_mut().resource_mut::<Time>() = *clock;
    app.world_mut().run_schedule(FixedUpdate);
}

/// Times `count` blocks of `steps` fixed steps and returns the cost of each block in
/// µs per vehicle-step, sorted fastest first. This machine is shared, so callers report the
/// median block rather than one long run.
fn time_blocks(
    app: &mut App,
    clock: &mut Time,
    count: usize,
    steps: usize,
    vehicles: usize,
) -> Vec<f64> {
    let mut blocks: Vec<f64> = (0..count)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..steps {
                fixed_step(app, clock);
            }
            start.elapsed().as_secs_f64() * 1e6 / (steps as f64 * vehicles as f64)
        })
        .collect();
    blocks.sort_by(f64::total_cmp);
    blocks
}

struct DrivetrainFigures {
    vehicles: usize,
    /// Median over the timed blocks.
    us_per_vehicle_step: f64,
    /// Fastest timed block.
    best_us: f64,
    bytes_per_vehicle: f64,
    /// Share of the last step's vehicles stepped in batches of four (`Drivetrain::batched`).
    batched_share: f64,
    /// With `BENCH_SETS`: µs per vehicle-step in each of [`SETS`], the mean over the timed
    /// blocks.
    sets: Option<[f64; SETS.len()]>,
}

/// The parts of the drivetrain's fixed step that `BENCH_SETS=1` times on their own: the
/// system sets in their order, bracketed by [`set_mark`] systems.
const SETS: [&str; 4] = [
    "driver and Controls",
    "Rebuild and SyncIn",
    "Step",
    "SyncOut",
];

/// Nanoseconds spent in each of [`SETS`] since the last reset, and the time of the last mark
/// (ns since [`MARK_EPOCH`]).
static SET_NANOS: [AtomicU64; SETS.len()] = [const { AtomicU64::new(0) }; SETS.len()];
static LAST_MARK: AtomicU64 = AtomicU64::new(0);
static MARK_EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// A system placed after set `K - 1` of [`SETS`] (and before set `K`): adds the time since the
/// last mark to set `K - 1`'s sum.
fn set_mark<const K: usize>() {
    let now = MARK_EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64;
    if K > 0 {
        SET_NANOS[K - 1].fetch_add(now - LAST_MARK.load(Ordering::Relaxed), Ordering::Relaxed);
    }
    LAST_MARK.store(now, Ordering::Relaxed);
}

/// Timed blocks per figure; the median is reported.
const BLOCKS: usize = 7;

fn bench_drivetrain(vehicles: usize) -> DrivetrainFigures {
    let mut app = App::new();
    app.add_plugins((minimal_plugins(), DrivetrainPlugin::default()))
        .insert_resource(parallel_step())
        .init_resource::<StepCount>()
        .add_systems(FixedUpdate, driver.before(DrivetrainSystems::SyncIn));
    let time_sets = std::env::var_os("BENCH_SETS").is_some();
    if time_sets {
        use DrivetrainSystems as Set;
        app.add_systems(
            FixedUpdate,
            (
                set_mark::<0>.before(driver).before(Set::Controls),
                set_mark::<1>
                    .after(driver)
                    .after(Set::Controls)
                    .before(Set::Rebuild),
                set_mark::<2>.after(Set::SyncIn).before(Set::Step),
                set_mark::<3>.after(Set::Step).before(Set::SyncOut),
                set_mark::<4>.after(Set::SyncOut),
            ),
        );
    }
    app.finish();
    app.cleanup();
    let mut clock = Time::<()>::default();
    fixed_step(&mut app, &mut clock);

    let before = LIVE_BYTES.load(Ordering::Relaxed);
    for _ in 0..vehicles {
        spawn_car(app.world_mut());
    }
    fixed_step(&mut app, &mut clock); // compile and take the first step
    // Roll off in second gear at 2000 rpm (a car started from rest in gear would stall).
    let world = app.world_mut();
    let mut cars = world.query::<&mut Drivetrain>();
    let engine_speed = rpm_to_rad_s(2000.0);
    let wheel_speed = engine_speed / (2.1 * 4.1);
    for mut car in cars.iter_mut(world) {
        for (i, block) in car.blocks_in_order().into_iter().enumerate() {
            match i {
                0 => car.set_state(block, &[engine_speed]),
                4 | 5 => car.set_state(block, &[0.0, wheel_speed]),
                _ => true,
            };
        }
    }
    fixed_step(&mut app, &mut clock);
    let after = LIVE_BYTES.load(Ordering::Relaxed);

    // Warm up, then time several blocks of steps and keep the median block: this machine is
    // shared, and a single block can be slowed by others.
    for _ in 0..20 {
        fixed_step(&mut app, &mut clock);
    }
    let steps = (60_000 / vehicles).clamp(10, 5_000);
    for sum in &SET_NANOS {
        sum.store(0, Ordering::Relaxed);
    }
    let blocks = time_blocks(&mut app, &mut clock, BLOCKS, steps, vehicles);
    let vehicle_steps = (BLOCKS * steps * vehicles) as f64;
    let sets = time_sets.then(|| {
        SET_NANOS
            .each_ref()
            .map(|n| n.load(Ordering::Relaxed) as f64 * 1e-3 / vehicle_steps)
    });

    // Sanity: every car is compiled and moving.
    let world = app.world_mut();
    let mut q = world.query::<&Drivetrain>();
    assert!(
        q.iter(world)
            .all(|d| *d.status() == DrivetrainStatus::Ready)
    );
    let batched = q.iter(world).filter(|d| d.batched().is_some()).count();
    let batched_share = batched as f64 / vehicles as f64;
    let mut wheels = world.query::<&WheelSensors>();
    assert!(
        wheels
            .iter(world)
            .all(|w| w.speed > 1.0 && w.speed.is_finite())
    );

    DrivetrainFigures {
        vehicles,
        us_per_vehicle_step: blocks[BLOCKS / 2],
        best_us: blocks[0],
        bytes_per_vehicle: (after - before) as f64 / vehicles as f64,
        batched_share,
        sets,
    }
}

// ---- Full vehicles on a Rapier world --------------------------------------------------------

use bevy_rapier3d::parry::query::DefaultQueryDispatcher;
use bevy_rapier3d::prelude::{
    Collider, ColliderMassProperties, Friction, MassProperties, RapierQueryPipelineMut, RigidBody,
    Sleeping, Velocity, WriteRapierContext,
};
use bevy_rapier3d::rapier::control::{DynamicRayCastVehicleController, WheelTuning};

/// Per-vehicle budget of a full fixed step at 1000 vehicles (µs).
const FULL_TARGET_US: f64 = 5.0;
/// Largest allowed ratio to Rapier's raycast vehicle at 1000 vehicles.
const RAPIER_TARGET_RATIO: f64 = 1.5;
/// Half the side of the ground (m): room for 4000 cars driving for the whole run.
const GROUND_HALF: f32 = 1200.0;
/// Grid spacing of the cars (m): across, along.
const SPACING: (f32, f32) = (6.0, 14.0);

/// What the cars drive on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ground {
    /// One large box.
    Box,
    /// A heightfield of 257 × 257 points with gentle 5 cm undulations.
    Heightfield,
}

/// Which vehicle model drives the chassis bodies. (Our car's settings hold a tire model, a few
/// hundred bytes: a value made a few times per run, not worth a box.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Model {
    /// Our complete car (drivetrain, tires, suspension) with these settings.
    Ours(CarSettings),
    /// Rapier's `DynamicRayCastVehicleController`, four ray wheels.
    RapierRaycast,
}

/// The settings of our car that the benchmark varies: the ground probe, the tire's force law
/// and the drivetrain's substeps. [`CarSettings::measured`] is the car the targets are for.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CarSettings {
    /// How each wheel finds the ground.
    probe: GroundProbe,
    /// The tire's steady-state force law (the rest of the tire, its relaxation lengths and
    /// damping, stays the default wheel's).
    tire: TireModel,
    /// RK4 substeps per fixed step, each at most `1 / (60 Hz × substeps)` long.
    substeps: u32,
}

impl CarSettings {
    /// The car every target is for: `CarBuilder`'s default wheel (the published passenger
    /// Magic Formula set) with `probe`, four substeps.
    fn measured(probe: GroundProbe) -> Self {
        Self {
            probe,
            tire: WheelSpec::default().tire.model,
            substeps: 4,
        }
    }
}

fn spawn_ground(world: &mut World, ground: Ground) {
    let collider = match ground {
        Ground::Box => Collider::cuboid(GROUND_HALF, 1.0, GROUND_HALF),
        Ground::Heightfield => {
            let n = 257;
            let heights = (0..n * n)
                .map(|i| {
                    let (r, c) = ((i / n) as f32, (i % n) as f32);
                    0.05 * (r * 0.7).sin() * (c * 0.9).cos()
                })
                .collect();
            Collider::heightfield(
                heights,
                n,
                n,
                Vec3::new(2.0 * GROUND_HALF, 1.0, 2.0 * GROUND_HALF),
            )
        }
    };
    let y = match ground {
        Ground::Box => -1.0,
        Ground::Heightfield => 0.0,
    };
    world.spawn((
        RigidBody::Fixed,
        collider,
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, y, 0.0),
    ));
}

/// Grid positions for `n` cars around the origin.
fn grid(n: usize) -> impl Iterator<Item = Vec3> {
    let columns = (n as f32).sqrt().ceil() as usize;
    (0..n).map(move |i| {
        let (row, column) = ((i / columns) as f32, (i % columns) as f32);
        Vec3::new(
            (column - columns as f32 / 2.0) * SPACING.0,
            0.0,
            (row - columns as f32 / 2.0) * SPACING.1 + 0.3 * GROUND_HALF,
        )
    })
}

/// The steering of both kinds of car at step `step`, as a share of our car's full lock
/// (dimensionless, −1..1): a weave of a tenth of full lock (3.5°) with a period of about two
/// seconds at 60 Hz, or 0 with `BENCH_STRAIGHT` set.
fn weave(step: u64) -> f64 {
    if std::env::var_os("BENCH_STRAIGHT").is_some() {
        0.0
    } else {
        0.1 * ((step as f64) * 0.05).cos()
    }
}

/// Our car's full-lock road-wheel angle (rad): the default [`Steering::max_angle`] (the
/// benchmark's car keeps the default steering), which the raycast cars' front wheels are
/// steered by too.
fn full_lock() -> f64 {
    Steering::default().max_angle
}

/// The benchmark's driver for our cars: every car's throttle and steering change every step,
/// first gear.
fn drive_ours(mut count: ResMut<StepCount>, mut cars: Query<&mut VehicleControls>) {
    count.0 += 1;
    // Below the traction limit: a car spinning its wheels in first gear would spin out.
    let throttle = 0.4 + 0.1 * ((count.0 as f64) * 0.05).sin();
    let steering = weave(count.0);
    for mut c in &mut cars {
        c.throttle = throttle;
        c.steering = steering;
        c.gear = 1;
    }
}

/// A chassis driven by Rapier's raycast vehicle controller (created once Rapier knows the body).
#[derive(Component, Default)]
struct RaycastCar(Option<DynamicRayCastVehicleController>);

/// Runs every raycast vehicle controller, between Rapier's sync and its step.
fn drive_rapier(
    time: Res<Time>,
    mut count: ResMut<StepCount>,
    mut context: WriteRapierContext,
    mut cars: Query<(Entity, &mut RaycastCar)>,
) -> Result {
    count.0 += 1;
    let force = 1500.0 * (0.5 + 0.3 * ((count.0 as f32) * 0.05).sin());
    let steering = (weave(count.0) * full_lock()) as f32;
    let dt = time.delta_secs();
    let bevy_rapier3d::prelude::RapierContextMut {
        simulation,
        mut colliders,
        mut rigidbody_set,
        ..
    } = context.single_mut()?;
    for (entity, mut car) in &mut cars {
        let car = &mut car.0;
        if car.is_none() {
            let Some(&handle) = rigidbody_set.entity2body().get(&entity) else {
                continue;
            };
            let mut controller = DynamicRayCastVehicleController::new(handle);
            controller.index_forward_axis = 2;
            let tuning = WheelTuning {
                // Per unit chassis mass (Rapier's convention): about 80 mm static compression.
                suspension_stiffness: 30.0,
                suspension_compression: 1.6,
                suspension_damping: 2.5,
                max_suspension_travel: 0.2,
                max_suspension_force: 20_000.0,
                ..default()
            };
            for (x, z) in [(-0.75, -1.3), (0.75, -1.3), (-0.75, 1.3), (0.75, 1.3)] {
                controller.add_wheel(
                    Vec3::new(x, 0.3, z),
                    Vec3::NEG_Y,
                    Vec3::X,
                    0.3,
                    0.316,
                    &tuning,
                );
            }
            *car = Some(controller);
        }
        let controller = car.as_mut().expect("created above");
        for (i, wheel) in controller.wheels_mut().iter_mut().enumerate() {
            wheel.engine_force = if i >= 2 { force } else { 0.0 };
            // The front wheels (−Z is forward) steer.
            wheel.steering = if i < 2 { steering } else { 0.0 };
        }
        let filter = bevy_rapier3d::prelude::QueryFilter::default().exclude_rigid_body(entity);
        RapierQueryPipelineMut::new_scoped(
            &simulation.broad_phase,
            &mut colliders,
            &mut rigidbody_set,
            &filter,
            &DefaultQueryDispatcher,
            |pipeline| controller.update_vehicle(dt, pipeline.query_pipeline),
        );
    }
    Ok(())
}

fn spawn_raycast_car(world: &mut World, at: Vec3) {
    world.spawn((
        RigidBody::Dynamic,
        // The same body as `CarBuilder`'s: origin at wheel-centre height, box above it.
        Collider::compound(vec![(
            Vec3::new(0.0, 0.45, 0.0),
            Quat::IDENTITY,
            Collider::cuboid(0.85, 0.3, 2.1),
        )]),
        ColliderMassProperties::MassProperties(MassProperties {
            local_center_of_mass: Vec3::new(0.0, 0.184, 0.0),
            mass: 1300.0,
            principal_inertia: Vec3::new(1800.0, 2000.0, 550.0),
            ..default()
        }),
        Velocity::default(),
        Sleeping::disabled(),
        Transform::from_translation(at + Vec3::new(0.0, 0.4, 0.0)),
        RaycastCar::default(),
    ));
}

/// µs per vehicle-step of one whole fixed step (median of the timed blocks).
fn bench_full(model: Model, ground: Ground, vehicles: usize) -> FullFigures {
    let mut app = App::new();
    app.add_plugins(minimal_plugins())
        .insert_resource(parallel_step())
        .init_resource::<StepCount>();
    match model {
        Model::Ours(_) => {
            app.add_plugins(VehiclePhysicsPlugins)
                .add_systems(FixedUpdate, drive_ours.before(VehicleSystems::Controls));
        }
        Model::RapierRaycast => {
            app.add_plugins(RapierSetupPlugin).add_systems(
                FixedUpdate,
                drive_rapier
                    .after(bevy_rapier3d::plugin::PhysicsSet::SyncBackend)
                    .before(bevy_rapier3d::plugin::PhysicsSet::StepSimulation),
            );
        }
    }
    app.finish();
    app.cleanup();
    // Startup creates Rapier's default context.
    app.update();
    let mut clock = Time::<()>::default();
    fixed_step(&mut app, &mut clock);
    let world = app.world_mut();
    spawn_ground(world, ground);
    let car = match model {
        Model::Ours(car) => car,
        Model::RapierRaycast => CarSettings::measured(GroundProbe::Ray),
    };
    let wheel = WheelSpec::default();
    let builder = CarBuilder {
        wheel: WheelSpec {
            probe: car.probe,
            tire: std::sync::Arc::new(Tire {
                model: car.tire,
                ..(*wheel.tire).clone()
            }),
            ..wheel
        },
        substeps: car.substeps,
        // The car measured since run A, and the one Rapier's controller drives: no traction
        // control (the default car has one since 2026-11-28).
        brakes: Brakes::default(),
        ..default()
    };
    for at in grid(vehicles) {
        match model {
            Model::Ours(_) => {
                let mut commands = world.commands();
                builder.spawn(
                    &mut commands,
                    Transform::from_translation(at + Vec3::Y * 0.4),
                );
                world.flush();
            }
            Model::RapierRaycast => spawn_raycast_car(world, at),
        }
    }
    // Substeps no longer than the fixed step's share: fewer than four at 60 Hz need a longer
    // limit than the default 1/240 s, which would split the step into four again.
    if car.substeps != 4 {
        let mut drivetrains = world.query::<&mut Drivetrain>();
        for mut drivetrain in drivetrains.iter_mut(world) {
            drivetrain.max_substep = 1.0 / (HZ * f64::from(car.substeps.max(1)));
        }
    }
    // Land, compile, pull away: 2.5 s, so that every count of cars is timed cruising. (Until
    // 2026-12-07, 1.5 s: a car's automatic clutch still slipped for about 0.4 s after it,
    // which the 100 timed steps at 1000 cars took in and the 1000 at 100 cars barely did.)
    for _ in 0..150 {
        fixed_step(&mut app, &mut clock);
    }
    // At most 5 s of driving per block: the Rapier cars have no drag and would keep speeding up.
    let steps = (20_000 / vehicles).clamp(4, 300);
    let times = time_blocks(&mut app, &mut clock, 5, steps, vehicles);

    // Sanity: every chassis is finite, on the ground and moving.
    let world = app.world_mut();
    let mut bodies = world.query::<(&Transform, &Velocity)>();
    let (mut moving, mut total) = (0, 0);
    for (t, v) in bodies.iter(world) {
        assert!(t.translation.is_finite() && v.linear.is_finite());
        assert!(
            t.translation.y > -0.5 && t.translation.y < 2.0,
            "{model:?} car at {t:?}"
        );
        total += 1;
        if v.linear.length() > 0.3 {
            moving += 1;
        } else {
            eprintln!("{model:?}: stopped car at {t:?} {v:?}");
        }
    }
    assert!(
        total == vehicles && moving == vehicles,
        "{model:?}: {moving}/{total} cars moving"
    );
    // How our cars' drivetrains were stepped at the last step: in batches of four, and of
    // those batches' evaluations (four RK4 stages in each substep, one at the step's end: 17
    // with four substeps), how many in lanes.
    let mut drivetrains = world.query::<&Drivetrain>();
    let batched: Vec<u32> = drivetrains
        .iter(world)
        .filter_map(|d| d.batched())
        .collect();
    let batched_share = batched.len() as f64 / vehicles as f64;
    // The substeps each car's drivetrain takes at this rate (its own setting, or more where
    // its limits ask for them); the evaluations a step are four a substep and one at its end.
    let substeps = drivetrains
        .iter(world)
        .map(|d| f64::from(d.substeps_for(1.0 / HZ)))
        .sum::<f64>()
        / vehicles as f64;
    let lane_share = if batched.is_empty() {
        0.0
    } else {
        batched.iter().map(|&n| f64::from(n)).sum::<f64>()
            / ((4.0 * substeps + 1.0) * batched.len() as f64)
    };
    FullFigures {
        us_per_vehicle_step: times[times.len() / 2],
        batched_share,
        lane_share,
        substeps,
    }
}

/// What [`bench_full`] measures.
struct FullFigures {
    /// Median over the timed blocks (µs per vehicle-step).
    us_per_vehicle_step: f64,
    /// Share of the last step's vehicles stepped in batches of four (`Drivetrain::batched`).
    batched_share: f64,
    /// Share of those batches' evaluations that ran in lanes.
    lane_share: f64,
    /// Mean RK4 substeps per fixed step of our cars' drivetrains (`Drivetrain::substeps_for`;
    /// 0 for Rapier's cars, which have none).
    substeps: f64,
}

/// The vehicle counts to run: `BENCH_VEHICLES` (one count, or several separated by commas,
/// for profiling or a scan), else `default`.
fn vehicle_counts(default: &[usize]) -> Vec<usize> {
    match std::env::var("BENCH_VEHICLES") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .expect("BENCH_VEHICLES is a list of numbers")
            })
            .collect(),
        Err(_) => default.to_vec(),
    }
}

fn run_full_benchmarks() {
    println!(
        "== full vehicle: probes + suspension + drivetrain (4 substeps) + tires + Rapier step, {} ==",
        threads()
    );
    let sizes = vehicle_counts(&[1, 100, 1000, 4000]);
    println!(
        "{:>12} {:>9} {:>9} {:>12} {:>12} {:>11} {:>12} {:>12} {:>8} {:>8}",
        "ground",
        "vehicles",
        "probe",
        "ours µs/veh",
        "Rapier µs",
        "ours/Rapier",
        "vs 5 µs",
        "vs 100 cars",
        "batched",
        "in lanes"
    );
    // BENCH_GROUND=box|heightfield and BENCH_PROBE=cylinder|ray run one case only (profiling).
    let only =
        |var: &str, name: &str| std::env::var(var).map_or(true, |v| v.eq_ignore_ascii_case(name));
    for ground in [Ground::Box, Ground::Heightfield] {
        if !only("BENCH_GROUND", &format!("{ground:?}")) {
            continue;
        }
        let sizes: Vec<usize> = match ground {
            Ground::Box => sizes.clone(),
            Ground::Heightfield => sizes.iter().copied().filter(|&n| n == 1000).collect(),
        };
        let mut at_100 = None;
        for &n in &sizes {
            let rapier = if std::env::var_os("BENCH_ONLY_OURS").is_some() {
                f64::NAN
            } else {
                bench_full(Model::RapierRaycast, ground, n).us_per_vehicle_step
            };
            for probe in [GroundProbe::Cylinder, GroundProbe::Ray] {
                if (probe == GroundProbe::Ray && n != 1000)
                    || !only("BENCH_PROBE", &format!("{probe:?}"))
                {
                    continue;
                }
                let figures = bench_full(Model::Ours(CarSettings::measured(probe)), ground, n);
                let ours = figures.us_per_vehicle_step;
                if n == 100 && probe == GroundProbe::Cylinder {
                    at_100 = Some(ours);
                }
                println!(
                    "{:>12} {:>9} {:>9} {:>12.2} {:>12.2} {:>11.2} {:>12.2} {:>12} {:>7.0}% {:>7.0}%",
                    format!("{ground:?}"),
                    n,
                    format!("{probe:?}"),
                    ours,
                    rapier,
                    ours / rapier,
                    ours / FULL_TARGET_US,
                    at_100.map_or("-".into(), |a| format!("{:.2}", ours / a)),
                    100.0 * figures.batched_share,
                    100.0 * figures.lane_share,
                );
            }
        }
    }
    println!(
        "(median of 5 timed blocks; targets at 1000 cars: ours/Rapier ≤ {RAPIER_TARGET_RATIO}, ours ≤ {FULL_TARGET_US} µs; batched: our cars stepped four at a time at the last step, in lanes: their batches' evaluations in lanes)"
    );
}

/// What a car costs by its settings: our car at 1000 cars on the box ground with each of the
/// settings a game may lower for its background traffic changed on its own, then all of them
/// together, against Rapier's raycast controller in the same run.
fn run_settings_benchmarks() {
    // BENCH_VEHICLES sets another count (profiling); the first is taken.
    let cars = vehicle_counts(&[1000])[0];
    println!(
        "== what a car costs by its settings: {cars} cars, box ground, {} ==",
        threads()
    );
    let measured = CarSettings::measured(GroundProbe::Cylinder);
    let light = CarSettings {
        probe: GroundProbe::Ray,
        tire: TireModel::LinearTire(LinearTire::default()),
        substeps: 1,
    };
    let variants = [
        (
            "as measured above: Magic Formula, cylinders, 4 substeps",
            measured,
        ),
        (
            "ray probes",
            CarSettings {
                probe: GroundProbe::Ray,
                ..measured
            },
        ),
        (
            "brush tires",
            CarSettings {
                tire: TireModel::BrushTire(BrushTire::default()),
                ..measured
            },
        ),
        (
            "linear tires",
            CarSettings {
                tire: TireModel::LinearTire(LinearTire::default()),
                ..measured
            },
        ),
        (
            "2 substeps",
            CarSettings {
                substeps: 2,
                ..measured
            },
        ),
        (
            "1 substep",
            CarSettings {
                substeps: 1,
                ..measured
            },
        ),
        ("rays, linear tires, 1 substep", light),
    ];
    // BENCH_VARIANT=n runs the n-th car of the table alone, and not Rapier's (profiling).
    let only: Option<usize> = std::env::var("BENCH_VARIANT")
        .ok()
        .map(|n| n.parse().expect("BENCH_VARIANT is a row number, from 1"));
    let rapier = if only.is_some() {
        f64::NAN
    } else {
        bench_full(Model::RapierRaycast, Ground::Box, cars).us_per_vehicle_step
    };
    println!(
        "{:>56} {:>9} {:>9} {:>12} {:>11} {:>9} {:>9}",
        "our car", "µs/veh", "substeps", "vs measured", "vs Rapier", "vs 5 µs", "in lanes"
    );
    let mut first = None;
    for (row, (name, car)) in variants.into_iter().enumerate() {
        if only.is_some_and(|n| n != row + 1) {
            continue;
        }
        let figures = bench_full(Model::Ours(car), Ground::Box, cars);
        let ours = figures.us_per_vehicle_step;
        let base = *first.get_or_insert(ours);
        println!(
            "{name:>56} {ours:>9.2} {:>9.2} {:>12.2} {:>11.2} {:>9.2} {:>8.0}%",
            figures.substeps,
            ours / base,
            ours / rapier,
            ours / FULL_TARGET_US,
            100.0 * figures.lane_share,
        );
    }
    println!(
        "(median of 5 timed blocks; Rapier's raycast controller: {rapier:.2} µs per car in this run)"
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));

    if wants("drivetrain") {
        println!(
            "== drivetrain alone: engine → clutch → gearbox → LSD → 2 wheels, 4 RK4 substeps, {} ==",
            threads()
        );
        // 1000 and 3000 vehicles bracket the step in cost where the vehicles' data leaves
        // the processor's cache, 40 000 shows the cost past it holding.
        let sizes = vehicle_counts(&[1, 100, 1000, 3000, 10_000, 40_000]);
        let figures: Vec<_> = sizes.into_iter().map(bench_drivetrain).collect();
        let at_100 = figures
            .iter()
            .find(|f| f.vehicles == 100)
            .map_or(figures[0].us_per_vehicle_step, |f| f.us_per_vehicle_step);
        println!(
            "{:>9} {:>17} {:>9} {:>15} {:>12} {:>10} {:>8}",
            "vehicles",
            "µs/vehicle-step",
            "(best)",
            "vs 2 µs target",
            "vs 100 cars",
            "bytes/car",
            "batched"
        );
        for f in &figures {
            println!(
                "{:>9} {:>17.3} {:>9.3} {:>15.2} {:>12.2} {:>10.0} {:>7.0}%",
                f.vehicles,
                f.us_per_vehicle_step,
                f.best_us,
                f.us_per_vehicle_step / TARGET_US,
                f.us_per_vehicle_step / at_100,
                f.bytes_per_vehicle,
                100.0 * f.batched_share
            );
        }
        println!(
            "(median of {BLOCKS} timed blocks; bytes/car: heap growth per car, ECS storage \
             included; batched: vehicles stepped four at a time, Drivetrain::batched)"
        );
        if figures.iter().any(|f| f.sets.is_some()) {
            println!("µs per vehicle-step in each part of the step (mean of the timed blocks):");
            println!(
                "{:>9} {}",
                "vehicles",
                SETS.map(|s| format!("{s:>20}")).join(" ")
            );
            for f in &figures {
                if let Some(sets) = f.sets {
                    let cells = sets.map(|t| format!("{t:>20.3}"));
                    println!("{:>9} {}", f.vehicles, cells.join(" "));
                }
            }
        }
    }
    if wants("full") {
        run_full_benchmarks();
    }
    if wants("settings") {
        run_settings_benchmarks();
    }
}
