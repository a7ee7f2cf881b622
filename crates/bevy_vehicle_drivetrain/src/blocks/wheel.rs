//! Wheel: the inertial leaf of a drivetrain, with a brake that always opposes spin and grips
//! without chatter at standstill.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, check_finite, check_non_negative,
    check_positive, clamp_input,
};
use crate::shaft::{Pass, Shaft, ShaftUp, sign};

/// Standard gravity (m/s²), used by [`WheelLoad::Vehicle`].
const GRAVITY: f64 = 9.80665;
/// Ground speed below which rolling resistance fades linearly to zero (m/s).
const ROLLING_BLEND_SPEED: f64 = 0.01;

/// What the road does to a wheel when no tire model drives it: a simple, known load for tests
/// and headless drivetrain studies. (The chassis replaces this with real tire forces.)
///
/// Torques are about the axle, positive when they turn the wheel forward (positive spin).
#[derive(Clone, Debug, PartialEq)]
pub enum WheelLoad {
    /// No load: the wheel spins freely.
    None,
    /// A constant torque (N·m).
    Torque(f64),
    /// Viscous drag `−coefficient × ω` (coefficient in N·m·s/rad, ≥ 0).
    Viscous(f64),
    /// A road moving at `ground_speed` (m/s) that drags the wheel toward rolling without slip,
    /// `T = −stiffness × (ω − ground_speed / radius)` (stiffness in N·m·s/rad, ≥ 0): a linear
    /// tire on a rolling road.
    Road {
        /// Speed of the road surface under the wheel (m/s).
        ground_speed: f64,
        /// Torque per unit of slip speed (N·m·s/rad, ≥ 0).
        stiffness: f64,
    },
    /// The wheel carries a share of a vehicle's mass and rolls without slip: the mass adds
    /// `mass × radius²` of inertia, and rolling resistance `c_rr·m·g` and aerodynamic drag
    /// `½·ρ·CdA·v²` (v = ω·radius) act at the tire.
    Vehicle {
        /// Mass carried by this wheel (kg, ≥ 0).
        mass: f64,
        /// Rolling-resistance coefficient (dimensionless, ≥ 0).
        rolling_resistance: f64,
        /// This wheel's share of drag area `Cd·A` (m², ≥ 0).
        drag_area: f64,
        /// Air density (kg/m³, ≥ 0).
        air_density: f64,
    },
}

/// A wheel: the leaf of a drivetrain.
///
/// `I·dω/dt = T_drive + T_load + T_brake`. The brake torque always opposes spin: while rolling
/// it is `−brake_torque × sign(ω)`, with the sign latched once per substep so that it cannot
/// chatter; when the spin reverses within a substep and the brake can hold everything acting
/// on the wheel, the wheel is **held** (exactly still; the upstream pass reports it as held, so
/// the drivetrain behind it sees an immovable load) until the torque needed to hold it exceeds
/// `brake_torque`.
///
/// State: `[angle (rad), spin (rad/s)]`. Ports: input only.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct Wheel {
    /// Inertia of wheel, tire and hub about the axle (kg·m², > 0).
    pub inertia: f64,
    /// Rolling radius (m, > 0).
    pub radius: f64,
    /// The road's load on the wheel.
    pub load: WheelLoad,
    /// Input: brake torque capacity this step (N·m, ≥ 0). Clamped.
    pub brake_torque: f64,
}

impl Default for Wheel {
    /// A 16-inch car wheel and tire, no load, brake off.
    fn default() -> Self {
        Wheel {
            inertia: 1.2,
            radius: 0.31,
            load: WheelLoad::None,
            brake_torque: 0.0,
        }
    }
}

/// The brake mode of a [`Wheel`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BrakeMode {
    /// The wheel turns; the brake opposes `direction`, the spin's sign latched for the substep.
    Rolling {
        /// Latched sign of the spin (0 when at rest and not yet moving).
        direction: f64,
    },
    /// The brake grips: the wheel is still.
    Held,
}

impl Default for BrakeMode {
    fn default() -> Self {
        BrakeMode::Rolling { direction: 0.0 }
    }
}

/// What a [`Wheel`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct WheelSensors {
    /// Spin (rad/s).
    pub speed: f64,
    /// Angle turned since the start (rad).
    pub angle: f64,
    /// Surface speed, spin × radius (m/s).
    pub surface_speed: f64,
    /// Drive torque arriving from the drivetrain (N·m).
    pub drive_torque: f64,
    /// Brake torque acting (N·m, signed; opposes spin).
    pub brake_torque: f64,
    /// Load torque from the road (N·m).
    pub load_torque: f64,
    /// Whether the brake holds the wheel still.
    pub held: bool,
}

impl Wheel {
    /// Inertia about the axle including any vehicle mass the load carries (kg·m²).
    #[inline]
    pub fn effective_inertia(&self) -> f64 {
        match self.load {
            WheelLoad::Vehicle { mass, .. } => self.inertia + mass * self.radius * self.radius,
            _ => self.inertia,
        }
    }

