//! Fates: for every allocation site, what happens to its block and why
//! (what `sspur explain` prints).

use ir::{BinOp, Builtin, Callee, ExprId, ExprKind, FnId, Method, Program, Ty};

use crate::decide::{Decider, End, Fresh, Own};
use crate::rewrite::Plan;
use crate::walk::{builtin_name, ctor_name, Ctx};
use crate::{Fate, Summary};

/// Whether a fate text says the block is freed statically.
pub fn is_freed(fate: &str) -> bool {
    fate.starts_with("freed")
        || fate.starts_with("handed to put")
        || fate.starts_with("never built")
}

pub fn fates(
    program: &Program,
    f: FnId,
    d: &Decider,
    plan: &Plan,
    summaries: &[Summary],
) -> Vec<Fate> {
    let r = Reporter {
        program,
        f,
        d,
        plan,
        summaries,
    };
    let mut out = Vec::new();
    let mut ids: Vec<ExprId> = d.facts.exprs.iter().map(|(e, _)| e).collect();
    ids.sort_by_key(|e| e.into_raw().into_u32());
    for e in ids {
        if let Some((what, allocates)) = r.site(e) {
            let fate = if allocates {
                r.fate(e)
            } else {
                match d.fresh(e) {
                    Fresh::No(_) if r.is_builder_push(e) => {
                        "never built: the pushes append to a string builder (push then join)"
                            .to_string()
                    }
                    Fresh::No(why) => match &d.body[e].kind {
                        ExprKind::Call {
                            callee: Callee::Fn(g),
                            ..
                        } => format!(
                            "not fresh: {}() {}",
                            program.items.fns[*g].name,
                            summaries[g.into_raw().into_u32() as usize]
                                .why_not_fresh
                                .as_deref()
                                .unwrap_or("does not return a fresh value")
                        ),
                        _ => format!("not fresh: {why}"),
                    },
                    Fresh::Yes { .. } => r.fate(e),
                }
            };
            out.push(Fate {
                func: f,
                expr: e,
                offset: d.sm.expr(e).start,
                what,
                fate,
                allocates,
            });
        }
    }
    out
}

struct Reporter<'a> {
    program: &'a Program,
    f: FnId,
    d: &'a Decider<'a>,
    plan: &'a Plan,
    summaries: &'a [Summary],
}

fn kind_of(ty: &Ty) -> &'static str {
    match ty {
        Ty::List(_) => "list",
        Ty::Str => "string",
        Ty::Map(..) => "map",
        Ty::Tuple(_) => "tuple",
        Ty::Fn(..) => "closure",
        Ty::Option(_) => "option",
        Ty::Adt(_) => "value",
        _ => "value",
    }
}

