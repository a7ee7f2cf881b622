//! A vehicle body's mass properties as Rapier builds them from its colliders.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::dynamics::MassProperties as RapierMassProperties;
use bevy_rapier3d::rapier::geometry::ColliderMassProps;
use bevy_rapier3d::rapier::math::Pose;

use crate::validation::Resuming;

/// A vehicle body's mass properties (in its local frame): Rapier's ([`ReadMassProperties`])
/// once the body has joined Rapier; on the step in which it joins (or in which a vehicle taken
/// out of the simulation is put back), computed from its colliders
/// the way Rapier will (its own collider and those of its children that are not bodies of
/// their own, each with its [`ColliderMassProperties`], Rapier's density of 1 kg/m³ if it has
/// none, and the body's [`AdditionalMassProperties`]).
#[derive(SystemParam)]
pub(crate) struct BodyMass<'w, 's> {
    joined: Query<'w, 's, (), (With<RapierRigidBodyHandle>, Without<Resuming>)>,
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
            *read.get()
        } else {
            self.sum_of_colliders(body)
        }
    }

    /// The mass properties Rapier builds for `body` from its colliders as they are now.
    pub(crate) fn sum_of_colliders(&self, body: Entity) -> MassProperties {
        // Each collider's mass properties in the body's frame, as set and at unit density.
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
            let shape = &*collider.raw;
            Some([
                props.mass_properties(shape).transform_by(&pose),
                shape.mass_properties(1.0).transform_by(&pose),
            ])
        };
        let own = collider(body, Some(Pose::IDENTITY));
        let children = self
            .children
            .get(body)
            .into_iter()
            .flatten()
            .filter(|child| !self.bodies.contains(**child))
            .filter_map(|child| collider(*child, None));
        let [mut total, unit] = own
            .into_iter()
            .chain(children)
            .fold([RapierMassProperties::default(); 2], |[t, u], [a, b]| {
                [t + a, u + b]
            });
        match self.additional.get(body) {
            Ok(AdditionalMassProperties::MassProperties(p)) => total += p.into_rapier(),
            Ok(AdditionalMassProperties::Mass(m)) if total.mass() > 0.0 => {
                total.set_mass(total.mass() + m, true);
            }
            // Colliders without mass: Rapier spreads the additional mass as their shapes are.
            Ok(AdditionalMassProperties::Mass(m)) => {
                let mut spread = unit;
                spread.set_mass(*m, unit.mass() > 0.0);
                total += spread;
            }
            Err(_) => {}
        }
        MassProperties::from_rapier(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::platform::collections::HashMap;
    use bevy::time::TimeUpdateStrategy;

    /// What [`BodyMass`] gives for each body before Rapier has it, recorded in the step in
    /// which it joins.
    #[derive(Resource, Default)]
    struct Before(HashMap<Entity, MassProperties>);

    fn record(
        bodies: Query<(Entity, &ReadMassProperties), With<RigidBody>>,
        mass: BodyMass,
        mut before: ResMut<Before>,
    ) {
        for (body, read) in &bodies {
            before.0.entry(body).or_insert_with(|| mass.of(body, read));
        }
    }

    /// A body weighs, on the step in which it joins Rapier, what Rapier reads once it has it
    /// (to 1e-5 relative, f32): a box of density 200 kg/m³ with a child ball of 30 kg 0.8 m to
    /// its side and up, turned, and 50 kg of additional mass (1680 kg); and a box of no mass
    /// with 1300 kg of additional mass, which Rapier spreads as the box is.
    #[test]
    fn a_new_body_weighs_what_rapier_reads_once_it_has_it() {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, crate::RapierSetupPlugin))
            .insert_resource(Time::<Fixed>::from_hz(60.0))
            .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
            .init_resource::<Before>()
            .add_systems(FixedUpdate, record.before(PhysicsSet::SyncBackend));
        app.update();
        let world = app.world_mut();
        let with_child = world
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
            ))
            .id();
        let spread = world
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(0.9, 0.4, 2.2),
                ColliderMassProperties::Density(0.0),
                AdditionalMassProperties::Mass(1300.0),
                ReadMassProperties::default(),
                Transform::from_xyz(-3.0, 2.0, 1.0),
            ))
            .id();
        app.update();
        app.update();
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
        let inertia = |p: &MassProperties| {
            let frame = Mat3::from_quat(p.principal_inertia_local_frame);
            frame * Mat3::from_diagonal(p.principal_inertia) * frame.transpose()
        };
        for (body, mass) in [(with_child, 8.0 * 200.0 + 30.0 + 50.0), (spread, 1300.0)] {
            let before = app.world().resource::<Before>().0[&body];
            let read = *app
                .world()
                .get::<ReadMassProperties>(body)
                .expect("read")
                .get();
            assert!(close(read.mass, mass), "{read:?}");
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
            let (a, b) = (inertia(&before), inertia(&read));
            assert!(b.x_axis.x > 0.0, "{read:?}");
            for (x, y) in a.to_cols_array().iter().zip(b.to_cols_array()) {
                assert!(close(*x, y), "{before:?} vs {read:?}");
            }
        }
    }
}
