//! The lexer: logos recognises raw tokens, then a small pass attaches
//! values (numbers, decoded strings with parsed holes) and inserts `;` at
//! newlines after a token that can end a statement (the Go rule).

use logos::Logos;

use crate::ast::{Expr, ExprKind, StrPart};
use crate::{Diagnostic, Span};

/// A token with its value. `Semi` is either written or inserted at a
/// newline; an inserted one spans the newline character.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    Lower(String),
    Upper(String),
    Int(i64),
    /// An F64 literal as `f64::to_bits`.
    Float(u64),
    /// A string literal, escapes decoded and holes parsed.
    Str(Vec<StrPart>),
    /// The digits after a `.`: a tuple field (`t.0`).
    FieldIndex(String),
    Fn,
    Type,
    Let,
    Var,
    If,
    Else,
    /// The `else` of `let P = e else { .. }` (see [`mark_let_else`]).
    LetElse,
    Match,
    For,
    In,
    While,
    Return,
    Break,
    Continue,
    True,
    False,
    Underscore,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    ColonEq,
    Dot,
    DotDot,
    Arrow,
    FatArrow,
    Eq,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    AndAnd,
    OrOr,
    Bang,
    Pipe,
    /// Text the lexer could not make sense of (already reported).
    Error,
}

impl Token {
    /// Whether a newline after this token ends the statement.
    pub(crate) fn ends_statement(&self) -> bool {
        matches!(
            self,
            Token::Lower(_)
                | Token::Upper(_)
                | Token::Int(_)
                | Token::Float(_)
                | Token::Str(_)
                | Token::FieldIndex(_)
                | Token::True
                | Token::False
                | Token::Underscore
                | Token::RParen
                | Token::RBracket
                | Token::RBrace
                | Token::Return
                | Token::Break
                | Token::Continue
        )
    }
}

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
// A byte-order mark is whitespace, so a file saved with one still parses.
#[logos(skip r"[ \t\r\f\u{FEFF}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
enum Raw {
    #[token("\n")]
    Newline,
    #[regex("[a-z_][A-Za-z0-9_]*")]
    Lower,
    #[regex("[A-Z][A-Za-z0-9_]*")]
    Upper,
    #[regex("[0-9][0-9_]*")]
    #[regex("0[xX][0-9a-fA-F_]*")]
    Int,
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?")]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*")]
    Float,
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    Str,
    #[regex(r#""([^"\\\n]|\\[^\n])*"#)]
    UnterminatedStr,
    #[token("fn")]
    Fn,
    #[token("type")]
    Type,
    #[token("let")]
    Let,
    #[token("var")]
    Var,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("match")]
    Match,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("while")]
    While,
    #[token("return")]
    Return,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("_", priority = 3)]
    Underscore,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(":=")]
    ColonEq,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("=>")]
    FatArrow,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    #[token("|")]
    Pipe,
}

/// Lexes a whole file, returning the problems found on the way.
pub fn lex_with_diagnostics(text: &str) -> (Vec<(Token, Span)>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let tokens = lex_at(text, 0, true, &mut diags);
    (tokens, diags)
}

