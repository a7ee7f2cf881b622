//! Retarder: a wear-free driveline brake (hydrodynamic or eddy-current) whose torque depends on
//! shaft speed.

use bevy::prelude::*;

use crate::block::{
    Block, Ports, SettingError, Shafts, StageContext, check_finite, check_non_negative, clamp_input,
};
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::{TorqueCurve, rad_s_to_rpm};
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp};

/// Speed below which the braking torque fades linearly to zero (rad/s): a retarder cannot hold
/// a vehicle still, and the fade keeps the torque continuous through zero speed.
const FADE_SPEED: f64 = 1.0;

/// A retarder on a shaft: passes the shaft through rigidly and brakes it with
///
/// ```text
/// T = −level · max_torque · c(|rpm|) · clamp(ω / 1 rad/s, −1, 1)       (N·m)
/// ```
///
/// where `ω` is the shaft speed (rad/s), `rpm = ω·60/2π`, `c` the [`curve`](Self::curve)
/// (fraction of `max_torque`, linearly interpolated in rpm) and `level` the driver's retarder
/// lever (0..1). The torque always opposes rotation, works in both directions, and fades out
/// below 1 rad/s (a retarder slows a vehicle but does not hold it; use the brakes or park).
/// The absorbed power `−T·ω` is reported as a sensor.
///
/// The torque is evaluated at the exact shaft speed of every RK4 stage. Place it where the
/// shaft turns rigidly with something that has inertia (typically after the transmission);
/// with nothing downstream (a free shaft) it brakes nothing.
///
/// No state; no inertia (lump the rotor's into the shaft's). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retarder {
    /// Braking torque at full level where the curve is 1 (N·m, ≥ 0).
    pub max_torque: f64,
    /// Fraction of `max_torque` (dimensionless, [0, 1]) against shaft speed (rpm, ≥ 0); the
    /// speed's magnitude is looked up, so the curve serves both directions.
    pub curve: TorqueCurve,
    /// Input: retarder lever, 0 (off) to 1 (full). Clamped.
    #[serde(skip)]
    pub level: f64,
}

impl Default for Retarder {
    /// A truck transmission retarder: up to 2500 N·m, full from 1200 rpm of its shaft, off.
    fn default() -> Self {
        Retarder {
            max_torque: 2500.0,
            curve: TorqueCurve::new(vec![
                (0.0, 0.0),
                (300.0, 0.35),
                (600.0, 0.7),
                (1200.0, 1.0),
                (3000.0, 1.0),
            ]),
            level: 0.0,
        }
    }
}

/// What a [`Retarder`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct RetarderSensors {
    /// Braking torque on the shaft (N·m), signed like the shaft (negative while it turns
    /// forward).
    pub torque: f64,
    /// Shaft speed (rad/s).
    pub speed: f64,
    /// Power absorbed, `−torque × speed` (W, ≥ 0).
    pub power: f64,
    /// Lever level in effect (0..1).
    pub level: f64,
}

impl Retarder {
    /// Braking torque (N·m) on a shaft turning at `speed` (rad/s). See the [type docs](Self).
    #[inline]
    pub fn torque(&self, speed: f64) -> f64 {
        let level = clamp_input(self.level, 0.0, 1.0, 0.0);
        let fraction = self
            .curve
            .torque_at(rad_s_to_rpm(speed.abs()))
            .clamp(0.0, 1.0);
        -level * self.max_torque * fraction * (speed / FADE_SPEED).clamp(-1.0, 1.0)
    }
}

impl Block for Retarder {
    const TYPE_NAME: &'static str = "Retarder";
    type Runtime = ();
    type Sensors = RetarderSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(level);

    /// The driver's retarder lever ([`VehicleControls::retarder`]), when it is given.
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        match controls.retarder {
            Some(level) => set_if_changed(&mut self.level, clamp_input(level, 0.0, 1.0, 0.0)),
            None => false,
        }
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_non_negative("max_torque", self.max_torque)?;
        self.curve.validate("curve")?;
        for (i, &(_, f)) in self.curve.points.iter().enumerate() {
            if !(0.0..=1.0).contains(&f) {
                return Err(SettingError::new(
                    format!("curve[{i}].1"),
                    format!("must lie in [0, 1] (a fraction of max_torque), got {f}"),
                ));
            }
        }
        check_finite("level", self.level)?;
        Ok(())
    }

    #[inline]
    fn upstream(
        &self,
        _: &(),
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        let mut up = outputs[0].up;
        if stage.pass == Pass::Torque
            && let Some(speed) = up.speed()
            && !up.is_held()
        {
            up.reaction += self.torque(speed);
        }
        up
    }

    #[inline]
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        let up = outputs[0].up;
        let brake = match (stage.pass, up.speed()) {
            (Pass::Torque, Some(speed)) if !up.is_held() => self.torque(speed),
            _ => 0.0,
        };
        outputs[0].down = ShaftDown {
            torque: input.torque + brake,
            speed: input.speed,
        };
    }

    fn sensors(&self, _: &(), _: &[f64], shafts: &Shafts) -> RetarderSensors {
        let up = shafts.outputs[0].up;
        let speed = up.speed().unwrap_or(0.0);
        let torque = if up.is_free() || up.is_held() {
            0.0
        } else {
            self.torque(speed)
        };
        RetarderSensors {
            torque,
            speed,
            power: -torque * speed,
            level: clamp_input(self.level, 0.0, 1.0, 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::rpm_to_rad_s;

    #[test]
    fn torque_law() {
        let r = Retarder {
            level: 0.5,
            ..default()
        };
        // 450 rpm: halfway between 0.35 and 0.7 of 2500 N·m, at half level.
        let w = rpm_to_rad_s(450.0);
        assert!((r.torque(w) + 0.5 * 2500.0 * 0.525).abs() < 1e-9);
        assert!((r.torque(-w) - 0.5 * 2500.0 * 0.525).abs() < 1e-9);
        assert_eq!(r.torque(0.0), 0.0);
        // Fades below 1 rad/s.
        let at_half = r.torque(0.5);
        let frac = r.curve.torque_at(rad_s_to_rpm(0.5));
        assert!((at_half + 0.5 * 2500.0 * frac * 0.5).abs() < 1e-9);
        let off = Retarder::default();
        assert_eq!(off.torque(100.0), 0.0);
    }
}
