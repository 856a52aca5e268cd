//! Rendering diagnostics as plain text with codespan-reporting.
//!
//! Each diagnostic starts with `path:line:col: error: message` (or
//! `warning:`; 1-based, column in bytes, the same convention as trap
//! positions), followed by
//! codespan's snippet: the source line, a caret under the span, secondary
//! labels and `= note` lines. Diagnostics are sorted by position.
//!
//! A quoted line is at most [`WIDTH`] columns around its caret, with `...`
//! where it was cut, and control characters are shown escaped (`\0`,
//! `\x1b`), so a caret under one is visible and a 10 MB line costs a line
//! of output. Codespan renders an [`Excerpt`]: only the lines the labels
//! touch, already cut and escaped, numbered as in the source.

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Chars, Config};
use syntax::{Diagnostic, Span};

/// Columns of a source line quoted around a caret.
pub const WIDTH: usize = 120;

/// How a diagnostic is shown: an error stops the program, a warning does
/// not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Renders `diags` against the source `text` shown as `path`.
pub fn render_diagnostics(path: &str, text: &str, diags: &[Diagnostic]) -> String {
    render(path, text, diags, Severity::Error)
}

/// Renders warnings like errors, as `severity` (`Severity::Error` when
/// warnings are made errors, `-W error`: then each says so in a note).
pub fn render_warnings(
    path: &str,
    text: &str,
    warnings: &[crate::Warning],
    severity: Severity,
) -> String {
    let diags: Vec<Diagnostic> = warnings
        .iter()
        .map(|w| match severity {
            Severity::Warning => w.to_diagnostic(),
            Severity::Error => w
                .to_diagnostic()
                .with_note("a warning, made an error by `-W error`"),
        })
        .collect();
    render(path, text, &diags, severity)
}

fn render(path: &str, text: &str, diags: &[Diagnostic], severity: Severity) -> String {
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| (d.span.start, d.span.end));
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let starts = ir::line_starts(text);
    let mut out = String::new();
    for d in sorted {
        let span = clamp(text, d.span);
        let (line, col) = ir::line_col(&starts, span.start);
        let word = severity.word();
        out.push_str(&format!("{path}:{line}:{col}: {word}: {}\n", d.message));
        let mut spans = vec![span];
        spans.extend(d.labels.iter().map(|(s, _)| clamp(text, *s)));
        let file = Excerpt::new(path, text, &starts, &spans);
        let mut labels = vec![Label::primary((), file.range(span))];
        for (s, msg) in &d.labels {
            let s = clamp(text, *s);
            labels.push(Label::secondary((), file.range(s)).with_message(msg));
        }
        let cs = match severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        };
        let cs = cs
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

/// The lines a diagnostic's labels touch (the first and last line of each
/// span), each cut to [`WIDTH`] columns around its first label and escaped,
/// as one small text codespan renders with the source's line numbers.
struct Excerpt<'a> {
    name: &'a str,
    text: String,
    /// Start of each excerpt line in `text`.
    starts: Vec<usize>,
    /// The source line (0-based) of each excerpt line.
    lines: Vec<usize>,
    /// How each excerpt line maps source offsets (see [`Shown`]).
    shown: Vec<Shown>,
    /// Source line starts.
    src_starts: &'a [u32],
}

impl<'a> Excerpt<'a> {
    fn new(name: &'a str, src: &str, src_starts: &'a [u32], spans: &[Span]) -> Excerpt<'a> {
        let line_of = |off: u32| src_starts.partition_point(|&s| s <= off).saturating_sub(1);
        // Each touched line and the offset its window centres on: the first
        // label starting there, else the end of a span ending there.
        let mut focus: Vec<(usize, u32)> = Vec::new();
        for sp in spans {
            let a = line_of(sp.start);
            if !focus.iter().any(|(l, _)| *l == a) {
                focus.push((a, sp.start));
            }
        }
        for sp in spans {
            let b = line_of(sp.end);
            if !focus.iter().any(|(l, _)| *l == b) {
                focus.push((b, sp.end));
            }
        }
        focus.sort();
        let mut ex = Excerpt {
            name,
            text: String::new(),
            starts: Vec::new(),
            lines: Vec::new(),
            shown: Vec::new(),
            src_starts,
        };
        // Codespan shows the one line between two quoted lines, and `.` for
        // a longer gap: keep the gaps (two blank stand-ins for a long one).
        let mut with_gaps: Vec<Option<(usize, u32)>> = Vec::new();
        for (i, &(line, at)) in focus.iter().enumerate() {
            if i > 0 {
                let prev = focus[i - 1].0;
                if line == prev + 2 {
                    with_gaps.push(Some((prev + 1, src_starts[prev + 1])));
                } else if line > prev + 2 {
                    with_gaps.extend([None, None]);
                }
            }
            with_gaps.push(Some((line, at)));
        }
        for entry in with_gaps {
            let Some((line, at)) = entry else {
                ex.starts.push(ex.text.len());
                ex.lines.push(ex.lines.last().copied().unwrap_or(0));
                ex.text.push('\n');
                ex.shown.push(Shown::new("", 0));
                continue;
            };
            let start = src_starts[line] as usize;
            let end = src_starts.get(line + 1).map_or(src.len(), |&e| e as usize);
            let raw = &src[start..end];
            let raw = raw.strip_suffix('\n').unwrap_or(raw);
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let shown = Shown::new(raw, at as usize - start);
            ex.starts.push(ex.text.len());
            ex.lines.push(line);
            ex.text.push_str(&shown.text);
            ex.text.push('\n');
            ex.shown.push(shown);
        }
        ex
    }

    /// A source span as a range of the excerpt.
    fn range(&self, span: Span) -> Range<usize> {
        self.offset(span.start)..self.offset(span.end)
    }

    fn offset(&self, off: u32) -> usize {
        let line = self
            .src_starts
            .partition_point(|&s| s <= off)
            .saturating_sub(1);
        let Some(i) = self.lines.iter().position(|&l| l == line) else {
            return 0;
        };
        self.starts[i] + self.shown[i].map(off as usize - self.src_starts[line] as usize)
    }
}

