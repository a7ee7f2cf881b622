//! Transfer case: a two-range (high/low) reduction in front of a centre differential that
//! splits the drive between a front and a rear axle.

use bevy::prelude::*;

use crate::block::{
    Block, Input, ModeChange, PortSpec, Ports, SettingError, Shafts, StageContext, StepContext,
    check_fraction, check_non_negative, check_positive, check_range,
};
use crate::blocks::{Differential, DifferentialMode, DifferentialRuntime};
use crate::controls::{VehicleControls, set_if_changed};
use crate::shaft::{Shaft, ShaftUp};

/// The range of a [`TransferCase`]. Written `High` or `Low` in RON files.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum TransferRange {
    /// High range: ratio [`TransferCase::high_ratio`] (usually 1, direct drive).
    #[default]
    High,
    /// Low range: ratio [`TransferCase::low_ratio`] (a reduction for crawling and towing).
    Low,
}

/// A two-range transfer case with a centre differential, for part-time and full-time 4×4s.
///
/// # Equations
///
/// With `r` the ratio of the range in effect (`high_ratio` or `low_ratio`), `b` the front
/// share `torque_bias`, `η` the efficiency and `g = r·η` (driving) or `r/η` (overrun), ω in
/// rad/s and T in N·m:
///
/// ```text
/// ω_in = r·(b·ω_front + (1 − b)·ω_rear)                  (kinematics; r·ω when both turn at ω)
/// T_front = b·g·T_in − λ,   T_rear = (1 − b)·g·T_in + λ   (split plus lock torque λ)
/// open:    λ = 0                    (lock_torque = 0, not locked)
/// locked:  λ = what keeps ω_front = ω_rear, while |λ| ≤ lock_torque, or whatever it takes
///          when `locked` is set
/// slipping: λ = lock_torque·sign(ω_front − ω_rear) + viscous_coupling·(ω_front − ω_rear)
/// ```
///
/// This is exactly a [`Differential`] of ratio `r`, `left = front`, `right = rear` and lock
/// ratio 1, and the block is built by composition: every stage function hands the work to that
/// differential's own [`Block`] implementation (upstream reflection of `L, I, Tr` with
/// unequal output inertias, locked/slipping modes, power-flow latching, impulse handling),
/// so the two cannot drift apart.
///
/// # Range changes
///
/// The [`range`](Self::range) field is the requested range. A request is taken only in
/// [`Block::begin_step`] (once per fixed step, never inside a stage or a substep), and only
/// while the **output shaft speed** — the larger of `|ω_front|` and `|ω_rear|`, in rad/s,
/// as it was at the end of the previous fixed step — is below `max_shift_speed`. The output
/// speed is used (not the input speed) because it follows the vehicle's speed alone, whatever
/// range or gear is engaged, so one threshold serves both directions of shift. Otherwise the
/// request stays pending (see [`TransferCaseSensors::pending`]) and is re-examined every step.
///
/// Only the speed rule applies: the transfer case cannot tell reliably from its shafts whether
/// the gearbox upstream is in neutral (a neutral gearbox and a closed throttle both hand down
/// zero torque), so neutral does not permit a faster shift.
///
/// Taking a new range changes the ratio between input and outputs at once, like engaging a
/// gear: the solver then runs its momentum-conserving pass, so an engine coupled rigidly
/// upstream is brought to the new ratio's speed (or a clutch upstream slips instead).
///
/// No state; no inertia. Ports: `front`, `rear` (both required).
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransferCase {
    /// High-range ratio: input speed / mean output speed (dimensionless, > 0; usually 1.0).
    pub high_ratio: f64,
    /// Low-range ratio: input speed / mean output speed (dimensionless, > 0; e.g. 2.5).
    pub low_ratio: f64,
    /// Share of the torque sent to the `front` output (dimensionless, in the open interval
    /// (0, 1); 0.5 = even split, 0.4 = 40:60 front:rear).
    pub torque_bias: f64,
    /// Largest torque the centre differential's limited-slip lock carries between front and
    /// rear (N·m, ≥ 0; 0 = an open centre differential).
    pub lock_torque: f64,
    /// The centre differential's viscous coupling: torque carried between front and rear per
    /// rad/s of their slip (N·m·s/rad, ≥ 0; 0 = none), on top of `lock_torque` (see
    /// [`Differential::viscous_coupling`]).
    pub viscous_coupling: f64,
    /// Lock the centre: front and rear turn together with any torque. A setting in vehicle
    /// files; game code may also switch it at run time (a centre diff-lock switch).
    pub locked: bool,
    /// Efficiency of the range gears and centre differential (dimensionless, (0, 1]); acts
    /// against the power flow as in a [`Gearbox`](super::Gearbox).
    pub efficiency: f64,
    /// Range changes are taken only while the faster output shaft turns slower than this
    /// (rad/s of the output shafts, ≥ 0). 0 forbids range changes once anything turns.
    pub max_shift_speed: f64,
    /// The requested range. A setting in vehicle files (the range at start); game code
    /// switches it at run time, and the change is taken subject to `max_shift_speed`.
    pub range: TransferRange,
}

