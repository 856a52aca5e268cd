//! `sspur`: check, run, explain and inspect Sspur programs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use driver::{Database, SourceFile};

/// Sspur: a small typed language whose compiler frees memory statically.
///
/// Exit codes: 0 success, 1 compile error (or unreadable file), 2 bad
/// usage (an unknown flag, a flag that does nothing in the chosen mode, a
/// bad SSPUR_* value), 3 a drop-check violation (--check-drops), 101 a
/// trap in the program.
///
/// Environment (native runs): SSPUR_MEM=gc|check, SSPUR_GC_STATS=1|sites,
/// SSPUR_GC_MIN_MB, SSPUR_GC_FACTOR, SSPUR_GC_STRESS=KB,
/// SSPUR_ALLOC_REPORT=1, SSPUR_FAIL_ALLOC_AT=n; both backends:
/// SSPUR_MAX_HEAP_MB=n (see docs/runtime.md).
#[derive(Parser)]
#[command(name = "sspur", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check a program; print its diagnostics.
    Check {
        /// The .ssp file.
        file: PathBuf,
    },
    /// Compile and run a program (native code by default).
    #[command(trailing_var_arg = true)]
    Run {
        /// Run on the reference interpreter instead of native code.
        #[arg(long)]
        interp: bool,
        /// With --interp: check every drop the ownership pass made (a use
        /// after a drop, a double drop, or a drop of a shared value stops
        /// the program with exit code 3).
        #[arg(long, requires = "interp")]
        check_drops: bool,
        /// With --interp: count the blocks that were never shared at run
        /// time and compare with the blocks the static drops freed.
        #[arg(long, requires = "interp")]
        oracle: bool,
        /// Print the time each compile phase took to stderr.
        #[arg(long)]
        time: bool,
        /// The .ssp file.
        file: PathBuf,
        /// Arguments passed to the program (`args()`).
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the fate of every allocation site: freed where and why, or
    /// left for the collector and why.
    Explain {
        /// The .ssp file.
        file: PathBuf,
    },
    /// Print an intermediate form of a program.
    Emit {
        /// What to print.
        what: Emit,
        /// The .ssp file.
        file: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The typed IR as checked.
    Ir,
    /// The IR with the ownership pass's drops.
    Drops,
    /// The table of functions with fresh results and borrowed parameters.
    Summaries,
    /// The Cranelift IR of every function.
    Clif,
}

/// Stack for the compiler's own recursion over deeply nested (up to the
/// parser's limit) expressions; reserved, not committed.
const COMPILER_STACK: usize = 512 << 20;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = stdx::with_big_stack(COMPILER_STACK, "sspur", || execute(cli));
    let _ = std::io::stdout().flush();
    ExitCode::from(code)
}

/// Writes a report to stdout; a closed pipe (`sspur emit clif f | head`)
/// ends the output quietly instead of panicking like `print!`.
fn emit_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn execute(cli: Cli) -> u8 {
    match cli.command {
        Command::Check { file } => with_program(&file, |_, _| 0),
        Command::Run {
            interp,
            check_drops,
            oracle,
            time,
            file,
            args,
        } => run(
            &file,
            args,
            RunFlags {
                interp,
                check_drops,
                oracle,
                time,
            },
        ),
        Command::Explain { file } => with_analysis(&file, |a, path| {
            emit_text(&ownership::explain(a, path));
            0
        }),
        Command::Emit { what, file } => match what {
            Emit::Ir => with_program(&file, |p, _| {
                emit_text(&ir::pretty::program(p));
                0
            }),
            Emit::Drops => with_analysis(&file, |a, _| {
                emit_text(&ownership::emit_drops(a));
                0
            }),
            Emit::Summaries => with_analysis(&file, |a, _| {
                emit_text(&ownership::emit_summaries(a));
                0
            }),
            Emit::Clif => with_runnable(&file, |p, _| {
                emit_text(&codegen::emit_clif(p));
                0
            }),
        },
    }
}

/// Reads the file into a fresh database, or reports why it can't.
fn load(path: &std::path::Path) -> Result<(Database, SourceFile, String), u8> {
    let shown = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {shown}: {e}");
            return Err(1);
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            eprintln!("error: {shown} is not valid UTF-8 (invalid byte at offset {at})");
            return Err(1);
        }
    };
    let db = Database::default();
    let file = SourceFile::new(&db, shown.clone(), text);
    Ok((db, file, shown))
}

/// Runs `f` on the checked program, or prints the diagnostics and returns 1.
fn with_program(path: &std::path::Path, f: impl FnOnce(&ir::Program, &str) -> u8) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match checked(&db, file) {
        Some(p) => f(&p, &shown),
        None => 1,
    }
}

fn with_analysis(path: &std::path::Path, f: impl FnOnce(&ownership::Analysis, &str) -> u8) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if checked(&db, file).is_none() {
        return 1;
    }
    match driver::analysis(&db, file) {
        Some(a) => f(a, &shown),
        None => 1,
    }
}

fn with_runnable(path: &std::path::Path, f: impl FnOnce(&ir::Program, &str) -> u8) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if checked(&db, file).is_none() {
        return 1;
    }
    match driver::runnable_program(&db, file, gc_mode()) {
        Some(p) => f(&p, &shown),
        None => 1,
    }
}

/// The checked program, after printing any diagnostics to stderr.
fn checked(db: &Database, file: SourceFile) -> Option<Arc<ir::Program>> {
    let diags = driver::diagnostics(db, file);
    if !diags.is_empty() {
        let _ = std::io::stderr().write_all(driver::render(db, file, diags).as_bytes());
        return None;
    }
    driver::program(db, file).clone()
}

/// `SSPUR_MEM=gc`: compile no drop at all.
fn gc_mode() -> bool {
    std::env::var("SSPUR_MEM").is_ok_and(|v| v == "gc")
}

struct RunFlags {
    interp: bool,
    check_drops: bool,
    oracle: bool,
    time: bool,
}

fn run(path: &std::path::Path, args: Vec<String>, flags: RunFlags) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let t = Instant::now();
    let parse_errors = !driver::parse(&db, file).diagnostics.is_empty();
    let t_parse = t.elapsed();
    let t = Instant::now();
    let ok = checked(&db, file).is_some();
    let t_check = t.elapsed();
    if !ok || parse_errors {
        return 1;
    }
    let t = Instant::now();
    let gc = gc_mode();
    let Some(program) = driver::runnable_program(&db, file, gc) else {
        return 1;
    };
    let t_own = t.elapsed();
    if flags.time {
        eprintln!("time: parse {:.3} ms", t_parse.as_secs_f64() * 1e3);
        eprintln!("time: check {:.3} ms", t_check.as_secs_f64() * 1e3);
        eprintln!("time: ownership {:.3} ms", t_own.as_secs_f64() * 1e3);
    }
    if flags.interp {
        let opts = interp::Options {
            path: shown,
            args,
            stdin: None,
            check_drops: flags.check_drops,
            oracle: flags.oracle,
        };
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let outcome = interp::run(&program, &opts, &mut stdout.lock(), &mut stderr.lock());
        if let Some(report) = &outcome.oracle {
            eprintln!("{report}");
        }
        return outcome.exit_code.clamp(0, 255) as u8;
    }
    let site_names = match driver::analysis(&db, file) {
        Some(a) => ownership::alloc_sites(a)
            .into_iter()
            .map(|s| s.description)
            .collect(),
        None => Vec::new(),
    };
    let opts = codegen::Options {
        path: shown,
        args,
        time: flags.time,
        site_names,
    };
    codegen::run(&program, &opts).clamp(0, 255) as u8
}
