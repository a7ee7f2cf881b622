//! Custom blocks are first-class: registered with one call, connected like built-ins, and a
//! wrapper that only delegates reproduces the wrapped block bit for bit.

use crate::common;

use bevy::prelude::*;
use bevy_vehicle_physics::prelude::*;
use common::*;

/// A user block that wraps any block and only delegates to it.
#[derive(Component, Clone)]
struct Delegate<B: Block>(B);

impl<B: Block> Block for Delegate<B> {
    const TYPE_NAME: &'static str = "Delegate";
    type Runtime = B::Runtime;
    type Sensors = B::Sensors;

    fn ports(&self) -> Ports {
        self.0.ports()
    }
    fn state_len(&self) -> usize {
        self.0.state_len()
    }
    fn validate(&self) -> Result<(), SettingError> {
        self.0.validate()
    }
    fn settings_changed(&self, runtime: &mut B::Runtime) {
        self.0.settings_changed(runtime)
    }
    fn init(&self, runtime: &mut B::Runtime, state: &mut [f64]) {
        self.0.init(runtime, state)
    }
    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        self.0.apply_controls(controls)
    }
    fn begin_step(
        &self,
        runtime: &mut B::Runtime,
        state: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        self.0.begin_step(runtime, state, step)
    }
    fn begin_substep(
        &self,
        runtime: &mut B::Runtime,
        state: &mut [f64],
        substep: f64,
    ) -> ModeChange {
        self.0.begin_substep(runtime, state, substep)
    }
    fn upstream(
        &self,
        runtime: &B::Runtime,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        self.0.upstream(runtime, state, stage, outputs, derivative)
    }
    fn downstream(
        &self,
        runtime: &B::Runtime,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        self.0
            .downstream(runtime, state, stage, input, outputs, derivative)
    }
    fn update_modes(&self, runtime: &mut B::Runtime, state: &[f64], shafts: &Shafts) -> ModeChange {
        self.0.update_modes(runtime, state, shafts)
    }
    fn limit_impulse(&self, runtime: &mut B::Runtime, shafts: &Shafts, substep: f64) -> bool {
        self.0.limit_impulse(runtime, shafts, substep)
    }
    fn sensors(&self, runtime: &B::Runtime, state: &[f64], shafts: &Shafts) -> B::Sensors {
        self.0.sensors(runtime, state, shafts)
    }
    fn reshape_state(&self, old: &[f64], state: &mut [f64]) {
        self.0.reshape_state(old, state)
    }
    fn state_set(&self, runtime: &mut B::Runtime, state: &[f64]) {
        self.0.state_set(runtime, state)
    }
}

fn maybe_wrap<B: Block>(wrap: bool, block: B, entity: &mut EntityWorldMut) {
    if wrap {
        entity.insert(Delegate(block));
    } else {
        entity.insert(block);
    }
}

