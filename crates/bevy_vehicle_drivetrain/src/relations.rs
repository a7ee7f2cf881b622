//! The two relationships that make a drivetrain out of block entities.
//!
//! * [`BlockOf`] / [`Blocks`]: which vehicle a block belongs to. Despawning the vehicle despawns
//!   its blocks.
//! * [`DrivenBy`] / [`Drives`]: the shafts. A block's `DrivenBy` names the upstream block *and
//!   the output port* it hangs from, so ports are explicit data and never an index into
//!   [`Drives`], whose order is only the order in which connections were made.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_vehicle_drivetrain::prelude::*;
//!
//! fn spawn(mut commands: Commands) {
//!     let car = commands.spawn((Name::new("car"), Drivetrain::default())).id();
//!     let motor = commands.spawn((Name::new("motor"), Motor::default(), BlockOf(car))).id();
//!     let diff = commands
//!         .spawn((Differential::default(), BlockOf(car), DrivenBy::new(motor)))
//!         .id();
//!     commands.spawn((Wheel::default(), BlockOf(car), DrivenBy::port(diff, Port::LEFT)));
//!     commands.spawn((Wheel::default(), BlockOf(car), DrivenBy::port(diff, Port::RIGHT)));
//! }
//! ```

use bevy::prelude::*;
use smallvec::SmallVec;

/// Names an output port of a block, e.g. [`Port::LEFT`] of a differential.
///
/// Port names are declared by each block type in [`Block::ports`](crate::Block::ports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Port(pub &'static str);

impl Port {
    /// The single output of inline blocks and roots.
    pub const OUT: Port = Port("out");
    /// A differential's first output (torque bias `b` goes here).
    pub const LEFT: Port = Port("left");
    /// A differential's second output.
    pub const RIGHT: Port = Port("right");
    /// A transfer case's front-axle output (torque bias `b` goes here).
    pub const FRONT: Port = Port("front");
    /// A transfer case's rear-axle output.
    pub const REAR: Port = Port("rear");
}

impl Default for Port {
    fn default() -> Self {
        Port::OUT
    }
}

impl core::fmt::Display for Port {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

/// On a block entity: the vehicle (the entity with a [`Drivetrain`](crate::Drivetrain)) this
/// block belongs to.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[relationship(relationship_target = Blocks)]
pub struct BlockOf(pub Entity);

/// On a vehicle entity: all of its blocks, in the order they were added. Maintained by Bevy from
/// [`BlockOf`]; never edit it directly.
#[derive(Component, Debug, Default)]
#[relationship_target(relationship = BlockOf, linked_spawn)]
pub struct Blocks(Vec<Entity>);

/// On a block entity: the shaft into this block's input, from output `port` of block `upstream`.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
#[relationship(relationship_target = Drives)]
pub struct DrivenBy {
    /// The block that drives this one.
    #[relationship]
    pub upstream: Entity,
    /// Which output of `upstream` the shaft leaves from.
    pub port: Port,
}

impl DrivenBy {
    /// Driven by the single output ([`Port::OUT`]) of `upstream`.
    pub fn new(upstream: Entity) -> Self {
        DrivenBy {
            upstream,
            port: Port::OUT,
        }
    }

    /// Driven by output `port` of `upstream`.
    pub fn port(upstream: Entity, port: Port) -> Self {
        DrivenBy { upstream, port }
    }
}

/// On a block entity: the blocks its outputs drive, in the order the connections were made (which
/// says nothing about ports; see [`DrivenBy::port`]). Maintained by Bevy from [`DrivenBy`].
///
/// Held inline up to two (a differential's outputs): a block drives one or two others, and
/// a list on the heap for each cost every vehicle about 200 bytes.
#[derive(Component, Debug, Default)]
#[relationship_target(relationship = DrivenBy)]
pub struct Drives(SmallVec<[Entity; 2]>);
