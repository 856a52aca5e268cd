//! Moves every span of a function's AST by a fixed delta.
//!
//! The driver stores each function's AST relative to the function's start,
//! so editing one function (which shifts the absolute positions of all the
//! functions after it) leaves the others' ASTs, and so their lowered bodies,
//! unchanged.

use syntax::ast::*;
use syntax::Span;

pub fn fn_def(f: &mut FnDef, delta: i64) {
    span(&mut f.span, delta);
    name(&mut f.name, delta);
    for p in &mut f.params {
        name(&mut p.name, delta);
        type_ref(&mut p.ty, delta);
    }
    if let Some(t) = &mut f.ret {
        type_ref(t, delta);
    }
    block(&mut f.body, delta);
}

fn span(s: &mut Span, delta: i64) {
    *s = s.shift(delta);
}

fn name(n: &mut Name, delta: i64) {
    span(&mut n.span, delta);
}

fn type_ref(t: &mut TypeRef, delta: i64) {
    span(&mut t.span, delta);
    match &mut t.kind {
        TypeRefKind::Named { name: n, args } => {
            name(n, delta);
            args.iter_mut().for_each(|a| type_ref(a, delta));
        }
        TypeRefKind::Tuple(elems) => elems.iter_mut().for_each(|a| type_ref(a, delta)),
        TypeRefKind::Fn { params, ret } => {
            params.iter_mut().for_each(|a| type_ref(a, delta));
            if let Some(r) = ret {
                type_ref(r, delta);
            }
        }
    }
}

fn block(b: &mut Block, delta: i64) {
    span(&mut b.span, delta);
    for s in &mut b.stmts {
        stmt(s, delta);
    }
    if let Some(t) = &mut b.tail {
        expr(t, delta);
    }
}

fn stmt(s: &mut Stmt, delta: i64) {
    span(&mut s.span, delta);
    match &mut s.kind {
        StmtKind::Let {
            pat: p,
            ty,
            init,
            else_,
        } => {
            pat(p, delta);
            if let Some(t) = ty {
                type_ref(t, delta);
            }
            expr(init, delta);
            if let Some(b) = else_ {
                block(b, delta);
            }
        }
        StmtKind::Var { name: n, ty, init } => {
            name(n, delta);
            if let Some(t) = ty {
                type_ref(t, delta);
            }
            expr(init, delta);
        }
        StmtKind::Assign { name: n, value } => {
            name(n, delta);
            expr(value, delta);
        }
        StmtKind::For { pat: p, iter, body } => {
            pat(p, delta);
            expr(iter, delta);
            block(body, delta);
        }
        StmtKind::While { cond, body } => {
            expr(cond, delta);
            block(body, delta);
        }
        StmtKind::Expr(e) => expr(e, delta),
    }
}

fn exprs(es: &mut [Expr], delta: i64) {
    es.iter_mut().for_each(|e| expr(e, delta));
}

fn expr(e: &mut Expr, delta: i64) {
    span(&mut e.span, delta);
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Unit
        | ExprKind::Break
        | ExprKind::Continue
        | ExprKind::Error => {}
        ExprKind::Str(parts) => {
            for p in parts {
                if let StrPart::Hole(h) = p {
                    expr(h, delta);
                }
            }
        }
        ExprKind::Name(n) => name(n, delta),
        ExprKind::Ctor { name: n, args } => {
            name(n, delta);
            if let Some(a) = args {
                exprs(a, delta);
            }
        }
        ExprKind::Record { name: n, fields } => {
            name(n, delta);
            for (f, v) in fields {
                name(f, delta);
                expr(v, delta);
            }
        }
        ExprKind::Tuple(es) | ExprKind::List(es) => exprs(es, delta),
        ExprKind::Range { lo, hi } => {
            expr(lo, delta);
            expr(hi, delta);
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            expr(lhs, delta);
            expr(rhs, delta);
        }
        ExprKind::Unary { operand, .. } => expr(operand, delta),
        ExprKind::Call { callee, args } => {
            expr(callee, delta);
            exprs(args, delta);
        }
        ExprKind::Method {
            receiver,
            name: n,
            args,
            ..
        } => {
            expr(receiver, delta);
            name(n, delta);
            exprs(args, delta);
        }
        ExprKind::Field { base, name: n } => {
            expr(base, delta);
            name(n, delta);
        }
        ExprKind::Index { base, index } => {
            expr(base, delta);
            expr(index, delta);
        }
        ExprKind::Lambda { params, body } => {
            for p in params {
                name(&mut p.name, delta);
                if let Some(t) = &mut p.ty {
                    type_ref(t, delta);
                }
            }
            expr(body, delta);
        }
        ExprKind::If(if_) => {
            let IfExpr {
                pat: p,
                cond,
                then,
                else_,
            } = &mut **if_;
            if let Some(p) = p {
                pat(p, delta);
            }
            expr(cond, delta);
            block(then, delta);
            if let Some(e) = else_ {
                expr(e, delta);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            expr(scrutinee, delta);
            for arm in arms {
                span(&mut arm.span, delta);
                pat(&mut arm.pat, delta);
                expr(&mut arm.body, delta);
            }
        }
        ExprKind::Block(b) => block(b, delta),
        ExprKind::Return(v) => {
            if let Some(v) = v {
                expr(v, delta);
            }
        }
    }
}

fn pat(p: &mut Pat, delta: i64) {
    span(&mut p.span, delta);
    match &mut p.kind {
        PatKind::Wild | PatKind::Int(_) | PatKind::Str(_) | PatKind::Bool(_) => {}
        PatKind::Bind(n) => name(n, delta),
        PatKind::Tuple(ps) => ps.iter_mut().for_each(|q| pat(q, delta)),
        PatKind::Ctor { name: n, args } => {
            name(n, delta);
            args.iter_mut().for_each(|q| pat(q, delta));
        }
    }
}
