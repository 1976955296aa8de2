//! The sandbox launcher, `tandem-sandbox --read-only -- PROGRAM ARGS…` or
//! `tandem-sandbox --workspace-write ROOT [--network] -- PROGRAM ARGS…` (also `tandem sandbox`,
//! hidden): restricts itself, then runs the program, which inherits the restriction with all
//! its children.
//!
//! - `read-only`: Landlock. The whole file system readable, writes only to `/dev/null` and the
//!   like, no TCP bind or connect.
//! - `workspace-write`: writes under ROOT and the temporary directories only. What other
//!   programs run later, outside the sandbox, stays as it is ([`PROTECTED`]: `.git`, `.tandem`,
//!   `.mcp.json`, `.vscode`, `.idea`, `.devcontainer`, `.envrc`, and the hooks directory that the
//!   repository's `core.hooksPath` names inside ROOT): a command must not plant a git hook or
//!   `core.fsmonitor`, an MCP server, an editor task or a direnv script, nor raise its own
//!   session's privileges through Tandem's settings. Those that exist are bind-mounted
//!   read-only: Landlock cannot carve a read-only hole in a writable tree, so the launcher first
//!   enters a user and mount namespace of its own (mapped to the same uid, so files keep their
//!   owner). Those that do not exist cannot be created because nothing new can be created
//!   directly in ROOT: Landlock grants rights per directory tree, never per name, and a mount
//!   needs an existing file to cover, so ROOT itself gets every right but creating (files in it
//!   can be written, renamed within and removed), and each directory already in it gets every
//!   right. Placeholders on disk would show in the person's tree and race with their tools. A
//!   temporary directory that holds ROOT is not writable (its rights would reach ROOT); `TMPDIR`
//!   then points to one that is. Without `--network` it also enters an empty network namespace
//!   (no interface but a loopback that is down, so no TCP, UDP or DNS) and Landlock denies TCP
//!   too.
//!
//! Under both policies a seccomp filter (built by `seccompiler`, never hand-written BPF) refuses
//! to create a unix-domain socket, and io_uring, which could create one without the `socket`
//! system call: Landlock governs a pathname socket only as a file, so `connect(2)` to
//! docker.sock, the D-Bus session bus or an ssh agent is not a write it refuses, and seccomp
//! cannot read the path a `connect` names. `socketpair(2)` (a pipe between a process and its
//! children) still works; abstract sockets are already scoped by Landlock.
//!
//! [`probe`] tells whether this kernel can enforce the read-only policy; the tools probe the
//! write policy by running the launcher once.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, RulesetStatus, path_beneath_rules,
};

/// The oldest interface that can enforce both halves (files and TCP).
const NEEDED: ABI = ABI::V4;
/// Devices a sandboxed command may still write to.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
/// Temporary directories a `workspace-write` command may write to (with `$TMPDIR`).
const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];
/// Names below the workspace root that other programs run or load later, outside the sandbox:
/// read-only under `workspace-write`, and never created there.
pub const PROTECTED: &[&str] = &[
    ".git",
    ".tandem",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".envrc",
    // Other editors' and agents' workspace settings that start programs on open.
    ".zed",
    ".helix",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".claude",
    ".cursor",
];

/// What a sandboxed command may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Read anything, write nothing, no network.
    ReadOnly,
    /// Write under `root` and the temporary directories (not `.git` or `.tandem`); network only
    /// when `network`.
    WorkspaceWrite {
        /// The workspace root.
        root: PathBuf,
        /// Whether the network stays reachable.
        network: bool,
    },
}

/// Parses the launcher's own options (everything before `--`); the program and its arguments
/// follow. `None` with a usage message on bad usage.
pub fn parse(args: &mut impl Iterator<Item = OsString>) -> Result<Policy, String> {
    let mut read_only = false;
    let mut root = None;
    let mut network = false;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--read-only") => read_only = true,
            Some("--workspace-write") => root = args.next().map(PathBuf::from),
            Some("--network") => network = true,
            Some("--") => break,
            _ => return Err(usage()),
        }
    }
    match (read_only, root) {
        (true, None) if !network => Ok(Policy::ReadOnly),
        (false, Some(root)) => Ok(Policy::WorkspaceWrite { root, network }),
        _ => Err(usage()),
    }
}

