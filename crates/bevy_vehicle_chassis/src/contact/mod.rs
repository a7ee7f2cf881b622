//! Finding the ground under each wheel, and the suspension forces that set the tire loads.
//!
//! Each wheel probes along its suspension axis (the chassis's up axis) from full compression
//! down to full extension with a shape the size of its tire, excluding the vehicle's own
//! colliders. The hit gives the suspension travel, the contact point and normal, the collider
//! and its friction (combined with Rapier's rule), and the ground's velocity there; unless the
//! wheel stays on the flat face it stands on, it probes again where it will be at the step's
//! end, for the road's shape over the step, and once more where the planes under the two
//! meet, if they meet within the step, to tell an edge from a curve (see `force_over_step`).
//! The suspension spring, damper, bump stop and anti-roll bars then give each tire's normal
//! load, which, with the wheel's velocity over the ground in the tire frame and the friction,
//! the wheel's [`WheelState`] holds; the drivetrain step hands it to the wheel block as its
//! [`WheelContact`](bevy_vehicle_drivetrain::prelude::WheelContact) for the coming step.
//!
//! The system, [`probe_ground`], is here; the parts it calls are in three files:
//! `tire_cast.rs` (how a tire shape or a ray finds the ground: the cast through Rapier's
//! query pipeline and the exact contacts against the collider a wheel stands on),
//! `suspension_step.rs` (the suspension's force held over the coming step, over the road's
//! shape within it) and `coupling.rs` (how much of the body, and of a movable ground, a
//! tire's or a suspension's force moves within the step).

use bevy::ecs::query::QueryData;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_rapier3d::parry::bounding_volume::{Aabb, BoundingVolume};
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::math::Pose;
use bevy_rapier3d::rapier::prelude::{CoefficientCombineRule, ColliderHandle};

use bevy_vehicle_drivetrain::parallel::{self, ParallelStep};
use bevy_vehicle_drivetrain::prefetch::{self, pipelined};
use smallvec::SmallVec;

use crate::body_mass::BodyMass;
use crate::components::{AntiRollBar, AntiRollBars, GroundProbe, Side, Suspension, WheelState};
use crate::modules::systems::{ModuleInputs, ModuleScratch, finite_or};
use crate::modules::{
    AntiRollBarModule, AxleInput, CornerInput, LinearAntiRollBar, ModuleContext, ModuleReport,
    VehicleModules,
};
use crate::vehicle::Vehicle;

mod coupling;
mod suspension_step;
mod tire_cast;

pub use coupling::rapier_heading_lead;
pub(crate) use coupling::turned_on_ground;
use coupling::{BodyInertia, GroundGive};
use suspension_step::{RoadAhead, RoadProfile, force_over_step};
pub use suspension_step::{SPRING_STEP_WEIGHT, spring_lead};
pub use tire_cast::combine_friction;
use tire_cast::{
    Hit, Neighbours, Sweep, TireShape, cast_tire, fast_contact, fast_ray_contact, neighbours,
    probe_half_width, ray_contact, stays_on_face,
};

/// A tire's own friction coefficient, combined with the ground's by Rapier's rule. With the
/// `Multiply` rule (which wins over Rapier's default `Average`), the ground's friction passes
/// through unchanged: a collider with `Friction::coefficient(0.9)` is a μ = 0.9 road.
pub const TIRE_FRICTION: f32 = 1.0;
/// The combine rule the tire asks for; see [`TIRE_FRICTION`].
pub const TIRE_FRICTION_RULE: CoefficientCombineRule = CoefficientCombineRule::Multiply;

/// Largest contact acceleration handed to a wheel, and largest change of a wheel's ground speed
/// the built-in ABS carries across a step (m/s²): a landing or a crash is a jolt, not a trend
/// to extrapolate.
pub(crate) const MAX_CONTACT_ACCELERATION: f32 = 50.0;

/// The cosine of the largest turn of the ground's normal under a wheel from one step to the
/// next (0.15 rad, 8.6°) that is taken as the road's curvature; a larger one is an edge (a
/// kerb met, or its top reached), whose change of the travel rate [`force_over_step`] does
/// not carry on over the step. A 15 mm sinusoidal road at 8 Hz under a car at 15 m/s turns
/// the normal by at most 0.075 rad a step at 30 Hz, where a tire of 0.3 m radius meets a 2 cm
/// kerb's edge with its normal turned by 0.37 rad and a 10 cm kerb's by 0.84 rad. (A
/// heightfield's triangle edges can turn a cylinder probe's normal past it now and then.)
const EDGE_TURN_COSINE: f32 = 0.988_771;

/// The least move over the ground in a step (m) for which a wheel probes the road ahead:
/// 1 mm. Slower, the road's turn within the step is too small to count.
const LOOK_AHEAD_MIN_SHIFT: f32 = 1e-3;

/// How far (m) the colliders a vehicle's wheels probe among reach past where its velocity
/// takes the wheels over a step, for the probes of the road ahead: 0.1 m.
const LOOK_AHEAD_MARGIN: f32 = 0.1;

/// How far (m) inside a face's edges a ray probe's point must stay for the road ahead to be
/// that face's plane (see `stays_on_face`): 1 cm.
const RAY_FACE_MARGIN: f32 = 0.01;

/// The sine of the largest angle between the ground's normal under a wheel and under the
/// point it reaches by the step's end for which the road between is one flat face: 10 µrad.
const FLAT_TURN_SINE: f32 = 1e-5;

/// The least offset (m) of the road at the step's end from the plane under a wheel now for
/// which a road whose planes do not meet within the step (a step down or up, a deck's end, a
/// kerb's corner) is probed at [`ROAD_SAMPLES`] within the step: 1 mm.
const ROAD_STEP_MIN_OFFSET: f64 = 1e-3;

/// Where within the step (fractions of it) the road is probed where the planes under a wheel
/// now and at the step's end lie apart without meeting within the step (see
/// [`RoadProfile`]): every quarter, as a step four times shorter would meet it.
const ROAD_SAMPLES: [f64; 3] = [0.25, 0.5, 0.75];

