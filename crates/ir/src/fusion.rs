//! Pipeline fusion: which chains of list methods run as one loop with no
//! list between their stages. The ownership pass (no temporary for a list
//! that is never built, `explain`), the native backend (the loop) and the
//! printer (`[fused: ...]`) all read the same [`Plan`] of a body.
//!
//! A chain is a source (a range literal, a piece source such as
//! `s.words`, or any other list expression, evaluated once before the
//! loop), then stages (`map`, `filter`,
//! `enumerate`, `zip`, `take`, `drop`), then a consumer (`fold`, `sum`,
//! `len`, `is_empty`, `any`, `all`, `find`, `contains`, `min`, `max`,
//! `join`, `counts`, or a `for`). A range or piece source read directly by
//! its consumer (`(0..n).map(f)`, `s.words.counts`) is a chain without
//! stages; so is `flat_map` of a range. `map` and `filter` collect any
//! chain (`s.lines.drop(1).map(f)`, `xs.filter(p).map(f)`) into their list.
//!
//! Fused, the elements go through the stages one at a time: the calls of
//! the stages' lambdas interleave, the stages' arguments are evaluated
//! before the loop, and the loop stops as soon as a `take`, a `zip` or the
//! consumer needs nothing more. Unfused, each stage runs over every element
//! before the next starts. The two are observably the same when at most one
//! part of the chain has an effect ([`crate::effects`]) and every lambda
//! before a place the loop can stop has none, and no part that may change
//! a map runs in another order than a part that may see one (maps change
//! in place; a change is no effect of its own); otherwise the chain is
//! refused and runs unfused, and the refusal says why.
//!
//! A chain also reads through a `let`: `let evens = xs.filter(f)` whose
//! one use is the source of a later chain (`evens.sum`) fuses as if the
//! init were written there ([`LetLink`]), when the use runs exactly once
//! after the `let` and nothing observable runs in between (or the init
//! itself can do nothing observable). Unfused, the init runs at the `let`.

use crate::effects::{Effect, Effects};
use crate::{
    BinOp, Body, ExprId, ExprKind, LocalId, Method, PatId, PatKind, Program, StmtId, StmtKind, Ty,
};
use std::collections::{HashMap, HashSet};

/// Where a chain's elements come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A range literal: never built.
    Range,
    /// `chars`, `words`, `lines` or `split(sep)` of a string: the pieces
    /// are cut one at a time, the list never built.
    Pieces(Method),
    /// A list that exists anyway (a name, a field, ...): read in place.
    List,
}

/// What takes the chain's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Consumer {
    /// A method call (its expression).
    Method(ExprId),
    /// A `for` statement and its body.
    For(StmtId, ExprId),
}

/// A part of a chain that may have an effect, in unfused order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// The stage or consumer (a method expression, or a `for`'s body).
    pub at: ExprId,
    pub part: Part,
    pub effect: Effect,
}

/// Which part of a stage or consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Its arguments (run once, before its loop; a `take`/`drop` count's
    /// check counts here).
    Args,
    /// Its lambda (run per element).
    Lambda,
    /// A `for`'s body (run per element).
    Body,
}

/// Why a chain runs unfused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Two parts with effects: unfused, all of `first`'s runs happen before
    /// `second`'s; fused they would interleave.
    TwoEffects { first: Point, second: Point },
    /// `cut` (a take, a zip, a consumer that stops early, a `for` body
    /// that breaks or returns) stops the loop, but unfused `effect`'s
    /// lambda runs over every element before it.
    EffectBeforeCut { effect: Point, cut: ExprId },
    /// An argument (of `stage`) makes a list or string that would be a
    /// temporary of its own.
    ArgMadeHere { stage: ExprId, arg: ExprId },
    /// `zip` with something other than a range or a name.
    ZipOther { stage: ExprId },
    /// `changes` may change a map (`at` there) and `other`, another part,
    /// may see one: unfused all of the first runs before the second, and
    /// maps are changed in place.
    MapShared {
        changes: (ExprId, Part),
        at: ExprId,
        other: (ExprId, Part),
    },
    /// The chain's stages are all in the init of `local`'s `let`, which it
    /// does not read through (the chain's `let_refused` says why).
    Let { local: LocalId },
}

/// A `let` a fused chain reads through: its init (the chain's earlier
/// part) runs where the local's one use is, not at the `let`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LetLink {
    pub stmt: StmtId,
    pub local: LocalId,
    pub init: ExprId,
    /// The local's one use (the receiver of the chain's next part).
    pub use_: ExprId,
    /// The block holding the `let`, the `let`'s index in it, and the
    /// index of the statement holding the use (the block's statement
    /// count for its tail).
    pub block: ExprId,
    pub decl_index: usize,
    pub use_index: usize,
}

/// Why a chain does not read through the `let` of its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LetRefusal {
    /// The local is used more than once (`uses` times).
    UsedAgain { uses: usize },
    /// The use may run other than once per `let`: inside a lambda, a loop,
    /// a branch or the right side of `&&`/`||` (`at`).
    NotOnce { at: ExprId },
    /// The init may do something observable (`init`) and so may the code
    /// between the `let` and the use (`between`).
    EffectBetween { init: Effect, between: Effect },
    /// The code between the `let` and the use may leave (a `return`,
    /// `break` or `continue` at `at`) and the init may do something
    /// observable (`init`).
    LeavesBetween { init: Effect, at: ExprId },
    /// `local` (which the init reads) is assigned at `at`, after the `let`
    /// and up to the use's statement.
    AssignedBetween { local: LocalId, at: StmtId },
    /// One of the init and the code in between may change a map (at
    /// `changes`) and the other may see one.
    MapBetween { changes: ExprId },
    /// The init's source is a list made there (`source`), not a name.
    SourceMade { source: ExprId },
    /// The chain through the `let` would be refused.
    Chain(Refusal),
}

