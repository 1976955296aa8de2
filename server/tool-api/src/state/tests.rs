use std::os::unix::fs::symlink;

use super::*;
use crate::trust::Trust;

/// The folders `a` and `b` made in `dir`.
fn folders(dir: &tempfile::TempDir, a: &str, b: &str) -> std::io::Result<(std::path::PathBuf, std::path::PathBuf)> {
    let (a, b) = (dir.path().join(a), dir.path().join(b));
    std::fs::create_dir_all(&a)?;
    std::fs::create_dir_all(&b)?;
    Ok((a, b))
}

#[test]
fn state_lives_outside_the_workspace_one_folder_per_real_path() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (a, b) = folders(&dir, "one/app", "two/app")?;
    let sessions = state_dir(&a, "sessions")?;
    assert!(!sessions.starts_with(dir.path()), "{}", sessions.display());
    assert!(!a.join(STATE_DIR).exists(), "nothing is created in the workspace");
    // Two folders of the same name never share state; a symlink to one is that one.
    assert_ne!(project_key(&a), project_key(&b));
    symlink(&a, dir.path().join("alias"))?;
    assert_eq!(project_key(&a), project_key(&dir.path().join("alias")));
    assert!(project_key(&a).starts_with("app-"));
    let project = sessions.parent().ok_or("no parent")?;
    assert_eq!(std::fs::read_to_string(project.join("root"))?.trim(), a.canonicalize()?.display().to_string());
    assert!(matches!(state_dir(&a, "../x"), Err(StateError::BadName(_))));
    Ok(())
}

#[test]
fn a_symlink_inside_the_state_folder_is_never_used() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (root, outside) = folders(&dir, "ws", "outside")?;
    let project = state_dir(&root, "")?;
    symlink(&outside, project.join("memory"))?;
    assert!(matches!(state_dir(&root, "memory"), Err(StateError::NotARealDirectory { .. })));
    symlink(outside.join("log"), project.join("log"))?;
    assert!(open_append(&project.join("log")).is_err());
    assert!(create_new(&project.join("log")).is_err());
    assert!(open_regular(&project.join("log")).is_err());
    assert_eq!(std::fs::read_dir(&outside)?.count(), 0);
    std::fs::remove_dir_all(&project)?;
    Ok(())
}

#[test]
fn a_fifo_is_not_a_state_file() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )?;
    // Opening it would block forever without a writer; it is refused at once.
    assert!(open_regular(&fifo).is_err());
    Ok(())
}

#[test]
fn an_untrusted_workspace_state_is_not_moved_nor_read() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    std::fs::create_dir_all(root.join(".tandem/sessions"))?;
    std::fs::write(root.join(".tandem/sessions/s1.jsonl"), "{}\n")?;
    let notice = legacy::settle(root, Trust::Untrusted)?.unwrap_or_default();
    assert!(notice.contains(".tandem/sessions") && notice.contains("tandem trust"), "{notice}");
    assert!(root.join(".tandem/sessions/s1.jsonl").exists());
    assert!(!state_path(root, "sessions/s1.jsonl").exists());
    Ok(())
}

#[test]
fn a_trusted_workspace_state_moves_once_regular_files_only() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("ws");
    let outside = dir.path().join("secret.txt");
    std::fs::write(&outside, "secret")?;
    std::fs::create_dir_all(root.join(".tandem/sessions"))?;
    std::fs::create_dir_all(root.join(".tandem/checkpoints/git"))?;
    std::fs::create_dir_all(root.join(".tandem/journal"))?;
    std::fs::write(root.join(".tandem/sessions/s1.jsonl"), "{\"type\":\"meta\"}\n")?;
    symlink(&outside, root.join(".tandem/sessions/s2.jsonl"))?;
    std::fs::write(root.join(".tandem/config.toml"), "")?;
    let notice = legacy::settle(&root, Trust::Trusted)?.unwrap_or_default();
    assert!(notice.contains("moved 1 file"), "{notice}");
    assert!(notice.contains(".tandem/checkpoints was not moved"), "{notice}");
    assert!(notice.contains("not a regular file"), "{notice}");
    let moved = state_path(&root, "sessions/s1.jsonl");
    assert_eq!(std::fs::read_to_string(moved)?, "{\"type\":\"meta\"}\n");
    assert!(!state_path(&root, "sessions/s2.jsonl").exists());
    assert!(!root.join(".tandem/sessions/s1.jsonl").exists());
    // The checkpoint store is not taken over; the shared config is not state.
    assert!(root.join(".tandem/checkpoints/git").is_dir());
    assert!(root.join(".tandem/config.toml").exists());
    // Once: a second start says it is left over and moves nothing.
    std::fs::write(root.join(".tandem/sessions/s3.jsonl"), "{}\n")?;
    let again = legacy::settle(&root, Trust::Trusted)?.unwrap_or_default();
    assert!(again.contains("left over"), "{again}");
    assert!(root.join(".tandem/sessions/s3.jsonl").exists());
    std::fs::remove_dir_all(project_dir(&root).ok_or("no state home")?)?;
    Ok(())
}
