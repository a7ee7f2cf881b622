//! Trailers: the shipped 6×4 tractor towing the shipped two-axle centre-axle trailer through a
//! [`Hitch`] (a ball joint, the trailer's brakes following the tractor's pedal).

mod common;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::FileBlockTypes;
use bevy_vehicle_physics::prelude::*;
use common::*;

/// Height of the coupling above the ground (m).
const COUPLING_HEIGHT: f32 = 0.9;

/// Spawns the combination on flat ground facing −Z, coupled; returns (tractor, trailer).
fn combination(app: &mut App) -> (Entity, Entity) {
    app.world_mut().spawn((
        bevy_rapier3d::prelude::RigidBody::Fixed,
        // A half-space: unbounded, and exact for ray and shape casts however far it goes.
        bevy_rapier3d::prelude::Collider::halfspace(Vec3::Y).unwrap(),
        bevy_rapier3d::prelude::Friction::coefficient(0.9),
        Transform::default(),
    ));
    let tractor_file = load_vehicle("vehicles/semi_truck.vehicle.ron");
    let trailer_file = load_vehicle("vehicles/trailer.vehicle.ron");
    let (h_tow, h_trailer) = (rest_height(&tractor_file), rest_height(&trailer_file));
    let [tow_point, trailer_point] = [&tractor_file, &trailer_file].map(|d| {
        Coupling(Vec3::from(
            d.coupling.expect("the file gives its coupling point"),
        ))
    });
    // Both points sit 0.9 m above the ground.
    assert!((tow_point.0.y + h_tow - COUPLING_HEIGHT).abs() < 1e-6);
    assert!((trailer_point.0.y + h_trailer - COUPLING_HEIGHT).abs() < 1e-6);
    let world = app.world_mut();
    let mut commands = world.commands();
    let tractor = tractor_file.spawn(&mut commands, Transform::from_xyz(0.0, h_tow, 0.0));
    let trailer = trailer_file.spawn(
        &mut commands,
        Transform::from_xyz(0.0, h_trailer, tow_point.0.z - trailer_point.0.z),
    );
    commands
        .entity(trailer)
        .insert(Hitch::between(tractor, &tow_point, &trailer_point));
    world.flush();
    (tractor, trailer)
}

/// Holds the tractor near `speed` (m/s) with throttle and brake.
fn cruise(app: &mut App, tractor: Entity, speed: f64) {
    let v = get::<VehicleTelemetry>(app, tractor).forward_speed;
    controls(app, tractor, |c| {
        c.throttle = (0.5 * (speed - v)).clamp(0.0, 1.0);
        c.brake = (0.5 * (v - speed - 0.5)).clamp(0.0, 1.0);
    });
}

/// A 90° right turn at 20 km/h: the trailer follows round (its heading turns by more than 60°),
/// the articulation stays finite and below 60°, and the coupling holds (gap below 5 cm).
#[test]
fn combination_turns_90_degrees_at_20_km_h() {
    let mut app = create_app(60.0);
    let (tractor, trailer) = combination(&mut app);
    tick(&mut app, 60);
    controls(&mut app, tractor, |c| c.gear = 5);
    let target = 20.0 / 3.6;
    for _ in 0..60 * 15 {
        cruise(&mut app, tractor, target);
        tick(&mut app, 1);
    }
    let speed = get::<VehicleTelemetry>(&app, tractor).forward_speed;
    assert!(
        (speed - target).abs() < 1.0,
        "cruising at {speed} m/s before the turn"
    );
    let (start_tractor, start_trailer) = (yaw(&app, tractor), yaw(&app, trailer));
    let (mut max_articulation, mut max_gap) = (0.0f32, 0.0f32);
    let mut turned = false;
    for step in 0..60 * 40 {
        cruise(&mut app, tractor, target);
        let heading = yaw(&app, tractor) - start_tractor;
        turned |= heading < -core::f32::consts::FRAC_PI_2;
        controls(&mut app, tractor, |c| {
            c.steering = if turned { 0.0 } else { 0.2 }
        });
        tick(&mut app, 1);
        let a = articulation(&app, tractor, trailer);
        assert!(a.is_finite() && position(&app, trailer).is_finite());
        max_articulation = max_articulation.max(a.abs());
        max_gap = max_gap.max(coupling_gap(&app, tractor, trailer));
        if step % 120 == 0 {
            println!(
                "t {:.0}: tractor yaw {:.1}°, articulation {:.1}°, v {:.2}",
                step as f32 / 60.0,
                yaw(&app, tractor).to_degrees(),
                a.to_degrees(),
                get::<VehicleTelemetry>(&app, tractor).forward_speed
            );
        }
    }
    let trailer_turn = yaw(&app, trailer) - start_trailer;
    println!(
        "turn: tractor {:.1}°, trailer {:.1}°, max articulation {:.1}°, max coupling gap {:.3} m",
        (yaw(&app, tractor) - start_tractor).to_degrees(),
        trailer_turn.to_degrees(),
        max_articulation.to_degrees(),
        max_gap
    );
    assert!(turned, "the tractor turned 90°");
    assert!(
        trailer_turn < -60f32.to_radians(),
        "the trailer followed: {}°",
        trailer_turn.to_degrees()
    );
    assert!(
        max_articulation < 60f32.to_radians(),
        "articulation {}°",
        max_articulation.to_degrees()
    );
    assert!(max_gap < 0.05, "coupling gap {max_gap} m");
}

