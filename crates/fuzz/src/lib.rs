//! `sspur fuzz`: generated programs, run differentially in every mode.
//!
//! - [`gen`]: a type-driven generator of well-typed, terminating programs,
//!   deterministic per seed (its own SplitMix64, [`rng`]).
//! - [`runner`]: runs one program with the interpreter checking drops and
//!   natively in default, `SSPUR_MEM=gc`, `SSPUR_MEM=check` (under
//!   collector stress, so its audits run) and `SSPUR_GC_STRESS` modes, and
//!   reports differences, panics, signals, check-mode and drop-check
//!   reports and timeouts as [`Finding`]s.
//! - [`minimize`]: reduces a finding's program while the finding remains.
//! - [`fuzz`]: the loop `sspur fuzz` runs: N programs from a seed, on
//!   several threads, progress on stderr, findings minimized and kept.
#![forbid(unsafe_code)]

pub mod gen;
pub mod minimize;
pub mod model;
pub mod rng;
pub mod runner;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use runner::{Finding, Hook, Mode, RunConfig};

/// The program of `seed`, as source text.
pub fn program_text(seed: u64) -> String {
    gen::generate(seed).program.render()
}

#[derive(Clone)]
pub struct Options {
    /// Programs to generate: seeds `seed`, `seed + 1`, ...
    pub count: u64,
    pub seed: u64,
    pub modes: Vec<Mode>,
    /// Where minimized findings are written.
    pub keep: Option<PathBuf>,
    pub jobs: usize,
    pub run: RunConfig,
    pub minimize: bool,
    /// Limits of one minimization.
    pub minimize_budget: minimize::Budget,
    /// Stop once this many findings were seen.
    pub stop_after: Option<usize>,
    /// Print progress lines to stderr.
    pub progress: bool,
}

/// One finding, minimized.
#[derive(Clone, Debug)]
pub struct Report {
    /// The seed of the program (`sspur fuzz --gen 1 --seed SEED` makes it).
    pub seed: u64,
    pub finding: Finding,
    /// Every finding of the original program.
    pub all: Vec<Finding>,
    pub original: String,
    /// The minimized program (the original when not minimized).
    pub minimized: String,
    /// The finding as the minimized program shows it.
    pub minimized_detail: String,
    /// Where it was written (with `--keep`).
    pub file: Option<PathBuf>,
}

impl Report {
    /// The header comment written above a kept program.
    pub fn header(&self) -> String {
        let modes: Vec<&str> = self.finding.modes.iter().map(|m| m.name()).collect();
        let mut h = format!(
            "// sspur fuzz finding: {}\n// seed: {} (`sspur fuzz --gen 1 --seed {} --print` shows the original)\n// modes: {}\n",
            self.finding.key,
            self.seed,
            self.seed,
            modes.join(", ")
        );
        for m in &self.finding.modes {
            h.push_str(&format!("//   {}\n", m.command("FILE")));
        }
        h.push_str("// difference:\n");
        for line in self.minimized_detail.lines() {
            h.push_str(&format!("//   {line}\n"));
        }
        h
    }
}

#[derive(Debug, Default)]
pub struct Summary {
    pub programs: u64,
    pub reports: Vec<Report>,
    /// Programs that did not type-check (generator bugs): seed and the
    /// diagnostics.
    pub generator_failures: Vec<(u64, String)>,
    pub elapsed: Duration,
    /// Findings seen per key (before any was skipped for being a repeat).
    pub by_key: std::collections::BTreeMap<String, usize>,
}

impl Summary {
    pub fn found_anything(&self) -> bool {
        !self.reports.is_empty() || !self.generator_failures.is_empty()
    }

    pub fn line(&self, seed: u64) -> String {
        let secs = self.elapsed.as_secs_f64();
        let rate = if secs > 0.0 {
            self.programs as f64 / secs
        } else {
            0.0
        };
        let keys: Vec<String> = self
            .by_key
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        format!(
            "fuzz: {} programs from seed {seed} in {secs:.1} s ({rate:.1}/s): {} findings{}, {} generator failures",
            self.programs,
            self.by_key.values().sum::<usize>(),
            if keys.is_empty() {
                String::new()
            } else {
                format!(" ({})", keys.join(", "))
            },
            self.generator_failures.len()
        )
    }
}

/// Minimized findings per key at most (later ones are only counted).
const MINIMIZE_PER_KEY: usize = 2;

