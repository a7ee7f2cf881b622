//! Wheel: the inertial leaf of a drivetrain, with a brake that always opposes spin and grips
//! without chatter at standstill, and a tire with relaxation-length slip dynamics.

use std::sync::Arc;

use bevy::prelude::*;
use bevy_vehicle_tire::{LoadedTire, MagicFormula, TireModel};

use crate::batch::Num;
use crate::block::{
    Block, ModeChange, Ports, SettingError, Shafts, StageContext, StepContext, check_finite,
    check_non_negative, check_positive, clamp_input,
};
use crate::shaft::{Pass, Shaft, ShaftUp, sign};

/// Standard gravity (m/s²), used by [`WheelLoad::Vehicle`].
const GRAVITY: f64 = 9.80665;
/// Ground speed below which rolling resistance fades linearly to zero (m/s).
const ROLLING_BLEND_SPEED: f64 = 0.01;
/// Largest transient longitudinal slip the tire state may reach (dimensionless). Beyond it the
/// tire slides on regardless; the bound keeps a wheel spinning on the spot from winding the
/// slip state up without limit.
const SLIP_LIMIT: f64 = 2.0;
/// Largest transient lateral slip, as tan α (dimensionless; about 79°).
const TAN_SLIP_LIMIT: f64 = 5.0;

/// A tire on the ground: the road load of a wheel that is part of a chassis.
///
/// Slip is transient, with relaxation lengths `σ`: the longitudinal slip `κ` and lateral slip
/// `s = tan α` follow
///
/// ```text
/// σx·dκ/dt + |vx|·κ = R·ω − vx        σy·ds/dt + |vx|·s = −vy
/// ```
///
/// which tend to the steady-state slips `(Rω − vx)/|vx|` and `−vy/|vx|` at speed without ever
/// dividing by the speed. At standstill they integrate the contact patch's deflection, so the
/// tire acts as a spring in the patch: that is what holds a parked car on a slope. The contact
/// patch adds a damping force `damping·Fz·σ·dκ/dt` (and laterally) on the deflection rate,
/// which damps that spring at low speed and vanishes in steady rolling.
///
/// Past the force's peak most of the slip is slide, not deflection. A slip state past its
/// peak that moves back toward it relaxes over a shortened length, and once the road and the
/// wheel slip less than the peak again (sideways always, fore and aft while the brake holds
/// the wheel) it is taken, at the next step's start, to the rising side of its curve at the
/// force it slid with. So a tire that slid or skidded to a stop gives back about its
/// carcass's deflection (`F·σ/C`, with `C` the slip stiffness: a few millimetres for a car
/// tire), not its slide.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tire {
    /// Steady-state force law.
    pub model: TireModel,
    /// Relaxation lengths `[longitudinal, lateral]` (m, > 0).
    pub relaxation_length: [f64; 2],
    /// Contact-patch damping per unit load `[longitudinal, lateral]` (s/m, ≥ 0): the damping
    /// force is this × load × deflection rate.
    pub damping: [f64; 2],
    /// Extra contact-patch damping per unit load at a crawl (s/m, ≥ 0): fore and aft on top of
    /// `damping[0]` while the brake holds the wheel and the contact moves forward slower than
    /// [`HELD_DAMPING_SPEED`], and sideways on top of `damping[1]` while the contact moves
    /// slower than that at all, braked or not: a parked, stopping or crawling vehicle rocking
    /// on its tires.
    ///
    /// It stands in for the damping of the suspension's compliance (its bushings), which the
    /// model does not have: the body's fore-and-aft mode on its held tires is the patch spring
    /// against the tire's share of the body, and the patch damper alone damps it at a damping
    /// ratio of about 0.035 (the default car rocks at 2.5 Hz, still 3 mm/s five seconds after
    /// it parks on a slope); sideways, on the lateral patch springs, at about 0.07 (parked
    /// across a 35° slope of friction 3 it rocked on at 20 mm/s after 20 s at 60 Hz, lifting its
    /// uphill wheels now and then). The default, 0.65, brings the damping to 1.0 s/m fore and
    /// aft and 0.85 s/m sideways, the ratios to about 0.1 and 0.25, which settle both within a
    /// second or two. No published figure for this damping was found; it acts only at a crawl,
    /// where no controller modulates the slip.
    pub held_damping: f64,
    /// Rolling-resistance coefficient at low speed: resisting torque = coefficient × load ×
    /// radius (dimensionless, ≥ 0). It acts as a brake of that torque does: against the
    /// wheel's spin while it turns, and holding it up to that torque at rest, so a vehicle
    /// left free stays put on a grade gentler than the coefficient (as a real one does) and
    /// rolls down a steeper one at `g·(sin θ − coefficient·cos θ)` less what its wheels'
    /// inertia takes. See [`WheelRuntime::rolling`].
    pub rolling_resistance: f64,
    /// Growth of the rolling-resistance coefficient with the square of the tread's rolling
    /// speed `v = R·ω` (s²/m², ≥ 0): the coefficient is `rolling_resistance +
    /// rolling_resistance_quadratic · v²`. A tire's hysteresis losses rise with how fast it
    /// turns: a passenger tire's coefficient roughly doubles from walking pace to 200 km/h,
    /// which is much of what sets a car's top speed. 0 (the default) keeps it constant.
    pub rolling_resistance_quadratic: f64,
    /// Pneumatic trail at small slip (m, ≥ 0, at most the wheel's radius): how far behind the
    /// contact centre the side force acts, which gives the aligning moment
    /// [`WheelSensors::aligning_torque`] `M_z = −t·F_y`, the torque a steered tire returns
    /// through the steering. The trail shrinks as the patch slides
    /// ([`LoadedTire::trail_factor`](bevy_vehicle_tire::LoadedTire::trail_factor)), so the
    /// steering goes light before the tire's side force peaks. A brush tire's is a third of
    /// its contact patch's half-length: about 3 cm for a car tire. 0 (the default) gives no
    /// aligning moment, unless the model gives its own trail (a Magic Formula set's
    /// [`MfAligning`](bevy_vehicle_tire::MfAligning) terms, which grow the trail with the
    /// load; then this stays 0). See [`Tire::trail`].
    #[serde(skip_serializing_if = "is_zero")]
    pub pneumatic_trail: f64,
}

/// Whether a setting is 0 (serde: settings left at 0 are not written).
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl Tire {
    /// The pneumatic trail (m) of this tire, evaluated as `loaded` on a surface of friction
    /// `mu`, at the slips `kappa`, `tan_alpha`: the model's own when its Magic Formula gives
    /// its trail terms ([`TireModel::pneumatic_trail`]), else
    /// [`Tire::pneumatic_trail`] shrunk by the slip as the brush model's
    /// ([`LoadedTire::trail_factor`](bevy_vehicle_tire::LoadedTire::trail_factor)). The
    /// aligning moment is `−trail·F_y` ([`WheelSensors::aligning_torque`]).
    pub fn trail(&self, loaded: &LoadedTire, mu: f64, kappa: f64, tan_alpha: f64) -> f64 {
        if let Some(trail) = self.model.pneumatic_trail(loaded, mu, kappa, tan_alpha) {
            trail
        } else if self.pneumatic_trail != 0.0 {
            self.pneumatic_trail * loaded.trail_factor(kappa, tan_alpha)
        } else {
            0.0
        }
    }
}

impl Default for Tire {
    /// A passenger-car tire: the published 205/60R15 Magic Formula set without its shift terms
    /// (so four of them do not push a symmetric car) and with its lateral peak friction equal
    /// to its longitudinal one (so that on a road of friction μ it brakes and corners at μ at
    /// its nominal load, [`MagicFormula::with_equal_peaks`]) and without its pneumatic trail
    /// (no aligning moment, so a car on default tires handles as the bicycle model of its
    /// axles' forces does; the set's `aligning` terms,
    /// [`MfAligning::passenger_205_60_r15`](bevy_vehicle_tire::MfAligning::passenger_205_60_r15),
    /// add it, as the shipped `passenger_205_60r15.tire.ron` does), relaxation lengths of 0.15 m
    /// longitudinally and 0.5 m laterally (patch stiffnesses `C/σ` of about 570 kN/m fore-aft
    /// and 90 kN/m sideways at the nominal 4 kN load, in the range measured on passenger
    /// tires, which are stiffer fore-aft than sideways), light patch damping (more on a wheel
    /// held at a crawl, see [`Tire::held_damping`]), and 1.2 % rolling resistance.
    fn default() -> Self {
        Tire {
            model: TireModel::MagicFormula(
                MagicFormula::passenger_205_60_r15()
                    .without_shifts()
                    .with_equal_peaks(),
            ),
            relaxation_length: [0.15, 0.5],
            damping: [0.35, 0.2],
            held_damping: 0.65,
            rolling_resistance: 0.012,
            rolling_resistance_quadratic: 0.0,
            pneumatic_trail: 0.0,
        }
    }
}

