//! What comes into force during a session: a nested instruction file the first time the agent
//! reads or edits a file in its directory, and a scoped rule the first time it reads or edits a
//! file the rule's `paths` match. Each arrives once, as a text the agent adds to the
//! conversation; the tracker keeps every one, so that a compaction can put them all back word
//! for word.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::instructions::{nested_in, root_down};
use crate::places::{Places, Problem};
use crate::rules::Rule;

/// How every arrival's text starts (how compaction and loading recognise one).
const PREFIX: &str = "[In force from now on: ";

/// What arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalKind {
    /// An instruction file of a directory below or beside the working directory.
    Instructions,
    /// A scoped rule.
    Rule,
}

/// Guidance that came into force, as the model is told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Instructions or rule.
    pub kind: ArrivalKind,
    /// The file as shown.
    pub file: String,
    /// The file whose reading or editing brought it (as shown).
    pub trigger: String,
    /// What the model is told, verbatim (see [`is_arrival`]).
    pub text: String,
}

/// Whether `text` is an [`Arrival`]'s text.
pub fn is_arrival(text: &str) -> bool {
    text.starts_with(PREFIX)
}

/// The guidance in force in one session beyond the system prompt.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    /// Directories whose instruction file was looked for.
    checked: BTreeSet<PathBuf>,
    /// Rule files in force.
    rules: BTreeSet<String>,
    arrived: Vec<Arrival>,
}

impl Tracker {
    /// Everything that arrived so far, in order.
    pub fn in_force(&self) -> &[Arrival] {
        &self.arrived
    }

    /// The agent read or edited `file` (absolute): the instruction files of its directories
    /// not seen yet (below the root, outside the root-down chain of the system prompt), and the
    /// scoped rules it matches that are not in force yet, in that order.
    pub fn touch(&mut self, places: &Places, rules: &[Rule], file: &Path) -> (Vec<Arrival>, Vec<Problem>) {
        let mut arrivals = Vec::new();
        let mut problems = Vec::new();
        let Ok(rel) = file.strip_prefix(&places.root) else { return (arrivals, problems) };
        if rel.components().any(|c| c.as_os_str() == ".git") {
            return (arrivals, problems);
        }
        let trigger = rel.display().to_string();
        let chain = root_down(places);
        let mut dir = places.root.clone();
        let parents: Vec<_> = rel.parent().map(|p| p.components().collect()).unwrap_or_default();
        for part in parents {
            dir.push(part);
            if chain.contains(&dir) || !self.checked.insert(dir.clone()) {
                continue;
            }
            match nested_in(places, &dir) {
                Ok(Some(found)) => {
                    let under = places.shown(&dir);
                    let cut = if found.cut { "\n[… the file is longer; read it for the rest]" } else { "" };
                    let text = format!(
                        "{PREFIX}the instructions for files under {under}/, from {} (read because of {trigger}). Follow them there, over the more general ones.]\n<instructions file=\"{}\">\n{}{cut}\n</instructions>",
                        found.file, found.file, found.text
                    );
                    arrivals.push(Arrival {
                        kind: ArrivalKind::Instructions,
                        file: found.file,
                        trigger: trigger.clone(),
                        text,
                    });
                }
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        for rule in rules {
            if !rule.matches(rel) || !self.rules.insert(rule.file.clone()) {
                continue;
            }
            let text = format!(
                "{PREFIX}rule {} (paths: {}), which applies to {trigger}. Follow it for every file it matches.]\n<rule file=\"{}\">\n{}\n</rule>",
                rule.file,
                rule.paths.join(", "),
                rule.file,
                rule.body
            );
            arrivals.push(Arrival { kind: ArrivalKind::Rule, file: rule.file.clone(), trigger: trigger.clone(), text });
        }
        self.arrived.extend(arrivals.iter().cloned());
        (arrivals, problems)
    }

    /// Takes an arrival's text back (a loaded session's history): it stays in force and does
    /// not arrive again.
    pub fn remember(&mut self, root: &Path, text: &str) {
        if !is_arrival(text) {
            return;
        }
        let Some(tag_line) = text.lines().nth(1) else { return };
        let kind = if tag_line.starts_with("<rule ") { ArrivalKind::Rule } else { ArrivalKind::Instructions };
        let Some(file) = tag_line.split_once("file=\"").and_then(|(_, rest)| rest.split_once('"')).map(|(f, _)| f)
        else {
            return;
        };
        let between = |start: &str, end: &str| {
            text.split_once(start).and_then(|(_, rest)| rest.split_once(end)).map(|(t, _)| t.to_owned())
        };
        let trigger = match kind {
            ArrivalKind::Rule => between("which applies to ", ". Follow it"),
            ArrivalKind::Instructions => between("(read because of ", ")."),
        }
        .unwrap_or_default();
        match kind {
            ArrivalKind::Rule => {
                self.rules.insert(file.to_owned());
            }
            ArrivalKind::Instructions => {
                if let Some(dir) = root.join(file).parent() {
                    self.checked.insert(dir.to_path_buf());
                }
            }
        }
        if !self.arrived.iter().any(|a| a.text == text) {
            self.arrived.push(Arrival { kind, file: file.to_owned(), trigger, text: text.to_owned() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_arrives_once_on_first_touch() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().to_path_buf();
        tandem_tool_api::testing::write_files(
            &root,
            &[
                ("AGENTS.md", "root"),
                ("app/AGENTS.md", "app (in the prompt already)"),
                ("pkg/AGENTS.md", "pkg rules"),
                ("pkg/api/CLAUDE.md", "api rules"),
                (".tandem/rules/py.md", "---\npaths: [\"*.py\"]\n---\nType hints."),
            ],
        )?;
        let places = Places { root: root.clone(), cwd: root.join("app"), user_dir: None, trusted: false };
        let (rules, _) = crate::rules::rules(&places);
        let mut tracker = Tracker::default();
        let (first, problems) = tracker.touch(&places, &rules, &root.join("pkg/api/x.py"));
        assert!(problems.is_empty());
        let files: Vec<_> = first.iter().map(|a| (a.kind, a.file.as_str())).collect();
        assert_eq!(
            files,
            [
                (ArrivalKind::Instructions, "pkg/AGENTS.md"),
                (ArrivalKind::Instructions, "pkg/api/CLAUDE.md"),
                (ArrivalKind::Rule, ".tandem/rules/py.md")
            ]
        );
        assert!(first[0].text.contains("<instructions file=\"pkg/AGENTS.md\">\npkg rules\n</instructions>"));
        assert!(first[2].text.contains("which applies to pkg/api/x.py"));
        assert!(tracker.touch(&places, &rules, &root.join("pkg/api/y.py")).0.is_empty());
        assert!(tracker.touch(&places, &rules, &root.join("app/main.rs")).0.is_empty());
        // A loaded session remembers what was in force.
        let mut loaded = Tracker::default();
        for arrival in &first {
            loaded.remember(&root, &arrival.text);
        }
        assert_eq!(loaded.in_force(), tracker.in_force());
        assert!(loaded.touch(&places, &rules, &root.join("pkg/api/z.py")).0.is_empty());
        Ok(())
    }
}
