//! The runtime entry points generated code calls, with their shapes. Every
//! argument is one 64-bit word; results are none, one word, or a
//! `(ptr, len)` pair returned in two registers.

use rt::helpers::{list, map, str as s, text};

/// How many words a runtime function returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ret {
    None,
    One,
    Pair,
}

/// (name, address, parameter count, result shape).
pub type RtFn = (&'static str, *const u8, usize, Ret);

macro_rules! rt_fns {
    ($( $name:ident = $path:expr, $params:expr, $ret:ident; )*) => {
        /// Runtime functions by symbol name.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum F { $( $name, )* }

        /// Every runtime function the JIT may link against.
        pub fn all() -> Vec<(F, RtFn)> {
            vec![$( (F::$name, (stringify!($name), $path as *const u8, $params, Ret::$ret)), )*]
        }
    };
}

rt_fns! {
    sspur_alloc_block = rt::helpers::sspur_alloc_block, 3, One;
    sspur_trap_msg = rt::helpers::sspur_trap_msg, 4, None;
    sspur_trap_index = rt::helpers::sspur_trap_index, 4, None;
    sspur_trap_count = rt::helpers::sspur_trap_count, 3, None;
    sspur_trap_key = rt::helpers::sspur_trap_key, 4, None;
    sspur_f64_rem = rt::helpers::sspur_f64_rem, 2, One;
    sspur_range = rt::helpers::sspur_range, 3, Pair;
    sspur_drop = list::sspur_drop, 3, None;
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
    sspur_list_enumerate = list::sspur_list_enumerate, 4, One;
    sspur_list_zip = list::sspur_list_zip, 7, Pair;
    sspur_list_join = list::sspur_list_join, 5, Pair;
    sspur_map_new = map::sspur_map_new, 2, One;
    sspur_map_put = map::sspur_map_put, 6, None;
    sspur_map_put_owned = map::sspur_map_put_owned, 6, None;
    sspur_map_find = map::sspur_map_find, 3, One;
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
    sspur_f64_to_int = s::sspur_f64_to_int, 3, One;
    sspur_sb_new = text::sspur_sb_new, 0, One;
    sspur_sb_new_sep = text::sspur_sb_new_sep, 2, One;
    sspur_sb_str = text::sspur_sb_str, 3, None;
    sspur_sb_piece = text::sspur_sb_piece, 3, None;
    sspur_sb_int = text::sspur_sb_int, 2, None;
    sspur_sb_value = text::sspur_sb_value, 3, None;
    sspur_sb_finish = text::sspur_sb_finish, 2, Pair;
    sspur_print_str = text::sspur_print_str, 3, None;
    sspur_print_value = text::sspur_print_value, 3, None;
    sspur_args = text::sspur_args, 1, Pair;
    sspur_read_file = text::sspur_read_file, 5, Pair;
    sspur_read_stdin = text::sspur_read_stdin, 3, Pair;
}
