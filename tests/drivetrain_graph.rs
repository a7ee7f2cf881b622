//! Graph validation, determinism and spawn-order independence, through the public API.

use crate::common;

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy_vehicle_physics::drivetrain::{ExternalStep, SensorWriter};
use bevy_vehicle_physics::prelude::*;
use common::*;

/// Spawns engine → clutch → gearbox → differential → two wheels; returns the block entities.
fn spawn_chain(app: &mut App, car: Entity) -> [Entity; 6] {
    let engine = spawn_block(app, car, "engine", Engine::default(), None);
    let clutch = spawn_block(
        app,
        car,
        "clutch",
        Clutch::default(),
        Some((engine, Port::OUT)),
    );
    let gearbox = spawn_block(
        app,
        car,
        "gearbox",
        Gearbox {
            gear: 1,
            ..default()
        },
        Some((clutch, Port::OUT)),
    );
    let diff = spawn_block(
        app,
        car,
        "diff",
        Differential::default(),
        Some((gearbox, Port::OUT)),
    );
    let load = WheelLoad::Vehicle {
        mass: 600.0,
        rolling_resistance: 0.012,
        drag_area: 0.35,
        air_density: 1.2,
    };
    let l = spawn_block(
        app,
        car,
        "wheel_l",
        wheel(1.2, load.clone()),
        Some((diff, Port::LEFT)),
    );
    let r = spawn_block(
        app,
        car,
        "wheel_r",
        wheel(1.2, load),
        Some((diff, Port::RIGHT)),
    );
    [engine, clutch, gearbox, diff, l, r]
}

fn error_text(app: &App, car: Entity) -> String {
    match drivetrain(app, car).status() {
        DrivetrainStatus::Invalid(e) => e.to_string(),
        other => panic!("expected an invalid drivetrain, got {other:?}"),
    }
}

#[test]
fn valid_chain_compiles_in_pass_order() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let blocks = spawn_chain(&mut app, car);
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    assert_eq!(drivetrain(&app, car).blocks_in_order(), blocks.to_vec());
}

/// A `Drivetrain` put in place of a running one (to change its substeps, say) is compiled at
/// the next step, with no block changed, and steps from there.
#[test]
fn a_drivetrain_put_in_place_of_another_is_compiled() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let blocks = spawn_chain(&mut app, car);
    tick(&mut app, 30);
    app.world_mut().entity_mut(car).insert(Drivetrain::new(8));
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    assert_eq!(drivetrain(&app, car).substeps, 8);
    assert_eq!(drivetrain(&app, car).blocks_in_order(), blocks.to_vec());
    // And it steps: the engine's speed moves on.
    let before = get::<EngineSensors>(&app, blocks[0]).rpm;
    tick(&mut app, 10);
    let after = get::<EngineSensors>(&app, blocks[0]).rpm;
    assert!(
        after.is_finite() && after != before,
        "engine at {before} then {after} rpm"
    );
}

#[test]
fn cycle_is_refused_and_named() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    spawn_chain(&mut app, car);
    // Two gears driving each other, hanging from nothing.
    let g1 = spawn_block(&mut app, car, "g1", gear(2.0), None);
    let g2 = spawn_block(&mut app, car, "g2", gear(2.0), Some((g1, Port::OUT)));
    app.world_mut().entity_mut(g1).insert(DrivenBy::new(g2));
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' has a cycle: 'g1' → 'g2' → 'g1'"
    );
}

/// A block connected to its own output is a cycle of one: Bevy drops a relationship that
/// points at its own entity, and the drivetrain still names the cycle (not a block left
/// unconnected) until the block is connected properly.
#[test]
fn a_block_driving_itself_is_refused_as_a_cycle() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, clutch, gearbox, ..] = spawn_chain(&mut app, car);
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    app.world_mut()
        .entity_mut(gearbox)
        .insert(DrivenBy::new(gearbox));
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' has a cycle: 'gearbox' → 'gearbox'"
    );
    app.world_mut()
        .entity_mut(gearbox)
        .insert(DrivenBy::new(clutch));
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    assert_eq!(drivetrain(&app, car).blocks_in_order()[0], engine);
}

