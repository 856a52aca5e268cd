//! Sspur's static ownership analysis: decides every free a program makes.
//!
//! Only list buffers and string blocks are freed, where the analysis proves
//! that a block has one owner that just made its last use; everything else
//! stays on the collector. The pass:
//!
//! 1. classifies every use of every value as a read, an escape or a move
//!    (`walk`, driven by the method table in `table`);
//! 2. solves the summaries (fresh results, borrowed parameters) as a
//!    greatest fixpoint, one strongly connected component of the call graph
//!    at a time, callees first (`solve`);
//! 3. decides which locals own their block and how each block ends
//!    (`decide`), and writes those decisions into a copy of the program as
//!    explicit IR forms (`rewrite`);
//! 4. gives every allocation site a fate with its reason (`report`).
//!
//! The pass never changes what a program computes: when unsure, it does not
//! free.
//!
//! Decisions where the rules leave room:
//! - The split family (`chars`, `split`, `words`, `lines`) returns a fresh
//!   list whose pieces are views, so its receiver escapes; `fold`'s initial
//!   value escapes (it becomes the accumulator the function may return),
//!   and so does `get_or`'s default.
//! - Views that die first: a view of a local or parameter (take, drop,
//!   slice, trim; the split family's pieces) does not make it escape when
//!   the view is read where it is made, or bound to a `let` that is only
//!   read; the owner is then freed after the later of its own and the
//!   view's last use. The split family's list may only be read by len,
//!   is_empty, join, contains, interpolation or print, or iterated by a
//!   `for` whose variable is only read (anything else could keep a piece).
//!   A bound view of a var that is ever assigned still escapes (the update
//!   would free the viewed block), as does a view stored, returned,
//!   captured or used as a key: `explain` names where.
//! - `match` on a value escapes it, even with only literal patterns.
//! - `read_file` and `read_stdin` make fresh strings and `read_lines` a
//!   fresh list (its strings stay on the collector: the list is freed
//!   shallowly); `args()` does not (the runtime may keep its list). The
//!   option `write_file` and `append_file` return is left to the collector
//!   like every option. Every built-in only reads its arguments.
//! - A var escaping only in statements after its last update (e.g.
//!   `s := s + ..` in a loop, then `s.take(3)`) still frees the values its
//!   updates replace; only its last value stays on the collector.
//! - An assignment inside an operand of a larger expression (where an
//!   earlier operand may already hold the old value) makes its var unowned,
//!   as does assigning a var inside a `for` over it.
//! - A temporary list made by `xs.map(|x| "<fresh>")` and read only by
//!   join, len, is_empty, contains, interpolation or print owns its strings
//!   and is freed deeply.
//! - Consumed keys: an owned `let` string whose last use (not inside a loop
//!   of its block) is a `put` key, or a fresh unnamed key expression.
//! - To keep evaluation order, hoisting a temporary out of a call also
//!   binds the operands evaluated before it (names and literals excepted).
//! - `x := x.push(..)` keeps exactly that shape (temporaries of its
//!   arguments are bound around the statement) so both backends can tell
//!   whether the buffer moved.
#![forbid(unsafe_code)]

mod cells;
mod decide;
mod fusion;
pub mod reason;
mod report;
mod rewrite;
mod set;
mod shallow;
mod table;
mod walk;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ir::{ExprId, ExprKind, FnId, OldValue, Program};
use petgraph::graph::{DiGraph, NodeIndex};

use decide::{Decider, End, Own};
use reason::{Cx, DropReason, ParamUse, Reader, ResultNotFresh, SetMode};
use walk::Ctx;

pub use cells::{CallChoice, Shared};
pub use report::{render_fate, render_site, BlockKind, FateKind, SiteKind};
pub use table::{row as method_row, ArgUse, Res};

/// What the analysis knows about one function from outside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Every value the function returns is a new block nobody else holds.
    pub fresh_result: bool,
    pub why_not_fresh: Option<ResultNotFresh>,
    /// The result is a list of strings that owns them (see deep ownership).
    pub deep_result: bool,
    /// Per parameter: the body only reads it (always true for parameters
    /// that are not lists or strings).
    pub borrowed: Vec<bool>,
    pub why_not_borrowed: Vec<Option<ParamUse>>,
    /// Every value the function returns is a cell tree nobody else holds
    /// any part of (owned deep).
    pub owned_deep_result: bool,
    pub why_not_owned_deep: Option<cells::Shared>,
    /// Per parameter: nothing reachable from it is kept by the body (the
    /// body only borrows it deep; always true for non-cell parameters).
    pub cell_borrowed: Vec<bool>,
    pub why_not_cell_borrowed: Vec<Option<cells::Shared>>,
    /// Per parameter: the owning version may own it (a cell parameter the
    /// body can consume: reads, then at most one consuming use on each
    /// path). It owns the parameters for which this holds and the sharing
    /// version does not borrow deep ([`Summary::owns`]).
    pub owning: Vec<bool>,
    pub why_not_owning: Vec<Option<cells::Shared>>,
    /// The owning version's result is owned deep.
    pub owning_result: bool,
    pub why_not_owning_result: Option<cells::Shared>,
    /// Every value the function returns is a cell block nobody else
    /// refers to (its fields may be shared): a caller may free the block.
    pub unique_result: bool,
    pub why_not_unique: Option<cells::Shared>,
}

