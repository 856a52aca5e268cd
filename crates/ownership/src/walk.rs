//! The use walk: one pass over a body that records, for every expression,
//! how its value is used (its context), and for every local, where it is
//! declared, used and assigned. Everything later (ownership, freshness,
//! drop placement, explanations) reads these facts.
//!
//! Contexts flow through "transparent" edges unchanged: a block's tail and
//! the arms of `if`/`match` give their value to whatever the enclosing
//! expression gives its value to.

use std::collections::HashMap;

use ir::{
    ArenaMap, Body, BodySourceMap, Callee, ExprId, ExprKind, FnId, InterpPart, ItemTree, LocalId,
    PatId, PatKind, StmtId, StmtKind, TypeDefKind,
};

use crate::reason::{Escape, Keep, Reader};
use crate::table::{self, ArgUse};
use crate::Summary;

/// How an expression's value is used by its (non-transparent) parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Read and not kept, by the reader given.
    Read(Reader),
    /// Kept, shared or handed on, as given.
    Escape(Escape),
    /// The initial value of a `let`/`var` local.
    Bind(LocalId),
    /// The new value of `local := ..`.
    Assign(LocalId),
    /// The function's result (tail of the body or `return`).
    Out,
    /// Receiver of `x := x.push(..)` / `x := x.concat(..)`.
    GrowSelf(LocalId),
    /// Key of the `Map.put` expression given.
    Key(ExprId),
}

/// One use of a local.
#[derive(Clone, Debug)]
pub struct Use {
    pub expr: ExprId,
    pub ctx: Ctx,
    /// Offset of the use.
    pub at: u32,
    /// The value flows out of the local's declaring block as its value.
    pub moved_out: bool,
    /// Index of the declaring block's statement that holds the use
    /// (`stmts.len()` for the tail); None when outside that block's frame.
    pub index: Option<usize>,
    /// Inside a loop nested in the declaring block.
    pub in_loop: bool,
    /// Inside a closure that does not declare the local.
    pub foreign: bool,
}

/// One `local := value`.
#[derive(Clone, Debug)]
pub struct Assign {
    pub stmt: StmtId,
    pub value: ExprId,
    pub at: u32,
    pub index: Option<usize>,
    /// Inside an operand of a larger expression, where an earlier operand
    /// may already hold the old value.
    pub nested: bool,
}

/// Where a `let`/`var` local is declared.
#[derive(Clone, Debug)]
pub struct Decl {
    pub block: ExprId,
    pub index: usize,
    pub stmt: StmtId,
    pub init: ExprId,
    pub var: bool,
}

#[derive(Clone, Debug, Default)]
pub struct LocalFacts {
    pub decl: Option<Decl>,
    pub uses: Vec<Use>,
    pub assigns: Vec<Assign>,
    /// Assigned inside a `for` that iterates it.
    pub for_assigned: Option<u32>,
    /// The closure that declares it (None: the function itself).
    pub lambda: Option<ExprId>,
}

/// Per-expression facts.
#[derive(Clone, Debug)]
pub struct ExprFacts {
    pub ctx: Ctx,
    /// Reached from its parent through a transparent edge.
    pub transparent: bool,
    /// Offset of the non-transparent parent that consumes the value.
    pub reader_at: u32,
    pub parent: Option<ExprId>,
}

#[derive(Default)]
pub struct Facts {
    pub exprs: ArenaMap<ExprId, ExprFacts>,
    pub locals: HashMap<LocalId, LocalFacts>,
    /// `return` expressions of the function itself (not of closures).
    pub returns: Vec<ExprId>,
    /// Direct calls, for the call graph.
    pub callees: Vec<FnId>,
}

impl Facts {
    /// The uses inside the init of a `let` that a fused chain reads
    /// through happen where the chain runs: they count at the statement
    /// of the local's one use (links source first, so a use moved into a
    /// later link's init moves on with it).
    pub fn relocate_fused_lets(&mut self, plan: &ir::fusion::Plan) {
        let mut moved: std::collections::HashSet<ExprId> = Default::default();
        for c in plan.chains.iter().filter(|c| c.fused()) {
            for link in &c.lets {
                let mut hits = Vec::new();
                for (x, lf) in &self.locals {
                    if lf.decl.as_ref().is_none_or(|d| d.block != link.block) {
                        continue;
                    }
                    for (i, u) in lf.uses.iter().enumerate() {
                        let inside = moved.contains(&u.expr) || self.within(u.expr, link.init);
                        if u.index == Some(link.decl_index) && inside {
                            hits.push((*x, i));
                        }
                    }
                }
                for (x, i) in hits {
                    if let Some(u) = self.locals.get_mut(&x).and_then(|l| l.uses.get_mut(i)) {
                        u.index = Some(link.use_index);
                        moved.insert(u.expr);
                    }
                }
            }
        }
    }

