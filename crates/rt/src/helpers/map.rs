//! The insertion-ordered hash map, living in the rt heap.
//!
//! A map is a pointer block `[len, n_entries, cap, entries, index, mask,
//! key_kind]`. `entries` is a pointer block of `cap` entries of five words
//! `[state, k0, k1, v0, v1]` in insertion order (state 0: removed, else
//! 1); keys and values take one or two words (Str is `(ptr, len)`).
//! `index` is a data block of `mask + 1` slots for open addressing: 0
//! empty, `u64::MAX` a removed slot, else `entry + 1` in the low 32 bits
//! and the key hash's high 32 bits above it, so a probe compares keys only
//! where the hashes agree.

use super::mem;
use super::types::bytes;

const LEN: usize = 0;
const N: usize = 1;
const CAP: usize = 2;
const ENTRIES: usize = 3;
const INDEX: usize = 4;
const MASK: usize = 5;
const KIND: usize = 6;
const HEADER_WORDS: usize = 7;
const ENTRY_WORDS: usize = 5;
const TOMB: u64 = u64::MAX;
/// The bits of an index slot that hold the key hash's.
const TAG: u64 = 0xffff_ffff_0000_0000;
/// Entries a map may hold: an index slot keeps `entry + 1` in 32 bits, and
/// all ones there could be a removed slot's.
const MAX_ENTRIES: usize = u32::MAX as usize - 1;

/// Key kinds: Int and Bool compare by word, Str by bytes.
pub const KEY_WORD: u64 = 0;
pub const KEY_STR: u64 = 1;

type Map = *mut u64;

/// Header word `i` of map `m`.
///
/// # Safety
/// `m` must be a live map and `i < HEADER_WORDS`.
unsafe fn get(m: Map, i: usize) -> u64 {
    // SAFETY: a live map is a pointer block of at least HEADER_WORDS aligned
    // words (allocated by `sspur_map_new`) and `i` is below that.
    unsafe { m.add(i).read() }
}

/// Sets header word `i` of map `m`.
///
/// # Safety
/// As [`get`]; the caller must be the only one touching the map now.
unsafe fn set(m: Map, i: usize, v: u64) {
    // SAFETY: as in `get`; helpers run on the owner thread while compiled
    // code waits, and no Rust reference to the header exists.
    unsafe { m.add(i).write(v) }
}

/// The high and low halves of the 128-bit product, folded: every bit of
/// the result depends on every bit of both operands.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    r as u64 ^ (r >> 64) as u64
}

const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash of a key's bytes, eight at a time. The low bits pick the
/// slot and the high 32 are the slot's tag. Only the map's own layout
/// depends on it: its order is insertion order, whatever the hash.
#[inline(always)]
fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = (b.len() as u64) ^ K0;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        h = fold_mul(
            h ^ u64::from_le_bytes(w.try_into().expect("eight bytes")),
            K1,
        );
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = fold_mul(h ^ u64::from_le_bytes(last), K1);
    }
    fold_mul(h, K0)
}

/// The hash of a key.
///
/// # Safety
/// For `KEY_STR`, `(k0, k1)` must be a live string.
#[inline(always)]
unsafe fn key_hash(kind: u64, k0: u64, k1: u64) -> u64 {
    if kind == KEY_STR {
        // SAFETY: a Str key is a live `(ptr, len)` string (the contract).
        hash_bytes(unsafe { bytes(k0, k1) })
    } else {
        fold_mul(k0 ^ K0, K1)
    }
}

