//! Sspur name resolution and type checking: AST to typed IR.
