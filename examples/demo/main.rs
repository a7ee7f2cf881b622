//! The demo: drive the vehicles of `assets/vehicles/` with a gamepad or the keyboard on a test
//! track.
//!
//! `cargo run --features demo --example demo` (or `scripts/demo.sh`, which installs what the
//! machine lacks first). Options:
//!
//! * `--smoke N`: drive forward and steer by script for `N` (at least 300) frames, record
//!   telemetry, turn the debug view on, save a screenshot, check it and exit (CI runs this
//!   under Xvfb: `scripts/demo_smoke.sh`); it renders at half resolution (640×360 pixels,
//!   the same layout);
//! * `--screenshot PATH`: where the smoke run saves its screenshot (default
//!   `demo_screenshot.png`);
//! * `--view chase|orbit|cockpit`: the camera view to start in (V switches);
//! * `--vehicle PATH`: the vehicle or combination file to start with (asset path, e.g.
//!   `combinations/semi_trailer.combination.ron`; Tab goes through all of them);
//! * `--low`: cheaper rendering for software renderers (no MSAA, a smaller shadow map); the
//!   smoke run implies it.
//!
//! The demo is a few plugins, one per file: the track, the vehicles (spawning, switching,
//! reset, parked vehicles, visuals), the cameras, the HUD, the debug view (F1), the telemetry
//! recorder (F5) and the smoke-test driver. The controls are listed in [`hud::LEGEND`].

use bevy::light::DirectionalLightShadowMap;
use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_vehicle_physics::input::VehicleInputPlugin;
use bevy_vehicle_physics::prelude::*;

mod camera;
mod debug;
mod hud;
mod recorder;
mod smoke;
mod track;
mod vehicles;

/// Rendering quality.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct Graphics {
    /// No MSAA and a 1024² shadow map (for software renderers such as llvmpipe).
    pub low: bool,
}

fn main() -> AppExit {
    let mut smoke = None;
    let mut graphics = Graphics::default();
    let mut view = camera::View::Chase;
    let mut screenshot = "demo_screenshot.png".to_owned();
    let mut start = vehicles::StartVehicle::default();
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
            "--low" => graphics.low = true,
            "--vehicle" => start.0 = Some(args.next().expect("--vehicle needs an asset path")),
            "--view" => {
                let name = args.next().unwrap_or_default();
                view = camera::View::from_name(&name).unwrap_or_else(|| {
                    panic!("--view needs chase, orbit or cockpit, got `{name}`")
                });
            }
            other => panic!("unknown argument `{other}`"),
        }
    }

    if smoke.is_some() {
        graphics.low = true;
    }

    let mut app = App::new();
    // Before the plugins: the vehicles plugin reads it when it builds.
    app.insert_resource(start);
    app.add_plugins((
        DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: "bevy_vehicle_physics demo".into(),
                // The smoke run renders half the pixels (the same 1280×720 layout at a
                // scale factor of 0.5): half the time under a software renderer.
                resolution: if smoke.is_some() {
                    WindowResolution::new(640, 360).with_scale_factor_override(0.5)
                } else {
                    WindowResolution::new(1280, 720)
                },
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
        debug::DebugViewPlugin,
        recorder::RecorderPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .insert_resource(ClearColor(Color::srgb(0.53, 0.72, 0.92)))
    .insert_resource(DirectionalLightShadowMap {
        size: if graphics.low { 1024 } else { 2048 },
    })
    .insert_resource(graphics)
    .insert_resource(camera::StartView(view));
    if let Some(frames) = smoke {
        app.add_plugins(smoke::SmokePlugin {
            frames,
            screenshot: screenshot.into(),
        });
    }
    // The exit code tells a script whether the smoke run passed.
    app.run()
}
