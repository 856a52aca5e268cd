//! A compact, stable text dump of the AST for tests and debugging: one
//! node a line, children indented, spans as `@start..end`. Types and
//! patterns are printed inline in source-like form.

use std::fmt::Write;

use crate::ast::*;

/// The whole file, one item after another.
pub fn dump(file: &SourceFile) -> String {
    let mut out = String::new();
    for item in &file.items {
        match item {
            Item::Fn(f) => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("{}: {}", p.name.text, type_text(&p.ty)))
                    .collect();
                let ret = f
                    .ret
                    .as_ref()
                    .map(|t| format!(" -> {}", type_text(t)))
                    .unwrap_or_default();
                line(
                    &mut out,
                    0,
                    &format!("fn {}({}){ret}", f.name.text, params.join(", ")),
                    f.span,
                );
                block(&mut out, 1, &f.body);
            }
            Item::Type(t) => {
                let body = match &t.kind {
                    TypeDefKind::Record(fields) => {
                        let fs: Vec<String> = fields
                            .iter()
                            .map(|f| format!("{}: {}", f.name.text, type_text(&f.ty)))
                            .collect();
                        format!("{{ {} }}", fs.join(", "))
                    }
                    TypeDefKind::Sum(vs) => {
                        let vs: Vec<String> = vs
                            .iter()
                            .map(|v| {
                                if v.fields.is_empty() {
                                    v.name.text.clone()
                                } else {
                                    let fs: Vec<String> = v.fields.iter().map(type_text).collect();
                                    format!("{}({})", v.name.text, fs.join(", "))
                                }
                            })
                            .collect();
                        vs.join(" | ")
                    }
                };
                line(
                    &mut out,
                    0,
                    &format!("type {} = {body}", t.name.text),
                    t.span,
                );
            }
            Item::Const(c) => {
                let head = format!("let {}{}", c.name.text, opt_type(&c.ty));
                line(&mut out, 0, &head, c.span);
                expr(&mut out, 1, &c.init);
            }
        }
    }
    out
}

/// One expression and its subtree.
pub fn dump_expr(e: &Expr) -> String {
    let mut out = String::new();
    expr(&mut out, 0, e);
    out
}

fn line(out: &mut String, indent: usize, text: &str, span: crate::Span) {
    let _ = writeln!(
        out,
        "{:indent$}{text} @{}..{}",
        "",
        span.start,
        span.end,
        indent = indent * 2
    );
}

pub fn type_text(t: &TypeRef) -> String {
    match &t.kind {
        TypeRefKind::Named { name, args } if args.is_empty() => name.text.clone(),
        TypeRefKind::Named { name, args } => {
            let a: Vec<String> = args.iter().map(type_text).collect();
            format!("{}[{}]", name.text, a.join(", "))
        }
        TypeRefKind::Tuple(ts) => {
            let a: Vec<String> = ts.iter().map(type_text).collect();
            format!("({})", a.join(", "))
        }
        TypeRefKind::Fn { params, ret } => {
            let a: Vec<String> = params.iter().map(type_text).collect();
            match ret {
                Some(r) => format!("fn({}) -> {}", a.join(", "), type_text(r)),
                None => format!("fn({})", a.join(", ")),
            }
        }
    }
}

pub fn pat_text(p: &Pat) -> String {
    match &p.kind {
        PatKind::Wild => "_".to_string(),
        PatKind::Bind(n) => n.text.clone(),
        PatKind::Int(v) => v.to_string(),
        PatKind::Str(s) => format!("{s:?}"),
        PatKind::Bool(b) => b.to_string(),
        PatKind::Tuple(ps) => {
            let a: Vec<String> = ps.iter().map(pat_text).collect();
            format!("({})", a.join(", "))
        }
        PatKind::Ctor { name, args } if args.is_empty() => name.text.clone(),
        PatKind::Ctor { name, args } => {
            let a: Vec<String> = args.iter().map(pat_text).collect();
            format!("{}({})", name.text, a.join(", "))
        }
    }
}

fn block(out: &mut String, indent: usize, b: &Block) {
    line(out, indent, "block", b.span);
    for s in &b.stmts {
        stmt(out, indent + 1, s);
    }
    if let Some(t) = &b.tail {
        line(out, indent + 1, "tail", t.span);
        expr(out, indent + 2, t);
    }
}

fn opt_type(ty: &Option<TypeRef>) -> String {
    ty.as_ref()
        .map(|t| format!(": {}", type_text(t)))
        .unwrap_or_default()
}

