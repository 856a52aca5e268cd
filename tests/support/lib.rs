//! Shared helpers for the top-level integration tests.