fn usage() -> String {
    "usage: tandem-sandbox (--read-only | --workspace-write ROOT [--network]) -- PROGRAM [ARGS…]".to_owned()
}

fn restrict(policy: &Policy, level: CompatLevel) -> Result<RestrictionStatus, RulesetError> {
    let abi = ABI::V7;
    let network = matches!(policy, Policy::WorkspaceWrite { network: true, .. });
    let ruleset = Ruleset::default().set_compatibility(level).handle_access(AccessFs::from_all(NEEDED))?;
    let ruleset = if network { ruleset } else { ruleset.handle_access(AccessNet::from_all(NEEDED))? };
    let ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, AccessFs::from_file(abi)))?;
    match policy {
        Policy::ReadOnly => ruleset.restrict_self(),
        Policy::WorkspaceWrite { root, .. } => {
            let creating = AccessFs::MakeChar
                | AccessFs::MakeDir
                | AccessFs::MakeReg
                | AccessFs::MakeSock
                | AccessFs::MakeFifo
                | AccessFs::MakeBlock
                | AccessFs::MakeSym
                | AccessFs::Refer;
            // The directories already in the root, not what they link to, nor the protected.
            let children = std::fs::read_dir(root)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|entry| !PROTECTED.iter().any(|name| entry.file_name() == *name))
                .map(|entry| entry.path());
            ruleset
                .add_rules(path_beneath_rules(writable_temp_dirs(root), AccessFs::from_all(abi)))?
                .add_rules(path_beneath_rules([root], AccessFs::from_all(abi) & !creating))?
                .add_rules(path_beneath_rules(children, AccessFs::from_all(abi)))?
                .restrict_self()
        }
    }
}

/// The temporary directories a `workspace-write` command may write to: those that exist and
/// do not hold `root` (their rights would reach it).
fn writable_temp_dirs(root: &Path) -> Vec<PathBuf> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let temp = std::env::var_os("TMPDIR").map(PathBuf::from);
    TEMP_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(temp)
        .filter_map(|dir| dir.canonicalize().ok())
        .filter(|dir| !root.starts_with(dir))
        .collect()
}

/// Refuses, for this process and what it runs, to create a unix-domain socket (and io_uring,
/// which could create one without `socket(2)`). Needs `no_new_privs`, which Landlock sets.
fn forbid_unix_sockets() -> Result<(), String> {
    use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
    let arch = std::env::consts::ARCH.try_into().map_err(|err| format!("seccomp: {err}"))?;
    let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64)
        .and_then(|domain| SeccompRule::new(vec![domain]))
        .map_err(|err| format!("seccomp: {err}"))?;
    let mut rules = std::collections::BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![unix.clone()]);
    rules.insert(libc::SYS_io_uring_setup, vec![]);
    // The x32 numbers of the same calls, which an x86-64 filter sees under the same
    // architecture.
    #[cfg(target_arch = "x86_64")]
    {
        const X32: i64 = 0x4000_0000;
        rules.insert(libc::SYS_socket | X32, vec![unix]);
        rules.insert(libc::SYS_io_uring_setup | X32, vec![]);
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
        .map_err(|err| format!("seccomp: {err}"))?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(|err| format!("seccomp: {err}"))?;
    seccompiler::apply_filter(&program).map_err(|err| format!("seccomp: {err}"))
}

/// Whether this kernel can enforce the read-only sandbox (files and TCP); the reason if not.
pub fn probe() -> Result<(), String> {
    // A ruleset created with hard requirements, never applied: it only asks the kernel.
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(NEEDED))
        .and_then(|r| r.handle_access(AccessNet::from_all(NEEDED)))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|err| format!("Landlock with file and network rules (ABI 4, Linux 6.7+) is not available: {err}"))
}

