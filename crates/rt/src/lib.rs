//! Sspur runtime: allocator, collector, statistics, modes, and the C-ABI
//! entry points compiled code calls.

/// String, list, map and display helpers called by compiled code (owned by
/// the native backend's engineer; built on the core allocator API).
pub mod helpers;
