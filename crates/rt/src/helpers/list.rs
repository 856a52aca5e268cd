//! List buffers: `[cap, used]` header words, then the elements; a list
//! value `(ptr, len)` points at an element of the buffer (views point into
//! the middle). Growth follows the rule in crates/ir: `push`/`concat`
//! write in place when the receiver ends at the buffer's in-use end and the
//! capacity suffices, else grow a large buffer in place within its mapping
//! (`Heap::grow_large`), else copy into a new buffer of capacity
//! `max(4, 2 * new_len)`. Lists built any other way have `cap == len`, and
//! an empty list is `(0, 0)`, never a block.

use super::types::{self, with_table, TyDesc};
use super::{mem, Pair};

const HEADER: usize = 16;
const MAX_SMALL: usize = crate::heap::MAX_SMALL;

/// A fresh buffer with `cap == used == len`; returns the element pointer
/// (null for an empty list).
pub(crate) fn alloc_list(len: u64, esize: u64, ptrs: bool, site: u32) -> *mut u8 {
    alloc_cap(len, len, esize, ptrs, site)
}

/// Traps `out of memory` at `site` when a buffer of `len` elements of
/// `esize` bytes could never fit in the heap limit.
pub(crate) fn check_list_fits(len: u64, esize: u64, site: u32) {
    let bytes = (len as u128) * (esize as u128) + HEADER as u128;
    if bytes > crate::state::rt().heap.max_heap as u128 {
        mem::out_of_memory_at_site(site);
    }
}

fn alloc_cap(cap: u64, used: u64, esize: u64, ptrs: bool, site: u32) -> *mut u8 {
    if cap == 0 {
        return std::ptr::null_mut();
    }
    let bytes = (cap as usize)
        .checked_mul(esize as usize)
        .and_then(|b| b.checked_add(HEADER))
        .unwrap_or(usize::MAX);
    let base = mem::alloc(bytes, ptrs, site) as *mut u64;
    // SAFETY: `mem::alloc` never returns null (it traps, also when `bytes`
    // overflowed to usize::MAX); the block holds HEADER + cap * esize >= 16
    // bytes, 16-byte aligned, so both header words and the element pointer
    // after them are in bounds.
    unsafe {
        base.write(cap);
        base.add(1).write(used);
        base.add(2) as *mut u8
    }
}

/// The header of the buffer holding element pointer `p` (of a non-empty
/// list).
fn header(p: u64) -> *mut u64 {
    mem::block_of(p as *const u8) as *mut u64
}

/// Sets a fresh list's capacity to its length (used by code that fills a
/// buffer allocated for a bound, like `filter`).
///
/// # Safety
/// `p` must be the element pointer of a fresh list buffer.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_seal(p: u64, len: u64) {
    if p != 0 {
        // SAFETY: a non-null element pointer of a fresh buffer (the
        // contract) sits HEADER bytes after the block start (`alloc_cap`),
        // so the two header words precede it in the same block; the buffer
        // is fresh, so nothing else reads them meanwhile.
        unsafe {
            let h = (p as *mut u64).sub(2);
            h.write(len);
            h.add(1).write(len);
        }
    }
}

/// Ends a buffer filled to `len` by compiled code (`filter`, `flat_map`):
/// seals it to `cap == len`, or frees it as a runtime temporary and gives
/// the empty list when nothing was kept.
///
/// # Safety
/// `p` must be null or the element pointer of a fresh list buffer.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_finish(p: u64, len: u64) -> u64 {
    if p == 0 {
        return 0;
    }
    if len == 0 {
        // SAFETY: a fresh buffer nothing else holds (the contract), empty.
        unsafe { mem::free_temp(mem::block_of(p as *const u8)) };
        return 0;
    }
    // SAFETY: `p` is the non-null element pointer of a fresh buffer.
    unsafe { sspur_list_seal(p, len) };
    p
}

