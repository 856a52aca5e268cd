//! The method table: one row per method, saying everything the compiler
//! knows about it by declaration: its receiver and name, its signature
//! (over the receiver's type parameters), and how it uses its operands and
//! what its result is as blocks go. The checker's signatures, the ownership
//! pass's classification and the reports all read this table; the
//! backends implement each method's behaviour by matching on [`Method`].

use crate::Method;

/// The receiver types that have methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recv {
    List,
    Str,
    Map,
    Int,
    F64,
    Option,
}

/// A type in a method's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sig {
    Int,
    F64,
    Bool,
    Str,
    /// The element type `T` of a `List[T]` or `Option[T]` receiver.
    Elem,
    /// The key type `K` of a `Map[K, V]` receiver.
    Key,
    /// The value type `V` of a `Map[K, V]` receiver.
    Val,
    /// The receiver's own type.
    Recv,
    /// A type variable, fresh at each call (numbered within the row).
    Var(u8),
    List(&'static Sig),
    Option(&'static Sig),
    Map(&'static Sig, &'static Sig),
    Tuple(&'static [Sig]),
    Fn(&'static [Sig], &'static Sig),
}

/// A constraint on a signature type, checked once the body is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Int or F64.
    Numeric,
    /// Int, F64, Bool or Str.
    Compare,
    /// Comparable, said as "sort".
    Sort,
    /// Int, Str or Bool.
    MapKey,
    /// Exactly Str (`join`'s elements).
    Str,
}

/// How a method keeps an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    PushedElement,
    /// The new element of `set`.
    SetElement,
    FoldInit,
    MapValue,
    GetOrDefault,
    UnwrapOrDefault,
    /// An operand the table has no row for.
    Argument,
}

/// How a method uses one of its operands, as blocks go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgUse {
    /// Reads it and keeps nothing of it.
    Read,
    /// Keeps it, shares it or hands it on.
    Kept(Keep),
    /// A view of it is made (take, drop, slice, trim, the split family).
    View,
    /// `push`/`concat` receiver: shares the buffer unless it is the
    /// `x := x.push(..)` update of an owned var.
    Grow,
    /// `Map.put` key: stored in the map unless consumed (last use).
    Key,
    /// A number, a Bool or a function: never freed.
    Scalar,
}

/// What kind of shared value a method returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedResult {
    ElementOfList,
    /// `push`/`concat`: a list that may share the receiver's buffer.
    Grown(Method),
    /// take, drop, trim, slice.
    View(Method),
    FoldResult,
    MapValue,
    /// `unwrap`, `unwrap_or`: the payload of an option (or the default).
    OptionPayload,
}

/// What a method returns, as blocks go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Res {
    /// A new list or string block nobody else holds.
    Fresh,
    /// A list or string that may share a block with something else.
    Shared(SharedResult),
    /// Not a list or string (or a map, record, option...): never freed.
    Other,
}

/// One method.
#[derive(Debug)]
pub struct MethodDef {
    pub method: Method,
    pub recv: Recv,
    /// The name as written in source.
    pub name: &'static str,
    pub params: &'static [Sig],
    pub ret: Sig,
    pub needs: &'static [(Sig, Need)],
    pub receiver: ArgUse,
    /// One per parameter.
    pub args: &'static [ArgUse],
    pub result: Res,
}

use ArgUse::{Grow, Kept, Read, Scalar, View};
use Method::*;

const T: Sig = Sig::Elem;
const LIST_T: Sig = Sig::List(&Sig::Elem);
const PRED: Sig = Sig::Fn(&[Sig::Elem], &Sig::Bool);
const STRS: Sig = Sig::List(&Sig::Str);

#[allow(clippy::too_many_arguments)]
const fn def(
    method: Method,
    recv: Recv,
    name: &'static str,
    params: &'static [Sig],
    ret: Sig,
    receiver: ArgUse,
    args: &'static [ArgUse],
    result: Res,
) -> MethodDef {
    MethodDef {
        method,
        recv,
        name,
        params,
        ret,
        needs: &[],
        receiver,
        args,
        result,
    }
}

