//! The vehicle library's heavier-drivetrain files (`automatic_sedan`, `pickup_4x4`,
//! `tipper_6x6`): each loads, settles and is ready, and each does what its drivetrain is for,
//! checked against published data or closed-form results with the tolerance stated on each
//! test. Run with `--nocapture` to see the measured values each test prints.

use crate::common;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::FileBlockTypes;
use bevy_vehicle_physics::prelude::*;
use common::*;

const SEDAN: &str = "vehicles/automatic_sedan.vehicle.ron";
const PICKUP: &str = "vehicles/pickup_4x4.vehicle.ron";
const TIPPER: &str = "vehicles/tipper_6x6.vehicle.ron";

/// The settings of the block of type `T` named `name` in `d`.
fn block<'a, T: 'static>(d: &'a VehicleDescription, name: &str) -> &'a T {
    d.blocks
        .iter()
        .find(|b| b.name == name)
        .and_then(|b| b.block.as_any().downcast_ref::<T>())
        .unwrap_or_else(|| panic!("{}: no block {name} of that type", d.name))
}

/// Spawns `d` on flat ground of friction `mu`, lets it settle for 3 s, and checks that it rests
/// at its design ride height (within 1 cm), still (below 1 cm/s), on all its wheels, with the
/// chassis and the drivetrain ready.
fn settle_on_flat_ground(d: &VehicleDescription, mu: f32) -> (App, Entity) {
    settle_on_flat_ground_at(d, mu, 60.0)
}

/// [`settle_on_flat_ground`] at `hz` fixed steps per second.
fn settle_on_flat_ground_at(d: &VehicleDescription, mu: f32, hz: f64) -> (App, Entity) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, mu);
    let car = spawn_described(
        &mut app,
        d,
        Transform::from_xyz(0.0, rest_height(d) + 0.05, 0.0),
    );
    tick(&mut app, (3.0 * hz) as usize);
    let status = get::<ChassisStatus>(&app, car);
    assert!(
        matches!(status, ChassisStatus::Ready),
        "{}: {status:?}",
        d.name
    );
    assert_eq!(
        *drivetrain(&app, car).status(),
        DrivetrainStatus::Ready,
        "{}",
        d.name
    );
    let sag = rest_height(d) - position(&app, car).y;
    let speed = velocity(&app, car).length();
    let telemetry = get::<VehicleTelemetry>(&app, car);
    println!(
        "{}: rests {:.1} mm below design height, {speed:.2e} m/s, {} wheels grounded, engine {:.0} rpm",
        d.name,
        sag * 1000.0,
        telemetry.grounded_wheels,
        telemetry.engine_rpm
    );
    assert!(
        sag.abs() < 0.01,
        "{}: rests {sag} m below design height",
        d.name
    );
    assert!(speed < 0.01, "{}: moving at {speed} m/s", d.name);
    assert_eq!(
        telemetry.grounded_wheels as usize,
        2 * d.axles.len(),
        "{}: wheels on the ground",
        d.name
    );
    (app, car)
}

/// Each file loads through `VehicleDescription::load`, writes back identically, and settles at
/// rest on flat ground, ready (see [`settle_on_flat_ground`] for the tolerances).
#[test]
fn library_vehicles_load_settle_and_are_ready() {
    for path in [SEDAN, PICKUP, TIPPER] {
        let d = load_vehicle(path);
        let text = d.to_ron().expect("serializes");
        let again = VehicleDescription::parse(path, &text, &FileBlockTypes::default(), |p| {
            Err(format!("unexpected reference to {p}"))
        })
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.to_ron().unwrap(), text, "{path}");
        let _ = settle_on_flat_ground(&d, 1.0);
    }
}

// ---- Automatic sedan ----------------------------------------------------------------------------

/// Published 0-60 mph time of the modelled car (s): Motor Trend's test of the 2016 Jetta 1.4T
/// SE automatic (see the file's header).
const SEDAN_0_TO_60_MPH: f64 = 8.4;

