//! `cargo bench -p rt`: the allocator's fast-path order (bump first against
//! free list first), an alloc/free churn against the system allocator and
//! mimalloc, and the statistics tiers (none, basic, full) on the small,
//! medium and mixed patterns, each tier a bare heap of its own in this one
//! binary. Criterion measures each case; then a summary runs every case in
//! interleaved rounds (so load from other processes hits all alike) and
//! prints the medians side by side with the tiers' ratios to none.
//!
//! `SSPUR_RT_DRIVER=TIER:PATTERN` (tier none, basic or full; pattern small,
//! medium or mixed) instead runs that churn a fixed number of times and
//! exits: a repeatable driver for `valgrind --tool=callgrind
//! --toggle-collect='*churn_heap*'` instruction counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput};
use rt::heap::{Heap, Order, DATA, DEFAULT_ORDER};
use rt::tier::{BasicStats, FullStats, NoStats, Tier};

const N: usize = 10_000;
const PATTERNS: [&str; 3] = ["small", "medium", "mixed"];

/// Sizes of each pattern: small (16..128), medium (129..4096), mixed (70%
/// small, 30% up to 8 KB).
fn sizes(pattern: &str) -> Vec<usize> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..N)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match pattern {
                "small" => 16 + (x % 113) as usize,
                "medium" => 129 + (x % 3968) as usize,
                _ => {
                    if x % 10 < 7 {
                        16 + (x % 113) as usize
                    } else {
                        129 + (x % 8000) as usize
                    }
                }
            }
        })
        .collect()
}

/// Allocates a window of blocks and frees them in a rotating order: what a
/// loop that builds and drops temporaries does. Through the runtime's entry
/// points (global heap, active tier).
#[inline(never)]
fn churn_rt(sizes: &[usize], order: Option<Order>) {
    let mut window = [std::ptr::null_mut::<u8>(); 64];
    for (i, &s) in sizes.iter().enumerate() {
        let slot = i % 64;
        if !window[slot].is_null() {
            unsafe { rt::sspur_free(window[slot], 0) };
        }
        let p = match order {
            Some(o) => rt::alloc_with_order(s, 0, o),
            None => rt::sspur_alloc(s, 0, 0),
        };
        unsafe { *p = 1 };
        window[slot] = black_box(p);
    }
    for p in window {
        if !p.is_null() {
            unsafe { rt::sspur_free(p, 0) };
        }
    }
}

/// The same churn on a bare heap of tier `T`.
#[inline(never)]
fn churn_heap<T: Tier>(h: &mut Heap<T>, sizes: &[usize]) {
    let mut window = [0usize; 64];
    for (i, &s) in sizes.iter().enumerate() {
        let slot = i % 64;
        if window[slot] != 0 {
            h.free(window[slot]);
        }
        let p = h.alloc(s, DATA, DEFAULT_ORDER);
        unsafe { *p = 1 };
        window[slot] = black_box(p as usize);
    }
    for p in window {
        if p != 0 {
            h.free(p);
        }
    }
}

#[inline(never)]
fn churn_global<A: GlobalAlloc>(a: &A, sizes: &[usize]) {
    let mut window = [(std::ptr::null_mut::<u8>(), 0usize); 64];
    for (i, &s) in sizes.iter().enumerate() {
        let slot = i % 64;
        let (old, old_size) = window[slot];
        if !old.is_null() {
            unsafe { a.dealloc(old, Layout::from_size_align_unchecked(old_size, 8)) };
        }
        let p = unsafe { a.alloc(Layout::from_size_align_unchecked(s, 8)) };
        unsafe { *p = 1 };
        window[slot] = (black_box(p), s);
    }
    for (p, s) in window {
        if !p.is_null() {
            unsafe { a.dealloc(p, Layout::from_size_align_unchecked(s, 8)) };
        }
    }
}

/// One bare heap per tier, alive for the whole run.
struct Heaps {
    none: Box<Heap<NoStats>>,
    basic: Box<Heap<BasicStats>>,
    full: Box<Heap<FullStats>>,
}

impl Heaps {
    fn new() -> Heaps {
        Heaps {
            none: Box::new(Heap::new()),
            basic: Box::new(Heap::new()),
            full: Box::new(Heap::new()),
        }
    }
}

/// Every case of the summary table: a row name and one churn over `sizes`.
const CASES: [&str; 6] = ["none", "basic", "full", "sspur-rt", "system", "mimalloc"];

fn run_case(case: &str, heaps: &mut Heaps, sizes: &[usize]) {
    match case {
        "none" => churn_heap(&mut heaps.none, sizes),
        "basic" => churn_heap(&mut heaps.basic, sizes),
        "full" => churn_heap(&mut heaps.full, sizes),
        "sspur-rt" => churn_rt(sizes, None),
        "system" => churn_global(&System, sizes),
        "mimalloc" => churn_global(&mimalloc::MiMalloc, sizes),
        _ => unreachable!("unknown case {case}"),
    }
}

