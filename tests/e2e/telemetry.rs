//! OpenTelemetry export: `tandem run` with the standard `OTEL_EXPORTER_OTLP_ENDPOINT` sends its
//! spans (a turn, each model request, each tool call) to an OTLP/HTTP receiver in the test, as
//! JSON and as protobuf; without content unless asked; and nothing without the variable.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, tandem_bin};

/// A request the receiver got: path, content type, body.
type Post = (String, String, Vec<u8>);

/// An OTLP/HTTP receiver: every POST's path, content type and body.
struct Receiver {
    url: String,
    posts: Arc<Mutex<Vec<Post>>>,
}

impl Receiver {
    fn start() -> Res<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
        let posts = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&posts);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut start = String::new();
                if reader.read_line(&mut start).is_err() {
                    continue;
                }
                let (mut length, mut kind) = (0usize, String::new());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        match name.trim().to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap_or(0),
                            "content-type" => kind = value.trim().to_owned(),
                            _ => {}
                        }
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                let path = start.split_whitespace().nth(1).unwrap_or_default().to_owned();
                let answer: &[u8] = if kind.contains("json") { b"{}" } else { b"" };
                seen.lock().map(|mut posts| posts.push((path, kind.clone(), body))).ok();
                let mut stream = reader.into_inner();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    if kind.is_empty() { "application/x-protobuf" } else { kind.as_str() },
                    answer.len()
                );
                stream.write_all(head.as_bytes()).ok();
                stream.write_all(answer).ok();
            }
        });
        Ok(Self { url, posts })
    }

    fn posts(&self) -> Vec<Post> {
        self.posts.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

fn run(dir: &std::path::Path, provider: &FakeProvider, env: &[(&str, &str)]) -> Res<std::process::Output> {
    let mut command = Command::new(tandem_bin());
    command
        .args(["run", "--yes", "--output-format", "json", "read a.txt"])
        .current_dir(dir)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_BASE_URL", provider.base_url())
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().map_err(|e| e.to_string())
}

fn script() -> FakeProvider {
    FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "a.txt" })).usage(120, 7),
        Turn::reply("It says secret-words.").usage(150, 4),
    ])
}

/// Every span of JSON exports: (name, attributes as key → value).
fn spans(posts: &[Post]) -> Vec<(String, serde_json::Map<String, Value>)> {
    let mut found = Vec::new();
    for (_, _, body) in posts {
        let Ok(export) = serde_json::from_slice::<Value>(body) else { continue };
        for resource in export["resourceSpans"].as_array().into_iter().flatten() {
            let service = resource["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "service.name")
                .map(|a| a["value"]["stringValue"].clone());
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let mut attributes = serde_json::Map::new();
                    attributes.insert("service.name".into(), service.clone().unwrap_or_default());
                    for a in span["attributes"].as_array().into_iter().flatten() {
                        let value = a["value"].as_object().and_then(|v| v.values().next().cloned()).unwrap_or_default();
                        attributes.insert(a["key"].as_str().unwrap_or_default().to_owned(), value);
                    }
                    found.push((span["name"].as_str().unwrap_or_default().to_owned(), attributes));
                }
            }
        }
    }
    found
}

#[test]
fn spans_of_a_run_reach_the_standard_endpoint_with_counts_and_no_content() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "secret-words\n").map_err(|e| e.to_string())?;
    let receiver = Receiver::start()?;
    let provider = script();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.as_str()), ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")];
    let out = run(dir.path(), &provider, &env)?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let posts = receiver.posts();
    assert!(!posts.is_empty() && posts.iter().all(|(path, _, _)| path == "/v1/traces"), "{:?}", posts.len());
    let spans = spans(&posts);
    let names: Vec<&str> = spans.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"invoke_agent tandem"), "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == "chat scripted").count(), 2, "{names:?}");
    assert!(names.contains(&"execute_tool read"), "{names:?}");
    let attr = |name: &str, key: &str| -> Vec<Value> {
        spans.iter().filter(|(n, _)| n == name).filter_map(|(_, a)| a.get(key).cloned()).collect()
    };
    assert_eq!(attr("invoke_agent tandem", "service.name"), [json!("tandem")]);
    let input: Vec<String> = attr("chat scripted", "gen_ai.usage.input_tokens").iter().map(|v| v.to_string()).collect();
    assert!(input.contains(&"\"120\"".to_owned()) || input.contains(&"120".to_owned()), "{input:?}");
    assert!(!attr("chat scripted", "gen_ai.usage.output_tokens").is_empty());
    assert_eq!(attr("execute_tool read", "gen_ai.tool.name"), [json!("read")]);
    assert_eq!(attr("execute_tool read", "tandem.tool.status"), [json!("completed")]);
    assert_eq!(attr("invoke_agent tandem", "tandem.stop_reason"), [json!("end_turn")]);
    // Neither the prompt, nor the file, nor the answer.
    for (_, _, body) in &posts {
        let text = String::from_utf8_lossy(body);
        assert!(!text.contains("secret-words") && !text.contains("read a.txt"), "content was exported: {text}");
    }

    // Protobuf, the default: the same spans.
    let receiver = Receiver::start()?;
    let out = run(dir.path(), &script(), &[("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.as_str())])?;
    assert_eq!(out.status.code(), Some(0));
    let posts = receiver.posts();
    assert!(posts.iter().any(|(_, kind, _)| kind == "application/x-protobuf"), "{posts:?}");
    let bytes: Vec<u8> = posts.iter().flat_map(|(_, _, body)| body.clone()).collect();
    for name in ["invoke_agent tandem", "chat scripted", "execute_tool read", "tandem"] {
        assert!(bytes.windows(name.len()).any(|w| w == name.as_bytes()), "no `{name}` in the protobuf export");
    }
    Ok(())
}

#[test]
fn without_an_endpoint_nothing_is_sent_and_content_only_when_asked() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "secret-words\n").map_err(|e| e.to_string())?;
    // The endpoint in the person's own configuration, with content.
    let receiver = Receiver::start()?;
    let config = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(config.path().join("tandem")).map_err(|e| e.to_string())?;
    std::fs::write(
        config.path().join("tandem/config.toml"),
        format!("[telemetry]\nendpoint = \"{}\"\nprotocol = \"http/json\"\nlog_content = true\n", receiver.url),
    )
    .map_err(|e| e.to_string())?;
    let xdg = config.path().to_str().unwrap_or_default();
    let out = run(dir.path(), &script(), &[("XDG_CONFIG_HOME", xdg)])?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let posts = receiver.posts();
    let spans = spans(&posts);
    assert!(spans.iter().any(|(_, a)| a.get("tandem.prompt") == Some(&json!("read a.txt"))), "{spans:?}");

    // A project's own [telemetry] is ignored, with a warning; nothing is sent.
    let receiver = Receiver::start()?;
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join(".tandem/config.toml"), format!("[telemetry]\nendpoint = \"{}\"\n", receiver.url))
        .map_err(|e| e.to_string())?;
    let out = run(dir.path(), &script(), &[])?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[telemetry]"), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(receiver.posts().is_empty(), "a project's telemetry setting sent spans");
    Ok(())
}