/// What the ground does under a wheel with a [`Tire`] this step: a state fed by the vehicle, which
/// the chassis writes into [`WheelRuntime::contact`] before every fixed step (the drivetrain holds
/// it constant over the step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WheelContact {
    /// Normal load on the tire (N, ≥ 0; 0 when the wheel is in the air).
    pub load: f64,
    /// Velocity of the wheel centre relative to the ground under it at the start of the step,
    /// in the tire frame: `[forward along the wheel's heading, left]` (m/s).
    pub velocity: [f64; 2],
    /// Rate of change of [`WheelContact::velocity`] (m/s², same frame): the wheel extrapolates
    /// the velocity linearly across the step, so that the slip it integrates matches a chassis
    /// that accelerates during the step (with a constant velocity, an accelerating car's wheels
    /// would run ahead of the ground by half a step's velocity change, and push too hard).
    pub acceleration: [f64; 2],
    /// Friction coefficient of the surface under the tire (dimensionless, ≥ 0).
    pub friction: f64,
    /// How much of the tire's share of the body's mass (`load / g`) a force along the tire's
    /// `[forward, left]` axis at the ground moves (dimensionless, in (0, 1]; 1 by default).
    /// Below 1 when the body's centre of mass stands above the ground: the force also pitches
    /// or rolls the body, so the ground-level point gives more readily than the mass alone
    /// would (`1/(1 + m·h²·a·I⁻¹·a)`, with `m` the body's mass (kg), `h` the height of its
    /// centre of mass above the contact (m), `I` its inertia tensor (kg·m²) and `a` the unit
    /// axis the force turns the body about). On ground that gives way itself (a free body
    /// under the tire) the chassis adds the ground's give to the body's, so the fraction is
    /// of the mass the push really moves between the two. The wheel's floor on its
    /// relaxation lengths for the body is divided by it ([`WheelRuntime::body_relaxation`]).
    /// Out of range or not finite: taken as 1.
    pub body_mass_fraction: [f64; 2],
    /// The tire's share of the mass of the body it carries (kg, ≥ 0): under a chassis, the
    /// body's mass in proportion to this tire's load among its tires. Through it the tire's own
    /// longitudinal force moves the contact within the step ([`WheelRuntime::body_mass`]).
    /// 0 (the default): the road's velocity is prescribed, as on a test drum, and only the
    /// measured acceleration moves it. Not finite or negative: taken as 0.
    pub body_mass: f64,
    /// How far the wheel centre moved over the ground during the last fixed step, in the tire
    /// frame `[forward, left]` halfway between the last step's and this one's, in the heading
    /// the body's integrator turned the body to (m), as the integrator moved it; `None` when
    /// unknown (the wheel has just touched down, the road is prescribed, or the chassis could
    /// not tell: see the chassis's `WheelState::displacement`). A held tire's patch is
    /// anchored to the ground by it ([`WheelRuntime`]'s held patch): its deflection follows
    /// the distance its wheel really moved since it stuck; and so is a standing tire's lateral
    /// slip ([`LATERAL_ANCHOR_SPEED`]). Not finite: taken as `None`.
    pub displacement: Option<[f64; 2]>,
    /// The tire's inclination to the ground (rad, positive when its top leans to its right:
    /// ISO 8855's inclination angle), which its model's camber terms act on
    /// ([`TireModel::at_load_and_camber`](bevy_vehicle_tire::TireModel::at_load_and_camber)).
    /// Not finite: taken as 0.
    pub camber: f64,
    /// Whether the body moves this contact sideways within the step in answer to the tires'
    /// lateral forces, through [`WheelRuntime::lateral_shift`], which the solver sets before
    /// every stage from the body's response to all of the vehicle's tires at once
    /// ([`Drivetrain::set_lateral_mobility`](crate::Drivetrain::set_lateral_mobility), which
    /// the chassis sets each step). The tire's lateral relaxation then needs no floor for the body
    /// ([`WheelRuntime::body_relaxation`]), and its lateral force on the body is the step's
    /// mean ([`WheelRuntime::lateral_body_force`]). `false` (the default): the lateral velocity
    /// is the measured one, carried on at the measured acceleration.
    pub lateral_coupled: bool,
    /// Whether the ground under the tire is a dynamic rigid body. The chassis estimates such
    /// ground's move under the wheel over the last step from its velocity rather than knowing
    /// it, so the tire's lateral slip is not anchored to
    /// [`displacement`](WheelContact::displacement) there (see [`LATERAL_ANCHOR_SPEED`]):
    /// anchored, a car driving off on another's roof at 30 Hz gained a fifth less momentum in
    /// 0.6 s, and one of a pile of cars was thrown 0.1 m higher.
    pub on_dynamic_body: bool,
}

impl Default for WheelContact {
    /// No contact: no load, no velocity, no friction, the whole body's share.
    fn default() -> Self {
        WheelContact {
            load: 0.0,
            velocity: [0.0; 2],
            acceleration: [0.0; 2],
            friction: 0.0,
            body_mass_fraction: [1.0; 2],
            body_mass: 0.0,
            displacement: None,
            camber: 0.0,
            lateral_coupled: false,
            on_dynamic_body: false,
        }
    }
}

/// What the road does to a wheel.
///
/// Torques are about the axle, positive when they turn the wheel forward (positive spin).
#[derive(Clone, Debug, PartialEq)]
pub enum WheelLoad {
    /// No load: the wheel spins freely.
    None,
    /// A constant torque (N·m).
    Torque(f64),
    /// Viscous drag `−coefficient × ω` (coefficient in N·s·m/rad, ≥ 0).
    Viscous(f64),
    /// A road moving at `ground_speed` (m/s) that drags the wheel toward rolling without slip,
    /// `T = −stiffness × (ω − ground_speed / radius)` (stiffness in N·m·s/rad, ≥ 0): a linear
    /// tire on a rolling road.
    Road {
        /// Speed of the road surface under the wheel (m/s).
        ground_speed: f64,
        /// Torque per unit of slip speed (N·m·s/rad, ≥ 0).
        stiffness: f64,
    },
    /// The wheel carries a share of a vehicle's mass and rolls without slip: the mass adds
    /// `mass × radius²` of inertia, and rolling resistance `c_rr·m·g` and aerodynamic drag
    /// `½·ρ·CdA·v²` (v = ω·radius) act at the tire, with standard gravity `g` = 9.80665 m/s²
    /// (the chassis's Rapier world uses Rapier's 9.81). For drivetrain studies without a
    /// chassis.
    Vehicle {
        /// Mass carried by this wheel (kg, ≥ 0).
        mass: f64,
        /// Rolling-resistance coefficient (dimensionless, ≥ 0).
        rolling_resistance: f64,
        /// This wheel's share of drag area `Cd·A` (m², ≥ 0).
        drag_area: f64,
        /// Air density (kg/m³, ≥ 0).
        air_density: f64,
    },
    /// A tire on the ground described by [`WheelRuntime::contact`]: the chassis case. Shared,
    /// since every wheel of an axle usually carries the same tire.
    Tire(Arc<Tire>),
}

/// A wheel: the leaf of a drivetrain, driven through its input or, when nothing drives it,
/// turning freely on its own.
///
/// `I·dω/dt = T_drive + T_load + T_brake`. The brake torque always opposes spin: while rolling
/// it is `−brake_torque × sign(ω)`, with the sign latched once per substep so that it cannot
/// chatter; when the spin reverses within a substep and the brake can hold everything acting
/// on the wheel, the wheel is **held** (exactly still; the upstream pass reports it as held, so
/// the drivetrain behind it sees an immovable load) until the torque needed to hold it exceeds
/// `brake_torque`.
///
/// State: `[angle (rad), spin (rad/s)]`, and with a [`Tire`] also `[κ, tan α]`, the transient
/// slips, and the time since the step began (s), with which the contact velocity is
/// extrapolated ([`WheelContact::acceleration`]). Ports: an optional input.
///
/// # Coupling with the chassis
///
/// The tire's slip states are integrated over the step with the chassis's velocity
/// extrapolated from its last acceleration, and
/// the chassis then receives the tire force at the *end* of the step ([`WheelSensors::force`]).
/// That pairing is symplectic: the tire's contact-patch spring exchanges energy with the chassis
/// without creating any, so a parked car cannot ring itself up. (Applying the force averaged
/// over the step, the obvious alternative, feeds the spring about `ω²h²/4` of energy per step
/// and sets a car at rest into a sideways limit cycle.)
#[derive(Component, Clone, Debug, PartialEq)]
pub struct Wheel {
    /// Inertia of wheel, tire, hub and brake disc about the axle (kg·m², > 0).
    pub inertia: f64,
    /// Rolling radius (m, > 0).
    pub radius: f64,
    /// The road's load on the wheel.
    pub load: WheelLoad,
    /// Input: brake torque capacity this step (N·m, ≥ 0). Clamped.
    pub brake_torque: f64,
}

impl Default for Wheel {
    /// A 16-inch car wheel and tire, no load, brake off.
    fn default() -> Self {
        Wheel {
            inertia: 1.2,
            radius: 0.31,
            load: WheelLoad::None,
            brake_torque: 0.0,
        }
    }
}

/// The brake mode of a [`Wheel`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BrakeMode {
    /// The wheel turns; the brake opposes `direction`, the spin's sign latched for the substep.
    Rolling {
        /// Latched sign of the spin (0 when at rest and not yet moving).
        direction: f64,
    },
    /// The brake grips: the wheel is still.
    Held,
}

impl Default for BrakeMode {
    fn default() -> Self {
        BrakeMode::Rolling { direction: 0.0 }
    }
}

/// Largest `ω·h` allowed for the contact patch's spring on the wheel's own inertia
/// (`ω² = r²·C/(I·σ)`, with `C` the longitudinal slip stiffness (N), `σ` the relaxation length
/// (m), `I` the wheel's inertia (kg·m²) and `h` the substep (s)); see
/// [`WheelRuntime::min_relaxation`]. RK4 is stable up to `ω·h = 2√2` for an undamped
/// oscillation; at 2 it keeps the frequency within 2 % and damps the mode (to 0.75 per
/// substep) rather than letting it grow. No shipped tire reaches it below three times its
/// mean load with the default 1/240 s substep; a tighter bound would lengthen the relaxation
/// of braking tires at ordinary loads, and make a stop near lock-up depend on the substep.
pub const PATCH_SPRING_LIMIT: f64 = 2.0;

/// Largest `ω·dt` allowed for a tire's contact-patch spring on the share of the vehicle's
/// body it moves (`ω² = C·g/(σ·F_z·f)`: the spring `C/σ` on the mass `f·F_z/g`, with `C` the
/// slip stiffness (N), `σ` the relaxation length (m), `F_z` the load (N), `f` the
/// [`WheelContact::body_mass_fraction`] and `dt` the fixed step (s)); see
/// [`WheelRuntime::body_relaxation`].
///
/// The body is moved once per fixed step (by Rapier, with the tire's force held over the
/// step), so where the wheel does not carry the body's give within the step
/// ([`WheelRuntime::body_mass`]: fore and aft only) this spring is integrated explicitly at
/// the fixed step, whatever the substeps. Measured on the shipped cars before that coupling: a
/// held wheel's longitudinal spring rang the car at the step rate below about 35 Hz (a car
/// held on its brakes rocked at ±0.1 m/s at 30 Hz), the lateral spring of a rolling tire below
/// about 14.5 Hz (two steps' phase of the mode near `ω·dt = 1`). 0.8 keeps a margin below
/// both.
pub const BODY_SPRING_LIMIT: f64 = 0.8;

/// Contact speed (m/s) below which a tire takes its [`Tire::held_damping`]: fore and aft
/// while the brake holds the wheel (its forward speed), sideways whether or not it does (the
/// contact's whole speed). A vehicle parked, coming to rest or manoeuvring at a crawl, not a
/// locked wheel skidding or a car sliding.
pub const HELD_DAMPING_SPEED: f64 = 1.0;

/// The finest substep (s) the relaxation floors are taken at: the default 1/240 s (4 substeps
/// at 60 Hz). The floors ([`WheelRuntime::min_relaxation`], and the distance rolled in a
/// substep below which no slip relaxes) keep a stiff tire within what RK4 follows at the
/// substep; taken at a finer substep they would shorten with it, and a stop near lock-up
/// would depend on the number of substeps (the front slip of a hard stop moved by 1 % of its
/// peak between 4 and 8 substeps). At coarser substeps they are taken at the substep itself.
pub const FLOOR_SUBSTEP: f64 = 1.0 / 240.0;

