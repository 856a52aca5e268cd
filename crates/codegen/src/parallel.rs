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
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module, ModuleReloc};
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

/// Stack of a worker: Cranelift's passes iterate, but a function as large
/// as the parser allows should not depend on that.
const WORKER_STACK: usize = 64 << 20;

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
pub(crate) struct Pool {
    jobs: Option<SyncSender<Job>>,
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

/// Runs `lower` with a pool of `n` workers compiling what it submits;
/// the workers stop when `lower` returns.
pub(crate) fn with_pool<R>(
    isa: &dyn TargetIsa,
    n: usize,
    lower: impl FnOnce(&mut Pool) -> Result<R, String>,
) -> Result<R, String> {
    let n = n.max(1);
    let (jobs_tx, jobs_rx) = mpsc::sync_channel::<Job>(4 * n);
    let (done_tx, done_rx) = mpsc::channel();
    // Shared by the workers only, so a send fails (instead of waiting)
    // once every worker is gone.
    let jobs_rx = Arc::new(Mutex::new(jobs_rx));
    std::thread::scope(|scope| {
        for i in 0..n {
            let jobs = jobs_rx.clone();
            let done = done_tx.clone();
            std::thread::Builder::new()
                .name(format!("sspur-codegen-{i}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || worker(isa, &jobs, done))
                .map_err(|e| format!("cannot start a codegen thread: {e}"))?;
        }
        drop(jobs_rx);
        drop(done_tx);
        let mut pool = Pool {
            jobs: Some(jobs_tx),
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

fn worker(
    isa: &dyn TargetIsa,
    jobs: &Mutex<Receiver<Job>>,
    done: Sender<(usize, Result<Piece, String>)>,
) {
    let mut ctx = Context::new();
    let mut ctrl = ControlPlane::default();
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        ctx.func = job.func;
        let piece = match ctx.compile(isa, &mut ctrl) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("Compilation({:?})", e.inner)),
        }
        .map(|()| {
            let cc = ctx.compiled_code().expect("compiled just now");
            Piece {
                alignment: cc.buffer.alignment as u64,
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
        if done.send((job.index, piece)).is_err() {
            return;
        }
    }
}

impl Pool {
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
    pub module: &'a mut JITModule,
    pub funcs: &'a mut Vec<(FuncId, ir::FnId, u32)>,
    pub calls: &'a mut callsites::Calls,
}
