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

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const LOWS: u64 = ONES * 0x7f;

/// The eight bytes at `i` of `b` (`i + 8 <= b.len()`), the first lowest.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"))
}

/// The high bit of each byte of `w` below `n` (1..=0x80), exactly: the
/// low seven bits plus `0x80 - n` carry into the high bit when they reach
/// `n`, never past it, and a byte with its own high bit set is not below.
#[inline(always)]
fn bytes_below(w: u64, n: u8) -> u64 {
    !(((w & LOWS) + ONES * (0x80 - n as u64)) | w) & HIGHS
}

/// The high bit of each byte of `w` equal to `c`, exactly (no borrow
/// crosses a byte: the low seven bits plus 0x7f reach the high bit when
/// any is set).
#[inline(always)]
fn bytes_equal(w: u64, c: u8) -> u64 {
    let x = w ^ (ONES * c as u64);
    !(((x & LOWS) + LOWS) | x) & HIGHS
}

/// The high bit of each whitespace byte of `w` ([`is_ws`], eight at once):
/// tab to carriage return except the vertical tab, and space.
#[inline(always)]
fn ws_bytes(w: u64) -> u64 {
    let controls = bytes_below(w, 0x0e) & !bytes_below(w, 0x09) & !bytes_equal(w, 0x0b);
    controls | bytes_equal(w, b' ')
}

/// The words of a string (`(start, end)` byte ranges) in one pass, eight
/// bytes at a time: a word starts at each byte that is not whitespace and
/// follows whitespace (or the start), and ends at the next whitespace byte
/// (or the end). Starts and ends alternate, so each bit found opens or
/// closes the word.
struct Words<'a> {
    b: &'a [u8],
    /// The next byte to read.
    i: usize,
    /// The starts and ends not yet taken of the eight bytes at `base`.
    events: u64,
    base: usize,
    /// Whether a word is open (and where it started).
    in_word: bool,
    open: usize,
}

impl<'a> Words<'a> {
    fn new(b: &'a [u8]) -> Words<'a> {
        Words {
            b,
            i: 0,
            events: 0,
            base: 0,
            in_word: false,
            open: 0,
        }
    }
}

impl Iterator for Words<'_> {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            if self.events != 0 {
                let at = self.base + (self.events.trailing_zeros() / 8) as usize;
                self.events &= self.events - 1;
                if self.in_word {
                    self.in_word = false;
                    return Some((self.open, at));
                }
                self.in_word = true;
                self.open = at;
                continue;
            }
            let len = self.b.len();
            if self.i + 8 <= len {
                let ws = ws_bytes(word_at(self.b, self.i));
                // Each byte's high bit here: whether the byte before it is
                // whitespace (the start counts as whitespace).
                let before = ws << 8 | u64::from(!self.in_word) << 7;
                self.events = (!ws & HIGHS & before) | (ws & !before);
                self.base = self.i;
                self.i += 8;
                continue;
            }
            while self.i < len {
                let (at, ws) = (self.i, is_ws(self.b[self.i]));
                self.i += 1;
                if ws == self.in_word {
                    self.in_word = !ws;
                    if ws {
                        return Some((self.open, at));
                    }
                    self.open = at;
                }
            }
            if self.in_word {
                self.in_word = false;
                return Some((self.open, len));
            }
            return None;
        }
    }
}

