//! Writing an "always" answer into the person's configuration as a rule they can read and
//! edit: `[permissions] allow = [..., "bash(npm test:*)"]`, the rest of the file kept as it was
//! (comments, order, formatting).

use std::path::Path;

use crate::rule::Action;

/// Why a rule could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The file could not be read or written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or `[permissions]` is not a table of arrays.
    #[error("cannot add a rule to {path}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
}

/// Adds `rule` to the `action` list of `[permissions]` in the TOML file at `path` (created
/// with its directory when missing); a rule already listed is not added twice. The file is
/// replaced atomically (a temporary file in the same directory, then a rename).
pub fn add_rule(path: &Path, action: Action, rule: &str) -> Result<(), PersistError> {
    let shown = path.display().to_string();
    let io = |source| PersistError::Io { path: shown.clone(), source };
    let invalid = |why: String| PersistError::Invalid { path: shown.clone(), why };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(io(err)),
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
    let table = doc
        .entry("permissions")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| invalid("`permissions` is not a table".to_owned()))?;
    let list = table
        .entry(action.as_str())
        .or_insert(toml_edit::Item::Value(toml_edit::Value::Array(toml_edit::Array::new())))
        .as_array_mut()
        .ok_or_else(|| invalid(format!("`permissions.{}` is not an array", action.as_str())))?;
    if list.iter().any(|v| v.as_str() == Some(rule)) {
        return Ok(());
    }
    list.push(rule);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let temp = dir.join(format!(".config.toml.{}.tmp", std::process::id()));
    std::fs::write(&temp, doc.to_string()).map_err(io)?;
    std::fs::rename(&temp, path).map_err(|err| {
        std::fs::remove_file(&temp).ok();
        io(err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_joins_the_list_and_the_rest_of_the_file_stays() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("tandem/config.toml");
        add_rule(&path, Action::Allow, "bash(npm test:*)")?;
        assert_eq!(std::fs::read_to_string(&path)?, "[permissions]\nallow = [\"bash(npm test:*)\"]\n");
        std::fs::write(
            &path,
            "# mine\nmode = \"default\"\n\n[permissions]\ndeny = [\"read(.env)\"] # never\nallow = [\"bash(ls:*)\"]\n",
        )?;
        add_rule(&path, Action::Allow, "bash(cargo build:*)")?;
        add_rule(&path, Action::Allow, "bash(cargo build:*)")?;
        expect_test::expect![[r#"
            # mine
            mode = "default"

            [permissions]
            deny = ["read(.env)"] # never
            allow = ["bash(ls:*)", "bash(cargo build:*)"]
        "#]]
        .assert_eq(&std::fs::read_to_string(&path)?);
        std::fs::write(&path, "permissions = 3\n")?;
        assert!(add_rule(&path, Action::Allow, "x").is_err());
        Ok(())
    }
}
