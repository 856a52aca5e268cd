//! Warnings: a program that checks but probably does not say what its
//! author meant. Each is a [`Warning`] (a kind and its spans), found on a
//! checked body without errors and rendered to text only for humans
//! ([`crate::render_warnings`]). They never change what a program does.
//!
//! - a local nobody reads: a `let`, `var`, parameter, lambda parameter,
//!   `for` variable or pattern binding (a name starting with `_` is meant
//!   to be unused and never warned about). A `var` read only to compute
//!   its own next value (`n := n + 1`) counts as unread;
//! - a `var` that is read but never assigned with `:=` (it can be a `let`);
//! - a `match` arm no value can reach (after a catch-all, or covered by the
//!   earlier arms together), and an `if let` or `let ... else` whose
//!   pattern always matches, so its `else` never runs.

use std::collections::HashSet;

use ir::{Body, BodySourceMap, ExprId, ExprKind, ItemTree, LocalId, PatId, PatKind, StmtKind};
use syntax::{Diagnostic, Span};

/// One warning: what and where. `span` is the primary position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Warning {
    pub kind: WarningKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// A local that is never read (`span` is its name).
    Unused { name: String, binding: Binding },
    /// A `var` that is read but never assigned after its declaration.
    VarNeverAssigned { name: String },
    /// A `match` arm that no value reaches (`span` is its pattern);
    /// `covered_by` is an earlier arm that alone matches everything this
    /// one does, if there is one.
    UnreachableArm { covered_by: Option<Span> },
    /// The pattern of an `if let` or `let ... else` that always matches
    /// (`span` is the pattern): the `else` never runs.
    IrrefutableLet { form: LetForm },
}

/// Where an unused local was introduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    Let,
    Var,
    Param,
    LambdaParam,
    For,
    /// A binding in a `match` arm, `if let` or `let ... else` pattern.
    Pattern,
}

/// The two forms a [`WarningKind::IrrefutableLet`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LetForm {
    IfLet,
    LetElse,
}

/// Which source form a checked `match` stands for: `if let` and
/// `let ... else` are matches whose second arm (`_`) the checker added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchOrigin {
    Match,
    IfLet,
    LetElse,
}

impl Warning {
    /// The warning as a diagnostic (message, labels, notes) for the
    /// renderer.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match &self.kind {
            WarningKind::Unused { name, binding } => {
                let what = match binding {
                    Binding::Let => "`let` binding",
                    Binding::Var => "`var` binding",
                    Binding::Param => "parameter",
                    Binding::LambdaParam => "lambda parameter",
                    Binding::For => "loop variable",
                    Binding::Pattern => "pattern binding",
                };
                let how = match binding {
                    Binding::Let | Binding::Var => {
                        format!("remove it, or name it `_{name}` if it is unused on purpose")
                    }
                    Binding::Param | Binding::LambdaParam | Binding::For | Binding::Pattern => {
                        format!("name it `_` or `_{name}` if it is unused on purpose")
                    }
                };
                Diagnostic::error(self.span, format!("unused {what} `{name}`")).with_note(how)
            }
            WarningKind::VarNeverAssigned { name } => {
                Diagnostic::error(self.span, format!("`var {name}` is never assigned")).with_note(
                    format!("nothing assigns it with `:=`, so it can be `let {name}`"),
                )
            }
            WarningKind::UnreachableArm { covered_by } => {
                let d = Diagnostic::error(self.span, "unreachable match arm");
                match covered_by {
                    Some(s) => d.with_label(*s, "this earlier arm matches every value it does"),
                    None => d.with_note("the earlier arms together match every value it does"),
                }
            }
            WarningKind::IrrefutableLet { form } => {
                let (what, note) = match form {
                    LetForm::IfLet => (
                        "this `if let` pattern always matches",
                        "it cannot fail, so a plain `let` says the same",
                    ),
                    LetForm::LetElse => (
                        "this `let ... else` pattern always matches",
                        "it cannot fail, so the `else` never runs; a plain `let` says the same",
                    ),
                };
                Diagnostic::error(self.span, what).with_note(note)
            }
        }
    }

    /// The warning with every position moved by `delta` bytes.
    pub fn shift(&self, delta: i64) -> Warning {
        let kind = match &self.kind {
            WarningKind::UnreachableArm {
                covered_by: Some(s),
            } => WarningKind::UnreachableArm {
                covered_by: Some(s.shift(delta)),
            },
            k => k.clone(),
        };
        Warning {
            kind,
            span: self.span.shift(delta),
        }
    }
}