impl Reporter<'_> {
    fn pos(&self, at: u32) -> String {
        self.d.pos(at)
    }

    /// `Some((description, allocates))` for an allocation site; calls of
    /// functions returning a list or string are listed too (for their
    /// reason) but do not allocate themselves.
    fn site(&self, e: ExprId) -> Option<(String, bool)> {
        let body = self.d.body;
        let ex = &body[e];
        let kind = kind_of(&ex.ty);
        let facts = self.d.facts.exprs.get(e)?;
        Some(match &ex.kind {
            ExprKind::List(xs) if !xs.is_empty() => ("list from a literal".into(), true),
            ExprKind::Range { .. } if facts.ctx != Ctx::Read("for".into()) => {
                ("list from a range".into(), true)
            }
            ExprKind::Interp(_) => ("string from interpolation".into(), true),
            ExprKind::Binary { op: BinOp::Add, .. } if ex.ty == Ty::Str => {
                ("string from +".into(), true)
            }
            ExprKind::Method { method, .. } => {
                let m = *method;
                let allocating = matches!(crate::table::row(m).result, crate::Res::Fresh)
                    || matches!(
                        m,
                        Method::ListPush | Method::ListConcat | Method::ListCounts
                    );
                if !allocating {
                    return None;
                }
                if self.is_builder_push(e) {
                    return Some((format!("{kind} from {}", m.name()), false));
                }
                (format!("{kind} from {}", m.name()), true)
            }
            ExprKind::Call { callee, .. } => match callee {
                Callee::Builtin(
                    b
                    @ (Builtin::ReadFile | Builtin::ReadStdin | Builtin::Args | Builtin::EmptyMap),
                ) => (format!("{kind} from {}()", builtin_name(*b)), true),
                Callee::Fn(g) if ex.ty.is_freeable() => (
                    format!("{kind} from {}()", self.program.items.fns[*g].name),
                    false,
                ),
                _ => return None,
            },
            ExprKind::Record { ty, .. } => (
                format!("record {}", self.program.items.types[*ty].name),
                true,
            ),
            ExprKind::Tuple(_) => ("tuple".into(), true),
            ExprKind::Ctor { ctor, args } if !args.is_empty() => (
                format!("value {}(..)", ctor_name(&self.program.items, *ctor)),
                true,
            ),
            ExprKind::Lambda { .. } => ("closure".into(), true),
            _ => return None,
        })
    }

    fn is_builder_push(&self, e: ExprId) -> bool {
        match self.d.facts.ctx(e) {
            Some(Ctx::Assign(x)) => self.plan.builders.contains_key(x),
            _ => false,
        }
    }

    /// The top of `e`'s chain of transparent edges (the expression whose
    /// value `e`'s value becomes).
    fn top(&self, mut e: ExprId) -> ExprId {
        while let Some(f) = self.d.facts.exprs.get(e) {
            match (f.transparent, f.parent) {
                (true, Some(p)) => e = p,
                _ => break,
            }
        }
        e
    }

    fn fate(&self, e: ExprId) -> String {
        let body = self.d.body;
        if !body[e].ty.is_freeable() {
            return "left for the collector: only list buffers and string blocks are freed early"
                .into();
        }
        if self.is_builder_push(e) {
            return "never built: the pushes append to a string builder (push then join)".into();
        }
        self.value_fate(e, 0)
    }

    /// What happens to the value of `e` (a fresh or growing expression).
    fn value_fate(&self, e: ExprId, depth: u32) -> String {
        if depth > 32 {
            return "left for the collector".into();
        }
        let d = self.d;
        let body = d.body;
        let top = self.top(e);
        let Some(facts) = d.facts.exprs.get(top) else {
            return "left for the collector: unreachable".into();
        };
        let grows = matches!(
            body[e].kind,
            ExprKind::Method {
                method: Method::ListPush | Method::ListConcat,
                ..
            }
        );
        if let Some(Ctx::Assign(x)) | Some(Ctx::Bind(x)) = Some(&facts.ctx) {
            if grows && matches!(facts.ctx, Ctx::Assign(_)) {
                return match d.own(*x) {
                    Own::Yes(end) => format!(
                        "owned by {} (the old buffer is freed if it moved): {}",
                        d.local_name(*x),
                        self.end_fate(*x, &end, depth)
                    ),
                    Own::No(why, at) => format!(
                        "left for the collector: {} is not the only owner ({why} at {})",
                        d.local_name(*x),
                        self.pos(at)
                    ),
                };
            }
        }
        if let Fresh::No(why) = d.fresh(top) {
            return format!("left for the collector: its value ends up in {why}");
        }
        match &facts.ctx {
            Ctx::Read(what) => {
                if what.starts_with("a discarded") && self.plan.temps.contains_key(&top) {
                    "freed right after it is made (its value is discarded)".into()
                } else if self.plan.temps.contains_key(&top) {
                    format!(
                        "freed after its read by {what} at {} (temporary)",
                        self.pos(facts.reader_at)
                    )
                } else {
                    format!(
                        "left for the collector: read by {what} at {}, on a path that does not return",
                        self.pos(facts.reader_at)
                    )
                }
            }
            Ctx::Bind(x) | Ctx::Assign(x) => match d.own(*x) {
                Own::Yes(end) => self.end_fate(*x, &end, depth),
                Own::No(why, at) => format!(
                    "left for the collector: {} {why} at {}",
                    d.local_name(*x),
                    self.pos(at)
                ),
            },
            Ctx::Out => {
                let s = &self.summaries[self.f.into_raw().into_u32() as usize];
                let name = &self.program.items.fns[self.f].name;
                if s.fresh_result {
                    format!("returned by {name}(), whose result is fresh: its callers decide")
                } else {
                    format!(
                        "left for the collector: returned by {name}(), which {}",
                        s.why_not_fresh
                            .as_deref()
                            .unwrap_or("does not return a fresh value")
                    )
                }
            }
            Ctx::Escape(why) => {
                if let Some(x) = self.deep_map_owner(top) {
                    return format!("freed with {x}, which owns its strings");
                }
                if let Some(f) = self.deep_owner(top, depth) {
                    return f;
                }
                if let Some(at) = self.deep_temp_owner(top) {
                    return format!(
                        "freed with the temporary list that owns it, after its read at {}",
                        self.pos(at)
                    );
                }
                if let Some(b) = self.builder_piece(top) {
                    return format!(
                        "freed after it is appended to the string builder {b} at {} (temporary)",
                        self.pos(facts.reader_at)
                    );
                }
                format!(
                    "left for the collector: {why} at {}",
                    self.pos(facts.reader_at)
                )
            }
            Ctx::Key(put) => {
                if self.plan.puts.contains(put) {
                    format!(
                        "handed to put at {} (freed there if the key was already present)",
                        self.pos(d.sm.expr(*put).start)
                    )
                } else {
                    format!(
                        "left for the collector: stored in a map as a key at {}",
                        self.pos(d.sm.expr(*put).start)
                    )
                }
            }
            Ctx::GrowSelf(_) => "left for the collector".into(),
        }
    }

    fn end_fate(&self, x: ir::LocalId, end: &End, depth: u32) -> String {
        let d = self.d;
        let name = d.local_name(x);
        let lf = d.facts.local(x);
        let decl = lf.and_then(|l| l.decl.as_ref());
        match end {
            End::Drop { index, deep } => {
                let Some(decl) = decl else {
                    return "left for the collector".into();
                };
                let at = match &d.body[decl.block].kind {
                    ExprKind::Block { stmts, tail } => match stmts.get(*index) {
                        Some(s) => d.sm.stmt(*s).start,
                        None => tail.map(|t| d.sm.expr(t).start).unwrap_or(0),
                    },
                    _ => 0,
                };
                let replaced = lf.is_some_and(|l| !l.assigns.is_empty());
                format!(
                    "freed {}after {} (last use of {name}{})",
                    if replaced { "when replaced or " } else { "" },
                    self.pos(at),
                    if *deep { ", with its strings" } else { "" }
                )
            }
            End::MovedOut => match decl {
                Some(decl) => self.value_fate(decl.block, depth + 1),
                None => "left for the collector".into(),
            },
            End::Kept { why, at } => format!(
                "freed when {name} is replaced; its last value is left for the collector: \
                 {name} {why} at {}",
                self.pos(*at)
            ),
            End::ConsumedKey(put) => format!(
                "handed to put at {} (freed there if the key was already present)",
                self.pos(d.sm.expr(*put).start)
            ),
            End::Builder { .. } => {
                "never built: the pushes append to a string builder (push then join)".into()
            }
        }
    }

    /// The builder var a pushed string is appended to, when it is a
    /// temporary of that push.
    fn builder_piece(&self, e: ExprId) -> Option<String> {
        let d = self.d;
        let p = d.facts.exprs.get(e)?.parent?;
        match d.facts.exprs.get(p)?.ctx {
            Ctx::Assign(x)
                if self.plan.builders.contains_key(&x) && self.plan.temps.contains_key(&e) =>
            {
                Some(d.local_name(x))
            }
            _ => None,
        }
    }

    /// The deep list made by `xs.map(|x| <fresh string>)` whose lambda
    /// returns `e`.
    fn deep_map_owner(&self, e: ExprId) -> Option<String> {
        let d = self.d;
        let lambda = d.facts.exprs.get(e)?.parent?;
        if !matches!(d.body[lambda].kind, ExprKind::Lambda { .. }) {
            return None;
        }
        let map = d.facts.exprs.get(lambda)?.parent?;
        if !matches!(
            d.body[map].kind,
            ExprKind::Method {
                method: Method::ListMap,
                ..
            }
        ) {
            return None;
        }
        let top = self.top(map);
        match d.facts.exprs.get(top)?.ctx {
            Ctx::Bind(x) | Ctx::Assign(x) => match d.own(x) {
                Own::Yes(End::Drop { deep: true, .. }) if d.owned_string(e) => {
                    Some(d.local_name(x))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// For a string returned by the lambda of a deep temporary
    /// `xs.map(|x| "..")`: where that temporary is read.
    fn deep_temp_owner(&self, e: ExprId) -> Option<u32> {
        let d = self.d;
        let lambda = d.facts.exprs.get(e)?.parent?;
        if !matches!(d.body[lambda].kind, ExprKind::Lambda { .. }) {
            return None;
        }
        let map = d.facts.exprs.get(lambda)?.parent?;
        let top = self.top(map);
        if self.plan.deep_temps.contains(&top) && d.owned_string(e) {
            d.facts.exprs.get(top).map(|f| f.reader_at)
        } else {
            None
        }
    }

    /// The deep list that owns a string stored by `x := x.push(s)` or in
    /// the list literal of its declaration.
    fn deep_owner(&self, e: ExprId, depth: u32) -> Option<String> {
        let d = self.d;
        let p = d.facts.exprs.get(e)?.parent?;
        let pf = d.facts.exprs.get(p)?;
        let x = match (&d.body[p].kind, &pf.ctx) {
            (
                ExprKind::Method {
                    method: Method::ListPush,
                    ..
                },
                Ctx::Assign(x),
            ) => *x,
            (ExprKind::List(_), Ctx::Bind(x) | Ctx::Assign(x)) => *x,
            _ => return None,
        };
        if !d.owned_string(e) {
            return None;
        }
        let name = d.local_name(x);
        match d.own(x) {
            Own::Yes(End::Drop { deep: true, .. }) => {
                Some(format!("freed with {name}, which owns its strings"))
            }
            Own::Yes(End::MovedOut) if d.strings_owned(x, true) => {
                let block = d.facts.local(x)?.decl.as_ref()?.block;
                Some(format!(
                    "owned by {name}, a list that owns its strings, which is {}",
                    self.value_fate(block, depth + 1)
                ))
            }
            _ => None,
        }
    }
}