/// Whether the `n` bytes at `a` and at `b` are equal, compared in place
/// (keys are mostly short: a call to memcmp costs more than they do).
///
/// # Safety
/// Both must be readable for `n` bytes.
#[inline(always)]
unsafe fn same_bytes(a: *const u8, b: *const u8, n: usize) -> bool {
    // SAFETY: every read lies inside the `n` readable bytes: whole words
    // below `n - 8`, then the last eight bytes (overlapping) when `n >= 8`,
    // else the last four (`n >= 4`) or single bytes.
    unsafe {
        let w = |p: *const u8, i: usize| (p.add(i) as *const u64).read_unaligned();
        let h = |p: *const u8, i: usize| (p.add(i) as *const u32).read_unaligned();
        if n >= 8 {
            let mut i = 0;
            while i + 8 < n {
                if w(a, i) != w(b, i) {
                    return false;
                }
                i += 8;
            }
            w(a, n - 8) == w(b, n - 8)
        } else if n >= 4 {
            h(a, 0) == h(b, 0) && h(a, n - 4) == h(b, n - 4)
        } else {
            (0..n).all(|i| a.add(i).read() == b.add(i).read())
        }
    }
}

/// Whether two keys are equal.
///
/// # Safety
/// For `KEY_STR`, `(a0, a1)` and `(b0, b1)` must be live strings.
#[inline(always)]
unsafe fn key_eq(kind: u64, a0: u64, a1: u64, b0: u64, b1: u64) -> bool {
    if kind == KEY_STR {
        // SAFETY: both are live `(ptr, len)` strings (the contract).
        a1 == b1
            && (a0 == b0 || unsafe { same_bytes(a0 as *const u8, b0 as *const u8, a1 as usize) })
    } else {
        a0 == b0
    }
}

/// A new empty map.
#[no_mangle]
pub extern "C" fn sspur_map_new(kind: u64, site: u32) -> Map {
    let m = mem::alloc(HEADER_WORDS * 8, true, site) as Map;
    // SAFETY: `mem::alloc` never returns null (it traps), and a fresh zeroed
    // pointer block of HEADER_WORDS words is a live empty map: no entries,
    // no index.
    unsafe { set(m, KIND, kind) };
    m
}

/// Slot of the index holding `k` (whose hash is `h`), or the slot where it
/// would go.
///
/// # Safety
/// `m` must be a live map with an index (`reserve` ran, as it has whenever
/// `LEN > 0`); a Str key must be a live string.
#[inline(always)]
unsafe fn find_slot(m: Map, h: u64, k0: u64, k1: u64) -> (usize, Option<usize>) {
    // SAFETY: the index is a block of `mask + 1` slots and `i` is always
    // masked; a slot other than 0 and TOMB holds `entry + 1` for an entry
    // below `N <= cap`, so `e` and its key words are inside the entries
    // block, and the stored key is a live value of the map's key kind. The
    // index is kept at most 3/4 full (`reserve`), so the probe meets an
    // empty slot and ends.
    unsafe {
        let kind = get(m, KIND);
        let mask = get(m, MASK) as usize;
        let index = get(m, INDEX) as *mut u64;
        let entries = get(m, ENTRIES) as *mut u64;
        let tag = h & TAG;
        let mut i = h as usize & mask;
        let mut first_tomb = None;
        loop {
            let s = index.add(i).read();
            if s == 0 {
                return (first_tomb.unwrap_or(i), None);
            }
            if s == TOMB {
                first_tomb.get_or_insert(i);
            } else if s & TAG == tag {
                let n = (s as u32) as usize - 1;
                let e = entries.add(n * ENTRY_WORDS);
                if key_eq(kind, e.add(1).read(), e.add(2).read(), k0, k1) {
                    return (i, Some(n));
                }
            }
            i = (i + 1) & mask;
        }
    }
}

/// The index slot of entry `n` whose key hash is `h`.
fn slot_of(h: u64, n: usize) -> u64 {
    (h & TAG) | (n as u64 + 1)
}

/// Entry number of `k`, if present.
///
/// # Safety
/// `m` must be a live map; a Str key must be a live string.
unsafe fn lookup(m: Map, k0: u64, k1: u64) -> Option<usize> {
    // SAFETY: `m` is live; `find_slot` runs only when `LEN > 0`, and a map
    // with an entry has an index (every insertion goes through `reserve`).
    unsafe {
        if get(m, LEN) == 0 {
            return None;
        }
        find_slot(m, key_hash(get(m, KIND), k0, k1), k0, k1).1
    }
}

