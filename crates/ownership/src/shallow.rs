//! Unique cells that are not owned deep: a record, tuple, sum value or
//! `Some` block that nobody else refers to, whose fields may be shared
//! (a string or list also held elsewhere, a value read out of a map). Its
//! own block is freed at its last use (`drop r`, shallow): the fields are
//! left alone, so what they point at may live on anywhere.
//!
//! Rules (each decision carries its reason, rendered by `explain`):
//! - A value is *unique* when it is a constructor, record or tuple
//!   expression, the result of a method that makes an option of its own
//!   (`get`, `remove`, `find`, ...: a new `Some` block, or the static
//!   `None`), or an `if`/`match`/block whose
//!   every value is.
//! - A use *keeps nothing of the block* when it reads a field, hands it to
//!   a method that only reads it, interpolates, prints or compares it,
//!   discards it, passes it to a parameter that borrows it (summary), or
//!   matches it without a name for the whole value: the values it reads
//!   out are the fields, which the block never owned.
//! - A `let` local holding a unique value that is not owned deep, whose
//!   uses all keep nothing of the block (none in a closure, none after the
//!   block that declares it), is dropped shallow after the statement of
//!   its block holding its last use.
//! - A unique value nobody names, not owned deep, read by such a use, is
//!   freed shallow right after the read (a temporary).
//! - A `let` local closure that captures something and is only called,
//!   or handed to a method (which calls it during the call and keeps
//!   nothing), none of its uses in another closure, is dropped after the
//!   statement of its block holding its last use: its block only, what it
//!   captured is left alone.
//! - Owned-deep values are the deep rules' (`cells.rs`); `var`s, values
//!   stored, returned, captured or given to a parameter that keeps them
//!   are the collector's.

use std::collections::HashSet;

use ir::{Builtin, Callee, ExprId, ExprKind, LocalId, Method, PatKind, Ty};

use crate::cells::{is_cell, Cells, Shared};
use crate::reason::Reader;
use crate::walk::Ctx;

/// How a unique, not owned-deep local ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShallowEnd {
    /// Dropped after statement `index` of its block; `at` is the last use.
    pub index: usize,
    pub at: u32,
}

/// Whether `e`'s value is a new cell block nobody else refers to (or
/// static data, which a free leaves alone).
pub fn unique(c: &Cells, e: ExprId) -> Result<(), Shared> {
    let body = c.d.body;
    if body[e].ty == Ty::Never {
        return Ok(());
    }
    if !is_cell(&body[e].ty) {
        return Err(Shared::NotNew);
    }
    match &body[e].kind {
        ExprKind::Ctor { .. } | ExprKind::Tuple(_) | ExprKind::Record { .. } => Ok(()),
        ExprKind::Method { method, .. } if makes_some(*method) => Ok(()),
        ExprKind::Call {
            callee: Callee::Fn(g),
            ..
        } => match c.fn_summary(*g) {
            Some(s) if s.unique_result => Ok(()),
            _ => Err(Shared::FnResult(*g)),
        },
        ExprKind::If {
            then,
            else_: Some(x),
            ..
        } => {
            unique(c, *then)?;
            unique(c, *x)
        }
        ExprKind::Match { arms, .. } => arms.iter().try_for_each(|a| unique(c, a.body)),
        ExprKind::Block { tail: Some(t), .. } => unique(c, *t),
        _ => Err(Shared::NotNew),
    }
}

/// The methods whose result is a new `Some` block (or `None`).
pub fn makes_some(m: Method) -> bool {
    ir::methods::makes_option(m)
}

/// Whether evaluating `e` (a unique value) may allocate a block: some
/// value it can take is not static.
fn allocates(c: &Cells, e: ExprId) -> bool {
    let body = c.d.body;
    match &body[e].kind {
        ExprKind::Ctor { args, .. } => !args.is_empty(),
        ExprKind::Tuple(_)
        | ExprKind::Record { .. }
        | ExprKind::Method { .. }
        | ExprKind::Call { .. } => true,
        ExprKind::If {
            then,
            else_: Some(x),
            ..
        } => allocates(c, *then) || allocates(c, *x),
        ExprKind::Match { arms, .. } => arms.iter().any(|a| allocates(c, a.body)),
        ExprKind::Block { tail: Some(t), .. } => allocates(c, *t),
        _ => false,
    }
}

