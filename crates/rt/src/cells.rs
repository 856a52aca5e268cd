//! Unique cells: deep frees through the type descriptors, reuse of a block
//! in place, and the per-kind statistics.
//!
//! The ownership pass proves statically that a record, tuple, sum value,
//! `Some` or closure block has one owner; compiled code then calls
//! [`sspur_free_deep`] (the owner's whole tree dies), [`sspur_free_cell`]
//! (one block dies, its fields live on elsewhere) or
//! [`sspur_reuse_or_alloc`] (a constructor is built in the block of a value
//! that just died, a *reuse token*). No count is stored anywhere.
//!
//! A deep free walks the value with an explicit work list kept in the
//! runtime (never native recursion), so a chain of ten million cells frees
//! in constant native stack. Children are read before their parent is
//! freed, because a free zeroes a pointer block (or fills it with 0xA5 in
//! check mode). The walk follows drop plans (`plan.rs`: the type table
//! compiled once into the owning fields' offsets per type and variant, so
//! nothing is interpreted per block), and leaves (fields holding a static
//! nullary constructor) are skipped without a page-map lookup. The plain
//! default mode frees each block straight onto its size class's free list,
//! and takes a value of a tree type (a sum whose owning fields are all of
//! its own type) apart with a work list of bare pointers;
//! the counted and checked modes take every block through the checks and
//! statistics.
//!
//! To the collector a reuse is a free and an allocation of the same block:
//! it becomes young (`Heap::renew`), as a block handed out again from a
//! free list does, so it needs no barrier. Compiled code skips the call
//! when the block was renewed since the collector's last pause
//! ([`renewed`]).
//!
//! Check mode quarantines a reuse token like any freed block and builds the
//! constructor in a fresh block: an unsound reuse then shows up at the
//! next collection as a reachable freed block.

use crate::config::MemMode;
use crate::heap::{class_of, index_in_class, FreeCache, Heap, Page, CLASS_SIZES, POINTER};
use crate::helpers::types;
use crate::state::{rt, Rt};

mod plan;
pub mod renewed;

use plan::{Child, Plans, Shape};

/// The kinds of blocks the per-kind statistics count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum BlockKind {
    /// A record, tuple, sum value or `Some`.
    Cell = 0,
    /// A list buffer.
    List = 1,
    /// A string block.
    Str = 2,
    /// A closure block.
    Closure = 3,
}

impl BlockKind {
    pub const ALL: [BlockKind; 4] = [
        BlockKind::Cell,
        BlockKind::List,
        BlockKind::Str,
        BlockKind::Closure,
    ];

    /// The kind compiled code passes as a word (unknown words count as cells).
    pub fn from_word(w: u64) -> BlockKind {
        match w {
            1 => BlockKind::List,
            2 => BlockKind::Str,
            3 => BlockKind::Closure,
            _ => BlockKind::Cell,
        }
    }

    /// The plural used by the exit report.
    pub fn plural(self) -> &'static str {
        match self {
            BlockKind::Cell => "cells",
            BlockKind::List => "lists",
            BlockKind::Str => "strings",
            BlockKind::Closure => "closures",
        }
    }
}

/// Counters of the cell paths (maintained only when counting is on), and
/// the deep free's work list, kept between calls so a free in a loop does
/// not allocate.
#[derive(Default)]
pub struct CellState {
    /// Blocks freed at last use, by [`BlockKind`].
    pub freed_by_kind: [u64; 4],
    /// Blocks a constructor was built in (reuse tokens taken).
    pub reused_blocks: u64,
    pub reused_bytes: u64,
    /// Pending values of a deep free: (first word, second word, type).
    work: Vec<(u64, u64, u32)>,
    /// Pending blocks of a tree value's deep free ([`free_tree`]).
    trees: Vec<u64>,
    /// The deep free's view of the installed type table.
    plans: Plans,
}

impl CellState {
    pub const fn new() -> CellState {
        CellState {
            freed_by_kind: [0; 4],
            reused_blocks: 0,
            reused_bytes: 0,
            work: Vec::new(),
            trees: Vec::new(),
            plans: Plans::new(),
        }
    }
}

