//! The built-in modules: what every vehicle runs until another module is installed, and
//! [`DirectDrive`], a drivetrain module to install.

use bevy_vehicle_drivetrain::VehicleControls;
use smallvec::SmallVec;

use super::context::{AxleInput, CornerInput, ModuleContext, ModuleWheel, StabilityDemand};
use super::{AntiRollBarModule, BrakeModule, DrivetrainModule, SteeringModule, SuspensionModule};
use bevy::math::Vec3;

use crate::components::{
    ANTI_LOCK_REAPPLY, ANTI_LOCK_RELEASE, AntiLock, BrakeDistribution, Brakes, Side,
    StabilityControl, Steering,
};
use crate::contact::MAX_CONTACT_ACCELERATION;

/// Per-wheel values held without a heap allocation (up to eight wheels).
type PerWheel = SmallVec<[f64; 8]>;

/// The brake torque capacity of each wheel (N·m, ≥ 0) that the built-in brakes give for
/// `command`: the pedal times [`Brakes::max_torque`] shared between the axles by
/// [`Brakes::front_bias`], plus the handbrake and the parking lock on
/// [`Brakes::handbrake_axle`] (`command.parking`: in a module's
/// [`ModuleContext::command`] it is set only once the lock has engaged, below
/// [`Brakes::parking_max_speed`]). Written into `out` in `wheels` order. (The built-in brakes
/// then let [`Brakes::distribution`] ([`distribute_brake_force`]) and [`Brakes::anti_lock`]
/// limit the pedal's share, if set; this function does not.)
pub fn builtin_brake_torques(
    brakes: &Brakes,
    command: &VehicleControls,
    wheels: &[ModuleWheel],
    out: &mut [f64],
) {
    let split = AxleSplit::new(brakes, wheels);
    for (wheel, out) in wheels.iter().zip(out.iter_mut()) {
        let [pedal, held] = split.torques(brakes, command, wheel);
        *out = pedal + held;
    }
}

/// Holds the pedal's brake torque at each wheel behind the front axle (`pedal`, N·m, in
/// `wheels` order) to `max(u, onset)` of its tire's peak force times its radius, `u` the share
/// of their peak force the pedal asks of the front tires (`peak_force`, N, in `wheels` order:
/// [`ModuleContext::peak_force`]), as [`BrakeDistribution`] describes. Front wheels, and
/// wheels whose tire has no peak force (in the air), keep their torque; without a grounded
/// front tire, or without torque at the front (a `front_bias` of 0), nothing is held.
pub fn distribute_brake_force(
    distribution: &BrakeDistribution,
    wheels: &[ModuleWheel],
    peak_force: &[f64],
    pedal: &mut [f64],
) {
    let (mut asked, mut peak) = (0.0, 0.0);
    for ((wheel, &torque), &force) in wheels.iter().zip(pedal.iter()).zip(peak_force) {
        if wheel.mount.axle == 0 && force > 0.0 {
            asked += torque / wheel.radius;
            peak += force;
        }
    }
    let share = (asked / peak).max(distribution.onset);
    // Without front brakes (a kart's `front_bias` of 0) there is nothing to share against.
    if !(peak > 0.0 && asked > 0.0 && share.is_finite()) {
        return;
    }
    for ((wheel, torque), &force) in wheels.iter().zip(pedal.iter_mut()).zip(peak_force) {
        if wheel.mount.axle != 0 && force > 0.0 {
            *torque = torque.min(share * force * wheel.radius);
        }
    }
}

