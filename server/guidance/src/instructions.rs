//! Instruction files: the person's own `AGENTS.md`, then one per directory from the workspace
//! root down to the working directory (`AGENTS.md`, else `CLAUDE.md`), and the same files in
//! other directories when the agent first works there ([`nested_in`]).

use std::path::{Path, PathBuf};

use crate::places::{Origin, Places, Problem, read};

/// One instruction file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The file as shown (relative to the root for the repository's).
    pub file: String,
    /// The directory it applies to (`None`: the person's own, everywhere).
    pub dir: Option<PathBuf>,
    /// Its text, trimmed.
    pub text: String,
    /// The file was longer than Tandem reads.
    pub cut: bool,
    /// Whose it is.
    pub origin: Origin,
}

/// The names an instruction file may have, in preference order: `CLAUDE.md` counts only in a
/// directory without `AGENTS.md`.
const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The instruction file of `dir` in the workspace (`AGENTS.md`, else `CLAUDE.md`), if any. An
/// empty file counts as none.
pub fn nested_in(places: &Places, dir: &Path) -> Result<Option<Instruction>, Problem> {
    for name in NAMES {
        let path = dir.join(name);
        match read(places, Origin::Project, &path)? {
            None => continue,
            Some(read) => {
                let text = read.text.trim().to_owned();
                if text.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Instruction {
                    file: places.shown(&path),
                    dir: Some(dir.to_path_buf()),
                    text,
                    cut: read.cut,
                    origin: Origin::Project,
                }));
            }
        }
    }
    Ok(None)
}

/// The directories from the root down to the working directory, root first (only the root when
/// the working directory is not inside it).
pub(crate) fn root_down(places: &Places) -> Vec<PathBuf> {
    let mut dirs = vec![places.root.clone()];
    if let Ok(rel) = places.cwd.strip_prefix(&places.root) {
        let mut dir = places.root.clone();
        for part in rel.components() {
            dir.push(part);
            dirs.push(dir.clone());
        }
    }
    dirs
}

/// The instruction files in force for the whole session, in the order the model reads them:
/// the person's own, then the root's, then each directory's down to the working directory.
pub fn chain(places: &Places) -> (Vec<Instruction>, Vec<Problem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    if let Some(user) = &places.user_dir {
        let path = user.join("AGENTS.md");
        match read(places, Origin::User, &path) {
            Ok(Some(read)) if !read.text.trim().is_empty() => files.push(Instruction {
                file: places.shown(&path),
                dir: None,
                text: read.text.trim().to_owned(),
                cut: read.cut,
                origin: Origin::User,
            }),
            Ok(_) => {}
            Err(problem) => problems.push(problem),
        }
    }
    for dir in root_down(places) {
        match nested_in(places, &dir) {
            Ok(Some(file)) => files.push(file),
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    (files, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(root: &Path, cwd: &Path, user: Option<&Path>) -> Places {
        Places { root: root.into(), cwd: cwd.into(), user_dir: user.map(Path::to_path_buf), trusted: false }
    }

    #[test]
    fn root_down_with_claude_only_where_agents_is_missing() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (root, user) = (dir.path().join("ws"), dir.path().join("config"));
        tandem_tool_api::testing::write_files(&user, &[("AGENTS.md", "mine")])?;
        tandem_tool_api::testing::write_files(
            &root,
            &[
                ("AGENTS.md", "root"),
                ("CLAUDE.md", "root claude (not read)"),
                ("pkg/CLAUDE.md", "pkg claude"),
                ("pkg/app/AGENTS.md", "app"),
                ("pkg/app/src/AGENTS.md", "  "),
            ],
        )?;
        let (files, problems) = chain(&places(&root, &root.join("pkg/app/src"), Some(&user)));
        assert!(problems.is_empty(), "{problems:?}");
        let seen: Vec<_> = files.iter().map(|f| (f.file.as_str(), f.text.as_str())).collect();
        let user_file = user.join("AGENTS.md").display().to_string();
        assert_eq!(
            seen,
            [
                (user_file.as_str(), "mine"),
                ("AGENTS.md", "root"),
                ("pkg/CLAUDE.md", "pkg claude"),
                ("pkg/app/AGENTS.md", "app")
            ]
        );
        Ok(())
    }

    #[test]
    fn a_file_pointing_outside_is_a_problem_not_text() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("sub"))?;
        std::fs::write(dir.path().join("secret"), "TOKEN")?;
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("sub/AGENTS.md"))?;
        let (files, problems) = chain(&places(&root, &root.join("sub"), None));
        assert!(files.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].to_string().contains("outside the workspace"), "{}", problems[0]);
        Ok(())
    }
}
