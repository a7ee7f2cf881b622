//! The driver's controls: one component on the vehicle entity that a game, an AI or an input
//! device writes, and that every block reads the inputs it cares about from.

use bevy::prelude::*;

use crate::block::{clamp_input, wait_over};

/// What the driver asks of a vehicle, on the vehicle entity. Set it from a game, an AI or an
/// input device before [`DrivetrainSystems::Controls`](crate::DrivetrainSystems::Controls).
///
/// Blocks take what concerns them through [`Block::apply_controls`](crate::Block::apply_controls)
/// (the engine its throttle and ignition, the clutch its pedal, the gearbox the selected gear);
/// the chassis turns `brake`, `handbrake`, `parking` and `steering` into brake torques and wheel
/// angles. Values out of range are clamped where they are used.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct VehicleControls {
    /// Ignition: the engine runs (turning it on restarts a stalled engine).
    pub engine_running: bool,
    /// Throttle pedal, 0 (released) to 1 (floored).
    pub throttle: f64,
    /// Brake pedal, 0 (released) to 1 (floored).
    pub brake: f64,
    /// Clutch pedal, 0 (released: clutch engaged) to 1 (pressed: clutch open).
    pub clutch: f64,
    /// Steering, −1 (full left) to 1 (full right). Angles and yaw rates read back from the
    /// vehicle are positive to the left (about +Y, right-handed), so a positive `steering`
    /// gives a negative wheel `steer_angle` and yaw rate.
    pub steering: f64,
    /// Selected gear: negative for reverse, 0 for neutral, positive for forward gears.
    pub gear: i32,
    /// Handbrake lever, 0 (released) to 1 (pulled).
    pub handbrake: f64,
    /// Parking lock engaged.
    pub parking: bool,
    /// Retarder lever, 0 (off) to 1 (full), or `None` to leave every [`Retarder`]'s level to
    /// game code. Clamped.
    ///
    /// [`Retarder`]: crate::blocks::Retarder
    pub retarder: Option<f64>,
    /// Transfer-case range selector, or `None` to leave every [`TransferCase`]'s range to game
    /// code.
    ///
    /// [`TransferCase`]: crate::blocks::TransferCase
    pub range: Option<crate::blocks::TransferRange>,
}

impl Default for VehicleControls {
    /// Engine running, in neutral, everything released.
    fn default() -> Self {
        VehicleControls {
            engine_running: true,
            throttle: 0.0,
            brake: 0.0,
            clutch: 0.0,
            steering: 0.0,
            gear: 0,
            handbrake: 0.0,
            parking: false,
            retarder: None,
            range: None,
        }
    }
}

impl VehicleControls {
    /// Throttle clamped to [0, 1].
    pub fn throttle(&self) -> f64 {
        clamp_input(self.throttle, 0.0, 1.0, 0.0)
    }

    /// Brake pedal clamped to [0, 1].
    pub fn brake(&self) -> f64 {
        clamp_input(self.brake, 0.0, 1.0, 0.0)
    }

    /// Clutch pedal clamped to [0, 1].
    pub fn clutch(&self) -> f64 {
        clamp_input(self.clutch, 0.0, 1.0, 0.0)
    }

    /// Steering clamped to [−1, 1].
    pub fn steering(&self) -> f64 {
        clamp_input(self.steering, -1.0, 1.0, 0.0)
    }

    /// Handbrake clamped to [0, 1].
    pub fn handbrake(&self) -> f64 {
        clamp_input(self.handbrake, 0.0, 1.0, 0.0)
    }

    /// Direction of travel the selected gear asks for: −1 reverse, 0 neutral, 1 forward.
    pub fn direction(&self) -> f64 {
        f64::from(self.gear.signum())
    }
}

/// Sets `target` to `value`, returning whether it changed (for change detection).
#[inline]
pub fn set_if_changed<T: PartialEq>(target: &mut T, value: T) -> bool {
    if *target == value {
        false
    } else {
        *target = value;
        true
    }
}

