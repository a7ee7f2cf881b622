//! The smoke run: drives forward and steers by script through the same keys a player uses,
//! records telemetry for a while, turns the debug view on, saves a screenshot after the last
//! frame, and exits with success only if
//!
//! * the vehicle drove: finite, and more than 5 m from the start;
//! * the screenshot is not blank: many distinct colours, and the HUD's corner differs from the
//!   sky above the horizon (it has bright text pixels on a dark panel);
//! * the telemetry file was written with the headless example's columns and a row per step;
//! * the debug view turned on with F1;
//! * after the screenshot, R (reset) stops the vehicle and Tab switches to the next vehicle
//!   file.
//!
//! Each frame advances the clocks by exactly one fixed step (1/60 s), so the run is the same on
//! a fast or a slow (software-rendered) machine; the frame rate printed is the wall clock's.
//! The script's frame numbers assume at least 300 frames.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::chassis::PathFollower;
use bevy_vehicle_physics::rapier::prelude::Velocity;
use leafwing_input_manager::prelude::*;

use crate::debug::DebugView;
use crate::recorder::Recorder;
use crate::vehicles::{PlayerVehicle, START};

/// Drives for `frames` frames, then saves `screenshot`, checks it and exits.
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
    started: Option<Instant>,
    /// Wall-clock time of the frames up to the screenshot request.
    driving: Option<Duration>,
    /// The verdict on the captured image, once it has arrived.
    image: Option<Result<String, String>>,
    /// What failed so far.
    failures: Vec<String>,
    /// After the screenshot's checks: the frame they ended and the vehicle's name then; the
    /// script then presses R, Tab and P.
    keys_from: Option<(u32, String)>,
    /// Whether Tab has brought the next vehicle.
    switched: bool,
    /// The fastest the vehicle went since P handed it to the autopilot (m/s).
    autopilot_speed: f32,
}

impl Plugin for SmokePlugin {
    fn build(&self, app: &mut App) {
        let _ = std::fs::remove_file(&self.screenshot);
        app.insert_resource(Smoke {
            frames: self.frames,
            screenshot: self.screenshot.clone(),
            frame: 0,
            started: None,
            driving: None,
            image: None,
            failures: Vec::new(),
            keys_from: None,
            switched: false,
            autopilot_speed: 0.0,
        })
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .add_systems(First, script)
        .add_systems(Last, (finish, check_keys).chain());
    }
}

/// The script: throttle from frame 30, record from 60 to 285, steer right from 150, left from
/// 210, straight at 270; the debug view from 240.
fn script(world: &mut World) {
    let (frame, keys_from) = {
        let mut smoke = world.resource_mut::<Smoke>();
        smoke.frame += 1;
        if smoke.frame == 2 {
            smoke.started = Some(Instant::now());
        }
        (smoke.frame, smoke.keys_from.as_ref().map(|k| k.0))
    };
    if let Some(from) = keys_from {
        match frame - from {
            1 => KeyCode::KeyR.press(world),
            2 => KeyCode::KeyR.release(world),
            3 => KeyCode::Tab.press(world),
            4 => KeyCode::Tab.release(world),
            40 => KeyCode::KeyP.press(world),
            41 => KeyCode::KeyP.release(world),
            _ => {}
        }
        return;
    }
    match frame {
        30 => KeyCode::KeyW.press(world),
        60 | 285 => world.resource_mut::<Recorder>().toggle(),
        150 => KeyCode::KeyD.press(world),
        210 => {
            KeyCode::KeyD.release(world);
            KeyCode::KeyA.press(world);
        }
        240 => KeyCode::F1.press(world),
        241 => KeyCode::F1.release(world),
        270 => KeyCode::KeyA.release(world),
        _ => {}
    }
}

/// Pixels of the image as sRGB (0..1), or why they cannot be read.
fn pixel(image: &Image, x: u32, y: u32) -> Result<[f32; 3], String> {
    image
        .get_color_at(x, y)
        .map(|c| {
            let c = c.to_srgba();
            [c.red, c.green, c.blue]
        })
        .map_err(|e| format!("cannot read the screenshot's pixels: {e:?}"))
}

