//! Finding the ground under each wheel, and the suspension forces that set the tire loads.
//!
//! Each wheel probes along its suspension axis (the chassis's up axis) from full compression
//! down to full extension with a shape the size of its tire, excluding the vehicle's own
//! colliders. The hit gives the suspension travel, the contact point and normal, the collider
//! and its friction (combined with Rapier's rule), and the ground's velocity there. The
//! suspension spring, damper, bump stop and anti-roll bars then give each tire's normal load,
//! which, with the wheel's velocity over the ground in the tire frame and the friction, is fed
//! to the wheel block as its [`WheelContact`] for the coming step.

use bevy::prelude::*;
use bevy_rapier3d::parry::bounding_volume::Aabb;
use bevy_rapier3d::parry::query::{ShapeCastOptions, ShapeCastStatus};
use bevy_rapier3d::parry::shape::{Ball, Cylinder, Shape};
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::math::Pose;
use bevy_rapier3d::rapier::prelude::{CoefficientCombineRule, ColliderHandle, QueryPipeline, Ray};
use bevy_vehicle_drivetrain::BlockSlot;
use bevy_vehicle_drivetrain::prelude::*;

use smallvec::SmallVec;

use crate::components::{AntiRollBars, GroundProbe, Side, Suspension, WheelMount, WheelState};
use crate::modules::systems::{ModuleScratch, finite_or};
use crate::modules::{
    AntiRollBarModule, AxleInput, CornerInput, LinearAntiRollBar, VehicleModules,
};
use crate::vehicle::Vehicle;

/// A tire's own friction coefficient, combined with the ground's by Rapier's rule. With the
/// `Multiply` rule (which wins over Rapier's default `Average`), the ground's friction passes
/// through unchanged: a collider with `Friction::coefficient(0.9)` is a μ = 0.9 road.
pub const TIRE_FRICTION: f32 = 1.0;
/// The combine rule the tire asks for; see [`TIRE_FRICTION`].
pub const TIRE_FRICTION_RULE: CoefficientCombineRule = CoefficientCombineRule::Multiply;

/// Largest contact acceleration handed to a wheel (m/s²): a landing or a crash is a jolt, not
/// a trend to extrapolate.
const MAX_CONTACT_ACCELERATION: f32 = 50.0;

/// What a probe found.
struct Hit {
    /// Suspension travel (m, compression positive).
    travel: f32,
    /// Wheel centre (world).
    center: Vec3,
    /// Contact point (world).
    point: Vec3,
    /// Ground normal (world, unit, pointing out of the ground).
    normal: Vec3,
    /// The collider hit.
    collider: ColliderHandle,
}

/// The shape a wheel probes the ground with.
struct TireShape {
    probe: GroundProbe,
    /// Tire radius (m).
    radius: f32,
    /// Half the tread width (m).
    half_width: f32,
    /// The wheel's orientation (world): chassis rotation and steering; its X is the axle.
    rotation: Quat,
}

impl TireShape {
    /// The point of the shape farthest along the unit direction `d`, relative to the wheel
    /// centre (world); `None` where it is ill-defined (a cylinder probed along its axle).
    fn support(&self, d: Vec3) -> Option<Vec3> {
        match self.probe {
            GroundProbe::Ball => Some(d * self.radius),
            GroundProbe::Cylinder => {
                let axle = self.rotation * Vec3::X;
                let along = d.dot(axle);
                let radial = d - axle * along;
                let length = radial.length();
                (length > 1e-3).then(|| {
                    radial * (self.radius / length) + axle * (self.half_width * along.signum())
                })
            }
            GroundProbe::Ray => None,
        }
    }
}

/// Where a wheel probes: from `top` (the wheel centre at full compression) down `up`'s
/// opposite for `range` (m).
struct Sweep {
    top: Vec3,
    up: Vec3,
    range: f32,
    compression_limit: f32,
}

