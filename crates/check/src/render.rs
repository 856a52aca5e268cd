//! Rendering diagnostics as plain text with codespan-reporting.
//!
//! Each diagnostic starts with `path:line:col: error: message` (1-based,
//! column in bytes, the same convention as trap positions), followed by
//! codespan's snippet: the source line, a caret under the span, secondary
//! labels and `= note` lines. Diagnostics are sorted by position.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};
use syntax::{Diagnostic, Span};

/// Renders `diags` against the source `text` shown as `path`.
pub fn render_diagnostics(path: &str, text: &str, diags: &[Diagnostic]) -> String {
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| (d.span.start, d.span.end));
    let file = SimpleFile::new(path, text);
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let starts = ir::line_starts(text);
    let mut out = String::new();
    for d in sorted {
        let span = clamp(text, d.span);
        let (line, col) = ir::line_col(&starts, span.start);
        out.push_str(&format!("{path}:{line}:{col}: error: {}\n", d.message));
        let mut labels = vec![Label::primary((), span.start as usize..span.end as usize)];
        for (s, msg) in &d.labels {
            let s = clamp(text, *s);
            labels.push(Label::secondary((), s.start as usize..s.end as usize).with_message(msg));
        }
        let cs = CsDiagnostic::error()
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(d.notes.clone());
        match term::emit_into_string(&config, &file, &cs) {
            Ok(s) => {
                // Drop codespan's own header and `-->` line: the first line
                // above already says where, in bytes.
                for l in s.lines().skip(1) {
                    if l.trim_start().starts_with("-->") {
                        continue;
                    }
                    out.push_str(l);
                    out.push('\n');
                }
            }
            Err(_) => {
                for n in &d.notes {
                    out.push_str(&format!("  = {n}\n"));
                }
            }
        }
    }
    out
}

/// Keeps a span inside the text and on character boundaries.
fn clamp(text: &str, span: Span) -> Span {
    let len = text.len() as u32;
    let mut start = span.start.min(len);
    let mut end = span.end.min(len).max(start);
    while start > 0 && !text.is_char_boundary(start as usize) {
        start -= 1;
    }
    while end < len && !text.is_char_boundary(end as usize) {
        end += 1;
    }
    Span::new(start, end)
}
