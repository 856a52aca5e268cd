//! String builders (interpolation and the push-then-join rewrite), display
//! of values, printing, program arguments and input.
//!
//! A push-then-join builder lives in the rt heap, so the collector sees it:
//! the builder is a pointer block ([`Builder`]) and its bytes a data block
//! it points to; an interpolation's builder lives in its caller's frame
//! (the collector scans the stack) and only its bytes in the heap. A
//! builder that is never finished (an early return between the pushes and
//! the join, a hole that returns) is garbage like any other block and is
//! reclaimed and counted by the collector; [`sspur_sb_finish`] frees both
//! blocks at once, [`sspur_sb_finish_frame`] the bytes.

use super::io::io_reason;
use super::types::{self, bytes, with_table};
use super::{str::copy_bytes, str::fresh, trap_at, Pair};
use crate::heap::{DATA, POINTER};
use std::sync::Mutex;

/// A string builder, an rt pointer block. `buf` is a data block of `cap`
/// bytes (null while empty) whose first `len` bytes are the contents;
/// `sep` goes between pieces pushed with [`sspur_sb_piece`]: a static
/// string, or a data block of the builder's own when the separator was in
/// the heap (`sep_owned`). `site` is where an `out of memory` trap while
/// it grows points: the interpolation, or the piece being pushed.
#[repr(C)]
pub struct Builder {
    buf: *mut u8,
    len: usize,
    cap: usize,
    sep: *const u8,
    sep_len: usize,
    sep_owned: usize,
    pieces: usize,
    site: usize,
}

/// The smallest buffer a builder allocates: the smallest size class, so
/// that a short string can keep its builder's buffer (see
/// [`sspur_sb_finish`]).
const MIN_CAP: usize = 16;

/// The `out of memory` trap at a builder's site.
///
/// # Safety
/// `b` must be a live builder.
unsafe fn out_of_memory(b: *mut Builder) -> ! {
    // SAFETY: `b` is a live builder (the caller's contract).
    super::mem::out_of_memory_at_site(unsafe { (*b).site } as u32)
}

/// A new builder for the interpolation at allocation site `site`.
#[no_mangle]
pub extern "C" fn sspur_sb_new(site: u32) -> *mut Builder {
    let b = crate::alloc_temp(std::mem::size_of::<Builder>(), POINTER as u32) as *mut Builder;
    if b.is_null() {
        super::mem::out_of_memory_at_site(site);
    }
    // A pointer block is zeroed when handed out: an empty builder with no
    // buffer and no separator, as it should start.
    // SAFETY: `b` is a fresh builder block.
    unsafe { (*b).site = site as usize };
    b
}

/// A new builder that puts `sep` between pieces; `site` is the first
/// piece's until a piece is pushed.
///
/// # Safety
/// `(s, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_new_sep(s: u64, len: u64, site: u32) -> *mut Builder {
    let b = sspur_sb_new(site);
    if len == 0 {
        return b;
    }
    let (sep, owned) = if crate::block_of(s as *const u8).is_some() {
        // A heap separator may be freed before the join: keep a copy.
        let copy = crate::alloc_temp(len as usize, DATA as u32);
        if copy.is_null() {
            // SAFETY: `b` is live (in this frame).
            unsafe { out_of_memory(b) };
        }
        // SAFETY: `(s, len)` is a live string and `copy` a fresh block of
        // `len` bytes; they cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(s as *const u8, copy, len as usize) };
        (copy as *const u8, 1)
    } else {
        (s as *const u8, 0)
    };
    // SAFETY: `b` is a fresh builder block, live (it is in a local).
    unsafe {
        (*b).sep = sep;
        (*b).sep_len = len as usize;
        (*b).sep_owned = owned;
    }
    b
}

