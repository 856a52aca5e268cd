//! Methods, record and tuple fields and indexing, each deferred to the end
//! of the body while its receiver's type is unknown.

use super::{Cx, Pending, PendingKind};
use crate::infer::T;
use ir::{ExprId, ExprKind, LocalKind, TypeDefKind};
use syntax::ast;
use syntax::{Diagnostic, Span};

impl<'a> Cx<'a> {
    /// A method, field or index on a value whose type is still unknown.
    /// `e` is the lowered receiver: when it is a local, the hint names it.
    pub(super) fn unknown_receiver(&mut self, span: Span, t: &T, e: ExprId) {
        let (msg, note) = match self.body.exprs[e].kind {
            ExprKind::Local(l) => {
                let local = &self.body.locals[l];
                let n = &local.name;
                let note = match local.kind {
                    LocalKind::Param => {
                        format!("give the lambda parameter a type, e.g. `|{n}: Str| ...`")
                    }
                    LocalKind::Var => format!("annotate it, e.g. `var {n}: List[Int] = ...`"),
                    _ => format!("annotate it, e.g. `let {n}: List[Int] = ...`"),
                };
                (format!("the type of `{n}` must be known here"), note)
            }
            _ => (
                "the type of this value must be known here".to_string(),
                "add a type annotation to the `let` or lambda parameter it comes from".to_string(),
            ),
        };
        self.diags
            .push(Diagnostic::error(span, msg).with_note(note));
        // Poison the unknown so it is not reported again.
        self.table.poison_all(t);
    }