/// Whether a chain is fused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Fused,
    Refused(Refusal),
}

/// One chain of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub consumer: Consumer,
    /// The stages' method expressions, the one nearest the source first.
    pub stages: Vec<ExprId>,
    /// The source expression (for pieces, the `words`/... call).
    pub source: ExprId,
    pub kind: SourceKind,
    /// The range literals `zip` stages pair with (never built either).
    pub zip_ranges: Vec<ExprId>,
    /// The `let`s the chain reads through, source to consumer.
    pub lets: Vec<LetLink>,
    /// The `let` of the chain's source the chain does not read through,
    /// and why (when its init could have been the chain's earlier part).
    pub let_refused: Option<(LocalId, LetRefusal)>,
    pub verdict: Verdict,
}

impl Chain {
    pub fn fused(&self) -> bool {
        self.verdict == Verdict::Fused
    }

    /// The lists a fused chain never builds: a range or piece source, and
    /// every stage's list.
    pub fn unbuilt(&self) -> impl Iterator<Item = ExprId> + '_ {
        let src = (self.kind != SourceKind::List).then_some(self.source);
        src.into_iter()
            .chain(self.stages.iter().copied())
            .chain(self.zip_ranges.iter().copied())
    }

    /// The names of the parts, source to consumer (`range -> map -> sum`;
    /// a `let` read through as `let evens`).
    pub fn names(&self, body: &Body) -> Vec<String> {
        let mut out = vec![match self.kind {
            SourceKind::Range => "range".to_string(),
            SourceKind::Pieces(m) => m.name().to_string(),
            SourceKind::List => "list".to_string(),
        }];
        for &s in &self.stages {
            // A `let` read through comes after the last stage of its init.
            out.push(method_of(body, s).map_or("?", |m| m.name()).to_string());
            for l in self.lets.iter().filter(|l| l.init == s) {
                out.push(format!("let {}", body.locals[l.local].name));
            }
        }
        for l in self.lets.iter().filter(|l| !self.stages.contains(&l.init)) {
            out.insert(1, format!("let {}", body.locals[l.local].name));
        }
        out.push(match self.consumer {
            Consumer::Method(e) => method_of(body, e).map_or("?", |m| m.name()).to_string(),
            Consumer::For(..) => "for".to_string(),
        });
        out
    }
}

fn method_of(body: &Body, e: ExprId) -> Option<Method> {
    match &body[e].kind {
        ExprKind::Method { method, .. } => Some(*method),
        _ => None,
    }
}

/// Whether `a`, argument `i` of a call of `method`, is a capturing lambda
/// written as a function parameter the method table declares `fn(..)`:
/// such a closure is dead once the call returns, so it lives in the
/// caller's frame (see `Plan::frame_lambdas`). The interpreter asks too, so
/// both backends count the same heap blocks.
pub fn frame_lambda_arg(body: &Body, method: Method, i: usize, a: ExprId) -> bool {
    matches!(
        method.def().params.get(i),
        Some(crate::methods::Sig::Fn(..))
    ) && matches!(&body[a].kind, ExprKind::Lambda { captures, .. } if !captures.is_empty())
}

/// Every chain of one body.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub chains: Vec<Chain>,
    /// Consumer method expression -> chain.
    by_consumer: HashMap<ExprId, usize>,
    /// `for` statement -> chain.
    by_for: HashMap<StmtId, usize>,
    /// A list a fused chain never builds -> chain.
    unbuilt: HashMap<ExprId, usize>,
    /// Lambdas with captures written as a method's function argument (a
    /// parameter the method table declares `fn(..)`, as `map`'s or
    /// `filter`'s; not an element, as `fns.push(|x| ..)`'s) -> the method.
    /// A method only calls its function arguments, during the call, and
    /// keeps nothing of them (its result holds what the calls return,
    /// never the function), so such a closure is dead once the call
    /// returns: the native backend builds it in the caller's frame, not in
    /// the heap, fused or not.
    frame_lambdas: HashMap<ExprId, Method>,
    /// Lambdas written as a method's function argument whose body the
    /// native backend lowers in place of each call (no closure, no
    /// indirect call): calling one can do nothing but compute and print,
    /// so no trap call chain can show its frame, and its body has no
    /// `return` (which would leave the lambda only).
    inline_lambdas: HashSet<ExprId>,
    /// `enumerate`/`zip` stages of fused chains whose tuples are never
    /// built -> the lambda that receives them: it is lowered in place and
    /// only reads their fields (`p.0`, `p.1`), so its parameter is bound
    /// to the two components. The interpreter asks too (its tuples there
    /// are no heap blocks), so both backends count the same blocks.
    unbuilt_tuples: HashMap<ExprId, ExprId>,
    /// The lambdas of `unbuilt_tuples` -> their parameter bound to the
    /// components.
    tuple_params: HashMap<ExprId, LocalId>,
    /// The `let`s fused chains read through (their inits never run there).
    let_stmts: HashMap<StmtId, usize>,
    let_locals: HashMap<LocalId, usize>,
}

impl Plan {
    /// The plan of function `f` (effects: [`Effects::of`] the program).
    pub fn of(program: &Program, effects: &Effects, f: crate::FnId) -> Plan {
        Plan::body(program.body(f), effects)
    }

