//! Vehicle files as Bevy assets: spawning from a handle, and retuning the live vehicle when its
//! file changes on disk.

use crate::common;

use std::path::{Path, PathBuf};

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::assets::{SpawnedFrom, VehicleAssetStatus};
use bevy_vehicle_physics::prelude::*;
use common::*;

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");
const VEHICLE: &str = "car.vehicle.ron";

/// A scratch asset folder holding a copy of the hatchback and the files it references.
fn scratch_assets(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bvp_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for file in [
        "topologies/fwd.topology.ron",
        "topologies/rwd.topology.ron",
        "tires/passenger_205_60r15.tire.ron",
        "engines/vw_ea211_1_4_tsi_110kw.csv",
    ] {
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(ASSETS).join(file), to).unwrap();
    }
    let vehicle =
        std::fs::read_to_string(Path::new(ASSETS).join("vehicles/hatchback.vehicle.ron")).unwrap();
    std::fs::write(dir.join(VEHICLE), vehicle).unwrap();
    dir
}

/// Replaces `from` with `to` in the scratch vehicle file and asks the asset server to reload it
/// (what the file watcher does on a save).
fn edit(app: &mut App, dir: &Path, from: &str, to: &str) {
    let path = dir.join(VEHICLE);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "`{from}` not in the vehicle file");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    app.world().resource::<AssetServer>().reload(VEHICLE);
}

/// A headless app with an asset server on `dir`; every update is one 60 Hz fixed step.
fn create_asset_app(dir: &Path) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.to_string_lossy().into_owned(),
            ..default()
        },
        VehiclePhysicsPlugins,
    ))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();
    app
}

