//! Sspur name resolution and type checking: AST to typed IR.
//!
//! - [`lower_items`]: user types and function signatures (all explicit).
//! - [`lower_body`]: one function body, inferring `let`, `var` and lambda
//!   parameter types by local unification. It reads only the item tree and
//!   that function's AST, so a driver can check functions independently.
//! - [`check_source`]: parse, items and every body at once.
//! - [`render_diagnostics`]: `path:line:col: error: message` plus a snippet;
//!   [`render_warnings`] the same with `warning:`.
//! - [`Warning`]: unused locals, `var`s never assigned, unreachable arms
//!   (`warnings.rs`); found only in programs without errors.
//!
//! Decisions the language reference (docs/language.md) records:
//! - `==`, `!=`, `<`... compare Int, F64, Bool and Str only; lists, tuples,
//!   records, options and maps do not compare. `contains` and `unique` on
//!   lists need such an element type too.
//! - `return` inside a lambda returns from the lambda.
//! - A value-producing tail in a block whose value is unused (an `if`
//!   without `else`, a loop body, a function returning Unit) is turned into
//!   an expression statement, so `m.put(k, v)` can end such a block.
//!   A lambda whose expected result is Unit discards its body's value too.
//! - A method, field or index on a value whose type is not yet known is
//!   resolved at the end of the body, once a later use decided the type
//!   (`let f = |s| s.amount` then `xs.sort_by(f)`); if nothing does, the
//!   error asks for an annotation.
//! - Unreachable `match` arms are allowed (a warning, not an error).
//! - No follow-on errors: a node that failed gets type `Error`, unknowns
//!   that meet an error become errors, and nothing is reported about them.
//! - Bodies are lowered on a thread with a large stack: the parser allows
//!   expressions 1024 levels deep.
//! - `items.fns[i]` is the i-th `fn` item in source order (duplicates are
//!   reported but kept), likewise `items.types`.
#![forbid(unsafe_code)]

mod body;
mod consts;
mod exhaustive;
mod infer;
mod items;
mod methods;
mod render;
mod suggest;
mod warnings;

use std::sync::Arc;

use syntax::ast;
use syntax::Diagnostic;

pub use body::{lower_body, Lowered};
pub use items::{lower_items, ItemIndex};
pub use render::{render_diagnostics, render_warnings, Severity};
pub use warnings::{Binding, LetForm, Warning, WarningKind};

/// Parses and checks a whole program. On success every function has a body
/// and a source map with absolute spans.
pub fn check_source(text: &str) -> Result<ir::Program, Vec<Diagnostic>> {
    check_source_with_warnings(text).0
}

/// [`check_source`] and the program's warnings, sorted by position (none
/// when there are errors).
pub fn check_source_with_warnings(
    text: &str,
) -> (Result<ir::Program, Vec<Diagnostic>>, Vec<Warning>) {
    let (file, parse_diags) = syntax::parse(text);
    // All bodies on one large-stack thread (see `lower_body`).
    body::with_big_stack(|| check_file(text, &file, parse_diags))
}

fn check_file(
    text: &str,
    file: &ast::SourceFile,
    parse_diags: Vec<Diagnostic>,
) -> (Result<ir::Program, Vec<Diagnostic>>, Vec<Warning>) {
    if !parse_diags.is_empty() {
        return (Err(sorted(parse_diags)), Vec::new());
    }
    let (items, fn_spans, mut diags) = lower_items(file);
    let mut bodies = Vec::new();
    let mut maps = Vec::new();
    let fns: Vec<&ast::FnDef> = file
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Fn(f) => Some(f),
            ast::Item::Type(_) | ast::Item::Const(_) => None,
        })
        .collect();
    let index = ItemIndex::new(&items);
    let mut warnings = Vec::new();
    for ((id, _), def) in items.fns.iter().zip(fns) {
        let l = body::lower_body_here(&items, &index, id, def);
        bodies.push(Arc::new(l.body));
        maps.push(Arc::new(l.source_map));
        diags.extend(l.diagnostics);
        warnings.extend(l.warnings);
    }
    if !diags.is_empty() {
        return (Err(sorted(diags)), Vec::new());
    }
    warnings.sort_by_key(|w| (w.span.start, w.span.end));
    let program = ir::Program {
        items: Arc::new(items),
        bodies,
        source_maps: maps,
        fn_spans,
        line_starts: Arc::new(ir::line_starts(text)),
    };
    (Ok(program), warnings)
}

fn sorted(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    diags
}
