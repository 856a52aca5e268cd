//! The conservative, generational, non-moving collector.
//!
//! Roots are the program thread's native stack, from the collector's own
//! frame up to the base recorded at init, with the callee-saved registers
//! spilled into that range first, plus the words registered by `add_root`.
//! Any word that points into an allocated block (interior and one-past-the-end
//! pointers included) keeps it; pointer blocks are scanned word by word from
//! an explicit mark stack; data blocks never are.
//!
//! Generations use sticky mark bits: a block that survives a collection
//! keeps its mark bit and is *old*. A minor collection keeps the marks,
//! marks from the roots and from the remembered set, and frees only
//! unmarked blocks of the pages that may hold young ones; marking stops at
//! an old block, so its cost follows the survivors. A major collection
//! clears every mark first and marks everything.
//!
//! The barrier rule: an old block that comes to point at a young block must
//! be in the remembered set at the next collection. Two things put it there:
//! - [`remember`], the write barrier, called by every runtime path that
//!   stores a pointer into a block it reached through the heap rather than
//!   holding it across the last collection point (map put and its table
//!   growth, list push or concat in place, builder growth, compiled `set`
//!   in place; a block reused in place is made young instead, as a freed
//!   and reallocated one is);
//! - each collection remembers the pointer blocks a root points at when it
//!   ends that were young when it started or were in the remembered set:
//!   code that holds a block across a collection (a `map` loop filling its
//!   output list, a helper filling a list of fresh tuples, a builder held by
//!   compiled code) may write young pointers into it afterwards, and it can
//!   reach such a block only through a root.
//!
//! So compiled code's stores need no barrier of their own where it writes
//! into blocks it allocated and holds (remembered at every collection they
//! live through) or through the runtime's barriered paths; its one store
//! into a block it did not make, `set` in place, calls the barrier
//! (`sspur_remember`) first when the element holds pointers.
//!
//! Why held blocks that were already old and not remembered are left out
//! (a deep recursion holds thousands of old tree nodes in its frames, and
//! remembering them all made every minor collection read them again): code
//! that stores into a block without the barrier allocated it and has held it
//! ever since. At the first collection it lives through, the block is young
//! and held, so it is remembered; at each later one it is held and in the
//! remembered set, so it stays there. A block that was old and not
//! remembered when a collection started was not held by such code at the
//! previous one, so nothing stores a young pointer into it without the
//! barrier. For the same reason a minor collection need not scan the old
//! blocks the roots hold beyond the remembered set: any that can point at a
//! young block is in it. A major collection clears the marks before it
//! scans the roots, so it counts a held block as young when its page is on
//! the young list (a superset).
//!
//! Major collections paced by the old generation run incrementally: a
//! cycle clears a second mark bitmap (`Page::mmark`, the cycle's marks),
//! greys the old blocks a minor collection meets, marks old blocks in
//! short slices from a grey stack kept between pauses, and ends with a
//! final pause: a minor collection, the rest of the marking, and the sweep
//! of every page (kept: old, or just promoted, and marked by the cycle).
//! Between the steps the mark bits still mean old, so minor collections
//! run as usual, greying the old blocks they meet and giving the blocks
//! they promote the cycle's mark. The barrier rule is what makes it sound
//! (incremental update): a scanned block comes to point at another only
//! through a store the remembered set covers, and every collection scans
//! the remembered set. See docs/runtime.md.
//!
//! What a minor collection reads again, however few blocks are young, is
//! kept small two ways: the stack above the innermost stack barrier the
//! program has not returned through is not read (`barrier`), and a large
//! remembered block is read only in the cards whose checksum changed
//! (`scan_remembered`).

use std::time::{Duration, Instant};

use crate::config::MemMode;
use crate::heap::{Page, DATA, LARGE, NUM_CLASSES, POINTER};
use crate::state::Rt;
use crate::tier::Tier;

/// One past the highest address of the calling thread's stack, 0 if unknown.
pub fn stack_base() -> usize {
    // SAFETY: `attr` is a zeroed `pthread_attr_t` that `pthread_getattr_np`
    // initialises for the calling thread (we return before using it if that
    // fails); `addr` and `size` are live locals the getter writes; `attr` is
    // destroyed once, after its last use.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            addr as usize + size
        } else {
            0
        }
    }
}

/// Which collection to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Roots and the remembered set; frees young garbage only.
    Minor,
    /// Everything, stopping the world (abandons an incremental cycle).
    Major,
    /// The end of an incremental major collection: a minor collection that
    /// also finishes the cycle's marking, then the sweep of every page.
    Final,
}

/// Bytes of old pointer blocks (and stack ranges) the incremental major
/// collection marks per young byte handed out while it marks: the marking
/// outpaces the program's promotion.
const MARK_RATE: usize = 8;
/// The most a mark slice reads, in bytes of grey blocks and stack ranges:
/// its pause is bounded by work, never by a clock, so a program and its
/// settings give the same collections whatever the machine's load. About
/// 3 to 4 ms of one core where the grey blocks are large or together (a
/// slice reads 1 to 1.5 MB per ms), up to 15 ms where they are small
/// nodes scattered over the heap (bench/persist: 0.27 MB per ms), under
/// the 20 ms pause target.
pub const SLICE_MAX_WORK: usize = 4 << 20;
/// The least a slice reads (when that much is grey).
const SLICE_MIN_WORK: usize = 1 << 20;
/// Young bytes handed out between two mark slices (at most; a minor
/// collection comes sooner if due, and a slice sooner while the marking
/// owed passes what one slice does): the young bytes whose marking one
/// slice does.
const SLICE_BYTES: usize = SLICE_MAX_WORK / MARK_RATE;

/// A minor collection (or an incremental cycle's final pause) reads at
/// most this many times `SSPUR_GC_BARRIER_KB` (4 MB by default) of stack
/// below the innermost intact stack barrier in one pause, when barriers
/// can split the rest; it goes on at the next slow allocation.
const STEP_BARRIERS: usize = 64;

/// Called when pacing wants the collector (the young budget or the next
/// slice is due, or the heap limit was reached): a minor collection, or
/// the next step of an incremental major collection.
pub fn step(rt: &mut Rt) {
    if rt.stack_pending && !rt.heap.want_major {
        // The last pause read only the outer part of a deep new stack:
        // the next step of the same collection.
        rt.heap.stack_due = false;
        let kind = if rt.marking && marked_all(rt) {
            Kind::Final
        } else {
            Kind::Minor
        };
        collect(rt, kind);
    } else if std::mem::take(&mut rt.heap.stack_due) && !rt.heap.want_major {
        // The stack grew by `barrier::STACK_STEP` since the last
        // collection: read its new words while they are few.
        collect(rt, Kind::Minor);
    } else if rt.heap.want_major {
        collect(rt, Kind::Major);
    } else if rt.marking {
        if marked_all(rt) {
            collect(rt, Kind::Final);
        } else if rt.heap.young_bytes >= rt.heap.young_budget {
            collect(rt, Kind::Minor);
        } else {
            owe_marking(rt);
            // A cycle behind (a large nursery's minor collection owes much)
            // catches up in bounded slices that come sooner (`set_trigger`).
            let work = rt.mark_owed.clamp(SLICE_MIN_WORK, SLICE_MAX_WORK);
            slice(rt, work);
        }
    } else if rt.heap.old_bytes + rt.live_after_gc / MARK_RATE > rt.major_threshold {
        // Started early by about the old bytes the program may promote
        // while the cycle marks the last live set (the young bytes it
        // hands out meanwhile), so the heap peaks where a stop-the-world
        // major collection would have let it.
        start_major(rt);
    } else {
        collect(rt, Kind::Minor);
    }
}

/// Whether the incremental cycle has no marking left but its final pause's.
fn marked_all(rt: &Rt) -> bool {
    rt.major_stack.is_empty() && rt.major_ranges.is_empty()
}

/// Adds to the marking the cycle owes `MARK_RATE` bytes per young byte
/// handed out since its last step: a minor collection's young bytes too,
/// so the slices after it catch up.
fn owe_marking(rt: &mut Rt) {
    if rt.marking {
        let young = rt.heap.young_bytes.saturating_sub(rt.slice_from);
        rt.mark_owed = rt.mark_owed.saturating_add(young.saturating_mul(MARK_RATE));
        rt.slice_from = rt.heap.young_bytes;
    }
}

/// Old blocks freed at their last use since the last major collection
/// (or the end of an incremental one) were not live after all: when the
/// old generation, before a collection promotes anything, is smaller than
/// the live set that collection measured, that is the live set now, and
/// the major threshold falls to what it would set for it (never rises).
/// Without this a cycle that ended while large blocks were live (a list
/// and its text, freed at their last use a moment later) put the threshold
/// at twice them, and the garbage the program leaves to the collector
/// piled up to it (bench/strings, default mode: a 32 MB peak heap, 25 MB
/// with this).
fn lower_threshold(rt: &mut Rt) {
    let old = rt.heap.old_bytes;
    if old < rt.live_after_gc {
        rt.live_after_gc = old;
        rt.major_threshold = rt.major_threshold.min(major_threshold_for(rt, old, 0));
    }
}

/// The major threshold for an old generation of `proven` live bytes and
/// `unproven` ones (kept by a cycle's minor collections without asking
/// whether they still live, counted once): `SSPUR_GC_FACTOR` times the
/// live set, at least `SSPUR_GC_MIN_MB` above the old generation.
fn major_threshold_for(rt: &Rt, proven: usize, unproven: usize) -> usize {
    let target = ((proven as f64) * rt.settings.gc_factor) as usize + unproven;
    target.max((proven + unproven).saturating_add(rt.settings.gc_min_bytes))
}

/// `SSPUR_GC_STRESS`: mostly minor collections; every fourth advances an
/// incremental major collection, every sixteenth is a stop-the-world one.
pub fn stress_step(rt: &mut Rt) {
    if rt.collections % 16 == 15 {
        collect(rt, Kind::Major);
    } else if rt.collections % 4 == 3 {
        if !rt.marking {
            start_major(rt);
        } else if marked_all(rt) {
            collect(rt, Kind::Final);
        } else {
            slice(rt, SLICE_MIN_WORK);
        }
    } else {
        collect(rt, Kind::Minor);
    }
}

