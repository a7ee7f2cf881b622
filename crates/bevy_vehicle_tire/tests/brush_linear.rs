//! The brush and linear tires against their closed forms.

use bevy_vehicle_tire::{BrushTire, LinearTire, TireModel};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

/// The brush model written directly from its documented equations (std math).
fn brush_reference(b: &BrushTire, fz: f64, mu: f64, kappa: f64, tan_alpha: f64) -> [f64; 2] {
    let (cx, cy) = (b.longitudinal_stiffness * fz, b.cornering_stiffness * fz);
    let den = (1.0 + kappa).max(1e-6);
    let (sx, sy) = (kappa / den, tan_alpha / den);
    let (vx, vy) = (cx * sx, cy * sy);
    let m = vx.hypot(vy);
    if m == 0.0 {
        return [0.0, 0.0];
    }
    let lambda = m / (3.0 * mu * fz);
    let f = if lambda < 1.0 {
        mu * fz * (3.0 * lambda - 3.0 * lambda * lambda + lambda.powi(3))
    } else {
        mu * fz
    };
    [f * vx / m, f * vy / m]
}

const SLIPS: [(f64, f64); 14] = [
    (0.001, 0.0),
    (0.0, 0.002),
    (0.01, 0.0),
    (0.0, -0.01),
    (0.05, 0.03),
    (-0.1, 0.02),
    (0.2, -0.1),
    (1.0, 0.5),
    (-0.5, 0.3),
    (-0.9, -0.05),
    (-1.0, 0.1),
    (-3.0, 0.2),
    (0.03, 0.2),
    (4.0, 4.0),
];

/// Requirement 6: closed-form values to 1e-12 relative.
#[test]
fn brush_matches_closed_form() {
    for b in [
        BrushTire::default(),
        BrushTire {
            longitudinal_stiffness: 25.0,
            cornering_stiffness: 8.0,
            ..BrushTire::default()
        },
    ] {
        for fz in [500.0, 4000.0] {
            for mu in [0.3, 1.0, 1.4] {
                let tire = TireModel::BrushTire(b).at_load(fz, mu);
                for (k, t) in SLIPS {
                    let [fx, fy] = tire.forces(k, t);
                    let [rx, ry] = brush_reference(&b, fz, mu, k, t);
                    let scale = rx.hypot(ry);
                    assert!(
                        (fx - rx).abs() <= 1e-12 * scale && (fy - ry).abs() <= 1e-12 * scale,
                        "{b:?} fz={fz} mu={mu} ({k}, {t}): [{fx}, {fy}] vs [{rx}, {ry}]"
                    );
                }
            }
        }
    }
}

/// Exact values at λ = 1/2: F = μ·fz·(3/2 − 3/4 + 1/8) = 0.875·μ·fz.
#[test]
fn brush_half_way_to_sliding_is_seven_eighths_of_the_peak() {
    let b = BrushTire::default(); // 16 and 12 per unit load
    let tire = TireModel::BrushTire(b).at_load(4000.0, 1.0);
    // Lateral: λ = 12·tanα/3 = 0.5 at tanα = 0.125.
    assert!(rel(tire.forces(0.0, 0.125)[1], 3500.0) < 1e-12);
    // Longitudinal: λ = 16·σ/3 = 0.5 at σ = 0.09375, κ = σ/(1 − σ).
    let kappa = 0.09375 / (1.0 - 0.09375);
    assert!(rel(tire.forces(kappa, 0.0)[0], 3500.0) < 1e-12);
    // Braking: σ = −0.09375 at κ = σ/(1 − σ) = −0.09375/1.09375.
    assert!(rel(tire.forces(-0.09375 / 1.09375, 0.0)[0], -3500.0) < 1e-12);
}

