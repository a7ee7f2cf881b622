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

use bevy::ecs::query::QueryData;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_rapier3d::parry::bounding_volume::{Aabb, BoundingVolume};
use bevy_rapier3d::parry::query::cast_shapes;
use bevy_rapier3d::parry::query::{ShapeCastOptions, ShapeCastStatus};
use bevy_rapier3d::parry::shape::Triangle;
use bevy_rapier3d::parry::shape::{Ball, Cylinder, FeatureId, Shape};
use bevy_rapier3d::prelude::*;
use bevy_rapier3d::rapier::math::Pose;
use bevy_rapier3d::rapier::prelude::{
    CoefficientCombineRule, Collider as RawCollider, ColliderHandle, ColliderSet, QueryPipeline,
    Ray, RigidBodyHandle,
};

use bevy_vehicle_drivetrain::parallel::{self, ParallelStep};
use bevy_vehicle_drivetrain::prefetch::{self, pipelined};
use smallvec::SmallVec;

use crate::body_mass::BodyMass;
use crate::components::{AntiRollBars, GroundProbe, Side, Suspension, WheelMount, WheelState};
use crate::modules::systems::{ModuleInputs, ModuleScratch, finite_or};
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

/// Half the width (m) of what a wheel probes with: its tread's for a tire shape, none for a
/// ray.
fn probe_half_width(probe: GroundProbe, mount: &WheelMount) -> f32 {
    match probe {
        GroundProbe::Ray => 0.0,
        GroundProbe::Ball | GroundProbe::Cylinder => 0.5 * mount.width,
    }
}

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
    /// The heightfield's or mesh's triangle whose face the probe touches, if it touches one
    /// inside it (world; a ray's on heightfields only).
    face: Option<Triangle>,
}

/// The shape a wheel probes the ground with.
#[derive(Clone, Copy)]
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

impl TireShape {
    /// The shape a cast sweeps (a ball for [`GroundProbe::Ball`], a cylinder otherwise) and
    /// the orientation to sweep it in.
    fn cast_geometry(&self) -> (CastShape, Quat) {
        match self.probe {
            GroundProbe::Ball => (CastShape::Ball(Ball::new(self.radius)), self.rotation),
            // A cylinder's axis is its local Y; the wheel's axle is the chassis X.
            _ => (
                CastShape::Cylinder(Cylinder::new(self.half_width, self.radius)),
                self.rotation * Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
            ),
        }
    }
}

/// The tire as a parry shape, for casts.
enum CastShape {
    Ball(Ball),
    Cylinder(Cylinder),
}

impl CastShape {
    fn shape(&self) -> &dyn Shape {
        match self {
            CastShape::Ball(ball) => ball,
            CastShape::Cylinder(cylinder) => cylinder,
        }
    }
}

/// The options of every tire cast: to the first touch within `max_time_of_impact` (m along
/// the sweep), reporting a start inside the ground.
fn cast_options(max_time_of_impact: f32) -> ShapeCastOptions {
    ShapeCastOptions {
        max_time_of_impact,
        target_distance: 0.0,
        stop_at_penetration: true,
        compute_impact_geometry_on_penetration: true,
    }
}

/// Where a wheel probes: from `top` (the wheel centre at full compression) down `up`'s
/// opposite for `range` (m).
#[derive(Clone, Copy)]
struct Sweep {
    top: Vec3,
    up: Vec3,
    range: f32,
    compression_limit: f32,
}

impl Sweep {
    /// The sweep of a wheel mounted at `mount` on a chassis at `transform` (whose up axis is
    /// `up`).
    fn of(transform: &Transform, up: Vec3, mount: &WheelMount, suspension: &Suspension) -> Self {
        Sweep {
            top: transform.translation
                + transform.rotation * mount.position
                + up * suspension.compression_limit as f32,
            up,
            range: (suspension.compression_limit + suspension.extension_limit) as f32,
            compression_limit: suspension.compression_limit as f32,
        }
    }

    /// A box holding everything a tire of radius `radius` and half-width `half_width` (m)
    /// touches along the sweep, whatever its steering angle.
    fn bounds(&self, radius: f32, half_width: f32) -> Aabb {
        let reach = Vec3::splat(radius + half_width);
        let bottom = self.top - self.up * self.range;
        Aabb::new(self.top.min(bottom) - reach, self.top.max(bottom) + reach)
    }
}

/// The colliders near a vehicle's wheels, each with its bounding box: found with one
/// broad-phase query for the whole vehicle, then picked from by each wheel
/// ([`fast_contact`]).
type Neighbours<'a> = SmallVec<[(ColliderHandle, &'a RawCollider, Aabb); 8]>;

/// The colliders (through the query pipeline's filter) whose broad-phase boxes meet `area`.
fn neighbours<'a>(pipeline: &'a QueryPipeline<'_>, area: Aabb) -> Neighbours<'a> {
    pipeline
        .intersect_aabb_conservative(area)
        .map(|(handle, collider)| (handle, collider, collider.compute_aabb()))
        .collect()
}

/// The vehicle's `neighbours` whose broad-phase boxes meet a tire's sweep bounds `swept`.
fn meeting<'a>(
    neighbours: &'a Neighbours,
    swept: &'a Aabb,
) -> impl Iterator<Item = &'a (ColliderHandle, &'a RawCollider, Aabb)> {
    neighbours
        .iter()
        .filter(move |(_, _, aabb)| aabb.intersects(swept))
}

/// The contact point on the wheel's mid-plane, for a witness point anywhere across the tread.
fn on_mid_plane(tire: &TireShape, witness: Vec3, center: Vec3) -> Vec3 {
    let axle = tire.rotation * Vec3::X;
    witness - axle * (witness - center).dot(axle)
}

/// The fast, exact contact for the common case: a single collider reaches into the tire's
/// sweep. Its contact then comes from the collider alone ([`plane_contact`] for a convex one,
/// [`triangle_contact`] for a heightfield or triangle mesh) without a cast through the world:
/// the tire's swept volume lies inside its bounding box, and of the vehicle's `neighbours`
/// (which hold every collider near its wheels) only this one's box meets it. Where several
/// boxes meet it, each collider is touched on its own ([`seam_contact`]).
///
/// `swept` is the sweep's bounds for the tire (`sweep.bounds(tire.radius, tire.half_width)`).
/// `Some(None)` is an exact miss; `None` means no fast answer, and the caller casts the tire
/// shape through the world.
fn fast_contact(
    neighbours: &Neighbours,
    tire: &TireShape,
    sweep: &Sweep,
    swept: &Aabb,
) -> Option<Option<Hit>> {
    let Sweep { top, up, .. } = *sweep;
    let mut near = meeting(neighbours, swept);
    let &(handle, collider, _) = near.next()?;
    let (hit, handle) = if near.next().is_some() {
        seam_contact(neighbours, swept, tire, sweep)?
    } else {
        (face_contact(collider, tire, sweep)?, handle)
    };
    Some(hit.map(|touch| {
        let center = top - up * touch.travel;
        Hit {
            travel: sweep.compression_limit - touch.travel,
            center,
            point: on_mid_plane(tire, touch.point, center),
            normal: touch.normal,
            collider: handle,
            face: touch.face,
        }
    }))
}

