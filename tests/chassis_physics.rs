//! Chassis physics on a headless Rapier world, against closed-form results. Tolerances are
//! stated per test.

use crate::common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::{Collider, Friction, GravityScale, RigidBody, Velocity};
use bevy_vehicle_physics::prelude::*;
use common::*;

/// An electric car (no gearbox: clean traction and speed control), `layout`-driven, with a
/// 9:1 reduction and a motor strong enough to spin its wheels.
fn electric_car(layout: DriveLayout) -> CarBuilder {
    CarBuilder {
        layout,
        powertrain: Powertrain::Electric(Motor {
            peak_torque: 450.0,
            max_power: 250_000.0,
            max_rpm: 16_000.0,
            ..default()
        }),
        differential: Differential {
            ratio: 9.0,
            ..default()
        },
        ..default()
    }
}

/// The front tire of `car` at load `fz` on a surface of friction `mu`.
fn loaded_tire(car: &CarBuilder, fz: f64, mu: f64) -> LoadedTire {
    axle_tire(car, 0, fz, mu)
}

/// The tire on `axle` of `car` (0 front, 1 rear) at load `fz` on friction `mu`.
fn axle_tire(car: &CarBuilder, axle: usize, fz: f64, mu: f64) -> LoadedTire {
    car.wheel_spec(axle).tire.model.at_load(fz, mu)
}

/// Peak longitudinal force of one tire of `car` at load `fz` on friction `mu` (N).
fn peak_fx(car: &CarBuilder, fz: f64, mu: f64) -> f64 {
    let t = loaded_tire(car, fz, mu);
    t.forces(t.peak_slip()[0], 0.0)[0]
}

/// Spawns `car` at the world origin at its design ride height over flat ground at height 0.
fn spawn_at_ride_height(app: &mut App, car: &CarBuilder) -> Entity {
    spawn_car(
        app,
        car,
        Transform::from_xyz(0.0, car_rest_height(car), 0.0),
    )
}

/// Static ride height: with no preload, each corner's suspension compresses by its static
/// wheel load over the spring rate (2 %).
#[test]
fn static_ride_height_matches_spring_rate_and_axle_loads() {
    let mut app = create_app(60.0);
    spawn_flat_ground(&mut app, 0.9);
    let mut builder = CarBuilder {
        static_preload: false,
        ..default()
    };
    builder.wheel.suspension.compression_limit = 0.3;
    builder.wheel.suspension.extension_limit = 0.1;
    let car = spawn_car(
        &mut app,
        &builder,
        Transform::from_xyz(0.0, car_rest_height(&builder) + 0.05, 0.0),
    );
    tick(&mut app, 6 * 60);
    let k = builder.wheel.suspension.stiffness;
    for w in wheels(&mut app, car) {
        let axle = get::<WheelMount>(&app, w).axle as usize;
        let state = get::<WheelState>(&app, w);
        let predicted = builder.static_wheel_load(axle) / k;
        assert!(state.grounded);
        assert!(
            rel(state.travel, predicted) < 0.02,
            "axle {axle}: compression {} m, predicted {predicted} m",
            state.travel
        );
    }
    assert!(velocity(&app, car).length() < 1e-3);
}

/// Heave: dropped 0.1 m, the default car's body (centre of mass over the middle of the
/// wheelbase, no anti-roll bars) oscillates with the quarter-car natural frequency
/// `√(k/m_q)` and damping ratio `c/(2√(k·m_q))`, at 30, 60 and 120 Hz, with damping ratios
/// 0.19 and 0.40 (2 %; the issue asks 5 %; each peak placed on the parabola through its
/// three samples). Measured: `ω_n` within 0.36 %, ζ within 0.78 % (the worst, both at 30 Hz;
/// 0.30 % and 1.04 % before the suspension's force was solved with the step's motion,
/// 2026-12-03).
///
/// Until 2026-11-28 the dampers acted on the travel rate at the step's start, half a step
/// behind the motion (Rapier holds the force over the step), which stiffened the suspension
/// by about `c·ω²·dt/2`: `ω_n` 3.8 % and ζ 2.8 % high at 30 Hz with ζ = 0.19, and 8.0 % and
/// 6.9 % with ζ = 0.40 (3.5 % and 3.3 % at 60 Hz). They now act on the rate predicted for the
/// step's middle (`CornerInput::rate`).
#[test]
fn heave_oscillation_matches_quarter_car() {
    for c in [1_200.0, 2_500.0] {
        for hz in [30.0, 60.0, 120.0] {
            let [omega, zeta] = heave(hz, c);
            println!(
                "c {c} N·s/m at {hz} Hz: ω_n {:+.2} %, ζ {:+.2} %",
                (omega - 1.0) * 100.0,
                (zeta - 1.0) * 100.0
            );
            assert!(
                (omega - 1.0).abs() < 0.02 && (zeta - 1.0).abs() < 0.02,
                "c {c} N·s/m at {hz} Hz: ω_n {omega}×, ζ {zeta}× the quarter car's"
            );
        }
    }
}

/// The body's pitch on its springs, against the rigid body on four vertical springs whose
/// loads act below the wheel centres: `ω² = (2k·(l_f² + l_r²) + m·g·(y_w − y_cg))/I`. As the
/// body pitches by `θ` the wheels, held to it, move fore and aft by `(y_w − y_cg)·θ`, and the
/// static loads with them; their moment about the centre of mass changes by `m·g·(y_w −
/// y_cg)·θ`, which the textbook `√(Σk·l²/I)` leaves out (+0.99 % of `ω` with the centre of
/// mass at the ground and wheels of 0.316 m, −0.58 % with it 0.5 m up).
///
/// The car, undamped and balanced (`l_f = l_r`, so heave and pitch are apart), is set
/// pitching at 0.05 rad/s: rolling at 15 m/s with its centre of mass 0.5 m up, and standing
/// with it at the ground, where the tires' hold on the ground (a standing wheel's rolling
/// resistance holds it up to `C_rr·F_z·R`) has no lever about it. Tolerance 0.3 %, at 30 and
/// 120 Hz; measured within 0.12 %.
#[test]
fn the_body_pitches_at_its_springs_and_the_static_loads_moving_with_the_wheels() {
    for hz in [30.0, 120.0] {
        for (com_y, speed) in [(0.184, 15.0), (-0.316, 0.0)] {
            let k = 30_000.0;
            let mut car = CarBuilder {
                center_of_mass: Vec3::new(0.0, com_y, 0.0),
                anti_roll_bars: [0.0, 0.0],
                aerodynamics: Aerodynamics {
                    drag_area: 0.0,
                    ..default()
                },
                ..default()
            };
            car.brakes.traction_control = None;
            car.wheel.suspension.stiffness = k;
            car.wheel.suspension.bump_damping = 0.0;
            car.wheel.suspension.rebound_damping = 0.0;
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let e = spawn_car_at_rest(&mut app, &car);
            tick(&mut app, (hz * 2.0) as usize);
            if speed > 0.0 {
                flying_start(&mut app, e, speed);
                tick(&mut app, hz as usize);
            }
            set::<Velocity>(&mut app, e, |v| v.angular.x += 0.05);
            // Upward zero crossings of the pitch rate over 4 s.
            let mut crossings = Vec::new();
            let mut last = get::<Velocity>(&app, e).angular.x;
            for i in 0..(hz * 4.0) as usize {
                tick(&mut app, 1);
                let now = get::<Velocity>(&app, e).angular.x;
                if last < 0.0 && now >= 0.0 {
                    crossings.push(i as f32 + -last / (now - last));
                }
                last = now;
            }
            let n = crossings.len() - 1;
            let period = f64::from(crossings[n] - crossings[0]) / n as f64 / hz;
            let omega = std::f64::consts::TAU / period;
            let (m, inertia) = (f64::from(car.mass), f64::from(car.inertia.x));
            let l = f64::from(car.rear_axle);
            let shift = m * GRAVITY * f64::from(car.wheel_height - com_y);
            let expected = ((2.0 * k * 2.0 * l * l + shift) / inertia).sqrt();
            println!(
                "{hz} Hz, centre of mass at y {com_y} m, {speed} m/s: ω {omega:.4} rad/s \
                 against {expected:.4} ({:+.2} %)",
                (omega / expected - 1.0) * 100.0
            );
            assert!(
                rel(omega, expected) < 3e-3,
                "{hz} Hz, centre of mass at y {com_y} m, {speed} m/s: pitch ω {omega} rad/s \
                 against {expected}"
            );
        }
    }
}

/// Heave of a stiffly sprung car at low fixed-step rates: the default car on 100 kN/m springs
/// with 2.5 kN·s/m dampers (`ω_n` 16.9 rad/s, ζ 0.21; `ω·dt` 1.13 at 15 Hz), dropped 0.1 m,
/// rings at the quarter car's natural frequency within 3 % and damping ratio within 15 % at
/// 15 and 20 Hz, and within 1 % and 3 % from 30 Hz up. Measured: `ω_n` +1.3 / +1.1 / +0.3 %
/// and ζ −13.8 / −5.8 / −2.5 % at 15 / 20 / 30 Hz (+0.1 % and −0.6 % at 60 Hz); the step's
/// own error at `ω·dt` = 1.13 is about −8 % in ζ for a small motion.
///
/// Until 2026-12-03 the spring acted at the step's start and the damper was held down to
/// what the spring's `ω·dt` left of a stable explicit step: ζ 81 % low and `ω_n` 14 % low at
/// 15 Hz. The chassis now solves each corner's force with the travel it makes over the step
/// (`SPRING_STEP_WEIGHT`), and holds the damper only to what the tires' loads follow
/// (`MAX_DAMPING_PER_STEP`).
#[test]
fn a_stiffly_sprung_car_keeps_its_heave_damping_at_low_rates() {
    for hz in [15.0, 20.0, 30.0, 60.0] {
        let [omega, zeta] = heave_on(hz, 100_000.0, 2_500.0);
        println!(
            "{hz} Hz: ω_n {:+.2} %, ζ {:+.2} %",
            (omega - 1.0) * 100.0,
            (zeta - 1.0) * 100.0
        );
        let [dw, dz] = if hz < 30.0 {
            [0.03, 0.15]
        } else {
            [0.01, 0.03]
        };
        assert!(
            (omega - 1.0).abs() < dw && (zeta - 1.0).abs() < dz,
            "{hz} Hz: ω_n {omega}×, ζ {zeta}× the quarter car's"
        );
    }
}

/// Half-critical dampers (ζ 0.5) on 30, 60 and 100 kN/m springs: the body's heave keeps its
/// natural frequency within 2.5 % and its damping ratio within 4 % of the quarter car's at
/// every rate whose step the heave's damping fits (`c·dt/m ≤ MAX_DAMPING_PER_STEP` on the mass
/// per wheel), 15 Hz on the 30 kN/m springs included.
///
/// The bound that keeps a damper from rocking the body on its tires' loads, held over the
/// step, is set by the body's stiffest mode, which on a car is its roll (0.73 of the heave's
/// mass per wheel here). Until 2026-12-04 it held the whole damper to it, so the heave, which
/// rocks nothing, lost damping it could keep: ζ 14.4 % low at 15 Hz on 30 kN/m, 19.1 % at
/// 20 Hz on 60 kN/m and 5.1 % at 30 Hz on 100 kN/m (each within 1.1 % now; measured
/// 2026-12-04). Below those rates the heave's own bound holds its damping down: on 60 kN/m
/// at 15 Hz ζ is 10.8 % low (43 % before), on 100 kN/m 25.6 % at 15 Hz and 9.1 % at 20 Hz (53
/// and 41 % before).
#[test]
fn a_car_keeps_its_heave_damping_where_only_its_roll_is_held() {
    let m_q = f64::from(CarBuilder::default().mass) / 4.0;
    for k in [30_000.0, 60_000.0, 100_000.0] {
        let c = 2.0 * 0.5 * (k * m_q).sqrt();
        for hz in [15.0, 20.0, 30.0, 60.0] {
            let [omega, zeta] = heave_half_period(hz, k, c);
            let fits = c / (hz * m_q) <= bevy_vehicle_physics::chassis::MAX_DAMPING_PER_STEP;
            println!(
                "{k} N/m, {c:.0} N·s/m, {hz} Hz: ω_n {:+.2} %, ζ {:+.2} %{}",
                (omega - 1.0) * 100.0,
                (zeta - 1.0) * 100.0,
                if fits {
                    ""
                } else {
                    " (the heave's bound holds)"
                }
            );
            if fits {
                assert!(
                    (omega - 1.0).abs() < 0.025 && (zeta - 1.0).abs() < 0.04,
                    "{k} N/m at {hz} Hz: ω_n {omega}×, ζ {zeta}× the quarter car's"
                );
            }
        }
    }
}

/// Braking at full pedal from 100 km/h, a 700 kg car on 100 kN/m springs (`ω·dt` 1.6 in its
/// heave at 15 Hz, past the warning's 1.4) stops within 3 % of its distance at 120 Hz at 15,
/// 20, 30 and 60 Hz (measured 2026-12-03: 55.9 / 55.7 / 56.2 / 56.6 m against 56.8). Before
/// the suspension's force was solved with the step's motion, its dampers held to nothing at
/// 15 Hz, it bounced and was still rolling at 0.95 m/s after 8 s, 61.2 m on.
#[test]
fn a_stiffly_sprung_light_car_stops_alike_at_every_rate() {
    let stop = |hz: f64| -> f64 {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        let mut builder = light_car(700.0);
        for wheel in [Some(&mut builder.wheel), builder.rear_wheel.as_mut()]
            .into_iter()
            .flatten()
        {
            wheel.suspension.stiffness = 100_000.0;
        }
        let car = spawn_at_ride_height(&mut app, &builder);
        tick(&mut app, hz as usize);
        flying_start(&mut app, car, 100.0 / 3.6);
        controls(&mut app, car, |c| c.brake = 1.0);
        let start = position(&app, car);
        tick(&mut app, (8.0 * hz) as usize);
        let speed = velocity(&app, car).length();
        assert!(speed < 0.05, "{hz} Hz: still at {speed} m/s after 8 s");
        f64::from(start.z - position(&app, car).z)
    };
    let reference = stop(120.0);
    for hz in [15.0, 20.0, 30.0, 60.0] {
        let distance = stop(hz);
        println!("{hz} Hz: stopped in {distance:.2} m (120 Hz: {reference:.2} m)");
        assert!(
            rel(distance, reference) < 0.03,
            "{hz} Hz: stopped in {distance} m against {reference} m at 120 Hz"
        );
    }
}

/// The default car dropped 0.1 m onto flat ground at `hz`, with dampers of `c` (N·s/m) and no
/// anti-roll bars: its body's heave natural frequency and damping ratio over the quarter car's
/// `[ω_n, ζ]` (see the test above).
fn heave(hz: f64, c: f64) -> [f64; 2] {
    heave_on(hz, CarBuilder::default().wheel.suspension.stiffness, c)
}

/// [`heave`] on springs of `k` (N/m): from the first two peaks above the equilibrium.
fn heave_on(hz: f64, k: f64, c: f64) -> [f64; 2] {
    let (extremes, omega_n, zeta) = heave_extremes(hz, k, c);
    let peaks: Vec<(f64, f64)> = extremes.into_iter().filter(|p| p.1 > 1e-4).collect();
    assert!(peaks.len() >= 2, "need two peaks: {peaks:?}");
    let period = peaks[1].0 - peaks[0].0;
    let decrement = (peaks[0].1 / peaks[1].1).ln();
    let zeta_measured = decrement / (4.0 * std::f64::consts::PI.powi(2) + decrement.powi(2)).sqrt();
    let omega_d = 2.0 * std::f64::consts::PI / period;
    let omega_n_measured = omega_d / (1.0 - zeta_measured.powi(2)).sqrt();
    [omega_n_measured / omega_n, zeta_measured / zeta]
}

/// [`heave_on`] for a damping too strong for a second peak: from the first trough below the
/// equilibrium and the peak after it, half a period apart (their ratio is
/// `exp(π·ζ/√(1 − ζ²))`).
fn heave_half_period(hz: f64, k: f64, c: f64) -> [f64; 2] {
    let (extremes, omega_n, zeta) = heave_extremes(hz, k, c);
    let first = extremes
        .iter()
        .position(|e| e.1 < -1e-4)
        .expect("a trough below the equilibrium");
    let [trough, peak] = [extremes[first], extremes[first + 1]];
    assert!(peak.1 > 1e-5, "no peak after the trough: {extremes:?}");
    let [omega_n_measured, zeta_measured] = ring_over_half_period(trough, peak);
    [omega_n_measured / omega_n, zeta_measured / zeta]
}

/// The natural frequency (rad/s) and damping ratio of a motion from two successive extremes
/// `(time in s, offset from the equilibrium)` on either side of its equilibrium, half a
/// damped period apart: their ratio is `exp(π·ζ/√(1 − ζ²))`.
fn ring_over_half_period((t0, first): (f64, f64), (t1, second): (f64, f64)) -> [f64; 2] {
    let decrement = (-first / second).ln();
    let zeta = decrement / (std::f64::consts::PI.powi(2) + decrement.powi(2)).sqrt();
    let omega_d = std::f64::consts::PI / (t1 - t0);
    [omega_d / (1.0 - zeta * zeta).sqrt(), zeta]
}

/// The default car with springs of `k` (N/m) and dampers of `c` (N·s/m), its centre of mass
/// 0.2 m up and no anti-roll bars, released 0.1 m above its rest height at `hz`: the peaks and
/// troughs of its height about the settled equilibrium over 8 s (time in s, offset in m, each
/// at the vertex of the parabola through the samples about it), with the quarter car's `ω_n`
/// (rad/s) and `ζ`.
fn heave_extremes(hz: f64, k: f64, c: f64) -> (Vec<(f64, f64)>, f64, f64) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    let mut builder = CarBuilder {
        center_of_mass: Vec3::new(0.0, 0.2, 0.0),
        anti_roll_bars: [0.0, 0.0],
        ..default()
    };
    builder.wheel.suspension.stiffness = k;
    builder.wheel.suspension.bump_damping = c;
    builder.wheel.suspension.rebound_damping = c;
    builder.wheel.suspension.extension_limit = 0.15;
    builder.wheel.suspension.compression_limit = 0.2;
    let m_q = f64::from(builder.mass) / 4.0;
    let omega_n = (k / m_q).sqrt();
    let zeta = c / (2.0 * (k * m_q).sqrt());

    let rest = car_rest_height(&builder);
    let car = spawn_car(
        &mut app,
        &builder,
        Transform::from_xyz(0.0, rest + 0.1, 0.0),
    );
    let dt = fixed_dt(&app);
    let mut samples = Vec::new();
    for step in 0..(8.0 * hz) as usize {
        tick(&mut app, 1);
        samples.push((step as f64 * dt, f64::from(position(&app, car).y)));
    }
    (extremes_about_the_end(&mut samples, dt), omega_n, zeta)
}

/// The peaks and troughs of `samples` (time in s, value), `dt` (s) apart, about their last
/// value (which is taken off them), each at the vertex of the parabola through the samples
/// about it.
fn extremes_about_the_end(samples: &mut [(f64, f64)], dt: f64) -> Vec<(f64, f64)> {
    let equilibrium = samples.last().unwrap().1;
    for s in samples.iter_mut() {
        s.1 -= equilibrium;
    }
    samples
        .windows(3)
        .filter(|w| {
            let peak = w[1].1 > w[0].1 && w[1].1 >= w[2].1;
            let trough = w[1].1 < w[0].1 && w[1].1 <= w[2].1;
            (peak || trough) && w[1].1.abs() > 1e-6
        })
        .map(|w| {
            // The parabola through the three samples: its vertex.
            let (y0, y1, y2) = (w[0].1, w[1].1, w[2].1);
            let curvature = y0 - 2.0 * y1 + y2;
            let shift = if curvature * y1 < 0.0 {
                0.5 * (y0 - y2) / curvature
            } else {
                0.0
            };
            (w[1].0 + shift * dt, y1 - 0.25 * (y0 - y2) * shift)
        })
        .collect()
}

/// The grade of [`car_on_slope`]'s slope (rise over run: 30 %).
const SLOPE_GRADE: f32 = 0.3;

/// Spawns a 30 % slope and the default car facing up it, at rest on it, and returns the car
/// with the direction down the slope. With `slope_first`, a fixed step runs between the two
/// (the slope is then in Rapier's query structures when the car first probes); otherwise both
/// are spawned in the same frame.
fn car_on_slope(app: &mut App, slope_first: bool) -> (Entity, Vec3) {
    car_on_slope_with(app, &CarBuilder::default(), slope_first, 0.0)
}

/// [`car_on_slope`] with the car `builder`, turned by `yaw` (rad, about the slope's normal,
/// positive to the left) from facing up the slope.
fn car_on_slope_with(
    app: &mut App,
    builder: &CarBuilder,
    slope_first: bool,
    yaw: f32,
) -> (Entity, Vec3) {
    let rotation = spawn_slope(app, SLOPE_GRADE, 0.9);
    if slope_first {
        tick(app, 1);
    }
    let up = rotation * Vec3::Y;
    let car = spawn_car(
        app,
        builder,
        Transform::from_translation(up * car_rest_height(builder))
            .with_rotation(rotation * Quat::from_rotation_y(yaw)),
    );
    (car, rotation * Vec3::Z)
}

/// The default car scaled to `mass` (kg): its inertia, springs, dampers, anti-roll bars and
/// brakes with it, on the same tires (a kart or a light buggy on car tires).
fn light_car(mass: f32) -> CarBuilder {
    let mut car = CarBuilder::default();
    let scale = mass / car.mass;
    car.mass = mass;
    car.inertia *= scale;
    let scale = f64::from(scale);
    for wheel in [Some(&mut car.wheel), car.rear_wheel.as_mut()]
        .into_iter()
        .flatten()
    {
        wheel.suspension.stiffness *= scale;
        wheel.suspension.bump_damping *= scale;
        wheel.suspension.rebound_damping *= scale;
    }
    car.anti_roll_bars = car.anti_roll_bars.map(|bar| bar * scale);
    car.brakes.max_torque *= scale;
    car.brakes.parking_torque *= scale;
    car
}

/// Parked on a 30 % slope for 60 s, with the parking lock and then with the brake pedal, at
/// 30 and 60 Hz: it moves less than 1 cm, and after 5 s its speed stays below 1 mm/s.
///
/// Set down at rest, the car lurches down the slope until its held tires' patches take up the
/// slope's pull, rocks on them and settles. Here the slope is spawned in the same frame as the
/// car, which is held against gravity for its first step (see the tests below). Measured on
/// the parking lock (rear tires only, the harder case): 5.10 mm at 30 and 60 Hz (and at 15,
/// 20 and 120 Hz, which this test does not ask of it; before the held patch was anchored to
/// the ground and the car was held on its first step, 9.6, 7.0, 22.8, 14.1 and 6.4 mm); on the
/// pedal 2.33 and 2.34 mm (2.31-2.35 at 15-120 Hz).
#[test]
fn parked_on_a_30_percent_slope_stays_put() {
    for hz in [30.0, 60.0] {
        for hold in ["parking", "pedal"] {
            let mut app = create_app(hz);
            let (car, downhill) = car_on_slope(&mut app, false);
            controls(&mut app, car, |c| match hold {
                "parking" => c.parking = true,
                _ => c.brake = 1.0,
            });
            let start = position(&app, car);
            let mut max_speed_after_settling: f32 = 0.0;
            let steps = (60.0 * hz) as usize;
            for step in 0..steps {
                tick(&mut app, 1);
                if step as f64 > 5.0 * hz {
                    max_speed_after_settling =
                        max_speed_after_settling.max(velocity(&app, car).length());
                }
            }
            let moved = (position(&app, car) - start).dot(downhill).abs();
            println!("{hold} at {hz} Hz: moved {:.2} mm", moved * 1e3);
            assert!(
                moved < 0.01,
                "{hold} at {hz} Hz: moved {moved} m down the slope"
            );
            assert!(
                max_speed_after_settling < 1e-3,
                "{hold} at {hz} Hz: speed {max_speed_after_settling} m/s after settling"
            );
        }
    }
}

/// The parking lock selected at speed engages only once its wheels have slowed to a walk, as a
/// parking pawl ratchets over its teeth until then ([`Brakes::parking_max_speed`], 1 m/s by
/// default), and then holds. The default car, air drag off, in neutral, rolls up a 30 %
/// slope from 8 m/s with the lock selected from the start, at 15, 30, 60 and 120 Hz: its
/// rear wheels roll with it (after 1 s their rims turn within 1 % of its speed), it climbs at
/// least the free-rolling distance to the lock's speed, `(v₀² − v_p²)/(2a)` with
/// `a = g·(sin θ + c_rr·cos θ)·m/(m + ΣI/r²)` (11.15 m; less 1 %), and at most the whole
/// free-rolling `v₀²/(2a)` (11.32 m; plus 1 %), and from 3 s after it stopped it stands still
/// (below 1 mm/s, its rear wheels held) less than 10 cm below the highest point it reached.
///
/// Measured 2026-12-02 with the lock at 0.18 m/s: it climbed 0.66, 0.34, 0.18 and 0.10 %
/// short of the whole free-rolling distance at 15, 30, 60 and 120 Hz, and came to rest 48,
/// 66, 54 and 25 mm below its highest point: the lock engaged while the car still crept up,
/// its held rear tires, stretched up the slope, threw it back, and it settled on them after a
/// few swings (a car set down on the lock rests 5 mm down the slope, see the test above).
/// With the lock at 1 m/s (later that day: at 0.18 m/s a car that selected it while creeping
/// down a slope ran away, see the next test): it climbs 11.174 / 11.197 / 11.208 / 11.216 m
/// at 15 / 30 / 60 / 120 Hz and rests 94 / 29 / 23 / 24 mm below its highest point. Until 2026-12-02 the
/// lock acted at any speed: the rear wheels locked at once and the car slid (2.99 m/s left
/// after 1 s at 15 Hz, against 5.07 m/s rolling; found by an outside test, whose car slid
/// from 10 to 3.9 m/s in 3 s on a flat road).
#[test]
fn a_parking_lock_selected_at_speed_engages_only_once_the_car_has_nearly_stopped() {
    let mut builder = CarBuilder::default();
    builder.aerodynamics.drag_area = 0.0;
    let c_rr = builder.wheel.tire.rolling_resistance;
    assert_eq!(builder.wheel.tire.rolling_resistance_quadratic, 0.0);
    assert!(
        builder.rear_wheel.is_none(),
        "one wheel for all four corners"
    );
    let (m, r) = (f64::from(builder.mass), builder.wheel.radius);
    let theta = f64::from(SLOPE_GRADE).atan();
    let deceleration =
        G * (theta.sin() + c_rr * theta.cos()) * m / (m + 4.0 * builder.wheel.inertia / (r * r));
    let v0 = 8.0;
    let expected = v0 * v0 / (2.0 * deceleration);
    let lock = builder.brakes.parking_max_speed;
    let before_lock = (v0 * v0 - lock * lock) / (2.0 * deceleration);
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let (car, downhill) = car_on_slope_with(&mut app, &builder, true, 0.0);
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, hz as usize);
        flying_start(&mut app, car, v0 as f32);
        controls(&mut app, car, |c| {
            c.brake = 0.0;
            c.parking = true;
        });
        let rear: Vec<Entity> = wheels(&mut app, car)[2..].to_vec();
        let start = position(&app, car);
        let climbed = |app: &App| -f64::from((position(app, car) - start).dot(downhill));
        let uphill_speed = |app: &App| -f64::from(velocity(app, car).dot(downhill));

        tick(&mut app, hz as usize);
        let speed = uphill_speed(&app);
        for &wheel in &rear {
            let rim = get::<WheelSensors>(&app, wheel).surface_speed;
            assert!(
                rel(rim, speed) < 0.01,
                "{hz} Hz: after 1 s a rear wheel's rim turns at {rim} m/s, the car moves at \
                 {speed} m/s"
            );
        }

        let (mut highest, mut stopped) = (0.0f64, None);
        let mut step = 0;
        while stopped.is_none_or(|at| step < at + (3.0 * hz) as usize) {
            tick(&mut app, 1);
            step += 1;
            highest = highest.max(climbed(&app));
            if stopped.is_none() && uphill_speed(&app) <= 0.0 {
                stopped = Some(step);
            }
            assert!(
                step < (10.0 * hz) as usize,
                "{hz} Hz: still rolling after 10 s"
            );
        }
        let mut fastest = 0.0f32;
        for _ in 0..(2.0 * hz) as usize {
            tick(&mut app, 1);
            fastest = fastest.max(velocity(&app, car).length());
        }
        let back = highest - climbed(&app);
        println!(
            "{hz} Hz: climbed {highest:.4} m (closed form {expected:.4} m, {:+.3} %), rests \
             {:.2} mm below its highest point, at most {fastest:.1e} m/s",
            100.0 * (highest / expected - 1.0),
            back * 1e3
        );
        assert!(
            highest > 0.99 * before_lock && highest < 1.01 * expected,
            "{hz} Hz: climbed {highest} m, free-rolling {before_lock} m to the lock's speed, \
             {expected} m to a stop"
        );
        assert!(
            fastest < 1e-3 && (0.0..0.1).contains(&back),
            "{hz} Hz: {fastest} m/s after stopping, {back} m below its highest point"
        );
        for &wheel in &rear {
            assert!(
                get::<WheelSensors>(&app, wheel).held,
                "{hz} Hz: a rear wheel is not held"
            );
        }
    }
}

