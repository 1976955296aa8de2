//! Restricted mode: what a language server may do in a folder the person has not trusted, as
//! VS Code's restricted mode does. The server program itself comes from outside the workspace
//! (`tandem_tool_api::binaries`); this switches off what would make it run the repository's
//! own code:
//!
//! - rust-analyzer: build scripts (`cargo.buildScripts.enable`), proc macros
//!   (`procMacro.enable`) and `cargo check` on save (`checkOnSave`), in `initializationOptions`
//!   and in the answers to `workspace/configuration`; its diagnostics are then its own (no
//!   flycheck to wait for). Its `cargo` also gets `RUSTC_WRAPPER` and `RUSTC_WORKSPACE_WRAPPER`
//!   emptied, `RUSTC=rustc` and `CARGO_NET_OFFLINE=true`, so `cargo metadata` runs no wrapper,
//!   compiler or credential provider that the repository's `.cargo/config.toml` names; and it
//!   is not started when the repository's `rust-toolchain.toml` names a toolchain `path` in the
//!   workspace (rustup would run that toolchain's `cargo`).
//! - typescript-language-server: no TypeScript from the workspace (by default it takes
//!   `node_modules/typescript`, `.yarn/sdks` or `.vscode/pnpify` of the project before its own):
//!   `tsserver.path` names the TypeScript installed beside the server, or the server is not
//!   started when only the repository has one; no tsserver plugins but the person's own outside
//!   the workspace.
//! - pylsp: the plugins whose configuration can load the repository's code (pylint's
//!   `init-hook` and `load-plugins`, flake8's local plugins, mypy's plugins, rope's
//!   `.ropeproject/config.py`) are off, through `workspace/didChangeConfiguration`.
//! - clangd: no `--query-driver` (which would run the compiler a `compile_commands.json`
//!   names); clangd itself never loads compiler plugins (`-fplugin`, `-Xclang -load`) and runs
//!   no program unless `--query-driver` allows it.
//! - pyright, basedpyright and ruff run no code from the repository: nothing to switch off
//!   (pyright asks `python` for its search paths: the one on `PATH` outside the workspace).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tandem_tool_api::binaries::Binaries;

use crate::catalog::{DiagnosticsMode, ServerSpec};

/// Which server an entry runs, by its name or its program's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    RustAnalyzer,
    TypeScript,
    Pylsp,
    Clangd,
    /// pyright, basedpyright, ruff, and servers Tandem knows nothing of.
    Other,
}

/// The kind of `spec` (started as `program`).
pub(crate) fn kind(spec: &ServerSpec, program: Option<&Path>) -> Kind {
    let file = |p: &Path| p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    let names = [spec.name.clone(), file(Path::new(&spec.command[0])), program.map(file).unwrap_or_default()];
    let is = |prefix: &str| names.iter().any(|n| n == prefix || n.starts_with(&format!("{prefix}-")));
    if is("rust-analyzer") {
        Kind::RustAnalyzer
    } else if is("typescript-language-server") {
        Kind::TypeScript
    } else if is("pylsp") {
        Kind::Pylsp
    } else if is("clangd") {
        Kind::Clangd
    } else {
        Kind::Other
    }
}

/// What restricted mode switches off for a server of `kind`, in words.
pub(crate) fn switched_off(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::RustAnalyzer => &["build scripts", "proc macros", "cargo check on save"],
        Kind::TypeScript => &["the workspace's TypeScript version", "tsserver plugins from the workspace"],
        Kind::Pylsp => &["the pylint, flake8, mypy and rope plugins"],
        Kind::Clangd => &["compiler queries (--query-driver)"],
        Kind::Other => &[],
    }
}

/// The TypeScript SDK folders typescript-language-server looks for in the project and above.
const TYPESCRIPT_SDKS: &[&str] =
    &["node_modules/typescript/lib", ".vscode/pnpify/typescript/lib", ".yarn/sdks/typescript/lib"];

