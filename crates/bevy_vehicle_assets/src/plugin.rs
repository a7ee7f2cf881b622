//! [`VehicleAssetsPlugin`]: the `*.vehicle.ron` asset loader, [`VehicleAsset`] spawning, and hot
//! reload.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext, LoadState};
use bevy::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use crate::blocks::FileBlockTypes;
use crate::description::{
    BuildError, Built, Fetched, VehicleDescription, VehicleTopology, build, build_topology,
};
use crate::error::VehicleFileError;
use crate::spawn::SpawnedFrom;

/// Loads vehicle files (`*.vehicle.ron`) as [`LoadedVehicle`] assets, spawns the vehicles of
/// [`VehicleAsset`] entities, and updates them when their files change.
///
/// Part of `VehiclePhysicsPlugins`. The loader needs Bevy's `AssetPlugin` (which
/// `DefaultPlugins` brings), added before this plugin. With Bevy's `file_watcher` feature,
/// saving a file (the vehicle's, or a topology, tire or CSV file it references) reloads it;
/// otherwise call `AssetServer::reload` with the vehicle file's path.
///
/// A file that is refused is logged once per version of the file, with its
/// [`VehicleFileError`], and shown in the entity's [`VehicleAssetStatus`]. A vehicle whose
/// file is refused on reload keeps running on its last good settings; one whose file is
/// refused at first is not built until the file is fixed.
#[derive(Default)]
pub struct VehicleAssetsPlugin;

/// System sets of [`VehicleAssetsPlugin`], in `Update`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VehicleAssetSystems {
    /// Spawns newly loaded vehicles and applies reloaded files.
    Sync,
}

impl Plugin for VehicleAssetsPlugin {
    /// The loader and systems need Bevy's `AssetPlugin`, added before this plugin (as
    /// `DefaultPlugins` does); without it (a headless app on `MinimalPlugins`) vehicles can
    /// still be read with [`VehicleDescription::load`].
    fn build(&self, app: &mut App) {
        app.init_resource::<FileBlockTypes>();
        if !app.is_plugin_added::<AssetPlugin>() {
            debug!("no AssetPlugin: vehicle files load only through VehicleDescription::load");
            return;
        }
        let types = app.world().resource::<FileBlockTypes>().clone();
        app.init_asset::<LoadedVehicle>()
            .init_asset::<LoadedTopology>()
            .register_asset_loader(VehicleLoader {
                types: types.clone(),
            })
            .register_asset_loader(TopologyLoader { types })
            .add_systems(
                Update,
                sync_vehicle_assets.in_set(VehicleAssetSystems::Sync),
            );
    }
}

/// A vehicle file as loaded: the checked vehicle, or why the file was refused.
///
/// A refused file still loads as an asset (rather than failing the load), so that the error
/// reaches the vehicles using it once, and a vehicle keeps its last good settings.
#[derive(Asset, TypePath, Clone, Debug)]
pub struct LoadedVehicle(pub Result<VehicleDescription, VehicleFileError>);

/// A topology file as loaded: the checked topology, or why the file was refused.
///
/// Vehicle files read their topology themselves (and reload when it changes); load a topology
/// as an asset to inspect or check it on its own (tools, editors, the debug view).
#[derive(Asset, TypePath, Clone, Debug)]
pub struct LoadedTopology(pub Result<VehicleTopology, VehicleFileError>);

/// On an entity with a `Transform`: make it the vehicle this file describes, once loaded, and
/// keep it in step with the file. Given another file's handle later, the vehicle becomes that
/// file's once it has loaded (as a reload whose topology changed: the body keeps its pose
/// and velocity), and [`VehicleAssetStatus`] reads `Loading` until then.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use bevy_vehicle_assets::VehicleAsset;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     commands.spawn((
///         VehicleAsset(assets.load("vehicles/hatchback.vehicle.ron")),
///         Transform::from_xyz(0.0, 0.5, 0.0),
///     ));
/// }
/// ```
#[derive(Component, Clone, Debug)]
#[require(Transform, VehicleAssetStatus)]
pub struct VehicleAsset(pub Handle<LoadedVehicle>);

/// On a [`VehicleAsset`] entity: what became of its file.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub enum VehicleAssetStatus {
    /// The file has not loaded yet.
    #[default]
    Loading,
    /// The vehicle matches the file.
    Applied,
    /// The latest version of the file was refused. The vehicle, if it was built before, runs
    /// on its last good settings.
    Refused(VehicleFileError),
}

/// The loader of `*.vehicle.ron` files. Referenced topologies, tires and CSV tables are read
/// with the vehicle, so the asset is complete and checked when it loads, and editing any of
/// them reloads it.
#[derive(TypePath)]
pub struct VehicleLoader {
    types: FileBlockTypes,
}

impl AssetLoader for VehicleLoader {
    type Asset = LoadedVehicle;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<LoadedVehicle, std::io::Error> {
        read_with_references(reader, load_context, |name, text, fetch| {
            build(name, text, &self.types, fetch)
        })
        .await
        .map(LoadedVehicle)
    }

    fn extensions(&self) -> &[&str] {
        &["vehicle.ron"]
    }
}

/// The loader of `*.topology.ron` files, checked on their own (see [`VehicleTopology::parse`]).
#[derive(TypePath)]
pub struct TopologyLoader {
    types: FileBlockTypes,
}