/// The triangle (world) of the heightfield `collider` whose face a ray hit as `feature`, if
/// it hit one (not an edge or a vertex) and the collider is a heightfield.
fn heightfield_face(
    colliders: &ColliderSet,
    collider: ColliderHandle,
    feature: FeatureId,
) -> Option<Triangle> {
    let FeatureId::Face(id) = feature else {
        return None;
    };
    let collider = colliders.get(collider)?;
    let face = collider.shape().as_heightfield()?.triangle_at_id(id)?;
    Some(face.transformed(collider.position()))
}

/// Whether a tire of `reach` (m, its radius and half-width together) whose contact `hit`
/// slides by `shift` (m, world, along the ground) stays on the one flat face it touches now,
/// well inside it, with nothing else near: of the vehicle's `neighbours`, only the collider
/// hit meets the tire's sweep bounds there (`swept`), and the contact moved by `shift` lies
/// at least `reach` inside the edges of the box's face it is on, or of the heightfield's
/// triangle it touches inside ([`Hit::face`]). The road ahead of such a wheel is that face's
/// plane, known without probing it. (A mesh's triangles are left out: a mesh can reach over
/// the triangle from above, where a heightfield cannot.)
fn stays_on_face(
    neighbours: &Neighbours,
    hit: &Hit,
    swept: &Aabb,
    shift: Vec3,
    reach: f32,
) -> bool {
    let mut near = meeting(neighbours, swept);
    let (Some(&(handle, collider, _)), None) = (near.next(), near.next()) else {
        return false;
    };
    if handle != hit.collider {
        return false;
    }
    let point = hit.point + shift;
    let shape = collider.shape();
    if let Some(cuboid) = shape.as_cuboid() {
        // How far inside each pair of the box's faces the point lies (m): about 0 across the
        // face it is on, at least `reach` along the two others.
        let inside = cuboid.half_extents - collider.position().inverse_transform_point(point).abs();
        let across = inside.min_position();
        inside[across].abs() <= PLANE_CONTACT_TOLERANCE
            && (0..3).all(|axis| axis == across || inside[axis] >= reach)
    } else if let (Some(face), Some(_)) = (hit.face, shape.as_heightfield()) {
        let normal = (face.b - face.a).cross(face.c - face.a).normalize_or_zero();
        normal != Vec3::ZERO
            && inside_triangle(&face, normal, hit.point, -ON_EDGE_TOLERANCE)
            && inside_triangle(&face, normal, point, reach)
    } else {
        false
    }
}

/// Whether `x` (in the plane of `triangle`, whose unit normal along its winding is `normal`)
/// lies at least `margin` (m) inside each of its edges (outside by at most `−margin` where
/// `margin` is negative). `(q − p) × (x − p) · n` is the edge's length times how far inside
/// it `x` lies.
fn inside_triangle(triangle: &Triangle, normal: Vec3, x: Vec3, margin: f32) -> bool {
    let Triangle { a, b, c } = *triangle;
    [(a, b), (b, c), (c, a)]
        .iter()
        .all(|&(p, q)| (q - p).cross(x - p).dot(normal) >= margin * (q - p).length())
}

/// The contact of the tire with one collider from its faces alone ([`plane_contact`] for a
/// convex one, [`triangle_contact`] for a heightfield or triangle mesh): `Some(None)` for an
/// exact miss, `None` for no answer from the faces (an edge or a corner comes first).
fn face_contact(collider: &RawCollider, tire: &TireShape, sweep: &Sweep) -> Option<Option<Touch>> {
    if collider.shape().is_convex() {
        Some(Some(plane_contact(collider, tire, sweep)?))
    } else {
        triangle_contact(collider, tire, sweep)
    }
}

/// How much sooner (m of travel) than a face contact an edge of another collider may touch the
/// tire and still count as level with that face ([`seam_contact`]): 1 mm.
const SEAM_TOLERANCE: f32 = 1e-3;

/// The contact of the tire where several colliders reach into its sweep (`swept`, the sweep's
/// bounds): a road of boxes laid end to end, terrain in tiles. Each collider is touched on its
/// own, from its faces where they answer and by a cast against it alone where they do not
/// (the tire over its edge); the first touch is the contact. But where that touch is another
/// collider's edge level with a face that the tire touches (within [`SEAM_TOLERANCE`]), the
/// face is the contact: the edge of one box butted against the next is not part of the road's
/// surface. Cast against the whole world, the tire met each such seam as a corner, whose
/// normal tilted by a degree or more read the car's speed as a damper's rate, and a car at
/// 30 m/s over a road of 2 m boxes lost 90 % of a wheel's load for a step (3 kN).
///
/// Returns the touch and its collider, `Some((None, _))` for an exact miss, or `None` for no
/// answer (the wheel starts inside a collider, or a cast failed): the caller then casts the
/// tire through the world.
fn seam_contact(
    neighbours: &Neighbours,
    swept: &Aabb,
    tire: &TireShape,
    sweep: &Sweep,
) -> Option<(Option<Touch>, ColliderHandle)> {
    let Sweep { top, up, range, .. } = *sweep;
    let (tire_shape, rotation) = tire.cast_geometry();
    // The first touch on a face, and the first touch of any kind.
    let mut face: Option<(Touch, ColliderHandle)> = None;
    let mut first: Option<(Touch, ColliderHandle)> = None;
    let sooner = |touch: &Touch, best: &Option<(Touch, ColliderHandle)>| {
        best.is_none_or(|(b, _)| touch.travel < b.travel)
    };
    for &(handle, collider, _) in meeting(neighbours, swept) {
        let touch = match face_contact(collider, tire, sweep) {
            Some(touch) => {
                if let Some(touch) = touch.filter(|t| sooner(t, &face)) {
                    face = Some((touch, handle));
                }
                touch
            }
            None => {
                let pose = collider.position();
                let cast = Pose::from_parts(top, rotation);
                // The witness and normal are in the collider's frame.
                cast_touch(pose, collider.shape(), &cast, -up, &tire_shape, range)?.map(|t| Touch {
                    travel: t.travel,
                    point: pose.transform_point(t.point),
                    normal: (pose.rotation * t.normal).normalize_or(up),
                    face: None,
                })
            }
        };
        if let Some(touch) = touch.filter(|t| sooner(t, &first)) {
            first = Some((touch, handle));
        }
    }
    let Some((first, first_handle)) = first else {
        return Some((None, ColliderHandle::invalid()));
    };
    Some(match face {
        Some((face, handle)) if face.travel - first.travel <= SEAM_TOLERANCE => {
            (Some(face), handle)
        }
        _ => (Some(first), first_handle),
    })
}

