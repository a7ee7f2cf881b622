//! Wheel contact against closed-form geometry: the fast plane contact agrees with the full
//! shape cast, tires bridge gaps narrower than themselves, wheels do not sink into slopes, and
//! kerbs, bumps, waves, gaps and ramps shorter than a step's travel reach the body alike at
//! every rate; and the tires push a movable ground back as hard as it pushes them.

use crate::common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::{
    CoefficientCombineRule, Collider, ColliderMassProperties, ExternalForce, ExternalImpulse,
    Friction, GravityScale, LockedAxes, ReadMassProperties, RigidBody, Velocity,
};
use bevy_vehicle_physics::prelude::*;
use common::*;

/// Spawns a 200 m square slab whose top face passes through the origin, tilted by `angle`
/// (rad) about +X, as a box (convex: the fast plane contact applies) or as a two-triangle
/// mesh (not convex: every wheel casts its shape).
fn spawn_slab(app: &mut App, angle: f32, as_mesh: bool) {
    let rotation = Quat::from_rotation_x(angle);
    let collider = if as_mesh {
        let h = 100.0;
        let vertices = vec![
            Vec3::new(-h, 0.0, -h),
            Vec3::new(h, 0.0, -h),
            Vec3::new(h, 0.0, h),
            Vec3::new(-h, 0.0, h),
        ];
        Collider::trimesh(vertices, vec![[0, 2, 1], [0, 3, 2]]).expect("valid mesh")
    } else {
        Collider::cuboid(100.0, 1.0, 100.0)
    };
    let centre = if as_mesh { Vec3::ZERO } else { Vec3::NEG_Y };
    app.world_mut().spawn((
        RigidBody::Fixed,
        collider,
        Friction::coefficient(0.9),
        Transform::from_translation(rotation * centre).with_rotation(rotation),
    ));
}

/// Each wheel's (travel, contact point, normal) after `steps` steps of the default car with
/// `probe`, placed at ride height on a slab tilted by `angle`, steered by `steering`.
fn wheel_contacts(
    angle: f32,
    as_mesh: bool,
    probe: GroundProbe,
    steering: f64,
    steps: usize,
) -> Vec<(f64, Vec3, Vec3)> {
    let mut app = create_app(60.0);
    spawn_slab(&mut app, angle, as_mesh);
    let mut builder = CarBuilder::default();
    builder.wheel.probe = probe;
    let rotation = Quat::from_rotation_x(angle);
    let at = rotation * Vec3::Y * (builder.wheel.radius as f32 - builder.wheel_height);
    let car = spawn_car(
        &mut app,
        &builder,
        Transform::from_translation(at).with_rotation(rotation),
    );
    controls(&mut app, car, |c| {
        c.parking = true;
        c.steering = steering;
    });
    tick(&mut app, steps);
    wheels(&mut app, car)
        .into_iter()
        .map(|w| {
            let s = get::<WheelState>(&app, w);
            assert!(s.grounded, "wheel {w:?} in the air");
            (s.travel, s.contact_point, s.normal)
        })
        .collect()
}

/// On a plane, the fast contact (ray, then the tire's support point on the face the ray hit)
/// gives the same travel, contact point and normal as casting the tire shape: travel within
/// 0.5 mm, contact point within 2.5 mm (the cast's witness point comes from GJK, good to a
/// couple of millimetres on a tilted rim edge), and the plane's normal (the fast one within
/// 0.1 mrad, the cast's within 5 mrad), on level ground and a 20° slope, steered and not, for
/// cylinder and ball probes.
#[test]
fn fast_plane_contact_matches_the_shape_cast() {
    for probe in [GroundProbe::Cylinder, GroundProbe::Ball] {
        for angle in [0.0f32, 20f32.to_radians()] {
            for steering in [0.0, 0.8] {
                // Settled for a second, then compared: both runs must have followed the same
                // trajectory, step for step.
                let fast = wheel_contacts(angle, false, probe, steering, 60);
                let cast = wheel_contacts(angle, true, probe, steering, 60);
                for (i, (f, c)) in fast.iter().zip(&cast).enumerate() {
                    let case = format!("{probe:?}, {angle} rad, steering {steering}, wheel {i}");
                    assert!(
                        (f.0 - c.0).abs() < 5e-4,
                        "{case}: travel {} vs {}",
                        f.0,
                        c.0
                    );
                    assert!(
                        (f.1 - c.1).length() < 2.5e-3,
                        "{case}: point {} vs {}",
                        f.1,
                        c.1
                    );
                    // The fast normal is the face's own; GJK's is good to a few mrad.
                    let plane = Quat::from_rotation_x(angle) * Vec3::Y;
                    // (|a × b| is the sine of the angle, accurate where f32's acos is not.)
                    assert!(f.2.cross(plane).length() < 1e-4, "{case}: normal {}", f.2);
                    assert!(
                        c.2.cross(plane).length() < 5e-3,
                        "{case}: cast normal {}",
                        c.2
                    );
                }
            }
        }
    }
}

/// On a 30 % slope the wheel centres sit one tire radius above the slope along its normal
/// (no sinking into it): within 0.01 mm, for the cylinder probe. (The contact on a face is
/// exact; `f32` positions a couple of metres from the origin round to about 1e-7 m.)
#[test]
fn wheels_do_not_sink_into_a_slope() {
    let angle = 0.3f32.atan();
    let radius = CarBuilder::default().wheel.radius as f32;
    let mut app = create_app(60.0);
    spawn_slab(&mut app, angle, false);
    let builder = CarBuilder::default();
    let rotation = Quat::from_rotation_x(angle);
    let car = spawn_car(
        &mut app,
        &builder,
        Transform::from_translation(rotation * Vec3::Y * radius).with_rotation(rotation),
    );
    controls(&mut app, car, |c| c.parking = true);
    tick(&mut app, 120);
    let normal = rotation * Vec3::Y;
    for w in wheels(&mut app, car) {
        let s = get::<WheelState>(&app, w);
        let height = s.center.dot(normal);
        assert!(
            (height - radius).abs() < 1e-5,
            "wheel centre {height} m above the slope, radius {radius} m"
        );
    }
}

/// A slot 10 cm wide across the road under the front axle: the cylinder rests on both edges
/// and its centre drops by `R − √(R² − (g/2)²)` (4.0 mm for R = 0.316 m), not into the slot
/// (within 0.5 mm). A ray probe would fall through.
#[test]
fn tires_bridge_a_gap_narrower_than_the_tire() {
    let builder = CarBuilder::default();
    let radius = builder.wheel.radius;
    let gap = 0.10;
    let front = f64::from(builder.front_axle);
    let centre_height = |with_gap: bool| -> f64 {
        let mut app = create_app(60.0);
        // Two slabs meeting (or leaving a slot) at z = front axle.
        let half_gap = if with_gap { 0.5 * gap as f32 } else { 0.0 };
        let split = front as f32;
        for (from, to) in [(-50.0, split - half_gap), (split + half_gap, 50.0)] {
            let half = 0.5 * (to - from);
            app.world_mut().spawn((
                RigidBody::Fixed,
                Collider::cuboid(10.0, 0.5, half),
                Friction::coefficient(0.9),
                Transform::from_xyz(0.0, -0.5, from + half),
            ));
        }
        let car = spawn_car(
            &mut app,
            &builder,
            Transform::from_xyz(0.0, (radius - f64::from(builder.wheel_height)) as f32, 0.0),
        );
        controls(&mut app, car, |c| c.parking = true);
        tick(&mut app, 180);
        let w = wheels(&mut app, car)[0];
        let s = get::<WheelState>(&app, w);
        assert!(s.grounded);
        f64::from(s.center.y)
    };
    let expected = radius - (radius * radius - (0.5 * gap) * (0.5 * gap)).sqrt();
    let drop = centre_height(false) - centre_height(true);
    assert!(
        (drop - expected).abs() < 5e-4,
        "front wheel drops {drop} m over the slot, expected {expected} m"
    );
}

/// A car that drives away on a free slab pushes the slab back: the tire forces the chassis gets
/// are applied, reversed, to the dynamic body under the wheels. The slab slides on a
/// frictionless floor, so nothing outside car and slab pushes along the road but the car's
/// air drag: their momentum along the road, zero at the start, stays zero to within the drag's
/// impulse (0.3 % here; the bound is 1 % of the car's momentum), and the slab moves back at
/// `m_car·v_car / m_slab`.
#[test]
fn a_car_driving_off_a_free_slab_pushes_it_back() {
    let mut app = create_app(60.0);
    // A 2 t slab on a frictionless floor.
    let slab_mass = 2000.0;
    let slab = spawn_slab_on_frictionless_floor(&mut app, slab_mass);
    let builder = CarBuilder::default();
    let at = Vec3::Y * (builder.wheel.radius as f32 - builder.wheel_height);
    let car = spawn_car(&mut app, &builder, Transform::from_translation(at));
    controls(&mut app, car, |c| c.parking = true);
    tick(&mut app, 60);

    let momentum = |app: &App| {
        let car_mass = get::<ReadMassProperties>(app, car).mass;
        let slab_mass = get::<ReadMassProperties>(app, slab).mass;
        let (car_v, slab_v) = (velocity(app, car).z, get::<Velocity>(app, slab).linear.z);
        (car_mass * car_v, slab_mass * slab_v)
    };
    let (car0, slab0) = momentum(&app);
    controls(&mut app, car, |c| {
        c.parking = false;
        c.gear = 1;
        c.throttle = 1.0;
    });
    tick(&mut app, 180);
    let (car1, slab1) = momentum(&app);

    assert!(
        (get::<ReadMassProperties>(&app, slab).mass - slab_mass).abs() < 1e-3,
        "slab mass"
    );
    assert!(car1 < -3000.0, "the car drove off: momentum {car1} kg·m/s");
    let residual = (car1 + slab1) - (car0 + slab0);
    assert!(
        residual.abs() < 0.01 * car1.abs(),
        "momentum along the road: car {car1}, slab {slab1} (start {car0}, {slab0}) kg·m/s"
    );
}

