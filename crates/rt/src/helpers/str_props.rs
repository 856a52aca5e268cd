//! Every string helper of the runtime against the interpreter's semantics
//! (crates/interp/src/methods.rs, which calls Rust's `str` methods), on
//! random strings of `\r`, `\n`, spaces, tabs, form feeds, multi-byte
//! characters and separators. The `interp_*` functions below are the
//! interpreter's code for each method, restated on plain `&str`; views are
//! compared as byte ranges of the source, so a helper that returns the right
//! text from the wrong place fails too.
//!
//! `Str.byte`, `len` and `is_empty` have no helper (compiled inline).

use proptest::prelude::*;

use super::list::sspur_list_join;
use super::str::*;
use super::types::bytes;
use super::Pair;

const ALPHABET: &[&str] = &[
    "\r", "\n", "\r\n", " ", "\t", "\x0c", "a", "b", "A", "Z", ",", ", ", "-", "é", "É", "日",
    "😀", "\u{a0}", "\u{2028}", "ß", "0", "1", "+", ".", "e",
];

const NUMERIC: &[&str] = &[
    "0",
    "1",
    "9",
    "+",
    "-",
    ".",
    "e",
    "E",
    "i",
    "n",
    "f",
    "N",
    "a",
    "I",
    "y",
    " ",
    "_",
    "x",
    "9223372036854775807",
    "9223372036854775808",
    "inf",
    "NaN",
    "infinity",
    "é",
];

fn text_of(parts: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(parts), 0..max).prop_map(|v| v.concat())
}

fn text() -> impl Strategy<Value = String> {
    text_of(ALPHABET, 14)
}

fn sep() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(&["", ",", ", ", "\n", "\r\n", "\r", " ", "é", "日", "😀", "aa"][..])
            .prop_map(String::from),
        text_of(ALPHABET, 3),
    ]
}

fn arg(s: &str) -> (u64, u64) {
    (s.as_ptr() as u64, s.len() as u64)
}

/// A fresh string's bytes, then its block freed.
fn take_fresh(p: Pair) -> String {
    // SAFETY: `p` is a fresh string a helper just returned, not yet freed.
    let s = String::from_utf8(unsafe { bytes(p.0, p.1) }.to_vec()).expect("helper made bad UTF-8");
    if p.1 > 0 {
        // SAFETY: a fresh block, read for the last time above.
        unsafe { crate::abi::sspur_free(p.0 as *mut u8, 0) };
    }
    s
}

/// A view as a byte range of `source`.
fn range_in(source: &str, p: Pair) -> (usize, usize) {
    if p.1 == 0 {
        return (usize::MAX, 0); // empty views carry no position
    }
    let a = p.0 as usize - source.as_ptr() as usize;
    assert!(a + p.1 as usize <= source.len(), "view outside its source");
    (a, a + p.1 as usize)
}

fn empty_or(r: (usize, usize)) -> (usize, usize) {
    if r.0 == r.1 {
        (usize::MAX, 0)
    } else {
        r
    }
}

/// A fresh list of views, as ranges of `source`; the list block freed.
fn take_views(source: &str, p: Pair) -> Vec<(usize, usize)> {
    let out = (0..p.1 as usize)
        // SAFETY: `p` is a fresh list of `p.1` two-word views, not yet freed.
        .map(|i| unsafe {
            let e = (p.0 as *const u64).add(2 * i);
            range_in(source, Pair(e.read(), e.add(1).read()))
        })
        .collect();
    if p.1 > 0 {
        // SAFETY: a fresh block, read for the last time above.
        unsafe { crate::abi::sspur_free(p.0 as *mut u8, 0) };
    }
    out
}

fn ranges(source: &str, pieces: Vec<&str>) -> Vec<(usize, usize)> {
    let base = source.as_ptr() as usize;
    pieces
        .iter()
        .map(|p| {
            let a = p.as_ptr() as usize - base;
            empty_or((a, a + p.len()))
        })
        .collect()
}

// The interpreter's semantics (crates/interp/src/methods.rs), restated.

fn interp_pieces<'a>(text: &'a str, method: &str, sep: &str) -> Vec<&'a str> {
    match method {
        "chars" => text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect(),
        "split" => text.split(sep).collect(),
        "words" => text.split_ascii_whitespace().collect(),
        _ => text.lines().collect(),
    }
}