/// Makes room for `more` bytes after the contents and returns where they
/// go, or traps `out of memory`: a builder never grows past the heap limit
/// its finished string must fit in. A large buffer grows in place when
/// its mapping has room; otherwise the buffer at least doubles and the old
/// one is freed once copied.
///
/// # Safety
/// `b` must be a live builder.
#[inline(always)]
unsafe fn reserve(b: *mut Builder, more: usize) -> *mut u8 {
    // SAFETY: `b` is a live builder (the caller's contract).
    let (buf, len, cap) = unsafe { ((*b).buf, (*b).len, (*b).cap) };
    match len.checked_add(more) {
        // SAFETY: `len <= cap`, inside the buffer (or the null buffer at 0).
        Some(need) if need <= cap => unsafe { buf.add(len) },
        // SAFETY: `b` is live (the caller's contract).
        _ => unsafe { grow(b, more) },
    }
}

/// [`reserve`] when the buffer is too small: grows it (out of line, so the
/// common case stays a compare).
///
/// # Safety
/// `b` must be a live builder.
#[inline(never)]
unsafe fn grow(b: *mut Builder, more: usize) -> *mut u8 {
    // SAFETY: `b` is a live builder (the caller's contract).
    let (buf, len, cap) = unsafe { ((*b).buf, (*b).len, (*b).cap) };
    let Some(need) = len.checked_add(more) else {
        // SAFETY: `b` is live.
        unsafe { out_of_memory(b) }
    };
    let max = crate::state::rt().heap.max_heap;
    if need > max {
        // SAFETY: `b` is live.
        unsafe { out_of_memory(b) };
    }
    if !buf.is_null() && need > crate::heap::MAX_SMALL {
        // A large buffer grows into its mapping by as little as it needs:
        // no copy, so doubling would gain nothing, and a buffer the size
        // of its string becomes the string (`contents`).
        if let Some(size) = crate::grow_in_place(buf, need) {
            // SAFETY: `b` is live; its buffer now holds `size >= need`
            // bytes, so `len < size`.
            unsafe {
                (*b).cap = size;
                return buf.add(len);
            }
        }
    }
    let want = need.max(cap.saturating_mul(2)).max(MIN_CAP).min(max);
    let Some(new_cap) = crate::heap::block_size_for(want) else {
        // SAFETY: `b` is live.
        unsafe { out_of_memory(b) }
    };
    // The builder stays reachable during this allocation (the caller's
    // frame holds it), and so does the old buffer, through the builder.
    let nb = crate::alloc_temp(new_cap, DATA as u32);
    if nb.is_null() {
        // SAFETY: `b` is live.
        unsafe { out_of_memory(b) };
    }
    // SAFETY: the old buffer holds `len` initialised bytes; `nb` is a
    // fresh block of `new_cap >= need > len` bytes, disjoint from it; `b`
    // is live.
    unsafe {
        if len > 0 {
            std::ptr::copy_nonoverlapping(buf, nb, len);
        }
        (*b).buf = nb;
        (*b).cap = new_cap;
    }
    // The builder may be old; the new buffer is young.
    crate::remember(b as *const u8);
    if !buf.is_null() {
        // SAFETY: the old buffer, copied; the builder no longer points at it.
        unsafe { crate::free_temp(buf) };
    }
    // SAFETY: `len < new_cap`.
    unsafe { nb.add(len) }
}

/// Appends `data` (which must not be the builder's own buffer).
///
/// # Safety
/// `b` must be a live builder.
unsafe fn append(b: *mut Builder, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    // SAFETY: `b` is live; `reserve` returns room for `data.len()` bytes,
    // in a block `data` cannot be part of (the buffer is never handed out).
    unsafe {
        let at = reserve(b, data.len());
        copy_bytes(data.as_ptr(), at, data.len());
        (*b).len += data.len();
    }
}

/// Appends string bytes.
///
/// # Safety
/// `b` must be a live builder and `(p, len)` a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_str(b: *mut Builder, p: u64, len: u64) {
    // SAFETY: the caller's contract: a live builder and a live string.
    unsafe { append(b, bytes(p, len)) }
}

