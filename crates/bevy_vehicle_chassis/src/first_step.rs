//! A vehicle's first fixed step: the step in which its body, and perhaps the ground under it,
//! join Rapier.
//!
//! The wheels probe the ground and the forces are summed before Rapier's step, and Rapier
//! takes a new body and new colliders in only at its step. So on a vehicle's first step:
//!
//! * Rapier has not read the body's mass yet ([`ReadMassProperties`] is zero):
//!   [`BodyMass`] computes it from the body's colliders the way Rapier will.
//! * A ground spawned in the same frame is not in Rapier's query structures, so the wheels
//!   cannot find it, and the car would fall freely for that step, landing on its tires with
//!   the speed of one step's fall (0.33 m/s at 30 Hz) and sliding down a slope by as much. A
//!   new vehicle that finds no ground while some other collider is new too is therefore held
//!   against gravity for its first step ([`hold_vehicles_over_new_ground`]): it probes the
//!   ground from its second step, as it would have from its first on ground that was there
//!   before it.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::geometry::ColliderMassProps;
use bevy_rapier3d::rapier::math::Pose;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::WheelState;
use crate::validation::ChassisReady;
use crate::vehicle::Vehicle;

/// On a vehicle held against gravity for its first step: the gravity scale to give it back
/// (`None`: it had none, which Rapier reads as 1).
#[derive(Component, Clone, Copy, Debug)]
pub(crate) struct HeldOnFirstStep(Option<GravityScale>);

/// Gives vehicles held in the last step their gravity back, then holds the vehicles whose body
/// joins Rapier in this step (it has no rigid-body handle yet) when none of their wheels found
/// ground and another collider joins with them (one that belongs to no vehicle: the ground,
/// perhaps). A vehicle that finds no ground under it on ground that was already there is not
/// held: it is in the air.
pub(crate) fn hold_vehicles_over_new_ground(
    mut commands: Commands,
    held: Query<(Entity, &HeldOnFirstStep)>,
    new_vehicles: Query<
        (Entity, &Blocks, Option<&GravityScale>),
        (
            With<Vehicle>,
            With<ChassisReady>,
            Without<RapierRigidBodyHandle>,
        ),
    >,
    wheels: Query<&WheelState>,
    new_colliders: Query<
        (Entity, Option<&ChildOf>),
        (With<Collider>, Without<RapierColliderHandle>),
    >,
    vehicles: Query<(), With<Vehicle>>,
) {
    for (vehicle, held) in &held {
        commands
            .entity(vehicle)
            .try_insert(held.0.unwrap_or(GravityScale(1.0)))
            .try_remove::<HeldOnFirstStep>();
    }
    if new_vehicles.is_empty() {
        return;
    }
    let part_of_a_vehicle = |(collider, parent): (Entity, Option<&ChildOf>)| {
        vehicles.contains(collider) || parent.is_some_and(|p| vehicles.contains(p.parent()))
    };
    if new_colliders.iter().all(part_of_a_vehicle) {
        return;
    }
    for (vehicle, blocks, gravity_scale) in &new_vehicles {
        let grounded = blocks
            .iter()
            .any(|b| wheels.get(b).is_ok_and(|w| w.grounded));
        if !grounded {
            commands
                .entity(vehicle)
                .insert((GravityScale(0.0), HeldOnFirstStep(gravity_scale.copied())));
        }
    }
}

/// A vehicle body's mass properties (in its local frame): Rapier's ([`ReadMassProperties`])
/// once the body has joined Rapier; on the step in which it joins, computed from its colliders
/// the way Rapier will (its own collider and those of its children that are not bodies of
/// their own, each with its [`ColliderMassProperties`], Rapier's density of 1 kg/m³ if it has
/// none, and the body's [`AdditionalMassProperties`]).
#[derive(SystemParam)]
pub(crate) struct BodyMass<'w, 's> {
    joined: Query<'w, 's, (), With<RapierRigidBodyHandle>>,
    colliders: Query<
        'w,
        's,
        (
            &'static Collider,
            Option<&'static ColliderMassProperties>,
            &'static Transform,
        ),
        Without<ColliderDisabled>,
    >,
    children: Query<'w, 's, &'static Children>,
    bodies: Query<'w, 's, (), With<RigidBody>>,
    additional: Query<'w, 's, &'static AdditionalMassProperties>,
}

