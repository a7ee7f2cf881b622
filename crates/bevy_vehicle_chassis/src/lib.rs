//! The chassis of `bevy_vehicle_physics`: vehicles as Rapier rigid bodies whose wheels are the
//! [`Wheel`](bevy_vehicle_drivetrain::blocks::Wheel) blocks of their drivetrain.
//!
//! Each fixed step (see [`VehicleSystems`] for the order):
//!
//! * the driver's [`VehicleControls`](bevy_vehicle_drivetrain::VehicleControls) reach the
//!   vehicle's [`modules`]: brake torques ([`Brakes`]) and road-wheel angles ([`Steering`],
//!   Ackermann geometry with a rate limit), which act inside every RK4 stage of the
//!   drivetrain, and a user's own brake, steering, drivetrain, suspension or anti-roll-bar
//!   modules in their place;
//! * each wheel probes the ground along its suspension axis with a cylinder or ball the size of
//!   its tire, or a ray ([`GroundProbe`]), excluding its own vehicle; the hit gives the travel,
//!   the contact, the surface friction (Rapier's combine rule) and the ground's velocity;
//! * the [`Suspension`] (spring, bump/rebound damping, bump stops, preload) and the
//!   [`AntiRollBars`] give each tire's load; the wheel blocks integrate spin and tire slip over
//!   the step and report their average tire force;
//! * every force is summed at its contact point into the chassis body's one `ExternalForce`,
//!   about the world-space centre of mass, with a game's own [`AddedForce`], and dynamic
//!   ground bodies get the reaction;
//! * after Rapier steps, [`VehicleTelemetry`] and each wheel's [`WheelState`] report speed,
//!   rpm, gear, load, slip, force, travel and contact.
//!
//! [`CarBuilder`] spawns a complete car in code. A [`PathFollower`] drives a vehicle along a
//! route (steering, speed and gears), for tests, AI traffic and towing tours.
//!
//! Bad settings are refused with a [`ChassisError`] naming the vehicle, the wheel, the field
//! and the reason, never with a panic: [`CarBuilder::validate`] and [`CarBuilder::try_spawn`]
//! before spawning, and each vehicle's [`ChassisStatus`] at run time (a refused vehicle is not
//! simulated until its settings are fixed).
//!
//! Frames: the chassis frame is Bevy's (+X right, +Y up, −Z forward); units are SI.

mod body_mass;
mod builder;
mod components;
mod contact;
mod error;
mod first_step;
mod forces;
mod hitch;
pub mod modules;
mod path_follower;
mod plugin;
mod statics;
mod telemetry;
pub mod telemetry_csv;
mod validation;
mod vehicle;

pub use builder::{CarBuilder, DriveLayout, GRAVITY, Powertrain, WheelSpec};
pub use components::{
    ANTI_LOCK_REAPPLY, ANTI_LOCK_RELEASE, AddedForce, Aerodynamics, AntiLock, AntiRollBar,
    AntiRollBars, BrakeDistribution, Brakes, GroundProbe, MAX_CASTER, MAX_DAMPING_PER_STEP,
    MAX_LIFT_AREA, MAX_PRESSURE_CENTER, MAX_STATIC_CAMBER, SUSPENSION_STEP_LIMIT, Side,
    SpeedLimiter, StabilityControl, Steering, Suspension, TractionControl, VehicleTelemetry,
    WheelMount, WheelState,
};
pub use contact::{
    SPRING_STEP_WEIGHT, TIRE_FRICTION, TIRE_FRICTION_RULE, combine_friction, rapier_heading_lead,
    spring_lead,
};
pub use error::ChassisError;
pub use hitch::{Coupling, Hitch, StaticPreload};
pub use path_follower::{PathFollower, RoutePoint};
pub use plugin::{
    ChassisPlugin, LONGEST_VALIDATED_STEP, RapierSetupPlugin, VehicleSystems, fixed_step_warning,
    rapier_schedule_problem,
};
pub use statics::static_deflections;
pub use validation::{ChassisStatus, MAX_BODY_MODE_PER_STEP};
pub use vehicle::Vehicle;

/// The checks the chassis's settings go through, with the unit in each message (`must be
/// greater than 0 (kg), got -1133`): for modules, files and tools that check their own
/// settings the way the built-in components do.
pub mod checks {
    pub use crate::error::{Value, body_clearance, finite, non_negative, positive, transform};
}

/// Everything needed to build and drive vehicles.
pub mod prelude {
    pub use crate::modules::{
        AckermannSteering, AntiRollBarModule, AxleInput, BrakeModule, BuiltinBrakes,
        BuiltinSuspension, CornerInput, DrivetrainModule, InstallModule, ModuleContext,
        ModuleWheel, ResetVehicle, StabilityDemand, SteeringModule, SuspensionModule,
        VehicleModule, VehicleModules, VehicleState,
    };
    pub use crate::{
        AddedForce, Aerodynamics, AntiLock, AntiRollBar, AntiRollBars, BrakeDistribution, Brakes,
        CarBuilder, ChassisError, ChassisPlugin, ChassisStatus, Coupling, DriveLayout, GRAVITY,
        GroundProbe, Hitch, PathFollower, Powertrain, RapierSetupPlugin, RoutePoint, Side,
        SpeedLimiter, StabilityControl, Steering, Suspension, TractionControl, Vehicle,
        VehicleSystems, VehicleTelemetry, WheelMount, WheelSpec, WheelState,
    };
}
