//! `todowrite` / `todoread`: the session's task list, shown in the editor as the plan.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::session::{Todo, TodoStatus};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{SESSION, host};

const WRITE: &str = "Replace the session's task list. Use it for work with three or more steps: write the \
    steps first, mark exactly one `in_progress` while you work on it, and mark each `completed` as soon as it is \
    done. The person sees the list in the editor.";
const READ: &str = "Show the session's task list with each task's status.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WriteArgs {
    /// The whole list, in order (it replaces the old one).
    todos: Vec<Todo>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ReadArgs {}

fn render(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "(the task list is empty)".to_owned();
    }
    todos
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mark = match t.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            format!("{}. {mark} {}", i + 1, t.content)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

tool!(pub(crate) TodoWrite(WriteArgs) = Decl::new("todowrite", ToolGroup::Plan, WRITE)
    .aliases(&["todo_write", "TodoWrite", "update_todos", "update_plan"])
    .keywords(&["task", "list", "plan", "progress", "steps"])
    .needs(SESSION), todo_write);

async fn todo_write(args: WriteArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<TodoWrite>(&ctx)?;
    if let Some(empty) = args.todos.iter().position(|t| t.content.trim().is_empty()) {
        return Err(ToolError::new(format!("task {} has no content", empty + 1)));
    }
    let count = |s| args.todos.iter().filter(|t| t.status == s).count();
    let (pending, active, done) =
        (count(TodoStatus::Pending), count(TodoStatus::InProgress), count(TodoStatus::Completed));
    let mut output = render(&args.todos);
    if active == 0 && pending > 0 {
        output.push_str("\n\nWarning: no task is in progress; mark the one you work on `in_progress`.");
    }
    if active > 1 {
        output.push_str(&format!(
            "\n\nWarning: {active} tasks are in progress; keep one at a time and finish it before starting the next."
        ));
    }
    let total = args.todos.len();
    host.set_todos(args.todos).await;
    Ok(ToolOutput::new(format!("Tasks: {done}/{total} done"), output)
        .with("pending", pending)
        .with("inProgress", active)
        .with("completed", done))
}

tool!(pub(crate) TodoRead(ReadArgs) = Decl::new("todoread", ToolGroup::Plan, READ)
    .aliases(&["todo_read", "TodoRead", "read_todos"])
    .keywords(&["task", "list", "plan", "progress"])
    .needs(SESSION), todo_read);

async fn todo_read(_args: ReadArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let todos = host::<TodoRead>(&ctx)?.todos();
    let done = todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
    Ok(ToolOutput::new(format!("Tasks: {done}/{} done", todos.len()), render(&todos)))
}
