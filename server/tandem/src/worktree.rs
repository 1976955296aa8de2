//! A git worktree per agent: `tandem run --worktree NAME` works in a worktree of the project on
//! the branch `tandem/NAME`, created (or reused) in Tandem's state folder for the project, so
//! outside the working tree, and several runs with different names work side by side without
//! touching each other or the main checkout. `tandem worktrees` lists them with their sessions;
//! `tandem worktrees remove NAME` removes one (its branch stays unless it is merged).
//!
//! Git runs with the repository's hooks and file system monitor switched off, and without
//! inherited `GIT_*` variables: a repository's configuration names programs, and creating a
//! worktree would otherwise run its `post-checkout` hook.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context as _, bail};
use tandem_agent::Store;
use tandem_tools::state::state_dir;
use tandem_tools::trust::{Trust, grant_in, trust_in, user_config_dir};

use crate::workbench::Root;

/// The branch prefix of agents' worktrees.
const BRANCH_PREFIX: &str = "tandem/";

/// A worktree name: letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.
pub fn check_name(name: &str) -> anyhow::Result<()> {
    let good = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with(['.', '-'])
        && !name.contains("..")
        && !name.ends_with(".lock");
    if good {
        Ok(())
    } else {
        bail!(
            "`{name}` is not a worktree name: use letters, digits, `.`, `_` and `-` (at most 64, not starting with `.` or `-`)"
        )
    }
}

/// `git` for the repository at `dir`, hermetic as the module says.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"GIT_") {
            command.env_remove(name);
        }
    }
    command
        .args(["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat"])
        .arg("-C")
        .arg(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    command
}

/// Runs `command`; its stdout, or an error with git's own words.
fn output(mut command: Command, what: &str) -> anyhow::Result<String> {
    let output = command.output().with_context(|| format!("cannot run git to {what}"))?;
    if !output.status.success() {
        bail!("git could not {what}: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The top of the git repository holding `root` (the main checkout, also when `root` is a
/// linked worktree).
fn main_checkout(root: &Path) -> anyhow::Result<PathBuf> {
    let mut command = git(root);
    command.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    let common = output(command, "find the repository").map_err(|err| {
        anyhow::anyhow!("{} is not in a git repository, so it has no worktrees ({err})", root.display())
    })?;
    let common = PathBuf::from(common.trim());
    // `<main>/.git` for an ordinary repository; a bare one has no main checkout.
    match common.file_name() {
        Some(name) if name == ".git" => Ok(common.parent().map(Path::to_path_buf).unwrap_or(common)),
        _ => bail!("the repository at {} is bare: worktrees need a main checkout", common.display()),
    }
}

/// Where the worktree `name` of the project at `main` lives.
fn dir_of(main: &Path, name: &str) -> anyhow::Result<PathBuf> {
    Ok(state_dir(main, "worktrees")?.join(name))
}

/// One worktree of an agent.
pub struct Worktree {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// Its branch.
    pub branch: String,
    /// Whether this run created it (else it was reused).
    pub created: bool,
}

/// Creates the worktree `name` of the project around `root` on the branch `tandem/NAME` (from
/// the main checkout's `HEAD`), or reuses it. A worktree of a trusted project is trusted too.
pub fn prepare(root: &Root, name: &str) -> anyhow::Result<Worktree> {
    check_name(name)?;
    let (root, _) = root.resolve()?;
    let main = main_checkout(&root)?;
    let path = dir_of(&main, name)?;
    let branch = format!("{BRANCH_PREFIX}{name}");
    if path.join(".git").exists() {
        return Ok(Worktree { name: name.to_owned(), path: path.canonicalize()?, branch, created: false });
    }
    // A folder left behind by a removal git did not finish: git's record of it goes first.
    let mut prune = git(&main);
    prune.args(["worktree", "prune"]);
    output(prune, "prune stale worktrees")?;
    let mut has_branch = git(&main);
    has_branch.args(["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")]);
    let exists = has_branch.stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    let mut add = git(&main);
    add.args(["worktree", "add", "--quiet"]);
    if exists {
        add.arg(&path).arg(&branch);
    } else {
        add.args(["-b", &branch]).arg(&path).arg("HEAD");
    }
    output(add, &format!("create the worktree {name}"))?;
    let path = path.canonicalize()?;
    // Trusted because the person listed the project (not for one process, by the variable): the
    // worktree is listed too.
    if let Some(config) = user_config_dir()
        && trust_in(&config, &main) == Trust::Trusted
    {
        grant_in(&config, &path).with_context(|| format!("cannot trust the worktree {}", path.display()))?;
    }
    Ok(Worktree { name: name.to_owned(), path, branch, created: true })
}

/// The agents' worktrees of the project at `main`: (name, path, branch) per `git worktree list`.
fn list_of(main: &Path) -> anyhow::Result<Vec<(String, PathBuf, String)>> {
    let mut list = git(main);
    list.args(["worktree", "list", "--porcelain"]);
    let text = output(list, "list the worktrees")?;
    let base = dir_of(main, "x")?.parent().map(Path::to_path_buf).unwrap_or_default();
    let base = base.canonicalize().unwrap_or(base);
    let mut found = Vec::new();
    for block in text.split("\n\n") {
        let mut path = None;
        let mut branch = String::new();
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch refs/heads/") {
                branch = b.to_owned();
            }
        }
        let Some(path) = path else { continue };
        if path.parent() == Some(base.as_path())
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
        {
            found.push((name.to_owned(), path.clone(), branch));
        }
    }
    Ok(found)
}

