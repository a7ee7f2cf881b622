//! [`CarBuilder`]: a complete four-wheeled car in code.

use std::sync::Arc;

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::{
    Aerodynamics, AntiRollBar, AntiRollBars, Brakes, GroundProbe, Side, Steering, Suspension,
    TractionControl, WheelMount,
};
use crate::error::{ChassisError, each_axis, finite, non_negative, positive};
use crate::hitch::StaticPreload;
use crate::validation::ChassisStatus;
use crate::vehicle::Vehicle;

/// Gravity (m/s²) for the static preload: Rapier's default.
pub const GRAVITY: f64 = 9.81;

/// Which axles the powertrain drives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DriveLayout {
    /// Front-wheel drive.
    Front,
    /// Rear-wheel drive.
    #[default]
    Rear,
    /// All-wheel drive through a centre differential (front axle on its `left` output).
    All,
}

/// What drives the car.
// A build-time description, made once per car: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Powertrain {
    /// Engine → clutch → gearbox → differential(s).
    Combustion {
        /// The engine.
        engine: Engine,
        /// The clutch.
        clutch: Clutch,
        /// The gearbox.
        gearbox: Gearbox,
    },
    /// Motor → differential(s) (the differential ratio is the reduction gear).
    Electric(Motor),
}

impl Default for Powertrain {
    /// The default engine and six-speed gearbox, with an automatic clutch so the car pulls away
    /// and stops in gear without a clutch pedal.
    fn default() -> Self {
        Powertrain::Combustion {
            engine: Engine::default(),
            clutch: Clutch {
                automatic: Some(AutomaticClutch::default()),
                ..default()
            },
            gearbox: Gearbox::default(),
        }
    }
}

/// One wheel and its corner: the same on all four wheels of a [`CarBuilder`].
#[derive(Clone, Debug, PartialEq)]
pub struct WheelSpec {
    /// Rolling radius (m, > 0).
    pub radius: f64,
    /// Tire width (m, > 0).
    pub width: f32,
    /// Wheel inertia about the axle (kg·m², > 0).
    pub inertia: f64,
    /// The tire (checked like the drivetrain's [`Wheel`] checks it: a valid model, relaxation
    /// lengths > 0, damping and rolling resistance ≥ 0).
    pub tire: Arc<Tire>,
    /// The suspension; its `preload` is overwritten with the static deflection when
    /// [`CarBuilder::static_preload`] is set.
    pub suspension: Suspension,
    /// How the wheel finds the ground.
    pub probe: GroundProbe,
}

impl Default for WheelSpec {
    /// A 205/55 R16-sized wheel on the default suspension and tire.
    fn default() -> Self {
        WheelSpec {
            radius: 0.316,
            width: 0.205,
            inertia: 1.2,
            tire: Arc::new(Tire::default()),
            suspension: Suspension::default(),
            probe: GroundProbe::Cylinder,
        }
    }
}

impl WheelSpec {
    /// Checks the wheel: radius, width and inertia finite and > 0, the tire and the
    /// suspension. Field paths are relative to the spec: `radius`, `tire.relaxation_length[0]`,
    /// `suspension.stiffness` ([`CarBuilder::validate`] puts them inside `wheel` or
    /// `rear_wheel`).
    pub fn validate(&self) -> Result<(), ChassisError> {
        positive("radius", self.radius, "m")?;
        positive("width", self.width, "m")?;
        positive("inertia", self.inertia, "kg·m²")?;
        // The tire, as the wheel block checks it; its paths become `tire.…`.
        self.block().validate().map_err(|e| {
            let field = match e.field.strip_prefix("load.Tire.") {
                Some(rest) => format!("tire.{rest}"),
                None => e.field,
            };
            ChassisError::new(field, e.reason)
        })?;
        self.suspension.validate()
    }

    /// The wheel block this spec spawns.
    fn block(&self) -> Wheel {
        Wheel {
            inertia: self.inertia,
            radius: self.radius,
            load: WheelLoad::Tire(self.tire.clone()),
            brake_torque: 0.0,
        }
    }
}

