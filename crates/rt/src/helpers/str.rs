//! String helpers. A string is `(ptr, len)` bytes; a fresh string is a data
//! block of exactly its bytes, a view points into another string's block,
//! and the empty string is `(0, 0)`.

use super::types::bytes;
use super::{mem, trap_at, Pair};

/// A fresh data block for `len` bytes (null for 0).
pub(crate) fn alloc_str(len: u64, site: u32) -> *mut u8 {
    if len == 0 {
        return std::ptr::null_mut();
    }
    mem::alloc(len as usize, false, site)
}

/// Copies `n` bytes from `src` to `dst`: a copy of up to 16 bytes (a
/// word, a field, a separator) as two overlapping loads and stores of the
/// widest size that fits, instead of a call to `memcpy`.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst` writable
/// for `n` bytes, the two disjoint.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every access is at an offset below `n` from `src` or `dst`
    // (the caller's contract), unaligned reads and writes only.
    unsafe {
        if n > 16 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 8 {
            let a = (src as *const u64).read_unaligned();
            let b = (src.add(n - 8) as *const u64).read_unaligned();
            (dst as *mut u64).write_unaligned(a);
            (dst.add(n - 8) as *mut u64).write_unaligned(b);
        } else if n >= 4 {
            let a = (src as *const u32).read_unaligned();
            let b = (src.add(n - 4) as *const u32).read_unaligned();
            (dst as *mut u32).write_unaligned(a);
            (dst.add(n - 4) as *mut u32).write_unaligned(b);
        } else if n > 0 {
            let (a, m, z) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = m;
            *dst.add(n - 1) = z;
        }
    }
}

/// A fresh string with these bytes.
pub(crate) fn fresh(b: &[u8], site: u32) -> Pair {
    let p = alloc_str(b.len() as u64, site);
    if !b.is_empty() {
        // SAFETY: `b` is non-empty, so `alloc_str` returned a fresh block of
        // at least `b.len()` bytes (it traps rather than return null); a
        // block just handed out is disjoint from the live memory `b` borrows.
        unsafe { copy_bytes(b.as_ptr(), p, b.len()) };
    }
    Pair(p as u64, b.len() as u64)
}

/// A view of `b` inside the string starting at `base`.
pub(crate) fn view(b: &[u8]) -> Pair {
    if b.is_empty() {
        Pair(0, 0)
    } else {
        Pair(b.as_ptr() as u64, b.len() as u64)
    }
}

/// `a + b`.
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_concat(a: u64, al: u64, b: u64, bl: u64, site: u32) -> Pair {
    let p = alloc_str(al + bl, site);
    // SAFETY: `(a, al)` and `(b, bl)` are live strings (the contract); `p` is
    // a fresh block of `al + bl` bytes (non-null when the sum is non-zero),
    // disjoint from both, and each copy runs only for a non-empty part and
    // stays inside it.
    unsafe {
        copy_bytes(a as *const u8, p, al as usize);
        if bl > 0 {
            copy_bytes(b as *const u8, p.add(al as usize), bl as usize);
        }
    }
    Pair(p as u64, al + bl)
}

/// Bytewise comparison: -1, 0 or 1.
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_cmp(a: u64, al: u64, b: u64, bl: u64) -> i64 {
    // SAFETY: both are live strings (the contract), only read here.
    unsafe { bytes(a, al).cmp(bytes(b, bl)) as i64 }
}

/// Byte equality (1 or 0).
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_eq(a: u64, al: u64, b: u64, bl: u64) -> u64 {
    // SAFETY: both are live strings (the contract), only read here.
    unsafe { (al == bl && bytes(a, al) == bytes(b, bl)) as u64 }
}

/// `s.chars`: one-character views.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_chars(p: u64, len: u64, site: u32) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract).
    unsafe { super::pieces::list_of(super::pieces::CHARS, p, len, 0, 0, site) }
}

/// `s.split(sep)` (Rust's `str::split`: keeps empty pieces).
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_split(p: u64, len: u64, s: u64, slen: u64, site: u32) -> Pair {
    // SAFETY: both are live strings (the contract).
    unsafe { super::pieces::list_of(super::pieces::SPLIT, p, len, s, slen, site) }
}

/// `s.words`: pieces between ASCII whitespace runs.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_words(p: u64, len: u64, site: u32) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract).
    unsafe { super::pieces::list_of(super::pieces::WORDS, p, len, 0, 0, site) }
}

