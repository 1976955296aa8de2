//! A cloned repository's programs never run before trust. The clone ships executables under
//! every name and place Tandem looks for a program (`.venv/bin/pyright-langserver`,
//! `node_modules/.bin/typescript-language-server`, `.venv/bin/rust-analyzer`, a `bin/` that
//! `PATH` names, relative MCP commands), each writing a marker outside the workspace when run:
//! `tandem tool lsp`, the `lsp` door, a review preview, `tandem doctor` and MCP servers run none
//! of them while the folder is untrusted. Once trusted, a program runs pinned to its content;
//! changed, it is refused until the person trusts the folder again. Until trust, language
//! servers run restricted (rust-analyzer without build scripts, proc macros or check on save).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{PermissionReply, Res, Sidecar, repo_root, tandem_bin};

/// Every language-server program name of the catalog.
const SERVERS: &[&str] = &[
    "pyright-langserver",
    "basedpyright-langserver",
    "pylsp",
    "ruff",
    "typescript-language-server",
    "rust-analyzer",
    "clangd",
];

/// A malicious clone, the folder outside it where markers land, and the person's own folders.
struct Clone {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    config_home: PathBuf,
    home: PathBuf,
    /// `PATH` outside the workspace: holds nothing the clone could name.
    clean_bin: PathBuf,
}

fn io(e: std::io::Error) -> String {
    e.to_string()
}

/// The real Python interpreter (not a shim that would need its own `PATH`).
fn python() -> Res<String> {
    let out = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().map_err(io)?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if exe.is_empty() { Err("python3 is needed".into()) } else { Ok(exe) }
}

