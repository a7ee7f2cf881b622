//! The Pacejka Magic Formula (MF 5.2-style pure slip with load sensitivity, the lateral
//! force's camber terms, the aligning moment's pneumatic trail, no turn slip) and its
//! combined-slip methods.
//!
//! # Equations
//!
//! With `dfz = (fz − fz0)/fz0`, `λμ = mu/mu_reference` longitudinally and
//! `λμ = mu/lateral_mu_reference` laterally (when that is `None`, `mu/mu_reference·|p_dx1/p_dy1|`:
//! the same peak friction both ways, see [`MagicFormula::lateral_mu_reference`]), per axis the
//! pure-slip force is
//!
//! ```text
//! F0(u) = D·sin(C·atan(B·u − E·(B·u − atan(B·u)))) + S_V,   u = slip + S_H
//! ```
//!
//! | | longitudinal (`u = κ + S_Hx`) | lateral (`u = tan α + S_Hy`) |
//! |---|---|---|
//! | `C` | `p_cx1` | `p_cy1` |
//! | `μ` | `sₓ·(p_dx1 + p_dx2·dfz)·λμ` | `s_y·(p_dy1 + p_dy2·dfz)·λμ` |
//! | `D` | `μₓ·fz` | `μ_y·fz` |
//! | `K` | `fz·sₓ·(p_kx1 + p_kx2·dfz)·exp(p_kx3·dfz)` | `abs(p_ky1)·fz0·sin(2·atan(fz/(abs(p_ky2)·fz0)))` |
//! | `B` | `Kₓ/(Cₓ·Dₓ)` | `K_y/(C_y·D_y)` |
//! | `E` | `(p_ex1 + p_ex2·dfz + p_ex3·dfz²)·(1 − sₓ·p_ex4·sgn u)`, `≤ 1` | `(p_ey1 + p_ey2·dfz)·(1 − s_y·p_ey3·sgn u)`, `≤ 1` |
//! | `S_H` | `sₓ·(p_hx1 + p_hx2·dfz)` | `s_y·(p_hy1 + p_hy2·dfz)` |
//! | `S_V` | `fz·(p_vx1 + p_vx2·dfz)·λμ` | `fz·(p_vy1 + p_vy2·dfz)·λμ` |
//!
//! The lateral slip variable is `tan α` itself, the usual small-angle practice of MF
//! implementations (`tan α ≈ α` to 1 % below 10°).
//!
//! # Camber
//!
//! A tire leaning by its inclination angle `γ` (rad, positive when its top leans to its right,
//! ISO 8855's sign: [`TireModel::at_load_and_camber`](crate::TireModel::at_load_and_camber))
//! changes the lateral curve through [`MfCamber`]'s terms, as in Pacejka's 2006 book
//! (MF 6.1), with `γ* = sin γ`:
//!
//! | | with camber |
//! |---|---|
//! | `μ_y` | `· (1 − p_dy3·γ*²)` |
//! | `K_y` | `· (1 − p_ky3·abs(γ*))` |
//! | `E_y` | `p_ey3` becomes `p_ey3 + p_ey4·γ*` |
//! | `S_Vyγ` | `fz·(p_vy3 + p_vy4·dfz)·γ*·λμ`, added to `S_V` |
//! | `K_yγ` | `fz·(p_ky6 + p_ky7·dfz)`, the camber stiffness (N/rad) |
//! | `S_H` | `+ (K_yγ·γ* − S_Vyγ)/K_y` (in the data's slip sign) |
//!
//! so that a free-rolling tire (no slip) leaning by a small `γ` pushes `K_yγ·γ` sideways (its
//! camber thrust), towards the side it leans to in sets whose `p_ky6` has the sign of
//! `p_ky1`. The camber terms are 0 unless given: then `γ` changes nothing. Beyond
//! ±[`CAMBER_LIMIT`] (10°) they are held at its value.
//!
//! # Aligning moment
//!
//! A set that gives its trail terms ([`MfAligning`]) has a pneumatic trail of its own, the
//! MF 6.1 form of Pacejka's 2006 book without its shifts (`q_hz*`), its camber terms and its
//! residual moment (`q_bz9`, `q_dz6` and up, `s_sz*`: like the force's shifts, moments that
//! would turn a car whose left and right tires are the same), with `α` the data's slip
//! (`s_y·tan α`) combined with the longitudinal slip as `α_eq = √(α² + (Kₓ·κ/K_y)²)·sgn α`:
//!
//! ```text
//! t = D_t·cos(C_t·atan(B_t·α_eq − E_t·(B_t·α_eq − atan(B_t·α_eq))))·cos α,   M_z = −t·F_y
//! B_t = (q_bz1 + q_bz2·dfz + q_bz3·dfz²)/λμ_y,   C_t = q_cz1
//! D_t = fz·(R0/fz0)·(q_dz1 + q_dz2·dfz)
//! E_t = (q_ez1 + q_ez2·dfz + q_ez3·dfz²)·(1 + q_ez4·(2/π)·atan(B_t·C_t·α_eq)),  ≤ 1
//! ```
//!
//! `λμ_y` is the lateral friction scale (`mu/lateral_mu_reference` or its default), so the
//! trail collapses at the same fraction of the side force's peak slip on any surface, as the
//! book's `λ_Ky/λ_μy` has it. The trail shrinks as the patch slides, passes zero about
//! where the side force peaks, and turns negative beyond. `B_t` and `D_t`'s load factor are
//! floored at 1 % of their value at `fz0`, as `D` and `K` are, and the trail is held
//! within `±R0`.
//!
//! # Sign conventions of published coefficient sets
//!
//! Coefficient sets are entered **as published**. Sets in the ISO 8855 / TNO `.tir` axis
//! system (x forward, y left — the force axes of this crate) measure the slip angle
//! `α = atan(V_cy/|V_cx|)`, the opposite of this crate's `tan_alpha = −V_cy/|V_cx|`, so
//! their lateral stiffness and peak factor are negative (`p_ky1 < 0`, `p_dy1 < 0`). This
//! crate reads the orientation of each axis's slip from the sign of its stiffness factor,
//! `sₓ = sgn(p_kx1)` and `s_y = sgn(p_ky1)`, and evaluates
//! `F(slip) = F_published(s·slip)`. Because the Magic Formula is odd in the shifted slip
//! this means exactly:
//!
//! * `D` and `K` use the magnitudes, `D = s·(p_d1 + p_d2·dfz)·λμ·fz` (so the *load
//!   dependence* keeps its published meaning: with `p_dy1 = −0.990, p_dy2 = +0.145`, `μ_y`
//!   falls with load as the data says; `abs(p_dy1) + p_dy2·dfz` would be wrong);
//! * the horizontal shifts that act on the slip (`p_hx*`, `p_hy*`, and the combined-slip
//!   `r_hx1` and `r_by3`, which shift `tan α`) are multiplied by `s`;
//! * the sign-dependent curvature terms become `1 − s·p_ex4·sgn u` and `1 − s·p_ey3·sgn u`;
//! * vertical shifts `S_V` are force offsets along this crate's own axes and are used as
//!   published.
//!
//! [`MagicFormula::validate`] requires `p_dx1` to have the sign of `p_kx1` and `p_dy1` the
//! sign of `p_ky1`. Sets published in other axis systems (SAE: y to the right, z down) must
//! first be converted to the ISO / `.tir` form.
//!
//! Zero slip with zero shifts gives exactly zero force; positive `κ` gives positive `fx`
//! and positive `tan_alpha` positive `fy`.
//!
//! # Clamps (documented deviations from raw MF extrapolation)
//!
//! * `dfz` is limited to `≤ 10`: loads above `11·fz0` use the coefficients of `11·fz0`
//!   (including the `fz` inside `K_y`), still multiplied by the actual `fz`, so the
//!   polynomials cannot run away.
//! * `s·(p_d1 + p_d2·dfz)` is floored at `1 %` of `abs(p_d1)` and
//!   `sₓ·(p_kx1 + p_kx2·dfz)` at `1 %` of `abs(p_kx1)`: `D` and `K` stay positive for every
//!   load (with the published set the floors are far from active on `[0, 3·fz0]`).
//! * `E` is clamped to `≤ 1`; `B` to `≤ 1e15`.
//! * `λμ < 1e-9` (or non-finite) counts as a frictionless surface: every force is zero.
//!
//! # Combined slip
//!
//! See [`CombinedSlip`].

