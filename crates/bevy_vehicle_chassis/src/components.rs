//! The chassis's components: what a vehicle and each of its wheels carry.
//!
//! Frames: the chassis frame is the vehicle entity's local frame, Bevy's convention (+X right,
//! +Y up, −Z forward). World vectors are `f32` like Bevy and Rapier; vehicle-dynamics
//! quantities are `f64` like the drivetrain.

use bevy::prelude::*;
use bevy_rapier3d::prelude::ExternalForce;
use bevy_vehicle_drivetrain::prelude::ThrottleEasing;

use crate::error::{ChassisError, each_axis, finite, in_range, non_negative, positive};
use crate::modules::CornerInput;

/// Which side of the vehicle a wheel is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Side {
    /// The vehicle's left (−X).
    #[default]
    Left,
    /// The vehicle's right (+X).
    Right,
}

/// On a wheel block entity: where the wheel is attached to its chassis.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Suspension, GroundProbe, WheelState)]
pub struct WheelMount {
    /// Wheel centre at design ride height (suspension travel 0), in the chassis frame (m,
    /// finite).
    pub position: Vec3,
    /// Axle number, 0 for the front-most axle.
    pub axle: u8,
    /// Side of the vehicle.
    pub side: Side,
    /// Whether the steering turns this wheel.
    pub steered: bool,
    /// Tire width (m, > 0), for the cylinder probe and visuals.
    pub width: f32,
}

impl WheelMount {
    /// Checks the settings: a finite position and a positive width. Field paths start with
    /// `wheel_mount.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        each_axis("wheel_mount.position", self.position, "m", finite)?;
        positive("wheel_mount.width", self.width, "m")
    }
}

impl Default for WheelMount {
    fn default() -> Self {
        WheelMount {
            position: Vec3::ZERO,
            axle: 0,
            side: Side::Left,
            steered: false,
            width: 0.2,
        }
    }
}

/// On a wheel block entity: its suspension, a spring and damper along the chassis's up axis.
///
/// Travel `x` is measured from design ride height, positive in compression, and ranges over
/// `[−extension_limit, compression_limit]`. The spring deflection is `preload + x`, so the
/// spring force is `stiffness·(preload + x)`: set `preload` to the static deflection and the
/// vehicle sits at design height. Within `bump_stop_length` of full compression a bump stop of
/// `bump_stop_stiffness` adds its force. The damper uses `bump_damping` while compressing and
/// `rebound_damping` while extending. The suspension can push the ground but never pull it.
///
/// At full compression the travel stays at `compression_limit`: the spring, bump stop and
/// damper push with what they give there, and nothing rigid stops the wheel going further
/// into the ground (the body's own collider does, once it reaches it). The bump stop stores
/// at most `½·bump_stop_stiffness·bump_stop_length²` besides the spring: give it enough for
/// the hardest landing expected. At low fixed-step rates it is held softer
/// ([`Suspension::force_at_step`]), so a hard landing rebounds less there.
///
/// The corner has no unsprung mass and the tire no vertical stiffness: the wheels' mass is
/// the body's (a [`CarBuilder`](crate::CarBuilder)'s `mass` includes them) and the spring
/// carries the body straight on the ground, so there is no wheel-hop mode, and a road's
/// input reaches the body through the spring and damper alone.
///
/// Its kinematics and compliance steer the wheel (its toe, [`WheelState::toe`]), on top of
/// what the steering gives it: `bump_toe_out` per metre of travel (roll steer, when the body
/// rolls and one side compresses while the other extends) and `compliance_steer` per newton
/// of the tire's lateral force. Both are 0 by default. Its camber leans the wheel: `camber`
/// at design height, and `camber_gain` more per metre of compression; the tire's model turns
/// the wheel's inclination to the ground into camber thrust ([`WheelState::camber`]).
///
/// Every field must be a finite number in the range its documentation gives;
/// [`Suspension::validate`] checks them.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Suspension {
    /// Spring rate at the wheel (N/m, > 0).
    pub stiffness: f64,
    /// Damping while compressing (N·s/m, ≥ 0).
    pub bump_damping: f64,
    /// Damping while extending (N·s/m, ≥ 0).
    pub rebound_damping: f64,
    /// Travel from design height to full compression (m, > 0).
    pub compression_limit: f64,
    /// Travel from design height to full extension (m, ≥ 0).
    pub extension_limit: f64,
    /// Spring deflection at design height (m, ≥ 0): the initial compression.
    pub preload: f64,
    /// Bump-stop rate (N/m, ≥ 0).
    pub bump_stop_stiffness: f64,
    /// Travel before full compression over which the bump stop acts (m, ≥ 0).
    pub bump_stop_length: f64,
    /// Bump steer: the wheel's toe-out per metre of compression (rad/m, any sign; negative
    /// toes in). The front of a wheel that toes out turns away from the vehicle's centreline.
    /// In a turn the body rolls outward, the outer wheel compresses and the inner one extends,
    /// so a positive value steers both wheels of the axle out of the turn by
    /// `bump_toe_out·(x_outer − x_inner)/2`: understeer on a front axle, oversteer on a rear one
    /// (roll steer). Applied from the travel at the step's start.
    pub bump_toe_out: f64,
    /// Lateral force compliance steer: how far the wheel steers away from the ground's lateral
    /// force on its tire, per newton of that force (rad/N, any sign; negative steers towards
    /// it). In a turn the ground pushes the tires towards the turn's centre, so a positive
    /// value steers the axle out of the turn by `compliance_steer·F_y` per wheel: understeer on a
    /// front axle, oversteer on a rear one. Typical passenger-car front axles: 0.1–0.3°/kN,
    /// about 2e-6 to 5e-6 rad/N. Solved with the tire's cornering stiffness, so that it holds
    /// at any step rate (see [`Suspension::compliance_toe`]).
    pub compliance_steer: f64,
    /// Static camber: the wheel's lean at design height, from the body's vertical (rad, any
    /// sign; negative leans its top towards the vehicle's centreline, as alignment sheets
    /// give it; within ±[`MAX_STATIC_CAMBER`]). Negative camber on both sides pushes both
    /// tires of an axle inward, and their camber thrusts cancel.
    pub camber: f64,
    /// Camber gain: the change of camber per metre of compression (rad/m, any sign; negative
    /// leans the top further in as the wheel rises, as unequal-length wishbones do). In a
    /// turn the body rolls by `φ` outward and every wheel leans with it, away from the turn,
    /// which costs cornering force; a negative gain leans the compressed outer wheel back,
    /// by `camber_gain·(x_outer − x_inner)/2`, and `−2/track` (rad/m) keeps both wheels
    /// upright as the body rolls on its springs.
    pub camber_gain: f64,
    /// Caster: how far the steering's kingpin axis leans back from the vertical, its top
    /// towards the rear (rad, within ±[`MAX_CASTER`]; car front axles run 3–8°, 0.05–0.14).
    /// Steering a wheel by `δ` about a leaning kingpin leans it into the turn,
    /// [`Suspension::steer_camber`], and puts the kingpin's foot `radius·tan(caster)` ahead
    /// of the tire's contact, [`Suspension::mechanical_trail`], which adds to the moment the
    /// steering feels ([`VehicleTelemetry::steering_torque`]). The steering angles stay the
    /// road wheels' angles on the ground.
    pub caster: f64,
}

impl Default for Suspension {
    /// A passenger-car corner: 30 kN/m, about 0.3 of critical damping for 350 kg, 0.1 m of
    /// travel each way, no preload.
    fn default() -> Self {
        Suspension {
            stiffness: 30_000.0,
            bump_damping: 2_000.0,
            rebound_damping: 2_400.0,
            compression_limit: 0.1,
            extension_limit: 0.1,
            preload: 0.0,
            bump_stop_stiffness: 300_000.0,
            bump_stop_length: 0.02,
            bump_toe_out: 0.0,
            compliance_steer: 0.0,
            camber: 0.0,
            camber_gain: 0.0,
            caster: 0.0,
        }
    }
}

/// The largest static camber a suspension accepts, either way (rad, about 29°: racing cars
/// run a few degrees).
pub const MAX_STATIC_CAMBER: f64 = 0.5;

/// The largest caster a suspension accepts, either way (rad, about 29°: motorcycles' forks
/// rake 24–30°, cars' kingpins a few degrees).
pub const MAX_CASTER: f64 = 0.5;

/// Largest `ω·dt` the spring and bump stop together may reach on the corner's share of the
/// body over a fixed step (see [`Suspension::force_at_step`]).
pub const SUSPENSION_STEP_LIMIT: f64 = 1.4;

/// The most of a corner's travel rate its damper may take out within one fixed step,
/// `c·dt/m` (`c` the damping in N·s/m, `m` the corner's share of the body in kg, `dt` the
/// step in s; see [`Suspension::force_at_step`]).
pub const MAX_DAMPING_PER_STEP: f64 = 0.75;

