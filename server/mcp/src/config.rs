//! Which MCP servers to use: `~/.config/tandem/mcp.json`, the workspace's `.mcp.json` and
//! `.tandem/mcp.json`, the file named by `TANDEM_MCP_CONFIG` (each overriding the one before, by
//! server name), and the `mcpServers` an editor passes to `session/new` (ACP's array shape or the
//! common object shape).
//!
//! `${VAR}` in `args`, `env`, `url` and header values is resolved from the environment at load
//! time (unset: a warning, and the empty string). When a server has no `Authorization` header,
//! `MCP_SERVER_API_KEY_<SERVER_NAME>` (name upper-cased, other characters as `_`) supplies
//! `Bearer <key>`. Resolved values are [`Secret`]s: their `Debug` never shows them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tandem_tool_api::trust::Trust;

use serde_json::Value;

/// A value that must never reach a log (header values, environment values).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the transport.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// Program.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// Extra environment.
        env: BTreeMap<String, Secret>,
        /// Working directory (default: the workspace root).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// Endpoint (`http://127.0.0.1:3001/mcp`).
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, Secret>,
    },
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Name (the `<server>` of `mcp__<server>__<tool>`).
    pub name: String,
    /// Transport.
    pub transport: Transport,
    /// Off servers are listed by `tandem doctor` but never started.
    pub enabled: bool,
    /// Per-request timeout (default 60 s; `timeout_seconds`).
    pub timeout: Duration,
    /// Calls in flight at once (default 4; `max_concurrent`).
    pub max_concurrent: usize,
    /// Words for ranking and filtering.
    pub tags: Vec<String>,
    /// Where it was configured (a path, or `session/new`).
    pub source: String,
}

/// When servers connect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Startup {
    /// In the background as soon as the workspace is known (the default).
    #[default]
    Eager,
    /// At the first session, or the first call that needs the server.
    Lazy,
}

/// Everything loaded.
#[derive(Clone, Debug, Default)]
pub struct McpConfig {
    /// Servers by name, in name order.
    pub servers: BTreeMap<String, ServerConfig>,
    /// When they connect (`"startup": "eager" | "lazy"`, the last file that says wins).
    pub startup: Startup,
    /// At most this many MCP tools go into the model's tool list (`"max_tools"`, default 40);
    /// the rest, ranked lower, are reachable through `mcp_discover` and `mcp_call_chain`.
    pub max_tools: usize,
    /// Problems found while loading (bad files, unset variables); never contain secret values.
    pub warnings: Vec<String>,
}

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default bulkhead size.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;
/// Default number of MCP tools offered to the model.
pub const DEFAULT_MAX_TOOLS: usize = 40;

