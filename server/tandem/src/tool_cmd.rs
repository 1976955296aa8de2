//! `tandem tool` and `tandem tools`: one tool call from the command line, no model needed, and
//! the tools a workspace offers (built-in and MCP), with their arguments.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use std::path::PathBuf;

use serde_json::{Value, json};
use tandem_protocol::ToolResult;
use tandem_tools::{Effect, Tool};

use crate::workbench::{MCP_READY_WAIT_CLI, Mcp, Options, Root, Workbench, WorkbenchError};

/// How `tandem tool` prints a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Text on a terminal, JSON otherwise (scripts keep getting JSON).
    Auto,
    /// The result's `output`; the error on stderr.
    Text,
    /// The whole result as JSON.
    Json,
}

/// Bad usage: exit status 2 with a message on stderr.
fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("tandem: {message}");
    ExitCode::from(2)
}

/// The project around the current directory (or `--root`) with the workspace's MCP servers
/// started and their tools listed, when `mcp` (starting servers costs time and may start
/// programs, so only the commands that show or call MCP tools do it); [`Workbench::close`]
/// must run after use so the servers' processes end.
async fn open(root: Option<PathBuf>, mcp: bool) -> Result<Workbench, WorkbenchError> {
    let bench = Workbench::open(
        &Root::from_cli(root)?,
        Options { mcp: if mcp { Mcp::Tools } else { Mcp::Off }, ..Options::default() },
    )?;
    bench.say_warnings();
    bench.mcp_ready(MCP_READY_WAIT_CLI).await;
    Ok(bench)
}

fn print_json(value: &impl serde::Serialize) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let written = serde_json::to_writer_pretty(&mut stdout, value).is_ok() && writeln!(stdout).is_ok();
    if written { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn print_text(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).is_ok() && stdout.flush().is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `tandem tool <name> [json]`.
pub async fn run(root: Option<PathBuf>, name: &str, arguments: Option<&str>, output: Output) -> ExitCode {
    let text = match arguments {
        None => "{}".to_owned(),
        Some("-") => {
            let mut text = String::new();
            if let Err(err) = std::io::stdin().read_to_string(&mut text) {
                return usage(format!("cannot read arguments from stdin: {err}"));
            }
            text
        }
        Some(text) => text.to_owned(),
    };
    let arguments: Value = match serde_json::from_str(&text) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => return usage("arguments must be a JSON object, e.g. '{\"file_path\": \"README.md\"}'"),
        Err(err) => return usage(format!("arguments are not valid JSON: {err}")),
    };
    let bench = match open(root, name.starts_with("mcp")).await {
        Ok(bench) => bench,
        Err(err) => return usage(err),
    };
    let outcome = match warm_call(&bench, name, &arguments).await {
        Some(result) => Ok(result),
        None => bench.registry.call(name, arguments, bench.tool_context()).await,
    };
    bench.close().await;
    match outcome {
        Err(err) => usage(format!("{err}; `tandem tools` lists the tools")),
        Ok(result) => {
            let text = match output {
                Output::Auto => std::io::stdout().is_terminal(),
                Output::Text => true,
                Output::Json => false,
            };
            let failed = result.error.is_some();
            let code = if text { print_result_text(&result) } else { print_json(&result) };
            match command_status(&result) {
                // In text, a command's failure is the command's exit status, as from a shell.
                Some(status) if text && !failed => {
                    eprintln!("{}: exit status {status}", result.title);
                    ExitCode::from(status)
                }
                _ if failed => ExitCode::from(1),
                _ => code,
            }
        }
    }
}

/// The call handed to the project's background language servers, when it is an `lsp` call
/// and they are on; `None`: run it here (a failure to reach them is said on stderr).
async fn warm_call(bench: &Workbench, name: &str, arguments: &Value) -> Option<ToolResult> {
    let is_lsp = bench.registry.find(name).is_some_and(|tool| tool.spec().name == crate::warm::TOOL);
    if !is_lsp || crate::warm::idle().is_none() {
        return None;
    }
    match crate::warm::call(bench, arguments).await {
        Ok(result) => Some(result),
        Err(err) => {
            eprintln!("tandem: {err}; starting the language servers for this call only");
            None
        }
    }
}

/// A command's non-zero exit status (`bash` and the script tools' `exitCode`), as a process
/// exit status: 1–255 as it is, anything else (a signal's negative code) 1.
fn command_status(result: &ToolResult) -> Option<u8> {
    let code = result.metadata.get("exitCode").and_then(serde_json::Value::as_i64)?;
    (code != 0).then(|| u8::try_from(code).ok().filter(|c| *c != 0).unwrap_or(1))
}

