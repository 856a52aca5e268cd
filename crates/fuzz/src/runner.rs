//! Runs one program in every mode and turns what differs into findings.
//!
//! The interpreter with drops checked runs in-process (on its own thread,
//! with a time limit); native modes run as children of the `sspur` binary
//! (`sspur run FILE` with the `SSPUR_*` variables of the mode), since the
//! runtime's modes are process-global and a trap ends the process.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A transformation of the analysed program before the interpreter runs it.
/// Only tests set one (to plant a bug and see the fuzzer find it); the
/// `sspur fuzz` command never does.
pub type Hook = fn(&ir::Program) -> ir::Program;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// The reference interpreter with every drop checked.
    Interp,
    /// Native code, drops at last use.
    Native,
    /// Native, `SSPUR_MEM=gc`: no drop at all.
    Gc,
    /// Native, `SSPUR_MEM=check` under collector stress, so the audits run.
    Check,
    /// Native, `SSPUR_GC_STRESS`: a collection every few kilobytes.
    Stress,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Interp,
        Mode::Native,
        Mode::Gc,
        Mode::Check,
        Mode::Stress,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Interp => "interp",
            Mode::Native => "native",
            Mode::Gc => "gc",
            Mode::Check => "check",
            Mode::Stress => "stress",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The environment of a native mode.
    fn env(self, stress_kb: u32) -> Vec<(&'static str, String)> {
        match self {
            Mode::Interp | Mode::Native => vec![],
            Mode::Gc => vec![("SSPUR_MEM", "gc".into())],
            Mode::Check => vec![
                ("SSPUR_MEM", "check".into()),
                ("SSPUR_GC_STRESS", stress_kb.to_string()),
            ],
            Mode::Stress => vec![("SSPUR_GC_STRESS", stress_kb.to_string())],
        }
    }

    /// How the mode is reproduced by hand.
    pub fn command(self, file: &str) -> String {
        match self {
            Mode::Interp => format!("sspur run --interp --check-drops {file}"),
            _ => {
                let env: Vec<String> = self
                    .env(STRESS_KB)
                    .into_iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let mut s = env.join(" ");
                if !s.is_empty() {
                    s.push(' ');
                }
                format!("{s}sspur run {file}")
            }
        }
    }
}

/// Collect every this many KB in the stress modes.
pub const STRESS_KB: u32 = 16;

#[derive(Clone)]
pub struct RunConfig {
    /// The `sspur` binary native modes run.
    pub sspur: PathBuf,
    pub timeout: Duration,
    pub hook: Option<Hook>,
}

/// What one run did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// An in-process panic's message.
    pub panic: Option<String>,
}

impl Outcome {
    fn same_as(&self, other: &Outcome) -> bool {
        self.stdout == other.stdout && self.stderr == other.stderr && self.exit == other.exit
    }
}

/// One thing wrong with one program.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The kind, e.g. `drop-check`, `check-report:stress`, `differs:gc`,
    /// `panic:native`, `signal:check`, `timeout:interp`; the minimizer keeps
    /// an edit only while a finding of the same key remains.
    pub key: String,
    /// The modes needed to see it.
    pub modes: Vec<Mode>,
    /// What was seen.
    pub detail: String,
}

pub fn run_mode(cfg: &RunConfig, mode: Mode, path: &Path, text: &str) -> Outcome {
    match mode {
        Mode::Interp => run_interp(cfg, path, text),
        _ => run_native(cfg, mode, path),
    }
}

fn run_interp(cfg: &RunConfig, path: &Path, text: &str) -> Outcome {
    let text = text.to_string();
    let shown = path.display().to_string();
    let hook = cfg.hook;
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("fuzz-interp".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(move || {
                let program = match check::check_source(&text) {
                    Ok(p) => p,
                    Err(diags) => {
                        let msg = check::render_diagnostics(&shown, &text, &diags);
                        return (Vec::new(), msg.into_bytes(), 1);
                    }
                };
                let mut program =
                    std::sync::Arc::unwrap_or_clone(ownership::analyze(&program).program);
                if let Some(h) = hook {
                    program = h(&program);
                }
                let opts = interp::Options {
                    path: shown,
                    args: Vec::new(),
                    stdin: Some(String::new()),
                    check_drops: true,
                    oracle: false,
                    max_depth: None,
                };
                let (mut out, mut err) = (Vec::new(), Vec::new());
                let o = interp::run(&program, &opts, &mut out, &mut err);
                (out, err, o.exit_code)
            });
            let _ = tx.send(result);
        });
    if spawned.is_err() {
        return Outcome {
            panic: Some("could not start the interpreter thread".into()),
            ..Outcome::default()
        };
    }
    match rx.recv_timeout(cfg.timeout) {
        Ok(Ok((stdout, stderr, exit))) => Outcome {
            stdout,
            stderr,
            exit: Some(exit),
            ..Outcome::default()
        },
        Ok(Err(payload)) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Outcome {
                panic: Some(msg),
                ..Outcome::default()
            }
        }
        // The thread is left to finish on its own.
        Err(_) => Outcome {
            timed_out: true,
            ..Outcome::default()
        },
    }
}

