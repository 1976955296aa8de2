//! Secret redaction, before any command output is stored or shown: the model's result, the
//! full output log in the state directory, the session store and the editor's tool cards all
//! get the redacted text.
//!
//! The rules follow the kinds of a well-kept secret-scanning rule list (gitleaks' rule set is
//! the reference): provider token formats with a fixed prefix, private key blocks (also without
//! their END line), JSON Web Tokens, credentials in URLs, values of secret-named settings
//! (`password=`, `DB_PASSWORD=`, `secret:`), and bare keys caught by their entropy (an AWS
//! secret access key on its own). Ordinary build and test output (hashes, UUIDs, lockfile
//! integrity strings) is checked not to trip them.

mod rules;
mod stream;

pub use stream::StreamRedactor;

/// Output with its secrets replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redacted {
    /// The text, secrets replaced by `[REDACTED:<kind>]`.
    pub text: String,
    /// How many secrets were replaced.
    pub count: usize,
}

/// Replaces every secret in `text`.
pub fn redact(text: &str) -> Redacted {
    let mut current = std::borrow::Cow::Borrowed(text);
    let mut count = 0;
    for rule in rules::RULES.iter() {
        if !rule.regex.is_match(&current) {
            continue;
        }
        let replaced = rule.regex.replace_all(&current, |caps: &regex::Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            let secret = rule.value_group.and_then(|g| caps.get(g)).or_else(|| caps.get(0));
            // Already replaced by a rule before this one: not a second secret.
            let name = rule.value_group.filter(|g| *g > 1).and_then(|_| caps.get(1)).map(|m| m.as_str());
            let fresh = |s: &regex::Match<'_>| !s.as_str().starts_with("[REDACTED:") && rule.accepts(name, s.as_str());
            let Some(secret) = secret.filter(fresh) else {
                return whole.to_owned();
            };
            count += 1;
            let offset = caps.get(0).map_or(0, |m| m.start());
            let (start, end) = (secret.start() - offset, secret.end() - offset);
            format!("{}[REDACTED:{}]{}", &whole[..start], rule.kind, &whole[end..])
        });
        if let std::borrow::Cow::Owned(text) = replaced {
            current = std::borrow::Cow::Owned(text);
        }
    }
    Redacted { text: current.into_owned(), count }
}

#[cfg(test)]
mod tests;
