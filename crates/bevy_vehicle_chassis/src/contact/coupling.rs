//! How much a tire's or a suspension's force moves what it pushes within a fixed step: the
//! vehicle's body (its mass per wheel in the stiffest mode, how a side force at one contact
//! moves the others) and a movable ground body under the wheel (its give), and the heading
//! lead by which Rapier's body runs ahead of its own turn. The tires and suspension are
//! solved against these (see `docs/contact_coupling.md`).

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::prelude::RigidBodyHandle;

use smallvec::SmallVec;

use super::ProbedWheels;
use super::tire_cast::Hit;
use crate::modules::systems::ModuleInputs;

/// How far ahead (s) Rapier's body runs in its heading and position, over a fixed step of
/// `dt` (s) moved in `substeps` (its substeps times its solver's iterations, each of which
/// moves the body): `dt/(2n)`.
///
/// Rapier moves the body by each substep's end velocity, so over a step with its velocity
/// changing by `Δv` it moves `Δv·dt/(2n)` further than the velocity's own course; step by
/// step the body's heading runs `ω·dt/(2n)` ahead of the turn its angular velocity `ω`
/// describes (its velocities themselves stay right). A tire measured against the heading
/// Rapier shows reads a slip angle of that much more, which at 15 Hz made a step steer's turn
/// lead by about an eighth of a step; the probe measures the tires' slips in the heading
/// turned back by it.
pub fn rapier_heading_lead(dt: f32, substeps: usize) -> f32 {
    dt / (2.0 * substeps.max(1) as f32)
}

/// `heading` (a unit vector in the ground's plane) turned about the ground's `normal` as far
/// as a body turning at `angular` (rad/s, world frame) turns about it in `seconds` (s; less
/// than 0 turns it back).
pub(crate) fn turned_on_ground(heading: Vec3, normal: Vec3, angular: Vec3, seconds: f32) -> Vec3 {
    Quat::from_axis_angle(normal, seconds * angular.dot(normal)) * heading
}

/// How a dynamic ground body gives way under a tire: its inverse mass and inertia about its
/// centre of mass, as Rapier holds them (locked axes at zero).
///
/// A tire pushes the vehicle and the ground body apart, so its slip changes by the sum of
/// how fast the force moves the body's contact and how fast it moves the ground's point:
/// on a free slab lighter than the car, far faster than on the car alone. A tire coupled to
/// more mass than it really moves rings the pair unstably at low fixed-step rates
/// (`docs/contact_coupling.md`): a braked car set down on a free 800 kg slab rocked over it
/// at 1.57 m/s at 15 Hz before the ground's give was counted.
///
/// Only a free body gives so. One its support holds ([`GroundGive::held`]) is taken not to
/// give at all (its inverses zero), as another vehicle is (its tires hold it): taken for
/// free, a 5 kg mat on a floor of μ 0.9 let a braked car slide over it at 1.2–2.2 m/s at
/// 15–60 Hz, and a hinged plank under a parked car swung up 46 % over twelve swings at 15 Hz
/// (6 % held).
#[derive(Clone, Copy, Debug)]
pub(super) struct GroundGive {
    /// The ground body's entity.
    pub(super) body: Entity,
    /// Inverse mass per world axis (1/kg; 0 on a locked axis).
    inverse_mass: Vec3,
    /// Centre of mass (world, m).
    center: Vec3,
    /// Inverse inertia tensor (world frame, 1/(kg·m²); 0 about locked axes).
    inverse_inertia: Mat3,
}

impl GroundGive {
    /// The give of the dynamic body `rb` (entity `body`); none if `held`.
    pub(super) fn of(
        body: Entity,
        rb: &bevy_rapier3d::rapier::dynamics::RigidBody,
        held: bool,
    ) -> Self {
        let props = rb.mass_properties();
        let i = props.effective_world_inv_inertia;
        let (inverse_mass, inverse_inertia) = if held {
            (Vec3::ZERO, Mat3::ZERO)
        } else {
            (
                props.effective_inv_mass,
                Mat3::from_cols(
                    Vec3::new(i.m11, i.m12, i.m13),
                    Vec3::new(i.m12, i.m22, i.m23),
                    Vec3::new(i.m13, i.m23, i.m33),
                ),
            )
        };
        GroundGive {
            body,
            inverse_mass,
            center: rb.center_of_mass(),
            inverse_inertia,
        }
    }

    /// Whether the body gives nothing under a tire's push (its support holds it, see
    /// [`GroundGive::held`]): the tire pushes on it as on fixed ground.
    pub(super) fn holds_still(&self) -> bool {
        self.inverse_mass == Vec3::ZERO && self.inverse_inertia == Mat3::ZERO
    }

