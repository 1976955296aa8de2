//! The VS Code extension (editors/vscode): its unit tests under Node, and the packaged `.vsix` in
//! a real VS Code workbench (code-server + Chromium, driven by playwright-core) against the real
//! sidecar and the scripted provider. `.ci/install-vscode.sh` installs code-server and Chromium;
//! without them these tests fail when `TANDEM_REQUIRE_EDITORS=1` (CI) and are skipped loudly
//! otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::foresight::{PREVIEW, project};
use crate::lsp_proxy::require;
use crate::support::{Res, editor_missing, repo_root, tandem_bin};

fn extension_dir() -> PathBuf {
    repo_root().join("editors/vscode")
}

/// `Ok(false)` (after a loud message) when a prerequisite is missing and CI did not ask for it.
fn prerequisite(ok: bool, what: &str) -> Res<bool> {
    if !ok {
        editor_missing(&format!("{what} (run `bash .ci/install-vscode.sh` and `npm install`)"))?;
    }
    Ok(ok)
}

fn code_server() -> PathBuf {
    std::env::var_os("TANDEM_CODE_SERVER_DIR")
        .map_or_else(
            || {
                let home = std::env::var_os("HOME").unwrap_or_default();
                Path::new(&home).join(".cache/tandem/code-server-4.100.3")
            },
            PathBuf::from,
        )
        .join("node_modules/.bin/code-server")
}