/// Frees the heap block at `ptr` (a whole value, not a view) as one of
/// kind `kind`, counting it as freed at last use. Pointers outside the
/// heap (static literals, nullary constructors, `None`) are ignored.
#[inline(always)]
pub(crate) fn free_kind(rt: &mut Rt, ptr: usize, kind: BlockKind, site: u32) {
    if rt.mode == MemMode::Default && !rt.counting {
        // Nothing to check or count: a compiled drop frees a block it owns.
        rt.heap.free_owned(ptr);
        return;
    }
    free_kind_special(rt, ptr, kind, site);
}

/// [`free_kind`] in the modes that check, count or keep every block: out
/// of line, so the plain free saves no registers for it.
#[inline(never)]
fn free_kind_special(rt: &mut Rt, ptr: usize, kind: BlockKind, site: u32) {
    if rt.mode == MemMode::Gc {
        return;
    }
    if rt.counting && rt.heap.map_get(ptr) != 0 {
        rt.cells.freed_by_kind[kind as usize] += 1;
    }
    rt.free(ptr, site, true);
}

/// Whether the deep free should read and free the block at `ptr`: false
/// outside the heap (static data). A block already freed is handed to the
/// free at once, which in check mode aborts naming both frees, and is not
/// read.
fn enter(rt: &mut Rt, ptr: usize, kind: BlockKind, site: u32) -> bool {
    match rt.heap.lookup(ptr) {
        Some((id, i)) if Page::bit(&rt.heap.pages[id].quarantine, i) => {
            free_kind(rt, ptr, kind, site);
            false
        }
        Some(_) => true,
        None => false,
    }
}

/// Reads word `i` of the block at `p`.
///
/// # Safety
/// `p` must point at a live value with at least `i + 1` words.
#[inline(always)]
unsafe fn word(p: u64, i: usize) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { types::word(p as *const u64, i) }
}

/// Pushes the owning fields `children` of the live block at `p`, except
/// those holding a static variant (a leaf).
///
/// # Safety
/// `p` must be a live block holding those fields.
#[inline(always)]
unsafe fn push_children(p: u64, children: &[Child], work: &mut Vec<(u64, u64, u32)>) {
    for c in children {
        // SAFETY: field `c` occupies one or two words at `c.off` of `p`.
        let v = unsafe { field(p, c) };
        if c.static_tags != 0 {
            // SAFETY: a sum or option value points at its `[tag, ...]`
            // words, static or in the heap, which are live.
            let tag = unsafe { word(v.0, 0) };
            if tag < 64 && c.static_tags >> tag & 1 != 0 {
                continue;
            }
        }
        work.push(v);
    }
}

/// The value of field `c` of the block at `p`, with its type.
///
/// # Safety
/// `p` must be a live block holding field `c`.
#[inline(always)]
unsafe fn field(p: u64, c: &Child) -> (u64, u64, u32) {
    let off = c.off as usize;
    // SAFETY: the caller's contract.
    unsafe { (word(p, off), if c.two { word(p, off + 1) } else { 0 }, c.ty) }
}

/// Pushes the `len` elements at `p` of a list whose elements are of type
/// `elem`, `words` words each.
///
/// # Safety
/// `p` must hold `len` live elements of that type.
#[inline(always)]
unsafe fn push_elements(work: &mut Vec<(u64, u64, u32)>, p: u64, len: u64, elem: u32, words: u8) {
    let w = words as usize;
    for i in 0..len as usize {
        // SAFETY: element `i < len` has `w` words (the contract).
        let (x, y) = unsafe { (word(p, i * w), if w == 2 { word(p, i * w + 1) } else { 0 }) };
        work.push((x, y, elem));
    }
}

/// The owning fields of the live value `a` of shape `shape`: its variant's
/// for a tagged block, its fields for a record or tuple, none otherwise.
///
/// # Safety
/// `a` must be a live value of that shape.
#[inline(always)]
unsafe fn children_of(plans: &Plans, shape: Shape, a: u64) -> &[Child] {
    match shape {
        Shape::Tagged { first, count } | Shape::Tree { first, count } => {
            // SAFETY: a tagged value points at its `[tag, fields...]` words.
            plans.variant(first, count, unsafe { word(a, 0) })
        }
        Shape::Cell { first, len } => plans.cell(first, len),
        Shape::Nothing | Shape::Str | Shape::List { .. } => &[],
    }
}

