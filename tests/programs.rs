//! Runs the program corpus (`tests/programs/*.ssp` and `examples/*.ssp`)
//! through the checker and the reference interpreter, and compares stdout,
//! stderr and the exit code with the expectations beside each program:
//! `NAME.stdout`, `NAME.stderr` (empty if missing), `NAME.exit` (0 if
//! missing); `NAME.stdin` is the program's stdin (empty if missing) and
//! `NAME.args` its arguments, one per line, where `$TMP` stands for an
//! empty directory of the run's own.
//!
//! Every program runs twice: as checked, and after the ownership pass with
//! drops checked, which must not change what it prints. All failures are
//! reported together, each with a diff.

use std::fs;
use std::path::Path;

/// One corpus program and what it must do.
struct Case {
    /// Path relative to the repository root, as traps print it.
    path: String,
    text: String,
    stdin: String,
    args: Vec<String>,
    stdout: String,
    stderr: String,
    exit: i32,
}

fn read_opt(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for dir in ["tests/programs", "examples"] {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".ssp").map(str::to_string))
            .collect();
        names.sort();
        for name in names {
            let base = Path::new(dir).join(&name);
            let with = |ext: &str| base.with_extension(ext);
            let text = read_opt(&with("ssp")).unwrap_or_default();
            let exit = read_opt(&with("exit"))
                .map(|s| s.trim().parse().unwrap_or(-1))
                .unwrap_or(0);
            let args = read_opt(&with("args"))
                .map(|s| s.lines().map(str::to_string).collect())
                .unwrap_or_default();
            cases.push(Case {
                path: format!("{dir}/{name}.ssp"),
                text,
                stdin: read_opt(&with("stdin")).unwrap_or_default(),
                args,
                stdout: read_opt(&with("stdout")).unwrap_or_default(),
                stderr: read_opt(&with("stderr")).unwrap_or_default(),
                exit,
            });
        }
    }
    cases
}

