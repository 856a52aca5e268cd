//! Data-driven parser tests: every `tests/data/*.ssp` is parsed and its AST
//! dump plus diagnostics compared with the `.expect` file beside it. A file
//! whose first line is `// lex` also records its token stream. Files named
//! `err_*` must produce diagnostics; all others must parse cleanly.
//! `UPDATE_EXPECT=1 cargo test -p syntax --test data_driven` rewrites them.

use std::fmt::Write;
use std::path::Path;

fn render(text: &str) -> String {
    let mut out = String::new();
    if text.starts_with("// lex") {
        for (token, span) in syntax::lex(text) {
            let _ = writeln!(out, "{token:?} @{}..{}", span.start, span.end);
        }
        out.push_str("---\n");
    }
    let (file, diags) = syntax::parse(text);
    out.push_str(&syntax::dump::dump(&file));
    for d in &diags {
        let _ = writeln!(
            out,
            "error @{}..{}: {}",
            d.span.start, d.span.end, d.message
        );
        for (span, text) in &d.labels {
            let _ = writeln!(out, "  label @{}..{}: {text}", span.start, span.end);
        }
        for note in &d.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    out
}

#[test]
fn data_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data exists")
        .map(|e| e.expect("readable dir").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ssp"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("readable test file");
        let (_, diags) = syntax::parse(&text);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("err_") == diags.is_empty() {
            failures.push(format!(
                "{name}: files named err_* must have diagnostics, others none; got {diags:?}"
            ));
        }
        let actual = render(&text);
        let expect_path = path.with_extension("expect");
        if update {
            std::fs::write(&expect_path, &actual).expect("writable expect file");
            continue;
        }
        let expected = std::fs::read_to_string(&expect_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{}:\n--- expected\n{expected}--- actual\n{actual}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files differ (UPDATE_EXPECT=1 to accept):\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
