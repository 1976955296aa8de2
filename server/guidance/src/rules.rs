//! Rules: `.tandem/rules/*.md` and `~/.config/tandem/rules/*.md`. Front matter `paths:` (a
//! list of globs relative to the workspace root) scopes a rule to the files it matches; a rule
//! without `paths` applies always.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::front;
use crate::places::{Origin, Places, Problem, folders_of, markdown_files, read};

/// The keys a rule's front matter may have.
const KEYS: [&str; 2] = ["paths", "description"];

/// One rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The file name without `.md`.
    pub name: String,
    /// The file as shown.
    pub file: String,
    /// Whose it is.
    pub origin: Origin,
    /// `description` of the front matter.
    pub description: Option<String>,
    /// The globs of `paths` (empty: always in force).
    pub paths: Vec<String>,
    globs: GlobSet,
    /// The text after the front matter, trimmed.
    pub body: String,
    /// The file was longer than Tandem reads.
    pub cut: bool,
}

impl Rule {
    /// In force for the whole session (no `paths`).
    pub fn always(&self) -> bool {
        self.paths.is_empty()
    }

    /// Whether the file at `rel` (relative to the workspace root) is one the rule is scoped to.
    pub fn matches(&self, rel: &Path) -> bool {
        !self.paths.is_empty() && self.globs.is_match(rel)
    }
}

/// A glob as written, compiled: `*` stays within a path segment, and a glob without `/`
/// matches the file name in any directory (as in `.gitignore`).
fn compile(patterns: &[String]) -> Result<GlobSet, (String, String)> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim().trim_start_matches("./");
        let full =
            if trimmed.contains('/') { trimmed.trim_start_matches('/').to_owned() } else { format!("**/{trimmed}") };
        let glob = GlobBuilder::new(&full)
            .literal_separator(true)
            .build()
            .map_err(|err| (pattern.clone(), err.kind().to_string()))?;
        set.add(glob);
    }
    set.build().map_err(|err| (String::new(), err.to_string()))
}

/// Splits `text` at the commas outside braces, each part trimmed, empty ones dropped.
fn split_globs(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect()
}

/// Parses a rule file's text.
pub(crate) fn parse(
    name: &str,
    file: &str,
    origin: Origin,
    text: &str,
    cut: bool,
) -> Result<(Rule, Vec<Problem>), Problem> {
    let front = front::parse(text).map_err(|err| Problem::error(file, Some(err.line), err.message))?;
    let line_of = |key: &str| front.entries.iter().find(|(k, _, _)| k == key).map(|(_, _, line)| *line);
    let mut warnings: Vec<Problem> = front
        .unknown(&KEYS)
        .map(|(key, line)| {
            Problem::warning(
                file,
                Some(line),
                format!("unknown key `{key}` ignored (a rule takes `paths` and `description`)"),
            )
        })
        .collect();
    // `paths: "a, b"` (one string, as Cursor's `globs` are written) is two globs; a comma inside
    // braces (`*.{ts,tsx}`) is the glob's own.
    let paths: Vec<String> =
        front.list("paths").unwrap_or_default().iter().flat_map(|glob| split_globs(glob)).collect();
    if front.get("paths").is_some() && paths.is_empty() {
        warnings.push(Problem::warning(file, line_of("paths"), "`paths` is empty: the rule applies always"));
    }
    let globs = compile(&paths).map_err(|(pattern, why)| {
        Problem::error(file, line_of("paths"), format!("`{pattern}` is not a valid glob: {why}"))
    })?;
    let description =
        front.text("description").map_err(|err| Problem::error(file, Some(err.line), err.message))?.map(str::to_owned);
    if cut {
        warnings.push(Problem::warning(
            file,
            None,
            format!("longer than {} KiB: only the start is used", crate::places::MAX_FILE / 1024),
        ));
    }
    let rule = Rule {
        name: name.to_owned(),
        file: file.to_owned(),
        origin,
        description,
        paths,
        globs,
        body: front.body.trim().to_owned(),
        cut,
    };
    Ok((rule, warnings))
}

/// Every rule: the repository's, then the person's, each folder sorted by file name.
pub fn rules(places: &Places) -> (Vec<Rule>, Vec<Problem>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (origin, dir) in folders_of(places, "rules", false) {
        for path in markdown_files(&dir) {
            let file = places.shown(&path);
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let text = match read(places, origin, &path) {
                Ok(Some(read)) => read,
                Ok(None) => continue,
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            match parse(&name, &file, origin, &text.text, text.cut) {
                Ok((rule, warnings)) => {
                    problems.extend(warnings);
                    if rule.body.is_empty() {
                        problems.push(Problem::warning(&file, None, "the rule is empty"));
                        continue;
                    }
                    found.push(rule);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    (found, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Result<Rule, Problem> {
        parse("r", ".tandem/rules/r.md", Origin::Project, text, false).map(|(rule, _)| rule)
    }

    #[test]
    fn scoped_rules_match_their_globs_only() -> Result<(), Problem> {
        let python = rule("---\npaths: [\"*.py\", \"src/**/*.rs\", ./docs/*.md]\n---\nUse type hints.\n")?;
        assert!(!python.always());
        for yes in ["a.py", "pkg/deep/b.py", "src/lib.rs", "src/a/b/c.rs", "docs/x.md"] {
            assert!(python.matches(Path::new(yes)), "{yes}");
        }
        for no in ["a.pyc", "lib/src/lib.rs", "docs/sub/x.md", "README.md"] {
            assert!(!python.matches(Path::new(no)), "{no}");
        }
        assert_eq!(python.body, "Use type hints.");
        let always = rule("Be brief.\n")?;
        assert!(always.always());
        assert!(!always.matches(Path::new("a.py")));
        Ok(())
    }

    #[test]
    fn one_string_of_globs_is_split_at_commas_outside_braces() -> Result<(), Problem> {
        let split = rule("---\npaths: \"src/**/*.{ts,tsx}, docs/*.md\"\n---\nx")?;
        assert_eq!(split.paths, ["src/**/*.{ts,tsx}", "docs/*.md"]);
        assert!(split.matches(Path::new("src/a/b.tsx")) && split.matches(Path::new("docs/x.md")));
        let listed = rule("---\npaths:\n  - \"lib/**\"\n  - \"*.py\"\n---\nx")?;
        assert!(listed.matches(Path::new("lib/a/b.c")) && listed.matches(Path::new("x/y.py")));
        Ok(())
    }

    #[test]
    fn malformed_rules_name_file_and_line() {
        let err = rule("---\ndescription: x\npaths: [\"src/**\"\n---\nbody").err();
        assert_eq!(
            err.map(|p| p.to_string()),
            Some(".tandem/rules/r.md:3: error: the list of `paths` is not closed with `]`".to_owned())
        );
        let err = rule("---\npaths: [\"src/[a\"]\n---\nbody").err();
        assert!(err.is_some_and(|p| p.line == Some(2) && p.message.contains("not a valid glob")));
    }

    #[test]
    fn unknown_keys_are_warned_about() -> Result<(), Problem> {
        let (_, warnings) = parse("r", "r.md", Origin::Project, "---\nglobs: \"*.py\"\n---\nx", false)?;
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("unknown key `globs`"));
        Ok(())
    }
}