/// Appends `(q, qlen)` to a buffer only the caller's loop holds
/// (`flat_map`), freeing the old buffer as a runtime temporary when it moves.
///
/// # Safety
/// `(p, len)` must be such a buffer (or empty), `(q, qlen)` a live list.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_append_tmp(
    p: u64,
    len: u64,
    q: u64,
    qlen: u64,
    esize: u64,
    ptrs: u64,
    site: u32,
) -> u64 {
    // SAFETY: both are live lists (the contract), as concat needs. When
    // concat moved the elements to a new buffer, the old one is held by the
    // caller's loop alone (the contract) and is not used again.
    unsafe {
        let r = sspur_list_concat(p, len, q, qlen, esize, ptrs, site);
        if r != p && p != 0 {
            mem::free_temp(mem::block_of(p as *const u8));
        }
        r
    }
}

/// A fresh list of `len` elements of `esize` bytes (uninitialized for
/// the caller to fill); null when `len` is 0.
#[no_mangle]
pub extern "C" fn sspur_list_alloc(len: u64, esize: u64, ptrs: u64, site: u32) -> u64 {
    alloc_list(len, esize, ptrs != 0, site) as u64
}

/// Room for `extra` more elements after `(p, len)`: returns the element
/// pointer of the result, in place when the growth rule allows, else a new
/// buffer with the old elements copied. The caller writes the new elements.
///
/// # Safety
/// `(p, len)` must be a live list of `esize`-byte elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_grow(
    p: u64,
    len: u64,
    extra: u64,
    esize: u64,
    ptrs: u64,
    site: u32,
) -> u64 {
    let new_len = len + extra;
    if new_len == 0 {
        return 0;
    }
    // SAFETY: a non-empty live list points into a heap list buffer (lists
    // are never static data), so `header(p)` is the buffer's block start and
    // its two header words are readable; the in-place path writes `used`
    // only when the list ends at the buffer's in-use end and `cap` holds the
    // extra elements, so the caller's writes stay inside the block; the
    // same holds when the heap grew the large block in place to `size`
    // bytes (`cap` is what fits in them). Else `q`
    // is a fresh buffer (non-null: `new_len > 0`) of `cap >= new_len`
    // elements, disjoint from the old one, and the copy of `len * esize`
    // bytes reads only the live list.
    unsafe {
        if len > 0 {
            let h = header(p);
            let (cap, used) = (h.read(), h.add(1).read());
            let start = h as u64 + HEADER as u64;
            let end = p + len * esize;
            if end == start + used * esize && used + extra <= cap {
                h.add(1).write(used + extra);
                if ptrs != 0 {
                    // The caller stores the new elements next, with no
                    // allocation in between: the buffer may be old.
                    crate::remember(h as *const u8);
                }
                return p;
            }
        }
        let cap = (2 * new_len).max(4);
        if len > 0 {
            // A large buffer the list ends at the in-use end of grows in
            // place into its mapping, as the in-place path above: the
            // address stays, so every list sharing the buffer stays valid.
            let h = header(p);
            let used = h.add(1).read();
            let start = h as u64 + HEADER as u64;
            let want = (cap as usize)
                .checked_mul(esize as usize)
                .and_then(|b| b.checked_add(HEADER));
            if p + len * esize == start + used * esize && want.is_some_and(|w| w > MAX_SMALL) {
                if let Some(size) = want.and_then(|w| crate::grow_in_place(h as *const u8, w)) {
                    h.write(((size - HEADER) as u64) / esize);
                    h.add(1).write(used + extra);
                    if ptrs != 0 {
                        crate::remember(h as *const u8);
                    }
                    return p;
                }
            }
        }
        let q = alloc_cap(cap, new_len, esize, ptrs != 0, site);
        if len > 0 {
            std::ptr::copy_nonoverlapping(p as *const u8, q, (len * esize) as usize);
        }
        q as u64
    }
}