/// The share of the body a tire's force at the ground moves, pitch and roll counted: on level
/// ground, `1/(1 + m·h²/I)` with `h` the centre of mass's height above the contact and `I` the
/// moment about the pitch axis (fore and aft) or the roll axis (sideways), to 1e-3 (the
/// chassis works in `f32`, and measured the contact a step before the body's pose is read);
/// for the default car 0.85 and 0.63.
#[test]
fn tire_forces_move_the_body_share_its_pitch_and_roll_leave() {
    let mut app = create_app(60.0);
    spawn_slab(&mut app, 0.0, false);
    let builder = CarBuilder::default();
    let at = Vec3::Y * (builder.wheel.radius as f32 - builder.wheel_height);
    let car = spawn_car(&mut app, &builder, Transform::from_translation(at));
    controls(&mut app, car, |c| c.parking = true);
    tick(&mut app, 60);
    let mass = *get::<ReadMassProperties>(&app, car).get();
    let com = get::<Transform>(&app, car).transform_point(mass.local_center_of_mass);
    let m = f64::from(builder.mass);
    let [pitch, roll] = [builder.inertia.x, builder.inertia.z].map(f64::from);
    for w in wheels(&mut app, car) {
        let s = get::<WheelState>(&app, w);
        assert!(s.grounded);
        let h = f64::from((com - s.contact_point).dot(s.normal));
        let expected = [
            1.0 / (1.0 + m * h * h / pitch),
            1.0 / (1.0 + m * h * h / roll),
        ];
        println!("h {h:.3} m: {:?} vs {expected:?}", s.body_mass_fraction);
        for (axis, (got, want)) in s.body_mass_fraction.into_iter().zip(expected).enumerate() {
            assert!(rel(got, want) < 1e-3, "axis {axis}: {got} vs {want}");
        }
    }
}

/// A light dynamic plate under a tire stays where it lies: a default car (1300 kg) parked with
/// its front-left wheel on a 0.8 m square, 6 cm plate, and one rolling at 2 m/s over a 0.6 m
/// square, 4 cm plate, at 15, 30, 60 and 120 Hz, with 0.5 and 5 kg plates. The tire's reaction
/// on a body far lighter than the tire's share of the car is held to what the slip and the
/// car's own response can give it (`reaction_scale` in `forces.rs`): before that, the whole
/// reaction over a step threw the plates at 48–400 m/s, gaining up to 400 kJ against the car's
/// 2.6 kJ. Measured 2026-12-02: plate at most 0.028 m/s parked (15 Hz; 0.001 m/s at 60 Hz) and
/// 0.027 m/s rolled over, at every rate and both masses; before the fix the first case failed
/// (15 Hz, 0.5 kg: 71 m/s parked, 230 m/s rolled over). The bound is 0.1 m/s, well under the
/// tire's 2 m/s.
#[test]
fn a_light_plate_under_a_tire_is_not_thrown() {
    let plate = |app: &mut App, mass: f32, half: Vec3, at: Vec3| {
        app.world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(half.x, half.y, half.z),
                ColliderMassProperties::Mass(mass),
                Friction::coefficient(0.6),
                Velocity::default(),
                ReadMassProperties::default(),
                Transform::from_translation(at),
            ))
            .id()
    };
    let builder = CarBuilder::default();
    let rest = |y: f32| {
        Transform::from_xyz(
            0.0,
            y + builder.wheel.radius as f32 - builder.wheel_height,
            0.0,
        )
    };
    for hz in [15.0, 30.0, 60.0, 120.0] {
        for mass in [0.5, 5.0] {
            // Parked, the front-left wheel (x = −0.75 m, z = −1.3 m) on the plate.
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let h = 0.03;
            let p = plate(
                &mut app,
                mass,
                Vec3::new(0.4, h, 0.4),
                Vec3::new(-0.75, h, -1.3),
            );
            tick(&mut app, 2);
            let car = spawn_car(&mut app, &builder, rest(2.0 * h));
            controls(&mut app, car, |c| c.parking = true);
            let front_left = wheels(&mut app, car)[0];
            let mut parked = 0.0f32;
            let mut on_plate = false;
            for _ in 0..(3.0 * hz) as usize {
                tick(&mut app, 1);
                parked = parked.max(get::<Velocity>(&app, p).linear.length());
                on_plate |= get::<WheelState>(&app, front_left).ground_body == Some(p);
            }
            assert!(
                on_plate,
                "{hz} Hz, {mass} kg: the wheel stands on the plate"
            );

            // Rolling at 2 m/s over the plate.
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let h = 0.02;
            let p = plate(
                &mut app,
                mass,
                Vec3::new(0.3, h, 0.3),
                Vec3::new(-0.75, h, -8.0),
            );
            let car = spawn_car(&mut app, &builder, rest(0.0));
            tick(&mut app, 3);
            set::<Velocity>(&mut app, car, |v| v.linear = Vec3::new(0.0, 0.0, -2.0));
            let mut rolled = 0.0f32;
            let mut steps_on = 0;
            for _ in 0..(6.0 * hz) as usize {
                tick(&mut app, 1);
                rolled = rolled.max(get::<Velocity>(&app, p).linear.length());
                for w in wheels(&mut app, car) {
                    steps_on += usize::from(get::<WheelState>(&app, w).ground_body == Some(p));
                }
            }
            println!(
                "{hz} Hz, {mass} kg: plate at most {parked:.3} m/s parked, {rolled:.3} m/s rolled over ({steps_on} wheel-steps on it)"
            );
            assert!(
                steps_on > 0,
                "{hz} Hz, {mass} kg: the wheels rolled over the plate"
            );
            assert!(
                parked < 0.1 && rolled < 0.1,
                "{hz} Hz, {mass} kg plate: {parked} m/s under a parked wheel, {rolled} m/s rolled over"
            );
        }
    }
}

/// A free slab lighter than the car but heavier than a tire's share of it (300 kg against
/// 1300 kg, about 325 kg a tire) still takes the tires' whole reaction: the car drives off it on
/// a frictionless floor with no air drag, and their momentum along the road stays zero at 15,
/// 30, 60 and 120 Hz. The bound on the reaction (`reaction_scale` in `forces.rs`) takes the
/// normal push and the friction apart, so the slab pressed onto the floor does not use up the
/// friction's share. Measured 2026-12-02: residual at most 0.11 kg·m/s of the car's 3478–3684
/// kg·m/s (0.00 %); bounding the whole reaction at once lost 0.56–0.65 % of it at 30–120 Hz.
/// The bound is 0.1 %.
#[test]
fn a_free_slab_lighter_than_the_car_takes_the_whole_reaction() {
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let slab_mass = 300.0;
        let slab = spawn_slab_on_frictionless_floor(&mut app, slab_mass);
        let mut builder = CarBuilder::default();
        builder.aerodynamics.drag_area = 0.0;
        let at = Vec3::Y * (builder.wheel.radius as f32 - builder.wheel_height);
        let car = spawn_car(&mut app, &builder, Transform::from_translation(at));
        controls(&mut app, car, |c| c.parking = true);
        tick(&mut app, hz as usize);
        let momentum = |app: &App| {
            let car_mass = get::<ReadMassProperties>(app, car).mass;
            let slab_v = get::<Velocity>(app, slab).linear.z;
            (car_mass * velocity(app, car).z, slab_mass * slab_v)
        };
        let (car0, slab0) = momentum(&app);
        controls(&mut app, car, |c| {
            c.parking = false;
            c.gear = 1;
            c.throttle = 1.0;
        });
        tick(&mut app, 3 * hz as usize);
        let (car1, slab1) = momentum(&app);
        let residual = (car1 + slab1) - (car0 + slab0);
        println!("{hz} Hz: car {car1} slab {slab1} kg·m/s, residual {residual}");
        assert!(car1 < -3000.0, "{hz} Hz: the car drove off: {car1} kg·m/s");
        assert!(
            residual.abs() < 1e-3 * car1.abs(),
            "{hz} Hz: momentum along the road: car {car1}, slab {slab1} (start {car0}, {slab0}) kg·m/s"
        );
    }
}

/// A car lying on its side or on its roof rests still, with no wheel on the ground: the
/// default car (cylinder probe) and one with the ball probe, set down on its side (rolled 90°,
/// its body's side face 1 cm above the ground) and on its roof, at 15, 30, 60 and 120 Hz. On
/// its side the lower wheels' sweeps run along the ground and meet it at 90° to their
/// suspension axes with the tires' sidewalls; a contact the suspension cannot push along
/// (`MIN_SUPPORT_FACING`) or that the tire touches with its sidewall (`MAX_LEAN_SINE`)
/// carries no load. Before, two wheels took 4–6 kN each along their axes, horizontally: the
/// car travelled 3.9–4.6 m at up to 2.5 m/s and rocked toward upright, and with the ball probe
/// it rolled back onto its wheels. Measured 2026-12-02 over the last 3 s of 6 (the body rocks
/// on its side face for up to 3 s at 15 Hz, as it does with the ray probe, whose wheels never
/// touched): at most 1.3 mm at 4.6 mm/s (15 Hz), nothing at 30–120 Hz, no wheel grounded;
/// before the fix the first case (cylinder, 15 Hz, on its side) had two wheels grounded and
/// moved 1.54 m at up to 1.23 m/s. Bounds: no wheel grounded at any step, at most 1 cm and
/// 1 cm/s over the last 3 s.
#[test]
fn a_car_on_its_side_or_roof_rests_still() {
    for probe in [GroundProbe::Cylinder, GroundProbe::Ball] {
        for hz in [15.0, 30.0, 60.0, 120.0] {
            for (what, roll, height) in [
                ("side", std::f32::consts::FRAC_PI_2, 0.86),
                ("roof", std::f32::consts::PI, 0.76),
            ] {
                let mut app = create_app(hz);
                spawn_flat_ground(&mut app, 0.9);
                let mut builder = CarBuilder::default();
                builder.wheel.probe = probe;
                let transform = Transform::from_xyz(0.0, height, 0.0)
                    .with_rotation(Quat::from_rotation_z(roll));
                let car = spawn_car(&mut app, &builder, transform);
                let mut grounded = 0;
                let mut path = 0.0f32;
                let mut speed = 0.0f32;
                let mut last = position(&app, car);
                for k in 0..(6.0 * hz) as usize {
                    tick(&mut app, 1);
                    grounded = grounded.max(get::<VehicleTelemetry>(&app, car).grounded_wheels);
                    let at = position(&app, car);
                    if k as f64 >= 3.0 * hz {
                        path += (at - last).length();
                        speed = speed.max(velocity(&app, car).length());
                    }
                    last = at;
                }
                println!(
                    "{probe:?} {hz} Hz on its {what}: {grounded} wheels grounded, moved {path:.4} m at up to {speed:.4} m/s"
                );
                assert_eq!(
                    grounded, 0,
                    "{probe:?} {hz} Hz on its {what}: wheels grounded"
                );
                assert!(
                    path < 0.01 && speed < 0.01,
                    "{probe:?} {hz} Hz on its {what}: moved {path} m at up to {speed} m/s"
                );
            }
        }
    }
}

