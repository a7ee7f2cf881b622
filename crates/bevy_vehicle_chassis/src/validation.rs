//! Checking a vehicle's chassis settings when they are added or changed, and keeping vehicles
//! whose settings were refused out of the simulation.

use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::BlockSlot;
use bevy_vehicle_drivetrain::prelude::*;

use crate::body_mass::BodyMass;
use crate::components::{
    Aerodynamics, AntiRollBars, Brakes, Side, SpeedLimiter, Steering, Suspension, WheelMount,
    WheelState,
};
use crate::error::{ChassisError, each_axis, finite, non_negative, positive};
use crate::vehicle::Vehicle;

/// On a vehicle entity: whether its chassis settings were accepted.
///
/// [`ChassisPlugin`](crate::ChassisPlugin) checks a vehicle's chassis components when the
/// vehicle appears and whenever one of them changes (in [`VehicleSystems::Validate`], at the
/// start of each fixed step): that the vehicle entity has no parent (its `Transform` is its
/// pose in the world); on the vehicle entity [`Brakes`], [`Steering`],
/// [`AntiRollBars`], [`Aerodynamics`], [`SpeedLimiter`] and the Rapier mass properties
/// ([`ColliderMassProperties`], [`AdditionalMassProperties`], and the mass and principal
/// inertias above 0 they and the body's colliders add up to, `body.mass` and
/// `body.principal_inertia`: Rapier holds a body without them still); on each wheel block
/// carrying a [`WheelMount`], the mount, its [`Suspension`] and the wheel's radius; and that
/// the fixed step can follow the body on its springs (the stiffest of its heave, pitch and
/// roll on the suspension springs and anti-roll bars within [`MAX_BODY_MODE_PER_STEP`], checked
/// again whenever the fixed step changes; past 1.4 it warns). And at the
/// start of every step, the body's state as Rapier is about to be handed it: its
/// `Transform`, [`Velocity`] and [`ExternalImpulse`] (a game's teleport or push), finite, with
/// a scale of 1 (an impulse that is not finite is discarded, so the vehicle runs again at
/// the next step; a pose or velocity must be set right by whoever set it). NaN and infinities
/// are refused everywhere, and each value must lie in the range its field documents.
///
/// A vehicle whose settings are refused is **not simulated** until they are fixed: its body gets
/// Rapier's [`RigidBodyDisabled`] (it stays where it is, and its colliders leave the
/// simulation), its wheels stop probing the ground and are reported off the ground with no
/// load, its brakes and steering stop following the controls, and its `ExternalForce` is zeroed.
/// The error, naming the vehicle, the wheel and the field, is logged once with `error!`.
/// When the settings are fixed, the vehicle resumes where it stopped, with the velocity it had,
/// in the step in which the check accepts them: its body is let go in the same step as its
/// wheels probe the ground and push again. (Until 2026-12-02 the body was let go a step early
/// and fell freely for that step: a parked car set right resumed at g·dt, 0.654 m/s at 15 Hz.)
///
/// The drivetrain keeps its own status ([`Drivetrain::status`]): a vehicle drives when both are
/// ready. A vehicle whose drivetrain is refused (its block graph or a block's settings, or a
/// step that left the finite numbers, [`DrivetrainError::Diverged`]) is taken out of the
/// simulation the same way while its chassis status stays as it is: its tires, integrated in
/// the drivetrain, push nothing without it. It is taken out in the step its drivetrain is
/// refused, before Rapier steps, and put back at the check of the step after the drivetrain runs
/// again. (Until 2026-12-02 its body went on moving on its
/// springs with no tire force at all: parked on a 30 % slope on every brake it had, a car
/// whose gearbox block was despawned slid 12.7 m in 3 s.)
///
/// [`VehicleSystems::Validate`]: crate::VehicleSystems::Validate
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub enum ChassisStatus {
    /// Not checked yet (the vehicle was just spawned; it is checked in the next fixed step).
    #[default]
    Pending,
    /// Checked and accepted: the vehicle runs, unless its drivetrain is refused
    /// ([`Drivetrain::error`]).
    Ready,
    /// Refused; the vehicle is not simulated until the problem is fixed.
    Invalid(Box<ChassisError>),
}

impl ChassisStatus {
    /// Whether the settings were accepted.
    pub fn is_ready(&self) -> bool {
        matches!(self, ChassisStatus::Ready)
    }

