//! What evaluating an expression may do besides computing its value:
//! print, trap, run forever, or call a function nobody can see. Pipeline
//! fusion (`crate::fusion`) reorders the calls of a chain's lambdas; it may
//! only do so where at most one of them does any of this.
//!
//! A function's effect is the first effect of its body, with calls looked
//! through; a function that can reach itself through calls may recurse
//! without end (or overflow the stack), so it `Diverges`. A lambda's body
//! counts where the lambda is called (as a method's closure argument), not
//! where it is made. Running out of memory is a resource limit, not an
//! effect: a fused chain allocates less than the unfused one, never more.
//! Changing a map is not one either, but maps are shared and change in
//! place, so fusion asks apart where a part may change a map
//! ([`Effects::first_change`]) and where one may see a map
//! ([`Effects::first_map_seen`]).

use crate::methods::Sig;
use crate::{
    BinOp, Body, Builtin, Callee, ExprId, ExprKind, FnId, ItemTree, Method, Program, StmtKind, Ty,
    TypeDefKind, TypeId,
};
use la_arena::ArenaMap;

/// What an effect is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EffectKind {
    /// Writes output (`print`, `log`, `eprint`, a file) or reads input
    /// once (`read_stdin`, `read_lines`).
    Prints,
    /// May stop the program with a trap.
    Traps,
    /// May never return: a `while` loop or a call that can recurse.
    Diverges,
    /// Calls a function value whose code is not known here.
    CallsUnknown,
}

/// An effect and the expression of the walked body it comes from (`via`:
/// the function whose call has it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Effect {
    pub kind: EffectKind,
    pub at: ExprId,
    pub via: Option<FnId>,
}

/// The effect of every function of a program (`None`: none at all).
#[derive(Clone, Debug, Default)]
pub struct Effects {
    fns: ArenaMap<FnId, Found>,
    /// Per function: whether calling it may change a map (a put, remove
    /// or update in it or in a function it calls, or a call of a function
    /// value). Maps are shared and changed in place, so fusion must not
    /// reorder such a change against another part that sees maps.
    changes: ArenaMap<FnId, bool>,
    /// Per user type: whether its values may hold a map.
    holds: ArenaMap<TypeId, bool>,
}

/// A function's effect as found: its kind and the function it came through.
type Found = Option<(EffectKind, Option<FnId>)>;

/// A function's own effect and the functions its body calls.
struct Local {
    own: Option<Effect>,
    calls: Vec<(FnId, ExprId)>,
}

