//! A vehicle file driven by a program file, headless, written to a CSV.
//!
//! ```text
//! cargo run --release --example headless_drive -- [options]
//! ```
//!
//! `--help` prints the options (`USAGE`).
//!
//! The program is a RON list of timed throttle, brake, clutch, steering, gear and handbrake
//! settings (see `assets/programs/`); a command may also wait for a speed (`at_speed`, km/h),
//! as `stop_from_100.program.ron` does to brake from 100 km/h. A command whose time falls
//! inside a fixed step is weighted by the share of the step it holds for, so a program's inputs
//! add up over time alike at every rate, and a 0–100 km/h run or a stop it begins is measured
//! from the command's time. Every fixed step goes to the
//! CSV: time, position, speed, engine rpm, gear, the driver's inputs, and per wheel its load,
//! slip ratio, slip angle, longitudinal and lateral tire force, suspension travel, whether it
//! touches the ground, its toe, its camber and its tire's aligning moment.
//! A vehicle whose clutch opens only by its pedal (no `automatic`) is driven with the pedal
//! worked for it when the program never sets `clutch` (a note says so).
//! The run prints the 0–100 km/h time, the top speed, and for every time the program brakes the
//! distance covered from the pedal going down to standstill (or to the pedal coming up, with
//! the speed then); it exits with status 1 if the
//! simulation ever leaves the finite numbers, 2 on a bad file or argument or a chassis the
//! plugin refused (a body sprung too stiffly for the fixed step, say).

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::assets::source::SourceFile;
use bevy_vehicle_physics::assets::{CombinationDescription, FileBlockTypes, VehicleFileError};
use bevy_vehicle_physics::chassis::telemetry_csv::{csv_header, write_csv_row};
use bevy_vehicle_physics::drivetrain::MAX_SUBSTEPS;
use bevy_vehicle_physics::drivetrain::blocks::AutomaticClutch;
use bevy_vehicle_physics::prelude::*;
use bevy_vehicle_physics::rapier::prelude::*;
use bevy_vehicle_physics::test_track::{spawn_test_track, tour_follower};
use core::f32::consts::{PI, TAU};
use serde::Deserialize;

/// Where the throttle and the brake pedal sit in [`Program::inputs_over`]'s inputs.
const THROTTLE: usize = 0;
/// See [`THROTTLE`].
const BRAKE: usize = 1;

/// A driving program: commands in time order, each holding until the next.
#[derive(Deserialize)]
#[serde(rename = "Program", deny_unknown_fields)]
struct Program {
    /// Length of the run (s).
    duration: f64,
    /// Automatic up/down shifts in forward gears, if set.
    #[serde(default)]
    shift: Option<Shift>,
    /// If set, the driver eases the throttle while a tire's slip ratio exceeds this
    /// (dimensionless), as test drivers and traction controls do ([`ThrottleEasing`]).
    #[serde(default)]
    ease_above_slip: Option<f64>,
    commands: Vec<Command>,
}

/// Shift points (engine rpm), and the least time between two shifts (s): the driver waits
/// for the clutch to bite before judging the engine speed again.
///
/// One program drives every vehicle file, and a diesel's rev limit lies below a petrol
/// engine's shift point: the driver shifts up at `up_rpm` or at 92 % of the engine's rev
/// limit, whichever is lower, and down at `down_rpm` or 45 % of the limit
/// ([`ShiftSchedule::below_limit`]). Without `up_rpm` the driver shifts up at 92 % of the
/// limit, as a magazine's acceleration test does.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Shift {
    #[serde(default = "at_the_limit")]
    up_rpm: f64,
    down_rpm: f64,
    #[serde(default = "default_pause")]
    pause: f64,
}

fn default_pause() -> f64 {
    1.0
}

/// No up-shift point of the program's own: the engine's limit sets it.
fn at_the_limit() -> f64 {
    f64::INFINITY
}

/// The driver's inputs from `time` (s) on; unset pedals are released. With `at_speed` (km/h)
/// the command waits, past its time, until the vehicle's forward speed reaches it (the command
/// before it holds meanwhile), and every later command's time moves back by the wait: a
/// braking test from 100 km/h, say.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Command {
    time: f64,
    throttle: f64,
    brake: f64,
    clutch: f64,
    steering: f64,
    handbrake: f64,
    gear: Option<i32>,
    at_speed: Option<f64>,
}