impl Suspension {
    /// Checks the settings: every field finite and in its documented range. Field paths start
    /// with `suspension.`, e.g. ``setting `suspension.stiffness` must be greater than 0 (N/m),
    /// got -1``.
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("suspension.stiffness", self.stiffness, "N/m")?;
        non_negative("suspension.bump_damping", self.bump_damping, "N·s/m")?;
        non_negative("suspension.rebound_damping", self.rebound_damping, "N·s/m")?;
        positive("suspension.compression_limit", self.compression_limit, "m")?;
        non_negative("suspension.extension_limit", self.extension_limit, "m")?;
        non_negative("suspension.preload", self.preload, "m")?;
        non_negative(
            "suspension.bump_stop_stiffness",
            self.bump_stop_stiffness,
            "N/m",
        )?;
        non_negative("suspension.bump_stop_length", self.bump_stop_length, "m")?;
        finite("suspension.bump_toe_out", self.bump_toe_out, "rad/m")?;
        finite(
            "suspension.compliance_steer",
            self.compliance_steer,
            "rad/N",
        )?;
        in_range(
            "suspension.camber",
            self.camber,
            -MAX_STATIC_CAMBER,
            MAX_STATIC_CAMBER,
            "rad",
        )?;
        finite("suspension.camber_gain", self.camber_gain, "rad/m")?;
        in_range(
            "suspension.caster",
            self.caster,
            -MAX_CASTER,
            MAX_CASTER,
            "rad",
        )
    }

    /// The lean that `caster` gives a wheel steered by `steer` (rad, positive to the left), as
    /// an inclination (rad, positive when its top leans to the right, as
    /// [`WheelState::camber`] measures it): `asin(−sin(caster)·sin(steer))`, alike on both
    /// sides. Turned about a kingpin whose top leans back, a wheel's axle rises on the side the
    /// wheel turns away from, so both wheels of a steered axle lean into the turn: the outer
    /// one gains negative camber, the inner one positive.
    pub fn steer_camber(&self, steer: f64) -> f64 {
        if self.caster == 0.0 {
            return 0.0;
        }
        (-self.caster.sin() * steer.sin()).clamp(-1.0, 1.0).asin()
    }

    /// How far ahead of the tire's contact the kingpin axis meets the ground on a wheel of
    /// `radius` (m): `radius·tan(caster)` (m, negative behind it). The side force `F_y` on a
    /// tire whose pneumatic trail is `t` turns its wheel about the kingpin by
    /// `−(t + mechanical_trail)·F_y`.
    pub fn mechanical_trail(&self, radius: f64) -> f64 {
        radius * self.caster.tan()
    }

    /// The lean that `camber` and `camber_gain` give the wheel on `side` at travel `x` (m,
    /// compression positive), relative to the body: its inclination angle (rad, positive when
    /// its top leans to the right, as [`WheelState::camber`] measures it): `−(camber +
    /// camber_gain·x)` on the left, `camber + camber_gain·x` on the right.
    pub fn body_camber(&self, side: Side, x: f64) -> f64 {
        let camber = self.camber + self.camber_gain * x;
        match side {
            Side::Left => -camber,
            Side::Right => camber,
        }
    }

    /// The toe that `bump_toe_out` gives the wheel on `side` at travel `x` (m, compression
    /// positive): its steering angle about the chassis up axis (rad, positive to the left).
    pub fn bump_toe(&self, side: Side, x: f64) -> f64 {
        let toe_out = self.bump_toe_out * x;
        match side {
            Side::Left => toe_out,
            Side::Right => -toe_out,
        }
    }

    /// The steering angle (rad, positive to the left) that `compliance_steer` gives a wheel
    /// this step, from the last step's: `previous` (rad), and the lateral force the tire had
    /// with it, `lateral_force` (N, positive to the left), on a tire of cornering stiffness
    /// `cornering_stiffness` (N/rad).
    ///
    /// The angle answers the force, and the force the angle (steering a wheel by `δ` to the
    /// left adds about `C·δ` to its force to the left), so a step that took the last step's
    /// force alone would feed it back with a gain of `compliance_steer·C`, and overshoot or
    /// swing at every step where that gain nears 1 (a truck tire's 0.3 MN/rad with 5e-6 rad/N
    /// reaches 1.5). Solving `δ = −c·(F + C·(δ − δ_previous))` for `δ` instead settles where the
    /// angle and the force agree, at any step rate, on the linear part of the tire's curve.
    /// A negative `compliance_steer` whose gain `c·C` falls below −0.5 acts with a gain of
    /// −0.5 (a wheel steering into its own force that hard would run away).
    ///
    /// ```
    /// # use bevy_vehicle_chassis::prelude::*;
    /// // A truck tire (0.3 MN/rad) pushed 20 kN to the left at no toe, on a compliant axle.
    /// let suspension = Suspension { compliance_steer: 5e-6, ..Default::default() };
    /// let (c, stiffness, force) = (5e-6, 3e5, 2e4);
    /// let toe = suspension.compliance_toe(0.0, force, stiffness);
    /// // Where angle and force agree: δ = −c·(F + C·δ), in one step.
    /// assert!((toe + c * force / (1.0 + c * stiffness)).abs() < 1e-15);
    /// // And it stays there once the force has followed.
    /// let followed = force + stiffness * toe;
    /// assert!((suspension.compliance_toe(toe, followed, stiffness) - toe).abs() < 1e-15);
    /// ```
    pub fn compliance_toe(
        &self,
        previous: f64,
        lateral_force: f64,
        cornering_stiffness: f64,
    ) -> f64 {
        compliance_toe(
            self.compliance_steer,
            previous,
            lateral_force,
            cornering_stiffness,
        )
    }

    /// Suspension force (N, ≥ 0) at travel `x` (m, compression positive) and travel rate
    /// `rate` (m/s, compression positive).
    pub fn force(&self, x: f64, rate: f64) -> f64 {
        self.force_with(x, rate, self.bump_stop_stiffness, self.damping(rate), 0.0)
    }

    /// [`Suspension::force`] at the corner's deflection and rate, held over a fixed step of
    /// `dt` (s) on the body's mass per wheel of its stiffest mode on its springs, heave, roll
    /// or pitch ([`CornerInput::mass`](crate::modules::CornerInput::mass)). The
    /// chassis solves the suspension's force with the body's motion over the step (see
    /// [`SPRING_STEP_WEIGHT`](crate::SPRING_STEP_WEIGHT)), but the tires take their loads as
    /// given over the step, and two parts of the force change faster than that follows:
    /// - the bump stop's stiffness is held down so that spring and bump stop together ring at
    ///   no more than [`SUSPENSION_STEP_LIMIT`] per step (`ω·dt`, `ω² = k/mass`). It is met
    ///   in a jolt, at the travel's end, where the step's motion is least foreseen: a car's
    ///   bump stop (300 kN/m on a corner's 330 kg) rings at `ω·dt` = 2.1 at 15 Hz, and a hard
    ///   landing threw the car back up;
    /// - the damping is held to `c·dt/mass ≤` [`MAX_DAMPING_PER_STEP`]: the damper turns the
    ///   body's rocking into load on the tires, and their grip, held over the step, turns it
    ///   back into rocking. The tracked excavator pivoting at 15 Hz (30 kN·s/m on each road
    ///   wheel, its body rolling on them as on 1.46 t per wheel) rocked at up to 0.1 rad/s
    ///   with all of it, at 0.02 rad/s held to `c·dt/mass ≤ 0.98`, and at 3e-5 rad/s held to
    ///   0.75. The body's heave loads every tire alike and rocks nothing, so the part of the
    ///   rate it makes ([`CornerInput::heave_rate`](crate::modules::CornerInput::heave_rate))
    ///   is held only to the same bound on the heave's mass
    ///   ([`CornerInput::heave_mass`](crate::modules::CornerInput::heave_mass)). Until
    ///   2026-12-04 the whole rate was held on the stiffest mode's mass (roll's, 0.73 of the
    ///   heave's on a car), and a car's heave at a damping ratio of 0.5 on 30 kN/m springs
    ///   rang 14 % underdamped at 15 Hz (1 % now).
    ///
    /// A car's bump stop reaches its bound below about 26 Hz, a car's dampers (1.5–3.5 kN·s/m
    /// on a few hundred kg) theirs only at the lowest rates, the excavator's below 28 Hz (as
    /// the bound before did). The spring itself is never changed (it sets the ride height).
    /// Until 2026-12-03 the spring acted at the step's start, and the damping was held to what
    /// the spring left of a stable explicit step, `(ω·dt)² + 2·(c/mass)·dt ≤ 1.96`: the
    /// default car on 100 kN/m springs lost 81 % of its heave's damping at 15 Hz, and a 700 kg
    /// car on them was still rolling 8 s into a stop from 100 km/h.
    pub fn force_at_step(&self, corner: &CornerInput, dt: f64) -> f64 {
        let (x, rate, mass) = (corner.deflection, corner.rate, corner.mass);
        let mut bump_stop = self.bump_stop_stiffness;
        let full = self.damping(rate);
        let mut damping = full;
        let mut heave = 0.0;
        if dt > 0.0 && mass > 0.0 {
            let budget = SUSPENSION_STEP_LIMIT * SUSPENSION_STEP_LIMIT;
            let stiffest = mass * budget / (dt * dt);
            bump_stop = bump_stop.min((stiffest - self.stiffness).max(0.0));
            damping = full.min(MAX_DAMPING_PER_STEP * mass / dt);
            if damping < full && corner.heave_mass > mass && corner.heave_rate.is_finite() {
                let in_heave = full.min(MAX_DAMPING_PER_STEP * corner.heave_mass / dt);
                heave = (in_heave - damping) * corner.heave_rate;
            }
        }
        self.force_with(x, rate, bump_stop, damping, heave)
    }

    /// The damping at travel rate `rate` (N·s/m): bump while compressing, rebound while
    /// extending.
    fn damping(&self, rate: f64) -> f64 {
        if rate > 0.0 {
            self.bump_damping
        } else {
            self.rebound_damping
        }
    }

    /// [`Suspension::force`] with a bump stop of stiffness `bump_stop` (N/m), a damping of
    /// `damping` (N·s/m) and `added` (N) more damper force.
    fn force_with(&self, x: f64, rate: f64, bump_stop: f64, damping: f64, added: f64) -> f64 {
        let spring = self.stiffness * (self.preload + x);
        let stop_start = self.compression_limit - self.bump_stop_length;
        let bump = if x > stop_start {
            bump_stop * (x - stop_start)
        } else {
            0.0
        };
        (spring + bump + damping * rate + added).max(0.0)
    }
}

