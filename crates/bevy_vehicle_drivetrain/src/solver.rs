//! The per-vehicle solver: a compiled program of blocks in pass order, integrated with RK4.
//!
//! The plugin compiles each vehicle's block entities into a [`Program`] when its connections
//! change, and copies changed block components into it before each step. All per-stage work
//! then runs on the program's own contiguous buffers, without touching the ECS.
//!
//! One fixed step of length `dt` with `N` substeps of length `h = dt/N`:
//!
//! ```text
//! begin_step (every block, once)              ── per-step logic
//! for each substep:
//!     begin_substep (custom blocks, gearboxes) ── per-substep logic (a shift engaging)
//!     k1 = f(x)                               ── upstream pass, root, downstream pass
//!     settle: update_modes; if a rigid connection appeared: momentum pass; k1 = f(x); repeat
//!     k2 = f(x + h/2·k1); k3 = f(x + h/2·k2); k4 = f(x + h·k3)
//!     x += h/6·(k1 + 2k2 + 2k3 + k4)          ── state committed once per substep
//! f(x); settle                                ── shafts and modes at the end of the step
//! sensors (computed when the plugin writes the sensor components)
//! ```

use core::any::Any;

use bevy::prelude::Entity;
use smallvec::SmallVec;

use bevy_vehicle_tire::LoadedTire;

use crate::block::{Block, DrivePath, ModeChange, Shafts, StageContext, StepContext};
use crate::blocks::{Clutch, Differential, Engine, Gearbox, Motor, Wheel, WheelLoad, WheelRuntime};
use crate::graph::Topology;
use crate::shaft::{Pass, Shaft, ShaftUp};

/// Most times modes are updated and the stage re-evaluated at the start of one substep.
const MAX_MODE_ROUNDS: usize = 4;
/// Tires evaluated together at each stage (a car's four).
const TIRE_LANES: usize = 4;
/// Largest magnitude a state may reach in a step (in its unit: rad/s, rad, m, ...) before the
/// step counts as gone astray. No drivetrain state comes near it, and products of such a state
/// with settings (a sensor's power, torque × speed) stay finite.
pub(crate) const STATE_LIMIT: f64 = 1e100;

/// A block as the solver holds it: the user's component, plus its runtime state and latest
/// sensors. Object-safe view of [`Block`].
pub(crate) trait ErasedBlock: Send + Sync + 'static {
    fn state_len(&self) -> usize;
    fn init(&mut self, state: &mut [f64]);
    fn begin_step(&mut self, state: &mut [f64], step: &StepContext) -> ModeChange;
    fn begin_substep(&mut self, state: &mut [f64], substep: f64) -> ModeChange;
    fn state_set(&mut self, state: &[f64]);
    fn upstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp;
    fn downstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    );
    fn update_modes(&mut self, state: &[f64], shafts: &Shafts) -> ModeChange;
    fn limit_impulse(&mut self, shafts: &Shafts, substep: f64) -> bool;
    /// Takes over the runtime state of `old` (a `BlockCell` as `Any`) if it is the same block
    /// type.
    fn adopt_any(&mut self, old: &dyn Any) -> bool;
    /// [`Block::reshape_state`] from `old_state`, the state of `old` (a `BlockCell` as `Any`),
    /// if `old` is the same block type; returns whether it is.
    fn reshape_any(&self, old: &dyn Any, old_state: &[f64], state: &mut [f64]) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// [`Block::SELECTS_DIRECTION`].
    fn selects_direction(&self) -> bool;
}

/// A block component with the solver's state beside it: the block's settings first, then its
/// runtime (`repr(C)`; see [`WheelRuntime`] for why the order matters).
#[repr(C)]
pub(crate) struct BlockCell<B: Block> {
    pub block: B,
    pub runtime: B::Runtime,
}

impl<B: Block> BlockCell<B> {
    /// Takes over changed settings and inputs from the ECS component.
    pub fn update_block(&mut self, block: &B) {
        self.block.clone_from(block);
        self.block.settings_changed(&mut self.runtime);
    }

    pub fn new(block: B) -> Self {
        BlockCell {
            block,
            runtime: B::Runtime::default(),
        }
    }
}

impl<B: Block> ErasedBlock for BlockCell<B> {
    #[inline]
    fn state_len(&self) -> usize {
        self.block.state_len()
    }
    fn init(&mut self, state: &mut [f64]) {
        self.block.settings_changed(&mut self.runtime);
        self.block.init(&mut self.runtime, state);
    }
    #[inline]
    fn begin_step(&mut self, state: &mut [f64], step: &StepContext) -> ModeChange {
        self.block.begin_step(&mut self.runtime, state, step)
    }
    fn begin_substep(&mut self, state: &mut [f64], substep: f64) -> ModeChange {
        self.block.begin_substep(&mut self.runtime, state, substep)
    }
    fn state_set(&mut self, state: &[f64]) {
        self.block.state_set(&mut self.runtime, state);
    }
    #[inline]
    fn upstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        self.block
            .upstream(&self.runtime, state, stage, outputs, derivative)
    }
    #[inline]
    fn downstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        self.block
            .downstream(&self.runtime, state, stage, input, outputs, derivative);
    }
    #[inline]
    fn update_modes(&mut self, state: &[f64], shafts: &Shafts) -> ModeChange {
        self.block.update_modes(&mut self.runtime, state, shafts)
    }
    fn limit_impulse(&mut self, shafts: &Shafts, substep: f64) -> bool {
        self.block.limit_impulse(&mut self.runtime, shafts, substep)
    }
    fn adopt_any(&mut self, old: &dyn Any) -> bool {
        match old.downcast_ref::<BlockCell<B>>() {
            Some(old) => {
                // The runtime carries on, re-derived from the settings the block has now: a
                // rebuild can come in the step that changed them, and then the change is not
                // seen again (the cell was built from the changed component).
                self.runtime = old.runtime.clone();
                self.block.settings_changed(&mut self.runtime);
                true
            }
            None => false,
        }
    }
    fn reshape_any(&self, old: &dyn Any, old_state: &[f64], state: &mut [f64]) -> bool {
        let same_type = old.is::<BlockCell<B>>();
        if same_type {
            self.block.reshape_state(old_state, state);
        }
        same_type
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn selects_direction(&self) -> bool {
        B::SELECTS_DIRECTION
    }
}

/// A block in a compiled program. Built-in blocks are dispatched by `match`, so their stage
/// functions inline into the passes; user blocks go through a vtable.
///
/// Every cell is boxed, so the enum is three words and a program's inline array of cells
/// small: inline, each cell took the largest one's size (a gearbox's 128 bytes), and a
/// vehicle's [`Drivetrain`](crate::Drivetrain) component 1 784 bytes where it now takes 952
/// (2026-12-06: 1 051 bytes less per vehicle of the benchmark's chain, and its step 2–4 %
/// faster). [`Program::prefetch`] asks for the boxes ahead of a step.
pub(crate) enum Cell {
    Engine(Box<BlockCell<Engine>>),
    Motor(Box<BlockCell<Motor>>),
    Clutch(Box<BlockCell<Clutch>>),
    Gearbox(Box<BlockCell<Gearbox>>),
    Differential(Box<BlockCell<Differential>>),
    Wheel(Box<WheelCell>),
    Custom(Box<dyn ErasedBlock>),
    /// An optional output port left open: drives nothing.
    OpenEnd,
}

/// A wheel's cell, with the road and tire torque of its last torque stage beside it: see
/// [`Passes::load_wheels`]. Derefs to the wheel's [`BlockCell`], which starts it (`repr(C)`).
#[repr(C)]
pub(crate) struct WheelCell {
    cell: BlockCell<Wheel>,
    /// Road and tire torque on a wheel with a tire at the last torque stage (N·m).
    pub(crate) road: f64,
}

