//! Memory: notes the agent keeps across sessions, as Markdown files with front matter that
//! people can read and edit. Project memories live in `.tandem/memory/`, user memories in
//! `~/.config/tandem/memory/` (`$XDG_CONFIG_HOME/tandem/memory/`).

mod delete;
mod read;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use tandem_tool_api::{Tool, typed};

/// The memory tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(read::MemoryRead), typed(write::MemoryWrite), typed(delete::MemoryDelete)]
}

/// What a memory is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// About the person: preferences, role, habits.
    User,
    /// What the person said about the agent's work (do / don't).
    Feedback,
    /// About this project: conventions, decisions, where things are.
    Project,
    /// Pointers: documentation, dashboards, issue trackers.
    Reference,
}

impl MemoryType {
    /// The name in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Feedback => "feedback",
            Self::Project => "project",
            Self::Reference => "reference",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        [Self::User, Self::Feedback, Self::Project, Self::Reference].into_iter().find(|t| t.as_str() == raw.trim())
    }
}

/// Where a memory is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// This workspace (`.tandem/memory/`).
    Project,
    /// Every workspace of this person (`~/.config/tandem/memory/`).
    User,
}

/// One stored memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Id (8 hex digits).
    pub id: String,
    /// Title.
    pub title: String,
    /// Kind.
    pub kind: MemoryType,
    /// Tags.
    pub tags: Vec<String>,
    /// When it was written (RFC 3339).
    pub created: String,
    /// The text.
    pub content: String,
    /// Where it is kept.
    pub scope: Scope,
    /// Its file.
    pub path: PathBuf,
}

/// The memory directory of `scope`.
pub fn memory_dir(root: &Path, scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::Project => Some(root.join(".tandem").join("memory")),
        Scope::User => std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|d| d.join("tandem").join("memory")),
    }
}

fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// The file text of a memory.
pub(crate) fn render(memory: &Memory) -> String {
    let tags: Vec<String> = memory.tags.iter().map(|t| serde_json::Value::from(t.as_str()).to_string()).collect();
    format!(
        "---\nid: {}\ntitle: {}\ntype: {}\ntags: [{}]\ncreated: {}\n---\n\n{}\n",
        memory.id,
        serde_json::Value::from(memory.title.as_str()),
        memory.kind.as_str(),
        tags.join(", "),
        memory.created,
        memory.content.trim_end()
    )
}

/// Parses a memory file; `None` when it has no front matter with an id.
pub(crate) fn parse(text: &str, path: &Path, scope: Scope) -> Option<Memory> {
    let rest = text.strip_prefix("---\n")?;
    let (front, body) = rest.split_once("\n---")?;
    let mut memory = Memory {
        id: String::new(),
        title: String::new(),
        kind: MemoryType::Project,
        tags: Vec::new(),
        created: String::new(),
        content: body.trim_start_matches(['\n', '\r']).trim_end().to_owned(),
        scope,
        path: path.to_path_buf(),
    };
    for line in front.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        let unquote = |v: &str| serde_json::from_str::<String>(v).unwrap_or_else(|_| v.trim_matches('"').to_owned());
        match key.trim() {
            "id" => memory.id = value.to_owned(),
            "title" => memory.title = unquote(value),
            "type" => memory.kind = MemoryType::parse(value).unwrap_or(MemoryType::Project),
            "tags" => {
                memory.tags = value
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .split(',')
                    .map(|t| unquote(t.trim()))
                    .filter(|t| !t.is_empty())
                    .collect();
            }
            "created" => memory.created = value.to_owned(),
            _ => {}
        }
    }
    if memory.title.is_empty() {
        memory.title = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    (!memory.id.is_empty()).then_some(memory)
}

