//! Checking a [`VehicleDescription`]'s values, wherever it came from: the rules a vehicle file
//! is held to, for a description built or edited in code.
//!
//! The file reader runs the same checks as it reads (and locates what they find in the file);
//! [`VehicleDescription::spawn`] runs them again, so that a description changed in code after
//! it was read cannot spawn a half-built vehicle or put NaN into the simulation.

use std::collections::HashMap;

use bevy::prelude::*;
use bevy_vehicle_chassis::ChassisError;
use bevy_vehicle_chassis::SpeedLimiter;
use bevy_vehicle_chassis::checks::{body_clearance, finite, non_negative, positive};
use bevy_vehicle_drivetrain::MAX_SUBSTEPS;
use bevy_vehicle_drivetrain::graph::{DrivetrainError, GraphBlock, order_blocks};
use bevy_vehicle_drivetrain::prelude::*;

use crate::blocks::WHEEL_TYPE;
use crate::description::{
    AxleSpec, ChassisSpec, NamedBlock, VehicleDescription, VehicleTopology, quoted,
};
use crate::error::closest;
use crate::modules::ModuleKind;

impl VehicleDescription {
    /// Checks every value the way its files are checked: the chassis, each axle (position,
    /// track, wheel, tire, suspension), every block's settings, the topology (each block has
    /// its settings, connections name blocks and ports that exist, no port used twice, every
    /// wheel on one axle, one root, no cycle, no required port left open), `substeps`, the
    /// brakes, steering, aerodynamics and speed limiter, the handbrake's axle, the coupling
    /// point, and each module (its slot, its settings, the axles it names).
    ///
    /// A description read from files passes; one edited in code may not.
    /// [`VehicleDescription::spawn`] calls this and builds nothing when it fails. The error
    /// names the vehicle, and a field path relative to the description written the way file
    /// paths are (`chassis.mass`, `axles[1].wheel.suspension.stiffness`,
    /// `blocks.gearbox.forward_ratios[2]`, `topology.connections.wheel_rl`,
    /// `modules.drivetrain.driven_axles[0]`), e.g.
    /// ``vehicle 'hatchback': setting `axles[0].track` must be greater than 0 (m), got -1.5``.
    pub fn validate(&self) -> Result<(), ChassisError> {
        self.check().map_err(|e| e.at_vehicle(self.name.clone()))
    }

    fn check(&self) -> Result<(), ChassisError> {
        self.chassis.validate().map_err(|e| e.within("chassis"))?;
        if let Some(point) = self.coupling {
            for (i, v) in point.into_iter().enumerate() {
                finite(&format!("coupling[{i}]"), v, "m")?;
            }
        }
        if !(1..=MAX_SUBSTEPS).contains(&self.substeps) {
            return Err(ChassisError::new(
                "substeps",
                format!("must lie in [1, {MAX_SUBSTEPS}], got {}", self.substeps),
            ));
        }
        self.brakes.validate()?;
        self.steering.validate()?;
        self.aerodynamics.validate()?;
        self.speed_limiter
            .as_ref()
            .map_or(Ok(()), SpeedLimiter::validate)?;
        if self.axles.len() != self.topology.axles.len() {
            return Err(ChassisError::new(
                "axles",
                format!(
                    "the topology has {} axle(s) but the vehicle sets {}",
                    self.topology.axles.len(),
                    self.axles.len()
                ),
            ));
        }
        if usize::from(self.brakes.handbrake_axle) >= self.axles.len() {
            return Err(ChassisError::new(
                "brakes.handbrake_axle",
                format!(
                    "must name one of the {} axle(s) (0 = front-most), got {}",
                    self.axles.len(),
                    self.brakes.handbrake_axle
                ),
            ));
        }
        for (i, axle) in self.axles.iter().enumerate() {
            axle.validate()
                .map_err(|e| e.within(&format!("axles[{i}]")))?;
        }
        for (i, pair) in self.axles.windows(2).enumerate() {
            // Both finite: each axle was checked above.
            if pair[1].z <= pair[0].z {
                return Err(ChassisError::new(
                    format!("axles[{}].z", i + 1),
                    format!(
                        "must lie behind axles[{i}] (z = {} m): the axles are listed from front \
                         to back, and −Z is forward, got {}",
                        pair[0].z, pair[1].z
                    ),
                ));
            }
        }
        let grounds: Vec<[f32; 2]> = self
            .axles
            .iter()
            .map(|a| [a.z, a.height - a.wheel.radius as f32])
            .collect();
        let c = &self.chassis;
        body_clearance(
            "chassis.body_center[1]",
            c.body_center[1] - c.body_half_extents[1],
            [-1.0, 1.0].map(|side| c.body_center[2] + side * c.body_half_extents[2]),
            &grounds,
        )?;
        self.topology
            .validate(&self.blocks)
            .map_err(|e| e.within("topology"))?;
        for named in &self.blocks {
            named
                .block
                .validate()
                .map_err(|e| ChassisError::from_setting(&format!("blocks.{}", named.name), e))?;
        }
        self.check_modules()
    }

