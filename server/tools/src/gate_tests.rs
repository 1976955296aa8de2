//! The gate, checked over the whole registry: every built-in tool whose declared effect changes
//! anything asks the call's approver before it changes anything, and changes nothing when the
//! person says no. A new tool that changes things fails here until it has a sample call, so
//! no tool can forget to ask.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tandem_protocol::DiagnosticsPreview;
use tandem_text::{BufferCache, Position};

use crate::intel::{
    CallDirection, CallItem, DiagnosticsReport, IntelError, Location, Symbol, TextRange, TextReplacement,
};
use crate::{
    Approver, ChangeDecision, CodeIntel, CommandCheck, CommandDecision, Profile, StagedFile, ToolCheck, ToolConfig,
    ToolContext, Workspace,
};

/// Says no to everything, and remembers what it was asked.
#[derive(Default)]
struct Refuses(Mutex<Vec<String>>);

impl Refuses {
    fn asked(&self) -> Vec<String> {
        self.0.lock().map(|a| a.clone()).unwrap_or_default()
    }
    fn note(&self, what: String) {
        if let Ok(mut asked) = self.0.lock() {
            asked.push(what);
        }
    }
}

#[async_trait]
impl Approver for Refuses {
    async fn review_changes(&self, files: &[StagedFile], _: Option<&DiagnosticsPreview>) -> ChangeDecision {
        self.note(format!("review {}", files.iter().map(|f| f.display.as_str()).collect::<Vec<_>>().join(",")));
        ChangeDecision::Reject { reason: Some("no".into()) }
    }
    async fn confirm_command(&self, check: &CommandCheck) -> CommandDecision {
        self.note(format!("command {}", check.command));
        CommandDecision::Reject { reason: Some("no".into()) }
    }
    async fn confirm_tool(&self, check: &ToolCheck) -> CommandDecision {
        self.note(format!("tool {}", check.tool));
        CommandDecision::Reject { reason: Some("no".into()) }
    }
}

/// A language server that proposes renaming `alpha` in `a.txt`.
struct RenamesAlpha;

#[async_trait]
impl CodeIntel for RenamesAlpha {
    async fn definition(&self, _: &Path, _: Position) -> Result<Vec<Location>, IntelError> {
        Ok(Vec::new())
    }
    async fn implementation(&self, _: &Path, _: Position) -> Result<Vec<Location>, IntelError> {
        Ok(Vec::new())
    }
    async fn references(&self, _: &Path, _: Position, _: bool) -> Result<Vec<Location>, IntelError> {
        Ok(Vec::new())
    }
    async fn hover(&self, _: &Path, _: Position) -> Result<Option<String>, IntelError> {
        Ok(None)
    }
    async fn document_symbols(&self, _: &Path) -> Result<Vec<Symbol>, IntelError> {
        Ok(Vec::new())
    }
    async fn workspace_symbols(&self, _: &Path, _: &str) -> Result<Vec<Symbol>, IntelError> {
        Ok(Vec::new())
    }
    async fn call_hierarchy(&self, _: &Path, _: Position, _: CallDirection) -> Result<Vec<CallItem>, IntelError> {
        Ok(Vec::new())
    }
    async fn rename(
        &self,
        path: &Path,
        _: Position,
        new_name: &str,
    ) -> Result<Vec<(PathBuf, Vec<TextReplacement>)>, IntelError> {
        let range = TextRange { start: Position { line: 0, character: 0 }, end: Position { line: 0, character: 5 } };
        Ok(vec![(path.to_path_buf(), vec![TextReplacement { range, new_text: new_name.to_owned() }])])
    }
    async fn diagnostics(&self, _: &Path) -> DiagnosticsReport {
        DiagnosticsReport::NoServer
    }
    async fn diagnostics_after_write(&self, _: &[PathBuf]) -> Vec<(PathBuf, DiagnosticsReport)> {
        Vec::new()
    }
}

/// A call of each tool that changes things, which would change the workspace if allowed.
fn sample(name: &str) -> Option<Value> {
    Some(match name {
        "write" => json!({"file_path": "new.txt", "content": "x\n"}),
        "edit" => json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        "multiedit" => json!({"file_path": "a.txt", "edits": [{"old_string": "alpha", "new_string": "beta"}]}),
        "apply_patch" => {
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-alpha\n+beta\n gamma\n"})
        }
        "append" => json!({"file_path": "a.txt", "content": "more\n"}),
        "delete" => json!({"file_path": "a.txt"}),
        "generate_readme" => json!({}),
        "bash" => json!({"command": "touch made-by-bash"}),
        "run_shell_script" => json!({"script": "touch made-by-script\n"}),
        "run_python_script" => json!({"script": "open('made-by-python', 'w').close()\n"}),
        "memory_write" => json!({"title": "planted", "content": "always run yolo", "type": "feedback"}),
        "memory_delete" => json!({"memory_id": "0000abcd"}),
        "lsp" => json!({"operation": "rename", "file_path": "a.txt", "line": 1, "column": 1, "new_name": "omega"}),
        _ => return None,
    })
}

/// Every file under `root` with its bytes (directories as empty entries).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
                all.insert(rel, Vec::new());
            } else {
                all.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_that_changes_anything_asks_first_and_changes_nothing_when_refused() {
    let config = ToolConfig { profile: Profile::Full, ..Default::default() };
    let registry = crate::builtin(config);
    let mut checked = Vec::new();
    for tool in registry.enabled() {
        let spec = tool.spec();
        if spec.effect.is_read_only() {
            assert!(!spec.can_write, "`{}` is declared read-only but can_write", spec.name);
            continue;
        }
        let Some(arguments) = sample(spec.name) else {
            panic!(
                "`{}` changes things ({:?}) but this test has no sample call for it: add one",
                spec.name, spec.effect
            )
        };
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("a.txt"), "alpha\ngamma\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("src/lib.rs"), "//! A library.\npub fn f() {}\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join(".tandem/memory")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join(".tandem/memory/feedback-old-0000abcd.md"),
            "---\nid: 0000abcd\ntitle: old\ntype: feedback\ncreated: 2026-01-01T00:00:00Z\n---\nold\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let before = snapshot(dir.path());
        let workspace = Workspace::new(dir.path(), &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut ctx = ToolContext::new(Arc::new(workspace), Arc::new(BufferCache::new()));
        let refuses = Arc::new(Refuses::default());
        ctx.approver = Some(Arc::clone(&refuses) as Arc<dyn Approver>);
        ctx.intel = Some(Arc::new(RenamesAlpha));
        ctx.user_confirmed = false;
        let result = registry.call(spec.name, arguments, ctx).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(!refuses.asked().is_empty(), "`{}` ran without asking: {result:?}", spec.name);
        assert!(result.error.is_some(), "`{}` reported success though the person said no: {result:?}", spec.name);
        assert_eq!(snapshot(dir.path()), before, "`{}` changed the workspace though the person said no", spec.name);
        checked.push(spec.name);
    }
    // A tool with a sample is one known to change things: it must be declared so, and checked.
    let known: Vec<&str> = registry.enabled().map(|t| t.spec().name).filter(|name| sample(name).is_some()).collect();
    assert_eq!(checked, known, "a tool known to change things is declared read-only");
    assert_eq!(known.len(), 13, "{known:?}");
}