/// Braking the combination from 80 km/h on μ = 0.9 with the tractor's pedal (the trailer's
/// brakes follow it): it stops in a straight line, without jack-knifing (articulation below
/// 3°, less than 0.5 m off its line), no shorter than friction allows (`v²/(2·μ·g)`).
#[test]
fn combination_brakes_straight_from_80_km_h() {
    let mut app = create_app(60.0);
    let (tractor, trailer) = combination(&mut app);
    tick(&mut app, 60);
    // Up to speed in 7th and 9th gear, then brake.
    let target = 80.0 / 3.6;
    controls(&mut app, tractor, |c| c.gear = 5);
    for step in 0..60 * 60 {
        let v = get::<VehicleTelemetry>(&app, tractor).forward_speed;
        let rpm = get::<VehicleTelemetry>(&app, tractor).engine_rpm;
        controls(&mut app, tractor, |c| {
            c.throttle = 1.0;
            if rpm > 1900.0 && c.gear < 12 && step % 90 == 0 {
                c.gear += 1;
            }
        });
        tick(&mut app, 1);
        if v >= target {
            break;
        }
    }
    let v0 = get::<VehicleTelemetry>(&app, tractor).forward_speed;
    assert!(v0 >= target - 0.5, "reached only {v0} m/s");
    println!(
        "before braking: tractor at {}, yaw {:.2}°, trailer yaw {:.2}°",
        position(&app, tractor),
        yaw(&app, tractor).to_degrees(),
        yaw(&app, trailer).to_degrees()
    );
    // The test is about the coupling: with the files' ABS off, the pedal's torque reaches
    // every trailer wheel in full, and a wheel locking would show as a jack-knife.
    for vehicle in [tractor, trailer] {
        set::<Brakes>(&mut app, vehicle, |b| b.anti_lock = None);
    }
    let start = position(&app, tractor);
    let line = app.world().get::<Transform>(tractor).unwrap().rotation * Vec3::NEG_Z;
    controls(&mut app, tractor, |c| {
        c.throttle = 0.0;
        c.gear = 0;
        c.brake = 0.6;
    });
    let mut max_articulation = 0.0f32;
    tick(&mut app, 1);
    // The trailer brakes with the tractor's pedal: 0.6 of its 18 kN·m at every wheel.
    assert_eq!(get::<VehicleControls>(&app, trailer).brake, 0.6);
    for w in wheels(&mut app, trailer) {
        let torque = get::<WheelState>(&app, w).brake_torque;
        assert!(
            (torque - 0.6 * 18_000.0).abs() < 1e-6,
            "trailer wheel brake {torque} N·m"
        );
    }
    for _ in 0..60 * 20 {
        tick(&mut app, 1);
        max_articulation = max_articulation.max(articulation(&app, tractor, trailer).abs());
        if get::<VehicleTelemetry>(&app, tractor).forward_speed < 0.05 {
            break;
        }
    }
    let travelled = position(&app, tractor) - start;
    let along = travelled.dot(line);
    let off_line = (travelled - line * along).with_y(0.0).length();
    let bound = friction_stopping_distance(v0, 0.9);
    println!(
        "braking from {:.1} km/h: {along:.1} m (friction bound {bound:.1} m), {off_line:.3} m off line, max articulation {:.2}°",
        v0 * 3.6,
        max_articulation.to_degrees()
    );
    assert!(
        get::<VehicleTelemetry>(&app, tractor).forward_speed < 0.05,
        "stopped"
    );
    assert!(
        f64::from(along) >= bound,
        "{along} m is shorter than friction allows"
    );
    assert!(off_line < 0.5, "{off_line} m off line");
    assert!(
        max_articulation < 3f32.to_radians(),
        "articulation {}°",
        max_articulation.to_degrees()
    );
}

// ---- Combination files ----------------------------------------------------------------------------

