//! The tracked 2×2: the shipped excavator base drives straight and skid-steers on the radius
//! its track speeds predict. Tolerances are stated per test.

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::Velocity;
use bevy_vehicle_physics::assets::FileBlockTypes;
use bevy_vehicle_physics::prelude::*;
use common::*;

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// The excavator base on flat ground with μ = 0.9, settled; returns it and its file.
fn excavator(app: &mut App) -> (Entity, VehicleDescription) {
    let d = VehicleDescription::load(
        ASSETS,
        "vehicles/tracked_excavator.vehicle.ron",
        &FileBlockTypes::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    spawn_flat_ground(app, 0.9);
    let car = {
        let world = app.world_mut();
        let car = d.spawn(
            &mut world.commands(),
            Transform::from_xyz(0.0, rest_height(&d), 0.0),
        );
        world.flush();
        car
    };
    tick(app, 60);
    (car, d)
}

/// The two tracks' sprocket speeds (rad/s): (left, right).
fn sprockets(app: &mut App, car: Entity) -> (f64, f64) {
    let world = app.world_mut();
    let mut q = world.query::<(&BlockOf, &Name, &TrackSensors)>();
    let mut left = 0.0;
    let mut right = 0.0;
    for (b, name, s) in q.iter(world) {
        if b.0 != car {
            continue;
        }
        match name.as_str() {
            "track_l" => left = s.speed,
            "track_r" => right = s.speed,
            _ => {}
        }
    }
    (left, right)
}

/// Both levers forward alike: the base drives straight, drifting sideways less than 1 % of the
/// distance it travels in 20 s.
#[test]
fn tracked_vehicle_drives_straight() {
    let mut app = create_app(60.0);
    let (car, _) = excavator(&mut app);
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 0.8;
    });
    let start = position(&app, car);
    tick(&mut app, 60 * 20);
    let travelled = position(&app, car) - start;
    let along = -travelled.z;
    let sideways = travelled.x.abs();
    let (l, r) = sprockets(&mut app, car);
    println!(
        "straight: {along:.2} m ahead, {sideways:.4} m sideways; sprockets {l:.3} / {r:.3} rad/s"
    );
    assert!(along > 10.0, "it drove {along} m");
    assert!(
        sideways < 0.01 * along,
        "{sideways} m sideways over {along} m"
    );
    // At a steady crawl each drive carries its track's rolling resistance: c_rr·(m·g/2)·r
    // (within 5 %; drag at 1.4 m/s is below 0.1 %).
    let world = app.world_mut();
    let mut q = world.query::<&HydrostaticSensors>();
    let expected = 0.03 * 20_000.0 * 9.81 / 2.0 * 0.35;
    for s in q.iter(world) {
        assert!(
            rel(s.output_torque, expected) < 0.05,
            "drive torque {} N·m vs rolling resistance {expected} N·m",
            s.output_torque
        );
    }
}

/// A steady skid turn with the left track twice as fast as the right: the turn radius at the
/// centre, `v / yaw rate`, is the kinematic `(B/2)·(v_l + v_r)/(v_l − v_r)` of the track
/// speeds `v = ω_sprocket·r` and the gauge `B`, within 10 %.
#[test]
fn skid_turn_radius_follows_the_track_speed_ratio() {
    let mut app = create_app(60.0);
    let (car, d) = excavator(&mut app);
    // Left lever 0.8, right 0.4.
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 0.6;
        c.steering = 0.2;
    });
    tick(&mut app, 60 * 15);
    let v = get::<Velocity>(&app, car);
    let speed = f64::from(v.linear.length());
    let yaw_rate = f64::from(v.angular.y);
    let (l, r) = sprockets(&mut app, car);
    let radius = d.axles[0].wheel.radius;
    let (vl, vr) = (l * radius, r * radius);
    let gauge = f64::from(d.axles[0].track);
    let predicted = 0.5 * gauge * (vl + vr) / (vl - vr);
    let measured = speed / yaw_rate.abs();
    println!(
        "skid turn: tracks {vl:.3} / {vr:.3} m/s, centre {speed:.3} m/s, yaw rate {yaw_rate:.4} rad/s, \
         radius {measured:.3} m vs kinematic {predicted:.3} m"
    );
    assert!(yaw_rate < 0.0, "steering right turns right: {yaw_rate}");
    assert!(rel(vl / vr, 2.0) < 0.02, "track speed ratio {}", vl / vr);
    assert!(
        rel(measured, predicted) < 0.10,
        "radius {measured} m vs {predicted} m"
    );
}

