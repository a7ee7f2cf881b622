//! The test track: a flat proving ground with driving-dynamics features, as Rapier colliders
//! (no meshes, so it runs headless; the demo adds a mesh to each piece), and a tour of it.
//!
//! Around the start (the origin, facing −Z):
//!
//! * a flat area everywhere (friction 1.0);
//! * straight ahead, a slalom of cones, 18 m apart;
//! * to the left (−X), an ISO 3888-1 style double lane change marked with cones, then
//!   low-friction patches (μ 0.5 and 0.2);
//! * to the right (+X), 10 %, 20 % and 30 % slopes up to 2 m plateaus, and a jump ramp;
//! * further left, speed bumps (10 cm) and a washboard (3 cm every 0.7 m);
//! * far ahead, a banked 180° curve (40 m radius, 12 m wide, banked 15° inward), with 25 m
//!   straights at each end whose bank twists in from flat.
//!
//! [`TestTrackPlugin`] spawns it at start-up; [`test_track_pieces`] lists its pieces for
//! spawning by hand. [`truck_tour`] is a route through every part of the track that a
//! 16 m tractor and trailer can take, for a [`PathFollower`].

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_chassis::{PathFollower, RoutePoint};
use bevy_vehicle_drivetrain::prelude::*;

/// Spawns the test track's colliders at start-up (see the [module docs](self)).
pub struct TestTrackPlugin;

impl Plugin for TestTrackPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, |mut commands: Commands| {
            spawn_test_track(&mut commands);
        });
    }
}

/// What a piece of the track is, for looks and for telling pieces apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// The flat area.
    Ground,
    /// The μ 0.5 patch.
    WetPatch,
    /// The μ 0.2 patch.
    IcePatch,
    /// A slope or its plateau.
    Hill,
    /// The jump ramp.
    Ramp,
    /// A 10 cm speed bump.
    SpeedBump,
    /// A 3 cm washboard ridge.
    Washboard,
    /// The banked curve with its transitions.
    BankedCurve,
    /// A traffic cone (a light dynamic body).
    Cone,
}

/// A piece's shape, in its own frame (m).
#[derive(Clone, Debug, PartialEq)]
pub enum PieceShape {
    /// The plane y = 0, solid below.
    HalfSpace,
    /// A box of these half extents (m).
    Cuboid(Vec3),
    /// A cylinder along its Y axis.
    Cylinder {
        /// Radius (m).
        radius: f32,
        /// Half its length (m).
        half_height: f32,
    },
    /// A cone along its Y axis, apex up.
    Cone {
        /// Base radius (m).
        radius: f32,
        /// Half its height (m).
        half_height: f32,
    },
    /// A triangle mesh: vertices (m) and counter-clockwise triangles seen from their outside.
    TriMesh {
        /// Vertex positions (m).
        vertices: Vec<Vec3>,
        /// Triangles as vertex indices.
        triangles: Vec<[u32; 3]>,
    },
}

impl PieceShape {
    /// The Rapier collider of this shape.
    pub fn collider(&self) -> Collider {
        match self {
            PieceShape::HalfSpace => Collider::halfspace(Vec3::Y).expect("unit normal"),
            PieceShape::Cuboid(h) => Collider::cuboid(h.x, h.y, h.z),
            PieceShape::Cylinder {
                radius,
                half_height,
            } => Collider::cylinder(*half_height, *radius),
            PieceShape::Cone {
                radius,
                half_height,
            } => Collider::cone(*half_height, *radius),
            PieceShape::TriMesh {
                vertices,
                triangles,
            } => Collider::trimesh(vertices.clone(), triangles.clone())
                .expect("the track's meshes are well formed"),
        }
    }
}

