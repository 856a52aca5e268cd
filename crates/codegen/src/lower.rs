//! IR (with the ownership pass's drops) to Cranelift IR, one function or
//! lambda at a time.
//!
//! Every value is a list of 64-bit words ([`layout::words`]); F64 words are
//! bit-cast to floats only around arithmetic. An expression that diverges
//! (return, break, continue, trap) lowers to `None` and leaves the builder
//! in a terminated block, so callers stop emitting code after it.

use crate::layout::{elem_of, elem_size, has_pointers, offsets, words, TypeTable};
use crate::rtfns::{Ret, F};
use ::ir::{
    BinOp, Body, Builtin, Callee, Ctor, ExprId, ExprKind, FnId, InterpPart, Lit, LocalId, Method,
    OldValue, PatId, PatKind, Program, StmtId, StmtKind, Ty, TypeDefKind, UnOp,
};
use cranelift_codegen::ir::{
    self as clif, condcodes::FloatCC, condcodes::IntCC, types::F64, types::I64, AbiParam, BlockArg,
    InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind, TrapCode, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{DataId, FuncId, Module};
use std::collections::HashMap;

/// A lambda waiting to be compiled: its function, the body it lives in,
/// and its expression.
pub struct PendingLambda {
    pub id: FuncId,
    pub owner: FnId,
    pub expr: ExprId,
}

/// State shared by all functions of one compilation.
pub struct Shared<'m> {
    pub module: &'m mut JITModule,
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
    pub types: TypeTable,
    /// Static bytes (literals, locations), interned; they outlive the run.
    pub statics: HashMap<Vec<u8>, u64>,
    /// Static words `[0, 1, 2, ..]`: nullary constructor `t` is `&tags[t]`.
    pub tags: u64,
    /// Allocation sites, site id `i + 1` at index `i`.
    pub sites: Vec<Site>,
    pub path: String,
    /// Whether to compile drops (false under SSPUR_MEM=gc).
    pub drops: bool,
    /// For printing only: static data gets stable made-up addresses.
    pub fake_statics: bool,
}