    pub fn body(body: &Body, effects: &Effects) -> Plan {
        let mut plan = Plan::default();
        let lets = Lets::of(body);
        let find_chain =
            |body: &Body, effects: &Effects, c: Consumer| find_chain(body, effects, &lets, c);
        let collects = |e: ExprId| {
            matches!(
                method_of(body, e),
                Some(Method::ListMap | Method::ListFilter | Method::ListFlatMap)
            )
        };
        // Consumers that take elements, then `for`s, then the `map`s,
        // `filter`s and `flat_map`s that no fused chain has as a stage.
        for (e, _) in body.exprs.iter() {
            if !collects(e) {
                plan.add_found(find_chain(body, effects, Consumer::Method(e)));
            }
        }
        for (s, stmt) in body.stmts.iter() {
            if let StmtKind::For { body: b, .. } = &stmt.kind {
                plan.add_found(find_chain(body, effects, Consumer::For(s, *b)));
            }
        }
        // Outermost first, so that `s.words.map(f).filter(g)` is one chain
        // and not a chain that ends in `map` read by another.
        let collecting: Vec<ExprId> = body
            .exprs
            .iter()
            .map(|(e, _)| e)
            .filter(|&e| collects(e))
            .collect();
        for e in collecting.into_iter().rev() {
            if !plan.unbuilt.contains_key(&e) {
                plan.add_found(find_chain(body, effects, Consumer::Method(e)));
            }
        }
        for (_, ex) in body.exprs.iter() {
            if let ExprKind::Method { method, args, .. } = &ex.kind {
                for (i, (&a, param)) in args.iter().zip(method.def().params).enumerate() {
                    if !matches!(param, crate::methods::Sig::Fn(..)) {
                        continue;
                    }
                    if frame_lambda_arg(body, *method, i, a) {
                        plan.frame_lambdas.insert(a, *method);
                    }
                    if inlinable(body, effects, a) {
                        plan.inline_lambdas.insert(a);
                    }
                }
            }
        }
        plan.find_unbuilt_tuples(body);
        plan
    }

    /// For each fused chain's `enumerate`/`zip` stage: the part that
    /// receives its tuples (past `take`/`drop`, which pass them on
    /// untouched) is a `map` stage, or a `map`, `fold`, `any` or `all`
    /// consumer, whose lambda is lowered in place and only reads the
    /// tuple's fields. Anything else (a filter, which passes the tuple on;
    /// `find`, which returns it; a `for`) builds it.
    fn find_unbuilt_tuples(&mut self, body: &Body) {
        let mut found = Vec::new();
        for c in self.chains.iter().filter(|c| c.fused()) {
            for (i, &s) in c.stages.iter().enumerate() {
                if !matches!(
                    method_of(body, s),
                    Some(Method::ListEnumerate | Method::ListZip)
                ) {
                    continue;
                }
                let next = c.stages[i + 1..]
                    .iter()
                    .copied()
                    .find(|&x| {
                        !matches!(
                            method_of(body, x),
                            Some(Method::ListTake | Method::ListDrop)
                        )
                    })
                    .or(match c.consumer {
                        Consumer::Method(e) => Some(e),
                        Consumer::For(..) => None,
                    });
                let Some(next) = next else { continue };
                let ExprKind::Method { method, args, .. } = &body[next].kind else {
                    continue;
                };
                let (arg, param) = match method {
                    Method::ListMap | Method::ListAny | Method::ListAll => (args.first(), 0),
                    Method::ListFold => (args.get(1), 1),
                    _ => continue,
                };
                let Some(&lam) = arg else { continue };
                if !self.inline_lambdas.contains(&lam) {
                    continue;
                }
                let ExprKind::Lambda {
                    params, body: lb, ..
                } = &body[lam].kind
                else {
                    continue;
                };
                let Some(&p) = params.get(param) else {
                    continue;
                };
                if fields_only(body, *lb, p) {
                    found.push((s, lam, p));
                }
            }
        }
        for (s, lam, p) in found {
            self.unbuilt_tuples.insert(s, lam);
            self.tuple_params.insert(lam, p);
        }
    }

    /// The lambda that receives the tuples `enumerate`/`zip` stage `e`
    /// never builds, when it never builds them.
    pub fn unbuilt_tuples(&self, e: ExprId) -> Option<ExprId> {
        self.unbuilt_tuples.get(&e).copied()
    }

    /// The parameter of lambda `e` bound to the components of a tuple
    /// that is never built (see `unbuilt_tuples`).
    pub fn tuple_param(&self, e: ExprId) -> Option<LocalId> {
        self.tuple_params.get(&e).copied()
    }

    /// The method whose function argument the capturing lambda `e` is,
    /// when it is one: its closure lives in the caller's frame (see
    /// `frame_lambdas`).
    pub fn frame_lambda(&self, e: ExprId) -> Option<Method> {
        self.frame_lambdas.get(&e).copied()
    }

    /// Whether the lambda `e` (a method's function argument) is lowered in
    /// place of each of its calls (see `inline_lambdas`).
    pub fn inline_lambda(&self, e: ExprId) -> bool {
        self.inline_lambdas.contains(&e)
    }

    fn add_found(&mut self, chain: Option<Chain>) {
        if let Some(c) = chain {
            self.add(c);
        }
    }

    fn add(&mut self, chain: Chain) {
        let i = self.chains.len();
        match chain.consumer {
            Consumer::Method(e) => {
                self.by_consumer.insert(e, i);
            }
            Consumer::For(s, _) => {
                self.by_for.insert(s, i);
            }
        }
        if chain.fused() {
            for e in chain.unbuilt() {
                self.unbuilt.insert(e, i);
            }
            for l in &chain.lets {
                self.let_stmts.insert(l.stmt, i);
                self.let_locals.insert(l.local, i);
            }
        }
        self.chains.push(chain);
    }

    /// The fused chain method `e` consumes.
    pub fn fused_consumer(&self, e: ExprId) -> Option<&Chain> {
        let c = &self.chains[*self.by_consumer.get(&e)?];
        c.fused().then_some(c)
    }

    /// The fused chain `for` statement `s` consumes.
    pub fn fused_for(&self, s: StmtId) -> Option<&Chain> {
        let c = &self.chains[*self.by_for.get(&s)?];
        c.fused().then_some(c)
    }

    /// The fused chain that never builds list `e`.
    pub fn unbuilt(&self, e: ExprId) -> Option<&Chain> {
        self.unbuilt.get(&e).map(|&i| &self.chains[i])
    }

