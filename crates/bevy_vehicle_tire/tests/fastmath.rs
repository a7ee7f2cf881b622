//! Accuracy, symmetry, monotonicity and determinism of `fastmath` against `std`.

use bevy_vehicle_tire::fastmath::{atan, cos, exp, sin};
use std::f64::consts::{FRAC_PI_2, PI};

/// The documented bound (absolute for atan/sin/cos, relative for exp). `std` is itself
/// within an ulp, so this is the combined error of both; the requirement is 2e-7.
const BOUND: f64 = 4.5e-16;

fn dense(a: f64, b: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..=n).map(move |i| a + (b - a) * i as f64 / n as f64)
}

/// Positive magnitudes from 1e-300 to 1e300 with ratio ≈ 1.0007, plus their neighbours.
fn log_grid() -> impl Iterator<Item = f64> {
    (0..=2_000_000).map(|i| 10f64.powf(-300.0 + 600.0 * f64::from(i) / 2e6))
}

fn max_err(xs: impl Iterator<Item = f64>, f: fn(f64) -> f64, g: fn(f64) -> f64) -> (f64, f64) {
    xs.map(|x| ((f(x) - g(x)).abs(), x))
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
}

#[test]
fn atan_is_accurate_everywhere() {
    let (e1, x1) = max_err(dense(-1000.0, 1000.0, 4_000_000), atan, f64::atan);
    let (e2, x2) = max_err(log_grid(), atan, f64::atan);
    let (e3, x3) = max_err(log_grid().map(|x| -x), atan, f64::atan);
    println!("atan max errors: {e1:e} at {x1}, {e2:e} at {x2}, {e3:e} at {x3}");
    assert!(e1 <= BOUND && e2 <= BOUND && e3 <= BOUND);
}

