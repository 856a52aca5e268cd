//! Writes the decisions into a copy of a body as explicit IR forms: drops,
//! old-value frees on assignments, consumed keys, string builders, and
//! temporaries bound to `Temp` locals inside blocks.
//!
//! Original expressions keep their ids (so allocation sites stay
//! addressable); new nodes are appended to the arenas and take the span of
//! the node they stand for.

use std::collections::{HashMap, HashSet};

use ir::fusion::Consumer;
use ir::visit::{children, children_mut};
use ir::{
    Body, BodySourceMap, ExprId, ExprKind, LocalId, LocalKind, OldValue, Pat, PatId, PatKind, Span,
    Stmt, StmtId, StmtKind, Ty,
};

/// Everything the rewrite inserts into one body.
#[derive(Default, Debug)]
pub struct Plan {
    /// Per block: (statement index after which to drop, local, deep, reason).
    pub drops: HashMap<ExprId, Vec<(usize, LocalId, bool, u32)>>,
    /// Expressions bound to a temporary and dropped after their read, with
    /// the drop's reason.
    pub temps: HashMap<ExprId, u32>,
    /// Temporaries that own their strings (freed deeply).
    pub deep_temps: HashSet<ExprId>,
    pub assigns: HashMap<StmtId, OldValue>,
    /// `Map.put` expressions whose key is consumed.
    pub puts: HashSet<ExprId>,
    /// Builder vars: the join that finishes them and the separator.
    pub builders: HashMap<LocalId, (ExprId, String)>,
    /// Destructive matches: per arm, what dies at its start.
    pub matches: HashMap<ExprId, Vec<ArmStart>>,
    /// Constructors built in a reuse token's block: (token, reason).
    pub reuses: HashMap<ExprId, (LocalId, u32)>,
    /// Branches (of an `if` or `match` in a destructive match's arm) at
    /// whose start reuse tokens are freed: the paths through them build
    /// none of the tokens' constructors.
    pub branch_frees: HashMap<ExprId, Vec<(LocalId, u32)>>,
    /// Branches at whose start owned-deep locals are dropped deep: the
    /// paths through them neither hand the local on nor share it, others
    /// do: (local, reason).
    pub branch_drops: HashMap<ExprId, Vec<(LocalId, u32)>>,
    /// Branches (not blocks) after whose value owned-deep locals are
    /// dropped deep, as `branch_drops` (the branch only borrows them).
    pub branch_ends: HashMap<ExprId, Vec<(LocalId, u32)>>,
    /// `if`s without `else` given one that drops these locals deep (the
    /// `then` branch hands them on or shares them): (local, reason).
    pub else_drops: HashMap<ExprId, Vec<(LocalId, u32)>>,
    /// Branches at whose start reused tokens' fields are cleared (the
    /// paths of an arm that take the value apart when others hand it on
    /// whole), before any frees there: (token, its pattern, reason).
    pub branch_clears: HashMap<ExprId, Vec<(LocalId, PatId, u32)>>,
    /// Per (destructive match, arm): fields it moved out that are dropped
    /// deep once the arm's value is made.
    pub arm_ends: HashMap<(ExprId, usize), Vec<(LocalId, u32)>>,
    /// Fused chains whose source is a temporary (in `temps`): bound before
    /// the chain and dropped after its consumer, so the chain reads a name.
    pub fused_sources: HashMap<Consumer, ExprId>,
    /// `set` calls written into their receiver's buffer, with the reason.
    pub sets: HashMap<ExprId, u32>,
    /// Calls that run the callee's owning version: the callee, then (once
    /// the versions exist) that version.
    pub owning_calls: HashMap<ExprId, ir::FnId>,
    /// Calls the arm's result is, handed a reuse token: (the token, its
    /// size class, the reason). The call runs the callee's `#token`
    /// version, with the token as a last argument.
    pub token_calls: HashMap<ExprId, (LocalId, usize, u32)>,
    /// The `#token` version each of `token_calls` runs (once it exists).
    pub token_targets: HashMap<ExprId, ir::FnId>,
    /// In a `#token` version: its token parameter.
    pub handed_token: Option<LocalId>,
    /// Unique locals not owned deep, dropped shallow (their block only).
    pub shallow: HashMap<LocalId, crate::shallow::ShallowEnd>,
    /// Temporaries (in `temps`) that are unique cells not owned deep.
    pub shallow_temps: HashSet<ExprId>,
    /// Per owned-deep var, what each update does with the value it
    /// replaces (built into, freed in `assigns`, moved in or kept).
    pub updates: HashMap<LocalId, Vec<crate::cells::Update>>,
}

