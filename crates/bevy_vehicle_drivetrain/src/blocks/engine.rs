//! Internal-combustion engine: a root block with a torque table, idle controller, engine braking,
//! throttle lag, a rev limiter, stalling and a starter.

use bevy::prelude::*;

use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_finite,
    check_fraction, check_non_negative, check_positive, clamp_input,
};
use crate::blocks::BodyAxis;
use crate::controls::{VehicleControls, set_if_changed};
use crate::curve::{CurveTable, Peak, TorqueCurve, rad_s_to_rpm, rpm_to_rad_s};
use crate::shaft::{Pass, Reciprocal, Shaft, ShaftDown, ShaftUp, lump_with, sign, torque_for};

/// Speed below which Coulomb friction fades linearly to zero (rad/s) where no direction of
/// rotation is latched ([`EngineRuntime::direction`] 0: an engine evaluated outside the solver).
const FRICTION_BLEND_SPEED: f64 = 1.0;
/// Width of the rev limiter's fuel cut (rpm): full fuel `LIMITER_BAND` below `max_rpm`, none at
/// `max_rpm`.
const LIMITER_BAND: f64 = 150.0;

/// An internal-combustion engine, the usual root of a drivetrain.
///
/// Its net torque at crank speed `ω` (rad/s; `rpm = ω·60/2π`) is
///
/// ```text
/// T = θ·(T_full(rpm)·torque_scale + torque_added)
///   + (1 − θ)·(T_brake(rpm) − T_friction(ω))
/// T_friction(ω) = friction_torque·s + viscous_friction·ω
/// ```
///
/// while the crank turns forwards (`ω > 0`; turned backwards its friction acts in full at
/// any throttle). At full throttle it delivers its table `T_full`, the net torque at the
/// crank as an engine data sheet gives it (measured with the engine's own friction and
/// pumping already paid); with the throttle closed it drags with its braking and friction.
/// `θ` is the effective throttle: the driver's throttle after the throttle lag, raised by the
/// idle controller and cut by the rev limiter near `max_rpm`. The idle controller is a
/// proportional-integral one, as an engine management's idle control is: its proportional part
/// goes from no throttle at `idle_rpm` to full throttle at `(1 − idle_band)·idle_rpm`, and its
/// integral part, advanced once per fixed step with the integral time `idle_integral_time`,
/// adds what holds a loaded engine (its own friction, an automatic's converter in drive, a
/// pump) at `idle_rpm` itself, where a proportional controller alone would let it droop below.
/// `T_brake` is engine braking,
/// `−(braking_torque·rpm/max_rpm·braking_torque_scale + braking_torque_added·s)`, with `s`
/// the direction of rotation. In the solver `s` is the direction the crank turned at the
/// substep's start, latched for the substep as a brake's is, so the friction never chatters
/// and never fades: a stopped engine whose crank comes to rest (or would turn back within a
/// substep) is **held** still by its Coulomb friction and braking, `friction_torque +
/// braking_torque_added`, until what drives it exceeds that or it starts (a car in gear with
/// its engine off, hydraulic pumps behind a stalled diesel). Outside the solver, with no
/// direction latched, `s` is `clamp(ω/(1 rad/s), −1, 1)`. An engine that is not running
/// produces no combustion torque (`T = T_brake − T_friction`); below `stall_rpm` a running
/// engine stalls, and it restarts when `running` goes from `false` to `true` (the starter
/// cranks it with `starter_torque` until it passes `stall_rpm`).
///
/// A turbocharged engine's table is its torque with the boost built up, which takes time: a
/// share `boost_share` of `T_full` needs boost pressure, and the boost `b` (0..1) follows the
/// lagged throttle as `db/dt = (θ − b)/τ`, with `τ = boost_time·boost_rpm/rpm` (the turbine
/// spins up on the exhaust's flow, which grows with engine speed; `rpm` taken no lower than
/// `idle_rpm`), down as well as up (the turbine keeps spinning when the throttle closes, so a
/// quick gear shift finds most of its boost still there). `T_full` is scaled by
/// `(1 − boost_share + boost_share·b)/(1 − boost_share + boost_share·θ)`, at most 1, so an
/// engine held at any steady throttle delivers what it does without boost lag, and one
/// floored from a light throttle starts short of its table and reaches it as the boost
/// builds. The boost is advanced once per fixed step, exactly for the step (the torque uses
/// its mean over the step), so a step at any rate gives the same build-up.
///
/// State: crank speed (rad/s). Ports: one output, `out`.
#[derive(Component, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Engine {
    /// Full-throttle torque (N·m) against crank speed (rpm): the net torque the engine delivers
    /// at its crank with the throttle wide open, its own friction (`friction_torque`,
    /// `viscous_friction`) already paid, as a published full-load curve gives it.
    pub torque_curve: TorqueCurve,
    /// Inertia of crank, flywheel and everything turning at crank speed (kg·m², > 0).
    pub inertia: f64,
    /// Idle speed the idle controller holds (rpm, > 0).
    pub idle_rpm: f64,
    /// Fraction of `idle_rpm` over which the idle controller's proportional part goes from no
    /// to full throttle (dimensionless, (0, 1]).
    pub idle_band: f64,
    /// Integral time of the idle controller (s, ≥ 0): the time its integral part takes to add
    /// as much throttle as its proportional part gives for the same speed error. 0 leaves a
    /// proportional controller, which idles a loaded engine below `idle_rpm` (the default
    /// engine at 791 rpm of 800 on its own friction) as a mechanical governor's droop does.
    pub idle_integral_time: f64,
    /// A running engine slower than this stalls (rpm, ≥ 0 and below `idle_rpm`).
    pub stall_rpm: f64,
    /// Rev limiter: fuel is cut at this speed (rpm, above `idle_rpm`).
    pub max_rpm: f64,
    /// Engine braking with the throttle closed, at `max_rpm` (N·m, ≥ 0); proportional to rpm.
    pub braking_torque: f64,
    /// Coulomb friction of the crank (N·m, ≥ 0), felt in full with the throttle closed, the
    /// engine stopped or the crank turned backwards, and not at all at full throttle turning
    /// forwards, where `torque_curve` is net of it.
    pub friction_torque: f64,
    /// Viscous friction of the crank (N·m·s/rad, ≥ 0), faded with the throttle as
    /// `friction_torque` is.
    pub viscous_friction: f64,
    /// Starter motor torque while cranking (N·m, ≥ 0).
    pub starter_torque: f64,
    /// Throttle lag: time for the effective throttle to rise from 0 to 1 (s, ≥ 0; 0 = none).
    /// Closing the throttle is immediate.
    pub throttle_delay: f64,
    /// Share of the full-throttle table that needs boost pressure (dimensionless, 0..1; 0, the
    /// default, for an engine without a turbocharger or without its lag). About `1 − 1/p` for
    /// a boost pressure ratio `p`: 0.4–0.5 for a small petrol turbo's 1.7–2.0 bar absolute.
    pub boost_share: f64,
    /// Time constant of the boost's build-up at `boost_rpm` (s, > 0); at other speeds it
    /// scales as `boost_rpm/rpm`. Porsche's engineers quote 3 s to full torque at 1800 rpm
    /// for the turbocharged 911 Carrera held at constant speed (Car and Driver, June 2016),
    /// about 1 s at 1800 rpm.
    pub boost_time: f64,
    /// Engine speed at which the boost builds with the time constant `boost_time` (rpm, > 0).
    pub boost_rpm: f64,
    /// Which way the crank's spin points in the vehicle body's frame (its angular velocity
    /// running forward, by the right-hand rule), or `None` (the default) for not known. With
    /// it, a chassis turns the body against the crank's change of angular momentum,
    /// `−I·Δω` along this axis over each step: the engine's mounts take what spins the crank
    /// up, so a longitudinal engine revved in neutral rolls its car and a transverse one
    /// pitches it. Most engines turn counterclockwise seen from their flywheel end (SAE
    /// J824's standard rotation), so a longitudinal engine with its flywheel at the back is
    /// [`BodyAxis::Back`], and a transverse one with its flywheel (and gearbox) on the car's
    /// left [`BodyAxis::Left`].
    pub crank_axis: Option<BodyAxis>,

    /// Input: throttle pedal, 0 (closed) to 1 (wide open). Clamped.
    #[serde(skip)]
    pub throttle: f64,
    /// Input: ignition. Turning it on (false → true) starts a stopped engine; off stops it.
    #[serde(skip)]
    pub running: bool,
    /// Input: multiplier on the table torque (dimensionless, ≥ 0).
    #[serde(skip)]
    pub torque_scale: f64,
    /// Input: torque added to the table torque at full throttle (N·m).
    #[serde(skip)]
    pub torque_added: f64,
    /// Input: multiplier on engine braking (dimensionless, ≥ 0).
    #[serde(skip)]
    pub braking_torque_scale: f64,
    /// Input: braking torque added to engine braking (N·m, ≥ 0), opposing rotation.
    #[serde(skip)]
    pub braking_torque_added: f64,
}

