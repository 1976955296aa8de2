//! Skills in the Agent Skills format: a folder holding `SKILL.md` (front matter `name` and
//! `description`, then the instructions) and whatever files it refers to. Looked for in
//! `.tandem/skills/`, `.claude/skills/` and `~/.config/tandem/skills/`; the first of a name
//! wins. Only names and descriptions go into the system prompt; the `skill` tool returns the
//! body and lists the other files.

use std::path::{Path, PathBuf};

use crate::front;
use crate::places::{Origin, Places, Problem, folders, folders_of, text_or_problem};

const KEYS: [&str; 2] = ["name", "description"];
/// Keys of the Agent Skills format that Tandem reads past without a warning.
const FORMAT_KEYS: [&str; 4] = ["license", "allowed-tools", "metadata", "compatibility"];
/// Files of a skill listed at most.
const MAX_LISTED: usize = 200;

/// One skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// `name` of the front matter.
    pub name: String,
    /// `description`: when to use it.
    pub description: String,
    /// Its `SKILL.md` as shown.
    pub file: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Whose it is.
    pub origin: Origin,
    /// From a repository the person has not trusted: what it says is the repository's word.
    pub untrusted: bool,
    /// The instructions after the front matter.
    pub body: String,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// Parses a `SKILL.md` found in `dir`.
pub(crate) fn parse(
    dir: &Path,
    file: &str,
    origin: Origin,
    untrusted: bool,
    text: &str,
) -> Result<(Skill, Vec<Problem>), Problem> {
    let front = front::parse(text).map_err(|err| Problem::error(file, Some(err.line), err.message))?;
    if front.entries.is_empty() {
        return Err(Problem::error(
            file,
            Some(1),
            "a SKILL.md starts with front matter (`---`, `name:`, `description:`, `---`)",
        ));
    }
    let line_of = |key: &str| front.entries.iter().find(|(k, _, _)| k == key).map(|(_, _, line)| *line);
    let text_of = |key: &str| front.text(key).map_err(|err| Problem::error(file, Some(err.line), err.message));
    let Some(name) = text_of("name")?.map(str::trim).filter(|n| !n.is_empty()) else {
        return Err(Problem::error(file, Some(1), "`name` is missing from the front matter"));
    };
    if !valid_name(name) {
        return Err(Problem::error(
            file,
            line_of("name"),
            format!("`{name}` is not a skill name (lower-case letters, digits and `-`, at most 64)"),
        ));
    }
    let Some(description) = text_of("description")?.map(str::trim).filter(|d| !d.is_empty()) else {
        return Err(Problem::error(
            file,
            Some(1),
            "`description` is missing from the front matter: the model chooses skills by it",
        ));
    };
    let mut warnings: Vec<Problem> = front
        .unknown(&KEYS)
        .filter(|(key, _)| !FORMAT_KEYS.contains(key))
        .map(|(key, line)| Problem::warning(file, Some(line), format!("unknown key `{key}` ignored")))
        .collect();
    if dir.file_name().is_some_and(|folder| folder != name) {
        warnings.push(Problem::warning(
            file,
            line_of("name"),
            format!("the folder's name differs from `name: {name}`; the skill is called `{name}`"),
        ));
    }
    let skill = Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        file: file.to_owned(),
        dir: dir.to_path_buf(),
        origin,
        untrusted,
        body: front.body.trim().to_owned(),
    };
    Ok((skill, warnings))
}

/// Every skill, sorted by name, and the problems found.
pub fn skills(places: &Places) -> (Vec<Skill>, Vec<Problem>) {
    let mut found: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    for (origin, base) in folders_of(places, "skills", true) {
        let untrusted = origin == Origin::Project && !places.trusted;
        for dir in folders(&base) {
            let path = dir.join("SKILL.md");
            let file = places.shown(&path);
            let Some(text) = text_or_problem(places, origin, &path, &mut problems) else { continue };
            match parse(&dir, &file, origin, untrusted, &text) {
                Ok((skill, warnings)) => {
                    problems.extend(warnings);
                    if let Some(first) = found.iter().find(|s| s.name == skill.name) {
                        problems.push(Problem::warning(
                            &file,
                            None,
                            format!("skill `{}` is also in {}, which wins", skill.name, first.file),
                        ));
                        continue;
                    }
                    found.push(skill);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    (found, problems)
}

/// The skill's other files (not `SKILL.md`), relative to its folder, sorted; at most 200,
/// hidden files and symlinks left out.
pub fn skill_files(skill: &Skill) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![skill.dir.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && path != skill.dir.join("SKILL.md")
                && let Ok(rel) = path.strip_prefix(&skill.dir)
            {
                out.push(rel.to_path_buf());
            }
            if out.len() >= MAX_LISTED {
                break;
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_are_found_marked_and_listed() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (root, user) = (dir.path().join("ws"), dir.path().join("config"));
        tandem_tool_api::testing::write_files(
            &root,
            &[
                (
                    ".tandem/skills/release/SKILL.md",
                    "---\nname: release\ndescription: Cut a release of the crate\nlicense: MIT\n---\n1. Run scripts/bump.sh\n",
                ),
                (".tandem/skills/release/scripts/bump.sh", "echo bump"),
                (".claude/skills/release/SKILL.md", "---\nname: release\ndescription: other\n---\nx"),
            ],
        )?;
        tandem_tool_api::testing::write_files(
            &user,
            &[("skills/notes/SKILL.md", "---\nname: notes\ndescription: Take notes\n---\nWrite notes.")],
        )?;
        let places = Places { root: root.clone(), cwd: root.clone(), user_dir: Some(user), trusted: false };
        let (found, problems) = skills(&places);
        let names: Vec<_> = found.iter().map(|s| (s.name.as_str(), s.untrusted)).collect();
        assert_eq!(names, [("notes", false), ("release", true)]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("also in .tandem/skills/release/SKILL.md"));
        assert_eq!(skill_files(&found[1]), [PathBuf::from("scripts/bump.sh")]);
        assert_eq!(found[1].body, "1. Run scripts/bump.sh");
        Ok(())
    }

    #[test]
    fn a_skill_without_its_keys_is_an_error_with_a_line() {
        let dir = Path::new("/w/.tandem/skills/x");
        let no_description = parse(dir, "SKILL.md", Origin::Project, false, "---\nname: x\n---\nbody").err();
        assert!(no_description.is_some_and(|p| p.message.contains("`description` is missing")));
        let bad_name =
            parse(dir, "SKILL.md", Origin::Project, false, "---\ndescription: d\nname: Bad Name\n---\n").err();
        assert!(bad_name.is_some_and(|p| p.line == Some(3)));
        let no_front = parse(dir, "SKILL.md", Origin::Project, false, "Just text").err();
        assert!(no_front.is_some());
    }
}
