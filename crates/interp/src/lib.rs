//! Sspur's reference interpreter: a tree-walking evaluator over the typed
//! IR, including the ownership pass's drop forms.
//!
//! It models memory the way the native runtime lays it out (see
//! [`value`]): every heap list buffer and string block is a block with an
//! allocation site, so it can check drops (`check_drops`: a use or second
//! drop of a freed block, or a drop of a shared block or a view, is an
//! error naming both sites) and measure what a perfect analysis could free
//! (`oracle`). The program runs on its own thread with a very large stack,
//! so deep recursion works and ends in the trap `stack overflow` instead of
//! a crash.
#![forbid(unsafe_code)]

mod eval;
mod limit;
mod methods;
mod show;
mod value;

use std::fmt;
use std::io::Write;

use eval::{Active, Ctrl, Interp, Msg, NO_CALL_SITE};

/// How to run a program.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The path the program was run with; traps print it.
    pub path: String,
    /// Program arguments (what `args()` returns).
    pub args: Vec<String>,
    /// Stdin contents; `None` reads the real stdin when the program asks.
    pub stdin: Option<String>,
    /// Turn wrong drops into errors (exit code 3).
    pub check_drops: bool,
    /// Count blocks that were never shared (see [`OracleReport`]).
    pub oracle: bool,
    /// How deep calls may nest before the trap `stack overflow`; `None`
    /// takes it from `SSPUR_STACK_MB` ([`rt::Settings::max_call_depth`]),
    /// about ten million calls by default.
    pub max_depth: Option<usize>,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// 0, 101 for a trap, 3 for a drop-check violation or internal error.
    pub exit_code: i32,
    /// Blocks freed by drop forms (the native runtime's "freed at last use").
    pub drops_freed: u64,
    /// Cells whose block a constructor reused (the native "reused in place").
    pub reused: u64,
    pub oracle: Option<OracleReport>,
}

/// The kinds of heap block the oracle counts apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Records, tuples, sum values with fields, `Some`.
    Cell,
    Closure,
    /// List buffers.
    List,
    /// String blocks.
    Str,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Cell, Kind::Closure, Kind::List, Kind::Str];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Cell => "cells",
            Kind::Closure => "closures",
            Kind::List => "lists",
            Kind::Str => "strings",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// What the oracle measured for one kind of block: blocks allocated,
/// blocks to which no second reference was ever made, and blocks that
/// drop forms freed or constructors reused in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindReport {
    pub allocated: u64,
    pub never_shared: u64,
    pub freed: u64,
    pub reused: u64,
}

impl KindReport {
    /// Blocks the program's drop and reuse forms ended early.
    pub fn ended(&self) -> u64 {
        self.freed + self.reused
    }
}

impl fmt::Display for KindReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} allocated, {} never shared, {} freed by drops, {} reused",
            self.allocated, self.never_shared, self.freed, self.reused
        )?;
        if self.never_shared > 0 {
            let pct = 100.0 * self.ended() as f64 / self.never_shared as f64;
            write!(f, " ({pct:.1}% of never shared)")
        } else {
            write!(f, " (nothing to free)")
        }
    }
}

/// What the oracle measured, per kind of block (see [`KindReport`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OracleReport {
    pub kinds: [KindReport; 4],
}

impl OracleReport {
    pub fn kind(&self, k: Kind) -> &KindReport {
        &self.kinds[k.index()]
    }

    /// All kinds together.
    pub fn total(&self) -> KindReport {
        let mut t = KindReport::default();
        for k in &self.kinds {
            t.allocated += k.allocated;
            t.never_shared += k.never_shared;
            t.freed += k.freed;
            t.reused += k.reused;
        }
        t
    }
}

impl fmt::Display for OracleReport {
    /// A line for all blocks, then one per kind.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oracle: {}", self.total())?;
        for k in Kind::ALL {
            write!(f, "\noracle {}: {}", k.name(), self.kind(k))?;
        }
        Ok(())
    }
}

