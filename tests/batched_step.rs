//! The batched step (see `Drivetrain::batched`): four drivetrain-only vehicles of one shape in
//! a row are stepped together, their RK4 stages in lanes while every block is in a mode the
//! lanes cover, and each ends bit for bit where it ends stepped alone, through a gear change,
//! a clutch let in from slipping, a limited-slip differential that slips and braking to a
//! stop, which take the batch out of the lanes and back; a parallel step batches each
//! task's share alike; and the chassis's cars, with their tires and modules, batch alike.

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::Velocity;
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
/// each with its own events (see [`drive`]). With `slipping`, its differential's lock torque
/// is low and its left wheel light, so that the differential slips on its lock all along.
fn spawn_chain(app: &mut App, i: usize, slipping: bool) -> Chain {
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
            lock_torque: if slipping {
                5.0 + 2.0 * x
            } else {
                40.0 + 20.0 * x
            },
            ..default()
        },
        Some((gearbox, Port::OUT)),
    );
    let wheels = [Port::LEFT, Port::RIGHT].map(|port| {
        // With `slipping`, the left wheel carries a third of the right's load.
        let share = if slipping && port == Port::LEFT {
            1.0 / 3.0
        } else {
            1.0
        };
        spawn_block(
            app,
            vehicle,
            "wheel",
            Wheel {
                load: car_load(share * (600.0 + 25.0 * x)),
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

/// What the test cars' drivers do (see [`drive`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Script {
    /// Each its own throttle, nothing else.
    Throttle,
    /// Each its own throttle and events.
    Events,
    /// Each its own throttle, every clutch let out to slip from 0.5 to 0.75 s, then every car
    /// brakes to a stop in gear from 1 s, its clutch in: the wheels and engines stop and are
    /// held.
    StopInGear,
    /// Each its own throttle, and every car's left wheel braked to a hold from 1 s while the
    /// right one drives on (on a slipping differential).
    HoldLeftWheel,
}

/// The driver of car `i` at step `step`: a throttle of its own; with [`Script::Events`],
/// car 3 lets its clutch in from out over 0.5 s, car 1's left wheel carries a fifth of its
/// load from 0.5 to 1 s (its differential slips), car 2 changes gear at 1 s, car 0 brakes to
/// a stop from 2 s; with [`Script::StopInGear`], every car lets its clutch out to a
/// twentieth from 0.5 to 0.75 s and brakes to a stop from 1 s; with
/// [`Script::HoldLeftWheel`], every car brakes its left wheel from 1 s.
fn drive(app: &mut App, i: usize, chain: &Chain, step: usize, script: Script) {
    let t = step as f64 / HZ;
    let events = script == Script::Events;
    let braking = match script {
        Script::Throttle => false,
        Script::Events => i == 0 && t >= 2.0,
        Script::StopInGear => t >= 1.0,
        Script::HoldLeftWheel => false,
    };
    if script == Script::HoldLeftWheel && t >= 1.0 {
        set::<Wheel>(app, chain.wheels[0], |w| w.brake_torque = 3000.0);
    }
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
    if script == Script::StopInGear {
        let engagement = if (0.5..0.75).contains(&t) { 0.05 } else { 1.0 };
        set::<Clutch>(app, chain.clutch, |c| c.engagement = engagement);
    }
    if braking {
        for &w in &chain.wheels {
            set::<Wheel>(app, w, |w| w.brake_torque = 3000.0);
        }
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
    let script = if events {
        Script::Events
    } else {
        Script::Throttle
    };
    run_chains(cars, script, tasks, false)
}

/// [`run_in_tasks`] with the drivers' `script`, the cars' differentials slipping all along
/// with `slipping` (see [`spawn_chain`]).
fn run_chains(
    cars: &[usize],
    script: Script,
    tasks: usize,
    slipping: bool,
) -> (Vec<Vec<u64>>, Stats) {
    let mut app = create_app(HZ);
    app.insert_resource(ParallelStep {
        tasks: Some(tasks),
        min_vehicles_per_task: 1,
    });
    let chains: Vec<_> = cars
        .iter()
        .map(|&i| spawn_chain(&mut app, i, slipping))
        .collect();
    roll_off(&mut app, &chains);
    let mut total = Stats::default();
    for step in 0..STEPS {
        for (&i, chain) in cars.iter().zip(&chains) {
            drive(&mut app, i, chain, step, script);
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

/// Differentials that slip on their lock torque step in lanes too: four cars whose
/// differentials slip all along spend most of their stages in lanes, each bit for bit as
/// alone.
#[test]
fn slipping_differentials_step_in_lanes_bit_for_bit() {
    let evaluations = 17 * STEPS as u32;
    let (batched, stats) = run_chains(&[0, 1, 2, 3], Script::Throttle, 1, true);
    assert!(
        stats.lane_evaluations > evaluations / 2,
        "{} of {evaluations} evaluations in lanes",
        stats.lane_evaluations
    );
    for (i, bits) in batched.iter().enumerate() {
        let (alone, _) = run_chains(&[i], Script::Throttle, 1, true);
        assert_eq!(*bits, alone[0], "car {i} batched and alone");
    }
}

/// Blocks change their modes in lanes too (the first round of the mode settling runs on the
/// lanes' shaft messages): four cars whose clutches are let out to slip, then braked to a
/// stop in gear, their clutches in (the engines stall, everything stops), and four whose left
/// wheels are braked to a hold while their slipping differentials drive the right ones, each
/// end bit for bit as alone.
#[test]
fn modes_change_in_lanes_bit_for_bit() {
    let evaluations = 17 * STEPS as u32;
    for (script, slipping) in [(Script::StopInGear, false), (Script::HoldLeftWheel, true)] {
        let (batched, stats) = run_chains(&[0, 1, 2, 3], script, 1, slipping);
        assert!(
            stats.lane_evaluations > evaluations / 4,
            "{script:?}: {} of {evaluations} evaluations in lanes",
            stats.lane_evaluations
        );
        for (i, bits) in batched.iter().enumerate() {
            let (alone, _) = run_chains(&[i], script, 1, slipping);
            assert_eq!(*bits, alone[0], "{script:?}: car {i} batched and alone");
        }
    }
}

/// The events the test puts the batch through do happen: without them the lanes would never
/// be left.
#[test]
fn the_batch_test_cars_slip_shift_and_stop() {
    let mut app = create_app(HZ);
    let chains: Vec<_> = (0..4).map(|i| spawn_chain(&mut app, i, false)).collect();
    roll_off(&mut app, &chains);
    let mut slipped = [false; 4];
    for step in 0..STEPS {
        for (i, chain) in chains.iter().enumerate() {
            drive(&mut app, i, chain, step, Script::Events);
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

/// Car `i`'s driver at time `t` (s): first gear, its own throttle and steering, car 3
/// shifting to second at 2.5 s, car 2 steering hard at full throttle from 3 to 3.3 s (the
/// traction control's cut, finer substeps for some steps: out of the batch), car 1 braking
/// from 3.5 s (its wheels held, out of the lanes).
fn drive_car(app: &mut App, i: usize, car: Entity, t: f64) {
    let x = i as f64;
    controls(app, car, |c| {
        c.gear = 1 + i32::from(t >= 2.5 && i == 3);
        let floored = i == 2 && (3.0..3.3).contains(&t);
        c.throttle = if floored { 1.0 } else { 0.3 + 0.1 * x };
        c.steering = (0.8 * t + x).sin() * if floored { 1.0 } else { 0.3 };
        c.brake = if i == 1 && t >= 3.5 { 0.6 } else { 0.0 };
    });
}

/// Runs default cars `cars` (each 15 m from the last) on flat ground for 4 s at 60 Hz,
/// each under [`drive_car`]; returns each car's pose, velocity and wheel spins as raw bits,
/// and how the cars were stepped.
fn run_cars(cars: &[usize]) -> (Vec<Vec<u64>>, Stats) {
    let mut app = create_app(HZ);
    spawn_flat_ground(&mut app, 0.9);
    let spawned: Vec<Entity> = cars
        .iter()
        .map(|&i| {
            // Car 0's differential limits its slip (locked while it carries the torque
            // between its wheels, slipping on it past that); the others' are open.
            let mut builder = CarBuilder::default();
            if i == 0 {
                builder.differential.lock_torque = 60.0;
            }
            let at = Vec3::new(15.0 * i as f32, car_rest_height(&builder), 0.0);
            spawn_car(&mut app, &builder, Transform::from_translation(at))
        })
        .collect();
    let mut total = Stats::default();
    for step in 0..STEPS {
        for (&i, &car) in cars.iter().zip(&spawned) {
            drive_car(&mut app, i, car, step as f64 / HZ);
        }
        tick(&mut app, 1);
        for (k, &car) in spawned.iter().enumerate() {
            match drivetrain(&app, car).batched() {
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
    let bits = spawned
        .iter()
        .map(|&car| {
            let t = get::<Transform>(&app, car);
            let v = get::<Velocity>(&app, car);
            let mut bits: Vec<u64> = [t.translation, v.linear, v.angular]
                .into_iter()
                .flat_map(|v| v.to_array())
                .chain(t.rotation.to_array())
                .map(|x| u64::from(x.to_bits()))
                .collect();
            for w in wheels(&mut app, car) {
                bits.push(get::<WheelSensors>(&app, w).speed.to_bits());
            }
            bits
        })
        .collect();
    (bits, total)
}

/// A chassis's cars are batched too, with each car's tires and its brake, steering and
/// traction control at each stage: five default cars, the first four stepped in a batch, end
/// each bit for bit where it ends driven alone, through braking to a stop and the traction
/// control's cut.
#[test]
fn a_chassis_car_steps_bit_for_bit_in_a_batch_as_alone() {
    let (batched, stats) = run_cars(&[0, 1, 2, 3, 4]);
    eprintln!("{stats:?}");
    assert!(stats.batched >= 4 * 100, "{stats:?}");
    assert!(stats.lane_evaluations > 0, "{stats:?}");
    for (i, bits) in batched.iter().enumerate() {
        let (alone, alone_stats) = run_cars(&[i]);
        assert_eq!(alone_stats.batched, 0);
        assert_eq!(*bits, alone[0], "car {i} batched and alone");
    }
}
