//! The statistics tiers, on bare heaps of each tier side by side (whatever
//! the cargo features), and on the global heap the features choose.

mod common;

use rt::heap::{class_of, Heap, Order, CLASS_SIZES, DATA, NUM_CLASSES, PAGE_SIZE, POINTER};
use rt::tier::{BasicStats, FullStats, NoStats, Tier, TierStats};

fn heap<T: Tier>() -> Box<Heap<T>> {
    Box::new(Heap::new())
}

fn alloc<T: Tier>(h: &mut Heap<T>, size: usize, kind: usize) -> usize {
    let p = h.alloc(size, kind, Order::FreeListFirst);
    assert!(!p.is_null(), "allocation of {size} bytes failed");
    p as usize
}

/// Allocates `n` blocks through a window of `w` slots, freeing each slot's
/// previous block first: every block survives exactly `w - 1` allocations.
fn churn<T: Tier>(h: &mut Heap<T>, n: usize, w: usize, size: usize) {
    let mut window = vec![0usize; w];
    for i in 0..n {
        let slot = i % w;
        if window[slot] != 0 {
            h.free(window[slot]);
        }
        window[slot] = alloc(h, size, DATA);
    }
    for p in window {
        if p != 0 {
            h.free(p);
        }
    }
}

#[test]
fn no_stats_counts_nothing() {
    let mut h = heap::<NoStats>();
    churn(&mut h, 10_000, 64, 48);
    assert_eq!(h.tier_stats(), TierStats::ZERO);
    h.release_all();
}

#[test]
fn basic_counts_paths_frees_and_pages() {
    // (block size, blocks): every block of a fresh heap comes from bump
    // except the first of each page, which the slow path hands out.
    for (size, n) in [(16, 10_000usize), (48, 3000), (1000, 200), (32 << 10, 5)] {
        let mut h = heap::<BasicStats>();
        for _ in 0..n {
            alloc(&mut h, size, DATA);
        }
        let per_page = PAGE_SIZE / CLASS_SIZES[class_of(size)];
        let pages = n.div_ceil(per_page) as u64;
        let t = h.tier_stats();
        assert_eq!(t.slow_allocs, pages, "size {size}");
        assert_eq!(t.fast_allocs, n as u64 - pages, "size {size}");
        assert_eq!(t.pages_committed, pages, "size {size}");
        assert_eq!((t.frees, t.pages_released), (0, 0), "size {size}");
        assert_eq!(t.class_histogram, [0; NUM_CLASSES + 1]);
        h.release_all();
    }
}

#[test]
fn basic_counts_large_blocks_and_their_release() {
    let mut h = heap::<BasicStats>();
    let p = alloc(&mut h, 100_000, POINTER); // two pages, unmapped when freed
    h.free(p);
    let d = alloc(&mut h, 40_000, DATA); // one page, cached when freed
    h.free(d);
    let again = alloc(&mut h, 40_000, DATA);
    assert_eq!(again, d, "the cached block is reused");
    let t = h.tier_stats();
    assert_eq!((t.slow_allocs, t.fast_allocs, t.frees), (3, 0, 2), "{t:?}");
    assert_eq!((t.pages_committed, t.pages_released), (3, 2), "{t:?}");
    h.release_all();
}

#[test]
fn full_counts_what_basic_counts() {
    let mut b = heap::<BasicStats>();
    let mut f = heap::<FullStats>();
    for size in [16, 100, 700, 5000, 40_000] {
        churn(&mut b, 3000, 17, size);
        churn(&mut f, 3000, 17, size);
    }
    let (b, f) = (b.tier_stats(), f.tier_stats());
    assert_eq!(
        (
            b.fast_allocs,
            b.slow_allocs,
            b.frees,
            b.pages_committed,
            b.pages_released
        ),
        (
            f.fast_allocs,
            f.slow_allocs,
            f.frees,
            f.pages_committed,
            f.pages_released
        )
    );
}

#[test]
fn full_histogram_per_class() {
    let mut h = heap::<FullStats>();
    let sizes = [1, 16, 17, 128, 129, 4096, 32 << 10, (32 << 10) + 1, 1 << 20];
    for (i, &size) in sizes.iter().enumerate() {
        for _ in 0..=i {
            alloc(&mut h, size, i % 2);
        }
    }
    let mut want = [0u64; NUM_CLASSES + 1];
    for (i, &size) in sizes.iter().enumerate() {
        let c = if size > 32 << 10 {
            NUM_CLASSES
        } else {
            class_of(size)
        };
        want[c] += i as u64 + 1;
    }
    assert_eq!(h.tier_stats().class_histogram, want);
    h.release_all();
}

#[test]
fn full_exact_lifetimes_when_every_allocation_is_sampled() {
    // (window, blocks): a block of a w-slot window survives w - 1 allocations.
    for (w, n) in [(1, 100), (2, 100), (3, 1000), (64, 5000), (1000, 5000)] {
        let mut h = heap::<FullStats>();
        h.tier.set_sample_period(1);
        churn(&mut h, n, w, 32);
        let t = h.tier_stats();
        let mut want = [0u64; rt::tier::LIFETIME_BUCKETS];
        // The last window's blocks are freed at the end, younger.
        let full = n - w.min(n);
        want[TierStats::lifetime_bucket(w as u64 - 1)] += full as u64;
        for age in 0..w.min(n) {
            want[TierStats::lifetime_bucket(age as u64)] += 1;
        }
        assert_eq!(t.lifetime_histogram, want, "window {w}");
        assert_eq!(t.lifetime_sample_period, 1);
        h.release_all();
    }
}

