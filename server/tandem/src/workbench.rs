//! The workbench every front door opens: the project's root, its configuration, the workspace
//! (confinement), the buffer cache, the tool registry, the MCP servers and the language servers.
//! `tandem lsp`, `tandem acp`, `tandem run`, `tandem mcp` and `tandem tool` all start from
//! [`Workbench::open`], so a tool behaves the same whichever door called it.
//!
//! Where the project is: an editor names it (LSP `workspaceFolders` / `rootUri`, an ACP
//! session's `cwd`: [`Root::Given`]); the command line finds it from the current directory, as
//! git does: the nearest ancestor holding `.git` or `.tandem`, else the current directory itself
//! ([`Root::Around`]). `--root DIR` names it on the command line. Relative paths in tool
//! arguments start from the working directory (the current directory when it is inside the
//! project), not from the root.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_agent::{Agent, AgentConfig, AgentError, SessionClient};
use tandem_lsp_proxy::{LspProxy, ProgressEvent};
use tandem_mcp::McpManager;
use tandem_protocol::InitializationOptions;
use tandem_text::BufferCache;
use tandem_tools::{CodeIntel, Door, EditorClient, Registry, ToolContext, Workspace};
use tokio::sync::mpsc::UnboundedSender;

use crate::config::Config;

/// How long a command-line door waits for MCP servers to list their tools.
pub const MCP_READY_WAIT_CLI: std::time::Duration = std::time::Duration::from_secs(30);

/// Where the project is.
#[derive(Clone, Debug)]
pub enum Root {
    /// The client named the project's root (an editor's workspace folder, `--root`); the
    /// working directory is `cwd` when it is inside it, else the root.
    Given {
        /// The root.
        root: PathBuf,
        /// The working directory, when there is one.
        cwd: Option<PathBuf>,
    },
    /// Found from this directory (the current one): the nearest ancestor with `.git` or
    /// `.tandem`, else the directory itself, which stays the working directory.
    Around(PathBuf),
}

impl Root {
    /// The command line's choice: `--root` when given, else found around the current directory.
    pub fn from_cli(explicit: Option<PathBuf>) -> Result<Self, WorkbenchError> {
        let cwd = std::env::current_dir().map_err(WorkbenchError::CurrentDir)?;
        Ok(match explicit {
            Some(root) => Root::Given { root: cwd.join(root), cwd: Some(cwd) },
            None => Root::Around(cwd),
        })
    }

    /// The root and the working directory, both canonical.
    pub fn resolve(&self) -> Result<(PathBuf, PathBuf), WorkbenchError> {
        let canonical = |path: &Path| {
            path.canonicalize().map_err(|source| WorkbenchError::Root { root: path.to_path_buf(), source })
        };
        match self {
            Root::Given { root, cwd } => {
                let root = canonical(root)?;
                let cwd = cwd.as_deref().and_then(|c| c.canonicalize().ok()).filter(|c| c.starts_with(&root));
                Ok((root.clone(), cwd.unwrap_or(root)))
            }
            Root::Around(start) => {
                let start = canonical(start)?;
                Ok((project_root(&start), start))
            }
        }
    }
}

/// The nearest ancestor of `start` (itself included) that holds `.git` (a directory, or the
/// file of a linked worktree or submodule) or a `.tandem` directory; `start` when none does.
pub fn project_root(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join(".tandem").is_dir())
        .unwrap_or(start)
        .to_path_buf()
}

/// What a door wants besides the root.
#[derive(Default)]
pub struct Options {
    /// The editor's `initializationOptions` (profile, mode, provider).
    pub init: Option<InitializationOptions>,
    /// Where language servers report readiness and progress (the LSP door's `$/progress`).
    pub progress: Option<UnboundedSender<ProgressEvent>>,
    /// Which MCP servers start (costs time and starts programs).
    pub mcp: Mcp,
    /// The buffer cache, when the door shares one across workspaces (the ACP door).
    pub cache: Option<Arc<BufferCache>>,
    /// Nobody reads a change's diagnostics preview (`tandem run --yes`): none is made.
    pub no_previews: bool,
    /// How long a language-server query may wait for its server to finish indexing (`None`:
    /// the request timeout); the warm servers of `tandem tool lsp` wait for the index once.
    pub lsp_ready_wait: Option<std::time::Duration>,
    /// What the door's calls can have: its registry leaves out the tools that need more.
    pub door: Door,
}