/// The parking lock selected while the car creeps down a slope holds it: the default car in
/// neutral on a 30 % slope, let roll from its brakes until it creeps down at 0.3 m/s, then the
/// lock selected, at 15, 30, 60 and 120 Hz: it stops within 0.1 m and stands still (below
/// 1 mm/s over the last of 5 s). Until 2026-12-02 the lock engaged only below 0.18 m/s, which
/// gravity keeps such a car above: it rolled 12.2–12.4 m in 5 s and reached 4.6 m/s (an
/// outside test; the automatic sedan's own pawl, at 2 rad/s of its output shaft, let it run
/// away too: 44 m and 10.7 m/s in 8 s on 15 %).
#[test]
fn a_parking_lock_selected_while_creeping_down_a_slope_holds_the_car() {
    let mut builder = CarBuilder::default();
    builder.aerodynamics.drag_area = 0.0;
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let (car, downhill) = car_on_slope_with(&mut app, &builder, true, 0.0);
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, hz as usize);
        controls(&mut app, car, |c| c.brake = 0.0);
        let down_speed = |app: &App| f64::from(velocity(app, car).dot(downhill));
        let mut steps = 0;
        while down_speed(&app) < 0.3 {
            tick(&mut app, 1);
            steps += 1;
            assert!(steps < (10.0 * hz) as usize, "{hz} Hz: never rolled");
        }
        let start = position(&app, car);
        controls(&mut app, car, |c| c.parking = true);
        tick(&mut app, (4.0 * hz) as usize);
        let mut fastest = 0.0f32;
        for _ in 0..hz as usize {
            tick(&mut app, 1);
            fastest = fastest.max(velocity(&app, car).length());
        }
        let rolled = f64::from((position(&app, car) - start).dot(downhill));
        println!("{hz} Hz: rolled {rolled:.4} m after the lock, at most {fastest:.1e} m/s");
        assert!(
            rolled < 0.1 && fastest < 1e-3,
            "{hz} Hz: rolled {rolled} m, {fastest} m/s"
        );
    }
}

/// Left free (neutral, no brake, no parking lock) on a grade gentler than its tires'
/// rolling-resistance coefficient (0.012), the default car stays put: 0.3, 0.6 and 1.0 %, at
/// 15, 30, 60 and 120 Hz, it moves less than 1 mm from 5 s to 60 s and below 1 mm/s (measured
/// under 1 µm and at most 1.1e-5 m/s); a tire's rolling resistance holds its wheel at rest as a
/// brake of that torque would. On a steeper one (5 %) it rolls down at the closed form
/// `g·(sin θ − c_rr·cos θ)·m/(m + ΣI/r²)` (drag set aside; within 0.1 %, measured 0.003 %),
/// alike at every rate. Across a 40 % slope, free, it stays put too (under 1 mm from 5 s to
/// 60 s; measured under 0.01 mm).
///
/// Until 2026-12-02 the rolling resistance faded out linearly below 0.5 rad/s of spin, a
/// viscous drag at a crawl: the car crept down any grade at `v = 0.5 rad/s·r·grade/c_rr`, 4.0,
/// 7.9 and 13.2 cm/s on these three, and across the 40 % slope the hatchback rolled forward
/// 0.56 m in 55 s (found by an outside test; the same at every rate).
#[test]
fn a_free_car_stays_on_a_grade_gentler_than_its_rolling_resistance() {
    let mut builder = CarBuilder::default();
    builder.aerodynamics.drag_area = 0.0;
    let c_rr = builder.wheel.tire.rolling_resistance;
    assert!(c_rr > 0.0 && builder.wheel.tire.rolling_resistance_quadratic == 0.0);
    for hz in [15.0, 30.0, 60.0, 120.0] {
        // Facing down the grade, and (the last) across a 40 % slope.
        for (grade, yaw) in [
            (0.003f32, 0.0),
            (0.006, 0.0),
            (0.010, 0.0),
            (0.05, 0.0),
            (0.4, std::f32::consts::FRAC_PI_2),
        ] {
            let mut app = create_app(hz);
            let rotation = spawn_slope(&mut app, grade, 0.9);
            tick(&mut app, 1);
            let car = spawn_car(
                &mut app,
                &builder,
                Transform::from_translation(rotation * Vec3::Y * car_rest_height(&builder))
                    .with_rotation(rotation * Quat::from_rotation_y(yaw)),
            );
            let downhill = rotation * Vec3::Z;
            let along = |app: &App| f64::from(position(app, car).dot(downhill));
            tick(&mut app, (5.0 * hz) as usize);
            if yaw != 0.0 {
                let start = position(&app, car);
                tick(&mut app, (55.0 * hz) as usize);
                let moved = position(&app, car).distance(start);
                println!(
                    "across 40 % at {hz} Hz: moved {:.4} mm from 5 to 60 s",
                    moved * 1e3
                );
                assert!(moved < 1e-3, "across 40 % at {hz} Hz: moved {moved} m");
            } else if f64::from(grade) < c_rr {
                let start = along(&app);
                let mut fastest = 0.0f32;
                for _ in 0..(55.0 * hz) as usize {
                    tick(&mut app, 1);
                    fastest = fastest.max(velocity(&app, car).length());
                }
                let moved = along(&app) - start;
                println!(
                    "{:.1} % at {hz} Hz: moved {:.3} mm from 5 to 60 s, at most {fastest:.1e} m/s",
                    grade * 100.0,
                    moved * 1e3
                );
                assert!(
                    moved.abs() < 1e-3 && fastest < 1e-3,
                    "{grade} at {hz} Hz: crept {moved} m, at {fastest} m/s"
                );
            } else {
                // From 5 s to 9 s (about 1.8 to 3.3 m/s), on the mean of the velocity.
                let v0 = f64::from(velocity(&app, car).dot(downhill));
                let seconds = 4.0;
                tick(&mut app, (seconds * hz) as usize);
                let v1 = f64::from(velocity(&app, car).dot(downhill));
                let measured = (v1 - v0) / seconds;
                let theta = f64::from(grade).atan();
                let m = f64::from(builder.mass);
                let r = builder.wheel.radius;
                let expected = G * (theta.sin() - c_rr * theta.cos()) * m
                    / (m + 4.0 * builder.wheel.inertia / (r * r));
                println!(
                    "{:.1} % at {hz} Hz: rolls down at {measured:.5} m/s² against {expected:.5}",
                    grade * 100.0
                );
                assert!(
                    rel(measured, expected) < 0.001,
                    "{grade} at {hz} Hz: {measured} m/s² against {expected} m/s²"
                );
            }
        }
    }
}

/// A car on very light wheels (0.01 and 0.02 kg·m², a hundredth of a car wheel's; the
/// validation takes any inertia above 0) stands still once stopped on its brakes, as on car
/// wheels: from 10 m/s at full pedal, over 5 to 10 s after the pedal went down, below 1 mm/s
/// and moving less than 1 mm, at 15, 30, 60 and 120 Hz (measured at most 5e-5 m/s at 15 Hz,
/// 4e-6 from 30 Hz up).
///
/// A held wheel does not turn, so the floor that keeps a turning wheel's patch spring on its
/// own inertia within a substep no longer lengthens a held tire's relaxation, nor does the
/// bound on its patch damper cut the damping. Until 2026-12-02 both did: on 0.01 kg·m²
/// wheels the held tires' relaxation grew to metres and the car rocked on them at up to
/// 0.66 m/s for good, 0.35 m each way (found by an outside test).
#[test]
fn a_car_on_light_wheels_stands_still_on_its_brakes() {
    for inertia in [0.01, 0.02] {
        for hz in [15.0, 30.0, 60.0, 120.0] {
            let mut builder = CarBuilder::default();
            builder.wheel.inertia = inertia;
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let car = spawn_at_ride_height(&mut app, &builder);
            tick(&mut app, hz as usize);
            flying_start(&mut app, car, 10.0);
            controls(&mut app, car, |c| c.brake = 1.0);
            tick(&mut app, (5.0 * hz) as usize);
            let start = position(&app, car);
            let mut fastest = 0.0f32;
            for _ in 0..(5.0 * hz) as usize {
                tick(&mut app, 1);
                fastest = fastest.max(velocity(&app, car).length());
            }
            let moved = position(&app, car).distance(start);
            println!("{inertia} kg·m² at {hz} Hz: at most {fastest:.1e} m/s, moved {moved:.1e} m");
            assert!(
                fastest < 1e-3 && moved < 1e-3,
                "{inertia} kg·m² at {hz} Hz: {fastest} m/s, moved {moved} m"
            );
        }
    }
}

/// Parked across a 30 % slope (its left side downhill), on its parking lock and on its pedal,
/// at 15, 30, 60 and 120 Hz: its tires' side forces alone hold it, so at rest they add up to
/// the slope's pull on the car, `m·g·sin θ` (within 0.1 %; measured 3 664.5 N against
/// 3 664.5), the fore-and-aft forces to nothing (within 0.1 % of the pull; measured at most
/// 0.5 N); it settles below 1 mm/s after 5 s (measured at most 7e-6 m/s at 15 Hz and 4e-6
/// from 30 Hz up, asserted below 1e-5 there; 3.8e-4 at 15 Hz before the tires took their held
/// damping sideways at a crawl, 2026-12-04), and rests where it rests at 120 Hz within
/// 5 % from 30 Hz up and 20 % at 15 Hz (measured 2026-11-29: 10.4 / 12.0 / 12.4 / 12.5 mm
/// down the slope at 15 / 30 / 60 / 120 Hz).
///
/// Set down on the slope, the car slides sideways until its tires' lateral slip states hold
/// it, each tire deflected by its relaxation length times its slip. Until the body answered
/// the tires' side forces within the step (`WheelContact::lateral_coupled`), their lateral
/// relaxation was lengthened at low rates to keep their springs stable on a body Rapier moves
/// once per step, and the car came to rest 26.9 / 15.1 / 10.9 / 12.1 / 12.4 mm down the slope
/// at 15 / 20 / 30 / 60 / 120 Hz.
#[test]
fn parked_across_a_30_percent_slope_stands_on_its_tires_side_forces() {
    let builder = CarBuilder::default();
    let pull = f64::from(builder.mass) * G * f64::from(SLOPE_GRADE.atan().sin());
    let mut rests = Vec::new();
    for hz in [120.0, 60.0, 30.0, 15.0] {
        for hold in ["parking", "pedal"] {
            let mut app = create_app(hz);
            // Facing along the slope's contour, its left side downhill.
            let (car, downhill) =
                car_on_slope_with(&mut app, &builder, true, std::f32::consts::FRAC_PI_2);
            controls(&mut app, car, |c| match hold {
                "parking" => c.parking = true,
                _ => c.brake = 1.0,
            });
            let start = position(&app, car);
            let mut fastest = 0.0f32;
            for step in 0..(60.0 * hz) as usize {
                tick(&mut app, 1);
                if step > (5.0 * hz) as usize {
                    fastest = fastest.max(velocity(&app, car).length());
                }
            }
            let forces = wheels(&mut app, car)
                .iter()
                .map(|w| get::<WheelSensors>(&app, *w).force)
                .fold([0.0; 2], |sum, f| [sum[0] + f[0], sum[1] + f[1]]);
            let down = f64::from((position(&app, car) - start).dot(downhill));
            println!(
                "{hold} at {hz} Hz: {:.2} mm down the slope; side forces {:.1} N (pull {pull:.1} \
                 N), fore and aft {:.2} N; after 5 s at most {fastest:.1e} m/s",
                down * 1e3,
                -forces[1],
                forces[0],
            );
            assert!(
                (-forces[1] / pull - 1.0).abs() < 0.001 && forces[0].abs() < 0.001 * pull,
                "{hold} at {hz} Hz: tire forces {forces:?} N against the pull {pull} N"
            );
            let still = if hz < 30.0 { 1e-3 } else { 1e-5 };
            assert!(
                fastest < still,
                "{hold} at {hz} Hz: {fastest} m/s after 5 s"
            );
            rests.push((hold, hz, down));
        }
    }
    for &(hold, hz, down) in &rests {
        let reference = rests
            .iter()
            .find(|r| r.0 == hold && r.1 == 120.0)
            .map_or(down, |r| r.2);
        let tolerance = if hz < 30.0 { 0.2 } else { 0.05 };
        assert!(
            rel(down, reference) < tolerance,
            "{hold} at {hz} Hz: rests {down} m down the slope against {reference} m at 120 Hz"
        );
    }
}

/// Parked across a 38.7° slope (a grade of 0.8) of friction 3, where the default car's uphill
/// wheels still carry 12 % of its weight at rest, the car set down on it lurches, rocks onto
/// its downhill wheels (the uphill ones leave the ground for a few steps) and settles on all
/// four, at 30, 60 and 120 Hz: its roll from the slope never passes 6° (2.1° at rest), it moves
/// less than 10 cm, and over the last 2 s of 20 it is still (under 1 mm/s). Measured: at most
/// 3.4° of roll, 5.4 cm moved, 0 mm/s at the end, at every rate.
///
/// A tire that left the ground used to keep the slide's lateral slip it had when it lifted,
/// and pushed on with it at the friction limit when it came down, whichever way its wheel then
/// moved: each landing kicked the body harder, and the car rolled over down the slope at every
/// rate (from 35° on; a slow tilt lifts its first wheel at 52.5°). A tire off the ground now
/// lands undeflected. Then the car still rocked on its tires' lateral patch springs (a damping
/// ratio of about 0.07), lifting a wheel now and then: 0.04 m/s over the last 2 s at 30 Hz.
/// Sideways a tire at a crawl now takes its `Tire::held_damping` too.
#[test]
fn a_car_parked_across_a_steep_grippy_slope_stays_on_its_wheels() {
    let builder = CarBuilder::default();
    let grade = 0.8f32;
    for hz in [30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let rotation = spawn_slope(&mut app, grade, 3.0);
        tick(&mut app, 1);
        let up = rotation * Vec3::Y;
        let car = spawn_car(
            &mut app,
            &builder,
            Transform::from_translation(up * car_rest_height(&builder))
                .with_rotation(rotation * Quat::from_rotation_y(std::f32::consts::FRAC_PI_2)),
        );
        controls(&mut app, car, |c| {
            c.parking = true;
            c.brake = 1.0;
        });
        let start = position(&app, car);
        let (mut most_roll, mut fastest) = (0.0f32, 0.0f32);
        let n = (20.0 * hz) as usize;
        for k in 0..n {
            tick(&mut app, 1);
            let t = app.world().get::<Transform>(car).unwrap();
            most_roll = most_roll.max((t.rotation * Vec3::Y).angle_between(up));
            if k >= n - (2.0 * hz) as usize {
                fastest = fastest.max(velocity(&app, car).length());
            }
        }
        let moved = (position(&app, car) - start).length();
        println!(
            "{hz} Hz: most roll {:.2}°, moved {moved:.3} m, fastest over the last 2 s {fastest:.4} m/s",
            most_roll.to_degrees()
        );
        assert!(
            most_roll.to_degrees() < 6.0,
            "{hz} Hz: rolled {}°",
            most_roll.to_degrees()
        );
        assert!(moved < 0.1, "{hz} Hz: moved {moved} m");
        assert!(fastest < 1e-3, "{hz} Hz: {fastest} m/s over the last 2 s");
    }
}

/// Each axle's roll stiffness (N·m/rad), front and rear: its springs' `k·t²/2` and its
/// anti-roll bar's `k_bar·t²`, about a roll axis at the ground.
fn axle_roll_stiffness(car: &CarBuilder) -> [f64; 2] {
    let (k, t) = (car.wheel.suspension.stiffness, f64::from(car.track));
    car.anti_roll_bars.map(|bar| k * t * t / 2.0 + bar * t * t)
}

/// `car` standing on flat ground (friction 0.9) at its design ride height at `hz`, held by a
/// couple of `couple` (N·m) about its forward axis for `seconds` (s).
fn held_rolled(hz: f64, car: &CarBuilder, couple: f64, seconds: f64) -> (App, Entity) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    let e = spawn_at_ride_height(&mut app, car);
    app.world_mut().entity_mut(e).insert(AddedForce {
        force: Vec3::ZERO,
        torque: Vec3::Z * couple as f32,
    });
    tick(&mut app, (seconds * hz) as usize);
    (app, e)
}

/// The roll of the body `e` (rad, its right side up positive): the rise of its right axis.
fn roll_angle(app: &App, e: Entity) -> f64 {
    let rotation = get::<Transform>(app, e).rotation;
    f64::from((rotation * Vec3::X).y.asin())
}

/// A couple of 2 kN·m about the default car's forward axis, held on it standing, rolls its
/// body by `M/(K − m·g·h)` within 0.5 % at every rate from 15 to 240 Hz, with its anti-roll
/// bars and without: `K` the axles' roll stiffness ([`axle_roll_stiffness`]) and `m·g·h` the
/// weight's moment as the centre of mass, `h` above the ground, swings sideways with the roll
/// about the ground: the tires hold the contacts, so the body rolls about the ground and not
/// about its centre of mass.
///
/// Measured 2026-12-04: 0.01771–0.01772 rad against 0.01772 with the bars, 0.03269 against
/// 0.03272 without.
#[test]
fn a_couple_rolls_the_body_as_its_roll_stiffness_and_weight_give() {
    let couple = 2000.0;
    for bars in [true, false] {
        let mut car = CarBuilder::default();
        if !bars {
            car.anti_roll_bars = [0.0, 0.0];
        }
        let h = f64::from(car.center_of_mass.y + car_rest_height(&car));
        let stiffness: f64 = axle_roll_stiffness(&car).iter().sum();
        let expected = couple / (stiffness - f64::from(car.mass) * G * h);
        for hz in [15.0, 30.0, 60.0, 120.0, 240.0] {
            let (app, e) = held_rolled(hz, &car, couple, 3.0);
            let roll = roll_angle(&app, e);
            println!("bars {bars}, {hz} Hz: rolled {roll:.5} rad (closed form {expected:.5})");
            assert!(
                rel(roll, expected) < 0.005,
                "bars {bars}, {hz} Hz: rolled {roll} rad against {expected}"
            );
        }
    }
}

/// The default car held rolled by a couple of 2 kN·m about its forward axis for 2 s and let
/// go, at `hz`: its roll's natural frequency (rad/s) and damping ratio, from the first swing
/// past its equilibrium and the one back (half a period apart; their ratio is
/// `exp(π·ζ/√(1 − ζ²))`), each at the vertex of the parabola through the samples about it.
fn released_roll(hz: f64) -> [f64; 2] {
    let (mut app, e) = held_rolled(hz, &CarBuilder::default(), 2000.0, 2.0);
    app.world_mut().entity_mut(e).insert(AddedForce::default());
    let dt = fixed_dt(&app);
    let mut samples = Vec::new();
    for step in 0..(4.0 * hz) as usize {
        tick(&mut app, 1);
        samples.push((step as f64 * dt, roll_angle(&app, e)));
    }
    let extremes = extremes_about_the_end(&mut samples, dt);
    let [swing, back] = [extremes[0], extremes[1]];
    assert!(
        swing.1 < 0.0 && back.1 > 0.0,
        "{hz} Hz: no swing and back: {extremes:?}"
    );
    ring_over_half_period(swing, back)
}

