//! Sspur native backend: the typed IR with the ownership pass's drops,
//! lowered to Cranelift IR and JIT-compiled in process (`run`), or written
//! as an object file for an executable (`build_object`).
//!
//! - [`layout`]: how values are laid out in words and memory, and the type
//!   table the runtime's helpers read.
//! - [`rtfns`]: the runtime entry points generated code calls.
//! - [`lower`]: IR to Cranelift IR, one function or lambda at a time.
//! - `parallel`: Cranelift's compilation of the lowered functions on one
//!   worker thread per core; the module is linked on the calling thread.
//!
//! Both lower the same way into a `cranelift_module::Module`; only where
//! static data lives differs (addresses of this process, or data objects
//! the linker places). `rt::launch` runs the program, in `sspur run` and
//! in an executable alike: on its own thread with a 1 GiB stack; the runtime is
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
mod parallel;
pub mod rtfns;

use callsites::Code;
use cranelift_codegen::ir::{Function, InstBuilder, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{DataDescription, FuncId, Linkage, Module};
use cranelift_object::{ObjectBuilder, ObjectModule};
use ir::{ExprId, FnId, Program};
use lower::{signature, Lowerer, Shared, Static};
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

/// Where `emit clif` pretends static data lives, so its output does not
/// depend on the addresses of one process.
const FAKE_STATIC_BASE: u64 = 0x5000_0000;
/// Where `emit clif` pretends the runtime's table of renewed blocks lives.
const FAKE_RENEWED: u64 = 0x5800_0000;

/// A compiled program: its functions are defined in the module.
struct Compiled {
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
    // Every function starts at the start of a cache line (2^6 bytes).
    // Cranelift asks by default only for the alignment of a function's
    // constants (8 bytes or so), so a function's hot loops sat at whatever
    // offset in a cache line the code before it (the C start files, the
    // runtime's cold paths, other functions) left them: a change of size
    // there moved viewchurn's filter loop by 32 bytes and made it 20%
    // slower with the same instructions. Aligned, where a loop falls in its
    // lines depends only on its own function's code.
    set(&mut fb, "log2_min_function_alignment", "6")?;
    let builder = cranelift_native::builder().map_err(|e| format!("host not supported: {e}"))?;
    builder
        .finish(settings::Flags::new(fb))
        .map_err(|e| e.to_string())
}

/// What a compilation is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    /// `sspur run`: code in this process, statics at its addresses.
    Jit,
    /// `sspur build`: an object file; statics are data objects.
    Object,
    /// `emit clif`: the text only, with made-up static addresses.
    Clif,
}

/// The JIT's module, with the runtime's functions at their addresses.
fn jit_module(isa: cranelift_codegen::isa::OwnedTargetIsa) -> JITModule {
    let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for (_, (name, addr, _, _)) in rtfns::all() {
        jb.symbol(name, addr);
    }
    JITModule::new(jb)
}

