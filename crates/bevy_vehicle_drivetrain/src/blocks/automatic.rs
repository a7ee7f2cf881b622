//! Automatic transmission: a ratio table, shift points that follow the throttle, ratios that
//! change gradually during a shift, and a parking lock.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_finite,
    check_fraction, check_non_negative, check_positive, check_range, clamp_input, count_down,
    wait_over,
};
use crate::blocks::gearbox::PowerFlow;
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::rad_s_to_rpm;
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp, torque_for};

/// Speed below which the shaft friction fades linearly to zero (rad/s), so that it has no
/// discontinuity at rest.
const FRICTION_BLEND_SPEED: f64 = 1.0;

/// An automatic transmission, after Vortex's *Automatic Transmission* component.
///
/// # Gear selection
///
/// The [`selection`](Self::selection) input (the shift lever) means:
///
/// * `> 0`, **drive**: the transmission chooses among the forward gears by itself, from
///   `max(min_gear, 1)` up to the highest. Any positive value means drive (it is not a range
///   hold), so `VehicleControls::gear = 1` is "D".
/// * `< 0`, **reverse**: `-k` engages reverse gear `k` (clamped to the reverse gears that
///   exist; without any, neutral). There is no automatic shifting in reverse.
/// * `0`, **neutral**: the input drives nothing and the output turns freely.
///
/// # Shift schedule
///
/// With the throttle `θ` (0..1, from [`throttle`](Self::throttle)) the shift points in effect
/// are, with `t = clamp((θ − low_shift_throttle) / (high_shift_throttle − low_shift_throttle), 0, 1)`,
///
/// ```text
/// up   = shift_scale · (low_shift_up   + t · (high_shift_up   − low_shift_up))     (rpm)
/// down = shift_scale · (low_shift_down + t · (high_shift_down − low_shift_down))   (rpm)
/// ```
///
/// Once per fixed step (never inside a stage), in drive, when no shift is under way and
/// `shift_again_delay` has passed since the last shift ended: the transmission shifts up one
/// gear when the input-shaft speed exceeds `up`, and down one gear when it falls below `down`.
/// A shift whose predicted input speed (the present one times the ratio of the new gear over
/// the old) would immediately call for the opposite shift is not made, so badly chosen shift
/// points cannot make it hunt.
///
/// # Ratio changes
///
/// During a shift between two gears the kinematic ratio (input speed / output speed) changes
/// linearly from the old gear's to the new gear's over `transition_time`, one drivetrain
/// substep at a time (so a shift makes the same changes at any fixed-step rate), never as a
/// step. Each change of ratio makes the speeds across it agree again with a
/// momentum-conserving pass, so a rigidly coupled engine is pulled along smoothly; behind a
/// slipping torque converter the turbine simply follows. A ratio cannot ramp through neutral
/// (a ratio of 0 would hold the input, not free it), so engaging from neutral (N→D, N→R,
/// D↔R, leaving park) waits `transition_time` in neutral (to the nearest substep) and then
/// engages the gear, as a manual [`Gearbox`](super::Gearbox) does; put a torque converter
/// upstream to take up the speed difference.
///
/// # Losses
///
/// `efficiency` (or `shift_efficiency` during a transition) acts against the power flow as in
/// a [`Gearbox`](super::Gearbox): driving, the output gets `r·η·T_in`; on overrun `r·T_in/η`.
/// `shaft_friction` is a Coulomb torque on the output shaft, `−shaft_friction·clamp(ω_o/1 rad/s, −1, 1)`.
///
/// # Park
///
/// With [`park`](Self::park) set, the parking pawl engages as soon as the output turns slower
/// than `park_max_speed` (a pawl ratchets over the teeth at speed); the output shaft is then
/// **held**: the transmission hands down exactly the torque (or, when the pawl engages, the
/// angular impulse) that keeps it still, whatever the load, and the input is in neutral.
///
/// No state; no inertia. Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutomaticTransmission {
    /// Forward ratios, first gear first: input speed / output speed (dimensionless, > 0).
    pub forward_ratios: Vec<f64>,
    /// Reverse ratios, first reverse first, as positive numbers: reverse gears turn the output
    /// backward (dimensionless, > 0).
    pub reverse_ratios: Vec<f64>,
    /// Lowest forward gear automatic shifting may use (≤ 1 for the full range; e.g. 2 for a
    /// truck that starts in second; above the highest gear, the highest). Also taken as an
    /// input: changing it needs no settings check.
    pub min_gear: i32,
    /// Time over which the ratio changes during a shift, and spent in neutral when engaging
    /// from neutral (s, ≥ 0).
    pub transition_time: f64,
    /// After a shift ends, no automatic shift happens for this long (s, ≥ 0).
    pub shift_again_delay: f64,
    /// At or below this throttle the low shift points apply (dimensionless, [0, 1]).
    pub low_shift_throttle: f64,
    /// At or above this throttle the high shift points apply (dimensionless, [low, 1]).
    pub high_shift_throttle: f64,
    /// Input-shaft speed for a downshift at low throttle (rpm before `shift_scale`, > 0).
    pub low_shift_down: f64,
    /// Input-shaft speed for an upshift at low throttle (rpm before `shift_scale`, >
    /// `low_shift_down`).
    pub low_shift_up: f64,
    /// Input-shaft speed for a downshift at high throttle (rpm before `shift_scale`, > 0).
    pub high_shift_down: f64,
    /// Input-shaft speed for an upshift at high throttle (rpm before `shift_scale`, >
    /// `high_shift_down`).
    pub high_shift_up: f64,
    /// Multiplies every shift point (dimensionless, > 0): 1 when they are in rpm, or the
    /// engine's maximum rpm when they are given as fractions of it.
    pub shift_scale: f64,
    /// Efficiency outside shifts (dimensionless, (0, 1]).
    pub efficiency: f64,
    /// Efficiency during a transition (dimensionless, (0, 1]).
    pub shift_efficiency: f64,
    /// Coulomb friction on the output shaft (N·m, ≥ 0).
    pub shaft_friction: f64,
    /// The parking pawl engages only below this output-shaft speed (rad/s, ≥ 0). The default,
    /// 11 rad/s, is about 1 m/s (3.6 km/h) through a 3.5:1 final drive on 0.316 m wheels: a
    /// pawl ratchets at speed but engages at a walk, above what a car creeping down a slope
    /// reaches before it is checked.
    pub park_max_speed: f64,

    /// Input: the lever; `> 0` drive, `< 0` reverse gear `-selection`, `0` neutral.
    #[serde(skip)]
    pub selection: i32,
    /// Input: parking lock requested.
    #[serde(skip)]
    pub park: bool,
    /// Input: throttle position for the shift schedule, 0 to 1. Clamped.
    #[serde(skip)]
    pub throttle: f64,
}

