//! What a team and a person tell the agent in files, checked in the requests a scripted
//! provider receives: instruction files from the root down, a nested one arriving on the first
//! touch of its directory, scoped rules arriving on first touch and kept word for word through
//! a compaction, the budget note, custom commands with their arguments, and skills loaded only
//! on demand.

mod support;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use support::{Recorder, prompt};
use tandem_agent::{Agent, AgentConfig};
use tandem_fake_provider::{FakeProvider, ReceivedRequest, Turn};
use tandem_llm::ProviderKind;
use tandem_protocol::{ContentBlock, SessionCompactParams, SessionLoadParams, SessionUpdate, StopReason};

fn start(root: &Path, provider: &FakeProvider, window: u32, client: Arc<Recorder>) -> Arc<Agent> {
    let settings = support::settings(ProviderKind::OpenAi, &provider.base_url(), window, 1_024);
    support::start(root, AgentConfig::new(settings), client)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// A workspace holding `files` (path, text).
fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    dir
}

fn system(request: &ReceivedRequest) -> String {
    request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

/// Every message's text but the system prompt's, as the provider received them.
fn conversation(request: &ReceivedRequest) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .skip(1)
        .map(|m| m["content"].as_str().map_or_else(|| m["content"].to_string(), str::to_owned))
        .collect()
}

fn count(haystack: &[String], needle: &str) -> usize {
    haystack.iter().map(|text| text.matches(needle).count()).sum()
}