use serde::{Deserialize, Serialize};

use crate::error::{Checker, TireError};
use crate::fastmath;
use crate::loaded::{LoadedTire, MfAxis, MfPeaks, Weights};

/// Upper limit of the normalised load increment `dfz`.
const DFZ_MAX: f64 = 10.0;
/// The inclination (rad, 10°) beyond which the camber terms are held: sets are measured
/// within a few degrees, and past that their polynomials run away (the published car tire's
/// `1 − p_dy3·γ*²` gives 34 % more grip at 10°, 12 times as much on its side).
pub const CAMBER_LIMIT: f64 = std::f64::consts::PI / 18.0;

/// `sin γ` of a camber `γ` (rad) held within ±[`CAMBER_LIMIT`], or 0 for one that is not
/// finite: what every model's camber terms are written in.
#[inline]
pub(crate) fn camber_sine(camber: f64) -> f64 {
    if camber.is_finite() {
        fastmath::sin(camber.clamp(-CAMBER_LIMIT, CAMBER_LIMIT))
    } else {
        0.0
    }
}
/// Largest [`MfAligning::unloaded_radius`] accepted (m): larger than any tire's.
pub const MAX_UNLOADED_RADIUS: f64 = 5.0;
/// Largest slip (`κ` or `tan α`) the trail is evaluated at: its curve has long settled
/// there, and larger values would lose the curve to rounding.
const TRAIL_SLIP_LIMIT: f64 = 1e3;
/// Floor of the peak-friction and slip-stiffness factors, as a fraction of their value at
/// the nominal load.
const FACTOR_FLOOR: f64 = 0.01;
/// Upper limit of the stiffness factor `B`.
const B_MAX: f64 = 1e15;
/// Floor of the denominators of the combined-slip weighting functions.
pub(crate) const MIN_WEIGHT_DENOMINATOR: f64 = 1e-6;
/// Worst-case denominator of a weighting function that [`MagicFormula::validate`] accepts.
const VALID_WEIGHT_DENOMINATOR: f64 = 0.1;

/// How longitudinal and lateral slip combine in the [`MagicFormula`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum CombinedSlip {
    /// Normalised slip (cheap, the default). Each shifted slip is divided by the slip at
    /// which its pure-slip curve peaks (`u_peak`, solved for in
    /// [`TireModel::at_load`](crate::TireModel::at_load) on each side of zero):
    /// `sₓ = uₓ/uₓ,peak`, `s_y = u_y/u_y,peak`, `ρ = √(sₓ² + s_y²)`, and
    ///
    /// ```text
    /// Fx = (sₓ/ρ)·(Fx0(ρ·uₓ,peak) − S_Vx) + S_Vx,   Fy = (s_y/ρ)·(Fy0(ρ·u_y,peak) − S_Vy) + S_Vy
    /// ```
    ///
    /// When one shifted slip is zero this is exactly the pure-slip force of the other
    /// (bit-exact, a separate branch). With zero vertical shifts the resultant obeys
    /// `(Fx/Dx)² + (Fy/Dy)² ≤ 1`: it never leaves the friction ellipse. As `ρ → 0`
    /// (`ρ < 1e-10`) the forces are the linear terms `K·u + S_V`, the exact limit, so no
    /// division by zero occurs. If a pure-slip curve has no finite maximum (`C ≤ 1`, or
    /// `E = 1` with `C` too small), `u_peak` is the slip at which it reaches 99 % of its
    /// supremum.
    #[default]
    Normalized,
    /// The MF 5.2 combined-slip weighting functions `G_xα` and `G_yκ` (`κ` and `tan α` are
    /// the inputs, not the shifted slips):
    ///
    /// ```text
    /// B_xα = r_bx1·cos(atan(r_bx2·κ)),  α_S = tan α + S_Hxα,  S_Hxα = s_y·r_hx1
    /// G_xα = cos(r_cx1·atan(B_xα·α_S − r_ex1·(B_xα·α_S − atan(B_xα·α_S))))
    ///      / cos(r_cx1·atan(B_xα·S_Hxα − r_ex1·(B_xα·S_Hxα − atan(B_xα·S_Hxα))))
    /// B_yκ = r_by1·cos(atan(r_by2·(tan α − s_y·r_by3))),  κ_S = κ + r_hy1
    /// G_yκ = (the same form with r_cy1, r_ey1, κ_S and S_Hyκ = r_hy1)
    /// Fx = G_xα·Fx0,   Fy = G_yκ·Fy0
    /// ```
    ///
    /// Differences from MF 5.2: no load dependence of the curvature factors
    /// (`r_ex2`, `r_ey2`), no camber terms, and **no `κ`-induced side force `S_Vyκ`**
    /// (the `r_vy*` coefficients). Numerators below zero are clamped to zero (a weighting
    /// function never reverses a force), denominators are floored at `1e-6`, and the
    /// resultant is scaled down, if needed, onto the ellipse with half-axes
    /// `(Dx + abs(S_Vx), Dy + abs(S_Vy))`: the MF 5.2 weighting functions alone overshoot the
    /// friction ellipse by up to about 2 % near the combined peak with the published
    /// 205/60R15 set. A zero input slip gives a weighting of exactly 1, so with zero shifts
    /// the pure-slip curves are reproduced exactly.
    Weighting {
        /// `r_bx1`: slope factor of `G_xα` (dimensionless, `≥ 0`).
        r_bx1: f64,
        /// `r_bx2`: variation of that slope with `κ` (dimensionless).
        r_bx2: f64,
        /// `r_cx1`: shape factor of `G_xα` (dimensionless, `(0, 2]`).
        r_cx1: f64,
        /// `r_ex1`: curvature factor of `G_xα` (dimensionless, `≤ 1`).
        r_ex1: f64,
        /// `r_hx1`: shift of `tan α` in `G_xα` (unit of `tan α`, in the data's slip sign).
        r_hx1: f64,
        /// `r_by1`: slope factor of `G_yκ` (dimensionless, `≥ 0`).
        r_by1: f64,
        /// `r_by2`: variation of that slope with `tan α` (dimensionless).
        r_by2: f64,
        /// `r_by3`: shift of `tan α` in that slope (unit of `tan α`, in the data's slip
        /// sign).
        r_by3: f64,
        /// `r_cy1`: shape factor of `G_yκ` (dimensionless, `(0, 2]`).
        r_cy1: f64,
        /// `r_ey1`: curvature factor of `G_yκ` (dimensionless, `≤ 1`).
        r_ey1: f64,
        /// `r_hy1`: shift of `κ` in `G_yκ` (unit of `κ`).
        r_hy1: f64,
    },
}

