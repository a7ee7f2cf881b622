//! The batched step: four vehicles whose compiled drivetrains have one shape, stepped
//! together, with their stages' arithmetic in lanes.
//!
//! A stage of one vehicle walks its blocks, dispatches on each block's type and mode, and
//! slices its buffers for each; that walk costs as many instructions as the blocks'
//! arithmetic. Four vehicles of one shape (the same blocks, connected alike: see
//! [`Program::same_shape`](crate::solver::Program::same_shape)) share one walk, and each
//! block's formulas run on [`F4`], four `f64` lanes, one vehicle each.
//!
//! The formulas are the ones the one-vehicle step uses (the `Num`-generic functions in the
//! blocks' modules and in [`crate::shaft`]), each lane doing the same IEEE operations in the
//! same order: a vehicle's trajectory is bit for bit the same whichever vehicles share its
//! batch, or none. Lanes cover the blocks and modes of an ordinary drive ([`fits`]): an
//! engine not held by its friction, a locked clutch, an engaged gearbox, a differential
//! locked or slipping on its lock torque (an open one), and rolling wheels, driven ones with a
//! simple load or a tire and free ones with a tire. A stage in which any of the four is in
//! another mode (a clutch slipping, a wheel held by its brake, a gear change in neutral) runs
//! one vehicle at a time, as do the momentum passes. The mode settling's first round after a
//! stage in lanes runs on the lanes' shaft messages ([`update_modes`]: each block's own mode
//! update, one walk for the four); a vehicle in which a block changes its mode has its shafts
//! written and settles on its own from there. Each vehicle keeps its
//! own stage hook (the chassis's brake, steering and drive modules), run before each stage,
//! and its own tires, evaluated four at a time for each vehicle ahead of the passes as its
//! own step evaluates them.

use core::ops::{Add, Div, Mul, Sub};

use crate::block::{ModeChange, StageContext};
use crate::blocks::{BrakeMode, ClutchMode, Differential, DifferentialMode, Gearbox, Wheel};
use crate::shaft::{Shaft, ShaftDown, ShaftUp, lumped, mobile, reflected, rigid, rigid_speed};
use crate::solver::{BlockCell, Cell, Lane, LaneView, Node, Stage};

/// A number the stage formulas compute with: `f64` for one vehicle, [`F4`] for a batch.
pub(crate) trait Num:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// `v` in every lane.
    fn splat(v: f64) -> Self;
}

impl Num for f64 {
    #[inline(always)]
    fn splat(v: f64) -> f64 {
        v
    }
}

/// Four `f64` lanes, one vehicle each. Each operation is the lanes' own `f64` operation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct F4(pub [f64; 4]);

impl F4 {
    /// The lanes `f(0)` to `f(3)`.
    #[inline(always)]
    fn from_fn(mut f: impl FnMut(usize) -> f64) -> F4 {
        F4([f(0), f(1), f(2), f(3)])
    }
}

macro_rules! lane_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for F4 {
            type Output = F4;
            #[inline(always)]
            fn $method(self, other: F4) -> F4 {
                let (a, b) = (self.0, other.0);
                F4([a[0] $op b[0], a[1] $op b[1], a[2] $op b[2], a[3] $op b[3]])
            }
        }
    };
}
lane_op!(Add, add, +);
lane_op!(Sub, sub, -);
lane_op!(Mul, mul, *);
lane_op!(Div, div, /);

impl Num for F4 {
    #[inline(always)]
    fn splat(v: f64) -> F4 {
        F4([v; 4])
    }
}

/// The most blocks a batched vehicle has (the lanes' shaft buffers live on the stack).
const MAX_NODES: usize = 8;

/// The shaft messages of a batch's stage, in lanes: `[L, I, Tr]` up and `[Td, ω]` down for
/// each node's input shaft. Kept for a whole step: every stage writes each value before it
/// reads it.
pub(crate) struct LaneShafts {
    up: [[F4; 3]; MAX_NODES],
    down: [[F4; 2]; MAX_NODES],
}

impl Default for LaneShafts {
    fn default() -> Self {
        LaneShafts {
            up: [[F4::default(); 3]; MAX_NODES],
            down: [[F4::default(); 2]; MAX_NODES],
        }
    }
}

