//! `tandem/worktree/list` and `tandem/worktree/review`: the agents' git worktrees from the
//! editor, and a worktree's change brought over into the workspace through the per-hunk review
//! (the same review and commit path as an agent's edit: nothing is written before the person
//! accepts, and what they accept is committed all-or-nothing).

use std::sync::Arc;

use tandem_agent::SessionClient;
use tandem_agent::approver::{CallApprover, SessionGate};
use tandem_protocol::{
    ModeId, ToolKind, WorktreeLeftFile, WorktreeListResult, WorktreeReviewParams, WorktreeReviewResult,
};
use tandem_tools::{EditorClient, Incoming};
use tokio_util::sync::CancellationToken;

use crate::rpc::RpcError;
use crate::workbench::Workbench;

/// `tandem/worktree/list`.
pub async fn list(bench: &Workbench) -> Result<WorktreeListResult, RpcError> {
    let root = bench.workspace.root().to_path_buf();
    let worktrees = tokio::task::spawn_blocking(move || crate::worktree::infos(&root))
        .await
        .map_err(|err| RpcError::internal(err.to_string()))?
        .map_err(|err| RpcError::invalid_params(format!("{err:#}")))?;
    Ok(WorktreeListResult { worktrees })
}

/// `tandem/worktree/review`: the change of the worktree `params.name` against its base, asked
/// about in one review (every file, hunk by hunk) and committed as accepted.
pub async fn review(
    bench: &Workbench,
    editor: Arc<dyn EditorClient>,
    client: Arc<dyn SessionClient>,
    params: WorktreeReviewParams,
    cancel: &CancellationToken,
) -> Result<WorktreeReviewResult, RpcError> {
    let root = bench.workspace.root().to_path_buf();
    let name = params.name.clone();
    let (base, incoming, mut left) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let (worktree, base, changed) = crate::worktree::changes(&root, &name)?;
        let main = crate::worktree::main_of(&root)?;
        let mut incoming = Vec::new();
        let mut left = Vec::new();
        for file in changed {
            if let Some(why) = &file.unsupported {
                left.push(WorktreeLeftFile { path: file.path.clone(), reason: why.clone() });
                continue;
            }
            incoming.push(Incoming {
                path: main.join(&file.path),
                from: file.from.as_ref().map(|from| main.join(from)),
                base: crate::worktree::blob(&worktree, &file, true)?,
                new: crate::worktree::blob(&worktree, &file, false)?,
            });
        }
        Ok((base, incoming, left))
    })
    .await
    .map_err(|err| RpcError::internal(err.to_string()))?
    .map_err(|err| RpcError::invalid_params(format!("{err:#}")))?;
    // A review of its own, asked whatever mode the sessions are in: the person asked for it.
    let id = format!("worktree-{}", params.name);
    let gate = Arc::new(SessionGate::new(id.clone(), ModeId::Default));
    let approver = CallApprover::new(
        gate,
        client,
        cancel.clone(),
        id,
        format!("Bring over worktree {}", params.name),
        ToolKind::Edit,
        serde_json::json!({ "worktree": params.name, "base": base }),
    )
    .once_only();
    let mut ctx = bench.tool_context();
    ctx.editor = Some(editor);
    ctx.approver = Some(Arc::new(approver) as Arc<dyn tandem_tools::Approver>);
    let brought = tandem_tools::bring_over(&ctx, incoming).await;
    let mut message = brought.message;
    for file in &left {
        message.push_str(&format!("\nLeft out `{}`: {}.", file.path, file.reason));
    }
    left.extend(brought.left.into_iter().map(|(path, reason)| WorktreeLeftFile { path, reason }));
    Ok(WorktreeReviewResult { base, applied: brought.applied, left, message })
}

/// A worktree that sessions work in: its own workbench (workspace, tools, language servers)
/// and agent, sharing the editor's connection and buffer cache.
struct Place {
    bench: Workbench,
    agent: Arc<tandem_agent::Agent>,
    name: String,
    path: String,
    branch: String,
}

