//! Meta-tools over all MCP servers: `mcp_discover` (ranked servers and tools, with schemas),
//! `mcp_call_chain` (calls in order, each output passed on as `{{previous}}`), `mcp_fan_out`
//! (calls at once, results together), `mcp_session_summary`, and — full profile only, asking
//! the person first — `mcp_server_manage` (list / add / remove / health).

use std::fmt::Write as _;
use std::sync::{Arc, Weak};
use std::time::Instant;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;
use tandem_tools::{CommandDecision, Tool, ToolCheck, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

use crate::config::McpConfig;
use crate::manager::McpManager;

/// The meta-tools.
pub fn all(manager: Weak<McpManager>, manage: bool) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(Meta::new(Kind::Discover, manager.clone())),
        Arc::new(Meta::new(Kind::CallChain, manager.clone())),
        Arc::new(Meta::new(Kind::FanOut, manager.clone())),
        Arc::new(Meta::new(Kind::Summary, manager.clone())),
    ];
    if manage {
        tools.push(Arc::new(Meta::new(Kind::Manage, manager)));
    }
    tools
}

#[derive(Clone, Copy)]
enum Kind {
    Discover,
    CallChain,
    FanOut,
    Summary,
    Manage,
}

struct Meta {
    kind: Kind,
    spec: ToolSpec,
    manager: Weak<McpManager>,
}

/// `mcp_discover` arguments.
#[derive(Deserialize, JsonSchema)]
struct DiscoverArgs {
    /// What you want to do, in words; tools are ranked by relevance to it (and by reliability,
    /// latency and what usually follows your last call). Empty: all tools.
    #[serde(default)]
    query: Option<String>,
    /// Only this server's tools.
    #[serde(default)]
    server: Option<String>,
    /// How many tools to list (default 10).
    #[serde(default)]
    limit: Option<usize>,
}

/// One call of a chain or fan-out.
#[derive(Deserialize, JsonSchema, Clone)]
struct Step {
    /// Tool name: `mcp__<server>__<tool>` (as mcp_discover lists it) or `<server>/<tool>`.
    tool: String,
    /// Arguments (a JSON object). In a chain, `{{previous}}` inside a string is replaced by the
    /// previous step's output.
    #[serde(default)]
    arguments: Value,
}

/// `mcp_call_chain` arguments.
#[derive(Deserialize, JsonSchema)]
struct ChainArgs {
    /// The calls, run in order; the chain stops at the first failure.
    steps: Vec<Step>,
}

/// `mcp_fan_out` arguments.
#[derive(Deserialize, JsonSchema)]
struct FanOutArgs {
    /// The calls, run at the same time (at most 8).
    calls: Vec<Step>,
}

/// `mcp_session_summary` arguments.
#[derive(Deserialize, JsonSchema)]
struct SummaryArgs {}

/// `mcp_server_manage` arguments.
#[derive(Deserialize, JsonSchema)]
struct ManageArgs {
    /// `list`, `health`, `add` or `remove`.
    action: String,
    /// Server name (for `add`, `remove`, `health` of one server).
    #[serde(default)]
    name: Option<String>,
    /// For `add`: the server as in `.mcp.json` (`{"command", "args", "env"}` or `{"url", "headers"}`).
    #[serde(default)]
    config: Option<Value>,
}

impl Meta {
    fn new(kind: Kind, manager: Weak<McpManager>) -> Self {
        let spec = match kind {
            Kind::Discover => ToolSpec::new(
                "mcp_discover",
                ToolGroup::Mcp,
                "List the MCP servers (with their state) and their tools ranked for a query, with each tool's argument schema. Use it to find a tool that is not in your tool list, then call it with mcp_call_chain (one step) or directly by name if listed.",
                schema_for::<DiscoverArgs>(),
            )
            .keywords(&["mcp", "tools", "search", "servers"]),
            Kind::CallChain => ToolSpec::new(
                "mcp_call_chain",
                ToolGroup::Mcp,
                "Call MCP tools one after another; `{{previous}}` in a string argument is replaced by the previous step's output. Stops at the first failure and says which step failed. Also the way to call an MCP tool that is not in your tool list (a chain of one step).",
                schema_for::<ChainArgs>(),
            ),
            Kind::FanOut => ToolSpec::new(
                "mcp_fan_out",
                ToolGroup::Mcp,
                "Call several MCP tools at the same time (at most 8) and get all results together, each marked ok or failed.",
                schema_for::<FanOutArgs>(),
            ),
            Kind::Summary => ToolSpec::new(
                "mcp_session_summary",
                ToolGroup::Mcp,
                "What this session did with MCP tools: calls per tool, failures, mean latency, and the servers' states.",
                schema_for::<SummaryArgs>(),
            ),
            Kind::Manage => ToolSpec::new(
                "mcp_server_manage",
                ToolGroup::Mcp,
                "Manage MCP servers of this process: `list`, `health` (of one or all), `add` (name + config as in .mcp.json; the person approves), `remove` (the person approves). Changes last until the process ends.",
                schema_for::<ManageArgs>(),
            )
            .writes(),
        };
        // Chains and fan-outs may call tools that write: they run alone (approval is per call).
        let spec = match kind {
            Kind::CallChain | Kind::FanOut => ToolSpec { concurrency_safe: false, ..spec },
            _ => spec,
        };
        Self { kind, spec, manager }
    }
}

fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::new(format!("invalid arguments: {e}")))
}

fn substitute(value: &Value, previous: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{{previous}}", previous)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, previous)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute(v, previous))).collect()),
        other => other.clone(),
    }
}

async fn run_step(manager: &McpManager, step: &Step, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let Some((server, remote)) = manager.lookup(&step.tool) else {
        return Err(ToolError::new(format!(
            "no MCP tool `{}` is known; mcp_discover lists them (names look like `mcp__<server>__<tool>`)",
            step.tool
        )));
    };
    let arguments = if step.arguments.is_null() { json!({}) } else { step.arguments.clone() };
    let arguments = tandem_tools::validate_arguments(&remote.schema, arguments, false)
        .map_err(|e| ToolError::new(format!("invalid arguments for `{}`: {e}", remote.exposed)))?
        .value;
    manager.call(&server, &remote, arguments, ctx).await
}

#[async_trait]
impl Tool for Meta {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(manager) = self.manager.upgrade() else {
            return Err(ToolError::new("the MCP client has shut down"));
        };
        match self.kind {
            Kind::Discover => {
                let args: DiscoverArgs = parse(args)?;
                manager.ready(std::time::Duration::from_secs(10)).await;
                let mut text = String::from("Servers:\n");
                for server in manager.servers() {
                    let health = server.health().await;
                    let error = health.last_error.map(|e| format!(" — last error: {e}")).unwrap_or_default();
                    writeln!(text, "- `{}`: {}, {} tools{error}", server.name(), health.state, health.tools).ok();
                }
                let limit = args.limit.unwrap_or(10).max(1);
                let ranked: Vec<_> = manager
                    .rank(args.query.as_deref().unwrap_or_default())
                    .into_iter()
                    .filter(|(_, s, _)| args.server.as_deref().is_none_or(|name| name == s.name()))
                    .take(limit)
                    .collect();
                writeln!(text, "\nTools (best first):").ok();
                for (rank, server, tool) in &ranked {
                    writeln!(
                        text,
                        "- `{}` (server `{}`{}; score {:.2}): {}\n  arguments: {}",
                        tool.exposed,
                        server.name(),
                        if tool.read_only { ", read-only" } else { "" },
                        rank.score,
                        tool.description.lines().next().unwrap_or_default(),
                        tool.schema
                    )
                    .ok();
                }
                if ranked.is_empty() {
                    text.push_str("(none)\n");
                }
                Ok(ToolOutput::new(format!("{} MCP tools", ranked.len()), text).with("count", ranked.len()))
            }
            Kind::CallChain => {
                let args: ChainArgs = parse(args)?;
                if args.steps.is_empty() {
                    return Err(ToolError::new("`steps` is empty: give at least one {tool, arguments}"));
                }
                let mut previous = String::new();
                let mut text = String::new();
                for (i, step) in args.steps.iter().enumerate() {
                    let step = Step { tool: step.tool.clone(), arguments: substitute(&step.arguments, &previous) };
                    match run_step(&manager, &step, &ctx).await {
                        Ok(out) => {
                            writeln!(text, "## step {}: `{}` — ok\n{}\n", i + 1, step.tool, out.output).ok();
                            previous = out.output;
                        }
                        Err(err) => {
                            return Err(ToolError::new(format!(
                                "{text}## step {}: `{}` — failed\n{}\n(The chain stopped here; steps after it did not run.)",
                                i + 1,
                                step.tool,
                                err.message
                            ))
                            .with("failedStep", i + 1));
                        }
                    }
                }
                Ok(ToolOutput::new(format!("{} MCP calls", args.steps.len()), text).with("final", previous))
            }
            Kind::FanOut => {
                let args: FanOutArgs = parse(args)?;
                if args.calls.is_empty() || args.calls.len() > 8 {
                    return Err(ToolError::new("`calls` must hold 1 to 8 {tool, arguments}"));
                }
                let started = Instant::now();
                let results =
                    futures_util::future::join_all(args.calls.iter().map(|step| run_step(&manager, step, &ctx))).await;
                let failed = results.iter().filter(|r| r.is_err()).count();
                let mut text = String::new();
                for (i, (step, result)) in args.calls.iter().zip(results).enumerate() {
                    match result {
                        Ok(out) => writeln!(text, "## {}. `{}` — ok\n{}\n", i + 1, step.tool, out.output),
                        Err(err) => writeln!(text, "## {}. `{}` — failed\n{}\n", i + 1, step.tool, err.message),
                    }
                    .ok();
                }
                Ok(ToolOutput::new(format!("{} MCP calls, {failed} failed", args.calls.len()), text)
                    .with("failed", failed)
                    .with("elapsedMs", started.elapsed().as_millis() as u64))
            }
            Kind::Summary => {
                let _: SummaryArgs = parse(args)?;
                let calls = manager.session_calls(ctx.session_id.as_deref());
                let mut per_tool: std::collections::BTreeMap<&str, (u64, u64, u64)> = Default::default();
                for call in &calls {
                    let entry = per_tool.entry(&call.tool).or_default();
                    entry.0 += 1;
                    entry.1 += u64::from(!call.ok);
                    entry.2 += call.ms;
                }
                let mut text = format!("{} MCP calls in this session.\n", calls.len());
                for (tool, (n, failed, ms)) in &per_tool {
                    writeln!(text, "- `{tool}`: {n} calls, {failed} failed, mean {} ms", ms / n.max(&1)).ok();
                }
                writeln!(text, "\nServers:").ok();
                for server in manager.servers() {
                    let health = server.health().await;
                    writeln!(
                        text,
                        "- `{}`: {} ({} calls, {} failed)",
                        server.name(),
                        health.state,
                        health.calls.0,
                        health.calls.1
                    )
                    .ok();
                }
                let log = manager.tracker().log_path(ctx.session_id.as_deref());
                writeln!(text, "\nLog: {}", log.display()).ok();
                Ok(ToolOutput::new("MCP session summary", text).with("calls", calls.len()))
            }
            Kind::Manage => {
                let args: ManageArgs = parse(args)?;
                match args.action.as_str() {
                    "list" | "health" => {
                        let mut text = String::new();
                        for server in manager.servers() {
                            if args.name.as_deref().is_some_and(|n| n != server.name()) {
                                continue;
                            }
                            let health = server.health().await;
                            writeln!(
                                text,
                                "- `{}` ({}): {}, {} tools, {} calls, {} failed{}",
                                server.name(),
                                server.config.source,
                                health.state,
                                health.tools,
                                health.calls.0,
                                health.calls.1,
                                health.last_error.map(|e| format!("; last error: {e}")).unwrap_or_default()
                            )
                            .ok();
                        }
                        Ok(ToolOutput::new("MCP servers", if text.is_empty() { "(no servers)".into() } else { text }))
                    }
                    action @ ("add" | "remove") => {
                        let Some(name) = args.name else {
                            return Err(ToolError::new(format!("`{action}` needs `name`")));
                        };
                        if let Some(approver) = &ctx.approver {
                            let check = ToolCheck {
                                tool: "mcp_server_manage".into(),
                                server: Some(name.clone()),
                                arguments: json!({"action": action, "name": name, "config": args.config}),
                                reason: format!("it would {action} an MCP server (a program or endpoint tools run on)"),
                            };
                            match approver.confirm_tool(&check).await {
                                CommandDecision::Allow => {}
                                CommandDecision::Reject { .. }
                                | CommandDecision::Cancelled
                                | CommandDecision::RunSandboxed => {
                                    return Err(ToolError::new(format!(
                                        "the person did not allow to {action} `{name}`"
                                    )));
                                }
                            }
                        }
                        if action == "remove" {
                            return if manager.remove_server(&name).await {
                                Ok(ToolOutput::new(format!("Removed MCP server {name}"), format!("`{name}` removed.")))
                            } else {
                                Err(ToolError::new(format!("no MCP server `{name}`")))
                            };
                        }
                        let Some(config) = args.config else {
                            return Err(ToolError::new("`add` needs `config` ({\"command\", \"args\"} or {\"url\"})"));
                        };
                        let mut parsed = McpConfig::default();
                        parsed.merge(&json!({"mcpServers": {name.clone(): config}}), "mcp_server_manage", &|v| {
                            std::env::var(v).ok()
                        });
                        let Some(server) = parsed.servers.remove(&name) else {
                            return Err(ToolError::new(format!(
                                "invalid server configuration: {}",
                                parsed.warnings.join("; ")
                            )));
                        };
                        match manager.add_server(server).await {
                            Ok(tools) => Ok(ToolOutput::new(
                                format!("Added MCP server {name}"),
                                format!("`{name}` connected with {tools} tools."),
                            )),
                            Err(err) => Err(ToolError::new(format!("`{name}` was added but does not connect: {err}"))),
                        }
                    }
                    other => Err(ToolError::new(format!("unknown action `{other}`: use list, health, add or remove"))),
                }
            }
        }
    }
}
