//! `repo_map` through the doors: `tandem tool` (the shell) and `tandem/tools/call` (the LSP
//! door, where a document open in the editor, unsaved text included, is what is mapped and
//! ranks first).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Res, Sidecar, tandem_bin};

fn write(root: &Path, files: &[(&str, &str)]) -> Res<()> {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| e.to_string())?;
    }
    Ok(())
}

const TREE: &[(&str, &str)] = &[
    ("src/upload.rs", "pub struct Uploader;\nimpl Uploader {\n    pub fn retry_failed_uploads(&self) {}\n}\n"),
    ("src/main.rs", "mod upload;\nfn main() { upload::Uploader.retry_failed_uploads(); }\n"),
    ("web/cart.ts", "export class Cart {\n  checkout(): void {}\n}\n"),
    ("tools/release.py", "def publish_wheels():\n    pass\n"),
];

#[test]
fn tandem_tool_maps_the_files_a_query_is_about() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws");
    write(&root, TREE)?;
    let state = dir.path().join("state");
    let run = |args: &str| -> Res<Value> {
        let out = Command::new(tandem_bin())
            .args(["tool", "repo_map", args, "--json"])
            .current_dir(&root)
            .env("TANDEM_STATE_HOME", &state)
            .env("TANDEM_TRUST_WORKSPACE", "1")
            .env_remove("TANDEM_PROFILE")
            .output()
            .map_err(|e| e.to_string())?;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    };
    let result = run(r#"{"query": "retry failed uploads", "max_tokens": 200}"#)?;
    let output = result["output"].as_str().unwrap_or_default();
    assert!(
        output.starts_with("src/upload.rs:\n⋮\n│pub struct Uploader;\n│impl Uploader {\n│    pub fn retry_failed_uploads(&self) {}\n⋮\n"),
        "{result}"
    );
    assert_eq!(result["metadata"]["files"][0]["path"], json!("src/upload.rs"), "{result}");
    assert!(result["metadata"]["tokens"].as_u64().is_some_and(|t| t <= 200), "{result}");
    // The cache is in the state directory, never in the workspace; a second process reads no file.
    assert!(!root.join(".tandem").exists());
    let again = run(r#"{"query": "checkout cart", "paths": ["web/**"]}"#)?;
    assert_eq!(
        again["metadata"]["files"],
        json!([{"path": "web/cart.ts", "score": again["metadata"]["files"][0]["score"]}])
    );
    Ok(())
}

#[test]
fn the_lsp_door_maps_what_the_editor_has_open() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws");
    write(&root, TREE)?;
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    sidecar.open("tools/release.py", "def publish_wheels():\n    pass\ndef sign_artifacts():\n    pass\n")?;
    let result = sidecar.call("repo_map", json!({}))?;
    assert_eq!(result["error"], Value::Null, "{result}");
    assert_eq!(result["metadata"]["files"][0]["path"], json!("tools/release.py"), "{result}");
    assert!(result["output"].as_str().is_some_and(|o| o.contains("│def sign_artifacts():")), "{result}");
    assert!(sidecar.shutdown()?.success());
    Ok(())
}