fn order(c: &mut Criterion) {
    let mut g = c.benchmark_group("order");
    g.throughput(Throughput::Elements(N as u64));
    for pattern in ["small", "mixed"] {
        let sz = sizes(pattern);
        for (name, o) in [
            ("bump-first", Order::BumpFirst),
            ("free-list-first", Order::FreeListFirst),
        ] {
            g.bench_with_input(BenchmarkId::new(name, pattern), &sz, |b, sz| {
                b.iter(|| churn_rt(sz, Some(o)))
            });
        }
    }
    g.finish();
}

fn cases(c: &mut Criterion, heaps: &mut Heaps, group: &str, names: &[&str]) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(N as u64));
    for pattern in PATTERNS {
        let sz = sizes(pattern);
        for &name in names {
            g.bench_with_input(BenchmarkId::new(name, pattern), &sz, |b, sz| {
                b.iter(|| run_case(name, heaps, sz))
            });
        }
    }
    g.finish();
}

/// Median time of one churn per case and pattern, from `rounds` interleaved
/// rounds of `batch` churns each.
fn summary(heaps: &mut Heaps, rounds: usize, batch: usize) -> Vec<Vec<f64>> {
    let inputs: Vec<Vec<usize>> = PATTERNS.iter().map(|p| sizes(p)).collect();
    let mut samples = vec![vec![Vec::with_capacity(rounds); PATTERNS.len()]; CASES.len()];
    for round in 0..=rounds {
        for (p, sz) in inputs.iter().enumerate() {
            for (c, case) in CASES.iter().enumerate() {
                let start = Instant::now();
                for _ in 0..batch {
                    run_case(case, heaps, sz);
                }
                let us = start.elapsed().as_secs_f64() * 1e6 / batch as f64;
                if round > 0 {
                    samples[c][p].push(us); // round 0 warms up
                }
            }
        }
    }
    samples
        .into_iter()
        .map(|per_pattern| per_pattern.into_iter().map(median).collect())
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn print_summary(medians: &[Vec<f64>], rounds: usize, batch: usize) {
    println!();
    println!(
        "summary: median us per churn of {N} allocations ({rounds} interleaved rounds of {batch})"
    );
    println!();
    println!("| stats tier (bare heap) | small | medium | mixed |");
    println!("|---|---|---|---|");
    for (c, case) in CASES.iter().enumerate().take(3) {
        let cells: Vec<String> = (0..PATTERNS.len())
            .map(|p| {
                let us = medians[c][p];
                if c == 0 {
                    format!("{us:.1} us")
                } else {
                    format!("{us:.1} us ({:.3}x)", us / medians[0][p])
                }
            })
            .collect();
        println!("| {case} | {} |", cells.join(" | "));
    }
    println!();
    println!("| churn, side by side | small | medium | mixed |");
    println!("|---|---|---|---|");
    for (c, case) in CASES.iter().enumerate().skip(3) {
        let cells: Vec<String> = (0..PATTERNS.len())
            .map(|p| format!("{:.1} us", medians[c][p]))
            .collect();
        println!("| {case} | {} |", cells.join(" | "));
    }
}

/// The callgrind driver: `SSPUR_RT_DRIVER=TIER:PATTERN`, 20 churns.
fn driver(spec: &str, heaps: &mut Heaps) {
    let Some((tier, pattern)) = spec.split_once(':') else {
        eprintln!("SSPUR_RT_DRIVER: expected TIER:PATTERN, got {spec:?}");
        std::process::exit(2);
    };
    if !CASES[..3].contains(&tier) || !PATTERNS.contains(&pattern) {
        eprintln!("SSPUR_RT_DRIVER: tier is none, basic or full; pattern small, medium or mixed");
        std::process::exit(2);
    }
    let sz = sizes(pattern);
    for _ in 0..20 {
        run_case(tier, heaps, &sz);
    }
}

fn main() {
    rt::init_with(rt::Settings::DEFAULT);
    let mut heaps = Heaps::new();
    if let Ok(spec) = std::env::var("SSPUR_RT_DRIVER") {
        driver(&spec, &mut heaps);
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--test" || a == "--list");
    let mut c = Criterion::default().configure_from_args();
    order(&mut c);
    cases(&mut c, &mut heaps, "churn", &CASES[3..]);
    cases(&mut c, &mut heaps, "stats-tiers", &CASES[..3]);
    c.final_summary();
    if !quick {
        let rounds = env_usize("SSPUR_RT_BENCH_ROUNDS", 101);
        let batch = env_usize("SSPUR_RT_BENCH_BATCH", 10);
        let medians = summary(&mut heaps, rounds.max(1), batch.max(1));
        print_summary(&medians, rounds.max(1), batch.max(1));
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