/// The stability control `esc`'s demand in the step whose context is `ctx`, from its error:
/// the reference yaw rate at the driver's steer less the yaw rate, with the side slip's
/// correction. `None` while it stays out of the way (below `min_speed`, in reverse, or within
/// the deadband). Decided once per step, before the modules' `begin_step`
/// ([`ModuleContext::stability`]).
pub(crate) fn stability_demand(
    esc: &StabilityControl,
    ctx: &ModuleContext,
) -> Option<StabilityDemand> {
    let speed = ctx.state.forward_speed();
    // Forward only: reversing, a braked wheel's force turns the other way.
    if speed < esc.min_speed || speed.is_nan() {
        return None;
    }
    // The driver's steer (the steered wheels' mean angle) and the wheelbase (from the steered
    // wheels to the mean of the others).
    let mut angles: PerWheel = SmallVec::from_elem(0.0, ctx.wheels.len());
    ackermann_angles(ctx.steering, ctx.steering_input, ctx.wheels, &mut angles);
    let mean = |steered: bool, value: &dyn Fn(usize) -> f64| {
        let picked = (0..ctx.wheels.len()).filter(|&i| ctx.wheels[i].mount.steered == steered);
        let (sum, count) = picked.fold((0.0, 0.0), |(s, n), i| (s + value(i), n + 1.0));
        (count > 0.0).then(|| sum / count)
    };
    let z = |i: usize| f64::from(ctx.wheels[i].mount.position.z);
    let (Some(steer), Some(front), Some(rear)) =
        (mean(true, &|i| angles[i]), mean(true, &z), mean(false, &z))
    else {
        return None;
    };
    let (peak, load) = (
        ctx.peak_force.iter().sum::<f64>(),
        ctx.load.iter().sum::<f64>(),
    );
    if load <= 0.0 || load.is_nan() {
        return None;
    }
    let wanted = esc.reference_yaw_rate(speed, steer, (rear - front).abs(), peak / load);
    let yaw = ctx.state.yaw_rate();
    let error = wanted - yaw + esc.sideslip_correction(ctx.state.body_slip_angle());
    if error.abs() <= esc.yaw_rate_deadband || error.is_nan() {
        return None;
    }
    let beyond = error - esc.yaw_rate_deadband.copysign(error);
    let moment = esc.gain * beyond;
    let oversteer = yaw.abs() > wanted.abs() || yaw * wanted < 0.0;
    // Braking a wheel on the left yaws the car to the left; yawing faster than asked (or the
    // other way), the front wheel, slower, the rear.
    let side = if moment > 0.0 {
        Side::Left
    } else {
        Side::Right
    };
    let last_axle = ctx.wheels.iter().map(|w| w.mount.axle).max().unwrap_or(0);
    let axle = if oversteer { 0 } else { last_axle };
    let wheel = ctx
        .wheels
        .iter()
        .position(|w| w.mount.axle == axle && w.mount.side == side);
    let brake_torque = wheel.map_or(0.0, |i| {
        let half_track = f64::from(ctx.wheels[i].mount.position.x.abs());
        if half_track > 0.0 {
            (moment.abs() / half_track * ctx.wheels[i].radius).min(ctx.brakes.max_torque.max(0.0))
        } else {
            0.0
        }
    });
    Some(StabilityDemand {
        moment,
        excess: beyond.abs(),
        oversteer,
        wheel,
        brake_torque,
        drive_cut: esc.drive_cut(beyond.abs()),
    })
}

/// Applies the stability control's demand `demand` to the pedal's brake torques `pedal` (N·m,
/// in `wheels` order, after any [`distribute_brake_force`]) of a vehicle with brakes `brakes`
/// whose tires peak at `peak_force` (N, in `wheels` order: [`ModuleContext::peak_force`]);
/// returns the axle it acts on, or `None` without a wheel to brake.
///
/// The demand's `brake_torque` joins the pedal's at its wheel, within [`Brakes::max_torque`].
/// Under hard braking that wheel's tire may already be at its limit (its peak force times its
/// radius, times [`AntiLock::peak_share`](crate::AntiLock::peak_share) with an ABS fitted),
/// where more torque only locks the wheel or is taken back by the ABS. The part of the demand
/// beyond what the tire can still take is asked instead of the wheel across the axle as less
/// braking: a braking force `F` at half the track `t/2` on one side yaws the car as `F` less
/// on the other, `F·t/2`. That wheel's pedal torque comes down to its own tire's limit and
/// then by the torque `F·radius` of the same yaw moment (not below 0). Without the driver's
/// braking there is nothing to release and only the added torque acts.
pub fn apply_stability_demand(
    demand: &StabilityDemand,
    brakes: &Brakes,
    wheels: &[ModuleWheel],
    peak_force: &[f64],
    pedal: &mut [f64],
) -> Option<u8> {
    let i = demand
        .wheel
        .filter(|&i| i < wheels.len().min(pedal.len()))?;
    let max = brakes.max_torque.max(0.0);
    let share = brakes.anti_lock.as_ref().map_or(1.0, |abs| abs.peak_share);
    let limit = |k: usize| {
        let peak = peak_force.get(k).copied().unwrap_or(0.0);
        (peak * wheels[k].radius * share).min(max)
    };
    let asked = demand.brake_torque.max(0.0);
    let before = pedal[i];
    pedal[i] = (before + asked).min(max.max(before));
    let beyond = asked - (limit(i) - before).max(0.0);
    let (axle, side) = (wheels[i].mount.axle, wheels[i].mount.side);
    let across = (0..wheels.len().min(pedal.len()))
        .find(|&j| wheels[j].mount.axle == axle && wheels[j].mount.side != side);
    if let Some(j) = across.filter(|_| beyond > 0.0) {
        let arm = |k: usize| f64::from(wheels[k].mount.position.x.abs());
        let (arm_i, arm_j) = (arm(i), arm(j));
        let held = limit(j);
        if arm_j > 0.0 && wheels[i].radius > 0.0 && held > 0.0 {
            let release = beyond / wheels[i].radius * arm_i / arm_j * wheels[j].radius;
            pedal[j] = (pedal[j].min(held) - release).max(0.0);
        }
    }
    Some(axle)
}