/// [`Suspension::compliance_toe`] for a `compliance_steer` of `c` (rad/N).
pub(crate) fn compliance_toe(
    c: f64,
    previous: f64,
    lateral_force: f64,
    cornering_stiffness: f64,
) -> f64 {
    if c == 0.0 {
        return 0.0;
    }
    let gain = (c * cornering_stiffness.max(0.0)).max(-0.5);
    (gain * previous - c * lateral_force) / (1.0 + gain)
}

/// On a wheel block entity: how the wheel finds the ground along its suspension axis.
///
/// It has no numeric settings: the probe's size comes from the wheel's
/// [`Wheel::radius`](bevy_vehicle_drivetrain::blocks::Wheel::radius) and the mount's
/// [`WheelMount::width`], which are checked with the rest of the vehicle.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize,
)]
pub enum GroundProbe {
    /// A cylinder the size of the tire, turned with the wheel (the default): exact on slopes,
    /// kerbs and gaps narrower than the tire.
    #[default]
    Cylinder,
    /// A ball of the tire's radius: cheaper, exact on slopes, narrower than the tire sideways.
    Ball,
    /// A single ray through the wheel centre: cheapest, falls into gaps and misses kerb edges.
    Ray,
}

/// On a wheel block entity: what the chassis found and did at this wheel in the last step.
///
/// Its world positions and directions (`center`, `contact_point`, `normal`, `heading`) are
/// those the ground probe measured at the start of the step, at the vehicle's pose before
/// Rapier moved it: read after the step, they trail the vehicle's `Transform` by that step's
/// move (`v·dt`, 0.46 m at 100 km/h and 60 Hz). The forces were applied at that pose. A
/// debug drawing that places them on the body drawn at its new pose should move them with
/// the body (or draw the body at the pose before the step).
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct WheelState {
    /// Whether the tire touches the ground.
    pub grounded: bool,
    /// Suspension travel from design height (m, compression positive).
    pub travel: f64,
    /// Travel rate (m/s, compression positive).
    pub travel_rate: f64,
    /// Suspension force, anti-roll bar included (N).
    pub suspension_force: f64,
    /// The anti-roll bars' part of `suspension_force` (N).
    pub anti_roll_force: f64,
    /// Normal load on the tire (N).
    pub load: f64,
    /// Steering angle of the wheel about the chassis up axis at the end of the step (rad,
    /// positive to the left): the steering's angle plus `toe`.
    pub steer_angle: f64,
    /// The suspension's part of `steer_angle` this step, from its bump steer and compliance
    /// steer ([`Suspension::bump_toe_out`], [`Suspension::compliance_steer`]) (rad, positive to
    /// the left).
    pub toe: f64,
    /// The tire's inclination to the ground under it (rad, positive when the wheel's top
    /// leans to its right: ISO 8855's inclination angle, which the tire model's camber terms
    /// take): the body's lean on the ground's normal plus the suspension's camber
    /// ([`Suspension::body_camber`]). A car with negative camber leans its left wheel by a
    /// positive angle and its right wheel by a negative one; a body rolled to the right
    /// leans every wheel by a positive angle more. 0 while the wheel is in the air.
    pub camber: f64,
    /// Brake torque capacity the brake module set at the last stage of the step (N·m, ≥ 0);
    /// the brake applies it against the wheel's spin.
    pub brake_torque: f64,
    /// Contact point (world, m).
    pub contact_point: Vec3,
    /// Ground normal at the contact (world, unit).
    pub normal: Vec3,
    /// The wheel's heading along the ground (world, unit): the tire frame's x.
    pub heading: Vec3,
    /// The collider under the wheel.
    pub ground: Option<Entity>,
    /// The dynamic rigid body that carries the collider under the wheel, which takes the
    /// tire's reaction (`None` on fixed or kinematic ground, which no force moves).
    pub ground_body: Option<Entity>,
    /// Velocity of the ground at the contact point (world, m/s): the velocity of the rigid
    /// body, dynamic or kinematic, that carries the collider under the wheel; zero on fixed
    /// ground and while the wheel is in the air.
    pub ground_velocity: Vec3,
    /// Friction coefficient at the contact, combined with Rapier's rule (dimensionless).
    pub friction: f64,
    /// Velocity of the wheel centre relative to the ground, tire frame `[forward, left]` (m/s).
    pub velocity: [f64; 2],
    /// How much a kinematic ground's velocity at the contact changes from the last step to the
    /// coming one, tire frame `[forward, left]` (m/s; zero on fixed and dynamic ground): from
    /// the velocity Rapier moved it at to the one the game gave it (a velocity-based body's
    /// `Velocity`, a position-based root's move to its `Transform`). Rapier moves a kinematic
    /// body at one velocity over a step, so the contact starts the coming step at `velocity −
    /// ground_step`, and the `acceleration` is the vehicle's own.
    pub ground_step: [f64; 2],
    /// Rate of change of `velocity` over the last step, in the tire frame `[forward, left]`
    /// (m/s²; on the first grounded step, gravity's component along the ground: the contact
    /// was falling with the body; on kinematic ground without the ground's own change, see
    /// `ground_step`). In a steady turn it is zero.
    pub acceleration: [f64; 2],
    /// Longitudinal slip ratio (dimensionless): `(ω·r − v)/|v|` along the wheel's heading
    /// (`v`, the forward contact velocity), relaxed; it has the sign of the tire's force along
    /// `heading`. Positive driving forward and braking in reverse, negative braking forward and
    /// driving in reverse: wheelspin shows as `|slip_ratio|` with the sign of the spin.
    pub slip_ratio: f64,
    /// Slip angle (rad, positive when the tire pushes left), relaxed like `slip_ratio`: the
    /// tire's transient slip at the step's end, which lags the contact's kinematic slip over
    /// the tire's relaxation length. `force` is the step's mean, so in a fast transient (a
    /// spinning car) it need not equal the tire curve at these two slips.
    pub slip_angle: f64,
    /// Force of the ground on the tire, normal load included (world, N). Its fore-and-aft
    /// part is `force.dot(heading)`, its side part the part along `normal.cross(heading)`
    /// (to the wheel's left).
    pub force: Vec3,
    /// Wheel centre (world, m).
    pub center: Vec3,
    /// How much of the tire's share of the body's mass a force along `[heading, left]` at the
    /// contact moves, the body's pitch and roll counted and, on a free dynamic ground body
    /// (one that no joint, no friction with what it touches and no tires of its own hold),
    /// that body's give at the contact: `1/(1/f + M·g)` with `f` the
    /// body's own fraction, `M` its mass (kg) and `g` the ground body's mobility there
    /// (m/s per N·s, that is 1/kg: `1/m` and what its turning adds) (dimensionless, (0, 1]; see
    /// [`WheelContact::body_mass_fraction`](bevy_vehicle_drivetrain::blocks::WheelContact::body_mass_fraction)).
    /// Zero while the wheel is in the air.
    pub body_mass_fraction: [f64; 2],
    /// The tire's share of the body's mass (kg): the body's mass in proportion to the tire's
    /// load among the vehicle's tires (see
    /// [`WheelContact::body_mass`](bevy_vehicle_drivetrain::blocks::WheelContact::body_mass)).
    /// Zero while the wheel is in the air.
    pub body_mass: f64,
    /// How far the wheel centre moved over the ground during the last step, in the tire frame
    /// halfway between the last step's and this one's `[forward, left]`, in the heading Rapier
    /// moved the body by (not turned back by its lead,
    /// [`rapier_heading_lead`](crate::rapier_heading_lead)) (m): its displacement since the last
    /// probe, less the ground's own motion under it. `None` while the wheel is in the air, on the
    /// step it touches down, where the centre did not move at all (a body far from the origin
    /// cannot move by less than its `f32` position's precision in a step, and then stands still
    /// whatever its velocity), and where the coordinate its heading runs most along did not change
    /// while that coordinate's precision is coarser than 10 µm (128 m from the origin and beyond).
    /// A held tire's patch, and a standing tire's lateral slip, are anchored to the ground by it
    /// (see
    /// [`WheelContact::displacement`](bevy_vehicle_drivetrain::blocks::WheelContact::displacement)).
    pub displacement: Option<[f64; 2]>,
}

