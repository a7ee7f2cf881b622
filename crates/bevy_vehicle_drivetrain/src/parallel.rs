//! Stepping many vehicles on every thread of Bevy's compute task pool.
//!
//! A vehicle's step reads and writes that vehicle's own data only, so vehicles can be stepped
//! in any order and on any thread with the same result, bit for bit. [`for_each`] splits a
//! system's vehicles into contiguous runs, one per task ([`ParallelStep`] says how many), and
//! steps each run in order with the prefetch pipeline of [`pipelined`]. With one compute
//! thread (Bevy without its `multi_threaded` feature, which its default features include) or
//! too few vehicles to be worth a task, a system steps them on its own thread. A task writes
//! the components of its vehicles' own blocks (their sensors, a wheel's state) through
//! [`owned_block_mut`], which lets each block be reached by one vehicle's step alone.

use crate::plugin::BlockSlot;
use crate::prefetch::pipelined;
use bevy::ecs::component::Mutable;
use bevy::prelude::{Component, Entity, Mut, Query, Resource};
use bevy::tasks::ComputeTaskPool;

/// How the vehicle systems split their vehicles into tasks on Bevy's compute task pool. The
/// split changes no result: each vehicle is stepped alike in any task.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParallelStep {
    /// How many tasks a system splits its vehicles into: `None` (the default) for one per
    /// compute thread, `Some(1)` to step them all on the system's own thread, `Some(n)` for
    /// `n` tasks on however many threads there are.
    pub tasks: Option<usize>,
    /// Fewest vehicles per task (default 16): a system with fewer vehicles than twice this
    /// steps them on its own thread, as starting a task would cost more than it saves.
    pub min_vehicles_per_task: usize,
}

impl Default for ParallelStep {
    fn default() -> Self {
        Self {
            tasks: None,
            min_vehicles_per_task: 16,
        }
    }
}

impl ParallelStep {
    /// How many tasks to step `vehicles` vehicles in: as many as [`ParallelStep::tasks`] asks
    /// for, but no more than leaves each task [`ParallelStep::min_vehicles_per_task`], and at
    /// least one.
    pub fn task_count(&self, vehicles: usize) -> usize {
        let tasks = self
            .tasks
            .unwrap_or_else(|| ComputeTaskPool::try_get().map_or(1, |pool| pool.thread_num()));
        tasks
            .min(vehicles / self.min_vehicles_per_task.max(1))
            .max(1)
    }
}

/// Calls `each` on every item of `items` in `tasks` contiguous runs on the compute task pool
/// (on the calling thread when `tasks` ≤ 1 or there is no pool), each run in order with
/// [`pipelined`]'s hints (`far` and `near`) and its own context made by `context` (a scratch
/// buffer, say). Returns once every item is done.
pub fn for_each<T: Send, C>(
    items: &mut [T],
    tasks: usize,
    context: impl Fn() -> C + Sync,
    far: impl Fn(&C, &T) + Sync,
    near: impl Fn(&C, &T) + Sync,
    each: impl Fn(&mut C, &mut T) + Sync,
) {
    for_each_run(items, tasks, context, |context, run| {
        pipelined(
            run.iter_mut(),
            context,
            |c, item| far(c, item),
            |c, item| near(c, item),
            |c, item| each(c, item),
        );
    });
}

/// Splits `items` into `tasks` contiguous runs and calls `run` on each in a task on the
/// compute task pool (on the whole of `items` on the calling thread when `tasks` ≤ 1 or
/// there is no pool), each with its own context made by `context`. Returns once every run
/// is done. For a step that takes its items a few at a time ([`for_each`] takes them one by
/// one).
pub fn for_each_run<T: Send, C>(
    items: &mut [T],
    tasks: usize,
    context: impl Fn() -> C + Sync,
    run: impl Fn(&mut C, &mut [T]) + Sync,
) {
    let run = |items: &mut [T]| run(&mut context(), items);
    match ComputeTaskPool::try_get() {
        Some(pool) if tasks > 1 && items.len() > 1 => {
            let per_task = items.len().div_ceil(tasks);
            pool.scope(|scope| {
                for chunk in items.chunks_mut(per_task) {
                    let run = &run;
                    scope.spawn(async move { run(chunk) });
                }
            });
        }
        _ => run(items),
    }
}

