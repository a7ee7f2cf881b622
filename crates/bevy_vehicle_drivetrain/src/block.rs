//! The [`Block`] trait: what every drivetrain block, built-in or user-written, implements.
//!
//! A block is an ECS component on its own entity. The component holds the block's **settings**
//! (what a vehicle file tunes) and **inputs** (what the driver or a game sets each step); both
//! are plain public fields. The solver keeps a private copy of the component and, beside it,
//! three more kinds of data the block declares:
//!
//! | kind | declared as | who writes it | when |
//! |---|---|---|---|
//! | continuous state | [`Block::state_len`] `f64`s (speeds, angles, …) | the RK4 integrator | committed once per substep |
//! | runtime state | [`Block::Runtime`] (modes, timers, filtered inputs) | [`Block::begin_step`], [`Block::update_modes`] | once per step / per substep |
//! | sensors | [`Block::Sensors`], a component on the block entity | [`Block::sensors`] | after every fixed step |
//!
//! # Call cadence
//!
//! For each fixed step of length `dt`, split into `N` substeps of length `h = dt / N`:
//!
//! 1. [`Block::begin_step`] once, with `&mut Runtime`: per-step decisions (throttle lag, shift
//!    timers). Never called inside a stage.
//! 2. For each substep: one stage evaluation at the committed state, then
//!    [`Block::update_modes`] (lock/slip, hold/release) with `&mut Runtime`, then the
//!    remaining RK4 stages.
//! 3. In each stage, [`Block::upstream`] (leaves first) and [`Block::downstream`] (root first).
//!    Both take `&self` and `&Runtime`: stage functions are pure.
//! 4. After the step, one more evaluation at the final state and [`Block::sensors`].
//!
//! # Ports
//!
//! A block has at most one input and a fixed list of named outputs, declared by
//! [`Block::ports`]. A block without an input is a **root** (an engine or motor); a vehicle has
//! at most one (a trailer has none: its wheels turn freely). Connections name the upstream output port explicitly (see
//! [`DrivenBy`](crate::DrivenBy)), so a differential's left and right outputs are never confused
//! with the order of a list.

use bevy::ecs::component::{Component, Mutable};

use crate::controls::VehicleControls;
use crate::shaft::{Pass, Shaft, ShaftUp};

/// One output port of a block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSpec {
    /// The port's name, as used in connections and vehicle files (e.g. `"left"`).
    pub name: &'static str,
    /// Whether the vehicle is refused when nothing is connected to this port.
    pub required: bool,
}

impl PortSpec {
    /// A port that must be connected.
    pub const fn required(name: &'static str) -> Self {
        PortSpec {
            name,
            required: true,
        }
    }

    /// A port that may be left open (it then drives nothing).
    pub const fn optional(name: &'static str) -> Self {
        PortSpec {
            name,
            required: false,
        }
    }
}

/// Whether a block has an input port, and whether it must be driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// No input: the block is the drivetrain's root (an engine or motor). A vehicle has at most
    /// one.
    None,
    /// An input that must be driven by another block.
    Required,
    /// An input that may be left undriven: the block then turns freely on its own (a wheel on a
    /// trailer or on an undriven axle), with nothing upstream of it.
    Optional,
}

/// The ports of a block: its input, and its outputs in a fixed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// The block's input port.
    pub input: Input,
    /// The block's output ports. The order is the order of the `outputs` slices handed to the
    /// stage functions.
    pub outputs: &'static [PortSpec],
}

impl Ports {
    /// A root with a single required output called `"out"`.
    pub const ROOT: Ports = Ports {
        input: Input::None,
        outputs: &[PortSpec::required("out")],
    };
    /// One required input and one required output called `"out"` (shafts, gears, clutches,
    /// gearboxes).
    pub const INLINE: Ports = Ports {
        input: Input::Required,
        outputs: &[PortSpec::required("out")],
    };
    /// An optional input and no outputs (wheels, which may be driven or free).
    pub const LEAF: Ports = Ports {
        input: Input::Optional,
        outputs: &[],
    };
    /// One required input and two required outputs, `"left"` and `"right"` (differentials).
    pub const SPLIT: Ports = Ports {
        input: Input::Required,
        outputs: &[PortSpec::required("left"), PortSpec::required("right")],
    };

