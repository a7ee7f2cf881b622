//! [`DrivetrainPlugin`]: the systems that compile, feed, step and read out drivetrains, and
//! [`RegisterBlock`] for adding block types.

use core::any::TypeId;

use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::block::{Block, DrivePath, Ports, SettingError};
use crate::blocks::{
    AssistMotor, AutomaticTransmission, Clutch, ClutchSensors, Cvt, Differential,
    DifferentialSensors, Engine, EngineSensors, Gearbox, GearboxSensors, Hydrostatic, Motor,
    MotorSensors, Retarder, SummingGear, TorqueConverter, Track, TransferCase, Wheel, WheelSensors,
};
use crate::controls::VehicleControls;
use crate::graph::{DrivetrainError, GraphBlock, VehicleError, order_blocks};
use crate::parallel::ParallelStep;
use crate::prefetch;
use crate::relations::{BlockOf, Blocks, DrivenBy, Drives};
use crate::shaft::Shaft;
use crate::solver::{BlockCell, Cell, Program, StageWheels};

/// Runs every vehicle's drivetrain in a fixed-step schedule (`FixedUpdate` by default).
///
/// It registers the built-in blocks; add your own with [`RegisterBlock::register_block`].
/// Systems run in [`DrivetrainSystems`] order every fixed step.
pub struct DrivetrainPlugin {
    schedule: Interned<dyn ScheduleLabel>,
}

impl Default for DrivetrainPlugin {
    fn default() -> Self {
        DrivetrainPlugin::new(FixedUpdate)
    }
}

impl DrivetrainPlugin {
    /// Runs the drivetrain in `schedule`, which should be a fixed-timestep schedule: the step
    /// length is read from `Res<Time>`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        DrivetrainPlugin {
            schedule: schedule.intern(),
        }
    }
}

/// The drivetrain's system sets, run in this order (chained) once per fixed step.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrivetrainSystems {
    /// Hands changed [`VehicleControls`] to each block ([`Block::apply_controls`]). Systems
    /// that set controls belong before this set.
    Controls,
    /// Compiles the drivetrains whose blocks or connections changed, and refuses invalid ones.
    Rebuild,
    /// Copies changed block components (settings and inputs) into the solver. Systems that set
    /// driver inputs belong before this set.
    SyncIn,
    /// Advances every drivetrain by one step. The built-in blocks' sensors of each vehicle
    /// stepped here are written right after its step ([`SensorWriter`]).
    Step,
    /// Writes every block's sensors component not already written in
    /// [`DrivetrainSystems::Step`].
    SyncOut,
}

/// The schedule the drivetrain runs in; set by [`DrivetrainPlugin`].
#[derive(Resource, Clone, Copy, Debug)]
pub struct DrivetrainSchedule(pub Interned<dyn ScheduleLabel>);

/// Whether a vehicle's drivetrain runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DrivetrainStatus {
    /// Not compiled yet (blocks were just added or changed).
    #[default]
    Pending,
    /// Compiled and running.
    Ready,
    /// Refused; the vehicle's drivetrain does not run until the problem is fixed.
    Invalid(Box<VehicleError>),
}

/// The default longest substep of a [`Drivetrain`] (s).
pub const DEFAULT_MAX_SUBSTEP: f64 = 1.0 / 240.0;

/// The most substeps one fixed step is split into, whatever its length.
pub const MAX_SUBSTEPS: u32 = 256;

/// The longest substep a wheel's simple load allows, in units of its own time constant
/// (dimensionless: the substep times [`Wheel::load_rate`](crate::blocks::Wheel::load_rate)).
/// RK4 on a decay `dω/dt = −λ·ω` keeps each substep's factor between 0 and 1 while
/// `λ·h` stays under 2.79 (0.33 at 2): a longer substep throws the spin past its balance
/// and further each time.
pub const LOAD_RATE_SUBSTEP: f64 = 2.0;

/// On a vehicle entity: its drivetrain. The blocks are entities with [`BlockOf`] this entity.
#[derive(Component)]
pub struct Drivetrain {
    /// RK4 substeps per fixed step (≥ 1; 0 counts as 1): the fewest the step is split into.
    pub substeps: u32,
    /// Longest substep allowed (s). A fixed step longer than `substeps × max_substep` is split
    /// into more substeps, so the stiff parts (tires, shaft compliance) see the same substep
    /// length at any fixed-step rate and the result does not depend on it. Zero, negative or
    /// not finite: no limit. Default 1/240 s (four substeps at 60 Hz, eight at 30 Hz).
    pub max_substep: f64,
    program: Option<Program>,
    status: DrivetrainStatus,
    rejected: Option<Box<VehicleError>>,
    /// A [`SensorWriter`] wrote the built-in blocks' sensors since the last
    /// [`DrivetrainSystems::SyncOut`]: kept for a vehicle with [`ExternalStep`] (the
    /// plugin's own step writes its vehicles' sensors every step).
    sensors_written: bool,
    /// The block whose state a step left not finite, until the system that stepped it (or
    /// [`DrivetrainSystems::SyncOut`]) names it in the status (see
    /// [`DrivetrainError::Diverged`]); whether the drivetrain is stopped is its program's
    /// [`Program::diverged`].
    divergence_to_name: Option<Entity>,
    /// See [`Drivetrain::batched`].
    batched: Option<u32>,
}

impl Default for Drivetrain {
    /// Four substeps per fixed step, each at most 1/240 s.
    fn default() -> Self {
        Drivetrain::new(4)
    }
}

impl Drivetrain {
    /// A drivetrain integrated with at least `substeps` RK4 substeps per fixed step, each at
    /// most [`DEFAULT_MAX_SUBSTEP`] long.
    pub fn new(substeps: u32) -> Self {
        Drivetrain {
            substeps,
            max_substep: DEFAULT_MAX_SUBSTEP,
            program: None,
            status: DrivetrainStatus::Pending,
            rejected: None,
            sensors_written: false,
            divergence_to_name: None,
            batched: None,
        }
    }

    /// Whether the last step stepped this vehicle in a batch of four, and if so how many of
    /// the batch's evaluations (four RK4 stages per substep and one at the step's end) ran in
    /// lanes; `None` if it was stepped alone.
    ///
    /// [`DrivetrainSystems::Step`] steps four vehicles in a row (in the order the ECS holds
    /// them, usually the order they were spawned in) together when their drivetrains have the
    /// same built-in blocks connected alike, tires on the same wheels, no custom block or open
    /// port, and take the same substeps ([`Drivetrain::step_four`]): their stages share one
    /// walk over their blocks, with the blocks' arithmetic in lanes, while every block is in a
    /// mode the lanes cover (an engine not held still, a locked clutch, an engaged gearbox, a
    /// differential locked or slipping on its lock torque, rolling wheels); the rest run one
    /// vehicle at a time. Each vehicle's result is the same, bit for bit, as stepped alone;
    /// the batch is only faster. A fleet spawned one vehicle after another from one
    /// description batches by itself. A parallel step ([`ParallelStep`] with more than one
    /// task) batches each task's run of vehicles alike, and so does the chassis's step
    /// ([`ExternalStep`]), with each car's stage hook
    /// ([`Drivetrain::step_four_hooked_within`]).
    pub fn batched(&self) -> Option<u32> {
        self.batched
    }

