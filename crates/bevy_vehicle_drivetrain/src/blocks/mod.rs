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