fn run(command: &mut Command, what: &str) -> Res<String> {
    let output = command.output().map_err(|e| format!("{what}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(format!("{what} failed ({}):\n{text}", output.status));
    }
    Ok(text)
}

#[test]
fn extension_unit_tests_pass() -> Res<()> {
    if !prerequisite(repo_root().join("node_modules/esbuild").exists(), "node_modules (npm install)")? {
        return Ok(());
    }
    let out =
        run(Command::new("npm").args(["run", "-s", "test:unit"]).current_dir(extension_dir()), "npm run test:unit")?;
    eprintln!("{out}");
    // node --test prints "# pass N" / "# fail N"; a run that found no tests must not pass.
    let count = |key: &str| {
        out.lines().find_map(|l| l.strip_prefix(key).and_then(|n| n.trim().parse::<u32>().ok())).unwrap_or(0)
    };
    assert_eq!(count("# fail "), 0, "{out}");
    assert!(count("# pass ") >= 10, "expected the unit tests to run:\n{out}");
    Ok(())
}

/// Whether the workbench tests can run: `Ok(false)` (after a loud message) when something is missing.
fn workbench_prerequisites() -> Res<bool> {
    Ok(prerequisite(code_server().exists(), "code-server 4.100.3")?
        && prerequisite(Path::new("/usr/bin/chromium").exists(), "Debian's chromium")?
        && prerequisite(repo_root().join("node_modules/playwright-core").exists(), "node_modules (npm install)")?)
}

/// Runs `test/e2e/<script>` against the packaged extension in code-server. The workbench tests take
/// turns: they share the `.vsix` (packaged once) and each starts a code-server and a Chromium.
fn run_workbench_script(script: &str, workspace: &Path, provider: &FakeProvider, extra: &[(&str, &str)]) -> Res<()> {
    static PACKAGED: OnceLock<Result<(), String>> = OnceLock::new();
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    PACKAGED
        .get_or_init(|| {
            run(
                Command::new("npm").args(["run", "-s", "package"]).current_dir(extension_dir()),
                "npm run package (vsce)",
            )
            .map(drop)
        })
        .clone()?;
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let out_dir = repo_root().join("target/vscode-e2e").join(script.trim_end_matches(".mjs"));
    let mut command = Command::new("node");
    command
        .arg(extension_dir().join("test/e2e").join(script))
        .current_dir(repo_root())
        .env("CODE_SERVER", code_server())
        .env("VSIX", extension_dir().join("tandem.vsix"))
        .env("WORKSPACE", workspace)
        .env("TANDEM_BIN", tandem_bin())
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("PROVIDER_URL", provider.base_url())
        .env("OUT_DIR", &out_dir);
    for (key, value) in extra {
        command.env(key, value);
    }
    let node = command.output().map_err(|e| format!("node: {e}"))?;
    let log = format!("{}{}", String::from_utf8_lossy(&node.stdout), String::from_utf8_lossy(&node.stderr));
    eprintln!("{log}");
    if !node.status.success() {
        return Err(format!("the VS Code run failed (screenshots in {}):\n{log}", out_dir.display()));
    }
    Ok(())
}

#[test]
fn review_in_a_real_vscode_applies_exactly_the_accepted_hunk() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }

    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    // Two changes far enough apart (more than twice the diff context) to be two hunks.
    let original = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b  # TODO\n\n\n\
                    def div(a, b):\n    return a / b\n\n\ndef neg(a):\n    return -a\n\n\n\
                    def mul(a, b):\n    return a + b  # wrong\n";
    std::fs::write(workspace.path().join("calc.py"), original).map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("I'll fix both functions.").tool_call("c1", "read", json!({ "file_path": "calc.py" })),
        Turn::new().tool_call(
            "c2",
            "multiedit",
            json!({ "file_path": "calc.py", "edits": [
                { "old_string": "    return a - b  # TODO\n", "new_string": "    return a - b\n" },
                { "old_string": "    return a + b  # wrong\n", "new_string": "    return a * b\n" },
            ] }),
        ),
        Turn::reply("Kept the second fix; the first was rejected."),
        // In auto-edit a command that would ask runs in the workspace-write sandbox without
        // asking; one the model asks to run outside the sandbox still asks.
        Turn::new().tool_call("c3", "bash", json!({ "command": "touch made-by-tandem.txt", "sandbox": false })),
        Turn::reply("Created it."),
        Turn::new().tool_call(
            "c4",
            "question",
            json!({ "questions": [{ "question": "Which greeting style?", "header": "Style", "multiSelect": false,
                "options": [{ "label": "formal", "description": "Good day" }, { "label": "casual", "description": "Hey" }] }] }),
        ),
        Turn::reply("Casual it is."),
        Turn::new().tool_call(
            "c5",
            "edit",
            json!({ "file_path": "calc.py", "old_string": "    return a / b\n",
                "new_string": "    if b == 0:\n        raise ZeroDivisionError(\"b\")\n    return a / b\n" }),
        ),
        Turn::reply("Left div alone."),
        Turn::hang(),
        Turn::reply("Saw the selection."),
        Turn::status(401),
    ]);
    run_workbench_script("review.mjs", workspace.path(), &provider, &[])?;

    let expected = original.replace("    return a + b  # wrong\n", "    return a * b\n");
    let disk = std::fs::read_to_string(workspace.path().join("calc.py")).map_err(|e| e.to_string())?;
    assert_eq!(disk, expected, "the file must hold exactly the accepted hunk");
    // The model was told which hunk the person rejected.
    let requests = provider.requests();
    let third = requests.get(2).ok_or("no third provider request")?;
    assert!(third.body.to_string().contains("h1"), "the tool result must name the rejected hunk: {}", third.body);
    assert!(workspace.path().join("made-by-tandem.txt").exists(), "the approved command must have run");
    let answer = requests.get(6).ok_or("no request after the question")?;
    assert!(answer.body.to_string().contains("A: casual"), "the answer must reach the model: {}", answer.body);
    let closed = requests.get(8).ok_or("no request after the closed review")?;
    assert!(closed.body.to_string().contains("rejected"), "a closed review is a rejection: {}", closed.body);
    let asked = requests.get(10).ok_or("no request for Ask…")?.body.to_string();
    assert!(
        asked.contains("Explain the selection") && asked.contains("def neg(a)"),
        "the selection must reach the model: {asked}"
    );
    assert_eq!(requests.len(), 12, "after the cancelled turn: Ask… and the failing one");
    Ok(())
}

#[test]
fn ask_from_the_palette_before_the_panel_was_opened_shows_each_message_once() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("notes.txt"), "nothing to see\n").map_err(|e| e.to_string())?;
    // The answer streams in small pieces while the panel's webview starts, so any message posted both
    // live and again on the webview's "ready" shows up as a repeated or garbled piece of text.
    let chunks = ["Hello", " from", " the", " scripted", " model,", " in", " nine", " small", " pieces."];
    let turn = chunks.iter().fold(Turn::new(), |turn, chunk| turn.text(*chunk)).chunk_delay(Duration::from_millis(30));
    let provider = FakeProvider::start_blocking(vec![turn]);
    let answer = chunks.concat();
    run_workbench_script(
        "ask-first.mjs",
        workspace.path(),
        &provider,
        &[("PROMPT", "Say hello"), ("ANSWER", &answer)],
    )?;
    assert_eq!(provider.requests().len(), 1, "one prompt, one request");
    Ok(())
}

