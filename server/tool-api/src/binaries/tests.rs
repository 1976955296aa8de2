use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

/// A workspace, a folder outside it, and a configuration directory for pins.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

fn world() -> io::Result<World> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("ws");
    let outside = dir.path().join("outside");
    let config = dir.path().join("config");
    for d in [&root, &outside, &config] {
        std::fs::create_dir_all(d)?;
    }
    let (root, outside) = (root.canonicalize()?, outside.canonicalize()?);
    Ok(World { _dir: dir, root, outside, config })
}

fn program(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

fn binaries(w: &World, trust: Trust, path: &[&Path]) -> io::Result<Binaries> {
    let joined = std::env::join_paths(path).map_err(io::Error::other)?;
    let mut b = Binaries::new(&w.root, trust).with_search_path(&joined).with_pins_in(w.config.clone());
    b.cwd = w.root.clone();
    Ok(b)
}

const DIRS: &[&str] = &["node_modules/.bin", ".venv/bin"];

#[test]
fn before_trust_only_programs_outside_the_workspace_are_found() -> io::Result<()> {
    let w = world()?;
    program(&w.root.join(".venv/bin/srv"), "#!/bin/sh\n")?;
    program(&w.root.join("bin/srv"), "#!/bin/sh\n")?;
    let untrusted = binaries(&w, Trust::Untrusted, &[&w.root.join("bin"), Path::new("bin"), Path::new("")])?;
    // Only in the repository: reported, never found.
    assert_eq!(untrusted.find("srv", &w.root, DIRS), Lookup::InRepository(w.root.join(".venv/bin/srv")));
    assert_eq!(untrusted.find("bin/srv", &w.root, DIRS), Lookup::InRepository(w.root.join("bin/srv")));
    assert_eq!(untrusted.find("./bin/srv", &w.root, DIRS), Lookup::InRepository(w.root.join("bin/srv")));
    let absolute = w.root.join("bin/srv").display().to_string();
    assert_eq!(untrusted.find(&absolute, &w.outside, DIRS), Lookup::InRepository(w.root.join("bin/srv")));
    // A program outside wins over the repository's, wherever PATH puts it.
    program(&w.outside.join("srv"), "#!/bin/sh\n")?;
    let untrusted = binaries(&w, Trust::Untrusted, &[&w.root.join("bin"), &w.outside])?;
    let outside = Program { path: w.outside.join("srv"), in_workspace: false };
    assert_eq!(untrusted.find("srv", &w.root, DIRS), Lookup::Found(outside.clone()));
    assert!(untrusted.check(&outside).is_ok());
    // A symlink outside that resolves into the workspace is the repository's.
    std::fs::remove_file(w.outside.join("srv"))?;
    symlink(w.root.join("bin/srv"), w.outside.join("srv"))?;
    assert_eq!(untrusted.find("srv", &w.root, DIRS), Lookup::InRepository(w.root.join(".venv/bin/srv")));
    // Checking refuses a workspace program however it was found.
    let err = untrusted.check(&Program { path: w.outside.join("srv"), in_workspace: false });
    assert!(matches!(err, Err(BinaryError::Untrusted { .. })), "{err:?}");
    Ok(())
}

#[test]
fn started_programs_get_a_path_without_the_workspace_before_trust() -> io::Result<()> {
    let w = world()?;
    std::fs::create_dir_all(w.root.join("bin"))?;
    symlink(w.root.join("bin"), w.outside.join("into-ws"))?;
    let path: &[&Path] = &[
        &w.root.join("bin"),
        Path::new("bin"),
        Path::new("."),
        &w.outside,
        &w.outside.join("into-ws"),
        Path::new("/usr/bin"),
    ];
    let untrusted = binaries(&w, Trust::Untrusted, path)?;
    let kept = untrusted.child_path().map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    assert_eq!(kept, Some(vec![w.outside.clone(), PathBuf::from("/usr/bin")]));
    assert_eq!(binaries(&w, Trust::Trusted, path)?.child_path(), None);
    Ok(())
}

#[test]
fn after_trust_a_workspace_program_is_pinned_and_a_changed_one_refused_until_pinned_again() -> io::Result<()> {
    let w = world()?;
    // node_modules/.bin entries are links to scripts: the script is what is pinned.
    program(&w.root.join("node_modules/srv/cli.js"), "#!/usr/bin/env node\nconsole.log(1)\n")?;
    std::fs::create_dir_all(w.root.join("node_modules/.bin"))?;
    symlink("../srv/cli.js", w.root.join("node_modules/.bin/srv"))?;
    let trusted = binaries(&w, Trust::Trusted, &[])?;
    let Lookup::Found(found) = trusted.find("srv", &w.root, DIRS) else { panic!("not found") };
    assert_eq!(found, Program { path: w.root.join("node_modules/.bin/srv"), in_workspace: true });
    assert!(trusted.check(&found).is_ok(), "pinned on first use");
    let pins = std::fs::read_to_string(w.config.join(PIN_FILE))?;
    assert!(pins.contains(&format!(" {}\n", w.root.join("node_modules/.bin/srv").display())), "{pins}");
    assert!(trusted.check(&found).is_ok(), "unchanged");

    std::fs::write(w.root.join("node_modules/srv/cli.js"), "#!/usr/bin/env node\nrequire('child_process')\n")?;
    let err = trusted.check(&found);
    assert!(matches!(err, Err(BinaryError::Changed { .. })), "{err:?}");
    let message = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("tandem trust") && message.contains("again"), "{message}");

    // Trusting again pins what is there now.
    let pinned = trusted.pin(std::slice::from_ref(&found.path)).map_err(io::Error::other)?;
    assert_eq!(pinned, vec![w.root.join("node_modules/.bin/srv")]);
    assert!(trusted.check(&found).is_ok());
    // Revoking drops the folder's pins: the next trusted use pins anew.
    assert_eq!(unpin_under(&w.config, &w.root)?, 1);
    assert!(!std::fs::read_to_string(w.config.join(PIN_FILE))?.contains("srv"));
    Ok(())
}

