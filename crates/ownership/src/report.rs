//! Fates: for every allocation site, what happens to its block and why
//! (what `sspur explain` prints). Sites and fates are data; `render_*`
//! turns them into text.

use ir::fusion::Consumer;
use ir::{BinOp, Builtin, Callee, Ctor, ExprId, ExprKind, FnId, LocalId, Method, Ty, TypeId};

use crate::cells::{CellEnd, Cells, Shared};
use crate::decide::{Decider, End, Fresh, Own};
use crate::reason::{Cx, Escape, NotFresh, NotOwned, Reader};
use crate::rewrite::Plan;
use crate::walk::{ctor_name, Ctx};
use crate::{Fate, Summary};

/// The kind of block a site makes, as `explain` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    List,
    Str,
    Map,
    Tuple,
    Closure,
    Option,
    Value,
}

impl BlockKind {
    fn of(ty: &Ty) -> BlockKind {
        match ty {
            Ty::List(_) => BlockKind::List,
            Ty::Str => BlockKind::Str,
            Ty::Map(..) => BlockKind::Map,
            Ty::Tuple(_) => BlockKind::Tuple,
            Ty::Fn(..) => BlockKind::Closure,
            Ty::Option(_) => BlockKind::Option,
            _ => BlockKind::Value,
        }
    }
    fn name(self) -> &'static str {
        match self {
            BlockKind::List => "list",
            BlockKind::Str => "string",
            BlockKind::Map => "map",
            BlockKind::Tuple => "tuple",
            BlockKind::Closure => "closure",
            BlockKind::Option => "option",
            BlockKind::Value => "value",
        }
    }
}

/// What an allocation site makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    ListLiteral,
    Range,
    Interpolation,
    StrConcat,
    Method(BlockKind, Method),
    Builtin(BlockKind, Builtin),
    /// A call of a function returning a list or string (listed for its
    /// reason; the callee allocates).
    Call(BlockKind, FnId),
    Record(TypeId),
    Tuple,
    Ctor(Ctor),
    Closure,
    /// The string builder the push-then-join rewrite makes for a var.
    Builder(LocalId),
    /// The tuples enumerate, zip or entries put in the list they make.
    Tuples(Method),
}

impl SiteKind {
    /// Whether the site makes a list buffer or a string block (the only
    /// blocks freed early).
    pub fn is_list_or_string(self) -> bool {
        match self {
            SiteKind::ListLiteral
            | SiteKind::Range
            | SiteKind::Interpolation
            | SiteKind::StrConcat
            | SiteKind::Builder(_) => true,
            SiteKind::Method(k, _) | SiteKind::Builtin(k, _) | SiteKind::Call(k, _) => {
                matches!(k, BlockKind::List | BlockKind::Str)
            }
            _ => false,
        }
    }
}

/// What happens to a site's block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FateKind {
    NotFreeable,
    NeverBuilt,
    /// A range the method given runs over in place (never allocated).
    IteratedInPlace(Method),
    /// A list of pieces (`words`, ...) the consumer method reads one at a
    /// time as they are cut (never allocated).
    PiecesInPlace {
        source: Method,
        consumer: Method,
    },
    /// A list of a fused chain (`ir::fusion`): its parts, source to
    /// consumer (never allocated).
    Fused(Vec<String>),
    /// A call whose callee's result is not fresh.
    CallNotFresh(FnId),
    NotFresh(NotFresh),
    Left,
    Unreachable,
    /// Grown by `x := x.push(..)`: owned by `x`, then `end`.
    GrownBy {
        local: LocalId,
        end: Box<FateKind>,
    },
    GrownNotOwned {
        local: LocalId,
        why: NotOwned,
        at: u32,
    },
    EndsUpIn(NotFresh),
    FreedDiscarded,
    FreedAfterRead {
        reader: Reader,
        at: u32,
    },
    /// An owned-deep cell nobody names, freed whole after its read.
    CellTempFreed {
        reader: Reader,
        at: u32,
    },
    ReadOnDivergingPath {
        reader: Reader,
        at: u32,
    },
    LocalNotOwned {
        local: LocalId,
        why: NotOwned,
        at: u32,
    },
    ReturnedFresh(FnId),
    ReturnedNotFresh(FnId),
    FreedWith(LocalId),
    /// Owned by a list that owns its strings, which is `then`.
    OwnedByDeep {
        local: LocalId,
        then: Box<FateKind>,
    },
    FreedWithTemp {
        at: u32,
    },
    FreedAfterAppend {
        builder: LocalId,
        at: u32,
    },
    Escapes {
        why: Escape,
        at: u32,
    },
    HandedToPut {
        at: u32,
    },
    KeyStored {
        at: u32,
    },
    FreedAfterLastUse {
        local: LocalId,
        at: u32,
        replaced: bool,
        deep: bool,
    },
    FreedWhenReplaced {
        local: LocalId,
        why: NotOwned,
        at: u32,
    },
    /// An owned-deep cell freed with its whole tree after `at`.
    CellFreedDeep {
        local: LocalId,
        at: u32,
    },
    /// An owned-deep cell taken apart by the match at `at`: its block is
    /// reused or freed in each arm.
    CellTakenApart {
        local: LocalId,
        at: u32,
    },
    /// Owned deep by var `local`, whose next update consumes it; its
    /// last value is shared at `at` (the collector's).
    CellVarKept {
        local: LocalId,
        at: u32,
    },
    /// Owned deep by `local`, which hands it on at `at` (and, with
    /// `others`, is freed deep on the paths that do not).
    CellMoved {
        local: LocalId,
        at: u32,
        others: bool,
    },
    /// Owned deep by `local`, which shares it at `at` on some paths and
    /// is freed deep on the others.
    CellSharedOnPath {
        local: LocalId,
        at: u32,
    },
    /// Owned deep and handed to the owning version of `f`, which owns it,
    /// at the call at `at`.
    CellToOwning {
        f: FnId,
        at: u32,
    },
    /// Part of the owned-deep value made at `at`, which is `then`.
    CellPartOf {
        at: u32,
        then: Box<FateKind>,
    },
    /// Part of the cell made at `at`, whose block alone is freed.
    CellPartLeft {
        at: u32,
    },
    /// Returned owned deep: the callers decide.
    CellReturned(FnId),
    /// A lambda that captures nothing: one static closure, no block.
    StaticClosure,
    /// A lambda written as an argument of this method, which only calls
    /// it during the call: its closure is built in the caller's frame.
    FrameClosure(Method),
    /// The tuples of a fused `enumerate`/`zip`: the lambda at offset
    /// `lambda`, lowered in place, only reads their fields, which are
    /// bound to it directly.
    TuplesUnbuilt {
        lambda: u32,
    },
    /// Not owned deep: the collector's.
    CellShared(Shared),
    /// A closure only called: its block is freed after `at` (the last use
    /// of `local`).
    ClosureFreed {
        local: LocalId,
        at: u32,
    },
    /// A closure whose block is not freed, for the reason given.
    ClosureLeft(Shared),
    /// Returned by `f`, whose every result is unique: its callers may free
    /// the block.
    CellReturnedUnique(FnId),
    /// Unique but not owned deep: its block alone is freed after `at`
    /// (last use of `local`).
    CellFreedShallow {
        local: LocalId,
        at: u32,
    },
    /// Unique, not owned deep, nobody names it: its block alone is freed
    /// after its read.
    CellTempFreedShallow {
        reader: Reader,
        at: u32,
    },
    /// Not owned deep (`deep`), and its block is not freed alone either
    /// (`block`): the collector's.
    CellLeft {
        deep: Option<Shared>,
        block: Shared,
    },
    /// Owned deep by var `local`, some of whose updates only read the
    /// value they replace: what each update (at its offset) does with it;
    /// the last value's fate is `then`.
    CellVarUpdated {
        local: LocalId,
        updates: Vec<(u32, crate::cells::OldEnd)>,
        then: Box<FateKind>,
    },
    /// Built in the block of `token` (a reuse), then `then`.
    CellReusing {
        token: LocalId,
        then: Box<FateKind>,
    },
    /// Handed to the `set` at `at`, which writes into it in place; the
    /// set's result is `then`.
    SetInPlace {
        at: u32,
        then: Box<FateKind>,
    },
    /// A `set` that makes no block: it writes into its receiver's, whose
    /// fate as the set's result is `then`.
    WritesInPlace(Box<FateKind>),
}