/// On each spawned piece of the test track: what it is and its shape (its collider is built
/// from the shape).
#[derive(Component, Clone, Debug, PartialEq)]
pub struct TrackPiece {
    /// What the piece is.
    pub kind: PieceKind,
    /// Its shape, in the piece's frame.
    pub shape: PieceShape,
    /// Surface friction coefficient (dimensionless).
    pub friction: f32,
    /// Mass of a loose piece (kg), `None` for the fixed ones.
    pub mass: Option<f32>,
    /// Where the piece is (m, world).
    pub transform: Transform,
}

/// Spawns every piece of the test track (fixed colliders, and cones as light dynamic bodies);
/// returns their entities.
pub fn spawn_test_track(commands: &mut Commands) -> Vec<Entity> {
    test_track_pieces()
        .into_iter()
        .map(|piece| {
            let name = Name::new(format!("{:?}", piece.kind));
            let mut e = commands.spawn((
                name,
                piece.shape.collider(),
                Friction::coefficient(piece.friction),
                piece.transform,
            ));
            match piece.mass {
                Some(mass) => e.insert((RigidBody::Dynamic, ColliderMassProperties::Mass(mass))),
                None => e.insert(RigidBody::Fixed),
            };
            e.insert(piece);
            e.id()
        })
        .collect()
}

/// Every piece of the test track (see the [module docs](self)).
pub fn test_track_pieces() -> Vec<TrackPiece> {
    let mut pieces = Vec::new();
    let mut fixed = |kind, shape, transform, friction| {
        pieces.push(TrackPiece {
            kind,
            shape,
            friction,
            mass: None,
            transform,
        })
    };
    fixed(
        PieceKind::Ground,
        PieceShape::HalfSpace,
        Transform::default(),
        1.0,
    );

    // Low-friction patches beyond the lane change.
    for (kind, z, mu) in [
        (PieceKind::WetPatch, -160.0, 0.5),
        (PieceKind::IcePatch, -205.0, 0.2),
    ] {
        fixed(
            kind,
            PieceShape::Cuboid(Vec3::new(5.0, 0.01, 20.0)),
            Transform::from_xyz(-30.0, 0.01, z),
            mu,
        );
    }

    // Slopes to the right, and a jump ramp.
    for (i, grade) in [0.1f32, 0.2, 0.3].into_iter().enumerate() {
        hill(
            &mut fixed,
            Vec3::new(25.0 + 12.0 * i as f32, 0.0, -20.0),
            grade,
        );
    }
    fixed(
        PieceKind::Ramp,
        PieceShape::Cuboid(Vec3::new(2.5, 0.15, 4.0)),
        Transform::from_xyz(70.0, 0.45, -30.0).with_rotation(Quat::from_rotation_x(0.15)),
        1.0,
    );

    // Speed bumps (10 cm, 8 m wide) and a washboard (3 cm every 0.7 m): cylinders across the
    // road, sunk so that `height` shows.
    let across = Quat::from_rotation_z(core::f32::consts::FRAC_PI_2);
    for (kind, radius, height, x, spacing, count) in [
        (PieceKind::SpeedBump, 0.6, 0.10, -60.0, 10.0, 5),
        (PieceKind::Washboard, 0.3, 0.03, -75.0, 0.7, 60),
    ] {
        for i in 0..count {
            fixed(
                kind,
                PieceShape::Cylinder {
                    radius,
                    half_height: 4.0,
                },
                Transform::from_xyz(x, height - radius, -20.0 - spacing * i as f32)
                    .with_rotation(across),
                1.0,
            );
        }
    }

    let (vertices, triangles) = banked_curve();
    fixed(
        PieceKind::BankedCurve,
        PieceShape::TriMesh {
            vertices,
            triangles,
        },
        Transform::default(),
        1.0,
    );

    // Cones: the slalom straight ahead, and an ISO 3888-1 style double lane change for a
    // 1.8 m wide car to the left of the start: entry lane 15 m (1.1·w + 0.25 wide), 30 m to
    // change, 25 m offset by 3.5 m (1.2·w + 0.25), 25 m to change back, exit 15 m
    // (1.3·w + 0.25).
    let mut cones: Vec<Vec3> = (0..8)
        .map(|i| Vec3::new(0.0, 0.0, -40.0 - 18.0 * i as f32))
        .collect();
    let (w, x0) = (1.8, -30.0);
    for (start, length, offset, lane) in [
        (0.0, 15.0, 0.0, 1.1 * w + 0.25),
        (45.0, 25.0, -3.5, 1.2 * w + 0.25),
        (95.0, 15.0, 0.0, 1.3 * w + 0.25),
    ] {
        for k in 0..=3 {
            let z = -20.0 - start - length * k as f32 / 3.0;
            for side in [-0.5, 0.5] {
                cones.push(Vec3::new(x0 + offset + side * lane, 0.0, z));
            }
        }
    }
    pieces.extend(cones.into_iter().map(|at| TrackPiece {
        kind: PieceKind::Cone,
        shape: PieceShape::Cone {
            radius: 0.18,
            half_height: 0.35,
        },
        friction: 0.8,
        mass: Some(2.0),
        transform: Transform::from_translation(at + Vec3::Y * 0.35),
    }));
    pieces
}

