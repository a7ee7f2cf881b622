//! Torque converter: a hydrodynamic coupling with torque multiplication and a lock-up clutch.

use bevy::prelude::*;

use super::ClutchMode;
use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_finite,
    check_fraction, check_non_negative, check_positive, clamp_input,
};
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::{rad_s_to_rpm, rpm_to_rad_s};
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp, sign};

/// Input speeds below this (rad/s) make the speed ratio undefined; the
/// [`TorqueConverterSensors::speed_ratio`] sensor then reads 0.
const SPEED_RATIO_MIN_INPUT: f64 = 1e-6;

/// A torque converter between its input (engine side: the impeller, or pump) and its output
/// (transmission side: the turbine), with an optional lock-up clutch in parallel.
///
/// # Fluid coupling
///
/// Write `ω_i`, `ω_o` for the input and output speeds (rad/s), `Δ = ω_i − ω_o` for the slip
/// speed and `SR = ω_o/ω_i` for the speed ratio. The **coupling torque** that the fluid takes
/// from the input and hands to the output is
///
/// ```text
/// T_f = sign(Δ) · max(0, scale · K · m · min(m, |Δ| / slippage) + min(added, 0))
///     m = max(|ω_i|, |ω_o|),   K = stall_torque / ω_stall²   (N·m·s²/rad²)
/// ```
///
/// with `scale` = [`coupling_torque_scale`](Self::coupling_torque_scale) and `added` =
/// [`coupling_torque_added`](Self::coupling_torque_added). In the ordinary driving quadrant
/// (`ω_i ≥ ω_o ≥ 0`) this is the classic `T_f = K · ω_i² · φ(SR)` with the capacity function
/// `φ(SR) = min(1, (1 − SR) / slippage)`: full capacity from stall up to `SR = 1 − slippage`,
/// falling linearly to 0 at `SR = 1`. So with the output held (`SR = 0`) and the input at
/// `stall_rpm`, the coupling torque is exactly `stall_torque`, and an engine at full throttle
/// against a held output settles where its torque equals `K·ω²`. The formula is written with
/// speeds, not with `SR`, so it stays finite when `ω_i = 0` (where `SR` is undefined) and is
/// antisymmetric: when the output turns faster than the input (**overrun**, engine braking
/// through the converter, or a rolling vehicle turning a stopped engine) the turbine pumps and
/// the torque reverses, with the same law in the output's speed.
///
/// # Torque multiplication
///
/// While the input drives (`Δ > 0`, `ω_i > 0`) the stator multiplies the turbine torque:
///
/// ```text
/// T_out = TR(SR) · T_f,   TR(SR) = 1 + (torque_multiplication − 1) · clamp(1 − SR / coupling_point, 0, 1)
/// ```
///
/// `TR` is `torque_multiplication` at stall (and for a turbine turned backward, `SR < 0`),
/// falls linearly to 1 at the coupling point, and is 1 above it. On overrun there is no
/// multiplication (`TR = 1`): the stator freewheels. The input always feels `T_f` alone; the
/// difference `(TR − 1)·T_f` is taken by the stator from the housing.
///
/// # Lock-up clutch
///
/// A friction clutch in parallel with the fluid, of capacity
/// `C = lockup_torque × lockup + max(added, 0)` (N·m). It behaves like [`Clutch`](super::Clutch):
/// while slipping it adds `C·sign(Δ)` to what the input feels and to what the output gets (no
/// multiplication: it bypasses the fluid); when the slip reverses within a substep it locks,
/// and the input and output turn as one lumped inertia until the torque through it exceeds `C`.
/// A positive `coupling_torque_added` therefore acts as a locking mechanism, as in Vortex,
/// and a negative one weakens the fluid coupling (never reversing it).
///
/// # How it runs
///
/// Like a slipping clutch, the converter shows its input a **free** shaft carrying the coupling
/// torque as reaction, and drives its output with the (multiplied) torque. The upstream pass
/// cannot see the engine's speed, so the input speed used in the stage functions is latched
/// once per substep (from the engine speed at the substep's start), as an automatic clutch
/// latches its capacity; the output speed is exact in every RK4 stage. With a free output (a
/// transmission in neutral or park) the turbine, which has no inertia here, simply follows the
/// impeller and transmits nothing.
///
/// No state; no inertia (lump the impeller's inertia into the engine's, and the turbine's into
/// whatever it drives, or neglect it). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TorqueConverter {
    /// Stall speed: the input speed at which, with the output held, the coupling torque equals
    /// `stall_torque` (rpm, > 0). Unless known, the engine's speed at peak torque.
    pub stall_rpm: f64,
    /// Coupling torque at stall speed with the output held (N·m, > 0). Unless known, the
    /// engine's peak torque. With `stall_rpm` it sets the capacity factor
    /// `K = stall_torque / ω_stall²` (N·m·s²/rad²).
    pub stall_torque: f64,
    /// Torque multiplication at speed ratio 0 (dimensionless, ≥ 1; typically 1.8 to 2.5).
    pub torque_multiplication: f64,
    /// Speed ratio at which torque multiplication has fallen to 1 (dimensionless, (0, 1];
    /// typically 0.85). Above 2, `torque_multiplication` bounds it to `4·(TM − 1)/TM²` (0.96 at
    /// 2.5, 0.89 at 3): beyond, the efficiency `SR·TR` would pass 1 before the coupling point.
    pub coupling_point: f64,
    /// Slip allowed near speed ratio 1: the capacity falls linearly from full at
    /// `SR = 1 − slippage` to 0 at `SR = 1` (dimensionless, (0, 1]). Lower values slip less at
    /// cruise but make the coupling stiffer.
    pub slippage: f64,
    /// Capacity of the lock-up clutch when fully engaged (N·m, ≥ 0; 0 = no lock-up clutch).
    pub lockup_torque: f64,
    /// The converter's own lock-up control, as a transmission controller runs it, or `None`
    /// to leave the lock-up clutch to the `lockup` input alone. The clutch closes to
    /// `max(lockup, automatic engagement)`.
    pub auto_lockup: Option<AutoLockup>,

    /// Input: engagement of the lock-up clutch, 0 (open) to 1 (closed). Clamped.
    #[serde(skip)]
    pub lockup: f64,
    /// Input: the driver's throttle (0..1), for the automatic lock-up. Set from
    /// [`VehicleControls::throttle`](crate::VehicleControls::throttle). Clamped.
    #[serde(skip)]
    pub throttle: f64,
    /// Input: multiplier on the fluid coupling torque (dimensionless, ≥ 0; default 1). Clamped
    /// at 0.
    #[serde(skip)]
    pub coupling_torque_scale: f64,
    /// Input: torque added to the coupling (N·m). Positive values add to the lock-up clutch's
    /// capacity (a locking mechanism); negative values reduce the fluid coupling torque, down
    /// to 0.
    #[serde(skip)]
    pub coupling_torque_added: f64,
}

