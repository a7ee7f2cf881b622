//! Driver input for `bevy_vehicle_physics`: a public
//! [`leafwing-input-manager`](leafwing_input_manager) action set, [`DriveAction`], with a
//! gamepad and keyboard default map, turned into a vehicle's
//! [`VehicleControls`] every fixed step.
//!
//! Spawn a [`Driver`] (it brings the default [`InputMap`]; replace it to rebind) and point it at
//! a vehicle:
//!
//! ```no_run
//! # use bevy::prelude::*;
//! # use bevy_vehicle_input::Driver;
//! # fn spawn(mut commands: Commands, car: Entity) {
//! commands.spawn(Driver::of(car));
//! # }
//! ```
//!
//! A steering wheel and pedal set is a gamepad to Bevy: bind its axes to the same actions,
//! e.g. `map.insert_axis(DriveAction::Steer, GamepadControlAxis::LEFT_X)`.
//!
//! Input is read on the fixed step: leafwing swaps to a fixed-step view of the actions around
//! `FixedUpdate`, so a press is seen by exactly one fixed step however many frames it lasts.

use bevy::prelude::*;
use bevy_vehicle_chassis::VehicleSystems;
use bevy_vehicle_drivetrain::prelude::*;
use leafwing_input_manager::plugin::InputManagerSystem;
use leafwing_input_manager::prelude::*;

/// What a driver can do. Pedals are buttons with analog values (0..1); steering is an axis
/// (−1 full left .. 1 full right).
///
/// Default bindings ([`DriveAction::default_input_map`]):
///
/// | action | gamepad | keyboard |
/// |---|---|---|
/// | `Throttle` | right trigger | W, ↑ |
/// | `Brake` | left trigger | S, ↓ |
/// | `Clutch` | — | C |
/// | `Steer` | left stick X (5 % dead zone) | A/D, ←/→ |
/// | `ShiftUp` / `ShiftDown` | right / left bumper | E / Q |
/// | `Handbrake` | south (A / cross) | Space |
/// | `ToggleAutomatic` | north (Y / triangle) | M |
/// | `Retarder` | west (X / square) | F |
/// | `ToggleRange` | d-pad down | L |
/// | `Reset` | start | R |
/// | `NextVehicle` | select / view | Tab |
#[derive(Actionlike, PartialEq, Eq, Hash, Clone, Copy, Debug, Reflect)]
pub enum DriveAction {
    /// Throttle pedal, 0..1.
    Throttle,
    /// Brake pedal, 0..1.
    Brake,
    /// Clutch pedal, 0 (released, engaged) .. 1 (pressed, open).
    Clutch,
    /// Steering, −1 (full left) .. 1 (full right).
    #[actionlike(Axis)]
    Steer,
    /// One gear up.
    ShiftUp,
    /// One gear down.
    ShiftDown,
    /// Handbrake lever, 0..1.
    Handbrake,
    /// Switches the driver's automatic shifting on and off.
    ToggleAutomatic,
    /// Retarder lever, 0..1 (vehicles with a retarder).
    Retarder,
    /// Switches the transfer case between high and low range (vehicles with one).
    ToggleRange,
    /// Put the vehicle back on its wheels (for the game to handle).
    Reset,
    /// Switch to the next vehicle (for the game to handle).
    NextVehicle,
}

impl DriveAction {
    /// The default gamepad and keyboard bindings (see the table on [`DriveAction`]).
    pub fn default_input_map() -> InputMap<Self> {
        use DriveAction::*;
        InputMap::default()
            .with(Throttle, GamepadButton::RightTrigger2)
            .with(Throttle, KeyCode::KeyW)
            .with(Throttle, KeyCode::ArrowUp)
            .with(Brake, GamepadButton::LeftTrigger2)
            .with(Brake, KeyCode::KeyS)
            .with(Brake, KeyCode::ArrowDown)
            .with(Clutch, KeyCode::KeyC)
            .with_axis(
                Steer,
                GamepadControlAxis::LEFT_X.with_deadzone_symmetric(0.05),
            )
            .with_axis(Steer, VirtualAxis::ad())
            .with_axis(Steer, VirtualAxis::horizontal_arrow_keys())
            .with(ShiftUp, GamepadButton::RightTrigger)
            .with(ShiftUp, KeyCode::KeyE)
            .with(ShiftDown, GamepadButton::LeftTrigger)
            .with(ShiftDown, KeyCode::KeyQ)
            .with(Handbrake, GamepadButton::South)
            .with(Handbrake, KeyCode::Space)
            .with(ToggleAutomatic, GamepadButton::North)
            .with(ToggleAutomatic, KeyCode::KeyM)
            .with(Retarder, GamepadButton::West)
            .with(Retarder, KeyCode::KeyF)
            .with(ToggleRange, GamepadButton::DPadDown)
            .with(ToggleRange, KeyCode::KeyL)
            .with(Reset, GamepadButton::Start)
            .with(Reset, KeyCode::KeyR)
            .with(NextVehicle, GamepadButton::Select)
            .with(NextVehicle, KeyCode::Tab)
    }
}

