//! The collector: what survives (locals, callee-saved registers, interior
//! and one-past-the-end pointers, chains of pointer blocks, roots) and what
//! is reclaimed (unreachable blocks, blocks only data blocks point to).

mod common;

use common::*;
use rt::heap::PAGE_SIZE;
use rt::Settings;

fn word(p: *mut u8, i: usize) -> *mut usize {
    unsafe { (p as *mut usize).add(i) }
}

#[test]
fn unreachable_blocks_are_reclaimed() {
    on_fresh_stack(unreachable_blocks_are_reclaimed_body);
}

#[inline(never)]
fn unreachable_blocks_are_reclaimed_body() {
    let _g = fresh(counting());
    let small = garbage(1000, 40, 0);
    let ptrs = garbage(1000, 200, 1);
    let large = garbage(3, 100_000, 1);
    collect();
    assert_reclaimed(&small, "small data blocks");
    assert_reclaimed(&ptrs, "small pointer blocks");
    assert_reclaimed(&large, "large blocks");
    let s = rt::stats();
    assert_eq!(s.collections, 1);
    assert!(
        s.counters.collected_blocks >= 2003 - 3 * STRAY_ALLOWANCE as u64,
        "{:?}",
        s.counters
    );
    // Empty pages went back to the OS.
    assert!(s.heap_bytes < s.peak_heap_bytes);
}

#[test]
fn block_reachable_only_from_a_local_survives() {
    let _g = fresh(Settings::DEFAULT);
    let p = std::hint::black_box(alloc(64, 0));
    unsafe { std::ptr::write_bytes(p, 7, 64) };
    collect();
    assert!(is_allocated(p as usize));
    assert_eq!(unsafe { *p.add(63) }, 7);
}

#[test]
fn interior_and_one_past_the_end_pointers_keep_their_block() {
    let _g = fresh(Settings::DEFAULT);
    let (interior, end) = keep_only_derived();
    collect();
    let (a, b) = (interior - 5, end - 64);
    assert!(is_allocated(a), "interior pointer kept nothing");
    assert!(is_allocated(b), "one-past-the-end pointer kept nothing");
    std::hint::black_box((interior, end));
}

#[inline(never)]
fn keep_only_derived() -> (usize, usize) {
    let a = alloc(64, 0) as usize;
    let b = alloc(64, 0) as usize;
    (a + 5, b + 64)
}

#[test]
fn chain_of_pointer_blocks_survives() {
    let _g = fresh(Settings::DEFAULT);
    let head = build_chain(50);
    collect();
    let mut p = head;
    for i in 0..50 {
        assert!(is_allocated(p as usize), "link {i} reclaimed");
        assert_eq!(unsafe { *word(p, 1) }, i);
        p = unsafe { *word(p, 0) as *mut u8 };
    }
    assert!(p.is_null());
    std::hint::black_box(head);
}

#[inline(never)]
fn build_chain(n: usize) -> *mut u8 {
    let mut next = std::ptr::null_mut::<u8>();
    for i in (0..n).rev() {
        // Large and small links alike; the link points into the middle.
        let size = if i % 10 == 3 { 70_000 } else { 32 };
        let b = alloc(size, 1);
        unsafe {
            *word(b, 0) = if next.is_null() { 0 } else { next as usize };
            *word(b, 1) = i;
        }
        next = b;
    }
    next
}

#[test]
fn data_blocks_are_never_scanned() {
    on_fresh_stack(data_blocks_are_never_scanned_body);
}

#[inline(never)]
fn data_blocks_are_never_scanned_body() {
    let _g = fresh(Settings::DEFAULT);
    let (data, targets) = data_pointing_at_blocks(100);
    collect();
    assert!(is_allocated(data as usize));
    assert_reclaimed(&targets, "blocks pointed to only by a data block");
    std::hint::black_box(data);
}

