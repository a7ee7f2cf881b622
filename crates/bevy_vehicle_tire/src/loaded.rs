//! [`LoadedTire`]: a tire model evaluated at one load and surface friction.

use crate::fastmath;
use crate::magic_formula::{
    MIN_WEIGHT_DENOMINATOR, peak_phi, peak_x, phi, solve_phi_lanes, start_guess,
};

/// Slips are scaled down together so that neither exceeds this magnitude.
pub(crate) const SLIP_LIMIT: f64 = 1e12;
/// Below this `ρ²` the normalised combined-slip forces are the linear terms.
const RHO2_LINEAR: f64 = 1e-20;
/// Loads below this (N) produce no force.
const MIN_LOAD: f64 = 1e-9;
/// Friction coefficients (or ratios) below this count as a frictionless surface.
const MIN_FRICTION: f64 = 1e-9;
/// Lower limit of `1 + κ` in the brush model's theoretical slips.
pub(crate) const BRUSH_MIN_DENOMINATOR: f64 = 1e-6;

/// A tire model evaluated at one load and one surface friction: every load- and
/// friction-dependent coefficient is precomputed, so [`LoadedTire::forces`] is cheap.
///
/// Build one per wheel per fixed step with [`TireModel::at_load`](crate::TireModel::at_load)
/// and call [`LoadedTire::forces`] at every stage of the wheel's integrator. `forces` does
/// not allocate and calls no `std` transcendental function (only [`fastmath`] and
/// `f64::sqrt`), so results are bit-identical on every platform.
///
/// Slip inputs of magnitude above `1e12` are scaled down together (keeping their ratio)
/// until the larger is `1e12`; every model is in full sliding long before. Infinite slips
/// count as `±f64::MAX`; a `NaN` slip gives `NaN` forces.
///
/// The default value is a tire under zero load: every force, stiffness and slip is zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadedTire {
    load: f64,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Kind {
    /// No load, or no friction: every force is zero.
    #[default]
    Zero,
    /// `sh` in the brush and linear kinds: the camber's shift of `tan α` (the slip at which
    /// the lateral force is the camber thrust's, negated).
    Linear {
        cx: f64,
        cy: f64,
        fmax: f64,
        sh: f64,
    },
    /// A linear law limited on each axis separately: `fmax` = `[longitudinal, lateral]` (N).
    LinearAxes {
        cx: f64,
        cy: f64,
        fmax: [f64; 2],
        sh: f64,
    },
    Brush {
        cx: f64,
        cy: f64,
        fmax: f64,
        inv_3fmax: f64,
        sh: f64,
    },
    MagicNormalized {
        x: MfAxis,
        y: MfAxis,
        px: MfPeaks,
        py: MfPeaks,
    },
    MagicWeighting {
        x: MfAxis,
        y: MfAxis,
        w: Weights,
    },
}

/// Magic Formula coefficients of one axis at one load (this crate's slip sign).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MfAxis {
    pub b: f64,
    pub c: f64,
    pub d: f64,
    /// Curvature for positive shifted slip.
    pub e_pos: f64,
    /// Curvature for negative shifted slip.
    pub e_neg: f64,
    pub sh: f64,
    pub sv: f64,
}

impl MfAxis {
    /// Pure-slip force at shifted slip `u`.
    #[inline(always)]
    fn pure(&self, u: f64) -> f64 {
        self.pure_part(u).finish_scalar()
    }

    /// [`MfAxis::pure`], up to its curve evaluation.
    #[inline(always)]
    fn pure_part(&self, u: f64) -> Partial {
        let e = if u < 0.0 { self.e_neg } else { self.e_pos };
        Partial::Pure {
            curve: Curve {
                x: self.b * u,
                e,
                c: self.c,
            },
            d: self.d,
            sv: self.sv,
        }
    }

    /// `dF/du` at `u = 0`: `B·C·D`.
    #[inline(always)]
    fn stiffness(&self) -> f64 {
        self.b * self.c * self.d
    }
}

/// Dimensionless peak locations `x* = B·abs(u_peak)` on both sides, and their inverses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MfPeaks {
    pos: f64,
    neg: f64,
    inv_pos: f64,
    inv_neg: f64,
}

