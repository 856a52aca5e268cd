//! A random walk in the style of an allocator fuzzer: allocate (and fill with
//! a pattern), free, check every live block's pattern, collect, all against a
//! model. The live blocks are reachable from one registered root (a pointer
//! table in the heap), so the collector must keep exactly those.
//!
//! `SSPUR_RT_FUZZ_OPS` raises the operations per case for a stress run.

mod common;

use common::*;
use proptest::prelude::*;
use rt::Settings;

const TABLE_SLOTS: usize = 2048;

struct Live {
    addr: usize,
    size: usize,
    fill: u8,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

static mut ROOT: usize = 0;

fn random_size(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0 if rng.below(4) == 0 => 32 * 1024 + 1 + rng.below(200_000) as usize,
        1..=10 => 129 + rng.below(32 * 1024 - 128) as usize,
        _ => 1 + rng.below(128) as usize,
    }
}

fn check_block(b: &Live) {
    let bytes = unsafe { std::slice::from_raw_parts(b.addr as *const u8, b.size) };
    if let Some(pos) = bytes.iter().position(|&x| x != b.fill) {
        panic!(
            "block {:#x} ({} bytes): byte {pos} is {:#x}, expected {:#x}",
            b.addr, b.size, bytes[pos], b.fill
        );
    }
    let (base, usable) = rt::block_of(b.addr as *const u8).expect("live block not allocated");
    assert_eq!(base as usize, b.addr);
    assert!(usable >= b.size);
}

fn walk(seed: u64, ops: usize, settings: Settings) {
    let _g = fresh(settings);
    let table = alloc(TABLE_SLOTS * 8, 1) as *mut usize;
    // SAFETY: the single-threaded test owns ROOT, a static readable for
    // the rest of the run.
    unsafe {
        ROOT = table as usize;
        rt::add_root(&raw const ROOT);
    }
    let mut rng = Rng(seed | 1);
    let mut live: Vec<Live> = Vec::new();
    let mut addrs = std::collections::HashSet::new();
    for op in 0..ops {
        match rng.below(100) {
            0..=54 if live.len() < TABLE_SLOTS => {
                let size = random_size(&mut rng);
                let kind = rng.below(2) as u32;
                let p = rt::sspur_alloc(size, kind, 0);
                assert!(!p.is_null());
                let bytes = unsafe { std::slice::from_raw_parts(p, size) };
                if kind == 1 {
                    assert!(
                        bytes.iter().all(|&x| x == 0),
                        "pointer block not zeroed at op {op}"
                    );
                }
                // Handed out once: not a block the model holds.
                assert!(
                    addrs.insert(p as usize),
                    "block {p:?} handed out twice at op {op}"
                );
                assert_eq!(rt::block_of(p).map(|b| b.0), Some(p));
                // Fills never look like heap addresses (top byte set).
                let fill = 0x80 | rng.below(0x7f) as u8;
                unsafe { std::ptr::write_bytes(p, fill, size) };
                unsafe { *table.add(live.len()) = p as usize };
                live.push(Live {
                    addr: p as usize,
                    size,
                    fill,
                });
            }
            0..=89 if !live.is_empty() => {
                let i = rng.below(live.len() as u64) as usize;
                let b = live.swap_remove(i);
                check_block(&b);
                addrs.remove(&b.addr);
                unsafe {
                    *table.add(i) = *table.add(live.len());
                    *table.add(live.len()) = 0;
                }
                let interior = b.addr + rng.below(b.size as u64) as usize;
                if rng.below(2) == 0 {
                    unsafe { rt::sspur_free(interior as *mut u8, 0) };
                } else {
                    unsafe { rt::free_temp(interior as *mut u8) };
                }
            }
            90..=98 if !live.is_empty() => {
                let i = rng.below(live.len() as u64) as usize;
                check_block(&live[i]);
            }
            99 if rng.below(20) == 0 => {
                collect();
                for b in &live {
                    check_block(b);
                }
            }
            _ => {}
        }
    }
    collect();
    for b in &live {
        check_block(b);
    }
}

fn ops_per_case() -> usize {
    std::env::var("SSPUR_RT_FUZZ_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() })]

    /// 4 cases x 300,000 operations: 1.2 million per test run.
    #[test]
    fn random_walk_against_a_model(seed in any::<u64>()) {
        walk(seed, ops_per_case(), Settings::DEFAULT);
    }

    /// The same walk with a tiny pacing threshold, so collections interleave.
    #[test]
    fn random_walk_with_frequent_collections(seed in any::<u64>()) {
        walk(seed, ops_per_case() / 10, Settings { gc_min_bytes: 1 << 20, gc_factor: 1.5, gc_young_bytes: 1 << 20, ..Settings::DEFAULT });
    }
}
