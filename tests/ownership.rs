//! The ownership cases (`tests/ownership/*.ssp`): one program per rule and
//! per way to escape. For each case:
//! - `emit summaries` + `emit drops` and `explain` are insta snapshots
//!   under `snapshots/ownership/`, with the number of blocks the drops
//!   freed at run time appended to the explain snapshot;
//! - the analysed program runs in the interpreter with drops checked and
//!   must print exactly `NAME.stdout` (and `NAME.stderr`, exit `NAME.exit`).
//!
//! `SSPUR_BLESS=1` writes the expectation files from a run of the program
//! *without* the ownership pass (the plain semantics), for new cases.

use std::fs;
use std::path::Path;

struct Case {
    name: String,
    path: String,
    text: String,
}

fn cases() -> Vec<Case> {
    let dir = Path::new("tests/ownership");
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("tests/ownership exists (cwd must be the repository root)")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".ssp").map(str::to_string))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = format!("tests/ownership/{name}.ssp");
            let text = fs::read_to_string(&path).unwrap_or_default();
            Case { name, path, text }
        })
        .collect()
}

struct Run {
    stdout: String,
    stderr: String,
    exit: i32,
    freed: u64,
}

fn run(case: &Case, program: &ir::Program, check_drops: bool) -> Run {
    let opts = interp::Options {
        path: case.path.clone(),
        args: Vec::new(),
        stdin: Some(String::new()),
        check_drops,
        oracle: false,
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let o = interp::run(program, &opts, &mut out, &mut err);
    Run {
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        exit: o.exit_code,
        freed: o.drops_freed,
    }
}

fn expected(case: &Case, ext: &str) -> Option<String> {
    fs::read_to_string(format!("tests/ownership/{}.{ext}", case.name)).ok()
}

#[test]
fn ownership_cases() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} ownership cases", cases.len());
    let bless = std::env::var_os("SSPUR_BLESS").is_some();
    let mut failures = Vec::new();
    for case in &cases {
        let program = match check::check_source(&case.text) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!(
                    "{} does not check:\n{}",
                    case.path,
                    check::render_diagnostics(&case.path, &case.text, &d)
                ));
                continue;
            }
        };
        if bless {
            let plain = run(case, &program, false);
            let base = format!("tests/ownership/{}", case.name);
            fs::write(format!("{base}.stdout"), &plain.stdout).unwrap();
            if !plain.stderr.is_empty() {
                fs::write(format!("{base}.stderr"), &plain.stderr).unwrap();
            }
            if plain.exit != 0 {
                fs::write(format!("{base}.exit"), format!("{}\n", plain.exit)).unwrap();
            }
        }
        let a = ownership::analyze(&program);
        let checked = run(case, &a.program, true);
        let want_out = expected(case, "stdout").unwrap_or_default();
        let want_err = expected(case, "stderr").unwrap_or_default();
        let want_exit: i32 = expected(case, "exit")
            .map(|s| s.trim().parse().unwrap_or(-1))
            .unwrap_or(0);
        if checked.stdout != want_out || checked.stderr != want_err || checked.exit != want_exit {
            failures.push(format!(
                "{} with checked drops: exit {} (want {want_exit})\nstdout:\n{}\nwant:\n{want_out}\nstderr:\n{}\nwant:\n{want_err}",
                case.path, checked.exit, checked.stdout, checked.stderr
            ));
        }
        let drops = format!(
            "{}\n{}",
            ownership::emit_summaries(&a),
            ownership::emit_drops(&a)
        );
        let explain = format!(
            "{}\nfreed at run time: {}\n",
            ownership::explain(&a, &case.path),
            checked.freed
        );
        insta::with_settings!({
            snapshot_path => "../snapshots/ownership",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{}.drops", case.name), drops);
            insta::assert_snapshot!(format!("{}.explain", case.name), explain);
        });
    }
    if !failures.is_empty() {
        panic!(
            "{} cases failed:\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

/// Prints, for the corpus and the examples, allocation sites, sites freed
/// statically, and blocks freed by drops against the oracle's count of
/// blocks never shared. Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn corpus_stats() {
    for dir in ["tests/programs", "examples", "tests/ownership"] {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ssp"))
            .collect();
        names.sort();
        let (mut sites, mut freed_sites, mut freed, mut never, mut alloc) = (0, 0, 0, 0, 0);
        for p in names {
            let text = fs::read_to_string(&p).unwrap();
            let Ok(program) = check::check_source(&text) else {
                continue;
            };
            let a = ownership::analyze(&program);
            let (s, f) = ownership::site_counts(&a);
            sites += s;
            freed_sites += f;
            let read = |ext: &str| fs::read_to_string(p.with_extension(ext)).ok();
            let opts = interp::Options {
                path: p.display().to_string(),
                args: read("args")
                    .map(|s| s.lines().map(str::to_string).collect())
                    .unwrap_or_default(),
                stdin: Some(read("stdin").unwrap_or_default()),
                check_drops: true,
                oracle: true,
            };
            let o = interp::run(&a.program, &opts, &mut Vec::new(), &mut Vec::new());
            if let Some(r) = o.oracle {
                if std::env::var_os("SSPUR_GAPS").is_some() && r.never_shared > r.freed_by_drops {
                    println!(
                        "gap {} {} {}",
                        r.never_shared - r.freed_by_drops,
                        r.never_shared,
                        p.display()
                    );
                }
                freed += r.freed_by_drops;
                never += r.never_shared;
                alloc += r.allocated;
            }
        }
        println!(
            "{dir}: {sites} allocation sites, {freed_sites} freed statically; \
             blocks: {alloc} allocated, {never} never shared (oracle), {freed} freed by drops ({:.1}%)",
            100.0 * freed as f64 / never.max(1) as f64
        );
    }
}