impl Summary {
    fn optimistic(n: usize) -> Summary {
        Summary {
            fresh_result: true,
            why_not_fresh: None,
            deep_result: true,
            borrowed: vec![true; n],
            why_not_borrowed: vec![None; n],
            owned_deep_result: true,
            why_not_owned_deep: None,
            cell_borrowed: vec![true; n],
            why_not_cell_borrowed: vec![None; n],
            owning: vec![true; n],
            why_not_owning: vec![None; n],
            owning_result: true,
            why_not_owning_result: None,
            unique_result: true,
            why_not_unique: None,
        }
    }
    /// Whether the owning version owns parameter `i`.
    pub fn owns(&self, i: usize) -> bool {
        self.owning.get(i).copied().unwrap_or(false)
            && !self.cell_borrowed.get(i).copied().unwrap_or(true)
    }
    /// Whether the function has an owning version (it owns a parameter).
    pub fn has_owning(&self) -> bool {
        (0..self.owning.len()).any(|i| self.owns(i))
    }
    /// The facts the fixpoint compares (reasons may differ by visit order).
    #[allow(clippy::type_complexity)]
    fn key(&self) -> (bool, bool, &[bool], bool, &[bool], &[bool], bool, bool) {
        (
            self.fresh_result,
            self.deep_result,
            &self.borrowed,
            self.owned_deep_result,
            &self.cell_borrowed,
            &self.owning,
            self.owning_result,
            self.unique_result,
        )
    }
}

/// One allocation site and what happens to its block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fate {
    pub func: FnId,
    pub expr: ExprId,
    /// Byte offset of the site.
    pub offset: u32,
    /// e.g. `list from map` when rendered.
    pub what: SiteKind,
    /// e.g. `freed after 14:5 (last use of xs)` when rendered.
    pub fate: FateKind,
    /// A real allocation (false for calls, listed for their reason only).
    pub allocates: bool,
}

/// An allocation site for the native backend's per-site statistics,
/// keyed by (function, expression).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocSite {
    pub func: FnId,
    pub expr: ExprId,
    pub what: SiteKind,
    /// The tuples a list-making method puts in its list (enumerate, zip,
    /// entries): a second site of the same expression.
    pub elements: bool,
    /// `what` rendered, e.g. `list from map`.
    pub name: String,
    /// `LINE:COL name`, e.g. `12:15 list from map`, for humans.
    pub description: String,
}

/// The result of the pass.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The program with drops, old-value frees, consumed keys, string
    /// builders and temporaries written in.
    /// Shared so the driver hands it to a backend without a copy.
    pub program: std::sync::Arc<Program>,
    /// Indexed like `program.items.fns`.
    pub summaries: Vec<Summary>,
    /// Every allocation site, in source order.
    pub fates: Vec<Fate>,
    /// Per function, what each drop's `reason` index stands for.
    pub reasons: Vec<Vec<DropReason>>,
    /// String builders made by the push-then-join rewrite (new expressions
    /// in `program`), with their description.
    pub builders: Vec<AllocSite>,
    /// Every chain of list methods fusion considered, in source order:
    /// (offset, function, chain with its verdict).
    pub pipelines: Vec<(u32, FnId, ir::fusion::Chain)>,
    /// Every put whose value looks up its own key (`ir::upsert`), in
    /// source order: (offset, function, upsert with its verdict).
    pub upserts: Vec<(u32, FnId, ir::upsert::Upsert)>,
    /// Every `set` call, in source order: (offset, function, in place or
    /// a copy, and why).
    pub sets: Vec<(u32, FnId, SetMode)>,
    /// Every direct call of a function with an owning version, in source
    /// order: (offset, the calling function (a version), the callee, which
    /// version runs and why).
    pub calls: Vec<(u32, FnId, FnId, cells::CallChoice)>,
    /// Every call handed a reuse token, in source order: (offset, the
    /// calling function (a version), the `#token` version it runs, the
    /// reason in the caller's table).
    pub handoffs: Vec<(u32, FnId, FnId, DropReason)>,
}

fn fn_index(f: FnId) -> usize {
    f.into_raw().into_u32() as usize
}

