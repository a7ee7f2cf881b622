//! The per-vehicle solver: a compiled program of blocks in pass order, integrated with RK4.
//!
//! The plugin compiles each vehicle's block entities into a [`Program`] when its connections
//! change, and copies changed block components into it before each step. All per-stage work
//! then runs on the program's own contiguous buffers, without touching the ECS.
//!
//! One fixed step of length `dt` with `N` substeps of length `h = dt/N`:
//!
//! ```text
//! begin_step (every block, once)            ── per-step logic
//! for each substep:
//!     k1 = f(x)                             ── upstream pass, root, downstream pass
//!     loop: update_modes; if a rigid connection appeared: momentum pass; k1 = f(x)
//!     k2 = f(x + h/2·k1); k3 = f(x + h/2·k2); k4 = f(x + h·k3)
//!     x += h/6·(k1 + 2k2 + 2k3 + k4)        ── state committed once per substep
//! f(x); sensors                             ── outputs reflect the end of the step
//! ```

use core::any::Any;

use bevy::prelude::Entity;

use crate::block::{Block, ModeChange, Shafts, StageContext, StepContext};
use crate::graph::Topology;
use crate::shaft::{Pass, ShaftDown, ShaftUp};

/// Most times modes are updated and the stage re-evaluated at the start of one substep.
const MAX_MODE_ROUNDS: usize = 4;

/// A block as the solver holds it: the user's component, plus its runtime state and latest
/// sensors. Object-safe view of [`Block`].
pub(crate) trait ErasedBlock: Send + Sync + 'static {
    fn state_len(&self) -> usize;
    fn init(&mut self, state: &mut [f64]);
    fn begin_step(&mut self, state: &[f64], step: &StepContext) -> ModeChange;
    fn upstream(&self, state: &[f64], stage: &StageContext, outputs: &[ShaftUp]) -> ShaftUp;
    #[allow(clippy::too_many_arguments)]
    fn downstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        input: Option<ShaftDown>,
        outputs_up: &[ShaftUp],
        outputs_down: &mut [ShaftDown],
        derivative: &mut [f64],
    );
    fn update_modes(&mut self, state: &[f64], shafts: &Shafts) -> ModeChange;
    fn update_sensors(&mut self, state: &[f64], shafts: &Shafts);
    /// Takes over the runtime state and sensors of `old` if it is the same block type.
    fn adopt(&mut self, old: &dyn ErasedBlock) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A block component with the solver's state beside it.
pub(crate) struct BlockCell<B: Block> {
    pub block: B,
    pub runtime: B::Runtime,
    pub sensors: B::Sensors,
}

impl<B: Block> BlockCell<B> {
    pub fn new(block: B) -> Self {
        BlockCell {
            block,
            runtime: B::Runtime::default(),
            sensors: B::Sensors::default(),
        }
    }
}

