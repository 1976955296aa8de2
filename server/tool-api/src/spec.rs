//! What a tool is, as the registry, the editor and the model see it: its fixed [`ToolSpec`]
//! and the [`Effect`] it declares.

use std::sync::OnceLock;

use serde_json::Value;
use tandem_protocol::ToolGroup;

use crate::Service;

/// Everything the registry and the editor need to know about a tool, fixed at construction.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// Canonical name.
    pub name: &'static str,
    /// Names models already know (`read_file`, ...).
    pub aliases: &'static [&'static str],
    /// Words for tool search.
    pub keywords: &'static [&'static str],
    /// What it does and when to use it, for the model.
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub parameters: Parameters,
    /// Its group (what profiles switch).
    pub group: ToolGroup,
    /// It changes files or state.
    pub can_write: bool,
    /// It may run concurrently with other calls.
    pub concurrency_safe: bool,
    /// Unknown arguments are an error (otherwise they are ignored and reported).
    pub strict: bool,
    /// Always offered to the model, even when tool search hides others.
    pub always_load: bool,
    /// What it may change: the gate (the registry, the commit path, the command check) and the
    /// MCP annotations read it.
    pub effect: Effect,
    /// Its changes may destroy or overwrite (as opposed to only adding).
    pub destructive: bool,
    /// Arguments of a typical call (JSON), for help texts; `None`: made up from the schema.
    pub example: Option<&'static str>,
    /// For a tool that writes in only some of its operations: which (`rename`), for help texts.
    pub writes_only_in: Option<&'static str>,
    /// The services it cannot work without: a registry leaves it out where its door cannot
    /// provide one, and refuses a call that comes without one.
    pub needs: &'static [Service],
}

/// What a tool may change, declared once in its [`ToolSpec`]. Every effect but the first three
/// goes through the gate: the person's approval (unless the session's mode says otherwise),
/// blocked in plan mode, refused by a read-only `tandem mcp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reads the workspace and changes nothing.
    Read,
    /// Reads from the network (web fetch and search) and changes nothing.
    Network,
    /// Changes only the session's own state (todo list, plan mode, questions, sub-agents, its
    /// background jobs).
    Session,
    /// Changes workspace files. The change is staged and goes through the commit path, which
    /// shows it to the person as a diff before anything is written.
    Files,
    /// Runs commands. Each command is checked (refused, read-only, or asks) before it runs.
    Commands,
    /// Changes state outside the workspace's files that later sessions read (memories). The
    /// registry asks before the call.
    State,
    /// A tool of an outside (MCP) server that does not declare itself read-only: the MCP
    /// client asks before the call.
    External,
}

impl Effect {
    /// It changes nothing outside the session.
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::Read | Self::Network | Self::Session)
    }

    /// Why the person is asked, in a few words.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Read | Self::Network | Self::Session => "changes nothing",
            Self::Files => "changes files",
            Self::Commands => "runs commands",
            Self::State => "changes what later sessions remember",
            Self::External => "the server does not mark this tool read-only, so it may change things",
        }
    }
}

/// The JSON Schema of a tool's arguments, made the first time it is looked at: a process that
/// runs one tool (`tandem tool glob …`) never derives the schemas of the thirty others, nor
/// frees them at exit. Reads as the schema's [`Value`].
pub struct Parameters {
    made: OnceLock<Value>,
    make: fn() -> Value,
}

impl Parameters {
    /// A schema known already.
    pub fn new(schema: Value) -> Self {
        Self { made: OnceLock::from(schema), make: || Value::Null }
    }

    /// A schema `make` derives when it is first needed.
    pub fn lazy(make: fn() -> Value) -> Self {
        Self { made: OnceLock::new(), make }
    }

    /// Whether the schema exists yet (given, or derived by a look at it).
    pub fn is_made(&self) -> bool {
        self.made.get().is_some()
    }
}

impl std::ops::Deref for Parameters {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.made.get_or_init(self.make)
    }
}

impl Clone for Parameters {
    fn clone(&self) -> Self {
        Self { made: self.made.clone(), make: self.make }
    }
}

impl std::fmt::Debug for Parameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl PartialEq<Value> for Parameters {
    fn eq(&self, other: &Value) -> bool {
        **self == *other
    }
}

impl serde::Serialize for Parameters {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl ToolSpec {
    /// A tool that changes nothing, may run concurrently and asks nobody (see [`Decl::new`]),
    /// for tools whose spec is only known at run time (an MCP server's).
    pub fn new(name: &'static str, group: ToolGroup, description: &'static str, parameters: Value) -> Self {
        Decl::new(name, group, description).spec(parameters)
    }
}

/// What a tool declares once, as a constant ([`TypedTool::DECL`](crate::TypedTool::DECL)):
/// its name, group, description and effects. Its [`ToolSpec`] is derived from this and the
/// schema of its argument type, never written by hand.
#[derive(Clone, Copy, Debug)]
pub struct Decl {
    name: &'static str,
    aliases: &'static [&'static str],
    keywords: &'static [&'static str],
    description: &'static str,
    group: ToolGroup,
    can_write: bool,
    concurrency_safe: bool,
    strict: bool,
    always_load: bool,
    effect: Effect,
    destructive: bool,
    example: Option<&'static str>,
    writes_only_in: Option<&'static str>,
    needs: &'static [Service],
}

