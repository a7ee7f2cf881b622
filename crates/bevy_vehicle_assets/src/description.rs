//! [`VehicleDescription`]: a vehicle read from its files and checked, ready to spawn; and the
//! file formats it is read from.
//!
//! # Files
//!
//! Paths inside files are relative to the asset folder (like
//! [`AssetServer::load`](bevy::asset::AssetServer::load)), e.g. `"tires/passenger.tire.ron"`.
//!
//! A **topology** (`*.topology.ron`) lists the blocks by name and type, which output drives
//! each block, and which wheel blocks form each axle, front to back:
//!
//! ```ron
//! Topology(
//!     blocks: {
//!         "engine": Engine,
//!         "gearbox": Gearbox(shift_time: 0.3),   // a type, with default settings
//!         "differential": Differential,
//!         "wheel_rl": Wheel,
//!         // ...
//!     },
//!     // driven block: "upstream block" (its `out` port) or "upstream block.port"
//!     connections: { "gearbox": "engine", "differential": "gearbox", "wheel_rl": "differential.left" },
//!     axles: [(left: "wheel_fl", right: "wheel_fr"), (left: "wheel_rl", right: "wheel_rr")],
//! )
//! ```
//!
//! A **vehicle** (`*.vehicle.ron`) names a topology (a path, or a `Topology(..)` inline) and
//! sets the values: `chassis`, one entry in `axles` per topology axle (position, track, wheel,
//! tire, suspension, anti-roll bar), `blocks` (any field of any block, overriding the
//! topology's), `brakes`, `steering`, `aerodynamics`, `speed_limiter` (none by default),
//! `substeps` and `static_preload` (on by default: each suspension's `preload` is set to its
//! static deflection under the chassis weight, so the vehicle spawns at its design ride
//! height). A tire is a path to a `*.tire.ron` file or a `Tire(..)` inline; a block field that
//! is a list of number pairs (an engine's torque table) may be given as `Csv("path.csv")`, a
//! table of two numeric columns, one row per line, with an optional header on the first line;
//! blank lines and lines starting with `#` are skipped.
//!
//! Every field, with its unit and default, is listed in `docs/vehicle_files.md`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_vehicle_chassis::modules::VehicleModule;
use bevy_vehicle_chassis::{
    Aerodynamics, Brakes, ChassisError, GroundProbe, SpeedLimiter, Steering, Suspension, WheelSpec,
    static_deflections,
};
use bevy_vehicle_drivetrain::prelude::*;
use ron::value::RawValue;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::blocks::{FileBlock, FileBlockTypes, WHEEL_TYPE, compact};
use crate::error::{VehicleFileError, closest};
use crate::modules::{FileModule, ModuleKind};
use crate::source::{FieldPath, Node, NodeKind, SourceFile, next_token, offset_of, parse_tree};
use crate::validate::no_block_called;

/// Gravity (m/s²) for the static preload: Rapier's default.
const GRAVITY: f64 = bevy_vehicle_chassis::GRAVITY;

/// The chassis body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "Chassis", deny_unknown_fields)]
pub struct ChassisSpec {
    /// Total mass, wheels included (kg, > 0).
    pub mass: f32,
    /// Principal moments of inertia about the centre of mass, along the chassis axes
    /// (kg·m², each > 0): about X (pitch), Y (yaw) and Z (roll), since +X is right and −Z
    /// forward.
    pub inertia: [f32; 3],
    /// Centre of mass (m, chassis frame: +X right, +Y up, −Z forward).
    pub center_of_mass: [f32; 3],
    /// Half extents of the body's collision box (m, each > 0).
    pub body_half_extents: [f32; 3],
    /// Centre of the body's collision box (m, chassis frame).
    #[serde(default)]
    pub body_center: [f32; 3],
}

/// The wheel blocks of one axle, by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "AxleWheels", deny_unknown_fields)]
pub struct AxleWheels {
    /// The left wheel block.
    pub left: String,
    /// The right wheel block.
    pub right: String,
}

/// One drive connection: `block` hangs from output `port` of `upstream`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// The driven block.
    pub block: String,
    /// The driving block.
    pub upstream: String,
    /// The driving block's output port.
    pub port: &'static str,
}

/// The shape of a vehicle: its blocks and how they connect. Two vehicles with equal topologies
/// differ only in values, so a reload between them keeps every block's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VehicleTopology {
    /// (name, type name) of every block, wheels included, sorted by name.
    pub blocks: Vec<(String, &'static str)>,
    /// The drive connections, sorted by driven block.
    pub connections: Vec<Connection>,
    /// The wheels of each axle, front to back.
    pub axles: Vec<AxleWheels>,
}

/// One axle: where its wheels are and what they are.
#[derive(Clone, Debug, PartialEq)]
pub struct AxleSpec {
    /// Z of the axle (m, chassis frame; negative is forward of the origin).
    pub z: f32,
    /// Distance between the left and right wheel centres (m, > 0).
    pub track: f32,
    /// Y of the wheel centres at design ride height (m, chassis frame).
    pub height: f32,
    /// Whether the steering turns this axle's wheels.
    pub steered: bool,
    /// Anti-roll bar stiffness (N/m, ≥ 0; 0 for none).
    pub anti_roll_bar: f64,
    /// Both wheels of the axle, with their tire, suspension and ground probe. The suspension's
    /// `preload` is the static deflection when [`VehicleDescription::static_preload`] is set.
    pub wheel: WheelSpec,
}

/// A non-wheel block and its settings.
#[derive(Clone, Debug)]
pub struct NamedBlock {
    /// The block's name (its entity's `Name`).
    pub name: String,
    /// Its type and settings.
    pub block: Box<dyn FileBlock>,
}

/// A vehicle read from its files and checked: everything needed to spawn it.
///
/// Read one with [`VehicleDescription::load`] (from disk) or [`VehicleDescription::parse`], or
/// load it as an asset (`asset_server.load("vehicles/x.vehicle.ron")`) and spawn it with a
/// [`VehicleAsset`](crate::VehicleAsset) component.
#[derive(Clone, Debug)]
pub struct VehicleDescription {
    /// The vehicle's name.
    pub name: String,
    /// Its blocks and connections.
    pub topology: VehicleTopology,
    /// The chassis body.
    pub chassis: ChassisSpec,
    /// The axles, front to back, matching `topology.axles`.
    pub axles: Vec<AxleSpec>,
    /// The settings of every non-wheel block, in `topology.blocks` order.
    pub blocks: Vec<NamedBlock>,
    /// Brakes.
    pub brakes: Brakes,
    /// Steering of the steered axles.
    pub steering: Steering,
    /// Aerodynamic drag.
    pub aerodynamics: Aerodynamics,
    /// A speed limiter, if the vehicle has one (its `speed_limiter` field, `None` by default).
    pub speed_limiter: Option<SpeedLimiter>,
    /// Drivetrain RK4 substeps per fixed step (1..=[`MAX_SUBSTEPS`](bevy_vehicle_drivetrain::MAX_SUBSTEPS)).
    pub substeps: u32,
    /// Whether each suspension's preload was set to its static deflection, so that the vehicle
    /// rests at design ride height.
    pub static_preload: bool,
    /// The subsystem modules the file picks in place of the built-in ones.
    pub modules: ModuleChoices,
    /// Where the vehicle couples to another (m, chassis frame): a tow vehicle's jaw coupling
    /// or fifth wheel, a trailer's drawbar eye or kingpin. Spawned as a
    /// [`Coupling`](bevy_vehicle_chassis::Coupling); `Hitch::between` joins two vehicles.
    pub coupling: Option<[f32; 3]>,
}

