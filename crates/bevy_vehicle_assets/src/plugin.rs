//! [`VehicleAssetsPlugin`]: the `*.vehicle.ron` asset loader, [`VehicleAsset`] spawning, and hot
//! reload.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{AssetLoadFailedEvent, AssetLoader, LoadContext};
use bevy::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use crate::blocks::FileBlockTypes;
use crate::description::{BuildError, Fetched, VehicleDescription, build};
use crate::error::VehicleFileError;
use crate::spawn::SpawnedFrom;

/// Loads vehicle files (`*.vehicle.ron`) as [`VehicleDescription`]s, spawns the vehicles of
/// [`VehicleAsset`] entities, and updates them when their files change.
///
/// Part of `VehiclePhysicsPlugins`. The loader needs Bevy's `AssetPlugin` (which
/// `DefaultPlugins` brings).
/// With Bevy's `file_watcher` feature, saving a file reloads it; otherwise call
/// `AssetServer::reload`. A file that fails to load or reload is logged once with its
/// [`VehicleFileError`]; a vehicle whose file fails to reload keeps its last good settings.
#[derive(Default)]
pub struct VehicleAssetsPlugin;

/// System sets of [`VehicleAssetsPlugin`], in `Update`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VehicleAssetSystems {
    /// Spawns newly loaded vehicles and applies reloaded files.
    Sync,
}

impl Plugin for VehicleAssetsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<FileBlockTypes>();
    }

    /// The loader and systems need Bevy's `AssetPlugin`; without it (a headless app on
    /// `MinimalPlugins`) vehicles can still be read with [`VehicleDescription::load`].
    fn finish(&self, app: &mut App) {
        if !app.world().contains_resource::<AssetServer>() {
            debug!("no AssetPlugin: vehicle files load only through VehicleDescription::load");
            return;
        }
        let types = app.world().resource::<FileBlockTypes>().clone();
        app.init_asset::<VehicleDescription>()
            .register_asset_loader(VehicleLoader { types })
            .add_systems(
                Update,
                (report_load_failures, sync_vehicle_assets)
                    .chain()
                    .in_set(VehicleAssetSystems::Sync),
            );
    }
}

/// On an entity with a `Transform`: make it the vehicle this file describes, once loaded, and
/// keep it in step with the file.
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
#[require(Transform)]
pub struct VehicleAsset(pub Handle<VehicleDescription>);

/// The loader of `*.vehicle.ron` files. Referenced topologies, tires and CSV tables are read
/// with the vehicle, so the asset is complete and checked when it loads, and editing any of
/// them reloads it.
#[derive(TypePath)]
pub struct VehicleLoader {
    types: FileBlockTypes,
}

impl AssetLoader for VehicleLoader {
    type Asset = VehicleDescription;
    type Settings = ();
    type Error = VehicleFileError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<VehicleDescription, VehicleFileError> {
        let path = load_context.path().path().to_owned();
        let whole_file = |reason: String| VehicleFileError {
            file: path.clone(),
            line: 1,
            column: 1,
            field: String::new(),
            reason,
        };
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| whole_file(format!("cannot read the file: {e}")))?;
        let text =
            String::from_utf8(bytes).map_err(|e| whole_file(format!("not UTF-8 text: {e}")))?;
        let name = path.to_string_lossy().into_owned();
        // Build; each time a referenced file is needed, read it and build again.
        let mut files: HashMap<String, Result<Arc<str>, String>> = HashMap::new();
        loop {
            let mut fetch = |p: &str| match files.get(p) {
                Some(Ok(text)) => Fetched::Text(text.clone()),
                Some(Err(why)) => Fetched::Missing(why.clone()),
                None => Fetched::Pending,
            };
            match build(&name, &text, &self.types, &mut fetch) {
                Ok(description) => return Ok(description),
                Err(BuildError::File(e)) => return Err(*e),
                Err(BuildError::Pending(p)) => {
                    let read = match load_context.read_asset_bytes(p.clone()).await {
                        Ok(bytes) => String::from_utf8(bytes)
                            .map(Arc::from)
                            .map_err(|e| format!("not UTF-8 text: {e}")),
                        Err(e) => Err(e.to_string()),
                    };
                    files.insert(p, read);
                }
            }
        }
    }

    fn extensions(&self) -> &[&str] {
        &["vehicle.ron"]
    }
}

fn report_load_failures(mut failures: MessageReader<AssetLoadFailedEvent<VehicleDescription>>) {
    for failure in failures.read() {
        error!("vehicle file refused: {}", failure.error);
    }
}

fn sync_vehicle_assets(
    mut commands: Commands,
    mut events: MessageReader<AssetEvent<VehicleDescription>>,
    descriptions: Res<Assets<VehicleDescription>>,
    vehicles: Query<(
        Entity,
        &VehicleAsset,
        Option<&SpawnedFrom>,
        Option<&VehicleControls>,
    )>,
) {
    let changed: HashSet<AssetId<VehicleDescription>> = events
        .read()
        .filter_map(|event| match event {
            AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    for (entity, asset, spawned, controls) in &vehicles {
        let Some(description) = descriptions.get(&asset.0) else {
            continue;
        };
        let controls = controls.cloned().unwrap_or_default();
        match spawned {
            None => description.build_on(&mut commands, entity, &controls),
            Some(old) if changed.contains(&asset.0.id()) => {
                description.update(&mut commands, entity, old, &controls);
                info!("vehicle '{}' reloaded", description.name);
            }
            Some(_) => {}
        }
    }
}
