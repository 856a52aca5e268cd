//! Sources a consumer method iterates in place instead of loading list
//! elements: a range (`(a..b).map(f)`: lo, lo + 1, ...) and the pieces of
//! a string (`s.words.counts`, `s.lines.len`: each piece cut by
//! `sspur_piece_next` as the consumer asks for it). Which receivers qualify
//! is `ir::methods::iterates_range_in_place` and
//! `ir::methods::{is_piece_source, consumes_pieces_in_place}`, the same
//! predicates the ownership pass uses to plan no free for the list.

use super::{Lowerer, Vals};
use crate::rtfns::F;
use ::ir::{ExprId, ExprKind, Method};
use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

/// The source the next `each` runs over instead of a list.
#[derive(Clone)]
pub(super) enum Src {
    /// The first value of a range (its length is the list length).
    Range(Value),
    /// The pieces of a string.
    Pieces(Pieces),
}

/// A string and how to cut it: `kind` is one of rt's `pieces::CHARS`,
/// `WORDS`, `LINES`, `SPLIT`; `sep` is the separator of a split.
#[derive(Clone)]
pub(super) struct Pieces {
    kind: Value,
    s: Vals,
    sep: Vals,
}

impl Lowerer<'_, '_, '_> {
    /// The string and separator of `recv` when it is a piece source that
    /// method `m` consumes in place.
    pub(super) fn piece_source(
        &self,
        recv: ExprId,
        m: Method,
    ) -> Option<(Method, ExprId, Option<ExprId>)> {
        if !::ir::methods::consumes_pieces_in_place(m) {
            return None;
        }
        match &self.body[recv].kind {
            ExprKind::Method {
                method,
                receiver,
                args,
            } if ::ir::methods::is_piece_source(*method) => {
                Some((*method, *receiver, args.first().copied()))
            }
            _ => None,
        }
    }

    /// Evaluates a piece source's string and separator (None: unreachable).
    pub(super) fn pieces(
        &mut self,
        (m, s, sep): (Method, ExprId, Option<ExprId>),
    ) -> Option<Pieces> {
        use rt::helpers::pieces::{CHARS, LINES, SPLIT, WORDS};
        let s = self.expr(s)?;
        let sep = match sep {
            Some(x) => self.expr(x)?,
            None => vec![self.iconst(0), self.iconst(0)],
        };
        let kind = match m {
            Method::StrChars => CHARS,
            Method::StrWords => WORDS,
            Method::StrLines => LINES,
            _ => SPLIT,
        };
        Some(Pieces {
            kind: self.iconst(kind as i64),
            s,
            sep,
        })
    }

    fn piece_args(&self, p: &Pieces) -> Vec<Value> {
        vec![p.kind, p.s[0], p.s[1], p.sep[0], p.sep[1]]
    }

    /// `len`, `is_empty` and `counts` of a piece source: one runtime call
    /// that cuts and counts without a list.
    pub(super) fn pieces_direct(&mut self, e: ExprId, m: Method, p: &Pieces) -> Vals {
        let args = self.piece_args(p);
        match m {
            Method::ListCounts => {
                let site = self.site(e);
                let mut args = args;
                args.push(site);
                vec![self.rt1(F::sspur_piece_counts, &args)]
            }
            _ => {
                let n = self.rt1(F::sspur_piece_count, &args);
                if m == Method::ListIsEmpty {
                    let c = self.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
                    vec![self.bool_val(c)]
                } else {
                    vec![n]
                }
            }
        }
    }

    /// Runs `body(self, i, piece)` for each piece, cut one at a time into a
    /// cursor on the stack; the same contract as `each`.
    pub(super) fn each_piece(&mut self, p: Pieces, body: impl FnOnce(&mut Self, Value, Vals)) {
        let zero = self.iconst(0);
        let cursor = self.spill(&[zero]);
        let mut args = self.piece_args(&p);
        args.push(cursor);
        self.counted_loop(
            zero,
            |s, _, exit| {
                let piece = s.rt(F::sspur_piece_next, &args);
                // No piece left: the helper answers a pointer no string has.
                let none = s.iconst(-1);
                s.leave_unless(IntCC::NotEqual, piece[0], none, exit);
                piece
            },
            |s, iv, piece, _| {
                body(s, iv, piece);
                true
            },
        );
    }
}
