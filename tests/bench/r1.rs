//! R1: the approval latency the diagnostics preview (review with foresight) adds, per server:
//! the time from a `tandem/session/prompt` whose scripted model proposes an edit to the arrival
//! of its `tandem/session/requestPermission`, with previews on (the default `[review]
//! preview_timeout_ms`) against previews off (`preview_timeout_ms = 0`), interleaved; against
//! the same server's edit → fresh diagnostics time measured in the same run (P7's fixtures,
//! servers and edits).
//!
//! The preview wait is fixed when a sidecar starts, so the two sides are two warm sidecars on
//! two copies of the fixture, asked in turn (the side asked first alternates). Every proposal
//! is rejected, so the files never change; each one differs from the others (a numbered comment
//! line), so none is answered from what a server said about an identical earlier one.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::p7::{CASES, Case, call_ok, copy_fixture, installed, server_path};
use crate::support::{PermissionReply, Res, Sidecar};
use crate::{NOT_AVAILABLE, Plan, Row, describe, fmt_duration, median};

/// Previews off: the baseline.
const OFF: &str = "[review]\npreview_timeout_ms = 0\n";

/// A file no server serves, in every copy of a fixture.
const NOTES: &str = "notes.txt";

/// One side of the comparison: a warm sidecar with a scripted model.
struct Side {
    _dir: tempfile::TempDir,
    root: PathBuf,
    provider: FakeProvider,
    sidecar: Sidecar,
    calls: usize,
}

impl Side {
    /// A sidecar on a fresh copy of the case's fixture with `review` appended to its settings
    /// (empty: the defaults).
    fn start(case: &Case, review: &str) -> Res<Self> {
        let (dir, root) = copy_fixture(case.fixture)?;
        let config = root.join(".tandem/config.toml");
        let mut toml = std::fs::read_to_string(&config).map_err(|e| e.to_string())?;
        toml.push_str("[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\nconnect_timeout_secs = 2\n");
        toml.push_str(review);
        std::fs::write(&config, toml).map_err(|e| e.to_string())?;
        std::fs::write(root.join(NOTES), "first\nsecond\n").map_err(|e| e.to_string())?;
        let provider = FakeProvider::start_blocking(Vec::new());
        let base = provider.base_url();
        let path = server_path();
        let mut sidecar = Sidecar::spawn(
            &root,
            &[
                ("PATH", path.as_str()),
                ("TANDEM_PROVIDER", "openai"),
                ("TANDEM_BASE_URL", &base),
                ("TANDEM_MODEL", "scripted"),
                ("TANDEM_MODE", "default"),
            ],
        )?;
        sidecar.initialize(json!({}))?;
        Ok(Self { _dir: dir, root, provider, sidecar, calls: 0 })
    }

    /// Starts the case's server and lets it load the project (as P7 does).
    fn warm_server(&mut self, case: &Case) -> Res<()> {
        let text = std::fs::read_to_string(self.root.join(case.file)).map_err(|e| e.to_string())?;
        let line_text = text.lines().nth(case.line as usize).unwrap_or_default();
        let column = line_text.find(case.needle).ok_or("needle not on its line")? as u32;
        let args =
            json!({ "operation": "references", "file_path": case.file, "line": case.line + 1, "column": column + 1 });
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let out = call_ok(&mut self.sidecar, "lsp", args.clone())?;
            if out["metadata"]["count"].as_u64().unwrap_or(0) >= 2 || Instant::now() > deadline {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// One prompt whose model proposes replacing `old` with `new` in `file`: the time from the
    /// prompt to the permission request, and that request's params. The proposal is rejected.
    /// Each ask has a session of its own (a session stops repeating a call that keeps failing).
    fn ask(&mut self, file: &str, old: &str, new: &str) -> Res<(Duration, Value)> {
        self.calls += 1;
        let result = self.sidecar.request("tandem/session/new", json!({}))?;
        let session = result["sessionId"].clone();
        let edit = json!({ "file_path": file, "old_string": old, "new_string": new });
        self.provider.push(Turn::new().tool_call(format!("call_{}", self.calls), "edit", edit));
        self.provider.push(Turn::reply("Left it."));
        self.sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
        let params = json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "change it" }] });
        let start = Instant::now();
        let id = self.sidecar.send_request("tandem/session/prompt", params)?;
        let mut asked = None;
        let result = loop {
            let message = self.sidecar.next_message()?;
            if asked.is_none() && message["method"] == "tandem/session/requestPermission" {
                asked = Some((start.elapsed(), message["params"].clone()));
            }
            if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
                if let Some(error) = message.get("error") {
                    return Err(format!("tandem/session/prompt failed: {error}"));
                }
                break message["result"].clone();
            }
            self.sidecar.dispatch(message)?;
        };
        asked.ok_or_else(|| {
            let updates = self.sidecar.session_updates();
            let last = updates.iter().rev().take(4).collect::<Vec<_>>();
            format!(
                "no permission was asked for the edit of {file}: the turn ended with {result}; last updates {last:?}"
            )
        })
    }
}