#[test]
fn checkpoints_in_a_real_vscode_compare_restore_keeping_the_person_s_edit_undo_and_compact() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    // Two changes far enough apart (more than twice the diff context) to be two hunks.
    let original = "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n\n\n\
                    def two():\n    return 2\n\n\ndef mul(a, b):\n    return a / b\n";
    std::fs::write(workspace.path().join("calc.py"), original).map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("util.py"), "x = 1\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("Looking.").tool_call("c1", "read", json!({ "file_path": "calc.py" })),
        Turn::new().tool_call(
            "c2",
            "edit",
            json!({ "file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b" }),
        ),
        Turn::reply("Fixed add.").usage(1200, 30),
        Turn::new().tool_call(
            "c3",
            "edit",
            json!({ "file_path": "calc.py", "old_string": "return a / b", "new_string": "return a * b" }),
        ),
        Turn::reply("Fixed mul."),
    ]);
    // A compaction's summary, whenever it is asked for.
    provider.answer_when(
        |body| body.to_string().contains("<transcript>"),
        Turn::reply("## Goal\nFix calc.py.\n## Done\nadd fixed."),
    );
    run_workbench_script("checkpoints.mjs", workspace.path(), &provider, &[])?;
    let disk = std::fs::read_to_string(workspace.path().join("calc.py")).map_err(|e| e.to_string())?;
    assert_eq!(disk, original.replace("return a - b", "return a + b"), "undo of turn 2 leaves turn 1's fix");
    let util = std::fs::read_to_string(workspace.path().join("util.py")).map_err(|e| e.to_string())?;
    assert_eq!(util, "x = 5\n", "the person's own edit is kept");
    Ok(())
}

#[test]
fn code_blocks_copy_and_insert_and_a_selection_added_to_the_chat_reaches_the_model() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("notes.txt"), "first line\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::reply("Here is sub:\n\n```python\ndef sub(a, b):\n    return a - b\n```\n"),
        Turn::reply("Saw the line."),
    ]);
    run_workbench_script("context.mjs", workspace.path(), &provider, &[])?;
    let notes = std::fs::read_to_string(workspace.path().join("notes.txt")).map_err(|e| e.to_string())?;
    assert_eq!(notes.matches("def sub(a, b):\n    return a - b").count(), 2, "inserted and pasted: {notes}");
    let requests = provider.requests();
    let asked = requests.get(1).ok_or("no request for the second prompt")?.body.to_string();
    assert!(
        asked.contains("what is this line?") && asked.contains("first line") && asked.contains("notes.txt#L1-L1"),
        "the selected line must reach the model with the prompt: {asked}"
    );
    Ok(())
}

#[test]
fn an_image_pasted_dropped_and_added_from_the_explorer_in_a_real_vscode_reaches_the_model() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("shot.png"), crate::images::PNG).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(workspace.path().join(".tandem")).map_err(|e| e.to_string())?;
    // The scripted model takes images here (a local vision model, say).
    std::fs::write(workspace.path().join(".tandem/config.toml"), "[provider]\nimages = true\n")
        .map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Three red pictures.")]);
    run_workbench_script("images.mjs", workspace.path(), &provider, &[])?;
    let requests = provider.requests();
    let request = requests.first().ok_or("no request")?;
    // Checked against OpenAI's format: `image_url` parts with data URLs in a user message.
    let images = request.images()?;
    let sizes: Vec<(u32, u32)> = images
        .iter()
        .map(|i| {
            let be = |at: usize| i.bytes.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            (be(16), be(20))
        })
        .collect();
    assert_eq!(sizes, [(1, 1), (4, 3), (5, 2)], "shot.png from the explorer, the pasted and the dropped image");
    assert_eq!(images[0].bytes, crate::images::PNG);
    assert!(images.iter().all(|i| i.media_type == "image/png"));
    Ok(())
}