/// `s.lines` (Rust's `str::lines`: at `\n` or `\r\n`, the last line's
/// ending optional; a `\r` that no `\n` follows is part of its line).
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_lines(p: u64, len: u64, site: u32) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract).
    unsafe { super::pieces::list_of(super::pieces::LINES, p, len, 0, 0, site) }
}

/// `s.trim` (ASCII whitespace), a view.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_trim(p: u64, len: u64) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), so `bytes` may
    // borrow it for this call; nothing frees or writes it meanwhile.
    view(unsafe { bytes(p, len) }.trim_ascii())
}

/// `s.lower` (`upper == 0`) or `s.upper`, ASCII only; always fresh.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_case(p: u64, len: u64, upper: u64, site: u32) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), so `bytes` may
    // borrow it for this call; nothing frees or writes it meanwhile.
    let b = unsafe { bytes(p, len) };
    // Written straight into the new string's block: a Rust buffer and its
    // copy would hold the text twice at once.
    let out = alloc_str(len, site);
    if len > 0 {
        // SAFETY: `alloc_str` returned a fresh block of `len` bytes (it
        // traps rather than return null for a non-empty string), disjoint
        // from the live string `b` borrows.
        let out = unsafe { std::slice::from_raw_parts_mut(out, len as usize) };
        for (o, &c) in out.iter_mut().zip(b) {
            *o = if upper != 0 {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
        }
    }
    Pair(out as u64, len)
}

/// `s.replace(a, b)` (every occurrence, as Rust's `str::replace`).
///
/// # Safety
/// All three must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_replace(
    p: u64,
    len: u64,
    a: u64,
    al: u64,
    b: u64,
    bl: u64,
    site: u32,
) -> Pair {
    // SAFETY: all three are live strings (the contract), borrowed for this
    // call; `fresh` allocates, which never moves or frees a live block.
    let (s, from, to) = unsafe { (bytes(p, len), bytes(a, al), bytes(b, bl)) };
    let out = match (
        std::str::from_utf8(s),
        std::str::from_utf8(from),
        std::str::from_utf8(to),
    ) {
        (Ok(s), Ok(from), Ok(to)) => {
            let n = if from.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(from).count()
            } as u128;
            let total = s.len() as u128 - n * from.len() as u128 + n * to.len() as u128;
            if total > crate::state::rt().heap.max_heap as u128 {
                // Beyond the heap limit: the `out of memory` trap at the
                // site, before the text is built.
                alloc_str(u64::MAX >> 1, site);
            }
            s.replace(from, to).into_bytes()
        }
        _ => s.to_vec(),
    };
    fresh(&out, site)
}

/// `s.repeat(n)`; traps on a negative count.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_repeat(
    p: u64,
    len: u64,
    n: i64,
    site: u32,
    loc: u64,
    loc_len: u64,
) -> Pair {
    if n < 0 {
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        unsafe { trap_at(&format!("negative count: {n}"), loc, loc_len) };
    }
    // SAFETY: `(p, len)` is a live string (the contract), borrowed for this
    // call; the allocation below never moves or frees a live block.
    let b = unsafe { bytes(p, len) };
    let total = (len as u128) * (n as u128);
    if total > isize::MAX as u128 {
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        unsafe { mem::out_of_memory(loc, loc_len) };
    }
    let out = alloc_str(total as u64, site);
    // An empty result has no block (`out` is null): nothing to copy.
    if total > 0 {
        for i in 0..n as usize {
            // SAFETY: `out` is a fresh block of `total = n * len` bytes,
            // non-null since `total > 0`, disjoint from `b`; copy `i < n`
            // writes bytes `i * len .. (i + 1) * len`, inside it.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.add(i * b.len()), b.len()) };
        }
    }
    Pair(out as u64, total as u64)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `s.find(t)`: the byte offset, or -1.
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_find(p: u64, len: u64, q: u64, qlen: u64) -> i64 {
    // SAFETY: both are live strings (the contract), only read here.
    unsafe { find(bytes(p, len), bytes(q, qlen)).map_or(-1, |i| i as i64) }
}

/// `s.contains(t)` (0), `s.starts_with(t)` (1), `s.ends_with(t)` (2).
///
/// # Safety
/// Both must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_test(p: u64, len: u64, q: u64, qlen: u64, which: u64) -> u64 {
    // SAFETY: both are live strings (the contract), only read here.
    let (s, t) = unsafe { (bytes(p, len), bytes(q, qlen)) };
    (match which {
        0 => find(s, t).is_some(),
        1 => s.starts_with(t),
        _ => s.ends_with(t),
    }) as u64
}