impl Effects {
    /// Every function's effect: a depth-first walk over the call graph
    /// (an explicit stack, so a deep call chain cannot overflow); a call
    /// back into a function still being walked closes a cycle.
    pub fn of(program: &Program) -> Effects {
        let n = program.bodies.len();
        let ids: Vec<FnId> = program.items.fns.iter().map(|(f, _)| f).collect();
        let mut local: Vec<Option<Local>> = (0..n).map(|_| None).collect();
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            Open,
            Done,
        }
        let mut state = vec![State::New; n];
        let mut out = Effects::default();
        let idx = |f: FnId| f.into_raw().into_u32() as usize;
        for &root in &ids {
            if state[idx(root)] != State::New {
                continue;
            }
            // (function, next call to look at, effect so far)
            let mut stack: Vec<(FnId, usize, Found)> = Vec::new();
            state[idx(root)] = State::Open;
            stack.push((root, 0, None));
            while let Some(top) = stack.last_mut() {
                let f = top.0;
                let l = local[idx(f)].get_or_insert_with(|| walk_fn(program, f));
                if top.2.is_none() {
                    top.2 = l.own.map(|e| (e.kind, e.via));
                }
                if let Some(&(g, _)) = l.calls.get(top.1) {
                    top.1 += 1;
                    match state.get(idx(g)).copied() {
                        Some(State::New) => {
                            state[idx(g)] = State::Open;
                            stack.push((g, 0, None));
                        }
                        Some(State::Open) => {
                            top.2 = Some((EffectKind::Diverges, Some(g)));
                        }
                        Some(State::Done) => {
                            if top.2.is_none() {
                                top.2 = out.get(g).map(|k| (k, Some(g)));
                            }
                        }
                        None => top.2 = Some((EffectKind::CallsUnknown, None)),
                    }
                    continue;
                }
                let (f, _, eff) = stack.pop().expect("the top is there");
                // Divergence wins over a milder effect found first: it is
                // what tells a cycle apart.
                out.fns.insert(f, eff);
                state[idx(f)] = State::Done;
                if let Some(parent) = stack.last_mut() {
                    match (parent.2, eff) {
                        (None, Some((k, _))) => parent.2 = Some((k, Some(f))),
                        (Some((pk, _)), Some((EffectKind::Diverges, _)))
                            if pk != EffectKind::Diverges =>
                        {
                            parent.2 = Some((EffectKind::Diverges, Some(f)))
                        }
                        _ => {}
                    }
                }
            }
        }
        out.changes = changes_maps(program);
        out.holds = types_holding_maps(&program.items);
        out
    }

    /// Whether calling `f` may change a map.
    pub fn changes_maps(&self, f: FnId) -> bool {
        self.changes.get(f).copied().unwrap_or(true)
    }

    /// The first expression of `e` (the bodies of lambdas in it included:
    /// a method may call them) that may change a map.
    pub fn first_change(&self, body: &Body, e: ExprId) -> Option<ExprId> {
        first_change(body, e, &|f| self.changes_maps(f), &mut Vec::new())
    }

    /// Whether a value of type `ty` may hold a map (a closure may capture
    /// one).
    pub fn holds_map(&self, ty: &Ty) -> bool {
        holds_map(&self.holds, ty)
    }

    /// The first expression of `e` (lambdas included) whose value may hold
    /// a map: where `e` may see one.
    pub fn first_map_seen(&self, body: &Body, e: ExprId) -> Option<ExprId> {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if self.holds_map(&body[x].ty) {
                return Some(x);
            }
            push_children(body, x, &mut stack);
        }
        None
    }

    /// The effect of calling `f`.
    pub fn get(&self, f: FnId) -> Option<EffectKind> {
        self.fns.get(f).copied().flatten().map(|(k, _)| k)
    }

    /// The first effect of evaluating `e` in `body`.
    pub fn expr(&self, body: &Body, e: ExprId) -> Option<Effect> {
        let mut w = Walk {
            body,
            fns: Some(self),
            calls: Vec::new(),
            past_prints: false,
        };
        w.expr(e)
    }

    /// The first effect of calling the function value `f` (a lambda, a
    /// function, anything else is unknown).
    pub fn call(&self, body: &Body, f: ExprId) -> Option<Effect> {
        self.call_walk(body, f, false)
    }

    /// The first effect of calling the function value `f` other than its
    /// own `print`, `log` and `eprint` (a called function that prints
    /// counts: what it does after its first print is not known here).
    pub fn call_past_prints(&self, body: &Body, f: ExprId) -> Option<Effect> {
        self.call_walk(body, f, true)
    }

    fn call_walk(&self, body: &Body, f: ExprId, past_prints: bool) -> Option<Effect> {
        let mut w = Walk {
            body,
            fns: Some(self),
            calls: Vec::new(),
            past_prints,
        };
        w.call_value(f, f)
    }
}

/// Pushes `x`'s child expressions (a block's statements' too) onto
/// `stack`, last first.
fn push_children(body: &Body, x: ExprId, stack: &mut Vec<ExprId>) {
    let mut kids = match &body[x].kind {
        ExprKind::Block { stmts, tail } => {
            let mut v: Vec<ExprId> = stmts
                .iter()
                .flat_map(|s| crate::visit::stmt_children(&body[*s].kind))
                .collect();
            v.extend(*tail);
            v
        }
        k => crate::visit::children(k),
    };
    kids.reverse();
    stack.extend(kids);
}

/// The first expression of `e` (lambdas' bodies included) that may change
/// a map: a put, remove or update, a call of a function `changes` says
/// may, or a call of a function value. Every function `e` calls or passes
/// to a method is added to `calls` (up to the first change).
fn first_change(
    body: &Body,
    e: ExprId,
    changes: &dyn Fn(FnId) -> bool,
    calls: &mut Vec<FnId>,
) -> Option<ExprId> {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        let hit = match &body[x].kind {
            ExprKind::PutOwnedKey { .. }
            | ExprKind::Call {
                callee: Callee::Value(_),
                ..
            } => true,
            ExprKind::Call {
                callee: Callee::Fn(f),
                ..
            } => {
                calls.push(*f);
                changes(*f)
            }
            ExprKind::Method { method, args, .. } => {
                matches!(
                    method,
                    Method::MapPut | Method::MapRemove | Method::MapUpdate
                ) || method
                    .def()
                    .params
                    .iter()
                    .zip(args)
                    .filter(|(p, _)| matches!(p, Sig::Fn(..)))
                    .any(|(_, a)| match &body[*a].kind {
                        // Walked below.
                        ExprKind::Lambda { .. } => false,
                        ExprKind::Func(g) => {
                            calls.push(*g);
                            changes(*g)
                        }
                        _ => true,
                    })
            }
            _ => false,
        };
        if hit {
            return Some(x);
        }
        push_children(body, x, &mut stack);
    }
    None
}

