//! String builders live in the heap: `finish` frees the builder and its
//! buffer (counted as freed by the runtime), and a builder never finished
//! is garbage the collector reclaims.

mod common;

use common::*;
use rt::helpers::text::{
    sspur_sb_finish, sspur_sb_int, sspur_sb_new, sspur_sb_new_sep, sspur_sb_piece, sspur_sb_str,
};

fn live() -> u64 {
    rt::stats().live_blocks()
}

/// A heap copy of `s` (a separator the builder must not keep a pointer to).
fn heap_str(s: &str) -> (u64, u64) {
    let p = alloc(s.len(), 0);
    // SAFETY: `p` is a fresh block of `s.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len()) };
    (p as u64, s.len() as u64)
}

#[test]
fn finish_frees_the_builder_and_its_buffers() {
    let _g = fresh(counting());
    let piece = "p".repeat(100);
    let (sep, sep_len) = heap_str(", ");
    let before = live();
    let mut want = Vec::new();
    // SAFETY: live strings and a live builder throughout.
    let got = unsafe {
        let b = sspur_sb_new_sep(sep, sep_len, 0);
        // The separator's own block may go: the builder holds a copy.
        rt::sspur_free(sep as *mut u8, 0);
        for _ in 0..1000 {
            sspur_sb_piece(b, piece.as_ptr() as u64, piece.len() as u64, 0);
            want.push(piece.clone());
        }
        sspur_sb_finish(b, 0)
    };
    let want = want.join(", ");
    assert_eq!(got.1 as usize, want.len());
    // SAFETY: the fresh string `got`.
    let bytes = unsafe { std::slice::from_raw_parts(got.0 as *const u8, got.1 as usize) };
    assert_eq!(bytes, want.as_bytes());
    // Only the result is left (the separator was freed above).
    assert_eq!(live(), before);
    let s = rt::stats();
    // The builder, its copy of the separator and every buffer it outgrew
    // (102 KB grown by doubling from 32 bytes: a dozen).
    assert!(s.counters.freed_internal_blocks >= 12, "{:?}", s.counters);
}

#[test]
fn ints_and_strings() {
    let _g = fresh(counting());
    let before = live();
    let text = "x=";
    // SAFETY: a live builder and a static string.
    let got = unsafe {
        let b = sspur_sb_new(0);
        for v in [0, -1, 42, i64::MIN, i64::MAX] {
            sspur_sb_str(b, text.as_ptr() as u64, text.len() as u64);
            sspur_sb_int(b, v);
        }
        sspur_sb_finish(b, 0)
    };
    // SAFETY: the fresh string `got`.
    let bytes = unsafe { std::slice::from_raw_parts(got.0 as *const u8, got.1 as usize) };
    assert_eq!(
        std::str::from_utf8(bytes).unwrap(),
        "x=0x=-1x=42x=-9223372036854775808x=9223372036854775807"
    );
    assert_eq!(live(), before + 1);
}

#[test]
fn an_unfinished_builder_is_collected() {
    on_fresh_stack(an_unfinished_builder_is_collected_body);
}

#[inline(never)]
fn an_unfinished_builder_is_collected_body() {
    let _g = fresh(counting());
    let before = live();
    let masked = abandon_builders(100);
    assert!(live() >= before + 200, "a builder and its buffer each");
    collect();
    assert_reclaimed(&masked, "unfinished builders");
    assert!(live() <= before + 2 * STRAY_ALLOWANCE as u64);
    assert!(rt::stats().counters.collected_blocks >= 200 - 2 * STRAY_ALLOWANCE as u64);
}

/// Builders with a few pieces each, never finished; their masked addresses.
#[inline(never)]
fn abandon_builders(n: usize) -> Vec<usize> {
    let piece = "q".repeat(50);
    (0..n)
        .map(|_| {
            let b = sspur_sb_new(0);
            for _ in 0..3 {
                // SAFETY: a live builder and a live string.
                unsafe { sspur_sb_str(b, piece.as_ptr() as u64, piece.len() as u64) };
            }
            b as usize ^ MASK
        })
        .collect()
}