/// A slope of `grade` (rise/run) 8 m wide climbing toward −Z from `start` to a plateau 2 m
/// high and 12 m long, and down again at the same grade.
fn hill(fixed: &mut impl FnMut(PieceKind, PieceShape, Transform, f32), start: Vec3, grade: f32) {
    let (height, plateau, width, thickness) = (2.0, 12.0, 8.0, 0.4);
    let angle = grade.atan();
    let run = height / grade;
    let length = (run * run + height * height).sqrt();
    let slab = PieceShape::Cuboid(Vec3::new(width, thickness, length) / 2.0);
    // Up: a slab tilted about X, its top surface through the start line at ground level.
    let up_mid = start + Vec3::new(0.0, height / 2.0, -run / 2.0);
    let tilt = Quat::from_rotation_x(angle);
    let top = start + Vec3::new(0.0, height, -run);
    let down_mid = top + Vec3::new(0.0, -height / 2.0, -plateau - run / 2.0);
    let untilt = Quat::from_rotation_x(-angle);
    for (mid, rotation) in [(up_mid, tilt), (down_mid, untilt)] {
        fixed(
            PieceKind::Hill,
            slab.clone(),
            Transform::from_translation(mid + rotation * Vec3::new(0.0, -thickness / 2.0, 0.0))
                .with_rotation(rotation),
            1.0,
        );
    }
    fixed(
        PieceKind::Hill,
        PieceShape::Cuboid(Vec3::new(width, height, plateau) / 2.0),
        Transform::from_translation(top + Vec3::new(0.0, -height / 2.0, -plateau / 2.0)),
        1.0,
    );
}

/// Centre of the banked curve's arc (m, world).
const CURVE_CENTRE: Vec2 = Vec2::new(40.0, -260.0);
/// Radius of the banked curve's centre line (m).
const CURVE_RADIUS: f32 = 40.0;
/// Plan width of the banked road (m).
const CURVE_WIDTH: f32 = 12.0;
/// Bank angle of the arc (rad).
const CURVE_BANK: f32 = 15.0 * core::f32::consts::PI / 180.0;
/// Length of each straight whose bank twists in from flat (m).
const CURVE_TWIST: f32 = 25.0;

