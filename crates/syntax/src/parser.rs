//! Drives the generated parser: bracket-depth guard, error recovery and
//! messages, the AST depth guard, and the small constructors the grammar's
//! actions call.

use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::*;
use crate::lexer::{lex_at, Token};
use crate::{Diagnostic, Span};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar,
    "/sspur.rs"
);

/// Deepest nesting of `( [ {` accepted; deeper input is rejected before
/// parsing so nothing downstream recurses without bound.
pub const MAX_BRACKET_DEPTH: usize = 256;

/// Deepest AST accepted (expressions, statements, patterns and types
/// counted together). Bracket nesting is limited above; this catches the
/// nesting that needs no brackets (`- - - x`, `a + b + ...`, `else if`
/// chains, `fn() -> fn() -> ...`).
pub const MAX_TREE_DEPTH: usize = 1024;

/// The external lexer never fails: its problems are diagnostics already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError;

/// State shared with the grammar's actions.
#[derive(Default)]
pub struct Ctx {
    pub errors: Vec<ErrorRecovery<u32, Token, LexError>>,
    pub diags: Vec<Diagnostic>,
}

/// What a block ends with when the last `;` is missing.
pub enum BlockEnd {
    Tail(Expr),
    Stmt(Stmt),
}

pub fn parse(text: &str) -> (SourceFile, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    // Spans are u32; a larger file cannot be described.
    if text.len() > u32::MAX as usize / 2 {
        diags.push(Diagnostic::error(
            Span::new(0, 0),
            "source file is too large",
        ));
        return (SourceFile::default(), diags);
    }
    let tokens = lex_at(text, 0, true, &mut diags);
    if let Some(d) = check_bracket_depth(&tokens) {
        diags.push(d);
        return (SourceFile::default(), diags);
    }
    let item_starts = item_starts(&tokens);
    let src = ErrSrc::new(text, 0, "end of file", &tokens);
    let mut ctx = Ctx::default();
    let result = grammar::FileParser::new().parse(&mut ctx, spanned(tokens));
    let mut syntax = Vec::new();
    let file = match result {
        Ok(file) => file,
        Err(e) => {
            syntax.push(src.error(e));
            SourceFile::default()
        }
    };
    syntax.extend(ctx.errors.into_iter().map(|e| src.error(e.error)));
    syntax.extend(ctx.diags);
    diags.extend(syntax);
    let mut diags = first_per_item(diags, &item_starts);
    let file = match too_deep_file(&file) {
        Some(span) => {
            diags.push(Diagnostic::error(span, "nesting too deep"));
            dismantle_file(file);
            SourceFile::default()
        }
        None => file,
    };
    (file, diags)
}

/// Parses an interpolation hole whose text starts at absolute `base`.
pub(crate) fn parse_hole(text: &str, base: u32) -> (Option<Expr>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let tokens = lex_at(text, base, false, &mut diags);
    if let Some(d) = check_bracket_depth(&tokens) {
        diags.push(d);
        return (None, diags);
    }
    let src = ErrSrc::new(text, base, "the end of the hole", &tokens);
    let mut ctx = Ctx::default();
    let result = grammar::ExprParser::new().parse(&mut ctx, spanned(tokens));
    let expr = match result {
        Ok(e) => Some(e),
        Err(e) => {
            diags.push(src.error(e));
            None
        }
    };
    diags.extend(ctx.errors.into_iter().map(|e| src.error(e.error)));
    diags.extend(ctx.diags);
    diags.truncate(1);
    match expr {
        Some(e) => match too_deep_expr(&e) {
            Some(span) => {
                diags.push(Diagnostic::error(span, "nesting too deep"));
                dismantle(vec![Node::Expr(e)]);
                (None, diags)
            }
            None => (Some(e), diags),
        },
        None => (None, diags),
    }
}

type Spanned = Result<(u32, Token, u32), LexError>;

fn spanned(tokens: Vec<(Token, Span)>) -> impl Iterator<Item = Spanned> {
    tokens.into_iter().map(|(t, s)| Ok((s.start, t, s.end)))
}

