//! Subsystem modules that vehicle files can name: [`DirectDrive`] and [`LinearAntiRollBar`]
//! from the start, and any registered with [`RegisterFileModule`].
//!
//! A vehicle file picks them in its `modules` field, each by its type name with its settings:
//!
//! ```ron
//! modules: (
//!     brake: SlipLimitedBrakes(slip_limit: 0.08, fade: 0.05),
//!     anti_roll_bars: { 1: LinearAntiRollBar(stiffness: 30000.0) },
//! ),
//! ```

use std::any::Any;
use std::sync::{Arc, RwLock};

use bevy::prelude::*;
use bevy_vehicle_chassis::modules::{
    AntiRollBarModule, BrakeModule, DirectDrive, DrivetrainModule, LinearAntiRollBar,
    SteeringModule, SuspensionModule, VehicleModule,
};
use bevy_vehicle_drivetrain::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::blocks::{FileBlockTypes, compact};

/// The settings of a module that vehicle files can name: its type name, and a check of its
/// values. The settings are the type's serde fields; the module a vehicle gets is a clone.
pub trait ModuleSettings:
    Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static
{
    /// The name files use, which must be the type's serde name (its Rust name unless
    /// renamed), e.g. `SlipLimitedBrakes` for `SlipLimitedBrakes(slip_limit: 0.08)`.
    const TYPE_NAME: &'static str;

    /// Checks the settings (every value finite and in range, say); the error names the field.
    fn validate(&self) -> Result<(), SettingError> {
        Ok(())
    }

    /// Checks the settings that name axles (numbered from 0 at the front) against a vehicle
    /// with `axles` axles; the error names the field. None by default.
    fn validate_axles(&self, axles: usize) -> Result<(), SettingError> {
        let _ = axles;
        Ok(())
    }
}

impl ModuleSettings for DirectDrive {
    const TYPE_NAME: &'static str = "DirectDrive";

    fn validate(&self) -> Result<(), SettingError> {
        check_non_negative("max_torque", self.max_torque)?;
        check_non_negative("max_power", self.max_power)
    }

    fn validate_axles(&self, axles: usize) -> Result<(), SettingError> {
        match self
            .driven_axles
            .iter()
            .position(|&a| usize::from(a) >= axles)
        {
            Some(i) => Err(SettingError::new(
                format!("driven_axles[{i}]"),
                format!(
                    "there is no axle {}: the vehicle has {axles} axle(s), numbered from 0 at \
                     the front",
                    self.driven_axles[i]
                ),
            )),
            None => Ok(()),
        }
    }
}

impl ModuleSettings for LinearAntiRollBar {
    const TYPE_NAME: &'static str = "LinearAntiRollBar";

    fn validate(&self) -> Result<(), SettingError> {
        check_non_negative("stiffness", self.stiffness)
    }
}

/// Which of a vehicle's module slots a module type fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleKind {
    /// A [`BrakeModule`].
    Brake,
    /// A [`SteeringModule`].
    Steering,
    /// A [`DrivetrainModule`].
    Drivetrain,
    /// A [`SuspensionModule`].
    Suspension,
    /// An [`AntiRollBarModule`].
    AntiRollBar,
}

impl ModuleKind {
    /// The field of a vehicle file's `modules` that takes this kind.
    pub fn field(self) -> &'static str {
        match self {
            ModuleKind::Brake => "brake",
            ModuleKind::Steering => "steering",
            ModuleKind::Drivetrain => "drivetrain",
            ModuleKind::Suspension => "suspension",
            ModuleKind::AntiRollBar => "anti_roll_bars",
        }
    }
}

/// A module read from a vehicle file: its settings, and how to make the module from them.
pub trait FileModule: Send + Sync + 'static {
    /// The type's name ([`ModuleSettings::TYPE_NAME`]).
    fn type_name(&self) -> &'static str;
    /// The slot it fills.
    fn kind(&self) -> ModuleKind;
    /// Checks the settings.
    fn validate(&self) -> Result<(), SettingError>;
    /// Checks the settings that name axles against a vehicle with `axles` axles
    /// ([`ModuleSettings::validate_axles`]).
    fn validate_axles(&self, axles: usize) -> Result<(), SettingError>;
    /// A new module with these settings, for `axle` when it is an anti-roll bar.
    fn module(&self, axle: u8) -> VehicleModule;
    /// The settings as one line of RON, e.g. `DirectDrive(max_torque: 400.0, ..)`.
    fn to_ron(&self) -> Result<String, ron::Error>;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn FileModule>;
    /// The settings as `Any`, to read them back as the concrete type.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` has the same type and settings.
    fn same_as(&self, other: &dyn FileModule) -> bool;
}

