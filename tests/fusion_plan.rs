//! The ownership pass and the native backend read the same fusion plan:
//! the pass on the checked program (it plans no free for a list a fused
//! chain never builds), the backend on the program with the drops written
//! in. The two must fuse exactly the same chains, or a list the pass
//! thought unbuilt would be built and left to the collector (or the other
//! way round). Checked on every corpus program, ownership case, example
//! and benchmark.

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

#[test]
fn the_analysed_program_fuses_what_the_checked_one_does() {
    let mut seen = 0;
    let mut fusions = 0;
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
            let before = fused(&program);
            let after = fused(&ownership::analyze(&program).program);
            assert_eq!(before, after, "{}", path.display());
            seen += 1;
            fusions += before.len();
        }
    }
    assert!(seen > 100, "only {seen} programs");
    assert!(fusions > 20, "only {fusions} fused chains");
}