#[test]
fn a_scripts_interpreter_in_the_workspace_is_pinned_too() -> io::Result<()> {
    let w = world()?;
    let python = w.root.join(".venv/bin/python");
    program(&python, "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n")?;
    program(&w.root.join(".venv/bin/srv"), &format!("#!{}\nimport srv\n", python.display()))?;
    let trusted = binaries(&w, Trust::Trusted, &[])?;
    let Lookup::Found(found) = trusted.find("srv", &w.root, DIRS) else { panic!("not found") };
    assert!(trusted.check(&found).is_ok());
    std::fs::write(&python, "#!/bin/sh\ntouch /tmp/pwned\n")?;
    assert!(matches!(trusted.check(&found), Err(BinaryError::Changed { path, .. }) if path == python));
    Ok(())
}

#[test]
fn without_a_place_for_pins_a_workspace_program_does_not_start() -> io::Result<()> {
    let w = world()?;
    program(&w.root.join(".venv/bin/srv"), "#!/bin/sh\n")?;
    let mut trusted = binaries(&w, Trust::Trusted, &[])?;
    trusted.pins = None;
    let found = Program { path: w.root.join(".venv/bin/srv"), in_workspace: true };
    assert!(matches!(trusted.check(&found), Err(BinaryError::Pins { .. })));
    Ok(())
}

/// The property: before trust, whatever `PATH`, command and workspace directories name —
/// entries in the workspace (absolute, relative, through symlinked folders), relative commands,
/// symlinks into the workspace from outside — what the lookup returns lies outside the
/// workspace, as the kernel resolves it.
mod property {
    use proptest::prelude::*;

    use super::*;

    /// Where a program named `srv` may be put, and how a `PATH` entry or a command may name it.
    const SPOTS: &[&str] = &[
        "ws/bin",
        "ws/node_modules/.bin",
        "ws/.venv/bin",
        "ws/vendor/bin",
        "ws/deep/er",
        "outside/real",
        "outside/links-in",
        "outside/link-to-ws-bin",
        "outside/link-to-ws",
    ];
    const ENTRIES: &[&str] = &[
        "@ws/bin",
        "@ws/vendor/bin",
        "@ws/deep/er",
        "@ws/deep/er/../../bin",
        "@outside/real",
        "@outside/links-in",
        "@outside/link-to-ws-bin",
        "@outside/link-to-ws/bin",
        "@outside/link-to-ws/deep/er",
        "@outside/real/../link-to-ws-bin",
        "bin",
        "./bin",
        "",
        ".",
        "vendor/bin",
        "deep/er/../../bin",
    ];
    const COMMANDS: &[&str] = &[
        "srv",
        "bin/srv",
        "./bin/srv",
        "vendor/bin/srv",
        "../ws/bin/srv",
        "@outside/real/srv",
        "@outside/links-in/srv",
        "@outside/link-to-ws-bin/srv",
        "@outside/link-to-ws/bin/srv",
        "@ws/bin/srv",
        "@ws/.venv/bin/srv",
        "node_modules/.bin/srv",
    ];