/// How the driver's hands and feet move: steering speed and automatic shift points.
#[derive(Clone, Debug, PartialEq)]
pub struct DriverFeel {
    /// Fastest steering change at standstill (1/s: 4 = centre to full lock in 0.25 s).
    pub steer_rate_at_rest: f64,
    /// Fastest steering change at `steer_reference_speed` and above (1/s).
    pub steer_rate_at_speed: f64,
    /// Speed at which the steering rate has fallen to `steer_rate_at_speed` (m/s, > 0).
    pub steer_reference_speed: f64,
    /// Automatic shifting: shift up above this fraction of the engine's speed limit
    /// (dimensionless).
    pub upshift_fraction: f64,
    /// Automatic shifting: shift down below this engine speed (rpm).
    pub downshift_rpm: f64,
    /// Automatic shifting: wait at least this long after a shift (s).
    pub shift_pause: f64,
}

impl Default for DriverFeel {
    fn default() -> Self {
        DriverFeel {
            steer_rate_at_rest: 4.0,
            steer_rate_at_speed: 1.2,
            steer_reference_speed: 30.0,
            upshift_fraction: 0.92,
            downshift_rpm: 1500.0,
            shift_pause: 0.8,
        }
    }
}

/// The player: carries the [`InputMap`] (the default one unless replaced) and drives
/// `vehicle`'s [`VehicleControls`] from it every fixed step.
#[derive(Component, Clone, Debug)]
#[require(InputMap<DriveAction> = DriveAction::default_input_map())]
pub struct Driver {
    /// The vehicle driven, if any.
    pub vehicle: Option<Entity>,
    /// Whether the driver shifts by itself (up near the rev limit, down at low rpm).
    pub automatic: bool,
    /// Steering speed and shift points.
    pub feel: DriverFeel,
    /// Time since the last automatic shift (s).
    since_shift: f64,
    /// Presses of the one-shot actions seen since the last fixed step.
    presses: Presses,
}

/// How many times each one-shot action was pressed since the last fixed step: the frames see
/// every press, the fixed step may run less often than they do (at 15 Hz on a 60 Hz display, a
/// tap shorter than a fixed step fell between two steps and was lost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Presses {
    shift_up: u32,
    shift_down: u32,
    toggle_automatic: u32,
    toggle_range: u32,
}

impl Driver {
    /// A driver of `vehicle`, shifting automatically.
    pub fn of(vehicle: Entity) -> Self {
        Driver {
            vehicle: Some(vehicle),
            automatic: true,
            feel: DriverFeel::default(),
            since_shift: 0.0,
            presses: Presses::default(),
        }
    }
}

/// System sets of [`VehicleInputPlugin`].
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VehicleInputSystems {
    /// In `PreUpdate`, every frame, after leafwing has read the input: counts the presses of
    /// the one-shot actions (shifts, toggles) for the next fixed step, so that none is lost
    /// when the fixed step runs less often than the frames.
    Latch,
    /// In `FixedUpdate`: actions → the driven vehicle's controls, before the vehicles read
    /// them.
    Drive,
}

/// Adds leafwing's input manager for [`DriveAction`] and the system that drives each
/// [`Driver`]'s vehicle. Needs Bevy's `InputPlugin` (in `DefaultPlugins`).
#[derive(Default)]
pub struct VehicleInputPlugin;

impl Plugin for VehicleInputPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(InputManagerPlugin::<DriveAction>::default())
            .configure_sets(
                FixedUpdate,
                VehicleInputSystems::Drive
                    .before(VehicleSystems::Validate)
                    .before(VehicleSystems::Controls)
                    .before(DrivetrainSystems::Controls),
            )
            .configure_sets(
                PreUpdate,
                VehicleInputSystems::Latch.after(InputManagerSystem::ManualControl),
            )
            .add_systems(PreUpdate, latch_presses.in_set(VehicleInputSystems::Latch))
            .add_systems(
                FixedUpdate,
                drive_from_input.in_set(VehicleInputSystems::Drive),
            );
    }
}

/// Counts each frame's presses of the one-shot actions (see [`VehicleInputSystems::Latch`]).
fn latch_presses(mut drivers: Query<(&mut Driver, &ActionState<DriveAction>)>) {
    for (mut driver, actions) in &mut drivers {
        let pressed = |action| u32::from(actions.just_pressed(&action));
        let presses = Presses {
            shift_up: pressed(DriveAction::ShiftUp),
            shift_down: pressed(DriveAction::ShiftDown),
            toggle_automatic: pressed(DriveAction::ToggleAutomatic),
            toggle_range: pressed(DriveAction::ToggleRange),
        };
        if presses != Presses::default() {
            let p = &mut driver.presses;
            p.shift_up += presses.shift_up;
            p.shift_down += presses.shift_down;
            p.toggle_automatic += presses.toggle_automatic;
            p.toggle_range += presses.toggle_range;
        }
    }
}