    /// Runs again a drivetrain a step stopped ([`DrivetrainError::Diverged`]), from the
    /// finite state it stopped at: a block's settings changed.
    fn resume(&mut self) {
        if let Some(p) = self.program.as_mut().filter(|p| p.diverged.is_some()) {
            p.diverged = None;
            self.divergence_to_name = None;
            self.status = DrivetrainStatus::Ready;
        }
    }

    /// Puts every block back to the state it starts with, as a game's reset of the vehicle
    /// wants: every speed 0 (wheels, shafts, the tires' slips), an engine whose `running`
    /// switch is on at its idle speed, each block's own start ([`Block::init`]). Inputs stay
    /// as they are set (brakes, gear, throttle). A drivetrain a step stopped
    /// ([`DrivetrainError::Diverged`]) runs again. Returns `false` if the drivetrain is not
    /// compiled (there is nothing to reset).
    pub fn reset(&mut self) -> bool {
        self.resume();
        let Some(p) = self.program.as_mut() else {
            return false;
        };
        p.reset();
        true
    }

    /// Whether the drivetrain is compiled and running, refused, or not compiled yet.
    pub fn status(&self) -> &DrivetrainStatus {
        &self.status
    }

    /// The error that keeps this drivetrain from running, if any.
    pub fn error(&self) -> Option<&VehicleError> {
        match &self.status {
            DrivetrainStatus::Invalid(e) => Some(&**e),
            _ => None,
        }
    }

    /// The last block change that was refused (the block kept its previous settings).
    pub fn rejected_change(&self) -> Option<&VehicleError> {
        self.rejected.as_deref()
    }

    /// The block entities in pass order (root first), or an empty list when not compiled.
    pub fn blocks_in_order(&self) -> Vec<Entity> {
        self.program.as_ref().map_or_else(Vec::new, |p| {
            p.nodes
                .iter()
                .map(|n| n.entity)
                .filter(|e| *e != Entity::PLACEHOLDER)
                .collect()
        })
    }

    /// The continuous state of block `block` (e.g. `[speed]` of an engine, `[angle, spin]` of a
    /// wheel), or `None` if it is not part of this compiled drivetrain.
    pub fn state(&self, block: Entity) -> Option<&[f64]> {
        let p = self.program.as_ref()?;
        Some(p.state_of(p.node_of(block)?))
    }

    /// Overwrites the continuous state of block `block`; returns `false` if the block is not
    /// part of this compiled drivetrain or `values` has the wrong length. Non-finite values are
    /// refused. The block then updates the modes the new state contradicts
    /// ([`Block::state_set`]: a wheel set spinning is no longer held by its brake, an engine
    /// set turning at or above its stall speed with the ignition on fires), and before the
    /// next step a momentum pass makes speeds agree across rigid connections again (a locked
    /// clutch, a locked differential: set both sides of one to move them).
    pub fn set_state(&mut self, block: Entity, values: &[f64]) -> bool {
        let Some(p) = self.program.as_mut() else {
            return false;
        };
        let Some(i) = p.node_of(block) else {
            return false;
        };
        if p.state_of(i).len() != values.len() || values.iter().any(|v| !v.is_finite()) {
            return false;
        }
        p.set_state(i, values);
        true
    }

    /// The input shaft of block `block` after the last step: what the block sent up and what came
    /// down to it. `None` for a root or a block not in this drivetrain.
    pub fn input_shaft(&self, block: Entity) -> Option<Shaft> {
        let p = self.program.as_ref()?;
        let i = p.node_of(block)?;
        (i > 0).then(|| p.shafts[i])
    }

    /// How many substeps a fixed step of `dt` seconds is split into: [`Drivetrain::substeps`],
    /// or more if a substep would be longer than [`Drivetrain::max_substep`], or than
    /// [`LOAD_RATE_SUBSTEP`] time constants of the stiffest wheel load
    /// ([`Wheel::load_rate`](crate::blocks::Wheel::load_rate)) (at most [`MAX_SUBSTEPS`]).
    /// A substep longer than the bound by less than one part in a million counts as the
    /// bound: Bevy keeps the fixed step in whole nanoseconds, so 60 Hz steps 16 666 667 ns,
    /// not 1/60 s, and that must not cost a fifth substep.
    pub fn substeps_for(&self, dt: f64) -> u32 {
        self.substeps_within(dt, self.max_substep)
    }

    /// [`Drivetrain::substeps_for`] with `max_substep` (s) in place of the vehicle's own
    /// [`Drivetrain::max_substep`]: how many substeps a step of `dt` seconds takes with none
    /// longer than `max_substep` nor than the wheel loads allow (at least
    /// [`Drivetrain::substeps`], at most [`MAX_SUBSTEPS`]; a `max_substep` that is not a
    /// positive number sets no bound of its own).
    pub fn substeps_within(&self, dt: f64, max_substep: f64) -> u32 {
        let fewest = self.substeps.max(1);
        let set = max_substep > 0.0 && max_substep.is_finite();
        let rate = self.program.as_ref().map_or(0.0, Program::load_rate);
        let max_substep = match (set, rate > 0.0 && rate.is_finite()) {
            (true, true) => max_substep.min(LOAD_RATE_SUBSTEP / rate),
            (true, false) => max_substep,
            (false, true) => LOAD_RATE_SUBSTEP / rate,
            (false, false) => return fewest,
        };
        if !dt.is_finite() {
            return fewest;
        }
        let needed = (dt / max_substep * (1.0 - 1e-6))
            .ceil()
            .clamp(1.0, f64::from(MAX_SUBSTEPS));
        fewest.max(needed as u32).min(MAX_SUBSTEPS)
    }

    /// Asks the processor to start loading the parts of the compiled drivetrain that live
    /// outside this component (its blocks' boxed cells), so that a system stepping
    /// many vehicles can call it on the next vehicle while it steps this one. A hint only: it
    /// changes no state and no result.
    #[inline]
    pub fn prefetch(&self) {
        if let Some(p) = self.program.as_ref() {
            p.prefetch();
        }
    }

    /// Advances by one fixed step of `dt` seconds. Does nothing unless compiled.
    pub fn step(&mut self, dt: f64) {
        self.step_with(dt, &mut Vec::new());
    }

    /// [`Drivetrain::step`] with a caller-kept scratch buffer, to avoid an allocation per call.
    pub fn step_with(&mut self, dt: f64, scratch: &mut Vec<f64>) {
        self.step_hooked(dt, scratch, &mut |_| {});
    }

