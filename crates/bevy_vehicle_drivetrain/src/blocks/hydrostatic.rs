//! Hydrostatic drive: a variable-displacement pump and a motor, working as one drive whose
//! speed ratio is set by a lever and whose torque is capped by a relief valve.

use bevy::prelude::*;

use super::clutch::ClutchMode;
use crate::block::{
    Block, DrivePath, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext,
    check_non_negative, check_positive, clamp_input,
};
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::rad_s_to_rpm;
use crate::shaft::{Pass, Shaft, ShaftDown, ShaftUp};

/// Speed ratios below this magnitude (dimensionless) count as zero displacement: the motor is
/// hydraulically locked and the pump turns freely.
const MIN_RATIO: f64 = 1e-9;

/// How far (relative, or rad/s below 1 rad/s) the output held by the counterbalance valves
/// may drift from the pump's flow before it is brought back to it (see
/// [`Hydrostatic::counterbalance`]): the engine's speed changes within a substep.
const VALVE_SPEED_TOLERANCE: f64 = 1e-6;

/// A hydrostatic pump and motor pair, driving a track or a wheel.
///
/// With `k = ratio × ratio_scale`, the output turns at `ω_out = k · ω_in` while the oil
/// pressure stays below the relief valve's, and the motor's torque is then whatever the load
/// needs; a lossless circuit passes power through, so the pump takes `T_in = k · T_out`.
/// The output torque is capped at the relief torque, `max_torque` (or less under the pump
/// torque limit below): past it the relief valve opens, the output slips against the pump with
/// `|T_out|` at the relief torque, and the pump still takes `k ×` that (the dumped flow is the
/// relief's heat).
///
/// The two modes are those of a friction coupling between the pump's speed referred to the
/// output (`k · ω_in`) and the output's: **locked** (rigid at ratio `k`: the input sees the
/// load's inertia `k²·I` and torque `k·T`) and **relieving** (the output gets ± the relief
/// torque, in the direction of `k·ω_in − ω_out`), switched once per substep, never in a stage
/// (see [`Clutch`](crate::blocks::Clutch)). At zero displacement (`k = 0`) the locked motor
/// holds its output still, up to `max_torque`, and the pump turns freely. A change of `ratio`
/// between steps is a momentum jump to the new ratio, relieving if it asks for more than the
/// relief torque over the substep.
///
/// **Pump torque limit.** A pump whose relief torque referred to its input, `|k|·max_torque`,
/// exceeds what its engine gives stalls the engine whenever the valve opens: a lever slammed
/// forward from rest does that, and whether the engine recovers then hangs on fine details of
/// the launch. Mobile machines prevent it with a torque (power) limiter on the pump. With
/// `max_input_torque = Some(T_lim)` the drive holds its ratio up to an output torque of
/// `min(max_torque, T_lim/|k|)` (the relief torque in effect, which decides the mode), and
/// past it the pump destrokes under the load: relieving, the output gets
/// `min(max_torque, T_lim/|k'|)` with `k'` the output's speed over the input's at the substep's
/// start (at most `|k|`, the sign of `k`), and the pump takes `k'` times that, at most `T_lim`.
/// So the pump never takes more than `T_lim` from its input, and the output's torque rises
/// toward the relief's as it slows (a power limit): a tracked vehicle counter-rotates its
/// tracks on full relief torque. (Until 2026-11-29 the output torque stayed at `T_lim/|k|` at
/// every speed: at full lever the shipped excavator's tracks pulled 39 kN each, where a pivot
/// needs about 34 kN plus rolling, and it turned a quarter as fast as it turns now in a
/// tenth.)
///
/// **Anti-stall.** A torque limit set for the engine's governed speed still asks more than
/// the engine gives at idle (the shipped excavator's two pumps take 640 N·m where its diesel
/// gives about 490 at 900 rpm: a pivot turn at idle stalled it, and so did a full-throttle
/// start up a 30 % grade). With `anti_stall: Some(AntiStall { start_rpm, full_rpm })` the
/// drive's torque at the pump, the relief torque in effect and the destroked one alike, is
/// scaled by `(n − start_rpm)/(full_rpm − start_rpm)` (within 0..1, at the pump's input speed
/// `n` read at each substep's start), as a speed-sensing pump control strokes its pump with
/// the engine's speed: a loaded engine then lugs to where it gives what the pumps take
/// instead of stalling, and the tracks pull less. Set the line from `start_rpm` to
/// `full_rpm` below the engine's full-load curve, or a full-throttle start settles on the
/// line instead of climbing to the governed speed. Below `start_rpm` (an engine stopped or
/// cranking) the pump is at zero displacement: the drive holds its output as at `ratio` 0, up
/// to `max_torque`, and takes nothing from its engine.
///
/// **Counterbalance valves.** A load that overruns the motor (a grade driving a tracked
/// machine down, faster than the pump's flow would turn it) drives the motor as a pump, and
/// the oil it pushes turns the pump as a motor: the engine is driven, and on a steep grade
/// past its limit (a 20 t excavator 30 % down at lever 0.8 took its diesel to 1.7 times its
/// governed speed and on up). Mobile machines fit counterbalance (overcentre) valves in the
/// motor's lines, which throttle the oil leaving an overrunning motor so that it turns no
/// faster than the pump's flow lets it: the load's power goes to heat in the valves, not
/// back to the engine. With `counterbalance: true`, a locked drive whose output the load
/// drives (the drive's torque against the output's turn) holds its output at `k·ω_in`
/// with whatever torque that takes, up to `max_torque`, and hands nothing to its input;
/// it lets go once the load needs driving again.
///
/// No state; no inertia (lump the pump's into its input shaft, the motor's into its
/// output). Ports: `out`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Hydrostatic {
    /// Output speed per input speed at full displacement, `ratio = 1` (dimensionless, > 0):
    /// the pump's over the motor's displacement.
    pub ratio_scale: f64,
    /// Relief torque at the output (N·m, ≥ 0).
    pub max_torque: f64,
    /// Torque limit of the pump at its input (N·m, ≥ 0), or `None` for no limit: the relief
    /// torque in effect is `min(max_torque, max_input_torque / |k|)`. Set the limits of the
    /// drives one engine turns so that together they stay within its torque at its working
    /// speeds: under a full load it then lugs down instead of stalling.
    pub max_input_torque: Option<f64>,
    /// The speed-sensing control that strokes the pump with its input speed (see
    /// *Anti-stall* above), or `None` for none.
    pub anti_stall: Option<AntiStall>,
    /// Whether the motor has counterbalance valves, which hold an overrunning load at the
    /// pump's flow instead of letting it drive the pump and its engine (see *Counterbalance
    /// valves* above).
    pub counterbalance: bool,
    /// How the driver's controls set the displacement lever: not at all (game code sets
    /// `ratio`), or as one side of a skid-steered tracked vehicle.
    pub lever: TrackLever,
    /// Input: displacement lever, −1 (full reverse) to 1 (full forward); 0 holds the output.
    /// Clamped.
    #[serde(skip)]
    pub ratio: f64,
}

