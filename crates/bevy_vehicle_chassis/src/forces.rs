//! Summing the tire, suspension and aerodynamic forces into the chassis body's one force
//! component, and handing their reactions to the ground.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::prefetch::{self, pipelined};
use bevy_vehicle_drivetrain::prelude::*;

use crate::body_mass::BodyMass;
use crate::components::{AddedForce, Aerodynamics, WheelState};
use crate::contact::turned_on_ground;
use crate::modules::systems::ModuleScratch;
use crate::vehicle::Vehicle;

/// Writes each vehicle's [`ExternalForce`]: every grounded wheel's normal load and tire force
/// (its force over the drivetrain's last step, [`WheelSensors::force`]; none while the
/// drivetrain is not running) at its contact point with its aligning moment, aerodynamic drag
/// at the centre of mass and lift at the centre of pressure ([`Aerodynamics`]), and a game's
/// own [`AddedForce`]. A tire's force goes in the heading its
/// wheel has halfway through the coming step (turned about the contact normal by the body's
/// turn rate over half a step), since Rapier holds it fixed in the world for the whole step.
/// Dynamic bodies under the wheels receive the opposite impulse, scaled down on a body too light
/// to take it in one step (see `reaction_scale`), added to whatever else the body takes that
/// step: every other tire's reaction (another vehicle's body carries all four of a car on its
/// roof) and a game's own push.
pub(crate) fn apply_forces(
    time: Res<Time>,
    rapier: ReadRapierContext,
    mut vehicles: Query<
        (
            Entity,
            &Transform,
            &Velocity,
            &ReadMassProperties,
            &Drivetrain,
            &ModuleScratch,
            Option<&Aerodynamics>,
            Option<&AddedForce>,
            &mut ExternalForce,
        ),
        (With<Vehicle>, With<crate::validation::ChassisReady>),
    >,
    wheels: Query<(&WheelSensors, &mut WheelState)>,
    grounds: Query<&mut ExternalImpulse>,
    mut unheld: Local<Vec<(Entity, ExternalImpulse)>>,
    mut commands: Commands,
    body_mass: BodyMass,
) -> Result {
    let dt = time.delta_secs();
    let ctx = rapier.single()?;
    // Each vehicle's wheel list starts loading two vehicles ahead, its wheels one ahead
    // (see `step_vehicles`).
    pipelined(
        vehicles.iter_mut(),
        &mut (wheels, grounds, &mut *unheld),
        |_, (.., drivetrain, scratch, _, _, _)| {
            prefetch::value(drivetrain.status());
            prefetch::value(&scratch.inputs.wheels);
        },
        |(wheels, ..), (.., scratch, _, _, _)| {
            for wheel in &scratch.inputs.wheels {
                if let Ok((sensors, state)) = wheels.get(wheel.entity) {
                    prefetch::value(sensors);
                    prefetch::value(state);
                }
            }
        },
        |(wheels, grounds, unheld),
         (vehicle, transform, velocity, mass, drivetrain, scratch, aero, added, mut force)| {
            // A drivetrain that is not running (refused, or not compiled yet) has no tire forces
            // to give: the tires carry the load and nothing else.
            let tires = *drivetrain.status() == DrivetrainStatus::Ready;
            let com = transform.transform_point(body_mass.of(vehicle, mass).local_center_of_mass);
            let mut total = ExternalForce::default();
            for wheel in &scratch.inputs.wheels {
                let Ok((sensors, mut state)) = wheels.get_mut(wheel.entity) else {
                    continue;
                };
                state.slip_ratio = sensors.slip_ratio;
                state.slip_angle = sensors.slip_angle;
                if !state.grounded {
                    state.force = Vec3::ZERO;
                    continue;
                }
                let mut f = state.normal * state.load as f32;
                if tires {
                    // The tire's force turns with the wheel's heading through the step, while
                    // Rapier holds a force fixed in the world for the whole step: handed over in
                    // the heading the wheel has halfway through, its mean over the step is right to
                    // second order in the step (at the heading of the step's start, a car turning
                    // at ω gets `F·ω·dt/2` along its path from its own side force: a push forward
                    // that gave a car in a slalom at 15 Hz 5 % more acceleration than at 120 Hz).
                    let heading =
                        turned_on_ground(state.heading, state.normal, velocity.angular, 0.5 * dt);
                    let left = state.normal.cross(heading);
                    f += heading * sensors.force[0] as f32 + left * sensors.force[1] as f32;
                }
                if !f.is_finite() {
                    state.force = Vec3::ZERO;
                    continue;
                }
                state.force = f;
                total += ExternalForce::at_point(f, state.contact_point, com);
                // The tire's aligning moment, a couple about the contact normal.
                let mut aligning = state.normal * sensors.aligning_torque as f32;
                if !(tires && aligning.is_finite()) {
                    aligning = Vec3::ZERO;
                }
                total.torque += aligning;

                // The ground pushes the tire; the tire pushes a movable ground back.
                let Some((ground, rb)) = state.ground_body.and_then(|body| {
                    let handle = ctx.rigidbody_set.entity2body().get(&body)?;
                    Some((body, ctx.rigidbody_set.bodies.get(*handle)?))
                }) else {
                    continue;
                };
                // The tire's surface at the contact, against the ground's: the slip that drives
                // the tire's force along the ground, and the closing speed that drives the
                // suspension's damper. The push along the normal and the friction along the
                // ground are bounded apart: a plate pressed onto the floor must not use up the
                // friction's share of the bound.
                let slip = velocity.linear_velocity_at_point(state.contact_point, com)
                    - state.heading * sensors.surface_speed as f32
                    - rb.velocity_at_point(state.contact_point);
                let normal = state.normal * f.dot(state.normal);
                let lever = state.contact_point - rb.center_of_mass();
                let props = rb.mass_properties();
                let mut impulse = ExternalImpulse::default();
                for (part, couple, slip) in [
                    (normal, Vec3::ZERO, state.normal * slip.dot(state.normal)),
                    (
                        f - normal,
                        aligning,
                        slip - state.normal * slip.dot(state.normal),
                    ),
                ] {
                    let mut part = ExternalImpulse::at_point(
                        -part * dt,
                        state.contact_point,
                        rb.center_of_mass(),
                    );
                    part.torque_impulse -= couple * dt;
                    let own = (f64::from(part.impulse.length()) / state.body_mass) as f32;
                    let scale = reaction_scale(
                        &part,
                        lever,
                        props.effective_inv_mass,
                        |torque| props.effective_world_inv_inertia * torque,
                        slip.length() + own,
                    );
                    impulse.impulse += part.impulse * scale;
                    impulse.torque_impulse += part.torque_impulse * scale;
                }
                // Every tire's reaction adds to what the body takes this step, a vehicle's
                // body included. A body without the component yet gets the sum of all its
                // tires' reactions in one insert, below: an insert per tire kept only the last
                // (vehicles were left out of the query, so a car on another car's roof pushed
                // it back with one tire of four, and a pile of cars gained energy).
                match grounds.get_mut(ground) {
                    Ok(mut i) => *i += impulse,
                    Err(_) => match unheld.iter_mut().find(|(body, _)| *body == ground) {
                        Some((_, i)) => *i += impulse,
                        None => unheld.push((ground, impulse)),
                    },
                }
            }
            if let Some(aero) = aero {
                let v = velocity.linear;
                let drag = -0.5 * (aero.air_density * aero.drag_area) as f32 * v.length() * v;
                if drag.is_finite() {
                    total.force += drag;
                }
                if aero.lift_area != 0.0 {
                    let forward = f64::from(v.dot(transform.rotation * Vec3::NEG_Z));
                    let lift = transform.rotation * Vec3::Y * aero.lift(forward) as f32;
                    let at = aero
                        .center_of_pressure
                        .map_or(com, |p| transform.transform_point(Vec3::from(p)));
                    let part = ExternalForce::at_point(lift, at, com);
                    if part.force.is_finite() && part.torque.is_finite() {
                        total += part;
                    }
                }
            }
            // The airborne wheels' spin reaction; not on the vehicle's first step, whose body
            // Rapier takes in only at its step and whose wheels may not have found the ground
            // yet (`first_step`).
            if tires && ctx.rigidbody_set.entity2body().contains_key(&vehicle) {
                total.torque += scratch.inputs.spin_reaction;
            }
            if let Some(added) = added
                && added.force.is_finite()
                && added.torque.is_finite()
            {
                total.force += added.force;
                total.torque += added.torque;
            }
            *force = total;
        },
    );
    for (ground, impulse) in unheld.drain(..) {
        commands.entity(ground).try_insert(impulse);
    }
    Ok(())
}

