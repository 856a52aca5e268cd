//! Small helpers shared by the compiler crates (after rust-analyzer's
//! `stdx`): nothing here knows about Sspur.
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::sync::Mutex;

thread_local! {
    /// On a thread [`with_big_stack`] started: an address near the top of
    /// its stack and the bytes usable below it.
    static BIG_STACK: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// An address in the current frame.
#[inline(never)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker as *const u8).addr()
}

/// Stack bytes left below the caller, on a thread [`with_big_stack`]
/// started (0 on any other thread: its size is not known).
fn stack_left() -> usize {
    BIG_STACK.with(Cell::get).map_or(0, |(top, size)| {
        size.saturating_sub(top.saturating_sub(stack_address()))
    })
}

/// Slack kept off a started thread's budget: the frames above the work.
const SLACK: usize = 1 << 20;

/// The smallest stack [`with_big_stack`] falls back to.
const MIN_STACK: usize = 16 << 20;

/// Runs `work` on a new thread with a `stack_bytes` stack (reserved, not
/// committed: only the pages used are touched) and returns its result; on
/// the current thread if no thread can be started. A panic in `work` is
/// resumed on the caller.
///
/// The compiler recurses over trees as deep as the parser allows, which
/// in a debug build needs more than a default thread's stack.
///
/// Already on such a thread with `stack_bytes` left, `work` runs in
/// place: the checker asks for a stack per function body, and a thread
/// per body (a mapping, a clone and a join) costs more than checking a
/// small body does.
pub fn with_big_stack<R: Send>(
    stack_bytes: usize,
    name: &str,
    work: impl FnOnce() -> R + Send,
) -> R {
    if stack_left() >= stack_bytes {
        return work();
    }
    // The closure moves into the thread only if it starts; otherwise it is
    // taken back and run here.
    let work = Mutex::new(Some(work));
    let take = || match work.lock() {
        Ok(mut w) => w.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    // Where the system refuses the reservation (a loaded machine, `ulimit
    // -v`), smaller stacks still beat the caller's own, which is all that
    // is left after them.
    let sizes = std::iter::successors(Some(stack_bytes), |s| (s / 4 >= MIN_STACK).then_some(s / 4));
    let on_thread = std::thread::scope(|scope| {
        for size in sizes {
            let spawned = std::thread::Builder::new()
                .name(name.to_string())
                .stack_size(size)
                .spawn_scoped(scope, {
                    let take = &take;
                    move || {
                        let budget = size.saturating_sub(SLACK);
                        BIG_STACK.with(|b| b.set(Some((stack_address(), budget))));
                        take().map(|w| w())
                    }
                });
            if let Ok(handle) = spawned {
                return match handle.join() {
                    Ok(out) => out,
                    Err(panic) => std::panic::resume_unwind(panic),
                };
            }
        }
        None
    });
    match on_thread {
        Some(out) => out,
        None => match take() {
            Some(w) => w(),
            None => unreachable!("the work ran on the thread"),
        },
    }
}

/// The process's address space limit (`ulimit -v`, `Max address space`
/// of `/proc/self/limits`) in bytes; `None` when unlimited or unknown.
pub fn address_space_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// The process's resident memory at one moment and its peak until then,
/// in bytes; shown as `rss R MB peak P MB`.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    pub rss: u64,
    pub peak: u64,
}

/// `VmRSS` and `VmHWM` of `/proc/self/status`; `None` where that file
/// does not exist (not Linux).
pub fn memory() -> Option<Memory> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status.lines().find_map(|l| {
            let kb = l.strip_prefix(name)?.trim().strip_suffix("kB")?;
            kb.trim().parse::<u64>().ok().map(|k| k * 1024)
        })
    };
    Some(Memory {
        rss: field("VmRSS:")?,
        peak: field("VmHWM:")?,
    })
}

impl std::fmt::Display for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
        write!(f, "rss {:.1} MB peak {:.1} MB", mb(self.rss), mb(self.peak))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_deep_recursion_and_returns_its_result() {
        fn depth(n: u64) -> u64 {
            let pad = [n; 64];
            if n == 0 {
                pad[0]
            } else {
                1 + depth(n - 1) + pad[63] - n
            }
        }
        assert_eq!(
            with_big_stack(256 << 20, "deep", || depth(200_000)),
            200_000
        );
    }

    #[test]
    fn runs_in_place_on_a_thread_with_the_stack_left() {
        let outer = with_big_stack(64 << 20, "outer", || {
            let here = std::thread::current().id();
            let small = with_big_stack(8 << 20, "inner", || std::thread::current().id());
            let large = with_big_stack(128 << 20, "inner", || std::thread::current().id());
            (here == small, here == large)
        });
        assert_eq!(outer, (true, false));
        // A thread this function did not start has no known stack.
        let main = std::thread::current().id();
        assert_ne!(
            with_big_stack(1 << 20, "t", || std::thread::current().id()),
            main
        );
    }

    #[test]
    fn resumes_a_panic() {
        let r = std::panic::catch_unwind(|| with_big_stack(1 << 20, "p", || panic!("boom")));
        assert!(r.is_err());
    }

    #[test]
    fn memory_counts_touched_pages() {
        let Some(before) = memory() else {
            return;
        };
        let block = vec![1u8; 64 << 20];
        let after = memory().expect("read once");
        assert!(std::hint::black_box(&block).iter().all(|&b| b == 1));
        assert!(after.peak >= after.rss);
        assert!(
            after.peak >= before.peak.max(64 << 20),
            "{after} after touching 64 MB"
        );
    }
}
