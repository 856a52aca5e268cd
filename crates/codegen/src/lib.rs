//! Sspur native backend: the typed IR with the ownership pass's drops,
//! lowered to Cranelift IR and JIT-compiled in process.
//!
//! - [`layout`]: how values are laid out in words and memory, and the type
//!   table the runtime's helpers read.
//! - [`rtfns`]: the runtime entry points generated code calls.
//! - [`lower`]: IR to Cranelift IR, one function or lambda at a time.
//! - [`overflow`]: turning a fault in the program thread's stack guard into
//!   the `stack overflow` trap.
//! - `parallel`: Cranelift's compilation of the lowered functions on one
//!   worker thread per core; the module is linked on the calling thread.
//!
//! The program runs on its own thread with a 1 GiB stack; the runtime is
//! initialised on that thread, so the collector scans the right stack.
//!
//! Why the collector sees every live value: generated code keeps values
//! only in SSA values, which live in registers or spill slots of the
//! program stack; across a call (every allocation is a call) a live value is
//! in a callee-saved register or a spill slot, and the collector scans the
//! stack after spilling the callee-saved registers. Pointers may point into
//! a block (views, list elements) but never one past its end: empty lists
//! and strings are `(0, 0)`. Runtime helpers keep their pointer arguments
//! live across their own allocations.
//!
//! Drops: exactly the IR's `Drop` statements, `OldValue` frees and
//! `PutOwnedKey`, each calling the runtime's counted free with the drop's
//! site; none under `SSPUR_MEM=gc`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod callsites;
pub mod layout;
pub mod lower;
mod overflow;
mod parallel;
pub mod rtfns;

use callsites::Code;
use cranelift_codegen::ir::{Function, InstBuilder, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{DataDescription, FuncId, Linkage, Module};
use ir::{ExprId, FnId, Program};
use lower::{signature, Lowerer, Shared};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How to run a program natively.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The path the program was run with (trap locations print it).
    pub path: String,
    /// The program's arguments (what `args()` returns).
    pub args: Vec<String>,
    /// Print the backend's compile times to stderr.
    pub time: bool,
    /// The ownership pass's names of allocation sites, by (function,
    /// expression, the tuples in its list) as `ownership::alloc_sites`
    /// gives them; those sites are named with its wording in
    /// SSPUR_GC_STATS=sites.
    pub site_names: HashMap<(FnId, ExprId, bool), String>,
}

/// Stacks of the program thread, largest first: `SSPUR_STACK_MB` (1 GiB
/// by default) plus a sixteenth for the runtime's own frames, then smaller
/// ones where the system refuses that reservation (under `ulimit -v`); the
/// overflow trap comes from the guard page, whatever the size.
fn program_stacks(stack_bytes: usize) -> Vec<usize> {
    let first = stack_bytes + stack_bytes / 16;
    std::iter::once(first)
        .chain(
            [256 << 20, 64 << 20, 16 << 20]
                .into_iter()
                .filter(|s| *s < first),
        )
        .collect()
}

/// Where `emit clif` pretends static data lives, so its output does not
/// depend on the addresses of one process.
const FAKE_STATIC_BASE: u64 = 0x5000_0000;

/// A compiled program, ready to run.
struct Compiled {
    module: JITModule,
    main: Option<FuncId>,
    /// The trampoline that calls `main` (the outermost frame of a call
    /// chain); absent for `emit clif`.
    entry: Option<FuncId>,
    /// Sspur calls and functions, for trap call chains.
    calls: callsites::Calls,
    /// Cranelift function, the Sspur function it belongs to (for stack
    /// overflow positions), and its code size.
    funcs: Vec<(FuncId, ir::FnId, u32)>,
    types: Vec<rt::helpers::types::TyDesc>,
    sites: Vec<lower::Site>,
    clif: String,
    times: Vec<(&'static str, Duration)>,
}

/// A function to lower into, named by its module id.
fn new_func(id: FuncId, sig: cranelift_codegen::ir::Signature) -> Function {
    Function::with_name_signature(UserFuncName::user(0, id.as_u32()), sig)
}

/// Where lowered functions go besides the pool: the compiled functions'
/// table and, for `emit clif`, the text.
struct Out<'a> {
    funcs: &'a mut Vec<(FuncId, ir::FnId, u32)>,
    clif: Option<&'a mut String>,
}