/// Least `normal·up` (the cosine between the ground's normal and the suspension axis) at which
/// a wheel's contact carries load: about 78°. Beyond it the suspension cannot push along the
/// normal (a wall, a kerb's face, the ground under a car lying on its side): a load there is a
/// push the suspension cannot make, and along its own axis it has nothing on the ground to take
/// it. A car on its side that its lower wheels pushed along their axes slid 3.9–4.6 m at up to
/// 2.5 m/s and rocked back up.
const MIN_SUPPORT_FACING: f32 = 0.2;

/// Largest `|axle·normal|` (the sine of the tire's lean on the ground) at which a wheel's
/// contact carries load: 60°, about a motorcycle's greatest lean. Beyond it the tire touches the
/// ground with its sidewall, which carries no load. A car tipped 12° back from lying on its side
/// meets the ground at 78° to its suspension axes, just inside [`MIN_SUPPORT_FACING`], and its
/// lower wheels' loads of 4–7 kN on their sidewalls kept it rocking and sliding (0.45 m over
/// 4 s after settling).
const MAX_LEAN_SINE: f32 = 0.866;

/// Least cosine between the suspension axis and the contact normal used to turn the wheel
/// centre's approach to the ground into travel rate: beyond 60° (a kerb's face) the rate is
/// taken as at 60°, rather than growing without bound.
const MIN_AXIS_COSINE: f32 = 0.5;

/// The ground a game swapped in one frame: colliders despawned (or their `Collider` removed)
/// since the last step while others were spawned over them, which Rapier adds to its queries
/// only in its next step. Until then the old collider stands in for the new one, so that a car
/// on a streamed terrain tile replaced in one frame does not fall for a step (by `g·dt`).
#[derive(SystemParam)]
pub(crate) struct SwappedGround<'w, 's> {
    removed: RemovedComponents<'w, 's, Collider>,
    /// Colliders not yet handed to Rapier.
    fresh: Query<
        'w,
        's,
        (
            &'static Collider,
            &'static Transform,
            &'static GlobalTransform,
            Has<ChildOf>,
        ),
        Without<RapierColliderHandle>,
    >,
}

impl SwappedGround<'_, '_> {
    /// The despawned colliders (still in Rapier's `colliders`) whose bounds meet those of a
    /// collider spawned since the last step.
    fn replaced(&mut self, colliders: &RapierContextColliders) -> SmallVec<[Entity; 4]> {
        let removed: SmallVec<[Entity; 4]> = self.removed.read().collect();
        if removed.is_empty() || self.fresh.is_empty() {
            return SmallVec::new();
        }
        // A root entity's pose is its `Transform`; a child's, its `GlobalTransform` (as of the
        // last frame's propagation).
        let fresh: SmallVec<[Aabb; 4]> = self
            .fresh
            .iter()
            .map(|(collider, transform, global, child)| {
                let (rotation, translation) = if child {
                    let (_, rotation, translation) = global.to_scale_rotation_translation();
                    (rotation, translation)
                } else {
                    (transform.rotation, transform.translation)
                };
                collider
                    .raw
                    .compute_aabb(&Pose::from_parts(translation, rotation))
            })
            .collect();
        removed
            .into_iter()
            .filter(|entity| {
                let bounds = colliders
                    .entity2collider()
                    .get(entity)
                    .and_then(|handle| colliders.colliders.get(*handle))
                    .map(|c| c.compute_aabb());
                bounds.is_some_and(|b| fresh.iter().any(|f| f.intersects(&b)))
            })
            .collect()
    }
}

/// The step between neighbouring `f32` positions (m) past which a wheel centre's coordinate
/// that did not change is not taken as a move of nothing along it (see `probe_ground`): 10 µm,
/// reached 128 m from the origin. Nearer, a coordinate that stands still while the wheel creeps
/// slower than its precision hides less than a held tire's patch is ever anchored to.
const COARSE_POSITION_STEP: f32 = 1e-5;

/// The step (m) from the `f32` coordinate `x` to the next one away from zero.
fn position_step(x: f32) -> f32 {
    let x = x.abs();
    f32::from_bits(x.to_bits() + 1) - x
}

/// The velocity (m/s, world) at which the kinematic body `body` moves the world point `point`
/// over the coming step of `dt` (s), from what the game gave it: a velocity-based body's
/// [`Velocity`], a position-based one's move to its [`Transform`] (a root's; `None` under a
/// parent, and for any other kind of body). Rapier takes them in only when it steps, so its
/// own velocity for the body is still the last step's.
fn kinematic_velocity(
    body: &bevy_rapier3d::rapier::dynamics::RigidBody,
    kind: RigidBody,
    target: &Transform,
    given: Option<&Velocity>,
    parented: bool,
    point: Vec3,
    dt: f32,
) -> Option<Vec3> {
    match kind {
        RigidBody::KinematicVelocityBased => {
            given.map(|v| v.linear + v.angular.cross(point - body.center_of_mass()))
        }
        RigidBody::KinematicPositionBased if !parented && dt > 0.0 => {
            let local = body.position().inverse_transform_point(point);
            Some((target.translation + target.rotation * local - point) / dt)
        }
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// A vehicle as its ground probe reads and writes it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct ProbedVehicle {
    entity: Entity,
    transform: &'static Transform,
    velocity: &'static Velocity,
    mass: &'static ReadMassProperties,
    bars: Option<&'static AntiRollBars>,
    modules: &'static mut VehicleModules,
    scratch: &'static mut ModuleScratch,
}

/// The wheels' suspensions, probes and states.
type WheelQuery<'w, 's> = Query<
    'w,
    's,
    (
        &'static Suspension,
        &'static GroundProbe,
        &'static mut WheelState,
    ),
>;

/// [`WheelQuery`] read-only, as tasks share it.
type WheelQueryRead<'w, 's> = Query<
    'w,
    's,
    (
        &'static Suspension,
        &'static GroundProbe,
        &'static WheelState,
    ),
>;

/// The states a vehicle's probe wrote, by wheel, for the system to write back.
type WrittenStates = SmallVec<[(Entity, WheelState); 4]>;

/// A vehicle's wheels as its ground probe reads and writes them: each wheel's suspension and
/// probe, and a copy of its state for the probe to write, which the system writes back once
/// the vehicle is done (on its own thread) or once every task is done (in tasks). Each wheel
/// is looked up once: a vehicle's probe reads and writes its wheels some forty times a step,
/// and each lookup of an entity in a query cost more than most of those uses (a twentieth of
/// a car's whole step).
struct ProbedWheels<'a> {
    /// Each wheel's suspension and probe, in the order of `states`.
    parts: SmallVec<[(&'a Suspension, &'a GroundProbe); 4]>,
    /// Each wheel's state as the probe writes it.
    states: &'a mut WrittenStates,
}