/// The pedal's torque share of each axle, as a fraction of [`Brakes::max_torque`].
pub(crate) struct AxleSplit {
    front: f64,
    rear: f64,
}

impl AxleSplit {
    pub(crate) fn new(brakes: &Brakes, wheels: &[ModuleWheel]) -> AxleSplit {
        let bias = brakes.front_bias.clamp(0.0, 1.0);
        // The front axle's share is the bias; the axles behind it split the rest equally. The
        // axle with the largest share gets the full torque, the others their proportion.
        let rear_axles = wheels
            .iter()
            .map(|w| w.mount.axle)
            .max()
            .unwrap_or(0)
            .max(1);
        let (front, rear) = (bias, (1.0 - bias) / f64::from(rear_axles));
        let largest = front.max(rear);
        AxleSplit {
            front: front / largest,
            rear: rear / largest,
        }
    }

    /// A wheel's share of [`Brakes::max_torque`] (dimensionless, 0..1): its brake's torque at
    /// full pedal over the largest.
    pub(crate) fn share(&self, wheel: &ModuleWheel) -> f64 {
        if wheel.mount.axle == 0 {
            self.front
        } else {
            self.rear
        }
    }

    /// One wheel's brake torque capacity (N·m, ≥ 0) as `[pedal, handbrake and parking lock]`.
    fn torques(&self, brakes: &Brakes, command: &VehicleControls, wheel: &ModuleWheel) -> [f64; 2] {
        let pedal = command.brake() * brakes.max_torque.max(0.0) * self.share(wheel);
        let mut held = 0.0;
        if wheel.mount.axle == brakes.handbrake_axle {
            held += command.handbrake() * brakes.handbrake_torque.max(0.0);
            if command.parking {
                held += brakes.parking_torque.max(0.0);
            }
        }
        [pedal, held]
    }
}

/// The built-in brakes: [`builtin_brake_torques`] from the vehicle's [`Brakes`] settings,
/// set once per step, with the pedal's share held by [`Brakes::distribution`]
/// ([`distribute_brake_force`]) and limited by [`Brakes::anti_lock`] if set, the ABS deciding
/// at the start of every drivetrain substep against each wheel's spin there.
#[derive(Clone, Debug, Default)]
pub struct BuiltinBrakes {
    capacity: PerWheel,
    /// Per wheel, while an ABS is fitted: the share of its limit it grants (1 unless the wheel
    /// neared lock-up).
    grant: PerWheel,
    /// Per wheel (while an ABS is fitted; within `begin_step` always): the torque the pedal
    /// asks this step (N·m), which the ABS may limit, and what the handbrake and parking lock
    /// hold (N·m), which it may not.
    pedal: PerWheel,
    held: PerWheel,
    /// Per wheel, while an ABS is fitted: the speed of its centre along the chassis's forward
    /// axis at the start of the step (m/s; not a number before the first), and how fast that
    /// changed over the last step (m/s²): the ground speed the ABS measures the wheel's slip
    /// against, carried on through the step.
    speed: PerWheel,
    speed_rate: PerWheel,
    /// The axle the stability control acts on this step, whose wheels the ABS's select-low
    /// leaves alone ([`apply_stability_demand`]).
    stability_axle: Option<u8>,
}