impl Default for Hydrostatic {
    /// A track drive: the motor turns at up to 0.4 × the pump's speed, relief at 20 kN·m,
    /// lever at zero (holding).
    fn default() -> Self {
        Hydrostatic {
            ratio_scale: 0.4,
            max_torque: 20_000.0,
            max_input_torque: None,
            anti_stall: None,
            counterbalance: false,
            lever: TrackLever::Manual,
            ratio: 0.0,
        }
    }
}

/// A [`Hydrostatic`] pump's speed-sensing (anti-stall) control: the share of the drive's
/// torque it allows rises linearly with the pump's input speed from none at `start_rpm` to
/// all at `full_rpm`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AntiStall {
    /// Pump input speed below which the pump is at zero displacement and the drive holds its
    /// output (rpm, ≥ 0).
    pub start_rpm: f64,
    /// Pump input speed from which the drive has its whole torque (rpm, above `start_rpm`).
    pub full_rpm: f64,
}

/// Which lever of a skid-steered vehicle a [`Hydrostatic`] drive follows.
///
/// With throttle `t` (signed by the selected gear's direction: 0 in neutral) and steering `s`
/// (positive right), the left track's drive takes `clamp(t + s, −1, 1)` and the right's
/// `clamp(t − s, −1, 1)`: steering right speeds the left track and slows the right, and
/// steering in neutral turns the vehicle on the spot (a pivot turn).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TrackLever {
    /// The driver's controls leave `ratio` alone; game code sets it.
    #[default]
    Manual,
    /// The left track's drive.
    Left,
    /// The right track's drive.
    Right,
}

