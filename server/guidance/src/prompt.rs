//! The guidance in the system prompt, under a budget, and the `tandem context` report.

use std::fmt::Write as _;

use crate::commands::commands;
use crate::instructions::{Instruction, chain};
use crate::places::{Origin, Places, Problem, Severity};
use crate::rules::{Rule, rules};
use crate::skills::{Skill, skills};
use crate::tracker::Tracker;

/// Bytes per token in the estimates shown (the agent's own first guess, on the large side).
pub const BYTES_PER_TOKEN: usize = 3;
/// Less room than this is not worth a cut piece: the file is left out whole.
const MIN_PIECE: usize = 200;
/// Characters of a skill's description in the system prompt.
const MAX_DESCRIPTION: usize = 300;

/// Estimated tokens of `bytes` bytes.
pub fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// A file the budget did not hold whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The file as shown.
    pub file: String,
    /// Bytes kept (0: left out).
    pub kept: usize,
    /// Bytes it has.
    pub total: usize,
}

/// The guidance part of the system prompt.
#[derive(Clone, Debug, Default)]
pub struct SystemBlock {
    /// The text to append to the system prompt.
    pub text: String,
    /// Each instruction file and always-on rule with the bytes it takes.
    pub files: Vec<(String, usize)>,
    /// What the budget cut.
    pub cut: Vec<Cut>,
    /// Problems found on the way (errors and warnings).
    pub problems: Vec<Problem>,
    /// The scoped rules (they arrive on first touch).
    pub scoped: Vec<Rule>,
    /// How many skills it lists (none: the `skill` tool has nothing to load).
    pub skills: usize,
}

impl SystemBlock {
    /// The note to the person about what the budget cut, when it cut anything.
    pub fn cut_notice(&self, budget: usize) -> Option<String> {
        if self.cut.is_empty() {
            return None;
        }
        let what: Vec<String> = self
            .cut
            .iter()
            .map(|c| match c.kept {
                0 => format!("{} left out ({} bytes)", c.file, c.total),
                kept => format!("{} cut after {kept} of {} bytes", c.file, c.total),
            })
            .collect();
        Some(format!(
            "Instruction files over the budget of {budget} bytes (≈{} tokens, from the model's context window): {}. The model was told; `tandem context` lists what is in force.",
            tokens(budget),
            what.join("; ")
        ))
    }
}

/// A piece of text competing for the budget.
struct Piece {
    file: String,
    text: String,
}

/// Cuts `pieces` (in priority order) to `budget` bytes in all: whole while they fit, the first
/// that does not fit cut at a line (when at least [`MIN_PIECE`] bytes are left), the rest left
/// out. Returns the kept text of each piece (same order) and the cuts.
fn fit(pieces: &[Piece], budget: usize) -> (Vec<String>, Vec<Cut>) {
    let mut left = budget;
    let mut kept = Vec::with_capacity(pieces.len());
    let mut cuts = Vec::new();
    for piece in pieces {
        let len = piece.text.len();
        if len <= left {
            left -= len;
            kept.push(piece.text.clone());
            continue;
        }
        if left < MIN_PIECE {
            cuts.push(Cut { file: piece.file.clone(), kept: 0, total: len });
            kept.push(String::new());
            continue;
        }
        let mut end = left;
        while !piece.text.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(line) = piece.text[..end].rfind('\n').filter(|&at| at >= end / 2) {
            end = line;
        }
        cuts.push(Cut { file: piece.file.clone(), kept: end, total: len });
        kept.push(piece.text[..end].to_owned());
        left = 0;
    }
    (kept, cuts)
}

fn attribute(file: &str) -> String {
    file.replace('"', "&quot;")
}

