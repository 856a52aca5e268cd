//! The heap: size classes, 64 KB pages carved from aligned reservations, the
//! page map, bump and free-list allocation, large blocks and their cache.
//!
//! Invariant between collections: a small block's `alloc` bit is set when it
//! is handed out *or* sits on a free list, except blocks handed out from the
//! class's current bump page, which are recorded lazily (`flush_cursors`).
//! Each collection first flushes the cursors and moves the free lists back
//! into the bits, so from then on the bits are exact.
//!
//! Generations (sticky mark bits): between collections a block's `mark` bit
//! says it is *old* (it survived a collection); every block handed out has
//! it clear, so a freed block loses it. Only pages on `young_pages` can
//! hold young blocks: every page a block is handed out from (bump, a word
//! of a swept page's free blocks, large block) or freed into joins that
//! list, so a minor collection sweeps those pages and no other.

use std::ptr;

pub use crate::tier::TierStats;
use crate::tier::{Active, Census, Tier};

/// Bytes per page; pages are aligned to this.
pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
pub const PAGE_SHIFT: usize = 16;
/// Largest small block; bigger requests get their own pages.
pub const MAX_SMALL: usize = 32 << 10;
/// Number of small size classes (16..=128 by 16, then four per power of two).
pub const NUM_CLASSES: usize = 40;
/// Data bytes a freed large block may keep mapped for reuse.
pub const LARGE_CACHE_LIMIT: usize = 64 << 20;
/// Address space a large block reserves past its end (at least), so that
/// it can grow in place: never touched until the block grows into it, it
/// costs no memory.
const LARGE_HEADROOM: usize = 8 << 20;
/// Most bytes of empty pages kept resident for reuse (`retained_pages`).
const RETAIN_LIMIT: usize = 16 << 20;
/// Pages reserved from the OS at a time.
const RESERVATION_PAGES: usize = 64;
/// Bitmap words per page: the smallest class has 4096 blocks per page.
pub const BITMAP_WORDS: usize = PAGE_SIZE / 16 / 64;
const TOP_BITS: usize = 47 - PAGE_SHIFT - LEAF_BITS;
const LEAF_BITS: usize = 16;
/// `Page::class` of a large block.
pub const LARGE: u8 = u8::MAX;

/// Block kinds: data blocks are never scanned, pointer blocks are zeroed and scanned.
pub const DATA: usize = 0;
pub const POINTER: usize = 1;

/// The block size of each small class.
pub const CLASS_SIZES: [usize; NUM_CLASSES] = class_sizes();

const fn class_sizes() -> [usize; NUM_CLASSES] {
    let mut out = [0; NUM_CLASSES];
    let mut c = 0;
    while c < 8 {
        out[c] = 16 * (c + 1);
        c += 1;
    }
    while c < NUM_CLASSES {
        let group = (c - 8) / 4; // 0 for 129..=256
        let pow = 128usize << group;
        out[c] = pow + (pow / 4) * ((c - 8) % 4 + 1);
        c += 1;
    }
    out
}

/// Each small class's `Page::recip`: ceil(2^32 / its block size).
const CLASS_RECIPS: [u64; NUM_CLASSES] = {
    let mut out = [0; NUM_CLASSES];
    let mut c = 0;
    while c < NUM_CLASSES {
        out[c] = (1u64 << 32).div_ceil(CLASS_SIZES[c] as u64);
        c += 1;
    }
    out
};

/// The index of the block at `addr` in its small page of class `class`
/// (pages are aligned to `PAGE_SIZE`): what `Page::index_of` gives, without
/// reading the page.
#[inline(always)]
pub fn index_in_class(addr: usize, class: usize) -> usize {
    (((addr & (PAGE_SIZE - 1)) as u64 * CLASS_RECIPS[class % NUM_CLASSES]) >> 32) as usize
}

/// The smallest class whose blocks hold `size` bytes (`size <= MAX_SMALL`).
#[inline(always)]
pub const fn class_of(size: usize) -> usize {
    if size <= 128 {
        if size == 0 {
            0
        } else {
            (size - 1) >> 4
        }
    } else {
        let s = size - 1;
        let b = (usize::BITS - 1 - s.leading_zeros()) as usize; // 2^b <= s < 2^(b+1)
        let idx = (s - (1 << b)) >> (b - 2);
        8 + (b - 7) * 4 + idx
    }
}

/// The size of the block a request of `size` bytes gets: its class's size,
/// or whole 64 KB pages for a large block (None if that overflows).
pub const fn block_size_for(size: usize) -> Option<usize> {
    if size <= MAX_SMALL {
        Some(CLASS_SIZES[class_of(size)])
    } else {
        match size.checked_add(PAGE_SIZE - 1) {
            Some(s) => Some(s & !(PAGE_SIZE - 1)),
            None => None,
        }
    }
}

/// Per-page metadata. Lives in ordinary Rust memory: it is never reachable
/// from the program, only from the page map.
///
/// Laid out in order, aligned to a cache line: the fields every lookup
/// and free reads (base to `in_partial`) share the first line, so finding
/// a block costs that line and the bitmap word it tests (the default
/// layout put the byte-sized fields at the end, 2.6 KB away).
#[repr(C, align(64))]
pub struct Page {
    pub base: usize,
    /// Bytes of each block (a large block's whole mapping).
    pub block_size: usize,
    /// ceil(2^32 / block_size): block index = offset * recip >> 32, exact below 64 KB.
    pub recip: u64,
    pub nblocks: usize,
    pub class: u8,
    pub kind: u8,
    /// Whether the descriptor describes mapped memory (false: on the free id list).
    pub in_use: bool,
    /// A freed large block parked in the cache.
    pub cached: bool,
    /// On `Heap::young_pages`: may hold blocks handed out since the last
    /// collection.
    pub young: bool,
    /// On its class's `Heap::partial` list, not yet carved.
    pub in_partial: bool,
    /// A large data block that a minor collection kept young although it
    /// was live (`gc`'s aging of large data blocks): the next one that finds
    /// it live promotes it.
    pub aged: bool,
    /// A large data block a minor collection's roots reached, pending its
    /// decision to promote or keep it young (only during that collection).
    pub age_pending: bool,
    pub alloc: [u64; BITMAP_WORDS],
    pub mark: [u64; BITMAP_WORDS],
    /// Check mode: freed, filled with 0xA5, never reused.
    pub quarantine: [u64; BITMAP_WORDS],
    /// Blocks in the collector's remembered set (see `gc::remember`).
    pub remembered: [u64; BITMAP_WORDS],
    /// The incremental major collection's marks (`gc`'s module comment):
    /// cleared when a cycle starts, set on old blocks as the cycle reaches
    /// them and on blocks its minor collections promote. Meaningless
    /// outside a cycle.
    pub mmark: [u64; BITMAP_WORDS],
    /// Blocks promoted by the steps of a minor collection that reads a
    /// deep new stack in steps (`gc::step_stack`), until it completes.
    pub stepped: [u64; BITMAP_WORDS],
    /// Allocation site per block, when sites are tracked.
    pub sites: Vec<u32>,
    /// Birth stamp per block (the lifetime histogram), valid where the
    /// `sampled` bit is set. Both empty unless the tier keeps births; the
    /// bitmap is what a free tests, so the stamps stay out of the cache.
    pub births: Vec<u64>,
    pub sampled: Vec<u64>,
    /// A large block's mapping (at least `block_size`: the block grows in
    /// place up to it); 0 for a small page.
    pub reserved: usize,
    /// The allocation site a large block was last handed out for (0: none
    /// known), so that the cache gives it back to the same site.
    pub large_site: u32,
}