/// Runs the whole analysis.
pub fn analyze(program: &Program) -> Analysis {
    let named = name_nested(program);
    let program = &named;
    let summaries = solve(program);
    let effects = ir::effects::Effects::of(program);
    // The owning versions some call runs: from the sharing versions' calls,
    // then from the owning versions' own calls, until none is new.
    let mut needed: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    let mut work: Vec<(FnId, bool)> = program.items.fns.iter().map(|(f, _)| (f, false)).collect();
    while let Some((f, owning)) = work.pop() {
        for g in owning_callees(program, &effects, &summaries, f, owning) {
            if needed.insert(g.into_raw().into_u32()) {
                work.push((g, true));
            }
        }
    }
    let tokens = token_table(program, &summaries, &needed);
    let mut out = program.clone();
    let mut versions: HashMap<FnId, FnId> = HashMap::new();
    let mut all_summaries = summaries.clone();
    {
        let items = Arc::make_mut(&mut out.items);
        for (f, sig) in program.items.fns.iter() {
            if !needed.contains(&f.into_raw().into_u32()) {
                continue;
            }
            let mut v = sig.clone();
            v.owning_of = Some(f);
            v.takes_token = false;
            let id = items.fns.alloc(v);
            versions.insert(f, id);
            let mut s = summaries[fn_index(f)].clone();
            s.owned_deep_result = s.owning_result;
            s.why_not_owned_deep = s.why_not_owning_result;
            all_summaries.push(s);
            out.bodies.push(program.bodies[fn_index(f)].clone());
            out.source_maps
                .push(program.source_maps[fn_index(f)].clone());
            out.fn_spans.push(program.fn_span(f));
        }
    }
    let mut fates = Vec::new();
    let mut reasons = Vec::new();
    let mut builders = Vec::new();
    let mut pipelines = Vec::new();
    let mut upserts = Vec::new();
    let mut sets = Vec::new();
    let mut calls = Vec::new();
    let mut handoffs = Vec::new();
    // Every function's sharing version, then the owning versions, in the
    // order of their ids, then the `#token` versions as calls need them
    // (each job: the function, its version's id, owning, the token's
    // size class).
    let mut jobs: Vec<(FnId, FnId, bool, Option<usize>)> = program
        .items
        .fns
        .iter()
        .map(|(f, _)| (f, f, false, None))
        .collect();
    let mut vs: Vec<(FnId, FnId)> = versions.iter().map(|(f, v)| (*f, *v)).collect();
    vs.sort_by_key(|(_, v)| v.into_raw().into_u32());
    jobs.extend(vs.into_iter().map(|(f, v)| (f, v, true, None)));
    let mut token_versions: HashMap<(FnId, bool, usize), FnId> = HashMap::new();
    // Indexed like `out.items.fns`, filled as the jobs run.
    reasons.resize(out.items.fns.len(), Vec::new());
    let mut job = 0;
    while let Some(&(f, id, owning, token)) = jobs.get(job) {
        job += 1;
        let i = fn_index(f);
        let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i)) else {
            continue;
        };
        let with_token;
        let (body, sm) = match token {
            Some(_) => {
                let ty = out.items.fns[id].params.last().map(|p| p.1.clone());
                with_token = token_param(body, sm, ty.unwrap_or(ir::Ty::Unit));
                (&with_token.0, &with_token.1)
            }
            None => (&**body, &**sm),
        };
        let fusion = ir::fusion::Plan::of(program, &effects, f);
        let mut facts = walk::walk(body, sm, &summaries);
        facts.relocate_fused_lets(&fusion);
        let mut d = Decider::new(body, sm, &facts, &summaries);
        d.fusion = fusion;
        let owned = if owning {
            cells::owned_params(f, &d)
        } else {
            std::collections::HashSet::new()
        };
        let (mut plan, mut why) = plan(&d, &program.items, owned.clone(), Some(&tokens));
        if let (Some(class), Some(&tok)) = (token, body.params.last()) {
            let c = cells::Cells::owning(&d, &program.items, owned.clone()).with_tokens(&tokens);
            cells::hand_token(&c, &mut plan, &mut why, tok, class);
        }
        // The `#token` versions this body's calls run, made on first use.
        let mut handed: Vec<(ExprId, (ir::LocalId, usize, u32))> =
            plan.token_calls.iter().map(|(e, t)| (*e, *t)).collect();
        handed.sort_by_key(|(e, _)| e.into_raw().into_u32());
        for (e, (tok, class, r)) in handed {
            let ExprKind::Call {
                callee: ir::Callee::Fn(g),
                ..
            } = &body[e].kind
            else {
                continue;
            };
            let g_owning = plan.owning_calls.contains_key(&e);
            let key = (*g, g_owning, class);
            let v = match token_versions.get(&key) {
                Some(v) => *v,
                None => {
                    let items = Arc::make_mut(&mut out.items);
                    let base = if g_owning { versions[g] } else { *g };
                    let mut sig = items.fns[base].clone();
                    sig.takes_token = true;
                    let ty = token_ty(program, &tokens, *g, class, &mut Vec::new())
                        .unwrap_or_else(|| body.locals[tok].ty.clone());
                    sig.params.push(("token".into(), ty));
                    let v = items.fns.alloc(sig);
                    let mut s = all_summaries[fn_index(base)].clone();
                    s.borrowed.push(true);
                    s.why_not_borrowed.push(None);
                    s.cell_borrowed.push(false);
                    s.why_not_cell_borrowed.push(None);
                    s.owning.push(false);
                    s.why_not_owning.push(None);
                    all_summaries.push(s);
                    out.bodies.push(program.bodies[fn_index(*g)].clone());
                    out.source_maps
                        .push(program.source_maps[fn_index(*g)].clone());
                    out.fn_spans.push(program.fn_span(*g));
                    reasons.push(Vec::new());
                    token_versions.insert(key, v);
                    jobs.push((*g, v, g_owning, Some(class)));
                    v
                }
            };
            plan.token_targets.insert(e, v);
            handoffs.push((sm.expr(e).start, id, v, why[r as usize]));
        }
        {
            let c = cells::Cells::owning(&d, &program.items, owned.clone());
            for (e, _) in body.exprs.iter() {
                if let (
                    Some(choice),
                    ExprKind::Call {
                        callee: ir::Callee::Fn(g),
                        ..
                    },
                ) = (c.call_choice(e), &body[e].kind)
                {
                    calls.push((sm.expr(e).start, id, *g, choice));
                }
            }
        }
        for g in plan.owning_calls.values_mut() {
            if let Some(v) = versions.get(g) {
                *g = *v;
            }
        }
        if !owning {
            for c in &d.fusion.chains {
                let at = match c.consumer {
                    ir::fusion::Consumer::Method(e) => sm.expr(e).start,
                    ir::fusion::Consumer::For(..) => sm.expr(c.source).start,
                };
                pipelines.push((at, f, c.clone()));
            }
            for u in ir::upsert::Plan::body(body).upserts {
                upserts.push((sm.expr(u.put).start, f, u));
            }
            for (e, _) in body.exprs.iter() {
                if let Some(m) = d.set_mode(e) {
                    sets.push((d.set_at(e), f, m));
                }
            }
        }
        fates.extend(report::fates(
            id,
            &d,
            &plan,
            &all_summaries,
            &program.items,
            owned,
        ));
        let (nb, nsm) = rewrite::rewrite(body, sm, &plan);
        for (l, _) in plan.builders.iter() {
            if let Some(init) = find_var_init(&nb, *l) {
                let at = nsm.expr(init).start;
                let (line, col) = program.line_col(at);
                let name = format!("string builder for {}", body.locals[*l].name);
                builders.push((
                    at,
                    AllocSite {
                        func: id,
                        expr: init,
                        what: SiteKind::Builder(*l),
                        elements: false,
                        description: format!("{line}:{col} {name}"),
                        name,
                    },
                ));
            }
        }
        let j = fn_index(id);
        out.bodies[j] = Arc::new(nb);
        out.source_maps[j] = Arc::new(nsm);
        reasons[j] = why;
    }
    fates.sort_by_key(|f| (f.offset, fn_index(f.func), f.expr.into_raw().into_u32()));
    builders.sort_by_key(|(at, b)| (*at, fn_index(b.func)));
    let builders = builders.into_iter().map(|(_, b)| b).collect();
    pipelines.sort_by_key(|(at, f, _)| (*at, fn_index(*f)));
    upserts.sort_by_key(|(at, f, _)| (*at, fn_index(*f)));
    sets.sort_by_key(|(at, f, _)| (*at, fn_index(*f)));
    calls.sort_by_key(|(at, f, _, _)| (*at, fn_index(*f)));
    handoffs.sort_by_key(|(at, f, _, _)| (*at, fn_index(*f)));
    Analysis {
        program: std::sync::Arc::new(out),
        summaries: all_summaries,
        fates,
        reasons,
        builders,
        pipelines,
        upserts,
        sets,
        calls,
        handoffs,
    }
}