/// Updates until `done` holds, at most `limit` times; returns how many updates it took.
fn update_until(app: &mut App, limit: usize, mut done: impl FnMut(&mut App) -> bool) -> usize {
    for n in 0..limit {
        if done(app) {
            return n;
        }
        app.update();
        // Asset loads run on other threads; give them a moment.
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("not done after {limit} updates");
}

/// Spawns the scratch vehicle file with a `VehicleAsset` on the ground and updates until it is
/// built; returns the vehicle.
fn spawn_from_file(app: &mut App) -> Entity {
    let handle = app.world().resource::<AssetServer>().load(VEHICLE);
    let car = app
        .world_mut()
        .spawn((VehicleAsset(handle), Transform::from_xyz(0.0, 0.33, 0.0)))
        .id();
    update_until(app, 2000, |app| {
        app.world().get::<SpawnedFrom>(car).is_some()
    });
    car
}

/// An app on the scratch folder `dir` with its vehicle file built on flat ground and pulling
/// away gently in second gear (so the front tires keep their grip) for 2 s, past 1 m/s, and
/// the vehicle.
fn pulling_away_from_file(dir: &Path) -> (App, Entity) {
    let mut app = create_asset_app(dir);
    spawn_flat_ground(&mut app, 1.0);
    let car = spawn_from_file(&mut app);
    tick(&mut app, 60);
    controls(&mut app, car, |c| {
        c.gear = 2;
        c.throttle = 0.3;
    });
    tick(&mut app, 120);
    let v = velocity(&app, car);
    assert!(v.length() > 1.0, "not moving: {v}");
    (app, car)
}

/// The differential's torque multiplication: output torque over input torque.
fn differential_gain(app: &mut App, car: Entity) -> f64 {
    let world = app.world_mut();
    let mut q = world.query::<(&BlockOf, &Name, &DifferentialSensors)>();
    let (_, _, s) = q
        .iter(world)
        .find(|(b, n, _)| b.0 == car && n.as_str() == "differential")
        .expect("the car has a differential");
    (s.left_torque + s.right_torque) / s.input_torque
}

fn final_drive(app: &App, car: Entity) -> f64 {
    let spawned = get::<SpawnedFrom>(app, car);
    spawned
        .description
        .blocks
        .iter()
        .find_map(|b| b.block.as_any().downcast_ref::<Differential>())
        .expect("a differential")
        .ratio
}

fn engine_rpm(app: &App, car: Entity) -> f64 {
    get::<VehicleTelemetry>(app, car).engine_rpm
}

#[test]
fn editing_the_file_retunes_the_live_vehicle() {
    let dir = scratch_assets("retune");
    let (mut app, car) = pulling_away_from_file(&dir);
    let gain = differential_gain(&mut app, car);
    // Differential: output torque = ratio × efficiency × input torque.
    assert!(
        (gain - 3.647 * 0.98).abs() < 1e-6 * gain,
        "gain {gain} before the edit"
    );

    // A new final drive on disk reaches the running car within a few steps, and nothing else
    // jumps: the pose moves on by v·dt per step, the velocity and the engine speed carry on.
    let (p0, v0, rpm0) = (
        position(&app, car),
        velocity(&app, car),
        engine_rpm(&app, car),
    );
    edit(&mut app, &dir, "ratio: 3.647", "ratio: 4.5");
    let steps = update_until(&mut app, 2000, |app| final_drive(app, car) == 4.5);
    app.update();
    let steps = steps + 1;
    let (p1, v1, rpm1) = (
        position(&app, car),
        velocity(&app, car),
        engine_rpm(&app, car),
    );
    let dt = 1.0 / 60.0;
    let travelled = (p1 - p0).length();
    let expected = v0.length() * steps as f32 * dt as f32;
    assert!(
        (travelled - expected).abs() < 0.05 * expected + 0.01,
        "moved {travelled} m in {steps} steps at {} m/s",
        v0.length()
    );
    assert!(
        (v1 - v0).length() < 0.1 * v0.length() + 0.05,
        "velocity {v0} -> {v1}"
    );
    assert!(rpm1 > 0.5 * rpm0, "engine speed {rpm0} -> {rpm1} rpm");
    tick(&mut app, 5);
    let gain = differential_gain(&mut app, car);
    assert!(
        (gain - 4.5 * 0.98).abs() < 1e-6 * gain,
        "gain {gain} after the edit"
    );

    // A broken edit is refused with its location, and the car keeps running on its last good
    // settings.
    edit(&mut app, &dir, "ratio: 4.5", "ratio: 0.0");
    update_until(&mut app, 2000, |app| {
        matches!(
            app.world().get::<VehicleAssetStatus>(car),
            Some(VehicleAssetStatus::Refused(_))
        )
    });
    let VehicleAssetStatus::Refused(error) = get::<VehicleAssetStatus>(&app, car) else {
        unreachable!()
    };
    assert_eq!(
        (error.field.as_str(), error.file.to_str().unwrap()),
        ("blocks.differential.ratio", VEHICLE)
    );
    let text = std::fs::read_to_string(dir.join(VEHICLE)).unwrap();
    let line = text.lines().position(|l| l.contains("ratio: 0.0")).unwrap() + 1;
    assert_eq!(error.line, line, "{error}");
    let v_before = velocity(&app, car).length();
    tick(&mut app, 60);
    assert_eq!(final_drive(&app, car), 4.5);
    let v_after = velocity(&app, car).length();
    assert!(
        v_after > v_before && v_after.is_finite(),
        "the car stopped pulling: {v_before} -> {v_after} m/s"
    );
    let gain = differential_gain(&mut app, car);
    assert!((gain - 4.5 * 0.98).abs() < 1e-6 * gain);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_topology_change_rebuilds_the_drivetrain_and_keeps_the_body_moving() {
    let dir = scratch_assets("topology");
    let (mut app, car) = pulling_away_from_file(&dir);
    let old_blocks = get::<SpawnedFrom>(&app, car).blocks;
    let (p0, v0) = (position(&app, car), velocity(&app, car));

    // Front-wheel drive becomes rear-wheel drive.
    edit(
        &mut app,
        &dir,
        "topologies/fwd.topology.ron",
        "topologies/rwd.topology.ron",
    );
    let steps = update_until(&mut app, 2000, |app| {
        get::<SpawnedFrom>(app, car)
            .description
            .topology
            .connections
            .iter()
            .any(|c| c.block == "wheel_rl")
    });
    let (p1, v1) = (position(&app, car), velocity(&app, car));
    let expected = v0.length() * steps as f32 / 60.0;
    assert!(
        ((p1 - p0).length() - expected).abs() < 0.05 * expected + 0.01,
        "pose jumped: {p0} -> {p1} in {steps} steps"
    );
    assert!(
        (v1 - v0).length() < 0.1 * v0.length() + 0.05,
        "{v0} -> {v1}"
    );
    // New block entities, the old ones gone, and the drivetrain running again.
    let new_blocks = get::<SpawnedFrom>(&app, car).blocks;
    for entity in old_blocks.values() {
        assert!(
            app.world().get_entity(*entity).is_err(),
            "{entity} left behind"
        );
    }
    tick(&mut app, 120);
    assert_eq!(
        *app.world().get::<Drivetrain>(car).unwrap().status(),
        DrivetrainStatus::Ready
    );
    let rear = new_blocks["wheel_rl"];
    let torque = get::<WheelSensors>(&app, rear).drive_torque;
    assert!(torque > 10.0, "rear wheel not driven: {torque} N·m");
    assert!(
        velocity(&app, car).length() > v1.length(),
        "not accelerating"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Insertions of `SpawnedFrom`: one per build or retune of a vehicle from its file.
#[derive(Resource, Default)]
struct Applied(usize);

/// Loading a file builds its vehicle once: the asset's `Added` event, which may arrive a frame
/// after the vehicle was built from the loaded file, does not apply it a second time.
/// A built vehicle handed another file's handle becomes that file's vehicle once the file has
/// loaded (its status `Loading` until then, `Applied` once it is), as a reload whose topology
/// changed: here the front-drive hatchback becomes a rear-drive car of 1500 kg, its blocks
/// spawned again, while the body rolls on. Until 2026-12-02 the new handle was ignored until
/// its file next changed on disk, the status `Applied` meanwhile (found by an outside test).
#[test]
fn another_files_handle_makes_the_vehicle_that_file() {
    let dir = scratch_assets("swap");
    let other = std::fs::read_to_string(dir.join(VEHICLE))
        .unwrap()
        .replacen("Hatchback (VW Golf VII 1.4 TSI)", "Other car", 1)
        .replacen(
            "topologies/fwd.topology.ron",
            "topologies/rwd.topology.ron",
            1,
        )
        .replacen("mass: 1345.0", "mass: 1500.0", 1);
    std::fs::write(dir.join("other.vehicle.ron"), other).unwrap();
    let (mut app, car) = pulling_away_from_file(&dir);
    let old_blocks = get::<SpawnedFrom>(&app, car).blocks;

    let handle = app
        .world()
        .resource::<AssetServer>()
        .load("other.vehicle.ron");
    app.world_mut().entity_mut(car).insert(VehicleAsset(handle));
    update_until(&mut app, 2000, |app| {
        get::<SpawnedFrom>(app, car).description.name == "Other car"
    });
    assert_eq!(
        get::<VehicleAssetStatus>(&app, car),
        VehicleAssetStatus::Applied
    );
    tick(&mut app, 2);
    let spawned = get::<SpawnedFrom>(&app, car);
    assert_eq!(spawned.description.name, "Other car");
    assert_eq!(get::<Name>(&app, car).as_str(), "Other car");
    assert_eq!(spawned.description.chassis.mass, 1500.0);
    assert!(
        spawned
            .description
            .topology
            .connections
            .iter()
            .any(|c| c.block == "wheel_rl"),
        "rear-wheel drive"
    );
    assert!(
        old_blocks
            .values()
            .all(|b| app.world().get_entity(*b).is_err())
    );
    assert!(drivetrain(&app, car).error().is_none());
    let speed = velocity(&app, car).length();
    assert!(speed > 1.0, "the body rolls on: {speed} m/s");
}

#[test]
fn a_loaded_file_is_applied_once() {
    let dir = scratch_assets("once");
    let mut app = create_asset_app(&dir);
    app.init_resource::<Applied>()
        .add_observer(|_: On<Insert, SpawnedFrom>, mut n: ResMut<Applied>| n.0 += 1);
    spawn_flat_ground(&mut app, 1.0);
    let car = spawn_from_file(&mut app);
    tick(&mut app, 60);
    assert_eq!(
        app.world().resource::<Applied>().0,
        1,
        "applications of the file"
    );
    // An edit is one more.
    edit(&mut app, &dir, "ratio: 3.647", "ratio: 4.5");
    update_until(&mut app, 2000, |app| final_drive(app, car) == 4.5);
    tick(&mut app, 10);
    assert_eq!(app.world().resource::<Applied>().0, 2, "after one edit");
    std::fs::remove_dir_all(&dir).ok();
}

/// Adding a module to the file installs it on the running car; taking it out gives the slot
/// back to the built-in (for the drivetrain, the block graph).
#[test]
fn editing_the_modules_reinstalls_them() {
    let dir = scratch_assets("modules");
    let mut app = create_asset_app(&dir);
    spawn_flat_ground(&mut app, 1.0);
    let car = spawn_from_file(&mut app);
    tick(&mut app, 10);
    let modules = |app: &App| {
        let m = get_modules(app, car);
        (
            m.drivetrain_name().map(str::to_owned),
            m.anti_roll_bar_name(0).map(str::to_owned),
        )
    };
    assert_eq!(modules(&app), (None, None));

    let text = std::fs::read_to_string(dir.join(VEHICLE)).unwrap();
    let end = text.rfind(')').unwrap();
    let with_modules = format!(
        "{}    modules: (drivetrain: DirectDrive(max_torque: 250.0), anti_roll_bars: {{ 0: \
         LinearAntiRollBar(stiffness: 9000.0) }}),\n)\n",
        &text[..end]
    );
    std::fs::write(dir.join(VEHICLE), &with_modules).unwrap();
    app.world().resource::<AssetServer>().reload(VEHICLE);
    update_until(&mut app, 2000, |app| modules(app).0.is_some());
    assert_eq!(
        modules(&app),
        (
            Some("DirectDrive".to_owned()),
            Some("LinearAntiRollBar".to_owned())
        )
    );
    // The direct drive pulls the car away on its own.
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 1.0;
    });
    tick(&mut app, 60);
    assert!(velocity(&app, car).length() > 1.0);

    std::fs::write(dir.join(VEHICLE), &text).unwrap();
    app.world().resource::<AssetServer>().reload(VEHICLE);
    update_until(&mut app, 2000, |app| modules(app).0.is_none());
    assert_eq!(modules(&app), (None, None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The car's modules.
fn get_modules(app: &App, car: Entity) -> &VehicleModules {
    app.world().get::<VehicleModules>(car).unwrap()
}

/// A vehicle file that is not there never becomes an asset: the entity's status says so
/// (`Refused`, naming the file and why, at line 0) instead of `Loading` for ever, and no
/// vehicle is built.
#[test]
fn a_missing_vehicle_file_is_refused_not_loading_for_ever() {
    let dir = scratch_assets("missing");
    let mut app = create_asset_app(&dir);
    let handle = app
        .world()
        .resource::<AssetServer>()
        .load("no_such.vehicle.ron");
    let car = app
        .world_mut()
        .spawn((VehicleAsset(handle), Transform::from_xyz(0.0, 0.33, 0.0)))
        .id();
    update_until(&mut app, 2000, |app| {
        app.world().get::<VehicleAssetStatus>(car) != Some(&VehicleAssetStatus::Loading)
    });
    let Some(VehicleAssetStatus::Refused(error)) = app.world().get::<VehicleAssetStatus>(car)
    else {
        panic!("expected a refusal");
    };
    assert_eq!(error.file, Path::new("no_such.vehicle.ron"));
    assert_eq!((error.line, error.column), (0, 0));
    assert!(
        error.reason.starts_with("cannot load the file: "),
        "{error}"
    );
    assert!(app.world().get::<SpawnedFrom>(car).is_none());
    std::fs::remove_dir_all(&dir).ok();
}