impl Page {
    #[inline(always)]
    pub fn index_of(&self, addr: usize) -> usize {
        if self.class == LARGE {
            0
        } else {
            (((addr - self.base) as u64 * self.recip) >> 32) as usize
        }
    }
    // Block indices are below `nblocks <= 64 * BITMAP_WORDS`, so the word
    // index is taken modulo BITMAP_WORDS (a mask) only to spare the hot
    // paths (frees, marking) a bounds check.
    #[inline(always)]
    pub fn bit(bits: &[u64; BITMAP_WORDS], i: usize) -> bool {
        bits[i / 64 % BITMAP_WORDS] >> (i % 64) & 1 != 0
    }
    #[inline(always)]
    pub fn set(bits: &mut [u64; BITMAP_WORDS], i: usize) {
        bits[i / 64 % BITMAP_WORDS] |= 1 << (i % 64);
    }
    #[inline(always)]
    pub fn clear(bits: &mut [u64; BITMAP_WORDS], i: usize) {
        bits[i / 64 % BITMAP_WORDS] &= !(1 << (i % 64));
    }
    /// Sets bits `first..first + count` (below `64 * BITMAP_WORDS`) a
    /// word at a time.
    #[inline]
    pub fn set_range(bits: &mut [u64; BITMAP_WORDS], first: usize, count: usize) {
        let (mut i, end) = (first, first + count);
        while i < end {
            let off = i % 64;
            let n = (end - i).min(64 - off);
            let mask = if n == 64 {
                !0
            } else {
                ((1u64 << n) - 1) << off
            };
            bits[i / 64 % BITMAP_WORDS] |= mask;
            i += n;
        }
    }
    pub fn block_addr(&self, i: usize) -> usize {
        self.base + i * self.block_size
    }
    /// Bytes of address space the page (or large block) covers.
    pub fn span(&self) -> usize {
        if self.class == LARGE {
            self.block_size
        } else {
            PAGE_SIZE
        }
    }
}

/// The allocation state of one (kind, class) pair. `repr(C)`: generated
/// code reads and writes `free`, `bump` and `end` at the offsets below (the
/// inline allocation fast path, see `SSPUR_ALLOC_CLASSES`).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct ClassState {
    pub bump: usize,
    pub end: usize,
    /// Start of the bump range not yet recorded in the page's alloc bits.
    pub bump_start: usize,
    /// Page id + 1 of the bump page, 0 when none.
    pub page: u32,
    /// Head of the LIFO free list; the link is the block's first word.
    pub free: usize,
    /// Blocks of this class freed, for tiers that count per class (kept
    /// here because a free already holds this state in a register).
    pub frees: u64,
    /// Page id + 1 of the swept page whose free blocks the class takes
    /// next (0 when none), and the alloc-bitmap word to look from.
    pub carve: u32,
    pub carve_from: u32,
    /// Free blocks of one alloc-bitmap word of the carve page not yet
    /// handed out (bit j: the block at `bits_base + j * size`). Their
    /// alloc bits are set, as a free list's are; their contents are what
    /// the sweep left, so whoever takes one writes every word of it
    /// (`Heap::take_bit` zeroes a pointer block, compiled code writes the
    /// constructor's fields and zeroes the rest).
    pub bits: u64,
    pub bits_base: usize,
}

/// The layout generated code's inline fast path relies on.
pub const CLASS_STATE_SIZE: usize = std::mem::size_of::<ClassState>();
pub const CLASS_STATE_FREE: usize = std::mem::offset_of!(ClassState, free);
pub const CLASS_STATE_BUMP: usize = std::mem::offset_of!(ClassState, bump);
pub const CLASS_STATE_END: usize = std::mem::offset_of!(ClassState, end);
pub const CLASS_STATE_BITS: usize = std::mem::offset_of!(ClassState, bits);
pub const CLASS_STATE_BITS_BASE: usize = std::mem::offset_of!(ClassState, bits_base);

impl ClassState {
    const EMPTY: ClassState = ClassState {
        bump: 0,
        end: 0,
        bump_start: 0,
        page: 0,
        free: 0,
        frees: 0,
        carve: 0,
        carve_from: 0,
        bits: 0,
        bits_base: 0,
    };
}

/// The descriptor fields of the small page a run of frees is on
/// ([`Heap::free_owned_cached`]). Small pages are aligned to `PAGE_SIZE`,
/// so `key` (the address over `PAGE_SIZE`) names the page.
#[derive(Clone, Copy)]
pub struct FreeCache {
    key: usize,
    id: usize,
    /// The class state index: kind * NUM_CLASSES + class.
    k: usize,
    recip: u64,
    nblocks: usize,
    size: usize,
    pointer: bool,
    /// Whether the page may hold an old (marked) block.
    old: bool,
}

impl FreeCache {
    /// No page: the first free looks its page up.
    pub const EMPTY: FreeCache = FreeCache {
        key: usize::MAX,
        id: 0,
        k: 0,
        recip: 0,
        nblocks: 0,
        size: 0,
        pointer: false,
        old: false,
    };

    /// The fields of small page `id`, which covers `addr`.
    #[inline(always)]
    fn of(page: &Page, addr: usize, id: usize, old: bool) -> FreeCache {
        FreeCache {
            key: addr >> PAGE_SHIFT,
            id,
            k: page.kind as usize * NUM_CLASSES + page.class as usize,
            recip: page.recip,
            nblocks: page.nblocks,
            size: page.block_size,
            pointer: page.kind as usize == POINTER,
            old,
        }
    }
}

/// The start of the 64 KB-aligned span holding `addr` (a small page's base).
#[inline(always)]
fn page_base(addr: usize) -> usize {
    addr & !(PAGE_SIZE - 1)
}

