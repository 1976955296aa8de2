//! The redaction rules: one pattern per kind of secret, most specific first.

use std::sync::LazyLock;

use regex::Regex;

/// One kind of secret.
pub(super) struct Rule {
    /// Shown in `[REDACTED:<kind>]`.
    pub kind: &'static str,
    pub regex: Regex,
    /// Only this group is replaced (the setting's name, the URL around it stay).
    pub value_group: Option<usize>,
    /// The secret must have at least this Shannon entropy (bits per char) to count.
    pub min_entropy: f64,
    /// The secret must mix character classes (lower, upper, digit): a bare key, not a word or
    /// a hash.
    pub mixed: bool,
}

impl Rule {
    /// Whether the matched `secret` counts; `name` is the setting's name for the rules that
    /// capture one.
    pub fn accepts(&self, name: Option<&str>, secret: &str) -> bool {
        if self.kind == "secret-setting" && !plausible_setting(name.unwrap_or_default(), secret) {
            return false;
        }
        if self.min_entropy > 0.0 && entropy(secret) < self.min_entropy {
            return false;
        }
        if self.mixed {
            let classes = [
                secret.bytes().any(|b| b.is_ascii_lowercase()),
                secret.bytes().any(|b| b.is_ascii_uppercase()),
                secret.bytes().any(|b| b.is_ascii_digit()),
            ];
            if classes.iter().filter(|c| **c).count() < 3 {
                return false;
            }
        }
        true
    }
}

/// Whether `name = value` looks like a secret being set rather than code or a reference: the
/// value is not an expression (`h.join(`, `{x}`, `$VAR`), another setting's name (`OPENAI_API_KEY`,
/// `p.api_key_env`), and the name is not about where the secret lives (`api_key_env`,
/// `password_file`).
fn plausible_setting(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    let about_location = ["env", "_name", "file", "path", "var", "_id", "url", "type", "length", "len", "policy"];
    if about_location.iter().any(|end| name.ends_with(end)) {
        return false;
    }
    if value.contains(['(', ')', '{', '}', '[', ']', '<', '>', '$']) {
        return false;
    }
    let identifier = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let env_name =
        value.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') && value.contains('_');
    let reference = value.contains(['.', '_'])
        && value
            .split('.')
            .all(|part| !part.is_empty() && identifier(part) && !part.starts_with(|c: char| c.is_ascii_digit()))
        && value.chars().all(|c| !c.is_ascii_uppercase() || value.contains('.'));
    // A version requirement (`"secretlint": "^11.2.5"` in a package manifest).
    let version = value.trim_start_matches(['^', '~', '=', '>', '<', 'v']).split('.').count() >= 2
        && value
            .trim_start_matches(['^', '~', '=', '>', '<', 'v'])
            .split(['.', '-', '+'])
            .next()
            .is_some_and(|major| !major.is_empty() && major.chars().all(|c| c.is_ascii_digit()));
    !(env_name || reference || version)
}

/// Shannon entropy of `text` in bits per character.
fn entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for byte in text.bytes() {
        counts[usize::from(byte)] += 1;
    }
    let len = text.len() as f64;
    counts.iter().filter(|c| **c > 0).map(|c| f64::from(*c) / len).map(|p| -p * p.log2()).sum()
}

/// A setting whose name says it holds a secret: `password`, `DB_PASSWORD`, `client_secret`,
/// `api-key`, `AccountKey`, ... followed by `=` or `:` and a value.
const SECRET_SETTING: &str = r#"(?i)\b([a-z0-9_.-]*(?:password|passwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|accountkey|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|credentials?)[a-z0-9_.-]*)["']?\s*[:=]\s*["']?([^\s"'`,;&]{6,})"#;

pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let raw: &[(&str, &str, Option<usize>, f64, bool)] = &[
        // A private key block; without its END line, the key's lines that follow.
        (
            "private-key",
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:\\n|\r?\n|[A-Za-z0-9+/=:,. -])*)",
            None,
            0.0,
            false,
        ),
        ("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", None, 0.0, false),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", None, 0.0, false),
        (
            "aws-access-key-id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
            None,
            0.0,
            false,
        ),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", None, 0.0, false),
        ("gitlab-token", r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[0-9A-Za-z_-]{20,}", None, 0.0, false),
        (
            "slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
            None,
            0.0,
            false,
        ),
        ("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", None, 0.0, false),
        ("slack-app-token", r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}", None, 0.0, false),
        (
            "discord-webhook",
            r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
            None,
            0.0,
            false,
        ),
        ("telegram-bot-token", r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b", None, 0.0, false),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", None, 0.0, false),
        ("api-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", None, 0.0, false),
        ("groq-key", r"\bgsk_[A-Za-z0-9]{40,}\b", None, 0.0, false),
        ("xai-key", r"\bxai-[A-Za-z0-9]{60,}\b", None, 0.0, false),
        ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", None, 0.0, false),
        ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}\b", None, 0.0, false),
        ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", None, 0.0, false),
        ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", None, 0.0, false),
        ("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", None, 0.0, false),
        ("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", None, 0.0, false),
        ("twilio-key", r"\bSK[0-9a-fA-F]{32}\b", None, 0.0, false),
        ("mailgun-key", r"\bkey-[0-9a-zA-Z]{32}\b", None, 0.0, false),
        ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", None, 0.0, false),
        ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", None, 0.0, false),
        ("databricks-token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", None, 0.0, false),
        (
            "aws-secret-key",
            r#"(?i)(aws_secret_access_key|secret_access_key|secretaccesskey|aws_secret_key|secret)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
            Some(2),
            0.0,
            false,
        ),
        (
            "aws-session-token",
            r#"(?i)(aws_session_token|aws_security_token|sessiontoken)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{100,})"#,
            Some(2),
            0.0,
            false,
        ),
        ("bearer-token", r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/-]{20,}=*)", Some(2), 0.0, false),
        ("basic-auth", r"(?i)\b(authorization:\s*basic)\s+([A-Za-z0-9+/]{8,}=*)", Some(2), 0.0, false),
        // user:password@ in any URL.
        ("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@", Some(1), 0.0, false),
        ("secret-setting", SECRET_SETTING, Some(2), 0.0, false),
        // A bare AWS secret access key: 40 base64 characters of mixed case with high entropy
        // (a git or SHA-1 hash is lower-case hex and never counts).
        ("aws-secret-key", r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])", Some(1), 4.3, true),
    ];
    raw.iter()
        .filter_map(|(kind, pattern, value_group, min_entropy, mixed)| {
            // The patterns are constants checked by the tests; one that failed to compile would
            // be skipped rather than take the sidecar down.
            Regex::new(pattern).ok().map(|regex| Rule {
                kind,
                regex,
                value_group: *value_group,
                min_entropy: *min_entropy,
                mixed: *mixed,
            })
        })
        .collect()
});
