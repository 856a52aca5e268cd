//! Statistics tiers: what the heap counts on its hot paths.
//!
//! The heap is generic over a [`Tier`], whose hooks are `#[inline(always)]`
//! and empty for [`NoStats`], so the untiered heap compiles to the same code
//! as one without hooks. The cargo features `stats-basic` and `stats-full`
//! only choose [`Active`], the tier of the global heap behind the C-ABI entry
//! points; the benchmark instantiates all three tiers side by side.
//!
//! No tier counts fast allocations: one memory increment per allocation
//! costs more than the 2% the basic tier may cost. Allocations are derived
//! when read instead: every block ever handed out is live now, was freed,
//! or was swept, so allocations = live + frees + swept (live blocks are
//! counted from the page bits, cursors and free lists by
//! [`crate::heap::Heap::tier_stats`]), and fast = allocations - slow.
//!
//! The lifetime histogram of [`FullStats`] samples: about one allocation in
//! [`FullStats::DEFAULT_PERIOD`] (a random countdown, so no allocation
//! pattern aliases with it) gets its birth stamped in its page's side array,
//! and the free or sweep of a stamped block records the allocations it
//! survived. An exact stamp would need a page-map lookup on every
//! allocation, which costs more than the rest of the fast path.

use crate::heap::NUM_CLASSES;

/// Log2 buckets of the lifetime histogram.
pub const LIFETIME_BUCKETS: usize = 48;

/// Statistics of the compile-time tiers; fields a tier does not maintain
/// stay zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TierStats {
    pub fast_allocs: u64,
    pub slow_allocs: u64,
    pub frees: u64,
    pub pages_committed: u64,
    pub pages_released: u64,
    /// Allocations per small class; the last entry counts large blocks.
    pub class_histogram: [u64; NUM_CLASSES + 1],
    /// Sampled blocks by allocations survived (allocations made between the
    /// block's allocation and its free or collection): entry 0 counts 0,
    /// entry i >= 1 counts lifetimes in [2^(i-1), 2^i).
    pub lifetime_histogram: [u64; LIFETIME_BUCKETS],
    /// One allocation in this many, on average, is sampled for the lifetime
    /// histogram (1 = every allocation; 0 = no histogram).
    pub lifetime_sample_period: u64,
}

impl Default for TierStats {
    fn default() -> Self {
        TierStats::ZERO
    }
}

impl TierStats {
    pub const ZERO: TierStats = TierStats {
        fast_allocs: 0,
        slow_allocs: 0,
        frees: 0,
        pages_committed: 0,
        pages_released: 0,
        class_histogram: [0; NUM_CLASSES + 1],
        lifetime_histogram: [0; LIFETIME_BUCKETS],
        lifetime_sample_period: 0,
    };

    /// The lifetime bucket of a block that survived `n` allocations.
    pub fn lifetime_bucket(n: u64) -> usize {
        ((u64::BITS - n.leading_zeros()) as usize).min(LIFETIME_BUCKETS - 1)
    }
}

/// The statistics hooks of the heap. `class` is a small class index, or
/// [`NUM_CLASSES`] for a large block.
pub trait Tier {
    const ZERO: Self;
    /// Whether the snapshot needs the live blocks per class.
    const COUNTS: bool;
    /// Whether pages keep a birth-stamp side array (the lifetime histogram).
    const BIRTHS: bool;
    /// An allocation served by the slow path (a new or swept page, a large block).
    fn slow(&mut self, class: usize);
    /// A small block freed (by the program or the runtime); `class_frees`
    /// is its class's free count.
    fn free(&mut self, class_frees: &mut u64);
    /// A large block freed.
    fn free_large(&mut self);
    /// `n` blocks of `class` reclaimed by a sweep.
    fn swept(&mut self, class: usize, n: usize);
    fn committed(&mut self, pages: usize);
    fn released(&mut self, pages: usize);
    /// Counts down to the next sampled allocation: true when this one is.
    fn sample(&mut self) -> bool;
    /// The stamp of the allocation just sampled (never 0).
    fn birth(&mut self) -> u64;
    /// A sampled block born at stamp `born` was freed or collected.
    fn death(&mut self, born: u64);
    /// The statistics, given the heap's census.
    fn snapshot(&self, census: &Census) -> TierStats;
}

