//! Decisions over one walked body: which expressions are fresh, which
//! locals own their block (and how that block ends), and the body's
//! summary (fresh result, borrowed parameters).

use std::cell::RefCell;
use std::collections::HashMap;

use ir::{
    BinOp, Body, BodySourceMap, Builtin, Callee, ExprId, ExprKind, ItemTree, Lit, LocalId, Method,
    Ty,
};

use crate::reason::{Escape, NotFresh, NotOwned, ParamUse, ParamUseKind, Reader, ResultNotFresh};
use crate::table::{self, Res};
use crate::walk::{Ctx, Facts, Use};
use crate::Summary;

/// Whether an expression makes a new block nobody else holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fresh {
    /// Fresh; `alloc` is false when the only possible values are static or
    /// empty (freeing them does nothing).
    Yes { alloc: bool },
    /// Not fresh, and why.
    No(NotFresh),
}

impl Fresh {
    pub fn is_yes(&self) -> bool {
        matches!(self, Fresh::Yes { .. })
    }
    pub fn allocs(&self) -> bool {
        matches!(self, Fresh::Yes { alloc: true })
    }
}

/// How an owned local's block ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Dropped after statement `index` of its declaring block (the tail
    /// when `index == stmts.len()`).
    Drop { index: usize, deep: bool },
    /// Becomes the value of its declaring block.
    MovedOut,
    /// Handed to the `Map.put` expression given (consumed key).
    ConsumedKey(ExprId),
    /// A var that frees the values it replaces, but whose last value
    /// escapes (after its last update): why, and where.
    Kept { why: NotOwned, at: u32 },
    /// Never built: a string builder that `join` (the expression given) finishes.
    Builder { join: ExprId, sep: String },
    /// Its last use is the receiver of the `set` given, which writes into
    /// the block and hands it on as its result (`set.rs`).
    SetInPlace(ExprId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    Yes(End),
    /// Not owned: why, and where (offset).
    No(NotOwned, u32),
}

/// What a view's confinement depends on of the value it views.
#[derive(Clone, Copy)]
struct Owner {
    /// The viewed local is ever assigned.
    assigned: bool,
    /// Its declaring block (None for a parameter).
    block: Option<ExprId>,
}

pub struct Decider<'a> {
    pub body: &'a Body,
    pub sm: &'a BodySourceMap,
    pub facts: &'a Facts,
    pub summaries: &'a [Summary],
    fresh_memo: RefCell<HashMap<ExprId, Fresh>>,
    own_memo: RefCell<HashMap<LocalId, Option<Own>>>,
    /// The body's pipeline fusion plan (empty while summaries are solved:
    /// fusion changes no summary).
    pub fusion: ir::fusion::Plan,
}

impl<'a> Decider<'a> {
    pub fn new(
        body: &'a Body,
        sm: &'a BodySourceMap,
        facts: &'a Facts,
        summaries: &'a [Summary],
    ) -> Self {
        Decider {
            body,
            sm,
            facts,
            summaries,
            fresh_memo: RefCell::default(),
            own_memo: RefCell::default(),
            fusion: ir::fusion::Plan::default(),
        }
    }

    fn fn_summary(&self, f: ir::FnId) -> Option<&Summary> {
        self.summaries.get(f.into_raw().into_u32() as usize)
    }

    /// Freshness of an expression's value.
    pub fn fresh(&self, e: ExprId) -> Fresh {
        if let Some(f) = self.fresh_memo.borrow().get(&e) {
            return f.clone();
        }
        let f = self.fresh_uncached(e);
        self.fresh_memo.borrow_mut().insert(e, f.clone());
        f
    }