/// Mean colour, share of bright pixels and number of distinct colours (4 bits a channel) in a
/// rectangle given in 1280×720 window pixels (scaled to the image).
fn region(image: &Image, x: [u32; 2], y: [u32; 2]) -> Result<([f32; 3], f32, usize), String> {
    let (w, h) = (image.width(), image.height());
    let scale = |v: u32, size: u32, full: u32| (v as u64 * size as u64 / full as u64) as u32;
    let (x0, x1) = (scale(x[0], w, 1280), scale(x[1], w, 1280).min(w));
    let (y0, y1) = (scale(y[0], h, 720), scale(y[1], h, 720).min(h));
    let (mut sum, mut bright, mut n) = ([0.0f32; 3], 0usize, 0usize);
    let mut colours = HashSet::new();
    for yy in y0..y1 {
        for xx in x0..x1 {
            let p = pixel(image, xx, yy)?;
            for (s, v) in sum.iter_mut().zip(p) {
                *s += v;
            }
            if p.iter().sum::<f32>() / 3.0 > 0.75 {
                bright += 1;
            }
            colours.insert(p.map(|v| (v * 15.0).round() as u8));
            n += 1;
        }
    }
    let n = n.max(1);
    Ok((
        sum.map(|s| s / n as f32),
        bright as f32 / n as f32,
        colours.len(),
    ))
}

/// The verdict on a screenshot: a description if it looks rendered, else what is wrong.
fn check_image(image: &Image) -> Result<String, String> {
    let (w, h) = (image.width(), image.height());
    if w < 320 || h < 180 {
        return Err(format!("the screenshot is only {w}x{h}"));
    }
    let (_, _, whole) = region(image, [0, 1280], [0, 720])?;
    // The HUD's corner: the vehicle name, speed and the bars on their dark panel.
    let (hud, hud_bright, hud_colours) = region(image, [20, 300], [20, 150])?;
    // Sky: top centre, clear of every HUD panel.
    let (sky, _, _) = region(image, [480, 640], [4, 36])?;
    let difference: f32 = hud.iter().zip(sky).map(|(a, b)| (a - b).abs()).sum();
    let summary = format!(
        "{w}x{h}, {whole} distinct colours; HUD corner mean {hud:.2?} with {:.1} % bright \
         pixels and {hud_colours} colours; sky mean {sky:.2?}; difference {difference:.2}",
        hud_bright * 100.0
    );
    if whole < 24 {
        return Err(format!("the screenshot looks blank: {summary}"));
    }
    if difference < 0.15 || hud_bright < 0.005 || hud_colours < 4 {
        return Err(format!(
            "the HUD does not stand out from the sky (no readable HUD?): {summary}"
        ));
    }
    Ok(summary)
}

/// Checks the last recording: the headless example's columns, and about a row per step.
fn check_recording(recorder: &Recorder) -> Result<String, String> {
    let Some((path, rows)) = recorder.last() else {
        return Err("no telemetry recording was written".into());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let expected = "time,x,z,speed,rpm,gear,throttle,brake,clutch,steering,handbrake,";
    if !header.starts_with(expected) || !header.contains("_slip_ratio") {
        return Err(format!("{}: unexpected header `{header}`", path.display()));
    }
    let columns = header.split(',').count();
    let lines: Vec<&str> = lines.collect();
    if lines.len() as u64 != rows || rows < 200 {
        return Err(format!(
            "{}: {} lines, {rows} rows counted, at least 200 expected",
            path.display(),
            lines.len()
        ));
    }
    if let Some(bad) = lines.iter().find(|l| l.split(',').count() != columns) {
        return Err(format!(
            "{}: a row without {columns} cells: {bad}",
            path.display()
        ));
    }
    Ok(format!(
        "{rows} rows of {columns} columns in {}",
        path.display()
    ))
}

fn finish(
    mut commands: Commands,
    mut smoke: ResMut<Smoke>,
    recorder: Res<Recorder>,
    debug: Res<DebugView>,
    vehicles: Query<(&Transform, &Name), With<PlayerVehicle>>,
) {
    if smoke.keys_from.is_some() {
        return;
    }
    if smoke.frame == smoke.frames {
        smoke.driving = smoke.started.map(|s| s.elapsed());
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(smoke.screenshot.clone()))
            .observe(
                |captured: On<ScreenshotCaptured>, mut smoke: ResMut<Smoke>| {
                    smoke.image = Some(check_image(&captured.image));
                },
            );
    }
    if smoke.frame <= smoke.frames {
        return;
    }
    let saved = std::fs::metadata(&smoke.screenshot).is_ok_and(|m| m.len() > 0);
    if !(saved && smoke.image.is_some()) && smoke.frame < smoke.frames + 600 {
        return; // the screenshot arrives and is written a few frames later
    }
    let mut failures = Vec::new();
    let position = vehicles.iter().next().map(|(t, _)| t.translation);
    let travelled = position.map_or(0.0, |p| (p - START).with_y(0.0).length());
    if !position.is_some_and(|p| p.is_finite()) {
        failures.push(format!(
            "the vehicle is missing or not finite: {position:?}"
        ));
    } else if travelled <= 5.0 {
        failures.push(format!(
            "the vehicle moved only {travelled:.1} m (> 5 m expected)"
        ));
    }
    match &smoke.image {
        Some(Ok(summary)) => println!("smoke run: screenshot {summary}"),
        Some(Err(e)) => failures.push(e.clone()),
        None => failures.push("no screenshot arrived within 600 frames".into()),
    }
    if !saved {
        failures.push(format!("{} was not saved", smoke.screenshot.display()));
    }
    match check_recording(&recorder) {
        Ok(summary) => println!("smoke run: telemetry {summary}"),
        Err(e) => failures.push(e),
    }
    if !debug.on {
        failures.push("the debug view did not turn on with F1".into());
    }
    let fps = smoke.driving.map_or(0.0, |d| {
        f64::from(smoke.frames - 1) / d.as_secs_f64().max(1e-9)
    });
    println!(
        "smoke run: {} frames at {fps:.1} frames/s (wall clock), vehicle at {position:?}, \
         {travelled:.1} m from the start, screenshot {}",
        smoke.frames,
        smoke.screenshot.display(),
    );
    let name = vehicles
        .iter()
        .next()
        .map_or_else(String::new, |(_, n)| n.as_str().to_owned());
    smoke.failures = failures;
    smoke.keys_from = Some((smoke.frame, name));
}

