//! Unique cells: records, tuples, sum values and `Some` that the analysis
//! proves *owned deep* (the value and every block reachable from it have
//! one reference, the owner's), freed whole at the owner's last use or
//! taken apart by a destructive `match` whose block a constructor in the
//! arm reuses. Static only: no count, no runtime test.
//!
//! Rules (each decision carries its reason, rendered by `explain`):
//! - An expression is owned deep when it is a constructor whose non-scalar
//!   fields are owned deep (strings: fresh and not a name; lists: fresh, of
//!   scalars, not a name), a nullary constructor or `None` (static), a call
//!   of a function whose result is owned deep, an `if`/`match`/block whose
//!   every value is, or the consuming use of an owned-deep local.
//! - A `let` local holding an owned-deep value stays owned while its uses
//!   are borrows (below) followed by at most one consuming use (stored in a
//!   constructor, returned or given as the block's value, or matched), in a
//!   later statement of its block than every borrow and outside any loop.
//! - A borrow keeps nothing of the value: a field read whose result is a
//!   scalar or is itself only borrowed, an argument of a parameter that
//!   borrows deep (summary), comparison, interpolation, print, a `match`
//!   whose bindings are only borrowed, a `let` alias only borrowed. The
//!   owner lives until the last use of anything borrowed from it.
//! - With no consuming use the local is dropped deep after its last use
//!   (or the last use of a borrow of it).
//! - A `match` that consumes an owned-deep local takes it apart: the arm's
//!   bindings get its fields, fields bound to `_` are dropped deep at the
//!   start of the arm, and the block is a reuse token: the first
//!   constructor of the same size class on the arm's straight-line path
//!   (not under a branch, loop or lambda) is built in it; otherwise the
//!   token is freed at the start of the arm. An arm whose pattern is `_`
//!   drops the whole value deep; an arm binding the whole value keeps it.
//! - Parameters: a cell parameter *borrows deep* when every use of it is
//!   a borrow; a function's result is *owned deep* when every value it
//!   returns is. Both join today's summaries in the same greatest fixpoint.
//! - Values captured by closures, stored in maps or lists, passed through
//!   function values or to parameters that keep them are shared: the
//!   collector's.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use ir::{
    BinOp, Builtin, Callee, Ctor, ExprId, ExprKind, ItemTree, LocalId, PatId, PatKind, Ty,
    TypeDefKind,
};

use crate::decide::Decider;
use crate::reason::{Escape, Reader};
use crate::walk::{Ctx, Use};

/// Why a value is not owned deep or a use is not a borrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shared {
    /// The type holds a map, closure or builder (no descriptor walk).
    TypeNotDeep,
    /// Not a constructor, owned-deep call or owned local.
    NotNew,
    /// A string or list field that is a name, a view or not fresh.
    FieldNotOwned,
    /// Calls a function whose result is not owned deep.
    FnResult(ir::FnId),
    /// A parameter: only borrowed by this function.
    Param,
    /// A pattern binding of a match that does not take its value apart.
    PartOf,
    /// Used twice where one use consumes (the two offsets).
    UsedTwice(u32, u32),
    /// Consumed inside a loop.
    ConsumedInLoop(u32),
    /// Used inside a closure.
    InClosure(u32),
    /// Kept by what is named, at an offset.
    Escapes(Escape, u32),
    /// Passed to parameter `param` of `f`, which does not borrow it deep.
    PassedTo { f: ir::FnId, param: u32, at: u32 },
    /// Read by something whose result may hold a part of it.
    PartEscapes(u32),
    /// A `var` (its updates are not followed yet).
    Var,
    /// Its decision depends on itself.
    Cycle,
    /// A field taken apart (at the offset) before the block it came from
    /// is reused.
    BeforeReuse(u32),
    /// Handed on (at the offset) as the value of its block or arm.
    HandedOn(u32),
}

/// How an owned-deep local ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellEnd {
    /// Dropped deep after statement `index` of its block; `at` is the last use.
    DropDeep { index: usize, at: u32 },
    /// Consumed by the use at `at` (stored, returned, moved out).
    Moved { at: u32 },
    /// Taken apart by the match given.
    Matched { m: ExprId, at: u32 },
}

/// One arm of a destructive match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArmPlan {
    /// The constructor built in the token's block.
    pub reuse: Option<ExprId>,
    /// The token is freed at the start of the arm (no constructor took it).
    pub free_token: bool,
    /// The whole value dies at the start of the arm (pattern `_`).
    pub drop_whole: bool,
    /// Field patterns `_` whose values die at the start of the arm.
    pub dead_fields: Vec<PatId>,
    /// Field bindings the arm never uses: they die at its start too.
    pub dead_binds: Vec<LocalId>,
}

/// A destructive match of an owned-deep local.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchPlan {
    pub token: LocalId,
    pub arms: Vec<ArmPlan>,
}

pub fn is_scalar(ty: &Ty) -> bool {
    matches!(ty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never)
}

/// A record, tuple, sum value or option: one word pointing at a block (or
/// at static data for nullary constructors and `None`).
pub fn is_cell(ty: &Ty) -> bool {
    matches!(ty, Ty::Adt(_) | Ty::Tuple(_) | Ty::Option(_))
}

