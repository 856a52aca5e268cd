//! Unique cells: deep frees through the type table (iterative: a chain of
//! ten million cells frees without recursion), reuse in place, the
//! per-kind and reuse statistics, and check mode's quarantined tokens.

mod common;

use common::*;
use rt::helpers::types::{install, TyDesc};
use rt::{MemMode, Settings};

/// Type 0 Int, 1 Str, 2 `L = Cons(Int, L) | Nil`, 3 `List[Str]`,
/// 4 `R { name: Str, tags: List[Str], next: Option[L] }`, 5 `Option[L]`,
/// 6 `(Int, R)`, 7 `T = Leaf | Node(T, Int, T)`.
fn table() {
    install(vec![
        TyDesc::Int,
        TyDesc::Str,
        TyDesc::Sum {
            name: "L".into(),
            variants: vec![("Cons".into(), vec![0, 2]), ("Nil".into(), vec![])],
        },
        TyDesc::List(1),
        TyDesc::Record {
            name: "R".into(),
            fields: vec![("name".into(), 1), ("tags".into(), 3), ("next".into(), 5)],
        },
        TyDesc::Option(2),
        TyDesc::Tuple(vec![0, 4]),
        TyDesc::Sum {
            name: "T".into(),
            variants: vec![("Leaf".into(), vec![]), ("Node".into(), vec![7, 0, 7])],
        },
    ]);
}

/// The static `Nil` (tag 1): outside the heap, like compiled code's tags.
static TAGS: [u64; 2] = [0, 1];

fn nil() -> u64 {
    TAGS.as_ptr() as u64 + 8
}

fn cons(head: i64, tail: u64) -> u64 {
    let p = alloc(24, 1) as *mut u64;
    unsafe {
        *p = 0;
        *p.add(1) = head as u64;
        *p.add(2) = tail;
    }
    p as u64
}

fn report_line<'a>(report: &'a str, prefix: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in {report}"))
}

fn chain(n: usize) -> u64 {
    let mut l = nil();
    for i in 0..n {
        l = cons(i as i64, l);
    }
    l
}

#[test]
fn ten_million_cells_free_deep_without_recursion() {
    on_fresh_stack(|| {
        let _g = fresh(counting());
        table();
        let l = chain(10_000_000);
        unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
        let s = rt::stats();
        assert_eq!(s.counters.freed_last_use_blocks, 10_000_000);
        assert_eq!(s.freed_by_kind, [10_000_000, 0, 0, 0]);
        assert_eq!(s.left_for_collector().0, 0);
        // The freed cells are handed out again.
        let again = alloc(24, 1);
        assert_eq!(rt::block_of(again).map(|b| b.1), Some(32));
        assert!(s.peak_heap_bytes >= 320_000_000);
        let before = s.peak_heap_bytes;
        let l = chain(10_000_000);
        unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
        assert!(rt::stats().peak_heap_bytes <= before + (1 << 20));
    });
}

