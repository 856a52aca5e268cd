//! `emit_clif` prints every compiled function, and a program that fails to
//! lower reports an error instead of panicking.

fn clif(src: &str) -> String {
    let program = check::check_source(src).unwrap_or_else(|d| panic!("{d:?}"));
    codegen::emit_clif(&ownership::analyze(&program).program)
}

#[test]
fn every_function_lambda_and_function_value_is_printed() {
    let text = clif(
        "fn twice(f: fn(Int) -> Int, x: Int) -> Int {\n    f(f(x))\n}\n\n\
         fn inc(x: Int) -> Int {\n    x + 1\n}\n\n\
         fn main() {\n    let k = 3\n    print(twice(|x| x * k, 2))\n    print(twice(inc, 2))\n}\n",
    );
    for name in [
        "fn0_twice",
        "fn1_inc",
        "fn2_main",
        "lambda0_in_main",
        "fnvalue0_inc",
    ] {
        assert!(
            text.contains(&format!("; {name}\n")),
            "{name} missing from\n{text}"
        );
    }
    assert!(
        text.contains("call_indirect"),
        "closures are called indirectly:\n{text}"
    );
}

#[test]
fn drops_become_runtime_frees() {
    let text = clif("fn main() {\n    let xs = [1, 2, 3].map(|x| x + 1)\n    print(xs.sum)\n}\n");
    assert!(
        text.contains("sspur_drop"),
        "the owned list is freed:\n{text}"
    );
}

#[test]
fn small_cells_allocate_inline_with_the_call_as_the_cold_path() {
    let text = clif("fn main() {\n    let p = (1, 2)\n    print(p)\n}\n");
    // The runtime's class-state word (made-up address under `emit clif`)
    // is read, the class's free list popped or its cursor bumped; the
    // runtime call sits in a cold block.
    assert!(
        text.contains("load.i64 notrap aligned v3  ; v3 = 0x4fff_f000"),
        "the class states are read inline:\n{text}"
    );
    assert!(text.contains("icmp ule"), "the bump is bounded:\n{text}");
    let cold = text
        .split("\n\n")
        .find(|b| b.contains(" cold:"))
        .unwrap_or_else(|| panic!("no cold block:\n{text}"));
    assert!(
        cold.contains("call fn0(") && text.contains("fn0 = %sspur_alloc_block"),
        "the slow path calls the runtime:\n{text}"
    );
}