impl Decl {
    /// A tool that changes nothing, may run concurrently and asks nobody; the setters below
    /// change that. Its effect starts from its group: web tools read the network; plan,
    /// question and sub-agent tools change only the session; the rest read.
    pub const fn new(name: &'static str, group: ToolGroup, description: &'static str) -> Self {
        Self {
            name,
            aliases: &[],
            keywords: &[],
            description,
            group,
            can_write: false,
            concurrency_safe: true,
            strict: false,
            always_load: false,
            example: None,
            writes_only_in: None,
            needs: &[],
            effect: match group {
                ToolGroup::Web => Effect::Network,
                ToolGroup::Plan | ToolGroup::Interact | ToolGroup::Agent => Effect::Session,
                _ => Effect::Read,
            },
            destructive: false,
        }
    }

    /// The canonical name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The spec of a tool so declared whose arguments have the schema `parameters`.
    pub fn spec(self, parameters: Value) -> ToolSpec {
        self.spec_with(Parameters::new(parameters))
    }

    /// The spec of a tool so declared whose arguments have the schema `make` derives, when it
    /// is first needed.
    pub fn spec_lazy(self, make: fn() -> Value) -> ToolSpec {
        self.spec_with(Parameters::lazy(make))
    }

    fn spec_with(self, parameters: Parameters) -> ToolSpec {
        ToolSpec {
            name: self.name,
            aliases: self.aliases,
            keywords: self.keywords,
            description: self.description,
            parameters,
            group: self.group,
            can_write: self.can_write,
            concurrency_safe: self.concurrency_safe,
            strict: self.strict,
            always_load: self.always_load,
            effect: self.effect,
            destructive: self.destructive,
            example: self.example,
            writes_only_in: self.writes_only_in,
            needs: self.needs,
        }
    }

    /// It writes files only in `operations` (said in help texts; the rest only reads).
    pub const fn writes_only_in(mut self, operations: &'static str) -> Self {
        self.writes_only_in = Some(operations);
        self
    }

    /// The services the tool cannot work without (see [`ToolSpec::needs`]).
    pub const fn needs(mut self, services: &'static [Service]) -> Self {
        self.needs = services;
        self
    }

    /// Arguments of a typical call (JSON), shown in help texts.
    pub const fn example(mut self, arguments: &'static str) -> Self {
        self.example = Some(arguments);
        self
    }

    /// Other names that resolve to the tool.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// Words for tool search.
    pub const fn keywords(mut self, keywords: &'static [&'static str]) -> Self {
        self.keywords = keywords;
        self
    }

    /// The tool changes workspace files through the commit path (which asks with the diff).
    pub const fn writes(self) -> Self {
        self.with_effect(Effect::Files)
    }

    /// The tool runs commands (each checked, and asked about, before it runs).
    pub const fn runs_commands(self) -> Self {
        self.with_effect(Effect::Commands)
    }

    /// The tool changes state that later sessions read (the registry asks before the call).
    pub const fn changes_state(self) -> Self {
        self.with_effect(Effect::State)
    }

    /// A tool of an outside server that may change things (its client asks before the call).
    pub const fn external(self) -> Self {
        self.with_effect(Effect::External)
    }

    /// The tool changes only the session's own state.
    pub const fn session_only(mut self) -> Self {
        self.effect = Effect::Session;
        self
    }

    /// Its changes only add (a new memory, text appended): MCP's `destructiveHint: false`.
    pub const fn additive(mut self) -> Self {
        self.destructive = false;
        self
    }

    /// The tool runs alone, though it changes nothing itself (it may call tools that do).
    pub const fn exclusive(mut self) -> Self {
        self.concurrency_safe = false;
        self
    }

    /// A changing effect: the tool runs alone, and may destroy unless marked [`Self::additive`].
    const fn with_effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self.can_write = true;
        self.concurrency_safe = false;
        self.destructive = true;
        self
    }

    /// Always offered to the model.
    pub const fn always_load(mut self) -> Self {
        self.always_load = true;
        self
    }

    /// Unknown arguments are an error.
    pub const fn strict(mut self) -> Self {
        self.strict = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static MADE: AtomicUsize = AtomicUsize::new(0);

    fn schema() -> Value {
        MADE.fetch_add(1, Ordering::SeqCst);
        serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}})
    }

    #[test]
    fn a_lazy_schema_is_derived_once_when_first_looked_at() {
        let spec = Decl::new("t", ToolGroup::Search, "T.").spec_lazy(schema);
        let copy = spec.clone();
        assert_eq!(MADE.load(Ordering::SeqCst), 0, "made before anything looked at it");
        assert!(!spec.parameters.is_made() && !copy.parameters.is_made());
        assert_eq!(spec.parameters["type"], "object");
        assert_eq!(serde_json::to_value(&spec.parameters).ok(), Some(schema()));
        assert_eq!(MADE.load(Ordering::SeqCst), 2, "derived once by the spec, once by the test");
        // A copy taken before is still lazy; one taken after shares what was made.
        assert!(!copy.parameters.is_made());
        assert!(spec.clone().parameters.is_made());
        assert_eq!(spec.parameters, schema());
    }
}
