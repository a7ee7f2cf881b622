//! A parallel hybrid's summing gear, which joins two power sources on one output, and the
//! electric motor that drives its second input.

use bevy::prelude::*;

use crate::block::{
    Block, DrivePath, Input, PortSpec, Ports, SettingError, Shafts, StageContext, check_positive,
};
use crate::blocks::{BodyAxis, Motor, MotorSensors};
use crate::controls::{VehicleControls, set_if_changed};
use crate::shaft::{Pass, Shaft, ShaftUp, rigid_join, rigid_split};

/// The summing gear's ports: the engine side is its input; `out` drives the wheels; the second
/// power source sits on `motor`.
const SUMMING_PORTS: Ports = Ports {
    input: Input::Required,
    outputs: &[PortSpec::required("out"), PortSpec::required("motor")],
};

/// A summing gear: two power sources, the engine on its input and an electric motor on its
/// `motor` port, geared rigidly onto one output shaft `out`.
///
/// # Equations
///
/// The three shafts turn together at fixed ratios (lossless):
///
/// ```text
/// ω_in = ratio · ω_out          ω_motor = motor_ratio · ω_out
/// ```
///
/// Every shaft reports, in the upstream pass, what turns rigidly behind it: momentum `L`,
/// inertia `I` and reaction torque `T` (for the motor's shaft, the motor's own torque: a power
/// source is a reaction that drives). Referred to the output shaft by the kinematics above
/// (virtual work: a torque `T` on a shaft turning `k` times faster than the output is `k·T` at
/// the output, an inertia `I` is `k²·I`), the output's and the motor's sides add up:
///
/// ```text
/// I_c = I_out + motor_ratio²·I_motor     T_c = T_out + motor_ratio·T_motor
/// L_c = L_out + motor_ratio·L_motor
/// ```
///
/// and the gear hands `(L_c/ratio, I_c/ratio², T_c/ratio)` up to the engine. The root then
/// solves engine and everything behind the gear as one lumped inertia, and hands down the
/// drive torque `T_in`. At the output it is `ratio·T_in`, so the shared acceleration of the
/// output shaft is
///
/// ```text
/// α_out = (ratio·T_in + T_c) / I_c
/// ```
///
/// and each side gets the torque that gives it that acceleration, which is what the gear
/// carries into it:
///
/// ```text
/// T_down,out = I_out·α_out − T_out          T_down,motor = I_motor·(motor_ratio·α_out) − T_motor
/// ```
///
/// With the engine's torque `T_e` and inertia `I_e`, a motor torque `T_m`, inertia `I_m`, and a
/// load `T_L` on an output inertia `I_w`, that is the lumped-inertia result
/// `α_out = (ratio·T_e + motor_ratio·T_m + T_L) / (I_w + ratio²·I_e + motor_ratio²·I_m)`.
/// The gear itself does no work: the power in through its input, `T_in·ω_in`, equals the power
/// out into its two other shafts, `T_down,out·ω_out + T_down,motor·ω_motor` (substitute the
/// kinematics and `α_out`). So with every loss zero the drivetrain's kinetic energy changes by
/// exactly the work of the sources and the loads. In a momentum pass the same equations carry
/// momenta and velocity changes, conserving angular momentum across a new rigid connection.
///
/// With the motor's command at zero the gear is a gear of ratio `ratio` whose output also
/// carries the motor's reflected inertia; with the engine declutched, the motor drives the
/// output through a gear of ratio `motor_ratio`. Any block may sit on `motor` (power may flow
/// either way, as on every shaft); an [`AssistMotor`] is the usual one.
///
/// No state; no inertia (lump the gear's into its shafts). Ports: `out`, `motor`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummingGear {
    /// Input (engine-side) speed per output speed (dimensionless, > 0).
    pub ratio: f64,
    /// Motor speed per output speed (dimensionless, > 0).
    pub motor_ratio: f64,
}

impl Default for SummingGear {
    /// The engine straight through, the motor geared 2.5:1 onto the output.
    fn default() -> Self {
        SummingGear {
            ratio: 1.0,
            motor_ratio: 2.5,
        }
    }
}

/// What a [`SummingGear`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct SummingGearSensors {
    /// Output speed (rad/s).
    pub output_speed: f64,
    /// Torque from the input (engine) side, at the input shaft (N·m).
    pub input_torque: f64,
    /// Torque into the output shaft (N·m).
    pub output_torque: f64,
    /// Torque the gear carries into the motor's shaft (N·m); the motor's own torque less this
    /// is what the motor adds to the output.
    pub motor_shaft_torque: f64,
}

impl SummingGear {
    /// Speed of output `i` (0: `out`, 1: `motor`) per output speed.
    #[inline]
    fn shaft_ratio(&self, i: usize) -> f64 {
        if i == 0 { 1.0 } else { self.motor_ratio }
    }
}

impl Block for SummingGear {
    const TYPE_NAME: &'static str = "SummingGear";
    const TAKES_CONTROLS: bool = false;
    type Runtime = ();
    type Sensors = SummingGearSensors;

    fn ports(&self) -> Ports {
        SUMMING_PORTS
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("ratio", self.ratio)?;
        check_positive("motor_ratio", self.motor_ratio)
    }