/// What the heap counts for a snapshot, per class (large blocks last).
pub struct Census {
    /// Blocks handed out and not freed.
    pub live: [u64; NUM_CLASSES + 1],
    /// Small blocks freed, from the class states (the large entry is 0).
    pub frees: [u64; NUM_CLASSES + 1],
}

/// No statistics: every hook is empty.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoStats;

impl Tier for NoStats {
    const ZERO: Self = NoStats;
    const COUNTS: bool = false;
    const BIRTHS: bool = false;
    #[inline(always)]
    fn slow(&mut self, _class: usize) {}
    #[inline(always)]
    fn free(&mut self, _class_frees: &mut u64) {}
    #[inline(always)]
    fn free_large(&mut self) {}
    #[inline(always)]
    fn swept(&mut self, _class: usize, _n: usize) {}
    #[inline(always)]
    fn committed(&mut self, _pages: usize) {}
    #[inline(always)]
    fn released(&mut self, _pages: usize) {}
    #[inline(always)]
    fn sample(&mut self) -> bool {
        false
    }
    #[inline(always)]
    fn birth(&mut self) -> u64 {
        0
    }
    #[inline(always)]
    fn death(&mut self, _born: u64) {}
    fn snapshot(&self, _census: &Census) -> TierStats {
        TierStats::ZERO
    }
}

/// `stats-basic`: fast and slow allocation counts, frees, pages committed
/// and released. One add per free; allocations cost nothing but the slow
/// path's add.
#[derive(Clone, Copy, Debug, Default)]
pub struct BasicStats {
    pub slow_allocs: u64,
    pub frees: u64,
    pub swept: u64,
    pub pages_committed: u64,
    pub pages_released: u64,
}

impl Tier for BasicStats {
    const ZERO: Self = BasicStats {
        slow_allocs: 0,
        frees: 0,
        swept: 0,
        pages_committed: 0,
        pages_released: 0,
    };
    const COUNTS: bool = true;
    const BIRTHS: bool = false;
    #[inline(always)]
    fn slow(&mut self, _class: usize) {
        self.slow_allocs += 1;
    }
    #[inline(always)]
    fn free(&mut self, _class_frees: &mut u64) {
        self.frees += 1;
    }
    #[inline(always)]
    fn free_large(&mut self) {
        self.frees += 1;
    }
    #[inline(always)]
    fn swept(&mut self, _class: usize, n: usize) {
        self.swept += n as u64;
    }
    #[inline(always)]
    fn committed(&mut self, pages: usize) {
        self.pages_committed += pages as u64;
    }
    #[inline(always)]
    fn released(&mut self, pages: usize) {
        self.pages_released += pages as u64;
    }
    #[inline(always)]
    fn sample(&mut self) -> bool {
        false
    }
    #[inline(always)]
    fn birth(&mut self) -> u64 {
        0
    }
    #[inline(always)]
    fn death(&mut self, _born: u64) {}
    fn snapshot(&self, census: &Census) -> TierStats {
        let allocs = census.live.iter().sum::<u64>() + self.frees + self.swept;
        TierStats {
            fast_allocs: allocs - self.slow_allocs,
            slow_allocs: self.slow_allocs,
            frees: self.frees,
            pages_committed: self.pages_committed,
            pages_released: self.pages_released,
            ..TierStats::ZERO
        }
    }
}

/// `stats-full`: the basic counts, an allocation histogram per size class
/// (from frees and sweeps per class) and the sampled lifetime histogram.
#[derive(Clone, Copy, Debug)]
pub struct FullStats {
    pub slow_allocs: u64,
    pub pages_committed: u64,
    pub pages_released: u64,
    /// Blocks swept per class, and large blocks freed in the last entry
    /// (small frees are counted in the class states).
    pub gone: [u64; NUM_CLASSES + 1],
    /// Blocks swept, all classes (frees are the rest of `gone`).
    pub swept: u64,
    pub lifetime_histogram: [u64; LIFETIME_BUCKETS],
    /// Mean distance between sampled allocations.
    period: u64,
    /// Allocations until the next sample (the sampled one included).
    countdown: u64,
    /// Allocations before the current countdown started, and its length.
    epoch: u64,
    drawn: u64,
    rng: u64,
}

