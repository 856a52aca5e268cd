//! Warnings. Every `tests/warnings/*.ssp` checks without errors: `sspur
//! check` prints its warnings to stderr (nothing on stdout, exit code 0) and
//! that text is an insta snapshot under `snapshots/warnings/`; the
//! checker's own `check_source_with_warnings` renders the same text. Then
//! the `-W` flag: `error` stops every compiling command before anything
//! runs, `none` prints nothing, and a program with errors shows only them.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `sspur ARGS` from the repository root (so paths print as written).
fn sspur(args: &[&str]) -> Output {
    Command::new(sspur_tests::sspur())
        .args(args)
        .current_dir(root())
        .env_remove("SSPUR_MEM")
        .stdin(Stdio::null())
        .output()
        .expect("sspur starts")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn warning_programs() {
    let dir = root().join("tests/warnings");
    let names = sspur_tests::ssp_stems(&dir);
    assert!(names.len() >= 8, "only {} warning programs", names.len());
    for name in names {
        let path = format!("tests/warnings/{name}.ssp");
        let out = sspur(&["check", &path]);
        let err = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{path}: warnings keep exit 0\n{err}"
        );
        assert!(
            out.stdout.is_empty(),
            "{path}: check prints nothing on stdout"
        );
        let source = std::fs::read_to_string(root().join(&path)).expect("readable");
        let (program, warnings) = check::check_source_with_warnings(&source);
        assert!(program.is_ok(), "{path} has errors");
        let rendered = check::render_warnings(&path, &source, &warnings, check::Severity::Warning);
        assert_eq!(err, rendered, "{path}: the driver and the checker disagree");
        if name == "quiet" {
            assert!(err.is_empty(), "{path} warned:\n{err}");
        } else {
            assert!(
                err.starts_with(&format!("{path}:")) && err.contains(": warning: "),
                "{path}: expected warnings:\n{err}"
            );
        }
        insta::with_settings!({
            snapshot_path => "../snapshots/warnings",
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(name, err);
        });
    }
}

const UNUSED: &str = "tests/warnings/unused_let.ssp";
const UNUSED_OUT: &str = "side effect\n1\n";

#[test]
fn warnings_do_not_stop_a_run() {
    let expected = text(&sspur(&["check", UNUSED]).stderr);
    assert!(expected.contains("warning: unused `let` binding `total`"));
    for args in [vec!["run", UNUSED], vec!["run", "--interp", UNUSED]] {
        let out = sspur(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stdout), UNUSED_OUT, "{args:?}");
        assert_eq!(text(&out.stderr), expected, "{args:?}");
    }
    // Every other command that compiles shows them too.
    for args in [vec!["explain", UNUSED], vec!["emit", "ir", UNUSED]] {
        let out = sspur(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stderr), expected, "{args:?}");
    }
}

