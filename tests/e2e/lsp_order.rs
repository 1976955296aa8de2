//! Message order on the LSP door: a turn's `tandem/session/update`s reach the editor before the
//! response that ends it, and a mode change's `current_mode_update` before the `setMode`
//! response, also when every core is busy (the writer gets no head start over the responder).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar};

/// Prompts sent in the stress test.
const PROMPTS: usize = 1000;
/// Prompts per session (a session's history grows with each turn, and so does each request).
const PROMPTS_PER_SESSION: usize = 100;

/// Busy threads on every core until dropped.
struct CpuStress {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuStress {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let threads = (0..cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for CpuStress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            thread.join().ok();
        }
    }
}

fn sidecar(root: &Path, provider: &FakeProvider) -> Res<Sidecar> {
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".tandem/config.toml"), "[provider]\nmax_retries = 0\n").map_err(|e| e.to_string())?;
    let base = provider.base_url();
    // Order is what is tested here: no checkpoints (two snapshots a turn, a thousand turns).
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_CHECKPOINTS", "off"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn new_session(sidecar: &mut Sidecar) -> Res<String> {
    let result = sidecar.request("tandem/session/new", json!({}))?;
    result["sessionId"].as_str().map(str::to_owned).ok_or_else(|| format!("no sessionId in {result}"))
}

/// The updates of `session` among `notifications`.
fn updates_of<'a>(notifications: &'a [Value], session: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    notifications
        .iter()
        .filter(move |n| n["method"] == "tandem/session/update" && n["params"]["sessionId"] == session)
        .map(|n| &n["params"]["update"])
}

fn agent_text<'a>(updates: impl Iterator<Item = &'a Value>) -> String {
    updates
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[test]
fn a_prompt_response_never_overtakes_its_updates_under_cpu_stress() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let script = (0..PROMPTS).map(|i| Turn::reply(format!("reply {i}."))).collect();
    let provider = FakeProvider::start_blocking(script);
    let mut sidecar = sidecar(dir.path(), &provider)?;
    let _stress = CpuStress::start();
    let mut session = String::new();
    for i in 0..PROMPTS {
        if i % PROMPTS_PER_SESSION == 0 {
            session = new_session(&mut sidecar)?;
        }
        let before = sidecar.notifications.len();
        let result = sidecar.request(
            "tandem/session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": format!("prompt {i}") }] }),
        )?;
        assert_eq!(result["stopReason"], json!("end_turn"), "prompt {i}: {result}");
        // Everything the turn said arrived before its response: the whole reply, no more, no less.
        let text = agent_text(updates_of(&sidecar.notifications[before..], &session));
        assert_eq!(text, format!("reply {i}."), "prompt {i}: the response overtook the turn's updates");
    }
    assert!(sidecar.shutdown()?.success());
    Ok(())
}

#[test]
fn a_set_mode_response_follows_its_mode_update() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(Vec::new());
    let mut sidecar = sidecar(dir.path(), &provider)?;
    let _stress = CpuStress::start();
    let session = new_session(&mut sidecar)?;
    for (i, mode) in ["plan", "auto-edit", "default", "yolo"].iter().cycle().take(200).enumerate() {
        let before = sidecar.notifications.len();
        sidecar.request("tandem/session/setMode", json!({ "sessionId": session, "modeId": mode }))?;
        let modes: Vec<&Value> = updates_of(&sidecar.notifications[before..], &session)
            .filter(|u| u["sessionUpdate"] == "current_mode_update")
            .map(|u| &u["currentModeId"])
            .collect();
        assert_eq!(modes, [&json!(mode)], "setMode {i} ({mode}): the response overtook the mode update");
    }
    assert!(sidecar.shutdown()?.success());
    Ok(())
}

/// A request's log lines carry its own span only: a tool call's span (`tool{name=…}`) is held
/// by the call, never by the thread that polled it, so what runs meanwhile on that thread (the
/// read loop, other requests) is not logged as part of the call.
#[test]
fn a_running_tool_call_does_not_lend_its_span_to_concurrent_work() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = dir.path().join("tandem.log");
    let log_arg = format!("--log-file={}", log.display());
    let mut sidecar = Sidecar::spawn_with(dir.path(), &[("TANDEM_LOG", "tandem=debug")], &[&log_arg])?;
    sidecar.initialize(Value::Null)?;
    let slow =
        sidecar.send_request("tandem/tools/call", json!({ "name": "bash", "arguments": { "command": "sleep 1" } }))?;
    // While the command runs: notifications and requests, several times so that each worker
    // thread of the runtime is likely to handle some of them.
    for i in 0..20 {
        sidecar.open(&format!("f{i}.txt"), "text\n")?;
        sidecar.request("tandem/tools/list", json!({}))?;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let outcome = sidecar.wait_response(slow)?;
    assert!(outcome.is_ok_and(|r| r["error"].is_null()), "the command failed");
    assert!(sidecar.shutdown()?.success());
    let text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
    let opened: Vec<&str> = text.lines().filter(|l| l.contains("didOpen")).collect();
    assert_eq!(opened.len(), 20, "every didOpen is logged:\n{text}");
    let inside: Vec<&str> = text.lines().filter(|l| l.contains("tool{") && !l.contains("bash")).collect();
    assert!(inside.is_empty(), "logged inside the tool call's span:\n{}", inside.join("\n"));
    let inside: Vec<&str> = opened.iter().copied().filter(|l| l.contains("tool{")).collect();
    assert!(inside.is_empty(), "didOpen logged inside the tool call's span:\n{}", inside.join("\n"));
    Ok(())
}

/// `$/cancelRequest` of a prompt cancels the turn as `tandem/session/cancel` does: the turn
/// ends, and its response (`cancelled`) still follows its updates.
#[test]
fn cancel_request_of_a_prompt_ends_the_turn() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("Thinking...").stall_after(1, std::time::Duration::from_secs(60)),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider)?;
    let session = new_session(&mut sidecar)?;
    let id = sidecar.send_request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "go" }] }),
    )?;
    sidecar.pump_until(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")?;
    sidecar.notify("$/cancelRequest", json!({ "id": id }))?;
    let result = sidecar.wait_response(id)?.map_err(|e| e.to_string())?;
    assert_eq!(result["stopReason"], json!("cancelled"), "{result}");
    assert_eq!(agent_text(updates_of(&sidecar.notifications, &session)), "Thinking...");
    assert!(sidecar.shutdown()?.success());
    Ok(())
}