/// Restricts `spec` (started as `program` for the project at `project`) for an untrusted
/// workspace. `Err`: it cannot be started safely there (the message says why and what to do).
pub(crate) fn restrict(
    spec: &mut ServerSpec,
    program: &Path,
    project: &Path,
    binaries: &Binaries,
) -> Result<(), String> {
    let kind = kind(spec, Some(program));
    spec.restricted = switched_off(kind).iter().map(|s| (*s).to_owned()).collect();
    match kind {
        Kind::RustAnalyzer => {
            let overlay = json!({
                "cargo": { "buildScripts": { "enable": false } },
                "procMacro": { "enable": false },
                "checkOnSave": false,
            });
            let options = merged(spec.initialization_options.take(), overlay);
            spec.settings = json!({ "rust-analyzer": options.clone() });
            spec.initialization_options = Some(options);
            // No `cargo check`: the diagnostics are rust-analyzer's own, published per document.
            if spec.diagnostics == DiagnosticsMode::Flycheck {
                spec.diagnostics = DiagnosticsMode::FirstPublish;
            }
            // `cargo metadata` reads the repository's `.cargo/config.toml`: no wrapper or compiler
            // it names, and no fetching (a registry's credential provider is a program too). A
            // variable the person set already overrides the file, and stays.
            let person = |names: &[&str]| names.iter().any(|n| std::env::var_os(n).is_some());
            for (name, value, also) in [
                ("RUSTC_WRAPPER", "", "CARGO_BUILD_RUSTC_WRAPPER"),
                ("RUSTC_WORKSPACE_WRAPPER", "", "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"),
                ("RUSTC", "rustc", "CARGO_BUILD_RUSTC"),
                ("CARGO_NET_OFFLINE", "true", "CARGO_NET_OFFLINE"),
            ] {
                if !person(&[name, also]) {
                    spec.env.push((name.to_owned(), value.to_owned()));
                }
            }
            // rustup runs the toolchain a `rust-toolchain.toml` names by `path`.
            if std::env::var_os("RUSTUP_TOOLCHAIN").is_none()
                && let Some((file, path)) = toolchain_in_workspace(project, binaries)
            {
                return Err(format!(
                    "{} would run the toolchain that `{}` names in the repository (`{}`), and this folder is not trusted, so it is not started: a cloned repository's programs run only after `tandem trust`. If you trust this repository, run `tandem trust` in {} (or set RUSTUP_TOOLCHAIN to a toolchain of yours)",
                    spec.name,
                    file.strip_prefix(binaries.root()).unwrap_or(&file).display(),
                    path.display(),
                    binaries.root().display()
                ));
            }
        }
        Kind::TypeScript => {
            let mut options = match spec.initialization_options.take() {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            // The person's own plugins outside the workspace stay; any other goes.
            let plugins: Vec<Value> = options
                .get("plugins")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter(|p| {
                            p.get("location")
                                .and_then(Value::as_str)
                                .is_some_and(|l| Path::new(l).is_absolute() && !binaries.inside(Path::new(l)))
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            options.insert("plugins".into(), Value::Array(plugins));
            let mut tsserver = match options.remove("tsserver") {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            let outside = |key: &str, tsserver: &Map<String, Value>| {
                tsserver
                    .get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|p| Path::new(p).is_absolute() && !binaries.inside(Path::new(p)))
            };
            if !outside("fallbackPath", &tsserver) {
                tsserver.remove("fallbackPath");
            }
            if !outside("path", &tsserver) {
                tsserver.remove("path");
                match bundled_typescript(program, binaries) {
                    Some(path) => {
                        tsserver.insert("path".into(), Value::String(path.display().to_string()));
                    }
                    None => {
                        if let Some(sdk) = workspace_typescript(project, binaries) {
                            return Err(format!(
                                "{} would load the repository's own TypeScript (`{}`), and this folder is not trusted, so it is not started: a cloned repository's code runs only after `tandem trust`. Install TypeScript beside the server (npm i -g typescript-language-server typescript), or if you trust this repository, run `tandem trust` in {}",
                                spec.name,
                                sdk.display(),
                                binaries.root().display()
                            ));
                        }
                    }
                }
            }
            if !tsserver.is_empty() {
                options.insert("tsserver".into(), Value::Object(tsserver));
            }
            spec.initialization_options = Some(Value::Object(options));
        }
        Kind::Pylsp => {
            let off = json!({ "enabled": false });
            let plugins: Map<String, Value> =
                ["pylint", "flake8", "pylsp_mypy", "mypy", "rope_autoimport", "rope_completion", "rope_rename"]
                    .into_iter()
                    .map(|name| (name.to_owned(), off.clone()))
                    .collect();
            spec.settings = merged(Some(spec.settings.take()), json!({ "pylsp": { "plugins": plugins } }));
        }
        Kind::Clangd => {
            let mut skip_next = false;
            spec.command = std::mem::take(&mut spec.command)
                .into_iter()
                .enumerate()
                .filter(|(i, arg)| {
                    if std::mem::take(&mut skip_next) {
                        return false;
                    }
                    if *i > 0 && arg == "--query-driver" {
                        skip_next = true;
                        return false;
                    }
                    *i == 0 || !arg.starts_with("--query-driver=")
                })
                .map(|(_, arg)| arg)
                .collect();
        }
        Kind::Other => {}
    }
    Ok(())
}

/// What `workspace/configuration` answers for a trusted server: rust-analyzer's own section is
/// its `initializationOptions`, so both say the same. Without `cargo_check` rust-analyzer runs
/// no `cargo check` on save, and its diagnostics are its own, published per document.
pub(crate) fn trusted_settings(spec: &mut ServerSpec, program: &Path, cargo_check: bool) {
    if kind(spec, Some(program)) != Kind::RustAnalyzer {
        return;
    }
    if !cargo_check {
        let options = merged(spec.initialization_options.take(), json!({ "checkOnSave": false }));
        spec.initialization_options = Some(options);
        if spec.diagnostics == DiagnosticsMode::Flycheck {
            spec.diagnostics = DiagnosticsMode::FirstPublish;
        }
    }
    if let Some(options) = &spec.initialization_options {
        spec.settings = json!({ "rust-analyzer": options });
    }
}

/// The name a report of `spec`'s diagnostics gives: a server whose diagnostics come from a
/// build (rust-analyzer's `cargo check`) says so, since that build writes to the project.
pub(crate) fn described(spec: &ServerSpec) -> String {
    if spec.diagnostics == DiagnosticsMode::Flycheck {
        format!(
            "{}, which ran `cargo check`: it builds into the project's target folder; `[lsp] cargo_check = false` turns that off",
            spec.name
        )
    } else {
        spec.name.clone()
    }
}

/// `base` with `overlay` laid over it, object by object (the overlay wins).
fn merged(base: Option<Value>, overlay: Value) -> Value {
    match (base, overlay) {
        (Some(Value::Object(mut base)), Value::Object(overlay)) => {
            for (key, value) in overlay {
                let old = base.remove(&key);
                base.insert(key, merged(old, value));
            }
            Value::Object(base)
        }
        (_, overlay) => overlay,
    }
}

/// A `rust-toolchain.toml` at or above `project` in the workspace whose `path` (a custom
/// toolchain, which rustup runs) lies in the workspace.
fn toolchain_in_workspace(project: &Path, binaries: &Binaries) -> Option<(PathBuf, PathBuf)> {
    project.ancestors().take_while(|dir| dir.starts_with(binaries.root())).find_map(|dir| {
        let file = dir.join("rust-toolchain.toml");
        let text = std::fs::read_to_string(&file).ok()?;
        let path = text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| PathBuf::from(value.trim().trim_matches(|c| c == '"' || c == '\'')))
        })?;
        let path = if path.is_absolute() { path } else { dir.join(path) };
        binaries.inside(&path).then_some((file, path))
    })
}

