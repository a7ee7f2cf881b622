//! What a shaft carries between two blocks, and the lumped-inertia algebra built on it.
//!
//! A shaft connects one output port of an upstream block to the input of a downstream block.
//! During every solver stage it carries two messages:
//!
//! * [`ShaftUp`], written by the downstream block during the **upstream pass** (leaves toward the
//!   root): the angular momentum `L`, the inertia `I` and the reaction torque `Tr` of everything
//!   that turns rigidly with the shaft, all reflected to the shaft's own frame;
//! * [`ShaftDown`], written by the upstream block during the **downstream pass** (root toward the
//!   leaves): the drive torque `Td` in the shaft and the shaft speed seen from upstream.
//!
//! # Sign conventions
//!
//! Speeds, momenta and torques are signed about the shaft's own positive sense of rotation. A
//! positive reaction torque accelerates the shaft positively, so road drag on a wheel that turns
//! forward is a *negative* `Tr`. With a drive torque `Td` arriving from upstream, the shaft's
//! angular acceleration is `α = (Td + Tr) / I`.
//!
//! # Held and free shafts
//!
//! Two limits of `I` are meaningful and every block must accept them:
//!
//! * `I = 0` ([`ShaftUp::FREE`]): the shaft drives nothing (a gearbox in neutral, a slipping
//!   clutch). `L` and `Tr` then carry whatever the free end still pushes back with (for a slipping
//!   clutch, its friction torque).
//! * `I = +∞` ([`ShaftUp::HELD`]): the shaft is held still by something that can absorb any torque
//!   (a brake that grips, a parking lock). `L` and `Tr` are then 0 by convention, and the shaft's
//!   speed is 0.
//!
//! The free functions of this module ([`lump`], [`ShaftUp::reflect`], …) handle both limits
//! without producing NaN; block code should use them rather than dividing by `I` itself.
//!
//! # Momentum passes
//!
//! The same two passes also run in a [`Pass::Momentum`] form when a coupling locks or a gear
//! engages: every torque source is replaced by its angular momentum (`Tr` carries `L`), the value
//! a block would hand down as drive torque becomes an angular impulse (N·m·s), and each inertial
//! block reports the *change* of its speed instead of an acceleration. Rigid, massless blocks
//! (gears, differentials) need not tell the two passes apart: momentum and reaction torque
//! reflect through them by the same law.

use core::sync::atomic::{Ordering, compiler_fence};

use crate::batch::Num;

/// Which of the two solver passes a stage function is being evaluated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The ordinary stage: torques (N·m) flow, inertial blocks report accelerations (rad/s²).
    Torque,
    /// A velocity projection after a coupling locked or a gear engaged: momenta (kg·m²/s) take
    /// the place of reaction torques, impulses (N·m·s) take the place of drive torques, and
    /// inertial blocks report the change of their speed (rad/s). Friction that slips transmits
    /// nothing in this pass.
    Momentum,
}

/// The upstream message of a shaft: what the driven side looks like from the driving side.
///
/// All values are reflected to this shaft. See the [module docs](self) for sign conventions and
/// the meaning of `inertia == 0` (free) and `inertia == +∞` (held).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShaftUp {
    /// `L`: angular momentum of everything that turns rigidly with this shaft, reflected to it
    /// (kg·m²/s). Always `inertia × speed`, so that [`ShaftUp::speed`] recovers the shaft speed.
    pub momentum: f64,
    /// `I`: inertia reflected to this shaft (kg·m²); `0` when free, `+∞` when held.
    pub inertia: f64,
    /// `Tr`: reaction torque the driven side applies to the shaft (N·m), positive when it
    /// accelerates the shaft in its positive sense. In a [`Pass::Momentum`] pass this slot
    /// carries angular momentum (kg·m²/s) instead.
    pub reaction: f64,
}

impl ShaftUp {
    /// A shaft that drives nothing: no inertia, no momentum, no reaction.
    pub const FREE: ShaftUp = ShaftUp {
        momentum: 0.0,
        inertia: 0.0,
        reaction: 0.0,
    };

    /// A shaft held still by something that absorbs any torque (a gripping brake, a lock).
    pub const HELD: ShaftUp = ShaftUp {
        momentum: 0.0,
        inertia: f64::INFINITY,
        reaction: 0.0,
    };

