//! A stable, readable printer for the IR (what snapshots show).
//!
//! The output looks like Sspur source with every `let` and lambda parameter
//! annotated with its inferred type, one statement per line, indented by
//! four spaces. A local prints as `name` when its name is unique in the
//! body, and as `name#N` (N = its index in the body's local arena) when the
//! name is shadowed or the local is an ownership temporary, so a snapshot
//! always says which binding is meant.
//!
//! The ownership pass's forms print as:
//! - `drop xs (reason 3)` / `drop deep lines (reason 4)`, or with the
//!   reason's text when the caller renders it ([`program_with_drop_reasons`]);
//! - `x := e  [free old]`, `[free old deep]`, `[free old if moved]`;
//! - `m.put_owned(k, v)` for [`ExprKind::PutOwnedKey`];
//! - `xs.set_in_place(i, v) (reason 2)` for [`ExprKind::SetInPlace`], or
//!   with the reason's text;
//! - `builder_new(", ")`, `builder_push(b, e)`, `builder_finish(b)`;
//! - `[fused: ...]` after a fused chain and `[upsert: ...]` after the put
//!   of a fused upsert (`crate::upsert`).

use std::fmt::Write;

use crate::{
    BinOp, Body, Builtin, Callee, Ctor, ExprId, ExprKind, FnId, InterpPart, ItemTree, Lit, LocalId,
    LocalKind, OldValue, PatId, PatKind, Program, StmtId, StmtKind, Ty, TypeDefKind, UnOp,
};

/// Renders the reason of drop `reason` of function `f`, when it knows it.
pub type DropWhy<'a> = dyn Fn(FnId, u32) -> Option<String> + Sync + 'a;

/// Prints the program's types, then every function, in source order.
pub fn program(p: &Program) -> String {
    program_with(p, None)
}

/// Like [`program`], with each drop's reason printed beside it.
pub fn program_with_drop_reasons(p: &Program, why: &DropWhy) -> String {
    program_with(p, Some(why))
}

fn program_with(p: &Program, why: Option<&DropWhy>) -> String {
    let mut out = String::new();
    for (_, def) in p.items.types.iter() {
        out.push_str(&type_def(&p.items, def));
        out.push('\n');
    }
    if !p.items.types.is_empty() {
        out.push('\n');
    }
    let fns = with_big_stack(|| {
        let mut fns = String::new();
        // With drops shown, fused chains are marked too.
        let effects = why.map(|_| crate::effects::Effects::of(p));
        for (i, (id, _)) in p.items.fns.iter().enumerate() {
            if i > 0 {
                fns.push('\n');
            }
            if let Some(b) = p.bodies.get(i) {
                let plan = effects.as_ref().map(|fx| crate::fusion::Plan::body(b, fx));
                let upserts = why.map(|_| crate::upsert::Plan::body(b));
                fns.push_str(&function_here(
                    &p.items,
                    id,
                    b,
                    why,
                    (plan.as_ref(), upserts.as_ref()),
                ));
            }
        }
        fns
    });
    out.push_str(&fns);
    out
}

/// A function's printed name: `ins`, or `ins#owning` for the owning
/// version the ownership pass made of `ins`, with `#token` for a version
/// taking a reuse token.
pub fn fn_name(sig: &crate::FnSig) -> String {
    let base = match sig.owning_of {
        Some(_) => format!("{}#owning", sig.name),
        None => sig.name.clone(),
    };
    if sig.takes_token {
        format!("{base}#token")
    } else {
        base
    }
}

/// Prints one function: its signature and body.
pub fn body(p: &Program, f: FnId) -> String {
    let idx = f.into_raw().into_u32() as usize;
    match p.bodies.get(idx) {
        Some(b) => function(&p.items, f, b),
        None => String::new(),
    }
}

/// Prints one function given its body directly (for callers that hold a
/// body outside a [`Program`], e.g. while checking one function).
///
/// Printing recurses once per level of nesting and bodies may nest 1024
/// levels deep, so it runs on a thread with a large (reserved, not
/// committed) stack.
pub fn function(items: &ItemTree, f: FnId, body: &Body) -> String {
    with_big_stack(|| function_here(items, f, body, None, (None, None)))
}

