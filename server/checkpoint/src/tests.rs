use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: Store,
}

/// A fixture whose workspace holds `files` (path, text), snapshotted as turn 1 starts.
fn turn_one_over(files: &[(&str, &str)]) -> Fixture {
    let f = fixture();
    for (path, text) in files {
        f.write(path, text);
    }
    f.snap(Kind::BeforeTurn, 1);
    f
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
        self.store.snapshot("s1", Label::new(kind, turn), &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn snap_call(&self, kind: Kind, turn: u64, call: &str, effects: Option<Effects>) -> Checkpoint {
        let label = Label { kind, turn, call: Some((call.to_owned(), "edit".to_owned())), effects };
        self.store.snapshot("s1", label, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn hash(&self, path: &str) -> Option<u64> {
        std::fs::read(self.root.join(path)).ok().map(|bytes| content_hash(&bytes))
    }

    /// Writes (Some) or deletes (None) `path`, as a commit does: what it wrote, for the log.
    fn commit(&self, path: &str, content: Option<&[u8]>) -> Option<FileWrite> {
        let before = self.hash(path);
        match content {
            Some(bytes) => {
                let full = self.root.join(path);
                std::fs::create_dir_all(full.parent().unwrap_or(&self.root)).unwrap_or_else(|e| panic!("{e}"));
                std::fs::write(full, bytes).unwrap_or_else(|e| panic!("{e}"));
            }
            None => std::fs::remove_file(self.root.join(path)).ok()?,
        }
        Some(FileWrite { path: path.to_owned(), before, after: self.hash(path) })
    }

    /// Writes (Some) or deletes (None) the files `f{i}.txt` of `edits`, as `who`; the writes.
    fn apply(&self, edits: &[(usize, Option<u8>)], who: &str) -> Vec<FileWrite> {
        let text = |v: &u8| format!("{who} {v}\n");
        edits
            .iter()
            .filter_map(|(i, v)| self.commit(&format!("f{i}.txt"), v.as_ref().map(text).as_deref().map(str::as_bytes)))
            .collect()
    }

    /// A file tool's call: its window opens, `meanwhile` runs (as while it waits for review),
    /// its writes happen, and its window closes with them.
    fn tool_call_with(
        &self,
        turn: u64,
        call: &str,
        edits: &[(usize, Option<u8>)],
        meanwhile: impl FnOnce(),
    ) -> Vec<FileWrite> {
        self.snap_call(Kind::BeforeTool, turn, call, None);
        meanwhile();
        let writes = self.apply(edits, "agent");
        self.snap_call(Kind::AfterTool, turn, call, Some(Effects::Writes(writes.clone())));
        writes
    }

    fn tool_call(&self, turn: u64, call: &str, edits: &[(usize, Option<u8>)]) -> Vec<FileWrite> {
        self.tool_call_with(turn, call, edits, || {})
    }

    /// A command's call: its window, whose effects Tandem does not know file by file.
    fn command(&self, turn: u64, call: &str, edits: &[(usize, Option<u8>)]) -> Vec<FileWrite> {
        let mut writes = Vec::new();
        self.command_with(turn, call, || writes = self.apply(edits, "agent"));
        writes
    }

    fn command_with(&self, turn: u64, call: &str, run: impl FnOnce()) {
        self.snap_call(Kind::BeforeTool, turn, call, None);
        run();
        self.snap_call(Kind::AfterTool, turn, call, Some(Effects::Unknown));
    }

    /// Plans (after a BeforeRestore snapshot), applies the plan's files, and snapshots the end.
    fn restore(&self, target: Target, turn: u64) -> Plan {
        let now = self.snap(Kind::BeforeRestore, turn);
        let plan = self.store.plan("s1", &target, &now).unwrap_or_else(|e| panic!("{e}"));
        let writes = plan.files.iter().filter_map(|file| self.commit(&file.path, file.content.as_deref())).collect();
        let label = Label { effects: Some(Effects::Writes(writes)), ..Label::new(Kind::AfterRestore, turn) };
        self.store.snapshot("s1", label, &[]).unwrap_or_else(|e| panic!("{e}"));
        plan
    }
}

fn paths(list: &[Restored]) -> Vec<&str> {
    list.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn a_turn_is_undone_the_persons_later_edit_is_kept_and_redo_brings_the_turn_back() {
    let f = turn_one_over(&[("a.txt", "a0\n"), ("b.txt", "b0\n"), ("gone.txt", "g0\n")]);
    // The turn: a tool edits two files, a command creates a third and removes one.
    f.snap_call(Kind::BeforeTool, 1, "c1", None);
    let writes = [f.commit("a.txt", Some(b"a1\n")), f.commit("b.txt", Some(b"b1\n"))].into_iter().flatten().collect();
    f.snap_call(Kind::AfterTool, 1, "c1", Some(Effects::Writes(writes)));
    f.command_with(1, "c2", || {
        f.write("dir/made.txt", "new\n");
        std::fs::remove_file(f.root.join("gone.txt")).unwrap_or_else(|e| panic!("{e}"));
    });
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
    let f = turn_one_over(&[("a.txt", "a0\n"), ("b.txt", "b0\n")]);
    let write = |path: &str, text: &str| Effects::Writes(f.commit(path, Some(text.as_bytes())).into_iter().collect());
    f.snap_call(Kind::BeforeTool, 1, "c1", None);
    f.snap_call(Kind::AfterTool, 1, "c1", Some(write("a.txt", "a1\n")));
    f.snap_call(Kind::BeforeTool, 1, "c2", None);
    f.snap_call(Kind::AfterTool, 1, "c2", Some(write("b.txt", "b1\n")));
    f.snap_call(Kind::BeforeTool, 1, "c3", None);
    f.snap_call(Kind::AfterTool, 1, "c3", Some(write("b.txt", "b2\n")));
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
    let first = store.snapshot("s1", Label::new(Kind::BeforeTurn, 1), &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.skipped, ["big.log"]);
    let listed = store.git.run(&["ls-tree", "-r", "--name-only", &first.tree], None).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&listed), ".gitignore\nsrc/lib.rs\n");
    // The person's repository has no commit, nothing staged, and its index was never written.
    assert_eq!(git(&["status", "--porcelain"]).lines().count(), 4, "{}", git(&["status", "--porcelain"]));
    assert!(!f.root.join(".git/index").exists());
    // An unsaved buffer is snapshotted as the person sees it.
    let buffers = [(f.root.join("src/lib.rs"), "fn a() { unsaved }\n".to_owned())];
    let second = store.snapshot("s1", Label::new(Kind::BeforeTool, 1), &buffers).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        store.git.blob(&second.tree, "src/lib.rs").ok().flatten().as_deref(),
        Some(&b"fn a() { unsaved }\n"[..])
    );
}

type Edits = Vec<(usize, Option<u8>)>;

/// What happens while a turn runs.
#[derive(Clone, Debug)]
enum Event {
    /// A file tool writes (Some) or deletes (None) these files.
    Tool(Edits),
    /// A command does (its effects are not known file by file).
    Command(Edits),
    /// The person edits between the agent's calls (the model is thinking).
    Person(Edits),
    /// The person edits while a file tool waits for its review; then the tool writes.
    DuringReview(Edits, Edits),
}

/// What a random session does.
#[derive(Clone, Debug)]
enum Step {
    /// A turn.
    Turn(Vec<Event>),
    /// The person edits these files between turns.
    Person(Edits),
}

fn edits() -> impl Strategy<Value = Edits> {
    proptest::collection::vec((0usize..5, proptest::option::of(0u8..4)), 0..4)
}

fn step() -> impl Strategy<Value = Step> {
    let event = prop_oneof![
        edits().prop_map(Event::Tool),
        edits().prop_map(Event::Command),
        edits().prop_map(Event::Person),
        (edits(), edits()).prop_map(|(person, tool)| Event::DuringReview(person, tool)),
    ];
    prop_oneof![proptest::collection::vec(event, 0..5).prop_map(Step::Turn), edits().prop_map(Step::Person)]
}

/// Whose the content of a file is, since a turn began, as far as undoing that turn goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lineage {
    /// The person never changed it since.
    Agent,
    /// The person changed it, and what is there now derives from that (edited, not replaced).
    Person,
    /// The person changed it, then the agent removed it or created it anew: what is there now
    /// derives from nothing of theirs; either answer keeps the person's work.
    Replaced,
}