    fn fresh_uncached(&self, e: ExprId) -> Fresh {
        let body = self.body;
        let expr = &body[e];
        if expr.ty == Ty::Never {
            return Fresh::Yes { alloc: false };
        }
        match &expr.kind {
            ExprKind::Lit(Lit::Str(_)) => Fresh::Yes { alloc: false },
            ExprKind::List(xs) => Fresh::Yes {
                alloc: !xs.is_empty(),
            },
            ExprKind::Range { .. } => Fresh::Yes { alloc: true },
            ExprKind::Interp(_) => Fresh::Yes { alloc: true },
            ExprKind::Binary { op: BinOp::Add, .. } if expr.ty == Ty::Str => {
                Fresh::Yes { alloc: true }
            }
            ExprKind::Method {
                method, receiver, ..
            } => match table::row(*method).result {
                Res::Fresh => Fresh::Yes { alloc: true },
                Res::Shared(what) => Fresh::No(NotFresh::Shared {
                    what,
                    of: match &body[*receiver].kind {
                        ExprKind::Local(x) => Some(*x),
                        _ => None,
                    },
                }),
                Res::Other => Fresh::No(NotFresh::NotListOrString),
            },
            ExprKind::Call { callee, .. } => match callee {
                Callee::Fn(f) => match self.fn_summary(*f) {
                    Some(s) if s.fresh_result => Fresh::Yes { alloc: true },
                    Some(_) => Fresh::No(NotFresh::FnResult(*f)),
                    None => Fresh::No(NotFresh::UnknownFn),
                },
                Callee::Builtin(Builtin::ReadFile | Builtin::ReadStdin | Builtin::ReadLines) => {
                    Fresh::Yes { alloc: true }
                }
                Callee::Builtin(b) => Fresh::No(NotFresh::BuiltinResult(*b)),
                Callee::Value(_) => Fresh::No(NotFresh::FnValueResult),
            },
            ExprKind::If { then, else_, .. } => {
                let Some(else_) = else_ else {
                    return Fresh::No(NotFresh::IfWithoutElse);
                };
                both(self.fresh(*then), self.fresh(*else_))
            }
            ExprKind::Match { arms, .. } => arms
                .iter()
                .map(|a| self.fresh(a.body))
                .fold(Fresh::Yes { alloc: false }, both),
            ExprKind::Block { tail, .. } => match tail {
                Some(t) => self.fresh(*t),
                None => Fresh::No(NotFresh::BlockWithoutValue),
            },
            ExprKind::Local(x) => {
                let facts = self.facts.local(*x);
                let u = facts.and_then(|l| l.uses.iter().find(|u| u.expr == e));
                if facts.and_then(|l| l.decl.as_ref()).is_none() {
                    return Fresh::No(match body.locals[*x].kind {
                        ir::LocalKind::Param => NotFresh::Param(*x),
                        _ => NotFresh::PartOf(*x),
                    });
                }
                match u {
                    Some(u) if u.moved_out || u.ctx == Ctx::Out => match self.own(*x) {
                        // The var owned the values it replaced, but its last
                        // value escaped before it flows out here.
                        Own::Yes(End::Kept { why, at }) => Fresh::No(NotFresh::LastValueEscaped {
                            local: *x,
                            why: Box::new(why),
                            at,
                        }),
                        Own::Yes(_) => Fresh::Yes {
                            alloc: self.local_allocs(*x),
                        },
                        Own::No(why, at) => Fresh::No(NotFresh::NotOnlyOwner {
                            local: *x,
                            why: Box::new(why),
                            at,
                        }),
                    },
                    _ => Fresh::No(NotFresh::AnotherName(*x)),
                }
            }
            ExprKind::BuilderFinish { .. } => Fresh::Yes { alloc: true },
            _ => Fresh::No(NotFresh::NotNew),
        }
    }

    fn local_allocs(&self, x: LocalId) -> bool {
        let Some(l) = self.facts.local(x) else {
            return false;
        };
        let Some(d) = &l.decl else { return false };
        d.var || self.fresh(d.init).allocs()
    }