fn interp_take_drop(s: &str, n: i64, take: bool) -> Result<(usize, usize), String> {
    if n < 0 {
        return Err(format!("negative count: {n}"));
    }
    let k = (n as u64).min(s.len() as u64) as usize;
    if !s.is_char_boundary(k) {
        return Err(format!("not a character boundary: {k}"));
    }
    Ok(if take { (0, k) } else { (k, s.len()) })
}

fn interp_slice(s: &str, a: i64, b: i64) -> Result<(usize, usize), String> {
    if a < 0 || b < a || b as u64 > s.len() as u64 {
        return Err(format!(
            "slice out of range: {a}..{b} of length {}",
            s.len()
        ));
    }
    let (a, b) = (a as usize, b as usize);
    for k in [a, b] {
        if !s.is_char_boundary(k) {
            return Err(format!("not a character boundary: {k}"));
        }
    }
    Ok((a, b))
}

fn interp_to_int(s: &str) -> Result<i64, String> {
    s.parse::<i64>().map_err(|_| format!("invalid Int: {s:?}"))
}

fn interp_to_f64(s: &str) -> Result<u64, String> {
    s.parse::<f64>()
        .map(f64::to_bits)
        .map_err(|_| format!("invalid F64: {s:?}"))
}

fn check_all(s: &str, t: &str, u: &str, n: i64, m: i64) {
    let (p, len) = arg(s);
    let (q, qlen) = arg(t);
    let (r, rlen) = arg(u);

    for method in ["chars", "split", "words", "lines"] {
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        let got = unsafe {
            match method {
                "chars" => sspur_str_chars(p, len, 0),
                "split" => sspur_str_split(p, len, q, qlen, 0),
                "words" => sspur_str_words(p, len, 0),
                _ => sspur_str_lines(p, len, 0),
            }
        };
        let got = take_views(s, got);
        let want = ranges(s, interp_pieces(s, method, t));
        assert_eq!(got, want, "{s:?}.{method}({t:?})");
    }

    let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        range_in(s, unsafe { sspur_str_trim(p, len) }),
        ranges(s, vec![trimmed])[0],
        "{s:?}.trim"
    );
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        take_fresh(unsafe { sspur_str_case(p, len, 0, 0) }),
        s.to_ascii_lowercase(),
        "{s:?}.lower"
    );
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        take_fresh(unsafe { sspur_str_case(p, len, 1, 0) }),
        s.to_ascii_uppercase(),
        "{s:?}.upper"
    );
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        take_fresh(unsafe { sspur_str_replace(p, len, q, qlen, r, rlen, 0) }),
        s.replace(t, u),
        "{s:?}.replace({t:?}, {u:?})"
    );
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        unsafe { sspur_str_find(p, len, q, qlen) },
        s.find(t).map_or(-1, |i| i as i64),
        "{s:?}.find({t:?})"
    );
    for (which, want) in [
        (0, s.contains(t)),
        (1, s.starts_with(t)),
        (2, s.ends_with(t)),
    ] {
        assert_eq!(
            // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
            unsafe { sspur_str_test(p, len, q, qlen, which) },
            want as u64,
            "{s:?} test {which} {t:?}"
        );
    }
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        unsafe { sspur_str_cmp(p, len, q, qlen) },
        s.as_bytes().cmp(t.as_bytes()) as i64
    );
    // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
    assert_eq!(unsafe { sspur_str_eq(p, len, q, qlen) }, (s == t) as u64);
    assert_eq!(
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        take_fresh(unsafe { sspur_str_concat(p, len, q, qlen, 0) }),
        format!("{s}{t}")
    );

    for (which, take) in [(0, true), (1, false)] {
        let want = interp_take_drop(s, n, take);
        assert_eq!(
            take_drop_range(s.as_bytes(), n, which),
            want,
            "{s:?} take/drop {n}"
        );
        if let Ok(r) = want {
            // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
            let got = unsafe { sspur_str_take_drop(p, len, n, which, 0, 0) };
            assert_eq!(range_in(s, got), empty_or(r), "{s:?} take/drop {n}");
        }
    }
    let want = interp_slice(s, n, m);
    assert_eq!(
        slice_range(s.as_bytes(), n, m),
        want,
        "{s:?}.slice({n}, {m})"
    );
    if let Ok(r) = want {
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        let got = unsafe { sspur_str_slice(p, len, n, m, 0, 0) };
        assert_eq!(range_in(s, got), empty_or(r), "{s:?}.slice({n}, {m})");
    }
    if (0..4).contains(&n) {
        assert_eq!(
            // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
            take_fresh(unsafe { sspur_str_repeat(p, len, n, 0, 0, 0) }),
            s.repeat(n as usize),
            "{s:?}.repeat({n})"
        );
    }
}