    /// [`Drivetrain::step_with`], calling `hook` before each RK4 stage: four times per
    /// substep, each time with the wheels at that stage's state ([`StageWheels`]), so that
    /// something outside the block graph (the chassis's brake, steering and drivetrain
    /// modules) can set each wheel's brake capacity, outside drive torque and steering turn
    /// for the stage. The hook is not called in the mode-settling and momentum passes between
    /// stages, which use the values of the stage they follow.
    pub fn step_hooked<H: FnMut(&mut StageWheels)>(
        &mut self,
        dt: f64,
        scratch: &mut Vec<f64>,
        hook: &mut H,
    ) {
        self.step_hooked_within(dt, self.max_substep, scratch, hook);
    }

    /// [`Drivetrain::step_hooked`] with substeps no longer than `max_substep` (s) for this step
    /// alone, in place of the vehicle's own [`Drivetrain::max_substep`], which stays as set
    /// (see [`Drivetrain::substeps_within`]). For a caller that needs finer substeps while
    /// something stiff acts: the chassis's traction control takes half-length substeps while it
    /// cuts the drive.
    pub fn step_hooked_within<H: FnMut(&mut StageWheels)>(
        &mut self,
        dt: f64,
        max_substep: f64,
        scratch: &mut Vec<f64>,
        hook: &mut H,
    ) {
        let substeps = self.substeps_within(dt, max_substep);
        let Some(p) = self.program.as_mut() else {
            return;
        };
        if p.diverged.is_some() {
            return;
        }
        p.step(dt, substeps, scratch, hook);
        self.batched = None;
        self.after_step();
    }

    /// Steps four drivetrains by one fixed step of `dt` seconds together, each bit for bit as
    /// [`Drivetrain::step_with`] would, if they are compiled, have one shape (the same
    /// built-in blocks connected alike, tires on the same wheels, no custom block or open
    /// port) and
    /// take the same substeps: their stages then share one walk over their blocks, with the
    /// arithmetic in lanes while the blocks' modes allow it (see [`Drivetrain::batched`]).
    /// Returns how many of the step's evaluations (RK4 stages and the one at its end) ran in
    /// lanes, or `None`, having stepped none, otherwise.
    pub fn step_four(
        drivetrains: [&mut Drivetrain; 4],
        dt: f64,
        scratch: &mut Vec<f64>,
    ) -> Option<u32> {
        let max_substep = [0, 1, 2, 3].map(|i| drivetrains[i].max_substep);
        let mut hooks = [|_: &mut StageWheels| {}; 4];
        Drivetrain::step_four_hooked_within(drivetrains, dt, max_substep, scratch, hooks.each_mut())
    }

    /// [`Drivetrain::step_four`] with a stage hook for each drivetrain, as
    /// [`Drivetrain::step_hooked_within`] steps one: drivetrain `i` with `hooks[i]` before
    /// each of its RK4 stages and substeps no longer than `max_substep[i]` (s). The four are
    /// stepped together only if their substeps come out the same (and, as there, if they
    /// have one shape); each is then bit for bit where its own step would leave it, as each
    /// hook sees the same stages. Returns `None`, having stepped none and called no hook,
    /// otherwise.
    pub fn step_four_hooked_within<H: FnMut(&mut StageWheels)>(
        drivetrains: [&mut Drivetrain; 4],
        dt: f64,
        max_substep: [f64; 4],
        scratch: &mut Vec<f64>,
        hooks: [&mut H; 4],
    ) -> Option<u32> {
        let substeps = drivetrains[0].substeps_within(dt, max_substep[0]);
        let ready = |(d, max): (&&mut Drivetrain, &f64)| {
            d.program.as_ref().is_some_and(|p| p.diverged.is_none())
                && d.substeps_within(dt, *max) == substeps
        };
        if !drivetrains.iter().zip(&max_substep).all(ready) {
            return None;
        }
        let [a, b, c, d] = drivetrains;
        let programs = [
            &mut a.program,
            &mut b.program,
            &mut c.program,
            &mut d.program,
        ]
        .map(|p| p.as_mut().expect("checked above"));
        if !programs[1..].iter().all(|p| programs[0].same_shape(p)) {
            return None;
        }
        let in_lanes = Program::step_four(programs, dt, substeps, scratch, hooks);
        for d in [a, b, c, d] {
            d.batched = Some(in_lanes);
            d.after_step();
        }
        Some(in_lanes)
    }

    /// After a step that went astray, names the vehicle `vehicle` and the block in the status
    /// (logged once), which [`Drivetrain::after_step`] could not: it has no names at hand.
    fn name_divergence(&mut self, vehicle: Entity, names: &Query<NameOrEntity>) {
        let Some(block) = self.divergence_to_name.take() else {
            return;
        };
        let name = |e: Entity| {
            names
                .get(e)
                .map_or_else(|_| format!("{e}"), |n| n.to_string())
        };
        let error = VehicleError {
            vehicle: name(vehicle),
            error: DrivetrainError::Diverged { block: name(block) },
        };
        error!("{error}");
        self.status = DrivetrainStatus::Invalid(Box::new(error));
    }

    /// After a step: a step that went astray was undone, and the drivetrain stops where it
    /// was, with finite states, until a block's settings change. The system that stepped it,
    /// or `SyncOut`, names the vehicle and the block ([`Drivetrain::name_divergence`]).
    fn after_step(&mut self) {
        let Some(p) = self.program.as_ref() else {
            return;
        };
        if let Some(i) = p.diverged {
            let block = p.nodes[i].entity;
            self.divergence_to_name = Some(block);
            self.status = DrivetrainStatus::Invalid(Box::new(VehicleError {
                vehicle: String::new(),
                error: DrivetrainError::Diverged {
                    block: format!("{block}"),
                },
            }));
        }
    }

    /// Sets how the body the vehicle's tires push moves their contacts sideways, for the steps
    /// to come: `mobility[i·n + j]` (m/(N·s), row-major) is the velocity to the left of the
    /// contact of the wheel at pass-order position `wheels[i]` ([`BlockSlot::node`]) per
    /// newton-second to the left at the contact of `wheels[j]`. Within each step every tire
    /// wheel's contact then moves sideways by the body's answer to all the tires' lateral
    /// forces beyond those of the last step
    /// ([`WheelRuntime::lateral_shift`](crate::blocks::WheelRuntime::lateral_shift)), for the
    /// wheels whose contact is
    /// [lateral-coupled](crate::blocks::WheelContact::lateral_coupled). The chassis sets it
    /// each step from the body's mass, inertia and the contacts. Returns `false` if the
    /// drivetrain is not compiled, or `mobility` is not `n × n` or not finite (the coupling is
    /// then cleared).
    pub fn set_lateral_mobility(&mut self, wheels: &[u32], mobility: &[f64]) -> bool {
        self.program
            .as_mut()
            .is_some_and(|p| p.set_lateral_mobility(wheels, mobility))
    }