impl FateKind {
    /// Whether the block is freed statically (on the paths that return).
    pub fn is_freed(&self) -> bool {
        matches!(
            self,
            FateKind::NeverBuilt
                | FateKind::FrameClosure(_)
                | FateKind::TuplesUnbuilt { .. }
                | FateKind::IteratedInPlace(_)
                | FateKind::PiecesInPlace { .. }
                | FateKind::Fused(_)
                | FateKind::FreedDiscarded
                | FateKind::FreedAfterRead { .. }
                | FateKind::CellTempFreed { .. }
                | FateKind::FreedWith(_)
                | FateKind::FreedWithTemp { .. }
                | FateKind::FreedAfterAppend { .. }
                | FateKind::HandedToPut { .. }
                | FateKind::FreedAfterLastUse { .. }
                | FateKind::FreedWhenReplaced { .. }
                | FateKind::CellFreedDeep { .. }
                | FateKind::CellTakenApart { .. }
                | FateKind::CellFreedShallow { .. }
                | FateKind::CellTempFreedShallow { .. }
                | FateKind::ClosureFreed { .. }
        ) || matches!(
            self,
            FateKind::CellPartOf { then, .. }
                | FateKind::CellReusing { then, .. }
                | FateKind::CellVarUpdated { then, .. }
                | FateKind::SetInPlace { then, .. }
                | FateKind::WritesInPlace(then) if then.is_freed()
        )
    }
}

/// `list from map`, `record Sale`, ...
pub fn render_site(cx: &Cx, f: FnId, s: SiteKind) -> String {
    match s {
        SiteKind::ListLiteral => "list from a literal".into(),
        SiteKind::Range => "list from a range".into(),
        SiteKind::Interpolation => "string from interpolation".into(),
        SiteKind::StrConcat => "string from +".into(),
        SiteKind::Method(k, m) => format!("{} from {}", k.name(), m.name()),
        SiteKind::Builtin(k, b) => format!("{} from {}()", k.name(), b.name()),
        SiteKind::Call(k, g) => format!("{} from {}()", k.name(), cx.fn_name(g)),
        SiteKind::Record(t) => format!("record {}", cx.program.items.types[t].name),
        SiteKind::Tuple => "tuple".into(),
        SiteKind::Ctor(c) => format!("value {}(..)", ctor_name(&cx.program.items, c)),
        SiteKind::Closure => "closure".into(),
        SiteKind::Builder(l) => format!("string builder for {}", cx.local(f, l)),
        SiteKind::Tuples(m) => format!("tuple from {}", m.name()),
    }
}

