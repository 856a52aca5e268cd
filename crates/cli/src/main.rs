//! `sspur`: check, run, explain and inspect Sspur programs.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use driver::{Database, SourceFile};

/// Sspur: a small typed language whose compiler frees memory statically.
///
/// Warnings (unused locals, a `var` never assigned, unreachable match
/// arms) go to stderr as `path:line:col: warning:` and leave the exit code
/// alone; `-W error` makes them errors, `-W none` hides them.
///
/// Exit codes: 0 success, 1 compile error (or unreadable file, or a
/// warning under `-W error`), 2 bad
/// usage (an unknown flag, a flag that does nothing in the chosen mode, a
/// bad SSPUR_* value), 3 a drop-check violation (--check-drops), 101 a
/// trap in the program.
///
/// Environment (native runs): SSPUR_MEM=gc|check, SSPUR_GC_STATS=1|sites,
/// SSPUR_GC_YOUNG_MB, SSPUR_GC_MIN_MB, SSPUR_GC_FACTOR, SSPUR_GC_STRESS=KB,
/// SSPUR_GC_BARRIER_KB,
/// SSPUR_ALLOC_REPORT=1, SSPUR_FAIL_ALLOC_AT=n; both backends:
/// SSPUR_MAX_HEAP_MB=n, SSPUR_BACKTRACE=0 (no call chain under a trap),
/// SSPUR_STACK_MB=n (the program's stack, default 1024) (see
/// docs/runtime.md).
#[derive(Parser)]
#[command(name = "sspur", version, about, long_about)]
struct Cli {
    /// What to do with warnings: `warn` (print them, the default),
    /// `error` (print them as errors and stop: exit code 1, nothing runs),
    /// `none` (print nothing).
    #[arg(
        short = 'W',
        long = "warnings",
        value_enum,
        global = true,
        value_name = "WHAT"
    )]
    warnings: Option<Warnings>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
