//! Prefetch hints: requests to bring memory into the processor's caches ahead of its use,
//! which change no value. Stepping thousands of vehicles, whose data no longer fits the
//! processor's caches, a system can ask for a vehicle's components two vehicles ahead and for
//! the memory they point to one vehicle ahead ([`pipelined`]). The chassis's systems do so;
//! the drivetrain's and the chassis's steps, which step vehicles four at a time where they
//! can, ask a few batches ahead ([`in_runs`]), for the boxed cells too
//! ([`Drivetrain::prefetch`](crate::Drivetrain::prefetch)), a vehicle at a time while a batch
//! computes ([`Ahead`]): a queue of a few hundred hints at once makes the step wait for them
//! much as it would for the data itself.
//!
//! The `unsafe` here is the SSE prefetch intrinsic's, which Rust marks `unsafe` (a prefetch
//! reads nothing and cannot fault). The crate's other `unsafe` code is
//! [`parallel::owned_block_mut`](crate::parallel::owned_block_mut) and the sensor writes that
//! go through it, and the call into the batched step compiled for AVX2 once the processor is
//! known to have it.
#![allow(unsafe_code)]

use core::cell::Cell;

use crate::StageWheels;

/// Asks the processor to load every cache line of `value` (a trait object's too).
#[inline(always)]
pub fn value<T: ?Sized>(value: &T) {
    lines(
        (value as *const T).cast::<i8>(),
        core::mem::size_of_val(value),
    );
}

/// Asks the processor to load the cache lines of the first `bytes` bytes of `value` (at most
/// all of it).
#[inline(always)]
pub fn head<T>(value: &T, bytes: usize) {
    lines(
        (value as *const T).cast::<i8>(),
        bytes.min(core::mem::size_of::<T>()),
    );
}

/// Asks the processor to load every cache line of `values`.
#[inline(always)]
pub fn slice<T>(values: &[T]) {
    lines(values.as_ptr().cast::<i8>(), core::mem::size_of_val(values));
}

