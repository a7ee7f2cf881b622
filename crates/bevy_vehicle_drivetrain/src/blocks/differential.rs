//! Differential: open, torque-biased, limited-slip or locked; also serves as a centre
//! differential or transfer case between axles.

use bevy::prelude::*;

use crate::batch::Num;
use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, check_finite, check_fraction,
    check_non_negative, check_positive, check_range,
};
use crate::blocks::gearbox::PowerFlow;
use crate::shaft::{Pass, Reciprocal, Shaft, ShaftDown, ShaftUp, rigid_speed, sign};

/// A differential splitting its input between a `left` output (1) and a `right` output (2).
///
/// # Equations
///
/// With ratio `r`, torque bias `b` (the share of torque sent to `left`) and torque gain
/// `g = r·η` (driving) or `r/η` (overrun), an open differential gives
///
/// ```text
/// ω_in = r·(b·ω1 + (1 − b)·ω2)            (kinematics; r·(ω1 + ω2)/2 when b = ½)
/// T1 = b·g·T_in,   T2 = (1 − b)·g·T_in    (torque split)
/// ```
///
/// so the input sees the mobility `1/I_in = r·g·(b²/I1 + (1 − b)²/I2)`. With `b = ½` and no
/// losses this is `I_in = 4·I1·I2 / ((I1 + I2)·r²)`, the harmonic combination, which equals
/// `(I1 + I2)/r²` only when `I1 = I2`.
///
/// A **lock** couples the outputs so that `ω1 = k·ω2` (`k` = `lock_ratio`) through a torque
/// pair `−λ` on output 1 and `+k·λ` on output 2. While the `|λ|` needed to hold that relation
/// stays within `lock_torque`, the outputs turn together (**locked**) and the input sees their
/// combined inertia `(k²·I1 + I2)/r_e²` with `r_e = r·(b·k + 1 − b)`; once it is exceeded they
/// **slip** with `λ = lock_torque·sign(ω1 − k·ω2)`. Unequal output inertias are handled exactly:
/// the needed `λ` comes from the locked solution, not from an equal split. As with a clutch,
/// the mode is decided once per substep and locking conserves angular momentum.
///
/// `lock_torque = 0` is an open differential; the `locked` input locks it whatever the torque
/// (a driver-selectable diff lock or a spool). With `lock_ratio ≠ 1` a locked differential
/// drives its outputs at a fixed speed ratio, which is how a skid-steer drive turns.
///
/// A **viscous coupling** adds `λ_v = c·(ω1 − k·ω2)` to the slipping lock's torque pair
/// (`c` = `viscous_coupling`): a torque that grows with the slip, as a viscous coupling's
/// does, where a limited-slip lock's is the same at any slip. So a viscous centre
/// differential barely resists the front axle outrunning the rear at full lock in a car
/// park, and holds hard when one axle spins away. Within a substep `h` the coupling is held
/// to what brings the slip to zero, `c·h·(1/I1 + k²/I2) ≤ 1` (the outputs' inertias as they
/// report them), so that a strong one on light outputs settles the slip instead of reversing
/// it.
///
/// No state; no inertia. Ports: `left`, `right`.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Differential {
    /// Input speed / weighted output speed (final drive ratio; dimensionless, non-zero).
    pub ratio: f64,
    /// Share of the input torque sent to `left` (dimensionless, [0, 1]; 0.5 = even split).
    pub torque_bias: f64,
    /// Largest torque the limited-slip lock can carry between the outputs (N·m, ≥ 0; 0 = open).
    pub lock_torque: f64,
    /// Locked speed ratio `ω_left / ω_right` (dimensionless, > 0; 1 = equal speeds).
    pub lock_ratio: f64,
    /// Viscous coupling: the torque carried between the outputs per rad/s of their slip
    /// `ω_left − lock_ratio·ω_right` (N·m·s/rad, ≥ 0; 0 = none), on top of `lock_torque`.
    pub viscous_coupling: f64,
    /// Efficiency (dimensionless, (0, 1]).
    pub efficiency: f64,
    /// Lock the outputs together regardless of `lock_torque` (a setting in vehicle files; a
    /// game may also switch it at run time, like a driver-operated diff lock).
    pub locked: bool,
}

