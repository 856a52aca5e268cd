//! The ownership cases (`tests/ownership/*.ssp`): one program per rule and
//! per way to escape. For each case:
//! - `emit summaries` + `emit drops` and `explain` are insta snapshots
//!   under `snapshots/ownership/`, with the number of blocks the drops
//!   freed at run time appended to the explain snapshot;
//! - the analysed program runs in the interpreter with drops checked and
//!   must print exactly `NAME.stdout` (and `NAME.stderr`, exit `NAME.exit`).
//!
//! `SSPUR_BLESS=1` writes the expectation files from a run of the program
//! *without* the ownership pass (the plain semantics), for new cases.

use std::fs;
use std::path::Path;

struct Case {
    name: String,
    path: String,
    text: String,
}

fn cases() -> Vec<Case> {
    let dir = Path::new("tests/ownership");
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("tests/ownership exists (cwd must be the repository root)")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".ssp").map(str::to_string))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = format!("tests/ownership/{name}.ssp");
            let text = fs::read_to_string(&path).unwrap_or_default();
            Case { name, path, text }
        })
        .collect()
}

struct Run {
    stdout: String,
    stderr: String,
    exit: i32,
    freed: u64,
}

fn run(case: &Case, program: &ir::Program, check_drops: bool) -> Run {
    let opts = interp::Options {
        path: case.path.clone(),
        args: Vec::new(),
        stdin: Some(String::new()),
        check_drops,
        oracle: false,
        max_depth: sspur_tests::INTERP_DEPTH,
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let o = interp::run(program, &opts, &mut out, &mut err);
    Run {
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        exit: o.exit_code,
        freed: o.drops_freed,
    }
}

fn expected(case: &Case, ext: &str) -> Option<String> {
    fs::read_to_string(format!("tests/ownership/{}.{ext}", case.name)).ok()
}

#[test]
fn ownership_cases() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} ownership cases", cases.len());
    let bless = std::env::var_os("SSPUR_BLESS").is_some();
    let mut failures = Vec::new();
    for case in &cases {
        let program = match check::check_source(&case.text) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!(
                    "{} does not check:\n{}",
                    case.path,
                    check::render_diagnostics(&case.path, &case.text, &d)
                ));
                continue;
            }
        };
        if bless {
            let plain = run(case, &program, false);
            let base = format!("tests/ownership/{}", case.name);
            fs::write(format!("{base}.stdout"), &plain.stdout).unwrap();
            if !plain.stderr.is_empty() {
                fs::write(format!("{base}.stderr"), &plain.stderr).unwrap();
            }
            if plain.exit != 0 {
                fs::write(format!("{base}.exit"), format!("{}\n", plain.exit)).unwrap();
            }
        }
        let a = ownership::analyze(&program);
        let checked = run(case, &a.program, true);
        let want_out = expected(case, "stdout").unwrap_or_default();
        let want_err = expected(case, "stderr").unwrap_or_default();
        let want_exit: i32 = expected(case, "exit")
            .map(|s| s.trim().parse().unwrap_or(-1))
            .unwrap_or(0);
        if checked.stdout != want_out || checked.stderr != want_err || checked.exit != want_exit {
            failures.push(format!(
                "{} with checked drops: exit {} (want {want_exit})\nstdout:\n{}\nwant:\n{want_out}\nstderr:\n{}\nwant:\n{want_err}",
                case.path, checked.exit, checked.stdout, checked.stderr
            ));
        }
        let drops = format!(
            "{}\n{}",
            ownership::emit_summaries(&a),
            ownership::emit_drops(&a)
        );
        let explain = format!(
            "{}\nfreed at run time: {}\n",
            ownership::explain(&a, &case.path),
            checked.freed
        );
        insta::with_settings!({
            snapshot_path => "../snapshots/ownership",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{}.drops", case.name), drops);
            insta::assert_snapshot!(format!("{}.explain", case.name), explain);
        });
    }
    if !failures.is_empty() {
        panic!(
            "{} cases failed:\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

/// Prints, for the corpus and the examples, allocation sites, sites freed
/// statically, and blocks freed by drops against the oracle's count of
/// blocks never shared. Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn corpus_stats() {
    for dir in ["tests/programs", "examples", "tests/ownership"] {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ssp"))
            .collect();
        names.sort();
        let (mut sites, mut freeable, mut freed_sites) = (0, 0, 0);
        let (mut freed, mut never, mut alloc) = (0, 0, 0);
        for p in names {
            let text = fs::read_to_string(&p).unwrap();
            let Ok(program) = check::check_source(&text) else {
                continue;
            };
            let a = ownership::analyze(&program);
            let c = ownership::site_counts(&a);
            sites += c.sites;
            freeable += c.freeable;
            freed_sites += c.freed;
            let read = |ext: &str| fs::read_to_string(p.with_extension(ext)).ok();
            let run_dir = sspur_tests::RunDir::new();
            let args: Vec<String> = read("args")
                .map(|s| s.lines().map(str::to_string).collect())
                .unwrap_or_default();
            let opts = interp::Options {
                path: p.display().to_string(),
                args: run_dir.args(&args),
                stdin: Some(read("stdin").unwrap_or_default()),
                check_drops: true,
                oracle: true,
                max_depth: sspur_tests::INTERP_DEPTH,
            };
            let o = interp::run(&a.program, &opts, &mut Vec::new(), &mut Vec::new());
            if let Some(r) = o.oracle {
                let r = r.total();
                if std::env::var_os("SSPUR_GAPS").is_some() && r.never_shared > r.ended() {
                    println!(
                        "gap {} {} {}",
                        r.never_shared - r.ended(),
                        r.never_shared,
                        p.display()
                    );
                }
                freed += r.ended();
                never += r.never_shared;
                alloc += r.allocated;
            }
        }
        println!(
            "{dir}: {sites} allocation sites ({freeable} lists/strings), {freed_sites} freed statically; \
             blocks: {alloc} allocated, {never} never shared (oracle), {freed} freed by drops ({:.1}%)",
            100.0 * freed as f64 / never.max(1) as f64
        );
    }
}

/// Every drop in the analysed corpus names a `let`/`var` (or temporary,
/// or a parameter of an owning version) bound earlier in the same or an
/// enclosing block, and at most once per
/// block: a static check of the rewrite that also covers paths the runs
/// above never take.
#[test]
fn drops_name_bound_locals() {
    fn block(b: &ir::Body, e: ir::ExprId, scope: &mut Vec<ir::LocalId>, errs: &mut Vec<String>) {
        use ir::{ExprKind, StmtKind};
        let mark = scope.len();
        match &b[e].kind {
            ExprKind::Block { stmts, tail } => {
                let mut dropped = Vec::new();
                for &s in stmts {
                    match &b[s].kind {
                        StmtKind::Let { pat, init } => {
                            block(b, *init, scope, errs);
                            if let ir::PatKind::Bind(l) = b[*pat].kind {
                                scope.push(l);
                            }
                        }
                        StmtKind::Var { local, init } => {
                            block(b, *init, scope, errs);
                            scope.push(*local);
                        }
                        StmtKind::Assign { value, .. } | StmtKind::Expr(value) => {
                            block(b, *value, scope, errs)
                        }
                        StmtKind::For { iter, body, .. } => {
                            block(b, *iter, scope, errs);
                            block(b, *body, scope, errs);
                        }
                        StmtKind::While { cond, body } => {
                            block(b, *cond, scope, errs);
                            block(b, *body, scope, errs);
                        }
                        StmtKind::Drop(d) => {
                            if !scope.contains(&d.local) {
                                errs.push(format!("drop of {} out of scope", b[d.local].name));
                            }
                            if dropped.contains(&d.local) {
                                errs.push(format!("{} dropped twice", b[d.local].name));
                            }
                            dropped.push(d.local);
                        }
                        StmtKind::Clear { local, .. } => {
                            if !scope.contains(local) || dropped.contains(local) {
                                errs.push(format!("clear of {} out of scope", b[*local].name));
                            }
                        }
                    }
                }
                if let Some(t) = tail {
                    block(b, *t, scope, errs);
                }
            }
            // An arm's pattern binds its locals for the arm's body (a
            // destructive match drops unused ones at the arm's start).
            ExprKind::Match { scrutinee, arms } => {
                block(b, *scrutinee, scope, errs);
                for arm in arms {
                    let inner = scope.len();
                    let mut pats = vec![arm.pat];
                    while let Some(p) = pats.pop() {
                        match &b[p].kind {
                            ir::PatKind::Bind(l) => scope.push(*l),
                            ir::PatKind::At { local, pat } => {
                                scope.push(*local);
                                pats.push(*pat);
                            }
                            ir::PatKind::Tuple(ps) | ir::PatKind::Ctor { args: ps, .. } => {
                                pats.extend(ps.iter().copied())
                            }
                            _ => {}
                        }
                    }
                    block(b, arm.body, scope, errs);
                    scope.truncate(inner);
                }
            }
            k => {
                let kids = ir::visit::children(k);
                for k in kids {
                    block(b, k, scope, errs);
                }
            }
        }
        scope.truncate(mark);
    }
    let mut errs = Vec::new();
    let mut seen = 0;
    for dir in ["tests/programs", "examples", "tests/ownership"] {
        for entry in fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
            let p = entry.path();
            if p.extension().is_none_or(|x| x != "ssp") {
                continue;
            }
            let Ok(program) = check::check_source(&fs::read_to_string(&p).unwrap()) else {
                continue;
            };
            let a = ownership::analyze(&program);
            seen += ownership::emit_drops(&a).matches("    drop ").count();
            for (f, sig) in a.program.items.fns.iter() {
                let b = a.program.body(f);
                let mut local = Vec::new();
                // An owning version owns (and may drop) its parameters.
                if let Some(root) = b.root {
                    block(b, root, &mut b.params.clone(), &mut local);
                }
                errs.extend(
                    local
                        .into_iter()
                        .map(|e| format!("{} {}: {e}", p.display(), sig.name)),
                );
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    assert!(seen > 100, "only {seen} drops in the corpus");
}