/// Lexes `text` whose first byte sits at absolute offset `base`.
/// `eof_semi`: insert `;` at end of input like at a newline (files yes,
/// interpolation holes no).
pub(crate) fn lex_at(
    text: &str,
    base: u32,
    eof_semi: bool,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(Token, Span)> {
    let mut out: Vec<(Token, Span)> = Vec::new();
    // The span of a newline that ends a statement, waiting for the next token.
    let mut pending_semi: Option<Span> = None;
    let mut lexer = Raw::lexer(text);
    while let Some(raw) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(base + range.start as u32, base + range.end as u32);
        let slice = lexer.slice();
        let raw = match raw {
            Ok(raw) => raw,
            Err(()) => {
                let shown: String = slice.chars().take(1).collect();
                diags.push(Diagnostic::error(
                    span,
                    format!("unexpected character {}", describe_char(&shown)),
                ));
                flush_semi(&mut out, &mut pending_semi, &Token::Error);
                out.push((Token::Error, span));
                continue;
            }
        };
        if raw == Raw::Newline {
            if pending_semi.is_none() && out.last().is_some_and(|(t, _)| t.ends_statement()) {
                pending_semi = Some(span);
            }
            continue;
        }
        let after_dot = matches!(out.last(), Some((Token::Dot, _))) && pending_semi.is_none();
        let after_minus = matches!(out.last(), Some((Token::Minus, _))) && pending_semi.is_none();
        let (token, rest) = convert(raw, slice, span, after_dot, after_minus, diags);
        flush_semi(&mut out, &mut pending_semi, &token.0);
        out.push(token);
        out.extend(rest.into_iter().flatten());
    }
    mark_let_else(&mut out);
    if eof_semi {
        let end = base + text.len() as u32;
        if let Some(span) = pending_semi {
            out.push((Token::Semi, span));
        } else if out.last().is_some_and(|(t, _)| t.ends_statement()) {
            out.push((Token::Semi, Span::new(end, end)));
        }
    }
    out
}

/// Marks the `else` of each `let P = e else { .. }` as [`Token::LetElse`],
/// so the grammar has no dangling `else`: it is the first `else` at the
/// `let`'s own bracket depth, before the statement ends, that does not
/// follow a `}` (an `else` after `}` continues an `if` in the initialiser,
/// so an initialiser ending in `}` needs parentheses, as in Rust).
fn mark_let_else(out: &mut [(Token, Span)]) {
    for i in 0..out.len() {
        if out[i].0 != Token::Let {
            continue;
        }
        let mut depth = 0usize;
        for j in i + 1..out.len() {
            match out[j].0 {
                Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace if depth == 0 => break,
                Token::RParen | Token::RBracket | Token::RBrace => depth -= 1,
                Token::Semi if depth == 0 => break,
                Token::Else if depth == 0 && out[j - 1].0 != Token::RBrace => {
                    out[j].0 = Token::LetElse;
                    break;
                }
                _ => {}
            }
        }
    }
}

/// Emits a pending inserted `;` unless `next` closes a bracket, continues
/// a method chain or a sum type: a `;` there could only be a syntax error,
/// and leaving it out lets `{ a }` written over three lines keep its tail,
/// `.map(f)` start a continuation line and `| Node(..)` a variant line.
/// (A line starting with a lambda `|x| ..` cannot be a useful statement.)
fn flush_semi(out: &mut Vec<(Token, Span)>, pending: &mut Option<Span>, next: &Token) {
    if let Some(span) = pending.take() {
        if !matches!(
            next,
            Token::RBrace | Token::RParen | Token::RBracket | Token::Dot | Token::Pipe
        ) {
            out.push((Token::Semi, span));
        }
    }
}

fn describe_char(c: &str) -> String {
    match c.chars().next() {
        Some(ch) if ch.is_control() || ch.is_whitespace() => format!("{:?}", ch),
        _ => format!("`{c}`"),
    }
}

/// A raw token's valued tokens: one, or three for `t.0.1` (`0`, `.`, `1`).
type Converted = ((Token, Span), Option<[(Token, Span); 2]>);