impl MfPeaks {
    /// The peaks of both axes, `[longitudinal, lateral]`, solved from `near`'s peaks when
    /// given (a nearby tire's), else from a closed-form guess. The (up to) four solves, one
    /// per side of each axis, run together.
    pub(crate) fn both(axes: [&MfAxis; 2], near: Option<[MfPeaks; 2]>) -> [MfPeaks; 2] {
        // Lane 2k solves axis k's positive side, lane 2k + 1 its negative side, unless that
        // has the same curvature (then the lane solves φ(x) = x = 1 and is not used).
        let mut e = [0.0; 4];
        let mut target = [1.0; 4];
        let mut start = [1.0; 4];
        for (k, axis) in axes.iter().enumerate() {
            let near = near.map(|n| n[k]);
            let e_pos = axis.e_pos.min(1.0);
            let target_pos = peak_phi(axis.c, e_pos);
            e[2 * k] = e_pos;
            target[2 * k] = target_pos;
            start[2 * k] = near.map_or_else(|| start_guess(e_pos, target_pos), |p| p.pos);
            if axis.e_neg != axis.e_pos {
                let e_neg = axis.e_neg.min(1.0);
                // The target depends on E only through E = 1.
                let target_neg = if (axis.e_neg < 1.0) == (axis.e_pos < 1.0) {
                    target_pos
                } else {
                    peak_phi(axis.c, e_neg)
                };
                e[2 * k + 1] = e_neg;
                target[2 * k + 1] = target_neg;
                start[2 * k + 1] = near.map_or_else(|| start_guess(e_neg, target_neg), |p| p.neg);
            }
        }
        let x = solve_phi_lanes(e, target, start);
        std::array::from_fn(|k| {
            let pos = x[2 * k];
            let neg = if axes[k].e_neg == axes[k].e_pos {
                pos
            } else {
                x[2 * k + 1]
            };
            Self {
                pos,
                neg,
                inv_pos: 1.0 / pos,
                inv_neg: 1.0 / neg,
            }
        })
    }
}

/// Combined-slip weighting coefficients (slip shifts already in this crate's sign).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Weights {
    pub r_bx1: f64,
    pub r_bx2: f64,
    pub r_cx1: f64,
    pub r_ex1: f64,
    pub r_hx1: f64,
    pub r_by1: f64,
    pub r_by2: f64,
    pub r_by3: f64,
    pub r_cy1: f64,
    pub r_ey1: f64,
    pub r_hy1: f64,
}

/// `G = cos(C·atan(φ(B·slip)))/cos(C·atan(φ(B·shift)))`, numerator clamped at 0.
#[inline(always)]
fn weighting(b: f64, c: f64, e: f64, shifted_slip: f64, shift: f64) -> f64 {
    let num = fastmath::cos(c * fastmath::atan(phi(b * shifted_slip, e))).max(0.0);
    if shift == 0.0 {
        num
    } else {
        let den = fastmath::cos(c * fastmath::atan(phi(b * shift, e)));
        num / den.max(MIN_WEIGHT_DENOMINATOR)
    }
}

/// Scales both slips down together so neither exceeds [`SLIP_LIMIT`].
#[inline(always)]
fn saturate(kappa: f64, tan_alpha: f64) -> (f64, f64) {
    let k = kappa.clamp(-f64::MAX, f64::MAX);
    let t = tan_alpha.clamp(-f64::MAX, f64::MAX);
    let m = k.abs().max(t.abs());
    if m > SLIP_LIMIT {
        scale_down(k, t, m)
    } else {
        (k, t)
    }
}

/// [`saturate`]'s scaling, for slips as large as `m > SLIP_LIMIT`: out of line and cold, so
/// that the common path takes a branch instead of computing the division to select it away
/// (on the path to every stage's tire curves, a division's wait).
#[cold]
#[inline(never)]
fn scale_down(k: f64, t: f64, m: f64) -> (f64, f64) {
    let s = SLIP_LIMIT / m;
    (k * s, t * s)
}

/// The shift of `tan α` (dimensionless) by which a brush or linear tire of cornering
/// stiffness `cornering` and camber stiffness `camber` (both per unit load: N per unit
/// `tan α`, N per rad, per N) leaning by `sin γ` = `camber_sine` pushes `−camber·fz·sin γ`
/// sideways at no slip: `−camber·sin γ/cornering`. 0 without camber, or without cornering
/// stiffness (then the tire has no lateral force at all).
pub(crate) fn camber_shift(camber: f64, cornering: f64, camber_sine: f64) -> f64 {
    if camber == 0.0 || camber_sine == 0.0 || cornering <= 0.0 {
        0.0
    } else {
        -camber * camber_sine / cornering
    }
}

impl LoadedTire {
    /// The force-free tire for a load `≤ 0`, below `1e-9` N or not finite, or a friction
    /// `friction` below `1e-9` or not finite; `None` when the model must be evaluated.
    pub(crate) fn without_force(fz: f64, friction: f64) -> Option<Self> {
        let zero = |load| {
            Some(Self {
                load,
                kind: Kind::Zero,
            })
        };
        if !(fz > 0.0 && fz.is_finite()) {
            zero(0.0)
        } else if fz < MIN_LOAD || !(friction >= MIN_FRICTION && friction.is_finite()) {
            zero(fz)
        } else {
            None
        }
    }

