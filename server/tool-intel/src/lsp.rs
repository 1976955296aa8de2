//! `lsp`: questions to the real language servers (definition, references, hover, symbols,
//! implementation, call hierarchy, diagnostics) and rename as a staged multi-file change that
//! goes through the normal all-or-nothing commit path.
//!
//! Positions come as 1-based `line` + `column`, as `line` + a substring of that line (`symbol`),
//! or as a `symbol` name path (`Type/method`) resolved through the document's symbols. Every
//! answer starts with the resolved position and its line, then the results grouped by file,
//! workspace-relative, each with its line, capped.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;
use tandem_text::{Lines, Position, PositionEncoding, Rope, position_to_char};
use tandem_tool_api::intel::{
    CallDirection, CodeIntel, DiagnosticsReport, IntelError, Location, Severity, Symbol, TextReplacement,
};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, TypedTool};
use tandem_tool_fs::{
    Change, Loaded, blocking, blocking_sized, check_fresh, commit_all, cut_line_at, diff_metadata, load, load_seen,
    render_report,
};

const DESCRIPTION: &str = "Ask the project's real language server (rust-analyzer, pyright, typescript-language-server, \
    clangd, ...). Operations: definition, references, hover, diagnostics, document_symbols, workspace_symbols (with \
    `query`), implementation, call_hierarchy (`direction` incoming or outgoing), rename (with `new_name`; applied to \
    every file at once, or to none). Give the position as `symbol` — a name path like `Type/method` or `function` \
    found in `file_path` — or as 1-based `line` + `column`, or as `line` + `symbol` (a piece of text on that line). \
    Prefer this over grep to find where a symbol is defined or used.";

/// Results listed at most (the rest are counted).
const MAX_RESULTS: usize = 60;
/// Longest line of context shown with a result.
const MAX_LINE_CHARS: usize = 160;

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum Operation {
    Definition,
    References,
    Hover,
    Diagnostics,
    DocumentSymbols,
    WorkspaceSymbols,
    Implementation,
    CallHierarchy,
    Rename,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Debug, Default)]
#[serde(rename_all = "snake_case")]
enum Direction {
    #[default]
    Incoming,
    Outgoing,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// What to ask.
    operation: Operation,
    /// The file: absolute, or relative to the working directory. Needed by every operation except
    /// workspace_symbols (where it picks the language; default: any running server).
    file_path: Option<String>,
    /// 1-based line of the position.
    line: Option<u32>,
    /// 1-based column (in characters) on `line`.
    column: Option<u32>,
    /// The same as `column` (1-based), under LSP's name for it.
    character: Option<u32>,
    /// A name path like `Type/method` resolved in `file_path`; with `line`, a piece of text on
    /// that line whose start is the position.
    symbol: Option<String>,
    /// workspace_symbols: the name (or part of it) to look for.
    query: Option<String>,
    /// rename: the new name.
    new_name: Option<String>,
    /// references: count the declaration as a reference (default true).
    include_declaration: Option<bool>,
    /// call_hierarchy: `incoming` (callers, default) or `outgoing` (callees).
    direction: Option<Direction>,
}

pub(crate) struct Lsp;

/// A file's text, loaded once per call.
struct Texts {
    ctx: ToolContext,
    loaded: HashMap<PathBuf, Option<Arc<Lines>>>,
}

impl Texts {
    fn new(ctx: &ToolContext) -> Self {
        Self { ctx: ctx.clone(), loaded: HashMap::new() }
    }

    async fn lines(&mut self, path: &Path) -> Option<Arc<Lines>> {
        if let Some(lines) = self.loaded.get(path) {
            return lines.clone();
        }
        let (ctx, owned) = (self.ctx.clone(), path.to_path_buf());
        // Source files are read inline (a hand-off to a blocking thread costs more than the
        // read); the size is only a hint, and the `stat` that gave it is the read's own.
        let seen = std::fs::metadata(path).ok();
        let size = seen.as_ref().map_or(0, std::fs::Metadata::len);
        let lines = blocking_sized(size, move || load_seen(&ctx, &owned, seen))
            .await
            .ok()
            .filter(Loaded::exists)
            .map(|l| Arc::new(Lines::new(l.text)));
        self.loaded.insert(path.to_path_buf(), lines.clone());
        lines
    }

