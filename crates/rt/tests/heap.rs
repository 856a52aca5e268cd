//! The heap: size classes, page map lookups, free-list order, the large
//! block cache, zeroing, fault injection and "counting only when read".

mod common;

use common::*;
use rt::heap::{class_of, CLASS_SIZES, MAX_SMALL, NUM_CLASSES, PAGE_SIZE};
use rt::Settings;

#[test]
fn size_classes() {
    assert_eq!(CLASS_SIZES.len(), NUM_CLASSES);
    assert_eq!(&CLASS_SIZES[..9], &[16, 32, 48, 64, 80, 96, 112, 128, 160]);
    assert_eq!(&CLASS_SIZES[12..16], &[320, 384, 448, 512]);
    assert_eq!(CLASS_SIZES[NUM_CLASSES - 1], MAX_SMALL);
    // Every size maps to the smallest class that holds it.
    for size in 1..=MAX_SMALL {
        let c = class_of(size);
        assert!(CLASS_SIZES[c] >= size, "{size} -> {}", CLASS_SIZES[c]);
        assert!(
            c == 0 || CLASS_SIZES[c - 1] < size,
            "{size} -> class {c} not the smallest"
        );
    }
    // Four classes per power of two above 128.
    for pow in [128usize, 256, 1024, 16384] {
        let n = CLASS_SIZES
            .iter()
            .filter(|&&s| s > pow && s <= 2 * pow)
            .count();
        assert_eq!(n, 4, "classes in ({pow}, {}]", 2 * pow);
    }
}

#[test]
fn blocks_have_their_class_size_and_do_not_overlap() {
    let _g = fresh(Settings::DEFAULT);
    let mut blocks = Vec::new();
    for (i, &size) in [
        1usize,
        16,
        17,
        100,
        128,
        129,
        1000,
        4096,
        20000,
        MAX_SMALL,
        MAX_SMALL + 1,
        200_000,
    ]
    .iter()
    .enumerate()
    {
        for _ in 0..3 {
            let p = alloc(size, (i % 2) as u32);
            let (base, usable) = rt::block_of(p).unwrap();
            assert_eq!(base, p);
            assert!(usable >= size);
            blocks.push((p as usize, usable));
        }
    }
    blocks.sort();
    for w in blocks.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
    }
}

#[test]
fn page_map_lookups() {
    let _g = fresh(Settings::DEFAULT);
    let a = alloc(48, 0);
    let b = alloc(48, 0);
    assert_eq!(b as usize, a as usize + 48, "bump allocation is contiguous");
    // Interior pointers find their block.
    for off in [0usize, 1, 24, 47] {
        assert_eq!(rt::block_of(unsafe { a.add(off) }), Some((a, 48)));
    }
    // One past the end of a is the start of b.
    assert_eq!(rt::block_of(unsafe { a.add(48) }), Some((b, 48)));
    // Past the last handed-out block: nothing allocated there.
    assert_eq!(rt::block_of(unsafe { b.add(48) }), None);
    // A large block: interior and end.
    let l = alloc(100_000, 0);
    assert_eq!(
        rt::block_of(unsafe { l.add(99_999) }),
        Some((l, 2 * PAGE_SIZE))
    );
    assert_ne!(
        rt::block_of(unsafe { l.add(2 * PAGE_SIZE) }).map(|x| x.0),
        Some(l),
        "one past a large block is not in it"
    );
    // Foreign addresses.
    let local = 0u64;
    static STATIC: u64 = 7;
    let foreign: [usize; 6] = [
        0,
        1,
        &local as *const u64 as usize,
        &STATIC as *const u64 as usize,
        usize::MAX,
        1 << 60,
    ];
    for addr in foreign {
        assert_eq!(rt::block_of(addr as *const u8), None, "{addr:#x}");
    }
}

#[test]
fn freed_block_is_next_out_of_its_class() {
    let _g = fresh(Settings::DEFAULT);
    // Use up the class's first page so the order holds whichever fast path
    // (bump or free list) is tried first.
    let size = 256;
    let blocks: Vec<*mut u8> = (0..PAGE_SIZE / size).map(|_| alloc(size, 0)).collect();
    let (a, b) = (blocks[3], blocks[10]);
    unsafe { rt::sspur_free(a, 0) };
    unsafe { rt::sspur_free(b.add(17), 0) }; // interior pointers free their block
    assert_eq!(alloc(size, 0), b);
    assert_eq!(alloc(size, 0), a);
    // Another class is unaffected.
    unsafe { rt::sspur_free(blocks[0], 0) };
    assert_ne!(alloc(64, 0), blocks[0]);
}