#[test]
fn brush_full_sliding_gives_exactly_mu_fz() {
    let b = BrushTire::default();
    for (fz, mu) in [(1000.0, 1.0), (4000.0, 0.7), (7000.0, 1.2)] {
        let tire = TireModel::BrushTire(b).at_load(fz, mu);
        for (k, t) in [
            (0.5, 0.0),
            (0.0, 0.5),
            (0.0, -2.0),
            (0.3, 0.3),
            (-1.0, 0.0),
            (-5.0, 1.0),
            (1e6, -1e6),
        ] {
            let [fx, fy] = tire.forces(k, t);
            assert!(
                rel(fx.hypot(fy), mu * fz) <= 4.5e-16,
                "({k}, {t}): |F| = {}",
                fx.hypot(fy)
            );
        }
        // Pure slip in full sliding: the component is μ·fz itself (to an ulp).
        assert!(rel(tire.forces(0.0, 0.5)[1], mu * fz) <= 2.3e-16);
        assert!(rel(tire.forces(-1.0, 0.0)[0], -mu * fz) <= 2.3e-16);
        // Below λ = 1 the force is strictly less.
        let [_, py] = tire.peak_slip();
        assert!(tire.forces(0.0, 0.999 * py)[1] < mu * fz);
        assert!(rel(tire.forces(0.0, py)[1], mu * fz) < 1e-12);
        let [px, _] = tire.peak_slip();
        assert!(rel(tire.forces(px, 0.0)[0], mu * fz) < 1e-12, "κ peak {px}");
        assert!(tire.forces(0.999 * px, 0.0)[0] < mu * fz);
    }
}

/// Locked and reversing wheels brake at full sliding with the direction of (Cx·κ, Cy·tanα).
#[test]
fn brush_locked_wheel_is_full_sliding() {
    let b = BrushTire::default();
    let tire = TireModel::BrushTire(b).at_load(4000.0, 1.0);
    for k in [-1.0, -1.5, -10.0, -1e6] {
        let [fx, fy] = tire.forces(k, 0.05);
        assert!(fx < 0.0 && fy > 0.0, "κ={k}");
        assert!(rel(fx.hypot(fy), 4000.0) < 1e-12);
        let dir = (16.0 * k) / (12.0 * 0.05);
        assert!(rel(fx / fy, dir) < 1e-12, "κ={k}: direction");
    }
}

#[test]
fn brush_small_slip_stiffness_is_c() {
    let b = BrushTire::default();
    for fz in [1000.0, 4000.0, 9000.0] {
        let tire = TireModel::BrushTire(b).at_load(fz, 0.9);
        assert_eq!(tire.stiffness(), [16.0 * fz, 12.0 * fz]);
        let h = 1e-7;
        let dfx = (tire.forces(h, 0.0)[0] - tire.forces(-h, 0.0)[0]) / (2.0 * h);
        let dfy = (tire.forces(0.0, h)[1] - tire.forces(0.0, -h)[1]) / (2.0 * h);
        // Truncation O(h²·C/(μ·fz)²) ≈ 1e-11 plus rounding ≈ 1e-9: 1e-6 is safe.
        assert!(rel(dfx, 16.0 * fz) < 1e-6, "{dfx}");
        assert!(rel(dfy, 12.0 * fz) < 1e-6, "{dfy}");
        // Slips of 1e-12: the forces are C·slip.
        let [fx, fy] = tire.forces(1e-12, -2e-12);
        assert!(rel(fx, 16.0 * fz * 1e-12) < 1e-9 && rel(fy, -24.0 * fz * 1e-12) < 1e-9);
    }
}