impl Program {
    /// Checks the values serde accepted: the field (a path such as `commands[2].throttle`)
    /// and what is wrong with it, at the first bad one.
    fn check(&self) -> Result<(), (String, String)> {
        let bad = |field: String, reason: String| Err((field, reason));
        if !(self.duration.is_finite() && self.duration > 0.0) {
            return bad(
                "duration".into(),
                format!("{} s is not a positive time", self.duration),
            );
        }
        if self.duration > MAX_DURATION {
            return bad(
                "duration".into(),
                format!(
                    "{:?} s is longer than the runner runs (at most {MAX_DURATION} s, a day)",
                    self.duration
                ),
            );
        }
        if let Some(shift) = &self.shift {
            if !(shift.down_rpm.is_finite() && shift.down_rpm > 0.0) {
                return bad(
                    "shift.down_rpm".into(),
                    format!("{} is not a positive speed", shift.down_rpm),
                );
            }
            if shift.up_rpm.is_nan() || shift.up_rpm <= shift.down_rpm {
                return bad(
                    "shift.up_rpm".into(),
                    format!(
                        "{} rpm must lie above down_rpm ({} rpm)",
                        shift.up_rpm, shift.down_rpm
                    ),
                );
            }
            if !(shift.pause.is_finite() && shift.pause >= 0.0) {
                return bad(
                    "shift.pause".into(),
                    format!("{} s is not a time ≥ 0", shift.pause),
                );
            }
        }
        if let Some(slip) = self.ease_above_slip
            && !(slip.is_finite() && slip > 0.0)
        {
            return bad(
                "ease_above_slip".into(),
                format!("{slip} is not a positive slip ratio"),
            );
        }
        let mut previous = 0.0;
        for (i, c) in self.commands.iter().enumerate() {
            let field = |name: &str| format!("commands[{i}].{name}");
            if !(c.time.is_finite() && c.time >= previous) {
                return bad(
                    field("time"),
                    format!("{} s: commands run in order, from {previous} s on", c.time),
                );
            }
            previous = c.time;
            for (name, value, low) in [
                ("throttle", c.throttle, 0.0),
                ("brake", c.brake, 0.0),
                ("clutch", c.clutch, 0.0),
                ("handbrake", c.handbrake, 0.0),
                ("steering", c.steering, -1.0),
            ] {
                if !(low..=1.0).contains(&value) {
                    return bad(field(name), format!("{value} is outside {low}..=1"));
                }
            }
            if let Some(speed) = c.at_speed
                && !(speed.is_finite() && speed >= 0.0)
            {
                return bad(
                    field("at_speed"),
                    format!("{speed} km/h is not a speed ≥ 0"),
                );
            }
        }
        Ok(())
    }

    /// The last command whose time is nearest the step starting at `clock` (s, the program's
    /// clock) or before it, whatever the rate; `None` before the first. Its gear is selected
    /// at this step.
    fn in_force(&self, clock: f64, dt: f64) -> Option<usize> {
        self.commands
            .iter()
            .rposition(|c| wait_over(c.time - clock, dt))
    }

    /// The pedals and the steering over the step `[from, from + dt)` of the program's clock
    /// (s; `[throttle, brake, clutch, steering, handbrake]`), with `current` the command in
    /// force at the step (`None` before the first): each command's settings weighted by the
    /// share of the step it holds for. A command whose time falls inside a step is in force
    /// for the step nearest its time, which at a coarse rate begins up to half a step early or
    /// late (a 0.1 s command time lies halfway between two 15 Hz steps); weighted, the inputs
    /// add up over time as the program's do at any rate, so a run at 15 Hz steers as long one
    /// way as at 120 Hz. Commands that wait for a speed (`at_speed`) start at a step and are
    /// not blended.
    fn inputs_over(&self, current: Option<usize>, from: f64, dt: f64) -> [f64; 5] {
        let (first, last) = self.segments_over(current, from, dt);
        // The later segments' shares; the first takes the rest of the step, so that a step
        // held by one command has its settings exactly.
        let mut blended = [0.0; 5];
        let mut rest = 1.0;
        for j in first + 1..=last {
            let end = if j == last {
                dt
            } else {
                self.segment_start(j + 1, from, dt)
            };
            let share = (end - self.segment_start(j, from, dt)) / dt;
            rest -= share;
            for (b, v) in blended.iter_mut().zip(self.settings(j)) {
                *b += share * v;
            }
        }
        for (b, v) in blended.iter_mut().zip(self.settings(first)) {
            *b += rest * v;
        }
        blended
    }