/// Makes room for one more entry: compacts removed entries and doubles the
/// index when it would pass 3/4 full. Returns whether it rebuilt the index
/// (slots found before are stale then).
///
/// # Safety
/// `m` must be a live map.
unsafe fn reserve(m: Map, site: u32) -> bool {
    // SAFETY: the old entries block holds `n <= cap` entries of ENTRY_WORDS
    // words (null only when `n == 0`, when the loop reads nothing); the new
    // blocks come from `mem::alloc`, which never returns null, and hold
    // `new_cap >= len + 1 >= j` entries and `new_slots` slots, so every copy
    // and `add` is in bounds, and a fresh block never overlaps the old one.
    // Re-inserting `j < new_slots * 3/4` entries always finds an empty slot.
    // A collection inside `mem::alloc` keeps `m` (the program holds it),
    // `old` (reachable from `m`) and `entries` (in this frame, which the
    // collector scans). The old blocks are freed last, when `m` no longer
    // points at them and nothing else does (a map owns its entries and
    // index blocks; `sspur_map_remove`'s result is readable only until the
    // next put).
    unsafe {
        let n = get(m, N) as usize;
        let cap = get(m, CAP) as usize;
        let slots = if get(m, INDEX) == 0 {
            0
        } else {
            get(m, MASK) as usize + 1
        };
        if n < cap && (n + 1) * 4 <= slots * 3 {
            return false;
        }
        let len = get(m, LEN) as usize;
        if len >= MAX_ENTRIES {
            mem::out_of_memory_at_site(site);
        }
        let new_cap = (2 * (len + 1)).clamp(4, MAX_ENTRIES);
        let mut new_slots = 8;
        while new_slots * 3 < new_cap * 4 {
            new_slots *= 2;
        }
        let old = get(m, ENTRIES) as *mut u64;
        let entries = mem::alloc(new_cap * ENTRY_WORDS * 8, true, site) as *mut u64;
        let mut j = 0;
        for i in 0..n {
            let e = old.add(i * ENTRY_WORDS);
            if e.read() != 0 {
                std::ptr::copy_nonoverlapping(e, entries.add(j * ENTRY_WORDS), ENTRY_WORDS);
                j += 1;
            }
        }
        let old_index = get(m, INDEX) as *mut u8;
        let index = mem::alloc(new_slots * 8, false, site) as *mut u64;
        std::ptr::write_bytes(index, 0, new_slots);
        set(m, ENTRIES, entries as u64);
        set(m, INDEX, index as u64);
        // The map may be old and the new blocks are young.
        crate::remember(m as *const u8);
        set(m, MASK, (new_slots - 1) as u64);
        set(m, CAP, new_cap as u64);
        set(m, N, j as u64);
        let kind = get(m, KIND);
        for i in 0..j {
            let e = entries.add(i * ENTRY_WORDS);
            let h = key_hash(kind, e.add(1).read(), e.add(2).read());
            let mut s = h as usize & (new_slots - 1);
            while index.add(s).read() != 0 {
                s = (s + 1) & (new_slots - 1);
            }
            index.add(s).write(slot_of(h, i));
        }
        if !old.is_null() {
            mem::free_temp(old as *mut u8);
            mem::free_temp(old_index);
        }
        true
    }
}

/// Inserts or replaces; returns whether the key was already present (and
/// then keeps the old key).
///
/// # Safety
/// `m` must be a live map; keys and values follow the value layout.
unsafe fn put(m: Map, k0: u64, k1: u64, v0: u64, v1: u64, site: u32) -> bool {
    // SAFETY: the caller's contract is `put_found`'s and `insert`'s; the
    // value words of an entry below `N <= cap` are inside the entries block.
    unsafe {
        let h = key_hash(get(m, KIND), k0, k1);
        let slot = match probe(m, h, k0, k1) {
            Ok(e) => {
                let e = (get(m, ENTRIES) as *mut u64).add(e * ENTRY_WORDS);
                e.add(3).write(v0);
                e.add(4).write(v1);
                crate::remember(e as *const u8);
                return true;
            }
            Err(slot) => slot,
        };
        insert(m, h, slot, [k0, k1, v0, v1], site);
        false
    }
}

