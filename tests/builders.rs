//! Issue 9.1: string builders live in the rt heap. A builder that is never
//! finished (an early return between the pushes and the join, a hole that
//! returns) is garbage the collector reclaims and counts, so a program that
//! abandons builders a million times runs in bounded memory. Each case runs
//! the `sspur` binary in a child process and bounds its peak heap (from
//! `SSPUR_GC_STATS`) and its peak RSS (from `wait4`).
//!
//! Before builders moved into the heap, `JOIN` grew to 175 MB of RSS (and
//! 675 MB at four times the iterations) and `HOLE` to 80 MB, while the
//! statistics reported a 128 KB heap.

use sspur_tests::{run, stat, Run};

/// Push then join, returning before the join on every even call: 50,000
/// abandoned builders of 26 pieces of about 100 bytes.
const JOIN: &str = r#"fn pieces(n: Int, word: Str) -> Str {
    var v = []
    var i = 0
    while i < 50 {
        v := v.push("{word} {i}")
        if i == 25 && n % 2 == 0 {
            return "early"
        }
        i := i + 1
    }
    v.join(",")
}

fn main() {
    let word = "x".repeat(100)
    var total = 0
    var k = 0
    while k < 100000 {
        total := total + pieces(k, word).len
        k := k + 1
    }
    print(total)
}
"#;

/// An interpolation whose last hole returns on every odd call: 500,000
/// abandoned builders of about 250 bytes.
const HOLE: &str = r#"fn label(n: Int, pad: Str) -> Str {
    let odd = "odd"
    if n % 2 == 1 {
        let s = "value {n} {pad} {return odd}"
        print(s)
    }
    "even"
}

fn main() {
    let pad = "y".repeat(240)
    var total = 0
    var k = 0
    while k < 1000000 {
        total := total + label(k, pad).len
        k := k + 1
    }
    print(total)
}
"#;

fn ok(name: &str, r: &Run, stdout: &str) -> String {
    let err = r.stderr_text();
    assert_eq!(r.exit, 0, "{name}: {err}");
    assert_eq!(r.stdout_text(), stdout, "{name}");
    assert!(!err.contains("sspur check"), "{name}: {err}");
    err
}

/// Collected with a 16 MB pacing floor: the heap never passes it, and the
/// abandoned builders (two blocks each for push then join; an
/// interpolation's builder lives in its caller's frame, so only its buffer)
/// are left for the collector and collected, not lost outside the heap.
#[test]
fn abandoned_builders_are_collected() {
    let env = [("SSPUR_GC_STATS", "1"), ("SSPUR_GC_MIN_MB", "16")];
    for (name, src, want, abandoned, blocks) in [
        ("join", JOIN, "259700000\n", 50_000, 2),
        ("hole", HOLE, "3500000\n", 500_000, 1),
    ] {
        let r = run(
            "builders",
            &format!("collected_{name}"),
            src,
            &["run"],
            &env,
        );
        let err = ok(name, &r, want);
        let peak = stat(&err, "peak heap").unwrap();
        assert!(peak <= 16 << 20, "{name}: peak heap {peak}\n{err}");
        let left = stat(&err, "left for the collector").unwrap();
        assert!(left >= blocks * abandoned, "{name}: {err}");
        let collected = stat(&err, "collected").unwrap();
        assert!(collected >= left / 2, "{name}: {err}");
        assert!(r.rss_mb <= 80, "{name}: peak RSS {} MB\n{err}", r.rss_mb);
    }
}

/// Under a 32 MB heap limit (and the default 256 MB pacing floor) the limit
/// itself makes the collector run: the programs finish.
#[test]
fn abandoned_builders_fit_under_a_small_heap_limit() {
    let env = [("SSPUR_MAX_HEAP_MB", "32")];
    for (name, src, want) in [("join", JOIN, "259700000\n"), ("hole", HOLE, "3500000\n")] {
        let r = run("builders", &format!("limit_{name}"), src, &["run"], &env);
        ok(name, &r, want);
        assert!(r.rss_mb <= 100, "{name}: peak RSS {} MB", r.rss_mb);
    }
}

/// Check mode under collector stress: no abandoned or finished builder
/// block is reported (fewer iterations: every free is quarantined).
#[test]
fn abandoned_builders_under_check_mode_and_stress() {
    let join = JOIN.replace("k < 100000", "k < 300");
    let hole = HOLE.replace("k < 1000000", "k < 3000");
    let env = [("SSPUR_MEM", "check"), ("SSPUR_GC_STRESS", "32")];
    for (name, src, want) in [("join", &join, "779100\n"), ("hole", &hole, "10500\n")] {
        let r = run("builders", &format!("check_{name}"), src, &["run"], &env);
        ok(name, &r, want);
    }
}

/// A builder that grows without end traps `out of memory` at the limit,
/// at the push, in bounded memory.
#[test]
fn a_growing_builder_traps_at_the_limit() {
    let src = r#"fn main() {
    let chunk = "z".repeat(100000)
    var v = []
    var i = 0
    while i < 1000000000 {
        v := v.push(chunk)
        i := i + 1
    }
    print(v.join(",").len)
}
"#;
    let r = run(
        "builders",
        "grow",
        src,
        &["run"],
        &[("SSPUR_MAX_HEAP_MB", "64")],
    );
    let err = r.stderr_text();
    assert_eq!(r.exit, 101, "{err}");
    // At the push whose piece the builder could not take.
    assert!(err.starts_with("trap: out of memory at "), "{err}");
    assert!(err.ends_with("grow.ssp:6:14\n  in main\n"), "{err}");
    assert!(r.rss_mb <= 150, "peak RSS {} MB", r.rss_mb);
}
