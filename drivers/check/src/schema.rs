//! The versioned JSON report schemas: the `"schema"` word of every report.

/// `ptxeq check --format json`.
pub const CHECK: &str = "ptxeq.check/1";
/// `ptxeq race --format json`.
pub const RACE: &str = "ptxeq.race/1";
/// `ptxeq lift --format json`.
pub const LIFT: &str = "ptxeq.lift/1";