/// Whether the runtime can free a value of `ty` through the type table:
/// scalars, strings, lists and cells of those (no map, closure, builder).
pub fn deep_type(items: &ItemTree, ty: &Ty) -> bool {
    fn go(items: &ItemTree, ty: &Ty, seen: &mut HashSet<ir::TypeId>) -> bool {
        match ty {
            Ty::Int | Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never | Ty::Str => true,
            Ty::List(e) | Ty::Option(e) => go(items, e, seen),
            Ty::Tuple(es) => es.iter().all(|e| go(items, e, seen)),
            Ty::Adt(t) => {
                if !seen.insert(*t) {
                    return true;
                }
                match &items.types[*t].kind {
                    TypeDefKind::Record { fields } => fields.iter().all(|f| go(items, &f.1, seen)),
                    TypeDefKind::Sum { variants } => variants
                        .iter()
                        .all(|v| v.fields.iter().all(|f| go(items, f, seen))),
                }
            }
            _ => false,
        }
    }
    go(items, ty, &mut HashSet::new())
}

/// Words of one field of type `ty` in a block (as the backends lay it out).
fn field_words(ty: &Ty) -> usize {
    match ty {
        Ty::Str | Ty::List(_) => 2,
        _ => 1,
    }
}

/// The runtime's size class of a block of `words` words: small classes are
/// 16-byte steps up to 128 bytes (rt's heap), bigger cells get their own
/// class per exact size here.
pub fn size_class(words: usize) -> usize {
    if words <= 16 {
        words.div_ceil(2)
    } else {
        words
    }
}

/// The analysis of one body's cells, over the use walk.
pub struct Cells<'a, 'd> {
    pub d: &'a Decider<'d>,
    pub items: &'a ItemTree,
    /// Statement position of every statement-level expression: (block, index).
    tops: HashMap<ExprId, (ExprId, usize)>,
    /// Locals bound directly by a field pattern of a match on a local:
    /// (the match, the arm's index, the scrutinee local).
    binders: HashMap<LocalId, (ExprId, usize, LocalId)>,
    own_memo: RefCell<HashMap<LocalId, Option<Result<CellEnd, Shared>>>>,
}

impl<'a, 'd> Cells<'a, 'd> {
    pub fn new(d: &'a Decider<'d>, items: &'a ItemTree) -> Self {
        let body = d.body;
        let mut tops = HashMap::new();
        for (b, e) in body.exprs.iter() {
            let ExprKind::Block { stmts, tail } = &e.kind else {
                continue;
            };
            for (i, s) in stmts.iter().enumerate() {
                for x in ir::visit::stmt_children(&body[*s].kind) {
                    tops.insert(x, (b, i));
                }
            }
            if let Some(t) = tail {
                tops.insert(*t, (b, stmts.len()));
            }
        }
        let mut binders = HashMap::new();
        for (m, e) in body.exprs.iter() {
            let ExprKind::Match { scrutinee, arms } = &e.kind else {
                continue;
            };
            let ExprKind::Local(s) = body[*scrutinee].kind else {
                continue;
            };
            for (i, arm) in arms.iter().enumerate() {
                let (PatKind::Ctor { args, .. } | PatKind::Tuple(args)) = &body[arm.pat].kind
                else {
                    continue;
                };
                for p in args {
                    if let PatKind::Bind(y) = body[*p].kind {
                        binders.insert(y, (m, i, s));
                    }
                }
            }
        }
        Cells {
            d,
            items,
            tops,
            binders,
            own_memo: RefCell::default(),
        }
    }

    fn at(&self, e: ExprId) -> u32 {
        self.d.sm.expr(e).start
    }

    fn parent(&self, e: ExprId) -> Option<ExprId> {
        self.d.facts.exprs.get(e).and_then(|f| f.parent)
    }

    /// The non-transparent parent that consumes `e`'s value, and the child
    /// of it on the way (the operand).
    fn consumer(&self, e: ExprId) -> Option<(ExprId, ExprId)> {
        let mut cur = e;
        for _ in 0..64 {
            let f = self.d.facts.exprs.get(cur)?;
            let p = f.parent?;
            if !f.transparent {
                return Some((p, cur));
            }
            cur = p;
        }
        None
    }

    /// Index of the statement of `block` that holds `e`.
    fn index_in(&self, block: ExprId, e: ExprId) -> Option<usize> {
        let mut cur = e;
        for _ in 0..4096 {
            if let Some(&(b, i)) = self.tops.get(&cur) {
                if b == block {
                    return Some(i);
                }
            }
            cur = self.parent(cur)?;
        }
        None
    }

    pub fn fn_summary(&self, f: ir::FnId) -> Option<&crate::Summary> {
        self.d.summaries.get(f.into_raw().into_u32() as usize)
    }

