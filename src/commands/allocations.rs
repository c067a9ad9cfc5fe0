//! The `throng` binary's allocator: the system's, counting allocations (and reallocations) per
//! thread and in all. `throng soak` reports allocations per frame from [`total`]; the hero test
//! checks that a pose allocates nothing from [`this_thread`]. Two relaxed counter updates per
//! allocation cost nothing next to the allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static TOTAL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static THREAD: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    TOTAL.fetch_add(1, Ordering::Relaxed);
    let _ = THREAD.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations so far, on every thread.
pub fn total() -> u64 {
    TOTAL.load(Ordering::Relaxed)
}

/// Allocations so far on the calling thread.
#[cfg(test)]
pub fn this_thread() -> u64 {
    THREAD.with(Cell::get)
}