/// The subsystem modules a vehicle file picks (its `modules` field); a slot left out keeps
/// the built-in module (for the drivetrain, the block graph).
#[derive(Clone, Debug, Default)]
pub struct ModuleChoices {
    /// The brake module.
    pub brake: Option<Box<dyn FileModule>>,
    /// The steering module.
    pub steering: Option<Box<dyn FileModule>>,
    /// The drivetrain module, replacing the block graph.
    pub drivetrain: Option<Box<dyn FileModule>>,
    /// The suspension module.
    pub suspension: Option<Box<dyn FileModule>>,
    /// Anti-roll-bar modules by axle (0 = front-most), replacing that axle's built-in bar.
    pub anti_roll_bars: Vec<(u8, Box<dyn FileModule>)>,
}

impl ModuleChoices {
    /// The slots and their chosen modules, in slot order (`brake`, `steering`, `drivetrain`,
    /// `suspension`, then the bars by axle).
    pub(crate) fn slots(&self) -> impl Iterator<Item = (ModuleKind, u8, &dyn FileModule)> {
        [
            (ModuleKind::Brake, &self.brake),
            (ModuleKind::Steering, &self.steering),
            (ModuleKind::Drivetrain, &self.drivetrain),
            (ModuleKind::Suspension, &self.suspension),
        ]
        .into_iter()
        .filter_map(|(kind, m)| m.as_deref().map(|m| (kind, 0, m)))
        .chain(
            self.anti_roll_bars
                .iter()
                .map(|(axle, m)| (ModuleKind::AntiRollBar, *axle, m.as_ref())),
        )
    }

    /// Whether both choose the same modules with the same settings.
    pub fn same_as(&self, other: &ModuleChoices) -> bool {
        let (a, b): (Vec<_>, Vec<_>) = (self.slots().collect(), other.slots().collect());
        a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x.0 == y.0 && x.1 == y.1 && x.2.same_as(y.2))
    }

    /// The modules to install: new modules with the chosen settings.
    pub fn modules(&self) -> Vec<VehicleModule> {
        self.slots().map(|(_, axle, m)| m.module(axle)).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// File schemas. Values that need more than serde (blocks by type name, files by path) are
// skipped by serde and read from the document tree.

#[derive(Deserialize)]
#[serde(rename = "Vehicle", deny_unknown_fields)]
#[allow(dead_code)] // The skipped fields are read from the tree.
struct VehicleFile {
    name: String,
    topology: IgnoredAny,
    chassis: ChassisSpec,
    axles: Vec<AxleFile>,
    #[serde(default)]
    blocks: BTreeMap<String, IgnoredAny>,
    #[serde(default)]
    brakes: Brakes,
    #[serde(default)]
    steering: Steering,
    #[serde(default)]
    aerodynamics: Aerodynamics,
    #[serde(default)]
    speed_limiter: Option<SpeedLimiter>,
    #[serde(default = "default_substeps")]
    substeps: u32,
    #[serde(default = "yes")]
    static_preload: bool,
    #[serde(default)]
    modules: ModulesFile,
    #[serde(default)]
    coupling: Option<[f32; 3]>,
}

/// The `modules` field's schema; each module is read by its type name from the tree.
#[derive(Deserialize, Default)]
#[serde(rename = "Modules", deny_unknown_fields)]
#[allow(dead_code)] // The modules are read from the tree.
struct ModulesFile {
    #[serde(default)]
    brake: IgnoredAny,
    #[serde(default)]
    steering: IgnoredAny,
    #[serde(default)]
    drivetrain: IgnoredAny,
    #[serde(default)]
    suspension: IgnoredAny,
    #[serde(default)]
    anti_roll_bars: BTreeMap<u8, IgnoredAny>,
}

fn default_substeps() -> u32 {
    4
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(rename = "Axle", deny_unknown_fields)]
struct AxleFile {
    z: f32,
    track: f32,
    #[serde(default)]
    height: f32,
    #[serde(default)]
    steered: bool,
    #[serde(default)]
    anti_roll_bar: f64,
    wheel: WheelFile,
}

#[derive(Deserialize)]
#[serde(rename = "Wheel", deny_unknown_fields)]
#[allow(dead_code)] // `tire` is read from the tree.
struct WheelFile {
    radius: f64,
    width: f32,
    inertia: f64,
    tire: IgnoredAny,
    #[serde(default)]
    suspension: Suspension,
    #[serde(default)]
    probe: GroundProbe,
}

#[derive(Deserialize)]
#[serde(rename = "Topology", deny_unknown_fields)]
#[allow(dead_code)] // `blocks` is read from the tree.
struct TopologyFile {
    blocks: BTreeMap<String, IgnoredAny>,
    #[serde(default)]
    connections: BTreeMap<String, String>,
    #[serde(default)]
    axles: Vec<AxleWheels>,
}

// ---------------------------------------------------------------------------------------------
// Writing: the same schema, everything inline.

#[derive(Serialize)]
#[serde(rename = "Vehicle")]
struct VehicleOut<'a> {
    name: &'a str,
    topology: TopologyOut<'a>,
    chassis: &'a ChassisSpec,
    axles: Vec<AxleOut<'a>>,
    blocks: BTreeMap<&'a str, Box<RawValue>>,
    brakes: &'a Brakes,
    steering: &'a Steering,
    aerodynamics: &'a Aerodynamics,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed_limiter: Option<SpeedLimiter>,
    substeps: u32,
    static_preload: bool,
    #[serde(skip_serializing_if = "ModulesOut::is_empty")]
    modules: ModulesOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    coupling: Option<[f32; 3]>,
}

/// The `modules` field as written: only the slots that are chosen.
struct ModulesOut {
    slots: Vec<(&'static str, Box<RawValue>)>,
    anti_roll_bars: BTreeMap<u8, Box<RawValue>>,
}

impl ModulesOut {
    fn is_empty(&self) -> bool {
        self.slots.is_empty() && self.anti_roll_bars.is_empty()
    }
}

impl Serialize for ModulesOut {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fields = self.slots.len() + usize::from(!self.anti_roll_bars.is_empty());
        let mut out = serializer.serialize_struct("Modules", fields)?;
        for (name, value) in &self.slots {
            out.serialize_field(name, value)?;
        }
        if !self.anti_roll_bars.is_empty() {
            out.serialize_field("anti_roll_bars", &self.anti_roll_bars)?;
        }
        out.end()
    }
}

#[derive(Serialize)]
#[serde(rename = "Topology")]
struct TopologyOut<'a> {
    blocks: BTreeMap<&'a str, Box<RawValue>>,
    connections: BTreeMap<&'a str, String>,
    axles: &'a [AxleWheels],
}

#[derive(Serialize)]
#[serde(rename = "Axle")]
struct AxleOut<'a> {
    z: f32,
    track: f32,
    height: f32,
    steered: bool,
    anti_roll_bar: f64,
    wheel: WheelOut<'a>,
}