impl Clone for Engine {
    fn clone(&self) -> Self {
        let mut e = Engine {
            torque_curve: TorqueCurve::new(Vec::new()),
            ..*self
        };
        e.torque_curve.clone_from(&self.torque_curve);
        e
    }

    /// Reuses the torque table's allocation: the engine is cloned into the solver whenever the
    /// throttle changes, which is every step while driving.
    fn clone_from(&mut self, source: &Self) {
        let mut curve = core::mem::replace(&mut self.torque_curve, TorqueCurve::new(Vec::new()));
        curve.clone_from(&source.torque_curve);
        *self = Engine {
            torque_curve: curve,
            ..*source
        };
    }
}

impl Default for Engine {
    /// A 2-litre petrol engine: 200 N·m peak at 4000 rpm, about 105 kW at 6000 rpm.
    fn default() -> Self {
        Engine {
            torque_curve: TorqueCurve::new(vec![
                (800.0, 120.0),
                (2000.0, 170.0),
                (4000.0, 200.0),
                (6000.0, 168.0),
                (6800.0, 140.0),
            ]),
            inertia: 0.2,
            idle_rpm: 800.0,
            idle_band: 0.1,
            idle_integral_time: 0.5,
            stall_rpm: 400.0,
            max_rpm: 6800.0,
            braking_torque: 60.0,
            friction_torque: 8.0,
            viscous_friction: 0.01,
            starter_torque: 60.0,
            throttle_delay: 0.1,
            boost_share: 0.0,
            boost_time: 1.0,
            boost_rpm: 2000.0,
            crank_axis: None,
            throttle: 0.0,
            running: true,
            torque_scale: 1.0,
            torque_added: 0.0,
            braking_torque_scale: 1.0,
            braking_torque_added: 0.0,
        }
    }
}