/// Whether the use of a cell at `e` (with context `ctx`) keeps nothing of
/// its block, or why it may.
fn keeps_nothing(c: &Cells, e: ExprId, ctx: &Ctx) -> Result<(), Shared> {
    let body = c.d.body;
    let at = c.d.sm.expr(e).start;
    match ctx {
        Ctx::Read(
            Reader::Field
            | Reader::Method(_)
            | Reader::Interpolation
            | Reader::Binary(_)
            | Reader::Unary
            | Reader::Builtin(Builtin::Print | Builtin::Log)
            | Reader::DiscardedLet
            | Reader::DiscardedValue,
        ) => Ok(()),
        Ctx::Read(Reader::Call(f)) => {
            let p = c.d.facts.exprs.get(e).and_then(|x| x.parent);
            let i = match p.map(|p| &body[p].kind) {
                Some(ExprKind::Call {
                    callee: Callee::Fn(_),
                    args,
                }) => args.iter().position(|a| *a == e),
                _ => None,
            };
            let borrowed = i.is_some_and(|i| {
                c.fn_summary(*f)
                    .and_then(|s| s.cell_borrowed.get(i))
                    .copied()
                    .unwrap_or(false)
            });
            if borrowed {
                Ok(())
            } else {
                Err(Shared::PassedTo {
                    f: *f,
                    param: i.unwrap_or(0) as u32,
                    at,
                })
            }
        }
        // A match reads fields out; a name for the whole value would be a
        // second reference to the block.
        Ctx::Escape(crate::reason::Escape::Matched) => {
            let m = c.d.facts.exprs.get(e).and_then(|x| x.parent);
            match m.map(|m| &body[m].kind) {
                Some(ExprKind::Match { scrutinee, arms }) if *scrutinee == e => {
                    let whole = arms.iter().find(|a| {
                        matches!(body[a.pat].kind, PatKind::Bind(_) | PatKind::At { .. })
                    });
                    match whole {
                        Some(a) => Err(Shared::NamedWhole(c.d.sm.pat(a.pat).start)),
                        None => Ok(()),
                    }
                }
                _ => Err(Shared::PartEscapes(at)),
            }
        }
        Ctx::Escape(w) => Err(Shared::Escapes(*w, at)),
        Ctx::Out => Err(Shared::HandedOn(at)),
        _ => Err(Shared::PartEscapes(at)),
    }
}

/// How `let` local `x` (not owned deep) ends when its value is unique and
/// no use keeps its block, or why not.
pub fn local(c: &Cells, x: LocalId) -> Result<ShallowEnd, Shared> {
    if !is_cell(&c.d.body.locals[x].ty) {
        return Err(Shared::NotNew);
    }
    let decl = let_decl(c, x)?;
    unique(c, decl.init)?;
    if !allocates(c, decl.init) || lookup_of_upsert(c, decl.init) {
        return Err(Shared::NotNew);
    }
    last_use(c, x, |u| keeps_nothing(c, u.expr, &u.ctx))
}

/// The declaration of `x`, a `let` (not a `var`, never assigned).
fn let_decl<'c>(c: &'c Cells, x: LocalId) -> Result<&'c crate::walk::Decl, Shared> {
    let l = c.d.facts.local(x).ok_or(Shared::NotNew)?;
    let decl = l.decl.as_ref().ok_or(Shared::NotNew)?;
    if decl.var || !l.assigns.is_empty() || l.for_assigned.is_some() {
        return Err(Shared::Var);
    }
    Ok(decl)
}

/// Where `let` local `x`'s block ends: after the statement of its block
/// holding its last use, when every use passes `keeps` (none in another
/// closure, none handed out of the block or outside its frame).
fn last_use(
    c: &Cells,
    x: LocalId,
    keeps: impl Fn(&crate::walk::Use) -> Result<(), Shared>,
) -> Result<ShallowEnd, Shared> {
    let l = c.d.facts.local(x).ok_or(Shared::NotNew)?;
    let decl = l.decl.as_ref().ok_or(Shared::NotNew)?;
    let mut end = ShallowEnd {
        index: decl.index,
        at: c.d.sm.stmt(decl.stmt).start,
    };
    for u in &l.uses {
        if u.foreign {
            return Err(Shared::InClosure(u.at));
        }
        if u.moved_out {
            return Err(Shared::HandedOn(u.at));
        }
        keeps(u)?;
        let i = u.index.ok_or(Shared::PartEscapes(u.at))?;
        if i >= end.index {
            end = ShallowEnd { index: i, at: u.at };
        }
    }
    Ok(end)
}

/// Why one of the values function `f` returns is not unique (None: every
/// one is, so its callers may free the block).
pub fn result_not_unique(
    items: &ir::ItemTree,
    f: ir::FnId,
    d: &crate::decide::Decider,
) -> Option<Shared> {
    if !is_cell(&items.fns[f].ret) {
        return Some(Shared::NotNew);
    }
    let c = Cells::new(d, items);
    let body = d.body;
    let mut values: Vec<ExprId> = body.root.into_iter().collect();
    for &r in &d.facts.returns {
        if let ExprKind::Return(Some(v)) = &body[r].kind {
            values.push(*v);
        }
    }
    values.into_iter().find_map(|v| unique(&c, v).err())
}

