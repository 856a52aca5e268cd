//! The ownership pass and the native backend read the same fusion plan:
//! the pass on the checked program (it plans no free for a list a fused
//! chain never builds), the backend on the program with the drops written
//! in. The two must fuse exactly the same chains, or a list the pass
//! thought unbuilt would be built and left to the collector (or the other
//! way round). Checked on every corpus program, ownership case, example
//! and benchmark. The same holds for the upserts (`ir::upsert`) the
//! backend runs with one probe and `explain` reports.

use ir::effects::Effects;
use ir::fusion::{Consumer, Plan};
use std::fs;

fn fused(program: &ir::Program) -> Vec<(u32, String)> {
    let fx = Effects::of(program);
    let mut out = Vec::new();
    for (f, _) in program.items.fns.iter() {
        let plan = Plan::of(program, &fx, f);
        let sm = program.source_map(f);
        for c in plan.chains.iter().filter(|c| c.fused()) {
            let at = match c.consumer {
                Consumer::Method(e) => sm.expr(e).start,
                Consumer::For(_, b) => sm.expr(b).start,
            };
            out.push((at, c.names(program.body(f)).join(" -> ")));
        }
    }
    out.sort();
    out
}

/// Every corpus program, ownership case, example and benchmark that
/// checks: its path and its checked and analysed programs.
fn corpus() -> Vec<(std::path::PathBuf, ir::Program, std::sync::Arc<ir::Program>)> {
    let mut out = Vec::new();
    for dir in ["tests/programs", "tests/ownership", "examples", "bench"] {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.extension().and_then(|e| e.to_str()) != Some("ssp") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap_or_default();
            let Ok(program) = check::check_source(&text) else {
                continue;
            };
            let analysed = ownership::analyze(&program).program;
            out.push((path, program, analysed));
        }
    }
    out
}

#[test]
fn the_analysed_program_fuses_what_the_checked_one_does() {
    let mut seen = 0;
    let mut fusions = 0;
    for (path, program, analysed) in corpus() {
        let before = fused(&program);
        let after = fused(&analysed);
        assert_eq!(before, after, "{}", path.display());
        seen += 1;
        fusions += before.len();
    }
    assert!(seen > 100, "only {seen} programs");
    assert!(fusions > 20, "only {fusions} fused chains");
}

/// Each upsert's verdict (`ir::upsert`), by the put's position: `explain`
/// reads the checked program's, the native backend the analysed one's.
fn upserts(program: &ir::Program) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    for (f, _) in program.items.fns.iter() {
        let sm = program.source_map(f);
        for u in ir::upsert::Plan::body(program.body(f)).upserts {
            out.push((sm.expr(u.put).start, u.fused()));
        }
    }
    // An owning version repeats its function's upserts.
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_analysed_program_fuses_the_upserts_the_checked_one_does() {
    let mut fused = 0;
    for (path, program, analysed) in corpus() {
        let before = upserts(&program);
        let after = upserts(&analysed);
        assert_eq!(before, after, "{}", path.display());
        fused += before.iter().filter(|(_, f)| *f).count();
    }
    assert!(fused > 10, "only {fused} fused upserts");
}
