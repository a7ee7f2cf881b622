//! Continuously variable transmission: a ratio that moves smoothly between two limits to
//! hold the engine at a speed the throttle asks for, with a fixed reverse and neutral.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_fraction,
    check_positive, check_range, clamp_input,
};
use crate::blocks::gearbox::PowerFlow;
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::rpm_to_rad_s;
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp};

/// A continuously variable transmission (CVT): a belt or chain variator whose ratio (input
/// speed / output speed) moves between `min_ratio` and `max_ratio`, with a fixed reverse gear.
///
/// # Selection
///
/// The [`selection`](Self::selection) input (the lever, from [`VehicleControls::gear`]) means
/// drive (`> 0`), neutral (`0`) or reverse (`< 0`, at `reverse_ratio`). Engaging drive or
/// reverse forces the two sides to a common speed while conserving angular momentum, as the
/// [`Gearbox`](crate::blocks::Gearbox) does; put a clutch or a torque converter ahead of it
/// to launch. In neutral the input drives nothing and the output turns freely.
///
/// # Ratio control
///
/// In drive the variator holds the input (the engine) at a target speed that grows with the
/// [`throttle`](Self::throttle), from `min_target_rpm` at a closed throttle to
/// `max_target_rpm` at full throttle: the ratio it aims for is that speed over the output's,
/// `r* = ω_target / |ω_out|`, held within the limits (at `max_ratio` from a standstill). The
/// ratio `r` is a continuous state that follows `r*` with the time constant `ratio_time`, no
/// faster than `max_ratio_rate`: `dr/dt = clamp((r* − r)/ratio_time, ±max_ratio_rate)`.
///
/// # A ratio that moves
///
/// The two sides turn as `ω_in = r·ω_out`, so while the ratio moves the input accelerates by
/// `r·α_out + (dr/dt)·ω_out`: the variator's actuator does that work on the shafts. The
/// variator itself stores nothing, so a lossless one passes all the power it takes in: with no
/// torque and no loss anywhere, the kinetic energy `½·(J_out + J_in·r²)·ω_out²` stays the
/// same while the ratio sweeps (`ω_out` moves as `1/√(J_out + J_in·r²)`), though the angular
/// momentum does not. The integrator keeps `ω_in = r·ω_out` to its own accuracy only, as the
/// constraint is not linear in the states while the ratio moves (a sweep of the ratio from 2.5
/// to 0.73 left the two sides 4e-12 apart, relative, and the difference stays once the ratio
/// settles). `efficiency` acts against the power flow as the gearbox's does.
///
/// One state: the variator ratio (dimensionless, the ratio in drive). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cvt {
    /// Lowest (overdrive) ratio of the variator: input speed / output speed (dimensionless,
    /// > 0).
    pub min_ratio: f64,
    /// Highest (launch) ratio of the variator (dimensionless, ≥ `min_ratio`).
    pub max_ratio: f64,
    /// Reverse gear ratio, input speed / output speed as a positive number (dimensionless,
    /// > 0); the output turns backward.
    pub reverse_ratio: f64,
    /// Input speed the variator aims for at a closed throttle (rpm, > 0).
    pub min_target_rpm: f64,
    /// Input speed it aims for at full throttle (rpm, ≥ `min_target_rpm`): the engine's
    /// peak-power speed holds it at its most power.
    pub max_target_rpm: f64,
    /// Time constant with which the ratio follows its target (s, > 0).
    pub ratio_time: f64,
    /// Fastest rate of change of the ratio (1/s, > 0).
    pub max_ratio_rate: f64,
    /// Efficiency (dimensionless, (0, 1]).
    pub efficiency: f64,
    /// Input: the lever; drive above 0, neutral at 0, reverse below 0.
    #[serde(skip)]
    pub selection: i32,
    /// Input: the throttle the target speed follows (0..1; clamped where used, not a number
    /// counts as 0).
    #[serde(skip)]
    pub throttle: f64,
}

impl Default for Cvt {
    /// A car's chain CVT: ratios 2.63 to 0.38 (a spread of 7), reverse 2.4, aiming for
    /// 1500 rpm at a closed throttle and 5500 at full, following within 0.3 s and no faster
    /// than 2 per second; 93 % efficient.
    fn default() -> Self {
        Cvt {
            min_ratio: 0.38,
            max_ratio: 2.63,
            reverse_ratio: 2.4,
            min_target_rpm: 1500.0,
            max_target_rpm: 5500.0,
            ratio_time: 0.3,
            max_ratio_rate: 2.0,
            efficiency: 0.93,
            selection: 0,
            throttle: 0.0,
        }
    }
}