    /// 0-based line `line` of `path`, trimmed and cut.
    async fn line(&mut self, path: &Path, line: u32) -> String {
        let Some(lines) = self.lines(path).await else { return String::new() };
        cut_line_at(lines.line(line as usize).trim(), MAX_LINE_CHARS).0.into_owned()
    }
}

fn tool_error(err: IntelError) -> ToolError {
    let kind = match &err {
        IntelError::NoServer(_) => "noServer",
        IntelError::Timeout(_) => "timeout",
        IntelError::Unsupported(_) => "unsupported",
        IntelError::Server(_) => "server",
    };
    ToolError::new(err.to_string()).with("kind", kind)
}

/// The segments of a name path match a symbol's name: exactly, or as the last part of a
/// qualified name (`impl Counter`, `Counter::add`, `add(int, int)`).
fn name_matches(name: &str, segment: &str) -> bool {
    if name == segment {
        return true;
    }
    let rest = |s: &str| s.is_empty() || s.starts_with(['(', '<', ' ', ':', '[']);
    name.strip_suffix(segment).is_some_and(|head| head.ends_with([' ', ':', '.']))
        || name.strip_prefix(segment).is_some_and(rest)
}

/// Every symbol whose name path ends with `segments` (ancestors matched in order, gaps allowed).
fn find_symbols<'a>(symbols: &'a [Symbol], segments: &[&str], out: &mut Vec<(&'a Symbol, bool)>) {
    fn walk<'a>(symbols: &'a [Symbol], segments: &[&str], matched: usize, out: &mut Vec<(&'a Symbol, bool)>) {
        let last = segments.len() - 1;
        for symbol in symbols {
            let here = name_matches(&symbol.name, segments[matched.min(last)]);
            if here && matched >= last {
                out.push((symbol, symbol.name == segments[last]));
            }
            let next = if here && matched < last { matched + 1 } else { matched };
            walk(&symbol.children, segments, next, out);
        }
    }
    if !segments.is_empty() {
        walk(symbols, segments, 0, out);
    }
}

fn flatten<'a>(symbols: &'a [Symbol], depth: usize, out: &mut Vec<(usize, &'a Symbol)>) {
    for symbol in symbols {
        out.push((depth, symbol));
        flatten(&symbol.children, depth + 1, out);
    }
}

/// The resolved position, and how to show it.
struct At {
    path: PathBuf,
    position: Position,
    line_text: String,
}