/// The TypeScript installed beside typescript-language-server (`program`, symlinks resolved),
/// where Node would find it from the server's own folder, if it is outside the workspace.
fn bundled_typescript(program: &Path, binaries: &Binaries) -> Option<PathBuf> {
    let real = program.canonicalize().ok()?;
    real.ancestors()
        .skip(1)
        .filter(|dir| dir.file_name().is_none_or(|n| n != "node_modules"))
        .map(|dir| dir.join("node_modules/typescript/lib/tsserver.js"))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok())
        .filter(|found| !binaries.inside(found))
}

/// The TypeScript SDK typescript-language-server would take for the project at `project` (it
/// looks there and in every folder above), when that lies in the workspace.
fn workspace_typescript(project: &Path, binaries: &Binaries) -> Option<PathBuf> {
    let found = project
        .ancestors()
        .flat_map(|dir| TYPESCRIPT_SDKS.iter().map(move |sdk| dir.join(sdk)))
        .find(|lib| lib.exists())?;
    binaries.inside(&found).then_some(found)
}

/// A value at a `workspace/configuration` section (`rust-analyzer`, `python.analysis`) of
/// `settings`; `null` where there is none.
pub(crate) fn section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else { return Value::Null };
    section.split('.').try_fold(settings, |value, key| value.get(key)).cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use tandem_tool_api::trust::Trust;

    use super::*;
    use crate::catalog::builtins;

    fn spec(name: &str) -> ServerSpec {
        builtins().into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name}"))
    }

    #[test]
    fn a_trusted_rust_analyzer_checks_with_cargo_unless_told_not_to_and_says_so() {
        let program = Path::new("/usr/bin/rust-analyzer");
        let mut checking = spec("rust-analyzer");
        trusted_settings(&mut checking, program, true);
        assert_eq!(checking.diagnostics, DiagnosticsMode::Flycheck);
        assert!(described(&checking).contains("`cargo check`") && described(&checking).contains("cargo_check = false"));
        let mut own = spec("rust-analyzer");
        own.initialization_options = Some(json!({ "cargo": { "features": "all" } }));
        trusted_settings(&mut own, program, false);
        assert_eq!(own.diagnostics, DiagnosticsMode::FirstPublish);
        let options = own.initialization_options.clone().unwrap_or_default();
        assert_eq!((&options["checkOnSave"], &options["cargo"]["features"]), (&json!(false), &json!("all")));
        assert_eq!(own.settings["rust-analyzer"], options);
        assert_eq!(described(&own), "rust-analyzer");
        // Other servers are left as they are.
        let mut pyright = spec("pyright");
        trusted_settings(&mut pyright, Path::new("/usr/bin/pyright-langserver"), false);
        assert_eq!(described(&pyright), "pyright");
    }

    #[test]
    fn rust_analyzer_runs_no_build_scripts_proc_macros_or_checks() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let binaries = Binaries::new(dir.path(), Trust::Untrusted);
        let mut ra = spec("rust-analyzer");
        ra.initialization_options = Some(json!({ "cargo": { "features": "all", "buildScripts": { "enable": true } } }));
        restrict(&mut ra, Path::new("/usr/bin/rust-analyzer"), dir.path(), &binaries)?;
        let options = ra.initialization_options.clone().unwrap_or_default();
        assert_eq!(options["cargo"]["buildScripts"]["enable"], false);
        assert_eq!(options["cargo"]["features"], "all", "the person's other settings stay");
        assert_eq!((&options["procMacro"]["enable"], &options["checkOnSave"]), (&json!(false), &json!(false)));
        assert_eq!(section(&ra.settings, Some("rust-analyzer")), options, "configuration answers agree");
        assert_eq!(section(&ra.settings, Some("rust-analyzer.procMacro.enable")), false);
        assert_eq!(section(&ra.settings, Some("python")), Value::Null);
        assert_eq!(ra.diagnostics, DiagnosticsMode::FirstPublish);
        assert!(ra.quiescence, "queries still wait for the project to load");
        assert_eq!(ra.restricted, ["build scripts", "proc macros", "cargo check on save"]);
        if std::env::var_os("RUSTC_WRAPPER").is_none() && std::env::var_os("CARGO_BUILD_RUSTC_WRAPPER").is_none() {
            assert!(ra.env.contains(&("RUSTC_WRAPPER".to_owned(), String::new())), "{:?}", ra.env);
        }

        // A toolchain the repository ships, which rustup would run: not started.
        if std::env::var_os("RUSTUP_TOOLCHAIN").is_none() {
            let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
            let binaries = Binaries::new(&root, Trust::Untrusted);
            let toolchain = format!("[toolchain]\npath = \"{}\"\n", root.join("tc").display());
            std::fs::write(root.join("rust-toolchain.toml"), toolchain).map_err(|e| e.to_string())?;
            let err = restrict(&mut spec("rust-analyzer"), Path::new("/usr/bin/rust-analyzer"), &root, &binaries);
            let err = err.err().unwrap_or_default();
            assert!(err.contains("rust-toolchain.toml") && err.contains("tandem trust"), "{err}");
            std::fs::write(root.join("rust-toolchain.toml"), "[toolchain]\nchannel = \"1.80\"\n")
                .map_err(|e| e.to_string())?;
            restrict(&mut spec("rust-analyzer"), Path::new("/usr/bin/rust-analyzer"), &root, &binaries)?;
        }
        Ok(())
    }

    #[test]
    fn typescript_takes_the_typescript_beside_the_server_and_no_plugins_from_the_workspace() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (ws, global) = (dir.path().join("ws"), dir.path().join("global"));
        let cli = global.join("node_modules/typescript-language-server/lib/cli.mjs");
        for file in [
            &cli,
            &global.join("node_modules/typescript/lib/tsserver.js"),
            &ws.join("node_modules/typescript/lib/tsserver.js"),
        ] {
            std::fs::create_dir_all(file.parent().unwrap_or(dir.path()))?;
            std::fs::write(file, "")?;
        }
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755))?;
        std::fs::create_dir_all(global.join("bin"))?;
        symlink(&cli, global.join("bin/typescript-language-server"))?;
        let binaries = Binaries::new(&ws, Trust::Untrusted);
        let mut ts = spec("typescript-language-server");
        ts.initialization_options = Some(json!({
            "plugins": [
                { "name": "evil", "location": ws.join("node_modules/evil").display().to_string() },
                { "name": "rel", "location": "node_modules/rel" },
                { "name": "mine", "location": global.join("node_modules/mine").display().to_string() },
            ],
            "tsserver": { "path": ws.join("node_modules/typescript/lib").display().to_string() },
            "preferences": { "quotePreference": "single" },
        }));
        restrict(&mut ts, &global.join("bin/typescript-language-server"), &ws, &binaries)
            .map_err(std::io::Error::other)?;
        let options = ts.initialization_options.clone().unwrap_or_default();
        let tsserver = global.canonicalize()?.join("node_modules/typescript/lib/tsserver.js");
        assert_eq!(options["tsserver"]["path"], tsserver.display().to_string());
        let plugins: Vec<&str> =
            options["plugins"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(plugins, ["mine"]);
        assert_eq!(options["preferences"]["quotePreference"], "single");

        // No TypeScript beside the server, one in the repository: not started.
        std::fs::remove_dir_all(global.join("node_modules/typescript"))?;
        let mut ts = spec("typescript-language-server");
        let err = restrict(&mut ts, &global.join("bin/typescript-language-server"), &ws, &binaries);
        let err = err.err().unwrap_or_default();
        assert!(err.contains("repository's own TypeScript") && err.contains("tandem trust"), "{err}");
        // Neither: its default is safe.
        std::fs::remove_dir_all(ws.join("node_modules"))?;
        let mut ts = spec("typescript-language-server");
        restrict(&mut ts, &global.join("bin/typescript-language-server"), &ws, &binaries)
            .map_err(std::io::Error::other)?;
        Ok(())
    }

    #[test]
    fn every_other_server_is_restricted_where_it_has_something_to_restrict() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let binaries = Binaries::new(dir.path(), Trust::Untrusted);
        let mut clangd = spec("clangd");
        clangd.command = ["clangd", "--query-driver=**", "--query-driver", "/x/**", "--background-index"]
            .map(str::to_owned)
            .to_vec();
        restrict(&mut clangd, Path::new("/usr/bin/clangd"), dir.path(), &binaries)?;
        assert_eq!(clangd.command, ["clangd", "--background-index"]);
        let mut pylsp = spec("pylsp");
        restrict(&mut pylsp, Path::new("/usr/bin/pylsp"), dir.path(), &binaries)?;
        assert_eq!(section(&pylsp.settings, Some("pylsp.plugins.pylint.enabled")), false);
        assert_eq!(section(&pylsp.settings, Some("pylsp.plugins.rope_completion.enabled")), false);
        for name in ["pyright", "basedpyright", "ruff"] {
            let mut other = spec(name);
            let before = format!("{other:?}");
            restrict(&mut other, Path::new("/usr/bin/x"), dir.path(), &binaries)?;
            assert_eq!(format!("{other:?}"), before, "{name} runs no code from the repository");
        }
        // A configured entry is known by its program.
        let mut custom = spec("pyright");
        custom.name = "ra".into();
        custom.command = vec!["/opt/rust-analyzer".into()];
        restrict(&mut custom, Path::new("/opt/rust-analyzer"), dir.path(), &binaries)?;
        assert_eq!(custom.initialization_options.unwrap_or_default()["checkOnSave"], false);
        Ok(())
    }
}