/// A tuple `(7, R { "a heap name", ["x", "yz"], Some(chain of 3) })` and
/// a record `R { literal, [], None }`, and every heap block the two own:
/// (address, requested bytes, pointer kind).
fn records() -> (u64, u64, Vec<(usize, usize, u32)>) {
    let mut blocks = Vec::new();
    fn block(blocks: &mut Vec<(usize, usize, u32)>, size: usize, kind: u32) -> *mut u8 {
        let p = alloc(size, kind);
        blocks.push((p as usize, size, kind));
        p
    }
    let mut string = |text: &str| {
        let p = block(&mut blocks, text.len(), 0);
        // SAFETY: `p` is a fresh block of `text.len()` bytes, disjoint from `text`.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len()) };
        (p as u64, text.len() as u64)
    };
    let name = string("a heap name");
    let (t0, t1) = (string("x"), string("yz"));
    let tags = block(&mut blocks, 32, 1) as *mut u64;
    // SAFETY: four words inside the fresh 32-byte block.
    unsafe {
        *tags = t0.0;
        *tags.add(1) = t0.1;
        *tags.add(2) = t1.0;
        *tags.add(3) = t1.1;
    }
    let some = block(&mut blocks, 16, 1) as *mut u64;
    let l = chain(3);
    let mut c = l;
    while c != nil() {
        blocks.push((c as usize, 24, 1));
        // SAFETY: `c` is a live `Cons` block of three words.
        c = unsafe { *(c as *const u64).add(2) };
    }
    // SAFETY: two words inside the fresh 16-byte block.
    unsafe {
        *some = 1;
        *some.add(1) = l;
    }
    let r = block(&mut blocks, 40, 1) as *mut u64;
    // SAFETY: five words inside the fresh 40-byte block.
    unsafe {
        *r = name.0;
        *r.add(1) = name.1;
        *r.add(2) = tags as u64;
        *r.add(3) = 2;
        *r.add(4) = some as u64;
    }
    let t = block(&mut blocks, 16, 1) as *mut u64;
    // SAFETY: two words inside the fresh 16-byte block.
    unsafe {
        *t = 7;
        *t.add(1) = r as u64;
    }
    // A static string field (a literal) is not freed.
    let lit = b"literal";
    let r2 = block(&mut blocks, 40, 1) as *mut u64;
    // SAFETY: words 0, 1 and 4 of the fresh 40-byte block.
    unsafe {
        *r2 = lit.as_ptr() as u64;
        *r2.add(1) = lit.len() as u64;
        *r2.add(4) = TAGS.as_ptr() as u64; // None
    }
    (t as u64, r2 as u64, blocks)
}

#[test]
fn deep_free_follows_records_options_lists_and_strings() {
    on_fresh_stack(|| {
        let _g = fresh(counting());
        table();
        let (t, r2, _) = records();
        // SAFETY: `t` and `r2` own every block under them, used by nothing else.
        unsafe { rt::sspur_free_deep(t, 0, 6, 0) };
        unsafe { rt::sspur_free_deep(r2, 0, 4, 0) };
        let s = rt::stats();
        // tuple, record, Some, 3 cons; the second record.
        assert_eq!(s.freed_by_kind, [7, 1, 3, 0]);
        assert_eq!(s.left_for_collector().0, 0);
        let report = rt::exit_report();
        assert_eq!(
            report_line(&report, "freed at last use by kind:"),
            "freed at last use by kind: cells 7, lists 1, strings 3, closures 0"
        );
    });
}

/// The plain default mode (no counting, no checks) takes its own path: the
/// same blocks must come free, straight onto their classes' free lists.
#[test]
fn plain_default_mode_frees_the_same_blocks_into_the_free_lists() {
    on_fresh_stack(|| {
        let _g = fresh(Settings::DEFAULT);
        table();
        let (t, r2, blocks) = records();
        // SAFETY: `t` and `r2` own every block under them, used by nothing else.
        unsafe { rt::sspur_free_deep(t, 0, 6, 0) };
        unsafe { rt::sspur_free_deep(r2, 0, 4, 0) };
        // Each free list hands back exactly the blocks freed into it.
        let mut freed: Vec<usize> = blocks.iter().map(|b| b.0).collect();
        let mut again: Vec<usize> = blocks
            .iter()
            .map(|&(_, size, kind)| alloc(size, kind) as usize)
            .collect();
        freed.sort_unstable();
        again.sort_unstable();
        assert_eq!(freed, again);
        // A pointer block comes back zeroed.
        let r = blocks.iter().find(|b| b.1 == 40).map(|b| b.0).unwrap();
        // SAFETY: `r` is a 40-byte block of the heap, handed out again
        // above (its class rounds it to 48 bytes: six words).
        assert!(unsafe { std::slice::from_raw_parts(r as *const u64, 6) }
            .iter()
            .all(|&w| w == 0));
    });
}

/// A complete binary tree of `T` of depth `d` (static `Leaf`s at the
/// bottom); its nodes' addresses are added to `nodes`.
fn tree(d: u32, nodes: &mut Vec<usize>) -> u64 {
    if d == 0 {
        return TAGS.as_ptr() as u64; // Leaf, tag 0
    }
    let (l, r) = (tree(d - 1, nodes), tree(d - 1, nodes));
    let p = alloc(32, 1) as *mut u64;
    // SAFETY: four words inside the fresh 32-byte block.
    unsafe {
        *p = 1;
        *p.add(1) = l;
        *p.add(2) = d as u64;
        *p.add(3) = r;
    }
    nodes.push(p as usize);
    p as u64
}

