//! The session tools end to end: todo, questions, plan mode, memory, tool search and
//! sub-agents, each through a scripted session against the real binary.

use std::path::Path;

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{PermissionReply, Res, Sidecar};

fn workspace(files: &[(&str, &str)], config: &str) -> Res<tempfile::TempDir> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| e.to_string())?;
    }
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    let toml = format!("[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 0\n{config}");
    std::fs::write(dir.path().join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn sidecar(root: &Path, provider: &FakeProvider, env: &[(&str, &str)]) -> Res<Sidecar> {
    let base = provider.base_url();
    let mut vars =
        vec![("TANDEM_PROVIDER", "openai"), ("TANDEM_BASE_URL", base.as_str()), ("TANDEM_MODEL", "scripted")];
    vars.extend_from_slice(env);
    let mut sidecar = Sidecar::spawn(root, &vars)?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn session(sidecar: &mut Sidecar, params: Value) -> Res<String> {
    let result = sidecar.request("tandem/session/new", params)?;
    result["sessionId"].as_str().map(str::to_owned).ok_or_else(|| format!("no sessionId in {result}"))
}

fn prompt(sidecar: &mut Sidecar, session: &str, text: &str) -> Res<Value> {
    sidecar
        .request("tandem/session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
}

/// The tool results of request `i` (OpenAI format), in order.
fn tool_results(provider: &FakeProvider, i: usize) -> Vec<String> {
    provider.requests()[i].body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn last_tool_result(provider: &FakeProvider, i: usize) -> String {
    tool_results(provider, i).pop().unwrap_or_default()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn todos_are_shown_as_the_plan_kept_with_the_session_and_replayed() -> Res<()> {
    let dir = workspace(&[], "")?;
    let todos = json!([
        { "content": "Read the code", "status": "completed" },
        { "content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug" },
        { "content": "Run the tests", "status": "pending" }
    ]);
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("t1", "todowrite", json!({ "todos": todos })),
        Turn::new().tool_call("t2", "todoread", json!({})),
        Turn::new().tool_call("t3", "todowrite", json!({ "todos": [{ "content": "Next", "status": "pending" }] })),
        Turn::reply("ok"),
    ]);
    let mut first = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut first, json!({}))?;
    prompt(&mut first, &id, "fix it")?;
    let plan = first.session_updates().into_iter().find(|u| u["sessionUpdate"] == "plan").ok_or("no plan update")?;
    assert_eq!(
        plan["entries"],
        json!([
            { "content": "Read the code", "priority": "medium", "status": "completed" },
            { "content": "Fixing the bug", "priority": "medium", "status": "in_progress" },
            { "content": "Run the tests", "priority": "medium", "status": "pending" }
        ])
    );
    assert_eq!(tool_results(&provider, 1)[0], "1. [x] Read the code\n2. [~] Fix the bug\n3. [ ] Run the tests");
    assert_eq!(tool_results(&provider, 2)[1], tool_results(&provider, 1)[0], "todoread shows the list");
    assert!(last_tool_result(&provider, 3).contains("Warning: no task is in progress"));
    first.shutdown()?;
    // A second process replays the last list on load.
    let mut second = sidecar(dir.path(), &provider, &[])?;
    second.request("tandem/session/load", json!({ "sessionId": id }))?;
    let plan = second.session_updates().into_iter().find(|u| u["sessionUpdate"] == "plan").ok_or("no plan replayed")?;
    assert_eq!(plan["entries"][0]["content"], "Next");
    Ok(())
}

#[test]
fn questions_go_to_the_editor_and_the_answers_come_back() -> Res<()> {
    let dir = workspace(&[], "")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "q1",
            "question",
            json!({ "questions": [
                { "question": "Which database?", "header": "DB", "options": [
                    { "label": "SQLite", "description": "a file" }, { "label": "Postgres", "description": "a server" } ] },
                { "question": "Which features?", "header": "Features", "multiSelect": true, "options": [
                    { "label": "auth" }, { "label": "billing" }, { "label": "search" } ] }
            ] }),
        ),
        Turn::new().tool_call("q2", "ask_user", json!({ "question": "Name?", "default": "tandem" })),
        Turn::reply("thanks"),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    sidecar.ask_replies.push_back(json!({ "answers": [["SQLite"], ["auth", "search"]] }));
    let id = session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &id, "set it up")?;
    let asked = sidecar.requests_of("tandem/session/askUser");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0]["sessionId"], json!(id));
    assert_eq!(asked[0]["questions"][1]["multiSelect"], true);
    assert_eq!(asked[0]["questions"][0]["options"][1]["label"], "Postgres");
    assert_eq!(tool_results(&provider, 1)[0], "Q: Which database?\nA: SQLite\n\nQ: Which features?\nA: auth, search");
    // The second question: this editor has no answer left (MethodNotFound), so the default is used.
    assert!(last_tool_result(&provider, 2).contains("A: tandem (the default: nobody could be asked)"));
    Ok(())
}

