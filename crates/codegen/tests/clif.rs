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
    // The free is called only for a non-empty list (an empty one has no
    // block): the length is tested first, so it need not live until the call.
    let free = text
        .lines()
        .find_map(|l| {
            let (name, decl) = l.trim().split_once(" = ")?;
            decl.starts_with("%sspur_free_cell ")
                .then(|| name.to_string())
        })
        .unwrap_or_else(|| panic!("the owned list is freed:\n{text}"));
    let call = format!("call {free}(");
    let blocks: Vec<&str> = text.split("\n\n").collect();
    let at = blocks
        .iter()
        .position(|b| b.contains(&call))
        .unwrap_or_else(|| panic!("no call of the free:\n{text}"));
    let label = blocks[at].trim_start().split(':').next().unwrap_or("");
    assert!(
        blocks[..at].iter().any(|b| b
            .lines()
            .any(|l| { l.trim().starts_with("brif") && l.split([' ', ',']).any(|w| w == label) })),
        "the length is tested before the free ({label}):\n{text}"
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

#[test]
fn a_block_taken_by_its_free_bit_has_its_slack_zeroed() {
    // Five words in a 48-byte class: a free block of a swept page, taken
    // by its bit, holds what it held when it died, so the sixth word is
    // zeroed inline; the constructor writes the other five.
    let text = clif(
        "type R = { a: Int, b: Int, c: Int, d: Int, e: Int }\n\n\
         fn main() {\n    let r = R { a: 1, b: 2, c: 3, d: 4, e: 5 }\n    print(r.a + r.e)\n}\n",
    );
    let main = function(&text, "fn0_main");
    let bit = main
        .split("\n\n")
        .find(|b| b.contains(" = ctz.i64 "))
        .unwrap_or_else(|| panic!("no block takes a free bit:\n{main}"));
    assert!(
        bit.lines()
            .any(|l| l.trim().starts_with("store") && l.contains("+40") && l.ends_with("= 0")),
        "the slack word is zeroed:\n{bit}"
    );
    assert!(
        !bit.contains("+32"),
        "only the slack is zeroed; the constructor writes the fields:\n{bit}"
    );
}

/// The text of one function in `emit_clif`'s output.
fn function<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("; {name}\n"))
        .unwrap_or_else(|| panic!("{name} missing from\n{text}"));
    let rest = &text[start..];
    &rest[..rest.find("\n}\n").map_or(rest.len(), |i| i + 3)]
}

#[test]
fn small_leaf_functions_are_lowered_in_place_of_their_calls() {
    let text = clif(
        "type Color = Red | Black\n\
         type Tree = Leaf | Node(Color, Tree, Int, Tree)\n\
         fn is_red(t: Tree) -> Bool {\n    match t {\n        Node(Red, _, _, _) => true\n        _ => false\n    }\n}\n\
         fn half(x: Int) -> Int {\n    x / 2\n}\n\
         fn grow(t: Tree) -> Tree {\n    Node(Black, t, 0, Leaf)\n}\n\
         fn main() {\n    let t = grow(Node(Red, Leaf, 1, Leaf))\n    print(is_red(t))\n    print(half(5))\n}\n",
    );
    let main = function(&text, "fn3_main");
    assert!(
        !main.contains("_is_red sig"),
        "a match over its parameter returning constants is lowered in place:\n{main}"
    );
    // Division may trap (its frame belongs in the call chain), and a
    // constructor allocates: both stay calls.
    for callee in ["_half sig", "_grow sig"] {
        assert!(main.contains(callee), "{callee} is called:\n{main}");
    }
    // The leaf is still compiled for its other uses (function values).
    assert!(text.contains("; fn0_is_red\n"));
}

#[test]
fn a_reuse_tests_the_table_of_renewed_blocks_before_calling_the_runtime() {
    let text = clif(
        "type T = Leaf | Node(T, Int, T)\n\
         fn main() {\n    let t = Node(Leaf, 1, Leaf)\n    let u = match t {\n        Leaf => Leaf\n        Node(l, v, r) => Node(r, v + 1, l)\n    }\n    match u {\n        Node(_, k, _) => print(k)\n        Leaf => print(0)\n    }\n}\n",
    );
    let main = function(&text, "fn0_main");
    assert!(main.contains("sspur_reuse_or_alloc"), "{main}");
    // The table's address (emit clif's stand-in), hashed into a slot.
    assert!(main.contains("0x5800_0000"), "the table is read:\n{main}");
    assert!(main.contains("imul"), "the address is hashed:\n{main}");
}

#[test]
fn a_tuple_literal_a_match_takes_apart_is_never_built() {
    let text = clif(
        "type E = Val(Int) | Add(E, E)\n\
         fn add(a: E, b: E) -> E {\n    match (a, b) {\n        (Val(n), Val(m)) => Val(n + m)\n        (Val(0), f) => f\n        (f, _) => Add(f, b)\n    }\n}\n\
         fn both(a: Int, b: Int) -> Bool {\n    match (a, b) {\n        (0, 0) => true\n        _ => false\n    }\n}\n\
         fn pair(a: Int, b: Int) -> Int {\n    match (a, b) {\n        p => p.0 + p.1\n    }\n}\n\
         fn main() {\n    print(add(Val(1), Val(2)))\n    print(both(0, 1))\n    print(pair(1, 2))\n}\n",
    );
    // `add` allocates its results (Val, Add) but no tuple: two
    // allocations, each with its runtime call as the cold path.
    let add = function(&text, "fn0_add");
    assert!(add.contains("fn0 = %sspur_alloc_block"), "{add}");
    assert_eq!(
        add.matches("call fn0(").count(),
        2,
        "no tuple is built:\n{add}"
    );
    // Without an allocation a match over a tuple of parameters is a leaf.
    let main = function(&text, "fn3_main");
    assert!(!main.contains("_both sig"), "lowered in place:\n{main}");
    // An arm that names the whole value sees a tuple: it is built.
    let pair = function(&text, "fn2_pair");
    assert!(
        pair.contains("iconst.i64 16"),
        "the tuple is built:\n{pair}"
    );
}