    /// The runtime state of block `block` of type `B` at pass-order position `node` (see
    /// [`BlockSlot`]), for feeding it states from the vehicle (the chassis writes each wheel's
    /// ground contact this way). `None` if that node does not hold `block` of type `B`.
    pub fn runtime_mut<B: Block>(&mut self, block: Entity, node: u32) -> Option<&mut B::Runtime> {
        self.block_cell_mut::<B>(node, block)
            .map(|c| &mut c.runtime)
    }

    /// The runtime state of block `block` of type `B` at pass-order position `node`.
    pub fn runtime<B: Block>(&self, block: Entity, node: u32) -> Option<&B::Runtime> {
        let p = self.program.as_ref()?;
        if p.nodes.get(node as usize)?.entity != block {
            return None;
        }
        p.blocks[node as usize]
            .as_any()?
            .downcast_ref::<BlockCell<B>>()
            .map(|c| &c.runtime)
    }

    /// Where block `entity` at pass-order position `node` sits ([`DrivePath`]); the default
    /// (no direction selector on its way) while it is not compiled there.
    pub(crate) fn drive_path(&self, node: u32, entity: Entity) -> DrivePath {
        match &self.program {
            Some(p)
                if p.nodes
                    .get(node as usize)
                    .is_some_and(|n| n.entity == entity) =>
            {
                p.drive_path(node as usize)
            }
            _ => DrivePath::default(),
        }
    }

    /// The compiled cell of block `entity` of type `B` at pass-order position `node`.
    pub(crate) fn block_cell<B: Block>(&self, node: u32, entity: Entity) -> Option<&BlockCell<B>> {
        let p = self.program.as_ref()?;
        if p.nodes.get(node as usize)?.entity != entity {
            return None;
        }
        p.blocks[node as usize].as_any()?.downcast_ref()
    }

    /// The compiled cell of block `entity` of type `B` at pass-order position `node`.
    pub(crate) fn block_cell_mut<B: Block>(
        &mut self,
        node: u32,
        entity: Entity,
    ) -> Option<&mut BlockCell<B>> {
        let p = self.program.as_mut()?;
        if p.nodes.get(node as usize)?.entity != entity {
            return None;
        }
        p.blocks[node as usize].as_any_mut()?.downcast_mut()
    }
}

/// On a vehicle entity: its drivetrain is stepped by another system, which calls
/// [`Drivetrain::step_hooked`] itself in [`DrivetrainSystems::Step`] (and may write its sensors
/// right after, with a [`SensorWriter`]); the plugin's own step leaves it alone. The chassis
/// marks its vehicles this way.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct ExternalStep;

/// On a vehicle entity: its wheels are driven from outside the block graph (a drivetrain
/// module, through [`WheelRuntime::drive`](crate::blocks::WheelRuntime::drive)). While it is
/// present the drivetrain compiles only the vehicle's [`Wheel`] blocks, each turning freely;
/// the graph's other blocks stay on their entities but are not simulated (their sensors keep
/// their last values). Adding or removing it recompiles the drivetrain.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct ExternalDrive;

/// On a block entity: where the compiled drivetrain keeps it. Set by the plugin.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSlot {
    /// The vehicle entity (`Entity::PLACEHOLDER` until compiled).
    pub vehicle: Entity,
    /// Position in the vehicle's pass order.
    pub node: u32,
}

impl Default for BlockSlot {
    fn default() -> Self {
        BlockSlot {
            vehicle: Entity::PLACEHOLDER,
            node: u32::MAX,
        }
    }
}

/// Vehicles whose drivetrain must be recompiled.
#[derive(Resource, Default)]
struct DirtyDrivetrains(EntityHashSet);

/// Vehicles whose drivetrain the last compilation refused: retried when one of their blocks
/// changes ([`retry_refused_vehicles`]). Every other vehicle without a compiled program is in
/// [`DirtyDrivetrains`], waiting for its first (or next) compilation.
#[derive(Resource, Default)]
struct RefusedDrivetrains(EntityHashSet);

/// A block type the plugin knows.
struct BlockType {
    name: &'static str,
    type_id: TypeId,
    component: ComponentId,
    extract: fn(&EntityRef) -> Option<Extracted>,
}

struct Extracted {
    cell: Cell,
    ports: Ports,
    valid: Result<(), SettingError>,
}

/// All registered block types, by name.
#[derive(Resource, Default)]
pub struct BlockRegistry {
    types: Vec<BlockType>,
}

impl BlockRegistry {
    /// Names of the registered block types, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.types.iter().map(|t| t.name)
    }
}

fn extract<B: Block>(entity: &EntityRef) -> Option<Extracted> {
    let block = entity.get::<B>()?;
    Some(Extracted {
        cell: Cell::new(block.clone()),
        ports: block.ports(),
        valid: block.validate(),
    })
}

/// Adds block types to an app.
pub trait RegisterBlock {
    /// Registers block type `B`: it can then be spawned and connected like any built-in block,
    /// and its sensors component is kept up to date. Registering twice does nothing.
    ///
    /// # Panics
    ///
    /// If [`DrivetrainPlugin`] has not been added yet (a setup error, not a data error).
    fn register_block<B: Block>(&mut self) -> &mut Self;
}

impl RegisterBlock for App {
    fn register_block<B: Block>(&mut self) -> &mut Self {
        let schedule = self
            .world()
            .get_resource::<DrivetrainSchedule>()
            .expect("add DrivetrainPlugin (or VehiclePhysicsPlugins) before registering blocks")
            .0;
        let component = self.world_mut().register_component::<B>();
        // Spawning a block brings its sensors and slot along, so the entity never moves between
        // archetypes when the plugin first fills them in.
        self.try_register_required_components::<B, B::Sensors>()
            .ok();
        self.try_register_required_components::<B, BlockSlot>().ok();
        let mut registry = self.world_mut().resource_mut::<BlockRegistry>();
        if registry
            .types
            .iter()
            .any(|t| t.type_id == TypeId::of::<B>())
        {
            return self;
        }
        if registry.types.iter().any(|t| t.name == B::TYPE_NAME) {
            warn!(
                "two block types are registered under the name '{}'",
                B::TYPE_NAME
            );
        }
        registry.types.push(BlockType {
            name: B::TYPE_NAME,
            type_id: TypeId::of::<B>(),
            component,
            extract: extract::<B>,
        });
        if B::TAKES_CONTROLS {
            self.add_systems(
                schedule,
                apply_controls::<B>.in_set(DrivetrainSystems::Controls),
            );
        }
        self.add_systems(
            schedule,
            (
                retry_refused_vehicles::<B>
                    .in_set(DrivetrainSystems::Rebuild)
                    .before(rebuild_drivetrains),
                sync_block_in::<B>.in_set(DrivetrainSystems::SyncIn),
            ),
        );
        // Built-in blocks' sensors are written by one pass over the vehicles
        // (`write_builtin_sensors`), which keeps each program in cache while it is read.
        if !Cell::is_builtin::<B>() {
            self.add_systems(
                schedule,
                sync_block_out::<B>.in_set(DrivetrainSystems::SyncOut),
            );
        }
        self.add_observer(on_block_added::<B>)
            .add_observer(on_block_removed::<B>)
    }
}

