//! The test track's tour: the shipped 6×4 tractor pulls the shipped two-axle trailer (coupled
//! by the combination file `combinations/semi_trailer.combination.ron`) through every part of
//! the test track a combination can take, driven by a [`PathFollower`].

use crate::common;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::{CombinationDescription, FileBlockTypes};
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::test_track::{banked_curve_height, spawn_test_track, truck_tour};
use common::*;

/// How far a body leans from upright (rad).
fn lean(app: &App, e: Entity) -> f32 {
    let up = app.world().get::<Transform>(e).unwrap().rotation * Vec3::Y;
    up.angle_between(Vec3::Y)
}

/// What a tour measured.
struct Tour {
    /// Time to the stop at the end (s).
    time: f32,
    /// Distance along the route (m).
    travelled: f32,
    /// Largest distance of the tractor from the route (m).
    off_route: f32,
    /// Largest articulation angle (rad).
    articulation: f32,
    /// Largest gap at the coupling (m).
    gap: f32,
    /// Largest lean of either body from upright (rad).
    lean: f32,
    /// Highest the tractor rose above its start (m).
    height: f32,
    /// Westmost point the tractor reached (m).
    min_x: f32,
    /// Highest the tractor rose above its start while over the banked curve's arc (m).
    on_curve: f32,
    /// Whether it stopped at the end.
    finished: bool,
    /// Where the tractor stopped (m).
    end: Vec3,
}

