//! Trap call chains: the Sspur functions active at a trap, innermost
//! first, printed under the trap's first line (docs/runtime.md):
//!
//! ```text
//! trap: division by zero at prog.ssp:2:14
//!   in g (called at prog.ssp:6:5)
//!   in f (called at prog.ssp:10:5)
//!   in main
//! ```
//!
//! At most [`SHOWN`] frames are printed, then `  ... N more frames` (or
//! `  ... over 10000 more frames` past [`COUNT_LIMIT`]). A `stack overflow`
//! chain starts at a canonical frame of the cycle the recursion repeats
//! ([`overflow_skip`]): the two backends run out of stack at different
//! depths, so the frame that happened to overflow differs between them. A lambda is named
//! `lambda at PATH:LINE:COL` (where it is written). The interpreter builds
//! the same lines with [`write_frame`] and [`write_more`], so both
//! backends print the same chain. `SSPUR_BACKTRACE=0` turns it off
//! (`Settings::backtrace`; the callers check it).
//!
//! Natively, compiled code keeps frame pointers: `[fp]` is the caller's
//! frame pointer and `[fp + 8]` the return address into the caller. The
//! backend installs a [`Table`] of its code: each function's range and
//! name, and each call instruction's return address with the position of
//! the Sspur call it belongs to. At a trap, the innermost compiled frame is
//! found (from the faulting pc and frame pointer, or by scanning the stack
//! for a return address into compiled code when runtime code, which keeps
//! no frame pointers, sits below it), then the chain is walked. Nothing
//! here allocates or formats with the allocator: the signal handler of the
//! `stack overflow` trap runs it, so lines are assembled in a fixed buffer
//! and written with bare write(2) calls.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Frames printed at most.
pub const SHOWN: usize = 20;
/// Frames counted at most beyond the shown ones.
pub const COUNT_LIMIT: usize = 10_000;

/// A compiled function.
pub struct Func {
    pub start: usize,
    pub end: usize,
    /// The Sspur name (`f`, `lambda at p.ssp:3:9`); `None` for code that
    /// is no Sspur frame (the wrapper of a function used as a value, the
    /// entry trampoline).
    pub name: Option<String>,
    /// Where it is defined (the function's name, the lambda's start): where
    /// a `stack overflow` in it points.
    pub def: Option<String>,
}

/// A call instruction of compiled code.
pub struct Call {
    /// Its return address.
    pub ret: usize,
    /// The position of the Sspur call (`p.ssp:6:5`), `None` for calls of
    /// runtime helpers and the wrapper's call of its function.
    pub at: Option<String>,
    /// The start of the function a direct call calls (0: unknown), to
    /// tell a real frame record from a stale one.
    pub target: usize,
}

/// The backend's description of the program's code.
pub struct Table {
    /// Sorted by `start`, not overlapping.
    pub funcs: Vec<Func>,
    /// Sorted by `ret`.
    pub calls: Vec<Call>,
    /// The return address of the entry trampoline's call of `main`: the
    /// outermost frame record.
    pub entry_ret: usize,
    /// The program thread's stack.
    pub stack_lo: usize,
    pub stack_hi: usize,
}

/// The system unwinder (libgcc_s, which std links on Linux).
#[repr(C)]
struct UnwindContext {
    _opaque: [u8; 0],
}

extern "C" {
    fn _Unwind_Backtrace(
        trace: extern "C" fn(*mut UnwindContext, *mut libc::c_void) -> libc::c_int,
        arg: *mut libc::c_void,
    ) -> libc::c_int;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
    fn _Unwind_GetGR(ctx: *mut UnwindContext, index: libc::c_int) -> usize;
}

/// The DWARF register number of the frame pointer (rbp, x29).
#[cfg(target_arch = "aarch64")]
const FP_REG: libc::c_int = 29;
#[cfg(not(target_arch = "aarch64"))]
const FP_REG: libc::c_int = 6;

static TABLE: AtomicPtr<Table> = AtomicPtr::new(std::ptr::null_mut());
/// Set while the first chain is printed (a fault while walking prints none).
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// Installs the code table (on the program thread; `stack_lo`/`stack_hi`
/// of zero are filled in with the calling thread's stack).
/// The table is boxed by the caller so no copy of its addresses is left
/// in a dead slot of the program thread's stack.
pub fn install(mut t: Box<Table>) {
    if t.stack_hi == 0 {
        let (lo, hi) = thread_stack();
        t.stack_lo = lo;
        t.stack_hi = hi;
    }
    let old = TABLE.swap(Box::into_raw(t), Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: `old` came from `Box::into_raw` above and nothing else
        // holds it: one program runs per process, an earlier table is
        // only replaced by a later run's install.
        drop(unsafe { Box::from_raw(old) });
    }
}

