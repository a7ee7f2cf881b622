//! [`TireError`], the error [`TireModel::validate`](crate::TireModel::validate) returns.

use std::fmt;

/// A tire parameter that cannot be used, found by
/// [`TireModel::validate`](crate::TireModel::validate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TireError {
    /// Path of the offending field, e.g. `magic_formula.p_dx1` or
    /// `magic_formula.combined.r_cx1`.
    pub field: String,
    /// Why the value is refused.
    pub reason: String,
}

impl TireError {
    pub(crate) fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for TireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid tire parameter `{}`: {}",
            self.field, self.reason
        )
    }
}

impl std::error::Error for TireError {}

/// Field-checking helpers shared by the models' `validate` methods.
pub(crate) struct Checker<'a> {
    pub prefix: &'a str,
}

impl Checker<'_> {
    fn path(&self, name: &str) -> String {
        format!("{}.{}", self.prefix, name)
    }

    pub fn finite(&self, name: &str, value: f64) -> Result<(), TireError> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(TireError::new(
                self.path(name),
                format!("must be a finite number, got {value}"),
            ))
        }
    }

    pub fn positive(&self, name: &str, value: f64) -> Result<(), TireError> {
        self.finite(name, value)?;
        if value > 0.0 {
            Ok(())
        } else {
            Err(TireError::new(
                self.path(name),
                format!("must be greater than 0, got {value}"),
            ))
        }
    }

    pub fn non_negative(&self, name: &str, value: f64) -> Result<(), TireError> {
        self.finite(name, value)?;
        if value >= 0.0 {
            Ok(())
        } else {
            Err(TireError::new(
                self.path(name),
                format!("must not be negative, got {value}"),
            ))
        }
    }

    pub fn shape_factor(&self, name: &str, value: f64) -> Result<(), TireError> {
        self.finite(name, value)?;
        if value > 0.0 && value <= 2.0 {
            Ok(())
        } else {
            Err(TireError::new(
                self.path(name),
                format!("shape factor must lie in (0, 2], got {value}"),
            ))
        }
    }

    pub fn at_most_one(&self, name: &str, value: f64) -> Result<(), TireError> {
        self.finite(name, value)?;
        if value <= 1.0 {
            Ok(())
        } else {
            Err(TireError::new(
                self.path(name),
                format!("curvature factor must be ≤ 1, got {value}"),
            ))
        }
    }

    pub fn fail(&self, name: &str, reason: impl Into<String>) -> TireError {
        TireError::new(self.path(name), reason)
    }
}
