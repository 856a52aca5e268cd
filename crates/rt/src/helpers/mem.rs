//! The helpers' view of the core allocator and output (crates/rt/src/abi.rs).

use std::sync::RwLock;

/// Location (`path:line:col`) of each allocation site, site id `i + 1` at
/// index `i`; where an `out of memory` trap points.
static SITE_LOCS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Records where each allocation site is, for `out of memory` traps.
pub fn set_site_locs(locs: Vec<String>) {
    *SITE_LOCS.write().unwrap_or_else(|e| e.into_inner()) = locs;
}

/// The site of the tuples a list-making helper (enumerate, zip, entries)
/// puts in the list it makes at `site`: compiled code registers it right
/// after the list's own site, so statistics report the two apart.
pub(crate) fn element_site(site: u32) -> u32 {
    if site == 0 {
        0
    } else {
        site + 1
    }
}

/// A heap block of `bytes` (`ptrs`: a zeroed pointer block); traps
/// `out of memory` at the site's location when the allocation fails.
pub(crate) fn alloc(bytes: usize, ptrs: bool, site: u32) -> *mut u8 {
    // `sspur_alloc`'s body, called directly: the exported symbol is
    // reached through the GOT from inside the static library.
    let p = crate::state::rt().alloc(bytes, ptrs as usize, site);
    if p.is_null() {
        out_of_memory_at_site(site);
    }
    p
}

/// The `out of memory` trap at allocation site `site`.
pub(crate) fn out_of_memory_at_site(site: u32) -> ! {
    let loc = {
        let locs = SITE_LOCS.read().unwrap_or_else(|e| e.into_inner());
        (site as usize)
            .checked_sub(1)
            .and_then(|i| locs.get(i))
            .cloned()
            .unwrap_or_default()
    };
    trap(b"out of memory", loc.as_bytes())
}

/// A free of one of the runtime's own temporaries.
///
/// # Safety
/// Nothing may use the block holding `p` afterwards.
pub(crate) unsafe fn free_temp(p: *mut u8) {
    // SAFETY: the caller's contract is free_temp's.
    unsafe { crate::free_temp(p) }
}

/// The start of the block holding `p` (interior pointers included).
pub(crate) fn block_of(p: *const u8) -> *mut u8 {
    crate::block_of(p).map_or(std::ptr::null_mut(), |(b, _)| b)
}

/// The `out of memory` trap at a location string.
///
/// # Safety
/// `(loc, loc_len)` must be a location string, as for [`super::trap_at`].
pub(crate) unsafe fn out_of_memory(loc: u64, loc_len: u64) -> ! {
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe { super::trap_at("out of memory", loc, loc_len) }
}

/// Writes to stdout (`to == 1`, buffered) or stderr (`to == 2`, at once;
/// `to == 3`, `eprint`, after flushing stdout).
pub(crate) fn write_out(to: u64, bytes: &[u8]) {
    if to == 3 {
        crate::abi::sspur_flush_stdout();
    }
    // SAFETY: `bytes` is a live slice.
    unsafe {
        if to == 1 {
            crate::abi::sspur_write_stdout(bytes.as_ptr(), bytes.len());
        } else {
            crate::abi::sspur_write_stderr(bytes.as_ptr(), bytes.len());
        }
    }
}

/// Flushes stdout, prints the trap and exits with 101.
pub(crate) fn trap(msg: &[u8], loc: &[u8]) -> ! {
    // SAFETY: two live slices.
    unsafe { crate::abi::sspur_trap(msg.as_ptr(), msg.len(), loc.as_ptr(), loc.len()) }
}
