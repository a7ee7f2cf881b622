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

mod clutch;
mod differential;
mod engine;
pub(crate) mod gearbox;
mod motor;
mod wheel;

pub use clutch::{AutomaticClutch, Clutch, ClutchMode, ClutchRuntime, ClutchSensors};
pub use differential::{Differential, DifferentialMode, DifferentialRuntime, DifferentialSensors};
pub use engine::{Engine, EngineRuntime, EngineSensors};
pub use gearbox::{Gearbox, GearboxRuntime, GearboxSensors, PowerFlow};
pub use motor::{Motor, MotorSensors};
pub use wheel::{BrakeMode, Tire, Wheel, WheelContact, WheelLoad, WheelRuntime, WheelSensors};
