//! Exhaustiveness of `match`: the usefulness algorithm (Maranget, "Warnings
//! for pattern matching") over the body's checked patterns, returning a
//! value that no arm covers.
//!
//! Bool, Option, sum types and tuples have finite constructor sets; Int and
//! Str literals are an infinite set (only `_` or a binding completes them).
//! The same question finds unreachable arms: an arm is reachable when its
//! pattern is useful after the arms before it (a warning, not an error:
//! arms are tried in order).

use ir::{Body, Ctor, ExprId, ExprKind, ItemTree, Lit, PatId, PatKind, Ty, TypeDefKind};

#[derive(Clone, Debug, PartialEq)]
enum C {
    Bool(bool),
    Some,
    None,
    Variant(u32),
    Tuple(usize),
    Int(i64),
    Str(String),
}

#[derive(Clone, Debug)]
enum P {
    Wild,
    Con(C, Vec<P>),
}

/// None if exhaustive (or not checkable because of earlier errors), else a
/// pattern the arms miss, written as source.
pub(crate) fn check_match(items: &ItemTree, body: &Body, m: ExprId) -> Option<String> {
    let ExprKind::Match { scrutinee, arms } = &body[m].kind else {
        return None;
    };
    let ty = body[*scrutinee].ty.clone();
    if has_error(&ty) {
        return None;
    }
    let mut rows = Vec::new();
    for arm in arms {
        rows.push(vec![lower(body, arm.pat)?]);
    }
    let mut budget = 100_000u32;
    let w = useful(
        items,
        &rows,
        &[P::Wild],
        std::slice::from_ref(&ty),
        &mut budget,
    )?;
    let mut s = String::new();
    show(items, &w[0], &ty, &mut s);
    Some(s)
}

/// The arms no value reaches, each with an earlier arm that alone covers
/// it when there is one. Nothing when a pattern or type holds an error, and
/// an arm whose question ran out of budget counts as reachable.
pub(crate) fn unreachable_arms(
    items: &ItemTree,
    body: &Body,
    m: ExprId,
) -> Vec<(usize, Option<usize>)> {
    let ExprKind::Match { scrutinee, arms } = &body[m].kind else {
        return Vec::new();
    };
    let ty = body[*scrutinee].ty.clone();
    if has_error(&ty) {
        return Vec::new();
    }
    let Some(rows) = arms
        .iter()
        .map(|a| lower(body, a.pat).map(|p| vec![p]))
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    let tys = std::slice::from_ref(&ty);
    // Some(true): `row` adds a value to `before`; None: undecided.
    let adds = |before: &[Vec<P>], row: &[P]| {
        let mut budget = 100_000u32;
        let w = useful(items, before, row, tys, &mut budget);
        (w.is_some() || budget > 0).then_some(w.is_some())
    };
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate().skip(1) {
        if adds(&rows[..i], row) != Some(false) {
            continue;
        }
        let by = (0..i).find(|&j| adds(std::slice::from_ref(&rows[j]), row) == Some(false));
        out.push((i, by));
    }
    out
}

fn has_error(t: &Ty) -> bool {
    match t {
        Ty::Error => true,
        Ty::List(e) | Ty::Option(e) => has_error(e),
        Ty::Map(k, v) => has_error(k) || has_error(v),
        Ty::Tuple(ts) => ts.iter().any(has_error),
        Ty::Fn(ps, r) => ps.iter().any(has_error) || has_error(r),
        _ => false,
    }
}

/// Converts a checked pattern; None if it holds an error.
fn lower(body: &Body, p: PatId) -> Option<P> {
    Some(match &body[p].kind {
        PatKind::Missing => return None,
        PatKind::Wild | PatKind::Bind(_) => P::Wild,
        PatKind::Lit(Lit::Int(i)) => P::Con(C::Int(*i), vec![]),
        PatKind::Lit(Lit::Str(s)) => P::Con(C::Str(s.clone()), vec![]),
        PatKind::Lit(Lit::Bool(b)) => P::Con(C::Bool(*b), vec![]),
        PatKind::Lit(_) => P::Wild,
        PatKind::At { pat, .. } => return lower(body, *pat),
        PatKind::Tuple(ps) => P::Con(
            C::Tuple(ps.len()),
            ps.iter().map(|q| lower(body, *q)).collect::<Option<_>>()?,
        ),
        PatKind::Ctor { ctor, args } => {
            let c = match ctor {
                Ctor::Some => C::Some,
                Ctor::None => C::None,
                Ctor::User(_, i) => C::Variant(*i),
            };
            P::Con(
                c,
                args.iter()
                    .map(|q| lower(body, *q))
                    .collect::<Option<_>>()?,
            )
        }
    })
}

/// All constructors of a type, if the set is finite.
fn all_ctors(items: &ItemTree, ty: &Ty) -> Option<Vec<C>> {
    match ty {
        Ty::Bool => Some(vec![C::Bool(false), C::Bool(true)]),
        Ty::Option(_) => Some(vec![C::None, C::Some]),
        Ty::Tuple(ts) => Some(vec![C::Tuple(ts.len())]),
        Ty::Adt(id) => match &items.types[*id].kind {
            TypeDefKind::Sum { variants } => {
                Some((0..variants.len() as u32).map(C::Variant).collect())
            }
            TypeDefKind::Record { .. } => None,
        },
        _ => None,
    }
}