    /// Index of the output called `name`, if there is one.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|p| p.name == name)
    }
}

/// What the solver hands to [`Block::begin_step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepContext {
    /// Length of the fixed step (s).
    pub dt: f64,
    /// Number of substeps the step is split into.
    pub substeps: u32,
}

/// Whether a wait with `remaining` seconds left is over, for a timer that counts down in ticks
/// (fixed steps, or substeps) of `tick` seconds: once less than half a tick is left. A wait
/// then lasts its duration rounded to the nearest whole tick at every tick length. Counting
/// down to exactly zero would add a whole tick wherever rounding leaves a hair of time over:
/// Bevy keeps the fixed step in whole nanoseconds, so twelve steps at 30 Hz are 4 ns short of
/// 0.4 s, and such a wait took 13 steps at 30 Hz but 24 at 60 Hz.
///
/// Per-step logic with a duration (a gearbox's shift time, say) should use it.
#[inline]
pub fn wait_over(remaining: f64, tick: f64) -> bool {
    remaining <= 0.5 * tick
}

/// Counts a wait down by one tick of `tick` seconds: returns `true` (and leaves `remaining` at
/// 0) when the wait is over by [`wait_over`] before this tick, else spends the tick
/// (`remaining -= tick`) and returns `false`. What a gear waiting in neutral does at the start
/// of each substep, manual or automatic.
#[inline]
pub(crate) fn count_down(remaining: &mut f64, tick: f64) -> bool {
    if wait_over(*remaining, tick) {
        *remaining = 0.0;
        true
    } else {
        *remaining -= tick;
        false
    }
}

/// Where a block sits in its drivetrain, as far as the driver's controls care: what
/// [`Block::apply_controls_on`] is told beside the controls. Found when the drivetrain is
/// built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrivePath {
    /// Whether a block that selects the direction of travel
    /// ([`Block::SELECTS_DIRECTION`]: a gearbox, an automatic transmission) lies between this
    /// block and the wheels its torque reaches, so that a reverse gear already turns this
    /// block's drive round. A torque source there (a hybrid's motor ahead of the gearbox, like
    /// the engine) must not sign its command by the selected gear's direction; one with no
    /// such block on its way to the wheels (an electric car's motor on a fixed reduction, a
    /// hybrid's motor behind the gearbox) must. A block's own subtree and the other branches
    /// of the blocks above it count; the blocks above it do not (their drive does not pass
    /// through this block's path to the wheels). `false` until the drivetrain is built.
    pub through_direction_selector: bool,
}

/// What the solver hands to the stage functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageContext {
    /// Which pass this is; see [`Pass`].
    pub pass: Pass,
    /// Length of the substep being integrated (s).
    pub substep: f64,
    /// Share of the driver's demand that torque sources act on at this stage (0..1; 1 when
    /// nothing limits it): a traction control's limit, set by the vehicle's stage hook
    /// ([`StageWheels::set_drive_limit`](crate::StageWheels::set_drive_limit)). The built-in
    /// engines scale their throttle by it (never below what their idle controller asks),
    /// motors their torque command; friction is unchanged. A custom torque source should do
    /// the same.
    pub drive_limit: f64,
}

/// What a block sees of its shafts after a stage, for [`Block::update_modes`] and
/// [`Block::sensors`].
#[derive(Clone, Copy, Debug)]
pub struct Shafts<'a> {
    /// The input shaft: what this block sent up, and what came down to it. `None` for a root.
    pub input: Option<&'a Shaft>,
    /// The output shafts in port order: what each sent up, and what this block sent down.
    pub outputs: &'a [Shaft],
    /// The share of the driver's demand the torque sources acted on at that stage
    /// ([`StageContext::drive_limit`]; 0..1, 1 when nothing limits it), so that a torque
    /// source's sensors report the torque it produced, not the torque asked for.
    pub drive_limit: f64,
}