/// Runtime state of an [`Engine`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineRuntime {
    /// Throttle after the lag at the end of the step (0..1).
    pub lagged_throttle: f64,
    /// Throttle applied during the step: the mean of the lagged throttle over the step, which
    /// makes a throttle ramp independent of the step length (0..1).
    pub throttle: f64,
    /// Boost built at the end of the step, as a share of the full boost (0..1; see
    /// [`Engine::boost_share`]).
    pub boost: f64,
    /// Share of the table's torque the boost lag takes during the step (dimensionless, 0..1;
    /// 0 without lag): `1 − (1 − s + s·b̄)/(1 − s + s·θ̄)` with the step's mean boost `b̄` and
    /// throttle `θ̄`.
    pub boost_cut: f64,
    /// The idle controller's integral part over the step (throttle, 0..1; see
    /// [`Engine::idle_integral_time`]). Single precision, which holds idle to about 1e-4 rpm,
    /// so that it packs beside the flags below: the drivetrain stays within 8 KiB per vehicle.
    pub idle_integral: f32,
    /// Whether the engine fires.
    pub firing: bool,
    /// Whether the starter is cranking.
    pub cranking: bool,
    /// The ignition input seen last step, to detect it being turned on.
    pub ignition: bool,
    /// Peaks of the torque curve (torque, power), derived from the settings.
    pub peaks: (Peak, Peak),
    /// The torque curve the stages interpolate (and the peaks were computed from).
    pub(crate) curve: CurveTable,
    /// `1 / (idle_band · idle speed)` (s/rad), derived from the settings.
    inv_idle_span: f64,
    /// `1 / max_rpm` (1/rpm), derived from the settings (and the rev limit the power peak was
    /// computed for).
    inv_max_rpm: f64,
    /// The engine's inertia plus its load's (kg·m²), for the stages' lumped acceleration.
    pub(crate) total_inertia: Reciprocal,
    /// Direction the crank turned at the substep's start (±1, or 0 at rest and outside the
    /// solver), latched for the substep: the sign `s` its Coulomb friction and braking act
    /// against.
    pub direction: f64,
    /// Whether the stopped crank is held still by its friction (see [`Engine`]).
    pub held: bool,
}

