//! The test track, built from primitives around the start (the origin, facing −Z):
//!
//! * a flat area everywhere (friction 1.0);
//! * straight ahead, a slalom of cones, 18 m apart;
//! * to the left (−X), an ISO 3888-1 style double lane change marked with cones, then
//!   low-friction patches (μ 0.5 and 0.2);
//! * to the right (+X), 10 %, 20 % and 30 % slopes up to plateaus, and a jump ramp;
//! * further left, speed bumps and a washboard section;
//! * far ahead, a banked 180° curve (15° bank, 40 m radius).
//!
//! Every piece is a fixed Rapier collider with a matching mesh; the cones are light dynamic
//! bodies that can be knocked over.

use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;

/// Spawns the track.
pub struct TrackPlugin;

impl Plugin for TrackPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn_track);
    }
}

/// Meshes and materials while building.
struct Builder<'a, 'w, 's> {
    commands: &'a mut Commands<'w, 's>,
    meshes: &'a mut Assets<Mesh>,
    materials: &'a mut Assets<StandardMaterial>,
}

impl Builder<'_, '_, '_> {
    /// A fixed box of `size` (m) at `transform`, with road friction `mu`.
    fn block(&mut self, name: &str, size: Vec3, transform: Transform, mu: f32, color: Color) {
        let mesh = self.meshes.add(Cuboid::from_size(size));
        let material = self.materials.add(color);
        self.shared_block(name, size, transform, mu, &mesh, &material);
    }

    /// A fixed box like [`Builder::block`] with a mesh (of `size`) and material shared with
    /// others, so the renderer draws them in one batch.
    fn shared_block(
        &mut self,
        name: &str,
        size: Vec3,
        transform: Transform,
        mu: f32,
        mesh: &Handle<Mesh>,
        material: &Handle<StandardMaterial>,
    ) {
        self.commands.spawn((
            Name::new(name.to_owned()),
            Mesh3d(mesh.clone()),
            MeshMaterial3d(material.clone()),
            RigidBody::Fixed,
            Collider::cuboid(size.x / 2.0, size.y / 2.0, size.z / 2.0),
            Friction::coefficient(mu),
            transform,
        ));
    }

    /// A fixed cylinder across the road (axis along X): a bump of `height` (m) on the ground.
    /// `look` is a mesh of `Cylinder::new(radius, width)` and its material, shared by the bumps
    /// of a kind.
    fn bump(
        &mut self,
        name: &str,
        (radius, height, width): (f32, f32, f32),
        at: Vec3,
        look: &(Handle<Mesh>, Handle<StandardMaterial>),
    ) {
        self.commands.spawn((
            Name::new(name.to_owned()),
            Mesh3d(look.0.clone()),
            MeshMaterial3d(look.1.clone()),
            RigidBody::Fixed,
            Collider::cylinder(width / 2.0, radius),
            Friction::coefficient(1.0),
            Transform::from_translation(at + Vec3::Y * (height - radius))
                .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
        ));
    }

    /// A traffic cone (0.7 m, 2 kg) standing on the ground at `at`.
    fn cone(&mut self, at: Vec3, mesh: &Handle<Mesh>, material: &Handle<StandardMaterial>) {
        self.commands.spawn((
            Name::new("cone"),
            Mesh3d(mesh.clone()),
            MeshMaterial3d(material.clone()),
            RigidBody::Dynamic,
            Collider::cone(0.35, 0.18),
            ColliderMassProperties::Mass(2.0),
            Friction::coefficient(0.8),
            Transform::from_translation(at + Vec3::Y * 0.35),
        ));
    }

    /// A slope of `grade` (rise/run) climbing toward −Z from `start` to a plateau `height` (m)
    /// high and `plateau` (m) long, `width` (m) wide, and down again at the same grade.
    fn hill(&mut self, name: &str, start: Vec3, grade: f32, height: f32, plateau: f32, width: f32) {
        let angle = grade.atan();
        let run = height / grade;
        let length = (run * run + height * height).sqrt();
        let thickness = 0.4;
        let color = Color::srgb(0.55, 0.5, 0.42);
        // Up: a slab tilted about X, its top surface through the start line at ground level.
        let up_mid = start + Vec3::new(0.0, height / 2.0, -run / 2.0);
        let tilt = Quat::from_rotation_x(angle);
        self.block(
            &format!("{name} up"),
            Vec3::new(width, thickness, length),
            Transform::from_translation(up_mid + tilt * Vec3::new(0.0, -thickness / 2.0, 0.0))
                .with_rotation(tilt),
            1.0,
            color,
        );
        // Plateau, then down.
        let top = start + Vec3::new(0.0, height, -run);
        self.block(
            &format!("{name} plateau"),
            Vec3::new(width, height, plateau),
            Transform::from_translation(top + Vec3::new(0.0, -height / 2.0, -plateau / 2.0)),
            1.0,
            color,
        );
        let down_mid = top + Vec3::new(0.0, -height / 2.0, -plateau - run / 2.0);
        let tilt = Quat::from_rotation_x(-angle);
        self.block(
            &format!("{name} down"),
            Vec3::new(width, thickness, length),
            Transform::from_translation(down_mid + tilt * Vec3::new(0.0, -thickness / 2.0, 0.0))
                .with_rotation(tilt),
            1.0,
            color,
        );
    }
}

