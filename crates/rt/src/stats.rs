//! Statistics: the exit reports of SSPUR_GC_STATS and SSPUR_ALLOC_REPORT, and
//! the snapshot API tests and tools read.
//!
//! Report lines (stable; tests grep them):
//! ```text
//! freed at last use: N blocks, B bytes
//! left for the collector: N blocks, B bytes
//! collected: N blocks, B bytes
//! collections: N
//! minor collections: N, major collections: N
//! pauses: total X ms, longest Y ms
//! promoted: B bytes
//! peak heap: B bytes
//! freed at last use by kind: cells N, lists N, strings N, closures N
//! reused in place: N blocks, B bytes
//! pause detail: longest minor X ms, longest major Y ms, cpu total X ms, cpu longest Y ms
//! largest live set: B bytes
//! collector reads: stack B bytes, remembered B bytes, marked B bytes
//! incremental majors: N started, N slices, longest slice X ms, longest final Y ms
//! stack barriers: N installed, B bytes of stack not read again
//! stack steps: S
//! remembered cards: B bytes not read again
//! ```

use std::fmt::Write;

use crate::config::StatsMode;
use crate::state::{Counters, GcCounts, Rt};
use crate::tier::TierStats;

/// A snapshot of the runtime's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Whether the counters below are maintained (the "counting" flag).
    pub counting: bool,
    pub counters: Counters,
    /// Blocks freed at last use by kind (cells, lists, strings, closures).
    pub freed_by_kind: [u64; 4],
    /// Blocks constructors were built in (reuse tokens taken), and bytes.
    pub reused_blocks: u64,
    pub reused_bytes: u64,
    pub collections: u64,
    /// Collections by kind, pauses, bytes promoted.
    pub gc: GcCounts,
    /// Bytes of pages and large blocks mapped now, and at most.
    pub heap_bytes: usize,
    pub peak_heap_bytes: usize,
    pub live_after_last_gc: usize,
    /// Bytes of freed large data blocks kept for reuse.
    pub large_cache_bytes: usize,
    /// The young budget pacing set: young bytes before the next minor
    /// collection.
    pub young_budget: usize,
    /// Old bytes past which pacing asks for a major collection.
    pub major_threshold: usize,
    pub tier: TierStats,
}

impl Stats {
    /// Blocks allocated and never freed by the program or the runtime: what
    /// the collector had (or has) to reclaim.
    pub fn left_for_collector(&self) -> (u64, u64) {
        let c = &self.counters;
        (
            c.alloc_blocks - c.freed_last_use_blocks - c.freed_internal_blocks - self.reused_blocks,
            c.alloc_bytes - c.freed_last_use_bytes - c.freed_internal_bytes - self.reused_bytes,
        )
    }
    /// Blocks allocated and not yet freed or collected.
    pub fn live_blocks(&self) -> u64 {
        let c = &self.counters;
        c.alloc_blocks
            - c.freed_last_use_blocks
            - c.freed_internal_blocks
            - self.reused_blocks
            - c.collected_blocks
    }
}

pub fn snapshot(rt: &Rt) -> Stats {
    Stats {
        counting: rt.counting,
        counters: rt.counters,
        freed_by_kind: rt.cells.freed_by_kind,
        reused_blocks: rt.cells.reused_blocks,
        reused_bytes: rt.cells.reused_bytes,
        collections: rt.collections,
        gc: rt.gc,
        heap_bytes: rt.heap.committed,
        peak_heap_bytes: rt.heap.peak,
        live_after_last_gc: rt.live_after_gc,
        large_cache_bytes: rt.heap.cache_bytes,
        young_budget: rt.heap.young_budget,
        major_threshold: rt.major_threshold,
        tier: rt.heap.tier_stats(),
    }
}

