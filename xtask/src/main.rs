//! Project tasks: `cargo xtask <task>`.
//!
//! - `run FILE [ARGS]`: build `sspur` in release mode and run the program
//!   natively; the environment (SSPUR_MEM, SSPUR_GC_STATS, ...) passes
//!   through unchanged.
//! - `interp FILE [ARGS]`: the same on the reference interpreter.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: cargo xtask run FILE [ARGS]...\n       cargo xtask interp FILE [ARGS]...";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    match task.as_deref() {
        Some("run") if !rest.is_empty() => run_sspur(&[], &rest),
        Some("interp") if !rest.is_empty() => run_sspur(&["--interp"], &rest),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the release binary quietly, then runs `sspur run FLAGS REST`.
fn run_sspur(flags: &[&str], rest: &[String]) -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--quiet", "--release", "-p", "cli"])
        .status();
    match built {
        Ok(s) if s.success() => {}
        Ok(_) => return ExitCode::from(1),
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            return ExitCode::from(1);
        }
    }
    let exe = root().join("target/release/sspur");
    match Command::new(&exe).arg("run").args(flags).args(rest).status() {
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("xtask: cannot run {}: {e}", exe.display());
            ExitCode::from(1)
        }
    }
}