/// The whole heap: one instance of the active tier, owned by the runtime
/// state (the benchmark makes its own, of every tier).
pub struct Heap<T: Tier = Active> {
    pub classes: [ClassState; 2 * NUM_CLASSES],
    /// Pages with free blocks found by the last sweep, per (kind, class).
    pub partial: [Vec<u32>; 2 * NUM_CLASSES],
    pub pages: Vec<Page>,
    free_ids: Vec<u32>,
    /// Released 64 KB pages (madvised away) ready to be committed again.
    free_pages: Vec<usize>,
    /// Empty 64 KB pages kept resident for reuse, up to `RETAIN_LIMIT`
    /// and the young budget: a nursery whose pages all die at each minor
    /// collection would otherwise give them back and fault them in again
    /// (the kernel zeroing each 4 KB) every cycle. Their old contents stay:
    /// a pointer page is zeroed when handed out again.
    retained_pages: Vec<usize>,
    res_cur: usize,
    res_end: usize,
    reservations: Vec<(usize, usize)>,
    /// Page ids of cached large data blocks, and their bytes.
    pub large_cache: Vec<u32>,
    pub cache_bytes: usize,
    /// The site of the large allocation being made (the runtime sets it
    /// before a large request; 0: none).
    pub large_site: u32,
    /// Page map: top level indexed by addr >> 32, leaves of page id + 1.
    top: [*mut u32; 1 << TOP_BITS],
    pub lo: usize,
    pub hi: usize,
    /// Bytes of committed pages and large blocks (cached ones included).
    pub committed: usize,
    pub peak: usize,
    pub tier: T,
    pub track_sites: bool,
    /// Whether the collector may run (the stack base is known, not inside a collection).
    pub gc_ready: bool,
    pub want_gc: bool,
    /// The heap limit asked for the collection: it should be a major one.
    pub want_major: bool,
    /// Pages that may hold young blocks (`Page::young`), by id.
    pub young_pages: Vec<u32>,
    /// Bytes handed out from new pages, free blocks of swept pages and new
    /// large blocks since the last collection (reuse of blocks freed at
    /// last use, from a free list or the large cache, is not counted: it
    /// does not grow the heap).
    pub young_bytes: usize,
    /// Pacing: a minor collection once `young_bytes` would pass this.
    pub young_budget: usize,
    /// Pacing: the collector is asked in once `young_bytes` would pass
    /// this: the young budget, or sooner while an incremental major
    /// collection marks (its next slice).
    pub trigger: usize,
    /// Pacing: a minor collection once the stack pointer is below this
    /// (0: never), and whether that is why the collector was asked in.
    pub stack_trigger: usize,
    pub stack_due: bool,
    /// Bytes of old (marked) blocks: set by each collection, lowered when
    /// an old block is freed at its last use.
    pub old_bytes: usize,
    /// The heap limit: committed bytes never pass it (`SSPUR_MAX_HEAP_MB`).
    pub max_heap: usize,
}

/// Which order `alloc_small` tries its two fast sources in; the benchmark
/// `alloc_order` measures both and the faster one is the default.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Order {
    BumpFirst,
    FreeListFirst,
}

pub const DEFAULT_ORDER: Order = Order::FreeListFirst;

impl<T: Tier> Heap<T> {
    pub const fn new() -> Heap<T> {
        Heap {
            classes: [ClassState::EMPTY; 2 * NUM_CLASSES],
            partial: [const { Vec::new() }; 2 * NUM_CLASSES],
            pages: Vec::new(),
            free_ids: Vec::new(),
            free_pages: Vec::new(),
            retained_pages: Vec::new(),
            res_cur: 0,
            res_end: 0,
            reservations: Vec::new(),
            large_cache: Vec::new(),
            large_site: 0,
            cache_bytes: 0,
            top: [ptr::null_mut(); 1 << TOP_BITS],
            lo: usize::MAX,
            hi: 0,
            committed: 0,
            peak: 0,
            tier: T::ZERO,
            track_sites: false,
            gc_ready: false,
            want_gc: false,
            want_major: false,
            young_pages: Vec::new(),
            young_bytes: 0,
            young_budget: usize::MAX,
            trigger: usize::MAX,
            stack_trigger: 0,
            stack_due: false,
            old_bytes: 0,
            max_heap: usize::MAX,
        }
    }

    // ---- page map ----

    /// Page id + 1 of the page covering `addr`, 0 outside the heap. O(1).
    #[inline(always)]
    pub fn map_get(&self, addr: usize) -> u32 {
        let key = addr >> PAGE_SHIFT;
        let t = key >> LEAF_BITS;
        if t >= 1 << TOP_BITS {
            return 0;
        }
        let leaf = self.top[t];
        if leaf.is_null() {
            return 0;
        }
        // SAFETY: a non-null leaf is a live `os_map(4 << LEAF_BITS)` mapping
        // (65536 u32 entries, page-aligned) made by `map_set` and unmapped
        // only by `release_all`, which nulls the slot; the index is masked
        // below 65536, so the read is in bounds and aligned.
        unsafe { *leaf.add(key & ((1 << LEAF_BITS) - 1)) }
    }

    fn map_set(&mut self, addr: usize, val: u32) -> bool {
        let key = addr >> PAGE_SHIFT;
        let t = key >> LEAF_BITS;
        if t >= 1 << TOP_BITS {
            return false;
        }
        if self.top[t].is_null() {
            match os_map(4 << LEAF_BITS) {
                Some(p) => self.top[t] = p as *mut u32,
                None => return false,
            }
        }
        // SAFETY: `top[t]` is non-null here, so it is a live leaf mapping of
        // 65536 u32 entries (mapped just above or earlier, see `map_get`);
        // the index is masked below 65536. The leaf is reached only through
        // `&mut self`, so no other reference aliases the entry.
        unsafe { *self.top[t].add(key & ((1 << LEAF_BITS) - 1)) = val };
        true
    }

    /// The block holding `addr`: (page id, block index), allocated blocks only
    /// (blocks on a free list count as allocated between collections).
    #[inline(always)]
    pub fn lookup(&self, addr: usize) -> Option<(usize, usize)> {
        let id = self.map_get(addr);
        if id == 0 {
            return None;
        }
        let id = id as usize - 1;
        self.lookup_in(id, addr).map(|i| (id, i))
    }

    /// The allocated block holding `addr` in page `id` (which the page map
    /// gives for `addr`): its index.
    #[inline(always)]
    pub fn lookup_in(&self, id: usize, addr: usize) -> Option<usize> {
        let i = self.pages[id].index_of(addr);
        self.allocated(id, i).then_some(i)
    }

    /// Whether block `i` (an index `index_of` gave) of page `id` is allocated.
    #[inline(always)]
    pub fn allocated(&self, id: usize, i: usize) -> bool {
        let page = &self.pages[id];
        if i >= page.nblocks || page.cached {
            return false;
        }
        if Page::bit(&page.alloc, i) {
            return true;
        }
        if page.class != LARGE {
            let cs = &self.classes[page.kind as usize * NUM_CLASSES + page.class as usize];
            let block = page.block_addr(i);
            return cs.page as usize == id + 1 && block >= cs.bump_start && block < cs.bump;
        }
        false
    }

    /// Base and usable size of the block holding `addr`.
    pub fn block_of(&self, addr: usize) -> Option<(usize, usize)> {
        self.lookup(addr).map(|(id, i)| {
            let p = &self.pages[id];
            (p.block_addr(i), p.block_size)
        })
    }

    // ---- allocation ----

    /// Allocates `size` bytes of `kind`. Null when the OS refuses memory, or
    /// when pacing wants a collection first (then `want_gc` is set and the
    /// caller collects and retries).
    #[inline(always)]
    pub fn alloc(&mut self, size: usize, kind: usize, order: Order) -> *mut u8 {
        let p = if size <= MAX_SMALL {
            self.alloc_small(kind, class_of(size), order)
        } else {
            self.alloc_large(size, kind)
        };
        if T::BIRTHS && !p.is_null() && self.tier.sample() {
            self.stamp_birth(p as usize);
        }
        p
    }