impl BuiltinBrakes {
    /// The wheel centre's speed over its own ground along the chassis's forward axis (m/s) at
    /// the start of the step ([`VehicleState::wheel_velocity`](super::context::VehicleState::wheel_velocity)).
    fn wheel_speed(ctx: &ModuleContext, i: usize) -> f64 {
        let state = &ctx.state;
        let velocity = state.wheel_velocity(i, ctx.wheels[i].mount.position);
        f64::from(velocity.dot(state.rotation * Vec3::NEG_Z))
    }

    /// The pedal torque (N·m, ≥ 0) the ABS `abs` lets through at wheel `i` over a substep of
    /// `ctx.substep` seconds starting at `ctx.time`, at the wheel spin there; updates how much
    /// of its limit the wheel is granted.
    fn anti_lock(&mut self, abs: &AntiLock, ctx: &ModuleContext, i: usize) -> f64 {
        let pedal = self.pedal[i];
        let peak = ctx.peak_force.get(i).copied().unwrap_or(0.0);
        let speed = self.speed[i] + self.speed_rate[i] * ctx.time;
        let spin = ctx.state.wheel_spin.get(i).copied().unwrap_or(0.0);
        let dt = ctx.substep.max(0.0);
        if !(speed.abs() >= abs.min_speed && peak > 0.0 && speed.is_finite() && spin.is_finite()) {
            self.grant[i] = 1.0;
            return pedal;
        }
        // How far the wheel lags the ground under braking: 0 rolling freely, 1 locked, in
        // either direction of travel (a wheel driven faster than the ground is not locking).
        let braking_slip = 1.0 - spin * ctx.wheels[i].radius / speed;
        // The grant falls from 1 at `release_slip` to 0 at twice that, continuously, so that the
        // ABS and the wheel settle where the tire holds (no on-off cycle following the step),
        // and follows that target with a lag.
        let release = abs.release_slip_at(ctx.peak_slip.get(i).copied().unwrap_or(f64::NAN));
        let target = (2.0 - braking_slip / release).clamp(0.0, 1.0);
        let lag = if target < self.grant[i] {
            ANTI_LOCK_RELEASE
        } else {
            ANTI_LOCK_REAPPLY
        };
        let grant = self.grant[i];
        self.grant[i] = grant + (target - grant) * (1.0 - (-dt / lag).exp());
        self.limited(abs, ctx, i, peak)
    }

    /// The pedal torque (N·m) the ABS lets through at wheel `i` at its current grant, without
    /// deciding anew (at the start of the step, until the first substep decides).
    fn granted(&self, abs: &AntiLock, ctx: &ModuleContext, i: usize) -> f64 {
        let peak = ctx.peak_force.get(i).copied().unwrap_or(0.0);
        if self.speed[i].abs() >= abs.min_speed && peak > 0.0 {
            self.limited(abs, ctx, i, peak)
        } else {
            self.pedal[i]
        }
    }

    /// Gives both wheels of each axle behind the front one the lower of their pedal torques as
    /// the ABS let them through (`AntiLock::select_low_rear`); what the handbrake and parking
    /// lock hold stays each wheel's.
    fn select_low_behind_the_front(&mut self, ctx: &ModuleContext) {
        let pedal = |this: &Self, i: usize| this.capacity[i] - this.held[i];
        for i in 0..ctx.wheels.len() {
            let axle = ctx.wheels[i].mount.axle;
            // Each axle once, from its first wheel; the stability control's braking or release
            // on one wheel is what yaws the car, and overrides the select-low.
            if axle == 0
                || Some(axle) == self.stability_axle
                || ctx.wheels[..i].iter().any(|w| w.mount.axle == axle)
            {
                continue;
            }
            let on_axle = || (i..ctx.wheels.len()).filter(|&j| ctx.wheels[j].mount.axle == axle);
            let low = on_axle()
                .map(|j| pedal(self, j))
                .fold(f64::INFINITY, f64::min);
            for j in on_axle() {
                self.capacity[j] = low + self.held[j];
            }
        }
    }