/// Reads `text` as the combination file `combinations/test.combination.ron`, with the shipped
/// vehicle files.
fn combination_file(
    text: &str,
) -> Result<
    bevy_vehicle_physics::assets::CombinationDescription,
    bevy_vehicle_physics::assets::VehicleFileError,
> {
    bevy_vehicle_physics::assets::CombinationDescription::parse(
        "combinations/test.combination.ron",
        text,
        &FileBlockTypes::default(),
        |p| std::fs::read_to_string(format!("{ASSET_ROOT}/{p}")).map_err(|e| e.to_string()),
    )
}

/// The shipped combination file reads, with the coupling points of its two vehicle files;
/// spawned, the trailer stands with its eye on the tractor's jaw and is hitched to it.
#[test]
fn the_shipped_combination_file_couples_its_vehicles() {
    let c = bevy_vehicle_physics::assets::CombinationDescription::load(
        ASSET_ROOT,
        "combinations/semi_trailer.combination.ron",
        &FileBlockTypes::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.tow_point, Vec3::from(c.tow.coupling.unwrap()));
    assert_eq!(c.trailer_point, Vec3::from(c.trailer.coupling.unwrap()));
    let mut app = create_app(60.0);
    spawn_flat_ground(&mut app, 0.9);
    let placed = Transform::from_xyz(3.0, rest_height(&c.tow), -2.0)
        .with_rotation(Quat::from_rotation_y(0.5));
    let (tractor, trailer) = {
        let world = app.world_mut();
        let mut commands = world.commands();
        let pair = c.spawn(&mut commands, placed);
        world.flush();
        pair
    };
    assert_eq!(get::<Hitch>(&app, trailer).tow, tractor);
    // Placed with the coupling points together, at the same heading.
    assert!(coupling_gap(&app, tractor, trailer) < 1e-4);
    assert!(articulation(&app, tractor, trailer).abs() < 1e-6);
    // Both stand on their wheels at their own ride heights: nothing jumps when it settles.
    tick(&mut app, 120);
    assert!(coupling_gap(&app, tractor, trailer) < 0.01);
    assert!(velocity(&app, trailer).length() < 0.05);
    let trailer_height = position(&app, trailer).y;
    assert!(
        (trailer_height - rest_height(&c.trailer)).abs() < 0.05,
        "{trailer_height}"
    );
}

/// Bad combination files are refused with the file, line, field and reason.
#[test]
fn bad_combination_files_are_refused_with_located_errors() {
    let head = "Combination(\n    name: \"test\",\n";
    let cases: [(&str, usize, &str, &str); 5] = [
        // A vehicle without a coupling point as the trailer.
        (
            "    tow: \"vehicles/semi_truck.vehicle.ron\",\n    trailer: \"vehicles/hatchback.vehicle.ron\",\n)",
            4,
            "trailer",
            "has no `coupling` point",
        ),
        // A vehicle file that does not exist.
        (
            "    tow: \"vehicles/nope.vehicle.ron\",\n    trailer: \"vehicles/trailer.vehicle.ron\",\n)",
            3,
            "tow",
            "cannot read file 'vehicles/nope.vehicle.ron'",
        ),
        // A coupling point that is not finite.
        (
            "    tow: \"vehicles/semi_truck.vehicle.ron\",\n    trailer: \"vehicles/trailer.vehicle.ron\",\n    tow_point: Some((0.0, NaN, 3.6)),\n)",
            5,
            "tow_point",
            "must be finite",
        ),
        // An unknown field.
        (
            "    tow: \"vehicles/semi_truck.vehicle.ron\",\n    trailer: \"vehicles/trailer.vehicle.ron\",\n    trailer_pont: None,\n)",
            5,
            "trailer_pont",
            "trailer_point",
        ),
        // A missing field.
        (
            "    tow: \"vehicles/semi_truck.vehicle.ron\",\n)",
            1,
            "",
            "trailer",
        ),
    ];
    for (rest, line, field, reason) in cases {
        let text = format!("{head}{rest}");
        let e = combination_file(&text).expect_err(&text);
        println!("{e}");
        assert_eq!(
            e.file,
            std::path::Path::new("combinations/test.combination.ron")
        );
        assert_eq!(e.line, line, "{e}");
        assert!(e.field.contains(field), "{e}");
        assert!(e.reason.contains(reason), "{e}");
    }
    // An error inside a vehicle file names that file.
    let e = combination_file(&format!(
        "{head}    tow: \"vehicles/semi_truck.vehicle.ron\",\n    trailer: \"topologies/rwd.topology.ron\",\n)"
    ))
    .expect_err("a topology is not a vehicle");
    println!("{e}");
    assert_eq!(e.file, std::path::Path::new("topologies/rwd.topology.ron"));
}
