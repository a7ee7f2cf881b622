//! Directions along a vehicle body's axes, for the rotors a body holds.

#[cfg(doc)]
use crate::blocks::{AssistMotor, Engine, Motor};

/// A direction along one of a vehicle body's axes (+X right, +Y up, +Z back): which way a
/// rotor held in the body spins, for one ([`Engine::crank_axis`], [`Motor::rotor_axis`],
/// [`AssistMotor::rotor_axis`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BodyAxis {
    /// +X.
    Right,
    /// −X.
    Left,
    /// +Y.
    Up,
    /// −Y.
    Down,
    /// +Z.
    Back,
    /// −Z.
    Forward,
}

impl BodyAxis {
    /// The unit vector of the direction in the body's frame.
    pub fn vector(self) -> [f64; 3] {
        match self {
            BodyAxis::Right => [1.0, 0.0, 0.0],
            BodyAxis::Left => [-1.0, 0.0, 0.0],
            BodyAxis::Up => [0.0, 1.0, 0.0],
            BodyAxis::Down => [0.0, -1.0, 0.0],
            BodyAxis::Back => [0.0, 0.0, 1.0],
            BodyAxis::Forward => [0.0, 0.0, -1.0],
        }
    }
}
