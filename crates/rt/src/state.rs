//! The runtime's single global state and the allocation and free paths that
//! add counting, sites, modes and pacing around the heap.
//!
//! The runtime is single-threaded: compiled code runs on one thread, and the
//! state is a plain `UnsafeCell`, so the hot paths hold no atomic operation.

use std::cell::UnsafeCell;
use std::collections::BTreeMap;

use crate::config::{MemMode, Settings};
use crate::heap::{Heap, DEFAULT_ORDER, LARGE};

/// Counters behind the one "counting" flag; untouched when it is clear.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Allocation attempts (successful or not).
    pub attempts: u64,
    pub alloc_blocks: u64,
    pub alloc_bytes: u64,
    /// Blocks freed by compiled drops (`sspur_free`, `sspur_free_strs`).
    pub freed_last_use_blocks: u64,
    pub freed_last_use_bytes: u64,
    /// Blocks the runtime freed itself (`free_temp`).
    pub freed_internal_blocks: u64,
    pub freed_internal_bytes: u64,
    /// Blocks reclaimed by sweeps.
    pub collected_blocks: u64,
    pub collected_bytes: u64,
    /// Bytes allocated since the last stress collection.
    pub stress_bytes: u64,
}

/// Collections by kind, their pauses and what they promoted; always kept
/// (a few additions per collection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcCounts {
    pub minor: u64,
    pub major: u64,
    /// Bytes of young blocks that survived a minor collection (a major one
    /// makes every survivor old without counting it).
    pub promoted_bytes: u64,
    /// Bytes the sweeps freed.
    pub freed_bytes: u64,
    pub total_pause: std::time::Duration,
    pub longest_pause: std::time::Duration,
    /// The longest pause of each kind (wall time).
    pub longest_minor: std::time::Duration,
    pub longest_major: std::time::Duration,
    /// The thread's CPU time in collections: on a loaded machine the wall
    /// time of a pause includes time the program was not running at all.
    pub cpu_total: std::time::Duration,
    pub cpu_longest: std::time::Duration,
    /// The largest live set a major collection found (old bytes after it).
    pub max_live_bytes: u64,
    /// Bytes the collections read: native stack words scanned, remembered
    /// blocks scanned again, and marked pointer blocks scanned.
    pub stack_bytes: u64,
    pub remembered_bytes: u64,
    pub scanned_bytes: u64,
    /// Incremental major collections: cycles started and finished, mark
    /// slices, and the longest slice and final pause.
    pub cycles_started: u64,
    pub slices: u64,
    pub longest_slice: std::time::Duration,
    /// The most bytes one slice read (at most `gc::SLICE_MAX_WORK` when
    /// pacing asked for it).
    pub largest_slice: u64,
    pub longest_final: std::time::Duration,
    /// Stack barriers put in, and the stack bytes above the innermost one
    /// that minor collections did not read again.
    pub barriers: u64,
    pub stack_skipped: u64,
    /// Pauses that read only the outer part of a deep new stack
    /// (`gc::collect_inner`): marking steps of a minor collection.
    pub stack_steps: u64,
    /// Bytes of cards of large remembered blocks not read again.
    pub cards_skipped: u64,
}

/// Per-site totals, kept when sites are tracked.
#[derive(Clone, Copy, Debug, Default)]
pub struct SiteStat {
    pub alloc_blocks: u64,
    pub alloc_bytes: u64,
    pub freed_blocks: u64,
    pub freed_bytes: u64,
}

