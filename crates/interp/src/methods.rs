//! Every built-in method (docs/language.md), with the block model's rules:
//! fresh results get new blocks, views share their source's block, and
//! `push`/`concat` follow the shared list growth policy.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use ir::methods::Recv;
use ir::{ExprId, Method, Ty};

use crate::eval::{cmp_values, elem_ty, is_place, type_error, values_eq, Frame, Interp, R};
use crate::limit;
use crate::show::show_inner;
use crate::value::{Key, ListVal, MapObj, Site, StrVal, Value};

fn some(v: Value) -> Value {
    Value::some(v, Site { offset: 0 })
}

fn str_of(v: &Value) -> R<&StrVal> {
    match v {
        Value::Str(s) => Ok(s),
        _ => Err(type_error("string method receiver")),
    }
}

fn list_of(v: &Value) -> R<&ListVal> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(type_error("list method receiver")),
    }
}

fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Unit)
}

/// The element index of `xs.set(n, v)`, or the trap `xs[n]` gives.
fn set_index(it: &Interp, fr: &Frame, e: ExprId, l: &ListVal, n: &Value) -> R<usize> {
    let n = n.as_int();
    match usize::try_from(n).ok().filter(|i| *i < l.len) {
        Some(i) => Ok(i),
        None => it.trap(
            fr,
            e,
            format!(
                "index out of bounds: the len is {} but the index is {n}",
                l.len
            ),
        ),
    }
}

/// The new element `v` of a `set` (the value of `x`) is stored: read from
/// a place or a view, it is a second reference.
fn set_element(it: &mut Interp, fr: &Frame, x: Option<ExprId>, v: &Value) {
    if x.is_some_and(|x| is_place(fr.body, x)) || v.is_view() {
        it.share(v);
    }
}

/// `xs.set(n, v)` written into xs's own buffer ([`ir::ExprKind::SetInPlace`]):
/// the same index check and trap as the copy, then element `n` of the
/// buffer is replaced and the result is the same block. The old value is
/// consumed: with drops checked, it must be a live, whole, unshared list,
/// and any later use of it (or of a view of it) is reported.
pub(crate) fn set_in_place(
    it: &mut Interp,
    fr: &mut Frame,
    e: ExprId,
    value: ExprId,
    recv: Value,
    n: Value,
    v: Value,
) -> R<Value> {
    let l = list_of(&recv)?;
    let i = set_index(it, fr, e, l, &n)?;
    let site = it.site(fr, e);
    it.check_set_in_place(l, site)?;
    set_element(it, fr, Some(value), &v);
    let Some(buf) = &l.buf else {
        return Err(type_error("set in place on an empty list"));
    };
    buf.items.borrow_mut()[l.start + i] = v;
    let version = buf.version.get().wrapping_add(1);
    buf.version.set(version);
    buf.set_at.set(Some(site));
    Ok(Value::List(ListVal {
        version,
        ..l.clone()
    }))
}

/// `xs.push(x)` / `xs.concat(ys)`. With `consume` the receiver is the
/// variable being reassigned (`x := x.push(..)`), so neither growing in
/// place nor copying makes a second reference to what it holds.
pub(crate) fn eval_grow<'p>(
    it: &mut Interp<'p>,
    fr: &mut Frame<'p>,
    e: ExprId,
    m: Method,
    receiver: ExprId,
    args: &[ExprId],
    consume: bool,
) -> R<Value> {
    let recv = it.eval(fr, receiver)?;
    let a = match args.first() {
        Some(x) => *x,
        None => return Err(type_error("push without an argument")),
    };
    let v = it.eval(fr, a)?;
    grow_with(it, fr, e, m, a, recv, v, consume)
}

#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn grow_with<'p>(
    it: &mut Interp<'p>,
    fr: &mut Frame<'p>,
    e: ExprId,
    m: Method,
    a: ExprId,
    recv: Value,
    v: Value,
    consume: bool,
) -> R<Value> {
    let extra = if m == Method::ListPush {
        it.stored(fr, a, &v);
        vec![v]
    } else {
        let ys = list_of(&v)?.items();
        for y in &ys {
            it.share(y);
        }
        ys
    };
    let l = list_of(&recv)?;
    match grow(it, fr, e, l, extra, consume) {
        Some(l) => Ok(Value::List(l)),
        None => it.trap(fr, e, "out of memory".into()),
    }
}

