//! The layer that owns the check spec's meaning for a run: it resolves a
//! [`ptxeq_spec::CheckSpec`] against a kernel of a lowered module into the
//! engine's plain inputs ([`ptxeq_exec::CtaInput`] with its
//! [`ptxeq_exec::Bindings`]). The engine itself never reads the spec.
//!
//! - [`cta_input`]: launch shape, cluster, params, tensors, symbolic
//!   scalars, limits; every misfit is an [`InputError`] pointing at the
//!   spec key it concerns.
//! - [`bindings`]: concrete tensor values, by-value struct fields,
//!   `[functions]`, `[globals]` (the semantics are in `docs/semantics.md`,
//!   "Bindings").

mod bindings;
mod input;

pub use bindings::{bindings, struct_param, value_bits};
pub use input::{InputError, cta_input};