/// What an [`Engine`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct EngineSensors {
    /// Crank speed (rpm).
    pub rpm: f64,
    /// Crank speed (rad/s).
    pub speed: f64,
    /// Net engine torque at the crank (N·m): combustion minus braking minus friction, with a
    /// traction control's cut ([`StageContext::drive_limit`]) applied.
    pub torque: f64,
    /// Torque delivered into the output shaft (N·m).
    pub shaft_torque: f64,
    /// Net engine power, `torque × speed` (W).
    pub power: f64,
    /// Effective throttle after lag, traction control, idle controller and rev limiter (0..1),
    /// at the step's end; the lag's part is the step's mean of the lagged throttle (see
    /// [`EngineRuntime::throttle`]), so after a throttle step it reads 1 from the first step
    /// that starts after `throttle_delay` has run.
    pub throttle: f64,
    /// Boost built at the step's end, as a share of the full boost (0..1; see
    /// [`Engine::boost_share`]); it follows the throttle without lag when `boost_share` is 0.
    pub boost: f64,
    /// Whether the engine is firing.
    pub running: bool,
    /// Whether the starter is cranking.
    pub cranking: bool,
    /// Peak of the full-throttle torque table as entered (rpm, N·m), before `torque_scale` and
    /// `torque_added`: what [`EngineSensors::torque`] reads at that speed at full throttle
    /// with the inputs at their defaults.
    pub max_torque: Peak,
    /// Peak of the full-throttle table's power up to the rev limiter (rpm, W), as entered
    /// (see [`EngineSensors::max_torque`]).
    pub max_power: Peak,
}

impl Engine {
    fn idle_speed(&self) -> f64 {
        rpm_to_rad_s(self.idle_rpm)
    }

    /// Torque (N·m, ≥ 0) up to which a stopped crank's Coulomb friction and braking hold it
    /// still: `friction_torque + braking_torque_added`.
    pub fn holding_torque(&self) -> f64 {
        self.friction_torque + self.braking_torque_added
    }

    /// Advances the boost over a step of `dt` (s) at crank speed `speed` (rad/s), towards the
    /// step's lagged throttle, and sets the step's [`EngineRuntime::boost_cut`].
    fn build_boost(&self, rt: &mut EngineRuntime, speed: f64, dt: f64) {
        let target = if rt.firing { rt.lagged_throttle } else { 0.0 };
        if self.boost_share == 0.0 {
            rt.boost = target;
            rt.boost_cut = 0.0;
            return;
        }
        let rpm = rad_s_to_rpm(speed).max(self.idle_rpm);
        let tau = self.boost_time * self.boost_rpm / rpm;
        // b(t) = target − (target − b0)·e^(−t/τ), exactly, and its mean over the step (more
        // than the throttle asks for is no use: the cut is never below 0).
        let gap = target - rt.boost;
        let decay = (-dt / tau).exp();
        let mean = target - gap * tau / dt * (1.0 - decay);
        rt.boost = target - gap * decay;
        let base = 1.0 - self.boost_share;
        let delivered = (base + self.boost_share * mean) / (base + self.boost_share * rt.throttle);
        rt.boost_cut = (1.0 - delivered).max(0.0);
    }

    /// Advances the idle controller's integral part over a step of `dt` (s) from the crank
    /// speed `speed` (rad/s) at the step's start, kept within 0..1 so that it never winds up
    /// (an engine held above idle, driving, lets it go at once), and 0 while the engine does
    /// not fire.
    ///
    /// The proportional part settles the crank within a few milliseconds, so over a step the
    /// speed error, in throttle, is what the load needs less the integral part: the integral
    /// then closes that gap as `1 − e^(−t/T)` with `T = idle_integral_time`, and is advanced
    /// by exactly that over the step, so that an idle settles alike at every step rate.
    fn advance_idle_integral(&self, rt: &mut EngineRuntime, speed: f64, dt: f64) {
        rt.idle_integral = if rt.firing && self.idle_integral_time > 0.0 {
            let error = (self.idle_speed() - speed) * rt.inv_idle_span;
            let share = -(-dt / self.idle_integral_time).exp_m1();
            (f64::from(rt.idle_integral) + error * share).clamp(0.0, 1.0) as f32
        } else {
            0.0
        };
    }

    /// Effective throttle at crank speed `speed` (rad/s): lagged pedal, raised by the idle
    /// controller, cut by the rev limiter.
    #[inline]
    pub fn effective_throttle(&self, runtime: &EngineRuntime, speed: f64) -> f64 {
        self.limited_throttle(runtime, speed, 1.0)
    }