/// Where the tire sweep first touches one collider.
#[derive(Clone, Copy, Debug)]
struct Touch {
    /// Travel down the sweep from its top (m).
    travel: f32,
    /// Contact point.
    point: Vec3,
    /// Ground normal (unit, pointing out of the ground toward the wheel).
    normal: Vec3,
    /// The heightfield's or mesh's triangle whose face the tire touches, if it touches one
    /// inside it (same frame as `point`).
    face: Option<Triangle>,
}

/// The contact of the tire with a convex collider: a ray down the suspension axis finds a face,
/// and the tire shape touches that face's plane at its support point. Exact when the support
/// point lies on the collider (the tire does not hang over an edge); `None` otherwise, or when
/// the ray finds nothing or the wheel starts inside the collider.
///
/// The touch is in world space.
fn plane_contact(collider: &RawCollider, tire: &TireShape, sweep: &Sweep) -> Option<Touch> {
    let Sweep { top, up, range, .. } = *sweep;
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
    let point = top - up * t + support;
    let projection = collider
        .shape()
        .project_point(collider.position(), point, true);
    if (projection.point - point).length() > PLANE_CONTACT_TOLERANCE {
        return None;
    }
    Some(Touch {
        travel: t,
        point,
        normal,
        face: None,
    })
}

/// The exact contact of the tire with a heightfield or triangle mesh, triangle by triangle.
///
/// The tire cannot touch a triangle before it touches the triangle's plane, so the travel at
/// which its support point reaches each plane is a lower bound for that triangle, and it is
/// the triangle's exact contact when that point lies inside the triangle. The first such face
/// contact bounds the answer; only triangles whose plane is reached sooner but not inside them
/// (an edge or a corner comes first, or a steep face) are cast against exactly, one triangle
/// each. On smooth ground that is none at all.
///
/// Returns the touch (world space), `Some(None)` for an exact miss, or `None` for no answer
/// (another shape, or the wheel starts inside the ground).
fn triangle_contact(
    collider: &RawCollider,
    tire: &TireShape,
    sweep: &Sweep,
) -> Option<Option<Touch>> {
    let Sweep { top, up, range, .. } = *sweep;
    let pose = collider.position();
    // Everything in the collider's frame.
    let top = pose.inverse_transform_point(top);
    let up = pose.inverse_transform_vector(up);
    let tire = TireShape {
        rotation: pose.rotation.inverse() * tire.rotation,
        ..*tire
    };
    let reach = Vec3::splat(tire.radius + tire.half_width);
    let bottom = top - up * range;
    let swept = Aabb::new(top.min(bottom) - reach, top.max(bottom) + reach);
    // The first touch found so far (collider frame).
    let mut best: Option<Touch> = None;
    // Triangles to cast against exactly, with their lower bound on the travel.
    let mut exact: SmallVec<[(f32, Triangle); 8]> = SmallVec::new();
    // A triangle without area (or with a non-finite vertex) has no plane to bound its contact:
    // the caller's cast through the world handles it.
    let mut degenerate = false;
    let mut visit = |triangle: &Triangle| {
        let Triangle { a, b, c } = *triangle;
        let Some(wound) = (b - a).cross(c - a).try_normalize() else {
            degenerate = true;
            return;
        };
        // The side the tire comes from (mesh triangles are two-sided).
        let normal = if wound.dot(up) < 0.0 { -wound } else { wound };
        let facing = normal.dot(up);
        let support = tire.support(-normal);
        let (Some(support), true) = (support, facing > 0.2) else {
            exact.push((f32::NEG_INFINITY, *triangle));
            return;
        };
        let t = (top + support - a).dot(normal) / facing;
        if t > range || best.is_some_and(|b| t >= b.travel) {
            return;
        }
        let point = top - up * t + support;
        // On an edge counts as inside (within rounding): a point on the diagonal shared by two
        // level triangles, rounded outside both, was cast against exactly, and the cast's
        // normal at that edge strayed by up to 3°, which kept a parked car rocking.
        let inside = inside_triangle(triangle, wound, point, -ON_EDGE_TOLERANCE);
        if inside && t >= 0.0 {
            best = Some(Touch {
                travel: t,
                point,
                normal,
                face: Some(*triangle),
            });
        } else {
            exact.push((t, *triangle));
        }
    };
    let shape = collider.shape();
    if let Some(heightfield) = shape.as_heightfield() {
        heightfield.map_elements_in_local_aabb(&swept, &mut |_, triangle| visit(triangle));
    } else if let Some(mesh) = shape.as_trimesh() {
        for id in mesh.bvh().intersect_aabb(&swept) {
            visit(&mesh.triangle(id));
        }
    } else {
        return None;
    }
    if degenerate {
        return None;
    }
    let (tire_shape, rotation) = tire.cast_geometry();
    for (bound, triangle) in exact {
        let limit = best.map_or(range, |b| b.travel);
        // A triangle whose plane the tire reaches no sooner than the best touch, within
        // rounding, cannot touch it sooner: on a plane of level triangles each neighbour's
        // bound ties with the touch, and a cast against it met its edge, with the edge's
        // normal (off by 3° on a slope of 1 m cells: a parked car kept rocking).
        if bound >= limit - ON_EDGE_TOLERANCE {
            continue;
        }
        // Nor can a triangle lying wholly on the far side of the plane of a face the tire
        // touches inside (a ridge's far slope, whose own plane reaches back above the face):
        // until it touches that plane the tire lies wholly on its near side.
        if let Some(face) = best.filter(|b| b.face.is_some()) {
            let Triangle { a, b, c } = triangle;
            if [a, b, c]
                .iter()
                .all(|&p| (p - face.point).dot(face.normal) <= ON_EDGE_TOLERANCE)
            {
                continue;
            }
        }
        let cast = Pose::from_parts(top, rotation);
        if let Some(touch) = cast_touch(&Pose::IDENTITY, &triangle, &cast, -up, &tire_shape, limit)?
        {
            // Mesh triangles are two-sided: the normal faces the tire.
            let normal = if touch.normal.dot(up) < 0.0 {
                -touch.normal
            } else {
                touch.normal
            };
            best = Some(Touch {
                normal: normal.normalize_or(up),
                face: None,
                ..touch
            });
        }
    }
    Some(best.map(|b| Touch {
        travel: b.travel,
        point: pose.transform_point(b.point),
        normal: pose.rotation * b.normal,
        face: b.face.map(|face| face.transformed(pose)),
    }))
}

/// Casts the tire shape `tire` from `from` along `direction` (unit) for up to `limit` (m)
/// against `shape` at `pose`: the touch in `shape`'s own frame (travel along the cast, witness
/// point, normal as the cast gives it), `Some(None)` for a miss, or `None` where the cast has
/// no answer (the tire starts inside the shape, a number that is not finite, a shape parry
/// cannot cast against).
fn cast_touch(
    pose: &Pose,
    shape: &dyn Shape,
    from: &Pose,
    direction: Vec3,
    tire: &CastShape,
    limit: f32,
) -> Option<Option<Touch>> {
    let hit = cast_shapes(
        pose,
        Vec3::ZERO,
        shape,
        from,
        direction,
        tire.shape(),
        cast_options(limit),
    )
    .ok()?;
    let Some(hit) = hit else {
        return Some(None);
    };
    let finite =
        hit.time_of_impact.is_finite() && hit.witness1.is_finite() && hit.normal1.is_finite();
    if hit.status == ShapeCastStatus::PenetratingOrWithinTargetDist || !finite {
        return None;
    }
    Some(Some(Touch {
        travel: hit.time_of_impact,
        point: hit.witness1,
        normal: hit.normal1,
        face: None,
    }))
}