/// One source line as quoted: escaped, cut around a focus column.
struct Shown {
    text: String,
    /// Byte offset in the line and in the escaped line of each character.
    chars: Vec<(usize, usize)>,
    /// The escaped line's byte range that `text` shows, after `prefix` bytes.
    window: Range<usize>,
    prefix: usize,
    full_len: usize,
}

impl Shown {
    fn new(line: &str, focus: usize) -> Shown {
        let mut full = String::new();
        let mut chars = Vec::new();
        for (i, c) in line.char_indices() {
            chars.push((i, full.len()));
            match c {
                '\0' => full.push_str("\\0"),
                '\t' => full.push(c),
                c if (c as u32) < 0x80 && c.is_control() => {
                    full.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c.is_control() => full.push_str(&c.escape_unicode().to_string()),
                c => full.push(c),
            }
        }
        // Columns are characters of the escaped line.
        let cols: Vec<usize> = full.char_indices().map(|(i, _)| i).collect();
        let total = cols.len();
        let focus_byte = Self::lookup(&chars, full.len(), focus);
        let focus_col = cols.partition_point(|&b| b < focus_byte);
        let (ws, we) = if total <= WIDTH {
            (0, total)
        } else {
            let ws = focus_col.saturating_sub(WIDTH / 3).min(total - WIDTH);
            (ws, ws + WIDTH)
        };
        let byte_at = |col: usize| cols.get(col).copied().unwrap_or(full.len());
        let window = byte_at(ws)..byte_at(we);
        let mut text = String::new();
        if ws > 0 {
            text.push_str("...");
        }
        text.push_str(&full[window.clone()]);
        if we < total {
            text.push_str("...");
        }
        Shown {
            text,
            prefix: if ws > 0 { 3 } else { 0 },
            full_len: full.len(),
            chars,
            window,
        }
    }

    /// The escaped line's offset of line offset `off`.
    fn lookup(chars: &[(usize, usize)], full_len: usize, off: usize) -> usize {
        let i = chars.partition_point(|&(b, _)| b < off);
        chars.get(i).map_or(full_len, |&(_, f)| f)
    }

    /// The offset in `text` of line offset `off`, kept inside the window.
    fn map(&self, off: usize) -> usize {
        let f = Self::lookup(&self.chars, self.full_len, off);
        self.prefix + f.clamp(self.window.start, self.window.end) - self.window.start
    }
}

impl<'f> Files<'f> for Excerpt<'_> {
    type FileId = ();
    type Name = &'f str;
    type Source = &'f str;

    fn name(&'f self, (): ()) -> Result<&'f str, FilesError> {
        Ok(self.name)
    }

    fn source(&'f self, (): ()) -> Result<&'f str, FilesError> {
        Ok(&self.text)
    }

    fn line_index(&'f self, (): (), byte_index: usize) -> Result<usize, FilesError> {
        Ok(self
            .starts
            .partition_point(|&s| s <= byte_index)
            .saturating_sub(1))
    }

    fn line_number(&'f self, (): (), line_index: usize) -> Result<usize, FilesError> {
        Ok(self.lines.get(line_index).map_or(1, |l| l + 1))
    }

    fn line_range(&'f self, (): (), line_index: usize) -> Result<Range<usize>, FilesError> {
        let start = *self
            .starts
            .get(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: self.starts.len().saturating_sub(1),
            })?;
        let end = self
            .starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(self.text.len());
        Ok(start..end)
    }
}
