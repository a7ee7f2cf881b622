//! The test track's tour: the shipped 6×4 tractor pulls the shipped two-axle trailer (coupled
//! by the combination file `combinations/semi_trailer.combination.ron`) through every part of
//! the test track a combination can take, driven by a [`PathFollower`].

mod common;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::{CombinationDescription, FileBlockTypes};
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::test_track::{spawn_test_track, truck_tour};
use common::*;

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// How far a body leans from upright (rad).
fn lean(app: &App, e: Entity) -> f32 {
    let up = app.world().get::<Transform>(e).unwrap().rotation * Vec3::Y;
    up.angle_between(Vec3::Y)
}

/// The whole tour (about 1.3 km: the banked curve, the 10 % hill, the speed bumps, two
/// U-turns, the wet and icy patches) with the laden 27 t combination. It reaches the end and
/// stops there; the tractor stays within 2 m of the route (the hill is 8 m wide, the
/// combination 2.5 m); the coupling holds (gap below 5 cm); the articulation stays below 60°
/// (the tightest U-turn, 10 m radius, needs about 42° in steady state); neither body leans
/// more than 20° (the bank is 15°); it climbed the hill (a 2 m plateau) and crossed the speed
/// bumps; and it stops within 1 m of the route's end.
#[test]
fn semi_and_trailer_tour_the_test_track() {
    let mut app = create_app(60.0);
    let combination = CombinationDescription::load(
        ASSETS,
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
    tick(&mut app, 60);
    app.world_mut()
        .entity_mut(tractor)
        .insert(PathFollower::new(truck_tour()).with_shift(ShiftSchedule {
            up_rpm: 1500.0,
            down_rpm: 1000.0,
            start_gear: 3,
            hold: 1.5,
        }));
    let (mut max_cte, mut max_articulation, mut max_gap, mut max_lean) =
        (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    let (mut max_height, mut min_x) = (0.0f32, 0.0f32);
    let mut seconds = 0;
    for step in 0..60 * 500 {
        tick(&mut app, 1);
        let follower = app.world().get::<PathFollower>(tractor).unwrap().clone();
        let (p, q) = (position(&app, tractor), position(&app, trailer));
        assert!(p.is_finite() && q.is_finite(), "finite at step {step}");
        max_cte = max_cte.max(follower.cross_track_error().abs());
        max_articulation = max_articulation.max(articulation(&app, tractor, trailer).abs());
        max_gap = max_gap.max(coupling_gap(&app, tractor, trailer));
        max_lean = max_lean.max(lean(&app, tractor)).max(lean(&app, trailer));
        max_height = max_height.max(p.y - h_tow);
        min_x = min_x.min(p.x);
        if step % 600 == 0 {
            let t = get::<VehicleTelemetry>(&app, tractor);
            println!(
                "t {:3} s: segment {:2}, at ({:6.1}, {:4.1}, {:6.1}), {:5.2} m/s, gear {:2}, {:4.0} rpm, off route {:5.2} m, articulation {:5.1}°",
                step / 60,
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
        seconds = step / 60;
        if follower.finished() {
            break;
        }
    }
    let follower = app.world().get::<PathFollower>(tractor).unwrap().clone();
    println!(
        "tour: {:.0} m in {seconds} s; off route ≤ {max_cte:.2} m, articulation ≤ {:.1}°, gap ≤ {:.4} m, lean ≤ {:.1}°, highest {max_height:.2} m",
        follower.travelled(),
        max_articulation.to_degrees(),
        max_gap,
        max_lean.to_degrees()
    );
    assert!(follower.finished(), "stopped at the end of the tour");
    let length: f32 = truck_tour()
        .windows(2)
        .map(|w| (w[1].position - w[0].position).length())
        .sum();
    assert!(
        (follower.travelled() - length).abs() < 1.0,
        "stopped {} m from the end",
        length - follower.travelled()
    );
    let end = position(&app, tractor);
    assert!(
        end.x.abs() < 40.0 && end.z < -235.0,
        "ends past the ice: {end}"
    );
    assert!(max_cte < 2.0, "off the route by {max_cte} m");
    assert!(max_gap < 0.05, "coupling gap {max_gap} m");
    assert!(max_articulation < 60f32.to_radians());
    assert!(max_lean < 20f32.to_radians());
    assert!(max_height > 1.8, "climbed the 2 m hill: {max_height} m");
    assert!(min_x < -55.0, "reached the speed bumps");
}
