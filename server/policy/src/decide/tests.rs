use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::rule::{Origin, Source};

fn source(origin: Origin) -> Source {
    Source { origin, file: format!("{origin:?}.toml").to_lowercase() }
}

/// The person's rules, as a configuration file lists them: `allow`, `ask` and `deny`.
fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
    let list: Vec<(Action, &str)> = [(Action::Allow, allow), (Action::Ask, ask), (Action::Deny, deny)]
        .into_iter()
        .flat_map(|(action, texts)| texts.iter().map(move |text| (action, *text)))
        .collect();
    let parsed = list
        .iter()
        .map(|(action, text)| Rule::parse(*action, text, source(Origin::Person), &|_| None, None))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_default();
    assert_eq!(parsed.len(), list.len(), "a test rule does not parse");
    Rules::new(PathBuf::from("/p"), parsed)
}

/// A part of literal words: read-only when `ro`, plain (no redirection, no variable).
fn part(line: &str, ro: bool) -> CommandPart {
    CommandPart {
        words: line.split_whitespace().map(|w| Some(w.to_owned())).collect(),
        unwrapped: None,
        plain: true,
        read_only: ro,
        files: Vec::new(),
    }
}

fn short(v: &Verdict) -> &'static str {
    match v {
        Verdict::Unruled => "unruled",
        Verdict::Allow { .. } => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

#[test]
fn commands_are_decided_part_by_part() {
    let r = rules(&["bash(npm test:*)", "bash(cargo check)"], &["bash(git push:*)"], &["bash(curl:*)", "read(.env)"]);
    let cwd = Path::new("/p/sub");
    let check = |parts: Vec<CommandPart>| short(&r.decide_command("bash", Some(&parts), cwd));
    assert_eq!(check(vec![part("npm test", false)]), "allow");
    assert_eq!(check(vec![part("npm test -- -x", false)]), "allow");
    assert_eq!(check(vec![part("npm testx", false)]), "unruled");
    assert_eq!(check(vec![part("npm run build", false)]), "unruled");
    assert_eq!(check(vec![part("cargo check", false)]), "allow");
    assert_eq!(check(vec![part("cargo check --all", false)]), "unruled");
    // Compound: each part must be allowed or read-only.
    assert_eq!(check(vec![part("npm test", false), part("ls", true)]), "allow");
    assert_eq!(check(vec![part("npm test", false), part("rm x", false)]), "unruled");
    assert_eq!(check(vec![part("npm test", false), part("git push origin", false)]), "ask");
    assert_eq!(check(vec![part("npm test", false), part("curl x", false)]), "deny");
    // Only read-only parts: no rule was needed.
    assert_eq!(check(vec![part("ls", true)]), "unruled");
    // Deny sees through a path to the program, and through wrappers.
    assert_eq!(check(vec![part("/usr/bin/curl x", false)]), "deny");
    // Programs that run their arguments: the command is looked for anywhere in them.
    assert_eq!(check(vec![part("eval curl x", false)]), "deny");
    let quoted = CommandPart { words: vec![Some("eval".into()), Some("curl x".into())], ..CommandPart::default() };
    assert_eq!(check(vec![quoted]), "deny");
    assert_eq!(check(vec![part("find . -exec curl {} ;", false)]), "deny");
    assert_eq!(check(vec![part("grep -r curl .", true)]), "unruled");
    let mut wrapped = part("timeout 5 curl x", false);
    wrapped.unwrapped = Some(vec![Some("curl".into()), Some("x".into())]);
    assert_eq!(check(vec![wrapped]), "deny");
    // A file a read deny covers, named as an argument or a redirection.
    assert_eq!(check(vec![part("cat ../.env", true)]), "deny");
    assert_eq!(check(vec![part("grep --file=.env x", true)]), "deny");
    let mut redirected = part("wc -l", true);
    redirected.files = vec!["../.env".into()];
    assert_eq!(check(vec![redirected]), "deny");
    // A program only known when it runs cannot be checked against deny rules.
    let dynamic = CommandPart { words: vec![None, Some("x".into())], ..CommandPart::default() };
    assert_eq!(check(vec![dynamic]), "ask");
    // Nor can a line that does not parse.
    assert_eq!(short(&r.decide_command("bash", None, cwd)), "ask");
    // A part that writes through a redirection is not plain: an allow does not cover it.
    let mut writes = part("npm test", false);
    writes.plain = false;
    assert_eq!(check(vec![writes]), "unruled");
}

#[test]
fn files_urls_and_tools_are_decided() {
    let r = rules(
        &["edit(src/**)", "webfetch(domain:docs.rs)", "mcp__github"],
        &["write(docs/**)"],
        &["Edit(src/generated/**)", "read(**/*.pem)", "WebFetch(domain:evil.example)", "mcp__github__delete_repo"],
    );
    let paths = |list: &[&str]| list.iter().map(|p| Path::new("/p").join(p)).collect::<Vec<_>>();
    let files = |tool: &str, list: &[&str]| short(&r.decide_paths(tool, &paths(list)));
    assert_eq!(files("edit", &["src/a.rs"]), "allow");
    assert_eq!(files("multiedit", &["src/a.rs", "src/b/c.rs"]), "allow");
    assert_eq!(files("edit", &["src/a.rs", "README.md"]), "unruled");
    assert_eq!(files("apply_patch", &["src/a.rs", "src/generated/x.rs"]), "deny");
    assert_eq!(files("write", &["docs/x.md"]), "ask");
    assert_eq!(files("edit", &["docs/x.md"]), "unruled");
    assert_eq!(files("read", &["keys/a.pem"]), "deny");
    assert_eq!(files("grep", &["a.pem"]), "deny");
    assert_eq!(files("read", &["src/../keys/a.pem"]), "deny");
    assert_eq!(files("edit", &["/elsewhere/src/a.rs"]), "unruled");
    let url = |u: &str| short(&r.decide_url("webfetch", u));
    assert_eq!(url("https://docs.rs/x"), "allow");
    assert_eq!(url("https://api.docs.rs:443/x"), "allow");
    assert_eq!(url("https://docs.rs.evil.com/"), "unruled");
    assert_eq!(url("https://user@EVIL.example./x"), "deny");
    assert_eq!(url("https://sub.evil.example/x"), "deny");
    assert_eq!(short(&r.decide_tool("mcp__github__list_issues")), "allow");
    assert_eq!(short(&r.decide_tool("mcp__github__delete_repo")), "deny");
    assert_eq!(short(&r.decide_tool("mcp__githubx__list")), "unruled");
}

#[test]
fn always_rules_are_prefixes_never_the_whole_line() {
    let lines = [
        "npm test -- -x",
        "cargo build --release",
        "make",
        "python3 x.py --flag",
        "python3 -c print(1)",
        "git -C x push",
        "./run.sh a",
        "bash -c x",
        "timeout 5 sleep 1",
        "git",
    ];
    let shown: Vec<String> = lines
        .iter()
        .map(|line| format!("{line} → {}", always_rule(&part(line, false)).unwrap_or_else(|| "(none)".into())))
        .collect();
    expect_test::expect![[r#"
        npm test -- -x → bash(npm test:*)
        cargo build --release → bash(cargo build:*)
        make → bash(make)
        python3 x.py --flag → bash(python3 x.py:*)
        python3 -c print(1) → (none)
        git -C x push → (none)
        ./run.sh a → bash(./run.sh:*)
        bash -c x → (none)
        timeout 5 sleep 1 → (none)
        git → bash(git)"#]]
    .assert_eq(&shown.join("\n"));
}

const PROGRAMS: &[&str] = &["npm", "cargo", "git", "curl", "ls", "rm", "make"];
const ARGS: &[&str] = &["test", "build", "push", "-x", "--all", "x", "check"];

fn arb_part() -> impl Strategy<Value = CommandPart> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(prop::sample::select(ARGS), 0..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(program, args, plain, read_only)| {
            let mut words = vec![Some(program.to_owned())];
            words.extend(args.into_iter().map(|a| Some(a.to_owned())));
            CommandPart { words, unwrapped: None, plain, read_only, files: Vec::new() }
        })
}

fn arb_rule() -> impl Strategy<Value = (Action, String, bool)> {
    (
        prop::sample::select(&[Action::Allow, Action::Ask, Action::Deny][..]),
        prop::sample::select(PROGRAMS),
        prop::option::of(prop::sample::select(ARGS)),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(action, program, sub, prefix, project)| {
            let body = match sub {
                Some(sub) => format!("{program} {sub}"),
                None => program.to_owned(),
            };
            (action, if prefix { format!("bash({body}:*)") } else { format!("bash({body})") }, project)
        })
}

fn build(list: &[(Action, String, bool)], trusted: bool) -> Rules {
    let parsed = list
        .iter()
        .filter(|(action, _, project)| !*project || trusted || *action == Action::Deny)
        .filter_map(|(action, text, project)| {
            let origin = if *project { Origin::Project } else { Origin::Person };
            Rule::parse(*action, text, source(origin), &|_| None, None).ok()
        })
        .collect();
    Rules::new(PathBuf::from("/p"), parsed)
}

proptest! {
    /// A compound command is allowed only if every part, on its own, is allowed or read-only.
    #[test]
    fn a_compound_command_is_allowed_only_if_every_part_is(
        list in prop::collection::vec(arb_rule(), 0..6),
        parts in prop::collection::vec(arb_part(), 1..4),
    ) {
        let r = build(&list, true);
        let cwd = Path::new("/p");
        let whole = r.decide_command("bash", Some(&parts), cwd);
        if let Verdict::Allow { .. } = whole {
            for p in &parts {
                let alone = r.decide_command("bash", Some(std::slice::from_ref(p)), cwd);
                prop_assert!(p.read_only || matches!(alone, Verdict::Allow { .. }), "{p:?} alone: {alone:?}");
            }
        }
        // And a part that some rule denies makes the whole line denied.
        if parts.iter().any(|p| matches!(r.decide_command("bash", Some(std::slice::from_ref(p)), cwd), Verdict::Deny { .. })) {
            prop_assert_eq!(short(&whole), "deny");
        }
    }

    /// Deny beats ask and allow; ask beats allow: adding an allow rule never turns a deny or an
    /// ask into anything else, and adding a deny rule that matches always denies.
    #[test]
    fn deny_beats_ask_beats_allow(
        list in prop::collection::vec(arb_rule(), 0..6),
        parts in prop::collection::vec(arb_part(), 1..3),
    ) {
        let cwd = Path::new("/p");
        let before = build(&list, true).decide_command("bash", Some(&parts), cwd);
        let first = parts[0].words.iter().flatten().cloned().collect::<Vec<_>>().join(" ");
        let mut more = list.clone();
        more.push((Action::Allow, format!("bash({first}:*)"), false));
        let after = build(&more, true).decide_command("bash", Some(&parts), cwd);
        match before {
            Verdict::Deny { .. } => prop_assert_eq!(short(&after), "deny"),
            Verdict::Ask { .. } => prop_assert_eq!(short(&after), "ask"),
            _ => {}
        }
        let mut denied = list.clone();
        denied.push((Action::Deny, format!("bash({first}:*)"), false));
        prop_assert_eq!(short(&build(&denied, true).decide_command("bash", Some(&parts), cwd)), "deny");
    }

    /// A project's allow never counts before trust; its deny always does.
    #[test]
    fn a_project_allow_never_counts_before_trust(
        list in prop::collection::vec(arb_rule(), 0..6),
        parts in prop::collection::vec(arb_part(), 1..3),
    ) {
        let cwd = Path::new("/p");
        let person_only: Vec<_> = list.iter().filter(|(_, _, project)| !project).cloned().collect();
        let untrusted = build(&list, false).decide_command("bash", Some(&parts), cwd);
        let without_project = build(&person_only, false).decide_command("bash", Some(&parts), cwd);
        if matches!(untrusted, Verdict::Allow { .. }) {
            prop_assert_eq!(short(&without_project), "allow");
        }
        let project_denies = list.iter().any(|(a, _, p)| *p && *a == Action::Deny);
        if !project_denies {
            prop_assert_eq!(short(&untrusted), short(&without_project));
        }
    }
}