    /// A linear tire; `sh` shifts `tan α` (the camber's part, see [`camber_shift`]).
    pub(crate) fn linear(load: f64, cx: f64, cy: f64, fmax: f64, sh: f64) -> Self {
        Self {
            load,
            kind: Kind::Linear { cx, cy, fmax, sh },
        }
    }

    /// A linear tire limited on each axis; `sh` as in [`LoadedTire::linear`].
    pub(crate) fn linear_axes(load: f64, cx: f64, cy: f64, fmax: [f64; 2], sh: f64) -> Self {
        Self {
            load,
            kind: Kind::LinearAxes { cx, cy, fmax, sh },
        }
    }

    /// A brush tire; `sh` as in [`LoadedTire::linear`].
    pub(crate) fn brush(load: f64, cx: f64, cy: f64, fmax: f64, sh: f64) -> Self {
        Self {
            load,
            kind: Kind::Brush {
                cx,
                cy,
                fmax,
                inv_3fmax: 1.0 / (3.0 * fmax),
                sh,
            },
        }
    }

    pub(crate) fn magic_normalized(
        load: f64,
        x: MfAxis,
        y: MfAxis,
        px: MfPeaks,
        py: MfPeaks,
    ) -> Self {
        Self {
            load,
            kind: Kind::MagicNormalized { x, y, px, py },
        }
    }

    pub(crate) fn magic_weighting(load: f64, x: MfAxis, y: MfAxis, w: Weights) -> Self {
        Self {
            load,
            kind: Kind::MagicWeighting { x, y, w },
        }
    }

    /// The peaks of a normalised combined-slip Magic Formula tire, `[longitudinal, lateral]`.
    pub(crate) fn normalized_peaks(&self) -> Option<[MfPeaks; 2]> {
        match self.kind {
            Kind::MagicNormalized { px, py, .. } => Some([px, py]),
            _ => None,
        }
    }

    /// The vertical load this tire was evaluated at, N (`0` for a load `≤ 0` or not
    /// finite).
    #[inline]
    pub fn load(&self) -> f64 {
        self.load
    }

    /// Combined-slip tire forces `[fx, fy]`, N, at longitudinal slip ratio `kappa` and
    /// slip-angle tangent `tan_alpha` (both dimensionless, this crate's signs: see the
    /// [crate docs](crate)). Positive `fx` propels forward, positive `fy` points left.
    #[inline]
    pub fn forces(&self, kappa: f64, tan_alpha: f64) -> [f64; 2] {
        self.combined::<true>(kappa, tan_alpha)
    }

    /// The longitudinal force of [`LoadedTire::forces`] alone (N), equal to its `fx` to the
    /// bit, at about half the cost for the Magic Formula with normalised combined slip (the
    /// lateral curve is not evaluated). For callers that need the wheel's torque many times
    /// per step and the lateral force once.
    #[inline]
    pub fn longitudinal_force(&self, kappa: f64, tan_alpha: f64) -> f64 {
        self.combined::<false>(kappa, tan_alpha)[0]
    }

    /// [`LoadedTire::longitudinal_force`] of `N` tires, each at its own slips: equal to
    /// `tires[i].longitudinal_force(kappa[i], tan_alpha[i])` bit for bit, and cheaper than
    /// `N` separate calls for Magic Formula tires with normalised combined slip, whose curve
    /// evaluations are long chains of dependent operations that overlap when run together.
    /// For a vehicle's wheels at each integrator stage; `N = 4` suits most processors.
    #[inline]
    pub fn longitudinal_forces<const N: usize>(
        tires: [&LoadedTire; N],
        kappa: [f64; N],
        tan_alpha: [f64; N],
    ) -> [f64; N] {
        let mut parts = [Partial::Done(0.0); N];
        for i in 0..N {
            let tire = tires[i];
            parts[i] = match &tire.kind {
                Kind::MagicNormalized { x, y, px, py } => {
                    let (k, t) = saturate(kappa[i], tan_alpha[i]);
                    normalized_parts::<false>(x, y, px, py, k, t)[0]
                }
                _ => Partial::Done(tire.longitudinal_force(kappa[i], tan_alpha[i])),
            };
        }
        // Tires of other models (or Magic Formula ones at no slip) need no curve.
        if parts.iter().all(Partial::is_done) {
            return parts.map(|p| p.finish(0.0));
        }
        let mut forces = Curve::values(|i| parts[i].curve());
        for i in 0..N {
            forces[i] = parts[i].finish(forces[i]);
        }
        forces
    }

