//! Validating a vehicle's block graph and putting it in pass order.
//!
//! This is plain data in, plain data out, so that every rule can be tested without an `App`.
//! The plugin gathers a [`GraphBlock`] per block entity, calls [`order_blocks`], and turns the
//! resulting [`Topology`] into a solver program.

use core::fmt;

use bevy::prelude::Entity;

use crate::block::{Input, Ports, SettingError};
use crate::relations::Port;

/// Why a vehicle's drivetrain was refused. Names are the blocks' `Name`s (or entity ids).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrivetrainError {
    /// The vehicle has no blocks.
    NoBlocks,
    /// An entity is marked as a block of the vehicle but has no registered block component.
    NotABlock {
        /// The entity's name.
        entity: String,
    },
    /// Nothing to start the drivetrain from: neither a root (engine, motor) nor a free block.
    NoRoot,
    /// More than one block without an input.
    MultipleRoots {
        /// The roots found.
        roots: Vec<String>,
    },
    /// A block that has an input is not driven by anything.
    UnconnectedInput {
        /// The block.
        block: String,
    },
    /// A required output port has nothing connected.
    UnconnectedPort {
        /// The block.
        block: String,
        /// The port left open.
        port: Port,
    },
    /// A block without an input (a root) is nonetheless driven by another block.
    RootHasInput {
        /// The root block.
        block: String,
        /// The block driving it.
        upstream: String,
    },
    /// A block hangs from a port its upstream block does not have.
    UnknownPort {
        /// The driven block.
        block: String,
        /// The upstream block.
        upstream: String,
        /// The port named.
        port: Port,
        /// The ports the upstream block has.
        known: Vec<&'static str>,
    },
    /// Two blocks hang from the same output port.
    PortConnectedTwice {
        /// The upstream block.
        block: String,
        /// The port.
        port: Port,
        /// The two driven blocks.
        driven: [String; 2],
    },
    /// A block is connected to a block that belongs to another vehicle (or to none).
    ForeignConnection {
        /// This vehicle's block.
        block: String,
        /// The other block.
        other: String,
        /// The other block's vehicle, if it has one.
        other_vehicle: Option<String>,
    },
    /// A step left the state of a block not finite (NaN or infinite) or beyond 1e100 in
    /// magnitude (in its unit; no real state comes near it): the step was undone and the
    /// drivetrain stopped. Its settings ask more than the substep can follow (a wheel or engine
    /// far too light for the torques on it, a torque, ratio or brake of 1e9, a torque of
    /// 1e300); changing any of its blocks rebuilds it.
    Diverged {
        /// The block whose output at the step's start was not a number (a block with a bug),
        /// or else the first block whose state went astray.
        block: String,
    },
    /// More blocks or continuous states than one drivetrain can index.
    TooLarge {
        /// Number of blocks.
        blocks: usize,
    },
    /// The shafts form a cycle.
    Cycle {
        /// The blocks on the cycle, in drive order.
        blocks: Vec<String>,
    },
    /// A block's settings were refused.
    InvalidSetting {
        /// The block.
        block: String,
        /// The block's type name.
        block_type: &'static str,
        /// What was wrong.
        error: SettingError,
    },
}