/// Full throttle from rest in drive, as a magazine test does it, with the car's own traction
/// control (`brakes.traction_control` in its file: the converter's 2.0 torque ratio at stall
/// and first gear put about 2.5 times what the front tires can take on them); the pedal stays
/// floored, so the automatic keeps its full-throttle schedule, and the lever stays in drive,
/// so every gear change is the automatic's own. 0-60 mph lies within 15 % of the published 8.4 s (the
/// published time has a one-foot rollout, about 0.2-0.3 s shorter than from a standstill; 15 %
/// is 1.3 s); by 60 mph the car has shifted up by itself to at least third gear, one gear at a
/// time, never down, each upshift decided with the turbine at the full-throttle point
/// (5800 rpm), within 3 % above it.
#[test]
fn automatic_sedan_accelerates_like_the_published_car_and_shifts_itself() {
    let d = load_vehicle(SEDAN);
    let (mut app, car) = settle_on_flat_ground(&d, 1.0);
    let at = block_entity::<AutomaticTransmission>(&mut app, car);
    let up_point = block::<AutomaticTransmission>(&d, "transmission").high_shift_up;
    // Drive, at idle: the automatic engages first gear after its transition time.
    controls(&mut app, car, |c| c.gear = 1);
    tick(&mut app, 60);
    assert_eq!(
        get::<AutomaticSensors>(&app, at).gear,
        1,
        "engaged in drive"
    );
    controls(&mut app, car, |c| c.throttle = 1.0);

    let hz = fixed_dt(&app).recip();
    let mut deepest_cut: f64 = 0.0;
    let (mut t60, mut t100) = (None, None);
    let mut gears = vec![1];
    let mut upshifts = Vec::new();
    let mut last_input_rpm = 0.0;
    for step in 0..(20.0 * hz) as usize {
        tick(&mut app, 1);
        let t = (step + 1) as f64 / hz;
        let v = get::<VehicleTelemetry>(&app, car).forward_speed;
        assert!(v.is_finite() && position(&app, car).is_finite(), "finite");
        let s = get::<AutomaticSensors>(&app, at);
        if s.gear != *gears.last().unwrap() {
            gears.push(s.gear);
            upshifts.push((t, v * 3.6, last_input_rpm));
        }
        last_input_rpm = s.input_speed * 60.0 / core::f64::consts::TAU;
        if t60.is_none() && v >= 60.0 * 0.44704 {
            t60 = Some((t, s.gear));
        }
        if t100.is_none() && v >= 100.0 / 3.6 {
            t100 = Some(t);
            break;
        }
        deepest_cut = deepest_cut.max(get::<VehicleTelemetry>(&app, car).traction_cut);
    }
    let (t60, gear60) = t60.expect("reached 60 mph within 20 s");
    println!(
        "automatic sedan: 0-60 mph in {t60:.2} s (published {SEDAN_0_TO_60_MPH} s, err {:+.1} %) in gear {gear60}, 0-100 km/h in {:?} s; deepest traction cut {deepest_cut:.2}; gears {gears:?}; upshifts (t s, km/h, turbine rpm) {upshifts:.1?}",
        100.0 * (t60 / SEDAN_0_TO_60_MPH - 1.0),
        t100,
    );
    assert!(
        rel(t60, SEDAN_0_TO_60_MPH) <= 0.15,
        "0-60 mph in {t60:.2} s, published {SEDAN_0_TO_60_MPH} s"
    );
    assert!(gear60 >= 3, "upshifted by itself: gear {gear60} at 60 mph");
    assert!(
        gears.windows(2).all(|w| w[1] == w[0] + 1),
        "only single upshifts at full throttle: {gears:?}"
    );
    for &(t, _, rpm) in &upshifts {
        assert!(
            rpm >= up_point && rel(rpm, up_point) < 0.03,
            "upshift at {t:.2} s decided at {rpm:.0} turbine rpm, point {up_point}"
        );
    }
}

/// The automatic sedan's 0–100 km/h from rest in drive at full throttle (s, from the throttle)
/// at `hz` fixed steps per second.
fn automatic_zero_to_100(hz: f64) -> f64 {
    let d = load_vehicle(SEDAN);
    let (mut app, car) = settle_on_flat_ground_at(&d, 1.0, hz);
    controls(&mut app, car, |c| c.gear = 1);
    tick(&mut app, hz as usize);
    controls(&mut app, car, |c| c.throttle = 1.0);
    for step in 0..(20.0 * hz) as usize {
        tick(&mut app, 1);
        if get::<VehicleTelemetry>(&app, car).forward_speed >= 100.0 / 3.6 {
            return (step + 1) as f64 / hz;
        }
    }
    panic!("{hz} Hz: not at 100 km/h after 20 s");
}

/// The automatic's launch through the converter and two full-throttle upshifts take the same
/// time at 30, 60 and 120 Hz within 1 % (measured 8.067 / 8.050 / 8.050 s: 0.2 %; 8.133 /
/// 8.100 / 8.092 s when this was first measured, most of the gap the upshifts,
/// decided once per fixed step, landing up to a step later at 30 Hz). When a
/// shift's ratio also moved once per fixed step, the momentum pass at each jump lost more
/// energy in fewer, larger jumps: 8.333 / 8.250 / 8.142 s, 2.35 % apart. When the converter
/// was kept stable by raising its slippage, it slipped in proportion to the substep, which
/// is 1/480 s at 120 Hz (the drivetrain's four substeps at least) and 1/240 s at 30 and
/// 60 Hz: 8.233 / 8.200 / 8.117 s, 1.4 % apart.
#[test]
fn automatic_sedan_accelerates_alike_at_any_step_rate() {
    let times = [30.0, 60.0, 120.0].map(automatic_zero_to_100);
    println!("automatic sedan 0-100 km/h at 30/60/120 Hz: {times:.3?} s");
    for (hz, t) in [30.0, 60.0].into_iter().zip(times) {
        assert!(
            rel(t, times[2]) < 0.01,
            "{hz} Hz: {t:.3} s against {:.3} s at 120 Hz",
            times[2]
        );
    }
}