fn check_numbers(s: &str) {
    assert_eq!(parse_int(s.as_bytes()), interp_to_int(s), "{s:?}.to_int");
    assert_eq!(
        parse_f64(s.as_bytes()).map(f64::to_bits),
        interp_to_f64(s),
        "{s:?}.to_f64"
    );
    let (p, len) = arg(s);
    if let Ok(v) = interp_to_int(s) {
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        assert_eq!(unsafe { sspur_str_to_int(p, len, 0, 0) }, v);
    }
    if let Ok(v) = interp_to_f64(s) {
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        assert_eq!(unsafe { sspur_str_to_f64(p, len, 0, 0) }, v);
    }
}

fn check_join(items: &[String], sep: &str) {
    let words: Vec<u64> = items
        .iter()
        .flat_map(|s| [s.as_ptr() as u64, s.len() as u64])
        .collect();
    let (q, qlen) = arg(sep);
    // SAFETY: `words` holds `items.len()` live `(ptr, len)` strings of `items`, and `(q, qlen)` is the live `sep`.
    let got = take_fresh(unsafe {
        sspur_list_join(words.as_ptr() as u64, items.len() as u64, q, qlen, 0)
    });
    assert_eq!(got, items.join(sep), "{items:?}.join({sep:?})");
}

fn check_shown(s: &str) {
    use super::types::{show, TyDesc};
    let words = [s.as_ptr() as u64, s.len() as u64];
    let mut quoted = Vec::new();
    let mut bare = Vec::new();
    // SAFETY: `words` is a Str value: a live `(ptr, len)` of `s`.
    unsafe {
        show(&[TyDesc::Str], 0, words.as_ptr(), false, &mut quoted);
        show(&[TyDesc::Str], 0, words.as_ptr(), true, &mut bare);
    }
    // crates/interp/src/show.rs: bare at top level, `{:?}` inside.
    assert_eq!(String::from_utf8(quoted).unwrap(), format!("{s:?}"));
    assert_eq!(String::from_utf8(bare).unwrap(), s);
}

#[test]
fn issue_8_lines_edge_cases() {
    let _lock = super::test_lock();
    for s in [
        "a\r", "a\rb\r", "x\r\n\r", "\r", "\r\n", "\n", "\n\r", "\r\r\n", "a\n\r\n", "",
    ] {
        let (p, len) = arg(s);
        // SAFETY: the arguments are `(ptr, len)` of `&str`s (`arg`) that live for this whole function.
        let got = take_views(s, unsafe { sspur_str_lines(p, len, 0) });
        assert_eq!(got, ranges(s, s.lines().collect()), "{s:?}.lines");
    }
    assert_eq!("a\r".lines().collect::<Vec<_>>(), ["a\r"], "std's lines");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn string_helpers_agree_with_the_interpreter(
        s in text(),
        t in sep(),
        u in text_of(ALPHABET, 3),
        n in -2i64..24,
        m in -2i64..24,
    ) {
        let _lock = super::test_lock();
        check_all(&s, &t, &u, n, m);
        check_shown(&s);
        check_join(&[s.clone(), t.clone(), u.clone()], &t);
    }

    #[test]
    fn number_parsing_agrees_with_the_interpreter(s in text_of(NUMERIC, 6)) {
        let _lock = super::test_lock();
        check_numbers(&s);
    }

    #[test]
    fn joins_agree(items in prop::collection::vec(text(), 0..5), sep in sep()) {
        let _lock = super::test_lock();
        check_join(&items, &sep);
    }
}