pub struct Rt {
    pub heap: Heap,
    pub settings: Settings,
    pub initialized: bool,
    pub finished: bool,
    /// The "counting only when read" flag, decided before the first allocation.
    pub counting: bool,
    pub mode: MemMode,
    /// One past the highest address of the program thread's stack (0 = unknown).
    pub stack_base: usize,
    pub roots: Vec<*const usize>,
    pub counters: Counters,
    pub collections: u64,
    /// Live bytes after the last major collection, lowered by the old
    /// blocks freed at their last use since (`gc::lower_threshold`).
    pub live_after_gc: usize,
    /// Pacing: a major collection once the old generation passes this.
    pub major_threshold: usize,
    /// Minor collections in a row that found little garbage (pacing).
    pub idle_doublings: u32,
    /// The remembered set: base addresses of old pointer blocks that may
    /// point at young blocks (`Page::remembered` marks its members).
    pub remembered: Vec<usize>,
    /// An incremental major collection is marking (`gc`'s module comment).
    pub marking: bool,
    /// Its grey old blocks: (block base, offset to scan from).
    pub major_stack: Vec<(usize, usize)>,
    /// Its stack ranges still to read (words above intact stack barriers
    /// when it started), greying the old blocks they point at.
    pub major_ranges: Vec<(usize, usize)>,
    /// `heap.young_bytes` when the last step of the cycle ended (a slice's
    /// work follows the young bytes handed out since).
    pub slice_from: usize,
    /// Bytes of marking the cycle owes (`MARK_RATE` per young byte handed
    /// out since it started, less what its slices read).
    pub mark_owed: usize,
    /// Bytes the cycle's minor collections promoted (pacing after it).
    pub cycle_promoted: usize,
    /// What the collections did, for `SSPUR_GC_STATS`.
    pub gc: GcCounts,
    pub site_names: Vec<String>,
    pub sites: Vec<SiteStat>,
    /// Check mode: free site of each quarantined block, by base address.
    pub free_sites: BTreeMap<usize, u32>,
    /// Check-mode findings so far (also printed to stderr as they happen).
    pub reports: Vec<String>,
    pub stdout: Vec<u8>,
    pub in_gc: bool,
    /// Unique cells: per-kind and reuse counters, the deep free's work list.
    pub cells: crate::cells::CellState,
    /// The thread that initialised the runtime (`pthread_self`), 0 before.
    pub owner: usize,
    /// The stack barriers (`barrier`): which stack words a minor
    /// collection need not read again.
    pub barriers: crate::barrier::Barriers,
    /// Compiled code's table is installed and barriers are supported.
    pub barriers_ok: bool,
    /// An incremental cycle starts: the next collection hands the stack
    /// words above the barriers to its slices (`major_ranges`).
    pub grey_stack_next: bool,
    /// The stack pointer of the last collection.
    pub gc_sp: usize,
    /// The last pause read only the outer part of a deep new stack: the
    /// collector is asked in again at the next slow allocation to go on.
    pub stack_pending: bool,
    /// Its steps promoted pointer blocks (`Page::stepped` bits to clear
    /// when it completes).
    pub stepped: bool,
    /// Large remembered blocks: the checksum of each card when a minor
    /// collection last read it (`gc::scan_remembered`), by block base.
    pub cards: BTreeMap<usize, Box<[Option<u64>]>>,
}

struct Global(UnsafeCell<Rt>);
// SAFETY: the runtime is single-threaded by contract: only the thread that
// initialised it (`Rt::owner`) touches it, which the slow paths check (and,
// in debug builds, every access).
unsafe impl Sync for Global {}

static RT: Global = Global(UnsafeCell::new(Rt::new()));

/// The address of the global heap's class states (`Heap::classes`) when
/// generated code may allocate small blocks inline (the runtime's own fast
/// path: pop the class's free list, else bump; anything else calls
/// `sspur_alloc_block`), or 0 when every allocation must go through the
/// runtime: before initialisation, and when allocations are counted,
/// checked or sampled (`Settings::counting`, a tier stamping births).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static sspur_alloc_classes: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The runtime state. Entry points take it once and pass it down, so no two
/// live `&mut` overlap.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub fn rt() -> &'static mut Rt {
    let rt = rt_unchecked();
    #[cfg(debug_assertions)]
    rt.check_owner();
    rt
}

/// The runtime state without the debug build's owner check (tests that hand
/// the runtime from thread to thread under a lock).
#[inline(always)]
pub(crate) fn rt_unchecked() -> &'static mut Rt {
    // SAFETY: only the owner thread reaches the state (checked on the slow
    // paths), and it never holds two of these references at once (above).
    unsafe { &mut *RT.0.get() }
}

/// The calling thread's id, as recorded in `Rt::owner`.
#[inline(always)]
pub(crate) fn current_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    (unsafe { libc::pthread_self() }) as usize
}

