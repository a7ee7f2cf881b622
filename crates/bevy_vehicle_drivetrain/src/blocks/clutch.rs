//! Friction clutch: locks the two sides together while it can, slips at its capacity when it
//! cannot.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_finite,
    check_non_negative, clamp_input,
};
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::rad_s_to_rpm;
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
/// With `automatic` set, the capacity also follows the engine speed the way a centrifugal
/// clutch does, so a car pulls away and stops in gear without a clutch pedal: nothing below
/// `engage_rpm`, full capacity from `lock_rpm`, a smooth step between.
///
/// The capacity is latched once per substep (from the engine speed at the substep's start).
///
/// No state; no inertia (lump the disc's inertia into the engine's). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Clutch {
    /// Torque capacity when fully engaged (N·m, ≥ 0).
    pub max_torque: f64,
    /// Engine-speed-dependent engagement, for vehicles without a clutch pedal.
    pub automatic: Option<AutomaticClutch>,
    /// Input: engagement, 0 (pedal down, open) to 1 (pedal up, closed). Clamped.
    #[serde(skip)]
    pub engagement: f64,
}

/// Engagement of an automatic clutch against the speed of its input (engine) side.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutomaticClutch {
    /// Input speed where the clutch starts to bite (rpm, ≥ 0).
    pub engage_rpm: f64,
    /// Input speed of full engagement (rpm, > `engage_rpm`).
    pub lock_rpm: f64,
}

impl Default for AutomaticClutch {
    /// Bites from 1000 rpm, fully engaged from 2500 rpm.
    fn default() -> Self {
        AutomaticClutch {
            engage_rpm: 1000.0,
            lock_rpm: 2500.0,
        }
    }
}

impl AutomaticClutch {
    /// Engagement (0..1) at input speed `speed` (rad/s).
    pub fn engagement(&self, speed: f64) -> f64 {
        let t = ((rad_s_to_rpm(speed) - self.engage_rpm) / (self.lock_rpm - self.engage_rpm))
            .clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    }
}