/// The calling thread's stack, `(lowest, highest)` address; `(0, 0)`
/// when the system cannot tell.
pub fn thread_stack() -> (usize, usize) {
    // SAFETY: plain libc queries about the calling thread; `attr` is
    // initialised by pthread_getattr_np before use and destroyed after.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            (addr as usize, addr as usize + size)
        } else {
            (0, 0)
        }
    }
}

// ------------------------------------------------------------ formatting

/// `  in NAME (called at AT)\n`, or `  in NAME\n` without a call site.
pub fn write_frame(out: &mut dyn FnMut(&[u8]), name: &[u8], at: Option<&[u8]>) {
    out(b"  in ");
    out(name);
    if let Some(at) = at {
        out(b" (called at ");
        out(at);
        out(b")");
    }
    out(b"\n");
}

/// `  ... N more frames\n` (`over 10000` when `n` passes [`COUNT_LIMIT`]).
pub fn write_more(out: &mut dyn FnMut(&[u8]), n: usize) {
    if n == 0 {
        return;
    }
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n.min(COUNT_LIMIT);
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out(b"  ... ");
    if n > COUNT_LIMIT {
        out(b"over ");
    }
    out(&digits[i..]);
    out(if n == 1 {
        b" more frame\n"
    } else {
        b" more frames\n"
    });
}

/// Frames read at the inner end of an overflowed chain to find the cycle
/// the recursion repeats; cycles of up to half of it are found.
pub const CYCLE_WINDOW: usize = 64;

/// How many frames to leave out at the inner end of a `stack overflow`
/// chain, given the keys (name and call site) of its innermost frames,
/// innermost first, at most [`CYCLE_WINDOW`]. When they repeat a cycle
/// (`a b a b ..`), the chain starts at the cycle's least key, so it is the
/// same whatever the depth the stack ran out at; otherwise at the frame
/// that overflowed (0).
pub fn overflow_skip<K: Ord>(keys: &[K]) -> usize {
    let keys = &keys[..keys.len().min(CYCLE_WINDOW)];
    for p in 1..=keys.len() / 2 {
        if (0..keys.len() - p).all(|i| keys[i] == keys[i + p]) {
            return (0..p).min_by(|&a, &b| keys[a].cmp(&keys[b])).unwrap_or(0);
        }
    }
    0
}

/// Collects output in a fixed buffer and writes it to stderr in a few
/// write(2) calls (no allocation).
struct Sink {
    buf: [u8; 2048],
    n: usize,
}

impl Sink {
    fn push(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            if self.n == self.buf.len() {
                self.flush();
            }
            let k = b.len().min(self.buf.len() - self.n);
            self.buf[self.n..self.n + k].copy_from_slice(&b[..k]);
            self.n += k;
            b = &b[k..];
        }
    }
    fn flush(&mut self) {
        crate::out::write_fd(2, &self.buf[..self.n]);
        self.n = 0;
    }
}

// ------------------------------------------------------------ the walk

/// Where the walk starts: the innermost compiled frame.
#[derive(Clone, Copy)]
pub struct Start {
    /// Index of its function in `Table::funcs`.
    func: usize,
    /// Its return address into its caller.
    ret: usize,
    /// Its caller's frame pointer.
    next_fp: usize,
}

impl Table {
    fn func_of(&self, pc: usize) -> Option<usize> {
        let i = self.funcs.partition_point(|f| f.start <= pc);
        let f = self.funcs.get(i.checked_sub(1)?)?;
        (pc < f.end).then_some(i - 1)
    }

    fn call_of(&self, ret: usize) -> Option<&Call> {
        let i = self.calls.partition_point(|c| c.ret < ret);
        self.calls.get(i).filter(|c| c.ret == ret)
    }

    /// A word of the program thread's stack at or above `lo`.
    fn word(&self, lo: usize, a: usize) -> Option<usize> {
        if a < lo.max(self.stack_lo) || !a.is_multiple_of(8) || a.checked_add(8)? > self.stack_hi {
            return None;
        }
        // SAFETY: `a` is an aligned word inside the program thread's
        // stack, which is mapped from `stack_lo` to `stack_hi`.
        Some(unsafe { *(a as *const usize) })
    }

