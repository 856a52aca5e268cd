//! Compiling functions on all cores: the main thread lowers each function
//! to Cranelift IR (lowering shares declarations, statics and the type
//! table, so it stays on one thread) and hands it to worker threads, each
//! with its own `Context`, which run Cranelift's compilation (most of the
//! backend's time). The main thread defines the finished code in the
//! module in the order the functions were lowered, so the module's layout
//! does not depend on which worker finished first; finalization stays on
//! the main thread.

use crate::callsites::{self, CallRet, Code};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;
use cranelift_module::{FuncId, Module, ModuleReloc};
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

/// Stacks of a worker, largest first: Cranelift's passes iterate, but a
/// function as large as the parser allows should not depend on that. The
/// smaller one is for where the system refuses the first (`ulimit -v`);
/// where it refuses both, the main thread compiles every function itself.
const WORKER_STACKS: [usize; 2] = [64 << 20, 8 << 20];

/// A lowered function on its way to a worker.
struct Job {
    index: usize,
    id: FuncId,
    func: Function,
    /// Sspur calls marked so far (every mark in `func` is below).
    marks: usize,
}

/// A compiled function on its way back.
struct Piece {
    alignment: u64,
    bytes: Vec<u8>,
    relocs: Vec<ModuleReloc>,
    size: u32,
    calls: Vec<CallRet>,
}

/// The main thread's side of a compilation in progress.
pub(crate) struct Pool<'a> {
    jobs: Option<SyncSender<Job>>,
    /// No worker could start: the main thread compiles each job as it is
    /// submitted.
    inline: Option<Worker<'a>>,
    done: Receiver<(usize, Result<Piece, String>)>,
    /// What each job is, by index: its id, owner and kind.
    meta: Vec<(FuncId, ir::FnId, Code)>,
    /// Finished jobs not yet defined (an earlier one is still running).
    waiting: BTreeMap<usize, Result<Piece, String>>,
    next: usize,
}

/// The number of worker threads: one per core.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `lower` with a pool of up to `n` workers compiling what it
/// submits (none started, or `n` = 0: `lower`'s thread compiles each
/// function as it is submitted); the workers stop when `lower` returns.
pub(crate) fn with_pool<R>(
    isa: &dyn TargetIsa,
    n: usize,
    lower: impl FnOnce(&mut Pool) -> Result<R, String>,
) -> Result<R, String> {
    let (jobs_tx, jobs_rx) = mpsc::sync_channel::<Job>(4 * n.max(1));
    let (done_tx, done_rx) = mpsc::channel();
    // Shared by the workers only, so a send fails (instead of waiting)
    // once every worker is gone.
    let jobs_rx = Arc::new(Mutex::new(jobs_rx));
    std::thread::scope(|scope| {
        let mut started = 0;
        'workers: for i in 0..n {
            for size in WORKER_STACKS {
                let jobs = jobs_rx.clone();
                let done = done_tx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("sspur-codegen-{i}"))
                    .stack_size(size)
                    .spawn_scoped(scope, move || {
                        let mut w = Worker::new(isa);
                        w.serve(&jobs, done)
                    });
                if spawned.is_ok() {
                    started += 1;
                    continue 'workers;
                }
            }
            // The system refuses threads now: go on with those running.
            break;
        }
        drop(jobs_rx);
        drop(done_tx);
        let mut pool = Pool {
            jobs: (started > 0).then_some(jobs_tx),
            inline: (started == 0).then(|| Worker::new(isa)),
            done: done_rx,
            meta: Vec::new(),
            waiting: BTreeMap::new(),
            next: 0,
        };
        // Returning (also early, with an error) drops the job sender, so
        // the workers finish their current job and stop.
        lower(&mut pool)
    })
}

/// What compiles jobs: a Cranelift context of its own.
pub(crate) struct Worker<'a> {
    isa: &'a dyn TargetIsa,
    ctx: Context,
    ctrl: ControlPlane,
}