    /// Wheel `i`'s pedal torque (N·m) capped at the granted share of what holds its tire at
    /// `peak_share` of its peak force `peak` (N) while the wheel slows with the ground:
    /// `grant · (peak_share · peak · radius + inertia · deceleration / radius)`, with the
    /// deceleration of the wheel's centre over the last step (m/s², ≥ 0). The brake slows the
    /// wheel's own inertia as well as the car: capped at the tire's share alone, a 50 kg kart
    /// on 1.2 kg·m² wheels braked on half its tires' grip and stopped longer than on locked
    /// wheels.
    fn limited(&self, abs: &AntiLock, ctx: &ModuleContext, i: usize, peak: f64) -> f64 {
        let wheel = &ctx.wheels[i];
        let deceleration = (-self.speed_rate[i] * self.speed[i].signum()).max(0.0);
        let tire = abs.peak_share * peak * wheel.radius;
        let inertia = wheel.inertia.max(0.0) * deceleration / wheel.radius;
        self.pedal[i].min((tire + inertia) * self.grant[i])
    }
}

impl BrakeModule for BuiltinBrakes {
    fn name(&self) -> &str {
        "BuiltinBrakes"
    }

    fn begin_step(&mut self, ctx: &ModuleContext) {
        let count = ctx.wheels.len();
        self.capacity.clear();
        self.capacity.resize(count, 0.0);
        // The pedal's and the held torques, the pedal's shared out by the distribution; the
        // stability control's demand then adds to it, or releases it across the axle.
        self.pedal.resize(count, 0.0);
        self.held.resize(count, 0.0);
        let split = AxleSplit::new(ctx.brakes, ctx.wheels);
        for (i, wheel) in ctx.wheels.iter().enumerate() {
            [self.pedal[i], self.held[i]] = split.torques(ctx.brakes, ctx.command, wheel);
        }
        if let Some(distribution) = &ctx.brakes.distribution {
            distribute_brake_force(distribution, ctx.wheels, ctx.peak_force, &mut self.pedal);
        }
        self.stability_axle = ctx.stability.and_then(|demand| {
            apply_stability_demand(
                &demand,
                ctx.brakes,
                ctx.wheels,
                ctx.peak_force,
                &mut self.pedal,
            )
        });
        let Some(abs) = &ctx.brakes.anti_lock else {
            for ((capacity, pedal), held) in
                self.capacity.iter_mut().zip(&self.pedal).zip(&self.held)
            {
                *capacity = pedal + held;
            }
            for v in [&mut self.grant, &mut self.pedal, &mut self.held] {
                v.clear();
            }
            return;
        };
        if self.grant.len() != count {
            self.grant.clear();
            self.grant.resize(count, 1.0);
            self.speed.clear();
            self.speed.resize(count, f64::NAN);
            self.speed_rate.clear();
            self.speed_rate.resize(count, 0.0);
        }
        for i in 0..count {
            let speed = Self::wheel_speed(ctx, i);
            let rate = (speed - self.speed[i]) / ctx.dt;
            let limit = f64::from(MAX_CONTACT_ACCELERATION);
            self.speed_rate[i] = if rate.is_finite() {
                rate.clamp(-limit, limit)
            } else {
                0.0
            };
            self.speed[i] = speed;
            // Until the first substep decides (a step without substep calls keeps this).
            self.capacity[i] = self.granted(abs, ctx, i) + self.held[i];
        }
    }

    fn begin_substep(&mut self, ctx: &ModuleContext) -> bool {
        let Some(abs) = &ctx.brakes.anti_lock else {
            return false;
        };
        if self.grant.len() != ctx.wheels.len() {
            return false;
        }
        for i in 0..ctx.wheels.len() {
            self.capacity[i] = self.anti_lock(abs, ctx, i) + self.held[i];
        }
        if abs.select_low_rear {
            self.select_low_behind_the_front(ctx);
        }
        true
    }

    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]) {
        for ((t, &capacity), &spin) in torques
            .iter_mut()
            .zip(&self.capacity)
            .zip(ctx.state.wheel_spin)
        {
            // At a standstill either sign holds the wheel: the magnitude is what counts.
            *t = if spin < 0.0 { capacity } else { -capacity };
        }
    }

    /// The magnitudes are set in `begin_step` (and with an ABS in `begin_substep`); only their
    /// sign follows the spin.
    fn every_stage(&self) -> bool {
        false
    }

    /// With an ABS fitted (as of the last `begin_step`).
    fn every_substep(&self) -> bool {
        !self.grant.is_empty()
    }

    fn reset(&mut self) {
        for v in [
            &mut self.capacity,
            &mut self.grant,
            &mut self.pedal,
            &mut self.held,
            &mut self.speed,
            &mut self.speed_rate,
        ] {
            v.clear();
        }
        self.stability_axle = None;
    }
}