fn grow(
    it: &mut Interp,
    fr: &Frame,
    e: ExprId,
    l: &ListVal,
    extra: Vec<Value>,
    consume: bool,
) -> Option<ListVal> {
    let new_len = l.len + extra.len();
    if let Some(buf) = &l.buf {
        let mut items = buf.items.borrow_mut();
        if l.start + l.len == items.len() && items.len() + extra.len() <= buf.cap {
            if !limit::reserve(&mut items, extra.len()) {
                return None;
            }
            items.extend(extra);
            drop(items);
            if !consume {
                it.share_meta(&buf.meta, crate::Kind::List);
            }
            return Some(ListVal {
                buf: Some(buf.clone()),
                start: l.start,
                len: new_len,
                view: false,
                version: l.version,
            });
        }
    }
    if new_len == 0 {
        return Some(ListVal::empty());
    }
    // The list growth rule's new capacity (crates/ir/src/lib.rs), checked
    // against the heap limit as the native runtime checks it.
    let cap = (2 * new_len).max(4);
    let sample = l.get(0).or_else(|| extra.first().cloned());
    if !limit::list_fits(cap as u128, limit::elem_bytes(sample.as_ref())) {
        return None;
    }
    let mut items = Vec::new();
    if !limit::reserve(&mut items, new_len) {
        return None;
    }
    items.extend(l.items());
    if !consume {
        for x in &items {
            it.share(x);
        }
    }
    items.extend(extra);
    let site = it.site(fr, e);
    Some(it.new_list_cap(items, cap, site))
}

#[inline(never)]
pub(crate) fn eval_method<'p>(
    it: &mut Interp<'p>,
    fr: &mut Frame<'p>,
    e: ExprId,
    m: Method,
    receiver: ExprId,
    arg_exprs: &[ExprId],
) -> R<Value> {
    use Method::*;
    let r = if matches!(m, ListPush | ListConcat) {
        eval_grow(it, fr, e, m, receiver, arg_exprs, false)
    } else {
        let recv = it.eval(fr, receiver)?;
        let args = it.eval_method_args(fr, m, arg_exprs)?;
        apply(it, fr, e, m, receiver, arg_exprs, recv, args)
    };
    it.checked(fr, e, r)
}

/// One method call with its receiver and arguments evaluated.
struct Call<'a> {
    e: ExprId,
    m: Method,
    receiver: ExprId,
    arg_exprs: &'a [ExprId],
    recv: Value,
    args: Vec<Value>,
    site: Site,
}

/// A method on evaluated receiver and arguments, by receiver type.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn apply<'p>(
    it: &mut Interp<'p>,
    fr: &mut Frame<'p>,
    e: ExprId,
    m: Method,
    receiver: ExprId,
    arg_exprs: &[ExprId],
    recv: Value,
    args: Vec<Value>,
) -> R<Value> {
    let site = it.site(fr, e);
    let c = Call {
        e,
        m,
        receiver,
        arg_exprs,
        recv,
        args,
        site,
    };
    match m.def().recv {
        Recv::List
            if matches!(
                m,
                Method::ListSortBy
                    | Method::ListMap
                    | Method::ListFilter
                    | Method::ListFlatMap
                    | Method::ListFold
                    | Method::ListAny
                    | Method::ListAll
                    | Method::ListFind
            ) =>
        {
            list_closure_method(it, fr, c)
        }
        Recv::List => list_method(it, fr, c),
        Recv::Str => str_method(it, fr, c),
        Recv::Map => map_method(it, fr, c),
        Recv::Int | Recv::F64 => num_method(it, fr, c),
        Recv::Option => option_method(it, fr, c),
    }
}