/// How far (m) outside a triangle's edge [`triangle_contact`]'s point may lie and still count
/// as inside it, and how much sooner than the best touch a triangle's plane must be reached
/// for the triangle to be cast against: rounding.
const ON_EDGE_TOLERANCE: f32 = 1e-5;

/// How far (m) the fast contact's point may lie from the collider's surface and still count as
/// on it.
const PLANE_CONTACT_TOLERANCE: f32 = 2e-3;

/// Casts the tire shape down the sweep through the world: exact on any ground.
fn cast_tire(pipeline: &QueryPipeline<'_>, tire: &TireShape, sweep: &Sweep) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let (shape, shape_rotation) = tire.cast_geometry();
    pipeline
        .cast_shape(
            &Pose::from_parts(top, shape_rotation),
            -up,
            shape.shape(),
            cast_options(range),
        )
        .map(|(collider, hit)| {
            let center = top - up * hit.time_of_impact;
            // witness1/normal1 belong to the hit collider, in world space. A cylinder touching
            // flat ground touches along a line across the tread, and the witness point may be
            // anywhere on it; the patch's centre lies on the wheel's mid-plane.
            let point = on_mid_plane(tire, hit.witness1, center);
            // A cast that starts inside the ground (the wheel went past full compression in
            // one step) has no normal of its own: see `penetration_normal`.
            let normal = if hit.status == ShapeCastStatus::PenetratingOrWithinTargetDist {
                penetration_normal(pipeline, collider, center, up)
            } else {
                hit.normal1.normalize_or(up)
            };
            Hit {
                travel: sweep.compression_limit - hit.time_of_impact,
                center,
                point,
                normal,
                collider,
                face: None,
            }
        })
}

/// The ray probe's contact: a ray down the suspension axis from the sweep's top, as long as
/// the sweep and the wheel's `radius` (m). Exact on any ground.
///
/// A wheel whose centre went below the ground's surface within one step (a hard landing at a
/// low rate, the body on the ground) must still find it. A ray that starts inside a solid
/// collider hits at once with no normal, and takes the way out of the collider, as a tire
/// shape's cast does; one that starts below a heightfield's surface sees nothing, and a
/// heightfield is then looked for from as far above the top as the probe reaches below it,
/// its contact bottoming the wheel. Left without either, the wheel counted as off the ground
/// and the body stayed down: a tracked excavator dropped at 24 Hz rested on its belly with
/// every road wheel unloaded, on a box and on a heightfield.
fn ray_contact(
    pipeline: &QueryPipeline<'_>,
    colliders: &ColliderSet,
    sweep: &Sweep,
    radius: f32,
) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let reach = range + radius;
    // A touch `time` (m) down the ray from `origin`, level with the top (negative above it).
    let hit = |origin: Vec3, collider: ColliderHandle, time: f32, normal: Vec3, feature| {
        let point = origin - up * time;
        Hit {
            travel: sweep.compression_limit + radius - time,
            center: point + up * radius,
            point,
            normal,
            collider,
            face: heightfield_face(colliders, collider, feature),
        }
    };
    // Parry misses a ray straight down a heightfield that starts within rounding of a cell's
    // edge on its near side (it looks in the cell past the edge and cannot step back): a
    // wheel parked at z = 1.19 m beside a cell line at z = 0 lost its ground at 1e-7 m short
    // of it. A ray that finds nothing is cast again 1 mm aside.
    let aside = {
        let v = Vec3::new(1e-3, 0.0, 1e-3);
        v - up * v.dot(up)
    };
    let cast = |origin: Vec3, heightfield_only: bool| {
        pipeline
            .cast_ray_and_get_normal(&Ray::new(origin, -up), reach, true)
            .filter(|(collider, found)| {
                !heightfield_only
                    || (found.time_of_impact > 0.0
                        && colliders
                            .get(*collider)
                            .is_some_and(|c| c.shape().as_heightfield().is_some()))
            })
            .map(|(collider, found)| (origin, collider, found))
    };
    if let Some((origin, collider, found)) = cast(top, false).or_else(|| cast(top + aside, false)) {
        let normal = if found.time_of_impact <= 0.0 {
            penetration_normal(pipeline, collider, origin, up)
        } else {
            found.normal
        };
        return Some(hit(
            origin,
            collider,
            found.time_of_impact,
            normal,
            found.feature,
        ));
    }
    // Only a heightfield from above: below its surface is inside the terrain, where below a
    // mesh's may be open air (under a bridge) and a solid's was answered by the first ray.
    let above = top + up * reach;
    cast(above, true)
        .or_else(|| cast(above + aside, true))
        .map(|(origin, collider, found)| {
            hit(
                origin - up * reach,
                collider,
                found.time_of_impact - reach,
                found.normal,
                found.feature,
            )
        })
}

/// The ground's normal under a wheel whose tire starts inside `collider` (the body sank past
/// full compression in one step): from the nearest point of the collider's surface to the
/// wheel centre `center` (out of the collider, if the centre is inside it), the way the ground
/// pushes; the suspension axis `up` where that is not defined (the centre on the surface).
/// Where it faces less than [`MIN_SUPPORT_FACING`] along `up` (a wall, an edge, the ground
/// under a car on its side), the wheel carries no load (see `probe_ground`).
///
/// Taking the axis on flat ground too, as this did before, gave a body pitched by a hard
/// landing a load along its tilted axis: a push along the road with nothing to take it, and a
/// travel rate read off the car's own speed. At 15 Hz a car that landed nose first off a 2 m
/// ledge rode on with its body 0.3 m low, its dampers reading 0.95 m/s of rebound, and sped up
/// by 0.4 m/s² in neutral.
fn penetration_normal(
    pipeline: &QueryPipeline<'_>,
    collider: ColliderHandle,
    center: Vec3,
    up: Vec3,
) -> Vec3 {
    let Some(collider) = pipeline.colliders.get(collider) else {
        return up;
    };
    let projection = collider
        .shape()
        .project_point(collider.position(), center, false);
    // A heightfield is not solid to parry, which never reports a point inside it; below its
    // surface is inside the terrain. (Taken for outside, a wheel sunk below a heightfield
    // was pushed down into it, which no suspension can do: a tracked excavator with shape
    // probes dropped at 24 Hz lay on its belly with every road wheel unloaded.)
    let inside = projection.is_inside
        || (collider.shape().as_heightfield().is_some()
            && (projection.point - center).dot(up) > 0.0);
    let outward = if inside {
        projection.point - center
    } else {
        center - projection.point
    };
    outward.normalize_or(up)
}

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