#[test]
fn full_samples_about_one_allocation_in_the_period() {
    let mut h = heap::<FullStats>();
    let n = 200_000;
    churn(&mut h, n, 64, 80);
    let t = h.tier_stats();
    let period = FullStats::DEFAULT_PERIOD;
    assert_eq!(t.lifetime_sample_period, period);
    let sampled: u64 = t.lifetime_histogram.iter().sum();
    let expect = n as u64 / period;
    assert!(
        sampled > expect * 8 / 10 && sampled < expect * 12 / 10,
        "{sampled} samples, expected about {expect}"
    );
    // Lifetimes of 63 allocations: bucket [32, 64), apart from the last window.
    let main = t.lifetime_histogram[TierStats::lifetime_bucket(63)];
    assert!(sampled - main <= 64, "{:?}", t.lifetime_histogram);
    h.release_all();
}

#[test]
fn swept_blocks_record_their_lifetime() {
    let _g = common::fresh(rt::Settings::DEFAULT);
    if !<rt::tier::Active as Tier>::BIRTHS {
        return;
    }
    let before: u64 = rt::stats().tier.lifetime_histogram.iter().sum();
    let g = common::garbage(20_000, 32, 0);
    common::collect();
    let after: u64 = rt::stats().tier.lifetime_histogram.iter().sum();
    let expect = g.len() as u64 / FullStats::DEFAULT_PERIOD;
    assert!(
        after - before > expect / 2,
        "{} sampled deaths for {expect} expected",
        after - before
    );
}

#[test]
fn global_heap_uses_the_featured_tier() {
    let _g = common::fresh(rt::Settings::DEFAULT);
    for _ in 0..1000 {
        let p = rt::sspur_alloc(24, 0, 0);
        unsafe { rt::sspur_free(p, 0) };
    }
    let t = rt::stats().tier;
    if cfg!(feature = "stats-basic") {
        assert_eq!(t.fast_allocs + t.slow_allocs, 1000, "{t:?}");
        assert_eq!(t.frees, 1000);
    } else {
        assert_eq!(t, TierStats::ZERO);
    }
    if cfg!(feature = "stats-full") {
        assert_eq!(t.class_histogram[class_of(24)], 1000);
    }
}

/// A random walk of allocations and frees (all sizes, both kinds, frees in
/// random order): the derived allocation counts match the walk's.
fn walk<T: Tier>(h: &mut Heap<T>, seed: u64, steps: usize) -> (u64, u64, [u64; NUM_CLASSES + 1]) {
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut allocs, mut frees) = (0u64, 0u64);
    let mut per_class = [0u64; NUM_CLASSES + 1];
    let mut live: Vec<usize> = Vec::new();
    for _ in 0..steps {
        let r = next();
        if r % 5 < 3 || live.is_empty() {
            let size = match r % 100 {
                0 => 40_000 + (r >> 8) as usize % 100_000,
                1..=30 => 129 + (r >> 8) as usize % 32_000,
                _ => 1 + (r >> 8) as usize % 128,
            };
            live.push(alloc(h, size, (r >> 40) as usize % 2));
            allocs += 1;
            per_class[if size > 32 << 10 {
                NUM_CLASSES
            } else {
                class_of(size)
            }] += 1;
        } else {
            let i = (r >> 8) as usize % live.len();
            h.free(live.swap_remove(i));
            frees += 1;
        }
    }
    (allocs, frees, per_class)
}

#[test]
fn derived_counts_follow_a_random_walk() {
    for seed in [1u64, 0xDEAD_BEEF, 42, 7_777_777] {
        let mut b = heap::<BasicStats>();
        let mut f = heap::<FullStats>();
        let (allocs, frees, per_class) = walk(&mut b, seed, 20_000);
        assert_eq!(walk(&mut f, seed, 20_000), (allocs, frees, per_class));
        for t in [b.tier_stats(), f.tier_stats()] {
            assert_eq!(t.fast_allocs + t.slow_allocs, allocs, "seed {seed}");
            assert_eq!(t.frees, frees, "seed {seed}");
        }
        assert_eq!(f.tier_stats().class_histogram, per_class, "seed {seed}");
        b.release_all();
        f.release_all();
    }
}

#[test]
fn derived_counts_survive_collections() {
    let _g = common::fresh(rt::Settings::DEFAULT);
    let n = 5000u64;
    for i in 0..n {
        let p = rt::sspur_alloc(16 + (i as usize % 300), (i % 2) as u32, 0);
        if i % 3 == 0 {
            unsafe { rt::sspur_free(p, 0) };
        }
    }
    common::collect();
    for _ in 0..n {
        rt::sspur_alloc(40, 1, 0);
    }
    let t = rt::stats().tier;
    if cfg!(feature = "stats-basic") {
        assert_eq!(t.fast_allocs + t.slow_allocs, 2 * n, "{t:?}");
        assert_eq!(t.frees, n.div_ceil(3), "{t:?}");
    }
    if cfg!(feature = "stats-full") {
        assert_eq!(t.class_histogram.iter().sum::<u64>(), 2 * n);
    }
}

#[test]
fn lifetime_line_names_the_nonzero_buckets() {
    let mut h = heap::<FullStats>();
    h.tier.set_sample_period(1);
    churn(&mut h, 100, 3, 32);
    assert_eq!(
        rt::stats::lifetime_line(&h.tier_stats()),
        "lifetimes (allocations survived, 1 in 1 sampled): 0: 1, 1: 1, 2-3: 98"
    );
    h.release_all();
}
