//! Pipelines whose lists are never built (`ir::fusion` plans them): a
//! fused chain's range or piece source and every stage's list. The native
//! backend runs the chain as one loop; here such a list is no temporary to
//! free, and `explain` says so. The values that flow through the chain are
//! the same either way (the same views of the same strings), so no other
//! decision changes. The interpreter builds every list (it is the oracle)
//! and leaves these to the collector, as no free is planned for them.

use crate::decide::Decider;
use ir::fusion::{Chain, Consumer, SourceKind};
use ir::{ExprId, ExprKind, Method};

impl Decider<'_> {
    /// The fused chain that never builds list `e`.
    pub fn unbuilt(&self, e: ExprId) -> Option<&Chain> {
        self.fusion.unbuilt(e)
    }

    /// The method that runs over range `e` in place, when `e` is a range
    /// literal its consumer reads directly (`(a..b).map(f)`).
    pub fn range_in_place(&self, e: ExprId) -> Option<Method> {
        let c = self.unbuilt(e)?;
        match (c.kind, c.stages.is_empty(), c.consumer) {
            (SourceKind::Range, true, Consumer::Method(m)) => method_of(self, m),
            _ => None,
        }
    }

    /// `(source, consumer)` when `e` is a piece source its consumer method
    /// reads directly (`s.words` in `s.words.counts`).
    pub fn pieces_in_place(&self, e: ExprId) -> Option<(Method, Method)> {
        let c = self.unbuilt(e)?;
        match (c.kind, c.stages.is_empty(), c.consumer) {
            (SourceKind::Pieces(src), true, Consumer::Method(m)) => {
                Some((src, method_of(self, m)?))
            }
            _ => None,
        }
    }
}

fn method_of(d: &Decider, e: ExprId) -> Option<Method> {
    match &d.body[e].kind {
        ExprKind::Method { method, .. } => Some(*method),
        _ => None,
    }
}
