//! String builders (interpolation and the push-then-join rewrite), display
//! of values, printing, program arguments and input.
//!
//! A builder holds only copied bytes, never program pointers, so it lives
//! in a Rust allocation; the finished string is a fresh rt block.

use super::types::{self, bytes, with_table};
use super::{str::fresh, trap_at, Pair};
use std::sync::Mutex;

/// A string builder; `sep` goes between pieces pushed with
/// [`sspur_sb_piece`].
pub struct Builder {
    buf: Vec<u8>,
    sep: Vec<u8>,
    pieces: usize,
}

/// A new builder (interpolation).
pub extern "C" fn sspur_sb_new() -> *mut Builder {
    Box::into_raw(Box::new(Builder {
        buf: Vec::new(),
        sep: Vec::new(),
        pieces: 0,
    }))
}

/// A new builder that puts `sep` between pieces.
///
/// # Safety
/// `(s, len)` must be a live string.
pub unsafe extern "C" fn sspur_sb_new_sep(s: u64, len: u64) -> *mut Builder {
    let b = sspur_sb_new();
    unsafe { (*b).sep = bytes(s, len).to_vec() };
    b
}

/// Appends string bytes.
///
/// # Safety
/// `b` must be a live builder and `(p, len)` a live string.
pub unsafe extern "C" fn sspur_sb_str(b: *mut Builder, p: u64, len: u64) {
    unsafe {
        let b = &mut *b;
        reserve(&mut b.buf, len as usize);
        b.buf.extend_from_slice(bytes(p, len))
    }
}

/// Room for `more` bytes in a builder, or the `out of memory` trap: a
/// builder never grows past the heap limit its finished string must fit
/// in, and its growth never aborts.
fn reserve(buf: &mut Vec<u8>, more: usize) {
    let fits = buf.len().saturating_add(more) <= crate::state::rt().heap.max_heap;
    if !fits || buf.try_reserve(more).is_err() {
        super::mem::trap(b"out of memory", b"");
    }
}

/// Appends a piece, after the separator unless it is the first.
///
/// # Safety
/// `b` must be a live builder and `(p, len)` a live string.
pub unsafe extern "C" fn sspur_sb_piece(b: *mut Builder, p: u64, len: u64) {
    unsafe {
        let b = &mut *b;
        reserve(&mut b.buf, b.sep.len() + len as usize);
        if b.pieces > 0 {
            b.buf.extend_from_slice(&b.sep);
        }
        b.pieces += 1;
        b.buf.extend_from_slice(bytes(p, len));
    }
}

/// Appends an Int in decimal.
///
/// # Safety
/// `b` must be a live builder.
pub unsafe extern "C" fn sspur_sb_int(b: *mut Builder, v: i64) {
    use std::io::Write;
    unsafe {
        let _ = write!((*b).buf, "{v}");
    }
}

/// Appends the display of the value of type `t` stored at `v`.
///
/// # Safety
/// `b` must be a live builder and `v` point at a value of type `t`.
pub unsafe extern "C" fn sspur_sb_value(b: *mut Builder, v: *const u64, t: u32) {
    with_table(|table| unsafe { types::show(table, t, v, true, &mut (*b).buf) })
}

/// The builder's contents as a fresh string; frees the builder.
///
/// # Safety
/// `b` must be a live builder; it is dead afterwards.
pub unsafe extern "C" fn sspur_sb_finish(b: *mut Builder, site: u32) -> Pair {
    let b = unsafe { Box::from_raw(b) };
    fresh(&b.buf, site)
}

/// `print(s)` (`to == 1`) or `log(s)` (`to == 2`) of a string.
///
/// # Safety
/// `(p, len)` must be a live string.
pub unsafe extern "C" fn sspur_print_str(p: u64, len: u64, to: u64) {
    let mut line = unsafe { bytes(p, len) }.to_vec();
    line.push(b'\n');
    super::mem::write_out(to, &line);
}

/// `print(x)` / `log(x)` of a value of type `t` stored at `v`.
///
/// # Safety
/// `v` must point at a value of type `t`.
pub unsafe extern "C" fn sspur_print_value(v: *const u64, t: u32, to: u64) {
    let mut line = Vec::new();
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
pub extern "C" fn sspur_args(site: u32) -> Pair {
    let args = ARGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let out = super::list::alloc_list(args.len() as u64, 16, true, site) as *mut u64;
    for (i, a) in args.iter().enumerate() {
        let s = fresh(a.as_bytes(), site);
        unsafe {
            out.add(2 * i).write(s.0);
            out.add(2 * i + 1).write(s.1);
        }
    }
    Pair(out as u64, args.len() as u64)
}

/// `read_file(path)`; traps when it cannot be read or is not UTF-8.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
pub unsafe extern "C" fn sspur_read_file(
    p: u64,
    len: u64,
    site: u32,
    loc: u64,
    loc_len: u64,
) -> Pair {
    let path = String::from_utf8_lossy(unsafe { bytes(p, len) }).into_owned();
    match std::fs::read(&path) {
        Ok(data) => {
            if std::str::from_utf8(&data).is_err() {
                trap_at(&format!("not valid UTF-8: {path}"), loc, loc_len);
            }
            fresh(&data, site)
        }
        Err(e) => trap_at(
            &format!("cannot read file {path:?}: {}", io_reason(&e)),
            loc,
            loc_len,
        ),
    }
}

/// The reason of an I/O error without Rust's " (os error N)" suffix.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `read_stdin()`; traps when stdin is not UTF-8.
///
/// # Safety
/// `loc` must be a location string.
pub unsafe extern "C" fn sspur_read_stdin(site: u32, loc: u64, loc_len: u64) -> Pair {
    use std::io::Read;
    let mut data = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut data) {
        trap_at(
            &format!("cannot read file \"stdin\": {}", io_reason(&e)),
            loc,
            loc_len,
        );
    }
    if std::str::from_utf8(&data).is_err() {
        trap_at("not valid UTF-8: stdin", loc, loc_len);
    }
    fresh(&data, site)
}