impl CombinedSlip {
    /// The combined-slip coefficients of the 205/60R15 91V passenger tire of
    /// [`MagicFormula::passenger_205_60_r15`] (same source, Table A3.1). `r_ex1` and
    /// `r_ey1` are not part of that table and are set to 0.
    pub fn weighting_205_60_r15() -> Self {
        Self::Weighting {
            r_bx1: 12.35,
            r_bx2: -10.77,
            r_cx1: 1.092,
            r_ex1: 0.0,
            r_hx1: 0.007,
            r_by1: 6.461,
            r_by2: 4.196,
            r_by3: -0.015,
            r_cy1: 1.081,
            r_ey1: 0.0,
            r_hy1: 0.009,
        }
    }
}

/// Pacejka Magic Formula tire (MF 5.2-style pure slip with load sensitivity).
///
/// See the [module docs](self) for the equations, the sign conventions and the clamps.
/// Coefficients are dimensionless unless stated otherwise; "at `fz0`" means at the nominal
/// load, and "per `dfz`" the change per unit of `dfz = (fz − fz0)/fz0`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MagicFormula {
    /// Nominal load `fz0`, N (`> 0`).
    pub fz0: f64,
    /// Friction of the surface the coefficients were measured on (dimensionless, `> 0`): the
    /// friction-limited part of the force (`D` and `S_V`) scales by `mu / mu_reference`.
    ///
    /// A surface's friction coefficient is the peak longitudinal friction a tire reaches on it
    /// at its nominal load: that is what road friction figures (dry asphalt about 0.9, ice about
    /// 0.1) measure. So for a measured coefficient set, `mu_reference` is the set's own peak
    /// friction at `fz0`, `p_dx1`: on a surface of friction `mu` the tire then peaks at `mu`
    /// fore and aft (and sideways, see [`MagicFormula::lateral_mu_reference`]).
    pub mu_reference: f64,
    /// Friction of the surface the coefficients were measured on, sideways (dimensionless,
    /// `> 0` when given): the lateral `D` and `S_V` scale by `mu / lateral_mu_reference`.
    ///
    /// `None` (what serialized data gets when the field is left out, and
    /// [`MagicFormula::with_equal_peaks`]): the tire's lateral peak friction at `fz0` equals its
    /// longitudinal one on every surface, `p_dx1·mu/mu_reference`, as the friction circle of
    /// the closed forms (`v²/(2·μ·g)` braking, `μ·g` cornering) assumes; the lateral curve
    /// keeps its own shape, stiffness and load dependence (`p_dy2` relative to `p_dy1`). That
    /// is, it stands for `mu_reference·|p_dy1|/p_dx1`. `Some(mu_reference)` keeps the measured
    /// set's own ratio of lateral to longitudinal peak, as
    /// [`MagicFormula::passenger_205_60_r15`] does (0.82: on its test rig's surface the table's
    /// two peaks hold), where a car on its tires corners at about 0.77 of the `μ·g` it brakes
    /// at. A wheel's default `Tire` (in `bevy_vehicle_drivetrain`), the shipped passenger tire
    /// file and so every car built in code or from the shipped files use `None`.
    pub lateral_mu_reference: Option<f64>,
    /// `p_cx1`: shape factor `Cₓ` (dimensionless, `(0, 2]`).
    pub p_cx1: f64,
    /// `p_dx1`: longitudinal peak friction `μₓ` at `fz0` (dimensionless).
    pub p_dx1: f64,
    /// `p_dx2`: variation of `μₓ` per `dfz` (dimensionless).
    pub p_dx2: f64,
    /// `p_ex1`: curvature `Eₓ` at `fz0` (dimensionless, `≤ 1`).
    pub p_ex1: f64,
    /// `p_ex2`: variation of `Eₓ` per `dfz` (dimensionless).
    pub p_ex2: f64,
    /// `p_ex3`: variation of `Eₓ` per `dfz²` (dimensionless).
    pub p_ex3: f64,
    /// `p_ex4`: factor of `Eₓ` while driving versus braking (dimensionless).
    pub p_ex4: f64,
    /// `p_kx1`: slip stiffness `Kₓ/fz` at `fz0` (N per unit slip per N of load).
    pub p_kx1: f64,
    /// `p_kx2`: variation of `Kₓ/fz` per `dfz` (N per unit slip per N of load).
    pub p_kx2: f64,
    /// `p_kx3`: exponent of the load variation of `Kₓ/fz` (dimensionless).
    pub p_kx3: f64,
    /// `p_hx1`: horizontal shift `S_Hx` at `fz0` (unit of `κ`).
    pub p_hx1: f64,
    /// `p_hx2`: variation of `S_Hx` per `dfz` (unit of `κ`).
    pub p_hx2: f64,
    /// `p_vx1`: vertical shift `S_Vx/fz` at `fz0` (N per N of load).
    pub p_vx1: f64,
    /// `p_vx2`: variation of `S_Vx/fz` per `dfz` (N per N of load).
    pub p_vx2: f64,
    /// `p_cy1`: shape factor `C_y` (dimensionless, `(0, 2]`).
    pub p_cy1: f64,
    /// `p_dy1`: lateral peak friction `μ_y` at `fz0` (dimensionless; negative in ISO sets).
    pub p_dy1: f64,
    /// `p_dy2`: variation of `μ_y` per `dfz` (dimensionless).
    pub p_dy2: f64,
    /// `p_ey1`: curvature `E_y` at `fz0` (dimensionless, `≤ 1`).
    pub p_ey1: f64,
    /// `p_ey2`: variation of `E_y` per `dfz` (dimensionless).
    pub p_ey2: f64,
    /// `p_ey3`: asymmetry of `E_y` between positive and negative slip (dimensionless).
    /// Not in the field list of a bare MF 5.2 pure-slip core, but part of MF 5.2 and of the
    /// published set; `0` for a symmetric curve.
    pub p_ey3: f64,
    /// `p_ky1`: maximum of the cornering stiffness `K_y/fz0` (N per unit `tan α` per N of
    /// nominal load; negative in ISO sets).
    pub p_ky1: f64,
    /// `p_ky2`: load, in units of `fz0`, at which `K_y` peaks (dimensionless, `> 0`).
    pub p_ky2: f64,
    /// `p_hy1`: horizontal shift `S_Hy` at `fz0` (unit of `tan α`, in the data's slip sign).
    pub p_hy1: f64,
    /// `p_hy2`: variation of `S_Hy` per `dfz` (unit of `tan α`, in the data's slip sign).
    pub p_hy2: f64,
    /// `p_vy1`: vertical shift `S_Vy/fz` at `fz0` (N per N of load, along +y).
    pub p_vy1: f64,
    /// `p_vy2`: variation of `S_Vy/fz` per `dfz` (N per N of load).
    pub p_vy2: f64,
    /// The lateral force's camber terms (see the [module docs](self#camber)); all 0 when
    /// omitted from serialized data, and then camber has no effect.
    #[serde(default)]
    pub camber: MfCamber,
    /// The aligning moment's pneumatic-trail terms (see the
    /// [module docs](self#aligning-moment)); all 0 when omitted from serialized data, and then
    /// the tire gives no trail of its own ([`MagicFormula::pneumatic_trail`] is `None`).
    #[serde(default)]
    pub aligning: MfAligning,
    /// How longitudinal and lateral slip combine; [`CombinedSlip::Normalized`] when
    /// omitted from serialized data.
    #[serde(default)]
    pub combined: CombinedSlip,
}