/// A tree's nodes come free in every mode that frees, and in the plain
/// default mode straight onto the free list.
#[test]
fn trees_free_deep_in_every_mode() {
    on_fresh_stack(|| {
        for settings in [Settings::DEFAULT, counting(), check_mode()] {
            let (mem, counted) = (settings.mem, settings.counting());
            let _g = fresh(settings);
            table();
            let mut nodes = Vec::new();
            let t = tree(12, &mut nodes);
            // SAFETY: `t` owns its nodes, used by nothing else afterwards.
            unsafe { rt::sspur_free_deep(t, 0, 7, 0) };
            match mem {
                MemMode::Check => {
                    assert_eq!(rt::stats().freed_by_kind, [4095, 0, 0, 0]);
                    collect();
                    assert!(rt::check_reports().is_empty(), "{:?}", rt::check_reports());
                }
                _ if counted => {
                    assert_eq!(rt::stats().freed_by_kind, [4095, 0, 0, 0]);
                    assert_eq!(rt::stats().left_for_collector().0, 0);
                }
                _ => {
                    let mut again: Vec<usize> =
                        nodes.iter().map(|_| alloc(32, 1) as usize).collect();
                    nodes.sort_unstable();
                    again.sort_unstable();
                    assert_eq!(nodes, again);
                }
            }
        }
    });
}

#[test]
fn plain_default_mode_frees_ten_million_cells_without_recursion() {
    on_fresh_stack(|| {
        let _g = fresh(Settings::DEFAULT);
        table();
        let first = cons(-1, nil());
        let mut l = first;
        for i in 0..10_000_000 {
            l = cons(i, l);
        }
        // SAFETY: `l` owns its cells, used by nothing else afterwards.
        unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
        // The last block freed is the first handed out again.
        assert_eq!(alloc(24, 1) as u64, first);
        let before = rt::stats().heap_bytes;
        let l = chain(10_000_000);
        // SAFETY: as above.
        unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
        assert!(rt::stats().heap_bytes <= before + (1 << 20));
    });
}

#[test]
fn reuse_builds_in_the_token_block_and_zeroes_its_tail() {
    let _g = fresh(counting());
    let token = alloc(40, 1) as *mut u64;
    unsafe { std::ptr::write_bytes(token as *mut u8, 0x11, 48) };
    let p = unsafe { rt::sspur_reuse_or_alloc(token as u64, 24, 0) };
    assert_eq!(p, token as u64);
    let words = unsafe { std::slice::from_raw_parts(token, 6) };
    assert_eq!(&words[3..], &[0, 0, 0], "the words past the new value");
    let s = rt::stats();
    assert_eq!((s.reused_blocks, s.reused_bytes), (1, 48));
    // One value allocated, one reused: the new value is what is left.
    assert_eq!(s.counters.alloc_blocks, 2);
    assert_eq!(s.left_for_collector(), (1, 48));
    assert!(report_line(&rt::exit_report(), "reused in place:").ends_with(": 1 blocks, 48 bytes"));
}

#[test]
fn a_token_that_cannot_hold_the_value_is_freed() {
    let _g = fresh(counting());
    let token = alloc(16, 1);
    let p = unsafe { rt::sspur_reuse_or_alloc(token as u64, 40, 0) };
    assert_ne!(p, token as u64);
    assert_eq!(rt::block_of(p as *const u8).map(|b| b.1), Some(48));
    // A data block is no cell: not reused either.
    let data = alloc(32, 0);
    let q = unsafe { rt::sspur_reuse_or_alloc(data as u64, 32, 0) };
    assert_ne!(q, data as u64);
    assert_eq!(rt::stats().left_for_collector().0, 2);
    // A static token (a nullary constructor) just allocates.
    let r = unsafe { rt::sspur_reuse_or_alloc(nil(), 16, 0) };
    assert!(rt::block_of(r as *const u8).is_some());
}

fn check_mode() -> Settings {
    Settings {
        mem: MemMode::Check,
        ..Settings::DEFAULT
    }
}

