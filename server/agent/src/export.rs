//! Sessions out of the process: a stored session exported as JSON (its records, which import
//! takes back, and a transcript for people and scripts) or as Markdown, and an exported JSON
//! session imported as a new stored session to continue.

use std::path::Path;

use serde_json::{Map, Value, json};
use tandem_llm::{Part, Role};
use tandem_protocol::UsageTotals;

use crate::store::{Record, Store, valid_id};

/// The `format` of an exported session.
pub const EXPORT_FORMAT: &str = "tandem-session";
/// Tool output longer than this is folded in Markdown (in `<details>`).
const FOLD: usize = 1_500;

/// Why a session could not be exported or imported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The stored session could not be read (no such session, a bad id, an unreadable file).
    #[error("{0}")]
    Read(String),
    /// What was given is not an exported session.
    #[error("not an exported Tandem session: {0}")]
    NotAnExport(String),
    /// A record of the export is not one Tandem writes.
    #[error("record {index} of the export is not valid: {message}")]
    BadRecord {
        /// 1-based.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Every id the import could take is in use.
    #[error("session `{0}` and its numbered copies exist already")]
    NoFreeId(String),
    /// The imported session could not be stored.
    #[error("cannot store the imported session: {0}")]
    Write(#[from] std::io::Error),
}

impl Store {
    /// Session `id` as an export: its header, a transcript (prompts, answers, tool calls with
    /// their inputs and outputs), the usage and cost, and the records themselves.
    pub fn export(&self, id: &str) -> Result<Value, ExportError> {
        let records = self.read(id).map_err(ExportError::Read)?;
        let mut meta = Map::new();
        let mut transcript: Vec<Value> = Vec::new();
        let mut usage = UsageTotals::default();
        for record in &records {
            match record {
                Record::Meta { session_id, cwd, model, mode, created_at } => {
                    meta.insert("session_id".into(), session_id.clone().into());
                    meta.insert("cwd".into(), cwd.clone().into());
                    meta.insert("model".into(), model.clone().into());
                    meta.insert("mode".into(), mode.as_str().into());
                    meta.insert("created_at".into(), created_at.clone().into());
                }
                Record::Message { message } => transcribe(message, &mut transcript),
                Record::Command { text } => transcript.push(json!({ "type": "command", "text": text })),
                Record::Compaction { summarized: true, tokens_before, tokens_after, .. } => transcript.push(
                    json!({ "type": "compaction", "tokens_before": tokens_before, "tokens_after": tokens_after }),
                ),
                Record::Usage { totals } => usage = *totals,
                _ => {}
            }
        }
        let records: Vec<Value> = records.iter().filter_map(|r| serde_json::to_value(r).ok()).collect();
        let mut export = json!({
            "format": EXPORT_FORMAT,
            "version": 1,
            "transcript": transcript,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
            },
            "cost_usd": usage.cost_usd,
            "records": records,
        });
        if let Some(object) = export.as_object_mut() {
            for (key, value) in meta {
                object.insert(key, value);
            }
        }
        Ok(export)
    }

    /// Stores an export (of [`Store::export`]) as a session of the workspace at `cwd`, under
    /// its own id when that is free, else a new one; returns the id. Every record must be one
    /// Tandem writes; nothing is stored otherwise.
    pub fn import(&self, export: &Value, cwd: &Path) -> Result<String, ExportError> {
        if export["format"] != EXPORT_FORMAT {
            return Err(ExportError::NotAnExport(format!("its \"format\" is not \"{EXPORT_FORMAT}\"")));
        }
        let Some(raw) = export["records"].as_array() else {
            return Err(ExportError::NotAnExport("it has no \"records\" (export it with --format json)".to_owned()));
        };
        let mut records = Vec::with_capacity(raw.len());
        for (n, value) in raw.iter().enumerate() {
            let record: Record = serde_json::from_value(value.clone())
                .map_err(|err| ExportError::BadRecord { index: n + 1, message: err.to_string() })?;
            records.push(record);
        }
        let Some(Record::Meta { session_id, .. }) = records.first() else {
            return Err(ExportError::NotAnExport("its first record is not a session header".to_owned()));
        };
        let base = if valid_id(session_id) { session_id.clone() } else { "imported".to_owned() };
        let id = (0..1000)
            .map(|n| if n == 0 { base.clone() } else { format!("{base}-{n}") })
            .find(|id| !self.exists(id))
            .ok_or_else(|| ExportError::NoFreeId(base.clone()))?;
        if let Some(Record::Meta { session_id, cwd: dir, .. }) = records.first_mut() {
            session_id.clone_from(&id);
            *dir = cwd.display().to_string();
        }
        for record in &records {
            if let Err(err) = self.append(&id, record) {
                self.remove(&id).ok();
                return Err(ExportError::Write(err));
            }
        }
        Ok(id)
    }
}

/// Adds a conversation message to the transcript: the person's prompts, the answers, tool
/// calls and their results.
fn transcribe(message: &tandem_llm::Message, transcript: &mut Vec<Value>) {
    for part in &message.content {
        match (message.role, part) {
            (Role::User, Part::Text { text }) => transcript.push(json!({ "type": "prompt", "text": text })),
            (Role::Assistant, Part::Text { text }) => transcript.push(json!({ "type": "answer", "text": text })),
            (_, Part::ToolCall { id, name, arguments, .. }) => {
                transcript.push(json!({ "type": "tool_call", "id": id, "name": name, "input": arguments }));
            }
            (_, Part::ToolResult { call_id, content, is_error }) => {
                let call = transcript.iter_mut().rev().find(|t| t["type"] == "tool_call" && t["id"] == *call_id);
                match call {
                    Some(call) => {
                        call["output"] = content.clone().into();
                        call["is_error"] = (*is_error).into();
                    }
                    None => transcript.push(json!({ "type": "tool_result", "id": call_id, "output": content })),
                }
            }
            _ => {}
        }
    }
}