/// Turns one raw token into valued tokens.
fn convert(
    raw: Raw,
    slice: &str,
    span: Span,
    after_dot: bool,
    after_minus: bool,
    diags: &mut Vec<Diagnostic>,
) -> Converted {
    let token = match raw {
        // The caller consumes newlines; this arm only keeps the match total.
        Raw::Newline => Token::Semi,
        Raw::Lower => Token::Lower(slice.to_string()),
        Raw::Upper => Token::Upper(slice.to_string()),
        Raw::Int if after_dot => {
            if slice.bytes().all(|b| b.is_ascii_digit()) {
                Token::FieldIndex(slice.to_string())
            } else {
                diags.push(Diagnostic::error(
                    span,
                    format!("invalid tuple field `{slice}`"),
                ));
                Token::FieldIndex("0".to_string())
            }
        }
        Raw::Int => Token::Int(int_value(slice, span, after_minus, diags)),
        Raw::Float if after_dot => {
            // `t.0.1`: two tuple fields, not a float.
            if let Some((a, b)) = slice.split_once('.') {
                if !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
                {
                    let dot = span.start + a.len() as u32;
                    return (
                        (Token::FieldIndex(a.to_string()), Span::new(span.start, dot)),
                        Some([
                            (Token::Dot, Span::new(dot, dot + 1)),
                            (
                                Token::FieldIndex(b.to_string()),
                                Span::new(dot + 1, span.end),
                            ),
                        ]),
                    );
                }
            }
            diags.push(Diagnostic::error(
                span,
                format!("invalid tuple field `{slice}`"),
            ));
            Token::FieldIndex("0".to_string())
        }
        Raw::Float => Token::Float(float_value(slice, span, diags)),
        Raw::Str => Token::Str(string_parts(
            &slice[1..slice.len() - 1],
            span.start + 1,
            diags,
        )),
        Raw::UnterminatedStr => {
            diags.push(Diagnostic::error(
                Span::new(span.start, span.start + 1),
                "unterminated string literal",
            ));
            Token::Str(string_parts(&slice[1..], span.start + 1, diags))
        }
        Raw::Fn => Token::Fn,
        Raw::Type => Token::Type,
        Raw::Let => Token::Let,
        Raw::Var => Token::Var,
        Raw::If => Token::If,
        Raw::Else => Token::Else,
        Raw::Match => Token::Match,
        Raw::For => Token::For,
        Raw::In => Token::In,
        Raw::While => Token::While,
        Raw::Return => Token::Return,
        Raw::Break => Token::Break,
        Raw::Continue => Token::Continue,
        Raw::True => Token::True,
        Raw::False => Token::False,
        Raw::Underscore => Token::Underscore,
        Raw::LParen => Token::LParen,
        Raw::RParen => Token::RParen,
        Raw::LBracket => Token::LBracket,
        Raw::RBracket => Token::RBracket,
        Raw::LBrace => Token::LBrace,
        Raw::RBrace => Token::RBrace,
        Raw::Comma => Token::Comma,
        Raw::Semi => Token::Semi,
        Raw::Colon => Token::Colon,
        Raw::ColonEq => Token::ColonEq,
        Raw::Dot => Token::Dot,
        Raw::DotDot => Token::DotDot,
        Raw::Arrow => Token::Arrow,
        Raw::FatArrow => Token::FatArrow,
        Raw::Eq => Token::Eq,
        Raw::EqEq => Token::EqEq,
        Raw::NotEq => Token::NotEq,
        Raw::Lt => Token::Lt,
        Raw::Le => Token::Le,
        Raw::Gt => Token::Gt,
        Raw::Ge => Token::Ge,
        Raw::Plus => Token::Plus,
        Raw::Minus => Token::Minus,
        Raw::Star => Token::Star,
        Raw::Slash => Token::Slash,
        Raw::Percent => Token::Percent,
        Raw::AndAnd => Token::AndAnd,
        Raw::OrOr => Token::OrOr,
        Raw::Bang => Token::Bang,
        Raw::Pipe => Token::Pipe,
    };
    ((token, span), None)
}

/// The literal's value. After `-`, 2^63 is allowed and stored as
/// `i64::MIN`, which the (wrapping) negation leaves as `i64::MIN`.
fn int_value(slice: &str, span: Span, after_minus: bool, diags: &mut Vec<Diagnostic>) -> i64 {
    let digits: String = slice.chars().filter(|&c| c != '_').collect();
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some("") => {
            diags.push(Diagnostic::error(span, "hexadecimal literal has no digits"));
            return 0;
        }
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse::<u64>().ok(),
    };
    match parsed {
        Some(v) if v <= i64::MAX as u64 => v as i64,
        Some(v) if after_minus && v == i64::MIN.unsigned_abs() => i64::MIN,
        _ => {
            diags.push(Diagnostic::error(
                span,
                format!("integer literal `{slice}` is too large for Int"),
            ));
            0
        }
    }
}