impl McpConfig {
    /// Loads every file for `workspace`, reading variables through `env`. The workspace's own
    /// files (`.mcp.json`, `.tandem/mcp.json`) name programs to start, so they count only when
    /// the person trusts the folder; otherwise a warning says they were ignored.
    pub fn load(workspace: &Path, home: Option<&Path>, env: &dyn Fn(&str) -> Option<String>, trust: Trust) -> Self {
        let mut config = Self { max_tools: DEFAULT_MAX_TOOLS, ..Self::default() };
        let mut files: Vec<PathBuf> = Vec::new();
        if let Some(home) = home {
            files.push(home.join(".config/tandem/mcp.json"));
        }
        for own in [workspace.join(".mcp.json"), workspace.join(".tandem/mcp.json")] {
            match trust {
                Trust::Trusted => files.push(own),
                Trust::Untrusted if own.exists() => config.warnings.push(format!(
                    "{}: ignored, because {} is not trusted and its MCP servers would start programs. If you trust this repository, run `tandem trust {}` (or set TANDEM_TRUST_WORKSPACE=1), then restart Tandem",
                    own.display(),
                    workspace.display(),
                    workspace.display()
                )),
                Trust::Untrusted => {}
            }
        }
        if let Some(extra) = env("TANDEM_MCP_CONFIG").filter(|p| !p.is_empty()) {
            let path = PathBuf::from(&extra);
            if !path.exists() {
                config.warnings.push(format!("TANDEM_MCP_CONFIG names `{extra}`, which does not exist"));
            }
            files.push(path);
        }
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let source = file.display().to_string();
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => config.merge(&value, &source, env),
                Err(err) => config.warnings.push(format!("{source}: not valid JSON ({err}); ignored")),
            }
        }
        config
    }

    /// Merges one file's (or one `session/new`'s) JSON: `{"mcpServers": {...}|[...], "startup", "max_tools"}`,
    /// or a bare `mcpServers` value.
    pub fn merge(&mut self, value: &Value, source: &str, env: &dyn Fn(&str) -> Option<String>) {
        let servers = match value {
            Value::Array(_) => value,
            Value::Object(map) => {
                if let Some(startup) = map.get("startup").and_then(Value::as_str) {
                    match startup {
                        "eager" => self.startup = Startup::Eager,
                        "lazy" => self.startup = Startup::Lazy,
                        other => self.warnings.push(format!("{source}: startup `{other}`: use eager or lazy")),
                    }
                }
                if let Some(max) = map.get("max_tools").and_then(Value::as_u64) {
                    self.max_tools = max as usize;
                }
                map.get("mcpServers").or_else(|| map.get("servers")).unwrap_or(&Value::Null)
            }
            _ => &Value::Null,
        };
        let entries: Vec<(String, &Value)> = match servers {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(list) => {
                list.iter().filter_map(|v| Some((v.get("name").and_then(Value::as_str)?.to_owned(), v))).collect()
            }
            _ => Vec::new(),
        };
        for (name, raw) in entries {
            match parse_server(&name, raw, source, env, &mut self.warnings) {
                Some(server) => {
                    self.servers.insert(name, server);
                }
                None => continue,
            }
        }
    }
}

/// Key/value pairs from either `{"K": "v"}` or ACP's `[{"name": "K", "value": "v"}]`.
fn pairs(value: Option<&Value>) -> Vec<(String, String)> {
    match value {
        Some(Value::Object(map)) => map.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|v| Some((v.get("name")?.as_str()?.to_owned(), v.get("value")?.as_str()?.to_owned())))
            .collect(),
        _ => Vec::new(),
    }
}

