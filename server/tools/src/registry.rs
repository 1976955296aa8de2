//! The registry: every built-in tool, looked up by name or alias, filtered by the profile,
//! validated, and run so that a panic becomes an error result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tandem_protocol::{ToolInfo, ToolResult};

use crate::schema::validate_arguments;
use crate::{Tool, ToolConfig, ToolContext, ToolError, ToolOutput};

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

/// The tools of one process.
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<&'static str, usize>,
    config: ToolConfig,
}

impl Registry {
    /// A registry of `tools` under `config`.
    pub fn new(tools: Vec<Arc<dyn Tool>>, config: ToolConfig) -> Self {
        let mut by_name = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let spec = tool.spec();
            by_name.insert(spec.name, i);
            for alias in spec.aliases {
                by_name.entry(*alias).or_insert(i);
            }
        }
        Self { tools, by_name, config }
    }

    /// Every built-in tool, under `config`.
    pub fn builtin(config: ToolConfig) -> Self {
        Self::new(crate::fs::all(), config)
    }

    /// The configuration in force.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// The tool called `name` (or with that alias), enabled or not.
    pub fn find(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }

    /// The enabled tools, in registration order.
    pub fn enabled(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter().filter(|t| self.config.is_enabled(t.spec()))
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
                    parameters: spec.parameters.clone(),
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
            return Err(CallError::UnknownTool { name: name.to_owned(), suggestion: self.suggest(name) });
        };
        let spec = tool.spec();
        let started = Instant::now();
        let outcome = if !self.config.is_enabled(spec) {
            Err(ToolError::new(self.config.why_disabled(spec)))
        } else {
            match validate_arguments(&spec.parameters, args, spec.strict) {
                Err(err) => Err(ToolError::new(format!("invalid arguments for `{}`: {err}", spec.name))),
                Ok(valid) => {
                    let tool = Arc::clone(tool);
                    // A task of its own, so that a panic in the tool is caught here.
                    let handle = tokio::spawn(async move { tool.call(valid.value, ctx).await });
                    let mut outcome = match handle.await {
                        Ok(outcome) => outcome,
                        Err(err) => {
                            tracing::error!(tool = spec.name, "tool panicked: {err}");
                            Err(ToolError::new(format!(
                                "tool `{}` crashed ({err}); this is a bug in tandem. Read the affected files again before retrying",
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
            Ok(ToolOutput { title, output, mut metadata }) => {
                metadata.insert("durationMs".into(), elapsed.into());
                ToolResult { title, output, metadata, error: None, attachments: Vec::new() }
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

    fn suggest(&self, name: &str) -> Option<String> {
        let lower = name.to_ascii_lowercase();
        self.by_name
            .keys()
            .filter(|k| self.find(k).is_some_and(|t| self.config.is_enabled(t.spec())))
            .map(|k| (strsim(&lower, k), *k))
            .filter(|(score, _)| *score >= 0.5)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k.to_owned())
    }
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