    #[inline]
    fn upstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        let at_output = rigid_join(outputs, |i| self.shaft_ratio(i));
        let r = self.ratio;
        ShaftUp {
            momentum: at_output.momentum / r,
            inertia: at_output.inertia / (r * r),
            reaction: at_output.reaction / r,
        }
    }

    #[inline]
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        rigid_split(
            outputs,
            |i| self.shaft_ratio(i),
            self.ratio * input.torque,
            input.speed / self.ratio,
        );
    }

    fn sensors(&self, _: &(), _: &[f64], shafts: &Shafts) -> SummingGearSensors {
        SummingGearSensors {
            output_speed: shafts.outputs[0].down.speed,
            input_torque: shafts.input.map_or(0.0, |s| s.down.torque),
            output_torque: shafts.outputs[0].down.torque,
            motor_shaft_torque: shafts.outputs[1].down.torque,
        }
    }
}

/// An electric motor driving a shaft it sits on, such as a [`SummingGear`]'s `motor` port:
/// the second power source of a parallel hybrid.
///
/// Its settings and torque envelope are a [`Motor`]'s (`min(peak_torque, max_power/|ω|)` times
/// the command, fading out before `max_rpm`, less viscous friction), but it is a leaf: it
/// reports its rotor (inertia, momentum) and its torque up the shaft, where a power source is a
/// reaction that drives, and turns with what comes back down.
///
/// State: rotor speed (rad/s). Ports: its input only (the shaft it drives).
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AssistMotor {
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
    /// Input: torque command, −1 to 1 (positive turns the motor's shaft forwards, the sense
    /// in which the engine turns). From the driver's controls: the throttle, signed by the
    /// selected gear's direction only when no gearbox lies between the motor and the wheels
    /// (a motor behind the gearbox); a motor ahead of the gearbox, whose reverse ratio turns
    /// the drive round already, takes the throttle alone (0 in neutral). See
    /// [`Motor::command_on`]. Game code may set it instead (a hybrid's energy management).
    /// Clamped.
    #[serde(skip)]
    pub command: f64,
}

impl Default for AssistMotor {
    /// A 60 kW, 250 N·m hybrid motor with a 12 000 rpm limit.
    fn default() -> Self {
        AssistMotor {
            peak_torque: 250.0,
            max_power: 60_000.0,
            max_rpm: 12_000.0,
            inertia: 0.04,
            viscous_friction: 0.0,
            rotor_axis: None,
            command: 0.0,
        }
    }
}

impl AssistMotor {
    /// The same machine as a [`Motor`], for its torque envelope.
    fn as_motor(&self) -> Motor {
        Motor {
            peak_torque: self.peak_torque,
            max_power: self.max_power,
            max_rpm: self.max_rpm,
            inertia: self.inertia,
            viscous_friction: self.viscous_friction,
            rotor_axis: self.rotor_axis,
            command: self.command,
        }
    }

    /// Net torque at `speed` (rad/s), friction included (N·m): [`Motor::net_torque`].
    #[inline]
    pub fn net_torque(&self, speed: f64) -> f64 {
        self.as_motor().net_torque(speed)
    }
}

impl Block for AssistMotor {
    const TYPE_NAME: &'static str = "AssistMotor";
    type Runtime = ();
    type Sensors = MotorSensors;

    fn ports(&self) -> Ports {
        Ports {
            input: Input::Required,
            outputs: &[],
        }
    }

    fn state_len(&self) -> usize {
        1
    }

    take_inputs_fields!(command);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        set_if_changed(&mut self.command, Motor::command_from(controls))
    }

    /// The throttle, signed by the selected gear's direction only when no gearbox lies between
    /// the motor and the wheels ([`Motor::command_on`]): a motor ahead of the gearbox turns
    /// forwards in every gear, like the engine.
    fn apply_controls_on(&mut self, controls: &VehicleControls, path: DrivePath) -> bool {
        set_if_changed(&mut self.command, Motor::command_on(controls, path))
    }

    fn validate(&self) -> Result<(), SettingError> {
        self.as_motor().validate()
    }

    #[inline]
    fn upstream(
        &self,
        _: &(),
        state: &[f64],
        stage: &StageContext,
        _: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        let speed = state[0];
        let source = match stage.pass {
            Pass::Torque => self.as_motor().limited_torque(speed, stage.drive_limit),
            Pass::Momentum => self.inertia * speed,
        };
        ShaftUp {
            momentum: self.inertia * speed,
            inertia: self.inertia,
            reaction: source,
        }
    }

    #[inline]
    fn downstream(
        &self,
        _: &(),
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        _: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        let carried = input.map_or(0.0, |s| s.down.torque);
        derivative[0] = match stage.pass {
            Pass::Torque => {
                let torque = self.as_motor().limited_torque(state[0], stage.drive_limit);
                (carried + torque) / self.inertia
            }
            // The velocity change the gear hands down.
            Pass::Momentum => carried / self.inertia,
        };
    }

    fn sensors(&self, _: &(), state: &[f64], shafts: &Shafts) -> MotorSensors {
        // What it delivers into its shaft is the opposite of what the shaft carries into it.
        let carried = shafts.input.map_or(0.0, |s| s.down.torque);
        self.as_motor()
            .sensors_at(state[0], -carried, shafts.drive_limit)
    }
}
