//! Configuration: `~/.config/tandem/config.toml`, then the workspace's `.tandem/config.toml`,
//! then the editor's `initializationOptions`, then the environment (`TANDEM_*`), each layer
//! overriding the one before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;
use tandem_protocol::{InitializationOptions, ModeId, ProviderConfig, ToolGroup};
use tandem_tools::trust::{Trust, trust_of};
use tandem_tools::{Profile, ToolConfig};

mod policy;

pub use policy::PolicyConfig;

/// `[tools]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsSection {
    profile: Option<String>,
    #[serde(default)]
    groups: BTreeMap<String, bool>,
    #[serde(default)]
    enabled: Vec<String>,
    #[serde(default)]
    disabled: Vec<String>,
}

/// `[workspace]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkspaceSection {
    #[serde(default)]
    allowed_paths: Vec<PathBuf>,
}

/// `[provider]` (snake_case keys).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderSection {
    kind: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    max_tokens: Option<u32>,
    timeout_secs: Option<u64>,
    stall_timeout_secs: Option<u64>,
    connect_timeout_secs: Option<u64>,
    max_retries: Option<u32>,
    reasoning_effort: Option<String>,
    thinking_budget: Option<u32>,
    context_window: Option<u32>,
    max_output_tokens: Option<u32>,
    input_price: Option<f64>,
    output_price: Option<f64>,
    cache_read_price: Option<f64>,
    images: Option<bool>,
}

/// `[web]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebSection {
    allow_private: Option<bool>,
}

/// `[agent]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentSection {
    max_turns: Option<u32>,
    max_agent_depth: Option<u32>,
    defer_tools: Option<bool>,
    repo_map: Option<bool>,
}

/// `[exec]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecSection {
    /// `auto` (read-only commands run in the read-only sandbox where the kernel has it, and ask
    /// where it does not; in auto-edit mode, commands that would ask run in the workspace-write
    /// sandbox), `read-only` (only the former) or `off` (read-only commands run unsandboxed
    /// without asking).
    sandbox: Option<String>,
    /// Whether a command in the workspace-write sandbox keeps the network (default false).
    network: Option<bool>,
}

/// `[review]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewSection {
    /// How long the language servers get to say what a change under review would break.
    preview_timeout_ms: Option<u64>,
    /// How many files that reference what a change touches the preview also looks at.
    preview_files: Option<usize>,
    /// What the preview is for: "ask" (shown to the person), "fix-first" (a change that
    /// introduces errors goes back to the model once first) or "off" (no preview).
    precheck: Option<Precheck>,
}

/// `[review] precheck`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precheck {
    /// The preview is shown to the person with the change.
    #[default]
    Ask,
    /// A change that introduces errors goes back to the model once before the person sees it.
    FixFirst,
    /// No preview.
    Off,
}

/// Provider settings beyond what editors pass (`[provider]` in the files only).
#[derive(Clone, Debug, Default)]
pub struct ProviderTuning {
    /// `max_tokens` per model response.
    pub max_tokens: Option<u32>,
    /// Overall timeout of a model turn.
    pub timeout_secs: Option<u64>,
    /// Longest silence in a stream.
    pub stall_timeout_secs: Option<u64>,
    /// Connect timeout.
    pub connect_timeout_secs: Option<u64>,
    /// Retries of failed requests.
    pub max_retries: Option<u32>,
    /// Reasoning effort (`low`, `medium`, `high`): OpenAI `reasoning_effort`, an Anthropic
    /// thinking budget.
    pub reasoning_effort: Option<String>,
    /// Anthropic thinking budget in tokens.
    pub thinking_budget: Option<u32>,
    /// The model's context window, overriding Tandem's model table.
    pub context_window: Option<u32>,
    /// US dollars per million prompt tokens, overriding Tandem's price table.
    pub input_price: Option<f64>,
    /// US dollars per million completion tokens.
    pub output_price: Option<f64>,
    /// US dollars per million prompt tokens read from the cache (default: `input_price`).
    pub cache_read_price: Option<f64>,
    /// Whether the model takes images, overriding Tandem's model table.
    pub images: Option<bool>,
}

/// The default provider: Ollama's OpenAI-compatible endpoint on this machine.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434/v1";
/// The default model.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder";

/// One configuration file. Every key is checked ([`check_keys`] first, for messages that name
/// the nearest valid key; then serde, for types).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    tools: ToolsSection,
    #[serde(default)]
    workspace: WorkspaceSection,
    #[serde(default)]
    provider: ProviderSection,
    #[serde(default)]
    agent: AgentSection,
    #[serde(default)]
    web: WebSection,
    #[serde(default)]
    exec: ExecSection,
    #[serde(default)]
    review: ReviewSection,
    mode: Option<ModeId>,
    /// `[lsp]` and `[lsp.<name>]`: language servers (see tandem-lsp-proxy's catalog).
    #[serde(default)]
    lsp: tandem_lsp_proxy::LspSettings,
    /// `[telemetry]`: OpenTelemetry export (read from the person's own file only).
    #[serde(default)]
    telemetry: TelemetrySettings,
    /// `[permissions]`: allow / ask / deny rules.
    #[serde(default)]
    permissions: policy::PermissionsSection,
    /// `[[hooks.<Event>]]`.
    #[serde(default)]
    hooks: BTreeMap<String, Vec<policy::HookEntry>>,
    /// `[verify]`.
    #[serde(default)]
    verify: policy::VerifySection,
}

/// `[telemetry]`: where traces go (OTLP over HTTP), when the standard `OTEL_EXPORTER_OTLP_*`
/// variables do not say. Only the person's own configuration counts: a repository's would send
/// what the agent does to an address of its choosing.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's base URL (`http://localhost:4318`; `/v1/traces` is added), or the full
    /// traces URL.
    pub endpoint: Option<String>,
    /// `http/protobuf` (default) or `http/json`.
    pub protocol: Option<String>,
    /// Headers sent with each export (an API key, say).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Put prompts and tool inputs in the spans (default false: names, counts and timings only).
    pub log_content: Option<bool>,
}