/// Runs `work` on a thread with a 256 MB stack (reserved, not committed).
fn with_big_stack<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    stdx::with_big_stack(256 << 20, "sspur-pretty", work)
}

fn function_here(
    items: &ItemTree,
    f: FnId,
    body: &Body,
    why: Option<&DropWhy>,
    plans: (Option<&crate::fusion::Plan>, Option<&crate::upsert::Plan>),
) -> String {
    let sig = &items.fns[f];
    let mut pr = Printer::new(items, body);
    pr.why = why.map(|w| (f, w));
    (pr.fusion, pr.upserts) = plans;
    let _ = write!(pr.out, "fn {}(", fn_name(sig));
    for (i, (name, ty)) in sig.params.iter().enumerate() {
        if i > 0 {
            pr.out.push_str(", ");
        }
        // Prefer the body's locals (they carry the shadowing-aware names).
        match body.params.get(i) {
            Some(&l) => {
                let n = pr.local(l);
                let _ = write!(pr.out, "{n}: {}", ty_to_string(items, ty));
            }
            None => {
                let _ = write!(pr.out, "{name}: {}", ty_to_string(items, ty));
            }
        }
    }
    pr.out.push(')');
    if sig.ret != Ty::Unit {
        let _ = write!(pr.out, " -> {}", ty_to_string(items, &sig.ret));
    }
    pr.out.push(' ');
    match body.root {
        Some(root) => pr.block_like(root),
        None => pr.out.push_str("{ <no body> }"),
    }
    pr.out.push('\n');
    pr.out
}

/// `type Name = { f: T, ... }` or `type Name = A | B(T, U)`.
pub fn type_def(items: &ItemTree, def: &crate::TypeDef) -> String {
    match &def.kind {
        TypeDefKind::Record { fields } => {
            let fs: Vec<String> = fields
                .iter()
                .map(|(n, t)| format!("{n}: {}", ty_to_string(items, t)))
                .collect();
            format!("type {} = {{ {} }}", def.name, fs.join(", "))
        }
        TypeDefKind::Sum { variants } => {
            let vs: Vec<String> = variants
                .iter()
                .map(|v| {
                    if v.fields.is_empty() {
                        v.name.clone()
                    } else {
                        let fs: Vec<String> =
                            v.fields.iter().map(|t| ty_to_string(items, t)).collect();
                        format!("{}({})", v.name, fs.join(", "))
                    }
                })
                .collect();
            format!("type {} = {}", def.name, vs.join(" | "))
        }
    }
}

/// A type as written in Sspur source (`List[Int]`, `fn(Int) -> Str`).
pub fn ty_to_string(items: &ItemTree, ty: &Ty) -> String {
    let mut s = String::new();
    write_ty(&mut s, items, ty);
    s
}

fn write_ty(s: &mut String, items: &ItemTree, ty: &Ty) {
    match ty {
        Ty::Int => s.push_str("Int"),
        Ty::F64 => s.push_str("F64"),
        Ty::Bool => s.push_str("Bool"),
        Ty::Str => s.push_str("Str"),
        Ty::Unit => s.push_str("Unit"),
        Ty::Never => s.push_str("Never"),
        Ty::StrBuilder => s.push_str("StrBuilder"),
        Ty::Error => s.push_str("{error}"),
        Ty::List(t) => {
            s.push_str("List[");
            write_ty(s, items, t);
            s.push(']');
        }
        Ty::Option(t) => {
            s.push_str("Option[");
            write_ty(s, items, t);
            s.push(']');
        }
        Ty::Map(k, v) => {
            s.push_str("Map[");
            write_ty(s, items, k);
            s.push_str(", ");
            write_ty(s, items, v);
            s.push(']');
        }
        Ty::Tuple(ts) => {
            s.push('(');
            write_tys(s, items, ts);
            s.push(')');
        }
        Ty::Fn(ps, r) => {
            s.push_str("fn(");
            write_tys(s, items, ps);
            s.push_str(") -> ");
            write_ty(s, items, r);
        }
        Ty::Adt(id) => match items.types.iter().find(|(i, _)| i == id) {
            Some((_, d)) => s.push_str(&d.name),
            None => s.push_str("{unknown type}"),
        },
    }
}