impl Default for Differential {
    /// An open differential with a 4.1 final drive.
    fn default() -> Self {
        Differential {
            ratio: 4.1,
            torque_bias: 0.5,
            lock_torque: 0.0,
            lock_ratio: 1.0,
            viscous_coupling: 0.0,
            efficiency: 1.0,
            locked: false,
        }
    }
}

/// The mode of a [`Differential`]'s lock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DifferentialMode {
    /// The outputs turn at `ω1 = k·ω2`.
    Locked,
    /// The outputs slip against each other; the lock torque opposes `direction = sign(ω1 − k·ω2)`
    /// (0 before any direction is known, or for an open differential).
    Slipping {
        /// Latched sign of `ω1 − k·ω2`.
        direction: f64,
    },
}

impl Default for DifferentialMode {
    fn default() -> Self {
        DifferentialMode::Slipping { direction: 0.0 }
    }
}

/// Runtime state of a [`Differential`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DifferentialRuntime {
    /// Lock mode.
    pub mode: DifferentialMode,
    /// Latched power flow.
    pub flow: PowerFlow,
    /// Torque gain `g` for the latched flow, derived from the settings.
    pub gain: f64,
    /// Locked: `1 / g_e` with `g_e = g·(b·k + 1 − b)`, the gain onto the right output's speed.
    pub(crate) inv_locked_gain: f64,
    /// Locked: `1 / (r_e·g_e)`, which turns the pair's inertia into the input's.
    pub(crate) inv_locked_ratio_gain: f64,
    /// Locked: the outputs' inertia on the right output's speed, `k²·I1 + I2` (kg·m²).
    pub(crate) locked_inertia: Reciprocal,
}

impl DifferentialRuntime {
    /// Derives the gains from the settings and the latched flow.
    fn resolve(&mut self, diff: &Differential) {
        self.gain = self.flow.gain(diff.ratio, diff.efficiency);
        let share = diff.torque_bias * diff.lock_ratio + 1.0 - diff.torque_bias;
        let locked_gain = self.gain * share;
        self.inv_locked_gain = 1.0 / locked_gain;
        self.inv_locked_ratio_gain = 1.0 / (diff.ratio * share * locked_gain);
    }
}

/// What a [`Differential`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct DifferentialSensors {
    /// Input shaft speed (rad/s).
    pub input_speed: f64,
    /// Torque into the input (N·m).
    pub input_torque: f64,
    /// `left` output speed (rad/s).
    pub left_speed: f64,
    /// Torque into the `left` output (N·m).
    pub left_torque: f64,
    /// `right` output speed (rad/s).
    pub right_speed: f64,
    /// Torque into the `right` output (N·m).
    pub right_torque: f64,
    /// Torque the lock and the viscous coupling carry between the outputs, `λ` (N·m).
    pub lock_torque: f64,
    /// Whether the outputs are locked together.
    pub locked: bool,
}

impl Differential {
    /// The two output speeds (rad/s) handed down with input speed `input` (rad/s): each output's
    /// own where it reports one, and for an output that turns freely (a slipping coupling
    /// behind it reports no inertia) the speed the differential's kinematics
    /// `ω_in = ratio·(b·ω_1 + (1 − b)·ω_2)` give it, so that what sits behind it sees the shaft
    /// turning as it does.
    fn output_speeds(&self, input: f64, o1: Option<f64>, o2: Option<f64>) -> (f64, f64) {
        let mean = input / self.ratio;
        let b = self.torque_bias;
        match (o1, o2) {
            (Some(a), Some(c)) => (a, c),
            (Some(a), None) if b < 1.0 => (a, (mean - b * a) / (1.0 - b)),
            (None, Some(c)) if b > 0.0 => ((mean - (1.0 - b) * c) / b, c),
            (a, c) => (a.unwrap_or(mean), c.unwrap_or(mean)),
        }
    }