/// The deep free of the plain default mode: each block's fields are read,
/// then the block goes straight onto its size class's free list
/// (`Heap::free_owned_cached`), with no checks or counting to do.
///
/// # Safety
/// As [`sspur_free_deep`]'s.
unsafe fn free_deep_fast(
    heap: &mut Heap,
    plans: &Plans,
    work: &mut Vec<(u64, u64, u32)>,
    trees: &mut Vec<u64>,
    root: (u64, u64, u32),
) {
    let mut cache = FreeCache::EMPTY;
    work.push(root);
    while let Some((a, b, t)) = work.pop() {
        let Some(&shape) = plans.shapes.get(t as usize) else {
            continue;
        };
        // SAFETY for every read below: `(a, b)` is a live value of type `t`
        // owned by the value being freed (the contract, and each child is a
        // field or element of a block not yet freed); a value's words are
        // read before its block is freed. A static value (a literal, a
        // nullary constructor) is readable and owns nothing.
        match shape {
            Shape::Nothing => continue,
            Shape::Str | Shape::List { .. } if b == 0 => continue,
            Shape::Str => {}
            Shape::List {
                elem,
                words,
                owning,
            } => {
                if owning {
                    // SAFETY: see above; a list `(a, b)` has `b` elements at `a`.
                    unsafe { push_elements(work, a, b, elem, words) };
                }
            }
            Shape::Cell { .. } | Shape::Tagged { .. } => {
                // SAFETY: see above.
                unsafe { push_children(a, children_of(plans, shape, a), work) };
            }
            Shape::Tree { first, count } => {
                // SAFETY: see above.
                unsafe { free_tree(heap, plans, trees, a, first, count) };
                continue;
            }
        }
        heap.free_owned_cached(a as usize, &mut cache);
    }
}

/// Pending blocks a tree's deep free keeps on the native stack before it
/// spills to the runtime's work list: a balanced tree of any size needs
/// one per level.
const TREE_LOCAL: usize = 64;

/// Frees the tree value `root` of a [`Shape::Tree`] type `first..first +
/// count` in the plain default mode. Each block's fields are read (leaves
/// skipped), the walk goes on with its first pending child at once and
/// keeps the others on a small array on the native stack (spilling to
/// `stack`, so any shape frees in constant native stack), then the block
/// goes onto its free list through a page cache: the blocks of a tree
/// mostly share pages, so most frees find their page without the page map.
///
/// # Safety
/// As [`sspur_free_deep`]'s, for `root`.
#[inline(never)]
unsafe fn free_tree(
    heap: &mut Heap,
    plans: &Plans,
    stack: &mut Vec<u64>,
    root: u64,
    first: u32,
    count: u32,
) {
    let variants = &plans.variants[first as usize..(first + count) as usize];
    let children = &plans.children[..];
    // Every owning field of a tree type holds a value of the type itself,
    // so all have the same leaves.
    let leaves = variants
        .iter()
        .find_map(|&(f, n)| (n > 0).then(|| children[f as usize].static_tags))
        .unwrap_or(0);
    let mut pairs = [(0u32, 0u32); TREE_PAIRS];
    if variants.len() <= TREE_PAIRS && variants.iter().all(|&(_, n)| n <= 2) {
        for (t, &(f, n)) in variants.iter().enumerate() {
            let fs = &children[f as usize..(f + n) as usize];
            pairs[t] = (
                fs.first().map_or(0, |c| c.off),
                fs.get(1).map_or(0, |c| c.off),
            );
        }
        // SAFETY: the caller's contract.
        return unsafe { free_binary(heap, &pairs[..variants.len()], leaves, stack, root) };
    }
    let mut local = [std::mem::MaybeUninit::uninit(); TREE_LOCAL];
    let mut pending = Pending::new(&mut local, stack);
    let mut cache = FreeCache::EMPTY;
    let mut p = root;
    loop {
        // SAFETY: `p` is a live value of the tree type (the contract, and
        // each child is a field of a block not yet freed), whose words
        // are read before its block is freed; a static one is a readable
        // `[tag]` word with no fields.
        let tag = unsafe { word(p, 0) } as usize;
        let fields = match variants.get(tag) {
            // SAFETY: `Plans::build` made every variant's range lie in
            // `children`.
            Some(&(f, k)) => unsafe { children.get_unchecked(f as usize..(f + k) as usize) },
            None => &[],
        };
        let mut next = 0u64;
        for c in fields {
            // SAFETY: as above; field `c` is one word at `c.off`, a value
            // of the tree type, which points at its tag.
            let (v, vt) = unsafe {
                let v = word(p, c.off as usize);
                (v, word(v, 0))
            };
            if vt >= 64 || leaves >> vt & 1 == 0 {
                pending.take(&mut next, v);
            }
        }
        heap.free_owned_cached(p as usize, &mut cache);
        match pending.next(next) {
            Some(v) => p = v,
            None => break,
        }
    }
    pending.finish(stack);
}