/// The road-wheel angles of Ackermann steering (rad, positive left), written into `out` in
/// `wheels` order, for the steering input `input` (−1..1, positive right).
///
/// The wheels marked [`WheelMount::steered`](crate::WheelMount::steered) turn about one centre
/// on the line of the unsteered axles (the wheelbase runs from the steered axle to their
/// mean), the inside wheel by `|input|·max_angle`; [`Steering::ackermann`] blends toward
/// parallel steering. Unsteered wheels get 0.
pub fn ackermann_angles(steering: &Steering, input: f64, wheels: &[ModuleWheel], out: &mut [f64]) {
    // Geometry from the mounts: the steered axle's position and track, and the line of the
    // unsteered axles the turn centre lies on.
    let (mut steered_z, mut steered_n, mut fixed_z, mut fixed_n) = (0.0, 0.0, 0.0, 0.0);
    let (mut track_min, mut track_max) = (f64::MAX, f64::MIN);
    for wheel in wheels {
        let z = f64::from(wheel.mount.position.z);
        if wheel.mount.steered {
            steered_z += z;
            steered_n += 1.0;
            track_min = track_min.min(f64::from(wheel.mount.position.x));
            track_max = track_max.max(f64::from(wheel.mount.position.x));
        } else {
            fixed_z += z;
            fixed_n += 1.0;
        }
    }
    out.fill(0.0);
    if steered_n == 0.0 {
        return;
    }
    let reference_z = if fixed_n > 0.0 {
        fixed_z / fixed_n
    } else {
        steered_z / steered_n
    };
    let track = track_max - track_min;
    let inside = input.abs() * steering.max_angle;
    // Turn centre on the reference line, `radius` from the centreline, on the turn's side.
    let wheelbase = (steered_z / steered_n - reference_z).abs();
    let radius = if inside > 1e-9 && wheelbase > 1e-9 {
        wheelbase / inside.tan() + 0.5 * track
    } else {
        f64::INFINITY
    };
    let blend = steering.ackermann.clamp(0.0, 1.0);
    for (wheel, out) in wheels.iter().zip(out.iter_mut()) {
        let mount = &wheel.mount;
        if !mount.steered {
            continue;
        }
        // Lateral distance from this wheel to the turn centre (inside wheels are closer).
        let toward_turn = match (mount.side, input > 0.0) {
            (Side::Right, true) | (Side::Left, false) => -1.0,
            _ => 1.0,
        };
        let offset =
            (f64::from(mount.position.x) - 0.5 * (track_min + track_max)).abs() * toward_turn;
        let lever = (f64::from(mount.position.z) - reference_z).abs();
        let ackermann = if radius.is_finite() {
            (lever / (radius + offset)).atan()
        } else {
            0.0
        };
        let angle = blend * ackermann + (1.0 - blend) * inside;
        // Positive angles turn left; positive steering turns right.
        *out = -angle * input.signum();
    }
}

/// The built-in steering: [`ackermann_angles`] from the vehicle's [`Steering`] settings and
/// the rate-limited steering input, decided once per step; the rack travels
/// [`Steering::rack_travel`] at full lock.
#[derive(Clone, Debug, Default)]
pub struct AckermannSteering {
    angles: PerWheel,
    rack: f64,
}

impl SteeringModule for AckermannSteering {
    fn name(&self) -> &str {
        "AckermannSteering"
    }

    fn begin_step(&mut self, ctx: &ModuleContext) {
        self.angles.clear();
        self.angles.resize(ctx.wheels.len(), 0.0);
        ackermann_angles(
            ctx.steering,
            ctx.steering_input,
            ctx.wheels,
            &mut self.angles,
        );
        self.rack = ctx.steering_input * ctx.steering.rack_travel;
    }

    fn apply(&self, _: &ModuleContext, angles: &mut [f64]) -> f64 {
        for (out, &angle) in angles.iter_mut().zip(&self.angles) {
            *out = angle;
        }
        self.rack
    }

    /// The angles are set in `begin_step`.
    fn every_stage(&self) -> bool {
        false
    }

