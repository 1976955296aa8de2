//! `[permissions]`, `[[hooks.<Event>]]` and `[verify]`: the person's policy as the files write
//! it, with each entry's file, and what an untrusted project may not add.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use tandem_policy::{Action, Hook, HookEvent, Origin, Source, Verify};

/// `[permissions]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PermissionsSection {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

/// One `[[hooks.<Event>]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HookEntry {
    matcher: Option<String>,
    command: String,
    timeout_ms: Option<u64>,
}

/// `[verify]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VerifySection {
    #[serde(default)]
    commands: Vec<String>,
    max_rounds: Option<u32>,
    timeout_ms: Option<u64>,
}

/// A rule as written, with its file (parsed once the tools are known).
#[derive(Clone, Debug)]
pub struct RuleEntry {
    /// Allow, ask or deny.
    pub action: Action,
    /// As written.
    pub text: String,
    /// Where.
    pub source: Source,
}

/// The policy of every file read so far.
#[derive(Clone, Debug, Default)]
pub struct PolicyConfig {
    /// Rules, in file order (the person's first).
    pub rules: Vec<RuleEntry>,
    /// Hooks.
    pub hooks: Vec<Hook>,
    /// `[verify]` (a later file's commands replace an earlier file's).
    pub verify: Option<Verify>,
}

/// How long a verify command may run unless `[verify] timeout_ms` says otherwise.
const VERIFY_TIMEOUT_MS: u64 = 600_000;

impl PolicyConfig {
    /// Adds one file's sections.
    pub(super) fn merge(
        &mut self,
        permissions: PermissionsSection,
        hooks: BTreeMap<String, Vec<HookEntry>>,
        verify: VerifySection,
        origin: Origin,
        path: &Path,
    ) -> anyhow::Result<()> {
        let source = Source { origin, file: path.display().to_string() };
        for (action, list) in
            [(Action::Deny, permissions.deny), (Action::Ask, permissions.ask), (Action::Allow, permissions.allow)]
        {
            self.rules.extend(list.into_iter().map(|text| RuleEntry { action, text, source: source.clone() }));
        }
        for (event_name, entries) in hooks {
            let event = HookEvent::parse(&event_name).ok_or_else(|| unknown_event(&event_name, path))?;
            for entry in entries {
                let hook = Hook::new(event, entry.matcher.as_deref(), &entry.command, entry.timeout_ms, source.clone())
                    .map_err(|why| anyhow::anyhow!("{why} in {}", path.display()))?;
                self.hooks.push(hook);
            }
        }
        if !verify.commands.is_empty() || verify.max_rounds.is_some() {
            let previous = self.verify.take().unwrap_or_default();
            self.verify = Some(Verify {
                commands: if verify.commands.is_empty() { previous.commands } else { verify.commands },
                max_rounds: verify.max_rounds.unwrap_or(if previous.max_rounds == 0 { 3 } else { previous.max_rounds }),
                timeout: std::time::Duration::from_millis(verify.timeout_ms.unwrap_or(VERIFY_TIMEOUT_MS)),
            });
        }
        Ok(())
    }
}

impl PolicyConfig {
    /// Adds the rules of the editor's settings (`initializationOptions.permissions`): the
    /// person's, so they count like their own file's.
    pub(super) fn merge_editor(&mut self, rules: tandem_protocol::PermissionRules) {
        let source = Source { origin: Origin::Editor, file: "the editor's settings".to_owned() };
        for (action, list) in [(Action::Deny, rules.deny), (Action::Ask, rules.ask), (Action::Allow, rules.allow)] {
            self.rules.extend(list.into_iter().map(|text| RuleEntry { action, text, source: source.clone() }));
        }
    }
}

/// The error for a `[[hooks.<name>]]` whose event does not exist.
pub(super) fn unknown_event(name: &str, path: &Path) -> anyhow::Error {
    let events: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
    let near = events.iter().find(|e| e.eq_ignore_ascii_case(name));
    let hint = match near {
        Some(event) => format!("did you mean `[[hooks.{event}]]`?"),
        None => format!("the events are {}", events.join(", ")),
    };
    anyhow::anyhow!("unknown hook event `{name}` in {}: {hint}", path.display())
}

/// What an untrusted project's file may not add: rules that allow or ask (deny only
/// restricts, so it stays), hooks and verify commands (they run programs). Named for the
/// notice and the trust prompt.
pub(super) fn restrict(
    permissions: &mut PermissionsSection,
    hooks: &mut BTreeMap<String, Vec<HookEntry>>,
    verify: &mut VerifySection,
) -> Vec<String> {
    let mut ignored = Vec::new();
    for (name, list) in [("allow", &mut permissions.allow), ("ask", &mut permissions.ask)] {
        if !list.is_empty() {
            ignored.push(format!("[permissions] {name}"));
            list.clear();
        }
    }
    for (event, entries) in std::mem::take(hooks) {
        if !entries.is_empty() {
            ignored.push(format!("[[hooks.{event}]]"));
        }
    }
    if !verify.commands.is_empty() {
        ignored.push("[verify] commands".to_owned());
        verify.commands.clear();
    }
    ignored
}

impl PolicyConfig {
    /// The policy in force for the project at `root`: rules parsed with the registry's tool
    /// names (`shell(...)` is `bash(...)`), "always" answers written to `user_file`.
    pub fn build(
        &self,
        root: &Path,
        registry: &tandem_tools::Registry,
        user_file: Option<std::path::PathBuf>,
    ) -> anyhow::Result<std::sync::Arc<tandem_policy::Policy>> {
        let canonical = |name: &str| registry.find(name).map(|tool| tool.spec().name.to_owned());
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let rules = self
            .rules
            .iter()
            .map(|entry| {
                tandem_policy::Rule::parse(entry.action, &entry.text, entry.source.clone(), &canonical, home.as_deref())
                    .map_err(|err| {
                        anyhow::anyhow!("{err} (in [permissions] {} of {})", entry.action.as_str(), entry.source.file)
                    })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(tandem_policy::Policy::new(
            tandem_policy::Rules::new(root.to_path_buf(), rules),
            tandem_policy::Hooks::new(self.hooks.clone()),
            self.verify.clone().filter(|v| !v.commands.is_empty()),
            user_file,
        ))
    }
}
