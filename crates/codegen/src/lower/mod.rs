//! IR (with the ownership pass's drops) to Cranelift IR, one function or
//! lambda at a time.
//!
//! Every value is a list of 64-bit words ([`layout::words`]); F64 words are
//! bit-cast to floats only around arithmetic. An expression that diverges
//! (return, break, continue, trap) lowers to `None` and leaves the builder
//! in a terminated block, so callers stop emitting code after it.

use crate::layout::{elem_size, has_pointers, offsets, words, TypeTable};
use crate::rtfns::{Ret, F};
use ::ir::{BinOp, Body, Callee, ExprId, ExprKind, FnId, LocalId, Program, Ty};
use cranelift_codegen::ir::{
    self as clif, condcodes::IntCC, types::F64, types::I64, AbiParam, BlockArg, InstBuilder,
    MemFlagsData, Signature, StackSlotData, StackSlotKind, TrapCode, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::{DataId, FuncId, Module};
use std::collections::HashMap;

mod control;
mod expr;
mod fusion;
mod leaf;
mod method;

/// A lambda waiting to be compiled: its function, the body it lives in,
/// and its expression.
pub struct PendingLambda {
    pub id: FuncId,
    pub owner: FnId,
    pub expr: ExprId,
}

/// State shared by all functions of one compilation.
pub struct Shared<'m> {
    /// The JIT's module, or the object file's (`sspur build`).
    pub module: &'m mut dyn Module,
    pub call_conv: cranelift_codegen::isa::CallConv,
    pub rt: HashMap<F, (FuncId, usize, Ret)>,
    /// Cranelift ids of the program's functions, indexed like `items.fns`.
    pub fns: Vec<FuncId>,
    /// Static closures `[code]` for functions used as values.
    pub fn_values: HashMap<FnId, DataId>,
    /// Wrappers `(env, args..)` to generate for those closures.
    pub wrappers: Vec<(FnId, FuncId)>,
    pub lambdas: Vec<PendingLambda>,
    pub lambda_count: usize,
    /// Static closures `[code]` of lambdas that capture nothing (no block
    /// is allocated for them), with their lambda's function.
    pub static_lambdas: Vec<(DataId, FuncId)>,
    pub types: TypeTable,
    /// Static bytes (literals, locations), interned; they outlive the run.
    pub statics: HashMap<Vec<u8>, Static>,
    /// Static words `[0, 1, 2, ..]`: nullary constructor `t` is `&tags[t]`.
    pub tags: Static,
    /// The runtime's `sspur_alloc_classes` word (see `Lower::alloc`).
    pub alloc_classes: Static,
    /// The runtime's table of blocks reused since the collector's last
    /// pause (`rt::cells::renewed`).
    pub renewed: Static,
    /// Whether statics are data objects of the module (an object file:
    /// the linker places them) rather than addresses of this process.
    pub aot: bool,
    /// Allocation sites, site id `i + 1` at index `i`.
    pub sites: Vec<Site>,
    pub path: String,
    /// Whether to compile drops (false under SSPUR_MEM=gc).
    pub drops: bool,
    /// For printing only: static data gets stable made-up addresses.
    pub fake_statics: bool,
    /// Sspur call positions, for trap call chains.
    pub calls: crate::callsites::Calls,
    /// What each function may do besides computing (for fusion).
    pub effects: ::ir::effects::Effects,
    /// Each body's fusion plan, made once for it and its lambdas.
    pub plans: HashMap<FnId, std::rc::Rc<::ir::fusion::Plan>>,
    /// Each body's upsert plan, made once for it and its lambdas.
    pub upserts: HashMap<FnId, std::rc::Rc<::ir::upsert::Plan>>,
    /// Which functions are lowered in place of their direct calls.
    pub leaves: leaf::Leaves,
}

/// Where static data lives: at an address of this process (the JIT, and
/// made-up ones for `emit clif`), or in a data object of the module.
#[derive(Clone, Copy, Debug)]
pub enum Static {
    Addr(u64),
    Data(DataId),
}

