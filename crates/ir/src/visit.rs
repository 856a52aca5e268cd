//! The one child visitor of the IR: every expression kind's direct
//! children, in evaluation order. The rewrite, analyses and tests walk
//! expressions through it, so a new expression kind is added in one place.

use crate::{Callee, ExprId, ExprKind, InterpPart, StmtKind};

/// Visits an expression's direct children in evaluation order. A block's
/// statements and tail are not visited: walkers handle statements (and
/// the scopes they open) themselves.
pub fn children_mut(kind: &mut ExprKind, f: &mut dyn FnMut(&mut ExprId)) {
    match kind {
        ExprKind::Missing
        | ExprKind::Lit(_)
        | ExprKind::Local(_)
        | ExprKind::Func(_)
        | ExprKind::Break
        | ExprKind::Continue
        | ExprKind::BuilderNew { .. }
        | ExprKind::BuilderFinish { .. }
        | ExprKind::Block { .. } => {}
        ExprKind::Interp(parts) => {
            for p in parts {
                if let InterpPart::Expr(x) = p {
                    f(x);
                }
            }
        }
        ExprKind::Unary { operand, .. } => f(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Call { callee, args } => {
            if let Callee::Value(c) = callee {
                f(c);
            }
            args.iter_mut().for_each(f);
        }
        ExprKind::Method { receiver, args, .. } => {
            f(receiver);
            args.iter_mut().for_each(f);
        }
        ExprKind::Index { base, index } => {
            f(base);
            f(index);
        }
        ExprKind::Field { base, .. } => f(base),
        ExprKind::Record { fields, .. } => fields.iter_mut().for_each(|(_, x)| f(x)),
        ExprKind::Tuple(xs) | ExprKind::List(xs) | ExprKind::Ctor { args: xs, .. } => {
            xs.iter_mut().for_each(f)
        }
        ExprKind::Range { lo, hi } => {
            f(lo);
            f(hi);
        }
        ExprKind::Lambda { body, .. } => f(body),
        ExprKind::If { cond, then, else_ } => {
            f(cond);
            f(then);
            if let Some(x) = else_ {
                f(x);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            f(scrutinee);
            for a in arms {
                f(&mut a.body);
            }
        }
        ExprKind::Return(v) => {
            if let Some(v) = v {
                f(v);
            }
        }
        ExprKind::PutOwnedKey { map, key, value } => {
            f(map);
            f(key);
            f(value);
        }
        ExprKind::SetInPlace {
            list, index, value, ..
        } => {
            f(list);
            f(index);
            f(value);
        }
        ExprKind::BuilderPush { value, .. } | ExprKind::Reuse { value, .. } => f(value),
    }
}

/// A statement's direct child expressions, in evaluation order.
pub fn stmt_children(kind: &StmtKind) -> Vec<ExprId> {
    match kind {
        StmtKind::Let { init, .. } | StmtKind::Var { init, .. } => vec![*init],
        StmtKind::Assign { value, .. } => vec![*value],
        StmtKind::Expr(x) => vec![*x],
        StmtKind::For { iter, body, .. } => vec![*iter, *body],
        StmtKind::While { cond, body } => vec![*cond, *body],
        StmtKind::Drop(_) | StmtKind::Clear { .. } => Vec::new(),
    }
}

pub fn children(kind: &ExprKind) -> Vec<ExprId> {
    let mut k = kind.clone();
    let mut out = Vec::new();
    children_mut(&mut k, &mut |c| out.push(*c));
    out
}
