//! Turning a [`VehicleDescription`] into entities, and updating them when it changes.

use std::collections::HashMap;

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_chassis::modules::{
    AckermannSteering, BuiltinBrakes, BuiltinSuspension, InstallModule, VehicleModule,
};
use bevy_vehicle_chassis::{
    AntiRollBar, AntiRollBars, ChassisError, ChassisStatus, Coupling, Side, SpeedLimiter,
    StaticPreload, Vehicle, WheelMount,
};
use bevy_vehicle_drivetrain::prelude::*;

use crate::blocks::WHEEL_TYPE;
use crate::description::{AxleSpec, VehicleDescription};

/// On a vehicle spawned from a description: what it was built from, so that a changed
/// description updates only what changed.
#[derive(Component, Clone, Debug)]
pub struct SpawnedFrom {
    /// The description the entities match.
    pub description: VehicleDescription,
    /// The block entities by name, wheels included.
    pub blocks: HashMap<String, Entity>,
}

impl VehicleDescription {
    /// Spawns the vehicle at `transform` and returns the vehicle entity: a Rapier body with the
    /// chassis, and one entity per block (wheels are also children of the vehicle).
    ///
    /// A description that fails [`VehicleDescription::validate`] (one edited in code after it
    /// was read, say), or a `transform` that is not finite or has a scale other than 1 on an
    /// axis ([`checks::transform`](bevy_vehicle_chassis::checks::transform)), is refused: the
    /// error is logged with `error!` and the returned entity is an inert placeholder holding
    /// the vehicle's `Name` and [`ChassisStatus::Invalid`] with the error (no body, no
    /// blocks). [`VehicleDescription::try_spawn`] returns the error instead.
    pub fn spawn(&self, commands: &mut Commands, transform: Transform) -> Entity {
        match self.try_spawn(commands, transform) {
            Ok(vehicle) => vehicle,
            Err(error) => {
                error!("{error}; the vehicle was not built");
                commands
                    .spawn((
                        Name::new(self.name.clone()),
                        ChassisStatus::Invalid(Box::new(error)),
                    ))
                    .id()
            }
        }
    }

    /// [`VehicleDescription::spawn`], or the reason it would spawn a placeholder: the
    /// description's [`validate`](VehicleDescription::validate) error or the transform's,
    /// naming the vehicle. Nothing is spawned on an error.
    pub fn try_spawn(
        &self,
        commands: &mut Commands,
        transform: Transform,
    ) -> Result<Entity, ChassisError> {
        bevy_vehicle_chassis::checks::transform(&transform)
            .map_err(|e| e.at_vehicle(self.name.clone()))?;
        self.validate()?;
        let vehicle = commands.spawn(transform).id();
        self.build_on(commands, vehicle, &VehicleControls::default());
        Ok(vehicle)
    }

    /// Makes `vehicle` (an entity with a `Transform`) this vehicle: adds the chassis and spawns
    /// the blocks.
    pub(crate) fn build_on(
        &self,
        commands: &mut Commands,
        vehicle: Entity,
        controls: &VehicleControls,
    ) {
        commands
            .entity(vehicle)
            .insert((Vehicle, Drivetrain::new(self.substeps)));
        self.insert_chassis(commands, vehicle);
        let blocks = self.spawn_blocks(commands, vehicle, controls);
        let mut entity = commands.entity(vehicle);
        entity.insert(SpawnedFrom {
            description: self.clone(),
            blocks,
        });
        for module in self.modules.modules() {
            entity.install_module(module);
        }
    }

    /// Brings `vehicle`, spawned from `old`, in line with this description. When the topology
    /// is the same, settings change in place and every block keeps its state; otherwise the
    /// blocks are spawned again. The body's pose and velocity are kept either way.
    pub(crate) fn update(
        &self,
        commands: &mut Commands,
        vehicle: Entity,
        old: &SpawnedFrom,
        controls: &VehicleControls,
    ) {
        self.insert_chassis(commands, vehicle);
        let substeps = self.substeps;
        commands
            .entity(vehicle)
            .queue(move |mut entity: EntityWorldMut| {
                if let Some(mut drivetrain) = entity.get_mut::<Drivetrain>() {
                    drivetrain.substeps = substeps;
                }
            });
        let blocks = if self.topology == old.description.topology {
            for named in &self.blocks {
                let unchanged = old
                    .description
                    .blocks
                    .iter()
                    .any(|b| b.name == named.name && b.block.same_as(named.block.as_ref()));
                if !unchanged && let Some(&entity) = old.blocks.get(&named.name) {
                    named
                        .block
                        .insert_into(&mut commands.entity(entity), controls);
                }
            }
            for (index, axle) in self.axles.iter().enumerate() {
                if old.description.axles.get(index) == Some(axle) {
                    continue;
                }
                let names = &self.topology.axles[index];
                for (side, name) in [(Side::Left, &names.left), (Side::Right, &names.right)] {
                    if let Some(&entity) = old.blocks.get(name) {
                        commands
                            .entity(entity)
                            .insert(wheel_components(axle, index, side));
                    }
                }
            }
            old.blocks.clone()
        } else {
            for &entity in old.blocks.values() {
                commands.entity(entity).despawn();
            }
            self.spawn_blocks(commands, vehicle, controls)
        };
        let mut entity = commands.entity(vehicle);
        entity.insert(SpawnedFrom {
            description: self.clone(),
            blocks,
        });
        if !self.modules.same_as(&old.description.modules) {
            // Back to the built-in modules, then this file's (new, with fresh state).
            let builtin = [
                VehicleModule::brake(BuiltinBrakes::default()),
                VehicleModule::steering(AckermannSteering::default()),
                VehicleModule::Drivetrain(None),
                VehicleModule::suspension(BuiltinSuspension),
            ];
            let bars = old.description.modules.anti_roll_bars.iter();
            let builtin_bars = bars.map(|(axle, _)| VehicleModule::AntiRollBar {
                axle: *axle,
                module: None,
            });
            for module in builtin.into_iter().chain(builtin_bars) {
                entity.install_module(module);
            }
            for module in self.modules.modules() {
                entity.install_module(module);
            }
        }
    }