/// Runtime state of a [`Wheel`].
///
/// Laid out in the order written (`repr(C)`): the fields every wheel uses each step come
/// first (up to [`WheelRuntime::contact`]), next to the wheel's settings in its solver cell,
/// so a wheel without a tire touches three cache lines a step rather than eleven (the cell is
/// not aligned to lines), and the solver asks the processor ahead for those alone; with
/// thousands of vehicles, whose data comes from memory, the lines loaded are what a step
/// costs.
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct WheelRuntime {
    /// Brake mode.
    pub mode: BrakeMode,
    /// Brake torque capacity in effect (N·m, ≥ 0): the block's [`Wheel::brake_torque`] input,
    /// taken at the start of each step. A stage hook (see
    /// [`Drivetrain::step_hooked`](crate::Drivetrain::step_hooked)) may change it before any
    /// stage; the brake then applies the new capacity from that stage on.
    pub brake: f64,
    /// The tire's rolling-resistance torque this step (N·m, ≥ 0):
    /// `(rolling_resistance + rolling_resistance_quadratic·v²)·F_z·R` at the step's start
    /// (`v = R·ω`), 0 without a tire or a load. The wheel takes it as it takes its brake
    /// capacity: a torque against the spin while the wheel turns, and at rest a hold up to it
    /// together with the brake.
    ///
    /// Until 2026-12-02 it faded out linearly below 0.5 rad/s of spin, which made it a
    /// viscous drag at a crawl: a car left free crept down any grade, however gentle, at
    /// `v = 0.5 rad/s·R·grade/coefficient` (4 cm/s on 0.3 %, the same at every rate).
    pub rolling: f64,
    /// Drive torque from outside the block graph (N·m, positive forward), acting on a wheel that
    /// no block drives. Zero at the start of each step; a stage hook may set it before any
    /// stage.
    pub drive: f64,
    /// How far the wheel has been steered since its contact was measured (rad, positive left):
    /// see [`WheelRuntime::set_steer`].
    steer: f64,
    /// Length of the current substep (s), which bounds how fast the slips may relax.
    pub substep: f64,
    /// The wheel's spin once the step's start has settled (rad/s): after `begin_step` and the
    /// momentum pass a state set by hand asks for, before the first substep. With the spin
    /// at the step's end it gives the change the step's torques made, whose reaction the
    /// chassis hands the body while the wheel is in the air.
    pub spin_at_step_start: f64,
    /// State fed by the chassis each step: the ground contact under the tire.
    pub contact: WheelContact,
    /// The tire model at this step's load and friction.
    pub tire: LoadedTire,
    /// Peak forces `[longitudinal, lateral]` of the tire at this step's load and friction
    /// (N, ≥ 0): the contact-patch damping may add to the tire's force only up to these (or
    /// up to the force without damping, where that is larger).
    pub peak_force: [f64; 2],
    /// Slips `[κ, tan α]` at which the tire's pure-slip forces peak at this step's load and
    /// friction (dimensionless, ≥ 0; see [`LoadedTire::peak_slip`]). Past them the force falls:
    /// what an anti-lock or traction control measures a tire's slip against. The peak slip
    /// shrinks with the road's friction (a tire's slip stiffness does not change with it): on
    /// ice a tire peaks at about a tenth of its dry-road slip.
    pub peak_slip: [f64; 2],
    /// Shortest longitudinal relaxation length this step (m), `r²·C·h²/(I·L²)` with
    /// `L` = [`PATCH_SPRING_LIMIT`] and `h` the substep, taken no finer than
    /// [`FLOOR_SUBSTEP`]: see [`WheelRuntime::damping`].
    pub min_relaxation: f64,
    /// Shortest relaxation lengths `[longitudinal, lateral]` this step for the contact-patch
    /// spring on the body (m): `C·g·dt²/(F_z·f·L²)` with `L` = [`BODY_SPRING_LIMIT`], `dt` the
    /// fixed step and `f` the contact's [`WheelContact::body_mass_fraction`], so the spring's
    /// frequency on the share of the body the tire moves (`f·F_z/g`: its share of the mass,
    /// less what pitching and rolling give way) stays within `L` per fixed step.
    ///
    /// The lateral one applies unless the contact is
    /// [lateral-coupled](WheelContact::lateral_coupled) (the body then answers the tire within
    /// the substeps). The longitudinal one applies on a prescribed road only
    /// (a tire coupled to the body through [`WheelRuntime::body_mass`], rolling or held,
    /// pushes it within the substeps and needs none; until 2026-11-27 a coupled rolling tire
    /// kept the fade-out below, which delayed a launch's grip at low rates): while the brake
    /// holds the wheel, and while it rolls fading out linearly toward the critical speed (m/s),
    /// where
    /// the patch relaxes as fast as its spring rings on the body: `|vx|/σ = 2ω`, so
    /// `|vx| = 2·σ·ω` with `ω² = C·g/(σ·f·F_z)` and the tire's own `σ` (12 m/s for the shipped
    /// cars' tires, 15-17 m/s for the tractor unit's, 20 m/s under the excavator's road
    /// wheels). Faster, the tire pushes the
    /// body as a damper (`C/|vx|`), which the fixed step integrates stably
    /// (`C·dt/(|vx|·m) ≤ ω·dt/2`). Slower, it is a spring on the body whenever the wheel's
    /// spin does not give way to it within the substeps: a light free wheel's does, but one
    /// held through a low gear, a governed drive or a track does not, and the wheel cannot
    /// tell which (a fixed fade-out at 0.5 m/s left the excavator's track-held road wheels
    /// ringing its body: at 20 Hz it veered 3.2 m aside in a 9.8 m straight run).
    ///
    /// At 60 Hz no shipped tire reaches either floor (for the default car, `f` 0.85 fore and
    /// aft and 0.63 sideways, a tire's longitudinal one is 0.11 m at 60 Hz, 0.44 m at 30 Hz,
    /// against its 0.15 m; its lateral one 0.31 m at 30 Hz, 0.70 m at 20 Hz, against 0.5 m):
    /// they lengthen the relaxation only at low fixed-step rates, where the tire would
    /// otherwise push the body unstably.
    pub body_relaxation: [f64; 2],
    /// Contact-patch damping per unit load used this step `[longitudinal, lateral]` (s/m).
    ///
    /// Under a large load (a landing, a crash) the patch spring and damper acting on the
    /// wheel's own inertia get faster than a substep can follow, and explicit integration would
    /// blow up. For this step the longitudinal relaxation length is kept long enough that the
    /// patch spring's frequency stays within [`PATCH_SPRING_LIMIT`] per substep (`ω·h ≤ 2`),
    /// and the damping low enough that its rate stays within one per substep (`c/I · h ≤ 1`).
    /// At ordinary loads neither bound is reached. A wheel the brake holds does not turn, so
    /// neither applies to it (see [`WheelRuntime::held_damping`]). Sideways it is the tire's
    /// `damping[1]`, plus its [`Tire::held_damping`] while the contact started the step
    /// slower than [`HELD_DAMPING_SPEED`].
    pub damping: [f64; 2],
    /// The mass the tire's longitudinal force moves this step (kg, ≥ 0): the contact's
    /// [`WheelContact::body_mass`] times its fore-and-aft
    /// [`WheelContact::body_mass_fraction`], no lighter than keeps the patch spring on it
    /// within [`PATCH_SPRING_LIMIT`] per substep (`C·h²/(σ·L²)`: 2.5 kg for a car tire at
    /// 4 kN and the default substep); 0 on a prescribed road.
    ///
    /// Within a step the contact's forward velocity is the measured one, carried on at the
    /// measured acceleration, plus what the tire's force adds beyond the force the body took
    /// over the last step ([`WheelRuntime::body_force`]): `dv/dt = (Fx − body_force)/body_mass`,
    /// a state of the wheel. A stiff tire then pushes the body back within the substeps, as
    /// the body really gives way, rather than once per fixed step; and the chassis applies the
    /// step's mean force, so the body's change of momentum over the step is the one the tire
    /// rolled on. The measured acceleration carries everything else the body feels (the other
    /// tires, gravity, the suspension). Stable at any step while the mass does not exceed the
    /// one the tire really moves, as the load share and the fraction keep it where the tires
    /// push together (the body's surge and pitch); see `docs/contact_coupling.md` for a light
    /// vehicle that still rocks at 15 Hz.
    pub body_mass: f64,
    /// The tire's longitudinal force on the body over the last step (N, tire frame, the step's
    /// mean): what the body's measured acceleration already holds. See
    /// [`WheelRuntime::body_mass`].
    pub body_force: f64,
    /// `1 / body_mass` (1/kg), or 0 on a prescribed road: what the stages multiply by.
    inverse_body_mass: f64,
    /// The tire's lateral force on the body over the last step (N, tire frame, the step's
    /// mean) while its contact is [lateral-coupled](WheelContact::lateral_coupled): what the
    /// body's measured acceleration already holds. The wheel's seventh state integrates the
    /// lateral force beyond it over the step (N·s), the lateral impulse the body answers
    /// ([`WheelRuntime::lateral_shift`]).
    pub lateral_body_force: f64,
    /// How much faster the contact moves to the left at this stage than the measured velocity
    /// carried on at the measured acceleration (m/s, tire frame), because the tires' lateral
    /// forces changed since the last step: set by the solver before each stage from the
    /// vehicle's lateral mobility
    /// ([`Drivetrain::set_lateral_mobility`](crate::Drivetrain::set_lateral_mobility)) and its
    /// tires' lateral impulses, 0 at each step's start.
    pub lateral_shift: f64,
    /// Longitudinal patch damping per unit load added while the brake holds the wheel this step
    /// (s/m, ≥ 0): the tire's [`Tire::held_damping`] when the contact started the step slower
    /// than [`HELD_DAMPING_SPEED`] (else 0), plus whatever the bound on the wheel's own inertia
    /// took off `damping[0]` ([`WheelRuntime::damping`]): a held wheel does not turn, and its
    /// patch damper acts on the body alone.
    pub held_damping: f64,
    /// The contact's velocity and acceleration as measured, before any steering turn
    /// (tire frame, m/s and m/s²).
    measured: [[f64; 2]; 2],
    /// The tire's relaxation lengths with this step's floors (m): `[longitudinal while the
    /// wheel rolls, longitudinal while the brake holds it, lateral]`, so that a stage only
    /// adds the distance rolled in a substep. The held one has no floor for the wheel's own
    /// inertia ([`WheelRuntime::min_relaxation`]): a held wheel does not turn. (With it, a
    /// car on 0.01 kg·m² wheels stopped on its brakes rocked on its held tires' relaxation
    /// lengthened to metres, at 0.65 m/s, for good.)
    floored_relaxation: [f64; 3],
    /// A held tire's patch at the start of the last step, `[angle, κ, drift]`: the wheel's
    /// angle (rad), its longitudinal slip state (dimensionless) and the distance the wheel had
    /// drifted from where the state puts it (m), kept while the tire carries a load and its
    /// patch sticks (within its peak slip). See [`anchor_held_patch`].
    held_patch: Option<[f64; 3]>,
}