/// The entry holding `k` (hash `h`), or where in the index it would go
/// (None: the map has no index yet).
///
/// # Safety
/// `m` must be a live map; a Str key must be a live string.
#[inline(always)]
unsafe fn probe(m: Map, h: u64, k0: u64, k1: u64) -> Result<usize, Option<usize>> {
    // SAFETY: a map with entries has an index (every insertion goes
    // through `reserve`); `find_slot` needs no more.
    unsafe {
        if get(m, LEN) == 0 {
            return Err(None);
        }
        match find_slot(m, h, k0, k1) {
            (_, Some(e)) => Ok(e),
            (slot, None) => Err(Some(slot)),
        }
    }
}

/// Adds the entry `kv` for a key (hash `h`) the map does not hold, at
/// index slot `slot` when `probe` found one and `reserve` keeps it.
///
/// # Safety
/// `m` must be a live map without the key; keys and values follow the
/// value layout.
unsafe fn insert(m: Map, h: u64, slot: Option<usize>, kv: [u64; 4], site: u32) {
    let [k0, k1, v0, v1] = kv;
    // SAFETY: after `reserve`, `N < cap`, so entry `N` is in bounds, and the
    // slot (from a probe of the current index, or found now) is below
    // `mask + 1`, the index's length.
    unsafe {
        let slot = match (reserve(m, site), slot) {
            (false, Some(slot)) => slot,
            _ => find_slot(m, h, k0, k1).0,
        };
        let n = get(m, N) as usize;
        let e = (get(m, ENTRIES) as *mut u64).add(n * ENTRY_WORDS);
        for (i, w) in [1, k0, k1, v0, v1].into_iter().enumerate() {
            e.add(i).write(w);
        }
        // The entries block may be old; the key and value may be young.
        crate::remember(e as *const u8);
        (get(m, INDEX) as *mut u64).add(slot).write(slot_of(h, n));
        set(m, N, n as u64 + 1);
        set(m, LEN, get(m, LEN) + 1);
    }
}