/// A complete car: a chassis body, four wheels with tires and suspension, brakes, steering,
/// and a powertrain driving one or both axles.
///
/// Positions are in the chassis frame (+X right, +Y up, −Z forward), relative to the chassis
/// entity's origin.
///
/// [`CarBuilder::validate`] checks every setting (NaN and infinities are refused everywhere,
/// each value must lie in the range its field documents); [`CarBuilder::try_spawn`] spawns
/// nothing when a setting is refused, and [`CarBuilder::spawn`] spawns an inert placeholder
/// carrying the error instead of a car. Neither panics.
#[derive(Clone, Debug, PartialEq)]
pub struct CarBuilder {
    /// The vehicle's name.
    pub name: String,
    /// Total mass, wheels included (kg, > 0).
    pub mass: f32,
    /// Principal moments of inertia about the centre of mass, along the chassis axes (kg·m²,
    /// each > 0): about X (pitch), Y (yaw) and Z (roll), since +X is right and −Z forward.
    pub inertia: Vec3,
    /// Centre of mass (m, chassis frame, finite). With [`CarBuilder::static_preload`] its `z`
    /// must lie between the axles (inclusive), or an axle would carry a negative load.
    pub center_of_mass: Vec3,
    /// Half extents of the body's collision box (m, each > 0).
    pub body_half_extents: Vec3,
    /// Centre of the body's collision box (m, chassis frame, finite).
    pub body_center: Vec3,
    /// Z of the front axle (m, finite, less than `rear_axle`; negative is forward of the
    /// origin).
    pub front_axle: f32,
    /// Z of the rear axle (m, finite, greater than `front_axle`).
    pub rear_axle: f32,
    /// Distance between the left and right wheel centres (m, > 0).
    pub track: f32,
    /// Y of the wheel centres at design ride height (m, finite).
    pub wheel_height: f32,
    /// The wheels: all four, or the front two when `rear_wheel` is set.
    pub wheel: WheelSpec,
    /// The rear wheels, when they differ from the front ones (staggered tires); `None` uses
    /// `wheel` on both axles.
    pub rear_wheel: Option<WheelSpec>,
    /// Set each corner's suspension preload to its static deflection, so that the car rests at
    /// design ride height.
    pub static_preload: bool,
    /// Driven axles.
    pub layout: DriveLayout,
    /// Engine or motor, and its transmission.
    pub powertrain: Powertrain,
    /// The axle differential(s).
    pub differential: Differential,
    /// The centre differential, for [`DriveLayout::All`].
    pub center_differential: Differential,
    /// Brakes.
    pub brakes: Brakes,
    /// Steering of the front axle.
    pub steering: Steering,
    /// Anti-roll bar stiffness on the front and rear axle (N/m, ≥ 0; 0 for none).
    pub anti_roll_bars: [f64; 2],
    /// Aerodynamic drag and lift.
    pub aerodynamics: Aerodynamics,
    /// Drivetrain RK4 substeps per fixed step.
    pub substeps: u32,
}

impl Default for CarBuilder {
    /// A 1300 kg front-engined rear-drive saloon with a 2.6 m wheelbase and 1.5 m track, its
    /// centre of mass 0.5 m above the ground and 55 % on the front axle; pitch, yaw and roll
    /// inertia 1800, 2000 and 550 kg·m²; [`Brakes::default`] with the built-in
    /// [`TractionControl`] (no ABS).
    ///
    /// The traction control is on because its engine spins the rear tires from rest in first
    /// gear, and through every shift taken with the throttle held: spinning tires on an open
    /// differential balance on a knife edge (the one that spins faster grips less), so a
    /// perfectly symmetric car ends with one tire spinning, or not, by rounding, and its
    /// launch differed by a quarter between 30 and 60 Hz. Under the control both tires stay
    /// near their peak and the car launches alike at every rate. Set
    /// `brakes.traction_control` to `None` for the car without it.
    fn default() -> Self {
        CarBuilder {
            name: "car".into(),
            mass: 1300.0,
            inertia: Vec3::new(1800.0, 2000.0, 550.0),
            center_of_mass: Vec3::new(0.0, 0.5 - 0.316, -0.13),
            body_half_extents: Vec3::new(0.85, 0.3, 2.1),
            body_center: Vec3::new(0.0, 0.45, 0.0),
            front_axle: -1.3,
            rear_axle: 1.3,
            track: 1.5,
            wheel_height: 0.0,
            wheel: WheelSpec::default(),
            rear_wheel: None,
            static_preload: true,
            layout: DriveLayout::Rear,
            powertrain: Powertrain::default(),
            differential: Differential::default(),
            center_differential: Differential {
                ratio: 1.0,
                ..default()
            },
            brakes: Brakes {
                traction_control: Some(TractionControl::default()),
                ..default()
            },
            steering: Steering::default(),
            anti_roll_bars: [15_000.0, 8_000.0],
            aerodynamics: Aerodynamics::default(),
            substeps: 4,
        }
    }
}

