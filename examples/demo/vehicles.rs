//! The vehicles: the player's, one file of `assets/vehicles/` or `assets/combinations/` (a
//! tow vehicle with its trailer) at a time (switching, reset), twelve parked vehicles beside
//! the start (no AI: parking lock and handbrake on), and simple
//! visuals (a body box, a cabin box and wheel cylinders, meshes made once per vehicle).

use bevy::prelude::*;
use bevy_vehicle_physics::assets::{CombinationDescription, FileBlockTypes, SpawnedFrom};
use bevy_vehicle_physics::input::{DriveAction, Driver};
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;
use bevy_vehicle_physics::test_track::tour_follower;
use leafwing_input_manager::prelude::*;

/// Where vehicles start (m, world frame), facing −Z.
pub const START: Vec3 = Vec3::new(0.0, 1.2, 0.0);

/// Spawns the player and the current vehicle; switches and resets on request.
pub struct VehiclesPlugin;

/// The vehicle or combination file to start with (asset path), from `--vehicle`.
#[derive(Resource, Clone, Debug, Default)]
pub struct StartVehicle(pub Option<String>);

impl Plugin for VehiclesPlugin {
    fn build(&self, app: &mut App) {
        let start = app
            .world()
            .get_resource::<StartVehicle>()
            .and_then(|s| s.0.clone());
        app.insert_resource(Garage::from_folders(start.as_deref()))
            .add_systems(Startup, (spawn_player, spawn_parked))
            .add_systems(
                Update,
                (
                    switch_vehicle,
                    reset_vehicle,
                    toggle_autopilot,
                    track_last_good,
                    add_visuals,
                ),
            );
    }
}

/// The vehicle and combination files, and which one is driven.
#[derive(Resource)]
pub struct Garage {
    /// Asset paths of the vehicle files, sorted, then of the combination files.
    pub files: Vec<String>,
    /// Index of the current one.
    pub current: usize,
}

/// The asset folder.
const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

impl Garage {
    /// Every file of `assets/vehicles/` and `assets/combinations/`, the hatchback first (or
    /// `start`, when it is one of them).
    fn from_folders(start: Option<&str>) -> Self {
        let list = |folder: &str, suffix: &str| {
            let mut files: Vec<String> = std::fs::read_dir(format!("{ASSETS}/{folder}"))
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok())
                        .filter_map(|e| e.file_name().into_string().ok())
                        .filter(|n| n.ends_with(suffix))
                        .map(|n| format!("{folder}/{n}"))
                        .collect()
                })
                .unwrap_or_default();
            files.sort();
            files
        };
        let mut files = list("vehicles", ".vehicle.ron");
        files.extend(list("combinations", ".combination.ron"));
        // The hatchback first: it is the one the README describes.
        if let Some(i) = files
            .iter()
            .position(|f| f == "vehicles/hatchback.vehicle.ron")
        {
            files.swap(0, i);
        }
        let current = match start {
            Some(path) => files.iter().position(|f| f == path).unwrap_or_else(|| {
                error!("--vehicle {path}: not among the garage's files {files:?}");
                0
            }),
            None => 0,
        };
        Garage { files, current }
    }
}

/// Marks the trailer of the player's combination.
#[derive(Component)]
pub struct PlayerTrailer;

/// Marks the vehicle the player drives.
#[derive(Component)]
pub struct PlayerVehicle;

/// Marks a parked vehicle.
#[derive(Component)]
pub struct Parked;

/// How many vehicles stand parked beside the start, unless the `DEMO_PARKED` environment
/// variable gives another number (0 to measure the frame rate without them).
pub const PARKED: usize = 12;

/// The last place the player's vehicle stood upright on its wheels: where a reset puts it.
#[derive(Component, Clone, Copy)]
struct LastGood {
    position: Vec3,
    heading: f32,
}

/// Spawns the player's vehicle from a vehicle file (as an asset, so it reloads when the file
/// changes) or a combination file (read here, the trailer hitched behind); returns the driven
/// vehicle.
fn spawn_vehicle(
    commands: &mut Commands,
    assets: &AssetServer,
    path: &str,
    at: Transform,
) -> Entity {
    let (heading, _, _) = at.rotation.to_euler(EulerRot::YXZ);
    let last_good = LastGood {
        position: at.translation,
        heading,
    };
    if path.ends_with(".combination.ron") {
        match CombinationDescription::load(ASSETS, path, &FileBlockTypes::default()) {
            Ok(combination) => {
                let (tow, trailer) = combination.spawn(commands, at);
                commands.entity(tow).insert((PlayerVehicle, last_good));
                commands.entity(trailer).insert(PlayerTrailer);
                return tow;
            }
            Err(e) => error!("{e}"),
        }
    }
    commands
        .spawn((
            VehicleAsset(assets.load(path.to_owned())),
            at,
            PlayerVehicle,
            last_good,
        ))
        .id()
}