#[test]
fn unconnected_required_port_is_refused() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [.., right] = spawn_chain(&mut app, car);
    app.world_mut().entity_mut(right).despawn();
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' block 'diff': required output port 'right' is left unconnected"
    );
}

/// A block without a `Name` is named in errors by its type and entity.
#[test]
fn an_unnamed_block_is_named_by_its_type() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [.., diff, _, right] = spawn_chain(&mut app, car);
    app.world_mut().entity_mut(diff).remove::<Name>();
    app.world_mut().entity_mut(right).despawn();
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        format!(
            "vehicle 'car' block 'Differential {diff}': required output port 'right' is left \
             unconnected"
        )
    );
}

#[test]
fn connection_to_another_vehicle_is_refused() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let truck = spawn_vehicle(&mut app, "truck", 4);
    let [_, _, gearbox, ..] = spawn_chain(&mut app, car);
    let [_, truck_clutch, ..] = spawn_chain(&mut app, truck);
    app.world_mut()
        .entity_mut(gearbox)
        .insert(DrivenBy::new(truck_clutch));
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' block 'gearbox' is connected to block 'clutch' of another vehicle, 'truck'"
    );
    // The truck lost nothing it needs, but one of its ports now drives a foreign block.
    assert!(error_text(&app, truck).contains("another vehicle, 'car'"));
}

#[test]
fn second_root_is_refused() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    spawn_chain(&mut app, car);
    spawn_block(&mut app, car, "motor", Motor::default(), None);
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' has a second root: blocks 'engine', 'motor' have no input, but a drivetrain has at most one root"
    );
}

#[test]
fn unknown_port_and_port_used_twice_are_refused() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [.., diff, _, right] = spawn_chain(&mut app, car);
    app.world_mut()
        .entity_mut(right)
        .insert(DrivenBy::port(diff, Port("rear")));
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' block 'wheel_r' is driven by port 'rear' of 'diff', which has no such port (its ports: left, right)"
    );
    app.world_mut()
        .entity_mut(right)
        .insert(DrivenBy::port(diff, Port::LEFT));
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' block 'diff': output port 'left' is connected twice (to 'wheel_l' and 'wheel_r')"
    );
    // Fixing the connection brings the vehicle back.
    app.world_mut()
        .entity_mut(right)
        .insert(DrivenBy::port(diff, Port::RIGHT));
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
}

#[test]
fn invalid_settings_are_refused_when_spawned_and_when_set() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, _, gearbox, ..] = spawn_chain(&mut app, car);
    set::<Gearbox>(&mut app, gearbox, |g| g.forward_ratios[2] = f64::NAN);
    tick(&mut app, 1);
    assert_eq!(
        error_text(&app, car),
        "vehicle 'car' block 'gearbox' (Gearbox): setting `forward_ratios[2]` must be greater than 0, got NaN"
            .replace("must be greater than 0", "must be a finite number")
    );
    set::<Gearbox>(&mut app, gearbox, |g| g.forward_ratios[2] = 1.4);
    tick(&mut app, 1);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);

    // Once running, a bad value is refused when set: the block keeps its last good settings.
    tick(&mut app, 30);
    let rpm_before = get::<EngineSensors>(&app, engine).rpm;
    set::<Engine>(&mut app, engine, |e| e.inertia = f64::INFINITY);
    tick(&mut app, 1);
    let rejected = drivetrain(&app, car)
        .rejected_change()
        .expect("refused")
        .to_string();
    assert_eq!(
        rejected,
        "vehicle 'car' block 'engine' (Engine): setting `inertia` must be a finite number, got inf"
    );
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    tick(&mut app, 60);
    let s = get::<EngineSensors>(&app, engine);
    assert!(s.rpm.is_finite() && (s.rpm - rpm_before).abs() < 2000.0);
    set::<Engine>(&mut app, engine, |e| e.torque_curve.points[1].0 = 100.0);
    tick(&mut app, 1);
    assert!(
        drivetrain(&app, car)
            .rejected_change()
            .unwrap()
            .to_string()
            .contains("setting `torque_curve[1].0` must be greater than the previous point's rpm")
    );
}

