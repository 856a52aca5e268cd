//! The Sspur runtime as a static library: `sspur build` links the object
//! file it compiles with this crate's `librtlib.a` and the system's C
//! libraries into an executable. The archive holds every `#[no_mangle]`
//! entry point of crate `rt`: the functions compiled code calls and
//! `sspur_aot_main`, which the executable's `main` calls (`rt::image`).
#![forbid(unsafe_code)]

pub use rt;