    fn insert_chassis(&self, commands: &mut Commands, vehicle: Entity) {
        let c = &self.chassis;
        commands.entity(vehicle).insert((
            Name::new(self.name.clone()),
            Collider::compound(vec![(
                Vec3::from(c.body_center),
                Quat::IDENTITY,
                Collider::cuboid(
                    c.body_half_extents[0],
                    c.body_half_extents[1],
                    c.body_half_extents[2],
                ),
            )]),
            ColliderMassProperties::MassProperties(MassProperties {
                local_center_of_mass: Vec3::from(c.center_of_mass),
                mass: c.mass,
                principal_inertia: Vec3::from(c.inertia),
                principal_inertia_local_frame: Quat::IDENTITY,
            }),
            self.brakes.clone(),
            self.steering.clone(),
            AntiRollBars(
                self.axles
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.anti_roll_bar > 0.0)
                    .map(|(i, a)| AntiRollBar {
                        axle: i as u8,
                        stiffness: a.anti_roll_bar,
                    })
                    .collect(),
            ),
            self.aerodynamics,
        ));
        if self.static_preload {
            // Kept through a reload: a coupled trailer's holds the preloads it stands on alone.
            commands
                .entity(vehicle)
                .insert_if_new(StaticPreload::default());
        } else {
            commands.entity(vehicle).remove::<StaticPreload>();
        }
        match self.coupling {
            Some(point) => {
                commands.entity(vehicle).insert(Coupling(Vec3::from(point)));
            }
            None => {
                commands.entity(vehicle).remove::<Coupling>();
            }
        }
        match self.speed_limiter {
            Some(limiter) => {
                commands.entity(vehicle).insert(limiter);
            }
            None => {
                commands.entity(vehicle).remove::<SpeedLimiter>();
            }
        }
    }

    fn spawn_blocks(
        &self,
        commands: &mut Commands,
        vehicle: Entity,
        controls: &VehicleControls,
    ) -> HashMap<String, Entity> {
        let entities: HashMap<String, Entity> = self
            .topology
            .blocks
            .iter()
            .map(|(name, _)| {
                let entity = commands
                    .spawn((Name::new(name.clone()), BlockOf(vehicle)))
                    .id();
                (name.clone(), entity)
            })
            .collect();
        for named in &self.blocks {
            named
                .block
                .insert_into(&mut commands.entity(entities[&named.name]), controls);
        }
        for (index, (axle, names)) in self.axles.iter().zip(&self.topology.axles).enumerate() {
            for (side, name) in [(Side::Left, &names.left), (Side::Right, &names.right)] {
                commands
                    .entity(entities[name])
                    .insert((ChildOf(vehicle), wheel_components(axle, index, side)));
            }
        }
        for connection in &self.topology.connections {
            commands
                .entity(entities[&connection.block])
                .insert(DrivenBy::port(
                    entities[&connection.upstream],
                    Port(connection.port),
                ));
        }
        debug_assert!(
            self.topology
                .blocks
                .iter()
                .filter(|(_, t)| *t == WHEEL_TYPE)
                .count()
                == 2 * self.axles.len()
        );
        entities
    }
}

/// The components of one wheel of `axle` (number `index`, front first) on `side`.
fn wheel_components(axle: &AxleSpec, index: usize, side: Side) -> impl Bundle {
    let x = match side {
        Side::Left => -0.5 * axle.track,
        Side::Right => 0.5 * axle.track,
    };
    let position = Vec3::new(x, axle.height, axle.z);
    let spec = &axle.wheel;
    (
        Transform::from_translation(position),
        Wheel {
            inertia: spec.inertia,
            radius: spec.radius,
            load: WheelLoad::Tire(spec.tire.clone()),
            brake_torque: 0.0,
        },
        WheelMount {
            position,
            axle: index as u8,
            side,
            steered: axle.steered,
            width: spec.width,
        },
        spec.suspension.clone(),
        spec.probe,
    )
}