const fn needs(mut d: MethodDef, needs: &'static [(Sig, Need)]) -> MethodDef {
    d.needs = needs;
    d
}

use Recv::{List as L, Map as M, Option as O, Str as S};

/// Every method, in the order of [`Method`]'s variants.
pub static METHODS: [MethodDef; 74] = [
    def(ListLen, L, "len", &[], Sig::Int, Read, &[], Res::Other),
    def(
        ListIsEmpty,
        L,
        "is_empty",
        &[],
        Sig::Bool,
        Read,
        &[],
        Res::Other,
    ),
    def(
        ListGet,
        L,
        "get",
        &[Sig::Int],
        Sig::Option(&T),
        Read,
        &[Scalar],
        Res::Other,
    ),
    def(
        ListFirst,
        L,
        "first",
        &[],
        T,
        Read,
        &[],
        Res::Shared(SharedResult::ElementOfList),
    ),
    def(
        ListLast,
        L,
        "last",
        &[],
        T,
        Read,
        &[],
        Res::Shared(SharedResult::ElementOfList),
    ),
    needs(
        def(
            ListContains,
            L,
            "contains",
            &[T],
            Sig::Bool,
            Read,
            &[Read],
            Res::Other,
        ),
        &[(T, Need::Compare)],
    ),
    needs(
        def(ListSum, L, "sum", &[], T, Read, &[], Res::Other),
        &[(T, Need::Numeric)],
    ),
    needs(
        def(ListMin, L, "min", &[], T, Read, &[], Res::Other),
        &[(T, Need::Numeric)],
    ),
    needs(
        def(ListMax, L, "max", &[], T, Read, &[], Res::Other),
        &[(T, Need::Numeric)],
    ),
    def(
        ListPush,
        L,
        "push",
        &[T],
        LIST_T,
        Grow,
        &[Kept(Keep::PushedElement)],
        Res::Shared(SharedResult::Grown(ListPush)),
    ),
    def(
        ListConcat,
        L,
        "concat",
        &[LIST_T],
        LIST_T,
        Grow,
        &[Read],
        Res::Shared(SharedResult::Grown(ListConcat)),
    ),
    def(
        ListTake,
        L,
        "take",
        &[Sig::Int],
        LIST_T,
        View,
        &[Scalar],
        Res::Shared(SharedResult::View(ListTake)),
    ),
    def(
        ListDrop,
        L,
        "drop",
        &[Sig::Int],
        LIST_T,
        View,
        &[Scalar],
        Res::Shared(SharedResult::View(ListDrop)),
    ),
    def(
        ListReverse,
        L,
        "reverse",
        &[],
        LIST_T,
        Read,
        &[],
        Res::Fresh,
    ),
    // A copy with one element replaced (the receiver's elements are
    // shared with it, as `reverse` shares them).
    def(
        ListSet,
        L,
        "set",
        &[Sig::Int, T],
        LIST_T,
        Read,
        &[Scalar, Kept(Keep::SetElement)],
        Res::Fresh,
    ),
    needs(
        def(ListSort, L, "sort", &[], LIST_T, Read, &[], Res::Fresh),
        &[(T, Need::Sort)],
    ),
    needs(
        def(
            ListSortBy,
            L,
            "sort_by",
            &[Sig::Fn(&[Sig::Elem], &Sig::Var(0))],
            LIST_T,
            Read,
            &[Scalar],
            Res::Fresh,
        ),
        &[(Sig::Var(0), Need::Sort)],
    ),
    needs(
        def(ListUnique, L, "unique", &[], LIST_T, Read, &[], Res::Fresh),
        &[(T, Need::Compare)],
    ),
    def(
        ListEnumerate,
        L,
        "enumerate",
        &[],
        Sig::List(&Sig::Tuple(&[Sig::Int, Sig::Elem])),
        Read,
        &[],
        Res::Fresh,
    ),
    def(
        ListZip,
        L,
        "zip",
        &[Sig::List(&Sig::Var(0))],
        Sig::List(&Sig::Tuple(&[Sig::Elem, Sig::Var(0)])),
        Read,
        &[Read],
        Res::Fresh,
    ),
    def(
        ListMap,
        L,
        "map",
        &[Sig::Fn(&[Sig::Elem], &Sig::Var(0))],
        Sig::List(&Sig::Var(0)),
        Read,
        &[Scalar],
        Res::Fresh,
    ),
    def(
        ListFilter,
        L,
        "filter",
        &[PRED],
        LIST_T,
        Read,
        &[Scalar],
        Res::Fresh,
    ),
    def(
        ListFlatMap,
        L,
        "flat_map",
        &[Sig::Fn(&[Sig::Elem], &Sig::List(&Sig::Var(0)))],
        Sig::List(&Sig::Var(0)),
        Read,
        &[Scalar],
        Res::Fresh,
    ),
    def(
        ListFold,
        L,
        "fold",
        &[
            Sig::Var(0),
            Sig::Fn(&[Sig::Var(0), Sig::Elem], &Sig::Var(0)),
        ],
        Sig::Var(0),
        Read,
        &[Kept(Keep::FoldInit), Scalar],
        Res::Shared(SharedResult::FoldResult),
    ),
    def(
        ListAny,
        L,
        "any",
        &[PRED],
        Sig::Bool,
        Read,
        &[Scalar],
        Res::Other,
    ),
    def(
        ListAll,
        L,
        "all",
        &[PRED],
        Sig::Bool,
        Read,
        &[Scalar],
        Res::Other,
    ),
    def(
        ListFind,
        L,
        "find",
        &[PRED],
        Sig::Option(&T),
        Read,
        &[Scalar],
        Res::Other,
    ),
    needs(
        def(
            ListCounts,
            L,
            "counts",
            &[],
            Sig::Map(&T, &Sig::Int),
            Read,
            &[],
            Res::Other,
        ),
        &[(T, Need::MapKey)],
    ),
    needs(
        def(
            ListJoin,
            L,
            "join",
            &[Sig::Str],
            Sig::Str,
            Read,
            &[Read],
            Res::Fresh,
        ),
        &[(T, Need::Str)],
    ),
    def(StrLen, S, "len", &[], Sig::Int, Read, &[], Res::Other),
    def(
        StrByte,
        S,
        "byte",
        &[Sig::Int],
        Sig::Int,
        Read,
        &[Scalar],
        Res::Other,
    ),
    def(StrChars, S, "chars", &[], STRS, View, &[], Res::Fresh),
    def(
        StrSplit,
        S,
        "split",
        &[Sig::Str],
        STRS,
        View,
        &[Read],
        Res::Fresh,
    ),
    def(StrWords, S, "words", &[], STRS, View, &[], Res::Fresh),
    def(StrLines, S, "lines", &[], STRS, View, &[], Res::Fresh),
    def(
        StrTrim,
        S,
        "trim",
        &[],
        Sig::Str,
        View,
        &[],
        Res::Shared(SharedResult::View(StrTrim)),
    ),
    def(StrLower, S, "lower", &[], Sig::Str, Read, &[], Res::Fresh),
    def(StrUpper, S, "upper", &[], Sig::Str, Read, &[], Res::Fresh),
    def(
        StrReplace,
        S,
        "replace",
        &[Sig::Str, Sig::Str],
        Sig::Str,
        Read,
        &[Read, Read],
        Res::Fresh,
    ),
    def(
        StrRepeat,
        S,
        "repeat",
        &[Sig::Int],
        Sig::Str,
        Read,
        &[Scalar],
        Res::Fresh,
    ),
    def(
        StrContains,
        S,
        "contains",
        &[Sig::Str],
        Sig::Bool,
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        StrStartsWith,
        S,
        "starts_with",
        &[Sig::Str],
        Sig::Bool,
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        StrEndsWith,
        S,
        "ends_with",
        &[Sig::Str],
        Sig::Bool,
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        StrFind,
        S,
        "find",
        &[Sig::Str],
        Sig::Option(&Sig::Int),
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        StrTake,
        S,
        "take",
        &[Sig::Int],
        Sig::Str,
        View,
        &[Scalar],
        Res::Shared(SharedResult::View(StrTake)),
    ),
    def(
        StrDrop,
        S,
        "drop",
        &[Sig::Int],
        Sig::Str,
        View,
        &[Scalar],
        Res::Shared(SharedResult::View(StrDrop)),
    ),
    def(
        StrSlice,
        S,
        "slice",
        &[Sig::Int, Sig::Int],
        Sig::Str,
        View,
        &[Scalar, Scalar],
        Res::Shared(SharedResult::View(StrSlice)),
    ),
    def(StrToInt, S, "to_int", &[], Sig::Int, Read, &[], Res::Other),
    def(StrToF64, S, "to_f64", &[], Sig::F64, Read, &[], Res::Other),
    def(
        StrIsEmpty,
        S,
        "is_empty",
        &[],
        Sig::Bool,
        Read,
        &[],
        Res::Other,
    ),
    def(
        MapPut,
        M,
        "put",
        &[Sig::Key, Sig::Val],
        Sig::Recv,
        Read,
        &[ArgUse::Key, Kept(Keep::MapValue)],
        Res::Other,
    ),
    // The map keeps its old key, so the key is only read; `f`'s result
    // is stored as `put` stores a value (a lambda's result escapes).
    def(
        MapUpdate,
        M,
        "update",
        &[Sig::Key, Sig::Fn(&[Sig::Val], &Sig::Val)],
        Sig::Recv,
        Read,
        &[Read, Scalar],
        Res::Other,
    ),
    def(
        MapGet,
        M,
        "get",
        &[Sig::Key],
        Sig::Option(&Sig::Val),
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        MapGetOr,
        M,
        "get_or",
        &[Sig::Key, Sig::Val],
        Sig::Val,
        Read,
        &[Read, Kept(Keep::GetOrDefault)],
        Res::Shared(SharedResult::MapValue),
    ),
    def(
        MapHas,
        M,
        "has",
        &[Sig::Key],
        Sig::Bool,
        Read,
        &[Read],
        Res::Other,
    ),
    def(
        MapRemove,
        M,
        "remove",
        &[Sig::Key],
        Sig::Option(&Sig::Val),
        Read,
        &[Read],
        Res::Other,
    ),
    def(MapLen, M, "len", &[], Sig::Int, Read, &[], Res::Other),
    def(
        MapKeys,
        M,
        "keys",
        &[],
        Sig::List(&Sig::Key),
        Read,
        &[],
        Res::Fresh,
    ),
    def(
        MapValues,
        M,
        "values",
        &[],
        Sig::List(&Sig::Val),
        Read,
        &[],
        Res::Fresh,
    ),
    def(
        MapEntries,
        M,
        "entries",
        &[],
        Sig::List(&Sig::Tuple(&[Sig::Key, Sig::Val])),
        Read,
        &[],
        Res::Fresh,
    ),
    def(
        IntToF64,
        Recv::Int,
        "to_f64",
        &[],
        Sig::F64,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        IntAbs,
        Recv::Int,
        "abs",
        &[],
        Sig::Int,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        F64ToInt,
        Recv::F64,
        "to_int",
        &[],
        Sig::Int,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        F64Abs,
        Recv::F64,
        "abs",
        &[],
        Sig::F64,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        F64Sqrt,
        Recv::F64,
        "sqrt",
        &[],
        Sig::F64,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        F64Floor,
        Recv::F64,
        "floor",
        &[],
        Sig::F64,
        Scalar,
        &[],
        Res::Other,
    ),
    def(
        StrParseInt,
        S,
        "parse_int",
        &[],
        Sig::Option(&Sig::Int),
        Read,
        &[],
        Res::Other,
    ),
    def(
        StrParseF64,
        S,
        "parse_f64",
        &[],
        Sig::Option(&Sig::F64),
        Read,
        &[],
        Res::Other,
    ),
    def(
        OptIsSome,
        O,
        "is_some",
        &[],
        Sig::Bool,
        Read,
        &[],
        Res::Other,
    ),
    def(
        OptIsNone,
        O,
        "is_none",
        &[],
        Sig::Bool,
        Read,
        &[],
        Res::Other,
    ),
    // The payload stays in the option: the result shares it.
    def(
        OptUnwrap,
        O,
        "unwrap",
        &[],
        T,
        Read,
        &[],
        Res::Shared(SharedResult::OptionPayload),
    ),
    def(
        OptUnwrapOr,
        O,
        "unwrap_or",
        &[T],
        T,
        Read,
        &[Kept(Keep::UnwrapOrDefault)],
        Res::Shared(SharedResult::OptionPayload),
    ),
    // The payload is handed to `f` as a list's elements are to `map`'s;
    // the result is an option, never a block.
    def(
        OptMap,
        O,
        "map",
        &[Sig::Fn(&[Sig::Elem], &Sig::Var(0))],
        Sig::Option(&Sig::Var(0)),
        Read,
        &[Scalar],
        Res::Other,
    ),
    def(
        OptAndThen,
        O,
        "and_then",
        &[Sig::Fn(&[Sig::Elem], &Sig::Option(&Sig::Var(0)))],
        Sig::Option(&Sig::Var(0)),
        Read,
        &[Scalar],
        Res::Other,
    ),
];