/// What a door wants of the configured MCP servers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mcp {
    /// None are started.
    #[default]
    Off,
    /// They are started so their tools can be listed and called (`tandem tool`, `tandem tools`).
    Tools,
    /// They are started for agent sessions, with `mcp_server_manage` in the full profile.
    Sessions,
}

/// Why a workbench could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WorkbenchError {
    /// The current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The root does not exist or cannot be read.
    #[error("cannot open the project at {}: {source}", root.display())]
    Root {
        /// The root asked for.
        root: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration is invalid (the message names the file and the key).
    #[error("{0:#}")]
    Config(anyhow::Error),
    /// The provider settings are invalid or incomplete.
    #[error("{0:#}")]
    Provider(anyhow::Error),
    /// The agent could not start.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// The project as the tools see it.
pub struct Workbench {
    /// The configuration in force (user, project, editor, environment).
    pub config: Config,
    /// The workspace: its root and confinement.
    pub workspace: Arc<Workspace>,
    /// Where relative paths start (inside the workspace).
    pub working_dir: PathBuf,
    /// The editor's open documents (empty outside an editor).
    pub cache: Arc<BufferCache>,
    /// The tools (MCP tools join once their servers list them).
    pub registry: Arc<Registry>,
    /// The MCP servers, unless [`Options::mcp`] is [`Mcp::Off`].
    pub mcp: Option<Arc<McpManager>>,
    /// The language servers (started on demand); `None` when their settings are invalid.
    pub intel: Option<Arc<LspProxy>>,
    /// The person's policy: permission rules, hooks, verify.
    pub policy: Arc<tandem_policy::Policy>,
    /// The editor's initialization options, for reading the configuration again.
    init: Option<tandem_protocol::InitializationOptions>,
    /// The model given on the command line (`tandem run --model`), which outranks the files.
    pub model_override: Option<String>,
}

impl Workbench {
    /// Opens the project at `root`.
    pub fn open(root: &Root, options: Options) -> Result<Self, WorkbenchError> {
        let (root, working_dir) = root.resolve()?;
        let init = options.init.clone();
        let mut config = Config::load(&root, init.as_ref()).map_err(WorkbenchError::Config)?;
        // State an older version kept in the workspace: moved once when trusted, never read.
        match tandem_tools::state::legacy::settle(&root, config.trust) {
            Ok(Some(notice)) => config.warnings.push(notice),
            Ok(None) => {}
            Err(err) => config.warnings.push(format!("sessions and checkpoints cannot be kept: {err}")),
        }
        let workspace = Workspace::new(&root, &config.allowed_paths)
            .map_err(|source| WorkbenchError::Root { root: root.clone(), source })?;
        let workspace = Arc::new(workspace);
        let cache = options.cache.unwrap_or_default();
        let registry = Arc::new(tandem_tools::builtin(config.tools.clone()).at_door(options.door));
        let policy = (config.policy.build(workspace.root(), &registry, config.user_file.clone()))
            .map_err(WorkbenchError::Config)?;
        let manage_tool = options.mcp == Mcp::Sessions && config.tools.profile == tandem_tools::Profile::Full;
        let mcp = (options.mcp != Mcp::Off)
            .then(|| McpManager::from_workspace(workspace.root(), Arc::clone(&registry), manage_tool));
        // A preview nobody reads (or that the configuration turns off) waits no time at all.
        let no_previews = options.no_previews || config.precheck == crate::config::Precheck::Off;
        let preview_ms = if no_previews { Some(0) } else { config.preview_timeout_ms };
        let intel =
            match LspProxy::new(workspace.root().to_path_buf(), Arc::clone(&cache), &config.lsp, options.progress) {
                Ok(mut proxy) => {
                    if let Some(ms) = preview_ms {
                        proxy = proxy.with_preview_wait(std::time::Duration::from_millis(ms));
                    }
                    if let Some(files) = config.preview_files {
                        proxy = proxy.with_preview_files(files);
                    }
                    if let Some(wait) = options.lsp_ready_wait {
                        proxy = proxy.with_ready_wait(wait);
                    }
                    Some(Arc::new(proxy))
                }
                Err(err) => {
                    tracing::error!("language servers are off: {err}");
                    None
                }
            };
        tracing::info!(root = %workspace.root().display(), cwd = %working_dir.display(), profile = %config.tools.profile, "workbench opened");
        Ok(Self { config, workspace, working_dir, cache, registry, mcp, intel, policy, init, model_override: None })
    }

    /// The configuration's warnings, logged.
    pub fn log_warnings(&self) {
        for warning in &self.config.warnings {
            tracing::warn!("{warning}");
        }
    }
    /// The configuration's warnings for a person at the command line: one `tandem: …` line
    /// each on stderr (and in the log).
    pub fn say_warnings(&self) {
        for warning in &self.config.warnings {
            tracing::debug!("{warning}");
            eprintln!("tandem: {warning}");
        }
    }

    /// The language servers as tools see them.
    pub fn code_intel(&self) -> Option<Arc<dyn CodeIntel>> {
        self.intel.clone().map(|proxy| proxy as Arc<dyn CodeIntel>)
    }

    /// A call with the authority of the person (no session, nothing asks), in the working
    /// directory, with the language servers.
    pub fn tool_context(&self) -> ToolContext {
        let mut ctx = ToolContext::new(Arc::clone(&self.workspace), Arc::clone(&self.cache));
        ctx.working_dir = self.working_dir.clone();
        ctx.intel = self.code_intel();
        ctx.registry = Some(Arc::clone(&self.registry));
        ctx
    }

    /// The agent's settings from the configuration.
    pub fn agent_config(&self) -> Result<AgentConfig, WorkbenchError> {
        let provider = self.config.provider_settings().map_err(WorkbenchError::Provider)?;
        let mut config = self.config.agent_config(provider);
        config.policy = Arc::clone(&self.policy);
        if !config.untrusted_settings.is_empty() {
            // Once the person trusts the folder from a prompt, the provider is read again with
            // the folder's own settings.
            let (root, init, model) =
                (self.workspace.root().to_path_buf(), self.init.clone(), self.model_override.clone());
            config.reload = Some(tandem_agent::Reload(Arc::new(move || {
                let mut config = Config::load(&root, init.as_ref()).map_err(|e| tracing::warn!("{e:#}")).ok()?;
                if model.is_some() {
                    config.provider.model.clone_from(&model);
                }
                config.provider_settings().map_err(|e| tracing::warn!("{e:#}")).ok()
            })));
        }
        Ok(config)
    }

    /// The agent serving this project's sessions through `client` (and `editor`, when the
    /// door has one).
    pub fn agent(
        &self,
        editor: Option<Arc<dyn EditorClient>>,
        client: Arc<dyn SessionClient>,
        config: AgentConfig,
    ) -> Result<Arc<Agent>, WorkbenchError> {
        let agent = Agent::new(
            Arc::clone(&self.workspace),
            Arc::clone(&self.cache),
            Arc::clone(&self.registry),
            editor,
            self.code_intel(),
            client,
            config,
        )?;
        Ok(agent)
    }

    /// Waits (bounded) for the MCP servers to list their tools.
    pub async fn mcp_ready(&self, wait: std::time::Duration) {
        if let Some(mcp) = &self.mcp {
            mcp.ready(wait).await;
        }
    }

    /// Stops the language servers it started (they outlive the process otherwise).
    pub async fn stop_language_servers(&self) {
        if let Some(proxy) = &self.intel {
            proxy.shutdown().await;
        }
    }

    /// Stops everything it started: language servers and MCP servers.
    pub async fn close(&self) {
        self.stop_language_servers().await;
        if let Some(mcp) = &self.mcp {
            mcp.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_is_the_nearest_ancestor_with_git_or_tandem() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let outer = dir.path().join("outer");
        let proj = outer.join("proj");
        let deep = proj.join("a/b");
        std::fs::create_dir_all(&deep)?;
        std::fs::create_dir_all(outer.join(".tandem"))?;
        assert_eq!(project_root(&deep), outer);
        std::fs::create_dir_all(proj.join(".git"))?;
        assert_eq!(project_root(&deep), proj);
        assert_eq!(project_root(&proj), proj);
        let lonely = tempfile::tempdir()?;
        let lonely = lonely.path().canonicalize()?;
        assert_eq!(project_root(&lonely), lonely);
        Ok(())
    }

    #[test]
    fn a_given_root_keeps_a_working_directory_inside_it_only() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::create_dir_all(root.join("sub"))?;
        let inside = Root::Given { root: root.clone(), cwd: Some(root.join("sub")) }.resolve()?;
        assert_eq!(inside, (root.clone(), root.join("sub")));
        let outside = Root::Given { root: root.join("sub"), cwd: Some(root.clone()) }.resolve()?;
        assert_eq!(outside, (root.join("sub"), root.join("sub")));
        Ok(())
    }
}