    fn reset(&mut self) {
        self.angles.clear();
        self.rack = 0.0;
    }
}

/// The built-in suspension: each corner's [`Suspension`](crate::Suspension) settings
/// ([`Suspension::force_at_step`](crate::Suspension::force_at_step): spring, preload, bump
/// stop, bump and rebound damping).
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinSuspension;

impl SuspensionModule for BuiltinSuspension {
    fn name(&self) -> &str {
        "BuiltinSuspension"
    }

    fn force(&self, ctx: &ModuleContext, corner: &CornerInput) -> f64 {
        corner.suspension.force_at_step(corner, ctx.dt)
    }
}

/// A linear anti-roll bar: it adds `stiffness·(x_left − x_right)` to the left wheel's load and
/// takes it from the right. The built-in bars of [`AntiRollBars`](crate::AntiRollBars) are
/// these.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinearAntiRollBar {
    /// Roll stiffness at the wheels (N/m, ≥ 0).
    pub stiffness: f64,
}

impl AntiRollBarModule for LinearAntiRollBar {
    fn name(&self) -> &str {
        "LinearAntiRollBar"
    }

    fn forces(&self, _: &ModuleContext, axle: &AxleInput) -> [f64; 2] {
        let transfer = self.stiffness * (axle.deflection[0] - axle.deflection[1]);
        [transfer, -transfer]
    }
}

/// A drivetrain module: an ideal electric motor at each driven wheel, for vehicles that need
/// no block graph (a game's arcade car, a robot, a study of the chassis alone).
///
/// Each wheel on `driven_axles` gets `throttle × min(max_torque, max_power / |ω|)` in the
/// direction the selected gear asks for ([`VehicleControls::direction`]; none in neutral).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DirectDrive {
    /// Torque per driven wheel at full throttle (N·m, ≥ 0).
    pub max_torque: f64,
    /// Power per driven wheel at full throttle (W, ≥ 0): above `max_power / max_torque` rad/s
    /// the torque falls as `1/ω`.
    pub max_power: f64,
    /// Axles whose wheels are driven (0 = front-most).
    pub driven_axles: Vec<u8>,
}

impl Default for DirectDrive {
    /// 400 N·m and 40 kW per wheel on the rear axle of a car.
    fn default() -> Self {
        DirectDrive {
            max_torque: 400.0,
            max_power: 40_000.0,
            driven_axles: vec![1],
        }
    }
}

impl DrivetrainModule for DirectDrive {
    fn name(&self) -> &str {
        "DirectDrive"
    }

