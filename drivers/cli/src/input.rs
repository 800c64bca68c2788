//! Reading input files into the database, with clear errors for bad paths.

use std::path::Path;

use ptxeq_db::{Database, SourceFile};

/// Reads `path` and registers it; prints an `error:` line and returns `None`
/// when it cannot be read (missing, a directory, not UTF-8).
pub fn load(db: &Database, path: &Path) -> Option<SourceFile> {
    match read(path) {
        Ok(text) => Some(db.add_file(path, text)),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// The text of `path`, or why it cannot be read (missing, a directory,
/// not UTF-8).
pub fn read(path: &Path) -> Result<String, String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
            format!(
                "{}: not UTF-8 text (invalid byte at offset {}); PTX is ASCII text",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        }),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}