/// A result as a person reads it: the output on stdout, the error on stderr.
fn print_result_text(result: &ToolResult) -> ExitCode {
    if let Some(error) = &result.error {
        eprintln!("{}: {error}", result.title);
    }
    // A result without output still says what happened (its title), so success is visible.
    let shown = if result.output.is_empty() && result.error.is_none() { &result.title } else { &result.output };
    if shown.is_empty() {
        return ExitCode::SUCCESS;
    }
    let newline = if shown.ends_with('\n') { "" } else { "\n" };
    print_text(&format!("{shown}{newline}"))
}

/// The first sentence of a tool description, on one line, without its final period. A period
/// ends a sentence when a space (or the end) follows it, unless it closes an abbreviation
/// ("e.g. `**/*.rs`") or an ellipsis; a period inside a word ("main.rs") never does.
fn first_sentence(description: &str) -> String {
    const ABBREVIATIONS: [&str; 5] = ["e.g", "i.e", "etc", "vs", "cf"];
    let paragraph = description.split("\n\n").next().unwrap_or_default();
    let mut end = paragraph.len();
    for (i, c) in paragraph.char_indices() {
        if c != '.' {
            continue;
        }
        let rest = &paragraph[i + 1..];
        let before = &paragraph[..i];
        let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or_default();
        let ends = (rest.is_empty() || rest.starts_with(char::is_whitespace))
            && !before.ends_with('.')
            && !ABBREVIATIONS.contains(&word.to_ascii_lowercase().as_str());
        if ends {
            end = i;
            break;
        }
    }
    paragraph[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The effect's word in listings.
fn effect_name(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "read",
        Effect::Network => "network",
        Effect::Session => "session",
        Effect::Files => "files",
        Effect::Commands => "commands",
        Effect::State => "state",
        Effect::External => "external",
    }
}

/// What the default mode does before the tool acts, in a sentence.
fn approval_sentence(effect: Effect) -> String {
    match effect {
        Effect::Read | Effect::Network | Effect::Session => {
            format!("{}: runs without asking.", capitalized(effect.reason()))
        }
        Effect::Commands => {
            "Runs commands: those known to only read run without asking (sandboxed), the others ask first.".to_owned()
        }
        Effect::Files | Effect::State | Effect::External => {
            format!("{}: asks first (in the default mode).", capitalized(effect.reason()))
        }
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Whether the person is asked before the tool acts, in the default mode.
fn approval(effect: Effect) -> &'static str {
    match effect {
        Effect::Read | Effect::Network | Effect::Session => "no",
        // Commands known to only read run (sandboxed) without asking.
        Effect::Commands => "unless read-only",
        Effect::Files | Effect::State | Effect::External => "asks",
    }
}

/// The width to wrap text to: the terminal's (`COLUMNS`) or 100; `None` when stdout is not a
/// terminal, so that piped output keeps one line per tool for `grep`.
fn wrap_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.parse::<usize>().ok());
    Some(columns.unwrap_or(100).max(40))
}