    /// [`Engine::effective_throttle`] with the driver's throttle scaled by `drive_limit` (0..1,
    /// [`StageContext::drive_limit`]) before the idle controller raises it: a traction control
    /// closes the throttle, never below what keeps the engine running.
    #[inline]
    pub fn limited_throttle(&self, runtime: &EngineRuntime, speed: f64, drive_limit: f64) -> f64 {
        if !runtime.firing {
            return 0.0;
        }
        let idle_throttle = ((self.idle_speed() - speed) * runtime.inv_idle_span
            + f64::from(runtime.idle_integral))
        .clamp(0.0, 1.0);
        let limiter = ((self.max_rpm - rad_s_to_rpm(speed)) * (1.0 / LIMITER_BAND)).clamp(0.0, 1.0);
        (runtime.throttle * drive_limit).max(idle_throttle) * limiter
    }

    /// Net torque (N·m) at crank speed `speed` (rad/s).
    #[inline]
    pub fn net_torque(&self, runtime: &EngineRuntime, speed: f64) -> f64 {
        self.limited_torque(runtime, speed, 1.0)
    }

    /// Net torque (N·m) at crank speed `speed` (rad/s) with the driver's throttle scaled by
    /// `drive_limit` (0..1, [`StageContext::drive_limit`]; see [`Engine::limited_throttle`]).
    #[inline(always)]
    pub fn limited_torque(&self, runtime: &EngineRuntime, speed: f64, drive_limit: f64) -> f64 {
        let rpm = rad_s_to_rpm(speed);
        let direction = if runtime.direction != 0.0 {
            runtime.direction
        } else {
            (speed * (1.0 / FRICTION_BLEND_SPEED)).clamp(-1.0, 1.0)
        };
        let braking = -(self.braking_torque * rpm * runtime.inv_max_rpm)
            * self.braking_torque_scale
            - self.braking_torque_added * direction;
        let friction = self.friction_torque * direction + self.viscous_friction * speed;
        let mut torque = if runtime.firing {
            let throttle = self.limited_throttle(runtime, speed, drive_limit);
            let full = runtime.curve.torque_at(rpm) * self.torque_scale * (1.0 - runtime.boost_cut)
                + self.torque_added;
            // The table is net of the friction of a crank turning forwards, so combustion
            // gives that friction on top of it; turned backwards the table gives nothing.
            throttle * (full + friction.max(0.0)) + (1.0 - throttle) * braking
        } else {
            braking
        };
        if runtime.cranking {
            torque += self.starter_torque;
        }
        torque - friction
    }

    /// [`Block::update_modes`] at crank speed `speed` (rad/s), with `load` what the output
    /// shaft sent up: for one vehicle, or for a lane of the batched step.
    #[inline(always)]
    pub(crate) fn update_mode(
        &self,
        rt: &mut EngineRuntime,
        speed: f64,
        load: &ShaftUp,
    ) -> ModeChange {
        rt.total_inertia.remember(self.inertia + load.inertia);
        let stall = rpm_to_rad_s(self.stall_rpm);
        if rt.firing && speed < stall {
            rt.firing = false;
            rt.direction = sign(speed);
            return ModeChange::Smooth;
        }
        if rt.cranking && speed >= stall {
            rt.cranking = false;
            rt.firing = true;
            rt.direction = sign(speed);
            return ModeChange::Smooth;
        }
        let capacity = self.holding_torque();
        let stopped = !rt.firing && !rt.cranking;
        if rt.held {
            // What the load does to the still crank (its own torque at rest is the friction
            // and braking that hold it).
            let net = load.reaction;
            if !stopped || capacity == 0.0 || net.abs() > capacity {
                rt.held = false;
                rt.direction = sign(net);
                return ModeChange::Smooth;
            }
            return ModeChange::Unchanged;
        }
        let spin = sign(speed);
        if stopped && capacity > 0.0 {
            // Turned back within the substep, or at rest with no direction to go: held. (A
            // crank just let go keeps the direction it was let go in while it starts.)
            let reversed = rt.direction != 0.0 && spin == -rt.direction;
            let at_rest = rt.direction == 0.0 && spin == 0.0;
            if reversed || at_rest {
                rt.held = true;
                rt.direction = 0.0;
                return ModeChange::Impulsive;
            }
        }
        if spin != 0.0 && spin != rt.direction {
            rt.direction = spin;
            return ModeChange::Smooth;
        }
        ModeChange::Unchanged
    }
}

