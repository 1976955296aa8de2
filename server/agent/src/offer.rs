//! The tool definitions a session's requests carry, shared from one request to the next.

use std::sync::Arc;

use tandem_llm::ToolDef;

/// Tool definitions as a request carries them, and their size in JSON.
#[derive(Clone)]
pub(crate) struct ToolSet {
    pub(crate) defs: Arc<[ToolDef]>,
    pub(crate) bytes: usize,
}

/// The tool sets of recent requests, so a turn shares the definitions of the last one rather
/// than copying every schema again: the same tools (the same objects, whose specs cannot
/// change) give the same definitions.
#[derive(Default)]
pub(crate) struct ToolSets {
    /// The full set and the deferred one: a session alternates between at most these two.
    recent: Vec<(Vec<Arc<dyn tandem_tool_api::Tool>>, ToolSet)>,
}

impl ToolSets {
    pub(crate) fn get(&mut self, tools: &[Arc<dyn tandem_tool_api::Tool>]) -> ToolSet {
        let same = |known: &[Arc<dyn tandem_tool_api::Tool>]| {
            known.len() == tools.len() && known.iter().zip(tools).all(|(a, b)| Arc::ptr_eq(a, b))
        };
        if let Some((_, set)) = self.recent.iter().find(|(known, _)| same(known)) {
            return set.clone();
        }
        let defs: Vec<ToolDef> = tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                ToolDef {
                    name: spec.name.to_owned(),
                    description: spec.description.to_owned(),
                    parameters: (*spec.parameters).clone(),
                }
            })
            .collect();
        let set = ToolSet { bytes: crate::tokens::json_size(&defs), defs: defs.into() };
        if self.recent.len() >= 2 {
            self.recent.remove(0);
        }
        self.recent.push((tools.to_vec(), set.clone()));
        set
    }
}