fn is_boundary(b: &[u8], i: usize) -> bool {
    i == 0 || i >= b.len() || (b[i] as i8) >= -0x40
}

/// The byte range of `s.take(n)` (`which == 0`) or `s.drop(n)` with `n`
/// clamped to the length, or the trap's message.
pub(crate) fn take_drop_range(b: &[u8], n: i64, which: u64) -> Result<(usize, usize), String> {
    if n < 0 {
        return Err(format!("negative count: {n}"));
    }
    let k = (n as u64).min(b.len() as u64) as usize;
    if !is_boundary(b, k) {
        return Err(format!("not a character boundary: {k}"));
    }
    Ok(if which == 0 { (0, k) } else { (k, b.len()) })
}

/// The byte range of `s.slice(a, e)`, or the trap's message.
pub(crate) fn slice_range(b: &[u8], a: i64, e: i64) -> Result<(usize, usize), String> {
    let len = b.len();
    if a < 0 || e < a || e as u64 > len as u64 {
        return Err(format!("slice out of range: {a}..{e} of length {len}"));
    }
    for i in [a as usize, e as usize] {
        if !is_boundary(b, i) {
            return Err(format!("not a character boundary: {i}"));
        }
    }
    Ok((a as usize, e as usize))
}

/// `s.to_int`'s value, or the trap's message.
pub(crate) fn parse_int(b: &[u8]) -> Result<i64, String> {
    // The common case without going through `str`: a sign and up to 18
    // digits, which cannot overflow. Anything else (longer, or not a
    // number) is parsed by Rust's rules below, with its message.
    let (neg, digits) = match b {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let n = digits
            .iter()
            .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        return Ok(if neg { -n } else { n });
    }
    let text = String::from_utf8_lossy(b);
    text.parse::<i64>()
        .map_err(|_| format!("invalid Int: {:?}", text))
}

/// `s.to_f64`'s value, or the trap's message.
pub(crate) fn parse_f64(b: &[u8]) -> Result<f64, String> {
    let text = String::from_utf8_lossy(b);
    text.parse::<f64>()
        .map_err(|_| format!("invalid F64: {:?}", text))
}

/// `s.take(n)` (0), `s.drop(n)` (1) with clamping, as a view; traps on a
/// negative count or an offset inside a character.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_take_drop(
    p: u64,
    len: u64,
    n: i64,
    which: u64,
    loc: u64,
    loc_len: u64,
) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), so `bytes` may
    // borrow it for this call; nothing frees or writes it meanwhile.
    let b = unsafe { bytes(p, len) };
    match take_drop_range(b, n, which) {
        Ok((a, e)) => view(&b[a..e]),
        Err(m) => {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe { trap_at(&m, loc, loc_len) }
        }
    }
}

/// `s.slice(a, b)`, a view; traps when out of range or off a boundary.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_slice(
    p: u64,
    len: u64,
    a: i64,
    e: i64,
    loc: u64,
    loc_len: u64,
) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), so `bytes` may
    // borrow it for this call; nothing frees or writes it meanwhile.
    let b = unsafe { bytes(p, len) };
    match slice_range(b, a, e) {
        Ok((a, e)) => view(&b[a..e]),
        Err(m) => {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe { trap_at(&m, loc, loc_len) }
        }
    }
}

/// `s.to_int`; traps on text Rust's `i64` parser rejects.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_to_int(p: u64, len: u64, loc: u64, loc_len: u64) -> i64 {
    // SAFETY: `(p, len)` is a live string (the contract), only read here.
    match parse_int(unsafe { bytes(p, len) }) {
        Ok(v) => v,
        Err(m) => {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe { trap_at(&m, loc, loc_len) }
        }
    }
}

/// `s.to_f64` (bits); traps on text Rust's `f64` parser rejects.
///
/// # Safety
/// `(p, len)` must be a live string; `loc` a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_to_f64(p: u64, len: u64, loc: u64, loc_len: u64) -> u64 {
    // SAFETY: `(p, len)` is a live string (the contract), only read here.
    match parse_f64(unsafe { bytes(p, len) }) {
        Ok(v) => v.to_bits(),
        Err(m) => {
            // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
            unsafe { trap_at(&m, loc, loc_len) }
        }
    }
}

