//! Subsystem modules: brakes, steering, the drivetrain, suspension and anti-roll bars behind
//! small traits, each with a built-in implementation that a user can replace on a live
//! vehicle.
//!
//! | Module | Stage function | Returns | Built-in |
//! |---|---|---|---|
//! | [`BrakeModule`] | [`wheel_torques`](BrakeModule::wheel_torques) | a brake torque per wheel (N·m) | [`BuiltinBrakes`] |
//! | [`SteeringModule`] | [`apply`](SteeringModule::apply) | a road-wheel angle per wheel (rad) and the rack travel (m) | [`AckermannSteering`] |
//! | [`DrivetrainModule`] | [`wheel_torques`](DrivetrainModule::wheel_torques) | a drive torque per wheel (N·m) | the block graph; [`DirectDrive`] ships as a module |
//! | [`SuspensionModule`] | [`force`](SuspensionModule::force) | the corner's force (N) | [`BuiltinSuspension`] |
//! | [`AntiRollBarModule`] | [`forces`](AntiRollBarModule::forces) | the left and right wheel forces (N) | [`LinearAntiRollBar`] |
//!
//! Every vehicle carries its modules in its [`VehicleModules`] component, the built-in ones
//! until others are installed with [`InstallModule::install_module`].
//!
//! # Call cadence
//!
//! One fixed step of length `dt` whose drivetrain runs `N` RK4 substeps:
//!
//! 1. In [`VehicleSystems::Controls`](crate::VehicleSystems::Controls), **once per fixed
//!    step**, `begin_step` of the brake, steering and drivetrain modules, in that order, with
//!    the vehicle as it is at the start of the step. This is the place for per-step decisions
//!    and state: an ABS cycle, a controller update, a latched mode.
//! 2. In [`VehicleSystems::Contact`](crate::VehicleSystems::Contact), once per fixed step, the
//!    suspension module's `force` for each corner (twice: at the travel rate of the step's
//!    start and at the rate predicted for its middle, whose force is applied; see
//!    [`SuspensionModule::force`]), then each anti-roll-bar module's `forces`. The chassis
//!    body is integrated by Rapier, which takes one force per fixed step: that evaluation is
//!    the chassis's only stage. These modules have no `begin_step`.
//! 3. In [`DrivetrainSystems::Step`](bevy_vehicle_drivetrain::DrivetrainSystems::Step), **once
//!    per RK4 stage of every substep** (`4·N` times per fixed step), the brake module's
//!    `wheel_torques`, the steering module's `apply` and the drivetrain module's
//!    `wheel_torques`, in that order, with the wheel spins of that stage. The stage functions
//!    take `&self`: they must be pure functions of their context, since a stage is evaluated
//!    at intermediate states that are then thrown away. (Once per fixed step instead, at its
//!    first stage, when all three are [stage-independent](self#stage-independent-modules).)
//!    Before the first stage of each substep, the brake module's `begin_substep` if its
//!    `every_substep` says so, with the state committed at the substep's start: per-substep
//!    decisions (the built-in ABS's).
//!
//! Within a fixed step the chassis's pose and velocity are those at the start of the step at
//! every stage (Rapier moves the body after the drivetrain's step); the wheel spins and the
//! time ([`ModuleContext::time`]) change from stage to stage.
//!
//! # Stage-independent modules
//!
//! A brake, steering or drivetrain module whose stage function gives the same result at
//! every stage of a step can say so with `every_stage() -> false`. When all of a vehicle's
//! brake, steering and drivetrain modules say so, their stage functions run once per fixed
//! step, at its first stage, and the wheels keep those torques and angles through the other
//! stages: the same motion, without `4·N − 1` calls of each; and again at the first stage of
//! any substep whose brake `begin_substep` reports a change. The built-in brakes (whose
//! torque magnitudes are set in `begin_step`, and with an ABS in `begin_substep`; only the
//! sign follows the spin) and the built-in steering are stage-independent; [`DirectDrive`],
//! whose torque falls with the wheel's spin, is not. A module that leaves `every_stage` at its default runs at every
//! stage, with the others.
//!
//! [`ResetVehicle`] calls every module's `reset`.
//!
//! # Sign conventions
//!
//! Brake torques are signed and must oppose the wheel's spin. **A brake torque that would
//! drive the wheel is corrected, never applied as drive:** the wheel's brake applies the
//! magnitude `|T|` against the spin, and holds a wheel that it can stop (the same brake the
//! built-in uses, without chatter at a standstill). Each correction is counted in
//! [`ModuleReport::brake_corrections`], and the first is logged. Drive torques are signed,
//! positive forward. Angles are positive to the left (about the chassis's up axis). A
//! non-finite number from a module is replaced (by zero, or by the previous angle) and counted
//! in [`ModuleReport::invalid_outputs`].