impl WheelRuntime {
    /// [`WheelRuntime::substep`] taken no finer than [`FLOOR_SUBSTEP`] (s): the substep the
    /// relaxation floors are taken at.
    #[inline]
    fn floor_substep(&self) -> f64 {
        self.substep.max(FLOOR_SUBSTEP)
    }

    /// Turns the tire's frame by `turn` (rad, positive left) from the frame its contact was
    /// measured in: the contact velocity and acceleration are rotated into the turned frame,
    /// so the tire's slips follow a wheel steered during the step. Setting the same turn again
    /// costs nothing; the turn is cleared at the start of each step.
    pub fn set_steer(&mut self, turn: f64) {
        if turn == self.steer || !turn.is_finite() {
            return;
        }
        self.steer = turn;
        let (s, c) = turn.sin_cos();
        let rotate = |[x, y]: [f64; 2]| [x * c + y * s, y * c - x * s];
        self.contact.velocity = rotate(self.measured[0]);
        self.contact.acceleration = rotate(self.measured[1]);
    }

    /// The turn set by [`WheelRuntime::set_steer`] this step (rad, positive left).
    pub fn steer(&self) -> f64 {
        self.steer
    }
}

/// What a [`Wheel`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct WheelSensors {
    /// Spin (rad/s).
    pub speed: f64,
    /// Angle turned since the start (rad).
    pub angle: f64,
    /// Surface speed, spin × radius (m/s).
    pub surface_speed: f64,
    /// Drive torque arriving from the drivetrain (N·m).
    pub drive_torque: f64,
    /// Brake torque acting (N·m, signed; opposes spin).
    pub brake_torque: f64,
    /// Load torque from the road, tire force and rolling resistance included (N·m).
    pub load_torque: f64,
    /// Whether the brake holds the wheel still.
    pub held: bool,
    /// Tire: transient longitudinal slip ratio κ (dimensionless), `(ω·r − v)/|v|` relaxed:
    /// the sign of the tire's force along the wheel's forward direction (positive driving
    /// forward and braking in reverse).
    pub slip_ratio: f64,
    /// Tire: transient slip angle (rad), positive when the tire pushes left.
    pub slip_angle: f64,
    /// Tire: force of the ground on the tire over the last step, in the tire frame
    /// `[forward, left]` (N): what the chassis applies to the body. Forward, the step's mean
    /// when the contact carries the body's mass ([`WheelRuntime::body_mass`]: the force the
    /// body's momentum changed by over the step), else the force at the step's end; sideways
    /// likewise, the step's mean while the body answers the tire's side force within the step
    /// ([`WheelContact::lateral_coupled`]), else the force at the step's end.
    pub force: [f64; 2],
    /// Tire: aligning moment of the ground on the tire about the contact normal at the
    /// step's end (N·m, positive turning the wheel to its left, seen from above):
    /// `−t·F_y`, `t` the pneumatic trail at the tire's slips ([`Tire::trail`]).
    /// It turns a slipping tire back towards its direction of travel; on a steered wheel it is
    /// what the steering feels of the road. 0 without a trail.
    pub aligning_torque: f64,
    /// Tire: normal load (N).
    pub load: f64,
}

/// One tire evaluation: forces and slip derivatives.
#[derive(Clone, Copy, Debug, Default)]
struct TireStage {
    fx: f64,
    fy: f64,
    slip_rate: f64,
    tan_slip_rate: f64,
}

impl Wheel {
    /// Inertia about the axle including any vehicle mass the load carries (kg·m²).
    pub fn effective_inertia(&self) -> f64 {
        match self.load {
            WheelLoad::Vehicle { mass, .. } => self.inertia + mass * self.radius * self.radius,
            _ => self.inertia,
        }
    }

    /// How fast the simple load alone would bring the wheel's spin to where it balances
    /// (1/s): the load's torque per unit of spin over [`Wheel::effective_inertia`], for a
    /// [`WheelLoad::Viscous`] drag or a [`WheelLoad::Road`]; 0 for the other loads (a tire's
    /// stiffness is held by its own relaxation). The drivetrain keeps its substeps short
    /// enough for it (see [`Drivetrain::substeps_within`](crate::Drivetrain::substeps_within)).
    pub fn load_rate(&self) -> f64 {
        let per_spin = match self.load {
            WheelLoad::Viscous(c) => c,
            WheelLoad::Road { stiffness, .. } => stiffness,
            _ => return 0.0,
        };
        per_spin / self.effective_inertia()
    }

    /// Load torque of the simple loads at spin `speed` (rad/s) (N·m); 0 for a tire, whose
    /// torque depends on its slip state (see [`Tire`]).
    #[inline]
    pub fn load_torque(&self, speed: f64) -> f64 {
        match self.load {
            WheelLoad::None | WheelLoad::Tire(_) => 0.0,
            WheelLoad::Torque(t) => t,
            WheelLoad::Viscous(c) => -c * speed,
            WheelLoad::Road {
                ground_speed,
                stiffness,
            } => -stiffness * (speed - ground_speed / self.radius),
            WheelLoad::Vehicle {
                mass,
                rolling_resistance,
                drag_area,
                air_density,
            } => {
                let v = speed * self.radius;
                let rolling = rolling_resistance
                    * mass
                    * GRAVITY
                    * (v * (1.0 / ROLLING_BLEND_SPEED)).clamp(-1.0, 1.0);
                let drag = 0.5 * air_density * drag_area * v * v.abs();
                -(rolling + drag) * self.radius
            }
        }
    }

    /// The brake torque input as a capacity (N·m, ≥ 0).
    #[inline]
    fn brake_capacity(&self) -> f64 {
        clamp_input(self.brake_torque, 0.0, f64::MAX, 0.0)
    }

    fn state_len_for(load: &WheelLoad) -> usize {
        match load {
            WheelLoad::Tire(_) => 7,
            _ => 2,
        }
    }

    /// Tire forces and slip derivatives at `state` (spin `omega` overrides `state[1]`), given
    /// the steady-state forces `[fx, fy]` (N) of the loaded tire at the state's slips
    /// ([`Wheel::tire_slips`]). The stages need only `fx`, for the wheel's torque, and pass
    /// `fy = 0`; the chassis takes `fy` once, from the sensors.
    #[inline(always)]
    fn tire_stage(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        omega: f64,
        [fx, fy]: [f64; 2],
    ) -> TireStage {
        let load = rt.tire.load();
        if load <= 0.0 {
            // Off the ground the patch stays undeflected (cleared in `begin_step`), and an
            // unloaded tire has no force for a damper to add to.
            return TireStage {
                fx,
                fy,
                slip_rate: 0.0,
                tan_slip_rate: 0.0,
            };
        }
        let (slip, tan_slip) = (state[2], state[3]);
        let ([mut slip_rate, mut tan_slip_rate], sigma) = self.slip_rates(rt, state, omega);
        if (slip >= SLIP_LIMIT && slip_rate > 0.0) || (slip <= -SLIP_LIMIT && slip_rate < 0.0) {
            slip_rate = 0.0;
        }
        if (tan_slip >= TAN_SLIP_LIMIT && tan_slip_rate > 0.0)
            || (tan_slip <= -TAN_SLIP_LIMIT && tan_slip_rate < 0.0)
        {
            tan_slip_rate = 0.0;
        }
        // The patch damper acts through the contact, which passes no more than the friction
        // peak: it may not push the force beyond it. (Uncapped, a spinning wheel's slip
        // swinging from stage to stage drew force from the damper alone: a hatchback's front
        // tire pulled twice the road's friction at launch, and a stiff slip-limiting brake
        // stopped a car 14 % shorter than friction allows.)
        let limit = [
            rt.peak_force[0].max(fx.abs()),
            rt.peak_force[1].max(fy.abs()),
        ];
        let damping = match rt.mode {
            BrakeMode::Held => rt.damping[0] + rt.held_damping,
            BrakeMode::Rolling { .. } => rt.damping[0],
        };
        let mut damper = [
            damping * load * sigma[0] * slip_rate,
            rt.damping[1] * load * sigma[1] * tan_slip_rate,
        ];
        // Both ways at once, where both forces act on the body: the damper takes the force no
        // further than the friction ellipse through the two peaks (or the undamped force's
        // own, where that lies outside it). Capped one way at a time, trail braking on μ 0.3
        // took a tire's force 2–6 % past its peak.
        let [dx, dy] = rt.peak_force;
        if rt.contact.lateral_coupled {
            // Outside the ellipse, `(x/dx)² + (y/dy)² > 1`, without dividing (a stage's path).
            let (x, y) = ((fx + damper[0]) * dy, (fy + damper[1]) * dx);
            let edge = dx * dy;
            if x * x + y * y > edge * edge && edge > 0.0 {
                // `reach(f + t·damper)` is `a·t² + b·t + reach(f)`, in units of the ellipse.
                let (ux, uy) = (1.0 / (dx * dx), 1.0 / (dy * dy));
                let a = damper[0] * damper[0] * ux + damper[1] * damper[1] * uy;
                let b = 2.0 * (fx * damper[0] * ux + fy * damper[1] * uy);
                let reached = fx * fx * ux + fy * fy * uy;
                let c = reached - reached.max(1.0);
                if a > 0.0 && a + b + c > 0.0 {
                    // The share of the damper that reaches the ellipse (`c ≤ 0`: a root in
                    // [0, 1]).
                    let t = (-b + (b * b - 4.0 * a * c).max(0.0).sqrt()) / (2.0 * a);
                    damper = damper.map(|d| d * t.clamp(0.0, 1.0));
                }
            }
        }
        let damped = [fx + damper[0], fy + damper[1]];
        TireStage {
            fx: damped[0].max(-limit[0]).min(limit[0]),
            fy: damped[1].max(-limit[1]).min(limit[1]),
            slip_rate,
            tan_slip_rate,
        }
    }