/// The weight of the travel's acceleration in the deflection a suspension's spring is taken
/// at, in steps squared: the spring acts at the travel `dt²/12·a` ahead of the step's start
/// (`a` the travel's acceleration over the step), as in Numerov's method.
///
/// Rapier holds the suspension's force over the step and moves the body as symplectic Euler
/// does (see [`spring_lead`]), which rings a spring fast by `(ω·dt)²/24` and throws the body
/// past `ω·dt = 2`. Solved with the acceleration its own force makes, a spring taken this
/// far ahead rings true to fourth order in `ω·dt` (1.1 % fast at `ω·dt = 1.46`, where
/// symplectic Euler runs 12 % fast) and stays stable to `ω·dt = √6`.
pub const SPRING_STEP_WEIGHT: f64 = 1.0 / 12.0;

/// The suspension's force held over the coming fixed step of `dt` (s), solved together with
/// the travel's acceleration it makes over the step (since 2026-12-03); `force(deflection,
/// rate)` is the suspension module's force (N) at a deflection (m) and travel rate (m/s,
/// both compression positive), `travel` and `rate` the wheel's now, `lead` the
/// [`spring_lead`] (s), `mass` the wheel's share of the body's mass (kg), `last` the wheel's
/// state after the last step.
///
/// Rapier holds the force over the step and moves the body as symplectic Euler does (see
/// [`spring_lead`]): a spring acting on the step's start rings the body fast by
/// `(ω·dt)²/24` and throws it past `ω·dt = 2`, and a damper acting on it must be held down
/// to what the spring leaves of that budget. Here the force `F` is the module's at the
/// deflection `travel + lead·rate + dt²/12·a` (see [`SPRING_STEP_WEIGHT`]) and the rate
/// `rate + dt/2·a` (the step's middle), with `a = a₀ − F/m` the travel's acceleration over
/// the step: `a₀` what the rest of the vehicle's loads give it (its weight, the other
/// wheels, the tires, load transfer), the last step's measured acceleration with this
/// suspension's force of that step taken back out. So the spring rings true to fourth order
/// in `ω·dt` (1.1 % fast at `ω·dt = 1.46`, where symplectic Euler runs 12 % fast) and a
/// damper of any strength is stable on the mass (the tires' loads hold it to
/// [`MAX_DAMPING_PER_STEP`](crate::MAX_DAMPING_PER_STEP)); the spring's lead takes about
/// `(ω·dt)²/12` of the damping ratio away (8 % at `ω·dt = 1`). Until then the damper took the
/// step's middle rate predicted from the force at the step's start, and was held down to
/// what the spring left (see [`Suspension::force_at_step`]).
///
/// Two calls to `force` solve it: at the last step's force, then at the force that gave, and
/// the secant through the two (exact for a module linear in deflection and rate). A module
/// whose force does not grow with them (a slope of the wrong sign) takes the second call's
/// force. On the step a wheel touches down (no last step's rate) it is one call at the
/// step's start. A jolt (a landing, a kerb) is not a trend: the acceleration is taken at
/// most [`MAX_CONTACT_ACCELERATION`], and `jump` (m/s), the part of the rate's change since
/// the last step that an edge's turn of the ground's normal made (see [`EDGE_TURN_COSINE`])
/// or a kinematic ground's change of velocity between steps, is left out of it. Carried on,
/// the jump of the rate where a tire met a 10 cm kerb at 5 m/s threw the body up at 1.13 /
/// 0.47 m/s at 15 / 30 Hz against 0.38 at 240 Hz (0.76 / 0.40 with the edge's jump left out).
///
/// `road` is what the road's shape adds to the travel over the coming step, from a probe
/// where the wheel's slide over the ground takes it by the step's end: an acceleration (m/s²),
/// twice how far the road there lies above the plane under the wheel now over `dt²`, so
/// that the damper takes the road's mean rate over the step; and, where the two planes meet
/// at an edge within the step or lie apart without meeting within it (a step down or up),
/// the road's profile over the step in straight parts ([`RoadProfile`]): the force is then
/// the mean of the module's over the parts. Where it is known, `jump` holds
/// the whole part of the rate's change that the ground's normal turning under the wheel
/// made (the road's shape met over the last step), not only an edge's. Taken from the last
/// two steps instead, the road's rate ran ahead of its mean over the step as the road turned
/// faster: a 10 cm bump 0.6 m long at 15 m/s threw the body up at 3.5 times 240 Hz's rate at
/// 30 Hz (0.81 times with the probe ahead), a sinusoidal road met at 8 Hz moved it 43 % more
/// at 30 Hz and 15 % more at 60 Hz (21 % and 6 % less with it), and the kerb above at 15 Hz
/// 0.36 m/s with it.
///
/// `ground_rate` (m/s) is a kinematic ground's part of the rate: Rapier moves that ground at
/// one velocity over the whole step, so its travel is taken at the step's middle, where the
/// body's own is taken at `lead`.
///
/// The mass is the wheel's share of the body's in proportion to its load, which is exact for
/// the body's heave. Solving all the corners together through the body's mobility (heave,
/// pitch and roll at once) was tried the same day and dropped: the tires take their loads as
/// given over the step, and the default car dropped from 5 m then kept swaying and rolling
/// on its held tires at 2 Hz (0.13 rad/s, 0.08 m/s) 5 s after landing at 60 Hz.
fn force_over_step(
    last: &WheelState,
    [travel, rate]: [f64; 2],
    jump: f64,
    ground_rate: f64,
    road: RoadAhead,
    lead: f64,
    dt: f64,
    mass: f64,
    mut force: impl FnMut(f64, f64) -> f64,
) -> f64 {
    let deflection = travel + lead * (rate - ground_rate) + 0.5 * dt * ground_rate;
    if !last.grounded || dt <= 0.0 || mass.is_nan() || mass <= 0.0 {
        return force(deflection, rate);
    }
    let limit = f64::from(MAX_CONTACT_ACCELERATION);
    let last_force = last.suspension_force - last.anti_roll_force;
    let others = (rate - last.travel_rate - jump) / dt + last_force / mass;
    if !others.is_finite() {
        return force(deflection, rate);
    }
    // The module's force over the step with the force `f` held: at the step's deflection and
    // mean rate, or, where the road's profile over the step is known in parts (an edge, a
    // step down or up), the mean of its force over the parts, each at the road's rate and
    // its offset from the step's mean over that part. A module whose force is not linear in
    // the rate (one that cannot pull, a bump stop) gives over the parts what it would not at
    // their mean: a car leaving a 10° ramp's top 0.9 into a 15 Hz step (the front wheels
    // rolling over the edge at 15 m/s) took its push up the ramp at the mean of that push
    // and the rebound past the edge, where the damper cannot pull, and left 16 % slower than
    // at 240 Hz.
    let mut at = |f: f64| {
        let a = (others - f / mass).clamp(-limit, limit) + road.acceleration;
        let d = deflection + SPRING_STEP_WEIGHT * dt * dt * a;
        let r = rate + 0.5 * dt * a;
        match &road.profile {
            None => force(d, r),
            Some(profile) => {
                let (mean, mean_rate) = (profile.mean_offset(), profile.end() / dt);
                profile
                    .parts()
                    .map(|(weight, offset, rise)| {
                        weight * force(d + offset - mean, r + rise / (weight * dt) - mean_rate)
                    })
                    .sum()
            }
        }
    };
    let first = at(last_force);
    let second = at(first);
    // The module's force falls by `s` for each newton asked of it (its stiffness and damping
    // over the mass); the force that gives itself back lies between the first guess and the
    // last step's force.
    let s = (first - second) / (first - last_force);
    if s >= 0.0 && s.is_finite() {
        (first + s * last_force) / (1.0 + s)
    } else {
        second
    }
}