#[inline(never)]
fn data_pointing_at_blocks(n: usize) -> (*mut u8, Vec<usize>) {
    let data = alloc(n * 8, 0);
    let targets: Vec<usize> = (0..n)
        .map(|i| {
            let t = alloc(48, 1);
            unsafe { *word(data, i) = t as usize + i % 48 };
            t as usize ^ MASK
        })
        .collect();
    (data, targets)
}

/// Stores the unmasked address in its own frame.
#[inline(never)]
fn set_global(g: *mut usize, masked: usize) {
    unsafe { *g = masked ^ MASK };
}

/// Tests that count reclaimed blocks run on a fresh stack: a test thread
/// reused from earlier tests (or a cached thread stack) may hold their
/// pointers, into the same reused addresses, in frame slots this test
/// never writes; one such word into the table keeps all 200 blocks.
#[test]
fn registered_roots_are_scanned() {
    on_fresh_stack(registered_roots_body);
}

#[inline(never)]
fn registered_roots_body() {
    let _g = fresh(Settings::DEFAULT);
    static mut GLOBAL: usize = 0;
    // SAFETY: a static, readable for the rest of the run.
    unsafe { rt::add_root(&raw const GLOBAL) };
    let (table, blocks) = table_of_blocks(200);
    set_global(&raw mut GLOBAL, table);
    collect();
    assert!(masked_allocated(table));
    assert_eq!(
        blocks.iter().filter(|&&m| masked_allocated(m)).count(),
        200,
        "blocks reachable from a root were reclaimed"
    );
    unsafe { GLOBAL = 0 };
    collect();
    assert_reclaimed(&blocks, "blocks no longer reachable from the root");
}

/// A pointer block holding `n` fresh blocks; all addresses masked.
#[inline(never)]
fn table_of_blocks(n: usize) -> (usize, Vec<usize>) {
    let table = alloc(n * 8, 1);
    let blocks = (0..n)
        .map(|i| {
            let b = alloc(24, 0);
            unsafe { *word(table, i) = b as usize };
            b as usize ^ MASK
        })
        .collect();
    (table as usize ^ MASK, blocks)
}

/// A heap word pointing at a block's start does not also keep the block
/// allocated just before it (the end-pointer rule is for stack words only),
/// or every structure whose nodes point at their neighbours would keep all
/// garbage allocated before it.
#[test]
fn heap_words_at_a_block_start_keep_only_that_block() {
    on_fresh_stack(neighbour_body);
}

#[inline(never)]
fn neighbour_body() {
    let _g = fresh(Settings::DEFAULT);
    static mut TABLE: usize = 0;
    // SAFETY: a static, readable for the rest of the run.
    unsafe { rt::add_root(&raw const TABLE) };
    let (table, garbage, live) = interleaved(200);
    set_global(&raw mut TABLE, table);
    collect();
    assert!(
        live.iter().all(|&m| masked_allocated(m)),
        "live blocks were reclaimed"
    );
    assert_reclaimed(&garbage, "blocks allocated just before a live one");
    unsafe { TABLE = 0 };
}

/// A table of `n` live pointer blocks, each allocated right after a
/// garbage block of the same class (so its start is the garbage's end).
#[inline(never)]
fn interleaved(n: usize) -> (usize, Vec<usize>, Vec<usize>) {
    let table = alloc(n * 8, 1);
    let (mut garbage, mut live) = (Vec::new(), Vec::new());
    for i in 0..n {
        let g = alloc(32, 1);
        let l = alloc(32, 1);
        assert_eq!(g as usize + 32, l as usize, "adjacent blocks of one class");
        unsafe { *word(table, i) = l as usize };
        garbage.push(g as usize ^ MASK);
        live.push(l as usize ^ MASK);
    }
    (table as usize ^ MASK, garbage, live)
}