/// The methods of `Option[T]`.
#[inline(never)]
fn option_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call {
        e,
        m,
        recv,
        args,
        site,
        ..
    } = c;
    let payload = match &recv {
        Value::Some(x) => Some((**x).clone()),
        Value::None => None,
        _ => return Err(type_error("option method receiver")),
    };
    Ok(match (m, payload) {
        (OptIsSome, p) => Value::Bool(p.is_some()),
        (OptIsNone, p) => Value::Bool(p.is_none()),
        (OptUnwrap | OptUnwrapOr, Some(x)) => x,
        (OptUnwrap, None) => return it.trap(fr, e, "unwrap of None".into()),
        (OptUnwrapOr, None) => arg(&args, 0),
        (OptMap, Some(x)) => some(it.call_value(&arg(&args, 0), vec![x], site.offset)?),
        (OptAndThen, Some(x)) => it.call_value(&arg(&args, 0), vec![x], site.offset)?,
        (OptMap | OptAndThen, None) => Value::None,
        _ => return Err(type_error("method dispatch")),
    })
}

/// The methods of `List[T]` (push and concat grow: see `eval_grow`).
#[inline(never)]
fn list_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call {
        e,
        m,
        receiver,
        arg_exprs,
        recv,
        args,
        site,
    } = c;
    Ok(match m {
        ListLen => Value::Int(list_of(&recv)?.len as i64),
        ListIsEmpty => Value::Bool(list_of(&recv)?.len == 0),
        ListGet => {
            let l = list_of(&recv)?;
            match usize::try_from(arg(&args, 0).as_int())
                .ok()
                .and_then(|i| l.get(i))
            {
                Some(x) => {
                    it.share(&x);
                    some(x)
                }
                None => Value::None,
            }
        }
        ListFirst | ListLast => {
            let l = list_of(&recv)?;
            let x = if m == ListFirst {
                l.get(0)
            } else {
                l.len.checked_sub(1).and_then(|i| l.get(i))
            };
            match x {
                Some(x) => x,
                None => return it.trap(fr, e, format!("{} of an empty list", m.name())),
            }
        }
        ListContains => {
            let x = arg(&args, 0);
            Value::Bool(list_of(&recv)?.with(|ys| ys.iter().any(|y| values_eq(y, &x))))
        }
        ListSum => {
            let l = list_of(&recv)?;
            let is_f64 = elem_ty(&fr.body[receiver].ty) == Some(&Ty::F64);
            l.with(|items| {
                if is_f64 {
                    let mut s = 0.0;
                    for x in items {
                        if let Value::F64(f) = x {
                            s += f;
                        }
                    }
                    Value::F64(s)
                } else {
                    Value::Int(items.iter().fold(0i64, |s, x| s.wrapping_add(x.as_int())))
                }
            })
        }
        ListMin | ListMax => {
            let items = list_of(&recv)?.items();
            let mut iter = items.into_iter();
            let Some(mut best) = iter.next() else {
                return it.trap(fr, e, format!("{} of an empty list", m.name()));
            };
            for x in iter {
                let better = match (&x, &best) {
                    (Value::F64(a), Value::F64(b)) => {
                        if m == ListMin {
                            a < b
                        } else {
                            a > b
                        }
                    }
                    _ => {
                        let o = cmp_values(&x, &best);
                        if m == ListMin {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if better {
                    best = x;
                }
            }
            best
        }
        ListTake | ListDrop => {
            let l = list_of(&recv)?;
            let n = arg(&args, 0).as_int();
            if n < 0 {
                return it.trap(fr, e, format!("negative count: {n}"));
            }
            let n = (n as u64).min(l.len as u64) as usize;
            let (start, len) = if m == ListTake {
                (l.start, n)
            } else {
                (l.start + n, l.len - n)
            };
            if len == 0 {
                Value::List(ListVal::empty())
            } else {
                // As for string views: only storing it is a second reference.
                Value::List(ListVal {
                    buf: l.buf.clone(),
                    start,
                    len,
                    view: true,
                    version: l.version,
                })
            }
        }
        ListSet => {
            let l = list_of(&recv)?;
            let i = set_index(it, fr, e, l, &arg(&args, 0))?;
            let mut items = l.items();
            for x in &items {
                it.share(x);
            }
            let v = arg(&args, 1);
            set_element(it, fr, arg_exprs.get(1).copied(), &v);
            items[i] = v;
            Value::List(it.new_list(items, site))
        }
        ListReverse | ListSort | ListUnique => {
            let mut items = list_of(&recv)?.items();
            for x in &items {
                it.share(x);
            }
            match m {
                ListReverse => items.reverse(),
                ListSort => items.sort_by(cmp_values),
                _ => items = unique(items),
            }
            Value::List(it.new_list(items, site))
        }
        ListEnumerate => {
            let items = list_of(&recv)?.items();
            let mut out = Vec::with_capacity(items.len());
            let heap = !it.tuples_unbuilt(fr.f, e);
            for (i, x) in items.into_iter().enumerate() {
                it.share(&x);
                out.push(Value::pair([Value::Int(i as i64), x], site, heap));
            }
            Value::List(it.new_list(out, site))
        }
        ListZip => {
            let xs = list_of(&recv)?.items();
            let ys = list_of(&arg(&args, 0))?.items();
            let mut out = Vec::with_capacity(xs.len().min(ys.len()));
            let heap = !it.tuples_unbuilt(fr.f, e);
            for (x, y) in xs.into_iter().zip(ys) {
                it.share(&x);
                it.share(&y);
                out.push(Value::pair([x, y], site, heap));
            }
            Value::List(it.new_list(out, site))
        }
        ListCounts => {
            let items = list_of(&recv)?.items();
            let mut map = MapObj::default();
            for x in items {
                let k = Key::of(&x).ok_or_else(|| type_error("counts key"))?;
                let n = map.get(&k).map(|(_, c)| c.as_int()).unwrap_or(0);
                if n == 0 {
                    it.share(&x);
                }
                map.put(k, x, Value::Int(n + 1));
            }
            Value::Map(Rc::new(RefCell::new(map)))
        }
        ListJoin => {
            let sep = arg(&args, 0);
            let sep = str_of(&sep)?.as_str();
            let l = list_of(&recv)?;
            let total = l.with(|items| {
                let parts: u128 = items
                    .iter()
                    .map(|x| match x {
                        Value::Str(s) => s.len as u128,
                        _ => 0,
                    })
                    .sum();
                parts + (sep.len() as u128) * (items.len().saturating_sub(1) as u128)
            });
            let Some(mut text) = limit::str_fits(total)
                .then(|| limit::string_with(total as usize))
                .flatten()
            else {
                return it.trap(fr, e, "out of memory".into());
            };
            let text = l.with(|items| {
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        text.push_str(sep);
                    }
                    if let Value::Str(s) = x {
                        text.push_str(s.as_str());
                    }
                }
                text
            });
            Value::Str(it.new_str(text, site))
        }
        ListPush | ListConcat => unreachable_grow()?,
        _ => return Err(type_error("method dispatch")),
    })
}

