//! SSPUR_MEM=check: double frees abort naming both sites (in a child
//! process), writes after free and unsound frees are reported by the next
//! collection.

mod common;

use common::*;
use rt::{MemMode, Settings};

fn check_mode() -> Settings {
    Settings {
        mem: MemMode::Check,
        ..Settings::DEFAULT
    }
}

const CHILD: &str = "SSPUR_RT_TEST_CHILD";

/// Runs in a child process (see `double_free_aborts_naming_both_sites`).
#[test]
fn double_free_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let _g = fresh(check_mode());
    rt::set_site_names(vec![
        "t.ssp:1:9 list literal".into(),
        "t.ssp:3:1 drop of xs".into(),
        "t.ssp:4:1 drop of ys".into(),
    ]);
    let p = rt::sspur_alloc(40, 0, 1);
    let msg = b"before the abort\n";
    unsafe { rt::sspur_write_stdout(msg.as_ptr(), msg.len()) };
    unsafe { rt::sspur_free(p, 2) };
    unsafe { rt::sspur_free(p.add(8), 3) };
    unreachable!("the second free must abort");
}

#[test]
fn double_free_aborts_naming_both_sites() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "double_free_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "sspur check: double free of a 48-byte block allocated at t.ssp:1:9 list literal: freed at t.ssp:3:1 drop of xs, freed again at t.ssp:4:1 drop of ys"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("before the abort"),
        "stdout flushed before the abort: {stdout}"
    );
    assert!(!stderr.contains("must abort"), "{stderr}");
}

#[test]
fn freed_blocks_are_filled_and_never_reused() {
    let _g = fresh(check_mode());
    let p = alloc(64, 1);
    unsafe { rt::sspur_free(p, 0) };
    assert!(unsafe { std::slice::from_raw_parts(p, 64) }
        .iter()
        .all(|&b| b == 0xA5));
    for _ in 0..5000 {
        assert_ne!(alloc(64, 1), p);
    }
    collect();
    assert!(rt::check_reports().is_empty(), "{:?}", rt::check_reports());
    assert_eq!(rt::stats().counters.freed_last_use_blocks, 1);
}

#[test]
fn write_after_free_is_reported_at_the_next_collection() {
    let _g = fresh(check_mode());
    rt::set_site_names(vec![
        "w.ssp:2:3 string from join".into(),
        "w.ssp:5:1 drop of s".into(),
    ]);
    let p = rt::sspur_alloc(100, 0, 1);
    unsafe { rt::sspur_free(p, 2) };
    unsafe { *p.add(30) = 0 };
    collect();
    assert_eq!(
        rt::check_reports(),
        ["sspur check: write after free at offset 30 of a 112-byte block: allocated at w.ssp:2:3 string from join, freed at w.ssp:5:1 drop of s"]
    );
    // Reported once.
    collect();
    assert_eq!(rt::check_reports().len(), 1);
}

#[test]
fn freed_block_still_reachable_is_reported() {
    let _g = fresh(check_mode());
    static mut HOLDER: usize = 0;
    // SAFETY: a static, readable for the rest of the run.
    unsafe { rt::add_root(&raw const HOLDER) };
    let holder = alloc(32, 1);
    let freed = rt::sspur_alloc(16, 0, 0);
    unsafe {
        *(holder as *mut usize) = freed as usize;
        HOLDER = holder as usize;
    }
    unsafe { rt::sspur_free(freed, 0) };
    collect();
    assert_eq!(
        rt::check_reports(),
        ["sspur check: a freed 16-byte block is still reachable: allocated at an unknown site, freed at an unknown site"]
    );
}

#[test]
fn block_after_a_freed_one_is_not_an_unsound_free() {
    // A pointer to the start of B is also a one-past-the-end pointer of the
    // block A before it: A is kept alive but its free is not reported.
    let _g = fresh(check_mode());
    static mut HOLDER: usize = 0;
    // SAFETY: a static, readable for the rest of the run.
    unsafe { rt::add_root(&raw const HOLDER) };
    let holder = alloc(32, 1);
    let a = rt::sspur_alloc(16, 0, 0);
    let b = rt::sspur_alloc(16, 0, 0);
    assert_eq!(a as usize + 16, b as usize, "adjacent blocks of one class");
    unsafe {
        *(holder as *mut usize) = b as usize;
        HOLDER = holder as usize;
    }
    unsafe { rt::sspur_free(a, 0) };
    collect();
    assert!(rt::check_reports().is_empty(), "{:?}", rt::check_reports());
}

#[test]
fn large_blocks_are_quarantined_too() {
    let _g = fresh(check_mode());
    let p = alloc(100_000, 0);
    unsafe { rt::sspur_free(p, 0) };
    assert_ne!(alloc(100_000, 0), p);
    unsafe { *p.add(99_000) = 1 };
    collect();
    assert_eq!(rt::check_reports().len(), 1, "{:?}", rt::check_reports());
}