    fn spell(w: &World, raw: &str) -> String {
        let base = w.root.parent().map(Path::to_path_buf).unwrap_or_default();
        match raw.strip_prefix('@') {
            Some(rest) => base.join(rest).display().to_string(),
            None => raw.to_owned(),
        }
    }

    fn setup(w: &World, placed: &[usize]) -> io::Result<()> {
        let base = w.root.parent().map(Path::to_path_buf).unwrap_or_default();
        for dir in ["ws/bin", "ws/node_modules/.bin", "ws/.venv/bin", "ws/vendor/bin", "ws/deep/er", "outside/real"] {
            std::fs::create_dir_all(base.join(dir))?;
        }
        std::fs::create_dir_all(base.join("outside/links-in"))?;
        symlink(w.root.join("bin"), base.join("outside/link-to-ws-bin"))?;
        symlink(&w.root, base.join("outside/link-to-ws"))?;
        for &spot in placed {
            match SPOTS[spot] {
                "outside/links-in" => {
                    program(&w.root.join("vendor/bin/srv"), "#!/bin/sh\n")?;
                    symlink(w.root.join("vendor/bin/srv"), base.join("outside/links-in/srv")).ok();
                }
                "outside/link-to-ws-bin" | "outside/link-to-ws" => program(&w.root.join("bin/srv"), "#!/bin/sh\n")?,
                dir => program(&base.join(dir).join("srv"), "#!/bin/sh\n")?,
            }
        }
        Ok(())
    }

    /// Inside as the kernel sees it: the file it resolves to, or the folder it sits in.
    fn kernel_inside(w: &World, path: &Path) -> bool {
        let real = path.canonicalize().ok();
        let dir = path.parent().and_then(|d| d.canonicalize().ok());
        real.is_some_and(|r| r.starts_with(&w.root)) || dir.is_some_and(|d| d.starts_with(&w.root))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn nothing_found_before_trust_lies_in_the_workspace(
            placed in proptest::collection::vec(0..SPOTS.len(), 0..5),
            entries in proptest::collection::vec(proptest::sample::select(ENTRIES), 0..6),
            command in proptest::sample::select(COMMANDS),
            base_in_ws in any::<bool>(),
        ) {
            let w = world().map_err(|e| TestCaseError::fail(e.to_string()))?;
            setup(&w, &placed).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let spelled: Vec<PathBuf> = entries.iter().map(|e| PathBuf::from(spell(&w, e))).collect();
            let refs: Vec<&Path> = spelled.iter().map(PathBuf::as_path).collect();
            let untrusted = binaries(&w, Trust::Untrusted, &refs).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let base = if base_in_ws { w.root.clone() } else { w.outside.clone() };
            let command = spell(&w, command);
            match untrusted.find(&command, &base, DIRS) {
                Lookup::Found(found) => {
                    let started = if found.path.is_absolute() { found.path.clone() } else { w.root.join(&found.path) };
                    prop_assert!(!kernel_inside(&w, &started), "{command} on {entries:?} -> {}", started.display());
                    prop_assert!(!found.in_workspace);
                    prop_assert!(untrusted.check(&found).is_ok());
                }
                Lookup::InRepository(path) => {
                    let err = untrusted.check(&Program { path: path.clone(), in_workspace: true });
                    prop_assert!(matches!(err, Err(BinaryError::Untrusted { .. })), "{}", path.display());
                }
                Lookup::Missing => {}
            }
            // And what started programs search by name lies outside too.
            if let Some(path) = untrusted.child_path() {
                for dir in std::env::split_paths(&path) {
                    prop_assert!(dir.is_absolute() && !kernel_inside(&w, &dir.join("x")), "{}", dir.display());
                }
            }
        }
    }
}