    /// Whether the dynamic body `rb` (`handle`) is held by more than its inertia: by a joint,
    /// or by friction where it touches anything but the vehicle (`vehicle`) on it. Friction
    /// holds a body under a tire until the tire's push overcomes it, so the small pushes of a
    /// car at rest on it do not move it as they would a free body; only a body whose every
    /// contact is frictionless (a slab on ice, or on nothing) gives as a free body does.
    pub(super) fn held(
        ctx: &RapierContext,
        handle: RigidBodyHandle,
        rb: &bevy_rapier3d::rapier::dynamics::RigidBody,
        vehicle: Option<RigidBodyHandle>,
    ) -> bool {
        let joints = &ctx.joints;
        if joints
            .impulse_joints
            .attached_enabled_joints(handle)
            .next()
            .is_some()
            || joints
                .multibody_joints
                .attached_joints(handle)
                .next()
                .is_some()
        {
            return true;
        }
        let colliders = &ctx.colliders.colliders;
        let other_body = |pair: &bevy_rapier3d::rapier::geometry::ContactPair, own| {
            let other = if pair.collider1 == own {
                pair.collider2
            } else {
                pair.collider1
            };
            colliders.get(other).and_then(|c| c.parent())
        };
        rb.colliders().iter().any(|&own| {
            ctx.simulation
                .narrow_phase
                .contact_pairs_with(own)
                .filter(|pair| vehicle.is_none() || other_body(pair, own) != vehicle)
                .any(|pair| {
                    pair.solver_manifolds()
                        .iter()
                        .any(|m| !m.data.solver_contacts.is_empty() && m.data.friction > 0.0)
                })
        })
    }

    /// The velocity of the ground's point `at` along `axis` (world, unit) per newton-second
    /// along `along` (world, unit) at `from` (m/s per N·s, 1/kg):
    /// `a·M⁻¹·b + (r_a × a)·I⁻¹·(r_b × b)`, with `M⁻¹` the inverse mass per axis.
    fn mobility(&self, at: Vec3, axis: Vec3, from: Vec3, along: Vec3) -> f32 {
        let turn_at = (at - self.center).cross(axis);
        let turn_from = (from - self.center).cross(along);
        axis.dot(self.inverse_mass * along) + turn_at.dot(self.inverse_inertia * turn_from)
    }
}

/// A vehicle body's mass, centre of mass and inverse inertia tensor in the world frame this
/// step, for [`BodyInertia::mass_fraction`].
pub(super) struct BodyInertia {
    /// Mass (kg).
    pub(super) mass: f32,
    /// Centre of mass (world, m).
    pub(super) center: Vec3,
    /// Inverse inertia tensor (world frame, 1/(kg·m²)); zero about axes with no inertia
    /// (rotation locked).
    inverse_inertia: Mat3,
}

impl BodyInertia {
    pub(super) fn new(mass: &MassProperties, transform: &Transform) -> Self {
        let frame = Mat3::from_quat(transform.rotation * mass.principal_inertia_local_frame);
        let inverse = mass.principal_inertia.map(|i| {
            if i > 0.0 && i.is_finite() {
                1.0 / i
            } else {
                0.0
            }
        });
        BodyInertia {
            mass: mass.mass,
            center: transform.transform_point(mass.local_center_of_mass),
            inverse_inertia: frame * Mat3::from_diagonal(inverse) * frame.transpose(),
        }
    }

    /// How much of its share of the body's mass a force along `axis` (world, unit, along the
    /// ground) at `hit` moves: `1/(1 + m·h²·a·I⁻¹·a)`, with `h` the height of the centre of
    /// mass above the contact plane and `a = n × axis` the axis the force turns the body about
    /// (see [`WheelContact::body_mass_fraction`](bevy_vehicle_drivetrain::blocks::WheelContact::body_mass_fraction)).
    ///
    /// The lever is the height alone: the wheels of a vehicle push the same way in the modes
    /// that matter (a car rocking on its held tires, the body swaying on its tires' lateral
    /// springs), and their moments from their fore-and-aft and side positions cancel between
    /// them, while those from the height add up. 1 for a body whose rotations are locked.
    ///
    /// On a free dynamic ground body (`ground`; a held one gives nothing, see
    /// [`GroundGive::held`]) the fraction also takes the ground's give: a tire's
    /// force moves its slip by `1/(f·m) + g` per newton-second (`g` the ground's mobility at the
    /// contact along `axis`, [`GroundGive::mobility`]), so it moves the share `f/(1 + m·f·g)`
    /// of its mass. As the load shares do for the body, this takes the vehicle's tires as
    /// pushing together in proportion to their loads; a vehicle with only some tires on the
    /// body takes it for lighter than it is (the stable side), but other vehicles' tires on
    /// the same body are not counted.
    pub(super) fn mass_fraction(&self, hit: &Hit, axis: Vec3, ground: Option<&GroundGive>) -> f64 {
        let height = (self.center - hit.point).dot(hit.normal);
        let turn = hit.normal.cross(axis);
        let mobility = self.mass * height * height * turn.dot(self.inverse_inertia * turn);
        let give = ground.map_or(0.0, |g| {
            f64::from(self.mass) * f64::from(g.mobility(hit.point, axis, hit.point, axis))
        });
        let fraction = 1.0 / (1.0 + f64::from(mobility) + give);
        if fraction.is_finite() && fraction > 0.0 {
            fraction.min(1.0)
        } else {
            1.0
        }
    }