/// Lowers every function of the program into `module` and compiles it
/// (with `worker_isa` on the worker threads).
fn compile(
    module: &mut dyn Module,
    worker_isa: &dyn cranelift_codegen::isa::TargetIsa,
    program: &Program,
    path: &str,
    drops: bool,
    target: Target,
    workers: usize,
) -> Result<Compiled, String> {
    let want_clif = target == Target::Clif;
    let call_conv = worker_isa.default_call_conv();
    let all = rtfns::all();
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
    let tags = match target {
        Target::Clif => Static::Addr(FAKE_STATIC_BASE),
        Target::Jit => {
            let tags: &'static [u64] =
                Box::leak((0..max_tag as u64).collect::<Vec<_>>().into_boxed_slice());
            Static::Addr(tags.as_ptr() as u64)
        }
        Target::Object => {
            let id = module
                .declare_data("sspur_tags", Linkage::Local, false, false)
                .map_err(|e| e.to_string())?;
            let mut dd = DataDescription::new();
            let words: Vec<u8> = (0..max_tag as u64).flat_map(u64::to_le_bytes).collect();
            dd.define(words.into_boxed_slice());
            dd.set_align(8);
            module.define_data(id, &dd).map_err(|e| e.to_string())?;
            Static::Data(id)
        }
    };
    // The runtime's word holding its class states' address (0: no inline
    // allocation), for the inline allocation fast path.
    let alloc_classes = match target {
        Target::Clif => Static::Addr(FAKE_STATIC_BASE - 0x1000),
        Target::Jit => Static::Addr(rt::sspur_alloc_classes.as_ptr() as u64),
        Target::Object => Static::Data(
            module
                .declare_data("sspur_alloc_classes", Linkage::Import, false, false)
                .map_err(|e| e.to_string())?,
        ),
    };
    // The table of blocks reused since the collector's last pause
    // (`rt::cells::renewed`), which a reuse reads before calling the runtime.
    let renewed = match target {
        Target::Clif => Static::Addr(FAKE_RENEWED),
        Target::Jit => Static::Addr(rt::cells::renewed::address()),
        Target::Object => Static::Data(
            module
                .declare_data("sspur_renewed", Linkage::Import, true, false)
                .map_err(|e| e.to_string())?,
        ),
    };
    let mut sh = Shared {
        module,
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
        tags,
        alloc_classes,
        renewed,
        aot: target == Target::Object,
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
        upserts: HashMap::new(),
        leaves: Default::default(),
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
    parallel::with_pool(worker_isa, workers, |pool| {
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
        dd.define(Box::new([0u8; 8]));
        let r = sh.module.declare_func_in_data(wid, &mut dd);
        dd.write_function_addr(0, r);
        sh.module.define_data(did, &dd).map_err(|e| e.to_string())?;
    }
    for (did, fid) in std::mem::take(&mut sh.static_lambdas) {
        let mut dd = DataDescription::new();
        dd.define(Box::new([0u8; 8]));
        let r = sh.module.declare_func_in_data(fid, &mut dd);
        dd.write_function_addr(0, r);
        sh.module.define_data(did, &dd).map_err(|e| e.to_string())?;
    }
    if want_clif {
        clif = name_functions(&clif, &*sh.module);
    }
    let types = std::mem::take(&mut sh.types.descs);
    let sites = std::mem::take(&mut sh.sites);
    let calls = std::mem::take(&mut sh.calls);
    let main = program
        .main()
        .map(|m| fns[m.into_raw().into_u32() as usize]);
    Ok(Compiled {
        main,
        entry,
        calls,
        funcs,
        types,
        sites,
        clif,
        times: vec![("codegen lower", lower_time), ("codegen emit", emit_time)],
    })
}

/// The runtime's tables of a compiled program: functions are named by
/// their index in `c.funcs`.
fn image(c: &Compiled, program: &Program, opts: &Options) -> Result<rt::image::Image, String> {
    let main = c.main.ok_or("the program has no main function")?;
    let start = c.entry.unwrap_or(main);
    let index = c
        .funcs
        .iter()
        .position(|f| f.0 == start)
        .ok_or("main was not compiled")?;
    let main_fn = program
        .main()
        .map(|m| program.fn_span(m).start)
        .unwrap_or(0);
    let (l, col) = program.line_col(main_fn);
    Ok(rt::image::Image {
        types: c.types.clone(),
        site_locs: c.sites.iter().map(|s| s.loc()).collect(),
        site_names: site_names(&c.sites, &opts.site_names),
        funcs: c.calls.image(&c.funcs, program, &opts.path),
        main: index as u32,
        chains: c.entry.is_some(),
        fallback: format!("{}:{l}:{col}", opts.path),
    })
}

/// Replaces Cranelift's numeric function names (`u0:N`) with the declared
/// symbol names (`%fn2_main`, `%sspur_free_cell`), highest numbers first so
/// `u0:1` never matches inside `u0:12`.
fn name_functions(text: &str, module: &dyn Module) -> String {
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
    let text = isa().and_then(|isa| {
        let mut module = jit_module(isa.clone());
        compile(
            &mut module,
            &*isa,
            program,
            "",
            true,
            Target::Clif,
            parallel::workers(),
        )
    });
    match text {
        Ok(c) => c.clif,
        Err(e) => format!("; error: {e}\n"),
    }
}

/// Whether to compile drops: not under `SSPUR_MEM=gc`. Reads the mode
/// without initialising the runtime (it must be initialised on the
/// program thread, whose stack the collector scans).
fn drops_from_env() -> bool {
    rt::Settings::from_env().map_or(true, |s| s.mem != rt::MemMode::Gc)
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
    let drops = drops_from_env();
    rt::config::share_malloc_arenas_under_address_limit();
    let t0 = Instant::now();
    let jitted = isa().and_then(|isa| {
        let mut module = jit_module(isa.clone());
        let c = compile(
            &mut module,
            &*isa,
            &program,
            &opts.path,
            drops,
            Target::Jit,
            parallel::workers(),
        )?;
        Ok((module, c))
    });
    let (mut module, mut compiled) = match jitted {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sspur: native code generation failed: {e}");
            return 1;
        }
    };
    let t = Instant::now();
    if let Err(e) = module.finalize_definitions() {
        eprintln!("sspur: native code generation failed: {e}");
        return 1;
    }
    compiled.times.push(("codegen link", t.elapsed()));
    compiled.times.push(("codegen total", t0.elapsed()));
    if opts.time {
        for (what, d) in &compiled.times {
            eprintln!("time: {what} {:.3} ms", d.as_secs_f64() * 1e3);
        }
        if let Some(m) = stdx::memory() {
            eprintln!("mem: codegen {m}");
        }
    }
    let image = match image(&compiled, &program, opts) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("sspur: {e}");
            return 1;
        }
    };
    // Everything below needs only the code and the tables made from the
    // IR: free the IR and give the compiler's freed memory back to the
    // system, so it does not count against the program's footprint.
    let funcs: Vec<FuncId> = compiled.funcs.iter().map(|f| f.0).collect();
    drop(compiled);
    drop(program);
    release_freed_memory();
    if opts.time {
        if let Some(m) = stdx::memory() {
            eprintln!("mem: before main {m}");
        }
    }
    let addrs: Vec<usize> = funcs
        .iter()
        .map(|id| module.get_finalized_function(*id) as usize)
        .collect();
    let Some(prog) = image.resolve(&addrs, opts.args.clone()) else {
        eprintln!("sspur: native code generation failed: a function is missing");
        return 1;
    };
    // SAFETY: `prog.entry` is the finalized code of the entry trampoline
    // (or of `main`), which takes no arguments and returns one word, and
    // the tables describe the module's code, which `module` keeps mapped
    // until the program is done.
    let code = unsafe { rt::launch::run(prog) };
    drop(module);
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

