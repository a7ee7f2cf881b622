//! The suspension's force held over the coming fixed step: solved together with the travel's
//! acceleration it makes, over the road's shape met within the step (an edge, a step down or
//! up), with the lead by which its spring matches how Rapier moves the body over the step.
//! [`probe_ground`](super::probe_ground) calls it for each grounded wheel.

use super::MAX_CONTACT_ACCELERATION;
use super::ROAD_SAMPLES;
use crate::components::WheelState;

/// How far ahead (s) of the step's start the suspension springs are evaluated, so that a
/// spring force held over one fixed step of `dt` (s) is integrated like symplectic Euler.
///
/// Rapier holds an external force constant over its `substeps` (`bevy_rapier`'s substeps times the
/// solver's iterations, each of which moves the body), so over one fixed step the body moves by
/// `v·dt + β·a·dt²` with `β = (n+1)/(2n)`. Symplectic Euler has `β = 1`; a smaller β lets a
/// spring gain energy, `ω²dt²(1−β)` per step, which shows as lost damping proportional to `dt`
/// (15 % of a car's heave damping at 60 Hz with Rapier's default 4 iterations). Evaluating the
/// spring at the travel predicted `(1−β)·dt` ahead adds exactly the missing damping.
pub fn spring_lead(dt: f64, substeps: usize) -> f64 {
    let n = substeps.max(1) as f64;
    dt * (n - 1.0) / (2.0 * n)
}

/// The weight of the travel's acceleration in the deflection a suspension's spring is taken
/// at, in steps squared: the spring acts at the travel `dt²/12·a` ahead of the step's start
/// (`a` the travel's acceleration over the step), as in Numerov's method.
///
/// Rapier holds the suspension's force over the step and moves the body as symplectic Euler
/// does (see [`spring_lead`]), which rings a spring fast by `(ω·dt)²/24` and throws the body
/// past `ω·dt = 2`. Solved with the acceleration its own force makes, a spring taken this
/// far ahead rings true to fourth order in `ω·dt` (1.1 % fast at `ω·dt = 1.46`, where
/// symplectic Euler runs 12 % fast) and stays stable to `ω·dt = √6`.
pub const SPRING_STEP_WEIGHT: f64 = 1.0 / 12.0;

