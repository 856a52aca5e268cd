//! The heap limit, applied to the same values the native runtime applies it
//! to (docs/runtime.md, `SSPUR_MAX_HEAP_MB`): a list buffer or string block
//! that would not fit in the limit is the `out of memory` trap, at once, in
//! both backends. Sizes are the native layout's: a string block is its
//! bytes; a list buffer a 16-byte header and `cap` elements of 16 bytes
//! (strings and lists) or 8 (everything else).
//!
//! Growth of a program value's Rust storage goes through `try_reserve`, so
//! an allocation the system refuses is the same trap, never an abort.

use crate::value::Value;

/// The limit in bytes (read once; a bad `SSPUR_MAX_HEAP_MB` is reported by
/// the CLI before the run, here it falls back to the default).
pub(crate) fn max_heap() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        rt::Settings::from_env()
            .map(|s| s.max_heap())
            .unwrap_or_else(|_| rt::config::default_max_heap())
    })
}

/// Native bytes of one element of a list holding `sample`.
pub(crate) fn elem_bytes(sample: Option<&Value>) -> u128 {
    match sample {
        Some(Value::Str(_)) | Some(Value::List(_)) => 16,
        _ => 8,
    }
}

/// Whether a list buffer of `cap` elements of `elem` bytes fits.
pub(crate) fn list_fits(cap: u128, elem: u128) -> bool {
    16 + cap.saturating_mul(elem) <= max_heap() as u128
}

/// Whether a string block of `bytes` fits.
pub(crate) fn str_fits(bytes: u128) -> bool {
    bytes <= max_heap() as u128
}

/// Room for `more` items in `v`, or false (the caller traps).
pub(crate) fn reserve<T>(v: &mut Vec<T>, more: usize) -> bool {
    v.try_reserve(more).is_ok()
}

/// A new string of `bytes` capacity, or None (the caller traps).
pub(crate) fn string_with(bytes: usize) -> Option<String> {
    let mut s = String::new();
    s.try_reserve_exact(bytes).ok()?;
    Some(s)
}