    /// The fused chain that reads through `let` statement `s` (its init
    /// runs where the chain is, not at the `let`).
    pub fn let_fused(&self, s: StmtId) -> Option<&Chain> {
        self.let_stmts.get(&s).map(|&i| &self.chains[i])
    }

    /// The fused chain that reads through the `let` of local `l`.
    pub fn let_fused_local(&self, l: LocalId) -> Option<(&Chain, &LetLink)> {
        let c = &self.chains[*self.let_locals.get(&l)?];
        Some((c, c.lets.iter().find(|k| k.local == l)?))
    }

    /// The chain (fused or not) method `e` consumes.
    pub fn chain_of_consumer(&self, e: ExprId) -> Option<&Chain> {
        self.by_consumer.get(&e).map(|&i| &self.chains[i])
    }
}

/// Whether `m` can be a stage (its list is only read by the next part).
fn is_stage(m: Method) -> bool {
    use Method::*;
    matches!(
        m,
        ListMap | ListFilter | ListEnumerate | ListZip | ListTake | ListDrop
    )
}

/// Whether consumer `m` stops before the last element when it can.
fn consumer_cuts(m: Method) -> bool {
    use Method::*;
    matches!(m, ListAny | ListAll | ListFind | ListContains)
}

/// Whether `m` takes a chain's elements one at a time.
fn is_consumer(m: Method) -> bool {
    use Method::*;
    matches!(
        m,
        ListLen
            | ListIsEmpty
            | ListSum
            | ListMin
            | ListMax
            | ListJoin
            | ListCounts
            | ListFold
            | ListAny
            | ListAll
            | ListFind
            | ListContains
    )
}

/// Whether lambda `e` can be lowered in place of its calls: it only
/// computes (or prints), so no trap's call chain would miss its frame, and
/// it has no `return`.
fn inlinable(body: &Body, effects: &Effects, e: ExprId) -> bool {
    let ExprKind::Lambda { body: b, .. } = &body[e].kind else {
        return false;
    };
    effects.call_past_prints(body, e).is_none() && !leaves(body, *b, false)
}

/// Whether a `for` body can leave the loop early.
fn breaks(body: &Body, e: ExprId) -> bool {
    leaves(body, e, true)
}

/// Whether `e` has a `return` (or, with `breaks`, a `break`) outside the
/// lambdas in it.
fn leaves(body: &Body, e: ExprId, breaks: bool) -> bool {
    let mut found = false;
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &body[x].kind {
            ExprKind::Return(_) => found = true,
            ExprKind::Break if breaks => found = true,
            // A lambda's return leaves the lambda only.
            ExprKind::Lambda { .. } => continue,
            ExprKind::Block { stmts, tail } => {
                for s in stmts {
                    match &body[*s].kind {
                        StmtKind::Let { init, .. } | StmtKind::Var { init, .. } => {
                            stack.push(*init)
                        }
                        StmtKind::Assign { value, .. } => stack.push(*value),
                        StmtKind::Expr(x) => stack.push(*x),
                        StmtKind::For { iter, body, .. } => stack.extend([*iter, *body]),
                        StmtKind::While { cond, body } => stack.extend([*cond, *body]),
                        StmtKind::Drop(_) | StmtKind::Clear { .. } => {}
                    }
                }
                stack.extend(*tail);
            }
            k => stack.extend(crate::visit::children(k)),
        }
    }
    found
}

/// Whether an argument needs no temporary of its own: it makes no list or
/// string block (a name, a literal, a lambda, or a value of another type).
fn arg_is_plain(body: &Body, a: ExprId) -> bool {
    if !matches!(body[a].ty, Ty::List(_) | Ty::Str) {
        return true;
    }
    matches!(
        body[a].kind,
        ExprKind::Local(_) | ExprKind::Lit(_) | ExprKind::Field { .. }
    )
}

/// The chain `consumer` ends, if it is one.
fn find_chain(body: &Body, effects: &Effects, lets: &Lets, consumer: Consumer) -> Option<Chain> {
    let (top, cm) = match consumer {
        Consumer::Method(e) => match &body[e].kind {
            ExprKind::Method {
                method, receiver, ..
            } => (*receiver, Some(*method)),
            _ => return None,
        },
        Consumer::For(s, _) => match &body[s].kind {
            StmtKind::For { iter, .. } => (*iter, None),
            _ => return None,
        },
    };
    // Walk down the stages to the source, through the `let`s that may be
    // read through; `cuts[i]`: how many stages were walked before link i.
    let mut stages = Vec::new();
    let mut links: Vec<LetLink> = Vec::new();
    let mut cuts: Vec<usize> = Vec::new();
    let mut let_refused = None;
    let mut at = top;
    loop {
        match &body[at].kind {
            ExprKind::Method {
                method, receiver, ..
            } if is_stage(*method) && stages.len() < 64 => {
                stages.push(at);
                at = *receiver;
            }
            ExprKind::Local(l) if links.len() < 16 => match lets.link(body, effects, *l, at) {
                Some(Ok(link)) => {
                    cuts.push(stages.len());
                    links.push(link);
                    at = link.init;
                }
                Some(Err(why)) => {
                    let_refused = Some((*l, why));
                    break;
                }
                None => break,
            },
            _ => break,
        }
    }
    // A list source read through a `let` must be a name (or a field of
    // one): it is read where the chain runs.
    if let Some(last) = links.last() {
        if source_kind(body, at) == SourceKind::List && !plain_source(body, at) {
            let_refused = Some((last.local, LetRefusal::SourceMade { source: at }));
            at = last.use_;
            stages.truncate(cuts.pop().unwrap_or(0));
            links.pop();
        }
    }
    // Read through as many `let`s as the verdict allows, dropping the
    // innermost one at a time.
    loop {
        let mut ss = stages.clone();
        ss.reverse();
        let chain = make_chain(body, effects, consumer, cm, ss, at, links.clone());
        let Some(last) = links.last().copied() else {
            return match chain {
                Some(mut c) => {
                    c.let_refused = let_refused;
                    Some(c)
                }
                // No chain of its own: a source whose `let` could have been
                // read through says why it was not.
                None => {
                    let (local, why) = let_refused?;
                    // A name read twice is no pipeline anyone wrote.
                    if matches!(why, LetRefusal::UsedAgain { .. }) {
                        return None;
                    }
                    let consumes = cm.is_none_or(is_consumer);
                    if !stages.is_empty() || !consumes || source_kind(body, at) != SourceKind::List
                    {
                        return None;
                    }
                    Some(Chain {
                        consumer,
                        stages: Vec::new(),
                        source: at,
                        kind: SourceKind::List,
                        zip_ranges: Vec::new(),
                        lets: Vec::new(),
                        let_refused: Some((local, why)),
                        verdict: Verdict::Refused(Refusal::Let { local }),
                    })
                }
            };
        };
        match chain {
            Some(mut c) if c.fused() => {
                c.let_refused = let_refused;
                return Some(c);
            }
            Some(c) => {
                if let Verdict::Refused(r) = c.verdict {
                    let_refused = Some((last.local, LetRefusal::Chain(r)));
                }
            }
            None => {
                let_refused = Some((last.local, LetRefusal::SourceMade { source: at }));
            }
        }
        links.pop();
        at = last.use_;
        stages.truncate(cuts.pop().unwrap_or(0));
    }
}