/// A hint that the memory at `p` will be read soon (nothing on targets
/// without a stable prefetch instruction); never faults, whatever `p` is.
#[inline(always)]
fn prefetch(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and
    // does not fault on any address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// How many keys ahead [`counts_add_all`] starts reading.
const AHEAD: usize = 4;

/// Counts every key `keys` yields into the map of counts `m`, as
/// [`counts_add`] one after another does. A count is three dependent
/// memory reads (the index slot, the entry, the stored key's bytes), each
/// likely a cache miss in a large map: the keys ahead are hashed first and
/// those reads started for them while earlier keys are counted.
///
/// # Safety
/// As [`counts_add`] for each key; every key stays live during the call.
pub(crate) unsafe fn counts_add_all(m: Map, mut keys: impl Iterator<Item = (u64, u64)>, site: u32) {
    // SAFETY: the contract; every read below goes through the map's
    // current header: a slot below `mask + 1` of the current index, and an
    // entry below `N` of the current entries block, as `find_slot` reads
    // them. Prefetched addresses are only hints.
    unsafe {
        let kind = get(m, KIND);
        let mut ring = [(0u64, 0u64, 0u64); AHEAD];
        let mut n = 0;
        for slot in ring.iter_mut() {
            let Some((k0, k1)) = keys.next() else { break };
            *slot = (k0, k1, key_hash(kind, k0, k1));
            n += 1;
        }
        let mut at = 0;
        while n > 0 {
            let (k0, k1, h) = ring[at];
            // The key two ahead: its slot was prefetched; start on its
            // entry. The key one ahead: start on its stored key's bytes.
            if get(m, LEN) > 0 {
                let index = get(m, INDEX) as *const u64;
                let mask = get(m, MASK) as usize;
                let entries = get(m, ENTRIES) as *const u64;
                let entry = |h: u64| {
                    let s = index.add(h as usize & mask).read();
                    (s != 0 && s != TOMB && s & TAG == h & TAG)
                        .then(|| entries.add(((s as u32) as usize - 1) * ENTRY_WORDS))
                };
                if n > 2 {
                    if let Some(e) = entry(ring[(at + 2) % AHEAD].2) {
                        prefetch(e);
                    }
                }
                if n > 1 {
                    if let Some(e) = entry(ring[(at + 1) % AHEAD].2) {
                        if kind == KEY_STR {
                            prefetch(e.add(1).read() as *const u64);
                        }
                    }
                }
            }
            counts_add_hashed(m, h, k0, k1, site);
            match keys.next() {
                Some((k0, k1)) => {
                    let h = key_hash(kind, k0, k1);
                    if get(m, LEN) > 0 {
                        prefetch(
                            (get(m, INDEX) as *const u64).add(h as usize & get(m, MASK) as usize),
                        );
                    }
                    ring[at] = (k0, k1, h);
                }
                None => n -= 1,
            }
            at = (at + 1) % AHEAD;
        }
    }
}

/// One more of key `(k0, k1)` in a map of counts: one probe, the count
/// incremented in place or a new entry of 1.
///
/// # Safety
/// `m` must be a live map from the key's type to Int, `(k0, k1)` a live
/// key of that type (`k1` 0 for a one-word key).
pub(crate) unsafe fn counts_add(m: Map, k0: u64, k1: u64, site: u32) {
    // SAFETY: the contract is `counts_add_hashed`'s.
    unsafe { counts_add_hashed(m, key_hash(get(m, KIND), k0, k1), k0, k1, site) }
}

/// [`counts_add`] of a key whose hash is `h`.
///
/// # Safety
/// As [`counts_add`]; `h` is the key's `key_hash`.
#[inline(always)]
unsafe fn counts_add_hashed(m: Map, h: u64, k0: u64, k1: u64, site: u32) {
    // SAFETY: the contract is `probe`'s and `insert`'s; an entry below
    // `N <= cap` has its value word inside the entries block, and an Int
    // stored there needs no barrier.
    unsafe {
        match probe(m, h, k0, k1) {
            Ok(e) => {
                let v = (get(m, ENTRIES) as *mut u64).add(e * ENTRY_WORDS + 3);
                v.write(v.read().wrapping_add(1));
            }
            Err(slot) => insert(m, h, slot, [k0, k1, 1, 0], site),
        }
    }
}

/// `m.put(k, v)`.
///
/// # Safety
/// `m` must be a live map; keys and values follow the value layout.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_put(m: Map, k0: u64, k1: u64, v0: u64, v1: u64, site: u32) {
    // SAFETY: the caller's contract is `put`'s.
    unsafe { put(m, k0, k1, v0, v1, site) };
}

/// `m.put(k, v)` with an owned key string: frees it when the key was
/// already present (the map keeps its old key), keeps it otherwise.
///
/// # Safety
/// As [`sspur_map_put`]; `k0` is a string block the caller owns.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_put_owned(
    m: Map,
    k0: u64,
    k1: u64,
    v0: u64,
    v1: u64,
    site: u32,
) {
    // SAFETY: the contract is `put`'s and `free_owned_key`'s.
    unsafe { free_owned_key(put(m, k0, k1, v0, v1, site), k0, k1, site) }
}

/// After a put of an owned key string `(k0, k1)`: frees it when the key
/// was present (`present`), since the map kept its old key.
///
/// # Safety
/// `k0` is a string block the caller owns and gave to the put.
unsafe fn free_owned_key(present: bool, k0: u64, k1: u64, site: u32) {
    // SAFETY: when the key was present the map kept its old key, so the
    // caller's key block `k0` (a non-empty string: `k1 != 0`) is
    // referenced by nothing else and may be freed.
    unsafe {
        if present && k1 != 0 {
            crate::cells::sspur_free_cell(k0, crate::cells::BlockKind::Str as u64, site);
        }
    }
}