/// The only reference sits in a callee-saved register across the collection.
#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn block_reachable_only_from_a_callee_saved_register_survives() {
    let _g = fresh(Settings::DEFAULT);
    let masked = garbage(1, 80, 0)[0];
    scrub_stack();
    let after: usize;
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!(
            "xor r12, r13",
            "call {collect}",
            "xor r12, r13",
            collect = sym collect_from_asm,
            in("r13") MASK,
            inout("r12") masked => after,
            clobber_abi("C"),
        );
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!(
            "eor x19, x19, x20",
            "bl {collect}",
            "eor x19, x19, x20",
            collect = sym collect_from_asm,
            in("x20") MASK,
            inout("x19") masked => after,
            clobber_abi("C"),
        );
    }
    assert_eq!(after, masked);
    assert!(
        masked_allocated(masked),
        "block held only in a callee-saved register was reclaimed"
    );
}

extern "C" fn collect_from_asm() {
    rt::sspur_collect();
}

#[test]
fn pacing_collects_after_the_young_budget() {
    let _g = fresh(Settings {
        gc_young_bytes: 1 << 20,
        gc_min_bytes: 1 << 20,
        gc_factor: 2.0,
        ..counting()
    });
    // 10 MB of garbage: a minor collection per young megabyte, and the
    // heap stays near the budget (scaled up to 4x by survivors, of which
    // there are almost none).
    churn(20_000, 512);
    let s = rt::stats();
    assert!(s.gc.minor >= 8, "{:?}", s.gc);
    assert_eq!(s.gc.minor + s.gc.major, s.collections);
    assert!(
        s.peak_heap_bytes <= 2 * (1 << 20) + 2 * 64 * 1024,
        "peak {}",
        s.peak_heap_bytes
    );
}

#[inline(never)]
fn churn(n: usize, size: usize) {
    for _ in 0..n {
        std::hint::black_box(alloc(size, 1));
    }
}

#[test]
fn stress_mode_collects_every_n_kilobytes() {
    let _g = fresh(Settings {
        stress_bytes: 64 << 10,
        ..counting()
    });
    // 1000 KB. Each step is a collection or a mark slice (how many slices
    // a cycle takes depends on what the conservative scan finds greyed).
    churn(1000, 1024);
    let s = rt::stats();
    assert_eq!(s.collections + s.gc.slices, 15, "{:?}", s.gc);
}

#[test]
fn collected_blocks_are_reused_and_pointer_blocks_come_back_zeroed() {
    // On a fresh stack, as the other reclaim tests: a stale word left on
    // the test thread's stack would keep garbage alive (conservative scan).
    on_fresh_stack(reused_body);
}

#[inline(never)]
fn reused_body() {
    let _g = fresh(Settings::DEFAULT);
    let g = garbage(2000, 64, 1);
    for &m in &g {
        unsafe { std::ptr::write_bytes((m ^ MASK) as *mut u8, 0xEE, 64) };
    }
    // Keep the pages alive with one survivor each so they become partial;
    // the survivors are registered roots (a Rust Vec is not scanned).
    static mut KEEP: [usize; 2] = [0; 2];
    let keep: Vec<usize> = g.iter().step_by(1024).map(|m| m ^ MASK).collect();
    assert_eq!(keep.len(), 2);
    for (i, &k) in keep.iter().enumerate() {
        // SAFETY: statics, readable for the rest of the run; one thread.
        unsafe {
            let slot = (&raw mut KEEP).cast::<usize>().add(i);
            slot.write(k);
            rt::add_root(slot);
        }
    }
    collect();
    let heap = rt::stats().heap_bytes;
    for _ in 0..2000 - keep.len() {
        let p = alloc(64, 1);
        assert!(unsafe { std::slice::from_raw_parts(p, 64) }
            .iter()
            .all(|&b| b == 0));
    }
    assert_eq!(rt::stats().heap_bytes, heap, "reclaimed blocks were reused");
    std::hint::black_box(keep);
}

#[test]
fn stats_report_lines() {
    on_fresh_stack(stats_report_lines_body);
}