/// Types separated by `, `.
fn write_tys(s: &mut String, items: &ItemTree, ts: &[Ty]) {
    for (i, t) in ts.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_ty(s, items, t);
    }
}

struct Printer<'a> {
    items: &'a ItemTree,
    body: &'a Body,
    out: String,
    indent: usize,
    /// Per local: the name it prints as.
    names: Vec<String>,
    /// The function printed and the renderer of its drop reasons.
    why: Option<(FnId, &'a DropWhy<'a>)>,
    /// The body's fusion plan (printed with the drops).
    fusion: Option<&'a crate::fusion::Plan>,
    /// The body's upsert plan (printed with the drops).
    upserts: Option<&'a crate::upsert::Plan>,
}

impl<'a> Printer<'a> {
    /// `  [fused: range -> map -> sum]` after a fused chain's consumer.
    fn fused_mark(&mut self, chain: Option<&crate::fusion::Chain>) {
        if let Some(c) = chain {
            let _ = write!(self.out, "  [fused: {}]", c.names(self.body).join(" -> "));
        }
    }

    /// `  [upsert: get_or -> put, one probe]` after a fused upsert's put.
    fn upsert_mark(&mut self, e: ExprId) {
        if let Some(u) = self.upserts.and_then(|p| p.fused_put(e)) {
            let _ = write!(self.out, "  [upsert: {} -> put, one probe]", u.kind.name());
        }
    }

