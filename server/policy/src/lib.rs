//! The person's policy, written once and enforced at every door: permission rules
//! (`[permissions] allow / ask / deny`, [`rule`]), decided per call ([`decide`]: deny beats ask,
//! ask beats allow, a compound command is allowed only part by part), hooks compatible with
//! Claude Code's ([`hooks`]), and the "always" answers written back into the person's
//! configuration ([`persist`]).
//!
//! **Architecture invariant:** no knowledge of sessions, tools or doors: the caller gives a
//! call as a tool name and what the rules can look into (command parts, paths, a URL), and
//! gets a [`Verdict`]. Only [`hooks`] and [`persist`] do IO.

pub mod decide;
pub mod hooks;
pub mod persist;
pub mod rule;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

pub use decide::{CommandPart, Rules, Verdict, always_rule};
pub use hooks::{Hook, HookError, HookEvent, HookOutcome, HookRun, Hooks};
pub use rule::{Action, Origin, Rule, RuleError, Source, shell_words};

/// `[verify]`: commands run when a turn that changed files ends; a failure goes back to the
/// model, up to `max_rounds` times.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verify {
    /// The commands, run in order in the project's root (`bash -c`).
    pub commands: Vec<String>,
    /// How many times a failure goes back to the model in one turn (default 3).
    pub max_rounds: u32,
    /// How long each command may run.
    pub timeout: std::time::Duration,
}

/// Everything the person's policy says, shared by a process's sessions. Rules can grow while
/// it runs (an "always" answer); hooks and verify are fixed at start.
#[derive(Debug, Default)]
pub struct Policy {
    rules: RwLock<Rules>,
    /// The hooks in force.
    pub hooks: Hooks,
    /// The verify loop, when configured.
    pub verify: Option<Verify>,
    /// Where an "always" answer is written (the person's `config.toml`); `None`: nowhere,
    /// the rule lasts for this process.
    pub person_file: Option<PathBuf>,
}

impl Policy {
    /// A policy of `rules`, `hooks` and `verify`; "always" answers go to `person_file`.
    pub fn new(rules: Rules, hooks: Hooks, verify: Option<Verify>, person_file: Option<PathBuf>) -> Arc<Self> {
        Arc::new(Self { rules: RwLock::new(rules), hooks, verify, person_file })
    }

    /// The rules in force now (a copy: decide against it, then let go).
    pub fn rules(&self) -> Rules {
        self.rules.read().map(|r| r.clone()).unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Adds the person's "always allow" rule `text` (for `tool`s such as `bash(npm test:*)`):
    /// in force at once, and written to their configuration when there is one. Returns the
    /// file it was written to, or why it could not be.
    pub fn allow_always(&self, text: &str) -> Result<Option<PathBuf>, String> {
        let file = self.person_file.as_ref().map_or_else(|| "this session".to_owned(), |p| p.display().to_string());
        let source = Source { origin: Origin::Person, file };
        let rule = Rule::parse(Action::Allow, text, source, &|_| None, None).map_err(|e| e.to_string())?;
        match self.rules.write() {
            Ok(mut rules) => rules.push(rule),
            Err(poisoned) => poisoned.into_inner().push(rule),
        }
        match &self.person_file {
            Some(path) => {
                persist::add_rule(path, Action::Allow, text).map(|()| Some(path.clone())).map_err(|e| e.to_string())
            }
            None => Ok(None),
        }
    }
}
