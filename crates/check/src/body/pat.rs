//! Patterns: `let` destructuring and `match` arms, and the constructors they
//! name.

use super::Cx;
use crate::infer::T;
use ir::{Ctor, Lit, LocalKind, PatId, PatKind, TypeDefKind};
use std::collections::HashMap;
use syntax::ast;
use syntax::{Diagnostic, Span};

impl<'a> Cx<'a> {
    /// A `let` or `for` pattern: a binding, `_`, or a tuple of those.
    pub(super) fn irrefutable(&mut self, p: &ast::Pat, expected: &T, kind: LocalKind) -> PatId {
        let mut seen = HashMap::new();
        self.pat(p, expected, false, kind, &mut seen)
    }

    pub(super) fn pat(
        &mut self,
        p: &ast::Pat,
        expected: &T,
        refutable: bool,
        kind: LocalKind,
        seen: &mut HashMap<String, Span>,
    ) -> PatId {
        let refute_err = |cx: &mut Cx, span: Span| {
            cx.diags.push(
                Diagnostic::error(span, "this pattern can fail to match here")
                    .with_note("`let` and `for` patterns must always match; for one that may fail, use `let PAT = value else { return }`, `if let` or `match`"),
            );
        };
        match &p.kind {
            ast::PatKind::Wild => self.alloc_pat(PatKind::Wild, expected.clone(), p.span),
            ast::PatKind::Bind(name) => {
                if let Some(first) = seen.get(&name.text) {
                    self.diags.push(
                        Diagnostic::error(
                            name.span,
                            format!("`{}` is bound twice in this pattern", name.text),
                        )
                        .with_label(*first, "first bound here"),
                    );
                }
                seen.insert(name.text.clone(), name.span);
                let l = self.new_local(name, expected.clone(), kind);
                self.alloc_pat(PatKind::Bind(l), expected.clone(), p.span)
            }
            ast::PatKind::Int(i) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Int, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Int(*i)), T::Int, p.span)
            }
            ast::PatKind::Str(s) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Str, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Str(s.clone())), T::Str, p.span)
            }
            ast::PatKind::Bool(b) => {
                if !refutable {
                    refute_err(self, p.span);
                }
                self.coerce(p.span, &T::Bool, expected, "this pattern");
                self.alloc_pat(PatKind::Lit(Lit::Bool(*b)), T::Bool, p.span)
            }
            ast::PatKind::Tuple(ps) => {
                let elems: Vec<T> = match self.table.shallow(expected) {
                    T::Tuple(ts) if ts.len() == ps.len() => ts,
                    T::Var(_) => {
                        let ts: Vec<T> = ps.iter().map(|_| self.table.fresh()).collect();
                        let _ = self.table.unify(expected, &T::Tuple(ts.clone()));
                        ts
                    }
                    T::Error => ps.iter().map(|_| T::Error).collect(),
                    other => {
                        let msg = format!(
                            "this tuple pattern has {} elements but the value is `{}`",
                            ps.len(),
                            self.show(&other)
                        );
                        self.err(p.span, msg);
                        ps.iter().map(|_| T::Error).collect()
                    }
                };
                let ids = ps
                    .iter()
                    .zip(&elems)
                    .map(|(q, t)| self.pat(q, t, refutable, kind, seen))
                    .collect();
                self.alloc_pat(PatKind::Tuple(ids), expected.clone(), p.span)
            }
            ast::PatKind::Ctor { name, args } => {
                if !refutable {
                    refute_err(self, p.span);
                }
                let resolved = self.ctor_sig(name);
                let Some((ctor, ty, fields)) = resolved else {
                    for a in args {
                        self.pat(a, &T::Error, refutable, kind, seen);
                    }
                    return self.alloc_pat(PatKind::Missing, T::Error, p.span);
                };
                self.coerce(p.span, &ty, expected, "this pattern");
                if fields.len() != args.len() {
                    self.err(
                        p.span,
                        format!(
                            "`{}` has {} field{}, but the pattern has {}",
                            name.text,
                            fields.len(),
                            if fields.len() == 1 { "" } else { "s" },
                            args.len()
                        ),
                    );
                }
                let ids = args
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let t = fields.get(i).cloned().unwrap_or(T::Error);
                        self.pat(q, &t, refutable, kind, seen)
                    })
                    .collect();
                self.alloc_pat(PatKind::Ctor { ctor, args: ids }, ty, p.span)
            }
        }
    }

    /// A constructor's IR form, its type and its field types.
    pub(super) fn ctor_sig(&mut self, name: &ast::Name) -> Option<(Ctor, T, Vec<T>)> {
        match name.text.as_str() {
            "Some" => {
                let t = self.table.fresh();
                Some((Ctor::Some, T::option(t.clone()), vec![t]))
            }
            "None" => {
                let t = self.table.fresh();
                Some((Ctor::None, T::option(t), vec![]))
            }
            other => match self.index.ctors.get(other) {
                Some(&(ty, i)) => {
                    let fields = match &self.items.types[ty].kind {
                        TypeDefKind::Sum { variants } => variants
                            .get(i as usize)
                            .map(|v| v.fields.iter().map(T::from_ir).collect())
                            .unwrap_or_default(),
                        TypeDefKind::Record { .. } => Vec::new(),
                    };
                    Some((Ctor::User(ty, i), T::Adt(ty), fields))
                }
                None => {
                    let msg = match self.find_type(other) {
                        Some(t)
                            if matches!(self.items.types[t].kind, TypeDefKind::Record { .. }) =>
                        {
                            format!("`{other}` is a record type, not a constructor; write `{other} {{ field: value, ... }}`")
                        }
                        _ => format!("unknown constructor `{other}`"),
                    };
                    let d = Diagnostic::error(name.span, msg);
                    let candidates = self
                        .index
                        .ctors
                        .keys()
                        .map(String::as_str)
                        .chain(["Some", "None"]);
                    self.diags
                        .push(crate::suggest::did_you_mean(d, other, candidates));
                    None
                }
            },
        }
    }
}
