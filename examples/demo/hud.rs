//! The heads-up display: speed, rpm with the redline, gear and automatic mode, pedal bars,
//! per-wheel slip and load, the vehicle's name, the key and button legend, the telemetry
//! recorder's state, and a notice when a vehicle file is reloaded or refused.
//!
//! Bevy's built-in font is an ASCII-only subset of Fira Mono, so every text drawn with it is
//! ASCII; texts that can hold any character (vehicle names, file errors) use the bundled Fira
//! Sans. The text buffers are rewritten in place each frame, without new allocations.

use core::fmt::Write as _;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::{SpawnedFrom, VehicleAssetStatus};
use bevy_vehicle_physics::input::Driver;
use bevy_vehicle_physics::prelude::*;

use crate::recorder::Recorder;
use crate::vehicles::PlayerVehicle;

/// Builds the HUD and keeps it up to date.
pub struct HudPlugin;

impl Plugin for HudPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_hud).add_systems(
            Update,
            (
                update_dashboard,
                update_bars,
                update_notice,
                update_recording,
            ),
        );
    }
}

/// The text of the dashboard (speed, rpm, gear).
#[derive(Component)]
struct Dashboard;

/// The text with the vehicle's name.
#[derive(Component)]
struct VehicleName;

/// The per-wheel table.
#[derive(Component)]
struct WheelTable;

/// The recorder's line.
#[derive(Component)]
struct RecordingLine;

/// A bar's filled part, and what it shows.
#[derive(Component, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Engine speed, 0 to 110 % of the rev limit; the last part is the red zone.
    Rpm,
    /// Throttle pedal.
    Throttle,
    /// Brake pedal.
    Brake,
    /// Clutch pedal.
    Clutch,
}

/// The reload notice.
#[derive(Component)]
struct Notice {
    shown: Option<VehicleAssetStatus>,
    age: f32,
    /// Time since the player's vehicle was built (s): the asset plugin applies a freshly
    /// loaded file a second time on the next frame, which is not a reload to announce.
    since_built: f32,
}

/// The rpm bar spans this share of the rev limit; the limit itself is the redline.
const RPM_SPAN: f64 = 1.1;
/// Size of the bars (px).
const BAR_WIDTH: f32 = 240.0;
/// Panel background: dark and translucent, so white text reads over sky and ground alike.
const PANEL: Color = Color::srgba(0.02, 0.03, 0.05, 0.72);

/// The controls, keyboard first, gamepad after the slash.
pub const LEGEND: &str = "W/S, triggers: throttle/brake   A/D, left stick: steer   \
Q/E, bumpers: gear down/up   Space, south: handbrake\n\
M, north: automatic on/off   C: clutch   F, west: retarder   L, d-pad down: low range   R, start: reset upright   Tab, select: next vehicle\n\
V, right stick click: camera   J/L, right stick: orbit   F1/G: debug view   F5/T: record telemetry   P: autopilot (tour)";

fn mono(value: &str, size: f32, color: Color) -> (Text, TextFont, TextColor) {
    (
        Text::new(value),
        TextFont {
            font_size: FontSize::Px(size),
            ..default()
        },
        TextColor(color),
    )
}

fn sans(font: &Handle<Font>, size: f32, color: Color) -> (Text, TextFont, TextColor) {
    (
        Text::new(""),
        TextFont {
            font: FontSource::Handle(font.clone()),
            font_size: FontSize::Px(size),
            ..default()
        },
        TextColor(color),
    )
}

/// A labelled bar: `label`, then a track with a fill of `kind` (and a red zone for rpm).
fn spawn_bar(parent: &mut ChildSpawnerCommands, label: &str, kind: Fill, color: Color) {
    parent
        .spawn(Node {
            flex_direction: FlexDirection::Row,
            align_items: AlignItems::Center,
            column_gap: px(8),
            ..default()
        })
        .with_children(|row| {
            row.spawn((
                mono(label, 14.0, Color::WHITE),
                Node {
                    width: px(64),
                    ..default()
                },
            ));
            row.spawn((
                Node {
                    width: px(BAR_WIDTH),
                    height: px(12),
                    ..default()
                },
                BackgroundColor(Color::srgba(1.0, 1.0, 1.0, 0.18)),
            ))
            .with_children(|track| {
                if kind == Fill::Rpm {
                    // The red zone: from the rev limit to the end of the bar.
                    let start = (100.0 / RPM_SPAN) as f32;
                    track.spawn((
                        Node {
                            position_type: PositionType::Absolute,
                            left: percent(start),
                            width: percent(100.0 - start),
                            height: percent(100),
                            ..default()
                        },
                        BackgroundColor(Color::srgba(0.9, 0.1, 0.1, 0.45)),
                    ));
                }
                track.spawn((
                    kind,
                    Node {
                        width: percent(0),
                        height: percent(100),
                        ..default()
                    },
                    BackgroundColor(color),
                ));
            });
        });
}

