//! The `stack overflow` trap: a SIGSEGV handler on an alternate signal
//! stack recognises a fault in the program thread's stack guard region and
//! traps at the name of the function whose frame overflowed (found from the
//! faulting PC, or from the nearest return address into compiled code when
//! the fault is in runtime code). In check mode any other fault is reported
//! as a use of a freed block; otherwise it falls through to the default action.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Code ranges of the JIT functions and the location each traps at.
struct Table {
    ranges: Vec<(usize, usize, String)>,
    fallback: String,
}

static TABLE: AtomicPtr<Table> = AtomicPtr::new(std::ptr::null_mut());
/// Lowest address of the program thread's usable stack.
static STACK_LO: AtomicUsize = AtomicUsize::new(0);
static STACK_HI: AtomicUsize = AtomicUsize::new(0);

/// How far below the stack's low end a fault still counts as an overflow
/// (the guard page, and frames that skipped a little past it).
const GUARD_SLACK: usize = 1 << 20;
const ALT_STACK: usize = 1 << 20;
/// How many bytes of stack a handler scans at most.
const SCAN_LIMIT: usize = 1 << 20;
/// General registers of a faulting context (at most).
const MAX_REGS: usize = 32;

/// Installs the handler for the calling (program) thread.
pub fn install(ranges: Vec<(usize, usize, String)>, fallback: String) {
    let table = Box::into_raw(Box::new(Table { ranges, fallback }));
    // An earlier run's table is left allocated, never freed: the panic hook
    // and the handler load the pointer without a lock, so one running on
    // another thread could still be reading it. A table is a few bytes per
    // function, and a process runs one program at a time.
    TABLE.store(table, Ordering::SeqCst);
    let lo_hi = crate::backtrace::thread_stack();
    STACK_LO.store(lo_hi.0, Ordering::SeqCst);
    STACK_HI.store(lo_hi.1, Ordering::SeqCst);
    install_check_hook();
    // SAFETY: an anonymous mapping at a kernel-chosen address (overlapping
    // nothing; MAP_FAILED is checked) becomes this thread's alternate signal
    // stack, ALT_STACK bytes as `ss` says, and is never unmapped while the
    // thread can take a signal. `sa` is a zeroed `sigaction` whose handler
    // has the SA_SIGINFO signature; every pointer passed is to a live local.
    unsafe {
        let alt = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if alt == libc::MAP_FAILED {
            return;
        }
        let ss = libc::stack_t {
            ss_sp: alt,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

/// Check mode in a debug build: the runtime's own checks may panic on a
/// freed block's 0xA5 fill before the use faults; report that the same
/// way as the fault.
fn install_check_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let table = TABLE.load(Ordering::SeqCst);
        let marker = 0usize;
        let sp = std::hint::black_box(&marker) as *const usize as usize;
        let lo = STACK_LO.load(Ordering::Relaxed);
        let hi = STACK_HI.load(Ordering::Relaxed);
        if !table.is_null() && lo != 0 && sp >= lo && sp < hi && sp + (1 << 30) > hi {
            // SAFETY: a non-null TABLE was made by `install` from a Box and
            // is never freed (see `install`), and never mutated.
            let loc = locate(unsafe { &*table }, 0, sp);
            let mut stack = (sp & !7..hi.min(sp.saturating_add(1 << 20)))
                .step_by(8)
                // SAFETY: `lo <= sp <= a < hi`: an aligned word of the program
                // thread's stack, the thread this hook runs on, so mapped.
                .map(|a| unsafe { *(a as *const usize) });
            crate::check_fault_report("a runtime assertion failed", loc, &mut stack);
        }
        previous(info);
    }));
}

/// The location to report for a fault at `pc` with stack pointer `sp`:
/// the JIT function holding `pc`, or else (a fault inside runtime code,
/// which keeps no frame pointers) the JIT function of the nearest return
/// address above `sp`, which is the innermost compiled caller.
fn locate(table: &Table, pc: usize, sp: usize) -> &str {
    let find = |a: usize| {
        table
            .ranges
            .iter()
            .find(|(s, e, _)| a > *s && a <= *e)
            .map(|r| r.2.as_str())
    };
    if let Some(l) = table.ranges.iter().find(|(s, e, _)| pc >= *s && pc < *e) {
        return &l.2;
    }
    let (lo, hi) = (
        STACK_LO.load(Ordering::Relaxed),
        STACK_HI.load(Ordering::Relaxed),
    );
    // Only words of the program thread's mapped stack, at most SCAN_LIMIT
    // bytes of them: `sp` may be any value in runtime code, and a read
    // outside the stack would fault again inside the handler.
    if lo == 0 || sp >= hi {
        return &table.fallback;
    }
    let mut a = sp.max(lo) & !7;
    let end = hi.min(a.saturating_add(SCAN_LIMIT));
    while a + 8 <= end {
        // SAFETY: `lo <= a < a + 8 <= hi`: a word of the thread's stack,
        // which is mapped (the guard page lies below `lo`).
        let w = unsafe { *(a as *const usize) };
        if let Some(l) = find(w) {
            return l;
        }
        a += 8;
    }
    &table.fallback
}

/// The faulting PC and frame pointer.
///
/// # Safety (for this and the other readers of `ctx` below)
/// `ctx` must be the `ucontext_t` the kernel passed to the signal handler
/// that is running.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn pc_sp(ctx: *mut libc::c_void) -> (usize, usize) {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext (the contract); only plain
    // register fields are read, at constant in-bounds indices.
    unsafe {
        let g = &(*uc).uc_mcontext.gregs;
        (
            g[libc::REG_RIP as usize] as usize,
            g[libc::REG_RBP as usize] as usize,
        )
    }
}

