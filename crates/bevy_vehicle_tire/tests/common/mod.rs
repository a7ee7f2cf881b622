//! Independent closed-form reference of the Magic Formula, written from the equations in
//! the crate docs with `std` math (not `fastmath`), for the integration tests.
#![allow(dead_code)]

use bevy_vehicle_tire::{CombinedSlip, MagicFormula};

/// One axis of the reference Magic Formula in this crate's slip sign.
#[derive(Clone, Copy, Debug)]
pub struct RefAxis {
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e_pos: f64,
    pub e_neg: f64,
    pub k: f64,
    pub sh: f64,
    pub sv: f64,
}

impl RefAxis {
    /// Pure-slip force at shifted slip `u`.
    pub fn pure_shifted(&self, u: f64) -> f64 {
        let e = if u < 0.0 { self.e_neg } else { self.e_pos };
        let x = self.b * u;
        self.d * (self.c * (x - e * (x - x.atan())).atan()).sin() + self.sv
    }

    /// Pure-slip force at input slip `slip`.
    pub fn pure(&self, slip: f64) -> f64 {
        self.pure_shifted(slip + self.sh)
    }
}

/// The reference coefficients at load `fz` and friction `mu` (no clamps: the tests stay
/// within `[0, 3·fz0]`, where the crate's clamps are inactive for the published set).
pub fn reference(m: &MagicFormula, fz: f64, mu: f64) -> (RefAxis, RefAxis) {
    let dfz = (fz - m.fz0) / m.fz0;
    let lm = mu / m.mu_reference;
    // Sideways the set's own reference, or the longitudinal peak's when there is none.
    let lm_y = mu
        / m.lateral_mu_reference
            .unwrap_or(m.mu_reference * (m.p_dy1 / m.p_dx1).abs());
    let sx = m.p_kx1.signum();
    let dx = sx * (m.p_dx1 + m.p_dx2 * dfz) * lm * fz;
    let kx = fz * sx * (m.p_kx1 + m.p_kx2 * dfz) * (m.p_kx3 * dfz).exp();
    let ex = m.p_ex1 + m.p_ex2 * dfz + m.p_ex3 * dfz * dfz;
    let x = RefAxis {
        b: kx / (m.p_cx1 * dx),
        c: m.p_cx1,
        d: dx,
        e_pos: (ex * (1.0 - sx * m.p_ex4)).min(1.0),
        e_neg: (ex * (1.0 + sx * m.p_ex4)).min(1.0),
        k: kx,
        sh: sx * (m.p_hx1 + m.p_hx2 * dfz),
        sv: fz * (m.p_vx1 + m.p_vx2 * dfz) * lm,
    };
    let sy = m.p_ky1.signum();
    let dy = sy * (m.p_dy1 + m.p_dy2 * dfz) * lm_y * fz;
    let ky = m.p_ky1.abs() * m.fz0 * (2.0 * (fz / (m.p_ky2 * m.fz0)).atan()).sin();
    let ey = m.p_ey1 + m.p_ey2 * dfz;
    let y = RefAxis {
        b: ky / (m.p_cy1 * dy),
        c: m.p_cy1,
        d: dy,
        e_pos: (ey * (1.0 - sy * m.p_ey3)).min(1.0),
        e_neg: (ey * (1.0 + sy * m.p_ey3)).min(1.0),
        k: ky,
        sh: sy * (m.p_hy1 + m.p_hy2 * dfz),
        sv: fz * (m.p_vy1 + m.p_vy2 * dfz) * lm_y,
    };
    (x, y)
}

/// The MF 5.2 weighting functions `[G_xα, G_yκ]` without any clamp (reference, std math).
pub fn reference_weights(m: &MagicFormula, kappa: f64, tan_alpha: f64) -> [f64; 2] {
    let CombinedSlip::Weighting {
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
    } = m.combined
    else {
        panic!("not a weighting set");
    };
    let s = m.p_ky1.signum();
    let g = |b: f64, c: f64, e: f64, v: f64| {
        let x = b * v;
        (c * (x - e * (x - x.atan())).atan()).cos()
    };
    let bxa = r_bx1 * (r_bx2 * kappa).atan().cos();
    let shx = s * r_hx1;
    let gxa = g(bxa, r_cx1, r_ex1, tan_alpha + shx) / g(bxa, r_cx1, r_ex1, shx);
    let byk = r_by1 * (r_by2 * (tan_alpha - s * r_by3)).atan().cos();
    let gyk = g(byk, r_cy1, r_ey1, kappa + r_hy1) / g(byk, r_cy1, r_ey1, r_hy1);
    [gxa, gyk]
}

/// `m` with every shift and asymmetry term set to zero: an odd, shift-free tire.
pub fn shift_free(m: MagicFormula) -> MagicFormula {
    let combined = match m.combined {
        CombinedSlip::Normalized => CombinedSlip::Normalized,
        CombinedSlip::Weighting {
            r_bx1,
            r_bx2,
            r_cx1,
            r_ex1,
            r_by1,
            r_by2,
            r_cy1,
            r_ey1,
            ..
        } => CombinedSlip::Weighting {
            r_bx1,
            r_bx2,
            r_cx1,
            r_ex1,
            r_hx1: 0.0,
            r_by1,
            r_by2,
            r_by3: 0.0,
            r_cy1,
            r_ey1,
            r_hy1: 0.0,
        },
    };
    MagicFormula {
        p_ex4: 0.0,
        p_hx1: 0.0,
        p_hx2: 0.0,
        p_vx1: 0.0,
        p_vx2: 0.0,
        p_ey3: 0.0,
        p_hy1: 0.0,
        p_hy2: 0.0,
        p_vy1: 0.0,
        p_vy2: 0.0,
        combined,
        ..m
    }
}

/// The published set with each combined-slip method, the same shift-free, and the normalised
/// one with its lateral peak equal to its longitudinal one.
pub fn all_sets() -> Vec<(&'static str, MagicFormula)> {
    let n = MagicFormula::passenger_205_60_r15();
    let w = MagicFormula::passenger_205_60_r15_weighting();
    vec![
        ("published/normalized", n),
        ("published/weighting", w),
        ("shift-free/normalized", shift_free(n)),
        ("shift-free/weighting", shift_free(w)),
        ("equal-peaks/normalized", n.with_equal_peaks()),
    ]
}

pub fn shift_free_sets() -> Vec<(&'static str, MagicFormula)> {
    all_sets().into_iter().skip(2).take(2).collect()
}

/// Relative difference, safe at zero.
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

/// `n + 1` evenly spaced points on `[a, b]`.
pub fn grid(a: f64, b: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..=n).map(move |i| a + (b - a) * i as f64 / n as f64)
}
