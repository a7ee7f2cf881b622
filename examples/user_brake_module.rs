//! A brake module written outside the library: a front-biased brake with a per-wheel slip
//! limiter (a stand-in for ABS), installed on a car with one call.
//!
//! The car stops from 100 km/h on a μ = 0.9 road twice with the same strong brakes at full
//! pedal: once with the built-in brake module, whose wheels lock, and once with this module.
//! Both stopping distances are printed, with the ideal `v²/(2μg)`.
//!
//! Run with `cargo run --example user_brake_module`.

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::chassis::modules::builtin_brake_torques;
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;

/// Front-biased brakes whose torque at each wheel fades out while that wheel slips more than
/// `slip_limit`: what an ABS does, without its valves and timing.
///
/// The wheel's slip is measured the way ABS sensors see it, from its spin and the car's speed:
/// `κ = (ω·r − v) / |v|`. The torque asked for by the pedal (the vehicle's [`Brakes`] split by
/// its front bias) is applied in full up to `slip_limit`, and falls linearly to zero over the
/// next `fade` of slip. Below `min_speed` the slip means nothing and the brake acts in full,
/// so the car stops and stays stopped.
///
/// The torque falls steeply with the wheel's spin (`max_torque / fade · r / v` per rad/s), and
/// the integrator must follow it: over the wheel's inertia `I` that is a rate of
/// `max_torque · r / (fade · v · I)` per second, which RK4 follows only while it stays below
/// about 2.8 per substep. With 4000 N·m brakes at 100 km/h a `fade` of 0.05 gave 3.2 per
/// default 1/240 s substep, and the wheel's slip swung from one RK4 stage to the next (the
/// tire's force then averaged less than what the body was handed at the end of the step).
/// 0.10 (1.6) stopped in 43.9 to 44.8 m at 30 to 240 Hz, 2 % apart once the body took the
/// step's mean tire force; 0.15 (1.1) stops in 45.1 to 45.4 m (0.8 % apart), 3 to 4 % beyond
/// `v²/(2μg)` = 43.7 m, as a limiter that holds the tires a little below their peak should.
/// Slower, the rate grows: below the speed where it passes 2.8 a wider `fade`, or more
/// substeps, follows the limiter more exactly.
struct SlipLimitedBrakes {
    /// Slip at which the brake starts to let go (dimensionless, > 0): a little below the
    /// tire's peak-force slip.
    slip_limit: f64,
    /// Slip over which the torque fades to zero (dimensionless, > 0).
    fade: f64,
    /// Speed below which the limiter is off (m/s).
    min_speed: f64,
}

impl BrakeModule for SlipLimitedBrakes {
    fn name(&self) -> &str {
        "SlipLimitedBrakes"
    }

    // Pure in its inputs: called at every RK4 stage, with that stage's wheel spins.
    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]) {
        builtin_brake_torques(ctx.brakes, ctx.command, ctx.wheels, torques);
        let v = ctx.state.forward_speed();
        for ((torque, wheel), &spin) in torques.iter_mut().zip(ctx.wheels).zip(ctx.state.wheel_spin)
        {
            let mut share = 1.0;
            if v.abs() > self.min_speed {
                let slip = (spin * wheel.radius - v) / v.abs();
                share = (1.0 - (slip.abs() - self.slip_limit) / self.fade).clamp(0.0, 1.0);
            }
            // Against the spin: forward spin gets a negative torque.
            *torque *= -share * if spin < 0.0 { -1.0 } else { 1.0 };
        }
    }
}

/// Speed the stops start from (m/s): 100 km/h.
const START_SPEED: f32 = 100.0 / 3.6;
/// Road friction (dimensionless).
const MU: f32 = 0.9;
/// Fixed steps per second.
const HZ: f64 = 60.0;

/// Distance (m) the car takes to stop from [`START_SPEED`] at full pedal, with `brake` as its
/// brake module (the built-in when `None`).
fn stop(brake: Option<SlipLimitedBrakes>) -> f64 {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins))
        .insert_resource(Time::<Fixed>::from_hz(HZ))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::halfspace(Vec3::Y).expect("unit normal"),
        Friction::coefficient(MU),
        Transform::default(),
    ));
    // Brakes strong enough to lock every wheel.
    let builder = CarBuilder {
        brakes: Brakes {
            max_torque: 4_000.0,
            ..default()
        },
        ..default()
    };
    let height = builder.wheel.radius as f32 - builder.wheel_height;
    let car = {
        let world = app.world_mut();
        let car = builder.spawn(&mut world.commands(), Transform::from_xyz(0.0, height, 0.0));
        world.flush();
        car
    };
    if let Some(brake) = brake {
        app.world_mut()
            .entity_mut(car)
            .install_module(VehicleModule::brake(brake))
            .expect("a car hosts a brake module");
    }
    // Settle, then roll at the start speed with the wheels turning with the road.
    for _ in 0..30 {
        app.update();
    }
    let wheels: Vec<(Entity, f64)> = {
        let world = app.world_mut();
        let mut q = world.query::<(Entity, &BlockOf, &Wheel)>();
        q.iter(world)
            .filter(|(_, b, _)| b.0 == car)
            .map(|(e, _, w)| (e, w.radius))
            .collect()
    };
    {
        let world = app.world_mut();
        world.get_mut::<Velocity>(car).expect("a body").linear = Vec3::NEG_Z * START_SPEED;
        let mut drivetrain = world.get_mut::<Drivetrain>(car).expect("a drivetrain");
        for (wheel, radius) in wheels {
            let mut state = drivetrain.state(wheel).expect("compiled").to_vec();
            state[1] = f64::from(START_SPEED) / radius;
            drivetrain.set_state(wheel, &state);
        }
    }
    app.update();
    app.world_mut()
        .get_mut::<VehicleControls>(car)
        .expect("controls")
        .brake = 1.0;
    let start = app
        .world()
        .get::<Transform>(car)
        .expect("placed")
        .translation;
    for _ in 0..(20.0 * HZ) as usize {
        app.update();
        if app
            .world()
            .get::<Velocity>(car)
            .expect("a body")
            .linear
            .length()
            < 0.05
        {
            break;
        }
    }
    let end = app
        .world()
        .get::<Transform>(car)
        .expect("placed")
        .translation;
    f64::from((end - start).length())
}

/// Stopping distances (m) from 100 km/h on μ = 0.9: `(built-in brakes, slip-limited brakes)`.
pub fn stopping_distances() -> (f64, f64) {
    let locked = stop(None);
    let limited = stop(Some(SlipLimitedBrakes {
        slip_limit: 0.08,
        fade: 0.15,
        min_speed: 1.0,
    }));
    (locked, limited)
}

fn main() {
    let (locked, limited) = stopping_distances();
    let v = f64::from(START_SPEED);
    let ideal = v * v / (2.0 * f64::from(MU) * 9.81);
    println!("Stopping from 100 km/h on μ = {MU}, full pedal, 4000 N·m brakes:");
    println!("  built-in brakes (wheels lock):   {locked:6.2} m");
    println!("  SlipLimitedBrakes (ABS stand-in): {limited:6.2} m");
    println!("  ideal v²/(2μg):                  {ideal:6.2} m");
}
