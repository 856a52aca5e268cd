//! The drop-checking interpreter catches a `set` written in place where
//! the list is still referenced: every case here is a program whose `set`s
//! the ownership pass copies; forcing them in place (as a wrong analysis
//! would) must make `--check-drops` report it, while the program the pass
//! produced runs clean. A test that would fail if the analysis chose in
//! place wrongly, and proof the checker is not blind to it.

use ir::{ExprKind, Method, Program};

/// (name, source, what the report must say).
const CASES: &[(&str, &str, &str)] = &[
    (
        "read later",
        "fn main() {\n    let a = [1, 2, 3]\n    let b = a.set(0, 9)\n    print(a)\n    print(b)\n}\n",
        "after the set in place at",
    ),
    (
        "alias read after",
        "fn main() {\n    let a = [1, 2, 3]\n    let b = a\n    let c = a.set(0, 9)\n    print(b)\n    print(c)\n}\n",
        "writes into a shared list buffer",
    ),
    (
        "view read later",
        "fn main() {\n    let a = [1, 2, 3]\n    let v = a.take(2)\n    let b = a.set(0, 9)\n    print(v)\n    print(b)\n}\n",
        "after the set in place at",
    ),
    (
        "parameter the caller reads",
        "fn f(xs: List[Str]) -> List[Str] {\n    xs.set(0, \"z\")\n}\n\nfn main() {\n    let a = [\"a\", \"b\"].map(|s| s + \"!\")\n    let b = f(a)\n    print(a)\n    print(b)\n}\n",
        "after the set in place at",
    ),
    (
        "loop over a list declared outside",
        "fn main() {\n    let h = [0, 0, 0]\n    for k in 0..3 {\n        print(h.set(k, k))\n    }\n}\n",
        // The set's result, a temporary, is freed after the print: the
        // next iteration's read of h finds its block dropped.
        "use of a list buffer allocated at case.ssp:2:13 after its drop",
    ),
    (
        "stored in a record",
        "type B = { items: List[Int] }\n\nfn main() {\n    let a = [1, 2]\n    let r = B { items: a }\n    let c = a.set(0, 5)\n    print(r.items)\n    print(c)\n}\n",
        "writes into a shared list buffer",
    ),
];

/// Every copying `set` of the analysed program written in place.
fn force_in_place(p: &Program) -> (Program, usize) {
    let mut out = p.clone();
    let mut n = 0;
    for body in &mut out.bodies {
        let b = std::sync::Arc::make_mut(body);
        let ids: Vec<_> = b.exprs.iter().map(|(e, _)| e).collect();
        for e in ids {
            if let ExprKind::Method {
                method: Method::ListSet,
                receiver,
                args,
            } = &b.exprs[e].kind
            {
                let kind = ExprKind::SetInPlace {
                    list: *receiver,
                    index: args[0],
                    value: args[1],
                    reason: 0,
                };
                b.exprs[e].kind = kind;
                n += 1;
            }
        }
    }
    (out, n)
}

fn run(p: &Program) -> (i32, String, String) {
    let opts = interp::Options {
        path: "case.ssp".into(),
        args: Vec::new(),
        stdin: Some(String::new()),
        check_drops: true,
        oracle: false,
        max_depth: sspur_tests::INTERP_DEPTH,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let o = interp::run(p, &opts, &mut out, &mut err);
    (
        o.exit_code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn forcing_a_copying_set_in_place_is_reported() {
    for (name, src, want) in CASES {
        let program = check::check_source(src).unwrap_or_else(|_| panic!("{name}: checks"));
        let a = ownership::analyze(&program);
        let (exit, _, err) = run(&a.program);
        assert_eq!(exit, 0, "{name}: the analysed program runs clean: {err}");
        let (forced, n) = force_in_place(&a.program);
        assert!(n > 0, "{name}: the analysis copies some set");
        let (exit, _, err) = run(&forced);
        assert_eq!(exit, 3, "{name}: forced in place must be reported: {err}");
        assert!(
            err.contains("drop check:") && err.contains(want),
            "{name}: report says {want:?}: {err}"
        );
    }
}

#[test]
fn the_analysis_writes_in_place_where_the_list_dies() {
    let src = "fn main() {\n    var xs = [1, 2, 3]\n    for i in 0..3 {\n        xs := xs.set(i, xs[i] * 2)\n    }\n    let ys = xs.set(0, 0)\n    print(ys)\n}\n";
    let program = check::check_source(src).expect("checks");
    let a = ownership::analyze(&program);
    let (_, n) = force_in_place(&a.program);
    assert_eq!(
        n,
        0,
        "both sets are in place:\n{}",
        ownership::emit_drops(&a)
    );
    assert_eq!(run(&a.program), (0, "[0, 4, 6]\n".into(), String::new()));
}