    /// Whether `e` is `outer` or inside it.
    fn within(&self, mut e: ExprId, outer: ExprId) -> bool {
        loop {
            if e == outer {
                return true;
            }
            match self.exprs.get(e).and_then(|f| f.parent) {
                Some(p) => e = p,
                None => return false,
            }
        }
    }

    pub fn local(&self, l: LocalId) -> Option<&LocalFacts> {
        self.locals.get(&l)
    }
    pub fn ctx(&self, e: ExprId) -> Option<&Ctx> {
        self.exprs.get(e).map(|f| &f.ctx)
    }
}

struct Frame {
    block: ExprId,
    index: usize,
    loop_depth: u32,
}

struct Walker<'a> {
    body: &'a Body,
    sm: &'a BodySourceMap,
    summaries: &'a [Summary],
    facts: Facts,
    frames: Vec<Frame>,
    out_chain: Vec<ExprId>,
    loop_depth: u32,
    lambdas: Vec<ExprId>,
    stmt_level: bool,
    parents: Vec<ExprId>,
    for_iters: Vec<LocalId>,
}

/// Walks one body given the current summaries of the functions it calls.
pub fn walk(body: &Body, sm: &BodySourceMap, summaries: &[Summary]) -> Facts {
    let mut w = Walker {
        body,
        sm,
        summaries,
        facts: Facts::default(),
        frames: Vec::new(),
        out_chain: Vec::new(),
        loop_depth: 0,
        lambdas: Vec::new(),
        stmt_level: true,
        parents: Vec::new(),
        for_iters: Vec::new(),
    };
    for &p in &body.params {
        w.facts.locals.entry(p).or_default();
    }
    if let Some(root) = body.root {
        w.top(root, Ctx::Out, root);
    }
    w.facts
}