/// A step that leaves a state not finite is undone, and the drivetrain stops there with a
/// status naming the vehicle and the block, never NaN. A 1e-6 kg·m² flywheel on a 1 N·m·s/rad
/// viscous load at 10 rad/s is far beyond what a 1/240 s substep follows (`c·h/I` = 4200):
/// its spin overflows within a few steps. The state stays finite, the sensors keep their last
/// good values, and a change of its settings (a real inertia, 1 kg·m²) runs it again from where
/// it stopped: its spin then decays as `e^(−c·t/I)` (1e-9 over 60 steps).
#[test]
fn a_step_that_goes_astray_is_undone_and_named() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let w = spawn_block(
        &mut app,
        car,
        "flywheel",
        wheel(1e-6, WheelLoad::Viscous(1.0)),
        None,
    );
    tick(&mut app, 1);
    set_state(&mut app, car, w, &[0.0, 10.0]);
    tick(&mut app, 20);
    let error = error_text(&app, car);
    assert!(
        error.starts_with("vehicle 'car' block 'flywheel': a step left its state not finite"),
        "{error}"
    );
    let stopped = state(&app, car, w);
    assert!(stopped.iter().all(|v| v.is_finite()), "{stopped:?}");
    assert!(get::<WheelSensors>(&app, w).speed.is_finite());
    tick(&mut app, 5);
    assert_eq!(
        state(&app, car, w),
        stopped,
        "a stopped drivetrain stays put"
    );

    set::<Wheel>(&mut app, w, |w| w.inertia = 1.0);
    tick(&mut app, 60);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    let spin = state(&app, car, w)[1];
    assert!(
        rel(spin, stopped[1] * (-60.0 * fixed_dt(&app)).exp()) < 1e-9,
        "resumed: {spin} rad/s from {}",
        stopped[1]
    );
}

/// A finite setting far past any engine (`torque_added` 1e300 N·m at full throttle) drives
/// the crank of a running engine (clutch open) to a finite but meaningless speed in one step
/// (1.0e298 rad/s), where its sensors' power (torque × speed) overflowed to −∞ with the status
/// `Ready`. A state beyond 1e100 in magnitude is now taken as gone astray like a non-finite
/// one: the step is undone, the status names the engine, and every sensor stays finite.
#[test]
fn a_finite_but_absurd_setting_stops_the_drivetrain_with_finite_sensors() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, clutch, ..] = spawn_chain(&mut app, car);
    set::<Clutch>(&mut app, clutch, |c| c.engagement = 0.0);
    tick(&mut app, 1);
    set_state(&mut app, car, engine, &[rpm_to_rad_s(2000.0)]);
    tick(&mut app, 5);
    assert!(get::<EngineSensors>(&app, engine).running);
    set::<Engine>(&mut app, engine, |e| {
        e.throttle = 1.0;
        e.throttle_delay = 0.0;
        e.torque_added = 1e300;
    });
    tick(&mut app, 3);
    let error = error_text(&app, car);
    assert!(
        error.starts_with("vehicle 'car' block 'engine': a step left its state"),
        "{error}"
    );
    // The last good values: a car engine's, far below 1e6 in each unit (rpm, N·m, W).
    let s = get::<EngineSensors>(&app, engine);
    for (name, value) in [
        ("rpm", s.rpm),
        ("torque", s.torque),
        ("power", s.power),
        ("shaft_torque", s.shaft_torque),
    ] {
        assert!(value.is_finite() && value.abs() < 1e6, "{name} {value}");
    }
}