    /// The error that keeps the vehicle from running, if any.
    pub fn error(&self) -> Option<&ChassisError> {
        match self {
            ChassisStatus::Invalid(e) => Some(e),
            _ => None,
        }
    }
}

/// On a vehicle entity whose chassis settings were accepted: the chassis's systems run only on
/// vehicles carrying it.
#[derive(Component, Clone, Copy, Debug, Default)]
pub(crate) struct ChassisReady;

/// On a vehicle entity whose [`RigidBodyDisabled`] was added by the validation (and is to be
/// removed by it when the settings are fixed).
#[derive(Component, Clone, Copy, Debug, Default)]
pub(crate) struct DisabledByChassis;

/// On a vehicle entity put back into the simulation in this step: until Rapier has stepped its
/// body enabled, its [`ReadMassProperties`] may not be the body's (zero for a body that joined
/// Rapier disabled, the old mass for one whose mass was changed while it was out), so
/// [`BodyMass`] sums its colliders instead. Removed at the start of the next step.
#[derive(Component, Clone, Copy, Debug, Default)]
pub(crate) struct Resuming;

/// Checks a Rapier [`MassProperties`] under `prefix`.
fn check_mass_properties(prefix: &str, mp: &MassProperties) -> Result<(), ChassisError> {
    non_negative(&format!("{prefix}.mass"), mp.mass, "kg")?;
    each_axis(
        &format!("{prefix}.local_center_of_mass"),
        mp.local_center_of_mass,
        "m",
        finite,
    )?;
    each_axis(
        &format!("{prefix}.principal_inertia"),
        mp.principal_inertia,
        "kg·m²",
        non_negative,
    )?;
    let q = mp.principal_inertia_local_frame;
    if !(q.is_finite() && (q.length() - 1.0).abs() < 1e-3) {
        return Err(ChassisError::new(
            format!("{prefix}.principal_inertia_local_frame"),
            format!("must be a unit quaternion, got {q}"),
        ));
    }
    Ok(())
}

/// Checks a collider's mass properties (density, mass or explicit properties).
pub(crate) fn check_collider_mass(p: &ColliderMassProperties) -> Result<(), ChassisError> {
    match p {
        ColliderMassProperties::Density(d) => {
            non_negative("collider_mass_properties.density", *d, "kg/m³")
        }
        ColliderMassProperties::Mass(m) => non_negative("collider_mass_properties.mass", *m, "kg"),
        ColliderMassProperties::MassProperties(mp) => {
            check_mass_properties("collider_mass_properties", mp)
        }
    }
}

/// Checks the mass properties Rapier builds for a vehicle's body from all its colliders and
/// its additional mass (`mp`, from [`BodyMass::sum_of_colliders`]): a mass and each principal
/// inertia above 0. A zero on one component is not wrong on its own (another may carry the
/// mass), but a body with no mass, or none about an axis, does not move under the wheels'
/// forces: Rapier holds it still.
fn check_body_mass(mp: &MassProperties) -> Result<(), ChassisError> {
    const WHY: &str = "(the sum of the body's colliders and its additional mass; Rapier would \
                       hold a body without it still)";
    positive("body.mass", mp.mass, "kg")
        .and_then(|()| {
            each_axis(
                "body.principal_inertia",
                mp.principal_inertia,
                "kg·m²",
                positive,
            )
        })
        .map_err(|mut e| {
            e.reason = format!("{} {WHY}", e.reason);
            e
        })
}

/// Checks a body's additional mass properties.
fn check_additional_mass(p: &AdditionalMassProperties) -> Result<(), ChassisError> {
    match p {
        AdditionalMassProperties::Mass(m) => {
            non_negative("additional_mass_properties.mass", *m, "kg")
        }
        AdditionalMassProperties::MassProperties(mp) => {
            check_mass_properties("additional_mass_properties", mp)
        }
    }
}

/// The settings on a vehicle entity.
#[derive(QueryData)]
pub(crate) struct VehicleSettings {
    brakes: Option<&'static Brakes>,
    steering: Option<&'static Steering>,
    bars: Option<&'static AntiRollBars>,
    aero: Option<&'static Aerodynamics>,
    limiter: Option<&'static SpeedLimiter>,
    collider_mass: Option<&'static ColliderMassProperties>,
    additional_mass: Option<&'static AdditionalMassProperties>,
    parent: Option<&'static ChildOf>,
    body: BodyState,
}

