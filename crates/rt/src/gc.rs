//! The conservative mark-sweep collector.
//!
//! Roots are the program thread's native stack, from the collector's own
//! frame up to the base recorded at init, with the callee-saved registers
//! spilled into that range first, plus the words registered by `add_root`.
//! Any word that points into an allocated block (interior and one-past-the-end
//! pointers included) keeps it; pointer blocks are scanned word by word from
//! an explicit mark stack; data blocks never are.

use crate::config::MemMode;
use crate::heap::{Page, LARGE, NUM_CLASSES, POINTER};
use crate::state::Rt;
use crate::tier::Tier;

/// One past the highest address of the calling thread's stack, 0 if unknown.
pub fn stack_base() -> usize {
    // SAFETY: `attr` is a zeroed `pthread_attr_t` that `pthread_getattr_np`
    // initialises for the calling thread (we return before using it if that
    // fails); `addr` and `size` are live locals the getter writes; `attr` is
    // destroyed once, after its last use.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            addr as usize + size
        } else {
            0
        }
    }
}

/// Collects now. Kept out of line: the stack scan starts at this frame,
/// so the frames of the collector proper (below it) are never scanned:
/// they hold words read from roots and blocks by an earlier collection,
/// stale copies that would keep garbage alive. The callee-saved registers
/// are spilled here and marked explicitly.
#[inline(never)]
pub fn collect(rt: &mut Rt) {
    rt.check_owner();
    if rt.stack_base == 0 || rt.in_gc {
        return;
    }
    let mut regs = [0usize; 12];
    spill_callee_saved(&mut regs);
    std::hint::black_box(&mut regs);
    let here = 0usize;
    let sp = std::hint::black_box(&here) as *const usize as usize & !7;
    collect_inner(rt, &regs, sp);
    std::hint::black_box(&mut regs);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn spill_callee_saved(regs: &mut [usize; 12]) {
    // SAFETY: the asm only stores six registers into `regs[0..6]`, through
    // the pointer of a `&mut [usize; 12]` (exclusive, aligned, 96 bytes); it
    // reads registers without changing them, touches no stack and no flags.
    unsafe {
        std::arch::asm!(
            "mov [{0}], rbx",
            "mov [{0} + 8], rbp",
            "mov [{0} + 16], r12",
            "mov [{0} + 24], r13",
            "mov [{0} + 32], r14",
            "mov [{0} + 40], r15",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn spill_callee_saved(regs: &mut [usize; 12]) {
    // SAFETY: the asm only stores eleven registers into `regs[0..11]`,
    // through the pointer of a `&mut [usize; 12]` (exclusive, 8-byte aligned,
    // 96 bytes); it reads registers without changing them, touches no stack
    // and no flags.
    unsafe {
        std::arch::asm!(
            "stp x19, x20, [{0}]",
            "stp x21, x22, [{0}, #16]",
            "stp x23, x24, [{0}, #32]",
            "stp x25, x26, [{0}, #48]",
            "stp x27, x28, [{0}, #64]",
            "str x29, [{0}, #80]",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the Sspur collector spills callee-saved registers only on x86-64 and aarch64");

#[inline(never)]
fn collect_inner(rt: &mut Rt, regs: &[usize; 12], sp: usize) {
    rt.in_gc = true;
    prepare(rt);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut found: Vec<usize> = Vec::new();
    // The stack: dead words may point at quarantined blocks; not reported.
    for &w in regs {
        mark_root_word(rt, w, &mut stack);
    }
    let base = rt.stack_base;
    valgrind_make_defined(sp, base - sp);
    let mut a = sp;
    while a + 8 <= base {
        // SAFETY: `collect` checked that this is the owner thread, whose
        // stack base `init` recorded, and `sp` is an 8-aligned address in
        // `collect`'s frame on that stack; every word from there up to the
        // base belongs to a live frame of this thread and is mapped. We only
        // read it as an integer. (A conservative scan also reads padding and
        // dead slots, which the Rust abstract machine calls uninitialised;
        // the words are plain machine words here and are only compared.)
        let w = unsafe { *(a as *const usize) };
        mark_root_word(rt, w, &mut stack);
        a += 8;
    }
    for i in 0..rt.roots.len() {
        // SAFETY: `add_root`'s contract: a registered word stays readable
        // for the rest of the run; it is a `*const usize`, so aligned.
        let w = unsafe { *rt.roots[i] };
        mark_word(rt, w, &mut stack, Some(&mut found));
    }
    while let Some((b, len)) = stack.pop() {
        let mut a = b;
        while a + 8 <= b + len {
            // SAFETY: `(b, len)` was pushed by `mark_block` for an allocated
            // pointer block of an in-use page (`lookup` found it), so
            // `b..b + len` is mapped, and nothing frees or releases pages
            // during marking; `b` is 16-aligned and `a` steps by 8 inside it.
            let w = unsafe { *(a as *const usize) };
            mark_word(rt, w, &mut stack, Some(&mut found));
            a += 8;
        }
    }
    if rt.mode == MemMode::Check {
        audit(rt, &mut found);
    }
    sweep(rt);
    rt.collections += 1;
    rt.in_gc = false;
}

/// Makes the bits exact: records pending bump ranges, moves every free list
/// into the page free bits (so a freed block is never marked or handed out
/// twice), forgets the partial lists and clears the marks.
fn prepare(rt: &mut Rt) {
    let h = &mut rt.heap;
    for k in 0..2 * NUM_CLASSES {
        h.flush_cursor(k);
        let mut f = h.classes[k].free;
        while f != 0 {
            let id = h.map_get(f) as usize - 1;
            let page = &mut h.pages[id];
            let i = page.index_of(f);
            Page::clear(&mut page.alloc, i);
            // SAFETY: `f` is a non-zero free-list entry, the base of a free
            // block of an in-use page (heap invariant, see `Heap::pop_free`);
            // its first word is the aligned link to the next entry.
            f = unsafe { *(f as *const usize) };
        }
        h.classes[k].free = 0;
        h.partial[k].clear();
    }
    for page in h.pages.iter_mut().filter(|p| p.in_use) {
        page.mark = [0; 64];
    }
}

/// Marks the block a stack or register word points into, and the block it
/// is one past the end of: compiled code may hold a derived end pointer (a
/// loop cursor past the last element) only in a register or stack slot.
#[inline]
fn mark_root_word(rt: &mut Rt, w: usize, stack: &mut Vec<(usize, usize)>) {
    if w < rt.heap.lo || w > rt.heap.hi {
        return;
    }
    // Dead stack words may point at quarantined blocks: not reported.
    mark_addr(rt, w, stack, None);
    if w > 0 {
        // The same word is just as likely the start of the next block, so a
        // freed block reached only this way is kept but not reported.
        if let Some((id, i)) = rt.heap.lookup(w - 1) {
            let p = &rt.heap.pages[id];
            if p.block_addr(i) + p.block_size == w {
                mark_block(rt, id, i, stack, None);
            }
        }
    }
}

/// Marks the block a heap or registered-root word points into. No end
/// pointer is ever stored (an empty view is `(0, 0)`), and applying the
/// end rule here would let every block that points at its neighbour keep
/// the one allocated before it alive, chaining through whole structures.
#[inline]
fn mark_word(
    rt: &mut Rt,
    w: usize,
    stack: &mut Vec<(usize, usize)>,
    found: Option<&mut Vec<usize>>,
) {
    if w < rt.heap.lo || w > rt.heap.hi {
        return;
    }
    mark_addr(rt, w, stack, found);
}

#[inline]
fn mark_addr(
    rt: &mut Rt,
    w: usize,
    stack: &mut Vec<(usize, usize)>,
    found: Option<&mut Vec<usize>>,
) {
    if let Some((id, i)) = rt.heap.lookup(w) {
        mark_block(rt, id, i, stack, found);
    }
}

fn mark_block(
    rt: &mut Rt,
    id: usize,
    i: usize,
    stack: &mut Vec<(usize, usize)>,
    found: Option<&mut Vec<usize>>,
) {
    let page = &mut rt.heap.pages[id];
    if Page::bit(&page.quarantine, i) {
        // Reported when reached from the heap or a root, even if the
        // stack reached it first.
        Page::set(&mut page.mark, i);
        if let Some(found) = found {
            found.push(page.block_addr(i));
        }
        return;
    }
    if Page::bit(&page.mark, i) {
        return;
    }
    Page::set(&mut page.mark, i);
    if page.kind as usize == POINTER {
        stack.push((page.block_addr(i), page.block_size));
    }
}

/// Check mode: reports freed blocks still reachable from the heap or the
/// registered roots, and quarantined blocks whose 0xA5 fill changed.
fn audit(rt: &mut Rt, reachable: &mut Vec<usize>) {
    reachable.sort_unstable();
    reachable.dedup();
    let mut msgs = Vec::new();
    for &base in reachable.iter() {
        let (id, i) = locate(rt, base);
        let page = &rt.heap.pages[id];
        msgs.push(format!(
            "sspur check: a freed {}-byte block is still reachable: allocated at {}, freed at {}",
            page.block_size,
            rt.site_name(page.sites.get(i).copied().unwrap_or(0)),
            rt.site_name(rt.free_sites.get(&base).copied().unwrap_or(0)),
        ));
    }
    let quarantined: Vec<usize> = rt.free_sites.keys().copied().collect();
    for base in quarantined {
        let (id, i) = locate(rt, base);
        let page = &rt.heap.pages[id];
        // SAFETY: `base` is a quarantined block (a key of `free_sites`):
        // check mode keeps its alloc and quarantine bits set forever, so the
        // sweep never frees it and its page is never released; the block's
        // `block_size` bytes are mapped. The program is stopped in the
        // collector, so nothing writes them while this slice lives.
        let bytes = unsafe { std::slice::from_raw_parts(base as *const u8, page.block_size) };
        if let Some(off) = bytes.iter().position(|&b| b != 0xA5) {
            msgs.push(format!(
                "sspur check: write after free at offset {off} of a {}-byte block: allocated at {}, freed at {}",
                page.block_size,
                rt.site_name(page.sites.get(i).copied().unwrap_or(0)),
                rt.site_name(rt.free_sites.get(&base).copied().unwrap_or(0)),
            ));
            // Refill so one write is reported once.
            // SAFETY: the same quarantined, mapped block; `bytes` is not used
            // after this point, so the write aliases no live reference.
            unsafe { std::ptr::write_bytes(base as *mut u8, 0xA5, page.block_size) };
        }
    }
    for m in msgs {
        crate::out::write_stderr_raw(format!("{m}\n").as_bytes());
        rt.reports.push(m);
    }
}

fn locate(rt: &Rt, base: usize) -> (usize, usize) {
    let id = rt.heap.map_get(base) as usize - 1;
    (id, rt.heap.pages[id].index_of(base))
}

/// Frees every allocated, unmarked, unquarantined block; releases empty
/// pages; records pages with free blocks; sets the next pacing threshold.
fn sweep(rt: &mut Rt) {
    let counting = rt.counting;
    let mut live = 0usize;
    for id in 0..rt.heap.pages.len() {
        let page = &mut rt.heap.pages[id];
        if !page.in_use || page.cached {
            continue;
        }
        let words = page.nblocks.div_ceil(64);
        let mut live_blocks = 0usize;
        let mut dead_blocks = 0usize;
        for w in 0..words {
            let garbage = page.alloc[w] & !page.mark[w] & !page.quarantine[w];
            if garbage != 0 {
                let mut g = garbage;
                while g != 0 {
                    let i = w * 64 + g.trailing_zeros() as usize;
                    g &= g - 1;
                    crate::heap::note_death(page, i, &mut rt.heap.tier);
                    if page.kind as usize == POINTER && page.class != LARGE {
                        let b = page.block_addr(i);
                        // SAFETY: block `i` of an in-use small page lies in
                        // the page's mapping; it is unmarked garbage, so no
                        // root or live block points at it and no Rust
                        // reference covers heap memory.
                        unsafe { std::ptr::write_bytes(b as *mut u8, 0, page.block_size) };
                    }
                }
                dead_blocks += garbage.count_ones() as usize;
                page.alloc[w] &= !garbage;
            }
            live_blocks += page.alloc[w].count_ones() as usize;
        }
        let size = page.block_size;
        let large = page.class == LARGE;
        let k = page.kind as usize * NUM_CLASSES + page.class as usize;
        if dead_blocks > 0 {
            rt.heap
                .tier
                .swept(crate::heap::hist_class(&rt.heap.pages[id]), dead_blocks);
        }
        if counting {
            rt.counters.collected_blocks += dead_blocks as u64;
            rt.counters.collected_bytes += (dead_blocks * size) as u64;
        }
        live += live_blocks * size;
        if live_blocks == 0 {
            if large {
                rt.heap.release_large(id);
            } else {
                rt.heap.release_small(id);
            }
        } else if !large && live_blocks < rt.heap.pages[id].nblocks {
            rt.heap.partial[k].push(id as u32);
        }
    }
    rt.live_after_gc = live;
    let target = (live as f64 * rt.settings.gc_factor) as usize;
    rt.heap.gc_threshold = target.max(rt.settings.gc_min_bytes);
}

/// Tells valgrind's memcheck that the stack words the scan reads are
/// defined (dead words are, as far as a conservative scan cares). A no-op
/// outside valgrind.
#[cfg(target_arch = "x86_64")]
fn valgrind_make_defined(addr: usize, len: usize) {
    // VG_USERREQ__MAKE_MEM_DEFINED_IF_ADDRESSABLE = TOOL_BASE('M','C') + 11
    let args: [usize; 6] = [0x4D43_0000 + 11, addr, len, 0, 0, 0];
    let mut result: usize = 0;
    // SAFETY: valgrind's client-request preamble: the rotates of rdi sum to
    // 128 (rdi is unchanged and declared clobbered anyway) and `xchg rbx,
    // rbx` is a no-op on hardware; under valgrind it reads the six words of
    // `args` (a live local) and writes rdx. No memory of ours is written.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            out("rdi") _,
            options(nostack)
        );
    }
    std::hint::black_box(result);
}

#[cfg(not(target_arch = "x86_64"))]
fn valgrind_make_defined(_addr: usize, _len: usize) {}