/// The contact point on the wheel's mid-plane, for a witness point anywhere across the tread.
fn on_mid_plane(tire: &TireShape, witness: Vec3, center: Vec3) -> Vec3 {
    let axle = tire.rotation * Vec3::X;
    witness - axle * (witness - center).dot(axle)
}

/// The fast, exact contact for the common case: a single convex collider reaches into the
/// tire's sweep, a ray down the suspension axis finds a face of it, and the tire shape touches
/// that face's plane at its support point. The answer is exact when the support point lies on
/// the collider (the tire does not hang over an edge); otherwise (or when another collider
/// reaches into the sweep, the ray finds nothing, the ground is not convex, or the wheel starts
/// inside it) this returns `None` and the caller casts the tire shape through the world.
///
/// The colliders near the sweep come from one broad-phase query, and the ray is cast against
/// the one found alone: the tire's swept volume lies inside the queried box, so nothing else can
/// touch it.
fn plane_contact(pipeline: &QueryPipeline<'_>, tire: &TireShape, sweep: &Sweep) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let reach = Vec3::splat(tire.radius + tire.half_width);
    let bottom = top - up * range;
    let swept = Aabb::new(top.min(bottom) - reach, top.max(bottom) + reach);
    let mut near = pipeline.intersect_aabb_conservative(swept);
    let (handle, collider) = near.next()?;
    if near.next().is_some() || !collider.shape().is_convex() {
        return None;
    }
    let ray = Ray::new(top, -up);
    let ray_hit = collider.shape().cast_ray_and_get_normal(
        collider.position(),
        &ray,
        range + 2.0 * tire.radius + tire.half_width,
        true,
    )?;
    let normal = ray_hit.normal;
    let facing = normal.dot(up);
    if facing.is_nan() || facing <= 0.2 || ray_hit.time_of_impact <= 0.0 {
        return None;
    }
    let support = tire.support(-normal)?;
    let on_plane = ray.point_at(ray_hit.time_of_impact);
    // Travel along the sweep until the support point reaches the plane.
    let t = (top + support - on_plane).dot(normal) / facing;
    if !(0.0..=range).contains(&t) {
        return None;
    }
    let center = top - up * t;
    let point = center + support;
    let projection = collider
        .shape()
        .project_point(collider.position(), point, true);
    if (projection.point - point).length() > PLANE_CONTACT_TOLERANCE {
        return None;
    }
    Some(Hit {
        travel: sweep.compression_limit - t,
        center,
        point: on_mid_plane(tire, point, center),
        normal,
        collider: handle,
    })
}

/// How far (m) the fast contact's point may lie from the collider's surface and still count as
/// on it.
const PLANE_CONTACT_TOLERANCE: f32 = 2e-3;

/// Casts the tire shape down the sweep through the world: exact on any ground.
fn cast_tire(pipeline: &QueryPipeline<'_>, tire: &TireShape, sweep: &Sweep) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let ball = Ball::new(tire.radius);
    // A cylinder's axis is its local Y; the wheel's axle is the chassis X.
    let cylinder = Cylinder::new(tire.half_width, tire.radius);
    let (shape, shape_rotation): (&dyn Shape, Quat) = match tire.probe {
        GroundProbe::Ball => (&ball, tire.rotation),
        _ => (
            &cylinder,
            tire.rotation * Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
        ),
    };
    let options = ShapeCastOptions {
        max_time_of_impact: range,
        target_distance: 0.0,
        stop_at_penetration: true,
        compute_impact_geometry_on_penetration: true,
    };
    pipeline
        .cast_shape(&Pose::from_parts(top, shape_rotation), -up, shape, options)
        .map(|(collider, hit)| {
            let center = top - up * hit.time_of_impact;
            // witness1/normal1 belong to the hit collider, in world space. A cylinder touching
            // flat ground touches along a line across the tread, and the witness point may be
            // anywhere on it; the patch's centre lies on the wheel's mid-plane.
            let point = on_mid_plane(tire, hit.witness1, center);
            // A cast that starts inside the ground (the wheel went past full compression in
            // one step) has no meaningful normal: the suspension pushes straight out along its
            // axis.
            let normal = if hit.status == ShapeCastStatus::PenetratingOrWithinTargetDist {
                up
            } else {
                hit.normal1.normalize_or(up)
            };
            Hit {
                travel: sweep.compression_limit - hit.time_of_impact,
                center,
                point,
                normal,
                collider,
            }
        })
}

