//! Vehicle physics benchmarks. Run with `cargo bench --bench vehicle_bench`.
//!
//! **Drivetrain alone**: the cost of one fixed step of the drivetrain systems (rebuild check,
//! input sync, four RK4 substeps, sensor sync) for engine → clutch → gearbox → differential →
//! 2 wheels, with a scripted driver changing the throttle of every vehicle every step, at 1,
//! 100 and 10 000 vehicles, single-threaded. Reported in µs per vehicle-step, with ratios
//! against the 2 µs target and against the 100-vehicle figure (cost per vehicle must stay
//! flat), and the bytes one vehicle's drivetrain occupies (all heap, ECS storage included,
//! measured by a counting allocator).

// The counting allocator needs `unsafe impl GlobalAlloc`; it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy_vehicle_physics::prelude::*;

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

struct DrivetrainFigures {
    vehicles: usize,
    /// Median over the timed blocks.
    us_per_vehicle_step: f64,
    /// Fastest timed block.
    best_us: f64,
    bytes_per_vehicle: f64,
}

/// Timed blocks per figure; the median is reported.
const BLOCKS: usize = 7;

fn bench_drivetrain(vehicles: usize) -> DrivetrainFigures {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins))
        .init_resource::<StepCount>()
        .add_systems(FixedUpdate, driver.before(DrivetrainSystems::SyncIn));
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
    let mut blocks: Vec<f64> = (0..BLOCKS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..steps {
                fixed_step(&mut app, &mut clock);
            }
            start.elapsed().as_secs_f64() * 1e6 / (steps as f64 * vehicles as f64)
        })
        .collect();
    blocks.sort_by(f64::total_cmp);

    // Sanity: every car is compiled and moving.
    let world = app.world_mut();
    let mut q = world.query::<&Drivetrain>();
    assert!(
        q.iter(world)
            .all(|d| *d.status() == DrivetrainStatus::Ready)
    );
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
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));

    if wants("drivetrain") {
        println!(
            "== drivetrain alone: engine → clutch → gearbox → LSD → 2 wheels, 4 RK4 substeps, one thread =="
        );
        // BENCH_VEHICLES=n runs one size only (for profiling).
        let sizes: Vec<usize> = match std::env::var("BENCH_VEHICLES") {
            Ok(n) => vec![n.parse().expect("BENCH_VEHICLES is a number")],
            Err(_) => vec![1, 100, 10_000],
        };
        let figures: Vec<_> = sizes.into_iter().map(bench_drivetrain).collect();
        let at_100 = figures
            .iter()
            .find(|f| f.vehicles == 100)
            .map_or(figures[0].us_per_vehicle_step, |f| f.us_per_vehicle_step);
        println!(
            "{:>9} {:>17} {:>9} {:>15} {:>12} {:>10}",
            "vehicles", "µs/vehicle-step", "(best)", "vs 2 µs target", "vs 100 cars", "bytes/car"
        );
        for f in &figures {
            println!(
                "{:>9} {:>17.3} {:>9.3} {:>15.2} {:>12.2} {:>10.0}",
                f.vehicles,
                f.us_per_vehicle_step,
                f.best_us,
                f.us_per_vehicle_step / TARGET_US,
                f.us_per_vehicle_step / at_100,
                f.bytes_per_vehicle
            );
        }
        println!(
            "(median of {BLOCKS} timed blocks; bytes/car: heap growth per car, ECS storage included)"
        );
    }
}
