//! Project tasks: `cargo xtask <task>`.
//!
//! - `run FILE [ARGS]`: build `sspur` in release mode and run the program
//!   natively; the environment (SSPUR_MEM, SSPUR_GC_STATS, ...) passes
//!   through unchanged.
//! - `interp FILE [ARGS]`: the same on the reference interpreter.
//! - `bench [RUNS] [PROGRAMS...]`: whole-process wall time and peak RSS of
//!   `sspur run` against `sspur run --interp`, each with and without
//!   `SSPUR_MEM=gc`, alternating runs, medians (outputs checked first).
//! - `bench --suite [RUNS] [NAMES...]`: the programs in `bench/` against
//!   their Rust references (`rustc -O`) and, where present and g++ is
//!   installed, C++ references (`g++ -O2`), built into `target/bench/`:
//!   beside them the executables `sspur build` makes, default and
//!   `SSPUR_MEM=gc` (the primary columns), and `sspur run` (compiling in
//!   process, so the compiler's time and memory count), wall time and peak
//!   RSS, medians over alternating runs, ratios against Rust; then where the
//!   memory went, from one `SSPUR_GC_STATS=1` run of each built mode. A program's
//!   stdin is `bench/NAME.stdin` if present, or the input the spec in
//!   `bench/NAME.input` names (`text BYTES`, `csv ROWS`), generated once
//!   into `target/bench/` by the seeded generators of `bench/gen.rs`.
//! - `bench --compile [RUNS] [SHAPE...] [--lines N,N,...]`: compile time of
//!   generated programs (`compile_gen.rs`: small, large, deep, types) at
//!   1k, 10k and 100k lines: each phase's time as `sspur run --time`
//!   reports it, the whole process's wall time and peak RSS, medians over
//!   alternating runs, and the growth factor per 10x more lines.
//! - `gen SPEC`: writes the input SPEC names to stdout.

mod compile_gen;
#[path = "../../bench/gen.rs"]
mod gen;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

const USAGE: &str = "usage: cargo xtask run FILE [ARGS]...\n       cargo xtask interp FILE [ARGS]...\n       cargo xtask bench [RUNS] [examples/NAME.ssp...]\n       cargo xtask bench --suite [RUNS] [NAME...]\n       cargo xtask bench --compile [RUNS] [SHAPE...] [--lines N,N,...]\n       cargo xtask gen text BYTES|csv ROWS";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    match task.as_deref() {
        Some("run") if !rest.is_empty() => run_sspur(&[], &rest),
        Some("interp") if !rest.is_empty() => run_sspur(&["--interp"], &rest),
        Some("bench") if rest.first().is_some_and(|a| a == "--suite") => suite(&rest[1..]),
        Some("bench") if rest.first().is_some_and(|a| a == "--compile") => {
            compile_bench(&rest[1..])
        }
        Some("bench") => bench(&rest),
        Some("__measure") => measure_child(&rest),
        Some("gen") if !rest.is_empty() => match gen::generate(&rest.join(" ")) {
            Ok(bytes) => {
                use std::io::Write;
                match std::io::stdout().write_all(&bytes) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("xtask: {e}");
                        ExitCode::from(1)
                    }
                }
            }
            Err(e) => {
                eprintln!("xtask: {e}");
                ExitCode::from(2)
            }
        },
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