    /// [`LoadedTire::forces`] of `N` tires, each at its own slips: equal to
    /// `tires[i].forces(kappa[i], tan_alpha[i])` bit for bit (and its `fx` to
    /// [`LoadedTire::longitudinal_forces`]), with the curve evaluations of all `N` tires run
    /// together, as there. For a vehicle's wheels at each integrator stage when the lateral
    /// forces are needed there too.
    #[inline]
    pub fn forces_lanes<const N: usize>(
        tires: [&LoadedTire; N],
        kappa: [f64; N],
        tan_alpha: [f64; N],
    ) -> [[f64; 2]; N] {
        let mut parts = [[Partial::Done(0.0); 2]; N];
        for i in 0..N {
            let tire = tires[i];
            parts[i] = match &tire.kind {
                Kind::MagicNormalized { x, y, px, py } => {
                    let (k, t) = saturate(kappa[i], tan_alpha[i]);
                    normalized_parts::<true>(x, y, px, py, k, t)
                }
                _ => tire.forces(kappa[i], tan_alpha[i]).map(Partial::Done),
            };
        }
        // Only the curves some tire needs: none for tires of other models, which answer
        // without one.
        let needs = |axis: usize| !parts.iter().all(|p| p[axis].is_done());
        let values = match (needs(0), needs(1)) {
            (true, true) => Curve::values_pair::<N>(|axis, i| parts[i][axis].curve()),
            (true, false) => [Curve::values(|i| parts[i][0].curve()), [0.0; N]],
            (false, true) => [[0.0; N], Curve::values(|i| parts[i][1].curve())],
            (false, false) => [[0.0; N]; 2],
        };
        let mut forces = [[0.0; 2]; N];
        for i in 0..N {
            forces[i] = [0, 1].map(|axis| parts[i][axis].finish(values[axis][i]));
        }
        forces
    }

    /// [`LoadedTire::forces`]; without `LATERAL`, `fy` may be left out (returned as 0) where
    /// `fx` does not need it.
    #[inline(always)]
    fn combined<const LATERAL: bool>(&self, kappa: f64, tan_alpha: f64) -> [f64; 2] {
        let (kappa, tan_alpha) = saturate(kappa, tan_alpha);
        match &self.kind {
            Kind::Zero => [0.0, 0.0],
            Kind::Linear { cx, cy, fmax, sh } => {
                let fx = cx * kappa;
                let fy = cy * (tan_alpha + sh);
                let m2 = fx * fx + fy * fy;
                if m2 > fmax * fmax {
                    let s = fmax / m2.sqrt();
                    [fx * s, fy * s]
                } else {
                    [fx, fy]
                }
            }
            Kind::LinearAxes { cx, cy, fmax, sh } => [
                (cx * kappa).clamp(-fmax[0], fmax[0]),
                (cy * (tan_alpha + sh)).clamp(-fmax[1], fmax[1]),
            ],
            Kind::Brush {
                cx,
                cy,
                fmax,
                inv_3fmax,
                sh,
            } => brush_forces(*cx, *cy, *fmax, *inv_3fmax, kappa, tan_alpha + sh),
            Kind::MagicNormalized { x, y, px, py } => {
                finish_pair::<LATERAL>(normalized_parts::<LATERAL>(x, y, px, py, kappa, tan_alpha))
            }
            Kind::MagicWeighting { x, y, w } => weighting_forces(x, y, w, kappa, tan_alpha),
        }
    }

    /// Pure-slip forces `[fx0(kappa), fy0(tan_alpha)]`, N: each axis's force when the other
    /// slip is zero, with no combined-slip interaction (for the Magic Formula: the pure-slip
    /// curves `Fx0`, `Fy0` including their shifts; for the linear tire: each component
    /// clamped to `±mu·fz` on its own).
    pub fn pure_forces(&self, kappa: f64, tan_alpha: f64) -> [f64; 2] {
        let (kappa, tan_alpha) = saturate(kappa, tan_alpha);
        match &self.kind {
            Kind::Zero => [0.0, 0.0],
            Kind::Linear { cx, cy, fmax, sh } => [
                (cx * kappa).clamp(-fmax, *fmax),
                (cy * (tan_alpha + sh)).clamp(-fmax, *fmax),
            ],
            Kind::LinearAxes { cx, cy, fmax, sh } => [
                (cx * kappa).clamp(-fmax[0], fmax[0]),
                (cy * (tan_alpha + sh)).clamp(-fmax[1], fmax[1]),
            ],
            Kind::Brush {
                cx,
                cy,
                fmax,
                inv_3fmax,
                sh,
            } => [
                brush_forces(*cx, *cy, *fmax, *inv_3fmax, kappa, 0.0)[0],
                brush_forces(*cx, *cy, *fmax, *inv_3fmax, 0.0, tan_alpha + sh)[1],
            ],
            Kind::MagicNormalized { x, y, .. } | Kind::MagicWeighting { x, y, .. } => {
                [x.pure(kappa + x.sh), y.pure(tan_alpha + y.sh)]
            }
        }
    }