impl Plugin for DrivetrainPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(DrivetrainSchedule(self.schedule))
            .init_resource::<BlockRegistry>()
            .init_resource::<DirtyDrivetrains>()
            .init_resource::<RefusedDrivetrains>()
            .init_resource::<ParallelStep>()
            .configure_sets(
                self.schedule,
                (
                    DrivetrainSystems::Controls,
                    DrivetrainSystems::Rebuild,
                    DrivetrainSystems::SyncIn,
                    DrivetrainSystems::Step,
                    DrivetrainSystems::SyncOut,
                )
                    .chain(),
            )
            .add_systems(
                self.schedule,
                (
                    rebuild_drivetrains
                        .in_set(DrivetrainSystems::Rebuild)
                        .run_if(|d: Res<DirtyDrivetrains>| !d.0.is_empty()),
                    step_drivetrains.in_set(DrivetrainSystems::Step),
                    write_builtin_sensors.in_set(DrivetrainSystems::SyncOut),
                ),
            )
            .add_observer(on_drivetrain_inserted)
            .add_observer(on_drivetrain_removed)
            .add_observer(on_external_drive_added)
            .add_observer(on_external_drive_removed)
            .add_observer(on_external_step_inserted)
            .add_observer(on_driven_by_inserted)
            .add_observer(on_driven_by_discarded)
            .add_observer(on_block_of_inserted)
            .add_observer(on_block_of_discarded);
        app.register_block::<Engine>()
            .register_block::<Motor>()
            .register_block::<Clutch>()
            .register_block::<Gearbox>()
            .register_block::<Differential>()
            .register_block::<Wheel>()
            .register_block::<TorqueConverter>()
            .register_block::<AutomaticTransmission>()
            .register_block::<Cvt>()
            .register_block::<Retarder>()
            .register_block::<TransferCase>()
            .register_block::<Hydrostatic>()
            .register_block::<SummingGear>()
            .register_block::<AssistMotor>()
            .register_block::<Track>();
    }
}

fn mark_block_vehicle(block: Entity, block_of: &Query<&BlockOf>, dirty: &mut DirtyDrivetrains) {
    if let Ok(b) = block_of.get(block) {
        dirty.0.insert(b.0);
    }
}

/// A vehicle given a `Drivetrain` (a new one, or one put in place of its old one) is compiled
/// at the next step.
fn on_drivetrain_inserted(ev: On<Insert, Drivetrain>, mut dirty: ResMut<DirtyDrivetrains>) {
    dirty.0.insert(ev.entity);
}

fn on_drivetrain_removed(ev: On<Remove, Drivetrain>, mut refused: ResMut<RefusedDrivetrains>) {
    refused.0.remove(&ev.entity);
}

fn on_external_drive_added(ev: On<Add, ExternalDrive>, mut dirty: ResMut<DirtyDrivetrains>) {
    dirty.0.insert(ev.entity);
}

fn on_external_drive_removed(ev: On<Remove, ExternalDrive>, mut dirty: ResMut<DirtyDrivetrains>) {
    dirty.0.insert(ev.entity);
}

/// A vehicle another system now steps: whether its sensors were written is that system's
/// to say from here on (the plugin's own step writes them without saying so).
fn on_external_step_inserted(ev: On<Insert, ExternalStep>, mut vehicles: Query<&mut Drivetrain>) {
    if let Ok(mut drivetrain) = vehicles.get_mut(ev.entity) {
        drivetrain.bypass_change_detection().sensors_written = false;
    }
}

/// On a block whose `DrivenBy` pointed at itself: Bevy drops such a relationship (with a
/// warning) before the drivetrain sees it, so the block remembers it, and the drivetrain is
/// refused as a cycle through it rather than as a block left unconnected.
#[derive(Component)]
struct DrivesItself;

fn on_driven_by_inserted(
    ev: On<Insert, DrivenBy>,
    links: Query<&DrivenBy>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
    mut commands: Commands,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
    if let Ok(link) = links.get(ev.entity) {
        mark_block_vehicle(link.upstream, &block_of, &mut dirty);
        // Bevy's own hook has queued the removal of a link to itself already.
        if link.upstream == ev.entity {
            commands.entity(ev.entity).insert(DrivesItself);
        } else {
            commands.entity(ev.entity).remove::<DrivesItself>();
        }
    }
}

fn on_driven_by_discarded(
    ev: On<Discard, DrivenBy>,
    links: Query<&DrivenBy>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
    if let Ok(link) = links.get(ev.entity) {
        mark_block_vehicle(link.upstream, &block_of, &mut dirty);
    }
}

fn on_block_of_inserted(
    ev: On<Insert, BlockOf>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
}

fn on_block_of_discarded(
    ev: On<Discard, BlockOf>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
}

fn on_block_added<B: Block>(
    ev: On<Add, B>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
}

fn on_block_removed<B: Block>(
    ev: On<Remove, B>,
    block_of: Query<&BlockOf>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    mark_block_vehicle(ev.entity, &block_of, &mut dirty);
}

/// A block's name for messages: its `Name`, or its entity id.
fn display_name(world: &World, entity: Entity) -> String {
    world
        .get::<Name>(entity)
        .map_or_else(|| format!("{entity}"), |n| n.as_str().to_owned())
}

fn rebuild_drivetrains(world: &mut World) {
    let mut dirty: Vec<Entity> = world.resource_mut::<DirtyDrivetrains>().0.drain().collect();
    dirty.sort();
    world.resource_scope(|world, registry: Mut<BlockRegistry>| {
        for vehicle in dirty {
            rebuild_one(world, &registry, vehicle);
        }
    });
}

