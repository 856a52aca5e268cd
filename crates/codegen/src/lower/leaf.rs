//! Small leaf functions lowered in place of their direct calls.
//!
//! A function whose body is one expression (a `match`, an `if`, a
//! comparison) over its parameters, with no call, no allocation, no drop
//! and nothing that can trap, costs more to call than to run: the call
//! saves and restores registers, and the caller spills what lives across
//! it. Such a body is lowered where it is called, its parameters bound to
//! the argument values. Nothing in it can trap or allocate, so no trap
//! call chain or allocation site misses its frame, and the collector sees
//! the same values (its parameters' are the caller's). A leaf calls
//! nothing, so inlining never recurses.

use super::Lowerer;
use ::ir::{BinOp, Body, ExprId, ExprKind, FnId, PatId, PatKind, Program, Ty};
use std::collections::HashMap;

/// Expressions and patterns a leaf body may have at most: bigger bodies
/// are called (inlining them everywhere would grow the code).
const MAX_NODES: usize = 40;

/// Which functions are leaves, decided once per function.
#[derive(Default)]
pub struct Leaves(HashMap<FnId, bool>);

impl Leaves {
    pub fn is_leaf(&mut self, prog: &Program, f: FnId) -> bool {
        *self.0.entry(f).or_insert_with(|| leaf_body(prog.body(f)))
    }
}

/// Whether `body` is a leaf: a root expression of the allowed kinds, and
/// small.
fn leaf_body(body: &Body) -> bool {
    let Some(root) = body.root else {
        return false;
    };
    let mut nodes = 0;
    expr_ok(body, root, &mut nodes)
}

fn expr_ok(body: &Body, e: ExprId, nodes: &mut usize) -> bool {
    *nodes += 1;
    if *nodes > MAX_NODES {
        return false;
    }
    match &body[e].kind {
        ExprKind::Lit(_) | ExprKind::Local(_) => true,
        ExprKind::Unary { operand, .. } => expr_ok(body, *operand, nodes),
        ExprKind::Binary { op, lhs, rhs } => {
            // Scalar operators only: integer division traps on zero, string
            // `+` allocates, and comparing compound values calls the runtime.
            let ok = match &body[*lhs].ty {
                Ty::Int | Ty::Bool => !matches!(op, BinOp::Div | BinOp::Rem),
                Ty::F64 => true,
                _ => false,
            };
            ok && expr_ok(body, *lhs, nodes) && expr_ok(body, *rhs, nodes)
        }
        ExprKind::Field { base, .. } => expr_ok(body, *base, nodes),
        // A nullary constructor is a static tag word.
        ExprKind::Ctor { args, .. } => args.is_empty(),
        ExprKind::If { cond, then, else_ } => {
            expr_ok(body, *cond, nodes)
                && expr_ok(body, *then, nodes)
                && else_.is_none_or(|x| expr_ok(body, x, nodes))
        }
        ExprKind::Match { scrutinee, arms } => {
            // A tuple literal the match takes apart is never built.
            let scrut_ok = match super::control::tuple_parts(body, *scrutinee, arms) {
                Some(xs) => xs.iter().all(|&x| expr_ok(body, x, nodes)),
                None => expr_ok(body, *scrutinee, nodes),
            };
            scrut_ok
                && arms
                    .iter()
                    .all(|a| pat_ok(body, a.pat, nodes) && expr_ok(body, a.body, nodes))
        }
        ExprKind::Block { stmts, tail } => {
            stmts.is_empty() && tail.is_some_and(|t| expr_ok(body, t, nodes))
        }
        _ => false,
    }
}

fn pat_ok(body: &Body, p: PatId, nodes: &mut usize) -> bool {
    *nodes += 1;
    if *nodes > MAX_NODES {
        return false;
    }
    match &body[p].kind {
        PatKind::Wild | PatKind::Bind(_) => true,
        // A string literal pattern compares through the runtime; the rest
        // are word compares.
        PatKind::Lit(l) => !matches!(l, ::ir::Lit::Str(_)),
        PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
            ps.iter().all(|q| pat_ok(body, *q, nodes))
        }
        PatKind::At { pat, .. } => pat_ok(body, *pat, nodes),
        PatKind::Missing => false,
    }
}

impl Lowerer<'_, '_, '_> {
    /// Lowers leaf `f`'s body in place of a call with the argument words
    /// `args`: the lowerer's per-body state is set aside, the body lowered
    /// with its parameters bound, and the state restored.
    pub(super) fn inline_leaf(&mut self, f: FnId, args: &[super::Value]) -> Option<super::Vals> {
        let body = self.prog.body(f);
        let root = body.root?;
        let saved_owner = std::mem::replace(&mut self.owner, f);
        let saved_body = std::mem::replace(&mut self.body, body);
        let saved_lets = std::mem::take(&mut self.lets);
        let saved_reuse = self.reuse.take();
        let mut at = 0;
        for &l in &body.params {
            let n = super::words(&body[l].ty);
            self.def_local(l, &args[at..at + n]);
            at += n;
        }
        let v = self.expr(root);
        self.owner = saved_owner;
        self.body = saved_body;
        self.lets = saved_lets;
        self.reuse = saved_reuse;
        v
    }
}