// ---- A CVT from a vehicle file ---------------------------------------------------------------

/// The automatic sedan's file with its six-speed automatic swapped for the default [`Cvt`] on
/// the `fwd_cvt` topology (same engine, converter and final drive), its converter's lock-up
/// kept closed at full throttle as a CVT car's is.
fn cvt_sedan() -> VehicleDescription {
    let text = read_asset(SEDAN).unwrap();
    let start = text.find("\"transmission\": (").unwrap();
    let end = start + text[start..].find("\n        ),\n").unwrap() + "\n        ),\n".len();
    let text = format!(
        "{}\"transmission\": Cvt(max_target_rpm: 5500.0),\n{}",
        &text[..start],
        &text[end..]
    )
    .replace("fwd_automatic.topology.ron", "fwd_cvt.topology.ron")
    .replace("max_throttle: 0.85", "max_throttle: 1.0")
    .replace(
        "6-speed automatic)",
        "CVT in place of its 6-speed automatic)",
    );
    VehicleDescription::parse(
        "cvt_sedan.vehicle.ron",
        &text,
        &FileBlockTypes::default(),
        read_asset,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The sedan with a CVT ([`cvt_sedan`]) floored from rest in drive at 30, 60 and 120 Hz on μ 1.0:
/// the telemetry shows drive (gear 1); once the variator has left its launch ratio (above
/// about 71 km/h) it holds its input at the 5 500 rpm it aims for at full throttle, behind
/// by the lag of a follower of time constant `τ` chasing a ratio that falls as `1/v`: the
/// input runs `τ·a/v` above the target (within 0.5 % of the target, measured at 80, 90 and
/// 100 km/h: 3.81 / 3.00 / 2.32 % above it against 3.65 / 2.82 / 2.20 %); and no run reaches 100 km/h sooner than the engine's peak power could bring
/// the car's mass there, `½·m·v²/P_max`.
#[test]
fn a_cvt_car_from_a_file_holds_its_engine_at_the_target_speed() {
    let d = cvt_sedan();
    let cvt = block::<Cvt>(&d, "transmission").clone();
    let target = rpm_to_rad_s(cvt.max_target_rpm);
    let peak_power = 110_000.0;
    for hz in [30.0, 60.0, 120.0] {
        let (mut app, car) = settle_on_flat_ground_at(&d, 1.0, hz);
        let transmission = block_entity::<Cvt>(&mut app, car);
        controls(&mut app, car, |c| c.gear = 1);
        tick(&mut app, hz as usize);
        controls(&mut app, car, |c| c.throttle = 1.0);
        let mut marks = [80.0, 90.0, 100.0].map(|kmh: f64| (kmh / 3.6, None));
        let mut last_speed = 0.0;
        let mut reached = None;
        for step in 0..(20.0 * hz) as usize {
            tick(&mut app, 1);
            let telemetry = get::<VehicleTelemetry>(&app, car);
            let v = telemetry.forward_speed;
            assert_eq!(telemetry.gear, 1, "{hz} Hz: not in drive");
            let a = (v - last_speed) * hz;
            last_speed = v;
            for (speed, seen) in marks.iter_mut() {
                if seen.is_none() && v >= *speed {
                    let sensors = get::<CvtSensors>(&app, transmission);
                    let excess = sensors.input_speed / target - 1.0;
                    *seen = Some((excess, cvt.ratio_time * a / v, sensors.ratio));
                }
            }
            if v >= 100.0 / 3.6 {
                reached = Some((step + 1) as f64 / hz);
                break;
            }
        }
        let reached = reached.unwrap_or_else(|| panic!("{hz} Hz: not at 100 km/h in 20 s"));
        let bound = 0.5 * f64::from(d.chassis.mass) * (100.0f64 / 3.6).powi(2) / peak_power;
        println!(
            "{hz} Hz: 0-100 km/h in {reached:.2} s (power bound {bound:.2} s); at 80/90/100 km/h (input above target, τ·a/v, ratio): {marks:.4?}"
        );
        assert!(
            reached > bound,
            "{hz} Hz: 0-100 in {reached} s, faster than {bound} s"
        );
        for (speed, seen) in marks {
            let (excess, lag, ratio) = seen.unwrap();
            assert!(
                (excess - lag).abs() < 0.005 && ratio < cvt.max_ratio,
                "{hz} Hz, {:.0} km/h: input {excess:+.4} of the target, lag {lag:.4}, ratio {ratio}",
                speed * 3.6
            );
        }
    }
}

// ---- Traction control behind a clutch or converter ---------------------------------------------

/// Floors vehicle file `path` from rest in first gear (engaged 0.5 s before) at `hz` on
/// friction `mu` and returns, over `window` (s after the throttle went down), the total
/// longitudinal tire force of the wheels on `axles` (0 the front) at each step (N) and their
/// mean load times μ (N).
fn drive_at_launch(
    path: &str,
    hz: f64,
    mu: f32,
    axles: &[u8],
    window: [f64; 2],
) -> (Vec<f64>, f64) {
    let d = load_vehicle(path);
    let (mut app, car) = settle_on_flat_ground_at(&d, mu, hz);
    let driven: Vec<Entity> = wheels(&mut app, car)
        .into_iter()
        .filter(|&w| axles.contains(&get::<WheelMount>(&app, w).axle))
        .collect();
    controls(&mut app, car, |c| c.gear = 1);
    tick(&mut app, (0.5 * hz) as usize);
    controls(&mut app, car, |c| c.throttle = 1.0);
    let (mut forces, mut grip) = (Vec::new(), 0.0);
    for step in 1..=(window[1] * hz) as usize {
        tick(&mut app, 1);
        if (step as f64) < window[0] * hz {
            continue;
        }
        let states = driven.iter().map(|&w| get::<WheelState>(&app, w));
        let (fx, load) = states.fold((0.0, 0.0), |(fx, load), s| {
            (fx + f64::from(s.force.dot(s.heading)), load + s.load)
        });
        forces.push(fx);
        grip += f64::from(mu) * load;
    }
    let grip = grip / forces.len() as f64;
    (forces, grip)
}

/// Asserts that each `(rate in Hz, mean force in N)` of `means` lies within `tolerance`
/// (relative) of the last one's (the finest rate's).
fn assert_alike_across_rates(path: &str, means: &[(f64, f64)], tolerance: f64) {
    let (finest, reference) = means[means.len() - 1];
    for &(hz, mean) in means {
        assert!(
            rel(mean, reference) < tolerance,
            "{path} at {hz} Hz: {mean} N vs {reference} N at {finest} Hz"
        );
    }
}

/// The traction control holds a front-driven launch near the friction limit without juddering,
/// behind the hatchback's automatic clutch (its capacity follows engine speed) and behind the
/// automatic sedan's torque converter (`K·ω²`), at 30, 60 and 120 Hz: from 0.2 to 1.0 s after the
/// throttle the front tires' total force never falls below 70 % of its mean, and the mean is at
/// least 80 % of μ times the front load (measured 2026-11-27: 0.94–0.97 of the mean, 0.99–1.00 of
/// μ·load). Acting on the slip alone (`lead` 0), the hatchback's front force swung at about 10 Hz:
/// at 30 Hz its least was 0.15 of its mean, and the mean 0.71 of μ·load.
#[test]
fn traction_control_launches_without_judder_behind_a_clutch_or_converter() {
    for path in ["vehicles/hatchback.vehicle.ron", SEDAN] {
        for hz in [30.0, 60.0, 120.0] {
            let (forces, grip) = drive_at_launch(path, hz, 0.9, &[0], [0.2, 1.0]);
            let mean = forces.iter().sum::<f64>() / forces.len() as f64;
            let least = forces.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "{path} at {hz} Hz: front force mean {mean:.0} N, least {least:.0} N \
                 ({:.2} of the mean), μ·load {grip:.0} N ({:.2})",
                least / mean,
                mean / grip
            );
            assert!(least >= 0.7 * mean, "{path} at {hz} Hz: {forces:.0?}");
            assert!(
                mean >= 0.8 * grip,
                "{path} at {hz} Hz: {mean} N vs {grip} N"
            );
        }
    }
}

/// The traction control on ice (μ 0.1) behind a torque converter, whose creep at idle alone drives
/// the tires far past their peak there (cutting the throttle cannot go below idle): the control
/// brakes a tire that spins on past its cut. The automatic sedan (front-driven) and the BMW
/// (rear-driven, 8-speed automatic) floored from rest at 30, 60 and 120 Hz: from 1 to 4 s after the
/// throttle the driven tires' mean force is at least 85 % of μ times their load (measured: 0.94 and
/// 0.88), and alike within 1 % across the rates (measured 2026-11-27: the same to the newton, under
/// 0.15 %). Without the brake the BMW's rear tires spun at three times the car's speed, and the
/// sedan's front tires passed 0.33 of μ·load.
#[test]
fn traction_control_drives_on_ice_behind_an_idling_converter() {
    for (path, axle) in [(SEDAN, [0]), ("vehicles/rwd_sports_sedan.vehicle.ron", [1])] {
        let means: Vec<(f64, f64)> = [30.0, 60.0, 120.0]
            .into_iter()
            .map(|hz| {
                let (forces, grip) = drive_at_launch(path, hz, 0.1, &axle, [1.0, 4.0]);
                let mean = forces.iter().sum::<f64>() / forces.len() as f64;
                println!(
                    "{path} on ice at {hz} Hz: driven tires' force mean {mean:.0} N, μ·load \
                     {grip:.0} N ({:.2})",
                    mean / grip
                );
                assert!(
                    mean >= 0.85 * grip,
                    "{path} at {hz} Hz: {mean} N vs μ·load {grip} N"
                );
                (hz, mean)
            })
            .collect();
        assert_alike_across_rates(path, &means, 0.01);
    }
}

/// A truck's twin tires on ice: the 6×4 tractor unit floored from rest in first gear on μ 0.1 with
/// its traction control, at 30, 60 and 120 Hz. From 1 to 6 s after the throttle the driven tandem's
/// mean force is at least 80 % of its four tires' peak force at their load (measured: 0.89–0.90;
/// 0.74 of μ·load, the heavily loaded twins peaking below it), it never pulls the truck back (least
/// measured 2026-11-27: 1.1–1.2 kN), and the rates agree within 2 % (measured: 0.36 %). A tire that
/// had spun past its peak at a crawl used to keep its excess slip for seconds (see the wheel's
/// relaxation past the peak): the control kept cutting the drive, the tandem's mean force was 0.23
/// of the tires' peak and at times −2.1 kN, and the truck crept to 2.2 km/h in 11 s.
#[test]
fn traction_control_launches_a_truck_on_ice() {
    let path = "vehicles/semi_truck.vehicle.ron";
    let mu = 0.1;
    let tire = load_vehicle(path).axles[1].wheel.tire.clone();
    let means: Vec<(f64, f64)> = [30.0, 60.0, 120.0]
        .into_iter()
        .map(|hz| {
            let (forces, grip) = drive_at_launch(path, hz, mu as f32, &[1, 2], [1.0, 6.0]);
            let mean = forces.iter().sum::<f64>() / forces.len() as f64;
            let least = forces.iter().copied().fold(f64::INFINITY, f64::min);
            // The four twin tires' peak force at their mean load.
            let peak = 4.0 * tire.model.at_load(grip / mu / 4.0, mu).peak_force()[0];
            println!(
                "tractor on ice at {hz} Hz: tandem force mean {mean:.0} N, least {least:.0} N, \
                 μ·load {grip:.0} N ({:.3}), tires' peak {peak:.0} N ({:.3})",
                mean / grip,
                mean / peak
            );
            assert!(
                mean >= 0.8 * peak,
                "at {hz} Hz: {mean} N vs the tires' peak {peak} N"
            );
            assert!(
                least >= 0.0,
                "at {hz} Hz: the tandem pulled back with {least} N"
            );
            (hz, mean)
        })
        .collect();
    assert_alike_across_rates(path, &means, 0.02);
}

// ---- 4×4 with low range -------------------------------------------------------------------------

/// The pickup's first gear, final drive, tire radius and rev limit, read from its file:
/// `(first gear, final drive, rolling radius (m), max rpm, low ratio, high ratio)`.
fn pickup_gearing(d: &VehicleDescription) -> (f64, f64, f64, f64, f64, f64) {
    let gearbox = block::<Gearbox>(d, "gearbox");
    let rear = block::<Differential>(d, "rear_differential");
    let front = block::<Differential>(d, "front_differential");
    assert_eq!(
        front.ratio, rear.ratio,
        "a locked centre needs equal axle ratios"
    );
    let tc = block::<TransferCase>(d, "transfer_case");
    assert!(tc.locked, "part-time: locked centre");
    let engine = block::<Engine>(d, "engine");
    (
        gearbox.forward_ratios[0],
        rear.ratio,
        d.axles[1].wheel.radius,
        engine.max_rpm,
        tc.low_ratio,
        tc.high_ratio,
    )
}

/// First gear at full throttle on flat ground (friction 1), in 4H and then in 4L (selected
/// through `VehicleControls::range` at a standstill): the pickup runs up to its rev limiter
/// and holds a steady top speed. The low-range top speed is the high-range one divided by
/// the low ratio (2.566) within 3 %, and each is the rev-limited engine speed through first
/// gear, the range and the final drive, `v = ω_e·r / (i_1·i_range·i_d)` with the engine speed
/// measured, within 3 % (tire slip and the limiter's band make up the difference).
#[test]
fn pickup_low_range_divides_first_gear_top_speed_by_the_low_ratio() {
    let d = load_vehicle(PICKUP);
    let (first, final_drive, radius, max_rpm, low, high) = pickup_gearing(&d);
    let run = |range: TransferRange| -> (f64, f64) {
        let (mut app, car) = settle_on_flat_ground(&d, 1.0);
        let tc = block_entity::<TransferCase>(&mut app, car);
        controls(&mut app, car, |c| c.range = Some(range));
        tick(&mut app, 2);
        let s = get::<TransferCaseSensors>(&app, tc);
        assert_eq!((s.range, s.pending), (range, None), "taken at a standstill");
        controls(&mut app, car, |c| {
            c.gear = 1;
            c.throttle = 1.0;
        });
        tick(&mut app, 6 * 60);
        // The mean over the last second: the limiter cuts and restores fuel.
        let (mut v, mut rpm) = (0.0, 0.0);
        for _ in 0..60 {
            tick(&mut app, 1);
            let t = get::<VehicleTelemetry>(&app, car);
            v += t.forward_speed / 60.0;
            rpm += t.engine_rpm / 60.0;
        }
        let ratio = if range == TransferRange::Low {
            low
        } else {
            high
        };
        let predicted =
            rpm * core::f64::consts::TAU / 60.0 * radius / (first * ratio * final_drive);
        println!(
            "pickup 4x4 {range:?}: first-gear top speed {:.3} km/h at {rpm:.0} rpm (limit {max_rpm}), kinematic {:.3} km/h, err {:.2} %",
            v * 3.6,
            predicted * 3.6,
            100.0 * rel(v, predicted)
        );
        assert!(
            rpm > 0.95 * max_rpm,
            "{range:?}: at the rev limiter: {rpm} rpm"
        );
        assert!(
            rel(v, predicted) < 0.03,
            "{range:?}: {v} m/s vs {predicted} m/s"
        );
        (v, rpm)
    };
    let (v_high, _) = run(TransferRange::High);
    let (v_low, _) = run(TransferRange::Low);
    let measured = v_low / v_high;
    let expected = high / low;
    println!(
        "pickup 4x4: top speed low/high {measured:.4}, expected 1/{low} = {expected:.4}, err {:.2} %",
        100.0 * rel(measured, expected)
    );
    assert!(rel(measured, expected) < 0.03, "{measured} vs {expected}");
}

/// From a standstill on a 50 % slope (26.6°, friction 1), parked facing uphill in 4L first
/// gear, the parking lock released and the pedal floored: the pickup climbs away, rolling back
/// less than 0.5 m. 4L first gear multiplies the engine's torque 40 times, more than the tires
/// can take, so they spin at first; but climbing at the limiter's speed takes only
/// `m·g·(sin θ + c_rr·cos θ)·r / (i_1·i_L·i_d·η)` of engine torque, about 92 N·m of the 250 N·m
/// the engine still gives at its 4200 rpm limit (and about 8.7 kN of tractive force, well
/// under what the four tires hold), so the pickup catches up with its wheels and climbs
/// steadily with the engine at its limiter (above 95 % of `max_rpm`), at the speed of the
/// engine through first gear, low range and the axles, `ω_e·r / (i_1·i_L·i_d)`, with the
/// engine speed measured, within 5 % (the tires' slip under that force, about 3 %), covering
/// at least 30 m up the slope in 15 s.
#[test]
fn pickup_climbs_a_50_percent_slope_from_standstill_in_low_range() {
    const GRADE: f32 = 0.5;
    let d = load_vehicle(PICKUP);
    let (first, final_drive, radius, max_rpm, low, _) = pickup_gearing(&d);
    let mut app = create_app(60.0);
    let rotation = spawn_slope(&mut app, GRADE, 1.0);
    let up_slope = rotation * Vec3::NEG_Z;
    let start = rotation * Vec3::new(0.0, rest_height(&d) + 0.02, 60.0);
    let car = spawn_described(
        &mut app,
        &d,
        Transform::from_translation(start).with_rotation(rotation),
    );
    // Parked in first gear, 4L selected, at idle (the automatic clutch open).
    controls(&mut app, car, |c| {
        c.parking = true;
        c.gear = 1;
        c.range = Some(TransferRange::Low);
    });
    tick(&mut app, 120);
    let tc = block_entity::<TransferCase>(&mut app, car);
    assert_eq!(
        get::<TransferCaseSensors>(&app, tc).range,
        TransferRange::Low
    );
    let parked_at = position(&app, car);
    controls(&mut app, car, |c| {
        c.parking = false;
        c.throttle = 1.0;
    });
    let mut lowest: f32 = 0.0;
    let (mut v, mut rpm) = (0.0, 0.0);
    let steps = 15 * 60;
    for step in 0..steps {
        tick(&mut app, 1);
        let climbed = (position(&app, car) - parked_at).dot(up_slope);
        lowest = lowest.min(climbed);
        if step >= steps - 60 {
            let t = get::<VehicleTelemetry>(&app, car);
            v += t.forward_speed / 60.0;
            rpm += t.engine_rpm / 60.0;
        }
    }
    let climbed = (position(&app, car) - parked_at).dot(up_slope);
    let kinematic = rpm * core::f64::consts::TAU / 60.0 * radius / (first * low * final_drive);
    // Engine torque needed at that speed (η: gearbox, transfer case, differentials).
    let theta = f64::from(GRADE).atan();
    let c_rr = d.axles[0].wheel.tire.rolling_resistance;
    let eta = block::<Gearbox>(&d, "gearbox").efficiency
        * block::<TransferCase>(&d, "transfer_case").efficiency
        * block::<Differential>(&d, "rear_differential").efficiency;
    let needed = f64::from(d.chassis.mass) * G * (theta.sin() + c_rr * theta.cos()) * radius
        / (first * low * final_drive * eta);
    println!(
        "pickup 4x4 on a 50 % slope in 4L: climbed {climbed:.1} m in 15 s (rolled back {:.3} m first), {:.3} km/h at {rpm:.0} rpm (limit {max_rpm}); through the gears {:.3} km/h (err {:.2} %); engine torque needed {needed:.0} N·m",
        -lowest,
        v * 3.6,
        kinematic * 3.6,
        100.0 * rel(v, kinematic)
    );
    assert!(
        needed < 250.0,
        "the closed form leaves torque to spare: {needed}"
    );
    assert!(lowest > -0.5, "rolled back {} m", -lowest);
    assert!(climbed > 30.0, "climbed only {climbed} m");
    assert!(rpm > 0.95 * max_rpm, "at the limiter: {rpm} rpm");
    assert!(rel(v, kinematic) < 0.05, "{v} m/s vs {kinematic} m/s");
}

// ---- 6×6 tandem with a retarder -----------------------------------------------------------------

/// Laden on flat ground (friction 0.8), pulling away in sixth gear at full throttle (first
/// gear, 61:1 overall, tops out at 6.6 km/h within a second): after 1 s and after 2 s, every
/// axle's wheels together get a drive torque above 10 % of the total (the front through the
/// locked distribution gearbox, the tandem through its inter-axle differential), and the sum
/// over the wheels is at least 80 % of the torque the engine puts into the clutch, through
/// sixth gear and the axle ratio (the rest: driveline efficiency, about 0.9).
#[test]
fn tipper_drives_all_three_axles() {
    let d = load_vehicle(TIPPER);
    let (mut app, car) = settle_on_flat_ground(&d, 0.8);
    let wheels = wheels(&mut app, car);
    let engine = block_entity::<Engine>(&mut app, car);
    controls(&mut app, car, |c| {
        c.gear = 6;
        c.throttle = 1.0;
    });
    let sixth = block::<Gearbox>(&d, "gearbox").forward_ratios[5];
    let axle_ratio = block::<Differential>(&d, "differential_1").ratio;
    for seconds in [1, 2] {
        tick(&mut app, 60);
        let per_axle: Vec<f64> = wheels
            .chunks(2)
            .map(|pair| {
                pair.iter()
                    .map(|&w| get::<WheelSensors>(&app, w).drive_torque)
                    .sum()
            })
            .collect();
        let total: f64 = per_axle.iter().sum();
        let engine_torque = get::<EngineSensors>(&app, engine).shaft_torque;
        let through = engine_torque * sixth * axle_ratio;
        println!(
            "tipper after {seconds} s: wheel torque per axle {per_axle:.0?} N·m (total {total:.0}; engine {engine_torque:.0} N·m × {sixth} × {axle_ratio} = {through:.0}), {:.2} m/s",
            get::<VehicleTelemetry>(&app, car).forward_speed
        );
        for (i, t) in per_axle.iter().enumerate() {
            assert!(*t > 0.1 * total, "axle {i} drives: {t} of {total} N·m");
        }
        assert!(total > 0.8 * through, "{total} vs {through}");
    }
}

/// The laden tipper rolls down a 6 % grade (friction 0.8) in neutral, no service brakes, with
/// the retarder lever at 1 (`VehicleControls::retarder`), launched at 10 m/s. It settles at
/// the speed where gravity along the slope balances rolling resistance, drag and the
/// retarder, `m·g·sin θ = c_rr·m·g·cos θ + ½·ρ·CdA·v² + T(ω_p)·i_d/(r·η)` with the propshaft at
/// `ω_p = i_d·v/r` and the overrun efficiency `η = η_tc·η_d·(w_f + w_r·η_iad)` (the axles'
/// static load shares `w`), within 3 %, and holds it: the speed changes by less than 0.1 m/s
/// over the last 10 s of 45 s, and the retarder is absorbing that power.
#[test]
fn tipper_retarder_holds_a_steady_speed_on_a_6_percent_downgrade() {
    const GRADE: f32 = 0.06;
    let d = load_vehicle(TIPPER);
    let mut app = create_app(60.0);
    // A long slab of road rising along −Z; the tipper faces +Z, down the slope.
    let slope = Quat::from_rotation_x(GRADE.atan());
    let half = Vec3::new(20.0, 1.0, 400.0);
    app.world_mut().spawn((
        bevy_rapier3d::prelude::RigidBody::Fixed,
        bevy_rapier3d::prelude::Collider::cuboid(half.x, half.y, half.z),
        bevy_rapier3d::prelude::Friction::coefficient(0.8),
        Transform::from_translation(slope * Vec3::new(0.0, -half.y, 0.0)).with_rotation(slope),
    ));
    let rotation = slope * Quat::from_rotation_y(core::f32::consts::PI);
    let start = slope * Vec3::new(0.0, rest_height(&d) + 0.01, -380.0);
    let car = spawn_described(
        &mut app,
        &d,
        Transform::from_translation(start).with_rotation(rotation),
    );
    controls(&mut app, car, |c| {
        c.gear = 0;
        c.retarder = Some(1.0);
    });
    tick(&mut app, 2);
    flying_start(&mut app, car, 10.0);
    let retarder = block_entity::<Retarder>(&mut app, car);
    let downhill = slope * Vec3::Z;
    let mut speeds = Vec::new();
    for _ in 0..45 {
        tick(&mut app, 60);
        speeds.push(velocity(&app, car).dot(downhill));
    }
    assert!(position(&app, car).is_finite());
    let v = f64::from(*speeds.last().unwrap());
    let sensors = get::<RetarderSensors>(&app, retarder);

    // Closed form, by bisection.
    let r = d.axles[1].wheel.radius;
    let i_d = block::<Differential>(&d, "differential_1").ratio;
    let ret = block::<Retarder>(&d, "retarder");
    let (z_f, z_1, z_2) = (d.axles[0].z, d.axles[1].z, d.axles[2].z);
    let z_rear = 0.5 * (z_1 + z_2);
    let w_f = f64::from((z_rear - d.chassis.center_of_mass[2]) / (z_rear - z_f));
    let eta = block::<TransferCase>(&d, "transfer_case").efficiency
        * block::<Differential>(&d, "differential_1").efficiency
        * (w_f + (1.0 - w_f) * block::<Differential>(&d, "inter_axle_differential").efficiency);
    let (m, theta) = (f64::from(d.chassis.mass), f64::from(GRADE).atan());
    let c_rr = d.axles[1].wheel.tire.rolling_resistance;
    let drag = |v: f64| 0.5 * d.aerodynamics.air_density * d.aerodynamics.drag_area * v * v;
    let braking = |v: f64| {
        let rpm = (i_d * v / r) * 60.0 / core::f64::consts::TAU;
        ret.max_torque * ret.curve.torque_at(rpm) * i_d / (r * eta)
    };
    let net = |v: f64| m * G * theta.sin() - c_rr * m * G * theta.cos() - drag(v) - braking(v);
    let expected = bisect(net, 0.5, 40.0);
    let drift = (speeds[44] - speeds[34]).abs();
    println!(
        "tipper on a 6 % downgrade, retarder at 1: steady {v:.3} m/s ({:.1} km/h) vs {expected:.3} m/s closed form (err {:.2} %, η {eta:.4}); drift {drift:.4} m/s over 10 s; retarder {:.0} N·m, {:.0} kW; speeds {:?}",
        v * 3.6,
        100.0 * rel(v, expected),
        sensors.torque,
        sensors.power / 1000.0,
        speeds
            .iter()
            .map(|s| (s * 100.0).round() / 100.0)
            .collect::<Vec<_>>()
    );
    assert!(rel(v, expected) < 0.03, "steady {v} m/s vs {expected} m/s");
    assert!(drift < 0.1, "speed changed {drift} m/s over the last 10 s");
    assert!(
        sensors.power > 0.5 * m * G * theta.sin() * v,
        "the retarder takes most of the slope's power: {} W",
        sensors.power
    );
}