/// The types of a constructor's fields.
fn field_tys(items: &ItemTree, ty: &Ty, c: &C) -> Vec<Ty> {
    match (c, ty) {
        (C::Some, Ty::Option(t)) => vec![(**t).clone()],
        (C::Tuple(_), Ty::Tuple(ts)) => ts.to_vec(),
        (C::Variant(i), Ty::Adt(id)) => match &items.types[*id].kind {
            TypeDefKind::Sum { variants } => variants
                .get(*i as usize)
                .map(|v| v.fields.clone())
                .unwrap_or_default(),
            TypeDefKind::Record { .. } => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Rows whose head matches `c`, with the head replaced by its fields.
fn specialize(rows: &[Vec<P>], c: &C, arity: usize) -> Vec<Vec<P>> {
    let mut out = Vec::new();
    for row in rows {
        let Some((head, rest)) = row.split_first() else {
            continue;
        };
        match head {
            P::Wild => {
                let mut r = vec![P::Wild; arity];
                r.extend_from_slice(rest);
                out.push(r);
            }
            P::Con(hc, args) if hc == c => {
                let mut r: Vec<P> = args.iter().take(arity).cloned().collect();
                r.resize(arity, P::Wild);
                r.extend_from_slice(rest);
                out.push(r);
            }
            P::Con(..) => {}
        }
    }
    out
}

/// A witness vector (one pattern per column) that `v` matches and no row
/// does, if any. `budget` bounds the work on pathological inputs (then the
/// match is treated as exhaustive).
fn useful(
    items: &ItemTree,
    rows: &[Vec<P>],
    v: &[P],
    tys: &[Ty],
    budget: &mut u32,
) -> Option<Vec<P>> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let Some((head, rest)) = v.split_first() else {
        return if rows.is_empty() {
            Some(Vec::new())
        } else {
            None
        };
    };
    let ty = tys.first().cloned().unwrap_or(Ty::Error);
    let rest_tys = tys.get(1..).unwrap_or(&[]);
    let rebuild = |c: &C, arity: usize, mut w: Vec<P>| -> Vec<P> {
        let tail = w.split_off(arity.min(w.len()));
        let mut out = vec![P::Con(c.clone(), w)];
        out.extend(tail);
        out
    };
    match head {
        P::Con(c, args) => {
            let ftys = field_tys(items, &ty, c);
            let arity = args.len();
            let mut sub_tys = ftys;
            sub_tys.resize(arity, Ty::Error);
            sub_tys.extend_from_slice(rest_tys);
            let mut nv = args.clone();
            nv.extend_from_slice(rest);
            let w = useful(items, &specialize(rows, c, arity), &nv, &sub_tys, budget)?;
            Some(rebuild(c, arity, w))
        }
        P::Wild => {
            let used: Vec<C> = rows
                .iter()
                .filter_map(|r| match r.first() {
                    Some(P::Con(c, _)) => Some(c.clone()),
                    _ => None,
                })
                .collect();
            let all = all_ctors(items, &ty);
            if let Some(all) = &all {
                if !all.is_empty() && all.iter().all(|c| used.contains(c)) {
                    for c in all {
                        let ftys = field_tys(items, &ty, c);
                        let arity = ftys.len();
                        let mut sub_tys = ftys;
                        sub_tys.extend_from_slice(rest_tys);
                        let mut nv = vec![P::Wild; arity];
                        nv.extend_from_slice(rest);
                        if let Some(w) =
                            useful(items, &specialize(rows, c, arity), &nv, &sub_tys, budget)
                        {
                            return Some(rebuild(c, arity, w));
                        }
                    }
                    return None;
                }
            }
            let default: Vec<Vec<P>> = rows
                .iter()
                .filter(|r| matches!(r.first(), Some(P::Wild)))
                .map(|r| r[1..].to_vec())
                .collect();
            let w = useful(items, &default, rest, rest_tys, budget)?;
            // Name a missing constructor only when the column names some;
            // otherwise `_` says it best.
            let missing = match &all {
                Some(_) if used.is_empty() => P::Wild,
                Some(all) => match all.iter().find(|c| !used.contains(c)) {
                    Some(c) => {
                        let arity = field_tys(items, &ty, c).len();
                        P::Con(c.clone(), vec![P::Wild; arity])
                    }
                    None => P::Wild,
                },
                None => P::Wild,
            };
            let mut out = vec![missing];
            out.extend(w);
            Some(out)
        }
    }
}

fn show(items: &ItemTree, p: &P, ty: &Ty, s: &mut String) {
    match p {
        P::Wild => s.push('_'),
        P::Con(c, args) => {
            let ftys = field_tys(items, ty, c);
            let name = match c {
                C::Bool(b) => b.to_string(),
                C::Some => "Some".into(),
                C::None => "None".into(),
                C::Variant(i) => match ty {
                    Ty::Adt(id) => match &items.types[*id].kind {
                        TypeDefKind::Sum { variants } => variants
                            .get(*i as usize)
                            .map(|v| v.name.clone())
                            .unwrap_or_default(),
                        TypeDefKind::Record { .. } => String::new(),
                    },
                    _ => String::new(),
                },
                C::Tuple(_) => String::new(),
                C::Int(i) => i.to_string(),
                C::Str(t) => format!("{t:?}"),
            };
            s.push_str(&name);
            if !args.is_empty() || matches!(c, C::Tuple(_)) {
                s.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    show(items, a, ftys.get(i).unwrap_or(&Ty::Error), s);
                }
                s.push(')');
            }
        }
    }
}