/// Runtime state of a [`Cvt`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CvtRuntime {
    /// The engaged selection: 1 drive, 0 neutral, −1 reverse.
    pub engaged: i32,
    /// Latched power flow.
    pub flow: PowerFlow,
}

/// What a [`Cvt`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct CvtSensors {
    /// The engaged selection: 1 drive, 0 neutral, −1 reverse.
    pub selection: i32,
    /// Engaged ratio, input speed / output speed (dimensionless; negative in reverse, 0 in
    /// neutral).
    pub ratio: f64,
    /// The ratio the variator aims for (dimensionless; the reverse ratio, negative, in
    /// reverse; 0 in neutral).
    pub target_ratio: f64,
    /// Input shaft speed (rad/s).
    pub input_speed: f64,
    /// Output shaft speed (rad/s).
    pub output_speed: f64,
    /// Torque into the output shaft (N·m).
    pub output_torque: f64,
}

impl Cvt {
    /// The input speed the variator aims for at the current throttle (rad/s).
    pub fn target_speed(&self) -> f64 {
        let throttle = clamp_input(self.throttle, 0.0, 1.0, 0.0);
        rpm_to_rad_s(self.min_target_rpm + throttle * (self.max_target_rpm - self.min_target_rpm))
    }

    /// The variator ratio it aims for with the output turning at `output_speed` (rad/s):
    /// [`Cvt::target_speed`] over its magnitude, within `[min_ratio, max_ratio]`
    /// (`max_ratio` at a standstill).
    pub fn target_ratio(&self, output_speed: f64) -> f64 {
        let target = self.target_speed();
        let speed = output_speed.abs();
        // `target / speed` only where it lies below `max_ratio`: never a division by a speed
        // near zero.
        if target >= self.max_ratio * speed {
            self.max_ratio
        } else {
            (target / speed).max(self.min_ratio)
        }
    }

    /// Rate of change of the variator ratio `ratio` (1/s) toward its target at output speed
    /// `output_speed` (rad/s).
    pub fn ratio_rate(&self, ratio: f64, output_speed: f64) -> f64 {
        let rate = (self.target_ratio(output_speed) - ratio) / self.ratio_time;
        rate.clamp(-self.max_ratio_rate, self.max_ratio_rate)
    }

    /// The engaged kinematic ratio for selection `engaged` at variator ratio `ratio`
    /// (negative in reverse, 0 in neutral).
    fn ratio_of(&self, engaged: i32, ratio: f64) -> f64 {
        match engaged.signum() {
            1 => ratio,
            -1 => -self.reverse_ratio,
            _ => 0.0,
        }
    }
}

impl Block for Cvt {
    const TYPE_NAME: &'static str = "Cvt";
    /// Its reverse gear turns the drive round: a motor ahead of it takes the throttle unsigned.
    const SELECTS_DIRECTION: bool = true;
    type Runtime = CvtRuntime;
    type Sensors = CvtSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    fn state_len(&self) -> usize {
        1
    }

