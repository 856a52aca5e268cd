//! Upserts: a map `put` whose new value is computed from a lookup of the
//! same key in the same map, `m.put(k, m.get_or(k, 0) + v)` (also with
//! `m.get(k)`, `m.has(k)` or `m[k]` as the lookup). Unfused that is two
//! probes of the map's index, each hashing the key and comparing it with
//! the stored one. The native backend probes once at the lookup, keeps the
//! answer (where the key's value is, or where an insertion would go) and
//! writes the put there. The map is not changed by the probe, so the
//! lookup's result, everything evaluated between the lookup and the put,
//! every print and every trap there happen exactly as unfused; the put
//! then frees or keeps an owned key exactly as `put_owned` does.
//!
//! The answer is only valid while no map changes and the map and key are
//! the same values, so an upsert is fused only when the map and key are
//! names or fields of names, or the key a literal (read again, they are
//! the same), the lookup
//! runs on every way from the value's start to the put, and nothing in the
//! put's value can change a map or assign the names. Otherwise the
//! refusal says why. The ownership pass (`explain`), the native backend
//! and the printer (`emit drops`) read the same [`Plan`]; the interpreter
//! runs the lookup and the put as written.

use crate::{BinOp, Body, Callee, ExprId, ExprKind, LocalId, Method, StmtKind, Ty};
use std::collections::HashMap;

/// The kind of lookup an upsert starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// `m.get_or(k, d)`.
    GetOr,
    /// `m.get(k)`.
    Get,
    /// `m.has(k)`.
    Has,
    /// `m[k]` (traps when `k` is missing, as unfused).
    Index,
}

impl Lookup {
    pub fn name(self) -> &'static str {
        match self {
            Lookup::GetOr => "get_or",
            Lookup::Get => "get",
            Lookup::Has => "has",
            Lookup::Index => "[]",
        }
    }
}

/// Why an upsert probes twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The key is neither a literal, a name nor a field of one: the two
    /// evaluations are not known to give the same key.
    KeyNotName { key: ExprId },
    /// The lookup runs only on some ways to the put (a branch of an `if`
    /// or `match`, the right side of `&&`/`||`, a loop body or a lambda).
    Conditional { lookup: ExprId },
    /// `at`, in the put's value, may change a map: a put, remove or update,
    /// or a call of a function or function value.
    MayChangeMap { at: ExprId },
    /// An assignment in the put's value (`at`: its value) assigns the map's
    /// or the key's name.
    Assigns { at: ExprId },
}

/// Whether an upsert probes once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Fused,
    Refused(Refusal),
}

/// A put whose value looks up its own key in its own map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upsert {
    /// The put (`m.put(k, v)` or the ownership pass's `put_owned`).
    pub put: ExprId,
    /// The lookup whose probe the put reuses (the first that runs on
    /// every way to the put, else the first).
    pub lookup: ExprId,
    pub kind: Lookup,
    pub verdict: Verdict,
}

impl Upsert {
    pub fn fused(&self) -> bool {
        self.verdict == Verdict::Fused
    }
}

/// Every upsert of one body.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub upserts: Vec<Upsert>,
    by_put: HashMap<ExprId, usize>,
}

impl Plan {
    pub fn body(body: &Body) -> Plan {
        let mut plan = Plan::default();
        for (e, _) in body.exprs.iter() {
            if let Some(u) = upsert(body, e) {
                let i = plan.upserts.len();
                plan.by_put.insert(u.put, i);
                plan.upserts.push(u);
            }
        }
        plan
    }

    /// The fused upsert put `e` ends.
    pub fn fused_put(&self, e: ExprId) -> Option<&Upsert> {
        let u = &self.upserts[*self.by_put.get(&e)?];
        u.fused().then_some(u)
    }
}

/// A put's map, key and value.
fn put_parts(body: &Body, e: ExprId) -> Option<(ExprId, ExprId, ExprId)> {
    match &body[e].kind {
        ExprKind::Method {
            method: Method::MapPut,
            receiver,
            args,
        } => match args[..] {
            [k, v] => Some((*receiver, k, v)),
            _ => None,
        },
        ExprKind::PutOwnedKey { map, key, value } => Some((*map, *key, *value)),
        _ => None,
    }
}

/// A lookup's map, key and kind.
fn lookup_parts(body: &Body, e: ExprId) -> Option<(ExprId, ExprId, Lookup)> {
    match &body[e].kind {
        ExprKind::Method {
            method,
            receiver,
            args,
        } => {
            let kind = match method {
                Method::MapGetOr => Lookup::GetOr,
                Method::MapGet => Lookup::Get,
                Method::MapHas => Lookup::Has,
                _ => return None,
            };
            Some((*receiver, *args.first()?, kind))
        }
        ExprKind::Index { base, index } if matches!(body[*base].ty, Ty::Map(..)) => {
            Some((*base, *index, Lookup::Index))
        }
        _ => None,
    }
}

/// The local a name or a field chain of one reads (None: something else).
fn root_name(body: &Body, mut e: ExprId) -> Option<LocalId> {
    loop {
        match &body[e].kind {
            ExprKind::Local(l) => return Some(*l),
            ExprKind::Field { base, .. } => e = *base,
            _ => return None,
        }
    }
}