    /// Records a sampled allocation's stamp in its page's side array.
    #[cold]
    #[inline(never)]
    fn stamp_birth(&mut self, p: usize) {
        let stamp = self.tier.birth();
        let id = self.map_get(p);
        if id == 0 {
            return;
        }
        let page = &mut self.pages[id as usize - 1];
        let i = page.index_of(p);
        if let (Some(b), Some(w)) = (page.births.get_mut(i), page.sampled.get_mut(i / 64)) {
            *b = stamp;
            *w |= 1 << (i % 64);
        }
    }

    /// Frees the allocated block holding `addr`, if any (the bare heap's
    /// free, without the runtime's modes and counters).
    #[inline(always)]
    pub fn free(&mut self, addr: usize) {
        if let Some((id, i)) = self.lookup(addr) {
            self.free_block(id, i);
        }
    }

    /// The block holding `addr`, which the caller knows is allocated (a
    /// compiled drop or reuse of a block it owns): (page id, block index),
    /// without testing the alloc bit or the bump range. None outside the
    /// heap (static data) and for large blocks.
    #[inline(always)]
    pub fn lookup_owned(&self, addr: usize) -> Option<(usize, usize)> {
        let id = self.map_get(addr) as usize;
        if id == 0 {
            return None;
        }
        let page = &self.pages[id - 1];
        let i = page.index_of(addr);
        (page.class != LARGE && i < page.nblocks).then_some((id - 1, i))
    }

    /// Frees the block holding `addr`, which the caller owns and knows is
    /// allocated (a compiled drop): [`Heap::free`] without the alloc-bit
    /// test for a small block, and with the page's descriptor read once.
    /// Static data is ignored.
    ///
    /// The common case, an unmarked data block or small pointer block on a
    /// page already young, is a leaf that calls nothing, so it saves no
    /// registers: every drop of a compiled program comes through here, and
    /// a free must cost no more than the collection of the block would.
    /// Anything else goes to [`Heap::free_owned_slow`] as a tail call.
    #[inline(always)]
    pub fn free_owned(&mut self, addr: usize) {
        let id = self.map_get(addr) as usize;
        if id == 0 {
            return;
        }
        // SAFETY: a page-map entry is 1 + the index of a descriptor, and
        // `pages` never shrinks.
        let page = unsafe { self.pages.get_unchecked(id - 1) };
        if page.class == LARGE || !page.young {
            return self.free_owned_slow(addr, id - 1);
        }
        let i = (((addr - page.base) as u64 * page.recip) >> 32) as usize;
        if i >= page.nblocks {
            return;
        }
        let pointer = page.kind as usize == POINTER;
        let marked = page.mark[i / 64 % BITMAP_WORDS] & (1u64 << (i % 64)) != 0;
        if marked || T::BIRTHS || (pointer && page.block_size > 64) {
            return self.free_owned_slow(addr, id - 1);
        }
        // Unmarked: no mark to clear; the page is young already; a pointer
        // block is zeroed inline (at most 64 bytes).
        let c = FreeCache::of(page, addr, id - 1, false);
        self.free_in_page(&c, i, page_base(addr) + i * c.size);
    }

    /// [`Heap::free_owned`] of a block on small or large page `id` in
    /// every case: a large block, a page not yet young, a marked (old)
    /// block, a pointer block that needs `memset` to clear.
    #[cold]
    #[inline(never)]
    fn free_owned_slow(&mut self, addr: usize, id: usize) {
        let page = &self.pages[id];
        if page.class == LARGE {
            return self.free(addr);
        }
        let c = FreeCache::of(page, addr, id, true);
        let i = (((addr - page.base) as u64 * c.recip) >> 32) as usize;
        if i < c.nblocks {
            self.note_young(id);
            self.free_in_page(&c, i, page_base(addr) + i * c.size);
        }
    }

    /// Frees block `i` at `base` of the small page `c` describes: its mark
    /// cleared (when the page may hold one), a pointer block zeroed, then
    /// pushed on its class's free list. The caller put the page on the
    /// young list.
    #[inline(always)]
    fn free_in_page(&mut self, c: &FreeCache, i: usize, base: usize) {
        // SAFETY: `c.id` came from the page map, so it is below
        // `pages.len()`, which never shrinks.
        let page = unsafe { self.pages.get_unchecked_mut(c.id) };
        if c.old {
            let (w, bit) = (i / 64 % BITMAP_WORDS, 1u64 << (i % 64));
            if page.mark[w] & bit != 0 {
                page.mark[w] &= !bit;
                self.old_bytes = self.old_bytes.saturating_sub(c.size);
            }
        }
        if T::BIRTHS {
            note_death(page, i, &mut self.tier);
        }
        if c.pointer {
            // SAFETY: the callers found block `i` below `nblocks` of the
            // small page in use at `base`'s 64 KB: `size` bytes from `base`
            // lie in its mapping, 16-byte aligned. The caller owns the block
            // and gives it up; no Rust reference into heap memory outlives
            // a call.
            unsafe { zero_small(base, c.size) };
        }
        // SAFETY: `c.k` is a page's kind * NUM_CLASSES + class, both in range.
        let cs = unsafe { self.classes.get_unchecked_mut(c.k) };
        // SAFETY: as above; the block's first word holds the link.
        unsafe { *(base as *mut usize) = cs.free };
        cs.free = base;
        self.tier.free(&mut cs.frees);
    }

    /// [`Heap::free_owned`] for a run of frees that mostly stays on one
    /// page (a deep free): `cache` keeps the last small page's descriptor
    /// fields, so a block on the same page costs no page-map lookup, and
    /// the page is put on the young list once (nothing in a free takes it
    /// off). The cache is valid only within one run: the caller starts it
    /// at [`FreeCache::EMPTY`] and drops it before any allocation or
    /// collection.
    #[inline(always)]
    pub fn free_owned_cached(&mut self, addr: usize, cache: &mut FreeCache) {
        let Some((c, i)) = self.cached(addr, cache, false) else {
            return;
        };
        if i < c.nblocks {
            self.free_in_page(&c, i, page_base(addr) + i * c.size);
        }
    }

    /// [`Heap::free_owned_cached`] for a cell block `addr` (a block's
    /// base, of a pointer page: a tree's deep free): with the page's
    /// fields in `cache`, a free is an index, the zeroing and the
    /// free-list push (and a mark-bit test on a page with old blocks).
    #[inline(always)]
    pub fn free_cell_cached(&mut self, addr: usize, cache: &mut FreeCache) {
        let Some((c, i)) = self.cached(addr, cache, true) else {
            return;
        };
        debug_assert!(i < self.pages[c.id].nblocks && self.pages[c.id].block_addr(i) == addr);
        self.free_in_page(&c, i, addr);
    }

    /// The page fields for `addr` (`cache`'s, filled first when `addr` is
    /// on another page) and its block index; None when `fill_cache` has
    /// nothing to free.
    #[inline(always)]
    fn cached(
        &mut self,
        addr: usize,
        cache: &mut FreeCache,
        cells: bool,
    ) -> Option<(FreeCache, usize)> {
        if addr >> PAGE_SHIFT != cache.key {
            *cache = self.fill_cache(addr, cells)?;
        }
        let c = *cache;
        Some((
            c,
            (((addr & (PAGE_SIZE - 1)) as u64 * c.recip) >> 32) as usize,
        ))
    }

