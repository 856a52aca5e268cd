//! The runtime entry points generated code calls, with their shapes. Every
//! argument is one 64-bit word; results are none, one word, or a
//! `(ptr, len)` pair returned in two registers.

use rt::helpers::{io, list, map, str as s, text};

/// How many words a runtime function returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ret {
    None,
    One,
    Pair,
}

/// (name, address, parameter count, result shape).
pub type RtFn = (&'static str, *const u8, usize, Ret);

/// A parameter type of a runtime function: one 64-bit word.
pub trait Word {}
impl Word for u64 {}
impl Word for i64 {}
impl Word for u32 {}
impl Word for usize {}
impl<T> Word for *mut T {}
impl<T> Word for *const T {}

/// A result type of a runtime function and its shape.
pub trait Shape {
    const RET: Ret;
}
impl Shape for () {
    const RET: Ret = Ret::None;
}
impl Shape for u64 {
    const RET: Ret = Ret::One;
}
impl Shape for i64 {
    const RET: Ret = Ret::One;
}
impl<T> Shape for *mut T {
    const RET: Ret = Ret::One;
}
impl<T> Shape for *const T {
    const RET: Ret = Ret::One;
}
impl Shape for rt::helpers::Pair {
    const RET: Ret = Ret::Pair;
}

/// One typed entry per arity: the function item coerces to a typed
/// `unsafe extern "C" fn` pointer (safe functions too), so the table's
/// parameter count must be the function's and every parameter a word; the
/// shape comes from the result type. `!` results (traps) return nothing.
macro_rules! typed_entries {
    ($( $n:literal $name:ident $never:ident ($($a:ident),*); )*) => {$(
        // An arity no runtime function has at the moment is unused.
        #[allow(non_snake_case, dead_code)]
        fn $name<$($a: Word,)* R: Shape>(f: unsafe extern "C" fn($($a),*) -> R) -> (*const u8, usize, Ret) {
            (f as *const u8, $n, R::RET)
        }
        #[allow(non_snake_case, dead_code)]
        fn $never<$($a: Word),*>(f: unsafe extern "C" fn($($a),*) -> !) -> (*const u8, usize, Ret) {
            (f as *const u8, $n, Ret::None)
        }
    )*};
}

typed_entries! {
    0 arity0 never0 ();
    1 arity1 never1 (A);
    2 arity2 never2 (A, B);
    3 arity3 never3 (A, B, C);
    4 arity4 never4 (A, B, C, D);
    5 arity5 never5 (A, B, C, D, E);
    6 arity6 never6 (A, B, C, D, E, F);
    7 arity7 never7 (A, B, C, D, E, F, G);
}

/// The typed entry of `$path` with `$params` parameters.
macro_rules! typed {
    (0, Never, $p:expr) => {
        never0($p)
    };
    (1, Never, $p:expr) => {
        never1($p)
    };
    (2, Never, $p:expr) => {
        never2($p)
    };
    (3, Never, $p:expr) => {
        never3($p)
    };
    (4, Never, $p:expr) => {
        never4($p)
    };
    (0, $r:ident, $p:expr) => {
        arity0($p)
    };
    (1, $r:ident, $p:expr) => {
        arity1($p)
    };
    (2, $r:ident, $p:expr) => {
        arity2($p)
    };
    (3, $r:ident, $p:expr) => {
        arity3($p)
    };
    (4, $r:ident, $p:expr) => {
        arity4($p)
    };
    (5, $r:ident, $p:expr) => {
        arity5($p)
    };
    (6, $r:ident, $p:expr) => {
        arity6($p)
    };
    (7, $r:ident, $p:expr) => {
        arity7($p)
    };
}

/// The declared shape (`Never` returns nothing).
macro_rules! declared {
    (Never) => {
        Ret::None
    };
    ($r:ident) => {
        Ret::$r
    };
}

macro_rules! rt_fns {
    ($( $name:ident = $path:expr, $params:tt, $ret:ident; )*) => {
        /// Runtime functions by symbol name.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum F { $( $name, )* }

        /// Every runtime function the JIT may link against, from typed
        /// function pointers: a declared shape that disagrees with the
        /// function's result type panics here (and in the unit test).
        pub fn all() -> Vec<(F, RtFn)> {
            vec![$({
                let (addr, params, ret) = typed!($params, $ret, $path);
                assert_eq!(ret, declared!($ret), "the result of {}", stringify!($name));
                (F::$name, (stringify!($name), addr, params, ret))
            }, )*]
        }
    };
}

rt_fns! {
    sspur_alloc_block = rt::helpers::sspur_alloc_block, 3, One;
    sspur_trap_msg = rt::helpers::sspur_trap_msg, 4, Never;
    sspur_trap_index = rt::helpers::sspur_trap_index, 4, Never;
    sspur_trap_count = rt::helpers::sspur_trap_count, 3, Never;
    sspur_trap_key = rt::helpers::sspur_trap_key, 4, Never;
    sspur_f64_rem = rt::helpers::sspur_f64_rem, 2, One;
    sspur_range = rt::helpers::sspur_range, 3, Pair;
    sspur_range_len = rt::helpers::sspur_range_len, 3, One;
    sspur_free_deep = rt::sspur_free_deep, 4, None;
    sspur_free_cell = rt::sspur_free_cell, 3, None;
    sspur_reuse_or_alloc = rt::sspur_reuse_or_alloc, 3, One;
    sspur_drop_strs = list::sspur_drop_strs, 3, None;
    sspur_list_alloc = list::sspur_list_alloc, 4, One;
    sspur_list_seal = list::sspur_list_seal, 2, None;
    sspur_list_finish = list::sspur_list_finish, 2, One;
    sspur_list_grow = list::sspur_list_grow, 6, One;
    sspur_list_append_tmp = list::sspur_list_append_tmp, 7, One;
    sspur_list_concat = list::sspur_list_concat, 7, One;
    sspur_list_reverse = list::sspur_list_reverse, 5, One;
    sspur_list_sort = list::sspur_list_sort, 4, One;
    sspur_list_sort_by = list::sspur_list_sort_by, 7, One;
    sspur_list_unique = list::sspur_list_unique, 4, Pair;
    sspur_list_contains = list::sspur_list_contains, 4, One;
    sspur_list_extreme = list::sspur_list_extreme, 4, One;
    sspur_list_counts = list::sspur_list_counts, 4, One;
    sspur_counts_add = list::sspur_counts_add, 4, None;
    sspur_list_enumerate = list::sspur_list_enumerate, 4, One;
    sspur_list_zip = list::sspur_list_zip, 7, Pair;
    sspur_list_join = list::sspur_list_join, 5, Pair;
    sspur_map_new = map::sspur_map_new, 2, One;
    sspur_map_put = map::sspur_map_put, 6, None;
    sspur_map_put_owned = map::sspur_map_put_owned, 6, None;
    sspur_map_find = map::sspur_map_find, 3, One;
    sspur_map_probe = map::sspur_map_probe, 3, One;
    sspur_map_commit = map::sspur_map_commit, 7, One;
    sspur_map_remove = map::sspur_map_remove, 3, One;
    sspur_map_len = map::sspur_map_len, 1, One;
    sspur_map_part = map::sspur_map_part, 5, Pair;
    sspur_map_entries = map::sspur_map_entries, 4, Pair;
    sspur_str_concat = s::sspur_str_concat, 5, Pair;
    sspur_str_cmp = s::sspur_str_cmp, 4, One;
    sspur_str_eq = s::sspur_str_eq, 4, One;
    sspur_str_chars = s::sspur_str_chars, 3, Pair;
    sspur_str_split = s::sspur_str_split, 5, Pair;
    sspur_str_words = s::sspur_str_words, 3, Pair;
    sspur_str_lines = s::sspur_str_lines, 3, Pair;
    sspur_piece_next = rt::helpers::pieces::sspur_piece_next, 6, Pair;
    sspur_piece_count = rt::helpers::pieces::sspur_piece_count, 5, One;
    sspur_piece_counts = rt::helpers::pieces::sspur_piece_counts, 6, One;
    sspur_str_trim = s::sspur_str_trim, 2, Pair;
    sspur_str_case = s::sspur_str_case, 4, Pair;
    sspur_str_replace = s::sspur_str_replace, 7, Pair;
    sspur_str_repeat = s::sspur_str_repeat, 6, Pair;
    sspur_str_find = s::sspur_str_find, 4, One;
    sspur_str_test = s::sspur_str_test, 5, One;
    sspur_str_take_drop = s::sspur_str_take_drop, 6, Pair;
    sspur_str_slice = s::sspur_str_slice, 6, Pair;
    sspur_str_to_int = s::sspur_str_to_int, 4, One;
    sspur_str_to_f64 = s::sspur_str_to_f64, 4, One;
    sspur_str_parse = s::sspur_str_parse, 3, Pair;
    sspur_f64_to_int = s::sspur_f64_to_int, 3, One;
    sspur_sb_new = text::sspur_sb_new, 1, One;
    sspur_sb_new_sep = text::sspur_sb_new_sep, 3, One;
    sspur_sb_str = text::sspur_sb_str, 3, None;
    sspur_sb_piece = text::sspur_sb_piece, 4, None;
    sspur_sb_int = text::sspur_sb_int, 2, None;
    sspur_sb_value = text::sspur_sb_value, 3, None;
    sspur_sb_finish = text::sspur_sb_finish, 2, Pair;
    sspur_sb_finish_frame = text::sspur_sb_finish_frame, 2, Pair;
    sspur_print_str = text::sspur_print_str, 3, None;
    sspur_print_value = text::sspur_print_value, 3, None;
    sspur_args = text::sspur_args, 1, Pair;
    sspur_read_file = text::sspur_read_file, 5, Pair;
    sspur_read_stdin = text::sspur_read_stdin, 3, Pair;
    sspur_list_copy = list::sspur_list_copy, 5, One;
    sspur_remember = rt::sspur_remember, 1, None;
    sspur_read_lines = io::sspur_read_lines, 3, Pair;
    sspur_write_file = io::sspur_write_file, 6, Pair;
    sspur_exit = io::sspur_exit, 3, Never;
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_has_its_declared_shape() {
        let all = super::all();
        assert!(all.len() > 50);
        assert!(all.iter().all(|(_, (_, addr, _, _))| !addr.is_null()));
    }
}
