//! The batched step (see `Drivetrain::batched`): four drivetrain-only vehicles of one shape in
//! a row are stepped together, their RK4 stages in lanes while every block is in a mode the
//! lanes cover, and each ends bit for bit where it ends stepped alone, through a gear change,
//! a clutch let in from slipping, a limited-slip differential that slips and braking to a
//! stop, which take the batch out of the lanes and back; and a parallel step batches each
//! task's share alike.

mod common;

use bevy::prelude::*;
use bevy_vehicle_physics::prelude::*;
use common::*;

/// The fixed rate of the runs (Hz) and their length (steps): 4 s.
const HZ: f64 = 60.0;
const STEPS: usize = 240;

/// The blocks of one test car.
struct Chain {
    vehicle: Entity,
    engine: Entity,
    clutch: Entity,
    gearbox: Entity,
    wheels: [Entity; 2],
}

/// Car `i` of five: engine → clutch → gearbox → limited-slip differential → two wheels on a
/// car's load, each set differently (engine inertia, gear, lock torque, the wheels' loads), and
/// each with its own events (see [`drive`]).
fn spawn_chain(app: &mut App, i: usize) -> Chain {
    let x = i as f64;
    let vehicle = spawn_vehicle(app, &format!("car {i}"), 4);
    let engine = spawn_block(
        app,
        vehicle,
        "engine",
        Engine {
            inertia: 0.15 + 0.02 * x,
            ..default()
        },
        None,
    );
    let clutch = spawn_block(
        app,
        vehicle,
        "clutch",
        Clutch {
            engagement: if i == 3 { 0.0 } else { 1.0 },
            ..default()
        },
        Some((engine, Port::OUT)),
    );
    let gearbox = spawn_block(
        app,
        vehicle,
        "gearbox",
        Gearbox {
            gear: 1 + (i % 2) as i32,
            ..default()
        },
        Some((clutch, Port::OUT)),
    );
    let diff = spawn_block(
        app,
        vehicle,
        "differential",
        Differential {
            lock_torque: 40.0 + 20.0 * x,
            ..default()
        },
        Some((gearbox, Port::OUT)),
    );
    let wheels = [Port::LEFT, Port::RIGHT].map(|port| {
        spawn_block(
            app,
            vehicle,
            "wheel",
            Wheel {
                load: car_load(600.0 + 25.0 * x),
                ..default()
            },
            Some((diff, port)),
        )
    });
    Chain {
        vehicle,
        engine,
        clutch,
        gearbox,
        wheels,
    }
}

/// A wheel's share of a car of `mass` (kg).
fn car_load(mass: f64) -> WheelLoad {
    WheelLoad::Vehicle {
        mass,
        rolling_resistance: 0.012,
        drag_area: 0.33,
        air_density: 1.2,
    }
}

/// The driver of car `i` at step `step`: a throttle of its own, and car 3 lets its clutch in
/// from out over 0.5 s, car 1's left wheel carries a fifth of its load from 0.5 to 1 s (its
/// differential slips), car 2 changes gear at 1 s, car 0 brakes to a stop from 2 s; with
/// `events` only (else the throttle alone).
fn drive(app: &mut App, i: usize, chain: &Chain, step: usize, events: bool) {
    let t = step as f64 / HZ;
    let braking = events && i == 0 && t >= 2.0;
    set::<Engine>(app, chain.engine, |e| {
        e.throttle = if braking {
            0.0
        } else {
            0.6 + 0.4 * (3.0 * t + i as f64).sin()
        };
    });
    if i == 3 {
        let engagement = if events { (t / 0.5).min(1.0) } else { 1.0 };
        set::<Clutch>(app, chain.clutch, |c| c.engagement = engagement);
    }
    if !events {
        return;
    }
    if i == 2 && step == 60 {
        set::<Gearbox>(app, chain.gearbox, |g| g.gear = 3);
    }
    if i == 1 && (step == 30 || step == 60) {
        // Car 1's left wheel carries a fifth of its load for half a second.
        let mass = if step == 30 { 125.0 } else { 625.0 };
        set::<Wheel>(app, chain.wheels[0], |w| w.load = car_load(mass));
    }
    if braking {
        for &w in &chain.wheels {
            set::<Wheel>(app, w, |w| w.brake_torque = 3000.0);
        }
    }
}

/// Compiles the cars' drivetrains and sets them rolling with their engines at 2000 rpm (a
/// car started from rest in gear would stall), as the benchmark does.
fn roll_off(app: &mut App, chains: &[Chain]) {
    tick(app, 1);
    for chain in chains {
        let ratio = get::<GearboxSensors>(app, chain.gearbox).ratio;
        let diff = block_entity::<Differential>(app, chain.vehicle);
        let final_drive = get::<Differential>(app, diff).ratio;
        let engine_speed = rpm_to_rad_s(2000.0);
        set_state(app, chain.vehicle, chain.engine, &[engine_speed]);
        for &w in &chain.wheels {
            set_state(
                app,
                chain.vehicle,
                w,
                &[0.0, engine_speed / (ratio * final_drive)],
            );
        }
    }
}

/// Every number car `chain` ends with: its states and its blocks' sensors, as raw bits.
fn bits(app: &mut App, chain: &Chain) -> Vec<u64> {
    let d = drivetrain(app, chain.vehicle);
    let mut bits: Vec<u64> = d
        .blocks_in_order()
        .into_iter()
        .flat_map(|b| d.state(b).unwrap_or(&[]).to_vec())
        .map(f64::to_bits)
        .collect();
    let engine = get::<EngineSensors>(app, chain.engine);
    let clutch = get::<ClutchSensors>(app, chain.clutch);
    bits.extend([engine.torque, engine.rpm, clutch.torque, clutch.slip_speed].map(f64::to_bits));
    for &w in &chain.wheels {
        let s = get::<WheelSensors>(app, w);
        bits.extend([s.speed, s.drive_torque, s.load_torque].map(f64::to_bits));
    }
    bits
}