/// What a destructive match's arm frees at its start: drops of the token
/// local (deep: the whole value; shallow: its block), and pattern `_`
/// fields (bound to a temporary and dropped deep), each with a reason.
#[derive(Default, Debug, Clone)]
pub struct ArmStart {
    pub token: Option<(LocalId, bool, u32)>,
    /// Cells a nested pattern took apart, freed (their block only).
    pub tokens: Vec<(LocalId, u32)>,
    pub fields: Vec<(PatId, u32)>,
    pub binds: Vec<(LocalId, u32)>,
    /// Reused tokens whose fields are cleared first (`StmtKind::Clear`),
    /// with the pattern that took each apart.
    pub clears: Vec<(LocalId, PatId, u32)>,
    /// Drop the dead fields and binds when the arm's value is made, not at
    /// its start (the arm reuses the token's block, which points at them).
    pub at_end: bool,
}

pub fn rewrite(body: &Body, sm: &BodySourceMap, plan: &Plan) -> (Body, BodySourceMap) {
    let mut rw = Rw {
        body: body.clone(),
        sm: sm.clone(),
        plan,
        joins: plan.builders.iter().map(|(l, (j, _))| (*j, *l)).collect(),
    };
    if let Some(root) = body.root {
        let r = rw.expr(root);
        rw.body.root = Some(r);
    }
    (rw.body, rw.sm)
}

struct Rw<'a> {
    body: Body,
    sm: BodySourceMap,
    plan: &'a Plan,
    joins: HashMap<ExprId, LocalId>,
}