    /// The slips `[κ, tan α]` on the rising side of each pure-slip curve with the same sign
    /// and pure force as `slips` (dimensionless): a slip past its curve's peak
    /// ([`LoadedTire::peak_slip`]) is taken to the slip below the peak where the curve gives
    /// as much force, found by bisection to 1e-14 of the peak slip; one within the peak is
    /// returned as it is. Where a tire that slid past its peak comes back to once its patch
    /// sticks again: the deflection its force bends the carcass by.
    pub fn rising_slips(&self, slips: [f64; 2]) -> [f64; 2] {
        let peaks = self.peak_slip();
        let force = |axis: usize, slip: f64| {
            let mut at = [0.0; 2];
            at[axis] = slip;
            self.pure_forces(at[0], at[1])[axis].abs()
        };
        [0, 1].map(|axis| {
            let (slip, peak) = (slips[axis], peaks[axis]);
            if !(peak > 0.0 && peak.is_finite() && slip.abs() > peak) {
                return slip;
            }
            let target = force(axis, slip);
            let (mut below, mut above) = (0.0, peak.copysign(slip));
            if force(axis, above) <= target {
                return above;
            }
            for _ in 0..48 {
                let middle = 0.5 * (below + above);
                if force(axis, middle) < target {
                    below = middle;
                } else {
                    above = middle;
                }
            }
            below
        })
    }

    /// The pneumatic trail at slips `kappa`, `tan_alpha` as a fraction of its value at zero
    /// slip (dimensionless, in [0, 1]): `(1 − λ)³/(1 − λ + λ²/3)`, the brush model's law with
    /// a parabolic pressure distribution, where `λ` is how far the combined slip has gone
    /// towards full sliding (0 at no slip, 1 where the whole patch slides).
    ///
    /// With a trail `t₀` at zero slip (a third of the patch's half-length `a` for the brush
    /// model) the aligning moment is `M_z = −t₀·factor·F_y`. For a
    /// [`BrushTire`](crate::BrushTire) that is exactly the brush model's
    /// `−μ·F_z·a·λ_y·(1 − λ)³` (`λ_y` the lateral part of `λ`). The other models take the
    /// `λ` of a brush tire with their own slip stiffnesses `C` and peak forces `D`:
    /// `λ = √((C_x·κ'/D_x)² + (C_y·tan α'/D_y)²)/3`, with `κ'`, `tan α'` shifted as the model
    /// shifts them, so their trail vanishes at three times the slip at which the linear force
    /// would reach the peak. 0 for an unloaded tire or a slip that is not a number.
    pub fn trail_factor(&self, kappa: f64, tan_alpha: f64) -> f64 {
        let (kappa, tan_alpha) = saturate(kappa, tan_alpha);
        let over = |force: f64, peak: f64| force / (3.0 * peak.abs());
        let lambda = match &self.kind {
            Kind::Zero => return 0.0,
            Kind::Brush {
                cx,
                cy,
                inv_3fmax,
                sh,
                ..
            } => {
                let inv = 1.0 / (1.0 + kappa).max(BRUSH_MIN_DENOMINATOR);
                (cx * kappa * inv).hypot(cy * (tan_alpha + sh) * inv) * inv_3fmax
            }
            Kind::Linear { cx, cy, fmax, sh } => {
                (cx * kappa).hypot(cy * (tan_alpha + sh)) / (3.0 * fmax)
            }
            Kind::LinearAxes { cx, cy, fmax, sh } => {
                over(cx * kappa, fmax[0]).hypot(over(cy * (tan_alpha + sh), fmax[1]))
            }
            Kind::MagicNormalized { x, y, .. } | Kind::MagicWeighting { x, y, .. } => {
                over(x.stiffness() * (kappa + x.sh), x.d)
                    .hypot(over(y.stiffness() * (tan_alpha + y.sh), y.d))
            }
        };
        // Full sliding, or a slip that is not a number.
        if lambda >= 1.0 || lambda.is_nan() {
            return 0.0;
        }
        let rest = 1.0 - lambda;
        rest * rest * rest / (1.0 - lambda + lambda * lambda * (1.0 / 3.0))
    }