#[inline(never)]
fn stats_report_lines_body() {
    let _g = fresh(counting());
    let p = alloc(100, 0);
    unsafe { rt::sspur_free(p, 0) };
    garbage(3, 16, 0);
    collect();
    let report = rt::exit_report();
    let lines: Vec<&str> = report.lines().collect();
    let collected = rt::stats().counters.collected_blocks;
    assert!(collected + STRAY_ALLOWANCE as u64 >= 3);
    assert_eq!(lines[0], "freed at last use: 1 blocks, 112 bytes");
    assert_eq!(lines[1], "left for the collector: 3 blocks, 48 bytes");
    assert_eq!(
        lines[2],
        format!("collected: {collected} blocks, {} bytes", collected * 16)
    );
    assert_eq!(lines[3], "collections: 1");
    assert_eq!(lines[4], "minor collections: 0, major collections: 1");
    assert!(lines[5].starts_with("pauses: total "), "{report}");
    assert!(lines[5].contains(" ms, longest "), "{report}");
    assert_eq!(lines[6], "promoted: 0 bytes");
    assert!(lines[7].starts_with("peak heap: "), "{report}");
}

#[test]
fn sites_report_names_the_sites_left_for_the_collector() {
    let _g = fresh(Settings {
        gc_stats: rt::StatsMode::Sites,
        ..Settings::DEFAULT
    });
    rt::set_site_names(vec![
        "a.ssp:1:1 list literal".into(),
        "a.ssp:2:5 string from join".into(),
    ]);
    for _ in 0..3 {
        rt::sspur_alloc(100, 0, 1);
    }
    let freed = rt::sspur_alloc(1000, 0, 2);
    unsafe { rt::sspur_free(freed, 9) };
    rt::sspur_alloc(2000, 0, 2);
    let report = rt::exit_report();
    let tail: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("sites"))
        .collect();
    assert_eq!(
        tail,
        [
            "sites left for the collector:",
            "  a.ssp:2:5 string from join: 1 blocks, 2048 bytes",
            "  a.ssp:1:1 list literal: 3 blocks, 336 bytes"
        ],
        "{report}"
    );
}

#[test]
fn a_swept_page_is_handed_out_again_lowest_first_and_comes_back_zeroed() {
    on_fresh_stack(carve_body);
}

/// The survivors' indices in the page: runs of free blocks between them of
/// one block, of two, across bitmap words and up to the end of the page.
const SURVIVORS: [usize; 9] = [1, 2, 5, 63, 64, 65, 130, 700, 1364];

/// One page of 48-byte pointer blocks (the class no other block here
/// uses), filled with a pattern; the survivors are held by a holder block
/// a registered root points at, the rest is garbage. Returns the blocks,
/// masked (a Rust Vec is not scanned).
#[inline(never)]
fn carve_setup() -> Vec<usize> {
    let per_page = PAGE_SIZE / 48;
    assert_eq!(per_page, 1365);
    let blocks: Vec<usize> = (0..per_page)
        .map(|_| alloc(48, 1) as usize ^ MASK)
        .collect();
    for (i, &m) in blocks.iter().enumerate() {
        assert_eq!(m ^ MASK, (blocks[0] ^ MASK) + 48 * i, "one bump page");
        // SAFETY: a live 48-byte block just allocated, written within it.
        unsafe { std::ptr::write_bytes((m ^ MASK) as *mut u8, 0xEE, 48) };
    }
    static mut HOLDER: usize = 0;
    let holder = alloc(SURVIVORS.len() * 8, 1) as usize;
    for (j, &i) in SURVIVORS.iter().enumerate() {
        // SAFETY: `holder` has one word per survivor; j < SURVIVORS.len().
        unsafe { *(holder as *mut usize).add(j) = blocks[i] ^ MASK };
    }
    // SAFETY: a static, readable for the rest of the run; one thread.
    unsafe {
        HOLDER = holder;
        rt::add_root(&raw const HOLDER);
    }
    blocks
}