impl Rt {
    pub const fn new() -> Rt {
        Rt {
            heap: Heap::new(),
            settings: Settings::DEFAULT,
            initialized: false,
            finished: false,
            counting: false,
            mode: MemMode::Default,
            stack_base: 0,
            roots: Vec::new(),
            counters: Counters {
                attempts: 0,
                alloc_blocks: 0,
                alloc_bytes: 0,
                freed_last_use_blocks: 0,
                freed_last_use_bytes: 0,
                freed_internal_blocks: 0,
                freed_internal_bytes: 0,
                collected_blocks: 0,
                collected_bytes: 0,
                stress_bytes: 0,
            },
            collections: 0,
            live_after_gc: 0,
            major_threshold: 0,
            idle_doublings: 0,
            remembered: Vec::new(),
            marking: false,
            major_stack: Vec::new(),
            major_ranges: Vec::new(),
            slice_from: 0,
            mark_owed: 0,
            cycle_promoted: 0,
            gc: GcCounts {
                minor: 0,
                major: 0,
                promoted_bytes: 0,
                freed_bytes: 0,
                total_pause: std::time::Duration::ZERO,
                longest_pause: std::time::Duration::ZERO,
                longest_minor: std::time::Duration::ZERO,
                longest_major: std::time::Duration::ZERO,
                cpu_total: std::time::Duration::ZERO,
                cpu_longest: std::time::Duration::ZERO,
                max_live_bytes: 0,
                stack_bytes: 0,
                barriers: 0,
                stack_skipped: 0,
                stack_steps: 0,
                cards_skipped: 0,
                remembered_bytes: 0,
                scanned_bytes: 0,
                cycles_started: 0,
                slices: 0,
                longest_slice: std::time::Duration::ZERO,
                largest_slice: 0,
                longest_final: std::time::Duration::ZERO,
            },
            site_names: Vec::new(),
            sites: Vec::new(),
            free_sites: BTreeMap::new(),
            reports: Vec::new(),
            stdout: Vec::new(),
            in_gc: false,
            cells: crate::cells::CellState::new(),
            owner: 0,
            barriers: crate::barrier::Barriers::new(),
            barriers_ok: false,
            grey_stack_next: false,
            gc_sp: 0,
            stack_pending: false,
            stepped: false,
            cards: BTreeMap::new(),
        }
    }