/// The body's pose and motion as Rapier is handed them: written by Rapier each step, and by
/// a game that teleports, launches or pushes a vehicle.
#[derive(QueryData)]
pub(crate) struct BodyState {
    transform: &'static Transform,
    velocity: Option<&'static Velocity>,
    impulse: Option<&'static ExternalImpulse>,
}

impl BodyStateItem<'_, '_> {
    /// Checks that Rapier is handed a finite pose, velocity and impulse: a NaN or infinity
    /// there (a game's, since Rapier's own writes are finite) would leave the body's internal
    /// state NaN and the vehicle stuck for good.
    fn validate(&self) -> Result<(), ChassisError> {
        crate::error::transform(self.transform)?;
        if let Some(v) = self.velocity {
            each_axis("velocity.linear", v.linear, "m/s", finite)?;
            each_axis("velocity.angular", v.angular, "rad/s", finite)?;
        }
        if let Some(i) = self.impulse {
            each_axis("external_impulse.impulse", i.impulse, "N·s", finite)?;
            each_axis(
                "external_impulse.torque_impulse",
                i.torque_impulse,
                "N·m·s",
                finite,
            )?;
        }
        Ok(())
    }

    /// Whether [`BodyStateItem::validate`] passes (no allocation when it does). Run for
    /// every vehicle at every step: a state that plainly passes (finite, unscaled, a
    /// non-zero rotation, by the named checks' own rules) is let through without them, which
    /// cost ten times as much (1 160 instructions a car).
    fn is_valid(&self) -> bool {
        let t = self.transform;
        let plain = t.translation.is_finite()
            && crate::error::unit_scale(t.scale)
            && crate::error::usable_rotation(t.rotation)
            && self
                .velocity
                .is_none_or(|v| v.linear.is_finite() && v.angular.is_finite())
            && self
                .impulse
                .is_none_or(|i| i.impulse.is_finite() && i.torque_impulse.is_finite());
        plain || self.validate().is_ok()
    }
}

impl VehicleSettingsItem<'_, '_> {
    /// Checks the vehicle entity's own settings, and its body's state.
    fn validate(&self) -> Result<(), ChassisError> {
        if let Some(parent) = self.parent {
            // Every system takes the vehicle's `Transform` as its pose in the world: under a
            // moved or turned parent its wheels probed and pushed somewhere else.
            return Err(ChassisError::new(
                "ChildOf",
                format!(
                    "a vehicle must be a root entity (its Transform is its pose in the world), \
                     got a child of {}: spawn it without a parent",
                    parent.parent()
                ),
            ));
        }
        self.body.validate()?;
        if let Some(m) = self.collider_mass {
            check_collider_mass(m)?;
        }
        if let Some(m) = self.additional_mass {
            check_additional_mass(m)?;
        }
        if let Some(b) = self.brakes {
            b.validate()?;
        }
        if let Some(s) = self.steering {
            s.validate()?;
        }
        if let Some(b) = self.bars {
            b.validate()?;
        }
        if let Some(a) = self.aero {
            a.validate()?;
        }
        if let Some(l) = self.limiter {
            l.validate()?;
        }
        Ok(())
    }
}

/// A vehicle, as the validation sees it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct VehicleParts {
    name: NameOrEntity,
    status: &'static mut ChassisStatus,
    settings: VehicleSettings,
    blocks: Option<&'static Blocks>,
    force: Option<&'static mut ExternalForce>,
    drivetrain: Option<&'static mut Drivetrain>,
    controls: Option<&'static mut VehicleControls>,
    ready: Has<ChassisReady>,
    disabled_by_us: Has<DisabledByChassis>,
    disabled: Has<RigidBodyDisabled>,
    in_rapier: Has<RapierContextEntityLink>,
}

/// A wheel, as the validation sees it.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct WheelParts {
    name: NameOrEntity,
    mount: &'static WheelMount,
    suspension: &'static Suspension,
    wheel: Option<&'static Wheel>,
    slot: Option<&'static BlockSlot>,
    state: Option<&'static mut WheelState>,
}