/// Ground that is despawned carries no wheel in the next step: a default car driving slowly on
/// a 10 m square platform 2 m up (fixed, and a free 2 t body), at 15, 30, 60 and 120 Hz; the
/// platform is despawned with all four wheels on it. Rapier keeps a despawned collider in its
/// query pipeline until its next step, after the probes. Measured 2026-12-02: in the step after
/// the despawn no wheel is grounded or names the platform, and the car falls the 2 m at every
/// rate; before the fix every wheel stood on the gone platform for that step (3414 N on the
/// front left at 15 Hz).
#[test]
fn despawned_ground_carries_no_wheel() {
    for hz in [15.0, 30.0, 60.0, 120.0] {
        for dynamic in [false, true] {
            let mut app = create_app(hz);
            spawn_flat_ground(&mut app, 0.9);
            let mut platform = app.world_mut().spawn((
                Collider::cuboid(5.0, 0.1, 5.0),
                Friction::coefficient(0.9),
                Transform::from_xyz(0.0, 1.9, 0.0),
            ));
            if dynamic {
                platform.insert((
                    RigidBody::Dynamic,
                    ColliderMassProperties::Mass(2000.0),
                    ExternalImpulse::default(),
                    Velocity::default(),
                ));
            } else {
                platform.insert(RigidBody::Fixed);
            }
            let platform = platform.id();
            tick(&mut app, 2);
            let builder = CarBuilder::default();
            let rest = 2.0 + builder.wheel.radius as f32 - builder.wheel_height;
            let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, rest, 0.0));
            controls(&mut app, car, |c| {
                c.gear = 1;
                c.throttle = 0.3;
            });
            tick(&mut app, hz as usize);
            let wheels = wheels(&mut app, car);
            let on = |app: &App| {
                wheels
                    .iter()
                    .filter(|&&w| {
                        let s = get::<WheelState>(app, w);
                        s.grounded && s.ground == Some(platform)
                    })
                    .count()
            };
            assert_eq!(on(&app), 4, "{hz} Hz: the car stands on the platform");
            app.world_mut().despawn(platform);
            tick(&mut app, 1);
            let loads: Vec<f64> = wheels
                .iter()
                .map(|&w| get::<WheelState>(&app, w).load)
                .collect();
            println!(
                "{hz} Hz, dynamic {dynamic}: after the despawn {} wheels on it, loads {loads:?} N",
                on(&app)
            );
            assert_eq!(
                on(&app),
                0,
                "{hz} Hz, dynamic {dynamic}: wheels on the gone platform"
            );
            assert!(
                loads.iter().all(|&l| l == 0.0),
                "{hz} Hz, dynamic {dynamic}: loads {loads:?} N with nothing under the wheels"
            );
            tick(&mut app, hz as usize);
            assert!(
                position(&app, car).y < 1.0,
                "{hz} Hz, dynamic {dynamic}: the car fell to the floor"
            );
        }
    }
}

/// A frictionless floor (the `Min` rule wins over the slab's `Average`), its top at
/// y = −0.2 m, and on it a free slab of `mass` (kg), 20 m × 0.2 m × 200 m, its top at y = 0,
/// with friction 0.9; returns the slab.
fn spawn_slab_on_frictionless_floor(app: &mut App, mass: f32) -> Entity {
    let floor = Friction {
        coefficient: 0.0,
        combine_rule: CoefficientCombineRule::Min,
    };
    spawn_slab_on_floor(app, [10.0, 100.0], mass, floor)
}

/// A braked car on a deck that a force pushes along: a free 100 t deck, weightless and held
/// level, pushed from rest at 2 m/s² along the car for 10 s. The car, on its brakes at full
/// pedal, rides with it: over the last 5 s it moves less than 1 mm/s over the deck, at 15, 30,
/// 60 and 120 Hz (measured 2026-12-02: 0.66 / 0.31 / 0.15 / 0.07 mm/s). Rapier moves a body
/// whose velocity changes within the step by less than its velocity at the step's end times
/// the step (`Δv·(n−1)/(2n)·dt` less, over its `n` moves); the probe took the deck's move as
/// its velocity times the step, and the held tires let the car creep ahead over the deck at
/// `0.375·a·dt` (36.7 / 25.1 / 12.6 / 6.3 mm/s; an outside test's).
#[test]
fn a_braked_car_keeps_its_place_on_a_deck_pushed_along() {
    let (mass, a) = (100_000.0f32, 2.0f32);
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let deck = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(1000.0, 0.5, 1000.0),
                ColliderMassProperties::Mass(mass),
                GravityScale(0.0),
                LockedAxes::ROTATION_LOCKED | LockedAxes::TRANSLATION_LOCKED_Y,
                Friction::coefficient(0.9),
                Velocity::zero(),
                ExternalForce::default(),
                Transform::from_xyz(0.0, -0.5, 0.0),
            ))
            .id();
        let builder = CarBuilder::default();
        let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, 0.35, 0.0));
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, hz as usize);
        let car_mass = builder.mass;
        set::<ExternalForce>(&mut app, deck, |f| {
            f.force = Vec3::NEG_Z * a * (mass + car_mass);
        });
        let over_deck = |app: &App| position(app, car) - get::<Transform>(app, deck).translation;
        tick(&mut app, (5.0 * hz) as usize);
        let before = over_deck(&app);
        tick(&mut app, (5.0 * hz) as usize);
        let creep = (over_deck(&app) - before).length() / 5.0;
        let speed = get::<Velocity>(&app, deck).linear.length();
        println!(
            "{hz} Hz: deck at {speed:.2} m/s, the car creeps {:.2} mm/s over it",
            creep * 1e3
        );
        assert!((speed - 20.0).abs() < 0.2, "{hz} Hz: deck at {speed} m/s");
        assert!(creep < 1e-3, "{hz} Hz: creeps {creep} m/s over the deck");
    }
}

/// A braked car set down on a free slab (on a frictionless floor) stands still on it, and its
/// tires count the slab's give. Closed form: each tire's fore-and-aft share of the body
/// (`WheelState::body_mass_fraction`) on the slab is the one on fixed ground with the slab's
/// give added, `1/(1/f + M/m)` (`M` the car's mass, `m` the slab's; the slab's turning adds
/// under 0.1 %), to 0.5 %; and the car, on its brakes and parking lock and never driven, moves
/// over the slab at under 5 mm/s (along the ground) in seconds 5–10, on slabs of 3000, 800 and
/// 400 kg from 20 Hz up, and on 3000 kg at 15 Hz. Before the give was counted (the tires took
/// the slab for fixed ground within the step) the pair rang: 0.31 / 0.87 m/s on 800 / 400 kg
/// at 30 Hz, 1.57 / 2.11 m/s at 15 Hz, 0.12 m/s on 3000 kg at 15 Hz.
///
/// A slab its floor holds by friction (μ 0.9) gives nothing before the friction lets go: its
/// shares are those on fixed ground, and the car stands as still on a 5 kg mat and on a
/// 400 kg slab at 15, 30 and 120 Hz. Taken for a free body, the mat let the car slide over
/// it at 1.2–2.2 m/s from 15 to 60 Hz.
#[test]
fn a_braked_car_stands_still_on_a_free_slab() {
    let builder = CarBuilder::default();
    let set_down = Transform::from_xyz(0.0, car_rest_height(&builder), 0.0);
    // The shares on fixed ground, the floor's top at y = 0 as the slab's is.
    let fixed: Vec<f64> = {
        let mut app = create_app(60.0);
        app.world_mut().spawn((
            RigidBody::Fixed,
            Collider::cuboid(200.0, 1.0, 200.0),
            Transform::from_xyz(0.0, -1.0, 0.0),
        ));
        let car = spawn_car(&mut app, &builder, set_down);
        controls(&mut app, car, |c| c.brake = 1.0);
        tick(&mut app, 60);
        wheels(&mut app, car)
            .into_iter()
            .map(|w| get::<WheelState>(&app, w).body_mass_fraction[0])
            .collect()
    };
    for (slab_mass, floor_friction, rates) in [
        (3000.0f32, 0.0, &[15.0, 20.0, 30.0, 60.0, 120.0][..]),
        (800.0, 0.0, &[20.0, 30.0, 60.0, 120.0][..]),
        (400.0, 0.0, &[20.0, 30.0, 60.0, 120.0][..]),
        (400.0, 0.9, &[15.0, 30.0, 120.0][..]),
        (5.0, 0.9, &[15.0, 30.0, 120.0][..]),
    ] {
        for &hz in rates {
            let mut app = create_app(hz);
            let slab = spawn_slab_on_frictionless_floor(&mut app, slab_mass);
            if floor_friction > 0.0 {
                // The floor is the other body the helper spawned.
                let floor = app
                    .world_mut()
                    .query_filtered::<Entity, With<RigidBody>>()
                    .iter(app.world())
                    .find(|&e| e != slab)
                    .expect("the floor");
                set::<Friction>(&mut app, floor, |f| {
                    *f = Friction::coefficient(floor_friction)
                });
            }
            let car = spawn_car(&mut app, &builder, set_down);
            controls(&mut app, car, |c| {
                c.brake = 1.0;
                c.parking = true;
            });
            tick(&mut app, (5.0 * hz) as usize);
            let car_mass = f64::from(get::<ReadMassProperties>(&app, car).mass);
            for (w, f) in wheels(&mut app, car).into_iter().zip(&fixed) {
                let got = get::<WheelState>(&app, w).body_mass_fraction[0];
                let expected = if floor_friction > 0.0 {
                    *f
                } else {
                    1.0 / (1.0 / f + car_mass / f64::from(slab_mass))
                };
                assert!(
                    (got - expected).abs() < 5e-3 * expected,
                    "{slab_mass} kg, {hz} Hz: share {got} against {expected}"
                );
            }
            let mut peak = 0.0f32;
            for _ in 0..(5.0 * hz) as usize {
                tick(&mut app, 1);
                let over = velocity(&app, car) - get::<Velocity>(&app, slab).linear;
                peak = peak.max(over.with_y(0.0).length());
            }
            println!(
                "{slab_mass} kg slab, floor μ {floor_friction}, {hz} Hz: the car moves up to {:.2} mm/s over it",
                peak * 1e3
            );
            assert!(
                peak < 5e-3,
                "{slab_mass} kg, {hz} Hz: {peak} m/s over the slab"
            );
        }
    }
}

