//! The built-in blocks.
//!
//! | block | kind | state | ports |
//! |---|---|---|---|
//! | [`Engine`] | root, inertial | crank speed | `out` |
//! | [`Motor`] | root, inertial | rotor speed | `out` |
//! | [`Clutch`] | friction coupling | — | `out` |
//! | [`Gearbox`] | gear (manual) | — | `out` |
//! | [`Differential`] | split, limited-slip | — | `left`, `right` |
//! | [`Wheel`] | leaf, inertial | angle, spin | — |
//! | [`TorqueConverter`] | fluid coupling, lock-up clutch | — | `out` |
//! | [`AutomaticTransmission`] | gear (automatic shifting, park) | — | `out` |
//! | [`Cvt`] | continuously variable gear (ratio follows a target input speed) | variator ratio | `out` |
//! | [`Retarder`] | speed-dependent driveline brake | — | `out` |
//! | [`TransferCase`] | high/low range, centre differential | — | `front`, `rear` |

/// Implements [`Block::take_inputs`](crate::Block::take_inputs) for a block whose clamped driver
/// inputs are the named `Copy` fields: they are taken from the newer copy, and put back if the
/// two copies still differ in anything else.
macro_rules! take_inputs_fields {
    ($($field:ident),+ $(,)?) => {
        fn take_inputs(&mut self, source: &Self) -> bool {
            let old = ($(core::mem::replace(&mut self.$field, source.$field),)+);
            if *self == *source {
                return true;
            }
            ($(self.$field,)+) = old;
            false
        }
    };
}

mod automatic;
mod body_axis;
mod clutch;
mod cvt;
mod differential;
mod engine;
pub(crate) mod gearbox;
mod hybrid;
mod hydrostatic;
mod motor;
mod retarder;
mod torque_converter;
mod track;
mod transfer_case;
mod wheel;

pub use automatic::{AutomaticRuntime, AutomaticSensors, AutomaticTransmission};
pub use body_axis::BodyAxis;
pub use clutch::{AutomaticClutch, Clutch, ClutchMode, ClutchRuntime, ClutchSensors};
pub use cvt::{Cvt, CvtRuntime, CvtSensors};
pub use differential::{Differential, DifferentialMode, DifferentialRuntime, DifferentialSensors};
pub use engine::{Engine, EngineRuntime, EngineSensors};
pub use gearbox::{Gearbox, GearboxRuntime, GearboxSensors, PowerFlow};
pub use hybrid::{AssistMotor, SummingGear, SummingGearSensors};
pub use hydrostatic::{AntiStall, Hydrostatic, HydrostaticRuntime, HydrostaticSensors, TrackLever};
pub use motor::{Motor, MotorSensors};
pub use retarder::{Retarder, RetarderSensors};
pub use torque_converter::{
    AutoLockup, TorqueConverter, TorqueConverterRuntime, TorqueConverterSensors,
};
pub use track::{Track, TrackSensors};
pub use transfer_case::{TransferCase, TransferCaseRuntime, TransferCaseSensors, TransferRange};
pub use wheel::{
    BODY_SPRING_LIMIT, BrakeMode, FLOOR_SUBSTEP, HELD_DAMPING_SPEED, LATERAL_ANCHOR_SPEED,
    PATCH_SPRING_LIMIT, Tire, Wheel, WheelContact, WheelLoad, WheelRuntime, WheelSensors,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{Block, DrivePath};
    use crate::controls::VehicleControls;

    /// Every control set, on either drive path.
    fn every_control_set() -> Vec<(VehicleControls, DrivePath)> {
        let controls = VehicleControls {
            engine_running: false,
            throttle: 1.0,
            brake: 1.0,
            clutch: 1.0,
            steering: -1.0,
            gear: -1,
            handbrake: 1.0,
            parking: true,
            retarder: Some(1.0),
            range: Some(TransferRange::Low),
        };
        [false, true]
            .into_iter()
            .flat_map(|through| {
                let path = DrivePath {
                    through_direction_selector: through,
                };
                [(VehicleControls::default(), path), (controls.clone(), path)]
            })
            .collect()
    }

    /// A block type that says it takes no controls is handed none by the plugin: it must
    /// ignore them, unchanged and reporting no change.
    fn ignores_controls<B: Block + Default + PartialEq>() {
        assert!(!B::TAKES_CONTROLS, "{}", B::TYPE_NAME);
        for (controls, path) in every_control_set() {
            let mut block = B::default();
            assert!(
                !block.apply_controls_on(&controls, path),
                "{}",
                B::TYPE_NAME
            );
            assert!(block == B::default(), "{} changed", B::TYPE_NAME);
        }
    }

    #[test]
    fn blocks_that_take_no_controls_ignore_them() {
        ignores_controls::<Wheel>();
        ignores_controls::<Differential>();
        ignores_controls::<Track>();
        ignores_controls::<SummingGear>();
    }

    /// And the ones that take them say so: each one's inputs change with some control set
    /// (set up to take them: an automatic lock-up, a track's lever).
    #[test]
    fn blocks_that_take_controls_say_so() {
        fn takes<B: Block>(block: B) {
            assert!(B::TAKES_CONTROLS, "{}", B::TYPE_NAME);
            let changed = every_control_set()
                .into_iter()
                .any(|(controls, path)| block.clone().apply_controls_on(&controls, path));
            assert!(changed, "{} took nothing", B::TYPE_NAME);
        }
        takes(Engine::default());
        takes(Motor::default());
        takes(Clutch::default());
        takes(Gearbox::default());
        takes(TorqueConverter {
            auto_lockup: Some(AutoLockup::default()),
            ..Default::default()
        });
        takes(AutomaticTransmission::default());
        takes(Cvt::default());
        takes(TransferCase::default());
        takes(Retarder::default());
        takes(Hydrostatic {
            lever: TrackLever::Left,
            ..Default::default()
        });
        takes(AssistMotor::default());
    }
}
