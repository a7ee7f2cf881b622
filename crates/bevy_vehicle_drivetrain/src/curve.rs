//! Torque tables: torque (N·m) against engine speed (rpm), linearly interpolated.

use crate::block::{SettingError, check_finite};
use std::sync::{Arc, Mutex, Weak};

/// Revolutions per minute per radian per second: `rpm = ω · RPM_PER_RAD_S`.
pub const RPM_PER_RAD_S: f64 = 60.0 / core::f64::consts::TAU;

/// Radians per second per rpm: `ω = rpm · RAD_S_PER_RPM`.
pub const RAD_S_PER_RPM: f64 = core::f64::consts::TAU / 60.0;

/// Converts rpm to rad/s.
#[inline]
pub fn rpm_to_rad_s(rpm: f64) -> f64 {
    rpm * RAD_S_PER_RPM
}

/// Converts rad/s to rpm.
#[inline]
pub fn rad_s_to_rpm(speed: f64) -> f64 {
    speed * RPM_PER_RAD_S
}

/// A full-load torque curve: points of (engine speed in rpm, torque in N·m), sorted by rpm.
///
/// Between points the torque is linear in rpm. Below the first point it holds the first
/// torque (down to 0 rpm); at or below 0 rpm it is 0, since an engine turning backward does
/// not fire. Above the last point it holds the last torque (the engine's rev limiter cuts
/// fuel separately).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TorqueCurve {
    /// (rpm, N·m) points, strictly increasing in rpm, at least two; torques ≥ 0.
    pub points: CurvePoints,
}

/// The points of a [`TorqueCurve`], each (rpm, N·m): a `Vec<(f64, f64)>` to read and change
/// (it derefs to one), shared by the curve's copies.
///
/// A block's settings are copied into the solver, and compared with the component each time
/// one of its inputs changes ([`Block::take_inputs`](crate::Block::take_inputs)): shared,
/// two copies of the same table compare equal without reading it, which with thousands of
/// engines saves fetching two tables per vehicle from memory every step. Changing the points
/// through `&mut` (indexing, `push`, iterating) changes this copy alone: a table shared with
/// another copy is copied first, so the solver's copy never changes behind its back.
#[derive(Clone, Default)]
pub struct CurvePoints(Arc<Vec<(f64, f64)>>);

impl core::ops::Deref for CurvePoints {
    type Target = Vec<(f64, f64)>;

    fn deref(&self) -> &Vec<(f64, f64)> {
        &self.0
    }
}

impl core::ops::DerefMut for CurvePoints {
    /// This copy's own points (copied first if another copy shares them).
    fn deref_mut(&mut self) -> &mut Vec<(f64, f64)> {
        Arc::make_mut(&mut self.0)
    }
}

impl PartialEq for CurvePoints {
    /// Equal when the two share their points (a table no `&mut` has changed since they were
    /// copied, so equal without reading it, even if it holds a `NaN`), otherwise point by
    /// point (where a `NaN` is unequal to everything).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl core::fmt::Debug for CurvePoints {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Vec<(f64, f64)>> for CurvePoints {
    fn from(points: Vec<(f64, f64)>) -> Self {
        CurvePoints(Arc::new(points))
    }
}

impl<'a> IntoIterator for &'a CurvePoints {
    type Item = &'a (f64, f64);
    type IntoIter = core::slice::Iter<'a, (f64, f64)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut CurvePoints {
    type Item = &'a mut (f64, f64);
    type IntoIter = core::slice::IterMut<'a, (f64, f64)>;

    fn into_iter(self) -> Self::IntoIter {
        core::ops::DerefMut::deref_mut(self).iter_mut()
    }
}

impl serde::Serialize for CurvePoints {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for CurvePoints {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::deserialize(deserializer).map(CurvePoints::from)
    }
}

/// A point of a curve where something peaks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Peak {
    /// Engine speed of the peak (rpm).
    pub rpm: f64,
    /// The peak value: N·m for torque, W for power.
    pub value: f64,
}

impl TorqueCurve {
    /// A curve through `points` of (rpm, N·m).
    pub fn new(points: impl Into<Vec<(f64, f64)>>) -> Self {
        TorqueCurve {
            points: CurvePoints::from(points.into()),
        }
    }

