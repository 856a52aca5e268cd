//! Stack barriers: a minor collection does not read again the stack frames
//! that cannot have changed since an earlier collection read them.
//!
//! At the end of the stack scan, the collector walks the frame-pointer
//! chain of compiled code from the innermost compiled frame outward and,
//! about every [`SPACING`] bytes of stack, replaces the return address of a
//! frame record (`[fp + 8]`, the return into a compiled caller) with the
//! address of [`trampoline`]. The original goes into a table of entries,
//! outermost first. A return through a replaced address lands in the
//! trampoline, which pops the innermost entry and jumps to its original
//! return address (clobbering only r11 and the flags, which no return
//! value uses). So the entries still in the table are the barriers the
//! program has not returned through.
//!
//! Why the stack above an intact barrier (from its record's end, `fp +
//! 16`, up to the stack base) is unchanged since the collection that read
//! it: the frame the barrier's record belongs to has not returned, so its
//! caller and every older frame is suspended in a call and runs no code.
//! A suspended frame's memory is written by nothing else either: compiled
//! code passes the address of one of its stack slots (`spill` in
//! lowering) to runtime functions (display, `contains`, a piece source's
//! cursor, a trap's key), which write it while they run, as callees of
//! that frame, and as a closure that lives in the frame (a lambda argument
//! of a method), which the closure's code only reads (a lambda captures by
//! value and cannot assign what it captured); and a compiled callee writes
//! into its caller's frame only its results (the return area), as it
//! returns. Barriers are put only in
//! the records of compiled frames whose caller is compiled code: a runtime
//! function that calls compiled code (a closure called by a list method)
//! keeps no barrier in its callee's record, so it can write its caller's
//! slot only after a deeper barrier was crossed. Registers of suspended
//! frames are saved in the frames of their callees (deeper, read again) or
//! still in registers (spilled by the collector and marked).
//!
//! What a skipped stack word did for a collection, it did when it was
//! read: the young blocks it pointed at were promoted then (they are old
//! now; a minor collection frees no old block, and a block freed at its
//! last use has no live reference left), and while an incremental major
//! collection marks, the old blocks it pointed at are greyed: a
//! stop-the-world major collection reads the whole stack, and the start
//! of a cycle hands the words above the barriers to the cycle's slices
//! (they do not change while the barriers are intact; the frames the
//! program returns into are read again, greying). The blocks a root
//! holds are remembered (see `gc`'s module comment); the ones held by the
//! words above each barrier are kept with its entry, and remembered when
//! the program returns through it: until then their frames run no code,
//! so store into nothing.
//!
//! A deep recursion that allocated nothing on its way down leaves a
//! collection many new frames to read at once (tens of MB of stack in
//! one pause). So a collection puts its barriers in all of them first,
//! then reads their words outermost first, and stops once it read a
//! bounded amount: the words above an intact barrier read by a later
//! pause are the same words (`gc::step_stack`).
//!
//! Check mode keeps a checksum of the words above each barrier (up to the
//! next one) and verifies at every collection that they did not change:
//! `sspur check: a suspended stack frame changed above a stack barrier`.
//!
//! x86-64 only; elsewhere every collection reads the whole stack.

use crate::backtrace::Table;

/// Most barriers at once (16384 x 64 KB = 1 GB of stack covered).
const MAX: usize = 16384;

/// A minor collection is asked for once the stack grew this much below
/// the innermost barrier or the last collection's stack pointer (a deep
/// recursion pushes stack faster than it allocates, and every new word is
/// read once, about 0.6 ms per MB): the reading comes in steps.
pub const STACK_STEP: usize = 16 << 20;

/// One barrier: the frame record whose return address was replaced, and
/// that address.
#[repr(C)]
#[derive(Clone, Copy)]
struct Entry {
    record: usize,
    ret: usize,
}

struct Table2(std::cell::UnsafeCell<[Entry; MAX]>);
// SAFETY: the runtime is single-threaded (the program thread owns it); the
// trampoline and the collector run on that thread only.
unsafe impl Sync for Table2 {}

static ENTRIES: Table2 = Table2(std::cell::UnsafeCell::new(
    [Entry { record: 0, ret: 0 }; MAX],
));

/// The address of the innermost intact entry, or 16 bytes before
/// `ENTRIES` when none is. The trampoline reads it and lowers it by 16.
static TOP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl sspur_rt_stack_barrier",
    "sspur_rt_stack_barrier:",
    "mov r11, qword ptr [rip + {top}]",
    "sub qword ptr [rip + {top}], 16",
    "jmp qword ptr [r11 + 8]",
    top = sym TOP,
);

#[cfg(target_arch = "x86_64")]
extern "C" {
    fn sspur_rt_stack_barrier();
}

