//! Sspur static ownership analysis: summaries, drops, explanations.