impl<'a> ProbedWheels<'a> {
    /// The wheels `entities` of `read` (those that are wheels), their states copied into
    /// `states` (emptied first).
    fn gather(
        read: &'a WheelQueryRead,
        entities: impl Iterator<Item = Entity>,
        states: &'a mut WrittenStates,
    ) -> Self {
        states.clear();
        let mut parts = SmallVec::new();
        for entity in entities {
            if let Ok((suspension, probe, state)) = read.get(entity) {
                parts.push((suspension, probe));
                states.push((entity, state.clone()));
            }
        }
        ProbedWheels { parts, states }
    }

    /// Where wheel `entity` lies in `parts` and `states`.
    fn index(&self, entity: Entity) -> Option<usize> {
        self.states.iter().position(|(e, _)| *e == entity)
    }

    /// Wheel `entity`'s suspension, probe and state, if it is one of the vehicle's wheels.
    fn wheel(&self, entity: Entity) -> Option<(&Suspension, &GroundProbe, &WheelState)> {
        let index = self.index(entity)?;
        let (suspension, probe) = self.parts[index];
        Some((suspension, probe, &self.states[index].1))
    }

    /// As [`ProbedWheels::wheel`], with its state to write.
    fn wheel_mut(
        &mut self,
        entity: Entity,
    ) -> Option<(&Suspension, &GroundProbe, &mut WheelState)> {
        let index = self.index(entity)?;
        let (suspension, probe) = self.parts[index];
        Some((suspension, probe, &mut self.states[index].1))
    }
}