mod builtin;
mod context;
pub(crate) mod install;
pub(crate) mod systems;

pub use builtin::{
    AckermannSteering, BuiltinBrakes, BuiltinSuspension, DirectDrive, LinearAntiRollBar,
    ackermann_angles, apply_stability_demand, builtin_brake_torques, distribute_brake_force,
};
pub use context::{
    AxleInput, CornerInput, ModuleContext, ModuleWheel, StabilityDemand, VehicleState,
};
pub use install::{
    InstallModule, ModuleError, ModuleReport, ResetVehicle, VehicleModule, VehicleModules,
};

/// A brake system: a brake torque at each wheel.
pub trait BrakeModule: Send + Sync + 'static {
    /// A name for messages (the type's name by default).
    fn name(&self) -> &str {
        core::any::type_name::<Self>()
    }

    /// Once per fixed step, before any stage: per-step decisions and state.
    fn begin_step(&mut self, _ctx: &ModuleContext) {}

    /// While [`BrakeModule::every_substep`] says so, at the start of every drivetrain substep,
    /// before its first stage (the first substep's after `begin_step`), with the wheel spins
    /// committed there and this step's tire peaks: decisions that must not wait a whole fixed
    /// step, such as an anti-lock rule's, taken every [`ModuleContext::substep`] seconds
    /// whatever the fixed-step rate. Returns whether the module's torques changed, so that a
    /// [stage-independent](self#stage-independent-modules) module's `wheel_torques` runs
    /// again at this stage. By default nothing, `false`.
    fn begin_substep(&mut self, _ctx: &ModuleContext) -> bool {
        false
    }

    /// Whether [`BrakeModule::begin_substep`] runs in the coming step (asked after
    /// `begin_step`): `false` by default, so that a module without per-substep decisions costs
    /// nothing per substep.
    fn every_substep(&self) -> bool {
        false
    }

    /// Once per RK4 stage: writes the brake torque of each wheel (N·m, signed, opposing the
    /// wheel's spin) into `torques`, in [`ModuleContext::wheels`] order. `torques` arrives
    /// filled with zeros. Only the magnitude acts: see the module docs on signs.
    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]);

    /// Whether [`BrakeModule::wheel_torques`] must run at every stage (`true`, the default).
    /// A module whose torque magnitudes depend only on what its `begin_step` computed, not on
    /// the stage's wheel spins or time, may return `false`: see
    /// [stage-independent modules](self#stage-independent-modules).
    fn every_stage(&self) -> bool {
        true
    }

    /// Called when the vehicle is reset ([`ResetVehicle`]): clear any state.
    fn reset(&mut self) {}
}