    /// Small-slip stiffnesses `[dFx/dκ, dFy/d tanα]` at zero slip, N per unit slip. For the
    /// Magic Formula these are `Kₓ` and `K_y`, the slopes at zero *shifted* slip
    /// (`κ = −S_Hx`, `tan α = −S_Hy`); for the brush and linear tires `C·fz`.
    pub fn stiffness(&self) -> [f64; 2] {
        match &self.kind {
            Kind::Zero => [0.0, 0.0],
            Kind::Linear { cx, cy, .. }
            | Kind::LinearAxes { cx, cy, .. }
            | Kind::Brush { cx, cy, .. } => [*cx, *cy],
            Kind::MagicNormalized { x, y, .. } | Kind::MagicWeighting { x, y, .. } => {
                [x.stiffness(), y.stiffness()]
            }
        }
    }

    /// Slips `[κ, tan α]` (both positive-side) at which the pure-slip curves peak. For the
    /// Magic Formula, if a curve has no finite maximum the slip where it reaches 99 % of its
    /// supremum; for the brush and linear tires the slip where full sliding starts (on the
    /// positive side, camber's shift counted), or `+∞` if it never does (zero stiffness, or a
    /// brush too soft to slide while driving).
    /// `[0, 0]` when unloaded or frictionless.
    pub fn peak_slip(&self) -> [f64; 2] {
        match &self.kind {
            Kind::Zero => [0.0, 0.0],
            Kind::Linear { cx, cy, fmax, sh } => [fmax / cx, fmax / cy - sh],
            Kind::LinearAxes { cx, cy, fmax, sh } => [fmax[0] / cx, fmax[1] / cy - sh],
            Kind::Brush {
                cx, cy, fmax, sh, ..
            } => {
                // Full sliding at λ = 1: σ = 3·μ·fz/C, with σ_x = κ/(1 + κ) and σ_y = tan α.
                let sigma_x = 3.0 * fmax / cx;
                let kappa = if sigma_x < 1.0 {
                    sigma_x / (1.0 - sigma_x)
                } else {
                    f64::INFINITY
                };
                [kappa, 3.0 * fmax / cy - sh]
            }
            Kind::MagicNormalized { x, y, px, py } => [px.pos / x.b - x.sh, py.pos / y.b - y.sh],
            Kind::MagicWeighting { x, y, .. } => [
                peak_x(x.c, x.e_pos) / x.b - x.sh,
                peak_x(y.c, y.e_pos) / y.b - y.sh,
            ],
        }
    }

    /// Peak forces `[Dx, Dy]`, N: the maxima of the shift-free pure-slip curves, which are
    /// the half-axes of the friction ellipse (`mu·fz` for the brush and linear tires). With
    /// vertical shifts a Magic Formula pure-slip curve peaks at `D + S_V`.
    pub fn peak_force(&self) -> [f64; 2] {
        match &self.kind {
            Kind::Zero => [0.0, 0.0],
            Kind::Linear { fmax, .. } | Kind::Brush { fmax, .. } => [*fmax, *fmax],
            Kind::LinearAxes { fmax, .. } => *fmax,
            Kind::MagicNormalized { x, y, .. } | Kind::MagicWeighting { x, y, .. } => [x.d, y.d],
        }
    }
}

#[inline(always)]
fn brush_forces(
    cx: f64,
    cy: f64,
    fmax: f64,
    inv_3fmax: f64,
    kappa: f64,
    tan_alpha: f64,
) -> [f64; 2] {
    let inv = 1.0 / (1.0 + kappa).max(BRUSH_MIN_DENOMINATOR);
    // (Cx·σx, Cy·σy): the force direction, and the force itself at small slip.
    let ax = cx * kappa * inv;
    let ay = cy * tan_alpha * inv;
    let m = (ax * ax + ay * ay).sqrt();
    let lambda = m * inv_3fmax;
    if lambda < 1.0 {
        // μ·fz·(3λ − 3λ² + λ³)/m with m = 3λ·μ·fz.
        let f = 1.0 - lambda + lambda * lambda * (1.0 / 3.0);
        [ax * f, ay * f]
    } else {
        let s = fmax / m;
        [ax * s, ay * s]
    }
}

/// One evaluation of a Magic Formula curve `sin(C·atan(φ_E(x)))`.
#[derive(Clone, Copy, Debug, Default)]
struct Curve {
    x: f64,
    e: f64,
    c: f64,
}

impl Curve {
    /// The curve's value.
    #[inline(always)]
    fn value(self) -> f64 {
        fastmath::sin(self.c * fastmath::atan(phi(self.x, self.e)))
    }