/// `xs.concat(ys)`.
///
/// # Safety
/// Both must be live lists of `esize`-byte elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_concat(
    p: u64,
    len: u64,
    q: u64,
    qlen: u64,
    esize: u64,
    ptrs: u64,
    site: u32,
) -> u64 {
    // SAFETY: `(p, len)` is a live list, as grow needs; `r` then has room
    // for `len + qlen` elements, so the copy lands inside its buffer. `ptr::
    // copy` allows overlap (a list concatenated with a view of itself), and
    // `q` stays live across the growth: the caller holds it.
    unsafe {
        let r = sspur_list_grow(p, len, qlen, esize, ptrs, site);
        if qlen > 0 {
            std::ptr::copy(
                q as *const u8,
                (r + len * esize) as *mut u8,
                (qlen * esize) as usize,
            );
        }
        r
    }
}

/// `xs.reverse`.
///
/// # Safety
/// `(p, len)` must be a live list of `esize`-byte elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_reverse(
    p: u64,
    len: u64,
    esize: u64,
    ptrs: u64,
    site: u32,
) -> u64 {
    let q = alloc_list(len, esize, ptrs != 0, site);
    for i in 0..len {
        // SAFETY: `(p, len)` is a live list of `esize`-byte elements and `q`
        // a fresh disjoint one of the same length (non-null: `len > 0` in
        // this loop); element `i` goes to slot `len - 1 - i`, both in bounds.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (p + i * esize) as *const u8,
                q.add(((len - 1 - i) * esize) as usize),
                esize as usize,
            );
        }
    }
    q as u64
}

/// A copy of the list (`xs.set(i, v)` then writes element `i`).
///
/// # Safety
/// `(p, len)` must be a live list of `esize`-byte elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_copy(
    p: u64,
    len: u64,
    esize: u64,
    ptrs: u64,
    site: u32,
) -> u64 {
    let q = alloc_list(len, esize, ptrs != 0, site);
    if len > 0 {
        // SAFETY: `(p, len)` is a live list of `esize`-byte elements (the
        // contract) and `q` a fresh disjoint one of the same length,
        // non-null since `len > 0`.
        unsafe {
            std::ptr::copy_nonoverlapping(p as *const u8, q, (len * esize) as usize);
        }
    }
    q as u64
}

/// Element `i` of a list of type `t`'s elements.
fn elem(p: u64, i: usize, w: usize) -> *const u64 {
    (p as *const u64).wrapping_add(i * w)
}

/// `xs.sort` (stable) for elements of type `t`.
///
/// # Safety
/// `(p, len)` must be a live list of type-`t` elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_sort(p: u64, len: u64, t: u32, site: u32) -> u64 {
    with_table(|table| {
        let d = &table[t as usize];
        let w = types::words(d);
        let mut idx: Vec<usize> = (0..len as usize).collect();
        // SAFETY: `(p, len)` is a live list of type-`t` elements of `w`
        // words (the contract) and `a, b < len`, so both are live values.
        idx.sort_by(|&a, &b| unsafe { types::cmp(table, t, elem(p, a, w), elem(p, b, w)) });
        // SAFETY: every index in `idx` is below `len`.
        unsafe { gather(p, &idx, w, types::has_pointers(d), site) }
    })
}

/// A fresh list of the elements at `idx`.
///
/// # Safety
/// `p` must be a live list of `w`-word elements, every index in `idx`
/// below its length.
unsafe fn gather(p: u64, idx: &[usize], w: usize, ptrs: bool, site: u32) -> u64 {
    let q = alloc_list(idx.len() as u64, (w * 8) as u64, ptrs, site) as *mut u64;
    for (j, &i) in idx.iter().enumerate() {
        // SAFETY: element `i` of the live list is in bounds (the contract);
        // `q` is a fresh disjoint list of `idx.len()` elements (non-null
        // inside this loop), and `j < idx.len()`.
        unsafe { std::ptr::copy_nonoverlapping(elem(p, i, w), q.add(j * w), w) };
    }
    q as u64
}

