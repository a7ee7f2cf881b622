//! The modular drivetrain of `bevy_vehicle_physics`.
//!
//! A drivetrain is a tree of **blocks** (engine, clutch, gearbox, differential, wheels, or
//! your own), each an ECS component on its own entity. Blocks belong to a vehicle through
//! [`BlockOf`] and are connected by shafts through [`DrivenBy`], which names the upstream
//! block's output port explicitly.
//!
//! Every fixed step, [`DrivetrainPlugin`] runs each vehicle's blocks through the protocol of
//! [`shaft`]: an **upstream pass** (leaves to root) hands on angular momentum `L`, inertia `I`
//! and reaction torque `Tr`; the root computes its torque against the lumped load; a
//! **downstream pass** hands on drive torque `Td`; inertial blocks integrate their state with
//! RK4 in `N` substeps. Clutches, limited-slip differentials and brakes switch between locked
//! and slipping once per substep, and a momentum-conserving pass makes speeds agree whenever a
//! rigid connection appears. All drivetrain state and math is `f64`.
//!
//! | module | what it holds |
//! |---|---|
//! | [`shaft`] | what a shaft carries, and the lumped-inertia algebra |
//! | [`block`] | the [`Block`] trait, ports, contexts, setting checks |
//! | [`controls`] | [`VehicleControls`], the driver's inputs every block reads from |
//! | [`relations`] | [`BlockOf`]/[`Blocks`] and [`DrivenBy`]/[`Drives`] |
//! | [`blocks`] | the built-in blocks |
//! | [`graph`] | graph validation and pass order, [`DrivetrainError`] |
//! | [`curve`] | torque tables and rpm conversions |
//! | [`plugin`] | [`DrivetrainPlugin`], [`Drivetrain`], [`RegisterBlock`] |
//! | [`prefetch`] | cache hints for systems that step thousands of vehicles |
//! | [`parallel`] | stepping vehicles on every compute thread, [`ParallelStep`] |
//!
//! Units are SI throughout (engine speeds in tables and engine settings are in rpm, as spec
//! sheets give them, and say so). Shaft speeds are signed about each shaft's own positive
//! sense of rotation; for a wheel that is forward rolling.

mod batch;
pub mod block;
pub mod blocks;
pub mod controls;
pub mod curve;
pub mod graph;
pub mod parallel;
pub mod plugin;
pub mod prefetch;
pub mod relations;
pub mod shaft;
mod solver;

pub use block::{
    Block, DrivePath, ModeChange, NoSensors, PortSpec, Ports, SettingError, Shafts, StageContext,
    StepContext, wait_over,
};
pub use controls::VehicleControls;
pub use graph::{DrivetrainError, VehicleError};
pub use parallel::ParallelStep;
pub use plugin::{
    BlockRegistry, BlockSlot, DEFAULT_MAX_SUBSTEP, Drivetrain, DrivetrainPlugin,
    DrivetrainSchedule, DrivetrainStatus, DrivetrainSystems, ExternalDrive, ExternalStep,
    LOAD_RATE_SUBSTEP, MAX_SUBSTEPS, RegisterBlock, SensorWriter,
};
pub use relations::{BlockOf, Blocks, DrivenBy, Drives, Port};
pub use solver::StageWheels;

/// Everything needed to build and run drivetrains.
pub mod prelude {
    pub use crate::block::{
        Block, DrivePath, Input, ModeChange, NoSensors, PortSpec, Ports, SettingError, Shafts,
        StageContext, StepContext, check_finite, check_fraction, check_non_negative,
        check_positive, check_range, clamp_input, wait_over,
    };
    pub use crate::blocks::*;
    pub use crate::controls::{ShiftSchedule, ThrottleEasing, VehicleControls};
    pub use crate::curve::{TorqueCurve, rad_s_to_rpm, rpm_to_rad_s};
    pub use crate::graph::{DrivetrainError, VehicleError};
    pub use crate::parallel::ParallelStep;
    pub use crate::plugin::{
        Drivetrain, DrivetrainPlugin, DrivetrainStatus, DrivetrainSystems, RegisterBlock,
    };
    pub use crate::relations::{BlockOf, Blocks, DrivenBy, Drives, Port};
    pub use crate::shaft::{Pass, Reciprocal, Shaft, ShaftDown, ShaftUp, lump, lump_with, sign};
}