/// On a vehicle entity: brakes, from the driver's pedal, handbrake and parking lock to a brake
/// torque at each wheel.
///
/// `front_bias` is the front axle's share of the total braking; the axles behind it share the
/// rest equally (0.5 on a two-axle car brakes both axles equally; 1/3 on a three-axle truck
/// brakes all three equally). At full pedal the axle with the largest share gets `max_torque`
/// per wheel and the others proportionally less. The handbrake adds up to `handbrake_torque` per wheel on
/// `handbrake_axle`; the parking lock adds `parking_torque` per wheel there once it has
/// engaged: selected ([`VehicleControls::parking`](bevy_vehicle_drivetrain::VehicleControls::parking)),
/// it engages only once that axle's wheels roll slower than `parking_max_speed`, as a
/// parking pawl ratchets over its teeth at speed, and then holds until it is released. With
/// `anti_lock` set, an ABS limits what the pedal applies at each wheel ([`AntiLock`]); the
/// handbrake and the parking lock act in full. With `traction_control` set, the brake
/// system's control unit also runs a traction control ([`TractionControl`]), as road
/// vehicles' ABS units do: it holds back the engines' and motors' torque while a tire spins,
/// and brakes a tire that spins on regardless.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Brakes {
    /// Brake torque per wheel of the more-braked axle at full pedal (N·m, ≥ 0).
    pub max_torque: f64,
    /// Front axle's share of the braking; the other axles share the rest equally
    /// (dimensionless, [0, 1]).
    pub front_bias: f64,
    /// Handbrake torque per wheel at full lever (N·m, ≥ 0).
    pub handbrake_torque: f64,
    /// Axle the handbrake and parking lock act on (0 = front-most).
    pub handbrake_axle: u8,
    /// Parking-lock torque per wheel (N·m, ≥ 0).
    pub parking_torque: f64,
    /// The parking lock engages only once the wheels on `handbrake_axle` roll slower than
    /// this (m/s, ≥ 0), both at their rims (their mean spin times their radius) and over the
    /// ground (their centres' mean speed along the chassis), or either of these changes sign
    /// within a step (the wheels stopped in it); once engaged it holds at any speed until the
    /// driver releases it. Selected at speed, the car rolls on (a parking pawl ratchets over
    /// its teeth) until it has slowed to a walk. The default, 1 m/s (3.6 km/h), is where an
    /// automatic gearbox's pawl engages
    /// ([`AutomaticTransmission::park_max_speed`](bevy_vehicle_drivetrain::blocks::AutomaticTransmission::park_max_speed),
    /// 11 rad/s of its output shaft) through a 3.5:1 final drive on 0.316 m wheels: above the
    /// speed a car creeping down a slope reaches in a step or two, so a lock selected there
    /// holds it (at 0.18 m/s, until 2026-12-02, a car selected P at 0.3 m/s on a 10 % slope
    /// rolled away to 4.6 m/s).
    pub parking_max_speed: f64,
    /// The brake-force distribution, if the vehicle has one (`None`: the axles share the
    /// pedal's torque by `front_bias` alone, and when a stop moves more load forward than the
    /// bias allows for, the rear wheels lock before the front ones and the car can spin).
    /// Every road car has one, a proportioning valve or its electronic successor, so the
    /// default fits it.
    pub distribution: Option<BrakeDistribution>,
    /// The anti-lock brake system, if the vehicle has one (`None`: the pedal's torque reaches
    /// the wheels in full, and a hard stop locks them).
    pub anti_lock: Option<AntiLock>,
    /// The traction control, if the vehicle has one (`None`: the engine's torque reaches the
    /// driven tires in full, and too much of it spins them).
    pub traction_control: Option<TractionControl>,
    /// The electronic stability control, if the vehicle has one (`None`: nothing brakes a
    /// wheel to hold the car's yaw to the driver's steering).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stability_control: Option<StabilityControl>,
}

impl Brakes {
    /// Checks the settings: finite, non-negative torques, a front bias in [0, 1], a valid
    /// [`BrakeDistribution`], [`AntiLock`], traction control and stability control. Field
    /// paths start with `brakes.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        non_negative("brakes.max_torque", self.max_torque, "N·m")?;
        in_range("brakes.front_bias", self.front_bias, 0.0, 1.0, "")?;
        non_negative("brakes.handbrake_torque", self.handbrake_torque, "N·m")?;
        non_negative("brakes.parking_torque", self.parking_torque, "N·m")?;
        non_negative("brakes.parking_max_speed", self.parking_max_speed, "m/s")?;
        if let Some(distribution) = &self.distribution {
            distribution.validate()?;
        }
        if let Some(abs) = &self.anti_lock {
            abs.validate()?;
        }
        if let Some(tc) = &self.traction_control {
            tc.validate()?;
        }
        if let Some(esc) = &self.stability_control {
            esc.validate()?;
        }
        Ok(())
    }
}

/// A brake-force distribution, part of [`Brakes`]: it keeps the wheels behind the front axle
/// from locking before the front ones, as a road car's proportioning valve or electronic
/// brake-force distribution (EBD) does.
///
/// A fixed front bias suits one deceleration: braking harder moves more of the car's weight
/// onto its front tires (`m·a·h/L`, `h` the centre of mass's height and `L` the wheelbase), so
/// beyond it the rear tires are asked for more of their grip than the front ones, lock first,
/// and the car spins. Once per fixed step, at the tires' loads, the distribution measures the
/// share of its peak longitudinal force the pedal asks of the front axle, `u = Σ(T/r) / ΣF_peak`
/// over the front wheels (`T` the pedal's torque, `r` the radius, `F_peak` the tire's peak
/// force at its load on the road under it), and holds each wheel behind the front axle to
/// `max(u, onset)` of its own tire's peak, `T ≤ max(u, onset)·F_peak·r`. Below `onset` of its
/// peak a rear wheel gets the pedal's torque by `front_bias` unchanged, so the bias's closed
/// form holds at moderate pedal; near the limit the rear tires never work harder than the
/// front ones, so the front wheels lock first (or both at once) and the car runs straight.
/// The handbrake, the parking lock and the stability control's braking are not limited, and
/// a vehicle without front brakes (`front_bias` 0, a kart's) keeps its rear brakes whole. With
/// an [`AntiLock`] fitted the ABS then limits each wheel as before (the distribution changes
/// little there: the ABS already keeps each rear tire below its peak).
///
/// Measured in `a_car_without_abs_locks_its_front_wheels_first_at_any_pedal`
/// (`tests/chassis_physics.rs`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrakeDistribution {
    /// Share of a rear tire's peak longitudinal force up to which its brake gets the pedal's
    /// torque unchanged (dimensionless, [0, 1]): beyond it the rear brakes are held to the
    /// share the pedal asks of the front tires.
    pub onset: f64,
}

impl BrakeDistribution {
    /// Checks the settings. Field paths start with `brakes.distribution.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        in_range("brakes.distribution.onset", self.onset, 0.0, 1.0, "")
    }
}

impl Default for BrakeDistribution {
    /// Leaves the rear brakes alone up to 80 % of their tires' peak.
    fn default() -> Self {
        BrakeDistribution { onset: 0.8 }
    }
}