/// Requirement 7.
#[test]
fn linear_is_stiffness_times_slip_clamped_to_the_friction_circle() {
    let l = LinearTire::default();
    for (fz, mu) in [(1000.0, 1.0), (4000.0, 0.8), (6000.0, 1.3)] {
        let tire = TireModel::LinearTire(l).at_load(fz, mu);
        let (cx, cy) = (16.0 * fz, 12.0 * fz);
        assert_eq!(tire.stiffness(), [cx, cy]);
        assert_eq!(tire.peak_force(), [mu * fz, mu * fz]);
        for (k, t) in [(0.01, 0.02), (-0.03, 0.01), (0.0, 0.05), (0.04, 0.0)] {
            // Inside the circle: exactly linear.
            assert!((cx * k).hypot(cy * t) < mu * fz);
            assert_eq!(tire.forces(k, t), [cx * k, cy * t]);
        }
        for (k, t) in [
            (0.2, 0.3),
            (-1.0, 0.01),
            (0.1, -0.12),
            (0.0, 3.0),
            (1e6, 1e6),
        ] {
            assert!((cx * k).hypot(cy * t) > mu * fz);
            let [fx, fy] = tire.forces(k, t);
            assert!(rel(fx.hypot(fy), mu * fz) < 1e-12, "({k}, {t})");
            // Direction kept.
            assert!((fx * cy * t - fy * cx * k).abs() <= 1e-12 * (fx * cy * t).abs().max(1e-300));
        }
        // Exactly on the limit: the circle starts at peak_slip.
        let [px, py] = tire.peak_slip();
        assert!(rel(tire.forces(px, 0.0)[0], mu * fz) < 1e-15);
        assert!(rel(tire.forces(0.0, py)[1], mu * fz) < 1e-15);
        // Pure forces clamp each axis on its own.
        assert_eq!(tire.pure_forces(1.0, -1.0), [mu * fz, -mu * fz]);
    }
}

#[test]
fn brush_and_linear_defaults_are_passenger_car_values() {
    assert_eq!(
        (
            BrushTire::default().longitudinal_stiffness,
            BrushTire::default().cornering_stiffness
        ),
        (16.0, 12.0)
    );
    assert_eq!(
        (
            LinearTire::default().longitudinal_stiffness,
            LinearTire::default().cornering_stiffness
        ),
        (16.0, 12.0)
    );
    // Brush default slides fully at κ ≈ 0.23 and tanα = 0.25.
    let [kp, tp] = TireModel::BrushTire(BrushTire::default())
        .at_load(4000.0, 1.0)
        .peak_slip();
    assert!(rel(kp, 0.1875 / 0.8125) < 1e-12 && rel(tp, 0.25) < 1e-12);
}