/// The body of a `#token` version: the function's, with a last parameter
/// `token` of type `ty` (the signature's).
fn token_param(
    body: &ir::Body,
    sm: &ir::BodySourceMap,
    ty: ir::Ty,
) -> (ir::Body, ir::BodySourceMap) {
    let mut body = body.clone();
    let mut sm = sm.clone();
    let l = body.locals.alloc(ir::Local {
        name: "token".into(),
        ty,
        kind: ir::LocalKind::Param,
    });
    let span = body.root.map(|r| sm.expr(r)).unwrap_or_default();
    sm.locals.insert(l, span);
    body.params.push(l);
    (body, sm)
}

/// The type of `f`'s `#token` version's token parameter: that of its
/// first constructor of size class `class`, else of the token of the
/// first call it may hand it to (any cell type of the class would do:
/// the token is only built into or freed; this one depends on `f`'s
/// body, not on which caller came first).
fn token_ty(
    program: &Program,
    tokens: &cells::TokenTable,
    f: FnId,
    class: usize,
    seen: &mut Vec<FnId>,
) -> Option<ir::Ty> {
    if seen.contains(&f) {
        return None;
    }
    seen.push(f);
    let body = program.bodies.get(fn_index(f))?;
    if let Some((_, x)) = body
        .exprs
        .iter()
        .find(|(e, _)| cells::ctor_class(body, &program.items, *e) == Some(class))
    {
        return Some(x.ty.clone());
    }
    body.exprs.iter().find_map(|(_, x)| match &x.kind {
        ExprKind::Call {
            callee: ir::Callee::Fn(g),
            ..
        } if [false, true]
            .iter()
            .any(|o| tokens.get(&(*g, *o)).is_some_and(|cs| cs.contains(&class))) =>
        {
            token_ty(program, tokens, *g, class, seen)
        }
        _ => None,
    })
}

/// Per version (the sharing one of every function, the owning ones some
/// call runs), the size classes of reuse tokens it could build in, from
/// its own plan. A least fixpoint: a version whose result is a call of one
/// in the table hands the token on, so it may take one too.
fn token_table(
    program: &Program,
    summaries: &[Summary],
    needed: &std::collections::BTreeSet<u32>,
) -> cells::TokenTable {
    let effects = ir::effects::Effects::of(program);
    let versions: Vec<(FnId, bool)> = program
        .items
        .fns
        .iter()
        .flat_map(|(f, _)| {
            let owning = needed.contains(&f.into_raw().into_u32());
            std::iter::once((f, false)).chain(owning.then_some((f, true)))
        })
        .filter(|&(f, _)| {
            // Only bodies that build a cell or call a function.
            program.bodies.get(fn_index(f)).is_some_and(|body| {
                body.exprs.iter().any(|(e, x)| {
                    cells::ctor_class(body, &program.items, e).is_some()
                        || matches!(x.kind, ExprKind::Call { .. })
                })
            })
        })
        .collect();
    let mut table = cells::TokenTable::new();
    // Each round only adds classes (a call taking a token takes it where
    // a path had nothing): it ends after at most one round per version.
    for _ in 0..=versions.len() {
        let mut next = cells::TokenTable::new();
        for &(f, owning) in &versions {
            let i = fn_index(f);
            let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i)) else {
                continue;
            };
            let fusion = ir::fusion::Plan::of(program, &effects, f);
            let mut facts = walk::walk(body, sm, summaries);
            facts.relocate_fused_lets(&fusion);
            let mut d = Decider::new(body, sm, &facts, summaries);
            d.fusion = fusion;
            let owned = if owning {
                cells::owned_params(f, &d)
            } else {
                std::collections::HashSet::new()
            };
            let (p, _) = plan(&d, &program.items, owned.clone(), Some(&table));
            let c = cells::Cells::owning(&d, &program.items, owned).with_tokens(&table);
            let classes = cells::token_classes(&c, &p);
            if !classes.is_empty() {
                next.insert((f, owning), classes);
            }
        }
        if next == table {
            break;
        }
        table = next;
    }
    table
}