/// How much of a part of a tire's reaction impulse a dynamic ground body takes
/// (dimensionless, (0, 1]).
///
/// The chassis moves the body once per fixed step with the tire's force held over the whole
/// step, an explicit step that is stable only while the ground under the tire is about as heavy
/// as the part of the chassis the tire moves (`docs/contact_coupling.md`: a tire coupled to more
/// mass than it really moves is stable, to less is not). On a light body (a 0.5 kg plate under
/// a 1300 kg car) the whole reaction changed the body's velocity at the contact by hundreds of
/// m/s in one step, far past the slip that produced it, and the tire's force then swung back
/// harder each step: the plate left at up to 400 m/s. Friction can at most bring the ground's
/// contact to the tire's surface speed, and a push moves the ground no faster than it moves the
/// tire's own share of the body, so the part is scaled down to change the ground's velocity at
/// the contact by at most `limit` (m/s): the slip between the tire's surface and the ground
/// along the part, plus the velocity the same impulse gives the tire's share of the body. A
/// ground body at least as heavy at the contact as the tire's share of the body takes the
/// whole reaction (momentum is conserved); a lighter one takes what it can carry, the rest
/// going to whatever holds it (the floor under a plate; a light body floating free loses it).
///
/// `lever` is the contact point from the body's centre of mass (world, m), `inverse_mass` its
/// inverse mass per world axis (1/kg, 0 on a locked axis) and `inverse_inertia` its world-space
/// inverse inertia tensor applied to a torque impulse (rad/s per N·m·s).
fn reaction_scale(
    impulse: &ExternalImpulse,
    lever: Vec3,
    inverse_mass: Vec3,
    inverse_inertia: impl Fn(Vec3) -> Vec3,
    limit: f32,
) -> f32 {
    let change =
        inverse_mass * impulse.impulse + inverse_inertia(impulse.torque_impulse).cross(lever);
    let change = change.length();
    if change > limit && change.is_finite() && limit.is_finite() {
        (limit / change).max(0.0)
    } else {
        1.0
    }
}
