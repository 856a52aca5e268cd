//! Running a compiled program: what the JIT (`sspur run`) and a built
//! executable (`sspur build`, through [`crate::image`]) both do once the
//! code is in memory. The program's tables are installed, then `main` runs
//! on its own thread with a large stack, where the runtime is initialised
//! (the collector scans that thread's stack), the stack overflow handler
//! and the call-chain table are installed, and the exit reports are printed
//! when `main` returns. Traps and `exit` end the process from inside the
//! runtime.

use crate::backtrace::Table;
use crate::helpers::types::TyDesc;

/// Stacks of the program thread, largest first: `SSPUR_STACK_MB` (1 GiB
/// by default) plus a sixteenth for the runtime's own frames, then smaller
/// ones where the system refuses that reservation (under `ulimit -v`); the
/// overflow trap comes from the guard page, whatever the size.
pub fn program_stacks(stack_bytes: usize) -> Vec<usize> {
    stacks_to_try(
        stack_bytes + stack_bytes / 16,
        &[256 << 20, 64 << 20, 16 << 20],
    )
}

/// `first`, then each of `fallbacks` smaller than it: the stack sizes a
/// thread that wants `first` tries in turn.
pub fn stacks_to_try(first: usize, fallbacks: &[usize]) -> Vec<usize> {
    std::iter::once(first)
        .chain(fallbacks.iter().copied().filter(|s| *s < first))
        .collect()
}

/// A program whose code is in memory, with the tables the runtime needs.
pub struct Program {
    /// The code to run: `extern "C" fn() -> i64` (the trampoline that
    /// calls `main`, or `main` itself).
    pub entry: usize,
    /// The type table compiled code passes indices into.
    pub types: Vec<TyDesc>,
    /// `path:line:col` of each allocation site (site id `i + 1`).
    pub site_locs: Vec<String>,
    /// The name of each allocation site, for the statistics.
    pub site_names: Vec<String>,
    /// What `args()` returns.
    pub args: Vec<String>,
    /// Each compiled function's code range and the position a stack
    /// overflow in it traps at.
    pub ranges: Vec<(usize, usize, String)>,
    /// Where a stack overflow outside every range traps (`main`).
    pub fallback: String,
    /// The call-chain table (absent: traps print no chain).
    pub chains: Option<Box<Table>>,
}

/// Runs the program and returns its exit code (0; 101 when the program
/// thread could not start or failed).
///
/// # Safety
/// `program.entry` must be the address of code with the signature
/// `extern "C" fn() -> i64` that stays mapped while the program runs, and
/// the tables must describe that code.
pub unsafe fn run(program: Program) -> i32 {
    let Program {
        entry,
        types,
        site_locs,
        site_names,
        args,
        ranges,
        fallback,
        chains,
    } = program;
    crate::helpers::types::install(types);
    crate::helpers::text::set_args(args);
    crate::helpers::set_site_locs(site_locs);
    let body = move || {
        crate::sspur_rt_init();
        crate::set_site_names(site_names);
        crate::overflow::install(ranges, fallback);
        if let Some(t) = chains {
            crate::backtrace::install(t);
        }
        // SAFETY: `entry` is code taking no arguments and returning one
        // word (the contract of `run`).
        let f: extern "C" fn() -> i64 = unsafe { std::mem::transmute(entry) };
        f();
        crate::sspur_rt_finish();
    };
    // A refused spawn drops its closure, so the body waits in a shared slot
    // that the thread that does start takes it from.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(body)));
    let mut thread = None;
    let mut refused = None;
    // Read without initialising the runtime here: it must be initialised
    // on the program thread, whose stack the collector scans (a bad value
    // is reported there).
    let settings = crate::Settings::from_env().unwrap_or(crate::Settings::DEFAULT);
    for size in program_stacks(settings.stack_bytes()) {
        let slot = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("sspur-main".into())
            .stack_size(size)
            .spawn(move || {
                let body = slot.lock().ok().and_then(|mut b| b.take());
                if let Some(body) = body {
                    body();
                }
            });
        match spawned {
            Ok(t) => {
                thread = Some(t);
                break;
            }
            Err(err) => refused = Some(err),
        }
    }
    match thread.map(|t| t.join()) {
        Some(Ok(())) => 0,
        Some(Err(_)) => {
            eprintln!("sspur: the program thread failed");
            101
        }
        None => {
            eprintln!(
                "sspur: cannot start the program thread: {}",
                refused.map(|e| e.to_string()).unwrap_or_default()
            );
            101
        }
    }
}