#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
unsafe fn pc_sp(ctx: *mut libc::c_void) -> (usize, usize) {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext (the contract); only plain
    // register fields are read, at constant in-bounds indices.
    unsafe {
        (
            (*uc).uc_mcontext.pc as usize,
            (*uc).uc_mcontext.regs[29] as usize,
        )
    }
}

#[cfg(not(any(
    all(target_os = "linux", target_arch = "x86_64"),
    all(target_os = "linux", target_arch = "aarch64")
)))]
unsafe fn pc_sp(_ctx: *mut libc::c_void) -> (usize, usize) {
    (0, 0)
}

/// The link register of the faulting context (aarch64; 0 elsewhere): the
/// return address when the fault is a function's first instruction.
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
unsafe fn link_register(ctx: *mut libc::c_void) -> usize {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext (the contract); one plain
    // register field is read, at a constant in-bounds index.
    unsafe { (*uc).uc_mcontext.regs[30] as usize }
}

#[cfg(not(all(target_os = "linux", target_arch = "aarch64")))]
unsafe fn link_register(_ctx: *mut libc::c_void) -> usize {
    0
}

/// The first [`MAX_REGS`] of `regs` and how many there were.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn first_regs(regs: impl Iterator<Item = usize>) -> ([usize; MAX_REGS], usize) {
    let mut out = [0; MAX_REGS];
    let mut n = 0;
    for (o, r) in out.iter_mut().zip(regs) {
        *o = r;
        n += 1;
    }
    (out, n)
}

/// The general registers of the faulting context (check-mode reports).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn gp_regs(ctx: *mut libc::c_void) -> ([usize; MAX_REGS], usize) {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext of the signal being handled
    // (the contract); the register array is only read.
    let g = unsafe { &(*uc).uc_mcontext.gregs };
    first_regs(g.iter().map(|&r| r as usize))
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn stack_pointer(ctx: *mut libc::c_void) -> usize {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext (the contract); one plain
    // register field is read.
    unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] as usize }
}

#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
unsafe fn gp_regs(ctx: *mut libc::c_void) -> ([usize; MAX_REGS], usize) {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext of the signal being handled
    // (the contract); the register array is only read.
    let g = unsafe { &(*uc).uc_mcontext.regs };
    first_regs(g.iter().map(|&r| r as usize))
}

#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
unsafe fn stack_pointer(ctx: *mut libc::c_void) -> usize {
    let uc = ctx as *const libc::ucontext_t;
    // SAFETY: `uc` is the kernel's live ucontext (the contract); one plain
    // register field is read.
    unsafe { (*uc).uc_mcontext.sp as usize }
}

#[cfg(not(any(
    all(target_os = "linux", target_arch = "x86_64"),
    all(target_os = "linux", target_arch = "aarch64")
)))]
unsafe fn gp_regs(_ctx: *mut libc::c_void) -> ([usize; MAX_REGS], usize) {
    ([0; MAX_REGS], 0)
}

#[cfg(not(any(
    all(target_os = "linux", target_arch = "x86_64"),
    all(target_os = "linux", target_arch = "aarch64")
)))]
unsafe fn stack_pointer(_ctx: *mut libc::c_void) -> usize {
    0
}

/// The SIGSEGV/SIGBUS handler, on the alternate stack. Async-signal-safe
/// up to its first write: it allocates and formats nothing before
/// `crate::trap_from_signal` (or check mode's report) writes the message with
/// bare write(2) calls; its stack scans are bounded (`locate`).
extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel's siginfo of the signal being handled.
    let addr = unsafe { (*info).si_addr() } as usize;
    let lo = STACK_LO.load(Ordering::Relaxed);
    let table = TABLE.load(Ordering::SeqCst);
    // SAFETY: a non-null TABLE was made by `install` from a Box, is never
    // freed (see `install`) and never mutated.
    let table = unsafe { table.as_ref() };
    let in_guard = lo != 0 && addr < lo + 4096 && addr + GUARD_SLACK >= lo;
    if let Some(table) = table {
        // SAFETY: `ctx` is the ucontext the kernel passed to this handler.
        let (pc, sp) = unsafe { pc_sp(ctx) };
        let loc = locate(table, pc, sp);
        if in_guard {
            // SAFETY: `ctx` is the ucontext the kernel passed to this handler.
            let (fault_sp, lr) = unsafe { (stack_pointer(ctx), link_register(ctx)) };
            let fault = crate::backtrace::Fault {
                pc,
                fp: sp,
                sp: fault_sp,
                lr,
            };
            crate::trap_from_signal(b"stack overflow", loc.as_bytes(), fault);
        }
        // Check mode turns a use of a freed block into a report.
        // SAFETY: `ctx` is the ucontext the kernel passed to this handler.
        let (regs, n) = unsafe { gp_regs(ctx) };
        // SAFETY: as above.
        let stack_sp = unsafe { stack_pointer(ctx) };
        let hi = STACK_HI.load(Ordering::Relaxed);
        let start = stack_sp.max(lo) & !7;
        let stack = (start..hi.min(start.saturating_add(SCAN_LIMIT)))
            .step_by(8)
            .filter(|_| stack_sp != 0 && lo != 0 && stack_sp < hi)
            // SAFETY: `lo <= a < hi`: a mapped word of the thread's stack.
            .map(|a| unsafe { *(a as *const usize) });
        crate::check_fault_report(
            "a memory fault",
            loc,
            &mut regs[..n].iter().copied().chain(stack),
        );
    }
    // Not ours: restore the default action and let the fault happen again.
    // SAFETY: resetting a signal's disposition has no preconditions.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}
