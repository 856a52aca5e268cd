//! `cargo bench -p rt`: the allocator's fast-path order (bump first against
//! free list first), an alloc/free churn against the system allocator and
//! mimalloc side by side, and the small/medium/mixed patterns the
//! statistics tiers are compared on (run once per tier: see docs/runtime.md).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rt::heap::Order;

const N: usize = 10_000;

fn tier() -> &'static str {
    if cfg!(feature = "stats-full") {
        "full"
    } else if cfg!(feature = "stats-basic") {
        "basic"
    } else {
        "none"
    }
}

fn setup() {
    rt::init_with(rt::Settings::DEFAULT);
}

/// Sizes of each pattern: small (16..128), medium (129..4096), mixed.
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

/// Allocate a window of blocks and free them in a rotating order: what a
/// loop that builds and drops temporaries does.
fn churn_rt(sizes: &[usize], order: Option<Order>) {
    let mut window = [std::ptr::null_mut::<u8>(); 64];
    for (i, &s) in sizes.iter().enumerate() {
        let slot = i % 64;
        if !window[slot].is_null() {
            rt::sspur_free(window[slot], 0);
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
            rt::sspur_free(p, 0);
        }
    }
}

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

fn order(c: &mut Criterion) {
    setup();
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

fn versus(c: &mut Criterion) {
    setup();
    let mut g = c.benchmark_group("churn");
    g.throughput(Throughput::Elements(N as u64));
    for pattern in ["small", "medium", "mixed"] {
        let sz = sizes(pattern);
        g.bench_with_input(BenchmarkId::new("sspur-rt", pattern), &sz, |b, sz| {
            b.iter(|| churn_rt(sz, None))
        });
        g.bench_with_input(BenchmarkId::new("system", pattern), &sz, |b, sz| {
            b.iter(|| churn_global(&System, sz))
        });
        g.bench_with_input(BenchmarkId::new("mimalloc", pattern), &sz, |b, sz| {
            b.iter(|| churn_global(&mimalloc::MiMalloc, sz))
        });
    }
    g.finish();
}

fn tiers(c: &mut Criterion) {
    setup();
    let mut g = c.benchmark_group(format!("stats-{}", tier()));
    g.throughput(Throughput::Elements(N as u64));
    for pattern in ["small", "medium", "mixed"] {
        let sz = sizes(pattern);
        g.bench_with_input(BenchmarkId::new("churn", pattern), &sz, |b, sz| {
            b.iter(|| churn_rt(sz, None))
        });
    }
    g.finish();
}

criterion_group!(benches, order, versus, tiers);
criterion_main!(benches);