/// Whether `e` is the lookup of an upsert (its probe is kept for the
/// put: the lookup stays where it is).
fn lookup_of_upsert(c: &Cells, e: ExprId) -> bool {
    matches!(c.d.body[e].kind, ExprKind::Method { .. })
        && ir::upsert::Plan::body(c.d.body)
            .upserts
            .iter()
            .any(|u| u.lookup == e)
}

/// The reader of a unique value nobody names that is freed shallow after
/// it: the value allocates, is not owned deep, and its reader keeps
/// nothing of its block.
pub fn temp(c: &Cells, e: ExprId, upsert_lookups: &HashSet<ExprId>) -> Option<Reader> {
    let d = c.d;
    let body = d.body;
    let f = d.facts.exprs.get(e)?;
    if f.transparent || !is_cell(&body[e].ty) || upsert_lookups.contains(&e) {
        return None;
    }
    let Ctx::Read(reader) = &f.ctx else {
        return None;
    };
    unique(c, e).ok()?;
    if !allocates(c, e) || c.owned_deep(e).is_ok() {
        return None;
    }
    // A reader on a path that does not return never reaches the drop.
    if f.parent.is_some_and(|p| body[p].ty == Ty::Never) {
        return None;
    }
    keeps_nothing(c, e, &f.ctx).ok()?;
    Some(*reader)
}

/// Writes the shallow decisions of one body into the plan: drops of
/// unique locals and temporaries that are not owned deep.
pub fn plan(c: &Cells, plan: &mut crate::rewrite::Plan, why: &mut Vec<crate::DropReason>) {
    use crate::DropReason as R;
    let body = c.d.body;
    let lookups: HashSet<ExprId> = ir::upsert::Plan::body(body)
        .upserts
        .iter()
        .map(|u| u.lookup)
        .collect();
    let mut exprs: Vec<ExprId> = c.d.facts.exprs.iter().map(|(e, _)| e).collect();
    exprs.sort_by_key(|e| e.into_raw().into_u32());
    for e in exprs {
        if plan.temps.contains_key(&e) {
            continue;
        }
        if let Some(reader) = temp(c, e, &lookups) {
            why.push(R::CellTempShallow(reader));
            plan.temps.insert(e, (why.len() - 1) as u32);
            plan.shallow_temps.insert(e);
        }
    }
    let mut locals: Vec<LocalId> = c.d.facts.locals.keys().copied().collect();
    locals.sort_by_key(|l| l.into_raw().into_u32());
    // Closures first, then the cells, as the reasons are numbered.
    let closures = locals.iter().map(|&x| (x, true));
    let cells = locals.iter().map(|&x| (x, false));
    for (x, is_closure) in closures.chain(cells) {
        let Some(decl) = c.d.facts.local(x).and_then(|l| l.decl.clone()) else {
            continue;
        };
        let decided = if is_closure {
            closure(c, x).map(|end| (end, R::ClosureLastUse(x)))
        } else {
            let ty = &body.locals[x].ty;
            if !is_cell(ty) || crate::cells::never_block(c.items, ty) || c.own(x).is_ok() {
                continue;
            }
            local(c, x).map(|end| (end, R::CellShallow(x)))
        };
        if let Ok((end, reason)) = decided {
            why.push(reason);
            let at = (why.len() - 1) as u32;
            plan.drops
                .entry(decl.block)
                .or_default()
                .push((end.index, x, false, at));
            plan.shallow.insert(x, end);
        }
    }
}

/// How a local closure `x` ends when it is only called (or handed to a
/// method, which calls it during the call and keeps nothing): its block
/// is freed after its last use; the values it captured are left alone.
/// Or why not.
pub fn closure(c: &Cells, x: LocalId) -> Result<ShallowEnd, Shared> {
    let body = c.d.body;
    if !matches!(body.locals[x].ty, Ty::Fn(..)) {
        return Err(Shared::NotNew);
    }
    let decl = let_decl(c, x)?;
    match &body[decl.init].kind {
        ExprKind::Lambda { captures, .. } if !captures.is_empty() => {}
        _ => return Err(Shared::NotNew),
    }
    last_use(c, x, |u| match &u.ctx {
        Ctx::Read(Reader::CallOfValue | Reader::Method(_)) => Ok(()),
        Ctx::Escape(w) => Err(Shared::Escapes(*w, u.at)),
        Ctx::Out => Err(Shared::HandedOn(u.at)),
        _ => Err(Shared::PartEscapes(u.at)),
    })
}