/// `s.parse_int` (`which` 0) and `s.parse_f64` (1, as bits): `(1, value)`
/// when Rust's parser accepts the text, `(0, 0)` otherwise.
///
/// # Safety
/// `(p, len)` must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_str_parse(p: u64, len: u64, which: u64) -> Pair {
    // SAFETY: `(p, len)` is a live string (the contract), only read here.
    let b = unsafe { bytes(p, len) };
    let v = if which == 0 {
        parse_int(b).map(|i| i as u64)
    } else {
        parse_f64(b).map(f64::to_bits)
    };
    v.map_or(Pair(0, 0), |v| Pair(1, v))
}

/// `x.to_int` on F64 (truncating); traps on NaN or out of range.
///
/// # Safety
/// `loc` must be a location string.
#[no_mangle]
pub unsafe extern "C" fn sspur_f64_to_int(bits: u64, loc: u64, loc_len: u64) -> i64 {
    let x = f64::from_bits(bits);
    let t = x.trunc();
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&t) {
        // SAFETY: `(loc, loc_len)` is a location string (this function's contract).
        unsafe { trap_at(&format!("F64 out of range for Int: {x}"), loc, loc_len) };
    }
    t as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: Pair) -> Vec<String> {
        (0..p.1 as usize)
            // SAFETY: `p` is a list of `p.1` two-word string views made by
            // the helper under test, into strings the test keeps alive.
            .map(|i| unsafe {
                let e = (p.0 as *const u64).add(2 * i);
                String::from_utf8(bytes(e.read(), e.add(1).read()).to_vec()).unwrap()
            })
            .collect()
    }

    #[test]
    fn splitting_matches_rust() {
        let _lock = crate::helpers::test_lock();
        let cases: &[(&str, &str)] = &[
            ("a,b,,c", ","),
            ("", ","),
            (",", ","),
            ("abc", ""),
            ("aaa", "aa"),
        ];
        for (s, sep) in cases {
            // SAFETY: `s` and `sep` are live `&str`s for the whole call.
            let got = pieces(unsafe {
                sspur_str_split(
                    s.as_ptr() as u64,
                    s.len() as u64,
                    sep.as_ptr() as u64,
                    sep.len() as u64,
                    0,
                )
            });
            let want: Vec<String> = s.split(sep).map(String::from).collect();
            assert_eq!(got, want, "{s:?}.split({sep:?})");
        }
        for s in ["a\nb\n", "a\r\nb", "\n\nx", "", "x\n\n"] {
            // SAFETY: `s` is a live `&str`.
            let got = pieces(unsafe { sspur_str_lines(s.as_ptr() as u64, s.len() as u64, 0) });
            let want: Vec<String> = s.lines().map(String::from).collect();
            assert_eq!(got, want, "{s:?}.lines");
        }
        let s = " a  b\tc\n";
        // SAFETY: `s` is a live `&str`.
        let words = unsafe { sspur_str_words(s.as_ptr() as u64, s.len() as u64, 0) };
        assert_eq!(pieces(words), ["a", "b", "c"]);
        let s = "hé";
        // SAFETY: `s` is a live `&str`.
        let chars = unsafe { sspur_str_chars(s.as_ptr() as u64, s.len() as u64, 0) };
        assert_eq!(pieces(chars), ["h", "é"]);
    }

    #[test]
    fn tests_and_find() {
        let _lock = crate::helpers::test_lock();
        let (s, t) = ("hello", "ll");
        // SAFETY: `s` and `t` are live `&str`s of 5 and 2 bytes.
        unsafe {
            assert_eq!(
                sspur_str_find(s.as_ptr() as u64, 5, t.as_ptr() as u64, 2),
                2
            );
            assert_eq!(
                sspur_str_test(s.as_ptr() as u64, 5, t.as_ptr() as u64, 2, 0),
                1
            );
            assert_eq!(
                sspur_str_test(s.as_ptr() as u64, 5, t.as_ptr() as u64, 2, 1),
                0
            );
            assert_eq!(
                sspur_str_cmp(s.as_ptr() as u64, 5, t.as_ptr() as u64, 2),
                -1
            );
        }
    }
}
