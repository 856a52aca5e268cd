//! Project tasks: `cargo xtask <task>`.
//!
//! - `run FILE [ARGS]`: build `sspur` in release mode and run the program
//!   natively; the environment (SSPUR_MEM, SSPUR_GC_STATS, ...) passes
//!   through unchanged.
//! - `interp FILE [ARGS]`: the same on the reference interpreter.
//! - `bench [RUNS] [PROGRAMS...]`: whole-process wall time and peak RSS of
//!   `sspur run` against `sspur run --interp`, each with and without
//!   `SSPUR_MEM=gc`, alternating runs, medians (outputs checked first).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: cargo xtask run FILE [ARGS]...\n       cargo xtask interp FILE [ARGS]...\n       cargo xtask bench [RUNS] [examples/NAME.ssp...]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    match task.as_deref() {
        Some("run") if !rest.is_empty() => run_sspur(&[], &rest),
        Some("interp") if !rest.is_empty() => run_sspur(&["--interp"], &rest),
        Some("bench") => bench(&rest),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the release `sspur` quietly; false (after saying why) on failure.
fn build_release() -> bool {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--quiet", "--release", "-p", "cli"])
        .status();
    match built {
        Ok(s) => s.success(),
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            false
        }
    }
}

/// Builds the release binary quietly, then runs `sspur run FLAGS REST`.
fn run_sspur(flags: &[&str], rest: &[String]) -> ExitCode {
    if !build_release() {
        return ExitCode::from(1);
    }
    let exe = root().join("target/release/sspur");
    match Command::new(&exe)
        .arg("run")
        .args(flags)
        .args(rest)
        .status()
    {
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("xtask: cannot run {}: {e}", exe.display());
            ExitCode::from(1)
        }
    }
}

/// One way of running a program in the benchmark.
struct Mode {
    name: &'static str,
    flags: &'static [&'static str],
    gc: bool,
}

const MODES: [Mode; 4] = [
    Mode {
        name: "native",
        flags: &[],
        gc: false,
    },
    Mode {
        name: "native gc",
        flags: &[],
        gc: true,
    },
    Mode {
        name: "interp",
        flags: &["--interp"],
        gc: false,
    },
    Mode {
        name: "interp gc",
        flags: &["--interp"],
        gc: true,
    },
];

const DEFAULT_BENCH: [&str; 3] = [
    "examples/csv_report.ssp",
    "examples/bank_ledger.ssp",
    "examples/rbtree.ssp",
];

fn bench(rest: &[String]) -> ExitCode {
    let (runs, programs): (usize, Vec<String>) = match rest.first().map(|r| r.parse::<usize>()) {
        Some(Ok(n)) if n > 0 => (n, rest[1..].to_vec()),
        _ => (5, rest.to_vec()),
    };
    let programs = if programs.is_empty() {
        DEFAULT_BENCH
            .iter()
            .map(|p| root().join(p).display().to_string())
            .collect()
    } else {
        programs
    };
    if !build_release() {
        return ExitCode::from(1);
    }
    let exe = root().join("target/release/sspur");
    println!("{runs} alternating runs each, medians; wall time and peak RSS of the whole process");
    println!(
        "{:<28} {:>10} {:>12} {:>10} {:>12} {:>10} {:>12} {:>10} {:>12}",
        "program",
        "native s",
        "native MB",
        "gc s",
        "gc MB",
        "interp s",
        "interp MB",
        "i-gc s",
        "i-gc MB"
    );
    for program in &programs {
        let stdin = std::path::Path::new(program).with_extension("stdin");
        let stdin = std::fs::read(&stdin).unwrap_or_default();
        let expected = std::fs::read(std::path::Path::new(program).with_extension("stdout")).ok();
        let mut samples: Vec<Vec<(f64, f64)>> = vec![Vec::new(); MODES.len()];
        for _ in 0..runs {
            for (m, mode) in MODES.iter().enumerate() {
                match measure(&exe, mode, program, &stdin) {
                    Ok((out, sample)) => {
                        if expected.as_ref().is_some_and(|e| *e != out) {
                            eprintln!(
                                "xtask: {program} ({}) printed something else than its .stdout",
                                mode.name
                            );
                            return ExitCode::from(1);
                        }
                        samples[m].push(sample);
                    }
                    Err(e) => {
                        eprintln!("xtask: {program} ({}): {e}", mode.name);
                        return ExitCode::from(1);
                    }
                }
            }
        }
        let name = std::path::Path::new(program)
            .file_name()
            .map_or(program.clone(), |n| n.to_string_lossy().into_owned());
        print!("{name:<28}");
        for s in &samples {
            let secs = median(s.iter().map(|x| x.0).collect());
            let mb = median(s.iter().map(|x| x.1).collect());
            print!(" {secs:>10.3} {mb:>12.1}");
        }
        println!();
    }
    ExitCode::SUCCESS
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// Runs one program once: its stdout, and (wall seconds, peak RSS in MB)
/// read from the child's own rusage.
fn measure(
    exe: &std::path::Path,
    mode: &Mode,
    program: &str,
    stdin: &[u8],
) -> Result<(Vec<u8>, (f64, f64)), String> {
    use std::io::{Read, Write};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut cmd = Command::new(exe);
    cmd.arg("run").args(mode.flags).arg(program);
    if mode.gc {
        cmd.env("SSPUR_MEM", "gc");
    } else {
        cmd.env_remove("SSPUR_MEM");
    }
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .ok_or("no stdout")?
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    let _ = feeder.join();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; status and usage are valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let secs = start.elapsed().as_secs_f64();
    if pid < 0 {
        return Err("wait4 failed".into());
    }
    let code = std::process::ExitStatus::from_raw(status);
    if !code.success() {
        return Err(format!("exited with {code}"));
    }
    Ok((out, (secs, usage.ru_maxrss as f64 / 1024.0)))
}
