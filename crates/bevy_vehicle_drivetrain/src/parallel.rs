//! Stepping many vehicles on every thread of Bevy's compute task pool.
//!
//! A vehicle's step reads and writes that vehicle's own data only, so vehicles can be stepped
//! in any order and on any thread with the same result, bit for bit. [`for_each`] splits a
//! system's vehicles into contiguous runs, one per task ([`ParallelStep`] says how many), and
//! steps each run in order with the prefetch pipeline of [`pipelined`]. With one compute
//! thread (Bevy without its `multi_threaded` feature, which its default features include) or
//! too few vehicles to be worth a task, a system steps them on its own thread.

use crate::prefetch::pipelined;
use bevy::prelude::Resource;
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
    let run = |run: &mut [T]| {
        let mut context = context();
        pipelined(
            run.iter_mut(),
            &mut context,
            |c, item| far(c, item),
            |c, item| near(c, item),
            |c, item| each(c, item),
        );
    };
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
