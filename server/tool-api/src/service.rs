//! The services a call may have besides the workspace, what a tool needs of them, and what a
//! door provides: a registry leaves out the tools whose needs its door cannot meet, so that a
//! door never offers a tool that can only fail there.

/// A service on the [`ToolContext`](crate::ToolContext) that not every door, or every call, has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Service {
    /// The editor ([`ToolContext::editor`](crate::ToolContext::editor)).
    Editor,
    /// Language servers ([`ToolContext::intel`](crate::ToolContext::intel)).
    Intel,
    /// Someone who approves changes and commands ([`ToolContext::approver`](crate::ToolContext::approver)).
    Approver,
    /// The agent session: task list, questions, plan mode, sub-agents ([`ToolContext::host`](crate::ToolContext::host)).
    Host,
    /// The registry the call came through ([`ToolContext::registry`](crate::ToolContext::registry)).
    Registry,
    /// The log of what the call wrote ([`ToolContext::writes`](crate::ToolContext::writes)).
    Writes,
}

impl Service {
    /// Every service.
    pub const ALL: &'static [Service] =
        &[Self::Editor, Self::Intel, Self::Approver, Self::Host, Self::Registry, Self::Writes];

    /// What it is, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Editor => "a connected editor",
            Self::Intel => "language servers",
            Self::Approver => "someone who approves its changes",
            Self::Host => "an agent session (its task list, questions, plan mode and sub-agents)",
            Self::Registry => "the tool registry",
            Self::Writes => "a log of what the call writes",
        }
    }

    /// Where a tool that needs it works, for the message of a call where it is missing.
    pub fn found_in(self) -> &'static str {
        match self {
            Self::Editor => "an editor's door (`tandem lsp`, `tandem acp`)",
            Self::Intel => "a door with language servers configured (`tandem lsp`, `tandem acp`, `tandem run`)",
            Self::Approver | Self::Host | Self::Writes => {
                "an agent session (tandem/session/prompt in an editor, `tandem acp`, `tandem run`)"
            }
            Self::Registry => "every door of the `tandem` binary",
        }
    }

    /// Why `tool` cannot run where `place` (a door, or "this call") lacks this service: the
    /// message names the service and where the tool works.
    pub fn missing(self, tool: &str, place: &str) -> String {
        format!(
            "`{tool}` needs {}, which {place} does not provide; it works inside {}",
            self.describe(),
            self.found_in()
        )
    }
}

/// A way into Tandem's tools (`tandem tool`, `tandem mcp`, an editor, an agent session) and the
/// services its calls can have. The door builds its registry with it
/// ([`Registry::at_door`](crate::Registry::at_door)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Door {
    name: &'static str,
    provides: &'static [Service],
}

impl Door {
    /// A door whose calls can have every service: the default of a registry (an editor's
    /// door and agent sessions, a library's tests).
    pub const ANY: Door = Door::new("this door", Service::ALL);

    /// `tandem tool` and `tandem tools`: the person's calls from the shell, with the registry and
    /// the language servers, no session, no editor, nobody to ask.
    pub const SHELL: Door = Door::new("`tandem tool`", &[Service::Intel, Service::Registry]);

    /// `tandem mcp`: an outside agent's calls, with the registry, the language servers and the
    /// door's own approver (its write policy); no session, no editor.
    pub const MCP: Door = Door::new("`tandem mcp`", &[Service::Intel, Service::Registry, Service::Approver]);

    /// A door called `name` (as messages name it) whose calls can have `provides`.
    pub const fn new(name: &'static str, provides: &'static [Service]) -> Self {
        Self { name, provides }
    }

    /// Its name, as messages say it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The first of `needs` this door cannot meet.
    pub fn unmet(&self, needs: &[Service]) -> Option<Service> {
        needs.iter().copied().find(|need| !self.provides.contains(need))
    }
}

impl Default for Door {
    fn default() -> Self {
        Self::ANY
    }
}