    /// The torque `λ` the slipping outputs `o1`, `o2` carry between them in a stage of a
    /// substep `substep` (s) of pass `pass`: the limited-slip lock's `lock_torque` in the
    /// latched `direction`, and the viscous coupling's on the stage's slip (see
    /// [`Differential`]). None in a momentum pass.
    #[inline]
    fn slipping_torque(
        &self,
        pass: Pass,
        direction: f64,
        o1: &ShaftUp,
        o2: &ShaftUp,
        substep: f64,
    ) -> f64 {
        if pass == Pass::Momentum {
            return 0.0;
        }
        let lock = direction * self.lock_torque;
        if self.viscous_coupling == 0.0 {
            return lock;
        }
        let (Some(w1), Some(w2)) = (o1.speed(), o2.speed()) else {
            return lock;
        };
        let k = self.lock_ratio;
        let mobility = |o: &ShaftUp| if o.is_held() { 0.0 } else { o.mobility() };
        let relative = mobility(o1) + k * k * mobility(o2);
        let c = if relative * substep > 0.0 {
            self.viscous_coupling.min(1.0 / (relative * substep))
        } else {
            self.viscous_coupling
        };
        lock + c * (w1 - k * w2)
    }

    fn always_locked(&self) -> bool {
        self.locked
    }

    fn can_lock(&self) -> bool {
        self.locked || self.lock_torque > 0.0
    }

    /// Acceleration (speed, in a momentum pass) of output 2 when locked, for input torque `t`.
    /// Returns `None` when the locked pair is held.
    #[inline]
    fn locked_acceleration(
        &self,
        rt: &DifferentialRuntime,
        t: f64,
        o1: &ShaftUp,
        o2: &ShaftUp,
    ) -> Option<f64> {
        if o1.is_held() || o2.is_held() {
            return None;
        }
        let k = self.lock_ratio;
        let inertia = Self::locked_inertia(k, o1.inertia, o2.inertia);
        if inertia == 0.0 {
            return Some(0.0);
        }
        Some(Self::locked_output_acceleration(
            [t, k, self.torque_bias, rt.gain],
            [o1.reaction, o2.reaction],
            rt.locked_inertia.of(inertia),
        ))
    }

