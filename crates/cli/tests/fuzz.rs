//! `sspur fuzz` end to end: a smoke run of generated programs in every mode
//! (what CI runs), and a planted bug the fuzzer must find and minimize.

use std::path::PathBuf;
use std::time::Duration;

use ir::{ExprKind, PatKind, Stmt, StmtKind, Ty};

fn options(count: u64, seed: u64) -> fuzz::Options {
    fuzz::Options {
        count,
        seed,
        modes: fuzz::Mode::ALL.to_vec(),
        keep: None,
        jobs: 2,
        run: fuzz::RunConfig {
            sspur: PathBuf::from(env!("CARGO_BIN_EXE_sspur")),
            timeout: Duration::from_secs(60),
            hook: None,
        },
        minimize: true,
        minimize_budget: fuzz::minimize::Budget {
            runs: 2000,
            time: Duration::from_secs(120),
        },
        stop_after: None,
        progress: false,
    }
}

fn describe(summary: &fuzz::Summary) -> String {
    let mut out = String::new();
    for r in &summary.reports {
        out.push_str(&format!("{}\n{}\n\n", r.header(), r.minimized));
    }
    for (seed, msg) in &summary.generator_failures {
        out.push_str(&format!("seed {seed} does not type-check:\n{msg}\n"));
    }
    out
}

/// CI's smoke: 50 generated programs, every mode, no finding.
#[test]
fn smoke_fifty_programs() {
    let summary = fuzz::fuzz(&options(50, 20_260_000));
    assert_eq!(summary.programs, 50);
    assert!(
        !summary.found_anything(),
        "{}\n{}",
        summary.line(20_260_000),
        describe(&summary)
    );
}

/// The planted bug: a local bound to a fresh list or string and read by
/// two later statements is freed right after the first of them, as if the
/// analysis had taken the first use for the last. Only this test plants
/// it, through the runner's hook on the analysed program.
fn plant_early_drop(p: &ir::Program) -> ir::Program {
    let mut out = p.clone();
    for (fi, body) in p.bodies.iter().enumerate() {
        let sm = &p.source_maps[fi];
        let mut body = (**body).clone();
        let blocks: Vec<_> = body
            .exprs
            .iter()
            .filter_map(|(id, e)| match &e.kind {
                ExprKind::Block { stmts, tail } => Some((id, stmts.clone(), *tail)),
                _ => None,
            })
            .collect();
        let mut changed = false;
        for (block, stmts, tail) in blocks {
            for (i, &s) in stmts.iter().enumerate() {
                let StmtKind::Let { pat, init } = &body.stmts[s].kind else {
                    continue;
                };
                let PatKind::Bind(local) = body.pats[*pat].kind else {
                    continue;
                };
                let fresh = match &body.exprs[*init].kind {
                    ExprKind::List(xs) => !xs.is_empty(),
                    ExprKind::Interp(_) => true,
                    _ => false,
                };
                // A local of the program, not a temporary of the analysis.
                let named = body.locals[local].kind != ir::LocalKind::Temp;
                if !named || !fresh || !matches!(body.exprs[*init].ty, Ty::List(_) | Ty::Str) {
                    continue;
                }
                // Spans of the reads of the local.
                let reads: Vec<_> = body
                    .exprs
                    .iter()
                    .filter(|(_, e)| e.kind == ExprKind::Local(local))
                    .map(|(id, _)| sm.expr(id))
                    .collect();
                let uses = |span: ir::Span| {
                    reads
                        .iter()
                        .any(|r| r.start >= span.start && r.end <= span.end && span.end > 0)
                };
                // Statements that read it (the analysis' own drops aside).
                let later: Vec<usize> = (i + 1..stmts.len())
                    .filter(|&j| {
                        !matches!(body.stmts[stmts[j]].kind, StmtKind::Drop(_))
                            && uses(sm.stmt(stmts[j]))
                    })
                    .collect();
                let tail_uses = tail.is_some_and(|t| uses(sm.expr(t)));
                let Some(&first) = later.first() else {
                    continue;
                };
                if later.len() < 2 && !tail_uses {
                    continue;
                }
                let drop = body.stmts.alloc(Stmt {
                    kind: StmtKind::Drop(ir::Drop {
                        local,
                        deep: false,
                        reason: 0,
                    }),
                });
                let mut new_stmts = stmts.clone();
                new_stmts.insert(first + 1, drop);
                if let ExprKind::Block { stmts, .. } = &mut body.exprs[block].kind {
                    *stmts = new_stmts;
                }
                changed = true;
                break;
            }
        }
        if changed {
            out.bodies[fi] = std::sync::Arc::new(body);
        }
    }
    out
}

#[test]
fn planted_bug_is_found_and_minimized() {
    let mut opts = options(200, 7);
    opts.run.hook = Some(plant_early_drop);
    opts.stop_after = Some(1);
    opts.jobs = 1;
    let summary = fuzz::fuzz(&opts);
    let report = summary
        .reports
        .first()
        .unwrap_or_else(|| panic!("nothing found: {}", summary.line(7)));
    assert!(summary.programs <= 200);
    assert_eq!(report.finding.key, "drop-check", "{}", describe(&summary));
    let original = report.original.lines().count();
    let minimized = report.minimized.lines().count();
    assert!(
        minimized <= 16 && minimized < original,
        "minimized from {original} to {minimized} lines only:\n{}",
        report.minimized
    );
    // The minimized program still shows the planted bug, and only with it.
    let scratch = tempfile::Builder::new()
        .prefix("sspur-fuzz-planted-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let path = dir.join("min.ssp");
    std::fs::write(&path, &report.minimized).unwrap();
    let modes = [fuzz::Mode::Interp];
    let with = fuzz::runner::examine(&opts.run, &modes, &path, &report.minimized);
    assert!(with.iter().any(|f| f.key == "drop-check"), "{with:?}");
    let mut clean = opts.run.clone();
    clean.hook = None;
    let without = fuzz::runner::examine(&clean, &fuzz::Mode::ALL, &path, &report.minimized);
    assert!(without.is_empty(), "{without:?}");
    eprintln!(
        "planted bug found after {} programs (seed {}), minimized from {original} to {minimized} lines:\n{}\n{}",
        summary.programs, report.seed, report.header(), report.minimized
    );
}
