//! The pieces of a string (`chars`, `words`, `lines`, `split`) one at a
//! time, for pipelines that consume them without building the list
//! (`s.words.counts`, `s.lines.len`, `s.chars.fold(..)`): compiled code
//! keeps a cursor and asks for the next piece. Each piece is the same view
//! the list helpers of `str.rs` would put in the list (a unit test checks
//! the two agree).

use super::str::view;
use super::types::bytes;
use super::Pair;

/// Which method's pieces (the `kind` argument of the helpers).
pub const CHARS: u64 = 0;
pub const WORDS: u64 = 1;
pub const LINES: u64 = 2;
pub const SPLIT: u64 = 3;

/// The cursor value after the last piece.
pub const DONE: u64 = u64::MAX;

/// The byte length of the UTF-8 character starting with `lead`.
#[inline(always)]
fn char_len(lead: u8) -> usize {
    match lead {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// Whether `c` is ASCII whitespace (`u8::is_ascii_whitespace`: space, tab,
/// line feed, form feed, carriage return), as one shift and mask.
#[inline(always)]
fn is_ws(c: u8) -> bool {
    const WS: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << 0x0c | 1 << b'\r';
    c <= b' ' && WS >> c & 1 != 0
}

/// Where the first `\n` at or after `at` is, eight bytes at a time.
#[inline(always)]
fn find_newline(b: &[u8], at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = ONES * b'\n' as u64;
    let mut i = at;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let x = w ^ NL;
        // A zero byte of `x` (a newline of `w`) sets its high bit here; the
        // lowest set bit is exact (borrows only run upward).
        let hit = x.wrapping_sub(ONES) & !x & HIGHS;
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'\n').map(|k| i + k)
}

/// The piece at cursor `c` of `b` (`sep` only for SPLIT) as a byte range,
/// and the next cursor; None when there is none. A cursor is a byte
/// position, except for a split by `""`, where it is one more than the
/// position (0: the leading empty piece) and `len + 1` is the trailing one.
#[inline(always)]
fn next(kind: u64, b: &[u8], sep: &[u8], c: u64) -> Option<(usize, usize, u64)> {
    if c == DONE {
        return None;
    }
    let at = c as usize;
    let len = b.len();
    match kind {
        CHARS => (at < len).then(|| {
            let end = (at + char_len(b[at])).min(len);
            (at, end, end as u64)
        }),
        WORDS => {
            let mut start = at.min(len);
            while start < len && is_ws(b[start]) {
                start += 1;
            }
            (start < len).then(|| {
                let mut end = start + 1;
                while end < len && !is_ws(b[end]) {
                    end += 1;
                }
                (start, end, end as u64)
            })
        }
        LINES => (at < len).then(|| match find_newline(b, at) {
            Some(i) => {
                let end = if i > at && b[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                (at, end, (i + 1) as u64)
            }
            None => (at, len, len as u64),
        }),
        _ if sep.is_empty() => {
            // Rust splits "" around every character, with empty ends.
            if at == 0 {
                Some((0, 0, 1))
            } else if at - 1 < len {
                let end = (at - 1 + char_len(b[at - 1])).min(len);
                Some((at - 1, end, end as u64 + 1))
            } else {
                Some((len, len, DONE))
            }
        }
        _ => {
            let found = match sep {
                [c] => b[at..].iter().position(|x| x == c),
                _ => b[at..].windows(sep.len()).position(|w| w == sep),
            };
            match found {
                Some(i) => Some((at, at + i, (at + i + sep.len()) as u64)),
                None => Some((at, len, DONE)),
            }
        }
    }
}

/// How many pieces of `kind` `b` has, counted without cutting them one by
/// one where the kind allows: strings are valid UTF-8, so the characters
/// are the bytes that do not continue one (`10xxxxxx`); the lines are the
/// line feeds, plus an unterminated last line; the words are the places
/// where whitespace (or the start) is followed by something else.
fn count(kind: u64, b: &[u8], sep: &[u8]) -> u64 {
    match kind {
        CHARS => b.iter().filter(|&&c| (c as i8) >= -0x40).count() as u64,
        LINES => {
            let feeds = b.iter().filter(|&&c| c == b'\n').count() as u64;
            feeds + u64::from(b.last().is_some_and(|&c| c != b'\n'))
        }
        WORDS => {
            let mut n = 0;
            let mut after_ws = true;
            for &c in b {
                let ws = is_ws(c);
                n += u64::from(after_ws & !ws);
                after_ws = ws;
            }
            n
        }
        _ => {
            let (mut c, mut n) = (0, 0);
            while let Some((_, _, next_c)) = next(kind, b, sep, c) {
                n += 1;
                c = next_c;
            }
            n
        }
    }
}

/// The list of the pieces of `kind` of the string `(p, len)` (`s.words`,
/// `s.lines`, `s.chars`, `s.split(sep)`): counted first, then cut straight
/// into a fresh list of views, with no buffer in between.
///
/// # Safety
/// `(p, len)` and `(s, slen)` must be live strings.
pub(crate) unsafe fn list_of(kind: u64, p: u64, len: u64, s: u64, slen: u64, site: u32) -> Pair {
    // SAFETY: live strings (the contract), only read here; the allocation
    // never moves or frees a live block.
    let (b, sep) = unsafe { (bytes(p, len), bytes(s, slen)) };
    // A few pieces (a CSV line's fields, a short line's words) are cut once
    // into this frame and copied; more are counted first.
    const FEW: usize = 16;
    let mut few = [Pair(0, 0); FEW];
    let (mut c, mut k) = (0, 0);
    while k < FEW {
        let Some((start, end, next_c)) = next(kind, b, sep, c) else {
            let out = super::list::alloc_list(k as u64, 16, true, site) as *mut Pair;
            if k > 0 {
                // SAFETY: `out` is a fresh list of `k` two-word elements,
                // disjoint from this frame's array.
                unsafe { std::ptr::copy_nonoverlapping(few.as_ptr(), out, k) };
            }
            std::hint::black_box(&p);
            return Pair(out as u64, k as u64);
        };
        few[k] = view(&b[start..end]);
        k += 1;
        c = next_c;
    }
    let n = count(kind, b, sep);
    let out = super::list::alloc_list(n, 16, true, site) as *mut u64;
    // The views keep the string alive once they are in the list; until
    // then this frame does.
    std::hint::black_box(&p);
    let (mut c, mut i) = (0, 0);
    while let Some((start, end, next_c)) = next(kind, b, sep, c) {
        let v = view(&b[start..end]);
        // SAFETY: `count` counted exactly the pieces `next` cuts, so
        // `i < n` and both words are inside the fresh list of `n` two-word
        // elements (non-null: this loop runs only when `n > 0`).
        unsafe {
            out.add(2 * i).write(v.0);
            out.add(2 * i + 1).write(v.1);
        }
        i += 1;
        c = next_c;
    }
    Pair(out as u64, n)
}

/// The next piece of `kind` of the string `(p, len)` at `*cursor`, which
/// it advances; after the last piece, `(u64::MAX, 0)` (no string starts
/// there).
///
/// # Safety
/// `(p, len)` and `(s, slen)` must be live strings and `cursor` a valid
/// word that only this pipeline writes.
#[no_mangle]
pub unsafe extern "C" fn sspur_piece_next(
    kind: u64,
    p: u64,
    len: u64,
    s: u64,
    slen: u64,
    cursor: *mut u64,
) -> Pair {
    // SAFETY: live strings and a valid cursor word (the contract).
    let (b, sep, c) = unsafe { (bytes(p, len), bytes(s, slen), cursor.read()) };
    match next(kind, b, sep, c) {
        Some((start, end, c)) => {
            // SAFETY: as above.
            unsafe { cursor.write(c) };
            view(&b[start..end])
        }
        None => {
            // SAFETY: as above.
            unsafe { cursor.write(DONE) };
            Pair(u64::MAX, 0)
        }
    }
}

/// How many pieces of `kind` the string `(p, len)` has (`s.words.len`).
///
/// # Safety
/// `(p, len)` and `(s, slen)` must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_piece_count(kind: u64, p: u64, len: u64, s: u64, slen: u64) -> u64 {
    // SAFETY: live strings (the contract), only read here.
    let (b, sep) = unsafe { (bytes(p, len), bytes(s, slen)) };
    count(kind, b, sep)
}

/// `s.words.counts` (and the other kinds) without the list: a fresh map
/// from each piece (a view into the string) to how often it occurs, in
/// first-seen order.
///
/// # Safety
/// `(p, len)` and `(s, slen)` must be live strings.
#[no_mangle]
pub unsafe extern "C" fn sspur_piece_counts(
    kind: u64,
    p: u64,
    len: u64,
    s: u64,
    slen: u64,
    site: u32,
) -> *mut u64 {
    // SAFETY: live strings (the contract), only read here; the map's
    // allocations never move or free a live block, and `p` stays in this
    // frame, so the string outlives the views the map keeps of it.
    let (b, sep) = unsafe { (bytes(p, len), bytes(s, slen)) };
    let m = super::map::sspur_map_new(super::map::KEY_STR, site);
    let mut c = 0;
    let pieces = std::iter::from_fn(|| {
        let (start, end, next_c) = next(kind, b, sep, c)?;
        c = next_c;
        let k = view(&b[start..end]);
        Some((k.0, k.1))
    });
    // SAFETY: `m` is the live map made above and each key a view of the
    // live string.
    unsafe { super::map::counts_add_all(m, pieces, site) };
    std::hint::black_box(p);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(kind: u64, s: &str, sep: &str) -> Vec<String> {
        let (b, sep) = (s.as_bytes(), sep.as_bytes());
        let mut out = Vec::new();
        let mut c = 0;
        while let Some((start, end, n)) = next(kind, b, sep, c) {
            out.push(String::from_utf8(b[start..end].to_vec()).unwrap());
            c = n;
        }
        out
    }

    #[test]
    fn pieces_cut_as_rust_does() {
        let texts = [
            "",
            " ",
            "a",
            "a b",
            "  a  b  ",
            "a\nb\n",
            "a\r\nb",
            "a\r",
            "\n\n",
            "x,y,",
            ",",
            "héllo wörld\tü",
            "a,,b",
            "ab",
            "\r\n",
            "a line long enough for a word at a time\r\nand the next one, also long\n",
            "0123456789abcdef\n0123456789abcdef",
            "no feed in these sixteen bytes or more",
            "  words\x0cwith\x0bodd\tspace  \n  ",
            "ünïcödé characters wider than one byte, ünïcödé\n",
        ];
        for t in texts {
            let chars: Vec<String> = t.chars().map(String::from).collect();
            for kind in [CHARS, WORDS, LINES] {
                let n = pieces(kind, t, "").len() as u64;
                assert_eq!(count(kind, t.as_bytes(), b""), n, "count {kind} of {t:?}");
            }
            for sep in [",", "", "ab"] {
                let n = pieces(SPLIT, t, sep).len() as u64;
                assert_eq!(
                    count(SPLIT, t.as_bytes(), sep.as_bytes()),
                    n,
                    "count split of {t:?}"
                );
            }
            assert_eq!(pieces(CHARS, t, ""), chars, "chars of {t:?}");
            let words: Vec<&str> = t.split_ascii_whitespace().collect();
            assert_eq!(pieces(WORDS, t, ""), words, "words of {t:?}");
            let lines: Vec<&str> = t.lines().collect();
            assert_eq!(pieces(LINES, t, ""), lines, "lines of {t:?}");
            for sep in [",", "", "ab", "\n", "b"] {
                let split: Vec<&str> = t.split(sep).collect();
                assert_eq!(pieces(SPLIT, t, sep), split, "split of {t:?} by {sep:?}");
            }
        }
    }
}
