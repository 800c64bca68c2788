//! Decoder unit tests (filled below).