    /// How far into the step `[from, from + dt)` of the program's clock (s) input `input` of
    /// [`Program::inputs_over`] ([`THROTTLE`], [`BRAKE`], …) first goes above zero: 0 if it is
    /// already in the step's first segment, `None` if not within the step. Where a throttle
    /// run or a stop begins, so that its time or distance runs from the command's time.
    fn rises_within(
        &self,
        current: Option<usize>,
        from: f64,
        dt: f64,
        input: usize,
    ) -> Option<f64> {
        let (first, last) = self.segments_over(current, from, dt);
        (first..=last)
            .find(|&j| self.settings(j)[input] > 0.0)
            .map(|j| {
                if j == first {
                    0.0
                } else {
                    self.segment_start(j, from, dt)
                }
            })
    }

    /// The segments of the program that hold over the step `[from, from + dt)`, first and
    /// last: segment `j` is the program before its first command for `j = 0`, else command
    /// `j − 1`, which holds from its time until the next command's. The segment before the
    /// one in force (`current`) holds until that one's time, if it lies inside the step and
    /// the command does not wait for a speed; commands whose times lie inside the step start
    /// within it unless they wait for a speed.
    fn segments_over(&self, current: Option<usize>, from: f64, dt: f64) -> (usize, usize) {
        let in_force = current.map_or(0, |k| k + 1);
        let first = if in_force > 0
            && self.commands[in_force - 1].at_speed.is_none()
            && self.commands[in_force - 1].time > from
        {
            in_force - 1
        } else {
            in_force
        };
        let mut last = in_force;
        while let Some(next) = self.commands.get(last)
            && next.at_speed.is_none()
            && next.time < from + dt
        {
            last += 1;
        }
        (first, last)
    }

    /// When segment `j ≥ 1` of [`Program::segments_over`] begins, as time into the step
    /// `[from, from + dt)` (s, within `[0, dt]`).
    fn segment_start(&self, j: usize, from: f64, dt: f64) -> f64 {
        (self.commands[j - 1].time - from).clamp(0.0, dt)
    }

    /// The settings of segment `j` of [`Program::segments_over`], as
    /// [`Program::inputs_over`] orders them (before the first command, all 0).
    fn settings(&self, j: usize) -> [f64; 5] {
        j.checked_sub(1).map_or([0.0; 5], |k| {
            let c = &self.commands[k];
            [c.throttle, c.brake, c.clutch, c.steering, c.handbrake]
        })
    }
}

/// `reason` for `field` of the RON file `path` holding `text`, located as the vehicle files'
/// errors are: at the field's value, or at the deepest part of it the file writes (a field
/// left to its default is not in the file).
fn located(path: &std::path::Path, text: &str, field: &str, reason: &str) -> String {
    use bevy_vehicle_physics::assets::source::{FieldPath, parse_tree};
    let field = FieldPath::parse(field);
    let offset = parse_tree(text).map_or(0, |tree| tree.find_written(text, &field.0).span.start);
    VehicleFileError::at(&SourceFile::new(path, text), offset, &field, reason).to_string()
}

struct Args {
    assets: PathBuf,
    vehicle: String,
    combination: Option<String>,
    tour: bool,
    program: PathBuf,
    csv: PathBuf,
    hz: f64,
    substeps: Option<u32>,
    /// The road's friction coefficient (dimensionless).
    friction: f32,
}

/// Longest a tour may take (s).
const TOUR_LIMIT: f64 = 600.0;
/// Longest a program may run (s): a day.
const MAX_DURATION: f64 = 86_400.0;
/// Slowest fixed-step rate the runner takes (steps per second).
const MIN_HZ: f64 = 1.0;
/// Fastest fixed-step rate the runner takes (steps per second): far finer than any vehicle
/// needs; far beyond it (2e9, 1e10) Bevy's fixed step, kept in whole nanoseconds, hangs or
/// panics.
const MAX_HZ: f64 = 10_000.0;

