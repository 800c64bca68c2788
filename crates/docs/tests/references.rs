//! No file of the repository points to a document outside it: the semantic
//! contract is `docs/semantics.md`, the code map ARCHITECTURE.md, the user
//! guide the README. (An earlier design file lived beside the repository;
//! references to it, even in messages printed to users, were dangling for
//! everyone else.)

use std::path::Path;

use ptxeq_docs::workspace_root;

/// The spellings of references to the outside design file. Written in
/// pieces so this file does not match itself.
const FORBIDDEN: [&str; 5] = [
    concat!("design", ".md"),
    concat!("../", "shared/"),
    concat!("design ", "card"),
    concat!("design ", "§"),
    concat!("design", "'s real"),
];

/// Directories that are not the repository's own text: build output, VCS
/// data, virtual environments, caches (anything hidden).
fn skipped(name: &str) -> bool {
    name == "target" || name.starts_with('.') || name == "__pycache__" || name == "node_modules"
}

fn walk(dir: &Path, hits: &mut Vec<String>, files: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !skipped(&name) {
                walk(&path, hits, files);
            }
        } else if kind.is_file() {
            // Binary files (not UTF-8) hold no references a reader follows.
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            *files += 1;
            for (n, line) in text.lines().enumerate() {
                if FORBIDDEN.iter().any(|f| line.contains(f)) {
                    hits.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn no_reference_to_documents_outside_the_repository() {
    let root = workspace_root();
    let mut hits = Vec::new();
    let mut files = 0;
    walk(&root, &mut hits, &mut files);
    assert!(
        files > 100,
        "read only {files} files under {}",
        root.display()
    );
    assert!(
        hits.is_empty(),
        "references to a document outside the repository; point them to docs/semantics.md \
         (semantics), ARCHITECTURE.md (code map), the README (commands, spec keys) or \
         corpus/README.md (corpus), adding the section there if it is missing:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_scan_finds_a_reference_when_there_is_one() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("references-probe");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/a.rs"),
        format!("//! see {} §4\n", FORBIDDEN[0]),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("target")).unwrap();
    std::fs::write(dir.join("target/b.rs"), FORBIDDEN[1]).unwrap();
    let mut hits = Vec::new();
    let mut files = 0;
    walk(&dir, &mut hits, &mut files);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].contains("a.rs:1"), "{hits:?}");
}
