//! What the command tools share: the safety classifier behind permission checks, and the
//! redaction of secrets in command output before the model sees it, and the process groups
//! that are stopped when a command's call ends or is cancelled.

mod bash;
mod group;
pub mod redact;
pub mod safety;
pub mod sandbox;
mod script;

pub use group::{GRACE, stop_all, track_group};

use std::sync::Arc;

use tandem_tool_api::{Tool, typed};

/// The command tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(bash::Bash), typed(bash::BashOutput), typed(script::ShellScript), typed(script::PythonScript)]
}