#[test]
fn plan_mode_blocks_writes_except_the_plan_until_the_person_approves() -> Res<()> {
    let dir = workspace(&[("src/app.py", "print('hi')\n")], "")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("p1", "plan_enter", json!({ "reason": "a risky change" })),
        Turn::new().tool_call("p2", "write", json!({ "file_path": "src/new.py", "content": "x = 1\n" })),
        Turn::new().tool_call("p3", "write", json!({ "file_path": ".tandem/plan.md", "content": "1. add new.py\n" })),
        Turn::new().tool_call("p4", "plan_status", json!({})),
        Turn::new().tool_call("p5", "plan_exit", json!({ "summary": "Add new.py" })),
        Turn::new().tool_call("p6", "plan_exit", json!({ "summary": "Add new.py with x" })),
        Turn::new().tool_call("p7", "write", json!({ "file_path": "src/new.py", "content": "x = 1\n" })),
        Turn::reply("done"),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    sidecar.permission_replies.extend([
        PermissionReply::Outcome(json!({ "outcome": "selected", "optionId": "reject_once", "message": "also add y" })),
        PermissionReply::select("allow_once"),
    ]);
    let id = session(&mut sidecar, json!({ "mode": "auto-edit" }))?;
    prompt(&mut sidecar, &id, "add new.py")?;
    assert!(last_tool_result(&provider, 2).contains("plan mode"), "write blocked");
    assert!(
        !last_tool_result(&provider, 3).starts_with("Error"),
        "plan file written: {}",
        last_tool_result(&provider, 3)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".tandem/plan.md")).map_err(|e| e.to_string())?,
        "1. add new.py\n"
    );
    assert!(last_tool_result(&provider, 4).contains("Returns to `auto-edit` mode"));
    assert!(
        last_tool_result(&provider, 5).contains("did not approve")
            && last_tool_result(&provider, 5).contains("also add y")
    );
    assert!(last_tool_result(&provider, 6).contains("back in `auto-edit` mode"));
    assert_eq!(std::fs::read_to_string(dir.path().join("src/new.py")).map_err(|e| e.to_string())?, "x = 1\n");
    // The approval request showed the plan.
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 2, "the plan file write did not ask; auto-edit did not ask for new.py");
    assert_eq!(asks[1]["toolCall"]["content"][1]["content"]["text"], "1. add new.py\n");
    let modes: Vec<Value> = sidecar
        .session_updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "current_mode_update")
        .map(|u| u["currentModeId"].clone())
        .collect();
    assert_eq!(modes, [json!("plan"), json!("auto-edit")]);
    Ok(())
}

#[test]
fn memories_persist_across_processes_and_reach_the_next_session() -> Res<()> {
    let dir = workspace(&[], "")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "m1",
            "memory_write",
            json!({ "title": "Run tests with nextest", "content": "Use `cargo nextest run`, not cargo test.", "type": "feedback", "tags": ["tests"] }),
        ),
        Turn::reply("noted"),
        Turn::new().tool_call("m2", "memory_read", json!({ "query": "nextest" })),
        Turn::new().tool_call("m3", "memory_delete", json!({ "memory_id": "zz" })),
        Turn::reply("ok"),
    ]);
    let mut first = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut first, json!({}))?;
    // A memory changes what later sessions read: the person is asked first.
    first.permission_replies.push_back(PermissionReply::select("allow_once"));
    prompt(&mut first, &id, "remember how to run tests")?;
    let asked = first.requests_of("tandem/session/requestPermission");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].to_string().contains("memory_write"), "{asked:?}");
    first.shutdown()?;
    let files: Vec<_> =
        std::fs::read_dir(dir.path().join(".tandem/memory")).map_err(|e| e.to_string())?.flatten().collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(files[0].path()).map_err(|e| e.to_string())?;
    assert!(text.starts_with("---\nid: ") && text.contains("type: feedback") && text.contains("cargo nextest run"));

    let mut second = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut second, json!({}))?;
    second.permission_replies.push_back(PermissionReply::select("allow_once"));
    prompt(&mut second, &id, "how do I run the tests?")?;
    let system = provider.requests()[2].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("Memories") && system.contains("Use `cargo nextest run`"), "{system}");
    assert!(last_tool_result(&provider, 3).contains("cargo nextest run"));
    assert!(last_tool_result(&provider, 4).contains("no memory with id `zz`"));
    Ok(())
}

#[test]
fn tool_search_finds_deferred_tools_and_loads_them() -> Res<()> {
    let dir = workspace(&[], "[agent]\ndefer_tools = true\n")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("s1", "tool_search", json!({ "query": "remember a note for later sessions" })),
        Turn::new().tool_call("s2", "tool_search", json!({ "query": "select:glob,nope" })),
        Turn::reply("found"),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &id, "find a tool")?;
    let requests = provider.requests();
    let first = tool_names(&requests[0].body);
    assert!(first.contains(&"tool_search".to_owned()) && first.contains(&"read".to_owned()));
    assert!(!first.contains(&"memory_write".to_owned()), "deferred: {first:?}");
    let found = last_tool_result(&provider, 1);
    let found: Value = serde_json::from_str(&found).map_err(|e| format!("{e}: {found}"))?;
    assert_eq!(found[0]["name"], "memory_write", "best match first: {found:#}");
    assert!(found[0]["parameters"]["required"].as_array().is_some_and(|r| r.contains(&json!("title"))));
    assert!(tool_names(&requests[1].body).contains(&"memory_write".to_owned()), "loaded after the search");
    assert!(last_tool_result(&provider, 2).contains("no enabled tool named nope"));
    Ok(())
}

