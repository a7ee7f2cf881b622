//! Manual gearbox: reverse, neutral and forward ratios, a lever clamped to gears that exist, a
//! shift time spent in neutral, and an efficiency that acts against the power flow.

use bevy::prelude::*;

use crate::batch::Num;
use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_fraction,
    check_non_negative, check_positive, count_down,
};
use crate::controls::{VehicleControls, set_if_changed};
use crate::shaft::{Shaft, ShaftDown, ShaftUp};

/// Power flowing through a lossy gear, latched once per substep (the torque gain depends on it).
///
/// Efficiency `η` multiplies torque going *with* the power: driving, the output gets `r·η·T`;
/// on overrun (the load drives the engine) it gets `r·T/η`, so that in both directions the
/// power out is `η ×` the power in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PowerFlow {
    /// Power flows from input to output (the engine drives).
    #[default]
    Driving,
    /// Power flows from output to input (engine braking, coasting in gear).
    Overrun,
}

impl PowerFlow {
    /// Torque gain of a gear of kinematic ratio `ratio` and efficiency `efficiency`.
    #[inline]
    pub fn gain(self, ratio: f64, efficiency: f64) -> f64 {
        match self {
            PowerFlow::Driving => ratio * efficiency,
            PowerFlow::Overrun => ratio / efficiency,
        }
    }

    /// The flow implied by the power `torque × speed` at a block's input, or `self` when that
    /// power is 0. Returns the new flow and whether it changed.
    #[inline]
    pub fn update(self, input: ShaftDown) -> (PowerFlow, ModeChange) {
        let power = input.torque * input.speed;
        let new = if power > 0.0 {
            PowerFlow::Driving
        } else if power < 0.0 {
            PowerFlow::Overrun
        } else {
            self
        };
        let change = if new == self {
            ModeChange::Unchanged
        } else {
            ModeChange::Smooth
        };
        (new, change)
    }

    /// Latches the flow implied by `input` ([`PowerFlow::update`]); returns whether it
    /// changed.
    #[inline]
    pub fn latch(&mut self, input: ShaftDown) -> ModeChange {
        let change;
        (*self, change) = self.update(input);
        change
    }
}

/// A manual gearbox.
///
/// The lever (`gear`) selects reverse (`< 0`), neutral (`0`) or a forward gear (`> 0`) and is
/// clamped to the gears that exist. Changing gear spends `shift_time` in neutral (rounded to
/// the nearest drivetrain substep, [`wait_over`](crate::wait_over)), then engages the new
/// gear; engaging forces the two sides to a common speed while conserving angular momentum, as
/// a synchroniser would. In neutral the input drives nothing and the output turns freely.
///
/// No state; no inertia. Ports: `out`.
#[derive(Component, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gearbox {
    /// Forward ratios, first gear first: input speed / output speed (dimensionless, > 0).
    pub forward_ratios: Vec<f64>,
    /// Reverse ratios, first reverse first: input speed / output speed as positive numbers
    /// (dimensionless, each > 0; may be empty). Reverse gears turn the output backward.
    pub reverse_ratios: Vec<f64>,
    /// Time spent in neutral when changing gear (s, ≥ 0).
    pub shift_time: f64,
    /// Efficiency (dimensionless, (0, 1]).
    pub efficiency: f64,
    /// Input: the gear lever; `-1` is first reverse, `0` neutral, `1` first gear. Clamped to
    /// `[-reverse_ratios.len(), forward_ratios.len()]`.
    #[serde(skip)]
    pub gear: i32,
}

impl Clone for Gearbox {
    fn clone(&self) -> Self {
        let mut g = Gearbox {
            forward_ratios: Vec::new(),
            reverse_ratios: Vec::new(),
            ..*self
        };
        g.clone_from(self);
        g
    }

    /// Reuses the ratio tables' allocations: blocks are cloned into the solver whenever an
    /// input (the lever) changes.
    fn clone_from(&mut self, source: &Self) {
        self.forward_ratios.clone_from(&source.forward_ratios);
        self.reverse_ratios.clone_from(&source.reverse_ratios);
        self.shift_time = source.shift_time;
        self.efficiency = source.efficiency;
        self.gear = source.gear;
    }
}

impl Default for Gearbox {
    /// A six-speed car gearbox.
    fn default() -> Self {
        Gearbox {
            forward_ratios: vec![3.6, 2.1, 1.4, 1.0, 0.82, 0.68],
            reverse_ratios: vec![3.5],
            shift_time: 0.2,
            efficiency: 0.97,
            gear: 0,
        }
    }
}