/// Camber on the brush and linear tires, against their closed forms: a camber stiffness of
/// 0.92 per rad (the published 205/60R15 set's `|p_ky6|`), at 1 and 4 kN.
/// - Linear: below the friction limit `fy = C_y·tan α − c_γ·fz·sin γ` to 1e-12 (a tire
///   leaning right, `γ > 0`, pushes right, `−y`), and past it the force keeps `μ·fz`.
/// - Brush: a lean acts as the slip angle shifted by `−c_γ·sin γ/c_y`: the leaning tire's
///   force equals the brush's closed form (`brush_reference`) at the shifted slip to 1e-12,
///   and a free-rolling tire leaning 0.1° pushes `c_γ·fz·sin γ·(1 − λ + λ²/3)` to 1e-12,
///   with `λ = c_γ·sin γ/(3μ)`: its small-lean camber thrust is `c_γ·fz·sin γ`.
/// - No camber, no camber stiffness, or a camber that is not finite give `at_load`'s tire
///   bit for bit; 30° acts as 10°; `at_load_near` (the chassis's call) leans the tire as
///   `at_load_and_camber` does; a negative or NaN camber stiffness is refused, named.
#[test]
fn brush_and_linear_camber_follow_their_closed_forms() {
    let c_gamma = 0.92;
    let brush = BrushTire {
        camber_stiffness: c_gamma,
        ..BrushTire::default()
    };
    let linear = LinearTire {
        camber_stiffness: c_gamma,
        ..LinearTire::default()
    };
    let mu = 0.9;
    for fz in [1000.0, 4000.0] {
        for gamma in [3f64.to_radians(), -2f64.to_radians()] {
            let g = gamma.sin();
            // Linear, inside the friction circle.
            let tire = TireModel::LinearTire(linear).at_load_and_camber(fz, mu, gamma);
            for (k, t) in [(0.0, 0.0), (0.01, 0.02), (-0.02, -0.01)] {
                let [fx, fy] = tire.forces(k, t);
                let expected = 12.0 * fz * t - c_gamma * fz * g;
                assert!((16.0 * fz * k).hypot(expected) < mu * fz);
                assert_eq!(fx, 16.0 * fz * k);
                assert!(
                    (fy - expected).abs() < 1e-12 * fz,
                    "{fz} N, γ {gamma}: linear fy {fy} vs C_y·tan α − c_γ·fz·sin γ {expected}"
                );
            }
            assert!(
                tire.forces(0.0, 0.0)[1] * gamma < 0.0,
                "pushes towards its lean"
            );
            let [fx, fy] = tire.forces(0.3, 0.4);
            assert!(rel(fx.hypot(fy), mu * fz) < 1e-12, "past the limit: μ·fz");
            // Brush: the shifted slip.
            let tire = TireModel::BrushTire(brush).at_load_and_camber(fz, mu, gamma);
            let shift = -c_gamma * g / 12.0;
            for (k, t) in [(0.0, 0.0), (0.05, 0.03), (-0.1, -0.02), (0.2, 0.1)] {
                let [fx, fy] = tire.forces(k, t);
                let [rx, ry] = brush_reference(&brush, fz, mu, k, t + shift);
                assert!(
                    rel(fx, rx) < 1e-12 || (fx - rx).abs() < 1e-9,
                    "{fz} N, γ {gamma}, ({k}, {t}): brush fx {fx} vs {rx}"
                );
                assert!(
                    rel(fy, ry) < 1e-12,
                    "{fz} N, γ {gamma}, ({k}, {t}): brush fy {fy} vs {ry}"
                );
            }
        }
        // Small lean: the brush's camber thrust is c_γ·fz·sin γ.
        let gamma = 0.1f64.to_radians();
        let thrust = TireModel::BrushTire(brush)
            .at_load_and_camber(fz, mu, gamma)
            .forces(0.0, 0.0)[1];
        // λ = c_γ·sin γ/(3μ) (the load cancels): 6e-4 here.
        let lambda = c_gamma * gamma.sin() / (3.0 * mu);
        let expected = -c_gamma * fz * gamma.sin() * (1.0 - lambda + lambda * lambda / 3.0);
        assert!(
            rel(thrust, expected) < 1e-12,
            "{fz} N: brush camber thrust {thrust} vs −c_γ·fz·sin γ·(1 − λ + λ²/3) {expected}"
        );
        // What counts as no camber, and the limit.
        for model in [TireModel::BrushTire(brush), TireModel::LinearTire(linear)] {
            let plain = model.at_load(fz, mu);
            assert_eq!(model.at_load_and_camber(fz, mu, 0.0), plain);
            assert_eq!(model.at_load_and_camber(fz, mu, f64::NAN), plain);
            let at_limit = model.at_load_and_camber(fz, mu, 10f64.to_radians());
            let beyond = model.at_load_and_camber(fz, mu, 30f64.to_radians());
            assert_eq!(at_limit.forces(0.01, 0.0), beyond.forces(0.01, 0.0));
            // The chassis's path (a wheel's tire built near its last step's) leans it too.
            assert_eq!(
                model.at_load_near(fz, mu, 0.05, &plain),
                model.at_load_and_camber(fz, mu, 0.05)
            );
        }
        for model in [
            TireModel::BrushTire(BrushTire::default()),
            TireModel::LinearTire(LinearTire::default()),
        ] {
            let upright = model.at_load(fz, mu);
            assert_eq!(model.at_load_and_camber(fz, mu, 0.05), upright);
        }
    }
    for (model, field) in [
        (
            TireModel::BrushTire(BrushTire {
                camber_stiffness: -0.5,
                ..brush
            }),
            "brush_tire.camber_stiffness",
        ),
        (
            TireModel::LinearTire(LinearTire {
                camber_stiffness: f64::NAN,
                ..linear
            }),
            "linear_tire.camber_stiffness",
        ),
    ] {
        let error = model.validate().unwrap_err();
        assert!(error.to_string().contains(field), "{error}");
    }
}