/// [`sspur_map_probe`]'s answer for a missing key where the map has no
/// index slot to offer (no entry yet): the put finds one itself.
const NO_SLOT: u64 = u64::MAX;

/// One probe for `k`, made by the lookup of an upsert
/// (`m.put(k, f(m.get_or(k, d)))`, `ir::upsert`): the address of `k`'s
/// value words when present (even, never null), else `2 * slot + 1` for
/// the index slot an insertion would take, or [`NO_SLOT`]. The map is not
/// changed; the answer stays valid until it is, and the compiler reads it
/// only where nothing between the lookup and the put can change a map.
///
/// # Safety
/// `m` must be a live map; a Str key must be a live string.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_probe(m: Map, k0: u64, k1: u64) -> u64 {
    // SAFETY: the contract is `probe`'s; an entry below `N <= cap` has its
    // value words (offset 3) inside the entries block.
    unsafe {
        match probe(m, key_hash(get(m, KIND), k0, k1), k0, k1) {
            Ok(e) => (get(m, ENTRIES) as *const u64).add(e * ENTRY_WORDS + 3) as u64,
            Err(Some(slot)) => 2 * slot as u64 + 1,
            Err(None) => NO_SLOT,
        }
    }
}

/// The put of an upsert: `probe` is what [`sspur_map_probe`] answered for
/// the same map and key, and nothing changed the map since. Returns
/// whether the key was present (then the map keeps its old key).
///
/// # Safety
/// As [`sspur_map_put`], and `probe` as said.
unsafe fn commit(m: Map, probe: u64, kv: [u64; 4], site: u32) -> bool {
    let [k0, k1, v0, v1] = kv;
    // SAFETY: an even answer is the address of the key's value words in the
    // current entries block (the map has not changed since the probe), the
    // last two of its entry's five words; an odd one other than NO_SLOT is
    // a slot of the current index, as `insert` takes from `probe`.
    unsafe {
        if probe & 1 == 0 {
            let v = probe as *mut u64;
            v.write(v0);
            v.add(1).write(v1);
            // The entries block may be old and the value young.
            crate::remember(v.sub(3) as *const u8);
            return true;
        }
        let slot = (probe != NO_SLOT).then_some((probe >> 1) as usize);
        insert(m, key_hash(get(m, KIND), k0, k1), slot, kv, site);
        false
    }
}

/// The put of an upsert (`ir::upsert`) after [`sspur_map_probe`] of the
/// same key: the value written where the probe found the key, or a new
/// entry at the slot it found, with no second probe. Returns 1 when the
/// key was present (the map kept its old key: compiled code frees an
/// owned key then, as [`sspur_map_put_owned`] does), else 0.
///
/// # Safety
/// As [`sspur_map_put`]; `probe` is the answer of [`sspur_map_probe`] for
/// `m` and this key, and the map has not changed since.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_commit(
    m: Map,
    probe: u64,
    k0: u64,
    k1: u64,
    v0: u64,
    v1: u64,
    site: u32,
) -> u64 {
    // SAFETY: the contract is `commit`'s.
    unsafe { commit(m, probe, [k0, k1, v0, v1], site) as u64 }
}

/// Address of the value words for `k`, or null.
///
/// # Safety
/// `m` must be a live map.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_find(m: Map, k0: u64, k1: u64) -> *const u64 {
    // SAFETY: `m` is a live map (the contract); `lookup` returns an entry
    // below `N <= cap`, so its value words (offset 3) are in the block.
    unsafe {
        match lookup(m, k0, k1) {
            Some(e) => (get(m, ENTRIES) as *const u64).add(e * ENTRY_WORDS + 3),
            None => std::ptr::null(),
        }
    }
}