/// An electronic stability control (ESC), part of [`Brakes`]: it brakes single wheels so
/// that the car yaws as its driver steers, and no faster than the road allows.
///
/// Once per fixed step, driving forward above `min_speed` (it stays off in reverse, where a
/// braked wheel turns the car the other way), it compares the body's yaw rate `r` with the rate
/// the driver asks for: the steady turn of the linear bicycle model at the front wheels' mean
/// angle `δ` and the forward speed `v`, `r_ref = v·δ/(L + K·v²)` (`L` the wheelbase, `K` the
/// `understeer_gradient`), held within what the road's friction gives,
/// `|r_ref| ≤ s·μ·g/|v|` (`μ` the tires' peak force over their load, `s`
/// [`StabilityControl::FRICTION_SHARE`]). Beyond
/// `yaw_rate_deadband` it asks for a yaw moment `gain·(r_ref − r)` (less the deadband) and
/// brakes one wheel for it, on the side the moment turns the car to: the front wheel when the
/// car yaws faster than asked (oversteer: the outer front), the rear wheel when slower
/// (understeer: the inner rear). A car can slide at the yaw rate it is asked for, its
/// velocity turning away from its nose: beyond `sideslip_limit` of body slip angle `β` the
/// error also counts `sideslip_gain·(β ∓ sideslip_limit)`, which asks the nose back towards
/// the velocity ([`StabilityControl::sideslip_correction`]; the standard's ESC estimates its
/// side slip too). A braking force `F` at a wheel half the track `t` from the
/// centre line gives the yaw moment `F·t/2`; the wheel's brake torque for it is `F·radius`,
/// at most [`Brakes::max_torque`] with the pedal's, and with an [`AntiLock`] fitted the ABS
/// limits it as it limits the pedal's. Under hard braking that wheel's tire may have nothing
/// left to give: what it cannot take, the brake across the axle releases (a braking force
/// `F` less on the other side yaws the car alike), and the ABS's select-low leaves that axle
/// to the control ([`apply_stability_demand`](crate::modules::apply_stability_demand)). The
/// demand is decided once per step and handed to every module as
/// [`ModuleContext::stability`](crate::modules::ModuleContext::stability): the built-in
/// brakes apply it; a brake module of your own applies it if it is to keep the control's
/// braking.
///
/// It also takes drive away, as the safety standard's definition of an ESC asks ("a means to
/// modify engine torque"): the engines and motors deliver `1 − cut` of what the driver asks,
/// the cut growing from 0 at the deadband to all at `drive_cut_band` beyond it
/// ([`StabilityControl::drive_cut`]), for this step, joining the traction control's and the
/// speed limiter's (the least share wins); [`VehicleTelemetry::stability_cut`] reports it.
/// A car floored into a slide, or pushed wide by its driven front tires, slows instead.
///
/// Measured with the sine-with-dwell manoeuvre of the US safety standard FMVSS No. 126
/// (`stability_control_passes_the_sine_with_dwell_test` in `tests/chassis_physics.rs`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StabilityControl {
    /// Understeer gradient of the yaw-rate reference (rad/(m/s²), ≥ 0): 0 asks for a neutral
    /// car's yaw rate.
    pub understeer_gradient: f64,
    /// Yaw-rate error the control leaves alone (rad/s, ≥ 0).
    pub yaw_rate_deadband: f64,
    /// Yaw moment asked per rad/s of yaw-rate error beyond the deadband (N·m·s, ≥ 0).
    pub gain: f64,
    /// Forward speed below which the control stays out of the way, and in reverse (m/s, ≥ 0).
    pub min_speed: f64,
    /// Yaw-rate error beyond the deadband at which the control has taken all the drive
    /// (rad/s, ≥ 0): the share taken grows in proportion up to it. 0 leaves the drive alone.
    pub drive_cut_band: f64,
    /// Body slip angle the control leaves alone (rad, ≥ 0).
    pub sideslip_limit: f64,
    /// Yaw rate asked per radian of body slip angle beyond `sideslip_limit` (1/s, ≥ 0): 0
    /// watches the yaw rate alone.
    pub sideslip_gain: f64,
}

impl StabilityControl {
    /// Share of the road's friction the yaw-rate reference may ask of the tires
    /// (dimensionless): a steady turn at `|r|·|v|` of `μ·g` leaves them nothing to brake or
    /// steer with.
    pub const FRICTION_SHARE: f64 = 0.85;

    /// Checks the settings: finite and non-negative. Field paths start with
    /// `brakes.stability_control.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        let fields = [
            (
                "understeer_gradient",
                self.understeer_gradient,
                "rad/(m/s²)",
            ),
            ("yaw_rate_deadband", self.yaw_rate_deadband, "rad/s"),
            ("gain", self.gain, "N·m·s"),
            ("min_speed", self.min_speed, "m/s"),
            ("drive_cut_band", self.drive_cut_band, "rad/s"),
            ("sideslip_limit", self.sideslip_limit, "rad"),
            ("sideslip_gain", self.sideslip_gain, "1/s"),
        ];
        for (name, value, unit) in fields {
            non_negative(&format!("brakes.stability_control.{name}"), value, unit)?;
        }
        Ok(())
    }

    /// The yaw rate (rad/s, positive turning left) the driver asks for at forward speed
    /// `speed` (m/s) with the front wheels' mean angle `steer` (rad, positive left), on a
    /// wheelbase `wheelbase` (m) and a road whose tires peak at `mu` times their load.
    pub fn reference_yaw_rate(&self, speed: f64, steer: f64, wheelbase: f64, mu: f64) -> f64 {
        let free = speed * steer / (wheelbase + self.understeer_gradient * speed * speed);
        let limit = Self::FRICTION_SHARE * mu.max(0.0) * crate::GRAVITY / speed.abs().max(1e-3);
        free.clamp(-limit, limit)
    }

    /// The yaw rate (rad/s, positive turning left) added to the control's error at body slip
    /// angle `beta` (rad, positive when the velocity points to the left of the nose):
    /// `sideslip_gain·(β − clamp(β, ±sideslip_limit))`, which turns the nose towards the
    /// velocity; 0 within the limit.
    pub fn sideslip_correction(&self, beta: f64) -> f64 {
        let limit = self.sideslip_limit.max(0.0);
        self.sideslip_gain * (beta - beta.clamp(-limit, limit))
    }

    /// The share of the drive the control takes away (0..1) when the yaw-rate error lies
    /// `excess` (rad/s) beyond the deadband: `excess / drive_cut_band`, at most 1; 0 without
    /// a band or an excess.
    pub fn drive_cut(&self, excess: f64) -> f64 {
        if self.drive_cut_band > 0.0 && excess > 0.0 {
            (excess / self.drive_cut_band).min(1.0)
        } else {
            0.0
        }
    }
}

impl Default for StabilityControl {
    /// A neutral reference, a 0.05 rad/s deadband, 20 kN·m of yaw moment per rad/s beyond
    /// it (a car's yaw inertia of about 2 000 kg·m² brought to the asked rate with a time
    /// constant `I/gain` of 0.1 s, as far as its brakes and tires give it), all the drive
    /// taken 0.1 rad/s beyond it, body slip angles beyond 0.1 rad (5.7°) counted at 2 rad/s
    /// per rad, active above 5 m/s.
    fn default() -> Self {
        StabilityControl {
            understeer_gradient: 0.0,
            yaw_rate_deadband: 0.05,
            gain: 20_000.0,
            min_speed: 5.0,
            drive_cut_band: 0.1,
            sideslip_limit: 0.1,
            sideslip_gain: 2.0,
        }
    }
}

/// An anti-lock brake system (ABS), part of [`Brakes`]: it keeps each braked tire working
/// just below its friction peak, so the car stops about as short as the road allows and
/// still steers.
///
/// At the start of every drivetrain substep, at each wheel, the pedal's torque is limited to
/// `peak_share` of what the
/// tire can pass at its load on this road (its peak longitudinal force times the wheel's
/// radius, [`ModuleContext::peak_force`](crate::modules::ModuleContext::peak_force)), plus
/// what the wheel's own inertia takes to slow with the car (its moment of inertia times the
/// deceleration of its centre over the last step, over its radius): an ideal ABS, which finds the peak as a real one does by cycling its valves, without the
/// cycles. Where the tire has less to give than that (it is also cornering hard, or the road
/// changed), the wheel's slip grows: past `release_slip` the ABS lowers that wheel's limit,
/// all the way to nothing at twice that slip, so that the wheel settles where its tire holds
/// and keeps some of its cornering force. The limit follows the slip with the lag
/// [`ANTI_LOCK_RELEASE`] going down and [`ANTI_LOCK_REAPPLY`] coming back: a continuous rule,
/// not an on-off cycle, so it acts the same at any fixed-step rate. Below `min_speed` it stays
/// out of the way, so the car stops and holds on the pedal.
///
/// It decides every substep (at most 1/240 s apart at the default
/// [`Drivetrain::max_substep`](bevy_vehicle_drivetrain::Drivetrain::max_substep)), at the
/// wheel spins there, not once per fixed step: a 30 Hz step is as long as the release lag,
/// and deciding once per step the default car braked in a turn turned its course 5.7 % (dry),
/// 3.8 % (snow) and 4.3 % (ice) farther at 30 Hz than at 240 Hz; per substep 1.4 %, 0.6 % and
/// 0.0 %.
///
/// Assumes each wheel runs near the chassis's forward axis (its braking slip is measured
/// against the ground speed along that axis at the wheel, taken at the start of the step and
/// carried on at the rate it changed over the last step), as on road vehicles at speed.
///
/// A tire's peak slip falls with the road's friction (on ice to about a tenth of its dry-road
/// value), so the release slip shrinks with it: `release_slip` holds for a tire that peaks at
/// [`AntiLock::DRY_PEAK_SLIP`] or beyond (a passenger tire on a dry road), and on a slipperier
/// road it is scaled by the tire's peak slip over that ([`AntiLock::release_slip_at`]): a
/// passenger tire is let go at 1.5 times its peak slip on ice, a truck tire (0.2 on a dry
/// road) at twice it. With a fixed release slip a wheel braked in a turn on ice slid to 19
/// times its peak slip before it was let go, and kept little of its cornering force: the
/// default car braking from 25 km/h in a left turn on μ 0.1 changed course by 0.15 rad, now
/// 0.33 rad, its wheels within 2.3 times their peak slip. (An earlier try measured the
/// release slip in units of the peak slip on every road, the dry one included, and the
/// once-per-step rule then answered differently at 30 Hz in the dry turn.)
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AntiLock {
    /// Share of each tire's peak longitudinal force the pedal may ask of it (dimensionless,
    /// (0, 1]): 0.9–0.97 for road cars' systems.
    pub peak_share: f64,
    /// Braking slip past which the ABS releases a wheel on a dry road (dimensionless, > 0; 0
    /// for a wheel rolling with the ground, 1 for a locked one): about the tire's peak-force
    /// slip there, past which its force falls and the wheel would lock. Scaled down on
    /// slipperier roads: see [`AntiLock::release_slip_at`].
    pub release_slip: f64,
    /// Speed over the ground below which the ABS is off (m/s, ≥ 0).
    pub min_speed: f64,
    /// Whether the two wheels of every axle behind the front one get the same brake torque,
    /// the lower of what the ABS grants each ("select low", as road cars' ABS does on the
    /// rear axle): on a road whose two sides grip differently, the rear tires then keep their
    /// side grip and the car its heading. Each front wheel is controlled on its own.
    pub select_low_rear: bool,
}

