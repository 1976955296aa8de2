//! Secret redaction: AWS keys and session tokens, GitHub, Slack, OpenAI/Anthropic, Google and
//! Stripe tokens, bearer tokens and private key blocks are replaced in command output before the
//! model sees it, and counted.

use std::sync::LazyLock;

use regex::Regex;

/// Output with its secrets replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redacted {
    /// The text, secrets replaced by `[REDACTED:<kind>]`.
    pub text: String,
    /// How many secrets were replaced.
    pub count: usize,
}

/// A pattern; when `value_group` is set only that group is replaced (the key name stays).
struct Pattern {
    kind: &'static str,
    regex: Regex,
    value_group: Option<usize>,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let raw: &[(&str, &str, Option<usize>)] = &[
        ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", None),
        (
            "aws-secret-key",
            r#"(?i)(aws_secret_access_key|secret_access_key|secretaccesskey|aws_secret_key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
            Some(2),
        ),
        (
            "aws-session-token",
            r#"(?i)(aws_session_token|aws_security_token|sessiontoken)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{100,})"#,
            Some(2),
        ),
        ("aws-access-key-id", r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z0-9]{16}\b", None),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", None),
        ("slack-token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}", None),
        ("api-key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", None),
        ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", None),
        ("stripe-key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}\b", None),
        ("bearer-token", r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/-]{20,}=*)", Some(2)),
    ];
    raw.iter()
        .filter_map(|(kind, pattern, value_group)| {
            // The patterns are constants checked by the tests below; one that failed to compile
            // would be skipped rather than take the sidecar down.
            Regex::new(pattern).ok().map(|regex| Pattern { kind, regex, value_group: *value_group })
        })
        .collect()
});

/// Replaces every secret in `text`.
pub fn redact(text: &str) -> Redacted {
    let mut current = text.to_owned();
    let mut count = 0;
    for pattern in PATTERNS.iter() {
        if !pattern.regex.is_match(&current) {
            continue;
        }
        let replaced = pattern.regex.replace_all(&current, |caps: &regex::Captures<'_>| {
            count += 1;
            let whole = caps.get(0).map_or("", |m| m.as_str());
            match pattern.value_group.and_then(|g| caps.get(g)) {
                Some(value) => {
                    let start = value.start() - caps.get(0).map_or(0, |m| m.start());
                    format!("{}[REDACTED:{}]{}", &whole[..start], pattern.kind, &whole[start + value.len()..])
                }
                None => format!("[REDACTED:{}]", pattern.kind),
            }
        });
        current = replaced.into_owned();
    }
    Redacted { text: current, count }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(PATTERNS.len(), 10);
    }

    #[test]
    fn planted_secrets_are_redacted_and_counted() {
        let text = format!(
            "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n\
             aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\
             AWS_SESSION_TOKEN={}\n\
             token: ghp_{}\n\
             slack xoxb-123456789012-abcdefghij\n\
             OPENAI_API_KEY=sk-proj-{}\n\
             Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig\n\
             -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n\
             an ordinary line with AKIA in it and a sha 3f786850e387550fdab836ed7e6dc881de23001b\n",
            "FwoGZXIvYXdzE".repeat(10),
            "a1B2c3D4".repeat(5),
            "x9".repeat(16)
        );
        let redacted = redact(&text);
        expect_test::expect![[r#"
            AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]
            aws_secret_access_key = [REDACTED:aws-secret-key]
            AWS_SESSION_TOKEN=[REDACTED:aws-session-token]
            token: [REDACTED:github-token]
            slack [REDACTED:slack-token]
            OPENAI_API_KEY=[REDACTED:api-key]
            Authorization: Bearer [REDACTED:bearer-token]
            [REDACTED:private-key]
            an ordinary line with AKIA in it and a sha 3f786850e387550fdab836ed7e6dc881de23001b
        "#]]
        .assert_eq(&redacted.text);
        assert_eq!(redacted.count, 8);
        assert_eq!(redact("nothing secret here").count, 0);
    }
}