/// How a run stepped its cars, summed over its steps.
#[derive(Debug, Default)]
struct Stats {
    /// Cars stepped in batches.
    batched: u32,
    /// Cars stepped alone.
    alone: u32,
    /// Evaluations that ran in lanes, counted once per batch (by its first car).
    lane_evaluations: u32,
}

/// Runs cars `cars` in one app, in that order, with or without their `events`, on one
/// thread; returns each car's bits, and how they were stepped.
fn run(cars: &[usize], events: bool) -> (Vec<Vec<u64>>, Stats) {
    run_in_tasks(cars, events, 1)
}

/// [`run`] with the drivetrains' step split into `tasks` tasks ([`ParallelStep`]).
fn run_in_tasks(cars: &[usize], events: bool, tasks: usize) -> (Vec<Vec<u64>>, Stats) {
    let mut app = create_app(HZ);
    app.insert_resource(ParallelStep {
        tasks: Some(tasks),
        min_vehicles_per_task: 1,
    });
    let chains: Vec<_> = cars.iter().map(|&i| spawn_chain(&mut app, i)).collect();
    roll_off(&mut app, &chains);
    let mut total = Stats::default();
    for step in 0..STEPS {
        for (&i, chain) in cars.iter().zip(&chains) {
            drive(&mut app, i, chain, step, events);
        }
        tick(&mut app, 1);
        for (k, chain) in chains.iter().enumerate() {
            match drivetrain(&app, chain.vehicle).batched() {
                Some(in_lanes) => {
                    total.batched += 1;
                    if k % 4 == 0 {
                        total.lane_evaluations += in_lanes;
                    }
                }
                None => total.alone += 1,
            }
        }
    }
    for chain in &chains {
        assert_eq!(
            *drivetrain(&app, chain.vehicle).status(),
            DrivetrainStatus::Ready
        );
    }
    let bits = chains.iter().map(|c| bits(&mut app, c)).collect();
    (bits, total)
}

#[test]
fn a_batched_vehicle_steps_bit_for_bit_as_it_steps_alone() {
    // 4 substeps of 4 stages and the step's end: 17 evaluations a step.
    let steps = STEPS as u32;
    let evaluations = 17 * steps;
    for events in [false, true] {
        let (batched, stats) = run(&[0, 1, 2, 3, 4], events);
        // The first four in a batch, the fifth alone, at every step.
        assert_eq!(stats.batched, 4 * steps, "{stats:?}");
        assert_eq!(stats.alone, steps, "{stats:?}");
        if events {
            // The slipping clutch and differential, the gear change and the held wheels take
            // some stages out of the lanes.
            assert!(
                stats.lane_evaluations > 0 && stats.lane_evaluations < evaluations,
                "{} of {evaluations} evaluations in lanes",
                stats.lane_evaluations
            );
        } else {
            // All but the first stage after the roll-off, whose set speeds the clutch takes
            // up slipping before it locks.
            assert_eq!(stats.lane_evaluations, evaluations - 1);
        }
        for (i, bits) in batched.iter().enumerate() {
            let (alone, alone_stats) = run(&[i], events);
            assert_eq!(alone_stats.lane_evaluations, 0);
            assert_eq!(
                *bits, alone[0],
                "car {i} batched and alone, events {events}"
            );
        }
    }
}

/// A parallel step batches each task's run of vehicles as the one-thread step batches them
/// all: eight cars in two tasks are two batches, each car bit for bit where it ends on one
/// thread.
#[test]
fn each_task_of_a_parallel_step_batches_its_own_vehicles() {
    let cars: Vec<usize> = (0..8).collect();
    for events in [false, true] {
        let (one, _) = run(&cars, events);
        let (split, stats) = run_in_tasks(&cars, events, 2);
        assert_eq!(stats.batched, 8 * STEPS as u32, "{stats:?}");
        assert!(stats.lane_evaluations > 0, "{stats:?}");
        assert_eq!(one, split, "events {events}");
    }
}

/// The events the test puts the batch through do happen: without them the lanes would never
/// be left.
#[test]
fn the_batch_test_cars_slip_shift_and_stop() {
    let mut app = create_app(HZ);
    let chains: Vec<_> = (0..4).map(|i| spawn_chain(&mut app, i)).collect();
    roll_off(&mut app, &chains);
    let mut slipped = [false; 4];
    for step in 0..STEPS {
        for (i, chain) in chains.iter().enumerate() {
            drive(&mut app, i, chain, step, true);
        }
        tick(&mut app, 1);
        let diff = block_entity::<Differential>(&mut app, chains[1].vehicle);
        slipped[1] |= !get::<DifferentialSensors>(&app, diff).locked;
        slipped[3] |= !get::<ClutchSensors>(&app, chains[3].clutch).locked;
    }
    assert!(slipped[1], "car 1's differential never slipped");
    assert!(slipped[3], "car 3's clutch never slipped");
    assert_eq!(get::<GearboxSensors>(&app, chains[2].gearbox).gear, 3);
    assert!(
        get::<WheelSensors>(&app, chains[0].wheels[0]).held,
        "car 0's wheels are not held"
    );
}