/// What the road ahead adds to a wheel's travel over the coming step (see
/// [`force_over_step`]).
#[derive(Clone, Copy, Debug, Default)]
struct RoadAhead {
    /// The travel's acceleration the road's shape adds over the step (m/s²): twice the
    /// road's offset at the step's end over `dt²`.
    acceleration: f64,
    /// The road's offset at points within the step, where it turns at an edge or steps
    /// within it.
    profile: Option<RoadProfile>,
}

/// The road under a wheel over a step, as straight pieces between points probed within it:
/// each point how far into the step the wheel reaches it (0..1) and the road's offset there
/// from the plane under the wheel now, along the suspension's travel (m, compression
/// positive). It starts at (0, 0) and ends at (1, the offset at the step's end).
///
/// An edge within the step is one point, where the two planes meet. Where the planes do not
/// meet within the step but lie apart (a step down or up: a deck's end, a kerb, the corner a
/// tire is rounding) the road is probed at [`ROAD_SAMPLES`]: rolling off a 5 cm deck at 10
/// m/s a tire rounds its corner over half of a 30 Hz step and lands on the road below for
/// the rest. Taken at the step's mean rate, a rear wheel starting the step on the corner
/// went without load all step (its damper would have pulled), and a front wheel starting it
/// on the deck, whose plane is parallel to the road below, kept its full load all step.
#[derive(Clone, Copy, Debug)]
struct RoadProfile {
    /// The points, `len` of them, from (0, 0) to (1, end).
    points: [(f64, f64); ROAD_SAMPLES.len() + 2],
    /// How many of `points` are used.
    len: usize,
}

impl RoadProfile {
    /// The profile through `within` (points inside the step, rising in fraction) to `end`,
    /// the offset at the step's end (m).
    fn new(within: &[(f64, f64)], end: f64) -> Self {
        let mut points = [(0.0, 0.0); ROAD_SAMPLES.len() + 2];
        let within = &within[..within.len().min(ROAD_SAMPLES.len())];
        points[1..=within.len()].copy_from_slice(within);
        points[within.len() + 1] = (1.0, end);
        Self {
            points,
            len: within.len() + 2,
        }
    }

    /// The offset at the step's end (m).
    fn end(&self) -> f64 {
        self.points[self.len - 1].1
    }

    /// Each straight piece: its share of the step, its mean offset (m) and how far the road
    /// rises over it (m).
    fn parts(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        self.points[..self.len]
            .windows(2)
            .map(|w| (w[1].0 - w[0].0, 0.5 * (w[0].1 + w[1].1), w[1].1 - w[0].1))
            .filter(|(weight, _, _)| *weight > 0.0)
    }