/// Clutch start, gear change and braking to a stop with a limited-slip differential, then a
/// wheel set spinning and the engine set turning; returns the state bits after every step.
/// `wrap[i]` wraps block i in `Delegate`.
fn trajectory(wrap: [bool; 6]) -> Vec<u64> {
    let mut app = create_app(60.0);
    app.register_block::<Delegate<Engine>>()
        .register_block::<Delegate<Clutch>>()
        .register_block::<Delegate<Gearbox>>()
        .register_block::<Delegate<Differential>>()
        .register_block::<Delegate<Wheel>>();
    let car = spawn_vehicle(&mut app, "car", 4);
    let load = WheelLoad::Vehicle {
        mass: 600.0,
        rolling_resistance: 0.012,
        drag_area: 0.35,
        air_density: 1.2,
    };
    let mut ids = Vec::new();
    for (i, &wrapped) in wrap.iter().enumerate() {
        let mut e = app.world_mut().spawn(BlockOf(car));
        match i {
            0 => maybe_wrap(
                wrapped,
                Engine {
                    throttle: 0.7,
                    ..default()
                },
                &mut e,
            ),
            1 => maybe_wrap(
                wrapped,
                Clutch {
                    engagement: 0.0,
                    ..default()
                },
                &mut e,
            ),
            2 => maybe_wrap(
                wrapped,
                Gearbox {
                    gear: 1,
                    ..default()
                },
                &mut e,
            ),
            3 => maybe_wrap(
                wrapped,
                Differential {
                    lock_torque: 80.0,
                    ..default()
                },
                &mut e,
            ),
            4 => maybe_wrap(wrapped, wheel(1.0, load.clone()), &mut e),
            _ => maybe_wrap(wrapped, wheel(1.6, WheelLoad::Viscous(0.5)), &mut e),
        }
        ids.push(e.id());
    }
    for (i, up, port) in [
        (1, 0, Port::OUT),
        (2, 1, Port::OUT),
        (3, 2, Port::OUT),
        (4, 3, Port::LEFT),
        (5, 3, Port::RIGHT),
    ] {
        app.world_mut()
            .entity_mut(ids[i])
            .insert(DrivenBy::port(ids[up], port));
    }
    let mut bits = Vec::new();
    for step in 0..600 {
        let t = step as f64 / 60.0;
        let world = app.world_mut();
        let engagement = (t / 1.0).min(1.0);
        let lever = if t < 4.0 { 1 } else { 2 };
        let brake = if t > 7.0 { 900.0 } else { 0.0 };
        let throttle = if t > 7.0 { 0.0 } else { 0.7 };
        if let Some(mut c) = world.get_mut::<Clutch>(ids[1]) {
            c.engagement = engagement
        }
        if let Some(mut c) = world.get_mut::<Delegate<Clutch>>(ids[1]) {
            c.0.engagement = engagement
        }
        if let Some(mut g) = world.get_mut::<Gearbox>(ids[2]) {
            g.gear = lever
        }
        if let Some(mut g) = world.get_mut::<Delegate<Gearbox>>(ids[2]) {
            g.0.gear = lever
        }
        if let Some(mut e) = world.get_mut::<Engine>(ids[0]) {
            e.throttle = throttle
        }
        if let Some(mut e) = world.get_mut::<Delegate<Engine>>(ids[0]) {
            e.0.throttle = throttle
        }
        for &w in &ids[4..] {
            if let Some(mut wh) = world.get_mut::<Wheel>(w) {
                wh.brake_torque = brake
            }
            if let Some(mut wh) = world.get_mut::<Delegate<Wheel>>(w) {
                wh.0.brake_torque = brake
            }
        }
        // Stopped and held: set a wheel spinning and the engine turning (what the blocks'
        // `state_set` makes of it is delegated too).
        if step == 540 {
            set_state(&mut app, car, ids[5], &[0.0, 5.0]);
            set_state(&mut app, car, ids[0], &[rpm_to_rad_s(2500.0)]);
        }
        tick(&mut app, 1);
        assert_eq!(*drivetrain(&app, car).status(), DrivetrainStatus::Ready);
        for &e in &ids {
            bits.extend(state(&app, car, e).iter().map(|v| v.to_bits()));
        }
    }
    bits
}

#[test]
fn delegating_wrappers_reproduce_built_in_blocks_bit_for_bit() {
    let baseline = trajectory([false; 6]);
    // Something happened: the car moved and the brake stopped it.
    let speeds: Vec<f64> = baseline.iter().map(|b| f64::from_bits(*b)).collect();
    assert!(speeds.iter().any(|v| *v > 20.0));
    for i in 0..6 {
        let mut wrap = [false; 6];
        wrap[i] = true;
        assert!(
            trajectory(wrap) == baseline,
            "wrapping block {i} changed the trajectory"
        );
    }
    assert!(
        trajectory([true; 6]) == baseline,
        "wrapping every block changed the trajectory"
    );
}