/// The most a fixed step of `dt` lets the body's stiffest motion on its springs turn,
/// `ω·dt` (rad): [`ChassisPlugin`](crate::ChassisPlugin) refuses a vehicle past it. Rapier
/// moves the body once per step under forces held over the step. The suspension's springs
/// are solved with the step's motion (alone they would stay stable to `ω·dt = √6`, see
/// [`SPRING_STEP_WEIGHT`](crate::SPRING_STEP_WEIGHT)), but the anti-roll bars act at the
/// step's start, and a mode held so past `ω·dt = 2` is not held but driven by its springs,
/// and grows without bound. The shipped vehicles reach 0.80–1.05 at 15 Hz (the tracked
/// excavator 1.35). Past 1.4 the plugin accepts the vehicle with a warning: strong dampers are
/// held down there (see [`Suspension::force_at_step`](crate::Suspension::force_at_step)),
/// and its ride differs from a finer step's (see `docs/known_gaps.md`).
pub const MAX_BODY_MODE_PER_STEP: f64 = 2.0;

/// `ω·dt` (rad) past which an accepted vehicle's stiffest body mode is warned about: its
/// results differ from a finer step's (see [`MAX_BODY_MODE_PER_STEP`]).
const WARN_BODY_MODE_PER_STEP: f64 = 1.4;

/// The stiffest of the body's small motions on its suspension springs and anti-roll bars.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BodyMode {
    /// Its angular frequency (rad/s; 0 without springs).
    omega: f64,
    /// What it mostly is: 0 heave, 1 pitch about X, 2 roll about Z.
    motion: usize,
    /// The mass (kg) or inertia (kg·m²) that motion moves.
    mass: f64,
}

/// The stiffest of the body's small motions on its suspension springs and anti-roll bars:
/// heave, pitch about X and roll about Z through its centre of mass, with its mass and
/// principal inertias `mp` (taken as aligned with the body's axes). `wheels` holds each
/// wheel's mount and suspension.
pub(crate) fn stiffest_body_mode(
    mp: &MassProperties,
    wheels: &[(&WheelMount, &Suspension)],
    bars: Option<&AntiRollBars>,
) -> BodyMode {
    let center = mp.local_center_of_mass;
    // How a wheel's travel follows heave, pitch and roll: `[1, z, x]` from the centre of mass.
    let lever = |mount: &WheelMount| {
        let p = mount.position - center;
        [1.0, f64::from(p.z), f64::from(p.x)]
    };
    let mut k = [[0.0; 3]; 3];
    let mut add = |stiffness: f64, d: [f64; 3]| {
        for (row, &a) in k.iter_mut().zip(&d) {
            for (cell, &b) in row.iter_mut().zip(&d) {
                *cell += stiffness * a * b;
            }
        }
    };
    for (mount, suspension) in wheels {
        add(suspension.stiffness, lever(mount));
    }
    // A bar resists the difference of its axle's two wheels' travel.
    for bar in bars.iter().flat_map(|b| b.0.iter()) {
        let on_axle = |side: Side| {
            wheels
                .iter()
                .find(|(m, _)| m.axle == bar.axle && m.side == side)
                .map(|(m, _)| lever(m))
        };
        if let (Some(left), Some(right)) = (on_axle(Side::Left), on_axle(Side::Right)) {
            add(bar.stiffness, [0, 1, 2].map(|i| left[i] - right[i]));
        }
    }
    // The largest eigenvalue of M^(-1/2)·K·M^(-1/2), by power iteration (K and M symmetric,
    // positive semi-definite and diagonal).
    let inertia = mp.principal_inertia;
    let mass = [mp.mass, inertia.x, inertia.z].map(f64::from);
    if !mass.iter().all(|m| *m > 0.0 && m.is_finite()) {
        return BodyMode::default();
    }
    let scaled = [0, 1, 2].map(|i| [0, 1, 2].map(|j| k[i][j] / (mass[i] * mass[j]).sqrt()));
    let mut v = [1.0, 0.7, 0.4];
    let mut lambda = 0.0;
    for _ in 0..200 {
        let w = [0, 1, 2].map(|i| (0..3).map(|j| scaled[i][j] * v[j]).sum::<f64>());
        let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            break;
        }
        lambda = (0..3).map(|i| v[i] * w[i]).sum::<f64>() / v.iter().map(|x| x * x).sum::<f64>();
        v = w.map(|x| x / norm);
    }
    let motion = (0..3).fold(
        0,
        |best, i| if v[i].abs() > v[best].abs() { i } else { best },
    );
    BodyMode {
        omega: lambda.max(0.0).sqrt(),
        motion,
        mass: mass[motion],
    }
}

