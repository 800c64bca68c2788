//! ARCHITECTURE.md's code map and layering rule, checked against the
//! workspace as it is on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ptxeq_docs::workspace_root;

/// A workspace member: its directory relative to the root (`crates/ir`),
/// its package name and its layer.
#[derive(Debug)]
struct Member {
    dir: String,
    name: String,
    manifest: toml::Table,
}

/// The layers of ARCHITECTURE.md's "Layout", bottom to top: a crate's layer
/// is its top-level directory.
const LAYERS: [&str; 4] = ["crates", "passes", "drivers", "benches"];

fn layer(dir: &str) -> usize {
    let top = dir.split('/').next().unwrap_or(dir);
    LAYERS.iter().position(|l| *l == top).unwrap_or_else(|| {
        panic!(
            "workspace member `{dir}` is in no layer of ARCHITECTURE.md's Layout \
             ({LAYERS:?}); add the layer to the Layout section and to this test"
        )
    })
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// The members of the root `[workspace] members` globs (`crates/*`) and
/// plain paths (`benches`), each a directory with a `Cargo.toml`.
fn members() -> Vec<Member> {
    let root = workspace_root();
    let manifest = read_toml(&root.join("Cargo.toml"));
    let globs = manifest["workspace"]["members"]
        .as_array()
        .expect("[workspace] members is a list");
    let mut dirs = BTreeSet::new();
    for glob in globs {
        let glob = glob.as_str().expect("a member is a string");
        if let Some(parent) = glob.strip_suffix("/*") {
            for entry in std::fs::read_dir(root.join(parent)).expect("member directory") {
                let entry = entry.expect("directory entry");
                if entry.path().join("Cargo.toml").is_file() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    dirs.insert(format!("{parent}/{name}"));
                }
            }
        } else {
            assert!(
                !glob.contains('*'),
                "member glob `{glob}`: only `dir/*` globs are understood by this test"
            );
            dirs.insert(glob.to_owned());
        }
    }
    dirs.into_iter()
        .map(|dir| {
            let manifest = read_toml(&root.join(&dir).join("Cargo.toml"));
            let name = manifest["package"]["name"]
                .as_str()
                .expect("package name")
                .to_owned();
            Member {
                dir,
                name,
                manifest,
            }
        })
        .collect()
}

/// The paths named in backticks in the code map's `###` headings
/// (`### \`passes/unroll\`, \`passes/symex\` — …`), trailing `/` removed.
fn code_map_headings() -> Vec<String> {
    let text =
        std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let map = text
        .split_once("\n## Code map")
        .expect("ARCHITECTURE.md has a `## Code map` section")
        .1;
    let map = map.split("\n## ").next().unwrap_or(map);
    let mut paths = Vec::new();
    for line in map.lines().filter(|l| l.starts_with("### ")) {
        let mut rest = line;
        while let Some((_, after)) = rest.split_once('`') {
            let Some((path, after)) = after.split_once('`') else {
                break;
            };
            paths.push(path.trim_end_matches('/').to_owned());
            rest = after;
        }
    }
    paths
}

#[test]
fn every_crate_has_a_heading_and_every_heading_a_crate() {
    let members = members();
    assert!(
        members.len() > 10,
        "found only {} workspace members; is the root Cargo.toml read?",
        members.len()
    );
    let headings: BTreeSet<String> = code_map_headings().into_iter().collect();
    let dirs: BTreeSet<&str> = members.iter().map(|m| m.dir.as_str()).collect();

    let missing: Vec<&str> = dirs
        .iter()
        .copied()
        .filter(|d| !headings.contains(*d))
        .collect();
    assert!(
        missing.is_empty(),
        "workspace crates without a `### `crate/path`` heading in ARCHITECTURE.md's code map: \
         {missing:?}"
    );

    // A heading naming a path in a layer directory must be a crate; other
    // headings (`corpus/`, test data) are not crates and not checked here.
    let stale: Vec<&String> = headings
        .iter()
        .filter(|h| {
            LAYERS
                .iter()
                .any(|l| *h == l || h.starts_with(&format!("{l}/")))
        })
        .filter(|h| !dirs.contains(h.as_str()))
        .collect();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md's code map has headings for crates that do not exist: {stale:?}"
    );
}

/// The normal (`[dependencies]`, including target-specific ones) workspace
/// dependencies of a member, by package name.
fn normal_deps(m: &Member, ours: &BTreeMap<&str, &Member>) -> Vec<String> {
    let mut tables = Vec::new();
    if let Some(t) = m.manifest.get("dependencies").and_then(|d| d.as_table()) {
        tables.push(t);
    }
    if let Some(targets) = m.manifest.get("target").and_then(|t| t.as_table()) {
        for t in targets.values() {
            if let Some(d) = t.get("dependencies").and_then(|d| d.as_table()) {
                tables.push(d);
            }
        }
    }
    let mut deps = Vec::new();
    for table in tables {
        for (key, value) in table {
            // `package = "…"` renames a dependency.
            let name = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            if ours.contains_key(name) {
                deps.push(name.to_owned());
            }
        }
    }
    deps
}

#[test]
fn crates_depend_only_on_their_layer_or_below() {
    let members = members();
    let by_name: BTreeMap<&str, &Member> = members.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut violations = Vec::new();
    let mut edges = 0;
    for m in &members {
        for dep in normal_deps(m, &by_name) {
            edges += 1;
            let d = by_name[dep.as_str()];
            if layer(&d.dir) > layer(&m.dir) {
                violations.push(format!(
                    "{} ({}) depends on {} ({})",
                    m.name, m.dir, d.name, d.dir
                ));
            }
        }
    }
    assert!(
        edges > 10,
        "found only {edges} dependencies between workspace crates"
    );
    assert!(
        violations.is_empty(),
        "ARCHITECTURE.md's Layout says a crate depends only on crates of its own layer or \
         below ({LAYERS:?}, bottom to top); these do not:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_layer_rule_reads_headings_and_layers_as_expected() {
    // The helpers themselves: a heading line with two crates yields both.
    assert_eq!(layer("crates/ir"), 0);
    assert_eq!(layer("benches"), 3);
    assert!(layer("drivers/db") > layer("passes/symex"));
    let headings = code_map_headings();
    assert!(headings.iter().any(|h| h == "passes/symex"));
    assert!(headings.iter().any(|h| h == "crates/ir"));
}