/// How a module type's settings become a [`VehicleModule`] of one kind: one marker type per
/// kind.
trait MakeModule<M>: Send + Sync + 'static {
    const KIND: ModuleKind;
    fn make(settings: M, axle: u8) -> VehicleModule;
}

struct AsBrake;
struct AsSteering;
struct AsDrivetrain;
struct AsSuspension;
struct AsAntiRollBar;

impl<M: BrakeModule> MakeModule<M> for AsBrake {
    const KIND: ModuleKind = ModuleKind::Brake;
    fn make(settings: M, _: u8) -> VehicleModule {
        VehicleModule::brake(settings)
    }
}

impl<M: SteeringModule> MakeModule<M> for AsSteering {
    const KIND: ModuleKind = ModuleKind::Steering;
    fn make(settings: M, _: u8) -> VehicleModule {
        VehicleModule::steering(settings)
    }
}

impl<M: DrivetrainModule> MakeModule<M> for AsDrivetrain {
    const KIND: ModuleKind = ModuleKind::Drivetrain;
    fn make(settings: M, _: u8) -> VehicleModule {
        VehicleModule::drivetrain(settings)
    }
}

impl<M: SuspensionModule> MakeModule<M> for AsSuspension {
    const KIND: ModuleKind = ModuleKind::Suspension;
    fn make(settings: M, _: u8) -> VehicleModule {
        VehicleModule::suspension(settings)
    }
}

impl<M: AntiRollBarModule> MakeModule<M> for AsAntiRollBar {
    const KIND: ModuleKind = ModuleKind::AntiRollBar;
    fn make(settings: M, axle: u8) -> VehicleModule {
        VehicleModule::anti_roll_bar(axle, settings)
    }
}

/// A registered module type's settings, made into modules of kind `K`.
struct Registered<M, K> {
    settings: M,
    kind: core::marker::PhantomData<fn() -> K>,
}

impl<M: ModuleSettings, K: MakeModule<M>> FileModule for Registered<M, K> {
    fn type_name(&self) -> &'static str {
        M::TYPE_NAME
    }
    fn kind(&self) -> ModuleKind {
        K::KIND
    }
    fn validate(&self) -> Result<(), SettingError> {
        self.settings.validate()
    }
    fn validate_axles(&self, axles: usize) -> Result<(), SettingError> {
        self.settings.validate_axles(axles)
    }
    fn module(&self, axle: u8) -> VehicleModule {
        K::make(self.settings.clone(), axle)
    }
    fn to_ron(&self) -> Result<String, ron::Error> {
        ron::ser::to_string_pretty(&self.settings, compact())
    }
    fn clone_box(&self) -> Box<dyn FileModule> {
        Box::new(Registered::<M, K> {
            settings: self.settings.clone(),
            kind: core::marker::PhantomData,
        })
    }
    fn as_any(&self) -> &dyn Any {
        &self.settings
    }
    fn same_as(&self, other: &dyn FileModule) -> bool {
        other.kind() == K::KIND && other.as_any().downcast_ref::<M>() == Some(&self.settings)
    }
}

impl Clone for Box<dyn FileModule> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl core::fmt::Debug for dyn FileModule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.to_ron() {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str(self.type_name()),
        }
    }
}

/// Reads one module type's settings from RON text.
type ParseModule = fn(&str) -> Result<Box<dyn FileModule>, ron::error::SpannedError>;

fn parse<M: ModuleSettings, K: MakeModule<M>>(
    text: &str,
) -> Result<Box<dyn FileModule>, ron::error::SpannedError> {
    ron::Options::default().from_str::<M>(text).map(|settings| {
        Box::new(Registered::<M, K> {
            settings,
            kind: core::marker::PhantomData,
        }) as Box<dyn FileModule>
    })
}

#[derive(Clone)]
struct ModuleType {
    name: &'static str,
    kind: ModuleKind,
    parse: ParseModule,
}