/// Every memory of both scopes, project first, each sorted by creation time.
pub fn load_all(root: &Path) -> Vec<Memory> {
    let mut all = Vec::new();
    for scope in [Scope::Project, Scope::User] {
        let Some(dir) = memory_dir(root, scope) else { continue };
        // A shipped symlink (`.tandem/memory`, or one memory file) could make a file outside
        // the workspace part of every prompt: only real directories and regular files count.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        if scope == Scope::Project
            && std::fs::symlink_metadata(dir.parent().unwrap_or(&dir)).is_ok_and(|m| m.file_type().is_symlink())
        {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut found: Vec<Memory> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .filter_map(|p| std::fs::read_to_string(&p).ok().and_then(|t| parse(&t, &p, scope)))
            .collect();
        found.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
        all.extend(found);
    }
    all
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() > 2).map(str::to_lowercase).collect()
}

/// How well `memory` matches `query`: query words found in the title and tags (twice) and
/// content (once).
pub(crate) fn score(memory: &Memory, query: &str) -> usize {
    let heading = words(&format!("{} {}", memory.title, memory.tags.join(" ")));
    let body = words(&memory.content);
    words(query).iter().map(|w| 2 * usize::from(heading.contains(w)) + usize::from(body.contains(w))).sum()
}

/// What the model is told about memories at the start of a session: every memory's id, type and
/// title, and the full text of the user and feedback memories and of those that match `prompt`.
pub fn session_brief(root: &Path, prompt: &str) -> Option<String> {
    const MAX_LISTED: usize = 40;
    const MAX_FULL: usize = 6;
    let all = load_all(root);
    if all.is_empty() {
        return None;
    }
    let mut ranked: Vec<(usize, &Memory)> = all.iter().map(|m| (score(m, prompt), m)).collect();
    ranked.sort_by_key(|b| std::cmp::Reverse(b.0));
    let full: Vec<&Memory> = all
        .iter()
        .filter(|m| matches!(m.kind, MemoryType::User | MemoryType::Feedback))
        .chain(ranked.iter().filter(|(s, _)| *s > 0).map(|(_, m)| *m))
        .fold(Vec::new(), |mut acc, m| {
            if acc.len() < MAX_FULL && !acc.iter().any(|x: &&Memory| x.id == m.id) {
                acc.push(m);
            }
            acc
        });
    let mut brief = String::from("Memories (read more with `memory_read`):\n");
    for m in all.iter().take(MAX_LISTED) {
        brief.push_str(&format!("- {} [{}] {}\n", m.id, m.kind.as_str(), m.title));
    }
    if all.len() > MAX_LISTED {
        brief.push_str(&format!("- … {} more\n", all.len() - MAX_LISTED));
    }
    for m in full {
        brief.push_str(&format!("\n## {} ({}, {})\n{}\n", m.title, m.kind.as_str(), m.id, m.content));
    }
    Some(brief)
}

/// A new memory's file name.
pub(crate) fn file_name(memory: &Memory) -> String {
    let slug = slug(&memory.title);
    if slug.is_empty() { format!("{}.md", memory.id) } else { format!("{}-{slug}.md", memory.id) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_round_trips_through_its_file() {
        let memory = Memory {
            id: "0a1b2c3d".into(),
            title: "Tests: use \"cargo nextest\"".into(),
            kind: MemoryType::Feedback,
            tags: vec!["tests".into(), "ci".into()],
            created: "2026-11-22T03:00:00Z".into(),
            content: "Run the tests with nextest.\n\nNot cargo test.".into(),
            scope: Scope::Project,
            path: PathBuf::from("/w/.tandem/memory/x.md"),
        };
        let text = render(&memory);
        assert_eq!(parse(&text, &memory.path, Scope::Project), Some(memory.clone()));
        assert_eq!(file_name(&memory), "0a1b2c3d-tests-use-cargo-nextest.md");
        // "run" and "the" in the text, "tests" in the title (2) and the text (1).
        assert_eq!(score(&memory, "how do I run the tests?"), 1 + 1 + 3);
        assert_eq!(score(&memory, "deploy"), 0);
        assert!(parse("no front matter", &memory.path, Scope::Project).is_none());
    }
}
