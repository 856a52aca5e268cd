//! Small helpers shared by the compiler crates (after rust-analyzer's
//! `stdx`): nothing here knows about Sspur.
#![forbid(unsafe_code)]

use std::sync::Mutex;

/// Runs `work` on a new thread with a `stack_bytes` stack (reserved, not
/// committed: only the pages used are touched) and returns its result; on
/// the current thread if no thread can be started. A panic in `work` is
/// resumed on the caller.
///
/// The compiler recurses over trees as deep as the parser allows, which
/// in a debug build needs more than a default thread's stack.
pub fn with_big_stack<R: Send>(
    stack_bytes: usize,
    name: &str,
    work: impl FnOnce() -> R + Send,
) -> R {
    // The closure moves into the thread only if it starts; otherwise it is
    // taken back and run here.
    let work = Mutex::new(Some(work));
    let take = || match work.lock() {
        Ok(mut w) => w.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    let on_thread = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(stack_bytes)
            .spawn_scoped(scope, || take().map(|w| w()));
        match spawned {
            Ok(handle) => match handle.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => None,
        }
    });
    match on_thread {
        Some(out) => out,
        None => match take() {
            Some(w) => w(),
            None => unreachable!("the work ran on the thread"),
        },
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
    fn resumes_a_panic() {
        let r = std::panic::catch_unwind(|| with_big_stack(1 << 20, "p", || panic!("boom")));
        assert!(r.is_err());
    }
}