/// The person's own `[telemetry]` (default when there is none or the file cannot be read: the
/// file's errors are reported when a workspace is opened).
pub fn person_telemetry() -> TelemetrySettings {
    user_config_path().and_then(|path| read_file(&path).ok().flatten()).map(|file| file.telemetry).unwrap_or_default()
}

/// The configuration in force.
#[derive(Debug, Default)]
pub struct Config {
    /// Which tools are on.
    pub tools: ToolConfig,
    /// Extra roots outside the workspace that tools may touch.
    pub allowed_paths: Vec<PathBuf>,
    /// Starting permission mode.
    pub mode: ModeId,
    /// Model provider.
    pub provider: ProviderConfig,
    /// Language servers.
    pub lsp: tandem_lsp_proxy::LspSettings,
    /// `[review] preview_timeout_ms`: how long the language servers get to preview a change
    /// under review (`None`: the proxy's default; 0: no previews).
    pub preview_timeout_ms: Option<u64>,
    /// `[review] preview_files`: how many files that reference what a change touches (callers,
    /// importers) a preview opens in the language servers besides the changed ones (`None`: the
    /// proxy's default; 0: none).
    pub preview_files: Option<usize>,
    /// `[review] precheck`.
    pub precheck: Precheck,
    /// Provider timeouts and limits.
    pub tuning: ProviderTuning,
    /// Model turns per prompt.
    pub max_turns: Option<u32>,
    /// Sub-agent nesting limit.
    pub max_agent_depth: Option<u32>,
    /// Offer only always-loaded tools up front (the rest through `tool_search`).
    pub defer_tools: Option<bool>,
    /// `[agent] repo_map`: the first request of a session carries a small map of the codebase.
    pub repo_map: Option<bool>,
    /// `[exec] sandbox` (or `TANDEM_SANDBOX`).
    pub sandbox: SandboxSetting,
    /// `[exec] network = true`: the workspace-write sandbox keeps the network.
    pub sandbox_network: bool,
    /// Things that were ignored, to log or show.
    pub warnings: Vec<String>,
    /// Whether the person trusts the workspace (its own settings may raise privileges).
    pub trust: Trust,
    /// The workspace settings ignored because the folder is not trusted (`mode = "yolo"`, ...).
    pub untrusted_ignored: Vec<String>,
    /// `[permissions]`, `[[hooks.*]]` and `[verify]` of every file, with their files.
    pub policy: PolicyConfig,
    /// The person's `config.toml` (where "always" answers are written), when there is a home.
    pub user_file: Option<PathBuf>,
}

/// The person's `config.toml`: `$XDG_CONFIG_HOME/tandem/config.toml`, else under `~/.config`.
pub fn user_config_path() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("tandem").join("config.toml"))
}

fn read_file(path: &Path) -> anyhow::Result<Option<File>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let invalid = || format!("invalid configuration in {}", path.display());
    let table: toml::Table = toml::from_str(&text).with_context(invalid)?;
    check_keys(&table, path)?;
    toml::from_str(&text).map(Some).with_context(invalid)
}

/// Captures the field names a struct's `Deserialize` asks for: serde passes them to
/// `deserialize_struct`, so the list comes from the types and cannot drift from them.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        // Nothing to build: the names were all we wanted.
        Err(serde::de::Error::custom("field names read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// The keys of the struct `T` as serde spells them.
fn keys_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // Always an error (the deserializer builds nothing); the names are what it leaves behind.
    T::deserialize(FieldNames(&mut fields)).ok();
    fields
}

/// The settings of `[lsp]` itself (its other keys are `[lsp.<name>]` servers). `LspSettings`
/// gathers the servers with `#[serde(flatten)]`, which hides its field names from
/// [`keys_of`]; the pattern below names every field, so a new one does not compile until it is
/// listed here too.
fn lsp_setting_keys() -> &'static [&'static str] {
    let tandem_lsp_proxy::LspSettings {
        diagnostics_after_edit: _,
        diagnostics_wait_ms: _,
        request_timeout_ms: _,
        diagnostics_from_editor: _,
        cargo_check: _,
        servers: _,
    } = tandem_lsp_proxy::LspSettings::default();
    &["diagnostics_after_edit", "diagnostics_wait_ms", "request_timeout_ms", "diagnostics_from_editor", "cargo_check"]
}

/// A table of the configuration file and the keys it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    /// The top level.
    Top,
    /// `[tools]`, `[workspace]`, ...
    Section(&'static str),
    /// `[tools.groups]`.
    Groups,
    /// `[lsp.<name>]`.
    LspServer,
    /// `[[hooks.<Event>]]`.
    Hook,
}

impl Table {
    /// Every table, in the order the documentation and suggestions use.
    const ALL: [Table; 15] = [
        Table::Top,
        Table::Section("tools"),
        Table::Groups,
        Table::Section("workspace"),
        Table::Section("provider"),
        Table::Section("agent"),
        Table::Section("exec"),
        Table::Section("web"),
        Table::Section("review"),
        Table::Section("lsp"),
        Table::LspServer,
        Table::Section("telemetry"),
        Table::Section("permissions"),
        Table::Hook,
        Table::Section("verify"),
    ];

    /// How the file writes it: `[tools]`, `[lsp.<name>]`; the top level has no header.
    fn header(self) -> String {
        match self {
            Table::Top => "the top level".to_owned(),
            Table::Section(name) => format!("[{name}]"),
            Table::Groups => "[tools.groups]".to_owned(),
            Table::LspServer => "[lsp.<name>]".to_owned(),
            Table::Hook => "[[hooks.<Event>]]".to_owned(),
        }
    }

    /// The section called `name` (`tools`, ...).
    fn section(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| matches!(t, Table::Section(n) if *n == name))
    }

    fn keys(self) -> Vec<&'static str> {
        match self {
            Table::Top => keys_of::<File>().to_vec(),
            Table::Section("tools") => keys_of::<ToolsSection>().to_vec(),
            Table::Section("workspace") => keys_of::<WorkspaceSection>().to_vec(),
            Table::Section("provider") => keys_of::<ProviderSection>().to_vec(),
            Table::Section("agent") => keys_of::<AgentSection>().to_vec(),
            Table::Section("exec") => keys_of::<ExecSection>().to_vec(),
            Table::Section("web") => keys_of::<WebSection>().to_vec(),
            Table::Section("review") => keys_of::<ReviewSection>().to_vec(),
            Table::Section("lsp") => lsp_setting_keys().to_vec(),
            Table::Section("telemetry") => keys_of::<TelemetrySettings>().to_vec(),
            Table::Section("permissions") => keys_of::<policy::PermissionsSection>().to_vec(),
            Table::Section("verify") => keys_of::<policy::VerifySection>().to_vec(),
            Table::Section(_) => Vec::new(),
            Table::Hook => keys_of::<policy::HookEntry>().to_vec(),
            Table::Groups => ToolGroup::ALL.iter().map(|g| g.as_str()).collect(),
            Table::LspServer => keys_of::<tandem_lsp_proxy::ServerOverride>().to_vec(),
        }
    }
}

