//! The linear tire: constant slip stiffnesses with a friction-circle clamp.
//!
//! ```text
//! (fx, fy) = (Cₓ·κ, C_y·tan α),   Cₓ = longitudinal_stiffness·fz,   C_y = cornering_stiffness·fz
//! ```
//!
//! scaled down uniformly (direction kept) when its magnitude exceeds `μ·fz`, with `μ = mu`
//! as passed to [`TireModel::at_load`](crate::TireModel::at_load). It has no peak and no
//! fall-off after it, which makes it cheap and very forgiving: meant for background
//! traffic and other vehicles whose handling nobody studies, not for a player's car.
//!
//! A tire leaning by `γ` (ISO inclination, positive when its top leans to its right) adds
//! its camber thrust to the lateral force before the clamp:
//! `fy = C_y·tan α − camber_stiffness·fz·sin γ`, with `γ` held within ±10°.

use serde::{Deserialize, Serialize};

use crate::error::{Checker, TireError};
use crate::loaded::{LoadedTire, camber_shift};
use crate::magic_formula::camber_sine;

/// Linear tire with a friction-circle clamp; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearTire {
    /// Longitudinal slip stiffness per unit load, N per unit slip per N of load (`≥ 0`).
    pub longitudinal_stiffness: f64,
    /// Cornering stiffness per unit load, N per unit `tan α` per N of load (`≥ 0`).
    pub cornering_stiffness: f64,
    /// How the force is limited. `None` (tires): it stays on the friction circle of radius
    /// `μ·Fz`, which the two components share. `Some(f)` (track shoes): each component is
    /// limited on its own, the longitudinal to `μ·Fz` and the lateral to `f·μ·Fz`
    /// (dimensionless, in (0, 1]): a track's grousers shear the ground along it whatever it
    /// does sideways, while its shoes slide sideways with their own, lower resistance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separate_axes: Option<f64>,
    /// Camber stiffness per unit load, N of side force per rad of inclination per N of load
    /// (`≥ 0`; 0 if left out): a free-rolling tire leaning by `γ` pushes
    /// `camber_stiffness·fz·sin γ` towards the side it leans to (within the friction limit).
    /// It acts only with a `cornering_stiffness` above 0.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub camber_stiffness: f64,
}

impl Default for LinearTire {
    /// The same passenger-car stiffnesses as [`BrushTire::default`](crate::BrushTire):
    /// 16 and 12 per unit load.
    fn default() -> Self {
        Self {
            longitudinal_stiffness: 16.0,
            cornering_stiffness: 12.0,
            separate_axes: None,
            camber_stiffness: 0.0,
        }
    }
}

impl LinearTire {
    /// Checks that every field can be used; see [`TireModel::validate`](crate::TireModel::validate).
    pub fn validate(&self) -> Result<(), TireError> {
        let c = Checker {
            prefix: "linear_tire",
        };
        c.non_negative("longitudinal_stiffness", self.longitudinal_stiffness)?;
        c.non_negative("cornering_stiffness", self.cornering_stiffness)?;
        c.non_negative("camber_stiffness", self.camber_stiffness)?;
        if let Some(f) = self.separate_axes
            && !(f > 0.0 && f <= 1.0)
        {
            return Err(TireError {
                field: "linear_tire.separate_axes".into(),
                reason: format!("must lie in (0, 1], got {f}"),
            });
        }
        Ok(())
    }

    /// Precomputes the tire at load `fz` (N) and friction `mu`; see
    /// [`TireModel::at_load`](crate::TireModel::at_load).
    pub fn at_load(&self, fz: f64, mu: f64) -> LoadedTire {
        self.at_load_and_camber(fz, mu, 0.0)
    }

    /// [`LinearTire::at_load`] for a tire leaning by `camber` (rad); see
    /// [`TireModel::at_load_and_camber`](crate::TireModel::at_load_and_camber).
    pub fn at_load_and_camber(&self, fz: f64, mu: f64, camber: f64) -> LoadedTire {
        if let Some(trivial) = LoadedTire::without_force(fz, mu) {
            return trivial;
        }
        let (cx, cy) = (
            self.longitudinal_stiffness * fz,
            self.cornering_stiffness * fz,
        );
        let sh = camber_shift(
            self.camber_stiffness,
            self.cornering_stiffness,
            camber_sine(camber),
        );
        match self.separate_axes {
            None => LoadedTire::linear(fz, cx, cy, mu * fz, sh),
            Some(f) => LoadedTire::linear_axes(fz, cx, cy, [mu * fz, f * mu * fz], sh),
        }
    }
}