fn check_bracket_depth(tokens: &[(Token, Span)]) -> Option<Diagnostic> {
    // Lambdas nest without brackets (`|x| |y| ...`: each extends as far
    // right as possible, to the next `,` or `;` or the closing bracket of
    // its level), and LALRPOP's error recovery costs the parser's stack
    // depth for every token it skips: a syntax error after 20,000 nested
    // lambdas took seconds. So a lambda head counts as a level too, until
    // the end of its segment, and the same limit applies to the sum.
    let mut depth = 0usize;
    // Lambda heads open in the current segment of each bracket level.
    let mut lambdas: Vec<usize> = vec![0];
    // Prefix `-` and `!` in a row before their operand nest the same way.
    let mut unary = 0usize;
    let too_deep = |span: Span| {
        Diagnostic::error(span, "nesting too deep").with_note(format!(
            "brackets, lambdas and prefix operators may nest at most {MAX_BRACKET_DEPTH} levels"
        ))
    };
    let mut i = 0;
    while i < tokens.len() {
        let (t, span) = &tokens[i];
        let prefix = i == 0 || !tokens[i - 1].0.ends_statement();
        if t.ends_statement() {
            depth = depth.saturating_sub(std::mem::take(&mut unary));
        }
        match t {
            Token::LParen | Token::LBracket | Token::LBrace => {
                depth += 1;
                lambdas.push(0);
                if depth > MAX_BRACKET_DEPTH {
                    return Some(too_deep(*span));
                }
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                if lambdas.len() > 1 {
                    let open = lambdas.pop().unwrap_or(0);
                    depth = depth.saturating_sub(1 + open);
                } else {
                    depth = depth.saturating_sub(lambdas[0]);
                    lambdas[0] = 0;
                }
            }
            Token::Comma | Token::Semi => {
                let open = lambdas.last_mut().map(std::mem::take).unwrap_or(0);
                depth = depth.saturating_sub(open + std::mem::take(&mut unary));
            }
            Token::Minus | Token::Bang if prefix => {
                unary += 1;
                depth += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return Some(too_deep(*span));
                }
            }
            Token::Pipe | Token::OrOr if prefix => {
                if let Some(n) = lambdas.last_mut() {
                    *n += 1;
                }
                depth += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return Some(too_deep(*span));
                }
                if *t == Token::Pipe {
                    // Skip the parameters to the head's closing `|`.
                    let close = tokens[i + 1..].iter().position(|(t, _)| *t == Token::Pipe);
                    i += close.map_or(0, |c| c + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Offsets where a top-level item starts (`fn name` or `type` outside any
/// brace), used to keep one error per item.
fn item_starts(tokens: &[(Token, Span)]) -> Vec<u32> {
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (i, (t, span)) in tokens.iter().enumerate() {
        match t {
            Token::LBrace | Token::LParen | Token::LBracket => depth += 1,
            Token::RBrace | Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            Token::Type if depth == 0 => starts.push(span.start),
            Token::Fn if depth == 0 && matches!(tokens.get(i + 1), Some((Token::Lower(_), _))) => {
                starts.push(span.start)
            }
            _ => {}
        }
    }
    starts
}

/// Error recovery can report follow-on errors for one mistake; keep the
/// first (by position) in each item. A lexer diagnostic wins a tie with the
/// parser's complaint about the same bad token.
fn first_per_item(mut diags: Vec<Diagnostic>, item_starts: &[u32]) -> Vec<Diagnostic> {
    diags.sort_by_key(|d| d.span.start);
    let mut last_item = None;
    let mut out = Vec::new();
    for d in diags {
        // Sorted by position, so each item's diagnostics are adjacent.
        let item = item_starts.partition_point(|&s| s <= d.span.start);
        if last_item != Some(item) {
            last_item = Some(item);
            out.push(d);
        }
    }
    out
}

/// What syntax-error messages need to know about the text.
struct ErrSrc<'a> {
    text: &'a str,
    /// Absolute offset of `text`'s first byte.
    base: u32,
    eof_word: &'static str,
    /// Token starts and kinds, to look at what precedes an error.
    tokens: Vec<(u32, std::mem::Discriminant<Token>)>,
    /// The innermost bracket still open at the end of the text.
    unclosed: Option<(Span, &'static str)>,
    /// Every bracket token: its span and text.
    brackets: Vec<(Span, &'static str)>,
}

impl<'a> ErrSrc<'a> {
    fn new(text: &'a str, base: u32, eof_word: &'static str, tokens: &[(Token, Span)]) -> Self {
        let brackets: Vec<(Span, &'static str)> = tokens
            .iter()
            .filter_map(|(t, span)| {
                let b = match t {
                    Token::LParen => "(",
                    Token::LBracket => "[",
                    Token::LBrace => "{",
                    Token::RParen => ")",
                    Token::RBracket => "]",
                    Token::RBrace => "}",
                    _ => return None,
                };
                Some((*span, b))
            })
            .collect();
        let unclosed = open_before(&brackets, u32::MAX);
        let tokens = tokens
            .iter()
            .map(|(t, s)| (s.start, std::mem::discriminant(t)))
            .collect();
        ErrSrc {
            text,
            base,
            eof_word,
            tokens,
            unclosed,
            brackets,
        }
    }

    fn slice(&self, span: Span) -> Option<&'a str> {
        let start = span.start.checked_sub(self.base)? as usize;
        let end = span.end.checked_sub(self.base)? as usize;
        self.text.get(start..end)
    }

    /// The kinds of the two tokens before the one starting at `at`.
    fn before(&self, at: u32) -> [Option<std::mem::Discriminant<Token>>; 2] {
        let i = self.tokens.partition_point(|(s, _)| *s < at);
        let get = |k: usize| {
            i.checked_sub(k)
                .and_then(|j| self.tokens.get(j))
                .map(|t| t.1)
        };
        [get(2), get(1)]
    }

    fn error(&self, e: ParseError<u32, Token, LexError>) -> Diagnostic {
        let eof = self.base + self.text.len() as u32;
        match e {
            ParseError::InvalidToken { location } => {
                Diagnostic::error(Span::new(location, location + 1), "invalid token")
            }
            ParseError::UnrecognizedEof { location, expected } => {
                let d = Diagnostic::error(
                    Span::new(location.min(eof), eof),
                    format!(
                        "expected {}, found {}",
                        describe_expected(&expected),
                        self.eof_word
                    ),
                );
                match self.unclosed {
                    Some((span, b)) => d.with_label(span, format!("this `{b}` is never closed")),
                    None => d,
                }
            }
            ParseError::UnrecognizedToken {
                token: (l, token, r),
                expected,
            } => {
                let span = Span::new(l, r);
                let found = self.describe_found(&token, span);
                // An `else` right after `}` is never a let's `else` (see
                // `mark_let_else`), so do not offer it as expected.
                let let_else = token == Token::Else && expected.iter().any(|e| e == "LetElse");
                let expected: Vec<String> = expected
                    .into_iter()
                    .filter(|e| !(let_else && e == "LetElse"))
                    .collect();
                let mut d = Diagnostic::error(
                    span,
                    format!("expected {}, found {found}", describe_expected(&expected)),
                );
                let d_brace = std::mem::discriminant(&Token::LBrace);
                let is_lower = |t: Option<std::mem::Discriminant<Token>>| {
                    t == Some(std::mem::discriminant(&Token::Lower(String::new())))
                };
                let d_for = std::mem::discriminant(&Token::For);
                if matches!(token, Token::Upper(_) | Token::Int(_) | Token::Str(_))
                    && matches!(self.before(l), [_, Some(k)] if k == d_for)
                {
                    d = d.with_note(
                        "`for` binds a name, `_` or a tuple of those; use `match` for other patterns",
                    );
                } else if token == Token::Eq && expected.iter().any(|e| e == "\":=\"") {
                    d = d.with_note("to rebind a `var`, write `name := value`; `==` compares");
                } else if token == Token::Fn && expected.iter().any(|e| e == "\"|\"") {
                    d = d.with_note(
                        "Sspur has no `fn` expressions; a function value is a lambda: `|x: Int| x + 1`, or the name of a top-level `fn`",
                    );
                } else if token == Token::LParen
                    && self.slice(Span::new(l.saturating_sub(2), l)) == Some("Fn")
                {
                    d = d.with_note("a function type is written `fn(Int, Str) -> Bool` (lower-case `fn`; `fn(Int)` returns Unit)");
                } else if token == Token::LBracket
                    && matches!(self.before(l), [Some(k), _] if k == std::mem::discriminant(&Token::Type))
                {
                    d = d.with_note(
                        "Sspur has no generic types: write the type for the element type you need (`type IntTree = Leaf | Node(IntTree, Int, IntTree)`); `List`, `Map` and `Option` are the generic types",
                    );
                } else if token == Token::ColonEq
                    && matches!(self.before(l), [_, Some(k)] if k == std::mem::discriminant(&Token::RBracket))
                {
                    d = d.with_note(
                        "an element cannot be assigned: for a `var` list write `xs := xs.set(i, v)` (written in place when `xs` is the list's only owner); a map changes with `m.put(k, v)`",
                    );
                } else if let_else {
                    d = d.with_note(
                        "an `else` after `}` continues an `if`; for `let PAT = value else { .. }` with a value that ends in `}`, put the value in parentheses",
                    );
                } else if token == Token::Else {
                    d = d.with_note("`else` must be on the same line as the `}` before it");
                } else if token == Token::Colon
                    && matches!(self.before(l), [Some(b), n] if b == d_brace && is_lower(n))
                {
                    d = d.with_note(
                        "a record literal is not allowed in the head of `if`, `while`, `match` or `for`; put it in parentheses",
                    );
                } else if token == Token::Semi && self.slice(span) == Some("\n") {
                    d = d.with_note(
                        "a line break here ends the statement; to continue an expression, end the line with an operator",
                    );
                }
                // Point at the bracket a missing closer belongs to, when a
                // line ends or another closer comes before it.
                if let Some((open, b)) = open_before(&self.brackets, l) {
                    let closer = format!("\"{}\"", closing(b));
                    // (A `{` spans lines and statements: what ends early
                    // inside one is rarely its missing `}`.)
                    let ends = matches!(
                        token,
                        Token::RParen | Token::RBracket | Token::RBrace | Token::Semi
                    ) && b != "{";
                    if ends && expected.contains(&closer) {
                        d = d.with_label(open, format!("this `{b}` is not closed"));
                    }
                }
                d
            }
            ParseError::ExtraToken {
                token: (l, token, r),
            } => {
                let span = Span::new(l, r);
                Diagnostic::error(
                    span,
                    format!("unexpected {}", self.describe_found(&token, span)),
                )
            }
            ParseError::User { error: LexError } => {
                Diagnostic::error(Span::new(self.base, self.base), "invalid token")
            }
        }
    }

    fn describe_found(&self, token: &Token, span: Span) -> String {
        let text = self.slice(span).unwrap_or("?");
        match token {
            Token::Semi if text != ";" => "end of line".to_string(),
            Token::Str(_) => "string literal".to_string(),
            Token::Int(_) | Token::Float(_) => format!("number `{text}`"),
            Token::Lower(n) | Token::Upper(n) => format!("`{n}`"),
            Token::Error => "invalid token".to_string(),
            _ => format!("`{text}`"),
        }
    }
}

/// The innermost bracket open before `at`.
fn open_before(brackets: &[(Span, &'static str)], at: u32) -> Option<(Span, &'static str)> {
    let mut open = Vec::new();
    for &(span, b) in brackets.iter().take_while(|(s, _)| s.start < at) {
        match b {
            "(" | "[" | "{" => open.push((span, b)),
            _ => {
                open.pop();
            }
        }
    }
    open.pop()
}

fn closing(open: &str) -> &'static str {
    match open {
        "(" => ")",
        "[" => "]",
        _ => "}",
    }
}

/// Words for the set of terminals the parser would have accepted.
fn describe_expected(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    let mut words: Vec<String> = Vec::new();
    let mut skip: Vec<&str> = Vec::new();
    if has("IntLit") && has("\"[\"") {
        words.push("expression".into());
        skip.extend([
            "IntLit",
            "FloatLit",
            "StrLit",
            "Lower",
            "Upper",
            "\"(\"",
            "\"[\"",
            "\"{\"",
            "\"-\"",
            "\"!\"",
            "\"|\"",
            "\"||\"",
            "\"if\"",
            "\"match\"",
            "\"true\"",
            "\"false\"",
            "\"return\"",
            "\"break\"",
            "\"continue\"",
            "\"let\"",
            "\"var\"",
            "\"for\"",
            "\"while\"",
            "\"_\"",
        ]);
    } else if has("IntLit") && has("Lower") {
        words.push("pattern".into());
        skip.extend([
            "IntLit",
            "StrLit",
            "Lower",
            "Upper",
            "\"(\"",
            "\"-\"",
            "\"true\"",
            "\"false\"",
            "\"_\"",
        ]);
    } else if has("Upper") && has("\"fn\"") && has("\"(\"") {
        words.push("type".into());
        skip.extend(["Upper", "\"fn\"", "\"(\""]);
    }
    if has("\"+\"") && has("\"*\"") {
        words.push("operator".into());
        skip.extend([
            "\"+\"", "\"-\"", "\"*\"", "\"/\"", "\"%\"", "\"==\"", "\"!=\"", "\"<\"", "\"<=\"",
            "\">\"", "\">=\"", "\"&&\"", "\"||\"", "\"..\"", "\".\"", "\"(\"", "\"[\"",
        ]);
    }
    if has("\"fn\"") && has("\"type\"") {
        words.push("item (`fn`, `type` or `let`)".into());
        skip.extend(["\"fn\"", "\"type\"", "\"let\""]);
    }
    for e in expected {
        if skip.contains(&e.as_str()) {
            continue;
        }
        let w = match e.as_str() {
            "Lower" => "name".to_string(),
            "Upper" => "capitalised name".to_string(),
            "IntLit" => "integer".to_string(),
            "FloatLit" => "number".to_string(),
            "StrLit" => "string literal".to_string(),
            "FieldIndex" => "tuple field".to_string(),
            "\";\"" => "end of line".to_string(),
            "InvalidToken" => continue,
            "LetElse" => "`else`".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        };
        if !words.contains(&w) {
            words.push(w);
        }
    }
    match words.len() {
        0 => "something else".to_string(),
        1 => words.remove(0),
        n if n > 6 => {
            words.truncate(6);
            format!("one of {}, ...", words.join(", "))
        }
        _ => {
            let last = words.pop().unwrap_or_default();
            format!("{} or {last}", words.join(", "))
        }
    }
}

// ---------------------------------------------------------------- actions

pub fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = lhs.span.cover(rhs.span);
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    }
}

fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

/// Comparisons do not chain: `a < b < c` is a diagnostic (a parenthesised
/// left side, whose span is wider than its operands, is fine).
pub fn comparison(ctx: &mut Ctx, (op, op_span): (BinOp, Span), lhs: Expr, rhs: Expr) -> Expr {
    if let ExprKind::Binary {
        op: inner,
        lhs: a,
        rhs: b,
    } = &lhs.kind
    {
        if is_comparison(*inner) && lhs.span == a.span.cover(b.span) {
            ctx.diags.push(
                Diagnostic::error(op_span, "comparison operators cannot be chained")
                    .with_note("split it with `&&`, e.g. `a < b && b < c`"),
            );
        }
    }
    binary(op, lhs, rhs)
}

/// `f(args)`; `x.m(args)` and `Some(x)` are folded into the method call and
/// the constructor (unless parenthesised: `(s.f)(x)` calls a field).
pub fn call(callee: Expr, args: Vec<Expr>, span: Span) -> Expr {
    let is_method = matches!(
        &callee.kind,
        ExprKind::Method { name, args, parens: false, .. } if args.is_empty() && callee.span.end == name.span.end
    );
    let is_ctor = matches!(
        &callee.kind,
        ExprKind::Ctor { name, args: None } if callee.span == name.span
    );
    let kind = match callee.kind {
        ExprKind::Method { receiver, name, .. } if is_method => ExprKind::Method {
            receiver,
            name,
            args,
            parens: true,
        },
        ExprKind::Ctor { name, .. } if is_ctor => ExprKind::Ctor {
            name,
            args: Some(args),
        },
        kind => ExprKind::Call {
            callee: Box::new(Expr {
                kind,
                span: callee.span,
            }),
            args,
        },
    };
    Expr { kind, span }
}

pub fn block(mut stmts: Vec<Option<Stmt>>, end: Option<BlockEnd>, span: Span) -> Block {
    let mut tail = None;
    match end {
        Some(BlockEnd::Tail(e)) => tail = Some(Box::new(e)),
        Some(BlockEnd::Stmt(s)) => stmts.push(Some(s)),
        None => {}
    }
    Block {
        stmts: stmts.into_iter().flatten().collect(),
        tail,
        span,
    }
}

pub fn error_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        span,
    }
}

pub fn error_stmt(span: Span) -> Stmt {
    Stmt {
        kind: StmtKind::Expr(error_expr(span)),
        span,
    }
}

pub fn unit_type(span: Span) -> TypeRef {
    TypeRef {
        kind: TypeRefKind::Tuple(Vec::new()),
        span,
    }
}

/// `(p)` is `p`; otherwise a tuple pattern (`()` matches Unit).
pub fn tuple_pat(mut ps: Vec<Pat>, span: Span) -> Pat {
    if ps.len() == 1 {
        if let Some(p) = ps.pop() {
            return Pat { span, ..p };
        }
    }
    Pat {
        kind: PatKind::Tuple(ps),
        span,
    }
}

pub fn str_pat(ctx: &mut Ctx, parts: Vec<StrPart>, span: Span) -> Pat {
    let mut text = String::new();
    for part in parts {
        match part {
            StrPart::Text(t) => text.push_str(&t),
            StrPart::Hole(e) => {
                ctx.diags.push(Diagnostic::error(
                    e.span,
                    "a string pattern cannot interpolate; write `\\{` for a literal brace",
                ));
            }
        }
    }
    Pat {
        kind: PatKind::Str(text),
        span,
    }
}

// ---------------------------------------------------------------- depth guard

/// The span of the first node nested deeper than [`MAX_TREE_DEPTH`].
fn too_deep_file(file: &SourceFile) -> Option<Span> {
    for item in &file.items {
        let found = match item {
            Item::Fn(f) => f
                .params
                .iter()
                .find_map(|p| too_deep_type(&p.ty, 1))
                .or_else(|| f.ret.as_ref().and_then(|t| too_deep_type(t, 1)))
                .or_else(|| too_deep_block(&f.body, 1)),
            Item::Type(t) => match &t.kind {
                TypeDefKind::Record(fields) => fields.iter().find_map(|f| too_deep_type(&f.ty, 1)),
                TypeDefKind::Sum(vs) => vs
                    .iter()
                    .flat_map(|v| &v.fields)
                    .find_map(|t| too_deep_type(t, 1)),
            },
            Item::Const(c) => {
                c.ty.as_ref()
                    .and_then(|t| too_deep_type(t, 1))
                    .or_else(|| expr_depth(&c.init, 1))
            }
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn too_deep_expr(e: &Expr) -> Option<Span> {
    expr_depth(e, 1)
}

fn too_deep_type(t: &TypeRef, depth: usize) -> Option<Span> {
    if depth > MAX_TREE_DEPTH {
        return Some(t.span);
    }
    match &t.kind {
        TypeRefKind::Named { args, .. } => args.iter().find_map(|a| too_deep_type(a, depth + 1)),
        TypeRefKind::Tuple(ts) => ts.iter().find_map(|a| too_deep_type(a, depth + 1)),
        TypeRefKind::Fn { params, ret } => params
            .iter()
            .find_map(|a| too_deep_type(a, depth + 1))
            .or_else(|| ret.as_ref().and_then(|r| too_deep_type(r, depth + 1))),
    }
}

fn too_deep_pat(p: &Pat, depth: usize) -> Option<Span> {
    if depth > MAX_TREE_DEPTH {
        return Some(p.span);
    }
    match &p.kind {
        PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
            ps.iter().find_map(|q| too_deep_pat(q, depth + 1))
        }
        _ => None,
    }
}

fn too_deep_block(b: &Block, depth: usize) -> Option<Span> {
    if depth > MAX_TREE_DEPTH {
        return Some(b.span);
    }
    for s in &b.stmts {
        let found = match &s.kind {
            StmtKind::Let {
                pat,
                ty,
                init,
                else_,
            } => too_deep_pat(pat, depth + 1)
                .or_else(|| ty.as_ref().and_then(|t| too_deep_type(t, depth + 1)))
                .or_else(|| expr_depth(init, depth + 1))
                .or_else(|| else_.as_ref().and_then(|b| too_deep_block(b, depth + 1))),
            StmtKind::Var { ty, init, .. } => ty
                .as_ref()
                .and_then(|t| too_deep_type(t, depth + 1))
                .or_else(|| expr_depth(init, depth + 1)),
            StmtKind::Assign { value, .. } => expr_depth(value, depth + 1),
            StmtKind::For { pat, iter, body } => too_deep_pat(pat, depth + 1)
                .or_else(|| expr_depth(iter, depth + 1))
                .or_else(|| too_deep_block(body, depth + 1)),
            StmtKind::While { cond, body } => {
                expr_depth(cond, depth + 1).or_else(|| too_deep_block(body, depth + 1))
            }
            StmtKind::Expr(e) => expr_depth(e, depth + 1),
        };
        if found.is_some() {
            return found;
        }
    }
    b.tail.as_ref().and_then(|e| expr_depth(e, depth + 1))
}

fn expr_depth(e: &Expr, depth: usize) -> Option<Span> {
    if depth > MAX_TREE_DEPTH {
        return Some(e.span);
    }
    let d = depth + 1;
    let all = |es: &[Expr]| es.iter().find_map(|x| expr_depth(x, d));
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Unit
        | ExprKind::Name(_)
        | ExprKind::Break
        | ExprKind::Continue
        | ExprKind::Error => None,
        ExprKind::Str(parts) => parts.iter().find_map(|p| match p {
            StrPart::Text(_) => None,
            StrPart::Hole(h) => expr_depth(h, d),
        }),
        ExprKind::Ctor { args, .. } => args.as_deref().and_then(all),
        ExprKind::Record { fields, .. } => fields.iter().find_map(|(_, x)| expr_depth(x, d)),
        ExprKind::Tuple(es) | ExprKind::List(es) => all(es),
        ExprKind::Range { lo: a, hi: b }
        | ExprKind::Binary { lhs: a, rhs: b, .. }
        | ExprKind::Index { base: a, index: b } => expr_depth(a, d).or_else(|| expr_depth(b, d)),
        ExprKind::Unary { operand: a, .. } | ExprKind::Field { base: a, .. } => expr_depth(a, d),
        ExprKind::Call { callee, args } => expr_depth(callee, d).or_else(|| all(args)),
        ExprKind::Method { receiver, args, .. } => expr_depth(receiver, d).or_else(|| all(args)),
        ExprKind::Lambda { params, body } => params
            .iter()
            .find_map(|p| p.ty.as_ref().and_then(|t| too_deep_type(t, d)))
            .or_else(|| expr_depth(body, d)),
        ExprKind::If(if_) => if_
            .pat
            .as_ref()
            .and_then(|p| too_deep_pat(p, d))
            .or_else(|| expr_depth(&if_.cond, d))
            .or_else(|| too_deep_block(&if_.then, d))
            .or_else(|| if_.else_.as_ref().and_then(|x| expr_depth(x, d))),
        ExprKind::Match { scrutinee, arms } => expr_depth(scrutinee, d).or_else(|| {
            arms.iter()
                .find_map(|a| too_deep_pat(&a.pat, d).or_else(|| expr_depth(&a.body, d)))
        }),
        ExprKind::Block(b) => too_deep_block(b, d),
        ExprKind::Return(v) => v.as_ref().and_then(|x| expr_depth(x, d)),
    }
}

/// A piece of a too-deep tree, taken apart without recursion.
enum Node {
    Expr(Expr),
    Block(Block),
    Pat(Pat),
    Type(TypeRef),
}

fn dismantle_file(file: SourceFile) {
    let mut work = Vec::new();
    for item in file.items {
        match item {
            Item::Fn(f) => {
                work.extend(f.params.into_iter().map(|p| Node::Type(p.ty)));
                work.extend(f.ret.map(Node::Type));
                work.push(Node::Block(f.body));
            }
            Item::Type(t) => match t.kind {
                TypeDefKind::Record(fields) => {
                    work.extend(fields.into_iter().map(|f| Node::Type(f.ty)))
                }
                TypeDefKind::Sum(vs) => {
                    work.extend(vs.into_iter().flat_map(|v| v.fields).map(Node::Type))
                }
            },
            Item::Const(c) => {
                work.extend(c.ty.map(Node::Type));
                work.push(Node::Expr(c.init));
            }
        }
    }
    dismantle(work);
}

/// Drops a tree of any depth with an explicit stack (the derived Drop
/// would recurse once per level).
fn dismantle(mut work: Vec<Node>) {
    while let Some(node) = work.pop() {
        match node {
            Node::Type(t) => match t.kind {
                TypeRefKind::Named { args, .. } | TypeRefKind::Tuple(args) => {
                    work.extend(args.into_iter().map(Node::Type))
                }
                TypeRefKind::Fn { params, ret } => {
                    work.extend(params.into_iter().map(Node::Type));
                    work.extend(ret.map(|r| Node::Type(*r)));
                }
            },
            Node::Pat(p) => match p.kind {
                PatKind::Tuple(ps) | PatKind::Ctor { args: ps, .. } => {
                    work.extend(ps.into_iter().map(Node::Pat))
                }
                _ => {}
            },
            Node::Block(b) => {
                for s in b.stmts {
                    match s.kind {
                        StmtKind::Let {
                            pat,
                            ty,
                            init,
                            else_,
                        } => {
                            work.push(Node::Pat(pat));
                            work.extend(ty.map(Node::Type));
                            work.push(Node::Expr(init));
                            work.extend(else_.map(Node::Block));
                        }
                        StmtKind::Var { ty, init, .. } => {
                            work.extend(ty.map(Node::Type));
                            work.push(Node::Expr(init));
                        }
                        StmtKind::Assign { value, .. } => work.push(Node::Expr(value)),
                        StmtKind::For { pat, iter, body } => {
                            work.push(Node::Pat(pat));
                            work.push(Node::Expr(iter));
                            work.push(Node::Block(body));
                        }
                        StmtKind::While { cond, body } => {
                            work.push(Node::Expr(cond));
                            work.push(Node::Block(body));
                        }
                        StmtKind::Expr(e) => work.push(Node::Expr(e)),
                    }
                }
                if let Some(t) = b.tail {
                    work.push(Node::Expr(*t));
                }
            }
            Node::Expr(e) => match e.kind {
                ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Bool(_)
                | ExprKind::Unit
                | ExprKind::Name(_)
                | ExprKind::Break
                | ExprKind::Continue
                | ExprKind::Error => {}
                ExprKind::Str(parts) => {
                    for p in parts {
                        if let StrPart::Hole(h) = p {
                            work.push(Node::Expr(h));
                        }
                    }
                }
                ExprKind::Ctor { args, .. } => {
                    work.extend(args.into_iter().flatten().map(Node::Expr))
                }
                ExprKind::Record { fields, .. } => {
                    work.extend(fields.into_iter().map(|(_, x)| Node::Expr(x)))
                }
                ExprKind::Tuple(es) | ExprKind::List(es) => {
                    work.extend(es.into_iter().map(Node::Expr))
                }
                ExprKind::Range { lo: a, hi: b }
                | ExprKind::Binary { lhs: a, rhs: b, .. }
                | ExprKind::Index { base: a, index: b } => {
                    work.push(Node::Expr(*a));
                    work.push(Node::Expr(*b));
                }
                ExprKind::Unary { operand: a, .. } | ExprKind::Field { base: a, .. } => {
                    work.push(Node::Expr(*a))
                }
                ExprKind::Call { callee, args } => {
                    work.push(Node::Expr(*callee));
                    work.extend(args.into_iter().map(Node::Expr));
                }
                ExprKind::Method { receiver, args, .. } => {
                    work.push(Node::Expr(*receiver));
                    work.extend(args.into_iter().map(Node::Expr));
                }
                ExprKind::Lambda { params, body } => {
                    work.extend(params.into_iter().filter_map(|p| p.ty).map(Node::Type));
                    work.push(Node::Expr(*body));
                }
                ExprKind::If(if_) => {
                    let if_ = *if_;
                    work.extend(if_.pat.map(Node::Pat));
                    work.push(Node::Expr(*if_.cond));
                    work.push(Node::Block(if_.then));
                    if let Some(x) = if_.else_ {
                        work.push(Node::Expr(*x));
                    }
                }
                ExprKind::Match { scrutinee, arms } => {
                    work.push(Node::Expr(*scrutinee));
                    for a in arms {
                        work.push(Node::Pat(a.pat));
                        work.push(Node::Expr(a.body));
                    }
                }
                ExprKind::Block(b) => work.push(Node::Block(b)),
                ExprKind::Return(v) => {
                    if let Some(x) = v {
                        work.push(Node::Expr(*x));
                    }
                }
            },
        }
    }
}
