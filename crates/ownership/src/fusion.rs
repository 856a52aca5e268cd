//! Pipelines whose source list is never built: a piece source (`chars`,
//! `words`, `lines`, `split`) read by a consumer that takes the pieces one
//! at a time (`s.words.counts`, `s.lines.len`). The native backend cuts the
//! pieces as the consumer asks for them; the list is no temporary to free.
//! The pieces are the same views either way, so the receiver string's
//! fate does not change. The interpreter builds the list (it is the oracle)
//! and leaves it to the collector, as no free is planned for it.

use crate::decide::Decider;
use ir::{ExprId, ExprKind, Method};

impl Decider<'_> {
    /// `(source, consumer)` when `e` is a piece source read in place by its
    /// parent method (`s.words` in `s.words.counts`).
    pub fn pieces_in_place(&self, e: ExprId) -> Option<(Method, Method)> {
        let ExprKind::Method { method: source, .. } = &self.body[e].kind else {
            return None;
        };
        if !ir::methods::is_piece_source(*source) {
            return None;
        }
        let p = self.facts.exprs.get(e)?.parent?;
        match &self.body[p].kind {
            ExprKind::Method {
                method, receiver, ..
            } if *receiver == e && ir::methods::consumes_pieces_in_place(*method) => {
                Some((*source, *method))
            }
            _ => None,
        }
    }
}
