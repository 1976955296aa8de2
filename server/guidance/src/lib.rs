//! What a team and a person tell the agent in files, found and read without async: the
//! instruction files from the workspace root down to the working directory (`AGENTS.md`, or
//! `CLAUDE.md` where a directory has no `AGENTS.md`) and the person's own
//! (`~/.config/tandem/AGENTS.md`); path-scoped rules (`.tandem/rules/*.md`); custom slash
//! commands (`.tandem/commands/*.md`, `.claude/commands/*.md`); skills (`SKILL.md` folders).
//!
//! Repository files are read only through [`tandem_tool_api::shared::read_shared`]: regular
//! files inside the workspace, capped, symlinks resolved first. A malformed front matter is a
//! [`Problem`] naming the file and the line, never a silent skip. The agent decides when what
//! is found reaches the model: [`system_block`] for the system prompt (under a budget, with a
//! note naming what was cut), [`Tracker`] for what arrives when a file is first read or
//! edited, [`report`] for `tandem context`.

mod commands;
pub mod front;
mod instructions;
mod places;
mod prompt;
mod rules;
mod skills;
mod tracker;

pub use commands::{BUILTIN_INIT, BUILTINS, Command, Invocation, commands, expand, invocation, shadowed_notice};
pub use instructions::{Instruction, chain, nested_in};
pub use places::{Origin, Places, Problem, Severity};
pub use prompt::{BYTES_PER_TOKEN, Cut, SystemBlock, report, system_block, tokens};
pub use rules::{Rule, rules};
pub use skills::{Skill, skill_files, skills};
pub use tracker::{Arrival, ArrivalKind, Tracker, is_arrival};
