//! Answers from the person at the terminal (`/dev/tty`, not stdin, which may carry the prompt):
//! a line, or a single key pressed without Enter.

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr};

/// Opens the controlling terminal, or `None` when there is none (CI, an editor's task runner).
fn tty() -> Option<std::fs::File> {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok()
}

/// Whether a person can be asked at all.
pub(super) fn available() -> bool {
    tty().is_some()
}

/// Reads one answer line after showing `question`.
pub(super) async fn line(question: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        use std::io::BufRead as _;
        let tty = tty()?;
        let mut writer = tty.try_clone().ok()?;
        writer.write_all(question.as_bytes()).ok()?;
        writer.flush().ok()?;
        let mut line = String::new();
        std::io::BufReader::new(tty).read_line(&mut line).ok()?;
        Some(line.trim().to_owned())
    })
    .await
    .ok()
    .flatten()
}

/// Sets the flag when dropped: the wait for a key was given up (the turn was cancelled).
struct Abandon(Arc<AtomicBool>);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Shows `question` and waits for one of `keys` (lower case), pressed without Enter; other
/// keys are ignored. Falls back to a line when the terminal cannot be put in single-key mode.
/// `None` when there is no terminal, or when the future is dropped (the terminal's mode is
/// restored within a tenth of a second then).
pub(super) async fn key(question: String, keys: &str) -> Option<char> {
    let keys = keys.to_owned();
    let wanted = keys.clone();
    let abandoned = Arc::new(AtomicBool::new(false));
    let _guard = Abandon(Arc::clone(&abandoned));
    let question_again = question.clone();
    let pressed = tokio::task::spawn_blocking(move || single_key(&question, &keys, &abandoned)).await.ok()?;
    match pressed {
        Pressed::Key(key) => Some(key),
        Pressed::Gone => None,
        Pressed::NoRawMode => {
            let answer = line(question_again).await?;
            answer.chars().next().map(|c| c.to_ascii_lowercase()).filter(|c| wanted.contains(*c))
        }
    }
}

enum Pressed {
    Key(char),
    Gone,
    NoRawMode,
}

fn single_key(question: &str, keys: &str, abandoned: &AtomicBool) -> Pressed {
    let Some(mut tty) = tty() else { return Pressed::Gone };
    let Ok(saved) = tcgetattr(&tty) else { return Pressed::NoRawMode };
    let mut raw = saved.clone();
    raw.local_modes.remove(LocalModes::ICANON | LocalModes::ECHO);
    // Reads return after a tenth of a second without a key, so a cancel is noticed.
    raw.special_codes[SpecialCodeIndex::VMIN] = 0;
    raw.special_codes[SpecialCodeIndex::VTIME] = 1;
    if tcsetattr(&tty, OptionalActions::Now, &raw).is_err() {
        return Pressed::NoRawMode;
    }
    let _ = tty.write_all(question.as_bytes()).and_then(|()| tty.flush());
    let mut pressed = Pressed::Gone;
    let mut byte = [0u8; 1];
    while !abandoned.load(Ordering::Relaxed) {
        match tty.read(&mut byte) {
            Ok(1) => {
                let key = char::from(byte[0]).to_ascii_lowercase();
                if keys.contains(key) {
                    let _ = writeln!(tty, "{key}");
                    pressed = Pressed::Key(key);
                    break;
                }
            }
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = tcsetattr(&tty, OptionalActions::Now, &saved);
    pressed
}