impl Shared<'_> {
    /// The address of static bytes with these contents.
    pub fn static_bytes(&mut self, b: &[u8]) -> u64 {
        if b.is_empty() {
            return 0;
        }
        if let Some(&a) = self.statics.get(b) {
            return a;
        }
        if self.fake_statics {
            let a = 0x6000_0000 + 0x1000 * self.statics.len() as u64;
            self.statics.insert(b.to_vec(), a);
            return a;
        }
        let leaked: &'static [u8] = Box::leak(b.to_vec().into_boxed_slice());
        let a = leaked.as_ptr() as u64;
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
    /// The expression that allocates (None for a drop's site).
    pub key: Option<(FnId, ExprId)>,
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

pub struct Lowerer<'a, 'm, 'f> {
    pub sh: &'a mut Shared<'m>,
    pub prog: &'a Program,
    pub owner: FnId,
    pub body: &'a Body,
    pub b: FunctionBuilder<'f>,
    vars: HashMap<LocalId, Vec<Variable>>,
    loops: Vec<(clif::Block, clif::Block)>,
    frefs: HashMap<FuncId, clif::FuncRef>,
    ret_words: usize,
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
        Lowerer {
            sh,
            prog,
            owner,
            body,
            b,
            vars: HashMap::new(),
            loops: Vec::new(),
            frefs: HashMap::new(),
            ret_words: words(ret).max(1),
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

    // ------------------------------------------------------------ basics

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
        (self.iconst(a as i64), self.iconst(b.len() as i64))
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
            key: Some((self.owner, e)),
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

    fn alloc(&mut self, nwords: usize, site: Value) -> Value {
        let bytes = self.iconst((nwords.max(1) * 8) as i64);
        let one = self.iconst(1);
        self.rt1(F::sspur_alloc_block, &[bytes, one, site])
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

    // ------------------------------------------------------------ locals

    fn def_local(&mut self, l: LocalId, vals: &[Value]) {
        let n = words(&self.body[l].ty);
        if !self.vars.contains_key(&l) {
            let vs: Vec<Variable> = (0..n).map(|_| self.b.declare_var(I64)).collect();
            self.vars.insert(l, vs);
        }
        let vs = self.vars[&l].clone();
        let vals = self.fit(vals.to_vec(), n);
        for (var, v) in vs.iter().zip(vals) {
            self.b.def_var(*var, v);
        }
    }

    fn use_local(&mut self, l: LocalId) -> Vals {
        match self.vars.get(&l).cloned() {
            Some(vs) => vs.iter().map(|v| self.b.use_var(*v)).collect(),
            None => {
                let n = words(&self.body[l].ty);
                (0..n).map(|_| self.iconst(0)).collect()
            }
        }
    }

    // ------------------------------------------------------------ statements

    fn block(&mut self, stmts: &[StmtId], tail: Option<ExprId>) -> Option<Vals> {
        for &s in stmts {
            self.stmt(s)?;
        }
        match tail {
            Some(t) => self.expr(t),
            None => Some(vec![self.iconst(0)]),
        }
    }

    fn stmt(&mut self, s: StmtId) -> Option<()> {
        match &self.body[s].kind {
            StmtKind::Let { pat, init } => {
                let v = self.expr(*init)?;
                self.bind(*pat, &v);
            }
            StmtKind::Var { local, init } => {
                let v = self.expr(*init)?;
                self.def_local(*local, &v);
            }
            StmtKind::Assign { local, value, old } => {
                let v = self.expr(*value)?;
                // The old value is the one the store replaces: read after
                // the right side, which may itself assign the local.
                let before = self.use_local(*local);
                self.def_local(*local, &v);
                if self.sh.drops && before.len() == 2 {
                    match old {
                        OldValue::Keep => {}
                        OldValue::Free { deep } => self.drop_vals(&before, *deep, s, *local),
                        OldValue::FreeIfMoved => {
                            let moved = self.b.ins().icmp(IntCC::NotEqual, before[0], v[0]);
                            let yes = self.b.create_block();
                            let done = self.b.create_block();
                            self.b.ins().brif(moved, yes, &[], done, &[]);
                            self.b.switch_to_block(yes);
                            self.drop_vals(&before, false, s, *local);
                            self.b.ins().jump(done, &[]);
                            self.b.switch_to_block(done);
                        }
                    }
                }
            }
            StmtKind::Expr(e) => {
                self.expr(*e)?;
            }
            StmtKind::For { pat, iter, body } => return self.for_loop(*pat, *iter, *body),
            StmtKind::While { cond, body } => {
                let head = self.b.create_block();
                let exit = self.b.create_block();
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(head);
                let c = self.expr(*cond)?;
                let inner = self.b.create_block();
                self.b.ins().brif(c[0], inner, &[], exit, &[]);
                self.b.switch_to_block(inner);
                self.loops.push((head, exit));
                let r = self.expr(*body);
                self.loops.pop();
                if r.is_some() {
                    self.b.ins().jump(head, &[]);
                }
                self.b.switch_to_block(exit);
            }
            StmtKind::Drop(d) => {
                if self.sh.drops && self.body[d.local].ty.is_freeable() {
                    let v = self.use_local(d.local);
                    self.drop_vals(&v, d.deep, s, d.local);
                }
            }
        }
        Some(())
    }

    /// Frees a local's block at statement `s` (check mode reports name the
    /// drop by its site: the statement, or the local when the statement was
    /// made by the ownership pass and has no span).
    fn drop_vals(&mut self, v: &[Value], deep: bool, s: StmtId, local: LocalId) {
        let f = if deep {
            F::sspur_drop_strs
        } else {
            F::sspur_drop
        };
        let map = self.prog.source_map(self.owner);
        let span = match map.stmt(s) {
            sp if sp.end > sp.start => sp,
            _ => map.local(local),
        };
        let (line, col) = self.prog.line_col(span.start);
        let what = format!("drop of {}", self.body[local].name);
        self.sh.sites.push(Site {
            path: self.sh.path.clone(),
            line,
            col,
            what,
            key: None,
        });
        let site = self.iconst(self.sh.sites.len() as i64);
        self.rt(f, &[v[0], v[1], site]);
    }

    fn for_loop(&mut self, pat: PatId, iter: ExprId, body: ExprId) -> Option<()> {
        let it = match &self.body[iter].kind {
            ExprKind::Range { lo, hi } => {
                let lo = self.expr(*lo)?[0];
                let hi = self.expr(*hi)?[0];
                Iter::Range(lo, hi)
            }
            _ => {
                let v = self.expr(iter)?;
                Iter::List(v[0], v[1], elem_of(&self.body[iter].ty))
            }
        };
        let (start, end) = match &it {
            Iter::Range(lo, hi) => (*lo, *hi),
            Iter::List(_, len, _) => (self.iconst(0), *len),
        };
        let i = self.b.declare_var(I64);
        self.b.def_var(i, start);
        let head = self.b.create_block();
        let inner = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let iv = self.b.use_var(i);
        let c = self.b.ins().icmp(IntCC::SignedLessThan, iv, end);
        self.b.ins().brif(c, inner, &[], exit, &[]);
        self.b.switch_to_block(inner);
        let item = match &it {
            Iter::Range(..) => vec![iv],
            Iter::List(p, _, ety) => {
                let ety = ety.clone();
                self.elem_at(*p, iv, &ety)
            }
        };
        self.bind(pat, &item);
        self.loops.push((latch, exit));
        let r = self.expr(body);
        self.loops.pop();
        if r.is_some() {
            self.b.ins().jump(latch, &[]);
        }
        self.b.switch_to_block(latch);
        let iv = self.b.use_var(i);
        let next = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, next);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
        Some(())
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

    /// Binds an irrefutable pattern (let, for, lambda-free positions).
    fn bind(&mut self, pat: PatId, v: &[Value]) {
        let never = self.b.create_block();
        self.test_pat(pat, v, never);
        let cont = self.b.create_block();
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(never);
        self.unreachable();
        self.b.switch_to_block(cont);
    }

    /// Tests `v` against `pat`, binding its names; jumps to `fail` on a
    /// mismatch and continues in the current block on a match.
    fn test_pat(&mut self, pat: PatId, v: &[Value], fail: clif::Block) {
        let p = &self.body[pat];
        match &p.kind {
            PatKind::Missing | PatKind::Wild => {}
            PatKind::Bind(l) => self.def_local(*l, v),
            PatKind::Lit(lit) => {
                let ok = match lit {
                    Lit::Int(i) => self.b.ins().icmp_imm_s(IntCC::Equal, v[0], *i),
                    Lit::Bool(bv) => self.b.ins().icmp_imm_s(IntCC::Equal, v[0], *bv as i64),
                    Lit::Unit => self.b.ins().icmp(IntCC::Equal, v[0], v[0]),
                    Lit::F64(f) => {
                        let a = self.as_float(v[0]);
                        let c = self.b.ins().f64const(*f);
                        self.b.ins().fcmp(FloatCC::Equal, a, c)
                    }
                    Lit::Str(s) => {
                        let (sp, sl) = self.static_str(s.as_bytes());
                        let r = self.rt1(F::sspur_str_eq, &[v[0], v[1], sp, sl]);
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0)
                    }
                };
                let next = self.b.create_block();
                self.b.ins().brif(ok, next, &[], fail, &[]);
                self.b.switch_to_block(next);
            }
            PatKind::Tuple(ps) => {
                let tys: Vec<Ty> = ps.iter().map(|p| self.body[*p].ty.clone()).collect();
                let (offs, _) = offsets(tys.iter());
                for (i, sub) in ps.iter().enumerate() {
                    let fv = self.load_words(v[0], offs[i], words(&tys[i]));
                    self.test_pat(*sub, &fv, fail);
                }
            }
            PatKind::Ctor { ctor, args } => {
                let (tag, ftys) = self.ctor_shape(*ctor, &p.ty);
                let t = self.b.ins().load(I64, flags(), v[0], 0);
                let ok = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag as i64);
                let next = self.b.create_block();
                self.b.ins().brif(ok, next, &[], fail, &[]);
                self.b.switch_to_block(next);
                let (offs, _) = offsets(ftys.iter());
                for (i, sub) in args.iter().enumerate() {
                    let Some(fty) = ftys.get(i) else { break };
                    let fv = self.load_words(v[0], 1 + offs[i], words(fty));
                    self.test_pat(*sub, &fv, fail);
                }
            }
        }
    }

    /// A constructor's tag and field types.
    fn ctor_shape(&self, ctor: Ctor, ty: &Ty) -> (u32, Vec<Ty>) {
        match ctor {
            Ctor::None => (0, vec![]),
            Ctor::Some => match ty {
                Ty::Option(t) => (1, vec![(**t).clone()]),
                _ => (1, vec![Ty::Error]),
            },
            Ctor::User(t, i) => match &self.prog.items.types[t].kind {
                TypeDefKind::Sum { variants } => (
                    i,
                    variants
                        .get(i as usize)
                        .map(|v| v.fields.clone())
                        .unwrap_or_default(),
                ),
                TypeDefKind::Record { .. } => (i, vec![]),
            },
        }
    }

    // ------------------------------------------------------------ expressions

    pub fn expr(&mut self, e: ExprId) -> Option<Vals> {
        let ty = self.body[e].ty.clone();
        match &self.body[e].kind {
            ExprKind::Missing => {
                self.trap_msg(e, "internal error: missing expression");
                self.unreachable();
                None
            }
            ExprKind::Lit(l) => Some(match l {
                Lit::Int(i) => vec![self.iconst(*i)],
                Lit::F64(f) => vec![self.iconst(f.to_bits() as i64)],
                Lit::Bool(b) => vec![self.iconst(*b as i64)],
                Lit::Unit => vec![self.iconst(0)],
                Lit::Str(s) => {
                    let (p, l) = self.static_str(s.as_bytes());
                    vec![p, l]
                }
            }),
            ExprKind::Local(l) => Some(self.use_local(*l)),
            ExprKind::Func(f) => Some(vec![self.fn_value(*f)]),
            ExprKind::Interp(parts) => self.interp(e, parts),
            ExprKind::Unary { op, operand } => {
                let v = self.expr(*operand)?[0];
                Some(vec![match (op, &ty) {
                    (UnOp::Not, _) => self.b.ins().bxor_imm_s(v, 1),
                    (UnOp::Neg, Ty::F64) => {
                        let f = self.as_float(v);
                        let n = self.b.ins().fneg(f);
                        self.as_word(n)
                    }
                    (UnOp::Neg, _) => self.b.ins().ineg(v),
                }])
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, *lhs, *rhs),
            ExprKind::Call { callee, args } => self.call(e, callee, args, &ty),
            ExprKind::Method {
                method,
                receiver,
                args,
            } => self.method(e, *method, *receiver, args, &ty),
            ExprKind::Index { base, index } => self.index(e, *base, *index, &ty),
            ExprKind::Field { base, index } => {
                let bty = self.body[*base].ty.clone();
                let v = self.expr(*base)?;
                let ftys: Vec<Ty> = match &bty {
                    Ty::Tuple(ts) => ts.to_vec(),
                    Ty::Adt(t) => match &self.prog.items.types[*t].kind {
                        TypeDefKind::Record { fields } => {
                            fields.iter().map(|f| f.1.clone()).collect()
                        }
                        TypeDefKind::Sum { .. } => vec![],
                    },
                    _ => vec![],
                };
                let (offs, _) = offsets(ftys.iter());
                let i = *index as usize;
                match ftys.get(i) {
                    Some(fty) => Some(self.load_words(v[0], offs[i], words(fty))),
                    None => Some(vec![self.iconst(0)]),
                }
            }
            ExprKind::Record { ty: t, fields } => {
                let ftys: Vec<Ty> = match &self.prog.items.types[*t].kind {
                    TypeDefKind::Record { fields } => fields.iter().map(|f| f.1.clone()).collect(),
                    TypeDefKind::Sum { .. } => vec![],
                };
                let mut vals = Vec::new();
                for (i, fe) in fields {
                    vals.push((*i as usize, self.expr(*fe)?));
                }
                let (offs, total) = offsets(ftys.iter());
                let site = self.site(e);
                let p = self.alloc(total, site);
                for (i, v) in vals {
                    if let Some(&o) = offs.get(i) {
                        self.store_words(p, o, &v);
                    }
                }
                Some(vec![p])
            }
            ExprKind::Tuple(es) => {
                let mut vals = Vec::new();
                for x in es {
                    vals.push(self.expr(*x)?);
                }
                let tys: Vec<Ty> = es.iter().map(|x| self.body[*x].ty.clone()).collect();
                let (offs, total) = offsets(tys.iter());
                let site = self.site(e);
                let p = self.alloc(total, site);
                for (i, v) in vals.iter().enumerate() {
                    self.store_words(p, offs[i], v);
                }
                Some(vec![p])
            }
            ExprKind::Ctor { ctor, args } => {
                let mut vals = Vec::new();
                for x in args {
                    vals.push(self.expr(*x)?);
                }
                let (tag, ftys) = self.ctor_shape(*ctor, &ty);
                if args.is_empty() {
                    let a = self.sh.tags + 8 * tag as u64;
                    return Some(vec![self.iconst(a as i64)]);
                }
                let (offs, total) = offsets(ftys.iter());
                let site = self.site(e);
                let p = self.alloc(total + 1, site);
                let t = self.iconst(tag as i64);
                self.store_words(p, 0, &[t]);
                for (i, v) in vals.iter().enumerate() {
                    if let Some(&o) = offs.get(i) {
                        self.store_words(p, 1 + o, v);
                    }
                }
                Some(vec![p])
            }
            ExprKind::List(es) => {
                let mut vals = Vec::new();
                for x in es {
                    vals.push(self.expr(*x)?);
                }
                let ety = elem_of(&ty);
                if vals.is_empty() {
                    return Some(vec![self.iconst(0), self.iconst(0)]);
                }
                let n = self.iconst(vals.len() as i64);
                let p = self.list_alloc(e, n, &ety);
                let w = words(&ety).max(1);
                for (i, v) in vals.iter().enumerate() {
                    self.store_words(p, i * w, v);
                }
                Some(vec![p, n])
            }
            ExprKind::Range { lo, hi } => {
                let lo = self.expr(*lo)?[0];
                let hi = self.expr(*hi)?[0];
                let site = self.site(e);
                Some(self.rt(F::sspur_range, &[lo, hi, site]))
            }
            ExprKind::Lambda { captures, .. } => {
                let captures = captures.clone();
                let id = self.declare_lambda(e);
                let r = self.fref(id);
                let code = self.b.ins().func_addr(I64, r);
                let mut vals = Vec::new();
                let mut tys = Vec::new();
                for c in &captures {
                    vals.push(self.use_local(*c));
                    tys.push(self.body[*c].ty.clone());
                }
                let (offs, total) = offsets(tys.iter());
                let site = self.site(e);
                let p = self.alloc(total + 1, site);
                self.store_words(p, 0, &[code]);
                for (i, v) in vals.iter().enumerate() {
                    self.store_words(p, 1 + offs[i], v);
                }
                Some(vec![p])
            }
            ExprKind::If { cond, then, else_ } => {
                let c = self.expr(*cond)?[0];
                let n = words(&ty);
                let tb = self.b.create_block();
                let eb = self.b.create_block();
                let merge = self.b.create_block();
                for _ in 0..n {
                    self.b.append_block_param(merge, I64);
                }
                self.b.ins().brif(c, tb, &[], eb, &[]);
                let mut reached = false;
                self.b.switch_to_block(tb);
                if let Some(v) = self.expr(*then) {
                    let v = self.fit(v, n);
                    self.b.ins().jump(merge, &ba(&v));
                    reached = true;
                }
                self.b.switch_to_block(eb);
                let ev = match else_ {
                    Some(x) => self.expr(*x),
                    None => Some(vec![self.iconst(0)]),
                };
                if let Some(v) = ev {
                    let v = self.fit(v, n);
                    self.b.ins().jump(merge, &ba(&v));
                    reached = true;
                }
                self.b.switch_to_block(merge);
                if !reached {
                    self.unreachable();
                    return None;
                }
                Some(self.b.block_params(merge).to_vec())
            }
            ExprKind::Match { scrutinee, arms } => {
                let v = self.expr(*scrutinee)?;
                let n = words(&ty);
                let merge = self.b.create_block();
                for _ in 0..n {
                    self.b.append_block_param(merge, I64);
                }
                let mut reached = false;
                for arm in arms {
                    let fail = self.b.create_block();
                    self.test_pat(arm.pat, &v, fail);
                    if let Some(r) = self.expr(arm.body) {
                        let r = self.fit(r, n);
                        self.b.ins().jump(merge, &ba(&r));
                        reached = true;
                    }
                    self.b.switch_to_block(fail);
                }
                self.unreachable();
                self.b.switch_to_block(merge);
                if !reached {
                    self.unreachable();
                    return None;
                }
                Some(self.b.block_params(merge).to_vec())
            }
            ExprKind::Block { stmts, tail } => self.block(stmts, *tail),
            ExprKind::Return(x) => {
                let v = match x {
                    Some(x) => self.expr(*x)?,
                    None => vec![self.iconst(0)],
                };
                let v = self.fit(v, self.ret_words);
                self.b.ins().return_(&v);
                None
            }
            ExprKind::Break | ExprKind::Continue => {
                let is_break = matches!(self.body[e].kind, ExprKind::Break);
                match self.loops.last() {
                    Some(&(cont, exit)) => {
                        self.b.ins().jump(if is_break { exit } else { cont }, &[]);
                    }
                    None => self.unreachable(),
                }
                None
            }
            ExprKind::PutOwnedKey { map, key, value } => {
                let m = self.expr(*map)?[0];
                let k = self.expr(*key)?;
                let v = self.expr(*value)?;
                let k = self.fit(k, 2);
                let v = self.fit(v, 2);
                let site = self.site(e);
                let f = if self.sh.drops {
                    F::sspur_map_put_owned
                } else {
                    F::sspur_map_put
                };
                self.rt(f, &[m, k[0], k[1], v[0], v[1], site]);
                Some(vec![m])
            }
            ExprKind::BuilderNew { sep } => {
                let (p, l) = self.static_str(sep.as_bytes());
                Some(vec![self.rt1(F::sspur_sb_new_sep, &[p, l])])
            }
            ExprKind::BuilderPush { builder, value } => {
                let sb = self.use_local(*builder)[0];
                let v = self.expr(*value)?;
                self.rt(F::sspur_sb_piece, &[sb, v[0], v[1]]);
                Some(vec![self.iconst(0)])
            }
            ExprKind::BuilderFinish { builder } => {
                let sb = self.use_local(*builder)[0];
                let site = self.site(e);
                Some(self.rt(F::sspur_sb_finish, &[sb, site]))
            }
        }
    }

    fn fn_value(&mut self, f: FnId) -> Value {
        let data = match self.sh.fn_values.get(&f) {
            Some(d) => *d,
            None => {
                let n = self.sh.fn_values.len();
                let sig = self.prog.items.fns[f].clone();
                let ptys: Vec<Ty> = sig.params.iter().map(|p| p.1.clone()).collect();
                let wsig = signature(self.sh.call_conv, true, &ptys, &sig.ret);
                let wid = self
                    .sh
                    .module
                    .declare_function(
                        &format!("fnvalue{n}_{}", sig.name),
                        cranelift_module::Linkage::Local,
                        &wsig,
                    )
                    .expect("fresh function name");
                let did = self
                    .sh
                    .module
                    .declare_data(
                        &format!("fnvalue{n}"),
                        cranelift_module::Linkage::Local,
                        false,
                        false,
                    )
                    .expect("fresh data name");
                self.sh.wrappers.push((f, wid));
                self.sh.fn_values.insert(f, did);
                did
            }
        };
        let gv = self.sh.module.declare_data_in_func(data, self.b.func);
        self.b.ins().symbol_value(I64, gv)
    }

    fn declare_lambda(&mut self, e: ExprId) -> FuncId {
        let (ps, r) = lambda_sig(self.body, e);
        let sig = signature(self.sh.call_conv, true, &ps, &r);
        let n = self.sh.lambda_count;
        self.sh.lambda_count += 1;
        let name = format!("lambda{n}_in_{}", self.prog.items.fns[self.owner].name);
        let id = self
            .sh
            .module
            .declare_function(&name, cranelift_module::Linkage::Local, &sig)
            .expect("fresh function name");
        self.sh.lambdas.push(PendingLambda {
            id,
            owner: self.owner,
            expr: e,
        });
        id
    }

    fn interp(&mut self, e: ExprId, parts: &[InterpPart]) -> Option<Vals> {
        let sb = self.rt1(F::sspur_sb_new, &[]);
        for part in parts {
            match part {
                InterpPart::Text(t) => {
                    if !t.is_empty() {
                        let (p, l) = self.static_str(t.as_bytes());
                        self.rt(F::sspur_sb_str, &[sb, p, l]);
                    }
                }
                InterpPart::Expr(x) => {
                    let v = self.expr(*x)?;
                    let xty = self.body[*x].ty.clone();
                    self.show_into(sb, &v, &xty);
                }
            }
        }
        let site = self.site(e);
        Some(self.rt(F::sspur_sb_finish, &[sb, site]))
    }

    fn show_into(&mut self, sb: Value, v: &[Value], ty: &Ty) {
        match ty {
            Ty::Str => {
                self.rt(F::sspur_sb_str, &[sb, v[0], v[1]]);
            }
            Ty::Int => {
                self.rt(F::sspur_sb_int, &[sb, v[0]]);
            }
            _ => {
                let a = self.spill(v);
                let t = self.ty_id(ty);
                self.rt(F::sspur_sb_value, &[sb, a, t]);
            }
        }
    }

    fn binary(&mut self, e: ExprId, op: BinOp, lhs: ExprId, rhs: ExprId) -> Option<Vals> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let a = self.expr(lhs)?[0];
            let merge = self.b.create_block();
            self.b.append_block_param(merge, I64);
            let rb = self.b.create_block();
            if op == BinOp::And {
                self.b.ins().brif(a, rb, &[], merge, &ba(&[a]));
            } else {
                self.b.ins().brif(a, merge, &ba(&[a]), rb, &[]);
            }
            self.b.switch_to_block(rb);
            if let Some(r) = self.expr(rhs) {
                self.b.ins().jump(merge, &ba(&r[..1]));
            }
            self.b.switch_to_block(merge);
            return Some(vec![self.b.block_params(merge)[0]]);
        }
        let ty = self.body[lhs].ty.clone();
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        let r = match ty {
            Ty::F64 => {
                let (x, y) = (self.as_float(a[0]), self.as_float(b[0]));
                let arith = |s: &mut Self, v: Value| s.as_word(v);
                match op {
                    BinOp::Add => {
                        let v = self.b.ins().fadd(x, y);
                        arith(self, v)
                    }
                    BinOp::Sub => {
                        let v = self.b.ins().fsub(x, y);
                        arith(self, v)
                    }
                    BinOp::Mul => {
                        let v = self.b.ins().fmul(x, y);
                        arith(self, v)
                    }
                    BinOp::Div => {
                        let v = self.b.ins().fdiv(x, y);
                        arith(self, v)
                    }
                    BinOp::Rem => self.rt1(F::sspur_f64_rem, &[a[0], b[0]]),
                    _ => {
                        let cc = match op {
                            BinOp::Eq => FloatCC::Equal,
                            BinOp::Ne => FloatCC::NotEqual,
                            BinOp::Lt => FloatCC::LessThan,
                            BinOp::Le => FloatCC::LessThanOrEqual,
                            BinOp::Gt => FloatCC::GreaterThan,
                            _ => FloatCC::GreaterThanOrEqual,
                        };
                        let c = self.b.ins().fcmp(cc, x, y);
                        self.bool_val(c)
                    }
                }
            }
            Ty::Str => match op {
                BinOp::Add => {
                    let site = self.site(e);
                    return Some(self.rt(F::sspur_str_concat, &[a[0], a[1], b[0], b[1], site]));
                }
                BinOp::Eq | BinOp::Ne => {
                    let r = self.rt1(F::sspur_str_eq, &[a[0], a[1], b[0], b[1]]);
                    if op == BinOp::Ne {
                        self.b.ins().bxor_imm_s(r, 1)
                    } else {
                        r
                    }
                }
                _ => {
                    let c = self.rt1(F::sspur_str_cmp, &[a[0], a[1], b[0], b[1]]);
                    let c = self.b.ins().icmp_imm_s(int_cc(op, true), c, 0);
                    self.bool_val(c)
                }
            },
            _ => {
                let (x, y) = (a[0], b[0]);
                match op {
                    BinOp::Add => self.b.ins().iadd(x, y),
                    BinOp::Sub => self.b.ins().isub(x, y),
                    BinOp::Mul => self.b.ins().imul(x, y),
                    BinOp::Div | BinOp::Rem => {
                        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                        self.trap_if(zero, |s| s.trap_msg(e, "division by zero"));
                        // i64::MIN / -1 wraps (and would fault in hardware).
                        let m1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                        let one = self.iconst(1);
                        let safe = self.b.ins().select(m1, one, y);
                        if op == BinOp::Div {
                            let q = self.b.ins().sdiv(x, safe);
                            let n = self.b.ins().ineg(x);
                            self.b.ins().select(m1, n, q)
                        } else {
                            let r = self.b.ins().srem(x, safe);
                            let z = self.iconst(0);
                            self.b.ins().select(m1, z, r)
                        }
                    }
                    _ => {
                        let signed = !matches!(ty, Ty::Bool);
                        let c = self.b.ins().icmp(int_cc(op, signed), x, y);
                        self.bool_val(c)
                    }
                }
            }
        };
        Some(vec![r])
    }

    fn call(&mut self, e: ExprId, callee: &Callee, args: &[ExprId], ty: &Ty) -> Option<Vals> {
        match callee {
            Callee::Fn(f) => {
                let mut flat = Vec::new();
                for a in args {
                    flat.extend(self.expr(*a)?);
                }
                let id = self.sh.fns[f.into_raw().into_u32() as usize];
                let r = self.fref(id);
                let call = self.b.ins().call(r, &flat);
                let v = self.b.inst_results(call).to_vec();
                Some(self.fit(v, words(ty)))
            }
            Callee::Value(c) => {
                let cty = self.body[*c].ty.clone();
                let clo = self.expr(*c)?[0];
                let mut flat = Vec::new();
                for a in args {
                    flat.extend(self.expr(*a)?);
                }
                let v = self.call_closure(clo, &cty, flat);
                Some(self.fit(v, words(ty)))
            }
            Callee::Builtin(bi) => self.builtin(e, *bi, args, ty),
        }
    }

    /// Calls a closure value `[code, captures..]` with flattened arguments.
    fn call_closure(&mut self, clo: Value, fty: &Ty, args: Vals) -> Vals {
        let (ps, r) = match fty {
            Ty::Fn(ps, r) => (ps.to_vec(), (**r).clone()),
            _ => (vec![], Ty::Unit),
        };
        let sig = signature(self.sh.call_conv, true, &ps, &r);
        let sref = self.b.import_signature(sig);
        let code = self.b.ins().load(I64, flags(), clo, 0);
        let mut all = vec![clo];
        all.extend(args);
        let call = self.b.ins().call_indirect(sref, code, &all);
        self.b.inst_results(call).to_vec()
    }

    fn builtin(&mut self, e: ExprId, bi: Builtin, args: &[ExprId], ty: &Ty) -> Option<Vals> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(*a)?);
        }
        match bi {
            Builtin::Print | Builtin::Log => {
                let to = self.iconst(if bi == Builtin::Print { 1 } else { 2 });
                let aty = self.body[args[0]].ty.clone();
                let v = &vals[0];
                if aty == Ty::Str {
                    self.rt(F::sspur_print_str, &[v[0], v[1], to]);
                } else {
                    let a = self.spill(v);
                    let t = self.ty_id(&aty);
                    self.rt(F::sspur_print_value, &[a, t, to]);
                }
                Some(vec![self.iconst(0)])
            }
            Builtin::EmptyMap => {
                let kind = match ty {
                    Ty::Map(k, _) if **k == Ty::Str => rt::helpers::map::KEY_STR,
                    _ => rt::helpers::map::KEY_WORD,
                };
                let k = self.iconst(kind as i64);
                let site = self.site(e);
                Some(vec![self.rt1(F::sspur_map_new, &[k, site])])
            }
            Builtin::ReadFile => {
                let site = self.site(e);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_read_file, &[vals[0][0], vals[0][1], site, l, ll]))
            }
            Builtin::ReadStdin => {
                let site = self.site(e);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_read_stdin, &[site, l, ll]))
            }
            Builtin::Args => {
                let site = self.site(e);
                Some(self.rt(F::sspur_args, &[site]))
            }
            Builtin::Trap => {
                let (l, ll) = self.loc(e);
                self.rt(F::sspur_trap_msg, &[vals[0][0], vals[0][1], l, ll]);
                self.unreachable();
                None
            }
        }
    }

    fn index(&mut self, e: ExprId, base: ExprId, index: ExprId, ty: &Ty) -> Option<Vals> {
        let bty = self.body[base].ty.clone();
        let b = self.expr(base)?;
        let i = self.expr(index)?;
        match &bty {
            Ty::Map(k, _) => {
                let k = (**k).clone();
                let kv = self.fit(i.clone(), 2);
                let p = self.rt1(F::sspur_map_find, &[b[0], kv[0], kv[1]]);
                let missing = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
                self.trap_if(missing, |s| {
                    let a = s.spill(&i);
                    let t = s.ty_id(&k);
                    let (l, ll) = s.loc(e);
                    s.rt(F::sspur_trap_key, &[a, t, l, ll]);
                });
                Some(self.load_words(p, 0, words(ty)))
            }
            _ => {
                let ety = elem_of(&bty);
                self.bounds_check(e, i[0], b[1]);
                Some(self.elem_at(b[0], i[0], &ety))
            }
        }
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
        self.iconst(self.sh.tags as i64)
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

    /// Runs `body(self, i, elem)` for each element of `(p, len)`; `body`
    /// may branch out of the loop but must leave the builder in a block
    /// that continues with the next element.
    fn each(
        &mut self,
        p: Value,
        len: Value,
        ety: &Ty,
        mut body: impl FnMut(&mut Self, Value, Vals),
    ) {
        let i = self.b.declare_var(I64);
        let zero = self.iconst(0);
        self.b.def_var(i, zero);
        let head = self.b.create_block();
        let inner = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let iv = self.b.use_var(i);
        let c = self.b.ins().icmp(IntCC::SignedLessThan, iv, len);
        self.b.ins().brif(c, inner, &[], exit, &[]);
        self.b.switch_to_block(inner);
        let elem = self.elem_at(p, iv, ety);
        body(self, iv, elem);
        let iv = self.b.use_var(i);
        let next = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, next);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
    }

    fn fn_ret(fty: &Ty) -> Ty {
        match fty {
            Ty::Fn(_, r) => (**r).clone(),
            _ => Ty::Unit,
        }
    }

    fn method(
        &mut self,
        e: ExprId,
        m: Method,
        recv: ExprId,
        args: &[ExprId],
        ty: &Ty,
    ) -> Option<Vals> {
        use Method::*;
        let rty = self.body[recv].ty.clone();
        let r = self.expr(recv)?;
        let mut a = Vec::new();
        for x in args {
            a.push(self.expr(*x)?);
        }
        let aty = |s: &Self, i: usize| s.body[args[i]].ty.clone();
        let ety = elem_of(&rty);
        let es = elem_size(&ety);
        let one = |v: Value| Some(vec![v]);
        match m {
            ListLen | StrLen => one(r[1]),
            ListIsEmpty | StrIsEmpty => {
                let c = self.b.ins().icmp_imm_s(IntCC::Equal, r[1], 0);
                one(self.bool_val(c))
            }
            ListGet => {
                let bad = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThanOrEqual, a[0][0], r[1]);
                let okb = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, I64);
                let none = self.none();
                self.b.ins().brif(bad, merge, &ba(&[none]), okb, &[]);
                self.b.switch_to_block(okb);
                let v = self.elem_at(r[0], a[0][0], &ety);
                let s = self.some(e, &v);
                self.b.ins().jump(merge, &ba(&[s]));
                self.b.switch_to_block(merge);
                one(self.b.block_params(merge)[0])
            }
            ListFirst | ListLast | ListMin | ListMax => {
                let empty = self.b.ins().icmp_imm_s(IntCC::Equal, r[1], 0);
                let msg = format!("{} of an empty list", m.name());
                self.trap_if(empty, |s| s.trap_msg(e, &msg));
                let i = match m {
                    ListFirst => self.iconst(0),
                    ListLast => self.b.ins().iadd_imm_s(r[1], -1),
                    _ => {
                        let t = self.ty_id(&ety);
                        let want_max = self.iconst((m == ListMax) as i64);
                        self.rt1(F::sspur_list_extreme, &[r[0], r[1], t, want_max])
                    }
                };
                Some(self.elem_at(r[0], i, &ety))
            }
            ListContains => {
                let x = self.spill(&a[0]);
                let t = self.ty_id(&ety);
                one(self.rt1(F::sspur_list_contains, &[r[0], r[1], x, t]))
            }
            ListSum => {
                let acc = self.b.declare_var(I64);
                let z = self.iconst(0);
                self.b.def_var(acc, z);
                let is_f = ety == Ty::F64;
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let cur = s.b.use_var(acc);
                    let n = if is_f {
                        let (x, y) = (s.as_float(cur), s.as_float(v[0]));
                        let f = s.b.ins().fadd(x, y);
                        s.as_word(f)
                    } else {
                        s.b.ins().iadd(cur, v[0])
                    };
                    s.b.def_var(acc, n);
                });
                one(self.b.use_var(acc))
            }
            ListPush => {
                let one_ = self.iconst(1);
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_grow, &[r[0], r[1], one_, esv, ptrs, site]);
                let at = self.elem_addr(q, r[1], &ety);
                let v = self.fit(a[0].clone(), words(&ety));
                self.store_words(at, 0, &v);
                let n = self.b.ins().iadd_imm_s(r[1], 1);
                Some(vec![q, n])
            }
            ListConcat => {
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(
                    F::sspur_list_concat,
                    &[r[0], r[1], a[0][0], a[0][1], esv, ptrs, site],
                );
                let n = self.b.ins().iadd(r[1], a[0][1]);
                Some(vec![q, n])
            }
            ListTake | ListDrop => {
                let n = a[0][0];
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
                self.trap_if(neg, |s| {
                    let (l, ll) = s.loc(e);
                    s.rt(F::sspur_trap_count, &[n, l, ll]);
                });
                let k = self.b.ins().smin(n, r[1]);
                let (p, len) = if m == ListTake {
                    (r[0], k)
                } else {
                    let off = self.b.ins().imul_imm_s(k, es);
                    let p = self.b.ins().iadd(r[0], off);
                    (p, self.b.ins().isub(r[1], k))
                };
                let empty = self.b.ins().icmp_imm_s(IntCC::Equal, len, 0);
                let z = self.iconst(0);
                let p = self.b.ins().select(empty, z, p);
                Some(vec![p, len])
            }
            ListReverse => {
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_reverse, &[r[0], r[1], esv, ptrs, site]);
                Some(vec![q, r[1]])
            }
            ListSort => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_sort, &[r[0], r[1], t, site]);
                Some(vec![q, r[1]])
            }
            ListSortBy => {
                let fty = aty(self, 0);
                let kty = Self::fn_ret(&fty);
                let keys = self.list_alloc(e, r[1], &kty);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, i, v| {
                    let k = s.call_closure(f, &fty, v);
                    let k = s.fit(k, words(&kty));
                    let at = s.elem_addr(keys, i, &kty);
                    s.store_words(at, 0, &k);
                });
                let esv = self.iconst(es);
                let ptrs = self.iconst(has_pointers(&ety) as i64);
                let kt = self.ty_id(&kty);
                let site = self.site(e);
                let q = self.rt1(
                    F::sspur_list_sort_by,
                    &[r[0], r[1], esv, ptrs, keys, kt, site],
                );
                Some(vec![q, r[1]])
            }
            ListUnique => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                Some(self.rt(F::sspur_list_unique, &[r[0], r[1], t, site]))
            }
            ListEnumerate => {
                let w = self.iconst(words(&ety) as i64);
                let site = self.site(e);
                let q = self.rt1(F::sspur_list_enumerate, &[r[0], r[1], w, site]);
                Some(vec![q, r[1]])
            }
            ListZip => {
                let bty = elem_of(&aty(self, 0));
                let aw = self.iconst(words(&ety) as i64);
                let bw = self.iconst(words(&bty) as i64);
                let site = self.site(e);
                Some(self.rt(
                    F::sspur_list_zip,
                    &[r[0], r[1], aw, a[0][0], a[0][1], bw, site],
                ))
            }
            ListCounts => {
                let t = self.ty_id(&ety);
                let site = self.site(e);
                one(self.rt1(F::sspur_list_counts, &[r[0], r[1], t, site]))
            }
            ListJoin => {
                let site = self.site(e);
                Some(self.rt(F::sspur_list_join, &[r[0], r[1], a[0][0], a[0][1], site]))
            }
            ListMap => {
                let fty = aty(self, 0);
                let oty = elem_of(ty);
                let out = self.list_alloc(e, r[1], &oty);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, i, v| {
                    let x = s.call_closure(f, &fty, v);
                    let x = s.fit(x, words(&oty));
                    let at = s.elem_addr(out, i, &oty);
                    s.store_words(at, 0, &x);
                });
                Some(vec![out, r[1]])
            }
            ListFilter => {
                let fty = aty(self, 0);
                let out = self.list_alloc(e, r[1], &ety);
                let n = self.b.declare_var(I64);
                let z = self.iconst(0);
                self.b.def_var(n, z);
                let f = a[0][0];
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let keep = s.call_closure(f, &fty, v.clone())[0];
                    let yes = s.b.create_block();
                    let cont = s.b.create_block();
                    s.b.ins().brif(keep, yes, &[], cont, &[]);
                    s.b.switch_to_block(yes);
                    let k = s.b.use_var(n);
                    let at = s.elem_addr(out, k, &ety);
                    s.store_words(at, 0, &v);
                    let k1 = s.b.ins().iadd_imm_s(k, 1);
                    s.b.def_var(n, k1);
                    s.b.ins().jump(cont, &[]);
                    s.b.switch_to_block(cont);
                });
                let k = self.b.use_var(n);
                let q = self.rt1(F::sspur_list_finish, &[out, k]);
                Some(vec![q, k])
            }
            ListFlatMap => {
                let fty = aty(self, 0);
                let oty = elem_of(ty);
                let acc_p = self.b.declare_var(I64);
                let acc_n = self.b.declare_var(I64);
                let z = self.iconst(0);
                self.b.def_var(acc_p, z);
                self.b.def_var(acc_n, z);
                let f = a[0][0];
                let esv = self.iconst(elem_size(&oty));
                let ptrs = self.iconst(has_pointers(&oty) as i64);
                let site = self.site(e);
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let x = s.call_closure(f, &fty, v);
                    let (p, n) = (s.b.use_var(acc_p), s.b.use_var(acc_n));
                    let q = s.rt1(
                        F::sspur_list_append_tmp,
                        &[p, n, x[0], x[1], esv, ptrs, site],
                    );
                    let n2 = s.b.ins().iadd(n, x[1]);
                    s.b.def_var(acc_p, q);
                    s.b.def_var(acc_n, n2);
                });
                let (p, n) = (self.b.use_var(acc_p), self.b.use_var(acc_n));
                let q = self.rt1(F::sspur_list_finish, &[p, n]);
                Some(vec![q, n])
            }
            ListFold => {
                let fty = aty(self, 1);
                let w = words(ty);
                let accs: Vec<Variable> = (0..w).map(|_| self.b.declare_var(I64)).collect();
                let init = self.fit(a[0].clone(), w);
                for (v, x) in accs.iter().zip(&init) {
                    self.b.def_var(*v, *x);
                }
                let f = a[1][0];
                self.each(r[0], r[1], &ety, |s, _, v| {
                    let mut args: Vals = accs.iter().map(|x| s.b.use_var(*x)).collect();
                    args.extend(v);
                    let n = s.call_closure(f, &fty, args);
                    let n = s.fit(n, w);
                    for (var, x) in accs.iter().zip(n) {
                        s.b.def_var(*var, x);
                    }
                });
                Some(accs.iter().map(|x| self.b.use_var(*x)).collect())
            }
            ListAny | ListAll | ListFind => {
                let fty = aty(self, 0);
                let f = a[0][0];
                let found = self.b.create_block();
                self.b.append_block_param(found, I64);
                let done = self.b.create_block();
                self.b.append_block_param(done, I64);
                self.each(r[0], r[1], &ety, |s, i, v| {
                    let c = s.call_closure(f, &fty, v)[0];
                    let cont = s.b.create_block();
                    if m == ListAll {
                        s.b.ins().brif(c, cont, &[], found, &ba(&[i]));
                    } else {
                        s.b.ins().brif(c, found, &ba(&[i]), cont, &[]);
                    }
                    s.b.switch_to_block(cont);
                });
                // Fell off the end: any false, all true, find None.
                let end = match m {
                    ListAny => self.iconst(0),
                    ListAll => self.iconst(1),
                    _ => self.none(),
                };
                self.b.ins().jump(done, &ba(&[end]));
                self.b.switch_to_block(found);
                let i = self.b.block_params(found)[0];
                let hit = match m {
                    ListAny => self.iconst(1),
                    ListAll => self.iconst(0),
                    _ => {
                        let v = self.elem_at(r[0], i, &ety);
                        self.some(e, &v)
                    }
                };
                self.b.ins().jump(done, &ba(&[hit]));
                self.b.switch_to_block(done);
                one(self.b.block_params(done)[0])
            }
            StrByte => {
                self.bounds_check(e, a[0][0], r[1]);
                let addr = self.b.ins().iadd(r[0], a[0][0]);
                let v = self.b.ins().uload8(I64, flags(), addr, 0);
                one(v)
            }
            StrChars | StrWords | StrLines => {
                let site = self.site(e);
                let f = match m {
                    StrChars => F::sspur_str_chars,
                    StrWords => F::sspur_str_words,
                    _ => F::sspur_str_lines,
                };
                Some(self.rt(f, &[r[0], r[1], site]))
            }
            StrSplit => {
                let site = self.site(e);
                Some(self.rt(F::sspur_str_split, &[r[0], r[1], a[0][0], a[0][1], site]))
            }
            StrTrim => Some(self.rt(F::sspur_str_trim, &[r[0], r[1]])),
            StrLower | StrUpper => {
                let up = self.iconst((m == StrUpper) as i64);
                let site = self.site(e);
                Some(self.rt(F::sspur_str_case, &[r[0], r[1], up, site]))
            }
            StrReplace => {
                let site = self.site(e);
                Some(self.rt(
                    F::sspur_str_replace,
                    &[r[0], r[1], a[0][0], a[0][1], a[1][0], a[1][1], site],
                ))
            }
            StrRepeat => {
                let site = self.site(e);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_repeat, &[r[0], r[1], a[0][0], site, l, ll]))
            }
            StrContains | StrStartsWith | StrEndsWith => {
                let which = self.iconst(match m {
                    StrContains => 0,
                    StrStartsWith => 1,
                    _ => 2,
                });
                one(self.rt1(F::sspur_str_test, &[r[0], r[1], a[0][0], a[0][1], which]))
            }
            StrFind => {
                let i = self.rt1(F::sspur_str_find, &[r[0], r[1], a[0][0], a[0][1]]);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0);
                let yes = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, I64);
                let none = self.none();
                self.b.ins().brif(neg, merge, &ba(&[none]), yes, &[]);
                self.b.switch_to_block(yes);
                let s = self.some(e, &[i]);
                self.b.ins().jump(merge, &ba(&[s]));
                self.b.switch_to_block(merge);
                one(self.b.block_params(merge)[0])
            }
            StrTake | StrDrop => {
                let which = self.iconst((m == StrDrop) as i64);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_take_drop, &[r[0], r[1], a[0][0], which, l, ll]))
            }
            StrSlice => {
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_str_slice, &[r[0], r[1], a[0][0], a[1][0], l, ll]))
            }
            StrToInt => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_str_to_int, &[r[0], r[1], l, ll]))
            }
            StrToF64 => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_str_to_f64, &[r[0], r[1], l, ll]))
            }
            MapPut => {
                let k = self.fit(a[0].clone(), 2);
                let v = self.fit(a[1].clone(), 2);
                let site = self.site(e);
                self.rt(F::sspur_map_put, &[r[0], k[0], k[1], v[0], v[1], site]);
                one(r[0])
            }
            MapGet | MapRemove => {
                let k = self.fit(a[0].clone(), 2);
                let f = if m == MapGet {
                    F::sspur_map_find
                } else {
                    F::sspur_map_remove
                };
                let p = self.rt1(f, &[r[0], k[0], k[1]]);
                let vty = match &rty {
                    Ty::Map(_, v) => (**v).clone(),
                    _ => Ty::Error,
                };
                one(self.option_from_ptr(e, p, &vty))
            }
            MapGetOr => {
                let k = self.fit(a[0].clone(), 2);
                let p = self.rt1(F::sspur_map_find, &[r[0], k[0], k[1]]);
                let w = words(ty);
                let found = self.b.create_block();
                let merge = self.b.create_block();
                for _ in 0..w {
                    self.b.append_block_param(merge, I64);
                }
                let d = self.fit(a[1].clone(), w);
                self.b.ins().brif(p, found, &[], merge, &ba(&d));
                self.b.switch_to_block(found);
                let v = self.load_words(p, 0, w);
                self.b.ins().jump(merge, &ba(&v));
                self.b.switch_to_block(merge);
                Some(self.b.block_params(merge).to_vec())
            }
            MapHas => {
                let k = self.fit(a[0].clone(), 2);
                let p = self.rt1(F::sspur_map_find, &[r[0], k[0], k[1]]);
                let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, p, 0);
                one(self.bool_val(c))
            }
            MapLen => one(self.rt1(F::sspur_map_len, &[r[0]])),
            MapKeys | MapValues => {
                let part_ty = match (&rty, m) {
                    (Ty::Map(k, _), MapKeys) => (**k).clone(),
                    (Ty::Map(_, v), _) => (**v).clone(),
                    _ => Ty::Error,
                };
                let part = self.iconst((m == MapValues) as i64);
                let w = self.iconst(words(&part_ty).max(1) as i64);
                let ptrs = self.iconst(has_pointers(&part_ty) as i64);
                let site = self.site(e);
                Some(self.rt(F::sspur_map_part, &[r[0], part, w, ptrs, site]))
            }
            MapEntries => {
                let (kw, vw) = match &rty {
                    Ty::Map(k, v) => (words(k), words(v)),
                    _ => (1, 1),
                };
                let kw = self.iconst(kw as i64);
                let vw = self.iconst(vw as i64);
                let site = self.site(e);
                Some(self.rt(F::sspur_map_entries, &[r[0], kw, vw, site]))
            }
            IntToF64 => {
                let f = self.b.ins().fcvt_from_sint(F64, r[0]);
                one(self.as_word(f))
            }
            IntAbs => one(self.b.ins().iabs(r[0])),
            F64ToInt => {
                let (l, ll) = self.loc(e);
                one(self.rt1(F::sspur_f64_to_int, &[r[0], l, ll]))
            }
            F64Abs | F64Sqrt | F64Floor => {
                let x = self.as_float(r[0]);
                let y = match m {
                    F64Abs => self.b.ins().fabs(x),
                    F64Sqrt => self.b.ins().sqrt(x),
                    _ => self.b.ins().floor(x),
                };
                one(self.as_word(y))
            }
        }
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