/// A driver's throttle foot on a slippery launch, as in published acceleration tests (and as
/// the simplest traction control acts): the more a driven tire's slip ratio exceeds `slip`,
/// the further the throttle is taken back, down to `floor` at `slip + band`; the foot follows
/// that target with the lag `time_constant`, both ways. Without it, a drive that can put more
/// torque on its tires than they take spins them at launch, and past their peak (a tire's
/// force falls with more slip) keeps them spinning well into the gears.
///
/// The rule is continuous and per second, so that a driver sampling it at 30, 60 or 120 Hz
/// drives the same: the lag is applied exactly (`1 − e^(−dt/τ)` of the way per step), and it
/// is long against a 30 Hz step. (An earlier rule eased at a fixed rate while the slip was
/// too high and gave the full throttle back at once: its on-off cycle followed the step, and a
/// hatchback's 0–100 km/h took 2 % longer at 30 Hz than at 60.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThrottleEasing {
    /// Slip ratio of a driven tire above which the throttle is eased (dimensionless, > 0):
    /// about where the tires' force curves peak.
    pub slip: f64,
    /// Slip ratio above `slip` at which the throttle reaches `floor` (dimensionless, ≥ 0; at 0
    /// the target drops to the floor as soon as the slip passes `slip`).
    pub band: f64,
    /// Least throttle while easing (0..1).
    pub floor: f64,
    /// Time constant with which the throttle follows its target (s, ≥ 0; at 0 it follows at
    /// once).
    pub time_constant: f64,
}

impl ThrottleEasing {
    /// Eases from `slip` on, down to 0.1 at `slip + 0.1`, with a 0.1 s lag.
    pub fn above_slip(slip: f64) -> ThrottleEasing {
        ThrottleEasing {
            slip,
            band: 0.1,
            floor: 0.1,
            time_constant: 0.1,
        }
    }

    /// The throttle for the next `dt` (s), from the throttle the driver wants (`wanted`, 0..1),
    /// the throttle applied now (`current`) and the largest slip ratio of the driven tires
    /// (`slip`). Never above `wanted`, nor below the lower of `floor` and `wanted`; a value
    /// that is not a number counts as no throttle wanted, no slip, a floor of 0, or (for
    /// `current`) the wanted throttle, so the result is always a throttle in 0..1.
    pub fn next(&self, wanted: f64, current: f64, slip: f64, dt: f64) -> f64 {
        let [wanted, floor, target] = self.aim(wanted, slip);
        let current = unit(current, wanted);
        let follow = if self.time_constant > 0.0 {
            1.0 - (-dt / self.time_constant).exp()
        } else {
            1.0
        };
        let next = current + (target - current) * follow;
        if next.is_nan() {
            target
        } else {
            next.clamp(floor, wanted)
        }
    }

    /// The throttle the rule aims at, before the lag, for the throttle the driver wants
    /// (`wanted`, 0..1) and the largest slip ratio of the driven tires (`slip`): `wanted` up to
    /// `slip`, falling linearly to `floor` at `slip + band`. Not-a-number inputs count as in
    /// [`ThrottleEasing::next`].
    pub fn target(&self, wanted: f64, slip: f64) -> f64 {
        self.aim(wanted, slip)[2]
    }

    /// `[wanted, floor, target]`, each in 0..1: see [`ThrottleEasing::target`].
    fn aim(&self, wanted: f64, slip: f64) -> [f64; 3] {
        let wanted = unit(wanted, 0.0);
        let floor = unit(self.floor, 0.0).min(wanted);
        let excess = if self.band > 0.0 {
            (slip - self.slip) / self.band
        } else if slip > self.slip {
            1.0
        } else {
            0.0
        };
        let excess = unit(excess, 0.0);
        [wanted, floor, wanted + (floor - wanted) * excess]
    }
}