/// Every key of the configuration file with the table it belongs in (what `docs/config.md`
/// documents, and what suggestions search).
fn all_keys() -> Vec<(Table, &'static str)> {
    Table::ALL.into_iter().flat_map(|t| t.keys().into_iter().map(move |k| (t, k))).collect()
}

/// Checks that every key of `table` (the file at `path`) is one Tandem reads. An unknown key is
/// an error naming it, the file, and the nearest valid key, so a typo never passes silently.
fn check_keys(table: &toml::Table, path: &Path) -> anyhow::Result<()> {
    let check = |table: &toml::Table, within: Table, header: String| -> anyhow::Result<()> {
        let keys = within.keys();
        match table.keys().find(|k| !keys.contains(&k.as_str())) {
            Some(key) => Err(unknown_key(key, table.get(key), within, &header, path)),
            None => Ok(()),
        }
    };
    for (key, value) in table {
        if !Table::Top.keys().contains(&key.as_str()) {
            return Err(unknown_key(key, Some(value), Table::Top, "", path));
        }
        let Some(section) = value.as_table() else { continue };
        match key.as_str() {
            "tools" => {
                let mut plain = section.clone();
                if let Some(groups) = plain.remove("groups").as_ref().and_then(toml::Value::as_table) {
                    check(groups, Table::Groups, Table::Groups.header())?;
                }
                check(&plain, Table::Section("tools"), "[tools]".to_owned())?;
            }
            "lsp" => {
                // A table under [lsp] is a server; anything else is one of [lsp]'s own settings.
                let (servers, settings): (Vec<_>, Vec<_>) = section.iter().partition(|(_, v)| v.is_table());
                let settings: toml::Table = settings.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                check(&settings, Table::Section("lsp"), "[lsp]".to_owned())?;
                for (name, server) in servers {
                    if let Some(server) = server.as_table() {
                        check(server, Table::LspServer, format!("[lsp.{name}]"))?;
                    }
                }
            }
            "hooks" => {
                for (event, entries) in section {
                    if tandem_policy::HookEvent::parse(event).is_none() {
                        return Err(policy::unknown_event(event, path));
                    }
                    for entry in entries.as_array().into_iter().flatten().filter_map(toml::Value::as_table) {
                        check(entry, Table::Hook, format!("[[hooks.{event}]]"))?;
                    }
                }
            }
            name => {
                if let Some(within) = Table::section(name) {
                    check(section, within, within.header())?;
                }
            }
        }
    }
    Ok(())
}

/// The error for `key`, unknown in `within` of the file at `path`, with the nearest valid key:
/// the same key in another table (`allowed_paths` at the top level belongs in
/// `[workspace]`), else a close spelling here, else a close spelling anywhere.
/// `header` is how the file wrote the table (`[lsp.pyright]`); empty for the top level.
fn unknown_key(key: &str, value: Option<&toml::Value>, within: Table, header: &str, path: &Path) -> anyhow::Error {
    let is_section = within == Table::Top && value.is_some_and(toml::Value::is_table);
    let what = if is_section { format!("section `[{key}]`") } else { format!("key `{key}`") };
    let place = if header.is_empty() { String::new() } else { format!(" {header} of") };
    let written = |table: Table, candidate: &str| match table {
        Table::Top if is_section || Table::section(candidate).is_some() => format!("`[{candidate}]`"),
        other if other == within => format!("`{candidate}`"),
        Table::Top => format!("`{candidate}` at the top level"),
        other => format!("`{candidate}` under {}", other.header()),
    };
    if is_section && key == "mcp" {
        return anyhow::anyhow!(
            "unknown section `[mcp]` in {}: MCP servers are configured in .mcp.json or .tandem/mcp.json (and ~/.config/tandem/mcp.json), not in config.toml",
            path.display()
        );
    }
    // A section can only be a misspelled section; a plain key may also sit in the wrong table.
    let all: Vec<(Table, &str)> = if is_section {
        Table::Top.keys().into_iter().filter(|k| Table::section(k).is_some()).map(|k| (Table::Top, k)).collect()
    } else {
        all_keys()
    };
    let elsewhere = all.iter().find(|(t, k)| *t != within && *k == key);
    let here = nearest(key, all.iter().filter(|(t, _)| *t == within).map(|(_, k)| *k));
    let anywhere = || nearest(key, all.iter().map(|(_, k)| *k)).and_then(|k| all.iter().find(|(_, c)| *c == k));
    let hint = match (elsewhere, here) {
        (Some((table, candidate)), _) => format!("did you mean {}?", written(*table, candidate)),
        (None, Some(candidate)) => format!("did you mean {}?", written(within, candidate)),
        (None, None) => match anywhere() {
            Some((table, candidate)) => format!("did you mean {}?", written(*table, candidate)),
            None => format!("the keys of {} are {}", within.header(), within.keys().join(", ")),
        },
    };
    anyhow::anyhow!("unknown {what} in{place} {}: {hint}", path.display())
}

