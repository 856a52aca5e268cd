//! `xs.set(i, v)` in place: a set writes into its receiver's buffer when
//! the receiver is a whole list nothing else refers to and nothing reads
//! it afterwards, and copies otherwise. The decision is a [`SetMode`] per
//! call site, with its reason.
//!
//! In place is exactly "the receiver's block could be freed here", and
//! then handed to the result instead of freed:
//! - a `let`/`var` local that owns its block (`decide`), at its last use,
//!   which is on the straight-line path of its statement (not in a loop
//!   the local lives outside of, not in a branch), with every other use in
//!   that statement inside the set's own arguments (evaluated before the
//!   write) and every view of it dead by then: the local's block ends
//!   there ([`End::SetInPlace`]) instead of being dropped;
//! - the old value of `x := x.set(..)` for an owned var: the assignment
//!   keeps the block instead of freeing the old value;
//! - a fresh value no name holds (a temporary the rewrite would otherwise
//!   bind and drop after the set).
//!
//! The result is fresh either way, so no summary depends on the decision.

use ir::{BinOp, ExprId, ExprKind, LocalId, LocalKind, Method};

use crate::decide::{Decider, End, Fresh, Own};
use crate::reason::{InPlace, NotOwned, SetCopy, SetMode};
use crate::walk::{Assign, LocalFacts, Use};

