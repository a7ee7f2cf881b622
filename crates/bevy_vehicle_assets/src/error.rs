//! [`VehicleFileError`]: what is wrong with a vehicle, topology, tire or torque-table file, and
//! exactly where.

use core::fmt;
use std::path::PathBuf;

use crate::source::{FieldPath, SourceFile, line_col};

/// A refused file: the file, the 1-based line and column, the field path and the reason.
///
/// Displayed as `file:line:column: field: reason`, e.g.
/// ``vehicles/test.vehicle.ron:38:48: `blocks.gearbox.forward_ratios[2]`: must be greater than 0, got 0``.
/// The position points at the value that is wrong (or, for a missing field, at the value that
/// lacks it); for an error in a referenced file (a topology, a tire, a CSV table) it is in that
/// file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VehicleFileError {
    /// The file the error is in, as it was named (asset path or file system path).
    pub file: PathBuf,
    /// 1-based line; 0 for a file that could not be read at all (a missing vehicle file
    /// loaded as an asset) and for a value set in code after the file was read (a
    /// [`LoadedVehicle`](crate::LoadedVehicle) asset changed in code).
    pub line: usize,
    /// 1-based column, in characters; 0 with a line of 0.
    pub column: usize,
    /// Path of the field inside the file, e.g. `blocks.gearbox.forward_ratios[2]`; empty for an
    /// error about the file as a whole (broken syntax before any field).
    pub field: String,
    /// Why it was refused.
    pub reason: String,
}

impl VehicleFileError {
    /// An error at byte `offset` of `source`, on `field`.
    pub fn at(
        source: &SourceFile,
        offset: usize,
        field: &FieldPath,
        reason: impl Into<String>,
    ) -> Self {
        let (line, column) = line_col(&source.text, offset);
        VehicleFileError {
            file: source.path.clone(),
            line,
            column,
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

impl VehicleFileError {
    /// An error with no place in the file (line and column 0): a file that could not be read
    /// at all, or a value set in code after the file was read.
    pub fn unlocated(
        file: impl Into<PathBuf>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        VehicleFileError {
            file: file.into(),
            line: 0,
            column: 0,
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Reads any RON file of yours the way the vehicle files are read: `T` from `source`, or
    /// an error located and worded as theirs are (at the value, with its field path, a "did
    /// you mean" for a misspelt field, and what a value of the wrong type has there). For
    /// files a game or tool defines next to the vehicle files, such as a driving program.
    pub fn parse_ron<T: serde::de::DeserializeOwned>(source: &SourceFile) -> Result<T, Self> {
        let tree = crate::source::parse_tree(&source.text)
            .map_err(|e| crate::description::syntax_error(source, e))?;
        Self::parse_ron_in(source, &tree)
    }

    /// [`VehicleFileError::parse_ron`] given the file's scanned `tree`, for a caller that
    /// goes on to use it.
    pub(crate) fn parse_ron_in<T: serde::de::DeserializeOwned>(
        source: &SourceFile,
        tree: &crate::source::Node,
    ) -> Result<T, Self> {
        let text = &source.text;
        ron::Options::default().from_str(text).map_err(|e| {
            let offset = crate::source::offset_of(text, e.span.start.line, e.span.start.col);
            let (field, offset) = crate::description::ron_error_at(tree, text, offset, &e.code);
            let reason = crate::description::describe_ron_error_at(&e.code, text, offset);
            VehicleFileError::at(source, offset, &field, reason)
        })
    }

    /// Reads the file `path` under `asset_root`; an error about the whole file when it cannot.
    pub(crate) fn read(asset_root: &std::path::Path, path: &str) -> Result<String, Self> {
        std::fs::read_to_string(asset_root.join(path)).map_err(|e| VehicleFileError {
            file: path.into(),
            line: 1,
            column: 1,
            field: String::new(),
            reason: format!("cannot read the file: {e}"),
        })
    }
}

impl fmt::Display for VehicleFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "`{}`: ", self.field)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for VehicleFileError {}

/// The closest of `known` to `name` (edit distance at most a third of the name's length, at
/// least 2), or else the one name `name` abbreviates (`aero` for `aerodynamics`: at least 3
/// characters, the start of exactly one of `known`), for "did you mean" hints.
pub(crate) fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    let lower = name.to_lowercase();
    let known: Vec<&str> = known.into_iter().collect();
    let near = known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k);
    near.or_else(|| {
        let mut starting = known
            .iter()
            .filter(|k| lower.chars().count() >= 3 && k.to_lowercase().starts_with(&lower));
        match (starting.next(), starting.next()) {
            (Some(k), None) => Some(*k),
            _ => None,
        }
    })
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names_only() {
        let known = ["Engine", "Clutch", "Gearbox", "Differential", "Motor"];
        assert_eq!(closest("Gearbx", known), Some("Gearbox"));
        assert_eq!(closest("engine", known), Some("Engine"));
        assert_eq!(closest("Turbine", known), None);
        // An abbreviation of one name only.
        assert_eq!(closest("Diff", known), Some("Differential"));
        assert_eq!(
            closest("aero", ["brakes", "aerodynamics"]),
            Some("aerodynamics")
        );
        assert_eq!(closest("ge", known), None);
        assert_eq!(closest("mo", ["motor", "modules"]), None);
        assert_eq!(closest("mod", ["motor", "modules", "mode"]), Some("mode"));
    }
}