impl<'a> Worker<'a> {
    fn new(isa: &'a dyn TargetIsa) -> Worker<'a> {
        Worker {
            isa,
            ctx: Context::new(),
            ctrl: ControlPlane::default(),
        }
    }

    /// Compiles jobs until the main thread stops sending them.
    fn serve(&mut self, jobs: &Mutex<Receiver<Job>>, done: Sender<(usize, Result<Piece, String>)>) {
        loop {
            let job = match jobs.lock() {
                Ok(rx) => rx.recv(),
                Err(_) => return,
            };
            let Ok(job) = job else { return };
            let index = job.index;
            let piece = self.compile(job);
            if done.send((index, piece)).is_err() {
                return;
            }
        }
    }

    fn compile(&mut self, job: Job) -> Result<Piece, String> {
        let ctx = &mut self.ctx;
        ctx.func = job.func;
        let piece = match ctx.compile(self.isa, &mut self.ctrl) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("Compilation({:?})", e.inner)),
        }
        .map(|()| {
            let cc = ctx.compiled_code().expect("compiled just now");
            Piece {
                alignment: u64::from(cc.buffer.alignment),
                bytes: cc.code_buffer().to_vec(),
                relocs: cc
                    .buffer
                    .relocs()
                    .iter()
                    .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, job.id))
                    .collect(),
                size: cc.code_info().total_size,
                calls: callsites::call_returns(cc, job.marks),
            }
        });
        ctx.clear();
        piece
    }
}

impl Pool<'_> {
    /// Hands `func` (the code of `id`, which belongs to `owner`) to the
    /// workers, and defines what they have finished meanwhile.
    pub(crate) fn submit(
        &mut self,
        sh: &mut Defined<'_>,
        id: FuncId,
        owner: ir::FnId,
        code: Code,
        func: Function,
    ) -> Result<(), String> {
        let index = self.meta.len();
        self.meta.push((id, owner, code));
        let job = Job {
            index,
            id,
            func,
            marks: sh.calls.list.len(),
        };
        if let Some(w) = self.inline.as_mut() {
            let piece = w.compile(job);
            self.waiting.insert(index, piece);
            return self.define_ready(sh);
        }
        let stopped = || "the codegen threads stopped".to_string();
        let tx = self.jobs.as_ref().ok_or_else(stopped)?;
        if tx.send(job).is_err() {
            return Err(stopped());
        }
        while let Ok((i, piece)) = self.done.try_recv() {
            self.waiting.insert(i, piece);
        }
        self.define_ready(sh)
    }

    /// Waits for every job and defines the rest.
    pub(crate) fn finish(&mut self, sh: &mut Defined<'_>) -> Result<(), String> {
        self.jobs = None;
        while self.next < self.meta.len() {
            match self.done.recv() {
                Ok((i, piece)) => {
                    self.waiting.insert(i, piece);
                }
                Err(_) => return Err("a codegen thread failed".into()),
            }
            self.define_ready(sh)?;
        }
        Ok(())
    }

    /// Defines finished functions in submission order.
    fn define_ready(&mut self, sh: &mut Defined<'_>) -> Result<(), String> {
        while let Some(piece) = self.waiting.remove(&self.next) {
            let (id, owner, code) = self.meta[self.next];
            let piece = piece?;
            sh.module
                .define_function_bytes(id, piece.alignment, &piece.bytes, &piece.relocs)
                .map_err(|e| format!("{e:?}"))?;
            sh.funcs.push((id, owner, piece.size));
            sh.calls.funcs.push((id, code, piece.size, piece.calls));
            self.next += 1;
        }
        Ok(())
    }
}

/// Where defined functions go: the module and the tables of compiled
/// functions (borrowed from the lowering state for each call).
pub(crate) struct Defined<'a> {
    pub module: &'a mut dyn Module,
    pub funcs: &'a mut Vec<(FuncId, ir::FnId, u32)>,
    pub calls: &'a mut callsites::Calls,
}