impl Default for TransferCase {
    /// A full-time 4×4 transfer case: 1.0 high, 2.5 low, 50:50 open centre, lossless, range
    /// changes below 1 rad/s of output speed (about 0.35 m/s on a 0.35 m wheel), in high.
    fn default() -> Self {
        TransferCase {
            high_ratio: 1.0,
            low_ratio: 2.5,
            torque_bias: 0.5,
            lock_torque: 0.0,
            viscous_coupling: 0.0,
            locked: false,
            efficiency: 1.0,
            max_shift_speed: 1.0,
            range: TransferRange::High,
        }
    }
}

/// Runtime state of a [`TransferCase`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransferCaseRuntime {
    /// The range in effect.
    pub range: TransferRange,
    /// Faster output shaft speed `max(|ω_front|, |ω_rear|)` at the last mode update (rad/s);
    /// at the start of a step, the value at the end of the previous step.
    pub output_speed: f64,
    /// Runtime state of the centre differential the block delegates to.
    pub centre: DifferentialRuntime,
}

/// What a [`TransferCase`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct TransferCaseSensors {
    /// The range in effect.
    pub range: TransferRange,
    /// A requested range not yet taken (the outputs turn too fast), if any.
    pub pending: Option<TransferRange>,
    /// Ratio in effect: input speed / mean output speed (dimensionless).
    pub ratio: f64,
    /// Input shaft speed (rad/s).
    pub input_speed: f64,
    /// Torque into the input (N·m).
    pub input_torque: f64,
    /// `front` output speed (rad/s).
    pub front_speed: f64,
    /// Torque into the `front` output (N·m).
    pub front_torque: f64,
    /// `rear` output speed (rad/s).
    pub rear_speed: f64,
    /// Torque into the `rear` output (N·m).
    pub rear_torque: f64,
    /// Torque the centre lock and viscous coupling carry from front to rear, `λ` (N·m).
    pub lock_torque: f64,
    /// Whether front and rear turn together (`false`: the centre differential slips, or is
    /// open).
    pub locked: bool,
}

/// The ports of a [`TransferCase`].
const TRANSFER_PORTS: Ports = Ports {
    input: Input::Required,
    outputs: &[PortSpec::required("front"), PortSpec::required("rear")],
};

impl TransferCase {
    /// Ratio (input speed / mean output speed, dimensionless) of `range`.
    #[inline]
    pub fn ratio(&self, range: TransferRange) -> f64 {
        match range {
            TransferRange::High => self.high_ratio,
            TransferRange::Low => self.low_ratio,
        }
    }

    /// The centre differential this transfer case behaves as in `range`: ratio of the range,
    /// `left = front`, `right = rear`, lock ratio 1.
    #[inline]
    pub fn centre(&self, range: TransferRange) -> Differential {
        Differential {
            ratio: self.ratio(range),
            torque_bias: self.torque_bias,
            lock_torque: self.lock_torque,
            lock_ratio: 1.0,
            viscous_coupling: self.viscous_coupling,
            efficiency: self.efficiency,
            locked: self.locked,
        }
    }
}

impl Block for TransferCase {
    const TYPE_NAME: &'static str = "TransferCase";
    type Runtime = TransferCaseRuntime;
    type Sensors = TransferCaseSensors;

    fn ports(&self) -> Ports {
        TRANSFER_PORTS
    }

    take_inputs_fields!(range, locked);