/// `freed after 14:5 (last use of xs)`, ...
pub fn render_fate(cx: &Cx, f: FnId, k: &FateKind) -> String {
    let pos = |at: u32| cx.pos(at);
    let local = |l: LocalId| cx.local(f, l).to_string();
    match k {
        FateKind::NotFreeable => {
            "left for the collector: closures, maps and values made by methods are not freed early"
                .into()
        }
        FateKind::NeverBuilt => {
            "never built: the pushes append to a string builder (push then join)".into()
        }
        FateKind::StaticClosure => {
            "never built: it captures nothing, so one static closure serves every evaluation".into()
        }
        FateKind::TuplesUnbuilt { lambda } => format!(
            "never built: the lambda at {} only reads its fields",
            pos(*lambda)
        ),
        FateKind::FrameClosure(m) => format!(
            "never built in the heap: only {} calls it, during the call, so it lives in the caller's frame",
            m.name()
        ),
        FateKind::IteratedInPlace(m) => {
            format!("never built: {} runs over the range in place", m.name())
        }
        FateKind::PiecesInPlace { source, consumer } => format!(
            "never built: {} reads the {} one at a time as they are cut",
            consumer.name(),
            match source {
                Method::StrChars => "characters",
                Method::StrWords => "words",
                Method::StrLines => "lines",
                _ => "pieces",
            }
        ),
        FateKind::Fused(names) => {
            format!("never built: one loop runs {}", names.join(" -> "))
        }
        FateKind::CallNotFresh(g) => format!(
            "not fresh: {}() {}",
            cx.fn_name(*g),
            cx.result_not_fresh(*g, 0)
                .unwrap_or_else(|| "does not return a fresh value".into())
        ),
        FateKind::NotFresh(nf) => format!("not fresh: {}", cx.not_fresh(f, nf, 0)),
        FateKind::Left => "left for the collector".into(),
        FateKind::Unreachable => "left for the collector: unreachable".into(),
        FateKind::GrownBy { local: x, end } => format!(
            "owned by {} (the old buffer is freed if it moved): {}",
            local(*x),
            render_fate(cx, f, end)
        ),
        FateKind::GrownNotOwned { local: x, why, at } => format!(
            "left for the collector: {} is not the only owner ({} at {})",
            local(*x),
            cx.not_owned(f, why, 0),
            pos(*at)
        ),
        FateKind::EndsUpIn(nf) => format!(
            "left for the collector: its value ends up in {}",
            cx.not_fresh(f, nf, 0)
        ),
        FateKind::FreedDiscarded => "freed right after it is made (its value is discarded)".into(),
        FateKind::FreedAfterRead { reader, at } => format!(
            "freed after its read by {} at {} (temporary)",
            cx.reader(*reader),
            pos(*at)
        ),
        FateKind::CellTempFreed { reader, at } => format!(
            "freed deep after its read by {} at {} (temporary, owned deep)",
            cx.reader(*reader),
            pos(*at)
        ),
        FateKind::ReadOnDivergingPath { reader, at } => format!(
            "left for the collector: read by {} at {}, on a path that does not return",
            cx.reader(*reader),
            pos(*at)
        ),
        FateKind::LocalNotOwned { local: x, why, at } => format!(
            "left for the collector: {} {} at {}",
            local(*x),
            cx.not_owned(f, why, 0),
            pos(*at)
        ),
        FateKind::ReturnedFresh(g) => format!(
            "returned by {}(), whose result is fresh: its callers decide",
            cx.fn_name(*g)
        ),
        FateKind::ReturnedNotFresh(g) => format!(
            "left for the collector: returned by {}(), which {}",
            cx.fn_name(*g),
            cx.result_not_fresh(*g, 0)
                .unwrap_or_else(|| "does not return a fresh value".into())
        ),
        FateKind::FreedWith(x) => format!("freed with {}, which owns its strings", local(*x)),
        FateKind::OwnedByDeep { local: x, then } => format!(
            "owned by {}, a list that owns its strings, which is {}",
            local(*x),
            render_fate(cx, f, then)
        ),
        FateKind::FreedWithTemp { at } => format!(
            "freed with the temporary list that owns it, after its read at {}",
            pos(*at)
        ),
        FateKind::FreedAfterAppend { builder, at } => format!(
            "freed after it is appended to the string builder {} at {} (temporary)",
            local(*builder),
            pos(*at)
        ),
        FateKind::Escapes { why, at } => format!(
            "left for the collector: {} at {}",
            cx.escape(*why, 0),
            pos(*at)
        ),
        FateKind::HandedToPut { at } => format!(
            "handed to put at {} (freed there if the key was already present)",
            pos(*at)
        ),
        FateKind::KeyStored { at } => format!(
            "left for the collector: stored in a map as a key at {}",
            pos(*at)
        ),
        FateKind::FreedAfterLastUse {
            local: x,
            at,
            replaced,
            deep,
        } => format!(
            "freed {}after {} (last use of {}{})",
            if *replaced { "when replaced or " } else { "" },
            pos(*at),
            local(*x),
            if *deep { ", with its strings" } else { "" }
        ),
        FateKind::CellFreedDeep { local: x, at } => format!(
            "freed deep after {} (last use of {}, owned deep)",
            pos(*at),
            local(*x)
        ),
        FateKind::CellTakenApart { local: x, at } => format!(
            "taken apart by the match at {} (last use of {}): its block is reused or freed there",
            pos(*at),
            local(*x)
        ),
        FateKind::CellVarKept { local: x, at } => format!(
            "owned deep by {}, whose next update consumes it (its last value is shared at {}: left for the collector)",
            local(*x),
            pos(*at)
        ),
        FateKind::CellMoved {
            local: x,
            at,
            others,
        } => {
            format!(
                "owned deep by {}, which hands it on at {}{}",
                local(*x),
                pos(*at),
                if *others {
                    " (freed deep on the paths that do not)"
                } else {
                    ""
                }
            )
        }
        FateKind::CellSharedOnPath { local: x, at } => format!(
            "owned deep by {}: shared at {} (left for the collector), freed deep on the paths that do not reach it",
            local(*x),
            pos(*at)
        ),
        FateKind::CellToOwning { f, at } => format!(
            "handed to {}#owning at {}, which owns it",
            cx.fn_name(*f),
            pos(*at)
        ),
        FateKind::CellPartLeft { at } => format!(
            "left for the collector: part of the value made at {}, whose block alone is freed",
            pos(*at)
        ),
        FateKind::CellPartOf { at, then } => format!(
            "part of the owned-deep value made at {}, which is {}",
            pos(*at),
            render_fate(cx, f, then)
        ),
        FateKind::CellReturned(g) => format!(
            "returned owned deep by {}(): its callers decide",
            cx.fn_name(*g)
        ),
        FateKind::CellShared(why) => format!("left for the collector: {}", cx.shared(*why)),
        FateKind::CellFreedShallow { local: x, at } => format!(
            "its block freed after {} (last use of {}, unique; its fields are shared)",
            pos(*at),
            local(*x)
        ),
        FateKind::CellTempFreedShallow { reader, at } => format!(
            "its block freed after its read by {} at {} (temporary, unique; its fields are shared)",
            cx.reader(*reader),
            pos(*at)
        ),
        FateKind::ClosureFreed { local: x, at } => format!(
            "freed after {} (last use of {}, only called; what it captured is left alone)",
            pos(*at),
            local(*x)
        ),
        FateKind::CellReturnedUnique(g) => format!(
            "returned unique by {}(): its callers may free its block",
            cx.fn_name(*g)
        ),
        FateKind::ClosureLeft(why) => format!("left for the collector: {}", cx.shared(*why)),
        FateKind::CellLeft { deep, block } => match deep {
            Some(d) => format!(
                "left for the collector: {}; its block alone is not freed: {}",
                cx.shared(*d),
                cx.shared(*block)
            ),
            None => format!(
                "left for the collector: its block is not freed: {}",
                cx.shared(*block)
            ),
        },
        FateKind::CellVarUpdated {
            local: x,
            updates,
            then,
        } => {
            use crate::cells::OldEnd;
            let name = local(*x);
            let each: Vec<String> = updates
                .iter()
                .map(|(at, old)| {
                    let what = match old {
                        OldEnd::MovedIn => "moved into the new value".to_string(),
                        OldEnd::Reused { by, moved } => format!(
                            "reused by {} at {} ({})",
                            cx.site_name(f, *by),
                            pos(cx.program.source_map(f).expr(*by).start),
                            if *moved {
                                "fields moved into the new value, the others only read"
                            } else {
                                "read only within the update"
                            }
                        ),
                        OldEnd::Freed(w) => format!(
                            "freed deep (read only within the update; {})",
                            cx.no_reuse(*w)
                        ),
                        OldEnd::FreedBlock(w) => format!(
                            "freed, its block only (fields moved into the new value; {})",
                            cx.no_reuse(*w)
                        ),
                        OldEnd::Kept(why) => {
                            format!("left for the collector ({})", cx.shared(*why))
                        }
                    };
                    format!("at {} {what}", pos(*at))
                })
                .collect();
            let last = match &**then {
                // Not "its next update consumes it": these updates free.
                FateKind::CellVarKept { at, .. } => format!(
                    "shared at {} after every update: left for the collector",
                    pos(*at)
                ),
                then => render_fate(cx, f, then),
            };
            format!(
                "owned deep by {name}; when an update of {name} replaces it: {}; its last value is {last}",
                each.join(", "),
            )
        }
        FateKind::CellReusing { token, then } => format!(
            "built in the block of {} (reused), then {}",
            local(*token),
            render_fate(cx, f, then)
        ),
        FateKind::SetInPlace { at, then } => format!(
            "written in place by set at {}, whose result is {}",
            pos(*at),
            render_fate(cx, f, then)
        ),
        FateKind::WritesInPlace(then) => format!(
            "no new block: set writes into its receiver's buffer, which is then {}",
            render_fate(cx, f, then)
        ),
        FateKind::FreedWhenReplaced { local: x, why, at } => {
            let name = local(*x);
            format!(
                "freed when {name} is replaced; its last value is left for the collector: \
                 {name} {} at {}",
                cx.not_owned(f, why, 0),
                pos(*at)
            )
        }
    }
}

