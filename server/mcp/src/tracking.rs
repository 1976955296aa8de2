//! People-readable logs of MCP use in the `mcp/` folder of the workspace's state directory: one append-only Markdown
//! table per session (`<session>.md`, `cli.md` for calls without one) with each call, a summary
//! of its arguments (secrets redacted), its status and latency, rotated to `<session>.1.md` past
//! [`MAX_LOG_BYTES`]; and `ranking.md`, the current ranking, rewritten after each call.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ranking::Ranked;

/// One call of a session, for loop detection and `mcp_session_summary`.
#[derive(Clone, Debug)]
pub struct CallRecord {
    /// Tool.
    pub tool: String,
    /// Tool + arguments.
    pub(crate) key: String,
    /// Succeeded.
    pub ok: bool,
    /// Latency.
    pub ms: u64,
}

/// Size past which a session log is rotated.
pub const MAX_LOG_BYTES: u64 = 256 * 1024;

/// Where the logs go.
#[derive(Clone, Debug)]
pub struct Tracker {
    root: PathBuf,
    dir: PathBuf,
}

/// A tool's (ok, failed, mean ms).
pub type StatsOf<'a> = dyn Fn(&str) -> (u64, u64, Option<f64>) + 'a;

/// One call, as logged.
pub struct Entry<'a> {
    /// Session (or `None`: `cli`).
    pub session: Option<&'a str>,
    /// Tool name.
    pub tool: &'a str,
    /// Arguments.
    pub arguments: &'a Value,
    /// `ok`, `tool error`, `failed (server)`, `circuit open`, `cached`, ….
    pub status: &'a str,
    /// Latency, ms.
    pub ms: u64,
}

const SECRET_KEYS: &[&str] = &["password", "passwd", "token", "secret", "apikey", "api_key", "authorization", "key"];

/// Arguments summarised on one line: secret-looking keys masked, secret-looking values
/// redacted, cut at 160 characters.
pub fn summarize(arguments: &Value) -> String {
    fn mask(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let lower = k.to_ascii_lowercase();
                        let secret = SECRET_KEYS.iter().any(|s| lower == *s || lower.ends_with(&format!("_{s}")));
                        (k.clone(), if secret { Value::String("***".into()) } else { mask(v) })
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
            other => other.clone(),
        }
    }
    let text = tandem_tool_exec::redact::redact(&mask(arguments).to_string()).text;
    let text = text.replace('|', "\\|").replace('\n', " ");
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    format!("{h:02}:{m:02}:{s:02}Z")
}

impl Tracker {
    /// Logs in the `mcp` folder of the workspace's state directory (outside the workspace).
    pub fn new(root: &Path) -> Self {
        let dir = tandem_tool_api::state::state_path(root, "mcp");
        Self { root: root.to_path_buf(), dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log file of `session`.
    pub fn log_path(&self, session: Option<&str>) -> PathBuf {
        let name: String = session
            .unwrap_or("cli")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        self.dir.join(format!("{name}.md"))
    }

    /// Appends one call. Failures to log are logged, never raised.
    pub fn record(&self, entry: &Entry<'_>) {
        if let Err(err) = self.append(entry) {
            tracing::warn!("cannot write the MCP log under {}: {err}", self.dir.display());
        }
    }

    /// The log directory, a real directory inside the workspace's state directory.
    fn ensure_dir(&self) -> std::io::Result<()> {
        tandem_tool_api::state::state_dir(&self.root, "mcp").map(drop).map_err(std::io::Error::other)
    }

    fn append(&self, entry: &Entry<'_>) -> std::io::Result<()> {
        self.ensure_dir()?;
        let path = self.log_path(entry.session);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            std::fs::rename(&path, path.with_extension("1.md"))?;
        }
        let fresh = !path.exists();
        let mut file = tandem_tool_api::state::open_append(&path)?;
        let mut text = String::new();
        if fresh {
            text.push_str(&format!(
                "# MCP calls of session `{}`\n\n| time (UTC) | tool | arguments | status | ms |\n|---|---|---|---|---:|\n",
                entry.session.unwrap_or("cli")
            ));
        }
        text.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} |\n",
            now(),
            entry.tool,
            summarize(entry.arguments),
            entry.status.replace('|', "/"),
            entry.ms
        ));
        file.write_all(text.as_bytes())
    }

    /// Rewrites `ranking.md`.
    pub fn snapshot(&self, ranked: &[Ranked], calls: &StatsOf<'_>) {
        let mut text = String::from(
            "# MCP tool ranking (no query: reliability, latency, inertia)\n\n| # | tool | score | reliability | speed | inertia | calls | failed | mean ms |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for (i, r) in ranked.iter().enumerate() {
            let (ok, failed, mean) = calls(&r.name);
            text.push_str(&format!(
                "| {} | `{}` | {:.3} | {:.2} | {:.2} | {:.2} | {} | {} | {} |\n",
                i + 1,
                r.name,
                r.score,
                r.reliability,
                r.speed,
                r.inertia,
                ok + failed,
                failed,
                mean.map_or("-".to_owned(), |m| format!("{m:.0}"))
            ));
        }
        let write = self.ensure_dir().and_then(|()| {
            let path = self.dir.join("ranking.md");
            // Replaced, never written through: a shipped symlink would point elsewhere.
            std::fs::remove_file(&path)
                .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })?;
            std::io::Write::write_all(&mut tandem_tool_api::state::create_new(&path)?, text.as_bytes())
        });
        if let Err(err) = write {
            tracing::warn!("cannot write the MCP ranking snapshot: {err}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_hide_secrets_and_logs_rotate() {
        let args = json!({"query": "a|b", "api_key": "abc", "nested": {"password": "p"}, "text": "Bearer abcdefghijklmnopqrstuvwxyz0123"});
        let summary = summarize(&args);
        assert!(!summary.contains("abc\""), "{summary}");
        assert!(!summary.contains("abcdefghijklmnopqrstuvwxyz0123"), "{summary}");
        assert!(summary.contains("a\\|b"), "{summary}");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let tracker = Tracker::new(dir.path());
        let big = json!({"text": "x".repeat(150)});
        for _ in 0..(MAX_LOG_BYTES / 150 + 10) {
            tracker.record(&Entry { session: Some("s1"), tool: "mcp__a__b", arguments: &big, status: "ok", ms: 3 });
        }
        let log = tracker.log_path(Some("s1"));
        assert!(log.with_extension("1.md").exists());
        let current = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(current.starts_with("# MCP calls of session `s1`"), "{current}");
        assert!((current.len() as u64) < MAX_LOG_BYTES, "{}", current.len());
    }
}
