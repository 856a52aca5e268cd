//! Runs a Sspur file natively without the CLI: `native_run FILE [ARGS]`.
//! The differential tests spawn it (a trap exits the process, so each run
//! needs its own). Under `SSPUR_MEM=gc` it compiles the checked program
//! without the ownership pass's drops, as the driver does.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: native_run FILE [ARGS]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read(&path).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            eprintln!("error: {path} is not valid UTF-8");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let program = match check::check_source(&text) {
        Ok(p) => p,
        Err(diags) => {
            eprint!("{}", check::render_diagnostics(&path, &text, &diags));
            return ExitCode::from(1);
        }
    };
    let gc = std::env::var("SSPUR_MEM").is_ok_and(|m| m == "gc");
    let program = if gc {
        program
    } else {
        ownership::analyze(&program).program
    };
    let opts = codegen::Options {
        path,
        args: args.collect(),
        time: false,
        site_names: Default::default(),
    };
    ExitCode::from(codegen::run(&program, &opts).clamp(0, 255) as u8)
}
