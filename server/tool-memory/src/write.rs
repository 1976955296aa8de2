//! `memory_write`: keeps a note for later sessions.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_text::disk::{self, Expected};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};
use tandem_tool_fs::blocking;

use super::{Memory, MemoryType, Scope, file_name, memory_dir, render};

const DESCRIPTION: &str = "Remember something for later sessions: the person's preferences (type `user`), their \
    feedback on your work (`feedback`), facts and decisions about this project (`project`), or where to find things \
    (`reference`). Keep each memory to one fact, with a specific title. Scope `project` (default) keeps it in this \
    workspace, `user` in every workspace of this person. Do not store secrets.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// A short, specific title.
    title: String,
    /// The fact, in a few sentences.
    content: String,
    /// user, feedback, project (default) or reference.
    #[serde(default, rename = "type")]
    kind: Option<MemoryType>,
    /// Keywords to find it by.
    #[serde(default)]
    tags: Vec<String>,
    /// project (default) or user.
    #[serde(default)]
    scope: Option<Scope>,
}

tool!(pub(crate) MemoryWrite(Args) = Decl::new("memory_write", ToolGroup::Memory, DESCRIPTION)
    .aliases(&["remember", "save_memory"])
    .keywords(&["memory", "remember", "note", "preference"])
    .changes_state()
    .additive());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if args.title.trim().is_empty() || args.content.trim().is_empty() {
        return Err(ToolError::new("a memory needs a `title` and some `content`"));
    }
    let scope = args.scope.unwrap_or(Scope::Project);
    let dir = memory_dir(ctx.workspace.root(), scope)
        .ok_or_else(|| ToolError::new("no home directory for user memories (HOME is not set); use scope `project`"))?;
    let now = std::time::SystemTime::now();
    let nanos = now.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let id = format!("{:08x}", tandem_text::ContentHash::of(format!("{}{nanos}", args.title).as_bytes()).0 as u32);
    let memory = Memory {
        id: id.clone(),
        title: args.title.trim().to_owned(),
        kind: args.kind.unwrap_or(MemoryType::Project),
        tags: args.tags,
        created: humantime::format_rfc3339_seconds(now).to_string(),
        content: args.content.trim().to_owned(),
        scope,
        path: dir.join("x.md"),
    };
    let path = dir.join(file_name(&memory));
    let text = render(&memory);
    let write_path = path.clone();
    let root = ctx.workspace.root().to_path_buf();
    blocking(move || {
        match scope {
            // The workspace's shared `.tandem/memory`: never through a shipped symlink.
            Scope::Project => {
                tandem_tool_api::state::workspace_dir(&root, "memory").map_err(|e| ToolError::new(e.to_string()))?;
            }
            Scope::User => std::fs::create_dir_all(&dir)
                .map_err(|e| ToolError::new(format!("cannot create {}: {e}", dir.display())))?,
        }
        disk::write_atomic(&write_path, text.as_bytes(), Expected::Absent)?;
        Ok(())
    })
    .await?;
    let shown = match scope {
        Scope::Project => ctx.workspace.display(&path),
        Scope::User => path.display().to_string(),
    };
    Ok(ToolOutput::new(
        format!("Remembered: {}", memory.title),
        format!(
            "Saved memory `{id}` ({}, {} scope) in `{shown}`.",
            memory.kind.as_str(),
            if scope == Scope::User { "user" } else { "project" }
        ),
    )
    .with("id", id)
    .with("path", shown))
}
