//! The debug view, toggled with F1 (or G):
//!
//! * each wheel's ground probe: the suspension axis from full compression to the bottom of the
//!   tire at full extension (yellow while the wheel touches the ground, grey in the air), and
//!   the wheel's outline at its current centre;
//! * contact points (white) with the ground normal;
//! * tire forces at the contact: longitudinal (red), lateral (green) and the normal load (blue),
//!   scaled so that 1 m is the wheel's share of the vehicle's weight;
//! * the centre of mass (magenta, with the body's axes);
//! * the player's drivetrain as a text panel: its blocks in pass order (root first, indented by
//!   depth, with the port they hang from) and each block's live sensor values.

use core::fmt::Write as _;

use bevy::prelude::*;
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;

use crate::vehicles::PlayerVehicle;

/// Draws the debug view when it is on.
pub struct DebugViewPlugin;

impl Plugin for DebugViewPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<DebugView>()
            .add_systems(Startup, (spawn_panel, configure_gizmos))
            .add_systems(
                Update,
                (
                    toggle,
                    (draw_vehicles, update_panel).run_if(|v: Res<DebugView>| v.on),
                )
                    .chain(),
            );
    }
}

/// Whether the debug view is shown.
#[derive(Resource, Default)]
pub struct DebugView {
    /// Shown.
    pub on: bool,
}

/// The drivetrain panel's text.
#[derive(Component)]
struct DrivetrainPanel;

/// The player's drivetrain blocks in pass order with their depth, cached: rebuilt when the
/// vehicle changes or a block is gone (a topology reload), not every frame.
#[derive(Default)]
struct Order {
    vehicle: Option<Entity>,
    blocks: Vec<(Entity, u8)>,
}

const GROUNDED: Color = Color::srgb(1.0, 0.85, 0.1);
const AIRBORNE: Color = Color::srgb(0.55, 0.55, 0.55);
const CONTACT: Color = Color::WHITE;
const LONGITUDINAL: Color = Color::srgb(1.0, 0.15, 0.1);
const LATERAL: Color = Color::srgb(0.1, 1.0, 0.2);
const LOAD: Color = Color::srgb(0.2, 0.45, 1.0);
const MASS: Color = Color::srgb(1.0, 0.1, 1.0);

fn configure_gizmos(mut store: ResMut<GizmoConfigStore>) {
    let (config, _) = store.config_mut::<DefaultGizmoConfigGroup>();
    config.line.width = 2.5;
    // Drawn over the bodies that would hide them (wheels, the chassis box).
    config.depth_bias = -1.0;
}

fn spawn_panel(mut commands: Commands) {
    commands.spawn((
        Name::new("debug drivetrain panel"),
        DrivetrainPanel,
        Text::new(""),
        TextFont {
            font_size: FontSize::Px(13.0),
            ..default()
        },
        TextColor(Color::srgb(0.85, 1.0, 0.85)),
        Node {
            position_type: PositionType::Absolute,
            top: px(10),
            right: px(10),
            max_width: px(640),
            padding: UiRect::all(px(8)),
            display: Display::None,
            ..default()
        },
        BackgroundColor(Color::srgba(0.02, 0.05, 0.02, 0.75)),
    ));
}

fn toggle(
    keys: Res<ButtonInput<KeyCode>>,
    mut view: ResMut<DebugView>,
    mut panel: Query<&mut Node, With<DrivetrainPanel>>,
) {
    if keys.any_just_pressed([KeyCode::F1, KeyCode::KeyG]) {
        view.on = !view.on;
    }
    if view.is_changed() {
        for mut node in &mut panel {
            node.display = if view.on {
                Display::Flex
            } else {
                Display::None
            };
        }
    }
}

fn draw_vehicles(
    mut gizmos: Gizmos,
    vehicles: Query<(&Transform, &ReadMassProperties, &Blocks), With<Vehicle>>,
    wheels: Query<(
        &WheelMount,
        &WheelState,
        &Suspension,
        &Wheel,
        Option<&WheelSensors>,
    )>,
) {
    for (body, mass, blocks) in &vehicles {
        let up = body.rotation * Vec3::Y;
        let right = body.rotation * Vec3::X;
        // Centre of mass and the body axes.
        let com = body.transform_point(mass.local_center_of_mass);
        gizmos.sphere(Isometry3d::from_translation(com), 0.12, MASS);
        gizmos.axes(
            Transform::from_translation(com).with_rotation(body.rotation),
            0.6,
        );
        let count = blocks.iter().filter(|b| wheels.contains(*b)).count().max(1);
        // 1 m of arrow = the wheel's share of the weight.
        let scale = if mass.mass > 0.0 {
            count as f32 / (mass.mass * 9.81)
        } else {
            1.0 / 3000.0
        };
        for block in blocks.iter() {
            let Ok((mount, state, suspension, wheel, sensors)) = wheels.get(block) else {
                continue;
            };
            // The probe along the suspension axis.
            let anchor = body.transform_point(mount.position);
            let top = anchor + up * suspension.compression_limit as f32;
            let bottom = anchor - up * (suspension.extension_limit as f32 + wheel.radius as f32);
            let color = if state.grounded { GROUNDED } else { AIRBORNE };
            gizmos.line(top, bottom, color);
            gizmos.cross(Isometry3d::from_translation(anchor), 0.05, color);
            // The wheel at its centre, in its plane (the axle turned by the steering).
            let axle = Quat::from_axis_angle(up, state.steer_angle as f32) * right;
            let center = anchor + up * state.travel as f32;
            gizmos.circle(
                Isometry3d::new(center, Quat::from_rotation_arc(Vec3::Z, axle)),
                wheel.radius as f32,
                color,
            );
            if !state.grounded {
                continue;
            }
            // The probe measured the contact at the body's pose before this step's move;
            // carried along with the wheel centre to the pose the body is drawn at (at speed the
            // two are `v·dt` apart: 0.46 m at 100 km/h and 60 Hz).
            let contact = state.contact_point + (center - state.center);
            let normal = state.normal;
            gizmos.sphere(Isometry3d::from_translation(contact), 0.05, CONTACT);
            gizmos.line(contact, contact + normal * 0.25, CONTACT);
            let forward = state.heading;
            let left = normal.cross(forward);
            let [fx, fy] = sensors.map_or([0.0; 2], |s| s.force);
            let lift = normal * 0.02; // keep the arrows off the road surface
            gizmos.arrow(
                contact + lift,
                contact + lift + forward * (fx as f32 * scale),
                LONGITUDINAL,
            );
            gizmos.arrow(
                contact + lift,
                contact + lift + left * (fy as f32 * scale),
                LATERAL,
            );
            gizmos.arrow(
                contact,
                contact + normal * (state.load as f32 * scale),
                LOAD,
            );
        }
    }
}

