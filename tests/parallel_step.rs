//! Stepping vehicles in tasks on Bevy's compute task pool (`ParallelStep`: the drivetrains'
//! step, the ground probes, the modules' per-step start, the chassis's step and the telemetry)
//! changes no result: a mixed fleet driven for 2 s ends bit for bit where it ends stepped one
//! vehicle after another on one thread, and so do drivetrains whose wheel moves to another
//! vehicle mid-run (a task writes only the blocks whose `BlockSlot` names its vehicle).

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::Velocity;
use bevy_vehicle_physics::prelude::*;
use common::*;

/// Every number a run ends with: each car's pose, velocity and telemetry, each wheel's spin,
/// load and heading, each drivetrain-only vehicle's engine speed, as raw bits.
fn run(tasks: Option<usize>) -> Vec<u64> {
    let mut app = create_app(60.0);
    app.insert_resource(ParallelStep {
        tasks,
        min_vehicles_per_task: 1,
    });
    spawn_flat_ground(&mut app, 0.9);
    let sedan = load_vehicle("vehicles/automatic_sedan.vehicle.ron");
    let excavator = load_vehicle("vehicles/tracked_excavator.vehicle.ron");
    let mut cars = Vec::new();
    for i in 0..9 {
        let at = Vec3::new(12.0 * (i % 3) as f32, 0.0, 20.0 * (i / 3) as f32);
        let car = match i % 3 {
            0 => {
                let builder = CarBuilder::default();
                spawn_car(
                    &mut app,
                    &builder,
                    Transform::from_translation(at + Vec3::Y * car_rest_height(&builder)),
                )
            }
            1 => spawn_described(
                &mut app,
                &sedan,
                Transform::from_translation(at + Vec3::Y * rest_height(&sedan)),
            ),
            _ => spawn_described(
                &mut app,
                &excavator,
                Transform::from_translation(at + Vec3::Y * rest_height(&excavator)),
            ),
        };
        let share = (i + 1) as f64 / 9.0;
        controls(&mut app, car, |c| {
            c.throttle = share;
            c.steering = (3.0 * share).sin();
            c.brake = if i == 4 { 0.3 } else { 0.0 };
        });
        cars.push(car);
    }
    // Drivetrains without a chassis (the drivetrain plugin's own step).
    let mut engines = Vec::new();
    for i in 0..5 {
        let vehicle = spawn_vehicle(&mut app, &format!("bench {i}"), 4);
        let motor = spawn_block(
            &mut app,
            vehicle,
            "motor",
            constant_torque_motor(50.0 + 10.0 * i as f64, 0.2),
            None,
        );
        spawn_block(
            &mut app,
            vehicle,
            "wheel",
            wheel(1.0, WheelLoad::Viscous(0.5)),
            Some((motor, Port::OUT)),
        );
        engines.push((vehicle, motor));
    }
    tick(&mut app, 120);

    let mut bits = Vec::new();
    let mut moved = 0;
    for &car in &cars {
        let t = get::<Transform>(&app, car);
        let v = get::<Velocity>(&app, car);
        if t.translation.xz().length() > 0.5 {
            moved += 1;
        }
        bits.extend(t.translation.to_array().map(|x| u64::from(x.to_bits())));
        bits.extend(t.rotation.to_array().map(|x| u64::from(x.to_bits())));
        bits.extend(v.linear.to_array().map(|x| u64::from(x.to_bits())));
        bits.extend(v.angular.to_array().map(|x| u64::from(x.to_bits())));
        // What the telemetry and the modules' per-step start wrote (each in tasks too).
        let telemetry = get::<VehicleTelemetry>(&app, car);
        bits.extend(
            [
                telemetry.forward_speed,
                telemetry.lateral_speed,
                telemetry.yaw_rate,
                telemetry.engine_rpm,
                telemetry.steering,
                telemetry.steering_torque,
            ]
            .map(f64::to_bits),
        );
        bits.push(u64::from(telemetry.grounded_wheels));
        bits.push(telemetry.gear as u64);
        for w in wheels(&mut app, car) {
            let sensors = get::<WheelSensors>(&app, w);
            let state = get::<WheelState>(&app, w);
            bits.push(sensors.speed.to_bits());
            bits.push(state.load.to_bits());
            bits.extend(state.heading.to_array().map(|x| u64::from(x.to_bits())));
        }
    }
    for &(vehicle, motor) in &engines {
        bits.extend(state(&app, vehicle, motor).iter().map(|x| x.to_bits()));
        bits.push(get::<MotorSensors>(&app, motor).speed.to_bits());
    }
    // The fleet drove: the comparison is not between cars standing still.
    assert!(moved >= 6, "only {moved} of {} cars moved", cars.len());
    bits
}