#[test]
fn pointer_blocks_are_zeroed_when_freed() {
    let _g = fresh(Settings::DEFAULT);
    let size = 96;
    // Use up the first page so the freed block is the next one out.
    let _fill: Vec<*mut u8> = (0..PAGE_SIZE / size).map(|_| alloc(size, 1)).collect();
    let p = _fill[5];
    assert!(
        unsafe { std::slice::from_raw_parts(p, size) }
            .iter()
            .all(|&b| b == 0),
        "fresh pointer block is zero"
    );
    unsafe { std::ptr::write_bytes(p, 0xFF, size) };
    unsafe { rt::sspur_free(p, 0) };
    let words = unsafe { std::slice::from_raw_parts(p as *const usize, size / 8) };
    assert!(
        words[1..].iter().all(|&w| w == 0),
        "freed pointer block zeroed except its link"
    );
    let q = alloc(size, 1);
    assert_eq!(q, p);
    assert!(
        unsafe { std::slice::from_raw_parts(q, size) }
            .iter()
            .all(|&b| b == 0),
        "reused pointer block is zero"
    );
    // A data block keeps its bytes (only the link word is overwritten).
    let d = alloc(size, 0);
    unsafe { std::ptr::write_bytes(d, 0x42, size) };
    let _fill: Vec<*mut u8> = (0..PAGE_SIZE / size).map(|_| alloc(size, 0)).collect();
    unsafe { rt::sspur_free(d, 0) };
    assert_eq!(unsafe { *d.add(size - 1) }, 0x42);
}

#[test]
fn large_block_cache() {
    let _g = fresh(counting());
    let a = alloc(100_000, 0); // two pages
    unsafe { *a = 9 };
    unsafe { rt::sspur_free(a, 0) };
    assert_eq!(rt::stats().large_cache_bytes, 2 * PAGE_SIZE);
    assert_eq!(rt::block_of(a), None, "a cached block is not allocated");
    // Same page count: served from the cache, same address, still mapped.
    let b = alloc(2 * PAGE_SIZE, 0);
    assert_eq!(b, a);
    assert_eq!(rt::stats().large_cache_bytes, 0);
    unsafe { rt::sspur_free(b, 0) };
    // A pointer request is never served from the cache (its block must be
    // zero); like any request the cache can't serve, it releases the cache.
    let p = alloc(100_000, 1);
    assert!(unsafe { std::slice::from_raw_parts(p, 100_000) }
        .iter()
        .all(|&x| x == 0));
    assert_eq!(rt::stats().large_cache_bytes, 0);
    let d = alloc(100_000, 0);
    unsafe { rt::sspur_free(d, 0) };
    assert_eq!(rt::stats().large_cache_bytes, 2 * PAGE_SIZE);
    // A data request of another page count releases it too.
    let heap_before = rt::stats().heap_bytes;
    let c = alloc(300_000, 0);
    assert_eq!(rt::stats().large_cache_bytes, 0);
    assert_eq!(
        rt::stats().heap_bytes,
        heap_before - 2 * PAGE_SIZE + 5 * PAGE_SIZE
    );
    assert_eq!(rt::block_of(c), Some((c, 5 * PAGE_SIZE)));
    // Freed pointer large blocks are unmapped at once, not cached.
    unsafe { rt::sspur_free(p, 0) };
    assert_eq!(rt::stats().large_cache_bytes, 0);
    assert_eq!(rt::block_of(p), None);
    // The cache holds at most 64 MB.
    let big: Vec<*mut u8> = (0..3).map(|_| alloc(30 << 20, 0)).collect();
    for &p in &big {
        unsafe { rt::sspur_free(p, 0) };
    }
    assert!(rt::stats().large_cache_bytes <= rt::heap::LARGE_CACHE_LIMIT);
    assert_eq!(rt::stats().large_cache_bytes, 2 * (30 << 20));
}

#[test]
fn large_block_cache_gives_a_site_its_own_block_back() {
    let _g = fresh(counting());
    // Site 1's block is large, site 2's small; both freed.
    let a = rt::sspur_alloc(6 * PAGE_SIZE, 0, 1);
    let b = rt::sspur_alloc(2 * PAGE_SIZE, 0, 2);
    // SAFETY: `a` and `b` are this test's blocks, not used again.
    unsafe { rt::sspur_free(a, 0) };
    unsafe { rt::sspur_free(b, 0) };
    // Site 1 asks small (a buffer that will grow in place): it gets its
    // own block back, not the smallest that fits.
    let a2 = rt::sspur_alloc(PAGE_SIZE + 1, 0, 1);
    assert_eq!(a2, a);
    // A site with no block of its own gets the smallest that fits.
    let c = rt::sspur_alloc(PAGE_SIZE + 1, 0, 3);
    assert_eq!(c, b);
    // SAFETY: `a2` and `c` are this test's blocks, not used again.
    unsafe { rt::sspur_free(a2, 0) };
    unsafe { rt::sspur_free(c, 0) };
    let d = rt::sspur_alloc(PAGE_SIZE + 1, 0, 0);
    assert_eq!(d, b, "no site: the smallest that fits");
}