/// Asks the processor to load the `bytes` bytes from `start`.
#[inline(always)]
fn lines(start: *const i8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // From the start of the line `start` lies in, so that the last line is asked for too
        // when `start` is not at a line's start.
        let mut offset = 0;
        let skew = start as usize % 64;
        let start = start.wrapping_sub(skew);
        let bytes = bytes + skew;
        while offset < bytes {
            // SAFETY: `_mm_prefetch` needs only SSE, which every x86-64 processor has and
            // every `x86_64` Rust target enables. A prefetch reads nothing into the
            // program and cannot fault, whatever the address; this one lies in a line the
            // caller's value covers.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}

/// How many items ahead of the next one to step [`in_runs`] asks for an item's own memory:
/// three batches of four.
const FAR_AHEAD: usize = 12;

/// How many items ahead of the next one to step [`in_runs`] asks for the memory an item
/// points to: two batches of four.
const NEAR_AHEAD: usize = 8;

/// The most items [`in_runs`] steps at once: a batch of four vehicles.
const BATCH: usize = 4;

/// Steps `items` in order, in runs of one to four: `step` is handed the next run (up to a
/// batch of four items) and the hints for the items after it ([`Ahead`]), steps as many of the
/// run as it can together (a batch of four, or one), and returns that count (taken as at
/// least one and at most the run). With thousands of items whose data is not in the cache,
/// each item's own memory starts loading (`far`) twelve items (three batches) before its
/// step, and the memory it points to (`near`, once its pointers have arrived) eight items
/// before. The drivetrain's step and the chassis's both walk their vehicles so.
///
/// A step that can should give out the next items' hints while it computes, with
/// [`Ahead::next`]: whatever it has not given out when it returns is asked for at once before
/// the next run. A batch's hints all at once (some 200 cache lines for four vehicles) fill
/// the processor's queue of outstanding misses, and the step then waits for them much as if
/// there had been no hints.
#[inline]
pub fn in_runs<T>(
    items: &mut [T],
    far: impl Fn(&T),
    near: impl Fn(&T),
    mut step: impl FnMut(&mut [T], &Ahead<'_, T>) -> usize,
) {
    let (mut i, mut far_to, mut near_to) = (0, 0, 0);
    while i < items.len() {
        while far_to < (i + FAR_AHEAD).min(items.len()) {
            far(&items[far_to]);
            far_to += 1;
        }
        while near_to < (i + NEAR_AHEAD).min(items.len()) {
            near(&items[near_to]);
            near_to += 1;
        }
        let len = items.len();
        let run_len = BATCH.min(len - i);
        let (run, later) = items[i..].split_at_mut(run_len);
        let next = i + run_len;
        let ahead = Ahead {
            later,
            first: next,
            far: &far,
            near: &near,
            far_to: Cell::new(far_to),
            near_to: Cell::new(near_to),
            far_limit: (next + FAR_AHEAD).min(len),
            near_limit: (next + NEAR_AHEAD).min(len),
        };
        // At least one, so that the walk ends; at most the run (the hints reach no further).
        let count = step(run, &ahead).clamp(1, run_len);
        (far_to, near_to) = (ahead.far_to.get(), ahead.near_to.get());
        i += count;
    }
}

/// The hints [`in_runs`] has yet to give for the items after the run being stepped, as far
/// as the next run will want them: [`Ahead::next`] gives one more item's.
pub struct Ahead<'a, T> {
    /// The items after the run.
    later: &'a [T],
    /// Index of `later[0]` among all the items.
    first: usize,
    far: &'a dyn Fn(&T),
    near: &'a dyn Fn(&T),
    /// The first item (index among all) whose `far` hint is still to give.
    far_to: Cell<usize>,
    /// The first item whose `near` hint is still to give.
    near_to: Cell<usize>,
    /// The first item whose `far` hint is not given during this run.
    far_limit: usize,
    /// The first item whose `near` hint is not given during this run.
    near_limit: usize,
}

impl<T> Ahead<'_, T> {
    /// Gives the next `far` hint and the next `near` hint (which trails the `far` hints by
    /// `FAR_AHEAD - NEAR_AHEAD` items), each unless given as far as the next run will want
    /// it.
    #[inline]
    pub fn next(&self) {
        let (far_to, near_to) = (self.far_to.get(), self.near_to.get());
        if far_to < self.far_limit {
            (self.far)(&self.later[far_to - self.first]);
            self.far_to.set(far_to + 1);
        }
        if near_to < self.near_limit {
            (self.near)(&self.later[near_to - self.first]);
            self.near_to.set(near_to + 1);
        }
    }

    /// The stage hook `hook` of a drivetrain's step (see
    /// [`Drivetrain::step_four_hooked_within`](crate::Drivetrain::step_four_hooked_within)),
    /// which with `ahead` also gives out the next item's hints ([`Ahead::next`]) at each
    /// substep's start: a batch of four vehicles, stepped in four substeps, so asks for one
    /// vehicle's memory per substep while it computes. Give `ahead` to one of the batch's
    /// hooks and `None` to the others.
    #[inline]
    pub fn pace<H: FnMut(&mut StageWheels)>(
        ahead: Option<&Self>,
        mut hook: H,
    ) -> impl FnMut(&mut StageWheels) {
        move |wheels| {
            if let Some(ahead) = ahead
                && wheels.starts_substep()
            {
                ahead.next();
            }
            hook(wheels);
        }
    }
}

/// Calls `each` on every item of `items`, in order, two items behind the iteration: `far` on
/// an item as soon as it is reached, `near` one item later, `each` one item after that. A loop
/// over many items whose data is not in the cache can so ask for an item's own memory two
/// iterations before using it (`far`), and for the memory it points to one iteration before
/// (`near`, when the pointers themselves have arrived). All three share `context`: the hints
/// read it (to look up the entities an item names, say), `each` may change it.
#[inline]
pub fn pipelined<T, C>(
    items: impl Iterator<Item = T>,
    context: &mut C,
    far: impl Fn(&C, &T),
    near: impl Fn(&C, &T),
    mut each: impl FnMut(&mut C, T),
) {
    let mut ahead: Option<T> = None;
    let mut ready: Option<T> = None;
    for item in items {
        far(context, &item);
        if let Some(next) = ahead.replace(item) {
            near(context, &next);
            if let Some(current) = ready.replace(next) {
                each(context, current);
            }
        }
    }
    if let Some(next) = ahead {
        near(context, &next);
        if let Some(current) = ready.replace(next) {
            each(context, current);
        }
    }
    if let Some(current) = ready {
        each(context, current);
    }
}

#[cfg(test)]
mod tests {
    use super::{BATCH, FAR_AHEAD, NEAR_AHEAD, in_runs, pipelined};

    #[test]
    fn pipelined_visits_every_item_once_in_order_after_its_hints() {
        for n in 0..6 {
            let log = core::cell::RefCell::new(Vec::new());
            let mut eaches = 0;
            pipelined(
                0..n,
                &mut eaches,
                |_, &i| log.borrow_mut().push(("far", i)),
                |_, &i| log.borrow_mut().push(("near", i)),
                |eaches, i| {
                    *eaches += 1;
                    log.borrow_mut().push(("each", i));
                },
            );
            assert_eq!(eaches, n);
            let log = log.into_inner();
            for i in 0..n {
                let at = |what| log.iter().position(|&e| e == (what, i)).unwrap();
                assert!(at("far") < at("near") && at("near") < at("each"), "{log:?}");
            }
            let each: Vec<_> = log.iter().filter(|e| e.0 == "each").map(|e| e.1).collect();
            assert_eq!(each, (0..n).collect::<Vec<_>>());
            assert_eq!(log.len(), 3 * n as usize);
        }
    }

    /// Every item is stepped once, in order, in the runs the step asks for (a step that
    /// claims none still moves on by one, one that claims too many stops at the end), each
    /// after both of its hints, and no item is hinted before it is within reach.
    #[test]
    fn runs_step_every_item_once_in_order_after_its_hints() {
        for n in 0..30usize {
            // Claims 4, 0 (taken as 1), 1 and 9 (taken as 4, or what is left) in turn, and
            // gives out 4, 0, 9 (more than there is) and 2 of the hints ahead while it steps.
            let claims = [4, 0, 1, 9];
            let gives = [4, 0, 9, 2];
            let mut items: Vec<usize> = (0..n).collect();
            let log = core::cell::RefCell::new(Vec::new());
            let mut turn = 0;
            in_runs(
                &mut items,
                |&i| log.borrow_mut().push(("far", i)),
                |&i| log.borrow_mut().push(("near", i)),
                |run, ahead| {
                    let claim = claims[turn % claims.len()];
                    for _ in 0..gives[turn % gives.len()] {
                        ahead.next();
                    }
                    turn += 1;
                    for &i in run.iter().take(claim.clamp(1, 4)) {
                        log.borrow_mut().push(("step", i));
                    }
                    claim
                },
            );
            let log = log.into_inner();
            let steps: Vec<_> = log.iter().filter(|e| e.0 == "step").map(|e| e.1).collect();
            assert_eq!(steps, (0..n).collect::<Vec<_>>(), "{log:?}");
            for i in 0..n {
                let at = |what| log.iter().position(|&e| e == (what, i)).unwrap();
                assert!(at("far") < at("near") && at("near") < at("step"), "{log:?}");
                // Hinted no earlier than FAR_AHEAD / NEAR_AHEAD items before its step, or a
                // batch more from within a step.
                let stepped_before = |at: usize| log[..at].iter().filter(|e| e.0 == "step").count();
                assert!(i - stepped_before(at("far")) < FAR_AHEAD + BATCH, "{log:?}");
                assert!(
                    i - stepped_before(at("near")) < NEAR_AHEAD + BATCH,
                    "{log:?}"
                );
            }
            assert_eq!(log.len(), 3 * n, "{log:?}");
        }
    }
}