impl CarBuilder {
    /// The wheels of `axle` (0 front, 1 rear).
    pub fn wheel_spec(&self, axle: usize) -> &WheelSpec {
        match (axle, &self.rear_wheel) {
            (1, Some(rear)) => rear,
            _ => &self.wheel,
        }
    }

    /// Static load on one wheel of `axle` (0 front, 1 rear) (N).
    pub fn static_wheel_load(&self, axle: usize) -> f64 {
        let (zf, zr, zc) = (
            f64::from(self.front_axle),
            f64::from(self.rear_axle),
            f64::from(self.center_of_mass.z),
        );
        let front_share = (zr - zc) / (zr - zf);
        let share = if axle == 0 {
            front_share
        } else {
            1.0 - front_share
        };
        0.5 * share * f64::from(self.mass) * GRAVITY
    }

    /// The suspension of a wheel on `axle` (0 front, 1 rear), its preload set to the static
    /// deflection when [`CarBuilder::static_preload`] is set.
    fn suspension(&self, axle: usize) -> Suspension {
        let mut suspension = self.wheel_spec(axle).suspension.clone();
        if self.static_preload {
            suspension.preload = self.static_wheel_load(axle) / suspension.stiffness;
        }
        suspension
    }

    /// Checks every setting the builder uses, without spawning anything.
    ///
    /// The error names the vehicle and the field's path inside the builder, e.g.
    /// ``vehicle 'car': setting `rear_wheel.radius` must be greater than 0 (m), got 0`` or
    /// ``vehicle 'car': setting `wheel.suspension.bump_damping` must not be negative (N·s/m),
    /// got -1``. Drivetrain blocks are checked by their own [`Block::validate`], under
    /// `powertrain.engine`, `powertrain.clutch`, `powertrain.gearbox`, `powertrain.motor`,
    /// `differential` and `center_differential`.
    pub fn validate(&self) -> Result<(), ChassisError> {
        self.check().map_err(|e| e.at_vehicle(self.name.clone()))
    }

