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
        if json {
            crate::stdout::line(&serde_json::Value::Array(rows).to_string());
        } else if rows.is_empty() {
            crate::stdout::line("no agent worktrees (`tandem run --worktree NAME` makes one)");
        } else {
            for row in rows {
                crate::stdout::line(&format!(
                    "{}  {}  {}  {} session(s){}",
                    row["name"].as_str().unwrap_or_default(),
                    row["branch"].as_str().unwrap_or_default(),
                    row["path"].as_str().unwrap_or_default(),
                    row["sessions"],
                    row["last_session"].as_str().map(|s| format!(", last {s}")).unwrap_or_default()
                ));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::check_name;

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