    /// The return address of the frame record at `fp`: `[fp + 8]`, or the
    /// original one where a stack barrier replaced it.
    fn ret_word(&self, lo: usize, fp: usize) -> Option<usize> {
        let w = self.word(lo, fp + 8)?;
        if w != 0 && w == crate::barrier::trampoline() {
            return crate::barrier::original_ret(fp);
        }
        Some(w)
    }

    /// A word of the program thread's stack (for the stack barriers).
    pub(crate) fn stack_word(&self, lo: usize, a: usize) -> Option<usize> {
        self.word(lo, a)
    }

    /// Whether `ret` is the return address of a call in compiled code.
    pub(crate) fn is_compiled_call(&self, ret: usize) -> bool {
        self.call_of(ret).is_some() && self.func_of(ret).is_some()
    }

    /// Whether a frame record at `fp` of a frame of `callee` starts a
    /// consistent chain (its first links are calls into the frame below
    /// them), so a stale record in a dead slot is not taken for it.
    fn plausible(&self, mut callee: usize, mut fp: usize, lo: usize) -> bool {
        for _ in 0..32 {
            let (Some(next), Some(ret)) = (self.word(lo, fp), self.ret_word(lo, fp)) else {
                return false;
            };
            if ret == self.entry_ret {
                return self.funcs[callee].name.as_deref() == Some("main");
            }
            let Some(call) = self.call_of(ret) else {
                return false;
            };
            if call.target != 0 && call.target != self.funcs[callee].start {
                return false;
            }
            let Some(f) = self.func_of(ret) else {
                return false;
            };
            if next <= fp {
                return false;
            }
            callee = f;
            fp = next;
        }
        true
    }

    /// The innermost compiled frame above `sp`, when runtime code (without
    /// frame pointers) runs below it: the first return address into
    /// compiled code above `sp` names the function; its frame record is
    /// the first plausible one above that.
    fn scan(&self, sp: usize) -> Option<Start> {
        const LIMIT: usize = 1 << 20;
        const FRAME: usize = 64 << 10;
        let lo = sp & !7;
        let end = self.stack_hi.min(lo.saturating_add(LIMIT));
        let mut a = lo;
        while a + 8 <= end {
            let w = self.word(lo, a)?;
            a += 8;
            let Some(func) = self.call_of(w).and_then(|_| self.func_of(w)) else {
                continue;
            };
            if self.funcs[func].name.is_none() {
                continue;
            }
            let mut fp = a;
            while fp + 16 <= end.min(a + FRAME) {
                if self.plausible(func, fp, lo) {
                    return self.record(func, fp, lo);
                }
                fp += 8;
            }
        }
        None
    }

    /// The start of a frame of `func` whose record is at `fp`.
    fn record(&self, func: usize, fp: usize, lo: usize) -> Option<Start> {
        Some(Start {
            func,
            ret: self.ret_word(lo, fp)?,
            next_fp: self.word(lo, fp)?,
        })
    }

    /// The innermost compiled frame below runtime code, found with the
    /// system unwinder (the runtime's frames have unwind information, not
    /// frame pointers): the first frame whose pc is a return address into
    /// compiled code, and the frame pointer the unwinder restored for it.
    /// Not for signal handlers (the unwinder is not async-signal-safe).
    fn unwind(&self, lo: usize) -> Option<Start> {
        self.unwind_record(lo).map(|(s, _)| s)
    }