    fn check(&self) -> Result<(), ChassisError> {
        positive("mass", self.mass, "kg")?;
        each_axis("inertia", self.inertia, "kg·m²", positive)?;
        each_axis("center_of_mass", self.center_of_mass, "m", finite)?;
        each_axis("body_half_extents", self.body_half_extents, "m", positive)?;
        each_axis("body_center", self.body_center, "m", finite)?;
        finite("front_axle", self.front_axle, "m")?;
        finite("rear_axle", self.rear_axle, "m")?;
        if self.front_axle >= self.rear_axle {
            return Err(ChassisError::new(
                "front_axle",
                format!(
                    "must be forward of (less than) rear_axle = {} (m), got {}",
                    self.rear_axle, self.front_axle
                ),
            ));
        }
        positive("track", self.track, "m")?;
        finite("wheel_height", self.wheel_height, "m")?;
        let z = self.center_of_mass.z;
        if self.static_preload && !(self.front_axle..=self.rear_axle).contains(&z) {
            return Err(ChassisError::new(
                "center_of_mass.z",
                format!(
                    "must lie between front_axle = {} and rear_axle = {} when static_preload is set (m), got {z}",
                    self.front_axle, self.rear_axle
                ),
            ));
        }
        self.wheel.validate().map_err(|e| e.within("wheel"))?;
        if let Some(rear) = &self.rear_wheel {
            rear.validate().map_err(|e| e.within("rear_wheel"))?;
        }
        let ground = |axle: usize| self.wheel_height - self.wheel_spec(axle).radius as f32;
        crate::error::body_clearance(
            "body_center.y",
            self.body_center.y - self.body_half_extents.y,
            [-1.0, 1.0].map(|side| self.body_center.z + side * self.body_half_extents.z),
            &[[self.front_axle, ground(0)], [self.rear_axle, ground(1)]],
        )?;
        // The suspensions as spawned, with their static preload.
        for axle in 0..2 {
            let prefix = if axle == 1 && self.rear_wheel.is_some() {
                "rear_wheel"
            } else {
                "wheel"
            };
            self.suspension(axle)
                .validate()
                .map_err(|e| e.within(prefix))?;
        }
        match &self.powertrain {
            Powertrain::Combustion {
                engine,
                clutch,
                gearbox,
            } => {
                engine
                    .validate()
                    .map_err(|e| ChassisError::from_setting("powertrain.engine", e))?;
                clutch
                    .validate()
                    .map_err(|e| ChassisError::from_setting("powertrain.clutch", e))?;
                gearbox
                    .validate()
                    .map_err(|e| ChassisError::from_setting("powertrain.gearbox", e))?;
            }
            Powertrain::Electric(motor) => motor
                .validate()
                .map_err(|e| ChassisError::from_setting("powertrain.motor", e))?,
        }
        self.differential
            .validate()
            .map_err(|e| ChassisError::from_setting("differential", e))?;
        self.center_differential
            .validate()
            .map_err(|e| ChassisError::from_setting("center_differential", e))?;
        self.brakes.validate()?;
        self.steering.validate()?;
        for (i, &k) in self.anti_roll_bars.iter().enumerate() {
            non_negative(&format!("anti_roll_bars[{i}]"), k, "N/m")?;
        }
        self.aerodynamics.validate()
    }

    /// Checks the settings ([`CarBuilder::validate`]) and `transform` (finite, a scale of 1:
    /// [`checks::transform`](crate::checks::transform)), then spawns the
    /// car at `transform` and returns the vehicle entity. When something is refused, spawns
    /// nothing and returns the error.
    pub fn try_spawn(
        &self,
        commands: &mut Commands,
        transform: Transform,
    ) -> Result<Entity, ChassisError> {
        self.validate()?;
        crate::error::transform(&transform).map_err(|e| e.at_vehicle(self.name.clone()))?;
        Ok(self.spawn_checked(commands, transform))
    }

    /// Spawns the car at `transform` and returns the vehicle entity, like
    /// [`CarBuilder::try_spawn`], for callers that do not handle the error themselves.
    ///
    /// Never panics and never spawns a half-built car: when a setting is refused, the error is
    /// logged with `error!` and the returned entity is an inert placeholder holding only the
    /// car's `Name`, `transform` and [`ChassisStatus::Invalid`] with the error (no body, no
    /// blocks, not a [`Vehicle`]).
    pub fn spawn(&self, commands: &mut Commands, transform: Transform) -> Entity {
        match self.try_spawn(commands, transform) {
            Ok(car) => car,
            Err(error) => {
                error!("{error}; the car was not built");
                commands
                    .spawn((
                        Name::new(self.name.clone()),
                        transform,
                        ChassisStatus::Invalid(Box::new(error)),
                    ))
                    .id()
            }
        }
    }