pub fn fates(
    f: FnId,
    d: &Decider,
    plan: &Plan,
    summaries: &[Summary],
    items: &ir::ItemTree,
    owned: std::collections::HashSet<ir::LocalId>,
) -> Vec<Fate> {
    let r = Reporter {
        f,
        d,
        plan,
        summaries,
        cells: Cells::owning(d, items, owned),
    };
    let mut out = Vec::new();
    let mut ids: Vec<ExprId> = d.facts.exprs.iter().map(|(e, _)| e).collect();
    ids.sort_by_key(|e| e.into_raw().into_u32());
    for e in ids {
        if let Some((what, allocates)) = r.site(e) {
            let fate = if let Some(m) = d.range_in_place(e) {
                FateKind::IteratedInPlace(m)
            } else if let Some((source, consumer)) = d.pieces_in_place(e) {
                FateKind::PiecesInPlace { source, consumer }
            } else if let Some(c) = d.unbuilt(e) {
                FateKind::Fused(c.names(d.body))
            } else if let Some(m) = d.fusion.frame_lambda(e) {
                FateKind::FrameClosure(m)
            } else if matches!(what, SiteKind::Closure) && !allocates {
                FateKind::StaticClosure
            } else if allocates {
                r.fate(e)
            } else if r.plan.sets.contains_key(&e) {
                FateKind::WritesInPlace(Box::new(r.fate(e)))
            } else {
                match d.fresh(e) {
                    Fresh::No(_) if r.is_builder_push(e) => FateKind::NeverBuilt,
                    Fresh::No(why) => match &d.body[e].kind {
                        ExprKind::Call {
                            callee: Callee::Fn(g),
                            ..
                        } => FateKind::CallNotFresh(*g),
                        _ => FateKind::NotFresh(why),
                    },
                    Fresh::Yes { .. } => r.fate(e),
                }
            };
            let tuples = match (&what, &d.body[e].kind) {
                (
                    SiteKind::Method(..),
                    ExprKind::Method {
                        method: m @ (Method::ListEnumerate | Method::ListZip | Method::MapEntries),
                        ..
                    },
                ) if allocates || d.unbuilt(e).is_some() => Some(*m),
                _ => None,
            };
            out.push(Fate {
                func: f,
                expr: e,
                offset: d.sm.expr(e).start,
                what,
                fate,
                allocates,
            });
            if let Some(m) = tuples {
                let (fate, allocates) = match d.fusion.unbuilt_tuples(e) {
                    Some(lam) => {
                        let lambda = d.sm.expr(lam).start;
                        (FateKind::TuplesUnbuilt { lambda }, false)
                    }
                    None => (FateKind::NotFreeable, true),
                };
                out.push(Fate {
                    func: f,
                    expr: e,
                    offset: d.sm.expr(e).start,
                    what: SiteKind::Tuples(m),
                    fate,
                    allocates,
                });
            }
        }
    }
    out
}

struct Reporter<'a> {
    f: FnId,
    d: &'a Decider<'a>,
    plan: &'a Plan,
    summaries: &'a [Summary],
    cells: Cells<'a, 'a>,
}