/// A steering system: the road-wheel angles.
pub trait SteeringModule: Send + Sync + 'static {
    /// A name for messages (the type's name by default).
    fn name(&self) -> &str {
        core::any::type_name::<Self>()
    }

    /// Once per fixed step, before any stage: per-step decisions and state.
    fn begin_step(&mut self, _ctx: &ModuleContext) {}

    /// Once per RK4 stage: writes the road-wheel angle of each wheel (rad, positive to the
    /// left) into `angles`, in [`ModuleContext::wheels`] order, and returns the rack travel
    /// (m, positive to the right). `angles` arrives filled with zeros; a wheel left at zero
    /// points straight ahead. The tires turn to these angles for this stage, plus the toe their
    /// suspension adds ([`WheelState::toe`](crate::WheelState::toe)).
    fn apply(&self, ctx: &ModuleContext, angles: &mut [f64]) -> f64;

    /// Whether [`SteeringModule::apply`] must run at every stage (`true`, the default). A
    /// module whose angles depend only on what its `begin_step` computed may return `false`:
    /// see [stage-independent modules](self#stage-independent-modules).
    fn every_stage(&self) -> bool {
        true
    }

    /// Called when the vehicle is reset ([`ResetVehicle`]): clear any state.
    fn reset(&mut self) {}
}

/// A drivetrain in one function: a drive torque at each wheel. Installing one replaces the
/// vehicle's whole block graph (see
/// [`ExternalDrive`](bevy_vehicle_drivetrain::ExternalDrive)): the wheels turn freely under
/// these torques, their tires and brakes.
pub trait DrivetrainModule: Send + Sync + 'static {
    /// A name for messages (the type's name by default).
    fn name(&self) -> &str {
        core::any::type_name::<Self>()
    }

    /// Once per fixed step, before any stage: per-step decisions and state (a shift, say).
    fn begin_step(&mut self, _ctx: &ModuleContext) {}

    /// Once per RK4 stage: writes the drive torque at each wheel (N·m, positive forward) into
    /// `torques`, in [`ModuleContext::wheels`] order. `torques` arrives filled with zeros.
    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]);

    /// Whether [`DrivetrainModule::wheel_torques`] must run at every stage (`true`, the
    /// default). A module whose torques depend only on what its `begin_step` computed may
    /// return `false`: see [stage-independent modules](self#stage-independent-modules).
    fn every_stage(&self) -> bool {
        true
    }

    /// Called when the vehicle is reset ([`ResetVehicle`]): clear any state.
    fn reset(&mut self) {}
}

/// A suspension: each corner's force from its deflection. Memoryless, so it has no
/// `begin_step`.
pub trait SuspensionModule: Send + Sync + 'static {
    /// A name for messages (the type's name by default).
    fn name(&self) -> &str {
        core::any::type_name::<Self>()
    }

    /// The force the corner's suspension pushes the wheel into the ground with (N, along the
    /// chassis's up axis). The tire's load is this plus any anti-roll-bar force, and never
    /// below zero.
    ///
    /// Twice per corner per fixed step, at the deflection and rate of two guesses at the
    /// step's motion: the force held over the step is the one that gives itself back,
    /// interpolated between the two calls (see [`CornerInput::deflection`] and
    /// [`CornerInput::rate`]). Once, at the step's start, on the step a wheel touches down.
    /// The force should grow with deflection and rate; one that falls with both is taken
    /// from the second call alone.
    fn force(&self, ctx: &ModuleContext, corner: &CornerInput) -> f64;

    /// Called when the vehicle is reset ([`ResetVehicle`]): clear any state.
    fn reset(&mut self) {}
}

/// An anti-roll bar on one axle. Memoryless, so it has no `begin_step`.
pub trait AntiRollBarModule: Send + Sync + 'static {
    /// A name for messages (the type's name by default).
    fn name(&self) -> &str {
        core::any::type_name::<Self>()
    }

    /// Once per chassis stage (once per fixed step): the forces the bar adds to the left and
    /// right wheels' loads (N, positive pressing the wheel into the ground).
    fn forces(&self, ctx: &ModuleContext, axle: &AxleInput) -> [f64; 2];

    /// Called when the vehicle is reset ([`ResetVehicle`]): clear any state.
    fn reset(&mut self) {}
}