impl BodyMode {
    /// The mode in words, for the messages: `the body's stiffest motion on its springs, its
    /// roll (…), at 4.2 Hz`.
    fn stated(&self) -> String {
        format!(
            "the body's stiffest motion on its springs, {}, at {:.1} Hz",
            self.describe(),
            self.omega / std::f64::consts::TAU
        )
    }

    /// What to do about a mode past `limit` (`ω·dt`): `run the fixed step at 40 Hz or more, or
    /// soften the springs`.
    fn remedy(&self, limit: f64) -> String {
        format!(
            "run the fixed step at {:.0} Hz or more, or soften the springs",
            (self.omega / limit).ceil()
        )
    }

    /// The motion, and what it moves, in words: `its roll (on 550 kg·m² about Z, with the
    /// anti-roll bars)`.
    fn describe(&self) -> String {
        // To four significant digits: Rapier's sum of the colliders is not exactly what was set.
        let mass = if self.mass > 0.0 && self.mass.is_finite() {
            let decimals = (3 - self.mass.log10().floor() as i32).max(0) as usize;
            let text = format!("{:.*}", decimals, self.mass);
            if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                text
            }
        } else {
            self.mass.to_string()
        };
        match self.motion {
            0 => format!("its heave (on {mass} kg)"),
            1 => format!("its pitch (on {mass} kg·m² about X)"),
            _ => format!("its roll (on {mass} kg·m² about Z, with the anti-roll bars)"),
        }
    }
}

/// Checks that a fixed step of `dt` (s) can follow the body on its springs: `mode` from
/// [`stiffest_body_mode`] within [`MAX_BODY_MODE_PER_STEP`].
fn check_body_mode(mode: &BodyMode, dt: f64) -> Result<(), ChassisError> {
    let omega = mode.omega;
    if omega * dt <= MAX_BODY_MODE_PER_STEP {
        return Ok(());
    }
    Err(ChassisError::new(
        "suspension.stiffness",
        format!(
            "puts {}, which a fixed step of {dt:.4} s cannot follow (ω·dt = {:.2}, past \
             {MAX_BODY_MODE_PER_STEP}: the springs would throw the body instead of holding it); \
             {}",
            mode.stated(),
            omega * dt,
            mode.remedy(MAX_BODY_MODE_PER_STEP)
        ),
    ))
}

/// The error of a refused drivetrain that takes its vehicle out of the simulation (see
/// [`ChassisStatus`]): any but having no blocks at all (a body with no wheel blocks has no tire
/// the drivetrain would push).
fn refusal(drivetrain: &Drivetrain) -> Option<&VehicleError> {
    drivetrain
        .error()
        .filter(|e| !matches!(e.error, DrivetrainError::NoBlocks))
}

/// Checks one wheel's chassis settings: its mount, suspension and radius.
fn check_wheel(
    mount: &WheelMount,
    suspension: &Suspension,
    wheel: Option<&Wheel>,
) -> Result<(), ChassisError> {
    mount.validate()?;
    suspension.validate()?;
    if let Some(wheel) = wheel {
        positive("wheel.radius", wheel.radius, "m")?;
    }
    Ok(())
}

