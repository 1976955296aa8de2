//! Tidy checks over the source text, as rust-analyzer's `tidy.rs` does: cheap greps that keep
//! the shape ARCHITECTURE.md promises.
//!
//! - The seams are typed: production code has at most [`MAX_STRING_RESULTS`] `Result<_, String>`
//!   (lines and paths that mention `test` are left out, as the measure
//!   always was: `grep -rn "Result<[^>]*, String>" server --include=*.rs | grep -v test`), and none in the traits
//!   every door implements (`EditorClient`, `SessionHost`).
//! - A tool's spec is derived: tools declare `TypedTool::DECL` and `Args`; only the tool API's
//!   `Typed` holds a spec, and only a tool whose spec comes from elsewhere (an MCP server's)
//!   implements `Tool::spec` by hand; `schema_for::<…>()` is called by the tool API alone.

use std::path::{Path, PathBuf};

type Res<T> = Result<T, String>;

/// The `Result<_, String>` left in production code: the binary's command-line parsing and its
/// sandbox launcher, and the language-server catalog's settings errors.
const MAX_STRING_RESULTS: usize = 9;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir` (fuzz targets and build output left out).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Res<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "fuzz" {
                rust_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether `line` declares a `Result<…, String>` (the error type right before the closing `>`).
fn is_string_result(line: &str) -> bool {
    let mut rest = line;
    while let Some(at) = rest.find("Result<") {
        let after = &rest[at + "Result<".len()..];
        let Some(close) = after.find('>') else { return false };
        if after[..close].ends_with(", String") {
            return true;
        }
        rest = after;
    }
    false
}

/// The lines of `server/` with a `Result<_, String>`, as `path:line: text`.
fn string_results(server: &Path) -> Res<Vec<String>> {
    let mut files = Vec::new();
    rust_files(server, &mut files)?;
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (n, line) in text.lines().enumerate() {
            let shown = file.strip_prefix(server).unwrap_or(&file).display().to_string();
            let at = format!("server/{shown}:{}: {}", n + 1, line.trim());
            if is_string_result(line) && !at.contains("test") {
                found.push(at);
            }
        }
    }
    Ok(found)
}

#[test]
fn the_seams_are_typed_errors_not_strings() -> Res<()> {
    let found = string_results(&repo_root().join("server"))?;
    assert!(
        found.len() <= MAX_STRING_RESULTS,
        "{} `Result<_, String>` in production code (at most {MAX_STRING_RESULTS}): give the error a thiserror \
         enum whose variants a caller can match:\n{}",
        found.len(),
        found.join("\n")
    );
    let seams = ["tool-api/src/editor.rs", "tool-api/src/session.rs"];
    let in_seams: Vec<&String> = found.iter().filter(|f| seams.iter().any(|s| f.contains(s))).collect();
    assert!(in_seams.is_empty(), "the traits every door implements return typed errors: {in_seams:?}");
    Ok(())
}

#[test]
fn a_string_result_is_found_where_the_error_type_is_string() {
    assert!(is_string_result("fn f() -> Result<(), String> {"));
    assert!(!is_string_result("fn f() -> Result<String, EditorError> {"));
    assert!(!is_string_result("fn f() -> Result<Map<String, Value>, Invalid> {"));
}

/// The files that may implement `Tool::spec` or call `schema_for` by hand.
const SPEC_HOLDERS: [&str; 2] = ["server/tool-api/src/tool.rs", "server/mcp/src/tool.rs"];

#[test]
fn every_tool_spec_is_derived_from_its_declaration() -> Res<()> {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("server"), &mut files)?;
    let mut found = Vec::new();
    for file in files {
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        if SPEC_HOLDERS.contains(&shown.as_str()) || shown.ends_with("tool-api/src/schema.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{shown}: {e}"))?;
        for (n, line) in text.lines().enumerate() {
            if line.contains("fn spec(&self) -> &ToolSpec")
                || line.contains(" schema_for::<")
                || line.contains("(schema_for::<")
            {
                found.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a tool's spec is derived from `TypedTool::DECL` and its `Args` (register it with `typed`), never \
         written by hand:\n{}",
        found.join("\n")
    );
    Ok(())
}
