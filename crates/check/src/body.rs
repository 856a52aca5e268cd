//! Body lowering: name resolution and type inference of one function.
//!
//! One pass over the AST allocates IR nodes with inference types and
//! unifies as it goes (so earlier statements inform later lambdas); a final
//! pass substitutes the solution into every node, reports what stayed
//! unknown, checks the deferred operator constraints and the exhaustiveness
//! of every `match`. A node whose type is `Error` never causes a further
//! diagnostic.

use std::collections::HashMap;

use ir::{
    BinOp, Body, BodySourceMap, Builtin, Callee, Ctor, ExprId, ExprKind, FnId, InterpPart,
    ItemTree, Lit, Local, LocalId, LocalKind, MatchArm, PatId, PatKind, StmtId, StmtKind, Ty,
    TypeDefKind, TypeId, UnOp,
};
use syntax::ast;
use syntax::{Diagnostic, Span};

use crate::infer::{Mismatch, Table, T};
use crate::items::{TypeResolver, BUILTIN_FNS};

/// Stack for lowering one body: the parser allows ASTs 1024 levels deep,
/// and a debug build spends several KB of stack per level.
const STACK_SIZE: usize = 256 << 20;

/// Lowers one function body. Looks only at the item tree and this
/// function's AST. Runs on a thread with a large stack (reserved, not
/// committed) so deeply nested expressions cannot overflow the caller's.
pub fn lower_body(
    items: &ItemTree,
    f: FnId,
    def: &ast::FnDef,
) -> (Body, BodySourceMap, Vec<Diagnostic>) {
    with_big_stack(|| lower_body_here(items, f, def))
}

/// Runs `work` on a thread with a [`STACK_SIZE`] stack.
pub(crate) fn with_big_stack<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    stdx::with_big_stack(STACK_SIZE, "sspur-check", work)
}

/// [`lower_body`] on the current thread (its caller provides the stack).
pub(crate) fn lower_body_here(
    items: &ItemTree,
    f: FnId,
    def: &ast::FnDef,
) -> (Body, BodySourceMap, Vec<Diagnostic>) {
    let mut cx = Cx::new(items);
    let sig = &items.fns[f];
    cx.ret = T::from_ir(&sig.ret);
    cx.scopes.push(Vec::new());
    for (i, p) in def.params.iter().enumerate() {
        let ty = sig.params.get(i).map_or(T::Error, |(_, t)| T::from_ir(t));
        let l = cx.new_local(&p.name, ty, LocalKind::Param);
        cx.body.params.push(l);
    }
    let ret = cx.ret.clone();
    let discard = ret == T::Unit;
    let (root, t) = cx.block(&def.body, discard);
    let span = def.body.tail.as_ref().map_or(def.body.span, |t| t.span);
    let before = cx.diags.len();
    cx.coerce(span, &t, &ret, "");
    if let (Some(d), Some(r)) = (cx.diags.get_mut(before), &def.ret) {
        d.labels
            .push((r.span, "the return type is declared here".into()));
    }
    cx.body.root = Some(root);
    cx.finish();
    (cx.body, cx.map, cx.diags)
}

/// An operator or method constraint checked once types are solved.
#[derive(Clone, Copy)]
pub(crate) enum Need {
    /// Int or F64.
    Numeric,
    /// Int, F64 or Str.
    Add,
    /// Int, F64, Bool or Str.
    Compare,
    /// Int, F64, Str or Bool (same set as Compare, said as "sort").
    Sort,
    /// Int, Str or Bool.
    MapKey,
}

struct Deferred {
    span: Span,
    ty: T,
    need: Need,
    what: String,
}

/// A method, field or index whose receiver type was unknown when it was
/// lowered; resolved at the end of the body once a later use has decided
/// the type (`let f = |s| s.amount` then `xs.sort_by(f)`).
struct Pending {
    expr: ExprId,
    recv: ExprId,
    recv_ty: T,
    recv_span: Span,
    result: T,
    span: Span,
    kind: PendingKind,
}

enum PendingKind {
    Method {
        name: ast::Name,
        parens: bool,
        args: Vec<ExprId>,
    },
    TupleField {
        name: ast::Name,
    },
    Index {
        index: ExprId,
    },
}

struct LambdaFrame {
    /// Scopes at index >= this belong to the lambda.
    scope_base: usize,
    captures: Vec<LocalId>,
}

struct Cx<'a> {
    items: &'a ItemTree,
    resolver: TypeResolver<'a>,
    ctors: HashMap<&'a str, (TypeId, u32)>,
    /// Function names looked up so far (the first definition wins, as in
    /// `fn_by_name`); filled lazily so a body costs nothing per function
    /// of the program that it does not name.
    fns: HashMap<String, Option<FnId>>,
    body: Body,
    map: BodySourceMap,
    diags: Vec<Diagnostic>,
    table: Table,
    expr_tys: Vec<T>,
    pat_tys: Vec<T>,
    local_tys: Vec<T>,
    /// What a `let`/`var` was initialised with when it is a hint for the
    /// "add an annotation" message (`empty_map()`, `[]`, `None`).
    local_hint: HashMap<LocalId, String>,
    /// Scopes of names, innermost last; a scope's index is its depth, which
    /// tells whether a use inside a lambda captures the local.
    scopes: Vec<Vec<(String, LocalId)>>,
    lambdas: Vec<LambdaFrame>,
    loop_depth: usize,
    ret: T,
    deferred: Vec<Deferred>,
    matches: Vec<(ExprId, Span)>,
    pending: Vec<Pending>,
}

