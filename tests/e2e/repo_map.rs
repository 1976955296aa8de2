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

#[test]
fn an_mcp_client_gets_the_map() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    write(dir.path(), TREE)?;
    let calls = json!([{"name": "repo_map", "arguments": {"query": "retry failed uploads", "max_tokens": 200}}]);
    let out = crate::mcp::mcp_client(dir.path(), false, calls)?;
    assert!(out["tools"].as_array().into_iter().flatten().any(|t| t["name"] == "repo_map"), "{out}");
    let result = &out["results"][0];
    assert_eq!(result["isError"], json!(false), "{out}");
    assert!(result["text"].as_str().unwrap_or_default().starts_with("src/upload.rs:\n⋮\n"), "{out}");
    Ok(())
}

/// Over ACP the map reaches the model twice: in the first request of the session (`[agent]
/// repo_map = true`), ranked for the first prompt, and as the `repo_map` tool's result.
#[test]
fn over_acp_the_first_request_carries_the_map_and_the_model_can_ask_for_more() -> Res<()> {
    use tandem_fake_provider::{FakeProvider, Turn};
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    write(&root, TREE)?;
    let config = "[tools]\nprofile = \"full\"\n[agent]\nrepo_map = true\n[provider]\nmax_retries = 2\n";
    write(&root, &[(".tandem/config.toml", config)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "repo_map", json!({ "query": "checkout cart" })),
        Turn::reply("The cart is in web/cart.ts."),
    ]);
    let report = crate::acp::run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": false, "terminal": false },
            "permissions": [],
            "steps": [{ "op": "new" }, { "op": "prompt", "text": "where do we retry failed uploads?" }],
        }),
    )?;
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", report["results"]);
    let requests = provider.requests();
    let first = requests.first().ok_or("no request")?.body.to_string();
    let map_at = first.find("<repo-map>").ok_or_else(|| format!("no map in the first request: {first}"))?;
    assert!(first[map_at..].contains("src/upload.rs"), "{first}");
    let results = crate::acp::tool_results(&provider);
    assert!(results.iter().any(|r| r.starts_with("web/cart.ts:\n⋮\n")), "{results:?}");
    Ok(())
}