/// Whether two expressions are written the same: names, literals, fields
/// and method calls of them (the key of both a lookup and a put).
fn same(body: &Body, a: ExprId, b: ExprId) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        let ok = match (&body[a].kind, &body[b].kind) {
            (ExprKind::Local(x), ExprKind::Local(y)) => x == y,
            (ExprKind::Lit(x), ExprKind::Lit(y)) => x == y,
            (ExprKind::Field { base: x, index: i }, ExprKind::Field { base: y, index: j }) => {
                stack.push((*x, *y));
                i == j
            }
            (
                ExprKind::Method {
                    method: m,
                    receiver: x,
                    args: xs,
                },
                ExprKind::Method {
                    method: n,
                    receiver: y,
                    args: ys,
                },
            ) => {
                stack.push((*x, *y));
                stack.extend(xs.iter().copied().zip(ys.iter().copied()));
                m == n && xs.len() == ys.len()
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The upsert put `e` ends, if it is one.
fn upsert(body: &Body, e: ExprId) -> Option<Upsert> {
    let (map, key, value) = put_parts(body, e)?;
    let map_root = root_name(body, map)?;
    let key_root = root_name(body, key);
    let key_stable = key_root.is_some() || matches!(body[key].kind, ExprKind::Lit(_));
    // The lookups of the same key in the same map, in evaluation order,
    // each with whether it runs on every way to the put; and the first
    // thing that may change a map or assign the names.
    let mut lookups: Vec<(ExprId, Lookup, bool)> = Vec::new();
    let mut change: Option<Refusal> = None;
    let mut stack = vec![(value, true)];
    while let Some((x, always)) = stack.pop() {
        if let Some((m, k, kind)) = lookup_parts(body, x) {
            if same(body, m, map) && same(body, k, key) {
                lookups.push((x, kind, always));
            }
        }
        let kind = &body[x].kind;
        let changes = match kind {
            ExprKind::Call {
                callee: Callee::Fn(_) | Callee::Value(_),
                ..
            }
            | ExprKind::PutOwnedKey { .. } => true,
            ExprKind::Method { method, args, .. } => {
                matches!(
                    method,
                    Method::MapPut | Method::MapRemove | Method::MapUpdate
                ) || args.iter().any(|&a| {
                    // A function argument the method calls: a lambda's body
                    // is walked below; any other function value is unknown.
                    matches!(body[a].ty, Ty::Fn(..))
                        && !matches!(body[a].kind, ExprKind::Lambda { .. })
                })
            }
            _ => false,
        };
        if changes && change.is_none() {
            change = Some(Refusal::MayChangeMap { at: x });
        }
        // Children pushed in reverse, so they pop in evaluation order.
        let mut next: Vec<(ExprId, bool)> = Vec::new();
        match kind {
            ExprKind::If { cond, then, else_ } => {
                next.push((*cond, always));
                next.push((*then, false));
                next.extend(else_.map(|x| (x, false)));
            }
            ExprKind::Match { scrutinee, arms } => {
                next.push((*scrutinee, always));
                next.extend(arms.iter().map(|a| (a.body, false)));
            }
            ExprKind::Binary {
                op: BinOp::And | BinOp::Or,
                lhs,
                rhs,
            } => {
                next.push((*lhs, always));
                next.push((*rhs, false));
            }
            ExprKind::Lambda { body: b, .. } => next.push((*b, false)),
            ExprKind::Block { stmts, tail } => {
                for &s in stmts {
                    match &body[s].kind {
                        StmtKind::Let { init: x, .. }
                        | StmtKind::Var { init: x, .. }
                        | StmtKind::Expr(x) => next.push((*x, always)),
                        StmtKind::Assign { local, value, .. } => {
                            if (Some(*local) == key_root || *local == map_root) && change.is_none()
                            {
                                change = Some(Refusal::Assigns { at: *value });
                            }
                            next.push((*value, always));
                        }
                        StmtKind::For { iter, body: b, .. } => {
                            next.push((*iter, always));
                            next.push((*b, false));
                        }
                        StmtKind::While { cond, body: b } => {
                            next.push((*cond, always));
                            next.push((*b, false));
                        }
                        StmtKind::Drop(_) | StmtKind::Clear { .. } => {}
                    }
                }
                next.extend(tail.map(|t| (t, always)));
            }
            k => next.extend(crate::visit::children(k).into_iter().map(|c| (c, always))),
        }
        stack.extend(next.into_iter().rev());
    }
    let &(first, first_kind, _) = lookups.first()?;
    let (lookup, kind) = lookups
        .iter()
        .find(|(_, _, always)| *always)
        .map_or((first, first_kind), |&(l, k, _)| (l, k));
    let verdict = if !key_stable {
        Verdict::Refused(Refusal::KeyNotName { key })
    } else if let Some(r) = change {
        Verdict::Refused(r)
    } else if !lookups.iter().any(|(_, _, always)| *always) {
        Verdict::Refused(Refusal::Conditional { lookup })
    } else {
        Verdict::Fused
    };
    Some(Upsert {
        put: e,
        lookup,
        kind,
        verdict,
    })
}