/// Time constant with which [`AntiLock`] lets a locking wheel's brake go (s): a dump valve
/// halves the pressure in a few hundredths of a second.
pub const ANTI_LOCK_RELEASE: f64 = 0.03;
/// Time constant with which [`AntiLock`] builds a limited wheel's brake up again (s).
pub const ANTI_LOCK_REAPPLY: f64 = 0.05;

impl AntiLock {
    /// Checks the settings. Field paths start with `brakes.anti_lock.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("brakes.anti_lock.peak_share", self.peak_share, "")?;
        in_range("brakes.anti_lock.peak_share", self.peak_share, 0.0, 1.0, "")?;
        positive("brakes.anti_lock.release_slip", self.release_slip, "")?;
        non_negative("brakes.anti_lock.min_speed", self.min_speed, "m/s")
    }

    /// The peak slip ratio (dimensionless) from which `release_slip` applies as it is: about a
    /// passenger tire's on a dry road.
    pub const DRY_PEAK_SLIP: f64 = 0.1;

    /// The braking slip (dimensionless) past which the ABS releases a wheel whose tire peaks at
    /// slip ratio `peak_slip` on the road under it: `release_slip · min(1, peak_slip /
    /// DRY_PEAK_SLIP)`. A peak slip that is not a positive number (no tire data yet) counts as
    /// a dry road's.
    pub fn release_slip_at(&self, peak_slip: f64) -> f64 {
        if peak_slip > 0.0 && peak_slip < AntiLock::DRY_PEAK_SLIP {
            self.release_slip * peak_slip / AntiLock::DRY_PEAK_SLIP
        } else {
            self.release_slip
        }
    }
}

impl Default for AntiLock {
    /// A road car's ABS: 95 % of the peak, releasing past a braking slip of 0.15, off below
    /// 1.5 m/s, the rear axles' wheels selecting low.
    fn default() -> Self {
        AntiLock {
            peak_share: 0.95,
            release_slip: 0.15,
            min_speed: 1.5,
            select_low_rear: true,
        }
    }
}

/// A traction control (ASR), part of [`Brakes`]: it holds back the drive while a driven tire
/// spins, so that the tires work near their friction peak instead of past it.
///
/// At every RK4 stage of the drivetrain, the largest slip ratio of the grounded tires in the
/// direction the selected gear drives, measured in units of each tire's peak-force slip at
/// its load on the road under it
/// ([`WheelRuntime::peak_slip`](bevy_vehicle_drivetrain::prelude::WheelRuntime::peak_slip)),
/// sets the share of the driver's demand that the vehicle's engines (their throttle, never
/// below idle) and motors (their command) act on
/// ([`StageContext::drive_limit`](bevy_vehicle_drivetrain::StageContext::drive_limit)): all
/// of it up to `slip`, falling linearly to `floor` at `slip + band`. It acts within the step,
/// on the tires' relaxed slips, as an engine controller cutting ignition acts within
/// milliseconds: a rule applied once per step would let an engine spin its tires far past
/// their peak before it answered, and answer differently at each step rate. Brakes, the
/// pedal and an automatic's shift schedule are left alone.
///
/// The thresholds are relative because the peak moves with the road: a tire's slip
/// stiffness does not change with friction, so its force peaks at a slip about proportional
/// to the friction (0.1 on dry asphalt, 0.01 on ice for a passenger tire). Fixed slip
/// thresholds that suit dry asphalt let a tire on ice spin to ten times its peak slip, where
/// it passes barely half its peak force (a hatchback floored on ice reached 9 km/h in 11 s,
/// against 24 km/h at its front tires' friction limit).
///
/// It looks `lead` seconds ahead: the slip it acts on is `κ + lead·dκ/dt`, the slip's rate
/// taken from the wheel's spin over the road at the stage. Behind a slipping clutch or torque
/// converter the wheels get what follows the engine's *speed* (the clutch's capacity, the
/// converter's `K·ω²`), which answers a cut only once the engine has slowed: acting on the
/// slip alone, the control then overshoots both ways, and a launch judders (a hatchback's
/// front tires swung between −0.2 and 3.5 kN at 10 Hz for most of a second). The lead
/// answers a slip while it is still growing.
///
/// On a slippery road the look-ahead is shortened: measured in units of a small peak slip, its
/// gain on the wheel's spin grows as the road gets slippery, and behind a light, strong
/// electric motor on ice it outran the drivetrain's 1/240 s substep (the control swung from
/// stage to stage, and the launch differed by 11 % between 30 and 120 Hz). Shortened in
/// proportion to the peak slip, it answered alike at every rate (0.4 % apart) but let an
/// automatic clutch and the control pump each other on ice instead (the runner's hatchback
/// reached 20.5 km/h in 11 s, its tractor unit 1.4, where their driven tires allow about 23 and
/// 12). Below a peak slip of [`TractionControl::LEAD_PEAK_SLIP`] it is shortened by the square
/// root of the ratio, a measured compromise: the electric car's launch on ice within 4.3 %
/// across 30–240 Hz (1.3 % since the change below), the hatchback at 22.5 km/h.
///
/// The control reads the tire's relaxed slip, which at a crawl lags the wheel. A tire that had
/// spun far past its peak used to keep that excess for seconds, and the control went on
/// cutting the drive of wheels that already turned no faster than the road: the tractor unit
/// floored on ice crept to 2.2–3.1 km/h in 11 s. Since the slip past a tire's peak unwinds
/// over a relaxation length shortened in proportion to `(peak / slip)²` (the patch slides
/// there and stores little more than its peak deflection), it reaches first gear's 7.9 km/h at
/// 30, 60 and 120 Hz, its tandem at 0.89–0.90 of its tires' peak force. The look-ahead takes
/// the slip's rate at that shortened length too: a tire sliding back toward its peak is then
/// seen to, and the electric car's launch on ice agrees across the rates within 1.3 %.
///
/// A tire that spins on past `slip + band`, where the drive is gone, is braked
/// ([`TractionControl::brake_torque`]): on ice an engine's idle torque behind a torque
/// converter, or a low gear, is enough to spin the tires, and cutting the throttle cannot go
/// below idle.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TractionControl {
    /// Slip from which the drive is held back, in units of the tire's peak-force slip
    /// (dimensionless, > 0; 1 = at the peak).
    pub slip: f64,
    /// How far above `slip` the drive is down to `floor`, in units of the tire's peak-force
    /// slip (dimensionless, > 0).
    pub band: f64,
    /// Least share of the drive left (dimensionless, 0..1).
    pub floor: f64,
    /// How far ahead the control looks (s, 0..0.1): it acts on `κ + lead·dκ/dt`.
    pub lead: f64,
}