/// Validates the vehicles whose chassis settings were added or changed, and every vehicle not
/// yet accepted; records the result in [`ChassisStatus`] and takes refused vehicles out of the
/// simulation (and puts fixed ones back).
pub(crate) fn validate_chassis(
    mut commands: Commands,
    mut mass_modified: MessageWriter<MassModifiedMessage>,
    changed_vehicles: Query<
        Entity,
        (
            With<Vehicle>,
            Or<(
                Changed<Brakes>,
                Changed<Steering>,
                Changed<AntiRollBars>,
                Changed<Aerodynamics>,
                Changed<SpeedLimiter>,
                Changed<Collider>,
                Changed<ColliderMassProperties>,
                Changed<AdditionalMassProperties>,
                Changed<Blocks>,
                Changed<ChildOf>,
            )>,
        ),
    >,
    unready: Query<Entity, (With<Vehicle>, Without<ChassisReady>)>,
    bodies: Query<(Entity, BodyState), (With<Vehicle>, With<ChassisReady>)>,
    changed_wheels: Query<
        &BlockOf,
        (
            With<WheelMount>,
            Or<(Changed<WheelMount>, Changed<Suspension>, Changed<Wheel>)>,
        ),
    >,
    mut vehicles: Query<VehicleParts, With<Vehicle>>,
    mut wheels: Query<WheelParts>,
    body_mass: BodyMass,
    time: Res<Time>,
    mut checked_step: Local<f64>,
    all_vehicles: Query<Entity, With<Vehicle>>,
    mut dirty: Local<Vec<Entity>>,
    resuming: Query<Entity, With<Resuming>>,
) {
    // Rapier has stepped the vehicles put back in the last step: their mass reads right now.
    for entity in &resuming {
        commands.entity(entity).remove::<Resuming>();
    }
    dirty.clear();
    // The fixed step bounds how stiff the body's springs may be: a new one checks them all.
    let dt = time.delta_secs_f64();
    if dt != *checked_step {
        *checked_step = dt;
        dirty.extend(all_vehicles.iter());
    }
    dirty.extend(changed_vehicles.iter());
    // A vehicle out of the simulation is checked every step (`unready`); one whose drivetrain
    // is refused was taken out in the step it was refused (`take_out_refused_drivetrains`).
    dirty.extend(unready.iter());
    dirty.extend(changed_wheels.iter().map(|b| b.0));
    // Rapier writes every body each step, so the body's state is checked each step, cheaply.
    dirty.extend(
        bodies
            .iter()
            .filter(|(_, body)| !body.is_valid())
            .map(|(e, _)| e),
    );
    if dirty.is_empty() {
        return;
    }
    dirty.sort_unstable();
    dirty.dedup();
    for &entity in dirty.iter() {
        let Ok(mut vehicle) = vehicles.get_mut(entity) else {
            continue;
        };
        let result = vehicle.settings.validate().and_then(|()| {
            let mass = body_mass.sum_of_colliders(entity);
            check_body_mass(&mass)?;
            let mut springs = Vec::new();
            for block in vehicle.blocks.iter().flat_map(|b| b.iter()) {
                if let Ok(w) = wheels.get(block) {
                    check_wheel(w.mount, w.suspension, w.wheel)
                        .map_err(|e| e.at_wheel(w.name.to_string()))?;
                    springs.push((w.mount, w.suspension));
                }
            }
            let mode = stiffest_body_mode(&mass, &springs, vehicle.settings.bars);
            check_body_mode(&mode, dt)?;
            let omega = mode.omega;
            if omega * dt > WARN_BODY_MODE_PER_STEP {
                warn!(
                    "vehicle '{}': {} is near what a fixed step of {dt:.4} s can follow (ω·dt = \
                     {:.2}): its dampers may be held down and it rides otherwise than at a finer \
                     step; {}",
                    vehicle.name,
                    mode.stated(),
                    omega * dt,
                    mode.remedy(WARN_BODY_MODE_PER_STEP)
                );
            }
            Ok(())
        });
        let chassis_was_refused = vehicle.status.error().is_some();
        // Out of the simulation, for its chassis settings or its drivetrain.
        let was_invalid = chassis_was_refused || vehicle.disabled_by_us;
        let new = match result {
            Ok(()) => ChassisStatus::Ready,
            Err(error) => {
                ChassisStatus::Invalid(Box::new(error.at_vehicle(vehicle.name.to_string())))
            }
        };
        let drivetrain_error = vehicle.drivetrain.as_deref().and_then(refusal);
        if *vehicle.status != new {
            match &new {
                ChassisStatus::Invalid(error) => {
                    error!("{error}; the vehicle is not simulated until this is fixed");
                }
                _ if chassis_was_refused && drivetrain_error.is_none() => {
                    info!(
                        "vehicle '{}': chassis settings accepted, the vehicle runs again",
                        vehicle.name
                    );
                }
                _ => {}
            }
            *vehicle.status = new;
        }

        let mut ec = commands.entity(entity);
        if vehicle.status.is_ready() && drivetrain_error.is_none() {
            if vehicle.disabled_by_us {
                if !chassis_was_refused {
                    info!(
                        "vehicle '{}': its drivetrain runs again, the vehicle too",
                        vehicle.name
                    );
                }
                // Back into the simulation, and ready in this same step: the wheels probe and
                // push before Rapier moves the body again. (Until 2026-12-02 the body was let
                // go a step before the vehicle was ready, and fell freely for that step:
                // 0.654 m/s at 15 Hz.)
                ec.remove::<(RigidBodyDisabled, DisabledByChassis)>();
                if vehicle.in_rapier {
                    // A body that joined Rapier disabled (a vehicle refused from its first
                    // step) weighs nothing there until it steps enabled, and the game reads its
                    // mass only when told it changed: until 2026-11-28 such a car, once fixed,
                    // ran on a body read as 0 kg. Until Rapier has stepped it, its mass is
                    // summed from its colliders, as on a vehicle's first step.
                    mass_modified.write(entity.into());
                    ec.insert(Resuming);
                }
            }
            if !vehicle.ready {
                ec.insert(ChassisReady);
                // Brakes follow the controls when they change: apply them again now.
                if let Some(mut controls) = vehicle.controls {
                    controls.set_changed();
                }
            }
            continue;
        }
        if was_invalid && !vehicle.ready {
            // Already out of the simulation (the error may have changed, nothing else).
            continue;
        }
        if vehicle.status.is_ready() && drivetrain_error.is_some() {
            // The drivetrain logged its error.
            info!(
                "vehicle '{}' is not simulated until its drivetrain runs again",
                vehicle.name
            );
        }
        take_out(&mut commands, &mut vehicle, &mut wheels);
    }
}