impl Default for AutomaticTransmission {
    /// A five-speed car automatic: shifts up at 2000 rpm (light throttle) to 4500 rpm (full
    /// throttle), down at 1100 to 2500 rpm, 0.4 s transitions.
    fn default() -> Self {
        AutomaticTransmission {
            forward_ratios: vec![3.5, 2.1, 1.4, 1.0, 0.75],
            reverse_ratios: vec![3.2],
            min_gear: 1,
            transition_time: 0.4,
            shift_again_delay: 1.0,
            low_shift_throttle: 0.2,
            high_shift_throttle: 0.8,
            low_shift_down: 1100.0,
            low_shift_up: 2000.0,
            high_shift_down: 2500.0,
            high_shift_up: 4500.0,
            shift_scale: 1.0,
            efficiency: 0.95,
            shift_efficiency: 0.85,
            shaft_friction: 2.0,
            park_max_speed: 11.0,
            selection: 0,
            park: false,
            throttle: 0.0,
        }
    }
}

/// Runtime state of an [`AutomaticTransmission`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AutomaticRuntime {
    /// Gear engaged or being shifted into (0 in neutral and park).
    pub gear: i32,
    /// Gear waiting to engage from neutral (0 when none).
    pub pending: i32,
    /// Time left before `pending` engages (s).
    pub engage_timer: f64,
    /// Whether the ratio is changing between two gears.
    pub shifting: bool,
    /// Ratio at the start of the shift.
    pub from_ratio: f64,
    /// Time since the shift began (s).
    pub shift_elapsed: f64,
    /// Time since the last shift ended (s).
    pub since_shift: f64,
    /// Whether the parking pawl holds the output.
    pub parked: bool,
    /// Current kinematic ratio (input / output speed; negative in reverse; 0 in neutral).
    pub ratio: f64,
    /// Latched power flow.
    pub flow: PowerFlow,
    /// Torque gain for the latched flow.
    pub gain: f64,
    /// `1 / ratio` (0 in neutral).
    pub inv_ratio: f64,
    /// `1 / gain` (0 in neutral).
    pub inv_gain: f64,
    /// Upshift point in effect (rpm).
    pub up_rpm: f64,
    /// Downshift point in effect (rpm).
    pub down_rpm: f64,
    /// Input-shaft speed at the end of the last substep (rad/s).
    pub input_speed: f64,
    /// Output-shaft speed at the end of the last substep (rad/s).
    pub output_speed: f64,
}

