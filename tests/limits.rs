//! Issue 13: no input takes the machine down. Each case runs the `sspur`
//! binary in a child process (built once per test run) and bounds its exit
//! code, its stderr, its time and its peak RSS (from `wait4`'s rusage).

use std::time::Duration;

use sspur_tests::Run;

/// Runs `sspur -W none ARGS` on `source` (written to a temporary file
/// named `name.ssp`) with `env`. Without warnings: these programs grow a
/// `var` nobody reads on purpose, and the cases bound stderr.
fn run(name: &str, source: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let args: Vec<&str> = ["-W", "none"].iter().chain(args).copied().collect();
    sspur_tests::run("limits", name, source, &args, env)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Both backends give the same `out of memory` trap at `at`, at once, in
/// bounded memory.
fn same_trap(name: &str, source: &str, env: &[(&str, &str)], at: &str, max_rss_mb: [i64; 2]) {
    for (mode, max_rss) in [
        (&["run"][..], max_rss_mb[0]),
        (&["run", "--interp"][..], max_rss_mb[1]),
    ] {
        let r = run(name, source, mode, env);
        let err = text(&r.stderr);
        assert_eq!(r.exit, 101, "{name} {mode:?}: {err}");
        assert!(r.stdout.is_empty(), "{name} {mode:?}");
        assert!(
            err.starts_with("trap: out of memory at ") && err.lines().next().unwrap().ends_with(at),
            "{name} {mode:?}: {err}"
        );
        assert!(
            r.rss_mb <= max_rss,
            "{name} {mode:?}: peak RSS {} MB",
            r.rss_mb
        );
        // Compiling in a debug build takes part of this.
        assert!(
            r.time < Duration::from_secs(10),
            "{name} {mode:?}: {:?}",
            r.time
        );
    }
}

#[test]
fn huge_repeat_traps_at_once() {
    let src = "fn main() {\n    let s = \"ab\".repeat(10000000000000)\n    print(s.len)\n}\n";
    same_trap("repeat", src, &[], "repeat.ssp:2:13", [100, 100]);
}

#[test]
fn huge_range_traps_at_once() {
    let src = "fn main() {\n    let xs = (0..10000000000).map(|i| i)\n    print(xs.len)\n}\n";
    same_trap("range", src, &[], "range.ssp:2:14", [100, 100]);
}

#[test]
fn huge_replace_traps_at_once() {
    // 1,000 characters, each replaced by a 10 MB string: 10 GB.
    let src = "fn main() {\n    let big = \"x\".repeat(10000000)\n    let s = \"a\".repeat(1000).replace(\"\", big)\n    print(s.len)\n}\n";
    same_trap(
        "replace",
        src,
        &[("SSPUR_MAX_HEAP_MB", "256")],
        "replace.ssp:3:13",
        [400, 400],
    );
}

#[test]
fn doubling_list_under_a_small_limit() {
    let src =
        "fn main() {\n    var xs = [1]\n    while true {\n        xs := xs.concat(xs)\n    }\n}\n";
    // The interpreter's values are four times the native layout's size
    // (a 32-byte `Value` per 8-byte Int), so its own RSS is bounded by
    // about four times the limit.
    same_trap(
        "doubling",
        src,
        &[("SSPUR_MAX_HEAP_MB", "64")],
        "doubling.ssp:4:15",
        [100, 400],
    );
}

#[test]
fn doubling_string_under_a_small_limit() {
    let src = "fn main() {\n    var s = \"ab\"\n    while true {\n        s := s + s\n    }\n}\n";
    same_trap(
        "sdouble2",
        src,
        &[("SSPUR_MAX_HEAP_MB", "64")],
        "sdouble2.ssp:4:14",
        [100, 200],
    );
}

#[test]
fn cons_list_under_a_small_limit() {
    // Every object counts against the limit in the interpreter too
    // (crates/interp/src/limit.rs), at its native size: a constructor
    // growing a list forever traps at the constructor in both backends.
    // The interpreter's own values are about ten times the native layout's
    // size, hence the small limit.
    let src = "type L = Nil | Cons(Int, L)\nfn main() {\n    var l = Nil\n    var i = 0\n    while true {\n        l := Cons(i, l)\n        i := i + 1\n    }\n}\n";
    same_trap(
        "cons",
        src,
        &[("SSPUR_MAX_HEAP_MB", "16")],
        "cons.ssp:6:14",
        [60, 250],
    );
}

#[test]
fn records_tuples_options_and_closures_count_against_the_limit() {
    // Each grows without bound through one kind of object only (no list
    // buffer or string): a record chain, a chain of tuples in options,
    // and closures capturing the previous closure. A record and its
    // `Some` take 32 bytes natively and about 15 times that in the
    // interpreter.
    let cases = [
        (
            "records",
            "type R = { next: Option[R], n: Int }\nfn main() {\n    var r = R { next: None, n: 0 }\n    while true {\n        r := R { next: Some(r), n: r.n + 1 }\n    }\n}\n",
            "records.ssp:5:14",
        ),
        (
            "tuples",
            "type T = End | More((Int, T))\nfn main() {\n    var t = End\n    var i = 0\n    while true {\n        t := More((i, t))\n        i := i + 1\n    }\n}\n",
            "tuples.ssp:6:19",
        ),
        (
            "closures",
            "fn main() {\n    var f = |x: Int| x\n    while true {\n        let g = f\n        f := |x: Int| g(x) + 1\n    }\n}\n",
            "closures.ssp:5:14",
        ),
    ];
    for (name, src, at) in cases {
        same_trap(name, src, &[("SSPUR_MAX_HEAP_MB", "8")], at, [60, 200]);
    }
}

#[test]
fn interpolation_and_builders_trap_at_their_position() {
    // The native string builder knows its site: the interpolation, or the
    // piece a push-then-join is pushing.
    let interp =
        "fn main() {\n    var s = \"ab\"\n    while true {\n        s := \"{s}{s}\"\n    }\n}\n";
    same_trap(
        "interp",
        interp,
        &[("SSPUR_MAX_HEAP_MB", "32")],
        "interp.ssp:4:14",
        [100, 200],
    );
    let join = "fn main() {\n    let word = \"x\".repeat(1000)\n    var v = []\n    var i = 0\n    while i < 1000000 {\n        v := v.push(word)\n        i := i + 1\n    }\n    print(v.join(\",\").len)\n}\n";
    same_trap(
        "join",
        join,
        &[("SSPUR_MAX_HEAP_MB", "16")],
        "join.ssp:6:14",
        [60, 100],
    );
}

#[test]
fn diagnostics_on_a_long_line_are_bounded() {
    // A 10 MB line: a flat sum, and an unterminated string at its end.
    let sum = format!(
        "fn main() {{\n    let x = {}1\n}}\n",
        "1 + ".repeat(2_500_000)
    );
    let unterminated = format!(
        "fn main() {{\n    let x = {}\"abc\n}}\n",
        "1 + ".repeat(2_500_000)
    );
    for (name, src) in [("long_sum", sum), ("long_string", unterminated)] {
        let r = run(name, &src, &["check"], &[]);
        let err = text(&r.stderr);
        assert_eq!(r.exit, 1, "{name}: {err}");
        assert!(
            r.stderr.len() < 2000,
            "{name}: {} bytes of stderr",
            r.stderr.len()
        );
        for line in err.lines() {
            assert!(line.chars().count() < 140, "{name}: {line}");
        }
    }
}

#[test]
fn flags_that_do_nothing_are_rejected() {
    let src = "fn main() {\n    print(1)\n}\n";
    for flag in ["--check-drops", "--oracle"] {
        let r = run("flags", src, &["run", flag], &[]);
        let err = text(&r.stderr);
        assert_eq!(r.exit, 2, "{flag}: {err}");
        assert!(err.contains("--interp"), "{flag}: {err}");
        assert!(r.stdout.is_empty(), "{flag} ran the program");
        let ok = run("flags", src, &["run", "--interp", flag], &[]);
        assert_eq!(ok.exit, 0, "--interp {flag}: {}", text(&ok.stderr));
    }
    let bad = run("flags", src, &["run"], &[("SSPUR_MAX_HEAP_MB", "lots")]);
    assert_eq!(bad.exit, 2, "{}", text(&bad.stderr));
}

/// Under `ulimit -v` (3 GB of address space, far below the machine's
/// memory) a program whose values grow without end traps `out of memory`
/// in both backends: the default heap limit follows the address space
/// left, so neither the runtime nor the interpreter's own allocations meet
/// a refused mapping first (the interpreter used to abort on one).
#[test]
fn growth_under_an_address_space_limit_traps() {
    let src = "type L = Nil | Cons(Int, L)\n\nfn main() {\n    var l = Nil\n    var i = 0\n    while true {\n        l := Cons(i, l)\n        i := i + 1\n    }\n    print(i)\n}\n";
    // `-W none`, as `run` above: `l` grows and is never read on purpose.
    for mode in [
        &["-W", "none", "run"][..],
        &["-W", "none", "run", "--interp"][..],
    ] {
        let r = sspur_tests::run_limited("limits", "ulimit", src, mode, &[], Some(3 << 20));
        let err = text(&r.stderr);
        assert_eq!(r.exit, 101, "{mode:?}: {err}");
        assert!(
            err.starts_with("trap: out of memory at ") && err.contains("ulimit.ssp:7:14"),
            "{mode:?}: {err}"
        );
        assert!(r.rss_mb <= 3 << 10, "{mode:?}: peak RSS {} MB", r.rss_mb);
    }
}

/// `SSPUR_STACK_MB` sizes the program's stack in both backends: natively
/// the thread's stack, in the interpreter ten thousand calls per MB. A
/// recursion that fits runs in both; one far deeper traps in both with the
/// same first line. The deep case goes far beyond 16 MB because the
/// system may hand the program thread a cached stack up to four times the
/// size asked for.
#[test]
fn stack_mb_bounds_the_depth_in_both_backends() {
    let src = |n: u32| {
        format!("fn down(n: Int) -> Int {{\n    if n == 0 {{ 0 }} else {{ 1 + down(n - 1) }}\n}}\n\nfn main() {{\n    print(down({n}))\n}}\n")
    };
    let env = [("SSPUR_STACK_MB", "16"), ("SSPUR_BACKTRACE", "0")];
    for mode in [&["run"][..], &["run", "--interp"][..]] {
        let r = run("stack_fits", &src(100_000), mode, &env);
        assert_eq!(r.exit, 0, "{mode:?}: {}", text(&r.stderr));
        assert_eq!(text(&r.stdout), "100000\n", "{mode:?}");
        let r = run("stack_deep", &src(40_000_000), mode, &env);
        assert_eq!(r.exit, 101, "{mode:?}: {}", text(&r.stderr));
        assert!(r.stdout.is_empty(), "{mode:?}");
        let err = text(&r.stderr);
        assert!(
            err.starts_with("trap: stack overflow at ")
                && err.trim_end().ends_with("stack_deep.ssp:1:4"),
            "{mode:?}: {err}"
        );
    }
}
