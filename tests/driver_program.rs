//! The shipped path computes what the tests check: for every corpus file
//! (tests/programs, tests/ownership, examples), the salsa driver's program
//! — the one the `sspur` binary runs — equals the checker's
//! (`check::check_source`), and the driver's runnable programs equal the
//! checker's program after the ownership pass (default) and before it
//! (`SSPUR_MEM=gc`). For every error file (tests/errors), the driver
//! reports the checker's diagnostics.

use std::path::PathBuf;

use driver::{Database, SourceFile};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.ssp` files of `dirs`, sorted, as (path relative to the root, text).
fn files(dirs: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".ssp"))
            .collect();
        names.sort();
        for n in names {
            let path = format!("{dir}/{n}");
            // Some error files are not UTF-8 on purpose; the CLI refuses
            // those before either front end sees them.
            if let Ok(text) = std::fs::read_to_string(root().join(&path)) {
                out.push((path, text));
            }
        }
    }
    out
}

#[test]
fn driver_program_equals_checker_program() {
    let files = files(&["tests/programs", "tests/ownership", "examples"]);
    assert!(files.len() > 50, "the corpus went missing: {}", files.len());
    let mut failures = Vec::new();
    for (path, text) in &files {
        let checked = match check::check_source(text) {
            Ok(p) => p,
            Err(_) => {
                failures.push(format!("{path}: the checker rejects it"));
                continue;
            }
        };
        let db = Database::default();
        let file = SourceFile::new(&db, path.clone(), text.clone());
        let Some(program) = driver::program(&db, file).clone() else {
            failures.push(format!("{path}: the driver rejects it"));
            continue;
        };
        if *program != checked {
            failures.push(format!(
                "{path}: the driver's program differs from the checker's\n--- driver\n{}\n--- checker\n{}",
                ir::pretty::program(&program),
                ir::pretty::program(&checked)
            ));
            continue;
        }
        let gc = driver::runnable_program(&db, file, true).expect("runnable (gc)");
        if *gc != checked {
            failures.push(format!(
                "{path}: the SSPUR_MEM=gc program is not the checked one"
            ));
        }
        let owned = ownership::analyze(&checked).program;
        let runnable = driver::runnable_program(&db, file, false).expect("runnable");
        if runnable != owned {
            failures.push(format!(
                "{path}: the driver's program with drops differs from the ownership pass's"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files differ:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn driver_diagnostics_equal_checker_diagnostics() {
    let files = files(&["tests/errors"]);
    assert!(files.len() > 20, "the error corpus went missing");
    let mut failures = Vec::new();
    for (path, text) in &files {
        let want = match check::check_source(text) {
            Ok(_) => Vec::new(),
            Err(d) => d,
        };
        let db = Database::default();
        let file = SourceFile::new(&db, path.clone(), text.clone());
        let got = driver::diagnostics(&db, file);
        let (got, want) = (
            check::render_diagnostics(path, text, got),
            check::render_diagnostics(path, text, &want),
        );
        if got != want {
            failures.push(format!("{path}:\n--- driver\n{got}\n--- checker\n{want}"));
        }
        if driver::program(&db, file).is_some() != got.is_empty() {
            failures.push(format!(
                "{path}: the driver's program and diagnostics disagree"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} error files differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
