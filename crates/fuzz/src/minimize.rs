//! The minimizer: removes functions, statements and match arms, inlines
//! statement bodies, and replaces expressions by the simplest value of
//! their type or by a sub-expression of the same type, keeping each edit
//! only while the program still type-checks and the finding remains.

use std::time::{Duration, Instant};

use crate::model::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    RemoveStmt,
    /// An `if`, `for` or `while` statement replaced by its body's
    /// statements.
    Inline,
    RemoveArm,
    Replace,
    /// A block expression's statements moved out in front of the statement
    /// (or tail) it is the value of: `let x = { s; e }` to `s; let x = e`.
    Flatten,
}

struct Cursor {
    target: usize,
    seen: usize,
    hit: bool,
}

impl Cursor {
    fn at(&mut self) -> bool {
        let h = self.seen == self.target;
        self.seen += 1;
        if h {
            self.hit = true;
        }
        h
    }
}

/// Limits on one minimization.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Candidate programs run at most.
    pub runs: usize,
    pub time: Duration,
}

/// Reduces `prog` while `still(text)` holds for the rendered candidate
/// (which is called only on candidates that type-check). Returns the
/// smallest program found and the number of candidates run.
pub fn minimize(
    prog: &Program,
    budget: Budget,
    mut still: impl FnMut(&str) -> bool,
) -> (Program, usize) {
    let start = Instant::now();
    let mut best = prog.clone();
    let mut best_text = best.render();
    let mut runs = 0usize;
    let out_of_budget = |runs: usize| runs >= budget.runs || start.elapsed() > budget.time;
    let mut try_candidate =
        |cand: Program, best: &mut Program, best_text: &mut String, runs: &mut usize| {
            let text = cand.render();
            if text.len() >= best_text.len() && text == *best_text {
                return false;
            }
            if check::check_source(&text).is_err() {
                return false;
            }
            *runs += 1;
            if still(&text) {
                *best = cand;
                *best_text = text;
                true
            } else {
                false
            }
        };
    loop {
        let mut changed = false;
        // Whole functions (not main, the last).
        let mut i = best.fns.len().saturating_sub(1);
        while i > 0 {
            i -= 1;
            if out_of_budget(runs) {
                return (best, runs);
            }
            let mut cand = best.clone();
            cand.fns.remove(i);
            if try_candidate(cand, &mut best, &mut best_text, &mut runs) {
                changed = true;
            }
        }
        for op in [
            Op::RemoveStmt,
            Op::Inline,
            Op::Flatten,
            Op::RemoveArm,
            Op::Replace,
        ] {
            let mut k = count(&best, op);
            while k > 0 {
                k -= 1;
                if out_of_budget(runs) {
                    return (best, runs);
                }
                let mut cand = best.clone();
                if !apply(&mut cand, op, k) {
                    continue;
                }
                if try_candidate(cand, &mut best, &mut best_text, &mut runs) {
                    changed = true;
                    k = k.min(count(&best, op));
                }
            }
        }
        // Unused user types.
        let mut i = best.types.len();
        while i > 0 {
            i -= 1;
            let mut cand = best.clone();
            if remove_type(&mut cand, i) && check::check_source(&cand.render()).is_ok() {
                best_text = cand.render();
                best = cand;
            }
        }
        if !changed {
            return (best, runs);
        }
    }
}