impl Shared<'_> {
    /// Where static bytes with these contents live.
    pub fn static_bytes(&mut self, b: &[u8]) -> Static {
        if b.is_empty() {
            return Static::Addr(0);
        }
        if let Some(&a) = self.statics.get(b) {
            return a;
        }
        let a = if self.fake_statics {
            Static::Addr(0x6000_0000 + 0x1000 * self.statics.len() as u64)
        } else if self.aot {
            let name = format!("sspur_str{}", self.statics.len());
            let id = self
                .module
                .declare_data(&name, cranelift_module::Linkage::Local, false, false)
                .expect("fresh data name");
            let mut dd = cranelift_module::DataDescription::new();
            dd.define(b.to_vec().into_boxed_slice());
            dd.set_align(1);
            self.module.define_data(id, &dd).expect("defined once");
            Static::Data(id)
        } else {
            let leaked: &'static [u8] = Box::leak(b.to_vec().into_boxed_slice());
            Static::Addr(leaked.as_ptr() as u64)
        };
        self.statics.insert(b.to_vec(), a);
        a
    }
}

/// Parameter and result types of a lambda: from its function type, or
/// from its parameters and body should the type be missing.
pub fn lambda_sig(body: &Body, e: ExprId) -> (Vec<Ty>, Ty) {
    match (&body[e].ty, &body[e].kind) {
        (Ty::Fn(ps, r), _) => (ps.to_vec(), (**r).clone()),
        (
            _,
            ExprKind::Lambda {
                params, body: b, ..
            },
        ) => (
            params.iter().map(|p| body[*p].ty.clone()).collect(),
            body[*b].ty.clone(),
        ),
        _ => (Vec::new(), Ty::Unit),
    }
}

/// Where an allocation happens and what it makes.
#[derive(Clone, Debug)]
pub struct Site {
    pub path: String,
    pub line: u32,
    pub col: u32,
    pub what: String,
    /// The expression that allocates, and whether these are the tuples it
    /// puts in its list (None for a drop's site).
    pub key: Option<(FnId, ExprId, bool)>,
}

impl Site {
    /// `path:line:col`, where an `out of memory` trap at this site points.
    pub fn loc(&self) -> String {
        format!("{}:{}:{}", self.path, self.line, self.col)
    }
}

/// What an allocating expression makes, for site names.
fn site_what(kind: &ExprKind) -> String {
    match kind {
        ExprKind::Interp(_) => "string from interpolation".into(),
        ExprKind::Binary { .. } => "string from +".into(),
        ExprKind::Record { .. } => "record".into(),
        ExprKind::Tuple(_) => "tuple".into(),
        ExprKind::Ctor { .. } => "constructor".into(),
        ExprKind::List(_) => "list literal".into(),
        ExprKind::Range { .. } => "list from range".into(),
        ExprKind::Lambda { .. } => "closure".into(),
        ExprKind::Method { method, .. } => format!("value from {}", method.name()),
        ExprKind::Call {
            callee: Callee::Builtin(b),
            ..
        } => format!("value from {b:?}").to_lowercase(),
        ExprKind::Index { .. } => "map lookup".into(),
        ExprKind::PutOwnedKey { .. } => "map entries from put".into(),
        ExprKind::BuilderFinish { .. } => "string from a builder".into(),
        ExprKind::BuilderNew { .. } => "string builder".into(),
        ExprKind::BuilderPush { .. } => "string builder growth".into(),
        _ => "value".into(),
    }
}

/// The Cranelift signature of a Sspur function: (env?) params -> result.
pub fn signature(
    cc: cranelift_codegen::isa::CallConv,
    env: bool,
    params: &[Ty],
    ret: &Ty,
) -> Signature {
    let mut sig = Signature::new(cc);
    if env {
        sig.params.push(AbiParam::new(I64));
    }
    for p in params {
        for _ in 0..words(p) {
            sig.params.push(AbiParam::new(I64));
        }
    }
    for _ in 0..words(ret).max(1) {
        sig.returns.push(AbiParam::new(I64));
    }
    sig
}

type Vals = Vec<Value>;

/// What a `for` iterates.
enum Iter {
    Range(Value, Value),
    List(Value, Value, Ty),
}

