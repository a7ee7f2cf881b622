//! Where a vehicle keeps its modules, and installing, refusing and resetting them.

use bevy::ecs::system::EntityCommands;
use bevy::prelude::*;
use bevy_rapier3d::prelude::Velocity;
use bevy_vehicle_drivetrain::ExternalDrive;
use bevy_vehicle_drivetrain::prelude::*;

use super::builtin::{AckermannSteering, BuiltinBrakes, BuiltinSuspension};
use super::{AntiRollBarModule, BrakeModule, DrivetrainModule, SteeringModule, SuspensionModule};
use crate::components::{Side, WheelMount, WheelState};

/// On a vehicle entity: its subsystem modules. A vehicle starts with the built-in ones
/// ([`BuiltinBrakes`], [`AckermannSteering`], its block graph, [`BuiltinSuspension`], and a
/// [`LinearAntiRollBar`](super::LinearAntiRollBar) for each bar of its
/// [`AntiRollBars`](crate::AntiRollBars)); [`InstallModule::install_module`] replaces them.
#[derive(Component)]
pub struct VehicleModules {
    pub(crate) brake: Box<dyn BrakeModule>,
    pub(crate) steering: Box<dyn SteeringModule>,
    pub(crate) drivetrain: Option<Box<dyn DrivetrainModule>>,
    pub(crate) suspension: Box<dyn SuspensionModule>,
    /// Installed bars by axle; they replace the built-in bar of that axle, if any.
    pub(crate) anti_roll_bars: Vec<(u8, Box<dyn AntiRollBarModule>)>,
    /// What the modules did.
    pub report: ModuleReport,
}

impl Default for VehicleModules {
    fn default() -> Self {
        VehicleModules {
            brake: Box::new(BuiltinBrakes::default()),
            steering: Box::new(AckermannSteering::default()),
            drivetrain: None,
            suspension: Box::new(BuiltinSuspension),
            anti_roll_bars: Vec::new(),
            report: ModuleReport::default(),
        }
    }
}

impl core::fmt::Debug for VehicleModules {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VehicleModules")
            .field("brake", &self.brake.name())
            .field("steering", &self.steering.name())
            .field(
                "drivetrain",
                &self.drivetrain.as_ref().map_or("block graph", |d| d.name()),
            )
            .field("suspension", &self.suspension.name())
            .field(
                "anti_roll_bars",
                &self
                    .anti_roll_bars
                    .iter()
                    .map(|(axle, bar)| (*axle, bar.name()))
                    .collect::<Vec<_>>(),
            )
            .field("report", &self.report)
            .finish()
    }
}

impl VehicleModules {
    /// Asks the processor to start loading the boxed brake, steering and drivetrain modules,
    /// which every step calls (see [`bevy_vehicle_drivetrain::prefetch`]). A hint only.
    #[inline]
    pub(crate) fn prefetch(&self) {
        use bevy_vehicle_drivetrain::prefetch::value;
        value(&*self.brake);
        value(&*self.steering);
        if let Some(drivetrain) = &self.drivetrain {
            value(&**drivetrain);
        }
    }

    /// The brake module's name.
    pub fn brake_name(&self) -> &str {
        self.brake.name()
    }

    /// The steering module's name.
    pub fn steering_name(&self) -> &str {
        self.steering.name()
    }

    /// The drivetrain module's name, or `None` while the block graph drives the wheels.
    pub fn drivetrain_name(&self) -> Option<&str> {
        self.drivetrain.as_deref().map(|d| d.name())
    }

    /// The suspension module's name.
    pub fn suspension_name(&self) -> &str {
        self.suspension.name()
    }

    /// The installed anti-roll-bar module's name on `axle`, or `None` where the built-in
    /// bar (or none) acts.
    pub fn anti_roll_bar_name(&self, axle: u8) -> Option<&str> {
        self.anti_roll_bars
            .iter()
            .find(|(a, _)| *a == axle)
            .map(|(_, bar)| bar.name())
    }

    /// Calls every module's `reset` and clears the report.
    pub fn reset(&mut self) {
        self.brake.reset();
        self.steering.reset();
        if let Some(drivetrain) = &mut self.drivetrain {
            drivetrain.reset();
        }
        self.suspension.reset();
        for (_, bar) in &mut self.anti_roll_bars {
            bar.reset();
        }
        self.report = ModuleReport::default();
    }
}

/// What a vehicle's modules did since the vehicle was spawned or reset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleReport {
    /// Brake torques returned with the sign that would drive the wheel, and applied against
    /// its spin instead (count of wheel-stages).
    pub brake_corrections: u64,
    /// Non-finite numbers returned by modules and replaced (count).
    pub invalid_outputs: u64,
    /// The last installation that was refused through [`EntityCommands`], if any.
    pub last_refusal: Option<ModuleError>,
}