/// Enters a user and mount namespace (and an empty network namespace unless `network`), then
/// makes the protected names below `root` read-only. Must run while the process has one thread.
fn isolate(root: &Path, network: bool) -> Result<(), String> {
    use rustix::thread::UnshareFlags;
    let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
    let mut flags = UnshareFlags::NEWUSER | UnshareFlags::NEWNS;
    if !network {
        flags |= UnshareFlags::NEWNET;
    }
    // SAFETY: the flags do not include FILES, the only one whose effect other threads could
    // observe, and the launcher has a single thread at this point.
    #[expect(unsafe_code, reason = "unshare(2) is unsafe in rustix only because of CLONE_FILES")]
    unsafe { rustix::thread::unshare_unsafe(flags) }
        .map_err(|err| format!("cannot enter a user namespace (unprivileged user namespaces are off?): {err}"))?;
    // The same ids inside as outside: files the command creates keep the person's ownership.
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text)
            .map_err(|err| format!("cannot write /proc/self/{file}: {err}"))
    };
    write("setgroups", "deny".to_owned())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))?;
    for path in PROTECTED.iter().map(|name| root.join(name)).chain(hooks_path(root)) {
        if path.symlink_metadata().is_err() {
            continue;
        }
        read_only_mount(&path).map_err(|err| format!("cannot make {} read-only: {err}", path.display()))?;
    }
    Ok(())
}

/// The hooks directory the repository's own configuration names (`core.hooksPath`, as husky
/// sets it: `.husky/_`), when it is inside `root`: its hooks run on the person's next commit.
fn hooks_path(root: &Path) -> Option<PathBuf> {
    let config = std::fs::read_to_string(root.join(".git/config")).ok()?;
    let mut in_core = false;
    let mut found = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_core = line.trim_start_matches('[').trim_start().to_ascii_lowercase().starts_with("core");
        } else if in_core
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("hookspath")
        {
            found = Some(value.trim().trim_matches('"').to_owned());
        }
    }
    let path = root.join(found?);
    let path = path.canonicalize().ok()?;
    (path.starts_with(root) && path != root).then_some(path)
}

/// Bind-mounts `path` on itself, then remounts it read-only, keeping the flags the kernel locks
/// in a user namespace (nosuid, nodev, noexec, atime), or the remount is refused.
fn read_only_mount(path: &Path) -> rustix::io::Result<()> {
    use rustix::fs::StatVfsMountFlags as Vfs;
    use rustix::mount::MountFlags as M;
    let kept = rustix::fs::statvfs(path)?.f_flag;
    let mut flags = M::BIND | M::RDONLY;
    for (vfs, mount) in [
        (Vfs::NOSUID, M::NOSUID),
        (Vfs::NODEV, M::NODEV),
        (Vfs::NOEXEC, M::NOEXEC),
        (Vfs::NOATIME, M::NOATIME),
        (Vfs::NODIRATIME, M::NODIRATIME),
        (Vfs::RELATIME, M::RELATIME),
    ] {
        if kept.contains(vfs) {
            flags |= mount;
        }
    }
    rustix::mount::mount_bind(path, path)?;
    rustix::mount::mount_remount(path, flags, "")
}

/// Restricts this process and runs `argv`; returns only on failure.
pub fn run(policy: &Policy, argv: &[OsString]) -> ExitCode {
    let Some((program, args)) = argv.split_first() else {
        eprintln!("tandem sandbox: no program to run");
        return ExitCode::from(2);
    };
    if let Policy::WorkspaceWrite { root, network } = policy
        && let Err(err) = isolate(root, *network)
    {
        eprintln!("tandem sandbox: {err}; not running the command");
        return ExitCode::from(126);
    }
    match restrict(policy, CompatLevel::HardRequirement) {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
        Ok(_) => {
            eprintln!("tandem sandbox: the kernel did not enforce the sandbox; not running the command");
            return ExitCode::from(126);
        }
        Err(err) => {
            eprintln!("tandem sandbox: cannot set up the sandbox: {err}; not running the command");
            return ExitCode::from(126);
        }
    }
    if let Err(err) = forbid_unix_sockets() {
        eprintln!("tandem sandbox: cannot set up the sandbox: {err}; not running the command");
        return ExitCode::from(126);
    }
    let mut command = std::process::Command::new(program);
    command.args(args);
    // Where the usual temporary directory holds the workspace, it is not writable: point
    // `TMPDIR` to one that is.
    if let Policy::WorkspaceWrite { root, .. } = policy {
        let temp = std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        let writable = writable_temp_dirs(root);
        if !temp.canonicalize().is_ok_and(|temp| writable.contains(&temp))
            && let Some(other) = writable.first()
        {
            command.env("TMPDIR", other);
        }
    }
    let err = command.exec();
    eprintln!("tandem sandbox: cannot run {}: {err}", program.to_string_lossy());
    ExitCode::from(127)
}
