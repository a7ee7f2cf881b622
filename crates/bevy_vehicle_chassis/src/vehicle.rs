//! The vehicle entity: a Rapier rigid body that is also the drivetrain's owner.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use bevy_vehicle_drivetrain::ExternalStep;

use crate::components::VehicleTelemetry;
use crate::modules::VehicleModules;
use crate::modules::systems::ModuleScratch;
use crate::validation::ChassisStatus;

/// Marks a vehicle: a dynamic Rapier body (the chassis) whose wheels are the [`Wheel`] blocks of
/// its [`Drivetrain`] carrying a [`WheelMount`](crate::WheelMount).
///
/// Add a collider with the chassis's mass properties, a [`Transform`], and the blocks. The
/// chassis owns the body's [`ExternalForce`]: it is overwritten every fixed step with the sum
/// of the wheel and drag forces and the vehicle's [`AddedForce`](crate::AddedForce), a game's
/// own steady force (use [`ExternalImpulse`] for one-off pushes).
///
/// Its chassis settings are checked when they are added or changed; the result is in its
/// [`ChassisStatus`], and a vehicle whose settings are refused is not simulated until they are
/// fixed.
///
/// A vehicle spawned in the same frame as the ground under it cannot find that ground on its
/// first fixed step (Rapier takes new colliders into its queries only when it steps): when
/// its wheels find no ground on that step while another new collider joins with it, it is
/// held against gravity for the step (its [`GravityScale`] is 0, then given back), and it
/// stands on the ground from its second step as it would have from its first on older ground.
#[derive(Component, Clone, Copy, Debug, Default)]
#[require(
    RigidBody = RigidBody::Dynamic,
    Drivetrain,
    VehicleControls,
    VehicleTelemetry,
    ChassisStatus,
    Velocity,
    ExternalForce,
    ExternalImpulse,
    ReadMassProperties,
    Sleeping = Sleeping::disabled(),
    VehicleModules,
    ModuleScratch,
    ExternalStep,
)]
pub struct Vehicle;