/// Adds each axle's anti-roll bar force to its two wheels' suspension forces (and to
/// [`WheelState::anti_roll_force`]), for the wheels on the ground: the built-in bars'
/// (`builtin`, summed per axle into a [`LinearAntiRollBar`]) and any installed module's in
/// their place or on other axles (`modules`, by axle). Each bar reads its wheels'
/// deflections `lead` (s, [`spring_lead`]) ahead, as the springs do. A force that is not a
/// number counts as none and in `report`.
fn add_anti_roll_bars(
    builtin: &[AntiRollBar],
    modules: &[(u8, Box<dyn AntiRollBarModule>)],
    module_ctx: &ModuleContext,
    inputs: &ModuleInputs,
    wheels: &mut ProbedWheels,
    lead: f64,
    report: &mut ModuleReport,
) {
    let axles = builtin
        .iter()
        .map(|b| b.axle)
        .chain(modules.iter().map(|(axle, _)| *axle));
    let mut done: SmallVec<[u8; 4]> = SmallVec::new();
    for axle in axles {
        if done.contains(&axle) {
            continue;
        }
        done.push(axle);
        let linear;
        let bar: &dyn AntiRollBarModule = match modules.iter().find(|(a, _)| *a == axle) {
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
        let (Some((.., sl)), Some((.., sr))) = (wheels.wheel(left), wheels.wheel(right)) else {
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
        let forces = bar.forces(module_ctx, &input);
        for (e, f) in [(left, forces[0]), (right, forces[1])] {
            let f = finite_or(f, 0.0, report);
            if let Some((.., state)) = wheels.wheel_mut(e)
                && state.grounded
            {
                state.suspension_force += f;
                state.anti_roll_force += f;
            }
        }
    }
}

/// Sets each wheel's tire load from its suspension force (none in the air) and its share of
/// the body's mass `body_mass` (kg) in proportion to its load, and hands the loads and travels
/// to the modules' inputs: the drivetrain step hands each load to its wheel block, with the
/// contact's velocity and friction, as the contact it integrates over the coming step.
fn set_tire_loads(inputs: &mut ModuleInputs, wheels: &mut ProbedWheels, body_mass: f32) {
    let mut total_load = 0.0;
    for (i, wheel) in inputs.wheels.iter().enumerate() {
        let Some((.., state)) = wheels.wheel_mut(wheel.entity) else {
            continue;
        };
        state.load = if state.grounded {
            state.suspension_force.max(0.0)
        } else {
            0.0
        };
        total_load += state.load;
        // The modules' stage functions see the loads and travels just measured.
        inputs.load[i] = state.load;
        inputs.travel[i] = state.travel;
    }
    // Each tire's share of the body's mass, in proportion to its load: together the shares
    // make the whole mass whatever the body's vertical acceleration (a landing, a banked
    // turn), so no tire takes the body for heavier than it is.
    let mass_per_load = if total_load > 0.0 {
        f64::from(body_mass) / total_load
    } else {
        0.0
    };
    for wheel in &inputs.wheels {
        if let Some((.., state)) = wheels.wheel_mut(wheel.entity) {
            state.body_mass = state.load * mass_per_load;
        }
    }
}

/// Probes the ground under every ready vehicle's wheels and sets their [`WheelState`]s:
/// contact, suspension force, anti-roll bar force and tire load (see the module's
/// documentation). The vehicles are split into tasks as [`ParallelStep`] says.
pub(crate) fn probe_ground(
    time: Res<Time>,
    timestep: Res<TimestepMode>,
    parallel: Res<ParallelStep>,
    rapier: ReadRapierContext,
    mut vehicles: Query<ProbedVehicle, (With<Vehicle>, With<crate::validation::ChassisReady>)>,
    mut wheels: WheelQuery,
    configuration: Query<&RapierConfiguration>,
    live_colliders: Query<(), With<Collider>>,
    mut swapped: SwappedGround,
    body_mass: BodyMass,
    vehicle_bodies: Query<(), With<Vehicle>>,
    kinematic_bodies: Query<(&RigidBody, &Transform, Option<&Velocity>, Has<ChildOf>)>,
    mut written_states: Local<Vec<WrittenStates>>,
) -> Result {
    let ctx = rapier.single()?;
    // Rapier drops a despawned collider (or one whose `Collider` was removed) only in its next
    // step, after the probes: until then its query pipeline still holds it, and a wheel on it
    // was carried for one more step by ground that was gone. Unless other ground was spawned
    // over it in the same frame, which Rapier queries only from its next step too.
    let replaced = swapped.replaced(ctx.colliders);
    let live = |entity: Entity| live_colliders.contains(entity) || replaced.contains(&entity);
    let gravity = configuration
        .iter()
        .next()
        .map_or(Vec3::NEG_Y * crate::GRAVITY as f32, |c| c.gravity);
    let outer = match *timestep {
        TimestepMode::Fixed { substeps, .. }
        | TimestepMode::Variable { substeps, .. }
        | TimestepMode::Interpolated { substeps, .. } => substeps,
    };
    let inner = ctx.simulation.integration_parameters.num_solver_iterations;
    let dt = time.delta_secs();
    let moves = outer.max(1) * inner.max(1);
    let lead = spring_lead(f64::from(dt), moves);
    let heading_lead = rapier_heading_lead(dt, moves);
    let colliders = &ctx.colliders.colliders;
    let bodies = &ctx.rigidbody_set.bodies;
    // One vehicle's probes, suspension and anti-roll bars; on this thread or in a task.
    let probe = |item: &mut ProbedVehicleItem, wheels: &mut ProbedWheels| {
        let vehicle = item.entity;
        let (transform, velocity, mass, bars) =
            (item.transform, item.velocity, item.mass, item.bars);
        let modules: &mut VehicleModules = &mut item.modules;
        let scratch: &mut ModuleScratch = &mut item.scratch;
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
        let body = BodyInertia::new(&body_mass.of(vehicle, mass), transform);
        let corner_mass = body.corner_mass(
            up,
            inputs
                .wheels
                .iter()
                .map(|w| transform.rotation * w.mount.position + transform.translation),
        );
        let heave_mass = body.heave_mass(inputs.wheels.len());
        // How far the body's own colliders are from the ground collider `ground` (m,
        // negative where they overlap), if within Rapier's prediction distance of it and
        // the ground faces up to the body there, where Rapier's contact keeps the body from
        // closing more than that gap in the coming step. (A shape pair parry cannot test
        // counts as apart.)
        let reach = ctx.simulation.integration_parameters.prediction_distance();
        let body_gap = |ground: ColliderHandle| -> Option<f32> {
            let ground = colliders.get(ground)?;
            let body = bodies.get(*ctx.rigidbody_set.entity2body().get(&vehicle)?)?;
            body.colliders()
                .iter()
                .filter_map(|&c| colliders.get(c))
                .filter_map(|c| {
                    bevy_rapier3d::parry::query::contact(
                        c.position(),
                        c.shape(),
                        ground.position(),
                        ground.shape(),
                        reach,
                    )
                    .ok()
                    .flatten()
                })
                // From the witness points: parry's `dist` for a compound against a
                // half-space measures from the compound's far side (−2.1 m for an
                // excavator's box 0.3 m above the ground).
                .filter(|contact| contact.normal2.dot(up) >= MIN_SUPPORT_FACING)
                .map(|contact| (contact.point1 - contact.point2).dot(contact.normal2))
                .filter(|gap| *gap < reach)
                .reduce(f32::min)
        };
        let filter = QueryFilter::default()
            .exclude_rigid_body(vehicle)
            .exclude_sensors()
            .predicate(&live);
        let mut last_loads: SmallVec<[f64; 16]> = SmallVec::new();
        // The wheels on dynamic ground bodies (by index), with the bodies' give: none on
        // fixed or kinematic ground, the common case, which then costs nothing here.
        let mut gives: SmallVec<[(usize, GroundGive); 2]> = SmallVec::new();
        ctx.with_query_pipeline(filter, |qp| {
            // One broad-phase query for all the wheels that cast their tire shape.
            // Mounts and radii come from the module inputs gathered this step, which sit on
            // the vehicle entity: the wheel blocks' own components are large and far apart.
            let area = inputs
                .wheels
                .iter()
                .filter_map(|w| {
                    let (suspension, probe, _) = wheels.wheel(w.entity)?;
                    Some(
                        Sweep::of(transform, up, &w.mount, suspension)
                            .bounds(w.radius as f32, probe_half_width(*probe, &w.mount)),
                    )
                })
                .reduce(|a, b| a.merged(&b))
                // And where the body's velocity takes them over the step, for the probes
                // of the road ahead.
                .map(|area| {
                    let shift = velocity.linear * dt;
                    let margin = (0.25 * shift.length()).max(0.0) + LOOK_AHEAD_MARGIN;
                    area.merged(&Aabb::new(area.mins + shift, area.maxs + shift))
                        .loosened(margin)
                });
            let neighbours =
                area.map_or_else(Neighbours::new, |area| neighbours(&qp.query_pipeline, area));
            let near = area.unwrap_or(Aabb::new_invalid());
            // The last step's loads, and the body's heave over the ground under its wheels
            // at the step's middle (m/s, compression positive): its centre of mass's
            // velocity along `up` against the mean of the ground's under its grounded
            // wheels at the last probe (zero on fixed ground), half a step on at the
            // acceleration its weight and the suspension's forces of the last step give it.
            last_loads.clear();
            let (mut ground, mut grounded, mut force) = (Vec3::ZERO, 0.0f32, 0.0);
            for w in &inputs.wheels {
                let state = wheels.wheel(w.entity).map(|(.., s)| s);
                last_loads.push(state.map_or(0.0, |s| s.load));
                if let Some(state) = state.filter(|s| s.grounded) {
                    ground += state.ground_velocity;
                    grounded += 1.0;
                    force += state.suspension_force;
                }
            }
            let heave_rate = {
                let ground = if grounded > 0.0 {
                    ground / grounded
                } else {
                    Vec3::ZERO
                };
                let acceleration = force / f64::from(body.mass) + f64::from(gravity.dot(up));
                f64::from((ground - velocity.linear).dot(up)) - 0.5 * f64::from(dt) * acceleration
            };
            for (index, w) in inputs.wheels.iter().enumerate() {
                let Some((suspension, probe, state)) = wheels.wheel_mut(w.entity) else {
                    continue;
                };
                let mount = &w.mount;
                let radius = w.radius as f32;
                let steer = Quat::from_rotation_y(state.steer_angle as f32);
                let wheel_rotation = rotation * steer;
                let sweep = Sweep::of(transform, up, mount, suspension);
                let Sweep { top, range, .. } = sweep;
                let tire = TireShape {
                    probe: *probe,
                    radius,
                    half_width: 0.5 * mount.width,
                    rotation: wheel_rotation,
                };
                // The contact from the sweep's start `top` down, where it is exact: the ray
                // probe's always (from the neighbours where they cover the ray and it meets
                // one of them from outside, [`fast_ray_contact`], else cast through the
                // world), a tire shape's where one collider's faces (or a seam's) answer it
                // ([`fast_contact`]) and the neighbours cover its sweep; `None` where only a
                // cast through the world would tell.
                let exact_at = |sweep: Sweep| match probe {
                    GroundProbe::Ray => Some(
                        near.contains(&sweep.ray_bounds(radius))
                            .then(|| fast_ray_contact(&neighbours, &sweep, radius))
                            .flatten()
                            .or_else(|| ray_contact(&qp.query_pipeline, colliders, &sweep, radius)),
                    ),
                    GroundProbe::Ball | GroundProbe::Cylinder => {
                        let swept = sweep.bounds(radius, tire.half_width);
                        near.contains(&swept)
                            .then(|| fast_contact(&neighbours, &tire, &sweep, &swept))
                            .flatten()
                    }
                };
                // A contact the suspension cannot push along, or one the tire touches with
                // its sidewall, carries no load: the wheel is off the ground as far as the
                // suspension goes.
                let axle = wheel_rotation * Vec3::X;
                let supports = |hit: &Hit| {
                    up.dot(hit.normal) >= MIN_SUPPORT_FACING
                        && axle.dot(hit.normal).abs() <= MAX_LEAN_SINE
                };
                let hit = exact_at(sweep)
                    .unwrap_or_else(|| cast_tire(&qp.query_pipeline, &tire, &sweep))
                    .filter(supports);
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
                let (
                    ground_velocity,
                    coming_ground_velocity,
                    ground_turning,
                    carried,
                    friction,
                    ground_give,
                    kinematic,
                ) = match collider {
                    Some(c) => {
                        let ground = c.parent().and_then(|b| Some((b, bodies.get(b)?)));
                        // Fixed ground (most roads) does not move.
                        let moving = ground.filter(|(_, b)| !b.is_fixed());
                        let velocity =
                            moving.map_or(Vec3::ZERO, |(_, b)| b.velocity_at_point(hit.point));
                        // How fast the point's velocity turns with the body's spin (m/s²).
                        let turning = moving
                            .map_or(Vec3::ZERO, |(_, b)| b.angvel().cross(velocity - b.linvel()));
                        // The acceleration the ground's spin gives the vehicle's centre of
                        // mass where it rides along with it (m/s²): see `follow_lag` below.
                        let carried = moving.map_or(Vec3::ZERO, |(_, b)| {
                            b.angvel()
                                .cross(b.velocity_at_point(body.center) - b.linvel())
                        });
                        let friction = combine_friction(
                            TIRE_FRICTION,
                            c.friction(),
                            TIRE_FRICTION_RULE,
                            c.friction_combine_rule(),
                        );
                        let dynamic =
                            ground
                                .filter(|(_, b)| b.is_dynamic())
                                .and_then(|(handle, b)| {
                                    let entity = ctx.rigidbody_set.rigid_body_entity(handle)?;
                                    let own = ctx.rigidbody_set.entity2body().get(&vehicle);
                                    let held = vehicle_bodies.contains(entity)
                                        || GroundGive::held(&ctx, handle, b, own.copied());
                                    Some(GroundGive::of(entity, b, held))
                                });
                        let kinematic = moving.is_some_and(|(_, b)| b.is_kinematic());
                        // The velocity the ground moves the point at over the coming step:
                        // a kinematic body's, from what the game gave it (Rapier's still
                        // holds the last step's); any other's, Rapier's.
                        let coming = moving
                            .filter(|_| kinematic)
                            .and_then(|(handle, b)| {
                                let entity = ctx.rigidbody_set.rigid_body_entity(handle)?;
                                let (kind, target, given, parented) =
                                    kinematic_bodies.get(entity).ok()?;
                                kinematic_velocity(b, *kind, target, given, parented, hit.point, dt)
                            })
                            .unwrap_or(velocity);
                        (
                            velocity, coming, turning, carried, friction, dynamic, kinematic,
                        )
                    }
                    None => (
                        Vec3::ZERO,
                        Vec3::ZERO,
                        Vec3::ZERO,
                        Vec3::ZERO,
                        0.0,
                        None,
                        false,
                    ),
                };
                let ground_collider = ctx.colliders.collider_entity(hit.collider);
                let ground_body = ground_give.map(|g| g.body);
                if let Some(give) = ground_give {
                    gives.push((index, give));
                }
                let center_velocity = velocity.linear_velocity_at_point(hit.center, body.center);
                // A vehicle riding along with turning ground moves its centre of mass on
                // the ground's arc by Rapier's moves, each at its substep's end velocity, so
                // its velocity at the step's end runs `a·dt/(2n)` behind the arc's tangent
                // there (`a`, the arc's acceleration), where the ground's own point turns
                // with its spin exactly: the tires read that lag as a slip outward, and
                // a braked car crept inward at `a·dt/(2n)` (12 / 6 / 3 / 1.5 mm/s on a
                // turntable at 0.5 rad/s, 6 m out, at 15 / 30 / 60 / 120 Hz). Riding along
                // is the reference the slips are measured from.
                let follow_lag = carried * heading_lead;
                let relative = center_velocity - ground_velocity + follow_lag;
                let travel = f64::from(hit.travel.min(suspension.compression_limit as f32));
                // The wheel centre closing on the ground along the contact normal compresses
                // the suspension, by 1/(up·n) as much along its axis; sliding along the ground
                // does not, however the body pitches or rolls. (Projecting the velocity on the
                // axis instead read `v·sin(pitch)` as a travel rate: under braking at 100 km/h
                // and 1° of dive, 0.5 m/s of rebound on every damper, which took 1.2 kN off
                // each wheel of a hatchback and sank the body onto its bump stops.)
                let axis_cosine = up.dot(hit.normal).max(MIN_AXIS_COSINE);
                // How a kinematic ground's velocity changes from the last step, which Rapier
                // moved it over at `ground_velocity`, to the coming one (zero on any other
                // ground): the ground's part of the rate is taken at the coming step's.
                let ground_jump = coming_ground_velocity - ground_velocity;
                let approach = relative - ground_jump;
                let travel_rate = f64::from(-approach.dot(hit.normal) / axis_cosine);
                // Where the ground's normal turned by more than `EDGE_TURN_COSINE` allows
                // since the last step (a kerb's edge met, or left for its top), the part of
                // the rate's change that turn made is not a trend to carry on over the
                // coming step.
                let edge_change =
                    if state.grounded && hit.normal.dot(state.normal) < EDGE_TURN_COSINE {
                        f64::from(-approach.dot(hit.normal - state.normal) / axis_cosine)
                    } else {
                        0.0
                    };
                // The road ahead: the wheel probed where its slide over the ground
                // takes it by the step's end (at the body's height) finds how far the road
                // there lies off the plane under it now, which gives the damper the road's
                // mean rate over the step (see `force_over_step`). None where the probe
                // has no exact answer, or the wheel barely moves.
                let slide = approach - hit.normal * approach.dot(hit.normal);
                let shift = slide * dt;
                let road_ahead = (state.grounded
                    && shift.length_squared() > LOOK_AHEAD_MIN_SHIFT * LOOK_AHEAD_MIN_SHIFT)
                    .then(|| {
                        // A wheel that stays on the flat face it is on needs no probe.
                        let half_width = probe_half_width(*probe, mount);
                        let swept = Sweep {
                            top: top + shift,
                            ..sweep
                        }
                        .bounds(radius, half_width);
                        let on_face = near.contains(&swept)
                            && stays_on_face(
                                &neighbours,
                                &hit,
                                &swept,
                                shift,
                                if *probe == GroundProbe::Ray {
                                    RAY_FACE_MARGIN
                                } else {
                                    radius + half_width
                                },
                            );
                        if on_face {
                            return Some(RoadAhead::default());
                        }
                        // The road a part `along` (m, world) of the slide ahead, probed
                        // from as high as the ground under the wheel now rises by then and
                        // reaching that much further down (a wheel rolling onto a kerb's
                        // corner slides up its steep face, and would probe the kerb's top
                        // from above its reach).
                        let road_at = |along: Vec3| {
                            exact_at(Sweep {
                                top: top + along,
                                range: sweep.range + up.dot(along).max(0.0),
                                ..sweep
                            })
                            .flatten()
                            .filter(supports)
                        };
                        let ahead = road_at(shift)?;
                        let offset = f64::from(ahead.travel - hit.travel);
                        let parallel = ahead.normal.cross(hit.normal).length_squared()
                            < FLAT_TURN_SINE * FLAT_TURN_SINE;
                        if parallel && offset.abs() < ROAD_STEP_MIN_OFFSET {
                            return Some(RoadAhead::default());
                        }
                        // The two planes meet where their offset along the travel, which
                        // changes by `rise` over the slide, runs out.
                        let rise = f64::from(
                            ahead.normal.dot(shift) / ahead.normal.dot(up).max(MIN_AXIS_COSINE),
                        );
                        let fraction = 1.0 + offset / rise;
                        // Two planes meeting at an edge, or a road curving between them?
                        // Where the planes meet, the road of an edge lies on both (no
                        // offset from the plane under the wheel now, but for the tire's
                        // rounding of the corner), where a road of even curvature lies off
                        // it by `offset·fraction²`. Taken as an edge where the road there
                        // lies within half of that: a 10 cm bump 0.6 m long (a cylinder)
                        // taken for two planes at 15 m/s threw the body up at 1.7 times
                        // 240 Hz's rate at 30 Hz (0.83 times as a curve).
                        let offset_at = |fraction: f64| {
                            road_at(shift * fraction as f32)
                                .map(|meet| f64::from(meet.travel - hit.travel))
                        };
                        let profile = if fraction > 0.0 && fraction < 1.0 {
                            let edge = offset_at(fraction).is_some_and(|off| {
                                off.abs() < 0.5 * offset.abs() * fraction * fraction
                            });
                            edge.then(|| RoadProfile::new(&[(fraction, 0.0)], offset))
                        } else if offset.abs() >= ROAD_STEP_MIN_OFFSET {
                            // Planes that do not meet within the step and lie apart: a
                            // step down or up (a deck's end, a kerb) or the corner a tire is
                            // rounding, probed every quarter. (A road curving within the
                            // step, probed so too, fared worse than at its mean rate: the
                            // 10 cm bump above at 15 m/s threw the body up at 1.1-1.5 times
                            // 240 Hz's rate at 30 Hz and pitched it at 1.6-1.9 times.)
                            let within = ROAD_SAMPLES.map(|at| offset_at(at).map(|off| (at, off)));
                            within.iter().all(Option::is_some).then(|| {
                                RoadProfile::new(&within.map(Option::unwrap_or_default), offset)
                            })
                        } else {
                            None
                        };
                        Some(RoadAhead {
                            acceleration: 2.0 * offset / f64::from(dt * dt),
                            profile,
                        })
                    })
                    .flatten();
                // With the road ahead known, the whole part of the rate's change since the
                // last step that the ground's normal turning under the wheel made is the
                // road's, not a trend of the body's.
                let turn_change = if road_ahead.is_some() {
                    f64::from(-approach.dot(hit.normal - state.normal) / axis_cosine)
                } else {
                    edge_change
                };
                // A kinematic ground's part of the rate, which it keeps over the step.
                let ground_rate = if kinematic {
                    f64::from(coming_ground_velocity.dot(hit.normal) / axis_cosine)
                } else {
                    0.0
                };
                // Nor is a kinematic ground's change of velocity from the last step to the
                // coming one a trend: Rapier moves it at one velocity over each step.
                // Carried on, a box heaving under a car at three times its ride frequency
                // moved the body 79 / 37 / 13 % more than the closed form at 15 / 30 /
                // 60 Hz.
                let ground_rate_change = f64::from(ground_jump.dot(hit.normal) / axis_cosine);
                let forward = wheel_rotation * Vec3::NEG_Z;
                // The heading the body would have without Rapier's lead.
                let heading = turned_on_ground(
                    (forward - hit.normal * forward.dot(hit.normal)).normalize_or(forward),
                    hit.normal,
                    velocity.angular,
                    -heading_lead,
                );
                let left = hit.normal.cross(heading);
                let body_spin = velocity.angular;
                // The wheel's lean on the ground: its axle (the chassis's X turned by the
                // steering, to the wheel's right) dipping below the ground's plane leans its
                // top to the right.
                let lean = (-(wheel_rotation * Vec3::X).dot(hit.normal)).clamp(-1.0, 1.0);
                let camber = f64::from(lean.asin())
                    + suspension.body_camber(mount.side, travel)
                    + suspension.steer_camber(state.steer_angle);
                let velocity = [
                    f64::from(relative.dot(heading)),
                    f64::from(relative.dot(left)),
                ];
                // A kinematic body moves at one velocity over a step and changes it between
                // steps (Rapier moves it by the velocity it is given, or by the move to the
                // pose it is given, over the whole step), where the vehicle's body changes
                // its velocity within the step. The change from the velocity it moved at
                // over the last step to the one it is given for the coming step is a step
                // at the step's start: the contact starts the step that much slower, and
                // within it only the vehicle accelerates. (Taken as accelerating within the
                // step, a deck accelerating at `a` put the braked patch `a·dt/2` behind the
                // ground's own move: at 15 Hz a car on a deck accelerating at 0.4 g slid
                // 45 mm/s over it.)
                let ground_step = [heading, left].map(|axis| f64::from(ground_jump.dot(axis)));
                // The ground's own change over the last step, which is not the vehicle's
                // acceleration either.
                let ground_change =
                    if kinematic && state.grounded && state.ground == ground_collider && dt > 0.0 {
                        let change = ground_velocity - state.ground_velocity - ground_turning * dt;
                        [heading, left].map(|axis| f64::from(change.dot(axis)))
                    } else {
                        [0.0; 2]
                    };
                // How the contact velocity changed over the last step, in the tire frame (the
                // frame the slips live in; on kinematic ground the vehicle's part of it, the
                // ground's change taken out): the wheel extrapolates it across the coming step.
                // A wheel that just touched down was falling with the body: its contact
                // accelerated with gravity along the ground (a car set down on a slope starts
                // to roll down it before its tires push back).
                let acceleration = if state.grounded && dt > 0.0 {
                    let limit = f64::from(MAX_CONTACT_ACCELERATION);
                    [0, 1].map(|i| {
                        ((velocity[i] - state.velocity[i] + ground_change[i]) / f64::from(dt))
                            .clamp(-limit, limit)
                    })
                } else {
                    [heading, left].map(|axis| f64::from(gravity.dot(axis)))
                };
                // How far the wheel centre moved over the ground since the last probe: a held
                // tire's patch is anchored by it. Not known where the centre did not move at
                // all: far from the origin a body's `f32` position cannot take a step smaller
                // than its precision (7.6 µm at 68 m), and a body creeping slower than that per
                // step stands still with a velocity its tires must still stop.
                // The ground's own move under the wheel over the last step, from its
                // velocity there now: a turning body carries the point along the chord of
                // its arc, half the turn of its velocity over the step short of the
                // velocity's end (`ω×(v − v_c)·dt²/2`); and a dynamic body whose velocity
                // changed otherwise within the step moved by what Rapier's moves left of
                // that change short of it (`Δv·(n−1)/(2n)·dt`, see `spring_lead`). At the
                // velocity alone a braked car on a deck pushed along at `a` crept over it at
                // `0.375·a·dt`.
                let turned = ground_turning * dt;
                let mut ground_moved = (ground_velocity - turned * 0.5) * dt;
                if ground_body.is_some() && state.ground_body == ground_body {
                    ground_moved -=
                        (ground_velocity - state.ground_velocity - turned) * lead as f32;
                }
                // Nor where the coordinate the heading runs most along did not change while
                // its precision is coarse: the wheel may have moved along it by less than
                // that while its other coordinates changed (a body rocking on its held tires
                // 5 km out along that axis, whose position there steps by 0.5 mm: the
                // measured move of 0 held the patch against a velocity the body could never
                // turn into a move, and a braked car kept 2-5 mm/s for good).
                let along = heading.abs().max_position();
                let unresolved = hit.center[along] == state.center[along]
                    && position_step(hit.center[along]) > COARSE_POSITION_STEP;
                // Along the tire's axes halfway through the step (the ones its slips
                // moved along on average as the wheel turned), in the heading Rapier
                // moved the body by: the body's move runs sideways ahead of its
                // velocity's course as it turns as far as its heading does.
                let displacement = (state.grounded && hit.center != state.center && !unresolved)
                    .then(|| {
                        let moved = hit.center - state.center - ground_moved;
                        // (Turned to first order in the lead's angle, hundredths of a
                        // radian at most: the axis comes out longer by half its square.)
                        let halfway = (heading + state.heading).normalize_or(heading);
                        let lead = heading_lead * body_spin.dot(hit.normal);
                        let halfway = halfway + hit.normal.cross(halfway) * lead;
                        [halfway, hit.normal.cross(halfway)].map(|axis| f64::from(moved.dot(axis)))
                    });
                // A wheel bottomed while the body's own collider reaches the ground under
                // it (a hard landing at a low rate, whose step carried the wheels into the
                // ground before they could push): Rapier's contact with the body ends the
                // body's approach beyond the gap between them, so the suspension ends only
                // what is left of it. Ending all of it again, a sedan dropped from 5 m
                // left the ground at 7.7 m/s at 15 Hz (1.5 m/s at 60 Hz) and landed on its
                // nose. (The travel is clamped to full compression in `f32`: within a
                // micron.)
                let bottomed = travel >= suspension.compression_limit - 1e-6;
                // The body may rest on another collider than the one the wheel found
                // (a wheel sunk through a thin deck into the floor under it finds the
                // floor, where the body lies on the deck), so every one near the wheels
                // counts.
                let approach = if bottomed && travel_rate > 0.0 && dt > 0.0 {
                    let gap = neighbours
                        .iter()
                        .map(|(handle, ..)| *handle)
                        .chain([hit.collider])
                        .filter_map(body_gap)
                        .reduce(f32::min);
                    gap.map_or(travel_rate, |gap| {
                        travel_rate.min(f64::from(gap.max(0.0) / dt))
                    })
                } else {
                    travel_rate
                };
                *state = WheelState {
                    grounded: true,
                    travel,
                    travel_rate,
                    suspension_force: {
                        let landing = force_over_step(
                            state,
                            [travel, approach],
                            turn_change + ground_rate_change,
                            ground_rate,
                            road_ahead.unwrap_or_default(),
                            lead,
                            f64::from(dt),
                            state.body_mass,
                            |deflection, rate| {
                                let corner = CornerInput {
                                    wheel: index,
                                    deflection,
                                    rate,
                                    mass: corner_mass,
                                    heave_mass,
                                    heave_rate,
                                    suspension,
                                };
                                finite_or(
                                    suspension_module.force(&module_ctx, &corner),
                                    0.0,
                                    report,
                                )
                            },
                        );
                        // A wheel that lands (off the ground the step before) pushes with
                        // the module's force at its approach, held over the step. At a
                        // low rate a damper's share of that can more than end the fall
                        // within the step and throw the body back up; past the force that
                        // ends its corner's approach (and holds its weight) the landing
                        // would give energy back it never took. (On fixed or kinematic
                        // ground, and on a body its support holds: a free body under the
                        // wheel gives way, and the approach it ends is not the corner's
                        // alone. A braked car on a free 400 kg slab crept at 10 mm/s at
                        // 20 Hz with the cap there.)
                        let ends =
                            corner_mass * (approach / f64::from(dt) - f64::from(gravity.dot(up)));
                        if !state.grounded
                            && ground_give.as_ref().is_none_or(GroundGive::holds_still)
                            && approach > 0.0
                            && dt > 0.0
                            && ends > 0.0
                        {
                            landing.min(ends)
                        } else {
                            landing
                        }
                    },
                    steer_angle: state.steer_angle,
                    brake_torque: state.brake_torque,
                    camber,
                    contact_point: hit.point,
                    normal: hit.normal,
                    heading,
                    ground: ground_collider,
                    ground_step,
                    ground_body,
                    ground_velocity,
                    friction: f64::from(friction),
                    velocity,
                    acceleration,
                    center: hit.center,
                    body_mass_fraction: [heading, left]
                        .map(|axis| body.mass_fraction(&hit, axis, ground_give.as_ref())),
                    displacement,
                    ..default()
                };
            }
        });

        // The anti-roll bars move load between the two sides of each axle; then the tires
        // take their loads.
        add_anti_roll_bars(
            bars.map_or(&[][..], |b| &b.0[..]),
            anti_roll_bars,
            &module_ctx,
            inputs,
            wheels,
            lead,
            report,
        );
        let inputs = &mut scratch.inputs;
        set_tire_loads(inputs, wheels, body.mass);
        body.carry_load_change(inputs, &last_loads, wheels);
        body.lateral_mobility(inputs, wheels, &gives);
    };
    // Each vehicle's modules and wheel list start loading two vehicles ahead, its wheels one
    // ahead (see `step_vehicles`).
    let far = |v: &ProbedVehicleItem| {
        prefetch::value(&*v.modules);
        prefetch::value(&v.scratch.inputs.wheels);
    };
    let near = |wheels: &WheelQueryRead, v: &ProbedVehicleItem| {
        for wheel in &v.scratch.inputs.wheels {
            if let Ok((suspension, _, state)) = wheels.get(wheel.entity) {
                prefetch::value(suspension);
                prefetch::value(state);
            }
        }
    };
    // One vehicle's probe on copies of its wheels' states, written to `written`.
    let probe_copies =
        |read: &WheelQueryRead, item: &mut ProbedVehicleItem, written: &mut WrittenStates| {
            let entities = item.scratch.inputs.wheels.iter().map(|w| w.entity);
            probe(item, &mut ProbedWheels::gather(read, entities, written));
        };
    let write_back = |wheels: &mut WheelQuery, written: &mut WrittenStates| {
        for (entity, state) in written.drain(..) {
            if let Ok((.., mut wheel)) = wheels.get_mut(entity) {
                *wheel = state;
            }
        }
    };
    let tasks = parallel.task_count(vehicles.iter().len());
    if tasks <= 1 {
        let mut written = WrittenStates::new();
        pipelined(
            vehicles.iter_mut(),
            &mut wheels,
            |_, v| far(v),
            |wheels, v| near(&wheels.as_readonly(), v),
            |wheels, mut v| {
                probe_copies(&wheels.as_readonly(), &mut v, &mut written);
                write_back(wheels, &mut written);
            },
        );
    } else {
        // Each task writes its vehicles' wheel states aside; they are written back below.
        written_states.resize_with(vehicles.iter().len(), WrittenStates::new);
        {
            let read = wheels.as_readonly();
            let mut items: Vec<_> = vehicles.iter_mut().zip(written_states.iter_mut()).collect();
            parallel::for_each(
                &mut items,
                tasks,
                || (),
                |_, (v, _)| far(v),
                |_, (v, _)| near(&read, v),
                |_, (v, written)| probe_copies(&read, v, written),
            );
        }
        for written in written_states.iter_mut() {
            write_back(&mut wheels, written);
        }
    }
    Ok(())
}