impl TractionControl {
    /// Checks the settings. Field paths start with `brakes.traction_control.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("brakes.traction_control.slip", self.slip, "")?;
        positive("brakes.traction_control.band", self.band, "")?;
        in_range("brakes.traction_control.floor", self.floor, 0.0, 1.0, "")?;
        in_range("brakes.traction_control.lead", self.lead, 0.0, 0.1, "s")
    }

    /// The peak slip ratio (dimensionless) down to which the control looks the whole `lead`
    /// ahead: about a passenger tire's on a dry road. See [`TractionControl::relative_slip`].
    pub const LEAD_PEAK_SLIP: f64 = 0.1;

    /// While the control cuts the drive (it did in the last step), the vehicle's drivetrain
    /// takes substeps at most this share of its longest
    /// ([`Drivetrain::max_substep`](bevy_vehicle_drivetrain::Drivetrain::max_substep);
    /// dimensionless).
    ///
    /// On a slippery road the drive falls from all to `floor` over `band` of a small peak
    /// slip: a loop around the driven wheels stiffer than RK4 follows at the default 1/240 s
    /// substep. Launching the electric test car on ice, the cut swung between none and all from
    /// one step to the next wherever the fixed step ran at 1/240 s substeps and the tire was not
    /// softened by its body floor (40 to 72 Hz): its slip reached 0.026 at 60 Hz against
    /// 0.020 at 30, 120 and 240 Hz, and it pulled 2.4 % less. At half the substep it holds
    /// steady at every rate (0.3632 to 0.3641 m/s² at 30 to 240 Hz). The cost is the extra
    /// substeps, only while the control acts.
    pub const SUBSTEP_SHARE: f64 = 0.5;

    /// The slip the control acts on, in units of the tire's peak-force slip (dimensionless):
    /// `(slip + lead'·rate) / peak` for a tire at slip ratio `slip` whose slip moves at `rate`
    /// (1/s), both in the direction of drive, and whose force peaks at slip ratio `peak`, where
    /// `lead' = lead·√min(1, peak / LEAD_PEAK_SLIP)` (see the type's docs). A tire with no peak
    /// (`peak` 0: a frictionless road) counts as past any threshold while it spins forward;
    /// one that never slides (`peak` infinite) as at none.
    pub fn relative_slip(&self, slip: f64, rate: f64, peak: f64) -> f64 {
        let lead = self.lead * (peak / TractionControl::LEAD_PEAK_SLIP).min(1.0).sqrt();
        let ahead = slip + lead * rate;
        if peak > 0.0 {
            ahead / peak
        } else if ahead > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }

    /// The brake torque (N·m, ≥ 0) the control puts on a wheel of radius `radius` (m) whose
    /// tire, with peak longitudinal force `peak_force` (N), spins at relative slip `relative`
    /// ([`TractionControl::relative_slip`]): none up to `slip + band`, where the drive is
    /// already cut to `floor`, then the tire's peak force times the radius for every further
    /// `band`, up to `max_torque` (N·m, the wheel's brake). It catches what cutting the drive
    /// cannot: an engine's idle torque behind a torque converter or a low gear spinning the
    /// tires on ice, or one tire spinning on a slippery patch while the other, on grip, holds
    /// the car (an open differential sends both the same torque, so braking the spinning one
    /// drives the other).
    pub fn brake_torque(
        &self,
        relative: f64,
        peak_force: f64,
        radius: f64,
        max_torque: f64,
    ) -> f64 {
        let over = (relative - self.slip - self.band) / self.band;
        if over > 0.0 {
            (over * peak_force.max(0.0) * radius.max(0.0)).min(max_torque.max(0.0))
        } else {
            0.0
        }
    }

    /// The share of the driver's demand the engines and motors act on (0..1) when the largest
    /// relative slip of the driven tires ([`TractionControl::relative_slip`]) is `slip`: the
    /// [`ThrottleEasing`] rule's target for a full demand, applied without its lag.
    pub fn drive_limit(&self, slip: f64) -> f64 {
        ThrottleEasing {
            slip: self.slip,
            band: self.band,
            floor: self.floor,
            time_constant: 0.0,
        }
        .target(1.0, slip)
    }
}

impl Default for TractionControl {
    /// A road car's: holding back from 0.8 of the tires' peak slip, down to nothing at 1.6 of
    /// it (where a passenger tire still passes over 90 % of its peak force), looking 0.02 s
    /// ahead.
    fn default() -> Self {
        TractionControl {
            slip: 0.8,
            band: 0.8,
            floor: 0.0,
            lead: 0.02,
        }
    }
}

impl Default for Brakes {
    /// A passenger car: 1500 N·m per front wheel, 70 % front bias with the default
    /// [`BrakeDistribution`] (the rear wheels lock after the front ones under hard braking),
    /// 1200 N·m handbrake and a 10 kN·m parking lock on the rear axle, which engages below
    /// 1 m/s; no ABS.
    fn default() -> Self {
        Brakes {
            max_torque: 1_500.0,
            front_bias: 0.7,
            handbrake_torque: 1_200.0,
            handbrake_axle: 1,
            parking_torque: 10_000.0,
            parking_max_speed: 1.0,
            distribution: Some(BrakeDistribution::default()),
            anti_lock: None,
            traction_control: None,
            stability_control: None,
        }
    }
}

/// On a vehicle entity: steering, from the driver's wheel to road-wheel angles.
///
/// The steered wheels follow Ackermann geometry computed from the wheelbase (steered axle to the
/// mean of the unsteered axles) and the steered axle's track: the inside wheel turns
/// `|steering|·max_angle` and the outside wheel less, so both roll about one centre on the
/// rear axle's line. `ackermann` blends from parallel steering (0) to full Ackermann (1). The
/// driver's input reaches the wheels at most at `max_rate` per second.
#[derive(Component, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Steering {
    /// Road-wheel angle of the inside wheel at full lock (rad, > 0 and < π/2).
    pub max_angle: f64,
    /// Fastest change of the steering input (1/s, > 0): 2 means centre to full lock in 0.5 s.
    pub max_rate: f64,
    /// Ackermann fraction (dimensionless, [0, 1]).
    pub ackermann: f64,
    /// Rack travel from centre to full lock (m, ≥ 0): reported as
    /// [`VehicleTelemetry::rack_travel`].
    pub rack_travel: f64,
}

impl Steering {
    /// Checks the settings: a full-lock angle in (0, π/2), a positive rate and an Ackermann
    /// fraction in [0, 1]. Field paths start with `steering.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        finite("steering.max_angle", self.max_angle, "rad")?;
        if !(self.max_angle > 0.0 && self.max_angle < core::f64::consts::FRAC_PI_2) {
            return Err(ChassisError::new(
                "steering.max_angle",
                format!("must lie in (0, π/2) (rad), got {}", self.max_angle),
            ));
        }
        positive("steering.max_rate", self.max_rate, "1/s")?;
        in_range("steering.ackermann", self.ackermann, 0.0, 1.0, "")?;
        non_negative("steering.rack_travel", self.rack_travel, "m")
    }
}

impl Default for Steering {
    /// 35° at full lock, centre to lock in 0.4 s, full Ackermann, 75 mm of rack travel each
    /// way.
    fn default() -> Self {
        Steering {
            max_angle: 35f64.to_radians(),
            max_rate: 2.5,
            ackermann: 1.0,
            rack_travel: 0.075,
        }
    }
}

/// On a vehicle entity: anti-roll bars, one per axle listed.
///
/// A bar of stiffness `k` on an axle adds `k·(x_left − x_right)` to the left wheel's load and
/// takes it from the right, where `x` is each side's suspension travel.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct AntiRollBars(pub Vec<AntiRollBar>);

impl AntiRollBars {
    /// Checks every bar's stiffness (finite, ≥ 0). Field paths are
    /// `anti_roll_bars[i].stiffness`, `i` counting the bars in the list.
    pub fn validate(&self) -> Result<(), ChassisError> {
        for (i, bar) in self.0.iter().enumerate() {
            non_negative(
                &format!("anti_roll_bars[{i}].stiffness"),
                bar.stiffness,
                "N/m",
            )?;
        }
        Ok(())
    }
}

/// One anti-roll bar.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AntiRollBar {
    /// Axle number (0 = front-most).
    pub axle: u8,
    /// Roll stiffness at the wheels (N/m, ≥ 0).
    pub stiffness: f64,
}

/// On a vehicle entity: a game's own steady force and torque on the chassis body (wind, a
/// booster, a tow rope), added to the wheel and drag forces every fixed step.
///
/// The chassis writes the body's Rapier [`ExternalForce`](bevy_rapier3d::prelude::ExternalForce)
/// afresh every step, so a force written there by a game lasts one step at most; this
/// component holds like `ExternalForce` does, until changed or removed. For a one-off push,
/// use the body's `ExternalImpulse`. A vehicle whose settings are refused
/// ([`ChassisStatus`](crate::ChassisStatus)) takes no force, this one included. A non-finite
/// force or torque is left out.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct AddedForce {
    /// Force through the centre of mass (N, world frame).
    pub force: Vec3,
    /// Torque about the centre of mass (N·m, world frame).
    pub torque: Vec3,
}

impl AddedForce {
    /// `force` (N, world frame) acting at `point` (m, world frame) on a body whose centre of
    /// mass is at `center_of_mass` (m, world frame): the force and its moment about the
    /// centre of mass.
    pub fn at_point(force: Vec3, point: Vec3, center_of_mass: Vec3) -> Self {
        let ExternalForce { force, torque } = ExternalForce::at_point(force, point, center_of_mass);
        Self { force, torque }
    }
}