    /// The cache for the page of `addr`, which joins the young list; None
    /// (the block freed another way, or nothing to free: static data) when
    /// that is no small page, or with `cells` no small pointer page.
    #[inline(never)]
    fn fill_cache(&mut self, addr: usize, cells: bool) -> Option<FreeCache> {
        let id = self.map_get(addr) as usize;
        if id == 0 {
            return None;
        }
        let page = &self.pages[id - 1];
        if page.class == LARGE || (cells && page.kind as usize != POINTER) {
            self.free(addr);
            return None;
        }
        // No mark bit is set during a run of frees (only collections set
        // them), so a page without one has none to clear in the run.
        let old = page.mark.iter().any(|&w| w != 0);
        let cache = FreeCache::of(page, addr, id - 1, old);
        self.note_young(id - 1);
        Some(cache)
    }

    #[inline(always)]
    fn alloc_small(&mut self, kind: usize, class: usize, order: Order) -> *mut u8 {
        let k = kind * NUM_CLASSES + class;
        let size = CLASS_SIZES[class];
        let cs = &mut self.classes[k];
        if order == Order::FreeListFirst {
            let f = cs.free;
            if f != 0 {
                return self.pop_free(k, kind);
            }
        }
        let p = cs.bump;
        if p + size <= cs.end {
            cs.bump = p + size;
            return p as *mut u8;
        }
        if order == Order::BumpFirst && cs.free != 0 {
            return self.pop_free(k, kind);
        }
        if cs.bits != 0 {
            return self.take_bit(k, kind);
        }
        self.alloc_slow(kind, class)
    }

    /// Hands out the lowest block of the class's `bits` (non-zero): a
    /// pointer block zeroed, since it holds what it held when it died.
    #[inline(always)]
    fn take_bit(&mut self, k: usize, kind: usize) -> *mut u8 {
        let size = CLASS_SIZES[k % NUM_CLASSES];
        let cs = &mut self.classes[k];
        let b = cs.bits;
        cs.bits = b & b.wrapping_sub(1);
        let p = cs.bits_base + b.trailing_zeros() as usize * size;
        if kind == POINTER {
            // SAFETY: `bits` holds free blocks of the carve page, an in-use
            // page (checked when it became the carve page; a collection
            // empties `bits` before its sweep may release a page), so the
            // `size` bytes at `p` lie in its mapping, 16-byte aligned. The
            // block is free: nothing references it.
            unsafe { zero_small(p, size) };
        }
        p as *mut u8
    }

    #[inline(always)]
    fn pop_free(&mut self, k: usize, kind: usize) -> *mut u8 {
        let cs = &mut self.classes[k];
        let f = cs.free;
        // SAFETY: callers pop only when `cs.free != 0`; every free-list entry
        // is the base of a block of an in-use page (pushed by `free_block`), and pages are released only by a sweep, after the
        // collector moved every free list back into the bits, so `f` is
        // mapped read/write. Blocks are 16-byte aligned and at least 16 bytes,
        // so its first word (the link) is aligned and in bounds. A free block
        // is referenced by nothing but this list, so the write aliases nothing.
        unsafe {
            cs.free = *(f as *const usize);
            if kind == POINTER {
                *(f as *mut usize) = 0;
            }
        }
        f as *mut u8
    }

    #[inline(never)]
    fn alloc_slow(&mut self, kind: usize, class: usize) -> *mut u8 {
        let k = kind * NUM_CLASSES + class;
        self.flush_cursor(k);
        if self.gc_ready && self.young_bytes >= self.trigger {
            self.want_gc = true;
            return ptr::null_mut();
        }
        if self.gc_ready && self.stack_trigger != 0 {
            let probe = 0usize;
            if (std::hint::black_box(&probe) as *const usize as usize) < self.stack_trigger {
                self.want_gc = true;
                self.stack_due = true;
                return ptr::null_mut();
            }
        }
        // A page the last sweep left with free blocks: its free blocks are
        // handed out a bitmap word at a time (`bits`), in address order,
        // without touching them until they are taken.
        loop {
            if self.classes[k].free != 0 {
                self.tier.slow(class);
                return self.pop_free(k, kind);
            }
            if self.classes[k].bits != 0 {
                self.tier.slow(class);
                return self.take_bit(k, kind);
            }
            let carve = self.classes[k].carve;
            if carve != 0 {
                if self.load_bits(carve as usize - 1, k) {
                    continue;
                }
                self.classes[k].carve = 0;
            }
            let Some(id) = self.partial[k].pop() else {
                break;
            };
            let page = &mut self.pages[id as usize];
            // A released page's id may have been reused for another class.
            if page.in_use
                && page.in_partial
                && page.class != LARGE
                && page.kind as usize * NUM_CLASSES + page.class as usize == k
            {
                page.in_partial = false;
                self.classes[k].carve = id + 1;
                self.classes[k].carve_from = 0;
            }
        }
        if self.over_limit(PAGE_SIZE) || self.wants_gc(PAGE_SIZE) {
            return ptr::null_mut();
        }
        let Some(base) = self.take_page(kind) else {
            return ptr::null_mut();
        };
        let size = CLASS_SIZES[class];
        let nblocks = PAGE_SIZE / size;
        let Some(id) = self.new_page(base, size, nblocks, class as u8, kind as u8, 1) else {
            self.free_pages.push(base);
            return ptr::null_mut();
        };
        let cs = &mut self.classes[k];
        cs.page = id as u32 + 1;
        cs.bump = base + size;
        cs.bump_start = base;
        cs.end = base + nblocks * size;
        self.tier.slow(class);
        base as *mut u8
    }

    /// Makes the next alloc-bitmap word of swept page `id` (from the
    /// class's `carve_from`) with free blocks the class's `bits`, and
    /// records those blocks allocated (as a free list's are between
    /// collections); false when the page has no more. The blocks are not
    /// touched: a page whose survivors are scattered (any page a sweep
    /// left partly used) costs a few word operations per 64 blocks here,
    /// and each block is first written by whoever takes it, near its use,
    /// rather than all of them linked or zeroed in one go, missing the
    /// cache on every block.
    fn load_bits(&mut self, id: usize, k: usize) -> bool {
        let page = &mut self.pages[id];
        let (n, size, base) = (page.nblocks, page.block_size, page.base);
        let words = n.div_ceil(64);
        for w in self.classes[k].carve_from as usize..words {
            let valid = if (w + 1) * 64 <= n {
                !0u64
            } else {
                (1u64 << (n % 64)) - 1
            };
            let free = !page.alloc[w % BITMAP_WORDS] & valid;
            if free != 0 {
                page.alloc[w % BITMAP_WORDS] |= free;
                let cs = &mut self.classes[k];
                cs.carve_from = w as u32 + 1;
                cs.bits = free;
                cs.bits_base = base + w * 64 * size;
                self.young_bytes += free.count_ones() as usize * size;
                self.note_young(id);
                return true;
            }
        }
        self.classes[k].carve_from = words as u32;
        false
    }

