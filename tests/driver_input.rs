//! Driver input: gamepad and keyboard actions reach a vehicle's controls on the fixed step.

use crate::common;

use bevy::input::InputPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_vehicle_physics::input::{Driver, VehicleInputPlugin};
use bevy_vehicle_physics::prelude::*;
use common::*;
use leafwing_input_manager::prelude::*;

fn create_input_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        InputPlugin,
        VehiclePhysicsPlugins,
        VehicleInputPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_hz(60.0))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();
    app
}

fn car_with_driver(app: &mut App) -> (Entity, Entity) {
    spawn_flat_ground(app, 1.0);
    let builder = CarBuilder::default();
    let car = spawn_car(
        app,
        &builder,
        Transform::from_xyz(0.0, builder.wheel.radius as f32, 0.0),
    );
    let driver = app.world_mut().spawn(Driver::of(car)).id();
    tick(app, 30);
    (car, driver)
}

#[test]
fn keyboard_drives_the_controls() {
    let mut app = create_input_app();
    let (car, _) = car_with_driver(&mut app);
    let c = get::<VehicleControls>(&app, car);
    assert_eq!(
        (c.throttle, c.brake, c.steering, c.gear),
        (0.0, 0.0, 0.0, 0)
    );

    // Throttle pulls away in first gear (the driver shifts by itself).
    KeyCode::KeyW.press(app.world_mut());
    tick(&mut app, 2);
    let c = get::<VehicleControls>(&app, car);
    assert_eq!((c.throttle, c.gear), (1.0, 1));
    KeyCode::KeyW.release(app.world_mut());

    // Steering moves toward full lock at the standstill rate, 4/s: 1/15 per 60 Hz step.
    KeyCode::KeyD.press(app.world_mut());
    tick(&mut app, 1);
    let first = get::<VehicleControls>(&app, car).steering;
    tick(&mut app, 3);
    let fourth = get::<VehicleControls>(&app, car).steering;
    // The car creeps at a few mm/s after the throttle blip, which slows the rate by
    // (4 − 1.2)/30 per m/s: well under 0.1 %.
    assert!((first - 4.0 / 60.0).abs() < 1e-3 * first, "{first}");
    assert!((fourth - 16.0 / 60.0).abs() < 1e-3 * fourth, "{fourth}");
    tick(&mut app, 30);
    assert_eq!(get::<VehicleControls>(&app, car).steering, 1.0);
    KeyCode::KeyD.release(app.world_mut());

    // Brake and handbrake.
    KeyCode::KeyS.press(app.world_mut());
    KeyCode::Space.press(app.world_mut());
    tick(&mut app, 1);
    let c = get::<VehicleControls>(&app, car);
    assert_eq!((c.throttle, c.brake, c.handbrake), (0.0, 1.0, 1.0));
}

#[test]
fn one_press_shifts_one_gear_however_long_it_is_held() {
    let mut app = create_input_app();
    let (car, driver) = car_with_driver(&mut app);
    app.world_mut().get_mut::<Driver>(driver).unwrap().automatic = false;
    KeyCode::KeyE.press(app.world_mut());
    tick(&mut app, 20);
    assert_eq!(get::<VehicleControls>(&app, car).gear, 1);
    KeyCode::KeyE.release(app.world_mut());
    tick(&mut app, 2);
    KeyCode::KeyE.press(app.world_mut());
    tick(&mut app, 2);
    KeyCode::KeyE.release(app.world_mut());
    tick(&mut app, 2);
    assert_eq!(get::<VehicleControls>(&app, car).gear, 2);
    // Down through neutral into reverse, and no further than the gearbox has.
    for _ in 0..5 {
        KeyCode::KeyQ.press(app.world_mut());
        tick(&mut app, 2);
        KeyCode::KeyQ.release(app.world_mut());
        tick(&mut app, 2);
    }
    let reverse = CarBuilder::default();
    let Powertrain::Combustion { gearbox, .. } = reverse.powertrain else {
        unreachable!()
    };
    assert_eq!(
        get::<VehicleControls>(&app, car).gear,
        -(gearbox.reverse_ratios.len() as i32)
    );
}