impl WheelCell {
    /// Whether the wheel has a tire, whose road torque [`Passes::load_wheels`] computes.
    #[inline]
    pub(crate) fn has_tire(&self) -> bool {
        matches!(self.block.load, WheelLoad::Tire(_))
    }
}

impl core::ops::Deref for WheelCell {
    type Target = BlockCell<Wheel>;
    fn deref(&self) -> &BlockCell<Wheel> {
        &self.cell
    }
}

impl core::ops::DerefMut for WheelCell {
    fn deref_mut(&mut self) -> &mut BlockCell<Wheel> {
        &mut self.cell
    }
}

/// Runs `$body` with `$c` bound to the block inside `$cell`, or evaluates `$open` for an open
/// port.
macro_rules! with_cell {
    ($cell:expr, $c:ident => $body:expr, open => $open:expr) => {
        match $cell {
            // Method calls reach the boxed cell through auto-deref.
            Cell::Engine($c) => $body,
            Cell::Motor($c) => $body,
            Cell::Clutch($c) => $body,
            Cell::Gearbox($c) => $body,
            Cell::Differential($c) => $body,
            Cell::Wheel($c) => $body,
            Cell::Custom($c) => $body,
            Cell::OpenEnd => $open,
        }
    };
}

impl Cell {
    /// Whether `B` is one of the built-in blocks (dispatched by `match`).
    pub fn is_builtin<B: Block>() -> bool {
        let id = core::any::TypeId::of::<B>();
        [
            core::any::TypeId::of::<Engine>(),
            core::any::TypeId::of::<Motor>(),
            core::any::TypeId::of::<Clutch>(),
            core::any::TypeId::of::<Gearbox>(),
            core::any::TypeId::of::<Differential>(),
            core::any::TypeId::of::<Wheel>(),
        ]
        .contains(&id)
    }

    /// Wraps block `block` of any registered type: a built-in in its own variant, any other
    /// behind [`ErasedBlock`].
    pub fn new<B: Block>(block: B) -> Cell {
        // The cell is boxed once, as `dyn Any`, and taken back out as its own type.
        fn boxed<T: Block>(any: Box<dyn Any>) -> Box<BlockCell<T>> {
            any.downcast::<BlockCell<T>>().expect("type checked")
        }
        let id = core::any::TypeId::of::<B>();
        let any: Box<dyn Any> = Box::new(BlockCell::new(block));
        if id == core::any::TypeId::of::<Engine>() {
            Cell::Engine(boxed(any))
        } else if id == core::any::TypeId::of::<Motor>() {
            Cell::Motor(boxed(any))
        } else if id == core::any::TypeId::of::<Clutch>() {
            Cell::Clutch(boxed(any))
        } else if id == core::any::TypeId::of::<Gearbox>() {
            Cell::Gearbox(boxed(any))
        } else if id == core::any::TypeId::of::<Differential>() {
            Cell::Differential(boxed(any))
        } else if id == core::any::TypeId::of::<Wheel>() {
            Cell::Wheel(Box::new(WheelCell {
                cell: *boxed(any),
                road: 0.0,
            }))
        } else {
            Cell::Custom(boxed::<B>(any))
        }
    }

    #[inline]
    pub fn state_len(&self) -> usize {
        with_cell!(self, c => c.state_len(), open => 0)
    }

    fn init(&mut self, state: &mut [f64]) {
        with_cell!(self, c => c.init(state), open => ())
    }

    #[inline]
    fn begin_step(&mut self, state: &mut [f64], step: &StepContext) -> ModeChange {
        with_cell!(self, c => c.begin_step(state, step), open => ModeChange::Unchanged)
    }

    /// [`Block::begin_substep`], for the blocks that have one: custom blocks and the manual
    /// gearbox (whose shift engages at the substep nearest its end).
    fn begin_substep(&mut self, state: &mut [f64], substep: f64) -> ModeChange {
        match self {
            Cell::Gearbox(c) => c.begin_substep(state, substep),
            Cell::Custom(c) => c.begin_substep(state, substep),
            _ => ModeChange::Unchanged,
        }
    }

    /// Runs the block's upstream function and writes its message into `up`. A wheel takes
    /// its road torque from the last [`Passes::load_wheels`].
    ///
    /// Each arm stores its own result: a 24-byte message returned across the `match` would be
    /// assembled in a stack slot and copied out with wider loads than the stores that wrote
    /// it, which stalls store forwarding in the hottest loop of the solver.
    #[inline]
    fn upstream_into(
        &self,
        state: &[f64],
        stage: &StageContext,
        outputs: &[Shaft],
        derivative: &mut [f64],
        up: &mut ShaftUp,
    ) {
        match self {
            // A wheel with a tire took its road torque from `load_wheels`; other wheels compute
            // theirs here, in their `Block` functions.
            Cell::Wheel(c) if c.has_tire() => {
                *up = c
                    .block
                    .reaction(&c.runtime, state, stage, c.road, derivative);
            }
            Cell::Custom(c) => {
                // The derivative buffers are shared between vehicles: never let a user block
                // that forgets a state read another vehicle's numbers.
                derivative.fill(0.0);
                *up = c.upstream(state, stage, outputs, derivative);
            }
            _ => with_cell!(
                self,
                c => *up = c.upstream(state, stage, outputs, derivative),
                open => *up = ShaftUp::FREE
            ),
        }
    }

    /// Runs the block's downstream function; a wheel takes its road torque from the last
    /// [`Passes::load_wheels`].
    #[inline]
    fn downstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        match self {
            Cell::Wheel(c) if c.has_tire() => c
                .block
                .downstream_loaded(&c.runtime, state, stage, input, c.road, derivative),
            _ => with_cell!(
                self,
                c => c.downstream(state, stage, input, outputs, derivative),
                open => ()
            ),
        }
    }

    #[inline]
    fn update_modes(&mut self, state: &[f64], shafts: &Shafts) -> ModeChange {
        with_cell!(self, c => c.update_modes(state, shafts), open => ModeChange::Unchanged)
    }

    fn limit_impulse(&mut self, shafts: &Shafts, substep: f64) -> bool {
        with_cell!(self, c => c.limit_impulse(shafts, substep), open => false)
    }

    pub fn adopt(&mut self, old: &Cell) -> bool {
        let Some(old) = old.as_any() else {
            return false;
        };
        with_cell!(self, c => c.adopt_any(old), open => false)
    }

    /// Carries the state `old_state` of `old`, the same block with another number of states,
    /// into `state` ([`Block::reshape_state`]); returns whether `old` is the same block type.
    pub fn reshape(&self, old: &Cell, old_state: &[f64], state: &mut [f64]) -> bool {
        let Some(old) = old.as_any() else {
            return false;
        };
        with_cell!(self, c => c.reshape_any(old, old_state, state), open => false)
    }

    /// [`Block::SELECTS_DIRECTION`] of the block (`false` for an open port).
    pub fn selects_direction(&self) -> bool {
        with_cell!(self, c => c.selects_direction(), open => false)
    }

    /// The block cell as `Any`, to downcast to `BlockCell<B>`.
    pub fn as_any(&self) -> Option<&dyn Any> {
        with_cell!(self, c => Some(c.as_any()), open => None)
    }

    /// The block cell as `Any`, to downcast to `BlockCell<B>`.
    pub fn as_any_mut(&mut self) -> Option<&mut dyn Any> {
        with_cell!(self, c => Some(c.as_any_mut()), open => None)
    }
}

/// Where a node's data lives in the program's buffers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The block entity (`Entity::PLACEHOLDER` for an open port).
    pub entity: Entity,
    /// The node's children (consecutive nodes, in port order): start and end index.
    pub children: [u16; 2],
    /// The node's continuous state in the state vector: start and end index.
    pub state: [u16; 2],
    /// Whether a shaft drives this node (false for the root and for free blocks).
    pub input: bool,
    /// [`DrivePath::through_direction_selector`] of the node's block.
    pub through_direction_selector: bool,
}

