//! Vehicles as files for `bevy_vehicle_physics`: RON topologies (`*.topology.ron`: which
//! blocks, how they connect, which wheels form each axle) and vehicles (`*.vehicle.ron`: a
//! topology plus every value), loaded as Bevy assets, spawned with one component, retuned
//! live when the file changes, and refused with an error that names the file, line, column,
//! field and reason.
//!
//! Combination files (`*.combination.ron`, see [`combination`]) couple a tow vehicle and a
//! trailer.
//!
//! See [`description`] for the file formats, [`VehicleAsset`] to spawn a vehicle from a file,
//! and [`RegisterFileBlock`] to name your own blocks in files.

pub mod blocks;
pub mod combination;
pub mod description;
pub mod error;
pub mod modules;
pub mod source;

pub use blocks::{FileBlock, FileBlockTypes, RegisterFileBlock};
pub use combination::CombinationDescription;
pub use description::{
    AxleSpec, AxleWheels, ChassisSpec, Connection, NamedBlock, VehicleDescription, VehicleTopology,
};
pub use error::VehicleFileError;
pub use modules::{FileModule, ModuleSettings, RegisterFileModule};
pub use plugin::{
    LoadedTopology, LoadedVehicle, TopologyLoader, VehicleAsset, VehicleAssetStatus,
    VehicleAssetSystems, VehicleAssetsPlugin, VehicleLoader,
};
pub use spawn::SpawnedFrom;

mod plugin;
mod spawn;
mod validate;