fn source_kind(body: &Body, at: ExprId) -> SourceKind {
    match &body[at].kind {
        ExprKind::Range { .. } => SourceKind::Range,
        ExprKind::Method { method, .. } if crate::methods::is_piece_source(*method) => {
            SourceKind::Pieces(*method)
        }
        _ => SourceKind::List,
    }
}

/// A name, or a field of one (to any depth).
fn plain_source(body: &Body, mut at: ExprId) -> bool {
    loop {
        match &body[at].kind {
            ExprKind::Local(_) => return true,
            ExprKind::Field { base, .. } => at = *base,
            _ => return false,
        }
    }
}

/// The chain of `stages` (source first) over `at`, judged; None when the
/// parts make no chain.
fn make_chain(
    body: &Body,
    effects: &Effects,
    consumer: Consumer,
    cm: Option<Method>,
    stages: Vec<ExprId>,
    at: ExprId,
    lets: Vec<LetLink>,
) -> Option<Chain> {
    let mut lets = lets;
    lets.reverse();
    let kind = source_kind(body, at);
    let collect = matches!(
        cm,
        Some(Method::ListMap | Method::ListFilter | Method::ListFlatMap)
    );
    match cm {
        // map and filter build their list into a buffer of the source's
        // length (no stage adds elements); flat_map only straight off a
        // range (the range is not built).
        Some(Method::ListFlatMap) if !stages.is_empty() || kind != SourceKind::Range => {
            return None;
        }
        // A collecting chain does not read through a `let` (yet).
        Some(_) if collect && !lets.is_empty() => return None,
        Some(_) if collect => {}
        Some(m) if !is_consumer(m) => return None,
        _ => {}
    }
    if stages.is_empty() && kind == SourceKind::List {
        return None;
    }
    // A `for` over a range is a loop over integers already.
    if cm.is_none() && stages.is_empty() && kind == SourceKind::Range && lets.is_empty() {
        return None;
    }
    // A range or piece source behind a `let` must be plain too: its parts
    // are evaluated where the chain runs.
    if !lets.is_empty() && !source_parts_plain(body, at) {
        return None;
    }
    let verdict = match judge(body, effects, consumer, &stages) {
        Some(r) => Verdict::Refused(r),
        None => Verdict::Fused,
    };
    let zip_ranges = stages
        .iter()
        .filter_map(|&s| match &body[s].kind {
            ExprKind::Method {
                method: Method::ListZip,
                args,
                ..
            } => args
                .first()
                .copied()
                .filter(|a| matches!(body[*a].kind, ExprKind::Range { .. })),
            _ => None,
        })
        .collect();
    Some(Chain {
        consumer,
        stages,
        source: at,
        kind,
        zip_ranges,
        lets,
        let_refused: None,
        verdict,
    })
}

/// Whether a source's own parts (a piece source's string and separator)
/// make no list or string of their own.
fn source_parts_plain(body: &Body, at: ExprId) -> bool {
    match &body[at].kind {
        ExprKind::Method { receiver, args, .. } => {
            arg_is_plain(body, *receiver) && args.iter().all(|a| arg_is_plain(body, *a))
        }
        _ => true,
    }
}

/// Where an expression's value goes: into a parent expression, or a
/// statement (`index`) or the tail of a block.
#[derive(Clone, Copy)]
enum Up {
    Expr(ExprId),
    Stmt(ExprId, usize),
    Tail(ExprId),
}

/// What reading through a `let` needs to know of a body.
#[derive(Default)]
struct Lets {
    /// Each local a `let` binds by name: the statement, its block, its
    /// index there, and the init.
    decl: HashMap<LocalId, (StmtId, ExprId, usize, ExprId)>,
    /// How many times each local is named.
    uses: HashMap<LocalId, usize>,
    parent: HashMap<ExprId, Up>,
}

impl Lets {
    fn of(body: &Body) -> Lets {
        let mut lets = Lets::default();
        for (e, ex) in body.exprs.iter() {
            match &ex.kind {
                ExprKind::Block { stmts, tail } => {
                    for (i, &s) in stmts.iter().enumerate() {
                        for c in crate::visit::stmt_children(&body[s].kind) {
                            lets.parent.insert(c, Up::Stmt(e, i));
                        }
                        if let StmtKind::Let { pat, init } = &body[s].kind {
                            if let PatKind::Bind(l) = body.pats[*pat].kind {
                                lets.decl.insert(l, (s, e, i, *init));
                            }
                        }
                    }
                    if let Some(t) = tail {
                        lets.parent.insert(*t, Up::Tail(e));
                    }
                }
                k => {
                    if let ExprKind::Local(l) = k {
                        *lets.uses.entry(*l).or_default() += 1;
                    }
                    for c in crate::visit::children(k) {
                        lets.parent.insert(c, Up::Expr(e));
                    }
                }
            }
        }
        lets
    }