#[derive(Serialize)]
#[serde(rename = "Wheel")]
struct WheelOut<'a> {
    radius: f64,
    width: f32,
    inertia: f64,
    tire: Box<RawValue>,
    suspension: &'a Suspension,
    probe: GroundProbe,
}

impl VehicleDescription {
    /// The vehicle as one self-contained vehicle file (topology, tires and tables inline).
    /// Reading it back gives an equal description, and writing that gives the same text.
    pub fn to_ron(&self) -> Result<String, ron::Error> {
        let raw =
            |text: String| RawValue::from_boxed_ron(text.into_boxed_str()).map_err(|e| e.code);
        let mut topology_blocks = BTreeMap::new();
        for (name, type_name) in &self.topology.blocks {
            topology_blocks.insert(name.as_str(), raw((*type_name).to_owned())?);
        }
        let mut blocks = BTreeMap::new();
        for named in &self.blocks {
            blocks.insert(named.name.as_str(), raw(named.block.to_ron()?)?);
        }
        let mut axles = Vec::new();
        for axle in &self.axles {
            let w = &axle.wheel;
            axles.push(AxleOut {
                z: axle.z,
                track: axle.track,
                height: axle.height,
                steered: axle.steered,
                anti_roll_bar: axle.anti_roll_bar,
                wheel: WheelOut {
                    radius: w.radius,
                    width: w.width,
                    inertia: w.inertia,
                    tire: raw(ron::ser::to_string_pretty(w.tire.as_ref(), compact())?)?,
                    suspension: &w.suspension,
                    probe: w.probe,
                },
            });
        }
        let mut modules = ModulesOut {
            slots: Vec::new(),
            anti_roll_bars: BTreeMap::new(),
        };
        for (kind, axle, module) in self.modules.slots() {
            let value = raw(module.to_ron()?)?;
            match kind {
                ModuleKind::AntiRollBar => {
                    modules.anti_roll_bars.insert(axle, value);
                }
                _ => modules.slots.push((kind.field(), value)),
            }
        }
        let out = VehicleOut {
            name: &self.name,
            topology: TopologyOut {
                blocks: topology_blocks,
                connections: self
                    .topology
                    .connections
                    .iter()
                    .map(|c| (c.block.as_str(), format!("{}.{}", c.upstream, c.port)))
                    .collect(),
                axles: &self.topology.axles,
            },
            chassis: &self.chassis,
            axles,
            blocks,
            brakes: &self.brakes,
            steering: &self.steering,
            aerodynamics: &self.aerodynamics,
            speed_limiter: self.speed_limiter,
            substeps: self.substeps,
            static_preload: self.static_preload,
            modules,
            coupling: self.coupling,
        };
        ron::ser::to_string_pretty(&out, ron::ser::PrettyConfig::new().struct_names(true))
    }
}

// ---------------------------------------------------------------------------------------------
// Reading.

/// Where referenced files come from.
pub(crate) enum Fetched {
    /// The file's text.
    Text(Arc<str>),
    /// The file could not be read, and why.
    Missing(String),
    /// Not read yet: the caller reads it and builds again (the asset loader reads asynchronously).
    Pending,
}

/// Why a build stopped.
pub(crate) enum BuildError {
    /// The files are wrong.
    File(Box<VehicleFileError>),
    /// A referenced file is needed first.
    Pending(String),
}

impl From<VehicleFileError> for BuildError {
    fn from(e: VehicleFileError) -> Self {
        BuildError::File(Box::new(e))
    }
}

pub(crate) type Built<T> = Result<T, BuildError>;

/// A file taking part in a build, and its tree.
struct Doc {
    source: SourceFile,
    tree: Node,
}

/// Text assembled from pieces of several files (block settings merged from a topology and a
/// vehicle file, CSV tables turned into RON), remembering where each piece came from.
#[derive(Default)]
struct Composed {
    text: String,
    /// (start in `text`, length, document index, start in that document).
    pieces: Vec<(usize, usize, usize, usize)>,
}

impl Composed {
    fn push(&mut self, doc: usize, docs: &[Doc], range: core::ops::Range<usize>) {
        self.pieces
            .push((self.text.len(), range.len(), doc, range.start));
        self.text.push_str(&docs[doc].source.text[range]);
    }

    fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Marks that the synthetic text from byte `start` of the composed text, up to the next
    /// piece, stands for `origin` of document `doc`: an error located there (an empty table's
    /// `[]`, say) points at `origin`.
    fn mark(&mut self, start: usize, doc: usize, origin: usize) {
        let at = self.pieces.partition_point(|p| p.0 < start);
        self.pieces.insert(at, (start, 0, doc, origin));
    }

    /// The document and offset that `offset` of the composed text came from (synthetic text
    /// maps to the start of the next piece, or the end of the last).
    fn origin(&self, offset: usize) -> (usize, usize) {
        let mut fallback = None;
        for &(start, len, doc, origin) in &self.pieces {
            if (start..start + len).contains(&offset) {
                return (doc, origin + offset - start);
            }
            if start >= offset && fallback.is_none() {
                fallback = Some((doc, origin));
            }
        }
        fallback
            .or_else(|| self.pieces.last().map(|&(_, len, d, o)| (d, o + len)))
            .unwrap_or((0, 0))
    }
}

struct Builder<'a> {
    docs: Vec<Doc>,
    fetch: &'a mut dyn FnMut(&str) -> Fetched,
    types: &'a FileBlockTypes,
}

const VEHICLE: usize = 0;

