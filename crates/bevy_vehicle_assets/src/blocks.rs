//! Block types that vehicle files can name: the built-in ones and any registered with
//! [`RegisterFileBlock::register_file_block`].

use std::any::Any;
use std::sync::{Arc, RwLock};

use bevy::ecs::system::EntityCommands;
use bevy::prelude::*;
use bevy_vehicle_drivetrain::blocks::{
    AssistMotor, AutomaticTransmission, Clutch, Cvt, Differential, Engine, Gearbox, Hydrostatic,
    Motor, Retarder, SummingGear, TorqueConverter, Track, TransferCase,
};
use bevy_vehicle_drivetrain::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::modules::FileModuleTypes;

/// The type name a topology uses for the wheels; their settings come from the vehicle file's
/// `axles`, not from a block entry.
pub const WHEEL_TYPE: &str = "Wheel";

/// A drivetrain block of some registered type, read from a file: what the loader needs to check
/// it, connect it, spawn it and write it back.
pub trait FileBlock: Send + Sync + 'static {
    /// The block type's name ([`Block::TYPE_NAME`]).
    fn type_name(&self) -> &'static str;
    /// The block's ports.
    fn ports(&self) -> Ports;
    /// Checks the settings ([`Block::validate`]).
    fn validate(&self) -> Result<(), SettingError>;
    /// Inserts (or replaces) the block component on `entity`, with its inputs taken from
    /// `controls`.
    fn insert_into(&self, entity: &mut EntityCommands, controls: &VehicleControls);
    /// The settings as RON, e.g. `Gearbox(forward_ratios: [3.5, 2.0], ..)`.
    fn to_ron(&self) -> Result<String, ron::Error>;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn FileBlock>;
    /// The block as `Any`, to read its settings back as the concrete type.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` has the same type and settings.
    fn same_as(&self, other: &dyn FileBlock) -> bool;
}

impl<B> FileBlock for B
where
    B: Block + PartialEq + Serialize + DeserializeOwned + Send + Sync,
{
    fn type_name(&self) -> &'static str {
        B::TYPE_NAME
    }

    fn ports(&self) -> Ports {
        Block::ports(self)
    }

    fn validate(&self) -> Result<(), SettingError> {
        Block::validate(self)
    }

    fn insert_into(&self, entity: &mut EntityCommands, controls: &VehicleControls) {
        let mut block = self.clone();
        block.apply_controls(controls);
        entity.insert(block);
    }

    fn to_ron(&self) -> Result<String, ron::Error> {
        ron::ser::to_string_pretty(self, compact())
    }

    fn clone_box(&self) -> Box<dyn FileBlock> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn FileBlock) -> bool {
        other.as_any().downcast_ref::<B>() == Some(self)
    }
}

impl Clone for Box<dyn FileBlock> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl core::fmt::Debug for dyn FileBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.to_ron() {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str(self.type_name()),
        }
    }
}

/// One-line RON with struct names: how blocks and tires are written inside a vehicle file.
pub(crate) fn compact() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .struct_names(true)
        .compact_structs(true)
        .compact_arrays(true)
        .compact_maps(true)
}

/// Reads one block type's settings from RON text.
type ParseBlock = fn(&str) -> Result<Box<dyn FileBlock>, ron::error::SpannedError>;

#[derive(Clone)]
struct BlockType {
    name: &'static str,
    parse: ParseBlock,
}

/// The block types (and, in [`FileBlockTypes::modules`], the module types) vehicle files can
/// name, shared between the app and the asset loaders.
///
/// Holds the built-in blocks (`Engine`, `Clutch`, `Gearbox`, `Differential`, `Motor`,
/// `TorqueConverter`, `AutomaticTransmission`, `Cvt`, `Retarder`, `TransferCase`, `Hydrostatic`,
/// `SummingGear`, `AssistMotor`, `Track`) from the start; [`RegisterFileBlock::register_file_block`] adds more.
#[derive(Resource, Clone)]
pub struct FileBlockTypes {
    blocks: Arc<RwLock<Vec<BlockType>>>,
    modules: FileModuleTypes,
}

impl Default for FileBlockTypes {
    fn default() -> Self {
        let types = FileBlockTypes {
            blocks: Arc::default(),
            modules: FileModuleTypes::default(),
        };
        types.add::<Engine>();
        types.add::<Clutch>();
        types.add::<Gearbox>();
        types.add::<Differential>();
        types.add::<Motor>();
        types.add::<TorqueConverter>();
        types.add::<AutomaticTransmission>();
        types.add::<Cvt>();
        types.add::<Retarder>();
        types.add::<TransferCase>();
        types.add::<Hydrostatic>();
        types.add::<SummingGear>();
        types.add::<AssistMotor>();
        types.add::<Track>();
        types
    }
}

impl FileBlockTypes {
    /// Adds block type `B` (again is a no-op).
    pub fn add<B>(&self)
    where
        B: Block + PartialEq + Serialize + DeserializeOwned + Send + Sync,
    {
        let mut types = self.blocks.write().unwrap_or_else(|e| e.into_inner());
        if types.iter().any(|t| t.name == B::TYPE_NAME) {
            return;
        }
        types.push(BlockType {
            name: B::TYPE_NAME,
            parse: |text| {
                ron::Options::default()
                    .from_str::<B>(text)
                    .map(|b| Box::new(b) as Box<dyn FileBlock>)
            },
        });
    }

    /// The subsystem module types vehicle files can name.
    pub fn modules(&self) -> &FileModuleTypes {
        &self.modules
    }

    /// The names of the known types, in registration order (the wheel type first).
    pub fn names(&self) -> Vec<&'static str> {
        let types = self.blocks.read().unwrap_or_else(|e| e.into_inner());
        core::iter::once(WHEEL_TYPE)
            .chain(types.iter().map(|t| t.name))
            .collect()
    }

    /// Reads a block of type `name` from `text`; `None` when the type is unknown.
    pub(crate) fn parse(
        &self,
        name: &str,
        text: &str,
    ) -> Option<Result<Box<dyn FileBlock>, ron::error::SpannedError>> {
        let types = self.blocks.read().unwrap_or_else(|e| e.into_inner());
        let parse = types.iter().find(|t| t.name == name)?.parse;
        Some(parse(text))
    }
}

/// Registers a block type for vehicle files.
pub trait RegisterFileBlock {
    /// Registers `B` with the drivetrain
    /// ([`register_block`](bevy_vehicle_drivetrain::RegisterBlock::register_block)) and with the
    /// vehicle file loader, so that topologies name it by its [`Block::TYPE_NAME`] exactly like
    /// a built-in block, and vehicle files set its settings (its serde fields).
    fn register_file_block<B>(&mut self) -> &mut Self
    where
        B: Block + PartialEq + Serialize + DeserializeOwned + Send + Sync;
}

impl RegisterFileBlock for App {
    fn register_file_block<B>(&mut self) -> &mut Self
    where
        B: Block + PartialEq + Serialize + DeserializeOwned + Send + Sync,
    {
        self.register_block::<B>();
        self.world_mut()
            .get_resource_or_init::<FileBlockTypes>()
            .add::<B>();
        self
    }
}