impl<B: Block> ErasedBlock for BlockCell<B> {
    #[inline]
    fn state_len(&self) -> usize {
        self.block.state_len()
    }
    fn init(&mut self, state: &mut [f64]) {
        self.block.init(&mut self.runtime, state);
    }
    #[inline]
    fn begin_step(&mut self, state: &[f64], step: &StepContext) -> ModeChange {
        self.block.begin_step(&mut self.runtime, state, step)
    }
    #[inline]
    fn upstream(&self, state: &[f64], stage: &StageContext, outputs: &[ShaftUp]) -> ShaftUp {
        self.block.upstream(&self.runtime, state, stage, outputs)
    }
    #[inline]
    fn downstream(
        &self,
        state: &[f64],
        stage: &StageContext,
        input: Option<ShaftDown>,
        outputs_up: &[ShaftUp],
        outputs_down: &mut [ShaftDown],
        derivative: &mut [f64],
    ) {
        self.block.downstream(
            &self.runtime,
            state,
            stage,
            input,
            outputs_up,
            outputs_down,
            derivative,
        );
    }
    #[inline]
    fn update_modes(&mut self, state: &[f64], shafts: &Shafts) -> ModeChange {
        self.block.update_modes(&mut self.runtime, state, shafts)
    }
    fn update_sensors(&mut self, state: &[f64], shafts: &Shafts) {
        self.sensors = self.block.sensors(&self.runtime, state, shafts);
    }
    fn adopt(&mut self, old: &dyn ErasedBlock) -> bool {
        match old.as_any().downcast_ref::<BlockCell<B>>() {
            Some(old) => {
                self.runtime = old.runtime.clone();
                self.sensors = old.sensors.clone();
                true
            }
            None => false,
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Stands in for an optional output port left open: drives nothing.
struct OpenEnd;

impl ErasedBlock for OpenEnd {
    fn state_len(&self) -> usize {
        0
    }
    fn init(&mut self, _: &mut [f64]) {}
    fn begin_step(&mut self, _: &[f64], _: &StepContext) -> ModeChange {
        ModeChange::Unchanged
    }
    fn upstream(&self, _: &[f64], _: &StageContext, _: &[ShaftUp]) -> ShaftUp {
        ShaftUp::FREE
    }
    fn downstream(
        &self,
        _: &[f64],
        _: &StageContext,
        _: Option<ShaftDown>,
        _: &[ShaftUp],
        _: &mut [ShaftDown],
        _: &mut [f64],
    ) {
    }
    fn update_modes(&mut self, _: &[f64], _: &Shafts) -> ModeChange {
        ModeChange::Unchanged
    }
    fn update_sensors(&mut self, _: &[f64], _: &Shafts) {}
    fn adopt(&mut self, _: &dyn ErasedBlock) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Where a node's data lives in the program's buffers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The block entity (`Entity::PLACEHOLDER` for an open port).
    pub entity: Entity,
    /// First child node; children are consecutive.
    pub first_child: u32,
    /// Number of children.
    pub children: u32,
    /// Offset of the node's continuous state in the state vector.
    pub state: u32,
    /// Length of the node's continuous state.
    pub state_len: u32,
}

impl Node {
    #[inline]
    fn children(&self) -> core::ops::Range<usize> {
        self.first_child as usize..(self.first_child + self.children) as usize
    }
    #[inline]
    fn state(&self) -> core::ops::Range<usize> {
        self.state as usize..(self.state + self.state_len) as usize
    }
}

/// A vehicle's compiled drivetrain.
pub(crate) struct Program {
    pub nodes: Vec<Node>,
    pub blocks: Vec<Box<dyn ErasedBlock>>,
    /// Upstream message of shaft `i` (the shaft into node `i`; unused for the root).
    pub up: Vec<ShaftUp>,
    /// Downstream message of shaft `i`.
    pub down: Vec<ShaftDown>,
    /// Committed continuous state.
    pub x: Vec<f64>,
    /// RK4 work buffers: k1, k2, k3, k4 and the stage state, each `x.len()` long.
    work: Vec<f64>,
    /// Speed changes of a momentum pass.
    delta: Vec<f64>,
    /// A momentum pass is due before the next stage (after a rebuild).
    pub pending_projection: bool,
}

impl Program {
    /// Builds a program from a validated topology. `take_block(i)` hands over the block of
    /// input index `i`.
    pub fn new(
        topology: &Topology,
        entities: &[Entity],
        mut take_block: impl FnMut(usize) -> Box<dyn ErasedBlock>,
    ) -> Program {
        let mut nodes = Vec::with_capacity(topology.nodes.len());
        let mut blocks: Vec<Box<dyn ErasedBlock>> = Vec::with_capacity(topology.nodes.len());
        let mut offset = 0u32;
        for t in &topology.nodes {
            let (entity, block) = match t.block {
                Some(i) => (entities[i], take_block(i)),
                None => (Entity::PLACEHOLDER, Box::new(OpenEnd) as Box<dyn ErasedBlock>),
            };
            let len = block.state_len() as u32;
            nodes.push(Node {
                entity,
                first_child: t.first_child as u32,
                children: t.children as u32,
                state: offset,
                state_len: len,
            });
            offset += len;
            blocks.push(block);
        }
        let n = offset as usize;
        let mut program = Program {
            up: vec![ShaftUp::FREE; nodes.len()],
            down: vec![ShaftDown::default(); nodes.len()],
            nodes,
            blocks,
            x: vec![0.0; n],
            work: vec![0.0; 5 * n],
            delta: vec![0.0; n],
            pending_projection: true,
        };
        for (node, block) in program.nodes.iter().zip(program.blocks.iter_mut()) {
            block.init(&mut program.x[node.state()]);
        }
        program
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

    /// Advances the drivetrain by one fixed step of `dt` seconds in `substeps` RK4 substeps.
    pub fn step(&mut self, dt: f64, substeps: u32) {
        let substeps = substeps.max(1);
        let n = self.x.len();
        let step = StepContext { dt, substeps };
        let mut change = ModeChange::Unchanged;
        for (node, block) in self.nodes.iter().zip(self.blocks.iter_mut()) {
            change = change.max(block.begin_step(&self.x[node.state()], &step));
        }
        if change == ModeChange::Impulsive || self.pending_projection {
            self.project();
        }
        let h = dt / f64::from(substeps);
        let torque = StageContext {
            pass: Pass::Torque,
            substep: h,
        };
        // work = [k1 | k2 | k3 | k4 | xs]
        let mut work = core::mem::take(&mut self.work);
        let (k1, rest) = work.split_at_mut(n);
        let (k2, rest) = rest.split_at_mut(n);
        let (k3, rest) = rest.split_at_mut(n);
        let (k4, xs) = rest.split_at_mut(n);
        for _ in 0..substeps {
            self.evaluate(None, k1, &torque);
            for _ in 0..MAX_MODE_ROUNDS {
                let change = self.update_modes();
                if change == ModeChange::Unchanged {
                    break;
                }
                if change == ModeChange::Impulsive {
                    self.project();
                }
                self.evaluate(None, k1, &torque);
            }
            for j in 0..n {
                xs[j] = self.x[j] + 0.5 * h * k1[j];
            }
            self.evaluate(Some(xs), k2, &torque);
            for j in 0..n {
                xs[j] = self.x[j] + 0.5 * h * k2[j];
            }
            self.evaluate(Some(xs), k3, &torque);
            for j in 0..n {
                xs[j] = self.x[j] + h * k3[j];
            }
            self.evaluate(Some(xs), k4, &torque);
            for j in 0..n {
                self.x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
            }
        }
        // Shaft values and sensors at the end of the step.
        self.evaluate(None, k1, &torque);
        self.work = work;
        for i in 0..self.nodes.len() {
            let shafts = shafts_of(&self.nodes, &self.up, &self.down, i);
            self.blocks[i].update_sensors(&self.x[self.nodes[i].state()], &shafts);
        }
    }

    /// Lets every block switch modes after a stage; returns the strongest change.
    fn update_modes(&mut self) -> ModeChange {
        let mut change = ModeChange::Unchanged;
        for i in 0..self.nodes.len() {
            let shafts = shafts_of(&self.nodes, &self.up, &self.down, i);
            change = change.max(self.blocks[i].update_modes(&self.x[self.nodes[i].state()], &shafts));
        }
        change
    }

    /// Momentum pass: makes speeds agree across every rigid connection, conserving angular
    /// momentum, and adds the speed changes to the committed state.
    pub fn project(&mut self) {
        self.pending_projection = false;
        let mut delta = core::mem::take(&mut self.delta);
        let stage = StageContext {
            pass: Pass::Momentum,
            substep: 0.0,
        };
        self.evaluate(None, &mut delta, &stage);
        for (x, d) in self.x.iter_mut().zip(&delta) {
            *x += d;
        }
        self.delta = delta;
    }

    /// One stage: upstream pass, root, downstream pass. Evaluates at `state` (the committed
    /// state when `None`) and writes the derivative (or, in a momentum pass, the speed change).
    fn evaluate(&mut self, state: Option<&[f64]>, derivative: &mut [f64], stage: &StageContext) {
        let state: &[f64] = match state {
            Some(s) => s,
            None => &self.x,
        };
        let count = self.nodes.len();
        // Upstream: leaves first. Children of node i come after i, so split after i.
        for i in (1..count).rev() {
            let node = self.nodes[i];
            let (left, right) = self.up.split_at_mut(i + 1);
            let first = node.first_child as usize - (i + 1);
            let outputs = &right[first..first + node.children as usize];
            left[i] = self.blocks[i].upstream(&state[node.state()], stage, outputs);
        }
        // Downstream: root first.
        for i in 0..count {
            let node = self.nodes[i];
            let input = (i > 0).then(|| self.down[i]);
            let d = &mut derivative[node.state()];
            d.fill(0.0);
            self.blocks[i].downstream(
                &state[node.state()],
                stage,
                input,
                &self.up[node.children()],
                &mut self.down[node.children()],
                d,
            );
        }
    }
}

/// The shafts of node `i` as its block sees them.
#[inline]
fn shafts_of<'a>(nodes: &[Node], up: &'a [ShaftUp], down: &'a [ShaftDown], i: usize) -> Shafts<'a> {
    let node = &nodes[i];
    Shafts {
        input: (i > 0).then(|| (up[i], down[i])),
        outputs_up: &up[node.children()],
        outputs_down: &down[node.children()],
    }
}