impl Block for Engine {
    const TYPE_NAME: &'static str = "Engine";
    type Runtime = EngineRuntime;
    type Sensors = EngineSensors;

    fn ports(&self) -> Ports {
        Ports::ROOT
    }

    fn state_len(&self) -> usize {
        1
    }

    fn validate(&self) -> Result<(), SettingError> {
        self.torque_curve.validate("torque_curve")?;
        check_positive("inertia", self.inertia)?;
        check_positive("idle_rpm", self.idle_rpm)?;
        check_fraction("idle_band", self.idle_band)?;
        check_non_negative("idle_integral_time", self.idle_integral_time)?;
        check_non_negative("stall_rpm", self.stall_rpm)?;
        if self.stall_rpm >= self.idle_rpm {
            return Err(SettingError::new(
                "stall_rpm",
                format!(
                    "must be below idle_rpm ({} rpm), got {} rpm",
                    self.idle_rpm, self.stall_rpm
                ),
            ));
        }
        check_positive("max_rpm", self.max_rpm)?;
        if self.max_rpm <= self.idle_rpm {
            return Err(SettingError::new(
                "max_rpm",
                format!(
                    "must be above idle_rpm ({} rpm), got {} rpm",
                    self.idle_rpm, self.max_rpm
                ),
            ));
        }
        check_non_negative("braking_torque", self.braking_torque)?;
        check_non_negative("friction_torque", self.friction_torque)?;
        check_non_negative("viscous_friction", self.viscous_friction)?;
        check_non_negative("starter_torque", self.starter_torque)?;
        check_non_negative("throttle_delay", self.throttle_delay)?;
        check_non_negative("boost_share", self.boost_share)?;
        if self.boost_share >= 1.0 {
            return Err(SettingError::new(
                "boost_share",
                format!("must be below 1, got {}", self.boost_share),
            ));
        }
        check_positive("boost_time", self.boost_time)?;
        check_positive("boost_rpm", self.boost_rpm)?;
        check_finite("throttle", self.throttle)?;
        check_non_negative("torque_scale", self.torque_scale)?;
        check_finite("torque_added", self.torque_added)?;
        check_non_negative("braking_torque_scale", self.braking_torque_scale)?;
        check_non_negative("braking_torque_added", self.braking_torque_added)?;
        Ok(())
    }

    take_inputs_fields!(throttle, running);

    fn apply_controls(&mut self, controls: &VehicleControls) -> bool {
        let a = set_if_changed(&mut self.throttle, controls.throttle());
        let b = set_if_changed(&mut self.running, controls.engine_running);
        a || b
    }

    fn settings_changed(&self, runtime: &mut EngineRuntime) {
        runtime.inv_idle_span = 1.0 / (self.idle_band * self.idle_speed());
        let inv_max_rpm = 1.0 / self.max_rpm;
        let limit_changed = runtime.inv_max_rpm != inv_max_rpm;
        runtime.inv_max_rpm = inv_max_rpm;
        // Called on any change of settings (inputs alone skip it): the curve's table and peaks
        // are rebuilt only when the curve or the rev limit changed.
        if !runtime.curve.follows(&self.torque_curve) || limit_changed {
            runtime.peaks = (
                self.torque_curve.peak_torque(),
                self.torque_curve.peak_power(self.max_rpm),
            );
            runtime.curve.rebuild(&self.torque_curve);
        }
    }

    /// An engine set turning at or above its stall speed with the ignition on fires (a stalled
    /// engine so set restarts, as one turned over by its wheels would); one set below it
    /// stalls at its next mode update. A crank set turning lets go of the friction that held
    /// it, which then opposes the new spin.
    fn state_set(&self, rt: &mut EngineRuntime, state: &[f64]) {
        rt.direction = sign(state[0]);
        if state[0] != 0.0 {
            rt.held = false;
        }
        if self.running && rt.ignition && state[0] >= rpm_to_rad_s(self.stall_rpm) {
            rt.firing = true;
            rt.cranking = false;
        }
    }