/// The workspace config `config` plus pyright named by its path: code-server gives the extension
/// host the login shell's PATH, not the test's.
fn with_pyright(config: &str) -> String {
    let pyright = repo_root().join("node_modules/.bin/pyright-langserver");
    format!("{config}[lsp.pyright]\ncommand = [{:?}, \"--stdio\"]\n", pyright.display().to_string())
}

/// The change the scripted model proposes in the preview tests: a return type it breaks.
fn return_a_string() -> Vec<Turn> {
    vec![
        Turn::new().tool_call(
            "c1",
            "edit",
            json!({ "file_path": "shop/main.py", "old_string": "    return total\n", "new_string": "    return \"total\"\n" }),
        ),
        Turn::reply("Left it."),
    ]
}

#[test]
fn a_review_shows_pyright_s_preview_as_squiggles_and_a_summary_and_clears_it_when_it_ends() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(&with_pyright(PREVIEW))?;
    let provider = FakeProvider::start_blocking(return_a_string());
    run_workbench_script("preview.mjs", &root, &provider, &[])?;
    let main = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
    assert!(main.contains("    return total\n"), "the rejected change was not written: {main}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "the edit, then the answer after the rejection");
    Ok(())
}

#[test]
fn a_preview_that_is_not_ready_shows_as_such_in_vscode_never_as_no_problems() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    // One millisecond: pyright cannot even start.
    let (_dir, root) = project(&with_pyright("[review]\npreview_timeout_ms = 1\n"))?;
    let provider = FakeProvider::start_blocking(return_a_string());
    run_workbench_script("preview.mjs", &root, &provider, &[("EXPECT", "notReady")])?;
    let main = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
    assert!(main.contains("    return total\n"), "the rejected change was not written: {main}");
    Ok(())
}

#[test]
fn panel_tool_cards_code_blocks_apply_and_mentions_in_a_real_vscode() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("a.txt"), "first\nold line\nlast\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "c1",
            "bash",
            json!({ "command": "echo checking; echo one; echo boom >&2; exit 3", "description": "run the checks" }),
        ),
        Turn::new().tool_call(
            "c2",
            "edit",
            json!({ "file_path": "a.txt", "old_string": "old line", "new_string": "new line" }),
        ),
        Turn::new().tool_call(
            "c3",
            "question",
            json!({ "questions": [{ "question": "Which greeting style?", "header": "Style", "multiSelect": false,
                "options": [{ "label": "formal", "description": "Good day" }, { "label": "casual", "description": "Hey" }] }] }),
        ),
        Turn::reply("All done."),
        Turn::reply("Like this:\n\n```python\ndef add(a, b):\n    return a + b\n```\n"),
        Turn::reply("Saw the problems."),
    ]);
    std::fs::write(workspace.path().join("bad.json"), "{\n  \"a\": 1,,\n}\n").map_err(|e| e.to_string())?;
    let calc = "import math\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
    std::fs::write(workspace.path().join("calc.py"), calc).map_err(|e| e.to_string())?;
    run_workbench_script("panel.mjs", workspace.path(), &provider, &[])?;
    let disk = std::fs::read_to_string(workspace.path().join("a.txt")).map_err(|e| e.to_string())?;
    assert_eq!(disk, "first\nnew line\nlast\n");
    let applied = std::fs::read_to_string(workspace.path().join("calc.py")).map_err(|e| e.to_string())?;
    assert_eq!(applied, calc.replace("a - b", "a + b"), "Apply to file changes add only");
    let requests = provider.requests();
    let mentioned = requests.get(5).ok_or("no request for the prompt with mentions")?.body.to_string();
    assert!(
        mentioned.contains("tandem://problems")
            && mentioned.contains("bad.json")
            && mentioned.contains("first\\nnew line"),
        "@problems (with bad.json's error) and @a.txt (its text) must reach the model: {mentioned}"
    );
    assert_eq!(requests.len(), 6, "three prompts; the first one's four model turns");
    Ok(())
}

