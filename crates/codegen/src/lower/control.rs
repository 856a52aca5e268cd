//! Blocks, statements (bindings, assignments, drops, loops), `if`,
//! `match` and patterns.

use super::{ba, flags, Iter, Lowerer, Next, Site, Vals};
use crate::layout::{elem_of, offsets, words};
use crate::rtfns::F;
use ::ir::{
    Body, Ctor, ExprId, ExprKind, Lit, LocalId, MatchArm, OldValue, PatId, PatKind, StmtId,
    StmtKind, Ty, TypeDefKind,
};
use cranelift_codegen::ir::{
    self as clif, condcodes::FloatCC, condcodes::IntCC, types::I64, InstBuilder, Value,
};

impl<'a, 'm, 'f> Lowerer<'a, 'm, 'f> {
    pub(super) fn block(&mut self, stmts: &[StmtId], tail: Option<ExprId>) -> Option<Vals> {
        for &s in stmts {
            let mark = self.temps_mark();
            self.stmt(s)?;
            self.release_temps(mark);
        }
        let mark = self.temps_mark();
        let v = match tail {
            Some(t) => self.expr(t)?,
            None => vec![self.iconst(0)],
        };
        self.release_temps(mark);
        // The block's `var`s end with it.
        for &s in stmts {
            if let StmtKind::Var { local, .. } = self.body[s].kind {
                self.release_local(local);
            }
        }
        Some(v)
    }

