//! Exhaustiveness: each case is a scrutinee type, arms, and the value the
//! checker must name as not covered (or none when the match is complete).

const TYPES: &str = "type Tree = Leaf | Node(Tree, Int, Tree)\ntype C = R | G | B\n";

/// (parameter type, arms, expected missing pattern).
const CASES: &[(&str, &str, Option<&str>)] = &[
    ("Bool", "true => 1, false => 2", None),
    ("Bool", "true => 1", Some("false")),
    (
        "Option[Bool]",
        "Some(true) => 1, None => 2",
        Some("Some(false)"),
    ),
    (
        "Option[Bool]",
        "Some(true) => 1, Some(false) => 2, None => 3",
        None,
    ),
    ("Option[Int]", "Some(0) => 1, None => 2", Some("Some(_)")),
    ("Option[Int]", "Some(0) => 1, Some(n) => n, None => 2", None),
    (
        "(Bool, Bool)",
        "(true, _) => 1, (_, true) => 2",
        Some("(false, false)"),
    ),
    (
        "(Bool, C)",
        "(true, _) => 1, (false, R) => 2, (false, G) => 3",
        Some("(false, B)"),
    ),
    ("C", "R => 1, G => 2, B => 3", None),
    ("C", "R => 1, _ => 2", None),
    ("C", "G => 1", Some("R")),
    ("Tree", "Leaf => 0, Node(_, v, _) => v", None),
    (
        "Tree",
        "Node(Leaf, v, _) => v, Leaf => 0",
        Some("Node(Node(_, _, _), _, _)"),
    ),
    ("Int", "0 => 1, 1 => 2", Some("_")),
    ("Int", "0 => 1, n => n", None),
    ("Str", "\"a\" => 1", Some("_")),
    ("Str", "\"a\" => 1, _ => 2", None),
    (
        "(Int, Bool)",
        "(0, true) => 1, (_, false) => 2",
        Some("(_, true)"),
    ),
    (
        "Option[Option[C]]",
        "None => 0, Some(None) => 1, Some(Some(R)) => 2, Some(Some(G)) => 3",
        Some("Some(Some(B))"),
    ),
    // Unreachable arms are allowed.
    ("Bool", "_ => 1, true => 2", None),
];

#[test]
fn exhaustiveness() {
    let mut failures = Vec::new();
    for (ty, arms, want) in CASES {
        let text = format!(
            "{TYPES}fn f(x: {ty}) -> Int {{\n    match x {{ {arms} }}\n}}\nfn main() {{\n}}\n"
        );
        let got = match check::check_source(&text) {
            Ok(_) => None,
            Err(diags) => {
                let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
                match msgs.as_slice() {
                    [m] if m.starts_with("non-exhaustive match: `") => m
                        .strip_prefix("non-exhaustive match: `")
                        .and_then(|m| m.strip_suffix("` is not covered"))
                        .map(str::to_string),
                    _ => Some(format!("unexpected diagnostics: {msgs:?}")),
                }
            }
        };
        if got.as_deref() != *want {
            failures.push(format!("{ty} / {arms}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