/// Per function, whether calling it may change a map: its own body may,
/// or a function it calls may (spread from callees to callers).
fn changes_maps(program: &Program) -> ArenaMap<FnId, bool> {
    let mut out: ArenaMap<FnId, bool> = ArenaMap::default();
    let mut callers: ArenaMap<FnId, Vec<FnId>> = ArenaMap::default();
    let mut work = Vec::new();
    for (f, _) in program.items.fns.iter() {
        let body = program.body(f);
        let mut calls = Vec::new();
        let own = body
            .root
            .and_then(|r| first_change(body, r, &|_| false, &mut calls))
            .is_some();
        out.insert(f, own);
        if own {
            work.push(f);
        }
        for g in calls {
            match callers.get_mut(g) {
                Some(v) => v.push(f),
                None => {
                    callers.insert(g, vec![f]);
                }
            }
        }
    }
    while let Some(g) = work.pop() {
        for &f in callers.get(g).map(Vec::as_slice).unwrap_or_default() {
            if out.get(f) == Some(&false) {
                out.insert(f, true);
                work.push(f);
            }
        }
    }
    out
}

/// Whether a value of type `ty` may hold a map, `holds` saying it of
/// user types (one not in it may).
fn holds_map(holds: &ArenaMap<TypeId, bool>, ty: &Ty) -> bool {
    match ty {
        Ty::Map(..) | Ty::Fn(..) | Ty::Error => true,
        Ty::List(t) | Ty::Option(t) => holds_map(holds, t),
        Ty::Tuple(ts) => ts.iter().any(|t| holds_map(holds, t)),
        Ty::Adt(id) => holds.get(*id).copied().unwrap_or(true),
        _ => false,
    }
}

/// Per user type, whether its values may hold a map (through fields, to
/// any depth): the least fixpoint, starting from none.
fn types_holding_maps(items: &ItemTree) -> ArenaMap<TypeId, bool> {
    let mut out: ArenaMap<TypeId, bool> = ArenaMap::default();
    for (t, _) in items.types.iter() {
        out.insert(t, false);
    }
    loop {
        let mut changed = false;
        for (t, def) in items.types.iter() {
            if out.get(t) == Some(&true) {
                continue;
            }
            let any = match &def.kind {
                TypeDefKind::Record { fields } => fields.iter().any(|(_, ty)| holds_map(&out, ty)),
                TypeDefKind::Sum { variants } => variants
                    .iter()
                    .any(|v| v.fields.iter().any(|ty| holds_map(&out, ty))),
            };
            if any {
                out.insert(t, true);
                changed = true;
            }
        }
        if !changed {
            return out;
        }
    }
}

fn walk_fn(program: &Program, f: FnId) -> Local {
    let body = program.body(f);
    let mut w = Walk {
        body,
        fns: None,
        calls: Vec::new(),
        past_prints: false,
    };
    let own = body.root.and_then(|r| w.expr(r));
    Local {
        own,
        calls: w.calls,
    }
}

/// One walk over a body. Without `fns` (while the functions' effects are
/// being found) calls of functions are collected instead of looked up.
struct Walk<'a> {
    body: &'a Body,
    fns: Option<&'a Effects>,
    calls: Vec<(FnId, ExprId)>,
    /// Whether the body's own prints are passed over (the walk goes on to
    /// the next effect).
    past_prints: bool,
}

/// Methods that trap on some receivers or arguments (docs/language.md's
/// trap table).
fn method_traps(m: Method) -> bool {
    use Method::*;
    matches!(
        m,
        ListFirst
            | ListLast
            | ListMin
            | ListMax
            | ListTake
            | ListDrop
            | StrByte
            | StrRepeat
            | StrTake
            | StrDrop
            | StrSlice
            | StrToInt
            | StrToF64
            | F64ToInt
            | OptUnwrap
            | ListSet
            | MapUpdate
    )
}

