//! Cameras: a smooth chase camera that keeps out of walls, an orbit camera, and a cockpit
//! camera. V (or the right stick's click) switches between them; the right stick or the J/L
//! keys turn the orbit camera.

use bevy::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;

use bevy_vehicle_physics::assets::SpawnedFrom;
use bevy_vehicle_physics::chassis::Hitch;

use crate::Graphics;
use crate::vehicles::{PlayerTrailer, PlayerVehicle};

/// Spawns the camera and moves it after the vehicles have moved.
pub struct CameraPlugin;

impl Plugin for CameraPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_camera).add_systems(
            PostUpdate,
            (switch_view, follow)
                .chain()
                .before(TransformSystems::Propagate),
        );
    }
}

/// Which view the camera gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Behind and above the vehicle, following its heading.
    #[default]
    Chase,
    /// Around the vehicle at a fixed distance, turned by the player.
    Orbit,
    /// From the driver's seat.
    Cockpit,
}

/// The demo's camera.
#[derive(Component, Default)]
pub struct DemoCamera {
    /// The current view.
    pub view: View,
    /// Orbit angle about the vertical (rad).
    orbit: f32,
}

/// Distance behind (m) and height above (m) the vehicle of the chase view, for a car; longer
/// vehicles push the camera back by their length.
const CHASE: (f32, f32) = (6.5, 2.4);
/// The chase view looks at a point this far ahead of the vehicle (m), so the horizon and the
/// road ahead stay in the picture.
const LOOK_AHEAD: f32 = 6.0;
/// How fast the chase camera catches up (1/s).
const STIFFNESS: f32 = 6.0;

impl View {
    /// The view named `name` (`chase`, `orbit` or `cockpit`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "chase" => Some(View::Chase),
            "orbit" => Some(View::Orbit),
            "cockpit" => Some(View::Cockpit),
            _ => None,
        }
    }
}

/// The view the camera starts in (`--view`).
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct StartView(pub View);

fn spawn_camera(mut commands: Commands, graphics: Res<Graphics>, start: Option<Res<StartView>>) {
    commands.spawn((
        Camera3d::default(),
        if graphics.low {
            Msaa::Off
        } else {
            Msaa::Sample4
        },
        DemoCamera {
            view: start.map_or(View::Chase, |s| s.0),
            ..default()
        },
        Transform::from_xyz(0.0, 4.0, 10.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

fn switch_view(
    keys: Res<ButtonInput<KeyCode>>,
    pads: Query<&Gamepad>,
    time: Res<Time>,
    mut cameras: Query<&mut DemoCamera>,
) {
    let pressed = keys.just_pressed(KeyCode::KeyV)
        || pads
            .iter()
            .any(|p| p.just_pressed(GamepadButton::RightThumb));
    let turn = pads
        .iter()
        .map(|p| p.get(GamepadAxis::RightStickX).unwrap_or(0.0))
        .sum::<f32>()
        + f32::from(keys.pressed(KeyCode::KeyL))
        - f32::from(keys.pressed(KeyCode::KeyJ));
    for mut camera in &mut cameras {
        if pressed {
            camera.view = match camera.view {
                View::Chase => View::Orbit,
                View::Orbit => View::Cockpit,
                View::Cockpit => View::Chase,
            };
        }
        camera.orbit += turn * 1.5 * time.delta_secs();
    }
}

fn follow(
    time: Res<Time>,
    vehicles: Query<
        (Entity, &Transform, Option<&SpawnedFrom>),
        (With<PlayerVehicle>, Without<DemoCamera>),
    >,
    trailers: Query<
        (Entity, &Transform, &Hitch, Option<&SpawnedFrom>),
        (With<PlayerTrailer>, Without<DemoCamera>),
    >,
    mut cameras: Query<(&DemoCamera, &mut Transform)>,
    rapier: ReadRapierContext,
) {
    let Some((vehicle, target, spawned)) = vehicles.iter().next() else {
        return;
    };
    let Ok((camera, mut transform)) = cameras.single_mut() else {
        return;
    };
    let (yaw, _, _) = target.rotation.to_euler(EulerRot::YXZ);
    let heading = Quat::from_rotation_y(yaw);
    // The body's half size and centre in the chassis frame (a hatchback until it is built).
    let (half, body) = spawned.map_or((Vec3::new(0.9, 0.45, 2.1), Vec3::Y * 0.4), |s| {
        let c = &s.description.chassis;
        (Vec3::from(c.body_half_extents), Vec3::from(c.body_center))
    });
    let focus = target.translation + Vec3::Y * (body.y + half.y);
    // A trailer lengthens the chase: the camera follows behind its rear, above its roof.
    let trailer = trailers.iter().find(|t| t.2.tow == vehicle);
    let (behind, above) = trailer.map_or((half.z, 0.3 * half.y), |(_, pose, _, spawned)| {
        let (t_half, t_body) = spawned.map_or((Vec3::ZERO, Vec3::ZERO), |s| {
            let c = &s.description.chassis;
            (Vec3::from(c.body_half_extents), Vec3::from(c.body_center))
        });
        let rear = pose.translation + pose.rotation * (t_body + Vec3::Z * t_half.z);
        let top = pose.translation.y + t_body.y + t_half.y;
        (
            (rear - target.translation)
                .dot(heading * Vec3::Z)
                .max(half.z),
            0.3 * half.y + (top - focus.y).max(0.0),
        )
    });
    let (wanted, look_at) = match camera.view {
        View::Chase => (
            focus + heading * Vec3::new(0.0, CHASE.1 + above, CHASE.0 + behind),
            focus + heading * Vec3::new(0.0, -0.3, -LOOK_AHEAD),
        ),
        View::Orbit => (
            focus
                + Quat::from_rotation_y(yaw + camera.orbit)
                    * Vec3::new(0.0, 2.5 + half.y, 7.0 + 2.0 * half.z),
            focus,
        ),
        View::Cockpit => {
            // The driver's eyes: left of centre, inside the cabin box the demo draws on top of
            // the body (a truck's cab is at the front).
            let z = if half.z > 3.0 { 1.2 - half.z } else { 0.0 };
            let eyes = body + Vec3::new(-0.4 * half.x, 1.3 * half.y, z);
            let seat = target.translation + target.rotation * eyes;
            *transform = Transform::from_translation(seat).looking_at(
                seat + target.rotation * Vec3::NEG_Z,
                target.rotation * Vec3::Y,
            );
            return;
        }
    };
    // Keep a wall or the ground from coming between the camera and the vehicle.
    let mut wanted = wanted;
    if let Ok(context) = rapier.single() {
        let offset = wanted - focus;
        let length = offset.length();
        if length > 1e-3 {
            let trailer = trailer.map(|t| t.0);
            let not_trailer = |e: Entity| Some(e) != trailer;
            let filter = QueryFilter::default()
                .exclude_rigid_body(vehicle)
                .exclude_sensors()
                .predicate(&not_trailer);
            if let Some((_, toi)) = context.cast_ray(focus, offset / length, length, true, filter) {
                wanted = focus + offset / length * (toi - 0.3).max(0.5);
            }
        }
    }
    let blend = 1.0 - (-STIFFNESS * time.delta_secs()).exp();
    transform.translation = transform.translation.lerp(wanted, blend);
    transform.look_at(look_at, Vec3::Y);
}