    /// [`Table::unwind`], with the innermost compiled frame's record.
    pub(crate) fn unwind_record(&self, lo: usize) -> Option<(Start, usize)> {
        struct Found<'t> {
            table: &'t Table,
            lo: usize,
            frames: usize,
            start: Option<Start>,
            fp: usize,
        }
        extern "C" fn each(ctx: *mut UnwindContext, arg: *mut libc::c_void) -> libc::c_int {
            // SAFETY: `arg` is the `Found` passed to `_Unwind_Backtrace`
            // below, alive and not otherwise borrowed during the walk.
            let found = unsafe { &mut *(arg as *mut Found) };
            found.frames += 1;
            // SAFETY: `ctx` is the unwinder's context of the current frame.
            let pc = unsafe { _Unwind_GetIP(ctx) };
            let t = found.table;
            if let Some(func) = t.call_of(pc).and_then(|_| t.func_of(pc)) {
                // SAFETY: as above; FP_REG is the frame pointer's DWARF number.
                let fp = unsafe { _Unwind_GetGR(ctx, FP_REG) };
                if t.funcs[func].name.is_some() && t.plausible(func, fp, found.lo) {
                    found.start = t.record(func, fp, found.lo);
                    found.fp = fp;
                }
                return 4; // _URC_NORMAL_STOP
            }
            if found.frames > 256 {
                return 4;
            }
            0 // _URC_NO_REASON
        }
        let mut found = Found {
            table: self,
            lo,
            frames: 0,
            start: None,
            fp: 0,
        };
        // SAFETY: `each` only reads the context it is given and `found`.
        unsafe {
            _Unwind_Backtrace(each, &mut found as *mut Found as *mut libc::c_void);
        }
        found.start.map(|s| (s, found.fp))
    }

    /// The start for a fault at `pc` with frame pointer `fp`, stack
    /// pointer `sp` and link register `lr` (aarch64; 0 elsewhere).
    fn at_fault(&self, pc: usize, fp: usize, sp: usize, lr: usize) -> Option<Start> {
        let Some(func) = self.func_of(pc) else {
            return self.scan(sp);
        };
        let lo = sp & !7;
        if pc == self.funcs[func].start {
            // The first instruction saves the frame pointer: no record yet;
            // the return address is on the stack (x86-64) or in lr.
            let ret = if cfg!(target_arch = "aarch64") {
                lr
            } else {
                self.word(lo, lo)?
            };
            return Some(Start {
                func,
                ret,
                next_fp: fp,
            });
        }
        self.record(func, fp, lo)
    }

    /// Walks the chain from `start`, calling `each` with every Sspur frame
    /// (its function and the position of its call, none for `main`) while
    /// it returns true. A wrapper's frame is skipped; its function is
    /// called at the wrapper's call site.
    fn walk<'t>(
        &'t self,
        start: Start,
        lo: usize,
        each: &mut dyn FnMut(&'t Func, Option<&'t str>) -> bool,
    ) {
        let mut cur = start;
        let mut pending: Option<&Func> = None;
        let mut steps = 0usize;
        let mut last_fp = lo;
        loop {
            steps += 1;
            let f = &self.funcs[cur.func];
            if f.name.is_some() {
                pending = Some(f);
            }
            if cur.ret == self.entry_ret {
                if let Some(f) = pending.take() {
                    each(f, None);
                }
                return;
            }
            let Some(call) = self.call_of(cur.ret) else {
                break;
            };
            if let Some(at) = call.at.as_deref() {
                if let Some(f) = pending.take() {
                    if !each(f, Some(at)) {
                        return;
                    }
                }
            }
            let Some(caller) = self.func_of(cur.ret) else {
                break;
            };
            let fp = cur.next_fp;
            if fp <= last_fp {
                break;
            }
            last_fp = fp;
            let (Some(next), Some(ret)) = (self.word(lo, fp), self.ret_word(lo, fp)) else {
                break;
            };
            if steps > 4 * (SHOWN + COUNT_LIMIT) {
                break;
            }
            cur = Start {
                func: caller,
                ret,
                next_fp: next,
            };
        }
        if let Some(f) = pending.take() {
            each(f, None);
        }
    }

    /// Writes the chain from `start`, leaving out its `skip` innermost
    /// frames.
    fn write_chain(&self, start: Start, lo: usize, skip: usize, out: &mut dyn FnMut(&[u8])) {
        let mut seen = 0usize;
        let mut lines = 0usize;
        self.walk(start, lo, &mut |f, at| {
            seen += 1;
            if seen <= skip {
                return true;
            }
            if lines < SHOWN {
                let name = f.name.as_deref().unwrap_or_default();
                write_frame(out, name.as_bytes(), at.map(str::as_bytes));
            }
            lines += 1;
            lines <= SHOWN + COUNT_LIMIT
        });
        write_more(out, lines.saturating_sub(SHOWN));
    }

    /// The frames to leave out of an overflowed chain from `start`
    /// ([`overflow_skip`]) and where the first frame kept is defined.
    fn overflow_phase(&self, start: Start, lo: usize) -> (usize, Option<&str>) {
        let mut keys = [("", ""); CYCLE_WINDOW];
        let mut defs = [None; CYCLE_WINDOW];
        let mut n = 0;
        self.walk(start, lo, &mut |f, at| {
            keys[n] = (
                f.name.as_deref().unwrap_or_default(),
                at.unwrap_or_default(),
            );
            defs[n] = f.def.as_deref();
            n += 1;
            n < CYCLE_WINDOW
        });
        let skip = overflow_skip(&keys[..n]);
        (skip, defs.get(skip).copied().flatten())
    }
}