#[test]
fn check_mode_quarantines_tokens_and_reports_an_unsound_reuse() {
    let _g = fresh(check_mode());
    rt::set_site_names(vec![
        "t.ssp:3:5 constructor".into(),
        "t.ssp:9:7 constructor".into(),
    ]);
    static mut HOLDER: usize = 0;
    // SAFETY: a static, readable for the rest of the run.
    unsafe { rt::add_root(&raw const HOLDER) };
    let token = rt::sspur_alloc(24, 1, 1);
    let holder = alloc(16, 1);
    unsafe {
        *(holder as *mut usize) = token as usize;
        HOLDER = holder as usize;
    }
    let p = unsafe { rt::sspur_reuse_or_alloc(token as u64, 24, 2) };
    assert_ne!(p, token as u64, "check mode builds afresh");
    assert!(unsafe { std::slice::from_raw_parts(token, 32) }
        .iter()
        .all(|&b| b == 0xA5));
    collect();
    assert_eq!(
        rt::check_reports(),
        ["sspur check: a freed 32-byte block is still reachable: allocated at t.ssp:3:5 constructor, freed at t.ssp:9:7 constructor"]
    );
    assert_eq!(rt::stats().reused_blocks, 1);
}

#[test]
fn check_mode_deep_free_quarantines_every_block() {
    on_fresh_stack(|| {
        let _g = fresh(check_mode());
        table();
        let l = chain(1000);
        unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
        let s = rt::stats();
        assert_eq!(s.freed_by_kind[0], 1000);
        assert!(unsafe { std::slice::from_raw_parts(l as *const u8, 32) }
            .iter()
            .all(|&b| b == 0xA5));
        collect();
        assert!(rt::check_reports().is_empty(), "{:?}", rt::check_reports());
    });
}

#[test]
fn gc_mode_frees_and_reuses_nothing() {
    let _g = fresh(Settings {
        mem: MemMode::Gc,
        ..counting()
    });
    table();
    let l = chain(10);
    unsafe { rt::sspur_free_deep(l, 0, 2, 0) };
    let p = unsafe { rt::sspur_reuse_or_alloc(l, 24, 0) };
    assert_ne!(p, l);
    let s = rt::stats();
    assert_eq!(s.counters.freed_last_use_blocks, 0);
    assert_eq!(s.left_for_collector().0, 11);
}

/// Points the registered root at a holder block that points at a fresh
/// 24-byte token: the token is reached through the heap only, so once a
/// collection makes it old it is not remembered. Returns it masked.
#[inline(never)]
fn held_token() -> usize {
    static mut HOLD: usize = 0;
    let t = alloc(24, 1) as usize;
    let holder = alloc(16, 1) as *mut usize;
    // SAFETY: `HOLD` is a static word registered as a root before it is
    // written, touched only by this test's thread (tests holding the
    // runtime run one at a time); `holder` is a fresh 16-byte block.
    unsafe {
        rt::add_root(&raw const HOLD);
        holder.write(t);
        HOLD = holder as usize;
    }
    t ^ MASK
}

/// Reuses the masked token in place as compiled code does: through the
/// runtime unless the table of renewed blocks has it. Whether it had it.
#[inline(never)]
fn reuse_as_compiled(m: usize) -> bool {
    let t = m ^ MASK;
    let had = rt::cells::renewed::contains(t);
    if !had {
        // SAFETY: `t` is the live 24-byte token `held_token` made, whose
        // fields nothing reads before the caller rewrites them.
        let p = unsafe { rt::sspur_reuse_or_alloc(t as u64, 24, 0) };
        assert_eq!(p as usize, t, "reused in place");
    }
    had
}

/// Stores a fresh block holding 77 into word 1 of the masked token (a
/// constructor's young field); returns the fresh block masked.
#[inline(never)]
fn store_young(m: usize) -> usize {
    let y = alloc(32, 1) as usize;
    // SAFETY: `y` is a fresh 32-byte block and `m` masks the live 24-byte
    // token; word 1 is inside both.
    unsafe {
        *(y as *mut usize).add(1) = 77;
        *((m ^ MASK) as *mut usize).add(1) = y;
    }
    y ^ MASK
}

