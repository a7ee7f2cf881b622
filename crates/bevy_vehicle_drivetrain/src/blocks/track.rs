//! Track: one side of a tracked vehicle, a rigid belt that turns its road wheels together.

use bevy::prelude::*;

use crate::block::{Block, Input, PortSpec, Ports, SettingError, Shafts, StageContext};
use crate::shaft::{Shaft, ShaftUp, rigid_join, rigid_split};

/// The track's ports: the sprocket shaft on its input, up to eight road wheels.
const TRACK_PORTS: Ports = Ports {
    input: Input::Required,
    outputs: &[
        PortSpec::optional("road_1"),
        PortSpec::optional("road_2"),
        PortSpec::optional("road_3"),
        PortSpec::optional("road_4"),
        PortSpec::optional("road_5"),
        PortSpec::optional("road_6"),
        PortSpec::optional("road_7"),
        PortSpec::optional("road_8"),
    ],
};

/// One track of a tracked vehicle: a rigid belt wrapped round the sprocket (its input) and
/// the idlers, laid on the ground under a row of road wheels (its outputs `road_1` to
/// `road_8`, front to back; leave the ones a vehicle lacks open).
///
/// The belt does not stretch, so the sprocket and every road wheel turn together (their
/// rolling radii are the track's: give the road wheels' [`Wheel`](crate::blocks::Wheel) the
/// sprocket's pitch radius). Each road wheel carries the ground contact of the track under it,
/// so the track grips along its whole length, with its own load from the suspension. In the
/// passes the track is a rigid joint: it hands up the sum of its road wheels' momenta, inertias
/// and torques, and hands each the torque that gives it the shared acceleration
/// `α = (T_sprocket + ΣT_i) / ΣI_i`; a road wheel held by its brake holds the whole track,
/// and the held road wheels share the sprocket's torque (each brake lets go when its share is
/// more than it holds).
///
/// No settings, no state; no inertia (lump the belt's and idlers' into the road wheels).
#[derive(Component, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Track {}

/// What a [`Track`] reports after each step.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct TrackSensors {
    /// Sprocket speed (rad/s).
    pub speed: f64,
    /// Drive torque at the sprocket (N·m).
    pub sprocket_torque: f64,
}

impl Block for Track {
    const TYPE_NAME: &'static str = "Track";
    const TAKES_CONTROLS: bool = false;
    type Runtime = ();
    type Sensors = TrackSensors;

    fn ports(&self) -> Ports {
        TRACK_PORTS
    }

    fn validate(&self) -> Result<(), SettingError> {
        Ok(())
    }

    #[inline]
    fn upstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        outputs: &[Shaft],
        _: &mut [f64],
    ) -> ShaftUp {
        rigid_join(outputs, |_| 1.0)
    }

    #[inline]
    fn downstream(
        &self,
        _: &(),
        _: &[f64],
        _: &StageContext,
        input: Option<&Shaft>,
        outputs: &mut [Shaft],
        _: &mut [f64],
    ) {
        let input = Shaft::down_of(input);
        rigid_split(outputs, |_| 1.0, input.torque, input.speed);
    }

    fn sensors(&self, _: &(), _: &[f64], shafts: &Shafts) -> TrackSensors {
        let input = Shaft::down_of(shafts.input);
        TrackSensors {
            speed: input.speed,
            sprocket_torque: input.torque,
        }
    }
}