impl Default for TorqueConverter {
    /// A car torque converter: stall at 2200 rpm and 190 N·m, torque ratio 2.0 at stall,
    /// coupling point 0.85, 10 % slippage, a 600 N·m lock-up clutch, open.
    fn default() -> Self {
        TorqueConverter {
            stall_rpm: 2200.0,
            stall_torque: 190.0,
            torque_multiplication: 2.0,
            coupling_point: 0.85,
            slippage: 0.1,
            lockup_torque: 600.0,
            auto_lockup: None,
            lockup: 0.0,
            throttle: 0.0,
            coupling_torque_scale: 1.0,
            coupling_torque_added: 0.0,
        }
    }
}

/// Automatic lock-up of a [`TorqueConverter`]: once the converter runs near coupling (speed
/// ratio at least `engage_speed_ratio`) with the turbine at `min_output_rpm` or more, the
/// lock-up clutch closes over `engage_time`, taking out the fluid's slip; it opens at once
/// when the throttle rises above `max_throttle` (a kickdown: the converter's multiplication
/// is wanted), the speed ratio falls below `release_speed_ratio` or the turbine below 90 % of
/// `min_output_rpm`. Decided once per fixed step from the last substep's speeds and the
/// driver's throttle ([`VehicleControls::throttle`](crate::VehicleControls::throttle)).
///
/// Only with a gear engaged behind the converter: while its output drives nothing (a
/// transmission in neutral or park, or waiting to engage a gear) the clutch stays open, and
/// it opens at once, within the substep, when the transmission goes to neutral or park. There
/// the turbine follows the impeller freely, so the speed conditions hold whenever the engine
/// revs, but no transmission controller locks up in neutral or park: a gear engaged against
/// the closed clutch would jerk the stationary car to the engine's speed and stall it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoLockup {
    /// Speed ratio above which the clutch closes (dimensionless, in (0, 1)).
    pub engage_speed_ratio: f64,
    /// Speed ratio below which it opens again (dimensionless, in (0, `engage_speed_ratio`]).
    pub release_speed_ratio: f64,
    /// Least turbine speed for lock-up (rpm, ≥ 0).
    pub min_output_rpm: f64,
    /// Time to close fully (s, ≥ 0; 0 closes at once).
    pub engage_time: f64,
    /// Throttle above which the clutch stays open (dimensionless, (0, 1]).
    pub max_throttle: f64,
}