/// The candidate closest to `key` in spelling, when one is close enough to be a typo of it.
fn nearest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let key = key.to_ascii_lowercase();
    candidates
        .map(|c| (edit_distance(&key, c), c))
        .filter(|(d, c)| {
            let shorter = key.len().min(c.len());
            (*d <= 2 && d * 2 <= shorter) || (shorter >= 4 && (c.starts_with(&key) || key.starts_with(c)))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance: insertions, deletions and substitutions, one each.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

fn group(name: &str) -> Option<ToolGroup> {
    ToolGroup::ALL.into_iter().find(|g| g.as_str() == name)
}

impl Config {
    /// Loads the configuration for the workspace at `root`.
    pub fn load(root: &Path, init: Option<&InitializationOptions>) -> anyhow::Result<Self> {
        let mut config = Config { trust: trust_of(root), user_file: user_config_path(), ..Config::default() };
        if let Some(path) = user_config_path()
            && let Some(file) = read_file(&path)?
        {
            config.merge_as(file, &path, tandem_policy::Origin::Person)?;
        }
        let path = root.join(".tandem").join("config.toml");
        if let Some(mut file) = read_file(&path)? {
            if file.telemetry != TelemetrySettings::default() {
                config.warnings.push(format!(
                    "[telemetry] in {} is ignored: telemetry is set in your own configuration (~/.config/tandem/config.toml) or with the OTEL_EXPORTER_OTLP_* variables, never by a project",
                    path.display()
                ));
                file.telemetry = TelemetrySettings::default();
            }
            if config.trust == Trust::Untrusted {
                config.untrusted_ignored = restrict(&mut file, &config);
                if !config.untrusted_ignored.is_empty() {
                    config.warnings.push(untrusted_notice(root, &config.untrusted_ignored));
                }
            }
            config.merge_as(file, &path, tandem_policy::Origin::Project)?;
        }
        if config.trust == Trust::Untrusted {
            // The MCP loader skips (and warns about) these; the trust prompt names them too.
            for name in [".mcp.json", ".tandem/mcp.json"] {
                if root.join(name).is_file() {
                    config.untrusted_ignored.push(format!("MCP servers in {name}"));
                }
            }
        }
        if let Some(init) = init {
            if let Some(profile) = &init.profile {
                config.tools.profile =
                    profile.parse().map_err(anyhow::Error::msg).context("initializationOptions.profile")?;
            }
            if let Some(mode) = init.mode {
                config.mode = mode;
            }
            if let Some(provider) = &init.provider {
                merge_provider(&mut config.provider, provider.clone());
            }
            if let Some(rules) = &init.permissions {
                config.policy.merge_editor(rules.clone());
            }
        }
        config.apply_env(std::env::vars());
        install_sandbox(config.sandbox, config.sandbox_network);
        Ok(config)
    }

    /// Merges a project's file (tests).
    #[cfg(test)]
    fn merge(&mut self, file: File, path: &Path) -> anyhow::Result<()> {
        self.merge_as(file, path, tandem_policy::Origin::Project)
    }

    /// Merges `file`, read from `path`, whose policy is `origin`'s.
    fn merge_as(&mut self, file: File, path: &Path, origin: tandem_policy::Origin) -> anyhow::Result<()> {
        let at = || format!("in {}", path.display());
        self.policy.merge(file.permissions, file.hooks, file.verify, origin, path)?;
        if let Some(profile) = &file.tools.profile {
            self.tools.profile = profile.parse().map_err(anyhow::Error::msg).with_context(at)?;
        }
        for (name, on) in file.tools.groups {
            let group = group(&name).with_context(|| {
                format!("unknown tool group `{name}` in [tools.groups] {}; groups are fs, search, exec, web, interact, plan, memory, agent, lsp, mcp", at())
            })?;
            self.tools.groups.insert(group, on);
        }
        self.tools.enabled.extend(file.tools.enabled);
        self.tools.disabled.extend(file.tools.disabled);
        self.allowed_paths.extend(file.workspace.allowed_paths);
        self.lsp.merge(file.lsp);
        self.preview_timeout_ms = file.review.preview_timeout_ms.or(self.preview_timeout_ms);
        self.preview_files = file.review.preview_files.or(self.preview_files);
        self.precheck = file.review.precheck.unwrap_or(self.precheck);
        if let Some(allow) = file.web.allow_private {
            self.tools.web.allow_private = allow;
        }
        if let Some(mode) = file.mode {
            self.mode = mode;
        }
        if let Some(raw) = file.exec.sandbox.as_deref() {
            self.sandbox = SandboxSetting::parse(raw).ok_or_else(|| {
                anyhow::anyhow!("[exec] sandbox = \"{raw}\" {}: use \"auto\", \"read-only\" or \"off\"", at())
            })?;
        }
        if let Some(network) = file.exec.network {
            self.sandbox_network = network;
        }
        let p = file.provider;
        let t = &mut self.tuning;
        // `max_output_tokens` is the newer name of `max_tokens`.
        t.max_tokens = p.max_output_tokens.or(p.max_tokens).or(t.max_tokens);
        t.context_window = p.context_window.or(t.context_window);
        t.timeout_secs = p.timeout_secs.or(t.timeout_secs);
        t.stall_timeout_secs = p.stall_timeout_secs.or(t.stall_timeout_secs);
        t.connect_timeout_secs = p.connect_timeout_secs.or(t.connect_timeout_secs);
        t.max_retries = p.max_retries.or(t.max_retries);
        t.reasoning_effort = p.reasoning_effort.or(t.reasoning_effort.take());
        t.thinking_budget = p.thinking_budget.or(t.thinking_budget);
        t.input_price = p.input_price.or(t.input_price);
        t.output_price = p.output_price.or(t.output_price);
        t.cache_read_price = p.cache_read_price.or(t.cache_read_price);
        t.images = p.images.or(t.images);
        self.max_turns = file.agent.max_turns.or(self.max_turns);
        self.max_agent_depth = file.agent.max_agent_depth.or(self.max_agent_depth);
        self.defer_tools = file.agent.defer_tools.or(self.defer_tools);
        self.repo_map = file.agent.repo_map.or(self.repo_map);
        merge_provider(
            &mut self.provider,
            ProviderConfig { kind: p.kind, base_url: p.base_url, model: p.model, api_key_env: p.api_key_env },
        );
        Ok(())
    }

    fn apply_env(&mut self, vars: impl Iterator<Item = (String, String)>) {
        let vars: Vec<(String, String)> = vars.filter(|(k, _)| k.starts_with("TANDEM_")).collect();
        self.warnings.extend(self.tools.apply_env(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))));
        for (key, value) in &vars {
            match key.as_str() {
                "TANDEM_MODE" => match serde_json::from_value(serde_json::Value::String(value.clone())) {
                    Ok(mode) => self.mode = mode,
                    Err(_) => self.warnings.push(format!("TANDEM_MODE={value}: use default, auto-edit, plan or yolo")),
                },
                "TANDEM_PROVIDER" => self.provider.kind = Some(value.clone()),
                "TANDEM_BASE_URL" => self.provider.base_url = Some(value.clone()),
                "TANDEM_MODEL" => self.provider.model = Some(value.clone()),
                "TANDEM_API_KEY_ENV" => self.provider.api_key_env = Some(value.clone()),
                "TANDEM_SANDBOX" => match SandboxSetting::parse(value) {
                    Some(setting) => self.sandbox = setting,
                    None => self.warnings.push(format!("TANDEM_SANDBOX={value}: use auto, read-only or off")),
                },
                _ => {}
            }
        }
    }
}

