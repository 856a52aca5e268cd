//! Differential tests of the native backend: every program of
//! tests/programs, tests/ownership and examples/ runs natively in four modes
//! (default, SSPUR_MEM=gc, SSPUR_MEM=check, also under collector stress so
//! its audits run, and default under SSPUR_GC_STRESS) and must match its expected stdout, stderr
//! and exit code byte for byte, and the interpreter's; the native count of
//! blocks freed at last use must equal the interpreter's drop count, and
//! cells reused in place its reuse count.
//!
//! Each run is `sspur run FILE ARGS...` in a child process: the binary
//! users run (built once per test run), so the programs take the shipped
//! path — the salsa driver's program, `SSPUR_MEM` read by the CLI, and the
//! allocation-site names `SSPUR_GC_STATS=sites` prints. (A native run also
//! exits the process on a trap.)

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Collect every this many KB in the stress modes: small enough that most
/// programs collect many times, large enough for a debug-built runtime.
const STRESS_KB: &str = "64";

struct Case {
    path: String,
    args: Vec<String>,
    stdin: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_opt(p: &Path) -> Option<Vec<u8>> {
    std::fs::read(p).ok()
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for dir in ["tests/programs", "tests/ownership", "examples"] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ssp"))
            .collect();
        files.sort();
        for f in files {
            let with = |ext: &str| f.with_extension(ext);
            let Some(stdout) = read_opt(&with("stdout")) else {
                continue;
            };
            let args = read_opt(&with("args"))
                .map(|a| {
                    String::from_utf8_lossy(&a)
                        .lines()
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let exit = read_opt(&with("exit"))
                .and_then(|e| String::from_utf8_lossy(&e).trim().parse().ok())
                .unwrap_or(0);
            out.push(Case {
                path: format!("{dir}/{}", f.file_name().unwrap().to_string_lossy()),
                args,
                stdin: read_opt(&with("stdin"))
                    .map(|s| String::from_utf8_lossy(&s).into_owned())
                    .unwrap_or_default(),
                stdout,
                stderr: read_opt(&with("stderr")).unwrap_or_default(),
                exit,
            });
        }
    }
    out.extend(bench_cases());
    assert!(
        out.len() > 50,
        "the corpus went missing: {} programs",
        out.len()
    );
    out
}

/// The benchmarks of bench/ on small inputs: `bench/small/NAME.stdout` is
/// the Rust reference's output for the arguments in `NAME.args` and the
/// generated input `NAME.input` names (bench/gen.rs), so each benchmark
/// runs in every mode here and agrees with its reference, cheaply.
fn bench_cases() -> Vec<Case> {
    let small = root().join("bench/small");
    let mut names: Vec<String> = std::fs::read_dir(&small)
        .expect("bench/small exists")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "stdout" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 9, "bench/small went missing");
    names
        .into_iter()
        .map(|name| {
            let with = |ext: &str| small.join(format!("{name}.{ext}"));
            let stdin = match read_opt(&with("input")) {
                Some(spec) => {
                    let spec = String::from_utf8_lossy(&spec);
                    let bytes = sspur_tests::bench_gen::generate(spec.trim())
                        .unwrap_or_else(|e| panic!("bench/small/{name}.input: {e}"));
                    String::from_utf8(bytes).expect("generated input is UTF-8")
                }
                None => String::new(),
            };
            Case {
                path: format!("bench/{name}.ssp"),
                args: read_opt(&with("args"))
                    .map(|a| {
                        String::from_utf8_lossy(&a)
                            .split_whitespace()
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
                stdin,
                stdout: read_opt(&with("stdout")).expect("listed"),
                stderr: Vec::new(),
                exit: 0,
            }
        })
        .collect()
}

/// The `sspur` binary (a debug build, built once per test process).
fn runner() -> PathBuf {
    sspur_tests::sspur()
}

struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}

fn run_native(path: &str, args: &[String], stdin: &str, env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    let dir = sspur_tests::RunDir::new();
    let mut cmd = Command::new(runner());
    cmd.arg("run")
        .arg(path)
        .args(dir.args(args))
        .current_dir(root());
    for var in sspur_tests::SSPUR_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("sspur starts");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.as_bytes().to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("sspur finishes");
    let _ = feeder.join();
    Run {
        stdout: out.stdout,
        stderr: out.stderr,
        exit: out.status.code().unwrap_or(-1),
    }
}

struct Interp {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
    drops: u64,
    reused: u64,
}

fn run_interp(case: &Case) -> Interp {
    let text = std::fs::read_to_string(root().join(&case.path)).unwrap();
    let program = check::check_source(&text).unwrap_or_else(|_| panic!("{} checks", case.path));
    let program = ownership::analyze(&program).program;
    let dir = sspur_tests::RunDir::new();
    let opts = interp::Options {
        path: case.path.clone(),
        args: dir.args(&case.args),
        stdin: Some(case.stdin.clone()),
        check_drops: true,
        oracle: false,
        max_depth: sspur_tests::INTERP_DEPTH,
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let o = interp::run(&program, &opts, &mut stdout, &mut stderr);
    Interp {
        stdout,
        stderr,
        exit: o.exit_code,
        drops: o.drops_freed,
        reused: o.reused,
    }
}

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 600 {
        format!("{}...", &s[..s.floor_char_boundary(600)])
    } else {
        s.into_owned()
    }
}

/// Runs every case in one mode (two at a time) and returns the failures.
fn each_case(check: impl Fn(&Case) -> Option<String> + Sync) -> Vec<String> {
    let cases = cases();
    runner();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                if let Some(f) = check(case) {
                    failures.lock().unwrap().push(f);
                }
            });
        }
    });
    let mut f = failures.into_inner().unwrap();
    f.sort();
    f
}