    /// A rigid body of inertia `inertia` (kg·m², > 0) turning at `speed` (rad/s), acted on by
    /// `reaction` (N·m).
    #[inline]
    pub fn rigid(inertia: f64, speed: f64, reaction: f64) -> Self {
        let [momentum, inertia, reaction] = rigid(inertia, speed, reaction);
        ShaftUp {
            momentum,
            inertia,
            reaction,
        }
    }

    /// Whether the shaft is held still (`inertia == +∞`).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.inertia == f64::INFINITY
    }

    /// Whether the shaft drives no inertia at all (`inertia == 0`).
    #[inline]
    pub fn is_free(&self) -> bool {
        self.inertia == 0.0
    }

    /// Speed of the driven side (rad/s): `L / I`, 0 when held, `None` when free (a free shaft has
    /// no speed of its own).
    #[inline]
    pub fn speed(&self) -> Option<f64> {
        if self.is_free() {
            None
        } else if self.is_held() {
            Some(0.0)
        } else {
            Some(rigid_speed(self.momentum, self.inertia))
        }
    }

    /// Mobility `1 / I` (1/(kg·m²)): 0 when held, `+∞` when free.
    #[inline]
    pub fn mobility(&self) -> f64 {
        1.0 / self.inertia
    }

    /// Acceleration the driven side would have with no drive torque, `Tr / I` (rad/s²); 0 when
    /// held or free. In a momentum pass this is the speed (rad/s) instead.
    #[inline]
    pub fn free_acceleration(&self) -> f64 {
        if self.is_free() || self.is_held() {
            0.0
        } else {
            self.reaction / self.inertia
        }
    }

    /// The same driven side seen through a rigid gear: the input turns `ratio` times as fast as
    /// this shaft, and the gear multiplies torque by `gain` on the way down (`gain == ratio` when
    /// lossless; `ratio·η` when driving through efficiency `η`, `ratio/η` on overrun).
    ///
    /// Returns `L / gain`, `I / (ratio·gain)`, `Tr / gain`, which for a lossless gear is the
    /// familiar `L/r`, `I/r²`, `Tr/r`. Held and free shafts stay held and free.
    #[inline]
    pub fn reflect(&self, ratio: f64, gain: f64) -> ShaftUp {
        if self.is_held() {
            return ShaftUp::HELD;
        }
        let inv_gain = 1.0 / gain;
        ShaftUp {
            momentum: self.momentum * inv_gain,
            inertia: self.inertia * inv_gain / ratio,
            reaction: self.reaction * inv_gain,
        }
    }

    /// [`ShaftUp::reflect`] with the reciprocals of ratio and gain given, for blocks that keep
    /// them precomputed: divisions are the slowest part of a pass.
    #[inline]
    pub fn reflect_inv(&self, inv_ratio: f64, inv_gain: f64) -> ShaftUp {
        if self.is_held() {
            return ShaftUp::HELD;
        }
        let [momentum, inertia, reaction] = reflected(
            [self.momentum, self.inertia, self.reaction],
            inv_ratio,
            inv_gain,
        );
        ShaftUp {
            momentum,
            inertia,
            reaction,
        }
    }

    /// Builds a message from the kinematic description of a driven side: its `speed` (rad/s),
    /// `mobility` (`1/I`, 1/(kg·m²)) and `free_acceleration` (rad/s²). A mobility of 0 gives
    /// [`ShaftUp::HELD`].
    #[inline]
    pub fn from_mobility(speed: f64, mobility: f64, free_acceleration: f64) -> ShaftUp {
        if mobility == 0.0 {
            return ShaftUp::HELD;
        }
        let [momentum, inertia, reaction] = mobile(speed, mobility, free_acceleration);
        ShaftUp {
            momentum,
            inertia,
            reaction,
        }
    }
}

/// The downstream message of a shaft: what the driving side does to it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShaftDown {
    /// `Td`: drive torque in the shaft (N·m), positive when it accelerates the driven side in the
    /// shaft's positive sense. In a [`Pass::Momentum`] pass, an angular impulse (N·m·s).
    pub torque: f64,
    /// Speed of the shaft as the driving side turns it (rad/s). Equal to the driven side's speed
    /// across rigid connections; they differ across a slipping coupling.
    pub speed: f64,
}