/// Twelve vehicles, every file in turn, parked in two rows either side of the start straight
/// (x = ±14 m), facing down the track, parking lock and handbrake on.
fn spawn_parked(mut commands: Commands, assets: Res<AssetServer>, garage: Res<Garage>) {
    if garage.files.is_empty() {
        return;
    }
    let count = std::env::var("DEMO_PARKED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(PARKED);
    // Vehicle files only: a trailer alone has nothing to stand on at its coupling.
    let files: Vec<&String> = garage
        .files
        .iter()
        .filter(|f| f.ends_with(".vehicle.ron"))
        .collect();
    if files.is_empty() {
        return;
    }
    for i in 0..count {
        let path = files[i % files.len()];
        let side = if i % 2 == 0 { -1.0 } else { 1.0 };
        let row = (i / 2) as f32;
        let at = Vec3::new(side * 14.0, 0.4, 6.0 - 14.0 * row);
        commands.spawn((
            Name::new(format!("parked {i}")),
            VehicleAsset(assets.load(path.clone())),
            Transform::from_translation(at),
            Parked,
            VehicleControls {
                parking: true,
                handbrake: 1.0,
                ..default()
            },
        ));
    }
}

fn spawn_player(mut commands: Commands, assets: Res<AssetServer>, garage: Res<Garage>) {
    let Some(path) = garage.files.get(garage.current) else {
        error!("no vehicle files in assets/vehicles/");
        return;
    };
    let car = spawn_vehicle(
        &mut commands,
        &assets,
        path,
        Transform::from_translation(START),
    );
    commands.spawn(Driver::of(car));
}

fn switch_vehicle(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut garage: ResMut<Garage>,
    mut drivers: Query<(&mut Driver, &ActionState<DriveAction>)>,
    vehicles: Query<(Entity, &Transform), With<PlayerVehicle>>,
    trailers: Query<Entity, With<PlayerTrailer>>,
) {
    for (mut driver, actions) in &mut drivers {
        if !actions.just_pressed(&DriveAction::NextVehicle) || garage.files.is_empty() {
            continue;
        }
        let mut at = Transform::from_translation(START);
        for (vehicle, transform) in &vehicles {
            // Next to where the old one was, upright, facing the same way.
            let (yaw, _, _) = transform.rotation.to_euler(EulerRot::YXZ);
            at = Transform::from_translation(transform.translation + Vec3::Y * 1.0)
                .with_rotation(Quat::from_rotation_y(yaw));
            commands.entity(vehicle).despawn();
        }
        for trailer in &trailers {
            commands.entity(trailer).despawn();
        }
        garage.current = (garage.current + 1) % garage.files.len();
        let path = garage.files[garage.current].clone();
        info!("driving {path}");
        driver.vehicle = Some(spawn_vehicle(&mut commands, &assets, &path, at));
    }
}

/// P hands the player's vehicle to a path follower that drives the test track's tour
/// (joining it where the vehicle is), and takes it back.
fn toggle_autopilot(
    keys: Res<ButtonInput<KeyCode>>,
    mut drivers: Query<&mut Driver>,
    vehicles: Query<(Entity, Has<PathFollower>), With<PlayerVehicle>>,
    mut commands: Commands,
) {
    if !keys.just_pressed(KeyCode::KeyP) {
        return;
    }
    for (vehicle, following) in &vehicles {
        if following {
            commands.entity(vehicle).remove::<PathFollower>();
            for mut driver in &mut drivers {
                driver.vehicle = Some(vehicle);
            }
            info!("autopilot off");
        } else {
            for mut driver in &mut drivers {
                driver.vehicle = None;
            }
            commands.queue(move |world: &mut World| {
                let follower = tour_follower(world, vehicle);
                if let Ok(mut e) = world.get_entity_mut(vehicle) {
                    e.insert(follower);
                }
            });
            info!("autopilot on: the test track's tour");
        }
    }
}

fn track_last_good(mut vehicles: Query<(&Transform, &Velocity, &VehicleTelemetry, &mut LastGood)>) {
    for (transform, velocity, telemetry, mut last) in &mut vehicles {
        let upright = transform.rotation * Vec3::Y;
        if upright.y > 0.9 && telemetry.grounded_wheels >= 3 && velocity.linear.length() < 30.0 {
            let (yaw, _, _) = transform.rotation.to_euler(EulerRot::YXZ);
            *last = LastGood {
                position: transform.translation,
                heading: yaw,
            };
        }
    }
}

fn reset_vehicle(
    drivers: Query<&ActionState<DriveAction>, With<Driver>>,
    mut vehicles: Query<
        (Entity, &mut Transform, &mut Velocity, &LastGood),
        (With<PlayerVehicle>, Without<PlayerTrailer>),
    >,
    mut trailers: Query<(Entity, &Hitch, &mut Transform, &mut Velocity), With<PlayerTrailer>>,
    mut commands: Commands,
) {
    if !drivers.iter().any(|a| a.just_pressed(&DriveAction::Reset)) {
        return;
    }
    for (entity, mut transform, mut velocity, last) in &mut vehicles {
        transform.translation = last.position + Vec3::Y * 0.5;
        transform.rotation = Quat::from_rotation_y(last.heading);
        *velocity = Velocity::zero();
        // The vehicle comes to rest as built: drivetrain, tires and modules (an ABS cycle,
        // a controller's memory) start over.
        commands.trigger(ResetVehicle { entity });
        // Its trailer straight behind it again.
        for (trailer, hitch, mut pose, mut velocity) in &mut trailers {
            if hitch.tow == entity {
                pose.rotation = transform.rotation;
                pose.translation = transform.transform_point(hitch.tow_point)
                    - transform.rotation * hitch.trailer_point;
                *velocity = Velocity::zero();
                commands.trigger(ResetVehicle { entity: trailer });
            }
        }
    }
}

/// Body colours: the player's red, the parked vehicles' from this list.
const PAINT: [Color; 5] = [
    Color::srgb(0.15, 0.35, 0.75),
    Color::srgb(0.85, 0.75, 0.2),
    Color::srgb(0.2, 0.6, 0.35),
    Color::srgb(0.85, 0.85, 0.85),
    Color::srgb(0.45, 0.3, 0.6),
];

/// Gives a newly built vehicle a body box and a darker cabin box on top, and each new wheel a
/// cylinder. Meshes and materials are made here, once per vehicle.
fn add_visuals(
    mut commands: Commands,
    built: Query<(Entity, &SpawnedFrom, Has<PlayerVehicle>), Added<SpawnedFrom>>,
    wheels: Query<(Entity, &Wheel, &WheelMount), Added<WheelMount>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut count: Local<usize>,
) {
    for (vehicle, spawned, player) in &built {
        let chassis = &spawned.description.chassis;
        let [x, y, z] = chassis.body_half_extents;
        let center = Vec3::from(chassis.body_center);
        let paint = if player {
            Color::srgb(0.8, 0.12, 0.1)
        } else {
            *count += 1;
            PAINT[*count % PAINT.len()]
        };
        // The cabin: narrower, over the rear two thirds for a car, the front third for a
        // long vehicle (a truck's cab).
        let (cabin_z, cabin_len) = if z > 3.0 {
            (-z + 1.0, 2.0)
        } else {
            (0.2 * z, 1.1 * z)
        };
        commands
            .entity(vehicle)
            .insert(Visibility::default())
            .with_children(|parent| {
                parent.spawn((
                    Mesh3d(meshes.add(Cuboid::new(2.0 * x, 2.0 * y, 2.0 * z))),
                    MeshMaterial3d(materials.add(StandardMaterial {
                        base_color: paint,
                        perceptual_roughness: 0.5,
                        ..default()
                    })),
                    Transform::from_translation(center),
                ));
                parent.spawn((
                    Mesh3d(meshes.add(Cuboid::new(1.8 * x, 0.9 * y, cabin_len))),
                    MeshMaterial3d(materials.add(StandardMaterial {
                        base_color: Color::srgb(0.12, 0.14, 0.18),
                        perceptual_roughness: 0.2,
                        ..default()
                    })),
                    Transform::from_translation(center + Vec3::new(0.0, 1.4 * y, cabin_z)),
                ));
            });
    }
    for (wheel, block, mount) in &wheels {
        commands
            .entity(wheel)
            .insert(Visibility::default())
            .with_children(|parent| {
                parent.spawn((
                    Mesh3d(meshes.add(Cylinder::new(block.radius as f32, mount.width))),
                    MeshMaterial3d(materials.add(Color::srgb(0.06, 0.06, 0.06))),
                    // The cylinder's axis is Y; the axle is X.
                    Transform::from_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
                ));
                // A light hub, so the wheel's spin shows.
                parent.spawn((
                    Mesh3d(meshes.add(Cuboid::new(
                        mount.width * 1.05,
                        block.radius as f32 * 1.2,
                        block.radius as f32 * 0.25,
                    ))),
                    MeshMaterial3d(materials.add(Color::srgb(0.7, 0.7, 0.72))),
                    Transform::default(),
                ));
            });
    }
}
