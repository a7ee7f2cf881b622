//! The physical brush tire model with a parabolic pressure distribution.
//!
//! # Equations
//!
//! With stiffnesses `Cₓ = longitudinal_stiffness·fz` and `C_y = cornering_stiffness·fz`
//! (N per unit slip), the theoretical slips
//!
//! ```text
//! σₓ = κ/(1 + κ),   σ_y = tan α/(1 + κ)
//! ```
//!
//! and the combined slip
//!
//! ```text
//! λ = √((Cₓ·σₓ)² + (C_y·σ_y)²) / (3·μ·fz)
//! ```
//!
//! the resultant force is
//!
//! ```text
//! F = μ·fz·(3λ − 3λ² + λ³)   for λ < 1   (adhesion and sliding zones)
//! F = μ·fz                   for λ ≥ 1   (full sliding)
//! ```
//!
//! directed along `(Cₓ·σₓ, C_y·σ_y)`, so `fx = F·Cₓσₓ/(3λμfz)`,
//! `fy = F·C_yσ_y/(3λμfz)`. For `λ < 1` this is `fx = Cₓ·σₓ·(1 − λ + λ²/3)` (no division by
//! `λ`, exact at zero slip).
//!
//! **Small-slip stiffness.** At `κ = tan α = 0`, `dσₓ/dκ = 1/(1 + κ)² = 1` and
//! `dσ_y/d tan α = 1`, and `1 − λ + λ²/3 → 1`, so `dFx/dκ = Cₓ` and `dFy/d tan α = C_y`:
//! the stiffness fields are exactly the model's slip stiffnesses per unit load.
//!
//! Full sliding starts at `λ = 1`: in pure longitudinal slip at `σₓ = 3μ/longitudinal_stiffness`
//! (`κ = σₓ/(1 − σₓ)`), in pure lateral slip at `tan α = 3μ/cornering_stiffness`.
//!
//! **Locked or reversing wheel.** `1 + κ` is limited below to `1e-6` (`κ ≤ −1` is a locked
//! wheel or one spinning backwards): the theoretical slips then stay finite and huge, the
//! model is in full sliding, and the direction `(Cₓ·κ, C_y·tan α)` — which does not depend
//! on `1 + κ` — keeps the braking sign.
//!
//! **Friction.** `mu` passed to [`TireModel::at_load`](crate::TireModel::at_load) is the
//! tire–road friction coefficient itself (there is no reference friction): `μ = mu`.
//!
//! **Camber.** A tire leaning by `γ` (ISO inclination, positive when its top leans to its
//! right) with `camber_stiffness` `c_γ` acts as if its slip angle were shifted:
//! `tan α → tan α − c_γ·sin γ/cornering_stiffness`. A free-rolling tire then pushes
//! `−c_γ·fz·sin γ·(1 − λ + λ²/3)` sideways, towards the side it leans to, which is
//! `−c_γ·fz·sin γ` for a small lean; its thrust and its side slip share the friction
//! limit. This is the equivalent-slip treatment the Magic Formula's camber shift also uses,
//! not the brush theory's own bow of the tread across the patch, which a single stiffness
//! cannot describe. `γ` is held within ±10°
//! ([`CAMBER_LIMIT`](crate::magic_formula::CAMBER_LIMIT)).

use serde::{Deserialize, Serialize};

use crate::error::{Checker, TireError};
use crate::loaded::{LoadedTire, camber_shift};
use crate::magic_formula::camber_sine;

/// Brush tire model; see the [module docs](self) for the equations.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrushTire {
    /// Longitudinal slip stiffness per unit load, N per unit slip per N of load
    /// (`Cₓ = longitudinal_stiffness·fz`, `≥ 0`).
    pub longitudinal_stiffness: f64,
    /// Cornering stiffness per unit load, N per unit `tan α` per N of load
    /// (`C_y = cornering_stiffness·fz`, `≥ 0`).
    pub cornering_stiffness: f64,
    /// Camber stiffness per unit load, N of side force per rad of inclination per N of load
    /// (`≥ 0`; 0 if left out): a free-rolling tire leaning by a small `γ` pushes
    /// `camber_stiffness·fz·γ` towards the side it leans to. Car tires are near 1 per rad
    /// (the published 205/60R15 Magic Formula set's `|p_ky6|` is 0.92); 0 ignores camber.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub camber_stiffness: f64,
}

impl Default for BrushTire {
    /// A passenger-car tire: longitudinal stiffness 16 and cornering stiffness 12 per unit
    /// load. The published 205/60R15 set of [`MagicFormula`](crate::MagicFormula) has
    /// `Kₓ/fz = 21.5` and `K_y/fz ≈ 11.5` at its nominal load; typical passenger tires span
    /// roughly 15–25 and 8–15. With `mu = 1` the brush then slides fully at
    /// `κ ≈ 0.23` and `tan α = 0.25` (14°), close to where real passenger tires peak.
    fn default() -> Self {
        Self {
            longitudinal_stiffness: 16.0,
            cornering_stiffness: 12.0,
            camber_stiffness: 0.0,
        }
    }
}

impl BrushTire {
    /// Checks that every field can be used; see [`TireModel::validate`](crate::TireModel::validate).
    pub fn validate(&self) -> Result<(), TireError> {
        let c = Checker {
            prefix: "brush_tire",
        };
        c.non_negative("longitudinal_stiffness", self.longitudinal_stiffness)?;
        c.non_negative("cornering_stiffness", self.cornering_stiffness)?;
        c.non_negative("camber_stiffness", self.camber_stiffness)
    }

    /// Precomputes the tire at load `fz` (N) and friction `mu`; see
    /// [`TireModel::at_load`](crate::TireModel::at_load).
    pub fn at_load(&self, fz: f64, mu: f64) -> LoadedTire {
        self.at_load_and_camber(fz, mu, 0.0)
    }

    /// [`BrushTire::at_load`] for a tire leaning by `camber` (rad); see
    /// [`TireModel::at_load_and_camber`](crate::TireModel::at_load_and_camber).
    pub fn at_load_and_camber(&self, fz: f64, mu: f64, camber: f64) -> LoadedTire {
        if let Some(trivial) = LoadedTire::without_force(fz, mu) {
            return trivial;
        }
        LoadedTire::brush(
            fz,
            self.longitudinal_stiffness * fz,
            self.cornering_stiffness * fz,
            mu * fz,
            camber_shift(
                self.camber_stiffness,
                self.cornering_stiffness,
                camber_sine(camber),
            ),
        )
    }
}
