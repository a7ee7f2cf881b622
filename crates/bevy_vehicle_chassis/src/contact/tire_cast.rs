//! How a wheel's tire shape (or a ray) finds the ground along its suspension axis: the shape
//! cast through Rapier's query pipeline, and the exact contacts against the one collider a
//! wheel stands on (a flat face, a seam between faces, a plane, a mesh or heightfield
//! triangle) that answer most probes without a cast; and how a tire's friction combines with
//! the ground's by Rapier's rule. [`probe_ground`](super::probe_ground) calls them.

use bevy::prelude::*;
use bevy_rapier3d::parry::bounding_volume::{Aabb, BoundingVolume};
use bevy_rapier3d::parry::query::cast_shapes;
use bevy_rapier3d::parry::query::{ShapeCastOptions, ShapeCastStatus};
use bevy_rapier3d::parry::shape::Triangle;
use bevy_rapier3d::parry::shape::{Ball, Cylinder, FeatureId, Shape};
use bevy_rapier3d::rapier::math::Pose;
use bevy_rapier3d::rapier::prelude::{
    CoefficientCombineRule, Collider as RawCollider, ColliderHandle, ColliderSet, QueryPipeline,
    Ray,
};

use smallvec::SmallVec;

use crate::components::{GroundProbe, Suspension, WheelMount};

/// Half the width (m) of what a wheel probes with: its tread's for a tire shape, none for a
/// ray.
pub(super) fn probe_half_width(probe: GroundProbe, mount: &WheelMount) -> f32 {
    match probe {
        GroundProbe::Ray => 0.0,
        GroundProbe::Ball | GroundProbe::Cylinder => 0.5 * mount.width,
    }
}

/// What a probe found.
pub(super) struct Hit {
    /// Suspension travel (m, compression positive).
    pub(super) travel: f32,
    /// Wheel centre (world).
    pub(super) center: Vec3,
    /// Contact point (world).
    pub(super) point: Vec3,
    /// Ground normal (world, unit, pointing out of the ground).
    pub(super) normal: Vec3,
    /// The collider hit.
    pub(super) collider: ColliderHandle,
    /// The heightfield's or mesh's triangle whose face the probe touches, if it touches one
    /// inside it (world; a ray's on heightfields only).
    pub(super) face: Option<Triangle>,
}

/// The shape a wheel probes the ground with.
#[derive(Clone, Copy)]
pub(super) struct TireShape {
    pub(super) probe: GroundProbe,
    /// Tire radius (m).
    pub(super) radius: f32,
    /// Half the tread width (m).
    pub(super) half_width: f32,
    /// The wheel's orientation (world): chassis rotation and steering; its X is the axle.
    pub(super) rotation: Quat,
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
pub(super) struct Sweep {
    pub(super) top: Vec3,
    pub(super) up: Vec3,
    pub(super) range: f32,
    pub(super) compression_limit: f32,
}

impl Sweep {
    /// The sweep of a wheel mounted at `mount` on a chassis at `transform` (whose up axis is
    /// `up`).
    pub(super) fn of(
        transform: &Transform,
        up: Vec3,
        mount: &WheelMount,
        suspension: &Suspension,
    ) -> Self {
        Sweep {
            top: transform.translation
                + transform.rotation * mount.position
                + up * suspension.compression_limit as f32,
            up,
            range: (suspension.compression_limit + suspension.extension_limit) as f32,
            compression_limit: suspension.compression_limit as f32,
        }
    }

    /// The box of the ray probe's segment: from the top down the sweep and a wheel's `radius`
    /// (m) further ([`ray_contact`]).
    pub(super) fn ray_bounds(&self, radius: f32) -> Aabb {
        let bottom = self.top - self.up * (self.range + radius);
        Aabb::new(self.top.min(bottom), self.top.max(bottom))
    }

    /// A box holding everything a tire of radius `radius` and half-width `half_width` (m)
    /// touches along the sweep, whatever its steering angle.
    pub(super) fn bounds(&self, radius: f32, half_width: f32) -> Aabb {
        let reach = Vec3::splat(radius + half_width);
        let bottom = self.top - self.up * self.range;
        Aabb::new(self.top.min(bottom) - reach, self.top.max(bottom) + reach)
    }
}

/// The colliders near a vehicle's wheels, each with its bounding box: found with one
/// broad-phase query for the whole vehicle, then picked from by each wheel
/// ([`fast_contact`]).
pub(super) type Neighbours<'a> = SmallVec<[(ColliderHandle, &'a RawCollider, Aabb); 8]>;