    /// Whether local `x` owns its block, memoized; a local whose decision
    /// is in progress (a cycle) is not owned.
    pub fn own(&self, x: LocalId) -> Own {
        if let Some(o) = self.own_memo.borrow().get(&x) {
            return o.clone().unwrap_or(Own::No(NotOwned::DependsOnItself, 0));
        }
        self.own_memo.borrow_mut().insert(x, None);
        let o = self.own_uncached(x);
        self.own_memo.borrow_mut().insert(x, Some(o.clone()));
        o
    }

    fn own_uncached(&self, x: LocalId) -> Own {
        let body = self.body;
        let Some(l) = self.facts.local(x) else {
            return Own::No(NotOwned::Unknown, 0);
        };
        let Some(d) = &l.decl else {
            return Own::No(NotOwned::NotLetOrVar, 0);
        };
        if self.fusion.let_fused_local(x).is_some() {
            return Own::No(NotOwned::FusedThroughLet, self.sm.stmt(d.stmt).start);
        }
        let ty = &body.locals[x].ty;
        if !ty.is_freeable() {
            return Own::No(NotOwned::NotListOrString, 0);
        }
        let decl_at = self.sm.stmt(d.stmt).start;
        if let Fresh::No(why) = self.fresh(d.init) {
            return Own::No(NotOwned::Holds(why), decl_at);
        }
        if let Some(at) = l.for_assigned {
            return Own::No(NotOwned::AssignedInForOverIt, at);
        }
        for a in &l.assigns {
            if a.nested {
                return Own::No(NotOwned::AssignedInExpression, a.at);
            }
            let self_grow = l
                .uses
                .iter()
                .any(|u| u.ctx == Ctx::GrowSelf(x) && self.is_value_of(u.expr, a.value));
            if !self_grow {
                if let Fresh::No(why) = self.fresh(a.value) {
                    return Own::No(NotOwned::AssignedNotFresh(why), a.at);
                }
            }
        }
        // Every use must be a read, a move out of the block, a return, or
        // the receiver of its own push; a put key is checked below.
        let mut key_uses = Vec::new();
        let mut escapes = Vec::new();
        // Views that die before x: x lives until their last use.
        let mut view_last = 0;
        for u in &l.uses {
            if let (Ctx::Escape(Escape::ViewedBy(_)), Some(until)) =
                (&u.ctx, self.confined_view(x, u))
            {
                view_last = view_last.max(until.unwrap_or(0));
                continue;
            }
            if u.foreign {
                let why = match &u.ctx {
                    Ctx::Escape(w) => NotOwned::Escapes(*w),
                    _ => NotOwned::InClosure,
                };
                return Own::No(why, u.at);
            }
            match &u.ctx {
                Ctx::Read(_) | Ctx::Out => {}
                Ctx::GrowSelf(_) => {}
                _ if u.moved_out => {}
                Ctx::Key(put) => key_uses.push((u, *put)),
                Ctx::Escape(Escape::ViewedBy(m)) => match self.bound_view_escape(u) {
                    // Name where the view itself escapes.
                    Some((view, why, at)) => escapes.push((
                        NotOwned::ViewEscapes {
                            method: *m,
                            view,
                            why: Box::new(why),
                        },
                        at,
                        u,
                    )),
                    None => escapes.push((NotOwned::Escapes(Escape::ViewedBy(*m)), u.at, u)),
                },
                Ctx::Escape(why) => escapes.push((NotOwned::Escapes(*why), u.at, u)),
                Ctx::Bind(y) => escapes.push((NotOwned::AliasedBy(*y), u.at, u)),
                Ctx::Assign(y) => escapes.push((NotOwned::AssignedTo(*y), u.at, u)),
            }
        }
        if let Some((why, at, _)) = escapes.first() {
            // A var whose every escape comes after its last update (in a
            // later statement of its block) still frees the values it
            // replaces: none of them has escaped.
            let last_assign = l.assigns.iter().filter_map(|a| a.index).max();
            let after = |u: &crate::walk::Use| matches!((u.index, last_assign), (Some(i), Some(m)) if i > m);
            let late = d.var
                && !l.assigns.is_empty()
                && l.assigns.iter().all(|a| a.index.is_some())
                && escapes.iter().all(|(_, _, u)| after(u))
                && key_uses.iter().all(|(u, _)| after(u));
            if late {
                return Own::Yes(End::Kept {
                    why: why.clone(),
                    at: *at,
                });
            }
            return Own::No(why.clone(), *at);
        }
        let last = self.last_index(x).max(view_last);
        if let Some(b) = self.builder(x) {
            return Own::Yes(b);
        }
        if !key_uses.is_empty() {
            let (u, put) = key_uses[0];
            let consumable = key_uses.len() == 1
                && !d.var
                && *ty == Ty::Str
                && !u.in_loop
                && u.index.is_some()
                && u.index == Some(last)
                && l.uses
                    .iter()
                    .all(|v| v.index != Some(last) || self.is_within(v.expr, put))
                && l.assigns.iter().all(|a| a.index != Some(last));
            if consumable {
                return Own::Yes(End::ConsumedKey(put));
            }
            return Own::No(NotOwned::KeyInMap, u.at);
        }
        if l.uses.iter().any(|u| u.moved_out) {
            return Own::Yes(End::MovedOut);
        }
        if let Some(set) = self.set_at_last_use(l, last, view_last) {
            return Own::Yes(End::SetInPlace(set));
        }
        Own::Yes(End::Drop {
            index: last,
            deep: self.deep(x),
        })
    }