impl Node {
    #[inline]
    fn children(&self) -> core::ops::Range<usize> {
        self.children[0] as usize..self.children[1] as usize
    }
    #[inline]
    pub(crate) fn state(&self) -> core::ops::Range<usize> {
        self.state[0] as usize..self.state[1] as usize
    }
}

/// Blocks a program holds without a heap allocation: a car's engine, clutch, gearbox,
/// differential and wheels fit, so a whole program lives inside its `Drivetrain` component and
/// stepping thousands of vehicles walks memory in order.
const INLINE_NODES: usize = 8;
/// Continuous states held without a heap allocation.
const INLINE_STATES: usize = 8;

/// A vehicle's compiled drivetrain.
pub(crate) struct Program {
    pub nodes: SmallVec<[Node; INLINE_NODES]>,
    pub blocks: SmallVec<[Cell; INLINE_NODES]>,
    /// Shaft `i` is the shaft into node `i` (unused for the root).
    pub shafts: SmallVec<[Shaft; INLINE_NODES]>,
    /// Committed continuous state.
    pub x: SmallVec<[f64; INLINE_STATES]>,
    /// A momentum pass is due before the next stage (after a rebuild).
    pub pending_projection: bool,
    /// The block indices of the wheels with a tire, whose road torques
    /// [`Passes::load_wheels`] computes ahead of the passes. A wheel's load cannot change
    /// between a tire and another kind without a rebuild: they differ in state length.
    tire_wheels: SmallVec<[u16; TIRE_LANES]>,
    /// How the body the tires push moves each tire wheel's contact sideways per lateral
    /// impulse at each (m/(N·s), row-major in `tire_wheels` order; empty: the contacts do not
    /// move with the tires' lateral forces). See [`Program::set_lateral_mobility`].
    /// (A `Vec`: a program without a chassis holds no more than its pointer.)
    lateral_mobility: Vec<f64>,
    /// The block indices of the blocks whose [`Block::begin_substep`] runs at the start of
    /// every substep: custom blocks and manual gearboxes (the other built-in blocks have
    /// none).
    substep_blocks: SmallVec<[u16; 2]>,
    /// The drive limit of the last step's last stage ([`StageContext::drive_limit`]), for the
    /// sensors.
    drive_limit: f64,
    /// The node whose state the last step left not finite, if it did: the step was undone
    /// ([`Program::step`]).
    pub diverged: Option<usize>,
}

impl Program {
    /// Builds a program from a validated topology. `take_block(i)` hands over the block of
    /// input index `i`.
    pub fn new(
        topology: &Topology,
        entities: &[Entity],
        mut take_block: impl FnMut(usize) -> Cell,
    ) -> Program {
        let mut nodes = SmallVec::new();
        let mut blocks = SmallVec::new();
        let mut offset = 0u16;
        for t in &topology.nodes {
            let (entity, block) = match t.block {
                Some(i) => (entities[i], take_block(i)),
                None => (Entity::PLACEHOLDER, Cell::OpenEnd),
            };
            let len = block.state_len() as u16;
            nodes.push(Node {
                entity,
                children: [t.first_child as u16, (t.first_child + t.children) as u16],
                state: [offset, offset + len],
                input: t.input,
                through_direction_selector: false,
            });
            offset += len;
            blocks.push(block);
        }
        let n = usize::from(offset);
        let mut program = Program {
            shafts: SmallVec::from_elem(Shaft::default(), nodes.len()),
            nodes,
            blocks,
            x: SmallVec::from_elem(0.0, n),
            pending_projection: true,
            tire_wheels: SmallVec::new(),
            lateral_mobility: Vec::new(),
            substep_blocks: SmallVec::new(),
            drive_limit: 1.0,
            diverged: None,
        };
        program.tire_wheels = (0..program.blocks.len())
            .filter(|&i| matches!(&program.blocks[i], Cell::Wheel(c) if c.has_tire()))
            .map(|i| i as u16)
            .collect();
        program.substep_blocks = (0..program.blocks.len())
            .filter(|&i| matches!(&program.blocks[i], Cell::Custom(_) | Cell::Gearbox(_)))
            .map(|i| i as u16)
            .collect();
        program.mark_direction_selectors();
        program.init_states();
        program
    }

    /// Sets each node's [`DrivePath::through_direction_selector`]: whether a block that
    /// selects the direction of travel lies in the node's own subtree (below it) or in a
    /// branch that leaves one of the blocks above it (not counting those blocks themselves).
    /// That is where its torque goes to the wheels: up to a block above, and down that
    /// block's other outputs. A hybrid's motor on a summing gear ahead of the gearbox has the
    /// gearbox in the summing gear's other branch; one on a summing gear behind the gearbox
    /// has it above, where its torque does not go to any wheel.
    fn mark_direction_selectors(&mut self) {
        let n = self.nodes.len();
        // Nodes come after their parents, so one pass backwards sees every child first.
        let mut parent = vec![usize::MAX; n];
        for (i, node) in self.nodes.iter().enumerate() {
            for c in node.children() {
                parent[c] = i;
            }
        }
        let mut below = vec![false; n];
        for i in (0..n).rev() {
            below[i] =
                self.blocks[i].selects_direction() || self.nodes[i].children().any(|c| below[c]);
        }
        for i in 0..n {
            let mut through = self.nodes[i].children().any(|c| below[c]);
            let (mut child, mut up) = (i, parent[i]);
            while !through && up != usize::MAX {
                through = self.nodes[up].children().any(|c| c != child && below[c]);
                (child, up) = (up, parent[up]);
            }
            self.nodes[i].through_direction_selector = through;
        }
    }

    /// Where node `i`'s block sits, for [`Block::apply_controls_on`].
    pub fn drive_path(&self, i: usize) -> DrivePath {
        DrivePath {
            through_direction_selector: self.nodes[i].through_direction_selector,
        }
    }

    /// Sets how the body moves the tires' contacts sideways: `mobility[i·n + j]` (m/(N·s)) is
    /// the velocity to the left of the contact of the wheel at pass-order node `wheels[i]` per
    /// newton-second to the left at the contact of the wheel at `wheels[j]` (`n` the length of
    /// `wheels`). Before each stage the solver moves each tire wheel's contact by the sum over
    /// the tire wheels of this times their lateral impulse so far in the step
    /// ([`WheelRuntime::lateral_shift`](crate::blocks::WheelRuntime::lateral_shift)). Nodes
    /// that are not wheels with a tire are left out; tire wheels not listed get no shift and
    /// move no other. Returns `false` (and clears it) if `mobility` is not `n × n` or not
    /// finite.
    pub fn set_lateral_mobility(&mut self, wheels: &[u32], mobility: &[f64]) -> bool {
        let count = self.tire_wheels.len();
        self.lateral_mobility.clear();
        if mobility.len() != wheels.len() * wheels.len() || !mobility.iter().all(|m| m.is_finite())
        {
            return false;
        }
        if wheels.is_empty() {
            return true;
        }
        // Each listed wheel's place among the tire wheels (room for a tracked vehicle's road
        // wheels on the stack: this runs every step).
        let places: SmallVec<[Option<usize>; 16]> = wheels
            .iter()
            .map(|&node| self.tire_wheels.iter().position(|&i| u32::from(i) == node))
            .collect();
        self.lateral_mobility.resize(count * count, 0.0);
        for (row, a) in mobility.chunks_exact(wheels.len()).zip(&places) {
            let Some(a) = a else { continue };
            for (&value, b) in row.iter().zip(&places) {
                if let Some(b) = b {
                    self.lateral_mobility[a * count + b] = value;
                }
            }
        }
        true
    }

    /// Sets every block's continuous state to zero, then to its [`Block::init`].
    fn init_states(&mut self) {
        for (node, block) in self.nodes.iter().zip(self.blocks.iter_mut()) {
            let state = &mut self.x[node.state()];
            state.fill(0.0);
            block.init(state);
        }
    }