/// `x` clamped to 0..1, or `fallback` if `x` is not a number.
fn unit(x: f64, fallback: f64) -> f64 {
    if x.is_nan() {
        fallback
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Shift points for a driver that works a manual gearbox's lever by engine speed (a program,
/// an AI, a player's "automatic" mode): up above `up_rpm`, down below `down_rpm`, never
/// again before the last shift has engaged and `hold` has passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShiftSchedule {
    /// Shift up above this engine speed (rpm).
    pub up_rpm: f64,
    /// Shift down below this engine speed (rpm).
    pub down_rpm: f64,
    /// Gear to pull away in (≥ 1).
    pub start_gear: i32,
    /// Time after a shift before the next one (s): the gearbox's shift time and the engine
    /// settling.
    pub hold: f64,
}

impl ShiftSchedule {
    /// Highest up-shift point of [`ShiftSchedule::below_limit`], as a share of the engine's
    /// rev limit: close enough to the limit to use the engine's power band, far enough that
    /// the engine does not bounce off the limiter before the shift engages.
    pub const UP_SHARE: f64 = 0.92;
    /// Highest down-shift point of [`ShiftSchedule::below_limit`], as a share of the engine's
    /// rev limit.
    pub const DOWN_SHARE: f64 = 0.45;

    /// Shift points `up_rpm` and `down_rpm` (rpm), lowered to [`ShiftSchedule::UP_SHARE`] and
    /// [`ShiftSchedule::DOWN_SHARE`] of the engine's rev limit `max_rpm` (rpm) where those are
    /// lower, pulling away in first gear and waiting `hold` (s) between shifts: one driver for
    /// every engine, a diesel's limit lying below a petrol engine's shift point.
    pub fn below_limit(up_rpm: f64, down_rpm: f64, max_rpm: f64, hold: f64) -> ShiftSchedule {
        ShiftSchedule {
            up_rpm: up_rpm.min(Self::UP_SHARE * max_rpm),
            down_rpm: down_rpm.min(Self::DOWN_SHARE * max_rpm),
            start_gear: 1,
            hold,
        }
    }

    /// An unhurried driver's schedule for an engine with the speed limit `max_rpm` (rpm) and a
    /// gearbox of `forward_gears` gears shifting in `shift_time` (s): up at 75 % of the limit,
    /// down at 45 %, pulling away in a quarter of the gears (3rd of 12, 1st of 6), and waiting
    /// the shift time plus 1 s between shifts.
    pub fn unhurried(max_rpm: f64, forward_gears: i32, shift_time: f64) -> ShiftSchedule {
        ShiftSchedule {
            up_rpm: 0.75 * max_rpm,
            down_rpm: 0.45 * max_rpm,
            start_gear: (forward_gears / 4).max(1),
            hold: shift_time + 1.0,
        }
    }

    /// The lever position after this step, from the lever (`lever`, the selected gear), the
    /// gear engaged (`engaged`, 0 while shifting), the engine speed (`rpm`), the time since
    /// the lever last moved (`since_shift`, s), the length of the caller's step (`dt`, s) and
    /// the highest forward gear (`top`). Only forward gears shift; pulling away from neutral
    /// is the caller's choice. The hold ends at the step nearest to it ([`wait_over`]), so a
    /// driver shifts at the same time at every step rate.
    pub fn next_gear(
        &self,
        lever: i32,
        engaged: i32,
        rpm: f64,
        since_shift: f64,
        dt: f64,
        top: i32,
    ) -> i32 {
        let settled = engaged == lever && wait_over(self.hold - since_shift, dt);
        if settled && lever >= 1 && lever < top && rpm > self.up_rpm {
            lever + 1
        } else if settled && lever > 1 && rpm < self.down_rpm {
            lever - 1
        } else {
            lever
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEDULE: ShiftSchedule = ShiftSchedule {
        up_rpm: 1500.0,
        down_rpm: 1000.0,
        start_gear: 3,
        hold: 1.0,
    };
    const DT: f64 = 1.0 / 60.0;

    #[test]
    fn shift_points_stay_below_the_rev_limit() {
        // A petrol engine's limit lies above the points: they stand.
        let petrol = ShiftSchedule::below_limit(5800.0, 1800.0, 6500.0, 1.0);
        assert_eq!((petrol.up_rpm, petrol.down_rpm), (5800.0, 1800.0));
        // A diesel's lies below: 92 % and 45 % of it.
        let diesel = ShiftSchedule::below_limit(5800.0, 1800.0, 3800.0, 1.0);
        assert_eq!(
            (diesel.up_rpm, diesel.down_rpm),
            (0.92 * 3800.0, 0.45 * 3800.0)
        );
        assert_eq!((diesel.start_gear, diesel.hold), (1, 1.0));
    }

    #[test]
    fn shifts_by_engine_speed_once_settled() {
        // Up above the up point, down below the down point, else stay.
        assert_eq!(SCHEDULE.next_gear(4, 4, 1600.0, 2.0, DT, 12), 5);
        assert_eq!(SCHEDULE.next_gear(4, 4, 900.0, 2.0, DT, 12), 3);
        assert_eq!(SCHEDULE.next_gear(4, 4, 1200.0, 2.0, DT, 12), 4);
        // Not before the hold time, nor while the last shift is still engaging.
        assert_eq!(SCHEDULE.next_gear(4, 4, 1600.0, 0.5, DT, 12), 4);
        assert_eq!(SCHEDULE.next_gear(5, 0, 1600.0, 2.0, DT, 12), 5);
        // Not past the top gear, not below first, not out of neutral or reverse.
        assert_eq!(SCHEDULE.next_gear(12, 12, 2000.0, 2.0, DT, 12), 12);
        assert_eq!(SCHEDULE.next_gear(1, 1, 500.0, 2.0, DT, 12), 1);
        assert_eq!(SCHEDULE.next_gear(0, 0, 2000.0, 2.0, DT, 12), 0);
        assert_eq!(SCHEDULE.next_gear(-1, -1, 2000.0, 2.0, DT, 12), -1);
    }

    #[test]
    fn holds_for_the_same_time_at_every_step_rate() {
        // Bevy keeps the fixed step in whole nanoseconds (16 666 667 ns at 60 Hz): thirty
        // steps at 30 Hz add up to a hair under 1 s, sixty at 60 Hz to a hair over. Either way
        // the hold of 1 s is over after exactly 1 s, not one step later at one rate than at
        // another.
        for hz in [30u32, 60, 120] {
            let dt = (1e9 / f64::from(hz)).round() * 1e-9;
            let mut since_shift = 0.0;
            let mut steps = 0;
            while SCHEDULE.next_gear(4, 4, 1600.0, since_shift, dt, 12) == 4 {
                since_shift += dt;
                steps += 1;
            }
            assert_eq!(steps, hz, "{hz} Hz: shifted after {steps} steps");
        }
    }

    #[test]
    fn eases_the_throttle_while_a_tire_slips() {
        let easing = ThrottleEasing::above_slip(0.2);
        let dt = 1.0 / 60.0;
        let lag = 1.0 - (-dt / 0.1f64).exp();
        // Half-way into the band the target is half-way to the floor (0.55), and the foot
        // moves the lag's share of the way there per step: the same per second at 120 Hz.
        let once = easing.next(1.0, 1.0, 0.25, dt);
        assert!((once - (1.0 - 0.45 * lag)).abs() < 1e-12, "{once}");
        let twice = easing.next(1.0, easing.next(1.0, 1.0, 0.25, dt / 2.0), 0.25, dt / 2.0);
        assert!((twice - once).abs() < 1e-12, "{twice} vs {once}");
        // Held long past the band, it settles at the floor, never below; nor above what the
        // driver wants.
        let mut throttle = 1.0;
        for _ in 0..120 {
            throttle = easing.next(1.0, throttle, 0.5, dt);
        }
        assert!((throttle - 0.1).abs() < 1e-6, "{throttle}");
        assert_eq!(easing.next(1.0, 0.1, 0.5, dt), 0.1);
        assert_eq!(easing.next(0.05, 0.05, 0.5, dt), 0.05);
        // Below the slip it goes back to the wanted throttle with the same lag.
        let back = easing.next(1.0, 0.1, 0.19, dt);
        assert!((back - (0.1 + 0.9 * lag)).abs() < 1e-12, "{back}");
        // Whatever is not a number, the result is a throttle.
        let odd = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 2.0, 0.5];
        for wanted in odd {
            for current in odd {
                for slip in odd {
                    for dt in odd {
                        let t = easing.next(wanted, current, slip, dt);
                        assert!(
                            (0.0..=1.0).contains(&t),
                            "{wanted} {current} {slip} {dt}: {t}"
                        );
                    }
                }
            }
        }
        let broken = ThrottleEasing {
            slip: f64::NAN,
            band: f64::NAN,
            floor: f64::NAN,
            time_constant: f64::NAN,
        };
        for slip in odd {
            let t = broken.next(1.0, 1.0, slip, dt);
            assert!((0.0..=1.0).contains(&t), "{slip}: {t}");
        }
    }
}