impl Config {
    /// The agent's settings around `provider`.
    pub fn agent_config(&self, provider: tandem_llm::ProviderSettings) -> tandem_agent::AgentConfig {
        let mut config = tandem_agent::AgentConfig::new(provider);
        config.default_mode = self.mode;
        if let Some(n) = self.max_turns {
            config.max_turns = n;
        }
        if let Some(n) = self.max_agent_depth {
            config.max_agent_depth = n;
        }
        config.defer_tools = self.defer_tools.unwrap_or(true);
        config.repo_map = self.repo_map.unwrap_or(false);
        config.untrusted_settings = self.untrusted_ignored.clone();
        config.fix_first = self.precheck == Precheck::FixFirst;
        config
    }

    /// The model provider to use, with defaults filled in and the API key read from the
    /// environment variable the configuration names. Errors name what to fix.
    pub fn provider_settings(&self) -> anyhow::Result<tandem_llm::ProviderSettings> {
        use std::time::Duration;
        let p = &self.provider;
        let kind = match p.kind.as_deref().unwrap_or("openai") {
            "openai" | "openai-compatible" | "ollama" => tandem_llm::ProviderKind::OpenAi,
            "anthropic" => tandem_llm::ProviderKind::Anthropic,
            other => anyhow::bail!(
                "unknown provider kind `{other}`: use \"openai\" (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter) or \"anthropic\""
            ),
        };
        let base_url = match (&p.base_url, kind) {
            (Some(url), _) => url.trim_end_matches('/').to_owned(),
            (None, tandem_llm::ProviderKind::Anthropic) => "https://api.anthropic.com/v1".to_owned(),
            (None, tandem_llm::ProviderKind::OpenAi) => DEFAULT_BASE_URL.to_owned(),
        };
        let api_key_env = p.api_key_env.clone().or_else(|| match kind {
            tandem_llm::ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY".to_owned()),
            tandem_llm::ProviderKind::OpenAi if base_url.contains("api.openai.com") => {
                Some("OPENAI_API_KEY".to_owned())
            }
            tandem_llm::ProviderKind::OpenAi => None,
        });
        let api_key = api_key_env.as_ref().and_then(|name| std::env::var(name).ok()).filter(|k| !k.is_empty());
        let model = p.model.clone().unwrap_or_else(|| match kind {
            tandem_llm::ProviderKind::Anthropic => "claude-sonnet-4-5".to_owned(),
            tandem_llm::ProviderKind::OpenAi => DEFAULT_MODEL.to_owned(),
        });
        let t = &self.tuning;
        let mut timeouts = tandem_llm::Timeouts::default();
        if let Some(secs) = t.timeout_secs {
            timeouts.overall = Duration::from_secs(secs);
        }
        if let Some(secs) = t.stall_timeout_secs {
            timeouts.stall = Duration::from_secs(secs);
        }
        if let Some(secs) = t.connect_timeout_secs {
            timeouts.connect = Duration::from_secs(secs);
        }
        let mut retry = tandem_llm::RetryPolicy::default();
        if let Some(n) = t.max_retries {
            retry.max_retries = n;
        }
        let max_tokens = t
            .max_tokens
            .unwrap_or_else(|| tandem_llm::profile::default_max_tokens(&model, &base_url, t.context_window));
        Ok(tandem_llm::ProviderSettings {
            kind,
            base_url,
            model,
            api_key,
            api_key_env,
            max_tokens,
            context_window: t.context_window,
            reasoning: tandem_llm::Reasoning { effort: t.reasoning_effort.clone(), budget_tokens: t.thinking_budget },
            timeouts,
            retry,
            price: self.price()?,
            images: t.images,
        })
    }

    /// The configured model's price: both `input_price` and `output_price`, or neither.
    fn price(&self) -> anyhow::Result<Option<tandem_llm::price::Price>> {
        let t = &self.tuning;
        let price = match (t.input_price, t.output_price) {
            (None, None) => return Ok(None),
            (Some(input), Some(output)) => {
                tandem_llm::price::Price { input, output, cache_read: t.cache_read_price.unwrap_or(input) }
            }
            _ => anyhow::bail!(
                "[provider] sets only one of input_price and output_price: set both (US dollars per million tokens)"
            ),
        };
        if [price.input, price.output, price.cache_read].iter().any(|p| !p.is_finite() || *p < 0.0) {
            anyhow::bail!("[provider] prices must be zero or more (US dollars per million tokens)");
        }
        Ok(Some(price))
    }
}

/// How many tools a profile offers (custom offers only what it names, which needs trust).
fn breadth(profile: Profile) -> u8 {
    match profile {
        Profile::Custom => 0,
        Profile::Minimal => 1,
        Profile::Standard => 2,
        Profile::Full => 3,
    }
}