    /// Asks the processor to start loading the program's boxed cells (of a wheel without a
    /// tire, the part its step uses; not the tables the cells point to). It reads the
    /// program itself, which the caller asked for earlier, and never a cell: a read of a cell
    /// asked for just now would wait for it. A hint only: it changes no state and no result.
    #[inline]
    pub fn prefetch(&self) {
        for (i, block) in self.blocks.iter().enumerate() {
            match block {
                // Not its torque table: engines with the same curve share one
                // (`CurveTable::rebuild`), so a fleet's few tables stay in the cache, and reading
                // the table's address here would wait for the cell asked for just now.
                Cell::Engine(c) => crate::prefetch::value(&**c),
                // A wheel without a tire: only the part its step uses, its settings and the
                // head of its runtime (see `WheelRuntime`). The rest, a tire's and a contact's
                // state, would take three times the memory traffic for nothing. (Whether it
                // has a tire is read here, not from the cell, whose memory is still on its way.)
                Cell::Wheel(c) if !self.tire_wheels.contains(&(i as u16)) => {
                    crate::prefetch::head(
                        &**c,
                        core::mem::offset_of!(BlockCell<Wheel>, runtime)
                            + core::mem::offset_of!(WheelRuntime, contact),
                    );
                }
                Cell::Wheel(c) => crate::prefetch::value(&**c),
                // Not its ratio tables: a step reads them only when the gear changes.
                Cell::Gearbox(c) => crate::prefetch::value(&**c),
                Cell::Motor(c) => crate::prefetch::value(&**c),
                Cell::Clutch(c) => crate::prefetch::value(&**c),
                Cell::Differential(c) => crate::prefetch::value(&**c),
                _ => {}
            }
        }
    }

    /// Node index of the block entity `entity`.
    pub fn node_of(&self, entity: Entity) -> Option<usize> {
        self.nodes.iter().position(|n| n.entity == entity)
    }

    /// Continuous state of node `i`.
    pub fn state_of(&self, i: usize) -> &[f64] {
        &self.x[self.nodes[i].state()]
    }

    /// Mutable continuous state of node `i`.
    pub fn state_of_mut(&mut self, i: usize) -> &mut [f64] {
        let r = self.nodes[i].state();
        &mut self.x[r]
    }

    /// Puts every block back to the continuous state it starts with: zero, then its
    /// [`Block::init`] (an engine whose switch is on at idle), told through
    /// [`Block::state_set`]; shafts at rest, and a momentum pass before the next stage. The
    /// runtimes keep their inputs (a brake held, a gear selected).
    pub fn reset(&mut self) {
        self.init_states();
        for (node, block) in self.nodes.iter().zip(self.blocks.iter_mut()) {
            let state = &self.x[node.state()];
            with_cell!(block, c => c.state_set(state), open => ());
        }
        self.shafts.fill(Shaft::default());
        self.pending_projection = true;
        self.drive_limit = 1.0;
    }

    /// The fastest [`Wheel::load_rate`] of the program's wheels (1/s; 0 if none has a
    /// simple load that pulls its spin).
    pub fn load_rate(&self) -> f64 {
        self.blocks.iter().fold(0.0, |rate, cell| match cell {
            Cell::Wheel(c) => rate.max(c.block.load_rate()),
            _ => rate,
        })
    }

    /// Overwrites the continuous state of node `i` with `values` (of its length), lets its
    /// block update the modes the new state contradicts ([`Block::state_set`]), and asks for a
    /// momentum pass before the next stage.
    pub fn set_state(&mut self, i: usize, values: &[f64]) {
        let r = self.nodes[i].state();
        self.x[r.clone()].copy_from_slice(values);
        with_cell!(&mut self.blocks[i], c => c.state_set(&self.x[r]), open => ());
        self.pending_projection = true;
    }

    /// Advances the drivetrain by one fixed step of `dt` seconds in `substeps` RK4 substeps.
    ///
    /// `scratch` holds the RK4 stage buffers; they live outside the program because they need
    /// not survive the step, and one buffer shared by every vehicle stays in cache.
    /// `hook` runs before each of the four RK4 stages of every substep (never in the mode
    /// settling or momentum passes), with the stage's state.
    ///
    /// A step that leaves any state not finite or beyond [`STATE_LIMIT`] (settings beyond what
    /// the substep can follow: a wheel or engine far too light for its loads, a torque or ratio
    /// of 1e9, a torque added of 1e300) is undone:
    /// the state goes back to where the step started and [`Program::diverged`] names the first
    /// node that went astray. The sensors are not brought up to date.
    pub fn step<H: FnMut(&mut StageWheels)>(
        &mut self,
        dt: f64,
        substeps: u32,
        scratch: &mut Vec<f64>,
        hook: &mut H,
    ) {
        step_programs([self], dt, substeps, scratch, [hook]);
    }

    /// Steps four programs of [one shape](Program::same_shape) together, as
    /// [`Program::step`] would step each with its own hook of `hooks`, bit for bit: their
    /// stages run in lanes while their blocks' modes allow it ([`crate::batch`]). Returns how
    /// many of the step's evaluations ran in lanes.
    pub fn step_four<H: FnMut(&mut StageWheels)>(
        programs: [&mut Program; 4],
        dt: f64,
        substeps: u32,
        scratch: &mut Vec<f64>,
        hooks: [&mut H; 4],
    ) -> u32 {
        /// With the lanes' arithmetic in AVX registers.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn step_four_avx2<H: FnMut(&mut StageWheels)>(
            programs: [&mut Program; 4],
            dt: f64,
            substeps: u32,
            scratch: &mut Vec<f64>,
            hooks: [&mut H; 4],
        ) -> u32 {
            step_programs(programs, dt, substeps, scratch, hooks)
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above).
            #[allow(unsafe_code)]
            return unsafe { step_four_avx2(programs, dt, substeps, scratch, hooks) };
        }
        step_programs(programs, dt, substeps, scratch, hooks)
    }

    /// Whether `other` has this program's shape, so that the two can be stepped in one batch
    /// ([`Program::step_four`]): the same built-in blocks in the same places, connected alike,
    /// with the same states and tires on the same wheels, and neither with a custom block or an
    /// open port.
    pub fn same_shape(&self, other: &Program) -> bool {
        // A built-in block of the same type in both (and a tire on the same wheels: a program
        // lists its tire wheels).
        let same_builtin = |(a, b): (&Cell, &Cell)| {
            !matches!(a, Cell::Custom(_) | Cell::OpenEnd)
                && core::mem::discriminant(a) == core::mem::discriminant(b)
        };
        let same_node = |(a, b): (&Node, &Node)| {
            a.children == b.children && a.state == b.state && a.input == b.input
        };
        self.x.len() == other.x.len()
            && self.nodes.len() == other.nodes.len()
            && self.tire_wheels == other.tire_wheels
            && self.substep_blocks == other.substep_blocks
            && self.nodes.iter().zip(&other.nodes).all(same_node)
            && self.blocks.iter().zip(&other.blocks).all(same_builtin)
    }

    /// Sensors of block `B` at node `node`, if that node holds block `entity` of type `B`
    /// and the last step did not go astray (see [`Program::step`]).
    pub fn sensors<B: Block>(&self, node: u32, entity: Entity) -> Option<B::Sensors> {
        let i = node as usize;
        if self.diverged.is_some() || self.nodes.get(i)?.entity != entity {
            return None;
        }
        let cell = self.blocks[i].as_any()?.downcast_ref::<BlockCell<B>>()?;
        Some(self.sensors_of(cell, i))
    }

    /// Sensors of `cell`, the block at node `i`.
    pub fn sensors_of<B: Block>(&self, cell: &BlockCell<B>, i: usize) -> B::Sensors {
        let node = &self.nodes[i];
        let shafts = node_shafts(node, &self.shafts, i, self.drive_limit);
        cell.block
            .sensors(&cell.runtime, &self.x[node.state()], &shafts)
    }
}