    /// The values of the `N` curves `curve(0)` to `curve(N − 1)`, equal to [`Curve::value`]
    /// of each bit for bit, their parameters read straight into the lanes (no array of
    /// curves copied on the way). Each step runs over all lanes before the next, four or two
    /// lanes to a register ([`fastmath::magic_curves`]), so the processor overlaps the lanes'
    /// long dependency chains (`atan → atan → sin`) instead of waiting on each in turn.
    #[inline(always)]
    fn values<const N: usize>(curve: impl Fn(usize) -> Curve) -> [f64; N] {
        let [x, e, c] = Self::lanes(curve);
        fastmath::magic_curves(x, e, c)
    }

    /// The values of two sets of `N` curves, `curve(0, i)` and `curve(1, i)`, as
    /// [`Curve::values`] of each, all evaluated together so that more lanes' chains overlap.
    #[inline(always)]
    fn values_pair<const N: usize>(curve: impl Fn(usize, usize) -> Curve) -> [[f64; N]; 2] {
        fastmath::magic_curves_pair(Self::lanes(|i| curve(0, i)), Self::lanes(|i| curve(1, i)))
    }

    /// The parameters `[x, e, c]` of the `N` curves `curve(0)` to `curve(N − 1)`, lane by
    /// lane.
    #[inline(always)]
    fn lanes<const N: usize>(curve: impl Fn(usize) -> Curve) -> [[f64; N]; 3] {
        let (mut x, mut e, mut c) = ([0.0; N], [0.0; N], [0.0; N]);
        for i in 0..N {
            let q = curve(i);
            (x[i], e[i], c[i]) = (q.x, q.e, q.c);
        }
        [x, e, c]
    }
}

/// A Magic Formula force up to its one curve evaluation, so that several tires' curves can be
/// evaluated together ([`LoadedTire::longitudinal_forces`]).
#[derive(Clone, Copy, Debug)]
enum Partial {
    /// A force that needs no curve (N).
    Done(f64),
    /// A pure-slip force, `d·curve + sv` (N).
    Pure { curve: Curve, d: f64, sv: f64 },
    /// A normalised combined-slip force, `(d·curve·share)` with the sign of `sign`, `+ sv`
    /// (N).
    Combined {
        curve: Curve,
        d: f64,
        share: f64,
        sign: f64,
        sv: f64,
    },
}

impl Partial {
    /// Whether the force needs no curve.
    #[inline(always)]
    fn is_done(&self) -> bool {
        matches!(self, Partial::Done(_))
    }

    /// The curve this force needs (a dummy one if none).
    #[inline(always)]
    fn curve(&self) -> Curve {
        match *self {
            Partial::Done(_) => Curve::default(),
            Partial::Pure { curve, .. } | Partial::Combined { curve, .. } => curve,
        }
    }

    /// The force, given `value`, the value of [`Partial::curve`].
    #[inline(always)]
    fn finish(self, value: f64) -> f64 {
        match self {
            Partial::Done(f) => f,
            Partial::Pure { d, sv, .. } => d * value + sv,
            Partial::Combined {
                d, share, sign, sv, ..
            } => (d * value * share).copysign(sign) + sv,
        }
    }

    /// The force, evaluating its curve alone.
    #[inline(always)]
    fn finish_scalar(self) -> f64 {
        match self {
            Partial::Done(f) => f,
            _ => self.finish(self.curve().value()),
        }
    }
}

/// The normalised combined-slip forces `[fx, fy]` up to their curve evaluations; without
/// `LATERAL` the lateral one is left out (`Done(0)`) where `fx` does not need it.
#[inline(always)]
fn normalized_parts<const LATERAL: bool>(
    x: &MfAxis,
    y: &MfAxis,
    px: &MfPeaks,
    py: &MfPeaks,
    kappa: f64,
    tan_alpha: f64,
) -> [Partial; 2] {
    let ux = kappa + x.sh;
    let uy = tan_alpha + y.sh;
    let lateral = |p: Partial| if LATERAL { p } else { Partial::Done(0.0) };
    if uy == 0.0 {
        return [x.pure_part(ux), Partial::Done(y.sv)];
    }
    if ux == 0.0 {
        return [Partial::Done(x.sv), lateral(y.pure_part(uy))];
    }
    let (peak_x, inv_peak_x, e_x) = if ux > 0.0 {
        (px.pos, px.inv_pos, x.e_pos)
    } else {
        (px.neg, px.inv_neg, x.e_neg)
    };
    let (peak_y, inv_peak_y, e_y) = if uy > 0.0 {
        (py.pos, py.inv_pos, y.e_pos)
    } else {
        (py.neg, py.inv_neg, y.e_neg)
    };
    // Slips normalised by their peak slips: |u|/|u_peak| = B·|u|/x*.
    let ax = ux.abs() * x.b * inv_peak_x;
    let ay = uy.abs() * y.b * inv_peak_y;
    let rho2 = ax * ax + ay * ay;
    if rho2 < RHO2_LINEAR {
        return [
            Partial::Done(x.stiffness() * ux + x.sv),
            Partial::Done(y.stiffness() * uy + y.sv),
        ];
    }
    let rho = rho2.sqrt();
    let inv_rho = 1.0 / rho;
    let combined = |axis: &MfAxis, peak: f64, e: f64, a: f64, u: f64| Partial::Combined {
        curve: Curve {
            x: rho * peak,
            e,
            c: axis.c,
        },
        d: axis.d,
        share: a * inv_rho,
        sign: u,
        sv: axis.sv,
    };
    [
        combined(x, peak_x, e_x, ax, ux),
        lateral(combined(y, peak_y, e_y, ay, uy)),
    ]
}