/// How a block's discrete mode changed in [`Block::begin_step`] or [`Block::update_modes`].
///
/// Ordered by severity, so several changes combine with `max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ModeChange {
    /// Nothing changed.
    #[default]
    Unchanged,
    /// The stage functions changed, but the current speeds are still consistent with every
    /// rigid connection (a clutch starting to slip, a gear's power flow reversing). The solver
    /// re-evaluates the stage.
    Smooth,
    /// A rigid connection appeared (a clutch or differential locked, a brake gripped, a gear
    /// engaged), so speeds may disagree across it. The solver runs a momentum pass that makes
    /// them agree while conserving angular momentum, then re-evaluates the stage.
    Impulsive,
}

/// A setting that was refused: which field and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// Path of the field inside the block, e.g. `torque_curve[3].1` or `forward_ratios[2]`.
    pub field: String,
    /// Why the value was refused.
    pub reason: String,
}

impl core::fmt::Display for SettingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "setting `{}` {}", self.field, self.reason)
    }
}

impl std::error::Error for SettingError {}

impl SettingError {
    /// A new error for `field`, with `reason` (e.g. `"must be positive, got -3"`).
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        SettingError {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Checks that `value` is finite (not NaN, not ±∞).
#[inline]
pub fn check_finite(field: &str, value: f64) -> Result<(), SettingError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(not_finite(field, value))
    }
}

#[cold]
fn not_finite(field: &str, value: f64) -> SettingError {
    SettingError::new(field, format!("must be a finite number, got {value}"))
}

/// Checks that `value` is finite and `> 0`.
#[inline]
pub fn check_positive(field: &str, value: f64) -> Result<(), SettingError> {
    check_finite(field, value)?;
    if value > 0.0 {
        Ok(())
    } else {
        Err(SettingError::new(
            field,
            format!("must be greater than 0, got {value}"),
        ))
    }
}

/// Checks that `value` is finite and `>= 0`.
#[inline]
pub fn check_non_negative(field: &str, value: f64) -> Result<(), SettingError> {
    check_finite(field, value)?;
    if value >= 0.0 {
        Ok(())
    } else {
        Err(SettingError::new(
            field,
            format!("must not be negative, got {value}"),
        ))
    }
}

/// Checks that `value` is finite, `> 0` and `<= 1`: an efficiency, or a share of something.
#[inline]
pub fn check_fraction(field: &str, value: f64) -> Result<(), SettingError> {
    check_positive(field, value)?;
    if value <= 1.0 {
        Ok(())
    } else {
        Err(SettingError::new(
            field,
            format!("must not exceed 1, got {value}"),
        ))
    }
}

/// Checks that `value` lies in `[min, max]`.
#[inline]
pub fn check_range(field: &str, value: f64, min: f64, max: f64) -> Result<(), SettingError> {
    check_finite(field, value)?;
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(SettingError::new(
            field,
            format!("must lie in [{min}, {max}], got {value}"),
        ))
    }
}

/// Clamps a driver input to `[min, max]`; NaN becomes `fallback`.
///
/// Inputs are clamped rather than refused: a driver can always press a pedal too far.
#[inline]
pub fn clamp_input(value: f64, min: f64, max: f64, fallback: f64) -> f64 {
    if value.is_nan() {
        fallback
    } else {
        value.clamp(min, max)
    }
}

/// A sensors component for blocks that expose none.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct NoSensors;

