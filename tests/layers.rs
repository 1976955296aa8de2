//! The workspace's layers: the "Layers" section of `ARCHITECTURE.md` lists the crates under
//! `server/` from bottom to top, and a crate may depend only on crates of lower layers (normal,
//! build and dev dependencies alike, `[target.…]` tables included). This test reads that list
//! and every `server/*/Cargo.toml`, and fails on a dependency on the same or a higher layer, on a
//! crate missing from the list, and on a listed name that is no crate; and when a crate other
//! than the binary depends on the `tools` facade (libraries name the tool API and the families
//! they need).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Res<T> = Result<T, String>;

/// The dependency tables read, in a manifest and in each of its `[target.…]` tables.
const KINDS: [&str; 3] = ["dependencies", "build-dependencies", "dev-dependencies"];

/// A crate of the workspace, named by its directory under `server/` (as the layers name it).
#[derive(Debug)]
struct Crate {
    /// The directory name (`tool-fs`).
    name: String,
    /// Its dependencies on other crates of the workspace: (table, directory name).
    deps: Vec<(&'static str, String)>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of the `## Layers` section of `doc` (up to the next `## ` heading).
fn layers_section(doc: &str) -> Res<&str> {
    let start = doc.find("\n## Layers\n").ok_or("ARCHITECTURE.md has no `## Layers` section")?;
    let body = &doc[start + "\n## Layers\n".len()..];
    Ok(body.find("\n## ").map_or(body, |end| &body[..end]))
}

/// Each crate's layer (1 at the bottom): one numbered list item per layer (`1. `protocol`,
/// `text``), the crates in backticks.
fn layers(doc: &str) -> Res<BTreeMap<String, usize>> {
    let mut layers = BTreeMap::new();
    let mut layer = 0;
    for line in layers_section(doc)?.lines() {
        let Some((number, rest)) = line.split_once(". ") else { continue };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        layer += 1;
        for name in rest.split('`').skip(1).step_by(2) {
            if let Some(first) = layers.insert(name.to_owned(), layer) {
                return Err(format!("ARCHITECTURE.md lists `{name}` twice in Layers (layers {first} and {layer})"));
            }
        }
    }
    if layers.is_empty() {
        return Err("the Layers section of ARCHITECTURE.md lists no crates (one numbered line per layer)".into());
    }
    Ok(layers)
}

/// The manifest of every crate under `server/`, by directory name.
fn manifests(server: &Path) -> Res<BTreeMap<String, toml::Table>> {
    let entries = std::fs::read_dir(server).map_err(|e| format!("{}: {e}", server.display()))?;
    let mut manifests = BTreeMap::new();
    for entry in entries.flatten() {
        let path = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let manifest = text.parse::<toml::Table>().map_err(|e| format!("{}: {e}", path.display()))?;
        manifests.insert(entry.file_name().to_string_lossy().into_owned(), manifest);
    }
    Ok(manifests)
}

/// The dependency tables of `manifest` of one kind: its own and those under `[target.…]`.
fn tables<'a>(manifest: &'a toml::Table, kind: &str) -> Vec<&'a toml::Table> {
    let targets = manifest.get("target").and_then(toml::Value::as_table);
    let targets = targets.into_iter().flat_map(|t| t.values()).filter_map(toml::Value::as_table);
    std::iter::once(manifest).chain(targets).filter_map(|t| t.get(kind).and_then(toml::Value::as_table)).collect()
}

/// The workspace's crates and their dependencies on each other.
fn crates(server: &Path) -> Res<Vec<Crate>> {
    let manifests = manifests(server)?;
    let mut by_package = BTreeMap::new();
    for (dir, manifest) in &manifests {
        let package = manifest.get("package").and_then(|p| p.get("name")).and_then(toml::Value::as_str);
        let package = package.ok_or_else(|| format!("server/{dir}/Cargo.toml has no package name"))?;
        by_package.insert(package.to_owned(), dir.clone());
    }
    let mut crates = Vec::new();
    for (dir, manifest) in &manifests {
        let mut deps = Vec::new();
        for kind in KINDS {
            for (key, spec) in tables(manifest, kind).into_iter().flatten() {
                // A renamed dependency names its package.
                let package = spec.get("package").and_then(toml::Value::as_str).unwrap_or(key);
                if let Some(dep) = by_package.get(package) {
                    deps.push((kind, dep.clone()));
                }
            }
        }
        crates.push(Crate { name: dir.clone(), deps });
    }
    Ok(crates)
}