    /// How fast the tire's slip states `[κ, tan α]` move (1/s) at `state` with spin `omega`
    /// (rad/s), before the limits on the slips, and the relaxation lengths `[σ_κ, σ_α]` (m)
    /// they move with: `σ·dκ/dt = R·ω − vx − |vx|·κ` and `σ·ds/dt = −vy − |vx|·s`, with the
    /// tire's lengths, floored as below and shortened past the tire's peak by [`past_peak`].
    #[inline(always)]
    fn slip_rates(&self, rt: &WheelRuntime, state: &[f64], omega: f64) -> ([f64; 2], [f64; 2]) {
        let (slip, tan_slip) = (state[2], state[3]);
        let [vx, vy] = Self::road_velocity(rt, state);
        let abs_vx = vx.abs();
        // At speed the slips relax within σ/|vx|, less than a substep: no physics is lost by
        // relaxing them over one substep instead, which keeps RK4 stable (|vx|/σ · h ≤ 1).
        // The longitudinal patch spring also stays within its bound on the wheel
        // (`min_relaxation`). Both floors are taken at no finer a substep than
        // `FLOOR_SUBSTEP`.
        let rolled = abs_vx * rt.floor_substep();
        // The held and the rolling wheel's floors differ (`floored_relaxation`, set in
        // `begin_step`: on a prescribed road a held wheel's patch spring pushes the body alone,
        // and a slow rolling one's may; coupled to the body's mass, a held one needs none).
        let longitudinal = match rt.mode {
            BrakeMode::Rolling { .. } => rt.floored_relaxation[0],
            BrakeMode::Held => rt.floored_relaxation[1],
        };
        let sigma = [
            longitudinal.max(rolled),
            rt.floored_relaxation[2].max(rolled),
        ];
        let drive = [
            self.radius * omega - vx - abs_vx * slip,
            -vy - abs_vx * tan_slip,
        ];
        // Past the peak, no shorter than those floors; a sideways slide also moves the
        // lateral slip by at most one per substep there (`|vy|·h/σ ≤ 1`).
        let floor = [
            rolled.max(rt.min_relaxation),
            rolled.max(vy.abs() * rt.substep),
        ];
        let sigma = [
            past_peak(sigma[0], floor[0], rt.peak_slip[0], slip, drive[0]),
            past_peak(sigma[1], floor[1], rt.peak_slip[1], tan_slip, drive[1]),
        ];
        ([drive[0] / sigma[0], drive[1] / sigma[1]], sigma)
    }

    /// The road's velocity under the tire `[vx, vy]` (m/s, tire frame) at `state`: the
    /// contact's, carried on at its acceleration for the time into the step (`state[4]`, s),
    /// plus what the tire's own force added beyond the last step's (`state[5]`, m/s; see
    /// [`WheelRuntime::body_mass`]) and, sideways, what the tires' lateral forces added
    /// ([`WheelRuntime::lateral_shift`]).
    #[inline]
    fn road_velocity(rt: &WheelRuntime, state: &[f64]) -> [f64; 2] {
        let c = &rt.contact;
        let time = state[4];
        [
            c.velocity[0] + c.acceleration[0] * time + state[5],
            c.velocity[1] + c.acceleration[1] * time + rt.lateral_shift,
        ]
    }

    /// The tire's mean lateral force on the body over the step that ended at `state` (N,
    /// tire frame), or `None` unless its contact is
    /// [lateral-coupled](WheelContact::lateral_coupled) and the step has run.
    #[inline]
    fn mean_lateral_body_force(rt: &WheelRuntime, state: &[f64]) -> Option<f64> {
        (rt.contact.lateral_coupled && state[4] > 0.0)
            .then(|| rt.lateral_body_force + state[6] / state[4])
    }

    /// The tire's mean longitudinal force on the body over the step that ended at `state` (N,
    /// tire frame), or `None` on a prescribed road or before the step has run: the force at
    /// the step's start plus the body's share of mass times the velocity the tire's force added
    /// beyond it, over the step's length. See [`WheelRuntime::body_mass`].
    #[inline]
    fn mean_body_force(rt: &WheelRuntime, state: &[f64]) -> Option<f64> {
        (rt.body_mass > 0.0 && state[4] > 0.0)
            .then(|| rt.body_force + rt.body_mass * state[5] / state[4])
    }

    /// How fast the tire's longitudinal slip state moves at `state` (1/s), before the tire
    /// stage's limit on the slip. `None` without a tire.
    pub(crate) fn slip_rate(&self, rt: &WheelRuntime, state: &[f64]) -> Option<f64> {
        let WheelLoad::Tire(_) = &self.load else {
            return None;
        };
        Some(self.slip_rates(rt, state, state[1]).0[0])
    }

    /// The tire's slips `[κ, tan α]` (dimensionless) at `state`, where a stage evaluates the
    /// loaded tire.
    #[inline]
    pub(crate) fn tire_slips(state: &[f64]) -> [f64; 2] {
        [state[2], state[3]]
    }

    /// Rolling-resistance torque capacity of a tire at load `load` (N) and spin `omega`
    /// (rad/s) (N·m, ≥ 0): see [`WheelRuntime::rolling`].
    #[inline]
    fn rolling_capacity(&self, tire: &Tire, load: f64, omega: f64) -> f64 {
        let v = self.radius * omega;
        (tire.rolling_resistance + tire.rolling_resistance_quadratic * v * v)
            * load.max(0.0)
            * self.radius
    }

    /// The torque driving the wheel (N·m): its input shaft's, or on a wheel no block drives,
    /// the outside drive ([`WheelRuntime::drive`]), as [`Wheel::downstream_loaded`] takes it.
    #[inline]
    fn drive_torque(rt: &WheelRuntime, shafts: &Shafts) -> f64 {
        shafts.input.map_or(rt.drive, |s| s.down.torque)
    }

    /// What holds the wheel against its spin (N·m, ≥ 0): the brake capacity in effect and
    /// the tire's rolling resistance.
    #[inline]
    pub(crate) fn resisting(rt: &WheelRuntime) -> f64 {
        rt.brake + rt.rolling
    }

    /// Road and tire torque on the wheel (N·m), writing the tire's state derivatives when
    /// `derivative` is given. A tire's rolling resistance is not in it: the wheel takes it
    /// with its brake ([`WheelRuntime::rolling`]).
    #[inline]
    fn road_torque(&self, rt: &WheelRuntime, state: &[f64], derivative: Option<&mut [f64]>) -> f64 {
        match &self.load {
            WheelLoad::Tire(_) => self.evaluated_tire_torque(rt, state, derivative),
            _ => self.load_torque(state[1]),
        }
    }

    /// [`Wheel::road_torque`] of a wheel with a tire, evaluating the tire. Kept out of line:
    /// the solver evaluates its tires ahead of the passes ([`Wheel::stage_load_with`]), so only
    /// the trait functions and sensors come here, and inlined it would weigh down the simple
    /// loads' path with its stack frame.
    #[inline(never)]
    fn evaluated_tire_torque(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        derivative: Option<&mut [f64]>,
    ) -> f64 {
        let [slip, tan_slip] = Self::tire_slips(state);
        let forces = if rt.contact.lateral_coupled {
            rt.tire.forces(slip, tan_slip)
        } else {
            [rt.tire.longitudinal_force(slip, tan_slip), 0.0]
        };
        self.tire_torque(rt, state, derivative, forces)
    }

    /// [`Wheel::road_torque`] of a wheel with a tire, given the loaded tire's forces
    /// `[fx, fy]` (N) at [`Wheel::tire_slips`] (`fy` is only read while the contact is
    /// [lateral-coupled](WheelContact::lateral_coupled)). Always inlined: it is the solver's per-stage
    /// tire path ([`Wheel::stage_load_with`]), and left to the compiler it was called out of line
    /// once it grew the contact's velocity state (2.7 % more instructions for a whole vehicle).
    #[inline(always)]
    fn tire_torque(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        derivative: Option<&mut [f64]>,
        [fx, fy]: [f64; 2],
    ) -> f64 {
        let omega = state[1];
        // The lateral force only where the body answers it within the step.
        let fy = if rt.contact.lateral_coupled { fy } else { 0.0 };
        let t = self.tire_stage(rt, state, omega, [fx, fy]);
        if let Some(d) = derivative {
            d[2] = t.slip_rate;
            d[3] = t.tan_slip_rate;
            d[4] = 1.0;
            d[5] = (t.fx - rt.body_force) * rt.inverse_body_mass;
            d[6] = if rt.contact.lateral_coupled {
                t.fy - rt.lateral_body_force
            } else {
                0.0
            };
        }
        -self.radius * t.fx
    }

    /// The part of a torque-pass stage that depends only on the wheel's own state, not on its
    /// brake mode or on the drivetrain: writes the derivatives of the angle and of the tire's
    /// states, and returns the road and tire torque (N·m) for [`Wheel::reaction`].
    ///
    /// This, [`Wheel::downstream_loaded`] and [`Wheel::tire_stage`] are always inlined: left
    /// to the compiler, the passes called them out of line at every stage, and the drivetrain
    /// benchmark took 6 % more instructions (9 % with the differential's and the engine's
    /// stage functions, inlined since too; 2026-12-06).
    #[inline(always)]
    pub(crate) fn stage_load(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        derivative: &mut [f64],
    ) -> f64 {
        derivative[0] = state[1];
        self.road_torque(rt, state, Some(derivative))
    }

    /// [`Wheel::stage_load`] of a wheel with a tire, given the loaded tire's forces
    /// `[fx, fy]` (N) at [`Wheel::tire_slips`] (`fy` read only while the contact is
    /// [lateral-coupled](WheelContact::lateral_coupled)): the solver evaluates all its tires
    /// at once
    /// ([`LoadedTire::longitudinal_forces`](bevy_vehicle_tire::LoadedTire::longitudinal_forces),
    /// or [`LoadedTire::forces_lanes`](bevy_vehicle_tire::LoadedTire::forces_lanes) when a
    /// contact is lateral-coupled), ahead of the passes, and keeps the torques while the state
    /// stays the same (a mode change elsewhere re-runs the passes, not the tires). Without a
    /// tire, the forces are ignored.
    #[inline]
    pub(crate) fn stage_load_with(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        derivative: &mut [f64],
        forces: [f64; 2],
    ) -> f64 {
        derivative[0] = state[1];
        match &self.load {
            WheelLoad::Tire(_) => self.tire_torque(rt, state, Some(derivative), forces),
            _ => self.load_torque(state[1]),
        }
    }

    /// The wheel as its drive shaft sees it, given the road torque `road` (N·m) from
    /// [`Wheel::stage_load`] (ignored in a momentum pass). In a momentum pass it zeroes
    /// `derivative`; in a torque pass it writes nothing (the spin's derivative is written
    /// downstream).
    #[inline]
    pub(crate) fn reaction(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        stage: &StageContext,
        road: f64,
        derivative: &mut [f64],
    ) -> ShaftUp {
        let speed = state[1];
        let inertia = self.effective_inertia();
        if stage.pass == Pass::Momentum {
            derivative.fill(0.0);
            return match rt.mode {
                BrakeMode::Held => ShaftUp::HELD,
                BrakeMode::Rolling { .. } => ShaftUp {
                    momentum: inertia * speed,
                    inertia,
                    reaction: inertia * speed,
                },
            };
        }
        match rt.mode {
            BrakeMode::Held => ShaftUp::HELD,
            BrakeMode::Rolling { direction } => ShaftUp::rigid(
                inertia,
                speed,
                Self::rolling_reaction(road, direction, Self::resisting(rt)),
            ),
        }
    }