/// The default car let go from a held roll rings down alike at every rate: its roll's damping
/// ratio within 5 % of 240 Hz's from 20 to 120 Hz, and its natural frequency within 2 % from
/// 30 Hz (10 % at 20 Hz, where a step is a twelfth of the period). The rocking sways the
/// tires' patches sideways; until 2026-12-05 a standing tire's lateral slip followed the
/// road's velocity as the stages foresaw it, the foresight missed the body's real move by a
/// little each step, and the patch slid by the difference: ζ
/// 0.460 / 0.319 / 0.271 / 0.263 at 20 / 30 / 60 / 120 Hz against 0.261 at 240 (`ω_n` 12.86 /
/// 10.63 / 10.60 / 10.63 rad/s against 10.64). A standing tire's slip is now anchored to its
/// wheel's real move (the wheel block's `anchor_lateral_patch`).
///
/// Measured 2026-12-05: ζ 0.263 / 0.273 / 0.268 / 0.265 against 0.263, `ω_n` 9.79 / 10.64 /
/// 10.71 / 10.69 against 10.66 rad/s.
#[test]
fn a_released_roll_rings_down_alike_at_every_rate() {
    let [omega, zeta] = released_roll(240.0);
    println!("240 Hz: ω_n {omega:.3} rad/s, ζ {zeta:.3}");
    let mut failures = Vec::new();
    for hz in [20.0, 30.0, 60.0, 120.0] {
        let [w, z] = released_roll(hz);
        println!("{hz} Hz: ω_n {w:.3} rad/s, ζ {z:.3}");
        let frequency_bound = if hz < 25.0 { 0.1 } else { 0.02 };
        if rel(w, omega) > frequency_bound || rel(z, zeta) > 0.05 {
            failures.push(format!(
                "{hz} Hz: ω_n {w}, ζ {z} against {omega}, {zeta} at 240 Hz"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The corner loads `[front downhill, front uphill, rear downhill, rear uphill]` (N) of a car
/// whose springs (preloaded to its design ride height) and anti-roll bars carry it on a slope
/// `theta` (rad) across it, with its roll axis at the ground: each axle carries its static share
/// of the slope's normal load `W·cos θ`, and takes of the roll moment the share its roll
/// stiffness `K_a` ([`axle_roll_stiffness`]) gives, `ΔN_a = K_a·φ/t`, where the body rolls by
/// `φ = W·sin θ·h/(K − W·cos θ·h)` (the moment of the slope's pull at the centre of mass,
/// `h` above the ground, and of the normal load on the rolled body). The body rises as the
/// springs let out the load the slope takes off them: `h = h₀ + (N_f·share_f + N_r·share_r)·
/// (1 − cos θ)/k`, with `N` each corner's static load.
fn tilted_corner_loads(car: &CarBuilder, theta: f64) -> [f64; 4] {
    let weight = f64::from(car.mass) * G;
    let wheelbase = f64::from(car.rear_axle - car.front_axle);
    let share_front = f64::from(car.rear_axle - car.center_of_mass.z) / wheelbase;
    let shares = [share_front, 1.0 - share_front];
    let (k, t) = (car.wheel.suspension.stiffness, f64::from(car.track));
    let h0 = f64::from(car.center_of_mass.y + car_rest_height(car));
    let (sin, cos) = theta.sin_cos();
    let h = h0 + shares.iter().map(|s| s * weight * s / 2.0).sum::<f64>() * (1.0 - cos) / k;
    let axle_stiffness = axle_roll_stiffness(car);
    let roll_stiffness: f64 = axle_stiffness.iter().sum();
    let phi = weight * sin * h / (roll_stiffness - weight * cos * h);
    let corner = |axle: usize, side: f64| {
        weight * shares[axle] * cos / 2.0 + side * axle_stiffness[axle] * phi / t
    };
    [
        corner(0, 1.0),
        corner(0, -1.0),
        corner(1, 1.0),
        corner(1, -1.0),
    ]
}

/// A tilt table: the default car parked across a box tilted under it at 1° per second
/// (friction 3, so that its tires never slide) shares its weight among its wheels as its springs
/// and anti-roll bars give ([`tilted_corner_loads`]): at 20°, 35° and 50° each corner's load is
/// within 0.2 % of the car's weight of that closed form, and the front uphill wheel (its
/// axle's bar is the stiffer, so it takes the larger share of the roll moment) leaves the
/// ground within 0.3° of where the closed form puts it (52.4°, well before the static stability
/// factor's `atan(t/2h)` = 56.3° of a rigid car), at 30, 60 and 120 Hz.
///
/// Measured: every corner within 7 N (0.06 % of the weight) of the closed form at every angle
/// and rate; the first wheel off at 52.60 / 52.53 / 52.50° at 30 / 60 / 120 Hz.
#[test]
fn a_tilted_car_shares_its_weight_as_its_roll_stiffness_gives() {
    let builder = CarBuilder::default();
    let weight = f64::from(builder.mass) * G;
    let lift = {
        // Where the front uphill corner's load reaches zero (bisection on 0..90°).
        let (mut lo, mut hi) = (0.0f64, std::f64::consts::FRAC_PI_2);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if tilted_corner_loads(&builder, mid)[1] > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo.to_degrees()
    };
    for hz in [30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let table = spawn_kinematic_box(
            &mut app,
            RigidBody::KinematicPositionBased,
            Vec3::new(10.0, 0.5, 10.0),
            3.0,
            Velocity::zero(),
        );
        tick(&mut app, 1);
        // Its left side toward +Z, which the tilt lowers.
        let car = spawn_car(
            &mut app,
            &builder,
            Transform::from_xyz(0.0, car_rest_height(&builder), 0.0)
                .with_rotation(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2)),
        );
        controls(&mut app, car, |c| {
            c.parking = true;
            c.brake = 1.0;
        });
        tick(&mut app, (2.0 * hz) as usize);
        // The corners in the closed form's order, by their static loads and their side.
        let mut corners = wheels(&mut app, car);
        let load = |app: &App, w: Entity| get::<WheelState>(app, w).load;
        let side = |app: &App, w: Entity| get::<WheelState>(app, w).contact_point.z;
        corners.sort_by(|a, b| {
            let front = |w: Entity| load(&app, w) < 0.5 * weight / 2.0;
            (front(*a), side(&app, *a) < 0.0).cmp(&(front(*b), side(&app, *b) < 0.0))
        });
        let corners: [Entity; 4] = corners.try_into().unwrap();
        let mut first_off = None;
        let mut checked = 0;
        for step in 1.. {
            let degrees = step as f64 / hz;
            let rotation = Quat::from_rotation_x(degrees.to_radians() as f32);
            set::<Transform>(&mut app, table, |t| {
                t.rotation = rotation;
                t.translation = rotation * Vec3::new(0.0, -0.5, 0.0);
            });
            tick(&mut app, 1);
            let loads = corners.map(|w| load(&app, w));
            for at in [20.0, 35.0, 50.0] {
                if (degrees - at).abs() < 0.5 / hz {
                    let expected = tilted_corner_loads(&builder, degrees.to_radians());
                    println!("{hz} Hz, {at}°: loads {loads:.0?} N against {expected:.0?} N");
                    for (l, e) in loads.iter().zip(expected) {
                        assert!(
                            (l - e).abs() < 0.002 * weight,
                            "{hz} Hz, {at}°: loads {loads:?} N against {expected:?} N"
                        );
                    }
                    checked += 1;
                }
            }
            if loads.iter().any(|&l| l <= 0.0) {
                first_off = Some((degrees, loads));
                break;
            }
            assert!(degrees < 60.0, "{hz} Hz: every wheel still down at 60°");
        }
        let (degrees, loads) = first_off.unwrap();
        println!(
            "{hz} Hz: first wheel off at {degrees:.2}° (closed form {lift:.2}°), loads {loads:.0?} N"
        );
        assert_eq!(checked, 3, "{hz} Hz");
        assert!(
            loads[1] <= 0.0,
            "{hz} Hz: the front uphill wheel lifts first: {loads:?}"
        );
        assert!(
            (degrees - lift).abs() < 0.3,
            "{hz} Hz: off at {degrees}° against {lift}°"
        );
    }
}

/// A car held on a 30 % slope comes to rest where its held tires' deflection puts it, at any
/// fixed-step rate, on its parking lock (rear wheels) and on its brake pedal (all four): the
/// held wheels' centres end up down the slope by what their patches hold (`σ·κ`, on average:
/// a braked wheel turns with the body as it pitches, which shifts deflection between the
/// axles; within 0.1 mm), and the car by the same amount at 15, 20, 30, 60 and 120 Hz (within
/// 0.3 mm).
///
/// The ground is in the world before the car is set down on it (for a ground spawned with it,
/// see the test below). Measured: on the lock the rear wheel centres 5.12 mm down the slope at
/// every rate, as their patches hold, the car 5.10–5.11 mm; on the pedal the car 2.31–2.35
/// mm. Before the held patch was anchored to the ground (2026-11-28) the patch and its wheel
/// drifted apart in the lurch: on the lock the car came to rest 20.4 / 14.0 / 9.4 / 6.9 / 6.5
/// mm down the slope at 15 / 20 / 30 / 60 / 120 Hz. And until the car's first step took its
/// body's mass from its colliders (Rapier reads it only at its step, after the wheels have
/// probed: its tires moved a massless share of the body in that step), on the pedal it rested
/// 9.18 mm down the slope at 15 Hz, its lurch reaching 12.8 mm (now 2.8).
///
/// The same holds for the default car scaled to 300 and 150 kg (`light_car`), whose tires
/// are far below their nominal load, and every car stands still (below 3e-5 m/s after 5 s).
/// Measured 2026-11-29: at 150 kg it rests 5.93 mm down the slope on its lock and 2.69–2.80 mm
/// on its pedal, at most 1.2e-5 m/s after 5 s (at 15 Hz). Until 2026-11-28 the car scaled to
/// 300 kg rocked at 15 Hz on its pedal, rolling and yawing at the step rate (0.35 m/s after
/// 5 s), and at 150 kg it slid away.
#[test]
fn a_held_car_rests_where_its_tires_deflection_puts_it_at_any_step_rate() {
    for (label, builder) in [
        ("", CarBuilder::default()),
        (" (300 kg)", light_car(300.0)),
        (" (150 kg)", light_car(150.0)),
    ] {
        held_car_rests_where_its_tires_deflection_puts_it(label, &builder);
    }
}

/// The body of [`a_held_car_rests_where_its_tires_deflection_puts_it_at_any_step_rate`] for
/// the car `builder`, named `label` in the messages.
fn held_car_rests_where_its_tires_deflection_puts_it(label: &str, builder: &CarBuilder) {
    let sigma = builder.wheel.tire.relaxation_length[0];
    for hold in ["parking", "pedal"] {
        let mut rests = Vec::new();
        for hz in [15.0, 20.0, 30.0, 60.0, 120.0] {
            let mut app = create_app(hz);
            let (car, downhill) = car_on_slope_with(&mut app, builder, true, 0.0);
            controls(&mut app, car, |c| match hold {
                "parking" => c.parking = true,
                _ => c.brake = 1.0,
            });
            let start = position(&app, car);
            tick(&mut app, 1);
            let held: Vec<Entity> = wheels(&mut app, car)
                .into_iter()
                .filter(|w| {
                    hold == "pedal"
                        || (get::<WheelState>(&app, *w).center - start).dot(downhill) > 0.0
                })
                .collect();
            assert_eq!(
                held.len(),
                if hold == "pedal" { 4 } else { 2 },
                "held wheels"
            );
            let set_down: Vec<Vec3> = held
                .iter()
                .map(|w| get::<WheelState>(&app, *w).center)
                .collect();
            tick(&mut app, (5.0 * hz) as usize);
            let mut fastest: f32 = 0.0;
            for _ in 0..hz as usize {
                tick(&mut app, 1);
                fastest = fastest.max(velocity(&app, car).length());
            }
            assert!(
                fastest < 3e-5,
                "{hold}{label} at {hz} Hz: {fastest} m/s after 5 s"
            );
            let (mut moved, mut holds) = (0.0, 0.0);
            for (wheel, from) in held.iter().zip(&set_down) {
                let sensors = get::<WheelSensors>(&app, *wheel);
                assert!(
                    sensors.held,
                    "{hold}{label} at {hz} Hz: a wheel is not held"
                );
                moved += f64::from((get::<WheelState>(&app, *wheel).center - *from).dot(downhill));
                holds += sigma * sensors.slip_ratio;
            }
            let n = held.len() as f64;
            let (moved, holds) = (moved / n, holds / n);
            assert!(
                (moved - holds).abs() < 1e-4,
                "{hold}{label} at {hz} Hz: the held wheel centres moved {moved} m down the \
                 slope, their patches hold {holds} m"
            );
            let rest = (position(&app, car) - start).dot(downhill);
            println!(
                "{hold}{label} at {hz} Hz: the car rests {:.2} mm down the slope, at most \
                 {fastest:.1e} m/s after 5 s",
                rest * 1e3
            );
            rests.push(rest);
        }
        let (low, high) = rests
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
        assert!(
            high - low < 3e-4,
            "{hold}{label}: the car rests {rests:?} m down the slope at 15, 20, 30, 60 and 120 Hz"
        );
    }
}

/// A car spawned in the same frame as the ground under it stands on that ground as a car set
/// down on ground already in the world does. Rapier takes a new collider into its query
/// structures only when it steps, after the wheels probe, so the new car finds no ground on
/// its first step; it is held against gravity for that step (it does not move), and from its
/// second it comes to rest on its parking lock on a 30 % slope where the car set down on the
/// older slope does (within 0.05 mm; measured 0.005 mm at 30 Hz, against 1.96 mm further down
/// when it fell freely for that step). A car spawned in the air over older ground is not
/// held (it falls at g from its first step), and a held car's own gravity scale comes back.
#[test]
fn a_car_spawned_with_its_ground_stands_on_it_as_on_older_ground() {
    let hz = 30.0;
    let dt = (1.0 / hz) as f32;
    let builder = CarBuilder::default();
    let rest_on_slope = |same_frame: bool| {
        let mut app = create_app(hz);
        let (car, downhill) = car_on_slope(&mut app, !same_frame);
        controls(&mut app, car, |c| c.parking = true);
        let start = position(&app, car);
        tick(&mut app, 1);
        if same_frame {
            assert_eq!(velocity(&app, car), Vec3::ZERO, "held on its first step");
        }
        tick(&mut app, (5.0 * hz) as usize);
        (position(&app, car) - start).dot(downhill)
    };
    let (older, same) = (rest_on_slope(false), rest_on_slope(true));
    println!(
        "rests {:.3} mm down the slope on older ground, {:.3} mm on ground spawned with it",
        older * 1e3,
        same * 1e3
    );
    assert!(
        (same - older).abs() < 5e-5,
        "rests {same} m down the slope on new ground, {older} m on older ground"
    );

    // In the air over older ground: it falls from its first step.
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    tick(&mut app, 1);
    let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, 3.0, 0.0));
    tick(&mut app, 1);
    let fall = -velocity(&app, car).y;
    assert!(
        (fall - GRAVITY as f32 * dt).abs() < 1e-3 * GRAVITY as f32 * dt,
        "falls at {fall} m/s after its first step"
    );

    // Held over new ground with a gravity scale of its own: it gets it back.
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, 3.0, 0.0));
    app.world_mut().entity_mut(car).insert(GravityScale(0.5));
    tick(&mut app, 1);
    assert_eq!(velocity(&app, car), Vec3::ZERO, "held on its first step");
    tick(&mut app, 2);
    let fall = -velocity(&app, car).y;
    let expected = 0.5 * GRAVITY as f32 * 2.0 * dt;
    assert!(
        (fall - expected).abs() < 1e-3 * expected,
        "falls at {fall} m/s two steps after its first, {expected} expected"
    );
    assert_eq!(
        get::<GravityScale>(&app, car).0,
        0.5,
        "its own gravity scale"
    );
}

/// A car set down on a 30 % slope rolls down it until its tires push back: on its first
/// grounded step each wheel's contact acceleration along the ground is gravity's,
/// `−g·sin θ` along the heading (the car faces up the slope) and none sideways (to 1e-4 of g;
/// f32 transforms), so its held tires take up the slope's pull from the first step.
#[test]
fn a_wheel_that_touches_down_accelerates_with_gravity_along_the_ground() {
    let mut app = create_app(30.0);
    let (car, _) = car_on_slope(&mut app, false);
    let along = -9.81 * (0.3f64).atan().sin();
    let mut checked = Vec::new();
    for _ in 0..10 {
        tick(&mut app, 1);
        for wheel in wheels(&mut app, car) {
            let state = get::<WheelState>(&app, wheel);
            if !state.grounded || checked.contains(&wheel) {
                continue;
            }
            checked.push(wheel);
            let [forward, left] = state.acceleration;
            assert!(
                (forward - along).abs() < 1e-4 * 9.81 && left.abs() < 1e-4 * 9.81,
                "contact acceleration {:?} m/s², expected [{along}, 0]",
                state.acceleration
            );
        }
    }
    assert_eq!(checked.len(), 4, "every wheel stands on the slope");
}

/// A speed limiter holds a car that could go much faster at its limit: the electric car at
/// full throttle from a rolling 10 m/s, its traction control keeping its tires gripping (a
/// wheel spinning past its grip carries the car on after the cut, and this one's would spin
/// the car round), limited to 15 m/s with the default 0.25 m/s band,
/// never passes 15 m/s by more than the speed one step gains at the tires' friction limit
/// (it decides once per step; `0.9·g·dt`, 0.29 m/s at 30 Hz) and settles where the drive it is left balances its drag and
/// rolling resistance, a few hundredths of its band below the limit (within 0.05 m/s), the
/// same at 30, 60 and 120 Hz (within 0.1 %); without the limiter it passes 18 m/s in the same
/// 10 s.
#[test]
fn a_speed_limiter_holds_the_car_at_its_limit() {
    let limit = 15.0;
    let run = |hz: f64, limiter: Option<SpeedLimiter>| {
        let builder = CarBuilder {
            brakes: Brakes {
                traction_control: Some(TractionControl::default()),
                ..default()
            },
            ..electric_car(DriveLayout::Rear)
        };
        let (mut app, car) = rolling_car(hz, 0.9, &builder, 10.0);
        if let Some(limiter) = limiter {
            app.world_mut().entity_mut(car).insert(limiter);
        }
        controls(&mut app, car, |c| {
            c.gear = 1;
            c.throttle = 1.0;
        });
        let mut fastest: f64 = 0.0;
        for _ in 0..(10.0 * hz) as usize {
            tick(&mut app, 1);
            fastest = fastest.max(get::<VehicleTelemetry>(&app, car).forward_speed);
        }
        (fastest, get::<VehicleTelemetry>(&app, car))
    };
    let limiter = SpeedLimiter {
        max_speed: limit,
        ..default()
    };
    let (free, _) = run(60.0, None);
    assert!(free > 18.0, "without a limiter: {free} m/s");
    let finals: Vec<f64> = [30.0, 60.0, 120.0]
        .into_iter()
        .map(|hz| {
            let (fastest, telemetry) = run(hz, Some(limiter));
            let speed = telemetry.forward_speed;
            println!(
                "{hz} Hz: fastest {fastest:.4} m/s, after 10 s {speed:.4} m/s, cut {:.3}",
                telemetry.speed_limit_cut
            );
            // The limiter decides once per step, at the step's start.
            let one_step = 0.9 * G / hz;
            assert!(
                fastest <= limit + one_step,
                "{hz} Hz: reached {fastest} m/s"
            );
            assert!(
                (limit - 0.05..=limit).contains(&speed),
                "{hz} Hz: {speed} m/s after 10 s"
            );
            assert!(telemetry.speed_limit_cut > 0.9, "{hz} Hz: {telemetry:?}");
            speed
        })
        .collect();
    for (hz, speed) in [30, 60, 120].iter().zip(&finals) {
        assert!(
            rel(*speed, finals[1]) < 1e-3,
            "{hz} Hz: {speed} m/s against {} m/s at 60 Hz",
            finals[1]
        );
    }
}

/// At rest on flat ground with no input for 60 s: no jitter or creep (speed below 1 mm/s
/// after settling, drift below 1 mm).
#[test]
fn at_rest_on_flat_ground_no_jitter_or_creep() {
    let mut app = create_app(60.0);
    spawn_flat_ground(&mut app, 0.9);
    let builder = CarBuilder::default();
    let car = spawn_at_ride_height(&mut app, &builder);
    // Settling: the car lands from its spawn height and its tires take up their load.
    tick(&mut app, 5 * 60);
    let settled = position(&app, car);
    let mut max_speed: f32 = 0.0;
    for _ in 0..60 * 60 {
        tick(&mut app, 1);
        max_speed = max_speed.max(velocity(&app, car).length());
    }
    let drift = (position(&app, car) - settled).length();
    assert!(max_speed < 1e-3, "speed {max_speed} m/s");
    assert!(drift < 1e-3, "drift {drift} m");
}

/// Test-side ideal ABS, as a brake module: each wheel's brake torque is 97 % of what its tire
/// can take at the load it carries this step, so every tire works just below its peak.
struct IdealAbs {
    car: CarBuilder,
    mu: f64,
}

impl BrakeModule for IdealAbs {
    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]) {
        for ((t, wheel), &load) in torques.iter_mut().zip(ctx.wheels).zip(ctx.load) {
            *t = if load > 0.0 {
                -0.97 * peak_fx(&self.car, load, self.mu) * wheel.radius
            } else {
                0.0
            };
        }
    }
}

/// Distance (m) a car braking from `v0` (m/s) takes to stop at `hz`, with the ideal ABS or with
/// locked wheels.
fn braking_distance(hz: f64, v0: f32, mu: f32, abs: bool) -> f64 {
    let builder = CarBuilder::default();
    let (mut app, car) = rolling_car(hz, mu, &builder, v0);
    tick(&mut app, 1);
    if abs {
        let abs = IdealAbs {
            car: builder,
            mu: f64::from(mu),
        };
        app.world_mut()
            .entity_mut(car)
            .install_module(VehicleModule::brake(abs))
            .expect("a car hosts a brake module");
    } else {
        set::<Brakes>(&mut app, car, |b| b.max_torque = 20_000.0);
        controls(&mut app, car, |c| c.brake = 1.0);
    }
    let start = position(&app, car);
    for _ in 0..(20.0 * hz) as usize {
        tick(&mut app, 1);
        if velocity(&app, car).length() < 0.05 {
            break;
        }
    }
    f64::from((position(&app, car) - start).length())
}

/// Braking from 100 km/h at μ = 0.9: with ideal ABS the stop takes v²/(2μg) within 10 %; with
/// locked wheels it takes longer.
#[test]
fn straight_line_braking_distance() {
    let v0 = 100.0 / 3.6;
    let mu = 0.9;
    let ideal = friction_stopping_distance(f64::from(v0), f64::from(mu));
    let abs = braking_distance(60.0, v0, mu, true);
    assert!(
        rel(abs, ideal) < 0.10,
        "ABS stop {abs} m vs v²/(2μg) = {ideal} m"
    );
    let locked = braking_distance(60.0, v0, mu, false);
    println!("stop from 100 km/h: ABS {abs:.2} m, locked {locked:.2} m, v²/(2μg) {ideal:.2} m");
    assert!(locked > abs * 1.05, "locked {locked} m vs ABS {abs} m");
}

/// An app at `hz` with a flat road of friction `mu` and the car `builder` builds, settled and
/// then rolling at `v0` (m/s).
fn rolling_car(hz: f64, mu: f32, builder: &CarBuilder, v0: f32) -> (App, Entity) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, mu);
    let car = spawn_car(
        &mut app,
        builder,
        Transform::from_xyz(0.0, car_rest_height(builder), 0.0),
    );
    tick(&mut app, 30);
    flying_start(&mut app, car, v0);
    (app, car)
}

/// [`rolling_car`] with the default car, its brakes strong enough to lock every wheel
/// (4000 N·m) and, if `abs`, the built-in ABS ([`AntiLock::default`]).
fn rolling_car_with_strong_brakes(hz: f64, mu: f32, abs: bool, v0: f32) -> (App, Entity) {
    let builder = CarBuilder {
        brakes: Brakes {
            max_torque: 4_000.0,
            anti_lock: abs.then(AntiLock::default),
            ..default()
        },
        ..default()
    };
    rolling_car(hz, mu, &builder, v0)
}

/// A stop from `v0` (m/s) at `hz` on a road of friction `mu` at full pedal, with brakes strong
/// enough to lock every wheel and the built-in ABS ([`AntiLock::default`]): returns the
/// distance (m) and the largest slip ratio magnitude of any wheel while the car ran faster
/// than the ABS's `min_speed`, from 0.2 s after the pedal on.
fn abs_stop(hz: f64, v0: f32, mu: f32) -> (f64, f64) {
    let (mut app, car) = rolling_car_with_strong_brakes(hz, mu, true, v0);
    tick(&mut app, 1);
    controls(&mut app, car, |c| c.brake = 1.0);
    let wheels = wheels(&mut app, car);
    let start = position(&app, car);
    let min_speed = AntiLock::default().min_speed;
    let mut max_slip: f64 = 0.0;
    for step in 0..(20.0 * hz) as usize {
        tick(&mut app, 1);
        let speed = f64::from(velocity(&app, car).length());
        if step as f64 >= 0.2 * hz && speed > min_speed {
            for &w in &wheels {
                max_slip = max_slip.max(get::<WheelState>(&app, w).slip_ratio.abs());
            }
        }
        if speed < 0.05 {
            break;
        }
    }
    (f64::from((position(&app, car) - start).length()), max_slip)
}

/// The mean over `wheels` of a point of their [`WheelState`] (`point`, world, m) along the unit
/// vector `direction` (m).
fn mean_along(
    app: &App,
    wheels: &[Entity],
    direction: Vec3,
    point: impl Fn(&WheelState) -> Vec3,
) -> f64 {
    let sum: Vec3 = wheels
        .iter()
        .map(|&w| point(&get::<WheelState>(app, w)))
        .sum();
    f64::from((sum / wheels.len() as f32).dot(direction))
}

/// What the default car's tires give back along `axis` (0 fore and aft, 1 sideways) from
/// their state now, on a road of friction `mu`, if the body moves along `direction` (a unit
/// vector along that axis) until their forces vanish: `[carcass, slip state]` (m). The
/// carcass's is their net force along `direction` over the sum of their patch stiffnesses
/// `C/σ` at their loads, what a tire unloading along its carcass's stiffness gives back. The
/// slip state's is that force over the sum of their secant stiffnesses `|F|/(σ·|slip|)`, with
/// a slip past the peak taken back to the rising side of its curve
/// ([`LoadedTire::rising_slips`]): what a slip state unloading along its relaxation length
/// gives back (a little more, the slip stiffness falling toward the peak).
fn tire_give_back(app: &App, wheels: &[Entity], axis: usize, mu: f64, direction: Vec3) -> [f64; 2] {
    let car = CarBuilder::default();
    let sigma = car.wheel_spec(0).tire.relaxation_length[axis];
    let (mut force, mut carcass, mut state) = (0.0, 0.0, 0.0);
    for (i, &w) in wheels.iter().enumerate() {
        let s = get::<WheelState>(app, w);
        let f = f64::from(s.force.dot(direction));
        let tire = axle_tire(&car, i / 2, s.load, mu);
        let slip = tire.rising_slips([s.slip_ratio, s.slip_angle.tan()])[axis];
        let stiffness = tire.stiffness()[axis] / sigma;
        force += f;
        carcass += stiffness;
        state += if slip.abs() > 1e-9 {
            f.abs() / (sigma * slip.abs())
        } else {
            stiffness
        };
    }
    [force.abs() / carcass, force.abs() / state]
}

/// How a car braked at full pedal from 100 km/h on μ = 0.9 settles, held on the pedal
/// until 3 s after it first falls below 0.01 m/s; with the built-in ABS if `abs`, otherwise on
/// locked wheels.
struct SettlingAfterAStop {
    /// How far its wheel centres rolled back from the farthest point they reached (m).
    back: f64,
    /// What its tires give back from where it stops, along their carcass's stiffness and along
    /// their slip states' relaxation length ([`tire_give_back`]; m).
    give_back: [f64; 2],
    /// Its speed at the end (m/s).
    speed: f64,
}

/// Measured from the farthest point, not from where it first falls below a speed: the car
/// stops with its tires wound up and swings back through a few millimetres, and which sample
/// of that swing first falls below a threshold depends on the step (a stop measured that way
/// looked rate-dependent when the car in fact moved alike at every rate).
fn settling_after_a_stop(hz: f64, abs: bool) -> SettlingAfterAStop {
    let (mut app, car) = rolling_car_with_strong_brakes(hz, 0.9, abs, 100.0 / 3.6);
    let forward = velocity(&app, car).normalize();
    let wheels = wheels(&mut app, car);
    // The wheel centres' mean: the body's pitch moves its origin and its centre of mass as it
    // recovers from the dive, while a held wheel's centre moves only by its tire's deflection.
    let along = |app: &App| mean_along(app, &wheels, forward, |s| s.center);
    controls(&mut app, car, |c| c.brake = 1.0);
    let mut farthest = along(&app);
    // The give-back where the car stops: of the two samples around the first reversal of its
    // speed, at the one nearer to rest (the tires hold the stopped car there; a sample later
    // they have begun to unwind, and the farthest sample may be either).
    let mut before_reversal = None;
    let mut give_back = None;
    let mut held_for = None;
    for _ in 0..(15.0 * hz) as usize {
        tick(&mut app, 1);
        farthest = farthest.max(along(&app));
        let v = f64::from(velocity(&app, car).dot(forward));
        if give_back.is_none() {
            let here = (v.abs(), tire_give_back(&app, &wheels, 0, 0.9, forward));
            match before_reversal {
                Some((before, earlier)) if v <= 0.0 => {
                    give_back = Some(if before < here.0 { earlier } else { here.1 });
                }
                _ => before_reversal = Some(here),
            }
        }
        if held_for.is_none() && velocity(&app, car).length() < 0.01 {
            held_for = Some(0);
        }
        if let Some(steps) = held_for.as_mut() {
            *steps += 1;
            if *steps as f64 >= 3.0 * hz {
                break;
            }
        }
    }
    assert!(held_for.is_some(), "the car stops within 12 s");
    SettlingAfterAStop {
        back: farthest - along(&app),
        give_back: give_back.expect("the car stops"),
        speed: f64::from(velocity(&app, car).length()),
    }
}

/// A car stopped on its brakes from 100 km/h and held on the pedal rolls back by what its
/// tires give back, and settles alike at any step rate. Its wheels held, the body moves by the
/// change of its tires' deflection: its wheel centres roll back by between what the tires'
/// carcass and what their slip state give back from where the car stopped
/// ([`tire_give_back`]: 3.7-4.6 and 4.7-5.6 mm here; 10 % below, 25 % above, for the loads
/// moving as the body recovers from its dive, which takes a third of the front tires' load
/// back to the rear; measured 4.4-6.6 mm, 0.94-1.22 times the slip state's), from 30 to
/// 240 Hz alike within 1.5 mm on locked wheels and from 60 to 240 Hz on the ABS, and it is at
/// rest (below 1 mm/s) 3 s after the stop.
///
/// At 30 Hz the ABS's stop rolls back by up to 1.9 times the slip state's give-back, by where
/// in a step the car comes to rest: from 27.0 to 28.5 m/s it rolled back 5.6 to 9.0 mm at
/// 30 Hz with the ABS as it was until 2026-12-02 (6.1 mm from 100 km/h, inside the bound it
/// had, 1.25 times), and 5.7 to 9.9 mm since the ABS also slows the wheels' inertia (8.1 mm from
/// 100 km/h); 5.5 to 6.7 mm at 60 to 240 Hz either way.
///
/// (Until 2026-11-28 a held tire gave back all of the slip it had slid past its peak, and the
/// car rolled back 31-37 mm here; a measurement from where it first fell below 0.01 m/s made
/// that look rate-dependent. `docs/fixed_step_rate.md`, "Found by an outside test".)
#[test]
fn a_car_stopped_on_its_brakes_gives_back_its_tires_deflection_at_any_step_rate() {
    for abs in [true, false] {
        let mut backs = Vec::new();
        for hz in [30.0, 60.0, 120.0, 240.0] {
            let s = settling_after_a_stop(hz, abs);
            let [carcass, state] = s.give_back;
            println!(
                "{hz} Hz, ABS {abs}: rolled back {:.2} mm (carcass {:.2} mm, slip state {:.2} \
                 mm), {:.4} m/s 3 s after the stop",
                s.back * 1e3,
                carcass * 1e3,
                state * 1e3,
                s.speed
            );
            let most = if abs && hz < 60.0 { 1.9 } else { 1.25 };
            assert!(
                (0.9 * carcass..most * state).contains(&s.back),
                "{hz} Hz, ABS {abs}: rolled back {} m, tires give back {carcass}-{state} m",
                s.back,
            );
            assert!(
                s.speed < 1e-3,
                "{hz} Hz, ABS {abs}: {} m/s after 3 s",
                s.speed
            );
            if !abs || hz >= 60.0 {
                backs.push(s.back);
            }
        }
        let spread = backs.iter().copied().fold(f64::MIN, f64::max)
            - backs.iter().copied().fold(f64::MAX, f64::min);
        assert!(
            spread < 1.5e-3,
            "ABS {abs}: roll-backs {backs:?} m differ by {spread} m"
        );
    }
}

