//! Pathologically deep input is a diagnostic, never a stack overflow, on
//! both the accepting and the error path (where partly built trees are
//! dropped by the generated parser).

fn assert_diag(text: &str, message: &str) {
    let (_, diags) = syntax::parse(text);
    assert!(
        diags.iter().any(|d| d.message.contains(message)),
        "no `{message}` in {diags:?}"
    );
}

const N: usize = 300_000;

#[test]
fn long_operator_chain() {
    let text = format!("fn f() -> Int {{ 1{} }}", " + 1".repeat(N));
    assert_diag(&text, "nesting too deep");
}

#[test]
fn long_operator_chain_then_error() {
    let text = format!("fn f() -> Int {{ 1{} ) }}", " + 1".repeat(N));
    assert_diag(&text, "expected");
}

#[test]
fn long_method_chain_then_eof() {
    let text = format!("fn f() {{ x{}", ".a".repeat(N));
    assert_diag(&text, "expected");
}

#[test]
fn unary_run() {
    let text = format!("fn f() {{ {}1 }}", "-".repeat(N));
    assert_diag(&text, "nesting too deep");
    let text = format!("fn f() {{ {}", "!".repeat(N));
    assert_diag(&text, "nesting too deep");
}

/// LALRPOP's error recovery costs the parser's stack depth for each token
/// it skips, so unbracketed nesting (lambdas, unary runs) counts against
/// the bracket limit before parsing: a syntax error after 20,000 nested
/// lambdas took 4.7 s in a release build. Now such input is refused by the
/// one linear pre-pass over the tokens, before the parser runs: its
/// diagnostic (the last one, after any lexical errors) carries the
/// pre-pass's note. That is checked
/// rather than a wall time, which a loaded machine makes meaningless.
#[test]
fn errors_after_unbracketed_nesting_are_refused_before_parsing() {
    let k = 20_000;
    let cases = [
        format!(
            "fn main() {{\n    let f = {}| {}1\n}}\n",
            "|x| ".repeat(k),
            "|x| ".repeat(k)
        ),
        format!(
            "fn main() {{\n    let f = {}| {}1\n}}\n",
            "- ".repeat(k),
            "- ".repeat(k)
        ),
        format!(
            "fn main() {{\n    let f = {}| {}1\n}}\n",
            "|| ".repeat(k),
            "|| ".repeat(k)
        ),
        format!(
            "fn main() {{\n    let x = 1\n    {}$ 1 {}\n}}\n",
            "match x {{ _ => ".repeat(5 * k),
            "}".repeat(5 * k)
        ),
    ];
    for text in cases {
        let (file, diags) = syntax::parse(&text);
        let refused = diags.last().is_some_and(|d| {
            d.message == "nesting too deep"
                && d.notes.iter().any(|n| n.contains("may nest at most"))
        });
        assert!(
            refused,
            "not refused by the pre-pass: {diags:?} for {}...",
            &text[..40]
        );
        assert!(file.items.is_empty());
    }
    // 255 nested lambdas are still fine.
    let ok = format!("fn main() {{\n    let f = {}1\n}}\n", "|x| ".repeat(255));
    let (_, diags) = syntax::parse(&ok);
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn else_if_chain() {
    let text = format!(
        "fn f() {{ if a {{ 1 }}{} else {{ 2 }} }}",
        " else if a { 1 }".repeat(N / 10)
    );
    assert_diag(&text, "nesting too deep");
}

#[test]
fn fn_type_chain() {
    let text = format!("fn f(g: {}Int) {{}}", "fn() -> ".repeat(N / 10));
    assert_diag(&text, "nesting too deep");
}

#[test]
fn lambda_and_return_chains() {
    let text = format!("fn f() {{ {}1 }}", "|x| ".repeat(N / 10));
    assert_diag(&text, "nesting too deep");
    let text = format!("fn f() {{ {}1 }}", "return ".repeat(N / 10));
    assert_diag(&text, "nesting too deep");
}

#[test]
fn brackets() {
    for open in ["(", "[", "{", "f("] {
        let text = format!("fn f() {{ {} }}", open.repeat(N));
        assert_diag(&text, "nesting too deep");
    }
    let text = format!("fn f() {{ print(\"{{{}}}\") }}", "(".repeat(300));
    assert_diag(&text, "nesting too deep");
}

#[test]
fn deep_but_allowed() {
    let text = format!(
        "fn f() -> Int {{ {}1{} }}",
        "(".repeat(255),
        ")".repeat(255)
    );
    let (file, diags) = syntax::parse(&text);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.items.len(), 1);
    let text = format!("fn f() -> Int {{ 1{} }}", " + 1".repeat(900));
    let (_, diags) = syntax::parse(&text);
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn deep_hole_then_error() {
    let text = format!("fn f() {{ print(\"{{1{} )}}\") }}", " + 1".repeat(N));
    let (_, diags) = syntax::lex_with_diagnostics(&text);
    assert!(!diags.is_empty());
    assert_diag(&text, "expected");
    let text = format!("fn f() {{ print(\"{{1{}}}\") }}", " + 1".repeat(N));
    assert_diag(&text, "nesting too deep");
}