    /// The road's mean offset over the step (m).
    fn mean_offset(&self) -> f64 {
        self.parts()
            .map(|(weight, offset, _)| weight * offset)
            .sum()
    }
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
struct GroundGive {
    /// The ground body's entity.
    body: Entity,
    /// Inverse mass per world axis (1/kg; 0 on a locked axis).
    inverse_mass: Vec3,
    /// Centre of mass (world, m).
    center: Vec3,
    /// Inverse inertia tensor (world frame, 1/(kg·m²); 0 about locked axes).
    inverse_inertia: Mat3,
}

impl GroundGive {
    /// The give of the dynamic body `rb` (entity `body`); none if `held`.
    fn of(body: Entity, rb: &bevy_rapier3d::rapier::dynamics::RigidBody, held: bool) -> Self {
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
    fn holds_still(&self) -> bool {
        self.inverse_mass == Vec3::ZERO && self.inverse_inertia == Mat3::ZERO
    }

    /// Whether the dynamic body `rb` (`handle`) is held by more than its inertia: by a joint,
    /// or by friction where it touches anything but the vehicle (`vehicle`) on it. Friction
    /// holds a body under a tire until the tire's push overcomes it, so the small pushes of a
    /// car at rest on it do not move it as they would a free body; only a body whose every
    /// contact is frictionless (a slab on ice, or on nothing) gives as a free body does.
    fn held(
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
struct BodyInertia {
    /// Mass (kg).
    mass: f32,
    /// Centre of mass (world, m).
    center: Vec3,
    /// Inverse inertia tensor (world frame, 1/(kg·m²)); zero about axes with no inertia
    /// (rotation locked).
    inverse_inertia: Mat3,
}

impl BodyInertia {
    fn new(mass: &MassProperties, transform: &Transform) -> Self {
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
    fn mass_fraction(&self, hit: &Hit, axis: Vec3, ground: Option<&GroundGive>) -> f64 {
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
    fn carry_load_change(
        &self,
        inputs: &ModuleInputs,
        last_loads: &[f64],
        wheels: &mut dyn ProbedWheels,
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
    fn lateral_mobility(
        &self,
        inputs: &mut ModuleInputs,
        wheels: &dyn ProbedWheels,
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
    fn heave_mass(&self, wheels: usize) -> f64 {
        f64::from(self.mass) / wheels.max(1) as f64
    }

    /// The body's mass per wheel that the suspension springs at `mounts` (world, m) ring
    /// along `up` (world, unit) in the stiffest of the body's modes on them, taking their
    /// springs alike (kg): the mass over the number of wheels in heave, and `1/λ` for the
    /// pitch and roll, `λ` the largest eigenvalue of `I⁻¹·Σ uᵢuᵢᵀ` with `uᵢ = dᵢ × up` and
    /// `dᵢ` the mount's offset from the centre of mass (a spring `k` at each wheel rolls the
    /// body at `ω² = k·λ`). Heave and rotation are taken apart. A body that is narrow for
    /// its roll inertia rolls faster than it heaves: 0.73 of the mass per wheel for the
    /// excavator and the hatchback. See [`Suspension::force_at_step`].
    fn corner_mass(&self, up: Vec3, mounts: impl Iterator<Item = Vec3>) -> f64 {
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

/// Probes the ground and computes suspension forces and tire contacts for every vehicle.
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

/// The states a vehicle's probe wrote in a task, by wheel, for the system to write back.
type WrittenStates = SmallVec<[(Entity, WheelState); 4]>;

/// A vehicle's wheels as its ground probe reads and writes them: in place on the system's own
/// thread ([`WheelQuery`]), or in a task on copies of the states it writes ([`WheelCopies`]),
/// which the system writes back once every task is done. (A vehicle's probe touches its own
/// wheels alone.)
trait ProbedWheels {
    /// Wheel `entity`'s suspension, probe and state, if it is a wheel.
    fn wheel(&self, entity: Entity) -> Option<(&Suspension, &GroundProbe, &WheelState)>;
    /// As [`ProbedWheels::wheel`], with its state to write.
    fn wheel_mut(&mut self, entity: Entity)
    -> Option<(&Suspension, &GroundProbe, &mut WheelState)>;
}

impl ProbedWheels for WheelQuery<'_, '_> {
    fn wheel(&self, entity: Entity) -> Option<(&Suspension, &GroundProbe, &WheelState)> {
        self.get(entity).ok()
    }

    fn wheel_mut(
        &mut self,
        entity: Entity,
    ) -> Option<(&Suspension, &GroundProbe, &mut WheelState)> {
        let (suspension, probe, state) = self.get_mut(entity).ok()?;
        Some((suspension, probe, state.into_inner()))
    }
}

/// Wheels read from the shared query, with the states a task's probe writes kept aside.
struct WheelCopies<'a, 'w, 's> {
    read: &'a WheelQueryRead<'w, 's>,
    written: &'a mut WrittenStates,
}

impl ProbedWheels for WheelCopies<'_, '_, '_> {
    fn wheel(&self, entity: Entity) -> Option<(&Suspension, &GroundProbe, &WheelState)> {
        let (suspension, probe, state) = self.read.get(entity).ok()?;
        let state = self
            .written
            .iter()
            .find(|(wheel, _)| *wheel == entity)
            .map_or(state, |(_, copy)| copy);
        Some((suspension, probe, state))
    }

    fn wheel_mut(
        &mut self,
        entity: Entity,
    ) -> Option<(&Suspension, &GroundProbe, &mut WheelState)> {
        let (suspension, probe, state) = self.read.get(entity).ok()?;
        let index = match self.written.iter().position(|(wheel, _)| *wheel == entity) {
            Some(index) => index,
            None => {
                self.written.push((entity, state.clone()));
                self.written.len() - 1
            }
        };
        Some((suspension, probe, &mut self.written[index].1))
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
    let probe = |item: &mut ProbedVehicleItem, wheels: &mut dyn ProbedWheels| {
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
                // probe's always, a tire shape's where one collider's faces (or a seam's)
                // answer it ([`fast_contact`]) and the neighbours cover its sweep; `None`
                // where only a cast through the world would tell.
                let exact_at = |sweep: Sweep| match probe {
                    GroundProbe::Ray => {
                        Some(ray_contact(&qp.query_pipeline, colliders, &sweep, radius))
                    }
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
            let forces = bar.forces(&module_ctx, &input);
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

        // Tire loads: the drivetrain step hands each to its wheel block, with the velocity and
        // friction above, as the contact it integrates over the coming step.
        let inputs = &mut scratch.inputs;
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
            f64::from(body.mass) / total_load
        } else {
            0.0
        };
        for wheel in &inputs.wheels {
            if let Some((.., state)) = wheels.wheel_mut(wheel.entity) {
                state.body_mass = state.load * mass_per_load;
            }
        }
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
    let tasks = parallel.task_count(vehicles.iter().len());
    if tasks <= 1 {
        pipelined(
            vehicles.iter_mut(),
            &mut wheels,
            |_, v| far(v),
            |wheels, v| near(&wheels.as_readonly(), v),
            |wheels, mut v| probe(&mut v, wheels),
        );
    } else {
        // Each task writes its vehicles' wheel states aside; they are written back below.
        // (Each run leaves them empty: the write-back drains them.)
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
                |_, (v, written)| {
                    probe(
                        v,
                        &mut WheelCopies {
                            read: &read,
                            written,
                        },
                    );
                },
            );
        }
        for (entity, state) in written_states.iter_mut().flat_map(|w| w.drain(..)) {
            if let Ok((.., mut wheel)) = wheels.get_mut(entity) {
                *wheel = state;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy_rapier3d::parry::utils::Array2;
    use bevy_rapier3d::rapier::prelude::{ColliderBuilder, SharedShape};

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

    /// The tire cast against the whole shape by parry, as [`cast_tire`] does through the world:
    /// the reference the triangle-by-triangle contact must match.
    fn reference(collider: &RawCollider, tire: &TireShape, sweep: &Sweep) -> Option<(f32, Vec3)> {
        let (shape, rotation) = tire.cast_geometry();
        cast_shapes(
            &Pose::from_parts(sweep.top, rotation),
            -sweep.up,
            shape.shape(),
            collider.position(),
            Vec3::ZERO,
            collider.shape(),
            cast_options(sweep.range),
        )
        .expect("supported")
        .map(|hit| {
            let normal = collider.position().rotation * hit.normal2;
            let normal = if normal.dot(sweep.up) < 0.0 {
                -normal
            } else {
                normal
            };
            (hit.time_of_impact, normal)
        })
    }

    /// The force over a step of a damper of `c` (N·s/m) that cannot pull, on a body too heavy
    /// to answer, settling at `rate` (m/s) over a step of `dt` (s) onto a road whose offset at
    /// the step's end is `end` (m), with the road's `profile` over the step if given.
    fn pushing_damper_over_step(
        c: f64,
        rate: f64,
        dt: f64,
        end: f64,
        profile: Option<RoadProfile>,
    ) -> f64 {
        let last = WheelState {
            grounded: true,
            travel_rate: rate,
            suspension_force: c * rate,
            ..default()
        };
        force_over_step(
            &last,
            [0.0, rate],
            0.0,
            0.0,
            RoadAhead {
                acceleration: 2.0 * end / (dt * dt),
                profile,
            },
            0.0,
            dt,
            1e15,
            |_, r| (c * r).max(0.0),
        )
    }

    /// Across an edge met within the step, a damper that cannot pull gives the mean of its
    /// force over the step's two parts, each at that part's rate: a ramp rising at 2.6 m/s
    /// under a body rising at 1.6 m/s compresses it at 1 m/s until its top, met 0.75 into
    /// the step, and past it the rebound would ask for a pull: exactly `f·c·r₁` (to 1e-9) on
    /// a body too heavy to answer, where the step's mean rate would give less than half.
    #[test]
    fn an_edge_within_the_step_gives_each_part_its_own_force() {
        let (c, dt, rate, fraction) = (3000.0, 1.0 / 15.0, 1.0, 0.75);
        // Past the edge the road falls away: its offset at the step's end from the ramp's plane.
        let offset = -(1.0 - fraction) * dt * 2.6;
        let force = |profile| pushing_damper_over_step(c, rate, dt, offset, profile);
        let expected = fraction * c * rate;
        let got = force(Some(RoadProfile::new(&[(fraction, 0.0)], offset)));
        assert!(
            (got - expected).abs() < 1e-9 * expected,
            "{got} N against {expected}"
        );
        let mean = force(None);
        let at_mean = c * (rate + offset / dt);
        assert!(
            (mean - at_mean).abs() < 1e-6 * at_mean && mean < 0.5 * expected,
            "{mean} N at the mean rate"
        );
    }

    /// Over a step down within the step, a damper that cannot pull gives the mean of its
    /// force over the step's parts: a body settling at 1 m/s onto a road that drops 8 cm
    /// over the step's third quarter (at 4.8 m/s) pushes for the other three quarters and
    /// cannot pull over the drop: exactly `0.75·c·r` (to 1e-9) on a body too heavy to
    /// answer, where the step's mean rate (a pull) gives nothing.
    #[test]
    fn a_step_down_within_the_step_gives_each_part_its_own_force() {
        let (c, dt, rate, drop) = (3000.0, 1.0 / 15.0, 1.0, 0.08);
        let force = |profile| pushing_damper_over_step(c, rate, dt, -drop, profile);
        let profile = RoadProfile::new(&[(0.25, 0.0), (0.5, 0.0), (0.75, -drop)], -drop);
        let expected = 0.75 * c * rate;
        let got = force(Some(profile));
        assert!(
            (got - expected).abs() < 1e-9 * expected,
            "{got} N against {expected}"
        );
        assert!(
            force(None).abs() < 1e-9,
            "{} N at the mean rate",
            force(None)
        );
    }

    /// A mesh with a triangle of no area under the wheel gets no fast answer (the cast through
    /// the world handles it) rather than a contact from a plane that does not exist.
    #[test]
    fn a_degenerate_triangle_gives_no_fast_answer() {
        let vertices = vec![
            Vec3::new(-2.0, 0.0, -2.0),
            Vec3::new(2.0, 0.0, -2.0),
            Vec3::new(2.0, 0.0, 2.0),
            Vec3::new(-2.0, 0.0, 2.0),
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
        ];
        // The last triangle is a segment along the X axis through the wheel's footprint.
        let indices = vec![[0, 2, 1], [0, 3, 2], [4, 5, 6]];
        let Ok(shape) = SharedShape::trimesh(vertices, indices) else {
            // parry refused the mesh: nothing degenerate can reach the probe.
            return;
        };
        let mesh = ColliderBuilder::new(shape).build();
        let tire = TireShape {
            probe: GroundProbe::Cylinder,
            radius: 0.31,
            half_width: 0.1,
            rotation: Quat::IDENTITY,
        };
        let sweep = Sweep {
            top: Vec3::new(0.0, 0.8, 0.0),
            up: Vec3::Y,
            range: 0.5,
            compression_limit: 0.1,
        };
        assert!(triangle_contact(&mesh, &tire, &sweep).is_none());
        // Without the degenerate triangle the same probe has an exact answer: the flat face,
        // reached after 0.8 − 0.31 m of travel.
        let flat = ColliderBuilder::new(
            SharedShape::trimesh(
                vec![
                    Vec3::new(-2.0, 0.0, -2.0),
                    Vec3::new(2.0, 0.0, -2.0),
                    Vec3::new(2.0, 0.0, 2.0),
                    Vec3::new(-2.0, 0.0, 2.0),
                ],
                vec![[0, 2, 1], [0, 3, 2]],
            )
            .unwrap(),
        )
        .build();
        let touch = triangle_contact(&flat, &tire, &sweep).unwrap().unwrap();
        assert!((touch.travel - 0.49).abs() < 1e-5, "{touch:?}");
        assert!(touch.normal.abs_diff_eq(Vec3::Y, 1e-6), "{touch:?}");
    }

    /// A rough heightfield (0.4 m cells, ±0.15 m, so a tire spans several triangles and meets
    /// edges and ridges) and the same surface as a tilted, rotated triangle mesh: for 2000 wheel
    /// poses each (random position, heading, chassis tilt up to 0.3 rad, both probe shapes), the
    /// triangle-by-triangle contact finds the same travel as parry's cast of the tire against
    /// the whole shape, within 1 mm (parry's cast stops within its own tolerance of the surface),
    /// the same normal within 0.05 rad where the contact is on a face, and the same misses.
    #[test]
    fn triangle_contact_matches_a_cast_against_the_whole_shape() {
        let n = 24;
        let height = |i: usize, j: usize| {
            let (x, z) = (i as f32, j as f32);
            0.15 * (0.9 * x).sin() * (1.3 * z).cos() + 0.05 * ((3.1 * x + 1.7 * z).sin())
        };
        let heights = (0..n * n).map(|k| height(k / n, k % n)).collect();
        let scale = Vec3::new(0.4 * (n - 1) as f32, 1.0, 0.4 * (n - 1) as f32);
        let heightfield =
            ColliderBuilder::new(SharedShape::heightfield(Array2::new(n, n, heights), scale))
                .build();
        let (vertices, indices) = heightfield.shape().as_heightfield().unwrap().to_trimesh();
        let mesh = ColliderBuilder::new(SharedShape::trimesh(vertices, indices).unwrap())
            .rotation(Vec3::new(0.2, 0.7, -0.1))
            .translation(Vec3::new(0.3, -0.2, 0.1))
            .build();
        let mut seed = 0x2545_f491_u32;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        };
        for collider in [&heightfield, &mesh] {
            let (mut hits, mut misses, mut faces) = (0, 0, 0);
            for k in 0..2000 {
                let rotation = Quat::from_euler(
                    EulerRot::YXZ,
                    random() * 6.3,
                    (random() - 0.5) * 0.6,
                    (random() - 0.5) * 0.6,
                );
                let up = rotation * Vec3::Y;
                let ground = collider.position();
                let local = Vec3::new((random() - 0.5) * 7.0, 0.0, (random() - 0.5) * 7.0);
                let top = ground.transform_point(local) + up * (0.1 + random() * 1.4);
                let tire = TireShape {
                    probe: if k % 2 == 0 {
                        GroundProbe::Cylinder
                    } else {
                        GroundProbe::Ball
                    },
                    radius: 0.31,
                    half_width: 0.1,
                    rotation,
                };
                let sweep = Sweep {
                    top,
                    up,
                    range: 0.5,
                    compression_limit: 0.1,
                };
                let expected = reference(collider, &tire, &sweep);
                let Some(found) = triangle_contact(collider, &tire, &sweep) else {
                    // No fast answer: only when the wheel starts inside the ground.
                    assert!(
                        expected.is_none_or(|(t, _)| t == 0.0),
                        "pose {k}: {expected:?}"
                    );
                    continue;
                };
                match (found, expected) {
                    (None, None) => misses += 1,
                    (
                        Some(Touch {
                            travel: t, normal, ..
                        }),
                        Some((t_ref, normal_ref)),
                    ) => {
                        hits += 1;
                        assert!((t - t_ref).abs() < 1e-3, "pose {k}: travel {t} vs {t_ref}");
                        if normal.angle_between(normal_ref) < 0.05 {
                            faces += 1;
                        }
                    }
                    (found, expected) => panic!("pose {k}: {found:?} vs {expected:?}"),
                }
            }
            // The poses cover both outcomes, and most contacts are on faces.
            assert!(
                hits > 500 && misses > 100 && faces > hits * 3 / 4,
                "{hits} {misses} {faces}"
            );
        }
    }
}
