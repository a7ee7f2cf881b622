//! The demo: drive the vehicles of `assets/vehicles/` with a gamepad or the keyboard on a test
//! track.
//!
//! `cargo run --features demo --example demo` (or `scripts/demo.sh`, which installs what the
//! machine lacks first). Options:
//!
//! * `--smoke N`: drive forward and steer by script for `N` frames, save a screenshot and exit
//!   (CI runs this under Xvfb: `scripts/demo_smoke.sh`);
//! * `--screenshot PATH`: where the smoke run saves its screenshot (default
//!   `demo_screenshot.png`).
//!
//! The demo is a few plugins, one per file: the track, the vehicles (spawning, switching,
//! reset, visuals), the cameras, the HUD and the smoke-test driver.

use bevy::prelude::*;
use bevy_vehicle_physics::input::VehicleInputPlugin;
use bevy_vehicle_physics::prelude::*;

mod camera;
mod hud;
mod smoke;
mod track;
mod vehicles;

fn main() {
    let mut smoke = None;
    let mut screenshot = "demo_screenshot.png".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--smoke" => {
                smoke = Some(
                    args.next()
                        .and_then(|n| n.parse().ok())
                        .expect("--smoke needs a frame count"),
                );
            }
            "--screenshot" => screenshot = args.next().expect("--screenshot needs a path"),
            other => panic!("unknown argument `{other}`"),
        }
    }

    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: "bevy_vehicle_physics demo".into(),
                resolution: (1280, 720).into(),
                ..default()
            }),
            ..default()
        }),
        VehiclePhysicsPlugins,
        VehicleInputPlugin,
        track::TrackPlugin,
        vehicles::VehiclesPlugin,
        camera::CameraPlugin,
        hud::HudPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_hz(60.0));
    if let Some(frames) = smoke {
        app.add_plugins(smoke::SmokePlugin {
            frames,
            screenshot: screenshot.into(),
        });
    }
    app.run();
}
