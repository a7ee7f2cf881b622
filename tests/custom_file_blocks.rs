//! A block written in the user's own crate, registered with one call, is named in vehicle files
//! exactly like a built-in block.

use crate::common;

use bevy::prelude::*;
use bevy_vehicle_physics::assets::FileBlockTypes;
use bevy_vehicle_physics::prelude::*;
use common::*;
use serde::{Deserialize, Serialize};

/// A fixed reduction gear: the input turns `ratio` times as fast as the output.
#[derive(Component, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReductionGear {
    /// Input speed / output speed (dimensionless, > 0).
    ratio: f64,
}

impl Block for ReductionGear {
    const TYPE_NAME: &'static str = "ReductionGear";
    type Runtime = ();
    type Sensors = NoSensors;

    fn ports(&self) -> Ports {
        Ports::INLINE
    }
    fn validate(&self) -> Result<(), SettingError> {
        check_positive("ratio", self.ratio)
    }
    fn upstream(&self, _: &(), _: &[f64], _: &StageContext, o: &[Shaft], _: &mut [f64]) -> ShaftUp {
        o[0].up.reflect(self.ratio, self.ratio)
    }
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        outputs[0].down = ShaftDown {
            torque: input.torque * self.ratio,
            speed: input.speed / self.ratio,
        };
    }
    fn sensors(&self, _: &(), _: &[f64], _: &Shafts) -> NoSensors {
        NoSensors
    }
}

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// Front-wheel drive with a reduction gear between gearbox and differential.
const TOPOLOGY: &str = r#"Topology(
    blocks: {
        "engine": Engine, "clutch": Clutch, "gearbox": Gearbox,
        "drop_gear": ReductionGear(ratio: 1.25),
        "differential": Differential,
        "wheel_fl": Wheel, "wheel_fr": Wheel, "wheel_rl": Wheel, "wheel_rr": Wheel,
    },
    connections: {
        "clutch": "engine", "gearbox": "clutch", "drop_gear": "gearbox",
        "differential": "drop_gear",
        "wheel_fl": "differential.left", "wheel_fr": "differential.right",
    },
    axles: [(left: "wheel_fl", right: "wheel_fr"), (left: "wheel_rl", right: "wheel_rr")],
)"#;

fn read(types: &FileBlockTypes, topology: &str) -> Result<VehicleDescription, VehicleFileError> {
    let vehicle = std::fs::read_to_string(format!("{ASSETS}/vehicles/hatchback.vehicle.ron"))
        .unwrap()
        .replace("topologies/fwd.topology.ron", "custom.topology.ron");
    let topology = topology.to_owned();
    VehicleDescription::parse("custom.vehicle.ron", &vehicle, types, |path| {
        if path == "custom.topology.ron" {
            Ok(topology.clone())
        } else {
            std::fs::read_to_string(format!("{ASSETS}/{path}")).map_err(|e| e.to_string())
        }
    })
}

#[test]
fn a_registered_block_is_named_in_files_like_a_built_in_one() {
    let mut app = create_app(60.0);
    // Before registration the type is unknown, and the error lists the known ones.
    let types = app.world().resource::<FileBlockTypes>().clone();
    let error = read(&types, TOPOLOGY).unwrap_err();
    assert!(
        error.reason.contains("unknown block type `ReductionGear`")
            && error.field == "blocks.drop_gear",
        "{error}"
    );

    app.register_file_block::<ReductionGear>();
    let description = read(&types, TOPOLOGY).unwrap_or_else(|e| panic!("{e}"));
    // Its settings are checked like any block's.
    let error = read(&types, &TOPOLOGY.replace("ratio: 1.25", "ratio: -1.0")).unwrap_err();
    assert_eq!(error.field, "blocks.drop_gear.ratio", "{error}");

    spawn_flat_ground(&mut app, 1.0);
    let world = app.world_mut();
    let mut commands = world.commands();
    let car = description.spawn(&mut commands, Transform::from_xyz(0.0, 0.316, 0.0));
    world.flush();
    tick(&mut app, 60);
    controls(&mut app, car, |c| {
        c.gear = 1;
        c.throttle = 0.5;
    });
    tick(&mut app, 240);
    // Past the automatic clutch's lock speed, so the clutch no longer slips.
    assert!(get::<VehicleTelemetry>(&app, car).engine_rpm > 2300.0);

    // With the clutch locked, the engine turns at wheel speed × (1st gear × drop gear × final
    // drive): 3.769 × 1.25 × 3.647 for the hatchback.
    let engine = get::<VehicleTelemetry>(&app, car).engine_rpm;
    let wheels = wheels(&mut app, car);
    let front: f64 = wheels[..2]
        .iter()
        .map(|&w| get::<WheelSensors>(&app, w).speed)
        .sum::<f64>()
        / 2.0;
    let expected = rad_s_to_rpm(front) * 3.769 * 1.25 * 3.647;
    assert!(
        (engine - expected).abs() < 1e-6 * expected,
        "engine {engine} rpm, expected {expected} rpm"
    );
    assert!(velocity(&app, car).length() > 2.0);
}
