//! Generated programs for `cargo xtask bench --compile`: valid Sspur of a
//! chosen shape and about a chosen number of lines, deterministic, each
//! printing one number so a run is also checked.

use std::fmt::Write;

/// What the generated program is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Many 13-line functions (a closure pipeline, a loop, a match), called
    /// from group functions of 100 calls each.
    Small,
    /// Ten functions of straight-line code, each a tenth of the program:
    /// many locals, ifs, lists and matches in one body.
    Large,
    /// Functions whose body is one expression nested 40 levels deep
    /// (parentheses, if, blocks, match, lambda calls), one level a line.
    Deep,
    /// Per unit a record, a sum type over it and two functions building
    /// and matching them: many types and constructors, shared field names.
    Types,
}

pub const SHAPES: [Shape; 4] = [Shape::Small, Shape::Large, Shape::Deep, Shape::Types];

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Small => "small",
            Shape::Large => "large",
            Shape::Deep => "deep",
            Shape::Types => "types",
        }
    }

    pub fn parse(s: &str) -> Option<Shape> {
        SHAPES.into_iter().find(|x| x.name() == s)
    }
}

/// A program of `shape` with about `lines` lines (at least that many, at
/// most one unit more).
pub fn program(shape: Shape, lines: usize) -> String {
    match shape {
        Shape::Small => units(lines, small_fn, "f"),
        Shape::Large => large(lines),
        Shape::Deep => units(lines, deep_fn, "d"),
        Shape::Types => units(lines, types_unit, "u"),
    }
}

fn line_count(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// Units `unit(i)` (each defining `fn {prefix}{i}(n: Int) -> Int`) until
/// the program has `lines` lines, with the group functions and `main` that
/// call them all.
fn units(lines: usize, unit: fn(&mut String, usize), prefix: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    // The callers take about 1.02 lines per unit.
    while line_count(&out) + n + n / 100 + 8 < lines {
        unit(&mut out, n);
        n += 1;
    }
    callers(&mut out, n, prefix);
    out
}

/// `fn g{k}(n)` calling units 100k..100k+99, and `main` calling the
/// groups and printing the sum.
fn callers(out: &mut String, n: usize, prefix: &str) {
    let groups = n.div_ceil(100);
    for g in 0..groups {
        let _ = writeln!(out, "fn g{g}(n: Int) -> Int {{\n    var s = 0");
        for i in g * 100..((g + 1) * 100).min(n) {
            let _ = writeln!(out, "    s := (s + {prefix}{i}(n)) % 1000003");
        }
        let _ = writeln!(out, "    s\n}}\n");
    }
    let _ = writeln!(out, "fn main() {{\n    var s = 0");
    for g in 0..groups {
        let _ = writeln!(out, "    s := (s + g{g}({})) % 1000003", 5 + g % 3);
    }
    let _ = writeln!(out, "    print(s)\n}}");
}

fn small_fn(out: &mut String, i: usize) {
    let _ = writeln!(
        out,
        "fn f{i}(n: Int) -> Int {{
    let xs = (0..n).map(|x| x * {k} + {i}).filter(|x| x % 3 != 0)
    var acc = 0
    for x in xs {{
        if x % 2 == 0 {{
            acc := acc + x
        }}
    }}
    match xs.find(|x| x > {m}) {{
        Some(v) => acc + v,
        None => acc - 1,
    }}
}}
",
        k = i % 7 + 1,
        m = i % 10,
    );
}

/// Ten functions of straight-line chunks sharing `acc`, and `main`.
fn large(lines: usize) -> String {
    const FNS: usize = 10;
    let per_fn = lines.saturating_sub(FNS * 4 + 6) / FNS;
    let mut out = String::new();
    for f in 0..FNS {
        let _ = writeln!(out, "fn big{f}(x: Int) -> Int {{\n    var acc = x");
        let mut body = 0;
        let mut j = 0;
        while body + CHUNK_LINES <= per_fn.max(CHUNK_LINES) {
            large_chunk(&mut out, j);
            body += CHUNK_LINES;
            j += 1;
        }
        let _ = writeln!(out, "    acc\n}}\n");
    }
    let _ = writeln!(out, "fn main() {{\n    var s = 0");
    for f in 0..FNS {
        let _ = writeln!(out, "    s := (s + big{f}({f})) % 1000003");
    }
    let _ = writeln!(out, "    print(s)\n}}");
    out
}