impl fmt::Display for DrivetrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrivetrainError::NoBlocks => write!(f, "has no drivetrain blocks"),
            DrivetrainError::NotABlock { entity } => write!(
                f,
                "entity '{entity}' is marked as one of its blocks but has no registered block component"
            ),
            DrivetrainError::NoRoot => write!(
                f,
                "has no root block (a block without an input, such as an engine or motor) and no free block"
            ),
            DrivetrainError::MultipleRoots { roots } => write!(
                f,
                "has a second root: blocks {} have no input, but a drivetrain has at most one root",
                quoted(roots)
            ),
            DrivetrainError::UnconnectedInput { block } => write!(
                f,
                "block '{block}': required port 'input' is left unconnected (nothing drives it)"
            ),
            DrivetrainError::UnconnectedPort { block, port } => write!(
                f,
                "block '{block}': required output port '{port}' is left unconnected"
            ),
            DrivetrainError::RootHasInput { block, upstream } => write!(
                f,
                "block '{block}' has no input port but is driven by '{upstream}'"
            ),
            DrivetrainError::UnknownPort {
                block,
                upstream,
                port,
                known,
            } => write!(
                f,
                "block '{block}' is driven by port '{port}' of '{upstream}', which has no such port (its ports: {})",
                known.join(", ")
            ),
            DrivetrainError::PortConnectedTwice {
                block,
                port,
                driven,
            } => write!(
                f,
                "block '{block}': output port '{port}' is connected twice (to '{}' and '{}')",
                driven[0], driven[1]
            ),
            DrivetrainError::ForeignConnection {
                block,
                other,
                other_vehicle,
            } => match other_vehicle {
                Some(v) => write!(
                    f,
                    "block '{block}' is connected to block '{other}' of another vehicle, '{v}'"
                ),
                None => write!(
                    f,
                    "block '{block}' is connected to '{other}', which belongs to no vehicle"
                ),
            },
            DrivetrainError::Diverged { block } => write!(
                f,
                "block '{block}': a step left its state not finite (NaN or infinite) or past \
                 1e100 in magnitude, so the step was undone and the drivetrain stopped; its \
                 settings, or those of a block connected to it, ask more than the substep can \
                 follow (a wheel or engine far too light for the torques on it, a torque, ratio, \
                 coupling or brake far too large), or the block returned a number that is not \
                 finite"
            ),
            DrivetrainError::TooLarge { blocks } => write!(
                f,
                "has {blocks} blocks; a drivetrain holds at most {MAX_BLOCKS} blocks and {MAX_BLOCKS} continuous states"
            ),
            DrivetrainError::Cycle { blocks } => {
                write!(f, "has a cycle: ")?;
                for b in blocks {
                    write!(f, "'{b}' → ")?;
                }
                write!(f, "'{}'", blocks.first().map(String::as_str).unwrap_or(""))
            }
            DrivetrainError::InvalidSetting {
                block,
                block_type,
                error,
            } => write!(f, "block '{block}' ({block_type}): {error}"),
        }
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A drivetrain error together with the vehicle it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VehicleError {
    /// The vehicle's name (or entity id).
    pub vehicle: String,
    /// What is wrong.
    pub error: DrivetrainError,
}

impl fmt::Display for VehicleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vehicle '{}' {}", self.vehicle, self.error)?;
        Ok(())
    }
}

impl std::error::Error for VehicleError {}

/// One block, as the graph check sees it.
#[derive(Clone, Debug)]
pub struct GraphBlock {
    /// The block entity.
    pub entity: Entity,
    /// Its name for messages.
    pub name: String,
    /// Its ports.
    pub ports: Ports,
    /// Its input connection, if any: (upstream entity, upstream port).
    pub driven_by: Option<(Entity, Port)>,
}

/// A node of the ordered graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopoNode {
    /// Index into the input blocks, or `None` for an optional output port left open.
    pub block: Option<usize>,
    /// Whether a shaft drives this node (false for the root and for free blocks).
    pub input: bool,
    /// Index of the node's first child; its children are `first_child..first_child + children`,
    /// in port order.
    pub first_child: usize,
    /// Number of children (= number of output ports).
    pub children: usize,
}

/// A validated drivetrain in pass order: a forest whose first tree starts at the root (if there
/// is one), followed by the trees of free blocks. Every node comes after its parent, and the
/// children of a node are consecutive and in port order. The shaft into node `i` is shaft `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The nodes in pass order.
    pub nodes: Vec<TopoNode>,
}

/// Most blocks (and most continuous states) one drivetrain can hold.
pub const MAX_BLOCKS: usize = 4096;

