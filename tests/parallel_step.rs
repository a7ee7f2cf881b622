//! Stepping vehicles in tasks on Bevy's compute task pool (`ParallelStep`: the drivetrains'
//! step, the ground probes, the modules' per-step start, the chassis's step and the telemetry)
//! changes no result: a mixed fleet driven for 2 s ends bit for bit where it ends stepped one
//! vehicle after another on one thread.

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

#[test]
fn vehicles_stepped_in_tasks_end_bit_for_bit_where_one_thread_leaves_them() {
    let one = run(Some(1));
    for tasks in [2, 3, 14] {
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