/// Removes `k`; returns the address of its value words (still readable
/// until the next put), or null when absent.
///
/// # Safety
/// `m` must be a live map.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_remove(m: Map, k0: u64, k1: u64) -> *const u64 {
    // SAFETY: `m` is a live map (the contract) with `LEN > 0`, so it has an
    // index; `find_slot` returns a slot below `mask + 1` and an entry below
    // `N <= cap`, so the tombstone and state writes are in bounds.
    unsafe {
        if get(m, LEN) == 0 {
            return std::ptr::null();
        }
        let (slot, found) = find_slot(m, key_hash(get(m, KIND), k0, k1), k0, k1);
        let Some(e) = found else {
            return std::ptr::null();
        };
        (get(m, INDEX) as *mut u64).add(slot).write(TOMB);
        let ep = (get(m, ENTRIES) as *mut u64).add(e * ENTRY_WORDS);
        ep.write(0);
        set(m, LEN, get(m, LEN) - 1);
        ep.add(3)
    }
}

/// Number of entries.
///
/// # Safety
/// `m` must be a live map.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_len(m: Map) -> i64 {
    // SAFETY: `m` is a live map (the contract); LEN is a header word.
    unsafe { get(m, LEN) as i64 }
}

/// Calls `f(key words, value words)` for each entry in insertion order.
///
/// # Safety
/// `m` must be a live map.
pub(crate) unsafe fn for_each(m: *const u64, mut f: impl FnMut(*const u64, *const u64)) {
    // SAFETY: `m` is a live map (the contract); entries `0..N` lie in the
    // entries block (`N <= cap`; null only when `N == 0`). The map is only
    // read here, and `f` receives pointers at a live entry's key and value.
    unsafe {
        let m = m as Map;
        let entries = get(m, ENTRIES) as *const u64;
        for i in 0..get(m, N) as usize {
            let e = entries.add(i * ENTRY_WORDS);
            if e.read() != 0 {
                f(e.add(1), e.add(3));
            }
        }
    }
}

/// `part` of [`sspur_map_part`] asking for the keys (else the values).
const PART_KEYS: u64 = 0;

/// `m.keys` / `m.values` (part 0 or 1): a fresh list of `w` words per
/// element; `ptrs` tells whether the elements hold pointers.
///
/// # Safety
/// `m` must be a live map.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_part(
    m: Map,
    part: u64,
    w: u64,
    ptrs: u64,
    site: u32,
) -> super::Pair {
    // SAFETY: `m` is a live map (the contract) whose keys or values take
    // `w` words. `for_each` calls back once per live entry, `LEN` times, so
    // `i < len` and each copy of `w` words lands inside the fresh list of
    // `len * w` words (null only when `len == 0`, when nothing is copied).
    unsafe {
        let len = get(m, LEN);
        let out = super::list::alloc_list(len, w * 8, ptrs != 0, site) as *mut u64;
        let mut i = 0;
        for_each(m, |k, v| {
            let src = if part == PART_KEYS { k } else { v };
            std::ptr::copy_nonoverlapping(src, out.add(i * w as usize), w as usize);
            i += 1;
        });
        super::Pair(out as u64, len)
    }
}