/// Appends a piece, after the separator unless it is the first; a trap
/// while it grows points at `site`, the push.
///
/// # Safety
/// `b` must be a live builder and `(p, len)` a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_piece(b: *mut Builder, p: u64, len: u64, site: u32) {
    // SAFETY: `b` is a live builder, `(p, len)` a live string, and the
    // separator is static or the builder's own block, live while it is.
    unsafe {
        (*b).site = site as usize;
        let (sep, sep_len, pieces) = ((*b).sep, (*b).sep_len, (*b).pieces);
        let sep_len = if pieces > 0 { sep_len } else { 0 };
        (*b).pieces = pieces + 1;
        // Room for both at once, so a piece never doubles twice.
        let more = sep_len.saturating_add(len as usize);
        if more == 0 {
            return;
        }
        let at = reserve(b, more);
        copy_bytes(sep, at, sep_len);
        copy_bytes(p as *const u8, at.add(sep_len), len as usize);
        (*b).len += more;
    }
}

/// Appends an Int in decimal.
///
/// # Safety
/// `b` must be a live builder.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_int(b: *mut Builder, v: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // SAFETY: `b` is a live builder (the caller's contract).
    unsafe {
        if v < 0 {
            append(b, b"-");
        }
        append(b, &digits[i..]);
    }
}

/// Appends the display of the value of type `t` stored at `v`.
///
/// # Safety
/// `b` must be a live builder and `v` point at a value of type `t`.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_value(b: *mut Builder, v: *const u64, t: u32) {
    let mut shown = Vec::new();
    // SAFETY: `v` points at a value of type `t` (the caller's contract).
    with_table(|table| unsafe { types::show(table, t, v, true, &mut shown) });
    // SAFETY: `b` is a live builder.
    unsafe { append(b, &shown) }
}

/// The builder's contents as a fresh string; frees the builder and its
/// blocks (a free by the runtime, not a free at last use). When its buffer
/// is the block a fresh string of its length would get (the same size
/// class), the buffer becomes the string, with no copy; not while the
/// runtime counts allocations by site, whose reports name the string's
/// site.
///
/// # Safety
/// `b` must be a live builder; it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_finish(b: *mut Builder, site: u32) -> Pair {
    // SAFETY: the builder is a live heap block (the contract), dead once
    // its contents are taken.
    unsafe {
        let out = contents(b, site);
        crate::free_temp(b as *mut u8);
        out
    }
}

/// The builder's contents as a string; frees its buffer (unless it became
/// the string) and its separator copy, not the builder itself.
///
/// # Safety
/// `b` must be a live builder; only its words are read afterwards.
unsafe fn contents(b: *mut Builder, site: u32) -> Pair {
    // SAFETY: `b` is a live builder whose buffer (a data block of `cap`
    // bytes, only the builder's) holds `len` bytes; it stays reachable (it
    // is freed below) while `fresh` allocates.
    let (out, buf, sep, sep_owned) = unsafe {
        let (buf, len, cap) = ((*b).buf, (*b).len, (*b).cap);
        let keep = len > 0
            && crate::heap::block_size_for(len) == Some(cap)
            && !crate::state::rt().counting;
        let out = if keep {
            Pair(buf as u64, len as u64)
        } else {
            fresh(bytes(buf as u64, len as u64), site)
        };
        (
            out,
            if keep { std::ptr::null_mut() } else { buf },
            (*b).sep,
            (*b).sep_owned,
        )
    };
    // SAFETY: the builder is dead after this (the contract), and its buffer
    // (unless it became the string) and separator copy are its own.
    unsafe {
        if !buf.is_null() {
            crate::free_temp(buf);
        }
        if sep_owned != 0 {
            crate::free_temp(sep as *mut u8);
        }
    }
    out
}

/// The builder's contents as a fresh string, as [`sspur_sb_finish`] makes
/// it, for an interpolation's builder, which lives in the caller's frame:
/// compiled code zeroes its words there and sets its `site` (the state
/// [`sspur_sb_new`] gives), the collector sees its buffer through the
/// stack, and only the buffer is freed.
///
/// # Safety
/// `b` must be a live builder in the caller's frame; it is dead afterwards.
#[no_mangle]
pub unsafe extern "C" fn sspur_sb_finish_frame(b: *mut Builder, site: u32) -> Pair {
    // SAFETY: the contract is `contents`'s.
    unsafe { contents(b, site) }
}