    /// What a locked differential hands up, `[L, I, Tr]`, from its outputs' `o1`, `o2` (not
    /// held) at lock ratio `k`, with the runtime's `1 / g_e` and `1 / (r_e·g_e)`: the
    /// [`Block::upstream`] of [`DifferentialMode::Locked`], for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn locked_up<T: Num>(
        k: T,
        o1: [T; 3],
        o2: [T; 3],
        inv_locked_gain: T,
        inv_locked_ratio_gain: T,
    ) -> [T; 3] {
        [
            (k * o1[0] + o2[0]) * inv_locked_gain,
            Self::locked_inertia(k, o1[1], o2[1]) * inv_locked_ratio_gain,
            (k * o1[2] + o2[2]) * inv_locked_gain,
        ]
    }

    /// The locked outputs' acceleration on output 2 ([`Differential::locked_acceleration`],
    /// outputs not held, their inertia `k²·I1 + I2` not 0) for input torque `t`, lock ratio
    /// `k`, torque bias `b` and gain `gain`, the outputs' reactions `r1`, `r2` and
    /// `1 / (k²·I1 + I2)` as `inv_inertia`, for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn locked_output_acceleration<T: Num>(
        [t, k, b, gain]: [T; 4],
        [r1, r2]: [T; 2],
        inv_inertia: T,
    ) -> T {
        let gen_gain = gain * (b * k + T::splat(1.0) - b);
        (gen_gain * t + k * r1 + r2) * inv_inertia
    }

    /// The locked outputs' torques `[T1, T2]` for input torque `t`, lock ratio `k`, torque
    /// bias `b` and gain `gain`, given output 2's acceleration `a2` and output 1's inertia
    /// `i1` and reaction `r1` ([`Differential::locked_torques`] with both outputs not held),
    /// for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn locked_split<T: Num>([t, k, b, gain]: [T; 4], a2: T, [i1, r1]: [T; 2]) -> [T; 2] {
        let t1_open = b * gain * t;
        let t2_open = (T::splat(1.0) - b) * gain * t;
        let t1 = i1 * k * a2 - r1;
        let lambda = t1_open - t1;
        [t1, t2_open + k * lambda]
    }

    /// What a slipping differential hands up, as [`ShaftUp::from_mobility`] takes it: the
    /// input's speed (rad/s), mobility (1/(kg·m²)) and free acceleration (rad/s²), from its
    /// outputs' messages `o1`, `o2` (`[L, I, Tr]`, neither free nor held) with the torque
    /// `lambda` (N·m) the lock carries from output 1 to output 2, for ratio `r`, gain `g`,
    /// torque bias `b` and lock ratio `k` (the [`Block::upstream`] of
    /// [`DifferentialMode::Slipping`]), for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn slipping_up<T: Num>(
        [r, g, b, k]: [T; 4],
        lambda: T,
        o1: [T; 3],
        o2: [T; 3],
    ) -> [T; 3] {
        let one = T::splat(1.0);
        let (m1, m2) = (one / o1[1], one / o2[1]);
        let a1 = (o1[2] - lambda) * m1;
        let a2 = (o2[2] + k * lambda) * m2;
        let (w1, w2) = (rigid_speed(o1[0], o1[1]), rigid_speed(o2[0], o2[1]));
        [
            r * (b * w1 + (one - b) * w2),
            r * g * (b * b * m1 + (one - b) * (one - b) * m2),
            r * (b * a1 + (one - b) * a2),
        ]
    }

    /// The slipping outputs' torques `[T1, T2]` (N·m) for input torque `t` (N·m), torque bias
    /// `b`, gain `g` and lock ratio `k`, with the torque `lambda` (N·m) the lock carries from
    /// output 1 to output 2, for one vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn slipping_split<T: Num>([t, b, g, k]: [T; 4], lambda: T) -> [T; 2] {
        [b * g * t - lambda, (T::splat(1.0) - b) * g * t + k * lambda]
    }

    /// The locked outputs' inertia on the right output's speed, `k²·I1 + I2` (kg·m²), for lock
    /// ratio `k` and the outputs' inertias `i1`, `i2` (kg·m²), for one vehicle or a batch's
    /// lanes.
    #[inline(always)]
    pub(crate) fn locked_inertia<T: Num>(k: T, i1: T, i2: T) -> T {
        k * k * i1 + i2
    }

    /// Output torques `(T1, T2, λ)` of the locked differential for input torque `t`.
    #[inline]
    fn locked_torques(
        &self,
        rt: &DifferentialRuntime,
        t: f64,
        o1: &ShaftUp,
        o2: &ShaftUp,
    ) -> (f64, f64, f64) {
        let k = self.lock_ratio;
        let b = self.torque_bias;
        let gain = rt.gain;
        let t1_open = b * gain * t;
        let t2_open = (1.0 - b) * gain * t;
        match self.locked_acceleration(rt, t, o1, o2) {
            Some(a2) => {
                // Output 1 follows at k·a2; the lock carries the difference.
                let [t1, t2] = Self::locked_split([t, k, b, gain], a2, [o1.inertia, o1.reaction]);
                (t1, t2, t1_open - t1)
            }
            None if !o1.is_held() => {
                let t1 = -o1.reaction;
                let lambda = t1_open - t1;
                (t1, t2_open + k * lambda, lambda)
            }
            None if !o2.is_held() => {
                let t2 = -o2.reaction;
                let lambda = (t2 - t2_open) / k;
                (t1_open - lambda, t2, lambda)
            }
            None => (t1_open, t2_open, 0.0),
        }
    }

    /// [`Block::update_modes`] with `input` what came down the input shaft and `o1`, `o2` what
    /// the output shafts sent up: for one vehicle, or for a lane of the batched step.
    #[inline(always)]
    pub(crate) fn update_mode(
        &self,
        rt: &mut DifferentialRuntime,
        input: ShaftDown,
        o1: &ShaftUp,
        o2: &ShaftUp,
    ) -> ModeChange {
        let mut change = ModeChange::Unchanged;
        if self.efficiency < 1.0 {
            change = rt.flow.latch(input);
            if change != ModeChange::Unchanged {
                rt.resolve(self);
            }
        }
        // The outputs' inertias change with their modes only: remembered for the stages.
        rt.locked_inertia.remember(Self::locked_inertia(
            self.lock_ratio,
            o1.inertia,
            o2.inertia,
        ));
        match rt.mode {
            DifferentialMode::Locked => {
                if self.always_locked() {
                    return change;
                }
                let (_, _, lambda) = self.locked_torques(rt, input.torque, o1, o2);
                if lambda.abs() > self.lock_torque {
                    rt.mode = DifferentialMode::Slipping {
                        direction: sign(lambda),
                    };
                    change = change.max(ModeChange::Smooth);
                }
            }
            DifferentialMode::Slipping { direction } => {
                let slip =
                    sign(o1.speed().unwrap_or(0.0) - self.lock_ratio * o2.speed().unwrap_or(0.0));
                if self.always_locked() {
                    rt.mode = DifferentialMode::Locked;
                    return ModeChange::Impulsive;
                }
                if !self.can_lock() {
                    rt.mode = DifferentialMode::Slipping { direction: slip };
                    return change;
                }
                let reversed = direction != 0.0 && slip == -direction;
                let no_slip = direction == 0.0 && slip == 0.0;
                if reversed || no_slip {
                    rt.mode = DifferentialMode::Locked;
                    change = ModeChange::Impulsive;
                } else if direction == 0.0 {
                    rt.mode = DifferentialMode::Slipping { direction: slip };
                    change = change.max(ModeChange::Smooth);
                }
            }
        }
        change
    }
}

