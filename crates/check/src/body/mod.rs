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
    Body, BodySourceMap, Builtin, ExprId, ExprKind, FnId, ItemTree, Local, LocalId, LocalKind,
    PatId, PatKind, StmtId, StmtKind, Ty, TypeId,
};
use syntax::ast;
use syntax::{Diagnostic, Span};

use crate::infer::{Mismatch, Table, T};
use crate::items::{ItemIndex, TypeResolver};
use crate::warnings::{MatchOrigin, Warning};

mod call;
mod expr;
mod method;
mod pat;
mod stmt;

/// Stack for lowering one body: the parser allows ASTs 1024 levels deep,
/// and a debug build spends several KB of stack per level.
const STACK_SIZE: usize = 256 << 20;

/// One lowered function body: the IR, its positions, its errors, and its
/// warnings (found only when there are no errors).
pub struct Lowered {
    pub body: Body,
    pub source_map: BodySourceMap,
    pub diagnostics: Vec<Diagnostic>,
    pub warnings: Vec<Warning>,
}

/// Lowers one function body. Looks only at the item tree and this
/// function's AST. Runs on a thread with a large stack (reserved, not
/// committed) so deeply nested expressions cannot overflow the caller's.
/// `index` is `ItemIndex::new(items)`, built once for all bodies.
pub fn lower_body(items: &ItemTree, index: &ItemIndex, f: FnId, def: &ast::FnDef) -> Lowered {
    with_big_stack(|| lower_body_here(items, index, f, def))
}

/// Runs `work` on a thread with a [`STACK_SIZE`] stack.
pub(crate) fn with_big_stack<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    stdx::with_big_stack(STACK_SIZE, "sspur-check", work)
}

/// [`lower_body`] on the current thread (its caller provides the stack).
pub(crate) fn lower_body_here(
    items: &ItemTree,
    index: &ItemIndex,
    f: FnId,
    def: &ast::FnDef,
) -> Lowered {
    let mut cx = Cx::new(items, index);
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
    let origins = cx.finish();
    let warnings = if cx.diags.is_empty() {
        crate::warnings::body_warnings(items, &cx.body, &cx.map, &origins)
    } else {
        Vec::new()
    };
    Lowered {
        body: cx.body,
        source_map: cx.map,
        diagnostics: cx.diags,
        warnings,
    }
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
    /// Functions, types and constructors by name.
    index: &'a ItemIndex,
    resolver: TypeResolver<'a>,
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
    /// Every `match` (with its scrutinee's span and the form it stands
    /// for), checked for exhaustiveness at the end.
    matches: Vec<(ExprId, Span, MatchOrigin)>,
    pending: Vec<Pending>,
    /// `if`s without `else` whose value is used (it is Unit): a mismatch
    /// at one of these spans says so.
    elseless_ifs: Vec<Span>,
}

impl<'a> Cx<'a> {
    fn new(items: &'a ItemTree, index: &'a ItemIndex) -> Cx<'a> {
        Cx {
            items,
            index,
            resolver: TypeResolver {
                names: &index.types,
            },
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
            elseless_ifs: Vec::new(),
        }
    }

    fn find_fn(&self, name: &str) -> Option<FnId> {
        self.index.fns.get(name).copied()
    }

    /// A use of the top-level constant `name`: its value written out as
    /// literals at `span` (see `crate::consts`).
    fn constant(&mut self, name: &str, span: Span) -> Option<(ExprId, T)> {
        let &i = self.index.consts.get(name)?;
        let def = &self.items.consts[i];
        let t = T::from_ir(&def.ty);
        Some((self.const_value(&def.value, &def.ty, span), t))
    }

    fn const_value(&mut self, v: &ir::ConstValue, ty: &Ty, span: Span) -> ExprId {
        let kind = match (v, ty) {
            (ir::ConstValue::Lit(l), Ty::Error) => {
                let _ = l;
                ExprKind::Missing
            }
            (ir::ConstValue::Lit(l), _) => ExprKind::Lit(l.clone()),
            (ir::ConstValue::List(vs), Ty::List(e)) => {
                let ids = vs.iter().map(|x| self.const_value(x, e, span)).collect();
                ExprKind::List(ids)
            }
            (ir::ConstValue::List(_), _) => ExprKind::Missing,
        };
        self.alloc(kind, T::from_ir(ty), span)
    }

    fn find_type(&self, name: &str) -> Option<TypeId> {
        self.index.types.get(name).copied()
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
        self.lookup_for(name, false)
    }

    /// [`Self::lookup`]; `assign` says the use is `name := ..`, which
    /// changes the advice for a captured `var`.
    fn lookup_for(&mut self, name: &ast::Name, assign: bool) -> Option<LocalId> {
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
            let note = if assign {
                format!(
                    "a lambda cannot change the function's `var`s; to accumulate over a list use `fold` (e.g. `let {n} = xs.fold({n}, |acc, x| acc + x)`), or write a `for` loop instead of the lambda"
                )
            } else {
                format!(
                    "copy it into a `let` first, e.g. `let {n}_now = {n}`, and use that inside the lambda"
                )
            };
            self.diags.push(
                Diagnostic::error(name.span, format!("a lambda cannot capture `var {n}`"))
                    .with_label(self.map.local(id), "declared with `var` here")
                    .with_note(note),
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
                    if self.elseless_ifs.contains(&span) {
                        d = d.with_note(
                            "this `if` has no `else`, so its value is `Unit`; add an `else` with a value",
                        );
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

    /// Solves and checks what waited for the whole body; returns the form
    /// each `match` came from, for the warnings.
    fn finish(&mut self) -> Vec<(ExprId, MatchOrigin)> {
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
        let mut origins = Vec::new();
        for (m, span, origin) in std::mem::take(&mut self.matches) {
            if let Some(missing) = crate::exhaustive::check_match(self.items, &self.body, m) {
                self.diags.push(
                    Diagnostic::error(
                        span,
                        format!("non-exhaustive match: `{missing}` is not covered"),
                    )
                    .with_note("add an arm for it, or a `_` arm"),
                );
            }
            origins.push((m, origin));
        }
        origins
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
    Builtin::from_name(name)
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