/// Starts an incremental major collection: clears the cycle's marks and
/// runs a minor collection that greys the old blocks it meets (the roots'
/// and the remembered and young blocks' old targets).
pub fn start_major(rt: &mut Rt) {
    rt.check_owner();
    if rt.stack_base == 0 || rt.in_gc {
        return;
    }
    if !rt.marking {
        for page in rt.heap.pages.iter_mut().filter(|p| p.in_use) {
            page.mmark = [0; 64];
        }
        rt.major_stack.clear();
        rt.major_ranges.clear();
        rt.cycle_promoted = 0;
        rt.mark_owed = 0;
        rt.slice_from = rt.heap.young_bytes;
        rt.marking = true;
        rt.grey_stack_next = true;
        rt.gc.cycles_started += 1;
    }
    collect(rt, Kind::Minor);
}

/// Sets when pacing next asks the collector in: the young budget, or,
/// while an incremental major collection marks, the next slice if sooner.
fn set_trigger(rt: &mut Rt) {
    let h = &mut rt.heap;
    h.trigger = if rt.stack_pending {
        // At the next slow allocation (see `step`).
        h.young_bytes
    } else if rt.marking {
        // Sooner while the marking owed passes a slice's (down to an
        // eighth of the interval): the slices catch up.
        rt.slice_from = h.young_bytes;
        let owed = rt.mark_owed / MARK_RATE;
        let gap = SLICE_BYTES.saturating_sub(owed).max(SLICE_BYTES / 8);
        h.young_budget.min(h.young_bytes.saturating_add(gap))
    } else {
        h.young_budget
    };
    h.stack_trigger = if rt.barriers_ok {
        let limit = match rt.barriers.limit() {
            0 => rt.stack_base,
            l => l,
        };
        limit
            .min(rt.gc_sp)
            .saturating_sub(crate::barrier::STACK_STEP)
    } else {
        0
    };
}

/// The write barrier: records that a pointer was (or is about to be, with
/// no allocation in between) stored into the block holding `addr`, an
/// existing block. Only an old pointer block needs recording; for a young
/// one (most of them: a builder or map just made) it costs a page-map read
/// and a mark-bit test. A set mark bit means an allocated block: a block
/// loses its mark when freed or swept, and is handed out with it clear.
#[inline(always)]
pub fn remember(rt: &mut Rt, addr: usize) {
    let id = rt.heap.map_get(addr);
    if id == 0 {
        return;
    }
    let id = id as usize - 1;
    let page = &rt.heap.pages[id];
    let i = page.index_of(addr);
    if Page::bit(&page.mark, i) {
        remember_old(rt, id, i);
    }
}

/// Puts the pointer block at `b` in the remembered set, if it is still
/// an allocated pointer block and not there yet.
fn remember_block(rt: &mut Rt, b: usize) {
    if let Some((id, i)) = rt.heap.lookup(b) {
        let page = &mut rt.heap.pages[id];
        if page.kind as usize == POINTER && !Page::bit(&page.remembered, i) {
            Page::set(&mut page.remembered, i);
            rt.remembered.push(page.block_addr(i));
        }
    }
}

/// The barrier's slow half: block `i` of page `id` is old.
#[inline(never)]
fn remember_old(rt: &mut Rt, id: usize, i: usize) {
    let page = &mut rt.heap.pages[id];
    if !Page::bit(&page.remembered, i) && page.kind as usize == POINTER {
        Page::set(&mut page.remembered, i);
        rt.remembered.push(page.block_addr(i));
    }
}