/// `${VAR}` (and `$VAR` is left alone) resolved through `env`; unset variables become empty
/// with a warning that names the variable, never a value.
pub fn resolve_vars(
    text: &str,
    what: &str,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let var = &after[..end];
        let (name, default) = match var.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (var, None),
        };
        match env(name).or_else(|| default.map(str::to_owned)) {
            Some(value) => out.push_str(&value),
            None => warnings.push(format!("{what}: environment variable `{name}` is not set; using an empty value")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `MCP_SERVER_API_KEY_<NAME>`.
pub fn api_key_var(server: &str) -> String {
    let name: String =
        server.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("MCP_SERVER_API_KEY_{name}")
}

fn parse_server(
    name: &str,
    raw: &Value,
    source: &str,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Option<ServerConfig> {
    let valid_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_name {
        warnings.push(format!(
            "{source}: server name `{name}` may only use letters, digits, `-` and `_` (it becomes part of tool names); ignored"
        ));
        return None;
    }
    let text = |key: &str| raw.get(key).and_then(Value::as_str);
    let kind = text("type").or_else(|| text("transport")).unwrap_or_default();
    let what = |field: &str| format!("{source}: server `{name}` {field}");
    let transport = if let Some(url) = text("url").filter(|_| kind != "stdio") {
        if kind == "sse" {
            warnings.push(format!(
                "{source}: server `{name}` uses the legacy SSE transport, which Tandem does not speak; trying streamable HTTP at the same URL"
            ));
        }
        let mut headers = BTreeMap::new();
        for (key, value) in pairs(raw.get("headers")) {
            let resolved = resolve_vars(&value, &what(&format!("header `{key}`")), env, warnings);
            headers.insert(key, Secret(resolved));
        }
        let has_auth = headers.keys().any(|k| k.eq_ignore_ascii_case("authorization"));
        if !has_auth && let Some(key) = env(&api_key_var(name)).filter(|k| !k.is_empty()) {
            headers.insert("Authorization".to_owned(), Secret(format!("Bearer {key}")));
        }
        Transport::Http { url: resolve_vars(url, &what("url"), env, warnings), headers }
    } else if let Some(command) = text("command") {
        let args = raw
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter().filter_map(Value::as_str).map(|s| resolve_vars(s, &what("args"), env, warnings)).collect()
            })
            .unwrap_or_default();
        let mut vars = BTreeMap::new();
        for (key, value) in pairs(raw.get("env")) {
            let resolved = resolve_vars(&value, &what(&format!("env `{key}`")), env, warnings);
            vars.insert(key, Secret(resolved));
        }
        Transport::Stdio {
            command: resolve_vars(command, &what("command"), env, warnings),
            args,
            env: vars,
            cwd: text("cwd").map(PathBuf::from),
        }
    } else {
        warnings.push(format!("{source}: server `{name}` has neither `command` nor `url`; ignored"));
        return None;
    };
    let enabled = raw.get("enabled").and_then(Value::as_bool).unwrap_or(true)
        && !raw.get("disabled").and_then(Value::as_bool).unwrap_or(false);
    let timeout = raw
        .get("timeout_seconds")
        .or_else(|| raw.get("timeout"))
        .and_then(Value::as_f64)
        .filter(|t| *t > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
    let max_concurrent =
        raw.get("max_concurrent").and_then(Value::as_u64).map_or(DEFAULT_MAX_CONCURRENT, |n| n.max(1) as usize);
    let tags = raw
        .get("tags")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Some(ServerConfig {
        name: name.to_owned(),
        transport,
        enabled,
        timeout,
        max_concurrent,
        tags,
        source: source.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "MCP_SERVER_API_KEY_MY_API" => Some("k3y".into()),
            _ => None,
        }
    }

    #[test]
    fn common_and_acp_shapes_with_variables_and_the_api_key_convention() {
        let mut config = McpConfig { max_tools: DEFAULT_MAX_TOOLS, ..Default::default() };
        config.merge(
            &json!({"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server", "${HOME_DIR:-/tmp}"], "env": {"KEY": "${TOKEN}"},
                       "timeout_seconds": 5, "max_concurrent": 2, "tags": ["files"]},
                "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Missing": "${NOPE}"}},
                "my-api": {"url": "http://127.0.0.1:2/mcp"},
                "off": {"command": "x", "disabled": true},
                "bad name": {"command": "x"}
            }, "startup": "lazy"}),
            "file",
            &env,
        );
        config.merge(
            &json!([{"name": "acp", "command": "srv", "args": [], "env": [{"name": "A", "value": "${TOKEN}"}]},
                    {"type": "http", "name": "acph", "url": "http://h/mcp", "headers": [{"name": "X-Key", "value": "v"}]}]),
            "session/new",
            &env,
        );
        assert_eq!(config.startup, Startup::Lazy);
        let names: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        assert_eq!(names, ["acp", "acph", "fs", "my-api", "off", "remote"]);
        let fs = &config.servers["fs"];
        assert_eq!(fs.timeout, Duration::from_secs(5));
        assert_eq!(fs.max_concurrent, 2);
        let Transport::Stdio { args, env: vars, .. } = &fs.transport else { panic!("stdio") };
        assert_eq!(args, &["-y", "server", "/tmp"]);
        assert_eq!(vars["KEY"].expose(), "s3cret");
        let Transport::Http { headers, .. } = &config.servers["remote"].transport else { panic!("http") };
        assert_eq!(headers["Authorization"].expose(), "Bearer s3cret");
        assert_eq!(headers["X-Missing"].expose(), "");
        let Transport::Http { headers, .. } = &config.servers["my-api"].transport else { panic!("http") };
        assert_eq!(headers["Authorization"].expose(), "Bearer k3y");
        assert!(!config.servers["off"].enabled);
        let Transport::Stdio { env: vars, .. } = &config.servers["acp"].transport else { panic!("stdio") };
        assert_eq!(vars["A"].expose(), "s3cret");
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        assert!(config.warnings[0].contains("`bad name`"));
        assert!(config.warnings[1].contains("`NOPE` is not set"));
        let shown = format!("{config:?}");
        assert!(!shown.contains("s3cret") && !shown.contains("k3y"), "{shown}");
    }
}