    /// Each module in the slot of its kind, with valid settings, naming axles that exist.
    fn check_modules(&self) -> Result<(), ChassisError> {
        let axles = self.axles.len();
        for (slot, axle, module) in self.modules.slots() {
            let path = match slot {
                ModuleKind::AntiRollBar => format!("modules.anti_roll_bars[{axle}]"),
                _ => format!("modules.{}", slot.field()),
            };
            if module.kind() != slot {
                return Err(ChassisError::new(
                    path,
                    format!(
                        "`{}` is a {} module, and this slot takes a {} module",
                        module.type_name(),
                        module.kind().field(),
                        slot.field()
                    ),
                ));
            }
            if slot == ModuleKind::AntiRollBar && usize::from(axle) >= axles {
                return Err(ChassisError::new(
                    path,
                    format!(
                        "there is no axle {axle}: the vehicle has {axles} axle(s), numbered from \
                         0 at the front"
                    ),
                ));
            }
            module
                .validate()
                .and_then(|()| module.validate_axles(axles))
                .map_err(|e| ChassisError::from_setting(&path, e))?;
        }
        Ok(())
    }
}

impl ChassisSpec {
    /// Checks the body: mass and inertia greater than 0, centre of mass and box centre
    /// finite, box half extents greater than 0. Field paths are relative to the spec (`mass`,
    /// `inertia[2]`).
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("mass", self.mass, "kg")?;
        type Check = fn(&str, f32, &str) -> Result<(), ChassisError>;
        for (field, values, check, unit) in [
            ("inertia", self.inertia, positive as Check, "kg·m²"),
            ("center_of_mass", self.center_of_mass, finite as Check, "m"),
            (
                "body_half_extents",
                self.body_half_extents,
                positive as Check,
                "m",
            ),
            ("body_center", self.body_center, finite as Check, "m"),
        ] {
            for (i, v) in values.into_iter().enumerate() {
                check(&format!("{field}[{i}]"), v, unit)?;
            }
        }
        Ok(())
    }
}

impl AxleSpec {
    /// Checks the axle: position finite, track greater than 0, anti-roll bar 0 or more, and
    /// the wheel (radius, width, inertia, tire, suspension; see
    /// [`WheelSpec::validate`](bevy_vehicle_chassis::WheelSpec::validate)). Field paths are
    /// relative to the axle (`track`, `wheel.tire.relaxation_length[0]`).
    pub fn validate(&self) -> Result<(), ChassisError> {
        finite("z", self.z, "m")?;
        positive("track", self.track, "m")?;
        finite("height", self.height, "m")?;
        non_negative("anti_roll_bar", self.anti_roll_bar, "N/m")?;
        self.wheel.validate().map_err(|e| e.within("wheel"))
    }
}