/// The guidance of the system prompt for `places`, within `budget` bytes of instruction files
/// and always-on rules: those first (the person's, then the repository's), then the person's
/// `AGENTS.md`, then the repository's from the working directory up to the root (the nearer a
/// file, the more specific). They are shown in reading order: the person's file, the root's
/// down to the working directory's, then the rules; then the skills (names and descriptions)
/// and the scoped rules (names and globs).
pub fn system_block(places: &Places, budget: usize) -> SystemBlock {
    let (files, mut problems) = chain(places);
    let (all_rules, rule_problems) = rules(places);
    let (skills, skill_problems) = skills(places);
    problems.extend(rule_problems);
    problems.extend(skill_problems);
    let (always, scoped): (Vec<Rule>, Vec<Rule>) = all_rules.into_iter().partition(Rule::always);
    // Priority order: rules, the person's file, then nearest-first.
    let mut order: Vec<usize> = (0..always.len()).collect();
    let user: Vec<usize> = files.iter().enumerate().filter(|(_, f)| f.origin == Origin::User).map(|(i, _)| i).collect();
    let project: Vec<usize> =
        files.iter().enumerate().filter(|(_, f)| f.origin == Origin::Project).map(|(i, _)| i).rev().collect();
    let base = always.len();
    order.extend(user.iter().chain(&project).map(|i| base + i));
    let piece = |index: usize| -> Piece {
        match index.checked_sub(base) {
            None => Piece { file: always[index].file.clone(), text: always[index].body.clone() },
            Some(i) => Piece { file: files[i].file.clone(), text: files[i].text.clone() },
        }
    };
    let pieces: Vec<Piece> = order.iter().map(|&i| piece(i)).collect();
    let (kept_in_order, cut) = fit(&pieces, budget);
    let mut kept = vec![String::new(); pieces.len()];
    for (position, &index) in order.iter().enumerate() {
        kept[index] = kept_in_order[position].clone();
    }
    let mut block = SystemBlock { cut, problems, ..SystemBlock::default() };
    let text = &mut block.text;
    let truncated = |file: &str| block.cut.iter().any(|c| c.file == file && c.kept > 0);
    let shown_files: Vec<&Instruction> =
        files.iter().enumerate().filter(|(i, _)| !kept[base + i].is_empty()).map(|(_, f)| f).collect();
    if !shown_files.is_empty() {
        text.push_str(
            "\nInstructions (follow them; where they differ, the more specific file — further down — wins):\n",
        );
        for (i, file) in files.iter().enumerate() {
            let body = &kept[base + i];
            if body.is_empty() {
                continue;
            }
            let more =
                if truncated(&file.file) || file.cut { "\n[… cut here: read the file for the rest]" } else { "" };
            let _ = writeln!(text, "<instructions file=\"{}\">\n{body}{more}\n</instructions>", attribute(&file.file));
            block.files.push((file.file.clone(), body.len()));
        }
    }
    if always.iter().enumerate().any(|(i, _)| !kept[i].is_empty()) {
        text.push_str("\nRules (always in force; follow them word for word):\n");
        for (i, rule) in always.iter().enumerate() {
            if kept[i].is_empty() {
                continue;
            }
            let more = if truncated(&rule.file) { "\n[… cut here: read the file for the rest]" } else { "" };
            let _ = writeln!(text, "<rule file=\"{}\">\n{}{more}\n</rule>", attribute(&rule.file), kept[i]);
            block.files.push((rule.file.clone(), kept[i].len()));
        }
    }
    if !block.cut.is_empty() {
        let what: Vec<String> = block
            .cut
            .iter()
            .map(|c| match c.kept {
                0 => format!("{} was left out", c.file),
                kept => format!("{} was cut after {kept} of {} bytes", c.file, c.total),
            })
            .collect();
        let _ = writeln!(
            text,
            "\n[Instruction budget reached ({budget} bytes): {}. Read those files if the task needs them.]",
            what.join("; ")
        );
    }
    for problem in block.problems.iter().filter(|p| p.severity == Severity::Error) {
        let _ = writeln!(text, "\n(Not used: {problem}.)");
    }
    if !scoped.is_empty() {
        text.push_str(
            "\nScoped rules (each is added to the conversation when you first read or edit a file it matches):\n",
        );
        for rule in &scoped {
            let _ = writeln!(text, "- {} ({})", rule.file, rule.paths.join(", "));
        }
    }
    if !skills.is_empty() {
        text.push_str(&skill_listing(&skills));
    }
    block.scoped = scoped;
    block.skills = skills.len();
    block
}

/// The skills' names and descriptions as the system prompt lists them.
fn skill_listing(skills: &[Skill]) -> String {
    let mut text = String::from(
        "\nSkills (procedures for particular tasks: when a task matches a description, call the `skill` tool with its name first and follow what it returns):\n",
    );
    for skill in skills {
        let description: String = skill.description.chars().take(MAX_DESCRIPTION).collect();
        let mark = if skill.untrusted { " [from the repository, which the person has not trusted]" } else { "" };
        let _ = writeln!(text, "- {}: {description}{mark}", skill.name);
    }
    text
}