impl Method {
    /// The method's row.
    pub fn def(self) -> &'static MethodDef {
        &METHODS[self as usize]
    }
}

/// Whether `m` makes a list of views of its string receiver, cut one piece
/// after another (`chars`, `words`, `lines`, `split`): a source the native
/// backend can feed to a consumer piece by piece instead of building it.
pub fn is_piece_source(m: Method) -> bool {
    matches!(m, StrChars | StrWords | StrLines | StrSplit)
}

/// Whether `m` returns a new `Some` block of its own (every method whose
/// result is an option, except `and_then`, which returns its function's).
pub fn makes_option(m: Method) -> bool {
    matches!(m.def().ret, Sig::Option(_)) && m != OptAndThen
}

/// The method `name` of a receiver kind.
pub fn lookup(recv: Recv, name: &str) -> Option<&'static MethodDef> {
    METHODS.iter().find(|d| d.recv == recv && d.name == name)
}

/// The method names of a receiver kind, in table order (for hints).
pub fn names(recv: Recv) -> impl Iterator<Item = &'static str> {
    METHODS
        .iter()
        .filter(move |d| d.recv == recv)
        .map(|d| d.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_variant_order_and_consistent() {
        for (i, d) in METHODS.iter().enumerate() {
            assert_eq!(d.method as usize, i, "{:?} is out of order", d.method);
            assert_eq!(
                d.args.len(),
                d.params.len(),
                "{:?}: one use per parameter",
                d.method
            );
            // A fresh result never comes from a method that keeps its
            // receiver, except the split family: a new list of views.
            if d.result == Res::Fresh && matches!(d.receiver, View | Kept(_)) {
                assert!(matches!(
                    d.method,
                    StrChars | StrSplit | StrWords | StrLines
                ));
            }
        }
        // Names are unique per receiver.
        for a in METHODS.iter() {
            let same = METHODS
                .iter()
                .filter(|b| b.recv == a.recv && b.name == a.name)
                .count();
            assert_eq!(same, 1, "{} twice on {:?}", a.name, a.recv);
        }
    }
}