/// A block whose settings change its shape (here a wheel's load, from a carried vehicle mass
/// with two states to a tire with five) cannot be updated in place: the vehicle is rebuilt
/// around it, keeps running (the wheel keeps its angle and spin), and the new load acts.
/// The wheel's tire touches no ground here,
/// and the wheel no longer carries its share of the vehicle's mass (600 kg at 0.3 m: 54 of
/// 55.2 kg·m²), so the open differential spins it up far faster than its partner.
#[test]
fn a_block_that_changes_shape_is_rebuilt() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, clutch, .., l, r] = spawn_chain(&mut app, car);
    set::<Engine>(&mut app, engine, |e| e.throttle = 0.8);
    // A clutch start.
    for step in 0..=60 {
        set::<Clutch>(&mut app, clutch, |c| c.engagement = f64::from(step) / 60.0);
        tick(&mut app, 1);
    }
    let before = get::<WheelSensors>(&app, l);
    assert!(
        before.speed > 1.0,
        "the car pulls away: {} rad/s",
        before.speed
    );
    set::<Wheel>(&mut app, l, |w| {
        w.load = WheelLoad::Tire(std::sync::Arc::new(Tire::default()))
    });
    // The rebuild comes at the start of the next step. The rebuilt wheel keeps turning from
    // where it was: its angle and spin carry over (it lost its share of the car's mass and has
    // no ground under its new tire, so the drive speeds it up).
    tick(&mut app, 2);
    let after = get::<WheelSensors>(&app, l);
    assert!(
        after.angle > before.angle && after.speed > before.speed,
        "two steps after the rebuild: angle {} rad, spin {} rad/s; before: {} rad, {} rad/s",
        after.angle,
        after.speed,
        before.angle,
        before.speed
    );
    tick(&mut app, 28);
    assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
    let [sl, sr] = [l, r].map(|w| get::<WheelSensors>(&app, w));
    assert!(sl.speed.is_finite() && sr.speed.is_finite());
    assert!(
        sl.speed > 3.0 * sr.speed && sl.speed > 2.0 * before.speed,
        "unloaded wheel {} rad/s, loaded {} rad/s, before {} rad/s",
        sl.speed,
        sr.speed,
        before.speed
    );
}

/// Settings changed in the step that rebuilds the vehicle (here an engine's torque table, the
/// step after a wheel changed shape) take effect as they would in any other step: the
/// rebuilt drivetrain carries each block's running state over but re-derives what it caches
/// from the settings (the engine's table and its peaks). Declutched at full throttle, the
/// engine's net torque is its table's at the crank's speed (the table is net of the crank's
/// friction); with the table doubled it is twice that, and its peak twice the default's
/// 200 N·m. (Before 2026-12-05 the rebuilt engine kept its old table and peaks.)
#[test]
fn settings_changed_as_the_vehicle_is_rebuilt_take_effect() {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, clutch, .., l, _] = spawn_chain(&mut app, car);
    set::<Engine>(&mut app, engine, |e| e.throttle = 1.0);
    set::<Clutch>(&mut app, clutch, |c| c.engagement = 0.0);
    tick(&mut app, 30);
    let table = |rpm: f64| Engine::default().torque_curve.torque_at(rpm);
    // At full throttle the friction the table is net of cancels exactly: only rounding
    // separates the two (measured: none at all).
    let within_rounding = |torque: f64, expected: f64| (torque - expected).abs() < 1e-12 * expected;
    let before = get::<EngineSensors>(&app, engine);
    assert!(
        within_rounding(before.torque, table(before.rpm)),
        "{before:?}"
    );
    // The wheel changes shape: the vehicle is rebuilt at the start of the next step...
    set::<Wheel>(&mut app, l, |w| {
        w.load = WheelLoad::Tire(std::sync::Arc::new(Tire::default()))
    });
    tick(&mut app, 1);
    // ...in which the engine's table changes too.
    set::<Engine>(&mut app, engine, |e| {
        for point in &mut e.torque_curve.points {
            point.1 *= 2.0;
        }
    });
    tick(&mut app, 1);
    let after = get::<EngineSensors>(&app, engine);
    assert_eq!(after.max_torque.value, 2.0 * before.max_torque.value);
    assert!(
        within_rounding(after.torque, 2.0 * table(after.rpm)),
        "net torque {} N·m at {} rpm; the table gives {} N·m there",
        after.torque,
        after.rpm,
        table(after.rpm)
    );
}