/// The built-in ABS: from 100 km/h on μ = 0.9 with brakes that lock every wheel without it,
/// the car stops within 5 % of `v²/(2·share·μ·g)` (each tire at `peak_share` of its peak),
/// with no wheel past the ABS's release slip, and the same at 30, 60, 120 and 240 Hz within
/// 2 %.
#[test]
fn abs_stops_near_the_friction_limit_at_any_step_rate() {
    let v0 = 100.0 / 3.6;
    let mu = 0.9;
    let abs = AntiLock::default();
    let ideal = friction_stopping_distance(f64::from(v0), f64::from(mu));
    let runs: Vec<(f64, (f64, f64))> = [30.0, 60.0, 120.0, 240.0]
        .into_iter()
        .map(|hz| (hz, abs_stop(hz, v0, mu)))
        .collect();
    // Each tire at `peak_share` of its peak, and the peak close to μ·F_z at these loads (the
    // test-side ideal ABS above stops within 0.5 % of v²/(2μg) at 97 %).
    let expected = ideal / abs.peak_share;
    for &(hz, (distance, slip)) in &runs {
        println!(
            "{hz} Hz: {distance:.2} m (v²/(2·share·μ·g) = {expected:.2} m), largest slip {slip:.3}"
        );
        assert!(
            rel(distance, expected) < 0.03,
            "{hz} Hz: ABS stop {distance} m vs v²/(2·share·μ·g) = {expected} m"
        );
        assert!(
            slip < abs.release_slip,
            "{hz} Hz: a wheel reached slip {slip} (release slip {})",
            abs.release_slip
        );
    }
    let reference = runs[3].1.0;
    for &(hz, (distance, _)) in &runs {
        assert!(
            rel(distance, reference) < 0.02,
            "{hz} Hz: {distance} m vs {reference} m at 240 Hz"
        );
    }
    let locked = braking_distance(60.0, v0, mu, false);
    assert!(
        locked > 1.05 * runs[1].1.0,
        "locked {locked} m vs ABS {} m",
        runs[1].1.0
    );
}

/// Braking from 10 m/s in reverse on μ = 0.9 with the built-in ABS, the default car's
/// front-biased brakes (70 %) cannot use the grip that the load transfer puts on its rear
/// wheels, now the leading ones: the rear brakes' whole torque, `2·T_r/r`, and the front tires
/// at the ABS's share of their peak on their lightened load make the deceleration,
/// `m·a = 2·T_r/r + share·μ·(W_f − m·a·h/L) + c_rr·W`, and the car stops within 3 % of
/// `v²/(2a)` at 30, 60 and 120 Hz (measured 7.458 / 7.464 / 7.474 m against 7.407, where a
/// forward stop takes 5.9 m; the rear tires could give 60 % more than their brakes ask).
#[test]
fn a_reversing_stop_is_held_to_the_rear_brakes_torque() {
    let v0 = 10.0f32;
    let mu = 0.9;
    let mut builder = CarBuilder::default();
    builder.brakes.anti_lock = Some(AntiLock::default());
    let share = AntiLock::default().peak_share;
    let (m, r) = (f64::from(builder.mass), builder.wheel.radius);
    let weight = m * G;
    let h = f64::from(builder.center_of_mass.y + car_rest_height(&builder));
    let wheelbase = f64::from(builder.rear_axle - builder.front_axle);
    let front = 2.0 * builder.static_wheel_load(0);
    let rear_torque =
        builder.brakes.max_torque * (1.0 - builder.brakes.front_bias) / builder.brakes.front_bias;
    let crr = builder.wheel.tire.rolling_resistance;
    let a = (2.0 * rear_torque / r + share * f64::from(mu) * front + crr * weight)
        / (m + share * f64::from(mu) * m * h / wheelbase);
    // The rear tires' grip under that deceleration, well above what their brakes ask.
    let rear_grip = f64::from(mu) * (weight - front + m * a * h / wheelbase);
    assert!(rear_grip > 1.5 * 2.0 * rear_torque / r);
    let expected = f64::from(v0 * v0) / (2.0 * a);
    for hz in [30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, mu);
        let car = spawn_car_at_rest(&mut app, &builder);
        tick(&mut app, (0.5 * hz) as usize);
        flying_start(&mut app, car, -v0);
        let start = position(&app, car);
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, (4.0 * hz) as usize);
        let distance = f64::from((position(&app, car) - start).length());
        println!("{hz} Hz: stopped in {distance:.3} m against {expected:.3} m (a {a:.3} m/s²)");
        assert!(velocity(&app, car).length() < 0.01, "{hz} Hz: still moving");
        assert!(
            rel(distance, expected) < 0.03,
            "{hz} Hz: stopped in {distance} m against {expected} m"
        );
    }
}

/// Brakes hard at full pedal in a steady left turn from `v0` (m/s) at `hz` on μ = 0.9, with
/// brakes strong enough to lock every wheel, with or without the built-in ABS; returns how far
/// the direction of its velocity turned left (rad) from the pedal until it slows below 3 m/s.
fn course_change_braking_in_a_turn(hz: f64, v0: f32, abs: bool) -> f64 {
    braking_in_a_turn(hz, v0, abs, 0.9).0
}

/// [`course_change_braking_in_a_turn`] on a road of friction `mu`; also returns the largest
/// slip ratio magnitude of any wheel from 0.2 s after the pedal on.
fn braking_in_a_turn(hz: f64, v0: f32, abs: bool, mu: f32) -> (f64, f64) {
    let (mut app, car) = rolling_car_with_strong_brakes(hz, mu, abs, v0);
    controls(&mut app, car, |c| c.steering = -0.07);
    tick(&mut app, (1.5 * hz) as usize);
    controls(&mut app, car, |c| c.brake = 1.0);
    let wheels = wheels(&mut app, car);
    let course = |app: &App| {
        let v = velocity(app, car);
        f64::from((-v.x).atan2(-v.z))
    };
    let start = course(&app);
    let mut end = start;
    let mut max_slip: f64 = 0.0;
    for step in 0..(4.0 * hz) as usize {
        tick(&mut app, 1);
        if velocity(&app, car).length() < 3.0 {
            break;
        }
        end = course(&app);
        if step as f64 >= 0.2 * hz {
            for &w in &wheels {
                max_slip = max_slip.max(get::<WheelState>(&app, w).slip_ratio.abs());
            }
        }
    }
    (end - start, max_slip)
}

/// The built-in ABS on snow (μ = 0.3, from 40 km/h) and ice (μ = 0.1, from 25 km/h), braking
/// at full pedal in the left turn of [`abs_keeps_the_car_steering_under_full_braking`], at
/// 30, 60, 120 and 240 Hz: no wheel slides past three times its tire's peak slip (where the
/// release rule leaves no brake; measured 1.75 and 2.0 times), the course turns at least five
/// times as far as with locked wheels (measured 16 and 6 times since the rear wheels select
/// low, 2026-12-02; 19–21 and 7 before), and alike within 2 % across the rates (measured
/// 0.4 % and 0.0 %; 3.8 % and 4.3 % while the ABS decided once per fixed step, the 30 Hz runs
/// straying). With a release slip fixed at the dry road's
/// 0.15 ([`AntiLock::release_slip_at`]) the wheels slid to 5.3 and 19 times their peak slip,
/// the course on ice turned 3.3 times as far as locked, and on snow the rates differed by
/// 11.5 %.
#[test]
fn abs_keeps_the_car_steering_on_snow_and_ice() {
    let car = CarBuilder::default();
    for (mu, kmh) in [(0.3f32, 40.0f32), (0.1, 25.0)] {
        let peak_slip = axle_tire(&car, 0, car.static_wheel_load(0), f64::from(mu)).peak_slip()[0];
        let runs: Vec<(f64, f64)> = [30.0, 60.0, 120.0, 240.0]
            .into_iter()
            .map(|hz| {
                let (with, slip) = braking_in_a_turn(hz, kmh / 3.6, true, mu);
                let (without, _) = braking_in_a_turn(hz, kmh / 3.6, false, mu);
                println!(
                    "μ {mu}, {hz} Hz: course change with ABS {with:.3} rad, locked {without:.3} \
                     rad; largest slip {slip:.4} ({:.2} of the peak slip {peak_slip:.4})",
                    slip / peak_slip
                );
                assert!(
                    slip < 3.0 * peak_slip,
                    "μ {mu}, {hz} Hz: a wheel slid to slip {slip} (peak {peak_slip})"
                );
                assert!(
                    with > 5.0 * without.max(0.0),
                    "μ {mu}, {hz} Hz: course {with} rad with ABS, {without} rad locked"
                );
                (hz, with)
            })
            .collect();
        let reference = runs[3].1;
        for &(hz, with) in &runs {
            assert!(
                rel(with, reference) < 0.02,
                "μ {mu}, {hz} Hz: {with} rad vs {reference} rad at 240 Hz"
            );
        }
    }
}

/// The built-in ABS holds each braked tire at its `peak_share` of the tire's peak force
/// however heavy the wheel, as an ideal ABS does: its brake torque also slows the wheel's own
/// inertia. A 50 kg kart on the default car's wheels (1.2 kg·m² each: slowing one with the kart
/// at 0.9 g takes 106 N at its patch, of the 120 N its tire holds) stops from 15 m/s on
/// μ = 0.9 with its tires passing 0.95 of their peak force plus their rolling resistance
/// (which slows the wheel too) within 3 % while it slows from 12 to 4 m/s, at 30, 60 and
/// 120 Hz, and shorter than on locked wheels (measured 1.6–2.2 % over: its front tires work
/// at their peak slip, where the ABS's grant holds them); the default car within 1 %
/// (measured 0.3 %). Before, the brake torque was capped at 0.95 of the peak force times the
/// radius alone: the kart's tires passed half of that, and it stopped in 22.9 m against
/// 16.5 m on locked wheels; the default car's passed 0.980 of it.
#[test]
fn abs_brakes_at_the_tires_peak_however_heavy_the_wheels() {
    abs_brakes_at_the_tires_peak(CarBuilder::default().mass, 0.01);
    abs_brakes_at_the_tires_peak(50.0, 0.03);
}

/// [`abs_brakes_at_the_tires_peak_however_heavy_the_wheels`] for the default car scaled to
/// `mass` (kg) with its wheels as they are, to within `tolerance` (relative).
fn abs_brakes_at_the_tires_peak(mass: f32, tolerance: f64) {
    let car = CarBuilder::default();
    let scale = mass / car.mass;
    let mut kart = CarBuilder {
        mass,
        inertia: car.inertia * scale,
        ..car
    };
    let scale = f64::from(scale);
    let suspension = &mut kart.wheel.suspension;
    suspension.stiffness *= scale;
    suspension.bump_damping *= scale;
    suspension.rebound_damping *= scale;
    kart.anti_roll_bars = kart.anti_roll_bars.map(|bar| bar * scale);
    kart.brakes.anti_lock = Some(AntiLock::default());
    let share = AntiLock::default().peak_share;
    let mu = 0.9;
    for hz in [30.0, 60.0, 120.0] {
        let stop = |abs: bool| {
            let mut kart = kart.clone();
            if !abs {
                kart.brakes.anti_lock = None;
            }
            let (mut app, car) = rolling_car(hz, mu, &kart, 15.0);
            controls(&mut app, car, |c| {
                c.gear = 0;
                c.brake = 1.0;
            });
            let wheels = wheels(&mut app, car);
            let start = position(&app, car);
            let [mut passed, mut held] = [0.0; 2];
            for _ in 0..(20.0 * hz) as usize {
                tick(&mut app, 1);
                let speed = velocity(&app, car).length();
                if (4.0..12.0).contains(&speed) {
                    let tire = &kart.wheel.tire;
                    let v = f64::from(speed);
                    let rolling =
                        tire.rolling_resistance + tire.rolling_resistance_quadratic * v * v;
                    for &w in &wheels {
                        let load = get::<WheelState>(&app, w).load;
                        passed += get::<WheelSensors>(&app, w).force[0].abs();
                        let peak = loaded_tire(&kart, load, f64::from(mu)).peak_force()[0];
                        held += share * peak + rolling * load;
                    }
                }
                if speed < 0.05 {
                    break;
                }
            }
            (
                f64::from((position(&app, car) - start).length()),
                passed / held,
            )
        };
        let (with_abs, ratio) = stop(true);
        let (locked, _) = stop(false);
        println!(
            "{mass} kg, {hz} Hz: ABS stop {with_abs:.2} m, tires at {ratio:.4} of {share} of \
             their peak and their rolling resistance; locked {locked:.2} m"
        );
        assert!(
            (ratio - 1.0).abs() < tolerance,
            "{mass} kg, {hz} Hz: the tires passed {ratio} of {share} of their peak force and \
             their rolling resistance"
        );
        assert!(
            with_abs < locked,
            "{mass} kg, {hz} Hz: ABS {with_abs} m vs locked {locked} m"
        );
    }
}

/// The built-in ABS keeps a car steering under full braking: in a left turn at 70 km/h on
/// μ = 0.9, with brakes that lock every wheel without it, its course keeps turning left by at
/// least 0.15 rad before it slows below 3 m/s (measured 0.224 since the rear wheels select low,
/// 2026-12-02; 0.208–0.211 before), where locked wheels slide it on without turning left at
/// all; the same within 3 % at 30, 60, 120 and 240 Hz (measured 0.0 %; 1.4 % before, 5.7 %
/// while the ABS decided once per fixed step).
#[test]
fn abs_keeps_the_car_steering_under_full_braking() {
    let v0 = 70.0 / 3.6;
    let runs: Vec<(f64, f64, f64)> = [30.0, 60.0, 120.0, 240.0]
        .into_iter()
        .map(|hz| {
            let with = course_change_braking_in_a_turn(hz, v0, true);
            let without = course_change_braking_in_a_turn(hz, v0, false);
            println!("{hz} Hz: course change with ABS {with:.3} rad, locked {without:.3} rad");
            (hz, with, without)
        })
        .collect();
    let reference = runs[3].1;
    for &(hz, with, without) in &runs {
        assert!(with > 0.15, "{hz} Hz: course turned {with} rad with ABS");
        assert!(
            without < 0.0,
            "{hz} Hz: course turned {without} rad, wheels locked"
        );
        assert!(
            rel(with, reference) < 0.03,
            "{hz} Hz: {with} rad vs {reference} rad at 240 Hz"
        );
    }
}

/// Test-side ideal traction control, the driving twin of [`IdealAbs`]: the motor is commanded
/// the torque that makes each driven tire deliver 97 % of its peak force at its
/// current load, plus what the driven wheels' and motor's inertia take to keep up with that
/// acceleration.
#[derive(Resource, Clone)]
struct IdealTractionControl {
    car: CarBuilder,
    mu: f64,
}

fn traction_control(
    tc: Res<IdealTractionControl>,
    time: Res<Time>,
    wheels: Query<(&WheelState, &Wheel, Has<DrivenBy>)>,
    mut motors: Query<(&mut Motor, &MotorSensors)>,
) {
    let (mut force, mut inertia) = (0.0, 0.0);
    for (state, wheel, driven) in &wheels {
        if driven && state.grounded {
            force += 0.97 * peak_fx(&tc.car, state.load, tc.mu);
            inertia += wheel.inertia;
        }
    }
    let ratio = tc.car.differential.ratio;
    let radius = tc.car.wheel.radius;
    for (mut motor, sensors) in &mut motors {
        let inertia = inertia + motor.inertia * ratio * ratio;
        let acceleration = force / f64::from(tc.car.mass);
        let wheel_torque = force * radius + inertia * acceleration / radius;
        let available = motor.available_torque(sensors.speed).max(1e-9);
        let target = (wheel_torque / ratio / available).clamp(0.0, 1.0);
        // The command follows with a 0.05 s lag, as a motor's torque and a driveline's windup
        // do: a step of 97 % of the peak would ring the lightly damped tire past its peak.
        let follow = 1.0 - (-time.delta_secs_f64() / TRACTION_LAG).exp();
        motor.command += (target - motor.command) * follow;
    }
}

/// Time constant of [`traction_control`]'s command (s).
const TRACTION_LAG: f64 = 0.05;

/// Accelerates `layout` with traction control at `hz`; returns (initial acceleration averaged
/// over 0.3–1.0 s in m/s², 0–100 km/h time in s).
fn traction_run(layout: DriveLayout, hz: f64, mu: f32) -> (f64, f64) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, mu);
    let builder = electric_car(layout);
    let car = spawn_at_ride_height(&mut app, &builder);
    tick(&mut app, (0.5 * hz) as usize);
    app.insert_resource(IdealTractionControl {
        car: builder.clone(),
        mu: f64::from(mu),
    })
    .add_systems(
        FixedUpdate,
        traction_control
            .after(VehicleSystems::Contact)
            .before(DrivetrainSystems::SyncIn),
    );
    controls(&mut app, car, |c| c.gear = 1);
    let dt = fixed_dt(&app);
    let (mut v_03, mut v_10, mut t_100) = (None, None, None);
    for step in 1..=(30.0 * hz) as usize {
        tick(&mut app, 1);
        let t = step as f64 * dt;
        let v = f64::from(get::<VehicleTelemetry>(&app, car).forward_speed as f32);
        if t >= 0.3 && v_03.is_none() {
            v_03 = Some((t, v));
        }
        if t >= 1.0 && v_10.is_none() {
            v_10 = Some((t, v));
        }
        if v >= 100.0 / 3.6 {
            t_100 = Some(t);
            break;
        }
    }
    let ((t0, v0), (t1, v1)) = (v_03.unwrap(), v_10.unwrap());
    ((v1 - v0) / (t1 - t0), t_100.expect("reached 100 km/h"))
}

/// The traction-limited acceleration of a car on `axle` (0 front, 1 rear): the driven axle's
/// peak force with the load transferred by the acceleration itself (fixed point).
fn traction_limit(car: &CarBuilder, axle: usize, mu: f64) -> f64 {
    traction_limit_and_load(car, axle, mu).0
}

/// [`traction_limit`] (m/s²) and the load (N) on each driven tire at that acceleration.
fn traction_limit_and_load(car: &CarBuilder, axle: usize, mu: f64) -> (f64, f64) {
    let m = f64::from(car.mass);
    let wheelbase = f64::from(car.rear_axle - car.front_axle);
    let h = f64::from(car.center_of_mass.y) + car.wheel.radius - f64::from(car.wheel_height);
    let (mut a, mut fz) = (0.0, car.static_wheel_load(axle));
    for _ in 0..50 {
        // Acceleration moves load rearward by m·a·h/L.
        let transfer = m * a * h / wheelbase / 2.0;
        fz = car.static_wheel_load(axle) + if axle == 1 { transfer } else { -transfer };
        a = 2.0 * peak_fx(car, fz, mu) / m;
    }
    (a, fz)
}

/// The rear-driven electric car floored from rest at `hz` on friction `mu`, with or without the
/// built-in traction control ([`TractionControl::default`]). Returns, counted from the
/// throttle: the mean acceleration from 0.3 to 1.0 s (m/s²), the 0–100 km/h time (s; `None`
/// if not reached within 10 s), the largest slip ratio of a rear tire from 0.5 s on, and the
/// largest share of the drive the control held back ([`VehicleTelemetry::traction_cut`]).
///
/// Checks on the way, at every step, that the motor's sensors report the torque it produced
/// with its command scaled by what the control left, `Motor::limited_torque(ω, 1 − cut)`
/// (1e-9 of the available torque).
fn floored_launch(hz: f64, mu: f32, tc: bool) -> (f64, Option<f64>, f64, f64) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, mu);
    let builder = CarBuilder {
        brakes: Brakes {
            traction_control: tc.then(TractionControl::default),
            ..default()
        },
        ..electric_car(DriveLayout::Rear)
    };
    let car = spawn_at_ride_height(&mut app, &builder);
    tick(&mut app, (0.5 * hz) as usize);
    let rear: Vec<Entity> = wheels(&mut app, car)
        .into_iter()
        .filter(|&w| get::<WheelMount>(&app, w).axle == 1)
        .collect();
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 1.0;
    });
    let motor = block_entity::<Motor>(&mut app, car);
    let dt = fixed_dt(&app);
    let (mut v_03, mut v_10, mut max_slip) = (None, None, 0.0f64);
    let (mut t_100, mut cut) = (None, 0.0f64);
    for step in 1..=(10.0 * hz) as usize {
        tick(&mut app, 1);
        let t = step as f64 * dt;
        let telemetry = get::<VehicleTelemetry>(&app, car);
        let v = telemetry.forward_speed;
        cut = cut.max(telemetry.traction_cut);
        let sensors = get::<MotorSensors>(&app, motor);
        let produced =
            get::<Motor>(&app, motor).limited_torque(sensors.speed, 1.0 - telemetry.traction_cut);
        assert!(
            (sensors.torque - produced).abs() <= 1e-9 * sensors.available_torque,
            "{hz} Hz, {t:.3} s: the motor reports {} N·m, produced {produced} N·m (cut {})",
            sensors.torque,
            telemetry.traction_cut
        );
        if t >= 0.3 && v_03.is_none() {
            v_03 = Some((t, v));
        }
        if t >= 1.0 && v_10.is_none() {
            v_10 = Some((t, v));
        }
        if t >= 0.5 {
            for &w in &rear {
                max_slip = max_slip.max(get::<WheelState>(&app, w).slip_ratio);
            }
        }
        if v >= 100.0 / 3.6 && t_100.is_none() {
            t_100 = Some(t);
        }
    }
    let ((t0, v0), (t1, v1)) = (v_03.unwrap(), v_10.unwrap());
    ((v1 - v0) / (t1 - t0), t_100, max_slip, cut)
}

/// The built-in traction control: the rear-driven electric car, whose motor can put twice
/// what the rear tires take onto them, floored from rest on μ = 0.9. With it, the initial
/// acceleration is within 10 % of the traction limit from load transfer and μ, no rear tire
/// slips past the control's `slip + band` (times the tire's peak slip), and the 0–100 km/h
/// time is the same at 30, 60, 120 and 240 Hz within 1 %. Without it, the tires spin (slip above 1) and the car accelerates at
/// less than 60 % of that.
#[test]
fn traction_control_launches_near_the_traction_limit_at_any_step_rate() {
    let car = electric_car(DriveLayout::Rear);
    let (limit, load) = traction_limit_and_load(&car, 1, 0.9);
    let tc = TractionControl::default();
    // The slip where the control leaves no drive (about 0.2 on this road).
    let cut_off = (tc.slip + tc.band) * axle_tire(&car, 1, load, 0.9).peak_slip()[0];
    let runs: Vec<(f64, (f64, Option<f64>, f64, f64))> = [30.0, 60.0, 120.0, 240.0]
        .into_iter()
        .map(|hz| (hz, floored_launch(hz, 0.9, true)))
        .collect();
    let reference = runs[3].1.1.expect("reached 100 km/h at 240 Hz");
    for &(hz, (a, t, slip, cut)) in &runs {
        println!(
            "{hz} Hz: {a:.3} m/s² (limit {limit:.3}), 0–100 {t:?} s, largest slip {slip:.3}, \
             largest cut {cut:.2}"
        );
        // The motor has about twice what the tires take: the control must hold back a lot
        // (at the launch its largest cut is 0.69–0.79).
        assert!(cut > 0.3, "{hz} Hz: the control held back at most {cut}");
        assert!(
            rel(a, limit) < 0.10,
            "{hz} Hz: {a} m/s² vs limit {limit} m/s²"
        );
        assert!(slip < cut_off, "{hz} Hz: slip {slip} past {cut_off}");
        let t = t.expect("reached 100 km/h");
        assert!(
            rel(t, reference) < 0.01,
            "{hz} Hz: 0–100 in {t} s vs {reference} s at 240 Hz"
        );
    }
    let (a, _, slip, cut) = floored_launch(60.0, 0.9, false);
    let with = runs[1].1.0;
    println!("without: {a:.3} m/s², largest slip {slip:.3}");
    assert_eq!(cut, 0.0, "no traction control, nothing held back");
    assert!(
        slip > 1.0,
        "without traction control the largest slip was {slip}"
    );
    assert!(a < 0.6 * with, "without: {a} m/s², with: {with} m/s²");
}

/// The built-in traction control on slippery roads: the rear-driven electric car floored from
/// rest on μ = 0.3 (snow) and 0.1 (ice) accelerates within 10 % of its traction limit (the rear
/// tires at their peak, less the front tires' rolling resistance, a quarter of the limit on
/// ice), no rear tire slips so far that it passes less than 90 % of its peak force, and the
/// acceleration agrees at 30, 60, 120 and 240 Hz within 1 % on snow and on ice (measured:
/// 0.2 % and 0.3 %; see [`TractionControl`]'s docs on the look-ahead and on
/// `SUBSTEP_SHARE`). (On ice 30 and 60 Hz ran 4.3 % above 240 Hz until a tire's slip past its
/// peak unwound faster than it relaxes in rolling; then 60 Hz ran 2.4 % below it, the cut
/// swinging from step to step at the default substep, until the control took finer
/// substeps while it acts.) A tire's force peaks at
/// a slip about proportional to the friction, so the control measures slip against each tire's
/// peak: with fixed thresholds suited to dry asphalt (0.1 to 0.2) a tire on ice spun to ten
/// times its peak slip, where it passes half its peak force.
#[test]
fn traction_control_holds_the_traction_limit_on_slippery_roads() {
    let car = electric_car(DriveLayout::Rear);
    let tc = TractionControl::default();
    // (μ, how closely the step rates must agree)
    for (mu, agreement) in [(0.3, 0.01), (0.1, 0.01)] {
        let (peak, load) = traction_limit_and_load(&car, 1, f64::from(mu));
        // The undriven front tires' rolling resistance holds the car back.
        let m = f64::from(car.mass);
        let front = m * G - 2.0 * load;
        let limit = peak - car.wheel_spec(0).tire.rolling_resistance * front / m;
        let tire = axle_tire(&car, 1, load, f64::from(mu));
        let peak_slip = tire.peak_slip()[0];
        let cut_off = (tc.slip + tc.band) * peak_slip;
        let runs: Vec<(f64, f64, f64)> = [30.0, 60.0, 120.0, 240.0]
            .into_iter()
            .map(|hz| {
                let (a, _, slip, _) = floored_launch(hz, mu, true);
                println!(
                    "μ {mu}, {hz} Hz: {a:.4} m/s² (limit {limit:.4}), largest slip {slip:.4} \
                     (peak slip {peak_slip:.4}, no drive from {cut_off:.4})"
                );
                (hz, a, slip)
            })
            .collect();
        let reference = runs[3].1;
        for &(hz, a, slip) in &runs {
            assert!(
                rel(a, limit) < 0.10,
                "μ {mu}, {hz} Hz: {a} m/s² vs limit {limit} m/s²"
            );
            let share = tire.forces(slip, 0.0)[0] / tire.forces(peak_slip, 0.0)[0];
            assert!(
                share > 0.9,
                "μ {mu}, {hz} Hz: at slip {slip} the tire passes {share} of its peak force"
            );
            assert!(
                rel(a, reference) < agreement,
                "μ {mu}, {hz} Hz: {a} m/s² vs {reference} m/s² at 240 Hz"
            );
        }
    }
}

/// A 0–100 km/h run of a rear-driven and a front-driven car of the same mass: initial
/// acceleration within 10 % of the traction limit from load transfer and μ, and the rear-driven
/// car is quicker.
#[test]
fn acceleration_at_the_traction_limit() {
    let mu = 0.9;
    let (a_rwd, t_rwd) = traction_run(DriveLayout::Rear, 60.0, mu);
    let (a_fwd, t_fwd) = traction_run(DriveLayout::Front, 60.0, mu);
    let limit_rwd = traction_limit(&electric_car(DriveLayout::Rear), 1, f64::from(mu));
    let limit_fwd = traction_limit(&electric_car(DriveLayout::Front), 0, f64::from(mu));
    println!(
        "RWD {a_rwd:.3} m/s² (limit {limit_rwd:.3}), 0–100 {t_rwd:.2} s; \
         FWD {a_fwd:.3} m/s² (limit {limit_fwd:.3}), 0–100 {t_fwd:.2} s"
    );
    assert!(
        rel(a_rwd, limit_rwd) < 0.10,
        "RWD {a_rwd} vs limit {limit_rwd} m/s²"
    );
    assert!(
        rel(a_fwd, limit_fwd) < 0.10,
        "FWD {a_fwd} vs limit {limit_fwd} m/s²"
    );
    assert!(t_rwd < t_fwd, "RWD {t_rwd} s should beat FWD {t_fwd} s");
}