/// A user block whose settings change its number of states is rebuilt around, and says what
/// carries over (`Block::reshape_state`). Here a wrapped wheel, spun up by a constant torque,
/// is given a tire (two states become five) halfway: it touches no ground, so its spin and
/// angle follow `ω = T·t/J` and `θ = T·t²/(2J)` across the rebuild as if nothing happened
/// (to 1e-12 relative; RK4 is exact for constant acceleration, and rounding leaves ~1e-14).
#[test]
fn a_user_block_that_changes_shape_keeps_what_it_says() {
    // N·m, kg·m², kg·m².
    let (torque, motor_inertia, wheel_inertia) = (40.0, 0.3, 1.1);
    let mut app = create_app(60.0);
    app.register_block::<Delegate<Wheel>>();
    let car = spawn_vehicle(&mut app, "car", 4);
    let motor = spawn_block(
        &mut app,
        car,
        "motor",
        constant_torque_motor(torque, motor_inertia),
        None,
    );
    let wheel = spawn_block(
        &mut app,
        car,
        "wheel",
        Delegate(common::wheel(wheel_inertia, WheelLoad::None)),
        Some((motor, Port::OUT)),
    );
    tick(&mut app, 1); // compiles the drivetrain; the first step runs from rest
    let steps = 60;
    tick(&mut app, steps - 1);
    set::<Delegate<Wheel>>(&mut app, wheel, |w| {
        w.0.load = WheelLoad::Tire(std::sync::Arc::new(Tire::default()))
    });
    tick(&mut app, steps);
    assert_eq!(state(&app, car, wheel).len(), 7, "the wheel has its tire");
    let t = 2.0 * steps as f64 * fixed_dt(&app);
    let j = motor_inertia + wheel_inertia;
    let wheel_state = state(&app, car, wheel);
    let [angle, spin] = [wheel_state[0], wheel_state[1]];
    assert!(
        rel(spin, torque * t / j) < 1e-12,
        "spin {spin} rad/s, expected {}",
        torque * t / j
    );
    assert!(
        rel(angle, 0.5 * torque * t * t / j) < 1e-12,
        "angle {angle} rad, expected {}",
        0.5 * torque * t * t / j
    );
}

/// A load that sends a NaN reaction up: a user block with a bug.
#[derive(Component, Clone)]
struct NotANumberLoad;

impl Block for NotANumberLoad {
    const TYPE_NAME: &'static str = "NotANumberLoad";
    type Runtime = ();
    type Sensors = NoSensors;

    fn ports(&self) -> Ports {
        Ports::LEAF
    }
    fn upstream(&self, _: &(), _: &[f64], _: &StageContext, _: &[Shaft], _: &mut [f64]) -> ShaftUp {
        ShaftUp {
            reaction: f64::NAN,
            ..ShaftUp::FREE
        }
    }
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        _: Option<&Shaft>,
        _: &mut [Shaft],
        _: &mut [f64],
    ) {
    }
    fn sensors(&self, _: &(), _: &[f64], _: &Shafts) -> NoSensors {
        NoSensors
    }
}

/// A user block whose output is not a number stops its drivetrain with a status that names
/// it, not the block whose state the NaN reached first: a motor driving a load that sends a
/// NaN reaction up is `Diverged` naming the load, its states stay finite, and the motor's
/// speed stays where the step started.
///
/// The root folds its load's reaction into its own state, so that state went astray first,
/// and the status named the motor (found 2026-12-02 by an outside test of extending the
/// library from a user's crate).
#[test]
fn a_block_that_sends_a_nan_is_the_one_its_status_names() {
    let mut app = create_app(60.0);
    app.register_block::<NotANumberLoad>();
    let rig = spawn_vehicle(&mut app, "rig", 4);
    let motor = spawn_block(
        &mut app,
        rig,
        "motor",
        constant_torque_motor(40.0, 0.3),
        None,
    );
    spawn_block(
        &mut app,
        rig,
        "buggy load",
        NotANumberLoad,
        Some((motor, Port::OUT)),
    );
    tick(&mut app, 3);
    let status = format!("{}", drivetrain(&app, rig).error().expect("refused"));
    println!("{status}");
    assert!(
        drivetrain(&app, rig).error().is_some_and(
            |e| matches!(&e.error, DrivetrainError::Diverged { block } if block == "buggy load")
        ),
        "{status}"
    );
    assert!(state(&app, rig, motor).iter().all(|v| v.is_finite()));
}