impl Reporter<'_> {
    /// `Some((description, allocates))` for an allocation site; calls of
    /// functions returning a list or string are listed too (for their
    /// reason) but do not allocate themselves.
    fn site(&self, e: ExprId) -> Option<(SiteKind, bool)> {
        let body = self.d.body;
        let ex = &body[e];
        let kind = BlockKind::of(&ex.ty);
        let facts = self.d.facts.exprs.get(e)?;
        Some(match &ex.kind {
            ExprKind::List(xs) if !xs.is_empty() => (SiteKind::ListLiteral, true),
            ExprKind::Range { .. } if facts.ctx != Ctx::Read(Reader::For) => {
                (SiteKind::Range, self.d.unbuilt(e).is_none())
            }
            ExprKind::Interp(_) => (SiteKind::Interpolation, true),
            ExprKind::Binary { op: BinOp::Add, .. } if ex.ty == Ty::Str => {
                (SiteKind::StrConcat, true)
            }
            ExprKind::Method { method, .. } => {
                let m = *method;
                let allocating = matches!(crate::table::row(m).result, crate::Res::Fresh)
                    || matches!(
                        m,
                        Method::ListPush | Method::ListConcat | Method::ListCounts
                    )
                    || ir::methods::makes_option(m);
                if !allocating {
                    return None;
                }
                let built = !self.is_builder_push(e)
                    && self.d.unbuilt(e).is_none()
                    && !self.plan.sets.contains_key(&e);
                (SiteKind::Method(kind, m), built)
            }
            ExprKind::Call { callee, .. } => match callee {
                Callee::Builtin(
                    b @ (Builtin::ReadFile
                    | Builtin::ReadStdin
                    | Builtin::ReadLines
                    | Builtin::WriteFile
                    | Builtin::AppendFile
                    | Builtin::Args
                    | Builtin::EmptyMap),
                ) => (SiteKind::Builtin(kind, *b), true),
                Callee::Fn(g) if ex.ty.is_freeable() => (SiteKind::Call(kind, *g), false),
                _ => return None,
            },
            ExprKind::Record { ty, .. } => (SiteKind::Record(*ty), true),
            ExprKind::Tuple(_) => (SiteKind::Tuple, true),
            ExprKind::Ctor { ctor, args } if !args.is_empty() => (SiteKind::Ctor(*ctor), true),
            // A lambda that captures nothing is one static block; one
            // written as a method's argument lives in the caller's frame.
            ExprKind::Lambda { captures, .. } => (
                SiteKind::Closure,
                !captures.is_empty() && self.d.fusion.frame_lambda(e).is_none(),
            ),
            _ => return None,
        })
    }

    fn is_builder_push(&self, e: ExprId) -> bool {
        match self.d.facts.ctx(e) {
            Some(Ctx::Assign(x)) => self.plan.builders.contains_key(x),
            _ => false,
        }
    }

    /// The top of `e`'s chain of transparent edges (the expression whose
    /// value `e`'s value becomes).
    fn top(&self, mut e: ExprId) -> ExprId {
        while let Some(f) = self.d.facts.exprs.get(e) {
            match (f.transparent, f.parent) {
                (true, Some(p)) => e = p,
                _ => break,
            }
        }
        e
    }

    fn fate(&self, e: ExprId) -> FateKind {
        let body = self.d.body;
        if matches!(body[e].kind, ExprKind::Lambda { .. }) {
            return self.closure_fate(e);
        }
        if body[e].ty.is_cell() && !matches!(body[e].kind, ExprKind::Method { .. }) {
            return self.cell_fate(e, 0);
        }
        if matches!(body[e].kind, ExprKind::Method { method, .. } if crate::shallow::makes_some(method))
        {
            return match self.shallow_fate(e, None) {
                FateKind::CellShared(_) => FateKind::NotFreeable,
                k => k,
            };
        }
        if !body[e].ty.is_freeable() {
            return FateKind::NotFreeable;
        }
        if self.is_builder_push(e) {
            return FateKind::NeverBuilt;
        }
        self.value_fate(e, 0)
    }

    /// What happens to the closure a lambda `e` makes (in the heap): freed
    /// after the last call of the local that holds it, or why not.
    fn closure_fate(&self, e: ExprId) -> FateKind {
        let top = self.top(e);
        match self.d.facts.exprs.get(top).map(|f| &f.ctx) {
            Some(Ctx::Bind(x)) => match self.plan.shallow.get(x) {
                Some(end) => FateKind::ClosureFreed {
                    local: *x,
                    at: end.at,
                },
                None => match crate::shallow::closure(&self.cells, *x) {
                    Err(why) if why != Shared::NotNew => FateKind::ClosureLeft(why),
                    _ => FateKind::NotFreeable,
                },
            },
            _ => FateKind::NotFreeable,
        }
    }

    /// What happens to a unique cell `e` makes that is not owned deep
    /// (`deep`: why not; None for a method's `Some`): its block freed
    /// alone, or why not.
    fn shallow_fate(&self, e: ExprId, deep: Option<Shared>) -> FateKind {
        let top = self.top(e);
        let Some(facts) = self.d.facts.exprs.get(top) else {
            return FateKind::Unreachable;
        };
        if self.plan.shallow_temps.contains(&top) {
            if let Ctx::Read(reader) = facts.ctx {
                return FateKind::CellTempFreedShallow {
                    reader,
                    at: facts.reader_at,
                };
            }
        }
        match &facts.ctx {
            Ctx::Bind(x) => match self.plan.shallow.get(x) {
                Some(end) => FateKind::CellFreedShallow {
                    local: *x,
                    at: end.at,
                },
                None => match crate::shallow::local(&self.cells, *x) {
                    Err(block)
                        if self.cells.own(*x).is_err()
                            && block != Shared::NotNew
                            && Some(block) != deep =>
                    {
                        FateKind::CellLeft { deep, block }
                    }
                    _ => FateKind::CellShared(deep.unwrap_or(Shared::NotNew)),
                },
            },
            Ctx::Out if self.summaries[self.f.into_raw().into_u32() as usize].unique_result => {
                FateKind::CellReturnedUnique(self.f)
            }
            _ => FateKind::CellShared(deep.unwrap_or(Shared::NotNew)),
        }
    }

    /// The fate of the value a cell local `x` holds (bound or assigned to
    /// it), by how `x` ends.
    fn var_end(&self, x: LocalId) -> FateKind {
        match self.cells.own(x) {
            Ok(CellEnd::DropDeep { at, .. }) => FateKind::CellFreedDeep { local: x, at },
            Ok(CellEnd::Matched { at, .. }) => FateKind::CellTakenApart { local: x, at },
            Ok(CellEnd::Moved { at }) => FateKind::CellMoved {
                local: x,
                at,
                others: self.cells.has_path_drops(x),
            },
            Ok(CellEnd::SharedOnPath { at }) => FateKind::CellSharedOnPath { local: x, at },
            Ok(CellEnd::Kept { at }) => FateKind::CellVarKept { local: x, at },
            Err(why) => match self.plan.shallow.get(&x) {
                Some(end) => FateKind::CellFreedShallow {
                    local: x,
                    at: end.at,
                },
                None => FateKind::CellShared(why),
            },
        }
    }

    /// The fate of a part of the owned-deep cell `p` makes: freed with
    /// it, unless only its block is freed.
    fn part_of(&self, p: ExprId, depth: u32) -> FateKind {
        let at = self.d.sm.expr(p).start;
        match self.cell_fate(p, depth + 1) {
            FateKind::CellFreedShallow { .. } | FateKind::CellTempFreedShallow { .. } => {
                FateKind::CellPartLeft { at }
            }
            then => FateKind::CellPartOf {
                at,
                then: Box::new(then),
            },
        }
    }

    /// What happens to the cell a constructor `e` makes.
    fn cell_fate(&self, e: ExprId, depth: u32) -> FateKind {
        let c = &self.cells;
        if let Some((token, _)) = self.plan.reuses.get(&e) {
            if depth == 0 {
                return FateKind::CellReusing {
                    token: *token,
                    then: Box::new(self.cell_fate(e, 1)),
                };
            }
        }
        if depth > 32 {
            return FateKind::Left;
        }
        if let Err(why) = c.owned_deep(e) {
            return self.shallow_fate(e, Some(why));
        }
        let top = self.top(e);
        let Some(facts) = self.d.facts.exprs.get(top) else {
            return FateKind::Unreachable;
        };
        if let Some(reader) = crate::cells::temp_read(c, top) {
            return FateKind::CellTempFreed {
                reader,
                at: facts.reader_at,
            };
        }
        if let Ctx::Bind(x) | Ctx::Assign(x) = &facts.ctx {
            let updates: Vec<(u32, crate::cells::OldEnd)> = self
                .plan
                .updates
                .get(x)
                .map(|us| us.iter().map(|u| (u.at, u.old)).collect())
                .unwrap_or_default();
            if depth < 32 && updates.iter().any(|u| u.1 != crate::cells::OldEnd::MovedIn) {
                return FateKind::CellVarUpdated {
                    local: *x,
                    updates,
                    then: Box::new(self.var_end(*x)),
                };
            }
        }
        match &facts.ctx {
            Ctx::Bind(x) | Ctx::Assign(x) => self.var_end(*x),
            Ctx::Escape(
                Escape::StoredInCtor(_) | Escape::StoredInTuple | Escape::StoredInField { .. },
            ) => match facts.parent {
                Some(p) if c.owned_deep(p).is_ok() => self.part_of(p, depth),
                _ => FateKind::CellShared(Shared::Escapes(
                    match facts.ctx {
                        Ctx::Escape(w) => w,
                        _ => Escape::Matched,
                    },
                    facts.reader_at,
                )),
            },
            Ctx::Out => {
                let s = &self.summaries[self.f.into_raw().into_u32() as usize];
                if s.owned_deep_result {
                    FateKind::CellReturned(self.f)
                } else {
                    FateKind::CellShared(s.why_not_owned_deep.unwrap_or(Shared::NotNew))
                }
            }
            Ctx::Read(Reader::Call(g))
                if facts.parent.is_some_and(|p| {
                    c.call_choice(p) == Some(crate::cells::CallChoice::Owning)
                }) =>
            {
                FateKind::CellToOwning {
                    f: *g,
                    at: facts.reader_at,
                }
            }
            Ctx::Escape(w) => FateKind::CellShared(Shared::Escapes(*w, facts.reader_at)),
            _ => FateKind::CellShared(Shared::PartEscapes(facts.reader_at)),
        }
    }

    /// The `xs.map(..)` whose lambda returns `e`.
    fn map_of_lambda_result(&self, e: ExprId) -> Option<ExprId> {
        let d = self.d;
        let lambda = d.facts.exprs.get(e)?.parent?;
        if !matches!(d.body[lambda].kind, ExprKind::Lambda { .. }) {
            return None;
        }
        let map = d.facts.exprs.get(lambda)?.parent?;
        matches!(
            d.body[map].kind,
            ExprKind::Method {
                method: Method::ListMap,
                ..
            }
        )
        .then_some(map)
    }

    /// The owned-deep cell whose list field, made by a `map`, owns the
    /// string `e` its lambda returns.
    fn map_string_cell_parent(&self, e: ExprId) -> Option<ExprId> {
        let map = self.map_of_lambda_result(e)?;
        (self.d.owned_string(e) && self.cells.owned_deep(map).is_ok())
            .then(|| self.owned_deep_cell_parent(self.top(map)))?
    }

    /// The constructor `e` (a string or list) is a field of, when that
    /// cell is owned deep: its deep drop frees `e` too.
    /// A string of a list literal that is such a field is freed with the
    /// cell too (the list owns its strings).
    fn owned_deep_cell_parent(&self, e: ExprId) -> Option<ExprId> {
        let facts = self.d.facts.exprs.get(e)?;
        let p = facts.parent?;
        match facts.ctx {
            Ctx::Escape(
                Escape::StoredInCtor(_) | Escape::StoredInTuple | Escape::StoredInField { .. },
            ) => (self.d.body[p].ty.is_cell() && self.cells.owned_deep(p).is_ok()).then_some(p),
            Ctx::Escape(Escape::StoredInList)
                if self.d.body[e].ty == Ty::Str
                    && matches!(self.d.body[p].kind, ExprKind::List(_))
                    && self.cells.owned_deep(p).is_ok() =>
            {
                self.owned_deep_cell_parent(self.top(p))
            }
            _ => None,
        }
    }

    /// The consumer of the fused chain whose temporary source is `e`.
    fn fused_consumer_of(&self, e: ExprId) -> Option<Consumer> {
        let mut found = self.plan.fused_sources.iter().filter(|(_, s)| **s == e);
        found.next().map(|(c, _)| *c)
    }

    /// What happens to the value of `e` (a fresh or growing expression).
    fn value_fate(&self, e: ExprId, depth: u32) -> FateKind {
        if depth > 32 {
            return FateKind::Left;
        }
        let d = self.d;
        let body = d.body;
        let top = self.top(e);
        let Some(facts) = d.facts.exprs.get(top) else {
            return FateKind::Unreachable;
        };
        let grows = matches!(
            body[e].kind,
            ExprKind::Method {
                method: Method::ListPush | Method::ListConcat,
                ..
            }
        );
        if let Some(Ctx::Assign(x)) | Some(Ctx::Bind(x)) = Some(&facts.ctx) {
            if grows && matches!(facts.ctx, Ctx::Assign(_)) {
                return match d.own(*x) {
                    Own::Yes(end) => FateKind::GrownBy {
                        local: *x,
                        end: Box::new(self.end_fate(*x, &end, depth)),
                    },
                    Own::No(why, at) => FateKind::GrownNotOwned { local: *x, why, at },
                };
            }
        }
        if let Fresh::No(why) = d.fresh(top) {
            return FateKind::EndsUpIn(why);
        }
        if let Some(consumer) = self.fused_consumer_of(top) {
            return FateKind::FreedAfterRead {
                reader: Reader::Pipeline,
                at: match consumer {
                    Consumer::Method(c) => d.sm.expr(c).start,
                    Consumer::For(s, _) => d.sm.stmt(s).start,
                },
            };
        }
        match &facts.ctx {
            Ctx::Read(_) if d.in_place_receiver(top) => match facts.parent {
                Some(set) => FateKind::SetInPlace {
                    at: d.set_at(set),
                    then: Box::new(self.value_fate(set, depth + 1)),
                },
                None => FateKind::Unreachable,
            },
            Ctx::Read(reader) => {
                let discarded = matches!(reader, Reader::DiscardedLet | Reader::DiscardedValue);
                if discarded && self.plan.temps.contains_key(&top) {
                    FateKind::FreedDiscarded
                } else if self.plan.temps.contains_key(&top) {
                    FateKind::FreedAfterRead {
                        reader: *reader,
                        at: facts.reader_at,
                    }
                } else {
                    FateKind::ReadOnDivergingPath {
                        reader: *reader,
                        at: facts.reader_at,
                    }
                }
            }
            Ctx::Bind(x) | Ctx::Assign(x) => match d.own(*x) {
                Own::Yes(end) => self.end_fate(*x, &end, depth),
                Own::No(why, at) => FateKind::LocalNotOwned { local: *x, why, at },
            },
            Ctx::Out => {
                let s = &self.summaries[self.f.into_raw().into_u32() as usize];
                if s.fresh_result {
                    FateKind::ReturnedFresh(self.f)
                } else {
                    FateKind::ReturnedNotFresh(self.f)
                }
            }
            Ctx::Escape(why) => {
                if let Some(x) = self.deep_map_owner(top) {
                    return FateKind::FreedWith(x);
                }
                if let Some(p) = self
                    .owned_deep_cell_parent(top)
                    .or_else(|| self.map_string_cell_parent(top))
                {
                    return self.part_of(p, depth);
                }
                if let Some(f) = self.deep_owner(top, depth) {
                    return f;
                }
                if let Some(at) = self.deep_temp_owner(top) {
                    return FateKind::FreedWithTemp { at };
                }
                if let Some(builder) = self.builder_piece(top) {
                    return FateKind::FreedAfterAppend {
                        builder,
                        at: facts.reader_at,
                    };
                }
                FateKind::Escapes {
                    why: *why,
                    at: facts.reader_at,
                }
            }
            Ctx::Key(put) => {
                let at = d.sm.expr(*put).start;
                if self.plan.puts.contains(put) {
                    FateKind::HandedToPut { at }
                } else {
                    FateKind::KeyStored { at }
                }
            }
            Ctx::GrowSelf(_) => FateKind::Left,
        }
    }

    fn end_fate(&self, x: ir::LocalId, end: &End, depth: u32) -> FateKind {
        let d = self.d;
        let lf = d.facts.local(x);
        let decl = lf.and_then(|l| l.decl.as_ref());
        match end {
            End::Drop { index, deep } => {
                let Some(decl) = decl else {
                    return FateKind::Left;
                };
                let at = match &d.body[decl.block].kind {
                    ExprKind::Block { stmts, tail } => match stmts.get(*index) {
                        Some(s) => d.sm.stmt(*s).start,
                        None => tail.map(|t| d.sm.expr(t).start).unwrap_or(0),
                    },
                    _ => 0,
                };
                // An assignment of a set in place keeps the old block.
                let replaced =
                    lf.is_some_and(|l| l.assigns.iter().any(|a| !d.assign_set_in_place(a)));
                FateKind::FreedAfterLastUse {
                    local: x,
                    at,
                    replaced,
                    deep: *deep,
                }
            }
            End::MovedOut => match decl {
                Some(decl) => self.value_fate(decl.block, depth + 1),
                None => FateKind::Left,
            },
            End::Kept { why, at } => FateKind::FreedWhenReplaced {
                local: x,
                why: why.clone(),
                at: *at,
            },
            End::ConsumedKey(put) => FateKind::HandedToPut {
                at: d.sm.expr(*put).start,
            },
            End::Builder { .. } => FateKind::NeverBuilt,
            End::SetInPlace(set) => FateKind::SetInPlace {
                at: d.set_at(*set),
                then: Box::new(self.value_fate(*set, depth + 1)),
            },
        }
    }

    /// The builder var a pushed string is appended to, when it is a
    /// temporary of that push.
    fn builder_piece(&self, e: ExprId) -> Option<LocalId> {
        let d = self.d;
        let p = d.facts.exprs.get(e)?.parent?;
        match d.facts.exprs.get(p)?.ctx {
            Ctx::Assign(x)
                if self.plan.builders.contains_key(&x) && self.plan.temps.contains_key(&e) =>
            {
                Some(x)
            }
            _ => None,
        }
    }

    /// The deep list made by `xs.map(|x| <fresh string>)` whose lambda
    /// returns `e`.
    fn deep_map_owner(&self, e: ExprId) -> Option<LocalId> {
        let d = self.d;
        let map = self.map_of_lambda_result(e)?;
        let top = self.top(map);
        match d.facts.exprs.get(top)?.ctx {
            Ctx::Bind(x) | Ctx::Assign(x) => match d.own(x) {
                Own::Yes(End::Drop { deep: true, .. }) if d.owned_string(e) => Some(x),
                _ => None,
            },
            _ => None,
        }
    }

    /// For a string returned by the lambda of a deep temporary
    /// `xs.map(|x| "..")`: where that temporary is read.
    fn deep_temp_owner(&self, e: ExprId) -> Option<u32> {
        let d = self.d;
        let map = self.map_of_lambda_result(e)?;
        let top = self.top(map);
        if self.plan.deep_temps.contains(&top) && d.owned_string(e) {
            d.facts.exprs.get(top).map(|f| f.reader_at)
        } else {
            None
        }
    }

    /// The deep list that owns a string stored by `x := x.push(s)` or in
    /// the list literal of its declaration.
    fn deep_owner(&self, e: ExprId, depth: u32) -> Option<FateKind> {
        let d = self.d;
        let p = d.facts.exprs.get(e)?.parent?;
        let pf = d.facts.exprs.get(p)?;
        let x = match (&d.body[p].kind, &pf.ctx) {
            (
                ExprKind::Method {
                    method: Method::ListPush,
                    ..
                },
                Ctx::Assign(x),
            ) => *x,
            (ExprKind::List(_), Ctx::Bind(x) | Ctx::Assign(x)) => *x,
            _ => return None,
        };
        if !d.owned_string(e) {
            return None;
        }
        match d.own(x) {
            Own::Yes(End::Drop { deep: true, .. }) => Some(FateKind::FreedWith(x)),
            Own::Yes(End::MovedOut) if d.strings_owned(x, true) => {
                let block = d.facts.local(x)?.decl.as_ref()?.block;
                Some(FateKind::OwnedByDeep {
                    local: x,
                    then: Box::new(self.value_fate(block, depth + 1)),
                })
            }
            _ => None,
        }
    }
}