/// The colliders (through the query pipeline's filter) whose broad-phase boxes meet `area`.
pub(super) fn neighbours<'a>(pipeline: &'a QueryPipeline<'_>, area: Aabb) -> Neighbours<'a> {
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
pub(super) fn fast_contact(
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
fn heightfield_face(collider: &RawCollider, feature: FeatureId) -> Option<Triangle> {
    let FeatureId::Face(id) = feature else {
        return None;
    };
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
pub(super) fn stays_on_face(
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
    if off_collider(collider, point) > PLANE_CONTACT_TOLERANCE {
        return None;
    }
    Some(Touch {
        travel: t,
        point,
        normal,
        face: None,
    })
}

/// How far `point` (world) lies outside the convex `collider` (m, 0 inside it). A box, the
/// common road, is measured in its own frame directly; any other shape through its point
/// projection.
#[inline]
fn off_collider(collider: &RawCollider, point: Vec3) -> f32 {
    let shape = collider.shape();
    if let Some(cuboid) = shape.as_cuboid() {
        let local = collider.position().inverse_transform_point(point);
        (local.abs() - cuboid.half_extents).max(Vec3::ZERO).length()
    } else {
        let projection = shape.project_point(collider.position(), point, true);
        (projection.point - point).length()
    }
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
pub(super) fn cast_tire(
    pipeline: &QueryPipeline<'_>,
    tire: &TireShape,
    sweep: &Sweep,
) -> Option<Hit> {
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
pub(super) fn ray_contact(
    pipeline: &QueryPipeline<'_>,
    colliders: &ColliderSet,
    sweep: &Sweep,
    radius: f32,
) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let reach = range + radius;
    let hit = |origin: Vec3, collider: ColliderHandle, time: f32, normal: Vec3, feature| {
        let face = colliders
            .get(collider)
            .and_then(|c| heightfield_face(c, feature));
        ray_hit(sweep, radius, origin, collider, time, normal, face)
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

/// The ray probe's contact from a vehicle's `neighbours` alone: the nearest touch of the ray
/// [`ray_contact`] casts through the world, the same answer without a walk of the world's
/// tree, where the neighbours cover the ray (the caller checks that [`Sweep::ray_bounds`] lies
/// within the area they were gathered from: then every collider the world's cast could meet is
/// among them). `None` where only [`ray_contact`] answers: the ray meets nothing (it looks
/// again beside the ray and above a heightfield), or it starts inside a collider (whose way
/// out it finds).
pub(super) fn fast_ray_contact(neighbours: &Neighbours, sweep: &Sweep, radius: f32) -> Option<Hit> {
    let Sweep { top, up, range, .. } = *sweep;
    let ray = Ray::new(top, -up);
    let bounds = sweep.ray_bounds(radius);
    let (handle, collider, found) = meeting(neighbours, &bounds)
        .filter_map(|&(handle, collider, _)| {
            let found = collider.shape().cast_ray_and_get_normal(
                collider.position(),
                &ray,
                range + radius,
                true,
            )?;
            Some((handle, collider, found))
        })
        .min_by(|a, b| a.2.time_of_impact.total_cmp(&b.2.time_of_impact))?;
    (found.time_of_impact > 0.0).then(|| {
        let face = heightfield_face(collider, found.feature);
        ray_hit(
            sweep,
            radius,
            top,
            handle,
            found.time_of_impact,
            found.normal,
            face,
        )
    })
}

/// The ray probe's [`Hit`] for a touch `time` (m) down the ray from `origin` (level with the
/// sweep's top, or above it), on `collider` with the ground's `normal` there and the
/// heightfield's triangle `face` the ray met inside, if any.
fn ray_hit(
    sweep: &Sweep,
    radius: f32,
    origin: Vec3,
    collider: ColliderHandle,
    time: f32,
    normal: Vec3,
    face: Option<Triangle>,
) -> Hit {
    let point = origin - sweep.up * time;
    Hit {
        travel: sweep.compression_limit + radius - time,
        center: point + sweep.up * radius,
        point,
        normal,
        collider,
        face,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bevy_rapier3d::parry::utils::Array2;
    use bevy_rapier3d::rapier::prelude::{ColliderBuilder, SharedShape};

    /// Numbers uniform in [0, 1] from `seed` (xorshift): the same every run.
    fn uniform(mut seed: u32) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        }
    }

    /// A wheel's orientation at random: any heading, the chassis tilted up to 0.3 rad each way.
    fn random_pose(random: &mut impl FnMut() -> f32) -> Quat {
        Quat::from_euler(
            EulerRot::YXZ,
            random() * 6.3,
            (random() - 0.5) * 0.6,
            (random() - 0.5) * 0.6,
        )
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

    /// The ray probe's contact from a vehicle's neighbours is the world's cast's, to the bit:
    /// 3000 rays (random position, chassis tilt up to 0.3 rad) over fixed ground of boxes, a
    /// ball and a heightfield that overlap, each answered by [`fast_ray_contact`] from the
    /// colliders near it and by [`ray_contact`] through the world's tree. Where the fast one
    /// answers, both name the same collider, travel, point, normal and triangle; it answers
    /// every ray that meets the ground from outside it, and leaves the rest (misses, rays
    /// starting inside a collider) to the world's cast.
    #[test]
    fn the_ray_contact_from_the_neighbours_is_the_worlds() {
        use bevy_rapier3d::rapier::prelude::{
            BroadPhaseBvh, CCDSolver, ImpulseJointSet, IntegrationParameters, IslandManager,
            MultibodyJointSet, NarrowPhase, PhysicsPipeline, QueryFilter, RigidBodySet,
        };
        let n = 16;
        let heights = (0..n * n)
            .map(|k| 0.2 * ((k / n) as f32 * 0.8).sin() * ((k % n) as f32 * 1.1).cos())
            .collect();
        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        for collider in [
            ColliderBuilder::cuboid(20.0, 0.5, 20.0).translation(Vec3::new(0.0, -0.5, 0.0)),
            ColliderBuilder::cuboid(1.5, 0.2, 2.0)
                .translation(Vec3::new(2.0, 0.05, 1.0))
                .rotation(Vec3::new(0.15, 0.4, 0.0)),
            ColliderBuilder::ball(0.6).translation(Vec3::new(-2.0, -0.3, -1.5)),
            ColliderBuilder::new(SharedShape::heightfield(
                Array2::new(n, n, heights),
                Vec3::new(6.0, 1.0, 6.0),
            ))
            .translation(Vec3::new(-1.0, 0.1, 2.5)),
        ] {
            colliders.insert(collider.build());
        }
        // One step fills the broad phase's tree, which the world's casts walk.
        let (mut islands, mut broad_phase, mut narrow_phase) = (
            IslandManager::new(),
            BroadPhaseBvh::new(),
            NarrowPhase::new(),
        );
        PhysicsPipeline::new().step(
            Vec3::ZERO,
            &IntegrationParameters::default(),
            &mut islands,
            &mut broad_phase,
            &mut narrow_phase,
            &mut bodies,
            &mut colliders,
            &mut ImpulseJointSet::new(),
            &mut MultibodyJointSet::new(),
            &mut CCDSolver::new(),
            &(),
            &(),
        );
        let world = broad_phase.as_query_pipeline(
            narrow_phase.query_dispatcher(),
            &bodies,
            &colliders,
            QueryFilter::default(),
        );
        let mut random = uniform(0x9e37_79b9);
        let radius = 0.31;
        let (mut answered, mut outside) = (0, 0);
        for k in 0..3000 {
            let rotation = random_pose(&mut random);
            let up = rotation * Vec3::Y;
            let sweep = Sweep {
                top: Vec3::new(
                    (random() - 0.5) * 9.0,
                    random() * 1.2,
                    (random() - 0.5) * 9.0,
                ),
                up,
                range: 0.5,
                compression_limit: 0.1,
            };
            let area = sweep.bounds(radius, 0.0).loosened(0.05);
            assert!(area.contains(&sweep.ray_bounds(radius)));
            let near = neighbours(&world, area);
            let through_world = ray_contact(&world, &colliders, &sweep, radius);
            // Whether the first ray meets the ground from outside: the fast path's case.
            let from_outside = world
                .cast_ray(&Ray::new(sweep.top, -up), sweep.range + radius, true)
                .is_some_and(|(_, time)| time > 0.0);
            outside += usize::from(from_outside);
            let Some(fast) = fast_ray_contact(&near, &sweep, radius) else {
                assert!(
                    !from_outside,
                    "ray {k}: no fast answer for a ray from outside"
                );
                continue;
            };
            answered += 1;
            let world_hit = through_world.expect("the world's cast hits where the fast one does");
            assert_eq!(fast.collider, world_hit.collider, "ray {k}");
            assert_eq!(fast.travel, world_hit.travel, "ray {k}");
            assert_eq!(fast.point, world_hit.point, "ray {k}");
            assert_eq!(fast.normal, world_hit.normal, "ray {k}");
            assert_eq!(
                fast.face.map(|t| [t.a, t.b, t.c]),
                world_hit.face.map(|t| [t.a, t.b, t.c]),
                "ray {k}"
            );
        }
        // Most rays meet the ground from above it, and each of those is answered.
        assert_eq!(answered, outside);
        assert!(answered > 2000, "{answered} of 3000 rays answered");
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
        let mut random = uniform(0x2545_f491);
        for collider in [&heightfield, &mesh] {
            let (mut hits, mut misses, mut faces) = (0, 0, 0);
            for k in 0..2000 {
                let rotation = random_pose(&mut random);
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