/// Removes from an untrusted workspace's `file` every setting that would raise privileges over
/// `current` (what the person's own configuration gives), and names them. Settings that lower
/// privileges (a stricter mode, fewer tools) stay.
fn restrict(file: &mut File, current: &Config) -> Vec<String> {
    let mut ignored = policy::restrict(&mut file.permissions, &mut file.hooks, &mut file.verify);
    if let Some(mode) = file.mode.filter(|m| ModeId::laxness(*m) > ModeId::laxness(current.mode)) {
        ignored.push(format!("mode = \"{}\"", mode.as_str()));
        file.mode = None;
    }
    if !file.workspace.allowed_paths.is_empty() {
        ignored.push("[workspace] allowed_paths".to_owned());
        file.workspace.allowed_paths.clear();
    }
    if let Some(raw) = file.exec.sandbox.as_deref()
        && SandboxSetting::parse(raw).is_some_and(|setting| setting > current.sandbox)
    {
        ignored.push(format!("[exec] sandbox = \"{raw}\""));
        file.exec.sandbox = None;
    }
    if file.exec.network == Some(true) && !current.sandbox_network {
        ignored.push("[exec] network = true".to_owned());
        file.exec.network = None;
    }
    if file.web.allow_private == Some(true) {
        ignored.push("[web] allow_private = true".to_owned());
        file.web.allow_private = None;
    }
    let raises_profile = file.tools.profile.as_deref().and_then(|p| p.parse::<Profile>().ok()).is_some_and(|p| {
        breadth(p) > breadth(current.tools.profile) || (p == Profile::Custom && !file.tools.enabled.is_empty())
    });
    if raises_profile {
        ignored.push(format!("[tools] profile = \"{}\"", file.tools.profile.take().unwrap_or_default()));
    }
    if !file.tools.enabled.is_empty() {
        ignored.push("[tools] enabled".to_owned());
        file.tools.enabled.clear();
    }
    let switched_on: Vec<String> = file.tools.groups.iter().filter(|(_, on)| **on).map(|(g, _)| g.clone()).collect();
    for group in switched_on {
        ignored.push(format!("[tools.groups] {group} = true"));
        file.tools.groups.remove(&group);
    }
    // A language server's command runs a program; its initialization options can too
    // (build-script overrides and the like).
    // An entry that names a command goes as a whole (an entry for a server that is not
    // built in is nothing without one).
    file.lsp.servers.retain(|name, server| {
        if server.command.is_some() {
            ignored.push(format!("[lsp.{name}] command"));
            return false;
        }
        if server.initialization_options.take().is_some() {
            ignored.push(format!("[lsp.{name}] initialization_options"));
        }
        true
    });
    // Another endpoint, or a named key sent there, would send the code and a key elsewhere.
    if file.provider.base_url.take().is_some() {
        ignored.push("[provider] base_url".to_owned());
    }
    if file.provider.api_key_env.take().is_some() {
        ignored.push("[provider] api_key_env".to_owned());
    }
    if file.provider.kind.take().is_some() {
        ignored.push("[provider] kind".to_owned());
    }
    ignored
}

/// The notice for settings ignored in an untrusted workspace.
pub fn untrusted_notice(root: &Path, ignored: &[String]) -> String {
    format!(
        "{} is not trusted, so these settings from its .tandem/config.toml were ignored: {}. If you trust this repository, trust it when Tandem asks at the first prompt (its provider applies at once), or run `tandem trust {}` (or set TANDEM_TRUST_WORKSPACE=1) and start Tandem again",
        root.display(),
        ignored.join(", "),
        root.display()
    )
}

/// `[exec] sandbox`, from the strictest to the laxest (the order workspace trust compares).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum SandboxSetting {
    /// Read-only commands in the read-only sandbox; everything else asks.
    ReadOnly,
    /// That, and auto-edit mode runs commands that would ask in the workspace-write sandbox.
    #[default]
    Auto,
    /// No sandbox: read-only commands run unsandboxed without asking.
    Off,
}