/// Braking distance and 0–100 time agree within 2 % at 15, 30, 60 and 120 Hz (15 Hz: the
/// longest fixed step the vehicles are validated at, `LONGEST_VALIDATED_STEP`).
///
/// Rapier's semi-implicit Euler moves a body each step at the step's end velocity, so a stop
/// from `v0` at a steady deceleration covers `v0·dt/2` less than the exact `v0²/(2a)`: 0.93 m
/// at 15 Hz, 0.12 m at 120 Hz. The distances are compared with that bias added back
/// (measured 2026-11-27: 45.16, 45.32, 45.45 and 45.43 m at 15, 30, 60 and 120 Hz; with the
/// bias added back 46.09, 45.78, 45.68 and 45.55 m; the 0–100 km/h run 6.47 s at each).
#[test]
fn braking_and_acceleration_are_independent_of_the_fixed_rate() {
    let v0 = 100.0 / 3.6;
    let unbiased = |stop: f64, hz: f64| stop + f64::from(v0) / (2.0 * hz);
    let reference_stop = unbiased(braking_distance(120.0, v0, 0.9, true), 120.0);
    let (_, reference_run) = traction_run(DriveLayout::Rear, 120.0, 0.9);
    let slowest = 1.0 / bevy_vehicle_physics::chassis::LONGEST_VALIDATED_STEP;
    for hz in [slowest, 30.0, 60.0] {
        let stop = unbiased(braking_distance(hz, v0, 0.9, true), hz);
        let (_, run) = traction_run(DriveLayout::Rear, hz, 0.9);
        println!(
            "{hz} Hz: stop {stop:.2} m, 0–100 {run:.2} s (120 Hz: {reference_stop:.2} m, \
             {reference_run:.2} s; stops with the integrator's bias added back)"
        );
        assert!(
            rel(stop, reference_stop) < 0.02,
            "{hz} Hz stop {stop} vs {reference_stop} m"
        );
        assert!(
            rel(run, reference_run) < 0.02,
            "{hz} Hz 0–100 {run} vs {reference_run} s"
        );
    }
}

/// A car turning with its steering and throttle held: its speed (m/s) and its turn (the
/// change of heading, rad) after 15 s from a flying start at 15 m/s on μ 1.0, at `hz`.
fn held_turn(hz: f64) -> (f64, f64) {
    let (mut app, car) = rolling_car(hz, 1.0, &electric_car(DriveLayout::Rear), 15.0);
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 0.1;
        c.steering = 0.1;
    });
    let turn = tick_turning(&mut app, car, (15.0 * hz).round() as usize);
    let speed = get::<VehicleTelemetry>(&app, car).forward_speed;
    (speed, turn)
}

/// A tire's force turns with its wheel through the step while Rapier holds each force fixed
/// in the world for the whole step: the force goes to Rapier in the heading the wheel has
/// halfway through the step. A car held in a turn (0.5 g at first, 0.7 g after 15 s, its
/// speed rising from 15 to 19.8 m/s) gains the same speed at any rate (within 0.2 %,
/// measured 0.07 % at 15 Hz, 0.04 % at 30) and turns as far (within 1 %, measured 0.32 %).
/// At the heading of the step's start the car's own side force pushed it along its path
/// (`m·a_y·ω·dt/2`): 2.3 % faster at 15 Hz than at 120 after 15 s.
#[test]
fn a_held_turn_keeps_its_speed_at_any_step_rate() {
    let (speed_ref, turn_ref) = held_turn(120.0);
    println!("120 Hz: {speed_ref:.4} m/s, turned {turn_ref:.4} rad");
    assert!(
        speed_ref > 10.0 && turn_ref.abs() > 3.0,
        "the car should be turning briskly: {speed_ref} m/s, {turn_ref} rad"
    );
    let slowest = 1.0 / bevy_vehicle_physics::chassis::LONGEST_VALIDATED_STEP;
    for hz in [slowest, 30.0, 60.0] {
        let (speed, turn) = held_turn(hz);
        println!("{hz} Hz: {speed:.4} m/s, turned {turn:.4} rad");
        assert!(
            rel(speed, speed_ref) < 0.002,
            "{hz} Hz: {speed} m/s against {speed_ref} at 120 Hz"
        );
        assert!(
            rel(turn, turn_ref) < 0.01,
            "{hz} Hz: turned {turn} rad against {turn_ref} at 120 Hz"
        );
    }
}

/// The change (rad) in the electric car's direction of travel 0.6, 1.2 and 2 s after its
/// steering input steps from 0 to 0.1 at 20 m/s on μ 1.0, at `hz`.
fn step_steer(hz: f64) -> [f64; 3] {
    let (mut app, car) = rolling_car(hz, 1.0, &electric_car(DriveLayout::Rear), 20.0);
    controls(&mut app, car, |c| c.gear = 1);
    tick(&mut app, (0.2 * hz).round() as usize);
    let course = |app: &App| {
        let v = velocity(app, car);
        f64::from((-v.x).atan2(-v.z))
    };
    let start = course(&app);
    controls(&mut app, car, |c| c.steering = 0.1);
    let mut out = [0.0; 3];
    let mut ticked = 0;
    for (k, t) in [0.6, 1.2, 2.0].into_iter().enumerate() {
        let steps = (t * hz).round() as usize;
        tick(&mut app, steps - ticked);
        ticked = steps;
        out[k] = course(&app) - start;
    }
    out
}

/// A step steer turns the car's path alike at any rate, to second order in the step. Two
/// first-order errors went on 2026-12-01. The wheels held the rate-limited steering's value at
/// the step's end for the whole step, so a 0.04 s ramp counted as done from a 15 Hz step's
/// start (the body's heading 4.3 % ahead of its 120 Hz run 0.6 s after the step); they now
/// hold its mean over the step. And the tires read their slips against the heading Rapier
/// shows, which runs `ω·dt/8` ahead of the body's turn (`rapier_heading_lead`); they now
/// read them against the heading turned back by it (without that, 0.47 / 0.19 % at 30 Hz and
/// 0.19 / 0.07 % at 60 Hz at 0.6 / 1.2 s, failing this bound). Within `2/hz²` (0.89 % at
/// 15 Hz, 0.22 % at 30, 0.056 % at 60): measured 0.70 / 0.17 / 0.15 % at 15 Hz,
/// 0.14 / 0.04 / 0.03 % at 30 and 0.017 / 0.005 / 0.006 % at 60 Hz.
#[test]
fn a_step_steer_turns_alike_at_any_step_rate() {
    let reference = step_steer(120.0);
    println!("120 Hz: {reference:?} rad");
    assert!(reference[2].abs() > 0.3, "turned {reference:?} rad");
    let slowest = 1.0 / bevy_vehicle_physics::chassis::LONGEST_VALIDATED_STEP;
    for hz in [slowest, 30.0, 60.0] {
        let turn = step_steer(hz);
        let errors = [0, 1, 2].map(|k| rel(turn[k], reference[k]));
        println!("{hz} Hz: {turn:?} rad, relative errors {errors:?}");
        let tolerance = 2.0 / (hz * hz);
        assert!(
            errors.iter().all(|e| *e < tolerance),
            "{hz} Hz: turned {turn:?} rad against {reference:?} at 120 Hz"
        );
    }
}

/// Keeps the car on a circle of `radius` about `centre` (turning right, clockwise seen from
/// above) at a slowly rising speed.
#[derive(Resource)]
struct CircleDriver {
    centre: Vec3,
    radius: f32,
    speed_rate: f32,
    start_speed: f32,
    time: f32,
    speed_integral: f32,
    radial_integral: f32,
}

fn circle_driver(
    time: Res<Time>,
    mut driver: ResMut<CircleDriver>,
    mut cars: Query<(
        &Transform,
        &bevy_rapier3d::prelude::Velocity,
        &Steering,
        &mut VehicleControls,
    )>,
) {
    let dt = time.delta_secs();
    driver.time += dt;
    for (transform, velocity, steering, mut controls) in &mut cars {
        let from_centre = transform.translation - driver.centre;
        let radial = Vec3::new(from_centre.x, 0.0, from_centre.z);
        let distance = radial.length();
        // Clockwise tangent: radial × up.
        let tangent = radial.normalize_or_zero().cross(Vec3::Y);
        let forward = transform.rotation * Vec3::NEG_Z;
        // Positive when the tangent lies to the left of the heading.
        let heading_error = forward.cross(tangent).y.atan2(forward.dot(tangent));
        let radial_error = distance - driver.radius;
        driver.radial_integral = (driver.radial_integral + radial_error * dt).clamp(-20.0, 20.0);
        let feedforward = 2.6 / driver.radius / steering.max_angle as f32;
        let steer =
            feedforward + 0.05 * radial_error + 0.01 * driver.radial_integral - 1.0 * heading_error;
        controls.steering = f64::from(steer.clamp(-1.0, 1.0));

        let speed = velocity.linear.dot(forward);
        let target = driver.start_speed + driver.speed_rate * driver.time;
        let speed_error = target - speed;
        driver.speed_integral = (driver.speed_integral + speed_error * dt).clamp(-5.0, 5.0);
        controls.throttle =
            f64::from((0.3 * speed_error + 0.1 * driver.speed_integral).clamp(0.0, 1.0));
        controls.brake = f64::from((-0.3 * speed_error).clamp(0.0, 1.0));
        controls.gear = 1;
    }
}