impl Out<'_> {
    /// Hands a lowered function to the workers (after printing it, for
    /// `emit clif`).
    fn submit(
        &mut self,
        sh: &mut Shared,
        pool: &mut parallel::Pool<'_>,
        func: Function,
        id: FuncId,
        owner: ir::FnId,
        code: Code,
    ) -> Result<(), String> {
        if let Some(clif) = self.clif.as_deref_mut() {
            let name = sh
                .module
                .declarations()
                .get_function_decl(id)
                .linkage_name(id)
                .into_owned();
            clif.push_str(&format!("; {name}\n{}\n", func.display()));
        }
        let mut defined = parallel::Defined {
            module: &mut *sh.module,
            funcs: &mut *self.funcs,
            calls: &mut sh.calls,
        };
        pool.submit(&mut defined, id, owner, code, func)
    }
}

fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    let mut fb = settings::builder();
    let set = |fb: &mut settings::Builder, k: &str, v: &str| {
        fb.set(k, v).map_err(|e| format!("{k}: {e}"))
    };
    set(&mut fb, "opt_level", "speed")?;
    // The IR verifier took about a third of Cranelift's instructions on
    // generated programs; debug builds (every test) keep it, so a lowering
    // bug still fails there.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut fb, "enable_verifier", verify)?;
    set(&mut fb, "preserve_frame_pointers", "true")?;
    set(&mut fb, "use_colocated_libcalls", "false")?;
    set(&mut fb, "is_pic", "false")?;
    set(&mut fb, "enable_probestack", "true")?;
    set(&mut fb, "probestack_strategy", "inline")?;
    let builder = cranelift_native::builder().map_err(|e| format!("host not supported: {e}"))?;
    builder
        .finish(settings::Flags::new(fb))
        .map_err(|e| e.to_string())
}