fn rebuild_one(world: &mut World, registry: &BlockRegistry, vehicle: Entity) {
    if world.get::<Drivetrain>(vehicle).is_none() {
        // Blocks made `BlockOf` an entity that is no vehicle run nowhere: say so.
        if world.get::<Blocks>(vehicle).is_some_and(|b| !b.is_empty()) {
            warn!(
                "'{}' has drivetrain blocks (their `BlockOf` points at it) but no `Drivetrain`: \
                 they do not run until it gets one",
                display_name(world, vehicle)
            );
        }
        return;
    }
    let result = compile(world, registry, vehicle);
    let compiled = result.is_ok();
    let mut slots = Vec::new();
    let Some(mut drivetrain) = world.get_mut::<Drivetrain>(vehicle) else {
        return;
    };
    // Whether the blocks must take the controls again: their paths (`DrivePath`) changed,
    // so what a torque source makes of the same controls may have (controls handed over
    // before the first build saw the default path).
    let mut paths_changed = false;
    match result {
        Ok(mut program) => {
            let paths = |p: &Program| -> Vec<(Entity, DrivePath)> {
                (0..p.nodes.len())
                    .map(|i| (p.nodes[i].entity, p.drive_path(i)))
                    .filter(|(_, path)| *path != DrivePath::default())
                    .collect()
            };
            paths_changed =
                paths(&program) != drivetrain.program.as_ref().map(paths).unwrap_or_default();
            if let Some(old) = drivetrain.program.take() {
                adopt_state(&mut program, &old);
            }
            slots.extend(
                program
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.entity != Entity::PLACEHOLDER)
                    .map(|(i, n)| (n.entity, i as u32)),
            );
            drivetrain.program = Some(program);
            drivetrain.status = DrivetrainStatus::Ready;
        }
        Err(error) => {
            error!("{error}");
            drivetrain.program = None;
            drivetrain.status = DrivetrainStatus::Invalid(Box::new(error));
        }
    }
    let refused = &mut world.resource_mut::<RefusedDrivetrains>().0;
    if compiled {
        refused.remove(&vehicle);
    } else {
        refused.insert(vehicle);
    }
    for (entity, node) in slots {
        if let Some(mut slot) = world.get_mut::<BlockSlot>(entity) {
            *slot = BlockSlot { vehicle, node };
        } else {
            world.entity_mut(entity).insert(BlockSlot { vehicle, node });
        }
    }
    if paths_changed && let Some(mut controls) = world.get_mut::<VehicleControls>(vehicle) {
        // The next `DrivetrainSystems::Controls` hands them over again.
        controls.set_changed();
    }
}

/// Carries speeds, modes and timers of blocks that were already running over to a rebuilt
/// program, so reconnecting or retuning a vehicle does not reset it.
fn adopt_state(program: &mut Program, old: &Program) {
    for i in 0..program.nodes.len() {
        let entity = program.nodes[i].entity;
        if entity == Entity::PLACEHOLDER {
            continue;
        }
        let Some(j) = old.node_of(entity) else {
            continue;
        };
        let old_state = old.state_of(j);
        if program.state_of(i).len() == old_state.len() {
            if program.blocks[i].adopt(&old.blocks[j]) {
                program.state_of_mut(i).copy_from_slice(old_state);
            }
        } else {
            // Reshaped by its settings: the block says what carries over.
            let range = program.nodes[i].state();
            program.blocks[i].reshape(&old.blocks[j], old_state, &mut program.x[range]);
        }
    }
    program.pending_projection = true;
}

fn compile(
    world: &World,
    registry: &BlockRegistry,
    vehicle: Entity,
) -> Result<Program, VehicleError> {
    let fail = |error| VehicleError {
        vehicle: display_name(world, vehicle),
        error,
    };
    // Driven from outside: the wheels alone, each free.
    let wheels_only = world.get::<ExternalDrive>(vehicle).is_some();
    let entities: Vec<Entity> = world
        .get::<Blocks>(vehicle)
        .map(|b| {
            b.iter()
                .filter(|&e| !wheels_only || world.get::<Wheel>(e).is_some())
                .collect()
        })
        .unwrap_or_default();
    let mut graph = Vec::with_capacity(entities.len());
    let mut cells = Vec::with_capacity(entities.len());
    for &entity in &entities {
        let er = world.entity(entity);
        let mut found = registry
            .types
            .iter()
            .filter(|t| er.contains_id(t.component));
        let (Some(block_type), None) = (found.next(), found.next()) else {
            return Err(fail(DrivetrainError::NotABlock {
                entity: display_name(world, entity),
            }));
        };
        // An unnamed block goes by its type and entity (`Gearbox 65v0`).
        let name = match world.get::<Name>(entity) {
            Some(n) => n.as_str().to_owned(),
            None => format!("{} {entity}", block_type.name),
        };
        let extracted = (block_type.extract)(&er).ok_or_else(|| {
            fail(DrivetrainError::NotABlock {
                entity: name.clone(),
            })
        })?;
        if let Err(error) = extracted.valid {
            return Err(fail(DrivetrainError::InvalidSetting {
                block: name,
                block_type: block_type.name,
                error,
            }));
        }
        let foreign = |other: Entity| {
            fail(DrivetrainError::ForeignConnection {
                block: name.clone(),
                other: display_name(world, other),
                other_vehicle: world
                    .get::<BlockOf>(other)
                    .map(|b| display_name(world, b.0)),
            })
        };
        let driven_by = er.get::<DrivenBy>().filter(|_| !wheels_only);
        if driven_by.is_none() && !wheels_only && er.contains::<DrivesItself>() {
            return Err(fail(DrivetrainError::Cycle { blocks: vec![name] }));
        }
        if let Some(link) = driven_by
            && !entities.contains(&link.upstream)
        {
            return Err(foreign(link.upstream));
        }
        if let Some(other) = er
            .get::<Drives>()
            .filter(|_| !wheels_only)
            .and_then(|drives| drives.iter().find(|c| !entities.contains(c)))
        {
            return Err(foreign(other));
        }
        graph.push(GraphBlock {
            entity,
            name,
            ports: extracted.ports,
            driven_by: driven_by.map(|d| (d.upstream, d.port)),
        });
        cells.push(Some(extracted.cell));
    }
    let topology = order_blocks(&graph).map_err(fail)?;
    let states: usize = cells.iter().flatten().map(Cell::state_len).sum();
    if states > crate::graph::MAX_BLOCKS {
        return Err(fail(DrivetrainError::TooLarge {
            blocks: entities.len(),
        }));
    }
    Ok(Program::new(&topology, &entities, |i| {
        cells[i].take().expect("each block is placed once")
    }))
}

/// Hands the driver's changed controls to each block of type `B`, in the component and in the
/// solver's copy. Inputs are clamped, never refused, so the copy takes them directly: no
/// settings check and no copy of the settings every time the throttle moves.
///
/// Walks the blocks of type `B`, not the vehicles' members: a type no vehicle has costs
/// nothing, and each block is looked at once rather than once per registered type.
fn apply_controls<B: Block>(
    mut blocks: Query<(Entity, &mut B, &BlockSlot, &BlockOf)>,
    mut vehicles: Query<(Ref<VehicleControls>, &mut Drivetrain)>,
) {
    for (member, mut block, slot, block_of) in &mut blocks {
        let Ok((controls, mut drivetrain)) = vehicles.get_mut(block_of.0) else {
            continue;
        };
        if !controls.is_changed() {
            continue;
        }
        let path = drivetrain.drive_path(slot.node, member);
        if !block
            .bypass_change_detection()
            .apply_controls_on(&controls, path)
        {
            continue;
        }
        match drivetrain
            .bypass_change_detection()
            .block_cell_mut::<B>(slot.node, member)
        {
            Some(cell) => {
                cell.block.apply_controls_on(&controls, path);
            }
            // Not compiled yet: the compiled program will start from the component.
            None => block.set_changed(),
        }
    }
}

