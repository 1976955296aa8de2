//! Images through the doors: `tandem run --image`, the LSP door's `tandem/session/prompt` (an
//! image block naming a file) and ACP (`promptCapabilities.image`, image content blocks), each
//! reaching the scripted provider, which checks the documented format of its endpoint and
//! answers a malformed image with HTTP 400; and the refusal for a model without vision.

use std::process::{Command, Output};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar, tandem_bin};

/// A 1 × 1 PNG.
pub(crate) const PNG: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\xda\x63\x64\xf8\xcf\x50\x0f\x00\x03\x86\x01\x80\x5a\x34\x7d\x6b\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

/// [`PNG`] as base64.
pub(crate) const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The images of every request the provider got, checked against its format.
pub(crate) fn sent_images(provider: &FakeProvider) -> Res<Vec<Vec<u8>>> {
    let mut all = Vec::new();
    for request in provider.requests() {
        all.extend(request.images()?.into_iter().map(|image| image.bytes));
    }
    Ok(all)
}

fn run(dir: &std::path::Path, provider: &FakeProvider, kind: &str, model: &str, args: &[&str]) -> Res<Output> {
    Command::new("setsid")
        .arg(tandem_bin())
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env_remove("TANDEM_MODE")
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", kind)
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", model)
        .output()
        .map_err(|e| e.to_string())
}

#[test]
fn run_image_reaches_each_provider_in_its_format_and_a_model_without_vision_refuses_it_by_name() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("shot.png"), PNG).map_err(|e| e.to_string())?;
    for (kind, model) in [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5")] {
        let provider = FakeProvider::start_blocking(vec![Turn::reply("A single pixel.")]);
        let out = run(dir.path(), &provider, kind, model, &["--image", "shot.png", "what is in this picture?"])?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{kind}: {stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("A single pixel."));
        assert_eq!(sent_images(&provider)?, vec![PNG.to_vec()], "{kind}");
        let body = provider.requests()[0].body.to_string();
        let shape = if kind == "openai" { "\"image_url\"" } else { "\"source\":{\"data\"" };
        assert!(body.contains(shape) || body.contains("\"type\":\"base64\""), "{kind}: {body}");
    }
    // A model without vision: refused before anything is sent, naming the model.
    let provider = FakeProvider::start_blocking(vec![Turn::reply("never")]);
    let out = run(dir.path(), &provider, "openai", "scripted", &["--image", "shot.png", "what is this?"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the model `scripted` does not take images"), "{stderr}");
    assert!(provider.requests().is_empty(), "nothing reached the provider");
    // A file that is not an image is refused by name, and its bytes go nowhere.
    std::fs::write(dir.path().join("notes.png"), "secret notes").map_err(|e| e.to_string())?;
    let out = run(dir.path(), &provider, "openai", "gpt-4o", &["--image", "notes.png", "what is this?"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("notes.png is not an image Tandem can send"), "{stderr}");
    assert!(provider.requests().is_empty());
    Ok(())
}

#[test]
fn the_lsp_door_takes_an_image_block_naming_a_file_and_read_of_a_png_returns_it() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::write(root.join("shot.png"), PNG).map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "shot.png" })),
        Turn::reply("Both are one pixel."),
    ]);
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        &root,
        &[("TANDEM_PROVIDER", "anthropic"), ("TANDEM_BASE_URL", &base), ("TANDEM_MODEL", "claude-sonnet-4-5")],
    )?;
    sidecar.initialize(json!({}))?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    let uri = format!("file://{}", root.join("shot.png").display());
    let result = sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [
            { "type": "text", "text": "compare this with shot.png" },
            { "type": "image", "mimeType": "image/png", "uri": uri },
        ] }),
    )?;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let requests = provider.requests();
    let first = requests[0].images()?;
    assert_eq!(first.len(), 1);
    assert!(!first[0].in_tool_result && first[0].bytes == PNG);
    // The second request: the prompt's image, and `read`'s inside its tool result.
    let second = requests[1].images()?;
    assert_eq!(second.iter().map(|i| i.in_tool_result).collect::<Vec<_>>(), [false, true]);
    assert!(second.iter().all(|i| i.bytes == PNG));
    // `tandem/tools/call read` of the image: its description, and the image as an attachment.
    let read = sidecar.call("read", json!({ "file_path": "shot.png" }))?;
    assert!(read["output"].as_str().is_some_and(|o| o.contains("PNG, 1×1 px")), "{read}");
    assert_eq!(read["attachments"][0]["type"], "image");
    assert_eq!(read["attachments"][0]["data"], PNG_BASE64);
    sidecar.shutdown()?;
    Ok(())
}

fn acp_scenario(images: bool) -> Value {
    let prompt = if images {
        json!({ "op": "prompt", "text": "what is this?", "images": [{ "data": PNG_BASE64, "mimeType": "image/png" }] })
    } else {
        json!({ "op": "prompt", "text": "hello" })
    };
    json!({ "caps": { "fs": false, "terminal": false }, "steps": [{ "op": "new" }, prompt] })
}

#[test]
fn acp_advertises_images_for_a_vision_model_and_its_image_blocks_reach_the_provider() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("One pixel.")]);
    let mut scenario = acp_scenario(true);
    scenario["env"] = json!({ "TANDEM_MODEL": "gpt-4o" });
    let report = crate::acp::run_client(&root, &provider, scenario)?;
    assert_eq!(report["init"]["agentCapabilities"]["promptCapabilities"]["image"], true, "{}", report["init"]);
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{}", report["results"]);
    assert_eq!(sent_images(&provider)?, vec![PNG.to_vec()]);
    // A model without vision: not advertised, and an image is refused naming the model.
    let provider = FakeProvider::start_blocking(vec![Turn::reply("never")]);
    let report = crate::acp::run_client(&root, &provider, acp_scenario(true))?;
    assert_eq!(report["init"]["agentCapabilities"]["promptCapabilities"]["image"], false);
    let error = report["results"][1]["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("the model `scripted` does not take images"), "{}", report["results"]);
    assert!(provider.requests().is_empty());
    Ok(())
}

#[test]
fn tandem_mcp_returns_a_read_image_as_mcp_image_content() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::write(root.join("shot.png"), PNG).map_err(|e| e.to_string())?;
    let mut mcp = crate::support::McpStdio::start(&root, &["mcp"])?;
    mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "read", "arguments": {"file_path": "shot.png"}}}))?;
    let answer = mcp.answer(2)?;
    let content = &answer["result"]["content"];
    assert!(content[0]["text"].as_str().is_some_and(|t| t.contains("PNG, 1×1 px")), "{answer}");
    assert_eq!(content[1], json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}), "{answer}");
    mcp.close()
}