    fn init(&self, runtime: &mut EngineRuntime, state: &mut [f64]) {
        runtime.ignition = self.running;
        runtime.firing = self.running;
        runtime.throttle = clamp_input(self.throttle, 0.0, 1.0, 0.0);
        runtime.lagged_throttle = runtime.throttle;
        // A vehicle starts in a steady state: its boost is what its throttle holds.
        runtime.boost = runtime.throttle;
        runtime.boost_cut = 0.0;
        if self.running {
            state[0] = self.idle_speed();
        }
        runtime.direction = sign(state[0]);
        // An engine that starts stopped starts held by its friction.
        runtime.held = !self.running && state[0] == 0.0 && self.holding_torque() > 0.0;
    }

    fn begin_step(
        &self,
        rt: &mut EngineRuntime,
        state: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        let target = clamp_input(self.throttle, 0.0, 1.0, 0.0);
        let start = rt.lagged_throttle;
        if self.throttle_delay > 0.0 && target > start {
            let rate = 1.0 / self.throttle_delay;
            let end = (start + step.dt * rate).min(target);
            // Mean over the step of a ramp that rises at `rate` and then holds at `end`.
            let ramp_time = (end - start) / rate;
            rt.throttle = ((start + end) / 2.0 * ramp_time + end * (step.dt - ramp_time)) / step.dt;
            rt.lagged_throttle = end;
        } else {
            rt.throttle = target;
            rt.lagged_throttle = target;
        }
        self.build_boost(rt, state[0], step.dt);
        let before = (rt.firing, rt.cranking);
        if !self.running {
            rt.firing = false;
            rt.cranking = false;
        } else if !rt.ignition && !rt.firing {
            // Key turned: fire at once if the crank already turns fast enough, else crank.
            if state[0] >= rpm_to_rad_s(self.stall_rpm) {
                rt.firing = true;
            } else {
                rt.cranking = true;
            }
        }
        rt.ignition = self.running;
        self.advance_idle_integral(rt, state[0], step.dt);
        if rt.held && (rt.firing || rt.cranking) {
            // The starter (or a crank set turning) takes it from rest forwards.
            rt.held = false;
            rt.direction = 1.0;
        }
        if (rt.firing, rt.cranking) == before {
            ModeChange::Unchanged
        } else {
            ModeChange::Smooth
        }
    }

    #[inline]
    fn downstream(
        &self,
        rt: &EngineRuntime,
        state: &[f64],
        stage: &StageContext,
        _input: Option<&Shaft>,
        outputs: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        let speed = state[0];
        if rt.held {
            // Still, whatever the load does within the holding torque (`update_modes`): the
            // shaft takes what keeps the load still (its momentum, in a momentum pass).
            derivative[0] = match stage.pass {
                Pass::Torque => 0.0,
                Pass::Momentum => -speed,
            };
            outputs[0].down = ShaftDown {
                torque: torque_for(&outputs[0].up, 0.0),
                speed: 0.0,
            };
            return;
        }
        match stage.pass {
            Pass::Torque => {
                let l = lump_with(
                    self.inertia,
                    self.limited_torque(rt, speed, stage.drive_limit),
                    outputs[0].up,
                    &rt.total_inertia,
                );
                derivative[0] = l.acceleration;
                outputs[0].down = ShaftDown {
                    torque: l.shaft_torque,
                    speed,
                };
            }
            Pass::Momentum => {
                let l = lump_with(
                    self.inertia,
                    self.inertia * speed,
                    outputs[0].up,
                    &rt.total_inertia,
                );
                derivative[0] = l.acceleration - speed;
                outputs[0].down = ShaftDown {
                    torque: l.shaft_torque,
                    speed,
                };
            }
        }
    }

    #[inline]
    fn update_modes(&self, rt: &mut EngineRuntime, state: &[f64], shafts: &Shafts) -> ModeChange {
        self.update_mode(rt, state[0], &shafts.outputs[0].up)
    }

    fn sensors(&self, rt: &EngineRuntime, state: &[f64], shafts: &Shafts) -> EngineSensors {
        let speed = state[0];
        let torque = self.limited_torque(rt, speed, shafts.drive_limit);
        EngineSensors {
            rpm: rad_s_to_rpm(speed),
            speed,
            torque,
            shaft_torque: shafts.outputs[0].down.torque,
            power: torque * speed,
            throttle: self.limited_throttle(rt, speed, shafts.drive_limit),
            boost: rt.boost,
            running: rt.firing,
            cranking: rt.cranking,
            max_torque: rt.peaks.0,
            max_power: rt.peaks.1,
        }
    }
}