/// On a vehicle entity: aerodynamic drag and lift.
///
/// - Drag, `F = −½·ρ·CdA·|v|·v`, acts at the centre of mass.
/// - Lift, `½·ρ·C_L·A·v_x²` along the body's up axis (`v_x` the speed along its forward
///   axis, either way), acts at the centre of pressure: a negative `lift_area` is downforce.
///   A wing's lift is a pair of axle coefficients in most data (`C_L,f`, `C_L,r`, each on
///   the reference area `A`): `lift_area = (C_L,f + C_L,r)·A`, and the centre of pressure's
///   `z` is `(C_L,f·z_f + C_L,r·z_r)/(C_L,f + C_L,r)` (`z_f`, `z_r` the axles' positions).
#[derive(Component, Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Aerodynamics {
    /// Drag coefficient × frontal area (m², ≥ 0).
    pub drag_area: f64,
    /// Air density (kg/m³, ≥ 0).
    pub air_density: f64,
    /// Lift coefficient × reference area, `C_L·A` (m², within ±[`MAX_LIFT_AREA`]): positive
    /// lifts the body, negative presses it onto its wheels (downforce). 0 (the default) leaves
    /// the wheels' loads to the body's weight.
    #[serde(skip_serializing_if = "is_zero")]
    pub lift_area: f64,
    /// Where the lift acts, in the chassis frame (m, each coordinate within
    /// ±[`MAX_PRESSURE_CENTER`]; the frame of `center_of_mass`): its centre of pressure.
    /// `None` (the default) is the centre of mass, so the lift adds to or takes from each
    /// axle in proportion to its static load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub center_of_pressure: Option<[f32; 3]>,
}

/// The largest lift or downforce area a vehicle may have (m²): real vehicles' `C_L·A` is a
/// few square metres at most, even on race cars with wings. A larger one, left to act at a
/// crawl, held a car in the ground or threw it up at hundreds of metres per second.
pub const MAX_LIFT_AREA: f64 = 20.0;

/// How far from the chassis origin a centre of pressure may lie (m, on each axis).
pub const MAX_PRESSURE_CENTER: f64 = 100.0;

/// Whether a setting is 0 (serde: settings left at 0 are not written).
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl Aerodynamics {
    /// Checks the settings: finite, drag area and air density non-negative. Field paths start
    /// with `aerodynamics.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        non_negative("aerodynamics.drag_area", self.drag_area, "m²")?;
        non_negative("aerodynamics.air_density", self.air_density, "kg/m³")?;
        in_range(
            "aerodynamics.lift_area",
            self.lift_area,
            -MAX_LIFT_AREA,
            MAX_LIFT_AREA,
            "m²",
        )?;
        if let Some(point) = self.center_of_pressure {
            for (i, v) in point.into_iter().enumerate() {
                let field = format!("aerodynamics.center_of_pressure[{i}]");
                let limit = MAX_PRESSURE_CENTER;
                in_range(&field, v, -limit, limit, "m")?;
            }
        }
        Ok(())
    }

    /// The lift (N, along the body's up axis; negative presses down) at the speed `forward`
    /// (m/s) along the body's forward axis: `½·ρ·C_L·A·v_x²`.
    pub fn lift(&self, forward: f64) -> f64 {
        0.5 * self.air_density * self.lift_area * forward * forward
    }
}

impl Default for Aerodynamics {
    /// A hatchback: Cd·A = 0.65 m², sea-level air, no lift.
    fn default() -> Self {
        Aerodynamics {
            drag_area: 0.65,
            air_density: 1.225,
            lift_area: 0.0,
            center_of_pressure: None,
        }
    }
}

/// On a vehicle entity: a speed limiter (a governor, as road vehicles' engine controllers
/// have), which holds back the drive as the vehicle nears `max_speed`, forward or in reverse.
///
/// Once per fixed step, at the speed along the chassis's forward axis `v`, the engines'
/// throttle (never below idle) and the motors' command are scaled by
/// `clamp((max_speed − |v|) / band, 0, 1)`, together with the traction control's share (the
/// smaller of the two acts). Like a governor it has a droop: the vehicle settles where the
/// drive it is left balances its drag, within `band` below `max_speed`; it does not brake, so a
/// vehicle rolling downhill may pass it.
#[derive(Component, Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpeedLimiter {
    /// Speed at which the drive is cut to nothing (m/s, > 0).
    pub max_speed: f64,
    /// Speed below `max_speed` over which the drive is faded out (m/s, > 0).
    pub band: f64,
}

impl SpeedLimiter {
    /// Checks the settings: finite and positive. Field paths start with `speed_limiter.`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("speed_limiter.max_speed", self.max_speed, "m/s")?;
        positive("speed_limiter.band", self.band, "m/s")
    }

    /// The share of the drive (dimensionless, [0, 1]) the limiter leaves at forward speed
    /// `speed` (m/s).
    pub fn drive_share(&self, speed: f64) -> f64 {
        let share = (self.max_speed - speed.abs()) / self.band;
        if share.is_nan() {
            1.0
        } else {
            share.clamp(0.0, 1.0)
        }
    }
}

impl Default for SpeedLimiter {
    /// 250 km/h (69.4 m/s), where German makers limit their fast cars, faded over the last
    /// 0.25 m/s (0.9 km/h).
    fn default() -> Self {
        SpeedLimiter {
            max_speed: 250.0 / 3.6,
            band: 0.25,
        }
    }
}

/// On a vehicle entity: what the vehicle reports after each fixed step.
///
/// Written in [`VehicleSystems::Telemetry`](crate::VehicleSystems::Telemetry), after Rapier's
/// step: a velocity or pose a game sets between steps (a flying start, a teleport) shows here
/// only after the next step. Rapier's `Velocity` and the `Transform` hold the values set.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct VehicleTelemetry {
    /// Speed along the chassis's forward axis (m/s, negative when reversing).
    pub forward_speed: f64,
    /// Speed along the chassis's right axis (m/s).
    pub lateral_speed: f64,
    /// Yaw rate about the chassis up axis (rad/s, positive turning left).
    pub yaw_rate: f64,
    /// Engine (or motor) speed (rpm).
    pub engine_rpm: f64,
    /// Engaged gear, negative in reverse: a manual gearbox's (0 in neutral and while
    /// shifting), an automatic transmission's (the gear engaged or being shifted into; 0 in
    /// neutral and park), or a CVT's selection (1 drive, 0 neutral, −1 reverse).
    pub gear: i32,
    /// Steering input as applied after the rate limit (−1..1, positive right).
    pub steering: f64,
    /// Rack travel the steering module reported at the last stage of the step (m, positive
    /// right).
    pub rack_travel: f64,
    /// Number of wheels touching the ground.
    pub grounded_wheels: u32,
    /// Share of the driver's demand the traction control ([`Brakes::traction_control`]) held
    /// back at the last stage of the step (0..1; 0 when it holds nothing back, or there is
    /// none). The engine's and motors' sensors report the torque they produced with this cut.
    pub traction_cut: f64,
    /// Share of the driver's demand the [`SpeedLimiter`] held back this step (0..1; 0 when it
    /// holds nothing back, or there is none).
    pub speed_limit_cut: f64,
    /// Share of the driver's demand the stability control ([`Brakes::stability_control`],
    /// [`StabilityControl::drive_cut`]) held back this step (0..1; 0 when it holds nothing
    /// back, or there is none).
    pub stability_cut: f64,
    /// The moment of the road on the steered wheels about their kingpins, added up (N·m,
    /// positive turning the wheels to the left), at the end of the step: each tire's aligning
    /// moment and its side force at the suspension's caster trail,
    /// `M_z − mechanical_trail·F_y` ([`Suspension::mechanical_trail`]). What a steering
    /// wheel's force feedback wants (divide by the steering's ratio); without caster, equal to
    /// [`VehicleTelemetry::aligning_torque`]. The body's motion does not depend on it: the
    /// steering holds the wheels at their angles (the kingpin's offset and the jacking of its
    /// inclination are not modelled).
    pub steering_torque: f64,
    /// The steered wheels' aligning moments added up ([`WheelSensors::aligning_torque`], from
    /// each tire's pneumatic trail, [`Tire::trail`]) at the end of the step (N·m, positive turning
    /// the wheels to the left): what the road returns to the steering at the road wheels, for
    /// a steering wheel's force feedback without the caster's share
    /// ([`VehicleTelemetry::steering_torque`] has it). 0 without pneumatic trail.
    ///
    /// [`WheelSensors::aligning_torque`]: bevy_vehicle_drivetrain::blocks::WheelSensors::aligning_torque
    /// [`Tire::trail`]: bevy_vehicle_drivetrain::blocks::Tire::trail
    pub aligning_torque: f64,
}
