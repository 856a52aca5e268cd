//! The C-ABI entry points compiled code calls (registered with the JIT by
//! address). All run on the program thread; none is reentrant.
//!
//! The signatures are a fixed contract with the backend. Every entry point
//! that dereferences a pointer argument is an `unsafe extern "C"` function
//! whose `# Safety` section says what compiled code guarantees; the others
//! take only numbers.

use crate::config::MemMode;
use crate::out::{bytes, finish, flush, write_fd, write_stderr_raw, STDOUT_BUFFER};
use crate::state::rt;

/// Reads the SSPUR_* settings once (exits with a clear message on a bad value) and records the calling thread's stack base for the collector. Call on the thread that runs the program, before its first allocation. Idempotent.
#[no_mangle]
pub extern "C" fn sspur_rt_init() {
    rt().init_from_env();
}

/// A block of at least `size` bytes. kind 0 = data (never scanned, not zeroed), 1 = pointer (scanned conservatively, zeroed). `site` names the allocating expression (0 = unknown). Returns null when the allocation fails (out of memory or SSPUR_FAIL_ALLOC_AT): the caller traps.
#[no_mangle]
pub extern "C" fn sspur_alloc(size: usize, kind: u32, site: u32) -> *mut u8 {
    rt().alloc(size, (kind != 0) as usize, site)
}

/// Frees the block containing `ptr` (interior pointers allowed). A pointer outside the heap (static data) is ignored. No-op under SSPUR_MEM=gc. Counted as "freed at last use" in the statistics. `site` = the drop's site id for check-mode reports.
///
/// # Safety
/// Nothing may use the block holding `ptr` afterwards (the caller owned it).
#[no_mangle]
pub unsafe extern "C" fn sspur_free(ptr: *mut u8, site: u32) {
    rt().free(ptr as usize, site, true);
}

/// Frees a list of strings that owns them: `elems` points at element 0 of `len` elements, each 16 bytes (ptr: *const u8, len: usize); frees each element's block (if in the heap and len > 0), then the buffer containing `elems`. Each freed block counts as freed at last use.
///
/// A list with `len == 0` has no buffer (zero-length lists never occupy a
/// block), so nothing is freed or counted.
///
/// # Safety
/// `elems` must point at `len` string elements of a list the caller owns
/// with its strings; none of them is used afterwards.
#[no_mangle]
pub unsafe extern "C" fn sspur_free_strs(elems: *mut u8, len: usize, site: u32) {
    let rt = rt();
    if len == 0 || rt.mode == MemMode::Gc {
        return;
    }
    for i in 0..len {
        // SAFETY: element `i < len` of the list, two words (the contract).
        let (p, n) = unsafe {
            let e = elems.add(i * 16) as *const usize;
            (*e, *e.add(1))
        };
        if n > 0 {
            crate::cells::free_kind(rt, p, crate::cells::BlockKind::Str, site);
        }
    }
    crate::cells::free_kind(rt, elems as usize, crate::cells::BlockKind::List, site);
}

/// Runs a major collection now.
#[no_mangle]
pub extern "C" fn sspur_collect() {
    collect_now(crate::gc::Kind::Major);
}

/// Runs a minor collection now: the young blocks unreachable from the roots
/// and the remembered set are freed.
#[no_mangle]
pub extern "C" fn sspur_collect_minor() {
    collect_now(crate::gc::Kind::Minor);
}

fn collect_now(kind: crate::gc::Kind) {
    let rt = rt();
    if !rt.initialized {
        rt.init_from_env();
    }
    crate::gc::collect(rt, kind);
}

/// The write barrier for compiled code: a pointer was stored into the
/// existing block holding `ptr` (see [`crate::remember`]). Takes only an
/// address and dereferences nothing.
#[no_mangle]
pub extern "C" fn sspur_remember(ptr: *const u8) {
    crate::remember(ptr);
}

/// Flushes stdout, prints "trap: {msg} at {loc}\n" to stderr (loc = "path:line:col"; if loc_len == 0 prints "trap: {msg}\n"), then the call chain (`backtrace`, unless SSPUR_BACKTRACE=0), prints the exit reports, exits with code 101.
///
/// # Safety
/// `(msg, msg_len)` and `(loc, loc_len)` must be readable byte strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_trap(
    msg: *const u8,
    msg_len: usize,
    loc: *const u8,
    loc_len: usize,
) -> ! {
    let rt = rt();
    flush(rt);
    // SAFETY: a readable byte string (the contract).
    let msg = unsafe { bytes(msg, msg_len) };
    let mut line = Vec::with_capacity(msg_len + loc_len + 12);
    line.extend_from_slice(b"trap: ");
    line.extend_from_slice(msg);
    if loc_len > 0 {
        line.extend_from_slice(b" at ");
        // SAFETY: a readable byte string (the contract).
        line.extend_from_slice(unsafe { bytes(loc, loc_len) });
    }
    line.push(b'\n');
    write_stderr_raw(&line);
    if rt.settings.backtrace {
        crate::backtrace::print_here();
    }
    finish(rt);
    std::process::exit(101)
}

/// Ends the program with `code` as `main` returning would (stdout
/// flushed, the exit reports printed), from wherever it runs.
pub fn exit_program(code: i32) -> ! {
    finish(rt());
    std::process::exit(code)
}

