//! P7: `lsp` definition and references through Tandem (editor → sidecar → language server →
//! back) vs the same request sent directly with async-lsp to a warm instance of the same
//! server, in the same run; and the time from an edit to its fresh diagnostics per server.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use async_lsp::MainLoop;
use async_lsp::lsp_types::request::Request;
use async_lsp::router::Router;
use serde_json::{Value, json};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::support::{Res, Sidecar};
use crate::{Plan, Row, describe, fmt_duration, median};

enum Raw {}
impl Request for Raw {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "textDocument/definition";
}
enum RawRefs {}
impl Request for RawRefs {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "textDocument/references";
}
enum RawInit {}
impl Request for RawInit {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "initialize";
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn server_path() -> String {
    let mut dirs = vec![repo().join("node_modules/.bin"), repo().join(".tools/venv/bin")];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

pub(crate) fn copy_fixture(name: &str) -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo().join("tests/fixtures").join(name))
        .arg(&root)
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("cp failed".into());
    }
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(
        root.join(".tandem/config.toml"),
        "[lsp]\ndiagnostics_wait_ms = 60000\nrequest_timeout_ms = 60000\n",
    )
    .map_err(|e| e.to_string())?;
    let root = root.canonicalize().map_err(|e| e.to_string())?;
    if name == "c" {
        // A compilation database lets clangd index every file (cross-file references).
        let db: Vec<Value> = ["counter.c", "main.c"]
            .iter()
            .map(|f| json!({ "directory": root.display().to_string(), "file": f, "arguments": ["cc", "-std=c11", "-c", f] }))
            .collect();
        std::fs::write(root.join("compile_commands.json"), Value::Array(db).to_string()).map_err(|e| e.to_string())?;
    }
    Ok((dir, root))
}

/// One server's case: the fixture, the file and 0-based position of a call, a type-breaking edit.
pub(crate) struct Case {
    pub(crate) server: &'static str,
    pub(crate) command: &'static [&'static str],
    pub(crate) fixture: &'static str,
    pub(crate) file: &'static str,
    pub(crate) language: &'static str,
    pub(crate) line: u32,
    pub(crate) needle: &'static str,
    pub(crate) break_old: &'static str,
    pub(crate) break_new: &'static str,
}

pub(crate) const CASES: &[Case] = &[
    Case {
        server: "pyright",
        command: &["pyright-langserver", "--stdio"],
        fixture: "python",
        file: "shop/main.py",
        language: "python",
        line: 7,
        needle: "increment",
        break_old: "    return total\n",
        break_new: "    return \"total\"\n",
    },
    Case {
        server: "clangd",
        command: &["clangd"],
        fixture: "c",
        file: "main.c",
        language: "c",
        line: 6,
        needle: "counter_increment",
        break_old: "    return total;\n",
        break_new: "    return undeclared_total;\n",
    },
    Case {
        server: "typescript-language-server",
        command: &["typescript-language-server", "--stdio"],
        fixture: "typescript",
        file: "src/main.ts",
        language: "typescript",
        line: 6,
        needle: "increment",
        break_old: "  return total;\n",
        break_new: "  return \"total\";\n",
    },
    Case {
        server: "rust-analyzer",
        command: &["rust-analyzer"],
        fixture: "rust",
        file: "src/lib.rs",
        language: "rust",
        line: 10,
        needle: "increment",
        break_old: "    counter.total()\n",
        break_new: "    counter.total() + \"x\"\n",
    },
];

/// A fresh instance of the server, asked directly with async-lsp on a current-thread runtime (the
/// answer is read by the thread that asks, as the bench's own client does).
struct Direct {
    runtime: tokio::runtime::Runtime,
    server: async_lsp::ServerSocket,
    child: tokio::process::Child,
    task: tokio::task::JoinHandle<()>,
    params: Value,
}