/// The words of a [`Builder`] (compiled code reserves and zeroes them) and
/// the index of its `site` word.
pub const BUILDER_WORDS: usize = std::mem::size_of::<Builder>() / 8;
pub const BUILDER_SITE_WORD: usize = std::mem::offset_of!(Builder, site) / 8;

/// `print(s)` (`to == 1`), `log(s)` (`to == 2`) or `eprint(s)` (`to == 3`)
/// of a string.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_print_str(p: u64, len: u64, to: u64) {
    // SAFETY: `(p, len)` is a live string (the contract), copied at once.
    let mut line = unsafe { bytes(p, len) }.to_vec();
    line.push(b'\n');
    super::mem::write_out(to, &line);
}

/// `print(x)` / `log(x)` / `eprint(x)` of a value of type `t` stored at `v`.
///
/// # Safety
/// `v` must point at a value of type `t`.
#[no_mangle]
pub unsafe extern "C" fn sspur_print_value(v: *const u64, t: u32, to: u64) {
    let mut line = Vec::new();
    // SAFETY: `v` points at a live value of type `t` (the contract).
    with_table(|table| unsafe { types::show(table, t, v, true, &mut line) });
    line.push(b'\n');
    super::mem::write_out(to, &line);
}

static ARGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Sets what `args()` returns (the program arguments after the file).
pub fn set_args(args: Vec<String>) {
    *ARGS.lock().unwrap_or_else(|e| e.into_inner()) = args;
}

/// `args()`: a fresh list of fresh strings.
#[no_mangle]
pub extern "C" fn sspur_args(site: u32) -> Pair {
    let args = ARGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    fresh_strs(&args, site)
}

/// A fresh list of fresh copies of `strs` (`args()`, `read_lines()`).
pub(crate) fn fresh_strs<S: AsRef<str>>(strs: &[S], site: u32) -> Pair {
    let out = super::list::alloc_list(strs.len() as u64, 16, true, site) as *mut u64;
    for (i, a) in strs.iter().enumerate() {
        let s = fresh(a.as_ref().as_bytes(), site);
        // SAFETY: `out` is a fresh list of `strs.len()` two-word elements
        // (non-null inside this loop) and `i < strs.len()`; it stays in this
        // frame, which the collector scans, while `fresh` allocates.
        unsafe {
            out.add(2 * i).write(s.0);
            out.add(2 * i + 1).write(s.1);
        }
    }
    Pair(out as u64, strs.len() as u64)
}

/// `read_file(path)`; traps when it cannot be read or is not UTF-8.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_read_file(
    p: u64,
    len: u64,
    site: u32,
    loc: u64,
    loc_len: u64,
) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), copied at once.
    let path = String::from_utf8_lossy(unsafe { bytes(p, len) }).into_owned();
    match std::fs::read(&path) {
        Ok(data) => {
            if std::str::from_utf8(&data).is_err() {
                // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
                unsafe { trap_at(&format!("not valid UTF-8: {path}"), loc, loc_len) };
            }
            fresh(&data, site)
        }
        Err(e) => {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe {
                trap_at(
                    &format!("cannot read file {path:?}: {}", io_reason(&e)),
                    loc,
                    loc_len,
                )
            }
        }
    }
}

/// `read_stdin()`; traps when stdin is not UTF-8.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_read_stdin(site: u32, loc: u64, loc_len: u64) -> Pair {
    // SAFETY: `loc` is a location string (this function's contract).
    if let Some(text) = unsafe { stdin_into_block(site, loc, loc_len) } {
        return text;
    }
    // SAFETY: as above.
    let text = unsafe { stdin_text(loc, loc_len) };
    fresh(text.as_bytes(), site)
}

/// The bytes left to read in stdin when it is a regular file (`< file`),
/// which is how large inputs usually come; None for a pipe, a terminal or
/// an empty rest.
fn stdin_file_rest() -> Option<usize> {
    // SAFETY: fstat writes a `stat` for fd 0 into the zeroed local; lseek
    // with SEEK_CUR only reads the offset. Neither touches other memory.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(0, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let pos = libc::lseek(0, 0, libc::SEEK_CUR).max(0);
        let rest = usize::try_from(st.st_size.saturating_sub(pos)).ok()?;
        (rest > 0).then_some(rest)
    }
}