impl Default for AutoLockup {
    /// Closes above speed ratio 0.9 with the turbine at 1200 rpm or more and the throttle at
    /// most 0.85, over 0.5 s; opens below 0.8.
    fn default() -> Self {
        AutoLockup {
            engage_speed_ratio: 0.9,
            release_speed_ratio: 0.8,
            min_output_rpm: 1200.0,
            engage_time: 0.5,
            max_throttle: 0.85,
        }
    }
}

impl AutoLockup {
    /// The engagement (0..1) after a step of `dt` (s) from `engagement`, at the input and
    /// output speeds `input`, `output` (rad/s) and the throttle `throttle` (0..1).
    pub fn next_engagement(
        &self,
        engagement: f64,
        input: f64,
        output: f64,
        throttle: f64,
        dt: f64,
    ) -> f64 {
        let ratio = TorqueConverter::speed_ratio(input, output);
        let turbine_rpm = rad_s_to_rpm(output);
        let hold = if throttle > self.max_throttle {
            false
        } else if engagement > 0.0 {
            ratio >= self.release_speed_ratio && turbine_rpm >= 0.9 * self.min_output_rpm
        } else {
            ratio >= self.engage_speed_ratio && turbine_rpm >= self.min_output_rpm
        };
        if !hold {
            0.0
        } else if self.engage_time > 0.0 {
            (engagement + dt / self.engage_time).min(1.0)
        } else {
            1.0
        }
    }

    fn validate(&self) -> Result<(), SettingError> {
        let field = |name: &str| format!("auto_lockup.{name}");
        for (name, v) in [
            ("engage_speed_ratio", self.engage_speed_ratio),
            ("release_speed_ratio", self.release_speed_ratio),
            ("min_output_rpm", self.min_output_rpm),
            ("engage_time", self.engage_time),
            ("max_throttle", self.max_throttle),
        ] {
            check_finite(&field(name), v)?;
        }
        if !(self.engage_speed_ratio > 0.0 && self.engage_speed_ratio < 1.0) {
            return Err(SettingError::new(
                field("engage_speed_ratio"),
                format!("must lie in (0, 1), got {}", self.engage_speed_ratio),
            ));
        }
        if !(self.release_speed_ratio > 0.0 && self.release_speed_ratio <= self.engage_speed_ratio)
        {
            return Err(SettingError::new(
                field("release_speed_ratio"),
                format!(
                    "must lie in (0, engage_speed_ratio = {}], got {}",
                    self.engage_speed_ratio, self.release_speed_ratio
                ),
            ));
        }
        check_non_negative(&field("min_output_rpm"), self.min_output_rpm)?;
        check_non_negative(&field("engage_time"), self.engage_time)?;
        if !(self.max_throttle > 0.0 && self.max_throttle <= 1.0) {
            return Err(SettingError::new(
                field("max_throttle"),
                format!("must lie in (0, 1], got {}", self.max_throttle),
            ));
        }
        Ok(())
    }
}

/// Runtime state of a [`TorqueConverter`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TorqueConverterRuntime {
    /// Mode of the lock-up clutch: `Locked` (input and output turn together: the lock-up
    /// clutch holds, or the output is free and the turbine follows the impeller), or
    /// `Slipping` (the fluid couples the two sides; an engaged lock-up clutch slips in the
    /// latched direction of `ω_i − ω_o`).
    pub mode: ClutchMode,
    /// Input speed latched for the substep (rad/s).
    pub input_speed: f64,
    /// Lock-up clutch capacity latched for the step (N·m).
    pub lockup_capacity: f64,
    /// Capacity factor `K` (N·m·s²/rad²), derived from the settings.
    pub k: f64,
    /// Output speed at the end of the last substep (rad/s).
    pub output_speed: f64,
    /// Engagement of the automatic lock-up (0..1).
    pub auto_engagement: f64,
    /// Whether the output drove nothing (a free shaft: no gear engaged behind the converter,
    /// a transmission in neutral or park) at the last substep; the automatic lock-up is then
    /// open.
    pub output_free: bool,
}