/// Where a loop body goes next: `latch` for the next element, `exit` to
/// leave the loop.
#[derive(Clone, Copy)]
struct Next {
    latch: clif::Block,
    exit: clif::Block,
}

pub struct Lowerer<'a, 'm, 'f> {
    pub sh: &'a mut Shared<'m>,
    pub prog: &'a Program,
    pub owner: FnId,
    pub body: &'a Body,
    pub b: FunctionBuilder<'f>,
    vars: HashMap<LocalId, Vec<Variable>>,
    /// Parameters and `let` bindings: plain SSA values, since each is
    /// defined before, and dominates, every use in its scope. A Cranelift
    /// `Variable` costs a map over the function's blocks once it is used
    /// in a late block, which made long functions quadratic.
    lets: HashMap<LocalId, Vals>,
    /// Variables whose local's scope or loop has ended, for reuse: a
    /// Cranelift `Variable` keeps a map over the blocks it is looked up
    /// in, so a fresh one per `var` made long functions quadratic.
    free_vars: Vec<Variable>,
    /// Variables of loops and accumulators the lowering makes, released
    /// when the statement that made them is lowered.
    temps: Vec<Variable>,
    loops: Vec<(clif::Block, clif::Block)>,
    frefs: HashMap<FuncId, clif::FuncRef>,
    ret_words: usize,
    /// The stream the next `each` runs over instead of loading list
    /// elements (a fused chain's source and stages).
    fused: Option<fusion::Stream>,
    /// The body's fusion plan.
    plan: std::rc::Rc<::ir::fusion::Plan>,
    /// The body's upsert plan.
    upserts: std::rc::Rc<::ir::upsert::Plan>,
    /// The lookup of a fused upsert whose put is being lowered, and the
    /// variable that gets its probe's answer (`sspur_map_probe`).
    probes: HashMap<ExprId, Variable>,
    /// The constructor expression about to be built in a reuse token's
    /// block, and the token's pointer.
    reuse: Option<(ExprId, Value)>,
    /// Lambdas lowered in place of their calls (`Plan::inline_lambda`),
    /// met as a method's argument: the values of their captures there.
    inlined: HashMap<ExprId, Vec<(LocalId, Vals)>>,
    /// Parameters of inlined lambdas bound to the components of a tuple
    /// that is never built (`Plan::tuple_param`): their field reads.
    param_parts: HashMap<LocalId, Vec<Vals>>,
}