/// What an [`AutomaticTransmission`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct AutomaticSensors {
    /// Current gear: the one engaged or being shifted into; negative reverse, 0 neutral/park.
    pub gear: i32,
    /// Current ratio, input speed / output speed (dimensionless; 0 in neutral and park).
    pub ratio: f64,
    /// Whether a shift (a ratio transition, or a wait in neutral before engaging) is under way.
    pub shifting: bool,
    /// Upshift point in effect for the current throttle (rpm of the input shaft).
    pub shift_up_rpm: f64,
    /// Downshift point in effect for the current throttle (rpm of the input shaft).
    pub shift_down_rpm: f64,
    /// Whether the parking pawl holds the output.
    pub parked: bool,
    /// Input-shaft speed (rad/s).
    pub input_speed: f64,
    /// Output-shaft speed (rad/s).
    pub output_speed: f64,
    /// Torque into the output shaft, friction included (N·m).
    pub output_torque: f64,
    /// Power into the output shaft (W).
    pub output_power: f64,
}

impl AutomaticTransmission {
    /// Kinematic ratio of `gear` (negative in reverse, 0 in neutral or for a gear that does
    /// not exist).
    pub fn ratio(&self, gear: i32) -> f64 {
        match gear {
            0 => 0.0,
            g if g > 0 => self
                .forward_ratios
                .get((g - 1) as usize)
                .copied()
                .unwrap_or(0.0),
            g => -self
                .reverse_ratios
                .get((-g - 1) as usize)
                .copied()
                .unwrap_or(0.0),
        }
    }

    /// Lowest forward gear automatic shifting uses.
    pub fn lowest_gear(&self) -> i32 {
        self.min_gear
            .clamp(1, self.forward_ratios.len().max(1) as i32)
    }

    /// The gear the lever and park ask to engage: 0 in park or neutral, the lowest automatic
    /// gear in drive, reverse gear `−selection` (clamped to the reverse gears there are).
    fn lever_gear(&self) -> i32 {
        if self.park {
            0
        } else if self.selection > 0 {
            self.lowest_gear()
        } else if self.selection < 0 {
            -(self
                .selection
                .unsigned_abs()
                .min(self.reverse_ratios.len() as u32) as i32)
        } else {
            0
        }
    }

    /// Shift points in effect at throttle `throttle` (0..1): `(up, down)` in rpm of the input
    /// shaft, `shift_scale` applied.
    pub fn shift_points(&self, throttle: f64) -> (f64, f64) {
        let throttle = clamp_input(throttle, 0.0, 1.0, 0.0);
        let span = self.high_shift_throttle - self.low_shift_throttle;
        let t = if span > 0.0 {
            ((throttle - self.low_shift_throttle) / span).clamp(0.0, 1.0)
        } else if throttle >= self.high_shift_throttle {
            1.0
        } else {
            0.0
        };
        let lerp = |low: f64, high: f64| self.shift_scale * (low + t * (high - low));
        (
            lerp(self.low_shift_up, self.high_shift_up),
            lerp(self.low_shift_down, self.high_shift_down),
        )
    }

    /// The gear a drive-mode transmission in `gear`, whose input turns at `input_rpm`, shifts
    /// to with shift points `(up, down)` (rpm); `gear` itself when no shift is called for.
    pub fn automatic_shift(&self, gear: i32, input_rpm: f64, up: f64, down: f64) -> i32 {
        let lowest = self.lowest_gear();
        let highest = self.forward_ratios.len() as i32;
        if gear < lowest {
            return lowest;
        }
        let predicted = |to: i32| input_rpm * self.ratio(to) / self.ratio(gear);
        if input_rpm > up && gear < highest && predicted(gear + 1) >= down {
            gear + 1
        } else if input_rpm < down && gear > lowest && predicted(gear - 1) <= up {
            gear - 1
        } else {
            gear
        }
    }