/// The methods of `List[T]` that call a closure on the elements.
#[inline(never)]
fn list_closure_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call {
        e,
        m,
        recv,
        args,
        site,
        ..
    } = c;
    Ok(match m {
        ListSortBy => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let mut keyed = Vec::with_capacity(items.len());
            for x in items {
                let k = it.call_value(&f, vec![x.clone()], site.offset)?;
                it.share(&x);
                keyed.push((k, x));
            }
            keyed.sort_by(|a, b| cmp_values(&a.0, &b.0));
            let items = keyed.into_iter().map(|(_, x)| x).collect();
            Value::List(it.new_list(items, site))
        }
        ListMap => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                out.push(it.call_value(&f, vec![x], site.offset)?);
            }
            Value::List(it.new_list(out, site))
        }
        ListFilter => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let mut out = Vec::new();
            for x in items {
                if it.call_value(&f, vec![x.clone()], site.offset)?.as_bool() {
                    it.share(&x);
                    out.push(x);
                }
            }
            Value::List(it.new_list(out, site))
        }
        ListFlatMap => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let mut out = Vec::new();
            for x in items {
                let ys = it.call_value(&f, vec![x], site.offset)?;
                let ys = list_of(&ys)?.items();
                let n = (out.len() + ys.len()) as u128;
                if !limit::list_fits(n, limit::elem_bytes(ys.first()))
                    || !limit::reserve(&mut out, ys.len())
                {
                    return it.trap(fr, e, "out of memory".into());
                }
                for y in ys {
                    it.share(&y);
                    out.push(y);
                }
            }
            Value::List(it.new_list(out, site))
        }
        ListFold => {
            let items = list_of(&recv)?.items();
            let mut acc = arg(&args, 0);
            let f = arg(&args, 1);
            for x in items {
                acc = it.call_value(&f, vec![acc, x], site.offset)?;
            }
            acc
        }
        ListAny | ListAll => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let want = m == ListAny;
            let mut result = !want;
            for x in items {
                if it.call_value(&f, vec![x], site.offset)?.as_bool() == want {
                    result = want;
                    break;
                }
            }
            Value::Bool(result)
        }
        ListFind => {
            let items = list_of(&recv)?.items();
            let f = arg(&args, 0);
            let mut found = Value::None;
            for x in items {
                if it.call_value(&f, vec![x.clone()], site.offset)?.as_bool() {
                    it.share(&x);
                    found = some(x);
                    break;
                }
            }
            found
        }
        _ => return Err(type_error("method dispatch")),
    })
}