#[test]
fn at_a_symbol_a_web_address_and_the_terminal_in_a_real_vscode_reach_the_model() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(&with_pyright(""))?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Explained.")]);
    run_workbench_script("mentions.mjs", &root, &provider, &[])?;
    let requests = provider.requests();
    let asked = requests.first().ok_or("no request for the prompt")?.body.to_string();
    // `@increment`: pyright found it through the sidecar, and its definition went along.
    assert!(
        asked.contains("counter.py#L7-L9")
            && asked.contains("def increment(self) -> int:\\n        self.count += 1\\n        return self.count"),
        "the definition of increment must reach the model: {asked}"
    );
    // `@https://example.com/x`: a link the model is told it may fetch.
    assert!(
        asked.contains("[attached: https://example.com/x (https://example.com/x); a web page: fetch it with webfetch"),
        "the address must reach the model as an attachment: {asked}"
    );
    // `@terminal`: the command run in the terminal and its output (from the shell integration, or
    // the terminal's text when VS Code did not pass the output on).
    let terminal = asked.split("tandem://terminal").nth(1).and_then(|t| t.split("</attached>").next()).unwrap_or("");
    eprintln!("@terminal sent: {terminal}");
    assert!(
        asked.contains("tandem://terminal") && asked.contains("tandem-42"),
        "the terminal's command and output must reach the model: {asked}"
    );
    assert_eq!(requests.len(), 1);
    Ok(())
}

#[test]
fn the_model_dropdown_and_choose_model_in_a_real_vscode_switch_the_model_of_the_next_request() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    // An empty workspace: the model picker needs no files.
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::reply("First answer."),
        Turn::reply("Second answer."),
        Turn::reply("Third answer."),
        Turn::reply("Fourth answer."),
    ]);
    provider.list_models(&["gpt-4.1", "gpt-4o-mini"]);
    run_workbench_script("models.mjs", workspace.path(), &provider, &[])?;
    let models: Vec<_> = provider.requests().iter().map(|r| r.body["model"].clone()).collect();
    assert_eq!(
        models,
        [json!("scripted"), json!("gpt-4o-mini"), json!("gpt-4.1"), json!("gpt-4.1")],
        "the configured model, the dropdown's, Choose Model…'s, and the new session's"
    );
    Ok(())
}

#[test]
fn a_project_command_completes_in_the_panel_and_its_arguments_reach_the_model_expanded() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join("notes.txt"), "first line\n").map_err(|e| e.to_string())?;
    std::fs::create_dir_all(workspace.path().join(".tandem/commands")).map_err(|e| e.to_string())?;
    std::fs::write(
        workspace.path().join(".tandem/commands/review.md"),
        "---\ndescription: Review a file for one concern\nargument-hint: <file> <concern>\n---\nReview $1 for $2 only.\n",
    )
    .map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Reviewed.")]);
    run_workbench_script("commands.mjs", workspace.path(), &provider, &[])?;
    let asked = provider.requests().first().ok_or("no request")?.body["messages"].to_string();
    assert!(asked.contains("Review notes.txt for naming only."), "the expanded command must reach the model: {asked}");
    Ok(())
}

#[test]
fn an_accepted_hunk_lands_where_it_was_reviewed_or_not_at_all_while_the_person_types_in_vscode() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let original = "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n\n\n\
                    def div(a, b):\n    return a / b\n";
    std::fs::write(workspace.path().join("calc.py"), original).map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "calc.py" })),
        Turn::new().tool_call(
            "c2",
            "edit",
            json!({ "file_path": "calc.py", "old_string": "return a / b", "new_string": "return a // b" }),
        ),
        Turn::reply("Done with the division."),
        Turn::new().tool_call("c3", "read", json!({ "file_path": "calc.py" })),
        Turn::new().tool_call(
            "c4",
            "edit",
            json!({ "file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b" }),
        ),
        Turn::reply("Left it."),
    ]);
    let above = format!("# note\n{}", original.replace("return a / b", "return a // b"));
    run_workbench_script("landing.mjs", workspace.path(), &provider, &[("EXPECT_ABOVE", &above)])?;
    let disk = std::fs::read_to_string(workspace.path().join("calc.py")).map_err(|e| e.to_string())?;
    assert_eq!(
        disk,
        above.replace("return a - b\n", "return a - b  # mine\n"),
        "only the person's own edit after the refusal"
    );
    Ok(())
}