    /// Spawns the car; the settings have been checked.
    fn spawn_checked(&self, commands: &mut Commands, transform: Transform) -> Entity {
        let car = commands
            .spawn((
                Name::new(self.name.clone()),
                Vehicle,
                transform,
                Collider::compound(vec![(
                    self.body_center,
                    Quat::IDENTITY,
                    Collider::cuboid(
                        self.body_half_extents.x,
                        self.body_half_extents.y,
                        self.body_half_extents.z,
                    ),
                )]),
                ColliderMassProperties::MassProperties(MassProperties {
                    local_center_of_mass: self.center_of_mass,
                    mass: self.mass,
                    principal_inertia: self.inertia,
                    principal_inertia_local_frame: Quat::IDENTITY,
                }),
                Drivetrain::new(self.substeps),
                self.brakes.clone(),
                self.steering.clone(),
                AntiRollBars(vec![
                    AntiRollBar {
                        axle: 0,
                        stiffness: self.anti_roll_bars[0],
                    },
                    AntiRollBar {
                        axle: 1,
                        stiffness: self.anti_roll_bars[1],
                    },
                ]),
                self.aerodynamics,
            ))
            .id();
        if self.static_preload {
            commands.entity(car).insert(StaticPreload::default());
        }

        // Powertrain down to the last shaft before the axle differentials.
        let root = match &self.powertrain {
            Powertrain::Combustion {
                engine,
                clutch,
                gearbox,
            } => {
                let engine = commands
                    .spawn((Name::new("engine"), BlockOf(car), engine.clone()))
                    .id();
                let clutch = commands
                    .spawn((
                        Name::new("clutch"),
                        BlockOf(car),
                        clutch.clone(),
                        DrivenBy::new(engine),
                    ))
                    .id();
                commands
                    .spawn((
                        Name::new("gearbox"),
                        BlockOf(car),
                        gearbox.clone(),
                        DrivenBy::new(clutch),
                    ))
                    .id()
            }
            Powertrain::Electric(motor) => commands
                .spawn((Name::new("motor"), BlockOf(car), motor.clone()))
                .id(),
        };
        let axle_diff = |commands: &mut Commands, name: &str, upstream: (Entity, Port)| {
            commands
                .spawn((
                    Name::new(name.to_owned()),
                    BlockOf(car),
                    self.differential.clone(),
                    DrivenBy::port(upstream.0, upstream.1),
                ))
                .id()
        };
        let (front_diff, rear_diff) = match self.layout {
            DriveLayout::Front => (
                Some(axle_diff(commands, "front_differential", (root, Port::OUT))),
                None,
            ),
            DriveLayout::Rear => (
                None,
                Some(axle_diff(commands, "rear_differential", (root, Port::OUT))),
            ),
            DriveLayout::All => {
                let centre = commands
                    .spawn((
                        Name::new("centre_differential"),
                        BlockOf(car),
                        self.center_differential.clone(),
                        DrivenBy::new(root),
                    ))
                    .id();
                (
                    Some(axle_diff(
                        commands,
                        "front_differential",
                        (centre, Port::LEFT),
                    )),
                    Some(axle_diff(
                        commands,
                        "rear_differential",
                        (centre, Port::RIGHT),
                    )),
                )
            }
        };

        for (axle, z, diff) in [
            (0u8, self.front_axle, front_diff),
            (1, self.rear_axle, rear_diff),
        ] {
            for side in [Side::Left, Side::Right] {
                let x = match side {
                    Side::Left => -0.5 * self.track,
                    Side::Right => 0.5 * self.track,
                };
                let position = Vec3::new(x, self.wheel_height, z);
                let spec = self.wheel_spec(axle as usize);
                let suspension = self.suspension(axle as usize);
                let name = format!(
                    "wheel_{}{}",
                    if axle == 0 { "f" } else { "r" },
                    if side == Side::Left { "l" } else { "r" }
                );
                let mut wheel = commands.spawn((
                    Name::new(name),
                    BlockOf(car),
                    ChildOf(car),
                    Transform::from_translation(position),
                    spec.block(),
                    WheelMount {
                        position,
                        axle,
                        side,
                        steered: axle == 0,
                        width: spec.width,
                    },
                    suspension,
                    spec.probe,
                ));
                if let Some(diff) = diff {
                    let port = if side == Side::Left {
                        Port::LEFT
                    } else {
                        Port::RIGHT
                    };
                    wheel.insert(DrivenBy::port(diff, port));
                }
            }
        }
        car
    }
}