    /// Gives the blocks left in class `k`'s `bits` back to their page's
    /// free bits (a collection makes the bits exact before it marks).
    pub fn flush_bits(&mut self, k: usize) {
        let cs = &mut self.classes[k];
        let (bits, base) = (cs.bits, cs.bits_base);
        cs.bits = 0;
        if bits == 0 {
            return;
        }
        let id = self.map_get(base) as usize - 1;
        let page = &mut self.pages[id];
        let w = page.index_of(base) / 64;
        page.alloc[w % BITMAP_WORDS] &= !bits;
    }

    /// Puts page `id` on the young list (it may now hold young blocks).
    #[inline(always)]
    pub fn note_young(&mut self, id: usize) {
        let page = &mut self.pages[id];
        if !page.young {
            page.young = true;
            self.young_pages.push(id as u32);
        }
    }

    /// Records the class's pending bump range in its page's alloc bits and
    /// drops the cursor (the rest of the page is then free by its bits).
    pub fn flush_cursor(&mut self, k: usize) {
        let (id, start, bump) = {
            let cs = &self.classes[k];
            (cs.page, cs.bump_start, cs.bump)
        };
        if id != 0 && bump > start {
            let page = &mut self.pages[id as usize - 1];
            let first = page.index_of(start);
            let last = page.index_of(bump - 1);
            Page::set_range(&mut page.alloc, first, last + 1 - first);
        }
        let cs = &mut self.classes[k];
        cs.page = 0;
        cs.bump = 0;
        cs.end = 0;
        cs.bump_start = 0;
    }

    fn alloc_large(&mut self, size: usize, kind: usize) -> *mut u8 {
        let Some(bytes) = size
            .checked_add(PAGE_SIZE - 1)
            .map(|s| s & !(PAGE_SIZE - 1))
        else {
            return ptr::null_mut();
        };
        if kind == DATA {
            if let Some(pos) = self.cache_fit(bytes) {
                // Reuse of a block freed at its last use (the sweep never
                // caches): like free-list reuse, it does not grow the heap
                // and does not count against the young budget, except for
                // the pages it grows by.
                let id = self.large_cache.swap_remove(pos) as usize;
                self.cache_bytes -= self.pages[id].block_size;
                if self.pages[id].block_size < bytes && !self.extend_large(id, bytes) {
                    self.cache_bytes += self.pages[id].block_size;
                    self.large_cache.push(id as u32);
                } else {
                    let page = &mut self.pages[id];
                    page.large_site = self.large_site;
                    page.cached = false;
                    page.aged = false;
                    Page::set(&mut page.alloc, 0);
                    let base = page.base;
                    self.tier.slow(NUM_CLASSES);
                    self.note_young(id);
                    return base as *mut u8;
                }
            }
        }
        self.release_cache();
        if self.over_limit(bytes) || self.wants_gc(bytes) {
            return ptr::null_mut();
        }
        // The mapping reserves room to grow in place (`grow_large`).
        let reserve = bytes
            .checked_mul(4)
            .map(|r| r.max(bytes + LARGE_HEADROOM))
            .and_then(|r| os_map_aligned(r).map(|b| (b, r)))
            .or_else(|| os_map_aligned(bytes).map(|b| (b, bytes)));
        let Some((base, reserved)) = reserve else {
            return ptr::null_mut();
        };
        match self.new_page(base, bytes, 1, LARGE, kind as u8, bytes / PAGE_SIZE) {
            Some(id) => {
                self.pages[id].reserved = reserved;
                self.pages[id].large_site = self.large_site;
                Page::set(&mut self.pages[id].alloc, 0);
                self.tier.slow(NUM_CLASSES);
                base as *mut u8
            }
            None => {
                os_unmap(base, reserved);
                ptr::null_mut()
            }
        }
    }

    /// The cached block to serve a `bytes`-byte request: the one the same
    /// site had last when it fits or can grow to fit (a buffer that grows
    /// in place asks small and ends large: another site's block would end
    /// up as large, both resident), else the smallest one at least that
    /// large (its pages are already in memory), else the largest one whose
    /// mapping can grow to it.
    fn cache_fit(&self, bytes: usize) -> Option<usize> {
        let page = |pos: usize| &self.pages[self.large_cache[pos] as usize];
        if self.large_site != 0 {
            let same = (0..self.large_cache.len()).find(|&pos| {
                page(pos).large_site == self.large_site && page(pos).reserved >= bytes
            });
            if same.is_some() {
                return same;
            }
        }
        let size = |pos: usize| self.pages[self.large_cache[pos] as usize].block_size;
        let fits = (0..self.large_cache.len()).filter(|&pos| size(pos) >= bytes);
        fits.min_by_key(|&pos| size(pos)).or_else(|| {
            (0..self.large_cache.len())
                .filter(|&pos| self.pages[self.large_cache[pos] as usize].reserved >= bytes)
                .max_by_key(|&pos| size(pos))
        })
    }

    /// Grows the allocated large block holding `addr` in place to at least
    /// `size` bytes, within its mapping: returns its new usable size, or
    /// None (not a large block, no room in its mapping, or past the heap
    /// limit or the young budget: the caller then allocates, which
    /// collects when it must). A block never shrinks (the cache hands a
    /// larger block out whole), so the pages it grows into were never
    /// touched: zero.
    pub fn grow_large(&mut self, addr: usize, size: usize) -> Option<usize> {
        let (id, _) = self.lookup(addr)?;
        if self.pages[id].class != LARGE {
            return None;
        }
        let bytes = size.checked_add(PAGE_SIZE - 1)? & !(PAGE_SIZE - 1);
        if bytes > self.pages[id].block_size && !self.extend_large(id, bytes) {
            return None;
        }
        Some(self.pages[id].block_size)
    }

    /// Extends large block `id` to `bytes` (a multiple of PAGE_SIZE above
    /// its size) within its mapping: maps the new pages to it and counts
    /// them committed and young. False when its mapping is too small, the
    /// new pages would pass the heap limit or the young budget (the caller
    /// then takes the path that maps a new block, which traps or collects),
    /// or the page map cannot take the pages.
    fn extend_large(&mut self, id: usize, bytes: usize) -> bool {
        let (base, old) = (self.pages[id].base, self.pages[id].block_size);
        let extra = bytes - old;
        let past_limit = self.committed.saturating_add(extra) > self.max_heap;
        if bytes > self.pages[id].reserved
            || past_limit
            || (self.gc_ready && self.young_bytes + extra > self.trigger)
        {
            return false;
        }
        for p in (old..bytes).step_by(PAGE_SIZE) {
            if !self.map_set(base + p, id as u32 + 1) {
                for q in (old..p).step_by(PAGE_SIZE) {
                    self.map_set(base + q, 0);
                }
                return false;
            }
        }
        let page = &mut self.pages[id];
        page.block_size = bytes;
        page.recip = (1u64 << 32).div_ceil(bytes.min(1 << 32) as u64);
        if Page::bit(&page.mark, 0) {
            self.old_bytes += extra;
        }
        self.young_bytes += extra;
        self.hi = self.hi.max(base + bytes);
        self.committed += extra;
        self.peak = self.peak.max(self.committed);
        self.tier.committed(extra / PAGE_SIZE);
        true
    }

