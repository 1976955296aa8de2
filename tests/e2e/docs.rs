//! `docs/config.md` names every `TANDEM_*` variable the code reads and every editor setting:
//! the code and the editors' manifests are scanned, so a new variable or setting fails here
//! until it is documented.

use std::path::Path;

use crate::support::{Res, repo_root};

fn config_docs() -> Res<String> {
    std::fs::read_to_string(repo_root().join("docs/config.md")).map_err(|e| format!("docs/config.md: {e}"))
}

/// Source files under `dir` (skipping build output and installed packages).
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "out" | "dist" | ".git") {
                sources(&path, out);
            }
        } else if [".rs", ".ts", ".mjs", ".js", ".lua", ".py", ".sh"].iter().any(|ext| name.ends_with(ext))
            || name == "run"
        {
            out.push(path);
        }
    }
}

/// Every `TANDEM_[A-Z0-9_]*` name in `text` (a trailing `_`, as in `TANDEM_FEATURE_<GROUP>`, is
/// not part of the name).
fn variables(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("TANDEM_") {
        let tail = &rest[at..];
        let len =
            tail.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).unwrap_or(tail.len());
        let name = tail[..len].trim_end_matches('_');
        if name.len() > "TANDEM".len() {
            found.push(name.to_owned());
        }
        rest = &tail[len.max(1)..];
    }
    found
}

#[test]
fn every_tandem_variable_in_the_code_is_in_docs_config_md() -> Res<()> {
    let root = repo_root();
    let docs = config_docs()?;
    let mut files = Vec::new();
    for dir in ["server", "tests", "editors", ".ci"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found too few source files: {}", files.len());
    let mut missing = std::collections::BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        for name in variables(&text) {
            // `TANDEM_FEATURE_FS`, `TANDEM_FEATURE_EXEC`, …: one documented pattern.
            let documented_as =
                if name.starts_with("TANDEM_FEATURE") { "TANDEM_FEATURE_<GROUP>".to_owned() } else { name };
            if !docs.contains(&format!("`{documented_as}`")) {
                missing.entry(documented_as.clone()).or_insert_with(|| file.display().to_string());
            }
            seen.insert(documented_as);
        }
    }
    // The scan finds what it must: these are read by the code.
    for known in ["TANDEM_LOG", "TANDEM_MODEL", "TANDEM_TRUST_WORKSPACE", "TANDEM_FEATURE_<GROUP>", "TANDEM_TEST_BIN"] {
        assert!(seen.contains(known), "the scan missed {known}: {seen:?}");
    }
    assert!(missing.is_empty(), "variables not in docs/config.md (and a file using each): {missing:#?}");
    Ok(())
}

#[test]
fn every_vscode_setting_is_in_docs_config_md() -> Res<()> {
    let docs = config_docs()?;
    let text = std::fs::read_to_string(repo_root().join("editors/vscode/package.json")).map_err(|e| e.to_string())?;
    let manifest: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let configuration = &manifest["contributes"]["configuration"];
    let sections = configuration.as_array().cloned().unwrap_or_else(|| vec![configuration.clone()]);
    let settings: Vec<String> = sections
        .iter()
        .filter_map(|section| section["properties"].as_object())
        .flat_map(|properties| properties.keys().cloned())
        .collect();
    assert!(settings.len() >= 5, "too few settings found: {settings:?}");
    let missing: Vec<&String> = settings.iter().filter(|s| !docs.contains(&format!("| `{s}` |"))).collect();
    assert!(missing.is_empty(), "VS Code settings not in docs/config.md: {missing:?}");
    Ok(())
}

#[test]
fn every_neovim_setup_option_is_in_docs_config_md() -> Res<()> {
    let docs = config_docs()?;
    let neovim = docs.split_once("### Neovim").map(|(_, rest)| rest).ok_or("no Neovim section")?;
    let lua =
        std::fs::read_to_string(repo_root().join("editors/nvim/lua/tandem/config.lua")).map_err(|e| e.to_string())?;
    // The options setup() accepts: `local known = { cmd = 1, provider = 1, ... }`.
    let known =
        lua.lines().find(|l| l.trim_start().starts_with("local known = {")).ok_or("no `local known` in config.lua")?;
    let options: Vec<&str> = known
        .split(['{', '}', ','])
        .filter_map(|part| part.split_once('=').map(|(name, _)| name.trim()))
        .filter(|name| !name.is_empty() && *name != "local known")
        .collect();
    assert!(options.len() >= 6, "too few options found: {options:?}");
    let missing: Vec<&&str> = options.iter().filter(|o| !neovim.contains(&format!("| `{o}` |"))).collect();
    assert!(missing.is_empty(), "Neovim setup() options not in docs/config.md: {missing:?}");
    Ok(())
}
