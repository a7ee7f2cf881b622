//! [`ChassisError`]: a chassis setting that was refused, naming where it is, the field and why.

use core::fmt;

use bevy_vehicle_drivetrain::SettingError;

/// A chassis setting that was refused: which vehicle and wheel (when known), which field, and
/// why, with the offending value.
///
/// Displayed like the drivetrain's errors, e.g.
/// ``vehicle 'car' wheel 'wheel_fl': setting `suspension.stiffness` must be greater than 0 (N/m), got -1``.
/// A component checked on its own (e.g. [`Suspension::validate`](crate::Suspension::validate))
/// knows no vehicle or wheel, and its field path starts with the component
/// (`suspension.stiffness`); [`CarBuilder::validate`](crate::CarBuilder::validate) gives paths
/// inside the builder (`wheel.suspension.bump_damping`, `rear_wheel.radius`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChassisError {
    /// The vehicle's name (its `Name`, or its entity id), when known.
    pub vehicle: Option<String>,
    /// The wheel's name (its `Name`, or its entity id), for a setting on a wheel entity.
    pub wheel: Option<String>,
    /// Path of the field, e.g. `suspension.stiffness`, `anti_roll_bars[1].stiffness` or
    /// `rear_wheel.radius`.
    pub field: String,
    /// Why the value was refused, with the value, e.g. `must be greater than 0 (N/m), got -1`.
    pub reason: String,
}

impl ChassisError {
    /// An error for `field` with `reason`, not yet tied to a vehicle or wheel.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ChassisError {
            vehicle: None,
            wheel: None,
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Puts the field inside `prefix`: `stiffness` becomes `prefix.stiffness`.
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = if self.field.is_empty() {
            prefix.to_owned()
        } else {
            format!("{prefix}.{}", self.field)
        };
        self
    }

    /// Ties the error to the vehicle called `vehicle`.
    pub fn at_vehicle(mut self, vehicle: impl Into<String>) -> Self {
        self.vehicle = Some(vehicle.into());
        self
    }

    /// Ties the error to the wheel called `wheel`.
    pub fn at_wheel(mut self, wheel: impl Into<String>) -> Self {
        self.wheel = Some(wheel.into());
        self
    }

    /// A drivetrain block's refused setting, with its field put inside `prefix`.
    pub fn from_setting(prefix: &str, error: SettingError) -> Self {
        ChassisError::new(error.field, error.reason).within(prefix)
    }
}

impl fmt::Display for ChassisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.vehicle, &self.wheel) {
            (Some(v), Some(w)) => write!(f, "vehicle '{v}' wheel '{w}': ")?,
            (Some(v), None) => write!(f, "vehicle '{v}': ")?,
            (None, Some(w)) => write!(f, "wheel '{w}': ")?,
            (None, None) => {}
        }
        write!(f, "setting `{}` {}", self.field, self.reason)
    }
}

impl std::error::Error for ChassisError {}

/// The largest magnitude the physics engine can hold (`f32`): chassis values end up in Rapier.
const F32_LIMIT: f64 = f32::MAX as f64;

/// A number a setting may be: `f64` (chassis dynamics) or `f32` (Rapier and Bevy geometry).
/// Messages quote it as written: an `f32` of `-1.505` prints as `-1.505`, not as the
/// `-1.5049999952316284` of its conversion to `f64`.
pub trait Value: Copy + fmt::Display + fmt::LowerExp {
    /// The value as an `f64`, for the comparisons.
    fn get(self) -> f64;
}

impl Value for f64 {
    fn get(self) -> f64 {
        self
    }
}

impl Value for f32 {
    fn get(self) -> f64 {
        f64::from(self)
    }
}

/// ` (unit)`, or nothing for a dimensionless value.
fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" ({unit})")
    }
}

