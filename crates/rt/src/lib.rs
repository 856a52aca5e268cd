//! Sspur runtime: allocator, collector, statistics, modes, and the C-ABI
//! entry points compiled code calls.
//!
//! Compiled code calls the `extern "C"` functions of [`abi`]; the helpers in
//! [`helpers`] and the runtime's own code use the Rust API below. See
//! docs/runtime.md for the heap layout, the collector and the modes.
//!
//! Safety contract: every function that dereferences a pointer it is given
//! is `unsafe` and says what its caller guarantees; every `unsafe` block
//! says why that holds (`// SAFETY:`); the global state belongs to the
//! thread that initialised it (checked on the slow paths).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod abi;
pub mod backtrace;
mod barrier;
pub mod cells;
pub mod config;
mod gc;
pub mod heap;
pub mod image;
pub mod launch;
mod out;
pub mod overflow;
mod state;
pub mod stats;
pub mod tier;

/// String, list, map and display helpers called by compiled code, built on
/// the core allocator API; their value layout is the native backend's.
pub mod helpers;

pub use abi::*;
pub use cells::{sspur_free_cell, sspur_free_deep, sspur_reuse_or_alloc, BlockKind};
pub use config::{MemMode, Settings, StatsMode};
pub use heap::{DATA, POINTER};
pub use state::{sspur_alloc_classes, Counters, GcCounts, SiteStat};
pub use stats::Stats;

use state::rt;

/// Base and usable size of the allocated block holding `ptr` (interior
/// pointers included), or None outside the heap. O(1): a page-map lookup.
pub fn block_of(ptr: *const u8) -> Option<(*mut u8, usize)> {
    rt().heap
        .block_of(ptr as usize)
        .map(|(b, n)| (b as *mut u8, n))
}

/// Grows the allocated large block holding `ptr` in place to at least
/// `size` bytes, within the address space its mapping reserved: its new
/// usable size, or None (a small block, no room, or a collection due: the
/// caller allocates and copies). Only in the default memory mode and while
/// allocations are not counted, so check mode and the statistics see every
/// growth as a fresh block. The bytes the block grows by are zero.
pub fn grow_in_place(ptr: *const u8, size: usize) -> Option<usize> {
    let rt = rt();
    if rt.mode != MemMode::Default || rt.counting {
        return None;
    }
    rt.heap.grow_large(ptr as usize, size)
}

/// Allocates one of the runtime's own temporaries (sort buffers, a string
/// builder's buffer...). `kind` is [`DATA`] or [`POINTER`]. Null on failure
/// (the caller traps with `out of memory`).
pub fn alloc_temp(size: usize, kind: u32) -> *mut u8 {
    rt().alloc(size, (kind != 0) as usize, 0)
}

/// Frees a runtime temporary: a real free, but not counted as "freed at
/// last use". A no-op under SSPUR_MEM=gc, like every free; quarantined
/// under SSPUR_MEM=check.
///
/// # Safety
/// Nothing may use the block holding `ptr` afterwards.
pub unsafe fn free_temp(ptr: *mut u8) {
    rt().free(ptr as usize, 0, false);
}

/// The write barrier. Call it whenever a pointer is stored into an existing
/// block, unless the storing code allocated that block itself and has held
/// it in a local ever since (each collection remembers the blocks the
/// roots point at): map put and its table growth, list push or concat in
/// place, builder growth. A block reached through
/// the heap needs it even when nothing is allocated between the load and
/// the store. Call it after the store, or before it with no allocation in
/// between. `ptr`
/// may point anywhere inside the block; addresses outside the heap, data
/// blocks and young blocks are ignored (a lookup and a bit test).
///
/// Why: the collector is generational (sticky mark bits); a minor
/// collection does not scan old blocks, except the ones recorded here and
/// the ones a root points at, so a young block reachable only from an
/// unrecorded old block would be freed. `SSPUR_MEM=check` reports such a
/// block at every major collection.
#[inline(always)]
pub fn remember(ptr: *const u8) {
    gc::remember(rt(), ptr as usize);
}

/// Runs a minor collection now (tests; `sspur_collect` runs a major one).
pub fn collect_minor() {
    abi::sspur_collect_minor();
}

/// Starts an incremental major collection (a minor collection that begins
/// its marking) unless one is marking already; pacing starts them when the
/// old generation passes its threshold. For tests.
pub fn major_start() {
    let rt = rt();
    if !rt.initialized {
        rt.init_from_env();
    }
    gc::start_major(rt);
}

/// The most bytes a mark slice reads when pacing asks for it.
pub use gc::SLICE_MAX_WORK;

/// One mark slice of the incremental major collection, scanning about
/// `bytes` bytes of old blocks; nothing when none is marking. For tests.
pub fn major_slice(bytes: usize) {
    gc::slice(rt(), bytes);
}

/// Ends the incremental major collection (its final pause: a minor
/// collection, the rest of the marking, the sweep); a minor collection
/// when none is marking. For tests.
pub fn major_finish() {
    gc::collect(rt(), gc::Kind::Final);
}

/// Whether an incremental major collection is marking.
pub fn major_marking() -> bool {
    rt().marking
}

/// Names the allocation sites: site id `i + 1` is `names[i]` (for example
/// "examples/foo.ssp:12:5 list from map"), used by reports.
pub fn set_site_names(names: Vec<String>) {
    rt().site_names = names;
}

/// Registers a word the collector must scan as a root (a global holding a
/// program pointer).
///
/// # Safety
/// The word must stay readable for the rest of the run.
pub unsafe fn add_root(ptr: *const usize) {
    rt().roots.push(ptr);
}

/// The memory mode, read once at start-up.
pub fn mem_mode() -> MemMode {
    let rt = rt();
    if !rt.initialized {
        rt.init_from_env();
    }
    rt.mode
}

/// Starts the runtime with explicit settings instead of the environment
/// (tests, embedders). Like [`sspur_rt_init`], only the first call counts.
pub fn init_with(settings: Settings) {
    rt().init(settings);
}

/// A snapshot of the statistics (counters are zero unless counting is on).
pub fn stats() -> Stats {
    stats::snapshot(rt())
}

/// Check-mode findings of the collections so far.
pub fn check_reports() -> Vec<String> {
    rt().reports.clone()
}

/// The exit report `sspur_rt_finish` would print now.
pub fn exit_report() -> String {
    stats::exit_report(rt())
}

/// Returns all heap memory to the OS and forgets every setting, root and
/// counter, so the next call starts a new runtime. Only for tests.
///
/// # Safety
/// Every pointer into the old heap dangles afterwards: none may be used.
#[doc(hidden)]
pub unsafe fn reset_for_tests() {
    // The next test may run on another thread: the new runtime belongs to
    // whichever thread initialises it.
    state::rt_unchecked().reset();
}

/// Allocation through one explicit fast-path order, for the benchmark that
/// chose [`heap::DEFAULT_ORDER`].
#[doc(hidden)]
pub fn alloc_with_order(size: usize, kind: usize, order: heap::Order) -> *mut u8 {
    let rt = rt();
    let p = rt.heap.alloc(size, kind, order);
    if p.is_null() {
        rt.alloc(size, kind, 0)
    } else {
        p
    }
}
