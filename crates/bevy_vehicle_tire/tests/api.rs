//! Robustness, validation, serialization and `LoadedTire` properties.

mod common;

use bevy_vehicle_tire::{
    BrushTire, CombinedSlip, LinearTire, LoadedTire, MagicFormula, TireError, TireModel,
};

fn models() -> Vec<(&'static str, TireModel)> {
    let mut v: Vec<(&'static str, TireModel)> = common::all_sets()
        .into_iter()
        .map(|(n, m)| (n, TireModel::MagicFormula(m)))
        .collect();
    v.push(("brush", TireModel::BrushTire(BrushTire::default())));
    v.push(("linear", TireModel::LinearTire(LinearTire::default())));
    v
}

const HUGE: [f64; 11] = [
    0.0,
    1e-300,
    0.3,
    -0.7,
    1e3,
    -1e3,
    1e6,
    -1e6,
    1e200,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Requirement 10.
#[test]
fn no_load_gives_zero_force_and_never_nan() {
    for (name, model) in models() {
        for fz in [
            0.0,
            -0.0,
            -5.0,
            -1e9,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let tire = model.at_load(fz, 1.0);
            assert_eq!(tire.load(), 0.0, "{name} fz={fz}");
            assert_eq!(tire, LoadedTire::default(), "{name} fz={fz}");
            for k in HUGE {
                for t in HUGE {
                    assert_eq!(tire.forces(k, t), [0.0, 0.0], "{name} fz={fz} ({k}, {t})");
                    assert_eq!(tire.pure_forces(k, t), [0.0, 0.0], "{name} fz={fz}");
                }
            }
            assert_eq!(tire.stiffness(), [0.0, 0.0]);
            assert_eq!(tire.peak_slip(), [0.0, 0.0]);
            assert_eq!(tire.peak_force(), [0.0, 0.0]);
        }
    }
}

#[test]
fn zero_friction_gives_zero_force_but_keeps_the_load() {
    for (name, model) in models() {
        for mu in [0.0, -1.0, 1e-12, f64::NAN, f64::INFINITY] {
            let tire = model.at_load(3000.0, mu);
            assert_eq!(tire.load(), 3000.0, "{name} mu={mu}");
            for k in HUGE {
                for t in HUGE {
                    assert_eq!(tire.forces(k, t), [0.0, 0.0], "{name} mu={mu} ({k}, {t})");
                }
            }
        }
    }
}

#[test]
fn forces_are_finite_for_huge_slips_loads_and_frictions() {
    for (name, model) in models() {
        for fz in [1e-6, 1.0, 100.0, 4000.0, 12_000.0, 1e6] {
            for mu in [1e-6, 0.05, 0.3, 1.0, 3.0] {
                let tire = model.at_load(fz, mu);
                assert_eq!(tire.load(), fz);
                for k in HUGE {
                    for t in HUGE {
                        for f in tire.forces(k, t).into_iter().chain(tire.pure_forces(k, t)) {
                            assert!(f.is_finite(), "{name} fz={fz} mu={mu} ({k}, {t}): {f}");
                        }
                        // Bounded by the (shifted) friction limit.
                        let [fx, fy] = tire.forces(k, t);
                        let bound = 1.2 * mu * fz * 1.3;
                        assert!(fx.abs() <= bound && fy.abs() <= bound, "{name} ({k}, {t})");
                    }
                }
                for v in tire.stiffness().into_iter().chain(tire.peak_force()) {
                    assert!(v.is_finite() && v > 0.0, "{name} fz={fz} mu={mu}: {v}");
                }
            }
        }
    }
}

#[test]
fn saturated_slips_keep_their_direction() {
    for (name, model) in models() {
        let tire = model.at_load(4000.0, 1.0);
        // Far beyond 1e12 both slips are scaled together: same force as at 1e12 scale.
        let a = tire.forces(3e15, -1.5e15);
        let b = tire.forces(1e12, -0.5e12);
        assert_eq!(a, b, "{name}");
        let inf = tire.forces(f64::INFINITY, 0.0);
        assert!(inf[0] > 0.0 && inf[0].is_finite(), "{name}: {inf:?}");
        assert!(
            tire.forces(f64::NAN, 0.1)[0].is_nan(),
            "{name}: NaN in, NaN out"
        );
    }
}

#[test]
fn loaded_tire_is_small_copy_and_defaults_to_zero() {
    fn copy<T: Copy + Clone + std::fmt::Debug + PartialEq + Default>() {}
    copy::<LoadedTire>();
    let size = std::mem::size_of::<LoadedTire>();
    println!("size_of::<LoadedTire>() = {size}");
    // 26 f64 for the weighting variant (load, 2×7 axis coefficients, 11 r-coefficients)
    // plus the discriminant.
    assert!(size <= 216, "{size}");
    let d = LoadedTire::default();
    assert_eq!(d.load(), 0.0);
    assert_eq!(d.forces(0.1, 0.1), [0.0, 0.0]);
    assert_eq!(d.stiffness(), [0.0, 0.0]);
}

#[test]
fn defaults_and_published_sets_validate() {
    for (name, model) in models() {
        assert_eq!(model.validate(), Ok(()), "{name}");
    }
    assert_eq!(TireModel::default().validate(), Ok(()));
}

fn mf_error(f: impl FnOnce(&mut MagicFormula)) -> TireError {
    let mut m = MagicFormula::passenger_205_60_r15_weighting();
    f(&mut m);
    TireModel::MagicFormula(m).validate().unwrap_err()
}

fn set_weighting(m: &mut MagicFormula, f: impl FnOnce(&mut [f64; 11])) {
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
        unreachable!()
    };
    let mut r = [
        r_bx1, r_bx2, r_cx1, r_ex1, r_hx1, r_by1, r_by2, r_by3, r_cy1, r_ey1, r_hy1,
    ];
    f(&mut r);
    m.combined = CombinedSlip::Weighting {
        r_bx1: r[0],
        r_bx2: r[1],
        r_cx1: r[2],
        r_ex1: r[3],
        r_hx1: r[4],
        r_by1: r[5],
        r_by2: r[6],
        r_by3: r[7],
        r_cy1: r[8],
        r_ey1: r[9],
        r_hy1: r[10],
    };
}

#[test]
fn validation_names_the_offending_field() {
    let cases: Vec<(TireError, &str)> = vec![
        (mf_error(|m| m.p_dx1 = f64::NAN), "magic_formula.p_dx1"),
        (mf_error(|m| m.p_vy2 = f64::INFINITY), "magic_formula.p_vy2"),
        (mf_error(|m| m.fz0 = 0.0), "magic_formula.fz0"),
        (
            mf_error(|m| m.mu_reference = -1.0),
            "magic_formula.mu_reference",
        ),
        (
            mf_error(|m| m.lateral_mu_reference = Some(0.0)),
            "magic_formula.lateral_mu_reference",
        ),
        (
            mf_error(|m| m.lateral_mu_reference = Some(f64::NAN)),
            "magic_formula.lateral_mu_reference",
        ),
        (mf_error(|m| m.p_cx1 = 2.5), "magic_formula.p_cx1"),
        (mf_error(|m| m.p_cy1 = 0.0), "magic_formula.p_cy1"),
        (mf_error(|m| m.p_ex1 = 1.5), "magic_formula.p_ex1"),
        (mf_error(|m| m.p_ky2 = 0.0), "magic_formula.p_ky2"),
        (mf_error(|m| m.p_kx1 = 0.0), "magic_formula.p_kx1"),
        (mf_error(|m| m.p_dy1 = 0.99), "magic_formula.p_dy1"),
        (
            mf_error(|m| set_weighting(m, |r| r[2] = 0.0)),
            "magic_formula.combined.r_cx1",
        ),
        (
            mf_error(|m| set_weighting(m, |r| r[0] = -1.0)),
            "magic_formula.combined.r_bx1",
        ),
        (
            mf_error(|m| set_weighting(m, |r| r[9] = 2.0)),
            "magic_formula.combined.r_ey1",
        ),
        (
            mf_error(|m| set_weighting(m, |r| r[4] = 1.0)),
            "magic_formula.combined.r_hx1",
        ),
        (
            mf_error(|m| set_weighting(m, |r| r[7] = f64::NAN)),
            "magic_formula.combined.r_by3",
        ),
        (
            TireModel::BrushTire(BrushTire {
                longitudinal_stiffness: -1.0,
                ..BrushTire::default()
            })
            .validate()
            .unwrap_err(),
            "brush_tire.longitudinal_stiffness",
        ),
        (
            TireModel::BrushTire(BrushTire {
                cornering_stiffness: f64::NAN,
                ..BrushTire::default()
            })
            .validate()
            .unwrap_err(),
            "brush_tire.cornering_stiffness",
        ),
        (
            TireModel::LinearTire(LinearTire {
                cornering_stiffness: -0.1,
                ..LinearTire::default()
            })
            .validate()
            .unwrap_err(),
            "linear_tire.cornering_stiffness",
        ),
    ];
    for (err, field) in cases {
        assert_eq!(err.field, field, "{err}");
        assert!(!err.reason.is_empty());
    }
    let err = mf_error(|m| m.p_dx1 = f64::NAN);
    assert_eq!(
        err.to_string(),
        "invalid tire parameter `magic_formula.p_dx1`: must be a finite number, got NaN"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().contains("p_dx1"));
    // A set in a positive-slip convention (both signs flipped) is as valid as the ISO set.
    let mut m = MagicFormula::passenger_205_60_r15();
    m.p_dy1 = -m.p_dy1;
    m.p_ky1 = -m.p_ky1;
    assert_eq!(m.validate(), Ok(()));
}

/// Flipping the lateral sign convention of the data (negating `p_dy*`, `p_ky1` and the slip
/// shifts) does not change the forces: the crate's sign normalisation is consistent.
#[test]
fn lateral_sign_convention_of_the_data_does_not_matter() {
    for m in [
        MagicFormula::passenger_205_60_r15(),
        MagicFormula::passenger_205_60_r15_weighting(),
    ] {
        let mut f = m;
        f.p_dy1 = -m.p_dy1;
        f.p_dy2 = -m.p_dy2;
        f.p_ky1 = -m.p_ky1;
        f.p_hy1 = -m.p_hy1;
        f.p_hy2 = -m.p_hy2;
        f.p_ey3 = -m.p_ey3;
        if let CombinedSlip::Weighting { r_hx1, r_by3, .. } = m.combined {
            set_weighting(&mut f, |r| {
                r[4] = -r_hx1;
                r[7] = -r_by3;
            });
        }
        for fz in [1500.0, 4000.0, 7000.0] {
            let a = m.at_load(fz, 1.0);
            let b = f.at_load(fz, 1.0);
            for k in common::grid(-0.5, 0.5, 40) {
                for t in common::grid(-0.5, 0.5, 40) {
                    assert_eq!(a.forces(k, t), b.forces(k, t), "fz={fz} ({k}, {t})");
                }
            }
        }
    }
}

#[test]
fn serde_round_trips_and_is_externally_tagged() {
    for (name, model) in models() {
        let text = ron::to_string(&model).unwrap();
        let back: TireModel = ron::from_str(&text).unwrap();
        assert_eq!(back, model, "{name}: {text}");
    }
    let brush: TireModel =
        ron::from_str("BrushTire((longitudinal_stiffness: 16.0, cornering_stiffness: 12.0))")
            .unwrap();
    assert_eq!(brush, TireModel::BrushTire(BrushTire::default()));
    let text = ron::to_string(&TireModel::LinearTire(LinearTire::default())).unwrap();
    assert!(text.starts_with("LinearTire("), "{text}");
    let text = ron::to_string(&TireModel::default()).unwrap();
    assert!(
        text.starts_with("MagicFormula(") && text.contains("p_dy1:"),
        "{text}"
    );
    assert!(text.contains("combined:Normalized"), "{text}");
}

#[test]
fn serde_refuses_unknown_fields_and_defaults_combined() {
    assert!(
        ron::from_str::<TireModel>(
            "BrushTire((longitudinal_stiffness: 16.0, cornering_stiffness: 12.0, mu: 1.0))"
        )
        .is_err()
    );
    assert!(ron::from_str::<TireModel>("LinearTire((longitudinal_stiffness: 16.0))").is_err());
    // A Magic Formula without `combined` gets the normalised method.
    let full = ron::to_string(&TireModel::default()).unwrap();
    let without = full.replace(",combined:Normalized", "");
    assert_ne!(full, without);
    assert_eq!(
        ron::from_str::<TireModel>(&without).unwrap(),
        TireModel::default()
    );
    // Unknown fields are refused in the model and in a weighting variant.
    let extra = full.replace("fz0:", "p_dx3:0.0,fz0:");
    assert!(ron::from_str::<TireModel>(&extra).is_err());
    let weighting = ron::to_string(&TireModel::from(
        MagicFormula::passenger_205_60_r15_weighting(),
    ))
    .unwrap();
    assert!(ron::from_str::<TireModel>(&weighting).is_ok());
    let extra = weighting.replace("r_bx1:", "r_bx3:0.0,r_bx1:");
    assert_ne!(extra, weighting);
    assert!(ron::from_str::<TireModel>(&extra).is_err());
}

/// `longitudinal_force` is `forces(..)[0]` to the bit, for every model and combined-slip
/// method, across slips from zero through the peaks to saturation and at the special values.
#[test]
fn longitudinal_force_is_forces_fx_to_the_bit() {
    let mut all = models();
    all.push((
        "linear, separate axes",
        TireModel::LinearTire(LinearTire {
            separate_axes: Some(0.8),
            ..LinearTire::default()
        }),
    ));
    let slips: Vec<f64> = common::grid(-1.0, 1.0, 80)
        .chain(HUGE)
        .chain(HUGE.map(|v| -v))
        .collect();
    let mut checked = 0;
    for (name, model) in all {
        for fz in [0.0, 800.0, 4000.0, 9000.0] {
            let tire = model.at_load(fz, 0.9);
            for &kappa in &slips {
                for &tan_alpha in &slips {
                    let fx = tire.forces(kappa, tan_alpha)[0];
                    let only = tire.longitudinal_force(kappa, tan_alpha);
                    assert_eq!(
                        fx.to_bits(),
                        only.to_bits(),
                        "{name} at {fz} N, κ {kappa}, tan α {tan_alpha}: {fx} vs {only}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// `longitudinal_forces` of several tires at once is each tire's `longitudinal_force` to the
/// bit, and `forces_lanes` each tire's `forces`: mixed models, combined-slip methods and loads
/// in one call, each lane at its own slips (zero, small, past the peaks, saturated, infinite,
/// NaN), for 1, 3 and 4 lanes, and four loaded tires of one model, as a car's wheels.
#[test]
fn longitudinal_forces_are_each_tires_longitudinal_force_to_the_bit() {
    let tires: Vec<(String, LoadedTire)> = models()
        .into_iter()
        .flat_map(|(name, model)| {
            [0.0, 800.0, 4000.0, 9000.0]
                .map(|fz| (format!("{name} at {fz} N"), model.at_load(fz, 0.9)))
        })
        .collect();
    let slips: Vec<f64> = common::grid(-1.0, 1.0, 41)
        .chain(HUGE)
        .chain(HUGE.map(|v| -v))
        .chain([f64::NAN])
        .collect();
    // Walks the lanes through tires and slips at different strides, so every lane meets
    // every kind of tire next to every other kind.
    let pick = |n: usize, lane: usize, stride: usize| (n * stride + lane * 7) % tires.len();
    let slip = |n: usize, lane: usize, stride: usize| slips[(n * stride + lane * 13) % slips.len()];
    fn check<const N: usize>(
        tires: [&(String, LoadedTire); N],
        kappa: [f64; N],
        tan_alpha: [f64; N],
    ) {
        let together = LoadedTire::longitudinal_forces(tires.map(|t| &t.1), kappa, tan_alpha);
        let both = LoadedTire::forces_lanes(tires.map(|t| &t.1), kappa, tan_alpha);
        for i in 0..N {
            let alone = tires[i].1.longitudinal_force(kappa[i], tan_alpha[i]);
            assert_eq!(
                together[i].to_bits(),
                alone.to_bits(),
                "lane {i} of {N}, {}: κ {}, tan α {}: {} together vs {alone} alone",
                tires[i].0,
                kappa[i],
                tan_alpha[i],
                together[i]
            );
            let pair = tires[i].1.forces(kappa[i], tan_alpha[i]);
            assert_eq!(
                both[i].map(f64::to_bits),
                pair.map(f64::to_bits),
                "lane {i} of {N}, {}: κ {}, tan α {}: {:?} together vs {pair:?} alone",
                tires[i].0,
                kappa[i],
                tan_alpha[i],
                both[i]
            );
        }
    }
    let mut checked = 0;
    for n in 0..20_000 {
        let four: [usize; 4] = std::array::from_fn(|l| pick(n, l, 3));
        check(
            four.map(|t| &tires[t]),
            std::array::from_fn(|l| slip(n, l, 5)),
            std::array::from_fn(|l| slip(n, l, 11)),
        );
        check(
            [
                &tires[pick(n, 0, 5)],
                &tires[pick(n, 1, 5)],
                &tires[pick(n, 2, 5)],
            ],
            std::array::from_fn(|l| slip(n, l, 7)),
            std::array::from_fn(|l| slip(n, l, 3)),
        );
        check([&tires[pick(n, 0, 1)]], [slip(n, 0, 1)], [slip(n, 0, 17)]);
        // A car's four wheels: one model, every lane loaded, so that with slips on both axes
        // every lane is a turning tire's (the lanes above always hold an unloaded one).
        let model = 4 * (n % (tires.len() / 4));
        let loaded = [1, 2, 3, 1 + n % 3].map(|load| &tires[model + load]);
        check(
            loaded,
            std::array::from_fn(|l| slip(n, l, 19)),
            std::array::from_fn(|l| slip(n, l, 23)),
        );
        checked += 12;
    }
    assert!(checked >= 240_000, "{checked}");
}