impl<'a> Cx<'a> {
    fn new(items: &'a ItemTree) -> Cx<'a> {
        let mut ctors = HashMap::new();
        for (id, def) in items.types.iter() {
            if let TypeDefKind::Sum { variants } = &def.kind {
                for (i, v) in variants.iter().enumerate() {
                    ctors.entry(v.name.as_str()).or_insert((id, i as u32));
                }
            }
        }
        Cx {
            items,
            fns: HashMap::new(),
            resolver: TypeResolver::from_items(items),
            ctors,
            body: Body::default(),
            map: BodySourceMap::default(),
            diags: Vec::new(),
            table: Table::default(),
            expr_tys: Vec::new(),
            pat_tys: Vec::new(),
            local_tys: Vec::new(),
            local_hint: HashMap::new(),
            scopes: Vec::new(),
            lambdas: Vec::new(),
            loop_depth: 0,
            ret: T::Unit,
            deferred: Vec::new(),
            matches: Vec::new(),
            pending: Vec::new(),
        }
    }

    // ------------------------------------------------------------ helpers

    fn find_fn(&mut self, name: &str) -> Option<FnId> {
        if let Some(f) = self.fns.get(name) {
            return *f;
        }
        let f = self.items.fn_by_name(name);
        self.fns.insert(name.to_string(), f);
        f
    }

    /// Adds a label to the first mismatch reported since `before`.
    fn label_new(&mut self, before: usize, span: Option<Span>, text: &str) {
        let Some(span) = span else { return };
        if let Some(d) = self.diags[before..]
            .iter_mut()
            .find(|d| d.message.starts_with("mismatched types"))
        {
            d.labels.push((span, text.to_string()));
        }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    fn show(&self, t: &T) -> String {
        self.table.show(self.items, t)
    }

    fn alloc(&mut self, kind: ExprKind, ty: T, span: Span) -> ExprId {
        let id = self.body.exprs.alloc(ir::Expr {
            kind,
            ty: Ty::Error,
        });
        self.expr_tys.push(ty);
        self.map.exprs.insert(id, span);
        id
    }

    fn alloc_stmt(&mut self, kind: StmtKind, span: Span) -> StmtId {
        let id = self.body.stmts.alloc(ir::Stmt { kind });
        self.map.stmts.insert(id, span);
        id
    }

    fn alloc_pat(&mut self, kind: PatKind, ty: T, span: Span) -> PatId {
        let id = self.body.pats.alloc(ir::Pat {
            kind,
            ty: Ty::Error,
        });
        self.pat_tys.push(ty);
        self.map.pats.insert(id, span);
        id
    }

    fn expr_ty(&self, e: ExprId) -> T {
        self.expr_tys[e.into_raw().into_u32() as usize].clone()
    }

    fn missing(&mut self, span: Span) -> (ExprId, T) {
        (self.alloc(ExprKind::Missing, T::Error, span), T::Error)
    }

    fn new_local(&mut self, name: &ast::Name, ty: T, kind: LocalKind) -> LocalId {
        let id = self.body.locals.alloc(Local {
            name: name.text.clone(),
            ty: Ty::Error,
            kind,
        });
        self.local_tys.push(ty);
        self.map.locals.insert(id, name.span);
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.text.clone(), id));
        }
        id
    }

    fn local_ty(&self, l: LocalId) -> T {
        self.local_tys[l.into_raw().into_u32() as usize].clone()
    }

    /// Finds a local by name, recording captures for every lambda between
    /// the use and the declaration.
    fn lookup(&mut self, name: &ast::Name) -> Option<LocalId> {
        let (depth, id) = self.scopes.iter().enumerate().rev().find_map(|(d, s)| {
            s.iter()
                .rev()
                .find(|(n, _)| *n == name.text)
                .map(|(_, id)| (d, *id))
        })?;
        let mut crossed = false;
        let mut first_use = false;
        for frame in self.lambdas.iter_mut() {
            if frame.scope_base > depth {
                crossed = true;
                if !frame.captures.contains(&id) {
                    frame.captures.push(id);
                    first_use = true;
                }
            }
        }
        // One report per lambda and `var`, at its first use.
        if crossed && first_use && self.body.locals[id].kind == LocalKind::Var {
            let n = &name.text;
            self.diags.push(
                Diagnostic::error(name.span, format!("a lambda cannot capture `var {n}`"))
                    .with_label(self.map.local(id), "declared with `var` here")
                    .with_note(format!(
                        "copy it into a `let` first, e.g. `let {n}_now = {n}`, and use that inside the lambda"
                    )),
            );
        }
        Some(id)
    }

    /// Requires `actual` to be usable where `expected` is (`Never` fits
    /// anywhere).
    fn coerce(&mut self, span: Span, actual: &T, expected: &T, what: &str) -> bool {
        if self.table.shallow(actual) == T::Never {
            return true;
        }
        match self.table.unify(actual, expected) {
            Ok(()) => true,
            Err(m) => {
                if !self.table.has_error(actual) && !self.table.has_error(expected) {
                    let msg = match m {
                        Mismatch::Different => format!(
                            "mismatched types: expected `{}`, found `{}`",
                            self.show(expected),
                            self.show(actual)
                        ),
                        Mismatch::Infinite => format!(
                            "cannot infer a type here: it would contain itself (`{}` and `{}`)",
                            self.show(expected),
                            self.show(actual)
                        ),
                    };
                    let mut d = Diagnostic::error(span, msg);
                    if !what.is_empty() {
                        d = d.with_note(format!("in {what}"));
                    }
                    self.diags.push(d);
                }
                // Whatever stayed unknown on either side is now an error.
                self.table.poison_all(actual);
                self.table.poison_all(expected);
                false
            }
        }
    }

    /// The common type of two branches (`Never` gives way to the other).
    fn join(&mut self, a: &T, b: &T, span: Span, what: &str) -> T {
        if self.table.shallow(a) == T::Never {
            return b.clone();
        }
        if self.table.shallow(b) == T::Never {
            return a.clone();
        }
        if self.table.unify(a, b).is_err() && !self.table.has_error(a) && !self.table.has_error(b) {
            let msg = format!(
                "{what} have different types: `{}` and `{}`",
                self.show(a),
                self.show(b)
            );
            self.err(span, msg);
            self.table.poison_all(a);
            self.table.poison_all(b);
            return T::Error;
        }
        a.clone()
    }

    fn defer(&mut self, span: Span, ty: &T, need: Need, what: impl Into<String>) {
        self.deferred.push(Deferred {
            span,
            ty: ty.clone(),
            need,
            what: what.into(),
        });
    }

    // ------------------------------------------------------------ blocks

    /// Lowers a block. With `discard`, a tail whose value is not Unit is
    /// turned into a statement (an `if` without `else`, loop bodies, Unit
    /// functions), so the block's type is Unit.
    fn block(&mut self, b: &ast::Block, discard: bool) -> (ExprId, T) {
        self.scopes.push(Vec::new());
        let mut stmts = Vec::new();
        let mut diverges = false;
        for s in &b.stmts {
            let (id, never) = self.stmt(s);
            diverges |= never;
            stmts.push(id);
        }
        let mut tail = None;
        let mut ty = T::Unit;
        if let Some(t) = &b.tail {
            let (e, et) = if discard {
                self.expr_unused(t)
            } else {
                self.expr(t)
            };
            let shallow = self.table.shallow(&et);
            if discard && !matches!(shallow, T::Unit | T::Never | T::Error) {
                stmts.push(self.alloc_stmt(StmtKind::Expr(e), t.span));
            } else {
                tail = Some(e);
                ty = et;
            }
        } else if diverges {
            ty = T::Never;
        }
        self.scopes.pop();
        let id = self.alloc(ExprKind::Block { stmts, tail }, ty.clone(), b.span);
        (id, ty)
    }

    /// Lowers a statement; the flag says it is an expression that never
    /// finishes (`return`, `trap(..)`).
    fn stmt(&mut self, s: &ast::Stmt) -> (StmtId, bool) {
        match &s.kind {
            ast::StmtKind::Let { pat, ty, init } => {
                let expected = match ty {
                    Some(t) => T::from_ir(&self.resolver.lower(t, &mut self.diags)),
                    None => self.table.fresh(),
                };
                let before = self.diags.len();
                let init_id = self.expr_expect(init, &expected, "this `let`");
                self.label_new(before, ty.as_ref().map(|t| t.span), "the annotation");
                let pat_id = self.irrefutable(pat, &expected, LocalKind::Let);
                if let (ast::PatKind::Bind(_), Some(h)) = (&pat.kind, init_hint(init)) {
                    if let PatKind::Bind(l) = self.body.pats[pat_id].kind {
                        self.local_hint.insert(l, h);
                    }
                }
                (
                    self.alloc_stmt(
                        StmtKind::Let {
                            pat: pat_id,
                            init: init_id,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::Var { name, ty, init } => {
                let expected = match ty {
                    Some(t) => T::from_ir(&self.resolver.lower(t, &mut self.diags)),
                    None => self.table.fresh(),
                };
                let before = self.diags.len();
                let init_id = self.expr_expect(init, &expected, "this `var`");
                self.label_new(before, ty.as_ref().map(|t| t.span), "the annotation");
                let local = self.new_local(name, expected, LocalKind::Var);
                if let Some(h) = init_hint(init) {
                    self.local_hint.insert(local, h);
                }
                (
                    self.alloc_stmt(
                        StmtKind::Var {
                            local,
                            init: init_id,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::Assign { name, value } => {
                let Some(local) = self.lookup(name) else {
                    self.err(name.span, format!("unknown name `{}`", name.text));
                    let (v, _) = self.expr(value);
                    return (self.alloc_stmt(StmtKind::Expr(v), s.span), false);
                };
                let kind = self.body.locals[local].kind;
                if kind != LocalKind::Var {
                    let what = if kind == LocalKind::Param {
                        "a parameter"
                    } else {
                        "a `let`"
                    };
                    self.diags.push(
                        Diagnostic::error(
                            name.span,
                            format!("cannot assign to `{}`: it is {what}", name.text),
                        )
                        .with_label(self.map.local(local), "declared here")
                        .with_note("only `var` locals can be assigned with `:=`"),
                    );
                }
                let ty = self.local_ty(local);
                let before = self.diags.len();
                let v = self.expr_expect(value, &ty, "this assignment");
                let decl = Some(self.map.local(local));
                self.label_new(before, decl, "declared here");
                let st = StmtKind::Assign {
                    local,
                    value: v,
                    old: ir::OldValue::Keep,
                };
                (self.alloc_stmt(st, s.span), false)
            }
            ast::StmtKind::For { pat, iter, body } => {
                let (it, it_ty) = self.expr(iter);
                let elem = if matches!(iter.kind, ast::ExprKind::Range { .. }) {
                    T::Int
                } else {
                    match self.table.shallow(&it_ty) {
                        T::List(e) => *e,
                        T::Error | T::Never => T::Error,
                        T::Var(_) => {
                            let e = self.table.fresh();
                            let _ = self.table.unify(&it_ty, &T::list(e.clone()));
                            e
                        }
                        T::Map(..) => {
                            self.err(
                                iter.span,
                                "cannot iterate over a map; iterate over `.entries`, `.keys` or `.values`",
                            );
                            T::Error
                        }
                        T::Str => {
                            self.err(
                                iter.span,
                                "cannot iterate over a `Str`; iterate over `.chars` or `.lines`",
                            );
                            T::Error
                        }
                        other => {
                            let msg = format!(
                                "cannot iterate over `{}`; a `for` needs a list or a range",
                                self.show(&other)
                            );
                            self.err(iter.span, msg);
                            T::Error
                        }
                    }
                };
                self.scopes.push(Vec::new());
                let p = self.irrefutable(pat, &elem, LocalKind::Let);
                self.loop_depth += 1;
                let (b, _) = self.block(body, true);
                self.loop_depth -= 1;
                self.scopes.pop();
                (
                    self.alloc_stmt(
                        StmtKind::For {
                            pat: p,
                            iter: it,
                            body: b,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::While { cond, body } => {
                let c = self.expr_expect(cond, &T::Bool, "a `while` condition");
                self.loop_depth += 1;
                let (b, _) = self.block(body, true);
                self.loop_depth -= 1;
                (
                    self.alloc_stmt(StmtKind::While { cond: c, body: b }, s.span),
                    false,
                )
            }
            ast::StmtKind::Expr(e) => {
                let (id, t) = self.expr_unused(e);
                let never = self.table.shallow(&t) == T::Never;
                (self.alloc_stmt(StmtKind::Expr(id), s.span), never)
            }
        }
    }

    // ------------------------------------------------------------ patterns

    /// A `let` or `for` pattern: a binding, `_`, or a tuple of those.
    fn irrefutable(&mut self, p: &ast::Pat, expected: &T, kind: LocalKind) -> PatId {
        let mut seen = HashMap::new();
        self.pat(p, expected, false, kind, &mut seen)
    }

    fn pat(
        &mut self,
        p: &ast::Pat,
        expected: &T,
        refutable: bool,
        kind: LocalKind,
        seen: &mut HashMap<String, Span>,
    ) -> PatId {
        let refute_err = |cx: &mut Cx, span: Span| {
            cx.diags.push(
                Diagnostic::error(span, "this pattern can fail to match here")
                    .with_note("`let` and `for` patterns must always match; use `match` instead"),
            );
        };
        match &p.kind {
            ast::PatKind::Wild => self.alloc_pat(PatKind::Wild, expected.clone(), p.span),
            ast::PatKind::Bind(name) => {
                if let Some(first) = seen.get(&name.text) {
                    self.diags.push(
                        Diagnostic::error(
                            name.span,
                            format!("`{}` is bound twice in this pattern", name.text),
                        )
                        .with_label(*first, "first bound here"),
                    );
                }
                seen.insert(name.text.clone(), name.span);
                let l = self.new_local(name, expected.clone(), kind);
                self.alloc_pat(PatKind::Bind(l), expected.clone(), p.span)
            }
            ast::PatKind::Int(i) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Int, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Int(*i)), T::Int, p.span)
            }
            ast::PatKind::Str(s) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Str, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Str(s.clone())), T::Str, p.span)
            }
            ast::PatKind::Bool(b) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Bool, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Bool(*b)), T::Bool, p.span)
            }
            ast::PatKind::Tuple(ps) => {
                let elems: Vec<T> = match self.table.shallow(expected) {
                    T::Tuple(ts) if ts.len() == ps.len() => ts,
                    T::Var(_) => {
                        let ts: Vec<T> = ps.iter().map(|_| self.table.fresh()).collect();
                        let _ = self.table.unify(expected, &T::Tuple(ts.clone()));
                        ts
                    }
                    T::Error => ps.iter().map(|_| T::Error).collect(),
                    other => {
                        let msg = format!(
                            "this tuple pattern has {} elements but the value is `{}`",
                            ps.len(),
                            self.show(&other)
                        );
                        self.err(p.span, msg);
                        ps.iter().map(|_| T::Error).collect()
                    }
                };
                let ids = ps
                    .iter()
                    .zip(&elems)
                    .map(|(q, t)| self.pat(q, t, refutable, kind, seen))
                    .collect();
                self.alloc_pat(PatKind::Tuple(ids), expected.clone(), p.span)
            }
            ast::PatKind::Ctor { name, args } => {
                if !refutable {
                    refute_err(self, p.span);
                }
                let resolved = self.ctor_sig(name);
                let Some((ctor, ty, fields)) = resolved else {
                    for a in args {
                        self.pat(a, &T::Error, refutable, kind, seen);
                    }
                    return self.alloc_pat(PatKind::Missing, T::Error, p.span);
                };
                self.coerce(p.span, &ty, expected, "this pattern");
                if fields.len() != args.len() {
                    self.err(
                        p.span,
                        format!(
                            "`{}` has {} field{}, but the pattern has {}",
                            name.text,
                            fields.len(),
                            if fields.len() == 1 { "" } else { "s" },
                            args.len()
                        ),
                    );
                }
                let ids = args
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let t = fields.get(i).cloned().unwrap_or(T::Error);
                        self.pat(q, &t, refutable, kind, seen)
                    })
                    .collect();
                self.alloc_pat(PatKind::Ctor { ctor, args: ids }, ty, p.span)
            }
        }
    }

    /// A constructor's IR form, its type and its field types.
    fn ctor_sig(&mut self, name: &ast::Name) -> Option<(Ctor, T, Vec<T>)> {
        match name.text.as_str() {
            "Some" => {
                let t = self.table.fresh();
                Some((Ctor::Some, T::option(t.clone()), vec![t]))
            }
            "None" => {
                let t = self.table.fresh();
                Some((Ctor::None, T::option(t), vec![]))
            }
            other => match self.ctors.get(other) {
                Some(&(ty, i)) => {
                    let fields = match &self.items.types[ty].kind {
                        TypeDefKind::Sum { variants } => variants
                            .get(i as usize)
                            .map(|v| v.fields.iter().map(T::from_ir).collect())
                            .unwrap_or_default(),
                        TypeDefKind::Record { .. } => Vec::new(),
                    };
                    Some((Ctor::User(ty, i), T::Adt(ty), fields))
                }
                None => {
                    let msg = match self.items.type_by_name(other) {
                        Some(t)
                            if matches!(self.items.types[t].kind, TypeDefKind::Record { .. }) =>
                        {
                            format!("`{other}` is a record type, not a constructor; write `{other} {{ field: value, ... }}`")
                        }
                        _ => format!("unknown constructor `{other}`"),
                    };
                    let d = Diagnostic::error(name.span, msg);
                    let candidates = self.ctors.keys().copied().chain(["Some", "None"]);
                    self.diags
                        .push(crate::suggest::did_you_mean(d, other, candidates));
                    None
                }
            },
        }
    }

    // ------------------------------------------------------------ expressions

    /// Lowers `e` where a value of type `expected` is needed. Lambdas see
    /// the expected type first, so their parameters get known types.
    fn expr_expect(&mut self, e: &ast::Expr, expected: &T, what: &str) -> ExprId {
        let (id, t) = match &e.kind {
            ast::ExprKind::Lambda { params, body } => {
                self.lambda(e.span, params, body, Some(expected))
            }
            _ => self.expr(e),
        };
        self.coerce(e.span, &t, expected, what);
        id
    }

    fn expr(&mut self, e: &ast::Expr) -> (ExprId, T) {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(i) => (
                self.alloc(ExprKind::Lit(Lit::Int(*i)), T::Int, span),
                T::Int,
            ),
            ast::ExprKind::Float(bits) => (
                self.alloc(ExprKind::Lit(Lit::F64(f64::from_bits(*bits))), T::F64, span),
                T::F64,
            ),
            ast::ExprKind::Bool(b) => (
                self.alloc(ExprKind::Lit(Lit::Bool(*b)), T::Bool, span),
                T::Bool,
            ),
            ast::ExprKind::Unit => (self.alloc(ExprKind::Lit(Lit::Unit), T::Unit, span), T::Unit),
            ast::ExprKind::Str(parts) => {
                if parts.iter().all(|p| matches!(p, ast::StrPart::Text(_))) {
                    let mut s = String::new();
                    for p in parts {
                        if let ast::StrPart::Text(t) = p {
                            s.push_str(t);
                        }
                    }
                    return (self.alloc(ExprKind::Lit(Lit::Str(s)), T::Str, span), T::Str);
                }
                let mut out = Vec::new();
                for p in parts {
                    match p {
                        ast::StrPart::Text(t) => out.push(InterpPart::Text(t.clone())),
                        ast::StrPart::Hole(h) => {
                            let (id, _) = self.expr(h);
                            out.push(InterpPart::Expr(id));
                        }
                    }
                }
                (self.alloc(ExprKind::Interp(out), T::Str, span), T::Str)
            }
            ast::ExprKind::Name(name) => self.name(name, span),
            ast::ExprKind::Ctor { name, args } => self.ctor_expr(name, args.as_deref(), span),
            ast::ExprKind::Record { name, fields } => self.record(name, fields, span),
            ast::ExprKind::Tuple(es) => {
                let mut ids = Vec::new();
                let mut tys = Vec::new();
                for x in es {
                    let (id, t) = self.expr(x);
                    ids.push(id);
                    tys.push(t);
                }
                let t = T::Tuple(tys);
                (self.alloc(ExprKind::Tuple(ids), t.clone(), span), t)
            }
            ast::ExprKind::List(es) => {
                let elem = self.table.fresh();
                let ids = es
                    .iter()
                    .map(|x| self.expr_expect(x, &elem, "this list"))
                    .collect();
                let t = T::list(elem);
                (self.alloc(ExprKind::List(ids), t.clone(), span), t)
            }
            ast::ExprKind::Range { lo, hi } => {
                let l = self.expr_expect(lo, &T::Int, "a range bound");
                let h = self.expr_expect(hi, &T::Int, "a range bound");
                let t = T::list(T::Int);
                (
                    self.alloc(ExprKind::Range { lo: l, hi: h }, t.clone(), span),
                    t,
                )
            }
            ast::ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, span),
            ast::ExprKind::Unary { op, operand } => {
                let (o, t) = match op {
                    ast::UnOp::Not => (
                        self.expr_expect(operand, &T::Bool, "the operand of `!`"),
                        T::Bool,
                    ),
                    ast::UnOp::Neg => {
                        let (o, t) = self.expr(operand);
                        self.defer(span, &t, Need::Numeric, "`-`");
                        (o, t)
                    }
                };
                let op = match op {
                    ast::UnOp::Neg => UnOp::Neg,
                    ast::UnOp::Not => UnOp::Not,
                };
                (
                    self.alloc(ExprKind::Unary { op, operand: o }, t.clone(), span),
                    t,
                )
            }
            ast::ExprKind::Call { callee, args } => self.call(callee, args, span),
            ast::ExprKind::Method {
                receiver,
                name,
                args,
                parens,
            } => self.method(receiver, name, args, *parens, span),
            ast::ExprKind::Field { base, name } => {
                let (b, bt) = self.expr(base);
                let idx: Option<u32> = name.text.parse().ok();
                let t = match (self.table.shallow(&bt), idx) {
                    (T::Tuple(ts), Some(i)) if (i as usize) < ts.len() => ts[i as usize].clone(),
                    (T::Error | T::Never, _) => T::Error,
                    (T::Var(_), _) => {
                        let kind = PendingKind::TupleField { name: name.clone() };
                        return self.defer_pending(b, bt, base.span, span, kind);
                    }
                    (other, _) => {
                        let msg = format!("no field `{}` on `{}`", name.text, self.show(&other));
                        self.err(name.span, msg);
                        T::Error
                    }
                };
                let index = idx.unwrap_or(0);
                (
                    self.alloc(ExprKind::Field { base: b, index }, t.clone(), span),
                    t,
                )
            }
            ast::ExprKind::Index { base, index } => {
                let (b, bt) = self.expr(base);
                let (i, t) = match self.table.shallow(&bt) {
                    T::List(e) => (self.expr_expect(index, &T::Int, "a list index"), *e),
                    T::Map(k, v) => (self.expr_expect(index, &k, "a map key"), *v),
                    T::Error | T::Never => (self.expr(index).0, T::Error),
                    T::Var(_) => {
                        let i = self.expr(index).0;
                        let kind = PendingKind::Index { index: i };
                        return self.defer_pending(b, bt, base.span, span, kind);
                    }
                    T::Str => {
                        self.err(
                            span,
                            "a `Str` cannot be indexed; use `s.byte(i)` or `s.slice(a, b)`",
                        );
                        (self.expr(index).0, T::Error)
                    }
                    other => {
                        let msg =
                            format!("cannot index into a value of type `{}`", self.show(&other));
                        self.err(span, msg);
                        (self.expr(index).0, T::Error)
                    }
                };
                (
                    self.alloc(ExprKind::Index { base: b, index: i }, t.clone(), span),
                    t,
                )
            }
            ast::ExprKind::Lambda { params, body } => self.lambda(span, params, body, None),
            ast::ExprKind::If { cond, then, else_ } => {
                self.if_expr(cond, then, else_.as_deref(), span, false)
            }
            ast::ExprKind::Match { scrutinee, arms } => {
                self.match_expr(scrutinee, arms, span, false)
            }
            ast::ExprKind::Block(b) => self.block(b, false),
            ast::ExprKind::Return(v) => {
                let ret = self.ret.clone();
                let v = match v {
                    Some(v) => Some(self.expr_expect(v, &ret, "the returned value")),
                    None => {
                        self.coerce(span, &T::Unit, &ret, "this `return` (it has no value)");
                        None
                    }
                };
                (self.alloc(ExprKind::Return(v), T::Never, span), T::Never)
            }
            ast::ExprKind::Break | ast::ExprKind::Continue => {
                let is_break = matches!(e.kind, ast::ExprKind::Break);
                if self.loop_depth == 0 {
                    let w = if is_break { "break" } else { "continue" };
                    self.err(span, format!("`{w}` outside of a loop"));
                }
                let k = if is_break {
                    ExprKind::Break
                } else {
                    ExprKind::Continue
                };
                (self.alloc(k, T::Never, span), T::Never)
            }
            ast::ExprKind::Error => self.missing(span),
        }
    }

    /// Lowers an expression whose value is not used (a statement, or the
    /// tail of a block whose value is discarded): `if` and `match` branches
    /// may then have different types, each becoming Unit.
    fn expr_unused(&mut self, e: &ast::Expr) -> (ExprId, T) {
        match &e.kind {
            ast::ExprKind::If { cond, then, else_ } => {
                self.if_expr(cond, then, else_.as_deref(), e.span, true)
            }
            ast::ExprKind::Match { scrutinee, arms } => {
                self.match_expr(scrutinee, arms, e.span, true)
            }
            ast::ExprKind::Block(b) => self.block(b, true),
            _ => self.expr(e),
        }
    }

    fn if_expr(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Block,
        else_: Option<&ast::Expr>,
        span: Span,
        unused: bool,
    ) -> (ExprId, T) {
        /// An `if` chain without a final `else` has no value.
        fn complete(e: Option<&ast::Expr>) -> bool {
            match e {
                None => false,
                Some(ast::Expr {
                    kind: ast::ExprKind::If { else_, .. },
                    ..
                }) => complete(else_.as_deref()),
                Some(_) => true,
            }
        }
        let c = self.expr_expect(cond, &T::Bool, "an `if` condition");
        if unused || !complete(else_) {
            let (th, tt) = self.block(then, true);
            let el = else_.map(|el| self.expr_unused(el));
            // Both branches diverging make the whole `if` diverge.
            let t = match &el {
                Some((_, et))
                    if self.table.shallow(&tt) == T::Never
                        && self.table.shallow(et) == T::Never =>
                {
                    T::Never
                }
                _ => T::Unit,
            };
            let k = ExprKind::If {
                cond: c,
                then: th,
                else_: el.map(|e| e.0),
            };
            return (self.alloc(k, t.clone(), span), t);
        }
        let (th, tt) = self.block(then, false);
        let (el, et) = match else_ {
            Some(el) => self.expr(el),
            None => self.missing(span),
        };
        let t = self.join(&tt, &et, span, "`if` and `else`");
        let k = ExprKind::If {
            cond: c,
            then: th,
            else_: Some(el),
        };
        (self.alloc(k, t.clone(), span), t)
    }

    fn match_expr(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[ast::MatchArm],
        span: Span,
        unused: bool,
    ) -> (ExprId, T) {
        let (s, st) = self.expr(scrutinee);
        let mut out = Vec::new();
        let mut ty = T::Never;
        let mut all_never = true;
        for arm in arms {
            self.scopes.push(Vec::new());
            let mut seen = HashMap::new();
            let p = self.pat(&arm.pat, &st, true, LocalKind::Let, &mut seen);
            let (mut b, bt) = if unused {
                self.expr_unused(&arm.body)
            } else {
                self.expr(&arm.body)
            };
            self.scopes.pop();
            all_never &= self.table.shallow(&bt) == T::Never;
            if unused {
                if !matches!(self.table.shallow(&bt), T::Unit | T::Never | T::Error) {
                    // Wrap the value into `{ value; }` so every arm is Unit.
                    let st = self.alloc_stmt(StmtKind::Expr(b), arm.body.span);
                    let k = ExprKind::Block {
                        stmts: vec![st],
                        tail: None,
                    };
                    b = self.alloc(k, T::Unit, arm.body.span);
                }
            } else {
                ty = self.join(&ty, &bt, arm.body.span, "`match` arms");
            }
            out.push(MatchArm { pat: p, body: b });
        }
        if unused && (!all_never || arms.is_empty()) {
            ty = T::Unit;
        }
        let id = self.alloc(
            ExprKind::Match {
                scrutinee: s,
                arms: out,
            },
            ty.clone(),
            span,
        );
        self.matches.push((id, scrutinee.span));
        (id, ty)
    }

    fn name(&mut self, name: &ast::Name, span: Span) -> (ExprId, T) {
        if let Some(l) = self.lookup(name) {
            let t = self.local_ty(l);
            return (self.alloc(ExprKind::Local(l), t.clone(), span), t);
        }
        if let Some(f) = self.find_fn(&name.text) {
            let sig = &self.items.fns[f];
            let t = T::func(
                sig.params.iter().map(|(_, t)| T::from_ir(t)).collect(),
                T::from_ir(&sig.ret),
            );
            return (self.alloc(ExprKind::Func(f), t.clone(), span), t);
        }
        if BUILTIN_FNS.contains(&name.text.as_str()) {
            let n = &name.text;
            self.diags.push(
                Diagnostic::error(
                    span,
                    format!("the built-in `{n}` cannot be used as a value"),
                )
                .with_note(format!("wrap it in a lambda, e.g. `|x| {n}(x)`")),
            );
        } else {
            let mut candidates: Vec<&str> = self
                .scopes
                .iter()
                .flat_map(|s| s.iter().map(|(n, _)| n.as_str()))
                .collect();
            candidates.extend(self.items.fns.iter().map(|(_, f)| f.name.as_str()));
            candidates.extend(BUILTIN_FNS);
            let d = Diagnostic::error(span, format!("unknown name `{}`", name.text));
            self.diags
                .push(crate::suggest::did_you_mean(d, &name.text, candidates));
        }
        self.missing(span)
    }

    fn ctor_expr(
        &mut self,
        name: &ast::Name,
        args: Option<&[ast::Expr]>,
        span: Span,
    ) -> (ExprId, T) {
        let Some((ctor, ty, fields)) = self.ctor_sig(name) else {
            for a in args.unwrap_or(&[]) {
                self.expr(a);
            }
            return self.missing(span);
        };
        let args = args.unwrap_or(&[]);
        if args.len() != fields.len() {
            self.err(
                span,
                format!(
                    "`{}` takes {} argument{}, but {} {} given",
                    name.text,
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        let ids = args
            .iter()
            .enumerate()
            .map(|(i, a)| match fields.get(i) {
                Some(t) => self.expr_expect(a, &t.clone(), "a constructor argument"),
                None => self.expr(a).0,
            })
            .collect();
        (
            self.alloc(ExprKind::Ctor { ctor, args: ids }, ty.clone(), span),
            ty,
        )
    }

    fn record(
        &mut self,
        name: &ast::Name,
        fields: &[(ast::Name, ast::Expr)],
        span: Span,
    ) -> (ExprId, T) {
        let def = self
            .items
            .type_by_name(&name.text)
            .map(|t| (t, &self.items.types[t].kind));
        let (ty, decl) = match def {
            Some((t, TypeDefKind::Record { fields })) => (t, fields.clone()),
            Some(_) => {
                self.err(
                    name.span,
                    format!("`{}` is a sum type, not a record", name.text),
                );
                for (_, e) in fields {
                    self.expr(e);
                }
                return self.missing(span);
            }
            None => {
                self.err(name.span, format!("unknown record type `{}`", name.text));
                for (_, e) in fields {
                    self.expr(e);
                }
                return self.missing(span);
            }
        };
        let mut out = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for (fname, fexpr) in fields {
            match decl.iter().position(|(n, _)| *n == fname.text) {
                Some(i) => {
                    if let Some(first) = seen.get(fname.text.as_str()) {
                        self.diags.push(
                            Diagnostic::error(
                                fname.span,
                                format!("field `{}` is given twice", fname.text),
                            )
                            .with_label(*first, "first given here"),
                        );
                    }
                    seen.insert(&fname.text, fname.span);
                    let ft = T::from_ir(&decl[i].1);
                    let id = self.expr_expect(fexpr, &ft, "this field");
                    out.push((i as u32, id));
                }
                None => {
                    let d = Diagnostic::error(
                        fname.span,
                        format!("record `{}` has no field `{}`", name.text, fname.text),
                    );
                    let candidates = decl.iter().map(|(n, _)| n.as_str());
                    self.diags
                        .push(crate::suggest::did_you_mean(d, &fname.text, candidates));
                    self.expr(fexpr);
                }
            }
        }
        let missing: Vec<&str> = decl
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !seen.contains_key(n))
            .collect();
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|n| format!("`{n}`")).collect();
            self.err(
                span,
                format!(
                    "missing field{} {} in `{}`",
                    if missing.len() == 1 { "" } else { "s" },
                    list.join(", "),
                    name.text
                ),
            );
        }
        let t = T::Adt(ty);
        (
            self.alloc(ExprKind::Record { ty, fields: out }, t.clone(), span),
            t,
        )
    }

    fn binary(
        &mut self,
        op: ast::BinOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> (ExprId, T) {
        let (irop, sym) = match op {
            ast::BinOp::Add => (BinOp::Add, "+"),
            ast::BinOp::Sub => (BinOp::Sub, "-"),
            ast::BinOp::Mul => (BinOp::Mul, "*"),
            ast::BinOp::Div => (BinOp::Div, "/"),
            ast::BinOp::Rem => (BinOp::Rem, "%"),
            ast::BinOp::Eq => (BinOp::Eq, "=="),
            ast::BinOp::Ne => (BinOp::Ne, "!="),
            ast::BinOp::Lt => (BinOp::Lt, "<"),
            ast::BinOp::Le => (BinOp::Le, "<="),
            ast::BinOp::Gt => (BinOp::Gt, ">"),
            ast::BinOp::Ge => (BinOp::Ge, ">="),
            ast::BinOp::And => (BinOp::And, "&&"),
            ast::BinOp::Or => (BinOp::Or, "||"),
        };
        let (l, r, t) = match irop {
            BinOp::And | BinOp::Or => {
                let what = format!("an operand of `{sym}`");
                let l = self.expr_expect(lhs, &T::Bool, &what);
                let r = self.expr_expect(rhs, &T::Bool, &what);
                (l, r, T::Bool)
            }
            _ => {
                let (l, lt) = self.expr(lhs);
                let (r, rt) = match &rhs.kind {
                    ast::ExprKind::Lambda { .. } => {
                        let id = self.expr_expect(rhs, &lt, "an operand");
                        (id, lt.clone())
                    }
                    _ => self.expr(rhs),
                };
                let t = self.join(&lt, &rt, span, &format!("the operands of `{sym}`"));
                let (need, result) = match irop {
                    BinOp::Add => (Need::Add, t.clone()),
                    BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => (Need::Numeric, t.clone()),
                    _ => (Need::Compare, T::Bool),
                };
                self.defer(span, &t, need, format!("`{sym}`"));
                (l, r, result)
            }
        };
        let k = ExprKind::Binary {
            op: irop,
            lhs: l,
            rhs: r,
        };
        (self.alloc(k, t.clone(), span), t)
    }

    fn call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> (ExprId, T) {
        if let ast::ExprKind::Name(name) = &callee.kind {
            let is_local = self
                .scopes
                .iter()
                .any(|s| s.iter().any(|(n, _)| *n == name.text));
            if !is_local {
                if let Some(f) = self.find_fn(&name.text) {
                    let sig = &self.items.fns[f];
                    let ps: Vec<T> = sig.params.iter().map(|(_, t)| T::from_ir(t)).collect();
                    let ret = T::from_ir(&sig.ret);
                    let names: Vec<String> = sig.params.iter().map(|(n, _)| n.clone()).collect();
                    let what = format!("function `{}`", name.text);
                    let ids = self.args(&what, &ps, &names, args, span);
                    let k = ExprKind::Call {
                        callee: Callee::Fn(f),
                        args: ids,
                    };
                    return (self.alloc(k, ret.clone(), span), ret);
                }
                if let Some(b) = builtin(&name.text) {
                    return self.builtin_call(b, &name.text, args, span);
                }
            }
        }
        let (c, ct) = self.expr(callee);
        let (ps, ret) = match self.table.shallow(&ct) {
            T::Fn(ps, r) => (ps, *r),
            T::Var(_) => {
                let ps: Vec<T> = args.iter().map(|_| self.table.fresh()).collect();
                let r = self.table.fresh();
                let _ = self.table.unify(&ct, &T::func(ps.clone(), r.clone()));
                (ps, r)
            }
            T::Error => {
                for a in args {
                    self.expr(a);
                }
                return self.missing(span);
            }
            other => {
                let msg = format!(
                    "`{}` is not a function and cannot be called",
                    self.show(&other)
                );
                self.err(callee.span, msg);
                for a in args {
                    self.expr(a);
                }
                return self.missing(span);
            }
        };
        let ids = self.args("this function", &ps, &[], args, span);
        let k = ExprKind::Call {
            callee: Callee::Value(c),
            args: ids,
        };
        (self.alloc(k, ret.clone(), span), ret)
    }

    /// Lowers call arguments against parameter types, reporting arity.
    fn args(
        &mut self,
        what: &str,
        ps: &[T],
        names: &[String],
        args: &[ast::Expr],
        span: Span,
    ) -> Vec<ExprId> {
        if ps.len() != args.len() {
            self.err(
                span,
                format!(
                    "{what} takes {} argument{}, but {} {} given",
                    ps.len(),
                    if ps.len() == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        self.args_named(what, ps, names, args)
    }

    /// Lowers arguments against parameter types; `names` (when known)
    /// make mismatch notes say which parameter.
    fn args_named(
        &mut self,
        what: &str,
        ps: &[T],
        names: &[String],
        args: &[ast::Expr],
    ) -> Vec<ExprId> {
        args.iter()
            .enumerate()
            .map(|(i, a)| match ps.get(i) {
                Some(t) => {
                    let ctx = match names.get(i) {
                        Some(n) => format!("argument `{n}` of {what}"),
                        None => format!("argument {} of {what}", i + 1),
                    };
                    self.expr_expect(a, t, &ctx)
                }
                None => self.expr(a).0,
            })
            .collect()
    }

    fn builtin_call(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> (ExprId, T) {
        let what = format!("`{name}`");
        let (ids, ret) = match b {
            Builtin::Print | Builtin::Log => {
                let p = self.table.fresh();
                (self.args(&what, &[p], &[], args, span), T::Unit)
            }
            Builtin::EmptyMap => {
                let k = self.table.fresh();
                let v = self.table.fresh();
                self.defer(span, &k, Need::MapKey, "a map key");
                (self.args(&what, &[], &[], args, span), T::map(k, v))
            }
            Builtin::ReadFile => (self.args(&what, &[T::Str], &[], args, span), T::Str),
            Builtin::ReadStdin => (self.args(&what, &[], &[], args, span), T::Str),
            Builtin::Args => (self.args(&what, &[], &[], args, span), T::list(T::Str)),
            Builtin::Trap => (self.args(&what, &[T::Str], &[], args, span), T::Never),
        };
        let k = ExprKind::Call {
            callee: Callee::Builtin(b),
            args: ids,
        };
        (self.alloc(k, ret.clone(), span), ret)
    }

    fn lambda(
        &mut self,
        span: Span,
        params: &[ast::LambdaParam],
        body: &ast::Expr,
        expected: Option<&T>,
    ) -> (ExprId, T) {
        self.lambdas.push(LambdaFrame {
            scope_base: self.scopes.len(),
            captures: Vec::new(),
        });
        self.scopes.push(Vec::new());
        let mut locals = Vec::new();
        let mut tys = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for p in params {
            if let Some(first) = seen.get(p.name.text.as_str()) {
                self.diags.push(
                    Diagnostic::error(
                        p.name.span,
                        format!("parameter `{}` is declared twice", p.name.text),
                    )
                    .with_label(*first, "first declared here"),
                );
            }
            seen.insert(&p.name.text, p.name.span);
            let t = match &p.ty {
                Some(t) => T::from_ir(&self.resolver.lower(t, &mut self.diags)),
                None => self.table.fresh(),
            };
            locals.push(self.new_local(&p.name, t.clone(), LocalKind::Param));
            tys.push(t);
        }
        let mut ret = self.table.fresh();
        let mut reported = false;
        if let Some(exp) = expected {
            match self.table.shallow(exp) {
                T::Fn(ps, r) if ps.len() == params.len() => {
                    for (i, (have, want)) in tys.iter().zip(ps.iter()).enumerate() {
                        if self.table.unify(have, want).is_err()
                            && !self.table.has_error(have)
                            && !self.table.has_error(want)
                        {
                            let msg = format!(
                                "this parameter has type `{}` but `{}` is expected here",
                                self.show(have),
                                self.show(want)
                            );
                            self.err(params[i].name.span, msg);
                            reported = true;
                        }
                    }
                    ret = *r;
                }
                T::Fn(ps, _) => {
                    self.err(
                        span,
                        format!(
                            "this lambda takes {} parameter{}, but one taking {} is expected here",
                            params.len(),
                            if params.len() == 1 { "" } else { "s" },
                            ps.len()
                        ),
                    );
                    reported = true;
                }
                _ => {}
            }
        }
        let saved_ret = std::mem::replace(&mut self.ret, ret.clone());
        let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
        let b = if self.table.shallow(&ret) == T::Unit {
            // A lambda expected to return Unit discards its body's value,
            // like a Unit function does.
            let (b, bt) = self.expr_unused(body);
            if matches!(self.table.shallow(&bt), T::Unit | T::Never | T::Error) {
                b
            } else {
                let st = self.alloc_stmt(StmtKind::Expr(b), body.span);
                let k = ExprKind::Block {
                    stmts: vec![st],
                    tail: None,
                };
                self.alloc(k, T::Unit, body.span)
            }
        } else {
            self.expr_expect(body, &ret, "the lambda's result")
        };
        let bt = self.expr_ty(b);
        if matches!(self.table.shallow(&ret), T::Var(_)) && self.table.shallow(&bt) == T::Never {
            let _ = self.table.unify(&ret, &T::Never);
        }
        self.ret = saved_ret;
        self.loop_depth = saved_loop;
        self.scopes.pop();
        let frame = self.lambdas.pop().map(|f| f.captures).unwrap_or_default();
        // A reported parameter mismatch is not repeated for the whole lambda.
        let t = if reported {
            T::Error
        } else {
            T::func(tys, ret)
        };
        let k = ExprKind::Lambda {
            params: locals,
            body: b,
            captures: frame,
        };
        (self.alloc(k, t.clone(), span), t)
    }

    /// A method, field or index on a value whose type is still unknown.
    /// `e` is the lowered receiver: when it is a local, the hint names it.
    fn unknown_receiver(&mut self, span: Span, t: &T, e: ExprId) {
        let (msg, note) = match self.body.exprs[e].kind {
            ExprKind::Local(l) => {
                let local = &self.body.locals[l];
                let n = &local.name;
                let note = match local.kind {
                    LocalKind::Param => {
                        format!("give the lambda parameter a type, e.g. `|{n}: Str| ...`")
                    }
                    LocalKind::Var => format!("annotate it, e.g. `var {n}: List[Int] = ...`"),
                    _ => format!("annotate it, e.g. `let {n}: List[Int] = ...`"),
                };
                (format!("the type of `{n}` must be known here"), note)
            }
            _ => (
                "the type of this value must be known here".to_string(),
                "add a type annotation to the `let` or lambda parameter it comes from".to_string(),
            ),
        };
        self.diags
            .push(Diagnostic::error(span, msg).with_note(note));
        // Poison the unknown so it is not reported again.
        self.table.poison_all(t);
    }

    fn method(
        &mut self,
        receiver: &ast::Expr,
        name: &ast::Name,
        args: &[ast::Expr],
        parens: bool,
        span: Span,
    ) -> (ExprId, T) {
        let (r, rt) = self.expr(receiver);
        let rt = self.table.shallow(&rt);
        // A record field (written without parentheses).
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[id].kind {
                if let Some(i) = fields.iter().position(|(n, _)| *n == name.text) {
                    let t = T::from_ir(&fields[i].1);
                    if parens {
                        let ids: Vec<ExprId> = args.iter().map(|a| self.expr(a).0).collect();
                        let field = self.alloc(
                            ExprKind::Field {
                                base: r,
                                index: i as u32,
                            },
                            t.clone(),
                            name.span.cover(receiver.span),
                        );
                        return self.call_value(field, t, ids, span);
                    }
                    return (
                        self.alloc(
                            ExprKind::Field {
                                base: r,
                                index: i as u32,
                            },
                            t.clone(),
                            span,
                        ),
                        t,
                    );
                }
            }
        }
        if let T::Var(_) = rt {
            let args = args.iter().map(|a| self.expr(a).0).collect();
            let kind = PendingKind::Method {
                name: name.clone(),
                parens,
                args,
            };
            return self.defer_pending(r, rt, receiver.span, span, kind);
        }
        let sig = match &rt {
            T::Error | T::Never | T::Var(_) => None,
            _ => {
                let s = crate::methods::lookup(&mut self.table, &rt, &name.text);
                if s.is_none() {
                    self.no_method(&rt, name);
                }
                s
            }
        };
        let Some(sig) = sig else {
            for a in args {
                self.expr(a);
            }
            return self.missing(span);
        };
        let ids = self.args(
            &format!("method `{}`", name.text),
            &sig.params,
            &[],
            args,
            span,
        );
        for (t, need) in &sig.needs {
            let what = format!("`{}`", name.text);
            self.defer(span, t, *need, what);
        }
        if let Some(elem) = &sig.must_be_str_list {
            if self.table.unify(elem, &T::Str).is_err() && !self.table.has_error(elem) {
                let msg = format!("`join` needs a `List[Str]`, found `{}`", self.show(&rt));
                self.err(span, msg);
            }
        }
        let k = ExprKind::Method {
            method: sig.method,
            receiver: r,
            args: ids,
        };
        (self.alloc(k, sig.ret.clone(), span), sig.ret)
    }

    fn no_method(&mut self, rt: &T, name: &ast::Name) {
        let what = match rt {
            T::Adt(id) if matches!(self.items.types[*id].kind, TypeDefKind::Record { .. }) => {
                "no field or method"
            }
            _ => "no method",
        };
        let msg = format!("{what} `{}` on `{}`", name.text, self.show(rt));
        let mut candidates: Vec<String> = crate::methods::names(rt)
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[*id].kind {
                candidates.extend(fields.iter().map(|(n, _)| n.clone()));
            }
        }
        let d = Diagnostic::error(name.span, msg);
        let d = crate::suggest::did_you_mean(d, &name.text, candidates.iter().map(|s| s.as_str()));
        self.diags.push(d);
    }

    fn defer_pending(
        &mut self,
        recv: ExprId,
        recv_ty: T,
        recv_span: Span,
        span: Span,
        kind: PendingKind,
    ) -> (ExprId, T) {
        let result = self.table.fresh();
        let expr = self.alloc(ExprKind::Missing, result.clone(), span);
        self.pending.push(Pending {
            expr,
            recv,
            recv_ty,
            recv_span,
            result: result.clone(),
            span,
            kind,
        });
        (expr, result)
    }

    /// Resolves deferred methods, fields and indexing whose receivers are
    /// now known, repeatedly (one may decide another's receiver); what stays
    /// unknown is an error asking for an annotation.
    fn resolve_pending(&mut self) {
        loop {
            let all = std::mem::take(&mut self.pending);
            let before = all.len();
            let mut waiting = Vec::new();
            for p in all {
                if let T::Var(_) = self.table.shallow(&p.recv_ty) {
                    waiting.push(p);
                } else {
                    self.resolve_one(p);
                }
            }
            // Resolving may have queued nothing new; stop when stuck.
            let stuck = waiting.len() == before;
            self.pending.extend(waiting);
            if stuck || self.pending.is_empty() {
                break;
            }
        }
        for p in std::mem::take(&mut self.pending) {
            self.unknown_receiver(p.recv_span, &p.recv_ty, p.recv);
            self.table.poison_all(&p.result);
        }
    }

    fn resolve_one(&mut self, p: Pending) {
        let rt = self.table.shallow(&p.recv_ty);
        let (kind, ty) = match p.kind {
            PendingKind::Method { name, parens, args } => {
                self.method_lowered(p.recv, &rt, &name, parens, args, p.span)
            }
            PendingKind::TupleField { name } => {
                let idx: Option<u32> = name.text.parse().ok();
                match (&rt, idx) {
                    (T::Tuple(ts), Some(i)) if (i as usize) < ts.len() => (
                        ExprKind::Field {
                            base: p.recv,
                            index: i,
                        },
                        ts[i as usize].clone(),
                    ),
                    (T::Error | T::Never, _) => (ExprKind::Missing, T::Error),
                    _ => {
                        let msg = format!("no field `{}` on `{}`", name.text, self.show(&rt));
                        self.err(name.span, msg);
                        (ExprKind::Missing, T::Error)
                    }
                }
            }
            PendingKind::Index { index } => {
                let it = self.expr_ty(index);
                let isp = self.map.expr(index);
                match &rt {
                    T::List(e) => {
                        self.coerce(isp, &it, &T::Int, "a list index");
                        (
                            ExprKind::Index {
                                base: p.recv,
                                index,
                            },
                            (**e).clone(),
                        )
                    }
                    T::Map(k, v) => {
                        self.coerce(isp, &it, k, "a map key");
                        (
                            ExprKind::Index {
                                base: p.recv,
                                index,
                            },
                            (**v).clone(),
                        )
                    }
                    T::Error | T::Never => (ExprKind::Missing, T::Error),
                    other => {
                        let msg =
                            format!("cannot index into a value of type `{}`", self.show(other));
                        self.err(p.span, msg);
                        (ExprKind::Missing, T::Error)
                    }
                }
            }
        };
        self.body.exprs[p.expr].kind = kind;
        let _ = self.table.unify(&p.result, &ty);
    }

    /// A method call whose arguments are already lowered (deferred path).
    fn method_lowered(
        &mut self,
        r: ExprId,
        rt: &T,
        name: &ast::Name,
        parens: bool,
        args: Vec<ExprId>,
        span: Span,
    ) -> (ExprKind, T) {
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[*id].kind {
                if let Some(i) = fields.iter().position(|(n, _)| *n == name.text) {
                    let t = T::from_ir(&fields[i].1);
                    let field = ExprKind::Field {
                        base: r,
                        index: i as u32,
                    };
                    if !parens {
                        return (field, t);
                    }
                    let fspan = self.map.expr(r).cover(name.span);
                    let f = self.alloc(field, t.clone(), fspan);
                    return self.call_value_kind(f, t, args, span);
                }
            }
        }
        if matches!(rt, T::Error | T::Never) {
            return (ExprKind::Missing, T::Error);
        }
        let Some(sig) = crate::methods::lookup(&mut self.table, rt, &name.text) else {
            self.no_method(rt, name);
            return (ExprKind::Missing, T::Error);
        };
        if sig.params.len() != args.len() {
            let n = sig.params.len();
            self.err(
                span,
                format!(
                    "method `{}` takes {n} argument{}, but {} {} given",
                    name.text,
                    if n == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        for (a, p) in args.iter().zip(&sig.params) {
            let at = self.expr_ty(*a);
            let sp = self.map.expr(*a);
            self.coerce(sp, &at, p, "this argument");
        }
        for (t, need) in &sig.needs {
            self.defer(span, t, *need, format!("`{}`", name.text));
        }
        if let Some(elem) = &sig.must_be_str_list {
            if self.table.unify(elem, &T::Str).is_err() && !self.table.has_error(elem) {
                let msg = format!("`join` needs a `List[Str]`, found `{}`", self.show(rt));
                self.err(span, msg);
            }
        }
        (
            ExprKind::Method {
                method: sig.method,
                receiver: r,
                args,
            },
            sig.ret,
        )
    }

    /// `s.f(x)` where `f` is a record field of function type.
    fn call_value(&mut self, f: ExprId, ft: T, args: Vec<ExprId>, span: Span) -> (ExprId, T) {
        let (k, ret) = self.call_value_kind(f, ft, args, span);
        (self.alloc(k, ret.clone(), span), ret)
    }

    fn call_value_kind(
        &mut self,
        f: ExprId,
        ft: T,
        args: Vec<ExprId>,
        span: Span,
    ) -> (ExprKind, T) {
        let ret = match self.table.shallow(&ft) {
            T::Fn(ps, r) => {
                if ps.len() != args.len() {
                    self.err(
                        span,
                        format!(
                            "this function takes {} arguments, but {} were given",
                            ps.len(),
                            args.len()
                        ),
                    );
                }
                for (a, p) in args.iter().zip(ps.iter()) {
                    let at = self.expr_ty(*a);
                    let sp = self.map.expr(*a);
                    self.coerce(sp, &at, p, "this argument");
                }
                *r
            }
            T::Error => T::Error,
            other => {
                let msg = format!(
                    "`{}` is not a function and cannot be called",
                    self.show(&other)
                );
                self.err(span, msg);
                T::Error
            }
        };
        (
            ExprKind::Call {
                callee: Callee::Value(f),
                args,
            },
            ret,
        )
    }

    // ------------------------------------------------------------ finishing

    fn finish(&mut self) {
        self.resolve_pending();
        let mut reported: std::collections::HashSet<u32> = Default::default();
        // Locals first: their messages say which annotation to add.
        let locals: Vec<LocalId> = self.body.locals.iter().map(|(id, _)| id).collect();
        for (i, l) in locals.into_iter().enumerate() {
            let mut unknown = Vec::new();
            let ty = self.table.to_ir(&self.local_tys[i], &mut unknown);
            if unknown.iter().any(|v| !reported.contains(v)) {
                let msg = self.annotation_message(l, &self.local_tys[i].clone());
                let span = self.map.local(l);
                self.diags.push(msg.0);
                let _ = span;
            }
            reported.extend(unknown);
            self.body.locals[l].ty = ty;
        }
        let exprs: Vec<ExprId> = self.body.exprs.iter().map(|(id, _)| id).collect();
        for (i, e) in exprs.into_iter().enumerate() {
            let mut unknown = Vec::new();
            let ty = self.table.to_ir(&self.expr_tys[i], &mut unknown);
            if unknown.iter().any(|v| !reported.contains(v)) {
                let shown = self.show(&self.expr_tys[i].clone());
                self.diags.push(
                    Diagnostic::error(self.map.expr(e), "cannot infer the type of this expression")
                        .with_note(format!(
                            "its type is known only as `{shown}`; add a type annotation"
                        )),
                );
            }
            reported.extend(unknown);
            self.body.exprs[e].ty = ty;
        }
        let pats: Vec<PatId> = self.body.pats.iter().map(|(id, _)| id).collect();
        for (i, p) in pats.into_iter().enumerate() {
            let mut unknown = Vec::new();
            let ty = self.table.to_ir(&self.pat_tys[i], &mut unknown);
            self.body.pats[p].ty = ty;
        }
        for d in std::mem::take(&mut self.deferred) {
            let t = self.table.resolve(&d.ty);
            let mut unknown = Vec::new();
            let ty = self.table.to_ir(&t, &mut unknown);
            if !unknown.is_empty() || self.table.has_error(&t) || ty == Ty::Never {
                continue;
            }
            let (ok, allowed) = match d.need {
                Need::Numeric => (matches!(ty, Ty::Int | Ty::F64), "Int or F64"),
                Need::Add => (matches!(ty, Ty::Int | Ty::F64 | Ty::Str), "Int, F64 or Str"),
                Need::Compare => (
                    matches!(ty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Str),
                    "Int, F64, Bool or Str",
                ),
                Need::Sort => (
                    matches!(ty, Ty::Int | Ty::F64 | Ty::Bool | Ty::Str),
                    "Int, F64, Bool or Str",
                ),
                Need::MapKey => (
                    matches!(ty, Ty::Int | Ty::Bool | Ty::Str),
                    "Int, Str or Bool",
                ),
            };
            if !ok {
                let shown = ir::pretty::ty_to_string(self.items, &ty);
                let msg = match d.need {
                    Need::MapKey => format!("a map key cannot be `{shown}`"),
                    Need::Sort => format!("{} cannot sort values of type `{shown}`", d.what),
                    _ => format!("{} cannot be used on `{shown}`", d.what),
                };
                self.diags
                    .push(Diagnostic::error(d.span, msg).with_note(format!(
                        "{} works on {allowed}",
                        if matches!(d.need, Need::MapKey) {
                            "a map key"
                        } else {
                            d.what.as_str()
                        }
                    )));
            }
        }
        for (m, span) in std::mem::take(&mut self.matches) {
            if let Some(missing) = crate::exhaustive::check_match(self.items, &self.body, m) {
                self.diags.push(
                    Diagnostic::error(
                        span,
                        format!("non-exhaustive match: `{missing}` is not covered"),
                    )
                    .with_note("add an arm for it, or a `_` arm"),
                );
            }
        }
    }

    /// "cannot infer the type of `m`; add an annotation, e.g. ...".
    fn annotation_message(&self, l: LocalId, t: &T) -> (Diagnostic,) {
        let local = &self.body.locals[l];
        let name = &local.name;
        let example = self.example(t, false);
        let hint = self.local_hint.get(&l).map_or("...", |s| s.as_str());
        let eg = match local.kind {
            LocalKind::Param => format!("`|{name}: {example}| ...`"),
            LocalKind::Var => format!("`var {name}: {example} = {hint}`"),
            _ => format!("`let {name}: {example} = {hint}`"),
        };
        let d = Diagnostic::error(
            self.map.local(l),
            format!("cannot infer the type of `{name}`; add an annotation, e.g. {eg}"),
        )
        .with_note(format!("its type is known only as `{}`", self.show(t)));
        (d,)
    }

    /// The type with each unknown replaced by a plausible example.
    fn example(&self, t: &T, key: bool) -> String {
        match self.table.shallow(t) {
            T::Var(_) => if key { "Str" } else { "Int" }.to_string(),
            T::List(e) => format!("List[{}]", self.example(&e, false)),
            T::Option(e) => format!("Option[{}]", self.example(&e, false)),
            T::Map(k, v) => format!(
                "Map[{}, {}]",
                self.example(&k, true),
                self.example(&v, false)
            ),
            T::Tuple(ts) => {
                let v: Vec<String> = ts.iter().map(|t| self.example(t, false)).collect();
                format!("({})", v.join(", "))
            }
            T::Fn(ps, r) => {
                let v: Vec<String> = ps.iter().map(|t| self.example(t, false)).collect();
                format!("fn({}) -> {}", v.join(", "), self.example(&r, false))
            }
            other => self.show(&other),
        }
    }
}

fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "print" => Builtin::Print,
        "log" => Builtin::Log,
        "empty_map" => Builtin::EmptyMap,
        "read_file" => Builtin::ReadFile,
        "read_stdin" => Builtin::ReadStdin,
        "args" => Builtin::Args,
        "trap" => Builtin::Trap,
        _ => return None,
    })
}

/// The initialiser text worth repeating in an annotation hint.
fn init_hint(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        ast::ExprKind::List(es) if es.is_empty() => Some("[]".into()),
        ast::ExprKind::Ctor { name, args: None } if name.text == "None" => Some("None".into()),
        ast::ExprKind::Call { callee, args } if args.is_empty() => match &callee.kind {
            ast::ExprKind::Name(n) if n.text == "empty_map" => Some("empty_map()".into()),
            _ => None,
        },
        _ => None,
    }
}
