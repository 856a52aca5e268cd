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
    assert_diag(&text, "expected");
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
