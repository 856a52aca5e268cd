//! The ownership pass's view of the method table (`ir::methods`): how
//! every method uses its receiver and arguments, and whether its result is
//! a fresh block. Views (take, drop, slice, trim and the pieces of
//! chars/split/words/lines) share their receiver's block, so the receiver
//! escapes; `fold`'s initial value becomes the accumulator handed to the
//! function, so it escapes; `get_or`'s default may be returned.

use ir::methods::MethodDef;
use ir::Method;

pub use ir::methods::{ArgUse, Res};

/// The row of method `m`.
pub fn row(m: Method) -> &'static MethodDef {
    m.def()
}

/// The receiver uses allowed on a list that owns its strings (deep):
/// none of them can hand out one of its strings.
pub fn deep_read(m: Method) -> bool {
    matches!(
        m,
        Method::ListLen | Method::ListIsEmpty | Method::ListJoin | Method::ListContains
    )
}
