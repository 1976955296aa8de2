//! What the command tools share: the safety classifier behind permission checks, and the
//! redaction of secrets in command output before the model sees it.

mod bash;
pub mod redact;
pub mod safety;
pub mod sandbox;
mod script;

use std::sync::Arc;

use crate::Tool;

/// The command tools.
pub(crate) fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(bash::Bash::new()),
        Arc::new(bash::BashOutput::new()),
        Arc::new(script::Script::shell()),
        Arc::new(script::Script::python()),
    ]
}