/// Exit code of a drop-check violation or an internal error.
pub const EXIT_DROP_CHECK: i32 = 3;
/// Exit code of a trap.
pub const EXIT_TRAP: i32 = 101;

/// Native stack reserved per allowed call: an optimised build takes about
/// 740 bytes for a small function's call, so twice that leaves room for
/// larger frames. Only the pages a program recurses through are touched.
const STACK_PER_CALL: usize = 1600;

/// Virtual stacks to try for the interpreter thread, largest first: room
/// for `depth` calls (at most 16 GiB), then smaller ones where the system
/// refuses the reservation; the depth check adapts to the size obtained.
fn stack_sizes(depth: usize) -> Vec<usize> {
    let first = depth
        .saturating_mul(STACK_PER_CALL)
        .clamp(64 << 20, 16 << 30);
    rt::launch::stacks_to_try(first, &[8 << 30, 1 << 30, 256 << 20, 64 << 20])
}

/// Runs `main` of `program`, writing the program's output to `stdout` and
/// `stderr`.
pub fn run(
    program: &ir::Program,
    opts: &Options,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Outcome {
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    rt::config::share_malloc_arenas_under_address_limit();
    std::thread::scope(|scope| {
        // Fall back to smaller stacks where the system refuses the large
        // reservation; the depth check adapts to the size obtained.
        let mut worker = None;
        let mut last_err = None;
        let depth = opts.max_depth.unwrap_or_else(|| {
            rt::Settings::from_env()
                .unwrap_or(rt::Settings::DEFAULT)
                .max_call_depth()
        });
        for size in stack_sizes(depth) {
            let tx = tx.clone();
            match std::thread::Builder::new()
                .name("sspur-interp".into())
                .stack_size(size)
                .spawn_scoped(scope, move || {
                    run_on_this_thread(program, opts, tx, size, depth)
                }) {
                Ok(w) => {
                    worker = Some(w);
                    break;
                }
                Err(err) => last_err = Some(err),
            }
        }
        drop(tx);
        let Some(worker) = worker else {
            let _ = writeln!(
                stderr,
                "error: cannot start the interpreter thread: {}",
                last_err.map(|e| e.to_string()).unwrap_or_default()
            );
            return failed();
        };
        for msg in rx {
            let _ = match msg {
                Msg::Out(b) => stdout.write_all(&b),
                Msg::Err(b) => {
                    let _ = stdout.flush();
                    stderr.write_all(&b)
                }
            };
        }
        let _ = stdout.flush();
        let _ = stderr.flush();
        match worker.join() {
            Ok(outcome) => outcome,
            Err(_) => {
                let _ = writeln!(stderr, "internal error: the interpreter panicked");
                failed()
            }
        }
    })
}

/// How a frame is named in a call chain.
fn frame_name(it: &Interp, what: Active) -> String {
    match what {
        Active::Fn(f) => it.prog.items.fns[f].name.to_string(),
        Active::Lambda(owner, e) => {
            let start = it.prog.source_map(owner).expr(e).start;
            format!("lambda at {}", it.pos(start))
        }
    }
}

/// The position of a call in a call chain (`None` for `main`'s).
fn call_pos(it: &Interp, at: u32) -> Option<String> {
    (at != NO_CALL_SITE).then(|| it.pos(at))
}

/// For a `stack overflow`: how many innermost frames the chain leaves out
/// so it starts where native code's does (`rt::backtrace::overflow_skip`),
/// and where the first frame kept is defined, the position the trap names.
fn overflow_phase(it: &Interp) -> Option<(usize, u32)> {
    let keys: Vec<(String, String)> = it
        .calls
        .iter()
        .rev()
        .take(rt::backtrace::CYCLE_WINDOW)
        .map(|&(what, at)| (frame_name(it, what), call_pos(it, at).unwrap_or_default()))
        .collect();
    let skip = rt::backtrace::overflow_skip(&keys);
    let &(what, _) = it.calls.iter().rev().nth(skip)?;
    let def = match what {
        Active::Fn(f) => it.prog.fn_span(f).start,
        Active::Lambda(owner, e) => it.prog.source_map(owner).expr(e).start,
    };
    Some((skip, def))
}

/// The call chain of a trap (`rt::backtrace`, the lines native code
/// prints): the calls active at the trap, innermost first, without the
/// `skip` innermost.
fn call_chain(it: &Interp, skip: usize, text: &mut String) {
    let mut out = Vec::new();
    let shown = it.calls.iter().rev().skip(skip).take(rt::backtrace::SHOWN);
    for &(what, at) in shown {
        let name = frame_name(it, what);
        let at = call_pos(it, at);
        rt::backtrace::write_frame(
            &mut |b| out.extend_from_slice(b),
            name.as_bytes(),
            at.as_deref().map(str::as_bytes),
        );
    }
    let rest = it
        .calls
        .len()
        .saturating_sub(skip)
        .saturating_sub(rt::backtrace::SHOWN);
    rt::backtrace::write_more(&mut |b| out.extend_from_slice(b), rest);
    text.push_str(&String::from_utf8_lossy(&out));
}

fn failed() -> Outcome {
    Outcome {
        exit_code: EXIT_DROP_CHECK,
        drops_freed: 0,
        reused: 0,
        oracle: None,
    }
}

fn run_on_this_thread(
    program: &ir::Program,
    opts: &Options,
    tx: std::sync::mpsc::Sender<Msg>,
    stack_size: usize,
    max_depth: usize,
) -> Outcome {
    let mut it = Interp {
        prog: program,
        path: &opts.path,
        args: &opts.args,
        stdin: opts.stdin.as_deref(),
        stdin_taken: false,
        check: opts.check_drops,
        out: Vec::new(),
        tx,
        depth: 0,
        calls: Vec::new(),
        stack_base: eval::stack_pointer(),
        stack_size,
        max_depth,
        counts: Default::default(),
        lending: opts.oracle,
        reuse: None,
        effects: None,
        unbuilt_tuples: Default::default(),
    };
    let exit_code = match program.main() {
        None => {
            it.write_err("error: the program has no `main` function\n".into());
            EXIT_DROP_CHECK
        }
        Some(main) => match it.call_fn(main, Vec::new(), NO_CALL_SITE) {
            Ok(_) => 0,
            Err(c) => match *c {
                Ctrl::Trap(msg, offset) => {
                    it.flush_out();
                    let (skip, offset) = if msg == eval::STACK_OVERFLOW {
                        overflow_phase(&it).unwrap_or((0, offset))
                    } else {
                        (0, offset)
                    };
                    let mut text = format!("trap: {msg} at {}\n", it.pos(offset));
                    let on = rt::Settings::from_env().map_or(true, |s| s.backtrace);
                    if on {
                        call_chain(&it, skip, &mut text);
                    }
                    it.write_err(text);
                    EXIT_TRAP
                }
                Ctrl::Fatal(msg) => {
                    it.flush_out();
                    it.write_err(format!("{msg}\n"));
                    EXIT_DROP_CHECK
                }
                Ctrl::Return(_) => 0,
                Ctrl::Exit(code) => code,
                Ctrl::Break | Ctrl::Continue => {
                    it.flush_out();
                    it.write_err("internal error: break or continue outside a loop\n".into());
                    EXIT_DROP_CHECK
                }
            },
        },
    };
    it.flush_out();
    let (cells, closures) = value::blocks_made();
    it.counts[Kind::Cell.index()].allocated = cells;
    it.counts[Kind::Closure.index()].allocated = closures;
    Outcome {
        exit_code,
        drops_freed: it.counts.iter().map(|c| c.freed).sum(),
        reused: it.counts.iter().map(|c| c.reused).sum(),
        oracle: opts.oracle.then(|| OracleReport {
            kinds: it.counts.map(|c| KindReport {
                allocated: c.allocated,
                never_shared: c.allocated - c.shared,
                freed: c.freed,
                reused: c.reused,
            }),
        }),
    }
}