#[test]
fn free_ignores_foreign_pointers() {
    let _g = fresh(counting());
    static TEXT: &str = "static";
    unsafe { rt::sspur_free(TEXT.as_ptr() as *mut u8, 0) };
    unsafe { rt::sspur_free(std::ptr::null_mut(), 0) };
    assert_eq!(rt::stats().counters.freed_last_use_blocks, 0);
}

#[test]
fn free_strs_frees_elements_and_buffer() {
    let _g = fresh(counting());
    let s1 = alloc(10, 0);
    let s2 = alloc(40, 0);
    static LIT: &str = "lit";
    let buf = alloc(4 * 16, 1) as *mut usize;
    let elems = [
        (s1 as usize, 10usize),
        (LIT.as_ptr() as usize, 3),
        (s2 as usize, 40),
        (0, 0),
    ];
    for (i, (p, n)) in elems.iter().enumerate() {
        unsafe {
            *buf.add(2 * i) = *p;
            *buf.add(2 * i + 1) = *n;
        }
    }
    unsafe { rt::sspur_free_strs(buf as *mut u8, 4, 0) };
    let c = rt::stats().counters;
    assert_eq!(
        c.freed_last_use_blocks, 3,
        "two heap strings and the buffer"
    );
    assert_eq!(c.freed_last_use_bytes, 16 + 48 + 64);
    // A zero-length list has no buffer: nothing freed.
    unsafe { rt::sspur_free_strs(alloc(16, 1), 0, 0) };
    assert_eq!(rt::stats().counters.freed_last_use_blocks, 3);
    // Runtime temporaries are counted apart.
    let t = rt::alloc_temp(100, rt::DATA as u32);
    unsafe { rt::free_temp(t) };
    let c = rt::stats().counters;
    assert_eq!((c.freed_last_use_blocks, c.freed_internal_blocks), (3, 1));
    let report = rt::exit_report();
    assert!(
        report.contains("freed at last use: 3 blocks, 128 bytes\n"),
        "{report}"
    );
}

#[test]
fn gc_mode_frees_nothing() {
    let _g = fresh(Settings {
        mem: rt::MemMode::Gc,
        ..counting()
    });
    assert_eq!(rt::mem_mode(), rt::MemMode::Gc);
    let p = alloc(64, 0);
    unsafe { rt::sspur_free(p, 0) };
    let t = rt::alloc_temp(64, 0);
    unsafe { rt::free_temp(t) };
    assert!(is_allocated(p as usize) && is_allocated(t as usize));
    assert_ne!(alloc(64, 0), p);
    assert_eq!(rt::stats().counters.freed_last_use_blocks, 0);
}

#[test]
fn nth_allocation_fails_and_nothing_else_breaks() {
    let _g = fresh(Settings {
        fail_alloc_at: 5,
        ..Settings::DEFAULT
    });
    let mut kept = Vec::new();
    for n in 1..=20u64 {
        let size = if n % 7 == 0 { 70_000 } else { 24 * n as usize };
        let p = rt::sspur_alloc(size, (n % 2) as u32, 0);
        if n == 5 {
            assert!(p.is_null(), "attempt 5 must fail");
            continue;
        }
        assert!(!p.is_null(), "attempt {n} must succeed");
        unsafe { std::ptr::write_bytes(p, n as u8, size) };
        kept.push((p, size, n as u8));
    }
    for (p, size, fill) in &kept {
        assert!(unsafe { std::slice::from_raw_parts(*p, *size) }
            .iter()
            .all(|b| b == fill));
    }
    unsafe { rt::sspur_free(kept[0].0, 0) };
    collect();
    let s = rt::stats();
    assert_eq!(s.counters.attempts, 20);
    assert_eq!(s.counters.alloc_blocks, 19);
    let report = rt::exit_report();
    assert!(report.is_empty(), "no report asked: {report}");
}

#[test]
fn alloc_report_lines() {
    let _g = fresh(Settings {
        alloc_report: true,
        ..Settings::DEFAULT
    });
    let p = alloc(10, 0);
    alloc(10, 0);
    unsafe { rt::sspur_free(p, 0) };
    assert_eq!(rt::exit_report(), "alloc attempts: 2\nlive blocks: 1\n");
}

/// With no setting that reads them, allocation and free touch no counter.
#[test]
fn counters_untouched_when_nothing_reads_them() {
    let _g = fresh(Settings::DEFAULT);
    let mut ps = Vec::new();
    for i in 0..10_000 {
        ps.push(alloc(16 + i % 3000, (i % 2) as u32));
    }
    for p in ps {
        unsafe { rt::sspur_free(p, 0) };
    }
    let t = rt::alloc_temp(100, 0);
    unsafe { rt::free_temp(t) };
    let s = rt::stats();
    assert!(!s.counting);
    assert_eq!(s.counters, rt::Counters::default());
}