/// A module to install on a vehicle with [`InstallModule::install_module`].
pub enum VehicleModule {
    /// Replaces the brake module.
    Brake(Box<dyn BrakeModule>),
    /// Replaces the steering module.
    Steering(Box<dyn SteeringModule>),
    /// Replaces the block graph with a drivetrain module, or with `None` gives the wheels back
    /// to the block graph.
    Drivetrain(Option<Box<dyn DrivetrainModule>>),
    /// Replaces the suspension module (all corners).
    Suspension(Box<dyn SuspensionModule>),
    /// Installs an anti-roll-bar module on an axle (replacing its built-in bar, if any), or
    /// with `None` gives the axle back to its built-in bar.
    AntiRollBar {
        /// Axle number (0 = front-most).
        axle: u8,
        /// The bar.
        module: Option<Box<dyn AntiRollBarModule>>,
    },
}

impl VehicleModule {
    /// A brake module.
    pub fn brake(module: impl BrakeModule) -> Self {
        VehicleModule::Brake(Box::new(module))
    }

    /// A steering module.
    pub fn steering(module: impl SteeringModule) -> Self {
        VehicleModule::Steering(Box::new(module))
    }

    /// A drivetrain module, replacing the block graph.
    pub fn drivetrain(module: impl DrivetrainModule) -> Self {
        VehicleModule::Drivetrain(Some(Box::new(module)))
    }

    /// A suspension module.
    pub fn suspension(module: impl SuspensionModule) -> Self {
        VehicleModule::Suspension(Box::new(module))
    }

    /// An anti-roll-bar module on `axle`.
    pub fn anti_roll_bar(axle: u8, module: impl AntiRollBarModule) -> Self {
        VehicleModule::AntiRollBar {
            axle,
            module: Some(Box::new(module)),
        }
    }

    /// Which slot this fills, and the module's name, for messages.
    fn describe(&self) -> (String, String) {
        match self {
            VehicleModule::Brake(m) => ("brake".into(), m.name().into()),
            VehicleModule::Steering(m) => ("steering".into(), m.name().into()),
            VehicleModule::Drivetrain(m) => (
                "drivetrain".into(),
                m.as_ref().map_or("block graph", |m| m.name()).into(),
            ),
            VehicleModule::Suspension(m) => ("suspension".into(), m.name().into()),
            VehicleModule::AntiRollBar { axle, module } => (
                format!("anti-roll bar on axle {axle}"),
                module.as_ref().map_or("built-in bar", |m| m.name()).into(),
            ),
        }
    }
}

/// Why a module was not installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleError {
    /// The vehicle's name (or entity id).
    pub vehicle: String,
    /// The slot: `brake`, `steering`, `drivetrain`, `suspension` or `anti-roll bar on axle N`.
    pub slot: String,
    /// The module's name.
    pub module: String,
    /// Why the vehicle cannot host it.
    pub reason: String,
}

impl core::fmt::Display for ModuleError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "vehicle '{}': cannot install {} module '{}': {}",
            self.vehicle, self.slot, self.module, self.reason
        )
    }
}

impl std::error::Error for ModuleError {}

/// Installs subsystem modules on a vehicle: one call per module, on a live vehicle.
///
/// The vehicle must be able to host the module, or the module is refused with a
/// [`ModuleError`] and the vehicle keeps the module it had:
/// * every module needs a [`Vehicle`](crate::Vehicle) with at least one wheel (a wheel block
///   with a [`WheelMount`]);
/// * an anti-roll bar needs an axle with one left and one right wheel.
///
/// On [`EntityWorldMut`] the result is returned; on [`EntityCommands`] a refusal is logged
/// with `error!` and kept in [`ModuleReport::last_refusal`].
pub trait InstallModule {
    /// What the call returns.
    type Output;
    /// Installs `module`, replacing the one in its slot.
    fn install_module(&mut self, module: VehicleModule) -> Self::Output;
}

impl InstallModule for EntityWorldMut<'_> {
    type Output = Result<(), ModuleError>;

    fn install_module(&mut self, module: VehicleModule) -> Result<(), ModuleError> {
        let vehicle = self.id();
        self.world_scope(|world| install(world, vehicle, module))
    }
}

impl InstallModule for EntityCommands<'_> {
    type Output = ();

    fn install_module(&mut self, module: VehicleModule) {
        self.queue(move |mut entity: EntityWorldMut| {
            if let Err(error) = entity.install_module(module) {
                error!("{error}");
                if let Some(mut modules) = entity.get_mut::<VehicleModules>() {
                    modules.report.last_refusal = Some(error);
                }
            }
        });
    }
}

