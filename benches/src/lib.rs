//! Benchmark helpers shared by the benches in `benches/benches`.