    fn wheel_torques(&self, ctx: &ModuleContext, torques: &mut [f64]) {
        let pedal = ctx.command.throttle() * ctx.command.direction();
        for ((out, wheel), &spin) in torques.iter_mut().zip(ctx.wheels).zip(ctx.state.wheel_spin) {
            if !self.driven_axles.contains(&wheel.mount.axle) {
                continue;
            }
            let limit = self.max_torque.max(0.0);
            let power_limit = self.max_power.max(0.0) / spin.abs().max(1e-9);
            *out = pedal * limit.min(power_limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::WheelMount;
    use bevy::prelude::Entity;

    fn wheel(axle: u8) -> ModuleWheel {
        ModuleWheel {
            entity: Entity::PLACEHOLDER,
            mount: WheelMount {
                axle,
                ..Default::default()
            },
            radius: 0.3,
            inertia: 1.0,
            node: 0,
        }
    }

    /// The distribution's closed form: the front tires asked for `u` of their peak, each rear
    /// brake held to `max(u, onset)` of its tire's peak times its radius (1e-12).
    #[test]
    fn the_rear_brakes_are_held_to_the_front_tires_share_of_their_grip() {
        let wheels = [wheel(0), wheel(0), wheel(1), wheel(1)];
        let peaks = [5_000.0, 5_000.0, 2_000.0, 0.0];
        let onset = BrakeDistribution { onset: 0.8 };
        // u = 2·(1350 / 0.3) / 10 000 = 0.9: the rear held to 0.9 · 2000 · 0.3 = 540 N·m; the
        // wheel in the air (no peak force) keeps its torque.
        let mut pedal = [1_350.0, 1_350.0, 900.0, 900.0];
        distribute_brake_force(&onset, &wheels, &peaks, &mut pedal);
        assert!(
            (pedal[2] - 540.0).abs() < 1e-12 && pedal[3] == 900.0,
            "{pedal:?}"
        );
        assert_eq!(&pedal[..2], &[1_350.0, 1_350.0]);
        // u = 0.4, below the onset: held to 0.8 · 2000 · 0.3 = 480 N·m; 300 passes whole.
        let mut pedal = [600.0, 600.0, 900.0, 300.0];
        let peaks = [5_000.0, 5_000.0, 2_000.0, 2_000.0];
        distribute_brake_force(&onset, &wheels, &peaks, &mut pedal);
        assert!(
            (pedal[2] - 480.0).abs() < 1e-12 && pedal[3] == 300.0,
            "{pedal:?}"
        );
        // No front brakes: nothing to share against.
        let mut pedal = [0.0, 0.0, 900.0, 900.0];
        distribute_brake_force(&onset, &wheels, &peaks, &mut pedal);
        assert_eq!(pedal, [0.0, 0.0, 900.0, 900.0]);
    }

    /// The stability control's yaw moment `M` under braking: what its wheel's tire can still
    /// take is added there, and the rest released across the axle so that the two sides'
    /// braking forces part by `M / (t/2)` in all (closed form, 1e-9 N·m); without the
    /// driver's braking only the added torque acts.
    #[test]
    fn the_stability_control_releases_across_the_axle_what_its_wheel_cannot_take() {
        let mut wheels = [wheel(0), wheel(0), wheel(1), wheel(1)];
        for (w, (x, side)) in wheels.iter_mut().zip([
            (-0.75, Side::Left),
            (0.75, Side::Right),
            (-0.74, Side::Left),
            (0.74, Side::Right),
        ]) {
            w.mount.position.x = x;
            w.mount.side = side;
        }
        // Front tires at 4 000 N (split road: the right on low friction, 1 000 N); with the
        // ABS's default share of their peak, the left holds 0.95 · 4 000 · 0.3 = 1 140 N·m.
        let peaks = [4_000.0, 1_000.0, 3_000.0, 3_000.0];
        let brakes = Brakes {
            anti_lock: Some(AntiLock::default()),
            ..Default::default()
        };
        let share = AntiLock::default().peak_share;
        // A moment turning right (braking the right front), 600 N·m: 800 N at 0.75 m, 240 N·m.
        let moment = 600.0;
        let demand = StabilityDemand {
            moment: -moment,
            excess: 0.1,
            oversteer: true,
            wheel: Some(1),
            brake_torque: moment / 0.75 * 0.3,
            drive_cut: 0.0,
        };
        // Full pedal: the right front already asks more than its tire takes (0.95 · 1 000 ·
        // 0.3 = 285 N·m), so the whole moment comes off the left front.
        let full = brakes.max_torque * 0.76;
        let mut pedal = [full, full, 500.0, 500.0];
        let axle = apply_stability_demand(&demand, &brakes, &wheels, &peaks, &mut pedal);
        assert_eq!(axle, Some(0));
        let held = share * peaks[0] * 0.3;
        let released = held - pedal[0];
        assert!(
            (released - 240.0).abs() < 1e-9,
            "left front released {released} N·m, {pedal:?}"
        );
        assert_eq!(&pedal[2..], &[500.0, 500.0]);
        // Light pedal: the right front takes 150 N·m more before its tire's 285; the other
        // 90 N·m (300 N) come off the left front, which the pedal held below its limit.
        let mut pedal = [135.0, 135.0, 0.0, 0.0];
        apply_stability_demand(&demand, &brakes, &wheels, &peaks, &mut pedal);
        // What each front tire takes: the ABS holds the right at its limit.
        let right = pedal[1].min(share * peaks[1] * 0.3);
        let moment_now = (right - 135.0 + 135.0 - pedal[0]) / 0.3 * 0.75;
        assert!(
            (moment_now - moment).abs() < 1e-9 && (pedal[0] - 45.0).abs() < 1e-9,
            "moment {moment_now} N·m from {pedal:?}"
        );
        // No pedal: the torque is added whole, nothing to release.
        let mut pedal = [0.0; 4];
        apply_stability_demand(&demand, &brakes, &wheels, &peaks, &mut pedal);
        assert_eq!(pedal, [0.0, 240.0, 0.0, 0.0]);
    }
}
