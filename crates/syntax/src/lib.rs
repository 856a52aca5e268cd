//! Sspur's surface syntax: lexer (logos, Go-style `;` insertion), parser
//! (generated from `grammar/sspur.lalrpop`), and the AST with byte spans.
//!
//! Parsing never panics: every problem comes back as a [`Diagnostic`].
//!
//! Decisions the language reference (docs/language.md) records:
//! - `;` is inserted at a newline after an identifier, literal, `_`, `)`,
//!   `]`, `}`, `return`, `break` or `continue`, and at end of file, except
//!   when the next token is `}`, `)`, `]`, `.` or `|`: a block written
//!   over several lines keeps its tail expression, a call's last argument
//!   may sit on its own line, a method chain may continue on a line that
//!   starts with `.`, and a sum type may put each `| Variant` on its own
//!   line. A block's last expression is its value only without a
//!   written `;` (`{ x; }` is Unit).
//! - Range `..` binds looser than `+ -` and tighter than comparisons, and
//!   does not chain: `0..n - 1` is `0..(n - 1)`.
//! - Comparisons do not chain (`a < b < c` is an error; `(a < b) == c` is
//!   fine). Lambdas and `return` extend as far right as possible.
//! - The heads of `if`, `while`, `match` and `for` may contain neither a
//!   record literal nor `return`, nor start with a block, unless
//!   parenthesised.
//! - `(s.f)(x)` calls a field; `s.f(x)` is a method call.
//! - Strings may not span lines. `-9223372036854775808` is a valid literal.
//! - A sum type may start with `|`: `type T =` newline `| A` newline `| B`.
//! - Nesting deeper than [`MAX_BRACKET_DEPTH`] brackets, or an AST deeper
//!   than [`MAX_TREE_DEPTH`] nodes, is the error `nesting too deep`.
//! - At most one syntax error is reported per top-level item.
#![forbid(unsafe_code)]

pub mod ast;
pub mod dump;
mod lexer;
mod parser;

pub use lexer::Token;
pub use parser::{MAX_BRACKET_DEPTH, MAX_TREE_DEPTH};

pub use ast::SourceFile;

/// A byte range in one source text. `start <= end`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// This span moved by `delta` bytes (used to rebase a function's spans).
    pub fn shift(self, delta: i64) -> Span {
        Span::new(
            (self.start as i64 + delta) as u32,
            (self.end as i64 + delta) as u32,
        )
    }
}

/// A compile-time problem at a place in the source. Rendering (path,
/// line:col, caret) is the driver's job.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// Extra labelled places, e.g. "first defined here".
    pub labels: Vec<(Span, String)>,
    /// Free-text hints printed after the snippet.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push((span, text.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// Parses a whole source file. Always returns an AST (possibly partial);
/// the program is valid only when the diagnostics are empty.
///
/// Runs on a thread with a large stack: on a syntax error the generated
/// parser drops partly built trees recursively, and those can be as deep as
/// the input is long (`1 + 1 + ... )`). Accepted trees are at most
/// [`MAX_TREE_DEPTH`] deep, so callers need no such stack.
pub fn parse(text: &str) -> (SourceFile, Vec<Diagnostic>) {
    with_big_stack(|| parser::parse(text))
}

/// The tokens of a file, with the inserted `;` (for tests and debugging).
pub fn lex(text: &str) -> Vec<(Token, Span)> {
    lex_with_diagnostics(text).0
}

/// The tokens of a file and the lexical problems found on the way
/// (interpolation holes are parsed while lexing, so this runs on the same
/// roomy stack as [`parse`]).
pub fn lex_with_diagnostics(text: &str) -> (Vec<(Token, Span)>, Vec<Diagnostic>) {
    with_big_stack(|| lexer::lex_with_diagnostics(text))
}

/// Stack for the parsing thread; only the pages used are ever touched.
const PARSE_STACK_BYTES: usize = 1 << 30;

fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    stdx::with_big_stack(PARSE_STACK_BYTES, "sspur-parse", f)
}
