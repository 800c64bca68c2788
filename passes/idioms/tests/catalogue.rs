//! A stored catalogue (`ptxeq_idioms::catalogue`) read back is exactly the
//! catalogue a fresh build makes, so installing it instead of building
//! changes no recognition.

use ptxeq_idioms::catalogue::{catalogue, install_catalogue};

#[test]
fn a_stored_catalogue_reads_back_equal_to_a_fresh_build() {
    let built = catalogue();
    assert!(built.len() > 50, "{} templates", built.len());
    let config = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec(built, config).unwrap();
    let (back, n): (Vec<ptxeq_idioms::Template>, usize) =
        bincode::serde::decode_from_slice(&bytes, config).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(back.as_slice(), built);
    // And equal to another independent build (the build is deterministic,
    // so a stored copy equals what this process would build).
    assert_eq!(ptxeq_idioms::build_all().as_slice(), built);
    // This process has its catalogue: a second install is refused.
    assert!(!install_catalogue(back));
}
