//! A vehicle body's mass properties as Rapier builds them from its colliders.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::geometry::ColliderMassProps;
use bevy_rapier3d::rapier::math::Pose;

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
            *read.get()
        } else {
            self.sum_of_colliders(body)
        }
    }

    /// The mass properties Rapier builds for `body` from its colliders as they are now.
    pub(crate) fn sum_of_colliders(&self, body: Entity) -> MassProperties {
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