/// Checks that `value` is finite and within the physics engine's range; `unit` (e.g. `"kg"`,
/// empty for none) goes into the message.
pub fn finite(field: &str, value: impl Value, unit: &str) -> Result<(), ChassisError> {
    let v = value.get();
    if !v.is_finite() {
        return Err(ChassisError::new(
            field,
            format!("must be a finite number{}, got {value}", unit_suffix(unit)),
        ));
    }
    if v.abs() > F32_LIMIT {
        return Err(ChassisError::new(
            field,
            format!(
                "must lie within ±3.4e38, the physics engine's range{}, got {value:e}",
                unit_suffix(unit)
            ),
        ));
    }
    Ok(())
}

/// Checks that `value` is finite and `> 0`; `unit` goes into the message.
pub fn positive(field: &str, value: impl Value, unit: &str) -> Result<(), ChassisError> {
    finite(field, value, unit)?;
    if value.get() > 0.0 {
        Ok(())
    } else {
        Err(ChassisError::new(
            field,
            format!("must be greater than 0{}, got {value}", unit_suffix(unit)),
        ))
    }
}

/// Checks that `value` is finite and `≥ 0`; `unit` goes into the message.
pub fn non_negative(field: &str, value: impl Value, unit: &str) -> Result<(), ChassisError> {
    finite(field, value, unit)?;
    if value.get() >= 0.0 {
        Ok(())
    } else {
        Err(ChassisError::new(
            field,
            format!("must not be negative{}, got {value}", unit_suffix(unit)),
        ))
    }
}

/// Checks that `value` is finite and lies in `[min, max]`.
pub(crate) fn in_range(
    field: &str,
    value: impl Value,
    min: f64,
    max: f64,
    unit: &str,
) -> Result<(), ChassisError> {
    finite(field, value, unit)?;
    if (min..=max).contains(&value.get()) {
        Ok(())
    } else {
        Err(ChassisError::new(
            field,
            format!(
                "must lie in [{min}, {max}]{}, got {value}",
                unit_suffix(unit)
            ),
        ))
    }
}

/// Checks each component of a vector with `check`, naming them `field.x`, `field.y`, `field.z`.
/// A value that passes costs no allocation (the field is named only in an error), so it can
/// run every step.
pub(crate) fn each_axis(
    field: &str,
    value: bevy::math::Vec3,
    unit: &str,
    check: fn(&str, f32, &str) -> Result<(), ChassisError>,
) -> Result<(), ChassisError> {
    for (axis, v) in [("x", value.x), ("y", value.y), ("z", value.z)] {
        check("", v, unit).map_err(|mut e| {
            e.field = format!("{field}.{axis}");
            e
        })?;
    }
    Ok(())
}

/// Checks that a vehicle's body box clears the road when it stands at its design ride
/// height. In the chassis frame the road is the line through the lowest points of the
/// front-most and the rear-most wheels: `grounds` holds each axle's `[z, y]` (m: the axle's
/// Z, and its wheel centres' height less their radius); with one axle the road is level at
/// it. The box's bottom, `body_bottom` (m: its centre less its half height), must lie above
/// that line under both of its ends, at Z `body_ends` (m: its centre less and plus its half
/// length). A box that reaches the road holds the vehicle up on its body, its wheels hanging;
/// so does one that only its tilt brings down, as between a raised axle and a lowered one or
/// small front wheels and large rear ones. The error names `field`.
pub fn body_clearance(
    field: &str,
    body_bottom: f32,
    body_ends: [f32; 2],
    grounds: &[[f32; 2]],
) -> Result<(), ChassisError> {
    let by_z = |a: &&[f32; 2], b: &&[f32; 2]| a[0].total_cmp(&b[0]);
    let (Some(front), Some(rear)) = (grounds.iter().min_by(by_z), grounds.iter().max_by(by_z))
    else {
        return Ok(());
    };
    let road = |z: f32| {
        if rear[0] > front[0] {
            front[1] + (z - front[0]) * (rear[1] - front[1]) / (rear[0] - front[0])
        } else {
            front[1].min(rear[1])
        }
    };
    for (end, z) in ["front", "rear"].into_iter().zip(body_ends) {
        let ground = road(z);
        // Also refuses a bottom or a road that is not a number.
        if body_bottom > ground {
            continue;
        }
        return Err(ChassisError::new(
            field,
            format!(
                "puts the body's box on the ground: its bottom lies at {body_bottom:.3} m, the \
                 ground under its {end} end at {ground:.3} m (the line through the wheels' lowest \
                 points at design ride height), so the vehicle would rest on its body with its \
                 wheels hanging"
            ),
        ));
    }
    Ok(())
}

