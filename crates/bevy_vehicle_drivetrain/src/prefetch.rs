//! Prefetch hints: requests to bring memory into the processor's caches ahead of its use,
//! which change no value. Stepping thousands of vehicles, the plugin asks for the next
//! vehicle's boxed cells while it steps this one (see `Drivetrain::prefetch`).
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