    /// Whether `e`'s value is owned deep.
    pub fn owned_deep(&self, e: ExprId) -> Result<(), Shared> {
        let body = self.d.body;
        let ty = &body[e].ty;
        if *ty == Ty::Never {
            return Ok(());
        }
        if !deep_type(self.items, ty) {
            return Err(Shared::TypeNotDeep);
        }
        match ty {
            Ty::Str => {
                return if self.d.owned_string(e) {
                    Ok(())
                } else {
                    Err(Shared::FieldNotOwned)
                };
            }
            Ty::List(el) => {
                let ok = is_scalar(el)
                    && !matches!(body[e].kind, ExprKind::Local(_))
                    && self.d.fresh(e).is_yes();
                return if ok {
                    Ok(())
                } else {
                    Err(Shared::FieldNotOwned)
                };
            }
            t if is_scalar(t) => return Ok(()),
            _ => {}
        }
        match &body[e].kind {
            ExprKind::Ctor { args, .. } | ExprKind::Tuple(args) => {
                args.iter().try_for_each(|a| self.owned_deep(*a))
            }
            ExprKind::Record { fields, .. } => {
                fields.iter().try_for_each(|(_, a)| self.owned_deep(*a))
            }
            ExprKind::Call {
                callee: Callee::Fn(f),
                ..
            } => match self.fn_summary(*f) {
                Some(s) if s.owned_deep_result => Ok(()),
                _ => Err(Shared::FnResult(*f)),
            },
            ExprKind::If {
                then,
                else_: Some(x),
                ..
            } => {
                self.owned_deep(*then)?;
                self.owned_deep(*x)
            }
            ExprKind::Match { arms, .. } => arms.iter().try_for_each(|a| self.owned_deep(a.body)),
            ExprKind::Block { tail: Some(t), .. } => self.owned_deep(*t),
            ExprKind::Local(x) if self.in_own_update(*x, e) => Ok(()),
            ExprKind::Local(x) => {
                let end = self.own(*x)?;
                match end {
                    CellEnd::Moved { at } if at == self.at(e) => Ok(()),
                    _ => Err(Shared::NotNew),
                }
            }
            _ => Err(Shared::NotNew),
        }
    }

    /// How owned-deep local `x` ends, or why it is not owned deep.
    pub fn own(&self, x: LocalId) -> Result<CellEnd, Shared> {
        if let Some(o) = self.own_memo.borrow().get(&x) {
            return (*o).unwrap_or(Err(Shared::Cycle));
        }
        self.own_memo.borrow_mut().insert(x, None);
        let o = self.own_uncached(x);
        self.own_memo.borrow_mut().insert(x, Some(o));
        o
    }