/// Prints the chain of a trap in runtime code called by compiled code
/// (`sspur_trap`): the walk starts at the innermost compiled frame above
/// the caller's stack.
pub(crate) fn print_here() {
    let marker = 0usize;
    let sp = std::hint::black_box(&marker) as *const usize as usize;
    print_with(|t| t.unwind(sp & !7).or_else(|| t.scan(sp)), sp, 0);
}

/// A faulting context: program counter, frame pointer, stack pointer and
/// link register (aarch64; 0 elsewhere).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fault {
    pub pc: usize,
    pub fp: usize,
    pub sp: usize,
    pub lr: usize,
}

/// Prints the chain of a `stack overflow` fault (the signal handler),
/// leaving out `skip` innermost frames ([`overflow_at_fault`]).
/// Async-signal-safe: reads only the program thread's stack, allocates
/// nothing.
pub(crate) fn print_at_fault(f: Fault, skip: usize) {
    print_with(|t| t.at_fault(f.pc, f.fp, f.sp, f.lr), f.sp, skip);
}

/// For a `stack overflow` fault: how many innermost frames its chain
/// leaves out and where the first frame kept is defined, the position the
/// trap names ([`overflow_skip`]); `None` without a table or a chain.
/// Async-signal-safe, as [`print_at_fault`].
pub(crate) fn overflow_at_fault(f: Fault) -> Option<(usize, &'static str)> {
    let t = table_for(f.sp)?;
    let start = t.at_fault(f.pc, f.fp, f.sp, f.lr)?;
    match t.overflow_phase(start, f.sp & !7) {
        (skip, Some(def)) => Some((skip, def)),
        (_, None) => None,
    }
}

/// The installed table, when `sp` is on the program thread's stack.
pub(crate) fn table_for(sp: usize) -> Option<&'static Table> {
    // SAFETY: an installed table is only freed by a later install, and one
    // program runs per process.
    let t = unsafe { TABLE.load(Ordering::SeqCst).as_ref() }?;
    if t.stack_hi == 0 || sp >= t.stack_hi || sp < t.stack_lo.saturating_sub(1 << 20) {
        return None;
    }
    Some(t)
}

fn print_with(start: impl FnOnce(&Table) -> Option<Start>, sp: usize, skip: usize) {
    if BUSY.swap(1, Ordering::SeqCst) != 0 {
        return;
    }
    let Some(t) = table_for(sp) else { return };
    let Some(s) = start(t) else { return };
    let mut sink = Sink {
        buf: [0; 2048],
        n: 0,
    };
    t.write_chain(s, sp & !7, skip, &mut |b| sink.push(b));
    sink.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut dyn FnMut(&[u8]))) -> String {
        let mut v = Vec::new();
        f(&mut |b| v.extend_from_slice(b));
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn lines() {
        assert_eq!(
            text(|o| write_frame(o, b"f", Some(b"p.ssp:3:5"))),
            "  in f (called at p.ssp:3:5)\n"
        );
        assert_eq!(text(|o| write_frame(o, b"main", None)), "  in main\n");
        assert_eq!(text(|o| write_more(o, 0)), "");
        assert_eq!(text(|o| write_more(o, 1)), "  ... 1 more frame\n");
        assert_eq!(text(|o| write_more(o, 10_000)), "  ... 10000 more frames\n");
        assert_eq!(
            text(|o| write_more(o, 10_001)),
            "  ... over 10000 more frames\n"
        );
    }

    #[test]
    fn overflow_starts_at_the_least_frame_of_the_cycle() {
        // `a` calls `b` calls `a` ...: whichever overflowed, the chain
        // starts at the same frame.
        let ab: Vec<(&str, &str)> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    ("a", "2:5")
                } else {
                    ("b", "1:5")
                }
            })
            .collect();
        assert_eq!(overflow_skip(&ab), 0);
        assert_eq!(overflow_skip(&ab[1..]), 1);
        // A cycle of three entered at each phase.
        let cyc = ["c", "a", "b"];
        for phase in 0..3 {
            let keys: Vec<&str> = (0..30).map(|i| cyc[(i + phase) % 3]).collect();
            let skip = overflow_skip(&keys);
            assert_eq!(keys[skip], "a", "phase {phase}");
        }
        // One function: nothing to leave out. No cycle: nothing either.
        assert_eq!(overflow_skip(&["f"; 30]), 0);
        assert_eq!(overflow_skip(&["f", "g", "main"]), 0);
        assert_eq!(overflow_skip::<&str>(&[]), 0);
    }
}
