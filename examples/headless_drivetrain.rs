//! The headless drivetrain run: engine → clutch → six-speed gearbox → differential → two
//! wheels carrying a 1300 kg car (rolling resistance and drag on the wheels; no chassis yet).
//!
//! A scripted driver starts in first gear with a 1 s clutch engagement at half throttle, goes to
//! full throttle and shifts up at 6000 rpm (clutch down for the shift), for 10 s. It prints
//! engine rpm, gear and wheel speeds, with no window and no GPU.
//!
//! Run with `cargo run --release --example headless_drivetrain`.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::prelude::*;

const HZ: f64 = 60.0;
const DURATION: f64 = 10.0;

fn main() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins))
        .insert_resource(Time::<Fixed>::from_hz(HZ))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();

    let world = app.world_mut();
    let car = world
        .spawn((Name::new("hatchback"), Drivetrain::new(4)))
        .id();
    let engine = world
        .spawn((Name::new("engine"), BlockOf(car), Engine::default()))
        .id();
    let clutch = world
        .spawn((
            Name::new("clutch"),
            BlockOf(car),
            Clutch {
                max_torque: 350.0,
                engagement: 0.0,
                automatic: None,
            },
            DrivenBy::new(engine),
        ))
        .id();
    let gearbox = world
        .spawn((
            Name::new("gearbox"),
            BlockOf(car),
            Gearbox {
                gear: 1,
                ..default()
            },
            DrivenBy::new(clutch),
        ))
        .id();
    let diff = world
        .spawn((
            Name::new("differential"),
            BlockOf(car),
            Differential::default(),
            DrivenBy::new(gearbox),
        ))
        .id();
    let load = WheelLoad::Vehicle {
        mass: 650.0,
        rolling_resistance: 0.012,
        drag_area: 0.33,
        air_density: 1.2,
    };
    let wheels = [Port::LEFT, Port::RIGHT].map(|port| {
        world
            .spawn((
                Name::new(format!("wheel_{port}")),
                BlockOf(car),
                Wheel {
                    load: load.clone(),
                    ..default()
                },
                DrivenBy::port(diff, port),
            ))
            .id()
    });

    println!(
        "{:>5} {:>7} {:>4} {:>8} {:>8} {:>10} {:>10} {:>7}",
        "t (s)", "rpm", "gear", "throttle", "clutch", "left rad/s", "right rad/s", "km/h"
    );
    let mut shift_until = -1.0;
    let mut to_100 = None;
    let steps = (DURATION * HZ) as usize;
    for step in 0..steps {
        let t = step as f64 / HZ;
        // The scripted driver.
        let (rpm, gear) = {
            let w = app.world();
            (
                w.get::<EngineSensors>(engine).unwrap().rpm,
                w.get::<GearboxSensors>(gearbox).unwrap().selected,
            )
        };
        let shifting = t < shift_until;
        if !shifting && rpm > 6000.0 && gear < 6 {
            shift_until = t + 0.4;
            app.world_mut().get_mut::<Gearbox>(gearbox).unwrap().gear = gear + 1;
        }
        let engagement = if t < shift_until {
            0.0
        } else if t < 1.0 {
            t
        } else {
            1.0
        };
        let throttle = if t < shift_until {
            0.0
        } else if t < 1.0 {
            0.5
        } else {
            1.0
        };
        app.world_mut()
            .get_mut::<Clutch>(clutch)
            .unwrap()
            .engagement = engagement;
        app.world_mut().get_mut::<Engine>(engine).unwrap().throttle = throttle;

        app.update();

        let w = app.world();
        let e = w.get::<EngineSensors>(engine).unwrap();
        let g = w.get::<GearboxSensors>(gearbox).unwrap();
        let [l, r] = wheels.map(|wh| w.get::<WheelSensors>(wh).unwrap().clone());
        let kmh = (l.surface_speed + r.surface_speed) / 2.0 * 3.6;
        if to_100.is_none() && kmh >= 100.0 {
            to_100 = Some(t + 1.0 / HZ);
        }
        if (step + 1) % (HZ as usize / 2) == 0 {
            println!(
                "{:>5.1} {:>7.0} {:>4} {:>8.2} {:>8.2} {:>10.2} {:>11.2} {:>7.1}",
                t + 1.0 / HZ,
                e.rpm,
                g.gear,
                e.throttle,
                engagement,
                l.speed,
                r.speed,
                kmh
            );
        }
    }
    let status = app.world().get::<Drivetrain>(car).unwrap().status().clone();
    match to_100 {
        Some(t) => println!("0–100 km/h: {t:.2} s (status: {status:?})"),
        None => println!("did not reach 100 km/h in {DURATION} s (status: {status:?})"),
    }
    if status != DrivetrainStatus::Ready {
        std::process::exit(1);
    }
}