/// Checks the graph and orders it. The order depends only on the graph, never on the order of
/// `blocks`, so spawning blocks in another order gives the same program.
pub fn order_blocks(blocks: &[GraphBlock]) -> Result<Topology, DrivetrainError> {
    if blocks.is_empty() {
        return Err(DrivetrainError::NoBlocks);
    }
    if blocks.len() > MAX_BLOCKS {
        return Err(DrivetrainError::TooLarge {
            blocks: blocks.len(),
        });
    }
    let index_of = |e: Entity| blocks.iter().position(|b| b.entity == e);

    // The root, free blocks (optional input, undriven), and blocks that nothing drives.
    let mut roots: Vec<usize> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match (b.ports.input, b.driven_by) {
            (Input::None, None) => roots.push(i),
            (Input::None, Some((up, _))) => {
                let upstream =
                    index_of(up).map_or_else(|| format!("{up}"), |j| blocks[j].name.clone());
                return Err(DrivetrainError::RootHasInput {
                    block: b.name.clone(),
                    upstream,
                });
            }
            (Input::Required, None) => {
                return Err(DrivetrainError::UnconnectedInput {
                    block: b.name.clone(),
                });
            }
            (Input::Optional, None) => free.push(i),
            (_, Some(_)) => {}
        }
    }
    roots.sort_by(|&a, &b| blocks[a].name.cmp(&blocks[b].name));
    if roots.len() > 1 {
        return Err(DrivetrainError::MultipleRoots {
            roots: roots.iter().map(|&i| blocks[i].name.clone()).collect(),
        });
    }
    // Free trees in name order (their order does not change any result: trees are independent).
    free.sort_by(|&a, &b| blocks[a].name.cmp(&blocks[b].name));

    // children[parent][port] = child
    let mut children: Vec<Vec<Option<usize>>> = blocks
        .iter()
        .map(|b| vec![None; b.ports.outputs.len()])
        .collect();
    for (i, b) in blocks.iter().enumerate() {
        let Some((up, port)) = b.driven_by else {
            continue;
        };
        let Some(j) = index_of(up) else {
            // Foreign connections are reported by the caller, who can name the other vehicle.
            return Err(DrivetrainError::ForeignConnection {
                block: b.name.clone(),
                other: format!("{up}"),
                other_vehicle: None,
            });
        };
        let Some(p) = blocks[j].ports.output_index(port.0) else {
            return Err(DrivetrainError::UnknownPort {
                block: b.name.clone(),
                upstream: blocks[j].name.clone(),
                port,
                known: blocks[j].ports.outputs.iter().map(|p| p.name).collect(),
            });
        };
        if let Some(other) = children[j][p] {
            let mut driven = [blocks[other].name.clone(), b.name.clone()];
            driven.sort();
            return Err(DrivetrainError::PortConnectedTwice {
                block: blocks[j].name.clone(),
                port: Port(blocks[j].ports.outputs[p].name),
                driven,
            });
        }
        children[j][p] = Some(i);
    }

    // Cycles: with one upstream per block, a block not reachable from a tree's top lies on, or
    // below, a cycle. Walk upstream from it until a block repeats.
    let tops: Vec<usize> = roots.iter().chain(&free).copied().collect();
    let mut reached = vec![false; blocks.len()];
    let mut stack = tops.clone();
    while let Some(i) = stack.pop() {
        if reached[i] {
            continue;
        }
        reached[i] = true;
        stack.extend(children[i].iter().flatten().copied());
    }
    if let Some(start) = (0..blocks.len()).find(|&i| !reached[i]) {
        let mut path = vec![start];
        let mut i = start;
        loop {
            let (up, _) = blocks[i].driven_by.expect("undriven blocks are tops");
            i = index_of(up).expect("checked above");
            if let Some(pos) = path.iter().position(|&p| p == i) {
                let mut cycle: Vec<usize> = path[pos..].to_vec();
                cycle.reverse(); // drive order: upstream first
                // Start at the alphabetically first block so the message is stable.
                let first = (0..cycle.len())
                    .min_by(|&a, &b| blocks[cycle[a]].name.cmp(&blocks[cycle[b]].name))
                    .unwrap_or(0);
                cycle.rotate_left(first);
                return Err(DrivetrainError::Cycle {
                    blocks: cycle.iter().map(|&c| blocks[c].name.clone()).collect(),
                });
            }
            path.push(i);
        }
    }
    if tops.is_empty() {
        return Err(DrivetrainError::NoRoot);
    }

    // Required ports.
    for (i, b) in blocks.iter().enumerate() {
        for (p, spec) in b.ports.outputs.iter().enumerate() {
            if spec.required && children[i][p].is_none() {
                return Err(DrivetrainError::UnconnectedPort {
                    block: b.name.clone(),
                    port: Port(spec.name),
                });
            }
        }
    }

    // Each tree breadth-first, the root's first; children of a node become consecutive nodes,
    // in port order.
    let mut nodes = Vec::with_capacity(blocks.len());
    for &top in &tops {
        let start = nodes.len();
        nodes.push(TopoNode {
            block: Some(top),
            input: false,
            first_child: 0,
            children: 0,
        });
        let mut next = start;
        while next < nodes.len() {
            let first_child = nodes.len();
            let count = match nodes[next].block {
                Some(i) => {
                    for child in &children[i] {
                        nodes.push(TopoNode {
                            block: *child,
                            input: true,
                            first_child: 0,
                            children: 0,
                        });
                    }
                    children[i].len()
                }
                None => 0,
            };
            nodes[next].first_child = first_child;
            nodes[next].children = count;
            next += 1;
        }
    }
    Ok(Topology { nodes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::PortSpec;

    fn e(i: u32) -> Entity {
        Entity::from_raw_u32(i).unwrap()
    }

    fn block(i: u32, name: &str, ports: Ports, driven_by: Option<(u32, Port)>) -> GraphBlock {
        GraphBlock {
            entity: e(i),
            name: name.into(),
            ports,
            driven_by: driven_by.map(|(u, p)| (e(u), p)),
        }
    }

    fn chain() -> Vec<GraphBlock> {
        vec![
            block(1, "engine", Ports::ROOT, None),
            block(2, "clutch", Ports::INLINE, Some((1, Port::OUT))),
            block(3, "diff", Ports::SPLIT, Some((2, Port::OUT))),
            block(4, "wheel_l", Ports::LEAF, Some((3, Port::LEFT))),
            block(5, "wheel_r", Ports::LEAF, Some((3, Port::RIGHT))),
        ]
    }

    #[test]
    fn orders_root_first_and_children_by_port() {
        let mut blocks = chain();
        let t = order_blocks(&blocks).unwrap();
        let names: Vec<String> = t
            .nodes
            .iter()
            .map(|n| blocks[n.block.unwrap()].name.clone())
            .collect();
        assert_eq!(names, ["engine", "clutch", "diff", "wheel_l", "wheel_r"]);
        // Same order whatever the input order.
        blocks.reverse();
        let t2 = order_blocks(&blocks).unwrap();
        let names2: Vec<String> = t2
            .nodes
            .iter()
            .map(|n| blocks[n.block.unwrap()].name.clone())
            .collect();
        assert_eq!(names, names2);
    }

    #[test]
    fn cycle_is_named() {
        let mut blocks = chain();
        // a gear loop hanging nowhere: g1 -> g2 -> g1
        blocks.push(block(6, "g1", Ports::INLINE, Some((7, Port::OUT))));
        blocks.push(block(7, "g2", Ports::INLINE, Some((6, Port::OUT))));
        let err = order_blocks(&blocks).unwrap_err();
        assert_eq!(
            err,
            DrivetrainError::Cycle {
                blocks: vec!["g1".into(), "g2".into()]
            }
        );
        assert_eq!(err.to_string(), "has a cycle: 'g1' → 'g2' → 'g1'");
    }

    #[test]
    fn unconnected_required_port() {
        let mut blocks = chain();
        blocks.pop();
        let err = order_blocks(&blocks).unwrap_err();
        assert_eq!(
            err.to_string(),
            "block 'diff': required output port 'right' is left unconnected"
        );
    }

    #[test]
    fn optional_port_becomes_open_end() {
        const PTO: Ports = Ports {
            input: Input::None,
            outputs: &[PortSpec::required("out"), PortSpec::optional("pto")],
        };
        let mut blocks = chain();
        blocks[0].ports = PTO;
        let t = order_blocks(&blocks).unwrap();
        assert_eq!(t.nodes[0].children, 2);
        assert_eq!(t.nodes[2].block, None);
    }

    #[test]
    fn free_wheels_form_their_own_trees() {
        let mut blocks = chain();
        blocks.push(block(7, "rear_r", Ports::LEAF, None));
        blocks.push(block(6, "rear_l", Ports::LEAF, None));
        let t = order_blocks(&blocks).unwrap();
        let names: Vec<String> = t
            .nodes
            .iter()
            .map(|n| blocks[n.block.unwrap()].name.clone())
            .collect();
        assert_eq!(
            names,
            [
                "engine", "clutch", "diff", "wheel_l", "wheel_r", "rear_l", "rear_r"
            ]
        );
        assert_eq!(t.nodes.iter().filter(|n| !n.input).count(), 3);
        // A trailer: free wheels only.
        let trailer = vec![
            block(1, "l", Ports::LEAF, None),
            block(2, "r", Ports::LEAF, None),
        ];
        assert_eq!(order_blocks(&trailer).unwrap().nodes.len(), 2);
    }

    #[test]
    fn second_root() {
        let mut blocks = chain();
        blocks.push(block(6, "motor", Ports::ROOT, None));
        let err = order_blocks(&blocks).unwrap_err();
        assert!(matches!(err, DrivetrainError::MultipleRoots { .. }));
        assert!(err.to_string().contains("second root"), "{err}");
    }

    #[test]
    fn port_twice_and_unknown_port() {
        let mut blocks = chain();
        blocks[4].driven_by = Some((e(3), Port::LEFT));
        let err = order_blocks(&blocks).unwrap_err();
        assert_eq!(
            err.to_string(),
            "block 'diff': output port 'left' is connected twice (to 'wheel_l' and 'wheel_r')"
        );
        let mut blocks = chain();
        blocks[4].driven_by = Some((e(3), Port("rear")));
        let err = order_blocks(&blocks).unwrap_err();
        assert_eq!(
            err.to_string(),
            "block 'wheel_r' is driven by port 'rear' of 'diff', which has no such port (its ports: left, right)"
        );
    }

    #[test]
    fn unconnected_input_and_no_root() {
        let mut blocks = chain();
        blocks[1].driven_by = None;
        assert_eq!(
            order_blocks(&blocks).unwrap_err(),
            DrivetrainError::UnconnectedInput {
                block: "clutch".into()
            }
        );
        assert_eq!(order_blocks(&[]).unwrap_err(), DrivetrainError::NoBlocks);
    }
}
