//! Blocks and statements: `let` and `var`, assignment, loops, `break`,
//! `continue` and `return`.

use super::{init_hint, Cx};
use crate::infer::T;
use crate::warnings::MatchOrigin;
use ir::{ExprId, ExprKind, LocalKind, MatchArm, PatKind, StmtId, StmtKind};
use std::collections::HashMap;
use syntax::ast;
use syntax::{Diagnostic, Span};

impl<'a> Cx<'a> {
    /// Lowers a block. With `discard`, a tail whose value is not Unit is
    /// turned into a statement (an `if` without `else`, loop bodies, Unit
    /// functions), so the block's type is Unit.
    pub(super) fn block(&mut self, b: &ast::Block, discard: bool) -> (ExprId, T) {
        self.block_of(&b.stmts, b.tail.as_deref(), discard, b.span)
    }

    /// A block of these statements and tail. A `let ... else` takes the
    /// rest of the block into its match (see `let_else`).
    fn block_of(
        &mut self,
        stmts_ast: &[ast::Stmt],
        tail_ast: Option<&ast::Expr>,
        discard: bool,
        span: Span,
    ) -> (ExprId, T) {
        self.scopes.push(Vec::new());
        let mut stmts = Vec::new();
        let mut diverges = false;
        let mut tail = None;
        let mut ty = T::Unit;
        let mut rest = None;
        for (i, s) in stmts_ast.iter().enumerate() {
            if let ast::StmtKind::Let {
                else_: Some(els), ..
            } = &s.kind
            {
                rest = Some((i, els));
                break;
            }
            let (id, never) = self.stmt(s);
            diverges |= never;
            stmts.push(id);
        }
        if let Some((i, els)) = rest {
            let rest_span = Span::new(stmts_ast[i].span.end, span.end);
            let after = &stmts_ast[i + 1..];
            let (m, mt) = self.let_else(&stmts_ast[i], els, after, tail_ast, discard, rest_span);
            tail = Some(m);
            ty = mt;
        } else if let Some(t) = tail_ast {
            let (e, et) = if discard {
                self.expr_unused(t)
            } else {
                self.expr(t)
            };
            let shallow = self.table.shallow(&et);
            if discard && !matches!(shallow, T::Unit | T::Never | T::Error) {
                stmts.push(self.alloc_stmt(StmtKind::Expr(e), t.span));
            } else {
                tail = Some(e);
                ty = et;
            }
        } else if diverges {
            ty = T::Never;
        }
        self.scopes.pop();
        let id = self.alloc(ExprKind::Block { stmts, tail }, ty.clone(), span);
        (id, ty)
    }

    /// `let P = e else { d }; rest` is `match e { P => { rest }, _ => d }`:
    /// the names `P` binds exist in the rest of the block, and `d` must
    /// leave (its type is Never), so the match has the rest's type.
    fn let_else(
        &mut self,
        s: &ast::Stmt,
        els: &ast::Block,
        rest: &[ast::Stmt],
        tail: Option<&ast::Expr>,
        discard: bool,
        rest_span: Span,
    ) -> (ExprId, T) {
        let ast::StmtKind::Let { pat, ty, init, .. } = &s.kind else {
            return self.missing(s.span);
        };
        let (init_id, expected) = self.let_init(ty.as_ref(), init);
        // The `else` block does not see the pattern's names.
        let (e_id, e_ty) = self.block(els, true);
        if !matches!(self.table.shallow(&e_ty), T::Never | T::Error) {
            self.diags.push(
                Diagnostic::error(els.span, "the `else` of a `let ... else` must not finish")
                    .with_note(
                        "end it with `return`, `break`, `continue` or `trap(..)`: after it, the names the pattern binds would have no value",
                    ),
            );
        }
        self.scopes.push(Vec::new());
        let mut seen = HashMap::new();
        let p = self.pat(pat, &expected, true, LocalKind::Let, &mut seen);
        let (r_id, r_ty) = self.block_of(rest, tail, discard, rest_span);
        self.scopes.pop();
        let wild = self.alloc_pat(PatKind::Wild, expected, els.span);
        let arms = vec![
            MatchArm { pat: p, body: r_id },
            MatchArm {
                pat: wild,
                body: e_id,
            },
        ];
        let k = ExprKind::Match {
            scrutinee: init_id,
            arms,
        };
        let id = self.alloc(k, r_ty.clone(), s.span);
        self.matches.push((id, init.span, MatchOrigin::LetElse));
        (id, r_ty)
    }

    /// A `let`'s initialiser, checked against its annotation if any; the
    /// type is the one the pattern gets.
    fn let_init(&mut self, ty: Option<&ast::TypeRef>, init: &ast::Expr) -> (ExprId, T) {
        let expected = match ty {
            Some(t) => T::from_ir(&self.resolver.lower(t, &mut self.diags)),
            None => self.table.fresh(),
        };
        let before = self.diags.len();
        let init_id = self.expr_expect(init, &expected, "this `let`");
        self.label_new(before, ty.map(|t| t.span), "the annotation");
        (init_id, expected)
    }