impl Builder<'_> {
    fn error(&self, doc: usize, path: &FieldPath, reason: impl Into<String>) -> BuildError {
        let d = &self.docs[doc];
        // The deepest part of the path that is written in the file.
        let mut len = path.0.len();
        let node = loop {
            if let Some(node) = d.tree.find(&d.source.text, &path.0[..len]) {
                break node;
            }
            len -= 1;
        };
        VehicleFileError::at(&d.source, node.span.start, path, reason).into()
    }

    fn error_at(
        &self,
        doc: usize,
        offset: usize,
        path: &FieldPath,
        reason: impl Into<String>,
    ) -> BuildError {
        VehicleFileError::at(&self.docs[doc].source, offset, path, reason).into()
    }

    /// Reads document `doc` (or `text` of it, at `base`) as a `T`, mapping `ron`'s errors to
    /// the file, line, column and field.
    fn deserialize<T: for<'de> Deserialize<'de>>(
        &self,
        doc: usize,
        node: &Node,
        prefix: &FieldPath,
    ) -> Built<T> {
        let d = &self.docs[doc];
        let text = &d.source.text[node.span.clone()];
        ron::Options::default()
            .from_str::<T>(text)
            .map_err(|e| self.ron_error(doc, node, prefix, node.span.start, text, e))
    }

    fn ron_error(
        &self,
        doc: usize,
        node: &Node,
        prefix: &FieldPath,
        base: usize,
        text: &str,
        e: ron::error::SpannedError,
    ) -> BuildError {
        let d = &self.docs[doc];
        let offset = base + offset_of(text, e.span.start.line, e.span.start.col);
        let (path, offset) = ron_error_at(node, &d.source.text, offset, &e.code);
        let reason = describe_ron_error_at(&e.code, &d.source.text, offset);
        self.error_at(doc, offset, &prefix.join(&path), reason)
    }

    fn load_doc(&mut self, path: &str, from: usize, at: &FieldPath) -> Built<usize> {
        if let Some(i) = self
            .docs
            .iter()
            .position(|d| d.source.path == Path::new(path))
        {
            return Ok(i);
        }
        let text = match (self.fetch)(path) {
            Fetched::Text(text) => text,
            Fetched::Missing(why) => {
                return Err(self.error(from, at, format!("cannot read file '{path}': {why}")));
            }
            Fetched::Pending => return Err(BuildError::Pending(path.to_owned())),
        };
        let source = SourceFile::new(path, text);
        let doc = self.docs.len();
        if path.ends_with(".csv") {
            // Tables are not RON: their tree is unused.
            let end = source.text.len();
            self.docs.push(Doc {
                source,
                tree: Node {
                    span: 0..end,
                    kind: NodeKind::Atom,
                },
            });
            return Ok(doc);
        }
        let tree = parse_tree(&source.text).map_err(|e| syntax_error(&source, e))?;
        self.docs.push(Doc { source, tree });
        Ok(doc)
    }

    fn build(&mut self) -> Built<VehicleDescription> {
        // The whole file against its schema first: unknown fields, wrong types, missing fields.
        let root = self.docs[VEHICLE].tree.clone();
        let file: VehicleFile = self.deserialize(VEHICLE, &root, &FieldPath::root())?;

        // The topology: a path or inline.
        let topology_path = FieldPath::root().field("topology");
        let topology_node = root
            .field("topology")
            .map(|f| f.value.clone())
            .ok_or_else(|| self.error(VEHICLE, &FieldPath::root(), "missing field `topology`"))?;
        let (topo_doc, topo_node, topo_prefix) = {
            let text = &self.docs[VEHICLE].source.text;
            if let Some(path) = topology_node.string(text) {
                let path = path.to_owned();
                let doc = self.load_doc(&path, VEHICLE, &topology_path)?;
                (doc, self.docs[doc].tree.clone(), FieldPath::root())
            } else {
                (VEHICLE, topology_node, topology_path.clone())
            }
        };

        // The vehicle's block overrides.
        let overrides: BTreeMap<String, Node> = match root.field("blocks") {
            Some(f) => {
                self.check_unique_keys(
                    VEHICLE,
                    &f.value,
                    &FieldPath::root().field("blocks"),
                    "block",
                )?;
                f.value
                    .entries(&self.docs[VEHICLE].source.text)
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.clone()))
                    .collect()
            }
            None => BTreeMap::new(),
        };
        let (topology, blocks) =
            self.read_topology((topo_doc, &topo_node, &topo_prefix), &root, &overrides)?;
        let axles = self.read_axles(&file, &topology, &root)?;
        let modules = self.read_modules(&root, axles.len())?;
        let description = VehicleDescription {
            name: file.name,
            topology,
            chassis: file.chassis,
            axles,
            blocks,
            brakes: file.brakes,
            steering: file.steering,
            aerodynamics: file.aerodynamics,
            speed_limiter: file.speed_limiter,
            substeps: file.substeps,
            static_preload: file.static_preload,
            modules,
            coupling: file.coupling,
        };
        self.check_vehicle(description)
    }

    /// Reads and checks a topology (document `topo_doc`, value `topo_node` at `topo_prefix`):
    /// its blocks with their settings (the topology's, overridden field by field by
    /// `overrides` from the vehicle file, whose tree is `root`), connections and axles.
    fn read_topology(
        &mut self,
        (topo_doc, topo_node, topo_prefix): (usize, &Node, &FieldPath),
        root: &Node,
        overrides: &BTreeMap<String, Node>,
    ) -> Built<(VehicleTopology, Vec<NamedBlock>)> {
        let topology: TopologyFile = self.deserialize(topo_doc, topo_node, topo_prefix)?;
        let block_nodes: Vec<(String, Node)> = {
            let text = &self.docs[topo_doc].source.text;
            let blocks = topo_node
                .field("blocks")
                .map(|f| &f.value)
                .expect("the schema requires `blocks`");
            self.check_unique_keys(topo_doc, blocks, &topo_prefix.field("blocks"), "block")?;
            blocks
                .entries(text)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.clone()))
                .collect()
        };
        if let Some(connections) = topo_node.field("connections") {
            self.check_unique_keys(
                topo_doc,
                &connections.value,
                &topo_prefix.field("connections"),
                "connection for block",
            )?;
        }

        for (name, node) in overrides {
            if !block_nodes.iter().any(|(n, _)| n == name) {
                // The name is what is wrong: point at it.
                let key = root
                    .field("blocks")
                    .and_then(|f| f.value.key(&self.docs[VEHICLE].source.text, name))
                    .unwrap_or(node);
                let known: Vec<&str> = block_nodes.iter().map(|(n, _)| n.as_str()).collect();
                let hint = closest(name, known.iter().copied())
                    .map(|c| format!(" (did you mean '{c}'?)"))
                    .unwrap_or_default();
                return Err(self.error_at(
                    VEHICLE,
                    key.span.start,
                    &FieldPath::root().field("blocks").key(name),
                    format!(
                        "the topology has no block called '{name}'{hint}; its blocks are {}",
                        quoted(&known)
                    ),
                ));
            }
        }

        let mut blocks = Vec::new();
        let mut types: Vec<(String, &'static str)> = Vec::new();
        for (name, node) in &block_nodes {
            let path = topo_prefix.field("blocks").key(name);
            let type_name = {
                let text = &self.docs[topo_doc].source.text;
                match node.name(text) {
                    Some(t) if node.string(text).is_none() => t.to_owned(),
                    _ => {
                        return Err(self.error_at(
                            topo_doc,
                            node.span.start,
                            &path,
                            "expected a block type, e.g. `Gearbox` or `Gearbox(shift_time: 0.3)`",
                        ));
                    }
                }
            };
            if type_name == WHEEL_TYPE {
                if matches!(&node.kind, NodeKind::Struct { fields, .. } if !fields.is_empty()) {
                    return Err(self.error_at(
                        topo_doc,
                        node.span.start,
                        &path,
                        "wheel settings belong in the vehicle file's `axles`, not in the topology",
                    ));
                }
                if let Some(o) = overrides.get(name) {
                    return Err(self.error_at(
                        VEHICLE,
                        o.span.start,
                        &FieldPath::root().field("blocks").key(name),
                        format!("'{name}' is a wheel: set it in `axles`, not in `blocks`"),
                    ));
                }
                types.push((name.clone(), WHEEL_TYPE));
                continue;
            }
            let block = self.read_block(
                name,
                &type_name,
                (topo_doc, node, &path),
                overrides.get(name),
            )?;
            types.push((name.clone(), block.type_name()));
            blocks.push(NamedBlock {
                name: name.clone(),
                block,
            });
        }

        let topology = self.check_graph(&topology, &types, &blocks, topo_doc, topo_prefix)?;
        Ok((topology, blocks))
    }

    /// Refuses a map that gives a key twice, pointing at the second one.
    fn check_unique_keys(&self, doc: usize, map: &Node, path: &FieldPath, what: &str) -> Built<()> {
        let text = &self.docs[doc].source.text;
        let NodeKind::Map(entries) = &map.kind else {
            return Ok(());
        };
        let keys: Vec<(&str, &Node)> = entries
            .iter()
            .filter_map(|(k, _)| k.string(text).map(|s| (s, k)))
            .collect();
        for (i, (key, node)) in keys.iter().enumerate() {
            if keys[..i].iter().any(|(k, _)| k == key) {
                return Err(self.error_at(
                    doc,
                    node.span.start,
                    &path.key(key),
                    format!("{what} '{key}' is given twice"),
                ));
            }
        }
        Ok(())
    }

    /// Reads one block: the topology's fields, overridden field by field by the vehicle's.
    fn read_block(
        &mut self,
        name: &str,
        type_name: &str,
        (topo_doc, topo_node, topo_path): (usize, &Node, &FieldPath),
        vehicle_node: Option<&Node>,
    ) -> Built<Box<dyn FileBlock>> {
        let known = self.types.names();
        if !known.contains(&type_name) {
            let hint = closest(type_name, known.iter().copied())
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            return Err(self.error_at(
                topo_doc,
                topo_node.span.start,
                topo_path,
                format!(
                    "unknown block type `{type_name}`; {hint}known types: {}",
                    known.join(", ")
                ),
            ));
        }
        let vehicle_path = FieldPath::root().field("blocks").key(name);
        // (name, document, span of the name there, value)
        let mut fields: Vec<(String, usize, core::ops::Range<usize>, Node)> = Vec::new();
        for (doc, node, path) in [
            (topo_doc, Some(topo_node), topo_path),
            (VEHICLE, vehicle_node, &vehicle_path),
        ] {
            let Some(node) = node else { continue };
            let text = &self.docs[doc].source.text;
            match &node.kind {
                NodeKind::Struct { fields: f, .. } => {
                    if let Some(n) = node.name(text)
                        && n != type_name
                    {
                        return Err(self.error_at(
                            doc,
                            node.span.start,
                            path,
                            format!("'{name}' is a `{type_name}` in the topology, not a `{n}`"),
                        ));
                    }
                    for (i, field) in f.iter().enumerate() {
                        if f[..i].iter().any(|g| g.name == field.name) {
                            return Err(self.error_at(
                                doc,
                                field.name_span.start,
                                &path.field(&field.name),
                                format!("field `{}` is given twice", field.name),
                            ));
                        }
                        // The vehicle's value replaces the topology's.
                        if let Some(i) = fields.iter().position(|(n, ..)| *n == field.name) {
                            fields.remove(i);
                        }
                        fields.push((
                            field.name.clone(),
                            doc,
                            field.name_span.clone(),
                            field.value.clone(),
                        ));
                    }
                }
                NodeKind::Atom if doc == topo_doc && core::ptr::eq(node, topo_node) => {}
                NodeKind::Tuple { items, .. } if items.is_empty() => {}
                _ => {
                    return Err(self.error_at(
                        doc,
                        node.span.start,
                        path,
                        format!("expected the settings of '{name}', e.g. `(field: value)`"),
                    ));
                }
            }
        }

        // Assemble `Type(field: value, ..)` from the pieces, loading CSV tables.
        let mut composed = Composed::default();
        composed.push_str(type_name);
        composed.push_str("(");
        for (field, doc, name_span, value) in &fields {
            // The name is a piece of its file, so that an unknown field points at it.
            composed.push(*doc, &self.docs, name_span.clone());
            composed.push_str(": ");
            let csv = {
                let text = &self.docs[*doc].source.text;
                match &value.kind {
                    NodeKind::Tuple { items, .. } if value.name(text) == Some("Csv") => {
                        match items.as_slice() {
                            [item] => item.string(text).map(str::to_owned),
                            _ => None,
                        }
                        .ok_or_else(|| {
                            self.error_at(
                                *doc,
                                value.span.start,
                                &FieldPath::root().field("blocks").key(name).field(field),
                                "expected `Csv(\"path/to/table.csv\")`",
                            )
                        })
                        .map(Some)?
                    }
                    _ => None,
                }
            };
            match csv {
                Some(path) => {
                    let at = if *doc == VEHICLE {
                        vehicle_path.field(field)
                    } else {
                        topo_path.field(field)
                    };
                    let table = self.load_doc(&path, *doc, &at)?;
                    self.push_csv(&mut composed, table, &vehicle_path.field(field))?;
                }
                None => composed.push(*doc, &self.docs, value.span.clone()),
            }
            composed.push_str(", ");
        }
        composed.push_str(")");

        // Paths of a piece from the topology's entry for the block (which may be inline in the
        // vehicle file) are below `topo_path`, all others below `vehicle_path`.
        let prefix_of = |doc: usize, origin: usize| {
            if doc == topo_doc && topo_node.span.contains(&origin) {
                topo_path.clone()
            } else {
                vehicle_path.clone()
            }
        };
        let tree = parse_tree(&composed.text).map_err(|e| {
            let (doc, offset) = composed.origin(e.offset);
            self.error_at(
                doc,
                offset,
                &prefix_of(doc, offset).join(&e.path),
                format!("syntax error: {}", e.reason),
            )
        })?;
        let located = |offset: usize, code: &ron::Error| {
            let (path, offset) = ron_error_at(&tree, &composed.text, offset, code);
            let reason = describe_ron_error_at(code, &composed.text, offset);
            let (doc, origin) = composed.origin(offset);
            self.error_at(doc, origin, &prefix_of(doc, origin).join(&path), reason)
        };
        let block = match self.types.parse(type_name, &composed.text) {
            Some(Ok(block)) => block,
            Some(Err(e)) => {
                let offset = offset_of(&composed.text, e.span.start.line, e.span.start.col);
                return Err(located(offset, &e.code));
            }
            None => unreachable!("checked above"),
        };
        if let Err(e) = block.validate() {
            let path = FieldPath::parse(&e.field);
            let mut len = path.0.len();
            let node = loop {
                if let Some(node) = tree.find(&composed.text, &path.0[..len]) {
                    break node;
                }
                len -= 1;
            };
            let (doc, origin) = composed.origin(node.span.start);
            return Err(self.error_at(doc, origin, &prefix_of(doc, origin).join(&path), e.reason));
        }
        Ok(block)
    }

    /// Appends a two-column CSV table as `[(a, b), ..]`, each number a piece of the CSV file.
    fn push_csv(&self, composed: &mut Composed, doc: usize, path: &FieldPath) -> Built<()> {
        let text = self.docs[doc].source.text.clone();
        let start = composed.text.len();
        composed.push_str("[");
        let mut line_start = 0;
        let mut rows = 0;
        for (index, line) in text.split('\n').enumerate() {
            let start = line_start;
            line_start += line.len() + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut cells = Vec::new();
            let mut cell_start = start;
            for cell in line.split(',') {
                let lead = cell.len() - cell.trim_start().len();
                let range = cell_start + lead..cell_start + lead + cell.trim().len();
                cells.push(range);
                cell_start += cell.len() + 1;
            }
            let numeric = cells.iter().all(|r| text[r.clone()].parse::<f64>().is_ok());
            if !numeric && rows == 0 && index == 0 {
                continue; // a header line
            }
            if cells.len() != 2 {
                return Err(self.error_at(
                    doc,
                    start,
                    &path.index(rows),
                    format!("expected 2 columns, found {}", cells.len()),
                ));
            }
            if let Some(bad) = cells
                .iter()
                .find(|r| text[(*r).clone()].parse::<f64>().is_err())
            {
                return Err(self.error_at(
                    doc,
                    bad.start,
                    &path.index(rows),
                    format!("expected a number, found `{}`", &text[bad.clone()]),
                ));
            }
            composed.push_str("(");
            composed.push(doc, &self.docs, cells[0].clone());
            composed.push_str(", ");
            composed.push(doc, &self.docs, cells[1].clone());
            composed.push_str("), ");
            rows += 1;
        }
        composed.push_str("]");
        if rows == 0 {
            // A table without rows is reported at the start of the CSV file.
            composed.mark(start, doc, 0);
        }
        Ok(())
    }

    /// Checks the connections' block and port names (with a hint for a misspelt one), then the
    /// rest of [`VehicleTopology::validate`]: ports used twice, wheels on axles, the
    /// drivetrain's own rules (one root, required ports, no cycles).
    fn check_graph(
        &self,
        topology: &TopologyFile,
        types: &[(String, &'static str)],
        blocks: &[NamedBlock],
        doc: usize,
        prefix: &FieldPath,
    ) -> Built<VehicleTopology> {
        let text = &self.docs[doc].source.text;
        let node_of = |path: &FieldPath| {
            self.docs[doc]
                .tree
                .find(text, &prefix.join(path).0)
                .or_else(|| self.docs[doc].tree.find(text, &path.0))
                .map_or(0, |n| n.span.start)
        };
        let ports_of = |name: &str| -> Option<Ports> {
            match types.iter().find(|(n, _)| n == name)?.1 {
                WHEEL_TYPE => Some(Ports::LEAF),
                _ => blocks
                    .iter()
                    .find(|b| b.name == name)
                    .map(|b| b.block.ports()),
            }
        };
        let names: Vec<&str> = types.iter().map(|(n, _)| n.as_str()).collect();
        let unknown = |name: &str| no_block_called(name, &names);

        let mut connections = Vec::new();
        for (block, upstream) in &topology.connections {
            let path = FieldPath::root().field("connections").key(block);
            let at = node_of(&path);
            if ports_of(block).is_none() {
                return Err(self.error_at(doc, at, &prefix.join(&path), unknown(block)));
            }
            let (up, port) = upstream
                .split_once('.')
                .unwrap_or((upstream.as_str(), "out"));
            let Some(up_ports) = ports_of(up) else {
                return Err(self.error_at(doc, at, &prefix.join(&path), unknown(up)));
            };
            let Some(port) = up_ports.outputs.iter().find(|p| p.name == port) else {
                let known: Vec<&str> = up_ports.outputs.iter().map(|p| p.name).collect();
                return Err(self.error_at(
                    doc,
                    at,
                    &prefix.join(&path),
                    if known.is_empty() {
                        format!("'{up}' has no outputs: nothing can hang from it")
                    } else {
                        format!(
                            "'{up}' has no port `{port}`; its ports are {}",
                            quoted(&known)
                        )
                    },
                ));
            };
            connections.push(Connection {
                block: block.clone(),
                upstream: up.to_owned(),
                port: port.name,
            });
        }

        let mut blocks_sorted = types.to_vec();
        blocks_sorted.sort();
        let checked = VehicleTopology {
            blocks: blocks_sorted,
            connections,
            axles: topology.axles.clone(),
        };
        // The rest of the rules, which a topology built in code is held to as well.
        if let Err(e) = checked.validate(blocks) {
            let path = FieldPath::parse(&e.field);
            return Err(self.error_at(doc, node_of(&path), &prefix.join(&path), e.reason));
        }
        Ok(checked)
    }

    /// Reads the `modules` field: each slot's module by its registered type name, checked
    /// against the slot's kind, with its settings.
    fn read_modules(&self, root: &Node, axles: usize) -> Built<ModuleChoices> {
        let mut choices = ModuleChoices::default();
        let Some(field) = root.field("modules") else {
            return Ok(choices);
        };
        let path = FieldPath::root().field("modules");
        let modules = &field.value;
        for kind in [
            ModuleKind::Brake,
            ModuleKind::Steering,
            ModuleKind::Drivetrain,
            ModuleKind::Suspension,
        ] {
            if let Some(f) = modules.field(kind.field()) {
                let module = self.read_module(&f.value, kind, &path.field(kind.field()), axles)?;
                let slot = match kind {
                    ModuleKind::Brake => &mut choices.brake,
                    ModuleKind::Steering => &mut choices.steering,
                    ModuleKind::Drivetrain => &mut choices.drivetrain,
                    _ => &mut choices.suspension,
                };
                *slot = Some(module);
            }
        }
        if let Some(f) = modules.field("anti_roll_bars")
            && let NodeKind::Map(entries) = &f.value.kind
        {
            let bars = path.field("anti_roll_bars");
            let text = &self.docs[VEHICLE].source.text;
            for (key, value) in entries {
                // The schema read every key as an axle number already.
                let axle: u8 = text[key.span.clone()].trim().parse().unwrap_or(u8::MAX);
                let at = bars.index(usize::from(axle));
                if usize::from(axle) >= axles {
                    return Err(self.error_at(
                        VEHICLE,
                        key.span.start,
                        &at,
                        format!(
                            "there is no axle {axle}: the vehicle has {axles} axle(s), numbered \
                             from 0 at the front"
                        ),
                    ));
                }
                let module = self.read_module(value, ModuleKind::AntiRollBar, &at, axles)?;
                choices.anti_roll_bars.push((axle, module));
            }
        }
        Ok(choices)
    }

    /// Reads one module, `Name(settings..)`, for a slot of `kind` at `path` on a vehicle with
    /// `axles` axles.
    fn read_module(
        &self,
        node: &Node,
        kind: ModuleKind,
        path: &FieldPath,
        axles: usize,
    ) -> Built<Box<dyn FileModule>> {
        let types = self.types.modules();
        let text = &self.docs[VEHICLE].source.text;
        let known = types.names(kind);
        let list = if known.is_empty() {
            "none are registered".to_owned()
        } else {
            format!("known: {}", known.join(", "))
        };
        let Some(name) = node.name(text) else {
            return Err(self.error_at(
                VEHICLE,
                node.span.start,
                path,
                format!(
                    "expected a {} module by its type name, like `Name(..)`; {list}",
                    kind.field()
                ),
            ));
        };
        match types.kind_of(name) {
            Some(k) if k == kind => {}
            Some(other) => {
                return Err(self.error_at(
                    VEHICLE,
                    node.span.start,
                    path,
                    format!(
                        "`{name}` is a {} module, and this slot takes a {} module ({list})",
                        other.field(),
                        kind.field()
                    ),
                ));
            }
            None => {
                let hint = closest(name, known.iter().copied())
                    .map(|c| format!("did you mean `{c}`? "))
                    .unwrap_or_default();
                return Err(self.error_at(
                    VEHICLE,
                    node.span.start,
                    path,
                    format!(
                        "unknown {} module `{name}`; {hint}{list} (register module types with \
                         RegisterFileModule)",
                        kind.field()
                    ),
                ));
            }
        }
        let settings = &text[node.span.clone()];
        let module = match types.parse(name, settings) {
            Some(Ok(module)) => module,
            Some(Err(e)) => {
                return Err(self.ron_error(VEHICLE, node, path, node.span.start, settings, e));
            }
            None => unreachable!("the kind was found above"),
        };
        if let Err(e) = module
            .validate()
            .and_then(|()| module.validate_axles(axles))
        {
            let field = FieldPath::parse(&e.field);
            let at = node.find_written(text, &field.0);
            return Err(self.error_at(VEHICLE, at.span.start, &path.join(&field), e.reason));
        }
        Ok(module)
    }

    fn read_axles(
        &mut self,
        file: &VehicleFile,
        topology: &VehicleTopology,
        root: &Node,
    ) -> Built<Vec<AxleSpec>> {
        let axles_path = FieldPath::root().field("axles");
        if file.axles.len() != topology.axles.len() {
            return Err(self.error(
                VEHICLE,
                &axles_path,
                format!(
                    "the topology has {} axle(s) but the vehicle sets {}",
                    topology.axles.len(),
                    file.axles.len()
                ),
            ));
        }
        let mut axles = Vec::new();
        for (i, axle) in file.axles.iter().enumerate() {
            let path = axles_path.index(i);
            let tire_path = path.field("wheel").field("tire");
            let tire_node = root
                .find(&self.docs[VEHICLE].source.text, &tire_path.0)
                .cloned()
                .ok_or_else(|| self.error(VEHICLE, &tire_path, "missing field `tire`"))?;
            let (tire_doc, tire_node, tire_prefix) = {
                let text = &self.docs[VEHICLE].source.text;
                match tire_node.string(text) {
                    Some(p) => {
                        let p = p.to_owned();
                        let doc = self.load_doc(&p, VEHICLE, &tire_path)?;
                        (doc, self.docs[doc].tree.clone(), FieldPath::root())
                    }
                    None => (VEHICLE, tire_node, tire_path.clone()),
                }
            };
            let tire: Tire = self.deserialize(tire_doc, &tire_node, &tire_prefix)?;
            let wheel = &axle.wheel;
            let spec = WheelSpec {
                radius: wheel.radius,
                width: wheel.width,
                inertia: wheel.inertia,
                tire: Arc::new(tire),
                suspension: wheel.suspension.clone(),
                probe: wheel.probe,
            };
            let axle = AxleSpec {
                z: axle.z,
                track: axle.track,
                height: axle.height,
                steered: axle.steered,
                anti_roll_bar: axle.anti_roll_bar,
                wheel: spec,
            };
            if let Err(e) = axle.validate() {
                return Err(match e.field.strip_prefix("wheel.tire.") {
                    Some(inner) if tire_doc != VEHICLE => {
                        self.error(tire_doc, &FieldPath::parse(inner), e.reason)
                    }
                    _ => self.error(VEHICLE, &path.join(&FieldPath::parse(&e.field)), e.reason),
                });
            }
            axles.push(axle);
        }
        Ok(axles)
    }

    /// The whole description's checks ([`VehicleDescription::validate`]; what the reading
    /// checked already passes again), then the static preload.
    fn check_vehicle(&self, mut d: VehicleDescription) -> Built<VehicleDescription> {
        if let Err(e) = d.validate() {
            return Err(self.error(VEHICLE, &FieldPath::parse(&e.field), e.reason));
        }
        if d.static_preload {
            d.apply_static_preload()
                .map_err(|e| self.error(VEHICLE, &FieldPath::parse(&e.field), e.reason))?;
        }
        Ok(d)
    }
}

impl VehicleDescription {
    /// Sets each suspension's `preload` to its static deflection under the chassis's weight,
    /// so that the vehicle rests at its design ride height, and `static_preload` to `true`:
    /// what a file's `static_preload: true` (the default) does as it is read. Call it after
    /// changing a description's mass, centre of mass, axles or springs in code.
    ///
    /// Refused, with the description unchanged, when the centre of mass puts no weight on an
    /// axle (`chassis.center_of_mass[2]`) or a preload comes out of its valid range
    /// (`axles[i].wheel.suspension.preload`); the field paths are those of
    /// [`VehicleDescription::validate`].
    pub fn apply_static_preload(&mut self) -> Result<(), ChassisError> {
        let loads = static_axle_loads(self).map_err(|reason| {
            ChassisError::new("chassis.center_of_mass[2]", reason).at_vehicle(self.name.clone())
        })?;
        let mut axles = self.axles.clone();
        for (i, (axle, load)) in axles.iter_mut().zip(loads).enumerate() {
            let suspension = &mut axle.wheel.suspension;
            suspension.preload = 0.5 * load / suspension.stiffness;
            suspension.validate().map_err(|e| {
                ChassisError::new(e.field, format!("{} (with the static preload)", e.reason))
                    .within(&format!("axles[{i}].wheel"))
                    .at_vehicle(self.name.clone())
            })?;
        }
        self.axles = axles;
        self.static_preload = true;
        Ok(())
    }
}

/// Static load on each axle (N), both wheels together: the chassis rests on springs, so the
/// loads are those of a rigid body on the axles' springs in heave and pitch (for two axles,
/// the lever rule).
fn static_axle_loads(d: &VehicleDescription) -> Result<Vec<f64>, String> {
    let weight = f64::from(d.chassis.mass) * GRAVITY;
    let zc = f64::from(d.chassis.center_of_mass[2]);
    // Each axle's two springs as one.
    let springs: Vec<(f64, f64)> = d
        .axles
        .iter()
        .map(|axle| (f64::from(axle.z), 2.0 * axle.wheel.suspension.stiffness))
        .collect();
    let loads: Vec<f64> = static_deflections(weight, zc, &springs, None)
        .ok_or("must be above the axle when the vehicle has one axle (m)")?
        .iter()
        .zip(&springs)
        .map(|(deflection, (_, k))| k * deflection)
        .collect();
    if let Some(i) = loads.iter().position(|&l| l <= 0.0) {
        return Err(format!(
            "puts no weight on axle {i} (z = {} m): the centre of mass must lie between the axles, got z = {} m",
            d.axles[i].z, d.chassis.center_of_mass[2]
        ));
    }
    Ok(loads)
}

/// A file that does not parse. Where `ron` and the scanner see the problem at the same place
/// (up to blank space and comments), the scanner's message and field path (its message names
/// the bracket a missing `,` or `]` belongs to); where they disagree, `ron`'s message and
/// position, since `ron` reads the file in the end.
pub(crate) fn syntax_error(source: &SourceFile, e: crate::source::ScanError) -> VehicleFileError {
    let text = &source.text;
    let (offset, path, reason) = match ron::Options::default().from_str::<IgnoredAny>(text) {
        Err(ron) => {
            let offset = offset_of(text, ron.span.start.line, ron.span.start.col);
            if next_token(text, offset) == e.offset {
                (e.offset, e.path, e.reason)
            } else {
                (offset, FieldPath::root(), describe_ron_error(&ron.code))
            }
        }
        Ok(_) => (e.offset, e.path, e.reason),
    };
    VehicleFileError::at(source, offset, &path, format!("syntax error: {reason}"))
}

/// The field path (below `node`, which spans `offset` of `text`) and the offset to report for
/// `ron`'s error `code` at `offset`: at the value after any blank space `ron` stopped before,
/// and for a missing field at the start of the value that lacks it.
pub(crate) fn ron_error_at(
    node: &Node,
    text: &str,
    offset: usize,
    code: &ron::Error,
) -> (FieldPath, usize) {
    let offset = next_token(text, offset);
    let (path, at) = node.locate(text, offset);
    match code {
        ron::Error::MissingStructField { .. } => (path, at.span.start),
        _ => (path, offset),
    }
}

pub(crate) fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`describe_ron_error`] for an error at `offset` of `text`: a value of the wrong type also
/// quotes what the file has there (``expected a number, found `"heavy"` ``).
pub(crate) fn describe_ron_error_at(code: &ron::Error, text: &str, offset: usize) -> String {
    if let Some((word, read)) = number_cut_short(text, offset) {
        // `ron` read a number, then stopped at what follows it (`1.5` for a whole number,
        // `0x541` or `12kg` for a number): name the value, not the comma it then expected.
        let expected =
            if read.parse::<i64>().is_ok() && word[read.len()..].starts_with(['.', 'e', 'E']) {
                "a whole number"
            } else {
                "a number"
            };
        return format!("expected {expected}, found `{word}`");
    }
    let expected = match code {
        ron::Error::ExpectedFloat => "a number",
        ron::Error::ExpectedInteger => "a whole number",
        ron::Error::ExpectedBoolean => "`true` or `false`",
        ron::Error::ExpectedString => "a string in double quotes",
        ron::Error::ExpectedOption => "`Some(..)` or `None`",
        _ => return describe_ron_error(code),
    };
    format!("expected {expected}, found `{}`", value_at(text, offset))
}