/// Least-squares fit of `y = c0 + c1·x + c3·x³`; returns `[c0, c1, c3]`.
fn fit_linear_cubic(points: &[(f64, f64)]) -> [f64; 3] {
    // Normal equations for the basis (1, x, x³).
    let mut a = [[0.0f64; 4]; 3];
    for &(x, y) in points {
        let basis = [1.0, x, x * x * x];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] += basis[i] * basis[j];
            }
            a[i][3] += basis[i] * y;
        }
    }
    // Gauss-Jordan elimination with partial pivoting.
    for col in 0..3 {
        let pivot = (col..3)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap();
        a.swap(col, pivot);
        let pivot_row = a[col];
        for (row, r) in a.iter_mut().enumerate() {
            if row != col {
                let f = r[col] / pivot_row[col];
                for (x, p) in r.iter_mut().zip(pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    [a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]]
}

/// Steady-state cornering on a 100 m circle at slowly rising speed: below 0.3 g the steering
/// angle follows the linear bicycle model, `δ = L/R + K·a_y`, with the understeer gradient `K`
/// within 15 %; the lateral acceleration then saturates near the tires' lateral friction limit
/// (within 15 %), and so near μ·g (within 15 %: the road's μ is the tires' peak both ways,
/// see `MagicFormula::lateral_mu_reference`). At 30, 60 and 120 Hz, with `K` and the
/// saturation each within 2 % of the 60 Hz run's (measured: 1.063 of the model's `K` at all
/// three, to three digits; 0.900–0.902 of the limit, 0.925–0.928 of μ·g).
///
/// Below 0.3 g each axle moves load from its inner to its outer wheel as its share of the roll
/// stiffness gives, with the roll axis at the ground (the raycast suspension's tire forces act
/// at the contacts): `ΔN = K_a·φ/t` per wheel, `φ = m·a_y·h/(K − m·g·h)`, `K_a = k·t²/2 +
/// k_bar·t²`; the gradients within 1 % (measured: 0.06 % front and rear at every rate).
///
/// Lateral load transfer lowers each axle's cornering stiffness by a term quadratic in the
/// transfer, which adds a cubic term to `δ(a_y)`; the fit `δ = δ0 + K·a_y + c·a_y³` separates it
/// from the linear gradient the bicycle model predicts.
#[test]
fn steady_state_cornering_follows_the_bicycle_model() {
    let runs = [30.0, 60.0, 120.0].map(|hz| (hz, cornering_run(hz)));
    let (_, (k_reference, lateral_reference)) = runs[1];
    for (hz, (k, lateral)) in runs {
        assert!(
            rel(k, k_reference) < 0.02,
            "{hz} Hz: understeer gradient {k} vs {k_reference} rad/(m/s²) at 60 Hz"
        );
        assert!(
            rel(lateral, lateral_reference) < 0.02,
            "{hz} Hz: saturates at {lateral} vs {lateral_reference} m/s² at 60 Hz"
        );
    }
}

/// The car of the cornering tests: the electric car with 30 % stiffer rear tires (a wider
/// rear tire, as on most rear-driven cars), which give a realistic understeer gradient of
/// about 1.3°/g.
fn cornering_car() -> CarBuilder {
    let mut builder = electric_car(DriveLayout::Rear);
    let mut rear = builder.wheel.clone();
    let mut tire = (*rear.tire).clone();
    let TireModel::MagicFormula(mf) = &mut tire.model else {
        unreachable!("the default tire is a Magic Formula tire")
    };
    mf.p_ky1 *= 1.3;
    rear.tire = std::sync::Arc::new(tire);
    builder.rear_wheel = Some(rear);
    builder
}

/// What one run on the 100 m circle measured: the linear terms of fits of
/// `y = y0 + y1·a_y + y3·a_y³` below 0.3 g, and the largest lateral acceleration.
struct Cornering {
    /// Understeer gradient of the driver's steering (the front wheels' mean angle less their
    /// toe; rad/(m/s²)).
    k: f64,
    /// Gradient of the front wheels' mean toe out of the turn (rad/(m/s²)).
    toe: f64,
    /// Gradient of the front axle's half travel difference, outer less inner (m/(m/s²)).
    roll_travel: f64,
    /// Gradient of the front wheels' mean inclination (`WheelState::camber`, rad/(m/s²);
    /// negative when they lean out of this right-hand turn, to the left).
    camber: f64,
    /// Largest lateral acceleration, the turn of the velocity over 1 s (m/s²).
    max_lateral: f64,
    /// Gradients of each axle's half load difference, outer less inner (N/(m/s²)), front
    /// and rear.
    load_transfer: [f64; 2],
}

/// The road's friction in the cornering tests (dimensionless).
const CORNERING_MU: f32 = 0.9;

/// Drives `builder`'s car on a 100 m circle (turning right) on `CORNERING_MU` at `hz`: 20 s at
/// 6.5 m/s, then the speed rising by 0.12 m/s² until the car leaves the circle or 200 s pass.
fn cornering(hz: f64, builder: &CarBuilder) -> Cornering {
    let radius = 100.0f32;
    let start_speed = 6.5;
    let hold = 20.0;
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, CORNERING_MU);
    let car = spawn_car(
        &mut app,
        builder,
        Transform::from_xyz(0.0, car_rest_height(builder), 0.0),
    );
    app.insert_resource(CircleDriver {
        centre: Vec3::new(radius, 0.0, 0.0),
        radius,
        speed_rate: 0.0,
        start_speed,
        time: 0.0,
        speed_integral: 0.0,
        radial_integral: 0.0,
    })
    .add_systems(FixedUpdate, circle_driver.before(VehicleSystems::Controls));
    tick(&mut app, 1);
    flying_start(&mut app, car, start_speed);
    // Settle on the circle at constant speed, then raise the speed slowly.
    tick(&mut app, (hold * hz) as usize);
    {
        let mut driver = app.world_mut().resource_mut::<CircleDriver>();
        driver.speed_rate = 0.12;
        driver.time = 0.0;
    }
    // Left before right: in this right-hand turn the left wheel is the outer one.
    let front = wheels(&mut app, car);
    let [mut steer, mut toe, mut travel, mut camber] = [const { Vec::new() }; 4];
    let mut transfer = [const { Vec::new() }; 2];
    let mut max_lateral: f64 = 0.0;
    // The last three samples' velocities (every 0.5 s): the lateral acceleration over the last
    // second is the turn of the velocity times the mean speed. (At the limit the car wanders
    // off the circle and back, and `v²/r` about the circle's centre is no longer the path's.)
    let mut recent = [Vec3::ZERO; 3];
    for step in 0..(200.0 * hz) as usize {
        tick(&mut app, 1);
        if step % ((hz / 2.0) as usize) != 0 {
            continue;
        }
        let velocity = velocity(&app, car) * Vec3::new(1.0, 0.0, 1.0);
        let v = velocity.length();
        let p = position(&app, car);
        let r = Vec3::new(radius - p.x, 0.0, -p.z).length();
        if (r - radius).abs() > 5.0 {
            // Past the limit: the car has left the circle.
            break;
        }
        let a_y = f64::from(v * v / r);
        recent = [recent[1], recent[2], velocity];
        if recent[0] != Vec3::ZERO {
            let turn = f64::from(recent[0].angle_between(recent[2]));
            let speed = f64::from(recent.iter().map(|v| v.length()).sum::<f32>()) / 3.0;
            max_lateral = max_lateral.max(turn * speed);
        }
        let [outer, inner] = [0, 1].map(|i| get::<WheelState>(&app, front[i]));
        if (r - radius).abs() < 1.0 && a_y < 0.3 * G {
            let driver = |s: &WheelState| s.steer_angle - s.toe;
            steer.push((a_y, -(driver(&outer) + driver(&inner)) / 2.0));
            toe.push((a_y, (outer.toe + inner.toe) / 2.0));
            travel.push((a_y, (outer.travel - inner.travel) / 2.0));
            camber.push((a_y, (outer.camber + inner.camber) / 2.0));
            for (axle, transfer) in transfer.iter_mut().enumerate() {
                let [outer, inner] = [0, 1].map(|i| get::<WheelState>(&app, front[2 * axle + i]));
                transfer.push((a_y, (outer.load - inner.load) / 2.0));
            }
        }
    }
    assert!(
        steer.len() > 40,
        "{hz} Hz: not enough steady points: {}",
        steer.len()
    );
    Cornering {
        k: fit_linear_cubic(&steer)[1],
        toe: fit_linear_cubic(&toe)[1],
        roll_travel: fit_linear_cubic(&travel)[1],
        camber: fit_linear_cubic(&camber)[1],
        max_lateral,
        load_transfer: transfer.map(|t| fit_linear_cubic(&t)[1]),
    }
}

/// One run of [`steady_state_cornering_follows_the_bicycle_model`] at `hz`, asserting the
/// bicycle model and the friction limit; returns the understeer gradient (rad/(m/s²)) and
/// the largest lateral acceleration (m/s²).
fn cornering_run(hz: f64) -> (f64, f64) {
    let mu = f64::from(CORNERING_MU);
    let builder = cornering_car();
    let Cornering {
        k: k_measured,
        max_lateral,
        load_transfer,
        ..
    } = cornering(hz, &builder);
    // Each axle takes the share of the roll moment its roll stiffness gives, the roll axis at
    // the ground: per wheel `ΔN_a = K_a·φ/t`, `φ = m·a_y·h/(K − m·g·h)`.
    {
        let (m, t) = (f64::from(builder.mass), f64::from(builder.track));
        let h = f64::from(builder.center_of_mass.y + car_rest_height(&builder));
        let axle = axle_roll_stiffness(&builder);
        let roll = m * h / (axle[0] + axle[1] - m * GRAVITY * h);
        let expected = axle.map(|ka| ka * roll / t);
        println!("{hz} Hz: load transfer {load_transfer:?} N/(m/s²) against {expected:?}");
        for (got, want) in load_transfer.iter().zip(expected) {
            assert!(
                rel(*got, want) < 0.01,
                "{hz} Hz: load transfer {load_transfer:?} N/(m/s²) against {expected:?}"
            );
        }
    }
    // Bicycle model: K = m_f/C_f − m_r/C_r with C = 2·K_y(F_z) per axle.
    let m = f64::from(builder.mass);
    let (wf, wr) = (builder.static_wheel_load(0), builder.static_wheel_load(1));
    let (cf, cr) = (
        2.0 * axle_tire(&builder, 0, wf, mu).stiffness()[1],
        2.0 * axle_tire(&builder, 1, wr, mu).stiffness()[1],
    );
    let (mf, mr) = (2.0 * wf / GRAVITY, 2.0 * wr / GRAVITY);
    assert!((mf + mr - m).abs() < 1e-6 * m);
    let k_model = mf / cf - mr / cr;
    assert!(
        rel(k_measured, k_model) < 0.15,
        "{hz} Hz: understeer gradient {k_measured} vs bicycle model {k_model} rad/(m/s²)"
    );
    // Saturation near the lateral friction limit at static load.
    let peak_y = |axle: usize, fz: f64| {
        let t = axle_tire(&builder, axle, fz, mu);
        t.forces(0.0, t.peak_slip()[1])[1]
    };
    let a_limit = 2.0 * (peak_y(0, wf) + peak_y(1, wr)) / m;
    assert!(
        rel(max_lateral, a_limit) < 0.15,
        "{hz} Hz: lateral acceleration saturates at {max_lateral} m/s², limit {a_limit}"
    );
    // And so near μ·g, the closed form: the road's μ is the tires' peak friction both ways.
    let mu_g = mu * G;
    assert!(
        rel(max_lateral, mu_g) < 0.15,
        "{hz} Hz: lateral acceleration saturates at {max_lateral} m/s², μ·g {mu_g}"
    );
    println!(
        "{hz} Hz: K {:.3} of the model, saturation {:.3} of the limit, {:.3} of μ·g",
        k_measured / k_model,
        max_lateral / a_limit,
        max_lateral / mu_g
    );
    (k_measured, max_lateral)
}

/// The front suspension's compliance steer and roll steer add their closed-form understeer
/// to the cornering car's (on the 100 m circle, below 0.3 g):
/// - compliance steer `c` (rad/N) steers each front wheel out of the turn by `c·F_y`, and the
///   front axle carries `m_f·a_y`, so the driver's gradient grows by `c·m_f/2`;
/// - bump steer `b` (rad/m) steers the axle out of the turn by `b·(x_outer − x_inner)/2`, and
///   with the lateral forces at the ground the body rolls by `φ = m·h·a_y/(K_φ − m·g·h)` on the
///   springs and bars (`K_φ = Σ t²·(k/2 + k_bar)`), so the half travel difference is `t·φ/2`
///   and the gradient grows by `b·t·m·h/(2·(K_φ − m·g·h))`.
///
/// The toe and the travel within 2 % of their closed forms, the gradients' growth within 5 %,
/// and the compliance steer's growth at 30 Hz within 2 % of 60 Hz's (measured 2026-11-29:
/// compliance 1.075e-3 and 1.074e-3 at 60 and 30 Hz against 1.073e-3 rad/(m/s²); the half
/// travel difference 4.314e-3 against 4.319e-3 m/(m/s²), and the bump steer's growth 8.58e-4
/// against 8.64e-4 rad/(m/s²)).
#[test]
fn compliance_and_roll_steer_add_their_understeer() {
    let base_car = cornering_car();
    let base = cornering(60.0, &base_car);
    let m = f64::from(base_car.mass);
    let wf = base_car.static_wheel_load(0);
    let mf = 2.0 * wf / GRAVITY;

    // Compliance steer: 0.17°/kN on the front wheels.
    let c = 3e-6;
    let mut compliant = base_car.clone();
    compliant.wheel.suspension.compliance_steer = c;
    let expected = c * mf / 2.0;
    let mut added_at_60 = 0.0;
    for hz in [60.0, 30.0] {
        let run = cornering(hz, &compliant);
        let added = run.k - base.k;
        if hz == 60.0 {
            added_at_60 = added;
        }
        println!(
            "compliance steer, {hz} Hz: toe {:.3e} rad/(m/s²), K {:.3e} + {added:.3e} \
             (closed form {expected:.3e})",
            run.toe, base.k
        );
        assert!(
            rel(run.toe, expected) < 0.02,
            "{hz} Hz: toe gradient {} vs c·m_f/2 {expected} rad/(m/s²)",
            run.toe
        );
        assert!(
            rel(added, expected) < 0.05,
            "{hz} Hz: understeer gradient grew by {added} vs c·m_f/2 {expected} rad/(m/s²)"
        );
        assert!(
            rel(added, added_at_60) < 0.02,
            "{hz} Hz: understeer gradient grew by {added} vs {added_at_60} rad/(m/s²) at 60 Hz"
        );
    }

    // Bump steer: 0.2 rad of toe-out per metre of compression at the front.
    let b = 0.2;
    let mut rolling = base_car.clone();
    rolling.wheel.suspension.bump_toe_out = b;
    let run = cornering(60.0, &rolling);
    let t = f64::from(base_car.track);
    let springs = 2.0 * (base_car.wheel.suspension.stiffness / 2.0) * t * t
        + (base_car.anti_roll_bars[0] + base_car.anti_roll_bars[1]) * t * t;
    let h = f64::from(car_rest_height(&base_car) + base_car.center_of_mass.y);
    let roll = m * h / (springs - m * GRAVITY * h);
    let travel = t * roll / 2.0;
    let added = run.k - base.k;
    println!(
        "bump steer: half travel difference {:.3e} m/(m/s²) (closed form {travel:.3e}), toe \
         {:.3e}, K {:.3e} + {added:.3e} (closed form {:.3e})",
        run.roll_travel,
        run.toe,
        base.k,
        b * travel
    );
    assert!(
        rel(run.roll_travel, travel) < 0.02,
        "half travel difference {} vs t·φ/2 {travel} m/(m/s²)",
        run.roll_travel
    );
    assert!(
        rel(run.toe, b * run.roll_travel) < 0.01,
        "toe gradient {} vs b·(x_o − x_i)/2 {} rad/(m/s²)",
        run.toe,
        b * run.roll_travel
    );
    assert!(
        rel(added, b * travel) < 0.05,
        "understeer gradient grew by {added} vs b·t·φ/2 {} rad/(m/s²)",
        b * travel
    );
}

/// Roll camber, on the cornering car with the published camber terms on its tires
/// (`MfCamber::passenger_205_60_r15`), on the 100 m circle below 0.3 g. With no camber gain
/// each wheel leans with the body, which rolls out of the turn by `φ' = (x_o − x_i)/t` per
/// m/s² (`x` the travels, `t` the track); each front tire then pushes `K_yγ·φ` out of it
/// (`K_yγ = F_z·(p_ky6 + p_ky7·dfz)`), which its axle (cornering stiffness `C_f`) makes up
/// with slip, `Δα_f = 2·K_yγ·φ/C_f`. A front camber gain of `−2/t`
/// keeps the front wheels upright, so the driver's gradient falls by `2·|K_yγ|·φ'/C_f`
/// (the rear's lean is the same in both runs). Front inclinations within 0.5 % of `φ'` and of
/// 0 (relative to `φ'`), the gradient's fall within 5 % of its closed form and at 30 Hz within
/// 0.5 % of 60 Hz's (measured 2026-11-29: inclination −5.746e-3 against a roll of 5.752e-3
/// rad/(m/s²), 5.6e-6 with the gain; the fall 4.117e-4 at 60 Hz and 4.114e-4 at 30 Hz against
/// 4.267e-4 rad/(m/s²), 3.5 % under).
#[test]
fn roll_camber_adds_the_understeer_of_its_thrust() {
    let camber = MfCamber::passenger_205_60_r15();
    let mut leaning = cornering_car();
    for wheel in [&mut leaning.wheel, leaning.rear_wheel.as_mut().unwrap()] {
        let mut tire = (*wheel.tire).clone();
        let TireModel::MagicFormula(mf) = &mut tire.model else {
            unreachable!("the default tire is a Magic Formula tire")
        };
        mf.camber = camber;
        wheel.tire = std::sync::Arc::new(tire);
    }
    let t = f64::from(leaning.track);
    let mut upright_car = leaning.clone();
    upright_car.wheel.suspension.camber_gain = -2.0 / t;

    let mu = f64::from(CORNERING_MU);
    let wf = leaning.static_wheel_load(0);
    let TireModel::MagicFormula(mf) = leaning.wheel.tire.model else {
        unreachable!()
    };
    let dfz = (wf - mf.fz0) / mf.fz0;
    let camber_stiffness = wf * (camber.p_ky6 + camber.p_ky7 * dfz);
    let cf = 2.0 * axle_tire(&leaning, 0, wf, mu).stiffness()[1];
    let mut fallen_at_60 = 0.0;
    for hz in [60.0, 30.0] {
        let lean = cornering(hz, &leaning);
        let upright = cornering(hz, &upright_car);
        let roll = 2.0 * lean.roll_travel / t;
        let expected = 2.0 * camber_stiffness.abs() * roll / cf;
        let fallen = lean.k - upright.k;
        if hz == 60.0 {
            fallen_at_60 = fallen;
        }
        println!(
            "roll camber, {hz} Hz: roll {roll:.4e} rad/(m/s²), front inclination {:.4e} \
             leaning, {:.4e} upright; K {:.4e} leaning, {:.4e} upright, fall {fallen:.4e} \
             (closed form {expected:.4e})",
            lean.camber, upright.camber, lean.k, upright.k
        );
        assert!(
            rel(-lean.camber, roll) < 0.005,
            "{hz} Hz: front inclination gradient {} vs the body's roll {roll} rad/(m/s²)",
            lean.camber
        );
        assert!(
            upright.camber.abs() < 0.005 * roll,
            "{hz} Hz: front inclination gradient {} with the gain vs 0 (roll {roll} rad/(m/s²))",
            upright.camber
        );
        assert!(
            rel(fallen, expected) < 0.05,
            "{hz} Hz: understeer gradient fell by {fallen} vs 2·|K_yγ|·φ'/C_f {expected} \
             rad/(m/s²)"
        );
        assert!(
            rel(fallen, fallen_at_60) < 0.005,
            "{hz} Hz: understeer gradient fell by {fallen} vs {fallen_at_60} rad/(m/s²) at 60 Hz"
        );
    }
}

/// Caster (`Suspension::caster`, 7° on the default car's front axle), against the geometry
/// of a wheel turned about a kingpin whose top leans back by `ν`:
/// - at rest, steered to full left lock, each front wheel's axle (its drawn `Transform`'s X)
///   rises on its right by `sin ν·sin δ`, as turning the axle about the axis
///   `(0, cos ν, sin ν)` by the wheel's angle `δ` gives it (1e-5, f32), and its inclination to
///   the ground (`WheelState::camber`) is `asin(−sin ν·sin δ)` beyond the same car's without
///   caster (1e-9): both wheels lean into the turn;
/// - turning left at 10 m/s on tires with the published trail terms, the moment on the
///   steered wheels about their kingpins (`VehicleTelemetry::steering_torque`) is their
///   aligning moments plus `−R·tan ν·F_y` of each (1e-9 relative), turning them back to the
///   right; the tires' own aligning moment is unchanged by the caster, and so is the car's
///   path (its tires have no camber terms).
#[test]
fn caster_leans_the_steered_wheels_into_the_turn_and_adds_its_trail_to_the_steering() {
    let nu: f64 = 7f64.to_radians();
    let plain = {
        let mut car = CarBuilder::default();
        let mut tire = (*car.wheel.tire).clone();
        let TireModel::MagicFormula(mf) = &mut tire.model else {
            panic!("the default car runs on Magic Formula tires")
        };
        mf.aligning = MfAligning::passenger_205_60_r15();
        let tire = std::sync::Arc::new(tire);
        let mut rear = car.wheel.clone();
        rear.tire = tire.clone();
        car.wheel.tire = tire;
        car.rear_wheel = Some(rear);
        car
    };
    let mut castered = plain.clone();
    castered.wheel.suspension.caster = nu;

    // The car set down on μ 0.9 and settled for half a second at 60 Hz.
    let settled = |car: &CarBuilder| {
        let mut app = create_app(60.0);
        spawn_flat_ground(&mut app, 0.9);
        let e = spawn_at_ride_height(&mut app, car);
        tick(&mut app, 30);
        (app, e)
    };

    // At rest, at full left lock.
    let at_lock = |car: &CarBuilder| {
        let (mut app, e) = settled(car);
        controls(&mut app, e, |c| c.steering = -1.0);
        tick(&mut app, 60);
        let front: Vec<Entity> = wheels(&mut app, e)
            .into_iter()
            .filter(|w| get::<WheelMount>(&app, *w).steered)
            .collect();
        front
            .iter()
            .map(|w| {
                let state = get::<WheelState>(&app, *w);
                let axle = get::<Transform>(&app, *w).rotation * Vec3::X;
                (
                    get::<WheelMount>(&app, *w).side,
                    state.steer_angle,
                    state.camber,
                    axle,
                )
            })
            .collect::<Vec<_>>()
    };
    let (without, with) = (at_lock(&plain), at_lock(&castered));
    for ((side, delta, camber, _), (_, delta_c, camber_c, axle)) in without.iter().zip(&with) {
        assert!(
            (delta - delta_c).abs() < 1e-12,
            "{side:?}: steer {delta} vs {delta_c}"
        );
        let k = Vec3::new(0.0, nu.cos() as f32, nu.sin() as f32);
        let turned = Quat::from_axis_angle(k, *delta_c as f32) * Vec3::X;
        let lean = camber_c - camber;
        let expected = (-nu.sin() * delta_c.sin()).asin();
        println!(
            "{side:?} wheel at {delta_c:.4} rad of steer: axle rises {:.5} on its right \
             (kingpin geometry {:.5}); inclination {lean:.6} rad beyond the car without caster \
             (closed form {expected:.6})",
            axle.y, turned.y
        );
        assert!(
            (axle.y - turned.y).abs() < 1e-5,
            "{side:?}: axle {axle} vs {turned}"
        );
        assert!(
            (lean - expected).abs() < 1e-9,
            "{side:?}: lean {lean} vs {expected} rad"
        );
        assert!(lean < -0.03, "{side:?}: leans into the left turn");
    }

    // Turning left at 10 m/s.
    let turning = |car: &CarBuilder| {
        let (mut app, e) = settled(car);
        flying_start(&mut app, e, 10.0);
        controls(&mut app, e, |c| c.steering = -0.3);
        tick(&mut app, 120);
        let mechanical: f64 = wheels(&mut app, e)
            .into_iter()
            .filter(|w| get::<WheelMount>(&app, *w).steered)
            .map(|w| {
                let radius = get::<Wheel>(&app, w).radius;
                -radius * nu.tan() * get::<WheelSensors>(&app, w).force[1]
            })
            .sum();
        let t = get::<VehicleTelemetry>(&app, e);
        (
            t.aligning_torque,
            t.steering_torque,
            mechanical,
            position(&app, e),
        )
    };
    let (aligning, steering, _, path) = turning(&plain);
    assert_eq!(
        aligning, steering,
        "without caster the kingpin feels the tires' moment"
    );
    let (aligning_c, steering_c, mechanical, path_c) = turning(&castered);
    println!(
        "turning left at 10 m/s: aligning moment {aligning_c:.2} N·m, about the kingpins \
         {steering_c:.2} N·m (caster trail {mechanical:.2} N·m)"
    );
    assert!(rel(steering_c, aligning_c + mechanical) < 1e-9);
    assert!(
        aligning_c < 0.0 && mechanical < 0.0,
        "turning the wheels back to the right"
    );
    assert_eq!(aligning, aligning_c, "the tires' own moment");
    assert_eq!(path, path_c, "the same path");
}

/// The tangent of the slip angle at which `tire` pushes `fy` (N, ≥ 0 and below its peak)
/// sideways.
fn tan_slip_for(tire: &LoadedTire, fy: f64) -> f64 {
    bisect(
        |t| fy - tire.forces(0.0, t)[1].abs(),
        0.0,
        tire.peak_slip()[1],
    )
}

/// Pneumatic trail, on the cornering car (`cornering_car`) with a trail `t₀` of 3 cm on all
/// four tires, on the 100 m circle below 0.3 g at 30 and 60 Hz. Each tire's side force then
/// acts `t = t₀·trail_factor` behind its contact centre (the aligning moment `−t·F_y`), which
/// shortens the front axle's lever about the centre of mass and lengthens the rear's: in a
/// steady turn `F_yf·(a − t_f) = F_yr·(b + t_r)`, so the front axle carries more of `m·a_y`
/// and the driver steers more. Closed form: per axle, the side force from that balance
/// (solved with each axle's trail at its own force, the tires' `trail_factor` at the slip
/// where their curve gives it), each axle's slip from its tire's curve, and the extra steer
/// `Δα_f − Δα_r`, sampled at the speeds the circle's driver passes and fitted as the
/// measurement is. The understeer gradient grows by that fit's linear term within 0.5 %, and
/// alike at 30 and 60 Hz within 0.1 % (measured 2026-11-29: 3.0159e-4 at 60 Hz and
/// 3.0155e-4 at 30 Hz against 3.0167e-4 rad/(m/s²); at vanishing lateral acceleration the
/// growth is `m·t₀·(1/C_f + 1/C_r)/L` = 3.38e-4, and the trail's shrinking with the slip
/// brings the fit below it).
#[test]
fn pneumatic_trail_adds_the_understeer_of_its_aligning_moment() {
    let t0 = 0.03;
    let mut trailing = cornering_car();
    for wheel in [&mut trailing.wheel, trailing.rear_wheel.as_mut().unwrap()] {
        let mut tire = (*wheel.tire).clone();
        tire.pneumatic_trail = t0;
        wheel.tire = std::sync::Arc::new(tire);
    }
    let grown = trail_adds_its_understeer("3 cm of trail", &trailing, |tire, _, tan_alpha| {
        t0 * tire.trail_factor(0.0, tan_alpha)
    });
    // Measured 2026-11-29: 3.0159e-4 (60 Hz) and 3.0155e-4 (30 Hz) against 3.0167e-4.
    assert!(grown > 2.9e-4 && grown < 3.1e-4, "{grown}");
}

/// The same with the trail the published 205/60R15 set gives itself
/// (`MfAligning::passenger_205_60_r15`: 31.3 mm at zero slip and 4 kN, growing with the
/// load and collapsing with the slip by the Magic Formula's own curve) on the cornering car's
/// four tires (the rear ones with their stiffer cornering). Closed form as above, each axle's
/// trail from `MagicFormula::pneumatic_trail` at its static load and the slip of its share of
/// the side force (that curve itself is checked against the book's equations in the tire
/// crate's `aligning_moment_follows_the_published_trail_terms`). Within 0.5 %, rates within
/// 0.1 % (measured 2026-11-29: 2.8283e-4 at 60 Hz and 2.8292e-4 at 30 Hz against 2.8348e-4
/// rad/(m/s²); the Magic Formula's trail holds up with the slip longer than the brush law, so
/// the fit nearly equals the zero-slip figure, 2.8287e-4).
#[test]
fn published_trail_terms_add_the_understeer_of_their_aligning_moment() {
    let mut trailing = cornering_car();
    for wheel in [&mut trailing.wheel, trailing.rear_wheel.as_mut().unwrap()] {
        let mut tire = (*wheel.tire).clone();
        let TireModel::MagicFormula(mf) = &mut tire.model else {
            panic!("the cornering car runs on Magic Formula tires")
        };
        mf.aligning = MfAligning::passenger_205_60_r15();
        wheel.tire = std::sync::Arc::new(tire);
    }
    let models = [0, 1].map(|axle| trailing.wheel_spec(axle).tire.model);
    let grown = trail_adds_its_understeer(
        "the published trail terms",
        &trailing,
        |tire, axle, tan_alpha| {
            models[axle]
                .pneumatic_trail(tire, f64::from(CORNERING_MU), 0.0, tan_alpha)
                .unwrap()
        },
    );
    assert!(grown > 2.0e-4, "{grown}");
}

/// Runs the cornering test on `trailing` (the cornering car with trailed tires) and on the
/// plain cornering car at 60 and 30 Hz, and checks that the understeer gradient grows by what
/// the axles' moment balance `F_yf·(a − t_f) = F_yr·(b + t_r)` gives, with
/// `trail(tire, axle, tan_alpha)` one tire's trail (m) on `axle` evaluated as `tire` (its static
/// load on the test's road) at slip `tan_alpha`: within 0.5 %, and the two rates within 0.1 %.
/// Returns the growth at 60 Hz (rad/(m/s²)).
fn trail_adds_its_understeer(
    label: &str,
    trailing: &CarBuilder,
    trail: impl Fn(&LoadedTire, usize, f64) -> f64,
) -> f64 {
    let plain = cornering_car();

    // The closed form.
    let mu = f64::from(CORNERING_MU);
    let m = f64::from(plain.mass);
    let wheelbase = f64::from(plain.rear_axle - plain.front_axle);
    let loads = [0, 1].map(|axle| plain.static_wheel_load(axle));
    let b = wheelbase * 2.0 * loads[0] / (m * GRAVITY);
    let tires = [0, 1].map(|axle| axle_tire(&plain, axle, loads[axle], mu));
    // Trail of one tire of `axle` pushing `fy` (N).
    let trail_at = |axle: usize, fy: f64| trail(&tires[axle], axle, tan_slip_for(&tires[axle], fy));
    let extra_steer = |a_y: f64| {
        let total = m * a_y;
        let plain_front = total * b / wheelbase;
        let mut front = plain_front;
        for _ in 0..20 {
            let [tf, tr] = [trail_at(0, front / 2.0), trail_at(1, (total - front) / 2.0)];
            front = total * (b + tr) / (wheelbase - tf + tr);
        }
        let slip = |axle: usize, fy: f64| tan_slip_for(&tires[axle], fy / 2.0).atan();
        (slip(0, front) - slip(0, plain_front))
            - (slip(1, total - front) - slip(1, total - plain_front))
    };
    // The driver's samples: every 0.5 s of a speed rising at 0.12 m/s² from 6.5 m/s.
    let samples: Vec<(f64, f64)> = (0..)
        .map(|i| 6.5 + 0.06 * f64::from(i))
        .map(|v| v * v / 100.0)
        .take_while(|&a_y| a_y < 0.3 * G)
        .map(|a_y| (a_y, extra_steer(a_y)))
        .collect();
    let expected = fit_linear_cubic(&samples)[1];
    let stiffness = |axle: usize| 2.0 * tires[axle].stiffness()[1];
    let t0 = [0, 1].map(|axle| trail(&tires[axle], axle, 0.0));
    let linear = m * (t0[0] / stiffness(0) + t0[1] / stiffness(1)) / wheelbase;

    let mut grown_at_60 = 0.0;
    for hz in [60.0, 30.0] {
        let grown = cornering(hz, trailing).k - cornering(hz, &plain).k;
        if hz == 60.0 {
            grown_at_60 = grown;
        }
        println!(
            "{label}, {hz} Hz: understeer gradient grew by {grown:.4e} rad/(m/s²) \
             (closed form {expected:.4e}; m·(t_f/C_f + t_r/C_r)/L at zero slip {linear:.4e})"
        );
        assert!(
            rel(grown, expected) < 0.005,
            "{label}, {hz} Hz: understeer gradient grew by {grown} vs {expected} rad/(m/s²)"
        );
        assert!(
            rel(grown, grown_at_60) < 0.001,
            "{label}, {hz} Hz: understeer gradient grew by {grown} vs {grown_at_60} rad/(m/s²) \
             at 60 Hz"
        );
    }
    grown_at_60
}

/// What one sine-with-dwell run measured: the first yaw-rate peak after the steering
/// reverses, the yaw rate 1 s and 1.75 s after the steering ends (rad/s), and the centre of
/// mass's lateral displacement 1.07 s after it begins (m).
struct SineWithDwell {
    peak: f64,
    after_1s: f64,
    after_1_75s: f64,
    displacement: f64,
}

/// The default car coasting at 80 km/h on μ 0.9 through FMVSS No. 126's sine with dwell at
/// `hz`: the steering input follows a 0.7 Hz sine of amplitude `amplitude` (−1..1 of full
/// lock) to the left, holds its second peak for 0.5 s, and ends its last quarter period.
fn sine_with_dwell(hz: f64, amplitude: f64, esc: Option<StabilityControl>) -> SineWithDwell {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    let mut builder = CarBuilder::default();
    builder.brakes.stability_control = esc;
    let car = spawn_at_ride_height(&mut app, &builder);
    tick(&mut app, hz as usize);
    flying_start(&mut app, car, 80.0 / 3.6);
    let frequency = 0.7;
    let period = 1.0 / frequency;
    let end = period + 0.5;
    let steer = |t: f64| {
        let phase = |t: f64| (core::f64::consts::TAU * frequency * t).sin();
        if t < 0.75 * period {
            phase(t)
        } else if t < 0.75 * period + 0.5 {
            -1.0
        } else if t < end {
            phase(t - 0.5)
        } else {
            0.0
        }
    };
    let start = position(&app, car);
    let heading = get::<Transform>(&app, car).rotation * Vec3::NEG_Z;
    let left = Vec3::Y.cross(heading);
    let (mut peak, mut after_1s, mut after_1_75s, mut displacement) = (0.0f64, None, None, None);
    for step in 0..((end + 2.0) * hz) as usize {
        let t = step as f64 / hz;
        // Positive steering turns right: the sine's first half turns left.
        controls(&mut app, car, |c| c.steering = -amplitude * steer(t));
        tick(&mut app, 1);
        let t = t + 1.0 / hz;
        let yaw_rate = get::<VehicleTelemetry>(&app, car).yaw_rate;
        if t > 0.5 * period && t < end {
            peak = peak.max(yaw_rate.abs());
        }
        if displacement.is_none() && t >= 1.07 {
            displacement = Some(f64::from((position(&app, car) - start).dot(left)));
        }
        if after_1s.is_none() && t >= end + 1.0 {
            after_1s = Some(yaw_rate);
        }
        if after_1_75s.is_none() && t >= end + 1.75 {
            after_1_75s = Some(yaw_rate);
        }
    }
    SineWithDwell {
        peak,
        after_1s: after_1s.unwrap(),
        after_1_75s: after_1_75s.unwrap(),
        displacement: displacement.unwrap(),
    }
}

/// The electronic stability control (`Brakes::stability_control`) against the US safety
/// standard's test of it, FMVSS No. 126 (49 CFR 571.126): the sine with dwell at 80 km/h,
/// steering amplitudes 5 and 6.5 times `A`, the steer of a 0.3 g steady turn at that speed
/// (here from the neutral bicycle model, `A = L·a_y/v²` of road-wheel angle). The standard's
/// criteria: 1 s after the steering ends the yaw rate is at most 35 % of its first peak after
/// the steering reversed, 1.75 s after at most 20 %, and 1.07 s after the steering began the
/// car has moved at least 1.83 m sideways. Without the control the default car spins at
/// 6.5·A (asserted: its yaw rate still above 35 % of the peak 1 s after; measured 2026-11-29
/// 56–59 % at 15 to 120 Hz); with the default control it passes at 15, 30, 60 and 120 Hz
/// (measured: 0 % of the peak after 1 s and after 1.75 s, the peak 0.55 rad/s against 0.63–0.65
/// without, 2.46–2.56 m aside after 1.07 s; at 5·A, where the car recovers by itself, the
/// control barely acts: peaks within 1 %).
#[test]
fn stability_control_passes_the_sine_with_dwell_test() {
    let builder = CarBuilder::default();
    let v = 80.0 / 3.6;
    let wheelbase = f64::from(builder.rear_axle - builder.front_axle);
    let a = wheelbase * 0.3 * G / (v * v) / builder.steering.max_angle;
    for hz in [15.0, 30.0, 60.0, 120.0] {
        for multiple in [5.0, 6.5] {
            let amplitude = multiple * a;
            let free = sine_with_dwell(hz, amplitude, None);
            let held = sine_with_dwell(hz, amplitude, Some(StabilityControl::default()));
            for (name, run) in [("without", &free), ("with", &held)] {
                println!(
                    "{hz} Hz, {multiple}·A ({amplitude:.3} of full lock), {name} ESC: peak yaw \
                     rate {:.3} rad/s, {:.0} % after 1 s, {:.0} % after 1.75 s; {:.2} m aside \
                     after 1.07 s",
                    run.peak,
                    100.0 * run.after_1s.abs() / run.peak,
                    100.0 * run.after_1_75s.abs() / run.peak,
                    run.displacement
                );
            }
            if multiple == 6.5 {
                assert!(
                    free.after_1s.abs() > 0.35 * free.peak,
                    "{hz} Hz: the car without ESC recovered by itself ({} of {} rad/s)",
                    free.after_1s,
                    free.peak
                );
            }
            assert!(
                held.after_1s.abs() <= 0.35 * held.peak
                    && held.after_1_75s.abs() <= 0.20 * held.peak,
                "{hz} Hz, {multiple}·A: yaw rate {} and {} rad/s after 1 and 1.75 s, peak {}",
                held.after_1s,
                held.after_1_75s,
                held.peak
            );
            assert!(
                held.displacement >= 1.83,
                "{hz} Hz, {multiple}·A: {} m aside after 1.07 s",
                held.displacement
            );
        }
    }
}

/// What one power-slide run measured: the largest body slip angle (rad) and share of the drive
/// the stability control took, and the yaw rate (rad/s) and forward speed (m/s) at its end.
struct PowerSlide {
    sideslip: f64,
    cut: f64,
    yaw_rate: f64,
    speed: f64,
}

/// The default car without its traction control, in first gear on μ 0.3, turning right at
/// 10 m/s on a tenth of full lock, floored for 3 s at `hz`, with the stability
/// control `esc`.
fn power_slide(hz: f64, esc: Option<StabilityControl>) -> PowerSlide {
    power_slide_braked_by(hz, esc, None)
}

/// [`power_slide`] with the brake module `brakes` installed instead of the built-in one.
fn power_slide_braked_by(
    hz: f64,
    esc: Option<StabilityControl>,
    brakes: Option<VehicleModule>,
) -> PowerSlide {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.3);
    let mut builder = CarBuilder::default();
    builder.brakes.traction_control = None;
    builder.brakes.stability_control = esc;
    let car = spawn_at_ride_height(&mut app, &builder);
    if let Some(brakes) = brakes {
        app.world_mut()
            .entity_mut(car)
            .install_module(brakes)
            .expect("a car hosts a brake module");
    }
    tick(&mut app, hz as usize);
    flying_start(&mut app, car, 10.0);
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.steering = 0.1;
    });
    tick(&mut app, (2.0 * hz) as usize);
    controls(&mut app, car, |c| c.throttle = 1.0);
    let (mut sideslip, mut cut) = (0.0f64, 0.0f64);
    for _ in 0..(3.0 * hz) as usize {
        tick(&mut app, 1);
        let t = get::<VehicleTelemetry>(&app, car);
        sideslip = sideslip.max(t.lateral_speed.atan2(t.forward_speed.abs()).abs());
        cut = cut.max(t.stability_cut);
    }
    let t = get::<VehicleTelemetry>(&app, car);
    PowerSlide {
        sideslip,
        cut,
        yaw_rate: t.yaw_rate,
        speed: t.forward_speed,
    }
}

/// The stability control's drive cut and side-slip watch (`StabilityControl::drive_cut_band`,
/// `sideslip_limit`, `sideslip_gain`: the standard's ESC also estimates its side slip and
/// modifies the engine's torque) in a power slide: the rear-drive default car, without
/// traction control, floored in first gear in a turn on μ 0.3, at 15, 30, 60 and 120 Hz.
/// Without ESC it spins (body slip past 1 rad). Braking wheels on the yaw rate alone, the
/// control cannot catch it while the rear tires spin: the car slides to 0.46–0.50 rad
/// (asserted above 0.25). With the drive cut and the side-slip watch it holds the slide
/// within 0.15 rad (asserted below twice its 0.1 rad limit, the rates within 2 %), and keeps
/// turning right. Measured 2026-11-29 (with the body answering the tires' side forces within
/// the step): 0.1476–0.1491 rad, up to 0.75–0.89 of the drive taken, the car leaving at
/// 8.3–8.4 m/s yawing at −0.216 to −0.218 rad/s (before: 0.147–0.148 rad; braking alone
/// 0.29–0.46). Since 2026-12-02 the tires' patch dampers keep each tire within its friction
/// ellipse (`trail_braking_keeps_each_tire_within_its_friction_ellipse`): 0.1476–0.1502 rad,
/// 15 Hz the highest (the rates were within 1.5 % before, 1.7 % since). The slide starts from
/// the engine idling with the clutch open, and 15 Hz is the rate most moved by where: since
/// the idle controller holds idle itself (800 rpm, not 791; 2026-12-02) 0.1477–0.1510 rad,
/// 30 to 120 Hz within 0.6 % of each other and 15 Hz 2.3 % above them.
#[test]
fn stability_control_takes_the_drive_in_a_power_slide() {
    let mut held = Vec::new();
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let free = power_slide(hz, None);
        let braking_only = power_slide(
            hz,
            Some(StabilityControl {
                drive_cut_band: 0.0,
                sideslip_gain: 0.0,
                ..default()
            }),
        );
        let esc = power_slide(hz, Some(StabilityControl::default()));
        for (name, run) in [
            ("without ESC", &free),
            ("braking on the yaw rate alone", &braking_only),
            ("with ESC", &esc),
        ] {
            println!(
                "{hz} Hz, {name}: body slip up to {:.3} rad, up to {:.2} of the drive taken; \
                 at the end {:.2} m/s, yaw rate {:.3} rad/s",
                run.sideslip, run.cut, run.speed, run.yaw_rate
            );
        }
        assert!(
            free.sideslip > 1.0,
            "{hz} Hz: {} rad without ESC",
            free.sideslip
        );
        assert!(
            braking_only.sideslip > 0.25 && braking_only.cut == 0.0,
            "{hz} Hz: {} rad braking on the yaw rate alone",
            braking_only.sideslip
        );
        assert!(
            esc.sideslip < 0.2 && esc.cut > 0.3 && esc.yaw_rate < -0.1 && esc.speed > 5.0,
            "{hz} Hz: body slip {} rad, cut {}, yaw rate {} rad/s, {} m/s with ESC",
            esc.sideslip,
            esc.cut,
            esc.yaw_rate,
            esc.speed
        );
        held.push(esc.sideslip);
    }
    // 30 to 120 Hz within 1.5 %, 15 Hz within 3 % of them.
    let (low, high) = held[1..]
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), s| (l.min(*s), h.max(*s)));
    assert!(
        high < 1.015 * low && held[0] < 1.03 * low && held[0] > low / 1.03,
        "body slip {held:?} at 15, 30, 60 and 120 Hz"
    );
}

/// Test-side brake module: the built-in brakes, handed the stability control's demand or not
/// (`keep_stability`), recording the demand of every step and the drive cut it carried.
struct HandedOnBrakes {
    inner: bevy_vehicle_physics::chassis::modules::BuiltinBrakes,
    keep_stability: bool,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Option<StabilityDemand>>>>,
}

impl BrakeModule for HandedOnBrakes {
    fn begin_step(&mut self, ctx: &ModuleContext) {
        self.seen.lock().unwrap().push(ctx.stability);
        let mut handed = *ctx;
        if !self.keep_stability {
            handed.stability = None;
        }
        self.inner.begin_step(&handed);
    }