/// The lever's range `[top, reverse]` of a vehicle without a gearbox, an automatic or a CVT
/// (a single-speed electric car, whose motors take the lever's sign as their direction):
/// drive, neutral and reverse.
const LEVER_WITHOUT_GEARS: [i32; 2] = [1, 1];

/// How far the lever goes, `[top, reverse]`: a manual gearbox's forward and reverse gears; an
/// automatic's drive (any positive selection) and its reverse gears; a CVT's drive and
/// reverse.
fn lever_range(
    gearbox: Option<&Gearbox>,
    automatic: Option<&AutomaticTransmission>,
    cvt: Option<&Cvt>,
) -> [i32; 2] {
    if let Some(g) = gearbox {
        [g.forward_ratios.len() as i32, g.reverse_ratios.len() as i32]
    } else if let Some(a) = automatic {
        [1, a.reverse_ratios.len() as i32]
    } else if cvt.is_some() {
        [1, 1]
    } else {
        LEVER_WITHOUT_GEARS
    }
}

fn drive_from_input(
    time: Res<Time>,
    mut drivers: Query<(&mut Driver, &ActionState<DriveAction>)>,
    mut vehicles: Query<(
        &mut VehicleControls,
        Option<&bevy_vehicle_chassis::VehicleTelemetry>,
    )>,
    engines: Query<(&BlockOf, &Engine)>,
    selectors: Query<
        (
            &BlockOf,
            Option<&Gearbox>,
            Option<&AutomaticTransmission>,
            Option<&Cvt>,
        ),
        Or<(With<Gearbox>, With<AutomaticTransmission>, With<Cvt>)>,
    >,
) {
    let dt = time.delta_secs_f64();
    for (mut driver, actions) in &mut drivers {
        let Some(vehicle) = driver.vehicle else {
            continue;
        };
        let Ok((mut live, telemetry)) = vehicles.get_mut(vehicle) else {
            continue;
        };
        let mut controls = live.clone();
        let speed = telemetry.map_or(0.0, |t| t.forward_speed.abs());
        let (rpm, gear) = telemetry.map_or((0.0, 0), |t| (t.engine_rpm, t.gear));
        let feel = driver.feel.clone();
        let presses = core::mem::take(&mut driver.presses);

        let throttle = f64::from(actions.clamped_button_value(&DriveAction::Throttle));
        let brake = f64::from(actions.clamped_button_value(&DriveAction::Brake));
        controls.throttle = throttle;
        controls.brake = brake;
        controls.clutch = f64::from(actions.clamped_button_value(&DriveAction::Clutch));
        controls.handbrake = f64::from(actions.clamped_button_value(&DriveAction::Handbrake));
        controls.retarder = Some(f64::from(
            actions.clamped_button_value(&DriveAction::Retarder),
        ));
        if presses.toggle_range % 2 == 1 {
            controls.range = Some(match controls.range {
                Some(TransferRange::Low) => TransferRange::High,
                _ => TransferRange::Low,
            });
        }
        // Steering follows the stick at a rate that falls with speed.
        let wanted = f64::from(actions.clamped_value(&DriveAction::Steer));
        let blend = (speed / feel.steer_reference_speed.max(1e-3)).min(1.0);
        let rate =
            feel.steer_rate_at_rest + (feel.steer_rate_at_speed - feel.steer_rate_at_rest) * blend;
        let step = rate * dt;
        controls.steering += (wanted - controls.steering).clamp(-step, step);

        // Gears: the lever, or the driver's automatic shifting.
        if presses.toggle_automatic % 2 == 1 {
            driver.automatic = !driver.automatic;
        }
        let lever = controls.gear;
        let [top, reverse] = selectors
            .iter()
            .find(|(b, ..)| b.0 == vehicle)
            .map_or(LEVER_WITHOUT_GEARS, |(_, gearbox, automatic, cvt)| {
                lever_range(gearbox, automatic, cvt)
            });
        // Each press one gear, within the gears there are.
        let shifts = i64::from(presses.shift_up) - i64::from(presses.shift_down);
        let next = (i64::from(lever) + shifts).clamp(-i64::from(reverse), i64::from(top));
        let mut next = if shifts == 0 { lever } else { next as i32 };
        driver.since_shift += dt;
        if driver.automatic && next == lever {
            let max_rpm = engines
                .iter()
                .find(|(b, _)| b.0 == vehicle)
                .map_or(f64::INFINITY, |(_, e)| e.max_rpm);
            let schedule = ShiftSchedule {
                up_rpm: feel.upshift_fraction * max_rpm,
                down_rpm: feel.downshift_rpm,
                start_gear: 1,
                hold: feel.shift_pause,
            };
            if lever == 0 && throttle > 0.05 && brake < 0.05 {
                next = schedule.start_gear; // pull away
            } else {
                next = schedule.next_gear(lever, gear, rpm, driver.since_shift, dt, top);
            }
        }
        if next != lever {
            controls.gear = next;
            driver.since_shift = 0.0;
        }
        // Unchanged controls must not trigger change detection.
        live.set_if_neq(controls);
    }
}