    /// A view of `x` (`u` is x as the receiver of take, drop, slice, trim
    /// or the split family) that dies before x: read where it is made, or
    /// bound to a `let` that is only read. Gives the last statement index
    /// of x's declaring block that uses the view (None when it is used only
    /// inside the statement that makes it), or None when the view escapes
    /// (then x does).
    pub fn confined_view(&self, x: LocalId, u: &Use) -> Option<Option<usize>> {
        if u.foreign {
            return None;
        }
        let xf = self.facts.local(x)?;
        let owner = Owner {
            assigned: !xf.assigns.is_empty(),
            block: xf.decl.as_ref().map(|d| d.block),
        };
        self.view_confined(u.expr, owner, false, 0)
    }

    /// Whether the view that `recv` (x, or a view of x) is the receiver of
    /// dies first; see [`Self::confined_view`]. `pieces`: `recv`'s value is
    /// a list whose elements are views of x.
    fn view_confined(
        &self,
        recv: ExprId,
        owner: Owner,
        pieces: bool,
        depth: u32,
    ) -> Option<Option<usize>> {
        // A view of a list of pieces would be a second list of them.
        if pieces || depth > 16 {
            return None;
        }
        let view = self.facts.exprs.get(recv)?.parent?;
        let ExprKind::Method {
            method, receiver, ..
        } = &self.body[view].kind
        else {
            return None;
        };
        if *receiver != recv {
            return None;
        }
        // The split family's list is new, but its pieces are views.
        let pieces = matches!(
            method,
            Method::StrChars | Method::StrSplit | Method::StrWords | Method::StrLines
        );
        let vf = self.facts.exprs.get(view)?;
        if vf.transparent {
            return None;
        }
        match vf.ctx {
            // A `for` reads its view through the whole loop, where x may be
            // updated (freeing the viewed block).
            Ctx::Read(Reader::For) if owner.assigned => None,
            Ctx::Read(r) => self
                .view_read_keeps_nothing(view, pieces, r)
                .then_some(None),
            // A view of this view, made and consumed in the same place.
            Ctx::Escape(Escape::ViewedBy(_)) => self.view_confined(view, owner, pieces, depth + 1),
            Ctx::Bind(v) => {
                // An update of x frees (or moves) the block the view is in.
                if owner.assigned {
                    return None;
                }
                let vl = self.facts.local(v)?;
                let vd = vl.decl.as_ref()?;
                if vd.var {
                    return None;
                }
                // Declared in x's block, the view's uses count at their own
                // statements; declared deeper, every use is inside the
                // statement of x's block that holds that block.
                let same_block = owner.block == Some(vd.block);
                let mut until = None;
                for w in &vl.uses {
                    if w.foreign || w.moved_out {
                        return None;
                    }
                    match w.ctx {
                        Ctx::Read(r) if self.view_read_keeps_nothing(w.expr, pieces, r) => {}
                        Ctx::Escape(Escape::ViewedBy(_)) => {
                            let inner = Owner {
                                assigned: false,
                                block: Some(vd.block),
                            };
                            let later = self.view_confined(w.expr, inner, pieces, depth + 1)?;
                            if same_block {
                                until = until.max(later);
                            }
                        }
                        _ => return None,
                    }
                    if same_block {
                        until = until.max(w.index);
                    }
                }
                Some(until)
            }
            _ => None,
        }
    }