fn is_summary(body: &Value) -> bool {
    body.get("tools").is_none() && body.to_string().contains("<transcript>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_come_root_down_and_a_nested_file_arrives_once_on_first_touch() {
    let dir = workspace(&[
        ("AGENTS.md", "ROOT-INSTRUCTIONS"),
        ("CLAUDE.md", "ROOT-CLAUDE (not read: the root has an AGENTS.md)"),
        ("pkg/CLAUDE.md", "PKG-INSTRUCTIONS"),
        ("pkg/app/AGENTS.md", "APP-INSTRUCTIONS"),
        ("lib/AGENTS.md", "LIB-INSTRUCTIONS"),
        ("lib/x.rs", "fn x() {}\n"),
        ("lib/y.rs", "fn y() {}\n"),
    ]);
    let root = dir.path();
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "../../lib/x.rs" })),
        Turn::new().tool_call("c2", "read", json!({ "file_path": "../../lib/y.rs" })),
        Turn::reply("Done."),
    ])
    .await;
    let client = Arc::new(Recorder::default());
    let agent = start(root, &provider, 128_000, Arc::clone(&client));
    let session = support::new_session_in(&agent, "pkg/app");
    let result = agent.prompt(prompt(&session, "look at lib")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));

    let requests = provider.requests();
    let first = system(&requests[0]);
    let at = |text: &str| first.find(text).unwrap_or_else(|| panic!("{text} missing from {first}"));
    assert!(at("ROOT-INSTRUCTIONS") < at("PKG-INSTRUCTIONS") && at("PKG-INSTRUCTIONS") < at("APP-INSTRUCTIONS"));
    assert!(first.contains("<instructions file=\"pkg/CLAUDE.md\">"), "{first}");
    assert!(!first.contains("ROOT-CLAUDE") && !first.contains("LIB-INSTRUCTIONS"), "{first}");
    assert_eq!(count(&conversation(&requests[0]), "LIB-INSTRUCTIONS"), 0);
    // The first read in lib/ brings lib/AGENTS.md, named, once; the second read does not repeat it.
    let second = conversation(&requests[1]);
    assert_eq!(
        count(&second, "<instructions file=\"lib/AGENTS.md\">\nLIB-INSTRUCTIONS\n</instructions>"),
        1,
        "{second:?}"
    );
    assert_eq!(count(&conversation(&requests[2]), "LIB-INSTRUCTIONS"), 1);
    assert!(client.updates.lock().iter().any(
        |u| matches!(u, SessionUpdate::ToolCall(c) if c.title == "Instructions lib/AGENTS.md in force (for lib/x.rs)")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_rules_arrive_on_first_touch_and_survive_compaction_word_for_word() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    let rule_body = "PY-RULE: every function has type hints.\n  Second line, indented: keep it.";
    write(
        root,
        ".tandem/rules/python.md",
        &format!("---\ndescription: Python style\npaths: [\"**/*.py\"]\n---\n{rule_body}\n"),
    );
    write(root, ".tandem/rules/always.md", "ALWAYS-RULE: answer in English.\n");
    write(root, "README.md", "# readme\n");
    write(root, "src/a.py", "def a(): pass\n");
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "README.md" })),
        Turn::new().tool_call("c2", "read", json!({ "file_path": "src/a.py" })),
        Turn::reply("Read them."),
        Turn::reply("Noted."),
        Turn::reply("Still following the rule."),
    ])
    .await;
    provider.answer_when(is_summary, Turn::reply("## Goal\nRead files.\n## Done\nRead README.md and src/a.py."));
    let client = Arc::new(Recorder::default());
    let agent = start(root, &provider, 128_000, Arc::clone(&client));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "read the readme, then a.py")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let result = agent.prompt(prompt(&session, "anything else?")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));

    let requests = provider.requests();
    assert!(system(&requests[0]).contains("ALWAYS-RULE"), "an unscoped rule is always in force");
    assert!(system(&requests[0]).contains(".tandem/rules/python.md (**/*.py)"), "the scoped rule is announced");
    assert_eq!(count(&conversation(&requests[0]), "PY-RULE"), 0);
    assert_eq!(count(&conversation(&requests[1]), "PY-RULE"), 0, "README.md does not match");
    let verbatim = format!("<rule file=\".tandem/rules/python.md\">\n{rule_body}\n</rule>");
    assert_eq!(count(&conversation(&requests[2]), &verbatim), 1, "{:?}", conversation(&requests[2]));
    assert!(conversation(&requests[2]).iter().any(|t| t.contains("which applies to src/a.py")));

    // The person compacts: the turns with the rule are summarised, the rule stays as it was.
    let compacted = agent.compact(SessionCompactParams { session_id: session.clone() }).await;
    assert!(compacted.as_ref().is_ok_and(|c| c.summarized), "{compacted:?}");
    let result = agent.prompt(prompt(&session, "go on")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let requests = provider.requests();
    let last = requests.iter().rev().find(|r| !is_summary(&r.body)).unwrap_or_else(|| panic!("no request"));
    let after = conversation(last);
    assert!(after.iter().any(|t| t.contains("[Summary of the earlier conversation")), "{after:?}");
    assert_eq!(count(&after, &verbatim), 1, "{after:?}");
    assert!(system(last).contains("ALWAYS-RULE"));
    assert_eq!(count(&after, "def a(): pass"), 0, "the read itself was summarised");

    // A loaded session keeps the rule in force (it is not added a second time).
    drop(agent);
    provider.push(Turn::new().tool_call("c3", "read", json!({ "file_path": "src/a.py" })));
    provider.push(Turn::reply("Done."));
    let agent = start(root, &provider, 128_000, Arc::new(Recorder::default()));
    let load = SessionLoadParams { session_id: session.clone(), cwd: None, mcp_servers: None };
    agent.load(load).await.unwrap_or_else(|e| panic!("{e}"));
    let result = agent.prompt(prompt(&session, "read a.py again")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let last = provider.requests().pop().unwrap_or_else(|| panic!("no request"));
    assert_eq!(count(&conversation(&last), &verbatim), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_budget_cuts_is_named_to_the_model_and_the_person() {
    let general = "General advice that goes on and on.\n".repeat(400);
    let dir = workspace(&[("AGENTS.md", &general), ("pkg/AGENTS.md", "PKG-SPECIFIC: run `make pkg`.")]);
    let root = dir.path();
    let provider = FakeProvider::start(vec![Turn::reply("Hello.")]).await;
    let client = Arc::new(Recorder::default());
    // An 8k window: an instruction budget of 1,000 tokens.
    let agent = start(root, &provider, 8_192, Arc::clone(&client));
    let session = support::new_session_in(&agent, "pkg");
    let result = agent.prompt(prompt(&session, "hi")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let first = system(&provider.requests()[0]);
    assert!(first.contains("PKG-SPECIFIC"), "the nearest file is kept whole");
    assert!(first.contains("[Instruction budget reached (3072 bytes): AGENTS.md was cut after"), "{first}");
    assert!(first.len() < 3072 + 4000, "{} bytes", first.len());
    let updates = client.updates.lock().clone();
    let note = updates.iter().find_map(|u| match u {
        SessionUpdate::ToolCall(c) if c.title.starts_with("Instructions over budget") => Some(c.title.clone()),
        _ => None,
    });
    assert_eq!(note.as_deref(), Some("Instructions over budget: cut AGENTS.md"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_command_expands_its_arguments_and_the_transcript_shows_the_command() {
    let dir = workspace(&[
        (
            ".tandem/commands/review.md",
            "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1 with a focus on $2.\nEverything: $ARGUMENTS\n",
        ),
        (".claude/commands/review.md", "CLAUDE REVIEW (shadowed by .tandem/commands)"),
        (".claude/commands/summary.md", "Summarise the project."),
        (".tandem/commands/compact.md", "A custom /compact: the built-in wins."),
    ]);
    let root = dir.path();
    let provider = FakeProvider::start(vec![Turn::reply("Reviewed."), Turn::reply("Summarised.")]).await;
    let client = Arc::new(Recorder::default());
    let agent = start(root, &provider, 128_000, Arc::clone(&client));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "/review src/a.py \"error handling\"")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    // What the editor attached goes along with the command.
    let mut attached = prompt(&session, "/summary briefly");
    attached.prompt.push(ContentBlock::ResourceLink {
        uri: "file:///w/notes.txt".into(),
        name: "notes.txt".into(),
        mime_type: None,
    });
    let result = agent.prompt(attached).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let requests = provider.requests();
    let sent = conversation(&requests[0]).join("\n");
    assert!(
        sent.contains("Review src/a.py with a focus on error handling.\nEverything: src/a.py \"error handling\""),
        "{sent}"
    );
    assert!(!sent.contains("$1") && !sent.contains("CLAUDE REVIEW"), "{sent}");
    let sent = conversation(&requests[1]).join("\n");
    assert!(sent.contains("Summarise the project.\n\nARGUMENTS: briefly"), "{sent}");
    assert!(sent.contains("[attached: notes.txt (file:///w/notes.txt)"), "{sent}");

    // `/context` is answered without the model, and lists the commands with the notice.
    let result = agent.prompt(prompt(&session, "/context")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    assert_eq!(provider.requests().len(), 2);
    let said: String = client
        .updates
        .lock()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(said.contains("/review <file> [focus]") && said.contains(".claude/commands/summary.md"), "{said}");
    assert!(said.contains("`/compact` is a built-in command, which wins"), "{said}");
    // The person was told of the shadowed command when the session's first turn began.
    assert!(client.updates.lock().iter().any(|u| matches!(u,
        SessionUpdate::ToolCall(c) if c.title.starts_with("Commands: `/compact` is a built-in command, which wins"))));

    // Loading shows the commands as typed, not their expansion.
    drop(agent);
    let client = Arc::new(Recorder::default());
    let agent = start(root, &provider, 128_000, Arc::clone(&client));
    let load = SessionLoadParams { session_id: session.clone(), cwd: None, mcp_servers: None };
    agent.load(load).await.unwrap_or_else(|e| panic!("{e}"));
    let typed: Vec<String> = client
        .updates
        .lock()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk { content: ContentBlock::Text { text }, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(typed, ["/review src/a.py \"error handling\"", "/summary briefly", "/context"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_is_listed_by_description_and_loaded_only_on_demand() {
    let dir = workspace(&[
        (
            ".tandem/skills/release/SKILL.md",
            "---\nname: release\ndescription: Cut a release of the crate (bump, changelog, tag)\n---\nRELEASE-BODY: run scripts/bump.sh, then update CHANGELOG.md.\n",
        ),
        (".tandem/skills/release/scripts/bump.sh", "#!/bin/sh\necho bump\n"),
    ]);
    let root = dir.path();
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("c1", "skill", json!({ "name": "release" })),
        Turn::reply("Following the skill."),
    ])
    .await;
    let agent = start(root, &provider, 128_000, Arc::new(Recorder::default()));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "cut a release")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let requests = provider.requests();
    let first = requests[0].body.to_string();
    assert!(first.contains("\"name\":\"skill\""), "a skill is listed: the `skill` tool is offered up front");
    assert!(system(&requests[0]).contains("- release: Cut a release of the crate (bump, changelog, tag)"));
    assert!(system(&requests[0]).contains("[from the repository, which the person has not trusted]"));
    assert!(!first.contains("RELEASE-BODY"), "the body is not sent before it is asked for");
    let result = conversation(&requests[1]).join("\n");
    assert!(result.contains("RELEASE-BODY: run scripts/bump.sh"), "{result}");
    assert!(result.contains("- .tandem/skills/release/scripts/bump.sh"), "{result}");
    assert!(result.contains("the person has not trusted"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_has_the_model_write_a_first_agents_md_through_the_review() {
    let dir = workspace(&[("Cargo.toml", "[package]\nname = \"demo\"\n")]);
    let root = dir.path();
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call(
            "c1",
            "write",
            json!({ "file_path": "AGENTS.md", "content": "# demo\nBuild: cargo build\n" }),
        ),
        Turn::reply("Wrote AGENTS.md."),
    ])
    .await;
    let client = Arc::new(Recorder::default());
    let agent = start(root, &provider, 128_000, Arc::clone(&client));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "/init keep it short")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let sent = conversation(&provider.requests()[0]).join("\n");
    assert!(sent.contains("Write a first AGENTS.md for this project"), "{sent}");
    assert!(sent.contains("ARGUMENTS: keep it short"), "{sent}");
    assert_eq!(client.asked.lock().as_slice(), ["Write AGENTS.md"], "the person reviewed the file");
    let written = std::fs::read_to_string(root.join("AGENTS.md")).unwrap_or_default();
    assert_eq!(written, "# demo\nBuild: cargo build\n");
}
