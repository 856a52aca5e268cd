//! Every program of the shared corpus (tests/programs, tests/ownership,
//! examples, bench) checks without diagnostics and without warnings (the
//! corpus names what it leaves unused with `_`, and the native tests compare
//! stderr byte for byte), and a few small programs print as expected IR.

use std::path::Path;

fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in [
        "tests/programs",
        "tests/ownership",
        "examples",
        "bench",
        "crates/check/tests/good",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ssp") {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    out.push((
                        format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()),
                        text,
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn corpus_checks() {
    let mut failures = String::new();
    let mut n = 0;
    for (path, text) in corpus() {
        n += 1;
        match check::check_source_with_warnings(&text) {
            (Err(diags), _) => failures.push_str(&check::render_diagnostics(&path, &text, &diags)),
            (Ok(_), warnings) => failures.push_str(&check::render_warnings(
                &path,
                &text,
                &warnings,
                check::Severity::Warning,
            )),
        }
    }
    assert!(failures.is_empty(), "{n} programs, failures:\n{failures}");
}

#[test]
fn print_example() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/csv_report.ssp"
    ))
    .unwrap();
    let p = check::check_source(&text).unwrap();
    println!("{}", ir::pretty::program(&p));
}