    /// Lowers a statement; the flag says it is an expression that never
    /// finishes (`return`, `trap(..)`).
    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> (StmtId, bool) {
        match &s.kind {
            ast::StmtKind::Let { pat, ty, init, .. } => {
                let (init_id, expected) = self.let_init(ty.as_ref(), init);
                let pat_id = self.irrefutable(pat, &expected, LocalKind::Let);
                if let (ast::PatKind::Bind(_), Some(h)) = (&pat.kind, init_hint(init)) {
                    if let PatKind::Bind(l) = self.body.pats[pat_id].kind {
                        self.local_hint.insert(l, h);
                    }
                }
                (
                    self.alloc_stmt(
                        StmtKind::Let {
                            pat: pat_id,
                            init: init_id,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::Var { name, ty, init } => {
                let expected = match ty {
                    Some(t) => T::from_ir(&self.resolver.lower(t, &mut self.diags)),
                    None => self.table.fresh(),
                };
                let before = self.diags.len();
                let init_id = self.expr_expect(init, &expected, "this `var`");
                self.label_new(before, ty.as_ref().map(|t| t.span), "the annotation");
                let local = self.new_local(name, expected, LocalKind::Var);
                if let Some(h) = init_hint(init) {
                    self.local_hint.insert(local, h);
                }
                (
                    self.alloc_stmt(
                        StmtKind::Var {
                            local,
                            init: init_id,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::Assign { name, value } => {
                let Some(local) = self.lookup_for(name, true) else {
                    self.err(name.span, format!("unknown name `{}`", name.text));
                    let (v, _) = self.expr(value);
                    return (self.alloc_stmt(StmtKind::Expr(v), s.span), false);
                };
                let kind = self.body.locals[local].kind;
                if kind != LocalKind::Var {
                    let what = if kind == LocalKind::Param {
                        "a parameter"
                    } else {
                        "a `let`"
                    };
                    self.diags.push(
                        Diagnostic::error(
                            name.span,
                            format!("cannot assign to `{}`: it is {what}", name.text),
                        )
                        .with_label(self.map.local(local), "declared here")
                        .with_note("only `var` locals can be assigned with `:=`"),
                    );
                }
                let ty = self.local_ty(local);
                let before = self.diags.len();
                let v = self.expr_expect(value, &ty, "this assignment");
                let decl = Some(self.map.local(local));
                self.label_new(before, decl, "declared here");
                let st = StmtKind::Assign {
                    local,
                    value: v,
                    old: ir::OldValue::Keep,
                };
                (self.alloc_stmt(st, s.span), false)
            }
            ast::StmtKind::For { pat, iter, body } => {
                let (it, it_ty) = self.expr(iter);
                let elem = if matches!(iter.kind, ast::ExprKind::Range { .. }) {
                    T::Int
                } else {
                    match self.table.shallow(&it_ty) {
                        T::List(e) => *e,
                        T::Error | T::Never => T::Error,
                        T::Var(_) => {
                            let e = self.table.fresh();
                            let _ = self.table.unify(&it_ty, &T::list(e.clone()));
                            e
                        }
                        T::Map(..) => {
                            self.err(
                                iter.span,
                                "cannot iterate over a map; iterate over `.entries`, `.keys` or `.values`",
                            );
                            T::Error
                        }
                        T::Str => {
                            self.err(
                                iter.span,
                                "cannot iterate over a `Str`; iterate over `.chars` or `.lines`",
                            );
                            T::Error
                        }
                        other => {
                            let msg = format!(
                                "cannot iterate over `{}`; a `for` needs a list or a range",
                                self.show(&other)
                            );
                            self.err(iter.span, msg);
                            T::Error
                        }
                    }
                };
                self.scopes.push(Vec::new());
                let p = self.irrefutable(pat, &elem, LocalKind::Let);
                self.loop_depth += 1;
                let (b, _) = self.block(body, true);
                self.loop_depth -= 1;
                self.scopes.pop();
                (
                    self.alloc_stmt(
                        StmtKind::For {
                            pat: p,
                            iter: it,
                            body: b,
                        },
                        s.span,
                    ),
                    false,
                )
            }
            ast::StmtKind::While { cond, body } => {
                let c = self.expr_expect(cond, &T::Bool, "a `while` condition");
                self.loop_depth += 1;
                let (b, _) = self.block(body, true);
                self.loop_depth -= 1;
                (
                    self.alloc_stmt(StmtKind::While { cond: c, body: b }, s.span),
                    false,
                )
            }
            ast::StmtKind::Expr(e) => {
                let (id, t) = self.expr_unused(e);
                let never = self.table.shallow(&t) == T::Never;
                (self.alloc_stmt(StmtKind::Expr(id), s.span), never)
            }
        }
    }
}