/// Names every cell a nested pattern of a `match` on a local takes apart:
/// `Node(c, Node(..), ..)` becomes `Node(c, cell @ Node(..), ..)`, so that
/// a destructive match can free or reuse its block.
fn name_nested(program: &Program) -> Program {
    let mut out = program.clone();
    for (i, b) in program.bodies.iter().enumerate() {
        let Some(sm) = program.source_maps.get(i) else {
            continue;
        };
        let mut body = (**b).clone();
        let mut map = (**sm).clone();
        let mut changed = name_scrutinees(&mut body, &mut map);
        let arms: Vec<ir::PatId> = body
            .exprs
            .iter()
            .filter_map(|(_, x)| match &x.kind {
                ExprKind::Match { scrutinee, arms }
                    if matches!(body[*scrutinee].kind, ExprKind::Local(_)) =>
                {
                    Some(arms.iter().map(|a| a.pat).collect::<Vec<_>>())
                }
                _ => None,
            })
            .flatten()
            .collect();
        for top in arms {
            let mut stack: Vec<ir::PatId> = match &body[top].kind {
                ir::PatKind::Ctor { args, .. } | ir::PatKind::Tuple(args) => args.clone(),
                _ => continue,
            };
            while let Some(p) = stack.pop() {
                let kind = body[p].kind.clone();
                let (ir::PatKind::Ctor { args, .. } | ir::PatKind::Tuple(args)) = &kind else {
                    continue;
                };
                if args.is_empty() || !cells::is_cell(&body[p].ty) {
                    continue;
                }
                stack.extend(args.iter().copied());
                let ty = body[p].ty.clone();
                let span = map.pat(p);
                let l = new_let(&mut body, &mut map, "cell", ty.clone(), span);
                let inner = body.pats.alloc(ir::Pat { kind, ty });
                map.pats.insert(inner, span);
                body.pats[p].kind = ir::PatKind::At {
                    local: l,
                    pat: inner,
                };
                changed = true;
            }
        }
        if changed {
            out.bodies[i] = Arc::new(body);
            out.source_maps[i] = Arc::new(map);
        }
    }
    out
}

/// A new `let` local of the analysis, named `name`.
fn new_let(
    body: &mut ir::Body,
    map: &mut ir::BodySourceMap,
    name: &str,
    ty: ir::Ty,
    span: ir::Span,
) -> ir::LocalId {
    let l = body.locals.alloc(ir::Local {
        name: name.into(),
        ty,
        kind: ir::LocalKind::Let,
    });
    map.locals.insert(l, span);
    l
}

/// Names the value of every call a `match` takes apart: `match f(x) {..}`
/// becomes `{ let scrut = f(x); match scrut {..} }`, so that a destructive
/// match can own the value the call returns (or, for a method's new
/// `Some`, `m.get(k)`, its block be freed after the match). The match keeps the id of
/// the original expression (now the block).
fn name_scrutinees(body: &mut ir::Body, map: &mut ir::BodySourceMap) -> bool {
    // A lookup an upsert's put reuses stays where it is.
    let lookups: HashSet<ExprId> = ir::upsert::Plan::body(body)
        .upserts
        .iter()
        .map(|u| u.lookup)
        .collect();
    let targets: Vec<ExprId> = body
        .exprs
        .iter()
        .filter_map(|(m, x)| match &x.kind {
            ExprKind::Match { scrutinee, arms }
                if (matches!(
                    body[*scrutinee].kind,
                    ExprKind::Call {
                        callee: ir::Callee::Fn(_),
                        ..
                    }
                ) || matches!(body[*scrutinee].kind,
                        ExprKind::Method { method, .. } if shallow::makes_some(method))
                    && !lookups.contains(scrutinee))
                    && cells::is_cell(&body[*scrutinee].ty)
                    && arms.iter().any(|a| {
                        matches!(&body[a.pat].kind,
                            ir::PatKind::Ctor { args, .. } | ir::PatKind::Tuple(args)
                                if !args.is_empty())
                    }) =>
            {
                Some(m)
            }
            _ => None,
        })
        .collect();
    for m in &targets {
        let m = *m;
        let ExprKind::Match { scrutinee, arms } = body[m].kind.clone() else {
            continue;
        };
        let ty = body[m].ty.clone();
        let span = map.expr(m);
        let sty = body[scrutinee].ty.clone();
        let sspan = map.expr(scrutinee);
        let l = new_let(body, map, "scrut", sty.clone(), sspan);
        let pat = body.pats.alloc(ir::Pat {
            kind: ir::PatKind::Bind(l),
            ty: sty.clone(),
        });
        map.pats.insert(pat, sspan);
        let stmt = body.stmts.alloc(ir::Stmt {
            kind: ir::StmtKind::Let {
                pat,
                init: scrutinee,
            },
        });
        map.stmts.insert(stmt, sspan);
        let read = body.exprs.alloc(ir::Expr {
            kind: ExprKind::Local(l),
            ty: sty,
        });
        map.exprs.insert(read, sspan);
        let inner = body.exprs.alloc(ir::Expr {
            kind: ExprKind::Match {
                scrutinee: read,
                arms,
            },
            ty: ty.clone(),
        });
        map.exprs.insert(inner, span);
        body.exprs[m].kind = ExprKind::Block {
            stmts: vec![stmt],
            tail: Some(inner),
        };
    }
    !targets.is_empty()
}

/// The functions whose owning version the sharing (or, with `owning`,
/// the owning) version of `f` calls.
fn owning_callees(
    program: &Program,
    effects: &ir::effects::Effects,
    summaries: &[Summary],
    f: FnId,
    owning: bool,
) -> Vec<FnId> {
    let i = fn_index(f);
    let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i)) else {
        return Vec::new();
    };
    // The same facts and plan as the body's own analysis.
    let fusion = ir::fusion::Plan::of(program, effects, f);
    let mut facts = walk::walk(body, sm, summaries);
    facts.relocate_fused_lets(&fusion);
    let mut d = Decider::new(body, sm, &facts, summaries);
    d.fusion = fusion;
    let owned = if owning {
        cells::owned_params(f, &d)
    } else {
        std::collections::HashSet::new()
    };
    let c = cells::Cells::owning(&d, &program.items, owned);
    let mut out = Vec::new();
    for (e, x) in body.exprs.iter() {
        if let ExprKind::Call {
            callee: ir::Callee::Fn(g),
            ..
        } = &x.kind
        {
            if c.call_choice(e) == Some(cells::CallChoice::Owning) {
                out.push(*g);
            }
        }
    }
    out
}

