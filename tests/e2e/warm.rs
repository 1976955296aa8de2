//! One-shot `tandem tool lsp` calls share warm language servers: the first starts a background
//! `tandem` that holds them, the next ones are answered by the same servers, files changed on
//! disk in between are seen, other settings start a fresh one, and it ends (with its servers)
//! when idle or when its project is gone.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::lsp_proxy::{require, server_path};
use crate::support::{Res, tandem_bin};

/// A git project holding a copy of the Python fixture, and a home of its own (state and
/// configuration) for the calls.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Res<Self> {
        let (dir, shop) = crate::project::project("[lsp]\nrequest_timeout_ms = 60000\n")?;
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
        let root = shop.parent().ok_or("no project above shop/")?.to_path_buf();
        Ok(Self { _dir: dir, root, home })
    }

    /// The first call, answered: the background process it started.
    fn first_call(&self, env: &[(&str, &str)]) -> Res<(u32, Value)> {
        let (code, result, stderr) = self.lsp(HOVER, env)?;
        assert_eq!(code, 0, "{result} {stderr}");
        assert!(!stderr.contains("starting the language servers for this call"), "{stderr}");
        Ok((self.warm_pid().ok_or("no background process after the first call")?, result))
    }

    /// `tandem tool lsp <arguments> --json` from `shop/`: exit status, result, stderr.
    fn lsp(&self, arguments: &str, extra_env: &[(&str, &str)]) -> Res<(i32, Value, String)> {
        let mut command = Command::new(tandem_bin());
        command
            .args(["tool", "lsp", arguments, "--json"])
            .current_dir(self.root.join("shop"))
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_STATE_HOME", self.home.join(".state"))
            .env_remove("TANDEM_STATE_HOME")
            .env("PATH", server_path())
            .env("TANDEM_TRUST_WORKSPACE", "1")
            .env("TANDEM_LSP_IDLE", "120")
            .env_remove("TANDEM_PROFILE");
        for (name, value) in extra_env {
            command.env(name, value);
        }
        let out = command.output().map_err(|e| e.to_string())?;
        let result = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        Ok((out.status.code().unwrap_or(-1), result, String::from_utf8_lossy(&out.stderr).into_owned()))
    }

    /// The background process serving the project now, from its pid file.
    fn warm_pid(&self) -> Option<u32> {
        let dir = self.home.join(".state/tandem/warm");
        let entries = std::fs::read_dir(dir).ok()?;
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
            .find_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
    }
}

/// The parent of each running process.
fn parents() -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
            let rest = &stat[stat.rfind(')')? + 2..];
            let ppid = rest.split(' ').nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// `pid`'s descendants, sorted.
fn descendants(pid: u32) -> Vec<u32> {
    let table = parents();
    let mut out = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        for (child, _) in table.iter().filter(|(_, p)| *p == parent) {
            out.push(*child);
            queue.push(*child);
        }
    }
    out.sort_unstable();
    out
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

