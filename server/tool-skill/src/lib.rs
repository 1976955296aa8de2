//! The tool that loads skills: only a skill's name and description are in the system prompt;
//! `skill` returns its instructions and lists its other files when the model needs them.

mod skill;

use std::sync::Arc;

use tandem_tool_api::{Tool, typed};

/// The skill tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(skill::SkillTool)]
}
