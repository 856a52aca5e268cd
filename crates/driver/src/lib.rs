//! Sspur salsa database: queries from source text to IR.