enum Warnings {
    #[default]
    Warn,
    Error,
    None,
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
    /// Compile a program to a standalone executable.
    ///
    /// The executable runs the program as `sspur run` does (same output,
    /// traps, exit codes and SSPUR_* settings) without compiling it again.
    /// `SSPUR_MEM=gc` at build time compiles no drops, as for `run`. The
    /// object file is linked with the runtime's static library (librtlib.a,
    /// found beside the sspur binary, where cargo builds it) by the
    /// system's C compiler (`cc`, or $CC).
    Build {
        /// The .ssp file.
        file: PathBuf,
        /// The executable to write (default: the file's name without
        /// `.ssp`, in the current directory).
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: Option<PathBuf>,
    },
    /// Print the fate of every allocation site: freed where and why, or
    /// left for the collector and why.
    Explain {
        /// The .ssp file.
        file: PathBuf,
    },
    /// Generate random well-typed programs and run each differentially:
    /// the interpreter with drops checked against native code in default,
    /// SSPUR_MEM=gc, SSPUR_MEM=check (with collector stress) and
    /// SSPUR_GC_STRESS modes.
    ///
    /// A finding is a difference in output, exit code or trap message, a
    /// panic, a death by signal, a check-mode report (unsound free, write
    /// after free, double free), a drop-checker report, or a run over the
    /// time limit. Each finding is minimized (functions, statements, arms
    /// and expressions removed while it persists) and printed; with --keep
    /// it is also written to DIR with its seed, modes and the difference.
    /// Progress goes to stderr. Exit code 1 when anything was found.
    Fuzz(FuzzArgs),
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
    // Under `ulimit -v` the compiler's stack takes at most a quarter of the
    // limit: the program's thread and heap need the rest.
    let stack = stdx::address_space_limit().map_or(COMPILER_STACK, |l| COMPILER_STACK.min(l / 4));
    let code = stdx::with_big_stack(stack, "sspur", || execute(cli));
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
    if cli.warnings.is_some() && matches!(cli.command, Command::Fuzz(_)) {
        eprintln!("error: `-W` does nothing for `sspur fuzz` (its children run with `-W none`)");
        return 2;
    }
    let w = cli.warnings.unwrap_or_default();
    match cli.command {
        Command::Check { file } => with_program(&file, w, |_, _| 0),
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
                warnings: w,
            },
        ),
        Command::Build { file, output } => build(&file, output, w),
        Command::Explain { file } => with_analysis(&file, w, |a, path| {
            emit_text(&ownership::explain(a, path));
            0
        }),
        Command::Fuzz(args) => fuzz(args),
        Command::Emit { what, file } => match what {
            Emit::Ir => with_program(&file, w, |p, _| {
                emit_text(&ir::pretty::program(p));
                0
            }),
            Emit::Drops => with_analysis(&file, w, |a, _| {
                emit_text(&ownership::emit_drops(a));
                0
            }),
            Emit::Summaries => with_analysis(&file, w, |a, _| {
                emit_text(&ownership::emit_summaries(a));
                0
            }),
            Emit::Clif => with_runnable(&file, w, |p, _| {
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
fn with_program(
    path: &std::path::Path,
    w: Warnings,
    f: impl FnOnce(&ir::Program, &str) -> u8,
) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match checked(&db, file, w) {
        Some(p) => f(&p, &shown),
        None => 1,
    }
}

fn with_analysis(
    path: &std::path::Path,
    w: Warnings,
    f: impl FnOnce(&ownership::Analysis, &str) -> u8,
) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if checked(&db, file, w).is_none() {
        return 1;
    }
    match driver::analysis(&db, file) {
        Some(a) => f(a, &shown),
        None => 1,
    }
}

fn with_runnable(
    path: &std::path::Path,
    w: Warnings,
    f: impl FnOnce(&ir::Program, &str) -> u8,
) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if checked(&db, file, w).is_none() {
        return 1;
    }
    match driver::runnable_program(&db, file, gc_mode()) {
        Some(p) => f(&p, &shown),
        None => 1,
    }
}

/// The checked program, after printing any diagnostics to stderr, and
/// its warnings as `w` says (None when they are errors).
fn checked(db: &Database, file: SourceFile, w: Warnings) -> Option<Arc<ir::Program>> {
    let diags = driver::diagnostics(db, file);
    if !diags.is_empty() {
        let _ = std::io::stderr().write_all(driver::render(db, file, diags).as_bytes());
        return None;
    }
    let warnings = driver::warnings(db, file);
    if !warnings.is_empty() && w != Warnings::None {
        let severity = match w {
            Warnings::Error => driver::Severity::Error,
            Warnings::Warn | Warnings::None => driver::Severity::Warning,
        };
        let text = driver::render_warnings(db, file, warnings, severity);
        let _ = std::io::stderr().write_all(text.as_bytes());
        if w == Warnings::Error {
            return None;
        }
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
    warnings: Warnings,
}

fn run(path: &std::path::Path, args: Vec<String>, flags: RunFlags) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let t = Instant::now();
    let parse_errors = !driver::parse(&db, file).diagnostics.is_empty();
    let t_parse = t.elapsed();
    let m_parse = flags.time.then(stdx::memory).flatten();
    let t = Instant::now();
    let checked_program = checked(&db, file, flags.warnings);
    let t_check = t.elapsed();
    let m_check = flags.time.then(stdx::memory).flatten();
    let Some(checked_program) = checked_program.filter(|_| !parse_errors) else {
        return 1;
    };
    // Running needs only the checked program from here on: free the parse
    // trees and the checker's tables before the analysis allocates, so the
    // phases' peaks do not add up. (`driver::runnable_program` gives the
    // same program; the database would keep everything alive.)
    drop(db);
    let t = Instant::now();
    let analysis = ownership::analyze(&checked_program);
    let site_names = ownership::alloc_sites(&analysis)
        .into_iter()
        .map(|s| ((s.func, s.expr, s.elements), s.name))
        .collect();
    let program = if gc_mode() {
        checked_program
    } else {
        drop(checked_program);
        analysis.program.clone()
    };
    drop(analysis);
    let t_own = t.elapsed();
    let m_own = flags.time.then(stdx::memory).flatten();
    if flags.time {
        for (what, t, m) in [
            ("parse", t_parse, m_parse),
            ("check", t_check, m_check),
            ("ownership", t_own, m_own),
        ] {
            eprintln!("time: {what} {:.3} ms", t.as_secs_f64() * 1e3);
            if let Some(m) = m {
                eprintln!("mem: {what} {m}");
            }
        }
    }
    if flags.interp {
        let opts = interp::Options {
            path: shown,
            args,
            stdin: None,
            check_drops: flags.check_drops,
            oracle: flags.oracle,
            max_depth: None,
        };
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let outcome = interp::run(&program, &opts, &mut stdout.lock(), &mut stderr.lock());
        if let Some(report) = &outcome.oracle {
            eprintln!("{report}");
        }
        return outcome.exit_code.clamp(0, 255) as u8;
    }
    let opts = codegen::Options {
        path: shown,
        args,
        time: flags.time,
        site_names,
    };
    codegen::run(program, &opts).clamp(0, 255) as u8
}

