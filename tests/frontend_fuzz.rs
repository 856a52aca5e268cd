//! Random and mutated source text through the parser and the checker: no
//! input may panic. Mutations start from the shared corpus
//! (the `.ssp` files of tests/programs, tests/ownership, examples, tests/errors
//! and the parser's and checker's test data), read at
//! run time. `SSPUR_FUZZ_CASES` sets the number of cases per property.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use proptest::prelude::*;

fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in [
            "tests/programs",
            "tests/ownership",
            "examples",
            "tests/errors",
            "crates/syntax/tests/data",
            "crates/check/tests/good",
        ] {
            let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.extension().is_some_and(|x| x == "ssp") {
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        out.push(t);
                    }
                }
            }
        }
        if out.is_empty() {
            out.push("fn main() { print(1) }\n".to_string());
        }
        out
    })
}

fn cases() -> u32 {
    std::env::var("SSPUR_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

static PARSED: AtomicUsize = AtomicUsize::new(0);
static CHECKED: AtomicUsize = AtomicUsize::new(0);

/// Parses and checks; rendering the diagnostics must not panic either.
/// Counts inputs that parse and inputs that also check.
fn run(text: &str) {
    let (_, parse_diags) = syntax::parse(text);
    if parse_diags.is_empty() {
        PARSED.fetch_add(1, Ordering::Relaxed);
    }
    match check::check_source(text) {
        Ok(p) => {
            CHECKED.fetch_add(1, Ordering::Relaxed);
            let _ = ir::pretty::program(&p);
        }
        Err(diags) => {
            let _ = check::render_diagnostics("fuzz.ssp", text, &diags);
        }
    }
}

/// Pieces that tend to make interesting programs when spliced in.
const TOKENS: &[&str] = &[
    "fn",
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
    "type",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    ";",
    ":=",
    "=",
    "=>",
    "->",
    "|",
    "||",
    "&&",
    "..",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "<",
    "!",
    "x",
    "xs",
    "Some",
    "None",
    "_",
    "0",
    "1.5",
    "\"s{x}\"",
    "\n",
    " ",
    "Int",
    "List[Int]",
    "|x| x",
    ".len",
    ".map",
    "main",
    "print",
    "empty_map()",
    "Node",
    "Leaf",
];

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Swap(usize, usize),
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut s: Vec<u8> = text.as_bytes().to_vec();
    for e in edits {
        let n = s.len().max(1);
        match *e {
            Edit::Delete(at, len) => {
                let a = at % n;
                let b = (a + len % 16).min(s.len());
                if a < b {
                    s.drain(a..b);
                }
            }
            Edit::Insert(at, tok) => {
                let a = (at % n).min(s.len());
                let t = TOKENS[tok % TOKENS.len()].as_bytes();
                s.splice(a..a, t.iter().copied());
            }
            Edit::Duplicate(at, len) => {
                let a = at % n;
                let b = (a + len % 64).min(s.len());
                if a < b {
                    let piece: Vec<u8> = s[a..b].to_vec();
                    s.splice(b..b, piece);
                }
            }
            Edit::Swap(x, y) => {
                if !s.is_empty() {
                    let (a, b) = (x % s.len(), y % s.len());
                    s.swap(a, b);
                }
            }
        }
    }
    // Byte edits may split a UTF-8 character; the front end takes &str.
    String::from_utf8_lossy(&s).into_owned()
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Delete(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Duplicate(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Swap(a, b)),
    ]
}

/// Runs a property over `cases()` inputs and reports how many ran (a
/// panic in the front end fails the test with the shrunk input).
fn fuzz<S: Strategy>(what: &str, strategy: S, f: impl Fn(S::Value) -> String)
where
    S::Value: std::fmt::Debug,
{
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let ran = AtomicUsize::new(0);
    let (p0, c0) = (
        PARSED.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed),
    );
    let result = runner.run(&strategy, |input| {
        ran.fetch_add(1, Ordering::Relaxed);
        let text = f(input);
        run(&text);
        Ok(())
    });
    let n = ran.load(Ordering::Relaxed);
    // Other tests run in parallel, so the two counts are approximate.
    let parsed = PARSED.load(Ordering::Relaxed) - p0;
    let checked = CHECKED.load(Ordering::Relaxed) - c0;
    eprintln!(
        "{what}: {n} inputs through parse + check_source (about {parsed} parsed, {checked} checked)"
    );
    if let Err(e) = result {
        panic!("{what}: {e}");
    }
}

#[test]
fn mutated_corpus_never_panics() {
    let strategy = (any::<usize>(), prop::collection::vec(edit(), 1..8));
    fuzz("mutated corpus", strategy, |(pick, edits)| {
        let c = corpus();
        apply(&c[pick % c.len()], &edits)
    });
}

