//! The classification of every method, in one table: how it uses its
//! receiver and arguments, and whether its result is a fresh block.
//!
//! A method missing here would count as escaping everything it touches;
//! `every_method_is_classified` keeps the table complete.

use ir::Method;

use crate::reason::{Keep, SharedResult};

/// How a method (or operator) uses one of its operands.
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

/// What a method returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Res {
    /// A new list or string block nobody else holds.
    Fresh,
    /// A list or string that may share a block with something else.
    Shared(SharedResult),
    /// Not a list or string (or a map, record, option...): never freed.
    Other,
}

/// One row: receiver use, argument uses (in order), result.
pub struct Row {
    pub receiver: ArgUse,
    pub args: &'static [ArgUse],
    pub result: Res,
}

use ArgUse::*;

const VIEW: ArgUse = View;
const FN: ArgUse = Scalar;

/// The table. Views (take, drop, slice, trim and the pieces of
/// chars/split/words/lines) share their receiver's block, so the receiver
/// escapes; `fold`'s initial value becomes the accumulator handed to the
/// function, so it escapes; `get_or`'s default may be returned.
pub fn row(m: Method) -> Row {
    use Method::*;
    let (receiver, args, result): (ArgUse, &'static [ArgUse], Res) = match m {
        ListLen | ListIsEmpty => (Read, &[], Res::Other),
        ListGet => (Read, &[Scalar], Res::Other),
        ListFirst | ListLast => (Read, &[], Res::Shared(SharedResult::ElementOfList)),
        ListContains => (Read, &[Read], Res::Other),
        ListSum | ListMin | ListMax => (Read, &[], Res::Other),
        ListPush => (
            Grow,
            &[Kept(Keep::PushedElement)],
            Res::Shared(SharedResult::Grown(m)),
        ),
        ListConcat => (Grow, &[Read], Res::Shared(SharedResult::Grown(m))),
        ListTake => (VIEW, &[Scalar], Res::Shared(SharedResult::View(m))),
        ListDrop => (VIEW, &[Scalar], Res::Shared(SharedResult::View(m))),
        ListReverse | ListSort | ListUnique | ListEnumerate => (Read, &[], Res::Fresh),
        ListSortBy => (Read, &[FN], Res::Fresh),
        ListZip => (Read, &[Read], Res::Fresh),
        ListMap | ListFilter | ListFlatMap => (Read, &[FN], Res::Fresh),
        ListFold => (
            Read,
            &[Kept(Keep::FoldInit), FN],
            Res::Shared(SharedResult::FoldResult),
        ),
        ListAny | ListAll => (Read, &[FN], Res::Other),
        ListFind => (Read, &[FN], Res::Other),
        ListCounts => (Read, &[], Res::Other),
        ListJoin => (Read, &[Read], Res::Fresh),
        StrLen | StrIsEmpty => (Read, &[], Res::Other),
        StrByte => (Read, &[Scalar], Res::Other),
        StrChars | StrWords | StrLines => (VIEW, &[], Res::Fresh),
        StrSplit => (VIEW, &[Read], Res::Fresh),
        StrTrim => (VIEW, &[], Res::Shared(SharedResult::View(m))),
        StrTake => (VIEW, &[Scalar], Res::Shared(SharedResult::View(m))),
        StrDrop => (VIEW, &[Scalar], Res::Shared(SharedResult::View(m))),
        StrSlice => (VIEW, &[Scalar, Scalar], Res::Shared(SharedResult::View(m))),
        StrLower | StrUpper => (Read, &[], Res::Fresh),
        StrReplace => (Read, &[Read, Read], Res::Fresh),
        StrRepeat => (Read, &[Scalar], Res::Fresh),
        StrContains | StrStartsWith | StrEndsWith | StrFind => (Read, &[Read], Res::Other),
        StrToInt | StrToF64 => (Read, &[], Res::Other),
        MapPut => (Read, &[Key, Kept(Keep::MapValue)], Res::Other),
        MapGet | MapHas | MapRemove => (Read, &[Read], Res::Other),
        MapGetOr => (
            Read,
            &[Read, Kept(Keep::GetOrDefault)],
            Res::Shared(SharedResult::MapValue),
        ),
        MapLen => (Read, &[], Res::Other),
        MapKeys | MapValues | MapEntries => (Read, &[], Res::Fresh),
        IntToF64 | IntAbs | F64ToInt | F64Abs | F64Sqrt | F64Floor => (Scalar, &[], Res::Other),
    };
    Row {
        receiver,
        args,
        result,
    }
}

/// The receiver uses allowed on a list that owns its strings (deep):
/// none of them can hand out one of its strings.
pub fn deep_read(m: Method) -> bool {
    matches!(
        m,
        Method::ListLen | Method::ListIsEmpty | Method::ListJoin | Method::ListContains
    )
}

/// Every method of LANGUAGE.md, for the completeness test.
#[cfg(test)]
pub const ALL: &[Method] = {
    use Method::*;
    &[
        ListLen,
        ListIsEmpty,
        ListGet,
        ListFirst,
        ListLast,
        ListContains,
        ListSum,
        ListMin,
        ListMax,
        ListPush,
        ListConcat,
        ListTake,
        ListDrop,
        ListReverse,
        ListSort,
        ListSortBy,
        ListUnique,
        ListEnumerate,
        ListZip,
        ListMap,
        ListFilter,
        ListFlatMap,
        ListFold,
        ListAny,
        ListAll,
        ListFind,
        ListCounts,
        ListJoin,
        StrLen,
        StrByte,
        StrChars,
        StrSplit,
        StrWords,
        StrLines,
        StrTrim,
        StrLower,
        StrUpper,
        StrReplace,
        StrRepeat,
        StrContains,
        StrStartsWith,
        StrEndsWith,
        StrFind,
        StrTake,
        StrDrop,
        StrSlice,
        StrToInt,
        StrToF64,
        StrIsEmpty,
        MapPut,
        MapGet,
        MapGetOr,
        MapHas,
        MapRemove,
        MapLen,
        MapKeys,
        MapValues,
        MapEntries,
        IntToF64,
        IntAbs,
        F64ToInt,
        F64Abs,
        F64Sqrt,
        F64Floor,
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Argument counts follow LANGUAGE.md's signatures.
    #[test]
    fn every_method_is_classified() {
        let expected: &[(Method, usize)] = &[
            (Method::ListPush, 1),
            (Method::ListFold, 2),
            (Method::StrSlice, 2),
            (Method::StrReplace, 2),
            (Method::MapPut, 2),
            (Method::MapGetOr, 2),
            (Method::ListLen, 0),
        ];
        for &(m, n) in expected {
            assert_eq!(row(m).args.len(), n, "{m:?}");
        }
        for &m in ALL {
            let r = row(m);
            // A fresh result never comes from a method that shares its receiver,
            // except the split family whose list is new but whose pieces are views.
            if r.result == Res::Fresh && matches!(r.receiver, View | Kept(_)) {
                assert!(matches!(
                    m,
                    Method::StrChars | Method::StrSplit | Method::StrWords | Method::StrLines
                ));
            }
        }
    }
}