    fn begin_substep(&mut self, ctx: &ModuleContext) -> bool {
        self.inner.begin_substep(ctx)
    }

    fn every_substep(&self) -> bool {
        self.inner.every_substep()
    }

    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]) {
        self.inner.wheel_torques(ctx, torques);
    }

    fn every_stage(&self) -> bool {
        self.inner.every_stage()
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// A brake module of a user's own is handed the stability control's demand of each step
/// (`ModuleContext::stability`), decided once before any module runs. The built-in brakes
/// wrapped in such a module reproduce the built-in run of the power slide bit for bit at 30
/// and 60 Hz, and the demands they are handed brake one wheel at a time, the drive cut they
/// carry being the one the telemetry reports. Wrapped brakes that drop the demand keep the
/// drive cut (it is not the brake module's) but lose the braking, and the car spins as it
/// does without the control: the cut alone does not catch it.
#[test]
fn a_brake_module_of_your_own_is_handed_the_stability_demand() {
    for hz in [30.0, 60.0] {
        let builtin = power_slide(hz, Some(StabilityControl::default()));
        let wrapped = |keep_stability: bool| {
            let seen = std::sync::Arc::default();
            let module = HandedOnBrakes {
                inner: bevy_vehicle_physics::chassis::modules::BuiltinBrakes::default(),
                keep_stability,
                seen: std::sync::Arc::clone(&seen),
            };
            let run = power_slide_braked_by(
                hz,
                Some(StabilityControl::default()),
                Some(VehicleModule::brake(module)),
            );
            let seen = std::mem::take(&mut *seen.lock().unwrap());
            (run, seen)
        };
        let (kept, demands) = wrapped(true);
        let (dropped, _) = wrapped(false);
        println!(
            "{hz} Hz: body slip up to {:.4} rad built in, {:.4} wrapped, {:.4} without the \
             braking; {} of {} steps with a demand",
            builtin.sideslip,
            kept.sideslip,
            dropped.sideslip,
            demands.iter().flatten().count(),
            demands.len()
        );
        assert_eq!(
            (kept.sideslip, kept.cut, kept.yaw_rate, kept.speed),
            (
                builtin.sideslip,
                builtin.cut,
                builtin.yaw_rate,
                builtin.speed
            ),
            "{hz} Hz: the wrapped built-in brakes left the built-in run"
        );
        let braking: Vec<_> = demands
            .iter()
            .flatten()
            .filter(|d| d.brake_torque > 0.0)
            .collect();
        assert!(
            braking.len() > 10 && braking.iter().all(|d| d.wheel.is_some()),
            "{hz} Hz: {} braking demands",
            braking.len()
        );
        // The power slide's telemetry covers the last 3 s, floored.
        let floored = &demands[demands.len() - (3.0 * hz) as usize..];
        let most_cut = floored
            .iter()
            .flatten()
            .map(|d| d.drive_cut)
            .fold(0.0, f64::max);
        assert_eq!(most_cut, kept.cut, "{hz} Hz: the demands' drive cut");
        assert!(
            dropped.cut > 0.3 && dropped.sideslip > 1.0,
            "{hz} Hz: without the braking, body slip {} rad and cut {}",
            dropped.sideslip,
            dropped.cut
        );
    }
}

/// A car coasting at 8 m/s on wheels rolling with the road, lifted 0.6 m and let fall, lands
/// without a jolt, at 30, 60 and 120 Hz: in the air every tire reports no slip and no force,
/// and from the lift to 1 s after the landing its forward speed only falls (rolling resistance
/// and drag are all that act on it), by at most 0.02 m/s in any 1/60 s.
///
/// A tire off the ground was handed no ground velocity, so its slip state took the spinning
/// wheel for a wheel spinning on the spot and ran up to its limit (2.09 reported in the air);
/// on landing the tires pushed with that slip until it relaxed, and the car's speed jumped
/// from 7.93 m/s down to 7.74 and back up to 7.92 within four steps at 60 Hz. A tire off the
/// ground now keeps its patch undeflected.
#[test]
fn a_car_coasting_off_the_ground_lands_without_a_jolt() {
    let builder = CarBuilder::default();
    for hz in [30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        let car = spawn_car_at_rest(&mut app, &builder);
        tick(&mut app, (0.5 * hz) as usize);
        set::<Velocity>(&mut app, car, |v| v.linear = Vec3::new(0.0, 0.0, -8.0));
        for w in wheels(&mut app, car) {
            let mut s = state(&app, car, w);
            s[1] = 8.0 / builder.wheel.radius;
            set_state(&mut app, car, w, &s);
        }
        tick(&mut app, (0.5 * hz) as usize);
        set::<Transform>(&mut app, car, |t| t.translation.y += 0.6);
        let mut last = -velocity(&app, car).z;
        let (mut airborne, mut landed_for) = (0, 0);
        let per_step_bound = 0.02 * 60.0 / hz as f32;
        while landed_for < hz as usize {
            tick(&mut app, 1);
            let sensors: Vec<WheelSensors> = wheels(&mut app, car)
                .iter()
                .map(|w| get::<WheelSensors>(&app, *w))
                .collect();
            if sensors.iter().all(|s| s.load == 0.0) {
                airborne += 1;
                for s in &sensors {
                    assert!(
                        s.slip_ratio == 0.0 && s.slip_angle == 0.0 && s.force == [0.0; 2],
                        "{hz} Hz: a wheel in the air reports {s:?}"
                    );
                }
            } else {
                landed_for += 1;
            }
            let speed = -velocity(&app, car).z;
            assert!(
                speed <= last + 1e-4 && last - speed < per_step_bound,
                "{hz} Hz: forward speed {last} -> {speed} m/s"
            );
            last = speed;
        }
        println!("{hz} Hz: {airborne} steps in the air, {last:.4} m/s 1 s after landing");
        assert!(
            airborne as f64 > 0.2 * hz,
            "{hz} Hz: only {airborne} steps in the air"
        );
    }
}

/// Spawns `builder`'s car floating free: 50 m above the origin, out of any ground's reach,
/// with no gravity.
fn spawn_floating(app: &mut App, builder: &CarBuilder) -> Entity {
    let car = spawn_car(app, builder, Transform::from_xyz(0.0, 50.0, 0.0));
    app.world_mut().entity_mut(car).insert(GravityScale(0.0));
    car
}

/// A car floating free (no gravity, far from any ground) keeps its angular momentum when its
/// wheels' spin changes: braking its four wheels from 30 rad/s to rest pitches its nose down
/// at `Σ I_w·ω/I_pitch` = 4 × 1.2 × 30 / 1800 = 0.080 rad/s, and the engine spinning its rear
/// wheels up in first gear lifts its nose by their `Σ I_w·Δω/I_pitch` (the default car's
/// engine has no crank axis, so its own spin-up is not handed on: see
/// `a_car_in_the_air_turns_against_its_engines_spin`), each within 0.1 % at 30, 60 and 120 Hz
/// (measured 2026-12-05: 1.5e-5 to 6.4e-5, the `f32` body's rounding growing with the steps;
/// 0.5 % allowed until then). Before
/// 2026-12-04 the body did not turn at all: the brake's caliper and the drive's housings are
/// the body's, and it took only the tires' forces, none in the air.
#[test]
fn a_car_in_the_air_turns_against_its_wheels_spin() {
    let builder = CarBuilder::default();
    let pitch_inertia = f64::from(builder.inertia.x);
    let wheel_inertia = builder.wheel.inertia;
    for hz in [30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let car = spawn_floating(&mut app, &builder);
        tick(&mut app, 2);
        for w in wheels(&mut app, car) {
            let mut s = state(&app, car, w);
            s[1] = 30.0;
            set_state(&mut app, car, w, &s);
        }
        tick(&mut app, 1);
        let pitch = |app: &App| f64::from(get::<Velocity>(app, car).angular.x);
        let spin = |app: &mut App| -> f64 {
            wheels(app, car)
                .iter()
                .map(|w| wheel_inertia * state(app, car, *w)[1])
                .sum()
        };
        let (before, momentum) = (pitch(&app), spin(&mut app));
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, hz as usize);
        let braked = pitch(&app) - before;
        // A forward spin turns a wheel about its left (−X): the body takes it, nose down.
        let expected = -momentum / pitch_inertia;
        println!(
            "{hz} Hz: braked to {:.3} N·m·s, pitch {braked:.5} rad/s against {expected:.5} ({:.1e})",
            spin(&mut app),
            rel(braked, expected)
        );
        assert!(spin(&mut app).abs() < 1e-9, "{hz} Hz: wheels still turning");
        assert!(
            rel(braked, expected) < 1e-3,
            "{hz} Hz: pitch {braked} rad/s against {expected}"
        );

        controls(&mut app, car, |c| {
            c.brake = 0.0;
            c.throttle = 1.0;
            c.gear = 1;
        });
        let (before, momentum) = (pitch(&app), spin(&mut app));
        tick(&mut app, (0.5 * hz) as usize);
        let gained = spin(&mut app) - momentum;
        let lifted = pitch(&app) - before;
        // About +X: the nose up.
        let expected = gained / pitch_inertia;
        println!(
            "{hz} Hz: wheels gained {gained:.2} N·m·s, pitch {lifted:.5} rad/s against {expected:.5} ({:.1e})",
            rel(lifted, expected)
        );
        assert!(
            gained > 10.0,
            "{hz} Hz: the wheels gained only {gained} N·m·s"
        );
        assert!(
            rel(lifted, expected) < 1e-3,
            "{hz} Hz: pitch {lifted} rad/s against {expected}"
        );
    }
}

/// A car in the air turns against its engine's spin-up: revved in neutral, a longitudinal
/// crank ([`BodyAxis::Back`]) rolls the body by `−I_e·Δω_e/I_roll` about its back axis, a
/// transverse one ([`BodyAxis::Left`]) pitches it by `I_e·Δω_e/I_pitch` nose up (about +X,
/// as wheels spun up in the air do), each within 0.1 %, at 30, 60 and 120 Hz; without an
/// axis the body does not turn (below 1e-6 rad/s), nor with one by a crank speed set
/// outright. The engine's mounts take what spins its crank up; the body only took the
/// wheels' share (see `a_car_in_the_air_turns_against_its_wheels_spin`).
#[test]
fn a_car_in_the_air_turns_against_its_engines_spin() {
    for (axis, hz) in [
        (Some(BodyAxis::Back), 30.0),
        (Some(BodyAxis::Back), 60.0),
        (Some(BodyAxis::Back), 120.0),
        (Some(BodyAxis::Left), 60.0),
        (None, 60.0),
    ] {
        let mut builder = CarBuilder::default();
        let Powertrain::Combustion { engine, .. } = &mut builder.powertrain else {
            unreachable!("the default car has an engine");
        };
        engine.crank_axis = axis;
        let crank_inertia = engine.inertia;
        let mut app = create_app(hz);
        let car = spawn_floating(&mut app, &builder);
        controls(&mut app, car, |c| c.gear = 0);
        tick(&mut app, hz as usize);
        let turn = |app: &App| get::<Velocity>(app, car).angular;
        // The body's turn about the crank's axis (rad/s) and what the crank's gain of
        // angular momentum (N·m·s) gives about it.
        let about_axis = |turned: Vec3, gained: f64| match axis {
            Some(BodyAxis::Back) => (turned.z, -gained / f64::from(builder.inertia.z)),
            Some(_) => (turned.x, gained / f64::from(builder.inertia.x)),
            None => (turned.length(), 0.0),
        };
        let crank = |app: &mut App| {
            let engine = block_entity::<Engine>(app, car);
            get::<EngineSensors>(app, engine).speed
        };
        let (before, speed) = (turn(&app), crank(&mut app));
        controls(&mut app, car, |c| c.throttle = 1.0);
        tick(&mut app, (0.3 * hz) as usize);
        let gained = crank_inertia * (crank(&mut app) - speed);
        let turned = turn(&app) - before;
        let (got, expected) = about_axis(turned, gained);
        println!(
            "{axis:?} at {hz} Hz: crank gained {gained:.2} N·m·s, body {:?} rad/s against {expected:.5}",
            turned
        );
        assert!(gained > 10.0, "the crank gained only {gained} N·m·s");
        if axis.is_some() {
            assert!(
                rel(f64::from(got), expected) < 1e-3,
                "{axis:?} at {hz} Hz: {got} rad/s against {expected}"
            );
            // A crank speed set outright (a game's `set_state`) is not a spin-up the mounts
            // take: the body turns by the step's own spin-up from there, not by the jump.
            let engine = block_entity::<Engine>(&mut app, car);
            let before = turn(&app);
            let jumped = state(&app, car, engine)[0] + 100.0;
            set_state(&mut app, car, engine, &[jumped]);
            tick(&mut app, 1);
            let gained = crank_inertia * (state(&app, car, engine)[0] - jumped);
            let (got, expected) = about_axis(turn(&app) - before, gained);
            assert!(
                rel(f64::from(got), expected) < 1e-3,
                "{axis:?} at {hz} Hz: after a set crank speed {got} rad/s against {expected}"
            );
        } else {
            assert!(got < 1e-6, "no axis: the body turned at {got} rad/s");
        }
    }
}

/// A car in the air turns against its motor's spin-up too: the electric car floating free at
/// full throttle for 0.3 s, with its transverse rotor's axis given ([`BodyAxis::Left`]),
/// pitches by `I_m·Δω_m/I_pitch` more than without it (its wheels' own spin-up pitches it
/// either way), within 0.1 % at 30, 60 and 120 Hz. A motor's mounts take what spins its
/// rotor up, as an engine's take its crank's.
#[test]
fn a_car_in_the_air_turns_against_its_motors_spin() {
    for hz in [30.0, 60.0, 120.0] {
        let pitch = |axis: Option<BodyAxis>| {
            let mut builder = electric_car(DriveLayout::Front);
            let Powertrain::Electric(motor) = &mut builder.powertrain else {
                unreachable!("an electric car");
            };
            motor.rotor_axis = axis;
            let inertia = motor.inertia;
            let mut app = create_app(hz);
            let car = spawn_floating(&mut app, &builder);
            controls(&mut app, car, |c| c.gear = 1);
            tick(&mut app, hz as usize);
            let motor = block_entity::<Motor>(&mut app, car);
            let (before, speed) = (
                get::<Velocity>(&app, car).angular,
                state(&app, car, motor)[0],
            );
            controls(&mut app, car, |c| c.throttle = 1.0);
            tick(&mut app, (0.3 * hz) as usize);
            let gained = inertia * (state(&app, car, motor)[0] - speed);
            let turned = get::<Velocity>(&app, car).angular - before;
            (f64::from(turned.x), gained / f64::from(builder.inertia.x))
        };
        let (with, expected) = pitch(Some(BodyAxis::Left));
        let (without, _) = pitch(None);
        println!(
            "{hz} Hz: pitched {with:.6} rad/s with the rotor's axis, {without:.6} without; the rotor's share {expected:.6}"
        );
        assert!(
            expected > 0.01,
            "the rotor gained only {expected} rad/s of pitch"
        );
        assert!(
            rel(with - without, expected) < 1e-3,
            "{hz} Hz: {} rad/s against {expected}",
            with - without
        );
    }
}

/// A hard landing throws no shipped road vehicle back up: each dropped upright from 5 m onto
/// flat ground (μ 0.9), and onto a 0.2 m deck resting on a floor ([`spawn_held_deck`]), at
/// 15, 20, 24, 30 and 60 Hz leaves it again at under 2.5 m/s, and 5 s on rests upright at its
/// 60 Hz ride height on that ground (within 1 cm), still (below 5 cm/s).
///
/// At 15–24 Hz the landing step carries the wheels into the ground before they push, and a
/// body box low enough meets the ground too; the next step both Rapier's contact with the box
/// and the suspension ended the same fall. Measured 2026-12-05 before the suspension left
/// Rapier the part of the approach it ends: the sedans, hatchbacks and SUV left the ground
/// at 4.7–7.8 m/s below 30 Hz, the automatic sedan ended on its nose at 15 Hz and the
/// hatchback at 20 Hz, the semi truck left at 6.3 m/s at 15 Hz; now all leave at 0.8–1.9 m/s
/// and settle. On the deck at 15 Hz the wheels sank through it into the floor, found the
/// floor, and took the body's gap from the floor while the body lay on the deck: seven of the
/// ten left at 3.0–4.9 m/s at 15 Hz (the sports sedan at 3.9 at 20 Hz too), measured
/// 2026-12-05; now 0.75–1.21 m/s at 15 Hz (the body's gap counts every collider near the
/// wheels). (The tracked excavator has its own test, and the unbraked trailer rolls
/// on: see `docs/known_gaps.md`.)
#[test]
fn a_hard_landing_throws_no_shipped_road_vehicle_back_up() {
    let mut failures = Vec::new();
    for name in [
        "automatic_sedan",
        "awd_suv",
        "electric_hatchback",
        "hatchback",
        "hybrid_hatchback",
        "pickup",
        "pickup_4x4",
        "rwd_sports_sedan",
        "semi_truck",
        "tipper_6x6",
    ] {
        let d = load_vehicle(&format!("vehicles/{name}.vehicle.ron"));
        for deck in [false, true] {
            let mut rest = None;
            for hz in [60.0, 30.0, 24.0, 20.0, 15.0] {
                let mut app = create_app(hz);
                if deck {
                    spawn_held_deck(&mut app);
                } else {
                    spawn_flat_ground(&mut app, 0.9);
                }
                let Landing {
                    rebound,
                    height: y,
                    speed,
                    up,
                    ..
                } = drop_described(&mut app, &d, 5.0, (5.0 * hz) as usize);
                let rest = *rest.get_or_insert(y);
                let ground = if deck { "deck" } else { "ground" };
                println!(
                    "{name} on the {ground} at {hz} Hz: leaves it at {rebound:.2} m/s, rests at {y:.3} m, {speed:.4} m/s, up {up:.4}"
                );
                if !(rebound < 2.5 && up > 0.99 && (y - rest).abs() < 0.01 && speed < 0.05) {
                    failures.push(format!(
                        "{name} on the {ground} at {hz} Hz: rebound {rebound} m/s, at {y} m (60 Hz {rest}), {speed} m/s, up {up}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Extreme conditions stay finite: a 300 km/h straight, a 250 ms frame, a drop from 5 m and
/// driving off a ledge (both also at 15 Hz).
#[test]
fn extreme_conditions_stay_finite() {
    let finite = |app: &mut App, car: Entity| {
        let t = get::<Transform>(app, car);
        let v = velocity(app, car);
        assert!(t.translation.is_finite() && t.rotation.is_finite() && v.is_finite());
        for w in wheels(app, car) {
            let s = get::<WheelSensors>(app, w);
            assert!(
                s.speed.is_finite() && s.force.iter().all(|f| f.is_finite()),
                "{s:?}"
            );
        }
    };
    // 300 km/h on the straight, at full throttle in top gear.
    let mut app = create_app(60.0);
    spawn_flat_ground(&mut app, 0.9);
    let builder = CarBuilder::default();
    let car = spawn_at_ride_height(&mut app, &builder);
    tick(&mut app, 30);
    flying_start(&mut app, car, 300.0 / 3.6);
    controls(&mut app, car, |c| {
        c.gear = 6;
        c.throttle = 1.0;
    });
    tick(&mut app, 5 * 60);
    finite(&mut app, car);
    assert!(get::<VehicleTelemetry>(&app, car).forward_speed > 50.0);

    // A 250 ms frame (the virtual clock's maximum) in the middle of driving.
    app.insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_millis(250),
    ));
    app.update();
    app.insert_resource(bevy::time::TimeUpdateStrategy::FixedTimesteps(1));
    tick(&mut app, 60);
    finite(&mut app, car);

    // A drop from 5 m, at 60 Hz and at the longest validated step (15 Hz), where the bump
    // stops are held within the step (`Suspension::force_at_step`; without that the car still
    // bounced at 6.8 m/s after 5 s).
    let slowest = 1.0 / bevy_vehicle_physics::chassis::LONGEST_VALIDATED_STEP;
    for hz in [60.0, slowest] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, 5.0, 0.0));
        tick(&mut app, (5.0 * hz) as usize);
        finite(&mut app, car);
        let (y, v) = (position(&app, car).y, velocity(&app, car).length());
        assert!(y > 0.0 && y < 1.0, "{hz} Hz: at {y} m after the drop");
        assert!(v < 0.05, "{hz} Hz: moving at {v} m/s 5 s after the drop");
    }

    // Off a ledge: a 30 m long block, 2 m above the ground, driven off at 15 m/s in neutral,
    // at 60 Hz and at 15 Hz. The car lands nose first; then it rolls on at its ride height,
    // upright, slowing down. (At 15 Hz its wheels started inside the ground on landing, and
    // the load along its pitched axis pushed it on: it rode 0.3 m low and sped up by
    // 0.4 m/s² in neutral; see `penetration_normal`.)
    for hz in [60.0, slowest] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        app.world_mut().spawn((
            bevy_rapier3d::prelude::RigidBody::Fixed,
            bevy_rapier3d::prelude::Collider::cuboid(5.0, 1.0, 15.0),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ));
        let car = spawn_car(
            &mut app,
            &builder,
            Transform::from_xyz(0.0, 2.0 + car_rest_height(&builder), 10.0),
        );
        tick(&mut app, (0.5 * hz) as usize);
        flying_start(&mut app, car, 15.0);
        tick(&mut app, (4.0 * hz) as usize);
        finite(&mut app, car);
        assert!(
            position(&app, car).z < -20.0,
            "{hz} Hz: drove off the ledge"
        );
        assert!(
            position(&app, car).y < 1.5,
            "{hz} Hz: landed below the ledge"
        );
        let landed = velocity(&app, car).length();
        tick(&mut app, (4.0 * hz) as usize);
        finite(&mut app, car);
        let (speed, height) = (velocity(&app, car).length(), position(&app, car).y);
        let up = get::<Transform>(&app, car).rotation * Vec3::Y;
        assert!(
            speed < landed,
            "{hz} Hz: sped up from {landed} to {speed} m/s in neutral"
        );
        assert!(
            (height - car_rest_height(&builder)).abs() < 0.05 && up.y > 0.99,
            "{hz} Hz: rides at {height} m, up {up}"
        );
    }
}

/// A car pushed sideways slides to a stop and stays there. The default car launched sideways at
/// 3 m/s on μ = 0.9, 0.3 and 0.1, at 30, 60 and 120 Hz: it slides as far as its tires'
/// lateral peak friction at their static loads allows, `v²/(2·μ_peak·g)`, within −5 / +10 %
/// (measured 0.98–1.02; `μ_peak` is 1.02–1.03·μ: the road's μ is the tires' peak at their
/// nominal load, 4000 N, and their lateral peak rises as the load falls), is at rest after
/// 10 s (below 1 mm/s), and its tires' contact patches spring back by between what their
/// carcass and what their slip state give back from where it stopped ([`tire_give_back`];
/// 10 % either way; measured 0.053-0.057, 0.015-0.016 and 0.004 m). A tire that stored its
/// whole slide as patch deflection gave it back: the car sprang back by 0.62, 1.75 and 2.2 m,
/// and on ice still moved at 0.4 m/s after 10 s (see the wheel's relaxation past the peak);
/// one that gave back all of its slip past the peak, by 0.17, 0.058 and 0.019 m (until
/// 2026-11-28, with the tires' lateral peak at 0.82 of the road's μ).
#[test]
fn a_car_slid_sideways_stops_without_springing_back() {
    let builder = CarBuilder::default();
    let v0 = 3.0;
    for mu in [0.9f32, 0.3, 0.1] {
        // The tires' lateral peak at their static loads, as a friction coefficient.
        let peak_y = |axle: usize| {
            let fz = builder.static_wheel_load(axle);
            let t = axle_tire(&builder, axle, fz, f64::from(mu));
            2.0 * t.forces(0.0, t.peak_slip()[1])[1]
        };
        let mu_peak = (peak_y(0) + peak_y(1)) / (f64::from(builder.mass) * G);
        assert!(
            (1.0..1.05).contains(&(mu_peak / f64::from(mu))),
            "μ {mu}: lateral peak {mu_peak}"
        );
        let friction = f64::from(v0 * v0) / (2.0 * mu_peak * G);
        for hz in [30.0, 60.0, 120.0] {
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, mu);
            let car = spawn_at_ride_height(&mut app, &builder);
            tick(&mut app, (hz / 2.0) as usize);
            let right = get::<Transform>(&app, car).rotation * Vec3::X;
            set::<bevy_rapier3d::prelude::Velocity>(&mut app, car, |v| v.linear = right * v0);
            let patches = wheels(&mut app, car);
            let across = |app: &App| mean_along(app, &patches, right, |s| s.contact_point);
            let start = across(&app);
            let (mut furthest, mut at) = (0.0, 0.0);
            let mut give_back = [0.0; 2];
            for _ in 0..(10.0 * hz) as usize {
                tick(&mut app, 1);
                at = across(&app) - start;
                if at > furthest {
                    furthest = at;
                    give_back = tire_give_back(&app, &patches, 1, f64::from(mu), right);
                }
            }
            let speed = velocity(&app, car).length();
            let back = furthest - at;
            let [carcass, state] = give_back;
            println!(
                "μ {mu}, {hz} Hz: slid {furthest:.3} m ({:.2} of v²/(2μg), {:.2} of \
                 v²/(2·μ_peak·g)), sprang back {back:.4} m (carcass {carcass:.4} m, slip state \
                 {state:.4} m), speed {speed:.5} m/s",
                furthest * 2.0 * f64::from(mu) * G / f64::from(v0 * v0),
                furthest / friction,
            );
            assert!(
                (0.95..1.1).contains(&(furthest / friction)),
                "μ {mu}, {hz} Hz: slid {furthest} m against {friction} m"
            );
            assert!(
                (0.9 * carcass..1.1 * state).contains(&back),
                "μ {mu}, {hz} Hz: sprang back {back} m, tires give back {carcass}-{state} m"
            );
            assert!(speed < 1e-3, "μ {mu}, {hz} Hz: still moving at {speed} m/s");
        }
    }
}

/// Trail braking: the default car with the built-in ABS turning at 0.7·μ·g on μ 0.3, then
/// braking at full pedal, at 15, 30, 60 and 120 Hz: each tire's force on the body (the step's
/// mean, both ways) stays within the friction ellipse through its peaks at its load,
/// `(Fx/Dx)² + (Fy/Dy)² ≤ 1` (0.5 % asserted; measured 1.0000). The patch damper
/// was capped one way at a time until 2026-12-02, and took the loaded front tire's force
/// 2.2–5.6 % past its peak (1.021 of the ellipse here at 15 Hz; found by an outside test).
#[test]
fn trail_braking_keeps_each_tire_within_its_friction_ellipse() {
    let mu = 0.3f32;
    let mut builder = CarBuilder::default();
    builder.brakes.anti_lock = Some(AntiLock::default());
    let speed = 15.0f32;
    // A steady turn at 0.7·μ·g: the bicycle's geometric steer for that radius.
    let radius = f64::from(speed * speed) / (0.7 * f64::from(mu) * G);
    let wheelbase = f64::from(builder.rear_axle - builder.front_axle);
    let steering = wheelbase / radius / builder.steering.max_angle;
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, mu);
        let car = spawn_at_ride_height(&mut app, &builder);
        tick(&mut app, hz as usize);
        flying_start(&mut app, car, speed);
        controls(&mut app, car, |c| c.steering = steering);
        tick(&mut app, (2.5 * hz) as usize);
        controls(&mut app, car, |c| c.brake = 1.0);
        let wheels = wheels(&mut app, car);
        let mut worst: f64 = 0.0;
        for _ in 0..(2.0 * hz) as usize {
            tick(&mut app, 1);
            for &w in &wheels {
                let sensors = get::<WheelSensors>(&app, w);
                if sensors.load <= 0.0 {
                    continue;
                }
                let [dx, dy] = loaded_tire(&builder, sensors.load, f64::from(mu)).peak_force();
                let [fx, fy] = sensors.force;
                worst = worst.max(((fx / dx).powi(2) + (fy / dy).powi(2)).sqrt());
            }
        }
        println!("{hz} Hz: largest tire force {worst:.4} of its friction ellipse");
        assert!(
            worst < 1.005,
            "{hz} Hz: a tire's force reached {worst} of its friction ellipse"
        );
    }
}