/// The pending blocks of a tree's walk: the child it goes on with, the
/// others on a small array on the native stack, then in the runtime's
/// work list (kept between calls, so a free in a loop does not allocate).
struct Pending<'a> {
    local: &'a mut [std::mem::MaybeUninit<u64>; TREE_LOCAL],
    n: usize,
    spill: Vec<u64>,
}

impl<'a> Pending<'a> {
    /// The walk's pending blocks in `local` (a caller's local array, so
    /// that the count stays in a register), then in `stack`.
    #[inline(always)]
    fn new(
        local: &'a mut [std::mem::MaybeUninit<u64>; TREE_LOCAL],
        stack: &mut Vec<u64>,
    ) -> Pending<'a> {
        let mut spill = std::mem::take(stack);
        spill.clear();
        Pending { local, n: 0, spill }
    }

    /// Block `v` is to be freed: the walk goes on with it next when it has
    /// no `next` yet, else keeps it.
    #[inline(always)]
    fn take(&mut self, next: &mut u64, v: u64) {
        if *next == 0 {
            *next = v;
        } else if self.n < TREE_LOCAL {
            self.local[self.n].write(v);
            self.n += 1;
        } else {
            self.spill.push(v);
        }
    }

    /// The block to free next: `next`, else the last one kept.
    #[inline(always)]
    fn next(&mut self, next: u64) -> Option<u64> {
        if next != 0 {
            Some(next)
        } else if self.n > 0 {
            self.n -= 1;
            // SAFETY: entries below `n` were written by `take`.
            Some(unsafe { self.local[self.n % TREE_LOCAL].assume_init() })
        } else {
            self.spill.pop()
        }
    }

    /// Hands the work list back to the runtime.
    fn finish(self, stack: &mut Vec<u64>) {
        *stack = self.spill;
    }
}

/// Tree types with at most this many variants, each with at most two
/// owning fields, take [`free_binary`]'s path.
const TREE_PAIRS: usize = 8;

/// [`free_tree`] for a tree type whose variants own at most two fields
/// each (binary trees, chains): `pairs[tag]` holds the word offsets of
/// variant `tag`'s owning fields (0: none), and each block goes onto its
/// free list through [`Heap::free_cell_cached`].
///
/// # Safety
/// As [`sspur_free_deep`]'s, for `root`.
#[inline(never)]
unsafe fn free_binary(
    heap: &mut Heap,
    pairs: &[(u32, u32)],
    leaves: u64,
    stack: &mut Vec<u64>,
    root: u64,
) {
    let mut local = [std::mem::MaybeUninit::uninit(); TREE_LOCAL];
    let mut pending = Pending::new(&mut local, stack);
    let mut page = FreeCache::EMPTY;
    let mut p = root;
    // Whether the tree value `v` is a heap block (not a static leaf).
    let owned = |v: u64| {
        // SAFETY: callers pass a field of a live block of the tree type: a
        // live value of the type, which points at its tag.
        let t = unsafe { word(v, 0) };
        t >= 64 || leaves >> t & 1 == 0
    };
    loop {
        // SAFETY: `p` is a live value of the tree type (the contract, and
        // each child is a field of a block not yet freed), whose words
        // are read before its block is freed; a static one is a readable
        // `[tag]` word with no fields.
        let tag = unsafe { word(p, 0) } as usize;
        let (a, b) = pairs.get(tag).copied().unwrap_or((0, 0));
        let mut next = 0u64;
        if a != 0 {
            // SAFETY: as above; field `a` is a one-word value of the type.
            let v = unsafe { word(p, a as usize) };
            if owned(v) {
                next = v;
            }
        }
        if b != 0 {
            // SAFETY: as for `a`.
            let v = unsafe { word(p, b as usize) };
            if owned(v) {
                pending.take(&mut next, v);
            }
        }
        heap.free_cell_cached(p as usize, &mut page);
        match pending.next(next) {
            Some(v) => p = v,
            None => break,
        }
    }
    pending.finish(stack);
}