/// Takes `vehicle` out of the simulation (see [`ChassisStatus`]): Rapier's [`RigidBodyDisabled`]
/// on its body, its `ExternalForce` zeroed, its wheels off the ground with no load.
fn take_out(
    commands: &mut Commands,
    vehicle: &mut VehiclePartsItem<'_, '_>,
    wheels: &mut Query<WheelParts>,
) {
    let mut ec = commands.entity(vehicle.name.entity);
    ec.remove::<ChassisReady>();
    // Rapier applies an impulse even to a disabled body, and then clears it: a bad one is
    // discarded here, before it reaches the body.
    if let Some(i) = vehicle.settings.body.impulse
        && !(i.impulse.is_finite() && i.torque_impulse.is_finite())
    {
        ec.insert(ExternalImpulse::default());
    }
    if !vehicle.disabled {
        ec.insert((RigidBodyDisabled, DisabledByChassis));
    }
    if let Some(force) = vehicle.force.as_mut()
        && **force != ExternalForce::default()
    {
        **force = ExternalForce::default();
    }
    for block in vehicle.blocks.iter().flat_map(|b| b.iter()) {
        let Ok(mut w) = wheels.get_mut(block) else {
            continue;
        };
        if let Some(state) = w.state.as_mut() {
            let steer_angle = state.steer_angle;
            **state = WheelState {
                steer_angle,
                travel: -w.suspension.extension_limit,
                ..default()
            };
        }
        if let (Some(slot), Some(drivetrain)) = (w.slot, vehicle.drivetrain.as_mut())
            && let Some(runtime) = drivetrain.runtime_mut::<Wheel>(block, slot.node)
        {
            runtime.contact = WheelContact::default();
        }
    }
}

/// Takes out of the simulation, before Rapier steps, the accepted vehicles whose drivetrain was
/// refused in this step ([`DrivetrainSystems::Rebuild`]: a block taken away, say; or
/// [`DrivetrainSystems::Step`]: [`DrivetrainError::Diverged`]), rather than at the next step's
/// check: their body does not move a step on its springs without its tires. (Until 2026-12-02 a
/// parked car whose driven wheel was despawned sank for that step, and kept the 0.074 m/s it
/// had reached at 15 Hz while it was out, to bounce on when the wheel came back.)
///
/// [`DrivetrainSystems::Rebuild`]: bevy_vehicle_drivetrain::DrivetrainSystems::Rebuild
/// [`DrivetrainSystems::Step`]: bevy_vehicle_drivetrain::DrivetrainSystems::Step
pub(crate) fn take_out_refused_drivetrains(
    mut commands: Commands,
    mut vehicles: Query<VehicleParts, (With<Vehicle>, With<ChassisReady>)>,
    mut wheels: Query<WheelParts>,
) {
    for mut vehicle in &mut vehicles {
        if vehicle.drivetrain.as_deref().and_then(refusal).is_none() {
            continue;
        }
        // The drivetrain logged its error.
        info!(
            "vehicle '{}' is not simulated until its drivetrain runs again",
            vehicle.name
        );
        take_out(&mut commands, &mut vehicle, &mut wheels);
    }
}