/// The methods of `Str`.
#[inline(never)]
fn str_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call {
        e,
        m,
        recv,
        args,
        site,
        ..
    } = c;
    Ok(match m {
        StrLen => Value::Int(str_of(&recv)?.len as i64),
        StrIsEmpty => Value::Bool(str_of(&recv)?.len == 0),
        StrByte => {
            let s = str_of(&recv)?;
            let i = arg(&args, 0).as_int();
            match usize::try_from(i)
                .ok()
                .and_then(|k| s.as_str().as_bytes().get(k))
            {
                Some(b) => Value::Int(*b as i64),
                None => {
                    return it.trap(
                        fr,
                        e,
                        format!(
                            "index out of bounds: the len is {} but the index is {i}",
                            s.len
                        ),
                    )
                }
            }
        }
        StrChars | StrSplit | StrWords | StrLines => {
            let s = str_of(&recv)?.clone();
            let text = s.as_str();
            let base = text.as_ptr() as usize;
            let sep_v = arg(&args, 0);
            let pieces: Vec<&str> = match m {
                StrChars => text
                    .char_indices()
                    .map(|(i, c)| &text[i..i + c.len_utf8()])
                    .collect(),
                StrSplit => text.split(str_of(&sep_v)?.as_str()).collect(),
                StrWords => text.split_ascii_whitespace().collect(),
                _ => text.lines().collect(),
            };
            let ranges: Vec<(usize, usize)> = pieces
                .iter()
                .map(|p| {
                    let a = p.as_ptr() as usize - base;
                    (a, a + p.len())
                })
                .collect();
            let mut out = Vec::with_capacity(ranges.len());
            for (a, b) in ranges {
                out.push(Value::Str(it.view(&s, a, b)));
            }
            Value::List(it.new_list(out, site))
        }
        StrTrim => {
            let s = str_of(&recv)?.clone();
            let text = s.as_str();
            let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
            let a = t.as_ptr() as usize - text.as_ptr() as usize;
            Value::Str(it.view(&s, a, a + t.len()))
        }
        StrLower | StrUpper => {
            let s = str_of(&recv)?.as_str();
            let t = if m == StrLower {
                s.to_ascii_lowercase()
            } else {
                s.to_ascii_uppercase()
            };
            Value::Str(it.new_str(t, site))
        }
        StrReplace => {
            let s = str_of(&recv)?.as_str();
            let a = arg(&args, 0);
            let b = arg(&args, 1);
            let (from, to) = (str_of(&a)?.as_str(), str_of(&b)?.as_str());
            if !limit::str_fits(replaced_len(s, from, to)) {
                return it.trap(fr, e, "out of memory".into());
            }
            let t = s.replace(from, to);
            Value::Str(it.new_str(t, site))
        }
        StrRepeat => {
            let s = str_of(&recv)?.as_str();
            let n = arg(&args, 0).as_int();
            if n < 0 {
                return it.trap(fr, e, format!("negative count: {n}"));
            }
            let total = (s.len() as u128) * (n as u128);
            let Some(mut t) = limit::str_fits(total)
                .then(|| limit::string_with(total as usize))
                .flatten()
            else {
                return it.trap(fr, e, "out of memory".into());
            };
            for _ in 0..n {
                t.push_str(s);
            }
            Value::Str(it.new_str(t, site))
        }
        StrContains | StrStartsWith | StrEndsWith => {
            let s = str_of(&recv)?.as_str();
            let p = arg(&args, 0);
            let p = str_of(&p)?.as_str();
            Value::Bool(match m {
                StrContains => s.contains(p),
                StrStartsWith => s.starts_with(p),
                _ => s.ends_with(p),
            })
        }
        StrFind => {
            let s = str_of(&recv)?.as_str();
            let p = arg(&args, 0);
            match s.find(str_of(&p)?.as_str()) {
                Some(i) => some(Value::Int(i as i64)),
                None => Value::None,
            }
        }
        StrTake | StrDrop => {
            let s = str_of(&recv)?.clone();
            let n = arg(&args, 0).as_int();
            if n < 0 {
                return it.trap(fr, e, format!("negative count: {n}"));
            }
            let k = (n as u64).min(s.len as u64) as usize;
            if !s.as_str().is_char_boundary(k) {
                return it.trap(fr, e, format!("not a character boundary: {k}"));
            }
            let (a, b) = if m == StrTake { (0, k) } else { (k, s.len) };
            Value::Str(it.view(&s, a, b))
        }
        StrSlice => {
            let s = str_of(&recv)?.clone();
            let a = arg(&args, 0).as_int();
            let b = arg(&args, 1).as_int();
            if a < 0 || b < a || b as u64 > s.len as u64 {
                return it.trap(
                    fr,
                    e,
                    format!("slice out of range: {a}..{b} of length {}", s.len),
                );
            }
            let (a, b) = (a as usize, b as usize);
            for k in [a, b] {
                if !s.as_str().is_char_boundary(k) {
                    return it.trap(fr, e, format!("not a character boundary: {k}"));
                }
            }
            Value::Str(it.view(&s, a, b))
        }
        StrToInt => {
            let s = str_of(&recv)?.as_str();
            match s.parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => return it.trap(fr, e, format!("invalid Int: {s:?}")),
            }
        }
        StrToF64 => {
            let s = str_of(&recv)?.as_str();
            match s.parse::<f64>() {
                Ok(f) => Value::F64(f),
                Err(_) => return it.trap(fr, e, format!("invalid F64: {s:?}")),
            }
        }
        StrParseInt => match str_of(&recv)?.as_str().parse::<i64>() {
            Ok(i) => some(Value::Int(i)),
            Err(_) => Value::None,
        },
        StrParseF64 => match str_of(&recv)?.as_str().parse::<f64>() {
            Ok(f) => some(Value::F64(f)),
            Err(_) => Value::None,
        },
        _ => return Err(type_error("method dispatch")),
    })
}