impl Walk<'_> {
    fn at(kind: EffectKind, at: ExprId) -> Option<Effect> {
        Some(Effect {
            kind,
            at,
            via: None,
        })
    }

    /// The effect of a call of `f` at `at`.
    fn call_fn(&mut self, f: FnId, at: ExprId) -> Option<Effect> {
        match self.fns {
            Some(fx) => fx.get(f).map(|kind| Effect {
                kind,
                at,
                via: Some(f),
            }),
            None => {
                self.calls.push((f, at));
                None
            }
        }
    }

    /// The effect of calling the function value `f` (from the call at `at`).
    fn call_value(&mut self, f: ExprId, at: ExprId) -> Option<Effect> {
        match &self.body[f].kind {
            ExprKind::Lambda { body, .. } => self.expr(*body),
            ExprKind::Func(g) => self.call_fn(*g, at),
            _ => Self::at(EffectKind::CallsUnknown, at),
        }
    }

    fn exprs(&mut self, es: impl IntoIterator<Item = ExprId>) -> Option<Effect> {
        es.into_iter().find_map(|x| self.expr(x))
    }

    fn expr(&mut self, e: ExprId) -> Option<Effect> {
        let body = self.body;
        let kind = &body[e].kind;
        match kind {
            ExprKind::Missing => return Self::at(EffectKind::Traps, e),
            // Made, not called: its body counts where it is called.
            ExprKind::Lambda { .. } => return None,
            ExprKind::Block { stmts, tail } => {
                for &s in stmts {
                    let eff = match &body[s].kind {
                        StmtKind::Let { init, .. } | StmtKind::Var { init, .. } => self.expr(*init),
                        StmtKind::Assign { value, .. } => self.expr(*value),
                        StmtKind::Expr(x) => self.expr(*x),
                        StmtKind::For { iter, body: b, .. } => {
                            // A `for` over a range never builds it.
                            let it = match &body[*iter].kind {
                                ExprKind::Range { lo, hi } => self.exprs([*lo, *hi]),
                                _ => self.expr(*iter),
                            };
                            it.or_else(|| self.expr(*b))
                        }
                        StmtKind::While { .. } => Self::at(EffectKind::Diverges, e),
                        StmtKind::Drop(_) | StmtKind::Clear { .. } => None,
                    };
                    if eff.is_some() {
                        return eff;
                    }
                }
                return tail.and_then(|t| self.expr(t));
            }
            _ => {}
        }
        if let Some(eff) = self.exprs(crate::visit::children(kind)) {
            return Some(eff);
        }
        match kind {
            ExprKind::Call { callee, .. } => match callee {
                Callee::Fn(f) => self.call_fn(*f, e),
                Callee::Builtin(b) => match b {
                    // Writing to stdout or stderr cannot fail visibly.
                    Builtin::Print | Builtin::Log | Builtin::Eprint if self.past_prints => None,
                    Builtin::Print
                    | Builtin::Log
                    | Builtin::Eprint
                    | Builtin::ReadStdin
                    | Builtin::ReadLines
                    | Builtin::WriteFile
                    | Builtin::AppendFile => Self::at(EffectKind::Prints, e),
                    // Ending the program is what a trap does.
                    Builtin::Trap | Builtin::Exit | Builtin::ReadFile => {
                        Self::at(EffectKind::Traps, e)
                    }
                    Builtin::EmptyMap | Builtin::Args => None,
                },
                Callee::Value(_) => Self::at(EffectKind::CallsUnknown, e),
            },
            ExprKind::Method { method, args, .. } => {
                if method_traps(*method) {
                    return Self::at(EffectKind::Traps, e);
                }
                // Closure arguments are called by the method.
                let def = method.def();
                for (p, &a) in def.params.iter().zip(args) {
                    if matches!(p, Sig::Fn(..)) {
                        if let Some(eff) = self.call_value(a, e) {
                            return Some(eff);
                        }
                    }
                }
                None
            }
            // A bad index traps, as the copying `set` does.
            ExprKind::Index { .. } | ExprKind::SetInPlace { .. } => Self::at(EffectKind::Traps, e),
            ExprKind::Binary {
                op: BinOp::Div | BinOp::Rem,
                rhs,
                ..
            } if body[e].ty == Ty::Int => match &body[*rhs].kind {
                ExprKind::Lit(crate::Lit::Int(d)) if *d != 0 => None,
                _ => Self::at(EffectKind::Traps, e),
            },
            // More than 2^32 elements traps.
            ExprKind::Range { .. } => Self::at(EffectKind::Traps, e),
            _ => None,
        }
    }
}
