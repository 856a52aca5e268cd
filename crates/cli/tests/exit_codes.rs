//! The `sspur` binary's exit codes, run as users run it: 0 success, 1 a
//! compile error (or a file that cannot be read), 2 bad usage, 101 a trap.
//!
//! Exit code 3 (a drop-check finding of `run --interp --check-drops`) needs
//! a drop the ownership pass should not have made, which no correct
//! program gives: tests/programs.rs plants such drops in the IR and checks
//! the interpreter's code 3 there; here `--check-drops` must pass (0) on a
//! program whose drops are sound.

use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

const OK: &str = "fn main() {\n    let xs = [1, 2, 3]\n    print(xs.map(|x| x * 2))\n}\n";
const TYPE_ERROR: &str = "fn main() {\n    let x: Int = \"no\"\n    print(x)\n}\n";
const SYNTAX_ERROR: &str = "fn main() {\n    let = 1\n}\n";
const TRAP: &str = "fn main() {\n    print(1)\n    trap(\"boom\")\n}\n";
const DROPS: &str = "fn main() {\n    var s = \"\"\n    for i in 0..10 {\n        s := s + \"{i}\"\n    }\n    let words = s.split(\"5\")\n    print(words.len)\n}\n";

/// A directory of its own for one test's programs, removed when dropped.
fn scratch() -> TempDir {
    tempfile::Builder::new()
        .prefix("sspur-exit-codes-")
        .tempdir()
        .unwrap()
}

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

fn sspur(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sspur"));
    cmd.args(args);
    for var in [
        "SSPUR_MEM",
        "SSPUR_GC_STATS",
        "SSPUR_GC_STRESS",
        "SSPUR_FAIL_ALLOC_AT",
        "SSPUR_BACKTRACE",
    ] {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null()).output().expect("sspur runs")
}

fn assert_exit(args: &[&str], want: i32) -> Output {
    let out = sspur(args);
    assert_eq!(
        out.status.code(),
        Some(want),
        "sspur {args:?}\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn success_is_0() {
    let d = scratch();
    let ok = write(&d, "ok.ssp", OK.as_bytes());
    let out = assert_exit(&["run", &ok], 0);
    assert_eq!(out.stdout, b"[2, 4, 6]\n");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let out = assert_exit(&["run", "--interp", &ok], 0);
    assert_eq!(out.stdout, b"[2, 4, 6]\n");
    for args in [
        vec!["check", &ok],
        vec!["explain", &ok],
        vec!["emit", "ir", &ok],
        vec!["emit", "drops", &ok],
        vec!["emit", "summaries", &ok],
        vec!["emit", "clif", &ok],
        vec!["--help"],
        vec!["--version"],
    ] {
        assert_exit(&args, 0);
    }
}

#[test]
fn sound_drops_pass_the_drop_check() {
    let d = scratch();
    let p = write(&d, "drops.ssp", DROPS.as_bytes());
    let out = assert_exit(&["run", "--interp", "--check-drops", &p], 0);
    assert_eq!(out.stdout, b"2\n");
    let drops =
        String::from_utf8_lossy(&assert_exit(&["emit", "drops", &p], 0).stdout).into_owned();
    assert!(
        drops.contains("drop"),
        "the program has no drop to check:\n{drops}"
    );
}

#[test]
fn compile_errors_are_1() {
    let d = scratch();
    let type_error = write(&d, "type_error.ssp", TYPE_ERROR.as_bytes());
    let syntax_error = write(&d, "syntax_error.ssp", SYNTAX_ERROR.as_bytes());
    for file in [&type_error, &syntax_error] {
        for args in [
            vec!["check", file.as_str()],
            vec!["run", file.as_str()],
            vec!["run", "--interp", file.as_str()],
            vec!["explain", file.as_str()],
            vec!["emit", "ir", file.as_str()],
            vec!["emit", "drops", file.as_str()],
            vec!["emit", "clif", file.as_str()],
        ] {
            let out = assert_exit(&args, 1);
            assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
            let msg = stderr(&out);
            assert!(msg.starts_with(&format!("{file}:2:")), "{args:?}: {msg}");
            assert!(msg.contains("error"), "{args:?}: {msg}");
        }
    }
    let missing = d.path().join("missing.ssp").to_string_lossy().into_owned();
    let out = assert_exit(&["run", &missing], 1);
    assert!(
        stderr(&out).starts_with("error: cannot read"),
        "{}",
        stderr(&out)
    );
    let latin1 = write(&d, "latin1.ssp", b"fn main() { print(\"\xe9\") }\n");
    let out = assert_exit(&["check", &latin1], 1);
    assert!(stderr(&out).contains("not valid UTF-8"), "{}", stderr(&out));
}

#[test]
fn traps_are_101() {
    let d = scratch();
    let p = write(&d, "trap.ssp", TRAP.as_bytes());
    for args in [vec!["run", p.as_str()], vec!["run", "--interp", p.as_str()]] {
        let out = assert_exit(&args, 101);
        assert_eq!(out.stdout, b"1\n", "{args:?}: output before the trap");
        assert_eq!(
            stderr(&out),
            format!("trap: boom at {p}:3:5\n  in main\n"),
            "{args:?}"
        );
    }
}

/// `SSPUR_BACKTRACE=0` leaves only the trap's first line, in both
/// backends; a bad value is a usage error.
#[test]
fn backtrace_off() {
    let d = scratch();
    let p = write(&d, "trap_off.ssp", TRAP.as_bytes());
    for args in [vec!["run", p.as_str()], vec!["run", "--interp", p.as_str()]] {
        let out = Command::new(env!("CARGO_BIN_EXE_sspur"))
            .args(&args)
            .env("SSPUR_BACKTRACE", "0")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(101), "{args:?}");
        assert_eq!(stderr(&out), format!("trap: boom at {p}:3:5\n"), "{args:?}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_sspur"))
        .args(["run", p.as_str()])
        .env("SSPUR_BACKTRACE", "yes")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn usage_errors_are_2() {
    let d = scratch();
    let ok = write(&d, "usage.ssp", OK.as_bytes());
    for args in [
        vec![],
        vec!["frobnicate"],
        vec!["run"],
        vec!["check"],
        vec!["check", &ok, "extra"],
        vec!["run", "--bogus", &ok],
        vec!["emit", "nonsense", &ok],
        vec!["emit", "ir"],
        vec!["run", "--check-drops", &ok],
        vec!["run", "--oracle", &ok],
    ] {
        let out = assert_exit(&args, 2);
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        assert!(!out.stderr.is_empty(), "{args:?} said nothing");
    }
}