/// The Magic Formula's camber terms for the lateral force (Pacejka 2006, MF 6.1 form, without
/// turn slip): see the [module docs](self#camber) for where each acts. `γ* = sin γ` is
/// dimensionless, so are these. All 0 (the default): the tire ignores its camber.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MfCamber {
    /// `p_dy3`: variation of `μ_y` with `γ*²` (dimensionless).
    pub p_dy3: f64,
    /// `p_ey4`: variation of the lateral curvature's asymmetry with `γ*` (dimensionless).
    pub p_ey4: f64,
    /// `p_ky3`: variation of the cornering stiffness `K_y` with `abs(γ*)` (dimensionless).
    pub p_ky3: f64,
    /// `p_ky6`: camber stiffness `K_yγ/fz` at `fz0` (N per unit `γ*` per N of load; in ISO
    /// sets, the sign of `p_ky1`).
    pub p_ky6: f64,
    /// `p_ky7`: variation of `K_yγ/fz` per `dfz` (N per unit `γ*` per N of load).
    pub p_ky7: f64,
    /// `p_vy3`: vertical shift `S_Vyγ/(fz·γ*)` at `fz0` (N per unit `γ*` per N of load).
    pub p_vy3: f64,
    /// `p_vy4`: variation of `S_Vyγ/(fz·γ*)` per `dfz` (N per unit `γ*` per N of load).
    pub p_vy4: f64,
}

impl MfCamber {
    /// The camber terms of [`MagicFormula::passenger_205_60_r15`]'s table (Pacejka 2006,
    /// Table A3.1, from the same transcription): `p_dy3 = −11.23`, `p_ey4 = −4.787`,
    /// `p_ky3 = −0.028`, `p_ky6 = −0.92`, `p_ky7 = −0.24`, `p_vy3 = −0.532`, `p_vy4 = 0.039`.
    /// Its camber stiffness is 0.92 N per radian of lean per N of load: at the nominal 4000 N,
    /// 64 N of camber thrust per degree.
    pub fn passenger_205_60_r15() -> Self {
        Self {
            p_dy3: -11.23,
            p_ey4: -4.787,
            p_ky3: -0.028,
            p_ky6: -0.92,
            p_ky7: -0.24,
            p_vy3: -0.532,
            p_vy4: 0.039,
        }
    }

    fn validate(&self) -> Result<(), TireError> {
        let c = Checker {
            prefix: "magic_formula.camber",
        };
        for (name, value) in [
            ("p_dy3", self.p_dy3),
            ("p_ey4", self.p_ey4),
            ("p_ky3", self.p_ky3),
            ("p_ky6", self.p_ky6),
            ("p_ky7", self.p_ky7),
            ("p_vy3", self.p_vy3),
            ("p_vy4", self.p_vy4),
        ] {
            c.finite(name, value)?;
        }
        Ok(())
    }
}

/// The Magic Formula's pneumatic-trail terms for the aligning moment (Pacejka 2006, MF 6.1
/// form, without camber, turn slip, shifts or the residual moment): see the
/// [module docs](self#aligning-moment) for the equations. All 0 (the default): the tire
/// gives no trail of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MfAligning {
    /// `R0`: the unloaded radius of the tire the set was measured on (m, `> 0` when any term
    /// is given, at most [`MAX_UNLOADED_RADIUS`]). The trail scales with it:
    /// `D_t = fz·(R0/fz0)·(q_dz1 + q_dz2·dfz)`, and is held within `±R0` (the contact patch
    /// is shorter than the tire's diameter).
    pub unloaded_radius: f64,
    /// `q_bz1`: the trail's slope factor `B_t` at `fz0` (per unit `tan α`, `> 0` when given).
    pub q_bz1: f64,
    /// `q_bz2`: variation of `B_t` per `dfz` (per unit `tan α`).
    pub q_bz2: f64,
    /// `q_bz3`: variation of `B_t` per `dfz²` (per unit `tan α`).
    pub q_bz3: f64,
    /// `q_cz1`: the trail's shape factor `C_t` (dimensionless, `(0, 2]` when given).
    pub q_cz1: f64,
    /// `q_dz1`: the trail at zero slip and `fz0` as a fraction of `R0` (dimensionless, `> 0`
    /// when given).
    pub q_dz1: f64,
    /// `q_dz2`: variation of that fraction per `dfz` (dimensionless).
    pub q_dz2: f64,
    /// `q_ez1`: the trail's curvature `E_t` at `fz0` (dimensionless, `≤ 1`).
    pub q_ez1: f64,
    /// `q_ez2`: variation of `E_t` per `dfz` (dimensionless).
    pub q_ez2: f64,
    /// `q_ez3`: variation of `E_t` per `dfz²` (dimensionless).
    pub q_ez3: f64,
    /// `q_ez4`: variation of `E_t` with the slip's sign and size (dimensionless): the factor
    /// `1 + q_ez4·(2/π)·atan(B_t·C_t·α)`, `α` in the data's slip sign.
    pub q_ez4: f64,
}

impl MfAligning {
    /// The trail terms of [`MagicFormula::passenger_205_60_r15`]'s table (Pacejka 2006,
    /// Table A3.1, from the same transcription): `R0 = 0.313` m, `q_bz1 = 8.964`,
    /// `q_bz2 = −1.106`, `q_bz3 = −0.842`, `q_cz1 = 1.180`, `q_dz1 = 0.100`,
    /// `q_dz2 = −0.001`, `q_ez1 = −1.609`, `q_ez2 = −0.359`, `q_ez3 = 0`, `q_ez4 = 0.174`.
    /// At the nominal 4000 N on the table's surface the trail at zero slip is 31.3 mm, the
    /// aligning moment peaks at 64 N·m near 4° of slip, and the trail passes zero near 15°,
    /// where the side force peaks.
    pub fn passenger_205_60_r15() -> Self {
        Self {
            unloaded_radius: 0.313,
            q_bz1: 8.964,
            q_bz2: -1.106,
            q_bz3: -0.842,
            q_cz1: 1.180,
            q_dz1: 0.100,
            q_dz2: -0.001,
            q_ez1: -1.609,
            q_ez2: -0.359,
            q_ez3: 0.0,
            q_ez4: 0.174,
        }
    }