impl FullStats {
    /// Samples about one allocation in 64 for the lifetime histogram.
    pub const DEFAULT_PERIOD: u64 = 64;

    /// Samples one allocation in `period` on average; 1 samples every one
    /// (an exact histogram, at the price of a page-map lookup per allocation).
    pub fn set_sample_period(&mut self, period: u64) {
        self.period = period.max(1);
        self.epoch = self.allocs();
        self.countdown = self.draw();
        self.drawn = self.countdown;
    }

    /// Allocations so far.
    #[inline(always)]
    fn allocs(&self) -> u64 {
        self.epoch + (self.drawn - self.countdown)
    }

    /// The next countdown: uniform in [1, 2 * period - 1], mean `period`.
    fn draw(&mut self) -> u64 {
        if self.period == 1 {
            return 1;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        1 + self.rng % (2 * self.period - 1)
    }

    #[cold]
    #[inline(never)]
    fn restart(&mut self) {
        self.epoch += self.drawn;
        self.countdown = self.draw();
        self.drawn = self.countdown;
    }
}

impl Default for FullStats {
    fn default() -> Self {
        FullStats::ZERO
    }
}

impl Tier for FullStats {
    const ZERO: Self = FullStats {
        slow_allocs: 0,
        pages_committed: 0,
        pages_released: 0,
        gone: [0; NUM_CLASSES + 1],
        swept: 0,
        lifetime_histogram: [0; LIFETIME_BUCKETS],
        period: FullStats::DEFAULT_PERIOD,
        countdown: FullStats::DEFAULT_PERIOD,
        epoch: 0,
        drawn: FullStats::DEFAULT_PERIOD,
        rng: 0x9E37_79B9_7F4A_7C15,
    };
    const COUNTS: bool = true;
    const BIRTHS: bool = true;
    #[inline(always)]
    fn slow(&mut self, _class: usize) {
        self.slow_allocs += 1;
    }
    #[inline(always)]
    fn free(&mut self, class_frees: &mut u64) {
        *class_frees += 1;
    }
    #[inline(always)]
    fn free_large(&mut self) {
        self.gone[NUM_CLASSES] += 1;
    }
    #[inline(always)]
    fn swept(&mut self, class: usize, n: usize) {
        self.gone[class] += n as u64;
        self.swept += n as u64;
    }
    #[inline(always)]
    fn committed(&mut self, pages: usize) {
        self.pages_committed += pages as u64;
    }
    #[inline(always)]
    fn released(&mut self, pages: usize) {
        self.pages_released += pages as u64;
    }
    #[inline(always)]
    fn sample(&mut self) -> bool {
        self.countdown -= 1;
        self.countdown == 0
    }
    fn birth(&mut self) -> u64 {
        let stamp = self.allocs();
        self.restart();
        stamp
    }
    fn death(&mut self, born: u64) {
        let survived = self.allocs() - born;
        self.lifetime_histogram[TierStats::lifetime_bucket(survived)] += 1;
    }
    fn snapshot(&self, census: &Census) -> TierStats {
        let mut class_histogram = census.live;
        for ((h, gone), frees) in class_histogram.iter_mut().zip(self.gone).zip(census.frees) {
            *h += gone + frees;
        }
        let allocs: u64 = class_histogram.iter().sum();
        let live = &census.live;
        TierStats {
            fast_allocs: allocs - self.slow_allocs,
            slow_allocs: self.slow_allocs,
            frees: allocs - live.iter().sum::<u64>() - self.swept,
            pages_committed: self.pages_committed,
            pages_released: self.pages_released,
            class_histogram,
            lifetime_histogram: self.lifetime_histogram,
            lifetime_sample_period: self.period,
        }
    }
}

/// The tier of the global heap, chosen by the cargo features.
#[cfg(feature = "stats-full")]
pub type Active = FullStats;
#[cfg(all(feature = "stats-basic", not(feature = "stats-full")))]
pub type Active = BasicStats;
#[cfg(not(feature = "stats-basic"))]
pub type Active = NoStats;
