//! Direct-drive electric motor: a root block limited by peak torque and peak power, in both
//! directions of rotation and of torque.

use bevy::prelude::*;

use crate::block::{
    Block, DrivePath, Ports, SettingError, Shafts, StageContext, check_finite, check_non_negative,
    check_positive, clamp_input,
};
use crate::blocks::BodyAxis;
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::{rad_s_to_rpm, rpm_to_rad_s};
use crate::shaft::{Pass, Shaft, ShaftDown, lump};

/// Fraction of `max_rpm` over which motoring torque fades to zero at the speed limit.
const SPEED_LIMIT_BAND: f64 = 0.02;

/// An electric motor driving its shaft directly, the root of an electric drivetrain.
///
/// The torque available at speed `ω` (rad/s) is `min(peak_torque, max_power / |ω|)`, the usual
/// constant-torque / constant-power envelope. The motor delivers `command × available` in
/// either direction of rotation, so it drives forward, drives in reverse, and brakes
/// regeneratively when the command opposes the rotation. Motoring torque fades to zero over
/// the last 2 % before `max_rpm`.
///
/// State: rotor speed (rad/s). Ports: one output, `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Motor {
    /// Peak torque (N·m, > 0).
    pub peak_torque: f64,
    /// Peak mechanical power (W, > 0).
    pub max_power: f64,
    /// Speed limit (rpm, > 0).
    pub max_rpm: f64,
    /// Rotor inertia (kg·m², > 0).
    pub inertia: f64,
    /// Viscous friction of the rotor (N·m·s/rad, ≥ 0).
    pub viscous_friction: f64,
    /// Which way the rotor's spin points in the vehicle body's frame (its angular velocity
    /// when it turns its shaft forwards, by the right-hand rule), or `None` (the default) for
    /// not known. With it, a chassis turns the body against the rotor's change of angular
    /// momentum, `−I·Δω` along this axis over each step, as the motor's mounts take it (see
    /// [`Engine::crank_axis`](crate::blocks::Engine::crank_axis)).
    pub rotor_axis: Option<BodyAxis>,
    /// Input: torque command, −1 (full reverse torque) to 1 (full forward torque). From the
    /// driver's controls: the throttle, signed by the selected gear's direction unless a
    /// gearbox between the motor and the wheels reverses the drive already
    /// ([`Motor::command_on`]). Clamped.
    #[serde(skip)]
    pub command: f64,
}

impl Default for Motor {
    /// A 150 kW, 300 N·m traction motor with a 16 000 rpm limit.
    fn default() -> Self {
        Motor {
            peak_torque: 300.0,
            max_power: 150_000.0,
            max_rpm: 16_000.0,
            inertia: 0.05,
            viscous_friction: 0.0,
            rotor_axis: None,
            command: 0.0,
        }
    }
}

/// What a [`Motor`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct MotorSensors {
    /// Rotor speed (rpm).
    pub rpm: f64,
    /// Rotor speed (rad/s).
    pub speed: f64,
    /// Torque the motor produces, friction included, with a traction control's cut
    /// ([`StageContext::drive_limit`]) applied (N·m).
    pub torque: f64,
    /// Torque available at this speed, `min(peak_torque, max_power/|ω|)` (N·m).
    pub available_torque: f64,
    /// Mechanical power, `torque × speed` (W); negative when regenerating.
    pub power: f64,
    /// Torque delivered into the output shaft (N·m).
    pub shaft_torque: f64,
}

impl Motor {
    /// Torque available at `speed` (rad/s), before the command (N·m).
    #[inline]
    pub fn available_torque(&self, speed: f64) -> f64 {
        let w = speed.abs();
        if w * self.peak_torque > self.max_power {
            self.max_power / w
        } else {
            self.peak_torque
        }
    }

    /// The torque command the driver's controls give a motor: the throttle, signed by the
    /// direction of the selected gear (forward, reverse, or none in neutral).
    pub fn command_from(controls: &VehicleControls) -> f64 {
        controls.throttle() * controls.direction()
    }