/// Byte ranges of the words (identifiers, keywords, numbers) of a text.
fn words(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Replacements that keep the syntax plausible but change meaning.
const WORDS: &[&str] = &[
    "x",
    "xs",
    "n",
    "s",
    "m",
    "acc",
    "len",
    "map",
    "filter",
    "fold",
    "push",
    "get",
    "put",
    "get_or",
    "entries",
    "sum",
    "join",
    "Int",
    "Str",
    "F64",
    "Bool",
    "List",
    "Map",
    "Option",
    "Some",
    "None",
    "true",
    "false",
    "0",
    "1",
    "2.5",
    "main",
    "print",
    "empty_map",
    "trap",
    "let",
    "var",
    "return",
    "break",
    "Leaf",
    "Node",
    "sort_by",
    "to_int",
    "words",
    "counts",
];

/// Replaces words of a corpus program: the result usually still parses,
/// so this exercises the checker rather than the parser.
#[test]
fn word_swaps_never_panic() {
    let strategy = (
        any::<usize>(),
        prop::collection::vec((any::<usize>(), any::<usize>()), 1..4),
    );
    fuzz("word swaps", strategy, |(pick, swaps)| {
        let c = corpus();
        let mut text = c[pick % c.len()].clone();
        for (at, with) in swaps {
            let ws = words(&text);
            if ws.is_empty() {
                break;
            }
            let (a, b) = ws[at % ws.len()];
            // Half the time a word from the same program, else from WORDS.
            let replacement = if with % 2 == 0 {
                let (x, y) = ws[(with / 2) % ws.len()];
                text[x..y].to_string()
            } else {
                WORDS[(with / 2) % WORDS.len()].to_string()
            };
            text.replace_range(a..b, &replacement);
        }
        text
    });
}

#[test]
fn token_soup_never_panics() {
    fuzz(
        "token soup",
        prop::collection::vec(any::<usize>(), 0..200),
        |toks| {
            toks.iter()
                .map(|t| TOKENS[t % TOKENS.len()])
                .collect::<Vec<_>>()
                .join(" ")
        },
    );
}

#[test]
fn arbitrary_text_never_panics() {
    fuzz("arbitrary text", any::<String>(), |text| text);
}

/// Every corpus program unchanged, and each with every single line deleted
/// in turn (a deterministic sweep that proptest's sampling may miss).
#[test]
fn corpus_line_deletions_never_panic() {
    let mut n = 0usize;
    let (p0, c0) = (
        PARSED.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed),
    );
    for text in corpus() {
        run(text);
        let lines: Vec<&str> = text.lines().collect();
        for skip in 0..lines.len() {
            let t: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, l)| *l)
                .collect();
            run(&t.join("\n"));
            n += 1;
        }
    }
    let parsed = PARSED.load(Ordering::Relaxed) - p0;
    let checked = CHECKED.load(Ordering::Relaxed) - c0;
    eprintln!("line-deletion sweep: {n} programs (about {parsed} parsed, {checked} checked)");
}

/// Deep nesting stays within the parser's limit and never overflows.
#[test]
fn deep_nesting_is_a_diagnostic() {
    for depth in [10usize, 255, 300, 1000, 1020, 5000] {
        let open = "(".repeat(depth);
        let close = ")".repeat(depth);
        run(&format!(
            "fn main() {{ let x = {open}1{close}\n print(x) }}\n"
        ));
        let blocks = "{".repeat(depth) + &"}".repeat(depth);
        run(&format!("fn main() {blocks}\n"));
        let lists = "[".repeat(depth) + &"]".repeat(depth);
        run(&format!("fn main() {{ print({lists}) }}\n"));
        let lambdas = "|x| ".repeat(depth);
        run(&format!("fn main() {{ let f = {lambdas}1\n }}\n"));
        // Left-nested chains are not brackets: the parser's tree-depth
        // limit (1024) is what bounds them, and checking and printing
        // must survive right up to it.
        let sum = vec!["1"; depth].join(" + ");
        check_and_print(&format!("fn main() {{\n let x = {sum}\n print(x)\n}}\n"));
        let calls = ".reverse".repeat(depth);
        check_and_print(&format!("fn main() {{\n print([1]{calls})\n}}\n"));
        let negs = "-".repeat(depth);
        check_and_print(&format!("fn main() {{\n print({negs}1)\n}}\n"));
    }
}

/// Checks, and when the program is valid prints its IR.
fn check_and_print(text: &str) {
    match check::check_source(text) {
        Ok(p) => {
            let _ = ir::pretty::program(&p);
        }
        Err(diags) => {
            let _ = check::render_diagnostics("fuzz.ssp", text, &diags);
        }
    }
}