    /// Whether any term is given (the tire then has a trail of its own).
    pub fn is_given(&self) -> bool {
        *self != Self::default()
    }

    fn validate(&self) -> Result<(), TireError> {
        let c = Checker {
            prefix: "magic_formula.aligning",
        };
        for (name, value) in [
            ("unloaded_radius", self.unloaded_radius),
            ("q_bz1", self.q_bz1),
            ("q_bz2", self.q_bz2),
            ("q_bz3", self.q_bz3),
            ("q_cz1", self.q_cz1),
            ("q_dz1", self.q_dz1),
            ("q_dz2", self.q_dz2),
            ("q_ez1", self.q_ez1),
            ("q_ez2", self.q_ez2),
            ("q_ez3", self.q_ez3),
            ("q_ez4", self.q_ez4),
        ] {
            c.finite(name, value)?;
        }
        if self.is_given() {
            c.positive("unloaded_radius", self.unloaded_radius)?;
            if self.unloaded_radius > MAX_UNLOADED_RADIUS {
                return Err(c.fail(
                    "unloaded_radius",
                    format!(
                        "must be at most {MAX_UNLOADED_RADIUS} m, got {} m",
                        self.unloaded_radius
                    ),
                ));
            }
            c.positive("q_bz1", self.q_bz1)?;
            c.shape_factor("q_cz1", self.q_cz1)?;
            c.positive("q_dz1", self.q_dz1)?;
            c.at_most_one("q_ez1", self.q_ez1)?;
        }
        Ok(())
    }
}

impl Default for MagicFormula {
    /// The published passenger-car set, [`MagicFormula::passenger_205_60_r15`], with
    /// [`CombinedSlip::Normalized`].
    fn default() -> Self {
        Self::passenger_205_60_r15()
    }
}

impl MagicFormula {
    /// A 205/60R15 91V passenger-car tire at 2.2 bar, nominal load 4000 N.
    ///
    /// Source: H. B. Pacejka, *Tyre and Vehicle Dynamics*, 2nd ed., Butterworth-Heinemann
    /// (2006), Appendix 3, Table A3.1 (the book's worked-example car tire; ISO sign
    /// convention, hence negative `p_dy1` and `p_ky1`), as transcribed in the public data
    /// file `data/tires/pacejka_2006_205_60r15/car.tyr.yaml` of the GitHub repository
    /// `KMoula30/outlap` (commit `331f0b5f`). Only the numbers are taken. Scaling factors
    /// (`λ`) are 1; the camber terms are left at 0 (the table's are
    /// [`MfCamber::passenger_205_60_r15`]: a tire that leans with its body needs the
    /// suspension's camber kinematics too, which vehicles give through their suspension's
    /// `camber` and `camber_gain`); `mu_reference` is the set's peak
    /// longitudinal friction at `fz0` (`p_dx1`, see [`MagicFormula::mu_reference`]), so on a
    /// surface of friction μ this tire brakes at μ at its nominal load, and so is
    /// `lateral_mu_reference`: on that surface it corners at 0.82·μ, as on the rig the
    /// table's two peaks hold ([`MagicFormula::with_equal_peaks`] gives the tire that corners
    /// at μ too). Combined slip is
    /// [`CombinedSlip::Normalized`]; see [`MagicFormula::passenger_205_60_r15_weighting`]
    /// for the table's own combined-slip coefficients.
    pub fn passenger_205_60_r15() -> Self {
        Self {
            fz0: 4000.0,
            mu_reference: 1.210,
            lateral_mu_reference: Some(1.210),
            p_cx1: 1.685,
            p_dx1: 1.210,
            p_dx2: -0.037,
            p_ex1: 0.344,
            p_ex2: 0.095,
            p_ex3: -0.020,
            p_ex4: 0.0,
            p_kx1: 21.51,
            p_kx2: -0.163,
            p_kx3: 0.245,
            p_hx1: -0.002,
            p_hx2: 0.002,
            p_vx1: 0.0,
            p_vx2: 0.0,
            p_cy1: 1.193,
            p_dy1: -0.990,
            p_dy2: 0.145,
            p_ey1: -1.003,
            p_ey2: -0.537,
            p_ey3: -0.083,
            p_ky1: -14.95,
            p_ky2: 2.130,
            p_hy1: 0.003,
            p_hy2: -0.001,
            p_vy1: 0.045,
            p_vy2: -0.024,
            camber: MfCamber::default(),
            aligning: MfAligning::default(),
            combined: CombinedSlip::Normalized,
        }
    }

    /// The same tire without its shift terms (`p_h*`, `p_v*`: ply steer, conicity and rolling
    /// resistance offsets of a rolling tire), so its force is zero at zero slip and odd in each
    /// slip. Four identical shifted tires would push a symmetric car sideways and make a parked
    /// one creep; use this unless left and right tires are modelled separately.
    pub fn without_shifts(self) -> Self {
        Self {
            p_hx1: 0.0,
            p_hx2: 0.0,
            p_vx1: 0.0,
            p_vx2: 0.0,
            p_hy1: 0.0,
            p_hy2: 0.0,
            p_vy1: 0.0,
            p_vy2: 0.0,
            ..self
        }
    }

    /// The same tire with its lateral peak friction at `fz0` equal to its longitudinal one on
    /// every surface ([`MagicFormula::lateral_mu_reference`] `None`): on a road of friction μ it
    /// brakes and corners at μ at its nominal load, as the closed forms of vehicle dynamics
    /// take a road's μ to mean.
    pub fn with_equal_peaks(self) -> Self {
        Self {
            lateral_mu_reference: None,
            ..self
        }
    }

    /// [`MagicFormula::passenger_205_60_r15`] with the table's MF combined-slip weighting
    /// functions, [`CombinedSlip::weighting_205_60_r15`].
    pub fn passenger_205_60_r15_weighting() -> Self {
        Self {
            combined: CombinedSlip::weighting_205_60_r15(),
            ..Self::passenger_205_60_r15()
        }
    }