/// The worktrees opened for sessions (`tandem/session/new` with `worktree`), and which session
/// works in which.
#[derive(Default)]
pub struct Places {
    /// By name; opened once, reused by the next sessions.
    opened: tokio::sync::Mutex<std::collections::HashMap<String, Arc<Place>>>,
    /// The agent of each session started in one.
    sessions: parking_lot::Mutex<std::collections::HashMap<String, Arc<tandem_agent::Agent>>>,
}

/// A worktree ready for a session, and whether this request created it.
pub struct Opened {
    place: Arc<Place>,
    created: bool,
}

impl Places {
    /// The agent of `session_id`, when it works in a worktree.
    pub fn agent_of(&self, session_id: &str) -> Option<Arc<tandem_agent::Agent>> {
        self.sessions.lock().get(session_id).cloned()
    }

    /// The worktree `name` of the repository around `main`'s workspace, created or reused (as
    /// `tandem run --worktree` does), with a workbench and an agent of its own.
    pub async fn open(
        &self,
        main: &Workbench,
        init: Option<tandem_protocol::InitializationOptions>,
        cache: &Arc<tandem_text::BufferCache>,
        editor: Arc<dyn EditorClient>,
        client: Arc<dyn SessionClient>,
        name: &str,
    ) -> Result<Opened, RpcError> {
        let mut opened = self.opened.lock().await;
        if let Some(place) = opened.get(name) {
            return Ok(Opened { place: Arc::clone(place), created: false });
        }
        let root = crate::workbench::Root::Given { root: main.workspace.root().to_path_buf(), cwd: None };
        let what = name.to_owned();
        let worktree = tokio::task::spawn_blocking(move || crate::worktree::prepare(&root, &what))
            .await
            .map_err(|err| RpcError::internal(err.to_string()))?
            .map_err(|err| RpcError::invalid_params(format!("{err:#}")))?;
        let options = crate::workbench::Options {
            init,
            progress: None,
            mcp: crate::workbench::Mcp::Sessions,
            cache: Some(Arc::clone(cache)),
            no_previews: false,
        };
        let root = crate::workbench::Root::Given { root: worktree.path.clone(), cwd: None };
        let bench = Workbench::open(&root, options).map_err(|err| RpcError::invalid_params(err.to_string()))?;
        bench.log_warnings();
        let agent = bench
            .agent_config()
            .and_then(|config| bench.agent(Some(editor), client, config))
            .map_err(|err| RpcError::invalid_params(err.to_string()))?;
        let place = Arc::new(Place {
            bench,
            agent,
            name: worktree.name,
            path: worktree.path.display().to_string(),
            branch: worktree.branch,
        });
        opened.insert(name.to_owned(), Arc::clone(&place));
        Ok(Opened { place, created: worktree.created })
    }

    /// A new session in the worktree `opened`; its result says where it works.
    pub fn new_session(
        &self,
        opened: Opened,
        mut params: tandem_protocol::SessionNewParams,
    ) -> Result<tandem_protocol::SessionNewResult, RpcError> {
        let Opened { place, created } = opened;
        params.worktree = None;
        params.cwd = None;
        let mut result = place.agent.new_session(params).map_err(|err| RpcError::invalid_params(err.to_string()))?;
        self.sessions.lock().insert(result.session_id.clone(), Arc::clone(&place.agent));
        result.worktree = Some(tandem_protocol::WorktreePlace {
            name: place.name.clone(),
            path: place.path.clone(),
            branch: place.branch.clone(),
            created,
        });
        Ok(result)
    }

    /// Stops the worktrees' language servers (at the end of the connection).
    pub async fn stop_language_servers(&self) {
        let places: Vec<Arc<Place>> = self.opened.lock().await.values().cloned().collect();
        for place in places {
            place.bench.stop_language_servers().await;
        }
    }
}
