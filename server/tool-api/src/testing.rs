//! Test support shared by the tools' fixture tests (behind the `testing` feature, which the tool
//! crates turn on in their dev-dependencies): a fixture (files under `//- path` headers, `<CR>`,
//! `<NUL>` and `<NOEOL>` markers) written to a temporary workspace, a registry of the tools under
//! test to call, and results rendered for snapshots; and files written from (path, text) pairs,
//! for the tests of the crates that read a workspace.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use expect_test::Expect;
use serde_json::Value;
use tandem_protocol::ToolResult;
use tandem_text::BufferCache;

use crate::{Registry, Tool, ToolConfig, ToolContext, Workspace};

/// Writes the fixture's files under `root`.
pub fn write_fixture(root: &Path, fixture: &str) {
    let indent =
        fixture.lines().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let mut current: Option<(String, String)> = None;
    let mut files = Vec::new();
    for line in fixture.lines() {
        if let Some(path) = line.trim_start().strip_prefix("//- ") {
            files.extend(current.take());
            current = Some((path.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = &mut current {
            text.push_str(line.get(indent..).unwrap_or(line.trim_start()));
            text.push('\n');
        }
    }
    files.extend(current);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(root)).ok();
        std::fs::write(path, text.replace("<CR>", "\r").replace("<NUL>", "\0").replace("<NOEOL>\n", "")).ok();
    }
}

/// Writes `files` (path under `root`, text), creating their folders.
pub fn write_files(root: &Path, files: &[(&str, &str)]) -> std::io::Result<()> {
    for (rel, text) in files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// A result as a snapshot shows it: title and output (or the error), then the metadata that
/// does not change between runs; the workspace root is shown as `$ROOT`.
pub fn render(result: &ToolResult, root: &Path) -> String {
    let mut out = match &result.error {
        Some(error) => format!("error: {error}\n"),
        None => format!("title: {}\n{}\n", result.title, result.output.trim_end()),
    };
    let meta: Vec<String> = result
        .metadata
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "durationMs" | "hash"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !meta.is_empty() {
        out.push_str(&format!("meta: {}\n", meta.join(" ")));
    }
    out.replace(&root.display().to_string(), "$ROOT")
}

/// A temporary workspace with a fixture, and a registry of the tools under test.
pub struct Harness {
    _dir: tempfile::TempDir,
    /// The context of every call (the person's, in the temporary workspace).
    pub ctx: ToolContext,
    /// The tools under test, under the default configuration.
    pub registry: Registry,
}

impl Harness {
    /// Writes `fixture` to a new temporary workspace and registers `tools`.
    pub fn new(fixture: &str, tools: Vec<Arc<dyn Tool>>) -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        write_fixture(dir.path(), fixture);
        let workspace = Workspace::new(dir.path(), &[]).unwrap_or_else(|e| panic!("{e}"));
        let ctx = ToolContext::new(Arc::new(workspace), Arc::new(BufferCache::new()));
        Self { _dir: dir, ctx, registry: Registry::new(tools, ToolConfig::default()) }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.ctx.workspace.root()
    }

    /// Runs the call on a runtime of its own; an unknown tool becomes an error result.
    pub fn call(&self, name: &str, args: Value) -> ToolResult {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
        let runtime = runtime.unwrap_or_else(|e| panic!("{e}"));
        runtime
            .block_on(self.registry.call(name, args, self.ctx.clone()))
            .unwrap_or_else(|e| ToolResult { error: Some(format!("CallError: {e}")), ..Default::default() })
    }

    /// Runs the call and compares its rendering with `expect`.
    pub fn check_call(&self, name: &str, args: Value, expect: Expect) {
        let result = self.call(name, args);
        expect.assert_eq(&render(&result, self.root()));
    }

    /// Sets the modification time of `path` to `secs` seconds after the epoch.
    pub fn touch(&self, path: &str, secs: u64) {
        let file = std::fs::File::options().write(true).open(self.root().join(path));
        let file = file.unwrap_or_else(|e| panic!("{path}: {e}"));
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)).unwrap_or_else(|e| panic!("{e}"));
    }
}
