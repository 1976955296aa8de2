use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::rule::Origin;

fn hook(event: HookEvent, matcher: Option<&str>, command: &str, timeout_ms: Option<u64>) -> Hook {
    let source = Source { origin: Origin::Person, file: "config.toml".into() };
    match Hook::new(event, matcher, command, timeout_ms, source) {
        Ok(hook) => hook,
        Err(err) => panic!("{err}"),
    }
}

async fn run(hooks: Vec<Hook>, event: HookEvent, tool: Option<&str>, input: Value) -> HookOutcome {
    let dir = std::env::temp_dir();
    Hooks::new(hooks).run(event, tool, &input, &dir, &CancellationToken::new()).await
}

/// Runs one hook of `event` for every tool, with the command `command`, as `tool`'s call
/// (an empty input).
async fn run_one(event: HookEvent, command: &str, tool: Option<&str>) -> HookOutcome {
    run(vec![hook(event, None, command, None)], event, tool, json!({})).await
}

#[test]
fn matchers_cover_tandem_and_claude_code_names() {
    let h = hook(HookEvent::PreToolUse, Some("edit|write"), "true", None);
    assert!(h.matches(Some("edit")) && h.matches(Some("write")) && !h.matches(Some("multiedit")));
    let h = hook(HookEvent::PreToolUse, Some("Edit|Write"), "true", None);
    assert!(h.matches(Some("edit")) && h.matches(Some("write")) && !h.matches(Some("bash")));
    let h = hook(HookEvent::PreToolUse, Some("Bash"), "true", None);
    assert!(h.matches(Some("bash")) && h.matches(Some("run_shell_script")));
    let h = hook(HookEvent::PreToolUse, Some("mcp__.*"), "true", None);
    assert!(h.matches(Some("mcp__gh__x")) && !h.matches(Some("read")));
    assert!(hook(HookEvent::PreToolUse, Some("*"), "true", None).matches(Some("anything")));
    assert!(hook(HookEvent::PreToolUse, None, "true", None).matches(Some("anything")));
    let source = Source { origin: Origin::Person, file: "c".into() };
    assert!(Hook::new(HookEvent::PreToolUse, Some("("), "true", None, source.clone()).is_err());
    assert!(Hook::new(HookEvent::Stop, None, "  ", None, source).is_err());
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_and_the_input_arrives_on_stdin() {
    let outcome = run(
        vec![hook(HookEvent::PreToolUse, Some("edit"), "jq -r .tool_input.file_path >&2 2>/dev/null || python3 -c 'import json,sys; print(json.load(sys.stdin)[\"tool_input\"][\"file_path\"], file=sys.stderr)'; exit 2", None)],
        HookEvent::PreToolUse,
        Some("edit"),
        json!({ "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": { "file_path": "src/secret.rs" } }),
    )
    .await;
    let block = outcome.block.unwrap_or_default();
    assert!(block.contains("blocked by the PreToolUse hook") && block.ends_with("src/secret.rs"), "{block}");
}

#[tokio::test]
async fn json_output_decides_and_adds_context() {
    let print = |json: Value| format!("echo '{json}'");
    let deny = json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no edits on Fridays" } });
    let outcome = run_one(HookEvent::PreToolUse, &print(deny), Some("edit")).await;
    assert!(outcome.block.as_deref().is_some_and(|b| b.ends_with("no edits on Fridays")), "{outcome:?}");
    assert_eq!(outcome.permission.map(|p| p.0), Some(Action::Deny));

    let allow = json!({ "hookSpecificOutput": { "permissionDecision": "allow" } });
    let ask = json!({ "hookSpecificOutput": { "permissionDecision": "ask", "permissionDecisionReason": "check it" } });
    let outcome = run(
        vec![
            hook(HookEvent::PreToolUse, None, &print(allow), None),
            hook(HookEvent::PreToolUse, None, &print(ask), None),
        ],
        HookEvent::PreToolUse,
        Some("bash"),
        json!({}),
    )
    .await;
    assert_eq!(outcome.permission, Some((Action::Ask, Some("check it".into()))));
    assert_eq!(outcome.block, None);

    let block = json!({ "decision": "block", "reason": "tests fail", "hookSpecificOutput": { "additionalContext": "see log" } });
    let outcome = run_one(HookEvent::PostToolUse, &print(block), Some("edit")).await;
    assert!(outcome.block.as_deref().is_some_and(|b| b.ends_with("tests fail")));
    assert_eq!(outcome.context, vec!["see log".to_owned()]);

    // Plain stdout is context for prompts and session starts only.
    let outcome = run_one(HookEvent::UserPromptSubmit, "echo 'branch: main'", None).await;
    assert_eq!(outcome.context, vec!["branch: main".to_owned()]);
    let outcome = run_one(HookEvent::PostToolUse, "echo chatter", Some("x")).await;
    assert!(outcome.context.is_empty() && outcome.block.is_none() && outcome.ran());
}

#[tokio::test]
async fn other_failures_do_not_block_and_only_matching_hooks_run() {
    let outcome = run(
        vec![
            hook(HookEvent::PreToolUse, None, "echo oops >&2; exit 1", None),
            hook(HookEvent::PreToolUse, Some("bash"), "exit 2", None),
            hook(HookEvent::PostToolUse, None, "exit 2", None),
        ],
        HookEvent::PreToolUse,
        Some("edit"),
        json!({}),
    )
    .await;
    assert_eq!(outcome.runs.len(), 1);
    assert_eq!(outcome.runs[0].exit, Some(1));
    assert_eq!(outcome.runs[0].stderr.trim(), "oops");
    assert_eq!(outcome.block, None);
}

#[tokio::test]
async fn a_hook_that_runs_too_long_is_stopped_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let marker = dir.path().join("late");
    let command = format!("(sleep 1; touch {}) & sleep 30", marker.display());
    let started = Instant::now();
    let outcome = run(vec![hook(HookEvent::Stop, None, &command, Some(200))], HookEvent::Stop, None, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(outcome.runs[0].failure.as_deref(), Some("timed out after 200 ms"));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "a child of the hook outlived it");

    let cancel = CancellationToken::new();
    let hooks = Hooks::new(vec![hook(HookEvent::Stop, None, "sleep 30", None)]);
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let outcome = hooks.run(HookEvent::Stop, None, &json!({}), dir.path(), &cancel).await;
    assert_eq!(outcome.runs[0].failure.as_deref(), Some("cancelled"));
}

#[tokio::test]
async fn output_is_capped() {
    let outcome = run_one(HookEvent::Stop, "head -c 300000 /dev/zero | tr '\\0' a", None).await;
    let stdout = &outcome.runs[0].stdout;
    assert!(stdout.len() < OUTPUT_CAP + 100 && stdout.ends_with("[output cut at 64 KiB]"), "{}", stdout.len());
    assert_eq!(outcome.runs[0].exit, Some(0));
}