/// Runtime state of a [`Hydrostatic`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HydrostaticRuntime {
    /// Locked, or relieving (the coupling's slip mode, referred to the output).
    pub mode: ClutchMode,
    /// Speed ratio in effect this step, `ratio × ratio_scale` (dimensionless).
    pub k: f64,
    /// Relief torque in effect this step at the output (N·m, ≥ 0): `max_torque`, or less
    /// under the pump's torque limit at this ratio.
    pub relief_torque: f64,
    /// Speed ratio the pump is destroked to while its torque limit holds the output below
    /// `k` (dimensionless, the sign of `k`, `|k_limited| ≤ |k|`): the output's speed over the
    /// input's at the substep's start; `k` otherwise.
    pub k_limited: f64,
    /// Output torque while relieving (N·m, ≥ 0): [`Hydrostatic::relief_torque_at`]
    /// `k_limited`, kept for the stages. At least `relief_torque`, which decides whether the
    /// drive holds its ratio. Both are less the anti-stall's share.
    pub limited_torque: f64,
    /// Share of the drive's torque its anti-stall control takes away this substep
    /// (dimensionless, 0..1; 0 without one; 1, holding, below its start speed).
    pub anti_stall_cut: f64,
    /// Whether the counterbalance valves hold an overrunning load at the pump's flow this
    /// substep (the drive locked, its input taking nothing from the load).
    pub overrunning: bool,
}

/// What a [`Hydrostatic`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct HydrostaticSensors {
    /// Speed ratio in effect (dimensionless): the lever's, `ratio × ratio_scale`, while the
    /// drive holds it (`ω_out / ω_in`); while it slips, the ratio its pump is destroked to
    /// ([`HydrostaticRuntime::k_limited`]: the output's speed over the input's under a torque
    /// limiter, the lever's otherwise).
    pub speed_ratio: f64,
    /// Torque the pump takes from its input shaft (N·m).
    pub input_torque: f64,
    /// Torque the motor gives its output shaft (N·m).
    pub output_torque: f64,
    /// Slip at the output, `k·ω_in − ω_out` (rad/s); 0 when locked.
    pub slip_speed: f64,
    /// Whether the drive slips against its pump: its relief valve open, or its pump
    /// destroked by its torque limiter or anti-stall (see `pump_limited`).
    pub relieving: bool,
    /// Whether what holds the drive's torque down is its pump's torque limiter or anti-stall
    /// (the relief torque in effect below `max_torque`), not the relief valve itself.
    pub pump_limited: bool,
    /// Whether the counterbalance valves hold an overrunning load (see
    /// [`Hydrostatic::counterbalance`]): the output then turns at the pump's flow and the
    /// pump takes no torque.
    pub overrunning: bool,
}

impl HydrostaticRuntime {
    /// Whether the drive holds its output still: the lever at zero displacement, or the pump
    /// stopped under an anti-stall control, which then gives it none.
    fn holding(&self) -> bool {
        self.k.abs() < MIN_RATIO || self.anti_stall_cut >= 1.0
    }

    /// Whether the counterbalance valves hold the output at the pump's flow.
    fn held_by_valves(&self) -> bool {
        self.overrunning && self.mode == ClutchMode::Locked && !self.holding()
    }
}

