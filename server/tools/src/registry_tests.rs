//! The registry's calls, profiles and definition formats, checked with real tools (the file and
//! search tools, and every built-in tool), which live above `tandem-tool-api`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tandem_protocol::ToolGroup;
use tandem_text::BufferCache;

use crate::{
    CallError, Decl, Profile, Registry, Tool, ToolConfig, ToolContext, ToolError, ToolOutput, TypedTool, Workspace,
    typed,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[expect(dead_code, reason = "only the schema is used")]
struct Args {
    /// Anything.
    value: Option<u32>,
}

struct Panics;

#[async_trait]
impl TypedTool for Panics {
    const DECL: Decl = Decl::new("explode", ToolGroup::Exec, "Panics.").aliases(&["kaboom"]).writes().strict();
    type Args = Args;

    async fn run(&self, _: Args, _: ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("boom")
    }
}

fn panics() -> Arc<dyn Tool> {
    typed(Panics)
}

fn ctx(dir: &std::path::Path) -> ToolContext {
    let workspace = Workspace::new(dir, &[]).unwrap_or_else(|e| panic!("{e}"));
    ToolContext::new(Arc::new(workspace), Arc::new(BufferCache::new()))
}

#[tokio::test]
async fn panic_becomes_an_error_result_and_the_registry_keeps_serving() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut tools = tandem_tool_fs::all();
    tools.push(panics());
    let registry = Registry::new(tools, ToolConfig::default());
    let result = registry.call("kaboom", json!({}), ctx(dir.path())).await;
    let error = result.ok().and_then(|r| r.error).unwrap_or_default();
    assert!(error.starts_with("tool `explode` crashed"), "{error}");
    let strict = registry.call("explode", json!({"valu": 1}), ctx(dir.path())).await;
    let error = strict.ok().and_then(|r| r.error).unwrap_or_default();
    assert_eq!(error, "invalid arguments for `explode`: unknown argument(s) `valu` at arguments; allowed: `value`");
    let listed = registry.call("list", json!({"bogus": true}), ctx(dir.path())).await;
    let listed = listed.unwrap_or_default();
    assert_eq!(listed.error, None);
    assert_eq!(listed.metadata.get("ignoredArguments"), Some(&json!(["bogus"])));
}

#[tokio::test]
async fn profiles_and_switches_decide_what_is_offered() {
    let names = |config: ToolConfig| -> Vec<String> {
        let mut tools: Vec<_> = tandem_tool_fs::all().into_iter().chain(tandem_tool_search::all()).collect();
        tools.push(panics());
        Registry::new(tools, config).infos().into_iter().map(|i| i.name).collect()
    };
    let config = |profile| ToolConfig { profile, ..Default::default() };
    assert_eq!(names(config(Profile::Minimal)), ["read", "list", "glob", "grep"]);
    assert_eq!(
        names(config(Profile::Standard)),
        ["read", "write", "edit", "multiedit", "apply_patch", "append", "delete", "list", "glob", "grep"]
    );
    assert_eq!(names(config(Profile::Full)).len(), 11);
    assert!(names(config(Profile::Custom)).is_empty());
    let mut custom = config(Profile::Custom);
    custom.enabled = vec!["read_file".into()];
    assert_eq!(custom.apply_env([("TANDEM_FEATURE_EXEC", "1"), ("TANDEM_FEATURE_NOPE", "1")]).len(), 1);
    assert_eq!(names(custom.clone()), ["read", "explode"]);
    custom.disabled = vec!["kaboom".into()];
    assert_eq!(names(custom), ["read"]);

    let mut off = config(Profile::Full);
    off.apply_env([("TANDEM_FEATURE_FS", "0")]);
    let registry = Registry::new(tandem_tool_fs::all(), off);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let result = registry.call("read", json!({"file_path": "x"}), ctx(dir.path())).await.unwrap_or_default();
    assert_eq!(
        result.error.as_deref(),
        Some("tool `read` is off because its group `fs` is switched off (TANDEM_FEATURE_FS=0 or [tools.groups])")
    );
    let unknown = registry.call("nope", json!({}), ctx(dir.path())).await;
    assert!(matches!(unknown, Err(CallError::UnknownTool { .. })));
}

#[test]
fn definitions_in_both_provider_formats() {
    let registry = crate::builtin(ToolConfig::default());
    let openai = registry.openai_definitions();
    let anthropic = registry.anthropic_definitions();
    assert_eq!(openai.len(), anthropic.len());
    assert_eq!(openai[0]["type"], json!("function"));
    assert_eq!(openai[0]["function"]["name"], json!("read"));
    assert_eq!(openai[0]["function"]["parameters"]["type"], json!("object"));
    assert_eq!(anthropic[0]["name"], json!("read"));
    assert_eq!(anthropic[0]["input_schema"]["required"], json!(["file_path"]));
    for tool in registry.infos() {
        assert!(tool.parameters["properties"].is_object(), "{}", tool.name);
        assert!(!tool.description.is_empty());
    }
}
