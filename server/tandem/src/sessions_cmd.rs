//! `tandem sessions`: the stored sessions of the current directory's project, out of the
//! process. `list` shows them; `export ID|last --format markdown|json` prints one (the JSON form
//! is what `import` takes back); `import FILE` stores an exported session to continue with
//! `tandem run --session ID`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use tandem_agent::Store;

use crate::workbench::Root;

/// The export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: prompts, answers and tool calls in order, long outputs folded.
    Markdown,
    /// For scripts and `tandem sessions import`: the transcript and the records.
    Json,
}

fn store_of(root: Option<PathBuf>) -> anyhow::Result<(Store, PathBuf)> {
    let (root, _) = Root::from_cli(root)?.resolve()?;
    Ok((Store::in_workspace(&root), root))
}

/// `last`: the most recently changed session; anything else is an id.
fn resolve(store: &Store, id: &str) -> anyhow::Result<String> {
    if id != "last" {
        return Ok(id.to_owned());
    }
    store.list().into_iter().next().map(|s| s.session_id).context("there is no stored session in this project yet")
}

fn finish(command: &str, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem sessions {command}: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tandem sessions list`.
pub fn list(root: Option<PathBuf>, json: bool) -> ExitCode {
    finish(
        "list",
        (|| {
            let (store, _) = store_of(root)?;
            crate::stdout::listing(&store.list(), json, "no stored sessions in this project", |s| {
                let (updated, title) = (s.updated_at.as_deref(), s.title.as_deref());
                format!("{}  {}  {}", s.session_id, updated.unwrap_or_default(), title.unwrap_or("(no prompt)"))
            })?;
            Ok(())
        })(),
    )
}

/// `tandem sessions export ID|last --format F`.
pub fn export(root: Option<PathBuf>, id: &str, format: Format) -> ExitCode {
    finish(
        "export",
        (|| {
            let (store, _) = store_of(root)?;
            let id = resolve(&store, id)?;
            let export = store.export(&id).map_err(anyhow::Error::msg)?;
            match format {
                Format::Json => crate::stdout::line(&serde_json::to_string_pretty(&export)?),
                Format::Markdown => crate::stdout::text(&tandem_agent::export_markdown(&export)),
            }
            Ok(())
        })(),
    )
}

/// `tandem sessions import FILE` (`-`: stdin).
pub fn import(root: Option<PathBuf>, file: &Path) -> ExitCode {
    finish(
        "import",
        (|| {
            let (store, root) = store_of(root)?;
            let text = if file == Path::new("-") {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
            };
            let export: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON (export with --format json)", file.display()))?;
            if !export.is_object() {
                bail!("{} is not an exported session", file.display());
            }
            let id = store.import(&export, &root).map_err(anyhow::Error::msg)?;
            crate::stdout::line(&id);
            eprintln!("tandem: imported as session {id}; continue it with `tandem run --session {id}`");
            Ok(())
        })(),
    )
}