/// `xs.sort_by(key)`, given the keys (a fresh list of type-`kt` values the
/// caller computed, which this frees as the runtime's temporary).
///
/// # Safety
/// `(p, len)` must be a live list of `esize`-byte elements and `keys` a
/// fresh list of `len` keys.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_sort_by(
    p: u64,
    len: u64,
    esize: u64,
    ptrs: u64,
    keys: u64,
    kt: u32,
    site: u32,
) -> u64 {
    let out = with_table(|table| {
        let kw = types::words(&table[kt as usize]);
        let mut idx: Vec<usize> = (0..len as usize).collect();
        // SAFETY: `keys` is a list of `len` type-`kt` keys (the contract)
        // and `a, b < len`.
        idx.sort_by(|&a, &b| unsafe {
            types::cmp(table, kt, elem(keys, a, kw), elem(keys, b, kw))
        });
        // SAFETY: `(p, len)` is a live list of `esize`-byte elements and
        // every index is below `len`.
        unsafe { gather(p, &idx, (esize / 8) as usize, ptrs != 0, site) }
    });
    if keys != 0 {
        // SAFETY: the key buffer made above, read for the last time.
        unsafe { mem::free_temp(mem::block_of(keys as *const u8)) };
    }
    out
}

/// `xs.unique` (first occurrences), as `(ptr, len)`.
///
/// # Safety
/// `(p, len)` must be a live list of type-`t` elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_unique(p: u64, len: u64, t: u32, site: u32) -> Pair {
    with_table(|table| {
        let d = &table[t as usize];
        let w = types::words(d);
        let mut seen: std::collections::HashMap<u64, Vec<usize>> = Default::default();
        let mut keep = Vec::new();
        for i in 0..len as usize {
            let e = elem(p, i, w);
            // SAFETY: `i < len`, so `e` is a live type-`t` element.
            let h = unsafe { types::hash(table, t, e) };
            let bucket = seen.entry(h).or_default();
            if !bucket
                .iter()
                // SAFETY: `j < i < len`: both are live type-`t` elements.
                .any(|&j| unsafe { types::eq(table, t, elem(p, j, w), e) })
            {
                bucket.push(i);
                keep.push(i);
            }
        }
        // SAFETY: every index in `keep` is below `len`.
        let q = unsafe { gather(p, &keep, w, types::has_pointers(d), site) };
        Pair(q, keep.len() as u64)
    })
}

/// `xs.contains(x)` for type-`t` elements; `x` points at the value words.
///
/// # Safety
/// `(p, len)` must be a live list and `x` a value of type `t`.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_contains(p: u64, len: u64, x: *const u64, t: u32) -> u64 {
    with_table(|table| {
        let w = types::words(&table[t as usize]);
        // SAFETY: `i < len`, so element `i` is a live type-`t` value, and
        // so is `x` (the contract).
        (0..len as usize).any(|i| unsafe { types::eq(table, t, elem(p, i, w), x) }) as u64
    })
}

/// Index of the least (`want_max == 0`) or greatest element, first on
/// ties (F64 by IEEE `<`/`>`, so a NaN is never chosen over a number it
/// follows); the caller has checked that the list is not empty.
///
/// # Safety
/// `(p, len)` must be a live non-empty list of type-`t` elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_extreme(p: u64, len: u64, t: u32, want_max: u64) -> u64 {
    with_table(|table| {
        let w = types::words(&table[t as usize]);
        let is_f64 = matches!(table[t as usize], TyDesc::F64);
        let mut best = 0;
        for i in 1..len as usize {
            let (x, b) = (elem(p, i, w), elem(p, best, w));
            let better = if is_f64 {
                // IEEE comparisons, as `<` and `>` do: a NaN never wins.
                // SAFETY: `best <= i < len`: both point at one-word F64
                // elements of the live list.
                let (x, b) = unsafe { (f64::from_bits(x.read()), f64::from_bits(b.read())) };
                if want_max != 0 {
                    x > b
                } else {
                    x < b
                }
            } else {
                // SAFETY: `best <= i < len`: both are live type-`t` values.
                let o = unsafe { types::cmp(table, t, x, b) };
                if want_max != 0 {
                    o.is_gt()
                } else {
                    o.is_lt()
                }
            };
            if better {
                best = i;
            }
        }
        best as u64
    })
}