/// The banked curve as one smooth triangle mesh (world coordinates): entry straight heading
/// −Z on x ∈ [−6, 6] from z = −235, the 180° arc about [`CURVE_CENTRE`] turning right, and the
/// exit straight heading +Z back to z = −235. Across the road the surface is a straight line
/// from the inside edge, 1 cm above the ground, rising at the bank angle; on the straights the
/// bank twists linearly from 0 to 15°. A wall closes the raised outside edge down to the
/// ground.
fn banked_curve() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    // Stations along the centre line: (point, outward unit vector, bank angle).
    // The straights: `s` runs 0..1 from the flat end to the arc; `outward` is ±X.
    let twist_steps = 10;
    let straight = |outward: f32, s: f32| {
        let point = Vec2::new(
            CURVE_CENTRE.x + outward * CURVE_RADIUS,
            CURVE_CENTRE.y + CURVE_TWIST * (1.0 - s),
        );
        (point, Vec2::new(outward, 0.0), CURVE_BANK * s)
    };
    let mut stations: Vec<(Vec2, Vec2, f32)> = (0..twist_steps)
        .map(|k| straight(-1.0, k as f32 / twist_steps as f32))
        .collect();
    let arc_steps = 48;
    for k in 0..=arc_steps {
        let a = core::f32::consts::PI * k as f32 / arc_steps as f32;
        let outward = Vec2::new(-a.cos(), -a.sin());
        stations.push((CURVE_CENTRE + outward * CURVE_RADIUS, outward, CURVE_BANK));
    }
    stations.extend(
        (0..twist_steps)
            .rev()
            .map(|k| straight(1.0, k as f32 / twist_steps as f32)),
    );
    // Per station: inside edge, outside edge, foot of the wall under the outside edge.
    let lift = 0.01;
    let mut vertices = Vec::with_capacity(3 * stations.len());
    for &(centre, outward, bank) in &stations {
        let inside = centre - outward * CURVE_WIDTH / 2.0;
        let outside = centre + outward * CURVE_WIDTH / 2.0;
        let rise = CURVE_WIDTH * bank.tan();
        vertices.push(Vec3::new(inside.x, lift, inside.y));
        vertices.push(Vec3::new(outside.x, lift + rise, outside.y));
        vertices.push(Vec3::new(outside.x, 0.0, outside.y));
    }
    let mut triangles = Vec::new();
    for k in 0..stations.len() as u32 - 1 {
        let (i0, o0, f0) = (3 * k, 3 * k + 1, 3 * k + 2);
        let (i1, o1, f1) = (i0 + 3, o0 + 3, f0 + 3);
        // The road, facing up (the outside is left of the direction of travel).
        triangles.push([i0, i1, o0]);
        triangles.push([o0, i1, o1]);
        // The wall, facing out.
        triangles.push([o0, o1, f0]);
        triangles.push([f0, o1, f1]);
    }
    (vertices, triangles)
}

/// Height of the banked curve's surface above the ground at a plan position on it (m), or
/// `None` off the curve: for placing vehicles and checking tours.
pub fn banked_curve_height(x: f32, z: f32) -> Option<f32> {
    let p = Vec2::new(x, z);
    let half = CURVE_WIDTH / 2.0;
    let (outward_offset, bank) = if z >= CURVE_CENTRE.y {
        // On a straight: the entry (x < centre) or the exit.
        let (centre_x, sign) = if x < CURVE_CENTRE.x {
            (CURVE_CENTRE.x - CURVE_RADIUS, -1.0)
        } else {
            (CURVE_CENTRE.x + CURVE_RADIUS, 1.0)
        };
        let s = 1.0 - (z - CURVE_CENTRE.y) / CURVE_TWIST;
        if !(0.0..=1.0).contains(&s) {
            return None;
        }
        ((x - centre_x) * sign, CURVE_BANK * s)
    } else {
        ((p - CURVE_CENTRE).length() - CURVE_RADIUS, CURVE_BANK)
    };
    (outward_offset.abs() <= half).then(|| 0.01 + (outward_offset + half) * bank.tan())
}

/// A [`PathFollower`] for [`truck_tour`] fitted to `vehicle` in `world`: with a manual
/// gearbox, it shifts by [`ShiftSchedule::unhurried`] for the vehicle's engine; otherwise it
/// leaves the gears to the transmission.
pub fn tour_follower(world: &mut World, vehicle: Entity) -> PathFollower {
    let mut gearboxes = world.query::<(&BlockOf, &Gearbox)>();
    let gearbox = gearboxes
        .iter(world)
        .find(|(b, _)| b.0 == vehicle)
        .map(|(_, g)| (g.forward_ratios.len() as i32, g.shift_time));
    let mut engines = world.query::<(&BlockOf, &Engine)>();
    let max_rpm = engines
        .iter(world)
        .find(|(b, _)| b.0 == vehicle)
        .map(|(_, e)| e.max_rpm);
    let follower = PathFollower::new(truck_tour());
    match (gearbox, max_rpm) {
        (Some((gears, shift_time)), Some(max_rpm)) => {
            follower.with_shift(ShiftSchedule::unhurried(max_rpm, gears, shift_time))
        }
        _ => follower,
    }
}

