//! Program I/O beyond printing: `exit`, `write_file`, `append_file` and
//! `read_lines`. The plain functions (`exit_code`, `write_text`,
//! `io_reason`) are shared with the interpreter, so both backends accept
//! the same codes and word their messages alike.

use super::types::bytes;
use super::{str::fresh, trap_at, Pair};

/// The process exit code `exit(code)` asks for, or the trap message when
/// it is outside 0..=255.
pub fn exit_code(code: i64) -> Result<i32, String> {
    match u8::try_from(code) {
        Ok(c) => Ok(i32::from(c)),
        Err(_) => Err(format!("exit code {code} is not in 0..=255")),
    }
}

/// Writes (or with `append`, appends) `text` to the file at `path`,
/// creating it; the error is the message `write_file` returns.
pub fn write_text(path: &str, text: &[u8], append: bool) -> Result<(), String> {
    use std::io::Write;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path);
    let verb = if append { "append to" } else { "write" };
    file.and_then(|mut f| f.write_all(text))
        .map_err(|e| format!("cannot {verb} file {path:?}: {}", io_reason(&e)))
}

/// The reason of an I/O error without Rust's " (os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `exit(code)`: flushes stdout, prints the exit reports and ends the
/// process with `code`; traps when the code is outside 0..=255.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_exit(code: i64, loc: u64, loc_len: u64) -> ! {
    match exit_code(code) {
        Ok(c) => crate::abi::exit_program(c),
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        Err(msg) => unsafe { trap_at(&msg, loc, loc_len) },
    }
}

/// `write_file(path, text)` (`append == 0`) and `append_file(path, text)`:
/// `(0, 0)` when written, else the error message as a fresh string.
///
/// # Safety
/// `(p, len)` and `(tp, tlen)` must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_write_file(
    p: u64,
    len: u64,
    tp: u64,
    tlen: u64,
    append: u64,
    site: u32,
) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), copied at once.
    let path = String::from_utf8_lossy(unsafe { bytes(p, len) }).into_owned();
    // SAFETY: `(tp, tlen)` is a live string (the contract); nothing
    // allocates while it is borrowed.
    let text = unsafe { bytes(tp, tlen) };
    match write_text(&path, text, append != 0) {
        Ok(()) => Pair(0, 0),
        Err(msg) => fresh(msg.as_bytes(), site),
    }
}

/// `read_lines()`: the rest of stdin as a fresh list of fresh strings, cut
/// as `Str.lines` cuts; traps when stdin cannot be read or is not UTF-8.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_read_lines(site: u32, loc: u64, loc_len: u64) -> Pair {
    // SAFETY: `loc` is a location string (this function's contract).
    let text = unsafe { super::text::stdin_text(loc, loc_len) };
    let lines: Vec<&str> = text.lines().collect();
    super::text::fresh_strs(&lines, site)
}
