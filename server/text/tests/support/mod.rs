//! What the corpus tests share: the cargo registry's unpacked crates on this machine, paired by
//! consecutive versions of one crate, and the files below a folder.

#![allow(dead_code)] // each test binary uses its own part

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `~/.cargo/registry/src` (or under `CARGO_HOME`).
pub fn registry_src() -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    cargo_home.map(|home| home.join("registry").join("src"))
}

/// `1.2.3-rc.1` → comparable numbers and the pre-release (`~`, after every pre-release, for none);
/// `None` when it is not a version.
pub fn version_key(version: &str) -> Option<(Vec<u64>, String)> {
    let (core, pre) = version.split_once('-').unwrap_or((version, "~"));
    let numbers: Option<Vec<u64>> = core.split('.').map(|n| n.parse().ok()).collect();
    numbers.filter(|n| n.len() == 3).map(|n| (n, pre.to_owned()))
}

/// The `name-1.2.3` folders under `src` of every crate present in more than one version, as
/// consecutive pairs (pre-releases left out with `releases_only`).
pub fn version_pairs(src: &Path, releases_only: bool) -> Vec<(PathBuf, PathBuf)> {
    let mut versions: BTreeMap<String, Vec<(Vec<u64>, String, PathBuf)>> = BTreeMap::new();
    for index in std::fs::read_dir(src).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
            let dir_name = krate.file_name().to_string_lossy().into_owned();
            // `name-1.2.3`: the version starts after the first `-` whose rest parses as one
            // (names have dashes, pre-releases too).
            let found = dir_name.match_indices('-').find_map(|(at, _)| Some((at, version_key(&dir_name[at + 1..])?)));
            if let Some((at, (numbers, pre))) = found
                && !(releases_only && pre != "~")
            {
                versions.entry(dir_name[..at].to_owned()).or_default().push((numbers, pre, krate.path()));
            }
        }
    }
    let mut pairs = Vec::new();
    for list in versions.values_mut() {
        list.sort();
        for window in list.windows(2) {
            pairs.push((window[0].2.clone(), window[1].2.clone()));
        }
    }
    pairs
}

/// The regular files below `root` (symbolic links not followed), relative to it, sorted.
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind) if kind.is_file() => {
                    if let Ok(relative) = path.strip_prefix(root) {
                        out.push(relative.to_path_buf());
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}
