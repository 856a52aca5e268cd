//! `sspur build`: an executable built from a program behaves exactly like
//! `sspur run` of it. Each program below is built (under the same
//! environment, since `SSPUR_MEM=gc` at build time compiles no drops) and
//! run in every mode; its stdout, stderr and exit code must equal `sspur
//! run`'s byte for byte: traps with their call chains, the stack overflow
//! trap, arguments, stdin, files, `exit`, the collector under stress, and
//! the statistics printed at exit (but for pause times and the bytes of
//! stack the collector read).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Programs of tests/programs, each for what it exercises.
const PROGRAMS: &[&str] = &[
    "args_echo",           // args()
    "stdin_words",         // stdin
    "io_files",            // files in $TMP
    "exit_code",           // exit(n)
    "gc_trees",            // the collector, trees freed and collected
    "cells_reuse",         // unique cells reused in place
    "closure_chain",       // closures and static closures
    "tree_sum_type",       // nullary constructors (static tag words)
    "trap_chain_lambda",   // a trap's call chain through a lambda
    "trap_chain_fn_value", // ... through a function used as a value
    "trap_div_zero",       // a trap's message and location
    "trap_stack_overflow", // the overflow handler
    "trap_f64_nan_to_int", // a runtime helper that traps
    "deep_recursion",      // the program thread's big stack
];

/// The environments to build and run in.
const MODES: &[&[(&str, &str)]] = &[
    &[],
    &[("SSPUR_MEM", "gc")],
    &[
        ("SSPUR_MEM", "check"),
        ("SSPUR_GC_STRESS", "64"),
        ("SSPUR_GC_BARRIER_KB", "1"),
    ],
    &[("SSPUR_GC_STRESS", "64"), ("SSPUR_GC_BARRIER_KB", "1")],
    &[("SSPUR_GC_STATS", "1")],
    &[("SSPUR_BACKTRACE", "0")],
];

fn root() -> PathBuf {
    sspur_tests::root()
}

fn command(program: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root());
    for v in sspur_tests::SSPUR_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    cmd
}

fn run(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("starts");
    let mut input = child.stdin.take().expect("piped");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("finishes");
    let _ = feeder.join();
    out
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .map(|s| s.lines().map(String::from).collect())
        .unwrap_or_default()
}

/// stderr without the statistics that vary from run to run: pause times,
/// and the bytes of stack the collector scanned (the launching frames
/// below `main` differ by a few bytes between the two).
fn stable(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| {
            !l.starts_with("pauses: ")
                && !l.starts_with("pause detail: ")
                && !l.starts_with("collector reads: ")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Builds `name` in `env` into `dir` and compares its runs with `sspur run`.
fn check(name: &str, env: &[(&str, &str)], dir: &Path) -> Option<String> {
    let src = format!("tests/programs/{name}.ssp");
    let base = root().join("tests/programs").join(name);
    let args = lines(&base.with_extension("args"));
    let stdin = std::fs::read(base.with_extension("stdin")).unwrap_or_default();
    let exe = dir.join(name);
    let mut build = command(&sspur_tests::sspur(), env);
    build.args(["-W", "none", "build", &src, "-o"]).arg(&exe);
    let built = run(build, b"");
    if !built.status.success() {
        return Some(format!("{name} {env:?}: build failed\n{}", show(&built)));
    }
    let tmp = sspur_tests::RunDir::new();
    let mut jit = command(&sspur_tests::sspur(), env);
    jit.args(["-W", "none", "run", &src]).args(tmp.args(&args));
    let want = run(jit, &stdin);
    drop(tmp);
    let tmp = sspur_tests::RunDir::new();
    let mut aot = command(&exe, env);
    aot.args(tmp.args(&args));
    let got = run(aot, &stdin);
    let same = got.stdout == want.stdout
        && stable(&got.stderr) == stable(&want.stderr)
        && got.status.code() == want.status.code();
    (!same).then(|| {
        format!(
            "{name} {env:?}: the executable differs from `sspur run`\n{}\n=== sspur run: {}",
            show(&got),
            show(&want)
        )
    })
}

#[test]
fn built_executables_match_sspur_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut failures = Vec::new();
    for name in PROGRAMS {
        for env in MODES {
            failures.extend(check(name, env, dir.path()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn build_reports_a_missing_c_compiler() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cmd = command(&sspur_tests::sspur(), &[]);
    cmd.env("CC", "/nonexistent/cc")
        .args(["build", "tests/programs/args_echo.ssp", "-o"])
        .arg(dir.path().join("a"));
    let out = run(cmd, b"");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot run the C compiler `/nonexistent/cc`"),
        "{err}"
    );
}

#[test]
fn build_is_in_the_help() {
    let out = run(
        {
            let mut c = command(&sspur_tests::sspur(), &[]);
            c.arg("--help");
            c
        },
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("build"), "{text}");
    let out = run(
        {
            let mut c = command(&sspur_tests::sspur(), &[]);
            c.args(["build", "--help"]);
            c
        },
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("standalone executable") && text.contains("-o"),
        "{text}"
    );
}
