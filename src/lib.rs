//! # `bevy_vehicle_physics`
//!
//! Modular vehicle physics for Bevy: drivetrains built from blocks (engine, clutch, gearbox,
//! differentials, wheels, or your own) that are ECS components on their own entities, joined by
//! shafts and solved every fixed step with an upstream/downstream pass and RK4 substeps.
//!
//! Add [`VehiclePhysicsPlugins`] to an app and spawn a vehicle:
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_vehicle_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, VehiclePhysicsPlugins));
//! let world = app.world_mut();
//! let car = world.spawn((Name::new("car"), Drivetrain::new(4))).id();
//! let engine = world.spawn((Name::new("engine"), Engine::default(), BlockOf(car))).id();
//! let clutch = world.spawn((Clutch::default(), BlockOf(car), DrivenBy::new(engine))).id();
//! let gearbox = world
//!     .spawn((Gearbox { gear: 1, ..default() }, BlockOf(car), DrivenBy::new(clutch)))
//!     .id();
//! let diff = world.spawn((Differential::default(), BlockOf(car), DrivenBy::new(gearbox))).id();
//! world.spawn((Wheel::default(), BlockOf(car), DrivenBy::port(diff, Port::LEFT)));
//! world.spawn((Wheel::default(), BlockOf(car), DrivenBy::port(diff, Port::RIGHT)));
//! ```
//!
//! ## Coordinates and units
//!
//! Bevy's frame: right-handed, +Y up, −Z forward. Units are SI (m, kg, s, N, N·m, rad, rad/s);
//! engine settings and torque tables give engine speed in rpm, as spec sheets do, and say so.
//!
//! ## Plugins
//!
//! | plugin | what it does |
//! |---|---|
//! | [`DrivetrainPlugin`](drivetrain::DrivetrainPlugin) | compiles, validates and steps every vehicle's blocks |
//! | [`RapierSetupPlugin`](chassis::RapierSetupPlugin) | Rapier in `FixedUpdate`, unless the app already has it |
//! | [`ChassisPlugin`](chassis::ChassisPlugin) | wheel contact, suspension, brakes, steering, forces into Rapier, telemetry; Rapier's time step kept equal to `Time<Fixed>` |
//! | [`VehicleAssetsPlugin`](assets::VehicleAssetsPlugin) | `*.vehicle.ron` files as assets: spawning with [`VehicleAsset`](assets::VehicleAsset), hot reload, located errors |
//!
//! Driver input is separate, for games that bring their own: add
//! [`VehicleInputPlugin`](input::VehicleInputPlugin) and spawn a [`Driver`](input::Driver) to
//! drive a vehicle with a gamepad or the keyboard through the public
//! [`DriveAction`](input::DriveAction) set.
//!
//! [`test_track`] is a proving ground of Rapier colliders (slopes, bumps, low-friction
//! patches, a banked curve, cones) with a tour of it, for tests and demos; a
//! [`PathFollower`](chassis::PathFollower) drives vehicles along such routes.
//!
//! To set Rapier up yourself (physics hooks, a length unit), add
//! `RapierPhysicsPlugin::<YourHooks>::default().in_fixed_schedule()` before these plugins:
//! [`RapierSetupPlugin`](chassis::RapierSetupPlugin) then adds none. Rapier must step once per
//! fixed step, in `FixedUpdate`; the [`ChassisPlugin`](chassis::ChassisPlugin) keeps its time
//! step equal to the fixed step's and logs an error when it steps elsewhere, twice or not at all
//! ([`rapier_schedule_problem`](chassis::rapier_schedule_problem)).

use bevy::app::{PluginGroup, PluginGroupBuilder};

/// Rapier's Bevy plugin, which the vehicles' bodies run on, re-exported: the ground and any
/// other body take its `Collider`, `Friction` and `RigidBody`
/// (`bevy_vehicle_physics::rapier::prelude::*`) without a dependency of your own, which would
/// have to be this exact version (`=0.36.0`).
pub use bevy_rapier3d as rapier;
pub use bevy_vehicle_assets as assets;
pub use bevy_vehicle_chassis as chassis;
pub use bevy_vehicle_drivetrain as drivetrain;
pub use bevy_vehicle_input as input;
pub use bevy_vehicle_tire as tire;

pub mod test_track;

/// All of the vehicle physics plugins. See the crate docs for the table.
pub struct VehiclePhysicsPlugins;

impl PluginGroup for VehiclePhysicsPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(drivetrain::DrivetrainPlugin::default())
            .add(chassis::RapierSetupPlugin)
            .add(chassis::ChassisPlugin)
            .add(assets::VehicleAssetsPlugin)
    }
}

/// Everything a vehicle author needs.
pub mod prelude {
    pub use crate::VehiclePhysicsPlugins;
    pub use bevy_vehicle_assets::{
        FileBlockTypes, LoadedVehicle, ModuleSettings, RegisterFileBlock, RegisterFileModule,
        VehicleAsset, VehicleAssetStatus, VehicleDescription, VehicleFileError,
    };
    pub use bevy_vehicle_chassis::prelude::*;
    pub use bevy_vehicle_drivetrain::prelude::*;
    pub use bevy_vehicle_tire::{LoadedTire, MagicFormula, MfAligning, MfCamber, TireModel};
}