impl Decider<'_> {
    /// The receiver and arguments of `e` when it is a `set`.
    fn set_parts(&self, e: ExprId) -> Option<(ExprId, &[ExprId])> {
        match &self.body[e].kind {
            ExprKind::Method {
                method: Method::ListSet,
                receiver,
                args,
            } => Some((*receiver, args)),
            _ => None,
        }
    }

    /// The `set` whose receiver is the use `r`, if any.
    fn set_of_receiver(&self, r: ExprId) -> Option<ExprId> {
        let p = self.facts.exprs.get(r)?.parent?;
        let (recv, _) = self.set_parts(p)?;
        (recv == r).then_some(p)
    }

    /// Where `explain` places the `set` `e`: at `.set` (the receiver's
    /// end), since a chain of sets starts at one offset.
    pub fn set_at(&self, e: ExprId) -> u32 {
        match self.set_parts(e) {
            Some((r, _)) => self.sm.expr(r).end,
            None => self.sm.expr(e).start,
        }
    }

    /// Whether `e` is the receiver of a `set` that writes into it (a
    /// temporary the rewrite must not bind and drop).
    pub fn in_place_receiver(&self, e: ExprId) -> bool {
        self.set_of_receiver(e)
            .is_some_and(|s| matches!(self.set_mode(s), Some(SetMode::InPlace(InPlace::Temp))))
    }

    /// Whether assignment `a` is `x := x.set(..)` written in place (its
    /// old value becomes the new one: nothing to free).
    pub fn assign_set_in_place(&self, a: &Assign) -> bool {
        matches!(
            self.set_mode(a.value),
            Some(SetMode::InPlace(InPlace::Replaced(_)))
        )
    }

    /// The decision for `e`, when it is a `set` the walk reached.
    pub fn set_mode(&self, e: ExprId) -> Option<SetMode> {
        let (r, _) = self.set_parts(e)?;
        self.facts.exprs.get(e)?;
        let ExprKind::Local(x) = self.body[r].kind else {
            return Some(match self.fresh(r) {
                Fresh::Yes { .. } => SetMode::InPlace(InPlace::Temp),
                Fresh::No(why) => SetMode::Copy(SetCopy::NotFresh(why)),
            });
        };
        let copy = |c| Some(SetMode::Copy(c));
        let Some(l) = self.facts.local(x) else {
            return copy(SetCopy::Shared {
                local: x,
                why: NotOwned::Unknown,
                at: 0,
            });
        };
        let Some(u) = l.uses.iter().find(|u| u.expr == r) else {
            return copy(SetCopy::Shared {
                local: x,
                why: NotOwned::Unknown,
                at: 0,
            });
        };
        let own = self.own(x);
        if let Own::No(why, at) = own {
            return copy(match (self.body.locals[x].kind, why) {
                (LocalKind::Param, _) => SetCopy::Borrowed(x),
                (_, NotOwned::NotLetOrVar) => SetCopy::PartOf(x),
                (_, why) => SetCopy::Shared { local: x, why, at },
            });
        }
        // `x := x.set(..)`: the old value is owned and replaced here.
        if l.assigns.iter().any(|a| a.value == e) {
            return Some(SetMode::InPlace(InPlace::Replaced(x)));
        }
        match own {
            Own::Yes(End::SetInPlace(s)) if s == e => Some(SetMode::InPlace(InPlace::LastUse(x))),
            // The var's last value escapes: it is not the only reference.
            Own::Yes(End::Kept { why, at }) => copy(SetCopy::Shared { local: x, why, at }),
            _ => copy(self.why_live_after(x, l, u, e)),
        }
    }

    /// An owned local whose `set` at use `u` is not its last use: why.
    fn why_live_after(&self, x: LocalId, l: &LocalFacts, u: &Use, set: ExprId) -> SetCopy {
        let decl_at = l
            .decl
            .as_ref()
            .map(|d| self.sm.stmt(d.stmt).start)
            .unwrap_or(0);
        if u.in_loop {
            return SetCopy::InLoop {
                local: x,
                at: decl_at,
            };
        }
        let Some(i) = u.index else {
            return SetCopy::InLoop {
                local: x,
                at: decl_at,
            };
        };
        let args = self.set_parts(set).map(|(_, a)| a).unwrap_or(&[]);
        let inside = |v: &Use| v.expr == u.expr || args.iter().any(|a| self.is_within(v.expr, *a));
        if let Some(a) = l.assigns.iter().find(|a| a.index == Some(i)) {
            return SetCopy::AssignedThere { local: x, at: a.at };
        }
        // The first use after the set: a later statement, or the same
        // statement outside the set's arguments; or a view read later.
        let later = l
            .uses
            .iter()
            .filter(|v| match v.index {
                Some(j) => j > i || (j == i && !inside(v)),
                None => false,
            })
            .min_by_key(|v| (v.index, v.at));
        match (later, self.later_view_read(l, i)) {
            (Some(v), Some((view, at))) if at < v.at => SetCopy::ViewReadLater {
                local: x,
                view: Some(view),
                at,
            },
            (Some(v), _) => SetCopy::ReadLater { local: x, at: v.at },
            (None, Some((view, at))) => SetCopy::ViewReadLater {
                local: x,
                view: Some(view),
                at,
            },
            (None, None) => SetCopy::OnOnePath {
                local: x,
                at: self.stmt_at(x, i).unwrap_or(u.at),
            },
        }
    }

    fn is_view_use(&self, v: &Use) -> bool {
        matches!(
            v.ctx,
            crate::walk::Ctx::Escape(crate::reason::Escape::ViewedBy(_))
        )
    }

    /// A view of `x` bound to a name that is read in a statement of x's
    /// block after statement `i`: (the view, the offset of that read).
    fn later_view_read(&self, l: &LocalFacts, i: usize) -> Option<(LocalId, u32)> {
        let block = l.decl.as_ref()?.block;
        l.uses
            .iter()
            .filter(|u| self.is_view_use(u))
            .filter_map(|u| {
                let view = self.facts.exprs.get(u.expr)?.parent?;
                let crate::walk::Ctx::Bind(v) = self.facts.exprs.get(view)?.ctx else {
                    return None;
                };
                let vl = self.facts.local(v)?;
                let same = vl.decl.as_ref().is_some_and(|d| d.block == block);
                vl.uses
                    .iter()
                    .filter(|w| !same || w.index.is_some_and(|j| j >= i))
                    .map(|w| w.at)
                    .max()
                    .map(|at| (v, at))
            })
            .min_by_key(|(_, at)| *at)
    }

    /// The offset of statement `i` of x's declaring block.
    fn stmt_at(&self, x: LocalId, i: usize) -> Option<u32> {
        let block = self.facts.local(x)?.decl.as_ref()?.block;
        let ExprKind::Block { stmts, tail } = &self.body[block].kind else {
            return None;
        };
        match stmts.get(i) {
            Some(s) => Some(self.sm.stmt(*s).start),
            None => tail.map(|t| self.sm.expr(t).start),
        }
    }

    /// For an owned local whose every use is known and whose block would
    /// be dropped after statement `last` of its block: the `set` that can
    /// take the block instead (see the module comment). `view_last` is the
    /// last statement that reads a view of it.
    pub(crate) fn set_at_last_use(
        &self,
        l: &LocalFacts,
        last: usize,
        view_last: usize,
    ) -> Option<ExprId> {
        let decl = l.decl.as_ref()?;
        if view_last >= last || l.assigns.iter().any(|a| a.index == Some(last)) {
            return None;
        }
        let mut found = None;
        for u in &l.uses {
            if u.index != Some(last) || u.in_loop || u.foreign || u.moved_out {
                continue;
            }
            if let Some(s) = self.set_of_receiver(u.expr) {
                if found.is_some() {
                    return None;
                }
                found = Some((u.expr, s));
            }
        }
        let (r, set) = found?;
        let (_, args) = self.set_parts(set)?;
        let inside_args = |e: ExprId| args.iter().any(|a| self.is_within(e, *a));
        if !l
            .uses
            .iter()
            .all(|u| u.index != Some(last) || u.expr == r || inside_args(u.expr))
        {
            return None;
        }
        self.straight_line(set, decl.block).then_some(set)
    }

    /// Whether evaluating the statement of `block` that holds `e` always
    /// evaluates `e` (no branch of an `if`, `match`, `&&` or `||`, no
    /// closure or loop between them).
    fn straight_line(&self, mut e: ExprId, block: ExprId) -> bool {
        loop {
            let Some(p) = self.facts.exprs.get(e).and_then(|f| f.parent) else {
                return false;
            };
            if p == block {
                return true;
            }
            let ok = match &self.body[p].kind {
                ExprKind::If { cond, .. } => *cond == e,
                ExprKind::Match { scrutinee, .. } => *scrutinee == e,
                ExprKind::Binary {
                    op: BinOp::And | BinOp::Or,
                    lhs,
                    ..
                } => *lhs == e,
                ExprKind::Lambda { .. } => false,
                ExprKind::Block { stmts, .. } => {
                    // A loop's body block, or a statement's block.
                    !stmts.iter().any(|s| {
                        matches!(
                            self.body[*s].kind,
                            ir::StmtKind::For { .. } | ir::StmtKind::While { .. }
                        ) && ir::visit::stmt_children(&self.body[*s].kind).contains(&e)
                    })
                }
                _ => true,
            };
            if !ok {
                return false;
            }
            e = p;
        }
    }
}