    /// The driver's range selector ([`VehicleControls::range`]), when it is given.
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        match controls.range {
            Some(range) => set_if_changed(&mut self.range, range),
            None => false,
        }
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("high_ratio", self.high_ratio)?;
        check_positive("low_ratio", self.low_ratio)?;
        check_range("torque_bias", self.torque_bias, 0.0, 1.0)?;
        if self.torque_bias == 0.0 || self.torque_bias == 1.0 {
            return Err(SettingError::new(
                "torque_bias",
                format!(
                    "must lie strictly between 0 and 1 (both axles driven), got {}; use a \
                     Differential or Gearbox for a one-axle drive",
                    self.torque_bias
                ),
            ));
        }
        check_non_negative("lock_torque", self.lock_torque)?;
        check_non_negative("viscous_coupling", self.viscous_coupling)?;
        check_fraction("efficiency", self.efficiency)?;
        check_non_negative("max_shift_speed", self.max_shift_speed)?;
        Ok(())
    }

    fn settings_changed(&self, rt: &mut TransferCaseRuntime) {
        self.centre(rt.range).settings_changed(&mut rt.centre);
    }

    fn init(&self, rt: &mut TransferCaseRuntime, _: &mut [f64]) {
        rt.range = self.range;
        self.settings_changed(rt);
    }

    fn begin_step(
        &self,
        rt: &mut TransferCaseRuntime,
        _: &mut [f64],
        _: &StepContext,
    ) -> ModeChange {
        if self.range == rt.range || rt.output_speed >= self.max_shift_speed {
            return ModeChange::Unchanged;
        }
        rt.range = self.range;
        self.settings_changed(rt);
        if self.high_ratio == self.low_ratio {
            ModeChange::Unchanged
        } else {
            // The input-to-output ratio jumped: make the speeds agree, conserving momentum.
            ModeChange::Impulsive
        }
    }

    #[inline]
    fn upstream(
        &self,
        rt: &TransferCaseRuntime,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        self.centre(rt.range)
            .upstream(&rt.centre, state, stage, outputs, derivative)
    }

    #[inline]
    fn downstream(
        &self,
        rt: &TransferCaseRuntime,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        self.centre(rt.range)
            .downstream(&rt.centre, state, stage, input, outputs, derivative);
    }

    fn update_modes(
        &self,
        rt: &mut TransferCaseRuntime,
        state: &[f64],
        shafts: &Shafts,
    ) -> ModeChange {
        let speed = |s: &Shaft| s.up.speed().unwrap_or(s.down.speed).abs();
        rt.output_speed = speed(&shafts.outputs[0]).max(speed(&shafts.outputs[1]));
        self.centre(rt.range)
            .update_modes(&mut rt.centre, state, shafts)
    }

    fn limit_impulse(&self, rt: &mut TransferCaseRuntime, shafts: &Shafts, substep: f64) -> bool {
        self.centre(rt.range)
            .limit_impulse(&mut rt.centre, shafts, substep)
    }

    fn sensors(
        &self,
        rt: &TransferCaseRuntime,
        state: &[f64],
        shafts: &Shafts,
    ) -> TransferCaseSensors {
        let centre = self.centre(rt.range).sensors(&rt.centre, state, shafts);
        TransferCaseSensors {
            range: rt.range,
            pending: (self.range != rt.range).then_some(self.range),
            ratio: self.ratio(rt.range),
            input_speed: centre.input_speed,
            input_torque: centre.input_torque,
            front_speed: centre.left_speed,
            front_torque: centre.left_torque,
            rear_speed: centre.right_speed,
            rear_torque: centre.right_torque,
            lock_torque: centre.lock_torque,
            locked: rt.centre.mode == DifferentialMode::Locked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_is_a_differential_of_the_range_ratio() {
        let t = TransferCase {
            torque_bias: 0.4,
            lock_torque: 300.0,
            viscous_coupling: 30.0,
            efficiency: 0.95,
            ..default()
        };
        let low = t.centre(TransferRange::Low);
        assert_eq!(low.ratio, 2.5);
        assert_eq!(low.torque_bias, 0.4);
        assert_eq!(low.lock_ratio, 1.0);
        assert_eq!(low.viscous_coupling, 30.0);
        assert_eq!(t.centre(TransferRange::High).ratio, 1.0);
        assert!(low.validate().is_ok());
    }

    #[test]
    fn settings_are_checked() {
        assert!(TransferCase::default().validate().is_ok());
        for (bad, field) in [
            (
                TransferCase {
                    low_ratio: 0.0,
                    ..default()
                },
                "low_ratio",
            ),
            (
                TransferCase {
                    high_ratio: -1.0,
                    ..default()
                },
                "high_ratio",
            ),
            (
                TransferCase {
                    torque_bias: 1.0,
                    ..default()
                },
                "torque_bias",
            ),
            (
                TransferCase {
                    torque_bias: 0.0,
                    ..default()
                },
                "torque_bias",
            ),
            (
                TransferCase {
                    lock_torque: -1.0,
                    ..default()
                },
                "lock_torque",
            ),
            (
                TransferCase {
                    viscous_coupling: -1.0,
                    ..default()
                },
                "viscous_coupling",
            ),
            (
                TransferCase {
                    efficiency: 1.2,
                    ..default()
                },
                "efficiency",
            ),
            (
                TransferCase {
                    max_shift_speed: f64::NAN,
                    ..default()
                },
                "max_shift_speed",
            ),
        ] {
            assert_eq!(bad.validate().unwrap_err().field, field);
        }
    }
}
