//! The driver's retarder lever and range selector reach the blocks; left unset, game code
//! keeps setting the blocks itself.

use crate::common;

use bevy_vehicle_physics::prelude::*;
use common::*;

#[test]
fn retarder_and_range_follow_the_controls_only_when_given() {
    let mut app = create_app(60.0);
    let vehicle = spawn_vehicle(&mut app, "truck", 4);
    app.world_mut()
        .entity_mut(vehicle)
        .insert(VehicleControls::default());
    let root = spawn_block(
        &mut app,
        vehicle,
        "motor",
        constant_torque_motor(10.0, 1.0),
        None,
    );
    let retarder = spawn_block(
        &mut app,
        vehicle,
        "retarder",
        Retarder::default(),
        Some((root, Port::OUT)),
    );
    let transfer = spawn_block(
        &mut app,
        vehicle,
        "transfer",
        TransferCase::default(),
        Some((retarder, Port::OUT)),
    );
    for port in [Port::FRONT, Port::REAR] {
        spawn_block(
            &mut app,
            vehicle,
            port.0,
            wheel(1.0, WheelLoad::Viscous(1.0)),
            Some((transfer, port)),
        );
    }
    tick(&mut app, 2);

    // Game code sets the blocks; controls without the levers leave them alone.
    set::<Retarder>(&mut app, retarder, |r| r.level = 0.7);
    controls(&mut app, vehicle, |c| {
        c.throttle = 1.0;
        c.gear = 1;
    });
    tick(&mut app, 2);
    assert_eq!(get::<Retarder>(&app, retarder).level, 0.7);
    assert_eq!(
        get::<TransferCase>(&app, transfer).range,
        TransferRange::High
    );

    // The driver's levers take over once given (clamped).
    controls(&mut app, vehicle, |c| {
        c.retarder = Some(1.5);
        c.range = Some(TransferRange::Low);
    });
    tick(&mut app, 60);
    assert_eq!(get::<Retarder>(&app, retarder).level, 1.0);
    assert_eq!(
        get::<TransferCase>(&app, transfer).range,
        TransferRange::Low
    );
    let sensors = get::<RetarderSensors>(&app, retarder);
    assert!(sensors.torque < 0.0, "the retarder brakes: {sensors:?}");
}