/// When `offset` of `text` lies inside a word that starts as a number (`1.5`, `0x541`,
/// `12kg`), the word and its part before `offset` (what `ron` read as the number).
fn number_cut_short(text: &str, offset: usize) -> Option<(&str, &str)> {
    let in_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-');
    let start = text
        .get(..offset)?
        .char_indices()
        .rev()
        .find(|&(_, c)| !in_word(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !in_word(c))
        .map_or(text.len(), |(i, _)| offset + i);
    let (word, read) = (&text[start..end], &text[start..offset]);
    let numeric = read.trim_start_matches(['-', '+']);
    let cut = !read.is_empty() && read.len() < word.len();
    (cut && numeric.starts_with(|c: char| c.is_ascii_digit())).then_some((word, read))
}

/// The value written at `offset` of `text`, for a message: a quoted string whole, otherwise up
/// to the next separator; at most 40 characters.
fn value_at(text: &str, offset: usize) -> String {
    let rest = text.get(next_token(text, offset)..).unwrap_or("");
    let end = if let Some(quoted) = rest.strip_prefix('"') {
        quoted.find('"').map_or(rest.len(), |i| i + 2)
    } else {
        rest.find([',', ')', ']', '}', '\n']).unwrap_or(rest.len())
    };
    let value = rest[..end].trim_end();
    match value.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_owned(),
    }
}