/// The allocation sites' names as the ownership pass words them.
fn site_names(
    db: &Database,
    file: SourceFile,
) -> std::collections::HashMap<(ir::FnId, ir::ExprId, bool), String> {
    match driver::analysis(db, file) {
        Some(a) => ownership::alloc_sites(a)
            .into_iter()
            .map(|s| ((s.func, s.expr, s.elements), s.name))
            .collect(),
        None => Default::default(),
    }
}

/// `sspur build`: the program's object file, linked with the runtime's
/// static library into an executable.
fn build(path: &std::path::Path, output: Option<PathBuf>, w: Warnings) -> u8 {
    let (db, file, shown) = match load(path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let parse_errors = !driver::parse(&db, file).diagnostics.is_empty();
    if checked(&db, file, w).is_none() || parse_errors {
        return 1;
    }
    let Some(program) = driver::runnable_program(&db, file, gc_mode()) else {
        return 1;
    };
    let output = output.unwrap_or_else(|| PathBuf::from(path.file_stem().unwrap_or_default()));
    let lib = match runtime_library() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let site_names = site_names(&db, file);
    drop(db);
    let opts = codegen::Options {
        path: shown,
        args: Vec::new(),
        time: false,
        site_names,
    };
    let object = match codegen::build_object(&program, &opts) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: native code generation failed: {e}");
            return 1;
        }
    };
    let dir = std::env::temp_dir().join(format!("sspur-build-{}", std::process::id()));
    let obj = dir.join("program.o");
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&obj, &object)) {
        eprintln!("error: cannot write {}: {e}", obj.display());
        return 1;
    }
    let code = link(&obj, &lib, &output);
    let _ = std::fs::remove_dir_all(&dir);
    code
}

/// The system libraries the Rust standard library in librtlib.a needs
/// (`rustc --print native-static-libs` on Linux).
const SYSTEM_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// Links `obj` with the runtime library into `output` with the system's C
/// compiler. Generated code addresses its data absolutely: no PIE. The
/// sections nothing reaches are left out (`--gc-sections`): the runtime
/// library holds every helper, the compiler's tables and all of std's
/// object code, most of which a program never calls, and a smaller
/// executable maps fewer pages (a built `print("hi")`: text 1.2 -> 0.54 MB,
/// peak RSS about 2.6 -> 2.0 MB).
fn link(obj: &std::path::Path, lib: &std::path::Path, output: &std::path::Path) -> u8 {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .arg("-no-pie")
        .arg("-Wl,--gc-sections")
        .arg("-o")
        .arg(output)
        .arg(obj)
        .arg(lib)
        .args(SYSTEM_LIBS)
        .status();
    match status {
        Ok(s) if s.success() => 0,
        Ok(s) => {
            eprintln!(
                "error: linking {} with `{cc}` failed ({s})",
                output.display()
            );
            1
        }
        Err(e) => {
            eprintln!(
                "error: cannot run the C compiler `{cc}` to link the executable: {e} \
                 (install a C toolchain, or set CC)"
            );
            1
        }
    }
}

