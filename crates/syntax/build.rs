//! Generates the parser from grammar/sspur.lalrpop into OUT_DIR.

fn main() {
    let grammar = "../../grammar/sspur.lalrpop";
    println!("cargo:rerun-if-changed={grammar}");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    if let Err(e) = lalrpop::Configuration::new()
        .set_out_dir(out_dir)
        .emit_rerun_directives(false)
        .process_file(grammar)
    {
        panic!("grammar/sspur.lalrpop: {e}");
    }
}