/// The suspension's force held over the coming fixed step of `dt` (s), solved together with
/// the travel's acceleration it makes over the step (since 2026-12-03); `force(deflection,
/// rate)` is the suspension module's force (N) at a deflection (m) and travel rate (m/s,
/// both compression positive), `travel` and `rate` the wheel's now, `lead` the
/// [`spring_lead`] (s), `mass` the wheel's share of the body's mass (kg), `last` the wheel's
/// state after the last step.
///
/// Rapier holds the force over the step and moves the body as symplectic Euler does (see
/// [`spring_lead`]): a spring acting on the step's start rings the body fast by
/// `(ω·dt)²/24` and throws it past `ω·dt = 2`, and a damper acting on it must be held down
/// to what the spring leaves of that budget. Here the force `F` is the module's at the
/// deflection `travel + lead·rate + dt²/12·a` (see [`SPRING_STEP_WEIGHT`]) and the rate
/// `rate + dt/2·a` (the step's middle), with `a = a₀ − F/m` the travel's acceleration over
/// the step: `a₀` what the rest of the vehicle's loads give it (its weight, the other
/// wheels, the tires, load transfer), the last step's measured acceleration with this
/// suspension's force of that step taken back out. So the spring rings true to fourth order
/// in `ω·dt` (1.1 % fast at `ω·dt = 1.46`, where symplectic Euler runs 12 % fast) and a
/// damper of any strength is stable on the mass (the tires' loads hold it to
/// [`MAX_DAMPING_PER_STEP`](crate::MAX_DAMPING_PER_STEP)); the spring's lead takes about
/// `(ω·dt)²/12` of the damping ratio away (8 % at `ω·dt = 1`). Until then the damper took the
/// step's middle rate predicted from the force at the step's start, and was held down to
/// what the spring left (see [`Suspension::force_at_step`](crate::components::Suspension::force_at_step)).
///
/// Two calls to `force` solve it: at the last step's force, then at the force that gave, and
/// the secant through the two (exact for a module linear in deflection and rate). A module
/// whose force does not grow with them (a slope of the wrong sign) takes the second call's
/// force. On the step a wheel touches down (no last step's rate) it is one call at the
/// step's start. A jolt (a landing, a kerb) is not a trend: the acceleration is taken at
/// most [`MAX_CONTACT_ACCELERATION`], and `jump` (m/s), the part of the rate's change since
/// the last step that an edge's turn of the ground's normal made (see [`EDGE_TURN_COSINE`](super::EDGE_TURN_COSINE))
/// or a kinematic ground's change of velocity between steps, is left out of it. Carried on,
/// the jump of the rate where a tire met a 10 cm kerb at 5 m/s threw the body up at 1.13 /
/// 0.47 m/s at 15 / 30 Hz against 0.38 at 240 Hz (0.76 / 0.40 with the edge's jump left out).
///
/// `road` is what the road's shape adds to the travel over the coming step, from a probe
/// where the wheel's slide over the ground takes it by the step's end: an acceleration (m/s²),
/// twice how far the road there lies above the plane under the wheel now over `dt²`, so
/// that the damper takes the road's mean rate over the step; and, where the two planes meet
/// at an edge within the step or lie apart without meeting within it (a step down or up),
/// the road's profile over the step in straight parts ([`RoadProfile`]): the force is then
/// the mean of the module's over the parts. Where it is known, `jump` holds
/// the whole part of the rate's change that the ground's normal turning under the wheel
/// made (the road's shape met over the last step), not only an edge's. Taken from the last
/// two steps instead, the road's rate ran ahead of its mean over the step as the road turned
/// faster: a 10 cm bump 0.6 m long at 15 m/s threw the body up at 3.5 times 240 Hz's rate at
/// 30 Hz (0.81 times with the probe ahead), a sinusoidal road met at 8 Hz moved it 43 % more
/// at 30 Hz and 15 % more at 60 Hz (21 % and 6 % less with it), and the kerb above at 15 Hz
/// 0.36 m/s with it.
///
/// `ground_rate` (m/s) is a kinematic ground's part of the rate: Rapier moves that ground at
/// one velocity over the whole step, so its travel is taken at the step's middle, where the
/// body's own is taken at `lead`.
///
/// The mass is the wheel's share of the body's in proportion to its load, which is exact for
/// the body's heave. Solving all the corners together through the body's mobility (heave,
/// pitch and roll at once) was tried the same day and dropped: the tires take their loads as
/// given over the step, and the default car dropped from 5 m then kept swaying and rolling
/// on its held tires at 2 Hz (0.13 rad/s, 0.08 m/s) 5 s after landing at 60 Hz.
pub(super) fn force_over_step(
    last: &WheelState,
    [travel, rate]: [f64; 2],
    jump: f64,
    ground_rate: f64,
    road: RoadAhead,
    lead: f64,
    dt: f64,
    mass: f64,
    mut force: impl FnMut(f64, f64) -> f64,
) -> f64 {
    let deflection = travel + lead * (rate - ground_rate) + 0.5 * dt * ground_rate;
    if !last.grounded || dt <= 0.0 || mass.is_nan() || mass <= 0.0 {
        return force(deflection, rate);
    }
    let limit = f64::from(MAX_CONTACT_ACCELERATION);
    let last_force = last.suspension_force - last.anti_roll_force;
    let others = (rate - last.travel_rate - jump) / dt + last_force / mass;
    if !others.is_finite() {
        return force(deflection, rate);
    }
    // The module's force over the step with the force `f` held: at the step's deflection and
    // mean rate, or, where the road's profile over the step is known in parts (an edge, a
    // step down or up), the mean of its force over the parts, each at the road's rate and
    // its offset from the step's mean over that part. A module whose force is not linear in
    // the rate (one that cannot pull, a bump stop) gives over the parts what it would not at
    // their mean: a car leaving a 10° ramp's top 0.9 into a 15 Hz step (the front wheels
    // rolling over the edge at 15 m/s) took its push up the ramp at the mean of that push
    // and the rebound past the edge, where the damper cannot pull, and left 16 % slower than
    // at 240 Hz.
    let mut at = |f: f64| {
        let a = (others - f / mass).clamp(-limit, limit) + road.acceleration;
        let d = deflection + SPRING_STEP_WEIGHT * dt * dt * a;
        let r = rate + 0.5 * dt * a;
        match &road.profile {
            None => force(d, r),
            Some(profile) => {
                let (mean, mean_rate) = (profile.mean_offset(), profile.end() / dt);
                profile
                    .parts()
                    .map(|(weight, offset, rise)| {
                        weight * force(d + offset - mean, r + rise / (weight * dt) - mean_rate)
                    })
                    .sum()
            }
        }
    };
    let first = at(last_force);
    let second = at(first);
    // The module's force falls by `s` for each newton asked of it (its stiffness and damping
    // over the mass); the force that gives itself back lies between the first guess and the
    // last step's force.
    let s = (first - second) / (first - last_force);
    if s >= 0.0 && s.is_finite() {
        (first + s * last_force) / (1.0 + s)
    } else {
        second
    }
}