/// The runtime's static library: `librtlib.a` beside the `sspur` binary
/// (an install), or the one cargo built with it (`deps/librtlib-HASH.a`
/// beside `target/PROFILE/sspur`; the newest if there are several).
fn runtime_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the sspur binary: {e}"))?;
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let beside = dir.join("librtlib.a");
    if beside.is_file() {
        return Ok(beside);
    }
    let newest = std::fs::read_dir(dir.join("deps"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("librtlib-") && name.ends_with(".a")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max();
    newest.map(|(_, p)| p).ok_or_else(|| {
        format!(
            "cannot find the Sspur runtime library (librtlib.a) in {} or its deps/ \
             (cargo builds it with the sspur binary: `cargo build -p cli`)",
            dir.display()
        )
    })
}

#[derive(clap::Args)]
struct FuzzArgs {
    /// How many programs to generate and run.
    #[arg(long = "gen", value_name = "N", default_value_t = 100)]
    count: u64,
    /// The first program's seed (program i uses SEED + i); random when
    /// omitted. A seed gives the same program on every machine.
    #[arg(long)]
    seed: Option<u64>,
    /// The modes to run, comma-separated; the first is the reference.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "interp,native,gc,check,stress"
    )]
    modes: Vec<String>,
    /// Write each minimized finding (and its original) to DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Programs run at once (default: the number of CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// Time limit of one run, in seconds.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Report findings without minimizing them.
    #[arg(long)]
    no_minimize: bool,
    /// Print the generated programs instead of running them.
    #[arg(long)]
    print: bool,
}

fn fuzz(a: FuzzArgs) -> u8 {
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 % 1_000_000_000)
            .unwrap_or(0)
    });
    if a.print {
        for i in 0..a.count {
            let s = seed.wrapping_add(i);
            emit_text(&format!("// seed {s}\n{}", fuzz::program_text(s)));
        }
        return 0;
    }
    let mut modes = Vec::new();
    for m in &a.modes {
        match fuzz::Mode::parse(m) {
            Some(m) => modes.push(m),
            None => {
                eprintln!("error: unknown mode `{m}` (interp, native, gc, check, stress)");
                return 2;
            }
        }
    }
    let sspur = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot find the sspur binary: {e}");
            return 2;
        }
    };
    let opts = fuzz::Options {
        count: a.count,
        seed,
        modes,
        keep: a.keep,
        jobs: a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        run: fuzz::RunConfig {
            sspur,
            timeout: std::time::Duration::from_secs(a.timeout.max(1)),
            hook: None,
        },
        minimize: !a.no_minimize,
        minimize_budget: fuzz::minimize::Budget {
            runs: 4000,
            time: std::time::Duration::from_secs(300),
        },
        stop_after: None,
        progress: true,
    };
    eprintln!("fuzz: {} programs from seed {seed}", a.count);
    let summary = fuzz::fuzz(&opts);
    for r in &summary.reports {
        emit_text(&format!(
            "=== seed {}: {}\n{}\n{}\n",
            r.seed,
            r.finding.key,
            r.header(),
            r.minimized
        ));
    }
    for (s, msg) in &summary.generator_failures {
        emit_text(&format!(
            "=== seed {s}: generated program does not type-check\n{msg}\n"
        ));
    }
    eprintln!("{}", summary.line(seed));
    u8::from(summary.found_anything())
}