fn spawn_track(
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
    let cone_mesh = meshes.add(Cone::new(0.18, 0.7));
    let cone_material = materials.add(Color::srgb(1.0, 0.45, 0.05));
    let mut b = Builder {
        commands: &mut commands,
        meshes: &mut meshes,
        materials: &mut materials,
    };

    // The flat area.
    b.commands.spawn((
        Name::new("ground"),
        Mesh3d(b.meshes.add(Plane3d::default().mesh().size(800.0, 800.0))),
        MeshMaterial3d(b.materials.add(Color::srgb(0.32, 0.36, 0.32))),
        RigidBody::Fixed,
        Collider::halfspace(Vec3::Y).expect("unit normal"),
        Friction::coefficient(1.0),
        Transform::default(),
    ));

    // A painted 10 m grid over the middle of the flat area (visual only), so speed and
    // heading show on the plain ground: two shared meshes, one material.
    let paint = b.materials.add(StandardMaterial {
        base_color: Color::srgb(0.42, 0.46, 0.42),
        perceptual_roughness: 1.0,
        ..default()
    });
    let along_z = b.meshes.add(Cuboid::new(0.12, 0.01, 400.0));
    let along_x = b.meshes.add(Cuboid::new(400.0, 0.01, 0.12));
    for k in -20..=20 {
        let offset = 10.0 * k as f32;
        for (mesh, at) in [
            (&along_z, Vec3::new(offset, 0.005, -100.0)),
            (&along_x, Vec3::new(0.0, 0.005, offset - 100.0)),
        ] {
            b.commands.spawn((
                Mesh3d(mesh.clone()),
                MeshMaterial3d(paint.clone()),
                Transform::from_translation(at),
                bevy::light::NotShadowCaster,
            ));
        }
    }

    // Slalom straight ahead.
    for i in 0..8 {
        b.cone(
            Vec3::new(0.0, 0.0, -40.0 - 18.0 * i as f32),
            &cone_mesh,
            &cone_material,
        );
    }

    // ISO 3888-1 style double lane change, for a 1.8 m wide car, to the left of the start:
    // entry lane 15 m (1.1·w + 0.25 wide), 30 m to change, 25 m offset by 3.5 m
    // (1.2·w + 0.25), 25 m to change back, exit 15 m (1.3·w + 0.25).
    let w = 1.8;
    let x0 = -30.0;
    let sections: [(f32, f32, f32, f32); 3] = [
        (0.0, 15.0, 0.0, 1.1 * w + 0.25),
        (45.0, 25.0, -3.5, 1.2 * w + 0.25),
        (95.0, 15.0, 0.0, 1.3 * w + 0.25),
    ];
    for (start, length, offset, lane) in sections {
        for k in 0..=3 {
            let z = -20.0 - start - length * k as f32 / 3.0;
            for side in [-0.5, 0.5] {
                b.cone(
                    Vec3::new(x0 + offset + side * lane, 0.0, z),
                    &cone_mesh,
                    &cone_material,
                );
            }
        }
    }

    // Low-friction patches beyond the lane change.
    b.block(
        "wet patch (μ 0.5)",
        Vec3::new(10.0, 0.02, 40.0),
        Transform::from_xyz(-30.0, 0.01, -160.0),
        0.5,
        Color::srgb(0.25, 0.3, 0.45),
    );
    b.block(
        "ice patch (μ 0.2)",
        Vec3::new(10.0, 0.02, 40.0),
        Transform::from_xyz(-30.0, 0.01, -205.0),
        0.2,
        Color::srgb(0.8, 0.9, 1.0),
    );

    // Slopes to the right, and a jump ramp.
    for (i, grade) in [0.1f32, 0.2, 0.3].into_iter().enumerate() {
        b.hill(
            &format!("{:.0} % slope", grade * 100.0),
            Vec3::new(25.0 + 12.0 * i as f32, 0.0, -20.0),
            grade,
            2.0,
            12.0,
            8.0,
        );
    }
    let ramp = Quat::from_rotation_x(0.15);
    b.block(
        "jump ramp",
        Vec3::new(5.0, 0.3, 8.0),
        Transform::from_xyz(70.0, 0.45, -30.0).with_rotation(ramp),
        1.0,
        Color::srgb(0.6, 0.55, 0.3),
    );

    // Speed bumps (10 cm) and a washboard (3 cm every 0.7 m).
    let speed_bump = (
        b.meshes.add(Cylinder::new(0.6, 8.0)),
        b.materials.add(Color::srgb(0.85, 0.8, 0.2)),
    );
    for i in 0..5 {
        b.bump(
            "speed bump",
            (0.6, 0.10, 8.0),
            Vec3::new(-60.0, 0.0, -20.0 - 10.0 * i as f32),
            &speed_bump,
        );
    }
    let washboard = (
        b.meshes.add(Cylinder::new(0.3, 8.0)),
        b.materials.add(Color::srgb(0.45, 0.4, 0.35)),
    );
    for i in 0..60 {
        b.bump(
            "washboard",
            (0.3, 0.03, 8.0),
            Vec3::new(-75.0, 0.0, -20.0 - 0.7 * i as f32),
            &washboard,
        );
    }

    // A banked 180° curve far ahead: 24 segments on a 40 m radius, banked 15° inward.
    let (centre, radius, bank, width) = (
        Vec3::new(40.0, 0.0, -260.0),
        40.0f32,
        15f32.to_radians(),
        12.0,
    );
    let segments = 24;
    let length = core::f32::consts::PI * radius / segments as f32 + 0.6;
    let size = Vec3::new(width, 0.3, length);
    let segment_mesh = b.meshes.add(Cuboid::from_size(size));
    let segment_material = b.materials.add(Color::srgb(0.4, 0.4, 0.45));
    for i in 0..segments {
        let a = core::f32::consts::PI * (i as f32 + 0.5) / segments as f32;
        // From the left of the centre (−X) around the far side to the right.
        let outward = Vec3::new(-a.cos(), 0.0, -a.sin());
        let position = centre + outward * radius + Vec3::Y * (width / 2.0 * bank.sin());
        // Turns +X onto `outward`.
        let yaw = Quat::from_rotation_y(f32::atan2(-outward.z, outward.x));
        b.shared_block(
            "banked curve",
            size,
            Transform::from_translation(position - Vec3::Y * 0.15)
                .with_rotation(yaw * Quat::from_rotation_z(bank)),
            1.0,
            &segment_mesh,
            &segment_material,
        );
    }
}