/// A full lever from rest at 30, 60 and 120 Hz: the pumps' torque limiters keep the diesel
/// above its stall speed throughout, and the launch is the same at every rate: the forward
/// speed 0.5, 1 and 2 s after the lever goes down within 2 % of the 60 Hz run's at 120 Hz, and
/// within 5 % at 30 Hz, whose suspension and track forces are each held over 33 ms of a launch
/// that takes about a second. (Without the limiters the relief valves ask the diesel for 2.5
/// times its torque, and it stalls at 120 Hz but not at 60.)
#[test]
fn a_full_lever_launch_is_the_same_at_any_step_rate() {
    const STALL_RPM: f64 = 500.0;
    let mut runs = Vec::new();
    for hz in [30usize, 60, 120] {
        let mut app = create_app(hz as f64);
        let (car, _) = excavator(&mut app);
        // At least 1 s of settling at every rate (the helper ticks 60 steps).
        tick(&mut app, hz.saturating_sub(60));
        controls(&mut app, car, |c| {
            c.gear = 1;
            c.throttle = 1.0;
        });
        let mut lowest_rpm = f64::INFINITY;
        let mut speeds = Vec::new();
        for step in 1..=2 * hz {
            tick(&mut app, 1);
            let telemetry = get::<VehicleTelemetry>(&app, car);
            lowest_rpm = lowest_rpm.min(telemetry.engine_rpm);
            if step == hz / 2 || step == hz || step == 2 * hz {
                speeds.push(telemetry.forward_speed);
            }
        }
        println!(
            "{hz} Hz: forward speed at 0.5, 1, 2 s {speeds:.3?} m/s; lowest {lowest_rpm:.0} rpm"
        );
        assert!(
            lowest_rpm > STALL_RPM,
            "{hz} Hz: the engine fell to {lowest_rpm} rpm"
        );
        runs.push((hz, speeds));
    }
    let reference = runs[1].1.clone();
    assert!(reference[0] > 0.3, "it moves off: {reference:?}");
    for (hz, speeds) in &runs {
        let tolerance = if *hz < 60 { 0.05 } else { 0.02 };
        for (v, r) in speeds.iter().zip(&reference) {
            assert!(
                rel(*v, *r) < tolerance,
                "{hz} Hz: {speeds:?} vs 60 Hz {reference:?} m/s"
            );
        }
    }
}

/// Held on its brakes, or left alone on its hydrostatic drives, the excavator base stands
/// still at 15, 20, 30 and 60 Hz: below 1 mm/s and 1 mrad/s, over 5 s after 5 s of settling
/// (measured 2026-11-29: at most 9.7e-6 m/s, at 15 Hz on its drives). Its
/// running gear is stiff (600 kN/m and 30 kN·s/m on each road wheel) and its body tall (centre
/// of mass 1.2 m up): it rocked from side to side at the step rate, 0.55 m/s at 20 Hz and
/// 0.07 m/s at 30 Hz, until the tires' floor counted the body's roll and the dampers were held
/// within the step (see `Suspension::force_at_step`).
#[test]
fn the_excavator_stands_still_at_low_step_rates() {
    for hz in [15.0, 20.0, 30.0, 60.0] {
        for brake in [1.0, 0.0] {
            let mut app = create_app(hz);
            let (car, _) = excavator(&mut app);
            controls(&mut app, car, |c| c.brake = brake);
            tick(&mut app, (5.0 * hz) as usize);
            let (mut fastest, mut spin) = (0.0f32, 0.0f32);
            for _ in 0..(5.0 * hz) as usize {
                tick(&mut app, 1);
                let v = get::<Velocity>(&app, car);
                fastest = fastest.max(v.linear.length());
                spin = spin.max(v.angular.length());
            }
            println!("{hz} Hz, brake {brake}: {fastest:.2e} m/s, {spin:.2e} rad/s");
            assert!(
                fastest < 1e-3 && spin < 1e-3,
                "{hz} Hz, brake {brake}: rocks at {fastest} m/s, {spin} rad/s"
            );
        }
    }
}