/// After the screenshot: R must stop the vehicle (a reset puts it back upright at rest), Tab
/// must bring the next vehicle file, and P must hand it to the autopilot, which drives it off
/// (faster than 0.5 m/s within two seconds); then the run ends with every failure listed, and
/// the process with a failure exit code if there was one.
fn check_keys(
    mut smoke: ResMut<Smoke>,
    vehicles: Query<(&Name, &Velocity, Has<PathFollower>), With<PlayerVehicle>>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some((from, old)) = smoke.keys_from.clone() else {
        return;
    };
    let since = smoke.frame - from;
    let current = vehicles.iter().next();
    if since == 1 {
        // R was pressed this frame; the reset ran in `Update`.
        match current {
            Some((_, v, _)) if v.linear.length() < 0.5 => {
                println!("smoke run: R reset the vehicle (at rest)");
            }
            other => smoke.failures.push(format!(
                "R did not reset the vehicle: velocity {:?}",
                other.map(|(_, v, _)| v.linear)
            )),
        }
    }
    if since > 3 && !smoke.switched && current.is_some_and(|(n, ..)| n.as_str() != old) {
        let new = current.map_or("", |(n, ..)| n.as_str());
        println!("smoke run: Tab switched from {old} to {new}");
        smoke.switched = true;
    }
    if let Some((_, v, true)) = current {
        smoke.autopilot_speed = smoke.autopilot_speed.max(v.linear.length());
    }
    if since < 160 {
        return;
    }
    if !smoke.switched {
        smoke
            .failures
            .push(format!("Tab did not switch from {old} in 160 frames"));
    }
    // Driven off: faster than 0.5 m/s at some time in the 2 s after P. (Where it goes then
    // depends on where the last vehicle stopped; the autopilot follows its route and may meet
    // a parked vehicle on the way.)
    let fastest = smoke.autopilot_speed;
    match current {
        Some((_, v, true)) if fastest > 0.5 => println!(
            "smoke run: P handed the vehicle to the autopilot (up to {fastest:.1} m/s in 2 s, \
             {:.1} m/s then)",
            v.linear.length()
        ),
        other => smoke.failures.push(format!(
            "P did not start the autopilot: following {:?}, at most {fastest:.2} m/s, velocity \
             {:?}",
            other.map(|(.., f)| f),
            other.map(|(_, v, _)| v.linear)
        )),
    }
    if smoke.failures.is_empty() {
        println!("smoke run: PASS");
        exit.write(AppExit::Success);
    } else {
        for failure in &smoke.failures {
            eprintln!("smoke run: FAIL: {failure}");
        }
        exit.write(AppExit::error());
    }
}