fn find_var_init(body: &ir::Body, l: ir::LocalId) -> Option<ExprId> {
    body.stmts.iter().find_map(|(_, s)| match &s.kind {
        ir::StmtKind::Var { local, init } if *local == l => Some(*init),
        _ => None,
    })
}

/// The summaries: a greatest fixpoint per strongly connected component of
/// the call graph, callees first. Starting from "every result fresh, every
/// parameter borrowed", each round removes what a body contradicts.
fn solve(program: &Program) -> Vec<Summary> {
    let items = &program.items;
    let mut summaries: Vec<Summary> = items
        .fns
        .iter()
        .map(|(_, sig)| Summary::optimistic(sig.params.len()))
        .collect();
    let mut graph: DiGraph<FnId, ()> = DiGraph::new();
    let nodes: HashMap<FnId, NodeIndex> = items
        .fns
        .iter()
        .map(|(f, _)| (f, graph.add_node(f)))
        .collect();
    for (f, _) in items.fns.iter() {
        let i = fn_index(f);
        let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i)) else {
            continue;
        };
        let facts = walk::walk(body, sm, &summaries);
        for g in facts.callees {
            if let Some(&n) = nodes.get(&g) {
                graph.update_edge(nodes[&f], n, ());
            }
        }
    }
    // Tarjan yields components in reverse topological order: callees first.
    for scc in petgraph::algo::tarjan_scc(&graph) {
        let members: Vec<FnId> = scc.iter().map(|n| graph[*n]).collect();
        loop {
            let mut changed = false;
            for &f in &members {
                let i = fn_index(f);
                let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i))
                else {
                    continue;
                };
                let facts = walk::walk(body, sm, &summaries);
                let d = Decider::new(body, sm, &facts, &summaries);
                let mut s = decide::summarize(items, f, &d);
                // Never climb back up: the fixpoint only removes facts.
                let old = &summaries[i];
                s.fresh_result &= old.fresh_result;
                s.deep_result &= old.deep_result;
                for (b, o) in s.borrowed.iter_mut().zip(&old.borrowed) {
                    *b &= *o;
                }
                s.owned_deep_result &= old.owned_deep_result;
                for (b, o) in s.cell_borrowed.iter_mut().zip(&old.cell_borrowed) {
                    *b &= *o;
                }
                for (b, o) in s.owning.iter_mut().zip(&old.owning) {
                    *b &= *o;
                }
                s.owning_result &= old.owning_result;
                s.unique_result &= old.unique_result;
                if s.key() != old.key() {
                    changed = true;
                    summaries[i] = s;
                } else if old.why_not_fresh.is_none() && s.why_not_fresh.is_some() {
                    summaries[i].why_not_fresh = s.why_not_fresh;
                }
            }
            if !changed {
                break;
            }
        }
        // Reasons for the final state (kept stable once the facts are).
        for &f in &members {
            let i = fn_index(f);
            let (Some(body), Some(sm)) = (program.bodies.get(i), program.source_maps.get(i)) else {
                continue;
            };
            let facts = walk::walk(body, sm, &summaries);
            let d = Decider::new(body, sm, &facts, &summaries);
            let s = decide::summarize(items, f, &d);
            if s.key() == summaries[i].key() {
                summaries[i] = s;
            }
        }
    }
    summaries
}

