//! The sandbox that makes "runs without asking" true.
//!
//! - A command the classifier calls read-only runs under the `read-only` policy (Landlock: the
//!   whole file system readable, nothing writable but `/dev/null` and the like, no TCP), so a
//!   misclassified writer fails with EACCES instead of writing.
//! - In auto-edit mode, a command that would ask may run without asking under the
//!   `workspace-write` policy instead: writes only under the workspace and the temporary
//!   directories, `.git` and `.tandem` read-only, no network unless `[exec] network = true`.
//!   Commands that destroy data still ask.
//!
//! Both are applied by a launcher program (`tandem-sandbox`, or the `tandem` binary's hidden
//! `sandbox` command) that restricts itself and then runs `bash`; every child inherits it. The
//! binary installs the sandbox once per process ([`install`]) after probing the kernel. Where
//! the kernel cannot enforce the read-only policy, read-only commands ask (unless
//! `[exec] sandbox = "off"`); where it cannot enforce the write policy (no unprivileged user
//! namespaces), commands ask as before.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::OnceLock;

/// How read-only commands run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sandbox {
    /// Under the launcher at this path (`<launcher> sandbox --read-only -- bash -c …`).
    Launcher(PathBuf),
    /// The kernel cannot enforce it (the reason): read-only commands ask.
    Unavailable(String),
    /// Switched off by configuration: read-only commands run unsandboxed without asking.
    Off,
}

/// The `workspace-write` policy's settings (`[exec]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteSettings {
    /// Auto-edit mode may run commands that would ask in the `workspace-write` sandbox.
    pub enabled: bool,
    /// The sandboxed command keeps the network.
    pub network: bool,
}

/// What a command runs under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// Unsandboxed (the person approved it, or the sandbox is off).
    None,
    /// The `read-only` policy.
    ReadOnly,
    /// The `workspace-write` policy for this workspace root.
    WorkspaceWrite(PathBuf),
}

impl Confinement {
    /// The name reported to the model (`sandbox` in a result's metadata).
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Confinement::None => None,
            Confinement::ReadOnly => Some("read-only"),
            Confinement::WorkspaceWrite(_) => Some("workspace-write"),
        }
    }

    /// The launcher and its arguments up to the program (`… -- `), or `None` to run the
    /// program directly.
    pub fn launcher_argv(&self) -> Option<(PathBuf, Vec<std::ffi::OsString>)> {
        let Sandbox::Launcher(launcher) = current() else { return None };
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        // `tandem-sandbox` takes the options directly; `tandem` through its `sandbox` command.
        if launcher.file_name().is_some_and(|n| n != "tandem-sandbox") {
            args.push("sandbox".into());
        }
        match self {
            Confinement::None => return None,
            Confinement::ReadOnly => args.push("--read-only".into()),
            Confinement::WorkspaceWrite(root) => {
                args.push("--workspace-write".into());
                args.push(root.into());
                if write_settings().network {
                    args.push("--network".into());
                }
            }
        }
        args.push("--".into());
        Some((launcher.clone(), args))
    }
}

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
static WRITE: OnceLock<WriteSettings> = OnceLock::new();
static WRITE_PROBE: OnceLock<Result<(), WriteUnavailable>> = OnceLock::new();

/// Sets the sandbox for this process (once; later calls are ignored).
pub fn install(sandbox: Sandbox, write: WriteSettings) {
    if SANDBOX.set(sandbox).is_err() || WRITE.set(write).is_err() {
        tracing::debug!("the sandbox was already installed");
    }
}

/// The sandbox in force; [`Sandbox::Off`] when none was installed (a library user, a test).
pub fn current() -> &'static Sandbox {
    SANDBOX.get().unwrap_or(&Sandbox::Off)
}

/// The `workspace-write` settings in force (disabled when none were installed).
pub fn write_settings() -> WriteSettings {
    WRITE.get().copied().unwrap_or_default()
}

/// Why the `workspace-write` sandbox cannot be used (for `tandem doctor`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteUnavailable {
    /// The settings turn it off.
    #[error("switched off ([exec] sandbox = \"read-only\" or \"off\")")]
    SwitchedOff,
    /// The read-only sandbox it builds on is unavailable.
    #[error("the read-only sandbox, which it builds on, is unavailable")]
    NoReadOnly,
    /// The probe could not run.
    #[error("{0}")]
    Probe(String),
    /// The launcher refused to set it up (what it said).
    #[error("{0}")]
    Refused(String),
}

/// Whether a command that would ask may run in the `workspace-write` sandbox instead: enabled,
/// and the kernel enforces it (probed once, by running the launcher on `true`).
pub fn workspace_write_available() -> Result<(), WriteUnavailable> {
    if !write_settings().enabled {
        return Err(WriteUnavailable::SwitchedOff);
    }
    WRITE_PROBE.get_or_init(probe_write).clone()
}

fn probe_write() -> Result<(), WriteUnavailable> {
    let dir = tempfile::tempdir().map_err(|err| WriteUnavailable::Probe(format!("cannot probe the sandbox: {err}")))?;
    let Some((launcher, args)) = Confinement::WorkspaceWrite(dir.path().to_path_buf()).launcher_argv() else {
        return Err(WriteUnavailable::NoReadOnly);
    };
    let output = std::process::Command::new(launcher)
        .args(args)
        .arg("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|err| WriteUnavailable::Probe(format!("cannot start the sandbox launcher: {err}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(WriteUnavailable::Refused(String::from_utf8_lossy(&output.stderr).trim().to_owned()))
    }
}