/// The text printed to stderr when the program finishes.
pub fn exit_report(rt: &Rt) -> String {
    let s = snapshot(rt);
    let c = &s.counters;
    let mut out = String::new();
    if rt.settings.gc_stats != StatsMode::Off {
        let (left_n, left_b) = s.left_for_collector();
        let _ = writeln!(
            out,
            "freed at last use: {} blocks, {} bytes",
            c.freed_last_use_blocks, c.freed_last_use_bytes
        );
        if c.freed_internal_blocks > 0 {
            let _ = writeln!(
                out,
                "freed by the runtime: {} blocks, {} bytes",
                c.freed_internal_blocks, c.freed_internal_bytes
            );
        }
        let _ = writeln!(
            out,
            "left for the collector: {left_n} blocks, {left_b} bytes"
        );
        let _ = writeln!(
            out,
            "collected: {} blocks, {} bytes",
            c.collected_blocks, c.collected_bytes
        );
        let _ = writeln!(out, "collections: {}", s.collections);
        let g = &s.gc;
        let _ = writeln!(
            out,
            "minor collections: {}, major collections: {}",
            g.minor, g.major
        );
        let _ = writeln!(
            out,
            "pauses: total {:.3} ms, longest {:.3} ms",
            g.total_pause.as_secs_f64() * 1e3,
            g.longest_pause.as_secs_f64() * 1e3
        );
        let _ = writeln!(out, "promoted: {} bytes", g.promoted_bytes);
        let _ = writeln!(out, "peak heap: {} bytes", s.peak_heap_bytes);
        let kinds: Vec<String> = crate::cells::BlockKind::ALL
            .iter()
            .map(|k| format!("{} {}", k.plural(), s.freed_by_kind[*k as usize]))
            .collect();
        let _ = writeln!(out, "freed at last use by kind: {}", kinds.join(", "));
        let _ = writeln!(
            out,
            "reused in place: {} blocks, {} bytes",
            s.reused_blocks, s.reused_bytes
        );
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let _ = writeln!(
            out,
            "pause detail: longest minor {:.3} ms, longest major {:.3} ms, cpu total {:.3} ms, cpu longest {:.3} ms",
            ms(g.longest_minor),
            ms(g.longest_major),
            ms(g.cpu_total),
            ms(g.cpu_longest)
        );
        let _ = writeln!(out, "largest live set: {} bytes", g.max_live_bytes);
        let _ = writeln!(
            out,
            "collector reads: stack {} bytes, remembered {} bytes, marked {} bytes",
            g.stack_bytes, g.remembered_bytes, g.scanned_bytes
        );
        let _ = writeln!(
            out,
            "incremental majors: {} started, {} slices, longest slice {:.3} ms, longest final {:.3} ms",
            g.cycles_started,
            g.slices,
            ms(g.longest_slice),
            ms(g.longest_final)
        );
        // What minor collections did not read again, and the pauses that
        // read a deep new stack in steps (three lines).
        let _ = writeln!(
            out,
            "stack barriers: {} installed, {} bytes of stack not read again\nstack steps: {}\nremembered cards: {} bytes not read again",
            g.barriers, g.stack_skipped, g.stack_steps, g.cards_skipped
        );
        if cfg!(feature = "stats-basic") {
            let t = &s.tier;
            let _ = writeln!(
                out,
                "alloc paths: {} fast, {} slow; frees: {}; pages committed: {}, released: {}",
                t.fast_allocs, t.slow_allocs, t.frees, t.pages_committed, t.pages_released
            );
        }
        if cfg!(feature = "stats-full") {
            let _ = writeln!(out, "{}", lifetime_line(&s.tier));
        }
        if rt.settings.gc_stats == StatsMode::Sites {
            let mut sites: Vec<(u32, u64, u64)> = rt
                .sites
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    (
                        i as u32,
                        st.alloc_blocks - st.freed_blocks,
                        st.alloc_bytes - st.freed_bytes,
                    )
                })
                .filter(|&(_, n, _)| n > 0)
                .collect();
            sites.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)).then(a.0.cmp(&b.0)));
            // Site 0 is no site of the program: the runtime's own blocks
            // (a string builder never finished) and unnamed allocations.
            if let Some(pos) = sites.iter().position(|s| s.0 == 0) {
                let (_, n, b) = sites.remove(pos);
                let _ = writeln!(
                    out,
                    "left for the collector without a site (unfinished string builders, runtime blocks): {n} blocks, {b} bytes"
                );
            }
            let _ = writeln!(out, "sites left for the collector:");
            for (site, n, b) in sites {
                let _ = writeln!(out, "  {}: {n} blocks, {b} bytes", rt.site_name(site));
            }
        }
    }
    if rt.settings.alloc_report {
        let _ = writeln!(out, "alloc attempts: {}", c.attempts);
        let _ = writeln!(out, "live blocks: {}", s.live_blocks());
    }
    out
}

/// `lifetimes (allocations survived, 1 in N sampled): 0: n, 1: n, 2-3: n, ...`,
/// the nonzero buckets of the full tier's histogram.
pub fn lifetime_line(t: &TierStats) -> String {
    let mut line = format!(
        "lifetimes (allocations survived, 1 in {} sampled):",
        t.lifetime_sample_period
    );
    let mut first = true;
    for (i, &n) in t.lifetime_histogram.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let range = match i {
            0 => "0".to_string(),
            1 => "1".to_string(),
            _ => format!("{}-{}", 1u64 << (i - 1), (1u64 << i) - 1),
        };
        line.push_str(if first { " " } else { ", " });
        first = false;
        let _ = write!(line, "{range}: {n}");
    }
    line
}
