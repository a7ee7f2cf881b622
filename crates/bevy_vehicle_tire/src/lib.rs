//! Tire force models for `bevy_vehicle_physics`: pure, deterministic `f64` math with no
//! Bevy dependency.
//!
//! | model | what it is for |
//! |---|---|
//! | [`MagicFormula`] | Pacejka Magic Formula (MF 5.2-style pure slip with load sensitivity) with two combined-slip methods; ships a published passenger-car coefficient set |
//! | [`BrushTire`] | the physical brush model with parabolic pressure: cheap, two parameters |
//! | [`LinearTire`] | linear stiffness with a friction-circle clamp: cheapest, for traffic |
//!
//! These are **steady-state force laws only**. The caller — a wheel with a
//! relaxation-length slip model — owns the slip dynamics and passes the slips in.
//!
//! # Conventions
//!
//! **Tire frame.** `x` forward along the wheel heading projected on the ground, `y` to the
//! **left**, `z` up along the ground normal (ISO 8855 orientation).
//!
//! **Slip inputs.**
//! * `kappa` — longitudinal slip ratio (dimensionless), positive when the tire drives, i.e.
//!   when the tread moves backward relative to the ground. In steady state
//!   `κ = (R·ω − v_x)/|v_x|`.
//! * `tan_alpha` — tangent of the slip angle, signed so that a **positive** `tan_alpha`
//!   gives a **positive (leftward)** lateral force. In steady state
//!   `tan_alpha = −v_y/|v_x|`, with `v_y` the lateral velocity of the contact point.
//!
//! **Outputs.** `[fx, fy]` in N: `fx > 0` propels the vehicle forward, `fy > 0` points left.
//!
//! **Load and friction.** `fz` is the vertical load in N; `fz ≤ 0` (and, to stay clear of
//! divisions by nothing, `fz < 1e-9` N or a non-finite `fz`) gives zero force. `mu` is the
//! dimensionless surface friction: it scales the friction-limited part of the force (the
//! peak `D` and vertical shift of the Magic Formula by `mu/mu_reference`, and sideways by
//! `mu/lateral_mu_reference`, or to the same peak both ways; the brush and linear tires use
//! `μ = mu` directly). `mu < 1e-9` or non-finite gives zero force.
//!
//! # Two-level API
//!
//! A wheel evaluates its tire many times per fixed step (4 wheels × 17 integrator stages,
//! for thousands of vehicles) while load and friction stay constant over the step. So:
//!
//! 1. [`TireModel::at_load`]`(fz, mu) -> `[`LoadedTire`], once per wheel per step,
//!    precomputes everything that depends on load and friction (`B, C, D, E`, shifts, peak
//!    slips, stiffnesses).
//! 2. [`LoadedTire::forces`]`(kappa, tan_alpha) -> [fx, fy]`, at every stage: no
//!    allocation, no `std` transcendental function, a few dozen floating-point operations.
//!    [`LoadedTire::stiffness`], [`LoadedTire::peak_slip`], [`LoadedTire::peak_force`] and
//!    [`LoadedTire::load`] describe the loaded tire, [`LoadedTire::pure_forces`] gives the
//!    pure-slip curves. [`LoadedTire::longitudinal_force`] gives `fx` alone, and
//!    [`LoadedTire::longitudinal_forces`] the `fx` of several tires at once (a vehicle's
//!    wheels at one integrator stage), bit-equal and cheaper.
//!
//! Indicative cost on the development machine (x86-64, release build): `forces` takes
//! ≈ 90 ns for the Magic Formula with [`CombinedSlip::Normalized`], ≈ 155 ns with
//! [`CombinedSlip::Weighting`], ≈ 11 ns for the brush and ≈ 7 ns for the linear tire;
//! `at_load` ≈ 0.3 µs for the normalised Magic Formula (it solves for the peak slips),
//! ≈ 50 ns with weighting functions, ≈ 4 ns for the others. [`LoadedTire::longitudinal_forces`]
//! of four normalised Magic Formula tires takes ≈ 36 ns per tire, against ≈ 67 ns for one
//! [`LoadedTire::longitudinal_force`] at a time. A [`LoadedTire`] is `Copy`
//! and 216 bytes (the size of its largest variant, the weighting Magic Formula).
//!
//! # Determinism
//!
//! All math is `f64`. Transcendental functions come from [`fastmath`], built from IEEE
//! basic operations only, and `f64::sqrt` is correctly rounded, so every force is
//! bit-identical on every platform with IEEE binary64 arithmetic — including the
//! precomputation in `at_load`, which uses [`fastmath::exp`] rather than `f64::exp`.
//!
//! # Example
//!
//! ```
//! use bevy_vehicle_tire::{MagicFormula, TireModel};
//!
//! let model = TireModel::MagicFormula(MagicFormula::passenger_205_60_r15());
//! model.validate().unwrap();
//! let tire = model.at_load(4000.0, 1.0); // once per step
//! let [fx, fy] = tire.forces(0.05, 0.02); // per stage: driving and turning left
//! assert!(fx > 0.0 && fy > 0.0);
//! ```

pub mod brush;
mod error;
pub mod fastmath;
pub mod linear;
mod loaded;
pub mod magic_formula;

use serde::{Deserialize, Serialize};

pub use brush::BrushTire;
pub use error::TireError;
pub use linear::LinearTire;
pub use loaded::LoadedTire;
pub use magic_formula::{CombinedSlip, MagicFormula, MfAligning, MfCamber};