    /// A rolling wheel's reaction torque (N·m): the road torque `road` less what holds it,
    /// `resisting` ([`Wheel::resisting`]), against its latched spin `direction`; for one
    /// vehicle or a batch's lanes.
    #[inline(always)]
    pub(crate) fn rolling_reaction<T: Num>(road: T, direction: T, resisting: T) -> T {
        road - direction * resisting
    }

    /// A rolling wheel's spin acceleration (rad/s²) under drive torque `drive` and its
    /// reaction `reaction` (N·m) on its effective inertia `inertia` (kg·m²); for one vehicle
    /// or a batch's lanes.
    #[inline(always)]
    pub(crate) fn spin_acceleration<T: Num>(drive: T, reaction: T, inertia: T) -> T {
        (drive + reaction) / inertia
    }

    /// [`Block::downstream`] given the road torque `road` (N·m) from [`Wheel::stage_load`].
    #[inline(always)]
    pub(crate) fn downstream_loaded(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        road: f64,
        derivative: &mut [f64],
    ) {
        let speed = state[1];
        // A driven wheel described itself in the upstream pass; a free wheel does it now. The
        // outside drive is a torque: it has no part in a momentum pass, whose shafts carry
        // impulses (taken as one, it threw a module-driven wheel that came to rest on its
        // brake or its rolling resistance to 250 rad/s).
        let (up, drive) = match input {
            Some(shaft) => (shaft.up, shaft.down.torque),
            None => (
                self.reaction(rt, state, stage, road, derivative),
                match stage.pass {
                    Pass::Torque => rt.drive,
                    Pass::Momentum => 0.0,
                },
            ),
        };
        derivative[1] = match (rt.mode, stage.pass) {
            (BrakeMode::Held, Pass::Torque) => 0.0,
            (BrakeMode::Held, Pass::Momentum) => -speed,
            // `up` holds the effective inertia and the road plus brake torque (the momentum, in
            // a momentum pass).
            (BrakeMode::Rolling { .. }, Pass::Torque) => {
                Self::spin_acceleration(drive, up.reaction, up.inertia)
            }
            (BrakeMode::Rolling { .. }, Pass::Momentum) => drive / up.inertia,
        };
        if stage.pass == Pass::Torque {
            // Written here as well as in `stage_load`: the mode may have changed since.
            derivative[0] = if rt.mode == BrakeMode::Held {
                0.0
            } else {
                speed
            };
        }
    }

    /// The road torque of a stage run through the [`Block`] trait: computed here in a torque
    /// pass (the solver computes it ahead for its wheels with a tire).
    #[inline]
    fn trait_stage_load(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        stage: &StageContext,
        derivative: &mut [f64],
    ) -> f64 {
        match stage.pass {
            Pass::Torque => self.stage_load(rt, state, derivative),
            Pass::Momentum => 0.0,
        }
    }

    /// [`Block::update_modes`] of a wheel rolling in `direction` (−1, 0 or 1), at spin `speed`
    /// (rad/s): for one vehicle, or for a lane of the batched step.
    #[inline(always)]
    pub(crate) fn update_rolling(rt: &mut WheelRuntime, direction: f64, speed: f64) -> ModeChange {
        let spin = sign(speed);
        if Self::resisting(rt) == 0.0 {
            // No brake: the latched direction changes nothing in the stage functions.
            rt.mode = BrakeMode::Rolling { direction: spin };
            return ModeChange::Unchanged;
        }
        let reversed = direction != 0.0 && spin == -direction;
        let at_rest = direction == 0.0 && spin == 0.0;
        if reversed || at_rest {
            rt.mode = BrakeMode::Held;
            ModeChange::Impulsive
        } else if direction == 0.0 {
            rt.mode = BrakeMode::Rolling { direction: spin };
            ModeChange::Smooth
        } else {
            ModeChange::Unchanged
        }
    }
}

/// The relaxation length (m) of a tire slip state `slip` (κ or tan α, dimensionless) whose
/// tire peaks at slip `peak`, moving at `drive / σ` (`drive` = σ × its rate, m/s), given the
/// tire's length `sigma` (m) and the shortest length the integrator takes, `floor` (m).
///
/// A slip state stands for the contact patch's deflection, `u = σ·slip`. Past the peak the
/// patch slides: it holds little more deflection than at its peak, and the slip beyond is
/// mostly the tread sliding over the road, which follows the wheel and the road at once rather
/// than relaxing as the tire rolls. So while the state lies past the peak and moves back
/// toward it (`drive·slip < 0`), it relaxes over `σ·(peak/slip)²` instead of `σ`: the whole
/// length at the peak, so a tire worked at its peak (braking, a traction control, cornering)
/// relaxes as before, and ever shorter beyond it, down to `floor`. Winding up past the peak
/// keeps `σ`, so spinning up, locking and sliding out take as long as before. Coming back
/// within a step, the slip past the peak gives back at most `σ·peak` of deflection, as much
/// again as the tire holds at its peak; at the next step's start a state that has stuck again
/// is taken to the rising side of its curve (see [`stick_again`]).
///
/// Without this a tire kept whatever it had slid as deflection, and gave it back. A truck tire
/// that had spun past its peak at a crawl unwound its excess over `σ/|vx|` (1.5 s at 0.3 m/s):
/// long after its wheel had slowed to the road's speed it still pushed with its sliding force,
/// the traction control read it as spin and kept cutting the drive, and the tractor unit on
/// ice crept to 2.2 km/h in 11 s (now first gear's 7.9 km/h). A car slid sideways to a stop
/// sprang back by most of the slide, 0.6 m on a dry road and 2.2 m on ice, as if on a rubber
/// band.
#[inline(always)]
fn past_peak(sigma: f64, floor: f64, peak: f64, slip: f64, drive: f64) -> f64 {
    if drive * slip < 0.0 && slip.abs() > peak && floor > 0.0 {
        let past = peak / slip.abs();
        (sigma * past * past).max(floor).min(sigma)
    } else {
        sigma
    }
}

/// Takes a tire slip state (`state[2]`, `state[3]`: κ and tan α) that lies past its peak
/// while the road and the wheel under it now slip less than the peak, or the other way, to
/// the rising side of its curve at the force it slid with
/// ([`LoadedTire::rising_slips`](bevy_vehicle_tire::LoadedTire::rising_slips)), given the
/// wheel's `radius` (m) and this step's contact and loaded tire in `rt`. Sideways always; fore
/// and aft while the brake holds the wheel (a turning wheel's spin takes up its excess slip
/// within the step, and snapping it back there would lend a wheel the traction control is
/// reining in more grip the more often it ran: 4 % more on ice at 240 Hz than at 30 Hz).
/// Once per step, at its start.
///
/// A slip state stands for the patch's deflection, but past the peak most of it is slide,
/// which [`past_peak`] unwinds quickly as the tire rolls: at a crawl it barely rolls, and a
/// car that slid or skidded to a stop gave back its slide as motion. The patch of a tire that
/// sticks again holds only the deflection its force bends the carcass by, about `F·σ/C`
/// (with `F` its force (N), `C` the slip stiffness (N) and `σ` the relaxation length (m));
/// the state at the same force on the curve's rising side holds a little more (the slope
/// falls toward the peak). A car stopped on locked wheels from 100 km/h rolled back 31-37 mm
/// as its tires unwound, where their carcasses held 3.6-4.3 mm (now 4.5-6.2 mm), and one slid
/// sideways to a stop sprang back 0.17 m, where they held 0.03 m (now 0.04 m).
fn stick_again(rt: &WheelRuntime, radius: f64, state: &mut [f64]) {
    let [vx, vy] = rt.contact.velocity;
    let kinematic = [radius * state[1] - vx, -vy];
    let held = rt.mode == BrakeMode::Held;
    let sticks = [0, 1].map(|axis| {
        let (slip, peak) = (state[2 + axis], rt.peak_slip[axis]);
        (axis == 1 || held)
            && peak > 0.0
            && slip.abs() > peak
            && slip.signum() * kinematic[axis] < peak * vx.abs()
    });
    if sticks == [false; 2] {
        return;
    }
    // Only the axes that stick are searched.
    let slips = [0, 1].map(|axis| if sticks[axis] { state[2 + axis] } else { 0.0 });
    let rising = rt.tire.rising_slips(slips);
    for axis in 0..2 {
        if sticks[axis] {
            state[2 + axis] = rising[axis];
        }
    }
}

/// Rate (1/s) at which a held tire's patch takes up the distance its wheel drifted from it
/// ([`anchor_held_patch`]): a time constant of half a second, slow beside the patch spring's
/// rocking on the body (6 Hz for a car) so that it leaves the rocking as integrated, and at
/// most 0.13 of the drift per step at 15 Hz. (Taken up whole at each step, the drift made the
/// patch follow the body's integrator, whose step is a sixth of the rocking's period at 30 Hz:
/// the rocking was damped at every rate and grew unstable below 20 Hz.)
const HELD_PATCH_ANCHOR_RATE: f64 = 2.0;

/// Speed (m/s, the contact's forward speed) over which a tire's lateral slip is anchored to its
/// wheel's real move less and less, at a step's start (the wheel's `anchor_lateral_patch`): the
/// tire takes up the difference between how far its wheel moved sideways over the last step
/// ([`WheelContact::displacement`]) and how far the stages foresaw, which otherwise slides the
/// patch a little each step under a body rocking on its tires.
///
/// A standing or creeping tire's lateral slip is its patch's deflection, held for as long as the
/// body stands, and the body stands where its integrator put it. A rolling tire's slip relaxes
/// within its relaxation length and answers the road's velocity, whose course the stages foresee
/// better than the integrator, which runs ahead of it by a part of each step's velocity change (the
/// chassis's `spring_lead`). Measured on a step steer at 20 m/s (the course 0.6 s after the step):
/// anchored with only what a step's rolling leaves of a deflection, the course converged to first
/// order in the step, 1.9 / 0.97 / 0.26 % off its limit at 30 / 120 / 480 Hz (unanchored, to second
/// order: 0.15 % at 30 Hz). Faded out over 1 m/s as well (the share
/// `exp(−|vx|/LATERAL_ANCHOR_SPEED)`), the step steer's course is the unanchored one within 2e-6
/// rad at 30 to 480 Hz, a standing tire is anchored in full and one rolling at 1 m/s by a third.
/// Faded out over 2 m/s, a car set down over a slot 10 cm wide came to rest 0.8 mm lower, its front
/// wheels off the slot's middle.
pub const LATERAL_ANCHOR_SPEED: f64 = 1.0;