    /// The torque command the driver's controls give a motor that sits on `path`: the
    /// throttle, signed by the selected gear's direction ([`Motor::command_from`]) when no
    /// gearbox lies between the motor and the wheels; when one does
    /// ([`DrivePath::through_direction_selector`]: a hybrid's motor ahead of the gearbox) the
    /// throttle alone, 0 in neutral, since the gearbox's reverse ratio turns the drive round
    /// already, as it does the engine's.
    pub fn command_on(controls: &VehicleControls, path: DrivePath) -> f64 {
        if path.through_direction_selector {
            controls.throttle() * controls.direction().abs()
        } else {
            Motor::command_from(controls)
        }
    }

    /// The sensors of this motor turning at `speed` (rad/s) and delivering `shaft_torque`
    /// (N·m) into the shaft it drives, with its command scaled by `drive_limit` (0..1,
    /// [`StageContext::drive_limit`]).
    pub fn sensors_at(&self, speed: f64, shaft_torque: f64, drive_limit: f64) -> MotorSensors {
        let torque = self.limited_torque(speed, drive_limit);
        MotorSensors {
            rpm: rad_s_to_rpm(speed),
            speed,
            torque,
            available_torque: self.available_torque(speed),
            power: torque * speed,
            shaft_torque,
        }
    }

    /// Net motor torque at `speed` (rad/s), friction included (N·m).
    #[inline]
    pub fn net_torque(&self, speed: f64) -> f64 {
        self.limited_torque(speed, 1.0)
    }

    /// Net motor torque at `speed` (rad/s), friction included (N·m), with the commanded torque
    /// scaled by `drive_limit` (0..1, [`StageContext::drive_limit`]).
    #[inline]
    pub fn limited_torque(&self, speed: f64, drive_limit: f64) -> f64 {
        let command = clamp_input(self.command, -1.0, 1.0, 0.0) * drive_limit;
        let mut torque = command * self.available_torque(speed);
        if torque * speed > 0.0 {
            let limit = rpm_to_rad_s(self.max_rpm);
            torque *= ((limit - speed.abs()) / (SPEED_LIMIT_BAND * limit)).clamp(0.0, 1.0);
        }
        torque - self.viscous_friction * speed
    }
}

impl Block for Motor {
    const TYPE_NAME: &'static str = "Motor";
    type Runtime = ();
    type Sensors = MotorSensors;

    fn ports(&self) -> Ports {
        Ports::ROOT
    }

    fn state_len(&self) -> usize {
        1
    }

    take_inputs_fields!(command);

    /// The throttle, signed by the direction of the selected gear (forward, reverse, or none in
    /// neutral).
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        set_if_changed(&mut self.command, Motor::command_from(controls))
    }

    /// The throttle, signed by the selected gear's direction unless a gearbox between the
    /// motor and the wheels turns the drive round already ([`Motor::command_on`]).
    fn apply_controls_on(&mut self, controls: &VehicleControls, path: DrivePath) -> bool {
        set_if_changed(&mut self.command, Motor::command_on(controls, path))
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("peak_torque", self.peak_torque)?;
        check_positive("max_power", self.max_power)?;
        check_positive("max_rpm", self.max_rpm)?;
        check_positive("inertia", self.inertia)?;
        check_non_negative("viscous_friction", self.viscous_friction)?;
        check_finite("command", self.command)?;
        Ok(())
    }

    #[inline]
    fn downstream(
        &self,
        _: &(),
        state: &[f64],
        stage: &StageContext,
        _input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        let speed = state[0];
        let source = match stage.pass {
            Pass::Torque => self.limited_torque(speed, stage.drive_limit),
            Pass::Momentum => self.inertia * speed,
        };
        let l = lump(self.inertia, source, outputs[0].up);
        derivative[0] = match stage.pass {
            Pass::Torque => l.acceleration,
            Pass::Momentum => l.acceleration - speed,
        };
        outputs[0].down = ShaftDown {
            torque: l.shaft_torque,
            speed,
        };
    }

    fn sensors(&self, _: &(), state: &[f64], shafts: &Shafts) -> MotorSensors {
        self.sensors_at(state[0], shafts.outputs[0].down.torque, shafts.drive_limit)
    }
}