/// Turns one body's decisions into a rewrite plan and its reason table.
fn plan(
    d: &Decider,
    items: &ir::ItemTree,
    owned: std::collections::HashSet<ir::LocalId>,
    tokens: Option<&cells::TokenTable>,
) -> (rewrite::Plan, Vec<DropReason>) {
    let body = d.body;
    let mut plan = rewrite::Plan::default();
    let mut why = Vec::new();
    let mut locals: Vec<_> = d.facts.locals.keys().copied().collect();
    locals.sort_by_key(|l| l.into_raw().into_u32());
    for x in locals {
        let Some(lf) = d.facts.local(x) else { continue };
        let Some(decl) = &lf.decl else { continue };
        if !body.locals[x].ty.is_freeable() {
            continue;
        }
        match d.own(x) {
            Own::Yes(End::Drop { index, deep }) => {
                let allocs = decl.var || d.fresh(decl.init).allocs();
                if allocs {
                    let r = why.len() as u32;
                    why.push(DropReason::LastUse { local: x, deep });
                    plan.drops
                        .entry(decl.block)
                        .or_default()
                        .push((index, x, deep, r));
                }
                for a in &lf.assigns {
                    plan.assigns.insert(a.stmt, old_value(d, x, a, deep));
                }
            }
            Own::Yes(End::MovedOut | End::Kept { .. } | End::SetInPlace(_)) => {
                for a in &lf.assigns {
                    plan.assigns.insert(a.stmt, old_value(d, x, a, false));
                }
            }
            Own::Yes(End::ConsumedKey(put)) => {
                plan.puts.insert(put);
            }
            Own::Yes(End::Builder { join, sep }) => {
                plan.builders.insert(x, (join, sep));
                for a in &lf.assigns {
                    if let ExprKind::Method { args, .. } = &body[a.value].kind {
                        if let Some(&arg) = args.first() {
                            if d.owned_string(arg) && d.fresh(arg).allocs() {
                                let r = why.len() as u32;
                                why.push(DropReason::BuilderPiece(x));
                                plan.temps.insert(arg, r);
                            }
                        }
                    }
                }
            }
            Own::No(..) => {}
        }
    }
    // Temporaries: fresh values consumed by a read and never named. The
    // fresh source list of a fused chain is read by the whole chain: it is
    // freed after the consumer, shallow (an element may reach the
    // consumer's result).
    let fused_sources: HashMap<ExprId, ir::fusion::Consumer> = d
        .fusion
        .chains
        .iter()
        .filter(|c| c.fused() && c.kind == ir::fusion::SourceKind::List)
        .map(|c| (c.source, c.consumer))
        .collect();
    let mut exprs: Vec<ExprId> = d.facts.exprs.iter().map(|(e, _)| e).collect();
    exprs.sort_by_key(|e| e.into_raw().into_u32());
    for e in exprs {
        let f = &d.facts.exprs[e];
        if f.transparent || !body[e].ty.is_freeable() {
            continue;
        }
        let for_range =
            matches!(body[e].kind, ExprKind::Range { .. }) && f.ctx == Ctx::Read(Reader::For);
        let in_place = d.unbuilt(e).is_some() || d.in_place_receiver(e);
        if for_range || in_place || matches!(body[e].kind, ExprKind::Local(_)) {
            continue;
        }
        // Read by its first stage, or viewed by it (take, drop): either way
        // that stage is never built, so nothing but the chain reads it.
        if let Some(&consumer) = fused_sources.get(&e) {
            let read = matches!(
                f.ctx,
                Ctx::Read(_) | Ctx::Escape(reason::Escape::ViewedBy(_))
            );
            let diverges = f.parent.is_some_and(|p| body[p].ty == ir::Ty::Never);
            if read && !diverges && d.fresh(e).allocs() {
                plan.temps.insert(e, why.len() as u32);
                why.push(DropReason::Temp {
                    reader: Reader::Pipeline,
                    deep: false,
                });
                plan.fused_sources.insert(consumer, e);
            }
            continue;
        }
        match &f.ctx {
            Ctx::Read(reader) if d.fresh(e).allocs() => {
                if let Some(p) = f.parent {
                    if body[p].ty == ir::Ty::Never {
                        continue;
                    }
                }
                let r = why.len() as u32;
                let deep = d.deep_temp(e);
                if deep {
                    plan.deep_temps.insert(e);
                }
                why.push(DropReason::Temp {
                    reader: *reader,
                    deep,
                });
                plan.temps.insert(e, r);
            }
            Ctx::Key(put) if d.owned_string(e) && d.fresh(e).allocs() => {
                plan.puts.insert(*put);
            }
            _ => {}
        }
    }
    let c = cells::Cells::owning(d, items, owned);
    let c = match tokens {
        Some(t) => c.with_tokens(t),
        None => c,
    };
    cells::plan(&c, &mut plan, &mut why);
    shallow::plan(&c, &mut plan, &mut why);
    let mut sets: Vec<ExprId> = d.facts.exprs.iter().map(|(e, _)| e).collect();
    sets.sort_by_key(|e| e.into_raw().into_u32());
    for e in sets {
        if let Some(SetMode::InPlace(w)) = d.set_mode(e) {
            plan.sets.insert(e, why.len() as u32);
            why.push(DropReason::SetInPlace(w));
        }
    }
    (plan, why)
}

/// What assignment `a` of owned local `x` does with the value it replaces:
/// `x := x.push(..)` frees it if the buffer moved, `x := x.set(..)` in
/// place keeps it (it is the new value), anything else frees it.
fn old_value(d: &Decider, x: ir::LocalId, a: &walk::Assign, deep: bool) -> OldValue {
    let lf = d.facts.local(x);
    let grow = lf.is_some_and(|lf| {
        lf.uses.iter().any(|u| {
            u.ctx == Ctx::GrowSelf(x)
                && d.facts.exprs.get(u.expr).and_then(|f| f.parent) == Some(a.value)
        })
    });
    if grow {
        OldValue::FreeIfMoved
    } else if d.assign_set_in_place(a) {
        OldValue::Keep
    } else {
        OldValue::Free { deep }
    }
}

/// The program with its drops, as `sspur emit drops` prints it: each
/// drop with its reason beside it.
pub fn emit_drops(a: &Analysis) -> String {
    let cx = Cx {
        program: &a.program,
        summaries: &a.summaries,
    };
    let why = |f: FnId, r: u32| {
        a.reasons
            .get(fn_index(f))
            .and_then(|rs| rs.get(r as usize))
            .map(|d| cx.drop_reason(f, *d))
    };
    ir::pretty::program_with_drop_reasons(&a.program, &why)
}