fn compile(
    program: &Program,
    path: &str,
    drops: bool,
    want_clif: bool,
    workers: usize,
) -> Result<Compiled, String> {
    let t0 = Instant::now();
    let isa = isa()?;
    let worker_isa = isa.clone();
    let call_conv = isa.default_call_conv();
    let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    let all = rtfns::all();
    for (_, (name, addr, _, _)) in &all {
        jb.symbol(*name, *addr);
    }
    let mut module = JITModule::new(jb);
    let mut rtmap = HashMap::new();
    for (f, (name, _, params, ret)) in &all {
        let mut sig = module.make_signature();
        for _ in 0..*params {
            sig.params.push(cranelift_codegen::ir::AbiParam::new(
                cranelift_codegen::ir::types::I64,
            ));
        }
        let n = match ret {
            rtfns::Ret::None => 0,
            rtfns::Ret::One => 1,
            rtfns::Ret::Pair => 2,
        };
        for _ in 0..n {
            sig.returns.push(cranelift_codegen::ir::AbiParam::new(
                cranelift_codegen::ir::types::I64,
            ));
        }
        let id = module
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| e.to_string())?;
        rtmap.insert(*f, (id, *params, *ret));
    }
    let mut fns = Vec::new();
    for (fid, sig) in program.items.fns.iter() {
        let ptys: Vec<ir::Ty> = sig.params.iter().map(|p| p.1.clone()).collect();
        let s = signature(call_conv, false, &ptys, &sig.ret);
        let name = format!("fn{}_{}", fid.into_raw().into_u32(), sig.name);
        fns.push(
            module
                .declare_function(&name, Linkage::Local, &s)
                .map_err(|e| e.to_string())?,
        );
    }
    // Static tag words: nullary constructor `t` of any sum is `&tags[t]`.
    let max_tag = program
        .items
        .types
        .iter()
        .map(|(_, t)| match &t.kind {
            ir::TypeDefKind::Sum { variants } => variants.len(),
            ir::TypeDefKind::Record { .. } => 0,
        })
        .max()
        .unwrap_or(0)
        .max(2);
    let tags: &'static [u64] =
        Box::leak((0..max_tag as u64).collect::<Vec<_>>().into_boxed_slice());
    let mut sh = Shared {
        module: &mut module,
        call_conv,
        rt: rtmap,
        fns: fns.clone(),
        fn_values: HashMap::new(),
        wrappers: Vec::new(),
        lambdas: Vec::new(),
        lambda_count: 0,
        static_lambdas: Vec::new(),
        types: Default::default(),
        statics: HashMap::new(),
        tags: if want_clif {
            FAKE_STATIC_BASE
        } else {
            tags.as_ptr() as u64
        },
        sites: Vec::new(),
        path: path.to_string(),
        drops,
        fake_statics: want_clif,
        calls: callsites::Calls {
            on: !want_clif,
            ..Default::default()
        },
        effects: ir::effects::Effects::of(program),
        plans: HashMap::new(),
    };
    let mut fctx = cranelift_frontend::FunctionBuilderContext::new();
    let mut funcs = Vec::new();
    let mut clif = String::new();
    let mut lower_time = Duration::ZERO;
    let mut entry = None;
    let mut wrappers = Vec::new();
    let started = Instant::now();
    let mut out = Out {
        funcs: &mut funcs,
        clif: want_clif.then_some(&mut clif),
    };
    parallel::with_pool(&*worker_isa, workers, |pool| {
        for (i, (fid, sig)) in program.items.fns.iter().enumerate() {
            let t = Instant::now();
            let ptys: Vec<ir::Ty> = sig.params.iter().map(|p| p.1.clone()).collect();
            let mut func = new_func(fns[i], signature(call_conv, false, &ptys, &sig.ret));
            let b = cranelift_frontend::FunctionBuilder::new(&mut func, &mut fctx);
            Lowerer::new(&mut sh, program, fid, b, &sig.ret).function();
            lower_time += t.elapsed();
            out.submit(&mut sh, pool, func, fns[i], fid, Code::Fn(fid))?;
            // Lambdas found so far (and the lambdas inside them).
            while let Some(l) = sh.lambdas.pop() {
                let t = Instant::now();
                let body = program.body(l.owner);
                let (ps, r) = lower::lambda_sig(body, l.expr);
                let mut func = new_func(l.id, signature(call_conv, true, &ps, &r));
                let b = cranelift_frontend::FunctionBuilder::new(&mut func, &mut fctx);
                Lowerer::new(&mut sh, program, l.owner, b, &r).lambda(l.expr);
                lower_time += t.elapsed();
                let code = Code::Lambda(l.owner, l.expr);
                out.submit(&mut sh, pool, func, l.id, l.owner, code)?;
            }
        }
        wrappers = std::mem::take(&mut sh.wrappers);
        for &(f, wid) in &wrappers {
            let t = Instant::now();
            let sig = &program.items.fns[f];
            let ptys: Vec<ir::Ty> = sig.params.iter().map(|p| p.1.clone()).collect();
            let mut func = new_func(wid, signature(call_conv, true, &ptys, &sig.ret));
            let b = cranelift_frontend::FunctionBuilder::new(&mut func, &mut fctx);
            let target = sh.fns[f.into_raw().into_u32() as usize];
            lower::wrapper(&mut sh, b, target);
            lower_time += t.elapsed();
            out.submit(&mut sh, pool, func, wid, f, Code::Wrapper)?;
        }
        // The entry trampoline `() -> main()`: main's frame record then
        // holds a known return address, where a call chain ends.
        let main_id = program
            .main()
            .map(|m| (m, fns[m.into_raw().into_u32() as usize]));
        let main_sig = main_id
            .map(|(_, id)| {
                sh.module
                    .declarations()
                    .get_function_decl(id)
                    .signature
                    .clone()
            })
            .filter(|s| s.params.is_empty());
        if let (Some((m, main_id)), Some(_), false) = (main_id, main_sig, want_clif) {
            let mut sig = sh.module.make_signature();
            sig.returns.push(cranelift_codegen::ir::AbiParam::new(
                cranelift_codegen::ir::types::I64,
            ));
            let id = sh
                .module
                .declare_function("sspur_entry", Linkage::Local, &sig)
                .map_err(|e| e.to_string())?;
            let t = Instant::now();
            let mut func = new_func(id, sig);
            let mut b = cranelift_frontend::FunctionBuilder::new(&mut func, &mut fctx);
            let block = b.create_block();
            b.switch_to_block(block);
            let r = sh.module.declare_func_in_func(main_id, b.func);
            let call = b.ins().call(r, &[]);
            let first = b.inst_results(call).first().copied();
            let v = match first {
                Some(v) => v,
                None => b.ins().iconst(cranelift_codegen::ir::types::I64, 0),
            };
            b.ins().return_(&[v]);
            b.seal_all_blocks();
            b.finalize(sh.module.target_config());
            lower_time += t.elapsed();
            out.submit(&mut sh, pool, func, id, m, Code::Entry)?;
            entry = Some(id);
        }
        pool.finish(&mut parallel::Defined {
            module: &mut *sh.module,
            funcs: &mut *out.funcs,
            calls: &mut sh.calls,
        })
    })?;
    // Wall time of the functions' compilation not spent lowering them.
    let emit_time = started.elapsed().saturating_sub(lower_time);
    for (f, did) in sh.fn_values.clone() {
        let Some(&(_, wid)) = wrappers.iter().find(|(g, _)| *g == f) else {
            continue;
        };
        let mut dd = DataDescription::new();
        dd.define_zeroinit(8);
        let r = sh.module.declare_func_in_data(wid, &mut dd);
        dd.write_function_addr(0, r);
        sh.module.define_data(did, &dd).map_err(|e| e.to_string())?;
    }
    for (did, fid) in std::mem::take(&mut sh.static_lambdas) {
        let mut dd = DataDescription::new();
        dd.define_zeroinit(8);
        let r = sh.module.declare_func_in_data(fid, &mut dd);
        dd.write_function_addr(0, r);
        sh.module.define_data(did, &dd).map_err(|e| e.to_string())?;
    }
    if want_clif {
        clif = name_functions(&clif, sh.module);
    }
    let types = std::mem::take(&mut sh.types.descs);
    let sites = std::mem::take(&mut sh.sites);
    let calls = std::mem::take(&mut sh.calls);
    let t = Instant::now();
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let finalize = t.elapsed();
    let main = program
        .main()
        .map(|m| fns[m.into_raw().into_u32() as usize]);
    let total = t0.elapsed();
    Ok(Compiled {
        module,
        main,
        entry,
        calls,
        funcs,
        types,
        sites,
        clif,
        times: vec![
            ("codegen lower", lower_time),
            ("codegen emit", emit_time),
            ("codegen link", finalize),
            ("codegen total", total),
        ],
    })
}