    /// The link through the `let` of `l`, whose use `u` is the source of
    /// a chain: None when the init could not be a chain's earlier part (a
    /// stage, a range or a piece source), else the link or why not.
    fn link(
        &self,
        body: &Body,
        effects: &Effects,
        l: LocalId,
        u: ExprId,
    ) -> Option<Result<LetLink, LetRefusal>> {
        let &(stmt, block, k, init) = self.decl.get(&l)?;
        // The ownership pass's temporaries are its own: it frees them.
        if body.locals[l].kind != crate::LocalKind::Let {
            return None;
        }
        let candidate = match &body[init].kind {
            ExprKind::Method { method, .. } => {
                is_stage(*method) || crate::methods::is_piece_source(*method)
            }
            ExprKind::Range { .. } => true,
            _ => false,
        };
        if !candidate {
            return None;
        }
        Some(self.check(body, effects, l, u, (stmt, block, k, init)))
    }

    fn check(
        &self,
        body: &Body,
        effects: &Effects,
        l: LocalId,
        u: ExprId,
        (stmt, block, k, init): (StmtId, ExprId, usize, ExprId),
    ) -> Result<LetLink, LetRefusal> {
        let uses = self.uses.get(&l).copied().unwrap_or(0);
        if uses != 1 {
            return Err(LetRefusal::UsedAgain { uses });
        }
        // Up from the use to the `let`'s block, collecting what runs
        // between the two.
        let mut exprs: Vec<ExprId> = Vec::new();
        let mut stmts: Vec<StmtId> = Vec::new();
        let mut child = u;
        let use_index;
        loop {
            let not_once = Err(LetRefusal::NotOnce { at: child });
            match self.parent.get(&child).copied() {
                None => return not_once,
                Some(Up::Expr(p)) => {
                    let kind = &body[p].kind;
                    let once = match kind {
                        ExprKind::Lambda { .. } => false,
                        ExprKind::If { cond, .. } => *cond == child,
                        ExprKind::Match { scrutinee, .. } => *scrutinee == child,
                        ExprKind::Binary {
                            op: BinOp::And | BinOp::Or,
                            rhs,
                            ..
                        } => *rhs != child,
                        _ => true,
                    };
                    if !once {
                        return Err(LetRefusal::NotOnce { at: p });
                    }
                    for c in crate::visit::children(kind) {
                        if c == child {
                            break;
                        }
                        exprs.push(c);
                    }
                    child = p;
                }
                Some(up @ (Up::Stmt(b, _) | Up::Tail(b))) => {
                    let ExprKind::Block { stmts: ss, .. } = &body[b].kind else {
                        return not_once;
                    };
                    let i = match up {
                        Up::Stmt(_, i) => i,
                        _ => ss.len(),
                    };
                    if let Some(&s) = ss.get(i) {
                        match &body[s].kind {
                            StmtKind::For { body: fb, .. } if *fb == child => return not_once,
                            StmtKind::While { .. } => return not_once,
                            _ => {}
                        }
                    }
                    if b == block {
                        if i <= k {
                            return not_once;
                        }
                        stmts.extend(ss[k + 1..i].iter().copied());
                        use_index = i;
                        break;
                    }
                    stmts.extend(ss[..i].iter().copied());
                    child = b;
                }
            }
        }
        let link = LetLink {
            stmt,
            local: l,
            init,
            use_: u,
            block,
            decl_index: k,
            use_index,
        };
        // The locals the init reads must keep their values up to the use
        // (and through the use's statement, where a `for` body runs).
        let ExprKind::Block { stmts: ss, tail } = &body[block].kind else {
            return Err(LetRefusal::NotOnce { at: u });
        };
        let read = locals_in(body, init);
        let upto = ss[k + 1..].iter().take(use_index - k);
        for &s in upto {
            if let Some((x, at)) = assigns_in_stmt(body, s).find(|(x, _)| read.contains(x)) {
                return Err(LetRefusal::AssignedBetween { local: x, at });
            }
        }
        if use_index == ss.len() {
            if let Some((x, at)) = tail
                .iter()
                .flat_map(|t| assigns_in(body, *t))
                .find(|(x, _)| read.contains(x))
            {
                return Err(LetRefusal::AssignedBetween { local: x, at });
            }
        }
        // What runs in between against what the init may do.
        let parts: Vec<ExprId> = exprs
            .iter()
            .copied()
            .chain(
                stmts
                    .iter()
                    .flat_map(|s| crate::visit::stmt_children(&body[*s].kind)),
            )
            .collect();
        if let Some(init_eff) = effects.expr(body, init) {
            let between = stmts
                .iter()
                .find_map(|&s| match &body[s].kind {
                    StmtKind::While { cond, .. } => Some(Effect {
                        kind: crate::effects::EffectKind::Diverges,
                        at: *cond,
                        via: None,
                    }),
                    _ => None,
                })
                .into_iter()
                .chain(parts.iter().filter_map(|&x| effects.expr(body, x)))
                .next();
            if let Some(between) = between {
                return Err(LetRefusal::EffectBetween {
                    init: init_eff,
                    between,
                });
            }
            if let Some(at) = parts.iter().find_map(|&x| jumps(body, x)) {
                return Err(LetRefusal::LeavesBetween { init: init_eff, at });
            }
        }
        let init_change = effects.first_change(body, init);
        let init_sees = effects.first_map_seen(body, init).is_some() || init_change.is_some();
        let between_change = parts.iter().find_map(|&x| effects.first_change(body, x));
        let between_sees = between_change.is_some()
            || parts
                .iter()
                .any(|&x| effects.first_map_seen(body, x).is_some());
        if let (Some(c), true) = (init_change, between_sees) {
            return Err(LetRefusal::MapBetween { changes: c });
        }
        if let (Some(c), true) = (between_change, init_sees) {
            return Err(LetRefusal::MapBetween { changes: c });
        }
        Ok(link)
    }
}

