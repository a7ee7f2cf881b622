//! What a module is handed: the vehicle's state, the driver's command, the step, the loads.

use bevy::prelude::*;
use bevy_vehicle_drivetrain::VehicleControls;

use crate::components::{Brakes, Steering, Suspension, WheelMount};

/// One of the vehicle's wheels, as modules see it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleWheel {
    /// The wheel block entity.
    pub entity: Entity,
    /// Where the wheel is mounted: position (chassis frame, m), axle, side, steered.
    pub mount: WheelMount,
    /// Rolling radius (m).
    pub radius: f64,
    /// The wheel's own moment of inertia about its axle (kg·m²), without what the drivetrain
    /// behind it adds.
    pub inertia: f64,
    /// Its position in the drivetrain's pass order.
    pub(crate) node: u32,
}

/// The vehicle's state at a stage.
///
/// Pose and velocities are those of the chassis body at the start of the fixed step (Rapier
/// moves it after the drivetrain's step); the wheel spins are the stage's.
#[derive(Clone, Copy, Debug)]
pub struct VehicleState<'a> {
    /// Chassis position (world, m).
    pub position: Vec3,
    /// Chassis orientation (world).
    pub rotation: Quat,
    /// Chassis velocity over the ground under its wheels (world frame, m/s): the body's,
    /// less the mean of its grounded wheels' [`WheelState::ground_velocity`](crate::WheelState::ground_velocity)
    /// (the body's own while no wheel is grounded), as the vehicle's own sensors measure it on
    /// a moving platform or deck.
    pub linear_velocity: Vec3,
    /// The ground velocity `linear_velocity` is measured against (world, m/s): the mean of the
    /// grounded wheels' ground velocities, zero with none grounded.
    pub ground_velocity: Vec3,
    /// The ground's velocity under each wheel (world, m/s), in wheel order: its
    /// [`WheelState::ground_velocity`](crate::WheelState::ground_velocity), `None` for a wheel
    /// in the air (which counts as on `ground_velocity`). A wheel's speed over its own ground
    /// is the body's velocity at it plus `ground_velocity` less this
    /// ([`VehicleState::wheel_velocity`]): with its wheels on two grounds (one side on a moving
    /// strip) the mean fits neither.
    pub wheel_ground_velocity: &'a [Option<Vec3>],
    /// Chassis angular velocity (world, rad/s).
    pub angular_velocity: Vec3,
    /// Each wheel's spin (rad/s, positive rolling forward), in wheel order.
    pub wheel_spin: &'a [f64],
    /// Each wheel's suspension travel from design height (m, compression positive), in wheel
    /// order: in `begin_step`, the suspension, and the anti-roll bars as the last step left it;
    /// in the stage functions as measured for this step.
    pub suspension_travel: &'a [f64],
}

impl VehicleState<'_> {
    /// The velocity of wheel `i`'s mount point over the ground under that wheel (world, m/s),
    /// `mount` its position in the chassis frame (m). (The body's velocity is its centre of
    /// mass's; the offset to the body origin, times the yaw rate, is a small error at the
    /// speeds the controls act at.)
    pub fn wheel_velocity(&self, i: usize, mount: Vec3) -> Vec3 {
        let arm = self.rotation * mount;
        let own = self
            .wheel_ground_velocity
            .get(i)
            .copied()
            .flatten()
            .unwrap_or(self.ground_velocity);
        self.linear_velocity + self.angular_velocity.cross(arm) + self.ground_velocity - own
    }

    /// Speed along the chassis's forward axis (−Z) (m/s, negative when reversing).
    pub fn forward_speed(&self) -> f64 {
        f64::from(self.linear_velocity.dot(self.rotation * Vec3::NEG_Z))
    }

    /// Speed along the chassis's right axis (+X) (m/s).
    pub fn lateral_speed(&self) -> f64 {
        f64::from(self.linear_velocity.dot(self.rotation * Vec3::X))
    }

    /// Yaw rate about the chassis's up axis (rad/s, positive turning left).
    pub fn yaw_rate(&self) -> f64 {
        f64::from(self.angular_velocity.dot(self.rotation * Vec3::Y))
    }

    /// Body slip angle: the angle from the chassis's forward axis to its velocity over the
    /// ground (rad, positive when the velocity points to the left of the nose; 0 at rest).
    pub fn body_slip_angle(&self) -> f64 {
        let (forward, left) = (self.forward_speed(), -self.lateral_speed());
        if forward == 0.0 && left == 0.0 {
            0.0
        } else {
            left.atan2(forward.abs())
        }
    }
}