fn compare(case: &Case, what: &str, got: &Run) -> Option<String> {
    if got.stdout == case.stdout && got.stderr == case.stderr && got.exit == case.exit {
        return None;
    }
    Some(format!(
        "{} [{what}]: exit {} (want {})\n--- stdout\n{}\n--- want\n{}\n--- stderr\n{}\n--- want\n{}",
        case.path,
        got.exit,
        case.exit,
        show(&got.stdout),
        show(&case.stdout),
        show(&got.stderr),
        show(&case.stderr)
    ))
}

fn assert_none(mode: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} programs differ natively ({mode}):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn native_default_matches_expected_and_interpreter() {
    let failures = each_case(|case| {
        let got = run_native(&case.path, &case.args, &case.stdin, &[]);
        if let Some(f) = compare(case, "default", &got) {
            return Some(f);
        }
        let i = run_interp(case);
        if (i.stdout != got.stdout) || (i.stderr != got.stderr) || (i.exit != got.exit) {
            return Some(format!(
                "{}: the interpreter differs from native: exit {} vs {}\n{}\n{}",
                case.path,
                i.exit,
                got.exit,
                show(&i.stdout),
                show(&i.stderr)
            ));
        }
        None
    });
    assert_none("default", failures);
}

#[test]
fn native_gc_mode() {
    let failures = each_case(|case| {
        compare(
            case,
            "SSPUR_MEM=gc",
            &run_native(&case.path, &case.args, &case.stdin, &[("SSPUR_MEM", "gc")]),
        )
    });
    assert_none("SSPUR_MEM=gc", failures);
}

/// Check mode: frees fill and quarantine; a double free aborts.
#[test]
fn native_check_mode() {
    let env = [("SSPUR_MEM", "check")];
    let failures = each_case(|case| {
        compare(
            case,
            "SSPUR_MEM=check",
            &run_native(&case.path, &case.args, &case.stdin, &env),
        )
    });
    assert_none("SSPUR_MEM=check", failures);
}