/// Combines two friction coefficients the way Rapier does: the stronger rule wins.
pub fn combine_friction(
    a: f32,
    b: f32,
    rule_a: CoefficientCombineRule,
    rule_b: CoefficientCombineRule,
) -> f32 {
    match rule_a.max(rule_b) {
        CoefficientCombineRule::Average => (a + b) / 2.0,
        CoefficientCombineRule::Min => a.min(b).abs(),
        CoefficientCombineRule::Multiply => a * b,
        CoefficientCombineRule::Max => a.max(b),
        CoefficientCombineRule::ClampedSum => (a + b).clamp(0.0, 1.0),
        CoefficientCombineRule::GeometricMean => (a.max(0.0) * b.max(0.0)).sqrt(),
    }
}

/// How far ahead (s) of the step's start the suspension springs are evaluated, so that a
/// spring force held over one fixed step of `dt` (s) is integrated like symplectic Euler.
///
/// Rapier holds an external force constant over its `substeps` (`bevy_rapier`'s substeps times the
/// solver's iterations, each of which moves the body), so over one fixed step the body moves by
/// `v·dt + β·a·dt²` with `β = (n+1)/(2n)`. Symplectic Euler has `β = 1`; a smaller β lets a
/// spring gain energy, `ω²dt²(1−β)` per step, which shows as lost damping proportional to `dt`
/// (15 % of a car's heave damping at 60 Hz with Rapier's default 4 iterations). Evaluating the
/// spring at the travel predicted `(1−β)·dt` ahead adds exactly the missing damping.
pub fn spring_lead(dt: f64, substeps: usize) -> f64 {
    let n = substeps.max(1) as f64;
    dt * (n - 1.0) / (2.0 * n)
}

