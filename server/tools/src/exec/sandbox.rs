//! The sandbox that makes "read-only" true: a command the classifier calls read-only runs
//! under Landlock with the whole file system readable, nothing writable but `/dev/null` and the
//! like, and no TCP connections, so a misclassified writer fails with EACCES instead of
//! writing. The sandbox is applied by a launcher program (the `tandem` binary's hidden
//! `sandbox` command) that restricts itself and then runs `bash`; every child inherits it.
//!
//! The binary installs the sandbox once per process ([`install`]) after probing the kernel.
//! Where the kernel cannot enforce it, read-only commands ask instead of running unchecked
//! (unless `[exec] sandbox = "off"`).

use std::path::PathBuf;
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

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();

/// Sets the sandbox for this process (once; later calls are ignored).
pub fn install(sandbox: Sandbox) {
    if SANDBOX.set(sandbox).is_err() {
        tracing::debug!("the sandbox was already installed");
    }
}

/// The sandbox in force; [`Sandbox::Off`] when none was installed (a library user, a test).
pub fn current() -> &'static Sandbox {
    SANDBOX.get().unwrap_or(&Sandbox::Off)
}