/// What a [`TorqueConverter`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct TorqueConverterSensors {
    /// Speed ratio `ω_o / ω_i` (dimensionless); 0 when the input is (nearly) stopped, where it
    /// is undefined.
    pub speed_ratio: f64,
    /// Coupling torque: what the converter takes from its input shaft, fluid plus lock-up
    /// clutch (N·m).
    pub coupling_torque: f64,
    /// Torque into the output shaft, including torque multiplication (N·m).
    pub output_torque: f64,
    /// Torque ratio in effect, `TR(SR)` (dimensionless; 1 when locked or on overrun).
    pub torque_ratio: f64,
    /// Input (impeller) speed (rad/s).
    pub input_speed: f64,
    /// Output (turbine) speed (rad/s).
    pub output_speed: f64,
    /// Power into the output shaft, `output_torque × output_speed` (W).
    pub output_power: f64,
    /// Whether input and output turn as one (lock-up clutch holding, or free output).
    pub locked: bool,
    /// Current lock-up clutch capacity (N·m).
    pub lockup_capacity: f64,
}

impl TorqueConverter {
    /// Capacity factor `K = stall_torque / ω_stall²` (N·m·s²/rad², `ω_stall` in rad/s).
    #[inline]
    pub fn capacity_factor(&self) -> f64 {
        let w = rpm_to_rad_s(self.stall_rpm);
        self.stall_torque / (w * w)
    }

    /// Fluid coupling torque (N·m) taken from the input and handed to the output (before
    /// multiplication), with the input at `input_speed` and the output at `output_speed`
    /// (rad/s). See the [type docs](Self) for the law; finite for all finite speeds.
    #[inline]
    pub fn fluid_torque(&self, input_speed: f64, output_speed: f64) -> f64 {
        self.fluid_torque_k(
            self.capacity_factor(),
            input_speed,
            output_speed,
            self.slippage,
        )
    }

    #[inline]
    fn fluid_torque_k(&self, k: f64, input_speed: f64, output_speed: f64, slippage: f64) -> f64 {
        let law = CouplingLaw::new(self, k, input_speed, output_speed, slippage);
        law.torque(input_speed - output_speed, 0.0)
    }

    /// The coupling torque (N·m) of an RK4 stage with the output at `output` (rad/s), the torque
    /// ratio `ratio`, the output's reflected inertia `inertia` (kg·m²) and the torque `load`
    /// (N·m) its other connections put on it, in a substep of `h` (s).
    ///
    /// Near `SR = 1` the coupling torque changes with the output's speed at the slope
    /// `c = scale·K·m / slippage` (N·m·s/rad), and the output feels `TR·c` of it: a damper on
    /// its reflected inertia `I_o`. Explicit integration with substep `h` follows that damper
    /// only while `x = TR·c·h / I_o` stays near 1 or below. A drivetrain whose wheels are on
    /// tires reflects little inertia to the turbine (two wheels through a 14:1 reduction is
    /// about 0.01 kg·m²), where `x` reaches 10 or more. So where `x > 1` the stage evaluates the
    /// law a fraction `θ = 1 − 1/x` of the substep ahead, at the output speed the torque it
    /// returns would give (linearly implicit Euler), which makes the damper's rate 1 per
    /// substep and stable. The torque that balances the output's load is unchanged by this, so
    /// the converter settles at the slip of its own law, at any substep; where `x ≤ 1` the law
    /// applies as it is. (Shrinking `c` instead, by raising the slippage until `x = 1`, is
    /// stable too, but it makes the converter slip as much as `T·h/I_o` (tens of rad/s) and the
    /// result depend on the substep.)
    #[inline]
    fn stage_fluid_torque(
        &self,
        rt: &TorqueConverterRuntime,
        output: f64,
        ratio: f64,
        inertia: f64,
        load: f64,
        h: f64,
    ) -> f64 {
        let law = CouplingLaw::new(self, rt.k, rt.input_speed, output, self.slippage);
        let slip = rt.input_speed - output;
        if !(inertia > 0.0 && inertia.is_finite() && h > 0.0) {
            return law.torque(slip, 0.0);
        }
        let x = ratio * law.slope * h / inertia;
        if x.is_nan() || x <= 1.0 {
            return law.torque(slip, 0.0);
        }
        // The output speed after `θ·h` under torque `T`: `ω_o + θ·h·(TR·T + load)/I_o`, so
        // the slip falls by `θ·h·load/I_o` plus `β·T`.
        let theta = 1.0 - 1.0 / x;
        let ahead = theta * h / inertia;
        law.torque(slip - ahead * load, ahead * ratio)
    }