impl BodyMass<'_, '_> {
    /// The mass properties of `body`, whose [`ReadMassProperties`] are `read`.
    pub(crate) fn of(&self, body: Entity, read: &ReadMassProperties) -> MassProperties {
        if self.joined.contains(body) {
            return *read.get();
        }
        let collider = |entity: Entity, pose: Option<Pose>| {
            let (collider, props, transform) = self.colliders.get(entity).ok()?;
            let props = match props {
                None => ColliderMassProps::Density(1.0),
                Some(ColliderMassProperties::Density(d)) => ColliderMassProps::Density(*d),
                Some(ColliderMassProperties::Mass(m)) => ColliderMassProps::Mass(*m),
                Some(ColliderMassProperties::MassProperties(p)) => {
                    ColliderMassProps::MassProperties(Box::new(p.into_rapier()))
                }
            };
            let pose =
                pose.unwrap_or_else(|| Pose::from_parts(transform.translation, transform.rotation));
            Some(props.mass_properties(&*collider.raw).transform_by(&pose))
        };
        let mut total = collider(body, Some(Pose::IDENTITY)).unwrap_or_default();
        for child in self.children.get(body).into_iter().flatten() {
            if !self.bodies.contains(*child) {
                total += collider(*child, None).unwrap_or_default();
            }
        }
        match self.additional.get(body) {
            Ok(AdditionalMassProperties::MassProperties(p)) => total += p.into_rapier(),
            Ok(AdditionalMassProperties::Mass(m)) if total.mass() > 0.0 => {
                total.set_mass(total.mass() + m, true);
            }
            Ok(AdditionalMassProperties::Mass(m)) => total.set_mass(*m, false),
            Err(_) => {}
        }
        MassProperties::from_rapier(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::time::TimeUpdateStrategy;

    /// What [`BodyMass`] gives for a body before Rapier has it, recorded in the step in which
    /// it joins.
    #[derive(Resource, Default)]
    struct Before(Option<MassProperties>);

    fn record(
        bodies: Query<(Entity, &ReadMassProperties), With<RigidBody>>,
        mass: BodyMass,
        mut before: ResMut<Before>,
    ) {
        for (body, read) in &bodies {
            before.0.get_or_insert(mass.of(body, read));
        }
    }

    /// A body weighs, on the step in which it joins Rapier, what Rapier reads once it has it
    /// (to 1e-5 relative, f32): a box of density 200 kg/m³, a child ball of 30 kg 0.8 m to its
    /// side and up, turned, and 50 kg of additional mass.
    #[test]
    fn a_new_body_weighs_what_rapier_reads_once_it_has_it() {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, crate::RapierSetupPlugin))
            .insert_resource(Time::<Fixed>::from_hz(60.0))
            .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
            .init_resource::<Before>()
            .add_systems(FixedUpdate, record.before(PhysicsSet::SyncBackend));
        app.update();
        app.world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 0.5, 2.0),
                ColliderMassProperties::Density(200.0),
                AdditionalMassProperties::Mass(50.0),
                ReadMassProperties::default(),
                Transform::from_xyz(3.0, 2.0, 1.0),
            ))
            .with_child((
                Collider::ball(0.3),
                ColliderMassProperties::Mass(30.0),
                Transform::from_xyz(0.8, 0.4, 0.0).with_rotation(Quat::from_rotation_z(0.5)),
            ));
        app.update();
        app.update();
        let before = app.world().resource::<Before>().0.expect("recorded");
        let mut bodies = app
            .world_mut()
            .query_filtered::<&ReadMassProperties, With<RigidBody>>();
        let read = *bodies.single(app.world()).expect("one body").get();
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
        assert!(close(read.mass, 8.0 * 200.0 + 30.0 + 50.0), "{read:?}");
        assert!(close(before.mass, read.mass), "{before:?} vs {read:?}");
        for axis in 0..3 {
            assert!(
                close(
                    before.local_center_of_mass[axis],
                    read.local_center_of_mass[axis]
                ),
                "{before:?} vs {read:?}"
            );
        }
        let inertia = |p: &MassProperties| {
            let frame = Mat3::from_quat(p.principal_inertia_local_frame);
            frame * Mat3::from_diagonal(p.principal_inertia) * frame.transpose()
        };
        let (a, b) = (inertia(&before), inertia(&read));
        for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array()) {
            assert!(close(*x, y), "{before:?} vs {read:?}");
        }
    }
}