/// A vehicle that was refused is retried when one of its blocks changes, since the change may
/// fix it. (Most steps there is none, and the blocks a driver changes every step are not
/// looked at.)
fn retry_refused_vehicles<B: Block>(
    changed: Query<&BlockOf, Changed<B>>,
    refused: Res<RefusedDrivetrains>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    if refused.0.is_empty() {
        return;
    }
    for block_of in &changed {
        if refused.0.contains(&block_of.0) {
            dirty.0.insert(block_of.0);
        }
    }
}

/// Whether `new` is laid out differently from `old` in a compiled program: another number of
/// states or of ports (the ports' names only matter to connections).
fn reshaped<B: Block>(old: &B, new: &B) -> bool {
    let [a, b] = [old.ports(), new.ports()];
    old.state_len() != new.state_len() || a.input != b.input || a.outputs.len() != b.outputs.len()
}

/// Brings the blocks of type `B` whose components changed into their compiled drivetrains.
/// (The filter skips the rest without fetching them.)
fn sync_block_in<B: Block>(
    blocks: Query<(Entity, &B, &BlockSlot), Changed<B>>,
    mut vehicles: Query<&mut Drivetrain>,
    names: Query<NameOrEntity>,
    mut dirty: ResMut<DirtyDrivetrains>,
) {
    for (entity, block, slot) in &blocks {
        let Ok(mut drivetrain) = vehicles.get_mut(slot.vehicle) else {
            continue;
        };
        // Inputs alone need no settings check (see `Block::take_inputs`).
        if drivetrain
            .bypass_change_detection()
            .block_cell_mut::<B>(slot.node, entity)
            .is_some_and(|cell| cell.block.take_inputs(block))
        {
            continue;
        }
        // A block that changed shape (a wheel given a tire, say) cannot be updated in place:
        // the vehicle is rebuilt around it at the start of the next step (this one still runs
        // on the settings it had).
        if drivetrain
            .block_cell::<B>(slot.node, entity)
            .is_some_and(|cell| reshaped(&cell.block, block))
        {
            dirty.0.insert(slot.vehicle);
            continue;
        }
        match block.validate() {
            Ok(()) => {
                if let Some(cell) = drivetrain.block_cell_mut::<B>(slot.node, entity) {
                    cell.update_block(block);
                    drivetrain.resume();
                }
            }
            Err(error) => {
                let name = |e: Entity| {
                    names
                        .get(e)
                        .map_or_else(|_| format!("{e}"), |n| n.to_string())
                };
                let error = VehicleError {
                    vehicle: name(slot.vehicle),
                    error: DrivetrainError::InvalidSetting {
                        block: name(entity),
                        block_type: B::TYPE_NAME,
                        error,
                    },
                };
                error!("{error}; keeping the previous settings");
                drivetrain.rejected = Some(Box::new(error));
            }
        }
    }
}

/// Steps the drivetrains no other system steps, and writes their sensors and names a
/// divergence right after each one's step, while its data is in the cache
/// ([`DrivetrainSystems::SyncOut`] leaves these vehicles alone).
fn step_drivetrains(
    time: Res<Time>,
    parallel: Res<ParallelStep>,
    mut vehicles: Query<(Entity, &mut Drivetrain), Without<ExternalStep>>,
    mut sensors: SensorWriter,
    names: Query<NameOrEntity>,
    mut scratch: Local<Vec<f64>>,
) {
    let dt = time.delta_secs_f64();
    if dt <= 0.0 {
        // No step: the sensors of the programs as they stand (one compiled this frame).
        for (_, drivetrain) in &vehicles {
            sensors.write_every(drivetrain);
        }
        return;
    }

    let mut items: Vec<_> = vehicles.iter_mut().collect();
    let tasks = parallel.task_count(items.len());
    let names = &names;
    if tasks <= 1 {
        step_run(&mut items, dt, &mut scratch, |(vehicle, d)| {
            sensors.write_every(d);
            d.name_divergence(*vehicle, names);
        });
    } else {
        // On every compute thread, a contiguous run of vehicles each.
        let sensors = &sensors;
        crate::parallel::for_each_run(&mut items, tasks, Vec::new, |scratch, run| {
            step_run(run, dt, scratch, |(vehicle, d)| {
                // SAFETY: each vehicle is stepped in one task, and `sensors` is used by these
                // calls alone until the tasks are done.
                #[allow(unsafe_code)]
                unsafe {
                    sensors.write_sensors(Some(*vehicle), d)
                };
                d.name_divergence(*vehicle, names);
            });
        });
    }
}

/// Steps a run of vehicles in order (all of them, or one task's share): four of one shape
/// at a time where they come in a row ([`Drivetrain::step_four`]; see
/// [`Drivetrain::batched`]), each on its own otherwise, and hands each vehicle to `stepped`
/// (which writes its sensors) right after its step, while its data is still in the cache.
/// Each vehicle's component starts loading a few batches ahead of its step, and its boxed
/// cells (whose addresses are in the component) a little later, one vehicle's at each
/// substep of a batch's step ([`prefetch::in_runs`]).
fn step_run(
    items: &mut [(Entity, Mut<Drivetrain>)],
    dt: f64,
    scratch: &mut Vec<f64>,
    mut stepped: impl FnMut(&mut (Entity, Mut<Drivetrain>)),
) {
    prefetch::in_runs(
        items,
        |(_, drivetrain)| prefetch::value(&**drivetrain),
        |(_, drivetrain)| drivetrain.prefetch(),
        |run, ahead| {
            let in_lanes = match run {
                [a, b, c, d, ..] => {
                    let four = [&mut *a.1, &mut *b.1, &mut *c.1, &mut *d.1];
                    let max_substep = four.each_ref().map(|d| d.max_substep);
                    // The next vehicles' hints while the batch computes: see `in_runs`.
                    let mut hooks = [Some(ahead), None, None, None]
                        .map(|ahead| prefetch::Ahead::pace(ahead, |_: &mut StageWheels| {}));
                    Drivetrain::step_four_hooked_within(
                        four,
                        dt,
                        max_substep,
                        scratch,
                        hooks.each_mut(),
                    )
                }
                _ => None,
            };
            let count = if in_lanes.is_some() { 4 } else { 1 };
            for item in &mut run[..count] {
                if in_lanes.is_none() {
                    item.1.step_with(dt, scratch);
                }
                stepped(item);
            }
            count
        },
    );
}