    fn own_uncached(&self, x: LocalId) -> Result<CellEnd, Shared> {
        let body = self.d.body;
        let ty = &body.locals[x].ty;
        if !is_cell(ty) || !deep_type(self.items, ty) {
            return Err(Shared::TypeNotDeep);
        }
        let l = self.d.facts.local(x).ok_or(Shared::NotNew)?;
        let Some(decl) = &l.decl else {
            return match body.locals[x].kind {
                ir::LocalKind::Param => Err(Shared::Param),
                _ => self.own_binding(x),
            };
        };
        self.owned_deep(decl.init)?;
        if l.for_assigned.is_some() {
            return Err(Shared::Var);
        }
        for a in &l.assigns {
            if a.nested || a.index.is_none() {
                return Err(Shared::Var);
            }
            self.owned_deep(a.value)?;
        }
        let mut consume: Option<&Use> = None;
        let mut last: Option<(usize, u32)> = None;
        let mut note = |i: Option<usize>, at: u32| {
            if let Some(i) = i {
                if last.is_none_or(|(j, _)| i >= j) {
                    last = Some((i, at));
                }
            }
        };
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            // The value handed out of its block as the block's value is
            // not a borrow, whatever reads it there (even a `let` whose
            // name is never used): the block's value is the same cell.
            let borrowed = if u.moved_out {
                Err(Shared::HandedOn(u.at))
            } else {
                self.borrow(u.expr, &u.ctx, 0)
            };
            match borrowed {
                Ok(derived) => {
                    note(u.index, u.at);
                    for e in derived {
                        match self.index_in(decl.block, e) {
                            Some(i) => note(Some(i), self.at(e)),
                            None => return Err(Shared::PartEscapes(self.at(e))),
                        }
                    }
                }
                Err(why) => {
                    if !self.consuming(u) {
                        return Err(why);
                    }
                    // `x := Cons(.., x)`: the old value moves into the new.
                    if self.in_own_update(x, u.expr) {
                        let twice = l.uses.iter().find(|v| {
                            v.at != u.at
                                && self.consuming(v)
                                && l.assigns.iter().any(|a| {
                                    self.d.is_within(u.expr, a.value)
                                        && self.d.is_within(v.expr, a.value)
                                })
                        });
                        if let Some(v) = twice {
                            return Err(Shared::UsedTwice(u.at.min(v.at), u.at.max(v.at)));
                        }
                        note(u.index, u.at);
                        continue;
                    }
                    // A var may hand its last value on only as the
                    // function's or block's value, after every update.
                    if decl.var {
                        let out = matches!(u.ctx, Ctx::Out) || u.moved_out;
                        let after_updates = u.index.is_some_and(|ci| {
                            l.assigns.iter().all(|a| a.index.is_some_and(|ai| ai < ci))
                        });
                        if !(out && after_updates) {
                            return Err(why);
                        }
                    }
                    if let Some(c) = consume {
                        return Err(Shared::UsedTwice(c.at, u.at));
                    }
                    if u.in_loop {
                        return Err(Shared::ConsumedInLoop(u.at));
                    }
                    consume = Some(u);
                }
            }
        }
        if let Some(c) = consume {
            // Every borrow ends in an earlier statement than the consuming use.
            if let (Some((i, at)), Some(ci)) = (last, c.index) {
                if i >= ci {
                    return Err(Shared::UsedTwice(at, c.at));
                }
            }
            if c.index.is_none() && !c.moved_out {
                return Err(Shared::PartEscapes(c.at));
            }
            if let Some((m, _)) = self.consumer(c.expr) {
                if matches!(c.ctx, Ctx::Escape(Escape::Matched))
                    && matches!(&body[m].kind, ExprKind::Match { scrutinee, .. } if *scrutinee == c.expr)
                {
                    return Ok(CellEnd::Matched { m, at: c.at });
                }
            }
            return Ok(CellEnd::Moved { at: c.at });
        }
        let (index, at) = last.unwrap_or((decl.index, self.d.sm.stmt(decl.stmt).start));
        Ok(CellEnd::DropDeep { index, at })
    }

    /// A field bound by a destructive match of an owned-deep value owns its
    /// part (moved out, owned deep), inside its arm: reads first, then at
    /// most one consuming use (stored, returned, the arm's value, matched),
    /// everything borrowed from it done within the arm. With no consuming
    /// use it is dropped deep when the arm's value is made. In an arm whose
    /// constructor reuses the scrutinee's block, a field is not taken apart
    /// itself: the token's block, still allocated until the reuse, points
    /// at it.
    fn own_binding(&self, x: LocalId) -> Result<CellEnd, Shared> {
        let body = self.d.body;
        let &(m, arm_i, s) = self.binders.get(&x).ok_or(Shared::PartOf)?;
        match self.own(s) {
            Ok(CellEnd::Matched { m: m2, .. }) if m2 == m => {}
            _ => return Err(Shared::PartOf),
        }
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            return Err(Shared::PartOf);
        };
        let arm = arms.get(arm_i).ok_or(Shared::PartOf)?.body;
        let l = self.d.facts.local(x).ok_or(Shared::PartOf)?;
        let is_block = matches!(body[arm].kind, ExprKind::Block { .. });
        let index = |e: ExprId| -> Option<usize> {
            if is_block {
                self.index_in(arm, e)
            } else {
                self.d.is_within(e, arm).then_some(0)
            }
        };
        let mut consume: Option<&Use> = None;
        let mut last: Option<(usize, u32)> = None;
        let mut note = |i: usize, at: u32| {
            if last.is_none_or(|(j, _)| i >= j) {
                last = Some((i, at));
            }
        };
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            let i = index(u.expr).ok_or(Shared::PartEscapes(u.at))?;
            // A borrow counts only when all it lends is done in the arm;
            // the value handed out as the arm's value is never a borrow.
            let borrowed = if self.flows_out_of(u.expr, arm) {
                Err(Shared::HandedOn(u.at))
            } else {
                self.borrow(u.expr, &u.ctx, 0)
            };
            let borrowed = borrowed.map(|derived| {
                derived
                    .iter()
                    .map(|e| index(*e).map(|j| (j, self.at(*e))))
                    .collect::<Option<Vec<_>>>()
            });
            match borrowed {
                Ok(Some(ends)) => {
                    note(i, u.at);
                    for (j, at) in ends {
                        note(j, at);
                    }
                }
                other => {
                    let why = match other {
                        Err(why) => why,
                        _ => Shared::PartEscapes(u.at),
                    };
                    if !self.consuming(u) && !self.flows_out_of(u.expr, arm) {
                        return Err(why);
                    }
                    if let Some(c) = consume {
                        return Err(Shared::UsedTwice(c.at, u.at));
                    }
                    if self.loop_between(u.expr, arm) {
                        return Err(Shared::ConsumedInLoop(u.at));
                    }
                    consume = Some(u);
                }
            }
        }
        let Some(c) = consume else {
            let (index, at) = last.unwrap_or((0, self.at(arm)));
            return Ok(CellEnd::DropDeep { index, at });
        };
        let ci = index(c.expr).ok_or(Shared::PartEscapes(c.at))?;
        if let Some((i, at)) = last {
            if i >= ci {
                return Err(Shared::UsedTwice(at, c.at));
            }
        }
        // In an arm that reuses the token's block, the block points at
        // this field until the constructor overwrites it: the field may
        // only go into that constructor or out as the arm's value, never
        // to something that could free it first (an early return, a
        // temporary, a match taking it apart).
        let reuse = self
            .match_plan(s, m)
            .and_then(|p| p.arms.get(arm_i).and_then(|a| a.reuse));
        if let Some(r) = reuse {
            if !self.flows_out_of(c.expr, arm) && !self.stored_into(c.expr, r) {
                return Err(Shared::BeforeReuse(c.at));
            }
        }
        if let Some((m2, _)) = self.consumer(c.expr) {
            let taken_apart = matches!(c.ctx, Ctx::Escape(Escape::Matched))
                && matches!(&body[m2].kind, ExprKind::Match { scrutinee, .. } if *scrutinee == c.expr);
            if taken_apart {
                return Ok(CellEnd::Matched { m: m2, at: c.at });
            }
        }
        Ok(CellEnd::Moved { at: c.at })
    }

    /// Whether `e`'s value is stored, through constructors only, into the
    /// constructor `target`.
    fn stored_into(&self, e: ExprId, target: ExprId) -> bool {
        let mut cur = e;
        for _ in 0..4096 {
            let Some((p, child)) = self.consumer(cur) else {
                return false;
            };
            let stored = matches!(
                self.d.facts.ctx(child),
                Some(Ctx::Escape(
                    Escape::StoredInCtor(_) | Escape::StoredInTuple | Escape::StoredInField { .. }
                ))
            );
            if !stored {
                return false;
            }
            if p == target {
                return true;
            }
            cur = p;
        }
        false
    }

    /// Whether `e`'s value becomes the value of `arm` (through transparent
    /// edges only: a tail, an `if`/`match` branch).
    fn flows_out_of(&self, e: ExprId, arm: ExprId) -> bool {
        let mut cur = e;
        for _ in 0..4096 {
            if cur == arm {
                return true;
            }
            match self.d.facts.exprs.get(cur) {
                Some(f) if f.transparent => match f.parent {
                    Some(p) => cur = p,
                    None => return false,
                },
                _ => return false,
            }
        }
        false
    }

    /// Whether `e` is in a loop (a `while`'s condition or body, a `for`'s
    /// body) nested inside `top`.
    fn loop_between(&self, e: ExprId, top: ExprId) -> bool {
        let body = self.d.body;
        let mut cur = e;
        for _ in 0..4096 {
            if cur == top {
                return false;
            }
            if let Some(&(b, i)) = self.tops.get(&cur) {
                if let ExprKind::Block { stmts, .. } = &body[b].kind {
                    if let Some(s) = stmts.get(i) {
                        match &body[*s].kind {
                            ir::StmtKind::While { .. } => return true,
                            ir::StmtKind::For { body: fb, .. } if *fb == cur => return true,
                            _ => {}
                        }
                    }
                }
            }
            match self.parent(cur) {
                Some(p) => cur = p,
                None => return true,
            }
        }
        true
    }

    /// Whether `e` (a use of var `x`) is inside the value of an update of
    /// `x` (`x := Cons(.., x)`): it moves the old value into the new one,
    /// which `own` checks is owned deep.
    fn in_own_update(&self, x: LocalId, e: ExprId) -> bool {
        let Some(l) = self.d.facts.local(x) else {
            return false;
        };
        let var = l.decl.as_ref().is_some_and(|d| d.var);
        var && l.assigns.iter().any(|a| self.d.is_within(e, a.value))
    }

    /// Whether use `u` may consume the value: stored in a constructor that
    /// is itself owned deep, returned, moved out, or matched.
    fn consuming(&self, u: &Use) -> bool {
        if u.moved_out {
            return true;
        }
        matches!(
            &u.ctx,
            Ctx::Out
                | Ctx::Escape(
                    Escape::Matched
                        | Escape::StoredInCtor(_)
                        | Escape::StoredInTuple
                        | Escape::StoredInField { .. }
                )
        )
    }

    /// Whether the use of a value at `e` (with context `ctx`) is a borrow:
    /// gives the expressions that use what was borrowed from it (the owner
    /// must live until they are done), or why it is not a borrow.
    fn borrow(&self, e: ExprId, ctx: &Ctx, depth: u32) -> Result<Vec<ExprId>, Shared> {
        let body = self.d.body;
        let at = self.at(e);
        if depth > 16 {
            return Err(Shared::PartEscapes(at));
        }
        if is_scalar(&body[e].ty) {
            return Ok(Vec::new());
        }
        let consumer = self.consumer(e);
        let derived = |c: ExprId| -> Result<Vec<ExprId>, Shared> {
            if is_scalar(&body[c].ty) {
                return Ok(vec![c]);
            }
            let ctx = self
                .d
                .facts
                .ctx(c)
                .cloned()
                .ok_or(Shared::PartEscapes(at))?;
            let mut v = self.borrow(c, &ctx, depth + 1)?;
            v.push(c);
            Ok(v)
        };
        match ctx {
            Ctx::Read(Reader::Field | Reader::Indexing) => {
                let (c, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                derived(c)
            }
            Ctx::Read(Reader::Call(f)) => {
                let (c, arg) = consumer.ok_or(Shared::PartEscapes(at))?;
                let ExprKind::Call { args, .. } = &body[c].kind else {
                    return Err(Shared::PartEscapes(at));
                };
                let i = args.iter().position(|a| *a == arg).unwrap_or(usize::MAX);
                let ty = &body[e].ty;
                let ok = if is_cell(ty) {
                    self.fn_summary(*f)
                        .and_then(|s| s.cell_borrowed.get(i))
                        .copied()
                        .unwrap_or(false)
                } else {
                    match ty {
                        Ty::Str => true,
                        Ty::List(el) => is_scalar(el) || **el == Ty::Str,
                        _ => false,
                    }
                };
                if ok {
                    Ok(vec![c])
                } else {
                    Err(Shared::PassedTo {
                        f: *f,
                        param: i as u32,
                        at,
                    })
                }
            }
            Ctx::Read(Reader::Method(_)) => {
                let (c, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                let cty = &body[c].ty;
                let copies = is_scalar(cty)
                    || (*cty == Ty::Str && self.d.fresh(c).is_yes())
                    || matches!(cty, Ty::List(el) if is_scalar(el) && self.d.fresh(c).is_yes());
                if copies {
                    Ok(vec![c])
                } else {
                    Err(Shared::PartEscapes(at))
                }
            }
            // A statement's value thrown away: the use itself is the last.
            Ctx::Read(Reader::DiscardedLet | Reader::DiscardedValue) => Ok(Vec::new()),
            Ctx::Read(
                Reader::Interpolation
                | Reader::Binary(_)
                | Reader::Unary
                | Reader::Builder
                | Reader::Builtin(Builtin::Print | Builtin::Log),
            ) => Ok(consumer.map(|(c, _)| vec![c]).unwrap_or_default()),
            Ctx::Escape(Escape::Matched) => {
                let (m, _) = consumer.ok_or(Shared::PartEscapes(at))?;
                let ExprKind::Match { arms, .. } = &body[m].kind else {
                    return Err(Shared::PartEscapes(at));
                };
                let mut out = vec![m];
                for arm in arms {
                    for y in pat_binds(body, arm.pat) {
                        out.extend(self.alias_borrow(y, depth)?);
                    }
                }
                Ok(out)
            }
            Ctx::Bind(y) => {
                let decl_var = self
                    .d
                    .facts
                    .local(*y)
                    .and_then(|l| l.decl.as_ref())
                    .is_none_or(|d| d.var);
                if decl_var {
                    return Err(Shared::PartEscapes(at));
                }
                // The `let` statement is the use's own position (its
                // "consumer" is the enclosing block).
                self.alias_borrow(*y, depth)
            }
            Ctx::Escape(why) => Err(Shared::Escapes(*why, at)),
            _ => Err(Shared::PartEscapes(at)),
        }
    }

    /// A local bound to a borrowed value (a `let` alias or a pattern
    /// binding): every use of it must be a borrow.
    fn alias_borrow(&self, y: LocalId, depth: u32) -> Result<Vec<ExprId>, Shared> {
        let Some(l) = self.d.facts.local(y) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            out.extend(self.borrow(u.expr, &u.ctx, depth + 1)?);
            out.push(u.expr);
        }
        Ok(out)
    }

    /// Whether every use of parameter `p` is a borrow, or its first use
    /// that is not.
    pub fn param_borrowed(&self, p: LocalId) -> Result<(), Shared> {
        let Some(l) = self.d.facts.local(p) else {
            return Ok(());
        };
        for u in &l.uses {
            if u.foreign {
                return Err(Shared::InClosure(u.at));
            }
            self.borrow(u.expr, &u.ctx, 0)?;
        }
        Ok(())
    }

    /// The destructive match of `x` at `m`: tokens, reuses, dead fields.
    pub fn match_plan(&self, x: LocalId, m: ExprId) -> Option<MatchPlan> {
        let body = self.d.body;
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            return None;
        };
        let mut out = Vec::new();
        for arm in arms {
            let mut a = ArmPlan::default();
            match &body[arm.pat].kind {
                PatKind::Wild => a.drop_whole = true,
                PatKind::Ctor { ctor, args } if !args.is_empty() => {
                    let fields = self.ctor_fields(*ctor, &body[arm.pat].ty);
                    self.dead_parts(args, &mut a);
                    let words = 1 + fields.iter().map(field_words).sum::<usize>();
                    a.reuse = self.reuse_candidate(arm.body, size_class(words));
                    a.free_token = a.reuse.is_none();
                }
                PatKind::Tuple(args) => {
                    self.dead_parts(args, &mut a);
                    let words = args
                        .iter()
                        .map(|p| field_words(&body[*p].ty))
                        .sum::<usize>();
                    a.reuse = self.reuse_candidate(arm.body, size_class(words.max(1)));
                    a.free_token = a.reuse.is_none();
                }
                _ => {}
            }
            out.push(a);
        }
        Some(MatchPlan {
            token: x,
            arms: out,
        })
    }

    /// The fields of a taken-apart cell that die at the start of the arm:
    /// `_` patterns and bindings never used, of a type a drop can free.
    fn dead_parts(&self, args: &[PatId], a: &mut ArmPlan) {
        let body = self.d.body;
        for p in args {
            if field_drop(&body[*p].ty).is_none() {
                continue;
            }
            match &body[*p].kind {
                PatKind::Wild => a.dead_fields.push(*p),
                PatKind::Bind(y) if self.d.facts.local(*y).is_none_or(|l| l.uses.is_empty()) => {
                    a.dead_binds.push(*y)
                }
                _ => {}
            }
        }
    }

    /// Field types of constructor `c` of a value of type `ty`.
    fn ctor_fields(&self, c: Ctor, ty: &Ty) -> Vec<Ty> {
        match (c, ty) {
            (Ctor::Some, Ty::Option(e)) => vec![(**e).clone()],
            (Ctor::User(t, i), _) => match &self.items.types[t].kind {
                TypeDefKind::Sum { variants } => variants
                    .get(i as usize)
                    .map(|v| v.fields.clone())
                    .unwrap_or_default(),
                TypeDefKind::Record { fields } => fields.iter().map(|f| f.1.clone()).collect(),
            },
            _ => Vec::new(),
        }
    }

    /// Words of the block a constructor expression allocates (None: it
    /// allocates nothing).
    pub fn ctor_words(&self, e: ExprId) -> Option<usize> {
        let body = self.d.body;
        match &body[e].kind {
            ExprKind::Ctor { ctor, args } if !args.is_empty() => {
                let fs = self.ctor_fields(*ctor, &body[e].ty);
                Some(1 + fs.iter().map(field_words).sum::<usize>())
            }
            ExprKind::Tuple(xs) => Some(
                xs.iter()
                    .map(|x| field_words(&body[*x].ty))
                    .sum::<usize>()
                    .max(1),
            ),
            ExprKind::Record { ty, .. } => match &self.items.types[*ty].kind {
                TypeDefKind::Record { fields } => Some(
                    fields
                        .iter()
                        .map(|f| field_words(&f.1))
                        .sum::<usize>()
                        .max(1),
                ),
                TypeDefKind::Sum { .. } => None,
            },
            _ => None,
        }
    }

    /// The first constructor of size class `class` on the straight-line
    /// path of `e` (evaluated exactly once whenever `e` completes).
    fn reuse_candidate(&self, e: ExprId, class: usize) -> Option<ExprId> {
        let body = self.d.body;
        let mut found = None;
        self.spine(e, &mut |x| {
            if found.is_none() && self.ctor_words(x).map(size_class) == Some(class) {
                found = Some(x);
            }
        });
        let _ = body;
        found
    }

    /// Visits the expressions evaluated exactly once when `e` completes, in
    /// evaluation order (children before parents).
    fn spine(&self, e: ExprId, f: &mut dyn FnMut(ExprId)) {
        let body = self.d.body;
        match &body[e].kind {
            ExprKind::If { cond, .. } => self.spine(*cond, f),
            ExprKind::Match { scrutinee, .. } => self.spine(*scrutinee, f),
            ExprKind::Lambda { .. } => {}
            ExprKind::Binary {
                op: BinOp::And | BinOp::Or,
                lhs,
                ..
            } => self.spine(*lhs, f),
            ExprKind::Block { stmts, tail } => {
                for s in stmts {
                    match &body[*s].kind {
                        ir::StmtKind::Let { init, .. } | ir::StmtKind::Var { init, .. } => {
                            self.spine(*init, f)
                        }
                        ir::StmtKind::Assign { value, .. } => self.spine(*value, f),
                        ir::StmtKind::Expr(x) => self.spine(*x, f),
                        ir::StmtKind::For { iter, .. } => self.spine(*iter, f),
                        ir::StmtKind::While { .. } | ir::StmtKind::Drop(_) => {}
                    }
                }
                if let Some(t) = tail {
                    self.spine(*t, f);
                }
            }
            k => {
                for c in ir::visit::children(k) {
                    self.spine(c, f);
                }
                f(e);
            }
        }
    }
}