/// Runtime state of a [`Gearbox`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GearboxRuntime {
    /// The gear actually engaged (0 while shifting).
    pub engaged: i32,
    /// The gear being shifted to.
    pub target: i32,
    /// Time left before `target` engages (s).
    pub shift_timer: f64,
    /// Latched power flow.
    pub flow: PowerFlow,
    /// Kinematic ratio of the engaged gear (0 in neutral), resolved from the settings.
    pub ratio: f64,
    /// Torque gain of the engaged gear for the latched power flow.
    pub gain: f64,
    /// `1 / ratio` (0 in neutral).
    pub inv_ratio: f64,
    /// `1 / gain` (0 in neutral).
    pub inv_gain: f64,
}

impl GearboxRuntime {
    /// Resolves ratio and gain from the engaged gear, flow and settings.
    fn resolve(&mut self, gearbox: &Gearbox) {
        self.ratio = gearbox.ratio(self.engaged);
        self.gain = self.flow.gain(self.ratio, gearbox.efficiency);
        (self.inv_ratio, self.inv_gain) = if self.engaged == 0 {
            (0.0, 0.0)
        } else {
            (1.0 / self.ratio, 1.0 / self.gain)
        };
    }
}

/// What a [`Gearbox`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct GearboxSensors {
    /// Engaged gear (0 in neutral and while shifting).
    pub gear: i32,
    /// Gear the lever selects (after clamping).
    pub selected: i32,
    /// Engaged ratio (0 in neutral).
    pub ratio: f64,
    /// Whether a shift is in progress.
    pub shifting: bool,
    /// Input shaft speed (rad/s).
    pub input_speed: f64,
    /// Output shaft speed (rad/s).
    pub output_speed: f64,
    /// Torque into the output shaft (N·m).
    pub output_torque: f64,
}

impl Gearbox {
    /// What an engaged gear hands down, `[Td, ω]`, from its input's drive torque (N·m) and
    /// speed (rad/s), its torque gain `gain` and reciprocal ratio `inv_ratio`: the
    /// [`Block::downstream`] of an engaged gearbox, for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn driven<T: Num>(torque: T, speed: T, gain: T, inv_ratio: T) -> [T; 2] {
        [torque * gain, speed * inv_ratio]
    }

    /// The lever position clamped to gears that exist.
    pub fn clamped_gear(&self, gear: i32) -> i32 {
        gear.clamp(
            -(self.reverse_ratios.len() as i32),
            self.forward_ratios.len() as i32,
        )
    }

    /// Kinematic ratio of `gear` (input/output speed, negative in reverse, 0 in neutral).
    #[inline]
    pub fn ratio(&self, gear: i32) -> f64 {
        match gear {
            0 => 0.0,
            g if g > 0 => self.forward_ratios[(g - 1) as usize],
            g => -self.reverse_ratios[(-g - 1) as usize],
        }
    }

    /// [`Block::update_modes`] with `input` what came down the input shaft: for one vehicle,
    /// or for a lane of the batched step.
    #[inline(always)]
    pub(crate) fn update_mode(&self, rt: &mut GearboxRuntime, input: ShaftDown) -> ModeChange {
        if self.efficiency == 1.0 || rt.engaged == 0 {
            return ModeChange::Unchanged;
        }
        let change = rt.flow.latch(input);
        if change != ModeChange::Unchanged {
            rt.resolve(self);
        }
        change
    }
}

/// Checks a gear ratio table, for every block with one: at least one forward ratio, and every
/// ratio finite and `> 0` (`forward_ratios[i]` / `reverse_ratios[i]` name the bad one).
pub(crate) fn check_ratio_tables(forward: &[f64], reverse: &[f64]) -> Result<(), SettingError> {
    if forward.is_empty() {
        return Err(SettingError::new(
            "forward_ratios",
            "needs at least one forward gear",
        ));
    }
    // Field paths are only formatted when something is wrong.
    for (i, &r) in forward.iter().enumerate() {
        if !(r.is_finite() && r > 0.0) {
            check_positive(&format!("forward_ratios[{i}]"), r)?;
        }
    }
    for (i, &r) in reverse.iter().enumerate() {
        if !(r.is_finite() && r > 0.0) {
            check_positive(&format!("reverse_ratios[{i}]"), r)?;
        }
    }
    Ok(())
}

