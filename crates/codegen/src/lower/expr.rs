//! Expressions: literals, locals, operators, aggregates, lambdas, `if` and
//! `match`, calls, built-ins and indexing.

use super::{ba, flags, int_cc, lambda_sig, signature, Lowerer, PendingLambda, Vals};
use crate::layout::{elem_of, has_pointers, offsets, words};
use crate::rtfns::F;
use ::ir::{
    BinOp, Builtin, Callee, ExprId, ExprKind, FnId, InterpPart, Lit, LocalId, Ty, TypeDefKind, UnOp,
};
use cranelift_codegen::ir::{condcodes::FloatCC, condcodes::IntCC, types::I64, InstBuilder, Value};
use cranelift_frontend::Variable;
use cranelift_module::{DataId, FuncId, Module};

impl<'a, 'm, 'f> Lowerer<'a, 'm, 'f> {
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
            // The closure calls of a method (`map`, `fold`, ..) are
            // calls at the method's position in trap call chains.
            ExprKind::Method {
                method,
                receiver,
                args,
            } => self.at_call(e, None, |s| s.method(e, *method, *receiver, args, &ty)),
            ExprKind::Index { base, index } => self.index(e, *base, *index, &ty),
            ExprKind::Field { base, index } => {
                if let ExprKind::Local(l) = self.body[*base].kind {
                    if let Some(parts) = self.param_parts.get(&l) {
                        return parts.get(*index as usize).cloned();
                    }
                }
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
                let p = self.alloc_cell(e, total, site);
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
                let p = self.alloc_cell(e, total, site);
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
                    let a = self.static_at(self.sh.tags, 8 * tag as i64);
                    return Some(vec![a]);
                }
                let (offs, total) = offsets(ftys.iter());
                let site = self.site(e);
                let p = self.alloc_cell(e, total + 1, site);
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
                if captures.is_empty() {
                    // Captures nothing: one static block `[code]` serves
                    // every evaluation, as for a function used as a value.
                    let n = self.sh.static_lambdas.len();
                    let did = self.declare_static_closure(&format!("lambda_static{n}"));
                    self.sh.static_lambdas.push((did, id));
                    return Some(vec![self.static_address(did)]);
                }
                let r = self.fref(id);
                let code = self.b.ins().func_addr(I64, r);
                let mut vals = Vec::new();
                let mut tys = Vec::new();
                for c in &captures {
                    vals.push(self.use_local(*c));
                    tys.push(self.body[*c].ty.clone());
                }
                let (offs, total) = offsets(tys.iter());
                if self.plan.frame_lambda(e).is_some() {
                    // Only the method it is an argument of calls it, and
                    // only during the call: the closure lives in this frame.
                    let zero = self.iconst(0);
                    let mut block = vec![zero; total + 1];
                    block[0] = code;
                    for (i, v) in vals.iter().enumerate() {
                        for (j, w) in v.iter().enumerate() {
                            block[1 + offs[i] + j] = *w;
                        }
                    }
                    return Some(vec![self.spill(&block)]);
                }
                let site = self.site(e);
                let p = self.alloc(total + 1, site);
                self.store_words(p, 0, &[code]);
                for (i, v) in vals.iter().enumerate() {
                    self.store_words(p, 1 + offs[i], v);
                }
                Some(vec![p])
            }
            ExprKind::Reuse { token, value, .. } => {
                // Saved and restored: an argument of the constructor may
                // itself be built in another token's block.
                let outer = self.reuse.take();
                if self.sh.drops {
                    let t = self.use_local(*token)[0];
                    self.reuse = Some((*value, t));
                }
                let v = self.expr(*value);
                self.reuse = outer;
                v
            }
            ExprKind::If { cond, then, else_ } => self.if_expr(*cond, *then, *else_, &ty),
            ExprKind::Match { scrutinee, arms } => self.match_expr(*scrutinee, arms, &ty),
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
                let probe = self.upsert_begin(e);
                let v = self.expr(*value)?;
                if let Some(probe) = probe {
                    let owned = self.sh.drops;
                    self.upsert_put(e, probe, m, (k, v), owned);
                    return Some(vec![m]);
                }
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
            ExprKind::SetInPlace {
                list, index, value, ..
            } => {
                // The index is checked first, as `xs[i]` checks it; then
                // element `i` of the receiver's own buffer is overwritten
                // (the ownership pass proved the receiver a whole list
                // nothing else refers to) and the result is that list.
                let r = self.expr(*list)?;
                let i = self.expr(*index)?[0];
                let v = self.expr(*value)?;
                let ety = elem_of(&self.body[*list].ty);
                self.bounds_check(e, i, r[1]);
                if has_pointers(&ety) {
                    // The buffer may be old and `v` young: the collector's
                    // barrier, with no allocation before the store.
                    self.rt(F::sspur_remember, &[r[0]]);
                }
                let at = self.elem_addr(r[0], i, &ety);
                let v = self.fit(v, words(&ety));
                self.store_words(at, 0, &v);
                Some(r)
            }
            ExprKind::BuilderNew { sep } => {
                let (p, l) = self.static_str(sep.as_bytes());
                let site = self.site(e);
                Some(vec![self.rt1(F::sspur_sb_new_sep, &[p, l, site])])
            }
            ExprKind::BuilderPush { builder, value } => {
                let sb = self.use_local(*builder)[0];
                let v = self.expr(*value)?;
                let site = self.site(e);
                self.rt(F::sspur_sb_piece, &[sb, v[0], v[1], site]);
                Some(vec![self.iconst(0)])
            }
            ExprKind::BuilderFinish { builder } => {
                let sb = self.use_local(*builder)[0];
                let site = self.site(e);
                Some(self.rt(F::sspur_sb_finish, &[sb, site]))
            }
        }
    }

    pub(super) fn fn_value(&mut self, f: FnId) -> Value {
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
                let did = self.declare_static_closure(&format!("fnvalue{n}"));
                self.sh.wrappers.push((f, wid));
                self.sh.fn_values.insert(f, did);
                did
            }
        };
        self.static_address(data)
    }

    /// A static closure block `[code]` of the module (defined once every
    /// function is compiled).
    fn declare_static_closure(&mut self, name: &str) -> DataId {
        self.sh
            .module
            .declare_data(name, cranelift_module::Linkage::Local, false, false)
            .expect("fresh data name")
    }

    fn static_address(&mut self, data: DataId) -> Value {
        let gv = self.sh.module.declare_data_in_func(data, self.b.func);
        self.b.ins().symbol_value(I64, gv)
    }

    pub(super) fn declare_lambda(&mut self, e: ExprId) -> FuncId {
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

    pub(super) fn interp(&mut self, e: ExprId, parts: &[InterpPart]) -> Option<Vals> {
        // The builder's growth traps at the interpolation, as its string's
        // allocation does. It never outlives the interpolation, so it lives
        // in this frame: the words `sspur_sb_new` would give a heap block.
        use rt::helpers::text::{BUILDER_SITE_WORD, BUILDER_WORDS};
        let site = self.site(e);
        let zero = self.iconst(0);
        let mut words = vec![zero; BUILDER_WORDS];
        words[BUILDER_SITE_WORD] = site;
        let sb = self.spill(&words);
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
        Some(self.rt(F::sspur_sb_finish_frame, &[sb, site]))
    }

    pub(super) fn show_into(&mut self, sb: Value, v: &[Value], ty: &Ty) {
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

    pub(super) fn binary(
        &mut self,
        e: ExprId,
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    ) -> Option<Vals> {
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

    pub(super) fn call(
        &mut self,
        e: ExprId,
        callee: &Callee,
        args: &[ExprId],
        ty: &Ty,
    ) -> Option<Vals> {
        match callee {
            Callee::Fn(f) => {
                let mut flat = Vec::new();
                for a in args {
                    flat.extend(self.expr(*a)?);
                }
                if self.sh.leaves.is_leaf(self.prog, *f) {
                    let v = self.inline_leaf(*f, &flat)?;
                    return Some(self.fit(v, words(ty)));
                }
                let id = self.sh.fns[f.into_raw().into_u32() as usize];
                let r = self.fref(id);
                let call = self.at_call(e, Some(id), |s| s.b.ins().call(r, &flat));
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
                let v = self.at_call(e, None, |s| s.call_closure(clo, &cty, flat));
                Some(self.fit(v, words(ty)))
            }
            Callee::Builtin(bi) => self.builtin(e, *bi, args, ty),
        }
    }

    /// Argument `a` of a method: a lambda the plan lowers in place of its
    /// calls makes no closure (its captures are noted for `apply`); any
    /// other is evaluated.
    pub(super) fn method_arg(&mut self, a: ExprId) -> Option<Vals> {
        if !self.plan.inline_lambda(a) {
            return self.expr(a);
        }
        let ExprKind::Lambda { captures, .. } = &self.body[a].kind else {
            return self.expr(a);
        };
        let caps = captures
            .clone()
            .into_iter()
            .map(|c| (c, self.use_local(c)))
            .collect();
        self.inlined.insert(a, caps);
        Some(vec![self.iconst(0)])
    }

    /// Calls function argument `f` (expression `lam`, value `clo`) of a
    /// method with flattened arguments: an inlined lambda's body lowered
    /// here with its parameters bound to them, else the closure's code.
    pub(super) fn apply(&mut self, lam: ExprId, clo: Value, fty: &Ty, args: Vals) -> Vals {
        let Some(caps) = self.inlined.get(&lam).cloned() else {
            return self.call_closure(clo, fty, args);
        };
        let ExprKind::Lambda { params, body, .. } = &self.body[lam].kind else {
            return self.call_closure(clo, fty, args);
        };
        let (params, body) = (params.clone(), *body);
        let r = Self::fn_ret(fty);
        // The captures as the closure would have held them.
        let saved: Vec<(LocalId, Option<Vals>)> = caps
            .into_iter()
            .map(|(c, v)| (c, self.lets.insert(c, v)))
            .collect();
        let mut at = 0;
        let unbuilt = self.plan.tuple_param(lam);
        let mut parts_saved = None;
        for l in params {
            if let (Some(p), Ty::Tuple(ts)) = (unbuilt, &self.body[l].ty) {
                if p == l {
                    // The tuple is never built: its components come instead.
                    let mut parts = Vec::new();
                    for t in ts.iter() {
                        let end = (at + words(t)).min(args.len());
                        parts.push(args[at.min(end)..end].to_vec());
                        at = end;
                    }
                    parts_saved = Some((l, self.param_parts.insert(l, parts)));
                    continue;
                }
            }
            let n = words(&self.body[l].ty);
            let end = (at + n).min(args.len());
            self.def_local(l, &args[at.min(end)..end]);
            at = end;
        }
        let out = match self.expr(body) {
            Some(v) => v,
            None => {
                // Cannot happen (the plan inlines no lambda that traps or
                // returns); code after it is unreachable.
                let dead = self.b.create_block();
                self.b.switch_to_block(dead);
                Vec::new()
            }
        };
        for (c, old) in saved {
            match old {
                Some(v) => self.lets.insert(c, v),
                None => self.lets.remove(&c),
            };
        }
        if let Some((l, old)) = parts_saved {
            match old {
                Some(v) => self.param_parts.insert(l, v),
                None => self.param_parts.remove(&l),
            };
        }
        self.fit(out, words(&r).max(1))
    }

    /// Calls a closure value `[code, captures..]` with flattened arguments.
    pub(super) fn call_closure(&mut self, clo: Value, fty: &Ty, args: Vals) -> Vals {
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

    pub(super) fn builtin(
        &mut self,
        e: ExprId,
        bi: Builtin,
        args: &[ExprId],
        ty: &Ty,
    ) -> Option<Vals> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(*a)?);
        }
        match bi {
            Builtin::Print | Builtin::Log | Builtin::Eprint => {
                let to = match bi {
                    Builtin::Print => 1,
                    Builtin::Log => 2,
                    _ => 3,
                };
                let to = self.iconst(to);
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
            Builtin::Exit => {
                let (l, ll) = self.loc(e);
                self.rt(F::sspur_exit, &[vals[0][0], l, ll]);
                self.unreachable();
                None
            }
            Builtin::ReadLines => {
                let site = self.site(e);
                let (l, ll) = self.loc(e);
                Some(self.rt(F::sspur_read_lines, &[site, l, ll]))
            }
            Builtin::WriteFile | Builtin::AppendFile => {
                let append = self.iconst((bi == Builtin::AppendFile) as i64);
                let site = self.site(e);
                let (p, t) = (&vals[0], &vals[1]);
                let msg = self.rt(F::sspur_write_file, &[p[0], p[1], t[0], t[1], append, site]);
                // A null message pointer is success: `None`.
                Some(vec![self.option_if(e, msg[0], &msg)])
            }
        }
    }

    /// The address of key `k`'s value words in map `m`, or null, for
    /// lookup `e`: `sspur_map_find`, or for the lookup of a fused upsert
    /// (`ir::upsert`) `sspur_map_probe`, whose answer its put reuses.
    pub(super) fn map_lookup(&mut self, e: ExprId, m: Value, k: &[Value]) -> Value {
        let kv = self.fit(k.to_vec(), 2);
        let Some(&var) = self.probes.get(&e) else {
            return self.rt1(F::sspur_map_find, &[m, kv[0], kv[1]]);
        };
        let answer = self.rt1(F::sspur_map_probe, &[m, kv[0], kv[1]]);
        self.b.def_var(var, answer);
        // An odd answer is where an insertion would go: not found.
        let odd = self.b.ins().band_imm_u(answer, 1);
        let null = self.iconst(0);
        self.b.ins().select(odd, null, answer)
    }

    /// Before the value of put `e` is lowered: when `e` ends a fused
    /// upsert, the variable its lookup's probe answer goes to.
    pub(super) fn upsert_begin(&mut self, e: ExprId) -> Option<(ExprId, Variable)> {
        let lookup = self.upserts.fused_put(e)?.lookup;
        let var = self.new_temp();
        // Never read as is: the lookup runs on every way to the put.
        let none = self.iconst(-1);
        self.b.def_var(var, none);
        self.probes.insert(lookup, var);
        Some((lookup, var))
    }

    /// The put of a fused upsert (`upsert_begin` gave `probe`): the value
    /// is written where the lookup's probe found the key (inline for a
    /// value without pointers and a key not owned: no barrier, no free),
    /// else by `sspur_map_commit`, which inserts at the slot the probe
    /// found; an owned key the map already held is freed, as `put_owned`
    /// frees it.
    pub(super) fn upsert_put(
        &mut self,
        e: ExprId,
        probe: (ExprId, Variable),
        m: Value,
        kv: (Vals, Vals),
        owned: bool,
    ) {
        let (lookup, var) = probe;
        self.probes.remove(&lookup);
        let answer = self.b.use_var(var);
        let (k, v) = kv;
        let vty = match &self.body[e].ty {
            Ty::Map(_, v) => (**v).clone(),
            _ => Ty::Error,
        };
        let k = self.fit(k, 2);
        let site = self.site(e);
        let inline = !owned && !has_pointers(&vty);
        let done = self.b.create_block();
        if inline {
            let slow = self.b.create_block();
            let fast = self.b.create_block();
            let odd = self.b.ins().band_imm_u(answer, 1);
            self.b.ins().brif(odd, slow, &[], fast, &[]);
            self.b.switch_to_block(fast);
            let vw = self.fit(v.clone(), words(&vty));
            self.store_words(answer, 0, &vw);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(slow);
        }
        let v = self.fit(v, 2);
        let present = self.rt1(
            F::sspur_map_commit,
            &[m, answer, k[0], k[1], v[0], v[1], site],
        );
        if owned {
            // An empty key string has no block.
            let has_block = self.b.ins().icmp_imm_s(IntCC::NotEqual, k[1], 0);
            let present = self.b.ins().icmp_imm_s(IntCC::NotEqual, present, 0);
            let free = self.b.ins().band(present, has_block);
            let drop_key = self.b.create_block();
            self.b.ins().brif(free, drop_key, &[], done, &[]);
            self.b.switch_to_block(drop_key);
            let kind = self.iconst(rt::BlockKind::Str as i64);
            self.rt(F::sspur_free_cell, &[k[0], kind, site]);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// The address of key `k`'s value words in map `m`; traps `key not
    /// found` at `e` when it is missing (`m[k]`, `m.update(k, f)`).
    pub(super) fn map_find_or_trap(&mut self, e: ExprId, m: Value, k: &[Value], kty: &Ty) -> Value {
        let p = self.map_lookup(e, m, k);
        let missing = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        self.trap_if(missing, |s| {
            let a = s.spill(k);
            let t = s.ty_id(kty);
            let (l, ll) = s.loc(e);
            s.rt(F::sspur_trap_key, &[a, t, l, ll]);
        });
        p
    }

    pub(super) fn index(
        &mut self,
        e: ExprId,
        base: ExprId,
        index: ExprId,
        ty: &Ty,
    ) -> Option<Vals> {
        let bty = self.body[base].ty.clone();
        let b = self.expr(base)?;
        let i = self.expr(index)?;
        match &bty {
            Ty::Map(k, _) => {
                let k = (**k).clone();
                let p = self.map_find_or_trap(e, b[0], &i, &k);
                Some(self.load_words(p, 0, words(ty)))
            }
            _ => {
                let ety = elem_of(&bty);
                self.bounds_check(e, i[0], b[1]);
                Some(self.elem_at(b[0], i[0], &ety))
            }
        }
    }
}
