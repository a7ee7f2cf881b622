//! A driver model: [`PathFollower`] steers a vehicle along a route of points (pure pursuit),
//! holds each point's speed with throttle and brake, and shifts a manual gearbox by engine
//! speed. For tests, benchmarks, AI traffic and towing tours.

use bevy::prelude::*;
use bevy_vehicle_drivetrain::prelude::*;

use crate::components::{Steering, VehicleTelemetry, WheelMount};
use crate::vehicle::Vehicle;

/// One point of a route: where to pass and how fast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoutePoint {
    /// Position in the world (m). Only X and Z are used: the route is followed in plan view.
    pub position: Vec3,
    /// Speed to hold from this point on (m/s, ≥ 0), reached by braking before the point when
    /// it is slower than the current one.
    pub speed: f32,
}

impl RoutePoint {
    /// The point at `(x, z)` (m, world) with the speed `speed` (m/s).
    pub fn new(x: f32, z: f32, speed: f32) -> RoutePoint {
        RoutePoint {
            position: Vec3::new(x, 0.0, z),
            speed,
        }
    }
}

/// On a [`Vehicle`]: drives it along `route` by writing its [`VehicleControls`] every fixed
/// step (before [`VehicleSystems::Controls`](crate::VehicleSystems::Controls)).
///
/// * **Steering**, pure pursuit: from the middle of the unsteered axles, aim at the point of
///   the route `lookahead` (m) ahead, and steer the bicycle-model angle
///   `δ = atan(2·L·sin α / d)` (wheelbase `L`, bearing `α` of the aim point, distance `d`),
///   as a fraction of the [`Steering::max_angle`]. A vehicle without steered wheels steers
///   by its drives (a tracked vehicle's skid steer), which answer that angle less the wider
///   the turn: toward an aim point more than 0.5 rad off its heading it turns hard (full
///   steering, throttle at most 0.8), and otherwise its throttle stays at most
///   `1 − |steering|`, so that neither drive's lever saturates.
/// * **Speed**: the route's speed, lowered ahead of slower points so that the vehicle can brake
///   to them at `deceleration` (m/s²); a proportional-integral controller on the forward speed
///   works the throttle and the brake pedal.
/// * **Gears**: drive (gear 1) when the lever is in neutral or reverse; with a [`ShiftSchedule`],
///   up and down shifts of a manual gearbox by engine speed, off the throttle while it shifts.
///
/// At the end of an open route the vehicle stops on its last point and holds the brake:
/// [`PathFollower::finished`] turns true. Settings that fail [`PathFollower::validate`] are
/// logged once and brake the vehicle to a stop. With `looped`, the route closes from its last point
/// to its first and is followed for ever. The follower joins the route at its segment closest
/// to the vehicle, so it can take over anywhere along it. Forward driving only.
#[derive(Component, Clone, Debug)]
#[require(VehicleControls)]
pub struct PathFollower {
    /// The route (at least two points).
    pub route: Vec<RoutePoint>,
    /// Whether the route closes on itself.
    pub looped: bool,
    /// Shortest look-ahead distance (m, > 0).
    pub lookahead: f32,
    /// Look-ahead time (s, ≥ 0): the look-ahead grows by this time × speed.
    pub lookahead_time: f32,
    /// Braking used to slow down for slower points (m/s², > 0).
    pub deceleration: f32,
    /// Pedal per m/s of speed error (s/m, > 0): throttle when too slow, brake when too fast.
    pub speed_gain: f64,
    /// Pedal per m of accumulated speed error (1/m, ≥ 0): holds speed on grades.
    pub speed_integral_gain: f64,
    /// Shifting of a manual gearbox (through [`VehicleControls::gear`]), or `None` for
    /// automatics and single-speed drives.
    pub shift: Option<ShiftSchedule>,
    state: FollowerState,
}

/// Bearing of the aim point (rad) beyond which a vehicle that steers by its drives turns hard
/// toward it (see [`PathFollower`]).
const PIVOT_BEARING: f32 = 0.5;

/// The most throttle a vehicle that steers by its drives keeps while it turns hard toward an
/// aim point beyond [`PIVOT_BEARING`] (0..1): its inner track then runs backward at
/// `1 − PIVOT_THROTTLE` of its lever.
const PIVOT_THROTTLE: f64 = 0.8;

