//! `generate_readme`: a README.md for each subdirectory of a path, listing its files with their
//! leading doc comments and main top-level symbols, and its subdirectories. Every README of a
//! call is written in one all-or-nothing commit, so the person reviews them together.
//!
//! Symbols come from `symbols_of`: the top-level definitions of the file's syntax tree, as the
//! repository map outlines it (`tandem-repo-map`, tree-sitter tags queries for Rust, Python,
//! JavaScript, TypeScript, Go, C, C++, Java and Ruby). Doc comments come from `outline.rs`.

mod outline;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, Tool, ToolContext, ToolError, ToolOutput, tool, typed};
use tandem_tool_fs::{Change, Loaded, blocking, commit_all, load};

use outline::Language;

/// A top-level symbol: its kind as the language spells it (`fn`, `class`, `impl`, ...) and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Symbol {
    pub kind: String,
    pub name: String,
}

/// Directories handled when the call does not say.
const DEFAULT_MAX_DIRS: usize = 50;
/// The most directories one call may handle.
const MAX_MAX_DIRS: usize = 500;
/// Files larger than this are listed but not outlined.
const MAX_OUTLINED_BYTES: u64 = 1024 * 1024;
/// Symbols listed per file at most.
const MAX_SYMBOLS: usize = 12;
/// Directories never documented (build output and dependencies), ignored or not.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", "dist", "build", "__pycache__", "vendor", ".git"];

const DESCRIPTION: &str = "Write a README.md in each subdirectory of `path` (default: the workspace root) that \
    lists the directory's files with their leading doc comment and main top-level symbols (functions, types, \
    classes, ...) and its subdirectories. Directories that already have a README.md are skipped unless \
    `overwrite` is true. Ignored, hidden and build directories (target, node_modules, ...) are left out. All \
    READMEs are written together after one review.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Directory whose subdirectories get a README: absolute, or relative to the workspace root (default: the root).
    path: Option<String>,
    /// Also the subdirectories' subdirectories, at every depth (default false: direct subdirectories only).
    recursive: Option<bool>,
    /// Directories handled at most (default 50, at most 500).
    max_dirs: Option<usize>,
    /// Replace existing README.md files (default false: skip those directories).
    overwrite: Option<bool>,
}

/// The tools of this module.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(GenerateReadme)]
}

tool!(pub(crate) GenerateReadme(Args) = Decl::new("generate_readme", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["generate_readmes", "readme"])
    .keywords(&["readme", "documentation", "docs", "overview", "modules", "symbols"])
    .writes());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let overwrite = args.overwrite.unwrap_or(false);
    let root = ctx.workspace.resolve(args.path.as_deref().unwrap_or("."), &ctx.working_dir)?;
    let shown_root = ctx.workspace.display(&root);
    if !root.is_dir() {
        return Err(ToolError::new(format!("`{shown_root}` is not a directory; give a directory in `path`")));
    }
    let max_dirs = args.max_dirs.unwrap_or(DEFAULT_MAX_DIRS).clamp(1, MAX_MAX_DIRS);
    let recursive = args.recursive.unwrap_or(false);
    let plan_ctx = ctx.clone();
    let plan = blocking(move || plan(&plan_ctx, &root, recursive, max_dirs, overwrite)).await?;
    let Plan { changes, skipped, empty, left_out } = plan;
    let created: Vec<String> = changes.iter().map(|(loaded, _)| ctx.workspace.display(&loaded.path)).collect();
    let replaced = changes.iter().filter(|(loaded, _)| loaded.exists()).count();
    let mut notes = Vec::new();
    if !changes.is_empty() {
        for committed in commit_all(&ctx, changes).await? {
            notes.extend(committed.notes);
        }
    }
    let mut output = if created.is_empty() {
        format!("No README written under `{shown_root}`.")
    } else {
        format!(
            "Wrote {} README(s) under `{shown_root}`{}:\n{}",
            created.len(),
            if replaced > 0 { format!(" ({replaced} replaced)") } else { String::new() },
            created.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n")
        )
    };
    if !skipped.is_empty() {
        output.push_str(&format!(
            "\nSkipped {} director{} that already had a README.md (pass overwrite=true to replace them):\n{}",
            skipped.len(),
            if skipped.len() == 1 { "y" } else { "ies" },
            skipped.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n")
        ));
    }
    if empty > 0 {
        output.push_str(&format!("\n{empty} empty director{} left alone.", if empty == 1 { "y" } else { "ies" }));
    }
    if left_out > 0 {
        output.push_str(&format!(
            "\n{left_out} more director{} not handled (max_dirs = {max_dirs}); raise max_dirs or run again on a subdirectory.",
            if left_out == 1 { "y was" } else { "ies were" }
        ));
    }
    if !recursive {
        output.push_str("\nOnly direct subdirectories were handled; pass recursive=true for every depth.");
    }
    for note in notes {
        output.push_str(&format!("\nNote: {note}."));
    }
    Ok(ToolOutput::new(format!("Generated {} README(s)", created.len()), output)
        .with("created", created.len() - replaced)
        .with("replaced", replaced)
        .with("skipped", skipped.len())
        .with("paths", created))
}

/// What one call will write and what it leaves.
struct Plan {
    changes: Vec<(Loaded, Change)>,
    /// Directories with a README.md already (shown paths).
    skipped: Vec<String>,
    /// Directories with nothing in them.
    empty: usize,
    /// Directories beyond `max_dirs`.
    left_out: usize,
}