/// Both levers at 0.8 for 10 s, then a gentle turn (steering 0.2 at the same throttle, for
/// 15 s) at 15, 20, 30 and 60 Hz: the straight run covers the same distance within 1 % and
/// keeps straight (less than 1 % of it sideways), and the turn's steady yaw rate, taken over
/// its last 5 s, is within 3 % of the 60 Hz run's (measured 2026-11-29: 13.339, 13.334,
/// 13.332 and 13.329 m, nothing aside; 0.01826 rad/s at all four).
///
/// Two floors make it so. The road wheels' patch springs push the body fore and aft at any
/// speed the excavator reaches, because the tracks and the hydrostatic drives hold the wheels
/// (their floor fades out only toward the critical speed of `WheelRuntime::body_relaxation`,
/// 20 m/s here; it faded out at 0.5 m/s, and at 20 Hz the base drove 9.8 m and veered 3.2 m
/// aside). And the
/// dampers' bound counts the body's roll, which its running gear rings faster than its
/// heave (`Suspension::force_at_step`, on 0.73 of the mass per road wheel; counted on the
/// whole mass per wheel, the body rocked as it turned at 20 Hz and yawed 2.25 times as fast).
#[test]
fn the_excavator_drives_alike_at_low_step_rates() {
    let mut runs = Vec::new();
    for hz in [15.0, 20.0, 30.0, 60.0] {
        let mut app = create_app(hz);
        let (car, _) = excavator(&mut app);
        let seconds = |s: f64| (s * hz) as usize;
        controls(&mut app, car, |c| {
            c.gear = 1;
            c.throttle = 0.8;
        });
        let start = position(&app, car);
        tick(&mut app, seconds(10.0));
        let travelled = position(&app, car) - start;
        let (along, sideways) = (f64::from(-travelled.z), f64::from(travelled.x.abs()));
        controls(&mut app, car, |c| c.steering = 0.2);
        tick(&mut app, seconds(10.0));
        let heading = yaw(&app, car);
        tick(&mut app, seconds(5.0));
        let turned = (yaw(&app, car) - heading + core::f32::consts::PI)
            .rem_euclid(core::f32::consts::TAU)
            - core::f32::consts::PI;
        let yaw_rate = f64::from(turned) / 5.0;
        println!(
            "{hz} Hz: {along:.3} m ahead, {sideways:.4} m aside; then turning at {yaw_rate:.5} rad/s"
        );
        assert!(
            sideways < 0.01 * along,
            "{hz} Hz: {sideways} m sideways over {along} m"
        );
        runs.push((hz, along, yaw_rate));
    }
    let (_, along, yaw_rate) = runs[3];
    assert!(yaw_rate < -0.01, "the turn turned at {yaw_rate} rad/s");
    for &(hz, a, y) in &runs {
        assert!(rel(a, along) < 0.01, "{hz} Hz: {a} m vs {along} m at 60 Hz");
        assert!(
            rel(y, yaw_rate) < 0.03,
            "{hz} Hz: {y} rad/s vs {yaw_rate} rad/s at 60 Hz"
        );
    }
}