/// `ron`'s error, worded for a person editing the file.
pub(crate) fn describe_ron_error(code: &ron::Error) -> String {
    match code {
        ron::Error::NoSuchStructField {
            expected, found, ..
        } => {
            let hint = closest(found, expected.iter().copied())
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            format!(
                "unknown field `{found}`; {hint}expected one of {}",
                expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        ron::Error::MissingStructField { field, .. } => format!("missing field `{field}`"),
        ron::Error::DuplicateStructField { field, .. } => {
            format!("field `{field}` is given twice")
        }
        other => other.to_string(),
    }
}

impl VehicleDescription {
    /// Reads the vehicle file `path` (relative to `asset_root`, the way asset paths are) and
    /// every file it references, and checks them.
    pub fn load(
        asset_root: impl AsRef<Path>,
        path: &str,
        types: &FileBlockTypes,
    ) -> Result<Self, VehicleFileError> {
        let root = asset_root.as_ref();
        let text = VehicleFileError::read(root, path)?;
        Self::parse(path, &text, types, |p| {
            // A referenced path is an asset path, from the asset folder, not from this file's.
            let file = root.join(p);
            std::fs::read_to_string(&file)
                .map_err(|e| format!("{e} (an asset path: looked for {})", file.display()))
        })
    }

    /// Reads a vehicle from `text` (a file called `path`, for messages), fetching referenced
    /// files with `read` (given their asset path; it returns the text or why it cannot).
    pub fn parse(
        path: &str,
        text: &str,
        types: &FileBlockTypes,
        mut read: impl FnMut(&str) -> Result<String, String>,
    ) -> Result<Self, VehicleFileError> {
        let mut fetch = |p: &str| match read(p) {
            Ok(text) => Fetched::Text(text.into()),
            Err(why) => Fetched::Missing(why),
        };
        match build(path, text, types, &mut fetch) {
            Ok(d) => Ok(d),
            Err(BuildError::File(e)) => Err(*e),
            Err(BuildError::Pending(p)) => unreachable!("synchronous reads never pend ({p})"),
        }
    }
}

impl VehicleTopology {
    /// Reads and checks a topology file on its own (a file called `path`, for messages): block
    /// types known, settings valid as the topology gives them (defaults elsewhere), the graph
    /// valid, every wheel on one axle. Referenced CSV tables come from `read`.
    pub fn parse(
        path: &str,
        text: &str,
        types: &FileBlockTypes,
        mut read: impl FnMut(&str) -> Result<String, String>,
    ) -> Result<Self, VehicleFileError> {
        let mut fetch = |p: &str| match read(p) {
            Ok(text) => Fetched::Text(text.into()),
            Err(why) => Fetched::Missing(why),
        };
        match build_topology(path, text, types, &mut fetch) {
            Ok(t) => Ok(t),
            Err(BuildError::File(e)) => Err(*e),
            Err(BuildError::Pending(p)) => unreachable!("synchronous reads never pend ({p})"),
        }
    }
}

/// Builds a topology from its file text; referenced files come from `fetch`.
pub(crate) fn build_topology(
    path: &str,
    text: &str,
    types: &FileBlockTypes,
    fetch: &mut dyn FnMut(&str) -> Fetched,
) -> Built<VehicleTopology> {
    let source = SourceFile::new(path, text);
    let tree = parse_tree(&source.text).map_err(|e| syntax_error(&source, e))?;
    let root = tree.clone();
    let mut builder = Builder {
        docs: vec![Doc { source, tree }],
        fetch,
        types,
    };
    builder
        .read_topology((0, &root, &FieldPath::root()), &root, &BTreeMap::new())
        .map(|(topology, _)| topology)
}

/// Builds a vehicle from its file text; referenced files come from `fetch`.
pub(crate) fn build(
    path: &str,
    text: &str,
    types: &FileBlockTypes,
    fetch: &mut dyn FnMut(&str) -> Fetched,
) -> Built<VehicleDescription> {
    let source = SourceFile::new(path, text);
    let tree = parse_tree(&source.text).map_err(|e| syntax_error(&source, e))?;
    let mut builder = Builder {
        docs: vec![Doc { source, tree }],
        fetch,
        types,
    };
    builder.build()
}