/// Buffered stdout (flushed at finish and before a trap); stderr is written directly.
///
/// # Safety
/// `(p, len)` must be a readable byte string.
#[no_mangle]
pub unsafe extern "C" fn sspur_write_stdout(p: *const u8, len: usize) {
    let rt = rt();
    // SAFETY: a readable byte string (the contract).
    let data = unsafe { bytes(p, len) };
    if rt.stdout.len() + data.len() > STDOUT_BUFFER {
        flush(rt);
    }
    if data.len() >= STDOUT_BUFFER {
        write_fd(1, data);
    } else {
        if rt.stdout.capacity() == 0 {
            rt.stdout.reserve(STDOUT_BUFFER);
        }
        rt.stdout.extend_from_slice(data);
    }
}

/// Writes to stderr at once (after nothing: stdout stays buffered).
///
/// # Safety
/// `(p, len)` must be a readable byte string.
#[no_mangle]
pub unsafe extern "C" fn sspur_write_stderr(p: *const u8, len: usize) {
    // SAFETY: a readable byte string (the contract).
    write_stderr_raw(unsafe { bytes(p, len) });
}

/// Writes out the stdout buffer.
#[no_mangle]
pub extern "C" fn sspur_flush_stdout() {
    flush(rt());
}

/// Flushes stdout and prints the reports asked for (SSPUR_GC_STATS, SSPUR_ALLOC_REPORT) to stderr. Called when main returns.
#[no_mangle]
pub extern "C" fn sspur_rt_finish() {
    finish(rt());
}

/// Check mode, called by a memory-fault handler: a freed block's 0xA5
/// fill read as a pointer faults before any collection can report it, so
/// the fault (`how`) is reported here, naming each quarantined block
/// that one of `words` (the faulting thread's registers and stack) points
/// into, and the process aborts as on a double free. Returns outside
/// check mode.
pub fn check_fault_report(how: &str, loc: &str, words: &mut dyn Iterator<Item = usize>) {
    let rt = rt();
    if rt.mode != MemMode::Check {
        return;
    }
    // The first line goes out with bare writes, before any formatting.
    for part in [
        &b"sspur check: use of a freed block in "[..],
        loc.as_bytes(),
        b": ",
        how.as_bytes(),
        b" (a freed block's 0xA5 fill was read as a pointer)\n",
    ] {
        write_stderr_raw(part);
    }
    let mut found = [0usize; 8];
    let mut n = 0;
    for w in words {
        let id = rt.heap.map_get(w);
        if id == 0 {
            continue;
        }
        let page = &rt.heap.pages[id as usize - 1];
        let i = page.index_of(w);
        if i < page.nblocks && crate::heap::Page::bit(&page.quarantine, i) {
            let base = page.block_addr(i);
            if !found[..n].contains(&base) && n < found.len() {
                found[n] = base;
                n += 1;
            }
        }
    }
    let mut msg = String::new();
    for &base in &found[..n] {
        let id = rt.heap.map_get(base) as usize - 1;
        let page = &rt.heap.pages[id];
        let i = page.index_of(base);
        msg.push_str(&format!(
            "sspur check: a freed {}-byte block is still in use: allocated at {}, freed at {}\n",
            page.block_size,
            rt.site_name(page.sites.get(i).copied().unwrap_or(0)),
            rt.site_name(rt.free_sites.get(&base).copied().unwrap_or(0)),
        ));
    }
    flush(rt);
    write_stderr_raw(msg.as_bytes());
    std::process::abort()
}

/// The trap of a fatal signal (the `stack overflow` trap), for a signal
/// handler on the program thread: `trap: MSG at LOC` goes to stderr with
/// bare write(2) calls before anything else (nothing allocated or
/// formatted first); then stdout's buffer is written out, the exit reports
/// are printed when they were asked for (that formats, so it is the last
/// thing tried), and the process ends with `_exit(101)`.
///
/// The call chain follows the first line (`fault`: the faulting context,
/// see `backtrace::print_at_fault`), unless `SSPUR_BACKTRACE=0`. When the
/// chain repeats a cycle, it starts at the cycle's canonical frame and LOC
/// is that frame's definition (`backtrace::overflow_skip`), so both
/// backends name the same frame.
pub fn trap_from_signal(msg: &[u8], loc: &[u8], fault: crate::backtrace::Fault) -> ! {
    // The chain's canonical start, and the position it names.
    let (skip, loc) = match crate::backtrace::overflow_at_fault(fault) {
        Some((skip, def)) => (skip, def.as_bytes()),
        None => (0, loc),
    };
    write_fd(2, b"trap: ");
    write_fd(2, msg);
    if !loc.is_empty() {
        write_fd(2, b" at ");
        write_fd(2, loc);
    }
    write_fd(2, b"\n");
    let rt = crate::state::rt_unchecked();
    if rt.settings.backtrace {
        crate::backtrace::print_at_fault(fault, skip);
    }
    flush(rt);
    if rt.settings.gc_stats != crate::config::StatsMode::Off || rt.settings.alloc_report {
        finish(rt);
    }
    // SAFETY: _exit has no preconditions; it runs no atexit handler.
    unsafe { libc::_exit(101) }
}