#[inline(never)]
fn carve_body() {
    let _g = fresh(Settings::DEFAULT);
    let blocks = carve_setup();
    let per_page = blocks.len();
    collect();
    let first = blocks[0] ^ MASK;
    let heap = rt::stats().heap_bytes;
    // The free blocks come back skipping the survivors, each zeroed (it
    // held the pattern when it died), no new page taken, in address order:
    // a bitmap word of free blocks at a time, whatever their runs.
    let free = |i: &usize| !SURVIVORS.contains(i);
    let expected: Vec<usize> = (0..per_page).filter(free).map(|i| first + 48 * i).collect();
    for &want in &expected {
        let p = alloc(48, 1);
        assert_eq!(p as usize, want);
        // SAFETY: `p` is a live 48-byte block just allocated.
        assert!(unsafe { std::slice::from_raw_parts(p, 48) }
            .iter()
            .all(|&b| b == 0));
    }
    assert_eq!(rt::stats().heap_bytes, heap, "the page was reused");
    // The survivors kept their contents.
    for &i in &SURVIVORS {
        let b = blocks[i] ^ MASK;
        // SAFETY: a survivor, held by the rooted holder, so still live.
        assert!(unsafe { std::slice::from_raw_parts(b as *const u8, 48) }
            .iter()
            .all(|&b| b == 0xEE));
    }
    // The page is full: the next block comes from a new page.
    let next = alloc(48, 1) as usize;
    assert!(next < first || next >= first + PAGE_SIZE);
}

#[test]
fn a_swept_page_nearly_full_is_left_until_a_sweep_finds_it_sparser() {
    on_fresh_stack(dense_body);
}

static mut DENSE_HOLDER: usize = 0;

/// One page of 48-byte pointer blocks, all held by a rooted holder block
/// (one word each) but those whose index `dead` gives. Returns the page's
/// first block.
#[inline(never)]
fn dense_setup(dead: impl Fn(usize) -> bool) -> usize {
    let per_page = PAGE_SIZE / 48;
    let blocks: Vec<usize> = (0..per_page)
        .map(|_| alloc(48, 1) as usize ^ MASK)
        .collect();
    let holder = alloc(per_page * 8, 1) as usize;
    for (i, &m) in blocks.iter().enumerate() {
        assert_eq!(m ^ MASK, (blocks[0] ^ MASK) + 48 * i, "one bump page");
        if !dead(i) {
            // SAFETY: `holder` has one word per block; i < per_page.
            unsafe { *(holder as *mut usize).add(i) = m ^ MASK };
        }
    }
    // SAFETY: a static, readable for the rest of the run; one thread.
    unsafe {
        DENSE_HOLDER = holder;
        rt::add_root(&raw const DENSE_HOLDER);
    }
    blocks[0] ^ MASK
}

/// Lets go of the blocks of the held page whose index `dead` gives.
#[inline(never)]
fn dense_drop(dead: impl Fn(usize) -> bool) {
    for i in (0..PAGE_SIZE / 48).filter(|&i| dead(i)) {
        // SAFETY: the rooted holder has one word per block of the page.
        unsafe { *(DENSE_HOLDER as *mut usize).add(i) = 0 };
    }
}

/// Whether the next 48-byte pointer block comes from the page at `first`.
#[inline(never)]
fn next_in_page(first: usize) -> bool {
    let p = alloc(48, 1) as usize;
    p >= first && p < first + PAGE_SIZE
}

#[inline(never)]
fn dense_body() {
    let _g = fresh(Settings::DEFAULT);
    // 105 of 1365 blocks die: fewer than an eighth (171).
    let first = dense_setup(|i| i % 13 == 0);
    collect();
    assert!(
        !next_in_page(first),
        "a page with under an eighth of its blocks free was recycled"
    );
    // 105 + 273 die: more than an eighth. The next major collection's
    // sweep finds the page sparser and allocation takes its free blocks.
    dense_drop(|i| i % 5 == 0);
    collect();
    assert!(
        next_in_page(first),
        "a page with over an eighth of its blocks free was not recycled"
    );
}

