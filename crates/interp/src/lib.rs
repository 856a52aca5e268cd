//! Sspur reference interpreter over the typed IR.
