//! A vehicle's first fixed step: the step in which its body, and perhaps the ground under it,
//! join Rapier.
//!
//! The wheels probe the ground and the forces are summed before Rapier's step, and Rapier
//! takes a new body and new colliders in only at its step. So on a vehicle's first step:
//!
//! * Rapier has not read the body's mass yet ([`ReadMassProperties`] is zero):
//!   [`BodyMass`](crate::body_mass::BodyMass) computes it from the body's colliders the way
//!   Rapier will.
//! * A ground spawned in the same frame is not in Rapier's query structures, so the wheels
//!   cannot find it, and the car would fall freely for that step, landing on its tires with
//!   the speed of one step's fall (0.33 m/s at 30 Hz) and sliding down a slope by as much. A
//!   new vehicle that finds no ground while some other collider is new too is therefore held
//!   against gravity for its first step ([`hold_vehicles_over_new_ground`]): it probes the
//!   ground from its second step, as it would have from its first on ground that was there
//!   before it.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
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