/// Writes the sensor components of a vehicle's built-in blocks ([`EngineSensors`],
/// [`MotorSensors`], [`ClutchSensors`], [`GearboxSensors`], [`DifferentialSensors`],
/// [`WheelSensors`]) from its compiled drivetrain.
///
/// The plugin's own step writes them for each of its vehicles right after its step, and
/// [`DrivetrainSystems::SyncOut`] writes them for every vehicle another system steps
/// ([`ExternalStep`]). Such a system may instead write each vehicle's right after stepping
/// it, while the vehicle's data is still in the processor's cache: with thousands of vehicles
/// that is several times cheaper than a second pass over all of them. `SyncOut` then leaves
/// that vehicle alone for this step. From the tasks of a parallel step, each task
/// writes its own vehicles' ([`SensorWriter::write_owned`]).
#[derive(bevy::ecs::system::SystemParam)]
pub struct SensorWriter<'w, 's> {
    engines: Query<'w, 's, &'static mut EngineSensors>,
    motors: Query<'w, 's, &'static mut MotorSensors>,
    clutches: Query<'w, 's, &'static mut ClutchSensors>,
    gearboxes: Query<'w, 's, &'static mut GearboxSensors>,
    differentials: Query<'w, 's, &'static mut DifferentialSensors>,
    wheels: Query<'w, 's, &'static mut WheelSensors>,
    slots: Query<'w, 's, &'static BlockSlot>,
}

impl SensorWriter<'_, '_> {
    /// Writes the sensors of `drivetrain`'s built-in blocks, if it is compiled, and marks them
    /// written for this step.
    pub fn write(&mut self, drivetrain: &mut Drivetrain) {
        self.write_every(drivetrain);
        drivetrain.sensors_written = true;
    }

    /// Writes the sensors of `drivetrain`'s built-in blocks, if it is compiled.
    #[allow(unsafe_code)]
    fn write_every(&mut self, drivetrain: &Drivetrain) {
        // SAFETY: `&mut self`: nothing else reaches the sensors.
        unsafe { self.write_sensors(None, drivetrain) };
    }

    /// [`SensorWriter::write`] from a task of a parallel step, for the vehicle entity
    /// `vehicle` that holds `drivetrain`: writes only the blocks whose [`BlockSlot`] names
    /// `vehicle` (all of a compiled vehicle's), so tasks stepping different vehicles never
    /// write the same block.
    ///
    /// # Safety
    ///
    /// As [`owned_block_mut`](crate::parallel::owned_block_mut): calls for the same `vehicle`
    /// must not overlap (step each vehicle in one task), and nothing but these calls may use
    /// this writer while they run.
    #[allow(unsafe_code)]
    pub unsafe fn write_owned(&self, vehicle: Entity, drivetrain: &mut Drivetrain) {
        // SAFETY: passed on to the caller.
        unsafe { self.write_sensors(Some(vehicle), drivetrain) };
        drivetrain.sensors_written = true;
    }

    /// Writes the sensors of `drivetrain`'s built-in blocks, if it is compiled: each one's
    /// with `owner` `None`, else only those of the vehicle `owner`'s own blocks.
    ///
    /// # Safety
    ///
    /// With `owner` `None` the caller has this writer to itself; with `Some`, the contract
    /// of [`SensorWriter::write_owned`].
    #[allow(unsafe_code)]
    unsafe fn write_sensors(&self, owner: Option<Entity>, drivetrain: &Drivetrain) {
        /// # Safety
        ///
        /// As [`SensorWriter::write_sensors`].
        unsafe fn write<B: Block>(
            sensors: &Query<&mut B::Sensors>,
            slots: &Query<&BlockSlot>,
            owner: Option<Entity>,
            program: &Program,
            cell: &BlockCell<B>,
            i: usize,
        ) {
            let entity = program.nodes[i].entity;
            // SAFETY: without an owner the caller reaches the sensors alone; with one, the
            // caller keeps `owned_block_mut`'s contract.
            let sensor = match owner {
                None => unsafe { sensors.get_unchecked(entity) }.ok(),
                Some(vehicle) => unsafe {
                    crate::parallel::owned_block_mut(sensors, slots, vehicle, entity, i as u32)
                },
            };
            if let Some(mut s) = sensor {
                *s = program.sensors_of(cell, i);
            }
        }
        // A drivetrain a step stopped keeps the sensors of its last good step.
        let Some(p) = drivetrain.program.as_ref().filter(|p| p.diverged.is_none()) else {
            return;
        };
        let slots = &self.slots;
        for i in 0..p.nodes.len() {
            // SAFETY: the caller keeps this function's contract, which is `write`'s.
            unsafe {
                match &p.blocks[i] {
                    Cell::Engine(c) => write(&self.engines, slots, owner, p, c, i),
                    Cell::Motor(c) => write(&self.motors, slots, owner, p, c, i),
                    Cell::Clutch(c) => write(&self.clutches, slots, owner, p, c, i),
                    Cell::Gearbox(c) => write(&self.gearboxes, slots, owner, p, c, i),
                    Cell::Differential(c) => write(&self.differentials, slots, owner, p, c, i),
                    Cell::Wheel(c) => write(&self.wheels, slots, owner, p, c, i),
                    Cell::Custom(_) | Cell::OpenEnd => {}
                }
            }
        }
    }
}

/// Writes the sensors of every built-in block of a vehicle stepped by another system
/// ([`ExternalStep`]) whose sensors no [`SensorWriter`] wrote since the last run, and names
/// the vehicle and the block in the status of such a drivetrain whose step went astray (in
/// the same pass, which touches each of them anyway). The plugin's own step does both for
/// its vehicles.
fn write_builtin_sensors(
    mut vehicles: Query<(Entity, &mut Drivetrain), With<ExternalStep>>,
    mut sensors: SensorWriter,
    names: Query<NameOrEntity>,
) {
    for (vehicle, mut drivetrain) in &mut vehicles {
        let drivetrain = drivetrain.bypass_change_detection();
        if !core::mem::take(&mut drivetrain.sensors_written) {
            sensors.write_every(drivetrain);
        }
        drivetrain.name_divergence(vehicle, &names);
    }
}

fn sync_block_out<B: Block>(
    mut blocks: Query<(Entity, &BlockSlot, &mut B::Sensors), With<B>>,
    vehicles: Query<&Drivetrain>,
) {
    for (entity, slot, mut sensors) in &mut blocks {
        let Ok(drivetrain) = vehicles.get(slot.vehicle) else {
            continue;
        };
        if let Some(values) = drivetrain
            .program
            .as_ref()
            .and_then(|p| p.sensors::<B>(slot.node, entity))
        {
            *sensors = values;
        }
    }
}