/// Cargo's target directory: `CARGO_TARGET_DIR` when set, else `target/`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// Builds the release `sspur`, false (after saying why) on failure.
/// Cargo's progress shows (a first build takes minutes), but not the lone
/// `Finished` line of a build with nothing to do, so what a run prints on
/// stderr stays the program's own.
fn build_release() -> bool {
    use std::io::{BufRead, BufReader, IsTerminal, Write};
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root())
        .args(["build", "--release", "-p", "cli"])
        .stderr(std::process::Stdio::piped());
    if std::io::stderr().is_terminal() {
        cmd.arg("--color=always");
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            return false;
        }
    };
    if let Some(progress) = child.stderr.take() {
        let mut said_something = false;
        for line in BufReader::new(progress).lines().map_while(Result::ok) {
            let finished =
                line.trim_start().starts_with("Finished") || line.contains("Finished\u{1b}");
            if finished && !said_something {
                continue;
            }
            said_something = true;
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
    child.wait().is_ok_and(|s| s.success())
}

/// Builds the release binary, then runs `sspur run FLAGS REST`.
fn run_sspur(flags: &[&str], rest: &[String]) -> ExitCode {
    if !build_release() {
        return ExitCode::from(1);
    }
    let exe = target_dir().join("release/sspur");
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
    let exe = target_dir().join("release/sspur");
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
        let stdin = Path::new(program).with_extension("stdin");
        let stdin = stdin.exists().then_some(stdin);
        let expected = std::fs::read(Path::new(program).with_extension("stdout")).ok();
        let mut samples: Vec<Vec<(f64, f64)>> = vec![Vec::new(); MODES.len()];
        for _ in 0..runs {
            for (m, mode) in MODES.iter().enumerate() {
                match measure(&exe, mode, program, stdin.as_deref()) {
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
        let name = Path::new(program)
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

/// Runs one program once: its stdout, and (wall seconds, peak RSS in MB).
fn measure(
    exe: &Path,
    mode: &Mode,
    program: &str,
    stdin: Option<&Path>,
) -> Result<(Vec<u8>, (f64, f64)), String> {
    let mut cmd = Command::new(exe);
    cmd.arg("run").args(mode.flags).arg(program);
    if mode.gc {
        cmd.env("SSPUR_MEM", "gc");
    } else {
        cmd.env_remove("SSPUR_MEM");
    }
    measure_command(&cmd, stdin)
}

/// Runs a prepared command once with stdin from the file `stdin` (none
/// when `None`): its stdout, and (wall seconds, peak RSS in MB).
fn measure_command(cmd: &Command, stdin: Option<&Path>) -> Result<(Vec<u8>, (f64, f64)), String> {
    let (m, _) = measured(cmd, stdin, Stdio::null())?;
    if !m.status.success() {
        return Err(format!("exited with {}", m.status));
    }
    Ok((m.stdout, (m.secs, m.rss_mb)))
}

/// One measured run: what `xtask __measure` reported and the child printed.
struct Measured {
    status: std::process::ExitStatus,
    secs: f64,
    rss_mb: f64,
    stdout: Vec<u8>,
}

/// Runs `cmd` once through `xtask __measure` (see `measure_child`), with
/// stdin from the file `stdin` (none when `None`) and the child's stderr
/// going where `stderr` says: the run, and that stderr when piped.
fn measured(
    cmd: &Command,
    stdin: Option<&Path>,
    stderr: Stdio,
) -> Result<(Measured, String), String> {
    let out_file = target_dir().join(format!("bench/measure-{}.out", std::process::id()));
    if let Some(dir) = out_file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut runner = Command::new(me);
    runner
        .arg("__measure")
        .arg(stdin.map_or(std::ffi::OsStr::new("-"), |p| p.as_os_str()))
        .arg(&out_file)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => runner.env(key, v),
            None => runner.env_remove(key),
        };
    }
    let out = runner
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .and_then(|c| c.wait_with_output())
        .map_err(|e| e.to_string())?;
    let stdout = std::fs::read(&out_file);
    let _ = std::fs::remove_file(&out_file);
    let report = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = report.split_whitespace().collect();
    let parsed = match fields[..] {
        [status, kb, secs] => status
            .parse::<i32>()
            .ok()
            .zip(kb.parse::<f64>().ok())
            .zip(secs.parse::<f64>().ok()),
        _ => None,
    };
    let Some(((status, kb), secs)) = parsed else {
        return Err(format!(
            "the measuring process failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    };
    use std::os::unix::process::ExitStatusExt;
    let measured = Measured {
        status: std::process::ExitStatus::from_raw(status),
        secs,
        rss_mb: kb / 1024.0,
        stdout: stdout.map_err(|e| format!("{}: {e}", out_file.display()))?,
    };
    Ok((measured, String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// `xtask __measure STDIN STDOUT PROGRAM [ARGS]...`, the measuring end of
/// `measured`: runs PROGRAM with stdin from the file STDIN (`-`: none),
/// stdout into the file STDOUT and stderr inherited, and prints its raw
/// wait status, peak RSS in KB and wall seconds.
///
/// It runs in a process of its own because a child's peak RSS, as wait4
/// reports it, is at least its parent's peak at the spawn: Linux records
/// the high-water mark of the address space a process execs away from,
/// which for a spawned child is (a copy of) its parent's. This process is
/// small and fresh, so xtask's memory (a 20 MB input, a 100k-line
/// program) stays out of the figure.
fn measure_child(args: &[String]) -> ExitCode {
    let [stdin, stdout, program, rest @ ..] = args else {
        eprintln!("usage: xtask __measure STDIN STDOUT PROGRAM [ARGS]...");
        return ExitCode::from(2);
    };
    let input = if stdin == "-" {
        Ok(Stdio::null())
    } else {
        std::fs::File::open(stdin).map(Stdio::from)
    };
    let output = std::fs::File::create(stdout);
    let (input, output) = match (input, output) {
        (Ok(i), Ok(o)) => (i, o),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("xtask __measure: {e}");
            return ExitCode::from(1);
        }
    };
    let start = std::time::Instant::now();
    let child = match Command::new(program)
        .args(rest)
        .stdin(input)
        .stdout(output)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("xtask __measure: cannot run {program}: {e}");
            return ExitCode::from(1);
        }
    };
    match reap(child.id() as i32) {
        Ok((status, kb)) => {
            use std::os::unix::process::ExitStatusExt;
            let secs = start.elapsed().as_secs_f64();
            println!("{} {kb} {secs}", status.into_raw());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask __measure: {e}");
            ExitCode::from(1)
        }
    }
}

/// Waits for our child `pid`: its exit status and peak RSS in KB, from
/// its own rusage (wait4).
fn reap(pid: i32) -> Result<(std::process::ExitStatus, f64), String> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: `rusage` is plain integers, for which all zeros is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; status and usage are valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r < 0 {
        return Err("wait4 failed".into());
    }
    Ok((
        std::process::ExitStatus::from_raw(status),
        usage.ru_maxrss as f64,
    ))
}

/// One contender in the suite: how to run it for a program.
struct Runner {
    name: &'static str,
    exe: PathBuf,
    /// Runs `sspur run PROGRAM` instead of the executable alone.
    sspur: bool,
    gc: bool,
    /// Whether the suite reports its `SSPUR_GC_STATS=1` numbers.
    stats: bool,
}

impl Runner {
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(&self.exe);
        if self.sspur {
            cmd.arg("run").arg(program);
        }
        cmd.env_remove("SSPUR_GC_STATS");
        if self.gc {
            cmd.env("SSPUR_MEM", "gc");
        } else {
            cmd.env_remove("SSPUR_MEM");
        }
        cmd
    }
}

/// `sspur build PROGRAM -o OUT` (with `SSPUR_MEM=gc`, no drops compiled).
fn build_program(sspur: &Path, program: &Path, out: &Path, gc: bool) -> Result<(), String> {
    let mut cmd = Command::new(sspur);
    cmd.args(["-W", "none", "build"])
        .arg(program)
        .arg("-o")
        .arg(out);
    if gc {
        cmd.env("SSPUR_MEM", "gc");
    } else {
        cmd.env_remove("SSPUR_MEM");
    }
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("sspur build failed ({s})")),
        Err(e) => Err(format!("cannot run {}: {e}", sspur.display())),
    }
}

/// Compiles a reference into `out` unless `out` is newer than `src`; false
/// (after saying why) when the compiler fails.
fn compile_reference(compiler: &str, flags: &[&str], src: &Path, out: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(s), Some(o)) = (modified(src), modified(out)) {
        if o > s {
            return true;
        }
    }
    match Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(src)
        .status()
    {
        Ok(s) if s.success() => true,
        Ok(s) => {
            eprintln!("xtask: {compiler} {} failed ({s})", src.display());
            false
        }
        Err(e) => {
            eprintln!("xtask: cannot run {compiler}: {e}");
            false
        }
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The programs of the suite: `bench/NAME.ssp` for each NAME given, or all
/// of them in name order.
fn suite_programs(names: &[String]) -> Result<Vec<String>, String> {
    let dir = root().join("bench");
    if !names.is_empty() {
        for n in names {
            if !dir.join(format!("{n}.ssp")).exists() {
                return Err(format!("no bench/{n}.ssp"));
            }
        }
        return Ok(names.to_vec());
    }
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "ssp" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The file a suite program's stdin comes from: `bench/NAME.stdin`, or
/// the input `bench/NAME.input` specifies, generated into `out_dir` the
/// first time (the generators are deterministic, so the file is reused),
/// or none.
fn suite_stdin(bench: &Path, out_dir: &Path, name: &str) -> Result<Option<PathBuf>, String> {
    let given = bench.join(format!("{name}.stdin"));
    if given.exists() {
        return Ok(Some(given));
    }
    let Ok(spec) = std::fs::read_to_string(bench.join(format!("{name}.input"))) else {
        return Ok(None);
    };
    let spec = spec.trim();
    let file = out_dir.join(format!("input-{}.txt", spec.replace(' ', "-")));
    if !file.exists() {
        let bytes = gen::generate(spec).map_err(|e| format!("bench/{name}.input: {e}"))?;
        std::fs::write(&file, &bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(Some(file))
}

/// Where one program's memory went, from an `SSPUR_GC_STATS=1` run:
/// (freed at last use, left for the collector, collected) in MB, the
/// collections (minor and major), their pauses, the bytes promoted and the
/// peak heap in MB.
#[derive(Default, Clone, Copy)]
struct GcStats {
    freed_mb: f64,
    left_mb: f64,
    collected_mb: f64,
    collections: u64,
    minor: u64,
    major: u64,
    total_pause_ms: f64,
    longest_pause_ms: f64,
    promoted_mb: f64,
    peak_mb: f64,
}

/// Parses the exit report; lines it does not know are skipped.
fn parse_gc_stats(report: &str) -> GcStats {
    let mb_of = |rest: &str| {
        // "N blocks, B bytes" or "B bytes"
        let bytes = rest
            .split(',')
            .find_map(|part| part.trim().strip_suffix(" bytes"))
            .and_then(|b| b.trim().parse::<f64>().ok())
            .unwrap_or(0.0);
        bytes / (1024.0 * 1024.0)
    };
    let mut s = GcStats::default();
    for line in report.lines() {
        if let Some(rest) = line.strip_prefix("freed at last use:") {
            s.freed_mb = mb_of(rest);
        } else if let Some(rest) = line.strip_prefix("left for the collector:") {
            s.left_mb = mb_of(rest);
        } else if let Some(rest) = line.strip_prefix("collected:") {
            s.collected_mb = mb_of(rest);
        } else if let Some(rest) = line.strip_prefix("collections:") {
            s.collections = rest.trim().parse().unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("minor collections:") {
            // "N, major collections: M"
            let mut parts = rest.split(", major collections:");
            s.minor = parts
                .next()
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            s.major = parts
                .next()
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("pauses: total ") {
            // "X ms, longest Y ms"
            let ms = |t: &str| {
                t.trim()
                    .trim_end_matches(" ms")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            };
            let mut parts = rest.split(", longest ");
            s.total_pause_ms = parts.next().map_or(0.0, ms);
            s.longest_pause_ms = parts.next().map_or(0.0, ms);
        } else if let Some(rest) = line.strip_prefix("promoted:") {
            s.promoted_mb = mb_of(rest);
        } else if let Some(rest) = line.strip_prefix("peak heap:") {
            s.peak_mb = mb_of(rest);
        }
    }
    s
}

fn gc_stats(runner: &Runner, program: &Path, stdin: Option<&Path>) -> Result<GcStats, String> {
    let mut cmd = runner.command(program);
    cmd.env("SSPUR_GC_STATS", "1");
    let (m, stderr) = measured(&cmd, stdin, Stdio::piped())?;
    if !m.status.success() {
        return Err(format!("exited with {}", m.status));
    }
    Ok(parse_gc_stats(&stderr))
}

fn suite(rest: &[String]) -> ExitCode {
    let (runs, names): (usize, &[String]) = match rest.first().map(|r| r.parse::<usize>()) {
        Some(Ok(n)) if n > 0 => (n, &rest[1..]),
        _ => (5, rest),
    };
    let programs = match suite_programs(names) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::from(2);
        }
    };
    if !build_release() {
        return ExitCode::from(1);
    }
    let bench = root().join("bench");
    let out_dir = target_dir().join("bench");
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        eprintln!("xtask: cannot create {}: {e}", out_dir.display());
        return ExitCode::from(1);
    }
    let gpp = have("g++");
    let sspur = target_dir().join("release/sspur");
    let mut rows = Vec::new();
    let mut stats_rows = Vec::new();
    for name in &programs {
        let program = bench.join(format!("{name}.ssp"));
        let expected = match std::fs::read(bench.join(format!("{name}.stdout"))) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("xtask: bench/{name}.stdout: {e}");
                return ExitCode::from(1);
            }
        };
        let stdin = match suite_stdin(&bench, &out_dir, name) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("xtask: {e}");
                return ExitCode::from(1);
            }
        };
        // The executables `sspur build` makes (the primary columns, like
        // for like with the references), and `sspur run` (compiling in
        // process: its compiler's time and memory included).
        let mut built = Vec::new();
        for gc in [false, true] {
            let exe = out_dir.join(format!("{name}-sspur{}", if gc { "-gc" } else { "" }));
            if let Err(e) = build_program(&sspur, &program, &exe, gc) {
                eprintln!("xtask: {name}: {e}");
                return ExitCode::from(1);
            }
            built.push(exe);
        }
        let mut runners = vec![
            Runner {
                name: "sspur",
                exe: built[0].clone(),
                sspur: false,
                gc: false,
                stats: true,
            },
            Runner {
                name: "sspur gc",
                exe: built[1].clone(),
                sspur: false,
                gc: true,
                stats: true,
            },
            Runner {
                name: "sspur run",
                exe: sspur.clone(),
                sspur: true,
                gc: false,
                stats: false,
            },
        ];
        let rust_src = bench.join(format!("rust/{name}.rs"));
        if rust_src.exists() {
            let exe = out_dir.join(format!("{name}-rust"));
            if !compile_reference("rustc", &["-O", "--edition", "2021"], &rust_src, &exe) {
                return ExitCode::from(1);
            }
            runners.push(Runner {
                name: "rust",
                exe,
                sspur: false,
                gc: false,
                stats: false,
            });
        }
        let cpp_src = bench.join(format!("cpp/{name}.cpp"));
        if gpp && cpp_src.exists() {
            let exe = out_dir.join(format!("{name}-cpp"));
            if !compile_reference("g++", &["-O2", "-std=c++17"], &cpp_src, &exe) {
                return ExitCode::from(1);
            }
            runners.push(Runner {
                name: "c++",
                exe,
                sspur: false,
                gc: false,
                stats: false,
            });
        }
        // Outputs first: a wrong answer is not a benchmark result. This run
        // also warms the page cache.
        for r in &runners {
            match measure_command(&r.command(&program), stdin.as_deref()) {
                Ok((out, _)) if out == expected => {}
                Ok(_) => {
                    eprintln!(
                        "xtask: {name} ({}) printed something else than bench/{name}.stdout",
                        r.name
                    );
                    return ExitCode::from(1);
                }
                Err(e) => {
                    eprintln!("xtask: {name} ({}): {e}", r.name);
                    return ExitCode::from(1);
                }
            }
        }
        let mut samples: Vec<Vec<(f64, f64)>> = vec![Vec::new(); runners.len()];
        for _ in 0..runs {
            for (r, runner) in runners.iter().enumerate() {
                match measure_command(&runner.command(&program), stdin.as_deref()) {
                    Ok((_, sample)) => samples[r].push(sample),
                    Err(e) => {
                        eprintln!("xtask: {name} ({}): {e}", runner.name);
                        return ExitCode::from(1);
                    }
                }
            }
        }
        let medians: Vec<(&str, f64, f64)> = runners
            .iter()
            .zip(&samples)
            .map(|(r, s)| {
                (
                    r.name,
                    median(s.iter().map(|x| x.0).collect()),
                    median(s.iter().map(|x| x.1).collect()),
                )
            })
            .collect();
        let mut stats = Vec::new();
        for r in runners.iter().filter(|r| r.stats) {
            match gc_stats(r, &program, stdin.as_deref()) {
                Ok(s) => stats.push((r.name, s)),
                Err(e) => {
                    eprintln!("xtask: {name} ({}, SSPUR_GC_STATS=1): {e}", r.name);
                    return ExitCode::from(1);
                }
            }
        }
        rows.push((name.clone(), medians));
        stats_rows.push((name.clone(), stats));
    }
    print_suite(runs, gpp, &rows, &stats_rows);
    ExitCode::SUCCESS
}

type SuiteRow = (String, Vec<(&'static str, f64, f64)>);
type StatsRow = (String, Vec<(&'static str, GcStats)>);

/// Prints the tables as Markdown, so they paste into bench/README.md.
fn print_suite(runs: usize, gpp: bool, rows: &[SuiteRow], stats_rows: &[StatsRow]) {
    println!(
        "{runs} alternating runs each, medians; wall time (s) and peak RSS (MB) of the whole process{}",
        if gpp { "" } else { "; g++ not found, no C++" }
    );
    println!();
    let columns = ["sspur", "sspur gc", "sspur run", "rust", "c++"];
    print!("| program |");
    for c in columns {
        print!(" {c} s | {c} MB |");
    }
    println!(
        " sspur/rust time | sspur/rust mem | gc/rust time | gc/rust mem | run/rust time | run/rust mem |"
    );
    print!("|---|");
    for _ in 0..columns.len() * 2 + 6 {
        print!("---:|");
    }
    println!();
    for (name, medians) in rows {
        print!("| {name} |");
        let get = |c: &str| medians.iter().find(|m| m.0 == c).map(|m| (m.1, m.2));
        for c in columns {
            match get(c) {
                Some((s, mb)) => print!(" {s:.3} | {mb:.1} |"),
                None => print!(" - | - |"),
            }
        }
        let ratio = |c: &str, mem: bool| match (get(c), get("rust")) {
            (Some(a), Some(r)) => {
                let (x, y) = if mem { (a.1, r.1) } else { (a.0, r.0) };
                if y > 0.0 {
                    format!("{:.2}", x / y)
                } else {
                    "-".into()
                }
            }
            _ => "-".into(),
        };
        println!(
            " {} | {} | {} | {} | {} | {} |",
            ratio("sspur", false),
            ratio("sspur", true),
            ratio("sspur gc", false),
            ratio("sspur gc", true),
            ratio("sspur run", false),
            ratio("sspur run", true)
        );
    }
    println!();
    println!(
        "Where the memory went (SSPUR_GC_STATS=1, one run each; MB allocated over the whole run)"
    );
    println!();
    println!("| program | mode | freed at last use MB | left for the collector MB | collected MB | collections (minor/major) | pauses total ms | longest pause ms | promoted MB | peak heap MB |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, stats) in stats_rows {
        for (mode, s) in stats {
            println!(
                "| {name} | {mode} | {:.1} | {:.1} | {:.1} | {} ({}/{}) | {:.1} | {:.1} | {:.1} | {:.1} |",
                s.freed_mb,
                s.left_mb,
                s.collected_mb,
                s.collections,
                s.minor,
                s.major,
                s.total_pause_ms,
                s.longest_pause_ms,
                s.promoted_mb,
                s.peak_mb
            );
        }
    }
}

/// The phases `sspur run --time` reports, in the order the table shows
/// them, with the column each is shown under.
const PHASES: [(&str, &str); 5] = [
    ("parse", "parse"),
    ("check", "check"),
    ("ownership", "own"),
    ("codegen total", "codegen"),
    ("codegen emit", "emit"),
];

/// One compile-bench measurement: the phases' milliseconds (in `PHASES`
/// order), wall seconds and peak RSS MB of the whole process.
#[derive(Clone)]
struct CompileSample {
    phases: Vec<f64>,
    wall: f64,
    rss: f64,
}

/// Parses `time: NAME N ms` lines.
fn parse_times(stderr: &str) -> Vec<f64> {
    PHASES
        .iter()
        .map(|(name, _)| {
            stderr
                .lines()
                .filter_map(|l| l.strip_prefix("time: "))
                .find_map(|l| {
                    let rest = l.strip_prefix(name)?.strip_prefix(' ')?;
                    rest.strip_suffix(" ms")?.trim().parse::<f64>().ok()
                })
                .unwrap_or(f64::NAN)
        })
        .collect()
}

/// Runs `sspur run --time FILE` once: its stdout and the sample.
fn measure_compile(exe: &Path, file: &Path) -> Result<(String, CompileSample), String> {
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg("--time")
        .arg(file)
        .env_remove("SSPUR_MEM");
    let (m, err) = measured(&cmd, None, Stdio::piped())?;
    if !m.status.success() {
        return Err(format!("exited with {}: {}", m.status, err.trim_end()));
    }
    Ok((
        String::from_utf8_lossy(&m.stdout).into_owned(),
        CompileSample {
            phases: parse_times(&err),
            wall: m.secs,
            rss: m.rss_mb,
        },
    ))
}

fn compile_bench(rest: &[String]) -> ExitCode {
    let mut runs = 3;
    let mut shapes = Vec::new();
    let mut sizes = vec![1_000, 10_000, 100_000];
    let mut args = rest.iter();
    while let Some(a) = args.next() {
        if a == "--lines" {
            let parsed: Option<Vec<usize>> = args
                .next()
                .map(|l| l.split(',').map(|n| n.trim().parse().ok()).collect())
                .unwrap_or(None);
            match parsed {
                Some(s) if !s.is_empty() && s.iter().all(|&n| n > 0) => sizes = s,
                _ => {
                    eprintln!("xtask: --lines takes line counts like 1000,10000");
                    return ExitCode::from(2);
                }
            }
        } else if let Ok(n) = a.parse::<usize>() {
            runs = n.max(1);
        } else if let Some(s) = compile_gen::Shape::parse(a) {
            shapes.push(s);
        } else {
            eprintln!("xtask: unknown shape `{a}` (small, large, deep, types)\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if shapes.is_empty() {
        shapes = compile_gen::SHAPES.to_vec();
    }
    if !build_release() {
        return ExitCode::from(1);
    }
    let exe = target_dir().join("release/sspur");
    let dir = target_dir().join("bench/compile");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("xtask: cannot create {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    let mut table: Vec<(compile_gen::Shape, Vec<(usize, CompileSample)>)> = Vec::new();
    for &shape in &shapes {
        let mut files = Vec::new();
        for &lines in &sizes {
            let text = compile_gen::program(shape, lines);
            let real = text.lines().count();
            let file = dir.join(format!("{}-{lines}.ssp", shape.name()));
            if let Err(e) = std::fs::write(&file, text) {
                eprintln!("xtask: cannot write {}: {e}", file.display());
                return ExitCode::from(1);
            }
            files.push((real, file));
        }
        // Alternate the sizes, so a burst of load on the shared machine
        // spreads over all of them.
        let mut samples: Vec<Vec<CompileSample>> = vec![Vec::new(); files.len()];
        for _ in 0..runs {
            for (i, (_, file)) in files.iter().enumerate() {
                match measure_compile(&exe, file) {
                    Ok((out, s)) if !out.trim().is_empty() => samples[i].push(s),
                    Ok(_) => {
                        eprintln!("xtask: {} printed nothing", file.display());
                        return ExitCode::from(1);
                    }
                    Err(e) => {
                        eprintln!("xtask: {}: {e}", file.display());
                        return ExitCode::from(1);
                    }
                }
            }
        }
        let medians = files
            .iter()
            .zip(&samples)
            .map(|((lines, _), s)| {
                let phases = (0..PHASES.len())
                    .map(|p| median(s.iter().map(|x| x.phases[p]).collect()))
                    .collect();
                let sample = CompileSample {
                    phases,
                    wall: median(s.iter().map(|x| x.wall).collect()),
                    rss: median(s.iter().map(|x| x.rss).collect()),
                };
                (*lines, sample)
            })
            .collect();
        table.push((shape, medians));
    }
    print_compile_bench(runs, &table);
    ExitCode::SUCCESS
}

/// Prints the table as Markdown: per shape and size the medians, then a
/// row per 10x step with each column's growth factor (10.0 is linear).
fn print_compile_bench(runs: usize, table: &[(compile_gen::Shape, Vec<(usize, CompileSample)>)]) {
    println!(
        "{runs} alternating runs each, medians; phases from `sspur run --time` (ms), wall time (s) and peak RSS (MB) of the whole process"
    );
    println!();
    print!("| shape | lines |");
    for (_, col) in PHASES {
        print!(" {col} ms |");
    }
    println!(" wall s | peak MB |");
    print!("|---|---:|");
    for _ in 0..PHASES.len() + 2 {
        print!("---:|");
    }
    println!();
    for (shape, rows) in table {
        for (i, (lines, s)) in rows.iter().enumerate() {
            print!("| {} | {lines} |", shape.name());
            for p in &s.phases {
                print!(" {p:.1} |");
            }
            println!(" {:.3} | {:.1} |", s.wall, s.rss);
            if i > 0 {
                let (prev_lines, prev) = &rows[i - 1];
                // Growth normalised to a 10x step in lines.
                let step = *lines as f64 / *prev_lines as f64;
                let grow = |a: f64, b: f64| {
                    let g = (b / a) * 10.0 / step;
                    if g.is_finite() {
                        format!("{g:.1}x")
                    } else {
                        "-".into()
                    }
                };
                print!("| {} | growth per 10x |", shape.name());
                for (p, q) in prev.phases.iter().zip(&s.phases) {
                    print!(" {} |", grow(*p, *q));
                }
                println!(" {} | {} |", grow(prev.wall, s.wall), grow(prev.rss, s.rss));
            }
        }
    }
}