/// [`Program::step`] for `N` programs in lockstep, each with its own stage hook of `hooks`:
/// one vehicle (`N = 1`), or a batch of four of [one shape](Program::same_shape), whose stages run in lanes
/// while their modes allow it. Each program's own arithmetic is the same either way, in the
/// same order: a vehicle's trajectory does not depend on the vehicles it is stepped with.
/// Returns how many evaluations ran in lanes.
#[inline(always)]
fn step_programs<const N: usize, H: FnMut(&mut StageWheels)>(
    programs: [&mut Program; N],
    dt: f64,
    substeps: u32,
    scratch: &mut Vec<f64>,
    mut hooks: [&mut H; N],
) -> u32 {
    let substeps = substeps.max(1);
    let n = programs[0].x.len();
    scratch.resize(7 * n * N, 0.0);
    let mut buffers = scratch.chunks_exact_mut(7 * n);
    let mut lanes = programs.map(|p| {
        let buffer = buffers.next().expect("sized for every program");
        Lane::new(p, buffer)
    });
    let step = StepContext { dt, substeps };
    let h = dt / f64::from(substeps);
    for lane in &mut lanes {
        lane.begin_step(&step, h);
    }
    let mut torque = [StageContext {
        pass: Pass::Torque,
        substep: h,
        drive_limit: 1.0,
    }; N];
    let mut stages = Stages::default();
    for s in 0..substeps {
        let t0 = f64::from(s) * h;
        for lane in &mut lanes {
            if lane.begin_substep(h) {
                stages.modes_changed();
            }
        }
        for ((lane, stage), hook) in lanes.iter_mut().zip(&mut torque).zip(&mut hooks) {
            stage.drive_limit = lane.hook_at(Stage::K1, [t0, h], &mut **hook);
        }
        stages.evaluate(&mut lanes, Stage::K1, &torque);
        stages.settle_modes(&mut lanes, Stage::K1, &torque);
        for ((lane, stage), hook) in lanes.iter_mut().zip(&mut torque).zip(&mut hooks) {
            lane.advance(Stage::K2, 0.5 * h);
            stage.drive_limit = lane.hook_at(Stage::K2, [t0 + 0.5 * h, h], &mut **hook);
        }
        stages.evaluate(&mut lanes, Stage::K2, &torque);
        for ((lane, stage), hook) in lanes.iter_mut().zip(&mut torque).zip(&mut hooks) {
            lane.advance(Stage::K3, 0.5 * h);
            stage.drive_limit = lane.hook_at(Stage::K3, [t0 + 0.5 * h, h], &mut **hook);
        }
        stages.evaluate(&mut lanes, Stage::K3, &torque);
        for ((lane, stage), hook) in lanes.iter_mut().zip(&mut torque).zip(&mut hooks) {
            lane.advance(Stage::K4, h);
            stage.drive_limit = lane.hook_at(Stage::K4, [t0 + h, h], &mut **hook);
        }
        stages.evaluate(&mut lanes, Stage::K4, &torque);
        for lane in &mut lanes {
            lane.commit(h);
        }
    }
    for (lane, stage) in lanes.iter_mut().zip(&torque) {
        lane.end_step(stage);
    }
    // Shaft values and modes at the end of the step, for the sensors.
    stages.evaluate(&mut lanes, Stage::End, &torque);
    stages.settle_modes(&mut lanes, Stage::End, &torque);
    for (lane, stage) in lanes.iter_mut().zip(&torque) {
        lane.finish(stage);
    }
    stages.in_lanes
}

/// Which of a step's evaluations a stage is: the four RK4 stages of a substep, or the
/// evaluation at the end of the step for the sensors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    K1,
    K2,
    K3,
    K4,
    End,
}

/// How a step evaluates its stages: the lanes' evaluation for a batch of four while its
/// modes allow it ([`crate::batch::fits`]), each program on its own otherwise.
#[derive(Default)]
struct Stages {
    /// Whether the batch fits the lanes; `None` until checked, and again once a block changes
    /// its mode.
    fit: Option<bool>,
    /// The lanes' shaft messages, kept for the step.
    shafts: Option<crate::batch::LaneShafts>,
    /// How many evaluations ran in lanes.
    in_lanes: u32,
    /// Whether the last evaluation ran in lanes (and `shafts` holds its shaft messages).
    last_in_lanes: bool,
}

impl Stages {
    /// Evaluates stage `stage` of every lane (their stage contexts in `context`).
    #[inline(always)]
    fn evaluate<const N: usize>(
        &mut self,
        lanes: &mut [Lane; N],
        stage: Stage,
        context: &[StageContext; N],
    ) {
        if let Ok(four) = <&mut [Lane; 4]>::try_from(&mut lanes[..])
            && *self.fit.get_or_insert_with(|| crate::batch::fits(four))
        {
            // Each vehicle's tires at once, as its own step evaluates them.
            for lane in four.iter_mut() {
                lane.load_wheels(stage);
            }
            crate::batch::evaluate(four, stage, context, self.shafts.get_or_insert_default());
            self.in_lanes += 1;
            self.last_in_lanes = true;
            return;
        }
        self.last_in_lanes = false;
        for (lane, context) in lanes.iter_mut().zip(context) {
            lane.evaluate(stage, context);
        }
    }

    /// After stage `stage` (K1, or the step's end; each lane's stage context in `context`):
    /// lets each lane's blocks switch modes ([`Passes::settle_modes`]), except in a lane whose
    /// step was undone. After an evaluation in lanes the first round runs on the lanes' shaft
    /// messages ([`crate::batch::update_modes`]); only a lane in which a block changed its mode
    /// has its shafts written and settles on its own from there.
    #[inline(always)]
    fn settle_modes<const N: usize>(
        &mut self,
        lanes: &mut [Lane; N],
        stage: Stage,
        context: &[StageContext; N],
    ) {
        let mut changed = false;
        if self.last_in_lanes
            && let Some(shafts) = &self.shafts
            && let Ok(four) = <&mut [Lane; 4]>::try_from(&mut lanes[..])
        {
            let settle = four.each_ref().map(|lane| !lane.undone);
            let first = crate::batch::update_modes(four, shafts, settle);
            for (l, (lane, context)) in four.iter_mut().zip(context).enumerate() {
                if first[l] == ModeChange::Unchanged {
                    continue;
                }
                // The step's end wrote them for the sensors.
                if stage == Stage::K1 {
                    let passes = &mut lane.passes;
                    crate::batch::write_shafts(passes.nodes, shafts, l, passes.shafts);
                }
                lane.passes
                    .settle_from(first[l], lane.x, lane.delta, lane.k[0], context);
                changed = true;
            }
        } else {
            for (lane, context) in lanes.iter_mut().zip(context) {
                if !lane.undone {
                    changed |= lane.settle_modes(context);
                }
            }
        }
        if changed {
            self.modes_changed();
        }
    }

    /// A block changed its mode: whether the batch fits is to be checked again.
    #[inline(always)]
    fn modes_changed(&mut self) {
        self.fit = None;
    }
}

/// The state stage `stage` is evaluated at and the buffer its derivative goes to, for a lane
/// whose committed state is `x`, stage state `xs` and derivative buffers `k`: K1 and the
/// step's end at the committed state into `k[0]`, K2 to K4 at the stage state.
#[inline(always)]
fn stage_buffers<'b>(
    stage: Stage,
    x: &'b [f64],
    xs: &'b [f64],
    k: &'b mut [&mut [f64]; 4],
) -> (&'b [f64], &'b mut [f64]) {
    match stage {
        Stage::K1 | Stage::End => (x, &mut *k[0]),
        Stage::K2 => (xs, &mut *k[1]),
        Stage::K3 => (xs, &mut *k[2]),
        Stage::K4 => (xs, &mut *k[3]),
    }
}

