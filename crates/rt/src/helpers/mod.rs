//! Value-level helpers for compiled code: strings, lists, maps, display.
//!
//! Every `extern "C"` function here is registered with the JIT by address
//! (see [`symbols`]); the value layout they assume is described in
//! [`types`]. Helpers that can trap take the trap's location as a
//! `(ptr, len)` string `path:line:col`.

pub mod io;
pub mod list;
pub mod map;
mod mem;
pub mod pieces;
pub use mem::set_site_locs;
pub mod str;
#[cfg(test)]
mod str_props;
pub mod text;
pub mod types;

/// Two words returned in registers (a string or a list).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair(pub u64, pub u64);

/// Traps with `message` at the location string `(loc, loc_len)`.
///
/// # Safety
/// `(loc, loc_len)` must be a location string: `loc_len` readable bytes at
/// `loc` (compiled code passes a static string of the program), or
/// `loc_len == 0`.
pub(crate) unsafe fn trap_at(message: &str, loc: u64, loc_len: u64) -> ! {
    // SAFETY: a location string (the contract), only read here.
    let loc = unsafe { types::bytes(loc, loc_len) };
    mem::trap(message.as_bytes(), loc)
}

/// Allocates a block of `bytes` for compiled code (`ptrs != 0`: a pointer
/// block the collector scans); traps `out of memory` at the site.
#[no_mangle]
pub extern "C" fn sspur_alloc_block(bytes: u64, ptrs: u64, site: u32) -> u64 {
    mem::alloc(bytes as usize, ptrs != 0, site) as u64
}

/// Traps with the string `(msg, len)` at `(loc, loc_len)`.
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_trap_msg(msg: u64, len: u64, loc: u64, loc_len: u64) -> ! {
    // SAFETY: `(msg, len)` is a live string (the contract), copied at once.
    let m = String::from_utf8_lossy(unsafe { types::bytes(msg, len) }).into_owned();
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe { trap_at(&m, loc, loc_len) }
}

/// The trap of a bad list index or `Str.byte` offset.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_trap_index(len: u64, index: i64, loc: u64, loc_len: u64) -> ! {
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe {
        trap_at(
            &format!("index out of bounds: the len is {len} but the index is {index}"),
            loc,
            loc_len,
        )
    }
}

/// The trap of a negative `take`/`drop`/`repeat` count.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_trap_count(n: i64, loc: u64, loc_len: u64) -> ! {
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe { trap_at(&format!("negative count: {n}"), loc, loc_len) }
}

/// The trap of `m[k]` for a missing key; `k` points at the key's words.
///
/// # Safety
/// `k` must point at a value of type `t`; `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_trap_key(k: *const u64, t: u32, loc: u64, loc_len: u64) -> ! {
    let mut shown = Vec::new();
    // SAFETY: `k` points at a live value of type `t` (the contract).
    types::with_table(|table| unsafe { types::show(table, t, k, false, &mut shown) });
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe {
        trap_at(
            &format!("key not found: {}", String::from_utf8_lossy(&shown)),
            loc,
            loc_len,
        )
    }
}

/// F64 `%` (the remainder with the dividend's sign, as Rust's `%`).
#[no_mangle]
pub extern "C" fn sspur_f64_rem(a: u64, b: u64) -> u64 {
    (f64::from_bits(a) % f64::from_bits(b)).to_bits()
}

/// `lo..hi` as a fresh list of Int.
/// The length of `lo..hi` for a pipeline that iterates it in place: traps
/// `out of memory` at the range's site exactly when building the range's
/// list could not fit in the heap limit, so fusing never turns that trap
/// into a long run.
#[no_mangle]
pub extern "C" fn sspur_range_len(lo: i64, hi: i64, site: u32) -> u64 {
    let n = if hi > lo {
        hi.wrapping_sub(lo) as u64
    } else {
        0
    };
    list::check_list_fits(n, 8, site);
    n
}

#[no_mangle]
pub extern "C" fn sspur_range(lo: i64, hi: i64, site: u32) -> Pair {
    let n = if hi > lo {
        hi.wrapping_sub(lo) as u64
    } else {
        0
    };
    let p = list::alloc_list(n, 8, false, site) as *mut i64;
    for i in 0..n as usize {
        // SAFETY: `p` is a fresh list of `n` 8-byte elements (non-null inside
        // this loop: `alloc_list` traps rather than return null) and `i < n`.
        unsafe { p.add(i).write(lo.wrapping_add(i as i64)) };
    }
    Pair(p as u64, n)
}

/// The runtime is single-threaded and global: unit tests that allocate
/// take this lock so the test harness's threads never share it.
#[cfg(test)]
pub(crate) fn test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // The runtime belongs to one thread: hand it to this one while the
    // lock is held.
    let rt = crate::state::rt_unchecked();
    if rt.owner != 0 {
        rt.owner = crate::state::current_thread();
    }
    guard
}
