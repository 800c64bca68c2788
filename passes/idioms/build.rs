//! Fingerprints the sources the template catalogue is built from
//! (`src/catalogue.rs`): a stored catalogue is keyed by this hash, so an
//! edit of the templates, the matcher's code or the front end that lowers
//! the template PTX never installs a stale one. The hash and the
//! missing-input guard are `crates/fingerprint`'s, shared with
//! `drivers/db/build.rs`.

/// Sources (relative to this crate) that determine the catalogue.
const INPUTS: &[&str] = &[
    "src",
    "templates",
    "../lower/src",
    "../../crates/ir/src",
    "../../crates/syntax/src",
    "../../Cargo.lock",
];

fn main() {
    // Fails the build when an input is missing (moved crate, renamed
    // directory): it would silently drop out of the fingerprint.
    ptxeq_fingerprint::emit("PTXEQ_IDIOMS_FINGERPRINT", INPUTS);
}