/// What the lanes' evaluation reads and writes of one program: its blocks, the stage's state
/// and derivative, and its shafts.
pub(crate) struct LaneView<'a> {
    pub blocks: &'a [Cell],
    pub state: &'a [f64],
    pub derivative: &'a mut [f64],
    pub shafts: &'a mut [Shaft],
}

/// One program in a step: its passes, its state and its stage buffers.
pub(crate) struct Lane<'a> {
    pub(crate) passes: Passes<'a>,
    /// The committed state.
    pub(crate) x: &'a mut [f64],
    /// The RK4 stage derivatives.
    pub(crate) k: [&'a mut [f64]; 4],
    /// The state of the stage being evaluated (K2 to K4).
    pub(crate) xs: &'a mut [f64],
    /// The momentum passes' speed changes.
    delta: &'a mut [f64],
    /// The state at the step's start.
    start: &'a mut [f64],
    pending_projection: &'a mut bool,
    substep_blocks: &'a [u16],
    drive_limit: &'a mut f64,
    diverged: &'a mut Option<usize>,
    /// The step went astray and was undone.
    undone: bool,
}

impl<'a> Lane<'a> {
    /// Borrows `program` apart, with `buffer` (seven state lengths) for its stage buffers.
    #[inline(always)]
    fn new(program: &'a mut Program, buffer: &'a mut [f64]) -> Lane<'a> {
        let Program {
            nodes,
            blocks,
            shafts,
            x,
            pending_projection,
            tire_wheels,
            lateral_mobility,
            substep_blocks,
            drive_limit,
            diverged,
        } = program;
        let n = x.len();
        // buffer = [k1 | k2 | k3 | k4 | xs | delta | the state at the step's start]
        let (k1, rest) = buffer.split_at_mut(n);
        let (k2, rest) = rest.split_at_mut(n);
        let (k3, rest) = rest.split_at_mut(n);
        let (k4, rest) = rest.split_at_mut(n);
        let (xs, rest) = rest.split_at_mut(n);
        let (delta, start) = rest.split_at_mut(n);
        Lane {
            passes: Passes {
                nodes,
                blocks,
                shafts,
                tire_wheels,
                lateral_mobility,
                drive_limit: 1.0,
            },
            // Plain slices from here on: indexing a SmallVec re-checks where its data lives.
            x,
            k: [k1, k2, k3, k4],
            xs,
            delta,
            start,
            pending_projection,
            substep_blocks,
            drive_limit,
            diverged,
            undone: false,
        }
    }

    /// The step's start: each block's per-step logic, and a momentum pass if one is due.
    #[inline(always)]
    fn begin_step(&mut self, step: &StepContext, h: f64) {
        self.start.copy_from_slice(self.x);
        let passes = &mut self.passes;
        let mut change = ModeChange::Unchanged;
        for (node, block) in passes.nodes.iter().zip(passes.blocks.iter_mut()) {
            change = change.max(block.begin_step(&mut self.x[node.state()], step));
        }
        if change == ModeChange::Impulsive || *self.pending_projection {
            passes.project(self.x, self.delta, h);
            *self.pending_projection = false;
        }
        for (node, block) in passes.nodes.iter().zip(passes.blocks.iter_mut()) {
            if let Cell::Wheel(c) = block {
                c.runtime.spin_at_step_start = self.x[node.state()][1];
            }
        }
    }

    /// A substep's start: the per-substep logic of the blocks that have one. Returns whether
    /// any block changed its mode.
    #[inline(always)]
    fn begin_substep(&mut self, h: f64) -> bool {
        if self.substep_blocks.is_empty() {
            return false;
        }
        let passes = &mut self.passes;
        let mut change = ModeChange::Unchanged;
        for &i in self.substep_blocks.iter() {
            let i = usize::from(i);
            let state = &mut self.x[passes.nodes[i].state()];
            change = change.max(passes.blocks[i].begin_substep(state, h));
        }
        if change == ModeChange::Impulsive {
            passes.project(self.x, self.delta, h);
        }
        change != ModeChange::Unchanged
    }

    /// Runs the stage hook for stage `stage`, `time` (s) into the step in a substep of
    /// `substep` (s); returns the drive limit for the stage.
    #[inline(always)]
    fn hook_at<H: FnMut(&mut StageWheels)>(
        &mut self,
        stage: Stage,
        [time, substep]: [f64; 2],
        hook: &mut H,
    ) -> f64 {
        let (state, _) = stage_buffers(stage, self.x, self.xs, &mut self.k);
        self.passes
            .hook(state, [time, substep], stage == Stage::K1, hook)
    }

    /// Evaluates stage `stage` on its own, into its derivative buffer.
    #[inline(always)]
    fn evaluate(&mut self, stage: Stage, context: &StageContext) {
        let (state, derivative) = stage_buffers(stage, self.x, self.xs, &mut self.k);
        self.passes.evaluate(state, derivative, context);
    }

    /// The road torques of stage `stage`'s tire wheels, ahead of the lanes' evaluation of the
    /// passes ([`Passes::load_wheels`]).
    #[inline(always)]
    fn load_wheels(&mut self, stage: Stage) {
        if !self.passes.tire_wheels.is_empty() {
            let (state, derivative) = stage_buffers(stage, self.x, self.xs, &mut self.k);
            self.passes.load_wheels(state, derivative);
        }
    }

    /// What the lanes' evaluation of stage `stage` reads and writes of this program.
    #[inline(always)]
    pub(crate) fn view(&mut self, stage: Stage) -> LaneView<'_> {
        let (state, derivative) = stage_buffers(stage, self.x, self.xs, &mut self.k);
        LaneView {
            blocks: self.passes.blocks,
            state,
            derivative,
            shafts: self.passes.shafts,
        }
    }

    /// After stage K1 (or the step's end): lets the blocks switch modes. Returns whether any
    /// did.
    #[inline(always)]
    fn settle_modes(&mut self, context: &StageContext) -> bool {
        self.passes
            .settle_modes(self.x, self.delta, self.k[0], context)
    }

    /// Sets the stage state for `stage` to the committed state plus `h` times the last
    /// stage's derivative.
    #[inline(always)]
    fn advance(&mut self, stage: Stage, h: f64) {
        let k = match stage {
            Stage::K2 => &*self.k[0],
            Stage::K3 => &*self.k[1],
            _ => &*self.k[2],
        };
        for ((xs, x), k) in self.xs.iter_mut().zip(self.x.iter()).zip(k) {
            *xs = x + h * k;
        }
    }

    /// Commits a substep of `h` (s): the RK4 combination of the four stages.
    #[inline(always)]
    fn commit(&mut self, h: f64) {
        let [k1, k2, k3, k4] = &self.k;
        let stages = k1.iter().zip(k2.iter()).zip(k3.iter().zip(k4.iter()));
        for (x, ((k1, k2), (k3, k4))) in self.x.iter_mut().zip(stages) {
            *x += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        }
    }

    /// The step's end: a step that left any state not finite or beyond [`STATE_LIMIT`] is
    /// undone, naming the node that went astray.
    #[inline(always)]
    fn end_step(&mut self, context: &StageContext) {
        // NaN is not within the limit either.
        let within = |v: &f64| v.abs() <= STATE_LIMIT;
        if let Some(bad) = self.x.iter().position(|v| !within(v)) {
            self.x.copy_from_slice(self.start);
            // The block to name: the first whose own outputs are not numbers at the step's
            // start, if any are; else the first whose state went astray (a NaN a leaf sends up
            // lands first in the root's state, which only carries it).
            let passes = &mut self.passes;
            *self.diverged = passes
                .not_a_number_source(self.x, self.k[0], context)
                .or_else(|| passes.nodes.iter().position(|n| n.state().contains(&bad)));
            self.undone = true;
        }
    }

    /// After the end-of-step evaluation and its mode settling: the drive limit for the
    /// sensors.
    #[inline(always)]
    fn finish(&mut self, context: &StageContext) {
        if !self.undone {
            *self.drive_limit = context.drive_limit;
        }
    }
}