/// Check mode audits at every collection, so it also runs under stress:
/// any unsound free or write after free prints a report and fails the
/// match. A stack barrier every KB: the collections skip the most stack
/// they can, and check mode verifies the skipped words did not change;
/// traps print their call chains through the barriers' frames.
#[test]
fn native_check_mode_audits_under_stress() {
    let env = [
        ("SSPUR_MEM", "check"),
        ("SSPUR_GC_STRESS", STRESS_KB),
        ("SSPUR_GC_BARRIER_KB", "1"),
    ];
    let failures = each_case(|case| {
        compare(
            case,
            "SSPUR_MEM=check + stress",
            &run_native(&case.path, &case.args, &case.stdin, &env),
        )
    });
    assert_none("SSPUR_MEM=check + stress", failures);
}

#[test]
fn native_gc_stress() {
    let env = [("SSPUR_GC_STRESS", STRESS_KB), ("SSPUR_GC_BARRIER_KB", "1")];
    let failures = each_case(|case| {
        compare(
            case,
            "SSPUR_GC_STRESS",
            &run_native(&case.path, &case.args, &case.stdin, &env),
        )
    });
    assert_none("SSPUR_GC_STRESS", failures);
}

/// The value of a `name: N blocks` line of the runtime's exit report.
fn stat(stderr: &[u8], name: &str) -> Option<u64> {
    sspur_tests::stat(&String::from_utf8_lossy(stderr), name)
}

/// The allocation sites the ownership pass names for a program
/// (`LINE:COL what`), computed here without the driver.
fn described_sites(case: &Case) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(&case.path)).unwrap();
    let program = check::check_source(&text).unwrap_or_else(|_| panic!("{} checks", case.path));
    ownership::alloc_sites(&ownership::analyze(&program))
        .into_iter()
        .map(|s| s.description)
        .collect()
}

/// Under `SSPUR_GC_STATS=sites` the exit report also names the sites left
/// for the collector, as `path:LINE:COL what`. Where the ownership pass
/// names a site at that position, the wording must be the pass's (which
/// only the shipped path gives: the CLI hands codegen the analysis's site
/// names); the runtime's own sites (the entries of a map, an `Option` a
/// `get` makes) keep the backend's wording.
fn check_site_names(case: &Case, stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let (_, sites) = text.split_once("sites left for the collector:\n")?;
    let described = described_sites(case);
    let prefix = format!("{}:", case.path);
    for line in sites.lines().filter(|l| l.starts_with("  ")) {
        let name = line.trim_start().rsplit_once(": ").map_or(line, |(n, _)| n);
        let Some((pos, what)) = name.strip_prefix(&prefix).and_then(|r| r.split_once(' ')) else {
            return Some(format!(
                "{}: the site `{name}` is not `path:LINE:COL what`",
                case.path
            ));
        };
        let here: Vec<&str> = described
            .iter()
            .filter_map(|d| d.strip_prefix(pos)?.strip_prefix(' '))
            .collect();
        if !here.is_empty() && !here.contains(&what) {
            return Some(format!(
                "{}: the site at {pos} is named `{what}`, the ownership pass says {here:?}",
                case.path
            ));
        }
    }
    None
}

#[test]
fn native_freed_counts_equal_interpreter_drops() {
    let failures = each_case(|case| {
        let got = run_native(
            &case.path,
            &case.args,
            &case.stdin,
            &[("SSPUR_GC_STATS", "sites")],
        );
        if let Some(f) = check_site_names(case, &got.stderr) {
            return Some(f);
        }
        let Some(native) = stat(&got.stderr, "freed at last use") else {
            return Some(format!(
                "{}: no statistics in\n{}",
                case.path,
                show(&got.stderr)
            ));
        };
        let reused = stat(&got.stderr, "reused in place").unwrap_or(0);
        let interp = run_interp(case);
        (native != interp.drops || reused != interp.reused).then(|| {
            format!(
                "{}: native freed {native} blocks at last use and reused {reused}, the interpreter {} and {}",
                case.path, interp.drops, interp.reused
            )
        })
    });
    assert_none("freed at last use", failures);
}

