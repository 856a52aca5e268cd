//! Check mode turns a use of a freed block into a report, even when the
//! use faults before any collection could find it: the memory-fault
//! handler names the freed block the faulting code still points into.
//!
//! The test plants an unsound drop (of a list that a second list still
//! holds) into an analysed program and runs it natively in a child
//! process, since a check-mode report ends the process.

use std::process::Command;
use std::sync::Arc;

use ir::{ExprKind, LocalId, Stmt, StmtKind};

const CHILD: &str = "SSPUR_TEST_CHECK_FAULT_CHILD";
const SRC: &str =
    "fn main() {\n    let xs = [\"a{1}\", \"b{2}\"]\n    let keep = [xs]\n    print(keep)\n}\n";

/// The analysed program with `drop xs` planted after `let keep = [xs]`.
fn planted() -> ir::Program {
    let checked = check::check_source(SRC).unwrap_or_else(|d| panic!("{d:?}"));
    let mut program = std::sync::Arc::unwrap_or_clone(ownership::analyze(&checked).program);
    let (f, _) = program
        .items
        .fns
        .iter()
        .find(|(_, s)| s.name == "main")
        .expect("main");
    let i = f.into_raw().into_u32() as usize;
    let mut body = (*program.bodies[i]).clone();
    let xs: LocalId = body
        .locals
        .iter()
        .find(|(_, l)| l.name == "xs")
        .map(|(id, _)| id)
        .expect("xs");
    let root = body.root();
    let drop = body.stmts.alloc(Stmt {
        kind: StmtKind::Drop(ir::Drop {
            local: xs,
            deep: false,
            reason: 0,
        }),
    });
    let ExprKind::Block { stmts, .. } = &mut body.exprs[root].kind else {
        panic!("main's body is a block");
    };
    assert!(stmts.len() >= 3, "let xs, let keep, print, ...");
    stmts.insert(2, drop);
    program.bodies[i] = Arc::new(body);
    program
}

#[test]
fn check_mode_reports_a_use_of_a_freed_block_that_faults() {
    if std::env::var_os(CHILD).is_some() {
        let opts = codegen::Options {
            path: "planted.ssp".into(),
            args: Vec::new(),
            time: false,
            site_names: Default::default(),
        };
        std::process::exit(codegen::run(std::sync::Arc::new(planted()), &opts));
    }
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "check_mode_reports_a_use_of_a_freed_block_that_faults",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("SSPUR_MEM", "check")
        .output()
        .expect("run the child");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sspur check: use of a freed block in planted.ssp:1:4"),
        "the fault is reported:\n{stderr}"
    );
    assert!(
        stderr.contains("is still in use: allocated at planted.ssp:2:14 list literal, freed at planted.ssp:2:9 drop of xs"),
        "the freed block is named:\n{stderr}"
    );
    assert!(!out.status.success());
}