/// Why a chain is fused or not, for `explain`.
pub fn render_verdict(program: &ir::Program, f: FnId, chain: &ir::fusion::Chain) -> String {
    use ir::effects::EffectKind;
    use ir::fusion::{LetRefusal, Part, Point, Refusal, Verdict};
    let body = program.body(f);
    let sm = program.source_map(f);
    let pos = |e: ExprId| {
        let (l, c) = program.line_col(sm.expr(e).start);
        format!("{l}:{c}")
    };
    let name = |e: ExprId| match &body[e].kind {
        ExprKind::Method { method, .. } => method.name().to_string(),
        _ => "the for".to_string(),
    };
    let effect = |e: &ir::effects::Effect| {
        let what = match e.kind {
            EffectKind::Prints => "prints",
            EffectKind::Traps => "may trap",
            EffectKind::Diverges => "may not return",
            EffectKind::CallsUnknown => "calls a function value",
        };
        match e.via {
            Some(g) => format!(
                "{what} (calls {} at {})",
                program.items.fns[g].name,
                pos(e.at)
            ),
            None => format!("{what} (at {})", pos(e.at)),
        }
    };
    let point = |p: &Point| {
        let part = match p.part {
            Part::Args => format!("{}'s arguments at {}", name(p.at), pos(p.at)),
            Part::Lambda => format!("{}'s function at {}", name(p.at), pos(p.at)),
            Part::Body => format!("the for body at {}", pos(p.at)),
        };
        format!("{part} {}", effect(&p.effect))
    };
    let base = match &chain.verdict {
        Verdict::Fused => "fused: one loop, no list between the parts".into(),
        Verdict::Refused(r) => match r {
            Refusal::TwoEffects { first, second } => format!(
                "not fused: {} and {}; unfused all of the first runs before the second, fused they would interleave",
                point(first),
                point(second)
            ),
            Refusal::EffectBeforeCut { effect, cut } => format!(
                "not fused: {}, and unfused it runs over every element before {} at {} stops early",
                point(effect),
                name(*cut),
                pos(*cut)
            ),
            Refusal::ArgMadeHere { stage, arg } => format!(
                "not fused: {}'s argument at {} makes a list or string of its own",
                name(*stage),
                pos(*arg)
            ),
            Refusal::MapShared { changes, at, other } => {
                let part = |(e, p): (ExprId, Part)| match p {
                    Part::Args => format!("{}'s arguments at {}", name(e), pos(e)),
                    Part::Lambda => format!("{}'s function at {}", name(e), pos(e)),
                    Part::Body => format!("the for body at {}", pos(e)),
                };
                format!(
                    "not fused: {} may change a map (at {}) and {} may see one; unfused all of the first runs before the second, fused they would interleave",
                    part(*changes),
                    pos(*at),
                    part(*other)
                )
            }
            Refusal::ZipOther { stage } => format!(
                "not fused: zip at {} pairs with something other than a range or a name",
                pos(*stage)
            ),
            Refusal::Let { local } => format!(
                "not fused: its stages are in the let of {}",
                body.locals[*local].name
            ),
        },
    };
    let local = |l: ir::LocalId| body.locals[l].name.clone();
    let mut out = base;
    if chain.fused() {
        for l in &chain.lets {
            out.push_str(&format!(
                "; reads through let {} (its init runs once, at {}; nothing observable moves)",
                local(l.local),
                pos(l.use_)
            ));
        }
    }
    if let Some((l, why)) = &chain.let_refused {
        let why = match why {
            LetRefusal::UsedAgain { uses } => format!("{} is used {uses} times", local(*l)),
            LetRefusal::NotOnce { at } => format!(
                "its use may run other than once per let (inside the lambda, loop, branch or right side at {})",
                pos(*at)
            ),
            LetRefusal::EffectBetween { init, between } => format!(
                "its init {} and the code before its use {}",
                effect(init),
                effect(between)
            ),
            LetRefusal::LeavesBetween { init, at } => format!(
                "its init {} and the code before its use may leave at {}",
                effect(init),
                pos(*at)
            ),
            LetRefusal::AssignedBetween { local: x, at } => format!(
                "its init reads {}, assigned at {} before the use",
                local(*x),
                {
                    let (ln, c) = program.line_col(sm.stmt(*at).start);
                    format!("{ln}:{c}")
                }
            ),
            LetRefusal::MapBetween { changes } => format!(
                "a map may change at {} and be seen on the other side of the move",
                pos(*changes)
            ),
            LetRefusal::SourceMade { source } => format!(
                "its source at {} is made there, not a name",
                pos(*source)
            ),
            LetRefusal::Chain(r) => {
                let through = ir::fusion::Chain {
                    verdict: Verdict::Refused(*r),
                    lets: Vec::new(),
                    let_refused: None,
                    ..chain.clone()
                };
                let text = render_verdict(program, f, &through);
                format!(
                    "the chain through it would not fuse ({})",
                    text.strip_prefix("not fused: ").unwrap_or(&text)
                )
            }
        };
        out.push_str(&format!("; does not read through let {}: {why}", local(*l)));
    }
    out
}