/// Both messages of one shaft in a stage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shaft {
    /// What the driven block sent up.
    pub up: ShaftUp,
    /// What the driving block sent down.
    pub down: ShaftDown,
}

impl Shaft {
    /// The downstream message of an input shaft, or zero torque at zero speed without one.
    ///
    /// Reads the two fields one at a time. The driving block has just written them one at a
    /// time, and a processor cannot hand a single wider load two pending stores: the load
    /// would wait until both reach the cache (a store-forwarding stall, about 15 cycles per
    /// block and stage). The compiler fence keeps the compiler from merging the loads; it
    /// emits no instruction.
    #[inline(always)]
    pub fn down_of(input: Option<&Shaft>) -> ShaftDown {
        match input {
            Some(shaft) => {
                let torque = shaft.down.torque;
                compiler_fence(Ordering::SeqCst);
                ShaftDown {
                    torque,
                    speed: shaft.down.speed,
                }
            }
            None => ShaftDown::default(),
        }
    }
}

/// Result of driving a load from a lumped inertia.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lumped {
    /// Common angular acceleration of the driver and the load (rad/s²); in a momentum pass, their
    /// common speed after the projection (rad/s).
    pub acceleration: f64,
    /// Torque the driver hands down the shaft (N·m); in a momentum pass, the impulse (N·m·s).
    pub shaft_torque: f64,
}

/// The reciprocal of the last value it was given, for stage functions that divide by a
/// quantity that only changes with modes (the total inertia a root drives, a locked
/// differential's inertia): [`Reciprocal::remember`] it where the block may change (in
/// [`Block::update_modes`](crate::Block::update_modes), through the block's runtime), and
/// multiply by [`Reciprocal::of`] in the stages. A division takes several times as long as a
/// multiplication, and these sit on the chain from the engine to the wheels at every stage.
///
/// `of(x)` is `1 / x` whether or not `x` is the remembered value, bit for bit, so the result
/// never depends on what was remembered; for the same reason any two compare equal.
#[derive(Clone, Copy, Debug)]
pub struct Reciprocal {
    pub(crate) value: f64,
    pub(crate) reciprocal: f64,
}

impl Default for Reciprocal {
    /// Remembers nothing.
    fn default() -> Self {
        Reciprocal {
            value: f64::NAN,
            reciprocal: f64::NAN,
        }
    }
}

impl PartialEq for Reciprocal {
    /// Always: what a `Reciprocal` remembers changes no result.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Reciprocal {
    /// Keeps `1 / x` for later calls of [`Reciprocal::of`] with `x`.
    #[inline]
    pub fn remember(&mut self, x: f64) {
        if x.to_bits() != self.value.to_bits() {
            *self = Reciprocal {
                value: x,
                reciprocal: 1.0 / x,
            };
        }
    }

    /// `1 / x`: the remembered reciprocal if `x` is the remembered value, computed otherwise.
    #[inline]
    pub fn of(&self, x: f64) -> f64 {
        // Bits, not `==`: 0 and −0 have reciprocals of opposite signs.
        if x.to_bits() == self.value.to_bits() {
            self.reciprocal
        } else {
            1.0 / x
        }
    }
}

/// Solves a driver of inertia `inertia` (kg·m²) and net torque `torque` (N·m) rigidly coupled
/// to a `load`, as one lumped inertia.
///
/// The common acceleration is `α = (T + Tr) / (I + I_load)` and the shaft carries
/// `Td = I_load·α − Tr`, which equals the friction-coupling formula
/// `T* = (I_load·T − I·Tr) / (I + I_load)` of a locked clutch. A held load stops the driver and
/// takes its whole torque; a free load takes none.
///
/// In a momentum pass, pass the driver's momentum as `torque`: the result is the common speed
/// and the impulse handed down.
#[inline]
pub fn lump(inertia: f64, torque: f64, load: ShaftUp) -> Lumped {
    lump_with(inertia, torque, load, &Reciprocal::default())
}