/// Spawns a kinematic slab 100 m wide and `half_length` (m) long each way along Z, its top at
/// y = 0, friction 0.9, moved by its pose (`by_pose`) or by its velocity, starting at
/// `velocity` (m/s).
fn spawn_kinematic_slab(app: &mut App, by_pose: bool, half_length: f32, velocity: Vec3) -> Entity {
    let body = if by_pose {
        RigidBody::KinematicPositionBased
    } else {
        RigidBody::KinematicVelocityBased
    };
    spawn_kinematic_box(
        app,
        body,
        Vec3::new(50.0, 0.5, half_length),
        0.9,
        Velocity::linear(velocity),
    )
}

/// The body's heave amplitude, over the ground's, with a kinematic box under the car heaving
/// 5 mm at `r` times the car's heave frequency, driven by its pose or its velocity (set
/// before each step so that it passes the sinusoid's points at the steps' ends): the
/// default car balanced (`l_f = l_r`) on 30 kN/m springs at a damping ratio of 0.1, measured
/// over the last 6 s of 16 by the response's component at the input's frequency.
fn heaving_ground_gain(hz: f64, r: f64, by_pose: bool) -> f64 {
    let (k, m, zeta, amplitude) = (30_000.0, 1300.0, 0.1, 0.005);
    let c = 2.0 * zeta * (k * m / 4.0f64).sqrt();
    let mut car = CarBuilder {
        center_of_mass: Vec3::new(0.0, 0.184, 0.0),
        ..default()
    };
    car.wheel.suspension.stiffness = k;
    car.wheel.suspension.bump_damping = c;
    car.wheel.suspension.rebound_damping = c;
    let mut app = create_app(hz);
    let ground = spawn_kinematic_slab(&mut app, by_pose, 50.0, Vec3::ZERO);
    tick(&mut app, 1);
    let e = spawn_car_at_rest(&mut app, &car);
    tick(&mut app, (hz * 2.0) as usize);
    let omega = r * (4.0 * k / m).sqrt();
    let dt = 1.0 / hz;
    let rest = f64::from(position(&app, e).y);
    let (mut re, mut im, mut n) = (0.0, 0.0, 0);
    for i in 0..(hz * 16.0) as usize {
        let (t, end) = (i as f64 * dt, (i + 1) as f64 * dt);
        let height = |t: f64| amplitude * (omega * t).sin();
        if by_pose {
            set::<Transform>(&mut app, ground, |g| {
                g.translation.y = (height(end) - 0.5) as f32;
            });
        } else {
            set::<Velocity>(&mut app, ground, |g| {
                g.linear.y = ((height(end) - height(t)) / dt) as f32;
            });
        }
        tick(&mut app, 1);
        if end > 10.0 {
            let y = f64::from(position(&app, e).y) - rest;
            re += y * (omega * end).cos();
            im += y * (omega * end).sin();
            n += 1;
        }
    }
    2.0 * re.hypot(im) / f64::from(n) / amplitude
}

/// A car on heaving ground rides as the rigid body on its springs and dampers would: its
/// heave's gain over the ground's at 1, 2 and 3 times its heave frequency (1.53 Hz, ζ 0.1)
/// against the closed form's `√((1 + (2ζr)²)/((1 − r²)² + (2ζr)²))`, times the
/// `sinc²(ω·dt/2)` of the ground as Rapier moves it: along the chord between the poses it
/// is given, step by step (7.4 % under the sinusoid at 3 times at 30 Hz). Within 6 % at
/// 30 Hz and 1.5 % from 60 Hz, driven by pose and by velocity; measured +1.3 / −2.9 / −5.2 %
/// at 30 Hz, +1.0 / −0.6 / −1.3 % at 60 Hz, alike both ways.
///
/// Until 2026-12-04 the wheels read the box's velocity from Rapier, which takes the game's
/// in only when it steps, so it was the last step's, and its change since the step before
/// was carried on over the coming step as the body's acceleration is: +6.9 / +20.9 /
/// +47.8 % at 30 Hz, +2.9 / +7.1 / +15.1 % at 60 Hz (+22 / +71 / +147 % at 15 Hz, now
/// +2.0 / −11.9 / −23.5 %).
#[test]
fn a_car_on_heaving_ground_rides_as_its_springs_and_dampers_give() {
    for hz in [30.0, 60.0, 120.0] {
        for r in [1.0, 2.0, 3.0] {
            let zeta: f64 = 0.1;
            let closed = ((1.0 + (2.0 * zeta * r).powi(2))
                / ((1.0 - r * r).powi(2) + (2.0 * zeta * r).powi(2)))
            .sqrt();
            let half_step = r * (4.0 * 30_000.0 / 1300.0f64).sqrt() / hz / 2.0;
            let held = (half_step.sin() / half_step).powi(2);
            for by_pose in [false, true] {
                let gain = heaving_ground_gain(hz, r, by_pose) / (closed * held);
                println!(
                    "{hz} Hz, {r} × f_n, by {}: {:+.2} %",
                    if by_pose { "pose" } else { "velocity" },
                    (gain - 1.0) * 100.0
                );
                let tolerance = if hz < 60.0 { 0.06 } else { 0.015 };
                assert!(
                    (gain - 1.0).abs() < tolerance,
                    "{hz} Hz, {r} × f_n, by pose {by_pose}: {gain} of the closed form"
                );
            }
        }
    }
}

/// A braked car holds its place on a kinematic deck that accelerates under it below `μg`:
/// the default car, brakes and parking lock on, on a deck moving at 10 m/s along the car's
/// heading that then accelerates at 4 m/s² for 4 s, driven by its velocity (set before each
/// step) and by its pose (moved before each step), at 15, 20, 30, 60 and 120 Hz. Closed
/// form: the car accelerates with the deck and does not move over it. Asserted: its
/// acceleration over seconds 1–2 within 0.5 % of the deck's, and its mean speed over the
/// deck in seconds 2–4 under 3 mm/s (measured 2026-12-04: 0.74 / 0.15 / 0.05 mm/s at 15 / 20
/// / 30 Hz and under 0.06 from 60 Hz; 2.1 / 0.5 / 0.2 mm/s while the deck's change was read
/// from Rapier's velocity, a step late). Rapier moves a kinematic body at one velocity over a
/// step; taken as accelerating within the step, the deck's point ran half a step's change
/// ahead of the braked patch, which slid at 45 mm/s at 15 Hz (20 mm/s at 20 Hz).
#[test]
fn a_braked_car_keeps_its_place_on_an_accelerating_kinematic_deck() {
    let accel = Vec3::NEG_Z * 4.0;
    for by_pose in [false, true] {
        for hz in [15.0, 20.0, 30.0, 60.0, 120.0] {
            let mut app = create_app(hz);
            let dt = fixed_dt(&app) as f32;
            let mut deck_velocity = Vec3::NEG_Z * 10.0;
            let deck = spawn_kinematic_slab(
                &mut app,
                by_pose,
                3000.0,
                if by_pose { Vec3::ZERO } else { deck_velocity },
            );
            let builder = CarBuilder::default();
            let car = spawn_car_at_rest(&mut app, &builder);
            controls(&mut app, car, |c| {
                c.brake = 1.0;
                c.parking = true;
            });
            set::<Velocity>(&mut app, car, |v| v.linear = deck_velocity);
            // One step with the deck at `deck_velocity`, raised by `a·dt` first (its pose
            // moved by the step's mean velocity, exact for a constant acceleration).
            let mut step = |app: &mut App, a: Vec3| {
                let mean = deck_velocity + a * dt * 0.5;
                deck_velocity += a * dt;
                if by_pose {
                    set::<Transform>(app, deck, |t| t.translation += mean * dt);
                } else {
                    let v = deck_velocity;
                    set::<Velocity>(app, deck, |vel| vel.linear = v);
                }
                tick(app, 1);
            };
            let steps = |seconds: f64| (seconds * hz).round() as usize;
            for _ in 0..steps(3.0) {
                step(&mut app, Vec3::ZERO);
            }
            let over_deck =
                |app: &App| position(app, car) - get::<Transform>(app, deck).translation;
            for _ in 0..steps(1.0) {
                step(&mut app, accel);
            }
            let v1 = velocity(&app, car);
            for _ in 0..steps(1.0) {
                step(&mut app, accel);
            }
            let followed = (velocity(&app, car) - v1).z / -1.0;
            let before = over_deck(&app);
            for _ in 0..steps(2.0) {
                step(&mut app, accel);
            }
            let slide = (over_deck(&app) - before).length() / 2.0;
            println!(
                "by pose {by_pose}, {hz} Hz: the car at {followed:.4} m/s², {:.3} mm/s over the deck",
                slide * 1e3
            );
            assert!(
                (followed - 4.0).abs() < 0.02,
                "by pose {by_pose}, {hz} Hz: the car at {followed} m/s²"
            );
            assert!(
                slide < 3e-3,
                "by pose {by_pose}, {hz} Hz: {slide} m/s over the deck"
            );
        }
    }
}