/// Compiles the program to an object file (its bytes) that, linked with
/// the runtime's static library, is an executable doing what `run` does:
/// its `main` passes the arguments, the program's tables and the
/// addresses of its functions to `rt::image::sspur_aot_main`.
/// `SSPUR_MEM=gc` at build time compiles no drops, as for `run`.
pub fn build_object(program: &Program, opts: &Options) -> Result<Vec<u8>, String> {
    let isa = isa()?;
    let builder = ObjectBuilder::new(
        isa.clone(),
        "sspur_program",
        cranelift_module::default_libcall_names(),
    )
    .map_err(|e| e.to_string())?;
    let mut module = ObjectModule::new(builder);
    let compiled = compile(
        &mut module,
        &*isa,
        program,
        &opts.path,
        drops_from_env(),
        Target::Object,
        parallel::workers(),
    )?;
    let image = image(&compiled, program, opts)?.encode();
    let err = |e: cranelift_module::ModuleError| e.to_string();
    // The image's bytes.
    let image_id = module
        .declare_data("sspur_image", Linkage::Local, false, false)
        .map_err(err)?;
    let mut dd = DataDescription::new();
    let image_len = image.len();
    dd.define(image.into_boxed_slice());
    module.define_data(image_id, &dd).map_err(err)?;
    // The functions' addresses, in the image's order (the linker fills them
    // in).
    let table_id = module
        .declare_data("sspur_funcs", Linkage::Local, false, false)
        .map_err(err)?;
    let mut dd = DataDescription::new();
    // Zeros, not `define_zeroinit`: a zero-initialised object goes to .bss,
    // where the linker cannot write the addresses.
    dd.define(vec![0u8; 8 * compiled.funcs.len().max(1)].into_boxed_slice());
    dd.set_align(8);
    for (i, (id, _, _)) in compiled.funcs.iter().enumerate() {
        let r = module.declare_func_in_data(*id, &mut dd);
        dd.write_function_addr(8 * i as u32, r);
    }
    module.define_data(table_id, &dd).map_err(err)?;
    // `int main(int argc, char **argv)`.
    use cranelift_codegen::ir::{types, AbiParam};
    let call_conv = isa.default_call_conv();
    let mut aot_main = cranelift_codegen::ir::Signature::new(call_conv);
    aot_main.params.push(AbiParam::new(types::I32));
    for _ in 0..5 {
        aot_main.params.push(AbiParam::new(types::I64));
    }
    aot_main.returns.push(AbiParam::new(types::I32));
    let aot_main = module
        .declare_function("sspur_aot_main", Linkage::Import, &aot_main)
        .map_err(err)?;
    let mut sig = cranelift_codegen::ir::Signature::new(call_conv);
    sig.params.push(AbiParam::new(types::I32));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    let main_id = module
        .declare_function("main", Linkage::Export, &sig)
        .map_err(err)?;
    let mut ctx = module.make_context();
    ctx.func = new_func(main_id, sig);
    let mut fctx = cranelift_frontend::FunctionBuilderContext::new();
    let mut b = cranelift_frontend::FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let block = b.create_block();
    b.append_block_params_for_function_params(block);
    b.switch_to_block(block);
    let (argc, argv) = (b.block_params(block)[0], b.block_params(block)[1]);
    let gv = module.declare_data_in_func(image_id, b.func);
    let image_addr = b.ins().symbol_value(types::I64, gv);
    let len = b.ins().iconst(types::I64, image_len as i64);
    let gv = module.declare_data_in_func(table_id, b.func);
    let table_addr = b.ins().symbol_value(types::I64, gv);
    let n = b.ins().iconst(types::I64, compiled.funcs.len() as i64);
    let callee = module.declare_func_in_func(aot_main, b.func);
    let call = b
        .ins()
        .call(callee, &[argc, argv, image_addr, len, table_addr, n]);
    let code = b.inst_results(call)[0];
    b.ins().return_(&[code]);
    b.seal_all_blocks();
    b.finalize(module.target_config());
    module.define_function(main_id, &mut ctx).map_err(err)?;
    module.finish().emit().map_err(|e| e.to_string())
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
        let isa = isa().expect("host isa");
        let mut module = jit_module(isa.clone());
        let c = compile(
            &mut module,
            &*isa,
            program,
            "t.ssp",
            true,
            Target::Jit,
            workers,
        )
        .expect("compiles");
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