const CHUNK_LINES: usize = 10;

fn large_chunk(out: &mut String, j: usize) {
    let _ = writeln!(
        out,
        "    var a{j} = acc % 1000 + {j}
    if a{j} % 3 == 0 {{
        a{j} := a{j} * 2
    }} else {{
        a{j} := a{j} - 1
    }}
    let l{j} = [a{j}, {j}, x].map(|v| v + 1)
    let s{j} = \"{{a{j}}}-{j}\"
    acc := (acc + l{j}.len + s{j}.len + a{j}) % 1000003
    acc := acc + match acc % 4 {{ 0 => 1, 1 => l{j}[0] % 7, _ => 3 }}"
    );
}

/// One function whose result is an expression nested `DEPTH` deep.
fn deep_fn(out: &mut String, i: usize) {
    const DEPTH: usize = 40;
    let _ = writeln!(out, "fn d{i}(n: Int) -> Int {{");
    let mut closes = Vec::new();
    for d in 0..DEPTH {
        let pad = "    ".repeat(d + 1);
        let (open, close) = match (d + i) % 5 {
            0 => (format!("(n + {d}) * ("), ") % 1000003".to_string()),
            1 => (
                format!("if n > {d} {{"),
                format!("}} else {{\n{pad}    {d}\n{pad}}}"),
            ),
            2 => (
                format!("{{\n{pad}    let y{d} = n + {d}\n{pad}    y{d} * 3 + ("),
                format!(")\n{pad}}}"),
            ),
            3 => (
                format!("match Some(n) {{\n{pad}    Some(v{d}) => v{d} + ("),
                format!("),\n{pad}    None => 0,\n{pad}}}"),
            ),
            _ => (format!("(|z{d}: Int| z{d} + ("), "))(n)".to_string()),
        };
        let _ = writeln!(out, "{pad}{open}");
        closes.push(format!("{pad}{close}"));
    }
    let _ = writeln!(out, "{}n + {i}", "    ".repeat(DEPTH + 1));
    while let Some(c) = closes.pop() {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "}}\n");
}

fn types_unit(out: &mut String, i: usize) {
    let _ = writeln!(
        out,
        "type R{i} = {{ a: Int, b: Str, c: List[Int] }}
type S{i} = A{i}(Int) | B{i}(R{i}) | C{i}

fn mk{i}(n: Int) -> S{i} {{
    if n % 3 == 0 {{
        A{i}(n)
    }} else if n % 3 == 1 {{
        B{i}(R{i} {{ a: n, b: \"r{i}\", c: [n, {i}] }})
    }} else {{
        C{i}
    }}
}}

fn u{i}(n: Int) -> Int {{
    match mk{i}(n) {{
        A{i}(v) => v + {i},
        B{i}(r) => r.a + r.c.len + r.b.len,
        C{i} => {i} % 10,
    }}
}}
"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_have_about_the_lines_asked() {
        for shape in SHAPES {
            for lines in [1_000, 10_000] {
                let n = line_count(&program(shape, lines));
                assert!(
                    n >= lines * 9 / 10 && n <= lines * 11 / 10,
                    "{} at {lines}: {n} lines",
                    shape.name()
                );
            }
        }
    }

    #[test]
    fn programs_check_without_diagnostics() {
        for shape in SHAPES {
            let db = driver::Database::default();
            let text = program(shape, 1_000);
            let file = driver::SourceFile::new(&db, shape.name().into(), text);
            let diags = driver::diagnostics(&db, file);
            assert!(
                diags.is_empty(),
                "{}: {}",
                shape.name(),
                driver::render(&db, file, diags)
            );
        }
    }
}