/// Probes the ground and computes suspension forces and tire contacts for every vehicle.
pub(crate) fn probe_ground(
    time: Res<Time>,
    timestep: Res<TimestepMode>,
    rapier: ReadRapierContext,
    mut vehicles: Query<
        (
            Entity,
            &Transform,
            &Velocity,
            &ReadMassProperties,
            &Blocks,
            &mut Drivetrain,
            Option<&AntiRollBars>,
            &mut VehicleModules,
            &mut ModuleScratch,
        ),
        (With<Vehicle>, With<crate::validation::ChassisReady>),
    >,
    mut wheels: Query<(
        &WheelMount,
        &Suspension,
        &GroundProbe,
        &Wheel,
        &BlockSlot,
        &mut WheelState,
    )>,
) -> Result {
    let ctx = rapier.single()?;
    let outer = match *timestep {
        TimestepMode::Fixed { substeps, .. }
        | TimestepMode::Variable { substeps, .. }
        | TimestepMode::Interpolated { substeps, .. } => substeps,
    };
    let inner = ctx.simulation.integration_parameters.num_solver_iterations;
    let dt = time.delta_secs();
    let lead = spring_lead(f64::from(dt), outer.max(1) * inner.max(1));
    let colliders = &ctx.colliders.colliders;
    let bodies = &ctx.rigidbody_set.bodies;
    for (
        vehicle,
        transform,
        velocity,
        mass,
        blocks,
        mut drivetrain,
        bars,
        mut modules,
        mut scratch,
    ) in &mut vehicles
    {
        let inputs = &scratch.inputs;
        let module_ctx = inputs.context(0.0);
        let VehicleModules {
            suspension: suspension_module,
            anti_roll_bars,
            report,
            ..
        } = &mut *modules;
        let rotation = transform.rotation;
        let up = rotation * Vec3::Y;
        let com = transform.transform_point(mass.local_center_of_mass);
        let filter = QueryFilter::default()
            .exclude_rigid_body(vehicle)
            .exclude_sensors();
        ctx.with_query_pipeline(filter, |qp| {
            for block in blocks.iter() {
                let Ok((mount, suspension, probe, wheel, _, mut state)) = wheels.get_mut(block)
                else {
                    continue;
                };
                let radius = wheel.radius as f32;
                let steer = Quat::from_rotation_y(state.steer_angle as f32);
                let wheel_rotation = rotation * steer;
                let top = transform.translation
                    + rotation * mount.position
                    + up * suspension.compression_limit as f32;
                let range = (suspension.compression_limit + suspension.extension_limit) as f32;
                let hit = match probe {
                    GroundProbe::Ray => {
                        let ray = Ray::new(top, -up);
                        qp.query_pipeline
                            .cast_ray_and_get_normal(&ray, range + radius, true)
                            .map(|(collider, hit)| {
                                let point = ray.point_at(hit.time_of_impact);
                                Hit {
                                    travel: suspension.compression_limit as f32 + radius
                                        - hit.time_of_impact,
                                    center: point + up * radius,
                                    point,
                                    normal: hit.normal,
                                    collider,
                                }
                            })
                    }
                    GroundProbe::Ball | GroundProbe::Cylinder => {
                        let tire = TireShape {
                            probe: *probe,
                            radius,
                            half_width: 0.5 * mount.width,
                            rotation: wheel_rotation,
                        };
                        let sweep = Sweep {
                            top,
                            up,
                            range,
                            compression_limit: suspension.compression_limit as f32,
                        };
                        plane_contact(&qp.query_pipeline, &tire, &sweep)
                            .or_else(|| cast_tire(&qp.query_pipeline, &tire, &sweep))
                    }
                };
                let Some(hit) = hit else {
                    *state = WheelState {
                        grounded: false,
                        travel: -suspension.extension_limit,
                        steer_angle: state.steer_angle,
                        brake_torque: state.brake_torque,
                        center: top - up * range,
                        heading: wheel_rotation * Vec3::NEG_Z,
                        normal: up,
                        ..default()
                    };
                    continue;
                };
                let collider = colliders.get(hit.collider);
                let (ground_velocity, friction) = match collider {
                    Some(c) => {
                        let velocity = c
                            .parent()
                            .and_then(|b| bodies.get(b))
                            .map_or(Vec3::ZERO, |b| b.velocity_at_point(hit.point));
                        let friction = combine_friction(
                            TIRE_FRICTION,
                            c.friction(),
                            TIRE_FRICTION_RULE,
                            c.friction_combine_rule(),
                        );
                        (velocity, friction)
                    }
                    None => (Vec3::ZERO, 0.0),
                };
                let center_velocity = velocity.linear_velocity_at_point(hit.center, com);
                let relative = center_velocity - ground_velocity;
                let travel = f64::from(hit.travel.min(suspension.compression_limit as f32));
                let travel_rate = f64::from(-relative.dot(up));
                let forward = wheel_rotation * Vec3::NEG_Z;
                let heading =
                    (forward - hit.normal * forward.dot(hit.normal)).normalize_or(forward);
                let left = hit.normal.cross(heading);
                let velocity = [
                    f64::from(relative.dot(heading)),
                    f64::from(relative.dot(left)),
                ];
                // How the contact velocity changed over the last step, in the tire frame (the
                // frame the slips live in): the wheel extrapolates it across the coming step.
                let acceleration = if state.grounded && dt > 0.0 {
                    let limit = f64::from(MAX_CONTACT_ACCELERATION);
                    [0, 1].map(|i| {
                        ((velocity[i] - state.velocity[i]) / f64::from(dt)).clamp(-limit, limit)
                    })
                } else {
                    [0.0; 2]
                };
                *state = WheelState {
                    grounded: true,
                    travel,
                    travel_rate,
                    suspension_force: match inputs.index_of(block) {
                        Some(wheel) => {
                            let corner = CornerInput {
                                wheel,
                                deflection: travel + lead * travel_rate,
                                rate: travel_rate,
                                suspension,
                            };
                            finite_or(suspension_module.force(&module_ctx, &corner), 0.0, report)
                        }
                        None => 0.0,
                    },
                    steer_angle: state.steer_angle,
                    brake_torque: state.brake_torque,
                    contact_point: hit.point,
                    normal: hit.normal,
                    heading,
                    ground: ctx.colliders.collider_entity(hit.collider),
                    friction: f64::from(friction),
                    velocity,
                    acceleration,
                    center: hit.center,
                    ..default()
                };
            }
        });

        // Anti-roll bars move load between the two sides of an axle: the built-in bars, and
        // any installed in their place or on other axles.
        let builtin = bars.map_or(&[][..], |b| &b.0[..]);
        let axles = builtin
            .iter()
            .map(|b| b.axle)
            .chain(anti_roll_bars.iter().map(|(axle, _)| *axle));
        let mut done: SmallVec<[u8; 4]> = SmallVec::new();
        for axle in axles {
            if done.contains(&axle) {
                continue;
            }
            done.push(axle);
            let linear;
            let bar: &dyn AntiRollBarModule = match anti_roll_bars.iter().find(|(a, _)| *a == axle)
            {
                Some((_, module)) => &**module,
                None => {
                    let stiffness = builtin
                        .iter()
                        .filter(|b| b.axle == axle)
                        .map(|b| b.stiffness)
                        .sum();
                    linear = LinearAntiRollBar { stiffness };
                    &linear
                }
            };
            let side = |side: Side| {
                inputs
                    .wheels
                    .iter()
                    .position(|w| w.mount.axle == axle && w.mount.side == side)
            };
            let (Some(l), Some(r)) = (side(Side::Left), side(Side::Right)) else {
                continue;
            };
            let [left, right] = [l, r].map(|i| inputs.wheels[i].entity);
            let (Ok((.., sl)), Ok((.., sr))) = (wheels.get(left), wheels.get(right)) else {
                continue;
            };
            let input = AxleInput {
                axle,
                wheels: [l, r],
                deflection: [
                    sl.travel + lead * sl.travel_rate,
                    sr.travel + lead * sr.travel_rate,
                ],
                rate: [sl.travel_rate, sr.travel_rate],
            };
            let forces = bar.forces(&module_ctx, &input);
            for (e, f) in [(left, forces[0]), (right, forces[1])] {
                let f = finite_or(f, 0.0, report);
                if let Ok((.., mut state)) = wheels.get_mut(e)
                    && state.grounded
                {
                    state.suspension_force += f;
                }
            }
        }

        // Tire loads, and the contact each wheel block integrates over the coming step.
        for block in blocks.iter() {
            let Ok((.., slot, mut state)) = wheels.get_mut(block) else {
                continue;
            };
            state.load = if state.grounded {
                state.suspension_force.max(0.0)
            } else {
                0.0
            };
            let contact = WheelContact {
                load: state.load,
                velocity: state.velocity,
                acceleration: state.acceleration,
                friction: state.friction,
            };
            if let Some(runtime) = drivetrain.runtime_mut::<Wheel>(block, slot.node) {
                runtime.contact = contact;
            }
            // The modules' stage functions see the loads and travels just measured.
            let inputs = &mut scratch.inputs;
            if let Some(i) = inputs.index_of(block) {
                inputs.load[i] = state.load;
                inputs.travel[i] = state.travel;
            }
        }
    }
    Ok(())
}