/// [`lump`], taking `1 / (I + I_load)` from `total` when it remembers it (see [`Reciprocal`]):
/// the same result, bit for bit, without a division at every stage.
#[inline]
pub fn lump_with(inertia: f64, torque: f64, load: ShaftUp, total: &Reciprocal) -> Lumped {
    if load.is_held() {
        return Lumped {
            acceleration: 0.0,
            shaft_torque: torque,
        };
    }
    let [acceleration, shaft_torque] = lumped(
        torque,
        load.inertia,
        load.reaction,
        total.of(inertia + load.inertia),
    );
    Lumped {
        acceleration,
        shaft_torque,
    }
}

/// What a rigid body of inertia `inertia` (kg·m², > 0) turning at `speed` (rad/s) and acted
/// on by `reaction` (N·m) hands up, `[L, I, Tr]` ([`ShaftUp::rigid`]), for one vehicle or a
/// batch's lanes.
#[inline(always)]
pub(crate) fn rigid<T: Num>(inertia: T, speed: T, reaction: T) -> [T; 3] {
    [inertia * speed, inertia, reaction]
}

/// The message up `[L, I, Tr]` (kg·m²/s, kg·m², N·m) of a shaft that turns at `speed` (rad/s)
/// with mobility `mobility` (1/(kg·m²), not 0) and would accelerate at `free_acceleration`
/// (rad/s²) with no drive ([`ShaftUp::from_mobility`]), for one vehicle or a batch's lanes.
#[inline(always)]
pub(crate) fn mobile<T: Num>(speed: T, mobility: T, free_acceleration: T) -> [T; 3] {
    let inertia = T::splat(1.0) / mobility;
    [speed * inertia, inertia, free_acceleration * inertia]
}

/// The speed `L / I` (rad/s) of a shaft neither free nor held, from its momentum (kg·m²/s)
/// and inertia (kg·m²) ([`ShaftUp::speed`]), for one vehicle or a batch's lanes.
#[inline(always)]
pub(crate) fn rigid_speed<T: Num>(momentum: T, inertia: T) -> T {
    momentum / inertia
}

/// A message up `[L, I, Tr]` (kg·m²/s, kg·m², N·m; not held) reflected through a gear of
/// reciprocal ratio `inv_ratio` and reciprocal torque gain `inv_gain` (both 1)
/// ([`ShaftUp::reflect_inv`]), for one vehicle or a batch's lanes.
#[inline(always)]
pub(crate) fn reflected<T: Num>(
    [momentum, inertia, reaction]: [T; 3],
    inv_ratio: T,
    inv_gain: T,
) -> [T; 3] {
    [
        momentum * inv_gain,
        inertia * inv_gain * inv_ratio,
        reaction * inv_gain,
    ]
}

/// A driver of net torque `torque` (N·m) lumped with a load (not held) of inertia
/// `load_inertia` (kg·m²) and reaction `load_reaction` (N·m), given `1 / (I + I_load)`
/// (1/(kg·m²)) as `inv_total`: `[α (rad/s²), shaft torque (N·m)]` ([`lump_with`]), for one
/// vehicle or a batch's lanes.
#[inline(always)]
pub(crate) fn lumped<T: Num>(torque: T, load_inertia: T, load_reaction: T, inv_total: T) -> [T; 2] {
    let acceleration = (torque + load_reaction) * inv_total;
    [acceleration, load_inertia * acceleration - load_reaction]
}

/// Torque (N·m) that gives a driven side the acceleration `acceleration` (rad/s²):
/// `I·α − Tr`. For a held side this is `−Tr` when `α == 0`, which is 0 by convention; callers
/// that hold a side should hand it the torque balance instead.
#[inline]
pub fn torque_for(up: &ShaftUp, acceleration: f64) -> f64 {
    if up.is_held() || up.is_free() {
        -up.reaction
    } else {
        up.inertia * acceleration - up.reaction
    }
}

/// Sign of `x` as `±1.0`, with `0.0` for zero (unlike [`f64::signum`], which gives `±1` for `±0`).
#[inline]
pub fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// What a rigid joint of `shafts` hands up, referred to a common shaft: shaft `i` turns
/// `ratio(i)` times as fast as the common one, so its momentum counts `k` times, its inertia
/// `k²` times and its torque `k` times (virtual work).
#[inline]
pub(crate) fn rigid_join(shafts: &[Shaft], ratio: impl Fn(usize) -> f64) -> ShaftUp {
    let mut total = ShaftUp::FREE;
    for (i, shaft) in shafts.iter().enumerate() {
        let k = ratio(i);
        total.momentum += k * shaft.up.momentum;
        total.inertia += k * k * shaft.up.inertia;
        total.reaction += k * shaft.up.reaction;
    }
    total
}