/// The methods of `Map[K, V]`.
#[inline(never)]
fn map_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call {
        e,
        m,
        arg_exprs,
        recv,
        args,
        site,
        ..
    } = c;
    Ok(match m {
        MapPut => {
            let Value::Map(map) = &recv else {
                return Err(type_error("put receiver"));
            };
            let (k, v) = (arg(&args, 0), arg(&args, 1));
            if k.is_view() || arg_exprs.first().is_some_and(|x| is_place(fr.body, *x)) {
                it.share(&k);
            }
            if v.is_view() || arg_exprs.get(1).is_some_and(|x| is_place(fr.body, *x)) {
                it.share(&v);
            }
            let key = Key::of(&k).ok_or_else(|| type_error("map key"))?;
            map.borrow_mut().put(key, k, v);
            recv.clone()
        }
        MapUpdate => {
            let Value::Map(map) = &recv else {
                return Err(type_error("update receiver"));
            };
            let k = arg(&args, 0);
            let key = Key::of(&k).ok_or_else(|| type_error("map key"))?;
            let found = map.borrow().get(&key).map(|(_, v)| v.clone());
            let Some(old) = found else {
                let mut shown = String::new();
                show_inner(&it.prog.items, &k, &mut shown);
                return it.trap(fr, e, format!("key not found: {shown}"));
            };
            let new = it.call_value(&arg(&args, 1), vec![old], site.offset)?;
            if new.is_view() {
                it.share(&new);
            }
            map.borrow_mut().put(key, k, new);
            recv.clone()
        }
        MapGet | MapGetOr | MapHas => {
            let Value::Map(map) = &recv else {
                return Err(type_error("map receiver"));
            };
            let key = Key::of(&arg(&args, 0)).ok_or_else(|| type_error("map key"))?;
            let found = map.borrow().get(&key).map(|(_, v)| v.clone());
            match m {
                MapHas => Value::Bool(found.is_some()),
                MapGet => match found {
                    Some(v) => {
                        it.share(&v);
                        some(v)
                    }
                    None => Value::None,
                },
                _ => found.unwrap_or_else(|| arg(&args, 1)),
            }
        }
        MapRemove => {
            let Value::Map(map) = &recv else {
                return Err(type_error("map receiver"));
            };
            let key = Key::of(&arg(&args, 0)).ok_or_else(|| type_error("map key"))?;
            let removed = map.borrow_mut().remove(&key);
            match removed {
                Some(v) => some(v),
                None => Value::None,
            }
        }
        MapLen => match &recv {
            Value::Map(map) => Value::Int(map.borrow().len() as i64),
            _ => return Err(type_error("map receiver")),
        },
        MapKeys | MapValues | MapEntries => {
            let Value::Map(map) = &recv else {
                return Err(type_error("map receiver"));
            };
            let pairs: Vec<(Value, Value)> = map.borrow().iter().cloned().collect();
            let mut out = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                match m {
                    MapKeys => {
                        it.share(&k);
                        out.push(k);
                    }
                    MapValues => {
                        it.share(&v);
                        out.push(v);
                    }
                    _ => {
                        it.share(&k);
                        it.share(&v);
                        out.push(Value::tuple(vec![k, v], site));
                    }
                }
            }
            Value::List(it.new_list(out, site))
        }
        _ => return Err(type_error("method dispatch")),
    })
}