/// The warnings of one checked body (with types solved and no errors).
/// `matches` says which source form each `match` came from.
pub(crate) fn body_warnings(
    items: &ItemTree,
    body: &Body,
    map: &BodySourceMap,
    matches: &[(ExprId, MatchOrigin)],
) -> Vec<Warning> {
    let mut out = Vec::new();
    let n = body.locals.len();
    let mut read = vec![false; n];
    let mut assigned = vec![false; n];
    let mut site: Vec<Option<Binding>> = vec![None; n];
    let ix = |l: LocalId| l.into_raw().into_u32() as usize;
    for &p in &body.params {
        site[ix(p)] = Some(Binding::Param);
    }
    let own = own_update_reads(body);
    for (id, e) in body.exprs.iter() {
        match &e.kind {
            ExprKind::Local(l) if !own.contains(&id) => read[ix(*l)] = true,
            ExprKind::Lambda { params, .. } => {
                for &p in params {
                    site[ix(p)] = Some(Binding::LambdaParam);
                }
            }
            ExprKind::Match { arms, .. } => {
                for a in arms {
                    bindings(body, a.pat, &mut |l| site[ix(l)] = Some(Binding::Pattern));
                }
            }
            _ => {}
        }
    }
    for (_, s) in body.stmts.iter() {
        match &s.kind {
            StmtKind::Let { pat, .. } => {
                bindings(body, *pat, &mut |l| site[ix(l)] = Some(Binding::Let))
            }
            StmtKind::Var { local, .. } => site[ix(*local)] = Some(Binding::Var),
            StmtKind::Assign { local, .. } => assigned[ix(*local)] = true,
            StmtKind::For { pat, .. } => {
                bindings(body, *pat, &mut |l| site[ix(l)] = Some(Binding::For))
            }
            StmtKind::Expr(_)
            | StmtKind::While { .. }
            | StmtKind::Drop(_)
            | StmtKind::Clear { .. } => {}
        }
    }
    for (l, local) in body.locals.iter() {
        let Some(binding) = site[ix(l)] else { continue };
        if local.name.starts_with('_') {
            continue;
        }
        let kind = if !read[ix(l)] {
            WarningKind::Unused {
                name: local.name.clone(),
                binding,
            }
        } else if binding == Binding::Var && !assigned[ix(l)] {
            WarningKind::VarNeverAssigned {
                name: local.name.clone(),
            }
        } else {
            continue;
        };
        out.push(Warning {
            kind,
            span: map.local(l),
        });
    }
    for &(m, origin) in matches {
        let ExprKind::Match { arms, .. } = &body[m].kind else {
            continue;
        };
        for (i, covered_by) in crate::exhaustive::unreachable_arms(items, body, m) {
            let Some(arm) = arms.get(i) else { continue };
            // For `if let` and `let ... else` the unreachable arm is the
            // added `_` (the `else`): the written pattern always matches.
            let irrefutable = |form| (WarningKind::IrrefutableLet { form }, arms[0].pat);
            let (kind, at) = match origin {
                MatchOrigin::Match => {
                    let covered_by = covered_by.and_then(|j| arms.get(j)).map(|a| map.pat(a.pat));
                    (WarningKind::UnreachableArm { covered_by }, arm.pat)
                }
                MatchOrigin::IfLet => irrefutable(LetForm::IfLet),
                MatchOrigin::LetElse => irrefutable(LetForm::LetElse),
            };
            out.push(Warning {
                kind,
                span: map.pat(at),
            });
        }
    }
    out.sort_by_key(|w| (w.span.start, w.span.end));
    out
}

/// The reads of a `var` inside the value of an assignment to it
/// (`n := n + 1`): they only feed the variable itself.
fn own_update_reads(body: &Body) -> HashSet<ExprId> {
    let mut out = HashSet::new();
    for (_, s) in body.stmts.iter() {
        let StmtKind::Assign { local, value, .. } = &s.kind else {
            continue;
        };
        let mut stack = vec![*value];
        while let Some(e) = stack.pop() {
            match &body[e].kind {
                ExprKind::Local(l) if l == local => {
                    out.insert(e);
                }
                ExprKind::Block { stmts, tail } => {
                    for &st in stmts {
                        stmt_exprs(&body[st].kind, &mut stack);
                    }
                    stack.extend(tail);
                }
                k => stack.extend(ir::visit::children(k)),
            }
        }
    }
    out
}

/// The expressions a statement holds directly.
fn stmt_exprs(s: &StmtKind, out: &mut Vec<ExprId>) {
    match s {
        StmtKind::Let { init, .. } | StmtKind::Var { init, .. } => out.push(*init),
        StmtKind::Assign { value, .. } => out.push(*value),
        StmtKind::Expr(e) => out.push(*e),
        StmtKind::For { iter, body, .. } => out.extend([*iter, *body]),
        StmtKind::While { cond, body } => out.extend([*cond, *body]),
        StmtKind::Drop(_) | StmtKind::Clear { .. } => {}
    }
}

/// Calls `f` on every local the pattern binds.
fn bindings(body: &Body, p: PatId, f: &mut dyn FnMut(LocalId)) {
    match &body[p].kind {
        PatKind::Bind(l) => f(*l),
        PatKind::At { local, pat } => {
            f(*local);
            bindings(body, *pat, f);
        }
        PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
            for q in ps {
                bindings(body, *q, f);
            }
        }
        PatKind::Missing | PatKind::Wild | PatKind::Lit(_) => {}
    }
}