/// Hands `torque` (N·m, at the common shaft turning at `speed`) down a rigid joint of `shafts`
/// (see [`rigid_join`]): they share one acceleration of the common shaft,
/// `α = (torque + ΣkT) / Σk²I` (zero when nothing turns behind it), and each gets the torque
/// that gives it `k·α` ([`carried`]).
///
/// A joint that something holds (a braked road wheel on a track) does not turn: each free
/// shaft gets what keeps it still (`−T`), and the held ones share what is left,
/// `torque + ΣkT`, in proportion to their ratios (`k·x` each, with `x = (torque + ΣkT) / Σk²`
/// over the held shafts), so that every held shaft's brake feels the drive it holds against
/// and lets go when that is more than it can hold. (Handing the held shafts their own
/// reaction alone lost the drive: a tracked vehicle braked to a perfect rest could not drive
/// off with its brakes released, its road wheels' net torque exactly zero.)
#[inline]
pub(crate) fn rigid_split(
    shafts: &mut [Shaft],
    ratio: impl Fn(usize) -> f64,
    torque: f64,
    speed: f64,
) {
    let joined = rigid_join(shafts, &ratio);
    if joined.inertia.is_infinite() {
        let held: f64 = (0..shafts.len())
            .filter(|&i| shafts[i].up.inertia.is_infinite())
            .map(|i| ratio(i) * ratio(i))
            .sum();
        let share = if held > 0.0 {
            (torque + joined.reaction) / held
        } else {
            0.0
        };
        for (i, shaft) in shafts.iter_mut().enumerate() {
            let k = ratio(i);
            let extra = if shaft.up.inertia.is_infinite() {
                k * share
            } else {
                0.0
            };
            shaft.down = ShaftDown {
                torque: carried(shaft.up, 0.0) + extra,
                speed: speed * k,
            };
        }
        return;
    }
    let alpha = if joined.inertia > 0.0 {
        (torque + joined.reaction) / joined.inertia
    } else {
        0.0
    };
    for (i, shaft) in shafts.iter_mut().enumerate() {
        let k = ratio(i);
        shaft.down = ShaftDown {
            torque: carried(shaft.up, k * alpha),
            speed: speed * k,
        };
    }
}