/// What breaks the layering: a crate not listed, a listed name that is no crate, a dependency on
/// the same or a higher layer.
fn violations(layers: &BTreeMap<String, usize>, crates: &[Crate]) -> Vec<String> {
    let mut found = Vec::new();
    for name in layers.keys().filter(|name| !crates.iter().any(|c| &c.name == *name)) {
        found.push(format!("`{name}` is listed in ARCHITECTURE.md's Layers but there is no crate server/{name}"));
    }
    for krate in crates {
        let Some(&layer) = layers.get(&krate.name) else {
            found.push(format!(
                "`{}` (server/{}) is missing from ARCHITECTURE.md's Layers: add it to the lowest layer above \
                 everything it depends on",
                krate.name, krate.name
            ));
            continue;
        };
        for (kind, dep) in &krate.deps {
            let Some(&dep_layer) = layers.get(dep) else { continue };
            if dep_layer >= layer {
                found.push(format!(
                    "`{}` (layer {layer}) depends on `{dep}` (layer {dep_layer}) in [{kind}]: a crate may depend \
                     only on crates of lower layers (ARCHITECTURE.md, Layers)",
                    krate.name
                ));
            }
        }
    }
    found
}

#[test]
fn every_crate_depends_only_on_crates_of_lower_layers() -> Res<()> {
    let root = repo_root();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).map_err(|e| format!("ARCHITECTURE.md: {e}"))?;
    let layers = layers(&doc)?;
    let crates = crates(&root.join("server"))?;
    assert!(crates.len() >= 10, "found too few crates under server/: {crates:?}");
    let found = violations(&layers, &crates);
    assert!(found.is_empty(), "the workspace breaks its layers:\n{}", found.join("\n"));
    Ok(())
}

#[test]
fn the_check_names_the_crate_the_dependency_and_both_layers() -> Res<()> {
    let layers = layers("# Doc\n\n## Layers\n\nText.\n\n1. `api`\n2. `fs`, `exec`\n3. `intel`\n\n## Next\n\n4. `x`\n")?;
    assert_eq!(layers.get("exec"), Some(&2));
    assert_eq!(layers.get("x"), None, "a later section is not part of the list");
    let krate = |name: &str, deps: &[(&'static str, &str)]| Crate {
        name: name.to_owned(),
        deps: deps.iter().map(|(kind, dep)| (*kind, (*dep).to_owned())).collect(),
    };
    let crates = [
        krate("api", &[]),
        krate("fs", &[("dependencies", "api"), ("dev-dependencies", "exec")]),
        krate("exec", &[("build-dependencies", "intel")]),
        krate("new", &[("dependencies", "api")]),
    ];
    assert_eq!(
        violations(&layers, &crates),
        [
            "`intel` is listed in ARCHITECTURE.md's Layers but there is no crate server/intel",
            "`fs` (layer 2) depends on `exec` (layer 2) in [dev-dependencies]: a crate may depend only on crates \
             of lower layers (ARCHITECTURE.md, Layers)",
            "`exec` (layer 2) depends on `intel` (layer 3) in [build-dependencies]: a crate may depend only on \
             crates of lower layers (ARCHITECTURE.md, Layers)",
            "`new` (server/new) is missing from ARCHITECTURE.md's Layers: add it to the lowest layer above \
             everything it depends on",
        ]
    );
    Ok(())
}

/// The crates that may depend on the `tools` facade: the binary, which offers every tool.
const FACADE_USERS: [&str; 1] = ["tandem"];

#[test]
fn only_the_binary_depends_on_the_tools_facade() -> Res<()> {
    let crates = crates(&repo_root().join("server"))?;
    let found: Vec<String> = crates
        .iter()
        .filter(|c| !FACADE_USERS.contains(&c.name.as_str()))
        .flat_map(|c| {
            c.deps.iter().filter(|(_, dep)| dep == "tools").map(move |(kind, _)| format!("`{}` in [{kind}]", c.name))
        })
        .collect();
    assert!(
        found.is_empty(),
        "these crates depend on the `tools` facade; depend on `tool-api` and the tool families they need \
         instead (ARCHITECTURE.md, Layers): {}",
        found.join(", ")
    );
    Ok(())
}