impl Direct {
    /// Starts the server in `root`, opens the case's file and waits until it answers definition
    /// and references with results.
    fn start(case: &Case, root: &Path, column: u32) -> Res<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        let (server, child, task, params) = runtime.block_on(async {
            let (main_loop, server) = MainLoop::new_client(|_| {
                let mut router = Router::new(());
                router.unhandled_notification(|_, _| ControlFlow::Continue(())).unhandled_request(|_, r| {
                    let result = if r.method == "workspace/configuration" {
                        let n = r.params.get("items").and_then(Value::as_array).map_or(0, Vec::len);
                        Value::Array(vec![Value::Null; n])
                    } else {
                        Value::Null
                    };
                    async move { Ok(result) }
                });
                router
            });
            let mut child = tokio::process::Command::new(case.command[0])
                .args(&case.command[1..])
                .env("PATH", server_path())
                .current_dir(root)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("{}: {e}", case.command[0]))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err("no stdio".to_owned());
            };
            let keep = server.clone();
            let task = tokio::spawn(async move {
                main_loop.run_buffered(stdout.compat(), stdin.compat_write()).await.ok();
                drop(keep);
            });
            let root_uri = format!("file://{}", root.display());
            server
                .request::<RawInit>(json!({ "processId": null, "rootUri": root_uri,
                    "workspaceFolders": [{ "uri": root_uri, "name": "root" }],
                    "capabilities": { "window": { "workDoneProgress": true }, "general": { "positionEncodings": ["utf-8", "utf-16"] } } }))
                .await
                .map_err(|e| e.to_string())?;
            server
                .notify::<async_lsp::lsp_types::notification::Initialized>(async_lsp::lsp_types::InitializedParams {})
                .map_err(|e| e.to_string())?;
            let uri = format!("{root_uri}/{}", case.file);
            let text = std::fs::read_to_string(root.join(case.file)).map_err(|e| e.to_string())?;
            let open = json!({ "textDocument": { "uri": uri, "languageId": case.language, "version": 1, "text": text } });
            server
                .notify::<async_lsp::lsp_types::notification::DidOpenTextDocument>(
                    serde_json::from_value(open).map_err(|e| e.to_string())?,
                )
                .map_err(|e| e.to_string())?;
            let params = json!({ "textDocument": { "uri": uri }, "position": { "line": case.line, "character": column },
                "context": { "includeDeclaration": true } });
            // Warm up until the server answers with a result (it may be loading the project).
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                let answer = server.request::<Raw>(params.clone()).await.unwrap_or(Value::Null);
                let refs = server.request::<RawRefs>(params.clone()).await.unwrap_or(Value::Null);
                let full = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty()) || v.is_object();
                if full(&answer) && refs.as_array().is_some_and(|a| a.len() >= 2) {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("{} never answered definition directly", case.server));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok((server, child, task, params))
        })?;
        Ok(Self { runtime, server, child, task, params })
    }

    /// One definition (or references) request's round trip. A server that answers "busy"
    /// (ContentModified or ServerCancelled: rust-analyzer does while it reloads the project) is
    /// asked again, as editors (and Tandem) do, and only the answered round trip counts: the
    /// direct side never pays for a retry.
    fn time(&mut self, references: bool) -> Res<Duration> {
        let (server, params) = (&mut self.server, self.params.clone());
        self.runtime.block_on(async {
            let mut busy = 0;
            loop {
                let start = Instant::now();
                let answer = if references {
                    server.request::<RawRefs>(params.clone()).await.map(drop)
                } else {
                    server.request::<Raw>(params.clone()).await.map(drop)
                };
                match answer {
                    Ok(()) => return Ok(start.elapsed()),
                    Err(async_lsp::Error::Response(err))
                        if busy < 50
                            && (err.code == async_lsp::ErrorCode::CONTENT_MODIFIED
                                || err.code == async_lsp::ErrorCode::SERVER_CANCELLED) =>
                    {
                        busy += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(err) => return Err(err.to_string()),
                }
            }
        })
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let (child, task) = (&mut self.child, &self.task);
        self.runtime.block_on(async {
            child.kill().await.ok();
        });
        task.abort();
    }
}

