//! The registry's calls, profiles and definition formats, checked with real tools (the file and
//! search tools, and every built-in tool), which live above `tandem-tool-api`.

use std::sync::Arc;

use serde_json::json;
use tandem_protocol::ToolGroup;
use tandem_text::BufferCache;

use crate::{
    CallError, Decl, Door, Profile, Registry, Tool, ToolConfig, ToolContext, ToolError, ToolOutput, TypedTool,
    Workspace, typed,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[expect(dead_code, reason = "only the schema is used")]
struct Args {
    /// Anything.
    value: Option<u32>,
}

struct Panics;

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

/// One call of each built-in tool, with arguments it accepts.
const ONE_CALL_EACH: &[(&str, &str)] = &[
    ("read", r#"{"file_path": "a.txt"}"#),
    ("write", r#"{"file_path": "w.txt", "content": "w\n"}"#),
    ("edit", r#"{"file_path": "a.txt", "old_string": "one", "new_string": "uno"}"#),
    ("multiedit", r#"{"file_path": "a.txt", "edits": [{"old_string": "uno", "new_string": "one"}]}"#),
    ("apply_patch", r#"{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+eins\n"}"#),
    ("append", r#"{"file_path": "a.txt", "content": "two"}"#),
    ("delete", r#"{"file_path": "w.txt"}"#),
    ("list", r#"{}"#),
    ("generate_readme", r#"{}"#),
    ("glob", r#"{"pattern": "*.txt"}"#),
    ("grep", r#"{"pattern": "two"}"#),
    ("bash", r#"{"command": "true"}"#),
    ("bash_output", r#"{"id": "cmd-none"}"#),
    ("run_shell_script", r#"{"script": "true"}"#),
    ("run_python_script", r#"{"script": "pass"}"#),
    ("lsp", r#"{"operation": "diagnostics", "file_path": "a.txt"}"#),
    ("repo_map", r#"{"query": "one"}"#),
    ("webfetch", r#"{"url": "http://127.0.0.1:9/"}"#),
    ("websearch", r#"{"query": "tandem"}"#),
    ("todowrite", r#"{"todos": []}"#),
    ("todoread", r#"{}"#),
    ("question", r#"{"questions": [{"question": "Which?", "options": [{"label": "a"}]}]}"#),
    ("ask_user", r#"{"question": "Which?"}"#),
    ("plan_enter", r#"{"reason": "look first"}"#),
    ("plan_status", r#"{}"#),
    ("plan_exit", r#"{"summary": "done"}"#),
    ("agent", r#"{"prompt": "look"}"#),
    ("agent_status", r#"{"agent_id": "a1"}"#),
    ("tool_search", r#"{"query": "read file"}"#),
    ("memory_read", r#"{}"#),
    ("memory_write", r#"{"title": "t", "content": "c"}"#),
    ("memory_delete", r#"{"memory_id": "nope"}"#),
    ("skill", r#"{"name": "nope"}"#),
];

/// Every built-in tool, called once through each door without a session (`tandem tool` and
/// `tandem/tools/call` at the shell's door, `tandem mcp` at its own: the registry set, no session
/// host): none fails for a service the door supplies (the registry), and a tool that needs a
/// service the door lacks is not offered there and says which service it needs and where it works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_a_door_without_a_session_and_none_lacks_the_registry() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap_or_else(|e| panic!("{e}"));
    let config = || ToolConfig { profile: Profile::Full, ..Default::default() };
    let names: Vec<&str> = crate::builtin(config()).enabled().map(|t| t.spec().name).collect();
    let missing: Vec<&&str> = names.iter().filter(|n| !ONE_CALL_EACH.iter().any(|(t, _)| t == *n)).collect();
    assert!(missing.is_empty(), "add a call of {missing:?} to ONE_CALL_EACH");
    for door in [Door::SHELL, Door::MCP] {
        let registry = Arc::new(crate::builtin(config()).at_door(door));
        let offered: Vec<&str> = registry.enabled().map(|t| t.spec().name).collect();
        for (name, args) in ONE_CALL_EACH {
            let mut call = ctx(dir.path());
            call.registry = Some(Arc::clone(&registry));
            let args: serde_json::Value = serde_json::from_str(args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let result = registry.call(name, args, call).await.unwrap_or_else(|e| panic!("{name}: {e}"));
            let error = result.error.unwrap_or_default();
            assert!(!error.contains("invalid arguments"), "{name}: the call's arguments are wrong: {error}");
            assert!(!error.contains("lacks"), "{name} is missing a service the door supplies: {error}");
            assert!(*name != "tool_search" || error.is_empty(), "tool_search works from the shell: {error}");
            let session_tool = registry.find(name).is_some_and(|t| {
                matches!(t.spec().group, ToolGroup::Plan | ToolGroup::Interact | ToolGroup::Agent)
                    && t.spec().name != "tool_search"
            });
            if session_tool {
                assert!(!offered.contains(name), "{} offers {name}, which needs a session", door.name());
                let says = format!("which {} does not provide; it works inside an agent session", door.name());
                assert!(error.contains("needs an agent session") && error.contains(&says), "{name}: {error:?}");
            } else {
                assert!(offered.contains(name), "{} leaves out {name}", door.name());
                assert!(!error.contains("does not provide"), "{name} needs a service {} lacks: {error}", door.name());
            }
        }
    }
}

/// A door without sessions does not offer the session tools (its registry leaves them out, as
/// `tandem tools` and `tandem mcp` list them), and says why a call of one cannot run; where the
/// door has sessions, a call that comes without one (`tandem/tools/call`) is told the same.
#[tokio::test]
async fn a_tool_whose_needs_the_door_cannot_meet_is_not_offered_there() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let shell = crate::builtin(ToolConfig { profile: Profile::Full, ..Default::default() }).at_door(Door::SHELL);
    let offered: Vec<&str> = shell.enabled().map(|t| t.spec().name).collect();
    for name in ["todowrite", "todoread", "question", "ask_user", "plan_enter", "plan_status", "plan_exit", "agent"] {
        assert!(!offered.contains(&name), "{name} is offered without a session: {offered:?}");
    }
    assert!(offered.contains(&"tool_search") && offered.contains(&"read"), "{offered:?}");
    assert!(shell.infos().iter().all(|t| t.name != "todowrite"));
    assert!(shell.openai_definitions().iter().all(|t| t["function"]["name"] != "todowrite"));
    let CallError::UnknownTool { suggestion, .. } = shell.unknown_tool("todowrit");
    assert_ne!(suggestion.as_deref(), Some("todowrite"));
    let refused = shell.call("todo_write", json!({"todos": []}), ctx(dir.path())).await.unwrap_or_default();
    assert_eq!(
        refused.error.as_deref(),
        Some(
            "`todowrite` needs an agent session (its task list, questions, plan mode and sub-agents), which \
             `tandem tool` does not provide; it works inside an agent session (tandem/session/prompt in an editor, \
             `tandem acp`, `tandem run`)"
        )
    );
    let editor = crate::builtin(ToolConfig::default());
    assert!(editor.enabled().any(|t| t.spec().name == "todowrite"));
    let refused = editor.call("todowrite", json!({"todos": []}), ctx(dir.path())).await.unwrap_or_default();
    let error = refused.error.unwrap_or_default();
    assert!(error.contains("which this call does not provide; it works inside an agent session"), "{error}");
    let search = editor.call("tool_search", json!({"query": "read"}), ctx(dir.path())).await.unwrap_or_default();
    let error = search.error.unwrap_or_default();
    assert!(error.starts_with("`tool_search` needs the tool registry, which this call does not provide"), "{error}");
}

/// A process that runs one tool derives that tool's argument schema only: building the
/// registry, finding the tool and calling it leave every other schema unmade (deriving them
/// all was a tenth of a `tandem tool glob` process's start).
#[tokio::test]
async fn one_call_derives_only_its_own_tools_schema() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let registry = crate::builtin(ToolConfig::default());
    let made = |registry: &Registry| -> Vec<&'static str> {
        registry.enabled().filter(|t| t.spec().parameters.is_made()).map(|t| t.spec().name).collect()
    };
    assert_eq!(made(&registry), Vec::<&str>::new());
    let result = registry.call("glob", json!({"pattern": "*.rs"}), ctx(dir.path())).await;
    assert!(result.is_ok_and(|r| r.error.is_none()));
    assert_eq!(made(&registry), vec!["glob"]);
}