/// An executable that appends `name` to the marker outside and then serves LSP (a fixture
/// server that publishes empty diagnostics for opened files).
fn evil(clone: &Clone, path: &Path, name: &str) -> Res<()> {
    use std::os::unix::fs::PermissionsExt;
    let server = repo_root().join("tests/fixtures/loading_server.py");
    let script = format!(
        "#!/bin/sh\necho {name} >> '{}'\nexec '{}' '{}' loaded\n",
        clone.outside.join("ran").display(),
        python()?,
        server.display()
    );
    std::fs::create_dir_all(path.parent().unwrap_or(&clone.root)).map_err(io)?;
    std::fs::write(path, script).map_err(io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(io)
}

fn clone() -> Res<Clone> {
    let dir = tempfile::tempdir().map_err(io)?;
    let root = dir.path().join("clone");
    let (outside, config_home, home, clean_bin) =
        (dir.path().join("outside"), dir.path().join("config"), dir.path().join("home"), dir.path().join("bin"));
    for d in [&root.join(".git"), &root.join("src"), &outside, &config_home, &home, &clean_bin] {
        std::fs::create_dir_all(d).map_err(io)?;
    }
    let root = root.canonicalize().map_err(io)?;
    let clone = Clone { _dir: dir, root, outside, config_home, home, clean_bin };
    for (file, text) in [
        ("main.py", "def main():\n    return 1\n"),
        ("index.ts", "export const x: number = 1;\n"),
        ("Cargo.toml", "[package]\nname = \"clone\"\nversion = \"0.1.0\"\n"),
        ("src/lib.rs", "pub fn f() -> i32 { 1 }\n"),
        ("a.c", "int main(void) { return 0; }\n"),
    ] {
        std::fs::write(clone.root.join(file), text).map_err(io)?;
    }
    for name in SERVERS {
        for dir in ["node_modules/.bin", ".venv/bin", "bin", "vendor/bin"] {
            evil(&clone, &clone.root.join(dir).join(name), &format!("{dir}/{name}"))?;
        }
    }
    for name in ["tools/mcp-server", "bin/mcp-server", ".venv/bin/mcp-server"] {
        evil(&clone, &clone.root.join(name), name)?;
    }
    Ok(clone)
}

impl Clone {
    /// `PATH` as a person in the clone might have it: the repository's own `bin`, relative and
    /// absolute, and its `node_modules/.bin`, around a folder outside that holds nothing.
    fn path(&self) -> String {
        format!(
            "{}:bin:./vendor/bin:{}:{}/node_modules/.bin",
            self.root.join("bin").display(),
            self.clean_bin.display(),
            self.root.display()
        )
    }

    fn tandem(&self, trusted: bool, args: &[&str]) -> Res<(i32, Value, String, String)> {
        let out = Command::new(tandem_bin())
            .args(args)
            .current_dir(&self.root)
            .env_remove("TANDEM_PROFILE")
            .env_remove("TANDEM_MODE")
            .env_remove("TANDEM_MCP_CONFIG")
            .env("TANDEM_TRUST_WORKSPACE", if trusted { "1" } else { "0" })
            .env("XDG_CONFIG_HOME", &self.config_home)
            .env("HOME", &self.home)
            .env("PATH", self.path())
            .output()
            .map_err(io)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        Ok((out.status.code().unwrap_or(-1), json, stdout, String::from_utf8_lossy(&out.stderr).into_owned()))
    }

    /// What ran, one line per start.
    fn ran(&self) -> Vec<String> {
        std::fs::read_to_string(self.outside.join("ran")).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    fn lsp(&self, trusted: bool, operation: &str, file: &str) -> Res<Value> {
        let args = json!({ "operation": operation, "file_path": file }).to_string();
        Ok(self.tandem(trusted, &["tool", "lsp", &args])?.1)
    }
}

#[test]
fn an_untrusted_clone_runs_none_of_its_programs_through_the_lsp_tool_the_doctor_or_mcp() -> Res<()> {
    let c = clone()?;
    // The person's own MCP servers, named relative to the workspace or found on a PATH in it.
    let mcp = json!({ "mcpServers": {
        "relative": { "command": "./tools/mcp-server" },
        "venv": { "command": ".venv/bin/mcp-server" },
        "on-path": { "command": "mcp-server" },
        "absolute": { "command": c.root.join("tools/mcp-server").display().to_string() },
        "from-cwd": { "command": "./mcp-server", "cwd": "tools" },
    }});
    std::fs::create_dir_all(c.home.join(".config/tandem")).map_err(io)?;
    std::fs::write(c.home.join(".config/tandem/mcp.json"), mcp.to_string()).map_err(io)?;

    for file in ["main.py", "index.ts", "src/lib.rs", "a.c"] {
        let result = c.lsp(false, "diagnostics", file)?;
        assert_eq!(c.ran(), Vec::<String>::new(), "`lsp` on {file} ran the clone's program: {result}");
        // Said in the error, or in the diagnostics report (which is not an error).
        let said = result.to_string();
        assert!(
            said.contains("found only in the repository")
                && said.contains("not trusted")
                && said.contains("tandem trust"),
            "{file}: {result}"
        );
    }
    let (code, _, doctor, stderr) = c.tandem(false, &["doctor"])?;
    assert_eq!(code, 0, "{doctor} {stderr}");
    assert_eq!(c.ran(), Vec::<String>::new(), "the doctor ran the clone's program: {doctor}");
    for name in ["pyright", "typescript-language-server", "rust-analyzer", "clangd"] {
        let line = doctor.lines().find(|l| l.trim_start().starts_with(&format!("{name} "))).unwrap_or_default();
        assert!(line.contains("found in the repository; runs after `tandem trust`"), "{name}: {doctor}");
    }
    for name in ["relative", "venv", "on-path", "absolute", "from-cwd"] {
        let line = doctor.lines().find(|l| l.trim_start().starts_with(&format!("{name}:"))).unwrap_or_default();
        assert!(line.contains("not trusted") && line.contains("tandem trust"), "{name}: {doctor}");
    }
    let (_, tools, _, _) = c.tandem(false, &["tools"])?;
    assert_eq!(c.ran(), Vec::<String>::new(), "listing the tools started the clone's MCP server: {tools}");

    // The editor's door, too.
    let path = c.path();
    let config_home = c.config_home.display().to_string();
    let home = c.home.display().to_string();
    let mut sidecar = Sidecar::spawn(
        &c.root,
        &[
            ("TANDEM_TRUST_WORKSPACE", "0"),
            ("XDG_CONFIG_HOME", config_home.as_str()),
            ("HOME", home.as_str()),
            ("PATH", path.as_str()),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    let result = sidecar.call("lsp", json!({ "operation": "document_symbols", "file_path": "main.py" }))?;
    sidecar.shutdown()?;
    assert_eq!(c.ran(), Vec::<String>::new(), "the lsp door ran the clone's program: {result}");
    assert!(result["error"].as_str().is_some_and(|e| e.contains("tandem trust")), "{result}");
    Ok(())
}

#[test]
fn a_review_preview_never_starts_the_clones_language_server() -> Res<()> {
    let c = clone()?;
    let edit = json!({ "file_path": "index.ts", "old_string": "= 1;", "new_string": "= 2;" });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", edit), Turn::reply("Left it.")]);
    let (path, base) = (c.path(), provider.base_url());
    let (config_home, home) = (c.config_home.display().to_string(), c.home.display().to_string());
    let mut sidecar = Sidecar::spawn(
        &c.root,
        &[
            ("TANDEM_TRUST_WORKSPACE", "0"),
            ("XDG_CONFIG_HOME", config_home.as_str()),
            ("HOME", home.as_str()),
            ("PATH", path.as_str()),
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "default"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
    let session = sidecar.request("tandem/session/new", json!({}))?;
    let session = session["sessionId"].as_str().unwrap_or_default().to_owned();
    sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "make it 2" }] }),
    )?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    sidecar.shutdown()?;
    assert_eq!(asks.len(), 1, "the person was asked: {asks:#?}");
    assert_eq!(c.ran(), Vec::<String>::new(), "the preview ran the clone's server before the person answered");
    Ok(())
}

#[test]
fn once_trusted_a_clones_server_runs_pinned_and_not_after_it_changes_until_trusted_again() -> Res<()> {
    let c = clone()?;
    // Only the `.venv` one: the others would be found first once trusted.
    for dir in ["node_modules/.bin", "bin", "vendor/bin"] {
        std::fs::remove_file(c.root.join(dir).join("pyright-langserver")).map_err(io)?;
    }
    let server = c.root.join(".venv/bin/pyright-langserver");
    c.lsp(false, "document_symbols", "main.py")?;
    assert_eq!(c.ran(), Vec::<String>::new());

    let (code, _, _, said) = c.tandem(false, &["trust"])?;
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("Pinned its programs") && said.contains(".venv/bin/pyright-langserver"), "{said}");
    let pins = std::fs::read_to_string(c.config_home.join("tandem/pinned-binaries")).map_err(io)?;
    assert!(pins.contains(&server.display().to_string()), "{pins}");

    // Trusted and as pinned: it runs.
    let result = c.lsp(false, "document_symbols", "main.py")?;
    assert!(result["error"].is_null(), "{result}");
    assert_eq!(c.ran(), [".venv/bin/pyright-langserver"], "{result}");

    // Changed (as a command the agent ran could change it): refused until trusted again.
    let text = std::fs::read_to_string(&server).map_err(io)?;
    std::fs::write(&server, format!("{text}# changed\n")).map_err(io)?;
    let result = c.lsp(false, "document_symbols", "main.py")?;
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains("changed since it was pinned") && error.contains("`tandem trust`"), "{result}");
    assert_eq!(c.ran().len(), 1, "the changed program ran");
    let (_, _, doctor, _) = c.tandem(false, &["doctor"])?;
    assert!(doctor.contains("changed since it was pinned"), "{doctor}");
    assert_eq!(c.ran().len(), 1, "the doctor ran it");

    let (code, _, _, said) = c.tandem(false, &["trust"])?;
    assert_eq!(code, 0, "{said}");
    let result = c.lsp(false, "document_symbols", "main.py")?;
    assert!(result["error"].is_null(), "{result}");
    assert_eq!(c.ran().len(), 2, "{result}");

    // Trusted for one process (no `tandem trust`): pinned on first use, refused once changed.
    std::fs::remove_file(&server).map_err(io)?;
    c.tandem(false, &["trust", "--revoke"])?;
    let pins = std::fs::read_to_string(c.config_home.join("tandem/pinned-binaries")).map_err(io)?;
    assert!(!pins.contains(&c.root.display().to_string()), "revoking drops the pins: {pins}");
    let result = c.lsp(true, "document_symbols", "main.py")?;
    assert_eq!(c.ran().last().map(String::as_str), Some("node_modules/.bin/basedpyright-langserver"), "{result}");
    let based = c.root.join("node_modules/.bin/basedpyright-langserver");
    std::fs::write(&based, "#!/bin/sh\necho again >> /dev/null\n").map_err(io)?;
    let result = c.lsp(true, "document_symbols", "main.py")?;
    assert!(result["error"].as_str().is_some_and(|e| e.contains("changed since it was pinned")), "{result}");
    assert_eq!(c.ran().len(), 3);
    Ok(())
}