/// A braked car on a turntable turns with it: the default car, brakes on, set down 6 m out on
/// a table turning at 0.5 rad/s (1.5 m/s² toward its axis), facing along the table's motion and
/// moving with it, at 15, 30, 60 and 120 Hz: over 30 s (from 5 s on) it moves less than 5 mm
/// toward or away from the table's axis, and less than 2 mm/s along the table's motion.
///
/// Rapier moves a body's centre of mass by its substeps' end velocities, so a car riding along
/// an arc ends each step at a velocity `a·dt/(2n)` short of the arc's tangent there, where the
/// table's own point turns exactly; the tires read that as a slip outward and the car crept
/// toward the axis at `a·dt/(2n)`. Measured 2026-12-02, moved toward the axis in 30 s: 360 /
/// 184 / 93 / 47 mm at 15 / 30 / 60 / 120 Hz before, 1.4 / 0.3 / 0.1 / 0.1 mm after (outward;
/// 1.9 / 0.2 / 0.0 / 0.0 mm since 2026-12-04, the table's velocity taken as given for the
/// coming step).
/// Along the table's motion it lags by 0.8 / 1.2 / 1.3 / 1.4 mm/s, nearly alike at every rate
/// (see `docs/known_gaps.md`).
#[test]
fn a_braked_car_turns_with_a_turntable() {
    let (spin, radius) = (0.5f32, 6.0f32);
    for hz in [15.0, 30.0, 60.0, 120.0] {
        let mut app = create_app(hz);
        let table = spawn_kinematic_box(
            &mut app,
            RigidBody::KinematicVelocityBased,
            Vec3::new(30.0, 0.5, 30.0),
            0.9,
            Velocity::angular(Vec3::Y * spin),
        );
        let car = spawn_car(
            &mut app,
            &CarBuilder::default(),
            Transform::from_xyz(radius, 0.35, 0.0),
        );
        controls(&mut app, car, |c| c.brake = 1.0);
        set::<Velocity>(&mut app, car, |v| {
            v.linear = Vec3::NEG_Z * spin * radius;
            v.angular = Vec3::Y * spin;
        });
        // The car's place in the table's frame.
        let on_table = |app: &App| {
            let t = get::<Transform>(app, table);
            t.rotation.inverse() * (position(app, car) - t.translation)
        };
        tick(&mut app, (5.0 * hz) as usize);
        let before = on_table(&app);
        tick(&mut app, (30.0 * hz) as usize);
        let moved = on_table(&app) - before;
        // It started at +X on the table, moving along −Z.
        let (across, along) = (moved.x, -moved.z / 30.0);
        println!(
            "{hz} Hz: {:.1} mm away from the axis, {:.2} mm/s along the table's motion",
            across * 1e3,
            along * 1e3
        );
        assert!(
            across.abs() < 5e-3,
            "{hz} Hz: {across} m away from the axis"
        );
        assert!(along.abs() < 2e-3, "{hz} Hz: {along} m/s along the table");
    }
}

/// A car stopped on its brakes far from the origin stands still: the default car, braked at
/// 0.6 from 20 m/s along +X on a flat road at x = 0, 5 km and 50 km (where an `f32` position
/// steps by 0.5 and 3.9 mm), keeps below 1 mm/s from 2 s after it stopped, over 20 s, at
/// 60 Hz, and moves less than 1 mm.
///
/// A held tire's patch is anchored by how far its wheel centre moved over the ground. Far out
/// along the car's heading the centre's coordinate there did not change while the body rocked
/// on its tires (its other coordinates did), and the move of 0 read from it held the patches
/// against a velocity the body could never turn into a move. Measured 2026-12-02 (an outside
/// test of what an open-world game does): before, the car kept 1.9 / 4.7 mm/s at 5 / 50 km
/// (10 mm/s at 1000 km) and rocked at up to 0.014 rad/s; after, at most 1.9e-4 m/s at every
/// distance up to 1000 km, as at the origin (over the last 10 s of a minute 1.4e-6 m/s on
/// average).
#[test]
fn a_car_stopped_far_from_the_origin_stands_still() {
    let builder = CarBuilder::default();
    let height = car_rest_height(&builder);
    for x in [0.0f32, 5e3, 5e4] {
        let mut app = create_app(60.0);
        app.world_mut().spawn((
            RigidBody::Fixed,
            Collider::cuboid(2000.0, 0.5, 30.0),
            Friction::coefficient(0.9),
            Transform::from_xyz(x + 1500.0, -0.5, 0.0),
        ));
        let facing_x = Quat::from_rotation_y(-core::f32::consts::FRAC_PI_2);
        let car = spawn_car(
            &mut app,
            &builder,
            Transform::from_xyz(x, height, 0.0).with_rotation(facing_x),
        );
        tick(&mut app, 30);
        flying_start(&mut app, car, 20.0);
        controls(&mut app, car, |c| {
            c.brake = 0.6;
            c.gear = 0;
        });
        let mut steps = 0;
        while velocity(&app, car).length() > 0.05 {
            assert!(steps < 600, "x = {x} m: not stopped in 10 s");
            tick(&mut app, 1);
            steps += 1;
        }
        tick(&mut app, 120);
        let start = position(&app, car);
        let mut fastest: f32 = 0.0;
        for _ in 0..20 * 60 {
            tick(&mut app, 1);
            fastest = fastest.max(velocity(&app, car).length());
        }
        let moved = (position(&app, car) - start).length();
        println!(
            "x = {x} m: at most {fastest:.1e} m/s, moved {:.3} mm in 20 s",
            moved * 1e3
        );
        assert!(fastest < 1e-3, "x = {x} m: {fastest} m/s");
        assert!(moved < 1e-3, "x = {x} m: moved {moved} m");
    }
}

/// Each wheel's load (N) over `seconds` (s) of the default car with `probe` coasting along −Z
/// from 30 m/s at 60 Hz over the flat road `ground` spawns (its top at y = 0).
fn loads_coasting_over(
    probe: GroundProbe,
    seconds: f64,
    ground: impl FnOnce(&mut App),
) -> Vec<f64> {
    let mut app = create_app(60.0);
    ground(&mut app);
    let mut builder = CarBuilder::default();
    builder.wheel.probe = probe;
    let height = car_rest_height(&builder);
    let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, height, 0.0));
    tick(&mut app, 1);
    flying_start(&mut app, car, 30.0);
    let wheels = wheels(&mut app, car);
    let mut loads = Vec::new();
    for _ in 0..(seconds * 60.0) as usize {
        tick(&mut app, 1);
        loads.extend(wheels.iter().map(|&w| get::<WheelState>(&app, w).load));
    }
    loads
}

/// A road of boxes laid end to end rides as one box: the default car coasting from 30 m/s at
/// 60 Hz over 2 m boxes meets each seam as flat road, with the cylinder and the ball probe:
/// every wheel's load, step by step over 1.5 s (22 seams), within 1 N of the same run on one
/// box.
///
/// Where two colliders met under a tire the probe cast the tire through the world, which met
/// the seam as the corner of the box ahead, with that corner's normal (tilted by about 1.4°);
/// at 30 m/s that read as 0.7 m/s on the damper. Measured 2026-12-02 (an outside test of
/// driving on terrain): before, this test's loads differed by up to 103 N, and in the outside
/// test's runs wheel loads jumped by up to 3.0 kN (cylinder) and 1.9 kN (ball) at the seams,
/// a wheel carrying 267 N of its 2 869 N for a step; after, the loads equal the one box's to
/// the last bit, on box roads and on terrain in 10 m tiles of mesh or heightfield alike.
#[test]
fn a_road_of_boxes_end_to_end_rides_as_one_box() {
    let road = |boxes: usize, length: f32| {
        move |app: &mut App| {
            for i in 0..boxes {
                app.world_mut().spawn((
                    RigidBody::Fixed,
                    Collider::cuboid(4.0, 0.5, 0.5 * length),
                    Friction::coefficient(0.9),
                    Transform::from_xyz(0.0, -0.5, 10.0 - (i as f32 + 0.5) * length),
                ));
            }
        }
    };
    for probe in [GroundProbe::Cylinder, GroundProbe::Ball] {
        let one = loads_coasting_over(probe, 1.5, road(1, 80.0));
        let many = loads_coasting_over(probe, 1.5, road(40, 2.0));
        let worst = one
            .iter()
            .zip(&many)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!("{probe:?}: loads within {worst:.3} N of one box's");
        assert!(
            worst < 1.0,
            "{probe:?}: a wheel's load differs by {worst} N"
        );
    }
}

/// A car parks on a heightfield slope with every probe: the default car on its parking lock,
/// set down on a 30 % grade built as a heightfield of 1 m cells, stands still after 5 s (below
/// 0.1 mm/s over the next 2 s) at 30, 60 and 120 Hz, with the ball, cylinder and ray probes.
///
/// On a plane of level triangles each neighbour of the triangle under a tire ties with it in
/// how soon the tire reaches its plane; rounded a hair sooner, it was cast against exactly, and
/// the cast met its edge, whose normal was off by up to 3°. Measured 2026-12-02 (the outside
/// test of driving on terrain): before, the ball probe kept the car rocking at 1.2–5.1 mm/s
/// with loads swinging by 13–75 N; after, still.
#[test]
fn a_car_parks_on_a_heightfield_slope_with_any_probe() {
    let grade = 0.3f32;
    let rotation = Quat::from_rotation_x(grade.atan());
    for hz in [30.0, 60.0, 120.0] {
        for probe in [GroundProbe::Ball, GroundProbe::Cylinder, GroundProbe::Ray] {
            let mut app = create_app(hz);
            // 8 m wide, 120 m long, rising toward −Z; its heights are its y scale's share.
            let (rows, columns) = (121, 9);
            let heights = (0..columns)
                .flat_map(|_| (0..rows).map(|i| -grade * (i as f32 - 60.0)))
                .collect();
            app.world_mut().spawn((
                RigidBody::Fixed,
                Collider::heightfield(heights, rows, columns, Vec3::new(8.0, 1.0, 120.0)),
                Friction::coefficient(0.9),
                Transform::IDENTITY,
            ));
            tick(&mut app, 1);
            let mut builder = CarBuilder::default();
            builder.wheel.probe = probe;
            let up = rotation * Vec3::Y;
            let height = car_rest_height(&builder);
            let car = spawn_car(
                &mut app,
                &builder,
                Transform::from_translation(up * height).with_rotation(rotation),
            );
            controls(&mut app, car, |c| c.parking = true);
            tick(&mut app, (5.0 * hz) as usize);
            let mut fastest: f32 = 0.0;
            for _ in 0..(2.0 * hz) as usize {
                tick(&mut app, 1);
                fastest = fastest.max(velocity(&app, car).length());
            }
            println!("{probe:?} at {hz} Hz: at most {:.2e} m/s", fastest);
            assert!(fastest < 1e-4, "{probe:?} at {hz} Hz: {fastest} m/s");
        }
    }
}