async fn resolve_position(
    ctx: &ToolContext,
    intel: &Arc<dyn CodeIntel>,
    texts: &mut Texts,
    path: &Path,
    args: &Args,
) -> Result<At, ToolError> {
    let shown = ctx.workspace.display(path);
    let lines = texts.lines(path).await.ok_or_else(|| ToolError::new(format!("`{shown}` does not exist")))?;
    let position = match (args.line, args.column.or(args.character), args.symbol.as_deref()) {
        (Some(line), Some(column), _) => {
            let (line0, col0) = (line.saturating_sub(1), column.saturating_sub(1));
            if line == 0 || line0 as usize >= lines.len_lines() {
                return Err(ToolError::new(format!(
                    "line {line} is outside `{shown}`, which has {} lines",
                    lines.len_lines()
                )));
            }
            Position { line: line0, character: col0 }
        }
        (Some(line), None, Some(needle)) => {
            let line0 = line.saturating_sub(1);
            if line == 0 || line0 as usize >= lines.len_lines() {
                return Err(ToolError::new(format!(
                    "line {line} is outside `{shown}`, which has {} lines",
                    lines.len_lines()
                )));
            }
            let text = lines.line(line0 as usize);
            let Some(byte) = text.find(needle) else {
                return Err(ToolError::new(format!(
                    "`{needle}` is not on line {line} of `{shown}`, which reads: {}",
                    text.trim_end()
                )));
            };
            Position { line: line0, character: text[..byte].chars().count() as u32 }
        }
        (Some(line), None, None) => {
            return Err(ToolError::new(format!(
                "line {line} needs a `column`, or a `symbol` (a piece of text on that line)"
            )));
        }
        (None, _, Some(name_path)) => {
            let symbols = intel.document_symbols(path).await.map_err(tool_error)?;
            let segments: Vec<&str> = name_path.split(['/', '.']).filter(|s| !s.is_empty()).collect();
            let segments: Vec<&str> = if name_path.contains("::") {
                name_path.split("::").filter(|s| !s.is_empty()).collect()
            } else {
                segments
            };
            let mut found = Vec::new();
            find_symbols(&symbols, &segments, &mut found);
            let exact: Vec<_> = found.iter().filter(|(_, exact)| *exact).collect();
            let chosen = match (found.len(), exact.len()) {
                (0, _) => {
                    let mut all = Vec::new();
                    flatten(&symbols, 0, &mut all);
                    let names: Vec<String> = all.iter().take(40).map(|(_, s)| s.name.clone()).collect();
                    return Err(ToolError::new(format!(
                        "no symbol `{name_path}` in `{shown}`; its symbols are: {}. Use a name path like `Type/method`, or give `line` and `column`",
                        if names.is_empty() { "(none)".to_owned() } else { names.join(", ") }
                    )));
                }
                (1, _) => found[0].0,
                (_, 1) => exact[0].0,
                _ => {
                    let list: Vec<String> = found
                        .iter()
                        .map(|(s, _)| format!("{} {} (line {})", s.kind, s.name, s.selection.start.line + 1))
                        .collect();
                    return Err(ToolError::new(format!(
                        "`{name_path}` matches {} symbols in `{shown}`: {}; name the parent too (`Type/method`) or give `line` and `column`",
                        found.len(),
                        list.join(", ")
                    )));
                }
            };
            chosen.selection.start
        }
        (None, _, None) => {
            return Err(ToolError::new(
                "give the position: `symbol` (a name path like `Type/method`), or `line` + `column`, or `line` + `symbol` (text on that line)",
            ));
        }
    };
    // Clamp the column to the line (chars), as LSP does.
    let line_chars = lines.content(position.line as usize).chars().count() as u32;
    let position = Position { line: position.line, character: position.character.min(line_chars) };
    let line_text = texts.line(path, position.line).await;
    Ok(At { path: path.to_path_buf(), position, line_text })
}

fn echo(ctx: &ToolContext, at: &At) -> String {
    format!(
        "{}:{}:{}: {}",
        ctx.workspace.display(&at.path),
        at.position.line + 1,
        at.position.character + 1,
        at.line_text
    )
}

/// Locations grouped by file, each with its line, capped.
async fn render_locations(ctx: &ToolContext, texts: &mut Texts, locations: &[Location]) -> (String, Value) {
    let mut by_file: BTreeMap<String, Vec<&Location>> = BTreeMap::new();
    for location in locations {
        by_file.entry(ctx.workspace.display(&location.path)).or_default().push(location);
    }
    let mut out = String::new();
    let mut listed = Vec::new();
    let mut shown = 0;
    for (file, mut locations) in by_file {
        locations.sort();
        locations.dedup();
        if shown >= MAX_RESULTS {
            break;
        }
        out.push_str(&format!("{file}\n"));
        for location in locations {
            if shown >= MAX_RESULTS {
                break;
            }
            let start = location.range.start;
            let text = texts.line(&location.path, start.line).await;
            out.push_str(&format!("  {}:{}: {text}\n", start.line + 1, start.character + 1));
            listed.push(json!({ "path": file, "line": start.line + 1, "column": start.character + 1 }));
            shown += 1;
        }
    }
    if locations.len() > shown {
        out.push_str(&format!("… {} more not shown\n", locations.len() - shown));
    }
    (out, Value::Array(listed))
}

fn render_symbol_tree(symbols: &[Symbol]) -> String {
    let mut all = Vec::new();
    flatten(symbols, 0, &mut all);
    let mut out = String::new();
    for (depth, symbol) in all.iter().take(MAX_RESULTS * 3) {
        let detail =
            symbol.detail.as_deref().map(|d| format!(" — {}", d.lines().next().unwrap_or(""))).unwrap_or_default();
        out.push_str(&format!(
            "{}{} {} (line {}){detail}\n",
            "  ".repeat(*depth),
            symbol.kind,
            symbol.name,
            symbol.selection.start.line + 1
        ));
    }
    if all.len() > MAX_RESULTS * 3 {
        out.push_str(&format!("… {} more not shown\n", all.len() - MAX_RESULTS * 3));
    }
    out
}