/// How a drop frees a dead field of type `ty` (the `deep` flag of its
/// drop), or None when it is left to the collector: cells are dropped deep
/// through the type descriptors. A string or list field stays (its drop
/// form would be the list/string one, which treats a block read out of a
/// cell as a second reference).
pub fn field_drop(ty: &Ty) -> Option<bool> {
    is_cell(ty).then_some(true)
}

/// Writes the cell decisions of one body into the plan: deep drops of
/// owned-deep locals, and destructive matches with their reuses.
pub fn plan(c: &Cells, plan: &mut crate::rewrite::Plan, why: &mut Vec<crate::DropReason>) {
    use crate::DropReason as R;
    let body = c.d.body;
    let mut locals: Vec<LocalId> = c.d.facts.locals.keys().copied().collect();
    locals.sort_by_key(|l| l.into_raw().into_u32());
    let reason = |why: &mut Vec<R>, r: R| {
        why.push(r);
        (why.len() - 1) as u32
    };
    let mut exprs: Vec<ExprId> = c.d.facts.exprs.iter().map(|(e, _)| e).collect();
    exprs.sort_by_key(|e| e.into_raw().into_u32());
    for e in exprs {
        if let Some(reader) = temp_read(c, e) {
            let r = reason(why, R::CellTemp(reader));
            plan.temps.insert(e, r);
            plan.deep_temps.insert(e);
        }
    }
    for x in locals {
        if !is_cell(&body.locals[x].ty) {
            continue;
        }
        let Some(lf) = c.d.facts.local(x) else {
            continue;
        };
        let decl = lf.decl.clone();
        if decl.is_none() && !c.binders.contains_key(&x) {
            continue;
        }
        match c.own(x) {
            Ok(CellEnd::DropDeep { index, .. }) => match (&decl, c.binders.get(&x)) {
                (Some(decl), _) => {
                    let r = reason(why, R::CellLastUse(x));
                    plan.drops
                        .entry(decl.block)
                        .or_default()
                        .push((index, x, true, r));
                }
                // A field never used is dropped by its match (dead_binds).
                (None, Some(&(m, arm, _))) if !lf.uses.is_empty() => {
                    let r = reason(why, R::CellLastUse(x));
                    plan.arm_ends.entry((m, arm)).or_default().push((x, r));
                }
                _ => {}
            },
            Ok(CellEnd::Matched { m, .. }) => {
                let Some(mp) = c.match_plan(x, m) else {
                    continue;
                };
                let mut starts = Vec::new();
                for a in mp.arms {
                    let mut st = crate::rewrite::ArmStart {
                        // The token's block points at its dead fields until
                        // the constructor overwrites it: free them after.
                        at_end: a.reuse.is_some(),
                        ..Default::default()
                    };
                    for p in a.dead_fields {
                        let r = reason(why, R::DeadField(x));
                        st.fields.push((p, r));
                    }
                    for y in a.dead_binds {
                        let r = reason(why, R::DeadField(x));
                        st.binds.push((y, r));
                    }
                    match a.reuse {
                        Some(ctor) if !plan.reuses.contains_key(&ctor) => {
                            let r = reason(why, R::Reused { local: x, by: ctor });
                            plan.reuses.insert(ctor, (x, r));
                        }
                        _ if a.drop_whole => {
                            st.token = Some((x, true, reason(why, R::DeadValue(x))));
                        }
                        _ if a.free_token || a.reuse.is_some() => {
                            st.token = Some((x, false, reason(why, R::TokenFreed(x))));
                        }
                        _ => {}
                    }
                    starts.push(st);
                }
                plan.matches.insert(m, starts);
            }
            _ => {}
        }
    }
}