/// What the road ahead adds to a wheel's travel over the coming step (see
/// [`force_over_step`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RoadAhead {
    /// The travel's acceleration the road's shape adds over the step (m/s²): twice the
    /// road's offset at the step's end over `dt²`.
    pub(super) acceleration: f64,
    /// The road's offset at points within the step, where it turns at an edge or steps
    /// within it.
    pub(super) profile: Option<RoadProfile>,
}

/// The road under a wheel over a step, as straight pieces between points probed within it:
/// each point how far into the step the wheel reaches it (0..1) and the road's offset there
/// from the plane under the wheel now, along the suspension's travel (m, compression
/// positive). It starts at (0, 0) and ends at (1, the offset at the step's end).
///
/// An edge within the step is one point, where the two planes meet. Where the planes do not
/// meet within the step but lie apart (a step down or up: a deck's end, a kerb, the corner a
/// tire is rounding) the road is probed at [`ROAD_SAMPLES`]: rolling off a 5 cm deck at 10
/// m/s a tire rounds its corner over half of a 30 Hz step and lands on the road below for
/// the rest. Taken at the step's mean rate, a rear wheel starting the step on the corner
/// went without load all step (its damper would have pulled), and a front wheel starting it
/// on the deck, whose plane is parallel to the road below, kept its full load all step.
#[derive(Clone, Copy, Debug)]
pub(super) struct RoadProfile {
    /// The points, `len` of them, from (0, 0) to (1, end).
    points: [(f64, f64); ROAD_SAMPLES.len() + 2],
    /// How many of `points` are used.
    len: usize,
}

impl RoadProfile {
    /// The profile through `within` (points inside the step, rising in fraction) to `end`,
    /// the offset at the step's end (m).
    pub(super) fn new(within: &[(f64, f64)], end: f64) -> Self {
        let mut points = [(0.0, 0.0); ROAD_SAMPLES.len() + 2];
        let within = &within[..within.len().min(ROAD_SAMPLES.len())];
        points[1..=within.len()].copy_from_slice(within);
        points[within.len() + 1] = (1.0, end);
        Self {
            points,
            len: within.len() + 2,
        }
    }

    /// The offset at the step's end (m).
    fn end(&self) -> f64 {
        self.points[self.len - 1].1
    }

