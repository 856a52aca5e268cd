//! Value-level helpers for compiled code: strings, lists, maps, display.