    /// For a view of x that escapes: the name it is bound to (if any), why
    /// it escapes and where (the use that keeps it).
    fn bound_view_escape(&self, u: &Use) -> Option<(Option<LocalId>, NotOwned, u32)> {
        let view = self.facts.exprs.get(u.expr)?.parent?;
        let vf = self.facts.exprs.get(view)?;
        let v = match vf.ctx {
            Ctx::Bind(v) => v,
            Ctx::Escape(e) => return Some((None, NotOwned::Escapes(e), vf.reader_at)),
            Ctx::Key(put) => return Some((None, NotOwned::KeyInMap, self.sm.expr(put).start)),
            _ => return None,
        };
        let vl = self.facts.local(v)?;
        let inner = Owner {
            assigned: false,
            block: vl.decl.as_ref().map(|d| d.block),
        };
        let confined = |w: &Use| match w.ctx {
            Ctx::Read(_) => true,
            Ctx::Escape(Escape::ViewedBy(_)) => {
                self.view_confined(w.expr, inner, false, 0).is_some()
            }
            _ => false,
        };
        let w = vl
            .uses
            .iter()
            .find(|w| w.foreign || w.moved_out || !confined(w))?;
        let why = match &w.ctx {
            _ if w.foreign => NotOwned::InClosure,
            Ctx::Escape(e) => NotOwned::Escapes(*e),
            Ctx::Bind(y) => NotOwned::AliasedBy(*y),
            Ctx::Assign(y) => NotOwned::AssignedTo(*y),
            Ctx::Key(_) => NotOwned::KeyInMap,
            _ => return None,
        };
        Some((Some(v), why, w.at))
    }

    /// Whether reading the view that is the value of `e` by `r` keeps
    /// nothing of it. Any reader keeps nothing of a string or list view;
    /// a list of pieces may only be read by what cannot hand a piece out
    /// (len, is_empty, join, contains, interpolation, print, log), or
    /// iterated by a `for` whose variable is only read.
    fn view_read_keeps_nothing(&self, e: ExprId, pieces: bool, r: Reader) -> bool {
        if !pieces {
            return true;
        }
        match r {
            Reader::For => self.for_var_only_read(e),
            _ => self.read_keeps_no_element(e),
        }
    }

    /// `for w in e { .. }` where `w` is a name that is only read.
    fn for_var_only_read(&self, e: ExprId) -> bool {
        let Some(block) = self.facts.exprs.get(e).and_then(|f| f.parent) else {
            return false;
        };
        let ExprKind::Block { stmts, .. } = &self.body[block].kind else {
            return false;
        };
        let pat = stmts.iter().find_map(|s| match &self.body[*s].kind {
            ir::StmtKind::For { pat, iter, .. } if *iter == e => Some(*pat),
            _ => None,
        });
        let Some(ir::PatKind::Bind(w)) = pat.map(|p| &self.body[p].kind) else {
            return false;
        };
        self.facts.local(*w).is_some_and(|l| {
            l.uses
                .iter()
                .all(|u| !u.foreign && matches!(u.ctx, Ctx::Read(_)))
        })
    }