/// The kinds of block, in the modes the lanes cover.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LaneKind {
    Engine,
    LockedClutch,
    EngagedGearbox,
    LockedDifferential,
    /// A differential slipping on its lock torque alone (an open one, or a limited-slip one
    /// past its lock torque), without a viscous coupling.
    SlippingDifferential,
    /// A rolling wheel a block drives.
    RollingWheel,
    /// A rolling wheel with a tire that no block drives (its drive, if any, from outside).
    FreeTireWheel,
}

/// The lane kind of block `cell` at node `node`, or `None` if the lanes do not cover it in
/// its present mode.
#[inline(always)]
fn lane_kind(cell: &Cell, node: &Node) -> Option<LaneKind> {
    match cell {
        Cell::Engine(c) if !c.runtime.held => Some(LaneKind::Engine),
        Cell::Clutch(c) if c.runtime.mode == ClutchMode::Locked => Some(LaneKind::LockedClutch),
        Cell::Gearbox(c) if c.runtime.engaged != 0 => Some(LaneKind::EngagedGearbox),
        Cell::Differential(c) => match c.runtime.mode {
            DifferentialMode::Locked => Some(LaneKind::LockedDifferential),
            DifferentialMode::Slipping { .. }
                if c.block.viscous_coupling == 0.0 && c.runtime.gain > 0.0 =>
            {
                Some(LaneKind::SlippingDifferential)
            }
            DifferentialMode::Slipping { .. } => None,
        },
        Cell::Wheel(c) if matches!(c.runtime.mode, BrakeMode::Rolling { .. }) => {
            if node.input {
                Some(LaneKind::RollingWheel)
            } else if c.has_tire() {
                Some(LaneKind::FreeTireWheel)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether the four lanes, of one shape, can be evaluated in lanes in their present modes:
/// every block is of a kind the lanes cover, in the same mode in all four.
///
/// In these modes no shaft is held or free: every wheel rolls with a positive inertia, and
/// locked and engaged blocks pass it on; so the lanes need none of the one-vehicle step's
/// tests for held and free shafts.
#[inline(always)]
pub(crate) fn fits(lanes: &[Lane; 4]) -> bool {
    let nodes = lanes[0].passes.nodes;
    nodes.len() <= MAX_NODES
        && nodes.iter().enumerate().all(|(i, node)| {
            let kind = lane_kind(&lanes[0].passes.blocks[i], node);
            kind.is_some()
                && lanes[1..]
                    .iter()
                    .all(|lane| lane_kind(&lane.passes.blocks[i], node) == kind)
        })
}

/// The four lanes' blocks of type `$kind` at node `$i` (their kind checked by [`fits`]).
macro_rules! cells {
    ($views:expr, $i:expr, $kind:ident) => {{
        let cell = |l: usize| match &$views[l].blocks[$i] {
            Cell::$kind(c) => &**c,
            _ => unreachable!("checked by `fits`"),
        };
        [cell(0), cell(1), cell(2), cell(3)]
    }};
}

/// The torque (N·m) each lane's slipping differential's lock carries from output 1 to output 2
/// in a torque pass: its lock torque in its latched direction (no viscous coupling: see
/// [`fits`]).
#[inline(always)]
fn lock_torques(diffs: [&BlockCell<Differential>; 4]) -> F4 {
    F4::from_fn(|l| match diffs[l].runtime.mode {
        DifferentialMode::Slipping { direction } => direction * diffs[l].block.lock_torque,
        DifferentialMode::Locked => unreachable!("checked by `fits`"),
    })
}

/// Each lane's rolling wheel, whose states start at `s`, turns its angle at its spin.
#[inline(always)]
fn set_angle_rates(views: &mut [LaneView; 4], s: usize) {
    for view in views.iter_mut() {
        view.derivative[s] = view.state[s + 1];
    }
}

/// The message up `[L, I, Tr]` of the four lanes' rolling wheels at node `i`, whose states
/// start at `s`: as [`Wheel::reaction`] in a torque pass, with a tire's road torque from the lane's
/// [`Passes::load_wheels`](crate::solver::Passes::load_wheels) and a simple load's computed here.
#[inline(always)]
fn rolling_wheel(views: &[LaneView; 4], i: usize, s: usize) -> [F4; 3] {
    let wheels = cells!(views, i, Wheel);
    let speed = F4::from_fn(|l| views[l].state[s + 1]);
    let road = F4::from_fn(|l| {
        let w = wheels[l];
        if w.has_tire() {
            w.road
        } else {
            w.block.load_torque(speed.0[l])
        }
    });
    let inertia = F4::from_fn(|l| wheels[l].block.effective_inertia());
    let direction = F4::from_fn(|l| match wheels[l].runtime.mode {
        BrakeMode::Rolling { direction } => direction,
        BrakeMode::Held => unreachable!("checked by `fits`"),
    });
    let resisting = F4::from_fn(|l| Wheel::resisting(&wheels[l].runtime));
    rigid(
        inertia,
        speed,
        Wheel::rolling_reaction(road, direction, resisting),
    )
}

/// Evaluates torque stage `stage` of four lanes that [`fit`](fits), in lanes: the same
/// upstream pass, root and downstream pass as
/// [`Passes::evaluate`](crate::solver::Passes::evaluate) runs for each, writing each lane's
/// derivative, and its shafts after a stage whose shafts are read (K1, before the modes
/// settle, and the step's end, for the sensors). `context` holds each lane's stage, and
/// `shafts` the lanes' shaft messages.
#[inline(always)]
pub(crate) fn evaluate(
    lanes: &mut [Lane; 4],
    stage: Stage,
    context: &[StageContext],
    shafts: &mut LaneShafts,
) {
    let nodes = lanes[0].passes.nodes;
    let [a, b, c, d] = lanes;
    let mut views = [a.view(stage), b.view(stage), c.view(stage), d.view(stage)];
    let LaneShafts { up, down } = shafts;

    // Upstream: leaves first.
    for (i, node) in nodes.iter().enumerate().rev() {
        if !node.input {
            continue;
        }
        let s = usize::from(node.state[0]);
        let c = usize::from(node.children[0]);
        up[i] = match &views[0].blocks[i] {
            Cell::Wheel(_) => {
                set_angle_rates(&mut views, s);
                rolling_wheel(&views, i, s)
            }
            Cell::Differential(d) if d.runtime.mode == DifferentialMode::Locked => {
                let diffs = cells!(views, i, Differential);
                let k = F4::from_fn(|l| diffs[l].block.lock_ratio);
                let inv_gain = F4::from_fn(|l| diffs[l].runtime.inv_locked_gain);
                let inv_ratio_gain = F4::from_fn(|l| diffs[l].runtime.inv_locked_ratio_gain);
                Differential::locked_up(k, up[c], up[c + 1], inv_gain, inv_ratio_gain)
            }
            Cell::Differential(_) => {
                let diffs = cells!(views, i, Differential);
                let settings = [
                    F4::from_fn(|l| diffs[l].block.ratio),
                    F4::from_fn(|l| diffs[l].runtime.gain),
                    F4::from_fn(|l| diffs[l].block.torque_bias),
                    F4::from_fn(|l| diffs[l].block.lock_ratio),
                ];
                let [speed, mobility, free_acceleration] =
                    Differential::slipping_up(settings, lock_torques(diffs), up[c], up[c + 1]);
                mobile(speed, mobility, free_acceleration)
            }
            Cell::Gearbox(_) => {
                let gearboxes = cells!(views, i, Gearbox);
                let inv_ratio = F4::from_fn(|l| gearboxes[l].runtime.inv_ratio);
                let inv_gain = F4::from_fn(|l| gearboxes[l].runtime.inv_gain);
                reflected(up[c], inv_ratio, inv_gain)
            }
            Cell::Clutch(_) => up[c],
            _ => unreachable!("checked by `fits`"),
        };
    }

    // Downstream: roots first.
    for (i, node) in nodes.iter().enumerate() {
        let s = usize::from(node.state[0]);
        let c = usize::from(node.children[0]);
        match &views[0].blocks[i] {
            Cell::Engine(_) => {
                let engines = cells!(views, i, Engine);
                let speed = F4::from_fn(|l| views[l].state[s]);
                // A loop rather than a closure: the engine's torque is long, and a closure
                // holding it was called rather than inlined.
                let mut torque = F4::default();
                for (l, e) in engines.iter().enumerate() {
                    torque.0[l] =
                        e.block
                            .limited_torque(&e.runtime, speed.0[l], context[l].drive_limit);
                }
                let [_, inertia, reaction] = up[c];
                let total = F4::from_fn(|l| engines[l].block.inertia) + inertia;
                let inv_total = F4::from_fn(|l| engines[l].runtime.total_inertia.of(total.0[l]));
                let [acceleration, shaft_torque] = lumped(torque, inertia, reaction, inv_total);
                for (view, acceleration) in views.iter_mut().zip(acceleration.0) {
                    view.derivative[s] = acceleration;
                }
                down[c] = [shaft_torque, speed];
            }
            Cell::Clutch(_) => down[c] = down[i],
            Cell::Gearbox(_) => {
                let gearboxes = cells!(views, i, Gearbox);
                let gain = F4::from_fn(|l| gearboxes[l].runtime.gain);
                let inv_ratio = F4::from_fn(|l| gearboxes[l].runtime.inv_ratio);
                down[c] = Gearbox::driven(down[i][0], down[i][1], gain, inv_ratio);
            }
            Cell::Differential(d) if d.runtime.mode != DifferentialMode::Locked => {
                let diffs = cells!(views, i, Differential);
                let settings = [
                    down[i][0],
                    F4::from_fn(|l| diffs[l].block.torque_bias),
                    F4::from_fn(|l| diffs[l].runtime.gain),
                    F4::from_fn(|l| diffs[l].block.lock_ratio),
                ];
                let [t1, t2] = Differential::slipping_split(settings, lock_torques(diffs));
                let (o1, o2) = (up[c], up[c + 1]);
                down[c] = [t1, rigid_speed(o1[0], o1[1])];
                down[c + 1] = [t2, rigid_speed(o2[0], o2[1])];
            }
            Cell::Differential(_) => {
                let diffs = cells!(views, i, Differential);
                let settings = [
                    down[i][0],
                    F4::from_fn(|l| diffs[l].block.lock_ratio),
                    F4::from_fn(|l| diffs[l].block.torque_bias),
                    F4::from_fn(|l| diffs[l].runtime.gain),
                ];
                let k = settings[1];
                let (o1, o2) = (up[c], up[c + 1]);
                let inertia = Differential::locked_inertia(k, o1[1], o2[1]);
                let inv_inertia = F4::from_fn(|l| diffs[l].runtime.locked_inertia.of(inertia.0[l]));
                let a2 =
                    Differential::locked_output_acceleration(settings, [o1[2], o2[2]], inv_inertia);
                let [t1, t2] = Differential::locked_split(settings, a2, [o1[1], o1[2]]);
                down[c] = [t1, rigid_speed(o1[0], o1[1])];
                down[c + 1] = [t2, rigid_speed(o2[0], o2[1])];
            }
            Cell::Wheel(_) if node.input => {
                let acceleration = Wheel::spin_acceleration(down[i][0], up[i][2], up[i][1]);
                for (view, acceleration) in views.iter_mut().zip(acceleration.0) {
                    view.derivative[s + 1] = acceleration;
                }
            }
            Cell::Wheel(_) => {
                // A free wheel describes itself here, and turns under the drive from outside.
                set_angle_rates(&mut views, s);
                let [_, inertia, reaction] = rolling_wheel(&views, i, s);
                let wheels = cells!(views, i, Wheel);
                let drive = F4::from_fn(|l| wheels[l].runtime.drive);
                let acceleration = Wheel::spin_acceleration(drive, reaction, inertia);
                for (view, acceleration) in views.iter_mut().zip(acceleration.0) {
                    view.derivative[s + 1] = acceleration;
                }
            }
            _ => unreachable!("checked by `fits`"),
        }
    }

    if stage == Stage::End {
        for (l, view) in views.iter_mut().enumerate() {
            write_shafts(nodes, shafts, l, view.shafts);
        }
    }
}

/// What lane `l`'s node `j` sent up its input shaft, as its own passes would have left it.
#[inline(always)]
fn lane_up(shafts: &LaneShafts, j: usize, l: usize) -> ShaftUp {
    let up = &shafts.up[j];
    ShaftUp {
        momentum: up[0].0[l],
        inertia: up[1].0[l],
        reaction: up[2].0[l],
    }
}

/// What came down lane `l`'s node `j`'s input shaft, as its own passes would have left it.
#[inline(always)]
fn lane_down(shafts: &LaneShafts, j: usize, l: usize) -> ShaftDown {
    let down = &shafts.down[j];
    ShaftDown {
        torque: down[0].0[l],
        speed: down[1].0[l],
    }
}

/// Writes lane `l`'s shaft messages to its program's shafts `out`, for the sensors (after the
/// step's end) or for its own mode settling (after K1, when one of its blocks changes mode).
#[inline(always)]
pub(crate) fn write_shafts(nodes: &[Node], shafts: &LaneShafts, l: usize, out: &mut [Shaft]) {
    for (i, node) in nodes.iter().enumerate() {
        if node.input {
            out[i] = Shaft {
                up: lane_up(shafts, i, l),
                down: lane_down(shafts, i, l),
            };
        }
    }
}

/// The first round of the mode settling after a stage the lanes evaluated (K1, or the step's
/// end), for the lanes whose `settle` is set: each block's own mode update (the code its
/// [`Block::update_modes`](crate::block::Block::update_modes) calls, on the values it reads)
/// on the shaft messages the lanes hold, at the lane's committed state, as
/// [`Passes::settle_modes`](crate::solver::Passes::settle_modes) runs it for one vehicle on
/// its written shafts. One walk and one dispatch per node for the four, and no shaft written
/// back. Returns each lane's strongest change (`Unchanged` for lanes not settled).
#[inline(always)]
pub(crate) fn update_modes(
    lanes: &mut [Lane; 4],
    shafts: &LaneShafts,
    settle: [bool; 4],
) -> [ModeChange; 4] {
    let nodes = lanes[0].passes.nodes;
    let mut changes = [ModeChange::Unchanged; 4];
    let (up, down) = (|j, l| lane_up(shafts, j, l), |j, l| lane_down(shafts, j, l));
    // Each lane to settle's change from `$update`, with `$cell` its block at node `$i` (of the
    // kind `fits` found there) and `$x` its committed state.
    macro_rules! each_lane {
        ($i:expr, $kind:ident, |$l:ident, $cell:ident, $x:ident| $update:expr) => {
            for ($l, lane) in lanes.iter_mut().enumerate() {
                if !settle[$l] {
                    continue;
                }
                let $x = &*lane.x;
                let Cell::$kind($cell) = &mut lane.passes.blocks[$i] else {
                    unreachable!("checked by `fits`")
                };
                changes[$l] = changes[$l].max($update);
            }
        };
    }
    for (i, node) in nodes.iter().enumerate() {
        let s = usize::from(node.state[0]);
        let c = usize::from(node.children[0]);
        match &lanes[0].passes.blocks[i] {
            Cell::Engine(_) => each_lane!(i, Engine, |l, e, x| {
                e.block.update_mode(&mut e.runtime, x[s], &up(c, l))
            }),
            Cell::Clutch(_) => each_lane!(i, Clutch, |l, k, _x| {
                k.block.update_mode(&mut k.runtime, down(i, l), up(c, l))
            }),
            Cell::Gearbox(_) => each_lane!(i, Gearbox, |l, g, _x| {
                g.block.update_mode(&mut g.runtime, down(i, l))
            }),
            Cell::Differential(_) => each_lane!(i, Differential, |l, d, _x| {
                let (o1, o2) = (up(c, l), up(c + 1, l));
                d.block.update_mode(&mut d.runtime, down(i, l), &o1, &o2)
            }),
            Cell::Wheel(_) => each_lane!(i, Wheel, |l, w, x| {
                let BrakeMode::Rolling { direction } = w.runtime.mode else {
                    unreachable!("checked by `fits`")
                };
                Wheel::update_rolling(&mut w.runtime, direction, x[s + 1])
            }),
            _ => unreachable!("checked by `fits`"),
        }
    }
    changes
}