/// What pacing did in one run of `incremental_body`: the statistics with
/// their clock readings (pause and CPU times) cleared.
static PACED: std::sync::Mutex<Vec<rt::Stats>> = std::sync::Mutex::new(Vec::new());

#[test]
fn incremental_major_collections_are_paced_by_work_not_time() {
    // The same operations twice give the same collections, slices and
    // bytes marked: a slice stops after a number of bytes read, never at a
    // clock reading, so the machine's load changes nothing.
    on_fresh_stack(incremental_body);
    on_fresh_stack(incremental_body);
    let runs = PACED.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0], runs[1]);
    let g = &runs[0].gc;
    // The old chain (16 MB) outgrows several thresholds: cycles, some of
    // several slices, none reading more than its work cap.
    assert!(g.cycles_started >= 2, "{g:?}");
    assert!(g.slices > g.cycles_started, "{g:?}");
    assert!(g.largest_slice <= rt::SLICE_MAX_WORK as u64, "{g:?}");
    assert!(g.largest_slice > 0, "{g:?}");
}

#[inline(never)]
fn incremental_body() {
    let _g = fresh(Settings {
        mem: rt::MemMode::Gc,
        ..counting()
    });
    // A chain of 64-byte pointer blocks, each holding the one before: it
    // lives to the end, promoted as it grows; garbage between its links.
    let mut head = std::ptr::null_mut::<u8>();
    for i in 0..(16 << 20) / 64 {
        let b = alloc(64, 1);
        // SAFETY: a fresh 64-byte block; young, so no barrier is needed.
        unsafe { *(b as *mut usize) = head as usize };
        head = std::hint::black_box(b);
        if i % 4 == 0 {
            churn(8, 256);
        }
    }
    let mut s = rt::stats();
    std::hint::black_box(head);
    for d in [
        &mut s.gc.total_pause,
        &mut s.gc.longest_pause,
        &mut s.gc.longest_minor,
        &mut s.gc.longest_major,
        &mut s.gc.cpu_total,
        &mut s.gc.cpu_longest,
        &mut s.gc.longest_slice,
        &mut s.gc.longest_final,
    ] {
        *d = std::time::Duration::ZERO;
    }
    PACED.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

#[test]
fn old_blocks_freed_at_their_last_use_lower_the_major_threshold() {
    on_fresh_stack(lowered_threshold_body);
}

#[inline(never)]
fn lowered_threshold_body() {
    let _g = fresh(Settings {
        gc_young_bytes: 1 << 20,
        gc_min_bytes: 1 << 20,
        gc_factor: 2.0,
        ..counting()
    });
    // An 8 MB buffer and a small pointer block live through a major
    // collection: the threshold is set at twice the live set.
    let big = alloc(8 << 20, 0);
    let small = alloc(64, 1);
    rt::sspur_collect();
    let after_major = rt::stats();
    assert!(after_major.live_after_last_gc >= 8 << 20, "{after_major:?}");
    assert!(after_major.major_threshold >= 16 << 20, "{after_major:?}");
    // The buffer is freed at its last use: the next collection finds the
    // old generation below the live set it was measured at, and the
    // threshold falls with it (never below the least growth).
    // SAFETY: `big` is a live block of this runtime, used no more.
    unsafe { rt::sspur_free(big, 0) };
    rt::collect_minor();
    let s = rt::stats();
    assert!(s.live_after_last_gc < 1 << 20, "{s:?}");
    assert!(s.major_threshold <= (2 << 20) + 64, "{s:?}");
    assert!(s.major_threshold >= 1 << 20, "{s:?}");
    // It never rises again before the next major collection, whatever
    // the old generation does.
    let kept: Vec<usize> = (0..4096).map(|_| alloc(256, 1) as usize).collect();
    rt::collect_minor();
    assert_eq!(rt::stats().major_threshold, s.major_threshold);
    std::hint::black_box((small, kept));
}