/// The parts of a [`Program`] the passes work on, borrowed apart from the state buffers.
pub(crate) struct Passes<'a> {
    pub(crate) nodes: &'a [Node],
    pub(crate) blocks: &'a mut [Cell],
    shafts: &'a mut [Shaft],
    /// The wheels with a tire: see [`Program::tire_wheels`].
    tire_wheels: &'a [u16],
    /// See [`Program::lateral_mobility`].
    lateral_mobility: &'a [f64],
    /// The torque sources' share of their driving torque the stage hook last set
    /// ([`StageContext::drive_limit`]); 1 at the start of each step.
    drive_limit: f64,
}

impl Passes<'_> {
    /// Runs a stage hook on the wheels at stage state `state`, `time` (s) into the step, in a
    /// substep of length `substep` (s) that this stage starts if `starts_substep`; returns the
    /// drive limit for the stage (the hook's, or the one it set last).
    #[inline]
    fn hook<H: FnMut(&mut StageWheels)>(
        &mut self,
        state: &[f64],
        [time, substep]: [f64; 2],
        starts_substep: bool,
        hook: &mut H,
    ) -> f64 {
        hook(&mut StageWheels {
            nodes: self.nodes,
            blocks: self.blocks,
            state,
            time,
            substep,
            starts_substep,
            drive_limit: &mut self.drive_limit,
        });
        self.drive_limit
    }

    /// After a stage at the committed state `x`: lets blocks switch modes, runs a momentum pass
    /// when a rigid connection appeared, and re-evaluates, until nothing changes. Returns
    /// whether any block changed its mode.
    fn settle_modes(
        &mut self,
        x: &mut [f64],
        delta: &mut [f64],
        derivative: &mut [f64],
        stage: &StageContext,
    ) -> bool {
        let first = self.update_modes(x);
        self.settle_from(first, x, delta, derivative, stage)
    }

    /// [`Passes::settle_modes`] after its first round of [`Block::update_modes`] found
    /// `first`.
    pub(crate) fn settle_from(
        &mut self,
        first: ModeChange,
        x: &mut [f64],
        delta: &mut [f64],
        derivative: &mut [f64],
        stage: &StageContext,
    ) -> bool {
        let mut changed = false;
        let mut change = first;
        for round in 0..MAX_MODE_ROUNDS {
            if round > 0 {
                change = self.update_modes(x);
            }
            changed |= change != ModeChange::Unchanged;
            match change {
                ModeChange::Unchanged => break,
                // The state is unchanged, and with it every wheel's road torque.
                ModeChange::Smooth => self.run_passes(x, derivative, stage),
                ModeChange::Impulsive => {
                    self.project(x, delta, stage.substep);
                    self.evaluate(x, derivative, stage);
                }
            }
        }
        changed
    }

    /// The block whose outputs at state `state` are not numbers while what it was handed is:
    /// evaluates a stage there (into `derivative`), then looks for the first block, leaves
    /// first, whose input shaft it sent a NaN up; then, roots first, for one that sent a NaN
    /// down to its outputs; then for one whose state's derivative holds a NaN. `None` if the
    /// stage is all numbers.
    fn not_a_number_source(
        &mut self,
        state: &[f64],
        derivative: &mut [f64],
        stage: &StageContext,
    ) -> Option<usize> {
        self.evaluate(state, derivative, stage);
        let nodes = self.nodes;
        let shafts = &*self.shafts;
        let sent_up = |i: usize| {
            let up = &shafts[i].up;
            nodes[i].input && (up.momentum.is_nan() || up.reaction.is_nan())
        };
        let own = |i: usize| derivative[nodes[i].state()].iter().any(|d| d.is_nan());
        let sent_down = |i: usize| {
            shafts[nodes[i].children()]
                .iter()
                .any(|s| s.down.torque.is_nan() || s.down.speed.is_nan())
        };
        (0..nodes.len())
            .rev()
            .find(|&i| sent_up(i))
            .or_else(|| (0..nodes.len()).find(|&i| sent_down(i)))
            .or_else(|| (0..nodes.len()).find(|&i| own(i)))
    }

    /// Lets every block switch modes after a stage; returns the strongest change.
    fn update_modes(&mut self, x: &[f64]) -> ModeChange {
        let mut change = ModeChange::Unchanged;
        let (shafts, drive_limit) = (&*self.shafts, self.drive_limit);
        for (i, (node, block)) in self.nodes.iter().zip(self.blocks.iter_mut()).enumerate() {
            let shafts = node_shafts(node, shafts, i, drive_limit);
            change = change.max(block.update_modes(&x[node.state()], &shafts));
        }
        change
    }

    /// Momentum pass: makes speeds agree across every rigid connection, conserving angular
    /// momentum, and adds the speed changes to the state `x`. Couplings asked for more impulse
    /// than they carry within a `substep` (s) slip instead ([`Block::limit_impulse`]), and the
    /// pass runs again without them.
    fn project(&mut self, x: &mut [f64], delta: &mut [f64], substep: f64) {
        let stage = StageContext {
            pass: Pass::Momentum,
            substep,
            drive_limit: 1.0,
        };
        for _ in 0..MAX_MODE_ROUNDS {
            self.evaluate(x, delta, &stage);
            let mut limited = false;
            let (shafts, drive_limit) = (&*self.shafts, self.drive_limit);
            for (i, (node, block)) in self.nodes.iter().zip(self.blocks.iter_mut()).enumerate() {
                limited |= block.limit_impulse(&node_shafts(node, shafts, i, drive_limit), substep);
            }
            if !limited {
                break;
            }
        }
        for (x, d) in x.iter_mut().zip(delta.iter()) {
            *x += d;
        }
    }

    /// One stage at `state`: the wheels' road torques (in a torque pass), then the upstream
    /// pass, root and downstream pass. Writes the derivative (or, in a momentum pass, the speed
    /// change).
    fn evaluate(&mut self, state: &[f64], derivative: &mut [f64], stage: &StageContext) {
        if !self.tire_wheels.is_empty() && stage.pass == Pass::Torque {
            self.load_wheels(state, derivative);
        }
        self.run_passes(state, derivative, stage);
    }

    /// The part of a torque stage that depends on each tire's own wheel state alone: its road
    /// torque, and the derivatives of the wheel's angle and tire states. Four tires at a
    /// time: their evaluations are independent of each other and of the passes, so the
    /// processor overlaps them ([`LoadedTire::longitudinal_forces`]), and a mode change that
    /// leaves the state alone need not repeat them. (Simple road loads cost less than keeping
    /// them; the passes compute those.)
    fn load_wheels(&mut self, state: &[f64], derivative: &mut [f64]) {
        let tire_wheels = self.tire_wheels;
        if !self.lateral_mobility.is_empty() {
            self.shift_contacts(state);
        }
        for lanes in tire_wheels.chunks(TIRE_LANES) {
            self.load_tire_lanes(lanes, state, derivative);
        }
    }

    /// Moves each tire wheel's contact sideways by the body's answer to the tires' lateral
    /// impulses at `state` ([`Program::set_lateral_mobility`]).
    fn shift_contacts(&mut self, state: &[f64]) {
        let wheels = self.tire_wheels;
        let nodes = self.nodes;
        // A tire wheel's seventh state is its lateral impulse (see `Wheel`). Read in place: a
        // buffer of them would reach the heap, every stage, on a vehicle of many road wheels.
        let impulse = |i: u16| state[usize::from(nodes[usize::from(i)].state[0]) + 6];
        // A car's four wheels, in fixed sizes: the same sums without a check per element.
        if let (Ok(four), Ok(mobility)) = (
            <&[u16; 4]>::try_from(wheels),
            <&[f64; 16]>::try_from(self.lateral_mobility),
        ) {
            let impulses = four.map(impulse);
            for (r, &i) in four.iter().enumerate() {
                let row: [f64; 4] = core::array::from_fn(|c| mobility[4 * r + c]);
                let shift = row.iter().zip(&impulses).map(|(k, p)| k * p).sum();
                if let Cell::Wheel(c) = &mut self.blocks[usize::from(i)] {
                    c.runtime.lateral_shift = shift;
                }
            }
            return;
        }
        for (row, &i) in self.lateral_mobility.chunks_exact(wheels.len()).zip(wheels) {
            let shift = row.iter().zip(wheels).map(|(k, &j)| k * impulse(j)).sum();
            if let Cell::Wheel(c) = &mut self.blocks[usize::from(i)] {
                c.runtime.lateral_shift = shift;
            }
        }
    }

    /// [`Passes::load_wheels`] for the tire wheels at block indices `lanes` (at most
    /// [`TIRE_LANES`]).
    fn load_tire_lanes(&mut self, lanes: &[u16], state: &[f64], derivative: &mut [f64]) {
        let unloaded = LoadedTire::default();
        let mut tires = [&unloaded; TIRE_LANES];
        let mut kappa = [0.0; TIRE_LANES];
        let mut tan_alpha = [0.0; TIRE_LANES];
        let mut lateral = false;
        for (lane, i) in lanes.iter().map(|&i| usize::from(i)).enumerate() {
            if let Cell::Wheel(c) = &self.blocks[i] {
                tires[lane] = &c.runtime.tire;
                [kappa[lane], tan_alpha[lane]] = Wheel::tire_slips(&state[self.nodes[i].state()]);
                lateral |= c.runtime.contact.lateral_coupled;
            }
        }
        // The lateral forces too where the body answers them within the step.
        let forces = if lateral {
            LoadedTire::forces_lanes(tires, kappa, tan_alpha)
        } else {
            LoadedTire::longitudinal_forces(tires, kappa, tan_alpha).map(|fx| [fx, 0.0])
        };
        for (lane, i) in lanes.iter().map(|&i| usize::from(i)).enumerate() {
            let range = self.nodes[i].state();
            if let Cell::Wheel(c) = &mut self.blocks[i] {
                c.road = c.block.stage_load_with(
                    &c.runtime,
                    &state[range.clone()],
                    &mut derivative[range],
                    forces[lane],
                );
            }
        }
    }

    /// Upstream pass, root and downstream pass, with the wheels' road torques of the last
    /// [`Passes::load_wheels`] at the same state.
    fn run_passes(&mut self, state: &[f64], derivative: &mut [f64], stage: &StageContext) {
        // Indices come from the compiled topology: children follow their parent, and every
        // range lies inside its buffer.
        let shafts = &mut *self.shafts;
        let cells = || self.nodes.iter().zip(self.blocks.iter()).enumerate();
        // Upstream: leaves first; nodes without an input shaft send nothing up.
        for (i, (node, block)) in cells().rev() {
            if !node.input {
                continue;
            }
            // Children follow their parent: shaft `i` lies before the children's shafts.
            let children = node.children();
            let (head, tail) = shafts.split_at_mut(i + 1);
            let offset = i + 1;
            block.upstream_into(
                &state[node.state()],
                stage,
                &tail[children.start - offset..children.end - offset],
                &mut derivative[node.state()],
                &mut head[i].up,
            );
        }
        // Downstream: roots first. The input shaft lies before the children's.
        for (i, (node, block)) in cells() {
            let children = node.children();
            let (head, tail) = shafts.split_at_mut(children.start);
            block.downstream(
                &state[node.state()],
                stage,
                node.input.then(|| &head[i]),
                &mut tail[..children.len()],
                &mut derivative[node.state()],
            );
        }
    }
}