pub fn fuzz(opts: &Options) -> Summary {
    let start = Instant::now();
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "sspur-fuzz-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::create_dir_all(&dir);
    if let Some(k) = &opts.keep {
        let _ = std::fs::create_dir_all(k);
    }
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let found = AtomicUsize::new(0);
    let summary = Mutex::new(Summary::default());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= opts.count {
                    break;
                }
                let seed = opts.seed.wrapping_add(i);
                one_program(opts, seed, &dir, &summary, &found);
                done.fetch_add(1, Ordering::SeqCst);
                if let Some(n) = opts.stop_after {
                    if found.load(Ordering::SeqCst) >= n {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
            });
        }
        if opts.progress {
            s.spawn(|| {
                let mut last = Instant::now();
                loop {
                    std::thread::sleep(Duration::from_millis(100));
                    let d = done.load(Ordering::SeqCst);
                    if d >= opts.count || stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if last.elapsed() >= Duration::from_secs(2) {
                        last = Instant::now();
                        let secs = start.elapsed().as_secs_f64();
                        eprintln!(
                            "fuzz: {d}/{} programs ({:.1}/s), {} findings",
                            opts.count,
                            d as f64 / secs,
                            found.load(Ordering::SeqCst)
                        );
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut summary = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    summary.programs = done.load(Ordering::SeqCst);
    summary.elapsed = start.elapsed();
    summary.reports.sort_by_key(|r| r.seed);
    summary
}

fn one_program(
    opts: &Options,
    seed: u64,
    dir: &Path,
    summary: &Mutex<Summary>,
    found: &AtomicUsize,
) {
    let g = gen::generate(seed);
    let text = g.program.render();
    if let Err(diags) = check::check_source(&text) {
        let path = format!("seed-{seed}.ssp");
        let msg = check::render_diagnostics(&path, &text, &diags);
        if opts.progress {
            eprintln!("fuzz: seed {seed}: the generated program does not type-check:\n{msg}");
        }
        let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
        s.generator_failures.push((seed, msg));
        found.fetch_add(1, Ordering::SeqCst);
        return;
    }
    let path = dir.join(format!("p{seed}.ssp"));
    if std::fs::write(&path, &text).is_err() {
        return;
    }
    let all = runner::examine(&opts.run, &opts.modes, &path, &text);
    let Some(first) = all.first().cloned() else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    found.fetch_add(1, Ordering::SeqCst);
    let repeat = {
        let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
        let n = s.by_key.entry(first.key.clone()).or_insert(0);
        *n += 1;
        *n > MINIMIZE_PER_KEY
    };
    if opts.progress {
        eprintln!("fuzz: seed {seed}: {}: {}", first.key, first.detail);
    }
    if repeat {
        let _ = std::fs::remove_file(&path);
        return;
    }
    // A timeout is not minimized: every candidate could take the limit.
    let (minimized, detail) = if opts.minimize && !first.key.starts_with("timeout") {
        let mpath = dir.join(format!("m{seed}.ssp"));
        let key = first.key.clone();
        let mut last_detail = first.detail.clone();
        let (p, _) = minimize::minimize(&g.program, opts.minimize_budget, |cand| {
            if std::fs::write(&mpath, cand).is_err() {
                return false;
            }
            let fs = runner::examine(&opts.run, &first.modes, &mpath, cand);
            match fs.into_iter().find(|f| f.key == key) {
                Some(f) => {
                    last_detail = f.detail;
                    true
                }
                None => false,
            }
        });
        let _ = std::fs::remove_file(&mpath);
        (p.render(), last_detail)
    } else {
        (text.clone(), first.detail.clone())
    };
    let _ = std::fs::remove_file(&path);
    let mut report = Report {
        seed,
        finding: first,
        all,
        original: text,
        minimized,
        minimized_detail: detail,
        file: None,
    };
    if let Some(k) = &opts.keep {
        let slug: String = report
            .finding
            .key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let file = k.join(format!("{slug}-seed{seed}.ssp"));
        let body = format!("{}\n{}", report.header(), report.minimized);
        if std::fs::write(&file, body).is_ok() {
            report.file = Some(file);
        }
        let _ = std::fs::write(
            k.join(format!("{slug}-seed{seed}.original.ssp")),
            &report.original,
        );
    }
    if opts.progress {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "fuzz: seed {seed}: minimized to {} lines{}",
            report.minimized.lines().count(),
            report
                .file
                .as_ref()
                .map(|f| format!(", kept in {}", f.display()))
                .unwrap_or_default()
        );
    }
    let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
    s.reports.push(report);
}