/// Replaces Cranelift's numeric function names (`u0:N`) with the declared
/// symbol names (`%fn2_main`, `%sspur_drop`), highest numbers first so
/// `u0:1` never matches inside `u0:12`.
fn name_functions(text: &str, module: &JITModule) -> String {
    let mut decls: Vec<(u32, String)> = module
        .declarations()
        .get_functions()
        .map(|(id, d)| (id.as_u32(), d.linkage_name(id).into_owned()))
        .collect();
    decls.sort_by_key(|d| std::cmp::Reverse(d.0));
    let mut out = text.to_string();
    for (id, name) in decls {
        out = out.replace(&format!("u0:{id}"), &format!("%{name}"));
    }
    out
}

/// Site names for the runtime's reports: `path:line:col what`, with the
/// ownership pass's wording (`LINE:COL what` entries of `described`) where
/// it names the same position.
fn site_names(sites: &[lower::Site], named: &HashMap<(FnId, ExprId, bool), String>) -> Vec<String> {
    sites
        .iter()
        .map(|s| {
            let what = s.key.and_then(|k| named.get(&k)).unwrap_or(&s.what);
            format!("{} {what}", s.loc())
        })
        .collect()
}

/// The Cranelift IR of every function of the program, as text.
pub fn emit_clif(program: &Program) -> String {
    match compile(program, "", true, true, parallel::workers()) {
        Ok(c) => c.clif,
        Err(e) => format!("; error: {e}\n"),
    }
}

