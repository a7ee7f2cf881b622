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

use serde::{Deserialize, Serialize};

use crate::error::{Checker, TireError};
use crate::loaded::LoadedTire;

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
        c.non_negative("cornering_stiffness", self.cornering_stiffness)
    }

    /// Precomputes the tire at load `fz` (N) and friction `mu`; see
    /// [`TireModel::at_load`](crate::TireModel::at_load).
    pub fn at_load(&self, fz: f64, mu: f64) -> LoadedTire {
        if let Some(trivial) = LoadedTire::without_force(fz, mu) {
            return trivial;
        }
        LoadedTire::brush(
            fz,
            self.longitudinal_stiffness * fz,
            self.cornering_stiffness * fz,
            mu * fz,
        )
    }
}