#[test]
fn language_servers_run_restricted_until_the_folder_is_trusted() -> Res<()> {
    let c = clone()?;
    let record = c.outside.join("started.jsonl");
    let script = repo_root().join("tests/fixtures/recording_server.py");
    let command = json!([python()?, script.display().to_string(), record.display().to_string()]);
    std::fs::create_dir_all(c.config_home.join("tandem")).map_err(io)?;
    std::fs::write(
        c.config_home.join("tandem/config.toml"),
        format!(
            "[lsp.rust-analyzer]\ncommand = {command}\ninitialization_options = {{ cargo = {{ features = \"all\" }} }}\n"
        ),
    )
    .map_err(io)?;
    let started = |key: &str| -> Vec<Value> {
        std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v.get(key).cloned())
            .collect()
    };

    let result = c.lsp(false, "document_symbols", "src/lib.rs")?;
    assert!(result["error"].is_null(), "{result}");
    let options = started("initializationOptions").pop().unwrap_or_default();
    assert_eq!(options["cargo"]["buildScripts"]["enable"], false, "{options}");
    assert_eq!((&options["procMacro"]["enable"], &options["checkOnSave"]), (&json!(false), &json!(false)), "{options}");
    assert_eq!(options["cargo"]["features"], "all", "the person's settings stay: {options}");
    let answered = started("configuration").pop().unwrap_or_default();
    assert_eq!(answered[0], options, "workspace/configuration says the same");
    let note = result["metadata"]["restricted"].as_str().unwrap_or_default();
    assert!(note.contains("build scripts") && note.contains("tandem trust"), "{result}");
    assert!(result["output"].as_str().is_some_and(|o| o.contains("restricted until `tandem trust`")), "{result}");
    let (_, _, doctor, _) = c.tandem(false, &["doctor"])?;
    let line = doctor.lines().find(|l| l.trim_start().starts_with("rust-analyzer ")).unwrap_or_default();
    assert!(
        line.contains("restricted until `tandem trust`: build scripts, proc macros, cargo check on save off"),
        "{doctor}"
    );

    std::fs::remove_file(&record).map_err(io)?;
    let result = c.lsp(true, "document_symbols", "src/lib.rs")?;
    assert!(result["error"].is_null() && result["metadata"].get("restricted").is_none(), "{result}");
    let options = started("initializationOptions").pop().unwrap_or_default();
    assert_eq!(options, json!({ "cargo": { "features": "all" } }), "trusted: as configured");
    Ok(())
}