/// The file's diagnostics in full (warnings and information listed too), for the diagnostics
/// operation.
fn render_all_diagnostics(ctx: &ToolContext, path: &Path, report: &DiagnosticsReport) -> (String, Value) {
    let shown = ctx.workspace.display(path);
    let Some((mut text, meta)) = render_report(ctx, path, report) else {
        return (format!("`{shown}`: no language server covers this file"), json!({ "status": "noServer" }));
    };
    if let DiagnosticsReport::Fresh { diagnostics, .. } = report {
        let mut others: Vec<_> = diagnostics.iter().filter(|d| d.severity != Severity::Error).collect();
        others.sort_by_key(|d| (d.severity, d.range.start));
        for d in others.iter().take(30) {
            let severity = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Information => "info",
                Severity::Hint => "hint",
            };
            text.push_str(&format!(
                "\n  {shown}:{}:{}: {severity}: {}",
                d.range.start.line + 1,
                d.range.start.character + 1,
                d.message.lines().next().unwrap_or_default()
            ));
        }
    }
    (text, meta)
}

impl TypedTool for Lsp {
    const DECL: Decl = Decl::new("lsp", ToolGroup::Lsp, DESCRIPTION)
        .aliases(&["language_server", "code_intel"])
        .keywords(&["definition", "references", "hover", "symbol", "rename", "diagnostics", "type", "callers"])
        .example(r#"{"operation":"definition","file_path":"src/main.rs","line":10,"column":5}"#)
        .writes()
        .writes_only_in("rename");
    type Args = Args;

    async fn run(&self, args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // Said with every answer, and every error, about a file whose server runs restricted.
        let restricted = match (&ctx.intel, &args.file_path) {
            (Some(intel), Some(raw)) => {
                ctx.workspace.resolve(raw, &ctx.working_dir).ok().and_then(|path| intel.restrictions(&path))
            }
            _ => None,
        };
        let result = self.answer(args, ctx).await;
        let Some(note) = restricted else { return result };
        match result {
            Ok(mut output) => {
                output.output.push_str(&format!("\n\n({note})"));
                Ok(output.with("restricted", note))
            }
            Err(err) => Err(ToolError { message: format!("{} ({note})", err.message), ..err }.with("restricted", note)),
        }
    }
}

impl Lsp {
    async fn answer(&self, args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(intel) = ctx.intel.clone() else {
            return Err(ToolError::new(
                "no language servers are available in this session (they run in `tandem lsp`); use grep and read instead",
            ));
        };
        let path = match &args.file_path {
            Some(raw) => Some(ctx.workspace.resolve(raw, &ctx.working_dir)?),
            None => None,
        };
        let op = args.operation;
        let need_path =
            || path.clone().ok_or_else(|| ToolError::new(format!("operation {op:?} needs `file_path`").to_lowercase()));
        let mut texts = Texts::new(&ctx);
        match op {
            Operation::WorkspaceSymbols => {
                let query = args.query.clone().or_else(|| args.symbol.clone()).unwrap_or_default();
                let hint = path.clone().unwrap_or_else(|| ctx.workspace.root().to_path_buf());
                let symbols = intel.workspace_symbols(&hint, &query).await.map_err(tool_error)?;
                let mut out = format!("workspace symbols matching `{query}`: {}\n", symbols.len());
                let mut by_file: BTreeMap<String, Vec<&Symbol>> = BTreeMap::new();
                for symbol in &symbols {
                    by_file.entry(ctx.workspace.display(&symbol.location.path)).or_default().push(symbol);
                }
                let mut shown = 0;
                // The same symbols for editors (`@` completion): where each name is, 1-based.
                let mut listed = Vec::new();
                for (file, symbols) in by_file {
                    if shown >= MAX_RESULTS {
                        break;
                    }
                    out.push_str(&format!("{file}\n"));
                    for symbol in symbols.into_iter().take(MAX_RESULTS - shown) {
                        let start = symbol.location.range.start;
                        let line = texts.line(&symbol.location.path, start.line).await;
                        out.push_str(&format!(
                            "  {}:{}: {} {} — {line}\n",
                            start.line + 1,
                            start.character + 1,
                            symbol.kind,
                            symbol.name
                        ));
                        listed.push(json!({ "name": symbol.name, "kind": symbol.kind, "path": file,
                            "line": start.line + 1, "character": start.character + 1,
                            "endLine": symbol.location.range.end.line.max(start.line) + 1, "container": symbol.detail }));
                        shown += 1;
                    }
                }
                if symbols.len() > shown {
                    out.push_str(&format!("… {} more not shown\n", symbols.len() - shown));
                }
                Ok(ToolOutput::new(format!("{} workspace symbols", symbols.len()), out.trim_end().to_owned())
                    .with("count", symbols.len())
                    .with("symbols", listed))
            }
            Operation::DocumentSymbols => {
                let path = need_path()?;
                let symbols = intel.document_symbols(&path).await.map_err(tool_error)?;
                let shown = ctx.workspace.display(&path);
                let out = format!("symbols of `{shown}`:\n{}", render_symbol_tree(&symbols));
                Ok(ToolOutput::new(format!("Symbols of {shown}"), out.trim_end().to_owned()).with("path", shown))
            }
            Operation::Diagnostics => {
                let path = need_path()?;
                let report = intel.diagnostics(&path).await;
                let (text, meta) = render_all_diagnostics(&ctx, &path, &report);
                Ok(ToolOutput::new(format!("Diagnostics of {}", ctx.workspace.display(&path)), text)
                    .with("diagnostics", meta))
            }
            Operation::Definition | Operation::Implementation | Operation::References => {
                let path = need_path()?;
                let at = resolve_position(&ctx, &intel, &mut texts, &path, &args).await?;
                let locations = match op {
                    Operation::Definition => intel.definition(&at.path, at.position).await,
                    Operation::Implementation => intel.implementation(&at.path, at.position).await,
                    _ => intel.references(&at.path, at.position, args.include_declaration.unwrap_or(true)).await,
                }
                .map_err(tool_error)?;
                let what = format!("{op:?}").to_lowercase();
                let (list, meta) = render_locations(&ctx, &mut texts, &locations).await;
                let files = locations.iter().map(|l| &l.path).collect::<std::collections::BTreeSet<_>>().len();
                let out = if locations.is_empty() {
                    format!("{what} at {}\nno results", echo(&ctx, &at))
                } else {
                    format!("{what} at {}\n{} result(s) in {files} file(s):\n{list}", echo(&ctx, &at), locations.len())
                };
                Ok(ToolOutput::new(format!("{} {what} result(s)", locations.len()), out.trim_end().to_owned())
                    .with("position", json!({ "path": ctx.workspace.display(&at.path), "line": at.position.line + 1, "column": at.position.character + 1 }))
                    .with("count", locations.len())
                    .with("results", meta))
            }
            Operation::Hover => {
                let path = need_path()?;
                let at = resolve_position(&ctx, &intel, &mut texts, &path, &args).await?;
                let hover = intel.hover(&at.path, at.position).await.map_err(tool_error)?;
                let body = hover.unwrap_or_else(|| "no hover information here".to_owned());
                let body = tandem_text::clip(&body, 4000);
                Ok(ToolOutput::new("Hover", format!("hover at {}\n{body}", echo(&ctx, &at))))
            }
            Operation::CallHierarchy => {
                let path = need_path()?;
                let at = resolve_position(&ctx, &intel, &mut texts, &path, &args).await?;
                let direction = match args.direction.unwrap_or_default() {
                    Direction::Incoming => CallDirection::Incoming,
                    Direction::Outgoing => CallDirection::Outgoing,
                };
                let items = intel.call_hierarchy(&at.path, at.position, direction).await.map_err(tool_error)?;
                let word = if direction == CallDirection::Incoming { "callers" } else { "callees" };
                let mut out = format!("{word} of {}\n{} {word}:\n", echo(&ctx, &at), items.len());
                for item in items.iter().take(MAX_RESULTS) {
                    let s = &item.symbol;
                    let file = ctx.workspace.display(&s.location.path);
                    out.push_str(&format!("{} {} — {file}:{}\n", s.kind, s.name, s.selection.start.line + 1));
                    for site in item.sites.iter().take(5) {
                        let line = texts.line(&site.path, site.range.start.line).await;
                        out.push_str(&format!(
                            "  {}:{}:{}: {line}\n",
                            ctx.workspace.display(&site.path),
                            site.range.start.line + 1,
                            site.range.start.character + 1
                        ));
                    }
                }
                Ok(ToolOutput::new(format!("{} {word}", items.len()), out.trim_end().to_owned())
                    .with("count", items.len()))
            }
            Operation::Rename => {
                let path = need_path()?;
                let Some(new_name) = args.new_name.clone().filter(|n| !n.trim().is_empty()) else {
                    return Err(ToolError::new("rename needs `new_name`"));
                };
                let at = resolve_position(&ctx, &intel, &mut texts, &path, &args).await?;
                let edits = intel.rename(&at.path, at.position, &new_name).await.map_err(tool_error)?;
                rename(&ctx, &at, edits).await
            }
        }
    }
}

/// Applies a rename's replacements to every file through `commit_all` (all or nothing).
async fn rename(
    ctx: &ToolContext,
    at: &At,
    edits: Vec<(PathBuf, Vec<TextReplacement>)>,
) -> Result<ToolOutput, ToolError> {
    if edits.iter().all(|(_, e)| e.is_empty()) {
        return Err(ToolError::new(format!("the server proposes no change for a rename at {}", echo(ctx, at))));
    }
    let mut changes = Vec::new();
    let mut summary = String::new();
    let mut diffs = serde_json::Map::new();
    let mut paths = Vec::new();
    let mut total = 0;
    for (raw_path, mut replacements) in edits {
        let path = ctx.workspace.resolve_writable(&raw_path.to_string_lossy(), &ctx.working_dir).map_err(|err| {
            ToolError::new(format!("the rename would change a file outside the workspace ({err}); nothing was changed"))
        })?;
        let shown = ctx.workspace.display(&path);
        let (load_ctx, load_path) = (ctx.clone(), path.clone());
        let loaded = blocking(move || load(&load_ctx, &load_path)).await?;
        check_fresh(ctx, &loaded)?;
        let rope = Rope::from_str(&loaded.text);
        // Last first, so earlier offsets stay valid.
        replacements.sort_by_key(|r| std::cmp::Reverse(r.range.start));
        let mut text = loaded.text.clone();
        let mut lines = Vec::new();
        for r in &replacements {
            let to_byte = |p: Position| -> Result<usize, ToolError> {
                let char_idx = position_to_char(&rope, p, PositionEncoding::Utf32).map_err(|e| {
                    ToolError::new(format!("the server's rename edit for `{shown}` is out of range: {e}"))
                })?;
                Ok(rope.char_to_byte(char_idx))
            };
            let (start, end) = (to_byte(r.range.start)?, to_byte(r.range.end)?);
            if start > end || end > text.len() {
                return Err(ToolError::new(format!("the server's rename edit for `{shown}` is out of range")));
            }
            text.replace_range(start..end, &r.new_text);
            lines.push(r.range.start.line + 1);
        }
        lines.sort_unstable();
        lines.dedup();
        total += replacements.len();
        let list: Vec<String> = lines.iter().map(u32::to_string).collect();
        summary.push_str(&format!("  {shown}: {} change(s), line(s) {}\n", replacements.len(), list.join(", ")));
        diffs.insert(shown.clone(), diff_metadata(&shown, &loaded.text, &text).into());
        paths.push(path);
        changes.push((loaded, Change::Write(text)));
    }
    let files = changes.len();
    let committed = commit_all(ctx, changes).await?;
    let mut output = format!("renamed at {}\n{total} change(s) in {files} file(s):\n{summary}", echo(ctx, at));
    for note in committed.iter().flat_map(|c| &c.notes) {
        output.push_str(&format!("Note: {note}.\n"));
    }
    let mut result = ToolOutput::new(format!("Renamed in {files} file(s)"), output.trim_end().to_owned())
        .with("files", files)
        .with("changes", total)
        .with("diffs", diffs);
    tandem_tool_fs::attach_diagnostics(ctx, &paths, &mut result).await;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_paths_match_qualified_names() {
        assert!(name_matches("impl Counter", "Counter"));
        assert!(name_matches("Counter::add", "add"));
        assert!(name_matches("add(int, int)", "add"));
        assert!(name_matches("add", "add"));
        assert!(!name_matches("adder", "add"));
        assert!(!name_matches("readd", "add"));
    }
}