/// The deep free of the other modes: each block is checked (a quarantined
/// block is a double free in check mode, reported before it is read),
/// counted and freed through [`free_kind`].
///
/// # Safety
/// As [`sspur_free_deep`]'s.
unsafe fn free_deep_checked(
    rt: &mut Rt,
    plans: &Plans,
    work: &mut Vec<(u64, u64, u32)>,
    root: (u64, u64, u32),
    site: u32,
) {
    work.push(root);
    while let Some((a, b, t)) = work.pop() {
        let Some(&shape) = plans.shapes.get(t as usize) else {
            continue;
        };
        let kind = match shape {
            Shape::Nothing => continue,
            Shape::Str | Shape::List { .. } if b == 0 => continue,
            Shape::Str => BlockKind::Str,
            Shape::List { .. } => BlockKind::List,
            Shape::Cell { .. } | Shape::Tagged { .. } | Shape::Tree { .. } => BlockKind::Cell,
        };
        // A string block holds no value, so it is not entered.
        if kind != BlockKind::Str && !enter(rt, a as usize, kind, site) {
            continue;
        }
        match shape {
            Shape::List {
                elem,
                words,
                owning: true,
            } => {
                // SAFETY: as in `free_deep_fast`, and `enter` found the
                // buffer live in the heap before it is read.
                unsafe { push_elements(work, a, b, elem, words) }
            }
            Shape::Cell { .. } | Shape::Tagged { .. } | Shape::Tree { .. } => {
                // SAFETY: as in `free_deep_fast`, and `enter` found the
                // block live in the heap before it is read.
                unsafe { push_children(a, children_of(plans, shape, a), work) };
            }
            _ => {}
        }
        free_kind(rt, a as usize, kind, site);
    }
}

/// Frees a value of type `ty` (index into the installed type table) and
/// every block it owns: cells, list buffers, string blocks. `(w0, w1)` are
/// the value's words (`w1` is 0 for one-word values). Iterative: a chain of
/// any length frees in constant native stack. A no-op under SSPUR_MEM=gc;
/// each freed block counts as freed at last use.
///
/// # Safety
/// The value is live, owns every block reachable from it (no other
/// reference to any of them exists), and none is used afterwards.
#[no_mangle]
pub unsafe extern "C" fn sspur_free_deep(w0: u64, w1: u64, ty: u32, site: u32) {
    let rt = rt();
    if rt.mode == MemMode::Gc {
        return;
    }
    let generation = types::generation();
    if rt.cells.plans.generation != generation {
        types::with_table(|table| rt.cells.plans.build(table, generation));
    }
    let root = (w0, w1, ty);
    if rt.mode == MemMode::Default && !rt.counting {
        let c = &mut rt.cells;
        c.work.clear();
        // SAFETY: the caller's contract.
        unsafe { free_deep_fast(&mut rt.heap, &c.plans, &mut c.work, &mut c.trees, root) }
    } else {
        let plans = std::mem::take(&mut rt.cells.plans);
        let mut work = std::mem::take(&mut rt.cells.work);
        work.clear();
        // SAFETY: the caller's contract.
        unsafe { free_deep_checked(rt, &plans, &mut work, root, site) }
        rt.cells.work = work;
        rt.cells.plans = plans;
    }
}

/// Frees one block of kind `kind` (0 cell, 1 list, 2 string, 3 closure) at
/// its last use; the values its fields point at are not touched. Pointers
/// outside the heap are ignored.
///
/// # Safety
/// The caller owns the block holding `p`; nothing uses it afterwards.
#[no_mangle]
pub unsafe extern "C" fn sspur_free_cell(p: u64, kind: u64, site: u32) {
    let rt = rt();
    free_kind(rt, p as usize, BlockKind::from_word(kind), site);
}

