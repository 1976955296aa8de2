//! File tools through the LSP front door: unsaved buffers, edits through the editor, atomic
//! disk writes, staleness, confinement.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Res, SaveAnswer, Sidecar};

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Res<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    fs::write(path, bytes).map_err(|e| e.to_string())
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
}

fn ok(result: &Value) -> Res<()> {
    match result["error"].as_str() {
        None => Ok(()),
        Some(error) => Err(format!("tool failed: {error}")),
    }
}

fn error(result: &Value) -> String {
    result["error"].as_str().unwrap_or("<no error>").to_owned()
}

fn workspace() -> Res<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws").canonicalize().or_else(|_| {
        fs::create_dir_all(dir.path().join("ws"))?;
        dir.path().join("ws").canonicalize()
    });
    let root = root.map_err(|e| e.to_string())?;
    Ok((dir, root))
}

#[test]
fn read_sees_unsaved_editor_text() -> Res<()> {
    let (_dir, root) = workspace()?;
    write(&root.join("src/main.rs"), "fn main() {}\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.open("src/main.rs", "fn main() {\n    println!(\"unsaved\");\n}\n")?;
    sidecar.type_change("src/main.rs", (1, 14), (1, 21), "édité 😀")?;
    let result = sidecar.call("read_file", json!({ "file_path": "src/main.rs" }))?;
    ok(&result)?;
    assert_eq!(result["output"], json!("     1\tfn main() {\n     2\t    println!(\"édité 😀\");\n     3\t}\n"));
    assert_eq!(result["metadata"]["source"], json!("editor"));
    assert_eq!(result["metadata"]["version"], json!(2));
    // After didClose the disk is the truth again.
    let uri = sidecar.uri("src/main.rs");
    sidecar.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }))?;
    let result = sidecar.call("read", json!({ "file_path": "src/main.rs" }))?;
    assert_eq!(result["output"], json!("     1\tfn main() {}\n"));
    Ok(())
}

#[test]
fn grep_searches_unsaved_editor_text() -> Res<()> {
    let (_dir, root) = workspace()?;
    write(&root.join("src/main.rs"), "fn main() {}\n")?;
    write(&root.join("src/other.rs"), "// on disk only\n")?;
    // A generated tree with ignore rules: ignored and hidden files are never searched or listed.
    write(&root.join(".gitignore"), "target/\n*.log\n")?;
    for i in 0..50 {
        write(&root.join(format!("gen/m{i}/lib.rs")), format!("pub fn f{i}() {{ let unsaved_marker_not = {i}; }}\n"))?;
        write(&root.join(format!("target/debug/m{i}.rs")), "let unsaved_marker = 0;\n")?;
    }
    write(&root.join("build.log"), "unsaved_marker\n")?;
    write(&root.join(".hidden/secret.rs"), "unsaved_marker\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.open("src/main.rs", "fn main() {\n    let unsaved_marker = 1;\n}\n")?;
    let result = sidecar.call("grep", json!({ "pattern": "unsaved_marker\\b" }))?;
    ok(&result)?;
    assert_eq!(result["output"], json!("src/main.rs:2:    let unsaved_marker = 1;"));
    let disk = sidecar.call("search", json!({ "pattern": "fn main\\(\\) \\{\\}", "output_mode": "count" }))?;
    ok(&disk)?;
    assert_eq!(disk["metadata"]["matches"], json!(0), "{disk}");
    let generated =
        sidecar.call("grep", json!({ "pattern": "unsaved_marker_not", "output_mode": "files_with_matches" }))?;
    assert_eq!(generated["metadata"]["files"], json!(50), "{generated}");
    let globbed = sidecar.call("glob", json!({ "pattern": "**/*.rs" }))?;
    assert_eq!(globbed["metadata"]["count"], json!(52), "{globbed}");
    assert!(!globbed["output"].as_str().unwrap_or_default().contains("target/"));
    Ok(())
}

#[test]
fn edit_of_a_file_on_disk_is_atomic_and_keeps_format() -> Res<()> {
    let (_dir, root) = workspace()?;
    let path = root.join("win.txt");
    write(&path, b"\xEF\xBB\xBFfirst\r\nsecond\r\nthird\r\n")?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    let result = sidecar.call(
        "edit",
        json!({ "file_path": "win.txt", "old_string": "second\nthird", "new_string": "2nd\n3rd\n4th" }),
    )?;
    ok(&result)?;
    assert_eq!(result["metadata"]["strategy"], json!("exact"));
    assert_eq!(result["metadata"]["via"], json!("disk"));
    assert_eq!(fs::read(&path).map_err(|e| e.to_string())?, b"\xEF\xBB\xBFfirst\r\n2nd\r\n3rd\r\n4th\r\n");
    let mode = fs::metadata(&path).map_err(|e| e.to_string())?.permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let leftovers: Vec<_> = fs::read_dir(&root)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| name != ".tandem")
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");

    // Not found and ambiguous are errors that leave the file alone and say where to look.
    write(&root.join("dup.rs"), "let a = 1;\nlet b = 2;\nlet a = 1;\n")?;
    let ambiguous = sidecar
        .call("edit", json!({ "file_path": "dup.rs", "old_string": "let a = 1;", "new_string": "let a = 3;" }))?;
    assert_eq!(
        error(&ambiguous),
        "old_string occurs 2 times in `dup.rs` (starting at lines 1, 3); include more surrounding lines to pick one, or set replace_all to change every exact occurrence"
    );
    let missing =
        sidecar.call("edit", json!({ "file_path": "dup.rs", "old_string": "let c = 2;", "new_string": "x" }))?;
    assert!(error(&missing).contains("closest text is lines 2-2"), "{}", error(&missing));
    let all = sidecar.call(
        "edit",
        json!({ "file_path": "dup.rs", "old_string": "let a = 1;", "new_string": "let a = 3;", "replace_all": true }),
    )?;
    ok(&all)?;
    assert_eq!(read(&root.join("dup.rs")), "let a = 3;\nlet b = 2;\nlet a = 3;\n");
    let noop = sidecar.call("edit", json!({ "file_path": "dup.rs", "old_string": "x", "new_string": "x" }))?;
    assert!(error(&noop).contains("identical"));
    Ok(())
}

