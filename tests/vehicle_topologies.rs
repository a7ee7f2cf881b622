//! The shipped topologies check on their own, from disk and as Bevy assets.

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy_vehicle_physics::assets::{FileBlockTypes, LoadedTopology, VehicleTopology};
use bevy_vehicle_physics::prelude::*;

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// Each shipped topology: its file, its number of axles, and which wheels the drivetrain
/// drives.
const TOPOLOGIES: &[(&str, usize, &[&str])] = &[
    ("fwd", 2, &["wheel_fl", "wheel_fr"]),
    ("fwd_automatic", 2, &["wheel_fl", "wheel_fr"]),
    ("fwd_cvt", 2, &["wheel_fl", "wheel_fr"]),
    ("fwd_hybrid", 2, &["wheel_fl", "wheel_fr"]),
    ("rwd", 2, &["wheel_rl", "wheel_rr"]),
    ("awd", 2, &["wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"]),
    (
        "4x4_low_range",
        2,
        &["wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"],
    ),
    (
        "6x4_tandem",
        3,
        &["wheel_1l", "wheel_1r", "wheel_2l", "wheel_2r"],
    ),
    (
        "6x6_tandem",
        3,
        &[
            "wheel_fl", "wheel_fr", "wheel_1l", "wheel_1r", "wheel_2l", "wheel_2r",
        ],
    ),
    ("trailer_2axle", 2, &[]),
    (
        "tracked_2x2",
        5,
        &[
            "road_l1", "road_l2", "road_l3", "road_l4", "road_l5", "road_r1", "road_r2", "road_r3",
            "road_r4", "road_r5",
        ],
    ),
];

fn path(name: &str) -> String {
    format!("topologies/{name}.topology.ron")
}

/// The wheels some chain of connections leads to from a block without an input.
fn driven_wheels(t: &VehicleTopology) -> Vec<&str> {
    let mut wheels: Vec<&str> = t
        .blocks
        .iter()
        .filter(|(_, ty)| *ty == "Wheel")
        .map(|(n, _)| n.as_str())
        .filter(|w| t.connections.iter().any(|c| c.block == *w))
        .collect();
    wheels.sort();
    wheels
}

#[test]
fn shipped_topologies_check_on_their_own() {
    for (name, axles, driven) in TOPOLOGIES {
        let text = std::fs::read_to_string(format!("{ASSETS}/{}", path(name))).unwrap();
        let t = VehicleTopology::parse(&path(name), &text, &FileBlockTypes::default(), |p| {
            Err(format!("unexpected reference to {p}"))
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.axles.len(), *axles, "{name}");
        let mut expected = driven.to_vec();
        expected.sort();
        assert_eq!(driven_wheels(&t), expected, "{name}");
    }
}

#[test]
fn topologies_load_as_assets() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: ASSETS.into(),
            ..default()
        },
        VehiclePhysicsPlugins,
    ));
    let handles: Vec<Handle<LoadedTopology>> = TOPOLOGIES
        .iter()
        .map(|(name, ..)| app.world().resource::<AssetServer>().load(path(name)))
        .collect();
    for _ in 0..2000 {
        app.update();
        let assets = app.world().resource::<Assets<LoadedTopology>>();
        if handles.iter().all(|h| assets.get(h).is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let assets = app.world().resource::<Assets<LoadedTopology>>();
    for ((name, axles, _), handle) in TOPOLOGIES.iter().zip(&handles) {
        let loaded = assets
            .get(handle)
            .unwrap_or_else(|| panic!("{name} never loaded"));
        let topology = loaded.0.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(topology.axles.len(), *axles, "{name}");
    }
}

/// `TransferCase` is a file block type: the 4×4 topology names it, and its settings (the
/// `range` enum included) read from RON, with unknown fields refused.
#[test]
fn transfer_case_is_nameable_in_files() {
    assert!(FileBlockTypes::default().names().contains(&"TransferCase"));
    let name = "4x4_low_range";
    let text = std::fs::read_to_string(format!("{ASSETS}/{}", path(name))).unwrap();
    let t = VehicleTopology::parse(&path(name), &text, &FileBlockTypes::default(), |p| {
        Err(format!("unexpected reference to {p}"))
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        t.blocks
            .iter()
            .any(|(n, ty)| n == "transfer_case" && *ty == "TransferCase"),
        "{:?}",
        t.blocks
    );
    let tc: TransferCase =
        ron::from_str("TransferCase(low_ratio: 2.72, range: Low, locked: true)").unwrap();
    assert_eq!(tc.range, TransferRange::Low);
    assert!(tc.locked && tc.low_ratio == 2.72 && tc.high_ratio == 1.0);
    assert!(ron::from_str::<TransferCase>("(gear: 1)").is_err());
}
