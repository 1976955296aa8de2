//! The registry: the tools of a process, looked up by name or alias, filtered by the profile,
//! validated, and run so that a panic becomes an error result.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use futures_util::FutureExt;
use serde_json::{Value, json};
use tandem_protocol::{ToolInfo, ToolResult};

use crate::approval::{Declined, confirm_whole};
use crate::schema::validate_arguments;
use crate::{Door, Effect, Tool, ToolCheck, ToolConfig, ToolContext, ToolError, ToolOutput, ToolSpec};

/// A call that cannot even start. Everything else is a [`ToolResult`] with `error` set.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No tool has this name or alias.
    #[error("unknown tool `{name}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest enabled name.
        suggestion: Option<String>,
    },
}

/// The tools of one process: the built-in ones, fixed at construction, and dynamic sets that an
/// owner (an MCP server: `mcp:<name>`) adds, replaces or removes while the process runs.
/// A dynamic tool never shadows a built-in one of the same name.
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<&'static str, usize>,
    dynamic: RwLock<BTreeMap<String, Vec<Arc<dyn Tool>>>>,
    config: ToolConfig,
    door: Door,
}

impl Registry {
    /// A registry of `tools` under `config`, at a door whose calls can have every service
    /// ([`Door::ANY`]; a door that cannot says so with [`Registry::at_door`]).
    pub fn new(tools: Vec<Arc<dyn Tool>>, config: ToolConfig) -> Self {
        let mut by_name = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let spec = tool.spec();
            by_name.insert(spec.name, i);
            for alias in spec.aliases {
                by_name.entry(*alias).or_insert(i);
            }
        }
        Self { tools, by_name, dynamic: RwLock::new(BTreeMap::new()), config, door: Door::ANY }
    }

    /// The registry as `door` offers it: a tool that needs a service the door does not
    /// provide ([`ToolSpec::needs`]) is left out of what it lists, with the reason logged, and a
    /// call to it says which service it needs and where it works.
    pub fn at_door(mut self, door: Door) -> Self {
        self.door = door;
        for spec in self.tools.iter().map(|t| t.spec()) {
            if let Some(service) = door.unmet(spec.needs) {
                tracing::info!(
                    tool = spec.name,
                    door = door.name(),
                    "not offered: {}",
                    service.missing(spec.name, door.name())
                );
            }
        }
        self
    }

    /// The door the registry serves.
    pub fn door(&self) -> Door {
        self.door
    }

    /// Replaces the dynamic tools of `owner` with `tools` (an empty list removes them). Their
    /// names must not be built-in names (those are skipped with a warning).
    pub fn set_dynamic(&self, owner: &str, tools: Vec<Arc<dyn Tool>>) {
        let tools: Vec<_> = tools
            .into_iter()
            .filter(|t| {
                let clash = self.by_name.contains_key(t.spec().name);
                if clash {
                    tracing::warn!(owner, tool = t.spec().name, "a dynamic tool has a built-in name; skipped");
                }
                !clash
            })
            .collect();
        let mut dynamic = self.dynamic.write().unwrap_or_else(PoisonError::into_inner);
        if tools.is_empty() {
            dynamic.remove(owner);
        } else {
            dynamic.insert(owner.to_owned(), tools);
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// The tool called `name` (or with that alias), enabled or not.
    pub fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(i) = self.by_name.get(name) {
            return Some(Arc::clone(&self.tools[*i]));
        }
        let dynamic = self.dynamic.read().unwrap_or_else(PoisonError::into_inner);
        dynamic.values().flatten().find(|t| t.spec().name == name || t.spec().aliases.contains(&name)).cloned()
    }

    /// The enabled tools whose needs the door meets: built-in ones in registration order, then
    /// dynamic ones by owner.
    pub fn enabled(&self) -> impl Iterator<Item = Arc<dyn Tool>> + use<> {
        let dynamic = self.dynamic.read().unwrap_or_else(PoisonError::into_inner);
        let all: Vec<Arc<dyn Tool>> =
            self.tools.iter().chain(dynamic.values().flatten()).filter(|t| self.offers(t.spec())).cloned().collect();
        all.into_iter()
    }

    /// The tool is enabled, and its door meets its needs.
    fn offers(&self, spec: &ToolSpec) -> bool {
        self.config.is_enabled(spec) && self.door.unmet(spec.needs).is_none()
    }

    /// The enabled tools as the editor protocol lists them.
    pub fn infos(&self) -> Vec<ToolInfo> {
        self.enabled()
            .map(|t| {
                let spec = t.spec();
                ToolInfo {
                    name: spec.name.to_owned(),
                    aliases: spec.aliases.iter().map(|a| (*a).to_owned()).collect(),
                    description: spec.description.to_owned(),
                    group: spec.group,
                    can_write: spec.can_write,
                    concurrency_safe: spec.concurrency_safe,
                    parameters: (*spec.parameters).clone(),
                }
            })
            .collect()
    }

    /// Function definitions in the OpenAI Chat Completions `tools` format.
    pub fn openai_definitions(&self) -> Vec<Value> {
        self.enabled()
            .map(|t| {
                let spec = t.spec();
                json!({ "type": "function", "function": {
                    "name": spec.name, "description": spec.description, "parameters": spec.parameters } })
            })
            .collect()
    }

    /// Tool definitions in the Anthropic Messages `tools` format.
    pub fn anthropic_definitions(&self) -> Vec<Value> {
        self.enabled()
            .map(|t| {
                let spec = t.spec();
                json!({ "name": spec.name, "description": spec.description, "input_schema": spec.parameters })
            })
            .collect()
    }

    /// Runs the tool `name` with `args`. Unknown names are a [`CallError`]; everything else,
    /// including invalid arguments, a disabled tool and a panic, is a result with `error` set.
    pub async fn call(&self, name: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, CallError> {
        let Some(tool) = self.find(name) else {
            return Err(self.unknown_tool(name));
        };
        let spec = tool.spec();
        let started = Instant::now();
        let outcome = if !self.config.is_enabled(spec) {
            Err(ToolError::new(self.config.why_disabled(spec)))
        } else if let Some(missing) = self.missing(spec, &ctx) {
            Err(ToolError::new(missing))
        } else {
            match validate_arguments(&spec.parameters, args, spec.strict) {
                Err(err) => Err(ToolError::new(format!("invalid arguments for `{}`: {err}", spec.name))),
                Ok(valid) => 'call: {
                    if let Err(refused) = gate(spec, &valid.value, &ctx).await {
                        break 'call Err(refused);
                    }
                    // A panic in the tool is caught here, in this task (no hand-off to
                    // another task: that costs a thread wake-up per call).
                    let call = std::panic::AssertUnwindSafe(tool.call(valid.value, ctx));
                    let mut outcome = match call.catch_unwind().await {
                        Ok(outcome) => outcome,
                        Err(panic) => {
                            let message = panic
                                .downcast_ref::<&str>()
                                .map(|s| (*s).to_owned())
                                .or_else(|| panic.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "unknown panic".to_owned());
                            tracing::error!(tool = spec.name, "tool panicked: {message}");
                            Err(ToolError::new(format!(
                                "tool `{}` crashed (panic: {message}); this is a bug in tandem. Read the affected files again before retrying",
                                spec.name
                            )))
                        }
                    };
                    if !valid.ignored.is_empty() {
                        let ignored = Value::from(valid.ignored);
                        match &mut outcome {
                            Ok(out) => out.metadata.insert("ignoredArguments".into(), ignored),
                            Err(err) => err.metadata.insert("ignoredArguments".into(), ignored),
                        };
                    }
                    outcome
                }
            }
        };
        let elapsed = started.elapsed().as_millis() as u64;
        Ok(match outcome {
            Ok(ToolOutput { title, output, mut metadata, attachments }) => {
                metadata.insert("durationMs".into(), elapsed.into());
                ToolResult { title, output, metadata, error: None, attachments }
            }
            Err(ToolError { message, mut metadata }) => {
                metadata.insert("durationMs".into(), elapsed.into());
                ToolResult {
                    title: format!("{} failed", spec.name),
                    output: String::new(),
                    metadata,
                    error: Some(message),
                    attachments: Vec::new(),
                }
            }
        })
    }

    /// Why a call of the tool `spec` cannot run here: a service it needs that the door does not
    /// provide, or that this call (`ctx`) came without.
    fn missing(&self, spec: &ToolSpec, ctx: &ToolContext) -> Option<String> {
        if let Some(service) = self.door.unmet(spec.needs) {
            return Some(service.missing(spec.name, self.door.name()));
        }
        let service = spec.needs.iter().find(|need| !ctx.has(**need))?;
        Some(service.missing(spec.name, "this call"))
    }

    /// The error for a call to `name`, which is not a tool here, with the closest name.
    pub fn unknown_tool(&self, name: &str) -> CallError {
        CallError::UnknownTool { name: name.to_owned(), suggestion: self.suggest(name) }
    }

    fn suggest(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        let dynamic: Vec<&'static str> = self.enabled().map(|t| t.spec().name).collect();
        self.by_name
            .keys()
            .copied()
            .filter(|k| self.find(k).is_some_and(|t| self.offers(t.spec())))
            .chain(dynamic)
            .map(|k| (strsim(&lower, k), k))
            .filter(|(score, _)| *score >= 0.5)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k.to_owned())
    }
}