    /// The statement index of the declaring block after which the local
    /// is dead: its last use or assignment, or its declaration.
    pub fn last_index(&self, x: LocalId) -> usize {
        let Some(l) = self.facts.local(x) else {
            return 0;
        };
        let decl = l.decl.as_ref().map(|d| d.index).unwrap_or(0);
        l.uses
            .iter()
            .filter_map(|u| u.index)
            .chain(l.assigns.iter().filter_map(|a| a.index))
            .fold(decl, usize::max)
    }

    /// Whether `e` is `outer` or inside it.
    pub fn is_within(&self, mut e: ExprId, outer: ExprId) -> bool {
        loop {
            if e == outer {
                return true;
            }
            match self.facts.exprs.get(e).and_then(|f| f.parent) {
                Some(p) => e = p,
                None => return false,
            }
        }
    }

    /// Whether the receiver use `recv` belongs to the method call that is
    /// the assigned value `value`.
    fn is_value_of(&self, recv: ExprId, value: ExprId) -> bool {
        self.facts.exprs.get(recv).and_then(|f| f.parent) == Some(value)
    }

    /// Push then join: `var v = []`, only `v := v.push(s)` and one
    /// `v.join("lit")` after every push, outside any loop.
    fn builder(&self, x: LocalId) -> Option<End> {
        let l = self.facts.local(x)?;
        let d = l.decl.as_ref()?;
        if !d.var || self.body.locals[x].ty != Ty::list(Ty::Str) {
            return None;
        }
        if !matches!(&self.body[d.init].kind, ExprKind::List(xs) if xs.is_empty()) {
            return None;
        }
        let mut join = None;
        for u in &l.uses {
            match &u.ctx {
                Ctx::GrowSelf(_) => {
                    let p = self.facts.exprs.get(u.expr)?.parent?;
                    if !matches!(
                        &self.body[p].kind,
                        ExprKind::Method {
                            method: Method::ListPush,
                            ..
                        }
                    ) {
                        return None;
                    }
                }
                Ctx::Read(_) if !u.in_loop && join.is_none() => {
                    let p = self.facts.exprs.get(u.expr)?.parent?;
                    match &self.body[p].kind {
                        ExprKind::Method {
                            method: Method::ListJoin,
                            receiver,
                            args,
                        } if *receiver == u.expr => match args.first().map(|a| &self.body[*a].kind)
                        {
                            Some(ExprKind::Lit(Lit::Str(sep))) => {
                                join = Some((p, sep.clone(), u.at))
                            }
                            _ => return None,
                        },
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        let (join, sep, at) = join?;
        if l.assigns.iter().any(|a| a.at >= at || a.nested) {
            return None;
        }
        Some(End::Builder { join, sep })
    }

    /// A list of strings that owns them: built only from fresh strings
    /// that are not names, read only by len, is_empty, join, contains and
    /// interpolation.
    fn deep(&self, x: LocalId) -> bool {
        self.strings_owned(x, false)
    }

    /// Every value `x` holds owns its strings, and no use of `x` hands one
    /// out (`allow_out`: except moving the whole list out).
    pub fn strings_owned(&self, x: LocalId, allow_out: bool) -> bool {
        if self.body.locals[x].ty != Ty::list(Ty::Str) {
            return false;
        }
        let Some(l) = self.facts.local(x) else {
            return false;
        };
        let Some(d) = &l.decl else { return false };
        if !self.owns_strings(d.init) {
            return false;
        }
        for a in &l.assigns {
            let ok = match &self.body[a.value].kind {
                ExprKind::Method {
                    method: Method::ListPush,
                    receiver,
                    args,
                } if matches!(&self.body[*receiver].kind, ExprKind::Local(r) if *r == x) => {
                    args.first().is_some_and(|s| self.owned_string(*s))
                }
                _ => self.owns_strings(a.value),
            };
            if !ok {
                return false;
            }
        }
        l.uses.iter().all(|u| match &u.ctx {
            Ctx::GrowSelf(_) => self
                .facts
                .exprs
                .get(u.expr)
                .and_then(|f| f.parent)
                .is_some_and(|p| {
                    matches!(
                        &self.body[p].kind,
                        ExprKind::Method {
                            method: Method::ListPush,
                            ..
                        }
                    )
                }),
            Ctx::Read(_) => self.read_keeps_no_element(u.expr),
            Ctx::Out => allow_out,
            _ => allow_out && u.moved_out,
        })
    }

    /// A temporary list of strings that owns them and whose reader cannot
    /// hand one of them out.
    pub fn deep_temp(&self, e: ExprId) -> bool {
        if self.body[e].ty != Ty::list(Ty::Str) || !self.owns_strings(e) {
            return false;
        }
        self.read_keeps_no_element(e)
    }

    /// Whether the parent reading the list that is the value of `e` cannot
    /// hand out one of its elements: len, is_empty, join, contains (as the
    /// receiver), interpolation, print, log, eprint.
    fn read_keeps_no_element(&self, e: ExprId) -> bool {
        let Some(p) = self.facts.exprs.get(e).and_then(|f| f.parent) else {
            return false;
        };
        match &self.body[p].kind {
            ExprKind::Method {
                method, receiver, ..
            } => *receiver == e && table::deep_read(*method),
            ExprKind::Interp(_) => true,
            ExprKind::Call {
                callee: Callee::Builtin(Builtin::Print | Builtin::Log | Builtin::Eprint),
                ..
            } => true,
            _ => false,
        }
    }

    /// A string value that nothing else holds: fresh and not a name.
    pub fn owned_string(&self, e: ExprId) -> bool {
        !matches!(self.body[e].kind, ExprKind::Local(_))
            && self.fresh(e).is_yes()
            && !self.has_local_leaf(e)
    }

    /// A value position (through blocks, if and match) that is a name.
    fn has_local_leaf(&self, e: ExprId) -> bool {
        match &self.body[e].kind {
            ExprKind::Local(_) => true,
            ExprKind::Block { tail: Some(t), .. } => self.has_local_leaf(*t),
            ExprKind::If { then, else_, .. } => {
                self.has_local_leaf(*then) || else_.is_some_and(|x| self.has_local_leaf(x))
            }
            ExprKind::Match { arms, .. } => arms.iter().any(|a| self.has_local_leaf(a.body)),
            _ => false,
        }
    }

    /// A list whose strings are all owned by it.
    pub fn owns_strings(&self, e: ExprId) -> bool {
        if self.body[e].ty == Ty::Never {
            return true;
        }
        match &self.body[e].kind {
            ExprKind::Call {
                callee: Callee::Fn(f),
                ..
            } => self
                .fn_summary(*f)
                .is_some_and(|s| s.fresh_result && s.deep_result),
            ExprKind::Local(x) => {
                let out = self.facts.local(*x).is_some_and(|l| {
                    l.uses
                        .iter()
                        .any(|u| u.expr == e && (u.moved_out || u.ctx == Ctx::Out))
                });
                out && matches!(self.own(*x), Own::Yes(end) if !matches!(end, End::Kept { .. }))
                    && self.strings_owned(*x, true)
            }
            ExprKind::Block { tail: Some(t), .. } => self.owns_strings(*t),
            ExprKind::If {
                then,
                else_: Some(x),
                ..
            } => self.owns_strings(*then) && self.owns_strings(*x),
            ExprKind::Match { arms, .. } => arms.iter().all(|a| self.owns_strings(a.body)),
            ExprKind::List(xs) => xs.iter().all(|x| self.owned_string(*x)),
            ExprKind::Method {
                method: Method::ListMap,
                args,
                ..
            } => match args.first().map(|a| &self.body[*a].kind) {
                Some(ExprKind::Lambda { body, .. }) => self.owned_string(*body),
                _ => false,
            },
            _ => false,
        }
    }
}

fn both(a: Fresh, b: Fresh) -> Fresh {
    match (a, b) {
        // One level of "a branch" however deep the branches nest.
        (Fresh::No(w @ NotFresh::Branch(_)), _) | (_, Fresh::No(w @ NotFresh::Branch(_))) => {
            Fresh::No(w)
        }
        (Fresh::No(w), _) | (_, Fresh::No(w)) => Fresh::No(NotFresh::Branch(Box::new(w))),
        (Fresh::Yes { alloc: x }, Fresh::Yes { alloc: y }) => Fresh::Yes { alloc: x || y },
    }
}

/// The body's summary given its decisions.
pub fn summarize(items: &ItemTree, f: ir::FnId, d: &Decider) -> Summary {
    let sig = &items.fns[f];
    let body = d.body;
    let mut why_not_fresh = None;
    if sig.ret.is_freeable() {
        let mut values: Vec<ExprId> = body.root.into_iter().collect();
        for &r in &d.facts.returns {
            if let ExprKind::Return(Some(v)) = &body[r].kind {
                values.push(*v);
            }
        }
        for v in values {
            if let Fresh::No(why) = d.fresh(v) {
                why_not_fresh = Some(ResultNotFresh::Returns(why));
                break;
            }
        }
    } else {
        why_not_fresh = Some(ResultNotFresh::NotListOrString);
    }
    let mut borrowed = Vec::new();
    let mut why_not_borrowed = Vec::new();
    for (i, &p) in body.params.iter().enumerate() {
        let ty = sig.params.get(i).map(|p| &p.1);
        let mut why = None;
        if ty.is_some_and(|t| t.is_freeable()) {
            if let Some(l) = d.facts.local(p) {
                for u in &l.uses {
                    let kind = match &u.ctx {
                        Ctx::Read(_) if !u.foreign => None,
                        Ctx::Escape(Escape::ViewedBy(_)) if d.confined_view(p, u).is_some() => None,
                        Ctx::Read(_) => Some(ParamUseKind::InClosure),
                        Ctx::Out => Some(ParamUseKind::Returned),
                        Ctx::Escape(w) => Some(ParamUseKind::Escapes(*w)),
                        Ctx::Bind(y) => Some(ParamUseKind::AliasedBy(*y)),
                        Ctx::Assign(y) => Some(ParamUseKind::AssignedTo(*y)),
                        Ctx::GrowSelf(_) => Some(ParamUseKind::GrownByPush),
                        Ctx::Key(_) => Some(ParamUseKind::KeyInMap),
                    };
                    if let Some(kind) = kind {
                        why = Some(ParamUse { kind, at: u.at });
                        break;
                    }
                }
            }
        }
        borrowed.push(why.is_none());
        why_not_borrowed.push(why);
    }
    let deep_result = why_not_fresh.is_none()
        && sig.ret == Ty::list(Ty::Str)
        && body.root.is_some_and(|r| d.owns_strings(r))
        && d.facts.returns.iter().all(|r| match &body[*r].kind {
            ExprKind::Return(Some(v)) => d.owns_strings(*v),
            _ => true,
        });
    let c = crate::cells::summarize(items, f, d);
    let why_not_unique = crate::shallow::result_not_unique(items, f, d);
    Summary {
        unique_result: why_not_unique.is_none(),
        why_not_unique,
        fresh_result: why_not_fresh.is_none(),
        deep_result,
        why_not_fresh,
        borrowed,
        why_not_borrowed,
        owned_deep_result: c.owned_deep_result,
        why_not_owned_deep: c.why_not_owned_deep,
        cell_borrowed: c.cell_borrowed,
        why_not_cell_borrowed: c.why_not_cell_borrowed,
        owning: c.owning,
        why_not_owning: c.why_not_owning,
        owning_result: c.owning_result,
        why_not_owning_result: c.why_not_owning_result,
    }
}