/// Waits until `pid` and its servers have ended (what it is waiting for is the process's end,
/// bounded so a failure shows).
fn wait_gone(pids: &[u32]) -> Res<()> {
    let start = std::time::Instant::now();
    while pids.iter().any(|&pid| alive(pid)) {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            return Err(format!(
                "still running after 60 s: {:?}",
                pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}

fn stop(pid: u32) -> Res<Vec<u32>> {
    let servers = descendants(pid);
    Command::new("kill").arg(pid.to_string()).status().map_err(|e| e.to_string())?;
    let mut all = servers.clone();
    all.push(pid);
    wait_gone(&all)?;
    Ok(servers)
}

const HOVER: &str = r#"{"operation":"hover","file_path":"main.py","line":8,"symbol":"increment"}"#;

#[test]
fn the_second_lsp_call_is_answered_by_the_same_warm_server() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let project = Project::new()?;
    let (pid, first) = project.first_call(&[])?;
    assert!(first["output"].as_str().is_some_and(|o| o.contains("increment")), "{first}");
    let servers = descendants(pid);
    assert!(!servers.is_empty(), "the background process runs no language server");
    let (code, second, stderr) =
        project.lsp(r#"{"operation":"definition","file_path":"main.py","line":8,"character":25}"#, &[])?;
    assert_eq!(code, 0, "{second} {stderr}");
    assert!(second["output"].as_str().is_some_and(|o| o.contains("def increment(self) -> int:")), "{second}");
    // Same process, same servers: nothing was started again.
    assert_eq!(project.warm_pid(), Some(pid));
    assert_eq!(descendants(pid), servers);
    // Ended, it takes its servers with it.
    stop(pid)?;
    // With the background off, a call runs its own servers and leaves nothing behind.
    let (code, off, stderr) = project.lsp(HOVER, &[("TANDEM_LSP_IDLE", "0")])?;
    assert_eq!(code, 0, "{off} {stderr}");
    assert_eq!(off["output"], first["output"]);
    assert_eq!(project.warm_pid(), None, "a background process started with TANDEM_LSP_IDLE=0");
    Ok(())
}

#[test]
fn a_file_changed_on_disk_between_calls_is_seen_by_the_warm_server() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let project = Project::new()?;
    let (pid, before) = project.first_call(&[])?;
    let shown = before["output"].as_str().unwrap_or_default();
    assert!(shown.contains("-> int"), "{before}");
    // counter.py is not open in the server: only a watcher's word tells it of the change.
    let counter = project.root.join("shop/counter.py");
    let text = std::fs::read_to_string(&counter).map_err(|e| e.to_string())?;
    let changed = text
        .replace("def increment(self) -> int:", "def increment(self) -> str:")
        .replace("        return self.count\n", "        return str(self.count)\n");
    assert_ne!(changed, text);
    std::fs::write(&counter, changed).map_err(|e| e.to_string())?;
    let (code, after, stderr) = project.lsp(HOVER, &[])?;
    assert_eq!(code, 0, "{after} {stderr}");
    let shown = after["output"].as_str().unwrap_or_default();
    assert!(shown.contains("-> str"), "the warm server still has the old counter.py: {after}");
    assert_eq!(project.warm_pid(), Some(pid), "not answered by the warm server");
    stop(pid)?;
    Ok(())
}

#[test]
fn other_settings_start_a_fresh_background_process_and_the_old_one_ends() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let project = Project::new()?;
    let (old, _) = project.first_call(&[])?;
    let old_servers = descendants(old);
    // The project's settings change: the old process must not answer with them.
    std::fs::write(project.root.join(".tandem/config.toml"), "[lsp]\nrequest_timeout_ms = 59000\n")
        .map_err(|e| e.to_string())?;
    let (code, result, stderr) = project.lsp(HOVER, &[])?;
    assert_eq!(code, 0, "{result} {stderr}");
    let new = project.warm_pid().ok_or("no background process after the change")?;
    assert_ne!(new, old);
    let mut gone = old_servers;
    gone.push(old);
    wait_gone(&gone)?;
    stop(new)?;
    Ok(())
}

#[test]
fn an_idle_background_process_ends_with_its_servers() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let project = Project::new()?;
    let (code, result, stderr) = project.lsp(HOVER, &[("TANDEM_LSP_IDLE", "1")])?;
    assert_eq!(code, 0, "{result} {stderr}");
    assert!(!stderr.contains("starting the language servers for this call"), "{stderr}");
    // It may be gone already: what counts is that nothing runs in the project afterwards (a
    // server left behind would still have its working directory there).
    wait_gone(&running_in(&project.root))?;
    assert_eq!(project.warm_pid(), None, "the pid file outlived the process");
    Ok(())
}

/// The processes whose working directory is `root` or below (the background process and its
/// servers run in the project's root).
fn running_in(root: &Path) -> Vec<u32> {
    parents()
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(root)))
        .collect()
}

#[test]
fn concurrent_first_calls_share_one_background_process() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let project = std::sync::Arc::new(Project::new()?);
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let project = std::sync::Arc::clone(&project);
            std::thread::spawn(move || project.lsp(HOVER, &[]))
        })
        .collect();
    for call in calls {
        let (code, result, stderr) = call.join().map_err(|_| "a call panicked")??;
        assert_eq!(code, 0, "{result} {stderr}");
        assert!(!stderr.contains("starting the language servers for this call"), "{stderr}");
    }
    let pid = project.warm_pid().ok_or("no background process")?;
    // One background process in all: no other `tandem lsp-warm` for this home.
    let others: Vec<u32> = parents()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|&p| p != pid)
        .filter(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            cmdline.contains("lsp-warm") && cmdline.contains(&*project.root.to_string_lossy())
        })
        .collect();
    assert!(others.is_empty(), "more than one background process: {others:?} besides {pid}");
    stop(pid)?;
    Ok(())
}