fn spawn_hud(mut commands: Commands, assets: Res<AssetServer>) {
    let font: Handle<Font> = assets.load("fonts/FiraSans-Regular.ttf");
    // Top left: the dashboard panel.
    commands
        .spawn((
            Name::new("HUD dashboard"),
            Node {
                position_type: PositionType::Absolute,
                top: px(10),
                left: px(10),
                flex_direction: FlexDirection::Column,
                row_gap: px(4),
                padding: UiRect::all(px(10)),
                ..default()
            },
            BackgroundColor(PANEL),
        ))
        .with_children(|panel| {
            panel.spawn((VehicleName, sans(&font, 20.0, Color::srgb(1.0, 0.85, 0.4))));
            panel.spawn((Dashboard, mono("loading...", 18.0, Color::WHITE)));
            spawn_bar(panel, "rpm", Fill::Rpm, Color::srgb(0.2, 0.8, 0.3));
            spawn_bar(
                panel,
                "throttle",
                Fill::Throttle,
                Color::srgb(0.3, 0.85, 0.3),
            );
            spawn_bar(panel, "brake", Fill::Brake, Color::srgb(0.95, 0.3, 0.2));
            spawn_bar(panel, "clutch", Fill::Clutch, Color::srgb(0.4, 0.6, 1.0));
            panel.spawn((WheelTable, mono("", 14.0, Color::srgb(0.85, 0.9, 1.0))));
            panel.spawn((RecordingLine, mono("", 14.0, Color::srgb(1.0, 0.35, 0.3))));
        });
    // Bottom left: the legend.
    commands.spawn((
        Name::new("HUD legend"),
        mono(LEGEND, 13.0, Color::WHITE),
        Node {
            position_type: PositionType::Absolute,
            bottom: px(8),
            left: px(10),
            padding: UiRect::all(px(6)),
            ..default()
        },
        BackgroundColor(PANEL),
    ));
    // Bottom right: reload notices.
    commands.spawn((
        Name::new("HUD notice"),
        Notice {
            shown: None,
            age: 0.0,
            since_built: 0.0,
        },
        sans(&font, 16.0, Color::WHITE),
        Node {
            position_type: PositionType::Absolute,
            bottom: px(80),
            right: px(12),
            max_width: px(640),
            ..default()
        },
        BackgroundColor(PANEL),
    ));
}

/// The player's vehicle's rev limit (rpm), from its engine or motor block.
fn rev_limit(spawned: &SpawnedFrom) -> f64 {
    spawned
        .description
        .blocks
        .iter()
        .find_map(|b| {
            let any = b.block.as_any();
            any.downcast_ref::<Engine>()
                .map(|e| e.max_rpm)
                .or_else(|| any.downcast_ref::<Motor>().map(|m| m.max_rpm))
        })
        .unwrap_or(8000.0)
}