/// A header naming the file and counting what it lists, then one line per
/// allocation site in source order (`LINE:COL <what>: <fate>`), calls of
/// functions that return a list or string included for their reason.
pub fn explain(a: &Analysis, path: &str) -> String {
    let cx = Cx {
        program: &a.program,
        summaries: &a.summaries,
    };
    // A version the pass made (owning or `#token`), not the source's.
    let owning = |f: FnId| {
        let sig = &a.program.items.fns[f];
        sig.owning_of.is_some() || sig.takes_token
    };
    let sharing_fates: Vec<&Fate> = a.fates.iter().filter(|f| !owning(f.func)).collect();
    let n = sharing_fates.iter().filter(|f| f.allocates).count();
    let calls = sharing_fates
        .iter()
        .filter(|f| !f.allocates && matches!(f.what, SiteKind::Call(..)))
        .count();
    let never = sharing_fates.len() - n - calls;
    let mut out = format!(
        "{path}: {n} allocation site{}",
        if n == 1 { "" } else { "s" }
    );
    if calls > 0 {
        out.push_str(&format!(
            ", {calls} call{} of functions returning a list or string",
            if calls == 1 { "" } else { "s" }
        ));
    }
    if never > 0 {
        out.push_str(&format!(
            ", {never} site{} never built",
            if never == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    for f in &a.fates {
        let (l, c) = a.program.line_col(f.offset);
        let version = if owning(f.func) {
            format!(" in {}", ir::pretty::fn_name(&a.program.items.fns[f.func]))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{l}:{c} {}{version}: {}\n",
            render_site(&cx, f.func, f.what),
            render_fate(&cx, f.func, &f.fate)
        ));
    }
    for (at, f, g, choice) in &a.calls {
        let (l, c) = a.program.line_col(*at);
        out.push_str(&format!(
            "{l}:{c} call {}{}\n",
            cx.call_choice(*f, *g, choice),
            if owning(*f) {
                format!(" (in {})", ir::pretty::fn_name(&a.program.items.fns[*f]))
            } else {
                String::new()
            }
        ));
    }
    for (at, f, v, why) in &a.handoffs {
        let (l, c) = a.program.line_col(*at);
        out.push_str(&format!(
            "{l}:{c} call {}: {}{}\n",
            ir::pretty::fn_name(&a.program.items.fns[*v]),
            cx.drop_reason(*f, *why),
            if owning(*f) {
                format!(" (in {})", ir::pretty::fn_name(&a.program.items.fns[*f]))
            } else {
                String::new()
            }
        ));
    }
    for (at, f, m) in &a.sets {
        let (l, c) = a.program.line_col(*at);
        out.push_str(&format!("{l}:{c} {}\n", cx.set_mode(*f, m)));
    }
    for (at, f, chain) in &a.pipelines {
        let (l, c) = a.program.line_col(*at);
        out.push_str(&format!(
            "{l}:{c} pipeline {}: {}\n",
            chain.names(a.program.body(*f)).join(" -> "),
            report::render_verdict(&a.program, *f, chain)
        ));
    }
    for (at, f, u) in &a.upserts {
        let (l, c) = a.program.line_col(*at);
        out.push_str(&format!(
            "{l}:{c} upsert {} -> put: {}\n",
            u.kind.name(),
            report::render_upsert(&a.program, *f, u)
        ));
    }
    out
}

/// The solved signature table, one function per line in source order.
pub fn emit_summaries(a: &Analysis) -> String {
    let cx = Cx {
        program: &a.program,
        summaries: &a.summaries,
    };
    let mut out = String::new();
    for (f, sig) in a.program.items.fns.iter() {
        let Some(s) = a.summaries.get(fn_index(f)) else {
            continue;
        };
        if sig.owning_of.is_some() || sig.takes_token {
            continue;
        }
        let result = if !sig.ret.is_freeable() {
            "-".to_string()
        } else if s.fresh_result && s.deep_result && sig.ret == ir::Ty::list(ir::Ty::Str) {
            "fresh, owns its strings".to_string()
        } else if s.fresh_result {
            "fresh".to_string()
        } else {
            format!(
                "not fresh ({})",
                cx.result_not_fresh(f, 0)
                    .unwrap_or_else(|| "unknown".into())
            )
        };
        let params: Vec<String> = sig
            .params
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                if !ty.is_freeable() {
                    format!("{name} -")
                } else if s.borrowed.get(i).copied().unwrap_or(false) {
                    format!("{name} borrowed")
                } else {
                    let why = s
                        .why_not_borrowed
                        .get(i)
                        .copied()
                        .flatten()
                        .map(|u| cx.param_use(f, u, 0))
                        .unwrap_or_default();
                    format!("{name} kept ({why})")
                }
            })
            .collect();
        let owning = if s.has_owning() {
            let owned: Vec<&str> = sig
                .params
                .iter()
                .enumerate()
                .filter(|(i, _)| s.owns(*i))
                .map(|(_, p)| p.0.as_str())
                .collect();
            let result = if !sig.ret.is_cell() {
                String::new()
            } else if s.owning_result {
                ", result owned deep".to_string()
            } else {
                format!(
                    ", result not owned deep ({})",
                    cx.shared(s.why_not_owning_result.unwrap_or(cells::Shared::NotNew))
                )
            };
            format!("; owning version: owns {}{result}", owned.join(", "))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "fn {}: result {result}; params: {}{owning}\n",
            sig.name,
            if params.is_empty() {
                "none".to_string()
            } else {
                params.join(", ")
            }
        ));
    }
    out
}

/// Every allocation site of the analysed program, in source order.
pub fn alloc_sites(a: &Analysis) -> Vec<AllocSite> {
    let cx = Cx {
        program: &a.program,
        summaries: &a.summaries,
    };
    let mut v: Vec<AllocSite> = a
        .fates
        .iter()
        .filter(|f| f.allocates)
        .map(|f| {
            let (l, c) = a.program.line_col(f.offset);
            let name = render_site(&cx, f.func, f.what);
            AllocSite {
                func: f.func,
                expr: f.expr,
                what: f.what,
                elements: matches!(f.what, SiteKind::Tuples(_)),
                description: format!("{l}:{c} {name}"),
                name,
            }
        })
        .collect();
    v.extend(a.builders.iter().cloned());
    v
}

/// Counts for reports: allocation sites, those that make list buffers or
/// string blocks (the only blocks freed early), and sites freed statically.
pub fn site_counts(a: &Analysis) -> SiteCounts {
    let sites: Vec<_> = a.fates.iter().filter(|f| f.allocates).collect();
    SiteCounts {
        sites: sites.len(),
        freeable: sites.iter().filter(|f| f.what.is_list_or_string()).count(),
        freed: sites.iter().filter(|f| f.fate.is_freed()).count(),
    }
}

/// See [`site_counts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteCounts {
    pub sites: usize,
    pub freeable: usize,
    pub freed: usize,
}
