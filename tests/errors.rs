//! Every `tests/errors/*.ssp` is a bad program: checking it must fail, and
//! its rendered diagnostics are an insta snapshot under `snapshots/errors/`.

use std::path::Path;

#[test]
fn error_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    let names = sspur_tests::ssp_stems(&dir);
    assert!(names.len() >= 30, "only {} error programs", names.len());
    for name in names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.ssp"))).expect("readable");
        let diags = match check::check_source(&text) {
            Ok(_) => panic!("tests/errors/{name}.ssp checked without errors"),
            Err(d) => d,
        };
        let rendered =
            check::render_diagnostics(&format!("tests/errors/{name}.ssp"), &text, &diags);
        assert!(
            rendered.starts_with(&format!("tests/errors/{name}.ssp:")),
            "{name}: rendering must start with the position:\n{rendered}"
        );
        insta::with_settings!({
            snapshot_path => "../snapshots/errors",
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(name, rendered);
        });
    }
}