#[test]
fn edit_of_an_open_document_goes_through_the_editor() -> Res<()> {
    let (_dir, root) = workspace()?;
    let path = root.join("lib.py");
    write(&path, "def f():\n    return 1\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.save_answer = SaveAnswer::Save;
    // The person has an unsaved change; the agent edits another line of the same buffer.
    sidecar.open("lib.py", "def f():\n    return 1\n")?;
    sidecar.type_change("lib.py", (0, 4), (0, 5), "g")?;
    let result = sidecar
        .call("edit", json!({ "file_path": "lib.py", "old_string": "return 1", "new_string": "return \"ünï\"" }))?;
    ok(&result)?;
    assert_eq!(result["metadata"]["via"], json!("editor"));
    assert!(!result["output"].as_str().unwrap_or_default().contains("did not report"), "{result}");
    let apply =
        sidecar.server_requests.iter().find(|r| r["method"] == "workspace/applyEdit").cloned().unwrap_or_default();
    let edit = &apply["params"]["edit"]["documentChanges"][0];
    assert_eq!(edit["textDocument"]["version"], json!(2), "the edit is pinned to the buffer's version");
    assert_eq!(
        edit["edits"][0]["range"],
        json!({ "start": { "line": 1, "character": 11 }, "end": { "line": 1, "character": 12 } })
    );
    let uri = sidecar.uri("lib.py");
    assert_eq!(sidecar.docs[&uri].text, "def g():\n    return \"ünï\"\n");
    // The editor saved: the disk has the buffer, the person's change included.
    assert_eq!(read(&path), "def g():\n    return \"ünï\"\n");
    let again = sidecar.call("read", json!({ "file_path": "lib.py" }))?;
    assert_eq!(again["metadata"]["version"], json!(3));

    // An editor that cannot save: tandem writes the buffer itself.
    sidecar.save_answer = SaveAnswer::Unsupported;
    let result =
        sidecar.call("edit", json!({ "file_path": "lib.py", "old_string": "def g", "new_string": "def h" }))?;
    ok(&result)?;
    assert_eq!(read(&path), "def h():\n    return \"ünï\"\n");
    assert!(result["output"].as_str().is_some_and(|o| o.contains("tandem wrote it to disk")));
    Ok(())
}

#[test]
fn stale_writes_are_refused() -> Res<()> {
    let (_dir, root) = workspace()?;
    let path = root.join("notes.md");
    write(&path, "one\ntwo\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    ok(&sidecar.call_in("s1", "read", json!({ "file_path": "notes.md" }))?)?;
    // Someone else changes the file on disk.
    write(&path, "one\ntwo\nthree (by a person)\n")?;
    let result =
        sidecar.call_in("s1", "edit", json!({ "file_path": "notes.md", "old_string": "two", "new_string": "2" }))?;
    assert_eq!(
        error(&result),
        "`notes.md` changed since you last read it (on disk); read it again and redo the change on the current content"
    );
    let overwrite = sidecar.call_in("s1", "write", json!({ "file_path": "notes.md", "content": "clobber" }))?;
    assert!(error(&overwrite).contains("changed since you last read it"));
    assert_eq!(read(&path), "one\ntwo\nthree (by a person)\n", "nothing lost");
    // Another session that never read it may not overwrite it blind either.
    let blind = sidecar.call_in("s2", "write", json!({ "file_path": "notes.md", "content": "clobber" }))?;
    assert!(error(&blind).contains("you have not read it in this session"), "{}", error(&blind));
    // Reading again makes the edit possible.
    ok(&sidecar.call_in("s1", "read", json!({ "file_path": "notes.md" }))?)?;
    ok(&sidecar.call_in("s1", "edit", json!({ "file_path": "notes.md", "old_string": "two", "new_string": "2" }))?)?;
    assert_eq!(read(&path), "one\n2\nthree (by a person)\n");
    // A second edit in a row needs no re-read: the session's own write counts as seen.
    ok(&sidecar.call_in("s1", "edit", json!({ "file_path": "notes.md", "old_string": "one", "new_string": "1" }))?)?;

    // The same in the editor: the person types after the agent read.
    sidecar.open("notes.md", "1\n2\nthree (by a person)\n")?;
    ok(&sidecar.call_in("s1", "read", json!({ "file_path": "notes.md" }))?)?;
    sidecar.type_change("notes.md", (0, 0), (0, 0), "typing ")?;
    let result = sidecar.call_in("s1", "append", json!({ "file_path": "notes.md", "content": "four\n" }))?;
    assert!(error(&result).contains("(in the editor)"), "{}", error(&result));
    assert!(!sidecar.server_requests.iter().any(|r| r["method"] == "workspace/applyEdit"));
    Ok(())
}

#[test]
fn confinement_holds_over_the_protocol() -> Res<()> {
    let (dir, root) = workspace()?;
    let outside = dir.path().join("outside.txt");
    write(&outside, "secret")?;
    symlink(&outside, root.join("link")).map_err(|e| e.to_string())?;
    symlink(dir.path(), root.join("up")).map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    let attempts = [
        ("read", json!({ "file_path": "../outside.txt" })),
        ("read", json!({ "file_path": outside.display().to_string() })),
        ("read", json!({ "file_path": "link" })),
        ("write", json!({ "file_path": "link", "content": "pwned" })),
        ("write", json!({ "file_path": "up/outside.txt", "content": "pwned" })),
        ("edit", json!({ "file_path": "up/outside.txt", "old_string": "secret", "new_string": "pwned" })),
        ("append", json!({ "file_path": "/proc/self/root/etc/hostname", "content": "x" })),
        ("write", json!({ "file_path": "up/new.txt", "content": "x" })),
        ("delete", json!({ "file_path": "up/outside.txt" })),
        ("list", json!({ "path": "up" })),
        ("write", json!({ "file_path": "a\u{0}b", "content": "x" })),
        ("write", json!({ "file_path": "x".repeat(5000), "content": "x" })),
        ("write", json!({ "file_path": ".git/hooks/pre-commit", "content": "x" })),
        ("delete", json!({ "file_path": "." })),
    ];
    for (tool, args) in attempts {
        let result = sidecar.call(tool, args.clone())?;
        assert!(result["error"].is_string(), "{tool} {args} was allowed: {result}");
    }
    assert_eq!(read(&outside), "secret");
    assert!(!dir.path().join("new.txt").exists());
    // Deleting the link removes the link, not what it points to.
    ok(&sidecar.call("delete", json!({ "file_path": "link" }))?)?;
    assert_eq!(read(&outside), "secret");
    Ok(())
}

#[test]
fn write_append_delete_list_round_trip() -> Res<()> {
    let (_dir, root) = workspace()?;
    write(&root.join(".gitignore"), "target/\n")?;
    write(&root.join("target/junk.o"), "x")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    ok(&sidecar.call("write", json!({ "file_path": "a/b/c.txt", "content": "hello" }))?)?;
    let appended = sidecar.call("append", json!({ "file_path": "a/b/c.txt", "content": "world\n" }))?;
    ok(&appended)?;
    assert_eq!(read(&root.join("a/b/c.txt")), "hello\nworld\n");
    let listing = sidecar.call("list", json!({ "recursive": true }))?;
    // Nothing of Tandem's own (its journal included) is written into the workspace.
    assert_eq!(listing["output"], json!(".gitignore\na/\na/b/\na/b/c.txt"));
    let pattern = sidecar.call("list_files", json!({ "path": "a", "pattern": "*.txt", "recursive": true }))?;
    assert_eq!(pattern["output"], json!("a/b/c.txt"));
    let not_empty = sidecar.call("delete", json!({ "file_path": "a/b" }))?;
    assert!(error(&not_empty).contains("1 entry"), "{}", error(&not_empty));
    ok(&sidecar.call("delete_file", json!({ "file_path": "a/b/c.txt" }))?)?;
    ok(&sidecar.call("delete", json!({ "file_path": "a/b" }))?)?;
    assert!(!root.join("a/b").exists());
    let binary = root.join("img.png");
    write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")?;
    let result = sidecar.call("read", json!({ "file_path": "img.png" }))?;
    assert_eq!(
        error(&result),
        "`img.png` is a binary file (PNG image, 16 bytes); it cannot be shown or edited as text"
    );
    let missing = sidecar.call("read", json!({ "file_path": "img.jpg" }))?;
    assert_eq!(error(&missing), "`img.jpg` does not exist; did you mean `img.png`?");
    Ok(())
}

#[test]
fn read_windows_long_files_and_cuts_long_lines() -> Res<()> {
    let (_dir, root) = workspace()?;
    let mut text = String::new();
    for i in 1..=2500 {
        text.push_str(&format!("line {i}\n"));
    }
    text.push_str(&"x".repeat(3000));
    text.push('\n');
    write(&root.join("long.txt"), &text)?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    let first = sidecar.call("read", json!({ "file_path": "long.txt" }))?;
    let output = first["output"].as_str().unwrap_or_default();
    assert!(
        output.ends_with("(limit reached: showing lines 1-2000 of 2501; continue with offset=2001)\n"),
        "{}",
        &output[output.len() - 200..]
    );
    let last = sidecar.call("read", json!({ "file_path": "long.txt", "offset": 2501 }))?;
    let output = last["output"].as_str().unwrap_or_default();
    assert!(output.contains("… [line cut: 3000 chars]"));
    assert_eq!(last["metadata"]["cutLines"], json!(1));
    let past = sidecar.call("read", json!({ "file_path": "long.txt", "offset": 9000 }))?;
    assert_eq!(
        error(&past),
        "offset 9000 is past the end of `long.txt`, which has 2501 line(s); use an offset from 1 to 2501"
    );
    let window = sidecar.call("read", json!({ "file_path": "long.txt", "offset": "10", "limit": 2 }))?;
    assert_eq!(
        window["output"],
        json!(
            "    10\tline 10\n    11\tline 11\n\n(limit reached: showing lines 10-11 of 2501; continue with offset=12)\n"
        )
    );
    Ok(())
}

#[test]
fn multiedit_and_apply_patch_span_editor_buffers_and_disk() -> Res<()> {
    let (_dir, root) = workspace()?;
    write(&root.join("open.rs"), "fn a() {}\n")?;
    write(&root.join("closed.rs"), "fn b() {}\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.save_answer = SaveAnswer::Refuse;
    sidecar.open("open.rs", "fn a() {} // unsaved\n")?;
    // A failing second edit: nothing is sent to the editor, nothing written.
    let failed = sidecar.call(
        "multiedit",
        json!({ "edits": [
            { "file_path": "open.rs", "old_string": "fn a()", "new_string": "fn a2()" },
            { "file_path": "closed.rs", "old_string": "fn zzz()", "new_string": "fn b2()" }
        ]}),
    )?;
    assert!(error(&failed).starts_with("edit 2 of 2 failed"), "{}", error(&failed));
    assert!(!sidecar.server_requests.iter().any(|r| r["method"] == "workspace/applyEdit"));
    assert_eq!(read(&root.join("closed.rs")), "fn b() {}\n");
    // Both succeed: the open file through the editor (its unsaved text kept), the other on disk.
    let done = sidecar.call(
        "multiedit",
        json!({ "edits": [
            { "file_path": "open.rs", "old_string": "fn a()", "new_string": "fn a2()" },
            { "file_path": "closed.rs", "old_string": "fn b()", "new_string": "fn b2()" }
        ]}),
    )?;
    ok(&done)?;
    assert!(!done["output"].as_str().unwrap_or_default().contains("did not report"), "{done}");
    let uri = sidecar.uri("open.rs");
    assert_eq!(sidecar.docs[&uri].text, "fn a2() {} // unsaved\n");
    assert_eq!(read(&root.join("open.rs")), "fn a2() {} // unsaved\n", "written by tandem: the editor refused to save");
    assert_eq!(read(&root.join("closed.rs")), "fn b2() {}\n");
    // A patch across both.
    let patch = "--- a/open.rs\n+++ b/open.rs\n@@ -1 +1 @@\n-fn a2() {} // unsaved\n+fn a3() {}\n--- a/closed.rs\n+++ b/closed.rs\n@@ -1 +1 @@\n-fn b2() {}\n+fn b3() {}\n";
    ok(&sidecar.call("apply_patch", json!({ "patch": patch }))?)?;
    assert_eq!(sidecar.docs[&uri].text, "fn a3() {}\n");
    assert_eq!(read(&root.join("closed.rs")), "fn b3() {}\n");
    Ok(())
}

#[test]
fn a_rollback_the_editor_refuses_is_never_reported_as_restored() -> Res<()> {
    let (_dir, root) = workspace()?;
    write(&root.join("one.rs"), "fn one() {}\n")?;
    write(&root.join("two.rs"), "fn two() {}\n")?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.save_answer = SaveAnswer::Save;
    sidecar.open("one.rs", "fn one() {}\n")?;
    sidecar.open("two.rs", "fn two() {}\n")?;
    // The first file's edit is applied, the second's refused, and so is the undo of the first.
    sidecar.apply_answers.extend([true, false, false]);
    let failed = sidecar.call(
        "multiedit",
        json!({ "edits": [
            { "file_path": "one.rs", "old_string": "fn one()", "new_string": "fn uno()" },
            { "file_path": "two.rs", "old_string": "fn two()", "new_string": "fn dos()" }
        ]}),
    )?;
    let message = error(&failed);
    assert!(!message.contains("were restored"), "told restored though the undo failed: {message}");
    assert!(message.contains("could not all be restored") && message.contains("one.rs"), "{message}");
    assert_eq!(sidecar.docs[&sidecar.uri("one.rs")].text, "fn uno() {}\n", "the editor kept the first edit");
    assert_eq!(sidecar.docs[&sidecar.uri("two.rs")].text, "fn two() {}\n");
    // With the undo applied, the same failure restores the first file and says so.
    sidecar.apply_answers.extend([true, false, true]);
    let failed = sidecar.call(
        "multiedit",
        json!({ "edits": [
            { "file_path": "one.rs", "old_string": "fn uno()", "new_string": "fn eins()" },
            { "file_path": "two.rs", "old_string": "fn two()", "new_string": "fn zwei()" }
        ]}),
    )?;
    let message = error(&failed);
    assert!(message.contains("the other files were restored"), "{message}");
    assert_eq!(sidecar.docs[&sidecar.uri("one.rs")].text, "fn uno() {}\n");
    Ok(())
}