/// Runs the chain for 3 s of full throttle with a clutch start and returns every block's state
/// bits.
fn run_chain(order: &[usize]) -> Vec<u64> {
    let mut app = create_app(60.0);
    let car = spawn_vehicle(&mut app, "car", 4);
    // Spawn in the given order; connections are made once every block exists.
    let names = ["engine", "clutch", "gearbox", "diff", "wheel_l", "wheel_r"];
    let mut ids = [Entity::PLACEHOLDER; 6];
    let load = WheelLoad::Vehicle {
        mass: 600.0,
        rolling_resistance: 0.012,
        drag_area: 0.35,
        air_density: 1.2,
    };
    for &i in order {
        let world = app.world_mut();
        let mut e = world.spawn((Name::new(names[i]), BlockOf(car)));
        match i {
            0 => e.insert(Engine {
                throttle: 0.8,
                ..default()
            }),
            1 => e.insert(Clutch {
                engagement: 0.0,
                ..default()
            }),
            2 => e.insert(Gearbox {
                gear: 1,
                ..default()
            }),
            3 => e.insert(Differential {
                lock_torque: 50.0,
                ..default()
            }),
            _ => e.insert(wheel(1.2, load.clone())),
        };
        ids[i] = e.id();
    }
    let links = [
        (1, 0, Port::OUT),
        (2, 1, Port::OUT),
        (3, 2, Port::OUT),
        (4, 3, Port::LEFT),
        (5, 3, Port::RIGHT),
    ];
    for &i in order {
        if let Some(&(_, up, port)) = links.iter().find(|l| l.0 == i) {
            app.world_mut()
                .entity_mut(ids[i])
                .insert(DrivenBy::port(ids[up], port));
        }
    }
    for step in 0..180 {
        set::<Clutch>(&mut app, ids[1], |c| {
            c.engagement = (step as f64 / 60.0).min(1.0)
        });
        tick(&mut app, 1);
    }
    ids.iter()
        .flat_map(|&e| state(&app, car, e))
        .map(f64::to_bits)
        .collect()
}

#[test]
fn identical_runs_are_bit_identical() {
    let a = run_chain(&[0, 1, 2, 3, 4, 5]);
    let b = run_chain(&[0, 1, 2, 3, 4, 5]);
    assert_eq!(a, b);
    assert!(
        a.iter().any(|&bits| f64::from_bits(bits) > 10.0),
        "something moved"
    );
}

#[test]
fn spawn_order_does_not_change_the_result() {
    let a = run_chain(&[0, 1, 2, 3, 4, 5]);
    let b = run_chain(&[5, 3, 1, 4, 0, 2]);
    assert_eq!(a, b);
}

/// Marks the vehicles a test system steps itself, and whether it writes their sensors.
#[derive(Component)]
struct SteppedByTest {
    writes_sensors: bool,
}

fn step_by_test(
    time: Res<Time>,
    mut vehicles: Query<(&mut Drivetrain, &SteppedByTest)>,
    mut sensors: SensorWriter,
) {
    for (mut drivetrain, how) in &mut vehicles {
        drivetrain.step(time.delta_secs_f64());
        if how.writes_sensors {
            sensors.write(&mut drivetrain);
        }
    }
}

