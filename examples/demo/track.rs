//! The test track's looks: the track itself (colliders and the tour) is
//! [`bevy_vehicle_physics::test_track`], which runs headless; this plugin spawns it, gives each
//! piece a mesh and a colour, and adds the light and a painted grid.

use bevy::asset::RenderAssetUsages;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_vehicle_physics::test_track::{PieceKind, PieceShape, TestTrackPlugin, TrackPiece};

/// Spawns the track with meshes, the light and the grid.
pub struct TrackPlugin;

impl Plugin for TrackPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(TestTrackPlugin)
            .add_observer(dress_piece)
            .add_systems(Startup, spawn_light_and_grid);
    }
}

/// The colour of each kind of piece.
fn color(kind: PieceKind) -> Color {
    match kind {
        PieceKind::Ground => Color::srgb(0.32, 0.36, 0.32),
        PieceKind::WetPatch => Color::srgb(0.25, 0.3, 0.45),
        PieceKind::IcePatch => Color::srgb(0.8, 0.9, 1.0),
        PieceKind::Hill => Color::srgb(0.55, 0.5, 0.42),
        PieceKind::Ramp => Color::srgb(0.6, 0.55, 0.3),
        PieceKind::SpeedBump => Color::srgb(0.85, 0.8, 0.2),
        PieceKind::Washboard => Color::srgb(0.45, 0.4, 0.35),
        PieceKind::BankedCurve => Color::srgb(0.4, 0.4, 0.45),
        PieceKind::Cone => Color::srgb(1.0, 0.45, 0.05),
    }
}

/// The mesh of a piece's shape.
fn mesh(shape: &PieceShape) -> Mesh {
    match shape {
        PieceShape::HalfSpace => Plane3d::default().mesh().size(800.0, 800.0).build(),
        PieceShape::Cuboid(half) => Cuboid::from_size(*half * 2.0).into(),
        PieceShape::Cylinder {
            radius,
            half_height,
        } => Cylinder::new(*radius, half_height * 2.0).into(),
        PieceShape::Cone {
            radius,
            half_height,
        } => Cone::new(*radius, half_height * 2.0).into(),
        PieceShape::TriMesh {
            vertices,
            triangles,
        } => Mesh::new(
            PrimitiveTopology::TriangleList,
            RenderAssetUsages::default(),
        )
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, vertices.clone())
        .with_inserted_indices(Indices::U32(triangles.iter().flatten().copied().collect()))
        .with_duplicated_vertices()
        .with_computed_flat_normals(),
    }
}

/// Gives a new track piece its mesh and material; pieces of a kind that repeats with one
/// shape (cones, bumps, ridges) share theirs, so the renderer draws them in one batch.
fn dress_piece(
    ev: On<Add, TrackPiece>,
    pieces: Query<&TrackPiece>,
    mut shared: Local<HashMap<PieceKind, (Handle<Mesh>, Handle<StandardMaterial>)>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut commands: Commands,
) {
    let Ok(piece) = pieces.get(ev.entity) else {
        return;
    };
    let repeats = matches!(
        piece.kind,
        PieceKind::Cone | PieceKind::SpeedBump | PieceKind::Washboard
    );
    let look = if repeats && let Some(look) = shared.get(&piece.kind) {
        look.clone()
    } else {
        let material = if piece.kind == PieceKind::BankedCurve {
            // Both faces: the mesh is a sheet.
            materials.add(StandardMaterial {
                base_color: color(piece.kind),
                double_sided: true,
                cull_mode: None,
                ..default()
            })
        } else {
            materials.add(color(piece.kind))
        };
        let look = (meshes.add(mesh(&piece.shape)), material);
        if repeats {
            shared.insert(piece.kind, look.clone());
        }
        look
    };
    commands
        .entity(ev.entity)
        .insert((Mesh3d(look.0), MeshMaterial3d(look.1)));
}

fn spawn_light_and_grid(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    // Two shadow cascades out to 120 m: enough around the vehicle, and half the shadow
    // passes of Bevy's default four.
    commands.spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            illuminance: 9000.0,
            ..default()
        },
        CascadeShadowConfigBuilder {
            num_cascades: 2,
            minimum_distance: 0.1,
            first_cascade_far_bound: 25.0,
            maximum_distance: 120.0,
            ..default()
        }
        .build(),
        Transform::from_xyz(40.0, 80.0, 30.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 400.0,
        ..default()
    });
    // A painted 10 m grid over the middle of the flat area (visual only), so speed and
    // heading show on the plain ground: two shared meshes, one material.
    let paint = materials.add(StandardMaterial {
        base_color: Color::srgb(0.42, 0.46, 0.42),
        perceptual_roughness: 1.0,
        ..default()
    });
    let along_z = meshes.add(Cuboid::new(0.12, 0.01, 400.0));
    let along_x = meshes.add(Cuboid::new(400.0, 0.01, 0.12));
    for k in -20..=20 {
        let offset = 10.0 * k as f32;
        for (mesh, at) in [
            (&along_z, Vec3::new(offset, 0.005, -100.0)),
            (&along_x, Vec3::new(0.0, 0.005, offset - 100.0)),
        ] {
            commands.spawn((
                Mesh3d(mesh.clone()),
                MeshMaterial3d(paint.clone()),
                Transform::from_translation(at),
                bevy::light::NotShadowCaster,
            ));
        }
    }
}
