//! Combination files (`*.combination.ron`): a tow vehicle and a trailer, each a vehicle file,
//! coupled by a [`Hitch`] at their coupling points.
//!
//! ```ron
//! Combination(
//!     name: "Tractor and swap-body trailer",
//!     tow: "vehicles/semi_truck.vehicle.ron",
//!     trailer: "vehicles/trailer.vehicle.ron",
//!     // Optional, in each vehicle's chassis frame (m); by default the vehicle files'
//!     // `coupling` points.
//!     tow_point: None,
//!     trailer_point: None,
//! )
//! ```
//!
//! A combination is read with [`CombinationDescription::load`] (or `parse`) and spawned with
//! [`CombinationDescription::spawn`]. Errors name the file, line, column, field and reason: in
//! the combination file for its own fields (a vehicle file that cannot be read, a vehicle
//! without a coupling point, a coupling point that is not finite), in the vehicle file for
//! anything wrong inside it.

use std::path::Path;

use bevy::prelude::*;
use bevy_vehicle_chassis::{Coupling, Hitch};
use serde::Deserialize;

use crate::blocks::FileBlockTypes;
use crate::description::{VehicleDescription, syntax_error};
use crate::error::VehicleFileError;
use crate::source::{FieldPath, SourceFile, parse_tree};

/// A tow vehicle and a trailer from a combination file, read and checked.
#[derive(Clone, Debug)]
pub struct CombinationDescription {
    /// Display name.
    pub name: String,
    /// The tow vehicle.
    pub tow: VehicleDescription,
    /// The trailer.
    pub trailer: VehicleDescription,
    /// Coupling point on the tow vehicle (m, its chassis frame).
    pub tow_point: Vec3,
    /// Coupling point on the trailer (m, its chassis frame).
    pub trailer_point: Vec3,
}

/// The file as written.
#[derive(Deserialize)]
#[serde(rename = "Combination", deny_unknown_fields)]
struct CombinationFile {
    name: String,
    tow: String,
    trailer: String,
    #[serde(default)]
    tow_point: Option<[f32; 3]>,
    #[serde(default)]
    trailer_point: Option<[f32; 3]>,
}

impl CombinationDescription {
    /// Reads the combination file `path` (relative to `asset_root`, as asset paths are) and
    /// the vehicle files it names, and checks them.
    pub fn load(
        asset_root: impl AsRef<Path>,
        path: &str,
        types: &FileBlockTypes,
    ) -> Result<Self, VehicleFileError> {
        let root = asset_root.as_ref();
        let text = VehicleFileError::read(root, path)?;
        let read = |p: &str| std::fs::read_to_string(root.join(p)).map_err(|e| e.to_string());
        Self::parse(path, &text, types, read)
    }

    /// Reads a combination from `text` (a file called `path`, for messages), fetching the
    /// vehicle files and what they reference with `read` (given an asset path, it returns
    /// the text or why it cannot).
    pub fn parse(
        path: &str,
        text: &str,
        types: &FileBlockTypes,
        mut read: impl FnMut(&str) -> Result<String, String>,
    ) -> Result<Self, VehicleFileError> {
        let source = SourceFile::new(path, text);
        let text = &*source.text.clone();
        let tree = parse_tree(text).map_err(|e| syntax_error(&source, e))?;
        let file: CombinationFile = VehicleFileError::parse_ron_in(&source, &tree)?;
        // An error at the value of the top-level `field`.
        let at = |field: &str, reason: String| {
            let path = FieldPath::root().field(field);
            let offset = tree.find(text, &path.0).map_or(0, |node| node.span.start);
            VehicleFileError::at(&source, offset, &path, reason)
        };
        let mut vehicle = |field: &str, file_path: &str| {
            let vehicle_text = read(file_path)
                .map_err(|why| at(field, format!("cannot read file '{file_path}': {why}")))?;
            VehicleDescription::parse(file_path, &vehicle_text, types, &mut read)
        };
        let tow = vehicle("tow", &file.tow)?;
        let trailer = vehicle("trailer", &file.trailer)?;
        let point = |field: &str,
                     given: Option<[f32; 3]>,
                     d: &VehicleDescription,
                     file_path: &str| {
            let (point, whose) = match (given, d.coupling) {
                (Some(p), _) => (p, "this point"),
                (None, Some(p)) => (p, "its `coupling` point"),
                (None, None) => {
                    return Err(at(
                        field,
                        format!(
                            "'{file_path}' has no `coupling` point: give the vehicle file one, or give `{field}_point` here"
                        ),
                    ));
                }
            };
            if point.iter().all(|c| c.is_finite()) {
                Ok(Vec3::from(point))
            } else {
                let f = if given.is_some() {
                    format!("{field}_point")
                } else {
                    field.to_owned()
                };
                Err(at(&f, format!("{whose} must be finite (m), got {point:?}")))
            }
        };
        let tow_point = point("tow", file.tow_point, &tow, &file.tow)?;
        let trailer_point = point("trailer", file.trailer_point, &trailer, &file.trailer)?;
        Ok(CombinationDescription {
            name: file.name,
            tow,
            trailer,
            tow_point,
            trailer_point,
        })
    }

    /// Spawns the tow vehicle at `transform` and the trailer straight behind it, its coupling
    /// point on the tow vehicle's, and couples them with a [`Hitch`]; returns (tow vehicle,
    /// trailer). Both get their [`Coupling`] points. Place the tow vehicle at its ride height;
    /// where the two coupling points stand at different heights at rest, the trailer settles
    /// onto its wheels from there.
    pub fn spawn(&self, commands: &mut Commands, transform: Transform) -> (Entity, Entity) {
        let tow = self.tow.spawn(commands, transform);
        let at =
            transform.transform_point(self.tow_point) - transform.rotation * self.trailer_point;
        let trailer = self.trailer.spawn(
            commands,
            Transform::from_translation(at).with_rotation(transform.rotation),
        );
        let (tow_coupling, trailer_coupling) =
            (Coupling(self.tow_point), Coupling(self.trailer_point));
        commands.entity(tow).insert(tow_coupling);
        commands.entity(trailer).insert((
            trailer_coupling,
            Hitch::between(tow, &tow_coupling, &trailer_coupling),
        ));
        (tow, trailer)
    }
}