#[test]
fn an_accepted_hunk_lands_after_typing_below_an_undo_an_outside_write_and_a_save_that_reformats_in_vscode() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let original = "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n\n\n\
                    def div(a, b):\n    return a / b\n";
    // A save participant that changes the text as it is saved (as a formatter on save does).
    std::fs::create_dir_all(workspace.path().join(".vscode")).map_err(|e| e.to_string())?;
    std::fs::write(workspace.path().join(".vscode/settings.json"), r#"{ "files.trimTrailingWhitespace": true }"#)
        .map_err(|e| e.to_string())?;
    let mut script = Vec::new();
    for n in 1..=4 {
        let file = format!("calc{n}.py");
        std::fs::write(workspace.path().join(&file), original).map_err(|e| e.to_string())?;
        script.push(Turn::new().tool_call(format!("r{n}"), "read", json!({ "file_path": file })));
        script.push(Turn::new().tool_call(
            format!("e{n}"),
            "edit",
            json!({ "file_path": file, "old_string": "return a / b", "new_string": "return a // b" }),
        ));
        script.push(Turn::reply(format!("Done with {file}.")));
    }
    let provider = FakeProvider::start_blocking(script);
    run_workbench_script("landing-more.mjs", workspace.path(), &provider, &[])?;
    let divided = original.replace("return a / b", "return a // b");
    for (n, case, expected) in [
        (1, "below", format!("{divided}# end")),
        (2, "undo", divided.clone()),
        (3, "outside", format!("# outside\n{divided}")),
        (4, "formatter", format!("# note\n{divided}")),
    ] {
        let disk = std::fs::read_to_string(workspace.path().join(format!("calc{n}.py"))).map_err(|e| e.to_string())?;
        assert_eq!(disk, expected, "{case}: the bytes on disk");
    }
    Ok(())
}

#[test]
fn a_resumed_session_renders_in_a_fresh_vscode_exactly_as_it_did_live() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let calc = "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n\n\n\
                def mul(a, b):\n    return a / b\n";
    std::fs::write(workspace.path().join("calc.py"), calc).map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "c1",
            "bash",
            json!({ "command": "echo 'FAILED (failures=1)'; exit 1", "sandbox": false }),
        ),
        Turn::reply("The tests failed."),
        crate::nvim::fix_add_and_mul(),
        Turn::reply("Fixed what you accepted."),
        Turn::reply("Hello again."),
    ]);
    // The prompt the person cancels is never answered (whenever its request comes).
    provider.answer_when(
        |body| {
            body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m.to_string().contains("think hard about calc"))
        },
        Turn::hang(),
    );
    run_workbench_script("replay.mjs", workspace.path(), &provider, &[])?;
    let disk = std::fs::read_to_string(workspace.path().join("calc.py")).map_err(|e| e.to_string())?;
    assert_eq!(disk, calc.replace("return a - b", "return a + b"), "exactly the accepted hunk landed");
    Ok(())
}

#[test]
fn review_worktree_in_a_real_vscode_lists_the_worktrees_and_brings_one_over_through_the_review() -> Res<()> {
    if !workbench_prerequisites()? {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = crate::worktree_review::editors_fixture(dir.path())?;
    // New sessions work in the worktree `side` (the workspace's own settings say so).
    std::fs::create_dir_all(repo.join(".vscode")).map_err(|e| e.to_string())?;
    std::fs::write(repo.join(".vscode/settings.json"), r#"{ "tandem.worktree": "side" }"#)
        .map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Hello from the worktree.")]);
    let env = crate::worktree_review::env_of(&repo);
    let state = env.iter().find(|(k, _)| k == "TANDEM_STATE_HOME").map(|(_, v)| v.as_str()).unwrap_or_default();
    run_workbench_script("worktree.mjs", &repo, &provider, &[("TANDEM_STATE_HOME", state)])?;
    let keep = std::fs::read_to_string(repo.join("keep.txt")).map_err(|e| e.to_string())?;
    let expected = crate::worktree_review::numbered(1, 20)
        .replace("line 2\n", "line two\n")
        .replace("line 19\n", "line nineteen\n");
    assert_eq!(keep, expected);
    assert_eq!(std::fs::read_to_string(repo.join("new.txt")).map_err(|e| e.to_string())?, "new\n");
    assert!(!repo.join("gone.txt").exists());
    Ok(())
}