/// Whether `e` uses local `p` only as the base of field reads (`p.0`)
/// or as what a tuple pattern takes apart (`let (a, b) = p`, `match p
/// { (a, b) => .. }`, where each arm's pattern is a tuple pattern or
/// `_`): no other read (a call's argument, a stored or returned value),
/// no capture, no assignment, no drop.
fn fields_only(body: &Body, e: ExprId, p: LocalId) -> bool {
    let is_p = |x: ExprId| matches!(body[x].kind, ExprKind::Local(l) if l == p);
    let tuple_pat = |q: PatId| matches!(body.pats[q].kind, PatKind::Tuple(_) | PatKind::Wild);
    let mut read = HashSet::new();
    let mut locals = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &body[x].kind {
            ExprKind::Field { base, .. } if is_p(*base) => {
                read.insert(*base);
            }
            ExprKind::Match { scrutinee, arms }
                if is_p(*scrutinee) && arms.iter().all(|a| tuple_pat(a.pat)) =>
            {
                read.insert(*scrutinee);
            }
            ExprKind::Local(l) if *l == p => locals.push(x),
            ExprKind::Lambda { captures, .. } if captures.contains(&p) => return false,
            ExprKind::Block { stmts, .. } => {
                for s in stmts {
                    match &body[*s].kind {
                        StmtKind::Let { pat, init } if is_p(*init) && tuple_pat(*pat) => {
                            read.insert(*init);
                        }
                        StmtKind::Assign { local, .. } if *local == p => return false,
                        StmtKind::Drop(d) if d.local == p => return false,
                        StmtKind::Clear { local, .. } if *local == p => return false,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        push_all(body, x, &mut stack);
    }
    locals.iter().all(|x| read.contains(x))
}

/// Every local `e` names (lambda captures included).
fn locals_in(body: &Body, e: ExprId) -> HashSet<LocalId> {
    let mut out = HashSet::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &body[x].kind {
            ExprKind::Local(l) => {
                out.insert(*l);
            }
            ExprKind::Lambda { captures, .. } => out.extend(captures.iter().copied()),
            _ => {}
        }
        push_all(body, x, &mut stack);
    }
    out
}

/// `x`'s children, a block's statements' included.
fn push_all(body: &Body, x: ExprId, stack: &mut Vec<ExprId>) {
    match &body[x].kind {
        ExprKind::Block { stmts, tail } => {
            for s in stmts {
                stack.extend(crate::visit::stmt_children(&body[*s].kind));
            }
            stack.extend(*tail);
        }
        k => stack.extend(crate::visit::children(k)),
    }
}

/// The locals statement `s` assigns (anywhere in it), with the assigning
/// statement.
fn assigns_in_stmt(body: &Body, s: StmtId) -> impl Iterator<Item = (LocalId, StmtId)> {
    let own = match &body[s].kind {
        StmtKind::Assign { local, .. } => Some((*local, s)),
        _ => None,
    };
    let inner: Vec<(LocalId, StmtId)> = crate::visit::stmt_children(&body[s].kind)
        .into_iter()
        .flat_map(|x| assigns_in(body, x))
        .collect();
    own.into_iter().chain(inner)
}

/// The locals assigned anywhere in `e`, with the assigning statement.
fn assigns_in(body: &Body, e: ExprId) -> Vec<(LocalId, StmtId)> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let ExprKind::Block { stmts, .. } = &body[x].kind {
            for &s in stmts {
                if let StmtKind::Assign { local, .. } = &body[s].kind {
                    out.push((*local, s));
                }
            }
        }
        push_all(body, x, &mut stack);
    }
    out
}

/// The first `return`, `break` or `continue` of `e` outside the lambdas
/// in it.
fn jumps(body: &Body, e: ExprId) -> Option<ExprId> {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &body[x].kind {
            ExprKind::Return(_) | ExprKind::Break | ExprKind::Continue => return Some(x),
            ExprKind::Lambda { .. } => continue,
            _ => push_all(body, x, &mut stack),
        }
    }
    None
}

/// Why the chain must not be fused, if it must not.
fn judge(body: &Body, effects: &Effects, consumer: Consumer, stages: &[ExprId]) -> Option<Refusal> {
    let (consumer_method, for_body) = match consumer {
        Consumer::Method(e) => (Some(e), None),
        Consumer::For(_, b) => (None, Some(b)),
    };
    let methods: Vec<ExprId> = stages.iter().copied().chain(consumer_method).collect();
    judge_effects(body, effects, consumer, stages)
        .or_else(|| judge_maps(body, effects, &methods, for_body))
}

/// A part of a chain as maps go: where it may change one, and whether it
/// may see one.
struct MapUse {
    part: (ExprId, Part),
    /// Its stage's place in the chain (the consumer after the stages).
    pos: usize,
    changes: Option<ExprId>,
    sees: bool,
}

impl MapUse {
    fn each(&self) -> bool {
        self.part.1 != Part::Args
    }

    /// Whether fusing changes the order of `self`'s and `o`'s runs: two
    /// per-element parts interleave, and the arguments of a later stage
    /// run before an earlier stage's per-element part instead of after.
    fn reordered(&self, o: &MapUse) -> bool {
        match (self.each(), o.each()) {
            (true, true) => self.pos != o.pos,
            (true, false) => o.pos > self.pos,
            (false, true) => self.pos > o.pos,
            (false, false) => false,
        }
    }
}