/// `xs.counts`: a map from element to count in first-occurrence order.
///
/// # Safety
/// `(p, len)` must be a live list of type-`t` elements (Int, Bool or Str).
#[no_mangle]
pub unsafe extern "C" fn sspur_list_counts(p: u64, len: u64, t: u32, site: u32) -> *mut u64 {
    let is_str = with_table(|table| matches!(table[t as usize], TyDesc::Str));
    let w = if is_str { 2 } else { 1 };
    let kind = if is_str {
        super::map::KEY_STR
    } else {
        super::map::KEY_WORD
    };
    let m = super::map::sspur_map_new(kind, site);
    let keys = (0..len as usize).map(|i| {
        // SAFETY: `i < len`: element `i` of the live list has `w` words (two
        // for a Str key, a live string).
        unsafe {
            let e = elem(p, i, w);
            (e.read(), if is_str { e.add(1).read() } else { 0 })
        }
    });
    // SAFETY: `m` is the live map made above, held in this frame across the
    // allocations of its growth; the keys are the live list's elements.
    unsafe { super::map::counts_add_all(m, keys, site) };
    m
}

/// One more of key `(k0, k1)` in a map of counts (`counts`, one element
/// at a time: a list's, a piece's, a fused chain's).
///
/// # Safety
/// `m` must be a live map from the key's type to Int, `(k0, k1)` a live
/// key of that type (`k1` 0 for a one-word key).
#[no_mangle]
pub unsafe extern "C" fn sspur_counts_add(m: *mut u64, k0: u64, k1: u64, site: u32) {
    // SAFETY: the contract is `counts_add`'s.
    unsafe { super::map::counts_add(m, k0, k1, site) }
}

/// `xs.enumerate`: a fresh list of `(Int, T)` tuples.
///
/// # Safety
/// `(p, len)` must be a live list of `w`-word elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_enumerate(p: u64, len: u64, w: u64, site: u32) -> u64 {
    let out = alloc_list(len, 8, true, site) as *mut u64;
    for i in 0..len as usize {
        // SAFETY: `t` is a fresh non-null block of `1 + w` words, disjoint
        // from the list; element `i < len` of the live list has `w` words;
        // `out` is a fresh list of `len` words (non-null inside this loop),
        // kept in this frame while the tuples are allocated.
        unsafe {
            let t = mem::alloc(((1 + w) * 8) as usize, true, mem::element_site(site)) as *mut u64;
            t.write(i as u64);
            std::ptr::copy_nonoverlapping(elem(p, i, w as usize), t.add(1), w as usize);
            out.add(i).write(t as u64);
        }
    }
    out as u64
}

/// `xs.zip(ys)`: a fresh list of pairs, as long as the shorter list.
///
/// # Safety
/// Both must be live lists of `aw`- and `bw`-word elements.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_zip(
    p: u64,
    len: u64,
    aw: u64,
    q: u64,
    qlen: u64,
    bw: u64,
    site: u32,
) -> Pair {
    let n = len.min(qlen);
    let out = alloc_list(n, 8, true, site) as *mut u64;
    for i in 0..n as usize {
        // SAFETY: `i < n <= len, qlen`, so both elements are in their live
        // lists; `t` is a fresh non-null block of `aw + bw` words and `out` a
        // fresh list of `n` words (non-null inside this loop), kept in this
        // frame while the tuples are allocated.
        unsafe {
            let t = mem::alloc(((aw + bw) * 8) as usize, true, mem::element_site(site)) as *mut u64;
            std::ptr::copy_nonoverlapping(elem(p, i, aw as usize), t, aw as usize);
            std::ptr::copy_nonoverlapping(elem(q, i, bw as usize), t.add(aw as usize), bw as usize);
            out.add(i).write(t as u64);
        }
    }
    Pair(out as u64, n)
}