/// What the follower keeps between steps.
#[derive(Clone, Copy, Debug, Default)]
struct FollowerState {
    /// Index of the route segment (from point `segment` to the next) the vehicle is on.
    segment: usize,
    /// Signed distance from the route, positive to its right (m).
    cross_track: f32,
    /// Distance travelled along the route (m).
    travelled: f32,
    /// Integral of the speed error (m).
    integral: f64,
    /// Time since the last shift (s).
    since_shift: f64,
    finished: bool,
    /// Whether the refusal of bad settings was logged.
    warned: bool,
    /// Whether the follower has placed the vehicle on the route yet.
    started: bool,
}

impl PathFollower {
    /// A follower for `route` with settings for road vehicles: 6 m minimum look-ahead plus
    /// 0.6 s of travel, 2.5 m/s² of braking, 0.4 pedal per m/s and 0.08 per m of integral.
    pub fn new(route: Vec<RoutePoint>) -> PathFollower {
        PathFollower {
            route,
            looped: false,
            lookahead: 6.0,
            lookahead_time: 0.6,
            deceleration: 2.5,
            speed_gain: 0.4,
            speed_integral_gain: 0.08,
            shift: None,
            state: FollowerState::default(),
        }
    }

    /// With this shift schedule for a manual gearbox.
    pub fn with_shift(mut self, shift: ShiftSchedule) -> PathFollower {
        self.shift = Some(shift);
        self
    }

    /// Index of the route segment the vehicle is on (from that point to the next).
    pub fn segment(&self) -> usize {
        self.state.segment
    }

    /// Distance from the route (m, positive when the vehicle's reference point, the middle of
    /// its unsteered axles, is right of it), as of the last step.
    pub fn cross_track_error(&self) -> f32 {
        self.state.cross_track
    }

    /// Distance along the route up to the vehicle's reference point (m), as of the last step.
    pub fn travelled(&self) -> f32 {
        self.state.travelled
    }

    /// Whether the vehicle has stopped at the end of an open route.
    pub fn finished(&self) -> bool {
        self.state.finished
    }

    /// Checks the settings: at least two points, finite positions, speeds ≥ 0, a positive
    /// look-ahead, deceleration and speed gain, a look-ahead time and integral gain ≥ 0, and a
    /// shift schedule with finite points and a start gear ≥ 1. Says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.route.len() < 2 {
            return Err(format!(
                "route: needs at least 2 points, has {}",
                self.route.len()
            ));
        }
        for (i, p) in self.route.iter().enumerate() {
            if !p.position.is_finite() {
                return Err(format!(
                    "route[{i}].position: must be finite (m), got {}",
                    p.position
                ));
            }
            if !(p.speed >= 0.0 && p.speed.is_finite()) {
                return Err(format!(
                    "route[{i}].speed: must be finite and ≥ 0 (m/s), got {}",
                    p.speed
                ));
            }
        }
        let positive = [
            ("lookahead", f64::from(self.lookahead)),
            ("deceleration", f64::from(self.deceleration)),
            ("speed_gain", self.speed_gain),
        ];
        for (field, v) in positive {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("{field}: must be finite and > 0, got {v}"));
            }
        }
        let non_negative = [
            ("lookahead_time", f64::from(self.lookahead_time)),
            ("speed_integral_gain", self.speed_integral_gain),
        ];
        for (field, v) in non_negative {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("{field}: must be finite and ≥ 0, got {v}"));
            }
        }
        if let Some(shift) = &self.shift {
            let finite = [shift.up_rpm, shift.down_rpm, shift.hold];
            if !finite.iter().all(|v| v.is_finite()) || shift.start_gear < 1 {
                return Err(format!(
                    "shift: needs finite engine speeds and hold time and a start gear ≥ 1, got {shift:?}"
                ));
            }
        }
        Ok(())
    }

    /// Number of segments: one fewer than points, or as many when looped.
    fn segments(&self) -> usize {
        if self.looped {
            self.route.len()
        } else {
            self.route.len().saturating_sub(1)
        }
    }

    /// Ends of segment `i` in plan (X, Z) (m).
    fn ends(&self, i: usize) -> (Vec2, Vec2) {
        let n = self.route.len();
        let plan = |p: &RoutePoint| Vec2::new(p.position.x, p.position.z);
        (plan(&self.route[i % n]), plan(&self.route[(i + 1) % n]))
    }

    /// The closest point of segment `i` to `p`: (fraction along it, distance).
    fn project(&self, i: usize, p: Vec2) -> (f32, f32) {
        let (a, b) = self.ends(i);
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.length_squared().max(1e-9)).clamp(0.0, 1.0);
        (t, (a + ab * t - p).length())
    }
}