/// Why an upsert probes once or twice, for `explain`.
pub fn render_upsert(program: &ir::Program, f: FnId, u: &ir::upsert::Upsert) -> String {
    use ir::upsert::{Refusal, Verdict};
    let sm = program.source_map(f);
    let pos = |e: ExprId| {
        let (l, c) = program.line_col(sm.expr(e).start);
        format!("{l}:{c}")
    };
    match u.verdict {
        Verdict::Fused => format!(
            "one probe: the put writes where the lookup at {} found the key, or inserts where it would go",
            pos(u.lookup)
        ),
        Verdict::Refused(r) => match r {
            Refusal::KeyNotName { key } => format!(
                "two probes: the key at {} is not a literal, a name or a field of one",
                pos(key)
            ),
            Refusal::Conditional { lookup } => format!(
                "two probes: the lookup at {} does not run on every way to the put",
                pos(lookup)
            ),
            Refusal::MayChangeMap { at } => {
                let what = match &program.body(f)[at].kind {
                    ExprKind::Call {
                        callee: ir::Callee::Fn(g),
                        ..
                    } => format!("the call of {}", program.items.fns[*g].name),
                    ExprKind::Method { method, .. } => match method {
                        ir::Method::MapPut | ir::Method::MapRemove | ir::Method::MapUpdate => {
                            method.name().to_string()
                        }
                        _ => format!("the function argument of {}", method.name()),
                    },
                    ExprKind::PutOwnedKey { .. } => "put".to_string(),
                    _ => "the call of a function value".to_string(),
                };
                format!(
                    "two probes: {what} at {} in the put's value may change a map",
                    pos(at)
                )
            }
            Refusal::Assigns { at } => format!(
                "two probes: the assignment at {} in the put's value changes the map's or the key's name",
                pos(at)
            ),
        },
    }
}
