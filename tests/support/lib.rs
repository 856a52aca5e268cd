//! Shared helpers for the top-level integration tests.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The root of the repository (this package's manifest directory).
/// The interpreter's call depth in the in-process runs of the tests: the
/// default (ten million) would make an unbounded recursion touch gigabytes
/// of stack in a debug build.
pub const INTERP_DEPTH: Option<usize> = Some(1_500_000);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The names (without `.ssp`) of the programs in `dir`, sorted.
pub fn ssp_stems(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            if p.extension()? != "ssp" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

/// The `SSPUR_*` variables a native run reads: a test's child runs start
/// with none of them set, then get the ones the test gives.
pub const SSPUR_VARS: &[&str] = &[
    "SSPUR_MEM",
    "SSPUR_GC_STATS",
    "SSPUR_GC_STRESS",
    "SSPUR_FAIL_ALLOC_AT",
    "SSPUR_ALLOC_REPORT",
    "SSPUR_GC_MIN_MB",
    "SSPUR_GC_FACTOR",
    "SSPUR_GC_YOUNG_MB",
    "SSPUR_GC_BARRIER_KB",
    "SSPUR_MAX_HEAP_MB",
    "SSPUR_BACKTRACE",
];

/// The debug `sspur` binary, built once per test process.
pub fn sspur() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "cli", "--bin", "sspur"])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building sspur failed");
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root().join("target"));
        target.join("debug/sspur")
    })
    .clone()
}

#[repr(C)]
#[derive(Default)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    maxrss_kb: i64,
    rest: [i64; 13],
}

unsafe extern "C" {
    fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
}

/// How a child `sspur` run ended.
pub struct Run {
    pub exit: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Peak resident set size, from `wait4`'s rusage.
    pub rss_mb: i64,
    pub time: Duration,
}

impl Run {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs `sspur ARGS` on `source` (written to a temporary file named
/// `name.ssp` in a directory of its own per `tag` and process) with `env`
/// added to a clean `SSPUR_*` environment; stdout and stderr go to files.
pub fn run(tag: &str, name: &str, source: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_limited(tag, name, source, args, env, None)
}

/// [`run`] under `ulimit -v vm_kb` (the address space limit) when given.
pub fn run_limited(
    tag: &str,
    name: &str,
    source: &str,
    args: &[&str],
    env: &[(&str, &str)],
    vm_kb: Option<u64>,
) -> Run {
    let scratch = tempfile::Builder::new()
        .prefix(&format!("sspur-{tag}-"))
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let src = dir.join(format!("{name}.ssp"));
    std::fs::write(&src, source).unwrap();
    let (out, err) = (
        dir.join(format!("{name}.out")),
        dir.join(format!("{name}.err")),
    );
    let mut cmd = match vm_kb {
        None => Command::new(sspur()),
        Some(kb) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
                .arg(sspur());
            c
        }
    };
    cmd.args(args)
        .arg(&src)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for (k, _) in std::env::vars() {
        if k.starts_with("SSPUR_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    // Reaped by `wait4` below, which also gives the peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("sspur starts");
    let mut status = 0;
    let mut usage = Rusage::default();
    // SAFETY: `status` and `usage` are live locals of the sizes wait4 writes.
    let pid = unsafe { wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let time = start.elapsed();
    let exit = if status & 0x7f == 0 {
        (status >> 8) & 0xff
    } else {
        128 + (status & 0x7f)
    };
    Run {
        exit,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
        rss_mb: usage.maxrss_kb / 1024,
        time,
    }
}

/// The first number of the `name: N ...` line of a runtime exit report.
pub fn stat(stderr: &str, name: &str) -> Option<u64> {
    let line = stderr.lines().find(|l| l.starts_with(name))?;
    line[name.len()..]
        .trim_start_matches(':')
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The seeded generators of the benchmark inputs (`bench/gen.rs`), shared
/// with `cargo xtask`.
#[path = "../../bench/gen.rs"]
pub mod bench_gen;

/// A fresh empty directory for one run of a corpus program, removed when
/// dropped: a `$TMP` in a line of `NAME.args` stands for it, so programs
/// that write files never share one between runs (the modes run at once).
pub struct RunDir(PathBuf);

impl RunDir {
    pub fn new() -> RunDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("sspur-run-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        RunDir(dir)
    }

    /// `args` with each `$TMP` replaced by this directory.
    pub fn args(&self, args: &[String]) -> Vec<String> {
        let dir = self.0.to_string_lossy();
        args.iter().map(|a| a.replace("$TMP", &dir)).collect()
    }
}

impl Default for RunDir {
    fn default() -> RunDir {
        RunDir::new()
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