pub(crate) fn installed(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .env("PATH", server_path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        || std::env::split_paths(&server_path()).any(|d| d.join(program).is_file() && program != "rust-analyzer")
}

pub(crate) fn call_ok(sidecar: &mut Sidecar, name: &str, args: Value) -> Res<Value> {
    let result = sidecar.call(name, args)?;
    match result["error"].as_str() {
        Some(error) => Err(format!("{name}: {error}")),
        None => Ok(result),
    }
}

/// Asks `references` until the answer has the project loaded (two references or more), for two
/// minutes at most. An error while it loads (a request timing out on a busy machine, a busy
/// answer) is part of warming up; on failure, the answers seen are counted by kind.
fn warm_up(sidecar: &mut Sidecar, args: &Value, server: &str) -> Res<()> {
    let start = Instant::now();
    let mut seen: Vec<(String, u32)> = Vec::new();
    loop {
        let out = sidecar.call("lsp", args.clone())?;
        let count = out["metadata"]["count"].as_u64().unwrap_or(0);
        if count >= 2 {
            return Ok(());
        }
        let kind = match out["error"].as_str() {
            Some(error) => error.to_owned(),
            None => format!("{count} references"),
        };
        match seen.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => seen.push((kind, 1)),
        }
        if start.elapsed() > Duration::from_secs(120) {
            let seen: Vec<String> = seen.iter().map(|(kind, n)| format!("{n}× {kind}")).collect();
            return Err(format!("{server}: not warm after 120 s; answers: {}", seen.join("; ")));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub(crate) fn p7(plan: &Plan) -> Res<Vec<Row>> {
    println!(
        "\nP7: lsp definition/references via Tandem vs a direct async-lsp request to a warm server; edit → fresh diagnostics"
    );
    // Servers' own times vary by a factor of ten from one request to the next (rust-analyzer:
    // 0.2 to 5 ms): enough pairs that the medians, and their difference, hold still.
    let iterations = if plan.quick { 20 } else { 300 };
    let edits = if plan.quick { 1 } else { 5 };
    let mut rows = Vec::new();
    for case in CASES {
        if !installed(case.command[0]) {
            if case.server == "rust-analyzer" {
                eprintln!("!!!!! P7: rust-analyzer is not installed; skipped");
                continue;
            }
            return Err(format!("{} is not installed (npm install / scripts/test's venv)", case.command[0]));
        }
        let (_dir, root) = copy_fixture(case.fixture)?;
        let text = std::fs::read_to_string(root.join(case.file)).map_err(|e| e.to_string())?;
        let line_text = text.lines().nth(case.line as usize).unwrap_or_default();
        let column = line_text.find(case.needle).ok_or("needle not on its line")? as u32;
        let path = server_path();
        let args =
            |op: &str| json!({ "operation": op, "file_path": case.file, "line": case.line + 1, "column": column + 1 });
        // Warm up: start the server and let it load the project. A server not warm after two
        // minutes is started afresh once (rust-analyzer once never got there on a loaded
        // machine, its last answer `content modified`); a second failure says what it saw.
        let start = || -> Res<Sidecar> {
            let mut sidecar = Sidecar::spawn(&root, &[("PATH", path.as_str())])?;
            sidecar.initialize(Value::Null)?;
            Ok(sidecar)
        };
        let mut sidecar = start()?;
        if let Err(first) = warm_up(&mut sidecar, &args("references"), case.server) {
            eprintln!("!!!!! P7: {first}; starting it afresh");
            drop(sidecar);
            sidecar = start()?;
            warm_up(&mut sidecar, &args("references"), case.server)
                .map_err(|second| format!("{second} (and before a restart: {first})"))?;
        }
        // The same server started directly, both warm, then asked in turn (A/B interleaved,
        // the first of each pair alternating), so that background work of either (an index
        // being primed, a check running) falls on both sides alike.
        // A second direct instance, asked in the same rotation, says how far two instances of
        // the same server differ by themselves (reference only: the noise under the row; not
        // in a quick run).
        let mut peer = Direct::start(case, &root, column)?;
        let mut twin = if plan.quick { None } else { Some(Direct::start(case, &root, column)?) };
        let (mut ours_def, mut ours_refs) = (Vec::new(), Vec::new());
        let (mut direct_def, mut direct_refs) = (Vec::new(), Vec::new());
        let (mut twin_def, mut twin_refs) = (Vec::new(), Vec::new());
        for i in 0..iterations {
            for references in [false, true] {
                let op = if references { "references" } else { "definition" };
                let (ours, direct, other) = if references {
                    (&mut ours_refs, &mut direct_refs, &mut twin_refs)
                } else {
                    (&mut ours_def, &mut direct_def, &mut twin_def)
                };
                if i % 2 == 1 {
                    direct.push(peer.time(references)?);
                    if let Some(twin) = &mut twin {
                        other.push(twin.time(references)?);
                    }
                }
                let start = Instant::now();
                call_ok(&mut sidecar, "lsp", args(op))?;
                ours.push(start.elapsed());
                if i % 2 == 0 {
                    if let Some(twin) = &mut twin {
                        other.push(twin.time(references)?);
                    }
                    direct.push(peer.time(references)?);
                }
            }
        }
        drop(peer);
        drop(twin);
        let signed = |a: Duration, b: Duration| {
            let us = a.as_secs_f64() * 1e6 - b.as_secs_f64() * 1e6;
            format!("{us:+.0} µs")
        };
        if !twin_def.is_empty() {
            println!(
                "  {}: a second direct instance vs the first: definition {}, references {} (reference only)",
                case.server,
                signed(median(&mut twin_def), median(&mut direct_def)),
                signed(median(&mut twin_refs), median(&mut direct_refs))
            );
        }
        // Edit → fresh diagnostics (the edit's own work is a few ms of it).
        // A server that did not answer in time is a measured miss (the row says how many were
        // fresh), not a broken bench: a loaded machine can slow a server past the wait.
        let (mut diag, mut statuses) = (Vec::new(), Vec::new());
        for _ in 0..edits {
            for (old, new) in [(case.break_old, case.break_new), (case.break_new, case.break_old)] {
                let start = Instant::now();
                let result = call_ok(
                    &mut sidecar,
                    "edit",
                    json!({ "file_path": case.file, "old_string": old, "new_string": new }),
                )?;
                let elapsed = start.elapsed();
                let status = &result["metadata"]["diagnostics"][case.file]["status"];
                statuses.push(status.as_str().unwrap_or("missing").to_owned());
                if status == &json!("fresh") {
                    diag.push(elapsed);
                }
            }
        }
        drop(sidecar);
        for (what, ours, peer) in
            [("definition", &mut ours_def, &mut direct_def), ("references", &mut ours_refs, &mut direct_refs)]
        {
            let (o, p) = (median(ours), median(peer));
            let ratio = o.as_secs_f64() / p.as_secs_f64().max(1e-9);
            rows.push(Row {
                id: "P7",
                what: format!("{} {what}", case.server),
                ours: describe(ours),
                peer: describe(peer),
                ratio: format!("{ratio:.2}×, +{}", fmt_duration(o.saturating_sub(p))),
                goal: "≤ direct + 0.5 ms",
                pass: o <= p + Duration::from_micros(500),
            });
        }
        let fresh = statuses.iter().filter(|s| *s == "fresh").count();
        if fresh < statuses.len() {
            println!("  {}: diagnostics after the edits were {statuses:?}", case.server);
        }
        rows.push(Row {
            id: "P7",
            what: format!("{} edit → fresh diagnostics (fresh {fresh}/{})", case.server, statuses.len()),
            ours: if diag.is_empty() { "none fresh".into() } else { describe(&mut diag) },
            peer: "—".into(),
            ratio: "—".into(),
            goal: "reported, all fresh",
            pass: fresh == statuses.len(),
        });
        println!(
            "  {}: definition median {} (direct {})",
            case.server,
            fmt_duration(median(&mut ours_def)),
            fmt_duration(median(&mut direct_def))
        );
    }
    Ok(rows)
}