    /// Each straight piece: its share of the step, its mean offset (m) and how far the road
    /// rises over it (m).
    fn parts(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        self.points[..self.len]
            .windows(2)
            .map(|w| (w[1].0 - w[0].0, 0.5 * (w[0].1 + w[1].1), w[1].1 - w[0].1))
            .filter(|(weight, _, _)| *weight > 0.0)
    }

    /// The road's mean offset over the step (m).
    fn mean_offset(&self) -> f64 {
        self.parts()
            .map(|(weight, offset, _)| weight * offset)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::prelude::default;

    /// The force over a step of a damper of `c` (N·s/m) that cannot pull, on a body too heavy
    /// to answer, settling at `rate` (m/s) over a step of `dt` (s) onto a road whose offset at
    /// the step's end is `end` (m), with the road's `profile` over the step if given.
    fn pushing_damper_over_step(
        c: f64,
        rate: f64,
        dt: f64,
        end: f64,
        profile: Option<RoadProfile>,
    ) -> f64 {
        let last = WheelState {
            grounded: true,
            travel_rate: rate,
            suspension_force: c * rate,
            ..default()
        };
        force_over_step(
            &last,
            [0.0, rate],
            0.0,
            0.0,
            RoadAhead {
                acceleration: 2.0 * end / (dt * dt),
                profile,
            },
            0.0,
            dt,
            1e15,
            |_, r| (c * r).max(0.0),
        )
    }

    /// Across an edge met within the step, a damper that cannot pull gives the mean of its
    /// force over the step's two parts, each at that part's rate: a ramp rising at 2.6 m/s
    /// under a body rising at 1.6 m/s compresses it at 1 m/s until its top, met 0.75 into
    /// the step, and past it the rebound would ask for a pull: exactly `f·c·r₁` (to 1e-9) on
    /// a body too heavy to answer, where the step's mean rate would give less than half.
    #[test]
    fn an_edge_within_the_step_gives_each_part_its_own_force() {
        let (c, dt, rate, fraction) = (3000.0, 1.0 / 15.0, 1.0, 0.75);
        // Past the edge the road falls away: its offset at the step's end from the ramp's plane.
        let offset = -(1.0 - fraction) * dt * 2.6;
        let force = |profile| pushing_damper_over_step(c, rate, dt, offset, profile);
        let expected = fraction * c * rate;
        let got = force(Some(RoadProfile::new(&[(fraction, 0.0)], offset)));
        assert!(
            (got - expected).abs() < 1e-9 * expected,
            "{got} N against {expected}"
        );
        let mean = force(None);
        let at_mean = c * (rate + offset / dt);
        assert!(
            (mean - at_mean).abs() < 1e-6 * at_mean && mean < 0.5 * expected,
            "{mean} N at the mean rate"
        );
    }

    /// Over a step down within the step, a damper that cannot pull gives the mean of its
    /// force over the step's parts: a body settling at 1 m/s onto a road that drops 8 cm
    /// over the step's third quarter (at 4.8 m/s) pushes for the other three quarters and
    /// cannot pull over the drop: exactly `0.75·c·r` (to 1e-9) on a body too heavy to
    /// answer, where the step's mean rate (a pull) gives nothing.
    #[test]
    fn a_step_down_within_the_step_gives_each_part_its_own_force() {
        let (c, dt, rate, drop) = (3000.0, 1.0 / 15.0, 1.0, 0.08);
        let force = |profile| pushing_damper_over_step(c, rate, dt, -drop, profile);
        let profile = RoadProfile::new(&[(0.25, 0.0), (0.5, 0.0), (0.75, -drop)], -drop);
        let expected = 0.75 * c * rate;
        let got = force(Some(profile));
        assert!(
            (got - expected).abs() < 1e-9 * expected,
            "{got} N against {expected}"
        );
        assert!(
            force(None).abs() < 1e-9,
            "{} N at the mean rate",
            force(None)
        );
    }
}
