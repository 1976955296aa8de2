//! A1T: what OpenTelemetry export costs the agent loop. A1's scripted turn (reads of a 4 KB file)
//! on two warm sidecars over the same workspace, sessions strictly interleaved (the order
//! swapped every round): telemetry off (no `OTEL_*` variable, no `[telemetry]`), and on,
//! exporting every turn's, request's and tool call's span over OTLP/HTTP to a receiver in this
//! process (batches every 100 ms, so export happens during the turns). The loop overhead per tool
//! call of each (median), and on ÷ off. Off must cost nothing: the agent's span call sites are
//! then disabled (a cached interest check, no fields evaluated, nothing recorded; the agent's
//! `otel` unit test checks that), so off is the loop as it was before telemetry; the receiver
//! must have received spans, or "on" was not on.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use super::{Plan, Res, Row, Sidecar, describe, fmt_duration, median, text_of, workspace};

/// An OTLP/HTTP receiver that answers 200 to every POST (keep-alive) and counts them.
fn receiver() -> Res<(String, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&posts);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let Ok(mut writer) = stream.try_clone() else { return };
                let mut reader = BufReader::new(stream);
                loop {
                    let mut start = String::new();
                    if reader.read_line(&mut start).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.trim().eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    counted.fetch_add(1, Ordering::Relaxed);
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if writer.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok((url, posts))
}

pub fn a1t(plan: &Plan) -> Res<Vec<Row>> {
    println!("\nA1T: agent loop overhead per tool call with telemetry off and on (OTLP/HTTP export), interleaved");
    let (_dir, root) = workspace()?;
    std::fs::write(root.join("small.txt"), text_of(4096, None)).map_err(|e| e.to_string())?;
    let n = plan.a1_calls;
    let rounds = plan.a1t_rounds;
    let script = || {
        let mut script = Vec::new();
        for _ in 0..rounds {
            script.extend(
                (0..n).map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({ "file_path": "small.txt" }))),
            );
            script.push(Turn::reply("done"));
        }
        FakeProvider::start_blocking(script)
    };
    let (off_provider, on_provider) = (script(), script());
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let config = format!("[agent]\nmax_turns = {}\n[provider]\ncontext_window = 4000000\n", n + 1);
    std::fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    // The person's configuration (a `[telemetry]` section) stays out of both.
    let config_home = root.join(".bench-config");
    std::fs::create_dir_all(&config_home).map_err(|e| e.to_string())?;
    let config_home = config_home.display().to_string();
    let (endpoint, posts) = receiver()?;
    let spawn = |provider: &FakeProvider, endpoint: &str| -> Res<Sidecar> {
        let base = provider.base_url();
        let mut sidecar = Sidecar::spawn(
            &root,
            &[
                ("TANDEM_PROVIDER", "openai"),
                ("TANDEM_BASE_URL", &base),
                ("TANDEM_MODEL", "bench"),
                ("XDG_CONFIG_HOME", &config_home),
                // Empty is unset: telemetry off.
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ],
        )?;
        sidecar.initialize(serde_json::Value::Null)?;
        Ok(sidecar)
    };
    let mut off = spawn(&off_provider, "")?;
    let mut on = spawn(&on_provider, &endpoint)?;
    let turn = |sidecar: &mut Sidecar| -> Res<()> {
        let session = sidecar.request("tandem/session/new", json!({}))?["sessionId"].clone();
        let result = sidecar.request(
            "tandem/session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "read it many times" }] }),
        )?;
        if result["stopReason"] == "end_turn" { Ok(()) } else { Err(format!("the scripted turn ended with {result}")) }
    };
    for round in 0..rounds {
        if round % 2 == 0 {
            turn(&mut off)?;
            turn(&mut on)?;
        } else {
            turn(&mut on)?;
            turn(&mut off)?;
        }
    }
    off.shutdown()?;
    // Its last batch goes out at exit.
    on.shutdown()?;
    let gaps = |provider: &FakeProvider| -> Res<Vec<Duration>> {
        let requests = provider.requests();
        if requests.len() != rounds * (n + 1) {
            return Err(format!("{} model requests, expected {}", requests.len(), rounds * (n + 1)));
        }
        Ok(requests
            .chunks(n + 1)
            .flat_map(|run| {
                run.windows(2)
                    .map(|pair| {
                        pair[0]
                            .answered_at
                            .map_or(Duration::ZERO, |done| pair[1].received_at.saturating_duration_since(done))
                    })
                    .collect::<Vec<_>>()
            })
            .collect())
    };
    let (mut off_gaps, mut on_gaps) = (gaps(&off_provider)?, gaps(&on_provider)?);
    let exports = posts.load(Ordering::Relaxed);
    println!("  telemetry off: {}", describe(&mut off_gaps));
    println!("  telemetry on:  {} ({exports} OTLP export requests received)", describe(&mut on_gaps));
    if exports == 0 {
        return Err("the receiver got no spans: telemetry was not on".into());
    }
    let (off_median, on_median) = (median(&mut off_gaps), median(&mut on_gaps));
    let ratio = on_median.as_secs_f64() / off_median.as_secs_f64().max(1e-12);
    Ok(vec![Row {
        id: "A1T",
        what: format!("loop overhead per tool call, telemetry off ({rounds}×{n} calls each, interleaved)"),
        ours: fmt_duration(off_median),
        peer: format!("telemetry on {}", fmt_duration(on_median)),
        ratio: format!("on {ratio:.2}× off"),
        goal: "reported",
        pass: true,
    }])
}