/// Braked, then pivoting (steering 1 at 0.8 throttle: the left track's lever at +1, the
/// right's at −0.2) for 15 s from a standstill, at 15, 20, 30, 60 and 120 Hz: it stands still
/// braked (below 1 mm/s over 5 s after 5 s of settling), pivots at the same steady yaw rate
/// (within 1 % of 120 Hz's over its last second), and has turned as far as at 120 Hz within
/// 3 % from 20 Hz up and 6 % at 15 Hz (measured 2026-11-29: 4.7255 / 4.7279 / 4.7305 /
/// 4.7319 / 4.7316 rad at 15 / 20 / 30 / 60 / 120 Hz, 0.3178 rad/s at each, at most 1.3e-6 m/s
/// at rest), more than 3 rad.
///
/// Until the pumps' torque limiters destroked them (`Hydrostatic::max_input_torque`, the
/// same day), a limiter capped a drive's output torque at `limit/|k|` at every speed, 39 kN
/// per track at full lever where the pivot needs about 34 kN plus rolling: it turned 0.500 /
/// 0.490 / 0.484 / 0.478 / 0.476 rad in 15 s at 0.0266 rad/s, a turn in four minutes.
///
/// While the turn builds up its road wheels' tires take up the pivot sideways. Until the
/// body answered their side forces within the step (`WheelContact::lateral_coupled`), the
/// tires' lateral relaxation was lengthened at low rates to keep them stable on the body,
/// which softened their grip as the turn built up: 0.611 / 0.543 / 0.497 / 0.471 / 0.472 rad.
/// And the body's answer alone made it rock at rest at 15 Hz (0.14 m/s, rolling and swaying
/// at the step rate on its stiff running gear) until each contact's acceleration also took
/// the change in the wheels' loads since the last step.
#[test]
fn the_excavator_pivots_alike_at_any_step_rate() {
    let mut runs = Vec::new();
    for hz in [120.0, 60.0, 30.0, 20.0, 15.0] {
        let mut app = create_app(hz);
        let (car, _) = excavator(&mut app);
        let seconds = |s: f64| (s * hz) as usize;
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, seconds(5.0));
        let mut fastest = 0.0f32;
        for _ in 0..seconds(5.0) {
            tick(&mut app, 1);
            fastest = fastest.max(get::<Velocity>(&app, car).linear.length());
        }
        controls(&mut app, car, |c| {
            c.brake = 0.0;
            c.gear = 1;
            c.throttle = 0.8;
            c.steering = 1.0;
        });
        // The turn to the right, summed step by step (it passes a half turn).
        let late = -tick_turning(&mut app, car, seconds(14.0));
        let rate = -tick_turning(&mut app, car, seconds(15.0) - seconds(14.0));
        let turned = late + rate;
        println!(
            "{hz} Hz: at rest at most {fastest:.1e} m/s; pivoted {turned:.4} rad in 15 s, \
             {rate:.5} rad/s in the last"
        );
        assert!(fastest < 1e-3, "{hz} Hz: rocks at {fastest} m/s");
        runs.push((hz, turned, rate));
    }
    let (_, turned, rate) = runs[0];
    assert!(turned > 3.0, "it pivoted {turned} rad");
    for &(hz, t, r) in &runs {
        let tolerance = if hz < 20.0 { 0.06 } else { 0.03 };
        assert!(
            rel(t, turned) < tolerance && rel(r, rate) < 0.01,
            "{hz} Hz: {t} rad, {r} rad/s against {turned} rad, {rate} rad/s at 120 Hz"
        );
    }
}

/// A [`PathFollower`] drives the excavator base round a square corner: 25 m north, a left turn
/// of 90°, 25 m west, at a route speed above its top speed (full throttle), at 30 and 60 Hz.
/// A vehicle that steers by its drives turns less than pure pursuit's bicycle-model angle
/// asks, the less the wider the turn, so the follower turns it hard toward an aim point more
/// than 0.5 rad off its heading and otherwise keeps the throttle at most `1 − |steering|`. It
/// keeps within 2.5 m of the route and stops within 0.5 m of its end (measured 2026-11-29:
/// 1.59 / 1.60 m at 30 / 60 Hz, the corner's overshoot, and 0.21 m). Steered like a car it
/// ran 3.34 m wide and stopped 1.64 m off, and strayed 25.8 m from the test track's tour route
/// (1.45 m now, the cars 1.00–1.04 m).
#[test]
fn a_path_follower_takes_the_excavator_round_a_corner() {
    for hz in [30.0, 60.0] {
        let mut app = create_app(hz);
        let (car, _) = excavator(&mut app);
        let route = vec![
            RoutePoint::new(0.0, 0.0, 5.0),
            RoutePoint::new(0.0, -25.0, 5.0),
            RoutePoint::new(-25.0, -25.0, 5.0),
        ];
        app.world_mut()
            .entity_mut(car)
            .insert(PathFollower::new(route));
        let mut worst: f32 = 0.0;
        for _ in 0..(120.0 * hz) as usize {
            tick(&mut app, 1);
            let follower = get::<PathFollower>(&app, car);
            worst = worst.max(follower.cross_track_error().abs());
            if follower.finished() {
                break;
            }
        }
        let follower = get::<PathFollower>(&app, car);
        let end = position(&app, car);
        let miss = Vec2::new(end.x + 25.0, end.z + 25.0).length();
        println!(
            "{hz} Hz: at most {worst:.2} m off the route, stopped {miss:.2} m from its end \
             (finished: {})",
            follower.finished()
        );
        assert!(follower.finished(), "{hz} Hz: did not finish in 120 s");
        assert!(worst < 2.5, "{hz} Hz: {worst} m off the route");
        assert!(miss < 0.5, "{hz} Hz: stopped {miss} m from the route's end");
    }
}