/// Whether an owned-deep cell `e` that nobody names can be freed whole
/// after its read: the reader keeps nothing of it (a parameter that
/// borrows deep, print, interpolation, a comparison), and `e` allocates.
pub fn temp_read(c: &Cells, e: ExprId) -> Option<Reader> {
    let d = c.d;
    let body = d.body;
    let f = d.facts.exprs.get(e)?;
    if f.transparent || !is_cell(&body[e].ty) || matches!(body[e].kind, ExprKind::Local(_)) {
        return None;
    }
    let Ctx::Read(reader) = &f.ctx else {
        return None;
    };
    let reads = match reader {
        Reader::Call(g) => {
            let p = f.parent?;
            let ExprKind::Call { args, .. } = &body[p].kind else {
                return None;
            };
            let i = args.iter().position(|a| *a == e)?;
            c.fn_summary(*g)
                .and_then(|s| s.cell_borrowed.get(i))
                .copied()
                .unwrap_or(false)
        }
        Reader::Builtin(Builtin::Print | Builtin::Log) | Reader::Interpolation => true,
        Reader::Binary(_) => true,
        _ => false,
    };
    // A value that never allocates (a nullary constructor, `None`) has
    // nothing to free; a reader on a path that does not return never
    // reaches the drop.
    let allocates = !matches!(&body[e].kind, ExprKind::Ctor { args, .. } if args.is_empty());
    let diverges = f.parent.is_some_and(|p| body[p].ty == Ty::Never);
    (reads && allocates && !diverges && c.owned_deep(e).is_ok()).then_some(*reader)
}

