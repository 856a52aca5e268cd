//! The method table of LANGUAGE.md: each method's parameter and result
//! types by receiver type.

use ir::Method;

use crate::body::Need;
use crate::infer::{Table, T};

/// A method resolved against a receiver type.
pub(crate) struct MethodSig {
    pub(crate) method: Method,
    pub(crate) params: Vec<T>,
    pub(crate) ret: T,
    /// Constraints on types checked once the body is solved.
    pub(crate) needs: Vec<(T, Need)>,
    /// `join`: the element type that must be Str.
    pub(crate) must_be_str_list: Option<T>,
}

fn sig(method: Method, params: Vec<T>, ret: T) -> MethodSig {
    MethodSig {
        method,
        params,
        ret,
        needs: Vec::new(),
        must_be_str_list: None,
    }
}

fn with_need(mut s: MethodSig, t: &T, need: Need) -> MethodSig {
    s.needs.push((t.clone(), need));
    s
}

/// Resolves `name` on a receiver of type `recv` (already shallow-resolved).
pub(crate) fn lookup(table: &mut Table, recv: &T, name: &str) -> Option<MethodSig> {
    use Method::*;
    Some(match recv {
        T::List(t) => {
            let t = (**t).clone();
            let list = T::list(t.clone());
            match name {
                "len" => sig(ListLen, vec![], T::Int),
                "is_empty" => sig(ListIsEmpty, vec![], T::Bool),
                "get" => sig(ListGet, vec![T::Int], T::option(t)),
                "first" => sig(ListFirst, vec![], t),
                "last" => sig(ListLast, vec![], t),
                "contains" => with_need(
                    sig(ListContains, vec![t.clone()], T::Bool),
                    &t,
                    Need::Compare,
                ),
                "sum" => with_need(sig(ListSum, vec![], t.clone()), &t, Need::Numeric),
                "min" => with_need(sig(ListMin, vec![], t.clone()), &t, Need::Numeric),
                "max" => with_need(sig(ListMax, vec![], t.clone()), &t, Need::Numeric),
                "push" => sig(ListPush, vec![t], list),
                "concat" => sig(ListConcat, vec![list.clone()], list),
                "take" => sig(ListTake, vec![T::Int], list),
                "drop" => sig(ListDrop, vec![T::Int], list),
                "reverse" => sig(ListReverse, vec![], list),
                "sort" => with_need(sig(ListSort, vec![], list), &t, Need::Sort),
                "sort_by" => {
                    let k = table.fresh();
                    with_need(
                        sig(ListSortBy, vec![T::func(vec![t], k.clone())], list),
                        &k,
                        Need::Sort,
                    )
                }
                "unique" => with_need(sig(ListUnique, vec![], list), &t, Need::Compare),
                "enumerate" => sig(ListEnumerate, vec![], T::list(T::Tuple(vec![T::Int, t]))),
                "zip" => {
                    let u = table.fresh();
                    sig(
                        ListZip,
                        vec![T::list(u.clone())],
                        T::list(T::Tuple(vec![t, u])),
                    )
                }
                "map" => {
                    let u = table.fresh();
                    sig(ListMap, vec![T::func(vec![t], u.clone())], T::list(u))
                }
                "filter" => sig(ListFilter, vec![T::func(vec![t], T::Bool)], list),
                "flat_map" => {
                    let u = table.fresh();
                    sig(
                        ListFlatMap,
                        vec![T::func(vec![t], T::list(u.clone()))],
                        T::list(u),
                    )
                }
                "fold" => {
                    let a = table.fresh();
                    sig(
                        ListFold,
                        vec![a.clone(), T::func(vec![a.clone(), t], a.clone())],
                        a,
                    )
                }
                "any" => sig(ListAny, vec![T::func(vec![t], T::Bool)], T::Bool),
                "all" => sig(ListAll, vec![T::func(vec![t], T::Bool)], T::Bool),
                "find" => sig(
                    ListFind,
                    vec![T::func(vec![t.clone()], T::Bool)],
                    T::option(t),
                ),
                "counts" => with_need(
                    sig(ListCounts, vec![], T::map(t.clone(), T::Int)),
                    &t,
                    Need::MapKey,
                ),
                "join" => {
                    let mut s = sig(ListJoin, vec![T::Str], T::Str);
                    s.must_be_str_list = Some(t);
                    s
                }
                _ => return None,
            }
        }
        T::Str => match name {
            "len" => sig(StrLen, vec![], T::Int),
            "byte" => sig(StrByte, vec![T::Int], T::Int),
            "chars" => sig(StrChars, vec![], T::list(T::Str)),
            "split" => sig(StrSplit, vec![T::Str], T::list(T::Str)),
            "words" => sig(StrWords, vec![], T::list(T::Str)),
            "lines" => sig(StrLines, vec![], T::list(T::Str)),
            "trim" => sig(StrTrim, vec![], T::Str),
            "lower" => sig(StrLower, vec![], T::Str),
            "upper" => sig(StrUpper, vec![], T::Str),
            "replace" => sig(StrReplace, vec![T::Str, T::Str], T::Str),
            "repeat" => sig(StrRepeat, vec![T::Int], T::Str),
            "contains" => sig(StrContains, vec![T::Str], T::Bool),
            "starts_with" => sig(StrStartsWith, vec![T::Str], T::Bool),
            "ends_with" => sig(StrEndsWith, vec![T::Str], T::Bool),
            "find" => sig(StrFind, vec![T::Str], T::option(T::Int)),
            "take" => sig(StrTake, vec![T::Int], T::Str),
            "drop" => sig(StrDrop, vec![T::Int], T::Str),
            "slice" => sig(StrSlice, vec![T::Int, T::Int], T::Str),
            "to_int" => sig(StrToInt, vec![], T::Int),
            "to_f64" => sig(StrToF64, vec![], T::F64),
            "is_empty" => sig(StrIsEmpty, vec![], T::Bool),
            _ => return None,
        },
        T::Map(k, v) => {
            let (k, v) = ((**k).clone(), (**v).clone());
            let map = T::map(k.clone(), v.clone());
            match name {
                "put" => sig(MapPut, vec![k, v], map),
                "get" => sig(MapGet, vec![k], T::option(v)),
                "get_or" => sig(MapGetOr, vec![k, v.clone()], v),
                "has" => sig(MapHas, vec![k], T::Bool),
                "remove" => sig(MapRemove, vec![k], T::option(v)),
                "len" => sig(MapLen, vec![], T::Int),
                "keys" => sig(MapKeys, vec![], T::list(k)),
                "values" => sig(MapValues, vec![], T::list(v)),
                "entries" => sig(MapEntries, vec![], T::list(T::Tuple(vec![k, v]))),
                _ => return None,
            }
        }
        T::Int => match name {
            "to_f64" => sig(IntToF64, vec![], T::F64),
            "abs" => sig(IntAbs, vec![], T::Int),
            _ => return None,
        },
        T::F64 => match name {
            "to_int" => sig(F64ToInt, vec![], T::Int),
            "abs" => sig(F64Abs, vec![], T::F64),
            "sqrt" => sig(F64Sqrt, vec![], T::F64),
            "floor" => sig(F64Floor, vec![], T::F64),
            _ => return None,
        },
        _ => return None,
    })
}

/// The method names a receiver type has (for "did you mean" hints).
pub(crate) fn names(recv: &T) -> &'static [&'static str] {
    match recv {
        T::List(_) => &[
            "len",
            "is_empty",
            "get",
            "first",
            "last",
            "contains",
            "sum",
            "min",
            "max",
            "push",
            "concat",
            "take",
            "drop",
            "reverse",
            "sort",
            "sort_by",
            "unique",
            "enumerate",
            "zip",
            "map",
            "filter",
            "flat_map",
            "fold",
            "any",
            "all",
            "find",
            "counts",
            "join",
        ],
        T::Str => &[
            "len",
            "byte",
            "chars",
            "split",
            "words",
            "lines",
            "trim",
            "lower",
            "upper",
            "replace",
            "repeat",
            "contains",
            "starts_with",
            "ends_with",
            "find",
            "take",
            "drop",
            "slice",
            "to_int",
            "to_f64",
            "is_empty",
        ],
        T::Map(..) => &[
            "put", "get", "get_or", "has", "remove", "len", "keys", "values", "entries",
        ],
        T::Int => &["to_f64", "abs"],
        T::F64 => &["to_int", "abs", "sqrt", "floor"],
        _ => &[],
    }
}