/// Ground swapped under a car in one frame carries it on: the default car parked on a box, at
/// 30 and 60 Hz, whose box the game despawns while spawning a triangle mesh of the same top (a
/// streamed terrain tile replaced) stands on with all four wheels grounded and its body's
/// vertical speed below 1 mm/s over the step; and one whose box is despawned with nothing in
/// its place drops its wheels at once.
///
/// Rapier queries a new collider only from its next step, and the old one was not probed once
/// despawned: measured 2026-12-02 (the outside test of driving on terrain), the car fell for a
/// step at `g·dt` (0.33 / 0.16 m/s at 30 / 60 Hz).
#[test]
fn ground_swapped_under_a_car_in_one_frame_carries_it_on() {
    let spawn_box = |app: &mut App| {
        app.world_mut()
            .spawn((
                RigidBody::Fixed,
                Collider::cuboid(50.0, 0.5, 50.0),
                Friction::coefficient(0.9),
                Transform::from_xyz(0.0, -0.5, 0.0),
            ))
            .id()
    };
    for hz in [30.0, 60.0] {
        for replaced in [true, false] {
            let mut app = create_app(hz);
            let ground = spawn_box(&mut app);
            let builder = CarBuilder::default();
            let height = car_rest_height(&builder);
            let car = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, height, 0.0));
            tick(&mut app, (2.0 * hz) as usize);
            app.world_mut().despawn(ground);
            if replaced {
                let h = 50.0;
                let vertices = vec![
                    Vec3::new(-h, 0.0, -h),
                    Vec3::new(h, 0.0, -h),
                    Vec3::new(h, 0.0, h),
                    Vec3::new(-h, 0.0, h),
                ];
                app.world_mut().spawn((
                    RigidBody::Fixed,
                    Collider::trimesh(vertices, vec![[0, 2, 1], [0, 3, 2]]).expect("valid mesh"),
                    Friction::coefficient(0.9),
                    Transform::IDENTITY,
                ));
            }
            tick(&mut app, 1);
            let grounded = wheels(&mut app, car)
                .into_iter()
                .filter(|&w| get::<WheelState>(&app, w).grounded)
                .count();
            let sink = -velocity(&app, car).y;
            println!(
                "{hz} Hz, replaced {replaced}: {grounded} wheels grounded, sinking at {sink:.4} m/s"
            );
            if replaced {
                assert_eq!(grounded, 4, "{hz} Hz: wheels grounded on the new ground");
                assert!(sink.abs() < 1e-3, "{hz} Hz: sinking at {sink} m/s");
            } else {
                assert_eq!(grounded, 0, "{hz} Hz: wheels grounded on no ground");
            }
        }
    }
}

/// The energy of `cars` (J): their bodies' kinetic energy (translation and rotation about the
/// centre of mass, `builder`'s mass and principal inertia), their weight's potential energy
/// above the ground (`G·m·y` of the centre of mass), and the energy in their suspension
/// springs and bump stops at each wheel's travel (`∫ F(x, 0) dx` from full extension, by the
/// midpoint rule in 1 mm steps). The wheels' spin is left out: parked, it is nil.
fn cars_energy(app: &mut App, builder: &CarBuilder, cars: &[Entity]) -> f64 {
    let m = f64::from(builder.mass);
    let inertia = builder.inertia.as_dvec3();
    let mut energy = 0.0;
    for &car in cars {
        let v = get::<Velocity>(app, car);
        let t = get::<Transform>(app, car);
        let w = (t.rotation.inverse() * v.angular).as_dvec3();
        let com = t.transform_point(builder.center_of_mass);
        energy += 0.5 * m * v.linear.as_dvec3().length_squared()
            + 0.5 * (w * w).dot(inertia)
            + m * G * f64::from(com.y);
        for wheel in wheels(app, car) {
            let (state, suspension) =
                (get::<WheelState>(app, wheel), get::<Suspension>(app, wheel));
            let mut x = -suspension.extension_limit;
            while x < state.travel {
                let dx = (state.travel - x).min(1e-3);
                energy += suspension.force(x + 0.5 * dx, 0.0) * dx;
                x += dx;
            }
        }
    }
    energy
}