/// `text` broken into lines of at most `width` characters (a longer word gets its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// The aligned table of `tandem tools`.
fn tools_table(tools: &[Arc<dyn Tool>], width: Option<usize>) -> String {
    let headers = ["NAME", "GROUP", "EFFECT", "ASKS", "DESCRIPTION"];
    let rows: Vec<[String; 5]> = tools
        .iter()
        .map(|t| {
            let spec = t.spec();
            let mut description = first_sentence(spec.description);
            if !spec.aliases.is_empty() {
                description.push_str(&format!(" (aliases: {})", spec.aliases.join(", ")));
            }
            [
                spec.name.to_owned(),
                spec.group.as_str().to_owned(),
                effect_name(spec.effect).to_owned(),
                spec.writes_only_in.map_or_else(|| approval(spec.effect).to_owned(), |ops| format!("{ops} asks")),
                description,
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let indent: usize = widths[..4].iter().map(|w| w + 2).sum();
    let mut out = String::new();
    let header = headers.map(str::to_owned);
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (cell, w) in row[..4].iter().zip(widths) {
            line.push_str(&format!("{cell:<w$}  "));
        }
        let description = match width {
            Some(width) => wrap(&row[4], width.saturating_sub(indent).max(30)),
            None => vec![row[4].clone()],
        };
        for (n, part) in description.iter().enumerate() {
            if n > 0 {
                line.push('\n');
                line.push_str(&" ".repeat(indent));
            }
            line.push_str(part);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(
        "\nASKS is what the default mode does: `auto-edit` applies file changes without asking, `plan` blocks every change, `yolo` asks nothing.\n`tandem tool <name> --help` shows a tool's arguments.\n",
    );
    out
}

/// One tool as `tandem tools --json` prints it: the MCP shape (`inputSchema`, `annotations`)
/// plus what Tandem's own listing adds.
fn tool_json(tool: &dyn Tool) -> Value {
    let spec = tool.spec();
    json!({
        "name": spec.name,
        "aliases": spec.aliases,
        "description": spec.description,
        "group": spec.group,
        "effect": effect_name(spec.effect),
        "canWrite": spec.can_write,
        "concurrencySafe": spec.concurrency_safe,
        "inputSchema": spec.parameters,
        "annotations": tandem_mcp::serve::annotations(spec),
    })
}

/// `tandem tools [--json]`.
pub async fn list(root: Option<PathBuf>, as_json: bool) -> ExitCode {
    let bench = match open(root, true).await {
        Ok(bench) => bench,
        Err(err) => return usage(err),
    };
    let tools: Vec<Arc<dyn Tool>> = bench.registry.enabled().collect();
    bench.close().await;
    if as_json {
        print_json(&tools.iter().map(|t| tool_json(t.as_ref())).collect::<Vec<_>>())
    } else {
        print_text(&tools_table(&tools, wrap_width()))
    }
}

/// `tandem tool <name> --help`.
pub async fn help(root: Option<PathBuf>, name: &str) -> ExitCode {
    let bench = match open(root, name.starts_with("mcp")).await {
        Ok(bench) => bench,
        Err(err) => return usage(err),
    };
    let registry = Arc::clone(&bench.registry);
    let tool = registry.find(name);
    bench.close().await;
    let Some(tool) = tool else {
        return usage(format!("{}; `tandem tools` lists the tools", registry.unknown_tool(name)));
    };
    print_text(&tool_help(tool.as_ref(), registry.config().is_enabled(tool.spec()), wrap_width().unwrap_or(100)))
}

/// A tool's description and its arguments as a list a person reads.
fn tool_help(tool: &dyn Tool, enabled: bool, width: usize) -> String {
    let spec = tool.spec();
    let mut out = format!("{} [{}]", spec.name, spec.group.as_str());
    if !spec.aliases.is_empty() {
        out.push_str(&format!(" (aliases: {})", spec.aliases.join(", ")));
    }
    out.push('\n');
    if !enabled {
        out.push_str("(not enabled in this workspace's configuration)\n");
    }
    let asks = match spec.writes_only_in {
        Some(ops) => {
            format!("Only `{ops}` changes files, and asks first (in the default mode); the rest runs without asking.")
        }
        None => approval_sentence(spec.effect),
    };
    out.push_str(&format!("Effect: {}. {asks}\n\n", effect_name(spec.effect)));
    for line in wrap(spec.description, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("\nArguments (a JSON object):\n");
    let mut lines = Vec::new();
    argument_lines(&spec.parameters, "", 1, width, &mut lines);
    if lines.is_empty() {
        lines.push("  (none)".to_owned());
    }
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    let example = spec.example.map_or_else(|| example_arguments(&spec.parameters), str::to_owned);
    out.push_str(&format!("\nExample: tandem tool {} '{example}'\n", spec.name));
    out
}

/// The properties of the object schema `schema`, one entry each: `name (type, required,
/// default …)` then its description, indented; object-valued properties (and arrays of objects)
/// list theirs below, as `parent.child` / `parent[].child`.
fn argument_lines(schema: &Value, prefix: &str, depth: usize, width: usize, out: &mut Vec<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let pad = "  ".repeat(depth);
    // Required arguments first, each part in the schema's order.
    let mut ordered: Vec<(&String, &Value)> = properties.iter().collect();
    ordered.sort_by_key(|(name, _)| !required.contains(&name.as_str()));
    for (name, property) in ordered {
        let mut facts = vec![type_of(property)];
        facts.push(if required.contains(&name.as_str()) { "required".into() } else { "optional".into() });
        if let Some(default) = property.get("default") {
            facts.push(format!("default {default}"));
        }
        for (key, word) in [("minimum", "at least"), ("maximum", "at most")] {
            // A minimum of 0 only says the number is unsigned: nothing a person needs.
            if let Some(bound) = property.get(key).filter(|b| !(key == "minimum" && b.as_f64() == Some(0.0))) {
                facts.push(format!("{word} {bound}"));
            }
        }
        out.push(format!("{pad}{prefix}{name} ({})", facts.join(", ")));
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            let inner = format!("{pad}    ");
            for line in wrap(description, width.saturating_sub(inner.len()).max(30)) {
                out.push(format!("{inner}{line}"));
            }
        }
        let items = property.get("items").filter(|i| i.get("properties").is_some());
        if let Some(items) = items {
            argument_lines(items, &format!("{prefix}{name}[]."), depth + 1, width, out);
        } else if property.get("properties").is_some() {
            argument_lines(property, &format!("{prefix}{name}."), depth + 1, width, out);
        }
    }
}

/// The type of a schema in words: `string`, `integer`, `array of string`, `"a" | "b"`,
/// `string or array of string`.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    if let Some(constant) = schema.get("const") {
        return constant.to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            // An optional argument is simply not given: a `null` alternative says nothing more.
            let is_null =
                |a: &&Value| a.get("const").is_some_and(Value::is_null) || a.get("type") == Some(&json!("null"));
            let alternatives: Vec<&Value> = alternatives.iter().filter(|a| !is_null(a)).collect();
            let constants = alternatives.iter().all(|a| a.get("const").is_some() || a.get("enum").is_some());
            let mut words: Vec<String> = alternatives.iter().map(|a| type_of(a)).collect();
            words.dedup();
            return words.join(if constants { " | " } else { " or " });
        }
    }
    let single = |t: &str| -> String {
        match (t, schema.get("items")) {
            ("array", Some(items)) => format!("array of {}", type_of(items)),
            _ => t.to_owned(),
        }
    };
    match schema.get("type") {
        Some(Value::String(t)) => single(t),
        Some(Value::Array(types)) => {
            types.iter().filter_map(Value::as_str).map(single).collect::<Vec<_>>().join(" or ")
        }
        _ if schema.get("properties").is_some() => "object".to_owned(),
        _ => "any".to_owned(),
    }
}

/// A call's arguments with every required argument filled with a placeholder of its type, so
/// the example is valid JSON the person edits.
fn example_arguments(schema: &Value) -> String {
    let mut example = serde_json::Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for name in required {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        let value = match property.get("enum").and_then(Value::as_array).and_then(|v| v.first()) {
            Some(first) => first.clone(),
            None => match property.get("type").and_then(Value::as_str) {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("..."),
            },
        };
        example.insert(name.to_owned(), value);
    }
    Value::Object(example).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sentence_is_not_cut_at_an_abbreviation_or_a_file_name() {
        assert_eq!(
            first_sentence("Find files by path pattern, e.g. `**/*.rs` or src/**/*.ts. Results are sorted."),
            "Find files by path pattern, e.g. `**/*.rs` or src/**/*.ts"
        );
        assert_eq!(first_sentence("Read main.rs, i.e. The file. then stop."), "Read main.rs, i.e. The file");
        assert_eq!(first_sentence("Types, classes, ... and more. Rest."), "Types, classes, ... and more");
        assert_eq!(first_sentence("One line\nover two. Second."), "One line over two");
        assert_eq!(first_sentence("No period at all"), "No period at all");
        assert_eq!(first_sentence("Ends here."), "Ends here");
        assert_eq!(first_sentence("First paragraph\n\nSecond paragraph."), "First paragraph");
    }

    #[test]
    fn every_builtin_tool_has_a_one_line_summary_that_ends_a_sentence() {
        let registry = tandem_tools::builtin(tandem_tools::ToolConfig::default());
        for tool in registry.enabled() {
            let spec = tool.spec();
            let summary = first_sentence(spec.description);
            assert!(!summary.is_empty() && !summary.contains('\n'), "{}: {summary:?}", spec.name);
            let rest = spec.description.split_whitespace().collect::<Vec<_>>().join(" ");
            let after = rest.strip_prefix(summary.as_str()).unwrap_or("<not a prefix>");
            assert!(after.is_empty() || after.starts_with('.'), "{}: {summary:?} then {after:?}", spec.name);
        }
    }

    #[test]
    fn argument_lists_say_type_requirement_default_and_nest() {
        let schema = json!({
            "type": "object",
            "required": ["file_path", "edits"],
            "properties": {
                "file_path": {"type": "string", "description": "The file."},
                "limit": {"type": "integer", "default": 2000, "minimum": 1},
                "mode": {"enum": ["content", "count"]},
                "sort": {"anyOf": [{"const": "path"}, {"const": "modified"}, {"const": null}]},
                "command": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "edits": {"type": "array", "items": {"type": "object", "required": ["old_string"],
                    "properties": {"old_string": {"type": "string"}}}}
            }
        });
        let mut lines = Vec::new();
        // Depth 0: no indentation, which expect-test would take for the literal's own.
        argument_lines(&schema, "", 0, 80, &mut lines);
        expect_test::expect![[r#"
            edits (array of object, required)
              edits[].old_string (string, required)
            file_path (string, required)
                The file.
            command (string or array of string, optional)
            limit (integer, optional, default 2000, at least 1)
            mode ("content" | "count", optional)
            sort ("path" | "modified", optional)"#]]
        .assert_eq(&lines.join("\n"));
        assert_eq!(example_arguments(&schema), r#"{"edits":[],"file_path":"..."}"#);
    }
}