/// A route through the test track for a tractor and trailer about 16 m long (turns of 10 m
/// radius or more, 2.5 m wide), from behind the start (the origin, facing −Z) to a stop at the end of
/// the ice patch, about 1.3 km. In order:
///
/// 1. up the right side of the slalom at 12 m/s, and round the banked curve at 9 m/s on a
///    37 m radius (its 15° bank and twisting entry and exit);
/// 2. back past the jump ramp, a 26 m U-turn, and over the 10 % hill at 5 m/s;
/// 3. across the track between the lane change's cones, over the speed bumps at 3 m/s;
/// 4. a 10 m U-turn, down beside the lane change, and over the wet (μ 0.5) and icy (μ 0.2)
///    patches at 8 m/s, stopping 13 m past the ice.
///
/// Speeds are m/s; positions are m in the world's plan (X, Z).
pub fn truck_tour() -> Vec<RoutePoint> {
    let mut r = Vec::new();
    let mut to = |x: f32, z: f32, v: f32| r.push(RoutePoint::new(x, z, v));
    to(0.0, 10.0, 8.0);
    to(0.0, -5.0, 12.0);
    to(8.0, -35.0, 12.0);
    to(8.0, -220.0, 9.0);
    to(3.0, -245.0, 9.0);
    to(3.0, -258.0, 9.0);
    // The banked curve on a 37 m radius, turning right.
    for k in 0..=18 {
        let a = core::f32::consts::PI * k as f32 / 18.0;
        to(40.0 - 37.0 * a.cos(), -260.0 - 37.0 * a.sin(), 9.0);
    }
    to(77.0, -240.0, 12.0);
    to(77.0, -10.0, 7.0);
    to(77.0, 0.0, 7.0);
    // U-turn of 26 m radius, turning right, onto the 10 % hill.
    for k in 1..12 {
        let a = core::f32::consts::PI * k as f32 / 12.0;
        to(51.0 + 26.0 * a.cos(), 26.0 * a.sin(), 7.0);
    }
    to(25.0, 0.0, 5.0);
    to(25.0, -10.0, 5.0);
    to(25.0, -85.0, 6.0);
    // Left onto z = −100 (radius 15 m).
    for k in 1..6 {
        let a = core::f32::consts::FRAC_PI_2 * k as f32 / 6.0;
        to(10.0 + 15.0 * a.cos(), -85.0 - 15.0 * a.sin(), 6.0);
    }
    to(10.0, -100.0, 10.0);
    to(-45.0, -100.0, 6.0);
    // Right onto the speed bumps (radius 15 m).
    for k in 1..6 {
        let a = core::f32::consts::FRAC_PI_2 * k as f32 / 6.0;
        to(-45.0 - 15.0 * a.sin(), -85.0 - 15.0 * a.cos(), 6.0);
    }
    to(-60.0, -85.0, 3.0);
    to(-60.0, -10.0, 4.0);
    // U-turn of 10 m radius, turning left.
    for k in 1..8 {
        let a = core::f32::consts::PI * k as f32 / 8.0;
        to(-50.0 - 10.0 * a.cos(), -10.0 + 10.0 * a.sin(), 4.0);
    }
    to(-40.0, -10.0, 8.0);
    to(-40.0, -125.0, 8.0);
    to(-30.0, -160.0, 8.0);
    to(-30.0, -232.0, 8.0);
    to(-30.0, -245.0, 0.0);
    r
}