#[test]
fn sensors_are_written_however_the_drivetrain_is_stepped() {
    let mut app = create_app(60.0);
    app.add_systems(FixedUpdate, step_by_test.in_set(DrivetrainSystems::Step));
    // Two vehicles the plugin steps, one stepped by the test system that writes its sensors
    // and one whose sensors are left to `SyncOut`. All four are the same car.
    let cars: Vec<(Entity, [Entity; 6])> = (0..4)
        .map(|i| {
            let car = spawn_vehicle(&mut app, &format!("car {i}"), 4);
            if i >= 2 {
                app.world_mut().entity_mut(car).insert((
                    ExternalStep,
                    SteppedByTest {
                        writes_sensors: i == 2,
                    },
                ));
            }
            (car, spawn_chain(&mut app, car))
        })
        .collect();
    for &(_, [engine, ..]) in &cars {
        set::<Engine>(&mut app, engine, |e| e.throttle = 0.7);
    }
    // A clutch start over one second.
    for step in 0..90 {
        for &(_, [_, clutch, ..]) in &cars {
            set::<Clutch>(&mut app, clutch, |c| {
                c.engagement = (step as f64 / 60.0).min(1.0)
            });
        }
        tick(&mut app, 1);
    }
    let sensors = |blocks: &[Entity; 6]| {
        (
            get::<EngineSensors>(&app, blocks[0]),
            get::<ClutchSensors>(&app, blocks[1]),
            get::<GearboxSensors>(&app, blocks[2]),
            get::<DifferentialSensors>(&app, blocks[3]),
            get::<WheelSensors>(&app, blocks[4]),
            get::<WheelSensors>(&app, blocks[5]),
        )
    };
    let first = sensors(&cars[0].1);
    let expected_rpm = rad_s_to_rpm(state(&app, cars[0].0, cars[0].1[0])[0]);
    assert_eq!(first.0.rpm, expected_rpm, "the sensors are this step's");
    assert!(
        first.4.speed > 1.0,
        "the car moves: {} rad/s",
        first.4.speed
    );
    for (car, blocks) in &cars[1..] {
        assert_eq!(
            sensors(blocks),
            first,
            "{car}: same car, same sensors (bit for bit)"
        );
    }
}

/// A vehicle handed from a stepper that writes its sensors to the plugin and back to one
/// that leaves them to `SyncOut` has this step's sensors at every step: no "written" mark
/// left over from a write outside the step (a game's own system refreshing them, here)
/// skips a write.
#[test]
fn sensors_stay_current_when_the_stepper_changes() {
    let mut app = create_app(60.0);
    app.add_systems(FixedUpdate, step_by_test.in_set(DrivetrainSystems::Step));
    let car = spawn_vehicle(&mut app, "car", 4);
    let [engine, clutch, ..] = spawn_chain(&mut app, car);
    set::<Engine>(&mut app, engine, |e| e.throttle = 0.7);
    set::<Clutch>(&mut app, clutch, |c| c.engagement = 1.0);
    let hand_over = |app: &mut App, to: Option<bool>| {
        let mut car = app.world_mut().entity_mut(car);
        match to {
            Some(writes_sensors) => {
                car.insert((ExternalStep, SteppedByTest { writes_sensors }));
            }
            None => {
                car.remove::<(ExternalStep, SteppedByTest)>();
            }
        }
    };
    // The test's stepper (writing the sensors), the plugin, then the test's stepper leaving
    // them to `SyncOut`; two steps each, the engine speeding up all along.
    for (to, name) in [
        (Some(true), "stepped by a system that writes the sensors"),
        (None, "stepped by the plugin"),
        (
            Some(false),
            "stepped by a system that leaves the sensors to SyncOut",
        ),
    ] {
        hand_over(&mut app, to);
        if to.is_none() {
            // Between two steps, a game's system writes the sensors itself.
            app.world_mut()
                .run_system_once(
                    |mut sensors: SensorWriter, mut vehicles: Query<&mut Drivetrain>| {
                        for mut drivetrain in &mut vehicles {
                            sensors.write(&mut drivetrain);
                        }
                    },
                )
                .expect("the system runs");
        }
        for _ in 0..2 {
            let before = get::<EngineSensors>(&app, engine).rpm;
            tick(&mut app, 1);
            let rpm = get::<EngineSensors>(&app, engine).rpm;
            let expected = rad_s_to_rpm(state(&app, car, engine)[0]);
            assert_eq!(rpm, expected, "{name}: the sensors are this step's");
            assert!(rpm != before, "{name}: the engine speeds up ({before} rpm)");
        }
    }
}