/// Checks a vehicle's transform: a finite translation (m), a scale of 1 on each axis (within
/// 1e-3; a zero scale made the body's and the wheels' rotations NaN, and any other scale
/// grew or shrank the body's colliders while its mounts, springs and masses stayed as set)
/// and a finite, non-zero rotation quaternion. Fields are named `transform.translation.x`
/// and so on.
pub fn transform(transform: &bevy::prelude::Transform) -> Result<(), ChassisError> {
    each_axis("transform.translation", transform.translation, "m", finite)?;
    each_axis("transform.scale", transform.scale, "", positive)?;
    if !unit_scale(transform.scale) {
        return Err(ChassisError::new(
            "transform.scale",
            format!(
                "must be 1 on each axis (a vehicle's mounts, springs and masses are set in \
                 metres and kilograms, which a scale would not change: scale its meshes \
                 instead), got {}",
                transform.scale
            ),
        ));
    }
    if !usable_rotation(transform.rotation) {
        return Err(ChassisError::new(
            "transform.rotation",
            format!(
                "must be a finite, non-zero quaternion, got {}",
                transform.rotation
            ),
        ));
    }
    Ok(())
}

/// Whether a vehicle's scale is 1 on each axis, within 1e-3 (see [`transform`]). (Finite
/// first: `max_element` passes over a NaN.)
#[inline]
pub(crate) fn unit_scale(scale: bevy::math::Vec3) -> bool {
    scale.is_finite() && (scale - bevy::math::Vec3::ONE).abs().max_element() <= 1e-3
}

/// Whether a vehicle's rotation quaternion is finite and not zero (see [`transform`]).
#[inline]
pub(crate) fn usable_rotation(rotation: bevy::math::Quat) -> bool {
    rotation.is_finite() && rotation.length() > 1e-6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_transform_rules_refuse_what_the_named_checks_refuse() {
        use bevy::math::{Quat, Vec3};
        assert!(unit_scale(Vec3::ONE) && unit_scale(Vec3::splat(1.0009)));
        // A NaN on one axis: `max_element` alone would pass over it.
        for bad in [
            Vec3::new(f32::NAN, 1.0, 1.0),
            Vec3::splat(1.002),
            Vec3::ZERO,
        ] {
            assert!(!unit_scale(bad), "{bad}");
            let t = bevy::prelude::Transform::from_scale(bad);
            assert!(transform(&t).is_err(), "{bad}");
        }
        assert!(usable_rotation(Quat::IDENTITY) && usable_rotation(Quat::from_rotation_y(2.0)));
        for bad in [
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        ] {
            assert!(!usable_rotation(bad), "{bad}");
            let t = bevy::prelude::Transform::from_rotation(bad);
            assert!(transform(&t).is_err(), "{bad}");
        }
    }

    #[test]
    fn messages() {
        assert_eq!(
            positive("stiffness", -1.0, "N/m")
                .unwrap_err()
                .within("suspension")
                .to_string(),
            "setting `suspension.stiffness` must be greater than 0 (N/m), got -1"
        );
        assert_eq!(
            non_negative("bias", f64::NAN, "")
                .unwrap_err()
                .at_vehicle("car")
                .to_string(),
            "vehicle 'car': setting `bias` must be a finite number, got NaN"
        );
        assert_eq!(
            in_range("bias", 2.0f32, 0.0, 1.0, "")
                .unwrap_err()
                .at_vehicle("car")
                .at_wheel("w")
                .to_string(),
            "vehicle 'car' wheel 'w': setting `bias` must lie in [0, 1], got 2"
        );
        assert!(
            finite("x", 1e300, "m")
                .unwrap_err()
                .reason
                .starts_with("must lie within ±3.4e38")
        );
        assert!(finite("x", 1e30, "m").is_ok());
    }
}