/// The registry's part of the gate: a tool whose effect is [`Effect::State`] changes what
/// later sessions read without a diff to review, so the call's approver (the session's mode
/// and the person, or `tandem mcp`'s policy) decides before it runs. Files and commands are
/// asked about where the change is known: the commit path shows the diff, the command check
/// the command line.
async fn gate(spec: &ToolSpec, arguments: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
    if spec.effect != Effect::State {
        return Ok(());
    }
    let check = ToolCheck {
        tool: spec.name.to_owned(),
        server: None,
        arguments: arguments.clone(),
        reason: spec.effect.reason().to_owned(),
    };
    let rejected = format!("`{}` was not allowed to run ({}); nothing was changed.", spec.name, spec.effect.reason());
    let declined =
        Declined { rejected: &rejected, hint: "Do not retry it unchanged", untouched: "nothing was changed" };
    confirm_whole(ctx.approver.as_deref(), &check, declined).await
}

/// Similarity in 0..=1 from the longest common subsequence of the two names.
fn strsim(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut row = vec![0usize; b.len() + 1];
    for ca in &a {
        let mut prev = 0;
        for (j, cb) in b.iter().enumerate() {
            let keep = row[j + 1];
            row[j + 1] = if ca == cb { prev + 1 } else { row[j + 1].max(row[j]) };
            prev = keep;
        }
    }
    2.0 * row[b.len()] as f64 / (a.len() + b.len()) as f64
}