impl Hydrostatic {
    /// The relief torque at the output (N·m) at speed ratio `k`: `max_torque`, capped by the
    /// pump's torque limit referred to the output.
    pub fn relief_torque_at(&self, k: f64) -> f64 {
        match self.max_input_torque {
            Some(limit) if k.abs() >= MIN_RATIO => self.max_torque.min(limit / k.abs()),
            _ => self.max_torque,
        }
    }

    /// [`Hydrostatic::relief_torque_at`] less the anti-stall's share `cut` (0..1); a holding
    /// drive (`k` 0, or the whole share cut: a stopped pump) holds up to `max_torque`.
    fn relief_in_effect(&self, k: f64, cut: f64) -> f64 {
        if k.abs() < MIN_RATIO || cut >= 1.0 {
            self.max_torque
        } else {
            self.relief_torque_at(k) * (1.0 - cut)
        }
    }

    /// The torque the locked drive carries before it slips (N·m, at the output): the relief
    /// torque in effect, or, while the counterbalance valves hold an overrunning load, the
    /// relief torque of the motor's lines, `max_torque` (the pump's limits take no part).
    fn capacity(&self, rt: &HydrostaticRuntime) -> f64 {
        if rt.held_by_valves() {
            self.max_torque
        } else {
            rt.relief_torque
        }
    }

    /// The counterbalance valves' part of [`Block::update_modes`] for a drive whose coupling
    /// `through` (the torque through it and the pump's speed, referred to the output) meets
    /// the output shaft `output`: they take an overrunning load (the drive's torque against
    /// the pump's turn) and let it go once the load needs driving again, and a load they
    /// hold is brought back to the pump's flow when the engine's speed has moved it off.
    fn update_valves(
        &self,
        rt: &mut HydrostaticRuntime,
        through: ShaftDown,
        output: &Shaft,
    ) -> ModeChange {
        // A held output (a gripping brake) has no speed to keep to the pump's flow.
        if !self.counterbalance
            || rt.mode != ClutchMode::Locked
            || rt.holding()
            || output.up.is_held()
        {
            return if core::mem::take(&mut rt.overrunning) {
                ModeChange::Impulsive
            } else {
                ModeChange::Unchanged
            };
        }
        let pump = through.speed;
        if !rt.overrunning {
            if through.torque * pump < 0.0 {
                rt.overrunning = true;
                return ModeChange::Smooth;
            }
            return ModeChange::Unchanged;
        }
        // What holding the output's speed takes (N·m): driving it, the load is no longer
        // overrunning.
        if -output.up.reaction * pump > 0.0 {
            rt.overrunning = false;
            return ModeChange::Impulsive;
        }
        let speed = output.up.speed().unwrap_or(pump);
        if (speed - pump).abs() > VALVE_SPEED_TOLERANCE * pump.abs().max(1.0) {
            ModeChange::Impulsive
        } else {
            ModeChange::Unchanged
        }
    }

    /// Share of the drive's torque the anti-stall control takes away at pump input speed
    /// `speed` (rad/s): `(full − n)/(full − start)` within 0..1 at `n = |speed|` in rpm, 0
    /// without one.
    pub fn anti_stall_cut(&self, speed: f64) -> f64 {
        match self.anti_stall {
            Some(AntiStall {
                start_rpm,
                full_rpm,
            }) => ((full_rpm - rad_s_to_rpm(speed.abs())) / (full_rpm - start_rpm)).clamp(0.0, 1.0),
            None => 0.0,
        }
    }
}

