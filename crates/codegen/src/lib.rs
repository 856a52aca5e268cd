//! Sspur native backend: IR with drops to Cranelift.
