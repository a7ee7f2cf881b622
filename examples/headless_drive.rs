//! A complete car on a flat road, driven by a scripted program, headless.
//!
//! The car (a 1300 kg rear-drive saloon built with `CarBuilder`) pulls away, shifts up at
//! 6000 rpm, brakes hard, and drives a slalom. Every fixed step is written to a CSV file: time,
//! position, speed, engine rpm, gear, the driver's inputs, and per wheel its load, slip ratio,
//! slip angle, longitudinal and lateral tire force, suspension travel and whether it touches
//! the ground.
//!
//! Run with `cargo run --release --example headless_drive -- [out.csv] [hz] [substeps]`
//! (defaults: `headless_drive.csv`, 60 Hz, 4 substeps).

use std::fmt::Write as _;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_physics::prelude::*;

/// One line of the driving program: from `time` on, these inputs (gear `None` = automatic
/// upshift at 6000 rpm).
struct Command {
    time: f64,
    throttle: f64,
    brake: f64,
    steering: f64,
}

const PROGRAM: &[Command] = &[
    Command {
        time: 0.0,
        throttle: 0.0,
        brake: 0.0,
        steering: 0.0,
    },
    Command {
        time: 1.0,
        throttle: 1.0,
        brake: 0.0,
        steering: 0.0,
    },
    Command {
        time: 12.0,
        throttle: 0.0,
        brake: 0.7,
        steering: 0.0,
    },
    Command {
        time: 15.0,
        throttle: 0.6,
        brake: 0.0,
        steering: 0.0,
    },
    Command {
        time: 18.0,
        throttle: 0.6,
        brake: 0.0,
        steering: 0.1,
    },
    Command {
        time: 19.5,
        throttle: 0.6,
        brake: 0.0,
        steering: -0.1,
    },
    Command {
        time: 21.0,
        throttle: 0.6,
        brake: 0.0,
        steering: 0.1,
    },
    Command {
        time: 22.5,
        throttle: 0.6,
        brake: 0.0,
        steering: -0.1,
    },
    Command {
        time: 24.0,
        throttle: 0.0,
        brake: 0.6,
        steering: 0.0,
    },
];
const DURATION: f64 = 28.0;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "headless_drive.csv".into());
    let hz: f64 = args
        .next()
        .map_or(60.0, |a| a.parse().expect("hz is a number"));
    let substeps: u32 = args
        .next()
        .map_or(4, |a| a.parse().expect("substeps is a number"));

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin, VehiclePhysicsPlugins))
        .insert_resource(Time::<Fixed>::from_hz(hz))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();

    let world = app.world_mut();
    world.spawn((
        Name::new("road"),
        RigidBody::Fixed,
        Collider::halfspace(Vec3::Y).expect("unit normal"),
        Friction::coefficient(0.9),
        Transform::default(),
    ));
    let builder = CarBuilder {
        name: "saloon".into(),
        substeps,
        ..default()
    };
    let mut commands = world.commands();
    let car = builder.spawn(
        &mut commands,
        Transform::from_xyz(0.0, builder.wheel.radius as f32, 0.0),
    );
    world.flush();

    let mut wheels: Vec<(Entity, String)> = {
        let mut q = world.query::<(Entity, &BlockOf, &Name, &WheelMount)>();
        q.iter(world)
            .filter(|(_, b, ..)| b.0 == car)
            .map(|(e, _, n, _)| (e, n.as_str().trim_start_matches("wheel_").to_owned()))
            .collect()
    };
    wheels.sort_by(|a, b| a.1.cmp(&b.1));

    let mut csv = String::from("time,x,z,speed,rpm,gear,throttle,brake,steering");
    for (_, name) in &wheels {
        for field in [
            "load",
            "slip_ratio",
            "slip_angle",
            "fx",
            "fy",
            "travel",
            "grounded",
        ] {
            write!(csv, ",{name}_{field}").unwrap();
        }
    }
    csv.push('\n');

    let dt = 1.0 / hz;
    let steps = (DURATION * hz) as usize;
    let (mut to_100, mut top_speed) = (None, 0.0f64);
    for step in 0..steps {
        let t = step as f64 * dt;
        let command = PROGRAM.iter().rev().find(|c| c.time <= t).unwrap();
        let (rpm, gear) = {
            let tel = app.world().get::<VehicleTelemetry>(car).unwrap();
            (tel.engine_rpm, tel.gear)
        };
        {
            let mut controls = app.world_mut().get_mut::<VehicleControls>(car).unwrap();
            controls.throttle = command.throttle;
            controls.brake = command.brake;
            controls.steering = command.steering;
            if controls.gear == 0 && command.throttle > 0.0 {
                controls.gear = 1;
            } else if rpm > 6000.0 && gear == controls.gear && controls.gear < 6 {
                controls.gear += 1;
            } else if rpm < 1800.0 && gear == controls.gear && controls.gear > 1 {
                controls.gear -= 1;
            }
        }
        app.update();

        let world = app.world();
        let tel = world.get::<VehicleTelemetry>(car).unwrap();
        let p = world.get::<Transform>(car).unwrap().translation;
        let controls = world.get::<VehicleControls>(car).unwrap();
        top_speed = top_speed.max(tel.forward_speed);
        if to_100.is_none() && tel.forward_speed >= 100.0 / 3.6 {
            to_100 = Some(t + dt - 1.0);
        }
        write!(
            csv,
            "{:.4},{:.3},{:.3},{:.3},{:.0},{},{:.2},{:.2},{:.3}",
            t + dt,
            p.x,
            p.z,
            tel.forward_speed,
            tel.engine_rpm,
            tel.gear,
            controls.throttle,
            controls.brake,
            tel.steering
        )
        .unwrap();
        for (w, _) in &wheels {
            let s = world.get::<WheelState>(*w).unwrap();
            let sensors = world.get::<WheelSensors>(*w).unwrap();
            write!(
                csv,
                ",{:.1},{:.4},{:.4},{:.1},{:.1},{:.4},{}",
                s.load,
                s.slip_ratio,
                s.slip_angle,
                sensors.force[0],
                sensors.force[1],
                s.travel,
                u8::from(s.grounded)
            )
            .unwrap();
        }
        csv.push('\n');
        if !(p.is_finite() && tel.forward_speed.is_finite()) {
            eprintln!("the simulation left the finite numbers at t = {t:.3} s");
            std::process::exit(1);
        }
    }
    std::fs::write(&path, csv).expect("write the CSV");
    let status = app.world().get::<Drivetrain>(car).unwrap().status().clone();
    println!("wrote {path} ({steps} steps at {hz} Hz, {substeps} substeps; drivetrain {status:?})");
    match to_100 {
        Some(t) => println!("0–100 km/h: {t:.2} s"),
        None => println!("0–100 km/h: not reached"),
    }
    println!("top speed: {:.1} km/h", top_speed * 3.6);
}