/// A random session's files, and whose each file's content is for each turn so far.
struct Oracle {
    lineage: Vec<[Lineage; 5]>,
    /// The state when the person's current run of edits began (`None`: no run).
    gap: Option<BTreeMap<usize, Option<String>>>,
}

impl Oracle {
    fn state(f: &Fixture) -> BTreeMap<usize, Option<String>> {
        (0..5).map(|i| (i, f.read(&format!("f{i}.txt")))).collect()
    }

    /// The person starts or goes on editing.
    fn person(&mut self, f: &Fixture, edits: &Edits) {
        self.gap.get_or_insert_with(|| Self::state(f));
        f.apply(edits, "person");
    }

    /// A snapshot comes: the person's run of edits counts by what it changed (a file created
    /// and removed again in one run is no change).
    fn settle(&mut self, f: &Fixture) {
        let Some(start) = self.gap.take() else { return };
        let now = Self::state(f);
        for lineage in &mut self.lineage {
            for i in (0..5).filter(|i| start[i] != now[i]) {
                lineage[i] = Lineage::Person;
            }
        }
    }

    /// The agent's writes: a removal, or a file created where there was none, ends the person's
    /// part in a file.
    fn agent(&mut self, writes: &[FileWrite]) {
        for write in writes.iter().filter(|w| w.after.is_none() || w.before.is_none()) {
            let i: usize = write.path.trim_start_matches('f').trim_end_matches(".txt").parse().unwrap_or(usize::MAX);
            for lineage in &mut self.lineage {
                if lineage.get(i) == Some(&Lineage::Person) {
                    lineage[i] = Lineage::Replaced;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]
    /// Restoring a turn brings every file back to its content before that turn, except the
    /// files the person changed since (between turns, or while a turn ran: between the agent's
    /// calls, or while a file tool waited for review), which are conflicts and are left as they
    /// are; a file only the agent changed is never a conflict.
    #[test]
    fn restores_never_overwrite_the_person_and_miss_nothing(steps in proptest::collection::vec(step(), 1..7), pick in 0usize..8) {
        let f = fixture();
        let name = |i: usize| format!("f{i}.txt");
        let mut oracle = Oracle { lineage: Vec::new(), gap: None };
        let mut before_turn = Vec::new();
        let (mut turn, mut calls) = (0, 0);
        for step in &steps {
            match step {
                Step::Turn(events) => {
                    oracle.settle(&f);
                    turn += 1;
                    f.snap(Kind::BeforeTurn, turn);
                    before_turn.push(Oracle::state(&f));
                    oracle.lineage.push([Lineage::Agent; 5]);
                    for event in events {
                        calls += 1;
                        let id = format!("c{calls}");
                        if !matches!(event, Event::Person(_)) {
                            oracle.settle(&f);
                        }
                        match event {
                            Event::Tool(edits) => oracle.agent(&f.tool_call(turn, &id, edits)),
                            Event::Command(edits) => oracle.agent(&f.command(turn, &id, edits)),
                            Event::Person(edits) => oracle.person(&f, edits),
                            Event::DuringReview(by_person, edits) => {
                                let writes = f.tool_call_with(turn, &id, edits, || {
                                    oracle.person(&f, by_person);
                                    oracle.settle(&f);
                                });
                                oracle.agent(&writes);
                            }
                        }
                    }
                    oracle.settle(&f);
                    f.snap(Kind::AfterTurn, turn);
                }
                Step::Person(edits) => oracle.person(&f, edits),
            }
        }
        oracle.settle(&f);
        prop_assume!(turn > 0);
        let k = pick % turn as usize;
        let current = Oracle::state(&f);
        let plan = f.restore(Target::Turn(k as u64 + 1), turn);
        let after = Oracle::state(&f);
        for i in 0..5 {
            let restored = plan.files.iter().any(|r| r.path == name(i));
            let conflict = plan.conflicts.iter().any(|r| r.path == name(i));
            if restored {
                prop_assert_eq!(&after[&i], &before_turn[k][&i], "file {} restored exactly", i);
            } else {
                prop_assert_eq!(&after[&i], &current[&i], "file {} untouched", i);
            }
            if current[&i] != before_turn[k][&i] {
                match oracle.lineage[k][i] {
                    // The person's work is never overwritten...
                    Lineage::Person => prop_assert!(conflict && !restored, "file {} is the person's: {:?}", i, plan),
                    // ...the agent's alone is restored...
                    Lineage::Agent => prop_assert!(restored && !conflict, "file {} is the agent's: {:?}", i, plan),
                    // ...and nothing that differs is missed.
                    Lineage::Replaced => prop_assert!(restored || conflict, "file {} missed: {:?}", i, plan),
                }
            }
        }
    }
}

#[test]
fn changes_name_what_changed_after_each_checkpoint_and_file_gives_its_content_there() {
    let f = fixture();
    f.write("a.txt", "a0\n");
    let first = f.snap(Kind::BeforeTurn, 1);
    f.command_with(1, "c1", || {
        f.write("a.txt", "a1\n");
        f.write("b.txt", "b1\n");
    });
    let last = f.snap(Kind::AfterTurn, 1);
    let list = f.store.list("s1").unwrap_or_else(|e| panic!("{e}"));
    let changes = f.store.changes(&list).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(changes, vec![vec![], vec!["a.txt".to_owned(), "b.txt".to_owned()], vec![], vec![]]);
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
    store
        .snapshot("s1", Label { kind: Kind::BeforeTurn, turn: 1, call: None, effects: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("a.txt"), "b\n").unwrap_or_else(|e| panic!("{e}"));
    store
        .snapshot("s1", Label { kind: Kind::AfterTurn, turn: 1, call: None, effects: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
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
    store
        .snapshot("s1", Label { kind: Kind::AfterTurn, turn: 1, call: None, effects: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
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
        .snapshot("s1", Label { kind: Kind::BeforeTurn, turn: 1, call: None, effects: None }, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.file("s1", first.id, "a.txt").ok().flatten(), Some(b"a\n".to_vec()));
    assert_eq!(store.file("s1", first.id, ".local/state/tandem/projects/x/session.jsonl").ok().flatten(), None);
}

#[test]
fn the_persons_edit_while_a_command_waits_for_approval_or_after_a_dry_run_is_a_conflict() {
    let f = turn_one_over(&[("a.txt", "a0\n"), ("b.txt", "b0\n"), ("c.txt", "c0\n")]);
    // The command asks; the person edits b.txt meanwhile; once allowed, its window opens again.
    f.snap_call(Kind::BeforeTool, 1, "c1", None);
    f.write("b.txt", "b0 mine\n");
    f.command_with(1, "c1", || f.write("a.txt", "a1\n"));
    f.snap(Kind::AfterTurn, 1);
    // A dry run, then the person edits c.txt before the real restore.
    let dry = f.snap(Kind::BeforeRestore, 1);
    f.store.plan("s1", &Target::Turn(1), &dry).unwrap_or_else(|e| panic!("{e}"));
    f.write("c.txt", "c0 mine\n");
    let plan = f.restore(Target::Turn(1), 1);
    assert_eq!(paths(&plan.files), ["a.txt"]);
    assert_eq!(paths(&plan.conflicts), ["b.txt", "c.txt"]);
    assert_eq!((f.read("a.txt"), f.read("b.txt")), (Some("a0\n".into()), Some("b0 mine\n".into())));
    assert_eq!(f.read("c.txt").as_deref(), Some("c0 mine\n"));
    // Undoing the call alone: the same.
    f.write("a.txt", "a1\n");
    let plan = f.restore(Target::Call("c1".into()), 1);
    assert!(plan.files.is_empty() && paths(&plan.conflicts) == ["a.txt"], "changed again since: {plan:?}");
}

#[test]
fn a_file_tools_window_explains_only_its_own_writes() {
    let f = turn_one_over(&[("a.txt", "a0\n"), ("b.txt", "b0\n")]);
    // While the edit of a.txt waits for review, the person edits b.txt, and a.txt right before
    // the tool loads it: the tool's write replaced the person's text, not the snapshot's.
    f.snap_call(Kind::BeforeTool, 1, "c1", None);
    f.write("b.txt", "b0 mine\n");
    f.write("a.txt", "a0 mine\n");
    let writes = f.commit("a.txt", Some(b"a1\n")).into_iter().collect();
    f.snap_call(Kind::AfterTool, 1, "c1", Some(Effects::Writes(writes)));
    f.snap(Kind::AfterTurn, 1);
    let plan = f.restore(Target::Turn(1), 1);
    assert!(plan.files.is_empty(), "{plan:?}");
    assert_eq!(paths(&plan.conflicts), ["a.txt", "b.txt"]);
}

#[test]
fn changes_undo_cannot_bring_back_are_named_and_the_persons_files_left_out_are_found() {
    let f = fixture();
    f.write(".gitignore", "*.env\n");
    f.write("secret.env", "KEY=mine\n");
    f.write("big.log", &"x".repeat(2000));
    f.write("logs/old.log", &"y".repeat(2000));
    f.write("a.txt", "a0\n");
    let store = Store::open(&f.root, &f.root.join(".tandem/checkpoints"))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_max_file_bytes(1000);
    let f = Fixture { store, ..f };
    let left_out = |paths: &[&str]| {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        f.store.left_out(&paths).unwrap_or_else(|e| panic!("{e}"))
    };
    // Before any snapshot: by size and by the ignore rules.
    assert_eq!(
        left_out(&["a.txt", "big.log", "secret.env", "missing.txt"]),
        [("big.log".to_owned(), LeftOut::TooLarge), ("secret.env".to_owned(), LeftOut::Ignored)]
    );
    f.snap(Kind::BeforeTurn, 1);
    // A directory a command would remove: the large files under it. A name under a link is
    // none of the snapshots' business (git would refuse it).
    std::os::unix::fs::symlink(&f.root, f.root.join("link")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(left_out(&["logs", "link/secret.env"]), [("logs/old.log".to_owned(), LeftOut::TooLarge)]);
    // A file tool overwrites the ignored file; a command removes the large one and edits a.txt.
    f.snap_call(Kind::BeforeTool, 1, "c1", None);
    let writes = f.commit("secret.env", Some(b"KEY=agent\n")).into_iter().collect();
    f.snap_call(Kind::AfterTool, 1, "c1", Some(Effects::Writes(writes)));
    f.command_with(1, "c2", || {
        std::fs::remove_file(f.root.join("big.log")).unwrap_or_else(|e| panic!("{e}"));
        f.write("a.txt", "a1\n");
    });
    f.snap(Kind::AfterTurn, 1);
    // The person changes the other large file: theirs, not named.
    f.write("logs/old.log", &"z".repeat(2000));
    let plan = f.restore(Target::Turn(1), 1);
    assert_eq!(paths(&plan.files), ["a.txt"]);
    assert_eq!(plan.not_covered, ["big.log", "secret.env"]);
}

#[test]
fn a_directory_that_became_a_link_is_planned_without_error() {
    let f = turn_one_over(&[("sub/c.txt", "c0\n")]);
    f.command_with(1, "c1", || {
        std::fs::remove_dir_all(f.root.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/tmp", f.root.join("sub")).unwrap_or_else(|e| panic!("{e}"));
    });
    f.snap(Kind::AfterTurn, 1);
    let now = f.snap(Kind::BeforeRestore, 1);
    let plan = f.store.plan("s1", &Target::Turn(1), &now).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(paths(&plan.files), ["sub", "sub/c.txt"]);
    assert_eq!(plan.files[0].content, None, "the link goes; the directory held no file named `sub`");
    assert_eq!(plan.files[1].content.as_deref(), Some(&b"c0\n"[..]));
}

#[test]
fn a_large_files_change_is_seen_by_every_session_whatever_the_others_snapshot() {
    let f = fixture();
    f.write("big.log", &"x".repeat(2000));
    let store = Store::open(&f.root, &f.root.join(".tandem/checkpoints"))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_max_file_bytes(1000);
    let snap =
        |session: &str| store.snapshot(session, Label::new(Kind::BeforeTool, 1), &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(snap("a").skipped, ["big.log"]);
    assert!(snap("b").large_changed.is_empty(), "a session's first sight of it is no change");
    f.write("big.log", &"y".repeat(3000));
    assert_eq!(snap("a").large_changed, ["big.log"]);
    assert_eq!(snap("b").large_changed, ["big.log"], "session a's snapshot hides nothing from b");
    assert!(snap("b").large_changed.is_empty());
}