    /// The limit: whether growing by `need` bytes passes `max_heap`. Checked
    /// before any memory is reserved, so a request beyond it (a 20 TB
    /// string) fails at once and never touches a page. When a collection
    /// could make room, `want_gc` asks the caller for one first.
    fn over_limit(&mut self, need: usize) -> bool {
        if self.committed.saturating_add(need) <= self.max_heap {
            return false;
        }
        if self.gc_ready && need <= self.max_heap {
            self.want_gc = true;
            self.want_major = true;
        }
        true
    }

    /// Pacing: whether handing out `need` more bytes passes the young
    /// budget. Sets `want_gc` for the caller.
    fn wants_gc(&mut self, need: usize) -> bool {
        if self.gc_ready && self.young_bytes + need > self.trigger {
            self.want_gc = true;
            return true;
        }
        false
    }

    /// Unmaps every cached large block (a request the cache could not serve).
    pub fn release_cache(&mut self) {
        while let Some(id) = self.large_cache.pop() {
            self.release_large(id as usize);
        }
        self.cache_bytes = 0;
    }

    /// Makes a descriptor for fresh memory and maps its pages.
    fn new_page(
        &mut self,
        base: usize,
        block_size: usize,
        nblocks: usize,
        class: u8,
        kind: u8,
        npages: usize,
    ) -> Option<usize> {
        let page = Page {
            base,
            block_size,
            recip: (1u64 << 32).div_ceil(block_size.min(1 << 32) as u64),
            nblocks,
            class,
            kind,
            in_use: true,
            cached: false,
            alloc: [0; BITMAP_WORDS],
            mark: [0; BITMAP_WORDS],
            quarantine: [0; BITMAP_WORDS],
            remembered: [0; BITMAP_WORDS],
            mmark: [0; BITMAP_WORDS],
            stepped: [0; BITMAP_WORDS],
            young: false,
            in_partial: false,
            aged: false,
            age_pending: false,
            sites: if self.track_sites {
                vec![0; nblocks]
            } else {
                Vec::new()
            },
            births: if T::BIRTHS {
                vec![0; nblocks]
            } else {
                Vec::new()
            },
            sampled: if T::BIRTHS {
                vec![0; nblocks.div_ceil(64)]
            } else {
                Vec::new()
            },
            reserved: 0,
            large_site: 0,
        };
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.pages[id as usize] = page;
                id as usize
            }
            None => {
                self.pages.push(page);
                self.pages.len() - 1
            }
        };
        for p in 0..npages {
            if !self.map_set(base + p * PAGE_SIZE, id as u32 + 1) {
                for q in 0..p {
                    self.map_set(base + q * PAGE_SIZE, 0);
                }
                self.pages[id].in_use = false;
                self.free_ids.push(id as u32);
                return None;
            }
        }
        let span = npages * PAGE_SIZE;
        self.young_bytes += span;
        self.note_young(id);
        self.lo = self.lo.min(base);
        self.hi = self.hi.max(base + span);
        self.committed += span;
        self.peak = self.peak.max(self.committed);
        self.tier.committed(npages);
        Some(id)
    }

    /// A 64 KB page for a new small-block page of `kind`: a retained one
    /// (zeroed first for pointer blocks), a released one (zero on first
    /// touch), or the next of the current reservation.
    fn take_page(&mut self, kind: usize) -> Option<usize> {
        if let Some(p) = self.retained_pages.pop() {
            if kind == POINTER {
                // SAFETY: `p` is a retained page: a 64 KB page of one of our
                // reservations, still mapped read/write, described by no
                // page (its descriptor was unmapped), so nothing points
                // into it and no Rust reference covers it.
                unsafe { ptr::write_bytes(p as *mut u8, 0, PAGE_SIZE) };
            }
            return Some(p);
        }
        if let Some(p) = self.free_pages.pop() {
            return Some(p);
        }
        if self.res_cur == self.res_end {
            let len = RESERVATION_PAGES * PAGE_SIZE;
            let base = os_map_aligned(len)?;
            self.reservations.push((base, len));
            self.res_cur = base;
            self.res_end = base + len;
        }
        let p = self.res_cur;
        self.res_cur += PAGE_SIZE;
        Some(p)
    }

    fn unmap_descriptor(&mut self, id: usize) {
        let page = &mut self.pages[id];
        let (base, span) = (page.base, page.span());
        page.in_use = false;
        page.cached = false;
        page.in_partial = false;
        page.sites = Vec::new();
        page.births = Vec::new();
        page.sampled = Vec::new();
        for p in (0..span).step_by(PAGE_SIZE) {
            self.map_set(base + p, 0);
        }
        self.free_ids.push(id as u32);
        self.committed -= span;
        self.tier.released(span / PAGE_SIZE);
    }

    /// Returns an empty small page's memory to the OS, or keeps it resident
    /// for the next pages while fewer than the retain limit are kept; its
    /// address is reused either way.
    pub fn release_small(&mut self, id: usize) {
        let base = self.pages[id].base;
        self.unmap_descriptor(id);
        if (self.retained_pages.len() + 1) * PAGE_SIZE <= self.retain_limit() {
            self.retained_pages.push(base);
            return;
        }
        // SAFETY: `base` is a 64 KB page of one of our reservations (the
        // sweep releases only pages with no allocated block), so discarding
        // its contents touches no live value or Rust object; the range stays
        // mapped and reads as zeros when reused.
        unsafe { libc::madvise(base as *mut libc::c_void, PAGE_SIZE, libc::MADV_DONTNEED) };
        self.free_pages.push(base);
    }

    /// Bytes of empty pages kept resident: a nursery's worth at most.
    fn retain_limit(&self) -> usize {
        if self.gc_ready {
            self.young_budget.min(RETAIN_LIMIT)
        } else {
            0
        }
    }

    /// Gives the retained pages back to the OS beyond the retain limit
    /// (after a collection lowered the young budget).
    pub fn trim_retained(&mut self) {
        let keep = self.retain_limit() / PAGE_SIZE;
        while self.retained_pages.len() > keep {
            let Some(base) = self.retained_pages.pop() else {
                break;
            };
            // SAFETY: as in `release_small`: a page of our reservations that
            // no descriptor covers; discarding its contents touches nothing
            // live.
            unsafe { libc::madvise(base as *mut libc::c_void, PAGE_SIZE, libc::MADV_DONTNEED) };
            self.free_pages.push(base);
        }
    }

    pub fn release_large(&mut self, id: usize) {
        let (base, span) = (self.pages[id].base, self.pages[id].reserved);
        self.unmap_descriptor(id);
        os_unmap(base, span);
    }

    // ---- free ----

    /// Frees the allocated block (page `id`, index `i`): zeroes a pointer
    /// block, pushes a small one on its LIFO list, caches or unmaps a large one.
    #[inline(always)]
    pub fn free_block(&mut self, id: usize, i: usize) {
        let page = &mut self.pages[id];
        if page.class == LARGE {
            return self.free_large(id);
        }
        let base = page.block_addr(i);
        self.renew(id, i);
        let page = &mut self.pages[id];
        if page.kind as usize == POINTER {
            // SAFETY: callers pass (id, i) from `lookup`, so page `id` is in
            // use and block `i` is allocated: `block_size` bytes from `base`
            // lie in the page's mapping. The block is being freed: the
            // program gives up its pointers to it, and no Rust reference
            // into heap memory outlives a helper call.
            unsafe { zero_small(base, page.block_size) };
        }
        let class = page.class as usize;
        let cs = &mut self.classes[page.kind as usize * NUM_CLASSES + class];
        // SAFETY: as above, `base` is a mapped small block, 16-byte aligned
        // and at least 16 bytes, so its first word can hold the link.
        unsafe { *(base as *mut usize) = cs.free };
        cs.free = base;
        self.tier.free(&mut cs.frees);
        if T::BIRTHS {
            note_death(page, i, &mut self.tier);
        }
    }

    /// Small block `i` of page `id` is to be handed out again, by the free
    /// list or in place (a constructor reusing it): it is young, as every
    /// block handed out is. Its mark (old) bit is cleared, its bytes leave
    /// the old generation, and its page may hold young blocks.
    #[inline(always)]
    pub fn renew(&mut self, id: usize, i: usize) {
        let page = &mut self.pages[id];
        if Page::bit(&page.mark, i) {
            Page::clear(&mut page.mark, i);
            self.old_bytes = self.old_bytes.saturating_sub(page.block_size);
        }
        if !page.young {
            page.young = true;
            self.young_pages.push(id as u32);
        }
    }

    /// Caches a freed large data block, or unmaps it.
    #[inline(never)]
    fn free_large(&mut self, id: usize) {
        self.tier.free_large();
        let page = &mut self.pages[id];
        if T::BIRTHS {
            note_death(page, 0, &mut self.tier);
        }
        if Page::bit(&page.mark, 0) {
            Page::clear(&mut page.mark, 0);
            self.old_bytes = self.old_bytes.saturating_sub(page.block_size);
        }
        if page.kind as usize == DATA && self.cache_bytes + page.block_size <= LARGE_CACHE_LIMIT {
            Page::clear(&mut page.alloc, 0);
            page.cached = true;
            self.cache_bytes += page.block_size;
            self.large_cache.push(id as u32);
        } else {
            self.release_large(id);
        }
    }

    /// The tier's statistics now; live blocks are counted only for tiers
    /// that derive their allocation counts from them.
    pub fn tier_stats(&self) -> TierStats {
        let mut census = Census {
            live: [0; NUM_CLASSES + 1],
            frees: [0; NUM_CLASSES + 1],
        };
        if T::COUNTS {
            self.count_live(&mut census.live);
            for (k, cs) in self.classes.iter().enumerate() {
                census.frees[k % NUM_CLASSES] += cs.frees;
            }
        }
        self.tier.snapshot(&census)
    }

    /// Blocks handed out and not freed, per class: set alloc bits, plus the
    /// cursors' unrecorded bump ranges, minus the blocks on free lists
    /// (each of which has its bit set or lies in a bump range).
    fn count_live(&self, live: &mut [u64; NUM_CLASSES + 1]) {
        for page in self.pages.iter().filter(|p| p.in_use && !p.cached) {
            let words = page.nblocks.div_ceil(64);
            let set: u32 = page.alloc[..words].iter().map(|w| w.count_ones()).sum();
            live[hist_class(page)] += set as u64;
        }
        for (k, cs) in self.classes.iter().enumerate() {
            let class = k % NUM_CLASSES;
            if cs.page != 0 {
                live[class] += ((cs.bump - cs.bump_start) / CLASS_SIZES[class]) as u64;
            }
            let mut f = cs.free;
            while f != 0 {
                live[class] -= 1;
                // SAFETY: `f` is a non-zero free-list entry: the base of a
                // free block of an in-use page (see `pop_free`), aligned, whose
                // first word is the next link.
                f = unsafe { *(f as *const usize) };
            }
        }
    }

    /// Returns every mapping to the OS (used between tests).
    pub fn release_all(&mut self) {
        for id in 0..self.pages.len() {
            if self.pages[id].in_use && self.pages[id].class == LARGE {
                self.release_large(id);
            }
        }
        for &(base, len) in &self.reservations {
            os_unmap(base, len);
        }
        for leaf in self.top.iter_mut() {
            if !leaf.is_null() {
                os_unmap(*leaf as usize, 4 << LEAF_BITS);
                *leaf = ptr::null_mut();
            }
        }
        *self = Heap::new();
    }
}