/// The real typescript-language-server, given a clone that ships its own TypeScript (whose
/// `tsserver.js` writes the marker) and a tsserver plugin named in its `tsconfig.json`.
#[test]
fn typescript_runs_on_its_own_typescript_with_no_plugin_from_the_clone_until_trust() -> Res<()> {
    crate::lsp_proxy::require("typescript-language-server", "npm install (package.json devDependencies)")?;
    let c = clone()?;
    for dir in ["node_modules", ".venv", "bin", "vendor"] {
        std::fs::remove_dir_all(c.root.join(dir)).map_err(io)?;
    }
    let ran = c.outside.join("ran").display().to_string();
    let files = [
        ("node_modules/typescript/package.json", r#"{"name":"typescript","version":"5.9.3"}"#.to_owned()),
        (
            "node_modules/typescript/lib/tsserver.js",
            format!("require('fs').appendFileSync({ran:?}, 'workspace typescript\\n'); process.exit(1);\n"),
        ),
        ("node_modules/evil-plugin/package.json", r#"{"name":"evil-plugin","main":"index.js"}"#.to_owned()),
        (
            "node_modules/evil-plugin/index.js",
            format!(
                "require('fs').appendFileSync({ran:?}, 'plugin\\n');\nmodule.exports = () => ({{ create: (info) => info.languageService }});\n"
            ),
        ),
        ("tsconfig.json", r#"{"compilerOptions":{"plugins":[{"name":"evil-plugin"}]}}"#.to_owned()),
        ("package.json", r#"{"name":"clone"}"#.to_owned()),
    ];
    for (file, text) in files {
        std::fs::create_dir_all(c.root.join(file).parent().unwrap_or(&c.root)).map_err(io)?;
        std::fs::write(c.root.join(file), text).map_err(io)?;
    }
    let lsp = |trusted: bool| -> Res<Value> {
        let args = json!({ "operation": "document_symbols", "file_path": "index.ts" }).to_string();
        let out = Command::new(tandem_bin())
            .args(["tool", "lsp", &args])
            .current_dir(&c.root)
            .env("TANDEM_TRUST_WORKSPACE", if trusted { "1" } else { "0" })
            .env("XDG_CONFIG_HOME", &c.config_home)
            .env("HOME", &c.home)
            .env("PATH", crate::lsp_proxy::server_path())
            .output()
            .map_err(io)?;
        Ok(serde_json::from_slice(&out.stdout).unwrap_or(Value::Null))
    };
    let result = lsp(false)?;
    assert_eq!(c.ran(), Vec::<String>::new(), "the clone's TypeScript or plugin ran: {result}");
    assert!(result["error"].is_null(), "it answers, on its own TypeScript: {result}");
    let note = result["metadata"]["restricted"].as_str().unwrap_or_default();
    assert!(note.contains("TypeScript") && note.contains("plugins"), "{result}");

    // Trusted, the project's TypeScript is the one used (as editors do).
    lsp(true)?;
    assert!(c.ran().contains(&"workspace typescript".to_owned()), "{:?}", c.ran());
    Ok(())
}
