//! Expressions: literals, names, `if` and `match`, constructors, records,
//! operators and lambdas.

use super::{Cx, LambdaFrame, Need, PendingKind};
use crate::infer::T;
use crate::items::BUILTIN_FNS;
use crate::warnings::MatchOrigin;
use ir::{
    BinOp, ExprId, ExprKind, InterpPart, Lit, LocalKind, MatchArm, StmtKind, TypeDefKind, UnOp,
};
use std::collections::HashMap;
use syntax::ast;
use syntax::{Diagnostic, Span};

impl<'a> Cx<'a> {
    /// Lowers `e` where a value of type `expected` is needed. Lambdas see
    /// the expected type first, so their parameters get known types.
    pub(super) fn expr_expect(&mut self, e: &ast::Expr, expected: &T, what: &str) -> ExprId {
        let (id, t) = match &e.kind {
            ast::ExprKind::Lambda { params, body } => {
                self.lambda(e.span, params, body, Some(expected))
            }
            _ => self.expr(e),
        };
        self.coerce(e.span, &t, expected, what);
        id
    }

    pub(super) fn expr(&mut self, e: &ast::Expr) -> (ExprId, T) {
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
            ast::ExprKind::If(if_) => self.if_expr(
                if_.pat.as_ref(),
                &if_.cond,
                &if_.then,
                if_.else_.as_deref(),
                span,
                false,
            ),
            ast::ExprKind::Match { scrutinee, arms } => {
                let arms: Vec<Arm> = arms.iter().map(Arm::of).collect();
                self.match_expr(scrutinee, &arms, span, false, MatchOrigin::Match)
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
    pub(super) fn expr_unused(&mut self, e: &ast::Expr) -> (ExprId, T) {
        match &e.kind {
            ast::ExprKind::If(if_) => self.if_expr(
                if_.pat.as_ref(),
                &if_.cond,
                &if_.then,
                if_.else_.as_deref(),
                e.span,
                true,
            ),
            ast::ExprKind::Match { scrutinee, arms } => {
                let arms: Vec<Arm> = arms.iter().map(Arm::of).collect();
                self.match_expr(scrutinee, &arms, e.span, true, MatchOrigin::Match)
            }
            ast::ExprKind::Block(b) => self.block(b, true),
            _ => self.expr(e),
        }
    }

    pub(super) fn if_expr(
        &mut self,
        pat: Option<&ast::Pat>,
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
                    kind: ast::ExprKind::If(if_),
                    ..
                }) => complete(if_.else_.as_deref()),
                Some(_) => true,
            }
        }
        if let Some(pat) = pat {
            // `if let P = e { a } else { b }` is `match e { P => a, _ => b }`.
            let wild = ast::Pat {
                kind: ast::PatKind::Wild,
                span: pat.span,
            };
            let otherwise = match else_ {
                Some(e) => ArmBody::Expr(e),
                None => ArmBody::Unit(Span::new(span.end, span.end)),
            };
            let arms = [
                Arm {
                    pat,
                    body: ArmBody::Block(then),
                },
                Arm {
                    pat: &wild,
                    body: otherwise,
                },
            ];
            if !unused && !complete(else_) {
                self.elseless_ifs.push(span);
            }
            let unused = unused || !complete(else_);
            return self.match_expr(cond, &arms, span, unused, MatchOrigin::IfLet);
        }
        let c = self.expr_expect(cond, &T::Bool, "an `if` condition");
        if !unused && !complete(else_) {
            self.elseless_ifs.push(span);
        }
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

    pub(super) fn match_expr(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[Arm],
        span: Span,
        unused: bool,
        origin: MatchOrigin,
    ) -> (ExprId, T) {
        let what = match origin {
            MatchOrigin::IfLet => "`if let` and `else`",
            MatchOrigin::Match | MatchOrigin::LetElse => "`match` arms",
        };
        let (s, st) = self.expr(scrutinee);
        let mut out = Vec::new();
        let mut ty = T::Never;
        let mut all_never = true;
        for arm in arms {
            self.scopes.push(Vec::new());
            let mut seen = HashMap::new();
            let p = self.pat(arm.pat, &st, true, LocalKind::Let, &mut seen);
            let (mut b, bt) = match arm.body {
                ArmBody::Expr(e) if unused => self.expr_unused(e),
                ArmBody::Expr(e) => self.expr(e),
                ArmBody::Block(b) => self.block(b, unused),
                ArmBody::Unit(at) => (self.alloc(ExprKind::Lit(Lit::Unit), T::Unit, at), T::Unit),
            };
            let body_span = arm.body.span();
            self.scopes.pop();
            all_never &= self.table.shallow(&bt) == T::Never;
            if unused {
                if !matches!(self.table.shallow(&bt), T::Unit | T::Never | T::Error) {
                    // Wrap the value into `{ value; }` so every arm is Unit.
                    let st = self.alloc_stmt(StmtKind::Expr(b), body_span);
                    let k = ExprKind::Block {
                        stmts: vec![st],
                        tail: None,
                    };
                    b = self.alloc(k, T::Unit, body_span);
                }
            } else {
                ty = self.join(&ty, &bt, body_span, what);
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
        self.matches.push((id, scrutinee.span, origin));
        (id, ty)
    }

    pub(super) fn name(&mut self, name: &ast::Name, span: Span) -> (ExprId, T) {
        if let Some(l) = self.lookup(name) {
            let t = self.local_ty(l);
            return (self.alloc(ExprKind::Local(l), t.clone(), span), t);
        }
        if let Some(c) = self.constant(&name.text, span) {
            return c;
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

    pub(super) fn ctor_expr(
        &mut self,
        name: &ast::Name,
        args: Option<&[ast::Expr]>,
        span: Span,
    ) -> (ExprId, T) {
        if args.is_none() {
            if let Some(c) = self.constant(&name.text, span) {
                return c;
            }
        }
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

    pub(super) fn record(
        &mut self,
        name: &ast::Name,
        fields: &[(ast::Name, ast::Expr)],
        span: Span,
    ) -> (ExprId, T) {
        let def = self
            .find_type(&name.text)
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

    pub(super) fn binary(
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

    pub(super) fn lambda(
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
}

/// A `match` arm as the checker lowers it: a written arm, or one of the
/// two arms `if let` stands for.
pub(super) struct Arm<'x> {
    pub(super) pat: &'x ast::Pat,
    pub(super) body: ArmBody<'x>,
}

pub(super) enum ArmBody<'x> {
    Expr(&'x ast::Expr),
    Block(&'x ast::Block),
    /// The missing `else` of an `if let`.
    Unit(Span),
}

impl<'x> Arm<'x> {
    fn of(a: &'x ast::MatchArm) -> Arm<'x> {
        Arm {
            pat: &a.pat,
            body: ArmBody::Expr(&a.body),
        }
    }
}

impl ArmBody<'_> {
    fn span(&self) -> Span {
        match self {
            ArmBody::Expr(e) => e.span,
            ArmBody::Block(b) => b.span,
            ArmBody::Unit(s) => *s,
        }
    }
}