    /// Adds to each grounded contact's lateral acceleration (tire frame) what the change in the
    /// wheels' normal loads since the last step does to the body over the coming one: the
    /// measured acceleration holds the last step's loads, and a wheel integrates its contact
    /// within the step at that acceleration. (A body rocking on stiff springs changes its
    /// loads a great deal from one step to the next; its tires, which answer the body within
    /// the step, would otherwise push against an acceleration it no longer has.)
    pub(super) fn carry_load_change(
        &self,
        inputs: &ModuleInputs,
        last_loads: &[f64],
        wheels: &mut ProbedWheels,
    ) {
        if self.mass <= 0.0 || last_loads.len() != inputs.wheels.len() {
            return;
        }
        let (mut force, mut moment) = (Vec3::ZERO, Vec3::ZERO);
        for (wheel, &last) in inputs.wheels.iter().zip(last_loads) {
            let Some((.., state)) = wheels.wheel(wheel.entity) else {
                continue;
            };
            if !state.grounded {
                continue;
            }
            let change = state.normal * (state.load - last) as f32;
            force += change;
            moment += (state.contact_point - self.center).cross(change);
        }
        let linear = force / self.mass;
        let angular = self.inverse_inertia * moment;
        if !(linear.is_finite() && angular.is_finite()) {
            return;
        }
        for wheel in &inputs.wheels {
            let Some((.., state)) = wheels.wheel_mut(wheel.entity) else {
                continue;
            };
            if !state.grounded {
                continue;
            }
            let at = linear + angular.cross(state.contact_point - self.center);
            let left = state.normal.cross(state.heading);
            state.acceleration[1] += f64::from(at.dot(left));
        }
    }

    /// How the body moves each tire's contact sideways in answer to lateral forces at all of
    /// them, into `inputs.lateral_mobility` (row-major, wheel order, m/(N·s)): entry `(i, j)`
    /// is the velocity to the left of contact `i` per newton-second to the left at contact `j`,
    /// `lᵢ·lⱼ/m + uᵢ·I⁻¹·uⱼ` with `l` the tire's left axis, `u = (p − c) × l` its moment arm
    /// about the centre of mass `c`, `m` the body's mass and `I` its inertia tensor. Zero rows
    /// and columns for wheels that carry no share of the body (in the air). Two contacts on
    /// the same dynamic ground body (`gives`, by wheel index) add how the ground moves under
    /// one in answer to the other ([`GroundGive::mobility`]): the tires push the body and the
    /// ground apart, and their slips change by both.
    pub(super) fn lateral_mobility(
        &self,
        inputs: &mut ModuleInputs,
        wheels: &ProbedWheels,
        gives: &[(usize, GroundGive)],
    ) {
        let count = inputs.wheels.len();
        // Room for a tracked vehicle's road wheels on the stack: this runs every step.
        let mut axes: SmallVec<[Option<(Vec3, Vec3, Vec3)>; 16]> = SmallVec::new();
        for wheel in &inputs.wheels {
            let axis = wheels.wheel(wheel.entity).and_then(|(.., state)| {
                (state.body_mass > 0.0 && self.mass > 0.0).then(|| {
                    let left = state.normal.cross(state.heading);
                    let point = state.contact_point;
                    (left, (point - self.center).cross(left), point)
                })
            });
            axes.push(axis);
        }
        let mobility = &mut inputs.lateral_mobility;
        mobility.clear();
        mobility.resize(count * count, 0.0);
        let give = |i: usize| gives.iter().find(|(w, _)| *w == i).map(|(_, g)| g);
        for (i, a) in axes.iter().enumerate() {
            let Some((left_i, arm_i, point_i)) = a else {
                continue;
            };
            let turned = self.inverse_inertia * *arm_i;
            for (j, b) in axes.iter().enumerate() {
                let Some((left_j, arm_j, point_j)) = b else {
                    continue;
                };
                let ground = if gives.is_empty() {
                    0.0
                } else {
                    match (give(i), give(j)) {
                        (Some(g), Some(h)) if g.body == h.body => {
                            g.mobility(*point_i, *left_i, *point_j, *left_j)
                        }
                        _ => 0.0,
                    }
                };
                mobility[i * count + j] = f64::from(left_i.dot(*left_j)) / f64::from(self.mass)
                    + f64::from(turned.dot(*arm_j))
                    + f64::from(ground);
            }
        }
    }