/// Drives the combination from the combination file round the tour at `hz` fixed steps per
/// second (at most 500 s), checking every step that everything stays finite.
fn tour(hz: f64) -> Tour {
    let mut app = create_app(hz);
    let combination = CombinationDescription::load(
        ASSET_ROOT,
        "combinations/semi_trailer.combination.ron",
        &FileBlockTypes::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let h_tow = rest_height(&combination.tow);
    let (tractor, trailer) = {
        let world = app.world_mut();
        let mut commands = world.commands();
        spawn_test_track(&mut commands);
        let pair = combination.spawn(&mut commands, Transform::from_xyz(0.0, h_tow, 0.0));
        world.flush();
        pair
    };
    let steps_per_second = hz.round() as usize;
    tick(&mut app, steps_per_second);
    app.world_mut()
        .entity_mut(tractor)
        .insert(PathFollower::new(truck_tour()).with_shift(ShiftSchedule {
            up_rpm: 1500.0,
            down_rpm: 1000.0,
            start_gear: 3,
            hold: 1.5,
        }));
    let mut r = Tour {
        time: 0.0,
        travelled: 0.0,
        off_route: 0.0,
        articulation: 0.0,
        gap: 0.0,
        lean: 0.0,
        height: 0.0,
        min_x: 0.0,
        on_curve: 0.0,
        finished: false,
        end: Vec3::ZERO,
    };
    for step in 0..steps_per_second * 500 {
        tick(&mut app, 1);
        let follower = app.world().get::<PathFollower>(tractor).unwrap().clone();
        let (p, q) = (position(&app, tractor), position(&app, trailer));
        assert!(p.is_finite() && q.is_finite(), "finite at step {step}");
        r.off_route = r.off_route.max(follower.cross_track_error().abs());
        r.articulation = r
            .articulation
            .max(articulation(&app, tractor, trailer).abs());
        r.gap = r.gap.max(coupling_gap(&app, tractor, trailer));
        r.lean = r.lean.max(lean(&app, tractor)).max(lean(&app, trailer));
        r.height = r.height.max(p.y - h_tow);
        r.min_x = r.min_x.min(p.x);
        if p.z < -262.0 && banked_curve_height(p.x, p.z).is_some() {
            r.on_curve = r.on_curve.max(p.y - h_tow);
        }
        if step % (10 * steps_per_second) == 0 {
            let t = get::<VehicleTelemetry>(&app, tractor);
            println!(
                "{hz} Hz, t {:3} s: segment {:2}, at ({:6.1}, {:4.1}, {:6.1}), {:5.2} m/s, gear {:2}, {:4.0} rpm, off route {:5.2} m, articulation {:5.1}°",
                step / steps_per_second,
                follower.segment(),
                p.x,
                p.y,
                p.z,
                t.forward_speed,
                t.gear,
                t.engine_rpm,
                follower.cross_track_error(),
                articulation(&app, tractor, trailer).to_degrees()
            );
        }
        r.time = (step + 1) as f32 / hz as f32;
        r.travelled = follower.travelled();
        r.finished = follower.finished();
        r.end = p;
        if r.finished {
            break;
        }
    }
    println!(
        "tour at {hz} Hz: {:.0} m in {:.1} s; off route ≤ {:.2} m, articulation ≤ {:.1}°, gap ≤ {:.4} m, lean ≤ {:.1}°, highest {:.2} m, {:.2} m on the banked curve",
        r.travelled,
        r.time,
        r.off_route,
        r.articulation.to_degrees(),
        r.gap,
        r.lean.to_degrees(),
        r.height,
        r.on_curve
    );
    r
}

/// The whole tour (about 1.3 km: the banked curve, the 10 % hill, the speed bumps, two
/// U-turns, the wet and icy patches) with the laden 27 t combination. It reaches the end and
/// stops there; the tractor stays within 2 m of the route (the hill is 8 m wide, the
/// combination 2.5 m); the coupling holds (gap below 5 cm); the articulation stays below 60°
/// (the tightest U-turn, 10 m radius, needs about 42° in steady state); neither body leans
/// more than 20° (the bank is 15°); it climbed the hill (a 2 m plateau) and crossed the speed
/// bumps; it rode up the banked curve; and it stops within 1 m of the route's end.
#[test]
fn semi_and_trailer_tour_the_test_track() {
    let r = tour(60.0);
    assert!(r.finished, "stopped at the end of the tour");
    let length: f32 = truck_tour()
        .windows(2)
        .map(|w| (w[1].position - w[0].position).length())
        .sum();
    assert!(
        (r.travelled - length).abs() < 1.0,
        "stopped {} m from the end",
        length - r.travelled
    );
    assert!(
        r.end.x.abs() < 40.0 && r.end.z < -235.0,
        "ends past the ice: {}",
        r.end
    );
    assert!(r.off_route < 2.0, "off the route by {} m", r.off_route);
    assert!(r.gap < 0.05, "coupling gap {} m", r.gap);
    assert!(r.articulation < 60f32.to_radians());
    assert!(r.lean < 20f32.to_radians());
    assert!(r.height > 1.8, "climbed the 2 m hill: {} m", r.height);
    assert!(r.min_x < -55.0, "reached the speed bumps");
    // On a 37 m radius, 3 m inside the centre line, the banked surface stands
    // 3 m × tan 15° + 0.01 m (its lift) = 0.814 m above the ground: the tractor rode up on it.
    let expected = banked_curve_height(3.0, -260.0 - 1e-3).unwrap();
    assert!((expected - 0.814).abs() < 0.01, "{expected}");
    assert!(
        (r.on_curve - expected).abs() < 0.15,
        "rose {} m on the banked curve, where its surface is {expected} m up",
        r.on_curve
    );
}

/// The same tour at 30 and 120 Hz fixed steps: the time to the end within 2 % of each other,
/// the largest distance from the route within 0.2 m and the largest articulation within 2°.
#[test]
fn the_tour_is_the_same_at_30_and_120_hz() {
    let (slow, fast) = (tour(30.0), tour(120.0));
    assert!(slow.finished && fast.finished);
    assert!(
        (slow.time - fast.time).abs() < 0.02 * fast.time,
        "{} s vs {} s",
        slow.time,
        fast.time
    );
    assert!((slow.off_route - fast.off_route).abs() < 0.2);
    assert!((slow.articulation - fast.articulation).abs() < 2f32.to_radians());
}

/// A route with a NaN point is refused: the vehicle brakes to a stop instead of steering with
/// NaN, and stays finite.
#[test]
fn a_bad_route_stops_the_vehicle() {
    let d = load_vehicle("vehicles/hatchback.vehicle.ron");
    let mut app = create_app(60.0);
    spawn_flat_ground(&mut app, 1.0);
    let car = spawn_described(&mut app, &d, Transform::from_xyz(0.0, rest_height(&d), 0.0));
    tick(&mut app, 30);
    flying_start(&mut app, car, 10.0);
    let mut route = truck_tour();
    route[3].position.x = f32::NAN;
    let follower = PathFollower::new(route);
    assert!(
        follower
            .validate()
            .unwrap_err()
            .contains("route[3].position")
    );
    app.world_mut().entity_mut(car).insert(follower);
    tick(&mut app, 5 * 60);
    let c = get::<VehicleControls>(&app, car);
    assert_eq!((c.throttle, c.brake), (0.0, 1.0));
    assert!(c.steering.is_finite());
    assert!(position(&app, car).is_finite());
    assert!(velocity(&app, car).length() < 0.1, "stopped");
}