impl Default for Clutch {
    /// A car clutch with 400 N·m capacity, engaged, no automatic engagement.
    fn default() -> Self {
        Clutch {
            max_torque: 400.0,
            automatic: None,
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

impl ClutchMode {
    /// The lock/slip decision of a friction coupling of `capacity` (N·m) between the driving
    /// side, which hands down `input`, and the driven side, which sent up `load`; called once
    /// per substep after the first stage. Shared by every friction coupling (a [`Clutch`], a
    /// torque converter's lock-up clutch).
    ///
    /// A locked coupling slips once the torque through it exceeds its capacity, or as soon as
    /// it has none (an open clutch, pedal down). A slipping one locks when the slip reverses
    /// within the substep (or there is none), and locks onto a free output, which simply
    /// follows. Returns how the stage functions changed, or
    /// `None` when an open coupling (no capacity) only tracked the slip direction.
    pub(crate) fn update(
        &mut self,
        capacity: f64,
        input: ShaftDown,
        load: ShaftUp,
    ) -> Option<ModeChange> {
        Some(match *self {
            ClutchMode::Locked => {
                // The torque a locked coupling must carry is what flows through it. An open one
                // (no capacity) carries nothing, even with no torque through it, unless its
                // output is free and simply follows.
                let opened = capacity == 0.0 && load.speed().is_some();
                if opened || input.torque.abs() > capacity {
                    *self = ClutchMode::Slipping {
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
                    *self = ClutchMode::Locked;
                    return Some(ModeChange::Smooth);
                };
                let slip = sign(input.speed - load_speed);
                if capacity == 0.0 {
                    *self = ClutchMode::Slipping { direction: slip };
                    return None;
                }
                let reversed = direction != 0.0 && slip == -direction;
                let no_slip = direction == 0.0 && slip == 0.0;
                if reversed || no_slip {
                    // The slip reversed within the last substep (or there is none): lock at the
                    // common speed. If the capacity cannot hold, the next round slips again in
                    // the direction of the torque.
                    *self = ClutchMode::Locked;
                    ModeChange::Impulsive
                } else if direction == 0.0 {
                    *self = ClutchMode::Slipping { direction: slip };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
        })
    }

    /// After a momentum pass sent `impulse` (N·m·s) through a locked coupling of `capacity`
    /// (N·m): whether it had to slip instead, because more than `capacity × substep` was asked.
    pub(crate) fn limit_impulse(&mut self, capacity: f64, impulse: f64, substep: f64) -> bool {
        if *self == ClutchMode::Locked && impulse.abs() > capacity * substep {
            *self = ClutchMode::Slipping {
                direction: sign(impulse),
            };
            return true;
        }
        false
    }
}

/// Runtime state of a [`Clutch`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClutchRuntime {
    /// Lock mode.
    pub mode: ClutchMode,
    /// Capacity latched for the substep (N·m).
    pub capacity: f64,
}

/// What a [`Clutch`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct ClutchSensors {
    /// Torque transmitted from the engine side to the load side (N·m).
    pub torque: f64,
    /// Current capacity (N·m).
    pub capacity: f64,
    /// Slip speed `ω_A − ω_B` (rad/s); 0 when locked.
    pub slip_speed: f64,
    /// Whether the clutch is locked.
    pub locked: bool,
}

impl Clutch {
    /// Torque capacity (N·m) with the input side turning at `input_speed` (rad/s).
    #[inline]
    pub fn capacity(&self, input_speed: f64) -> f64 {
        let automatic = self.automatic.map_or(1.0, |a| a.engagement(input_speed));
        self.max_torque * clamp_input(self.engagement, 0.0, 1.0, 0.0) * automatic
    }

    /// [`Block::update_modes`] with `input` what came down the input shaft and `load` what the
    /// output shaft sent up: for one vehicle, or for a lane of the batched step.
    #[inline(always)]
    pub(crate) fn update_mode(
        &self,
        rt: &mut ClutchRuntime,
        input: ShaftDown,
        load: ShaftUp,
    ) -> ModeChange {
        let mut capacity_change = ModeChange::Unchanged;
        if self.automatic.is_some() {
            let capacity = self.capacity(input.speed);
            if capacity != rt.capacity {
                rt.capacity = capacity;
                // A locked clutch's stage functions do not read the capacity: only the
                // lock/slip check below does, so the stage need not be evaluated again.
                if rt.mode != ClutchMode::Locked {
                    capacity_change = ModeChange::Smooth;
                }
            }
        }
        match rt.mode.update(rt.capacity, input, load) {
            Some(change) => change.max(capacity_change),
            // An open clutch only tracks the slip direction.
            None => ModeChange::Unchanged,
        }
    }
}

impl Block for Clutch {
    const TYPE_NAME: &'static str = "Clutch";
    type Runtime = ClutchRuntime;
    type Sensors = ClutchSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(engagement);

    /// Engagement is the clutch pedal's complement.
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        set_if_changed(&mut self.engagement, 1.0 - controls.clutch())
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_non_negative("max_torque", self.max_torque)?;
        check_finite("engagement", self.engagement)?;
        if let Some(a) = self.automatic {
            check_non_negative("automatic.engage_rpm", a.engage_rpm)?;
            check_finite("automatic.lock_rpm", a.lock_rpm)?;
            if a.lock_rpm <= a.engage_rpm {
                return Err(SettingError::new(
                    "automatic.lock_rpm",
                    format!(
                        "must be above engage_rpm ({} rpm), got {} rpm",
                        a.engage_rpm, a.lock_rpm
                    ),
                ));
            }
        }
        Ok(())
    }

    fn begin_step(&self, rt: &mut ClutchRuntime, _: &mut [f64], _: &StepContext) -> ModeChange {
        // Without an automatic part the capacity depends only on the pedal; with one, it is
        // latched again from the engine speed at every substep (`update_modes`).
        if self.automatic.is_none() {
            rt.capacity = self.capacity(0.0);
        }
        ModeChange::Unchanged
    }

    #[inline]
    fn upstream(
        &self,
        rt: &ClutchRuntime,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _derivative: &mut [f64],
    ) -> ShaftUp {
        match (rt.mode, stage.pass) {
            (ClutchMode::Locked, _) => outputs[0].up,
            (ClutchMode::Slipping { direction }, Pass::Torque) => ShaftUp {
                reaction: -direction * rt.capacity,
                ..ShaftUp::FREE
            },
            (ClutchMode::Slipping { .. }, Pass::Momentum) => ShaftUp::FREE,
        }
    }

    #[inline]
    fn downstream(
        &self,
        rt: &ClutchRuntime,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        outputs[0].down = match (rt.mode, stage.pass) {
            (ClutchMode::Locked, _) => input,
            (ClutchMode::Slipping { direction }, pass) => ShaftDown {
                torque: if pass == Pass::Torque {
                    direction * rt.capacity
                } else {
                    0.0
                },
                speed: outputs[0].up.speed().unwrap_or(input.speed),
            },
        };
    }

    #[inline]
    fn update_modes(&self, rt: &mut ClutchRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        let Some(&Shaft { down: input, .. }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        self.update_mode(rt, input, shafts.outputs[0].up)
    }

    /// A locked clutch carries at most `capacity·substep` of angular impulse; more (a gear
    /// engaged at a speed mismatch) makes it slip in the impulse's direction.
    fn limit_impulse(&self, rt: &mut ClutchRuntime, shafts: &Shafts, substep: f64) -> bool {
        let Some(input) = shafts.input else {
            return false;
        };
        rt.mode
            .limit_impulse(rt.capacity, input.down.torque, substep)
    }

    fn sensors(&self, rt: &ClutchRuntime, _: &[f64], shafts: &Shafts) -> ClutchSensors {
        let input = Shaft::down_of(shafts.input);
        let locked = rt.mode == ClutchMode::Locked;
        ClutchSensors {
            torque: shafts.outputs[0].down.torque,
            capacity: rt.capacity,
            slip_speed: if locked {
                0.0
            } else {
                input.speed - shafts.outputs[0].up.speed().unwrap_or(input.speed)
            },
            locked,
        }
    }
}