/// The forces `[fx, fy]` of [`normalized_parts`].
#[inline(always)]
fn finish_pair<const LATERAL: bool>([fx, fy]: [Partial; 2]) -> [f64; 2] {
    if !LATERAL {
        return [fx.finish_scalar(), 0.0];
    }
    // Both curves together: their evaluations overlap.
    let [vx, vy] = Curve::values(|i| [fx, fy][i].curve());
    [fx.finish(vx), fy.finish(vy)]
}

#[inline(always)]
fn weighting_forces(x: &MfAxis, y: &MfAxis, w: &Weights, kappa: f64, tan_alpha: f64) -> [f64; 2] {
    let fx0 = x.pure(kappa + x.sh);
    let fy0 = y.pure(tan_alpha + y.sh);
    // cos(atan(v)) = 1/√(1 + v²).
    let rx = w.r_bx2 * kappa;
    let b_xa = w.r_bx1 / (1.0 + rx * rx).sqrt();
    let g_xa = weighting(b_xa, w.r_cx1, w.r_ex1, tan_alpha + w.r_hx1, w.r_hx1);
    let ry = w.r_by2 * (tan_alpha - w.r_by3);
    let b_yk = w.r_by1 / (1.0 + ry * ry).sqrt();
    let g_yk = weighting(b_yk, w.r_cy1, w.r_ey1, kappa + w.r_hy1, w.r_hy1);
    let fx = g_xa * fx0;
    let fy = g_yk * fy0;
    // Keep the resultant inside the friction ellipse.
    let qx = fx / (x.d + x.sv.abs());
    let qy = fy / (y.d + y.sv.abs());
    let q = qx * qx + qy * qy;
    if q > 1.0 {
        let s = 1.0 / q.sqrt();
        [fx * s, fy * s]
    } else {
        [fx, fy]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slip past the peak comes back below it at the same pure force (1e-9 relative), with
    /// its sign; a slip within the peak stays as it is.
    #[test]
    fn rising_slips_keep_the_force_below_the_peak() {
        let tire = crate::TireModel::MagicFormula(
            crate::MagicFormula::passenger_205_60_r15().without_shifts(),
        )
        .at_load(4000.0, 0.9);
        let peaks = tire.peak_slip();
        for slips in [[0.6, -0.8], [-0.3, 0.5], [0.05, -0.1], [-0.15, 0.25]] {
            let rising = tire.rising_slips(slips);
            for axis in 0..2 {
                if slips[axis].abs() <= peaks[axis] {
                    assert_eq!(rising[axis], slips[axis]);
                    continue;
                }
                let pure = |s: f64| {
                    let mut at = [0.0; 2];
                    at[axis] = s;
                    tire.pure_forces(at[0], at[1])[axis]
                };
                assert!(rising[axis].abs() < peaks[axis]);
                assert_eq!(rising[axis].signum(), slips[axis].signum());
                let (f, g) = (pure(slips[axis]), pure(rising[axis]));
                assert!(((f - g) / f).abs() < 1e-9, "axis {axis}: {f} N vs {g} N");
            }
        }
    }

    #[test]
    fn saturation_keeps_direction_and_handles_infinities() {
        assert_eq!(saturate(0.3, -0.2), (0.3, -0.2));
        let (k, t) = saturate(2e12, -1e12);
        assert_eq!((k, t), (1e12, -0.5e12));
        let (k, t) = saturate(f64::INFINITY, 1.0);
        assert_eq!(k, SLIP_LIMIT);
        assert!(t > 0.0 && t < 1e-290);
        let (k, t) = saturate(f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!((k, t), (-SLIP_LIMIT, SLIP_LIMIT));
        assert!(saturate(f64::NAN, 0.0).0.is_nan());
    }

    #[test]
    fn weighting_is_one_at_its_own_shift() {
        for shift in [0.0, 0.007, -0.02] {
            for b in [0.0, 3.0, 12.35] {
                assert_eq!(weighting(b, 1.092, 0.3, shift, shift), 1.0);
            }
        }
    }
}