/// The shafts of `node`, node `i`, as its block sees them.
#[inline(always)]
fn node_shafts<'a>(node: &Node, shafts: &'a [Shaft], i: usize, drive_limit: f64) -> Shafts<'a> {
    Shafts {
        input: if node.input { Some(&shafts[i]) } else { None },
        outputs: &shafts[node.children()],
        drive_limit,
    }
}

/// The wheels of a drivetrain at one RK4 stage, as a stage hook sees them (see
/// [`Drivetrain::step_hooked`](crate::Drivetrain::step_hooked)): each wheel's spin at the
/// stage, and its runtime, whose brake capacity, outside drive torque and steering turn the
/// hook may set for this stage.
///
/// Wheels are found by their position in the pass order, the
/// [`BlockSlot::node`](crate::BlockSlot::node) of the wheel entity.
pub struct StageWheels<'a> {
    nodes: &'a [Node],
    blocks: &'a mut [Cell],
    state: &'a [f64],
    time: f64,
    substep: f64,
    starts_substep: bool,
    drive_limit: &'a mut f64,
}

impl StageWheels<'_> {
    /// Time since the start of the fixed step at this stage (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Length of the substep this stage belongs to (s).
    pub fn substep(&self) -> f64 {
        self.substep
    }

    /// Whether this is the first RK4 stage of a substep, whose state is the one committed at
    /// the substep's start (the other three stages evaluate trial states that are thrown
    /// away): the place for decisions taken once per substep.
    pub fn starts_substep(&self) -> bool {
        self.starts_substep
    }

    /// Spin of the wheel at pass-order position `node` at this stage (rad/s), or `None` if
    /// that node is not a wheel.
    pub fn spin(&self, node: u32) -> Option<f64> {
        let i = node as usize;
        match self.blocks.get(i)? {
            Cell::Wheel(_) => self.state.get(self.nodes[i].state()).map(|s| s[1]),
            _ => None,
        }
    }

    /// Longitudinal slip ratio of the tire of the wheel at pass-order position `node` at this
    /// stage (its relaxed slip state; dimensionless), or `None` if that node is not a wheel
    /// with a tire.
    pub fn slip(&self, node: u32) -> Option<f64> {
        let i = node as usize;
        match self.blocks.get(i)? {
            Cell::Wheel(c) if c.has_tire() => self
                .state
                .get(self.nodes[i].state())
                .map(|s| Wheel::tire_slips(s)[0]),
            _ => None,
        }
    }

    /// The longitudinal slip ratio (dimensionless) of the tire of the wheel at pass-order
    /// position `node` at this stage and how fast it moves (1/s), if that wheel has a tire on
    /// the ground (a positive contact load); `None` otherwise. One lookup for what a traction
    /// control reads of each wheel at every stage.
    pub fn grounded_slip(&self, node: u32) -> Option<(f64, f64)> {
        let i = node as usize;
        let Cell::Wheel(c) = self.blocks.get(i)? else {
            return None;
        };
        let grounded = c.runtime.contact.load > 0.0;
        if !grounded {
            return None;
        }
        let state = self.state.get(self.nodes[i].state())?;
        let rate = c.block.slip_rate(&c.runtime, state)?;
        Some((Wheel::tire_slips(state)[0], rate))
    }

    /// Sets the share of their driving torque the vehicle's torque sources deliver from this
    /// stage on, until set again within the step (0..1, clamped; not a number counts as 1):
    /// see [`StageContext::drive_limit`]. Each step starts at 1.
    pub fn set_drive_limit(&mut self, limit: f64) {
        *self.drive_limit = if limit.is_nan() {
            1.0
        } else {
            limit.clamp(0.0, 1.0)
        };
    }

    /// The runtime of the wheel at pass-order position `node`, or `None` if that node is not a
    /// wheel.
    pub fn wheel_mut(&mut self, node: u32) -> Option<&mut WheelRuntime> {
        match self.blocks.get_mut(node as usize)? {
            Cell::Wheel(c) => Some(&mut c.runtime),
            _ => None,
        }
    }
}