/// Pure pursuit, speed control and shifting for every vehicle with a [`PathFollower`].
pub(crate) fn follow_paths(
    time: Res<Time>,
    mut vehicles: Query<
        (
            &mut PathFollower,
            &Transform,
            &VehicleTelemetry,
            &Steering,
            &Blocks,
            &mut VehicleControls,
        ),
        With<Vehicle>,
    >,
    mounts: Query<&WheelMount>,
    gearboxes: Query<&Gearbox>,
) {
    let dt = f64::from(time.delta_secs());
    for (mut follower, transform, telemetry, steering, blocks, mut controls) in &mut vehicles {
        if dt <= 0.0 {
            continue;
        }
        // Bad settings stop the vehicle instead of steering it with NaN.
        if let Err(why) = follower.validate() {
            if !follower.state.warned {
                warn!("PathFollower refused: {why}; the vehicle brakes to a stop");
                follower.state.warned = true;
            }
            controls.throttle = 0.0;
            controls.brake = 1.0;
            continue;
        }
        let segments = follower.segments();
        // Reference point and wheelbase from the mounts: the middle of the unsteered axles,
        // and its distance to the steered axle.
        let (mut steered, mut fixed) = ((0.0f32, 0u32), (0.0f32, 0u32));
        for mount in blocks.iter().filter_map(|b| mounts.get(b).ok()) {
            let sum = if mount.steered {
                &mut steered
            } else {
                &mut fixed
            };
            sum.0 += mount.position.z;
            sum.1 += 1;
        }
        let reference_z = if fixed.1 > 0 {
            fixed.0 / fixed.1 as f32
        } else {
            0.0
        };
        let wheelbase = if steered.1 > 0 {
            (steered.0 / steered.1 as f32 - reference_z).abs().max(0.5)
        } else {
            1.0
        };
        let world = transform.transform_point(Vec3::new(0.0, 0.0, reference_z));
        let p = Vec2::new(world.x, world.z);
        let speed = telemetry.forward_speed;

        // Advance along the route: the closest of the next few segments, never backwards. The
        // first step starts from the closest segment of all, wherever the vehicle is.
        let mut state = follower.state;
        if !state.started {
            state.segment = (0..segments)
                .min_by(|&a, &b| {
                    follower
                        .project(a, p)
                        .1
                        .total_cmp(&follower.project(b, p).1)
                })
                .unwrap_or(0);
        }
        let mut segment = state.segment;
        let (mut t, mut distance) = follower.project(segment, p);
        let last = if follower.looped {
            usize::MAX
        } else {
            segments - 1
        };
        for k in 1..=4 {
            let i = state.segment + k;
            if i > last {
                break;
            }
            let (ti, di) = follower.project(i % segments, p);
            if di < distance {
                (segment, t, distance) = (i, ti, di);
            }
        }
        let segment = segment % segments;
        let (a, b) = follower.ends(segment);
        let along = b - a;
        let side = along.perp_dot(p - a).signum();
        // In plan coordinates (X, Z), `perp_dot` > 0 puts the point right of the direction
        // of travel.
        let cross_track = side * distance;
        let travelled = (0..segment)
            .map(|i| {
                let (a, b) = follower.ends(i);
                (b - a).length()
            })
            .sum::<f32>()
            + along.length() * t;

        // The aim point, `lookahead` ahead along the route.
        let lookahead = follower.lookahead + follower.lookahead_time * speed.max(0.0) as f32;
        let mut aim = a + along * t;
        let mut left = lookahead;
        let mut i = segment;
        loop {
            let (_, end) = follower.ends(i);
            let to_end = (end - aim).length();
            if to_end >= left {
                aim += (end - aim) / to_end.max(1e-9) * left;
                break;
            }
            left -= to_end;
            aim = end;
            i += 1;
            if i >= segments && !follower.looped {
                // Past the end: straight on along the last segment.
                let (s, e) = follower.ends(segments - 1);
                aim += (e - s).normalize_or_zero() * left;
                break;
            }
            i %= segments;
        }
        let local = transform.rotation.inverse() * (Vec3::new(aim.x, world.y, aim.y) - world);
        let (forward, leftward) = (-local.z, -local.x);
        let alpha = leftward.atan2(forward);
        let d = (forward * forward + leftward * leftward).sqrt().max(1e-3);
        let delta = (2.0 * wheelbase * alpha.sin() / d).atan();
        controls.steering = (-f64::from(delta) / steering.max_angle).clamp(-1.0, 1.0);

        // Target speed: this segment's, lowered for slower points within braking distance.
        let n = follower.route.len();
        let mut target = f64::from(follower.route[segment % n].speed);
        let mut ahead = along.length() * (1.0 - t);
        let decel = f64::from(follower.deceleration);
        for k in 1..=segments {
            // Point `j` ends segment `j − 1`; an open route's last point is a stop.
            let j = segment + k;
            let stop_here = !follower.looped && j == n - 1;
            let v = if stop_here {
                0.0
            } else {
                f64::from(follower.route[j % n].speed)
            };
            target = target.min((v * v + 2.0 * decel * f64::from(ahead)).sqrt());
            if stop_here || f64::from(ahead) > 0.5 * target * target / decel + 50.0 {
                break;
            }
            let (s, e) = follower.ends(j % segments);
            ahead += (e - s).length();
        }
        let at_end = !follower.looped && segment == segments - 1 && t >= 0.999;
        let finished = state.finished || (at_end && speed.abs() < 0.2);

        // Pedals: proportional-integral on the speed error; the integral only while the
        // output is not saturated.
        let error = target - speed;
        let mut integral = state.integral;
        let u = follower.speed_gain * error + follower.speed_integral_gain * integral;
        if u.abs() < 1.0 {
            integral += error * dt;
        }
        if finished || at_end {
            controls.throttle = 0.0;
            controls.brake = 1.0;
            integral = 0.0;
        } else {
            // Off the throttle while the managed gearbox shifts, as a driver would.
            let shifting = follower.shift.is_some() && telemetry.gear == 0 && controls.gear != 0;
            controls.throttle = if shifting { 0.0 } else { u.clamp(0.0, 1.0) };
            controls.brake = (-u).clamp(0.0, 1.0);
            // A vehicle without steered wheels steers by its drives (skid steer: a tracked
            // vehicle's drives run at `throttle ± steering`) and turns less than the
            // bicycle-model angle asks, the less the wider the turn, so that it would circle
            // an aim point far to its side. Toward an aim point more than `PIVOT_BEARING` off
            // its heading it turns hard (full steering, the throttle at most `PIVOT_THROTTLE`,
            // which also sets the engine's speed); otherwise the throttle leaves the steering
            // room (with the throttle down, the outer drive's lever saturates and takes half
            // the turn away).
            if steered.1 == 0 && controls.brake == 0.0 {
                if alpha.abs() > PIVOT_BEARING {
                    controls.throttle = controls.throttle.min(PIVOT_THROTTLE);
                    controls.steering = -f64::from(alpha.signum());
                } else {
                    controls.throttle = controls.throttle.min(1.0 - controls.steering.abs());
                }
            }
        }

        // Gears.
        let mut since_shift = state.since_shift + dt;
        if controls.gear <= 0 {
            controls.gear = follower.shift.map_or(1, |s| s.start_gear.max(1));
            since_shift = 0.0;
        } else if let Some(shift) = follower.shift {
            let top = blocks
                .iter()
                .find_map(|b| gearboxes.get(b).ok())
                .map_or(1, |g| g.forward_ratios.len() as i32);
            let lever = controls.gear;
            let next = shift.next_gear(
                lever,
                telemetry.gear,
                telemetry.engine_rpm,
                since_shift,
                dt,
                top,
            );
            if next != lever {
                controls.gear = next;
                since_shift = 0.0;
            }
        }

        follower.state = FollowerState {
            segment,
            cross_track,
            travelled,
            integral,
            since_shift,
            finished,
            warned: false,
            started: true,
        };
    }
}