/// The methods of `Int` and `F64`.
#[inline(never)]
fn num_method<'p>(it: &mut Interp<'p>, fr: &mut Frame<'p>, c: Call) -> R<Value> {
    use Method::*;
    let Call { e, m, recv, .. } = c;
    Ok(match m {
        IntToF64 => Value::F64(recv.as_int() as f64),
        IntAbs => Value::Int(recv.as_int().wrapping_abs()),
        F64ToInt => {
            let Value::F64(f) = recv else {
                return Err(type_error("to_int receiver"));
            };
            // i64 covers [-2^63, 2^63).
            if f.is_nan()
                || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f)
            {
                return it.trap(fr, e, format!("F64 out of range for Int: {f}"));
            }
            Value::Int(f as i64)
        }
        F64Abs | F64Sqrt | F64Floor => {
            let Value::F64(f) = recv else {
                return Err(type_error("F64 receiver"));
            };
            Value::F64(match m {
                F64Abs => f.abs(),
                F64Sqrt => f.sqrt(),
                _ => f.floor(),
            })
        }
        _ => return Err(type_error("method dispatch")),
    })
}

/// The length of `s.replace(from, to)`, without building it.
pub(crate) fn replaced_len(s: &str, from: &str, to: &str) -> u128 {
    let n = if from.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(from).count()
    } as u128;
    s.len() as u128 - n * from.len() as u128 + n * to.len() as u128
}

fn unreachable_grow() -> R<Value> {
    Err(type_error("push dispatch"))
}

/// First occurrences, in order.
fn unique(items: Vec<Value>) -> Vec<Value> {
    let hashable = items.iter().all(|x| Key::of(x).is_some());
    if hashable {
        let mut seen = HashSet::new();
        items
            .into_iter()
            .filter(|x| Key::of(x).is_some_and(|k| seen.insert(k)))
            .collect()
    } else {
        let mut out: Vec<Value> = Vec::new();
        for x in items {
            if !out.iter().any(|y| values_eq(y, &x)) {
                out.push(x);
            }
        }
        out
    }
}