/// Installs `module` on `vehicle`, or says why it cannot.
fn install(world: &mut World, vehicle: Entity, module: VehicleModule) -> Result<(), ModuleError> {
    let name = world
        .get::<Name>(vehicle)
        .map_or_else(|| format!("{vehicle}"), |n| n.as_str().to_owned());
    let (slot, module_name) = module.describe();
    let refuse = |reason: String| ModuleError {
        vehicle: name.clone(),
        slot: slot.clone(),
        module: module_name.clone(),
        reason,
    };
    if world.get::<VehicleModules>(vehicle).is_none() {
        return Err(refuse("the entity is not a vehicle".into()));
    }
    let mounts: Vec<WheelMount> = world
        .get::<Blocks>(vehicle)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| world.get::<WheelMount>(b).cloned())
                .collect()
        })
        .unwrap_or_default();
    if mounts.is_empty() {
        return Err(refuse("the vehicle has no wheels".into()));
    }
    if let VehicleModule::AntiRollBar { axle, .. } = &module {
        let on_axle = |side| {
            mounts
                .iter()
                .filter(|m| m.axle == *axle && m.side == side)
                .count()
        };
        if (on_axle(Side::Left), on_axle(Side::Right)) != (1, 1) {
            let mut axles: Vec<u8> = mounts.iter().map(|m| m.axle).collect();
            axles.sort_unstable();
            axles.dedup();
            let list = axles
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(refuse(format!(
                "the vehicle has no axle {axle} with one left and one right wheel (its axles: {list})"
            )));
        }
    }
    let mut entity = world.entity_mut(vehicle);
    let graph_replaced = match &module {
        VehicleModule::Drivetrain(m) => Some(m.is_some()),
        _ => None,
    };
    let mut modules = entity.get_mut::<VehicleModules>().expect("checked above");
    match module {
        VehicleModule::Brake(m) => modules.brake = m,
        VehicleModule::Steering(m) => modules.steering = m,
        VehicleModule::Drivetrain(m) => modules.drivetrain = m,
        VehicleModule::Suspension(m) => modules.suspension = m,
        VehicleModule::AntiRollBar { axle, module } => {
            modules.anti_roll_bars.retain(|(a, _)| *a != axle);
            if let Some(m) = module {
                modules.anti_roll_bars.push((axle, m));
            }
        }
    }
    match graph_replaced {
        Some(true) => {
            entity.insert(ExternalDrive);
        }
        Some(false) => {
            entity.remove::<ExternalDrive>();
        }
        None => {}
    }
    Ok(())
}

/// Trigger on a vehicle when the game resets it (puts it back on the track, restarts a run):
/// the vehicle is brought to rest as if just built. Its body's `Velocity` is zeroed, its
/// drivetrain goes back to its starting state ([`Drivetrain::reset`]: wheels, shafts and the
/// tires' slips at rest, a running engine at idle), each wheel's [`WheelState`] starts afresh
/// (the next step takes no slide over the ground from the wheels' last centres), every
/// module's `reset` is called and the [`ModuleReport`] cleared. The controls are left as they
/// are, and so is the pose: set the `Transform` to put the vehicle somewhere else (before or
/// after the trigger, in the same frame).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_vehicle_chassis::modules::ResetVehicle;
/// # fn reset(mut commands: Commands, car: Entity) {
/// commands.trigger(ResetVehicle { entity: car });
/// # }
/// ```
#[derive(EntityEvent, Clone, Copy, Debug)]
pub struct ResetVehicle {
    /// The vehicle.
    pub entity: Entity,
}

/// Brings a vehicle to rest and resets its modules on [`ResetVehicle`].
pub(crate) fn on_reset_vehicle(
    ev: On<ResetVehicle>,
    mut vehicles: Query<(
        Option<&mut VehicleModules>,
        Option<&mut Drivetrain>,
        Option<&mut Velocity>,
        Option<&Blocks>,
    )>,
    mut wheels: Query<&mut WheelState>,
) {
    let Ok((modules, drivetrain, velocity, blocks)) = vehicles.get_mut(ev.entity) else {
        return;
    };
    // The wheels' contacts as a new car's: the next step must not read the stop as a
    // deceleration to carry on across it, nor the move from the wheels' last centres (the game
    // sets the body down elsewhere before a reset) as their tires sliding over the ground,
    // which a held tire's patch would then pull back.
    for block in blocks.iter().flat_map(|b| b.iter()) {
        if let Ok(mut state) = wheels.get_mut(block) {
            *state = WheelState::default();
        }
    }
    if let Some(mut modules) = modules {
        modules.reset();
    }
    if let Some(mut drivetrain) = drivetrain {
        drivetrain.reset();
    }
    if let Some(mut velocity) = velocity {
        *velocity = Velocity::zero();
    }
}