    /// Torque ratio `TR` (output torque / coupling torque, dimensionless) at these speeds
    /// (rad/s): `torque_multiplication` at stall, 1 from the coupling point up and on overrun.
    #[inline]
    pub fn torque_ratio(&self, input_speed: f64, output_speed: f64) -> f64 {
        // The input drives only when it turns forward and faster than the output; then
        // SR < 1 is well defined.
        if !(input_speed > 0.0 && input_speed > output_speed) {
            return 1.0;
        }
        let sr = output_speed / input_speed;
        1.0 + (self.torque_multiplication - 1.0) * (1.0 - sr / self.coupling_point).clamp(0.0, 1.0)
    }

    /// Speed ratio `ω_o / ω_i` (dimensionless), or 0 when `|ω_i|` is below 1e-6 rad/s.
    #[inline]
    pub fn speed_ratio(input_speed: f64, output_speed: f64) -> f64 {
        if input_speed.abs() < SPEED_RATIO_MIN_INPUT {
            0.0
        } else {
            output_speed / input_speed
        }
    }

    /// Capacity of the lock-up clutch (N·m): `lockup_torque × lockup + max(added, 0)`.
    #[inline]
    pub fn lockup_capacity(&self) -> f64 {
        self.lockup_capacity_with(0.0)
    }

    /// The capacity with the automatic lock-up at `engagement` (0..1) (N·m).
    fn lockup_capacity_with(&self, engagement: f64) -> f64 {
        self.lockup_torque * clamp_input(self.lockup, 0.0, 1.0, 0.0).max(engagement)
            + clamp_input(self.coupling_torque_added, 0.0, f64::INFINITY, 0.0)
    }

    /// Torques `(taken from the input, handed to the output)` (N·m) while not locked, with the
    /// output at `output` (rad/s) driving `up` in a substep of `h` (s).
    #[inline]
    fn fluid_stage(
        &self,
        rt: &TorqueConverterRuntime,
        direction: f64,
        output: f64,
        up: &ShaftUp,
        h: f64,
    ) -> (f64, f64) {
        // The torque ratio, once per stage: the stage's coupling torque needs it too.
        let ratio = self.torque_ratio(rt.input_speed, output);
        let friction = direction * rt.lockup_capacity;
        // A slipping lock-up clutch loads the output along with what it drives.
        let load = up.reaction + friction;
        let fluid = self.stage_fluid_torque(rt, output, ratio, up.inertia, load, h);
        (fluid + friction, ratio * fluid + friction)
    }
}

/// The fluid coupling law of a [`TorqueConverter`] at one pair of speeds, as a function of the
/// slip with `m = max(|ω_i|, |ω_o|)` held: odd, non-decreasing and piecewise linear in the
/// slip `Δ` (rad/s). Its magnitude is `slope·|Δ| + reduce` clamped to `[0, cap]`: nothing
/// while a negative `coupling_torque_added` cancels the fluid's torque, then rising at `slope`
/// up to `|Δ| = m·slippage`, then `cap`.
struct CouplingLaw {
    /// `scale·K·m / slippage` (N·m·s/rad): the slope of the linear part.
    slope: f64,
    /// `min(added, 0)` (N·m, ≤ 0): the reduction of every torque's magnitude.
    reduce: f64,
    /// `max(0, scale·K·m² + reduce)` (N·m): the largest torque.
    cap: f64,
}

impl CouplingLaw {
    #[inline]
    fn new(
        converter: &TorqueConverter,
        k: f64,
        input_speed: f64,
        output_speed: f64,
        slippage: f64,
    ) -> Self {
        let m = input_speed.abs().max(output_speed.abs());
        let scale = clamp_input(converter.coupling_torque_scale, 0.0, f64::INFINITY, 1.0);
        let reduce = clamp_input(converter.coupling_torque_added, f64::NEG_INFINITY, 0.0, 0.0);
        let gain = scale * k * m;
        CouplingLaw {
            slope: gain / slippage,
            reduce,
            cap: (gain * m + reduce).max(0.0),
        }
    }

    /// The torque `T` (N·m) that satisfies `T = law(slip − beta·T)`, `beta` ≥ 0 (rad/s per
    /// N·m); with `beta = 0`, the law at `slip` (rad/s). Unique, since the law does not fall.
    #[inline]
    fn torque(&self, slip: f64, beta: f64) -> f64 {
        // On the linear part `T = slope·(|slip| − beta·T) + reduce`; clamped to the dead zone
        // and the cap, where that solution would leave the part (the law is monotonic, so the
        // clamp lands on the solution).
        let magnitude = (self.slope * slip.abs() + self.reduce) / (1.0 + self.slope * beta);
        sign(slip) * magnitude.clamp(0.0, self.cap)
    }
}

