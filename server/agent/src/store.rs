//! Sessions on disk: one JSON Lines file per session in the `sessions` folder of the
//! workspace's state directory (outside the workspace: a repository cannot ship a session),
//! appended as the session goes, so a crash loses at most the line being written (a torn last
//! line is skipped).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_protocol::{ModeId, SessionInfo, ToolCallStatus, ToolKind};

/// One line of a session file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Record {
    /// The first line.
    Meta { session_id: String, cwd: String, model: String, mode: ModeId, created_at: String },
    /// A message of the conversation (prompt, model turn, tool results).
    Message { message: tandem_llm::Message },
    /// How a tool call ended, for replay.
    Call {
        tool_call_id: String,
        call_id: String,
        title: String,
        kind: ToolKind,
        status: ToolCallStatus,
        raw_input: Value,
        /// What the person was shown of its outcome (diffs, output, terminal), as first sent.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        content: Vec<tandem_protocol::ToolCallContent>,
        /// The files it touched, as first sent.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        locations: Vec<tandem_protocol::ToolCallLocation>,
        /// Its result's `rawOutput` as sent (title, error, metadata: an exit code, a diff), so a
        /// replayed card shows what the live one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_output: Option<Value>,
    },
    /// A message Tandem wrote to the model (what a restore undid, say): in the conversation the
    /// model sees, never replayed as the person's words.
    Note { message: tandem_llm::Message },
    /// A command the person typed that the front door answered without the model (`/undo 3`):
    /// replayed as they typed it, not part of the conversation.
    Command { text: String },
    /// The mode changed.
    Mode { mode: ModeId },
    /// The person chose another model for the session's next turns.
    Model { model: String },
    /// The task list changed.
    Todos { todos: Vec<tandem_tool_api::Todo> },
    /// The conversation was compacted: from here on the model sees `messages` (the prompts,
    /// answers and calls before it stay in the file for replay).
    Compaction { messages: Vec<tandem_llm::Message>, tokens_before: u64, tokens_after: u64, summarized: bool },
    /// The session's token totals after a model turn.
    Usage { totals: tandem_protocol::UsageTotals },
}

/// The session files of a workspace.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
    /// The workspace whose state directory holds `dir` (checked before each write).
    root: Option<PathBuf>,
}

/// Whether `id` can name a session file (no path tricks).
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 100 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Store {
    /// Session files live in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), root: None }
    }

    /// The sessions of the workspace at `root`, in its state directory (outside the workspace;
    /// never `<root>/.tandem/sessions`, which a repository could ship).
    pub fn in_workspace(root: &std::path::Path) -> Self {
        let dir = tandem_tool_api::state::state_path(root, "sessions");
        Self { dir, root: Some(root.to_path_buf()) }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Appends one record.
    pub(crate) fn append(&self, id: &str, record: &Record) -> std::io::Result<()> {
        match &self.root {
            Some(root) => {
                tandem_tool_api::state::state_dir(root, "sessions").map_err(std::io::Error::other)?;
            }
            None => std::fs::create_dir_all(&self.dir)?,
        }
        let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut file = tandem_tool_api::state::open_append(&self.path(id))?;
        // One write call per record: a crash leaves a whole line or a torn last line.
        file.write_all(&line)
    }

    /// Whether session `id` is stored (a valid id whose file is there).
    pub(crate) fn exists(&self, id: &str) -> bool {
        valid_id(id) && std::fs::symlink_metadata(self.path(id)).is_ok()
    }

    /// Deletes the file of session `id` (a session that never reached a model, say).
    pub fn remove(&self, id: &str) -> std::io::Result<()> {
        if !valid_id(id) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("`{id}` is not a session id")));
        }
        match std::fs::remove_file(self.path(id)) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Every record of session `id`, in order.
    pub(crate) fn read(&self, id: &str) -> Result<Vec<Record>, String> {
        if !valid_id(id) {
            return Err(format!("`{id}` is not a session id"));
        }
        let text = match std::fs::read_to_string(self.path(id)) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "no session `{id}` in {} (each stored session is a file there; `tandem run --session last` \
                     continues the latest)",
                    self.dir.display()
                ));
            }
            Err(err) => return Err(format!("cannot read session `{id}`: {err}")),
        };
        let mut records = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(record) => records.push(record),
                Err(err) => {
                    tracing::warn!(session = id, line = number + 1, "skipping an unreadable session line: {err}")
                }
            }
        }
        match records.first() {
            Some(Record::Meta { .. }) => Ok(records),
            _ => Err(format!("session file of `{id}` has no header line; it is not a tandem session")),
        }
    }

    /// The stored sessions, most recently changed first.
    pub fn list(&self) -> Vec<SessionInfo> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut found: Vec<(SystemTime, SessionInfo)> = entries
            .flatten()
            .filter_map(|entry| {
                let path = entry.path();
                let id = path.file_name()?.to_str()?.strip_suffix(".jsonl")?.to_owned();
                let modified = entry.metadata().ok()?.modified().ok()?;
                let info = summary(&path, &id)?;
                Some((modified, SessionInfo { updated_at: Some(rfc3339(modified)), ..info }))
            })
            .collect();
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.session_id.cmp(&b.1.session_id)));
        found.into_iter().map(|(_, info)| info).collect()
    }
}

/// Id, working directory and title (the first prompt's first line) of a session file.
fn summary(path: &Path, id: &str) -> Option<SessionInfo> {
    use std::io::BufRead as _;
    let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let mut cwd = None;
    let mut title = None;
    for line in file.lines().take(50) {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Record>(&line) {
            Ok(Record::Meta { cwd: dir, .. }) => cwd = Some(dir),
            Ok(Record::Message { message }) if message.role == tandem_llm::Role::User => {
                title = message.content.iter().find_map(|part| match part {
                    tandem_llm::Part::Text { text } => text.lines().find(|l| !l.trim().is_empty()).map(shorten),
                    _ => None,
                });
                if title.is_some() {
                    break;
                }
            }
            _ => {}
        }
    }
    Some(SessionInfo { session_id: id.to_owned(), cwd: cwd?, title, updated_at: None })
}

fn shorten(line: &str) -> String {
    tandem_text::clip(line.trim(), 80)
}

/// `time` as RFC 3339 (UTC, seconds).
pub(crate) fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_torn_line_is_skipped() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let store = Store::new(dir.path().join("sessions"));
        let meta = Record::Meta {
            session_id: "s1".into(),
            cwd: "/w".into(),
            model: "m".into(),
            mode: ModeId::Default,
            created_at: "2026-01-01T00:00:00Z".into(),
        };
        let prompt = Record::Message {
            message: tandem_llm::Message {
                role: tandem_llm::Role::User,
                content: vec![tandem_llm::Part::Text { text: "\nfix the build\nplease".into() }],
            },
        };
        for record in [&meta, &prompt] {
            store.append("s1", record).map_err(|e| e.to_string())?;
        }
        // A crash mid-write.
        let path = dir.path().join("sessions/s1.jsonl");
        let mut text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        text.push_str("{\"type\":\"mode\",\"mo");
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        assert_eq!(store.read("s1")?, vec![meta, prompt]);
        let listed = store.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].title.as_deref(), Some("fix the build"));
        assert_eq!(listed[0].cwd, "/w");
        assert!(store.read("../etc/passwd").is_err());
        assert!(store.read("nope").err().unwrap_or_default().contains("no session `nope`"));
        Ok(())
    }
}
