//! Shared test setup: the runtime is one global, so tests take a lock and
//! start from a fresh runtime with explicit settings.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

use rt::Settings;

static LOCK: Mutex<()> = Mutex::new(());

/// A fresh runtime configured with `settings`, exclusive while the guard lives.
pub fn fresh(settings: Settings) -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: no pointer into the old heap outlives the previous test.
    unsafe { rt::reset_for_tests() };
    rt::init_with(settings);
    guard
}

pub fn counting() -> Settings {
    Settings {
        gc_stats: rt::StatsMode::Summary,
        ..Settings::DEFAULT
    }
}

pub fn alloc(size: usize, kind: u32) -> *mut u8 {
    let p = rt::sspur_alloc(size, kind, 0);
    assert!(!p.is_null(), "allocation of {size} bytes failed");
    p
}

/// Hides an address from the conservative scan.
pub const MASK: usize = 0x5a5a_0000_0000_5a5a;

/// Overwrites dead stack below the caller with zeros, so stale copies of
/// pointers from finished calls cannot keep garbage alive.
#[inline(never)]
pub fn scrub_stack() {
    let mut buf = [0usize; 8192];
    std::hint::black_box(&mut buf);
}

/// Runs `body` on a new thread, below a scrubbed stack: no frame slot the
/// body leaves unwritten can hold a stale pointer from an earlier test (the
/// frames above it are the thread start's, the same for every thread). The
/// body calls [`fresh`] itself, so the runtime records this thread's stack.
pub fn on_fresh_stack(body: fn()) {
    let run = std::thread::Builder::new()
        .name("fresh-stack".into())
        .stack_size(4 << 20)
        .spawn(move || {
            scrub_stack();
            call(body);
        })
        .expect("spawning a test thread");
    if let Err(panic) = run.join() {
        std::panic::resume_unwind(panic);
    }
}

#[inline(never)]
fn call(body: fn()) {
    body()
}

/// Allocates `n` unreachable blocks and returns their masked addresses.
#[inline(never)]
pub fn garbage(n: usize, size: usize, kind: u32) -> Vec<usize> {
    (0..n).map(|_| alloc(size, kind) as usize ^ MASK).collect()
}

pub fn is_allocated(addr: usize) -> bool {
    rt::block_of(addr as *const u8).is_some()
}

/// Inlined so the scrubbed area is exactly where the collector's frames go.
#[inline(always)]
pub fn collect() {
    scrub_stack();
    rt::sspur_collect();
}

/// Whether the block at a masked address is allocated; unmasks in its own
/// frame so the caller's frame never holds the address.
#[inline(never)]
pub fn masked_allocated(masked: usize) -> bool {
    is_allocated(masked ^ MASK)
}

/// Stale words on the stack may keep a stray block of garbage alive (the
/// collector is conservative); anything more than that is a bug.
pub const STRAY_ALLOWANCE: usize = 2;

/// Asserts that all but at most STRAY_ALLOWANCE of the masked blocks were reclaimed.
#[inline(never)]
pub fn assert_reclaimed(masked: &[usize], what: &str) {
    let kept = masked.iter().filter(|&&m| masked_allocated(m)).count();
    assert!(
        kept <= STRAY_ALLOWANCE,
        "{kept} of {} {what} survived",
        masked.len()
    );
}
