//! Tool profiles and per-group switches: which tools a process offers.
//!
//! `minimal` = the read-only tools of the fs, search and lsp groups; `standard` = fs, search,
//! lsp, interact, plan and memory; `full` = every group; `custom` = nothing but what the
//! configuration enables. Then `[tools.groups]` in config and `TANDEM_FEATURE_<GROUP>=0|1`
//! (which wins) switch whole groups, `enabled` adds tools by name and `disabled` removes them.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use tandem_protocol::ToolGroup;

use crate::spec::ToolSpec;

/// A named starting set of tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// Read-only tools.
    Minimal,
    /// Read and write, no commands, web or sub-agents.
    Standard,
    /// Everything.
    #[default]
    Full,
    /// Only what the configuration enables.
    Custom,
}

impl FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "minimal" => Ok(Self::Minimal),
            "standard" => Ok(Self::Standard),
            "full" => Ok(Self::Full),
            "custom" => Ok(Self::Custom),
            other => Err(format!("unknown profile `{other}`; use minimal, standard, full or custom")),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Minimal => "minimal",
            Self::Standard => "standard",
            Self::Full => "full",
            Self::Custom => "custom",
        })
    }
}

/// Settings of the web tools (`[web]` in the configuration, `TANDEM_WEBFETCH_ALLOW_PRIVATE`).
/// Defined here because [`ToolConfig`] holds it; `tandem-tool-web` re-exports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebConfig {
    /// `webfetch` may reach loopback, private, link-local and metadata addresses. Off by
    /// default: a page (or a prompt injected into one) must not steer the agent into the local
    /// network.
    pub allow_private: bool,
}

/// Which tools are on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolConfig {
    /// The profile.
    pub profile: Profile,
    /// Group switches that override the profile.
    pub groups: BTreeMap<ToolGroup, bool>,
    /// Tools turned on by name (or alias), whatever their group.
    pub enabled: Vec<String>,
    /// Tools turned off by name (or alias); wins over everything.
    pub disabled: Vec<String>,
    /// Settings of the web tools.
    pub web: WebConfig,
}

impl ToolConfig {
    /// Applies `TANDEM_PROFILE`, `TANDEM_FEATURE_<GROUP>` and `TANDEM_WEBFETCH_ALLOW_PRIVATE` from `vars`. Returns warnings
    /// for values that could not be understood (they are ignored).
    pub fn apply_env<I, K, V>(&mut self, vars: I) -> Vec<String>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut warnings = Vec::new();
        for (key, value) in vars {
            let (key, value) = (key.as_ref(), value.as_ref());
            if key == "TANDEM_WEBFETCH_ALLOW_PRIVATE" {
                match value.trim() {
                    "1" | "true" | "on" => self.web.allow_private = true,
                    "0" | "false" | "off" => self.web.allow_private = false,
                    other => warnings.push(format!("{key}={other}: use 0 or 1")),
                }
            } else if key == "TANDEM_PROFILE" {
                match value.parse() {
                    Ok(profile) => self.profile = profile,
                    Err(err) => warnings.push(format!("TANDEM_PROFILE: {err}")),
                }
            } else if let Some(group) = key.strip_prefix("TANDEM_FEATURE_") {
                let Some(group) = ToolGroup::ALL.into_iter().find(|g| g.as_str().eq_ignore_ascii_case(group)) else {
                    warnings.push(format!("{key}: unknown group; groups are {}", group_names()));
                    continue;
                };
                match value.trim() {
                    "1" | "true" | "on" => {
                        self.groups.insert(group, true);
                    }
                    "0" | "false" | "off" => {
                        self.groups.insert(group, false);
                    }
                    other => warnings.push(format!("{key}={other}: use 0 or 1")),
                }
            }
        }
        warnings
    }

    /// Whether the tool described by `spec` is on.
    pub fn is_enabled(&self, spec: &ToolSpec) -> bool {
        let named = |list: &[String]| list.iter().any(|n| n == spec.name || spec.aliases.iter().any(|a| a == n));
        if named(&self.disabled) {
            return false;
        }
        if named(&self.enabled) {
            return true;
        }
        if let Some(on) = self.groups.get(&spec.group) {
            return *on;
        }
        match self.profile {
            Profile::Minimal => {
                matches!(spec.group, ToolGroup::Fs | ToolGroup::Search | ToolGroup::Lsp) && !spec.can_write
            }
            Profile::Standard => matches!(
                spec.group,
                ToolGroup::Fs
                    | ToolGroup::Search
                    | ToolGroup::Lsp
                    | ToolGroup::Interact
                    | ToolGroup::Plan
                    | ToolGroup::Memory
            ),
            Profile::Full => true,
            Profile::Custom => false,
        }
    }

    /// Why a tool is off, for the error a model gets when it calls one.
    pub fn why_disabled(&self, spec: &ToolSpec) -> String {
        let named = self.disabled.iter().any(|n| n == spec.name || spec.aliases.iter().any(|a| a == n));
        if named {
            format!("tool `{}` is disabled by the `disabled` list in the configuration", spec.name)
        } else if self.groups.get(&spec.group) == Some(&false) {
            format!(
                "tool `{}` is off because its group `{}` is switched off (TANDEM_FEATURE_{}=0 or [tools.groups])",
                spec.name,
                spec.group.as_str(),
                spec.group.as_str().to_ascii_uppercase()
            )
        } else {
            format!(
                "tool `{}` (group `{}`) is not part of the `{}` profile; use another tool, or ask the person to change the profile",
                spec.name,
                spec.group.as_str(),
                self.profile
            )
        }
    }
}

fn group_names() -> String {
    ToolGroup::ALL.iter().map(|g| g.as_str().to_ascii_uppercase()).collect::<Vec<_>>().join(", ")
}