/// A tire model, as stored in vehicle descriptions. Serialized externally tagged, e.g. in
/// RON `BrushTire((longitudinal_stiffness: 16.0, cornering_stiffness: 12.0))`.
// The Magic Formula variant is much larger than the others (about 320 bytes). A model is
// configuration, stored once per tire type, so keeping it `Copy` and unboxed (no pointer
// chase in `at_load`) is worth the size.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum TireModel {
    /// Pacejka Magic Formula; see [`magic_formula`].
    MagicFormula(MagicFormula),
    /// Brush model; see [`brush`].
    BrushTire(BrushTire),
    /// Linear model with a friction-circle clamp; see [`linear`].
    LinearTire(LinearTire),
}

/// Whether a setting is 0 (serde: settings left at 0 are not written).
pub(crate) fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl Default for TireModel {
    /// [`MagicFormula::default`], the published passenger-car set.
    fn default() -> Self {
        Self::MagicFormula(MagicFormula::default())
    }
}

impl TireModel {
    /// [`TireModel::at_load`] for a wheel whose tire was last evaluated as `near` (its
    /// previous step's): the same tire to rounding (forces agree to `1e-13` relative), found
    /// faster. The Magic Formula's peak-slip solves start from `near`'s peaks, which a step's
    /// change of load barely moves, instead of from a closed-form guess. Any `near` is safe
    /// (another load, another model, an unloaded tire): a poor start only costs iterations.
    ///
    /// `camber` is the tire's inclination (rad), as in [`TireModel::at_load_and_camber`].
    pub fn at_load_near(&self, fz: f64, mu: f64, camber: f64, near: &LoadedTire) -> LoadedTire {
        match self {
            Self::MagicFormula(m) => m.at_load_near(fz, mu, camber, near),
            _ => self.at_load_and_camber(fz, mu, camber),
        }
    }

    /// [`TireModel::at_load`] for a tire leaning by its inclination angle `camber` (rad,
    /// positive when the tire's top leans to its right, towards its −y axis: ISO 8855's
    /// inclination angle; the left wheel of a car with negative camber leans by a positive
    /// angle, the right one by a negative angle). The Magic Formula applies its camber terms
    /// ([`MfCamber`]: on their own, a free-rolling tire leaning by a small `γ` pushes its
    /// camber stiffness times `γ` sideways); the brush and linear tires their
    /// `camber_stiffness` ([`BrushTire::camber_stiffness`], [`LinearTire::camber_stiffness`]).
    /// Camber is held beyond ±10° ([`magic_formula::CAMBER_LIMIT`]); a camber that is not
    /// finite counts as 0.
    pub fn at_load_and_camber(&self, fz: f64, mu: f64, camber: f64) -> LoadedTire {
        match self {
            Self::MagicFormula(m) => m.at_load_and_camber(fz, mu, camber),
            Self::BrushTire(m) => m.at_load_and_camber(fz, mu, camber),
            Self::LinearTire(m) => m.at_load_and_camber(fz, mu, camber),
        }
    }

    /// Evaluates every load- and friction-dependent coefficient at vertical load `fz` (N)
    /// and surface friction `mu` (dimensionless). Call once per wheel per fixed step, then
    /// [`LoadedTire::forces`] per stage. Assumes a model that passes
    /// [`TireModel::validate`].
    pub fn at_load(&self, fz: f64, mu: f64) -> LoadedTire {
        match self {
            Self::MagicFormula(m) => m.at_load(fz, mu),
            Self::BrushTire(m) => m.at_load(fz, mu),
            Self::LinearTire(m) => m.at_load(fz, mu),
        }
    }

    /// The model's own pneumatic trail (m) at the slips `kappa`, `tan_alpha` of `tire` (this
    /// model at its load) on a surface of friction `mu`, for [`MagicFormula`] sets that give
    /// their trail terms ([`MagicFormula::pneumatic_trail`]); `None` for the others, whose
    /// trail is a setting of the wheel's tire.
    pub fn pneumatic_trail(
        &self,
        tire: &LoadedTire,
        mu: f64,
        kappa: f64,
        tan_alpha: f64,
    ) -> Option<f64> {
        match self {
            Self::MagicFormula(m) => m.pneumatic_trail(tire, mu, kappa, tan_alpha),
            _ => None,
        }
    }

    /// Refuses parameters the model cannot use: non-finite values, `fz0 ≤ 0`,
    /// `mu_reference ≤ 0`, shape factors outside `(0, 2]`, curvature factors at `fz0` above
    /// 1, `p_ky2 ≤ 0`, zero peak-friction or stiffness factors, a peak-friction factor whose
    /// sign differs from its stiffness factor's, negative combined-slip slope factors,
    /// combined-slip shifts so large that a weighting function's denominator falls below
    /// 0.1, aligning terms ([`MfAligning`]) given with a radius, slope factor or trail factor
    /// not above 0, a radius beyond 5 m, a shape factor outside `(0, 2]` or a curvature
    /// above 1, and negative brush or linear stiffnesses. The error names the field, e.g.
    /// `magic_formula.p_dx1`, `magic_formula.combined.r_cx1` or
    /// `brush_tire.cornering_stiffness`.
    pub fn validate(&self) -> Result<(), TireError> {
        match self {
            Self::MagicFormula(m) => m.validate(),
            Self::BrushTire(m) => m.validate(),
            Self::LinearTire(m) => m.validate(),
        }
    }
}

impl From<MagicFormula> for TireModel {
    fn from(m: MagicFormula) -> Self {
        Self::MagicFormula(m)
    }
}

impl From<BrushTire> for TireModel {
    fn from(m: BrushTire) -> Self {
        Self::BrushTire(m)
    }
}

impl From<LinearTire> for TireModel {
    fn from(m: LinearTire) -> Self {
        Self::LinearTire(m)
    }
}