/// Where the first byte `c` at or after `at` is, eight bytes at a time
/// (a line feed for `lines`, a one-byte separator for `split`).
#[inline(always)]
fn find_byte(b: &[u8], at: usize, c: u8) -> Option<usize> {
    let pat = ONES * c as u64;
    let mut i = at;
    while i + 8 <= b.len() {
        let x = word_at(b, i) ^ pat;
        // A zero byte of `x` (a `c` of the word) sets its high bit here;
        // the lowest set bit is exact (borrows only run upward).
        let hit = x.wrapping_sub(ONES) & !x & HIGHS;
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&x| x == c).map(|k| i + k)
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
        LINES => (at < len).then(|| match find_byte(b, at, b'\n') {
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
                [c] => find_byte(b, at, *c).map(|i| i - at),
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
            // A word starts at each byte that is not whitespace and follows
            // whitespace (or the start): eight bytes at a time, the byte
            // before each one's bit shifted in from below.
            let mut n = 0;
            let mut after_ws = true;
            let mut i = 0;
            while i + 8 <= b.len() {
                let ws = ws_bytes(word_at(b, i));
                let before = ws << 8 | u64::from(after_ws) << 7;
                n += u64::from((!ws & HIGHS & before).count_ones());
                after_ws = ws >> 63 != 0;
                i += 8;
            }
            for &c in &b[i..] {
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
    let put = |i: usize, start: usize, end: usize| {
        let v = view(&b[start..end]);
        // SAFETY: `count` counted exactly the pieces `next` (and `Words`,
        // which cuts the same words) cuts, so `i < n` and both words are
        // inside the fresh list of `n` two-word elements (non-null: this
        // runs only when `n > 0`).
        unsafe {
            out.add(2 * i).write(v.0);
            out.add(2 * i + 1).write(v.1);
        }
    };
    if kind == WORDS {
        for (i, (start, end)) in Words::new(b).enumerate() {
            put(i, start, end);
        }
        return Pair(out as u64, n);
    }
    let (mut c, mut i) = (0, 0);
    while let Some((start, end, next_c)) = next(kind, b, sep, c) {
        put(i, start, end);
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
    let key = |(start, end): (usize, usize)| {
        let k = view(&b[start..end]);
        (k.0, k.1)
    };
    if kind == WORDS {
        // SAFETY: `m` is the live map made above and each key a view of
        // the live string.
        unsafe { super::map::counts_add_all(m, Words::new(b).map(key), site) };
    } else {
        let mut c = 0;
        let pieces = std::iter::from_fn(|| {
            let (start, end, next_c) = next(kind, b, sep, c)?;
            c = next_c;
            Some(key((start, end)))
        });
        // SAFETY: as above.
        unsafe { super::map::counts_add_all(m, pieces, site) };
    }
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
    fn whitespace_eight_bytes_at_a_time() {
        // Every byte value in every position of a word, against `is_ws`.
        for c in 0..=255u8 {
            for pos in 0..8 {
                let mut bytes = [b'a'; 8];
                bytes[pos] = c;
                bytes[(pos + 3) % 8] = 0x80 | c;
                let w = u64::from_le_bytes(bytes);
                let want: u64 = (0..8)
                    .filter(|&k| is_ws(bytes[k]))
                    .map(|k| 0x80u64 << (8 * k))
                    .sum();
                assert_eq!(ws_bytes(w), want, "byte {c:#x} at {pos}");
            }
        }
    }

    #[test]
    fn words_at_once_match_rust_on_generated_text() {
        // Strings of every length up to 40 from a small alphabet heavy in
        // whitespace and near-whitespace bytes, from a fixed seed.
        let alphabet = b" \t\n\r\x0b\x0c\x08\x0e\x1fab\xc3\xa9xyz";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..40 {
            for _ in 0..200 {
                let mut t = String::new();
                while t.len() < len {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let k = (seed % (alphabet.len() as u64 - 1)) as usize;
                    // The two bytes of an é stay together.
                    match alphabet[k] {
                        0xc3 | 0xa9 => t.push('é'),
                        c => t.push(c as char),
                    }
                }
                let words: Vec<&str> = t.split_ascii_whitespace().collect();
                let at_once: Vec<&str> = Words::new(t.as_bytes()).map(|(s, e)| &t[s..e]).collect();
                assert_eq!(at_once, words, "{t:?}");
                assert_eq!(count(WORDS, t.as_bytes(), b""), words.len() as u64, "{t:?}");
            }
        }
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
            "seven b\teight by\rtes\x0bfor a\x0cword  \x0b \x1f\x0e\x08 at\n\na time\u{a0}x",
            "        sixteen\tbytes\r\nof words  ",
            "x       y       z",
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
            let b = t.as_bytes();
            let at_once: Vec<&str> = Words::new(b).map(|(s, e)| &t[s..e]).collect();
            assert_eq!(at_once, words, "words of {t:?} eight bytes at a time");
            let lines: Vec<&str> = t.lines().collect();
            assert_eq!(pieces(LINES, t, ""), lines, "lines of {t:?}");
            for sep in [",", "", "ab", "\n", "b"] {
                let split: Vec<&str> = t.split(sep).collect();
                assert_eq!(pieces(SPLIT, t, sep), split, "split of {t:?} by {sep:?}");
            }
        }
    }
}