/// The pneumatic trail's decay (`LoadedTire::trail_factor`) against the brush model's
/// aligning moment with a parabolic pressure distribution (Pacejka 2006, section 3.2): with
/// the patch's half-length `a` and the trail at zero slip `t₀ = a/3`, `−t₀·factor·F_y` is
/// `−μ·F_z·a·λ_y·(1 − λ)³` below full sliding, `λ = √(ax² + ay²)/(3μF_z)` with
/// `(ax, ay) = (Cx·κ, Cy·tan α)/(1 + κ)` and `λ_y = ay/(3μF_z)`, to 1e-12 (pure side slip and
/// combined slip, both signs); the factor is 1 at zero slip, falls as the slip grows, and is
/// 0 from full sliding on. The linear and Magic Formula tires follow the same law on their
/// own stiffness and peak: 1 at zero slip, 0 at three times the slip at which the linear
/// force would reach the peak.
#[test]
fn pneumatic_trail_follows_the_brush_models_aligning_moment() {
    let brush = BrushTire::default();
    let (fz, mu, a) = (4000.0, 0.9, 0.09);
    let tire = TireModel::BrushTire(brush).at_load(fz, mu);
    let (cx, cy) = (16.0 * fz, 12.0 * fz);
    let mut last = 1.0;
    for tan_alpha in [0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.22] {
        let factor = tire.trail_factor(0.0, tan_alpha);
        assert!(
            factor <= last && factor > 0.0,
            "tan α {tan_alpha}: {factor}"
        );
        last = factor;
    }
    assert_eq!(tire.trail_factor(0.0, 0.0), 1.0);
    assert_eq!(tire.trail_factor(0.0, 3.0 * mu / 12.0), 0.0, "full sliding");
    assert_eq!(tire.trail_factor(0.0, 1.0), 0.0);
    assert_eq!(tire.trail_factor(f64::NAN, 0.1), 0.0);
    for (kappa, tan_alpha) in [
        (0.0, 0.02),
        (0.0, -0.08),
        (0.0, 0.18),
        (0.03, 0.05),
        (-0.05, -0.04),
        (0.1, 0.1),
    ] {
        let inv = 1.0 / (1.0 + kappa);
        let (ax, ay) = (cx * kappa * inv, cy * tan_alpha * inv);
        let lambda = ax.hypot(ay) / (3.0 * mu * fz);
        assert!(lambda < 1.0);
        let expected = -mu * fz * a * (ay / (3.0 * mu * fz)) * (1.0 - lambda).powi(3);
        let fy = tire.forces(kappa, tan_alpha)[1];
        let moment = -(a / 3.0) * tire.trail_factor(kappa, tan_alpha) * fy;
        assert!(
            (moment - expected).abs() < 1e-12 * (mu * fz * a),
            "({kappa}, {tan_alpha}): −t₀·factor·F_y = {moment} vs the brush's M_z {expected} N·m"
        );
    }
    // The same law on another model's stiffness and peak.
    for model in [
        TireModel::LinearTire(LinearTire::default()),
        TireModel::MagicFormula(
            bevy_vehicle_tire::MagicFormula::passenger_205_60_r15().without_shifts(),
        ),
    ] {
        let tire = model.at_load(fz, mu);
        let sliding = 3.0 * tire.peak_force()[1] / tire.stiffness()[1];
        assert_eq!(tire.trail_factor(0.0, 0.0), 1.0);
        let lambda = 0.25;
        let rest: f64 = 1.0 - lambda;
        let expected = rest.powi(3) / (1.0 - lambda + lambda * lambda / 3.0);
        assert!(rel(tire.trail_factor(0.0, lambda * sliding), expected) < 1e-12);
        assert_eq!(tire.trail_factor(0.0, 1.0001 * sliding), 0.0);
    }
}