/// The trampoline's address (0 where barriers are not supported).
pub fn trampoline() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        sspur_rt_stack_barrier as *const () as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

fn base() -> usize {
    ENTRIES.0.get() as usize
}

/// Intact barriers now.
fn intact() -> usize {
    let top = TOP.load(std::sync::atomic::Ordering::Relaxed);
    if top == 0 {
        return 0;
    }
    (top.wrapping_sub(base()) as isize / 16 + 1) as usize
}

fn entry(i: usize) -> Entry {
    // SAFETY: `i < MAX` (callers index below `intact()` or `MAX`); the
    // table is only written by the collector on this thread, not now.
    unsafe { (*ENTRIES.0.get())[i] }
}

/// The original return address of the barrier whose record is at `fp`
/// (for call-chain walks, which meet the trampoline in `[fp + 8]`).
pub fn original_ret(fp: usize) -> Option<usize> {
    let n = intact();
    // Records decrease from the outermost (index 0) inward.
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let e = entry(mid);
        if e.record == fp {
            return Some(e.ret);
        }
        if e.record > fp {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    None
}

/// The collector's side of the barriers: per intact entry, where its held
/// blocks start in `held` and (check mode) the checksum of the words above
/// it.
#[derive(Default)]
pub struct Barriers {
    meta: Vec<(usize, u64)>,
    /// Pointer blocks (base addresses) held by the stack words above the
    /// barriers, in entry order: remembered again once the program returns
    /// through the barrier (its frames may then store into them).
    pub held: Vec<usize>,
    /// The end of `main`'s frame record (0: not found yet): the words
    /// above it (the entry trampoline's and the runtime's launching
    /// frames, and what the thread keeps above its stack) are read by
    /// every collection, so the outermost barrier's words end here.
    pub ceiling: usize,
    /// A planted bug for the tests (debug builds, when
    /// `SSPUR_TEST_STALE_BARRIERS` is set): barriers the program returned
    /// through are still taken as intact, which check mode must report.
    pub stale_test: bool,
    /// The barriers from this index inward were put in by a collection
    /// that has not read their words yet (`gc::step_stack`): read in
    /// order, outermost first.
    unread: usize,
}

impl Barriers {
    pub const fn new() -> Barriers {
        Barriers {
            meta: Vec::new(),
            held: Vec::new(),
            ceiling: 0,
            stale_test: false,
            unread: 0,
        }
    }

    /// Forgets the entries the program returned through (their words
    /// will be read again), moving the blocks their words held to
    /// `resumed`, and gives the stack address above which the words are
    /// unchanged: the innermost intact record's end, or the ceiling.
    pub fn sync(&mut self, resumed: &mut Vec<usize>) -> usize {
        let n = if self.stale_test {
            self.meta.len()
        } else {
            intact()
        };
        if n < self.meta.len() {
            // Only barriers whose words were read hold blocks.
            if n < self.unread {
                let h = self.meta[n].0;
                resumed.extend(self.held.drain(h..));
            }
            self.meta.truncate(n);
            self.unread = self.unread.min(n);
        }
        if n == 0 {
            self.ceiling
        } else {
            entry(n - 1).record + 16
        }
    }

    /// The innermost intact barrier's record end (the stack above it is
    /// not read again), or 0 when there is none.
    pub fn limit(&self) -> usize {
        match self.meta.len() {
            0 => 0,
            n => entry(n - 1).record + 16,
        }
    }

    /// Check mode: the entries whose words changed since they were read,
    /// as (record, words) pairs.
    pub fn changed(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for k in 0..self.unread {
            let (lo, hi) = self.segment(k);
            if checksum(lo, hi) != self.meta[k].1 {
                out.push((entry(k).record, (hi - lo) / 8));
            }
        }
        out
    }
}

/// A checksum of the words in `lo..hi` (stack segments in check mode,
/// the cards of large remembered blocks). Four independent lanes, each a
/// chain of bijections of its state (xor a word, multiply by an odd
/// constant, rotate), so a change of any one word always changes the sum,
/// at about a cycle per word.
pub fn checksum(lo: usize, hi: usize) -> u64 {
    const P: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = [
        0xcbf2_9ce4_8422_2325u64,
        0x8422_2325_cbf2_9ce4,
        0x2545_f491_4f6c_dd1d,
        0x6c62_272e_07bb_0142,
    ];
    let word = |a: usize| {
        // SAFETY: callers pass a mapped range of words: a segment of the
        // program thread's stack between the collector's frame and its
        // base, or a card of an allocated large block; the program is
        // stopped in the collector.
        unsafe { *(a as *const u64) }
    };
    let mut a = lo;
    while a + 32 <= hi {
        for (j, l) in h.iter_mut().enumerate() {
            *l = (*l ^ word(a + 8 * j)).wrapping_mul(P).rotate_left(31);
        }
        a += 32;
    }
    while a + 8 <= hi {
        h[0] = (h[0] ^ word(a)).wrapping_mul(P).rotate_left(31);
        a += 8;
    }
    h.iter()
        .fold(0u64, |s, &l| (s ^ l).wrapping_mul(P).rotate_left(29))
}

/// The end of `main`'s frame record: one word past the return address
/// into the entry trampoline, found from the stack's top down (1 MB at
/// most), or 0.
pub fn find_ceiling(t: &Table, sp: usize, stack_base: usize) -> usize {
    let mut a = stack_base & !7;
    while a >= 8 && a - 8 >= sp && stack_base - a < (1 << 20) {
        a -= 8;
        if t.stack_word(sp, a) == Some(t.entry_ret) {
            return a + 8;
        }
    }
    0
}

/// The records where barriers may go: the compiled frames from the one at
/// `fp` (of function `func`) outward whose caller is compiled code, up to
/// the first frame whose caller is not (runtime code, the entry
/// trampoline), an existing barrier, or `limit`. Innermost first.
pub fn candidates(t: &Table, fp: usize, lo: usize, limit: usize) -> Vec<usize> {
    let tramp = trampoline();
    let mut out = Vec::new();
    let mut fp = fp;
    // A deep recursion returns to the same few call sites: the last one
    // found compiled is not looked up again.
    let mut known = 0usize;
    while fp + 16 <= limit {
        let (Some(next), Some(ret)) = (t.stack_word(lo, fp), t.stack_word(lo, fp + 8)) else {
            break;
        };
        if ret == tramp || ret == t.entry_ret || next <= fp {
            break;
        }
        if ret != known {
            if !t.is_compiled_call(ret) {
                break;
            }
            known = ret;
        }
        out.push(fp);
        fp = next;
    }
    out
}

/// Chooses among `cands` (innermost first) the records to put barriers
/// in, at least `spacing` bytes apart (`SSPUR_GC_BARRIER_KB`, default 64:
/// a collection reads again at most about this much above the frames
/// pushed since the last one) and below `limit`: outermost first.
pub fn choose(cands: &[usize], limit: usize, have: usize, spacing: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut last = limit;
    for &c in cands.iter().rev() {
        if have + out.len() >= MAX {
            break;
        }
        if last - c >= spacing && c + 16 <= last {
            out.push(c);
            last = c;
        }
    }
    out
}

impl Barriers {
    /// Intact barriers the collector knows of.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// Whether the entries the collector knows of are the intact ones
    /// (always, but under the planted bug).
    pub fn in_step(&self) -> bool {
        self.meta.len() == intact()
    }

    /// Puts a barrier at `record` (inner to every intact one); its held
    /// blocks and checksum are set with [`Barriers::set`] once every new
    /// barrier is in (a record lies in the words above the next barrier
    /// out). Returns its index.
    pub fn install(&mut self, record: usize) -> usize {
        let n = self.meta.len();
        assert!(n < MAX && (n == 0 || entry(n - 1).record > record));
        let slot = (record + 8) as *mut usize;
        // SAFETY: `record` is a frame record of a live compiled frame on
        // the program thread's stack (from `candidates`), whose second
        // word is its return address; the program is stopped in the
        // collector. The entry is written before the return address is
        // replaced, and `TOP` after, so the trampoline always finds it.
        unsafe {
            let ret = *slot;
            (*ENTRIES.0.get())[n] = Entry { record, ret };
            *slot = trampoline();
        }
        self.meta.push((self.held.len(), 0));
        TOP.store(base() + 16 * n, std::sync::atomic::Ordering::Relaxed);
        n
    }

    /// The outermost barrier whose words are not read yet, and its words.
    pub fn next_unread(&self) -> Option<(usize, usize, usize)> {
        (self.unread < self.meta.len()).then(|| {
            let (lo, hi) = self.segment(self.unread);
            (self.unread, lo, hi)
        })
    }

    /// Barrier `k` (the outermost unread one) has its words read: its
    /// held blocks start at `held_from` in `held`, and their checksum is
    /// `sum` (check mode, else 0).
    pub fn set(&mut self, k: usize, held_from: usize, sum: u64) {
        debug_assert_eq!(k, self.unread);
        self.meta[k] = (held_from, sum);
        self.unread = k + 1;
    }

    /// The words above barrier `k`: up to the next barrier out, or the
    /// ceiling.
    pub fn segment(&self, k: usize) -> (usize, usize) {
        let lo = entry(k).record + 16;
        let hi = if k == 0 {
            self.ceiling
        } else {
            entry(k - 1).record + 16
        };
        (lo, hi)
    }
}
