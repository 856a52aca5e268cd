//! A stable, readable printer for the IR (what snapshots show).

use crate::Program;

/// Prints every function of the program.
pub fn program(p: &Program) -> String {
    let _ = p;
    String::new()
}