fn skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

/// The directory's entries, files and directories, by name, with ripgrep's rules.
fn entries(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for entry in tandem_tool_search::walker(dir).max_depth(Some(1)).build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        match entry.file_type() {
            Some(t) if t.is_dir() && !skipped_dir(&entry.file_name().to_string_lossy()) => dirs.push(entry.into_path()),
            Some(t) if t.is_file() => files.push(entry.into_path()),
            _ => {}
        }
    }
    files.sort();
    dirs.sort();
    (files, dirs)
}

fn plan(ctx: &ToolContext, root: &Path, recursive: bool, max_dirs: usize, overwrite: bool) -> Result<Plan, ToolError> {
    let mut dirs = Vec::new();
    let mut queue = entries(root).1;
    queue.reverse();
    while let Some(dir) = queue.pop() {
        if recursive {
            let mut children = entries(&dir).1;
            children.reverse();
            // Depth first, in name order: the parent, then its children, then the next sibling.
            let at = queue.len();
            queue.splice(at..at, children);
        }
        dirs.push(dir);
    }
    let mut plan = Plan { changes: Vec::new(), skipped: Vec::new(), empty: 0, left_out: 0 };
    for dir in dirs {
        let (files, subdirs) = entries(&dir);
        if files.is_empty() && subdirs.is_empty() {
            plan.empty += 1;
            continue;
        }
        let readme = dir.join("README.md");
        let existing = files.iter().find(|f| f.file_name().is_some_and(|n| n.eq_ignore_ascii_case("README.md")));
        if existing.is_some() && !overwrite {
            plan.skipped.push(ctx.workspace.display(&readme));
            continue;
        }
        if plan.changes.len() == max_dirs {
            plan.left_out += 1;
            continue;
        }
        let target = existing.cloned().unwrap_or(readme);
        let target = ctx.workspace.resolve_writable(&target.to_string_lossy(), &ctx.working_dir)?;
        let text = render(ctx, &dir, &files, &subdirs);
        let loaded = load(ctx, &target)?;
        if loaded.exists() && loaded.text == text {
            continue;
        }
        plan.changes.push((loaded, Change::Write(text)));
    }
    Ok(plan)
}

/// A file's doc comment and top-level symbols: the definitions of its syntax tree that no other
/// holds (methods and nested items left out), private ones (`_name`) and test modules too.
fn symbols_of(file_name: &str, language: Language, text: &str) -> (Option<String>, Vec<Symbol>) {
    let doc = outline::doc_comment(language, text);
    let Some(lang) = tandem_repo_map::Lang::of(file_name) else { return (doc, Vec::new()) };
    let outline = tandem_repo_map::outline::outline(lang, text);
    let symbols = outline
        .top_level()
        .filter(|d| !d.name.starts_with('_'))
        .filter(|d| !(d.keyword == "mod" && matches!(d.name.as_str(), "tests" | "test")))
        .map(|d| Symbol { kind: d.keyword.clone(), name: d.name.clone() })
        .collect();
    (doc, symbols)
}

/// The README of `dir`.
fn render(ctx: &ToolContext, dir: &Path, files: &[PathBuf], subdirs: &[PathBuf]) -> String {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = format!("# {name}\n\n");
    out.push_str(&format!(
        "Contents of `{}`: each file with its leading doc comment and main top-level symbols.\n\
         Generated by Tandem's `generate_readme`; edit freely.\n",
        ctx.workspace.display(dir)
    ));
    let files: Vec<&PathBuf> =
        files.iter().filter(|f| !f.file_name().is_some_and(|n| n.eq_ignore_ascii_case("README.md"))).collect();
    if !files.is_empty() {
        out.push_str("\n## Files\n");
    }
    for file in files {
        let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        out.push_str(&format!("\n### [`{file_name}`]({})\n", link(&file_name)));
        let Some(language) = Language::of(&file_name) else { continue };
        let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        if size > MAX_OUTLINED_BYTES {
            out.push_str("\n(Large file: not outlined.)\n");
            continue;
        }
        // The editor's text when the file is open there; binary or unreadable files are just listed.
        let Ok(loaded) = load(ctx, file) else { continue };
        let (doc, symbols) = symbols_of(&file_name, language, &loaded.text);
        if let Some(doc) = doc {
            out.push_str(&format!("\n{doc}\n"));
        }
        if !symbols.is_empty() {
            let mut listed: Vec<String> =
                symbols.iter().take(MAX_SYMBOLS).map(|s| format!("`{} {}`", s.kind, s.name)).collect();
            if symbols.len() > MAX_SYMBOLS {
                listed.push(format!("and {} more", symbols.len() - MAX_SYMBOLS));
            }
            out.push_str(&format!("\nDefines: {}.\n", listed.join(", ")));
        }
    }
    if !subdirs.is_empty() {
        out.push_str("\n## Subdirectories\n\n");
        for sub in subdirs {
            let sub_name = sub.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            out.push_str(&format!("- [`{sub_name}/`]({}/)\n", link(&sub_name)));
        }
    }
    out
}

/// A relative Markdown link target (spaces and parentheses escaped).
fn link(name: &str) -> String {
    name.replace(' ', "%20").replace('(', "%28").replace(')', "%29")
}

#[cfg(test)]
mod tests;