/// [`for_each`] over items straight from an iterator (a query's `iter_mut`, say), without a
/// context: on the calling thread, and without collecting them first, when `tasks` ≤ 1.
pub fn for_each_of<T: Send>(
    items: impl Iterator<Item = T>,
    tasks: usize,
    far: impl Fn(&T) + Sync,
    near: impl Fn(&T) + Sync,
    each: impl Fn(&mut T) + Sync,
) {
    if tasks <= 1 {
        pipelined(
            items,
            &mut (),
            |_, item| far(item),
            |_, item| near(item),
            |_, mut item| each(&mut item),
        );
    } else {
        let mut items: Vec<T> = items.collect();
        for_each(
            &mut items,
            tasks,
            || (),
            |_, item| far(item),
            |_, item| near(item),
            |_, item| each(item),
        );
    }
}

/// A vehicle's own block `block`'s component `C`, for writing from a task of a parallel step
/// ([`for_each`]): `None` unless the block's [`BlockSlot`] names `vehicle` and `node`, which
/// at most one vehicle's step ever does for a block at a time, even where a vehicle still
/// holds a block another vehicle has taken over (a vehicle's blocks are written by that
/// vehicle's step alone, wherever they are listed).
///
/// Bevy cannot see that tasks stepping different vehicles reach different block entities, so
/// a task reaches them through [`Query::get_unchecked`] behind the slot's check. With
/// [`SensorWriter`](crate::plugin::SensorWriter)'s writes, which come through here from tasks,
/// and the [`prefetch`](crate::prefetch) intrinsic, this is the crate's `unsafe` code.
///
/// # Safety
///
/// - Calls for the same `vehicle` must not overlap: not at the same time on two threads (so
///   step each vehicle in one task, as [`for_each`] does with a query's items), and not
///   while a value an earlier call returned for it is still alive.
/// - Nothing else may reach `components` while any of these calls' values is alive (borrow
///   the query mutably, or only share it with these calls, for the whole parallel step).
#[allow(unsafe_code)]
pub unsafe fn owned_block_mut<'q, 'w, 's, C: Component<Mutability = Mutable>>(
    components: &'q Query<'w, 's, &mut C>,
    slots: &Query<&BlockSlot>,
    vehicle: Entity,
    block: Entity,
    node: u32,
) -> Option<Mut<'q, C>> {
    let owned = slots
        .get(block)
        .is_ok_and(|slot| slot.vehicle == vehicle && slot.node == node);
    // SAFETY: the slot names one vehicle and one node, so of all calls running at once (each
    // for a different vehicle, as the caller promises) only this one passes the check for
    // `block`, and the caller keeps everything else off `components` meanwhile: the `Mut`
    // is the only reference to this component.
    owned
        .then(|| unsafe { components.get_unchecked(block) }.ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::{ParallelStep, for_each};
    use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};

    #[test]
    fn tasks_are_asked_for_but_never_thinner_than_the_least_per_task() {
        let step = |tasks| ParallelStep {
            tasks,
            min_vehicles_per_task: 16,
        };
        assert_eq!(step(Some(4)).task_count(1000), 4);
        assert_eq!(step(Some(4)).task_count(40), 2);
        assert_eq!(step(Some(4)).task_count(31), 1);
        assert_eq!(step(Some(4)).task_count(0), 1);
        assert_eq!(step(Some(0)).task_count(1000), 1);
        assert_eq!(step(Some(1)).task_count(1000), 1);
    }

    #[test]
    fn every_item_is_visited_once_in_any_number_of_tasks() {
        ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
        for tasks in 0..5 {
            for n in 0..40 {
                let mut items: Vec<(usize, u32)> = (0..n).map(|i| (i, 0)).collect();
                for_each(
                    &mut items,
                    tasks,
                    || (),
                    |_, _| {},
                    |_, _| {},
                    |_, item| item.1 += 1,
                );
                assert!(items.iter().enumerate().all(|(i, item)| *item == (i, 1)));
            }
        }
    }
}
