//! Custom blocks, written outside the library and registered with one call each.
//!
//! Builds the source documents' `SimpleGear` and `SimpleOpenDifferential` as blocks of this
//! crate's [`Block`] trait and runs them in a direct-drive motor → `SimpleGear` →
//! `SimpleOpenDifferential` → two wheels chain, headless, for 10 s.
//!
//! Run with `cargo run --example custom_block`.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::prelude::*;

/// Constrains input and output to turn together at a fixed ratio.
#[derive(Component, Clone)]
struct SimpleGear {
    /// Input speed / output speed (dimensionless, non-zero).
    ratio: f64,
}

impl Block for SimpleGear {
    const TYPE_NAME: &'static str = "SimpleGear";
    type Runtime = ();
    type Sensors = NoSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_finite("ratio", self.ratio)?;
        if self.ratio == 0.0 {
            return Err(SettingError::new("ratio", "must not be 0"));
        }
        Ok(())
    }

    // Upstream: L/r, I/r², Tr/r.
    fn upstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        let out = outputs[0].up;
        ShaftUp {
            momentum: out.momentum / self.ratio,
            inertia: out.inertia / (self.ratio * self.ratio),
            reaction: out.reaction / self.ratio,
        }
    }

    // Downstream: Td·r.
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        outputs[0].down = ShaftDown {
            torque: input.torque * self.ratio,
            speed: input.speed / self.ratio,
        };
    }

    fn sensors(&self, _: &(), _: &[f64], _: &Shafts) -> NoSensors {
        NoSensors
    }
}

/// An open differential for outputs of *identical* inertia: the input sees the sum of the
/// outputs, and each output gets half the torque. (The built-in [`Differential`] handles any
/// inertias.)
#[derive(Component, Clone)]
struct SimpleOpenDifferential;

impl Block for SimpleOpenDifferential {
    const TYPE_NAME: &'static str = "SimpleOpenDifferential";
    type Runtime = ();
    type Sensors = NoSensors;

    fn ports(&self) -> Ports {
        Ports::SPLIT
    }

    fn upstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        let (a, b) = (outputs[0].up, outputs[1].up);
        ShaftUp {
            momentum: a.momentum + b.momentum,
            inertia: a.inertia + b.inertia,
            reaction: a.reaction + b.reaction,
        }
    }

    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let torque = input.map_or(0.0, |s| s.down.torque);
        for out in outputs {
            out.down = ShaftDown {
                torque: 0.5 * torque,
                speed: out.up.speed().unwrap_or(0.0),
            };
        }
    }

    fn sensors(&self, _: &(), _: &[f64], _: &Shafts) -> NoSensors {
        NoSensors
    }
}

fn main() {
    const HZ: f64 = 60.0;
    const RATIO: f64 = 8.0;
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins))
        .register_block::<SimpleGear>()
        .register_block::<SimpleOpenDifferential>()
        .insert_resource(Time::<Fixed>::from_hz(HZ))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();

    let world = app.world_mut();
    let car = world.spawn((Name::new("e-kart"), Drivetrain::new(4))).id();
    let motor = world
        .spawn((
            Name::new("motor"),
            BlockOf(car),
            Motor {
                command: 1.0,
                ..default()
            },
        ))
        .id();
    let gear = world
        .spawn((
            Name::new("gear"),
            BlockOf(car),
            SimpleGear { ratio: RATIO },
            DrivenBy::new(motor),
        ))
        .id();
    let diff = world
        .spawn((
            Name::new("diff"),
            BlockOf(car),
            SimpleOpenDifferential,
            DrivenBy::new(gear),
        ))
        .id();
    let load = WheelLoad::Vehicle {
        mass: 400.0,
        rolling_resistance: 0.015,
        drag_area: 0.3,
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

    println!("motor → SimpleGear (1:{RATIO}) → SimpleOpenDifferential → 2 wheels, full torque");
    println!(
        "{:>5} {:>10} {:>12} {:>12} {:>12}",
        "t (s)", "motor rpm", "left (rad/s)", "right (rad/s)", "motor/ratio"
    );
    for step in 1..=(10.0 * HZ) as usize {
        app.update();
        if step % (HZ as usize) == 0 {
            let world = app.world();
            let m = world.get::<MotorSensors>(motor).unwrap();
            let [l, r] = wheels.map(|w| world.get::<WheelSensors>(w).unwrap().speed);
            println!(
                "{:>5.1} {:>10.0} {:>12.3} {:>12.3} {:>12.3}",
                step as f64 / HZ,
                m.rpm,
                l,
                r,
                m.speed / RATIO
            );
        }
    }
    let world = app.world();
    let status = world.get::<Drivetrain>(car).unwrap().status().clone();
    let m = world.get::<MotorSensors>(motor).unwrap();
    let [l, r] = wheels.map(|w| world.get::<WheelSensors>(w).unwrap().speed);
    let mismatch = ((l + r) / 2.0 - m.speed / RATIO).abs() / (m.speed / RATIO);
    println!("status: {status:?}; mean wheel speed vs motor/ratio differs by {mismatch:.1e}");
    if status != DrivetrainStatus::Ready || mismatch > 1e-9 || l < 1.0 {
        eprintln!("custom blocks did not run as expected");
        std::process::exit(1);
    }
}