/// `read_stdin()` of a regular file read straight into the string's own
/// heap block, sized by the file: the text is never held twice (a buffer
/// then its copy), which doubled the peak memory of a program reading a
/// large input. None (nothing read) when the size is not known; a file that
/// turns out shorter or longer than its size goes the general way with
/// what was read.
///
/// # Safety
/// `loc` must be a location string.
unsafe fn stdin_into_block(site: u32, loc: u64, loc_len: u64) -> Option<Pair> {
    use std::io::Read;
    let want = stdin_file_rest()?;
    let p = super::mem::alloc(want, false, site);
    // SAFETY: `p` is a fresh data block of at least `want` bytes, owned
    // here; nothing else reads or writes it until it is returned or freed.
    let buf = unsafe { std::slice::from_raw_parts_mut(p, want) };
    let mut input = std::io::stdin().lock();
    let mut got = 0;
    let mut failed = None;
    while got < want {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let mut more = Vec::new();
    if failed.is_none() && got == want {
        failed = input.read_to_end(&mut more).err();
    }
    drop(input);
    if failed.is_some() || got < want || !more.is_empty() {
        let mut data = buf[..got].to_vec();
        data.append(&mut more);
        // SAFETY: `p` is this function's own block; `buf` is not used again.
        unsafe { super::mem::free_temp(p) };
        if let Some(e) = failed {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe { stdin_read_failed(&e, loc, loc_len) };
        }
        let Ok(text) = String::from_utf8(data) else {
            // SAFETY: as above.
            unsafe { trap_at("not valid UTF-8: stdin", loc, loc_len) }
        };
        return Some(fresh(text.as_bytes(), site));
    }
    if std::str::from_utf8(buf).is_err() {
        // SAFETY: as above; `buf` is not used again.
        unsafe {
            super::mem::free_temp(p);
            trap_at("not valid UTF-8: stdin", loc, loc_len)
        }
    }
    Some(Pair(p as u64, want as u64))
}

/// The trap of a failed read of stdin.
///
/// # Safety
/// `loc` must be a location string.
unsafe fn stdin_read_failed(e: &std::io::Error, loc: u64, loc_len: u64) -> ! {
    // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
    unsafe {
        trap_at(
            &format!("cannot read file \"stdin\": {}", io_reason(e)),
            loc,
            loc_len,
        )
    }
}

/// The rest of stdin; traps when it cannot be read or is not UTF-8.
///
/// # Safety
/// `loc` must be a location string.
pub(crate) unsafe fn stdin_text(loc: u64, loc_len: u64) -> String {
    use std::io::Read;
    let mut data = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut data) {
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        unsafe { stdin_read_failed(&e, loc, loc_len) };
    }
    match String::from_utf8(data) {
        Ok(text) => text,
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        Err(_) => unsafe { trap_at("not valid UTF-8: stdin", loc, loc_len) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_builder_grows_in_place_and_becomes_its_string() {
        let _lock = crate::helpers::test_lock();
        let piece = [b'x'; 1000];
        let b = sspur_sb_new(0);
        // SAFETY: `b` is the live builder made above and `piece` a live
        // string; the builder is finished once and not used afterwards.
        unsafe {
            let mut first_large = None;
            for _ in 0..300 {
                sspur_sb_piece(b, piece.as_ptr() as u64, 1000, 0);
                if (*b).cap > crate::heap::MAX_SMALL {
                    let buf = (*b).buf;
                    assert_eq!(*first_large.get_or_insert(buf), buf, "the buffer moved");
                }
            }
            let s = sspur_sb_finish(b, 0);
            assert_eq!(s.1, 300_000);
            assert_eq!(
                Some(s.0 as *mut u8),
                first_large,
                "the buffer is the string"
            );
            crate::free_temp(s.0 as *mut u8);
        }
    }
}