/// The module types vehicle files can name, kept in [`FileBlockTypes::modules`].
///
/// Holds [`DirectDrive`] and [`LinearAntiRollBar`] from the start;
/// [`RegisterFileModule`] adds more.
#[derive(Clone)]
pub struct FileModuleTypes(Arc<RwLock<Vec<ModuleType>>>);

impl Default for FileModuleTypes {
    fn default() -> Self {
        let types = FileModuleTypes(Arc::default());
        types.add::<DirectDrive, AsDrivetrain>();
        types.add::<LinearAntiRollBar, AsAntiRollBar>();
        types
    }
}

impl FileModuleTypes {
    /// Adds module type `M` of kind `K` (again is a no-op).
    fn add<M: ModuleSettings, K: MakeModule<M>>(&self) {
        let mut types = self.0.write().unwrap_or_else(|e| e.into_inner());
        if types.iter().any(|t| t.name == M::TYPE_NAME) {
            return;
        }
        types.push(ModuleType {
            name: M::TYPE_NAME,
            kind: K::KIND,
            parse: parse::<M, K>,
        });
    }

    /// The names of the known types of `kind`, in registration order.
    pub fn names(&self, kind: ModuleKind) -> Vec<&'static str> {
        let types = self.0.read().unwrap_or_else(|e| e.into_inner());
        types
            .iter()
            .filter(|t| t.kind == kind)
            .map(|t| t.name)
            .collect()
    }

    /// The kind of the type called `name`, if it is known.
    pub fn kind_of(&self, name: &str) -> Option<ModuleKind> {
        let types = self.0.read().unwrap_or_else(|e| e.into_inner());
        types.iter().find(|t| t.name == name).map(|t| t.kind)
    }

    /// Reads a module of type `name` from `text`; `None` when the type is unknown.
    pub(crate) fn parse(
        &self,
        name: &str,
        text: &str,
    ) -> Option<Result<Box<dyn FileModule>, ron::error::SpannedError>> {
        let types = self.0.read().unwrap_or_else(|e| e.into_inner());
        let parse = types.iter().find(|t| t.name == name)?.parse;
        Some(parse(text))
    }
}

/// Registers module types for vehicle files, so that a file's `modules` can name them with
/// their settings. Each registered type must implement [`ModuleSettings`] and its module
/// trait.
pub trait RegisterFileModule {
    /// Registers a [`BrakeModule`] type.
    fn register_brake_module<M: BrakeModule + ModuleSettings>(&mut self) -> &mut Self;
    /// Registers a [`SteeringModule`] type.
    fn register_steering_module<M: SteeringModule + ModuleSettings>(&mut self) -> &mut Self;
    /// Registers a [`DrivetrainModule`] type.
    fn register_drivetrain_module<M: DrivetrainModule + ModuleSettings>(&mut self) -> &mut Self;
    /// Registers a [`SuspensionModule`] type.
    fn register_suspension_module<M: SuspensionModule + ModuleSettings>(&mut self) -> &mut Self;
    /// Registers an [`AntiRollBarModule`] type.
    fn register_anti_roll_bar_module<M: AntiRollBarModule + ModuleSettings>(&mut self)
    -> &mut Self;
}

impl RegisterFileModule for App {
    fn register_brake_module<M: BrakeModule + ModuleSettings>(&mut self) -> &mut Self {
        register::<M, AsBrake>(self)
    }
    fn register_steering_module<M: SteeringModule + ModuleSettings>(&mut self) -> &mut Self {
        register::<M, AsSteering>(self)
    }
    fn register_drivetrain_module<M: DrivetrainModule + ModuleSettings>(&mut self) -> &mut Self {
        register::<M, AsDrivetrain>(self)
    }
    fn register_suspension_module<M: SuspensionModule + ModuleSettings>(&mut self) -> &mut Self {
        register::<M, AsSuspension>(self)
    }
    fn register_anti_roll_bar_module<M: AntiRollBarModule + ModuleSettings>(
        &mut self,
    ) -> &mut Self {
        register::<M, AsAntiRollBar>(self)
    }
}

fn register<M: ModuleSettings, K: MakeModule<M>>(app: &mut App) -> &mut App {
    app.world_mut()
        .get_resource_or_init::<FileBlockTypes>()
        .modules()
        .add::<M, K>();
    app
}