impl Block for Gearbox {
    const TYPE_NAME: &'static str = "Gearbox";
    /// Its reverse gears turn the drive round: a motor ahead of it takes the throttle unsigned.
    const SELECTS_DIRECTION: bool = true;
    type Runtime = GearboxRuntime;
    type Sensors = GearboxSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(gear);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        set_if_changed(&mut self.gear, controls.gear)
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_ratio_tables(&self.forward_ratios, &self.reverse_ratios)?;
        check_non_negative("shift_time", self.shift_time)?;
        check_fraction("efficiency", self.efficiency)?;
        Ok(())
    }

    fn settings_changed(&self, rt: &mut GearboxRuntime) {
        // A settings change may have removed the engaged gear.
        rt.engaged = self.clamped_gear(rt.engaged);
        rt.resolve(self);
    }

    fn init(&self, rt: &mut GearboxRuntime, _: &mut [f64]) {
        rt.engaged = self.clamped_gear(self.gear);
        rt.target = rt.engaged;
        rt.resolve(self);
    }

    fn begin_step(&self, rt: &mut GearboxRuntime, _: &mut [f64], _: &StepContext) -> ModeChange {
        let selected = self.clamped_gear(self.gear);
        let mut change = ModeChange::Unchanged;
        if selected != rt.target {
            rt.target = selected;
            rt.shift_timer = self.shift_time;
            if rt.engaged != 0 {
                rt.engaged = 0;
                // The ratio and gain follow the engaged gear (and the flow, and the settings:
                // each change of them resolves them again), so only a change here reads the
                // ratio tables, which with thousands of vehicles are rarely in cache.
                rt.resolve(self);
                change = ModeChange::Smooth;
            }
        }
        // The new gear engages in `begin_substep`.
        change
    }

    /// A shift under way engages its gear at the start of the substep nearest to its end
    /// ([`wait_over`](crate::wait_over)), so that it spends `shift_time` in neutral to within half
    /// a substep at any fixed-step rate. (Engaging at a fixed step's start rounded the time to
    /// whole fixed steps: a 0.25 s shift took 0.267 s at 30 Hz, and a 0.3 s one 0.267 s at 15 Hz.
    /// Before that, the step that began a shift was counted down before it ran, and every shift
    /// engaged one step early: 0.2 s in neutral at 15 Hz for 0.3 s, 0.29 s at 120 Hz.)
    fn begin_substep(&self, rt: &mut GearboxRuntime, _: &mut [f64], substep: f64) -> ModeChange {
        if rt.engaged == rt.target {
            return ModeChange::Unchanged;
        }
        if !count_down(&mut rt.shift_timer, substep) {
            // This substep is spent in neutral.
            return ModeChange::Unchanged;
        }
        rt.engaged = rt.target;
        rt.resolve(self);
        ModeChange::Impulsive
    }

    #[inline]
    fn upstream(
        &self,
        rt: &GearboxRuntime,
        _: &[f64],
        _: &StageContext,
        outputs: &[Shaft],
        _derivative: &mut [f64],
    ) -> ShaftUp {
        if rt.engaged == 0 {
            return ShaftUp::FREE;
        }
        outputs[0].up.reflect_inv(rt.inv_ratio, rt.inv_gain)
    }

    #[inline]
    fn downstream(
        &self,
        rt: &GearboxRuntime,
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        outputs[0].down = if rt.engaged == 0 {
            ShaftDown {
                torque: 0.0,
                speed: outputs[0].up.speed().unwrap_or(0.0),
            }
        } else {
            let [torque, speed] = Gearbox::driven(input.torque, input.speed, rt.gain, rt.inv_ratio);
            ShaftDown { torque, speed }
        };
    }

    #[inline]
    fn update_modes(&self, rt: &mut GearboxRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        match shafts.input {
            Some(input) => self.update_mode(rt, input.down),
            None => ModeChange::Unchanged,
        }
    }

    fn sensors(&self, rt: &GearboxRuntime, _: &[f64], shafts: &Shafts) -> GearboxSensors {
        let input = Shaft::down_of(shafts.input);
        let out = shafts.outputs[0].down;
        GearboxSensors {
            gear: rt.engaged,
            selected: rt.target,
            ratio: rt.ratio,
            shifting: rt.engaged != rt.target,
            input_speed: input.speed,
            output_speed: shafts.outputs[0].up.speed().unwrap_or(out.speed),
            output_torque: out.torque,
        }
    }
}