fn float_value(slice: &str, span: Span, diags: &mut Vec<Diagnostic>) -> u64 {
    let digits: String = slice.chars().filter(|&c| c != '_').collect();
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() => v.to_bits(),
        _ => {
            diags.push(Diagnostic::error(
                span,
                format!("float literal `{slice}` is out of range for F64"),
            ));
            0f64.to_bits()
        }
    }
}

/// Decodes a string literal's contents (`base` = absolute offset of the
/// first content byte): escapes, and `{expr}` holes parsed as expressions.
fn string_parts(content: &str, base: u32, diags: &mut Vec<Diagnostic>) -> Vec<StrPart> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let bytes = content.as_bytes();
    let mut chars = content.char_indices();
    while let Some((i, c)) = chars.next() {
        let at = base + i as u32;
        match c {
            '\\' => {
                let Some((j, e)) = chars.next() else {
                    diags.push(Diagnostic::error(
                        Span::new(at, at + 1),
                        "unterminated escape in string",
                    ));
                    break;
                };
                let decoded = match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\\' => '\\',
                    '"' => '"',
                    '{' => '{',
                    '}' => '}',
                    '0' => '\0',
                    _ => {
                        let end = base + (j + e.len_utf8()) as u32;
                        diags.push(
                            Diagnostic::error(
                                Span::new(at, end),
                                format!("unknown escape `\\{}`", e.escape_debug()),
                            )
                            .with_note(
                                "the escapes are \\n \\t \\r \\\\ \\\" \\{ \\} \\0".to_string(),
                            ),
                        );
                        continue;
                    }
                };
                text.push(decoded);
            }
            '{' => {
                let rest = &bytes[i + 1..];
                let close = rest.iter().position(|&b| b == b'}');
                let inner_open = rest.iter().position(|&b| b == b'{');
                match close {
                    Some(k) if inner_open.is_none_or(|o| o > k) => {
                        let hole = &content[i + 1..i + 1 + k];
                        let hole_span = Span::new(at, at + k as u32 + 2);
                        if !text.is_empty() {
                            parts.push(StrPart::Text(std::mem::take(&mut text)));
                        }
                        parts.push(StrPart::Hole(hole_expr(hole, at + 1, hole_span, diags)));
                        // Skip the hole's text and the closing brace.
                        for _ in content[i + 1..i + 2 + k].chars() {
                            chars.next();
                        }
                    }
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                Span::new(at, at + 1),
                                "unterminated interpolation hole",
                            )
                            .with_note(
                                "a hole `{expr}` may not contain `\"`, `{` or `}`; write `\\{` for a literal brace"
                                    .to_string(),
                            ),
                        );
                        break;
                    }
                }
            }
            '}' => {
                diags.push(
                    Diagnostic::error(Span::new(at, at + 1), "unmatched `}` in string")
                        .with_note("write `\\}` for a literal brace".to_string()),
                );
            }
            _ => text.push(c),
        }
    }
    if !text.is_empty() {
        parts.push(StrPart::Text(text));
    }
    parts
}

/// Parses one interpolation hole; problems become diagnostics at the hole.
fn hole_expr(hole: &str, base: u32, hole_span: Span, diags: &mut Vec<Diagnostic>) -> Expr {
    if hole.trim().is_empty() {
        diags.push(
            Diagnostic::error(hole_span, "empty interpolation hole")
                .with_note("write `\\{` for a literal brace".to_string()),
        );
        return Expr {
            kind: ExprKind::Error,
            span: hole_span,
        };
    }
    let (expr, hole_diags) = crate::parser::parse_hole(hole, base);
    let failed = !hole_diags.is_empty();
    diags.extend(hole_diags);
    match expr {
        Some(e) if !failed => e,
        _ => Expr {
            kind: ExprKind::Error,
            span: hole_span,
        },
    }
}