/// Collects now. Kept out of line: the stack scan starts at this frame,
/// so the frames of the collector proper (below it) are never scanned:
/// they hold words read from roots and blocks by an earlier collection,
/// stale copies that would keep garbage alive. The callee-saved registers
/// are spilled here and marked explicitly.
#[inline(never)]
pub fn collect(rt: &mut Rt, kind: Kind) {
    rt.check_owner();
    if rt.stack_base == 0 || rt.in_gc {
        return;
    }
    let kind = if kind == Kind::Final && !rt.marking {
        Kind::Minor
    } else {
        kind
    };
    let mut regs = [0usize; 12];
    spill_callee_saved(&mut regs);
    std::hint::black_box(&mut regs);
    let here = 0usize;
    let sp = std::hint::black_box(&here) as *const usize as usize & !7;
    collect_inner(rt, &regs, sp, kind);
    std::hint::black_box(&mut regs);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn spill_callee_saved(regs: &mut [usize; 12]) {
    // SAFETY: the asm only stores six registers into `regs[0..6]`, through
    // the pointer of a `&mut [usize; 12]` (exclusive, aligned, 96 bytes); it
    // reads registers without changing them, touches no stack and no flags.
    unsafe {
        std::arch::asm!(
            "mov [{0}], rbx",
            "mov [{0} + 8], rbp",
            "mov [{0} + 16], r12",
            "mov [{0} + 24], r13",
            "mov [{0} + 32], r14",
            "mov [{0} + 40], r15",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn spill_callee_saved(regs: &mut [usize; 12]) {
    // SAFETY: the asm only stores eleven registers into `regs[0..11]`,
    // through the pointer of a `&mut [usize; 12]` (exclusive, 8-byte aligned,
    // 96 bytes); it reads registers without changing them, touches no stack
    // and no flags.
    unsafe {
        std::arch::asm!(
            "stp x19, x20, [{0}]",
            "stp x21, x22, [{0}, #16]",
            "stp x23, x24, [{0}, #32]",
            "stp x25, x26, [{0}, #48]",
            "stp x27, x28, [{0}, #64]",
            "str x29, [{0}, #80]",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the Sspur collector spills callee-saved registers only on x86-64 and aarch64");

/// The marking state of one collection.
struct Marker {
    stack: Vec<(usize, usize)>,
    /// Check mode: quarantined blocks reached from the heap or a root.
    found: Vec<usize>,
    /// Pointer blocks a root points at that were young or remembered
    /// (remembered when the collection ends; see `note_held`).
    held: Vec<usize>,
    /// Bytes of young blocks marked (promoted) by a minor collection.
    promoted: usize,
    /// Bytes of remembered blocks a minor collection scanned.
    remembered_bytes: usize,
    /// Bytes of cards of large remembered blocks not read again.
    cards_skipped: usize,
    /// Bytes of marked pointer blocks scanned.
    scanned_bytes: usize,
    minor: bool,
    /// Check mode (quarantined blocks are marked and reported).
    check: bool,
    /// An incremental major collection is marking: old blocks this
    /// collection meets without the cycle's mark get it and go on `major`
    /// (grey), and the blocks it promotes get it too (they are scanned
    /// here, so black).
    grey: bool,
    /// Off while a remembered block's own words are read during a cycle:
    /// the old blocks they point at are not greyed one by one; the block
    /// itself goes back on the grey stack (`scan_remembered`).
    grey_old: bool,
    /// The final pause of an incremental major collection: it marks all
    /// that is left before it returns, so a large remembered block it
    /// reads greys what it points at rather than going back on the grey
    /// stack to be read a second time in the same pause.
    finishing: bool,
    major: Vec<(usize, usize)>,
    /// A step of a deep stack's reading (`step_stack`): the pointer blocks
    /// it promotes get `Page::stepped`.
    keep_promoted: bool,
    /// The root words being read are read again by the next minor
    /// collection (the stack below the innermost barrier, the registers):
    /// a large data block they reach may be kept young (`age_large`).
    age: bool,
    /// Large data blocks (page ids) those roots reached, decided once
    /// marking is done (`keep_aging`).
    aging: Vec<usize>,
    /// Bytes of stack read that the next minor collection reads again
    /// (not the words above the barriers put in now), for pacing.
    stack_reread: usize,
    /// Bytes of large remembered blocks read whole because they are new
    /// since the last collection: the next one reads them by cards.
    remembered_new: usize,
}

impl Marker {
    fn new(minor: bool, check: bool) -> Marker {
        Marker {
            stack: Vec::new(),
            found: Vec::new(),
            held: Vec::new(),
            promoted: 0,
            remembered_bytes: 0,
            cards_skipped: 0,
            scanned_bytes: 0,
            minor,
            check,
            grey: false,
            grey_old: true,
            major: Vec::new(),
            keep_promoted: false,
            age: false,
            aging: Vec::new(),
            stack_reread: 0,
            remembered_new: 0,
            finishing: false,
        }
    }
}

#[inline(never)]
fn collect_inner(rt: &mut Rt, regs: &[usize; 12], sp: usize, kind: Kind) {
    let start = Instant::now();
    let cpu_start = thread_cpu_time();
    rt.in_gc = true;
    crate::cells::renewed::new_epoch();
    if kind == Kind::Major {
        // A stop-the-world major collection ends any incremental one.
        rt.marking = false;
        rt.mark_owed = 0;
        rt.major_stack = Vec::new();
        rt.major_ranges = Vec::new();
        rt.grey_stack_next = false;
    }
    let minor = kind != Kind::Major;
    owe_marking(rt);
    lower_threshold(rt);
    let young_before = rt.heap.young_bytes;
    // A stop-the-world major collection reads the whole stack; others
    // skip the words above the innermost stack barrier (see `barrier`;
    // the start of an incremental cycle leaves them to its slices), and
    // may read a deep new stack in steps (`step_stack`) unless the nursery
    // already overran its budget twice.
    let full = kind == Kind::Major;
    let max_read = if full || rt.heap.young_bytes > rt.heap.young_budget.saturating_mul(2) {
        usize::MAX
    } else {
        STEP_BARRIERS.saturating_mul(rt.settings.gc_barrier_bytes)
    };
    rt.stack_pending = false;
    // Check mode: which blocks were old, for the barrier audit of a major.
    let was_old = if rt.mode == MemMode::Check && kind != Kind::Minor {
        Some(old_bitmaps(rt))
    } else {
        None
    };
    // A step sweeps nothing: what the end of a cycle or a major collection
    // prepares for the sweep of every page comes once the stack is read.
    prepare(
        rt,
        if kind == Kind::Major {
            kind
        } else {
            Kind::Minor
        },
    );
    let mut m = Marker::new(minor, rt.mode == MemMode::Check);
    m.grey = rt.marking;
    m.finishing = kind == Kind::Final;
    m.age = minor;
    m.major = std::mem::take(&mut rt.major_stack);
    rt.gc_sp = sp;
    let stack_bytes = match mark_roots_watermarked(rt, regs, sp, full, max_read, &mut m) {
        Ok(read) => read,
        Err(read) => return step_stack(rt, m, read, start, cpu_start),
    };
    if rt.stepped {
        // A pointer block an earlier step of this collection promoted that
        // the roots read now hold: code in those frames may have stored
        // young pointers into it since, without the barrier (it allocated
        // the block, young then). Marking stops at an old block: read it
        // again.
        for h in 0..m.held.len() {
            if let Some((id, i)) = rt.heap.lookup(m.held[h]) {
                let page = &rt.heap.pages[id];
                if Page::bit(&page.stepped, i) {
                    m.stack.push((page.block_addr(i), page.block_size));
                }
            }
        }
    }
    if kind == Kind::Final {
        prepare_sweep_all(rt);
    }
    m.age = false;
    if minor {
        // The remembered set: the only old blocks that may point at young
        // ones (see the module comment; the marking above does not enter an
        // old block the roots hold).
        for r in 0..rt.remembered.len() {
            scan_remembered(rt, rt.remembered[r], &mut m);
        }
    }
    drain(rt, &mut m);
    rt.major_stack = std::mem::take(&mut m.major);
    // Marked from here on, so check mode's audits see them kept.
    let kept = keep_aging(rt, &mut m);
    if kind == Kind::Final {
        // The rest of the cycle's marking: old blocks only (the young ones
        // this collection reached are promoted and black).
        let scanned = mark_old(rt, usize::MAX);
        m.scanned_bytes += scanned;
        if rt.mode == MemMode::Check {
            if let Some(was_old) = &was_old {
                verify_final(rt, regs, sp, was_old);
            }
        }
    } else if rt.mode == MemMode::Check {
        if let Some(was_old) = &was_old {
            audit_barrier(rt, was_old);
        }
        audit(rt, &mut m.found);
    }
    if m.grey {
        rt.cycle_promoted += m.promoted;
    }
    // The steps' promoted blocks were young for `note_held` until now.
    if std::mem::take(&mut rt.stepped) {
        for page in rt.heap.pages.iter_mut().filter(|p| p.in_use) {
            page.stepped = [0; crate::heap::BITMAP_WORDS];
        }
    }
    let freed = sweep(rt, kind);
    let mut kept_bytes = 0;
    for &id in &kept {
        let page = &mut rt.heap.pages[id];
        Page::clear(&mut page.mark, 0);
        page.aged = true;
        let size = page.block_size;
        kept_bytes += size;
        if kind == Kind::Final {
            // The sweep of every page counted it old.
            rt.heap.old_bytes -= size;
        }
        rt.heap.note_young(id);
    }
    if kind == Kind::Final {
        rt.marking = false;
        rt.mark_owed = 0;
        rt.major_stack = Vec::new();
        rt.major_ranges = Vec::new();
    } else if minor {
        rt.heap.old_bytes += m.promoted;
    }
    // The next cycle's remembered set: the pointer blocks the roots hold.
    for r in std::mem::take(&mut rt.remembered) {
        if let Some(id) = (rt.heap.map_get(r) as usize).checked_sub(1) {
            let page = &mut rt.heap.pages[id];
            let i = page.index_of(r);
            Page::clear(&mut page.remembered, i);
        }
    }
    for h in 0..m.held.len() {
        let b = m.held[h];
        let Some(id) = (rt.heap.map_get(b) as usize).checked_sub(1) else {
            continue;
        };
        let page = &mut rt.heap.pages[id];
        let i = page.index_of(b);
        if page.in_use && !Page::bit(&page.remembered, i) && Page::bit(&page.alloc, i) {
            Page::set(&mut page.remembered, i);
            rt.remembered.push(b);
        }
    }
    // Those the stack words above the barriers hold are not: their frames
    // run no code until the program returns through the barrier, and are
    // remembered then (`mark_roots_watermarked`).
    // Card checksums only of blocks still remembered; none after a
    // stop-the-world major collection.
    if kind == Kind::Major {
        rt.cards.clear();
    } else if !rt.cards.is_empty() {
        let keep: std::collections::BTreeSet<usize> = rt.remembered.iter().copied().collect();
        rt.cards.retain(|b, _| keep.contains(b));
    }
    // What every minor collection reads again, however few blocks are young
    // (a skipped card is read for its checksum). Not the frames read now
    // above the barriers put in them: the next one skips them (a deep
    // recursion's stack read once made the next nursery 8 times as large,
    // and its pause several times as long: cfold).
    // Nor a large remembered block new since the last collection, read
    // whole now and by its cards from then on.
    let reread = m.stack_reread + (m.remembered_bytes - m.remembered_new) + m.cards_skipped / 8;
    let found = Found {
        freed,
        promoted: m.promoted,
        kept: kept_bytes,
    };
    pace(rt, kind, young_before, found, reread);
    let pause = start.elapsed();
    let cpu = thread_cpu_time().saturating_sub(cpu_start);
    if rt.settings.gc_stats == crate::config::StatsMode::Log {
        log_collection(rt, kind, young_before, freed, &m, stack_bytes, pause, cpu);
    }
    set_trigger(rt);
    let g = &mut rt.gc;
    match kind {
        Kind::Minor => {
            g.minor += 1;
            g.longest_minor = g.longest_minor.max(pause);
        }
        Kind::Major => {
            g.major += 1;
            g.longest_major = g.longest_major.max(pause);
        }
        Kind::Final => {
            g.major += 1;
            g.longest_major = g.longest_major.max(pause);
            g.longest_final = g.longest_final.max(pause);
        }
    }
    g.cpu_total += cpu;
    g.cpu_longest = g.cpu_longest.max(cpu);
    g.promoted_bytes += m.promoted as u64;
    g.stack_bytes += stack_bytes as u64;
    g.remembered_bytes += m.remembered_bytes as u64;
    g.cards_skipped += m.cards_skipped as u64;
    g.scanned_bytes += m.scanned_bytes as u64;
    g.freed_bytes += freed as u64;
    g.total_pause += pause;
    g.longest_pause = g.longest_pause.max(pause);
    rt.collections += 1;
    rt.in_gc = false;
}

/// Marks from the roots as a collection does: the stack up to the
/// innermost stack barrier (all of it when `full`), and puts barriers in
/// the frames read (`barrier`'s module comment). Returns the stack bytes
/// read, as an error when it read only the outer part of a deep new stack: the
/// new words below the innermost barrier passed `max_read`, and it put in
/// and read only the barriers within `max_read` of it (a step; nothing
/// else is marked: not the frames below them, the registers or the
/// registered roots).
fn mark_roots_watermarked(
    rt: &mut Rt,
    regs: &[usize; 12],
    sp: usize,
    full: bool,
    max_read: usize,
    m: &mut Marker,
) -> Result<usize, usize> {
    let base = rt.stack_base;
    let grey_above = std::mem::take(&mut rt.grey_stack_next);
    // Which words the next minor collection reads again (`Marker::age`):
    // all of them without barriers; with them, not the words above the
    // barriers read now.
    let age = std::mem::take(&mut m.age);
    let table = if crate::barrier::trampoline() != 0 {
        crate::backtrace::table_for(sp)
    } else {
        None
    };
    rt.barriers_ok = table.is_some();
    let Some(t) = table else {
        m.age = age;
        mark_roots(rt, regs, sp, base, m);
        m.stack_reread = base - sp;
        return Ok(base - sp);
    };
    if rt.barriers.ceiling == 0 {
        rt.barriers.ceiling = crate::barrier::find_ceiling(t, sp, base);
        if rt.barriers.ceiling == 0 {
            m.age = age;
            mark_roots(rt, regs, sp, base, m);
            m.stack_reread = base - sp;
            return Ok(base - sp);
        }
    }
    let ceiling = rt.barriers.ceiling;
    let mut resumed = Vec::new();
    let limit = rt.barriers.sync(&mut resumed);
    // Frames the program returned into may store into what they held
    // (the old blocks: a young one they hold is noted held as they are
    // read now; a major collection cleared the marks and takes all).
    for b in resumed {
        if let Some((id, i)) = rt.heap.lookup(b) {
            if !m.minor || Page::bit(&rt.heap.pages[id].mark, i) {
                remember_block(rt, b);
            }
        }
    }
    if rt.mode == MemMode::Check {
        for (record, words) in rt.barriers.changed() {
            let msg = format!("sspur check: a suspended stack frame changed above a stack barrier (the record at {record:#x}, {words} words above it)");
            crate::out::write_stderr_raw(format!("{msg}\n").as_bytes());
            rt.reports.push(msg);
        }
    }
    // The words above the barriers when an incremental cycle starts: the
    // cycle's slices read them (`mark_old`), greying the old blocks they
    // point at. Their frames run no code until the program returns
    // through a barrier, and a collection reads again the frames it
    // returned into, greying too.
    if grey_above && limit < ceiling {
        rt.major_ranges.push((limit, ceiling));
    }
    // New barriers in the frames pushed since (all of them: a step reads
    // their words later without walking the frames again).
    let chosen = match t.unwind_record(sp) {
        Some((_, fp)) if rt.barriers.in_step() => crate::barrier::choose(
            &crate::barrier::candidates(t, fp, sp, limit),
            limit,
            rt.barriers.len(),
            rt.settings.gc_barrier_bytes,
        ),
        _ => Vec::new(),
    };
    for &c in &chosen {
        rt.barriers.install(c);
    }
    rt.gc.barriers += chosen.len() as u64;
    // The words above the barriers not read yet (new ones, and those an
    // earlier step left), outermost first, up to `max_read` in a step.
    let inner = chosen.last().map_or(limit, |c| c + 16);
    let mut read = 0;
    while let Some((k, lo, hi)) = rt.barriers.next_unread() {
        if read >= max_read {
            return Err(read);
        }
        let from = m.held.len();
        let held_from = rt.barriers.held.len();
        mark_stack(rt, lo, hi, m);
        read += hi - lo;
        // Kept with the barrier, remembered from there once the program
        // returns through it.
        rt.barriers.held.extend_from_slice(&m.held[from..]);
        m.held.truncate(from);
        let sum = if rt.mode == MemMode::Check {
            crate::barrier::checksum(lo, hi)
        } else {
            0
        };
        rt.barriers.set(k, held_from, sum);
    }
    m.age = age;
    mark_roots(rt, regs, sp, inner, m);
    read += inner - sp;
    if full && limit < ceiling {
        m.age = false;
        mark_stack(rt, limit, ceiling, m);
        m.age = age;
        read += ceiling - limit;
    } else {
        rt.gc.stack_skipped += (ceiling - limit) as u64;
    }
    mark_stack(rt, ceiling, base, m);
    m.age = false;
    m.stack_reread = (inner - sp) + (base - ceiling);
    Ok(read + (base - ceiling))
}

/// A step of a minor collection (or an incremental cycle's final pause)
/// that met a deep new stack: `mark_roots_watermarked` put barriers in its
/// outer part and marked from the words above them; this promotes what
/// they reach and returns to the program without sweeping. The next slow
/// allocation goes on (`step`), reading the stack only up to the new
/// barriers, until a step reads the rest and the collection completes.
///
/// Promoting early is sound as a minor collection's promotion is, with
/// one more thing to keep: the barrier rule's "held" blocks. Code in the
/// frames this step did not read may hold a young block it allocated,
/// which the words read reach too, and store young pointers into it
/// without the barrier; the step that reads those frames would see it
/// held but old, and marking would stop there. So the pointer blocks a
/// step promotes are marked `Page::stepped`, which `note_held` takes as
/// young until the collection completes, and the pause that completes it
/// reads again each one the roots it reads hold (`collect_inner`): what
/// was stored into it since the step is young and reached only through it.
fn step_stack(rt: &mut Rt, mut m: Marker, read: usize, start: Instant, cpu_start: Duration) {
    m.keep_promoted = true;
    // A step reads only words above barriers, which no later minor
    // collection reads again: nothing it reaches may stay young.
    for id in std::mem::take(&mut m.aging) {
        rt.heap.pages[id].age_pending = false;
        mark_block(rt, id, 0, &mut m, false);
    }
    drain(rt, &mut m);
    rt.major_stack = std::mem::take(&mut m.major);
    if m.grey {
        rt.cycle_promoted += m.promoted;
    }
    rt.heap.old_bytes += m.promoted;
    if rt.mode == MemMode::Check {
        audit(rt, &mut m.found);
    }
    rt.stepped = true;
    rt.stack_pending = true;
    set_trigger(rt);
    let pause = start.elapsed();
    let cpu = thread_cpu_time().saturating_sub(cpu_start);
    if rt.settings.gc_stats == crate::config::StatsMode::Log {
        let line = format!(
            "sspur gc: stack step {}: read stack {} B, promoted {} B, marked {} B; old {} B; pause {:.3} ms, cpu {:.3} ms\n",
            rt.collections + 1,
            read,
            m.promoted,
            m.scanned_bytes,
            rt.heap.old_bytes,
            pause.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3,
        );
        crate::out::write_stderr_raw(line.as_bytes());
    }
    let g = &mut rt.gc;
    g.stack_steps += 1;
    g.stack_bytes += read as u64;
    g.cpu_total += cpu;
    g.cpu_longest = g.cpu_longest.max(cpu);
    g.promoted_bytes += m.promoted as u64;
    g.scanned_bytes += m.scanned_bytes as u64;
    g.total_pause += pause;
    g.longest_pause = g.longest_pause.max(pause);
    g.longest_minor = g.longest_minor.max(pause);
    rt.collections += 1;
    rt.in_gc = false;
}

/// Marks from the roots: the spilled registers, the stack from `sp` (in
/// `collect`'s frame) to `top`, and the registered roots.
fn mark_roots(rt: &mut Rt, regs: &[usize; 12], sp: usize, top: usize, m: &mut Marker) {
    // The stack: dead words may point at quarantined blocks: not reported.
    for &w in regs {
        mark_root_word(rt, w, m);
    }
    mark_stack(rt, sp, top, m);
    for i in 0..rt.roots.len() {
        // SAFETY: `add_root`'s contract: a registered word stays readable
        // for the rest of the run; it is a `*const usize`, so aligned.
        let w = unsafe { *rt.roots[i] };
        if w >= rt.heap.lo && w <= rt.heap.hi {
            if let Some((id, i)) = rt.heap.lookup(w) {
                note_held(rt, id, i, m);
                mark_block(rt, id, i, m, true);
            }
        }
    }
}

/// Marks from the stack words in `lo..hi` (between `collect`'s frame and
/// the stack base).
fn mark_stack(rt: &mut Rt, lo: usize, hi: usize, m: &mut Marker) {
    if hi <= lo {
        return;
    }
    valgrind_make_defined(lo, hi - lo);
    let (hlo, hhi) = (rt.heap.lo, rt.heap.hi);
    let mut a = lo;
    while a + 8 <= hi {
        // SAFETY: `collect` checked that this is the owner thread, whose
        // stack base `init` recorded, and `sp` is an 8-aligned address in
        // `collect`'s frame on that stack; every word from there up to the
        // base belongs to a live frame of this thread and is mapped. We only
        // read it as an integer. (A conservative scan also reads padding and
        // dead slots, which the Rust abstract machine calls uninitialised;
        // the words are plain machine words here and are only compared.)
        let w = unsafe { *(a as *const usize) };
        a += 8;
        // Most stack words are no heap address (return addresses, frame
        // pointers, integers): filtered here without a call. A word at a
        // page's start may be the end of a block of the page before it.
        if w < hlo
            || w > hhi
            || (rt.heap.map_get(w) == 0
                && (w & (crate::heap::PAGE_SIZE - 1) != 0 || rt.heap.map_get(w - 1) == 0))
        {
            continue;
        }
        mark_root_word(rt, w, m);
    }
}

/// `SSPUR_GC_STATS=log`: one line per collection, on stderr as it ends.
#[allow(clippy::too_many_arguments)]
fn log_collection(
    rt: &Rt,
    kind: Kind,
    young_before: usize,
    freed: usize,
    m: &Marker,
    stack_bytes: usize,
    pause: Duration,
    cpu: Duration,
) {
    let line = format!(
        "sspur gc: {} {}: young {} B, promoted {} B, freed {} B, read stack {} B, remembered {} B, marked {} B; old {} B, next young budget {} B; pause {:.3} ms, cpu {:.3} ms\n",
        match kind {
            Kind::Minor if m.grey => "minor (marking)",
            Kind::Minor => "minor",
            Kind::Major => "major",
            Kind::Final => "final",
        },
        rt.collections + 1,
        young_before,
        m.promoted,
        freed,
        stack_bytes,
        m.remembered_bytes,
        m.scanned_bytes,
        rt.heap.old_bytes,
        rt.heap.young_budget,
        pause.as_secs_f64() * 1e3,
        cpu.as_secs_f64() * 1e3,
    );
    crate::out::write_stderr_raw(line.as_bytes());
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live local the call writes; the clock id is a
    // constant every Linux kernel supports (on failure `ts` stays zero).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Most doublings of the young budget after minor collections that found
/// little garbage (see `pace`): 8x `SSPUR_GC_YOUNG_MB`.
const MAX_IDLE_DOUBLINGS: u32 = 3;

/// The largest nursery, in multiples of `SSPUR_GC_YOUNG_MB` (16 MB by
/// default): where nearly everything survives, a minor collection's pause
/// is about 0.3 to 0.5 ms per MB of nursery.
const MAX_NURSERY: usize = 8;

/// Bytes of young allocation per byte every minor collection reads again
/// (the stack and the remembered blocks): the next nursery is at least
/// this many times what the last minor collection read so.
const WORK_RATIO: usize = 8;

/// What a collection found of the young bytes, in bytes.
struct Found {
    freed: usize,
    promoted: usize,
    /// Large data blocks found live and kept young (`keep_aging`).
    kept: usize,
}

/// Sets the next collection's budgets from what this one found.
///
/// Minor: the young budget is `SSPUR_GC_YOUNG_MB` scaled by the survival
/// rate (1x when nothing survived, up to 4x when everything did): when
/// most young blocks live, a bigger nursery lets more of them die before
/// they are promoted; this grows past `SSPUR_GC_YOUNG_MB` only up to half
/// the old generation, so a small live set keeps a small nursery, and up
/// to the old generation's headroom below the major threshold. Two
/// things raise it further, since a collection that costs much or finds
/// little is better made rarer:
/// - its fixed work: the nursery is at least `WORK_RATIO` times the bytes the minor collection read
///   whatever the nursery held and the next one reads again (the stack
///   below the barriers, the remembered blocks but new large ones), so
///   a deep stack or a large list held across collections, read again by
///   each one, costs a bounded share of the run (the promoted blocks are
///   read once each, however often minor collections come); this grows
///   past `SSPUR_GC_YOUNG_MB` only up to a quarter of the old generation
///   (the memory a rarer collection costs is bounded by the live set);
/// - its yield: one that neither freed nor promoted an eighth of the
///   young bytes was spent in vain (they were freed at their last use;
///   large blocks it kept young were found live);
///   the budget doubles after each such one in a row, up to 8x, since a
///   collection that finds no garbage also leaves none to grow the heap;
///   one that finds garbage again starts over.
///
/// Major: the old generation may grow to max(live + `SSPUR_GC_MIN_MB`,
/// `SSPUR_GC_FACTOR` x live) before the next one. The floor bounds a
/// major collection's fixed costs (its pauses, the sweep of every page) by
/// the bytes promoted between two of them, which is growth above the live
/// set, not the old generation's size: a fixed size let a program whose
/// live set is near it promote and keep up to that much garbage again
/// before each major collection (pushes under `SSPUR_MEM=gc`: 1 MB live,
/// 5 MB of old garbage at each major collection).
fn pace(rt: &mut Rt, kind: Kind, young_before: usize, found: Found, reread: usize) {
    let Found {
        freed,
        promoted,
        kept,
    } = found;
    let base = rt.settings.gc_young_bytes;
    let survival = if young_before == 0 {
        0.0
    } else {
        (promoted as f64 / young_before as f64).min(1.0)
    };
    if kind != Kind::Minor {
        // The end of an incremental cycle keeps what its minor collections
        // promoted without asking whether it still lives (young data that
        // died during the cycle): those bytes count once, not factor times.
        let unproven = if kind == Kind::Final {
            std::mem::take(&mut rt.cycle_promoted).min(rt.heap.old_bytes)
        } else {
            0
        };
        let proven = rt.heap.old_bytes - unproven;
        rt.major_threshold = major_threshold_for(rt, proven, unproven);
        rt.live_after_gc = rt.heap.old_bytes;
        rt.gc.max_live_bytes = rt.gc.max_live_bytes.max(rt.heap.old_bytes as u64);
    }
    let minor = kind == Kind::Minor;
    let scale = if minor { 1.0 + 3.0 * survival } else { 1.0 };
    // Large data blocks kept young (aging) were found live, not freed at
    // their last use: growing buffers that die young, and a doubled
    // nursery only held more of them (`SSPUR_MEM=gc` pushes: 3.1x Rust's
    // peak RSS).
    if minor && freed + promoted + kept < young_before / 8 {
        rt.idle_doublings = (rt.idle_doublings + 1).min(MAX_IDLE_DOUBLINGS);
    } else {
        rt.idle_doublings = 0;
    }
    // A nursery grown for its survivors stays within the old generation's
    // headroom below the major threshold (but at least the base budget):
    // what survives it is promoted, so past that it only raised the peak
    // (old plus young) above where the threshold puts it (`SSPUR_MEM=gc`
    // trees: 2.7x Rust's peak RSS, the nursery at 3.5x the base budget
    // with the old generation near its threshold).
    let headroom = rt.major_threshold.saturating_sub(rt.heap.old_bytes);
    let cap = base.max((rt.heap.old_bytes / 2).min(headroom));
    let by_survival = (((base as f64) * scale) as usize).min(cap);
    let by_work = if minor {
        reread
            .saturating_mul(WORK_RATIO)
            .min(base.max(rt.heap.old_bytes / 4))
    } else {
        0
    };
    // However it grew, a nursery stays within `MAX_NURSERY` times
    // `SSPUR_GC_YOUNG_MB`: a minor collection's pause follows what
    // survives it, and with most of a large nursery surviving (a program
    // building a structure it keeps) that pause grows with the nursery.
    rt.heap.young_budget = by_survival
        .max(by_work)
        .max(base << rt.idle_doublings)
        .min(base * MAX_NURSERY);
    rt.heap.young_bytes = 0;
    rt.heap.want_major = false;
    rt.heap.trim_retained();
}

/// Makes the bits exact: records pending bump ranges and moves every free
/// list into the page free bits (so a freed block is never marked or handed
/// out twice). A major collection also clears the marks (everything is
/// young again until marked) and forgets the partial lists it rebuilds.
fn prepare(rt: &mut Rt, kind: Kind) {
    let h = &mut rt.heap;
    for k in 0..2 * NUM_CLASSES {
        h.flush_cursor(k);
        h.flush_bits(k);
        let mut f = h.classes[k].free;
        while f != 0 {
            let id = h.map_get(f) as usize - 1;
            let page = &mut h.pages[id];
            let i = page.index_of(f);
            Page::clear(&mut page.alloc, i);
            // SAFETY: `f` is a non-zero free-list entry, the base of a free
            // block of an in-use page (heap invariant, see `Heap::pop_free`);
            // its first word is the aligned link to the next entry.
            f = unsafe { *(f as *const usize) };
        }
        h.classes[k].free = 0;
        // The sweep may release the page being carved; it puts the page
        // back on the partial list if it still has free blocks.
        h.classes[k].carve = 0;
    }
    if kind == Kind::Major {
        // A major collection marks everything again.
        for page in h.pages.iter_mut().filter(|p| p.in_use) {
            page.mark = [0; 64];
        }
        prepare_sweep_all(rt);
    }
}

/// Before the sweep of every page (a major collection, the end of an
/// incremental one, which keeps the marks: old, and the cycle's): the
/// partial lists are rebuilt from scratch.
fn prepare_sweep_all(rt: &mut Rt) {
    let h = &mut rt.heap;
    for k in 0..2 * NUM_CLASSES {
        h.partial[k].clear();
    }
    for page in h.pages.iter_mut().filter(|p| p.in_use) {
        page.in_partial = false;
    }
}

/// Check mode: each in-use page's mark bits before a major collection
/// clears them (the old blocks), by page id.
fn old_bitmaps(rt: &Rt) -> Vec<Option<Box<[u64; 64]>>> {
    rt.heap
        .pages
        .iter()
        .map(|p| p.in_use.then(|| Box::new(p.mark)))
        .collect()
}

/// Records a pointer block a root points at, to be remembered when the
/// collection ends, if code holding it may store into it without the
/// barrier: it is young (unmarked in a minor collection, before
/// `mark_block`; on a young page in a major one, whose marks are cleared)
/// or already remembered. Called before the block is marked.
#[inline(always)]
fn note_held(rt: &Rt, id: usize, i: usize, m: &mut Marker) {
    let page = &rt.heap.pages[id];
    if page.kind as usize != POINTER {
        return;
    }
    let young = if m.minor {
        !Page::bit(&page.mark, i)
    } else {
        page.young
    } || Page::bit(&page.stepped, i);
    if young || Page::bit(&page.remembered, i) {
        // Neighbouring stack words often hold the same block.
        let b = page.block_addr(i);
        if m.held.last() != Some(&b) {
            m.held.push(b);
        }
    }
}

/// Marks the block a stack or register word points into, and the block it
/// is one past the end of: compiled code may hold a derived end pointer (a
/// loop cursor past the last element) only in a register or stack slot.
/// A word inside a marked block (not at its start, so the block before it
/// is not in question) ends at the mark bit, as in `mark_word`; the block
/// is still noted as held.
#[inline(always)]
fn mark_root_word(rt: &mut Rt, w: usize, m: &mut Marker) {
    if w < rt.heap.lo || w > rt.heap.hi {
        return;
    }
    let id = rt.heap.map_get(w);
    if id != 0 && !m.check {
        let id = id as usize - 1;
        let page = &rt.heap.pages[id];
        let i = page.index_of(w);
        if Page::bit(&page.mark, i) {
            if w != page.block_addr(i) {
                note_held(rt, id, i, m);
                if m.grey {
                    grey(rt, id, i, m);
                }
                return;
            }
            // At a block's start: also the end of the block before it,
            // marked too (so allocated) in the common case of a run of
            // old blocks.
            if i > 0 && Page::bit(&page.mark, i - 1) {
                note_held(rt, id, i, m);
                note_held(rt, id, i - 1, m);
                if m.grey {
                    grey(rt, id, i, m);
                    grey(rt, id, i - 1, m);
                }
                return;
            }
        }
    }
    // Dead stack words may point at quarantined blocks: not reported.
    if let Some((id, i)) = rt.heap.lookup(w) {
        note_held(rt, id, i, m);
        mark_root_block(rt, id, i, m);
    }
    if w > 0 {
        // The same word is just as likely the start of the next block, so a
        // freed block reached only this way is kept but not reported.
        if let Some((id, i)) = rt.heap.lookup(w - 1) {
            let p = &rt.heap.pages[id];
            if p.block_addr(i) + p.block_size == w {
                note_held(rt, id, i, m);
                mark_root_block(rt, id, i, m);
            }
        }
    }
}

/// Marks the block a heap word points into. No end pointer is ever stored
/// (an empty view is `(0, 0)`), and applying the end rule here would let
/// every block that points at its neighbour keep the one allocated before
/// it alive, chaining through whole structures.
///
/// Most words that point into the heap point at a marked block (old in a
/// minor collection, or reached before): a set mark bit is tested first
/// and ends it, except in check mode, where a marked block may be a
/// quarantined one reached again from the heap, which is evidence.
#[inline]
fn mark_word(rt: &mut Rt, w: usize, m: &mut Marker) {
    if w < rt.heap.lo || w > rt.heap.hi {
        return;
    }
    let id = rt.heap.map_get(w);
    if id == 0 {
        return;
    }
    let id = id as usize - 1;
    let i = rt.heap.pages[id].index_of(w);
    if !m.check && Page::bit(&rt.heap.pages[id].mark, i) {
        if m.grey && m.grey_old {
            grey(rt, id, i, m);
        }
        return;
    }
    if rt.heap.allocated(id, i) {
        mark_block(rt, id, i, m, true);
    }
}

/// Marks block `i` of page `id`, reached from a stack or register word
/// (not reported if quarantined), except that a young large data block
/// the next minor collection will find again through the same words
/// (`Marker::age`) is only noted: `keep_aging` decides it once marking is
/// done.
#[inline]
fn mark_root_block(rt: &mut Rt, id: usize, i: usize, m: &mut Marker) {
    let page = &mut rt.heap.pages[id];
    if m.age
        && page.class == LARGE
        && page.kind as usize == DATA
        && !page.aged
        && !Page::bit(&page.mark, i)
        && !Page::bit(&page.quarantine, i)
    {
        if !page.age_pending {
            page.age_pending = true;
            m.aging.push(id);
        }
        return;
    }
    mark_block(rt, id, i, m, false);
}

/// Aging of large data blocks (a list's or builder's buffer, a long
/// string): a growing buffer is live at the minor collection that comes
/// while it grows and dies at its next growth, so promoting it at its first
/// survival filled the old generation with buffers that died old, kept
/// until the next major collection (`SSPUR_MEM=gc` pushes: half its old
/// generation). A minor collection keeps young, for one more minor
/// collection, a large data block it found live only through roots that
/// the next minor collection reads again (the stack below the innermost
/// barrier, the registers): unmarked after this sweep, it is reached
/// again through them, or through a block that this collection or the
/// next one scans, as long as it lives. Nothing old points at it: a
/// pointer block this collection scanned and that points at it marked it
/// (promoted), and an old block that comes to point at it later does so
/// through the barrier rule, as at any young block. The card checksums stay
/// sound for the same reason: a card that pointed at it was read, and
/// promoted it. A block kept young once is promoted the next time it is
/// found live. Data blocks hold no pointers, so nothing is reached through
/// them. Returns the page ids kept, marked for the sweep (the caller
/// clears the marks after it).
fn keep_aging(rt: &mut Rt, m: &mut Marker) -> Vec<usize> {
    let mut kept = Vec::new();
    for id in std::mem::take(&mut m.aging) {
        let page = &mut rt.heap.pages[id];
        page.age_pending = false;
        if !Page::bit(&page.mark, 0) {
            // The end of an incremental cycle keeps what both bitmaps mark.
            Page::set(&mut page.mark, 0);
            Page::set(&mut page.mmark, 0);
            kept.push(id);
        }
    }
    kept
}

/// Marks block `i` of page `id`; `report` says a quarantined block reached
/// this way is evidence (a heap word or registered root, not the stack).
#[inline]
fn mark_block(rt: &mut Rt, id: usize, i: usize, m: &mut Marker, report: bool) {
    let page = &mut rt.heap.pages[id];
    // Only check mode quarantines blocks.
    if m.check && Page::bit(&page.quarantine, i) {
        // Reported when reached from the heap or a root, even if the
        // stack reached it first.
        Page::set(&mut page.mark, i);
        if report {
            m.found.push(page.block_addr(i));
        }
        return;
    }
    if Page::bit(&page.mark, i) {
        // Marked in this collection, or old in a minor one: its children
        // are marked or old, or it is remembered.
        if m.grey {
            grey(rt, id, i, m);
        }
        return;
    }
    Page::set(&mut page.mark, i);
    if m.grey {
        // Promoted during an incremental major collection: scanned here,
        // so black (its old children are greyed as the scan meets them).
        Page::set(&mut page.mmark, i);
    }
    if m.minor {
        m.promoted += page.block_size;
    }
    if page.kind as usize == POINTER {
        m.stack.push((page.block_addr(i), page.block_size));
    }
}

/// An old block (its mark bit set) that a collection met while an
/// incremental major collection marks: gets the cycle's mark and, a
/// pointer block, goes on the cycle's grey stack.
#[inline(never)]
fn grey(rt: &mut Rt, id: usize, i: usize, m: &mut Marker) {
    let page = &mut rt.heap.pages[id];
    if Page::bit(&page.mmark, i) {
        return;
    }
    Page::set(&mut page.mmark, i);
    if page.kind as usize == POINTER {
        m.major.push((page.block_addr(i), 0));
    }
}

/// The incremental major collection's marking: pops grey blocks off
/// `rt.major_stack` and scans them until `budget` bytes are scanned (a
/// large block is scanned in pieces of whole cards), giving the
/// cycle's mark to the old blocks they point into and pushing the pointer
/// blocks among them. Young blocks are left to the minor collections (the
/// final one included): each scans the young blocks it reaches and greys
/// their old targets. A grey entry is looked up again, since the program
/// may have freed the block since (no longer marked: skipped) and a sweep
/// released its page. Returns the bytes scanned.
fn mark_old(rt: &mut Rt, budget: usize) -> usize {
    let (lo, hi) = (rt.heap.lo, rt.heap.hi);
    let mut work = 0usize;
    // The stack ranges first: their old targets go on the grey stack.
    while let Some((rlo, rhi)) = rt.major_ranges.pop() {
        let end = if rhi - rlo > budget.saturating_sub(work).max(4096) {
            let end = rlo + budget.saturating_sub(work).max(4096);
            rt.major_ranges.push((end, rhi));
            end
        } else {
            rhi
        };
        work += end - rlo;
        valgrind_make_defined(rlo, end - rlo);
        let mut a = rlo;
        while a + 8 <= end {
            // SAFETY: the range lies between the program thread's stack
            // pointer when the cycle started and its base (the words above
            // a barrier then), mapped for the whole run; the program is
            // stopped in the collector. Read as an integer only.
            let w = unsafe { *(a as *const usize) };
            a += 8;
            if w >= lo && w <= hi {
                grey_stack_word(rt, w);
            }
        }
        if work >= budget {
            return work;
        }
    }
    while let Some((b, from)) = rt.major_stack.pop() {
        let id = rt.heap.map_get(b);
        if id == 0 {
            continue;
        }
        let id = id as usize - 1;
        let page = &rt.heap.pages[id];
        if !page.in_use || page.cached || page.kind as usize != POINTER {
            continue;
        }
        let i = page.index_of(b);
        if i >= page.nblocks || !Page::bit(&page.mark, i) {
            continue;
        }
        let base = page.block_addr(i);
        let len = page.block_size;
        let large = page.class == LARGE;
        let start = base + from.min(len);
        // Pieces end at card boundaries (a large block's base is one).
        let end = if len - from.min(len) > budget.saturating_sub(work).max(CARD) {
            let end = (start + budget.saturating_sub(work).max(CARD)).next_multiple_of(CARD);
            rt.major_stack.push((base, end - base));
            end
        } else {
            base + len
        };
        work += end - start;
        if large {
            forget_changed_cards(&mut rt.cards, base, start, end);
        }
        let mut a = start;
        while a + 8 <= end {
            // SAFETY: block `i` of in-use pointer page `id` is allocated (its
            // mark bit is set, which only allocated blocks carry), so
            // `base..base + len` is mapped and `start..end` lies inside it;
            // the program is stopped in the collector. Words are 8-aligned.
            let w = unsafe { *(a as *const usize) };
            a += 8;
            if w < lo || w > hi {
                continue;
            }
            let tid = rt.heap.map_get(w);
            if tid == 0 {
                continue;
            }
            let t = &mut rt.heap.pages[tid as usize - 1];
            let ti = t.index_of(w);
            if Page::bit(&t.mark, ti) && !Page::bit(&t.mmark, ti) {
                Page::set(&mut t.mmark, ti);
                if t.kind as usize == POINTER {
                    rt.major_stack.push((t.block_addr(ti), 0));
                }
            }
        }
        if work >= budget {
            break;
        }
    }
    work
}

/// A mark slice reads `start..end` (whole cards) of the large block at
/// `base`: the cards whose words are not the ones a minor collection last
/// read (their checksum, kept in `cards`) lose their checksum, so the next
/// minor collection reads them (greying what they point at) even if they
/// are changed back to those words by then. A minor collection skips a
/// card during a cycle because what it points at was greyed by the cycle
/// or will be: read by the minor collection that kept the checksum
/// (greying), or by the slices, which read the block after it (or have
/// yet to). A slice that read other words greyed other blocks: the ones
/// the checksum's words point at may have been held meanwhile only where
/// no collection looks (a young block, or a root between two pauses), and
/// be back in the card when the next minor collection finds the checksum
/// it kept.
fn forget_changed_cards(
    cards: &mut std::collections::BTreeMap<usize, Box<[Option<u64>]>>,
    base: usize,
    start: usize,
    end: usize,
) {
    let Some(sums) = cards.get_mut(&base) else {
        return;
    };
    let mut lo = start;
    while lo < end {
        let hi = (lo + CARD).min(end);
        let c = (lo - base) / CARD;
        if let Some(sum) = sums.get_mut(c) {
            if sum.is_some() && *sum != Some(crate::barrier::checksum(lo, hi)) {
                *sum = None;
            }
        }
        lo = hi;
    }
}

/// Greys the old block a stack word points into, and the one it is one
/// past the end of (as `mark_root_word` marks them).
fn grey_stack_word(rt: &mut Rt, w: usize) {
    for a in [w, w.wrapping_sub(1)] {
        let id = rt.heap.map_get(a);
        if id == 0 {
            continue;
        }
        let t = &mut rt.heap.pages[id as usize - 1];
        let i = t.index_of(a);
        if i >= t.nblocks || (a != w && t.block_addr(i) + t.block_size != w) {
            continue;
        }
        // A set mark bit means an allocated, old block.
        if Page::bit(&t.mark, i) && !Page::bit(&t.mmark, i) {
            Page::set(&mut t.mmark, i);
            if t.kind as usize == POINTER {
                rt.major_stack.push((t.block_addr(i), 0));
            }
        }
    }
}

/// One mark slice of an incremental major collection: a short pause that
/// scans about `work` bytes of grey old blocks (no stack scan, no sweep).
pub fn slice(rt: &mut Rt, work: usize) {
    rt.check_owner();
    if !rt.marking || rt.in_gc {
        return;
    }
    let start = Instant::now();
    let cpu_start = thread_cpu_time();
    rt.in_gc = true;
    crate::cells::renewed::new_epoch();
    let scanned = mark_old(rt, work);
    rt.mark_owed = rt.mark_owed.saturating_sub(scanned);
    set_trigger(rt);
    let pause = start.elapsed();
    let cpu = thread_cpu_time().saturating_sub(cpu_start);
    let g = &mut rt.gc;
    g.slices += 1;
    g.longest_slice = g.longest_slice.max(pause);
    g.largest_slice = g.largest_slice.max(scanned as u64);
    g.scanned_bytes += scanned as u64;
    g.cpu_total += cpu;
    g.cpu_longest = g.cpu_longest.max(cpu);
    g.total_pause += pause;
    g.longest_pause = g.longest_pause.max(pause);
    if rt.settings.gc_stats == crate::config::StatsMode::Log {
        let line = format!(
            "sspur gc: slice {}: marked {} B, grey left {}; old {} B; pause {:.3} ms, cpu {:.3} ms\n",
            rt.gc.slices,
            scanned,
            rt.major_stack.len(),
            rt.heap.old_bytes,
            pause.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3,
        );
        crate::out::write_stderr_raw(line.as_bytes());
    }
    rt.in_gc = false;
}

/// Scans the pointer blocks on the mark stack until it is empty.
fn drain(rt: &mut Rt, m: &mut Marker) {
    while let Some((b, len)) = m.stack.pop() {
        if m.keep_promoted {
            // A minor collection pushes only the young blocks it promotes.
            if let Some(id) = (rt.heap.map_get(b) as usize).checked_sub(1) {
                let page = &mut rt.heap.pages[id];
                let i = page.index_of(b);
                Page::set(&mut page.stepped, i);
            }
        }
        m.scanned_bytes += len;
        scan(rt, b, len, m);
    }
}

fn scan(rt: &mut Rt, b: usize, len: usize, m: &mut Marker) {
    // The heap's bounds do not change while marking (no page is mapped).
    let (lo, hi) = (rt.heap.lo, rt.heap.hi);
    let mut a = b;
    while a + 8 <= b + len {
        // SAFETY: `(b, len)` is an allocated pointer block of an in-use page
        // (pushed by `mark_block` or checked by `scan_remembered` through
        // `lookup`), so `b..b + len` is mapped, and nothing frees or releases
        // pages during marking; `b` is 16-aligned and `a` steps by 8 inside it.
        let w = unsafe { *(a as *const usize) };
        a += 8;
        if w < lo || w > hi {
            continue;
        }
        mark_word(rt, w, m);
    }
}

/// The cards of a large remembered block: a minor collection reads again
/// only the cards whose words changed since it last read them.
pub const CARD: usize = 4096;

/// A minor collection scans a remembered block that is still an allocated,
/// unquarantined pointer block (a block freed since it was remembered is
/// skipped; one freed and handed out again is young and scanned anyway).
///
/// A large block (a long list held while it grows, a big map's entries)
/// is read again card by card: a card whose checksum is the one it had
/// when a minor collection last scanned it is skipped. Its words are those
/// it had then, and every block they point at was marked then, so is old
/// now (a minor collection frees no old block; a block freed at its last
/// use has no live reference left). This holds whoever wrote the block and
/// whether the write went through the barrier. The checksums are kept only
/// for a block whose page has been the same block since the last
/// collection (not young), are dropped when the block leaves the
/// remembered set, and are forgotten at a stop-the-world major collection.
/// While an incremental major collection marks, a skipped card needs no
/// greying either: its words are those the cycle reads when it scans the
/// block itself (if it is reachable), and a card written since its last
/// minor collection, before or after the cycle blackened the block, has
/// another checksum and is read again, greying what it points at. A mark
/// slice that read other words than a card's checksum's forgets it
/// (`forget_changed_cards`): changed back since, the card would be
/// skipped with the blocks it points at again never greyed.
fn scan_remembered(rt: &mut Rt, base: usize, m: &mut Marker) {
    let Some((id, i)) = rt.heap.lookup(base) else {
        return;
    };
    let page = &rt.heap.pages[id];
    if page.kind as usize != POINTER || Page::bit(&page.quarantine, i) {
        return;
    }
    let (b, len) = (page.block_addr(i), page.block_size);
    let large = page.class == LARGE;
    let n = len.div_ceil(CARD);
    // A large block's card checksums, when it has been this block since
    // the last collection.
    let prev = if large && !page.young {
        rt.cards.remove(&b).filter(|s| s.len() == n)
    } else {
        rt.cards.remove(&b);
        None
    };
    let regrey = m.grey && !m.finishing && large && prev.is_none() && Page::bit(&page.mark, i);
    if regrey {
        // While a major collection marks, a large block read whole goes
        // (back) on the grey stack, so the cycle reads it in its slices and
        // marks the old blocks it points at; this pause only promotes its
        // young targets. Greying them one by one here made the pause follow
        // the block's size (a list of a million old cells held while it
        // grows). Not in the final pause, which marks everything left
        // before it returns: there the block would be read twice, and its
        // targets greyed as it is read cost the same pause once (bench/
        // strings, default mode: an 8 MB list of views read twice by each
        // final pause, 5% of the run's instructions). A block read by changed cards greys what those point at
        // (the unchanged ones need nothing, see above), and a small block's
        // old targets are greyed as it is read (pushing each of a million
        // small remembered blocks again would grow the grey stack by as
        // much at every minor collection of the cycle).
        let page = &mut rt.heap.pages[id];
        Page::set(&mut page.mmark, i);
        m.major.push((b, 0));
    }
    if !large || rt.heap.pages[id].young {
        m.remembered_bytes += len;
        if large {
            m.remembered_new += len;
        }
        m.grey_old = !regrey;
        scan(rt, b, len, m);
        m.grey_old = true;
        drain(rt, m);
        return;
    }
    let mut sums = prev.unwrap_or_else(|| vec![None; n].into_boxed_slice());
    for (c, sum) in sums.iter_mut().enumerate() {
        let lo = b + c * CARD;
        let hi = (lo + CARD).min(b + len);
        let now = crate::barrier::checksum(lo, hi);
        if *sum == Some(now) {
            m.cards_skipped += hi - lo;
            if m.check {
                check_card(rt, lo, hi);
            }
            continue;
        }
        m.remembered_bytes += hi - lo;
        m.grey_old = !regrey;
        scan(rt, lo, hi - lo, m);
        m.grey_old = true;
        drain(rt, m);
        *sum = Some(now);
    }
    rt.cards.insert(b, sums);
}

/// Check mode: a card skipped as unchanged points at no young block (it
/// would be freed). Freed blocks are quarantined in check mode, never
/// handed out again, so every block it points at is still marked.
fn check_card(rt: &mut Rt, lo: usize, hi: usize) {
    let young: Vec<(usize, usize)> = targets(rt, lo, hi)
        .filter(|&(id, i)| {
            let page = &rt.heap.pages[id];
            !Page::bit(&page.mark, i) && !Page::bit(&page.quarantine, i)
        })
        .collect();
    for (id, i) in young {
        let msg = format!(
            "sspur check: a card of a remembered block was skipped as unchanged but points at a young {}",
            describe(rt, id, i)
        );
        crate::out::write_stderr_raw(format!("{msg}\n").as_bytes());
        rt.reports.push(msg);
    }
}

/// The allocated blocks (page id, index) the words of `lo..hi`, a range of
/// an allocated pointer block, point into (check mode).
fn targets(rt: &Rt, lo: usize, hi: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    (lo..hi).step_by(8).filter_map(move |a| {
        if a + 8 > hi {
            return None;
        }
        // SAFETY: `lo..hi` lies in an allocated pointer block of an in-use
        // page (the callers' contract: marked or looked-up blocks), so it
        // is mapped; the program is stopped in the collector.
        let w = unsafe { *(a as *const usize) };
        if w < rt.heap.lo || w > rt.heap.hi {
            return None;
        }
        rt.heap.lookup(w)
    })
}

/// Check mode, at a major collection: an old block still reachable that
/// points at a young block without being in the remembered set means a
/// store skipped the write barrier; a minor collection would have freed
/// the young block under it.
fn audit_barrier(rt: &mut Rt, was_old: &[Option<Box<[u64; 64]>>]) {
    let old = |id: usize, i: usize| {
        was_old
            .get(id)
            .and_then(|b| b.as_ref())
            .is_some_and(|b| Page::bit(b, i))
    };
    let mut msgs = Vec::new();
    for (id, i) in blocks(rt) {
        let page = &rt.heap.pages[id];
        if page.kind as usize != POINTER
            || !old(id, i)
            || !Page::bit(&page.mark, i)
            || Page::bit(&page.remembered, i)
            || Page::bit(&page.quarantine, i)
        {
            continue;
        }
        msgs.extend(edge_report(rt, id, i, |t, ti| !old(t, ti), |a, b| {
            format!("sspur check: an old {a} points at a young {b} but was not remembered (a missing write barrier)")
        }));
    }
    for msg in msgs {
        crate::out::write_stderr_raw(format!("{msg}\n").as_bytes());
        rt.reports.push(msg);
    }
}

/// Every block slot (page id, index) of the in-use pages, for the
/// check-mode audits that walk the whole heap.
fn blocks(rt: &Rt) -> impl Iterator<Item = (usize, usize)> + '_ {
    rt.heap
        .pages
        .iter()
        .enumerate()
        .filter(|(_, p)| p.in_use && !p.cached)
        .flat_map(|(id, p)| (0..p.nblocks).map(move |i| (id, i)))
}

/// "N-byte block allocated at A", for check-mode reports.
fn describe(rt: &Rt, id: usize, i: usize) -> String {
    let page = &rt.heap.pages[id];
    format!(
        "{}-byte block allocated at {}",
        page.block_size,
        rt.site_name(page.sites.get(i).copied().unwrap_or(0))
    )
}

/// Check mode: the report `say` makes of block `i` of page `id` (an
/// allocated pointer block) and the first allocated, unquarantined block a
/// word of it points into that `wanted` accepts (both described), if any.
fn edge_report(
    rt: &Rt,
    id: usize,
    i: usize,
    wanted: impl Fn(usize, usize) -> bool,
    say: impl Fn(String, String) -> String,
) -> Option<String> {
    // The callers pass marked blocks, and mark bits are set on allocated
    // blocks alone.
    let page = &rt.heap.pages[id];
    let b = page.block_addr(i);
    let (tid, ti) = targets(rt, b, b + page.block_size)
        .find(|&(tid, ti)| !Page::bit(&rt.heap.pages[tid].quarantine, ti) && wanted(tid, ti))?;
    Some(say(describe(rt, id, i), describe(rt, tid, ti)))
}

/// Check mode, at the end of an incremental major collection, before the
/// sweep: marks again from scratch, stopping the world (exact
/// reachability now, in the mark bits, which are restored after), for the
/// audits every major collection runs (a missing barrier, freed blocks
/// still reachable, writes after free), and checks the cycle against it:
/// no reachable block is left unmarked (it would be freed), and no block
/// the cycle marked points at an allocated block it did not (the
/// tri-colour invariant at the end of marking).
fn verify_final(rt: &mut Rt, regs: &[usize; 12], sp: usize, was_old: &[Option<Box<[u64; 64]>>]) {
    let kept: Vec<Option<Box<[u64; 64]>>> = rt
        .heap
        .pages
        .iter()
        .map(|p| {
            p.in_use.then(|| {
                let mut b = Box::new([0u64; 64]);
                for w in 0..64 {
                    b[w] = p.mark[w] & p.mmark[w];
                }
                b
            })
        })
        .collect();
    let saved = old_bitmaps(rt);
    for page in rt.heap.pages.iter_mut().filter(|p| p.in_use) {
        page.mark = [0; 64];
    }
    let mut m = Marker::new(false, true);
    mark_roots(rt, regs, sp, rt.stack_base, &mut m);
    drain(rt, &mut m);
    audit_barrier(rt, was_old);
    audit(rt, &mut m.found);
    let is_kept = |id: usize, i: usize| kept[id].as_ref().is_some_and(|b| Page::bit(b, i));
    let mut msgs = Vec::new();
    for (id, i) in blocks(rt) {
        let page = &rt.heap.pages[id];
        if Page::bit(&page.quarantine, i) {
            continue;
        }
        if Page::bit(&page.mark, i) && !is_kept(id, i) {
            msgs.push(format!(
                "sspur check: the incremental major collection left a reachable {} unmarked",
                describe(rt, id, i),
            ));
        }
        if page.kind as usize != POINTER || !is_kept(id, i) {
            continue;
        }
        msgs.extend(edge_report(rt, id, i, |t, ti| !is_kept(t, ti), |a, b| {
            format!("sspur check: at the end of marking, a marked {a} points at an unmarked {b} (the tri-colour invariant is broken)")
        }));
    }
    for (page, mark) in rt.heap.pages.iter_mut().zip(saved) {
        if let Some(mark) = mark {
            page.mark = *mark;
        }
    }
    for msg in msgs {
        crate::out::write_stderr_raw(format!("{msg}\n").as_bytes());
        rt.reports.push(msg);
    }
}

/// Check mode: reports freed blocks still reachable from the heap or the
/// registered roots, and quarantined blocks whose 0xA5 fill changed.
fn audit(rt: &mut Rt, reachable: &mut Vec<usize>) {
    reachable.sort_unstable();
    reachable.dedup();
    let mut msgs = Vec::new();
    for &base in reachable.iter() {
        let (id, i) = locate(rt, base);
        let page = &rt.heap.pages[id];
        msgs.push(format!(
            "sspur check: a freed {}-byte block is still reachable: allocated at {}, freed at {}",
            page.block_size,
            rt.site_name(page.sites.get(i).copied().unwrap_or(0)),
            rt.site_name(rt.free_sites.get(&base).copied().unwrap_or(0)),
        ));
    }
    let quarantined: Vec<usize> = rt.free_sites.keys().copied().collect();
    for base in quarantined {
        let (id, i) = locate(rt, base);
        let page = &rt.heap.pages[id];
        // SAFETY: `base` is a quarantined block (a key of `free_sites`):
        // check mode keeps its alloc and quarantine bits set forever, so the
        // sweep never frees it and its page is never released; the block's
        // `block_size` bytes are mapped. The program is stopped in the
        // collector, so nothing writes them while this slice lives.
        let bytes = unsafe { std::slice::from_raw_parts(base as *const u8, page.block_size) };
        if let Some(off) = bytes.iter().position(|&b| b != 0xA5) {
            msgs.push(format!(
                "sspur check: write after free at offset {off} of a {}-byte block: allocated at {}, freed at {}",
                page.block_size,
                rt.site_name(page.sites.get(i).copied().unwrap_or(0)),
                rt.site_name(rt.free_sites.get(&base).copied().unwrap_or(0)),
            ));
            // Refill so one write is reported once.
            // SAFETY: the same quarantined, mapped block; `bytes` is not used
            // after this point, so the write aliases no live reference.
            unsafe { std::ptr::write_bytes(base as *mut u8, 0xA5, page.block_size) };
        }
    }
    for m in msgs {
        crate::out::write_stderr_raw(format!("{m}\n").as_bytes());
        rt.reports.push(m);
    }
}

fn locate(rt: &Rt, base: usize) -> (usize, usize) {
    let id = rt.heap.map_get(base) as usize - 1;
    (id, rt.heap.pages[id].index_of(base))
}

/// Frees every allocated, unmarked, unquarantined block of the pages it
/// visits (every page in a major collection, the young pages in a minor
/// one) by clearing bits: a dead block keeps its contents until it is
/// handed out again (`Heap::load_bits`), and is written whole then.
/// Releases empty pages; records pages with at least `recycle_min` free
/// blocks. Returns the bytes freed.
fn sweep(rt: &mut Rt, kind: Kind) -> usize {
    let counting = rt.counting;
    let major = kind != Kind::Minor;
    // The end of an incremental major collection keeps the blocks marked
    // both old (or promoted now) and by the cycle.
    let cycle = kind == Kind::Final;
    let ids: Vec<u32> = if major {
        for &id in &rt.heap.young_pages {
            rt.heap.pages[id as usize].young = false;
        }
        rt.heap.young_pages.clear();
        (0..rt.heap.pages.len() as u32).collect()
    } else {
        std::mem::take(&mut rt.heap.young_pages)
    };
    let mut old = 0usize;
    let mut freed = 0usize;
    for id in ids {
        let id = id as usize;
        let page = &mut rt.heap.pages[id];
        if !page.in_use || page.cached || (!major && !page.young) {
            continue;
        }
        page.young = false;
        let words = page.nblocks.div_ceil(64);
        let mut live_blocks = 0usize;
        let mut dead_blocks = 0usize;
        let mut marked = 0usize;
        for w in 0..words {
            if cycle {
                page.mark[w] &= page.mmark[w];
            }
            let garbage = page.alloc[w] & !page.mark[w] & !page.quarantine[w];
            if garbage != 0 {
                if <crate::tier::Active as Tier>::BIRTHS {
                    let mut g = garbage;
                    while g != 0 {
                        let i = w * 64 + g.trailing_zeros() as usize;
                        g &= g - 1;
                        crate::heap::note_death(page, i, &mut rt.heap.tier);
                    }
                }
                dead_blocks += garbage.count_ones() as usize;
                page.alloc[w] &= !garbage;
            }
            live_blocks += page.alloc[w].count_ones() as usize;
            marked += (page.alloc[w] & page.mark[w]).count_ones() as usize;
        }
        let size = page.block_size;
        let large = page.class == LARGE;
        let k = page.kind as usize * NUM_CLASSES + page.class as usize;
        if dead_blocks > 0 {
            rt.heap
                .tier
                .swept(crate::heap::hist_class(&rt.heap.pages[id]), dead_blocks);
        }
        if counting {
            rt.counters.collected_blocks += dead_blocks as u64;
            rt.counters.collected_bytes += (dead_blocks * size) as u64;
        }
        freed += dead_blocks * size;
        old += marked * size;
        if live_blocks == 0 {
            if large {
                rt.heap.release_large(id);
            } else {
                rt.heap.release_small(id);
            }
        } else if !large
            && rt.heap.pages[id].nblocks - live_blocks >= recycle_min(rt.heap.pages[id].nblocks)
        {
            let page = &mut rt.heap.pages[id];
            if !page.in_partial {
                page.in_partial = true;
                rt.heap.partial[k].push(id as u32);
            }
        }
    }
    if major {
        rt.heap.old_bytes = old;
    }
    freed
}

/// The fewest free blocks a swept small page needs to go on its class's
/// partial list, where allocation takes its free blocks: an eighth of
/// them. Handing out a page's free blocks costs a slow-path call per
/// bitmap word that has any and a cache miss per block, at whatever
/// stage the block died; in a page nearly full of old blocks those costs
/// buy little memory (`SSPUR_MEM=gc` rbtree, a 200 MB tree whose
/// nursery wove through holes of 3% of its pages: 3.2x Rust's time,
/// 2.5x with this). A denser page's free blocks wait for a later sweep
/// to find it sparser; at most an eighth of the small pages' bytes wait
/// so.
fn recycle_min(nblocks: usize) -> usize {
    nblocks.div_ceil(8)
}

/// Tells valgrind's memcheck that the stack words the scan reads are
/// defined (dead words are, as far as a conservative scan cares). A no-op
/// outside valgrind.
#[cfg(target_arch = "x86_64")]
fn valgrind_make_defined(addr: usize, len: usize) {
    // VG_USERREQ__MAKE_MEM_DEFINED_IF_ADDRESSABLE = TOOL_BASE('M','C') + 11
    let args: [usize; 6] = [0x4D43_0000 + 11, addr, len, 0, 0, 0];
    let mut result: usize = 0;
    // SAFETY: valgrind's client-request preamble: the rotates of rdi sum to
    // 128 (rdi is unchanged and declared clobbered anyway) and `xchg rbx,
    // rbx` is a no-op on hardware; under valgrind it reads the six words of
    // `args` (a live local) and writes rdx. No memory of ours is written.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            out("rdi") _,
            options(nostack)
        );
    }
    std::hint::black_box(result);
}

#[cfg(not(target_arch = "x86_64"))]
fn valgrind_make_defined(_addr: usize, _len: usize) {}