fn stmt(out: &mut String, indent: usize, s: &Stmt) {
    match &s.kind {
        StmtKind::Let {
            pat,
            ty,
            init,
            else_,
        } => {
            line(
                out,
                indent,
                &format!("let {}{}", pat_text(pat), opt_type(ty)),
                s.span,
            );
            expr(out, indent + 1, init);
            if let Some(b) = else_ {
                line(out, indent + 1, "else", b.span);
                block(out, indent + 2, b);
            }
        }
        StmtKind::Var { name, ty, init } => {
            line(
                out,
                indent,
                &format!("var {}{}", name.text, opt_type(ty)),
                s.span,
            );
            expr(out, indent + 1, init);
        }
        StmtKind::Assign { name, value } => {
            line(out, indent, &format!("assign {}", name.text), s.span);
            expr(out, indent + 1, value);
        }
        StmtKind::For { pat, iter, body } => {
            line(out, indent, &format!("for {}", pat_text(pat)), s.span);
            expr(out, indent + 1, iter);
            block(out, indent + 1, body);
        }
        StmtKind::While { cond, body } => {
            line(out, indent, "while", s.span);
            expr(out, indent + 1, cond);
            block(out, indent + 1, body);
        }
        StmtKind::Expr(e) => {
            line(out, indent, "expr", s.span);
            expr(out, indent + 1, e);
        }
    }
}

fn expr(out: &mut String, indent: usize, e: &Expr) {
    let i = indent + 1;
    match &e.kind {
        ExprKind::Int(v) => line(out, indent, &format!("int {v}"), e.span),
        ExprKind::Float(bits) => line(
            out,
            indent,
            &format!("float {:?}", f64::from_bits(*bits)),
            e.span,
        ),
        ExprKind::Bool(b) => line(out, indent, &format!("bool {b}"), e.span),
        ExprKind::Str(parts) => {
            line(out, indent, "str", e.span);
            for p in parts {
                match p {
                    StrPart::Text(t) => {
                        let _ = writeln!(out, "{:w$}text {t:?}", "", w = i * 2);
                    }
                    StrPart::Hole(h) => expr(out, i, h),
                }
            }
        }
        ExprKind::Unit => line(out, indent, "unit", e.span),
        ExprKind::Name(n) => line(out, indent, &format!("name {}", n.text), e.span),
        ExprKind::Ctor { name, args: None } => {
            line(out, indent, &format!("ctor {}", name.text), e.span)
        }
        ExprKind::Ctor {
            name,
            args: Some(args),
        } => {
            line(out, indent, &format!("ctor {}()", name.text), e.span);
            exprs(out, i, args);
        }
        ExprKind::Record { name, fields } => {
            line(out, indent, &format!("record {}", name.text), e.span);
            for (n, v) in fields {
                line(out, i, &format!("field {}", n.text), n.span);
                expr(out, i + 1, v);
            }
        }
        ExprKind::Tuple(es) => {
            line(out, indent, "tuple", e.span);
            exprs(out, i, es);
        }
        ExprKind::List(es) => {
            line(out, indent, "list", e.span);
            exprs(out, i, es);
        }
        ExprKind::Range { lo, hi } => {
            line(out, indent, "range", e.span);
            expr(out, i, lo);
            expr(out, i, hi);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            line(out, indent, &format!("binary {op:?}"), e.span);
            expr(out, i, lhs);
            expr(out, i, rhs);
        }
        ExprKind::Unary { op, operand } => {
            line(out, indent, &format!("unary {op:?}"), e.span);
            expr(out, i, operand);
        }
        ExprKind::Call { callee, args } => {
            line(out, indent, "call", e.span);
            expr(out, i, callee);
            exprs(out, i, args);
        }
        ExprKind::Method {
            receiver,
            name,
            args,
            parens,
        } => {
            let p = if *parens { "()" } else { "" };
            line(out, indent, &format!("method {}{p}", name.text), e.span);
            expr(out, i, receiver);
            exprs(out, i, args);
        }
        ExprKind::Field { base, name } => {
            line(out, indent, &format!("field .{}", name.text), e.span);
            expr(out, i, base);
        }
        ExprKind::Index { base, index } => {
            line(out, indent, "index", e.span);
            expr(out, i, base);
            expr(out, i, index);
        }
        ExprKind::Lambda { params, body } => {
            let ps: Vec<String> = params
                .iter()
                .map(|p| format!("{}{}", p.name.text, opt_type(&p.ty)))
                .collect();
            line(out, indent, &format!("lambda |{}|", ps.join(", ")), e.span);
            expr(out, i, body);
        }
        ExprKind::If(if_) => {
            let IfExpr {
                pat,
                cond,
                then,
                else_,
            } = &**if_;
            match pat {
                Some(p) => line(out, indent, &format!("if let {}", pat_text(p)), e.span),
                None => line(out, indent, "if", e.span),
            }
            expr(out, i, cond);
            block(out, i, then);
            if let Some(x) = else_ {
                line(out, i, "else", x.span);
                expr(out, i + 1, x);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            line(out, indent, "match", e.span);
            expr(out, i, scrutinee);
            for a in arms {
                line(out, i, &format!("arm {}", pat_text(&a.pat)), a.span);
                expr(out, i + 1, &a.body);
            }
        }
        ExprKind::Block(b) => block(out, indent, b),
        ExprKind::Return(v) => {
            line(out, indent, "return", e.span);
            if let Some(v) = v {
                expr(out, i, v);
            }
        }
        ExprKind::Break => line(out, indent, "break", e.span),
        ExprKind::Continue => line(out, indent, "continue", e.span),
        ExprKind::Error => line(out, indent, "error", e.span),
    }
}

fn exprs(out: &mut String, indent: usize, es: &[Expr]) {
    for e in es {
        expr(out, indent, e);
    }
}