/// `m.entries`: a fresh list of `(K, V)` tuples (`kw`, `vw` words).
///
/// # Safety
/// `m` must be a live map.
#[no_mangle]
pub unsafe extern "C" fn sspur_map_entries(m: Map, kw: u64, vw: u64, site: u32) -> super::Pair {
    // SAFETY: `m` is a live map (the contract) with `kw`-word keys and
    // `vw`-word values. `for_each` calls back `LEN` times, so `i < len` stays
    // inside the fresh list of `len` words; each tuple is a fresh non-null
    // block of `kw + vw` words, disjoint from the map. The list is in this
    // frame (scanned) while tuples are allocated.
    unsafe {
        let len = get(m, LEN);
        let out = super::list::alloc_list(len, 8, true, site) as *mut u64;
        let mut i = 0;
        for_each(m, |k, v| {
            let t = mem::alloc(((kw + vw) * 8) as usize, true, mem::element_site(site)) as *mut u64;
            std::ptr::copy_nonoverlapping(k, t, kw as usize);
            std::ptr::copy_nonoverlapping(v, t.add(kw as usize), vw as usize);
            out.add(i).write(t as u64);
            i += 1;
        });
        super::Pair(out as u64, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: Map) -> Vec<u64> {
        let mut out = Vec::new();
        // SAFETY: `m` is a live map made by the test; keys are one word.
        unsafe { for_each(m, |k, _| out.push(k.read())) };
        out
    }

    #[test]
    fn insertion_order_survives_replace_remove_and_growth() {
        let _lock = crate::helpers::test_lock();
        // SAFETY: `m` is a live map with word keys and values; `find` and
        // `remove` results are read before the next put.
        unsafe {
            let m = sspur_map_new(KEY_WORD, 0);
            for k in [5u64, 1, 9] {
                sspur_map_put(m, k, 0, k * 10, 0, 0);
            }
            sspur_map_put(m, 1, 0, 11, 0, 0);
            assert_eq!(keys(m), [5, 1, 9], "replacing keeps the place");
            assert_eq!(sspur_map_find(m, 1, 0).read(), 11);
            assert_eq!(sspur_map_remove(m, 5, 0).read(), 50);
            assert!(sspur_map_find(m, 5, 0).is_null());
            sspur_map_put(m, 5, 0, 55, 0, 0);
            assert_eq!(keys(m), [1, 9, 5], "a key put again goes to the end");
            for k in 100..200u64 {
                sspur_map_put(m, k, 0, k, 0, 0);
            }
            for k in 100..150u64 {
                assert!(!sspur_map_remove(m, k, 0).is_null());
            }
            assert_eq!(sspur_map_len(m), 53);
            let ks = keys(m);
            assert_eq!(&ks[..3], [1, 9, 5]);
            assert_eq!(ks[3..], (150..200).collect::<Vec<_>>()[..]);
        }
    }

    #[test]
    fn counts_ahead_match_counts_one_at_a_time() {
        let _lock = crate::helpers::test_lock();
        let words: Vec<String> = (0..3000u64)
            .map(|i| format!("w{}", (i * 7919) % 701 + i % 3))
            .collect();
        // SAFETY: two live maps with Str keys and Int values; `words`
        // outlives them, so the keys they store stay live strings.
        unsafe {
            let (a, b) = (sspur_map_new(KEY_STR, 0), sspur_map_new(KEY_STR, 0));
            for w in &words {
                counts_add(a, w.as_ptr() as u64, w.len() as u64, 0);
            }
            counts_add_all(
                b,
                words.iter().map(|w| (w.as_ptr() as u64, w.len() as u64)),
                0,
            );
            let entries = |m: Map| {
                let mut out = Vec::new();
                for_each(m, |k, v| {
                    out.push((bytes(k.read(), k.add(1).read()).to_vec(), v.read()))
                });
                out
            };
            assert_eq!(entries(a), entries(b));
            assert_eq!(sspur_map_len(b), 703);
            let few = sspur_map_new(KEY_WORD, 0);
            counts_add_all(few, [(3, 0), (3, 0)].into_iter(), 0);
            assert_eq!(sspur_map_find(few, 3, 0).read(), 2);
        }
    }

    #[test]
    fn string_keys_compare_by_bytes() {
        let _lock = crate::helpers::test_lock();
        let (a, b) = (String::from("key"), String::from("key"));
        // SAFETY: `m` is a live map with Str keys; `a` and `b` outlive it, so
        // the keys it stores stay live strings.
        unsafe {
            let m = sspur_map_new(KEY_STR, 0);
            sspur_map_put(m, a.as_ptr() as u64, 3, 1, 0, 0);
            sspur_map_put(m, b.as_ptr() as u64, 3, 2, 0, 0);
            assert_eq!(sspur_map_len(m), 1);
            assert_eq!(sspur_map_find(m, b.as_ptr() as u64, 3).read(), 2);
            assert!(sspur_map_find(m, a.as_ptr() as u64, 2).is_null());
        }
    }
}
