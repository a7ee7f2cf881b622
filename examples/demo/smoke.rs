//! The smoke run: drives forward and steers by script through the same keys a player uses,
//! saves a screenshot after the last frame, and exits with success only if the vehicle drove
//! (finite, and at least 5 m from the start).

use std::path::PathBuf;

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use leafwing_input_manager::prelude::*;

use crate::vehicles::{PlayerVehicle, START};

/// Drives for `frames` frames, then saves `screenshot` and exits.
pub struct SmokePlugin {
    /// Frames to drive before the screenshot.
    pub frames: u32,
    /// Where the screenshot goes.
    pub screenshot: PathBuf,
}

#[derive(Resource)]
struct Smoke {
    frames: u32,
    screenshot: PathBuf,
    frame: u32,
}

impl Plugin for SmokePlugin {
    fn build(&self, app: &mut App) {
        let _ = std::fs::remove_file(&self.screenshot);
        app.insert_resource(Smoke {
            frames: self.frames,
            screenshot: self.screenshot.clone(),
            frame: 0,
        })
        .add_systems(First, script)
        .add_systems(Last, finish);
    }
}

/// The script: throttle from frame 30, steer right from 150, left from 210, straight at 270.
fn script(world: &mut World) {
    let frame = {
        let mut smoke = world.resource_mut::<Smoke>();
        smoke.frame += 1;
        smoke.frame
    };
    match frame {
        30 => KeyCode::KeyW.press(world),
        150 => KeyCode::KeyD.press(world),
        210 => {
            KeyCode::KeyD.release(world);
            KeyCode::KeyA.press(world);
        }
        270 => KeyCode::KeyA.release(world),
        _ => {}
    }
}

fn finish(
    mut commands: Commands,
    smoke: Res<Smoke>,
    vehicles: Query<&Transform, With<PlayerVehicle>>,
    mut exit: MessageWriter<AppExit>,
) {
    if smoke.frame == smoke.frames {
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(smoke.screenshot.clone()));
    }
    if smoke.frame <= smoke.frames {
        return;
    }
    let saved = std::fs::metadata(&smoke.screenshot).is_ok_and(|m| m.len() > 0);
    if !saved && smoke.frame < smoke.frames + 600 {
        return; // the screenshot is written a few frames later
    }
    let position = vehicles.iter().next().map(|t| t.translation);
    let travelled = position.map_or(0.0, |p| (p - START).with_y(0.0).length());
    let ok = saved && position.is_some_and(|p| p.is_finite()) && travelled > 5.0;
    println!(
        "smoke run: {} frames, vehicle at {position:?} ({travelled:.1} m from the start), screenshot {} {}",
        smoke.frames,
        smoke.screenshot.display(),
        if saved { "saved" } else { "NOT saved" }
    );
    exit.write(if ok {
        AppExit::Success
    } else {
        AppExit::error()
    });
}