    pub(super) fn method(
        &mut self,
        receiver: &ast::Expr,
        name: &ast::Name,
        args: &[ast::Expr],
        parens: bool,
        span: Span,
    ) -> (ExprId, T) {
        let (r, rt) = self.expr(receiver);
        let rt = self.table.shallow(&rt);
        // A record field (written without parentheses).
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[id].kind {
                if let Some(i) = fields.iter().position(|(n, _)| *n == name.text) {
                    let t = T::from_ir(&fields[i].1);
                    if parens {
                        let ids: Vec<ExprId> = args.iter().map(|a| self.expr(a).0).collect();
                        let field = self.alloc(
                            ExprKind::Field {
                                base: r,
                                index: i as u32,
                            },
                            t.clone(),
                            name.span.cover(receiver.span),
                        );
                        return self.call_value(field, t, ids, span);
                    }
                    return (
                        self.alloc(
                            ExprKind::Field {
                                base: r,
                                index: i as u32,
                            },
                            t.clone(),
                            span,
                        ),
                        t,
                    );
                }
            }
        }
        if let T::Var(_) = rt {
            let args = args.iter().map(|a| self.expr(a).0).collect();
            let kind = PendingKind::Method {
                name: name.clone(),
                parens,
                args,
            };
            return self.defer_pending(r, rt, receiver.span, span, kind);
        }
        let sig = match &rt {
            T::Error | T::Never | T::Var(_) => None,
            _ => {
                let s = crate::methods::lookup(&mut self.table, &rt, &name.text);
                if s.is_none() {
                    self.no_method(&rt, name);
                }
                s
            }
        };
        let Some(sig) = sig else {
            for a in args {
                self.expr(a);
            }
            return self.missing(span);
        };
        let ids = self.args(
            &format!("method `{}`", name.text),
            &sig.params,
            &[],
            args,
            span,
        );
        for (t, need) in &sig.needs {
            let what = format!("`{}`", name.text);
            self.defer(span, t, *need, what);
        }
        if let Some(elem) = &sig.must_be_str_list {
            if self.table.unify(elem, &T::Str).is_err() && !self.table.has_error(elem) {
                let msg = format!("`join` needs a `List[Str]`, found `{}`", self.show(&rt));
                self.err(span, msg);
            }
        }
        let k = ExprKind::Method {
            method: sig.method,
            receiver: r,
            args: ids,
        };
        (self.alloc(k, sig.ret.clone(), span), sig.ret)
    }

    pub(super) fn no_method(&mut self, rt: &T, name: &ast::Name) {
        let what = match rt {
            T::Adt(id) if matches!(self.items.types[*id].kind, TypeDefKind::Record { .. }) => {
                "no field or method"
            }
            _ => "no method",
        };
        let msg = format!("{what} `{}` on `{}`", name.text, self.show(rt));
        let mut candidates: Vec<String> = crate::methods::names(rt)
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[*id].kind {
                candidates.extend(fields.iter().map(|(n, _)| n.clone()));
            }
        }
        let d = Diagnostic::error(name.span, msg);
        let d = crate::suggest::did_you_mean(d, &name.text, candidates.iter().map(|s| s.as_str()));
        self.diags.push(d);
    }

    pub(super) fn defer_pending(
        &mut self,
        recv: ExprId,
        recv_ty: T,
        recv_span: Span,
        span: Span,
        kind: PendingKind,
    ) -> (ExprId, T) {
        let result = self.table.fresh();
        let expr = self.alloc(ExprKind::Missing, result.clone(), span);
        self.pending.push(Pending {
            expr,
            recv,
            recv_ty,
            recv_span,
            result: result.clone(),
            span,
            kind,
        });
        (expr, result)
    }

    /// Resolves deferred methods, fields and indexing whose receivers are
    /// now known, repeatedly (one may decide another's receiver); what stays
    /// unknown is an error asking for an annotation.
    pub(super) fn resolve_pending(&mut self) {
        loop {
            let all = std::mem::take(&mut self.pending);
            let before = all.len();
            let mut waiting = Vec::new();
            for p in all {
                if let T::Var(_) = self.table.shallow(&p.recv_ty) {
                    waiting.push(p);
                } else {
                    self.resolve_one(p);
                }
            }
            // Resolving may have queued nothing new; stop when stuck.
            let stuck = waiting.len() == before;
            self.pending.extend(waiting);
            if stuck || self.pending.is_empty() {
                break;
            }
        }
        for p in std::mem::take(&mut self.pending) {
            self.unknown_receiver(p.recv_span, &p.recv_ty, p.recv);
            self.table.poison_all(&p.result);
        }
    }

    pub(super) fn resolve_one(&mut self, p: Pending) {
        let rt = self.table.shallow(&p.recv_ty);
        let (kind, ty) = match p.kind {
            PendingKind::Method { name, parens, args } => {
                self.method_lowered(p.recv, &rt, &name, parens, args, p.span)
            }
            PendingKind::TupleField { name } => {
                let idx: Option<u32> = name.text.parse().ok();
                match (&rt, idx) {
                    (T::Tuple(ts), Some(i)) if (i as usize) < ts.len() => (
                        ExprKind::Field {
                            base: p.recv,
                            index: i,
                        },
                        ts[i as usize].clone(),
                    ),
                    (T::Error | T::Never, _) => (ExprKind::Missing, T::Error),
                    _ => {
                        let msg = format!("no field `{}` on `{}`", name.text, self.show(&rt));
                        self.err(name.span, msg);
                        (ExprKind::Missing, T::Error)
                    }
                }
            }
            PendingKind::Index { index } => {
                let it = self.expr_ty(index);
                let isp = self.map.expr(index);
                match &rt {
                    T::List(e) => {
                        self.coerce(isp, &it, &T::Int, "a list index");
                        (
                            ExprKind::Index {
                                base: p.recv,
                                index,
                            },
                            (**e).clone(),
                        )
                    }
                    T::Map(k, v) => {
                        self.coerce(isp, &it, k, "a map key");
                        (
                            ExprKind::Index {
                                base: p.recv,
                                index,
                            },
                            (**v).clone(),
                        )
                    }
                    T::Error | T::Never => (ExprKind::Missing, T::Error),
                    other => {
                        let msg =
                            format!("cannot index into a value of type `{}`", self.show(other));
                        self.err(p.span, msg);
                        (ExprKind::Missing, T::Error)
                    }
                }
            }
        };
        self.body.exprs[p.expr].kind = kind;
        let _ = self.table.unify(&p.result, &ty);
    }

    /// A method call whose arguments are already lowered (deferred path).
    pub(super) fn method_lowered(
        &mut self,
        r: ExprId,
        rt: &T,
        name: &ast::Name,
        parens: bool,
        args: Vec<ExprId>,
        span: Span,
    ) -> (ExprKind, T) {
        if let T::Adt(id) = rt {
            if let TypeDefKind::Record { fields } = &self.items.types[*id].kind {
                if let Some(i) = fields.iter().position(|(n, _)| *n == name.text) {
                    let t = T::from_ir(&fields[i].1);
                    let field = ExprKind::Field {
                        base: r,
                        index: i as u32,
                    };
                    if !parens {
                        return (field, t);
                    }
                    let fspan = self.map.expr(r).cover(name.span);
                    let f = self.alloc(field, t.clone(), fspan);
                    return self.call_value_kind(f, t, args, span);
                }
            }
        }
        if matches!(rt, T::Error | T::Never) {
            return (ExprKind::Missing, T::Error);
        }
        let Some(sig) = crate::methods::lookup(&mut self.table, rt, &name.text) else {
            self.no_method(rt, name);
            return (ExprKind::Missing, T::Error);
        };
        if sig.params.len() != args.len() {
            let n = sig.params.len();
            self.err(
                span,
                format!(
                    "method `{}` takes {n} argument{}, but {} {} given",
                    name.text,
                    if n == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        for (a, p) in args.iter().zip(&sig.params) {
            let at = self.expr_ty(*a);
            let sp = self.map.expr(*a);
            self.coerce(sp, &at, p, "this argument");
        }
        for (t, need) in &sig.needs {
            self.defer(span, t, *need, format!("`{}`", name.text));
        }
        if let Some(elem) = &sig.must_be_str_list {
            if self.table.unify(elem, &T::Str).is_err() && !self.table.has_error(elem) {
                let msg = format!("`join` needs a `List[Str]`, found `{}`", self.show(rt));
                self.err(span, msg);
            }
        }
        (
            ExprKind::Method {
                method: sig.method,
                receiver: r,
                args,
            },
            sig.ret,
        )
    }
}