/// The runner's options, printed by `--help`.
const USAGE: &str = "\
usage: cargo run --release --example headless_drive -- [options]
  --vehicle PATH    vehicle file, relative to the asset folder, or absolute
                    (default vehicles/hatchback.vehicle.ron)
  --combination PATH  a combination file instead (a tow vehicle and its trailer, coupled);
                    the CSV follows the tow vehicle
  --program PATH    driving program, relative to the working directory (default this
                    repository's assets/programs/pull_away_brake_slalom.program.ron)
  --tour            instead of a program, drive the test track's tour
                    (`test_track::truck_tour`) with a path follower, until it stops at the end
  --csv PATH        where to write the CSV, relative to the working directory
                    (default headless_drive.csv)
  --hz N            fixed steps per second, 1 to 10000 (default 60)
  --substeps N      drivetrain RK4 substeps per step (default: the vehicle file's)
  --friction MU     the flat road's friction coefficient (default 0.9), about the tires'
                    peak friction on it; a tire file's `mu_reference` is the road it was
                    measured on (1.21 for the passenger tire: dry asphalt)
  --assets DIR      the asset folder (default this repository's assets/)
  --help            print this and exit
";

/// The positive, finite number `text`, given for `flag`.
fn positive<T: core::str::FromStr + Into<f64> + Copy>(text: &str, flag: &str) -> Result<T, String> {
    text.parse()
        .ok()
        .filter(|v: &T| {
            let v: f64 = (*v).into();
            v.is_finite() && v > 0.0
        })
        .ok_or(format!("{flag} needs a positive number"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        assets: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets")),
        vehicle: "vehicles/hatchback.vehicle.ron".into(),
        combination: None,
        tour: false,
        program: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/programs/pull_away_brake_slalom.program.ron"
        )),
        csv: "headless_drive.csv".into(),
        hz: 60.0,
        substeps: None,
        friction: 0.9,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--assets" => args.assets = value()?.into(),
            "--vehicle" => args.vehicle = value()?,
            "--combination" => args.combination = Some(value()?),
            "--tour" => args.tour = true,
            "--help" | "-h" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--program" => args.program = value()?.into(),
            "--csv" => args.csv = value()?.into(),
            "--hz" => {
                args.hz = positive(&value()?, "--hz")?;
                if !(MIN_HZ..=MAX_HZ).contains(&args.hz) {
                    return Err(format!(
                        "--hz needs a rate from {MIN_HZ} to {MAX_HZ} steps per second, got {:?}",
                        args.hz
                    ));
                }
            }
            "--friction" => args.friction = positive(&value()?, "--friction")?,
            "--substeps" => {
                args.substeps = Some(
                    value()?
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_SUBSTEPS).contains(n))
                        .ok_or(format!("--substeps needs a number in 1..={MAX_SUBSTEPS}"))?,
                );
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (`--help` lists the options)"
                ));
            }
        }
    }
    Ok(args)
}

/// The first block of type `T` of `vehicle`, if it has one.
fn block_of<T: Component + Clone>(world: &mut World, vehicle: Entity) -> Option<T> {
    let mut blocks = world.query::<(&BlockOf, &T)>();
    blocks
        .iter(world)
        .find(|(b, _)| b.0 == vehicle)
        .map(|(_, block)| block.clone())
}