/// A block of `bytes` (a pointer block) for a constructor, built in the
/// block of reuse token `token` when it can be: the token's block is in
/// the heap, holds `bytes`, and the mode reuses (not SSPUR_MEM=check or
/// gc). Otherwise the token's block is freed (quarantined in check mode)
/// and a new block is allocated at `site`, trapping `out of memory` there
/// when that fails.
///
/// A reused block keeps its size; the words past `bytes` are zeroed so no
/// stale pointer keeps garbage alive, and the constructor overwrites the
/// rest. To the collector a reuse is a free and an allocation of the same
/// block (`Heap::renew`): the block is young again, so it needs no
/// barrier (nothing old points at it: its owner just took it apart), and
/// the old generation no longer counts it. The plain default mode notes
/// the block in [`renewed`], so that compiled code reuses it again without
/// calling here until the collector's next pause.
///
/// # Safety
/// The caller owns the token's block (its value just died, its fields
/// were read out) and never uses the token again.
#[no_mangle]
pub unsafe extern "C" fn sspur_reuse_or_alloc(token: u64, bytes: u64, site: u32) -> u64 {
    let rt = rt();
    let bytes = bytes as usize;
    if rt.mode == MemMode::Default && !rt.counting && bytes <= 128 {
        // The plain default mode trusts the compiler: the token is a block
        // it owns, of the size class of `bytes` (the ownership pass matches
        // classes, and every cell block is allocated at its exact size), so
        // its index comes from the class, not from its page's fields.
        let t = token as usize;
        let id = rt.heap.map_get(t) as usize;
        if id != 0 {
            let class = class_of(bytes);
            let i = index_in_class(t, class);
            let page = &rt.heap.pages[id - 1];
            debug_assert!(page.block_size == CLASS_SIZES[class] && page.block_addr(i) == t);
            let size = CLASS_SIZES[class];
            if size > bytes {
                // SAFETY: the token is a block of `size` bytes the caller
                // owns (the contract and the class); `bytes..size` is in it.
                unsafe { std::ptr::write_bytes((t + bytes) as *mut u8, 0, size - bytes) };
            }
            rt.heap.renew(id - 1, i);
            renewed::note(t);
            return token;
        }
    }
    // Otherwise the alloc bit is not tested in the plain default mode
    // either (the compiler owns the token).
    let found = if rt.mode == MemMode::Default && !rt.counting {
        let t = token as usize;
        rt.heap.lookup_owned(t).or_else(|| rt.heap.lookup(t))
    } else {
        rt.heap.lookup(token as usize)
    };
    let Some((id, i)) = found else {
        return crate::helpers::sspur_alloc_block(bytes as u64, 1, site);
    };
    let page = &rt.heap.pages[id];
    let (base, size) = (page.block_addr(i), page.block_size);
    let fits = base == token as usize && page.kind as usize == POINTER && bytes <= size;
    if rt.counting && rt.mode != MemMode::Gc {
        // A reuse is the old value's end and the new value's allocation,
        // so "left for the collector" means the same in every mode.
        rt.cells.reused_blocks += 1;
        rt.cells.reused_bytes += size as u64;
        if rt.heap.track_sites {
            let old = rt.heap.pages[id].sites[i];
            let s = rt.site_stat(old);
            s.freed_blocks += 1;
            s.freed_bytes += size as u64;
        }
    }
    if rt.mode == MemMode::Default && fits {
        if size > bytes {
            // SAFETY: `(id, i)` is an allocated block of an in-use page;
            // `bytes..size` lies inside it, and the caller owns it.
            unsafe { std::ptr::write_bytes((base + bytes) as *mut u8, 0, size - bytes) };
        }
        if rt.counting {
            rt.note_alloc(id, i, site);
        }
        rt.heap.renew(id, i);
        return base as u64;
    }
    // Check mode quarantines the token; a token that does not fit is freed.
    rt.free_uncounted(token as usize, site);
    crate::helpers::sspur_alloc_block(bytes as u64, 1, site)
}