impl Block for Hydrostatic {
    const TYPE_NAME: &'static str = "Hydrostatic";
    type Runtime = HydrostaticRuntime;
    type Sensors = HydrostaticSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }

    take_inputs_fields!(ratio);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        self.apply_controls_on(controls, DrivePath::default())
    }

    /// The levers from the throttle signed by the selected gear's direction, unless a gearbox
    /// between the drive and the wheels turns the drive round already
    /// ([`DrivePath::through_direction_selector`]; the throttle then counts forward, 0 in
    /// neutral, as [`Motor::command_on`](super::Motor::command_on) takes it).
    fn apply_controls_on(&mut self, controls: &VehicleControls, path: DrivePath) -> bool {
        let direction = if path.through_direction_selector {
            controls.direction().abs()
        } else {
            controls.direction()
        };
        let (throttle, steering) = (controls.throttle() * direction, controls.steering());
        let ratio = match self.lever {
            TrackLever::Manual => return false,
            TrackLever::Left => (throttle + steering).clamp(-1.0, 1.0),
            TrackLever::Right => (throttle - steering).clamp(-1.0, 1.0),
        };
        set_if_changed(&mut self.ratio, ratio)
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("ratio_scale", self.ratio_scale)?;
        check_non_negative("max_torque", self.max_torque)?;
        if let Some(limit) = self.max_input_torque {
            check_non_negative("max_input_torque", limit)?;
        }
        if let Some(AntiStall {
            start_rpm,
            full_rpm,
        }) = self.anti_stall
        {
            check_non_negative("anti_stall.start_rpm", start_rpm)?;
            check_positive("anti_stall.full_rpm", full_rpm)?;
            if full_rpm <= start_rpm {
                return Err(SettingError::new(
                    "anti_stall.full_rpm",
                    format!(
                        "must be above anti_stall.start_rpm ({start_rpm} rpm), got {full_rpm} rpm"
                    ),
                ));
            }
        }
        crate::block::check_finite("ratio", self.ratio)
    }

    fn begin_step(
        &self,
        rt: &mut HydrostaticRuntime,
        _: &mut [f64],
        _: &StepContext,
    ) -> ModeChange {
        let k = clamp_input(self.ratio, -1.0, 1.0, 0.0) * self.ratio_scale;
        rt.relief_torque = self.relief_in_effect(k, rt.anti_stall_cut);
        // The pump stays destroked as the last substep left it (`update_modes`), within the
        // lever's new ratio.
        let destroked = rt.k_limited * k > 0.0 && rt.k_limited.abs() < k.abs();
        if !(destroked && self.max_input_torque.is_some()) {
            rt.k_limited = k;
        }
        rt.limited_torque = self.relief_in_effect(rt.k_limited, rt.anti_stall_cut);
        if k == rt.k {
            return ModeChange::Unchanged;
        }
        rt.k = k;
        // A locked drive jumps to the new ratio.
        if rt.mode == ClutchMode::Locked {
            ModeChange::Impulsive
        } else {
            ModeChange::Smooth
        }
    }

    #[inline]
    fn upstream(
        &self,
        rt: &HydrostaticRuntime,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        match (rt.mode, stage.pass) {
            // The valves take what the overrunning load gives: the pump sees none of it.
            (ClutchMode::Locked, _) if rt.holding() || rt.held_by_valves() => ShaftUp::FREE,
            (ClutchMode::Locked, _) => {
                let up = outputs[0].up;
                ShaftUp {
                    momentum: up.momentum * rt.k,
                    inertia: up.inertia * rt.k * rt.k,
                    reaction: up.reaction * rt.k,
                }
            }
            (ClutchMode::Slipping { direction }, Pass::Torque) => ShaftUp {
                reaction: -direction * rt.limited_torque * rt.k_limited,
                ..ShaftUp::FREE
            },
            (ClutchMode::Slipping { .. }, Pass::Momentum) => ShaftUp::FREE,
        }
    }

    #[inline]
    fn downstream(
        &self,
        rt: &HydrostaticRuntime,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        let load = outputs[0].up;
        outputs[0].down = match rt.mode {
            // The motor holds: whatever keeps the output still (its momentum, in a momentum
            // pass), within the relief torque (`update_modes`).
            ClutchMode::Locked if rt.holding() => ShaftDown {
                torque: -load.reaction,
                speed: 0.0,
            },
            // The valves hold the output at the pump's flow: at its speed in a torque pass
            // (the engine's speed changes slowly against the load's; `update_modes` catches
            // up), and to it in a momentum pass.
            ClutchMode::Locked if rt.held_by_valves() => {
                let speed = input.speed * rt.k;
                ShaftDown {
                    torque: match stage.pass {
                        Pass::Torque => -load.reaction,
                        Pass::Momentum if load.is_held() => 0.0,
                        Pass::Momentum => load.inertia * speed - load.reaction,
                    },
                    speed,
                }
            }
            ClutchMode::Locked => ShaftDown {
                torque: input.torque / rt.k,
                speed: input.speed * rt.k,
            },
            ClutchMode::Slipping { direction } => ShaftDown {
                torque: if stage.pass == Pass::Torque {
                    direction * rt.limited_torque
                } else {
                    0.0
                },
                speed: load.speed().unwrap_or(input.speed * rt.k),
            },
        };
    }

    #[inline]
    fn update_modes(&self, rt: &mut HydrostaticRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        let Some(input) = shafts.input else {
            return ModeChange::Unchanged;
        };
        let output = shafts.outputs[0];
        let was_holding = rt.holding();
        rt.anti_stall_cut = self.anti_stall_cut(input.down.speed);
        rt.relief_torque = self.relief_in_effect(rt.k, rt.anti_stall_cut);
        // The torque limiter destrokes the pump to the output's speed: the relief torque in
        // effect rises as the output slows, up to `max_torque` (a power limit).
        rt.k_limited = rt.k;
        if let (Some(_), Some(out)) = (self.max_input_torque, output.up.speed())
            && !rt.holding()
            && input.down.speed.abs() > 1e-6
        {
            let ratio = (out / input.down.speed * rt.k.signum()).clamp(MIN_RATIO, rt.k.abs());
            rt.k_limited = ratio * rt.k.signum();
        }
        rt.limited_torque = self.relief_in_effect(rt.k_limited, rt.anti_stall_cut);
        // The coupling as the output sees it: the torque through it, and the pump's speed.
        let through = ShaftDown {
            torque: output.down.torque,
            speed: input.down.speed * rt.k,
        };
        let change = rt
            .mode
            .update(self.capacity(rt), through, output.up)
            .unwrap_or(ModeChange::Unchanged);
        // A locked drive whose pump stopped (or started) under its anti-stall jumps to holding
        // its output (or to turning it with the pump).
        if rt.holding() != was_holding && rt.mode == ClutchMode::Locked {
            rt.overrunning = false;
            return ModeChange::Impulsive;
        }
        change.max(self.update_valves(rt, through, &output))
    }

    /// The output takes at most `relief torque·substep` of angular impulse in a jump; more
    /// opens the relief valve. Held by the counterbalance valves, at most
    /// `max_torque·substep`.
    fn limit_impulse(&self, rt: &mut HydrostaticRuntime, shafts: &Shafts, substep: f64) -> bool {
        rt.mode
            .limit_impulse(self.capacity(rt), shafts.outputs[0].down.torque, substep)
    }

    fn sensors(&self, rt: &HydrostaticRuntime, _: &[f64], shafts: &Shafts) -> HydrostaticSensors {
        let input = Shaft::down_of(shafts.input);
        let output = shafts.outputs[0];
        let relieving = rt.mode != ClutchMode::Locked;
        let output_torque = output.down.torque;
        let slip_speed = if relieving {
            input.speed * rt.k - output.up.speed().unwrap_or(input.speed * rt.k)
        } else {
            0.0
        };
        let overrunning = rt.held_by_valves();
        let speed_ratio = if relieving { rt.k_limited } else { rt.k };
        HydrostaticSensors {
            speed_ratio,
            input_torque: if overrunning {
                0.0
            } else {
                speed_ratio * output_torque
            },
            output_torque,
            slip_speed,
            relieving,
            pump_limited: rt.relief_torque < self.max_torque,
            overrunning,
        }
    }
}