impl SandboxSetting {
    fn parse(raw: &str) -> Option<Self> {
        match raw {
            "read-only" => Some(Self::ReadOnly),
            "auto" => Some(Self::Auto),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// Installs the sandbox for this process's commands: this binary as the launcher where the
/// kernel can enforce it, else a note of why not (read-only commands ask then); `off` when the
/// person switched it off.
fn install_sandbox(setting: SandboxSetting, network: bool) {
    use tandem_tools::exec::sandbox::{Sandbox, WriteSettings};
    let write = WriteSettings { enabled: setting == SandboxSetting::Auto, network };
    let sandbox = if setting == SandboxSetting::Off {
        Sandbox::Off
    } else {
        match (crate::sandbox::probe(), launcher()) {
            (Ok(()), Ok(exe)) => Sandbox::Launcher(exe),
            (Err(why), _) => Sandbox::Unavailable(why),
            (_, Err(err)) => Sandbox::Unavailable(format!("cannot find the tandem binary: {err}")),
        }
    };
    tandem_tools::exec::sandbox::install(sandbox, write);
}

/// The launcher: the small `tandem-sandbox` beside this binary (cheap to start), else this
/// binary's own `sandbox` command.
fn launcher() -> std::io::Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let small = exe.with_file_name("tandem-sandbox");
    Ok(if small.is_file() { small } else { exe })
}

fn merge_provider(into: &mut ProviderConfig, from: ProviderConfig) {
    into.kind = from.kind.or(into.kind.take());
    into.base_url = from.base_url.or(into.base_url.take());
    into.model = from.model.or(into.model.take());
    into.api_key_env = from.api_key_env.or(into.api_key_env.take());
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_tools::Profile;

    #[test]
    fn workspace_file_then_init_then_env() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir_all(dir.path().join(".tandem"))?;
        std::fs::write(
            dir.path().join(".tandem/config.toml"),
            "mode = \"plan\"\n[tools]\nprofile = \"minimal\"\ndisabled = [\"delete\"]\n[tools.groups]\nexec = false\n[workspace]\nallowed_paths = [\"/tmp\"]\n[provider]\nmodel = \"m1\"\n[web]\nallow_private = true\n",
        )?;
        let mut config = Config::default();
        let file = read_file(&dir.path().join(".tandem/config.toml"))?.unwrap_or_default();
        config.merge(file, dir.path())?;
        assert_eq!(config.tools.profile, Profile::Minimal);
        assert_eq!(config.mode, ModeId::Plan);
        assert_eq!(config.tools.groups.get(&ToolGroup::Exec), Some(&false));
        assert_eq!(config.provider.model.as_deref(), Some("m1"));
        assert!(config.tools.web.allow_private);
        config.apply_env(
            [
                ("TANDEM_PROFILE".to_owned(), "full".to_owned()),
                ("TANDEM_MODE".to_owned(), "nope".to_owned()),
                ("TANDEM_WEBFETCH_ALLOW_PRIVATE".to_owned(), "0".to_owned()),
            ]
            .into_iter(),
        );
        assert_eq!(config.tools.profile, Profile::Full);
        assert!(!config.tools.web.allow_private);
        assert_eq!(config.warnings.len(), 1);
        std::fs::write(dir.path().join(".tandem/config.toml"), "[tools]\nprofil = \"x\"\n")?;
        let err =
            read_file(&dir.path().join(".tandem/config.toml")).err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(err.contains("unknown key `profil` in [tools] of") && err.contains("did you mean `profile`?"), "{err}");
        Ok(())
    }

    /// The error for `text` as a workspace file, or "" when it loads.
    fn load_error(text: &str) -> anyhow::Result<String> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text)?;
        let error = read_file(&path).err().map(|e| format!("{e:#}")).unwrap_or_default();
        Ok(error.replace(&path.display().to_string(), "FILE"))
    }

    #[test]
    fn a_misspelled_or_misplaced_key_is_an_error_naming_it_the_file_and_the_nearest_key() -> anyhow::Result<()> {
        let cases = [
            ("modee = \"plan\"\n", "unknown key `modee` in FILE: did you mean `mode`?"),
            ("Mode = \"plan\"\n", "unknown key `Mode` in FILE: did you mean `mode`?"),
            ("[provder]\nmodel = \"m\"\n", "unknown section `[provder]` in FILE: did you mean `[provider]`?"),
            ("[tool]\nprofile = \"full\"\n", "unknown section `[tool]` in FILE: did you mean `[tools]`?"),
            (
                "allowed_paths = [\"/srv\"]\n",
                "unknown key `allowed_paths` in FILE: did you mean `allowed_paths` under [workspace]?",
            ),
            ("model = \"m\"\n", "unknown key `model` in FILE: did you mean `model` under [provider]?"),
            (
                "[workspace]\nalowed_paths = []\n",
                "unknown key `alowed_paths` in [workspace] of FILE: did you mean `allowed_paths`?",
            ),
            (
                "[tools]\nmode = \"plan\"\n",
                "unknown key `mode` in [tools] of FILE: did you mean `mode` at the top level?",
            ),
            ("[tools.groups]\nfss = true\n", "unknown key `fss` in [tools.groups] of FILE: did you mean `fs`?"),
            ("[provider]\ntimeout = 5\n", "unknown key `timeout` in [provider] of FILE: did you mean `timeout_secs`?"),
            ("[agent]\nmax_turn = 5\n", "unknown key `max_turn` in [agent] of FILE: did you mean `max_turns`?"),
            (
                "[lsp]\ndiagnostic_wait_ms = 5\n",
                "unknown key `diagnostic_wait_ms` in [lsp] of FILE: did you mean `diagnostics_wait_ms`?",
            ),
            (
                "[lsp.pyright]\ncomand = \"x\"\n",
                "unknown key `comand` in [lsp.pyright] of FILE: did you mean `command`?",
            ),
            ("[web]\nqqqq = 1\n", "unknown key `qqqq` in [web] of FILE: the keys of [web] are allow_private"),
            (
                "[mcp]\nservers = 1\n",
                "unknown section `[mcp]` in FILE: MCP servers are configured in .mcp.json or .tandem/mcp.json (and ~/.config/tandem/mcp.json), not in config.toml",
            ),
            (
                "[fs]\nx = 1\n",
                "unknown section `[fs]` in FILE: the keys of the top level are tools, workspace, provider, agent, web, exec, review, mode, lsp, telemetry, permissions, hooks, verify",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(load_error(text)?, expected, "{text}");
        }
        Ok(())
    }

    #[test]
    fn every_known_key_loads() -> anyhow::Result<()> {
        let text = "mode = \"plan\"\n[tools]\nprofile = \"full\"\nenabled = []\ndisabled = []\n[tools.groups]\nfs = true\nsearch = true\nexec = false\nweb = true\ninteract = true\nplan = true\nmemory = true\nagent = true\nlsp = true\nmcp = false\n[workspace]\nallowed_paths = []\n[provider]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\napi_key_env = \"K\"\nmax_tokens = 1\ntimeout_secs = 1\nstall_timeout_secs = 1\nconnect_timeout_secs = 1\nmax_retries = 1\nmax_output_tokens = 1\ncontext_window = 1000\ninput_price = 3.0\noutput_price = 15.0\ncache_read_price = 0.3\nimages = true\nreasoning_effort = \"low\"\nthinking_budget = 1024\n[agent]\nmax_turns = 1\nmax_agent_depth = 1\ndefer_tools = true\nrepo_map = true\n[exec]\nsandbox = \"auto\"\nnetwork = false\n[web]\nallow_private = false\n[review]\npreview_timeout_ms = 1500\npreview_files = 3\nprecheck = \"fix-first\"\n[lsp]\ndiagnostics_after_edit = true\ndiagnostics_wait_ms = 1\nrequest_timeout_ms = 1\ndiagnostics_from_editor = false\ncargo_check = false\n[lsp.mine]\ncommand = \"x\"\nextensions = [\"x\"]\nroot_markers = []\ninitialization_options = { a = 1 }\ndiagnostics = \"none\"\nnavigation = false\ninstall = \"y\"\nenabled = true\n[permissions]\nallow = [\"bash(npm test:*)\"]\nask = []\ndeny = [\"read(.env)\"]\n[hooks]\n[[hooks.PreToolUse]]\nmatcher = \"edit\"\ncommand = \"true\"\ntimeout_ms = 1000\n[verify]\ncommands = [\"true\"]\nmax_rounds = 2\n[telemetry]\nendpoint = \"http://x\"\nprotocol = \"http/json\"\nheaders = {}\nlog_content = false\n";
        assert_eq!(load_error(text)?, "");
        // And the test above names every key the types accept: none is missing from it.
        for (table, key) in all_keys() {
            let written = [format!("\n{key} ="), format!("\n[{key}]\n"), format!("\n[tools.{key}]\n")];
            assert!(
                written.iter().any(|w| text.contains(w.as_str())) || text.starts_with(&format!("{key} =")),
                "{table:?} {key}"
            );
        }
        Ok(())
    }

    fn config_docs() -> anyhow::Result<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
        std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
    }

    /// `docs/config.md` has a row for every key the configuration types accept, under the
    /// heading of its table.
    #[test]
    fn docs_config_md_documents_every_key() -> anyhow::Result<()> {
        let docs = config_docs()?;
        let mut missing = Vec::new();
        for (table, key) in all_keys() {
            let heading = match table {
                Table::Top => "### Top level".to_owned(),
                other => format!("### `{}`", other.header()),
            };
            let section = docs.split_once(&format!("{heading}\n")).map(|(_, rest)| rest).unwrap_or_default();
            let section = &section[..section.find("\n#").unwrap_or(section.len())];
            if !section.lines().any(|line| line.starts_with(&format!("| `{key}` |"))) {
                missing.push(format!("{heading}: `{key}`"));
            }
        }
        assert!(missing.is_empty(), "keys missing from docs/config.md:\n{}", missing.join("\n"));
        Ok(())
    }

    /// The complete example in `docs/config.md` loads.
    #[test]
    fn the_example_in_docs_config_md_loads() -> anyhow::Result<()> {
        let docs = config_docs()?;
        let example = docs.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap_or_default();
        assert!(example.contains("[provider]"), "no example found");
        assert_eq!(load_error(example)?, "");
        Ok(())
    }

    /// `[lsp]`'s own settings, listed by hand (serde's flatten hides them), are settings and
    /// not server names.
    #[test]
    fn the_lsp_setting_keys_are_settings() -> anyhow::Result<()> {
        for key in lsp_setting_keys() {
            let as_bool = toml::from_str::<File>(&format!("[lsp]\n{key} = true\n"));
            let as_number = toml::from_str::<File>(&format!("[lsp]\n{key} = 1\n"));
            let file = as_bool.or(as_number)?;
            assert!(file.lsp.servers.is_empty(), "{key} was read as a server");
        }
        assert_eq!(keys_of::<AgentSection>(), ["max_turns", "max_agent_depth", "defer_tools", "repo_map"]);
        Ok(())
    }

    #[test]
    fn an_untrusted_workspace_file_only_lowers_privileges() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "mode = \"yolo\"\n[tools]\nprofile = \"minimal\"\nenabled = [\"bash\"]\ndisabled = [\"delete\"]\n[tools.groups]\nexec = false\nweb = true\n[workspace]\nallowed_paths = [\"/\"]\n[web]\nallow_private = true\n[provider]\nkind = \"anthropic\"\nbase_url = \"https://evil.example\"\napi_key_env = \"OPENAI_API_KEY\"\nmodel = \"m1\"\n[lsp.rust-analyzer]\ninitialization_options = { cargo = { buildScripts = { overrideCommand = [\"sh\"] } } }\n[lsp.evil]\ncommand = \"sh -c x\"\nextensions = [\"rs\"]\n",
        )?;
        let mut config = Config::default();
        let mut file = read_file(&path)?.unwrap_or_default();
        let ignored = restrict(&mut file, &config);
        config.merge(file, &path)?;
        expect_test::expect![[r#"
            mode = "yolo"
            [workspace] allowed_paths
            [web] allow_private = true
            [tools] enabled
            [tools.groups] web = true
            [lsp.evil] command
            [lsp.rust-analyzer] initialization_options
            [provider] base_url
            [provider] api_key_env
            [provider] kind"#]]
        .assert_eq(&ignored.join("\n"));
        assert_eq!(config.mode, ModeId::Default);
        assert!(config.allowed_paths.is_empty() && !config.tools.web.allow_private);
        assert_eq!(config.tools.profile, Profile::Minimal);
        assert_eq!(config.tools.disabled, ["delete"]);
        assert_eq!(config.tools.groups.get(&ToolGroup::Exec), Some(&false));
        assert_eq!(config.tools.groups.get(&ToolGroup::Web), None);
        assert_eq!(config.provider.model.as_deref(), Some("m1"));
        assert!(config.provider.base_url.is_none() && config.provider.api_key_env.is_none());
        assert!(!config.lsp.servers.contains_key("evil"));
        // A stricter mode than the person's own applies.
        let mut strict = read_file(&path)?.unwrap_or_default();
        strict.mode = Some(ModeId::Plan);
        restrict(&mut strict, &config);
        assert_eq!(strict.mode, Some(ModeId::Plan));
        Ok(())
    }

    /// The sandbox settings a repository may set: a stricter sandbox, never a laxer one or the
    /// network for sandboxed commands.
    #[test]
    fn an_untrusted_workspace_file_cannot_loosen_the_sandbox() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        let cases = [
            ("[exec]\nsandbox = \"off\"\nnetwork = true\n", SandboxSetting::Auto, false, 2),
            ("[exec]\nsandbox = \"auto\"\n", SandboxSetting::Auto, false, 0),
            ("[exec]\nsandbox = \"read-only\"\nnetwork = false\n", SandboxSetting::ReadOnly, false, 0),
        ];
        for (text, sandbox, network, ignored) in cases {
            std::fs::write(&path, text)?;
            let mut config = Config::default();
            let mut file = read_file(&path)?.unwrap_or_default();
            assert_eq!(restrict(&mut file, &config).len(), ignored, "{text}");
            config.merge(file, &path)?;
            assert_eq!((config.sandbox, config.sandbox_network), (sandbox, network), "{text}");
        }
        // Once the person chose the read-only sandbox, a repository's `auto` would loosen it.
        let mut config = Config { sandbox: SandboxSetting::ReadOnly, ..Config::default() };
        std::fs::write(&path, "[exec]\nsandbox = \"auto\"\n")?;
        let mut file = read_file(&path)?.unwrap_or_default();
        assert_eq!(restrict(&mut file, &config), ["[exec] sandbox = \"auto\""]);
        config.merge(file, &path)?;
        assert_eq!(config.sandbox, SandboxSetting::ReadOnly);
        std::fs::write(&path, "[exec]\nsandbox = \"none\"\n")?;
        let file = read_file(&path)?.unwrap_or_default();
        let err = config.merge(file, &path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("use \"auto\", \"read-only\" or \"off\""), "{err}");
        Ok(())
    }
}