/// The locals a pattern binds.
pub fn pat_binds(body: &ir::Body, p: PatId) -> Vec<LocalId> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(p) = stack.pop() {
        match &body[p].kind {
            PatKind::Bind(x) => out.push(*x),
            PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => stack.extend(ps.iter().copied()),
            _ => {}
        }
    }
    out
}

/// The cell facts of one function's summary: result owned deep (or why
/// not), and per parameter whether the body borrows it deep (or why not).
pub fn summarize(
    items: &ItemTree,
    f: ir::FnId,
    d: &Decider,
) -> (bool, Option<Shared>, Vec<bool>, Vec<Option<Shared>>) {
    let sig = &items.fns[f];
    let body = d.body;
    let c = Cells::new(d, items);
    let mut why_result = None;
    if !is_cell(&sig.ret) || !deep_type(items, &sig.ret) {
        why_result = Some(Shared::TypeNotDeep);
    } else {
        let mut values: Vec<ExprId> = body.root.into_iter().collect();
        for &r in &d.facts.returns {
            if let ExprKind::Return(Some(v)) = &body[r].kind {
                values.push(*v);
            }
        }
        for v in values {
            if let Err(why) = c.owned_deep(v) {
                why_result = Some(why);
                break;
            }
        }
    }
    let mut borrowed = Vec::new();
    let mut why_not = Vec::new();
    for &p in &body.params {
        let why = if is_cell(&body.locals[p].ty) {
            c.param_borrowed(p).err()
        } else {
            None
        };
        borrowed.push(why.is_none());
        why_not.push(why);
    }
    (why_result.is_none(), why_result, borrowed, why_not)
}