impl Block for Differential {
    const TYPE_NAME: &'static str = "Differential";
    const TAKES_CONTROLS: bool = false;
    type Runtime = DifferentialRuntime;
    type Sensors = DifferentialSensors;

    fn ports(&self) -> Ports {
        Ports::SPLIT
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_finite("ratio", self.ratio)?;
        if self.ratio == 0.0 {
            return Err(SettingError::new("ratio", "must not be 0"));
        }
        check_range("torque_bias", self.torque_bias, 0.0, 1.0)?;
        check_non_negative("lock_torque", self.lock_torque)?;
        check_positive("lock_ratio", self.lock_ratio)?;
        check_non_negative("viscous_coupling", self.viscous_coupling)?;
        check_fraction("efficiency", self.efficiency)?;
        Ok(())
    }

    #[inline]
    fn settings_changed(&self, rt: &mut DifferentialRuntime) {
        rt.resolve(self);
    }

    // The stage functions are always inlined into the passes, as the wheel's are (see
    // `Wheel::stage_load`).
    #[inline(always)]
    fn upstream(
        &self,
        rt: &DifferentialRuntime,
        _: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        _derivative: &mut [f64],
    ) -> ShaftUp {
        let (o1, o2) = (&outputs[0].up, &outputs[1].up);
        let r = self.ratio;
        let g = rt.gain;
        let b = self.torque_bias;
        match rt.mode {
            DifferentialMode::Locked => {
                let k = self.lock_ratio;
                if o1.is_held() || o2.is_held() {
                    return ShaftUp::HELD;
                }
                // Generalised coordinate: ω2. The input turns r_e·ω2 and its torque acts
                // g_e-fold on ω2, so L, Tr scale by 1/g_e and the inertia k²·I1 + I2 by
                // 1/(r_e·g_e).
                let [momentum, inertia, reaction] = Self::locked_up(
                    k,
                    [o1.momentum, o1.inertia, o1.reaction],
                    [o2.momentum, o2.inertia, o2.reaction],
                    rt.inv_locked_gain,
                    rt.inv_locked_ratio_gain,
                );
                ShaftUp {
                    momentum,
                    inertia,
                    reaction,
                }
            }
            DifferentialMode::Slipping { direction } => {
                let lambda = self.slipping_torque(stage.pass, direction, o1, o2, stage.substep);
                let turning = |o: &ShaftUp| !(o.is_free() || o.is_held());
                if turning(o1) && turning(o2) {
                    let [speed, mobility, free_acceleration] = Self::slipping_up(
                        [r, g, b, self.lock_ratio],
                        lambda,
                        [o1.momentum, o1.inertia, o1.reaction],
                        [o2.momentum, o2.inertia, o2.reaction],
                    );
                    return ShaftUp::from_mobility(speed, mobility, free_acceleration);
                }
                // An output free or held adds nothing of its own.
                let (m1, m2) = (o1.mobility(), o2.mobility());
                let a1 = if o1.is_free() || o1.is_held() {
                    0.0
                } else {
                    (o1.reaction - lambda) * m1
                };
                let a2 = if o2.is_free() || o2.is_held() {
                    0.0
                } else {
                    (o2.reaction + self.lock_ratio * lambda) * m2
                };
                let w1 = o1.speed().unwrap_or(0.0);
                let w2 = o2.speed().unwrap_or(0.0);
                ShaftUp::from_mobility(
                    r * (b * w1 + (1.0 - b) * w2),
                    r * g * (b * b * m1 + (1.0 - b) * (1.0 - b) * m2),
                    r * (b * a1 + (1.0 - b) * a2),
                )
            }
        }
    }