impl Block for TorqueConverter {
    const TYPE_NAME: &'static str = "TorqueConverter";
    type Runtime = TorqueConverterRuntime;
    type Sensors = TorqueConverterSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(
        lockup,
        throttle,
        coupling_torque_scale,
        coupling_torque_added
    );

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        // Only the automatic lock-up reads the throttle.
        self.auto_lockup.is_some() && set_if_changed(&mut self.throttle, controls.throttle())
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("stall_rpm", self.stall_rpm)?;
        check_positive("stall_torque", self.stall_torque)?;
        check_finite("torque_multiplication", self.torque_multiplication)?;
        if self.torque_multiplication < 1.0 {
            return Err(SettingError::new(
                "torque_multiplication",
                format!("must be at least 1, got {}", self.torque_multiplication),
            ));
        }
        for (field, value) in [
            ("coupling_point", self.coupling_point),
            ("slippage", self.slippage),
        ] {
            check_fraction(field, value)?;
        }
        // Efficiency, speed ratio × torque ratio, peaks at SR = TM·CP/(2·(TM − 1)) below the
        // coupling point once TM > 2, at TM²·CP/(4·(TM − 1)): past 1 the converter would give
        // out more power than it takes in.
        let tm = self.torque_multiplication;
        if tm > 2.0 && tm * tm * self.coupling_point > 4.0 * (tm - 1.0) {
            return Err(SettingError::new(
                "coupling_point",
                format!(
                    "must be at most 4·(TM − 1)/TM² = {:.4} with torque_multiplication TM = {tm}: \
                     past it the torque ratio falls too late, and the converter's efficiency \
                     (speed ratio × torque ratio) would peak at {:.4}, above 1, giving out more \
                     power than it takes in; got {}",
                    4.0 * (tm - 1.0) / (tm * tm),
                    tm * tm * self.coupling_point / (4.0 * (tm - 1.0)),
                    self.coupling_point
                ),
            ));
        }
        check_non_negative("lockup_torque", self.lockup_torque)?;
        if let Some(auto) = &self.auto_lockup {
            auto.validate()?;
        }
        check_finite("lockup", self.lockup)?;
        check_finite("throttle", self.throttle)?;
        check_finite("coupling_torque_scale", self.coupling_torque_scale)?;
        check_finite("coupling_torque_added", self.coupling_torque_added)?;
        Ok(())
    }

    fn settings_changed(&self, rt: &mut TorqueConverterRuntime) {
        rt.k = self.capacity_factor();
        if self.auto_lockup.is_none() {
            rt.auto_engagement = 0.0;
        }
        rt.lockup_capacity = self.lockup_capacity_with(rt.auto_engagement);
    }

    fn begin_step(
        &self,
        rt: &mut TorqueConverterRuntime,
        _: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        if let Some(auto) = &self.auto_lockup {
            // No gear engaged behind it: the turbine follows the impeller freely, which meets
            // the speed conditions, but no transmission controller locks up in neutral or
            // park (engaging a gear would then jerk the car to the engine's speed).
            rt.auto_engagement = if rt.output_free {
                0.0
            } else {
                auto.next_engagement(
                    rt.auto_engagement,
                    rt.input_speed,
                    rt.output_speed,
                    clamp_input(self.throttle, 0.0, 1.0, 0.0),
                    step.dt,
                )
            };
        }
        // Inputs change without `settings_changed`; the capacity is latched for the step.
        let capacity = self.lockup_capacity_with(rt.auto_engagement);
        if capacity != rt.lockup_capacity {
            rt.lockup_capacity = capacity;
            return ModeChange::Smooth;
        }
        ModeChange::Unchanged
    }

    #[inline]
    fn upstream(
        &self,
        rt: &TorqueConverterRuntime,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        match (rt.mode, stage.pass) {
            (ClutchMode::Locked, _) => outputs[0].up,
            (ClutchMode::Slipping { .. }, Pass::Momentum) => ShaftUp::FREE,
            (ClutchMode::Slipping { direction }, Pass::Torque) => {
                let output = outputs[0].up.speed().unwrap_or(rt.input_speed);
                let (input_torque, _) =
                    self.fluid_stage(rt, direction, output, &outputs[0].up, stage.substep);
                ShaftUp {
                    reaction: -input_torque,
                    ..ShaftUp::FREE
                }
            }
        }
    }

    #[inline]
    fn downstream(
        &self,
        rt: &TorqueConverterRuntime,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        outputs[0].down = match (rt.mode, stage.pass) {
            (ClutchMode::Locked, _) => input,
            (ClutchMode::Slipping { direction }, pass) => {
                let output = outputs[0].up.speed().unwrap_or(input.speed);
                ShaftDown {
                    torque: if pass == Pass::Torque {
                        self.fluid_stage(rt, direction, output, &outputs[0].up, stage.substep)
                            .1
                    } else {
                        0.0
                    },
                    speed: output,
                }
            }
        };
    }

    fn update_modes(
        &self,
        rt: &mut TorqueConverterRuntime,
        _: &[f64],
        shafts: &Shafts,
    ) -> ModeChange {
        let Some(&Shaft { down: input, .. }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        let load = shafts.outputs[0].up;
        rt.output_speed = load.speed().unwrap_or(input.speed);
        // The gear behind went to neutral or park: the automatic lock-up opens at once, not at
        // the next step, so that a gear engaged straight after finds it open.
        rt.output_free = load.is_free();
        let opened = if rt.output_free && rt.auto_engagement > 0.0 {
            rt.auto_engagement = 0.0;
            let capacity = self.lockup_capacity_with(0.0);
            if capacity != rt.lockup_capacity {
                rt.lockup_capacity = capacity;
                ModeChange::Smooth
            } else {
                ModeChange::Unchanged
            }
        } else {
            ModeChange::Unchanged
        };
        // The input speed the stage functions use is latched here, once per substep; a
        // locked converter needs no re-evaluation for it (both sides share one speed).
        let latched = if rt.mode == ClutchMode::Locked {
            rt.input_speed = input.speed;
            ModeChange::Unchanged
        } else if rt.input_speed != input.speed {
            rt.input_speed = input.speed;
            ModeChange::Smooth
        } else {
            ModeChange::Unchanged
        };
        // The fluid transmits nothing without slip, so a locked converter's lock-up clutch
        // carries the whole torque: it locks and slips exactly like a clutch.
        let latched = latched.max(opened);
        match rt.mode.update(rt.lockup_capacity, input, load) {
            Some(change) => change.max(latched),
            None => latched,
        }
    }

    fn limit_impulse(
        &self,
        rt: &mut TorqueConverterRuntime,
        shafts: &Shafts,
        substep: f64,
    ) -> bool {
        let Some(input) = shafts.input else {
            return false;
        };
        rt.mode
            .limit_impulse(rt.lockup_capacity, input.down.torque, substep)
    }

    fn sensors(
        &self,
        rt: &TorqueConverterRuntime,
        _: &[f64],
        shafts: &Shafts,
    ) -> TorqueConverterSensors {
        let input = Shaft::down_of(shafts.input);
        let out = shafts.outputs[0];
        let locked = rt.mode == ClutchMode::Locked;
        let output_speed = if locked {
            input.speed
        } else {
            out.up.speed().unwrap_or(input.speed)
        };
        TorqueConverterSensors {
            speed_ratio: Self::speed_ratio(input.speed, output_speed),
            coupling_torque: input.torque,
            output_torque: out.down.torque,
            torque_ratio: if locked {
                1.0
            } else {
                self.torque_ratio(rt.input_speed, output_speed)
            },
            input_speed: input.speed,
            output_speed,
            output_power: out.down.torque * output_speed,
            locked,
            lockup_capacity: rt.lockup_capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converter() -> TorqueConverter {
        TorqueConverter {
            lockup_torque: 0.0,
            ..default()
        }
    }

    #[test]
    fn stall_point_sets_the_capacity_factor() {
        let c = converter();
        let w = rpm_to_rad_s(c.stall_rpm);
        assert!((c.capacity_factor() * w * w - c.stall_torque).abs() < 1e-12);
        // Output held at stall speed: exactly the stall torque, multiplied fully.
        assert!((c.fluid_torque(w, 0.0) - c.stall_torque).abs() < 1e-9);
        assert_eq!(c.torque_ratio(w, 0.0), c.torque_multiplication);
        // Quadratic in input speed at SR = 0.
        assert!((c.fluid_torque(0.5 * w, 0.0) - 0.25 * c.stall_torque).abs() < 1e-9);
    }

    #[test]
    fn capacity_falls_to_zero_at_speed_ratio_one() {
        let c = converter();
        let w = 300.0;
        let k = c.capacity_factor();
        // Full capacity up to SR = 1 − slippage, then linear to 0.
        assert!((c.fluid_torque(w, 0.5 * w) - k * w * w).abs() < 1e-9);
        assert!((c.fluid_torque(w, (1.0 - c.slippage) * w) - k * w * w).abs() < 1e-9);
        let sr = 1.0 - c.slippage / 4.0;
        assert!((c.fluid_torque(w, sr * w) - k * w * w * 0.25).abs() < 1e-9);
        assert_eq!(c.fluid_torque(w, w), 0.0);
    }

    /// Efficiency `SR·TR` never passes 1 for settings the validation accepts: at the bound
    /// `CP = 4·(TM − 1)/TM²` it peaks at exactly 1 (on a 1e-4 grid of speed ratios, to 1e-6);
    /// past it the settings are refused (an outside test's converter with TM 2.5 and CP 1 gave
    /// a flywheel-driven wheel 431 J in 2 s from nothing).
    #[test]
    fn efficiency_never_passes_one() {
        for tm in [1.0, 1.8, 2.0, 2.5, 3.0, 4.0] {
            let bound = if tm > 2.0 {
                4.0 * (tm - 1.0) / (tm * tm)
            } else {
                1.0
            };
            let c = TorqueConverter {
                torque_multiplication: tm,
                coupling_point: bound,
                ..converter()
            };
            assert_eq!(c.validate(), Ok(()), "TM {tm}, CP {bound}");
            let w = 300.0;
            let peak = (0..=10_000)
                .map(|i| {
                    let sr = f64::from(i) * 1e-4;
                    sr * c.torque_ratio(w, sr * w)
                })
                .fold(0.0, f64::max);
            assert!(peak <= 1.0 + 1e-12, "TM {tm}: efficiency peaks at {peak}");
            assert!(peak > 1.0 - 1e-6, "TM {tm}: efficiency peaks at {peak}");
            if tm > 2.0 {
                let refused = TorqueConverter {
                    coupling_point: (bound + 0.01).min(1.0),
                    ..c
                };
                let error = refused.validate().expect_err("past the bound");
                assert_eq!(error.field, "coupling_point", "{error:?}");
            }
        }
    }

    #[test]
    fn torque_ratio_law() {
        let c = converter();
        let w = 250.0;
        let half = c.coupling_point / 2.0;
        let expected = 1.0 + (c.torque_multiplication - 1.0) * 0.5;
        assert!((c.torque_ratio(w, half * w) - expected).abs() < 1e-12);
        assert_eq!(c.torque_ratio(w, c.coupling_point * w), 1.0);
        assert_eq!(c.torque_ratio(w, 0.95 * w), 1.0);
        // Turbine turned backward: full multiplication; overrun: none.
        assert_eq!(c.torque_ratio(w, -10.0), c.torque_multiplication);
        assert_eq!(c.torque_ratio(w, 1.2 * w), 1.0);
    }

    #[test]
    fn finite_at_standstill_and_antisymmetric_on_overrun() {
        let c = converter();
        assert_eq!(c.fluid_torque(0.0, 0.0), 0.0);
        assert_eq!(c.torque_ratio(0.0, 0.0), 1.0);
        assert_eq!(TorqueConverter::speed_ratio(0.0, 5.0), 0.0);
        // A rolling vehicle turns a stopped engine: the turbine pumps, the torque reverses.
        let t = c.fluid_torque(0.0, 100.0);
        assert!(t < 0.0 && t.is_finite());
        assert!((t + c.capacity_factor() * 100.0 * 100.0).abs() < 1e-9);
        assert_eq!(c.torque_ratio(0.0, 100.0), 1.0);
        for (a, b) in [
            (200.0, 150.0),
            (300.0, -20.0),
            (-50.0, 10.0),
            (120.0, 119.0),
        ] {
            assert!((c.fluid_torque(a, b) + c.fluid_torque(b, a)).abs() < 1e-12);
        }
    }

    #[test]
    fn scale_and_added_torque() {
        let mut c = converter();
        let w = 200.0;
        let base = c.fluid_torque(w, 0.0);
        c.coupling_torque_scale = 0.5;
        assert!((c.fluid_torque(w, 0.0) - 0.5 * base).abs() < 1e-9);
        c.coupling_torque_added = -1e6;
        assert_eq!(c.fluid_torque(w, 0.0), 0.0);
        c.coupling_torque_added = 40.0;
        c.lockup = 0.5;
        c.lockup_torque = 100.0;
        assert_eq!(c.lockup_capacity(), 90.0);
    }
}
