//! Calls: of functions by name, of built-ins, and of function values.

use super::{builtin, Cx, Need};
use crate::infer::T;
use ir::{Builtin, Callee, ExprId, ExprKind};
use syntax::ast;
use syntax::Span;

impl<'a> Cx<'a> {
    pub(super) fn call(
        &mut self,
        callee: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> (ExprId, T) {
        if let ast::ExprKind::Name(name) = &callee.kind {
            let is_local = self
                .scopes
                .iter()
                .any(|s| s.iter().any(|(n, _)| *n == name.text));
            if !is_local {
                if let Some(f) = self.find_fn(&name.text) {
                    let sig = &self.items.fns[f];
                    let ps: Vec<T> = sig.params.iter().map(|(_, t)| T::from_ir(t)).collect();
                    let ret = T::from_ir(&sig.ret);
                    let names: Vec<String> = sig.params.iter().map(|(n, _)| n.clone()).collect();
                    let what = format!("function `{}`", name.text);
                    let ids = self.args(&what, &ps, &names, args, span);
                    let k = ExprKind::Call {
                        callee: Callee::Fn(f),
                        args: ids,
                    };
                    return (self.alloc(k, ret.clone(), span), ret);
                }
                if let Some(b) = builtin(&name.text) {
                    return self.builtin_call(b, &name.text, args, span);
                }
            }
        }
        let (c, ct) = self.expr(callee);
        let (ps, ret) = match self.table.shallow(&ct) {
            T::Fn(ps, r) => (ps, *r),
            T::Var(_) => {
                let ps: Vec<T> = args.iter().map(|_| self.table.fresh()).collect();
                let r = self.table.fresh();
                let _ = self.table.unify(&ct, &T::func(ps.clone(), r.clone()));
                (ps, r)
            }
            T::Error => {
                for a in args {
                    self.expr(a);
                }
                return self.missing(span);
            }
            other => {
                let msg = format!(
                    "`{}` is not a function and cannot be called",
                    self.show(&other)
                );
                self.err(callee.span, msg);
                for a in args {
                    self.expr(a);
                }
                return self.missing(span);
            }
        };
        let ids = self.args("this function", &ps, &[], args, span);
        let k = ExprKind::Call {
            callee: Callee::Value(c),
            args: ids,
        };
        (self.alloc(k, ret.clone(), span), ret)
    }

    /// Lowers call arguments against parameter types, reporting arity.
    pub(super) fn args(
        &mut self,
        what: &str,
        ps: &[T],
        names: &[String],
        args: &[ast::Expr],
        span: Span,
    ) -> Vec<ExprId> {
        if ps.len() != args.len() {
            self.err(
                span,
                format!(
                    "{what} takes {} argument{}, but {} {} given",
                    ps.len(),
                    if ps.len() == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        self.args_named(what, ps, names, args)
    }

    /// Lowers arguments against parameter types; `names` (when known)
    /// make mismatch notes say which parameter.
    pub(super) fn args_named(
        &mut self,
        what: &str,
        ps: &[T],
        names: &[String],
        args: &[ast::Expr],
    ) -> Vec<ExprId> {
        args.iter()
            .enumerate()
            .map(|(i, a)| match ps.get(i) {
                Some(t) => {
                    let ctx = match names.get(i) {
                        Some(n) => format!("argument `{n}` of {what}"),
                        None => format!("argument {} of {what}", i + 1),
                    };
                    self.expr_expect(a, t, &ctx)
                }
                None => self.expr(a).0,
            })
            .collect()
    }

    pub(super) fn builtin_call(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> (ExprId, T) {
        let what = format!("`{name}`");
        let (ids, ret) = match b {
            Builtin::Print | Builtin::Log | Builtin::Eprint => {
                let p = self.table.fresh();
                (self.args(&what, &[p], &[], args, span), T::Unit)
            }
            Builtin::EmptyMap => {
                let k = self.table.fresh();
                let v = self.table.fresh();
                self.defer(span, &k, Need::MapKey, "a map key");
                (self.args(&what, &[], &[], args, span), T::map(k, v))
            }
            Builtin::ReadFile => (self.args(&what, &[T::Str], &[], args, span), T::Str),
            Builtin::ReadStdin => (self.args(&what, &[], &[], args, span), T::Str),
            Builtin::Args => (self.args(&what, &[], &[], args, span), T::list(T::Str)),
            Builtin::Trap => (self.args(&what, &[T::Str], &[], args, span), T::Never),
            Builtin::Exit => (self.args(&what, &[T::Int], &[], args, span), T::Never),
            Builtin::WriteFile | Builtin::AppendFile => {
                let ps = [T::Str, T::Str];
                let names = ["path".to_string(), "text".to_string()];
                let ids = self.args(&what, &ps, &names, args, span);
                (ids, T::option(T::Str))
            }
            Builtin::ReadLines => (self.args(&what, &[], &[], args, span), T::list(T::Str)),
        };
        let k = ExprKind::Call {
            callee: Callee::Builtin(b),
            args: ids,
        };
        (self.alloc(k, ret.clone(), span), ret)
    }

    /// `s.f(x)` where `f` is a record field of function type.
    pub(super) fn call_value(
        &mut self,
        f: ExprId,
        ft: T,
        args: Vec<ExprId>,
        span: Span,
    ) -> (ExprId, T) {
        let (k, ret) = self.call_value_kind(f, ft, args, span);
        (self.alloc(k, ret.clone(), span), ret)
    }

    pub(super) fn call_value_kind(
        &mut self,
        f: ExprId,
        ft: T,
        args: Vec<ExprId>,
        span: Span,
    ) -> (ExprKind, T) {
        let ret = match self.table.shallow(&ft) {
            T::Fn(ps, r) => {
                if ps.len() != args.len() {
                    self.err(
                        span,
                        format!(
                            "this function takes {} arguments, but {} were given",
                            ps.len(),
                            args.len()
                        ),
                    );
                }
                for (a, p) in args.iter().zip(ps.iter()) {
                    let at = self.expr_ty(*a);
                    let sp = self.map.expr(*a);
                    self.coerce(sp, &at, p, "this argument");
                }
                *r
            }
            T::Error => T::Error,
            other => {
                let msg = format!(
                    "`{}` is not a function and cannot be called",
                    self.show(&other)
                );
                self.err(span, msg);
                T::Error
            }
        };
        (
            ExprKind::Call {
                callee: Callee::Value(f),
                args,
            },
            ret,
        )
    }
}