#[test]
fn w_error_makes_warnings_errors_and_runs_nothing() {
    for args in [
        vec!["-W", "error", "run", UNUSED],
        vec!["run", "-W", "error", UNUSED],
        vec!["-W", "error", "run", "--interp", UNUSED],
        vec!["--warnings", "error", "check", UNUSED],
        vec!["-W", "error", "explain", UNUSED],
        vec!["-W", "error", "emit", "drops", UNUSED],
        vec!["-W", "error", "emit", "clif", UNUSED],
    ] {
        let out = sspur(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed {:?}",
            text(&out.stdout)
        );
        assert!(
            err.starts_with(&format!(
                "{UNUSED}:4:9: error: unused `let` binding `total`"
            )),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("= a warning, made an error by `-W error`"),
            "{err}"
        );
        assert!(!err.contains("warning:"), "{args:?}: {err}");
    }
    // Without warnings `-W error` changes nothing.
    let out = sspur(&["-W", "error", "run", "tests/warnings/quiet.ssp"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "2 and 6\n");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn w_none_silences_warnings() {
    for args in [
        vec!["-W", "none", "run", UNUSED],
        vec!["run", "--warnings", "none", UNUSED],
        vec!["-W", "none", "run", "--interp", UNUSED],
    ] {
        let out = sspur(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stdout), UNUSED_OUT, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
    }
    let out = sspur(&["-W", "none", "check", UNUSED]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
}

#[test]
fn errors_hide_warnings() {
    let scratch = tempfile::Builder::new()
        .prefix("sspur-warnings-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let file = dir.join("bad.ssp");
    std::fs::write(
        &file,
        "fn main() {\n    let unused = 1\n    print(1 + \"one\")\n}\n",
    )
    .unwrap();
    let path = file.to_string_lossy().into_owned();
    for w in ["warn", "error", "none"] {
        let out = sspur(&["-W", w, "check", &path]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{w}: {err}");
        assert!(err.contains(": error: "), "{w}: {err}");
        assert!(
            !err.contains("unused"),
            "-W {w}: a warning beside an error:\n{err}"
        );
    }
}

#[test]
fn w_is_bad_usage_for_fuzz_and_checks_its_value() {
    let out = sspur(&["-W", "none", "fuzz", "--gen", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = sspur(&["-W", "loud", "check", UNUSED]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// Which warning a test program shows, for the coverage check below
/// (exhaustive: a new kind must be added here, and so get a program).
fn key(k: &check::WarningKind) -> String {
    use check::WarningKind;
    match k {
        WarningKind::Unused { binding, .. } => format!("unused {binding:?}"),
        WarningKind::VarNeverAssigned { .. } => "var never assigned".into(),
        WarningKind::UnreachableArm { covered_by } => {
            format!(
                "unreachable arm, one covering arm: {}",
                covered_by.is_some()
            )
        }
        WarningKind::IrrefutableLet { form } => format!("irrefutable {form:?}"),
    }
}

/// Every kind of warning has a program in tests/warnings, and
/// docs/language.md's "Warnings" section has each message (with the name
/// it quotes written `x`).
#[test]
fn every_warning_is_tested_and_documented() {
    use check::{Binding, LetForm, WarningKind};
    let doc = std::fs::read_to_string(root().join("docs/language.md")).expect("readable");
    let section = doc
        .split("\n## Warnings\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/language.md has a Warnings section");
    let mut seen = Vec::new();
    for name in sspur_tests::ssp_stems(&root().join("tests/warnings")) {
        let path = root().join(format!("tests/warnings/{name}.ssp"));
        let source = std::fs::read_to_string(&path).expect("readable");
        for w in check::check_source_with_warnings(&source).1 {
            let mut message = w.to_diagnostic().message;
            if let WarningKind::Unused { name, .. } | WarningKind::VarNeverAssigned { name } =
                &w.kind
            {
                message = message
                    .replace(&format!("`{name}`"), "`x`")
                    .replace(&format!("`var {name}`"), "`var x`");
            }
            assert!(
                section.contains(&message),
                "`{message}` is not in docs/language.md's Warnings"
            );
            seen.push(key(&w.kind));
        }
    }
    let bindings = [
        Binding::Let,
        Binding::Var,
        Binding::Param,
        Binding::LambdaParam,
        Binding::For,
        Binding::Pattern,
    ];
    let kinds = bindings
        .into_iter()
        .map(|binding| WarningKind::Unused {
            name: String::new(),
            binding,
        })
        .chain([LetForm::IfLet, LetForm::LetElse].map(|form| WarningKind::IrrefutableLet { form }))
        .chain([
            WarningKind::VarNeverAssigned {
                name: String::new(),
            },
            WarningKind::UnreachableArm { covered_by: None },
            WarningKind::UnreachableArm {
                covered_by: Some(syntax::Span::new(0, 0)),
            },
        ]);
    for k in kinds {
        assert!(
            seen.contains(&key(&k)),
            "no program in tests/warnings shows {}",
            key(&k)
        );
    }
}