/// Zeroes the small block of `size` bytes at `base`: the cells of trees
/// (16 to 64 bytes) with straight stores, since a `memset` call costs
/// more than the stores themselves, bigger blocks with `memset`.
///
/// # Safety
/// `base` is a 16-byte aligned block of `size` writable bytes, a multiple
/// of 16, that nothing else references.
#[inline(always)]
unsafe fn zero_small(base: usize, size: usize) {
    if size > 64 {
        // SAFETY: the caller's contract.
        return unsafe { ptr::write_bytes(base as *mut u8, 0, size) };
    }
    let p = base as *mut [u64; 2];
    // SAFETY: the caller's contract: `size` is 16, 32, 48 or 64, and each
    // store below lies within the first `size` bytes.
    unsafe {
        p.write([0; 2]);
        if size > 16 {
            p.add(1).write([0; 2]);
        }
        if size > 32 {
            p.add(2).write([0; 2]);
        }
        if size > 48 {
            p.add(3).write([0; 2]);
        }
    }
}

/// The statistics index of a page's class: large blocks come last.
#[inline(always)]
pub fn hist_class(page: &Page) -> usize {
    if page.class == LARGE {
        NUM_CLASSES
    } else {
        page.class as usize
    }
}

/// Records the death of block `i` of `page` if its birth was sampled.
#[inline(always)]
pub fn note_death<T: Tier>(page: &mut Page, i: usize, tier: &mut T) {
    if let Some(&w) = page.sampled.get(i / 64) {
        if w >> (i % 64) & 1 != 0 {
            sampled_death(page, i, tier);
        }
    }
}

#[cold]
#[inline(never)]
fn sampled_death<T: Tier>(page: &mut Page, i: usize, tier: &mut T) {
    page.sampled[i / 64] &= !(1 << (i % 64));
    tier.death(page.births[i]);
}

impl<T: Tier> Default for Heap<T> {
    fn default() -> Self {
        Heap::new()
    }
}

// ---- OS memory ----

fn os_map(len: usize) -> Option<usize> {
    // SAFETY: an anonymous private mapping at an address the kernel
    // chooses: it cannot overlap any existing object, and failure is
    // reported as MAP_FAILED, checked below.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        None
    } else {
        Some(p as usize)
    }
}

/// Maps `len` bytes (a multiple of PAGE_SIZE) aligned to PAGE_SIZE.
fn os_map_aligned(len: usize) -> Option<usize> {
    let total = len.checked_add(PAGE_SIZE)?;
    let raw = os_map(total)?;
    let base = (raw + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    if base > raw {
        os_unmap(raw, base - raw);
    }
    let tail = raw + total - (base + len);
    if tail > 0 {
        os_unmap(base + len, tail);
    }
    Some(base)
}

fn os_unmap(addr: usize, len: usize) {
    // SAFETY: callers unmap only ranges they mapped with `os_map` and no
    // longer use: the trimmed ends of an aligned mapping, a released large
    // block, a leaf or reservation in `release_all`. No Rust reference
    // points into heap mappings.
    unsafe { libc::munmap(addr as *mut libc::c_void, len) };
}
