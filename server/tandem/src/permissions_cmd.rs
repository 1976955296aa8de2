//! `tandem permissions` (and `/permissions` in `tandem run` and ACP): the rules in force with
//! the file each comes from, the hooks and verify commands, and `check 'tool(call)'`, which
//! says what the rules decide for one call (`bash(npm test -- -x)`, `read(src/.env)`,
//! `webfetch(https://docs.rs/x)`).

use std::io::Write as _;
use std::process::ExitCode;

use tandem_policy::Verdict;

use crate::workbench::{Options, Root, Workbench};

/// Runs `tandem permissions [check CALL]`.
pub fn run(root: Option<std::path::PathBuf>, args: &[String]) -> ExitCode {
    let bench = match Root::from_cli(root).and_then(|root| Workbench::open(&root, Options::default())) {
        Ok(bench) => bench,
        Err(err) => {
            eprintln!("tandem permissions: {err}");
            return ExitCode::from(2);
        }
    };
    let text = match args {
        [] => describe(&bench, ""),
        [check, call] if check == "check" => describe(&bench, &format!("check {call}")),
        _ => {
            eprintln!("usage: tandem permissions [check 'tool(call)']  e.g. check 'bash(npm test -- -x)'");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{text}").is_ok() && stdout.flush().is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// What `/permissions ARGUMENT` shows: with `check CALL`, the verdict on that call; else the
/// rules, hooks and verify commands in force.
pub fn describe(bench: &Workbench, argument: &str) -> String {
    if let Some(call) = argument.trim().strip_prefix("check") {
        return check(bench, call.trim());
    }
    let rules = bench.policy.rules();
    let mut lines = Vec::new();
    if rules.all().is_empty() {
        lines.push(
            "No permission rules: the mode decides (add [permissions] allow / ask / deny to config.toml).".to_owned(),
        );
    } else {
        lines.push("Permission rules (deny beats ask, ask beats allow):".to_owned());
        let mut sorted: Vec<_> = rules.all().iter().collect();
        sorted.sort_by_key(|r| std::cmp::Reverse(r.action));
        for rule in sorted {
            lines.push(format!("  {:<5} {:<36} {}", rule.action.as_str(), rule.text, rule.source.file));
        }
    }
    let hooks = bench.policy.hooks.all();
    if !hooks.is_empty() {
        lines.push("Hooks:".to_owned());
        for hook in hooks {
            let matcher = if hook.matcher.is_empty() { "*" } else { hook.matcher.as_str() };
            lines.push(format!(
                "  {:<16} {:<14} {}  ({})",
                hook.event.as_str(),
                matcher,
                hook.command,
                hook.source.file
            ));
        }
    }
    if let Some(verify) = &bench.policy.verify {
        lines.push(format!("Verify (up to {} rounds): {}", verify.max_rounds, verify.commands.join("; ")));
    }
    let ignored: Vec<&String> = bench
        .config
        .untrusted_ignored
        .iter()
        .filter(|s| s.starts_with("[permissions]") || s.starts_with("[[hooks.") || s.starts_with("[verify]"))
        .collect();
    if !ignored.is_empty() {
        let names: Vec<&str> = ignored.iter().map(|s| s.as_str()).collect();
        lines.push(format!(
            "Ignored until you run `tandem trust` here (the project's .tandem/config.toml): {}",
            names.join(", ")
        ));
    }
    lines.join("\n")
}

/// The verdict on `call` (`tool(argument)`).
fn check(bench: &Workbench, call: &str) -> String {
    let call = call.trim().trim_matches(['\'', '"']);
    let (name, argument) = match call.split_once('(') {
        Some((name, rest)) => (name.trim(), rest.strip_suffix(')').unwrap_or(rest).trim()),
        None => (call, ""),
    };
    let lower = name.to_ascii_lowercase();
    let claude = match name {
        "Bash" => Some("bash"),
        "Edit" | "Write" | "MultiEdit" => Some("edit"),
        "Read" => Some("read"),
        "WebFetch" => Some("webfetch"),
        _ => None,
    };
    let tool = claude
        .map(str::to_owned)
        .or_else(|| bench.registry.find(&lower).map(|t| t.spec().name.to_owned()))
        .unwrap_or(lower);
    let rules = bench.policy.rules();
    let cwd = &bench.working_dir;
    let verdict = if tandem_policy::rule::SHELL_TOOLS.contains(&tool.as_str()) {
        rules.decide_command(&tool, tandem_agent::policy::command_parts(argument).as_deref(), cwd)
    } else if argument.is_empty() {
        rules.decide_tool(&tool)
    } else if tool == "webfetch" {
        rules.decide_url(&tool, argument)
    } else if tandem_policy::rule::EDIT_TOOLS.contains(&tool.as_str())
        || tandem_policy::rule::READ_TOOLS.contains(&tool.as_str())
    {
        rules.decide_paths(&tool, &[cwd.join(argument)])
    } else {
        rules.decide_tool(&tool)
    };
    let shown = format!("{tool}({argument})");
    match verdict {
        Verdict::Allow { rules } => format!("{shown}: allow (by {})", rules.join(", ")),
        Verdict::Ask { reason } => format!("{shown}: ask ({reason})"),
        Verdict::Deny { reason } => format!("{shown}: deny ({reason})"),
        Verdict::Unruled => format!(
            "{shown}: no rule decides; the session's mode does (read-only commands run, others ask in default mode)"
        ),
    }
}