/// The preview's status in a permission request (`"none"`: no preview).
fn status(params: &Value) -> String {
    params.get("diagnostics").map_or_else(|| "none".to_owned(), |d| d["status"].as_str().unwrap_or("?").to_owned())
}

/// `new` with a comment line of ask `n` before it, in the file's language (a plain line for
/// text): every proposal is a text the server has not seen, so no ask is answered from what a
/// server said about an earlier, identical one.
fn numbered(file: &str, new: &str, n: usize) -> String {
    let indent: String = new.chars().take_while(|c| c.is_whitespace() && *c != '\n').collect();
    let marker = match file.rsplit('.').next() {
        Some("py") => "# ",
        Some("txt") => "",
        _ => "// ",
    };
    format!("{indent}{marker}ask {n}\n{new}")
}

/// `a` − `b`, signed, formatted.
fn fmt_signed(a: Duration, b: Duration) -> String {
    if a >= b { fmt_duration(a - b) } else { format!("−{}", fmt_duration(b - a)) }
}

/// Times `iterations` interleaved asks on both sides (after `warmup` untimed ones each), the
/// side asked first alternating; checks that the off side never carries a preview.
fn interleaved(
    on: &mut Side,
    off: &mut Side,
    (file, old, new): (&str, &str, &str),
    warmup: usize,
    iterations: usize,
    mut between: impl FnMut(&mut Side, usize) -> Res<()>,
) -> Res<(Vec<Duration>, Vec<Duration>, Vec<String>)> {
    for w in 0..warmup {
        let new = numbered(file, new, iterations + w);
        on.ask(file, old, &new)?;
        off.ask(file, old, &new)?;
    }
    let (mut on_times, mut off_times, mut statuses) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..iterations {
        let new = &numbered(file, new, i);
        let mut ask_on = |on: &mut Side| -> Res<()> {
            let (elapsed, params) = on.ask(file, old, new).map_err(|e| format!("ask {i}, previews on: {e}"))?;
            on_times.push(elapsed);
            statuses.push(status(&params));
            Ok(())
        };
        let mut ask_off = |off: &mut Side| -> Res<()> {
            let (elapsed, params) = off.ask(file, old, new).map_err(|e| format!("ask {i}, previews off: {e}"))?;
            if params.get("diagnostics").is_some() {
                return Err(format!("previews are off, yet the request carried one: {params}"));
            }
            off_times.push(elapsed);
            Ok(())
        };
        if i % 2 == 0 {
            ask_on(on)?;
            ask_off(off)?;
        } else {
            ask_off(off)?;
            ask_on(on)?;
        }
        between(on, i)?;
    }
    Ok((on_times, off_times, statuses))
}