/// A drivetrain block: an ECS component that the solver can run.
///
/// Implement it for your own component and register it with
/// [`RegisterBlock::register_block`](crate::RegisterBlock::register_block); it then connects
/// and runs exactly like a built-in block. See the [module docs](self) for the call cadence and
/// [`crate::shaft`] for what the stage functions read and write.
///
/// A minimal gear:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_vehicle_drivetrain::prelude::*;
///
/// /// Makes the input turn `ratio` times as fast as the output.
/// #[derive(Component, Clone)]
/// struct SimpleGear {
///     /// Input speed / output speed (dimensionless, non-zero).
///     ratio: f64,
/// }
///
/// impl Block for SimpleGear {
///     const TYPE_NAME: &'static str = "SimpleGear";
///     type Runtime = ();
///     type Sensors = NoSensors;
///
///     fn ports(&self) -> Ports {
///         Ports::INLINE
///     }
///     fn validate(&self) -> Result<(), SettingError> {
///         check_finite("ratio", self.ratio)?;
///         if self.ratio == 0.0 {
///             return Err(SettingError::new("ratio", "must not be 0"));
///         }
///         Ok(())
///     }
///     fn upstream(&self, _: &(), _: &[f64], _: &StageContext, outputs: &[Shaft], _: &mut [f64]) -> ShaftUp {
///         outputs[0].up.reflect(self.ratio, self.ratio)
///     }
///     fn downstream(
///         &self, _: &(), _: &[f64], _: &StageContext,
///         input: Option<&Shaft>, outputs: &mut [Shaft], _: &mut [f64],
///     ) {
///         let input = Shaft::down_of(input);
///         outputs[0].down = ShaftDown { torque: input.torque * self.ratio, speed: input.speed / self.ratio };
///     }
///     fn sensors(&self, _: &(), _: &[f64], _: &Shafts) -> NoSensors {
///         NoSensors
///     }
/// }
/// ```
pub trait Block: Component<Mutability = Mutable> + Clone {
    /// The block type's name in error messages and vehicle files, e.g. `"Engine"`.
    const TYPE_NAME: &'static str;

    /// Discrete and latched state the solver keeps for this block: modes (locked/slipping),
    /// timers, filtered inputs. Changed only in [`Block::begin_step`] and
    /// [`Block::update_modes`].
    type Runtime: Clone + Default + Send + Sync + 'static;

    /// Read-only outputs, written to a component of this type on the block entity after every
    /// fixed step. Use [`NoSensors`] for none.
    type Sensors: Component<Mutability = Mutable> + Clone + Default;

    /// The block's ports. Must not change while the block is connected.
    fn ports(&self) -> Ports;

    /// Number of `f64` continuous states the integrator keeps for this block (0 for massless
    /// blocks). When a change of settings changes it (a wheel given a tire, say), the vehicle
    /// is rebuilt around the block and [`Block::reshape_state`] carries its state over.
    fn state_len(&self) -> usize {
        0
    }

    /// Checks the settings. Called whenever the component changes; a block whose settings are
    /// refused keeps running on its last good copy (or, when first added, keeps its vehicle from
    /// being built).
    fn validate(&self) -> Result<(), SettingError> {
        Ok(())
    }

    /// Whether this block takes inputs from the driver's [`VehicleControls`] (it overrides
    /// [`Block::apply_controls`] or [`Block::apply_controls_on`]). Default `true`. A block
    /// that takes none (a wheel, a differential) sets it `false`, and the plugin then hands
    /// it no controls, which spares finding its vehicle each step the controls change (a
    /// car's four wheels and its differential were five of its eight such lookups). Left
    /// `true`, a block that takes nothing is only asked for nothing.
    const TAKES_CONTROLS: bool = true;