/// The torque a rigid joint carries into a shaft that reported `up`, for it to turn with the
/// joint's shared `acceleration` (rad/s²; in a momentum pass, the shared new speed, and the
/// result is the momentum change): `I·α − T`. A held shaft takes what keeps it still (`−T`),
/// a free one nothing.
#[inline]
pub(crate) fn carried(up: ShaftUp, acceleration: f64) -> f64 {
    if up.inertia.is_infinite() {
        -up.reaction
    } else if up.inertia == 0.0 {
        0.0
    } else {
        up.inertia * acceleration - up.reaction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn gear_reflection_is_exact() {
        // 1:3.5 gear, lossless: L/r, I/r², Tr/r to 1e-12 relative.
        let out = ShaftUp::rigid(1.7, 42.0, -123.0);
        let r = 3.5;
        let up = out.reflect(r, r);
        assert!(rel(up.momentum, out.momentum / r) < 1e-12);
        assert!(rel(up.inertia, out.inertia / (r * r)) < 1e-12);
        assert!(rel(up.reaction, out.reaction / r) < 1e-12);
        // and the speed seen upstream is r times the downstream speed
        assert!(rel(up.speed().unwrap(), 42.0 * r) < 1e-12);
    }

    /// A rigid joint hands its torque on without loss (`Σk·D = torque`); turning, each shaft
    /// gets `I·k·α − T` for the shared `α`; held by one of its shafts, the free ones get what
    /// keeps them still and the held ones share the rest in proportion to their ratios.
    #[test]
    fn a_rigid_joint_hands_its_torque_to_what_holds_it() {
        let ratio = |i: usize| [1.0, 2.0, 0.5][i];
        let shaft = |up| Shaft {
            up,
            down: ShaftDown::default(),
        };
        let handed =
            |shafts: &[Shaft]| -> f64 { (0..3).map(|i| ratio(i) * shafts[i].down.torque).sum() };
        // Turning: α = (100 + 10 − 2·4 + 0.5·6) / (2 + 4·3 + 0.25·1) = 105 / 14.25.
        let mut turning = [
            shaft(ShaftUp::rigid(2.0, 1.0, 10.0)),
            shaft(ShaftUp::rigid(3.0, 2.0, -4.0)),
            shaft(ShaftUp::rigid(1.0, 0.5, 6.0)),
        ];
        rigid_split(&mut turning, ratio, 100.0, 1.0);
        let alpha = 105.0 / 14.25;
        assert!(rel(turning[1].down.torque, 3.0 * 2.0 * alpha + 4.0) < 1e-12);
        assert!(rel(handed(&turning), 100.0) < 1e-12);
        // Held by the first and the third: the second stays still (+4 against its −4), and
        // the held ones take the rest, 100 + 10 − 8 + 3 = 105, as 1·x and 0.5·x with
        // x = 105 / (1 + 0.25) = 84 (each besides its own reaction).
        let mut held = [
            shaft(ShaftUp::HELD),
            shaft(ShaftUp::rigid(3.0, 0.0, -4.0)),
            shaft(ShaftUp::HELD),
        ];
        held[0].up.reaction = 10.0;
        held[2].up.reaction = 6.0;
        rigid_split(&mut held, ratio, 100.0, 0.0);
        assert_eq!(held[1].down.torque, 4.0);
        assert!(rel(held[0].down.torque, -10.0 + 84.0) < 1e-12);
        assert!(rel(held[2].down.torque, -6.0 + 0.5 * 84.0) < 1e-12);
        assert!(rel(handed(&held), 100.0) < 1e-12);
    }

    #[test]
    fn held_and_free_survive_reflection() {
        assert!(ShaftUp::HELD.reflect(3.0, 3.0).is_held());
        assert!(ShaftUp::FREE.reflect(3.0, 3.0).is_free());
        assert_eq!(ShaftUp::HELD.speed(), Some(0.0));
        assert_eq!(ShaftUp::FREE.speed(), None);
    }

    /// A remembered reciprocal is the computed one, bit for bit, whatever was remembered: at
    /// ordinary values, zero, subnormals, infinities and NaN.
    #[test]
    fn a_remembered_reciprocal_changes_no_result() {
        let values = [
            1.0,
            0.2,
            3.25,
            -7.5,
            1e-300,
            5e-324,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let mut checked = 0;
        for &remembered in &values {
            let mut r = Reciprocal::default();
            r.remember(remembered);
            for &x in &values {
                assert_eq!(
                    r.of(x).to_bits(),
                    (1.0 / x).to_bits(),
                    "1/{x} with {remembered} remembered"
                );
                let load = ShaftUp::rigid(x.abs(), 10.0, -40.0);
                let (with, without) = (lump_with(0.25, 180.0, load, &r), lump(0.25, 180.0, load));
                assert_eq!(
                    [with.acceleration, with.shaft_torque].map(f64::to_bits),
                    [without.acceleration, without.shaft_torque].map(f64::to_bits),
                    "lump onto inertia {x} with {remembered} remembered"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 100);
        assert_eq!(Reciprocal::default().of(0.0), f64::INFINITY);
    }

    #[test]
    fn lumped_driver_matches_locked_clutch_formula() {
        // T* = (I_B·T_A − I_A·T_B)/(I_A + I_B)
        let (ia, ta) = (0.25, 180.0);
        let load = ShaftUp::rigid(3.0, 10.0, -40.0);
        let l = lump(ia, ta, load);
        let t_star = (load.inertia * ta - ia * load.reaction) / (ia + load.inertia);
        assert!(rel(l.shaft_torque, t_star) < 1e-14);
        assert!(rel(l.acceleration, (ta - 40.0) / 3.25) < 1e-14);
    }

    #[test]
    fn held_load_takes_the_whole_torque() {
        let l = lump(0.2, 55.0, ShaftUp::HELD);
        assert_eq!(l.acceleration, 0.0);
        assert_eq!(l.shaft_torque, 55.0);
    }
}