/// What the vehicle's stability control ([`StabilityControl`](crate::StabilityControl)) asks
/// for in a fixed step, decided once per step before the modules' `begin_step` and handed to
/// every module call as [`ModuleContext::stability`].
///
/// The built-in brakes add `brake_torque` at `wheel` to what the pedal asks there, and what
/// that wheel's tire cannot take they release at the wheel across the axle
/// ([`apply_stability_demand`](super::apply_stability_demand)); the drivetrain's engines and
/// motors deliver `1 − drive_cut` of the driver's demand. A brake module of your own that
/// should keep the stability control's braking calls that function on its pedal torques;
/// the drive cut holds whatever brake module is installed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StabilityDemand {
    /// Yaw moment asked for (N·m, about the body's up axis, positive turning left).
    pub moment: f64,
    /// How far the yaw-rate error lies beyond the control's deadband (rad/s, > 0).
    pub excess: f64,
    /// Whether the car yaws faster than asked, or the other way (oversteer): the front wheel
    /// is braked; otherwise (understeer) the rear.
    pub oversteer: bool,
    /// The wheel braked for the moment, as an index into [`ModuleContext::wheels`]: on the
    /// side the moment turns the car to, on the front axle in oversteer and the rear in
    /// understeer. `None` if the vehicle has no wheel there.
    pub wheel: Option<usize>,
    /// Brake torque asked of `wheel` (N·m, ≥ 0): the moment over the wheel's lateral offset
    /// times its radius, at most [`Brakes::max_torque`].
    pub brake_torque: f64,
    /// Share of the drive taken away this step (0..1,
    /// [`StabilityControl::drive_cut`](crate::StabilityControl::drive_cut)).
    pub drive_cut: f64,
}

/// What every module call receives.
#[derive(Clone, Copy, Debug)]
pub struct ModuleContext<'a> {
    /// The vehicle's state at this stage.
    pub state: VehicleState<'a>,
    /// The driver's command, with one exception: `parking` is set only while the parking
    /// lock has engaged, which it does once the wheels on
    /// [`Brakes::handbrake_axle`] roll slower than [`Brakes::parking_max_speed`] after the
    /// driver selected it (selected at speed, the car rolls on until it has nearly stopped).
    pub command: &'a VehicleControls,
    /// The steering input after the steering's rate limit ([`Steering::max_rate`]), −1..1,
    /// positive right: how far the driver's wheel has actually turned, as a mean over the
    /// step (the wheels hold one angle for the step; a step in which the wheel turns from
    /// 0 to 0.1 and holds there from its middle gives 0.075).
    pub steering_input: f64,
    /// Length of the fixed step (s).
    pub dt: f64,
    /// Time since the start of the fixed step at this stage (s; 0 for `begin_step` and the
    /// suspension and anti-roll bars).
    pub time: f64,
    /// Length of the drivetrain substep this stage belongs to (s): in `begin_step`, the
    /// suspension and the anti-roll bars, the last step's.
    pub substep: f64,
    /// Each wheel's normal load on its tire (N), in wheel order: in `begin_step`, the
    /// suspension, and the anti-roll bars the last step's; in the stage functions the load
    /// the tire carries over this step.
    pub load: &'a [f64],
    /// Each wheel's tire peak longitudinal force at its load on the surface under it (N, ≥ 0;
    /// 0 in the air or without a tire model), in wheel order: in `begin_step` the last
    /// step's, in the stage functions this step's.
    pub peak_force: &'a [f64],
    /// Each wheel's tire slip ratio at its peak longitudinal force, at its load on the surface
    /// under it (dimensionless, ≥ 0; 0 in the air or without a tire model), in wheel order, at
    /// the same times as `peak_force`. It falls with the road's friction (about 0.1 on dry
    /// asphalt, a tenth of that on ice): a slip threshold for an anti-lock or traction rule
    /// should be measured against it.
    pub peak_slip: &'a [f64],
    /// The wheels, in wheel order: by axle from the front, left before right (FL, FR, RL, RR
    /// on a car). Every per-wheel slice uses this order.
    pub wheels: &'a [ModuleWheel],
    /// The vehicle's brake settings (what the built-in brakes use).
    pub brakes: &'a Brakes,
    /// The vehicle's steering settings (what the built-in steering uses).
    pub steering: &'a Steering,
    /// What the vehicle's stability control asks for this step: the same at every call of a
    /// step; `None` without one ([`Brakes::stability_control`]), and while it stays out of
    /// the way.
    pub stability: Option<StabilityDemand>,
}