/// Asserts that `run` ends with the same bits in each of `tasks` tasks as on one thread.
fn assert_alike_in_tasks(run: impl Fn(Option<usize>) -> Vec<u64>, tasks: &[usize]) {
    let one = run(Some(1));
    for &tasks in tasks {
        let split = run(Some(tasks));
        assert_eq!(one.len(), split.len());
        let differ = one.iter().zip(&split).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ,
            0,
            "{differ} of {} numbers differ in {tasks} tasks",
            one.len()
        );
    }
}

#[test]
fn vehicles_stepped_in_tasks_end_bit_for_bit_where_one_thread_leaves_them() {
    assert_alike_in_tasks(run, &[2, 3, 14]);
}

/// The sensors and states of drivetrain-only vehicles whose wheel moves from one vehicle to
/// another mid-run, as raw bits, with each vehicle's status. Vehicle `2k` starts as motor →
/// differential → two wheels, vehicle `2k + 1` as the same with its right wheel missing
/// (refused: a required port left unconnected). After 1 s each even vehicle's right wheel is
/// connected to its odd neighbour's differential, which refuses the even one and compiles
/// the odd one with the moved wheel: a block whose vehicle changed between two steps.
fn run_with_moved_wheels(tasks: Option<usize>) -> Vec<u64> {
    let mut app = create_app(60.0);
    app.insert_resource(ParallelStep {
        tasks,
        min_vehicles_per_task: 1,
    });
    let mut pairs = Vec::new();
    for k in 0..4 {
        let mut blocks = Vec::new();
        for odd in [false, true] {
            let vehicle = spawn_vehicle(&mut app, &format!("vehicle {k} {odd}"), 4);
            let torque = 40.0 + 10.0 * k as f64 + if odd { 5.0 } else { 0.0 };
            let motor = spawn_block(
                &mut app,
                vehicle,
                "motor",
                constant_torque_motor(torque, 0.2),
                None,
            );
            let diff = spawn_block(
                &mut app,
                vehicle,
                "differential",
                Differential {
                    lock_torque: 20.0 * k as f64,
                    ..default()
                },
                Some((motor, Port::OUT)),
            );
            let left = spawn_block(
                &mut app,
                vehicle,
                "left",
                wheel(1.0, WheelLoad::Viscous(0.5)),
                Some((diff, Port::LEFT)),
            );
            let right = (!odd).then(|| {
                spawn_block(
                    &mut app,
                    vehicle,
                    "right",
                    wheel(1.5 + 0.25 * k as f64, WheelLoad::Viscous(0.8)),
                    Some((diff, Port::RIGHT)),
                )
            });
            blocks.push((vehicle, motor, diff, left, right));
        }
        pairs.push(blocks);
    }
    tick(&mut app, 60);
    for pair in &pairs {
        let (_, _, _, _, right) = pair[0];
        let (to, _, to_diff, _, _) = pair[1];
        let right = right.expect("the even vehicle has a right wheel");
        app.world_mut()
            .entity_mut(right)
            .insert((BlockOf(to), DrivenBy::port(to_diff, Port::RIGHT)));
    }
    tick(&mut app, 60);

    let mut bits = Vec::new();
    for pair in &pairs {
        let moved = pair[0].4.unwrap();
        for (i, &(vehicle, motor, diff, left, _)) in pair.iter().enumerate() {
            let ready = matches!(drivetrain(&app, vehicle).status(), DrivetrainStatus::Ready);
            // The even vehicle lost its wheel, the odd one gained it.
            assert_eq!(ready, i == 1, "vehicle {vehicle} ready: {ready}");
            bits.push(u64::from(ready));
            bits.push(get::<MotorSensors>(&app, motor).speed.to_bits());
            let d = get::<DifferentialSensors>(&app, diff);
            bits.extend([d.input_speed, d.input_torque].map(f64::to_bits));
            bits.push(get::<WheelSensors>(&app, left).speed.to_bits());
            if ready {
                bits.extend(state(&app, vehicle, moved).iter().map(|x| x.to_bits()));
            }
        }
        let slot = get::<bevy_vehicle_physics::drivetrain::BlockSlot>(&app, moved);
        assert_eq!(
            slot.vehicle, pair[1].0,
            "the moved wheel's slot names its new vehicle"
        );
        let sensors = get::<WheelSensors>(&app, moved);
        // Driven by its new vehicle for the last second: it spins.
        assert!(
            sensors.speed > 1.0,
            "moved wheel at {} rad/s",
            sensors.speed
        );
        bits.push(sensors.speed.to_bits());
    }
    bits
}

#[test]
fn a_wheel_moved_to_another_vehicle_is_stepped_alike_in_tasks() {
    assert_alike_in_tasks(run_with_moved_wheels, &[2, 3, 8]);
}