/// JIT-compiles the program, runs `main` on a thread with a 1 GiB stack
/// and returns its exit code (0). Traps exit the process with 101 from
/// inside the runtime. One program per process: the runtime's heap and
/// settings are process-wide and its collector scans the first program
/// thread's stack, so a second call reports an error instead of running.
/// The program's IR is freed before `main` starts when `program` holds the
/// last reference to it.
pub fn run(program: std::sync::Arc<Program>, opts: &Options) -> i32 {
    static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if STARTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        eprintln!("sspur: the native runtime runs one program per process");
        return 1;
    }
    // Read the mode without initialising the runtime here: it must be
    // initialised on the program thread, whose stack the collector scans.
    let settings = rt::Settings::from_env().unwrap_or(rt::Settings::DEFAULT);
    let drops = settings.mem != rt::MemMode::Gc;
    rt::config::share_malloc_arenas_under_address_limit();
    let compiled = match compile(&program, &opts.path, drops, false, parallel::workers()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sspur: native code generation failed: {e}");
            return 1;
        }
    };
    if opts.time {
        for (what, d) in &compiled.times {
            eprintln!("time: {what} {:.3} ms", d.as_secs_f64() * 1e3);
        }
        if let Some(m) = stdx::memory() {
            eprintln!("mem: codegen {m}");
        }
    }
    let Some(main) = compiled.main else {
        eprintln!("sspur: the program has no main function");
        return 1;
    };
    let entry = compiled
        .module
        .get_finalized_function(compiled.entry.unwrap_or(main)) as usize;
    let chains = compiled
        .entry
        .map(|e| {
            compiled
                .calls
                .table(&compiled.module, &program, &opts.path, e)
        })
        .map(Box::new);
    let ranges: Vec<(usize, usize, String)> = compiled
        .funcs
        .iter()
        .map(|(id, owner, size)| {
            let start = compiled.module.get_finalized_function(*id) as usize;
            let (line, col) = program.line_col(program.fn_span(*owner).start);
            (
                start,
                start + *size as usize,
                format!("{}:{line}:{col}", opts.path),
            )
        })
        .collect();
    rt::helpers::types::install(compiled.types.clone());
    rt::helpers::text::set_args(opts.args.clone());
    rt::helpers::set_site_locs(compiled.sites.iter().map(|s| s.loc()).collect());
    let names = site_names(&compiled.sites, &opts.site_names);
    let main_fn = program
        .main()
        .map(|m| program.fn_span(m).start)
        .unwrap_or(0);
    let (l, c) = program.line_col(main_fn);
    let fallback = format!("{}:{l}:{c}", opts.path);
    // Everything below needs only the code and the tables made from the
    // IR: free the IR and give the compiler's freed memory back to the
    // system, so it does not count against the program's footprint.
    drop(program);
    release_freed_memory();
    if opts.time {
        if let Some(m) = stdx::memory() {
            eprintln!("mem: before main {m}");
        }
    }
    let body = move || {
        rt::sspur_rt_init();
        rt::set_site_names(names);
        overflow::install(ranges, fallback);
        if let Some(t) = chains {
            rt::backtrace::install(t);
        }
        // SAFETY: `entry` is the finalized code of `main`, which takes no
        // arguments and returns one word.
        let f: extern "C" fn() -> i64 = unsafe { std::mem::transmute(entry) };
        f();
        rt::sspur_rt_finish();
    };
    // A refused spawn drops its closure, so the body waits in a shared slot
    // that the thread that does start takes it from.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(body)));
    let mut thread = None;
    let mut refused = None;
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
    let code = match thread.map(|t| t.join()) {
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
    };
    // The module owns the code; keep it alive until the thread is done.
    drop(compiled);
    code
}

/// Returns the allocator's free pages to the system (glibc keeps them
/// otherwise, and a compile of a large program frees hundreds of MB).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What trap positions and call chains depend on: every compiled
    /// function's id, owner and size, its calls' return offsets and marks,
    /// and the marked calls.
    type Layout = (
        Vec<(FuncId, FnId, u32)>,
        Vec<(FuncId, Code, u32, Vec<callsites::CallRet>)>,
        Vec<(u32, Option<FuncId>)>,
    );

    fn layout(program: &Program, workers: usize) -> Layout {
        let c = compile(program, "t.ssp", true, false, workers).expect("compiles");
        (c.funcs, c.calls.funcs, c.calls.list)
    }

    /// Workers finish in any order, but the module gets the functions in
    /// the order they were lowered, and each function's code does not
    /// depend on the thread that compiled it.
    #[test]
    fn parallel_code_is_the_serial_code() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("tests/programs")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ssp"))
            .collect();
        files.sort();
        let mut compared = 0;
        for file in files {
            let src = std::fs::read_to_string(&file).expect("readable");
            let Ok(checked) = check::check_source(&src) else {
                continue;
            };
            let program = ownership::analyze(&checked).program;
            let serial = layout(&program, 1);
            assert!(!serial.0.is_empty(), "{}: nothing compiled", file.display());
            assert_eq!(serial, layout(&program, 3), "{}", file.display());
            // No worker at all (the system refused every thread): the
            // lowering thread compiles each function itself.
            assert_eq!(serial, layout(&program, 0), "{}", file.display());
            compared += 1;
        }
        assert!(compared > 50, "only {compared} programs compared");
    }
}