/// The hot path holds no atomic instruction: disassemble the entry points
/// compiled into this very test binary.
#[test]
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn hot_path_has_no_atomic_instruction() {
    let exe = std::env::current_exe().unwrap();
    // Make sure the symbols are linked in.
    std::hint::black_box((rt::sspur_alloc as *const (), rt::sspur_free as *const ()));
    let atomic: &[&str] = if cfg!(target_arch = "x86_64") {
        &["lock ", "xchg ", "cmpxchg"]
    } else {
        &["ldaxr", "stlxr", "ldxr", "stxr", "ldadd", "cas", "swp"]
    };
    for sym in ["sspur_alloc", "sspur_free"] {
        let out = std::process::Command::new("objdump")
            .arg("-d")
            .arg("--no-show-raw-insn")
            .arg(format!("--disassemble={sym}"))
            .arg(&exe)
            .output()
            .expect("objdump must be installed to run this test");
        let text = String::from_utf8_lossy(&out.stdout);
        let body: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert!(body.len() > 3, "no disassembly of {sym}: {text}");
        for line in body {
            for a in atomic {
                assert!(
                    !line.contains(a),
                    "{sym} holds an atomic instruction: {line}"
                );
            }
        }
    }
}

/// `Page::set_range` sets the bits `Page::set` would, one word at a time
/// (the allocator records a bump range's blocks with it).
#[test]
fn set_range_sets_the_bits_one_by_one_would() {
    use rt::heap::{Page, BITMAP_WORDS};
    let n = 64 * BITMAP_WORDS;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let first = (seed % n as u64) as usize;
        let count = ((seed >> 20) % (n - first + 1) as u64) as usize;
        let count = if seed & 1 == 0 { count % 200 } else { count };
        let before = [seed.rotate_left(7) & 0x5555_0000_ffff_0f0f; BITMAP_WORDS];
        let (mut a, mut b) = (before, before);
        Page::set_range(&mut a, first, count);
        for i in first..first + count {
            Page::set(&mut b, i);
        }
        assert_eq!(a, b, "first {first} count {count}");
    }
}

/// The sizes and kinds (0 data, 1 pointer) of the blocks
/// `a_dropped_old_block_comes_back_young` frees: a data block, a pointer
/// block the free clears inline, one it clears with `memset`.
const DROPPED: [(usize, u32); 3] = [(256, 0), (48, 1), (96, 1)];
const EACH: usize = 16;

/// A compiled drop (`sspur_free_cell`, the plain default mode) of a block
/// a collection made old: the block is handed out again young, so once
/// the program lets go of it the next minor collection reclaims it. A
/// mark left on it would make the collector keep it as old.
#[test]
fn a_dropped_old_block_comes_back_young() {
    on_fresh_stack(dropped_old_body);
}

#[inline(never)]
fn dropped_old_body() {
    let _g = fresh(Settings::DEFAULT);
    let old = promoted();
    let again = drop_and_take_again(&old);
    scrub_stack();
    rt::collect_minor();
    assert_reclaimed(&again, "blocks freed old and handed out again");
}

/// Blocks kept through a minor collection (old now), masked.
#[inline(never)]
fn promoted() -> [usize; 3 * EACH] {
    let mut blocks = [0usize; 3 * EACH];
    for (i, b) in blocks.iter_mut().enumerate() {
        let (size, kind) = DROPPED[i / EACH];
        *b = alloc(size, kind) as usize;
    }
    std::hint::black_box(&mut blocks);
    rt::collect_minor();
    for b in &blocks {
        assert!(is_allocated(*b), "a block on the stack survives");
    }
    blocks.map(|b| b ^ MASK)
}

/// Allocates a block of each one's class (its page is young again), drops
/// each old block as compiled code does, and takes it again: the free list
/// hands out the freed block first. Returns them masked.
#[inline(never)]
fn drop_and_take_again(old: &[usize; 3 * EACH]) -> [usize; 3 * EACH] {
    let mut again = [0usize; 3 * EACH];
    for (i, m) in old.iter().enumerate() {
        let (size, kind) = DROPPED[i / EACH];
        let p = m ^ MASK;
        std::hint::black_box(alloc(size, kind));
        let what = if kind == 0 {
            rt::BlockKind::List
        } else {
            rt::BlockKind::Cell
        };
        // SAFETY: the test owns the block and uses it only as an address
        // afterwards.
        unsafe { rt::sspur_free_cell(p as u64, what as u64, 0) };
        let q = alloc(size, kind);
        assert_eq!(q as usize, p, "the freed block is the next one out");
        again[i] = q as usize ^ MASK;
    }
    again
}