#[test]
fn atan_special_values_and_limits() {
    assert_eq!(atan(0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(atan(-0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(atan(f64::INFINITY), FRAC_PI_2);
    assert_eq!(atan(f64::NEG_INFINITY), -FRAC_PI_2);
    assert_eq!(atan(1e300), FRAC_PI_2);
    assert_eq!(atan(f64::MAX), FRAC_PI_2);
    assert_eq!(atan(-f64::MAX), -FRAC_PI_2);
    assert_eq!(atan(1e-300), 1e-300);
    assert_eq!(atan(f64::MIN_POSITIVE), f64::MIN_POSITIVE);
    assert!(atan(f64::NAN).is_nan());
    for x in dense(-50.0, 50.0, 100_000).chain(log_grid().step_by(97)) {
        assert!(atan(x).abs() <= FRAC_PI_2, "{x}");
    }
}

#[test]
fn atan_is_odd_and_monotone() {
    let mut prev = atan(-1000.0);
    for x in dense(-1000.0, 1000.0, 2_000_000).skip(1) {
        let v = atan(x);
        assert_eq!(atan(-x).to_bits(), (-v).to_bits(), "odd at {x}");
        assert!(v >= prev, "not monotone at {x}: {v} < {prev}");
        prev = v;
    }
    let mut prev = 0.0;
    for x in log_grid() {
        let v = atan(x);
        assert!(v >= prev, "not monotone at {x}");
        prev = v;
    }
    // Fine steps across the internal branch points tan(π/8), 1 and tan(3π/8).
    for b in [0.41421356237309515, 1.0, 2.414213562373095] {
        let mut x = b - 2e-12;
        let mut prev = atan(x);
        for _ in 0..40_000 {
            x = x.next_up();
            let v = atan(x);
            assert!(v >= prev - 2.3e-16, "non-monotone beyond an ulp at {x}");
            assert!(v - prev <= 4.5e-16, "jump at {x}: {}", v - prev);
            prev = v;
        }
    }
}

#[test]
fn sin_cos_are_accurate_on_four_turns() {
    let span = 4.0 * PI;
    let (es, xs) = max_err(dense(-span, span, 4_000_000), sin, f64::sin);
    let (ec, xc) = max_err(dense(-span, span, 4_000_000), cos, f64::cos);
    println!("sin max error {es:e} at {xs}, cos max error {ec:e} at {xc}");
    assert!(es <= BOUND && ec <= BOUND);
}

#[test]
fn sin_cos_are_accurate_for_large_arguments() {
    let mut xs: Vec<f64> = log_grid().filter(|&x| x >= 1.0).step_by(7).collect();
    // Around the switch from Cody–Waite to Payne–Hanek reduction, and extreme values.
    xs.extend([
        1048575.9999999999,
        1048576.0,
        1048576.0000000001,
        1e22,
        1e300,
        f64::MAX,
    ]);
    xs.extend(dense(1e6, 1e6 + 100.0, 100_000));
    // Close to multiples of π/2, where the reduced argument is tiny.
    xs.extend([
        PI * 1e6,
        FRAC_PI_2 * 12_345_678.0,
        6.381956970095103e+172,
        5.319372648326541e+255,
    ]);
    let mut worst: f64 = 0.0;
    for &x in &xs {
        for (f, g) in [
            (sin as fn(f64) -> f64, f64::sin as fn(f64) -> f64),
            (cos, f64::cos),
        ] {
            let e = (f(x) - g(x)).abs();
            assert!(e <= BOUND, "{x}: {} vs {}", f(x), g(x));
            let e2 = (f(-x) - g(-x)).abs();
            assert!(e2 <= BOUND, "{}: {} vs {}", -x, f(-x), g(-x));
            worst = worst.max(e).max(e2);
        }
    }
    println!(
        "sin/cos large-argument max error {worst:e} over {} arguments",
        xs.len()
    );
}

#[test]
fn sin_cos_symmetry_range_and_special_values() {
    for x in dense(-100.0, 100.0, 1_000_000).chain(log_grid().step_by(13)) {
        let (s, c) = (sin(x), cos(x));
        assert_eq!(sin(-x).to_bits(), (-s).to_bits(), "sin odd at {x}");
        assert_eq!(cos(-x).to_bits(), c.to_bits(), "cos even at {x}");
        assert!(s.abs() <= 1.0 && c.abs() <= 1.0, "{x}");
    }
    assert_eq!(sin(0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(sin(-0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(cos(0.0), 1.0);
    assert_eq!(sin(FRAC_PI_2), 1.0);
    assert_eq!(sin(1e-300), 1e-300);
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(sin(v).is_nan() && cos(v).is_nan());
    }
}

#[test]
fn sin_cos_are_monotone_where_the_true_functions_are() {
    // sin rises on [−π/2, π/2] and falls on [π/2, 3π/2]; cos falls on [0, π], rises on
    // [π, 2π]. Grid step ≈ 1e-5: even next to the extrema the true steps are ~1e-10, far
    // above rounding, so any violation is an approximation defect.
    let check = |f: fn(f64) -> f64, a: f64, b: f64, rising: bool| {
        let mut prev = f(a);
        for x in dense(a, b, 300_000).skip(1) {
            let v = f(x);
            assert!(
                if rising { v >= prev } else { v <= prev },
                "at {x}: {v} after {prev}"
            );
            prev = v;
        }
    };
    for k in -2..=2 {
        let o = 2.0 * PI * f64::from(k);
        check(sin, o - FRAC_PI_2, o + FRAC_PI_2, true);
        check(sin, o + FRAC_PI_2, o + 3.0 * FRAC_PI_2, false);
        check(cos, o, o + PI, false);
        check(cos, o + PI, o + 2.0 * PI, true);
    }
    // Fine steps across the reduction boundaries at (k + ½)·π/2 stay continuous.
    for k in 0..12 {
        let b = (f64::from(k) + 0.5) * FRAC_PI_2;
        let mut x = b - 1e-12;
        let (mut ps, mut pc) = (sin(x), cos(x));
        for _ in 0..5_000 {
            let step = x.next_up() - x;
            x = x.next_up();
            let (s, c) = (sin(x), cos(x));
            // |sin'|, |cos'| ≤ 1: a step of one ulp moves the true value by at most `step`.
            let allowed = step + 4.5e-16;
            assert!(
                (s - ps).abs() <= allowed && (c - pc).abs() <= allowed,
                "jump at {x}"
            );
            (ps, pc) = (s, c);
        }
    }
}

#[test]
fn exp_is_accurate() {
    let mut worst: f64 = 0.0;
    for x in dense(-700.0, 700.0, 2_800_000).chain(dense(-1.0, 1.0, 200_000)) {
        let (a, b) = (exp(x), x.exp());
        worst = worst.max((a - b).abs() / b);
    }
    println!("exp max relative error {worst:e}");
    assert!(worst <= BOUND);
    assert_eq!(exp(0.0), 1.0);
    assert_eq!(exp(-0.0), 1.0);
    assert_eq!(exp(710.0), f64::INFINITY);
    assert_eq!(exp(f64::INFINITY), f64::INFINITY);
    assert_eq!(exp(-746.0), 0.0);
    assert_eq!(exp(f64::NEG_INFINITY), 0.0);
    assert!(exp(f64::NAN).is_nan());
    // Near overflow and in the subnormal range.
    for x in [709.0, 709.78, -708.0, -720.0, -740.0, -745.0] {
        let (a, b) = (exp(x), x.exp());
        assert!(
            (a - b).abs() <= BOUND * b.max(f64::MIN_POSITIVE) + 5e-324,
            "{x}: {a} vs {b}"
        );
    }
    // Monotone.
    let mut prev = exp(-20.0);
    for x in dense(-20.0, 20.0, 400_000).skip(1) {
        let v = exp(x);
        assert!(v >= prev, "{x}");
        prev = v;
    }
}

/// Pins exact bit patterns so any change in the algorithms (or a platform that computes
/// differently) is caught: these values must be identical everywhere.
#[test]
fn results_are_bit_exact_golden_values() {
    type F = fn(f64) -> f64;
    let golden: [(F, F, f64, u64); 12] = [
        (atan, f64::atan, 0.3, 0x3FD2_A73A_661E_AF06),
        (atan, f64::atan, 1.7, 0x3FF0_A00A_3BCE_369F),
        (atan, f64::atan, 123.456, 0x3FF9_00CD_FEB5_60B4),
        (sin, f64::sin, 0.5, 0x3FDE_AEE8_744B_05F0),
        (sin, f64::sin, 2.9, 0x3FCE_9FB8_D648_30E2),
        (sin, f64::sin, 1e6, 0xBFD6_664B_2568_D867),
        (sin, f64::sin, 1e300, 0xBFEA_2C16_B010_E386),
        (cos, f64::cos, 0.5, 0x3FEC_1528_065B_7D50),
        (cos, f64::cos, 4.0, 0xBFE4_EAA6_06DB_24C1),
        (cos, f64::cos, 1e300, 0xBFE2_6990_22AD_C4C0),
        (exp, f64::exp, 1.0, 0x4005_BF0A_8B14_576A),
        (exp, f64::exp, -3.7, 0x3F99_511F_C687_1044),
    ];
    for (f, reference, x, bits) in golden {
        let v = f(x);
        assert_eq!(v.to_bits(), bits, "{x}: {v} ({:#018X})", v.to_bits());
        // The pinned values are themselves within the accuracy bound of std.
        assert!(
            (v - reference(x)).abs() <= BOUND * reference(x).abs().max(1.0),
            "{x}"
        );
    }
}