fn update_dashboard(
    vehicles: Query<(&Name, &VehicleTelemetry, &Blocks, Option<&SpawnedFrom>), With<PlayerVehicle>>,
    wheels: Query<(&Name, &WheelState, &WheelMount)>,
    drivers: Query<&Driver>,
    mut texts: ParamSet<(
        Single<&mut Text, With<Dashboard>>,
        Single<&mut Text, With<VehicleName>>,
        Single<&mut Text, With<WheelTable>>,
    )>,
    mut rows: Local<Vec<(u8, bool, Entity)>>,
) {
    let Some((name, telemetry, blocks, spawned)) = vehicles.iter().next() else {
        return;
    };
    {
        let mut title = texts.p1();
        if title.0 != name.as_str() {
            title.0.clear();
            title.0.push_str(name.as_str());
        }
    }
    let automatic = drivers.iter().any(|d| d.automatic);
    let limit = spawned.map_or(8000.0, rev_limit);
    {
        let mut out = texts.p0();
        let s = &mut out.0;
        s.clear();
        let _ = write!(
            s,
            "{:4.0} km/h  {:5.0} rpm  gear ",
            telemetry.forward_speed * 3.6,
            telemetry.engine_rpm
        );
        match telemetry.gear {
            0 => s.push('N'),
            g if g < 0 => {
                let _ = write!(s, "R{}", -g);
            }
            g => {
                let _ = write!(s, "{g}");
            }
        }
        s.push_str(if automatic { " (auto)" } else { " (manual)" });
        let _ = write!(
            s,
            "\nredline {limit:.0} rpm  steering {:+.2}",
            telemetry.steering
        );
        if telemetry.traction_cut > 0.0 {
            let _ = write!(s, "  TC -{:.0} %", telemetry.traction_cut * 100.0);
        }
        if telemetry.stability_cut > 0.0 {
            let _ = write!(s, "  ESC -{:.0} %", telemetry.stability_cut * 100.0);
        }
    }
    rows.clear();
    rows.extend(blocks.iter().filter_map(|b| {
        wheels
            .get(b)
            .ok()
            .map(|(_, _, mount)| (mount.axle, mount.side == Side::Right, b))
    }));
    rows.sort_unstable_by_key(|r| (r.0, r.1));
    let mut table = texts.p2();
    let s = &mut table.0;
    s.clear();
    s.push_str("wheel       slip  angle(deg)  load(N)");
    for &(_, _, wheel) in rows.iter() {
        if let Ok((n, state, _)) = wheels.get(wheel) {
            let _ = write!(
                s,
                "\n{:10.10} {:+5.2}  {:+8.1}  {:7.0}",
                n.as_str(),
                state.slip_ratio,
                state.slip_angle.to_degrees(),
                state.load
            );
        }
    }
}

fn update_bars(
    vehicles: Query<
        (&VehicleTelemetry, &VehicleControls, Option<&SpawnedFrom>),
        With<PlayerVehicle>,
    >,
    mut fills: Query<(&Fill, &mut Node, &mut BackgroundColor)>,
) {
    let Some((telemetry, controls, spawned)) = vehicles.iter().next() else {
        return;
    };
    let limit = spawned.map_or(8000.0, rev_limit);
    for (kind, mut node, mut color) in &mut fills {
        let share = match kind {
            Fill::Rpm => telemetry.engine_rpm / (limit * RPM_SPAN),
            Fill::Throttle => controls.throttle,
            Fill::Brake => controls.brake,
            Fill::Clutch => controls.clutch,
        }
        .clamp(0.0, 1.0) as f32;
        let width = percent(share * 100.0);
        if node.width != width {
            node.width = width;
        }
        if *kind == Fill::Rpm {
            let wanted = if telemetry.engine_rpm >= 0.92 * limit {
                Color::srgb(0.95, 0.15, 0.1)
            } else {
                Color::srgb(0.2, 0.8, 0.3)
            };
            if color.0 != wanted {
                color.0 = wanted;
            }
        }
    }
}

fn update_recording(recorder: Res<Recorder>, mut line: Single<&mut Text, With<RecordingLine>>) {
    if !recorder.is_changed() && !recorder.is_recording() {
        return;
    }
    let s = &mut line.0;
    s.clear();
    // The file name only: the full path is printed when the recording starts and stops.
    fn name(p: &std::path::Path) -> std::borrow::Cow<'_, str> {
        p.file_name().unwrap_or_default().to_string_lossy()
    }
    if let Some(path) = recorder.path() {
        let _ = write!(
            s,
            "REC {:.1} s, {} rows -> {}",
            recorder.seconds(),
            recorder.rows(),
            name(path)
        );
    } else if let Some((path, rows)) = recorder.last() {
        let _ = write!(s, "saved {rows} rows: {}", name(path));
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
    notice.since_built += time.delta_secs();
    let Some((status, spawned)) = vehicles.iter().next() else {
        return;
    };
    if spawned.as_ref().is_some_and(|s| s.is_added()) {
        notice.since_built = 0.0;
    }
    let reloaded = notice.since_built > 1.0
        && spawned
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
    if notice.age > 6.0 && !matches!(status, VehicleAssetStatus::Refused(_)) && !out.0.is_empty() {
        out.0.clear();
    }
}
