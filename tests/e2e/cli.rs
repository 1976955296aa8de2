//! `tandem tool`: one call from the shell, exit status 0 / 1 / 2.

use std::process::Command;

use serde_json::Value;

use crate::support::{Res, tandem_bin};

fn run(dir: &std::path::Path, args: &[&str]) -> Res<(i32, Value, String)> {
    let out = Command::new(tandem_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("TANDEM_PROFILE")
        .output()
        .map_err(|e| e.to_string())?;
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Ok((out.status.code().unwrap_or(-1), json, String::from_utf8_lossy(&out.stderr).into_owned()))
}

#[test]
fn tool_command_exit_codes() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;

    let (code, json, _) = run(dir.path(), &["tool", "read", r#"{"file_path":"a.txt"}"#])?;
    assert_eq!((code, json["output"].as_str()), (0, Some("     1\talpha\n")));

    let (code, json, _) =
        run(dir.path(), &["tool", "edit", r#"{"file_path":"a.txt","old_string":"alpha","new_string":"beta"}"#])?;
    assert_eq!(code, 0, "{json}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap_or_default(), "beta\n");

    let (code, json, _) = run(dir.path(), &["tool", "read", r#"{"file_path":"../x"}"#])?;
    assert_eq!(code, 1);
    assert!(json["error"].as_str().is_some_and(|e| e.contains("outside the workspace")));

    for bad in [&["tool", "nope"][..], &["tool", "read", "{oops"], &["tool", "read", "[1]"], &["frobnicate"]] {
        let (code, _, stderr) = run(dir.path(), bad)?;
        assert_eq!(code, 2, "{bad:?}: {stderr}");
        assert!(!stderr.is_empty());
    }
    Ok(())
}

/// The repository stands on its own: no tracked file points at design notes outside it.
#[test]
fn the_repository_refers_to_nothing_outside_it() -> Res<()> {
    let root = crate::support::repo_root();
    let out = Command::new("git").arg("ls-files").current_dir(&root).output().map_err(|e| e.to_string())?;
    let files = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(files.lines().count() > 50, "git ls-files listed too little: {files}");
    // Spelled in pieces so this file does not match itself.
    let outside = [format!("../{}/", "shared"), format!("{}/design", "shared"), format!("PROTOCOL{}", ".md")];
    let mut found = Vec::new();
    for file in files.lines() {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else { continue };
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                found.push(format!("{file}:{}: {line}", n + 1));
            }
        }
    }
    assert!(found.is_empty(), "references outside the repository:\n{}", found.join("\n"));
    Ok(())
}

/// rustup's launcher for a missing component is on every Rust machine: `tandem doctor` tells it
/// apart from an installed rust-analyzer and says how to fix it.
#[test]
fn doctor_reports_a_launcher_only_rust_analyzer() -> Res<()> {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().map_err(|e| e.to_string())?;
    let rustup = bin.path().join("rustup");
    std::fs::write(
        &rustup,
        "#!/bin/sh\necho \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable'\" >&2\nexit 1\n",
    )
    .map_err(|e| e.to_string())?;
    std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&rustup, bin.path().join("rust-analyzer")).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(tandem_bin())
        .arg("doctor")
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.trim_start().starts_with("rust-analyzer")).unwrap_or_default();
    assert!(line.contains("broken") && line.contains("launcher only"), "{text}");
    assert!(line.contains("Unknown binary") && line.contains("rustup component add rust-analyzer"), "{line}");
    Ok(())
}
