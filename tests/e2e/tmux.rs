//! A tmux server of the test's own, to drive a terminal program by key presses and read its
//! screen (`capture-pane`). The window is named `review`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::Res;

/// A tmux server of its own (`-L`), killed when dropped.
pub(crate) struct Tmux {
    /// The server's socket name.
    pub(crate) socket: String,
}

impl Tmux {
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-L").arg(&self.socket);
        command
    }

    pub(crate) fn capture(&self) -> Res<String> {
        let out = self.command().args(["capture-pane", "-p", "-t", "review"]).output().map_err(|e| e.to_string())?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Polls the screen until `done(screen)`; the last screen in the error.
    pub(crate) fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> Res<String> {
        let start = Instant::now();
        loop {
            let screen = self.capture()?;
            if done(&screen) {
                return Ok(screen);
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("timed out waiting for {what}; the screen:\n{screen}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub(crate) fn keys(&self, keys: &str) -> Res<()> {
        let status = self.command().args(["send-keys", "-t", "review", keys]).status().map_err(|e| e.to_string())?;
        if status.success() { Ok(()) } else { Err(format!("tmux send-keys {keys}: {status}")) }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if let Err(err) = self.command().arg("kill-server").status() {
            eprintln!("tmux kill-server: {err}");
        }
    }
}