fn update_panel(
    players: Query<(Entity, &Drivetrain), With<PlayerVehicle>>,
    names: Query<&Name>,
    links: Query<&DrivenBy>,
    sensors: Query<(
        Option<&EngineSensors>,
        Option<&MotorSensors>,
        Option<&ClutchSensors>,
        Option<&GearboxSensors>,
        Option<&DifferentialSensors>,
        Option<&WheelSensors>,
    )>,
    mut panel: Single<&mut Text, With<DrivetrainPanel>>,
    mut order: Local<Order>,
) {
    let Some((vehicle, drivetrain)) = players.iter().next() else {
        return;
    };
    let stale = order.vehicle != Some(vehicle)
        || order.blocks.is_empty()
        || order.blocks.iter().any(|(b, _)| !sensors.contains(*b));
    if stale {
        order.vehicle = Some(vehicle);
        order.blocks.clear();
        for block in drivetrain.blocks_in_order() {
            let depth = links
                .get(block)
                .ok()
                .and_then(|l| order.blocks.iter().find(|(e, _)| *e == l.upstream))
                .map_or(0, |(_, d)| d + 1);
            order.blocks.push((block, depth));
        }
    }
    let s = &mut panel.0;
    s.clear();
    let _ = write!(
        s,
        "drivetrain {:?}, blocks in pass order\n(speeds in rpm, torques in Nm)",
        drivetrain.status()
    );
    const RPM: f64 = 60.0 / core::f64::consts::TAU;
    for &(block, depth) in &order.blocks {
        s.push('\n');
        for _ in 0..depth {
            s.push_str("  ");
        }
        let name = names.get(block).map_or("?", |n| n.as_str());
        s.push_str(name);
        if let Ok(link) = links.get(block)
            && link.port != Port::OUT
        {
            let _ = write!(s, " ({})", link.port);
        }
        s.push_str(": ");
        let Ok((engine, motor, clutch, gearbox, diff, wheel)) = sensors.get(block) else {
            continue;
        };
        if let Some(e) = engine {
            let _ = write!(
                s,
                "{:5.0} rpm {:6.1} Nm, out {:6.1}, {:5.1} kW, thr {:.2}",
                e.rpm,
                e.torque,
                e.shaft_torque,
                e.power / 1000.0,
                e.throttle
            );
        } else if let Some(m) = motor {
            let _ = write!(
                s,
                "{:5.0} rpm {:6.1} Nm, out {:6.1}, {:5.1} kW",
                m.rpm,
                m.torque,
                m.shaft_torque,
                m.power / 1000.0
            );
        } else if let Some(c) = clutch {
            let _ = write!(
                s,
                "{:6.1} of {:6.1} Nm, slip {:5.0} rpm{}",
                c.torque,
                c.capacity,
                c.slip_speed * RPM,
                if c.locked { ", locked" } else { "" }
            );
        } else if let Some(g) = gearbox {
            let _ = write!(
                s,
                "gear {} x{:.3} {:5.0} -> {:5.0} rpm {:7.1} Nm{}",
                g.gear,
                g.ratio,
                g.input_speed * RPM,
                g.output_speed * RPM,
                g.output_torque,
                if g.shifting { ", shifting" } else { "" }
            );
        } else if let Some(d) = diff {
            let _ = write!(
                s,
                "in {:5.0} rpm {:7.1} Nm, L {:5.0}/{:7.1}, R {:5.0}/{:7.1}{}",
                d.input_speed * RPM,
                d.input_torque,
                d.left_speed * RPM,
                d.left_torque,
                d.right_speed * RPM,
                d.right_torque,
                if d.locked { ", locked" } else { "" }
            );
        } else if let Some(w) = wheel {
            let _ = write!(
                s,
                "{:5.0} rpm, drive {:7.1}, brake {:7.1} Nm, slip {:+.2}",
                w.speed * RPM,
                w.drive_torque,
                w.brake_torque,
                w.slip_ratio
            );
        } else {
            s.push_str("(no sensors shown)");
        }
    }
}