/// A line diff: the common prefix and suffix are skipped, the differing
/// middle is shown as `-expected` / `+actual` lines.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    let pre = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suf = e[pre..]
        .iter()
        .rev()
        .zip(a[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = format!("@@ line {} @@\n", pre + 1);
    for l in &e[pre..e.len() - suf] {
        out.push_str(&format!("-{}", show_line(l)));
    }
    for l in &a[pre..a.len() - suf] {
        out.push_str(&format!("+{}", show_line(l)));
    }
    out
}

fn show_line(l: &str) -> String {
    if l.ends_with('\n') {
        l.to_string()
    } else {
        format!("{l}\n\\ no newline at end\n")
    }
}

/// Runs `program` and describes every way it differs from `case`.
fn compare(case: &Case, program: &ir::Program, check_drops: bool) -> Option<String> {
    let dir = sspur_tests::RunDir::new();
    let opts = interp::Options {
        path: case.path.clone(),
        args: dir.args(&case.args),
        stdin: Some(case.stdin.clone()),
        check_drops,
        oracle: false,
        max_depth: sspur_tests::INTERP_DEPTH,
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let outcome = interp::run(program, &opts, &mut out, &mut err);
    let out = String::from_utf8_lossy(&out);
    let err = String::from_utf8_lossy(&err);
    let mut problems = String::new();
    if out != case.stdout {
        problems.push_str(&format!("stdout differs:\n{}", diff(&case.stdout, &out)));
    }
    if err != case.stderr {
        problems.push_str(&format!("stderr differs:\n{}", diff(&case.stderr, &err)));
    }
    if outcome.exit_code != case.exit {
        problems.push_str(&format!(
            "exit code {} (expected {})\n",
            outcome.exit_code, case.exit
        ));
    }
    (!problems.is_empty()).then_some(problems)
}

fn checked(case: &Case) -> Result<ir::Program, String> {
    check::check_source(&case.text).map_err(|diags| {
        format!(
            "does not check:\n{}",
            check::render_diagnostics(&case.path, &case.text, &diags)
        )
    })
}

/// Runs every case through `prepare` and the interpreter, then panics with
/// all failures at once.
fn run_corpus(what: &str, check_drops: bool, prepare: fn(ir::Program) -> ir::Program) {
    let cases = cases();
    assert!(
        !cases.is_empty(),
        "no corpus programs found (cwd must be the repository root)"
    );
    let mut failures = Vec::new();
    for case in &cases {
        let result = checked(case).map(prepare);
        let problem = match result {
            Err(msg) => Some(msg),
            Ok(program) => compare(case, &program, check_drops),
        };
        if let Some(p) = problem {
            failures.push(format!("=== {} ({what})\n{p}", case.path));
        }
    }
    eprintln!("{} programs run ({what})", cases.len());
    if !failures.is_empty() {
        panic!(
            "{} of {} programs failed ({what}):\n\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn corpus_interp() {
    run_corpus("interpreter", false, |p| p);
}

/// The corpus after the ownership pass, with every drop checked: a drop
/// that frees something still in use turns into exit code 3 naming both
/// sites, so this is the soundness oracle of the analysis.
#[test]
fn corpus_interp_with_checked_drops() {
    run_corpus("ownership + checked drops", true, |p| {
        std::sync::Arc::unwrap_or_clone(ownership::analyze(&p).program)
    });
}

/// Every program after the ownership pass, with the oracle: drops only
/// ever free blocks that were never shared, so what they free is bounded by
/// what a perfect analysis could.
#[test]
fn corpus_oracle_bounds_drops() {
    let mut sums = [interp::KindReport::default(); 4];
    let mut failures = Vec::new();
    for case in &cases() {
        let Ok(program) = checked(case) else { continue };
        let program = ownership::analyze(&program).program;
        let dir = sspur_tests::RunDir::new();
        let opts = interp::Options {
            path: case.path.clone(),
            args: dir.args(&case.args),
            stdin: Some(case.stdin.clone()),
            check_drops: true,
            oracle: true,
            max_depth: sspur_tests::INTERP_DEPTH,
        };
        let outcome = interp::run(&program, &opts, &mut Vec::new(), &mut Vec::new());
        drop(dir);
        let Some(report) = outcome.oracle else {
            failures.push(format!("{}: no oracle report", case.path));
            continue;
        };
        for kind in interp::Kind::ALL {
            let k = report.kind(kind);
            if k.ended() > k.never_shared || k.never_shared > k.allocated {
                failures.push(format!("{}: {}: {k}", case.path, kind.name()));
            }
            let sum = &mut sums[kind as usize];
            sum.allocated += k.allocated;
            sum.never_shared += k.never_shared;
            sum.freed += k.freed;
            sum.reused += k.reused;
        }
        let total = report.total();
        if total.freed != outcome.drops_freed || total.reused != outcome.reused {
            failures.push(format!(
                "{}: drops_freed {} and reused {} but {report}",
                case.path, outcome.drops_freed, outcome.reused
            ));
        }
    }
    for kind in interp::Kind::ALL {
        eprintln!("corpus oracle {}: {}", kind.name(), sums[kind as usize]);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------- drop checker

/// Checks `src` and inserts `drop LOCAL` statements into `main`'s body
/// block before the statement at each given index (several drops may name
/// the same place).
fn with_drops(src: &str, drops: &[(&str, usize)]) -> ir::Program {
    let mut program = check::check_source(src).expect("test program checks");
    let main = program.main().expect("main");
    let i = main.into_raw().into_u32() as usize;
    let body = std::sync::Arc::make_mut(&mut program.bodies[i]);
    let root = body.root();
    let ir::ExprKind::Block { stmts, tail } = &body.exprs[root].kind else {
        panic!("main's body is a block")
    };
    let mut stmts = stmts.clone();
    // The tail becomes a statement so that drops can follow it.
    if let Some(t) = *tail {
        stmts.push(body.stmts.alloc(ir::Stmt {
            kind: ir::StmtKind::Expr(t),
        }));
    }
    for &(name, at) in drops.iter().rev() {
        let local = body
            .locals
            .iter()
            .find(|(_, l)| l.name == name)
            .map(|(id, _)| id)
            .expect("local exists");
        let s = body.stmts.alloc(ir::Stmt {
            kind: ir::StmtKind::Drop(ir::Drop {
                local,
                deep: false,
                reason: 0,
            }),
        });
        stmts.insert(at, s);
    }
    if let ir::ExprKind::Block { stmts: old, tail } = &mut body.exprs[root].kind {
        *old = stmts;
        *tail = None;
    }
    program
}

fn run_checked(program: &ir::Program) -> (String, String, interp::Outcome) {
    let opts = interp::Options {
        path: "t.ssp".into(),
        stdin: Some(String::new()),
        check_drops: true,
        oracle: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = interp::run(program, &opts, &mut out, &mut err);
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
        outcome,
    )
}

/// (source, drops to insert as (local, statement index), expected stdout,
/// expected stderr prefix, exit code, drops freed)
type DropCase = (
    &'static str,
    &'static [(&'static str, usize)],
    &'static str,
    &'static str,
    i32,
    u64,
);

const DROP_CASES: &[DropCase] = &[
    // A drop after the last use frees one block.
    (
        "fn main() {\n    let xs = [1, 2, 3]\n    print(xs.len)\n}\n",
        &[("xs", 2)],
        "3\n",
        "",
        0,
        1,
    ),
    // A use after the drop names both sites.
    (
        "fn main() {\n    let xs = [1, 2, 3]\n    print(xs.len)\n    print(xs)\n}\n",
        &[("xs", 2)],
        "3\n",
        "drop check: use of a list buffer allocated at t.ssp:2:14 after its drop at",
        3,
        1,
    ),
    // Dropping twice.
    (
        "fn main() {\n    let s = \"n={1}\"\n    print(s)\n}\n",
        &[("s", 2), ("s", 2)],
        "n=1\n",
        "drop check: second drop",
        3,
        1,
    ),
    // An alias makes the block shared.
    (
        "fn main() {\n    let xs = [1, 2]\n    let ys = xs\n    print(ys)\n}\n",
        &[("xs", 3)],
        "[1, 2]\n",
        "drop check: drop at",
        3,
        0,
    ),
    // A view's block is shared with its source.
    (
        "fn main() {\n    let s = \"a b {2}\"\n    let t = s.take(1)\n    print(t)\n}\n",
        &[("t", 3)],
        "a\n",
        "drop check: drop at",
        3,
        0,
    ),
    // Static literals and empty values have no block: dropping frees nothing.
    (
        "fn main() {\n    let s = \"static\"\n    let e = [1].take(0)\n    print(s)\n}\n",
        &[("s", 3), ("e", 3)],
        "static\n",
        "",
        0,
        0,
    ),
];

#[test]
fn drop_checker_cases() {
    let mut failures = Vec::new();
    for (i, &(src, drops, out, err, exit, freed)) in DROP_CASES.iter().enumerate() {
        let (o, e, outcome) = run_checked(&with_drops(src, drops));
        if o != out
            || !e.starts_with(err)
            || (err.is_empty() && !e.is_empty())
            || outcome.exit_code != exit
            || outcome.drops_freed != freed
        {
            failures.push(format!(
                "case {i}: stdout {o:?} stderr {e:?} exit {} freed {} (expected {out:?}, {err:?}.., {exit}, {freed})",
                outcome.exit_code, outcome.drops_freed
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------- oracle

/// (body of `main`, blocks allocated, blocks never shared)
const ORACLE_CASES: &[(&str, u64, u64)] = &[
    // One fresh list, only read.
    ("let xs = [1, 2, 3]\nprint(xs.len)", 1, 1),
    // An alias is a second reference.
    ("let xs = [1, 2]\nlet ys = xs\nprint(ys)", 1, 0),
    // A view bound to a name and read makes no second reference (it may
    // die before its source); a view stored, or returned, does.
    ("let s = \"a{1}\"\nlet t = s.take(1)\nprint(t)", 1, 1),
    ("let s = \"a{1}\"\nlet xs = [s.take(1)]\nprint(xs)", 2, 1),
    ("let xs = [1, 2]\nlet ys = [xs.take(2)]\nprint(ys)", 2, 1),
    (
        "let s = \"a b{1}\"\nfor w in s.words {\n    print(w)\n}",
        2,
        2,
    ),
    // Temporaries: the list literal and the interpolated string.
    ("print(\"{[1, 2]}\")", 2, 2),
    // Empty values (an empty view makes no reference) and literals have
    // no block.
    (
        "let e = [1].take(0)\nlet s = \"lit\"\nprint(\"{e.len}\")",
        2,
        2,
    ),
    // `x := x.push(..)` grows in place without sharing: capacity 4, then 10.
    (
        "var xs = []\nfor i in 0..5 {\n    xs := xs.push(i)\n}\nprint(xs.len)",
        2,
        2,
    ),
    // Growing someone else's list in place shares its buffer.
    ("let a = [1].push(2)\nlet b = a.push(3)\nprint(b.len)", 2, 1),
    // Storing a local's string in a record or list shares it; a fresh one
    // moves.
    ("let s = \"x{1}\"\nlet xs = [s, \"y{2}\"]\nprint(xs)", 3, 2),
    // Passing to a parameter borrows; returning the parameter shares.
    ("let xs = [1]\nprint(id(xs))", 1, 0),
    ("let xs = [1]\nprint(xs.len)\nprint(xs)", 1, 1),
    // A cell copied out of a local is a move until the local is read
    // again; then both references were used.
    ("let p = (1, 2)\nprint(p)", 1, 1),
    ("let p = (1, 2)\nlet q = (p, 3)\nprint(q)", 2, 2),
    ("let p = (1, 2)\nlet q = (p, 3)\nprint(p)\nprint(q)", 2, 1),
    ("let p = (1, 2)\nlet q = p\nprint(q)", 1, 1),
    // A parameter reads its argument's local: returning it and reading
    // the argument again shares.
    ("let p = Some(1)\nlet q = same(p)\nprint(q)", 1, 1),
    ("let p = Some(1)\nlet q = same(p)\nprint(p)\nprint(q)", 1, 0),
    // A capturing lambda passed to a method lives in the caller's frame
    // (the list literal and map's list are the blocks); one bound to a
    // name is a heap closure, and a lambda that captures nothing is
    // static either way.
    ("let k = 2\nprint([1].map(|x| x + k))", 2, 2),
    ("let k = 2\nlet f = |x: Int| x + k\nprint([1].map(f))", 3, 3),
    ("let f = |x: Int| x + 1\nprint([1].map(f))", 2, 2),
];

#[test]
fn oracle_cases() {
    let mut failures = Vec::new();
    for (i, &(main, alloc, never)) in ORACLE_CASES.iter().enumerate() {
        let body: String = main.lines().map(|l| format!("    {l}\n")).collect();
        let src =
            format!("fn id(xs: List[Int]) -> List[Int] {{\n    xs\n}}\n\nfn same(o: Option[Int]) -> Option[Int] {{\n    o\n}}\n\nfn main() {{\n{body}}}\n");
        let program = match check::check_source(&src) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!(
                    "case {i} does not check:\n{}",
                    check::render_diagnostics("t.ssp", &src, &d)
                ));
                continue;
            }
        };
        let (_, err, outcome) = run_checked(&program);
        let report = outcome.oracle.expect("oracle report");
        let total = report.total();
        if total.allocated != alloc || total.never_shared != never || !err.is_empty() {
            failures.push(format!(
                "case {i}: {report} (expected {alloc} allocated, {never} never shared) {err}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