impl VehicleTopology {
    /// Checks the topology against the non-wheel blocks' settings `blocks`: each non-wheel
    /// block of the topology has settings of its type and each settings entry a block; each
    /// connection names blocks that exist and an output port its upstream block has, and no
    /// port drives two blocks; each wheel block is on exactly one axle side and nothing else
    /// is; and the graph has one root, no cycle and no required port left open. Field paths
    /// are relative to the topology (`connections.wheel_rl`, `axles[0].left`,
    /// `blocks.gearbox`).
    pub fn validate(&self, blocks: &[NamedBlock]) -> Result<(), ChassisError> {
        let type_of = |name: &str| self.blocks.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let names: Vec<&str> = self.blocks.iter().map(|(n, _)| n.as_str()).collect();
        let unknown = |name: &str| no_block_called(name, &names);
        for (i, (name, _)) in self.blocks.iter().enumerate() {
            if self.blocks[..i].iter().any(|(n, _)| n == name) {
                return Err(ChassisError::new(
                    format!("blocks.{name}"),
                    format!("block '{name}' is given twice"),
                ));
            }
        }
        for named in blocks {
            let path = format!("blocks.{}", named.name);
            match type_of(&named.name) {
                None => return Err(ChassisError::new(path, unknown(&named.name))),
                Some(t) if t != named.block.type_name() => {
                    return Err(ChassisError::new(
                        path,
                        format!(
                            "'{}' is a `{t}` in the topology, and its settings are a `{}`'s",
                            named.name,
                            named.block.type_name()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        for (name, type_name) in &self.blocks {
            let with_settings = blocks.iter().filter(|b| &b.name == name).count();
            let wanted = usize::from(*type_name != WHEEL_TYPE);
            if with_settings != wanted {
                return Err(ChassisError::new(
                    format!("blocks.{name}"),
                    if wanted == 0 {
                        format!("'{name}' is a wheel: its settings are its axle's `wheel`")
                    } else {
                        format!(
                            "'{name}' has {with_settings} settings entries in the description's \
                             `blocks`, where it needs one"
                        )
                    },
                ));
            }
        }
        let ports_of = |name: &str| -> Option<Ports> {
            match type_of(name)? {
                WHEEL_TYPE => Some(Ports::LEAF),
                _ => blocks
                    .iter()
                    .find(|b| b.name == name)
                    .map(|b| b.block.ports()),
            }
        };

        let mut used: HashMap<(&str, &str), &str> = HashMap::new();
        for (i, connection) in self.connections.iter().enumerate() {
            let path = format!("connections.{}", connection.block);
            if self.connections[..i]
                .iter()
                .any(|c| c.block == connection.block)
            {
                return Err(ChassisError::new(
                    path,
                    format!("block '{}' is connected twice", connection.block),
                ));
            }
            if ports_of(&connection.block).is_none() {
                return Err(ChassisError::new(path, unknown(&connection.block)));
            }
            let up = connection.upstream.as_str();
            let Some(up_ports) = ports_of(up) else {
                return Err(ChassisError::new(path, unknown(up)));
            };
            if !up_ports.outputs.iter().any(|p| p.name == connection.port) {
                let known: Vec<&str> = up_ports.outputs.iter().map(|p| p.name).collect();
                return Err(ChassisError::new(
                    path,
                    if known.is_empty() {
                        format!("'{up}' has no outputs: nothing can hang from it")
                    } else {
                        format!(
                            "'{up}' has no port `{}`; its ports are {}",
                            connection.port,
                            quoted(&known)
                        )
                    },
                ));
            }
            if let Some(first) = used.insert((up, connection.port), &connection.block) {
                return Err(ChassisError::new(
                    path,
                    format!(
                        "port `{}` of '{up}' is connected twice: to '{first}' and to '{}'",
                        connection.port, connection.block
                    ),
                ));
            }
        }

        // Wheels: every wheel block on exactly one axle side, and nothing else on axles.
        let mut on_axle: HashMap<&str, usize> = HashMap::new();
        for (i, axle) in self.axles.iter().enumerate() {
            for (side, wheel) in [("left", &axle.left), ("right", &axle.right)] {
                let path = format!("axles[{i}].{side}");
                match type_of(wheel) {
                    None => return Err(ChassisError::new(path, unknown(wheel))),
                    Some(t) if t != WHEEL_TYPE => {
                        return Err(ChassisError::new(
                            path,
                            format!("'{wheel}' is a `{t}`, not a `Wheel`"),
                        ));
                    }
                    Some(_) => {}
                }
                if on_axle.insert(wheel, i).is_some() {
                    return Err(ChassisError::new(
                        path,
                        format!("wheel '{wheel}' is on two axles"),
                    ));
                }
            }
        }
        if let Some((name, _)) = self
            .blocks
            .iter()
            .find(|(n, t)| *t == WHEEL_TYPE && !on_axle.contains_key(n.as_str()))
        {
            return Err(ChassisError::new(
                format!("blocks.{name}"),
                format!("wheel '{name}' is on no axle: add it to `axles`"),
            ));
        }

        // The drivetrain's own rules, on stand-in entities.
        let entity = |i: usize| Entity::from_raw_u32(i as u32 + 1).expect("small index");
        let index = |name: &str| names.iter().position(|n| *n == name).expect("checked");
        let graph: Vec<GraphBlock> = names
            .iter()
            .enumerate()
            .map(|(i, name)| GraphBlock {
                entity: entity(i),
                name: (*name).to_owned(),
                ports: ports_of(name).expect("checked"),
                driven_by: self
                    .connections
                    .iter()
                    .find(|c| c.block == *name)
                    .map(|c| (entity(index(&c.upstream)), Port(c.port))),
            })
            .collect();
        order_blocks(&graph).map(|_| ()).map_err(|error| {
            // The block at fault, and whether its connection is what is wrong (rather than
            // the block lacking one, or a port of it left open).
            let (block, by_connection) = match &error {
                DrivetrainError::MultipleRoots { roots } => (roots.get(1).cloned(), false),
                DrivetrainError::UnconnectedInput { block }
                | DrivetrainError::UnconnectedPort { block, .. } => (Some(block.clone()), false),
                DrivetrainError::RootHasInput { block, .. } => (Some(block.clone()), true),
                DrivetrainError::Cycle { blocks } => (blocks.first().cloned(), true),
                _ => (None, false),
            };
            let path = match &block {
                Some(b) if by_connection && self.connections.iter().any(|c| &c.block == b) => {
                    format!("connections.{b}")
                }
                Some(b) => format!("blocks.{b}"),
                None => "blocks".to_owned(),
            };
            // The drivetrain words some errors to follow a vehicle's name ("has a cycle: ..").
            let mut reason = error.to_string();
            if reason.starts_with("has ") {
                reason.insert_str(0, "the drivetrain ");
            }
            ChassisError::new(path, reason)
        })
    }
}

/// Why `name` is refused as a block of a vehicle whose blocks are `names`, with the closest
/// name as a hint.
pub(crate) fn no_block_called(name: &str, names: &[&str]) -> String {
    let hint = closest(name, names.iter().copied())
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default();
    format!(
        "no block called '{name}'{hint}; the blocks are {}",
        quoted(names)
    )
}