/// `xs.join(sep)` on a list of strings.
///
/// # Safety
/// `(p, len)` must be a live list of strings and `(s, slen)` a string.
#[no_mangle]
pub unsafe extern "C" fn sspur_list_join(p: u64, len: u64, s: u64, slen: u64, site: u32) -> Pair {
    // SAFETY: `(p, len)` is a live list of two-word strings and `(s, slen)` a
    // live string (the contract). `out` is a fresh block of exactly `total`
    // bytes, the sum of every piece and separator written, so `at` never
    // passes its end; a copy runs only for a non-empty piece, so `out` is
    // non-null whenever one runs. The fresh block is disjoint from the
    // strings read.
    unsafe {
        let sep = types::bytes(s, slen);
        let mut total = 0u64;
        for i in 0..len as usize {
            total += elem(p, i, 2).add(1).read();
        }
        total += slen * len.saturating_sub(1);
        let out = super::str::alloc_str(total, site);
        let mut at = out;
        for i in 0..len as usize {
            if i > 0 && !sep.is_empty() {
                std::ptr::copy_nonoverlapping(sep.as_ptr(), at, sep.len());
                at = at.add(sep.len());
            }
            let e = elem(p, i, 2);
            let b = types::bytes(e.read(), e.add(1).read());
            if !b.is_empty() {
                std::ptr::copy_nonoverlapping(b.as_ptr(), at, b.len());
                at = at.add(b.len());
            }
        }
        Pair(out as u64, total)
    }
}

/// Frees a list of strings and the strings in it (a deep drop).
///
/// # Safety
/// `(p, len)` must be a list of strings the caller owns with its strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_drop_strs(p: u64, len: u64, site: u32) {
    // SAFETY: the caller's contract is sspur_free_strs's.
    unsafe { crate::abi::sspur_free_strs(p as *mut u8, len as usize, site) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_grows_in_place_then_copies() {
        let _lock = crate::helpers::test_lock();
        // SAFETY: every list passed is one these calls returned, with the
        // length the test wrote; writes stay within the elements grown.
        unsafe {
            let a = sspur_list_grow(0, 0, 1, 8, 0, 0);
            (a as *mut u64).write(1);
            let b = sspur_list_grow(a, 1, 1, 8, 0, 0);
            assert_eq!(a, b, "capacity 4 holds a second element");
            (b as *mut u64).add(1).write(2);
            // A list that no longer ends at the in-use end must copy.
            let c = sspur_list_grow(a, 1, 1, 8, 0, 0);
            assert_ne!(c, a);
            let e = sspur_list_alloc(3, 8, 0, 0);
            let f = sspur_list_grow(e, 3, 1, 8, 0, 0);
            assert_ne!(e, f, "cap == len lists move on push");
            assert_eq!(*(header(f)), 8);
        }
    }

    #[test]
    fn large_buffer_grows_in_place() {
        let _lock = crate::helpers::test_lock();
        // SAFETY: as above; each growth writes only the element it added.
        unsafe {
            let mut p = 0u64;
            let mut moves = 0;
            for i in 0..20_000u64 {
                let q = sspur_list_grow(p, i, 1, 8, 0, 0);
                (q as *mut u64).add(i as usize).write(i);
                moves += (q != p) as u32;
                p = q;
            }
            // Small buffers move as they double; past 32 KB the buffer
            // grows in its mapping and keeps its address.
            assert!(moves < 12, "{moves} moves");
            assert!((0..20_000).all(|i| *(p as *const u64).add(i) == i as u64));
        }
    }
}