impl Walker<'_> {
    fn at(&self, e: ExprId) -> u32 {
        self.sm.expr(e).start
    }

    /// A child whose value the parent consumes, evaluated in the middle of
    /// the parent's other operands.
    fn operand(&mut self, e: ExprId, ctx: Ctx, parent: ExprId) {
        let saved = std::mem::replace(&mut self.stmt_level, false);
        self.top(e, ctx, parent);
        self.stmt_level = saved;
    }

    /// A child whose value the parent consumes, evaluated first or alone.
    fn top(&mut self, e: ExprId, ctx: Ctx, parent: ExprId) {
        let reader = self.at(parent);
        self.top_at(e, ctx, reader);
    }

    /// Like `top`, for a statement's child: the reader is the statement.
    fn top_at(&mut self, e: ExprId, ctx: Ctx, reader: u32) {
        let chain = std::mem::take(&mut self.out_chain);
        self.expr(e, ctx, false, reader);
        self.out_chain = chain;
    }

    /// A child whose value becomes the parent's value.
    fn through(&mut self, e: ExprId, ctx: Ctx, reader_at: u32) {
        self.expr(e, ctx, true, reader_at);
    }

    fn expr(&mut self, e: ExprId, ctx: Ctx, transparent: bool, reader_at: u32) {
        self.facts.exprs.insert(
            e,
            ExprFacts {
                ctx: ctx.clone(),
                transparent,
                reader_at,
                parent: self.parents.last().copied(),
            },
        );
        self.parents.push(e);
        self.expr_kind(e, ctx, reader_at);
        self.parents.pop();
    }

    fn expr_kind(&mut self, e: ExprId, ctx: Ctx, reader_at: u32) {
        let body = self.body;
        match &body[e].kind {
            ExprKind::Missing
            | ExprKind::Lit(_)
            | ExprKind::Func(_)
            | ExprKind::Break
            | ExprKind::Continue
            | ExprKind::BuilderNew { .. } => {}
            ExprKind::Local(l) => self.use_local(*l, e, ctx),
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let InterpPart::Expr(x) = p {
                        self.operand(*x, Ctx::Read(Reader::Interpolation), e);
                    }
                }
            }
            ExprKind::Unary { operand, .. } => self.operand(*operand, Ctx::Read(Reader::Unary), e),
            ExprKind::Binary { op, lhs, rhs } => {
                self.operand(*lhs, Ctx::Read(Reader::Binary(*op)), e);
                self.operand(*rhs, Ctx::Read(Reader::Binary(*op)), e);
            }
            ExprKind::Call { callee, args } => match callee {
                Callee::Fn(f) => {
                    let f = *f;
                    self.facts.callees.push(f);
                    for (i, &a) in args.iter().enumerate() {
                        let s = self.summaries.get(f.into_raw().into_u32() as usize);
                        let ctx = match s.and_then(|s| s.borrowed.get(i)) {
                            Some(true) => Ctx::Read(Reader::Call(f)),
                            _ => Ctx::Escape(Escape::PassedTo { f, param: i as u32 }),
                        };
                        self.operand(a, ctx, e);
                    }
                }
                Callee::Builtin(b) => {
                    for &a in args {
                        self.operand(a, Ctx::Read(Reader::Builtin(*b)), e);
                    }
                }
                Callee::Value(c) => {
                    self.operand(*c, Ctx::Read(Reader::CallOfValue), e);
                    for &a in args {
                        self.operand(a, Ctx::Escape(Escape::PassedToValue), e);
                    }
                }
            },
            ExprKind::Method {
                method,
                receiver,
                args,
            } => {
                let row = table::row(*method);
                let rctx = match row.receiver {
                    ArgUse::Grow => match (&ctx, &body[*receiver].kind) {
                        (Ctx::Assign(x), ExprKind::Local(r)) if x == r => Ctx::GrowSelf(*x),
                        _ => Ctx::Escape(Escape::SharedBy(*method)),
                    },
                    other => arg_ctx(other, *method, e),
                };
                self.operand(*receiver, rctx, e);
                for (i, &a) in args.iter().enumerate() {
                    let u = row
                        .args
                        .get(i)
                        .copied()
                        .unwrap_or(ArgUse::Kept(Keep::Argument));
                    self.operand(a, arg_ctx(u, *method, e), e);
                }
            }
            ExprKind::Index { base, index } => {
                self.operand(*base, Ctx::Read(Reader::Indexing), e);
                self.operand(*index, Ctx::Read(Reader::Indexing), e);
            }
            ExprKind::Field { base, .. } => self.operand(*base, Ctx::Read(Reader::Field), e),
            ExprKind::Record { ty, fields } => {
                for &(field, f) in fields {
                    let ctx = Ctx::Escape(Escape::StoredInField { ty: *ty, field });
                    self.operand(f, ctx, e);
                }
            }
            ExprKind::Tuple(xs) => {
                for &x in xs {
                    self.operand(x, Ctx::Escape(Escape::StoredInTuple), e);
                }
            }
            ExprKind::Ctor { ctor, args } => {
                for &x in args {
                    self.operand(x, Ctx::Escape(Escape::StoredInCtor(*ctor)), e);
                }
            }
            ExprKind::List(xs) => {
                for &x in xs {
                    self.operand(x, Ctx::Escape(Escape::StoredInList), e);
                }
            }
            ExprKind::Range { lo, hi } => {
                self.operand(*lo, Ctx::Read(Reader::Range), e);
                self.operand(*hi, Ctx::Read(Reader::Range), e);
            }
            ExprKind::Lambda {
                params,
                body: lbody,
                captures,
            } => {
                for &c in captures {
                    self.capture(c, e);
                }
                for &p in params {
                    self.facts.locals.entry(p).or_default().lambda = Some(e);
                }
                self.lambdas.push(e);
                let saved_frames = std::mem::take(&mut self.frames);
                let saved_level = std::mem::replace(&mut self.stmt_level, true);
                let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
                let saved_for = std::mem::take(&mut self.for_iters);
                self.top(*lbody, Ctx::Escape(Escape::ReturnedFromClosure), e);
                self.for_iters = saved_for;
                self.loop_depth = saved_loop;
                self.stmt_level = saved_level;
                self.frames = saved_frames;
                self.lambdas.pop();
            }
            ExprKind::If { cond, then, else_ } => {
                self.top(*cond, Ctx::Read(Reader::Condition), e);
                self.through(*then, ctx.clone(), reader_at);
                if let Some(x) = else_ {
                    self.through(*x, ctx, reader_at);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.top(*scrutinee, Ctx::Escape(Escape::Matched), e);
                for arm in arms {
                    self.bind_pat(arm.pat);
                    self.through(arm.body, ctx.clone(), reader_at);
                }
            }
            ExprKind::Block { stmts, tail } => {
                self.frames.push(Frame {
                    block: e,
                    index: 0,
                    loop_depth: self.loop_depth,
                });
                for (i, &s) in stmts.iter().enumerate() {
                    if let Some(f) = self.frames.last_mut() {
                        f.index = i;
                    }
                    self.stmt(s, e);
                }
                if let Some(t) = tail {
                    if let Some(f) = self.frames.last_mut() {
                        f.index = stmts.len();
                    }
                    self.out_chain.push(e);
                    self.through(*t, ctx, reader_at);
                    self.out_chain.pop();
                }
                self.frames.pop();
            }
            ExprKind::Return(v) => {
                if self.lambdas.is_empty() {
                    self.facts.returns.push(e);
                }
                if let Some(v) = v {
                    let ctx = if self.lambdas.is_empty() {
                        Ctx::Out
                    } else {
                        Ctx::Escape(Escape::ReturnedFromClosure)
                    };
                    self.top(*v, ctx, e);
                }
            }
            ExprKind::PutOwnedKey { map, key, value } => {
                self.operand(*map, Ctx::Read(Reader::Put), e);
                self.operand(*key, Ctx::Escape(Escape::ConsumedKey), e);
                self.operand(*value, Ctx::Escape(Escape::StoredInMap), e);
            }
            ExprKind::SetInPlace {
                list, index, value, ..
            } => {
                let m = ir::Method::ListSet;
                self.operand(*list, Ctx::Read(Reader::Method(m)), e);
                self.operand(*index, Ctx::Read(Reader::Method(m)), e);
                let keep = Ctx::Escape(Escape::Kept(Keep::SetElement));
                self.operand(*value, keep, e);
            }
            ExprKind::BuilderPush { value, .. } => {
                self.operand(*value, Ctx::Read(Reader::Builder), e)
            }
            ExprKind::BuilderFinish { .. } => {}
            ExprKind::Reuse { value, .. } => self.through(*value, ctx, reader_at),
        }
    }

    fn stmt(&mut self, s: StmtId, block: ExprId) {
        let body = self.body;
        let sat = self.sm.stmt(s).start;
        let _ = block;
        match &body[s].kind {
            StmtKind::Let { pat, init } => match &body[*pat].kind {
                PatKind::Bind(x) => {
                    self.top_at(*init, Ctx::Bind(*x), sat);
                    self.declare(*x, s, *init, false);
                }
                PatKind::Wild => self.top_at(*init, Ctx::Read(Reader::DiscardedLet), sat),
                _ => {
                    self.top_at(*init, Ctx::Escape(Escape::Destructured), sat);
                    self.bind_pat(*pat);
                }
            },
            StmtKind::Var { local, init } => {
                self.top_at(*init, Ctx::Bind(*local), sat);
                self.declare(*local, s, *init, true);
            }
            StmtKind::Assign { local, value, .. } => {
                let at = self.sm.stmt(s).start;
                let (index, _, _) = self.position(*local);
                let nested = !self.stmt_level;
                if self.for_iters.contains(local) {
                    self.facts.locals.entry(*local).or_default().for_assigned = Some(at);
                }
                self.facts
                    .locals
                    .entry(*local)
                    .or_default()
                    .assigns
                    .push(Assign {
                        stmt: s,
                        value: *value,
                        at,
                        index,
                        nested,
                    });
                self.top_at(*value, Ctx::Assign(*local), sat);
            }
            StmtKind::Expr(e) => self.top_at(*e, Ctx::Read(Reader::DiscardedValue), sat),
            StmtKind::For {
                pat,
                iter,
                body: fbody,
            } => {
                self.top_at(*iter, Ctx::Read(Reader::For), sat);
                let it = match &body[*iter].kind {
                    ExprKind::Local(l) => Some(*l),
                    _ => None,
                };
                self.loop_depth += 1;
                if let Some(l) = it {
                    self.for_iters.push(l);
                }
                self.bind_pat(*pat);
                self.top_at(*fbody, Ctx::Read(Reader::Loop), sat);
                if it.is_some() {
                    self.for_iters.pop();
                }
                self.loop_depth -= 1;
            }
            StmtKind::While { cond, body: wbody } => {
                self.loop_depth += 1;
                self.top_at(*cond, Ctx::Read(Reader::Condition), sat);
                self.top_at(*wbody, Ctx::Read(Reader::Loop), sat);
                self.loop_depth -= 1;
            }
            StmtKind::Drop(_) | StmtKind::Clear { .. } => {}
        }
    }

    fn declare(&mut self, x: LocalId, stmt: StmtId, init: ExprId, var: bool) {
        let Some(f) = self.frames.last() else { return };
        let decl = Decl {
            block: f.block,
            index: f.index,
            stmt,
            init,
            var,
        };
        let lambda = self.lambdas.last().copied();
        let lf = self.facts.locals.entry(x).or_default();
        lf.decl = Some(decl);
        lf.lambda = lambda;
    }

    fn bind_pat(&mut self, p: PatId) {
        let lambda = self.lambdas.last().copied();
        match &self.body[p].kind {
            PatKind::Bind(x) => self.facts.locals.entry(*x).or_default().lambda = lambda,
            PatKind::At { local, pat } => {
                self.facts.locals.entry(*local).or_default().lambda = lambda;
                self.bind_pat(*pat);
            }
            PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
                for &q in ps {
                    self.bind_pat(q);
                }
            }
            PatKind::Missing | PatKind::Wild | PatKind::Lit(_) => {}
        }
    }

    /// (index in the declaring block, inside a nested loop, in a foreign closure).
    fn position(&self, x: LocalId) -> (Option<usize>, bool, bool) {
        let lf = self.facts.locals.get(&x);
        let foreign = lf.map(|l| l.lambda) != Some(self.lambdas.last().copied());
        let Some(decl) = lf.and_then(|l| l.decl.as_ref()) else {
            return (None, self.loop_depth > 0, foreign);
        };
        match self.frames.iter().rev().find(|f| f.block == decl.block) {
            Some(f) => (Some(f.index), self.loop_depth > f.loop_depth, foreign),
            None => (None, true, foreign),
        }
    }

    fn use_local(&mut self, x: LocalId, e: ExprId, ctx: Ctx) {
        let (index, in_loop, foreign) = self.position(x);
        let moved_out = self
            .facts
            .locals
            .get(&x)
            .and_then(|l| l.decl.as_ref())
            .is_some_and(|d| self.out_chain.contains(&d.block));
        let at = self.at(e);
        self.facts.locals.entry(x).or_default().uses.push(Use {
            expr: e,
            ctx,
            at,
            moved_out,
            index,
            in_loop,
            foreign,
        });
    }

    fn capture(&mut self, x: LocalId, lambda: ExprId) {
        let (index, in_loop, _) = self.position(x);
        let at = self.at(lambda);
        self.facts.locals.entry(x).or_default().uses.push(Use {
            expr: lambda,
            ctx: Ctx::Escape(Escape::CapturedByClosure),
            at,
            moved_out: false,
            index,
            in_loop,
            foreign: true,
        });
    }
}

fn arg_ctx(u: ArgUse, method: ir::Method, e: ExprId) -> Ctx {
    match u {
        ArgUse::Read | ArgUse::Scalar => Ctx::Read(Reader::Method(method)),
        ArgUse::View => Ctx::Escape(Escape::ViewedBy(method)),
        ArgUse::Kept(k) => Ctx::Escape(Escape::Kept(k)),
        ArgUse::Grow => Ctx::Escape(Escape::SharedBy(method)),
        ArgUse::Key => Ctx::Key(e),
    }
}

pub fn ctor_name(items: &ItemTree, c: ir::Ctor) -> String {
    match c {
        ir::Ctor::Some => "Some".into(),
        ir::Ctor::None => "None".into(),
        ir::Ctor::User(t, i) => match &items.types[t].kind {
            TypeDefKind::Sum { variants } => variants
                .get(i as usize)
                .map(|v| v.name.clone())
                .unwrap_or_default(),
            TypeDefKind::Record { .. } => items.types[t].name.clone(),
        },
    }
}
