//! Sspur runtime: allocator, collector, helpers.