/// Braking at full pedal from 20 m/s with the built-in ABS on a split road (the left wheels on
/// μ 0.9, the right on μ 0.2), steering held straight, at 15, 30, 60 and 120 Hz: the car stops
/// between the two roads' friction stops, `v²/(2·μ·g)` (22.7 and 101.9 m; measured 35.3–35.6
/// m), and its heading turns less than 0.35 rad (20°; measured 0.22–0.24): the rear axle's
/// wheels select low (`AntiLock::select_low_rear`), so the rear tires keep their side grip
/// against the front axle's uneven braking. Each wheel controlled on its own (as until
/// 2026-12-02), the car spins (past 2 rad here; 185° in the outside test that found it).
///
/// With the built-in stability control fitted too, its heading turns less than 0.16 rad
/// (measured 0.125–0.135 rad, against 0.22–0.23 without it) and it stops within 15 % of the
/// distance without it (measured 9–11 % longer): the control asks for a yaw moment against
/// the turn, which the low-friction front wheel, at its limit already, cannot give by braking
/// harder, so the brake across the axle is released by as much
/// (`apply_stability_demand`). Until 2026-12-06 it only added torque there, which the ABS
/// took back: the stop was the same to the millimetre with it or without it.
#[test]
fn a_split_road_stop_on_the_abs_keeps_the_car_pointing_ahead() {
    use bevy_rapier3d::prelude::{Collider, Friction, RigidBody};
    let run = |hz: f64, select_low_rear: bool, stability: bool| -> (f64, f64) {
        let mut app = create_app(hz);
        for (x, mu) in [(-50.0f32, 0.9f32), (50.0, 0.2)] {
            app.world_mut().spawn((
                RigidBody::Fixed,
                Collider::cuboid(50.0, 0.5, 400.0),
                Friction::coefficient(mu),
                Transform::from_xyz(x, -0.5, -300.0),
            ));
        }
        let mut builder = CarBuilder::default();
        builder.brakes.anti_lock = Some(AntiLock {
            select_low_rear,
            ..default()
        });
        if stability {
            builder.brakes.stability_control = Some(StabilityControl::default());
        }
        let car = spawn_at_ride_height(&mut app, &builder);
        tick(&mut app, hz as usize);
        flying_start(&mut app, car, 20.0);
        controls(&mut app, car, |c| c.brake = 1.0);
        let start = position(&app, car);
        let turned = tick_turning(&mut app, car, (8.0 * hz) as usize);
        assert!(velocity(&app, car).length() < 0.05, "{hz} Hz: not stopped");
        (f64::from(start.z - position(&app, car).z), turned.abs())
    };
    let bounds = [0.9, 0.2].map(|mu| friction_stopping_distance(20.0, mu));
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let (distance, turned) = run(hz, true, false);
        println!("{hz} Hz: stopped in {distance:.2} m, heading turned {turned:.3} rad");
        assert!(
            distance > bounds[0] && distance < bounds[1],
            "{hz} Hz: stopped in {distance} m, outside {bounds:?} m"
        );
        assert!(turned < 0.35, "{hz} Hz: turned {turned} rad");
        let (with, held) = run(hz, true, true);
        println!(
            "{hz} Hz, stability control: stopped in {with:.2} m ({:+.1} %), heading turned \
             {held:.3} rad",
            100.0 * (with / distance - 1.0)
        );
        assert!(
            held < 0.16 && held < 0.7 * turned,
            "{hz} Hz: with the stability control turned {held} rad, {turned} without"
        );
        assert!(
            with > distance && with < 1.15 * distance,
            "{hz} Hz: with the stability control stopped in {with} m, {distance} m without"
        );
    }
    let (_, spun) = run(60.0, false, false);
    println!("each wheel on its own, 60 Hz: turned {spun:.3} rad");
    assert!(spun > 2.0, "each wheel on its own: turned {spun} rad");
}

/// Braking at full pedal in a turn the tires cannot hold: the default car with the built-in ABS
/// at 25 m/s on μ 0.9, steered to half lock, braked to 5 m/s, at 30 and 120 Hz. The front
/// tires push wide and the car turns less than its driver asks; the stability control asks
/// for more yaw by braking the inner rear wheel, whose tire the pedal already holds at its
/// limit, so it releases the outer rear brake instead, and the ABS's select-low leaves that
/// axle to it. With it the heading turns at least 20 % further (measured 0.820–0.831 rad
/// against 0.639–0.644) and the car takes at most 1.25 times as long to slow (3.17–3.20 s
/// against 2.78–2.80 s); with the select-low matching the inner rear brake to the released
/// one it took 3.76–3.77 s, and before the control could release a brake (2026-12-06) the ABS
/// took its added torque back: 0.645 rad in 2.80 s at 30 Hz.
#[test]
fn braking_in_a_turn_the_stability_control_keeps_the_car_turning() {
    let run = |hz: f64, stability: bool| -> (f64, f64) {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        let mut builder = CarBuilder::default();
        builder.brakes.anti_lock = Some(AntiLock::default());
        if stability {
            builder.brakes.stability_control = Some(StabilityControl::default());
        }
        let car = spawn_at_ride_height(&mut app, &builder);
        tick(&mut app, hz as usize);
        flying_start(&mut app, car, 25.0);
        controls(&mut app, car, |c| {
            c.brake = 1.0;
            c.steering = -0.5;
        });
        let (mut turned, mut steps) = (0.0, 0);
        while velocity(&app, car).length() > 5.0 {
            turned += tick_turning(&mut app, car, 1);
            steps += 1;
            assert!(steps < (10.0 * hz) as usize, "{hz} Hz: not slowed in 10 s");
        }
        (turned, steps as f64 / hz)
    };
    for hz in [30.0, 120.0] {
        let (turned, time) = run(hz, false);
        let (held, slowed) = run(hz, true);
        println!(
            "{hz} Hz: turned {turned:.3} rad in {time:.2} s without the control, {held:.3} rad \
             in {slowed:.2} s with it"
        );
        assert!(
            held > 1.2 * turned,
            "{hz} Hz: turned {held} rad with the control, {turned} without"
        );
        assert!(
            slowed < 1.25 * time,
            "{hz} Hz: slowed in {slowed} s with the control, {time} without"
        );
    }
}

/// A car rolling back against its gear, floored: the default car (rear-driven, with the
/// built-in traction control) reversed at full throttle to 10 m/s, then put in first gear at
/// full throttle, at 15, 30, 60 and 120 Hz. The rear tires push it forward at up to their peak
/// while the road drags their wheels backwards: it comes to a stop at a mean deceleration of at
/// least 0.75 of the traction limit (`traction_limit`, 4.83 m/s²), in under 0.7 of the time
/// it takes without the control, the drive fully cut for under 1 s (measured 2026-12-02: 3.83 /
/// 3.85 / 3.87 / 3.87 m/s², 2.58–2.67 s against 4.24–4.27 s without the control, cut for
/// 0.53–0.57 s). Until 2026-12-02 the control braked every wheel whose tire slid forward, a
/// locked wheel on a car rolling back among them: the wheels locked, their tires slid at full
/// slip, and the drive stayed cut until the car stopped (3.75 s, longer than without the
/// control; a hill start that slid back ran away down a grade its tires could climb).
#[test]
fn a_car_rolling_back_against_its_gear_is_driven_to_a_stop_at_its_tires_limit() {
    let car = CarBuilder::default();
    assert!(car.brakes.traction_control.is_some() && car.layout == DriveLayout::Rear);
    let limit = traction_limit(&car, 1, 0.9);
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let [with, without] = [true, false].map(|control| {
            let mut car = car.clone();
            if !control {
                car.brakes.traction_control = None;
            }
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let car = spawn_car(&mut app, &car, Transform::from_xyz(0.0, 0.4, 0.0));
            tick(&mut app, hz as usize);
            controls(&mut app, car, |c| {
                c.gear = -1;
                c.throttle = 1.0;
            });
            let mut steps = 0;
            while get::<VehicleTelemetry>(&app, car).forward_speed > -10.0 {
                tick(&mut app, 1);
                steps += 1;
                assert!(
                    steps < (20.0 * hz) as usize,
                    "{hz} Hz: never reached 10 m/s back"
                );
            }
            controls(&mut app, car, |c| c.gear = 1);
            let start = get::<VehicleTelemetry>(&app, car).forward_speed;
            let (mut time, mut cut) = (0.0, 0.0);
            while get::<VehicleTelemetry>(&app, car).forward_speed < 0.0 {
                tick(&mut app, 1);
                time += 1.0 / hz;
                if get::<VehicleTelemetry>(&app, car).traction_cut > 0.99 {
                    cut += 1.0 / hz;
                }
                assert!(time < 20.0, "{hz} Hz: still rolling back after 20 s");
            }
            (-start / time, time, cut)
        });
        let (deceleration, time, cut) = with;
        println!(
            "{hz} Hz: stopped from 10 m/s back in {time:.2} s ({deceleration:.2} m/s², limit \
             {limit:.2}), cut for {cut:.2} s; without the control {:.2} s",
            without.1
        );
        assert!(
            deceleration > 0.75 * limit,
            "{hz} Hz: {deceleration} m/s² against the traction limit {limit} m/s²"
        );
        assert!(
            time < 0.7 * without.1,
            "{hz} Hz: {time} s with the control, {} s without",
            without.1
        );
        assert!(cut < 1.0, "{hz} Hz: drive fully cut for {cut} s");
    }
}

/// An ABS stop on a moving platform: the default car without aerodynamic drag or lift, with
/// brakes that lock every wheel and the built-in ABS, rolling at 20 m/s over a kinematic platform (μ 0.9) that moves at
/// `platform` m/s along the car's heading, at full pedal at `hz`. Returns the distance the car
/// covers over the platform until it stands on it (m).
fn abs_stop_on_platform(hz: f64, platform: f32) -> f64 {
    let mut app = create_app(hz);
    let deck = Vec3::NEG_Z * platform;
    app.world_mut().spawn((
        RigidBody::KinematicVelocityBased,
        Collider::cuboid(1000.0, 0.5, 1000.0),
        Friction::coefficient(0.9),
        Velocity::linear(deck),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    // The air stands still over the world, not over the deck.
    let car = spawn_car(
        &mut app,
        &abs_car_without_air(),
        Transform::from_xyz(0.0, 0.35, 0.0),
    );
    // Settled on the deck, moving with it.
    set::<Velocity>(&mut app, car, |v| v.linear = deck);
    for _ in 0..(0.5 * hz) as usize {
        tick(&mut app, 1);
    }
    flying_start(&mut app, car, 20.0);
    set::<Velocity>(&mut app, car, |v| v.linear += deck);
    tick(&mut app, 1);
    controls(&mut app, car, |c| c.brake = 1.0);
    let mut travelled = 0.0;
    for _ in 0..(10.0 * hz) as usize {
        tick(&mut app, 1);
        let relative = velocity(&app, car) - deck;
        travelled += f64::from(relative.length()) / hz;
        if relative.length() < 0.05 {
            return travelled;
        }
    }
    panic!("{hz} Hz, platform at {platform} m/s: still sliding over it after 10 s");
}

/// The controls measure the car's speed over the ground under its wheels: an ABS stop from
/// 20 m/s over a kinematic platform moving at ±10 m/s along the car takes the same distance
/// over the platform as on still ground, within 1 %, and that within 5 % of
/// `v²/(2·0.95·μ·g)` (23.84 m), at 30, 60 and 120 Hz (measured 2026-12-02: 23.246 / 23.363 /
/// 23.429 m, the same on the deck as on still ground to the millimetre). Until 2026-12-02 the ABS measured the wheels' slip against the car's speed
/// over the world: on a platform at +15 m/s it read every wheel as spinning, at −15 m/s as
/// locked, and the car had not stopped over the deck after 10 s (36–139 m; an outside test).
#[test]
fn abs_stops_on_a_moving_platform_as_on_still_ground() {
    for hz in [30.0, 60.0, 120.0] {
        let still = abs_stop_on_platform(hz, 0.0);
        let closed = friction_stopping_distance(20.0, 0.95 * 0.9);
        assert!(
            rel(still, closed) < 0.05,
            "{hz} Hz: {still} m against {closed} m"
        );
        for platform in [10.0, -10.0] {
            let moving = abs_stop_on_platform(hz, platform);
            println!("{hz} Hz: {moving:.3} m over a deck at {platform} m/s, {still:.3} m still");
            assert!(
                rel(moving, still) < 0.01,
                "{hz} Hz: {moving} m over a deck at {platform} m/s against {still} m"
            );
        }
    }
}

/// An ABS stop with the wheels on two grounds: the left wheels on a kinematic strip that runs
/// backwards at 8 m/s, the right ones on the still road beside it (μ 0.9 both), from 20 m/s
/// over the road, the default car without air drag, brakes that lock every wheel and the
/// built-in ABS, at 30, 60 and 120 Hz: each wheel's slip is measured over its own ground, so
/// the car stops over the road within 15 % of the distance it takes on the road alone
/// (`abs_stop_on_platform` at 0 m/s). Measured 2026-12-02: 24.56 / 25.37 / 25.07 m against
/// 23.25 / 23.36 / 23.43 m (+5.6 / +8.6 / +7.0 %; without the rear axle's select-low, 24.16
/// and 24.61 m at 30 and 60 Hz: what is left is in `docs/known_gaps.md`). Until the same day's
/// fix the controls measured every wheel against the mean of the grounds' velocities (4 m/s
/// backwards): the road wheels, rolling freely, read −17 % of slip, the ABS let them off,
/// and the stop took 29.5–31.8 m against 23.4 (an outside test).
#[test]
fn abs_stops_with_its_wheels_on_two_grounds_as_on_one() {
    for hz in [30.0, 60.0, 120.0] {
        let still = abs_stop_on_platform(hz, 0.0);
        let mut app = create_app(hz);
        // The strip under the left wheels, the road under the right ones; tops at y = 0.
        app.world_mut().spawn((
            RigidBody::KinematicVelocityBased,
            Collider::cuboid(1.0, 0.5, 1000.0),
            Friction::coefficient(0.9),
            Velocity::linear(Vec3::Z * 8.0),
            Transform::from_xyz(-1.0, -0.5, 0.0),
        ));
        app.world_mut().spawn((
            RigidBody::Fixed,
            Collider::cuboid(1.0, 0.5, 1000.0),
            Friction::coefficient(0.9),
            Transform::from_xyz(1.0, -0.5, 0.0),
        ));
        let car = spawn_car(
            &mut app,
            &abs_car_without_air(),
            Transform::from_xyz(0.0, 0.35, 0.0),
        );
        // Held on its brakes while it settles on the two grounds (the strip drags its left
        // tires), then rolling at 20 m/s over the road, the left wheels at the strip's speed.
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, (0.5 * hz) as usize);
        controls(&mut app, car, |c| c.brake = 0.0);
        flying_start(&mut app, car, 20.0);
        set::<Velocity>(&mut app, car, |v| *v = Velocity::linear(Vec3::NEG_Z * 20.0));
        for w in wheels(&mut app, car) {
            if get::<WheelMount>(&app, w).side == Side::Left {
                let mut state = state(&app, car, w);
                state[1] = 28.0 / get::<Wheel>(&app, w).radius;
                set_state(&mut app, car, w, &state);
            }
        }
        tick(&mut app, 1);
        controls(&mut app, car, |c| c.brake = 1.0);
        // Until it stops going forward (the strip then drags its left side on).
        let start = position(&app, car);
        let mut steps = 0;
        while -velocity(&app, car).z >= 0.05 {
            tick(&mut app, 1);
            steps += 1;
            assert!(
                steps < (10.0 * hz) as usize,
                "{hz} Hz: still moving after 10 s"
            );
        }
        let travelled = f64::from(start.z - position(&app, car).z);
        println!("{hz} Hz: {travelled:.3} m on two grounds, {still:.3} m on the road alone");
        assert!(
            rel(travelled, still) < 0.15,
            "{hz} Hz: {travelled} m on two grounds against {still} m"
        );
    }
}

/// The default car without aerodynamic drag or lift, with brakes that lock every wheel
/// (4000 N·m) and the built-in ABS ([`AntiLock::default`]).
fn abs_car_without_air() -> CarBuilder {
    let mut builder = CarBuilder {
        brakes: Brakes {
            max_torque: 4_000.0,
            anti_lock: Some(AntiLock::default()),
            ..default()
        },
        ..default()
    };
    builder.aerodynamics.drag_area = 0.0;
    builder.aerodynamics.lift_area = 0.0;
    builder
}

/// What a stop without ABS from 100 km/h at pedal `pedal` with a touch of steering (0.02)
/// shows at `hz` on a road of friction `mu`: the axle whose wheel locked first above 3 m/s
/// (`None`: none did), the largest body slip angle above 3 m/s (rad) and the distance (m).
/// The default car's brakes, with or without their [`BrakeDistribution`].
fn pedal_stop(hz: f64, mu: f32, pedal: f64, distribution: bool) -> (Option<u8>, f64, f64) {
    let mut builder = CarBuilder::default();
    if !distribution {
        builder.brakes.distribution = None;
    }
    let (mut app, car) = rolling_car(hz, mu, &builder, 100.0 / 3.6);
    controls(&mut app, car, |c| {
        c.brake = pedal;
        c.steering = 0.02;
    });
    let wheels = wheels(&mut app, car);
    let start = position(&app, car);
    let (mut first, mut slip) = (None, 0.0f64);
    for _ in 0..(15.0 * hz) as usize {
        tick(&mut app, 1);
        let v = velocity(&app, car);
        if v.length() < 0.05 {
            break;
        }
        if v.length() > 3.0 {
            first = first.or_else(|| {
                wheels.iter().find_map(|&w| {
                    let locked = get::<WheelState>(&app, w).slip_ratio < -0.9;
                    locked.then(|| get::<WheelMount>(&app, w).axle)
                })
            });
            let forward = get::<Transform>(&app, car).rotation * Vec3::NEG_Z;
            let beta = (forward.cross(v).y / v.length()).clamp(-1.0, 1.0).asin();
            slip = slip.max(f64::from(beta).abs());
        }
    }
    (
        first,
        slip,
        f64::from((position(&app, car) - start).length()),
    )
}

/// Without ABS, the default car (70 % front bias, which suits about 0.5 g) braked from 100
/// km/h at any pedal from 0.5 to 1 on roads of friction 0.9 and 1.2, with a touch of steering,
/// at 30 and 60 Hz: with the brake-force distribution the rear wheels never lock before the
/// front ones and the body's slip angle stays under 0.06 rad (measured 2026-12-02 at 60 Hz: at
/// most 0.050, the front locking first from pedal 0.8 on μ 0.9). Without it the rear wheels
/// lock first at pedal 0.7–1 on μ 1.2 and at 0.8 on μ 0.9, where the car slid to 0.52 rad.
/// At pedal 0.3 the rear brakes, far below their tires' peak, get exactly the bias's share:
/// 0.3/0.7 of the front's torque (1e-9).
#[test]
fn a_car_without_abs_locks_its_front_wheels_first_at_any_pedal() {
    let pedals = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
    for hz in [30.0, 60.0] {
        for mu in [0.9f32, 1.2] {
            for pedal in pedals {
                let (first, slip, distance) = pedal_stop(hz, mu, pedal, true);
                println!(
                    "{hz} Hz, μ {mu}, pedal {pedal}: first locked axle {first:?}, slip angle \
                     {slip:.3} rad, stop {distance:.2} m"
                );
                assert_ne!(
                    first,
                    Some(1),
                    "{hz} Hz, μ {mu}, pedal {pedal}: rear locked first"
                );
                assert!(
                    slip < 0.06,
                    "{hz} Hz, μ {mu}, pedal {pedal}: slid to {slip} rad"
                );
            }
        }
    }
    let rear_first = pedals
        .iter()
        .filter(|&&pedal| pedal_stop(60.0, 1.2, pedal, false).0 == Some(1))
        .count();
    let (_, slid, _) = pedal_stop(60.0, 0.9, 0.8, false);
    println!(
        "without the distribution: rear first at {rear_first} pedals on μ 1.2, slid to {slid:.3} rad on μ 0.9"
    );
    assert!(
        rear_first >= 3 && slid > 0.3,
        "without: {rear_first} pedals, {slid} rad"
    );

    // At moderate pedal the bias's closed form.
    let (mut app, car) = rolling_car(60.0, 0.9, &CarBuilder::default(), 20.0);
    controls(&mut app, car, |c| c.brake = 0.3);
    tick(&mut app, 30);
    let torques = wheels(&mut app, car).into_iter().map(|w| {
        let axle = get::<WheelMount>(&app, w).axle;
        (axle, get::<WheelState>(&app, w).brake_torque)
    });
    let (front, rear): (Vec<_>, Vec<_>) = torques.partition(|&(axle, _)| axle == 0);
    for ((_, f), (_, r)) in front.iter().zip(&rear) {
        assert!(
            rel(r / f, 0.3 / 0.7) < 1e-9,
            "rear {r} N·m vs front {f} N·m"
        );
    }
}

/// The wheels' reported forces are what moves the body: step by step, the body's momentum
/// change over the step, `m·Δv/dt`, equals the sum of every wheel's `WheelState::force`
/// (ground on tire, normal load included), the air's drag at the step's starting velocity
/// (`−½·ρ·Cd·A·|v|·v`) and the weight, within 0.1 % of the horizontal force and 0.1 % of the
/// weight vertically. Checked for the default car floored in second gear from 10 m/s, braking
/// at half pedal from 25 m/s, and turning at a fixed steering input at 15 m/s, at 30 and 60
/// Hz. A HUD, a force-feedback wheel or an AI reads these forces as the car's.
///
/// Measured 2026-12-02: worst horizontal mismatch 4.3e-5 of the force (the `f32` velocities
/// Rapier keeps), vertical 9e-8 of the weight.
#[test]
fn the_wheels_reported_forces_are_what_moves_the_body() {
    let builder = CarBuilder::default();
    let air = &builder.aerodynamics;
    let drag_factor = (0.5 * air.air_density * air.drag_area) as f32;
    let weight = Vec3::NEG_Y * (f64::from(builder.mass) * G) as f32;
    for hz in [30.0, 60.0] {
        for (name, speed, throttle, brake, steering) in [
            ("floored", 10.0, 1.0, 0.0, 0.0),
            ("braking", 25.0, 0.0, 0.5, 0.0),
            ("turning", 15.0, 0.2, 0.0, 0.15),
        ] {
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let car = spawn_car_at_rest(&mut app, &builder);
            tick(&mut app, 1);
            flying_start(&mut app, car, speed);
            controls(&mut app, car, |c| {
                c.gear = 2;
                c.throttle = throttle;
                c.brake = brake;
                c.steering = steering;
            });
            let wheels = wheels(&mut app, car);
            let mass = get::<bevy_rapier3d::prelude::ReadMassProperties>(&app, car)
                .get()
                .mass;
            tick(&mut app, (0.5 * hz) as usize);
            let (mut worst_horizontal, mut worst_vertical) = (0.0f32, 0.0f32);
            for _ in 0..(hz as usize) {
                let v0 = velocity(&app, car);
                tick(&mut app, 1);
                let momentum_change = (velocity(&app, car) - v0) * mass / fixed_dt(&app) as f32;
                let forces: Vec3 = wheels
                    .iter()
                    .map(|&w| get::<WheelState>(&app, w).force)
                    .sum::<Vec3>()
                    - drag_factor * v0.length() * v0
                    + weight;
                let miss = momentum_change - forces;
                let horizontal = momentum_change.with_y(0.0).length().max(100.0);
                worst_horizontal = worst_horizontal.max(miss.with_y(0.0).length() / horizontal);
                worst_vertical = worst_vertical.max(miss.y.abs() / weight.length());
            }
            println!(
                "{name} at {hz} Hz: worst horizontal mismatch {worst_horizontal:.1e} of the force, \
                 vertical {worst_vertical:.1e} of the weight"
            );
            assert!(
                worst_horizontal < 1e-3,
                "{name} at {hz} Hz: {worst_horizontal}"
            );
            assert!(worst_vertical < 1e-3, "{name} at {hz} Hz: {worst_vertical}");
        }
    }
}

/// A game's [`AddedForce`] acts on the chassis body every step alongside the chassis's own
/// forces: a car clear of the ground, held up by a force of `m·g` and pushed along X by
/// 2 kN with a torque of 600 N·m about its principal axis nearest Y, keeps its height and
/// gains `a = F/m` and `α = T/I` exactly (no wheel touches anything; drag at under 4 m/s is
/// under 0.1 % of the push). Tolerance 0.5 % on each rate, 1 mm/s on the vertical speed and
/// 3 mm on the height over 2 s (the `f32` rounding of 240 steps at 50 m), at 30 and 120 Hz.
#[test]
fn an_added_force_pushes_and_turns_the_body() {
    for hz in [30.0, 120.0] {
        let mut app = create_app(hz);
        let car = spawn_car(
            &mut app,
            &CarBuilder::default(),
            Transform::from_xyz(0.0, 50.0, 0.0),
        );
        tick(&mut app, 1);
        let props = *get::<bevy_rapier3d::prelude::ReadMassProperties>(&app, car).get();
        let axis = props.principal_inertia_local_frame * Vec3::Y;
        let (push, turn) = (2000.0, 600.0);
        app.world_mut().entity_mut(car).insert(AddedForce {
            force: Vec3::new(push, props.mass * GRAVITY as f32, 0.0),
            torque: axis * turn,
        });
        let (v0, w0, y0) = (
            velocity(&app, car),
            get::<Velocity>(&app, car).angular,
            position(&app, car).y,
        );
        let steps = (hz as usize) * 2;
        tick(&mut app, steps);
        let t = steps as f32 / hz as f32;
        let dv = velocity(&app, car) - v0;
        let dw = get::<Velocity>(&app, car).angular - w0;
        let a = dv.x / t;
        let alpha = dw.dot(axis) / t;
        let (a_expected, alpha_expected) = (push / props.mass, turn / props.principal_inertia.y);
        assert!(
            rel(a.into(), a_expected.into()) < 5e-3,
            "{hz} Hz: a {a} m/s² against F/m {a_expected}"
        );
        assert!(
            rel(alpha.into(), alpha_expected.into()) < 5e-3,
            "{hz} Hz: α {alpha} rad/s² against T/I {alpha_expected}"
        );
        // Held against gravity: the body keeps the vertical speed it had (from its first
        // step's fall) and moves at it.
        assert!(
            dv.y.abs() < 1e-3,
            "{hz} Hz: vertical speed changed by {} m/s",
            dv.y
        );
        let drift = position(&app, car).y - y0 - v0.y * t;
        assert!(
            drift.abs() < 3e-3,
            "{hz} Hz: height off a steady fall by {drift} m"
        );
    }
}
