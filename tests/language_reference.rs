//! docs/language.md is the language reference: every method of the method
//! table (`ir::methods`) has a row under its receiver's heading with the
//! table's number of parameters, every built-in function has a row under
//! "Built-in functions", and the reference lists nothing else there.

use ir::methods::{Recv, METHODS};
use ir::Builtin;

fn reference() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/language.md");
    std::fs::read_to_string(path).expect("docs/language.md")
}

fn heading(recv: Recv) -> &'static str {
    match recv {
        Recv::List => "### Methods of List[T]",
        Recv::Str => "### Methods of Str",
        Recv::Map => "### Methods of Map[K, V]",
        Recv::Int => "### Methods of Int",
        Recv::F64 => "### Methods of F64",
        Recv::Option => "### Methods of Option[T]",
    }
}

/// The lines of the section under `heading`, up to the next heading of the
/// same or a higher level.
fn section<'d>(doc: &'d str, heading: &str) -> Vec<&'d str> {
    let level = heading.split(' ').next().unwrap_or_default().len();
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    assert!(
        lines.next().is_some(),
        "docs/language.md has no `{heading}`"
    );
    lines
        .take_while(|l| {
            let hashes = l.split(' ').next().unwrap_or_default();
            hashes.is_empty() || !hashes.chars().all(|c| c == '#') || hashes.len() > level
        })
        .collect()
}

/// The name and parameter count of each table row that starts with a code
/// span: "| `name(a: A, f: fn(X, Y) -> Z)` | ...".
fn rows(lines: &[&str]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for l in lines {
        let Some(code) = l.strip_prefix("| `").and_then(|r| r.split('`').next()) else {
            continue;
        };
        let name: String = code
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let params = match code[name.len()..].strip_prefix('(') {
            None => 0,
            Some(inner) => {
                let inner = inner.strip_suffix(')').unwrap_or(inner);
                let mut depth = 0i32;
                let mut n = usize::from(!inner.trim().is_empty());
                for c in inner.chars() {
                    match c {
                        '(' | '[' => depth += 1,
                        ')' | ']' => depth -= 1,
                        ',' if depth == 0 => n += 1,
                        _ => {}
                    }
                }
                n
            }
        };
        out.push((name, params));
    }
    out
}

#[test]
fn every_method_and_builtin_is_in_the_reference() {
    let doc = reference();
    let mut problems = Vec::new();
    for recv in [
        Recv::List,
        Recv::Str,
        Recv::Map,
        Recv::Int,
        Recv::F64,
        Recv::Option,
    ] {
        let h = heading(recv);
        let rows = rows(&section(&doc, h));
        for def in METHODS.iter().filter(|d| d.recv == recv) {
            match rows.iter().find(|(n, _)| n == def.name) {
                None => problems.push(format!("{h}: `{}` is missing", def.name)),
                Some((_, n)) if *n != def.params.len() => problems.push(format!(
                    "{h}: `{}` has {n} parameters there, {} in the method table",
                    def.name,
                    def.params.len()
                )),
                Some(_) => {}
            }
        }
        for (name, _) in &rows {
            if ir::methods::lookup(recv, name).is_none() {
                problems.push(format!("{h}: `{name}` is not in the method table"));
            }
        }
    }
    let builtins = rows(&section(&doc, "## Built-in functions"));
    for b in Builtin::ALL {
        if !builtins.iter().any(|(n, _)| n == b.name()) {
            problems.push(format!("built-in `{}` is missing", b.name()));
        }
    }
    for (name, _) in &builtins {
        if Builtin::from_name(name).is_none() {
            problems.push(format!("`{name}` is not a built-in function"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/language.md and the method table disagree:\n{}",
        problems.join("\n")
    );
}