    /// Shaft friction torque (N·m) on an output turning at `speed` (rad/s).
    #[inline]
    fn friction(&self, speed: f64) -> f64 {
        -self.shaft_friction * (speed / FRICTION_BLEND_SPEED).clamp(-1.0, 1.0)
    }
}

impl AutomaticRuntime {
    fn resolve(&mut self, t: &AutomaticTransmission) {
        let efficiency = if self.shifting {
            t.shift_efficiency
        } else {
            t.efficiency
        };
        if self.ratio == 0.0 || self.parked {
            self.gain = 0.0;
            self.inv_ratio = 0.0;
            self.inv_gain = 0.0;
        } else {
            self.gain = self.flow.gain(self.ratio, efficiency);
            self.inv_ratio = 1.0 / self.ratio;
            self.inv_gain = 1.0 / self.gain;
        }
    }

    /// Starts engaging `gear` from neutral: wait `transition_time`, then engage.
    fn engage_from_neutral(&mut self, gear: i32, t: &AutomaticTransmission) {
        self.gear = 0;
        self.ratio = 0.0;
        self.shifting = false;
        self.pending = gear;
        self.engage_timer = t.transition_time;
    }
}

impl Block for AutomaticTransmission {
    const TYPE_NAME: &'static str = "AutomaticTransmission";
    /// Its reverse gears turn the drive round: a motor ahead of it takes the throttle unsigned.
    const SELECTS_DIRECTION: bool = true;
    type Runtime = AutomaticRuntime;
    type Sensors = AutomaticSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(selection, park, throttle, min_gear);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        let a = set_if_changed(&mut self.selection, controls.gear);
        let b = set_if_changed(&mut self.park, controls.parking);
        let c = set_if_changed(&mut self.throttle, controls.throttle());
        a || b || c
    }

    fn validate(&self) -> Result<(), SettingError> {
        super::gearbox::check_ratio_tables(&self.forward_ratios, &self.reverse_ratios)?;
        check_non_negative("transition_time", self.transition_time)?;
        check_non_negative("shift_again_delay", self.shift_again_delay)?;
        check_range("low_shift_throttle", self.low_shift_throttle, 0.0, 1.0)?;
        check_range(
            "high_shift_throttle",
            self.high_shift_throttle,
            self.low_shift_throttle,
            1.0,
        )?;
        for (down, up, down_value, up_value) in [
            (
                "low_shift_down",
                "low_shift_up",
                self.low_shift_down,
                self.low_shift_up,
            ),
            (
                "high_shift_down",
                "high_shift_up",
                self.high_shift_down,
                self.high_shift_up,
            ),
        ] {
            check_positive(down, down_value)?;
            check_finite(up, up_value)?;
            if up_value <= down_value {
                return Err(SettingError::new(
                    up,
                    format!("must be above {down} ({down_value} rpm), got {up_value} rpm"),
                ));
            }
        }
        check_positive("shift_scale", self.shift_scale)?;
        check_fraction("efficiency", self.efficiency)?;
        check_fraction("shift_efficiency", self.shift_efficiency)?;
        check_non_negative("shaft_friction", self.shaft_friction)?;
        check_non_negative("park_max_speed", self.park_max_speed)?;
        check_finite("throttle", self.throttle)?;
        Ok(())
    }

    fn settings_changed(&self, rt: &mut AutomaticRuntime) {
        // A settings change may have removed or changed the engaged gear: re-read its ratio.
        if rt.gear != 0 && !rt.shifting {
            rt.ratio = self.ratio(rt.gear);
            if rt.ratio == 0.0 {
                rt.gear = 0;
            }
        }
        rt.resolve(self);
    }

    fn init(&self, rt: &mut AutomaticRuntime, _: &mut [f64]) {
        rt.since_shift = f64::INFINITY;
        rt.parked = self.park;
        // Start in the selected gear, engaged, as a vehicle spawned ready to drive.
        rt.gear = self.lever_gear();
        rt.ratio = self.ratio(rt.gear);
        (rt.up_rpm, rt.down_rpm) = self.shift_points(self.throttle);
        rt.resolve(self);
    }

    fn begin_step(
        &self,
        rt: &mut AutomaticRuntime,
        _: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        let dt = step.dt;
        let before = (rt.gear, rt.ratio, rt.parked, rt.shifting);
        (rt.up_rpm, rt.down_rpm) = self.shift_points(self.throttle);

        // Park: the pawl engages below `park_max_speed`, and releases into neutral.
        if self.park && !rt.parked && rt.output_speed.abs() <= self.park_max_speed {
            rt.parked = true;
            rt.gear = 0;
            rt.ratio = 0.0;
            rt.shifting = false;
            rt.pending = 0;
        } else if !self.park && rt.parked {
            rt.parked = false;
        }

        if !rt.parked {
            // The direction the lever asks for.
            let wanted = self.lever_gear();
            let same_direction = wanted.signum() == rt.gear.signum() && rt.gear != 0;
            if wanted == 0 {
                // Neutral at once: opening the clutches jerks nothing.
                rt.gear = 0;
                rt.ratio = 0.0;
                rt.shifting = false;
                rt.pending = 0;
            } else if !same_direction {
                // From neutral (or the other direction): wait in neutral, then engage (in
                // `begin_substep`, at the substep nearest the wait's end).
                if rt.pending != wanted {
                    rt.engage_from_neutral(wanted, self);
                }
            } else if wanted < 0 {
                // Reverse: a change of reverse gear goes through a ratio transition.
                if wanted != rt.gear && !rt.shifting {
                    rt.gear = wanted;
                    rt.from_ratio = rt.ratio;
                    rt.shifting = true;
                    rt.shift_elapsed = 0.0;
                }
            } else if !rt.shifting && wait_over(self.shift_again_delay - rt.since_shift, dt) {
                let input_rpm = rad_s_to_rpm(rt.ratio * rt.output_speed);
                let next = self.automatic_shift(rt.gear, input_rpm, rt.up_rpm, rt.down_rpm);
                if next != rt.gear {
                    rt.gear = next;
                    rt.from_ratio = rt.ratio;
                    rt.shifting = true;
                    rt.shift_elapsed = 0.0;
                }
            }
            // A shift under way ramps its ratio in `begin_substep`.
            if !rt.shifting {
                rt.since_shift += dt;
            }
        }
        rt.resolve(self);
        let after = (rt.gear, rt.ratio, rt.parked, rt.shifting);
        if after == before {
            ModeChange::Unchanged
        } else if (rt.ratio != before.1 && rt.ratio != 0.0) || (rt.parked && !before.2) {
            // A new ratio or the pawl: make the speeds agree across the new rigid connection.
            ModeChange::Impulsive
        } else {
            ModeChange::Smooth
        }
    }

    /// A shift's ratio moves once per substep, not once per fixed step: each change of ratio
    /// costs a momentum pass, whose loss grows with the square of the jump, so a ramp in
    /// fewer, larger jumps (a slower fixed step) lost more of the car's speed.
    ///
    /// A gear waiting in neutral (`pending`) engages here too, at the start of the substep
    /// nearest the end of its wait ([`wait_over`]), so that it waits `transition_time` to
    /// within half a substep at any fixed-step rate. (Engaging at a fixed step's start rounded
    /// the wait to whole fixed steps: 0.25 s took 0.267 s at 30 Hz.)
    fn begin_substep(&self, rt: &mut AutomaticRuntime, _: &mut [f64], substep: f64) -> ModeChange {
        if rt.pending != 0 {
            if !count_down(&mut rt.engage_timer, substep) {
                // This substep is spent in neutral.
                return ModeChange::Unchanged;
            }
            rt.gear = rt.pending;
            rt.ratio = self.ratio(rt.gear);
            rt.pending = 0;
            rt.since_shift = 0.0;
            rt.resolve(self);
            return ModeChange::Impulsive;
        }
        if !rt.shifting {
            return ModeChange::Unchanged;
        }
        let before = rt.ratio;
        rt.shift_elapsed += substep;
        let to = self.ratio(rt.gear);
        let done = wait_over(self.transition_time - rt.shift_elapsed, substep);
        let fraction = if done {
            1.0
        } else {
            rt.shift_elapsed / self.transition_time
        };
        rt.ratio = rt.from_ratio + (to - rt.from_ratio) * fraction;
        if done {
            rt.ratio = to;
            rt.shifting = false;
            rt.since_shift = 0.0;
        }
        rt.resolve(self);
        if rt.ratio != before && rt.ratio != 0.0 {
            ModeChange::Impulsive
        } else if !rt.shifting {
            ModeChange::Smooth
        } else {
            ModeChange::Unchanged
        }
    }

    #[inline]
    fn upstream(
        &self,
        rt: &AutomaticRuntime,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        if rt.parked || rt.ratio == 0.0 {
            return ShaftUp::FREE;
        }
        let mut load = outputs[0].up;
        if stage.pass == Pass::Torque {
            load.reaction += self.friction(load.speed().unwrap_or(0.0));
        }
        load.reflect_inv(rt.inv_ratio, rt.inv_gain)
    }

    #[inline]
    fn downstream(
        &self,
        rt: &AutomaticRuntime,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        let up = outputs[0].up;
        let output_speed = up.speed().unwrap_or(0.0);
        let friction = if stage.pass == Pass::Torque {
            self.friction(output_speed)
        } else {
            0.0
        };
        outputs[0].down = if rt.parked {
            // Held: exactly what keeps the output still (in a momentum pass, stops it).
            ShaftDown {
                torque: torque_for(&up, 0.0),
                speed: 0.0,
            }
        } else if rt.ratio == 0.0 {
            ShaftDown {
                torque: friction,
                speed: output_speed,
            }
        } else {
            ShaftDown {
                torque: input.torque * rt.gain + friction,
                speed: input.speed * rt.inv_ratio,
            }
        };
    }

    #[inline]
    fn update_modes(&self, rt: &mut AutomaticRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        let out = shafts.outputs[0];
        rt.output_speed = out.up.speed().unwrap_or(out.down.speed);
        let Some(&Shaft { down: input, up }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        rt.input_speed = up.speed().unwrap_or(input.speed);
        if rt.ratio == 0.0 || rt.parked || self.efficiency.min(self.shift_efficiency) == 1.0 {
            return ModeChange::Unchanged;
        }
        let change = rt.flow.latch(input);
        if change != ModeChange::Unchanged {
            rt.resolve(self);
        }
        change
    }

    fn sensors(&self, rt: &AutomaticRuntime, _: &[f64], shafts: &Shafts) -> AutomaticSensors {
        let out = shafts.outputs[0];
        let output_speed = out.up.speed().unwrap_or(out.down.speed);
        let input_speed = match shafts.input {
            Some(s) => s.up.speed().unwrap_or(s.down.speed),
            None => 0.0,
        };
        AutomaticSensors {
            gear: rt.gear,
            ratio: rt.ratio,
            shifting: rt.shifting || rt.pending != 0,
            shift_up_rpm: rt.up_rpm,
            shift_down_rpm: rt.down_rpm,
            parked: rt.parked,
            input_speed,
            output_speed,
            output_torque: out.down.torque,
            output_power: out.down.torque * output_speed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_points_interpolate_with_throttle_and_scale() {
        let t = AutomaticTransmission {
            shift_scale: 2.0,
            ..default()
        };
        assert_eq!(t.shift_points(0.0), (4000.0, 2200.0));
        assert_eq!(t.shift_points(0.2), (4000.0, 2200.0));
        assert_eq!(t.shift_points(1.0), (9000.0, 5000.0));
        let (up, down) = t.shift_points(0.5);
        assert!((up - 2.0 * 3250.0).abs() < 1e-9 && (down - 2.0 * 1800.0).abs() < 1e-9);
    }

    #[test]
    fn automatic_shift_decisions() {
        let t = AutomaticTransmission::default();
        assert_eq!(t.automatic_shift(1, 4600.0, 4500.0, 2500.0), 2);
        assert_eq!(t.automatic_shift(1, 4400.0, 4500.0, 2500.0), 1);
        assert_eq!(t.automatic_shift(3, 2400.0, 4500.0, 2500.0), 2);
        assert_eq!(
            t.automatic_shift(1, 100.0, 4500.0, 2500.0),
            1,
            "lowest gear"
        );
        assert_eq!(t.automatic_shift(5, 9000.0, 4500.0, 2500.0), 5, "top gear");
        // 1 → 2 would land at 4600·2.1/3.5 = 2760 rpm, below a 3000 rpm downshift: no shift.
        assert_eq!(t.automatic_shift(1, 4600.0, 4500.0, 3000.0), 1);
        let t = AutomaticTransmission {
            min_gear: 2,
            ..default()
        };
        assert_eq!(t.automatic_shift(1, 1000.0, 4500.0, 2500.0), 2);
        assert_eq!(t.automatic_shift(2, 1000.0, 4500.0, 2500.0), 2);
    }
}