impl Rw<'_> {
    fn span(&self, e: ExprId) -> Span {
        self.sm.expr(e)
    }

    fn new_expr(&mut self, kind: ExprKind, ty: Ty, span: Span) -> ExprId {
        let id = self.body.exprs.alloc(ir::Expr { kind, ty });
        self.sm.exprs.insert(id, span);
        id
    }

    fn new_stmt(&mut self, kind: StmtKind, span: Span) -> StmtId {
        let id = self.body.stmts.alloc(Stmt { kind });
        self.sm.stmts.insert(id, span);
        id
    }

    fn new_temp(&mut self, name: &str, ty: Ty, span: Span) -> LocalId {
        let l = self.body.locals.alloc(ir::Local {
            name: name.into(),
            ty,
            kind: LocalKind::Temp,
        });
        self.sm.locals.insert(l, span);
        l
    }

    /// `let t = value` for a new temporary; returns the let and `t`.
    fn bind(&mut self, value: ExprId, name: &str) -> (StmtId, LocalId) {
        let ty = self.body[value].ty.clone();
        let span = self.span(value);
        let t = self.new_temp(name, ty.clone(), span);
        let pat = self.body.pats.alloc(Pat {
            kind: PatKind::Bind(t),
            ty,
        });
        self.sm.pats.insert(pat, span);
        let s = self.new_stmt(StmtKind::Let { pat, init: value }, span);
        self.body.temp_inits.insert(t, value);
        (s, t)
    }

    fn local_expr(&mut self, t: LocalId, span: Span) -> ExprId {
        let ty = self.body.locals[t].ty.clone();
        self.new_expr(ExprKind::Local(t), ty, span)
    }

    fn drop_stmt(&mut self, t: LocalId, deep: bool, reason: u32, span: Span) -> StmtId {
        self.new_stmt(
            StmtKind::Drop(ir::Drop {
                local: t,
                deep,
                reason,
            }),
            span,
        )
    }

    fn is_temp(&self, e: ExprId) -> Option<u32> {
        self.plan.temps.get(&e).copied()
    }

    fn temp_drop(&mut self, orig: ExprId, t: LocalId, reason: u32, span: Span) -> StmtId {
        let deep = self.plan.deep_temps.contains(&orig);
        self.drop_stmt(t, deep, reason, span)
    }

    /// Deep drops of the locals given, with their reasons.
    fn deep_drops(&mut self, locals: &[(LocalId, u32)], span: Span) -> Vec<StmtId> {
        locals
            .iter()
            .map(|&(l, reason)| self.drop_stmt(l, true, reason, span))
            .collect()
    }

    fn expr(&mut self, e: ExprId) -> ExprId {
        let mut r = self.expr_here(e);
        if let Some(ends) = self.plan.branch_ends.get(&e) {
            let drops = self.deep_drops(ends, self.span(e));
            if self.body[e].ty != Ty::Never {
                r = self.wrap(r, Vec::new(), drops);
            }
        }
        if let Some(drops) = self.plan.else_drops.get(&e) {
            let span = self.span(e);
            let stmts = self.deep_drops(drops, span);
            let block = self.new_expr(ExprKind::Block { stmts, tail: None }, Ty::Unit, span);
            if let ExprKind::If {
                else_: else_ @ None,
                ..
            } = &mut self.body.exprs[e].kind
            {
                *else_ = Some(block);
            }
        }
        let clears = self.plan.branch_clears.get(&e);
        let frees = self.plan.branch_frees.get(&e);
        let drops = self.plan.branch_drops.get(&e);
        if clears.is_none() && frees.is_none() && drops.is_none() {
            return r;
        }
        let span = self.span(e);
        let mut stmts: Vec<StmtId> = Vec::new();
        for &(local, pat, reason) in clears.into_iter().flatten() {
            stmts.push(self.new_stmt(StmtKind::Clear { local, pat, reason }, span));
        }
        for &(l, reason) in frees.into_iter().flatten() {
            stmts.push(self.drop_stmt(l, false, reason, span));
        }
        if let Some(drops) = drops {
            stmts.extend(self.deep_drops(drops, span));
        }
        if let ExprKind::Block { stmts: inner, .. } = &mut self.body.exprs[r].kind {
            stmts.append(inner);
            *inner = stmts;
            return r;
        }
        let ty = self.body[e].ty.clone();
        self.new_expr(
            ExprKind::Block {
                stmts,
                tail: Some(r),
            },
            ty,
            span,
        )
    }

    /// [`Rw::expr`] without the token frees at the start of a branch.
    fn expr_here(&mut self, e: ExprId) -> ExprId {
        if matches!(self.body[e].kind, ExprKind::Block { .. }) {
            self.block(e);
            return e;
        }
        if let Some(&b) = self.joins.get(&e) {
            self.body.exprs[e].kind = ExprKind::BuilderFinish { builder: b };
            return e;
        }
        if let Some(&src) = self.plan.fused_sources.get(&Consumer::Method(e)) {
            let (bind, drop) = self.fused_source(e, src);
            let e2 = self.expr_parts(e);
            return self.wrap(e2, vec![bind], vec![drop]);
        }
        self.expr_parts(e)
    }

    /// `let t = source` for the temporary source of the fused chain `top`
    /// (its outermost stage or consumer) and the drop of `t`; the chain's
    /// first stage then reads `t`.
    fn fused_source(&mut self, top: ExprId, src: ExprId) -> (StmtId, StmtId) {
        let mut first = top;
        while let ExprKind::Method { receiver, .. } = self.body[first].kind {
            if receiver == src {
                break;
            }
            first = receiver;
        }
        let reason = self.plan.temps[&src];
        let span = self.span(src);
        let value = self.expr(src);
        let (bind, t) = self.bind(value, "tmp");
        let read = self.local_expr(t, span);
        if let ExprKind::Method { receiver, .. } = &mut self.body.exprs[first].kind {
            *receiver = read;
        }
        let drop = self.temp_drop(src, t, reason, span);
        (bind, drop)
    }

    /// [`Rw::expr`] of an expression that is neither a block nor a join.
    fn expr_parts(&mut self, e: ExprId) -> ExprId {
        let mut kind = self.body[e].kind.clone();
        let orig = children(&kind);
        // Asked of the original children: once rewritten, an assignment
        // inside one may sit in a new block the original kind no longer
        // reaches. Only asked where a temporary will be hoisted.
        let bind_locals =
            orig.iter().any(|c| self.is_temp(*c).is_some()) && self.contains_assign(e);
        children_mut(&mut kind, &mut |c| *c = self.expr(*c));
        if let Some(&g) = self.plan.owning_calls.get(&e) {
            if let ExprKind::Call { callee, .. } = &mut kind {
                *callee = ir::Callee::Fn(g);
            }
        }
        if let (Some(&(token, _, _)), Some(&g)) = (
            self.plan.token_calls.get(&e),
            self.plan.token_targets.get(&e),
        ) {
            let arg = self.local_expr(token, self.span(e));
            if let ExprKind::Call { callee, args } = &mut kind {
                *callee = ir::Callee::Fn(g);
                args.push(arg);
            }
        }
        if self.plan.puts.contains(&e) {
            if let ExprKind::Method { receiver, args, .. } = &kind {
                if let [key, value] = args[..] {
                    kind = ExprKind::PutOwnedKey {
                        map: *receiver,
                        key,
                        value,
                    };
                }
            }
        }
        if let Some(&reason) = self.plan.sets.get(&e) {
            if let ExprKind::Method { receiver, args, .. } = &kind {
                if let [index, value] = args[..] {
                    kind = ExprKind::SetInPlace {
                        list: *receiver,
                        index,
                        value,
                        reason,
                    };
                }
            }
        }
        if let Some(starts) = self.plan.matches.get(&e) {
            if let ExprKind::Match { arms, .. } = &mut kind {
                for (i, (arm, st)) in arms.iter_mut().zip(starts.clone()).enumerate() {
                    let ends = self.plan.arm_ends.get(&(e, i)).cloned().unwrap_or_default();
                    arm.body = self.arm_start(arm.body, &st, &ends);
                }
            }
        }
        if let Some(&(token, reason)) = self.plan.reuses.get(&e) {
            self.body.exprs[e].kind = kind;
            let ty = self.body[e].ty.clone();
            let span = self.span(e);
            return self.new_expr(
                ExprKind::Reuse {
                    token,
                    value: e,
                    reason,
                },
                ty,
                span,
            );
        }
        let operand_parent = matches!(
            kind,
            ExprKind::Interp(_)
                | ExprKind::Call { .. }
                | ExprKind::Method { .. }
                | ExprKind::Index { .. }
                | ExprKind::Binary { .. }
                | ExprKind::Unary { .. }
                | ExprKind::Field { .. }
                | ExprKind::PutOwnedKey { .. }
                | ExprKind::SetInPlace { .. }
                | ExprKind::BuilderPush { .. }
        );
        let ty = self.body[e].ty.clone();
        let last_temp = orig.iter().rposition(|c| self.is_temp(*c).is_some());
        let (Some(last), true, false) = (last_temp, operand_parent, ty == Ty::Never) else {
            self.body.exprs[e].kind = kind;
            return e;
        };
        let (lets, drops) = self.bind_children(&mut kind, &orig, last, bind_locals);
        self.body.exprs[e].kind = kind;
        self.wrap(e, lets, drops)
    }

    /// Binds the children up to the last temporary to temps, in evaluation
    /// order, so that hoisting the temporaries keeps that order.
    /// With `bind_locals` (some child assigns a local), names are bound
    /// too: a name read before the assignment must keep the old value.
    fn bind_children(
        &mut self,
        kind: &mut ExprKind,
        orig: &[ExprId],
        last: usize,
        bind_locals: bool,
    ) -> (Vec<StmtId>, Vec<StmtId>) {
        let mut lets = Vec::new();
        let mut drops = Vec::new();
        let mut i = 0;
        let mut news: Vec<(usize, ExprId)> = Vec::new();
        let current = children(kind);
        for (j, &c) in current.iter().enumerate() {
            if j > last {
                break;
            }
            let temp = self.is_temp(orig[j]);
            let pure = match &self.body[c].kind {
                ExprKind::Lit(_) | ExprKind::Func(_) | ExprKind::Missing => true,
                ExprKind::Local(_) => !bind_locals,
                ExprKind::Lambda { .. } => true,
                _ => false,
            };
            if temp.is_none() && pure {
                continue;
            }
            let span = self.span(c);
            let (s, t) = self.bind(c, "tmp");
            lets.push(s);
            let le = self.local_expr(t, span);
            news.push((j, le));
            if let Some(reason) = temp {
                drops.push(self.temp_drop(orig[j], t, reason, span));
            }
        }
        children_mut(kind, &mut |c| {
            if let Some(&(_, n)) = news.iter().find(|(j, _)| *j == i) {
                *c = n;
            }
            i += 1;
        });
        (lets, drops)
    }

    /// `{ lets; let r = e; drops; r }` (or without `r` for Unit).
    fn wrap(&mut self, e: ExprId, mut stmts: Vec<StmtId>, drops: Vec<StmtId>) -> ExprId {
        let ty = self.body[e].ty.clone();
        let span = self.span(e);
        let tail = if ty == Ty::Unit {
            stmts.push(self.new_stmt(StmtKind::Expr(e), span));
            None
        } else {
            let (s, r) = self.bind(e, "val");
            stmts.push(s);
            Some(r)
        };
        stmts.extend(drops);
        let tail = tail.map(|r| self.local_expr(r, span));
        self.new_expr(ExprKind::Block { stmts, tail }, ty, span)
    }

    /// `{ drops; let val = body; drops; val }`: an arm of a destructive
    /// match with what dies at its start (fields bound to `_` get a
    /// temporary to drop) and what dies once its value is made (`ends`,
    /// and the dead fields when the arm reuses the token's block).
    fn arm_start(&mut self, arm_body: ExprId, st: &ArmStart, ends: &[(LocalId, u32)]) -> ExprId {
        let span = self.span(arm_body);
        let mut stmts = Vec::new();
        let mut after = Vec::new();
        for &(l, pat, reason) in &st.clears {
            stmts.push(self.new_stmt(
                StmtKind::Clear {
                    local: l,
                    pat,
                    reason,
                },
                span,
            ));
        }
        for &(p, reason) in &st.fields {
            let ty = self.body[p].ty.clone();
            let deep = crate::cells::field_drop(&ty).unwrap_or(false);
            let t = self.new_temp("field", ty, span);
            self.body.pats[p].kind = PatKind::Bind(t);
            let d = self.drop_stmt(t, deep, reason, span);
            if st.at_end {
                after.push(d)
            } else {
                stmts.push(d)
            }
        }
        for &(l, reason) in &st.binds {
            let deep = crate::cells::field_drop(&self.body.locals[l].ty).unwrap_or(false);
            let d = self.drop_stmt(l, deep, reason, span);
            if st.at_end {
                after.push(d)
            } else {
                stmts.push(d)
            }
        }
        if let Some((l, deep, reason)) = st.token {
            stmts.push(self.drop_stmt(l, deep, reason, span));
        }
        for &(l, reason) in &st.tokens {
            stmts.push(self.drop_stmt(l, false, reason, span));
        }
        for &(l, reason) in ends {
            after.push(self.drop_stmt(l, true, reason, span));
        }
        let ty = self.body[arm_body].ty.clone();
        if after.is_empty() || ty == Ty::Never {
            if stmts.is_empty() {
                return arm_body;
            }
            if let ExprKind::Block { stmts: inner, .. } = &mut self.body.exprs[arm_body].kind {
                stmts.append(inner);
                *inner = stmts;
                return arm_body;
            }
            return self.new_expr(
                ExprKind::Block {
                    stmts,
                    tail: Some(arm_body),
                },
                ty,
                span,
            );
        }
        self.wrap(arm_body, stmts, after)
    }

    fn contains_assign(&self, e: ExprId) -> bool {
        match &self.body[e].kind {
            ExprKind::Block { stmts, tail } => {
                stmts.iter().any(|s| match &self.body[*s].kind {
                    StmtKind::Assign { .. } => true,
                    StmtKind::Let { init, .. } | StmtKind::Var { init, .. } => {
                        self.contains_assign(*init)
                    }
                    StmtKind::Expr(x) => self.contains_assign(*x),
                    StmtKind::For { iter, body, .. } => {
                        self.contains_assign(*iter) || self.contains_assign(*body)
                    }
                    StmtKind::While { cond, body } => {
                        self.contains_assign(*cond) || self.contains_assign(*body)
                    }
                    StmtKind::Drop(_) | StmtKind::Clear { .. } => false,
                }) || tail.is_some_and(|t| self.contains_assign(t))
            }
            ExprKind::Lambda { .. } => false,
            k => children(k).into_iter().any(|c| self.contains_assign(c)),
        }
    }

    fn block(&mut self, e: ExprId) {
        let ExprKind::Block { stmts, tail } = self.body[e].kind.clone() else {
            return;
        };
        let drops = self.plan.drops.get(&e).cloned().unwrap_or_default();
        let mut out = Vec::new();
        for (i, &s) in stmts.iter().enumerate() {
            self.stmt(s, &mut out);
            let span = self.sm.stmt(s);
            for &(_, l, deep, reason) in drops.iter().filter(|d| d.0 == i) {
                out.push(self.drop_stmt(l, deep, reason, span));
            }
        }
        let mut new_tail = None;
        if let Some(t) = tail {
            let t2 = self.expr(t);
            let ty = self.body[t].ty.clone();
            let tail_drops: Vec<_> = drops.iter().filter(|d| d.0 == stmts.len()).collect();
            let span = self.span(t);
            if tail_drops.is_empty() || ty == Ty::Never {
                new_tail = Some(t2);
            } else {
                let r = if ty == Ty::Unit {
                    out.push(self.new_stmt(StmtKind::Expr(t2), span));
                    None
                } else {
                    let (s, r) = self.bind(t2, "val");
                    out.push(s);
                    Some(r)
                };
                for &&(_, l, deep, reason) in &tail_drops {
                    out.push(self.drop_stmt(l, deep, reason, span));
                }
                new_tail = r.map(|r| self.local_expr(r, span));
            }
        }
        self.body.exprs[e].kind = ExprKind::Block {
            stmts: out,
            tail: new_tail,
        };
    }

    fn stmt(&mut self, s: StmtId, out: &mut Vec<StmtId>) {
        let kind = self.body[s].kind.clone();
        let span = self.sm.stmt(s);
        match kind {
            StmtKind::Let { pat, init } => {
                let init2 = self.expr(init);
                if let (PatKind::Wild, Some(reason)) = (&self.body[pat].kind, self.is_temp(init)) {
                    let (l, t) = self.bind(init2, "tmp");
                    out.push(l);
                    out.push(self.temp_drop(init, t, reason, span));
                    return;
                }
                self.body.stmts[s].kind = StmtKind::Let { pat, init: init2 };
                out.push(s);
            }
            StmtKind::Var { local, init } => {
                let mut init2 = self.expr(init);
                if let Some((_, sep)) = self.plan.builders.get(&local) {
                    let sep = sep.clone();
                    self.body.locals[local].ty = Ty::StrBuilder;
                    let sp = self.span(init);
                    init2 = self.new_expr(ExprKind::BuilderNew { sep }, Ty::StrBuilder, sp);
                }
                self.body.stmts[s].kind = StmtKind::Var { local, init: init2 };
                out.push(s);
            }
            StmtKind::Assign { local, value, old } => {
                if self.plan.builders.contains_key(&local) {
                    if let ExprKind::Method { args, .. } = self.body[value].kind.clone() {
                        if let Some(&arg) = args.first() {
                            let arg2 = self.expr(arg);
                            let vspan = self.span(value);
                            if let Some(reason) = self.is_temp(arg) {
                                let (l, t) = self.bind(arg2, "tmp");
                                out.push(l);
                                let te = self.local_expr(t, self.span(arg));
                                let p = self.new_expr(
                                    ExprKind::BuilderPush {
                                        builder: local,
                                        value: te,
                                    },
                                    Ty::Unit,
                                    vspan,
                                );
                                out.push(self.new_stmt(StmtKind::Expr(p), span));
                                out.push(self.drop_stmt(t, false, reason, span));
                            } else {
                                let p = self.new_expr(
                                    ExprKind::BuilderPush {
                                        builder: local,
                                        value: arg2,
                                    },
                                    Ty::Unit,
                                    vspan,
                                );
                                self.body.stmts[s].kind = StmtKind::Expr(p);
                                out.push(s);
                            }
                            return;
                        }
                    }
                }
                let old = self.plan.assigns.get(&s).copied().unwrap_or(old);
                if old == OldValue::FreeIfMoved {
                    // Keep `x := x.push(..)` as it is; hoist temporaries of
                    // its arguments around the statement (the receiver is
                    // a plain name, so the order of evaluation holds).
                    let mut kind = self.body[value].kind.clone();
                    let orig = children(&kind);
                    let bind_locals = orig.iter().any(|c| self.is_temp(*c).is_some())
                        && self.contains_assign(value);
                    children_mut(&mut kind, &mut |c| *c = self.expr(*c));
                    let last = orig.iter().rposition(|c| self.is_temp(*c).is_some());
                    let mut drops = Vec::new();
                    if let Some(last) = last {
                        let (lets, d) = self.bind_children(&mut kind, &orig, last, bind_locals);
                        out.extend(lets);
                        drops = d;
                    }
                    self.body.exprs[value].kind = kind;
                    self.body.stmts[s].kind = StmtKind::Assign { local, value, old };
                    out.push(s);
                    out.extend(drops);
                    return;
                }
                let value2 = self.expr(value);
                self.body.stmts[s].kind = StmtKind::Assign {
                    local,
                    value: value2,
                    old,
                };
                out.push(s);
            }
            StmtKind::Expr(x) => {
                let x2 = self.expr(x);
                if let Some(reason) = self.is_temp(x) {
                    let (l, t) = self.bind(x2, "tmp");
                    out.push(l);
                    out.push(self.temp_drop(x, t, reason, span));
                    return;
                }
                self.body.stmts[s].kind = StmtKind::Expr(x2);
                out.push(s);
            }
            StmtKind::For { pat, iter, body } => {
                let fused = self
                    .plan
                    .fused_sources
                    .get(&Consumer::For(s, body))
                    .copied();
                let source = fused.map(|src| self.fused_source(iter, src));
                let iter2 = self.expr(iter);
                let body2 = self.expr(body);
                if let Some(reason) = self.is_temp(iter) {
                    let (l, t) = self.bind(iter2, "tmp");
                    out.push(l);
                    let te = self.local_expr(t, self.span(iter));
                    self.body.stmts[s].kind = StmtKind::For {
                        pat,
                        iter: te,
                        body: body2,
                    };
                    out.push(s);
                    out.push(self.drop_stmt(t, false, reason, span));
                    return;
                }
                self.body.stmts[s].kind = StmtKind::For {
                    pat,
                    iter: iter2,
                    body: body2,
                };
                let (bind, drop) = source.unzip();
                out.extend(bind);
                out.push(s);
                out.extend(drop);
            }
            StmtKind::While { cond, body } => {
                let cond2 = self.expr(cond);
                let body2 = self.expr(body);
                self.body.stmts[s].kind = StmtKind::While {
                    cond: cond2,
                    body: body2,
                };
                out.push(s);
            }
            StmtKind::Drop(_) | StmtKind::Clear { .. } => out.push(s),
        }
    }
}