fn ba(vals: &[Value]) -> Vec<BlockArg> {
    vals.iter().map(|v| BlockArg::Value(*v)).collect()
}

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl<'a, 'm, 'f> Lowerer<'a, 'm, 'f> {
    pub fn new(
        sh: &'a mut Shared<'m>,
        prog: &'a Program,
        owner: FnId,
        b: FunctionBuilder<'f>,
        ret: &Ty,
    ) -> Self {
        let body = prog.body(owner);
        let plan = match sh.plans.get(&owner) {
            Some(p) => p.clone(),
            None => {
                let p = std::rc::Rc::new(::ir::fusion::Plan::of(prog, &sh.effects, owner));
                sh.plans.insert(owner, p.clone());
                p
            }
        };
        let upserts = match sh.upserts.get(&owner) {
            Some(p) => p.clone(),
            None => {
                let p = std::rc::Rc::new(::ir::upsert::Plan::body(body));
                sh.upserts.insert(owner, p.clone());
                p
            }
        };
        Lowerer {
            sh,
            prog,
            owner,
            body,
            b,
            vars: HashMap::new(),
            lets: HashMap::new(),
            free_vars: Vec::new(),
            temps: Vec::new(),
            loops: Vec::new(),
            frefs: HashMap::new(),
            ret_words: words(ret).max(1),
            fused: None,
            plan,
            upserts,
            probes: HashMap::new(),
            reuse: None,
            inlined: HashMap::new(),
            param_parts: HashMap::new(),
        }
    }

    /// Lowers a top-level function's body.
    pub fn function(mut self) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let params: Vals = self.b.block_params(entry).to_vec();
        let mut at = 0;
        for &l in &self.body.params {
            let n = words(&self.body[l].ty);
            self.def_local(l, &params[at..at + n]);
            at += n;
        }
        let Some(root) = self.body.root else {
            self.b.ins().trap(TrapCode::user(1).unwrap());
            return self.finish();
        };
        if let Some(v) = self.expr(root) {
            let v = self.fit(v, self.ret_words);
            self.b.ins().return_(&v);
        }
        self.finish()
    }

    /// Lowers a lambda: `(env, params..)` with captures loaded from env.
    pub fn lambda(mut self, expr: ExprId) {
        let ExprKind::Lambda {
            params,
            body,
            captures,
        } = &self.body[expr].kind
        else {
            self.b.ins().trap(TrapCode::user(1).unwrap());
            return self.finish();
        };
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let args: Vals = self.b.block_params(entry).to_vec();
        let env = args[0];
        let tys: Vec<Ty> = captures.iter().map(|c| self.body[*c].ty.clone()).collect();
        let (offs, _) = offsets(tys.iter());
        for (i, c) in captures.iter().enumerate() {
            let v = self.load_words(env, 1 + offs[i], words(&tys[i]));
            self.def_local(*c, &v);
        }
        let mut at = 1;
        for &l in params {
            let n = words(&self.body[l].ty);
            self.def_local(l, &args[at..at + n]);
            at += n;
        }
        if let Some(v) = self.expr(*body) {
            let v = self.fit(v, self.ret_words);
            self.b.ins().return_(&v);
        }
        self.finish()
    }

    fn finish(mut self) {
        self.b.seal_all_blocks();
        let cfg = self.sh.module.target_config();
        self.b.finalize(cfg);
    }

    fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(I64, v)
    }

    /// Pads with zeros or truncates to `n` words (Unit versus values).
    fn fit(&mut self, mut v: Vals, n: usize) -> Vals {
        while v.len() < n {
            let z = self.iconst(0);
            v.push(z);
        }
        v.truncate(n);
        v
    }

    fn fref(&mut self, id: FuncId) -> clif::FuncRef {
        if let Some(&r) = self.frefs.get(&id) {
            return r;
        }
        let r = self.sh.module.declare_func_in_func(id, self.b.func);
        self.frefs.insert(id, r);
        r
    }

    fn rt(&mut self, f: F, args: &[Value]) -> Vals {
        let (id, n, _) = self.sh.rt[&f];
        debug_assert_eq!(n, args.len(), "{f:?}");
        let r = self.fref(id);
        let call = self.b.ins().call(r, args);
        self.b.inst_results(call).to_vec()
    }

    fn rt1(&mut self, f: F, args: &[Value]) -> Value {
        self.rt(f, args)[0]
    }

    fn static_str(&mut self, b: &[u8]) -> (Value, Value) {
        let a = self.sh.static_bytes(b);
        (self.static_at(a, 0), self.iconst(b.len() as i64))
    }

    /// The address `offset` bytes into static data.
    fn static_at(&mut self, a: Static, offset: i64) -> Value {
        match a {
            Static::Addr(a) => self.iconst(a.wrapping_add(offset as u64) as i64),
            Static::Data(id) => {
                let gv = self.sh.module.declare_data_in_func(id, self.b.func);
                let v = self.b.ins().symbol_value(I64, gv);
                if offset == 0 {
                    v
                } else {
                    self.b.ins().iadd_imm_s(v, offset)
                }
            }
        }
    }

    fn pos(&self, offset: u32) -> String {
        let (line, col) = self.prog.line_col(offset);
        format!("{}:{}:{}", self.sh.path, line, col)
    }

    /// The location string of an expression, as `(ptr, len)` constants.
    fn loc(&mut self, e: ExprId) -> (Value, Value) {
        let span = self.prog.source_map(self.owner).expr(e);
        let s = self.pos(span.start);
        self.static_str(s.as_bytes())
    }

    /// Sites for a helper that makes a list of new tuples (enumerate, zip,
    /// entries): the list's, and right after it the tuples' (the runtime
    /// puts them at the next site id).
    fn site_with_tuples(&mut self, e: ExprId) -> Value {
        let site = self.site(e);
        self.tuple_site(e);
        site
    }

    /// The site of the tuples a method makes (enumerate, zip, entries),
    /// named after the list's site at `e`.
    fn tuple_site(&mut self, e: ExprId) -> Value {
        self.site(e);
        let list = self.sh.sites.pop().expect("just pushed");
        let what = match &self.body[e].kind {
            ExprKind::Method { method, .. } => format!("tuple from {}", method.name()),
            _ => "tuple".into(),
        };
        self.sh.sites.push(Site {
            what,
            key: list.key.map(|(f, e, _)| (f, e, true)),
            ..list
        });
        let id = self.sh.sites.len();
        self.iconst(id as i64)
    }

    /// A new allocation site for expression `e`: its id (1-based, 0 is
    /// "unknown" to the runtime), named `path:line:col what`.
    fn site(&mut self, e: ExprId) -> Value {
        let span = self.prog.source_map(self.owner).expr(e);
        let (line, col) = self.prog.line_col(span.start);
        let what = site_what(&self.body[e].kind);
        self.sh.sites.push(Site {
            path: self.sh.path.clone(),
            line,
            col,
            what,
            key: Some((self.owner, e, false)),
        });
        let id = self.sh.sites.len();
        self.iconst(id as i64)
    }

    fn load_words(&mut self, base: Value, at: usize, n: usize) -> Vals {
        (0..n)
            .map(|i| self.b.ins().load(I64, flags(), base, ((at + i) * 8) as i32))
            .collect()
    }

    fn store_words(&mut self, base: Value, at: usize, vals: &[Value]) {
        for (i, v) in vals.iter().enumerate() {
            self.b.ins().store(flags(), *v, base, ((at + i) * 8) as i32);
        }
    }

    /// Stores a value in a fresh stack slot and gives its address.
    fn spill(&mut self, vals: &[Value]) -> Value {
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (vals.len().max(1) * 8) as u32,
            3,
        ));
        for (i, v) in vals.iter().enumerate() {
            self.b.ins().stack_store(I64, *v, slot, (i * 8) as i32);
        }
        self.b.ins().stack_addr(I64, slot, 0)
    }

    /// A fresh pointer block of `nwords` words (a cell or closure; the
    /// caller writes every field). A small block is taken inline as the
    /// runtime's own fast path does it: the head of its class's free list
    /// (its link word cleared; a freed pointer block is zero otherwise),
    /// else the lowest of the class's `bits` (a free block of a swept
    /// page, its slack zeroed here), else a bump of the class's cursor.
    /// The call is the slow path, and the only path while the runtime
    /// publishes no class states (before its initialisation, and whenever
    /// it counts or checks allocations).
    fn alloc(&mut self, nwords: usize, site: Value) -> Value {
        use rt::heap::{
            CLASS_STATE_BITS, CLASS_STATE_BITS_BASE, CLASS_STATE_BUMP, CLASS_STATE_END,
            CLASS_STATE_FREE, CLASS_STATE_SIZE,
        };
        let size = nwords.max(1) * 8;
        if size > rt::heap::MAX_SMALL {
            let bytes = self.iconst(size as i64);
            let one = self.iconst(1);
            return self.rt1(F::sspur_alloc_block, &[bytes, one, site]);
        }
        let class = rt::heap::class_of(size);
        let class_size = rt::heap::CLASS_SIZES[class] as i64;
        let cs_at = ((rt::POINTER * rt::heap::NUM_CLASSES + class) * CLASS_STATE_SIZE) as i32;
        let slot = self.static_at(self.sh.alloc_classes, 0);
        let classes = self.b.ins().load(I64, flags(), slot, 0);
        let try_free = self.b.create_block();
        let pop = self.b.create_block();
        let try_bits = self.b.create_block();
        let bit = self.b.create_block();
        let bump = self.b.create_block();
        let take = self.b.create_block();
        let slow = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, I64);
        self.b.set_cold_block(slow);
        self.b.ins().brif(classes, try_free, &[], slow, &[]);

        self.b.switch_to_block(try_free);
        let cs = self.b.ins().iadd_imm_s(classes, cs_at as i64);
        let free_at = CLASS_STATE_FREE as i32;
        let head = self.b.ins().load(I64, flags(), cs, free_at);
        self.b.ins().brif(head, pop, &[], try_bits, &[]);

        self.b.switch_to_block(pop);
        let next = self.b.ins().load(I64, flags(), head, 0);
        self.b.ins().store(flags(), next, cs, free_at);
        let zero = self.iconst(0);
        self.b.ins().store(flags(), zero, head, 0);
        self.b.ins().jump(done, &ba(&[head]));

        // A free block of a swept page, taken by its bit: it holds what it
        // held when it died, so the words the caller does not write (the
        // class's slack past `nwords`) are zeroed here; the caller writes
        // the first `nwords` before anything can collect.
        self.b.switch_to_block(try_bits);
        let bits_at = CLASS_STATE_BITS as i32;
        let bits = self.b.ins().load(I64, flags(), cs, bits_at);
        self.b.ins().brif(bits, bit, &[], bump, &[]);

        self.b.switch_to_block(bit);
        let j = self.b.ins().ctz(bits);
        let lower = self.b.ins().iadd_imm_s(bits, -1);
        let rest = self.b.ins().band(bits, lower);
        self.b.ins().store(flags(), rest, cs, bits_at);
        let base = self
            .b
            .ins()
            .load(I64, flags(), cs, CLASS_STATE_BITS_BASE as i32);
        let off = self.b.ins().imul_imm_s(j, class_size);
        let p = self.b.ins().iadd(base, off);
        let zero = self.iconst(0);
        for w in nwords..class_size as usize / 8 {
            self.b.ins().store(flags(), zero, p, (w * 8) as i32);
        }
        self.b.ins().jump(done, &ba(&[p]));

        self.b.switch_to_block(bump);
        let p = self.b.ins().load(I64, flags(), cs, CLASS_STATE_BUMP as i32);
        let end = self.b.ins().load(I64, flags(), cs, CLASS_STATE_END as i32);
        let q = self.b.ins().iadd_imm_s(p, class_size);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, q, end);
        self.b.ins().brif(fits, take, &[], slow, &[]);

        self.b.switch_to_block(take);
        self.b.ins().store(flags(), q, cs, CLASS_STATE_BUMP as i32);
        self.b.ins().jump(done, &ba(&[p]));

        self.b.switch_to_block(slow);
        let bytes = self.iconst(size as i64);
        let one = self.iconst(1);
        let r = self.rt1(F::sspur_alloc_block, &[bytes, one, site]);
        self.b.ins().jump(done, &ba(&[r]));

        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// The block of constructor `e`: the reuse token's when `e` is the
    /// value of the `reuse` being lowered, else a new one.
    fn alloc_cell(&mut self, e: ExprId, nwords: usize, site: Value) -> Value {
        match self.reuse {
            Some((ce, token)) if ce == e => {
                self.reuse = None;
                self.reuse_block(token, nwords.max(1) * 8, site)
            }
            _ => self.alloc(nwords, site),
        }
    }

    /// The block of reuse token `token` for a constructor of `bytes`.
    /// A small block the runtime renewed since the collector's last pause
    /// (its address in `rt::cells::renewed`'s table with the current tag)
    /// is young on a young page already: it is taken here, its words past
    /// `bytes` zeroed (the constructor writes the rest). Any other token
    /// goes to `sspur_reuse_or_alloc`, which renews it (and notes it) or
    /// frees it and allocates afresh.
    fn reuse_block(&mut self, token: Value, bytes: usize, site: Value) -> Value {
        use rt::cells::renewed::{INDEX_MUL, INDEX_SHIFT, SLOTS_OFFSET};
        let nbytes = self.iconst(bytes as i64);
        if bytes > 128 {
            return self.rt1(F::sspur_reuse_or_alloc, &[token, nbytes, site]);
        }
        let table = self.static_at(self.sh.renewed, 0);
        let tag = self.b.ins().load(I64, flags(), table, 0);
        let key = self.b.ins().bor(token, tag);
        let hash = self.b.ins().imul_imm_s(token, INDEX_MUL);
        let index = self.b.ins().ushr_imm_s(hash, INDEX_SHIFT);
        let offset = self.b.ins().ishl_imm_s(index, 3);
        let slot = self.b.ins().iadd(table, offset);
        let seen = self.b.ins().load(I64, flags(), slot, SLOTS_OFFSET);
        let hit = self.b.ins().icmp(IntCC::Equal, seen, key);
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, I64);
        self.b.ins().brif(hit, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let size = rt::heap::block_size_for(bytes).unwrap_or(bytes);
        if size > bytes {
            let zero = self.iconst(0);
            for at in (bytes..size).step_by(8) {
                self.b.ins().store(flags(), zero, token, at as i32);
            }
        }
        self.b.ins().jump(done, &ba(&[token]));
        self.b.switch_to_block(slow);
        let p = self.rt1(F::sspur_reuse_or_alloc, &[token, nbytes, site]);
        self.b.ins().jump(done, &ba(&[p]));
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    fn ty_id(&mut self, ty: &Ty) -> Value {
        let id = self.sh.types.id(&self.prog.items, ty);
        self.iconst(id as i64)
    }

    fn bool_val(&mut self, c: Value) -> Value {
        self.b.ins().uextend(I64, c)
    }

    fn as_float(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(F64, MemFlagsData::new(), v)
    }

    fn as_word(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(I64, MemFlagsData::new(), v)
    }

    /// Branches to a cold block that runs `trap` (which must not return)
    /// when `cond` is true; continues in a fresh block otherwise.
    fn trap_if(&mut self, cond: Value, trap: impl FnOnce(&mut Self)) {
        let cold = self.b.create_block();
        let ok = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(cond, cold, &[], ok, &[]);
        self.b.switch_to_block(cold);
        trap(self);
        self.b.ins().trap(TrapCode::user(1).unwrap());
        self.b.switch_to_block(ok);
    }

    /// Ends the current path after a call that does not return.
    fn unreachable(&mut self) {
        self.b.ins().trap(TrapCode::user(1).unwrap());
    }

    fn trap_msg(&mut self, e: ExprId, msg: &str) {
        let (m, ml) = self.static_str(msg.as_bytes());
        let (l, ll) = self.loc(e);
        self.rt(F::sspur_trap_msg, &[m, ml, l, ll]);
    }

    fn def_local(&mut self, l: LocalId, vals: &[Value]) {
        let n = words(&self.body[l].ty);
        if matches!(self.body[l].kind, ir::LocalKind::Let | ir::LocalKind::Param) {
            // A second definition (a body lowered twice) rebinds: the code
            // lowered after it is the code it dominates.
            let vals = self.fit(vals.to_vec(), n);
            self.lets.insert(l, vals);
            return;
        }
        if !self.vars.contains_key(&l) {
            let vs: Vec<Variable> = (0..n).map(|_| self.new_var()).collect();
            self.vars.insert(l, vs);
        }
        let vs = self.vars[&l].clone();
        let vals = self.fit(vals.to_vec(), n);
        for (var, v) in vs.iter().zip(vals) {
            self.b.def_var(*var, v);
        }
    }

    /// A variable for a value defined before its first use: a released
    /// one when there is one.
    fn new_var(&mut self) -> Variable {
        self.free_vars
            .pop()
            .unwrap_or_else(|| self.b.declare_var(I64))
    }

    /// A variable for the lowering's own loop counter or accumulator,
    /// defined before its first use and dead once its statement ends.
    pub(super) fn new_temp(&mut self) -> Variable {
        let v = self.new_var();
        self.temps.push(v);
        v
    }

    pub(super) fn temps_mark(&self) -> usize {
        self.temps.len()
    }

    /// Releases the temporaries made since `mark`.
    pub(super) fn release_temps(&mut self, mark: usize) {
        let done = self.temps.split_off(mark.min(self.temps.len()));
        self.free_vars.extend(done);
    }

    /// Ends the scope of `var` local `l`: nothing reads it afterwards, so
    /// its variables can serve a later local.
    pub(super) fn release_local(&mut self, l: LocalId) {
        if let Some(vs) = self.vars.remove(&l) {
            self.free_vars.extend(vs);
        }
    }

    fn use_local(&mut self, l: LocalId) -> Vals {
        if let Some(vs) = self.lets.get(&l) {
            return vs.clone();
        }
        match self.vars.get(&l).cloned() {
            Some(vs) => vs.iter().map(|v| self.b.use_var(*v)).collect(),
            None => {
                let n = words(&self.body[l].ty);
                (0..n).map(|_| self.iconst(0)).collect()
            }
        }
    }

    /// Element `i` of a list at element pointer `p`.
    fn elem_at(&mut self, p: Value, i: Value, ety: &Ty) -> Vals {
        let size = elem_size(ety);
        let off = self.b.ins().imul_imm_s(i, size);
        let addr = self.b.ins().iadd(p, off);
        self.load_words(addr, 0, words(ety))
    }

    fn elem_addr(&mut self, p: Value, i: Value, ety: &Ty) -> Value {
        let off = self.b.ins().imul_imm_s(i, elem_size(ety));
        self.b.ins().iadd(p, off)
    }

    fn bounds_check(&mut self, e: ExprId, i: Value, len: Value) {
        let bad = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, len);
        self.trap_if(bad, |s| {
            let (l, ll) = s.loc(e);
            s.rt(F::sspur_trap_index, &[len, i, l, ll]);
        });
    }

    fn list_alloc(&mut self, e: ExprId, n: Value, ety: &Ty) -> Value {
        let es = self.iconst(elem_size(ety));
        let ptrs = self.iconst(has_pointers(ety) as i64);
        let site = self.site(e);
        self.rt1(F::sspur_list_alloc, &[n, es, ptrs, site])
    }

    fn some(&mut self, e: ExprId, v: &[Value]) -> Value {
        let site = self.site(e);
        let p = self.alloc(1 + v.len(), site);
        let one = self.iconst(1);
        self.store_words(p, 0, &[one]);
        self.store_words(p, 1, v);
        p
    }

    fn none(&mut self) -> Value {
        self.static_at(self.sh.tags, 0)
    }

    /// `Some(payload)` when `cond` is not zero, else `None`.
    fn option_if(&mut self, e: ExprId, cond: Value, payload: &[Value]) -> Value {
        let yes = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, I64);
        let none = self.none();
        self.b.ins().brif(cond, yes, &[], merge, &ba(&[none]));
        self.b.switch_to_block(yes);
        let v = self.some(e, payload);
        self.b.ins().jump(merge, &ba(&[v]));
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }

    /// `Some(load(p))` when `p` is not null, else `None`.
    fn option_from_ptr(&mut self, e: ExprId, p: Value, vty: &Ty) -> Value {
        let found = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, I64);
        let none = self.none();
        self.b.ins().brif(p, found, &[], merge, &ba(&[none]));
        self.b.switch_to_block(found);
        let v = self.load_words(p, 0, words(vty));
        let s = self.some(e, &v);
        self.b.ins().jump(merge, &ba(&[s]));
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }
}

fn int_cc(op: BinOp, signed: bool) -> IntCC {
    match (op, signed) {
        (BinOp::Eq, _) => IntCC::Equal,
        (BinOp::Ne, _) => IntCC::NotEqual,
        (BinOp::Lt, true) => IntCC::SignedLessThan,
        (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (BinOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
        _ => IntCC::UnsignedGreaterThanOrEqual,
    }
}

/// Lowers a wrapper `(env, args..) -> f(args..)` for a function value.
pub fn wrapper(sh: &mut Shared, b: FunctionBuilder, f: FuncId) {
    let mut b = b;
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let args: Vals = b.block_params(entry)[1..].to_vec();
    let r = sh.module.declare_func_in_func(f, b.func);
    let call = b.ins().call(r, &args);
    let v = b.inst_results(call).to_vec();
    b.ins().return_(&v);
    b.seal_all_blocks();
    b.finalize(sh.module.target_config());
}