    /// The body's mass per wheel in heave on `wheels` wheels (kg): what each corner's
    /// springs carry as the body rises and falls level.
    pub(super) fn heave_mass(&self, wheels: usize) -> f64 {
        f64::from(self.mass) / wheels.max(1) as f64
    }

    /// The body's mass per wheel that the suspension springs at `mounts` (world, m) ring
    /// along `up` (world, unit) in the stiffest of the body's modes on them, taking their
    /// springs alike (kg): the mass over the number of wheels in heave, and `1/λ` for the
    /// pitch and roll, `λ` the largest eigenvalue of `I⁻¹·Σ uᵢuᵢᵀ` with `uᵢ = dᵢ × up` and
    /// `dᵢ` the mount's offset from the centre of mass (a spring `k` at each wheel rolls the
    /// body at `ω² = k·λ`). Heave and rotation are taken apart. A body that is narrow for
    /// its roll inertia rolls faster than it heaves: 0.73 of the mass per wheel for the
    /// excavator and the hatchback. See [`Suspension::force_at_step`](crate::components::Suspension::force_at_step).
    pub(super) fn corner_mass(&self, up: Vec3, mounts: impl Iterator<Item = Vec3>) -> f64 {
        let mut count = 0usize;
        let mut levers = Mat3::ZERO;
        for mount in mounts {
            let lever = (mount - self.center).cross(up);
            levers += Mat3::from_cols(lever * lever.x, lever * lever.y, lever * lever.z);
            count += 1;
        }
        let heave = self.heave_mass(count);
        // `λ` from the characteristic polynomial: the levers lie across `up`, so one
        // eigenvalue is zero and the other two solve `λ² − tr·λ + m₂ = 0` (`m₂` the sum of
        // the principal 2×2 minors).
        let a = (self.inverse_inertia * levers)
            .to_cols_array_2d()
            .map(|c| c.map(f64::from));
        let trace = a[0][0] + a[1][1] + a[2][2];
        let minors = a[0][0] * a[1][1] - a[0][1] * a[1][0] + a[0][0] * a[2][2] - a[0][2] * a[2][0]
            + a[1][1] * a[2][2]
            - a[1][2] * a[2][1];
        let lambda = 0.5 * (trace + (trace * trace - 4.0 * minors).max(0.0).sqrt());
        if lambda > 0.0 && lambda.is_finite() {
            heave.min(1.0 / lambda)
        } else {
            heave
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suspension's mass per wheel against the closed forms of a body on four springs at
    /// `(±a, ±b)` about its centre of mass (a vertical spring `k` at each): heave `ω² = 4k/m`,
    /// roll `ω² = 4k·b²/I_roll`, pitch `ω² = 4k·a²/I_pitch`, so the mass per wheel of the
    /// stiffest mode is the least of `m/4`, `I_roll/(4b²)` and `I_pitch/(4a²)` (to 1e-5;
    /// f32 inertia), whichever way the body is turned about its vertical axis, and wherever
    /// its centre of mass sits above the springs.
    #[test]
    fn the_suspension_rings_the_body_in_its_stiffest_mode() {
        let mass = 1000.0f32;
        // (half wheelbase, half track, pitch inertia, roll inertia): a car that rolls faster
        // than it heaves, one that pitches faster, and one whose heave is stiffest.
        for (a, b, pitch, roll) in [
            (1.3f32, 0.75f32, 1500.0f32, 400.0f32),
            (1.3, 0.75, 1000.0, 900.0),
            (1.3, 0.75, 4000.0, 3000.0),
        ] {
            for heading in [0.0f32, 0.7] {
                let turn = Quat::from_rotation_y(heading);
                let frame = Mat3::from_quat(turn);
                let local = Mat3::from_diagonal(Vec3::new(1.0 / pitch, 1.0 / 2000.0, 1.0 / roll));
                let body = BodyInertia {
                    mass,
                    center: Vec3::new(3.0, 0.6, -2.0),
                    inverse_inertia: frame * local * frame.transpose(),
                };
                let mounts = [(-a, -b), (-a, b), (a, -b), (a, b)]
                    .map(|(z, x)| body.center + turn * Vec3::new(x, -0.4, z));
                let got = body.corner_mass(Vec3::Y, mounts.into_iter());
                let expected = f64::from(
                    (mass / 4.0)
                        .min(roll / (4.0 * b * b))
                        .min(pitch / (4.0 * a * a)),
                );
                assert!(
                    (got - expected).abs() < 1e-5 * expected,
                    "pitch {pitch}, roll {roll}, heading {heading}: {got} kg vs {expected} kg"
                );
            }
        }
    }
}