/// `tandem worktrees`: each agent worktree with its branch, folder and sessions.
pub fn list(root: Option<PathBuf>, json: bool) -> ExitCode {
    let run = || -> anyhow::Result<()> {
        let (root, _) = Root::from_cli(root)?.resolve()?;
        let main = main_checkout(&root)?;
        let mut rows = Vec::new();
        for (name, path, branch) in list_of(&main)? {
            let sessions = Store::in_workspace(&path).list();
            let last = sessions.first().map(|s| s.session_id.clone());
            rows.push(serde_json::json!({
                "name": name, "path": path, "branch": branch, "sessions": sessions.len(), "last_session": last,
            }));
        }
        crate::stdout::listing(&rows, json, "no agent worktrees (`tandem run --worktree NAME` makes one)", |row| {
            format!(
                "{}  {}  {}  {} session(s){}",
                row["name"].as_str().unwrap_or_default(),
                row["branch"].as_str().unwrap_or_default(),
                row["path"].as_str().unwrap_or_default(),
                row["sessions"],
                row["last_session"].as_str().map(|s| format!(", last {s}")).unwrap_or_default()
            )
        })?;
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem worktrees: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tandem worktrees remove NAME`: removes the worktree (refused while it has uncommitted
/// changes, unless `force`); its branch is deleted only when merged, else kept and named.
pub fn remove(root: Option<PathBuf>, name: &str, force: bool) -> ExitCode {
    let run = || -> anyhow::Result<()> {
        check_name(name)?;
        let (root, _) = Root::from_cli(root)?.resolve()?;
        let main = main_checkout(&root)?;
        let Some((_, path, branch)) = list_of(&main)?.into_iter().find(|(n, _, _)| n == name) else {
            bail!("there is no agent worktree named {name} (`tandem worktrees` lists them)");
        };
        let mut remove = git(&main);
        remove.args(["worktree", "remove"]);
        if force {
            remove.arg("--force");
        }
        remove.arg(&path);
        output(remove, &format!("remove the worktree {name} (uncommitted changes? --force discards them)"))?;
        let mut delete = git(&main);
        delete.args(["branch", "-d", &branch]);
        match output(delete, "delete its branch") {
            Ok(_) => crate::stdout::line(&format!("removed worktree {name} and its merged branch {branch}")),
            Err(_) => crate::stdout::line(&format!(
                "removed worktree {name}; its branch {branch} has commits that are not merged and stays (`git branch -D {branch}` deletes it)"
            )),
        }
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem worktrees remove: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// One file the worktree's change touches, as git's raw diff names it.
pub struct Changed {
    /// Its path (relative to the repository's top); for a rename, the new one.
    pub path: String,
    /// For a rename: the path it had.
    pub from: Option<String>,
    /// Its blob at the base (`None`: it did not exist), and its blob in the worktree (`None`:
    /// deleted).
    blobs: (Option<String>, Option<String>),
    /// Why it cannot be brought over as text (a symbolic link, a submodule), if so.
    pub unsupported: Option<String>,
}

/// `git` for the worktree at `dir` over the index file `index` (a copy: the worktree's own index
/// is never touched).
fn git_over(dir: &Path, index: &Path) -> Command {
    let mut command = git(dir);
    command.env("GIT_INDEX_FILE", index);
    command
}

/// A copy of the worktree's index, removed when dropped.
struct IndexCopy(PathBuf);

impl IndexCopy {
    fn of(worktree: &Path) -> anyhow::Result<Self> {
        let mut where_ = git(worktree);
        where_.args(["rev-parse", "--path-format=absolute", "--git-path", "index"]);
        let index = PathBuf::from(output(where_, "find the worktree's index")?.trim());
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let copy = index.with_file_name(format!("index.tandem-{}-{n}", std::process::id()));
        if index.exists() {
            std::fs::copy(&index, &copy).with_context(|| format!("cannot copy {}", index.display()))?;
        }
        Ok(Self(copy))
    }
}

impl Drop for IndexCopy {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.0)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove {}: {err}", self.0.display());
        }
    }
}

/// The worktree `name` of the repository around `root`: its folder, its base (the merge base
/// of the main checkout's `HEAD` and the worktree's) and the files its change touches against
/// that base: committed or not, new files included (those git ignores aside), renames found.
pub fn changes(root: &Path, name: &str) -> anyhow::Result<(PathBuf, String, Vec<Changed>)> {
    check_name(name)?;
    let main = main_checkout(root)?;
    let Some((_, path, _)) = list_of(&main)?.into_iter().find(|(n, _, _)| n == name) else {
        bail!("there is no agent worktree named {name} (`tandem worktrees` lists them)");
    };
    let mut head = git(&path);
    head.args(["rev-parse", "HEAD"]);
    let head = output(head, "read the worktree's HEAD")?;
    let mut base = git(&main);
    base.args(["merge-base", "HEAD", head.trim()]);
    let base = output(base, "find the worktree's base")?.trim().to_owned();
    let index = IndexCopy::of(&path)?;
    let mut add = git_over(&path, &index.0);
    add.args(["add", "--all", "--", "."]);
    output(add, "stage the worktree's files in a copy of its index")?;
    let mut diff = git_over(&path, &index.0);
    diff.args(["diff", "--cached", "--raw", "-z", "--find-renames", "--no-abbrev", &base, "--"]);
    let raw = output(diff, "compare the worktree with its base")?;
    Ok((path, base, parse_raw(&raw)))
}

/// Git's `diff --raw -z` output: `:<old mode> <new mode> <old blob> <new blob> <status>` NUL
/// `<path>` NUL, with a second path for a rename or copy.
fn parse_raw(raw: &str) -> Vec<Changed> {
    let mut fields = raw.split('\0');
    let mut found = Vec::new();
    while let Some(head) = fields.next() {
        let Some(head) = head.strip_prefix(':') else { continue };
        let parts: Vec<&str> = head.split(' ').collect();
        let [old_mode, new_mode, old_blob, new_blob, status] = parts.as_slice() else { continue };
        let Some(first) = fields.next() else { break };
        let two = matches!(status.as_bytes().first(), Some(b'R' | b'C'));
        let second = if two { fields.next() } else { None };
        let blob = |mode: &str, blob: &str| (mode != "000000").then(|| blob.to_owned());
        let text_mode = |mode: &str| matches!(mode, "000000" | "100644" | "100755");
        let unsupported = (!text_mode(old_mode) || !text_mode(new_mode)).then(|| {
            "a symbolic link or a submodule: bring it over with git (`git checkout <branch> -- <path>`)".to_owned()
        });
        let (path, from, old) = match (status.as_bytes().first(), second) {
            (Some(b'R'), Some(to)) => (to.to_owned(), Some(first.to_owned()), blob(old_mode, old_blob)),
            // A copy: a new file with the copied content.
            (Some(b'C'), Some(to)) => (to.to_owned(), None, None),
            _ => (first.to_owned(), None, blob(old_mode, old_blob)),
        };
        found.push(Changed { path, from, blobs: (old, blob(new_mode, new_blob)), unsupported });
    }
    found
}

/// A blob's content as the checkout would hold it (the repository's filters applied).
pub fn blob(worktree: &Path, changed: &Changed, old: bool) -> anyhow::Result<Option<Vec<u8>>> {
    let (blob, path) = if old {
        (&changed.blobs.0, changed.from.as_deref().unwrap_or(&changed.path))
    } else {
        (&changed.blobs.1, changed.path.as_str())
    };
    let Some(blob) = blob else { return Ok(None) };
    let mut cat = git(worktree);
    cat.args(["cat-file", "--filters", &format!("--path={path}"), blob]);
    let out = cat.output().context("cannot run git to read a file's content")?;
    if !out.status.success() {
        bail!("git could not read {path}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(Some(out.stdout))
}

/// The main checkout of the repository around `root`.
pub fn main_of(root: &Path) -> anyhow::Result<PathBuf> {
    main_checkout(root)
}

/// The agent worktrees of the repository around `root`, with their sessions and how many files
/// their change touches.
pub fn infos(root: &Path) -> anyhow::Result<Vec<tandem_protocol::WorktreeInfo>> {
    let main = main_checkout(root)?;
    let mut infos = Vec::new();
    for (name, path, branch) in list_of(&main)? {
        let sessions = Store::in_workspace(&path).list();
        let changes = match changes(root, &name) {
            Ok((_, _, changed)) => changed.len(),
            Err(err) => {
                tracing::warn!("worktree {name}: {err:#}");
                0
            }
        };
        infos.push(tandem_protocol::WorktreeInfo {
            name,
            path: path.display().to_string(),
            branch,
            sessions: u32::try_from(sessions.len()).unwrap_or(u32::MAX),
            last_session: sessions.first().map(|s| s.session_id.clone()),
            changes: u32::try_from(changes).unwrap_or(u32::MAX),
        });
    }
    Ok(infos)
}

#[cfg(test)]
mod tests {
    use super::{check_name, parse_raw};

    #[test]
    fn raw_diffs_name_renames_and_deletions() {
        let z = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let raw = format!(
            ":100644 100644 {a} {b} M\0x.txt\0:000000 100644 {z} {b} A\0new.txt\0:100644 000000 {a} {z} D\0gone.txt\0\
             :100644 100644 {a} {b} R090\0old.txt\0moved.txt\0:120000 120000 {a} {b} M\0link\0"
        );
        let found = parse_raw(&raw);
        let shape: Vec<(&str, Option<&str>, bool, bool, bool)> = found
            .iter()
            .map(|c| {
                (c.path.as_str(), c.from.as_deref(), c.blobs.0.is_some(), c.blobs.1.is_some(), c.unsupported.is_some())
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("x.txt", None, true, true, false),
                ("new.txt", None, false, true, false),
                ("gone.txt", None, true, false, false),
                ("moved.txt", Some("old.txt"), true, true, false),
                ("link", None, true, true, true),
            ]
        );
    }

    #[test]
    fn names_are_plain_and_cannot_climb() {
        for good in ["a", "fix-1", "feat_2.x", "A9"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", "-x", ".hidden", "a/b", "a..b", "x.lock", "a b", "é", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