    take_inputs_fields!(selection, throttle);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        let a = set_if_changed(&mut self.selection, controls.gear.signum());
        let b = set_if_changed(&mut self.throttle, controls.throttle());
        a || b
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("min_ratio", self.min_ratio)?;
        check_range("max_ratio", self.max_ratio, self.min_ratio, f64::MAX)?;
        check_positive("reverse_ratio", self.reverse_ratio)?;
        check_positive("min_target_rpm", self.min_target_rpm)?;
        check_range(
            "max_target_rpm",
            self.max_target_rpm,
            self.min_target_rpm,
            f64::MAX,
        )?;
        check_positive("ratio_time", self.ratio_time)?;
        check_positive("max_ratio_rate", self.max_ratio_rate)?;
        check_fraction("efficiency", self.efficiency)?;
        Ok(())
    }

    fn init(&self, rt: &mut CvtRuntime, state: &mut [f64]) {
        rt.engaged = self.selection.signum();
        state[0] = self.max_ratio;
    }

    fn begin_step(&self, rt: &mut CvtRuntime, _: &mut [f64], _: &StepContext) -> ModeChange {
        let selected = self.selection.signum();
        if selected == rt.engaged {
            return ModeChange::Unchanged;
        }
        rt.engaged = selected;
        if selected == 0 {
            ModeChange::Smooth
        } else {
            // Engaging brings both sides to one speed.
            ModeChange::Impulsive
        }
    }

    fn upstream(
        &self,
        rt: &CvtRuntime,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        let out = &outputs[0].up;
        let ratio = state[0];
        let output_speed = out.speed().unwrap_or(0.0);
        // The variator moves in drive, and not within a momentum pass (an instant).
        let rate = if rt.engaged > 0 && stage.pass == Pass::Torque {
            self.ratio_rate(ratio, output_speed)
        } else {
            0.0
        };
        derivative[0] = rate;
        let r = self.ratio_of(rt.engaged, ratio);
        if r == 0.0 {
            return ShaftUp::FREE;
        }
        let mut up = out.reflect(r, rt.flow.gain(r, self.efficiency));
        if !up.is_held() {
            // The moving ratio's share of the input's acceleration, `(dr/dt)·ω_out`, as the
            // reaction torque that gives it to the reflected inertia.
            up.reaction += up.inertia * rate * output_speed;
        }
        up
    }

    fn downstream(
        &self,
        rt: &CvtRuntime,
        state: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        let r = self.ratio_of(rt.engaged, state[0]);
        outputs[0].down = if r == 0.0 {
            ShaftDown {
                torque: 0.0,
                speed: outputs[0].up.speed().unwrap_or(0.0),
            }
        } else {
            ShaftDown {
                torque: input.torque * rt.flow.gain(r, self.efficiency),
                speed: input.speed / r,
            }
        };
    }

    fn update_modes(&self, rt: &mut CvtRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        if self.efficiency == 1.0 || rt.engaged == 0 {
            return ModeChange::Unchanged;
        }
        let Some(&Shaft { down: input, .. }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        rt.flow.latch(input)
    }

    fn sensors(&self, rt: &CvtRuntime, state: &[f64], shafts: &Shafts) -> CvtSensors {
        let input = Shaft::down_of(shafts.input);
        let out = shafts.outputs[0];
        let output_speed = out.up.speed().unwrap_or(out.down.speed);
        CvtSensors {
            selection: rt.engaged,
            ratio: self.ratio_of(rt.engaged, state[0]),
            target_ratio: self.ratio_of(rt.engaged, self.target_ratio(output_speed)),
            input_speed: input.speed,
            output_speed,
            output_torque: out.down.torque,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target ratio is the target speed over the output's, within the limits, with no
    /// division at a standstill; a throttle that is not a number counts as closed.
    #[test]
    fn the_target_ratio_holds_the_input_at_its_target_speed() {
        let cvt = Cvt {
            throttle: 0.5,
            ..Default::default()
        };
        // Half throttle: 3500 rpm.
        let target = rpm_to_rad_s(3500.0);
        assert!((cvt.target_speed() - target).abs() < 1e-12);
        assert_eq!(cvt.target_ratio(0.0), cvt.max_ratio);
        assert_eq!(cvt.target_ratio(-1e-300), cvt.max_ratio);
        assert!((cvt.target_ratio(-200.0) - target / 200.0).abs() < 1e-15);
        assert_eq!(cvt.target_ratio(1e6), cvt.min_ratio);
        // The rate: toward the target over `ratio_time`, within `max_ratio_rate`.
        let r = target / 200.0;
        assert!((cvt.ratio_rate(r + 0.1, 200.0) + 0.1 / cvt.ratio_time).abs() < 1e-12);
        assert_eq!(cvt.ratio_rate(cvt.max_ratio, 1e6), -cvt.max_ratio_rate);
        let closed = Cvt {
            throttle: f64::NAN,
            ..Default::default()
        };
        assert!((closed.target_speed() - rpm_to_rad_s(1500.0)).abs() < 1e-12);
    }

    /// Each bad setting is refused with its field named.
    #[test]
    fn bad_settings_are_refused_by_name() {
        let cases: [(&str, fn(&mut Cvt)); 7] = [
            ("min_ratio", |c| c.min_ratio = f64::NAN),
            ("max_ratio", |c| c.max_ratio = 0.2),
            ("reverse_ratio", |c| c.reverse_ratio = 0.0),
            ("max_target_rpm", |c| c.max_target_rpm = 1000.0),
            ("ratio_time", |c| c.ratio_time = -1.0),
            ("max_ratio_rate", |c| c.max_ratio_rate = f64::INFINITY),
            ("efficiency", |c| c.efficiency = 1.5),
        ];
        assert!(Cvt::default().validate().is_ok());
        for (field, spoil) in cases {
            let mut cvt = Cvt::default();
            spoil(&mut cvt);
            let error = cvt.validate().expect_err(field).to_string();
            assert!(error.contains(field), "{field}: {error}");
        }
    }
}