pub(crate) fn r1(plan: &Plan) -> Res<Vec<Row>> {
    println!(
        "\nR1: approval latency added by the diagnostics preview: prompt → requestPermission with previews on (default wait) vs `[review] preview_timeout_ms = 0`, interleaved; against edit → fresh diagnostics"
    );
    let iterations = if plan.quick { 3 } else { 20 };
    let edits = if plan.quick { 1 } else { 5 };
    let mut rows = Vec::new();
    for case in CASES {
        if !installed(case.command[0]) {
            if case.server == "rust-analyzer" {
                eprintln!("!!!!! R1: rust-analyzer is not installed; skipped");
                continue;
            }
            return Err(format!("{} is not installed (npm install / scripts/test's venv)", case.command[0]));
        }
        let flycheck = case.server == "rust-analyzer";
        let mut on = Side::start(case, "")?;
        let mut off = Side::start(case, OFF)?;
        on.warm_server(case).map_err(|e| format!("{}: starting the server: {e}", case.server))?;
        // Edit → fresh diagnostics on the previewing side's warm server, before any preview (as
        // P7 measures it).
        let mut fresh = Vec::new();
        let mut edit_pair = |side: &mut Side, i: usize| -> Res<()> {
            if i >= edits {
                return Ok(());
            }
            for (old, new) in [(case.break_old, case.break_new), (case.break_new, case.break_old)] {
                let start = Instant::now();
                let result = call_ok(
                    &mut side.sidecar,
                    "edit",
                    json!({ "file_path": case.file, "old_string": old, "new_string": new }),
                )
                .map_err(|e| format!("edit → fresh diagnostics, pair {i}: {e}"))?;
                let elapsed = start.elapsed();
                let status = &result["metadata"]["diagnostics"][case.file]["status"];
                if status != &json!("fresh") {
                    return Err(format!("{}: diagnostics after an edit were {status}", case.server));
                }
                fresh.push(elapsed);
            }
            Ok(())
        };
        for i in 0..edits {
            edit_pair(&mut on, i)?;
        }
        let edit = (case.file, case.break_old, case.break_new);
        let (mut on_times, mut off_times, statuses) =
            interleaved(&mut on, &mut off, edit, 2, iterations, |_, _| Ok(()))
                .map_err(|e| format!("{}: {e}", case.server))?;
        let (on_med, off_med, fresh_med) = (median(&mut on_times), median(&mut off_times), median(&mut fresh));
        let added = on_med.saturating_sub(off_med);
        let ready = statuses.iter().filter(|s| *s == "ready").count();
        println!("  {}: previews on  {}", case.server, describe(&mut on_times));
        println!("  {}: previews off {}", case.server, describe(&mut off_times));
        println!(
            "  {}: added {} (medians), edit → fresh diagnostics {}; preview statuses {statuses:?}",
            case.server,
            fmt_signed(on_med, off_med),
            describe(&mut fresh)
        );
        rows.push(Row {
            id: "R1",
            what: format!("{} prompt → permission, preview on vs off", case.server),
            ours: describe(&mut on_times),
            peer: format!("off {}", describe(&mut off_times)),
            ratio: format!("{:.2}×", on_med.as_secs_f64() / off_med.as_secs_f64().max(1e-9)),
            goal: "reported",
            pass: true,
        });
        if flycheck {
            // The server checks saved files only: the preview says so at once, and tells nothing.
            let honest = statuses.iter().all(|s| s == "notReady");
            if !honest {
                return Err(format!("{}: expected previews that are not available, got {statuses:?}", case.server));
            }
            rows.push(Row {
                id: "R1",
                what: format!("{} preview: not available (saved files only)", case.server),
                ours: format!("added {}", fmt_signed(on_med, off_med)),
                peer: format!("fresh diagnostics {}", fmt_duration(fresh_med)),
                ratio: "—".into(),
                goal: NOT_AVAILABLE,
                pass: false,
            });
        } else {
            let ratio = added.as_secs_f64() / fresh_med.as_secs_f64().max(1e-9);
            rows.push(Row {
                id: "R1",
                what: format!("{} added latency (ready {ready}/{})", case.server, statuses.len()),
                ours: fmt_signed(on_med, off_med),
                peer: format!("fresh diagnostics {}", fmt_duration(fresh_med)),
                ratio: format!("{ratio:.2}×"),
                goal: "≤ fresh diagnostics + 10%, all ready",
                pass: ready == statuses.len() && added.as_secs_f64() <= 1.1 * fresh_med.as_secs_f64(),
            });
        }
        if case.server == "pyright" {
            // A file no server serves: nothing to wait for.
            let notes = (NOTES, "second\n", "2nd\n");
            let (mut on_times, mut off_times, statuses) =
                interleaved(&mut on, &mut off, notes, 1, iterations, |_, _| Ok(()))?;
            if statuses.iter().any(|s| s != "none") {
                return Err(format!("a file no server serves had a preview: {statuses:?}"));
            }
            let (on_med, off_med) = (median(&mut on_times), median(&mut off_times));
            println!("  {NOTES} (no server): previews on  {}", describe(&mut on_times));
            println!("  {NOTES} (no server): previews off {}", describe(&mut off_times));
            rows.push(Row {
                id: "R1",
                what: format!("{NOTES} (no server) added latency"),
                ours: fmt_signed(on_med, off_med),
                peer: format!("off {}", fmt_duration(off_med)),
                ratio: format!("{:.2}×", on_med.as_secs_f64() / off_med.as_secs_f64().max(1e-9)),
                goal: "≤ 2 ms",
                pass: on_med.saturating_sub(off_med) <= Duration::from_millis(2),
            });
        }
        on.sidecar.shutdown().map_err(|e| format!("{}: shutdown: {e}", case.server))?;
        off.sidecar.shutdown().map_err(|e| format!("{}: shutdown: {e}", case.server))?;
    }
    Ok(rows)
}
