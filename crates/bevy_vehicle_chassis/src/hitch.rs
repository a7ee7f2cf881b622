//! Towing: a trailer coupled to its tow vehicle by a ball joint, braking with it.

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_vehicle_drivetrain::controls::set_if_changed;
use bevy_vehicle_drivetrain::prelude::*;

use crate::GRAVITY;
use crate::body_mass::BodyMass;
use crate::components::{Suspension, WheelMount};
use crate::statics::static_deflections;

/// On a trailer (a [`Vehicle`](crate::Vehicle)): coupled to the vehicle `tow` by a ball joint
/// (a Rapier spherical joint, with contacts between the two bodies turned off), so the trailer
/// pivots freely about the coupling in yaw, pitch and roll. This is the coupling of a
/// semi-trailer's kingpin on a fifth wheel, or of a centre-axle trailer's drawbar eye on a jaw
/// coupling. A drawbar trailer with a turntable front axle needs its dolly as a body of its
/// own, coupled the same way.
///
/// While coupled, the trailer's service brake follows the tow vehicle's brake pedal every fixed
/// step (in [`VehicleSystems::Controls`](crate::VehicleSystems::Controls)); its handbrake and
/// parking lock stay its own. A trailer whose springs were preloaded to its static deflections
/// ([`StaticPreload`]) is preloaded again as it couples, so that at its design ride height its
/// coupling carries its share of its weight (see [`StaticPreload`]).
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

/// On a vehicle whose suspension preloads are its static deflections (put there by
/// [`CarBuilder`](crate::CarBuilder) and vehicle files with `static_preload`, the default), so
/// that it rests at its design ride height.
///
/// Coupled as a trailer ([`Hitch`]), the coupling holds it up too, and its springs are
/// preloaded again for that, as it couples: the trailer taken as a rigid body on its springs
/// that pivots about its coupling point ([`static_deflections`](crate::static_deflections)
/// with a pivot: each wheel's preload `θ·(z_i − z_h)` with
/// `θ = m·g·(z_c − z_h) / Σ k_i·(z_i − z_h)²`, `z` along the chassis, `h` the coupling, `c` the
/// centre of mass, `k` the springs' stiffness); the coupling then carries the rest of the
/// weight. Uncoupled, the preloads it stood on alone come back. (Until 2026-12-02 a trailer
/// kept the preloads it stood on alone, so at design ride height its springs carried all of
/// its weight and its coupling none: the shipped 18 t centre-axle trailer put nothing on the
/// tractor's jaw where its centre of mass 0.3 m ahead of its tandem should put about 1 t, and
/// the combination snaked from 58 km/h.) A trailer whose centre of mass lies behind all its
/// wheels, or a coupling among them, keeps its preloads. A hot reload that changes a coupled
/// trailer's axles gives them the preloads it would stand on alone: couple it again (remove
/// and insert its `Hitch`) to share the weight.
#[derive(Component, Clone, Debug, Default)]
pub struct StaticPreload {
    /// Each wheel's preload standing alone (m), kept while coupled.
    solo: Vec<(Entity, f64)>,
}

/// Preloads the springs of trailers with [`StaticPreload`] as they couple, and back as they
/// uncouple (see [`StaticPreload`]).
pub(crate) fn preload_hitched_trailers(
    coupled: Query<Entity, (Changed<Hitch>, With<StaticPreload>)>,
    mut uncoupled: RemovedComponents<Hitch>,
    mut vehicles: Query<(Option<&Hitch>, &mut StaticPreload, Option<&Blocks>)>,
    mut wheels: Query<(&WheelMount, &mut Suspension)>,
    body_mass: BodyMass,
) {
    let changed: Vec<Entity> = coupled.iter().chain(uncoupled.read()).collect();
    for trailer in changed {
        let Ok((hitch, mut preload, blocks)) = vehicles.get_mut(trailer) else {
            continue;
        };
        if let Some(hitch) = hitch {
            if preload.solo.is_empty() {
                preload.solo = blocks
                    .iter()
                    .flat_map(|b| b.iter())
                    .filter_map(|w| wheels.get(w).ok().map(|(_, s)| (w, s.preload)))
                    .collect();
            }
            let mass = body_mass.sum_of_colliders(trailer);
            let pivot = f64::from(hitch.trailer_point.z);
            let weight = f64::from(mass.mass) * GRAVITY;
            let center = f64::from(mass.local_center_of_mass.z);
            // Each wheel's place along the chassis (m) and its spring (N/m).
            let springs: Vec<(Entity, (f64, f64))> = preload
                .solo
                .iter()
                .filter_map(|&(w, _)| {
                    let (mount, s) = wheels.get(w).ok()?;
                    Some((w, (f64::from(mount.position.z), s.stiffness)))
                })
                .collect();
            let places: Vec<(f64, f64)> = springs.iter().map(|(_, s)| *s).collect();
            let deflections = static_deflections(weight, center, &places, Some(pivot))
                .filter(|d| d.iter().all(|&d| d > 0.0));
            if let Some(deflections) = deflections {
                for ((w, _), d) in springs.iter().zip(deflections) {
                    if let Ok((_, mut s)) = wheels.get_mut(*w) {
                        set_if_changed(&mut s.preload, d);
                    }
                }
            }
        } else {
            for (w, solo) in core::mem::take(&mut preload.solo) {
                if let Ok((_, mut s)) = wheels.get_mut(w) {
                    set_if_changed(&mut s.preload, solo);
                }
            }
        }
    }
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