/// Removes type `i` if nothing names it (types after it are renumbered).
fn remove_type(p: &mut Program, i: usize) -> bool {
    let text = p.render();
    let name = p.types[i].name.clone();
    let mut names = vec![name.clone()];
    if let TypeKind::Sum(vs) = &p.types[i].kind {
        names.extend(vs.iter().map(|(n, _)| n.clone()));
    }
    // Every use of a name other than in its own declaration line.
    let decl = text
        .lines()
        .find(|l| l.starts_with(&format!("type {name} ")))
        .unwrap_or("");
    let rest: String = text
        .lines()
        .filter(|l| *l != decl)
        .collect::<Vec<_>>()
        .join("\n");
    let used = names.iter().any(|n| {
        rest.match_indices(n.as_str()).any(|(at, _)| {
            let before = rest[..at].chars().next_back();
            let after = rest[at + n.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    });
    if used {
        return false;
    }
    p.types.remove(i);
    // Renumber: Ty::User indices above i move down by one.
    for t in &mut p.types {
        match &mut t.kind {
            TypeKind::Record(fs) => fs.iter_mut().for_each(|(_, t)| renumber(t, i)),
            TypeKind::Sum(vs) => vs
                .iter_mut()
                .for_each(|(_, fs)| fs.iter_mut().for_each(|t| renumber(t, i))),
        }
    }
    for f in &mut p.fns {
        f.params.iter_mut().for_each(|(_, t)| renumber(t, i));
        renumber(&mut f.ret, i);
        if let Some(b) = &mut f.fuel {
            renumber_expr(b, i);
        }
        renumber_block(&mut f.body, i);
    }
    true
}

fn renumber(t: &mut Ty, gone: usize) {
    match t {
        Ty::User(j) if *j > gone => *j -= 1,
        Ty::List(e) | Ty::Opt(e) => renumber(e, gone),
        Ty::Map(k, v) => {
            renumber(k, gone);
            renumber(v, gone);
        }
        Ty::Tuple(ts) => ts.iter_mut().for_each(|t| renumber(t, gone)),
        Ty::Fn(ps, r) => {
            ps.iter_mut().for_each(|t| renumber(t, gone));
            renumber(r, gone);
        }
        _ => {}
    }
}

fn renumber_block(b: &mut Block, gone: usize) {
    for s in &mut b.stmts {
        match s {
            Stmt::Let { ty, init, .. } => {
                renumber(ty, gone);
                renumber_expr(init, gone);
            }
            Stmt::LetElse {
                ty, init, diverge, ..
            } => {
                renumber(ty, gone);
                renumber_expr(init, gone);
                renumber_block(diverge, gone);
            }
            Stmt::LetTuple { init: e, .. }
            | Stmt::Assign { value: e, .. }
            | Stmt::Expr(e)
            | Stmt::Return(Some(e)) => renumber_expr(e, gone),
            Stmt::For { iter, body, .. } => {
                renumber_expr(iter, gone);
                renumber_block(body, gone);
            }
            Stmt::While { cond, body, .. } => {
                if let Some(c) = cond {
                    renumber_expr(c, gone);
                }
                renumber_block(body, gone);
            }
            Stmt::If { cond, then, else_ } => {
                renumber_expr(cond, gone);
                renumber_block(then, gone);
                if let Some(e) = else_ {
                    renumber_block(e, gone);
                }
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue => {}
        }
    }
    if let Some(t) = &mut b.tail {
        renumber_expr(t, gone);
    }
}

fn renumber_expr(e: &mut Expr, gone: usize) {
    renumber(&mut e.ty, gone);
    match &mut e.kind {
        Kind::Lambda(ps, b) => {
            ps.iter_mut().for_each(|(_, t)| renumber(t, gone));
            renumber_block(b, gone);
        }
        Kind::If(c, a, b) | Kind::IfLet(_, c, a, b) => {
            renumber_expr(c, gone);
            renumber_block(a, gone);
            renumber_block(b, gone);
        }
        Kind::Block(b) => renumber_block(b, gone),
        Kind::Match(s, arms) => {
            renumber_expr(s, gone);
            arms.iter_mut()
                .for_each(|a| renumber_expr(&mut a.body, gone));
        }
        _ => children_mut(e)
            .into_iter()
            .for_each(|c| renumber_expr(c, gone)),
    }
}

/// The direct sub-expressions of `e` (not those inside blocks).
fn children_mut(e: &mut Expr) -> Vec<&mut Expr> {
    match &mut e.kind {
        Kind::Lit(_) | Kind::Var(_) | Kind::Lambda(..) | Kind::If(..) | Kind::Block(_) => vec![],
        Kind::IfLet(_, s, ..) => vec![&mut **s],
        Kind::Match(s, _) => vec![&mut **s],
        Kind::Call(_, args) | Kind::RecCall(_, args) | Kind::List(args) | Kind::Tuple(args) => {
            args.iter_mut().collect()
        }
        Kind::Ctor(_, args) => args.iter_mut().collect(),
        Kind::CallValue(f, args) => {
            let mut v = vec![&mut **f];
            v.extend(args.iter_mut());
            v
        }
        Kind::Method(r, _, args) => {
            let mut v = vec![&mut **r];
            v.extend(args.iter_mut());
            v
        }
        Kind::Bin(_, a, b) | Kind::Index(a, b) | Kind::Range(a, b) => vec![&mut **a, &mut **b],
        Kind::Unary(_, a) | Kind::Field(a, _) => vec![&mut **a],
        Kind::Record(_, fs) => fs.iter_mut().map(|(_, v)| v).collect(),
        Kind::Interp(parts) => parts
            .iter_mut()
            .filter_map(|p| match p {
                Part::Hole(h) => Some(h),
                Part::Text(_) => None,
            })
            .collect(),
    }
}

/// The simplest expression of type `t`, if there is one.
fn default_of(p: &Program, t: &Ty) -> Option<Expr> {
    Some(match t {
        Ty::Int => Expr::int(0),
        Ty::Bool => Expr::lit(Ty::Bool, "false"),
        Ty::Str => Expr::lit(Ty::Str, "\"\""),
        Ty::F64 => Expr::lit(Ty::F64, "0.0"),
        Ty::List(_) => Expr::lit(t.clone(), "[]"),
        Ty::Map(..) => Expr::lit(t.clone(), "empty_map()"),
        Ty::Opt(_) => Expr::lit(t.clone(), "None"),
        Ty::Tuple(ts) => Expr::new(
            t.clone(),
            Kind::Tuple(ts.iter().map(|t| default_of(p, t)).collect::<Option<_>>()?),
        ),
        Ty::User(i) => match &p.types.get(*i)?.kind {
            TypeKind::Record(fs) => Expr::new(
                t.clone(),
                Kind::Record(
                    p.types[*i].name.clone(),
                    fs.iter()
                        .map(|(n, t)| Some((n.clone(), default_of(p, t)?)))
                        .collect::<Option<_>>()?,
                ),
            ),
            TypeKind::Sum(vs) => {
                let (n, _) = vs.iter().find(|(_, fs)| fs.is_empty())?;
                Expr::new(t.clone(), Kind::Ctor(n.clone(), vec![]))
            }
        },
        Ty::Unit | Ty::Fn(..) => return None,
    })
}

/// The replacements tried for `e`: the simplest value of its type, then
/// its parts of the same type.
fn replacements(p: &Program, e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    if let Some(d) = default_of(p, &e.ty) {
        if d != *e {
            out.push(d);
        }
    }
    let mut e2 = e.clone();
    for c in children_mut(&mut e2) {
        if c.ty == e.ty {
            out.push(c.clone());
        }
    }
    let as_expr = |b: &Block| -> Expr {
        if b.stmts.is_empty() {
            if let Some(t) = &b.tail {
                return (**t).clone();
            }
        }
        Expr::new(e.ty.clone(), Kind::Block(Box::new(b.clone())))
    };
    match &e.kind {
        Kind::If(_, a, b) => {
            out.push(as_expr(a));
            out.push(as_expr(b));
        }
        // The then block may use the pattern's names: only the else block
        // stands alone.
        Kind::IfLet(_, _, _, b) => out.push(as_expr(b)),
        Kind::Match(_, arms) => {
            for a in arms {
                out.push(a.body.clone());
            }
        }
        Kind::Block(b) if b.stmts.is_empty() => {
            if let Some(t) = &b.tail {
                out.push((**t).clone());
            }
        }
        // A lambda called on the spot: its body, after a `let` per
        // parameter.
        Kind::CallValue(f, args) => {
            if let Kind::Lambda(ps, body) = &f.kind {
                let mut stmts: Vec<Stmt> = ps
                    .iter()
                    .zip(args)
                    .map(|((name, ty), a)| Stmt::Let {
                        name: name.clone(),
                        ty: ty.clone(),
                        mutable: false,
                        init: a.clone(),
                    })
                    .collect();
                stmts.extend(body.stmts.iter().cloned());
                let b = Block {
                    stmts,
                    tail: body.tail.clone(),
                };
                out.push(Expr::new(e.ty.clone(), Kind::Block(Box::new(b))));
            }
        }
        _ => {}
    }
    out
}

fn count(p: &Program, op: Op) -> usize {
    let mut q = p.clone();
    let mut cur = Cursor {
        target: usize::MAX,
        seen: 0,
        hit: false,
    };
    walk_program(&mut q, p, op, &mut cur);
    cur.seen
}

fn apply(p: &mut Program, op: Op, target: usize) -> bool {
    let orig = p.clone();
    let mut cur = Cursor {
        target,
        seen: 0,
        hit: false,
    };
    walk_program(p, &orig, op, &mut cur);
    cur.hit
}

fn walk_program(p: &mut Program, orig: &Program, op: Op, cur: &mut Cursor) {
    for f in &mut p.fns {
        if let Some(b) = &mut f.fuel {
            walk_expr(b, orig, op, cur);
        }
        walk_block(&mut f.body, orig, op, cur);
        if cur.hit {
            return;
        }
    }
}

fn walk_block(b: &mut Block, p: &Program, op: Op, cur: &mut Cursor) {
    let mut i = 0;
    while i < b.stmts.len() {
        if cur.hit {
            return;
        }
        match op {
            Op::RemoveStmt if cur.at() => {
                b.stmts.remove(i);
                return;
            }
            Op::Inline => {
                let body = match &b.stmts[i] {
                    Stmt::If { then, else_, .. } => {
                        let mut v = then.stmts.clone();
                        if let Some(e) = else_ {
                            v.extend(e.stmts.iter().cloned());
                        }
                        Some(v)
                    }
                    Stmt::For { body, .. } | Stmt::While { body, .. } => Some(body.stmts.clone()),
                    _ => None,
                };
                if let Some(body) = body {
                    if cur.at() {
                        b.stmts.splice(i..=i, body);
                        return;
                    }
                }
            }
            Op::Flatten => {
                let value = match &mut b.stmts[i] {
                    Stmt::Let { init: e, .. }
                    | Stmt::LetTuple { init: e, .. }
                    | Stmt::LetElse { init: e, .. }
                    | Stmt::Assign { value: e, .. }
                    | Stmt::Expr(e)
                    | Stmt::Return(Some(e))
                    | Stmt::For { iter: e, .. }
                    | Stmt::If { cond: e, .. } => Some(e),
                    _ => None,
                };
                if let Some(e) = value {
                    let whole = block_with_stmts(e).is_some();
                    if let Some(inner) = first_block(e) {
                        let Kind::Block(blk) = &mut inner.kind else {
                            unreachable!("first_block returns a block")
                        };
                        // A nested block needs a value to leave behind.
                        if (whole || blk.tail.is_some()) && cur.at() {
                            let stmts = std::mem::take(&mut blk.stmts);
                            match blk.tail.take() {
                                Some(t) => *inner = *t,
                                None => {
                                    b.stmts.remove(i);
                                }
                            }
                            b.stmts.splice(i..i, stmts);
                            return;
                        }
                    }
                }
            }
            _ => {}
        }
        walk_stmt(&mut b.stmts[i], p, op, cur);
        i += 1;
    }
    if cur.hit {
        return;
    }
    if op == Op::Flatten {
        if let Some(t) = &mut b.tail {
            if let Some(inner) = block_with_stmts(t) {
                if cur.at() {
                    let stmts = std::mem::take(&mut inner.stmts);
                    let tail = inner.tail.take();
                    b.stmts.extend(stmts);
                    b.tail = tail;
                    return;
                }
            }
        }
    }
    if let Some(t) = &mut b.tail {
        walk_expr(t, p, op, cur);
    }
}

/// The block `e` is, when it has statements.
fn block_with_stmts(e: &mut Expr) -> Option<&mut Block> {
    match &mut e.kind {
        Kind::Block(b) if !b.stmts.is_empty() => Some(b),
        _ => None,
    }
}

/// The block with statements that `e` evaluates before anything else:
/// `e` itself, or one found down the first-evaluated operands (a method's
/// receiver, a binary's left side, a call's first argument). Its
/// statements can move in front of the statement holding `e`.
fn first_block(e: &mut Expr) -> Option<&mut Expr> {
    if block_with_stmts(e).is_some() {
        return Some(e);
    }
    let next = match &mut e.kind {
        Kind::Method(r, ..)
        | Kind::Bin(_, r, _)
        | Kind::Unary(_, r)
        | Kind::CallValue(r, _)
        | Kind::Field(r, _)
        | Kind::Index(r, _) => &mut **r,
        Kind::Call(_, args)
        | Kind::RecCall(_, args)
        | Kind::List(args)
        | Kind::Tuple(args)
        | Kind::Ctor(_, args) => args.first_mut()?,
        _ => return None,
    };
    first_block(next)
}

fn walk_stmt(s: &mut Stmt, p: &Program, op: Op, cur: &mut Cursor) {
    match s {
        Stmt::Let { init: e, .. }
        | Stmt::LetTuple { init: e, .. }
        | Stmt::Assign { value: e, .. }
        | Stmt::Expr(e)
        | Stmt::Return(Some(e)) => walk_expr(e, p, op, cur),
        Stmt::For { iter, body, .. } => {
            walk_expr(iter, p, op, cur);
            walk_block(body, p, op, cur);
        }
        Stmt::LetElse { init, diverge, .. } => {
            walk_expr(init, p, op, cur);
            walk_block(diverge, p, op, cur);
        }
        Stmt::While { cond, body, .. } => {
            if let Some(c) = cond {
                walk_expr(c, p, op, cur);
            }
            walk_block(body, p, op, cur);
        }
        Stmt::If { cond, then, else_ } => {
            walk_expr(cond, p, op, cur);
            walk_block(then, p, op, cur);
            if let Some(e) = else_ {
                walk_block(e, p, op, cur);
            }
        }
        Stmt::Return(None) | Stmt::Break | Stmt::Continue => {}
    }
}

fn walk_expr(e: &mut Expr, p: &Program, op: Op, cur: &mut Cursor) {
    if cur.hit {
        return;
    }
    match op {
        Op::Replace => {
            for r in replacements(p, e) {
                if cur.at() {
                    *e = r;
                    return;
                }
            }
        }
        Op::RemoveArm => {
            if let Kind::Match(_, arms) = &mut e.kind {
                if arms.len() > 1 {
                    for j in 0..arms.len() {
                        if cur.at() {
                            arms.remove(j);
                            return;
                        }
                    }
                }
            }
        }
        _ => {}
    }
    match &mut e.kind {
        Kind::Lambda(_, b) | Kind::Block(b) => walk_block(b, p, op, cur),
        Kind::If(c, a, b) | Kind::IfLet(_, c, a, b) => {
            walk_expr(c, p, op, cur);
            walk_block(a, p, op, cur);
            walk_block(b, p, op, cur);
        }
        Kind::Match(s, arms) => {
            walk_expr(s, p, op, cur);
            for a in arms {
                walk_expr(&mut a.body, p, op, cur);
            }
        }
        _ => {
            for c in children_mut(e) {
                walk_expr(c, p, op, cur);
            }
        }
    }
}