/// Moves a tire's lateral slip state (`state[3]`, tan α) by the distance its wheel really
/// moved sideways over the last step ([`WheelContact::displacement`]) beyond the one the
/// stages foresaw, at the step's start (`rt` still holds the last step's measured contact
/// and the lateral shift its last stage saw, and `state[4]` its length).
///
/// The stages move the slip with the road's velocity as the wheel foresees it over the step,
/// `v₀ + a·t` plus the tires' own lateral push ([`WheelRuntime::lateral_shift`]); the body
/// then moves as all of its forces, and its integrator, have it, and a foresight that misses
/// by a little each step leaves the patch where the wheel is not. Left in the slip, the
/// difference is a patch that slides a little each step under a body rocking sideways on its
/// tires, and it takes the energy of any motion that sways them: released from a held roll,
/// the default car rang down at ζ 0.46 / 0.32 / 0.27 at 20 / 30 / 60 Hz against 0.26 at
/// 240 Hz. The difference is weighed by what the slip's own relaxation would have left of it
/// by the step's end, `exp(−|vx|·T/(2σ))` over the step's length `T` (rolling, the slip
/// forgets it anyway), and faded out with speed ([`LATERAL_ANCHOR_SPEED`]); it is taken only
/// on fixed or kinematic ground ([`WheelContact::on_dynamic_body`]), and only while the patch
/// sticks (the slip within its peak before and after: past it the patch slides, and where it
/// slid to is its own).
#[inline]
fn anchor_lateral_patch(rt: &WheelRuntime, state: &mut [f64]) {
    let Some([_, moved]) = rt
        .contact
        .displacement
        .filter(|_| !rt.contact.on_dynamic_body)
    else {
        return;
    };
    let time = state[4];
    let sigma = rt.floored_relaxation[2];
    // What a step's rolling leaves of a deflection, faded out with speed: nothing worth the
    // work past 14 times the fade's speed (a share below 1e-6 of a drift of micrometres).
    let speed = rt.measured[0][0].abs().max(rt.contact.velocity[0].abs());
    let fade = speed / LATERAL_ANCHOR_SPEED;
    if fade > 14.0 || time <= 0.0 || sigma <= 0.0 || rt.tire.load() <= 0.0 || rt.contact.load <= 0.0
    {
        return;
    }
    let kept = (-speed * time / (2.0 * sigma) - fade).exp();
    let [velocity, acceleration] = rt.measured.map(|m| m[1]);
    let foreseen = time * (velocity + 0.5 * acceleration * time + 0.5 * rt.lateral_shift);
    let anchored = state[3] - kept * (moved - foreseen) / sigma;
    let peak = rt.peak_slip[1];
    if anchored.is_finite() && state[3].abs() <= peak && anchored.abs() <= peak {
        state[3] = anchored;
    }
}

/// Keeps the patch of a tire whose wheel the brake holds anchored to the ground: returns how
/// far (m, along the tire's heading) its wheel has drifted from where the slip state puts it,
/// having taken part of that drift up into the longitudinal slip state (`state[2]`), given
/// the step's length `dt` (s) and the tire's own longitudinal relaxation length `sigma` (m).
/// Once per step, at its start, before [`stick_again`].
///
/// Within a step the patch's deflection `u = σ·κ` is integrated from the road's velocity as
/// the wheel foresees it (the contact's measured velocity, carried on at its acceleration and
/// pushed by the tire's own force, [`WheelRuntime::body_mass`]) and relaxes as the road moves
/// (`|vx|·κ`). The body's integrator then moves the wheel by a somewhat different distance,
/// and a held patch does not relax: it stays where it stuck until it slides. Nothing took the
/// difference up, and over a lurch it added up: a car set down on a 30 % slope on its parking
/// lock came to rest 20.4 / 14.0 / 9.4 / 6.9 / 6.5 mm down it at 15 / 20 / 30 / 60 / 120 Hz
/// while its rear patches held the same 5.1 mm at each. So the wheel adds the distance its centre
/// really moved over the last step ([`WheelContact::displacement`]) less what its slip state
/// moved by (`−σ·Δκ`) to a drift, and takes the drift up at [`HELD_PATCH_ANCHOR_RATE`]. The
/// drift is measured with the tire's own `σ`, not the longer one the stages may take at a low
/// rate ([`WheelRuntime::min_relaxation`]): those keep the patch's modes within a substep,
/// while at rest the patch holds what its carcass does, `F·σ/C`, at every rate. The car on the
/// slope now rests 5.10–5.12 mm down it at 15 to 120 Hz.
///
/// Only while the brake held the wheel through the whole last step (its angle unchanged) and
/// its patch stuck (the state within the tire's peak slip before and after: past it the patch
/// slides, and the drift is forgotten), and only where the chassis measured the wheel's
/// displacement.
#[inline]
fn anchor_held_patch(rt: &WheelRuntime, state: &mut [f64], dt: f64, sigma: f64) -> f64 {
    let (Some([angle, slip, drift]), Some([moved, _])) = (rt.held_patch, rt.contact.displacement)
    else {
        return 0.0;
    };
    if rt.mode != BrakeMode::Held || state[0] != angle || rt.contact.load <= 0.0 {
        return 0.0;
    }
    // The wheel moving forward over a stuck patch winds its state down: `σ·dκ = −dx`.
    let drift = drift + moved + (state[2] - slip) * sigma;
    let taken = drift * (HELD_PATCH_ANCHOR_RATE * dt).min(1.0);
    let anchored = state[2] - taken / sigma;
    // (`sigma` is a validated, positive setting: a state not finite would be a bad contact.)
    if anchored.is_finite() && anchored.abs() <= rt.peak_slip[0] {
        state[2] = anchored;
        drift - taken
    } else {
        0.0
    }
}

impl Block for Wheel {
    const TYPE_NAME: &'static str = "Wheel";
    const TAKES_CONTROLS: bool = false;
    type Runtime = WheelRuntime;
    type Sensors = WheelSensors;

    fn ports(&self) -> Ports {
        Ports::LEAF
    }

    fn state_len(&self) -> usize {
        Self::state_len_for(&self.load)
    }

    /// A wheel that gained or lost its tire (and the tire's states) keeps turning: its angle
    /// and spin come first in either shape. The tire's slips start from zero and relax toward
    /// the road's within a relaxation length.
    fn reshape_state(&self, old: &[f64], state: &mut [f64]) {
        for (new, old) in state.iter_mut().zip(old).take(2) {
            *new = *old;
        }
    }

    take_inputs_fields!(brake_torque);

    /// A wheel set spinning lets go of the brake that held it: the brake slides, opposing the
    /// new spin, until it holds the wheel again.
    fn state_set(&self, rt: &mut WheelRuntime, state: &[f64]) {
        if rt.mode == BrakeMode::Held && state[1] != 0.0 {
            rt.mode = BrakeMode::Rolling {
                direction: sign(state[1]),
            };
        }
    }

    /// The tire's relaxation lengths until `begin_step` floors them for the step.
    fn settings_changed(&self, rt: &mut WheelRuntime) {
        if let WheelLoad::Tire(tire) = &self.load {
            let [longitudinal, lateral] = tire.relaxation_length;
            rt.floored_relaxation = [longitudinal, longitudinal, lateral];
        } else {
            // Only a tire uses its held patch, and a wheel without one leaves the field alone
            // in `begin_step` (it lies past the part of the runtime such a wheel's step
            // touches: see `Program::prefetch`). Cleared here, when the wheel loses its tire,
            // so that no stale anchor waits for its next tire.
            rt.held_patch = None;
        }
    }

