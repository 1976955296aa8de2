use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join(".tandem/checkpoints")).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(&root, &root.join(".tandem/checkpoints")).unwrap_or_else(|e| panic!("{e}"));
    Fixture { _dir: dir, root, store }
}

impl Fixture {
    fn write(&self, path: &str, text: &str) {
        let path = self.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(&self.root)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn snap(&self, kind: Kind, turn: u64) -> Checkpoint {
        self.store.snapshot("s1", Label { kind, turn, call: None }, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn snap_call(&self, turn: u64, call: &str) -> Checkpoint {
        let label = Label { kind: Kind::BeforeTool, turn, call: Some((call.to_owned(), "edit".to_owned())) };
        self.store.snapshot("s1", label, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Plans (after a BeforeRestore snapshot), applies the plan's files, and snapshots the end.
    fn restore(&self, target: Target, turn: u64) -> Plan {
        let now = self.snap(Kind::BeforeRestore, turn);
        let plan = self.store.plan("s1", &target, &now).unwrap_or_else(|e| panic!("{e}"));
        for file in &plan.files {
            let path = self.root.join(&file.path);
            match &file.content {
                Some(bytes) => std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{e}")),
                None => std::fs::remove_file(path).unwrap_or_else(|e| panic!("{e}")),
            }
        }
        self.snap(Kind::AfterRestore, turn);
        plan
    }
}

fn paths(list: &[Restored]) -> Vec<&str> {
    list.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn a_turn_is_undone_the_persons_later_edit_is_kept_and_redo_brings_the_turn_back() {
    let f = fixture();
    f.write("a.txt", "a0\n");
    f.write("b.txt", "b0\n");
    f.write("gone.txt", "g0\n");
    f.snap(Kind::BeforeTurn, 1);
    // The turn: edits two files, a command creates a third and removes one.
    f.write("a.txt", "a1\n");
    f.write("b.txt", "b1\n");
    f.write("dir/made.txt", "new\n");
    std::fs::remove_file(f.root.join("gone.txt")).unwrap_or_else(|e| panic!("{e}"));
    f.snap(Kind::AfterTurn, 1);
    // Then the person edits b.txt by hand.
    f.write("b.txt", "b1 and mine\n");
    let plan = f.restore(Target::Turn(1), 1);
    assert_eq!(paths(&plan.files), ["a.txt", "dir/made.txt", "gone.txt"]);
    assert_eq!(paths(&plan.conflicts), ["b.txt"]);
    assert_eq!(plan.conflicts[0].content.as_deref(), Some(&b"b0\n"[..]), "the conflict offers the old text");
    assert_eq!((f.read("a.txt"), f.read("b.txt")), (Some("a0\n".into()), Some("b1 and mine\n".into())));
    assert_eq!((f.read("dir/made.txt"), f.read("gone.txt")), (None, Some("g0\n".into())));
    // Redo: back to the state the restore replaced.
    let before_restore = f.store.list("s1").unwrap_or_default().iter().rev().nth(1).map_or(0, |c| c.id);
    let redo = f.restore(Target::Checkpoint(before_restore), 1);
    assert!(redo.conflicts.is_empty(), "{:?}", redo.conflicts);
    assert_eq!(
        (f.read("a.txt"), f.read("dir/made.txt"), f.read("gone.txt")),
        (Some("a1\n".into()), Some("new\n".into()), None)
    );
}

#[test]
fn one_tool_call_is_undone_alone_unless_its_file_changed_since() {
    let f = fixture();
    f.write("a.txt", "a0\n");
    f.write("b.txt", "b0\n");
    f.snap(Kind::BeforeTurn, 1);
    f.snap_call(1, "c1");
    f.write("a.txt", "a1\n");
    f.snap_call(1, "c2");
    f.write("b.txt", "b1\n");
    f.snap_call(1, "c3");
    f.write("b.txt", "b2\n");
    f.snap(Kind::AfterTurn, 1);
    let plan = f.restore(Target::Call("c1".into()), 1);
    assert_eq!(paths(&plan.files), ["a.txt"]);
    assert_eq!(f.read("a.txt").as_deref(), Some("a0\n"));
    // c2's file was changed again by c3: undoing c2 alone would lose c3's change.
    let plan = f.restore(Target::Call("c2".into()), 1);
    assert!(plan.files.is_empty() && paths(&plan.conflicts) == ["b.txt"], "{plan:?}");
    assert!(matches!(
        f.store.plan("s1", &Target::Call("nope".into()), &plan.target),
        Err(CheckpointError::Unknown { .. })
    ));
}

#[test]
fn ignored_large_and_state_files_stay_out_and_the_persons_repository_is_untouched() {
    let f = fixture();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&f.root)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    f.write(".gitignore", "build/\n");
    f.write("build/out.bin", "generated\n");
    f.write("src/lib.rs", "fn a() {}\n");
    let store = Store::open(&f.root, &f.root.join(".tandem/checkpoints"))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_max_file_bytes(1000);
    f.write("big.log", &"x".repeat(2000));
    let first = store
        .snapshot("s1", Label { kind: Kind::BeforeTurn, turn: 1, call: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.skipped, ["big.log"]);
    let listed = store.git.run(&["ls-tree", "-r", "--name-only", &first.tree], None).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&listed), ".gitignore\nsrc/lib.rs\n");
    // The person's repository has no commit, nothing staged, and its index was never written.
    assert_eq!(git(&["status", "--porcelain"]).lines().count(), 4, "{}", git(&["status", "--porcelain"]));
    assert!(!f.root.join(".git/index").exists());
    // An unsaved buffer is snapshotted as the person sees it.
    let buffers = [(f.root.join("src/lib.rs"), "fn a() { unsaved }\n".to_owned())];
    let second = store
        .snapshot("s1", Label { kind: Kind::BeforeTool, turn: 1, call: None }, &buffers)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        store.git.blob(&second.tree, "src/lib.rs").ok().flatten().as_deref(),
        Some(&b"fn a() { unsaved }\n"[..])
    );
}

/// What a random session does between snapshots.
#[derive(Clone, Debug)]
enum Step {
    /// A turn in which the agent writes (Some) or deletes (None) these files.
    Turn(Vec<(usize, Option<u8>)>),
    /// The person edits these files between turns.
    Person(Vec<(usize, Option<u8>)>),
}

fn step() -> impl Strategy<Value = Step> {
    let edits = proptest::collection::vec((0usize..5, proptest::option::of(0u8..4)), 0..4);
    prop_oneof![edits.clone().prop_map(Step::Turn), edits.prop_map(Step::Person)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    /// Restoring a turn brings every file back to its content before that turn, except the
    /// files the person changed since, which are conflicts and are left as they are.
    #[test]
    fn restores_never_overwrite_the_person_and_miss_nothing(steps in proptest::collection::vec(step(), 1..7), pick in 0usize..8) {
        let f = fixture();
        let name = |i: usize| format!("f{i}.txt");
        let apply = |edits: &[(usize, Option<u8>)], who: &str| {
            for (i, content) in edits {
                match content {
                    Some(v) => f.write(&name(*i), &format!("{who} {v}\n")),
                    None => { std::fs::remove_file(f.root.join(name(*i))).ok(); }
                }
            }
        };
        let state = || -> BTreeMap<usize, Option<String>> { (0..5).map(|i| (i, f.read(&name(i)))).collect() };
        let mut before_turn = Vec::new();
        let mut person_touched_after: Vec<std::collections::BTreeSet<usize>> = Vec::new();
        let mut turn = 0;
        for step in &steps {
            match step {
                Step::Turn(edits) => {
                    turn += 1;
                    f.snap(Kind::BeforeTurn, turn);
                    before_turn.push(state());
                    person_touched_after.push(Default::default());
                    apply(edits, "agent");
                    f.snap(Kind::AfterTurn, turn);
                }
                Step::Person(edits) => {
                    let before = state();
                    apply(edits, "person");
                    let after = state();
                    // Only a real change counts (deleting a missing file is none).
                    let changed: Vec<usize> = (0..5).filter(|i| before[i] != after[i]).collect();
                    for touched in &mut person_touched_after {
                        touched.extend(changed.iter().copied());
                    }
                }
            }
        }
        prop_assume!(turn > 0);
        let k = pick % turn as usize;
        let current = state();
        let plan = f.restore(Target::Turn(k as u64 + 1), turn);
        let after = state();
        for i in 0..5 {
            let restored = plan.files.iter().any(|r| r.path == name(i));
            let conflict = plan.conflicts.iter().any(|r| r.path == name(i));
            if restored {
                prop_assert_eq!(&after[&i], &before_turn[k][&i], "file {} restored exactly", i);
            } else {
                prop_assert_eq!(&after[&i], &current[&i], "file {} untouched", i);
            }
            // A file the person changed or removed since is never overwritten...
            if person_touched_after[k].contains(&i) && current[&i] != before_turn[k][&i] {
                prop_assert!(!restored, "file {} was the person's", i);
            }
            // ...and nothing that differs is missed.
            if current[&i] != before_turn[k][&i] {
                prop_assert!(restored || conflict, "file {} missed", i);
            }
        }
    }
}

#[test]
fn changes_name_what_changed_after_each_checkpoint_and_file_gives_its_content_there() {
    let f = fixture();
    f.write("a.txt", "a0\n");
    let first = f.snap(Kind::BeforeTurn, 1);
    f.snap_call(1, "c1");
    f.write("a.txt", "a1\n");
    f.write("b.txt", "b1\n");
    let last = f.snap(Kind::AfterTurn, 1);
    let list = f.store.list("s1").unwrap_or_else(|e| panic!("{e}"));
    let changes = f.store.changes(&list).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(changes, vec![vec![], vec!["a.txt".to_owned(), "b.txt".to_owned()], vec![]]);
    let file = |id, path| f.store.file("s1", id, path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file(first.id, "a.txt"), Some(b"a0\n".to_vec()));
    assert_eq!(file(last.id, "a.txt"), Some(b"a1\n".to_vec()));
    assert_eq!(file(first.id, "b.txt"), None);
    assert!(matches!(f.store.file("s1", 99, "a.txt"), Err(CheckpointError::Unknown { .. })));
}

#[test]
fn changed_pairs_match_one_diff_per_pair_across_batches() {
    let f = fixture();
    f.write("a b.txt", "0\n");
    let first = f.snap(Kind::BeforeTurn, 1);
    f.write("a b.txt", "1\n");
    f.write("dir/new.txt", "n\n");
    let second = f.snap(Kind::AfterTurn, 1);
    let (t1, t2) = (first.tree.as_str(), second.tree.as_str());
    let one = f.store.git.changed(t1, t2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(one, vec!["a b.txt".to_owned(), "dir/new.txt".to_owned()]);
    // More pairs than one call takes, equal ones among them.
    let pairs: Vec<(&str, &str)> = (0..900).map(|i| if i % 3 == 0 { (t1, t1) } else { (t1, t2) }).collect();
    let all = f.store.git.changed_pairs(&pairs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(all.len(), 900);
    for (i, files) in all.iter().enumerate() {
        assert_eq!(files, &if i % 3 == 0 { Vec::new() } else { one.clone() }, "pair {i}");
    }
}

/// A store Tandem did not make — with a file system monitor, a hook and a clean filter that
/// would run a program — is set aside, never run, and a store of Tandem's own is made.
#[test]
fn a_store_tandem_did_not_make_is_set_aside_and_never_run() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (root, state) = (dir.path().join("ws"), dir.path().join("state/checkpoints"));
    let marker = dir.path().join("ran");
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("a.txt"), "a\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join(".gitattributes"), "* filter=evil\n").unwrap_or_else(|e| panic!("{e}"));
    let git = state.join("git");
    let status = std::process::Command::new("git").args(["init", "-q"]).arg(&git).status();
    assert!(status.is_ok_and(|s| s.success()));
    let script = dir.path().join("x.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho ran >> '{}'\ncat\n", marker.display()))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut config = std::fs::read_to_string(git.join("config")).unwrap_or_default();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = {0}\n[filter \"evil\"]\n\tclean = {0}\n\tsmudge = {0}\n",
        script.display()
    ));
    std::fs::write(git.join("config"), config).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(git.join("hooks")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(&script, git.join("hooks/reference-transaction")).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(&root, &state).unwrap_or_else(|e| panic!("{e}"));
    store.snapshot("s1", Label { kind: Kind::BeforeTurn, turn: 1, call: None }, &[]).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("a.txt"), "b\n").unwrap_or_else(|e| panic!("{e}"));
    store.snapshot("s1", Label { kind: Kind::AfterTurn, turn: 1, call: None }, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(!marker.exists(), "the foreign store's git config ran");
    let aside = std::fs::read_dir(dir.path().join("state"))
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("checkpoints.foreign-"));
    assert!(aside);
    // And should its own config be changed behind its back, still nothing runs.
    let mut config = std::fs::read_to_string(state.join("git/config")).unwrap_or_default();
    config.push_str(&format!("[core]\n\tfsmonitor = {}\n", script.display()));
    std::fs::write(state.join("git/config"), config).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(state.join("git/hooks/reference-transaction"), "").ok();
    std::fs::create_dir_all(state.join("git/hooks")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(&script, state.join("git/hooks/reference-transaction")).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(&root, &state).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("a.txt"), "c\n").unwrap_or_else(|e| panic!("{e}"));
    store.snapshot("s1", Label { kind: Kind::AfterTurn, turn: 1, call: None }, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(!marker.exists(), "the store's changed config ran");
}

/// Tandem's state folder inside the workspace (a workspace opened at the home directory) is
/// never snapshotted.
#[test]
fn the_state_folder_inside_the_workspace_is_left_out() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().join("home");
    let state = root.join(".local/state/tandem");
    std::fs::create_dir_all(state.join("projects/x/checkpoints")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(state.join("projects/x/session.jsonl"), "{}\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("a.txt"), "a\n").unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(&root, &state.join("projects/x/checkpoints"))
        .and_then(|s| s.excluding(&state))
        .unwrap_or_else(|e| panic!("{e}"));
    let first = store
        .snapshot("s1", Label { kind: Kind::BeforeTurn, turn: 1, call: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.file("s1", first.id, "a.txt").ok().flatten(), Some(b"a\n".to_vec()));
    assert_eq!(store.file("s1", first.id, ".local/state/tandem/projects/x/session.jsonl").ok().flatten(), None);
}