    #[inline(always)]
    fn downstream(
        &self,
        rt: &DifferentialRuntime,
        _: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        let t = input.torque;
        let (o1, o2) = (&outputs[0].up, &outputs[1].up);
        let g = rt.gain;
        let (t1, t2) = match rt.mode {
            DifferentialMode::Locked => {
                let (t1, t2, _) = self.locked_torques(rt, t, o1, o2);
                (t1, t2)
            }
            DifferentialMode::Slipping { direction } => {
                let lambda = self.slipping_torque(stage.pass, direction, o1, o2, stage.substep);
                let [t1, t2] =
                    Self::slipping_split([t, self.torque_bias, g, self.lock_ratio], lambda);
                (t1, t2)
            }
        };
        let (s1, s2) = self.output_speeds(input.speed, o1.speed(), o2.speed());
        outputs[0].down = ShaftDown {
            torque: t1,
            speed: s1,
        };
        outputs[1].down = ShaftDown {
            torque: t2,
            speed: s2,
        };
    }

    #[inline]
    fn update_modes(&self, rt: &mut DifferentialRuntime, _: &[f64], shafts: &Shafts) -> ModeChange {
        let Some(&Shaft { down: input, .. }) = shafts.input else {
            return ModeChange::Unchanged;
        };
        self.update_mode(rt, input, &shafts.outputs[0].up, &shafts.outputs[1].up)
    }

    /// A limited-slip lock carries at most `lock_torque·substep` of angular impulse within a
    /// substep; more (a gear engaged at a speed mismatch, a state set by hand) makes it slip in
    /// the impulse's direction, as a clutch does. A differential locked by its `locked` input
    /// (a diff lock, a spool) carries any.
    fn limit_impulse(&self, rt: &mut DifferentialRuntime, shafts: &Shafts, substep: f64) -> bool {
        if rt.mode != DifferentialMode::Locked || self.always_locked() {
            return false;
        }
        let Some(input) = shafts.input else {
            return false;
        };
        let (o1, o2) = (&shafts.outputs[0].up, &shafts.outputs[1].up);
        let (_, _, lambda) = self.locked_torques(rt, input.down.torque, o1, o2);
        if lambda.abs() > self.lock_torque * substep {
            rt.mode = DifferentialMode::Slipping {
                direction: sign(lambda),
            };
            return true;
        }
        false
    }

    fn sensors(&self, rt: &DifferentialRuntime, _: &[f64], shafts: &Shafts) -> DifferentialSensors {
        let input = Shaft::down_of(shafts.input);
        let (o1, o2) = (&shafts.outputs[0].up, &shafts.outputs[1].up);
        let g = rt.gain;
        let b = self.torque_bias;
        let lambda = b * g * input.torque - shafts.outputs[0].down.torque;
        DifferentialSensors {
            input_speed: input.speed,
            input_torque: input.torque,
            left_speed: o1.speed().unwrap_or(0.0),
            left_torque: shafts.outputs[0].down.torque,
            right_speed: o2.speed().unwrap_or(0.0),
            right_torque: shafts.outputs[1].down.torque,
            lock_torque: lambda,
            locked: rt.mode == DifferentialMode::Locked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_viscous_coupling_that_is_not_a_finite_non_negative_number_is_refused() {
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let diff = Differential {
                viscous_coupling: bad,
                ..default()
            };
            let error = diff.validate().expect_err("refused");
            assert_eq!(error.field, "viscous_coupling", "{bad}: {error:?}");
        }
        let diff = Differential {
            viscous_coupling: 30.0,
            ..default()
        };
        assert!(diff.validate().is_ok());
    }
}