    pub(super) fn stmt(&mut self, s: StmtId) -> Option<()> {
        match &self.body[s].kind {
            // A fused chain reads through this `let`: its init runs where
            // the chain does, and the local is never read.
            StmtKind::Let { .. } if self.plan.let_fused(s).is_some() => {}
            StmtKind::Let { pat, init } => match self.unbuilt_parts(*init) {
                Some(parts) => {
                    let never = self.b.create_block();
                    self.test_parts(*pat, &parts, never);
                    let cont = self.b.create_block();
                    self.b.ins().jump(cont, &[]);
                    self.b.switch_to_block(never);
                    self.unreachable();
                    self.b.switch_to_block(cont);
                }
                None => {
                    let v = self.expr(*init)?;
                    self.bind(*pat, &v);
                }
            },
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
                match old {
                    _ if !self.sh.drops => {}
                    OldValue::Keep => {}
                    OldValue::FreeCell { deep, .. } => {
                        self.free_cell(before[0], *deep, s, *local);
                    }
                    OldValue::Free { deep } if before.len() == 2 => {
                        self.drop_vals(&before, *deep, s, *local);
                    }
                    OldValue::FreeIfMoved if before.len() == 2 => {
                        let moved = self.b.ins().icmp(IntCC::NotEqual, before[0], v[0]);
                        let yes = self.b.create_block();
                        let done = self.b.create_block();
                        self.b.ins().brif(moved, yes, &[], done, &[]);
                        self.b.switch_to_block(yes);
                        self.drop_vals(&before, false, s, *local);
                        self.b.ins().jump(done, &[]);
                        self.b.switch_to_block(done);
                    }
                    OldValue::Free { .. } | OldValue::FreeIfMoved => {}
                }
            }
            StmtKind::Expr(e) => {
                self.expr(*e)?;
            }
            StmtKind::For { pat, iter, body } => return self.for_loop(s, *pat, *iter, *body),
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
                let ty = self.body[d.local].ty.clone();
                if self.sh.drops && ty.is_freeable() {
                    let v = self.use_local(d.local);
                    self.drop_vals(&v, d.deep, s, d.local);
                } else if self.sh.drops && ty.is_cell() {
                    let v = self.use_local(d.local);
                    self.free_cell(v[0], d.deep, s, d.local);
                } else if self.sh.drops && matches!(ty, Ty::Fn(..)) {
                    // A closure only called: its block (a static one is
                    // outside the heap, which the free ignores).
                    let v = self.use_local(d.local);
                    let site = self.drop_site(s, d.local);
                    let kind = self.iconst(rt::BlockKind::Closure as i64);
                    self.rt(F::sspur_free_cell, &[v[0], kind, site]);
                }
            }
            StmtKind::Clear { local, pat, .. } => {
                if self.sh.drops {
                    let v = self.use_local(*local);
                    self.clear_fields(v[0], *pat);
                }
            }
        }
        Some(())
    }

    /// Frees the cell `v` (a value of `local`'s type) at statement `s`:
    /// with `deep`, every block it owns too (through the type descriptors).
    fn free_cell(&mut self, v: Value, deep: bool, s: StmtId, local: LocalId) {
        let site = self.drop_site(s, local);
        if deep {
            let ty = self.body[local].ty.clone();
            let t = self.ty_id(&ty);
            let zero = self.iconst(0);
            self.rt(F::sspur_free_deep, &[v, zero, t, site]);
        } else {
            let kind = self.iconst(rt::BlockKind::Cell as i64);
            self.rt(F::sspur_free_cell, &[v, kind, site]);
        }
    }

    /// Frees a local's block at statement `s` (check mode reports name the
    /// drop by its site: the statement, or the local when the statement was
    /// made by the ownership pass and has no span).
    pub(super) fn drop_vals(&mut self, v: &[Value], deep: bool, s: StmtId, local: LocalId) {
        let site = self.drop_site(s, local);
        if deep {
            self.rt(F::sspur_drop_strs, &[v[0], v[1], site]);
        } else {
            let kind = match self.body[local].ty {
                Ty::Str => rt::BlockKind::Str,
                _ => rt::BlockKind::List,
            };
            // An empty value has no block. The length is tested here, not
            // in the runtime, so it need not live until the call: a loop
            // that reads the value before its drop keeps its registers.
            let call = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(v[1], call, &[], done, &[]);
            self.b.switch_to_block(call);
            let kind = self.iconst(kind as i64);
            self.rt(F::sspur_free_cell, &[v[0], kind, site]);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        }
    }

    /// The site id naming the drop of `local` at statement `s`.
    fn drop_site(&mut self, s: StmtId, local: LocalId) -> Value {
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
        self.iconst(self.sh.sites.len() as i64)
    }

    pub(super) fn for_loop(
        &mut self,
        s: StmtId,
        pat: PatId,
        iter: ExprId,
        body: ExprId,
    ) -> Option<()> {
        let run_body = |s: &mut Self, item: Vals, next: Next| {
            s.bind(pat, &item);
            s.loops.push((next.latch, next.exit));
            let r = s.expr(body);
            s.loops.pop();
            r.is_some()
        };
        // A fused chain (`for x in xs.map(f)`): one loop, no list.
        if let Some(c) = self.plan.fused_for(s).cloned() {
            let st = self.stream(&c)?;
            self.run_stream(st, |s, _, item, next| run_body(s, item, next));
            return Some(());
        }
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
        self.counted_loop(
            start,
            |s, iv, exit| {
                s.leave_unless(IntCC::SignedLessThan, iv, end, exit);
                match &it {
                    Iter::Range(..) => vec![iv],
                    Iter::List(p, _, ety) => s.elem_at(*p, iv, ety),
                }
            },
            |s, _, item, next| run_body(s, item, next),
        );
        Some(())
    }

    /// One loop with a counter `i` from `start`, step 1. In the head,
    /// `pull(self, i, exit)` branches to `exit` when nothing is left and
    /// gives the element in the block that goes on; `body(self, i, elem,
    /// next)` runs it and says whether its end is reachable (it may jump to
    /// `next.latch` to go on or to `next.exit` to stop early). The builder
    /// ends in the exit block. `each`, `each_piece` and `for` share it.
    pub(super) fn counted_loop(
        &mut self,
        start: Value,
        pull: impl FnOnce(&mut Self, Value, clif::Block) -> Vals,
        body: impl FnOnce(&mut Self, Value, Vals, Next) -> bool,
    ) {
        let i = self.new_temp();
        self.b.def_var(i, start);
        let head = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let iv = self.b.use_var(i);
        let elem = pull(self, iv, exit);
        let iv = self.b.use_var(i);
        if body(self, iv, elem, Next { latch, exit }) {
            self.b.ins().jump(latch, &[]);
        }
        self.b.switch_to_block(latch);
        let iv = self.b.use_var(i);
        let next = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, next);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
    }

    /// Goes on in a new block when `a cc b`, and to `exit` otherwise.
    pub(super) fn leave_unless(&mut self, cc: IntCC, a: Value, b: Value, exit: clif::Block) {
        let c = self.b.ins().icmp(cc, a, b);
        let go_on = self.b.create_block();
        self.b.ins().brif(c, go_on, &[], exit, &[]);
        self.b.switch_to_block(go_on);
    }

    /// Binds an irrefutable pattern (let, for, lambda-free positions).
    /// The components of the tuple `e` names when it is never built (the
    /// parameter of an inlined lambda, `Plan::tuple_param`).
    fn unbuilt_parts(&self, e: ExprId) -> Option<Vec<Vals>> {
        match self.body[e].kind {
            ExprKind::Local(l) => self.param_parts.get(&l).cloned(),
            _ => None,
        }
    }

    /// `test_pat` of a tuple never built, given its components: the plan
    /// lets only a tuple pattern or `_` take it apart.
    fn test_parts(&mut self, pat: PatId, parts: &[Vals], fail: clif::Block) {
        if let PatKind::Tuple(ps) = &self.body[pat].kind {
            for (sub, v) in ps.clone().into_iter().zip(parts) {
                self.test_pat(sub, v, fail);
            }
        }
    }

    pub(super) fn bind(&mut self, pat: PatId, v: &[Value]) {
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
    pub(super) fn test_pat(&mut self, pat: PatId, v: &[Value], fail: clif::Block) {
        let p = &self.body[pat];
        match &p.kind {
            PatKind::Missing | PatKind::Wild => {}
            PatKind::Bind(l) => self.def_local(*l, v),
            PatKind::At { local, pat } => {
                self.test_pat(*pat, v, fail);
                self.def_local(*local, v);
            }
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

    /// Zeroes the words of the fields of the block at `p` that pattern
    /// `pat` (a constructor or tuple pattern) binds to values holding
    /// blocks: the reuse token a destructive match took apart no longer
    /// points at them (`StmtKind::Clear`).
    fn clear_fields(&mut self, p: Value, pat: PatId) {
        let (first, tys, args): (usize, Vec<Ty>, Vec<PatId>) = match &self.body[pat].kind {
            PatKind::Ctor { ctor, args } => {
                let (_, ftys) = self.ctor_shape(*ctor, &self.body[pat].ty);
                (1, ftys, args.clone())
            }
            PatKind::Tuple(ps) => (
                0,
                ps.iter().map(|q| self.body[*q].ty.clone()).collect(),
                ps.clone(),
            ),
            _ => return,
        };
        let (offs, _) = offsets(tys.iter());
        let zero = self.iconst(0);
        for (i, sub) in args.iter().enumerate() {
            let Some(fty) = tys.get(i) else { break };
            let binds = matches!(self.body[*sub].kind, PatKind::Bind(_) | PatKind::At { .. });
            if binds && !matches!(fty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never) {
                let zeros = vec![zero; words(fty)];
                self.store_words(p, first + offs[i], &zeros);
            }
        }
    }

    /// A constructor's tag and field types.
    pub(super) fn ctor_shape(&self, ctor: Ctor, ty: &Ty) -> (u32, Vec<Ty>) {
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

    /// `if c { a } else { b }`: both arms jump to a merge block with the
    /// value's words as parameters; `None` when neither arm reaches it.
    pub(super) fn if_expr(
        &mut self,
        cond: ExprId,
        then: ExprId,
        else_: Option<ExprId>,
        ty: &Ty,
    ) -> Option<Vals> {
        let c = self.expr(cond)?[0];
        let n = words(ty);
        let tb = self.b.create_block();
        let eb = self.b.create_block();
        let merge = self.b.create_block();
        for _ in 0..n {
            self.b.append_block_param(merge, I64);
        }
        self.b.ins().brif(c, tb, &[], eb, &[]);
        let mut reached = false;
        self.b.switch_to_block(tb);
        if let Some(v) = self.expr(then) {
            let v = self.fit(v, n);
            self.b.ins().jump(merge, &ba(&v));
            reached = true;
        }
        self.b.switch_to_block(eb);
        let ev = match else_ {
            Some(x) => self.expr(x),
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

    /// `match`: each arm tests its pattern and falls through to the next
    /// on failure; falling off the last arm is unreachable (the checker
    /// proved the match exhaustive).
    pub(super) fn match_expr(
        &mut self,
        scrutinee: ExprId,
        arms: &[MatchArm],
        ty: &Ty,
    ) -> Option<Vals> {
        // A tuple literal taken apart: the words of each element; or a
        // tuple never built: its components.
        let parts = match tuple_parts(self.body, scrutinee, arms) {
            Some(xs) => {
                let mut vals = Vec::with_capacity(xs.len());
                for &x in xs {
                    vals.push(self.expr(x)?);
                }
                Some(vals)
            }
            None => self.unbuilt_parts(scrutinee),
        };
        let v = match parts {
            Some(_) => Vec::new(),
            None => self.expr(scrutinee)?,
        };
        let n = words(ty);
        let merge = self.b.create_block();
        for _ in 0..n {
            self.b.append_block_param(merge, I64);
        }
        let mut reached = false;
        for arm in arms {
            let fail = self.b.create_block();
            match &parts {
                Some(parts) => self.test_parts(arm.pat, parts, fail),
                None => self.test_pat(arm.pat, &v, fail),
            }
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
}

/// The elements of a tuple literal that `match` takes apart where it
/// stands (`match (a, b) { (Val(x), _) => .. }`): when every arm's pattern
/// is a tuple pattern or a wildcard, no arm sees the tuple whole, so it is
/// never built and each pattern tests the elements' values directly.
pub(super) fn tuple_parts<'b>(
    body: &'b Body,
    scrutinee: ExprId,
    arms: &[MatchArm],
) -> Option<&'b [ExprId]> {
    let ExprKind::Tuple(xs) = &body[scrutinee].kind else {
        return None;
    };
    let whole = arms.iter().any(|a| match &body[a.pat].kind {
        PatKind::Tuple(ps) => ps.len() != xs.len(),
        PatKind::Wild => false,
        _ => true,
    });
    (!whole).then_some(xs.as_slice())
}