impl AssetLoader for TopologyLoader {
    type Asset = LoadedTopology;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<LoadedTopology, std::io::Error> {
        read_with_references(reader, load_context, |name, text, fetch| {
            build_topology(name, text, &self.types, fetch)
        })
        .await
        .map(LoadedTopology)
    }

    fn extensions(&self) -> &[&str] {
        &["topology.ron"]
    }
}

/// Reads the file, then builds it with `build`; each time a referenced file is needed, reads it
/// through the load context (so that editing it reloads this asset) and builds again. Only
/// I/O errors on the file itself fail the load; a refused file is an `Err` inside.
async fn read_with_references<T>(
    reader: &mut dyn Reader,
    load_context: &mut LoadContext<'_>,
    build: impl Fn(&str, &str, &mut dyn FnMut(&str) -> Fetched) -> Built<T>,
) -> Result<Result<T, VehicleFileError>, std::io::Error> {
    let path = load_context.path().path().to_owned();
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).await?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(Err(VehicleFileError {
            file: path,
            line: 1,
            column: 1,
            field: String::new(),
            reason: "not UTF-8 text".into(),
        }));
    };
    let name = path.to_string_lossy().into_owned();
    let mut files: HashMap<String, Result<Arc<str>, String>> = HashMap::new();
    loop {
        let mut fetch = |p: &str| match files.get(p) {
            Some(Ok(text)) => Fetched::Text(text.clone()),
            Some(Err(why)) => Fetched::Missing(why.clone()),
            None => Fetched::Pending,
        };
        match build(&name, &text, &mut fetch) {
            Ok(value) => return Ok(Ok(value)),
            Err(BuildError::File(e)) => return Ok(Err(*e)),
            Err(BuildError::Pending(p)) => {
                let read = match load_context.read_asset_bytes(p.clone()).await {
                    Ok(bytes) => String::from_utf8(bytes)
                        .map(Arc::from)
                        .map_err(|_| "not UTF-8 text".to_owned()),
                    Err(e) => Err(e.to_string()),
                };
                files.insert(p, read);
            }
        }
    }
}

fn sync_vehicle_assets(
    mut commands: Commands,
    mut events: MessageReader<AssetEvent<LoadedVehicle>>,
    files: Res<Assets<LoadedVehicle>>,
    server: Res<AssetServer>,
    mut vehicles: Query<(
        Entity,
        Ref<VehicleAsset>,
        &mut VehicleAssetStatus,
        Option<&SpawnedFrom>,
        Option<&VehicleControls>,
    )>,
) {
    // A first load only builds vehicles not built yet; a modification retunes built ones too.
    // (The `Added` event can arrive a frame after the vehicle was built from the loaded file:
    // treating it as a change applied every file twice at startup.)
    let mut added: HashSet<AssetId<LoadedVehicle>> = HashSet::new();
    let mut modified: HashSet<AssetId<LoadedVehicle>> = HashSet::new();
    for event in events.read() {
        let (set, id) = match event {
            AssetEvent::Added { id } => (&mut added, id),
            AssetEvent::Modified { id } => (&mut modified, id),
            _ => continue,
        };
        if set.insert(*id)
            && let Some(LoadedVehicle(Err(error))) = files.get(*id)
        {
            error!("vehicle file refused: {error}");
        }
    }
    for (entity, asset, mut status, spawned, controls) in &mut vehicles {
        let id = asset.0.id();
        let fresh = modified.contains(&id) || (added.contains(&id) && spawned.is_none());
        // A built vehicle given another file: it becomes that file's once loaded. (Until
        // 2026-12-02 the new handle waited for its file's next change on disk, the status
        // `Applied` meanwhile.)
        let swapped = spawned.is_some() && asset.is_changed() && !asset.is_added();
        if swapped {
            *status = VehicleAssetStatus::Loading;
        }
        if !(fresh || *status == VehicleAssetStatus::Loading) {
            continue;
        }
        match files.get(&asset.0).map(|f| &f.0) {
            None => {
                // A file that cannot be read at all never becomes an asset.
                if let LoadState::Failed(error) = server.load_state(&asset.0) {
                    let refused = VehicleFileError::unlocated(
                        path_of(&asset.0),
                        "",
                        format!("cannot load the file: {error}"),
                    );
                    error!("vehicle file refused: {refused}");
                    *status = VehicleAssetStatus::Refused(refused);
                }
            }
            Some(Err(error)) => *status = VehicleAssetStatus::Refused(error.clone()),
            Some(Ok(description)) => {
                // Read from a file, it passes; an asset changed in code may not.
                if let Err(error) = description.validate() {
                    error!("{error}; the changed description was not applied");
                    *status = VehicleAssetStatus::Refused(VehicleFileError::unlocated(
                        path_of(&asset.0),
                        error.field,
                        format!("{} (set in code after the file was read)", error.reason),
                    ));
                    continue;
                }
                let controls = controls.cloned().unwrap_or_default();
                match spawned {
                    None => description.build_on(&mut commands, entity, &controls),
                    Some(old) => {
                        description.update(&mut commands, entity, old, &controls);
                        info!("vehicle '{}' reloaded", description.name);
                    }
                }
                *status = VehicleAssetStatus::Applied;
            }
        }
    }
}

/// The asset path of a vehicle file's handle (empty for a handle made in code).
fn path_of(handle: &Handle<LoadedVehicle>) -> std::path::PathBuf {
    handle
        .path()
        .map(|p| p.path().to_owned())
        .unwrap_or_default()
}