/// A pile of cars set down overlapping (three default cars, each 5 cm above the last, as a
/// game's spawner may drop them) gains no energy once it has come apart, at 30 and 60 Hz: from
/// 1 s on, the pile's energy — kinetic, potential and in the suspension springs
/// ([`cars_energy`]) — rises by at most 6 % of its energy at 1 s, and no car rises more than
/// 0.1 m above where the third car stands on the other two on its wheels (its origin 2.45 m
/// up). By 1 s the tires that began inside the body below have pushed their cars out onto its
/// roof, and the pile stands as a tower.
///
/// The tires' reactions on another vehicle were handed over as one `ExternalImpulse` inserted
/// per wheel, so only the last wheel's of a step reached it: each upper car was pushed up by
/// four tires and its lower car pushed down by one, a net force on the pair that threw the
/// top car clear. Measured 2026-12-02: before, the top car rose to 3.05 m at 30 Hz and 3.73 m
/// at 60 Hz (energy at 1 s 71.8 and 83.1 kJ); after, to 2.50 and 2.48 m, the energy from
/// 1 s rising by 2.1 % and 0.7 % (60.9 to 62.2 kJ, 61.6 to 62.0 kJ).
///
/// The bound was 3 % until 2026-12-04, when tires off the ground stopped carrying their old
/// slips and the pile took another path: at 30 Hz the middle car, rolling at 2 rad/s, swung
/// two wheels that had found no ground within reach over the lower car's roof, and their
/// probes found it at full compression in one step. The springs and bump stops then held
/// their whole energy at once without the body having done the work (2.2 kJ in one step,
/// +5.0 % of the pile's; 60 Hz +0.8 %): the same travel jump as a kerb's edge, which a raycast
/// suspension cannot avoid (`docs/known_gaps.md`). The bound is 6 %; the signature of the
/// fault this test guards (+18 to +35 %, a car thrown 0.6 to 1.3 m clear) is far past it.
#[test]
fn a_pile_of_cars_gains_no_energy_once_apart() {
    let mut failures = Vec::new();
    for hz in [30.0, 60.0] {
        let mut app = create_app(hz);
        spawn_flat_ground(&mut app, 0.9);
        let builder = CarBuilder::default();
        let rest = builder.wheel.radius as f32 - builder.wheel_height;
        let cars: Vec<Entity> = (0..3)
            .map(|i| {
                let at = Vec3::Y * (rest + 0.05 * i as f32);
                spawn_car(&mut app, &builder, Transform::from_translation(at))
            })
            .collect();
        // The third car standing on the other two, each on its wheels on the roof below.
        let roof = builder.body_center.y + builder.body_half_extents.y;
        let tower = rest + 2.0 * (roof + rest);
        tick(&mut app, hz as usize);
        let start = cars_energy(&mut app, &builder, &cars);
        let mut most = start;
        let mut highest: f32 = 0.0;
        for _ in 0..(5.0 * hz) as usize {
            tick(&mut app, 1);
            most = most.max(cars_energy(&mut app, &builder, &cars));
            for &car in &cars {
                highest = highest.max(position(&app, car).y);
            }
        }
        println!(
            "{hz} Hz: energy at 1 s {:.1} kJ, most after {:.1} kJ ({:+.1} %), highest car {highest:.2} m (on two cars {tower:.2} m)",
            start / 1e3,
            most / 1e3,
            100.0 * (most / start - 1.0)
        );
        if most > 1.06 * start {
            failures.push(format!(
                "{hz} Hz: the pile's energy rose from {start:.0} J at 1 s to {most:.0} J"
            ));
        }
        if highest > tower + 0.1 {
            failures.push(format!("{hz} Hz: a car was thrown to {highest} m"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A car driving on the roof of another gets its push from the lower car alone: the lower car
/// stands on a frictionless floor (its tires take nothing along it) and neither has air drag,
/// so their momentum along the road stays what it was when the upper car was set down, over
/// 1 s parked on the roof and then 0.6 s in first gear at full throttle, at 30 and 60 Hz; the
/// lower car moves back at `m_upper·v_upper / m_lower`. Each tire's reaction has to reach the
/// lower car: before 2026-12-02 a reaction on another vehicle replaced the others of the step
/// (one `ExternalImpulse` inserted per wheel). Measured 2026-12-02: before, 111 and 96 kg·m/s
/// gained parked, and 310 and 330 kg·m/s of the upper car's 928 and 940 lost driving, at 30
/// and 60 Hz; after, at most 0.03 kg·m/s of the upper car's 598 and 1132 kg·m/s. Bounds: 1
/// kg·m/s parked, 0.1 % of the upper car's momentum driving.
#[test]
fn a_car_driving_on_another_cars_roof_pushes_it_back() {
    let mut failures = Vec::new();
    for hz in [30.0, 60.0] {
        let mut app = create_app(hz);
        app.world_mut().spawn((
            RigidBody::Fixed,
            Collider::halfspace(Vec3::Y).expect("unit normal"),
            Friction {
                coefficient: 0.0,
                combine_rule: CoefficientCombineRule::Min,
            },
            Transform::default(),
        ));
        let mut builder = CarBuilder::default();
        builder.aerodynamics.drag_area = 0.0;
        let rest = builder.wheel.radius as f32 - builder.wheel_height;
        let lower = spawn_car(&mut app, &builder, Transform::from_xyz(0.0, rest, 0.0));
        controls(&mut app, lower, |c| c.parking = true);
        tick(&mut app, hz as usize);
        let roof = position(&app, lower).y + builder.body_center.y + builder.body_half_extents.y;
        let upper = spawn_car(
            &mut app,
            &builder,
            Transform::from_xyz(0.0, roof + rest + 0.01, 0.0),
        );
        controls(&mut app, upper, |c| c.parking = true);
        let momentum = |app: &App| {
            let mass = |car| f64::from(get::<ReadMassProperties>(app, car).mass);
            [lower, upper].map(|car| mass(car) * f64::from(velocity(app, car).z))
        };
        let [lower0, upper0] = momentum(&app);
        tick(&mut app, hz as usize);
        let [lower1, upper1] = momentum(&app);
        controls(&mut app, upper, |c| {
            c.parking = false;
            c.gear = 1;
            c.throttle = 1.0;
        });
        tick(&mut app, (0.6 * hz) as usize);
        let [lower2, upper2] = momentum(&app);
        let parked = (lower1 + upper1) - (lower0 + upper0);
        let residual = (lower2 + upper2) - (lower0 + upper0);
        let on_roof = wheels(&mut app, upper)
            .into_iter()
            .filter(|w| get::<WheelState>(&app, *w).ground_body == Some(lower))
            .count();
        println!(
            "{hz} Hz: parked 1 s: residual {parked:.2} kg·m/s; after 0.6 s of throttle: upper {upper2:.1}, lower {lower2:.1}, residual {residual:.2} kg·m/s; {on_roof} wheels on the roof"
        );
        if on_roof != 4 || upper2 > -400.0 {
            failures.push(format!("{hz} Hz: the upper car did not drive on the roof: {upper2} kg·m/s, {on_roof} wheels on it"));
        }
        if parked.abs() > 1.0 || residual.abs() > 1e-3 * upper2.abs() {
            failures.push(format!("{hz} Hz: momentum along the road {parked} kg·m/s parked, {residual} kg·m/s driving (upper {upper2}, lower {lower2})"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Sets the default car down at rest on the ground spawned so far at `hz`, lets it settle for
/// 1 s, sends it off at `speed` (m/s) along −Z and calls `each_step` after each step of the
/// next `seconds` (s). Returns where the car was sent off from (m, world).
fn drive_over(
    app: &mut App,
    hz: f64,
    speed: f32,
    seconds: f64,
    mut each_step: impl FnMut(&App, Entity),
) -> Vec3 {
    tick(app, 1);
    let car = spawn_car_at_rest(app, &CarBuilder::default());
    tick(app, hz as usize);
    let start = position(app, car);
    flying_start(app, car, speed);
    for _ in 0..(seconds * hz) as usize {
        tick(app, 1);
        each_step(app, car);
    }
    start
}

/// The default car at `speed` (m/s) with its front wheels meeting a kerb `kerb` (m) high (a
/// box face 4 m ahead) at `hz`: the body's peak upward speed (m/s) and its rise (m) once
/// both axles stand on the kerb, 3 s on.
fn kerb_strike(hz: f64, kerb: f32, speed: f32) -> (f32, f32) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::cuboid(10.0, kerb / 2.0, 50.0),
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, kerb / 2.0, -54.0),
    ));
    let (mut peak, mut height): (f32, f32) = (0.0, 0.0);
    let start = drive_over(&mut app, hz, speed, 3.0, |app, car| {
        peak = peak.max(velocity(app, car).y);
        height = position(app, car).y;
    });
    (peak, height - start.y)
}

/// A kerb strike throws the body up alike at every rate: a 10 cm kerb met at 5 m/s within
/// 10 % of 240 Hz's peak upward speed from 15 Hz, a 5 cm one and a 2 cm one met at 10 m/s
/// within 25 % from 30 Hz; the body ends on the kerb. The travel rate read where the tire
/// meets the kerb's edge is not carried on over the step as the road's curvature would be,
/// and the road ahead is probed where the wheel will be at the step's end.
///
/// Measured 2026-12-04 (peak m/s at 15 / 30 / 60 / 120 / 240 Hz): 10 cm at 5 m/s 0.361 /
/// 0.347 / 0.364 / 0.370 / 0.378, 5 cm at 10 m/s 0.226 / 0.191 / 0.230 / 0.195 / 0.189,
/// 2 cm at 10 m/s 0.124 / 0.081 / 0.078 / 0.078 / 0.079 (the wheel rolls over the kerb's
/// corner within a step or two, and the probe at the step's end gives the step's mean rate
/// but not where within it the corner is met). With the edge's jump left out of the trend
/// but the road's rate over the step taken from the last two steps, the same morning:
/// 0.764 / 0.397 / 0.389 / 0.390 / 0.383, 0.599 / 0.272 / 0.342 / 0.237 / 0.198 and
/// 0.374 / 0.211 / 0.103 / 0.090 / 0.071; with the edge's jump carried on, before that,
/// 1.13 / 0.47 m/s at 15 / 30 Hz on the 10 cm kerb.
#[test]
fn a_kerb_strike_throws_the_body_alike_at_every_rate() {
    let mut failures = Vec::new();
    for (kerb, speed, from_hz, bound) in [
        (0.1, 5.0, 15.0, 0.1),
        (0.05, 10.0, 30.0, 0.25),
        (0.02, 10.0, 30.0, 0.25),
    ] {
        let (reference, rise) = kerb_strike(240.0, kerb, speed);
        assert!(
            (rise - kerb).abs() < 2e-3,
            "{kerb} m kerb: rise {rise} m at 240 Hz"
        );
        for hz in [15.0, 30.0, 60.0, 120.0]
            .into_iter()
            .filter(|hz| *hz >= from_hz)
        {
            let (peak, rise) = kerb_strike(hz, kerb, speed);
            let ratio = peak / reference;
            println!(
                "{kerb} m kerb at {speed} m/s, {hz} Hz: peak {peak:.3} m/s ({ratio:.3} of 240 Hz's {reference:.3}), rise {rise:.4} m"
            );
            if (ratio - 1.0).abs() > bound || (rise - kerb).abs() > 2e-3 {
                failures.push(format!(
                    "{kerb} m kerb at {speed} m/s, {hz} Hz: peak {ratio} of 240 Hz's, rise {rise} m"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The default car at `speed` (m/s) coasting over a 10 cm bump 0.6 m long (a cylinder of
/// radius 0.5 m lying across the road, 6 m ahead) at `hz`: the body's peak upward speed (m/s)
/// and peak pitch rate (rad/s) over 3 s.
fn short_bump(hz: f64, speed: f32) -> (f32, f32) {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::cylinder(10.0, 0.5),
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, 0.1 - 0.5, -6.0)
            .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
    ));
    let (mut rise, mut pitch): (f32, f32) = (0.0, 0.0);
    drive_over(&mut app, hz, speed, 3.0, |app, car| {
        rise = rise.max(velocity(app, car).y);
        pitch = pitch.max(get::<Velocity>(app, car).angular.x.abs());
    });
    (rise, pitch)
}

/// A short bump reaches the body alike at every rate: the default car coasting over a 10 cm
/// bump 0.6 m long at 3, 8 and 15 m/s rises and pitches within 6 % of the fine rates' peak
/// rates from 60 Hz up, and at 30 Hz within 7 % (rise) and 15 % (pitch) at 3 and 8 m/s, 25 %
/// at 15 m/s, where the wheel crosses the bump in 1.2 steps.
///
/// The fine rates' peaks are the mean of 200, 240, 300 and 480 Hz's: a single fine rate's
/// peak rise at 3 m/s moves by up to 6 % with the least change elsewhere (0.351 / 0.356 /
/// 0.360 / 0.370 m/s at 240 / 200 / 300 / 480 Hz on 2026-12-04, 0.372 m/s at 240 Hz after a
/// change of 1e-8 in the tires' lateral slips), where 30 Hz's stays within 1 % (0.342–0.344
/// m/s), 5–6 % under their mean.
///
/// Until 2026-12-04 the suspension took the road's rate over the coming step from the last
/// two steps, which on a bump that short turns within the step: at 15 m/s the body rose at
/// 3.5 / 1.16 / 1.06 times 240 Hz's rate at 30 / 60 / 120 Hz, at 8 m/s 1.56 / 1.13 / 1.03
/// times. The road is now probed where the wheel will be at the step's end (0.81 / 0.99 /
/// 0.98 and 1.00 / 0.98 / 0.99 times).
#[test]
fn a_short_bump_at_speed_reaches_the_body_alike_at_every_rate() {
    let fine = [200.0, 240.0, 300.0, 480.0];
    let mut failures = Vec::new();
    for speed in [3.0, 8.0, 15.0] {
        let (rise, pitch) = fine
            .iter()
            .map(|&hz| short_bump(hz, speed))
            .fold((0.0, 0.0), |(r, p), (r1, p1)| (r + r1, p + p1));
        let (rise, pitch) = (rise / fine.len() as f32, pitch / fine.len() as f32);
        for hz in [30.0, 60.0, 120.0] {
            let (r, p) = short_bump(hz, speed);
            let (r, p) = (r / rise, p / pitch);
            println!(
                "{speed} m/s at {hz} Hz: rise {r:.3} and pitch {p:.3} of the fine rates' ({rise:.3} m/s, {pitch:.3} rad/s)"
            );
            let (rise_bound, pitch_bound) = match (hz < 40.0, speed > 10.0) {
                (false, _) => (0.06, 0.06),
                (true, false) => (0.07, 0.15),
                (true, true) => (0.25, 0.25),
            };
            if (r - 1.0).abs() > rise_bound || (p - 1.0).abs() > pitch_bound {
                failures.push(format!(
                    "{speed} m/s at {hz} Hz: rise {r}, pitch {p} of the fine rates'"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The default car coasting from 15 m/s over a sinusoidal road of 15 mm amplitude (a
/// heightfield of 0.1 m cells) whose waves it meets at `road_hz`, at `hz`: the amplitude (m)
/// of the body's height at the road's frequency over the last 4 s of 8 (whole waves, the
/// height's linear trend taken out).
fn sine_road_heave(hz: f64, road_hz: f64) -> f64 {
    let speed = 15.0;
    let amplitude = 0.015;
    let wavelength = speed / road_hz;
    let mut app = create_app(hz);
    let (rows, columns) = (1601, 9);
    let heights = (0..columns)
        .flat_map(|_| {
            (0..rows).map(move |i| {
                let z = -80.0 + 0.1 * i as f64;
                (amplitude * (core::f64::consts::TAU * z / wavelength).sin()) as f32
            })
        })
        .collect();
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::heightfield(heights, rows, columns, Vec3::new(8.0, 1.0, 160.0)),
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, 0.0, -70.0),
    ));
    tick(&mut app, 1);
    let car = spawn_car_at_rest(&mut app, &CarBuilder::default());
    tick(&mut app, 1);
    flying_start(&mut app, car, speed as f32);
    tick(&mut app, (4.0 * hz) as usize);
    let mut samples = Vec::new();
    for _ in 0..(4.0 * hz) as usize {
        tick(&mut app, 1);
        let at = position(&app, car);
        // The road's phase under the body (which slows as it coasts), in waves.
        samples.push((f64::from(at.z) / wavelength, f64::from(at.y)));
    }
    let start = samples[0].0;
    let waves = (start - samples.last().unwrap().0).floor();
    samples.retain(|(phase, _)| start - phase <= waves);
    let n = samples.len() as f64;
    let mean = |f: &dyn Fn(&(f64, f64)) -> f64| samples.iter().map(f).sum::<f64>() / n;
    let (x0, y0) = (mean(&|s| s.0), mean(&|s| s.1));
    let slope = mean(&|s| (s.0 - x0) * (s.1 - y0)) / mean(&|s| (s.0 - x0).powi(2));
    let (mut re, mut im) = (0.0, 0.0);
    for (phase, y) in &samples {
        let y = y - y0 - slope * (phase - x0);
        re += y * (core::f64::consts::TAU * phase).cos();
        im += y * (core::f64::consts::TAU * phase).sin();
    }
    2.0 * (re * re + im * im).sqrt() / n
}

/// A sinusoidal road moves the body alike at every rate: the default car coasting at 15 m/s
/// over a 15 mm road met at 1.2, 3, 5 and 8 Hz heaves at the road's frequency within
/// `0.1·(ω·dt)² + 2.5 %` of 240 Hz's amplitude at 30, 60 and 120 Hz (`ω` the road's
/// angular frequency; 1.68 rad per step for the 8 Hz road at 30 Hz). Measured: within
/// 1.0 / 4.0 / 11.1 / 21.3 % at 30 Hz, 0.4 / 2.3 / 3.3 / 6.4 % at 60 Hz and 0.2 / 0.4 / 0.8 /
/// 1.4 % at 120 Hz, all below 240 Hz's (19.3 / 1.17 / 3.87 / 0.96 mm, the wheelbase filtering
/// the 3 and 8 Hz roads). Until 2026-12-04 the suspension took the road's rate over the
/// coming step from the last two steps, which runs ahead of the step's mean rate as `ω·dt`
/// grows: +6.4 / +23.5 / +42.8 % on the 3 / 5 / 8 Hz roads at 30 Hz and +15.3 % on the 8 Hz
/// road at 60 Hz.
#[test]
fn a_sine_road_moves_the_body_alike_at_every_rate() {
    let mut failures = Vec::new();
    for road_hz in [1.2, 3.0, 5.0, 8.0] {
        let reference = sine_road_heave(240.0, road_hz);
        for hz in [30.0, 60.0, 120.0] {
            let heave = sine_road_heave(hz, road_hz);
            let error = heave / reference - 1.0;
            let step_angle = core::f64::consts::TAU * road_hz / hz;
            let bound = 0.1 * step_angle * step_angle + 0.025;
            println!(
                "{road_hz} Hz road at {hz} Hz: {:.3} mm ({:+.1} % of 240 Hz's {:.3} mm; bound {:.1} %)",
                heave * 1e3,
                error * 100.0,
                reference * 1e3,
                bound * 100.0
            );
            if error.abs() > bound {
                failures.push(format!("{road_hz} Hz road at {hz} Hz: {error:+.4}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The default car at 20 m/s over a road of 1 m boxes laid with 8 cm gaps between them (the
/// first gap 5 m ahead) at `hz`: the body's largest vertical speed (m/s) once over the gaps.
fn over_gaps(hz: f64) -> f32 {
    let mut app = create_app(hz);
    let mut slab = |half_length: f32, z: f32| {
        app.world_mut().spawn((
            RigidBody::Fixed,
            Collider::cuboid(10.0, 0.5, half_length),
            Friction::coefficient(0.9),
            Transform::from_xyz(0.0, -0.5, z),
        ));
    };
    slab(5.0, 0.0);
    for i in 0..200 {
        slab(0.5, -5.0 - 0.08 - 0.5 - 1.08 * i as f32);
    }
    let mut peak: f32 = 0.0;
    drive_over(&mut app, hz, 20.0, 4.0, |app, car| {
        if position(app, car).z < -10.0 {
            peak = peak.max(velocity(app, car).y.abs());
        }
    });
    peak
}

/// Gaps narrower than the tire hardly move the body: the default car at 20 m/s over 8 cm
/// gaps every 1.08 m (a tire of 0.3 m radius dips 2.7 mm into each) moves up or down at no
/// more than 0.03 m/s from 60 Hz up (measured 2026-12-04: 0.016 / 0.011 / 0.011 m/s at 60 /
/// 120 / 240 Hz). Until the road ahead was probed, the same day, the travel rate read where
/// a wheel's probe met a gap's edge was held over the step: 0.51 / 0.28 / 0.23 / 0.12 / 0.09
/// m/s at 15 / 30 / 60 / 120 / 240 Hz. At 15 and 30 Hz it was still 0.16 m/s that day, and
/// 0.028 and 0.105 m/s by the sixth session's start (and after it): a step's travel (0.67 m
/// at 30 Hz) against a 1.08 m pattern samples the gaps unevenly.
#[test]
fn gaps_narrower_than_the_tire_hardly_move_the_body() {
    for hz in [60.0, 120.0, 240.0] {
        let peak = over_gaps(hz);
        println!("{hz} Hz: the body at up to {peak:.3} m/s");
        assert!(peak < 0.03, "{hz} Hz: {peak} m/s");
    }
}

/// The default car at 15 m/s up a 10° ramp 4 m long whose top ends in the air (its foot
/// 10 m ahead) at `hz`: the body's largest upward speed (m/s).
fn ramp_takeoff(hz: f64) -> f32 {
    let mut app = create_app(hz);
    spawn_flat_ground(&mut app, 0.9);
    let (angle, length) = (10f32.to_radians(), 4.0);
    let rotation = Quat::from_rotation_x(angle);
    let middle = Vec3::new(
        0.0,
        0.5 * length * angle.sin(),
        -10.0 - 0.5 * length * angle.cos(),
    );
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::cuboid(10.0, 0.25, length / 2.0),
        Friction::coefficient(0.9),
        Transform::from_translation(middle + rotation * Vec3::new(0.0, -0.25, 0.0))
            .with_rotation(rotation),
    ));
    let mut peak: f32 = 0.0;
    drive_over(&mut app, hz, 15.0, 3.0, |app, car| {
        peak = peak.max(velocity(app, car).y);
    });
    peak
}

/// A ramp throws the car alike at every rate: up a 10° ramp at 15 m/s the body leaves at an
/// upward speed within 3 % of 240 Hz's from 30 Hz, 6 % at 15 Hz (3.17 m/s; the ramp's own
/// `v·sin θ` is 2.60, the rest the springs compressed at its foot and the pitch). Measured
/// 2026-12-04, fifth session: 3.00 / 3.10 / 3.15 / 3.14 / 3.17 m/s at 15 / 30 / 60 / 120 /
/// 240 Hz. At 15 Hz the front wheels reach the ramp's top edge nine tenths into a step; the
/// suspension takes its force over each part of that step apart (`force_over_step`), since
/// past the edge the damper's rebound would pull, which it cannot. Taken at the step's mean
/// rate, the push up the ramp lost that pull, and the body left at 2.68 m/s (16 % slower).
#[test]
fn a_ramp_throws_the_car_alike_at_every_rate() {
    let reference = ramp_takeoff(240.0);
    for (hz, bound) in [(15.0, 0.06), (30.0, 0.03), (60.0, 0.03), (120.0, 0.03)] {
        let peak = ramp_takeoff(hz);
        println!(
            "{hz} Hz: leaves at {peak:.3} m/s ({:.3} of 240 Hz's {reference:.3})",
            peak / reference
        );
        assert!(
            (peak / reference - 1.0).abs() < bound,
            "{hz} Hz: {peak} m/s against {reference}"
        );
    }
}

/// The default car at `speed` (m/s) rolling off the end of a raised deck `deck` (m) high
/// (its edge 4 m ahead) onto the ground below at `hz`: the body's largest downward speed
/// (m/s) and its fall (m) once both axles are down, 3 s on.
fn step_down(hz: f64, deck: f32, speed: f32) -> (f32, f32) {
    let mut app = create_app(hz);
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::halfspace(Vec3::Y).expect("unit normal"),
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, -deck, 0.0),
    ));
    app.world_mut().spawn((
        RigidBody::Fixed,
        Collider::cuboid(10.0, deck / 2.0, 30.0),
        Friction::coefficient(0.9),
        Transform::from_xyz(0.0, -deck / 2.0, 26.0),
    ));
    let (mut peak, mut height): (f32, f32) = (0.0, 0.0);
    let start = drive_over(&mut app, hz, speed, 3.0, |app, car| {
        peak = peak.max(-velocity(app, car).y);
        height = position(app, car).y;
    });
    (peak, start.y - height)
}

/// A step down drops the body alike at every rate: the default car rolling off a deck 2, 5
/// and 10 cm high at 5 m/s and 5 and 10 cm high at 10 m/s falls at its fastest within 20 %
/// of 240 Hz's speed from 30 Hz, 25 % at 15 Hz, and ends the deck's height lower.
///
/// Measured 2026-12-04, sixth session (peak falling speed against 240 Hz's at 15 / 30 / 60 /
/// 120 Hz): 2 cm at 5 m/s 0.89 / 0.94 / 1.00 / 0.99; 5 cm 0.99 / 1.10 / 1.01 / 1.04; 10 cm
/// 0.99 / 1.09 / 1.04 / 1.00; 5 cm at 10 m/s 1.12 / 0.99 / 1.19 / 1.00; 10 cm 1.20 / 1.01 /
/// 1.03 / 1.01. Until then a road whose planes were parallel but apart (the deck's top and
/// the road below) was taken as flat, and one whose planes met outside the step at its mean
/// rate: 0.80 / 0.76 / 1.00 / 1.02 off 2 cm, 0.99 / 1.40 / 1.19 / 1.00 off 5 cm at 10 m/s.
/// What is left is the tire rounding the corner within the step, taken at its mean rate
/// (the 60 Hz figure at 10 m/s), and the wheel having no mass of its own: it follows the
/// road down at once where a real one falls for a few hundredths of a second.
#[test]
fn a_step_down_drops_the_body_alike_at_every_rate() {
    let mut failures = Vec::new();
    for (deck, speed) in [
        (0.02, 5.0),
        (0.05, 5.0),
        (0.1, 5.0),
        (0.05, 10.0),
        (0.1, 10.0),
    ] {
        let (reference, _) = step_down(240.0, deck, speed);
        for (hz, bound) in [(15.0, 0.25), (30.0, 0.2), (60.0, 0.2), (120.0, 0.2)] {
            let (peak, fall) = step_down(hz, deck, speed);
            let ratio = peak / reference;
            println!(
                "{deck} m deck at {speed} m/s, {hz} Hz: falls at up to {peak:.3} m/s ({ratio:.3} of 240 Hz's {reference:.3}), {fall:.4} m in all"
            );
            if (ratio - 1.0).abs() > bound || (fall - deck).abs() > 2e-3 {
                failures.push(format!(
                    "{deck} m deck at {speed} m/s, {hz} Hz: peak {ratio} of 240 Hz's, fall {fall} m"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
