//! `run_shell_script` and `run_python_script`: the script text is written to a file in the
//! workspace's state directory (`scripts/`, outside the workspace) and run with bash or python3, with `bash`'s limits, so that models need not
//! quote a multi-line program into one command line.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::bash::run_foreground;
use super::safety::{Verdict, classify};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// The whole script.
    script: String,
    /// Arguments passed to the script.
    #[serde(default)]
    args: Vec<String>,
    /// Seconds before the script and its children are killed (default 120, at most 600).
    #[schemars(range(min = 1, max = 600))]
    timeout: Option<u64>,
    /// Directory to run in, inside the workspace (default: the workspace root).
    working_dir: Option<String>,
}

/// Which interpreter a script tool uses.
#[derive(Clone, Copy)]
enum Language {
    Shell,
    Python,
}

const SHELL: &str = "Run a multi-line bash script (written to a file, then run with bash), with the same limits \
    as `bash`: timeout, capped output with the full log kept, secrets redacted, destructive commands refused.";
const PYTHON: &str = "Run a Python 3 script (written to a file, then run with python3), with the same limits as \
    `bash`: timeout, capped output with the full log kept, secrets redacted.";

tool!(pub(crate) ShellScript(Args) = Decl::new("run_shell_script", ToolGroup::Exec, SHELL)
    .aliases(&["shell_script"])
    .keywords(&["script", "bash", "multi-line"])
    .runs_commands(), |args, ctx| run_script(Language::Shell, args, ctx));

tool!(pub(crate) PythonScript(Args) = Decl::new("run_python_script", ToolGroup::Exec, PYTHON)
    .aliases(&["python"])
    .keywords(&["script", "python", "analysis"])
    .runs_commands(), |args, ctx| run_script(Language::Python, args, ctx));

/// `word` quoted for bash.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Runs `args.script` as a `language` script.
async fn run_script(language: Language, args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if args.script.trim().is_empty() {
        return Err(ToolError::new("`script` is empty"));
    }
    if let Language::Shell = language
        && let Verdict::Refused { reason } = classify(&args.script)
    {
        return Err(ToolError::new(format!("this script is refused: {reason}")).with("refused", true));
    }
    let dir = match &args.working_dir {
        Some(raw) => ctx.workspace.resolve(raw, &ctx.working_dir)?,
        None => ctx.working_dir.clone(),
    };
    let shown = match language {
        Language::Shell => args.script.clone(),
        Language::Python => format!("python3 <<'EOF'\n{}\nEOF", args.script.trim_end()),
    };
    let verdict = match (&language, classify(&args.script)) {
        (Language::Shell, Verdict::Refused { reason }) => Verdict::NeedsApproval { reason, destroys_data: false },
        (Language::Shell, verdict) => verdict,
        (Language::Python, _) => {
            Verdict::NeedsApproval { reason: "a Python script can do anything".to_owned(), destroys_data: false }
        }
    };
    let verdict = super::bash::in_other_repository(verdict, &args.script, &dir, ctx.workspace.root());
    let confinement = super::bash::confirm(&ctx, &shown, &dir, &verdict, false, false).await?;
    if let Language::Shell = language {
        // Run as the command line itself (its arguments set as `$1`…): what was classified
        // is exactly what runs, in the read-only sandbox when it only reads.
        let mut command = String::new();
        if !args.args.is_empty() {
            command.push_str("set --");
            for arg in &args.args {
                command.push(' ');
                command.push_str(&quote(arg));
            }
            command.push('\n');
        }
        command.push_str(&args.script);
        let title = format!("bash script ({} lines)", args.script.lines().count());
        return run_foreground(&ctx, &command, &title, &dir, args.timeout, &confinement).await;
    }
    let scripts = tandem_tool_api::state::state_dir(ctx.workspace.root(), "scripts")
        .map_err(|e| ToolError::new(e.to_string()))?;
    let (interpreter, extension) = match language {
        Language::Shell => ("bash", "sh"),
        Language::Python => ("python3", "py"),
    };
    let file = tempfile::Builder::new()
        .prefix("script-")
        .suffix(&format!(".{extension}"))
        .tempfile_in(&scripts)
        .map_err(|e| ToolError::new(format!("cannot create the script file: {e}")))?;
    std::fs::write(file.path(), &args.script).map_err(|e| ToolError::new(format!("cannot write the script: {e}")))?;
    let mut command = format!("{interpreter} {}", quote(&file.path().display().to_string()));
    for arg in &args.args {
        command.push(' ');
        command.push_str(&quote(arg));
    }
    let title = format!("{interpreter} script ({} lines)", args.script.lines().count());
    // The temporary file is removed when `file` drops, after the run.
    let result = run_foreground(&ctx, &command, &title, &dir, args.timeout, &confinement).await;
    drop(file);
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_text::BufferCache;

    use tandem_tool_api::{Registry, ToolConfig, ToolContext, Workspace};

    #[test]
    fn scripts_run_with_arguments_and_limits() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let workspace = Workspace::new(dir.path(), &[]).unwrap_or_else(|e| panic!("{e}"));
        let ctx = ToolContext::new(std::sync::Arc::new(workspace), std::sync::Arc::new(BufferCache::new()));
        let registry = Registry::new(crate::all(), ToolConfig::default());
        let runtime =
            tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
        let call = |name: &str, args: serde_json::Value| {
            runtime.block_on(registry.call(name, args, ctx.clone())).unwrap_or_else(|e| panic!("{e}"))
        };
        let shell = call(
            "run_shell_script",
            json!({"script": "set -e\nfor w in \"$@\"; do\n  echo \"arg: $w\"\ndone\necho 'it''s \"quoted\"'\n", "args": ["a b", "it's"]}),
        );
        assert_eq!(shell.output, "arg: a b\narg: it's\nits \"quoted\"\n", "{shell:?}");
        let python = call(
            "run_python_script",
            json!({"script": "import sys\nprint(sum(range(10)), sys.argv[1:])\n", "args": ["x"]}),
        );
        assert_eq!(python.output, "45 ['x']\n");
        let failing = call("run_python_script", json!({"script": "raise SystemExit(4)"}));
        assert_eq!(failing.metadata["exitCode"], json!(4));
        let refused = call("run_shell_script", json!({"script": "echo ok\nsudo rm -rf /tmp/x\n"}));
        assert!(refused.error.is_some_and(|e| e.starts_with("this script is refused")));
        let slow = call("run_python_script", json!({"script": "import time\ntime.sleep(30)", "timeout": 1}));
        assert_eq!(slow.metadata["timedOut"], json!(true));
        // Script files do not pile up.
        let left = std::fs::read_dir(tandem_tool_api::state::state_path(dir.path(), "scripts")).map(|d| d.count());
        assert_eq!(left.ok(), Some(0));
        assert!(!dir.path().join(".tandem").exists(), "nothing of Tandem's is left in the workspace");
    }
}