#[inline(never)]
fn young_field(m: usize) -> usize {
    // SAFETY: `m` masks the live token, whose word 1 holds the live block
    // `store_young` wrote (kept alive through the token).
    unsafe { *(*((m ^ MASK) as *const *const usize).add(1)).add(1) }
}

#[inline(always)]
fn collect_minor() {
    scrub_stack();
    rt::collect_minor();
}

#[test]
fn a_renewed_block_is_renewed_again_after_a_collection_made_it_old() {
    on_fresh_stack(|| {
        let _g = fresh(Settings::DEFAULT);
        let m = held_token();
        assert!(!reuse_as_compiled(m), "the first reuse goes to the runtime");
        assert!(reuse_as_compiled(m), "the runtime noted the block");
        // The collection promotes the token: the table forgets it, so the
        // next reuse renews it and its young field keeps the field alive.
        collect_minor();
        assert!(!reuse_as_compiled(m), "a pause forgets every block");
        let y = store_young(m);
        collect_minor();
        assert!(masked_allocated(y), "the young field survived");
        assert_eq!(young_field(m), 77);
        // A mark slice of an incremental major collection forgets too.
        assert!(!reuse_as_compiled(m));
        rt::major_start();
        assert!(!reuse_as_compiled(m));
        rt::major_slice(1 << 20);
        assert!(!reuse_as_compiled(m));
        rt::major_finish();
    });
}

#[test]
fn only_the_plain_default_mode_notes_renewed_blocks() {
    for settings in [counting(), check_mode()] {
        let _g = fresh(settings);
        let t = alloc(24, 1) as usize;
        // SAFETY: `t` is a fresh 24-byte block this test owns.
        let p = unsafe { rt::sspur_reuse_or_alloc(t as u64, 24, 0) };
        assert!(!rt::cells::renewed::contains(p as usize));
        assert!(!rt::cells::renewed::contains(t));
    }
    // A reset forgets the blocks the last runtime noted.
    let _g = fresh(Settings::DEFAULT);
    let t = alloc(24, 1) as usize;
    // SAFETY: `t` is a fresh 24-byte block this test owns.
    unsafe { rt::sspur_reuse_or_alloc(t as u64, 24, 0) };
    assert!(rt::cells::renewed::contains(t));
    drop(_g);
    let _g = fresh(check_mode());
    assert!(!rt::cells::renewed::contains(t));
}

/// The free lists hand exactly the freed `blocks` of `size` bytes out again.
fn handed_out_again(blocks: &mut [usize], size: usize) {
    let mut again: Vec<usize> = blocks.iter().map(|_| alloc(size, 1) as usize).collect();
    blocks.sort_unstable();
    again.sort_unstable();
    assert_eq!(blocks, &again[..]);
}

/// A spine of `n` nodes of `T` whose second field is a one-node side tree:
/// a walk that goes on with the first field keeps every side tree pending,
/// more than the native array the plain default mode's walk starts with.
fn caterpillar(n: usize, nodes: &mut Vec<usize>) -> u64 {
    let mut t = TAGS.as_ptr() as u64;
    for i in 0..n {
        let side = tree(1, nodes);
        let p = alloc(32, 1) as *mut u64;
        // SAFETY: four words inside the fresh 32-byte block.
        unsafe {
            *p = 1;
            *p.add(1) = t;
            *p.add(2) = i as u64;
            *p.add(3) = side;
        }
        nodes.push(p as usize);
        t = p as u64;
    }
    t
}

