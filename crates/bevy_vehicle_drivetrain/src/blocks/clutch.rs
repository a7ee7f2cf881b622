//! Friction clutch: locks the two sides together while it can, slips at its capacity when it
//! cannot.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, check_finite, check_non_negative,
    clamp_input,
};
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp, sign};

/// A dry friction clutch between its input (engine side, `A`) and output (load side, `B`).
///
/// Its torque capacity is `max_torque × engagement`. Two modes:
///
/// * **locked**: both sides turn as one. The upstream pass hands the load straight through, so
///   the root solves engine and load as one lumped inertia; the torque in the clutch is then
///   `T* = (I_B·T_A − I_A·T_B)/(I_A + I_B)` without any stiff spring.
/// * **slipping**: the clutch transmits `capacity × sign(ω_A − ω_B)`; the engine side sees no
///   load inertia, only that friction torque.
///
/// The mode is decided once per substep, never inside a stage: a locked clutch starts to slip
/// when `|T*|` exceeds the capacity (the torque is continuous across the switch); a slipping
/// clutch locks when the slip speed changes sign, with a momentum-conserving jump to the
/// common speed. The slip direction is kept for the whole substep, so the transmitted torque
/// cannot chatter between signs.
///
/// No state; no inertia (lump the disc's inertia into the engine's). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct Clutch {
    /// Torque capacity when fully engaged (N·m, ≥ 0).
    pub max_torque: f64,
    /// Input: engagement, 0 (pedal down, open) to 1 (pedal up, closed). Clamped.
    pub engagement: f64,
}

impl Default for Clutch {
    /// A car clutch with 400 N·m capacity, engaged.
    fn default() -> Self {
        Clutch {
            max_torque: 400.0,
            engagement: 1.0,
        }
    }
}

/// The mode of a [`Clutch`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClutchMode {
    /// Both sides turn together.
    Locked,
    /// The sides slip; the engine side turns faster when `direction` is `1`, slower when `-1`,
    /// and `0` before any slip direction is known (transmits nothing).
    Slipping {
        /// Sign of `ω_A − ω_B` latched for the substep.
        direction: f64,
    },
}

impl Default for ClutchMode {
    fn default() -> Self {
        ClutchMode::Slipping { direction: 0.0 }
    }
}

/// What a [`Clutch`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct ClutchSensors {
    /// Torque transmitted from the engine side to the load side (N·m).
    pub torque: f64,
    /// Current capacity, `max_torque × engagement` (N·m).
    pub capacity: f64,
    /// Slip speed `ω_A − ω_B` (rad/s); 0 when locked.
    pub slip_speed: f64,
    /// Whether the clutch is locked.
    pub locked: bool,
}

impl Clutch {
    /// Current torque capacity (N·m).
    #[inline]
    pub fn capacity(&self) -> f64 {
        self.max_torque * clamp_input(self.engagement, 0.0, 1.0, 0.0)
    }
}

impl Block for Clutch {
    const TYPE_NAME: &'static str = "Clutch";
    type Runtime = ClutchMode;
    type Sensors = ClutchSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_non_negative("max_torque", self.max_torque)?;
        check_finite("engagement", self.engagement)?;
        Ok(())
    }

    #[inline]
    fn upstream(
        &self,
        mode: &ClutchMode,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
    ) -> ShaftUp {
        match (*mode, stage.pass) {
            (ClutchMode::Locked, _) => outputs[0].up,
            (ClutchMode::Slipping { direction }, Pass::Torque) => ShaftUp {
                reaction: -direction * self.capacity(),
                ..ShaftUp::FREE
            },
            (ClutchMode::Slipping { .. }, Pass::Momentum) => ShaftUp::FREE,
        }
    }

    #[inline]
    fn downstream(
        &self,
        mode: &ClutchMode,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = input.map(|s| s.down).unwrap_or_default();
        outputs[0].down = match (*mode, stage.pass) {
            (ClutchMode::Locked, _) => input,
            (ClutchMode::Slipping { direction }, pass) => ShaftDown {
                torque: if pass == Pass::Torque {
                    direction * self.capacity()
                } else {
                    0.0
                },
                speed: outputs[0].up.speed().unwrap_or(input.speed),
            },
        };
    }

    #[inline]
    fn update_modes(&self, mode: &mut ClutchMode, _: &[f64], shafts: &Shafts) -> ModeChange {
        let Some(&Shaft { down: input, .. }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        let load = shafts.outputs[0].up;
        let capacity = self.capacity();
        match *mode {
            ClutchMode::Locked => {
                // The torque a locked clutch must carry is what flows through it.
                if input.torque.abs() > capacity {
                    *mode = ClutchMode::Slipping {
                        direction: sign(input.torque),
                    };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
            ClutchMode::Slipping { direction } => {
                let Some(load_speed) = load.speed() else {
                    // Nothing to slip against: a free output simply follows.
                    *mode = ClutchMode::Locked;
                    return ModeChange::Smooth;
                };
                let slip = sign(input.speed - load_speed);
                if capacity == 0.0 {
                    // An open clutch transmits nothing either way; just track the direction.
                    *mode = ClutchMode::Slipping { direction: slip };
                    return ModeChange::Unchanged;
                }
                let reversed = direction != 0.0 && slip == -direction;
                let no_slip = direction == 0.0 && slip == 0.0;
                if reversed || no_slip {
                    // The slip reversed within the last substep (or there is none): lock at the
                    // common speed. If the capacity cannot hold, the next round slips again in
                    // the direction of the torque.
                    *mode = ClutchMode::Locked;
                    ModeChange::Impulsive
                } else if direction == 0.0 {
                    *mode = ClutchMode::Slipping { direction: slip };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
        }
    }

    fn sensors(&self, mode: &ClutchMode, _: &[f64], shafts: &Shafts) -> ClutchSensors {
        let input = shafts.input.map(|s| s.down).unwrap_or_default();
        let locked = *mode == ClutchMode::Locked;
        ClutchSensors {
            torque: shafts.outputs[0].down.torque,
            capacity: self.capacity(),
            slip_speed: if locked {
                0.0
            } else {
                input.speed - shafts.outputs[0].up.speed().unwrap_or(input.speed)
            },
            locked,
        }
    }
}