#[test]
fn an_explore_sub_agent_is_refused_a_write_and_its_answer_returns() -> Res<()> {
    let dir = workspace(&[("src/lib.rs", "pub fn answer() -> u32 { 42 }\n")], "")?;
    let provider = FakeProvider::start_blocking(vec![
        // The parent delegates.
        Turn::new().tool_call(
            "a1",
            "agent",
            json!({ "prompt": "Find what answer() returns", "agent_type": "explore" }),
        ),
        // The sub-agent tries to write, then reads, then answers.
        Turn::new().tool_call("x1", "write", json!({ "file_path": "src/x.rs", "content": "" })),
        Turn::new().tool_call("x2", "read", json!({ "file_path": "src/lib.rs" })),
        Turn::reply("answer() returns 42 (src/lib.rs:1)"),
        // The parent finishes.
        Turn::reply("It returns 42."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut sidecar, json!({ "mode": "yolo" }))?;
    let result = prompt(&mut sidecar, &id, "what does answer return?")?;
    assert_eq!(result["stopReason"], "end_turn");
    assert!(!dir.path().join("src/x.rs").exists());
    let requests = provider.requests();
    let child_tools = tool_names(&requests[1].body);
    assert!(child_tools.contains(&"read".to_owned()) && child_tools.contains(&"grep".to_owned()));
    for writer in ["write", "edit", "bash", "agent", "delete"] {
        assert!(!child_tools.contains(&writer.to_owned()), "explore got {writer}: {child_tools:?}");
    }
    let child_prompt = requests[1].body["messages"][1]["content"].as_str().unwrap_or_default().to_owned();
    assert!(child_prompt.contains("read-only exploration") && child_prompt.contains("Find what answer() returns"));
    assert!(last_tool_result(&provider, 2).contains("not available to this sub-agent"));
    assert_eq!(last_tool_result(&provider, 4), "answer() returns 42 (src/lib.rs:1)");
    // The editor saw one tool call (the agent), not the sub-agent's.
    let calls: Vec<Value> =
        sidecar.session_updates().into_iter().filter(|u| u["sessionUpdate"] == "tool_call").collect();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["rawInput"]["agent_type"], "explore");
    Ok(())
}

#[test]
fn session_tools_outside_a_session_say_they_need_one() -> Res<()> {
    let dir = workspace(&[], "")?;
    let provider = FakeProvider::start_blocking(Vec::new());
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    let result = sidecar.call("todowrite", json!({ "todos": [] }))?;
    assert!(result["error"].as_str().unwrap_or_default().contains("works inside an agent session"), "{result}");
    Ok(())
}

#[test]
fn a_general_sub_agents_edit_asks_the_person_under_the_parent_session() -> Res<()> {
    let dir = workspace(&[("notes.txt", "old\n")], "")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("a1", "agent", json!({ "prompt": "Replace old with new in notes.txt" })),
        Turn::new().tool_call("x1", "read", json!({ "file_path": "notes.txt" })),
        Turn::new().tool_call(
            "x2",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "old", "new_string": "new" }),
        ),
        Turn::reply("Replaced."),
        Turn::reply("The sub-agent replaced it."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
    let id = session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &id, "update the notes")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0]["sessionId"], json!(id));
    assert_eq!(asks[0]["toolCall"]["toolCallId"], "a1.c2");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).map_err(|e| e.to_string())?, "new\n");
    assert_eq!(last_tool_result(&provider, 4), "Replaced.");
    Ok(())
}

#[test]
fn a_background_sub_agent_reports_through_agent_status() -> Res<()> {
    let dir = workspace(&[], "")?;
    // After the `agent` call the parent and the sub-agent each ask for a turn, in either order:
    // both get the same scripted reply, so the order does not matter.
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "a1",
            "agent",
            json!({ "prompt": "Count the files", "agent_type": "explore", "run_in_background": true }),
        ),
        Turn::reply("There are 0 files."),
        Turn::reply("There are 0 files."),
        Turn::new().tool_call("s1", "agent_status", json!({ "agent_id": "a1" })),
        Turn::new().tool_call("s2", "agent_status", json!({ "agent_id": "a9" })),
        Turn::reply("ok"),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, &[])?;
    let id = session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &id, "count in the background")?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while provider.requests().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The parent's second request (index 1 or 2: the other is the sub-agent's first) says it runs.
    let running = (1..=2).map(|i| last_tool_result(&provider, i)).collect::<Vec<_>>();
    assert!(running.iter().any(|r| r.contains("Sub-agent `a1` (explore) is still running")), "{running:?}");
    prompt(&mut sidecar, &id, "is it done?")?;
    assert_eq!(last_tool_result(&provider, 4), "There are 0 files.");
    assert!(last_tool_result(&provider, 5).contains("no sub-agent `a9`"));
    Ok(())
}