    /// Checks the points: at least two, finite, rpm ≥ 0 and strictly increasing, values ≥ 0.
    /// `field` names the curve in the error (e.g. `torque_curve`).
    pub fn validate(&self, field: &str) -> Result<(), SettingError> {
        if self.points.len() < 2 {
            return Err(SettingError::new(
                field,
                format!("needs at least 2 points, got {}", self.points.len()),
            ));
        }
        // Field paths are only formatted when something is wrong.
        for (i, &(rpm, torque)) in self.points.iter().enumerate() {
            if !rpm.is_finite() {
                check_finite(&format!("{field}[{i}].0"), rpm)?;
            }
            if !torque.is_finite() {
                check_finite(&format!("{field}[{i}].1"), torque)?;
            }
            if rpm < 0.0 {
                return Err(SettingError::new(
                    format!("{field}[{i}].0"),
                    format!("must not be negative, got {rpm} rpm"),
                ));
            }
            // A negative value would make the block drive backwards at full throttle (or
            // full lever): losses such as friction and engine braking have their own settings.
            if torque < 0.0 {
                return Err(SettingError::new(
                    format!("{field}[{i}].1"),
                    format!(
                        "must not be negative, got {torque} (the table holds what the block gives at full throttle or lever; friction and engine braking are separate settings)"
                    ),
                ));
            }
            if i > 0 && rpm <= self.points[i - 1].0 {
                return Err(SettingError::new(
                    format!("{field}[{i}].0"),
                    format!(
                        "must be greater than the previous point's rpm ({} rpm): the table must be sorted by rpm, got {rpm}",
                        self.points[i - 1].0
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Torque (N·m) at `rpm`.
    #[inline]
    pub fn torque_at(&self, rpm: f64) -> f64 {
        let p = &self.points;
        if rpm <= 0.0 || p.is_empty() {
            return 0.0;
        }
        if rpm <= p[0].0 {
            return p[0].1;
        }
        let last = p[p.len() - 1];
        if rpm >= last.0 {
            return last.1;
        }
        // First point with rpm above the query; the table is short, so a linear scan wins.
        let mut i = 1;
        while p[i].0 < rpm {
            i += 1;
        }
        let (r0, t0) = p[i - 1];
        let (r1, t1) = p[i];
        t0 + (t1 - t0) * (rpm - r0) / (r1 - r0)
    }

    /// Highest speed in the table (rpm).
    pub fn max_rpm(&self) -> f64 {
        self.points.last().map_or(0.0, |p| p.0)
    }

    /// Peak torque and the rpm where it occurs.
    pub fn peak_torque(&self) -> Peak {
        self.points.iter().fold(Peak::default(), |best, &(rpm, t)| {
            if t > best.value {
                Peak { rpm, value: t }
            } else {
                best
            }
        })
    }

    /// Peak power (W) and the rpm where it occurs, up to `limit_rpm`. Exact for the linear
    /// interpolation: inside each segment, power is a parabola in rpm.
    pub fn peak_power(&self, limit_rpm: f64) -> Peak {
        let power = |rpm: f64| self.torque_at(rpm) * rpm_to_rad_s(rpm);
        let mut best = Peak::default();
        let mut consider = |rpm: f64| {
            if rpm > 0.0 && rpm <= limit_rpm {
                let p = power(rpm);
                if p > best.value {
                    best = Peak { rpm, value: p };
                }
            }
        };
        for w in self.points.windows(2) {
            let ((r0, t0), (r1, t1)) = (w[0], w[1]);
            consider(r0);
            consider(r1);
            // T = a + b·rpm; P ∝ a·rpm + b·rpm², stationary at rpm = −a/(2b).
            let b = (t1 - t0) / (r1 - r0);
            if b < 0.0 {
                let a = t0 - b * r0;
                let r = -a / (2.0 * b);
                if r > r0 && r < r1 {
                    consider(r);
                }
            }
        }
        if let Some(&(r, _)) = self.points.last() {
            consider(r.min(limit_rpm));
        }
        consider(limit_rpm);
        best
    }
}

/// A [`TorqueCurve`] ready for a solver's stages: each point with the slope of the segment that
/// starts there, so that a stage interpolates without dividing. Built once per curve (see
/// [`CurveTable::follows`]), not per stage.
///
/// Engines with the same curve share one table ([`shared_table`]): a thousand vehicles spawned
/// from one file read one table, which stays in the processor's cache, where each copy of its
/// own would be fetched from memory at every step.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CurveTable {
    /// `[rpm, N·m, N·m per rpm to the next point]`; the last point's slope is 0.
    points: Arc<[[f64; 3]]>,
}

impl Default for CurveTable {
    fn default() -> Self {
        CurveTable {
            points: Arc::new([]),
        }
    }
}

/// Every table built and still held by some engine. A handful of distinct curves at most, so
/// a linear search; entries whose engines are all gone are dropped as new tables come in.
static TABLES: Mutex<Vec<Weak<[[f64; 3]]>>> = Mutex::new(Vec::new());

/// The table for `points`, shared with every other engine whose table has the same bits.
fn shared_table(points: Vec<[f64; 3]>) -> Arc<[[f64; 3]]> {
    let same = |table: &[[f64; 3]]| {
        table.len() == points.len()
            && table
                .iter()
                .flatten()
                .zip(points.iter().flatten())
                .all(|(a, b)| a.to_bits() == b.to_bits())
    };
    // A poisoned lock still holds a valid list: a panic elsewhere cannot leave it half-written.
    let mut tables = TABLES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    tables.retain(|weak| weak.strong_count() > 0);
    if let Some(table) = tables
        .iter()
        .filter_map(Weak::upgrade)
        .find(|table| same(table))
    {
        return table;
    }
    let table: Arc<[[f64; 3]]> = points.into();
    tables.push(Arc::downgrade(&table));
    table
}

impl CurveTable {
    /// Whether the table was built from `curve`'s points as they are now.
    pub fn follows(&self, curve: &TorqueCurve) -> bool {
        self.points.len() == curve.points.len()
            && self
                .points
                .iter()
                .zip(&curve.points)
                .all(|(a, b)| a[0].to_bits() == b.0.to_bits() && a[1].to_bits() == b.1.to_bits())
    }

    /// Rebuilds the table from `curve`, sharing it with any engine that has the same one.
    pub fn rebuild(&mut self, curve: &TorqueCurve) {
        let points = curve
            .points
            .iter()
            .enumerate()
            .map(|(i, &(r0, t0))| {
                let slope = curve
                    .points
                    .get(i + 1)
                    .map_or(0.0, |&(r1, t1)| (t1 - t0) / (r1 - r0));
                [r0, t0, slope]
            })
            .collect();
        self.points = shared_table(points);
    }

    /// Torque (N·m) at `rpm`, as [`TorqueCurve::torque_at`] gives it (to rounding).
    #[inline]
    pub fn torque_at(&self, rpm: f64) -> f64 {
        let p = &self.points[..];
        let (Some(first), Some(last)) = (p.first(), p.last()) else {
            return 0.0;
        };
        if rpm <= 0.0 {
            return 0.0;
        }
        if rpm <= first[0] {
            return first[1];
        }
        if rpm >= last[0] {
            return last[1];
        }
        // The last point below the query; the table is short, so a linear scan wins.
        let segment = p.iter().rev().find(|q| q[0] < rpm).unwrap_or(first);
        segment[1] + segment[2] * (rpm - segment[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_clamps() {
        let c = TorqueCurve::new(vec![(1000.0, 100.0), (3000.0, 200.0), (6000.0, 150.0)]);
        assert_eq!(c.torque_at(2000.0), 150.0);
        assert_eq!(c.torque_at(500.0), 100.0);
        assert_eq!(c.torque_at(-10.0), 0.0);
        assert_eq!(c.torque_at(7000.0), 150.0);
        assert_eq!(
            c.peak_torque(),
            Peak {
                rpm: 3000.0,
                value: 200.0
            }
        );
    }

    #[test]
    fn the_table_interpolates_as_the_curve_does() {
        let c = TorqueCurve::new(vec![(1000.0, 100.0), (3000.0, 200.0), (6000.0, 150.0)]);
        let mut table = CurveTable::default();
        assert!(!table.follows(&c));
        table.rebuild(&c);
        assert!(table.follows(&c));
        for rpm in [
            -10.0, 0.0, 500.0, 1000.0, 1500.0, 2999.0, 3000.0, 4321.0, 6000.0, 7000.0,
        ] {
            let (a, b) = (table.torque_at(rpm), c.torque_at(rpm));
            assert!((a - b).abs() <= 1e-12 * b.abs(), "{rpm} rpm: {a} vs {b}");
        }
        let changed = TorqueCurve::new(vec![(1000.0, 100.0), (3000.0, 210.0), (6000.0, 150.0)]);
        assert!(!table.follows(&changed));
    }

    #[test]
    fn peak_power_inside_a_segment() {
        // Falling segment from 3000 rpm/200 N·m to 9000 rpm/0 N·m: P ∝ (300 − rpm/30)·rpm,
        // peak at 4500 rpm with 150 N·m.
        let c = TorqueCurve::new(vec![(0.0, 200.0), (3000.0, 200.0), (9000.0, 0.0)]);
        let p = c.peak_power(9000.0);
        assert!((p.rpm - 4500.0).abs() < 1e-9, "{p:?}");
        assert!((p.value - 150.0 * rpm_to_rad_s(4500.0)).abs() < 1e-6);
    }

    /// Engines with the same curve share one table; a changed curve gets its own, and the
    /// others keep theirs.
    #[test]
    fn engines_with_the_same_curve_share_one_table() {
        let curve = || TorqueCurve::new(vec![(1000.0, 101.0), (3000.0, 202.5), (6000.0, 150.25)]);
        let (mut a, mut b) = (CurveTable::default(), CurveTable::default());
        a.rebuild(&curve());
        b.rebuild(&curve());
        assert!(Arc::ptr_eq(&a.points, &b.points));
        let mut changed = curve();
        changed.points[1].1 = 210.0;
        b.rebuild(&changed);
        assert!(!Arc::ptr_eq(&a.points, &b.points));
        assert!(a.follows(&curve()) && b.follows(&changed));
        assert_eq!(a.torque_at(3000.0), 202.5);
        assert_eq!(b.torque_at(3000.0), 210.0);
    }

    /// A copy shares its curve's points until either changes them, and a change through
    /// `&mut` reaches that copy alone; copies compare as their points do.
    #[test]
    fn copies_share_points_until_one_changes_them() {
        let original = TorqueCurve::new(vec![(1000.0, 100.0), (3000.0, 200.0)]);
        let mut copy = original.clone();
        assert!(Arc::ptr_eq(&original.points.0, &copy.points.0));
        assert_eq!(copy, original);
        copy.points[1].1 = 210.0;
        assert!(!Arc::ptr_eq(&original.points.0, &copy.points.0));
        assert_eq!(original.points[1].1, 200.0);
        assert_ne!(copy, original);
        let shared = copy.clone();
        for point in &mut copy.points {
            point.1 = f64::NAN;
        }
        assert_eq!(shared.points[1].1, 210.0);
        assert_ne!(copy, shared);
        let separate = TorqueCurve::new(copy.points.to_vec());
        assert_ne!(copy, separate, "NaN points differ point by point");
        let rebuilt = TorqueCurve::new(vec![(1000.0, 100.0), (3000.0, 200.0)]);
        assert_eq!(rebuilt, original, "equal points in separate tables");
    }

    #[test]
    fn refuses_unsorted_tables() {
        let c = TorqueCurve::new(vec![(1000.0, 100.0), (900.0, 200.0)]);
        let e = c.validate("torque_curve").unwrap_err();
        assert_eq!(e.field, "torque_curve[1].0");
        assert!(e.reason.contains("sorted"), "{e}");
        let c = TorqueCurve::new(vec![(1000.0, f64::NAN), (2000.0, 200.0)]);
        assert_eq!(c.validate("t").unwrap_err().field, "t[0].1");
    }
}
