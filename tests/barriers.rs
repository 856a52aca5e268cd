//! Stack barriers (crates/rt/src/barrier.rs): a minor collection does not
//! read again the stack above the innermost barrier the program has not
//! returned through. These programs recurse deeply while allocating, hold
//! young values in their frames across the recursion and use them after
//! it returns, push into lists they hold while deeper frames collect, and
//! call closures from runtime code (list methods) in the middle of the
//! recursion. They run natively with a barrier every KB of stack and a
//! collection every few KB, in the default mode and in check mode, whose
//! checksums of the words above each barrier must not change, and must
//! print what the interpreter prints.

use sspur_tests::{run, Run};

/// Deep recursion that holds young cells across its calls.
const DEEP: &str = r#"type L = Nil | Cons(Int, L)

fn len(xs: L) -> Int {
    match xs {
        Nil => 0
        Cons(_, t) => 1 + len(t)
    }
}

fn total(xs: L) -> Int {
    match xs {
        Nil => 0
        Cons(h, t) => h + total(t)
    }
}

fn deep(n: Int, acc: L) -> Int {
    if n == 0 {
        total(acc)
    } else {
        let mine = Cons(n, Cons(n * 3, Nil))
        let r = deep(n - 1, Cons(n % 7, acc))
        r + total(mine) + len(mine)
    }
}

fn main() {
    var s = 0
    for round in 0..6 {
        s := s + deep(3000 + round * 500, Nil)
    }
    print(s)
}
"#;

/// A recursion that descends without allocating (each frame holds a cell
/// it reuses in place as it returns) and allocates at the bottom, so the
/// collection there finds many new frames at once and reads them in
/// steps, while the program goes on between them.
const DESCEND: &str = r#"type L = Nil | Cons(Int, L)

fn fresh(n: Int, acc: L) -> L {
    if n == 0 { acc } else { fresh(n - 1, Cons(n, acc)) }
}

fn app(xs: L, ys: L) -> L {
    match xs {
        Nil => fresh(60, ys)
        Cons(h, t) => Cons(h * 2 + 1, app(t, ys))
    }
}

fn total(xs: L) -> Int {
    match xs {
        Nil => 0
        Cons(h, t) => h % 1000 + total(t)
    }
}

fn main() {
    var s = 0
    for round in 0..8 {
        let xs = fresh(4000 + round * 300, Nil)
        let ys = app(app(xs, Cons(round, Nil)), Nil)
        s := s + total(ys)
    }
    print(s)
}
"#;

/// Lists pushed into while deeper frames allocate and collect, closures
/// called by runtime list methods in the middle of the recursion, strings
/// built by interpolation across it.
const LEVELS: &str = r#"type T = Leaf | Node(T, Int, T)

fn tree(d: Int) -> T {
    if d == 0 { Leaf } else { Node(tree(d - 1), d, tree(d - 1)) }
}

fn sum(t: T) -> Int {
    match t {
        Leaf => 0
        Node(l, v, r) => sum(l) + v + sum(r)
    }
}

fn level(d: Int) -> List[Int] {
    var acc = []
    for i in 0..3 {
        acc := acc.push(sum(tree(4)) + i)
        if d > 0 {
            let sub = level(d - 1)
            acc := acc.push(sub.len + sub.sum)
        }
    }
    acc
}

fn chain(n: Int) -> Str {
    if n == 0 {
        "end"
    } else {
        let xs = [n, n + 1, n + 2].map(|x| sum(tree(x % 5)))
        let rest = chain(n - 1)
        "{xs.sum}{rest.len % 10}"
    }
}

fn main() {
    let xs = level(6)
    print(xs.len)
    print(xs.sum)
    print(chain(1500).len)
    let ys = [200, 300, 400].map(|n| chain(n).len)
    print(ys)
}
"#;

fn check(name: &str, src: &str, env: &[(&str, &str)], want: &str) -> Run {
    let r = run("barriers", name, src, &["run"], env);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.exit, 0, "{name} {env:?}: exit {}\n{err}", r.exit);
    assert!(!err.contains("sspur check"), "{name} {env:?}:\n{err}");
    assert_eq!(String::from_utf8_lossy(&r.stdout), want, "{name} {env:?}");
    r
}

fn expected(name: &str, src: &str) -> String {
    let r = run("barriers", name, src, &["run", "--interp"], &[]);
    assert_eq!(r.exit, 0, "{name}: interpreter failed");
    String::from_utf8(r.stdout).unwrap()
}

#[test]
fn deep_recursion_keeps_what_its_frames_hold() {
    for (name, src) in [("deep", DEEP), ("descend", DESCEND), ("levels", LEVELS)] {
        let want = expected(name, src);
        let barrier = ("SSPUR_GC_BARRIER_KB", "1");
        check(name, src, &[barrier, ("SSPUR_GC_STRESS", "16")], &want);
        check(
            name,
            src,
            &[barrier, ("SSPUR_GC_STRESS", "16"), ("SSPUR_MEM", "check")],
            &want,
        );
        check(
            name,
            src,
            &[barrier, ("SSPUR_GC_YOUNG_MB", "1"), ("SSPUR_MEM", "gc")],
            &want,
        );
        let r = check(
            name,
            src,
            &[barrier, ("SSPUR_GC_STATS", "1"), ("SSPUR_GC_STRESS", "64")],
            &want,
        );
        let err = String::from_utf8_lossy(&r.stderr);
        let installed = sspur_tests::stat(&err, "stack barriers").unwrap_or(0);
        assert!(
            installed > 10,
            "{name}: {installed} barriers installed\n{err}"
        );
        // With a barrier every KB, a minor collection reads at most 64 KB
        // of new stack per pause: the deep recursion is read in steps.
        let steps = sspur_tests::stat(&err, "stack steps").unwrap_or(0);
        assert!(
            steps > 0 || name == "levels",
            "{name}: no stack steps\n{err}"
        );
    }
}

/// A planted bug (debug builds: `SSPUR_TEST_STALE_BARRIERS=1` makes the
/// collector keep treating barriers the program returned through as
/// intact, so it skips frames that ran since) is reported by check mode.
#[test]
fn check_mode_reports_frames_changed_above_a_barrier() {
    let env = [
        ("SSPUR_GC_BARRIER_KB", "1"),
        ("SSPUR_GC_STRESS", "16"),
        ("SSPUR_MEM", "check"),
        ("SSPUR_TEST_STALE_BARRIERS", "1"),
    ];
    let r = run("barriers", "deep_bug", DEEP, &["run"], &env);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("sspur check: a suspended stack frame changed above a stack barrier"),
        "exit {}\n{err}",
        r.exit
    );
}