fn main() {
    let fail = |message: String| -> ! {
        eprintln!("{message}");
        std::process::exit(2)
    };
    let args = parse_args().unwrap_or_else(|e| fail(e));
    let types = FileBlockTypes::default();
    let mut combination = args.combination.as_ref().map(|path| {
        CombinationDescription::load(&args.assets, path, &types)
            .unwrap_or_else(|e| fail(e.to_string()))
    });
    let mut description = match &combination {
        Some(c) => c.tow.clone(),
        None => VehicleDescription::load(&args.assets, &args.vehicle, &types)
            .unwrap_or_else(|e| fail(e.to_string())),
    };
    if let Some(n) = args.substeps {
        description.substeps = n;
        if let Some(c) = &mut combination {
            c.tow.substeps = n;
            c.trailer.substeps = n;
        }
    }
    let program_text = std::fs::read_to_string(&args.program)
        .unwrap_or_else(|e| fail(format!("{}: {e}", args.program.display())));
    let program: Program =
        VehicleFileError::parse_ron(&SourceFile::new(&args.program, program_text.as_str()))
            .unwrap_or_else(|e| fail(e.to_string()));
    if let Err((field, reason)) = program.check() {
        fail(located(&args.program, &program_text, &field, &reason));
    }

    let hz = args.hz;
    if let Some(warning) = bevy_vehicle_physics::chassis::fixed_step_warning(1.0 / hz) {
        eprintln!("warning: {warning}");
    }
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin, VehiclePhysicsPlugins))
        .insert_resource(Time::<Fixed>::from_hz(hz))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();

    let world = app.world_mut();
    let mut commands = world.commands();
    if args.tour {
        spawn_test_track(&mut commands);
    } else {
        commands.spawn((
            Name::new("road"),
            RigidBody::Fixed,
            Collider::halfspace(Vec3::Y).expect("unit normal"),
            Friction::coefficient(args.friction),
            Transform::default(),
        ));
    }
    // On its wheels, with the springs at their design deflection.
    let height = description
        .axles
        .iter()
        .map(|a| a.wheel.radius as f32 - a.height)
        .fold(0.0, f32::max);
    let at = Transform::from_xyz(0.0, height, 0.0);
    let (car, trailer) = match &combination {
        Some(c) => {
            let (tow, trailer) = c.spawn(&mut commands, at);
            (tow, Some(trailer))
        }
        None => (description.spawn(&mut commands, at), None),
    };
    world.flush();
    if args.tour {
        let follower = tour_follower(world, car);
        world.entity_mut(car).insert(follower);
    }

    // The wheels, front axle first, left before right.
    let mut wheels: Vec<(u8, bool, Entity, String)> = {
        let mut q = world.query::<(Entity, &BlockOf, &Name, &WheelMount)>();
        q.iter(world)
            .filter(|(_, b, ..)| b.0 == car)
            .map(|(e, _, n, m)| (m.axle, m.side == Side::Right, e, n.as_str().to_owned()))
            .collect()
    };
    wheels.sort_by_key(|w| (w.0, w.1));
    let wheels: Vec<(Entity, String)> = wheels.into_iter().map(|w| (w.2, w.3)).collect();

    let mut csv = csv_header(wheels.iter().map(|(_, name)| name.as_str()));

    let dt = 1.0 / hz;
    let duration = if args.tour {
        TOUR_LIMIT
    } else {
        program.duration
    };
    let steps = (duration * hz).round() as usize;
    // The tour: the largest distance from the route (m) and articulation (rad).
    let (mut off_route, mut articulation) = (0.0f32, 0.0f32);
    let (mut to_100, mut top_speed, mut start) = (None, 0.0f64, None);
    let mut current = usize::MAX;
    let mut last_shift = f64::NEG_INFINITY;
    // The highest forward gear, for the program's shifting.
    let world = app.world_mut();
    let gearbox = block_of::<Gearbox>(world, car);
    let top = gearbox
        .as_ref()
        .map_or(1, |g| g.forward_ratios.len() as i32);
    // A manual gearbox takes a gear it lacks as its nearest one: say so, since the program
    // then drives another car than it was written for.
    if let Some(g) = &gearbox {
        for (i, c) in program.commands.iter().enumerate() {
            if let Some(gear) = c.gear
                && gear != g.clamped_gear(gear)
            {
                eprintln!(
                    "warning: {}",
                    located(
                        &args.program,
                        &program_text,
                        &format!("commands[{i}].gear"),
                        &format!(
                            "the gearbox has gears {} to {}, so it takes {gear} as {}",
                            -(g.reverse_ratios.len() as i32),
                            g.forward_ratios.len(),
                            g.clamped_gear(gear)
                        ),
                    )
                );
            }
        }
    }
    // The rev limit (rpm) of the engine whose speed the telemetry reports (a motor's where
    // there is no engine), for the program's shift points.
    let rev_limit = block_of::<Engine>(world, car)
        .map(|e| e.max_rpm)
        .or_else(|| block_of::<Motor>(world, car).map(|m| m.max_rpm))
        .unwrap_or(f64::INFINITY);
    // A clutch without `automatic` opens only by its pedal, and a program that never works
    // the pedal would stall the engine at the first pull-away. Its driver then works it the
    // way a centrifugal clutch does (the engagement law latched at each drivetrain substep,
    // so the launch is the same at every step rate): biting from 1.2 times idle, closed by
    // 1000 rpm above that or 40 % of the rev limit, whichever is higher.
    let works_pedal = !args.tour && program.commands.iter().any(|c| c.clutch > 0.0);
    if let (false, Some(engine)) = (works_pedal, block_of::<Engine>(world, car)) {
        let engage_rpm = 1.2 * engine.idle_rpm;
        let foot = AutomaticClutch {
            engage_rpm,
            lock_rpm: (engage_rpm + 1000.0).max(0.4 * engine.max_rpm),
        };
        let mut clutches = world.query::<(&BlockOf, &mut Clutch)>();
        let mut footed = false;
        for (block, mut clutch) in clutches.iter_mut(world) {
            if block.0 == car && clutch.automatic.is_none() {
                clutch.automatic = Some(foot);
                footed = true;
            }
        }
        if footed {
            eprintln!(
                "note: the clutch opens only by its pedal and the program does not work it: the \
                 driver lets it bite from {:.0} rpm and close by {:.0} rpm (as `automatic` would)",
                foot.engage_rpm, foot.lock_rpm
            );
        }
    }
    // While braking: the speed when the pedal went down (m/s), the position at the start of
    // that step, and how far the car rolled within the step before the pedal went down (m).
    // Each braking run: (speed before, speed after (m/s), distance (m)).
    let mut braking: Option<(f64, Vec3, f64)> = None;
    // How far into this step the brake pedal went down (s; 0 if it was down from its start).
    let mut brake_within = 0.0;
    // The forward speed (m/s) and position at the end of the last step: where a braking run
    // whose pedal goes down in this step starts.
    let mut before = (
        0.0f64,
        app.world().get::<Transform>(car).unwrap().translation,
    );
    let mut stops: Vec<(f64, f64, f64)> = Vec::new();
    // The vehicle's engines, and when one first stalled while the controls kept it running (s).
    let engines: Vec<Entity> = {
        let world = app.world_mut();
        let mut q = world.query_filtered::<(Entity, &BlockOf), With<Engine>>();
        q.iter(world)
            .filter(|(_, b)| b.0 == car)
            .map(|(e, _)| e)
            .collect()
    };
    let mut stalled: Option<f64> = None;
    // Forward speed at the end of each step (m/s): whether the top speed was still rising.
    let mut speeds: Vec<f64> = Vec::new();
    let mut ran = 0;
    // The throttle the driver's foot applies, and the largest slip ratio of the last step.
    let easing = program.ease_above_slip.map(ThrottleEasing::above_slip);
    let (mut throttle, mut slip) = (0.0, 0.0);
    // The program's shift points, below this engine's rev limit.
    let schedule = program.shift.as_ref().map(|shift| {
        ShiftSchedule::below_limit(shift.up_rpm, shift.down_rpm, rev_limit, shift.pause)
    });
    // How long commands have waited for their speed (s): the program's clock lags by it.
    let mut waited = 0.0;
    for step in 0..steps {
        ran = step + 1;
        let t = step as f64 * dt;
        let (rpm, gear, speed) = {
            let tel = app.world().get::<VehicleTelemetry>(car).unwrap();
            (tel.engine_rpm, tel.gear, tel.forward_speed)
        };
        // A command starts with the step nearest its time, whatever the rate.
        let mut index = program.in_force(t - waited, dt);
        if let Some(i) = index
            && i != current
            && program.commands[i]
                .at_speed
                .is_some_and(|kmh| speed * 3.6 < kmh)
        {
            index = i.checked_sub(1);
            waited += dt;
        }
        if !args.tour {
            let mut controls = app.world_mut().get_mut::<VehicleControls>(car).unwrap();
            let fallback = Command::default();
            let command = index.map_or(&fallback, |i| &program.commands[i]);
            let [pedal, brake, clutch, steering, handbrake] =
                program.inputs_over(index, t - waited, dt);
            throttle = easing.map_or(pedal, |e| e.next(pedal, throttle, slip, dt));
            controls.throttle = throttle;
            controls.brake = brake;
            controls.clutch = clutch;
            controls.steering = steering;
            controls.handbrake = handbrake;
            if index != Some(current) {
                current = index.unwrap_or(usize::MAX);
                if let Some(g) = command.gear {
                    controls.gear = g;
                }
            }
            // A throttle run and a stop begin at their command's time, which may lie inside
            // this step.
            if start.is_none() && pedal > 0.0 {
                let within = program.rises_within(index, t - waited, dt, THROTTLE);
                start = Some(t + within.unwrap_or(0.0));
            }
            brake_within = program
                .rises_within(index, t - waited, dt, BRAKE)
                .unwrap_or(0.0);
            if let Some(schedule) = &schedule {
                let next = schedule.next_gear(controls.gear, gear, rpm, t - last_shift, dt, top);
                if next != controls.gear {
                    controls.gear = next;
                    last_shift = t;
                }
            }
        }
        app.update();

        let world = app.world();
        let tel = world.get::<VehicleTelemetry>(car).unwrap();
        let p = world.get::<Transform>(car).unwrap().translation;
        slip = wheels
            .iter()
            .filter_map(|(w, _)| world.get::<WheelState>(*w))
            .map(|s| s.slip_ratio)
            .fold(0.0, f64::max);
        let controls = world.get::<VehicleControls>(car).unwrap();
        top_speed = top_speed.max(tel.forward_speed);
        speeds.push(tel.forward_speed);
        // A braking run starts when the brake pedal goes down while moving and ends at
        // standstill (below 0.1 m/s) or when the pedal comes up.
        if let Some((from, at, rolled)) = braking {
            let stopped = tel.forward_speed.abs() < 0.1;
            if stopped || controls.brake <= 0.0 {
                let distance = (f64::from((p - at).with_y(0.0).length()) - rolled).max(0.0);
                stops.push((from, tel.forward_speed.abs(), distance));
                braking = None;
            }
        } else if controls.brake > 0.0 && before.0.abs() > 1.0 {
            braking = Some((before.0.abs(), before.1, before.0.abs() * brake_within));
        }
        if to_100.is_none() && tel.forward_speed >= 100.0 / 3.6 {
            // When within the step it crossed 100 km/h, its speed taken as linear over the
            // step, so that the time does not round up to the step.
            let gained = tel.forward_speed - before.0;
            let within = if gained > 0.0 {
                ((100.0 / 3.6 - before.0) / gained).clamp(0.0, 1.0)
            } else {
                1.0
            };
            to_100 = start.map(|s| t + within * dt - s);
        }
        before = (tel.forward_speed, p);
        if stalled.is_none()
            && controls.engine_running
            && engines.iter().any(|&e| {
                world
                    .get::<EngineSensors>(e)
                    .is_some_and(|s| !s.running && !s.cranking)
            })
        {
            stalled = Some(t + dt);
        }
        write_csv_row(
            &mut csv,
            t + dt,
            p,
            tel,
            controls,
            wheels
                .iter()
                .map(|(w, _)| (world.get::<WheelState>(*w), world.get::<WheelSensors>(*w))),
        )
        .unwrap();
        if !(p.is_finite() && tel.forward_speed.is_finite()) {
            eprintln!("the simulation left the finite numbers at t = {t:.3} s");
            std::process::exit(1);
        }
        if let Some(follower) = world.get::<PathFollower>(car) {
            off_route = off_route.max(follower.cross_track_error().abs());
            if let Some(trailer) = trailer {
                let heading = |e: Entity| {
                    let forward = world.get::<Transform>(e).unwrap().rotation * Vec3::NEG_Z;
                    (-forward.x).atan2(-forward.z)
                };
                let d = heading(car) - heading(trailer);
                let d = (d + PI).rem_euclid(TAU) - PI;
                articulation = articulation.max(d.abs());
            }
            if follower.finished() {
                break;
            }
        }
    }
    std::fs::write(&args.csv, csv).unwrap_or_else(|e| fail(format!("{}: {e}", args.csv.display())));
    if let Some(error) = app
        .world()
        .get::<ChassisStatus>(car)
        .and_then(ChassisStatus::error)
    {
        eprintln!("{}: the chassis was refused: {error}", description.name);
        std::process::exit(2);
    }
    let status = match app.world().get::<Drivetrain>(car).unwrap().status() {
        DrivetrainStatus::Invalid(error) => format!("drivetrain stopped: {error}"),
        other => format!("drivetrain {other:?}"),
    };
    println!(
        "{}: wrote {} ({ran} steps at {hz} Hz, {} substeps; {status})",
        description.name,
        args.csv.display(),
        description.substeps
    );
    // A run that ends while the car still gathers speed has not found its top speed.
    let window = (10.0 * hz).round() as usize;
    let rising = match speeds.as_slice() {
        [.., last] if speeds.len() > window && *last >= top_speed => {
            Some((last - speeds[speeds.len() - 1 - window]) * 3.6)
        }
        _ => None,
    };
    match rising {
        Some(gain) if gain > 0.5 => println!(
            "top speed: {:.1} km/h, still rising at the end ({gain:.1} km/h in the last 10 s): \
             a longer program would find the car's top speed",
            top_speed * 3.6
        ),
        _ => println!("top speed: {:.1} km/h", top_speed * 3.6),
    }
    if let Some(at) = stalled {
        // Not an error: a program may stall an engine. But a manual clutch the program never
        // works (its `automatic` unset) stalls at the first pull-away, and says so only here.
        println!(
            "engine stalled at {at:.2} s (below its stall_rpm) while the controls kept it running; \
             a clutch without `automatic` needs the program to work the clutch pedal"
        );
    }
    if let Some(follower) = app.world().get::<PathFollower>(car) {
        let length: f32 = follower
            .route
            .windows(2)
            .map(|w| (w[1].position - w[0].position).length())
            .sum();
        let time = app.world().resource::<Time<Fixed>>().elapsed_secs();
        println!(
            "tour: {:.0} of {length:.0} m in {time:.1} s, at most {off_route:.2} m off the route{}",
            follower.travelled(),
            trailer.map_or(String::new(), |_| format!(
                ", articulation at most {:.1}°",
                articulation.to_degrees()
            ))
        );
        if !follower.finished() {
            eprintln!("the tour did not reach its end within {TOUR_LIMIT} s");
            std::process::exit(3);
        }
        return;
    }
    match to_100 {
        Some(t) => println!("0–100 km/h: {t:.2} s"),
        None => println!("0–100 km/h: not reached"),
    }
    for (from, to, distance) in stops {
        if to < 0.1 {
            // Near a round speed (100 km/h, say), also from it, as magazines quote it: the
            // distance scales with the speed squared at a steady deceleration.
            let kmh = from * 3.6;
            let nominal = (kmh / 10.0).round() * 10.0;
            let off = (kmh - nominal).abs();
            let scaled = if (0.05..1.0).contains(&off) && nominal > 0.0 {
                format!(
                    " ({:.1} m from {nominal:.0} km/h)",
                    distance * (nominal / kmh).powi(2)
                )
            } else {
                String::new()
            };
            println!("stopping distance from {kmh:.1} km/h: {distance:.1} m{scaled}");
        } else {
            println!(
                "braking from {:.1} to {:.1} km/h: {distance:.1} m",
                from * 3.6,
                to * 3.6
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program whose steering reverses between the steps of the coarser rates.
    fn weave() -> Program {
        let command = |time: f64, steering: f64| Command {
            time,
            throttle: 0.5,
            steering,
            ..Default::default()
        };
        Program {
            duration: 3.0,
            shift: None,
            ease_above_slip: None,
            commands: vec![
                command(0.25, 0.1),
                command(1.1, -0.1),
                command(1.13, 0.3),
                command(2.05, 0.0),
            ],
        }
    }

    /// The steering the program holds over `[0, until)` (rad·s of input, as `∫ steering dt`).
    fn held(program: &Program, until: f64) -> f64 {
        let c = &program.commands;
        (0..c.len())
            .map(|k| {
                let end = c.get(k + 1).map_or(until, |n| n.time.min(until));
                c[k].steering * (end - c[k].time.min(until)).max(0.0)
            })
            .sum()
    }

    /// At every rate the steps' inputs add up to the program's: a command inside a step is
    /// weighted by the share of the step it holds for (the nearest step alone would start it
    /// up to half a step early or late: at 15 Hz the 1.1 s reversal falls halfway between two
    /// steps), and the throttle is found to go down at its command's time.
    #[test]
    fn inputs_add_up_over_time_as_the_programs_do_at_any_rate() {
        let program = weave();
        for hz in [15.0, 20.0, 30.0, 60.0, 120.0, 47.0] {
            let dt = 1.0 / hz;
            let steps = (3.0 * hz) as usize;
            let (mut steering, mut throttle, mut start) = (0.0, 0.0, None);
            for step in 0..steps {
                let t = step as f64 * dt;
                let current = program.in_force(t, dt);
                let [pedal, _, _, steer, _] = program.inputs_over(current, t, dt);
                steering += steer * dt;
                throttle += pedal * dt;
                if start.is_none() && pedal > 0.0 {
                    start = program
                        .rises_within(current, t, dt, THROTTLE)
                        .map(|within| t + within);
                }
            }
            // The throttle run starts at its command's time, inside a step or not.
            let start = start.unwrap();
            assert!(
                (start - 0.25).abs() < 1e-12,
                "{hz} Hz: the throttle goes down at {start} s"
            );
            let until = steps as f64 * dt;
            let expected = held(&program, until);
            assert!(
                (steering - expected).abs() < 1e-12,
                "{hz} Hz: {steering} rad·s of steering against {expected}"
            );
            assert!(
                (throttle - 0.5 * (until - 0.25)).abs() < 1e-12,
                "{hz} Hz: {throttle} s of throttle against {}",
                0.5 * (until - 0.25)
            );
        }
    }

    /// A command that waits for a speed starts with a step: the one before it holds the whole
    /// step, and it the whole of the next.
    #[test]
    fn a_command_waiting_for_a_speed_is_not_blended() {
        let mut program = weave();
        program.commands[1].at_speed = Some(50.0);
        program.commands[2].time = 1.5;
        let dt = 1.0 / 15.0;
        // The step nearest 1.1 s starts at 16·dt = 1.0667 s: the wait keeps command 0 in
        // force, unblended.
        let waiting = program.inputs_over(Some(0), 16.0 * dt, dt);
        assert_eq!(waiting[3], 0.1);
        // Once the speed is reached the command holds from the step's start, which the wait
        // has held within half a step of its time on the program's clock.
        let started = program.inputs_over(Some(1), 1.1 - 0.4 * dt, dt);
        assert_eq!(started[3], -0.1);
    }
}