    fn validate(&self) -> Result<(), SettingError> {
        check_positive("inertia", self.inertia)?;
        check_positive("radius", self.radius)?;
        check_finite("brake_torque", self.brake_torque)?;
        match &self.load {
            WheelLoad::None => {}
            WheelLoad::Torque(t) => check_finite("load.Torque", *t)?,
            WheelLoad::Viscous(c) => check_non_negative("load.Viscous", *c)?,
            WheelLoad::Road {
                ground_speed,
                stiffness,
            } => {
                check_finite("load.ground_speed", *ground_speed)?;
                check_non_negative("load.stiffness", *stiffness)?;
            }
            WheelLoad::Vehicle {
                mass,
                rolling_resistance,
                drag_area,
                air_density,
            } => {
                check_non_negative("load.mass", *mass)?;
                check_non_negative("load.rolling_resistance", *rolling_resistance)?;
                check_non_negative("load.drag_area", *drag_area)?;
                check_non_negative("load.air_density", *air_density)?;
            }
            WheelLoad::Tire(tire) => {
                tire.model.validate().map_err(|e| {
                    // Below the model's name (`magic_formula.p_dx1`) is where a file writes
                    // the field: `model: MagicFormula((p_dx1: ..))`.
                    let inner = e.field.split_once('.').map_or(e.field.as_str(), |(_, f)| f);
                    SettingError::new(format!("load.Tire.model.{inner}"), e.reason)
                })?;
                check_positive("load.Tire.relaxation_length[0]", tire.relaxation_length[0])?;
                check_positive("load.Tire.relaxation_length[1]", tire.relaxation_length[1])?;
                check_non_negative("load.Tire.damping[0]", tire.damping[0])?;
                check_non_negative("load.Tire.damping[1]", tire.damping[1])?;
                check_non_negative("load.Tire.held_damping", tire.held_damping)?;
                check_non_negative("load.Tire.rolling_resistance", tire.rolling_resistance)?;
                check_non_negative(
                    "load.Tire.rolling_resistance_quadratic",
                    tire.rolling_resistance_quadratic,
                )?;
                check_non_negative("load.Tire.pneumatic_trail", tire.pneumatic_trail)?;
                if tire.pneumatic_trail > self.radius {
                    return Err(SettingError::new(
                        "load.Tire.pneumatic_trail",
                        format!(
                            "must not exceed the wheel's radius ({} m), got {} m",
                            self.radius, tire.pneumatic_trail
                        ),
                    ));
                }
                if let TireModel::MagicFormula(mf) = &tire.model
                    && mf.aligning.is_given()
                {
                    if tire.pneumatic_trail != 0.0 {
                        return Err(SettingError::new(
                            "load.Tire.pneumatic_trail",
                            "the Magic Formula's `aligning` terms already give this tire its \
                             trail: set one or the other",
                        ));
                    }
                    let nominal = mf.aligning.unloaded_radius * mf.aligning.q_dz1;
                    if nominal > self.radius {
                        return Err(SettingError::new(
                            "load.Tire.model.aligning.q_dz1",
                            format!(
                                "the trail at the nominal load, unloaded_radius × q_dz1 = {nominal} m, \
                                 must not exceed the wheel's radius ({} m)",
                                self.radius
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn begin_step(
        &self,
        rt: &mut WheelRuntime,
        state: &mut [f64],
        step: &StepContext,
    ) -> ModeChange {
        rt.substep = step.dt / f64::from(step.substeps.max(1));
        rt.brake = self.brake_capacity();
        rt.drive = 0.0;
        rt.steer = 0.0;
        if let WheelLoad::Tire(tire) = &self.load {
            // A contact the chassis could not measure counts as no contact.
            let contact = rt.contact;
            let valid = contact.load.is_finite()
                && contact.friction.is_finite()
                && contact.velocity.iter().all(|v| v.is_finite())
                && contact.acceleration.iter().all(|a| a.is_finite());
            if !valid {
                rt.contact = WheelContact::default();
            }
            rt.contact.displacement = rt
                .contact
                .displacement
                .filter(|d| d.iter().all(|x| x.is_finite()));
            anchor_lateral_patch(rt, state);
            rt.lateral_shift = 0.0;
            rt.measured = [rt.contact.velocity, rt.contact.acceleration];
            rt.tire = tire.model.at_load_near(
                rt.contact.load,
                rt.contact.friction,
                rt.contact.camber,
                &rt.tire,
            );
            rt.peak_force = rt.tire.peak_force().map(f64::abs);
            rt.peak_slip = rt.tire.peak_slip().map(f64::abs);
            if rt.tire.load() <= 0.0 {
                // A tire off the ground springs back: it lands undeflected, and its forces
                // build from nothing as it rolls or slides on. (Kept, a slide's side slip from
                // before a lift-off pushed on at the friction limit when the wheel came down,
                // whichever way it then moved: a car parked across a steep slope on grippy
                // tires rocked onto its uphill wheels harder each time and rolled over. And a
                // wheel spinning in the air, over no ground, ran its slip up to the limit.)
                state[2] = 0.0;
                state[3] = 0.0;
            }
            rt.rolling = self.rolling_capacity(tire, rt.tire.load(), state[1]);
            let drift = anchor_held_patch(rt, state, step.dt, tire.relaxation_length[0]);
            stick_again(rt, self.radius, state);
            // The force the body took over the last step, and the clock and the velocity change
            // the contact velocity is carried on with.
            rt.body_force = Self::mean_body_force(rt, state).unwrap_or(0.0);
            // Likewise sideways, while the body answered the tire's lateral force last step.
            // An uncoupled step starts from 0 and adds nothing, so it hands on 0.
            rt.lateral_body_force = if rt.contact.lateral_coupled && state[4] > 0.0 {
                rt.lateral_body_force + state[6] / state[4]
            } else {
                0.0
            };
            state[4] = 0.0;
            state[5] = 0.0;
            state[6] = 0.0;
            // Keep the patch modes on the wheel's own inertia within one substep.
            let h = rt.floor_substep();
            let r2 = self.radius * self.radius;
            let inertia = self.effective_inertia();
            let stiffness = rt.tire.stiffness()[0].max(0.0);
            rt.min_relaxation =
                r2 * stiffness * h * h / (inertia * PATCH_SPRING_LIMIT * PATCH_SPRING_LIMIT);
            let load = rt.tire.load();
            let fraction = rt
                .contact
                .body_mass_fraction
                .map(|f| if f > 0.0 && f <= 1.0 { f } else { 1.0 });
            let body_mass = rt.contact.body_mass;
            // No lighter than keeps the patch spring on it within a substep, as on the wheel
            // (a chassis's shares are hundreds of times heavier).
            let lightest = stiffness / tire.relaxation_length[0] * rt.substep * rt.substep
                / (PATCH_SPRING_LIMIT * PATCH_SPRING_LIMIT);
            rt.body_mass = if load > 0.0 && body_mass > 0.0 && body_mass.is_finite() {
                (body_mass * fraction[0]).max(lightest)
            } else {
                0.0
            };
            rt.inverse_body_mass = if rt.body_mass > 0.0 {
                1.0 / rt.body_mass
            } else {
                0.0
            };
            let critical_speed;
            (rt.body_relaxation, critical_speed) = if load > 0.0 {
                let per_stiffness =
                    GRAVITY * step.dt * step.dt / (load * BODY_SPRING_LIMIT * BODY_SPRING_LIMIT);
                let stiffness = rt.tire.stiffness().map(f64::abs);
                // `2·σ·ω` with `ω² = C·g/(σ·f·F_z)`.
                let sigma = tire.relaxation_length[0];
                let critical = 2.0 * (stiffness[0] * sigma * GRAVITY / (fraction[0] * load)).sqrt();
                (
                    [0, 1].map(|i| stiffness[i] * per_stiffness / fraction[i]),
                    critical,
                )
            } else {
                ([0.0; 2], 0.0)
            };
            let own = tire.relaxation_length[0].max(rt.min_relaxation);
            // A held wheel does not turn: it needs no floor for its own inertia.
            let still = tire.relaxation_length[0];
            // A tire coupled to the body's mass pushes it within the substeps, rolling or held:
            // its spring on the body needs no floor. On a prescribed road a held tire takes
            // the floor, and a rolling one fades it out toward the speed at which the patch
            // spring is critically damped on the body (taken at the step's start).
            let [rolling, held] = if rt.body_mass > 0.0 {
                [own, still]
            } else {
                let rolling_speed = rt.contact.velocity[0]
                    .abs()
                    .max((self.radius * state[1]).abs());
                let ringing = if critical_speed > 0.0 {
                    (1.0 - rolling_speed / critical_speed).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                [
                    own.max(ringing * rt.body_relaxation[0]),
                    still.max(rt.body_relaxation[0]),
                ]
            };
            // Sideways the same holds while the body answers the tire within the step.
            let lateral = if rt.contact.lateral_coupled {
                tire.relaxation_length[1]
            } else {
                tire.relaxation_length[1].max(rt.body_relaxation[1])
            };
            rt.floored_relaxation = [rolling, held, lateral];
            rt.damping = tire.damping;
            rt.held_damping = if rt.contact.velocity[0].abs() < HELD_DAMPING_SPEED {
                tire.held_damping
            } else {
                0.0
            };
            // Sideways the patch is held by friction alone, rolling or braked: the same
            // damping at a crawl.
            let [vx, vy] = rt.contact.velocity;
            if vx.hypot(vy) < HELD_DAMPING_SPEED {
                rt.damping[1] += tire.held_damping;
            }
            if load * r2 * h * tire.damping[0] > inertia {
                rt.damping[0] = inertia / (load * r2 * h);
                rt.held_damping += tire.damping[0] - rt.damping[0];
            }
            // Kept whether or not the brake holds the wheel yet: a wheel set down at rest is
            // held from the step's first stage.
            rt.held_patch = (load > 0.0 && state[2].abs() <= rt.peak_slip[0])
                .then_some([state[0], state[2], drift]);
        } else {
            rt.rolling = 0.0;
        }
        ModeChange::Unchanged
    }

    #[inline]
    fn upstream(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        stage: &StageContext,
        _: &[Shaft],
        derivative: &mut [f64],
    ) -> ShaftUp {
        let road = self.trait_stage_load(rt, state, stage, derivative);
        self.reaction(rt, state, stage, road, derivative)
    }

    #[inline]
    fn downstream(
        &self,
        rt: &WheelRuntime,
        state: &[f64],
        stage: &StageContext,
        input: Option<&Shaft>,
        _: &mut [Shaft],
        derivative: &mut [f64],
    ) {
        // A driven wheel took its road torque in the upstream pass.
        let road = match input {
            Some(_) => 0.0,
            None => self.trait_stage_load(rt, state, stage, derivative),
        };
        self.downstream_loaded(rt, state, stage, input, road, derivative);
    }

    #[inline]
    fn update_modes(&self, rt: &mut WheelRuntime, state: &[f64], shafts: &Shafts) -> ModeChange {
        let speed = state[1];
        let capacity = Self::resisting(rt);
        match rt.mode {
            BrakeMode::Held => {
                let net = Self::drive_torque(rt, shafts) + self.road_torque(rt, state, None);
                // Nothing holds the wheel without a brake or a load on its tire, even with no
                // torque on it (an exactly balanced one would otherwise stay held, and say so,
                // until round-off moved it).
                if capacity == 0.0 || net.abs() > capacity {
                    rt.mode = BrakeMode::Rolling {
                        direction: sign(net),
                    };
                    ModeChange::Smooth
                } else {
                    ModeChange::Unchanged
                }
            }
            BrakeMode::Rolling { direction } => Self::update_rolling(rt, direction, speed),
        }
    }

    fn sensors(&self, rt: &WheelRuntime, state: &[f64], shafts: &Shafts) -> WheelSensors {
        let speed = state[1];
        let drive = Self::drive_torque(rt, shafts);
        // One tire evaluation gives both forces and, from `fx` (bit-equal to the stages'), the
        // road torque.
        let tire = match &self.load {
            WheelLoad::Tire(tire) => {
                let slips = Self::tire_slips(state);
                let forces = rt.tire.forces(slips[0], slips[1]);
                Some((tire, self.tire_stage(rt, state, speed, forces), slips))
            }
            _ => None,
        };
        let road = match tire {
            Some((_, t, _)) => -self.radius * t.fx,
            None => self.load_torque(speed),
        };
        // The rolling resistance is the road's: it resists first, the brake the rest.
        let (rolling, brake) = match rt.mode {
            BrakeMode::Held => {
                let holding = -(drive + road);
                let rolling = holding.clamp(-rt.rolling, rt.rolling);
                (rolling, holding - rolling)
            }
            BrakeMode::Rolling { direction } => (-direction * rt.rolling, -direction * rt.brake),
        };
        let load = road + rolling;
        let mut sensors = WheelSensors {
            speed,
            angle: state[0],
            surface_speed: speed * self.radius,
            drive_torque: drive,
            brake_torque: brake,
            load_torque: load,
            held: rt.mode == BrakeMode::Held,
            ..default()
        };
        if let Some((tire, t, [slip, tan_slip])) = tire {
            sensors.slip_ratio = state[2];
            sensors.slip_angle = state[3].atan();
            // The body takes the step's mean longitudinal force (the one its contact moved
            // with), or the force at the step's end on a prescribed road.
            sensors.force = [
                Self::mean_body_force(rt, state).unwrap_or(t.fx),
                Self::mean_lateral_body_force(rt, state).unwrap_or(t.fy),
            ];
            sensors.load = rt.contact.load;
            let trail = tire.trail(&rt.tire, rt.contact.friction, slip, tan_slip);
            if trail != 0.0 {
                sensors.aligning_torque = -trail * t.fy;
            }
        }
        sensors
    }
}
