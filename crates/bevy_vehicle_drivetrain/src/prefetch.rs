//! Prefetch hints: requests to bring memory into the processor's caches ahead of its use,
//! which change no value. Stepping thousands of vehicles, the plugin asks for a vehicle's
//! component two vehicles ahead and for its boxed cells one vehicle ahead ([`pipelined`],
//! `Drivetrain::prefetch`).
//!
//! The crate's only `unsafe` code: the SSE prefetch intrinsic, which Rust marks `unsafe`.
#![allow(unsafe_code)]

/// Asks the processor to load every cache line of `value`.
#[inline(always)]
pub(crate) fn value<T>(value: &T) {
    slice(core::slice::from_ref(value));
}

/// Asks the processor to load every cache line of `values`.
#[inline(always)]
pub(crate) fn slice<T>(values: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = values.as_ptr().cast::<i8>();
        let mut offset = 0;
        while offset < core::mem::size_of_val(values) {
            // SAFETY: `_mm_prefetch` needs only SSE, which every x86-64 processor has and
            // every `x86_64` Rust target enables. A prefetch reads nothing into the
            // program and cannot fault, whatever the address; this one lies inside
            // `values`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = values;
}

/// Calls `each` on every item of `items`, in order, two items behind the iteration: `far` on
/// an item as soon as it is reached, `near` one item later, `each` one item after that. A loop
/// over many items whose data is not in the cache can so ask for an item's own memory two
/// iterations before using it (`far`), and for the memory it points to one iteration before
/// (`near`, when the pointers themselves have arrived).
#[inline]
pub(crate) fn pipelined<T>(
    items: impl Iterator<Item = T>,
    far: impl Fn(&T),
    near: impl Fn(&T),
    mut each: impl FnMut(T),
) {
    let mut ahead: Option<T> = None;
    let mut ready: Option<T> = None;
    for item in items {
        far(&item);
        if let Some(next) = ahead.replace(item) {
            near(&next);
            if let Some(current) = ready.replace(next) {
                each(current);
            }
        }
    }
    if let Some(next) = ahead {
        near(&next);
        if let Some(current) = ready.replace(next) {
            each(current);
        }
    }
    if let Some(current) = ready {
        each(current);
    }
}

#[cfg(test)]
mod tests {
    use super::pipelined;

    #[test]
    fn pipelined_visits_every_item_once_in_order_after_its_hints() {
        for n in 0..6 {
            let log = core::cell::RefCell::new(Vec::new());
            pipelined(
                0..n,
                |&i| log.borrow_mut().push(("far", i)),
                |&i| log.borrow_mut().push(("near", i)),
                |i| log.borrow_mut().push(("each", i)),
            );
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
}