    fn new(items: &'a ItemTree, body: &'a Body) -> Printer<'a> {
        let mut counts: std::collections::HashMap<&str, usize> = Default::default();
        for (_, l) in body.locals.iter() {
            *counts.entry(l.name.as_str()).or_default() += 1;
        }
        let names = body
            .locals
            .iter()
            .enumerate()
            .map(|(i, (_, l))| {
                if l.kind == LocalKind::Temp || counts[l.name.as_str()] > 1 {
                    format!("{}#{i}", l.name)
                } else {
                    l.name.clone()
                }
            })
            .collect();
        Printer {
            items,
            body,
            out: String::new(),
            indent: 0,
            names,
            why: None,
            fusion: None,
            upserts: None,
        }
    }

    fn local(&self, l: LocalId) -> String {
        let idx = l.into_raw().into_u32() as usize;
        match self.names.get(idx) {
            Some(n) => n.clone(),
            None => format!("<local {idx}>"),
        }
    }

    fn ty(&self, ty: &Ty) -> String {
        ty_to_string(self.items, ty)
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    /// Prints a block expression, or any other expression wrapped in braces.
    fn block_like(&mut self, e: ExprId) {
        if matches!(self.body[e].kind, ExprKind::Block { .. }) {
            self.expr(e);
        } else {
            self.out.push_str("{ ");
            self.expr(e);
            self.out.push_str(" }");
        }
    }

    fn stmt(&mut self, s: StmtId) {
        let body = self.body;
        match &body[s].kind {
            StmtKind::Let { pat, init } => {
                self.out.push_str("let ");
                self.pat(*pat);
                let t = self.ty(&body[*pat].ty);
                let _ = write!(self.out, ": {t} = ");
                self.expr(*init);
                if self.fusion.and_then(|p| p.let_fused(s)).is_some() {
                    self.out.push_str("  [fused into its use]");
                }
            }
            StmtKind::Var { local, init } => {
                let n = self.local(*local);
                let t = self.ty(&body[*local].ty);
                let _ = write!(self.out, "var {n}: {t} = ");
                self.expr(*init);
            }
            StmtKind::Assign { local, value, old } => {
                let n = self.local(*local);
                let _ = write!(self.out, "{n} := ");
                self.expr(*value);
                match old {
                    OldValue::Keep => {}
                    OldValue::Free { deep: false } => self.out.push_str("  [free old]"),
                    OldValue::Free { deep: true } => self.out.push_str("  [free old deep]"),
                    OldValue::FreeIfMoved => self.out.push_str("  [free old if moved]"),
                    OldValue::FreeCell { deep, reason } => {
                        self.out.push_str(if *deep {
                            "  [free old deep]"
                        } else {
                            "  [free old]"
                        });
                        self.reason(*reason);
                    }
                }
            }
            StmtKind::Expr(e) => self.expr(*e),
            StmtKind::For { pat, iter, body: b } => {
                self.out.push_str("for ");
                self.pat(*pat);
                self.out.push_str(" in ");
                self.expr(*iter);
                let chain = self.fusion.and_then(|p| p.fused_for(s));
                self.fused_mark(chain);
                self.out.push(' ');
                self.block_like(*b);
            }
            StmtKind::While { cond, body: b } => {
                self.out.push_str("while ");
                self.expr(*cond);
                self.out.push(' ');
                self.block_like(*b);
            }
            StmtKind::Drop(d) => {
                let n = self.local(d.local);
                let deep = if d.deep { "deep " } else { "" };
                match self.why.and_then(|(f, why)| why(f, d.reason)) {
                    Some(text) => {
                        let _ = write!(self.out, "drop {deep}{n} ({text})");
                    }
                    None => {
                        let _ = write!(self.out, "drop {deep}{n} (reason {})", d.reason);
                    }
                }
            }
            StmtKind::Clear { local, reason, .. } => {
                let n = self.local(*local);
                match self.why.and_then(|(f, why)| why(f, *reason)) {
                    Some(text) => {
                        let _ = write!(self.out, "clear {n} ({text})");
                    }
                    None => {
                        let _ = write!(self.out, "clear {n} (reason {reason})");
                    }
                }
            }
        }
    }

    /// Prints `e`, parenthesised when it is an operator expression (so
    /// nesting is unambiguous without precedence rules).
    fn operand(&mut self, e: ExprId) {
        let wrap = matches!(
            self.body[e].kind,
            ExprKind::Binary { .. }
                | ExprKind::Unary { .. }
                | ExprKind::Range { .. }
                | ExprKind::Lambda { .. }
                | ExprKind::If { .. }
                | ExprKind::Match { .. }
                | ExprKind::Return(_)
        );
        if wrap {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    fn args(&mut self, args: &[ExprId]) {
        self.list('(', args, ')', |p, a| p.expr(a));
    }

    /// `open` items separated by `, ` `close`.
    fn list<T: Copy>(
        &mut self,
        open: char,
        items: &[T],
        close: char,
        mut each: impl FnMut(&mut Self, T),
    ) {
        self.out.push(open);
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            each(self, *x);
        }
        self.out.push(close);
    }

    fn ctor_name(&self, ctor: Ctor) -> String {
        match ctor {
            Ctor::Some => "Some".into(),
            Ctor::None => "None".into(),
            Ctor::User(t, i) => match self.items.types.iter().find(|(id, _)| *id == t) {
                Some((_, def)) => match &def.kind {
                    TypeDefKind::Sum { variants } => variants
                        .get(i as usize)
                        .map(|v| v.name.clone())
                        .unwrap_or_else(|| format!("<variant {i}>")),
                    TypeDefKind::Record { .. } => def.name.clone(),
                },
                None => format!("<variant {i}>"),
            },
        }
    }

    fn field_name(&self, base_ty: &Ty, index: u32) -> String {
        if let Ty::Adt(t) = base_ty {
            if let Some((_, def)) = self.items.types.iter().find(|(id, _)| id == t) {
                if let TypeDefKind::Record { fields } = &def.kind {
                    if let Some((n, _)) = fields.get(index as usize) {
                        return n.clone();
                    }
                }
            }
        }
        index.to_string()
    }

    fn expr(&mut self, e: ExprId) {
        let body = self.body;
        match &body[e].kind {
            ExprKind::Missing => self.out.push_str("<missing>"),
            ExprKind::Lit(l) => lit(&mut self.out, l),
            ExprKind::Local(l) => {
                let n = self.local(*l);
                self.out.push_str(&n);
            }
            ExprKind::Func(f) => {
                let n = self
                    .items
                    .fns
                    .iter()
                    .find(|(id, _)| id == f)
                    .map(|(_, s)| s.name.clone());
                self.out.push_str(&n.unwrap_or_else(|| "<fn>".into()));
            }
            ExprKind::Interp(parts) => {
                self.out.push('"');
                for p in parts {
                    match p {
                        InterpPart::Text(t) => escape_into(&mut self.out, t),
                        InterpPart::Expr(x) => {
                            self.out.push('{');
                            self.expr(*x);
                            self.out.push('}');
                        }
                    }
                }
                self.out.push('"');
            }
            ExprKind::Unary { op, operand } => {
                self.out.push_str(match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                });
                self.operand(*operand);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.operand(*lhs);
                let _ = write!(self.out, " {} ", BinOp::symbol(*op));
                self.operand(*rhs);
            }
            ExprKind::Call { callee, args } => {
                match callee {
                    Callee::Fn(f) => {
                        let n = self
                            .items
                            .fns
                            .iter()
                            .find(|(id, _)| id == f)
                            .map(|(_, s)| fn_name(s));
                        self.out.push_str(&n.unwrap_or_else(|| "<fn>".into()));
                    }
                    Callee::Builtin(b) => self.out.push_str(Builtin::name(*b)),
                    Callee::Value(v) => {
                        if matches!(body[*v].kind, ExprKind::Local(_)) {
                            self.expr(*v);
                        } else {
                            self.out.push('(');
                            self.expr(*v);
                            self.out.push(')');
                        }
                    }
                }
                self.args(args);
            }
            ExprKind::Method {
                method,
                receiver,
                args,
            } => {
                self.operand(*receiver);
                let _ = write!(self.out, ".{}", method.name());
                if !args.is_empty() {
                    self.args(args);
                }
                let chain = self.fusion.and_then(|p| p.fused_consumer(e));
                self.fused_mark(chain);
                self.upsert_mark(e);
            }
            ExprKind::Index { base, index } => {
                self.operand(*base);
                self.out.push('[');
                self.expr(*index);
                self.out.push(']');
            }
            ExprKind::Field { base, index } => {
                self.operand(*base);
                let n = self.field_name(&body[*base].ty, *index);
                let _ = write!(self.out, ".{n}");
            }
            ExprKind::Record { ty, fields } => {
                let def = self
                    .items
                    .types
                    .iter()
                    .find(|(id, _)| id == ty)
                    .map(|(_, d)| d);
                let name = def
                    .map(|d| d.name.clone())
                    .unwrap_or_else(|| "<record>".into());
                let _ = write!(self.out, "{name} {{ ");
                for (i, (fi, fe)) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let n = self.field_name(&Ty::Adt(*ty), *fi);
                    let _ = write!(self.out, "{n}: ");
                    self.expr(*fe);
                }
                self.out.push_str(" }");
            }
            ExprKind::Tuple(es) => {
                self.args(es);
            }
            ExprKind::Ctor { ctor, args } => {
                let n = self.ctor_name(*ctor);
                self.out.push_str(&n);
                if !args.is_empty() {
                    self.args(args);
                }
            }
            ExprKind::List(es) => self.list('[', es, ']', |p, x| p.expr(x)),
            ExprKind::Range { lo, hi } => {
                self.operand(*lo);
                self.out.push_str("..");
                self.operand(*hi);
            }
            ExprKind::Lambda {
                params,
                body: b,
                captures,
            } => {
                self.list('|', params, '|', |pr, p| {
                    let n = pr.local(p);
                    let t = pr.ty(&body[p].ty);
                    let _ = write!(pr.out, "{n}: {t}");
                });
                self.out.push(' ');
                if !captures.is_empty() {
                    let cs: Vec<String> = captures.iter().map(|c| self.local(*c)).collect();
                    let _ = write!(self.out, "[captures {}] ", cs.join(", "));
                }
                self.expr(*b);
            }
            ExprKind::If { cond, then, else_ } => {
                self.out.push_str("if ");
                self.expr(*cond);
                self.out.push(' ');
                self.block_like(*then);
                if let Some(el) = else_ {
                    self.out.push_str(" else ");
                    if matches!(body[*el].kind, ExprKind::If { .. }) {
                        self.expr(*el);
                    } else {
                        self.block_like(*el);
                    }
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.out.push_str("match ");
                self.expr(*scrutinee);
                self.out.push_str(" {");
                self.indent += 1;
                for arm in arms {
                    self.newline();
                    self.pat(arm.pat);
                    self.out.push_str(" => ");
                    self.expr(arm.body);
                }
                self.indent -= 1;
                self.newline();
                self.out.push('}');
            }
            ExprKind::Block { stmts, tail } => {
                if stmts.is_empty() && tail.is_none() {
                    self.out.push_str("{}");
                    return;
                }
                self.out.push('{');
                self.indent += 1;
                for s in stmts {
                    self.newline();
                    self.stmt(*s);
                }
                if let Some(t) = tail {
                    self.newline();
                    self.expr(*t);
                }
                self.indent -= 1;
                self.newline();
                self.out.push('}');
            }
            ExprKind::Return(v) => {
                self.out.push_str("return");
                if let Some(v) = v {
                    self.out.push(' ');
                    self.expr(*v);
                }
            }
            ExprKind::Break => self.out.push_str("break"),
            ExprKind::Continue => self.out.push_str("continue"),
            ExprKind::PutOwnedKey { map, key, value } => {
                self.operand(*map);
                self.out.push_str(".put_owned(");
                self.expr(*key);
                self.out.push_str(", ");
                self.expr(*value);
                self.out.push(')');
                self.upsert_mark(e);
            }
            ExprKind::SetInPlace {
                list,
                index,
                value,
                reason,
            } => {
                self.operand(*list);
                self.out.push_str(".set_in_place(");
                self.expr(*index);
                self.out.push_str(", ");
                self.expr(*value);
                self.out.push(')');
                self.reason(*reason);
            }
            ExprKind::BuilderNew { sep } => {
                self.out.push_str("builder_new(");
                lit(&mut self.out, &Lit::Str(sep.clone()));
                self.out.push(')');
            }
            ExprKind::BuilderPush { builder, value } => {
                let n = self.local(*builder);
                let _ = write!(self.out, "builder_push({n}, ");
                self.expr(*value);
                self.out.push(')');
            }
            ExprKind::BuilderFinish { builder } => {
                let n = self.local(*builder);
                let _ = write!(self.out, "builder_finish({n})");
            }
            ExprKind::Reuse {
                token,
                value,
                reason,
            } => {
                let n = self.local(*token);
                let _ = write!(self.out, "reuse {n} for ");
                self.expr(*value);
                self.reason(*reason);
            }
        }
    }

    /// ` (text)` of a decision's reason, or ` (reason N)` without a renderer.
    fn reason(&mut self, reason: u32) {
        match self.why.and_then(|(f, why)| why(f, reason)) {
            Some(text) => {
                let _ = write!(self.out, " ({text})");
            }
            None => {
                let _ = write!(self.out, " (reason {reason})");
            }
        }
    }

    fn pat(&mut self, p: PatId) {
        let body = self.body;
        match &body[p].kind {
            PatKind::Missing => self.out.push_str("<missing>"),
            PatKind::Wild => self.out.push('_'),
            PatKind::Bind(l) => {
                let n = self.local(*l);
                self.out.push_str(&n);
            }
            PatKind::Lit(l) => lit(&mut self.out, l),
            PatKind::At { local, pat } => {
                let n = self.local(*local);
                self.out.push_str(&n);
                self.out.push_str(" @ ");
                self.pat(*pat);
            }
            PatKind::Tuple(ps) => self.list('(', ps, ')', |p, q| p.pat(q)),
            PatKind::Ctor { ctor, args } => {
                let n = self.ctor_name(*ctor);
                self.out.push_str(&n);
                if !args.is_empty() {
                    self.list('(', args, ')', |p, q| p.pat(q));
                }
            }
        }
    }
}

fn lit(out: &mut String, l: &Lit) {
    match l {
        Lit::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Lit::F64(f) => {
            let _ = write!(out, "{f:?}");
        }
        Lit::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Lit::Str(s) => {
            out.push('"');
            escape_into(out, s);
            out.push('"');
        }
        Lit::Unit => out.push_str("()"),
    }
}

/// Escapes text as a Sspur string literal would need it.
fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}