/// A program, the environment to run it in, and its expected trap.
type TrapCase = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// Traps whose programs are written here: (source, env, expected stderr).
/// `{}` in the expected text stands for the program's path.
#[test]
fn traps() {
    let cases: &[TrapCase] = &[
        ("fn main() {\n    let xs = [1, 2]\n    print(xs[5])\n}\n", &[], "index out of bounds: the len is 2 but the index is 5 at {}:3:11"),
        ("fn main() {\n    let xs = [1, 2]\n    print(xs[0 - 1])\n}\n", &[], "index out of bounds: the len is 2 but the index is -1 at {}:3:11"),
        ("fn main() {\n    print(\"ab\".byte(2))\n}\n", &[], "index out of bounds: the len is 2 but the index is 2 at {}:2:11"),
        ("fn main() {\n    let z = [0].len - 1\n    print(7 / z)\n}\n", &[], "division by zero at {}:3:11"),
        ("fn main() {\n    let z = [0].len - 1\n    print(7 % z)\n}\n", &[], "division by zero at {}:3:11"),
        ("fn main() {\n    print(\"12x\".to_int)\n}\n", &[], "invalid Int: \"12x\" at {}:2:11"),
        ("fn main() {\n    print(\"1.5.\".to_f64)\n}\n", &[], "invalid F64: \"1.5.\" at {}:2:11"),
        (
            "fn main() {\n    let m: Map[Str, Int] = empty_map()\n    print(m[\"k\"])\n}\n",
            &[],
            "key not found: \"k\" at {}:3:11",
        ),
        ("fn main() {\n    let xs: List[Int] = []\n    print(xs.first)\n}\n", &[], "first of an empty list at {}:3:11"),
        ("fn main() {\n    print([1].take(0 - 3))\n}\n", &[], "negative count: -3 at {}:2:11"),
        ("fn main() {\n    trap(\"boom\")\n}\n", &[], "boom at {}:2:5"),
        (
            "fn main() {\n    let xs = [1, 2, 3]\n    print(xs.len)\n}\n",
            &[("SSPUR_FAIL_ALLOC_AT", "1")],
            "out of memory at {}:2:14",
        ),
        (
            "fn down(n: Int) -> Int {\n    if n == 0 { 0 } else { 1 + down(n - 1) }\n}\n\nfn main() {\n    print(down(1000000000))\n}\n",
            &[],
            "stack overflow at {}:1:4",
        ),
        (
            "fn main() {\n    print(deep(0))\n}\n\nfn deep(n: Int) -> Int {\n    let s = \"{n}\"\n    s.len + deep(n + 1)\n}\n",
            &[],
            "stack overflow at {}:5:4",
        ),
    ];
    let scratch = tempfile::Builder::new()
        .prefix("sspur-native-traps-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let mut failures = Vec::new();
    for (i, (src, env, want)) in cases.iter().enumerate() {
        let path = dir.join(format!("t{i}.ssp"));
        std::fs::write(&path, src).unwrap();
        let p = path.to_string_lossy().into_owned();
        // The messages are checked here; call chains by the corpus.
        let env: Vec<(&str, &str)> = env
            .iter()
            .copied()
            .chain([("SSPUR_BACKTRACE", "0")])
            .collect();
        let got = run_native(&p, &[], "", &env);
        let want = format!("trap: {}\n", want.replace("{}", &p));
        if got.exit != 101 || got.stderr != want.as_bytes() {
            failures.push(format!(
                "{src}\nexit {}; stderr {:?}, want {want:?}",
                got.exit,
                show(&got.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Ten million cells in one chain, freed deep at the owner's last use:
/// the runtime's deep free is iterative (no native recursion), so this
/// frees in every mode without overflowing the stack, and the interpreter
/// with drops checked frees the same number of blocks. Not under
/// collector stress (a collection every 64 KB over 320 MB of live cells is
/// quadratic); tests/programs/cells_chain.ssp is the stressed version.
#[test]
fn ten_million_cell_chain_frees_deep() {
    let path = "tests/big/cells_chain_10m.ssp";
    let expected = std::fs::read(root().join("tests/big/cells_chain_10m.stdout")).unwrap();
    let case = Case {
        path: path.into(),
        args: Vec::new(),
        stdin: String::new(),
        stdout: expected,
        stderr: Vec::new(),
        exit: 0,
    };
    let mut failures = Vec::new();
    for (what, env) in [
        ("default", &[("SSPUR_GC_STATS", "1")][..]),
        ("SSPUR_MEM=gc", &[("SSPUR_MEM", "gc")][..]),
        ("SSPUR_MEM=check", &[("SSPUR_MEM", "check")][..]),
    ] {
        let got = run_native(path, &[], "", env);
        if what == "default" {
            let freed = stat(&got.stderr, "freed at last use");
            if freed != Some(10_000_000) {
                failures.push(format!("{path}: freed at last use {freed:?}, not 10000000"));
            }
            let got = Run {
                stderr: Vec::new(),
                ..got
            };
            failures.extend(compare(&case, what, &got));
        } else {
            failures.extend(compare(&case, what, &got));
        }
    }
    let i = run_interp(&case);
    if i.stdout != case.stdout || i.exit != 0 || i.drops != 10_000_000 {
        failures.push(format!(
            "{path}: the interpreter with drops checked printed {} (exit {}) and freed {}",
            show(&i.stdout),
            i.exit,
            i.drops
        ));
    }
    assert_none("ten million cells", failures);
}

/// Lambdas that capture nothing allocate nothing natively: of the 40,000
/// lambda values tests/programs/static_lambdas.ssp makes in its loop, none
/// reaches the collector; the one capturing lambda is its only block left.
#[test]
fn non_capturing_lambdas_allocate_nothing() {
    let path = "tests/programs/static_lambdas.ssp";
    let got = run_native(path, &[], "", &[("SSPUR_GC_STATS", "1")]);
    let left = stat(&got.stderr, "left for the collector");
    assert_eq!(
        left,
        Some(1),
        "{path}: left for the collector {left:?}, not the one capturing closure\n{}",
        String::from_utf8_lossy(&got.stderr)
    );
}

/// `SSPUR_GC_STATS=log` prints one line per collection as it ends, as
/// many as the exit report counts, and the report says what they read.
#[test]
fn gc_stats_log_prints_a_line_per_collection() {
    let got = run_native(
        "bench/cfold.ssp",
        // Deep enough that what cfold leaves for the collector (its
        // folded nodes) fills the 1 MB young generation several times;
        // with 4 MB of old growth allowed, no major collection starts (an
        // incremental one's slices log lines of their own).
        &["16".to_string()],
        "",
        &[
            ("SSPUR_GC_STATS", "log"),
            ("SSPUR_GC_YOUNG_MB", "1"),
            ("SSPUR_GC_MIN_MB", "4"),
        ],
    );
    let stderr = String::from_utf8_lossy(&got.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("sspur gc: "))
        .collect();
    let collections = stat(&got.stderr, "collections").expect("an exit report");
    assert!(collections >= 2, "{stderr}");
    assert_eq!(lines.len() as u64, collections, "{stderr}");
    for (n, line) in lines.iter().enumerate() {
        let kind = if line.starts_with("sspur gc: minor ") {
            "minor"
        } else {
            "major"
        };
        let head = format!("sspur gc: {kind} {}: young ", n + 1);
        assert!(line.starts_with(&head), "{line}");
        assert!(
            line.contains(", read stack ") && line.ends_with(" ms"),
            "{line}"
        );
    }
    let reads = stderr
        .lines()
        .find_map(|l| l.strip_prefix("collector reads: stack "))
        .expect("a collector reads line");
    let stack: u64 = reads.split(' ').next().unwrap().parse().unwrap();
    assert!(stack > 0, "{reads}");
}
