//! The runtime belongs to the thread that initialised it: a use from a
//! second thread aborts with a message, in every build (checked in a child
//! process, since the check ends the process).

mod common;

use std::os::unix::process::ExitStatusExt;

use common::*;
use rt::Settings;

const CHILD: &str = "SSPUR_RT_OWNER_CHILD";
const MESSAGE: &str =
    "sspur: the runtime was used from a thread other than the one that initialised it";

/// Runs in a child process (see `second_thread_aborts_with_its_message`):
/// the test thread owns the runtime, then a second thread uses it in the
/// way `SSPUR_RT_OWNER_CHILD` names.
#[test]
fn second_thread_child() {
    let Some(how) = std::env::var_os(CHILD) else {
        return;
    };
    let _g = fresh(Settings::DEFAULT);
    // The owner may use it.
    let p = alloc(64, 0);
    rt::sspur_collect();
    std::hint::black_box(p);
    eprintln!("the owner used the runtime");
    let second = std::thread::spawn(move || match how.to_str() {
        // A collection checks the owner in every build.
        Some("collect") => rt::sspur_collect(),
        // So does a second init.
        _ => rt::sspur_rt_init(),
    });
    let _ = second.join();
    unreachable!("the second thread's use must abort");
}

#[test]
fn second_thread_aborts_with_its_message() {
    for how in ["collect", "init"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "second_thread_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, how)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{how}: {stderr}");
        assert!(
            stderr.contains("the owner used the runtime"),
            "{how}: {stderr}"
        );
        assert!(stderr.contains(MESSAGE), "{how}: {stderr}");
        assert!(!stderr.contains("must abort"), "{how}: {stderr}");
    }
}