    /// Takes the inputs this block cares about from the driver's controls, when they change.
    /// Returns whether anything changed (so that unchanged blocks are not copied into the
    /// solver again). An engine takes the throttle, a gearbox the selected gear, and so on.
    /// The plugin calls it only for block types whose [`Block::TAKES_CONTROLS`] is `true`.
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        let _ = controls;
        false
    }

    /// [`Block::apply_controls`] for a block told where it sits (`path`); what the plugin
    /// calls. The default ignores `path`. A torque source that signs its command by the
    /// selected gear's direction ([`VehicleControls::direction`]) overrides it and leaves the
    /// sign out when [`DrivePath::through_direction_selector`] is set: the gearbox's reverse
    /// ratio turns its drive round already, and signing it too drove a parallel hybrid
    /// forwards in reverse gear.
    fn apply_controls_on(&mut self, controls: &VehicleControls, path: DrivePath) -> bool {
        let _ = path;
        self.apply_controls(controls)
    }

    /// Whether this block selects the direction of travel from the driver's gear, turning the
    /// drive round in reverse (a gearbox's or an automatic's reverse gear). A torque source
    /// between which and the wheels such a block lies is told so
    /// ([`DrivePath::through_direction_selector`]). Default `false`.
    const SELECTS_DIRECTION: bool = false;

    /// Takes the driver inputs of `source` (a newer copy of this block) if it differs from
    /// `self` in nothing else, and says whether it did; otherwise leaves `self` unchanged and
    /// returns `false`.
    ///
    /// When a block component changes, the solver first offers the change here: inputs are
    /// clamped where they are used rather than refused, so a change of inputs alone (a
    /// throttle, a brake torque) needs neither a settings check nor a copy of the settings.
    /// Any other change is checked with [`Block::validate`] and copied whole. The default
    /// takes nothing, which is always correct; for blocks whose inputs change every step,
    /// copy the input fields from `source`, compare, and put them back when the blocks still
    /// differ:
    ///
    /// ```ignore
    /// fn take_inputs(&mut self, source: &Self) -> bool {
    ///     let old = core::mem::replace(&mut self.command, source.command);
    ///     if *self == *source {
    ///         return true;
    ///     }
    ///     self.command = old;
    ///     false
    /// }
    /// ```
    ///
    /// (A `NaN` anywhere makes the two unequal, so such a change always gets checked.)
    fn take_inputs(&mut self, source: &Self) -> bool {
        let _ = source;
        false
    }

    /// Derives cached values in `runtime` from the settings. Called when the block enters a
    /// drivetrain (before [`Block::init`]), whenever its component changes, and when a rebuilt
    /// drivetrain carries the block's runtime over (the rebuild may come with new settings).
    /// It keeps the runtime's running state (modes, timers, filters) unless the new settings
    /// rule it out (a gear that no longer exists, say).
    fn settings_changed(&self, runtime: &mut Self::Runtime) {
        let _ = runtime;
    }

    /// Sets the initial continuous state (zeroed before the call) and runtime state when the
    /// block enters a drivetrain.
    fn init(&self, runtime: &mut Self::Runtime, state: &mut [f64]) {
        let _ = (runtime, state);
    }

    /// Carries a running block's continuous state over a rebuild that changed its number of
    /// states ([`Block::state_len`]): `old` is its state before, `state` its new state as
    /// [`Block::init`] set it. The runtime starts afresh from `init`. The default keeps
    /// `init`'s state; a wheel keeps its angle and spin whether or not it gained or lost its
    /// tire's states. (A rebuild that keeps the number of states keeps state and runtime
    /// whole.)
    fn reshape_state(&self, old: &[f64], state: &mut [f64]) {
        let _ = (old, state);
    }

    /// Called after [`Drivetrain::set_state`](crate::Drivetrain::set_state) overwrote this
    /// block's continuous state with `state`, before the momentum pass that makes speeds agree
    /// across rigid connections again: for the modes the new state contradicts. The built-in
    /// wheel lets go of a brake that held it still once it is set spinning (a held brake is
    /// static friction, which a spinning wheel does not have); the engine fires again when
    /// set turning at or above its stall speed with the ignition on. Default: nothing.
    fn state_set(&self, runtime: &mut Self::Runtime, state: &[f64]) {
        let _ = (runtime, state);
    }

    /// Per-step logic, called once per fixed step before any stage: throttle lag, shift timers,
    /// anything that must not run several times per step. May reset continuous states that
    /// accumulate over a step (force impulses, for instance); speeds should be left alone.
    fn begin_step(
        &self,
        runtime: &mut Self::Runtime,
        state: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        let _ = (runtime, state, step);
        ModeChange::Unchanged
    }

    /// Called at the start of every substep (the first one after [`Block::begin_step`]),
    /// outside the stages, with the substep's length `substep` (s): for what must follow the
    /// substep rather than the fixed step. An automatic's ratio ramp does, so that a shift
    /// makes the same ratio changes, and loses the same energy in the momentum passes they
    /// call for, at any fixed-step rate. Reports a mode change as `begin_step` does. Called on
    /// custom blocks and on the manual gearbox, whose shift engages at the substep nearest its
    /// end; the built-in engine, motor, clutch, differential and wheel have nothing to do
    /// here.
    fn begin_substep(
        &self,
        runtime: &mut Self::Runtime,
        state: &mut [f64],
        substep: f64,
    ) -> ModeChange {
        let _ = (runtime, state, substep);
        ModeChange::Unchanged
    }

    /// Upstream pass: combine what the outputs sent up (`outputs[i].up`) into what the input
    /// sends up.
    ///
    /// Leaves (no outputs) describe themselves; blocks without an input shaft (the root, free
    /// blocks) are never asked. A block may write here the derivatives of those of its states
    /// that do not depend on the drive torque (a wheel writes its tire's slip and force
    /// derivatives, which come out of the same tire evaluation as its reaction torque);
    /// [`Block::downstream`] writes the rest. Must be pure.
    fn upstream(
        &self,
        runtime: &Self::Runtime,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        let _ = (runtime, state, stage, outputs, derivative);
        ShaftUp::FREE
    }

    /// Downstream pass: from the input shaft (`None` for the root and free blocks), write what
    /// goes down each output (`outputs[i].down`) and the derivative of every one of this block's
    /// continuous states not written by [`Block::upstream`] (in a [`Pass::Momentum`] pass: the
    /// *change* of each speed, 0 for other states).
    /// `input.up` is what this block's own [`Block::upstream`] returned in this stage;
    /// `input.down` is what arrived from upstream; `outputs[i].up` is what the outputs sent up.
    /// Must be pure.
    fn downstream(
        &self,
        runtime: &Self::Runtime,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    );

    /// Called once per substep after the first stage, with that stage's shaft values: switch
    /// modes (lock, slip, hold, release) and report how. The solver repeats the stage and this
    /// call until nothing changes (a few times at most).
    fn update_modes(
        &self,
        runtime: &mut Self::Runtime,
        state: &[f64],
        shafts: &Shafts,
    ) -> ModeChange {
        let _ = (runtime, state, shafts);
        ModeChange::Unchanged
    }

    /// Called after each momentum pass (a gear engaged, a coupling locked) with the angular
    /// impulses (N·m·s) that pass sent through this block's shafts: whether the block could
    /// carry them. A coupling of finite capacity `T` (a clutch, a limited-slip lock) carries at
    /// most `T·substep` within one substep; one asked for more switches to slipping here and
    /// returns `true`, and the solver runs the pass again. So a gear engaged against a
    /// slipping-capable clutch makes the clutch slip instead of jerking the wheels to the
    /// engine's speed. The default carries any impulse.
    fn limit_impulse(&self, runtime: &mut Self::Runtime, shafts: &Shafts, substep: f64) -> bool {
        let _ = (runtime, shafts, substep);
        false
    }

    /// Sensor values after a fixed step, from the final state and shaft values.
    fn sensors(&self, runtime: &Self::Runtime, state: &[f64], shafts: &Shafts) -> Self::Sensors;
}