/// An export as Markdown: the prompts, answers and tool calls in order, long outputs folded.
pub fn markdown(export: &Value) -> String {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut out = format!("# Tandem session {}\n\n", s(&export["session_id"]));
    out.push_str(&format!(
        "- model: {}\n- mode: {}\n- started: {}\n- folder: {}\n\n",
        s(&export["model"]),
        s(&export["mode"]),
        s(&export["created_at"]),
        s(&export["cwd"])
    ));
    for item in export["transcript"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("prompt") => out.push_str(&format!("## You\n\n{}\n\n", s(&item["text"]))),
            Some("command") => out.push_str(&format!("## You\n\n`{}`\n\n", s(&item["text"]))),
            Some("answer") => out.push_str(&format!("## Tandem\n\n{}\n\n", s(&item["text"]))),
            Some("compaction") => out.push_str(&format!(
                "*The conversation was compacted: about {} → {} tokens.*\n\n",
                item["tokens_before"], item["tokens_after"]
            )),
            Some("tool_call") => {
                let failed = if item["is_error"] == true { " (failed)" } else { "" };
                let input = serde_json::to_string_pretty(&item["input"]).unwrap_or_default();
                out.push_str(&format!("### Tool `{}`{failed}\n\n```json\n{input}\n```\n\n", s(&item["name"])));
                let output = s(&item["output"]);
                if output.len() > FOLD {
                    out.push_str(&format!(
                        "<details><summary>output ({} lines)</summary>\n\n```\n{output}\n```\n\n</details>\n\n",
                        output.lines().count()
                    ));
                } else if !output.is_empty() {
                    out.push_str(&format!("```\n{output}\n```\n\n"));
                }
            }
            _ => {}
        }
    }
    let usage = &export["usage"];
    out.push_str(&format!(
        "---\n\nUsage: {} input, {} output, {} cached tokens",
        usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"]
    ));
    if let Some(cost) = export["cost_usd"].as_f64() {
        out.push_str(&format!("; about ${cost:.4} at list prices"));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use tandem_llm::Message;
    use tandem_protocol::ModeId;

    use super::*;

    fn store_with_a_session(dir: &Path) -> Result<Store, Box<dyn std::error::Error>> {
        let store = Store::new(dir.join("sessions"));
        let records = [
            Record::Meta {
                session_id: "s1".into(),
                cwd: "/w".into(),
                model: "m".into(),
                mode: ModeId::Default,
                created_at: "2026-01-01T00:00:00Z".into(),
            },
            Record::Message {
                message: Message { role: Role::User, content: vec![Part::Text { text: "fix it".into() }] },
            },
            Record::Message {
                message: Message {
                    role: Role::Assistant,
                    content: vec![
                        Part::Text { text: "Reading.".into() },
                        Part::ToolCall {
                            id: "c1".into(),
                            name: "read".into(),
                            arguments: json!({ "file_path": "a.rs" }),
                            extra: None,
                        },
                    ],
                },
            },
            Record::Message {
                message: Message {
                    role: Role::User,
                    content: vec![Part::ToolResult {
                        call_id: "c1".into(),
                        content: "x".repeat(2000),
                        is_error: false,
                    }],
                },
            },
            Record::Message {
                message: Message { role: Role::Assistant, content: vec![Part::Text { text: "Done.".into() }] },
            },
            Record::Usage {
                totals: UsageTotals { input_tokens: 10, output_tokens: 5, cost_usd: Some(0.5), ..Default::default() },
            },
        ];
        for record in &records {
            store.append("s1", record)?;
        }
        Ok(store)
    }

    #[test]
    fn an_export_imports_as_the_same_session_under_a_free_id() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = store_with_a_session(dir.path())?;
        let export = store.export("s1")?;
        let kinds: Vec<&str> =
            export["transcript"].as_array().into_iter().flatten().filter_map(|t| t["type"].as_str()).collect();
        assert_eq!(kinds, ["prompt", "answer", "tool_call", "answer"]);
        assert_eq!(export["transcript"][2]["output"].as_str().map(str::len), Some(2000));
        assert_eq!((&export["usage"]["input_tokens"], &export["cost_usd"]), (&json!(10), &json!(0.5)));

        // Into another store: the same id; into this one: a numbered one.
        let other = Store::new(dir.path().join("other"));
        assert_eq!(other.import(&export, Path::new("/x"))?, "s1");
        let again = other.export("s1")?;
        assert_eq!(again["transcript"], export["transcript"]);
        assert_eq!(again["cwd"], "/x");
        assert_eq!(store.import(&export, Path::new("/w"))?, "s1-1");
        assert_eq!(store.read("s1-1")?.len(), store.read("s1")?.len());

        let markdown = markdown(&export);
        assert!(markdown.contains("## You\n\nfix it") && markdown.contains("### Tool `read`"), "{markdown}");
        assert!(markdown.contains("<details><summary>output (1 lines)"), "{markdown}");
        Ok(())
    }

    #[test]
    fn a_bad_export_stores_nothing() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Store::new(dir.path().join("sessions"));
        assert!(store.import(&json!({ "format": "other" }), Path::new("/w")).is_err());
        let bad = json!({ "format": EXPORT_FORMAT, "records": [{ "type": "meta", "session_id": "s" }] });
        assert!(store.import(&bad, Path::new("/w")).is_err());
        let headless = json!({ "format": EXPORT_FORMAT, "records": [{ "type": "mode", "mode": "default" }] });
        assert!(store.import(&headless, Path::new("/w")).is_err());
        assert!(store.list().is_empty());
        Ok(())
    }
}
