//! `memory_delete`: forgets a memory by id (or a unique prefix of it).

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::load_all;

const DESCRIPTION: &str = "Delete a memory that is wrong or outdated, by its id (a unique prefix is enough).";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// The memory's id, or a unique prefix.
    memory_id: String,
}

tool!(pub(crate) MemoryDelete(Args) = Decl::new("memory_delete", ToolGroup::Memory, DESCRIPTION)
    .aliases(&["forget", "delete_memory"])
    .keywords(&["memory", "forget", "remove"])
    .changes_state());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let prefix = args.memory_id.trim();
    if prefix.len() < 2 {
        return Err(ToolError::new("give at least two characters of the memory's id"));
    }
    let all = load_all(ctx.workspace.root());
    let matches: Vec<_> = all.iter().filter(|m| m.id.starts_with(prefix)).collect();
    let memory = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(ToolError::new(format!(
                "no memory with id `{prefix}`; `memory_read` lists them with their ids"
            )));
        }
        many => {
            let ids: Vec<String> = many.iter().map(|m| format!("{} ({})", m.id, m.title)).collect();
            return Err(ToolError::new(format!(
                "`{prefix}` matches several memories: {}; give more of the id",
                ids.join(", ")
            )));
        }
    };
    std::fs::remove_file(&memory.path)
        .map_err(|e| ToolError::new(format!("cannot delete {}: {e}", memory.path.display())))?;
    Ok(ToolOutput::new(
        format!("Forgot: {}", memory.title),
        format!("Deleted memory `{}` ({}).", memory.id, memory.title),
    )
    .with("id", memory.id.clone()))
}