    /// Load torque at spin `speed` (rad/s) (N·m).
    #[inline]
    pub fn load_torque(&self, speed: f64) -> f64 {
        match self.load {
            WheelLoad::None => 0.0,
            WheelLoad::Torque(t) => t,
            WheelLoad::Viscous(c) => -c * speed,
            WheelLoad::Road {
                ground_speed,
                stiffness,
            } => -stiffness * (speed - ground_speed / self.radius),
            WheelLoad::Vehicle {
                mass,
                rolling_resistance,
                drag_area,
                air_density,
            } => {
                let v = speed * self.radius;
                let rolling = rolling_resistance
                    * mass
                    * GRAVITY
                    * (v * (1.0 / ROLLING_BLEND_SPEED)).clamp(-1.0, 1.0);
                let drag = 0.5 * air_density * drag_area * v * v.abs();
                -(rolling + drag) * self.radius
            }
        }
    }

    #[inline]
    fn brake_capacity(&self) -> f64 {
        clamp_input(self.brake_torque, 0.0, f64::MAX, 0.0)
    }
}

impl Block for Wheel {
    const TYPE_NAME: &'static str = "Wheel";
    type Runtime = BrakeMode;
    type Sensors = WheelSensors;

    fn ports(&self) -> Ports {
        Ports::LEAF
    }

    fn state_len(&self) -> usize {
        2
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("inertia", self.inertia)?;
        check_positive("radius", self.radius)?;
        check_finite("brake_torque", self.brake_torque)?;
        match self.load {
            WheelLoad::None => {}
            WheelLoad::Torque(t) => check_finite("load.Torque", t)?,
            WheelLoad::Viscous(c) => check_non_negative("load.Viscous", c)?,
            WheelLoad::Road {
                ground_speed,
                stiffness,
            } => {
                check_finite("load.ground_speed", ground_speed)?;
                check_non_negative("load.stiffness", stiffness)?;
            }
            WheelLoad::Vehicle {
                mass,
                rolling_resistance,
                drag_area,
                air_density,
            } => {
                check_non_negative("load.mass", mass)?;
                check_non_negative("load.rolling_resistance", rolling_resistance)?;
                check_non_negative("load.drag_area", drag_area)?;
                check_non_negative("load.air_density", air_density)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn upstream(
        &self,
        mode: &BrakeMode,
        state: &[f64],
        stage: &StageContext,
        _: &[Shaft],
    ) -> ShaftUp {
        let speed = state[1];
        let inertia = self.effective_inertia();
        match (*mode, stage.pass) {
            (BrakeMode::Held, _) => ShaftUp::HELD,
            (BrakeMode::Rolling { direction }, Pass::Torque) => ShaftUp::rigid(
                inertia,
                speed,
                self.load_torque(speed) - direction * self.brake_capacity(),
            ),
            (BrakeMode::Rolling { .. }, Pass::Momentum) => {
                let momentum = inertia * speed;
                ShaftUp {
                    momentum,
                    inertia,
                    reaction: momentum,
                }
            }
        }
    }

    #[inline]
    fn downstream(
        &self,
        mode: &BrakeMode,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        _: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        let speed = state[1];
        let input = input.copied().unwrap_or_default();
        match (*mode, stage.pass) {
            (BrakeMode::Held, Pass::Torque) => {
                derivative[0] = speed;
                derivative[1] = 0.0;
            }
            (BrakeMode::Held, Pass::Momentum) => {
                derivative[0] = 0.0;
                derivative[1] = -speed;
            }
            // `input.up` is what `upstream` reported: the effective inertia and the load plus
            // brake torque (the momentum, in a momentum pass).
            (BrakeMode::Rolling { .. }, Pass::Torque) => {
                derivative[0] = speed;
                derivative[1] = (input.down.torque + input.up.reaction) / input.up.inertia;
            }
            (BrakeMode::Rolling { .. }, Pass::Momentum) => {
                derivative[0] = 0.0;
                derivative[1] = input.down.torque / input.up.inertia;
            }
        }
    }

    #[inline]
    fn update_modes(&self, mode: &mut BrakeMode, state: &[f64], shafts: &Shafts) -> ModeChange {
        let speed = state[1];
        let capacity = self.brake_capacity();
        match *mode {
            BrakeMode::Held => {
                let drive = shafts.input.map_or(0.0, |s| s.down.torque);
                let net = drive + self.load_torque(speed);
                if net.abs() > capacity {
                    *mode = BrakeMode::Rolling {
                        direction: sign(net),
                    };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
            BrakeMode::Rolling { direction } => {
                let spin = sign(speed);
                if capacity == 0.0 {
                    // No brake: the latched direction changes nothing in the stage functions.
                    *mode = BrakeMode::Rolling { direction: spin };
                    return ModeChange::Unchanged;
                }
                let reversed = direction != 0.0 && spin == -direction;
                let at_rest = direction == 0.0 && spin == 0.0;
                if reversed || at_rest {
                    *mode = BrakeMode::Held;
                    ModeChange::Impulsive
                } else if direction == 0.0 {
                    *mode = BrakeMode::Rolling { direction: spin };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
        }
    }

    fn sensors(&self, mode: &BrakeMode, state: &[f64], shafts: &Shafts) -> WheelSensors {
        let speed = state[1];
        let drive = shafts.input.map_or(0.0, |s| s.down.torque);
        let load = self.load_torque(speed);
        let brake = match *mode {
            BrakeMode::Held => -(drive + load),
            BrakeMode::Rolling { direction } => -direction * self.brake_capacity(),
        };
        WheelSensors {
            speed,
            angle: state[0],
            surface_speed: speed * self.radius,
            drive_torque: drive,
            brake_torque: brake,
            load_torque: load,
            held: *mode == BrakeMode::Held,
        }
    }
}