    /// Checks that every coefficient can be used; see [`TireModel::validate`](crate::TireModel::validate).
    pub fn validate(&self) -> Result<(), TireError> {
        let c = Checker {
            prefix: "magic_formula",
        };
        let all = [
            ("fz0", self.fz0),
            ("mu_reference", self.mu_reference),
            ("p_cx1", self.p_cx1),
            ("p_dx1", self.p_dx1),
            ("p_dx2", self.p_dx2),
            ("p_ex1", self.p_ex1),
            ("p_ex2", self.p_ex2),
            ("p_ex3", self.p_ex3),
            ("p_ex4", self.p_ex4),
            ("p_kx1", self.p_kx1),
            ("p_kx2", self.p_kx2),
            ("p_kx3", self.p_kx3),
            ("p_hx1", self.p_hx1),
            ("p_hx2", self.p_hx2),
            ("p_vx1", self.p_vx1),
            ("p_vx2", self.p_vx2),
            ("p_cy1", self.p_cy1),
            ("p_dy1", self.p_dy1),
            ("p_dy2", self.p_dy2),
            ("p_ey1", self.p_ey1),
            ("p_ey2", self.p_ey2),
            ("p_ey3", self.p_ey3),
            ("p_ky1", self.p_ky1),
            ("p_ky2", self.p_ky2),
            ("p_hy1", self.p_hy1),
            ("p_hy2", self.p_hy2),
            ("p_vy1", self.p_vy1),
            ("p_vy2", self.p_vy2),
        ];
        for (name, value) in all {
            c.finite(name, value)?;
        }
        self.camber.validate()?;
        self.aligning.validate()?;
        c.positive("fz0", self.fz0)?;
        c.positive("mu_reference", self.mu_reference)?;
        if let Some(reference) = self.lateral_mu_reference {
            c.finite("lateral_mu_reference", reference)?;
            c.positive("lateral_mu_reference", reference)?;
        }
        c.shape_factor("p_cx1", self.p_cx1)?;
        c.shape_factor("p_cy1", self.p_cy1)?;
        c.at_most_one("p_ex1", self.p_ex1)?;
        c.at_most_one("p_ey1", self.p_ey1)?;
        c.positive("p_ky2", self.p_ky2)?;
        for (d_name, d, k_name, k) in [
            ("p_dx1", self.p_dx1, "p_kx1", self.p_kx1),
            ("p_dy1", self.p_dy1, "p_ky1", self.p_ky1),
        ] {
            if k == 0.0 {
                return Err(c.fail(k_name, "slip stiffness factor must not be 0"));
            }
            if d == 0.0 {
                return Err(c.fail(d_name, "peak friction factor must not be 0"));
            }
            if (d > 0.0) != (k > 0.0) {
                return Err(c.fail(
                    d_name,
                    format!("must have the sign of {k_name} ({k}), got {d}"),
                ));
            }
        }
        if let CombinedSlip::Weighting {
            r_bx1,
            r_bx2,
            r_cx1,
            r_ex1,
            r_hx1,
            r_by1,
            r_by2,
            r_by3,
            r_cy1,
            r_ey1,
            r_hy1,
        } = self.combined
        {
            let c = Checker {
                prefix: "magic_formula.combined",
            };
            for (name, value) in [
                ("r_bx2", r_bx2),
                ("r_hx1", r_hx1),
                ("r_by2", r_by2),
                ("r_by3", r_by3),
                ("r_hy1", r_hy1),
            ] {
                c.finite(name, value)?;
            }
            c.non_negative("r_bx1", r_bx1)?;
            c.non_negative("r_by1", r_by1)?;
            c.shape_factor("r_cx1", r_cx1)?;
            c.shape_factor("r_cy1", r_cy1)?;
            c.at_most_one("r_ex1", r_ex1)?;
            c.at_most_one("r_ey1", r_ey1)?;
            // The slope factor never exceeds r_b1, so this is the smallest denominator.
            for (name, b, cc, e, shift) in [
                ("r_hx1", r_bx1, r_cx1, r_ex1, r_hx1),
                ("r_hy1", r_by1, r_cy1, r_ey1, r_hy1),
            ] {
                let den = weight_denominator(b, cc, e, shift.abs());
                if den < VALID_WEIGHT_DENOMINATOR {
                    return Err(c.fail(
                        name,
                        format!(
                            "shift too large: the weighting function's denominator falls to {den:.3e} (must stay ≥ {VALID_WEIGHT_DENOMINATOR})"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The factor on the lateral `D` and `S_V` on a surface of friction `mu`
    /// (dimensionless): `mu` over [`MagicFormula::lateral_mu_reference`] or its default.
    pub fn lateral_friction_scale(&self, mu: f64) -> f64 {
        self.lateral_scale(mu, mu / self.mu_reference)
    }

    /// [`MagicFormula::lateral_friction_scale`] given the longitudinal one, `lambda_mu`
    /// (`mu` over [`MagicFormula::mu_reference`]), which the default lateral scale builds on.
    fn lateral_scale(&self, mu: f64, lambda_mu: f64) -> f64 {
        match self.lateral_mu_reference {
            Some(reference) => mu / reference,
            None => lambda_mu * (self.p_dx1 / self.p_dy1).abs(),
        }
    }

    /// The tire's pneumatic trail (m, positive behind the contact centre) at the slips
    /// `kappa`, `tan_alpha` (this crate's signs) of `tire`, this model evaluated at its load on
    /// a surface of friction `mu`: the aligning moment is `M_z = −t·F_y`. `None` unless the set
    /// gives its trail terms ([`MfAligning`]; see the [module docs](self#aligning-moment) for
    /// the equations). `Some(0.0)` for an unloaded tire, a frictionless surface or a slip that
    /// is not a number.
    pub fn pneumatic_trail(
        &self,
        tire: &LoadedTire,
        mu: f64,
        kappa: f64,
        tan_alpha: f64,
    ) -> Option<f64> {
        let a = &self.aligning;
        if !a.is_given() {
            return None;
        }
        let fz = tire.load();
        let lambda_mu_y = self.lateral_friction_scale(mu);
        let [kx, ky] = tire.stiffness();
        if !(fz > 0.0 && lambda_mu_y > 1e-9 && ky > 0.0 && kappa.is_finite()) {
            return Some(0.0);
        }
        if !tan_alpha.is_finite() {
            return Some(0.0);
        }
        let (kappa, tan_alpha) = (
            kappa.clamp(-TRAIL_SLIP_LIMIT, TRAIL_SLIP_LIMIT),
            tan_alpha.clamp(-TRAIL_SLIP_LIMIT, TRAIL_SLIP_LIMIT),
        );
        let dfz = ((fz - self.fz0) / self.fz0).min(DFZ_MAX);
        let dt = fz
            * (a.unloaded_radius / self.fz0)
            * (a.q_dz1 + a.q_dz2 * dfz).max(FACTOR_FLOOR * a.q_dz1.abs());
        let bt = (a.q_bz1 + a.q_bz2 * dfz + a.q_bz3 * dfz * dfz).max(FACTOR_FLOOR * a.q_bz1.abs())
            / lambda_mu_y;
        let ct = a.q_cz1;
        // The slip in the data's sign, combined with the longitudinal slip it equals in force.
        let alpha = sign(self.p_ky1) * tan_alpha;
        let alpha_eq = alpha.hypot(kx / ky * kappa).copysign(alpha);
        let et = ((a.q_ez1 + a.q_ez2 * dfz + a.q_ez3 * dfz * dfz)
            * (1.0 + a.q_ez4 * std::f64::consts::FRAC_2_PI * (bt * ct * alpha_eq).atan()))
        .min(1.0);
        let x = bt * alpha_eq;
        let cos_alpha = 1.0 / tan_alpha.hypot(1.0);
        let trail = dt * (ct * (x - et * (x - x.atan())).atan()).cos() * cos_alpha;
        // Terms at the edge of the floats (a slope of 1e308) can take `x` to infinity.
        if trail.is_nan() {
            return Some(0.0);
        }
        Some(trail.clamp(-a.unloaded_radius, a.unloaded_radius))
    }

    /// Precomputes every load- and friction-dependent coefficient for load `fz` (N) on a
    /// surface of friction `mu`; see [`TireModel::at_load`](crate::TireModel::at_load).
    /// Assumes coefficients that pass [`MagicFormula::validate`].
    pub fn at_load(&self, fz: f64, mu: f64) -> LoadedTire {
        self.loaded(fz, mu, 0.0, None)
    }

    /// [`MagicFormula::at_load`] for a tire leaning by `camber` (rad); see
    /// [`TireModel::at_load_and_camber`](crate::TireModel::at_load_and_camber).
    pub fn at_load_and_camber(&self, fz: f64, mu: f64, camber: f64) -> LoadedTire {
        self.loaded(fz, mu, camber, None)
    }

    /// [`MagicFormula::at_load_and_camber`] with the peak-slip solves started from `near`'s
    /// peaks; see [`TireModel::at_load_near`](crate::TireModel::at_load_near).
    pub(crate) fn at_load_near(
        &self,
        fz: f64,
        mu: f64,
        camber: f64,
        near: &LoadedTire,
    ) -> LoadedTire {
        self.loaded(fz, mu, camber, near.normalized_peaks())
    }

    /// The tire at load `fz` (N), friction `mu` and inclination `camber` (rad), with the
    /// normalised combined-slip peaks solved from `near` (longitudinal, lateral) when given.
    fn loaded(&self, fz: f64, mu: f64, camber: f64, near: Option<[MfPeaks; 2]>) -> LoadedTire {
        let lambda_mu = mu / self.mu_reference;
        let lambda_mu_y = self.lateral_scale(mu, lambda_mu);
        if let Some(trivial) = LoadedTire::without_force(fz, lambda_mu) {
            return trivial;
        }
        let dfz = ((fz - self.fz0) / self.fz0).min(DFZ_MAX);

        // Longitudinal.
        let sx = sign(self.p_kx1);
        let mu_x = (sx * (self.p_dx1 + self.p_dx2 * dfz)).max(FACTOR_FLOOR * self.p_dx1.abs());
        let dx = mu_x * lambda_mu * fz;
        let kx_per_load = (sx * (self.p_kx1 + self.p_kx2 * dfz))
            .max(FACTOR_FLOOR * self.p_kx1.abs())
            * fastmath::exp(self.p_kx3 * dfz);
        let kx = kx_per_load * fz;
        let ex = self.p_ex1 + self.p_ex2 * dfz + self.p_ex3 * dfz * dfz;
        let x = MfAxis {
            b: (kx / (self.p_cx1 * dx)).min(B_MAX),
            c: self.p_cx1,
            d: dx,
            e_pos: (ex * (1.0 - sx * self.p_ex4)).min(1.0),
            e_neg: (ex * (1.0 + sx * self.p_ex4)).min(1.0),
            sh: sx * (self.p_hx1 + self.p_hx2 * dfz),
            sv: fz * (self.p_vx1 + self.p_vx2 * dfz) * lambda_mu,
        };

        // Lateral, with the camber terms (all zero without camber, or without the terms).
        let sy = sign(self.p_ky1);
        let cam = &self.camber;
        let g = if *cam != MfCamber::default() {
            camber_sine(camber)
        } else {
            0.0
        };
        let mu_y = (sy * (self.p_dy1 + self.p_dy2 * dfz)).max(FACTOR_FLOOR * self.p_dy1.abs())
            * (1.0 - cam.p_dy3 * g * g).max(FACTOR_FLOOR);
        let dy = mu_y * lambda_mu_y * fz;
        let fz_k = self.fz0 * (1.0 + dfz);
        let ky = self.p_ky1.abs()
            * self.fz0
            * fastmath::sin(2.0 * fastmath::atan(fz_k / (self.p_ky2.abs() * self.fz0)))
            * (1.0 - cam.p_ky3 * g.abs()).max(FACTOR_FLOOR);
        let ey = self.p_ey1 + self.p_ey2 * dfz;
        let asymmetry = self.p_ey3 + cam.p_ey4 * g;
        let mut sh = sy * (self.p_hy1 + self.p_hy2 * dfz);
        let mut sv = fz * (self.p_vy1 + self.p_vy2 * dfz) * lambda_mu_y;
        if g != 0.0 {
            // `S_Hyγ = (K_yγ·γ* − S_Vyγ)/K_y` in the data's slip sign, whose `K_y` is
            // `s_y·ky`: times `s_y` into this crate's, the signs cancel.
            let sv_camber = fz * (cam.p_vy3 + cam.p_vy4 * dfz) * g * lambda_mu_y;
            let camber_stiffness = fz * (cam.p_ky6 + cam.p_ky7 * dfz);
            sh += (camber_stiffness * g - sv_camber) / ky;
            sv += sv_camber;
        }
        let y = MfAxis {
            b: (ky / (self.p_cy1 * dy)).min(B_MAX),
            c: self.p_cy1,
            d: dy,
            e_pos: (ey * (1.0 - sy * asymmetry)).min(1.0),
            e_neg: (ey * (1.0 + sy * asymmetry)).min(1.0),
            sh,
            sv,
        };

        match self.combined {
            CombinedSlip::Normalized => {
                let [px, py] = MfPeaks::both([&x, &y], near);
                LoadedTire::magic_normalized(fz, x, y, px, py)
            }
            CombinedSlip::Weighting {
                r_bx1,
                r_bx2,
                r_cx1,
                r_ex1,
                r_hx1,
                r_by1,
                r_by2,
                r_by3,
                r_cy1,
                r_ey1,
                r_hy1,
            } => LoadedTire::magic_weighting(
                fz,
                x,
                y,
                Weights {
                    r_bx1,
                    r_bx2,
                    r_cx1,
                    r_ex1: r_ex1.min(1.0),
                    r_hx1: sy * r_hx1,
                    r_by1,
                    r_by2,
                    r_by3: sy * r_by3,
                    r_cy1,
                    r_ey1: r_ey1.min(1.0),
                    r_hy1,
                },
            ),
        }
    }
}

/// `+1` for positive or zero values, `−1` for negative ones.
fn sign(v: f64) -> f64 {
    if v < 0.0 { -1.0 } else { 1.0 }
}

/// `(1 − E)·x + E·atan(x)`, i.e. `x − E·(x − atan x)`.
#[inline(always)]
pub(crate) fn phi(x: f64, e: f64) -> f64 {
    if e == 0.0 {
        x
    } else {
        (1.0 - e) * x + e * fastmath::atan(x)
    }
}

/// `cos(C·atan(φ(B·shift)))`, the denominator of a weighting function.
pub(crate) fn weight_denominator(b: f64, c: f64, e: f64, shift: f64) -> f64 {
    fastmath::cos(c * fastmath::atan(phi(b * shift, e)))
}

/// Dimensionless peak location `x* = B·u_peak > 0` of `sin(C·atan(φ(x)))` for `x > 0`
/// (`E ≤ 1`): where `C·atan(φ) = π/2` if that is reachable, otherwise where the curve
/// reaches 99 % of its supremum.
pub(crate) fn peak_x(c: f64, e: f64) -> f64 {
    peak_x_from(c, e, None)
}

/// [`peak_x`], with the solve started from `start` when given (a nearby peak).
pub(crate) fn peak_x_from(c: f64, e: f64, start: Option<f64>) -> f64 {
    let e = e.min(1.0);
    let target = peak_phi(c, e);
    solve_phi(e, target, start.unwrap_or_else(|| start_guess(e, target)))
}

/// A starting point for [`solve_phi`]: the root of `φ(x) = target` with
/// `atan(x) ≈ π/2 − 1/x` (a quadratic), within a few percent for `x ≳ 1`, which is where
/// peaks lie (`target ≥ 1`).
pub(crate) fn start_guess(e: f64, target: f64) -> f64 {
    let q = target - e * std::f64::consts::FRAC_PI_2;
    let disc = q * q + 4.0 * (1.0 - e) * e;
    if e < 1.0 && disc >= 0.0 {
        (q + disc.sqrt()) / (2.0 * (1.0 - e))
    } else {
        target
    }
}

/// The value of `φ` at the peak (see [`peak_x`]); depends on `E` only through `E = 1`.
pub(crate) fn peak_phi(c: f64, e: f64) -> f64 {
    use std::f64::consts::FRAC_PI_2;
    let phi_sup = if e < 1.0 { f64::INFINITY } else { FRAC_PI_2 };
    let theta_sup = c * fastmath::atan(phi_sup);
    if theta_sup > FRAC_PI_2 {
        fastmath::tan(FRAC_PI_2 / c)
    } else {
        fastmath::tan(fastmath::asin(0.99 * fastmath::sin(theta_sup)) / c)
    }
}

/// Solves `φ(x) = (1 − E)·x + E·atan(x) = target` for `x ≥ 0` (`E ≤ 1`, `target > 0`;
/// with `E = 1`, `target < π/2`). `φ` is increasing with `φ'` between `min(1, 1 − E)` and
/// `max(1, 1 − E)`, so Halley's method (cubic convergence, with a bisection safeguard)
/// from a good `start` needs two or three steps. Once a step is below `1e-6·x` the next
/// iterate is exact to rounding (cubic convergence), and is returned.
pub(crate) fn solve_phi(e: f64, target: f64, start: f64) -> f64 {
    solve_phi_lanes([e], [target], [start])[0]
}

/// [`solve_phi`] for every lane, bit-equal to it: the lanes iterate together, so the
/// processor overlaps their `atan`s and divisions.
#[inline(always)]
pub(crate) fn solve_phi_lanes<const N: usize>(
    e: [f64; N],
    target: [f64; N],
    start: [f64; N],
) -> [f64; N] {
    let mut x = [0.0; N];
    let mut lo = [0.0_f64; N];
    let mut hi = [0.0; N];
    let mut active = [false; N];
    for i in 0..N {
        if e[i] >= 1.0 {
            x[i] = fastmath::tan(target[i]);
            continue;
        }
        hi[i] = if e[i] <= 0.0 {
            target[i]
        } else {
            target[i] / (1.0 - e[i])
        };
        x[i] = if start[i] > lo[i] && start[i] < hi[i] {
            start[i]
        } else {
            target[i].min(hi[i])
        };
        active[i] = true;
    }
    for _ in 0..100 {
        if !active.contains(&true) {
            break;
        }
        let atan_x = fastmath::atan_lanes(x);
        for i in 0..N {
            if !active[i] {
                continue;
            }
            let (xi, ei) = (x[i], e[i]);
            // `phi(xi, ei)`, with the `atan` taken above.
            let phi = if ei == 0.0 {
                xi
            } else {
                (1.0 - ei) * xi + ei * atan_x[i]
            };
            let h = phi - target[i];
            if h == 0.0 {
                active[i] = false;
                continue;
            } else if h > 0.0 {
                hi[i] = xi;
            } else {
                lo[i] = xi;
            }
            let w = 1.0 / (1.0 + xi * xi);
            let d1 = (1.0 - ei) + ei * w;
            let d2 = -2.0 * ei * xi * w * w;
            let step = 2.0 * h * d1 / (2.0 * d1 * d1 - h * d2);
            let mut next = xi - step;
            if !(next > lo[i] && next < hi[i]) {
                next = 0.5 * (lo[i] + hi[i]);
            }
            let done = (next - xi).abs() <= 1e-6 * next;
            x[i] = next;
            if done {
                active[i] = false;
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four solves together give each solve alone, bit for bit: curvatures on both sides of
    /// 0 and at and above 1, starts inside and outside the bracket, in every lane.
    #[test]
    fn solves_in_lanes_are_each_solve_alone_to_the_bit() {
        let es = [-5.0, -0.4, 0.0, 1e-9, 0.3, 0.97, 1.0, 1.5];
        let targets = [0.05, 1.0, 1.4, 3.7, 40.0];
        let starts = [-1.0, 0.0, 0.2, 1.0, 2.5, 1e3, f64::NAN];
        let jobs: Vec<[f64; 3]> = es
            .iter()
            .flat_map(|&e| targets.iter().map(move |&t| (e, t)))
            .flat_map(|(e, t)| starts.iter().map(move |&s| [e, t, s]))
            .collect();
        for n in 0..jobs.len() {
            let lanes: [[f64; 3]; 4] = std::array::from_fn(|l| jobs[(n + l * 37) % jobs.len()]);
            let together = solve_phi_lanes(
                lanes.map(|j| j[0]),
                lanes.map(|j| j[1]),
                lanes.map(|j| j[2]),
            );
            for (l, [e, t, s]) in lanes.into_iter().enumerate() {
                let alone = solve_phi(e, t, s);
                assert_eq!(
                    together[l].to_bits(),
                    alone.to_bits(),
                    "lane {l}: E {e}, target {t}, start {s}: {} vs {alone}",
                    together[l]
                );
            }
        }
    }

    #[test]
    fn peak_x_closed_form_when_e_is_zero() {
        // E = 0: φ = x, so x* = tan(π/(2C)).
        for c in [1.1, 1.3, 1.5, 1.685, 1.9, 2.0] {
            let expected = (std::f64::consts::FRAC_PI_2 / c).tan();
            let got = peak_x(c, 0.0);
            assert!(
                (got - expected).abs() <= 1e-13 * expected,
                "C={c}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn peak_x_solves_the_curvature_equation() {
        for c in [1.05, 1.193, 1.685, 2.0] {
            for e in [-5.0, -1.0, -0.3, 0.0, 0.3, 0.9, 0.999, 1.0] {
                let x = peak_x(c, e);
                let theta = c * (x - e * (x - x.atan())).atan();
                if e < 1.0 || c * std::f64::consts::FRAC_PI_2.atan() > std::f64::consts::FRAC_PI_2 {
                    assert!(
                        (theta - std::f64::consts::FRAC_PI_2).abs() < 1e-12,
                        "C={c} E={e}: θ={theta}"
                    );
                }
            }
        }
    }

    #[test]
    fn peak_x_without_finite_maximum_is_the_99_percent_point() {
        for (c, e) in [(1.0, 0.0), (0.8, 0.5), (0.5, -2.0), (1.2, 1.0)] {
            let x = peak_x(c, e);
            let sup = if e < 1.0 {
                (c * std::f64::consts::FRAC_PI_2).sin()
            } else {
                (c * std::f64::consts::FRAC_PI_2.atan()).sin()
            };
            let value = (c * (x - e * (x - x.atan())).atan()).sin();
            assert!((value - 0.99 * sup).abs() < 1e-12, "C={c} E={e}");
        }
    }
}
