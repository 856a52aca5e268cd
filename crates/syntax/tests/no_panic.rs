//! The lexer and parser never panic, whatever the input: random strings,
//! random token soups, and mutations (delete, insert, duplicate, swap of
//! ranges) of every `.ssp` file in the repository's examples/,
//! tests/programs/, tests/errors/ and this crate's tests/data/ (read at test
//! time). Also checked: token, node and diagnostic spans lie inside the
//! text, and a parse without diagnostics contains no error node.
//!
//! Cases per run: 6,000 random strings + 6,000 token soups + 12,000
//! mutations = 24,000 (`SSPUR_FUZZ_SCALE=10` multiplies them).

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn scale() -> u32 {
    std::env::var("SSPUR_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn config(cases: u32) -> Config {
    Config {
        cases: cases * scale(),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Checks `text` on a stack as roomy as the compiler's own: the parser
/// accepts trees up to `MAX_TREE_DEPTH` deep, and dumping or dropping
/// such a tree in a debug build can outgrow a test thread's 2 MB.
fn check(text: &str) {
    stdx::with_big_stack(256 << 20, "no-panic check", || check_here(text));
}

fn check_here(text: &str) {
    let tokens = syntax::lex(text);
    let len = text.len() as u32;
    for (_, span) in &tokens {
        assert!(
            span.start <= span.end && span.end <= len,
            "token span {span:?}"
        );
    }
    let (file, diags) = syntax::parse(text);
    for d in &diags {
        assert!(
            d.span.start <= d.span.end && d.span.end <= len,
            "diagnostic {d:?} outside text of length {len}"
        );
        assert!(!d.message.is_empty());
    }
    let dump = syntax::dump::dump(&file);
    // Every line but a string's `text` part ends with its node's span.
    for line in dump
        .lines()
        .filter(|l| !l.trim_start().starts_with("text "))
    {
        let Some((_, span)) = line.rsplit_once(" @") else {
            continue;
        };
        let (s, e) = span.split_once("..").expect("span in dump");
        let (s, e): (u32, u32) = (s.parse().expect("start"), e.parse().expect("end"));
        assert!(
            s <= e && e <= len,
            "node span {s}..{e} outside text of length {len}: {line}"
        );
    }
    if diags.is_empty() {
        assert!(
            !dump.lines().any(|l| l.trim_start().starts_with("error @")),
            "error node without a diagnostic:\n{dump}"
        );
    }
}

/// The `.ssp` files in the repository, read once.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = crate_dir.join("../..");
        let dirs = [
            root.join("examples"),
            root.join("tests/programs"),
            root.join("tests/errors"),
            crate_dir.join("tests/data"),
        ];
        let mut files = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut paths: Vec<_> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "ssp"))
                .collect();
            paths.sort();
            for p in paths {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    // Huge generated inputs make mutation runs slow.
                    if text.len() <= 20_000 {
                        files.push(text);
                    }
                }
            }
        }
        files
    })
}

const FRAGMENTS: &[&str] = &[
    "fn",
    "type",
    "let",
    "var",
    "if",
    "else",
    "match",
    "for",
    "in",
    "while",
    "return",
    "break",
    "continue",
    "true",
    "false",
    "_",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ":=",
    ".",
    "..",
    "->",
    "=>",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "!",
    "|",
    "\n",
    "x",
    "xs",
    "main",
    "Int",
    "List",
    "Some",
    "None",
    "Sale",
    "0",
    "42",
    "1.5",
    "2e9",
    "0xff",
    "99999999999999999999",
    "t.0.1",
    "\"s\"",
    "\"{x}\"",
    "\"{\"",
    "\"a\\q\"",
    "\"{}\"",
    "\"{1 +}\"",
    "\"",
    "\\",
    "//c",
    "\0",
    "é",
    "@",
    "1_000",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(FRAGMENTS),
            prop::sample::select(&[" ", "", "\n"][..]),
        ),
        0..80,
    )
    .prop_map(|parts| {
        parts
            .into_iter()
            .map(|(a, b)| format!("{a}{b}"))
            .collect::<String>()
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, String),
    Duplicate(usize, usize),
    Swap(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), prop::sample::select(FRAGMENTS))
            .prop_map(|(a, f)| Mutation::Insert(a, f.to_string())),
        (any::<usize>(), 0usize..60).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        (any::<usize>(), any::<usize>(), 1usize..30).prop_map(|(a, b, n)| Mutation::Swap(a, b, n)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for m in muts {
        let len = chars.len();
        let at = |a: usize| if len == 0 { 0 } else { a % (len + 1) };
        match m {
            Mutation::Delete(a, n) => {
                let s = at(*a);
                let e = (s + n).min(len);
                chars.drain(s..e);
            }
            Mutation::Insert(a, f) => {
                let s = at(*a);
                chars.splice(s..s, f.chars());
            }
            Mutation::Duplicate(a, n) => {
                let s = at(*a);
                let e = (s + n).min(len);
                let piece: Vec<char> = chars[s..e].to_vec();
                chars.splice(e..e, piece);
            }
            Mutation::Swap(a, b, n) => {
                let (mut x, mut y) = (at(*a), at(*b));
                if x > y {
                    std::mem::swap(&mut x, &mut y);
                }
                let n = (*n).min(y - x).min(len - y);
                if n > 0 {
                    for i in 0..n {
                        chars.swap(x + i, y + i);
                    }
                }
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn random_strings() {
    let mut runner = TestRunner::new(config(3_000));
    runner
        .run(&any::<String>(), |s| {
            check(&s);
            Ok(())
        })
        .unwrap();
    let mut runner = TestRunner::new(config(3_000));
    runner
        .run(
            &"[a-zA-Z0-9_ (){}\\[\\],.;:=<>!+*/%|&\"\\\\\n{}-]{0,200}",
            |s| {
                check(&s);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn token_soups() {
    let mut runner = TestRunner::new(config(6_000));
    runner
        .run(&soup(), |s| {
            check(&s);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_programs() {
    let files = corpus();
    assert!(!files.is_empty(), "no .ssp files found");
    let mut runner = TestRunner::new(config(12_000));
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..6));
    runner
        .run(&strategy, |(i, muts)| {
            check(&apply(&files[i], &muts));
            Ok(())
        })
        .unwrap();
}

#[test]
fn corpus_parses_without_panic() {
    for text in corpus() {
        check(text);
    }
}