    /// Applies settings and records the calling thread's stack base. Only the
    /// first call counts: settings never change after the first allocation.
    pub fn init(&mut self, settings: Settings) {
        if self.initialized {
            self.check_owner();
            return;
        }
        self.initialized = true;
        self.owner = current_thread();
        self.counting = settings.counting();
        self.mode = settings.mem;
        self.heap.track_sites = settings.track_sites();
        self.heap.young_budget = settings.gc_young_bytes;
        self.heap.trigger = settings.gc_young_bytes;
        self.major_threshold = settings.gc_min_bytes;
        self.heap.max_heap = settings.max_heap();
        self.settings = settings;
        self.stack_base = crate::gc::stack_base();
        self.heap.gc_ready = self.stack_base != 0;
        if !self.counting
            && !<crate::tier::Active as crate::tier::Tier>::BIRTHS
            && std::ptr::eq(self, RT.0.get())
        {
            sspur_alloc_classes.store(
                self.heap.classes.as_ptr() as usize,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        // The tests' planted bug (tests/barriers.rs); never in a release build.
        self.barriers.stale_test =
            cfg!(debug_assertions) && std::env::var_os("SSPUR_TEST_STALE_BARRIERS").is_some();
    }

    pub fn init_from_env(&mut self) {
        if self.initialized {
            self.check_owner();
            return;
        }
        match Settings::from_env() {
            Ok(s) => self.init(s),
            Err(msg) => {
                eprintln!("sspur: {msg}");
                std::process::exit(2);
            }
        }
    }

    /// Aborts when the calling thread is not the one that initialised the
    /// runtime: the state is a plain global, and a second thread would race
    /// the first on every allocation. Called on the slow paths (and, in
    /// debug builds, on every access); a no-op before initialisation.
    #[inline]
    pub fn check_owner(&self) {
        if self.owner != 0 && self.owner != current_thread() {
            wrong_thread();
        }
    }

    // ---- allocation ----

    /// The allocation every entry point uses: null on failure.
    #[inline(always)]
    pub fn alloc(&mut self, size: usize, kind: usize, site: u32) -> *mut u8 {
        if size > crate::heap::MAX_SMALL {
            self.heap.large_site = site;
        }
        if self.counting {
            return self.alloc_counted(size, kind, site);
        }
        let p = self.heap.alloc(size, kind, DEFAULT_ORDER);
        if !p.is_null() {
            return p;
        }
        self.alloc_retry(size, kind)
    }

    /// The slow path of a failed heap allocation: initialise on first use,
    /// collect if pacing asked, and try again once.
    #[inline(never)]
    fn alloc_retry(&mut self, size: usize, kind: usize) -> *mut u8 {
        self.check_owner();
        if !self.initialized {
            self.init_from_env();
            if self.counting {
                return self.alloc_counted(size, kind, 0);
            }
            return self.alloc(size, kind, 0);
        }
        if !self.heap.want_gc {
            return std::ptr::null_mut();
        }
        self.heap.want_gc = false;
        crate::gc::step(self);
        let ready = self.heap.gc_ready;
        self.heap.gc_ready = false;
        let p = self.heap.alloc(size, kind, DEFAULT_ORDER);
        self.heap.gc_ready = ready;
        p
    }

    #[inline(never)]
    fn alloc_counted(&mut self, size: usize, kind: usize, site: u32) -> *mut u8 {
        if !self.initialized {
            self.init_from_env();
        }
        self.check_owner();
        let c = &mut self.counters;
        c.attempts += 1;
        if c.attempts == self.settings.fail_alloc_at {
            return std::ptr::null_mut();
        }
        if self.settings.stress_bytes != 0 {
            c.stress_bytes += size as u64;
            if c.stress_bytes >= self.settings.stress_bytes as u64 {
                c.stress_bytes = 0;
                // Mostly minor collections; every fourth advances an
                // incremental major collection (starts it, marks a slice
                // or finishes it), every sixteenth a stop-the-world major
                // one, so stress runs exercise them all and the audits.
                crate::gc::stress_step(self);
            }
        }
        let mut p = self.heap.alloc(size, kind, DEFAULT_ORDER);
        if p.is_null() {
            p = self.alloc_retry(size, kind);
            if p.is_null() {
                return p;
            }
        }
        if let Some((id, i)) = self.heap.lookup(p as usize) {
            self.note_alloc(id, i, site);
        }
        p
    }

    /// Counts block `i` of page `id` as allocated at `site` (also a block
    /// a constructor reuses in place).
    pub(crate) fn note_alloc(&mut self, id: usize, i: usize, site: u32) {
        let bytes = self.heap.pages[id].block_size as u64;
        self.counters.alloc_blocks += 1;
        self.counters.alloc_bytes += bytes;
        if self.heap.track_sites {
            self.heap.pages[id].sites[i] = site;
            let s = self.site_stat(site);
            s.alloc_blocks += 1;
            s.alloc_bytes += bytes;
        }
    }

    pub(crate) fn site_stat(&mut self, site: u32) -> &mut SiteStat {
        let s = site as usize;
        if self.sites.len() <= s {
            self.sites.resize(s + 1, SiteStat::default());
        }
        &mut self.sites[s]
    }

    // ---- free ----

    /// Frees the block holding `ptr`; `last_use` says a compiled drop asked.
    #[inline(always)]
    pub fn free(&mut self, ptr: usize, site: u32, last_use: bool) {
        if self.mode != MemMode::Default || self.counting {
            return self.free_special(ptr, site, last_use);
        }
        if let Some((id, i)) = self.heap.lookup(ptr) {
            self.heap.free_block(id, i);
        }
    }

    #[inline(never)]
    fn free_special(&mut self, ptr: usize, site: u32, last_use: bool) {
        self.check_owner();
        if self.mode == MemMode::Gc {
            return;
        }
        let found = if self.mode == MemMode::Check {
            self.check_lookup(ptr, site)
        } else {
            self.heap.lookup(ptr)
        };
        let Some((id, i)) = found else {
            return;
        };
        let bytes = self.heap.pages[id].block_size as u64;
        if self.counting {
            let c = &mut self.counters;
            if last_use {
                c.freed_last_use_blocks += 1;
                c.freed_last_use_bytes += bytes;
            } else {
                c.freed_internal_blocks += 1;
                c.freed_internal_bytes += bytes;
            }
            if self.heap.track_sites {
                let alloc_site = self.heap.pages[id].sites[i];
                let s = self.site_stat(alloc_site);
                s.freed_blocks += 1;
                s.freed_bytes += bytes;
            }
        }
        if self.mode == MemMode::Check {
            self.quarantine(id, i, site);
        } else {
            self.heap.free_block(id, i);
        }
    }

    /// Frees the block holding `ptr` without counting it (the caller
    /// counts): quarantined in check mode, nothing under SSPUR_MEM=gc.
    pub(crate) fn free_uncounted(&mut self, ptr: usize, site: u32) {
        let found = match self.mode {
            MemMode::Gc => None,
            MemMode::Check => self.check_lookup(ptr, site),
            MemMode::Default => self.heap.lookup(ptr),
        };
        let Some((id, i)) = found else { return };
        if self.mode == MemMode::Check {
            self.quarantine(id, i, site);
        } else {
            self.heap.free_block(id, i);
        }
    }

    /// Check mode: the block to free, aborting on a double free.
    fn check_lookup(&mut self, ptr: usize, site: u32) -> Option<(usize, usize)> {
        let id = self.heap.map_get(ptr);
        if id == 0 {
            return None;
        }
        let id = id as usize - 1;
        let page = &self.heap.pages[id];
        let i = page.index_of(ptr);
        if i >= page.nblocks {
            return None;
        }
        if crate::heap::Page::bit(&page.quarantine, i) {
            let base = page.block_addr(i);
            let first = self.free_sites.get(&base).copied().unwrap_or(0);
            let alloc_site = page.sites.get(i).copied().unwrap_or(0);
            let msg = format!(
                "sspur check: double free of a {}-byte block allocated at {}: freed at {}, freed again at {}",
                page.block_size,
                self.site_name(alloc_site),
                self.site_name(first),
                self.site_name(site)
            );
            crate::out::abort_with(self, &msg);
        }
        self.heap.lookup(ptr)
    }

    /// Check mode: fill with 0xA5 and keep the block out of circulation.
    fn quarantine(&mut self, id: usize, i: usize, site: u32) {
        let page = &mut self.heap.pages[id];
        let base = page.block_addr(i);
        // SAFETY: (id, i) comes from `heap.lookup`, so block `i` is allocated
        // in in-use page `id` and its `block_size` bytes are mapped; the
        // program is giving the block up, and no Rust reference covers heap
        // memory across this call.
        unsafe { std::ptr::write_bytes(base as *mut u8, 0xA5, page.block_size) };
        crate::heap::Page::set(&mut page.quarantine, i);
        crate::heap::Page::set(&mut page.alloc, i);
        self.free_sites.insert(base, site);
    }

    pub fn site_name(&self, site: u32) -> String {
        if site == 0 {
            return "an unknown site".to_string();
        }
        match self.site_names.get(site as usize - 1) {
            Some(name) => name.clone(),
            None => format!("site {site}"),
        }
    }

    /// Whether a quarantined block lives at page `id` index `i` (for reports).
    pub fn is_large(&self, id: usize) -> bool {
        self.heap.pages[id].class == LARGE
    }

    /// Returns all memory and forgets everything (tests start from here).
    pub fn reset(&mut self) {
        self.heap.release_all();
        crate::cells::renewed::clear();
        *self = Rt::new();
    }
}

impl Default for Rt {
    fn default() -> Self {
        Rt::new()
    }
}

#[cold]
#[inline(never)]
fn wrong_thread() -> ! {
    crate::out::write_stderr_raw(
        b"sspur: the runtime was used from a thread other than the one that initialised it\n",
    );
    std::process::abort()
}