/// One corner, for a [`SuspensionModule`](super::SuspensionModule).
#[derive(Clone, Copy, Debug)]
pub struct CornerInput<'a> {
    /// The corner's wheel, as an index into [`ModuleContext::wheels`].
    pub wheel: usize,
    /// Deflection: suspension travel from design height (m, compression positive), where
    /// the step moves it: the travel now, [`spring_lead`](crate::spring_lead) ahead by its
    /// rate, and `dt²/12` ahead by its acceleration over the step (see
    /// [`SPRING_STEP_WEIGHT`](crate::SPRING_STEP_WEIGHT)).
    pub deflection: f64,
    /// Deflection rate (m/s, compression positive) at the step's middle: the rate now and
    /// half a step of the travel's acceleration. The force is held over the step, and a
    /// damper evaluated at the step's starting rate lags the motion by half a step, which
    /// stiffened the body's heave by `c·ω²·dt/2` (8 % fast and 7 % overdamped at 30 Hz for a
    /// damping ratio of 0.4).
    pub rate: f64,
    /// The body's mass per wheel that the suspension rings in the body's stiffest mode on its
    /// springs (kg): the body's mass over its number of wheels in heave, less where the body
    /// rolls or pitches faster than it heaves (0.73 of it for the hatchback and the tracked
    /// excavator, which roll faster). What the corner's springs move at the fixed step (see
    /// [`Suspension::force_at_step`]).
    pub mass: f64,
    /// The body's mass per wheel in heave (kg): its mass over its number of wheels. At least
    /// [`mass`](Self::mass); what the part of the rate the body's heave makes moves (see
    /// [`Suspension::force_at_step`]).
    pub heave_mass: f64,
    /// The part of the travel rate the body's heave over the ground makes (m/s, compression
    /// positive) at the step's middle: its centre of mass's velocity along the chassis's up
    /// axis against the ground's under the grounded wheels, half a step on at the acceleration
    /// its weight and the last step's suspension forces give it. The same at every corner.
    pub heave_rate: f64,
    /// The corner's suspension settings (what the built-in uses).
    pub suspension: &'a Suspension,
}

/// One axle, for an [`AntiRollBarModule`](super::AntiRollBarModule).
#[derive(Clone, Copy, Debug)]
pub struct AxleInput {
    /// Axle number (0 = front-most).
    pub axle: u8,
    /// The left and right wheels, as indices into [`ModuleContext::wheels`].
    pub wheels: [usize; 2],
    /// Left and right deflection (m, compression positive), evaluated like
    /// [`CornerInput::deflection`].
    pub deflection: [f64; 2],
    /// Left and right deflection rate (m/s, compression positive).
    pub rate: [f64; 2],
}