/// What is in force for `places`, as `tandem context` and `/context` show it, and how many
/// errors were found.
pub fn report(places: &Places, budget: usize, tracker: Option<&Tracker>) -> (String, usize) {
    let block = system_block(places, budget);
    let (commands, command_problems) = commands(places);
    let (skills, _) = skills(places);
    let (files, _) = chain(places);
    let (all_rules, _) = rules(places);
    let mut out = String::new();
    let used: usize = block.files.iter().map(|(_, bytes)| bytes).sum();
    let _ =
        writeln!(out, "Instructions in the system prompt ({} of {} tokens of budget):", tokens(used), tokens(budget));
    let cut_of = |file: &str| block.cut.iter().find(|c| c.file == file);
    if files.is_empty() {
        out.push_str("  (none: no AGENTS.md or CLAUDE.md from the root down, none of your own)\n");
    }
    for file in &files {
        let note = match cut_of(&file.file) {
            Some(Cut { kept: 0, total, .. }) => format!("  LEFT OUT by the budget ({total} bytes)"),
            Some(Cut { kept, total, .. }) => format!("  CUT by the budget ({kept} of {total} bytes)"),
            None => String::new(),
        };
        let _ = writeln!(out, "  {:<44} {:>6} tokens{note}", file.file, tokens(file.text.len()));
    }
    out.push_str("Rules:\n");
    if all_rules.is_empty() {
        out.push_str("  (none)\n");
    }
    for rule in &all_rules {
        let state = if rule.always() {
            "always".to_owned()
        } else {
            let came = tracker.and_then(|t| t.in_force().iter().find(|a| a.file == rule.file));
            match came {
                Some(arrival) => format!("{}; in force since {} was touched", rule.paths.join(", "), arrival.trigger),
                None => format!("{}; when a matching file is read or edited", rule.paths.join(", ")),
            }
        };
        let _ = writeln!(out, "  {:<44} {:>6} tokens  {state}", rule.file, tokens(rule.body.len()));
    }
    if let Some(tracker) = tracker {
        let nested: Vec<_> =
            tracker.in_force().iter().filter(|a| a.kind == crate::tracker::ArrivalKind::Instructions).collect();
        if !nested.is_empty() {
            out.push_str("Nested instructions in force:\n");
            for arrival in nested {
                let _ = writeln!(
                    out,
                    "  {:<44} {:>6} tokens  since {} was touched",
                    arrival.file,
                    tokens(arrival.text.len()),
                    arrival.trigger
                );
            }
        }
    }
    out.push_str("Commands:\n");
    if commands.is_empty() {
        out.push_str("  (none)\n");
    }
    for command in &commands {
        let usage = match &command.argument_hint {
            Some(hint) => format!("/{} {hint}", command.name),
            None => format!("/{}", command.name),
        };
        let _ = writeln!(
            out,
            "  {:<28} {:<40} {} ({} tokens when used)",
            usage,
            command.description,
            command.file,
            tokens(command.body.len())
        );
    }
    out.push_str("Skills:\n");
    if skills.is_empty() {
        out.push_str("  (none)\n");
    }
    for skill in &skills {
        let mark = if skill.untrusted { "  [untrusted repository]" } else { "" };
        let listed = skill.name.len() + skill.description.len().min(MAX_DESCRIPTION) + 4;
        let _ = writeln!(
            out,
            "  {:<20} {} ({} tokens listed, {} when loaded){mark}\n  {:<20} {}",
            skill.name,
            skill.file,
            tokens(listed),
            tokens(skill.body.len()),
            "",
            skill.description
        );
    }
    let mut problems = block.problems;
    problems.extend(command_problems);
    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
    if !problems.is_empty() {
        out.push_str("Problems:\n");
        for problem in &problems {
            let _ = writeln!(out, "  {problem}");
        }
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The kept text never exceeds the budget; every piece is kept whole, cut (a prefix)
        /// or left out, and exactly those not kept whole are named in the cuts.
        #[test]
        fn the_budget_holds_and_every_cut_is_named(
            texts in proptest::collection::vec("[a-z\n é]{0,400}", 0..6),
            budget in 0usize..1500,
        ) {
            let pieces: Vec<Piece> = texts.iter().enumerate().map(|(i, t)| Piece { file: format!("f{i}"), text: t.clone() }).collect();
            let (kept, cuts) = fit(&pieces, budget);
            prop_assert!(kept.iter().map(String::len).sum::<usize>() <= budget);
            for (piece, kept) in pieces.iter().zip(&kept) {
                prop_assert!(piece.text.starts_with(kept.as_str()));
                let named = cuts.iter().find(|c| c.file == piece.file);
                prop_assert_eq!(named.is_some(), kept.len() < piece.text.len());
                if let Some(cut) = named {
                    prop_assert_eq!(cut.kept, kept.len());
                    prop_assert_eq!(cut.total, piece.text.len());
                }
            }
        }
    }

    #[test]
    fn the_budget_cuts_the_most_general_first_and_says_so() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("pkg"))?;
        std::fs::write(root.join("AGENTS.md"), "root line\n".repeat(100))?;
        std::fs::write(root.join("pkg/AGENTS.md"), "pkg rule")?;
        let places = Places { root: root.clone(), cwd: root.join("pkg"), user_dir: None, trusted: true };
        let block = system_block(&places, 500);
        assert!(block.text.contains("<instructions file=\"pkg/AGENTS.md\">\npkg rule\n</instructions>"));
        assert_eq!(block.cut, [Cut { file: "AGENTS.md".into(), kept: 489, total: 999 }]);
        assert!(
            block.text.contains("[Instruction budget reached (500 bytes): AGENTS.md was cut after 489 of 999 bytes")
        );
        assert!(block.cut_notice(500).is_some_and(|n| n.contains("AGENTS.md cut after 489 of 999 bytes")));
        let root_at = block.text.find("file=\"AGENTS.md\"");
        let pkg_at = block.text.find("file=\"pkg/AGENTS.md\"");
        assert!(root_at < pkg_at, "root first: {}", block.text);
        Ok(())
    }
}
