//! The heads-up display: speed, rpm with the redline, gear and automatic mode, pedals,
//! per-wheel slip and load, the vehicle's name, the key legend, and a notice when a vehicle
//! file is reloaded or refused.

use core::fmt::Write as _;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::{SpawnedFrom, VehicleAssetStatus};
use bevy_vehicle_physics::input::Driver;
use bevy_vehicle_physics::prelude::*;

use crate::vehicles::PlayerVehicle;

/// Builds the HUD and keeps it up to date.
pub struct HudPlugin;

impl Plugin for HudPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_hud)
            .add_systems(Update, (update_dashboard, update_rpm_bar, update_notice));
    }
}

#[derive(Component)]
struct Dashboard;

#[derive(Component)]
struct RpmFill;

#[derive(Component)]
struct Notice {
    shown: Option<VehicleAssetStatus>,
    age: f32,
}

const LEGEND: &str = "W/S or triggers: throttle/brake   A/D or stick: steer   Q/E or bumpers: gear\n\
Space / south: handbrake   M / north: automatic   C: clutch   R / start: reset\n\
Tab / select: next vehicle   V / right stick click: camera   J/L or right stick: orbit";

fn text(value: impl Into<String>, size: f32) -> (Text, TextFont, TextColor) {
    (
        Text::new(value),
        TextFont {
            font_size: FontSize::Px(size),
            ..default()
        },
        TextColor(Color::WHITE),
    )
}

fn spawn_hud(mut commands: Commands) {
    // Top left: the dashboard text.
    commands.spawn((
        Dashboard,
        text("", 18.0),
        Node {
            position_type: PositionType::Absolute,
            top: px(10),
            left: px(12),
            ..default()
        },
    ));
    // Bottom left: the legend.
    commands.spawn((
        text(LEGEND, 13.0),
        Node {
            position_type: PositionType::Absolute,
            bottom: px(8),
            left: px(12),
            ..default()
        },
    ));
    // Top right: the rpm bar, its redline at 100 %.
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                top: px(12),
                right: px(12),
                width: px(260),
                height: px(18),
                ..default()
            },
            BackgroundColor(Color::srgba(1.0, 1.0, 1.0, 0.15)),
        ))
        .with_children(|bar| {
            bar.spawn((
                RpmFill,
                Node {
                    width: percent(0),
                    height: percent(100),
                    ..default()
                },
                BackgroundColor(Color::srgb(0.2, 0.8, 0.3)),
            ));
        });
    // Centre top: reload notices.
    commands.spawn((
        Notice {
            shown: None,
            age: 0.0,
        },
        text("", 16.0),
        Node {
            position_type: PositionType::Absolute,
            top: px(40),
            right: px(12),
            max_width: px(640),
            ..default()
        },
    ));
}

/// A text bar of `width` characters, `value` in 0..1 of it filled.
fn bar(value: f64, width: usize) -> String {
    let filled = ((value.clamp(0.0, 1.0) * width as f64).round()) as usize;
    format!("{}{}", "█".repeat(filled), "·".repeat(width - filled))
}

fn update_dashboard(
    vehicles: Query<(&Name, &VehicleTelemetry, &VehicleControls, &Blocks), With<PlayerVehicle>>,
    wheels: Query<(&Name, &WheelState, &WheelMount)>,
    drivers: Query<&Driver>,
    mut dashboard: Query<&mut Text, With<Dashboard>>,
) {
    let Ok(mut out) = dashboard.single_mut() else {
        return;
    };
    let Some((name, telemetry, controls, blocks)) = vehicles.iter().next() else {
        out.0 = "loading…".into();
        return;
    };
    let automatic = drivers.iter().any(|d| d.automatic);
    let gear = match telemetry.gear {
        0 => "N".to_owned(),
        g if g < 0 => format!("R{}", -g),
        g => g.to_string(),
    };
    let mut s = String::new();
    let _ = writeln!(s, "{}", name.as_str());
    let _ = writeln!(
        s,
        "{:5.0} km/h   {:5.0} rpm   gear {gear} {}",
        telemetry.forward_speed * 3.6,
        telemetry.engine_rpm,
        if automatic { "(auto)" } else { "(manual)" }
    );
    let _ = writeln!(s, "throttle {}", bar(controls.throttle, 20));
    let _ = writeln!(s, "brake    {}", bar(controls.brake, 20));
    let _ = writeln!(s, "clutch   {}", bar(controls.clutch, 20));
    let mut rows: Vec<(u8, bool, String)> = blocks
        .iter()
        .filter_map(|b| wheels.get(b).ok())
        .map(|(n, state, mount)| {
            (
                mount.axle,
                mount.side == Side::Right,
                format!(
                    "{:9} slip {:+5.2} angle {:+5.1}° load {:6.0} N",
                    n.as_str(),
                    state.slip_ratio,
                    state.slip_angle.to_degrees(),
                    state.load
                ),
            )
        })
        .collect();
    rows.sort_by_key(|r| (r.0, r.1));
    for (_, _, row) in rows {
        let _ = writeln!(s, "{row}");
    }
    out.0 = s;
}

fn update_rpm_bar(
    vehicles: Query<(&VehicleTelemetry, &SpawnedFrom), With<PlayerVehicle>>,
    mut fill: Query<(&mut Node, &mut BackgroundColor), With<RpmFill>>,
) {
    let Some((telemetry, spawned)) = vehicles.iter().next() else {
        return;
    };
    let redline = spawned
        .description
        .blocks
        .iter()
        .find_map(|b| b.block.as_any().downcast_ref::<Engine>())
        .map_or(8000.0, |e| e.max_rpm);
    let share = (telemetry.engine_rpm / redline).clamp(0.0, 1.0);
    for (mut node, mut color) in &mut fill {
        node.width = percent((share * 100.0) as f32);
        color.0 = if share > 0.92 {
            Color::srgb(0.9, 0.15, 0.1)
        } else {
            Color::srgb(0.2, 0.8, 0.3)
        };
    }
}

fn update_notice(
    time: Res<Time>,
    vehicles: Query<(&VehicleAssetStatus, Option<Ref<SpawnedFrom>>), With<PlayerVehicle>>,
    mut notice: Query<(&mut Notice, &mut Text, &mut TextColor)>,
) {
    let Ok((mut notice, mut out, mut color)) = notice.single_mut() else {
        return;
    };
    notice.age += time.delta_secs();
    let Some((status, spawned)) = vehicles.iter().next() else {
        return;
    };
    let reloaded = spawned
        .as_ref()
        .is_some_and(|s| s.is_changed() && !s.is_added());
    if notice.shown.as_ref() != Some(status) || reloaded {
        notice.shown = Some(status.clone());
        notice.age = 0.0;
        match status {
            VehicleAssetStatus::Refused(error) => {
                out.0 =
                    format!("vehicle file refused, running on the last good settings:\n{error}");
                color.0 = Color::srgb(1.0, 0.4, 0.3);
            }
            VehicleAssetStatus::Applied if reloaded => {
                let name = spawned.map_or("vehicle".to_owned(), |s| s.description.name.clone());
                out.0 = format!("{name}: file reloaded");
                color.0 = Color::srgb(0.5, 1.0, 0.5);
            }
            _ => out.0.clear(),
        }
    }
    if notice.age > 6.0 && !matches!(status, VehicleAssetStatus::Refused(_)) {
        out.0.clear();
    }
}
