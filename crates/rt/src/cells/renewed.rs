//! The blocks reused in place since the collector's last pause, so that
//! compiled code can skip the runtime on a reuse that has nothing to renew.
//!
//! A reuse makes its block young (`Heap::renew`: mark bit cleared, page on
//! the young list), which reads the page's descriptor: a tree insertion
//! that rebuilds the same path at every step paid that for every node,
//! though after the first rebuild since a collection every one of them is
//! young already. This table remembers, per address, that the block there
//! was renewed in the current *epoch* (since the collector's last pause
//! began). Between two pauses nothing sets a mark bit or takes a page off
//! the young list (only collections, `gc::collect_inner` and
//! `gc::slice`, do), and a free or a new allocation leaves a block young
//! on a young page; so a block whose address is in the table is still
//! young on a young page, whatever happened to it since, and a reuse of
//! it has nothing to do but zero the words past the constructor (compiled
//! code does that itself: it knows the size class).
//!
//! Compiled code tests `slots[index(t)] == t | tag` and calls
//! `sspur_reuse_or_alloc` only when it fails. The tag is the epoch in the
//! bits above any heap address (47 bits), never 0, so an empty slot (0)
//! and a slot of an earlier epoch never match; a collector pause starts a
//! new epoch by changing the tag, which forgets every slot at once. Only
//! the plain default mode fills slots (`sspur_reuse_or_alloc`'s fast
//! path): in check mode, with statistics or under SSPUR_MEM=gc every
//! reuse goes through the runtime.

use std::cell::UnsafeCell;

/// Slots of the table (a power of two): 8 KB, a path of a tree or two
/// fits without many collisions, and the table stays small in the cache.
pub const SLOTS: usize = 1024;
/// Byte offset of slot 0 in [`Renewed`] (after the tag word).
pub const SLOTS_OFFSET: i32 = 8;
/// A slot's index is the top bits of the address times this (Fibonacci
/// hashing): the low bits alone collide for blocks a power of two of
/// blocks apart, as the nodes of a tree's path built by bump allocation
/// often are.
pub const INDEX_MUL: i64 = 0x9E37_79B9_7F4A_7C15_u64 as i64;
/// The shift that leaves the index's bits: `64 - log2(SLOTS)`.
pub const INDEX_SHIFT: i64 = 64 - SLOTS.trailing_zeros() as i64;
/// Epochs fit in the 16 bits above a 47-bit address.
const EPOCH_SHIFT: u32 = 48;

/// The table compiled code reads, at a fixed layout.
#[repr(C)]
pub struct Renewed {
    /// `epoch << 48`, epoch in `1..=0xffff`.
    pub tag: u64,
    pub slots: [u64; SLOTS],
}

/// The global table; touched only by the runtime's owner thread (compiled
/// code reads it, the runtime writes it).
#[repr(transparent)]
pub struct Global(UnsafeCell<Renewed>);

// SAFETY: only the runtime's owner thread uses it (as `state::RT`).
unsafe impl Sync for Global {}

/// Named for the object files `sspur build` links against the runtime.
#[export_name = "sspur_renewed"]
pub static RENEWED: Global = Global(UnsafeCell::new(Renewed {
    tag: 1 << EPOCH_SHIFT,
    slots: [0; SLOTS],
}));

/// The table's address, for the JIT.
pub fn address() -> u64 {
    RENEWED.0.get() as u64
}

#[inline(always)]
fn table() -> &'static mut Renewed {
    // SAFETY: the owner thread alone reaches it, never holding two of
    // these references at once (each use below is one short statement).
    unsafe { &mut *RENEWED.0.get() }
}

#[inline(always)]
pub fn index(t: usize) -> usize {
    ((t as u64).wrapping_mul(INDEX_MUL as u64) >> INDEX_SHIFT) as usize
}

/// Records that the block at `t` was just renewed.
#[inline(always)]
pub fn note(t: usize) {
    let r = table();
    r.slots[index(t)] = t as u64 | r.tag;
}

/// Whether the block at `t` was renewed in this epoch (tests).
pub fn contains(t: usize) -> bool {
    let r = table();
    r.slots[index(t)] == t as u64 | r.tag
}

/// A collector pause begins: every block may be old again, so the table
/// forgets everything (a new tag; the slots are cleared when the epochs
/// wrap around).
#[inline]
pub fn new_epoch() {
    let r = table();
    let next = (r.tag >> EPOCH_SHIFT) + 1;
    if next > 0xffff {
        r.slots = [0; SLOTS];
        r.tag = 1 << EPOCH_SHIFT;
    } else {
        r.tag = next << EPOCH_SHIFT;
    }
}

/// Forgets every slot (a runtime reset: the next one may run in another mode).
pub fn clear() {
    let r = table();
    r.slots = [0; SLOTS];
    r.tag = 1 << EPOCH_SHIFT;
}