fn run_native(cfg: &RunConfig, mode: Mode, path: &Path) -> Outcome {
    let mut cmd = Command::new(&cfg.sspur);
    // Warnings are about the source, not the run: generated and minimized
    // programs leave names unused, and the interpreter run (in process)
    // prints none, so they would differ on stderr for no bug.
    cmd.args(["-W", "none", "run"]).arg(path);
    for (k, _) in std::env::vars() {
        if k.starts_with("SSPUR_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(mode.env(STRESS_KB));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                panic: Some(format!("cannot start {}: {e}", cfg.sspur.display())),
                ..Outcome::default()
            }
        }
    };
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let mut err_pipe = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out_pipe.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err_pipe.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {
                if start.elapsed() > cfg.timeout {
                    timed_out = true;
                    let _ = child.kill();
                    break child.wait().ok();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => break None,
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let (exit, signal) = match status {
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            (s.code(), s.signal())
        }
        None => (None, None),
    };
    Outcome {
        stdout,
        stderr,
        exit,
        signal: if timed_out { None } else { signal },
        timed_out,
        panic: None,
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The first line of `bytes` that contains `needle`.
fn line_with(bytes: &[u8], needle: &str) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or("")
        .to_string()
}

/// A finding of one mode on its own (not a comparison), if any.
fn own_finding(mode: Mode, o: &Outcome) -> Option<Finding> {
    let m = mode.name();
    let one = |key: String, detail: String| {
        Some(Finding {
            key,
            modes: vec![mode],
            detail,
        })
    };
    if let Some(p) = &o.panic {
        return one(format!("panic:{m}"), format!("{m}: panicked: {p}"));
    }
    if contains(&o.stderr, "panicked at") {
        return one(
            format!("panic:{m}"),
            format!("{m}: panicked: {}", line_with(&o.stderr, "panicked at")),
        );
    }
    if o.timed_out {
        return one(
            format!("timeout:{m}"),
            format!("{m}: exceeded the time limit"),
        );
    }
    if contains(&o.stderr, "drop check:") {
        return one(
            "drop-check".into(),
            format!("{m}: {}", line_with(&o.stderr, "drop check:")),
        );
    }
    if contains(&o.stderr, "sspur check:") {
        return one(
            format!("check-report:{m}"),
            format!("{m}: {}", line_with(&o.stderr, "sspur check:")),
        );
    }
    if let Some(sig) = o.signal {
        return one(
            format!("signal:{m}"),
            format!("{m}: killed by signal {sig}"),
        );
    }
    if mode == Mode::Interp && o.exit == Some(3) {
        return one(
            "interp-error".into(),
            format!("{m}: exit 3: {}", String::from_utf8_lossy(&o.stderr).trim()),
        );
    }
    None
}

/// Runs `text` (written at `path`) in `modes` and returns its findings,
/// most severe first.
pub fn examine(cfg: &RunConfig, modes: &[Mode], path: &Path, text: &str) -> Vec<Finding> {
    let outcomes: Vec<(Mode, Outcome)> = modes
        .iter()
        .map(|&m| (m, run_mode(cfg, m, path, text)))
        .collect();
    findings_of(&outcomes)
}

pub fn findings_of(outcomes: &[(Mode, Outcome)]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut clean = Vec::new();
    for (m, o) in outcomes {
        match own_finding(*m, o) {
            Some(f) => out.push(f),
            None => clean.push((*m, o)),
        }
    }
    // Compare every clean run with the first clean one.
    if let Some(((rm, reference), rest)) = clean.split_first() {
        for (m, o) in rest {
            if !o.same_as(reference) {
                out.push(Finding {
                    key: format!("differs:{}", m.name()),
                    modes: vec![*rm, *m],
                    detail: difference(*rm, reference, *m, o),
                });
            }
        }
    }
    out
}

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 400 {
        format!("{}...", &s[..s.floor_char_boundary(400)])
    } else {
        s.into_owned()
    }
}

/// The first line where two outputs part, or the whole outputs.
fn first_diff(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for i in 0..al.len().max(bl.len()) {
        let (x, y) = (al.get(i), bl.get(i));
        if x != y {
            return format!(
                "line {}: {:?} vs {:?}",
                i + 1,
                x.map(|s| show(s.as_bytes()))
                    .unwrap_or_else(|| "<end>".into()),
                y.map(|s| show(s.as_bytes()))
                    .unwrap_or_else(|| "<end>".into())
            );
        }
    }
    "(differs only in the final newline)".into()
}

fn difference(am: Mode, a: &Outcome, bm: Mode, b: &Outcome) -> String {
    let (an, bn) = (am.name(), bm.name());
    let mut parts = Vec::new();
    if a.exit != b.exit {
        parts.push(format!("exit {:?} ({an}) vs {:?} ({bn})", a.exit, b.exit));
    }
    if a.stdout != b.stdout {
        parts.push(format!(
            "stdout {an} vs {bn}: {}",
            first_diff(&a.stdout, &b.stdout)
        ));
    }
    if a.stderr != b.stderr {
        parts.push(format!(
            "stderr {an} vs {bn}: {}",
            first_diff(&a.stderr, &b.stderr)
        ));
    }
    parts.join("; ")
}