/// The plain default mode's tree walk: pending fields past its native
/// array spill to the runtime's work list, and a tree type with a variant
/// owning three fields takes the general walk; every block comes free.
#[test]
fn tree_walks_that_spill_or_own_three_fields_free_every_block() {
    on_fresh_stack(|| {
        let _g = fresh(Settings::DEFAULT);
        table();
        let mut nodes = Vec::new();
        let t = caterpillar(5000, &mut nodes);
        // SAFETY: `t` owns its nodes, used by nothing else afterwards.
        unsafe { rt::sspur_free_deep(t, 0, 7, 0) };
        handed_out_again(&mut nodes, 32);

        // 0 Int, 1 `Q = E | N(Q, Q, Int, Q)`.
        install(vec![
            TyDesc::Int,
            TyDesc::Sum {
                name: "Q".into(),
                variants: vec![("E".into(), vec![]), ("N".into(), vec![1, 1, 0, 1])],
            },
        ]);
        fn ternary(d: u32, nodes: &mut Vec<usize>) -> u64 {
            if d == 0 {
                return TAGS.as_ptr() as u64; // E, tag 0
            }
            let kids = [0; 3].map(|_| ternary(d - 1, nodes));
            let p = alloc(40, 1) as *mut u64;
            // SAFETY: five words inside the fresh 40-byte block.
            unsafe {
                *p = 1;
                *p.add(1) = kids[0];
                *p.add(2) = kids[1];
                *p.add(3) = 7;
                *p.add(4) = kids[2];
            }
            nodes.push(p as usize);
            p as u64
        }
        let mut nodes = Vec::new();
        let q = ternary(6, &mut nodes);
        // SAFETY: as above.
        unsafe { rt::sspur_free_deep(q, 0, 1, 0) };
        handed_out_again(&mut nodes, 40);
    });
}

/// The root the old-tree test holds its blocks through.
static mut OLD_ROOT: usize = 0;

/// Builds a tree of depth 8 held only by the registered root and lets a
/// minor collection make every node old.
#[inline(never)]
fn old_tree() {
    let mut nodes = Vec::new();
    let t = tree(8, &mut nodes);
    // SAFETY: `OLD_ROOT` is a static word registered as a root before it
    // is written, touched only by this test's thread.
    unsafe {
        rt::add_root(&raw const OLD_ROOT);
        OLD_ROOT = t as usize;
    }
    collect_minor();
}

/// Frees the held (old) tree deep, then takes one of its blocks again,
/// holds it through the root and stores a fresh block holding 77 in it.
/// Returns both masked.
#[inline(never)]
fn free_old_tree_and_reuse_a_block() -> (usize, usize) {
    // SAFETY: the root's tree owns its nodes; the root lets go first.
    unsafe {
        let t = OLD_ROOT;
        OLD_ROOT = 0;
        rt::sspur_free_deep(t as u64, 0, 7, 0);
    }
    let again = alloc(32, 1) as usize;
    let y = alloc(32, 1) as usize;
    // SAFETY: both are fresh 32-byte blocks; `OLD_ROOT` as above.
    unsafe {
        *(y as *mut usize).add(1) = 77;
        *(again as *mut usize).add(1) = y;
        OLD_ROOT = again;
    }
    (again ^ MASK, y ^ MASK)
}

/// Word 1 of the block word 1 of the root's block points at.
#[inline(never)]
fn held_young_field() -> usize {
    // SAFETY: `OLD_ROOT` holds `again`, whose word 1 holds `y`, both live.
    unsafe { *(*((OLD_ROOT as *const *const usize).add(1))).add(1) }
}

/// Frees the held (old) tree deep and takes one of its blocks again,
/// held by nothing; returns it masked.
#[inline(never)]
fn free_old_tree_and_take_a_block() -> usize {
    // SAFETY: the root's tree owns its nodes; the root lets go first.
    unsafe {
        let t = OLD_ROOT;
        OLD_ROOT = 0;
        rt::sspur_free_deep(t as u64, 0, 7, 0);
    }
    alloc(32, 1) as usize ^ MASK
}

/// A deep free of old cells makes them young, as any free does: a block
/// handed out again and dropped is reclaimed by the next minor collection
/// (an old block, or one on a page off the young list, would stay), and
/// one handed out again and holding a young block keeps it alive.
#[test]
fn old_cells_freed_deep_are_young_when_handed_out_again() {
    on_fresh_stack(|| {
        let _g = fresh(Settings::DEFAULT);
        table();
        old_tree();
        let again = free_old_tree_and_take_a_block();
        collect_minor();
        assert!(!masked_allocated(again), "a minor collection reclaimed it");
        old_tree();
        let (again, y) = free_old_tree_and_reuse_a_block();
        collect_minor();
        assert!(masked_allocated(y), "the young block stored in it survived");
        assert_eq!(held_young_field(), 77);
        assert!(masked_allocated(again));
        // SAFETY: as in `old_tree`.
        unsafe { OLD_ROOT = 0 };
        collect();
        assert!(!masked_allocated(again) && !masked_allocated(y));
    });
}