/// A tap as short as one frame shifts one gear when the fixed step runs less often than the
/// frames: at 15 and 30 Hz on 60 frames a second, twelve one-frame taps of the shift-up key at
/// every phase of the fixed step (six up from neutral to sixth, six down), each followed by
/// frames enough for a step, each shift one gear; at 120 Hz, two fixed steps a frame, no tap
/// counts twice. Until 2026-12-02 the
/// fixed step read the press itself, and a tap that fell between two steps was lost: at
/// 15 Hz ten of twelve one-frame taps (found by an outside test).
#[test]
fn a_one_frame_tap_shifts_once_at_any_fixed_rate() {
    for hz in [15.0, 30.0, 120.0] {
        let mut app = create_input_app();
        app.insert_resource(Time::<Fixed>::from_hz(hz))
            .insert_resource(TimeUpdateStrategy::ManualDuration(
                std::time::Duration::from_secs_f64(1.0 / 60.0),
            ));
        let (car, driver) = car_with_driver(&mut app);
        app.world_mut().get_mut::<Driver>(driver).unwrap().automatic = false;
        let frames_per_step = (60.0 / hz).ceil() as usize;
        let mut shifts = 0;
        for (key, expected) in [(KeyCode::KeyE, 1), (KeyCode::KeyQ, -1)] {
            for phase in 0..6 {
                // A tap at each phase of the fixed step.
                for _ in 0..(phase % frames_per_step) {
                    app.update();
                }
                let before = get::<VehicleControls>(&app, car).gear;
                key.press(app.world_mut());
                app.update();
                key.release(app.world_mut());
                for _ in 0..frames_per_step + 1 {
                    app.update();
                }
                if get::<VehicleControls>(&app, car).gear - before == expected {
                    shifts += 1;
                }
            }
        }
        assert_eq!(shifts, 12, "{hz} Hz: {shifts} of 12 taps shifted once");
    }
}

#[test]
fn gamepad_triggers_and_stick_are_analog() {
    let mut app = create_input_app();
    let (car, _) = car_with_driver(&mut app);
    let pad = app.world_mut().spawn_empty().id();
    app.world_mut()
        .resource_mut::<Messages<bevy::input::gamepad::GamepadConnectionEvent>>()
        .write(bevy::input::gamepad::GamepadConnectionEvent {
            gamepad: pad,
            connection: bevy::input::gamepad::GamepadConnection::Connected {
                name: "pad".into(),
                vendor_id: None,
                product_id: None,
            },
        });
    tick(&mut app, 2);
    GamepadButton::RightTrigger2.set_value(app.world_mut(), 0.6);
    GamepadControlAxis::LEFT_X.set_value(app.world_mut(), -0.03); // inside the dead zone
    tick(&mut app, 2);
    let c = get::<VehicleControls>(&app, car);
    assert!((c.throttle - 0.6).abs() < 1e-6, "{}", c.throttle);
    assert_eq!(c.steering, 0.0);
    GamepadControlAxis::LEFT_X.set_value(app.world_mut(), -1.0);
    tick(&mut app, 60);
    assert_eq!(get::<VehicleControls>(&app, car).steering, -1.0);
}

/// The lever reaches reverse on a car without a manual gearbox too: an automatic's reverse
/// gear (the automatic sedan), a single-speed electric car's (its motors take the lever's
/// sign as their direction), one press of shift-down from neutral each and no further, and
/// the throttle then drives the car backward (faster than 1 m/s within 3 s). Until
/// 2026-12-06 the lever's range came from a manual gearbox alone, and these cars could not
/// be put in reverse from the keyboard or a gamepad.
#[test]
fn the_lever_reaches_reverse_without_a_manual_gearbox() {
    for path in [
        "vehicles/automatic_sedan.vehicle.ron",
        "vehicles/electric_hatchback.vehicle.ron",
    ] {
        let mut app = create_input_app();
        spawn_flat_ground(&mut app, 1.0);
        let d = load_vehicle(path);
        let car = spawn_described(
            &mut app,
            &d,
            Transform::from_xyz(0.0, rest_height(&d) + 0.05, 0.0),
        );
        let driver = app.world_mut().spawn(Driver::of(car)).id();
        app.world_mut().get_mut::<Driver>(driver).unwrap().automatic = false;
        tick(&mut app, 120);
        for _ in 0..3 {
            KeyCode::KeyQ.press(app.world_mut());
            tick(&mut app, 2);
            KeyCode::KeyQ.release(app.world_mut());
            tick(&mut app, 2);
        }
        assert_eq!(get::<VehicleControls>(&app, car).gear, -1, "{path}");
        KeyCode::KeyW.press(app.world_mut());
        tick(&mut app, 180);
        let speed = get::<VehicleTelemetry>(&app, car).forward_speed;
        println!("{path}: {speed:.2} m/s after 3 s of throttle in reverse");
        assert!(speed < -1.0, "{path}: {speed} m/s");
    }
}