/// A part that may change a map and another part that may see one, run
/// in a different order fused than unfused: maps change in place, so the
/// second could see other contents.
/// `methods`: the stages and the consumer's method, source to consumer;
/// `for_body`: the consuming `for`'s body.
fn judge_maps(
    body: &Body,
    effects: &Effects,
    methods: &[ExprId],
    for_body: Option<ExprId>,
) -> Option<Refusal> {
    let mut uses: Vec<MapUse> = Vec::new();
    for (pos, &s) in methods.iter().enumerate() {
        let ExprKind::Method { method, args, .. } = &body[s].kind else {
            continue;
        };
        for (&a, p) in args.iter().zip(method.def().params) {
            let (part, changes, sees) = if !matches!(p, crate::methods::Sig::Fn(..)) {
                let seen = effects.first_map_seen(body, a).is_some();
                (Part::Args, effects.first_change(body, a), seen)
            } else {
                match &body[a].kind {
                    ExprKind::Lambda { body: b, .. } => {
                        let seen = effects.first_map_seen(body, *b).is_some();
                        (Part::Lambda, effects.first_change(body, *b), seen)
                    }
                    // A function sees maps only through its parameters.
                    ExprKind::Func(g) => {
                        let seen = matches!(&body[a].ty, Ty::Fn(ps, _) if ps.iter().any(|t| effects.holds_map(t)));
                        (Part::Lambda, effects.changes_maps(*g).then_some(a), seen)
                    }
                    _ => (Part::Lambda, Some(a), true),
                }
            };
            uses.push(MapUse {
                part: (s, part),
                pos,
                changes,
                sees,
            });
        }
    }
    if let Some(b) = for_body {
        uses.push(MapUse {
            part: (b, Part::Body),
            pos: methods.len(),
            changes: effects.first_change(body, b),
            sees: effects.first_map_seen(body, b).is_some(),
        });
    }
    for u in &uses {
        let Some(at) = u.changes else { continue };
        let other = uses
            .iter()
            .find(|o| u.reordered(o) && (o.sees || o.changes.is_some()));
        if let Some(o) = other {
            return Some(Refusal::MapShared {
                changes: u.part,
                at,
                other: o.part,
            });
        }
    }
    None
}

/// Why the chain must not be fused for what its parts print, trap or
/// call, if it must not.
fn judge_effects(
    body: &Body,
    effects: &Effects,
    consumer: Consumer,
    stages: &[ExprId],
) -> Option<Refusal> {
    // The parts in unfused order, and where the loop may stop.
    let mut points: Vec<Point> = Vec::new();
    let mut lambdas_before: Vec<Point> = Vec::new();
    let parts = stages.iter().map(|&s| (s, false)).chain(match consumer {
        Consumer::Method(e) => Some((e, true)),
        Consumer::For(..) => None,
    });
    for (s, is_consumer) in parts {
        let ExprKind::Method { method, args, .. } = &body[s].kind else {
            continue;
        };
        let m = *method;
        // A stage that stops the loop early: everything before it must be
        // pure (it would otherwise run over every element first).
        let cuts =
            matches!(m, Method::ListTake | Method::ListZip) || (is_consumer && consumer_cuts(m));
        if cuts {
            if let Some(p) = lambdas_before.first() {
                return Some(Refusal::EffectBeforeCut { effect: *p, cut: s });
            }
        }
        let mut arg_effect = None;
        let mut lambda_effect = None;
        for (i, &a) in args.iter().enumerate() {
            let is_fn = matches!(body[a].ty, Ty::Fn(..));
            if m == Method::ListZip && !is_fn {
                let ok = matches!(body[a].kind, ExprKind::Range { .. } | ExprKind::Local(_));
                if !ok {
                    return Some(Refusal::ZipOther { stage: s });
                }
                if let ExprKind::Range { lo, hi } = body[a].kind {
                    arg_effect = arg_effect
                        .or_else(|| effects.expr(body, lo))
                        .or_else(|| effects.expr(body, hi));
                    continue;
                }
            }
            if !arg_is_plain(body, a) {
                return Some(Refusal::ArgMadeHere { stage: s, arg: a });
            }
            arg_effect = arg_effect.or_else(|| effects.expr(body, a));
            if is_fn {
                lambda_effect = lambda_effect.or_else(|| effects.call(body, a));
            }
            // take/drop trap on a negative count.
            if matches!(m, Method::ListTake | Method::ListDrop) && i == 0 {
                let non_negative =
                    matches!(body[a].kind, ExprKind::Lit(crate::Lit::Int(n)) if n >= 0);
                if !non_negative && arg_effect.is_none() {
                    arg_effect = Some(Effect {
                        kind: crate::effects::EffectKind::Traps,
                        at: s,
                        via: None,
                    });
                }
            }
        }
        if let Some(effect) = arg_effect {
            points.push(Point {
                at: s,
                part: Part::Args,
                effect,
            });
        }
        if let Some(effect) = lambda_effect {
            let p = Point {
                at: s,
                part: Part::Lambda,
                effect,
            };
            points.push(p);
            lambdas_before.push(p);
        }
    }
    if let Consumer::For(_, b) = consumer {
        if breaks(body, b) {
            if let Some(p) = lambdas_before.first() {
                return Some(Refusal::EffectBeforeCut { effect: *p, cut: b });
            }
        }
        if let Some(effect) = effects.expr(body, b) {
            points.push(Point {
                at: b,
                part: Part::Body,
                effect,
            });
        }
    }
    // Once a per-element part has an effect, no later part may have one
    // (arguments included: unfused they run after all of its calls).
    let first = points.iter().position(|p| p.part != Part::Args)?;
    points[first + 1..]
        .first()
        .map(|second| Refusal::TwoEffects {
            first: points[first],
            second: *second,
        })
}
