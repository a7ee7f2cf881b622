//! Towing: a trailer coupled to its tow vehicle by a ball joint, braking with it.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::controls::set_if_changed;
use bevy_vehicle_drivetrain::prelude::*;

/// On a trailer (a [`Vehicle`](crate::Vehicle)): coupled to the vehicle `tow` by a ball joint
/// (a Rapier spherical joint, with contacts between the two bodies turned off), so the trailer
/// pivots freely about the coupling in yaw, pitch and roll. This is the coupling of a
/// semi-trailer's kingpin on a fifth wheel, or of a centre-axle trailer's drawbar eye on a jaw
/// coupling. A drawbar trailer with a turntable front axle needs its dolly as a body of its
/// own, coupled the same way.
///
/// While coupled, the trailer's service brake follows the tow vehicle's brake pedal every fixed
/// step (in [`VehicleSystems::Controls`](crate::VehicleSystems::Controls)); its handbrake and
/// parking lock stay its own.
///
/// Insert it to couple, remove it to uncouple. Place the trailer so that the two coupling
/// points meet; a gap is closed by the joint within a few steps.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_vehicle_chassis::Hitch;
/// # fn couple(mut commands: Commands, tractor: Entity, trailer: Entity) {
/// commands.entity(trailer).insert(Hitch {
///     tow: tractor,
///     tow_point: Vec3::new(0.0, 0.4, 3.6),     // behind the tractor's rear axle
///     trailer_point: Vec3::new(0.0, 0.4, -5.5), // the drawbar eye
/// });
/// # }
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Hitch {
    /// The tow vehicle.
    pub tow: Entity,
    /// Coupling point on the tow vehicle: hitch ball, jaw or fifth-wheel pin (m, the tow
    /// vehicle's chassis frame).
    pub tow_point: Vec3,
    /// Coupling point on the trailer: drawbar eye or kingpin (m, the trailer's chassis frame).
    pub trailer_point: Vec3,
}

impl Hitch {
    /// The hitch between a trailer and `tow` at their [`Coupling`] points.
    pub fn between(tow: Entity, tow_coupling: &Coupling, trailer_coupling: &Coupling) -> Hitch {
        Hitch {
            tow,
            tow_point: tow_coupling.0,
            trailer_point: trailer_coupling.0,
        }
    }
}

/// On a vehicle: where it couples to another (m, its chassis frame): a tow vehicle's jaw
/// coupling or fifth wheel, a trailer's drawbar eye or kingpin. Vehicle files set it with
/// their `coupling` field; [`Hitch::between`] joins two vehicles at theirs.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Coupling(pub Vec3);

/// Couples a trailer when its [`Hitch`] is inserted (or changed).
pub(crate) fn on_hitch_inserted(
    ev: On<Insert, Hitch>,
    hitches: Query<&Hitch>,
    mut commands: Commands,
) {
    let Ok(hitch) = hitches.get(ev.entity) else {
        return;
    };
    let mut joint = SphericalJointBuilder::new()
        .local_anchor1(hitch.tow_point)
        .local_anchor2(hitch.trailer_point)
        .build();
    joint.set_contacts_enabled(false);
    commands
        .entity(ev.entity)
        .try_insert(ImpulseJoint::new(hitch.tow, joint));
}

/// Uncouples a trailer when its [`Hitch`] is removed.
pub(crate) fn on_hitch_removed(ev: On<Remove, Hitch>, mut commands: Commands) {
    commands.entity(ev.entity).try_remove::<ImpulseJoint>();
}

/// The trailer's service brake follows the tow vehicle's pedal.
pub(crate) fn follow_tow_brakes(
    trailers: Query<(Entity, &Hitch)>,
    mut controls: Query<&mut VehicleControls>,
) {
    for (trailer, hitch) in &trailers {
        let Ok(pedal) = controls.get(hitch.tow).map(|c| c.brake) else {
            continue;
        };
        if let Ok(mut own) = controls.get_mut(trailer) {
            set_if_changed(&mut own.brake, pedal);
        }
    }
}
