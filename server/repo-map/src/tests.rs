//! The map end to end on real files: ranking, budget, cache, skips.

use std::path::Path;

use proptest::prelude::*;

use crate::{Request, map};

type Res = Result<(), Box<dyn std::error::Error>>;

use tandem_tool_api::testing::write_files as write;

const TREE: &[(&str, &str)] = &[
    ("src/upload.rs", "pub struct Uploader;\nimpl Uploader {\n    pub fn retry_failed_uploads(&self) {}\n}\n"),
    ("src/main.rs", "fn main() { let u = Uploader; u.retry_failed_uploads(); render_page(); }\n"),
    ("src/page.rs", "pub fn render_page() {}\n"),
    ("web/client.ts", "export class HttpClient { send(): void {} }\n"),
    ("tools/build.py", "def build_archive():\n    pass\n"),
    ("README.md", "# not source\n"),
];

/// A temporary directory holding [`TREE`] in its folder `ws` (the root, returned beside it).
fn tree() -> std::io::Result<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("ws");
    write(&root, TREE)?;
    Ok((dir, root))
}

/// A request that keeps its cache in `dir`.
fn request(dir: &Path, query: &str) -> Request {
    Request { query: query.to_owned(), cache: Some(dir.join("cache")), ..Default::default() }
}

#[test]
fn the_file_that_defines_what_the_query_names_comes_first() -> Res {
    let (dir, root) = tree()?;
    let map = map(&root, &request(dir.path(), "retry failed uploads"))?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("src/upload.rs"));
    assert!(map.text.starts_with("src/upload.rs:\n⋮\n│pub struct Uploader;\n│impl Uploader {\n│    pub fn retry_failed_uploads(&self) {}\n⋮\n"), "{}", map.text);
    let map = crate::map(&root, &request(dir.path(), "HttpClient send"))?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("web/client.ts"));
    // Without a query, the files others use rank above those nobody uses.
    let map = crate::map(&root, &request(dir.path(), ""))?;
    let at = |p: &str| map.ranked.iter().position(|r| r.path == p);
    assert!(at("src/page.rs") < at("tools/build.py"), "{:?}", map.ranked);
    assert_eq!(map.stats.other, 1, "README.md is no source file");
    Ok(())
}

#[test]
fn paths_limit_the_map_and_a_bad_glob_says_which() -> Res {
    let (dir, root) = tree()?;
    let map = map(&root, &Request { paths: vec!["src/**".into()], ..request(dir.path(), "build") })?;
    assert!(map.ranked.iter().all(|r| r.path.starts_with("src/")), "{:?}", map.ranked);
    assert_eq!(map.ranked.len(), 3);
    let err = crate::map(&root, &Request { paths: vec!["src/[".into()], ..request(dir.path(), "") }).err();
    assert!(err.is_some_and(|e| e.to_string().contains("`src/[`")));
    Ok(())
}

#[test]
fn big_binary_and_ignored_files_are_skipped_and_counted() -> Res {
    let (dir, root) = tree()?;
    write(&root, &[(".gitignore", "gen/\n"), ("gen/out.rs", "fn generated() {}\n"), ("blob.c", "int a;\0\0\0")])?;
    let big = format!("// {}\n", "x".repeat(crate::scan::MAX_FILE_BYTES as usize));
    write(&root, &[("big.rs", &big)])?;
    std::os::unix::fs::symlink("/etc/passwd", root.join("link.rs"))?;
    let map = map(&root, &request(dir.path(), ""))?;
    assert!(map.ranked.iter().all(|r| !r.path.starts_with("gen/") && r.path != "link.rs"), "{:?}", map.ranked);
    assert_eq!((map.stats.too_big, map.stats.binary), (1, 1));
    assert_eq!(map.stats.ignored, 2, "gen/ and .gitignore (hidden): {:?}", map.stats);
    assert_eq!(map.stats.outlined, 5);
    Ok(())
}

/// Waits until the file system's clock is past every file's change time by the cache's margin
/// (a probe file's change time says where the clock is).
fn wait_until_settled(root: &Path, probe: &Path) -> Res {
    use std::os::unix::fs::MetadataExt as _;
    let newest = walk_ctimes(root)?.into_iter().max().unwrap_or(0);
    loop {
        std::fs::write(probe, "")?;
        let meta = std::fs::metadata(probe)?;
        let now = meta.ctime() * 1_000_000_000 + meta.ctime_nsec();
        if now > newest + crate::cache::RACY_MARGIN_NS {
            return Ok(());
        }
        std::thread::yield_now();
    }
}

fn walk_ctimes(dir: &Path) -> std::io::Result<Vec<i64>> {
    use std::os::unix::fs::MetadataExt as _;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_dir() {
            out.extend(walk_ctimes(&entry.path())?);
        } else {
            out.push(meta.ctime() * 1_000_000_000 + meta.ctime_nsec());
        }
    }
    Ok(out)
}

#[test]
fn a_second_map_of_an_unchanged_tree_reads_no_file() -> Res {
    let (dir, root) = tree()?;
    wait_until_settled(&root, &dir.path().join("probe"))?;
    let first = map(&root, &request(dir.path(), "upload"))?;
    assert_eq!((first.stats.read, first.stats.parsed), (5, 5));
    let second = map(&root, &request(dir.path(), "page"))?;
    assert_eq!((second.stats.read, second.stats.parsed), (0, 0), "{:?}", second.stats);
    // A new process finds the cache in its folder on disk.
    crate::forget_in_process(&root, Some(&dir.path().join("cache")));
    let third = map(&root, &request(dir.path(), "page"))?;
    assert_eq!((third.stats.read, third.stats.parsed, third.stats.outlined), (0, 0, 5), "{:?}", third.stats);
    assert_eq!(third.ranked, second.ranked);
    // A changed file is read again, and only it; the same content elsewhere is not parsed again.
    write(&root, &[("src/page.rs", "pub fn render_page() {}\npub fn paginate() {}\n")])?;
    write(
        &root,
        &[("src/copy.rs", "pub struct Uploader;\nimpl Uploader {\n    pub fn retry_failed_uploads(&self) {}\n}\n")],
    )?;
    let fourth = map(&root, &request(dir.path(), "paginate"))?;
    assert_eq!((fourth.stats.read, fourth.stats.parsed), (2, 1), "{:?}", fourth.stats);
    assert_eq!(fourth.ranked.first().map(|r| r.path.as_str()), Some("src/page.rs"));
    Ok(())
}

#[test]
fn an_open_document_is_outlined_from_the_editor_and_ranks_higher() -> Res {
    let (dir, root) = tree()?;
    let open = vec![(
        root.join("tools/build.py"),
        "def build_archive():\n    pass\ndef upload_wheels():\n    pass\n".to_owned(),
    )];
    let map = map(&root, &Request { open, ..request(dir.path(), "") })?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("tools/build.py"));
    assert!(map.text.contains("│def upload_wheels():"), "{}", map.text);
    let session = vec![root.join("web/client.ts")];
    let map = crate::map(&root, &Request { session, ..request(dir.path(), "") })?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("web/client.ts"));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the query and budget: scores are finite and sorted, the text stays within the
    /// budget, and the files it shows are the best-ranked ones, in order.
    #[test]
    fn scores_are_finite_and_sorted_and_the_budget_holds(
        query in "[a-zA-Z_ ]{0,30}",
        max_tokens in 0usize..300,
        max_files in 1usize..8,
    ) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let root = dir.path().join("ws");
        write(&root, TREE).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let request = Request { max_tokens, max_files, ..request(dir.path(), &query) };
        let map = map(&root, &request).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(map.ranked.iter().all(|r| r.score.is_finite() && r.score >= 0.0));
        prop_assert!(map.ranked.windows(2).all(|w| w[0].score >= w[1].score));
        prop_assert!(crate::tokens(&map.text) <= max_tokens, "{} > {max_tokens}", crate::tokens(&map.text));
        prop_assert!(map.shown.len() <= max_files);
        prop_assert_eq!(&map.shown[..], &map.ranked[..map.shown.len()]);
        for shown in &map.shown {
            let header = format!("{}:\n", shown.path);
            prop_assert!(map.text.contains(&header));
        }
    }
}

const VOCABULARY: &[&str] = &[
    "upload", "retry", "cache", "token", "stream", "buffer", "parse", "render", "config", "session", "queue", "worker",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A file whose path and definitions hold every word of the query ranks first, however
    /// often other files (with at most one of the words in their path, and definitions named
    /// after each word alone) repeat the words.
    #[test]
    fn a_file_named_and_defining_every_query_word_ranks_first(
        pair in proptest::sample::subsequence(VOCABULARY, 2),
        others in proptest::collection::vec((0usize..12, 0usize..12, 1usize..40), 1..12),
    ) {
        let (a, b) = (pair[0], pair[1]);
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let root = dir.path().join("ws");
        let target = format!("src/{a}_{b}.rs");
        let mut files = vec![(target.clone(), format!("pub fn {a}_{b}() {{}}\n"))];
        for (i, (x, y, repeats)) in others.iter().enumerate() {
            // At most one query word in the path; the text says both words, many times.
            let (x, y) = (VOCABULARY[*x], VOCABULARY[*y]);
            let named = if x == b || y == b { format!("{x}_{i}") } else { format!("{x}_{y}_{i}") };
            let text = format!(
                "// {}\npub fn {a}_{i}() {{ {a}_{b}(); }}\npub fn {b}_{i}() {{ {a}_{b}(); }}\n",
                format!("{a} {b} ").repeat(*repeats)
            );
            files.push((format!("lib/{named}.rs"), text));
        }
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        write(&root, &files).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let map = map(&root, &request(dir.path(), &format!("{a} {b}"))).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some(target.as_str()), "{:?}", map.ranked);
    }
}

/// The first file of the map of `files` for `query`.
fn first_for(files: &[(&str, &str)], query: &str) -> Result<String, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("ws");
    write(&root, files)?;
    let map = map(&root, &request(dir.path(), query))?;
    Ok(map.ranked.first().map(|r| r.path.clone()).unwrap_or_default())
}

#[test]
fn the_scope_of_a_commit_style_query_points_at_its_folder() -> Res {
    let files = [
        ("src/parser/read.rs", "pub fn next_token(input: &str) {}\n"),
        ("src/report.rs", "/// An empty report when the input is empty.\npub fn empty_report(input: &str) {}\n"),
        ("src/cli.rs", "fn main() { next_token(); empty_input_report(); }\n"),
    ];
    assert_eq!(first_for(&files, "fix(parser): handle empty input")?, "src/parser/read.rs");
    assert_eq!(first_for(&files, "parser: handle empty input")?, "src/parser/read.rs");
    assert_eq!(first_for(&files, "handle empty input")?, "src/report.rs", "no scope, no folder preference");
    Ok(())
}

/// A header and its source file say the same names; a change is far likelier in the source
/// (the body), so of two files that match a query alike, the one that only declares comes
/// second: C and C++ headers, TypeScript's `.d.ts`, Python's `.pyi`.
#[test]
fn a_file_that_only_declares_comes_after_the_file_that_defines() -> Res {
    let pairs: [(&str, &str, &str, &str); 4] = [
        (
            "gzip.h",
            "int zip_file(int in, int out);\n",
            "gzip.c",
            "int zip_file(int in, int out) { return in + out; }\n",
        ),
        (
            "src/zip.hpp",
            "int zip_file(int in, int out);\n",
            "src/zip.cpp",
            "int zip_file(int in, int out) { return in; }\n",
        ),
        (
            "lib/zip.d.ts",
            "export declare function zipFile(input: number): number;\n",
            "lib/zip.ts",
            "export function zipFile(input: number): number { return input; }\n",
        ),
        (
            "pkg/zip.pyi",
            "def zip_file(input: int) -> int: ...\n",
            "pkg/zip.py",
            "def zip_file(input):\n    return input\n",
        ),
    ];
    for (declares, decl_text, defines, def_text) in pairs {
        let files = [(declares, decl_text), (defines, def_text)];
        assert_eq!(first_for(&files, "zip: zip file of empty input")?, defines, "{declares}");
        // Alone, a header ranks as any file.
        assert_eq!(first_for(&files[..1], "zip: zip file of empty input")?, declares);
    }
    Ok(())
}

/// Names the query says find the file that has them: two or three adjacent words joined
/// (`token meter` is `tokenMeter`), and a whole name ranks the file that defines it first.
#[test]
fn names_the_query_says_find_the_file_that_has_them() -> Res {
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case; 2] = [
        (
            &[
                ("src/usage.ts", "export function update(tokenMeter: Meter) {}\n"),
                ("src/panel.ts", "// token meter\nexport function update(meter: Meter) {}\n"),
            ],
            "the token meter shows cached tokens",
            "src/usage.ts",
        ),
        (
            &[
                ("lib/options.py", "def parse_args(argv):\n    return argv\n"),
                (
                    "lib/runner.py",
                    "# Drops nothing: the last argument stays.\ndef run(argv):\n    return parse_args(argv)\n",
                ),
            ],
            "parse_args drops the last argument",
            "lib/options.py",
        ),
    ];
    for (files, query, first) in cases {
        assert_eq!(first_for(files, query)?, first, "{query}");
    }
    Ok(())
}

/// Runs git in `dir` for a test: no config of the person's or the system's, a fixed author.
fn git(dir: &Path, args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Writes `files` under `repo` and commits them with `subject`.
fn commit(repo: &Path, files: &[(&str, &str)], subject: &str) -> Res {
    write(repo, files)?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "--no-verify", "-m", subject])?;
    Ok(())
}

/// A new repository in a temporary folder (its `cache/` ignored) with `files` in its first
/// commit, "start".
fn new_repo(files: &[(&str, &str)]) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    git(dir.path(), &["init", "-q", "-b", "main"])?;
    write(dir.path(), &[(".gitignore", "cache/\n")])?;
    commit(dir.path(), files, "start")?;
    Ok(dir)
}

/// Two files the query says nothing about apart from their history: `ws/src/alpha.rs` first by
/// name, `ws/src/zeta.rs` changed by a past commit whose subject reads like the query. The
/// repository is the temporary folder; the map's root is its folder `ws` (paths in the history
/// are the root's).
fn repo_with_history() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    let dir = new_repo(&[("ws/src/alpha.rs", "pub fn run() {}\n"), ("ws/src/zeta.rs", "pub fn go() {}\n")])?;
    let repo = dir.path();
    commit(repo, &[("ws/src/zeta.rs", "pub fn go() { wait(); }\n")], "make the retry backoff exponential")?;
    commit(repo, &[("ws/src/alpha.rs", "pub fn run() { step(); }\n")], "typo in a comment")?;
    let root = repo.join("ws");
    Ok((dir, root))
}

const HISTORY_QUERY: &str = "the retry backoff is too slow";

#[test]
fn the_file_whose_past_commits_read_like_the_query_ranks_first() -> Res {
    let (dir, root) = repo_with_history()?;
    let first = |history: bool| -> Result<String, Box<dyn std::error::Error>> {
        let map = map(&root, &Request { history, ..request(dir.path(), HISTORY_QUERY) })?;
        Ok(map.ranked.first().map(|r| r.path.clone()).unwrap_or_default())
    };
    assert_eq!(first(true)?, "src/zeta.rs");
    assert_eq!(first(false)?, "src/alpha.rs", "without the history, nothing tells the files apart");
    // Not a repository: the map works as without history.
    let plain = tempfile::tempdir()?;
    let copy = plain.path().join("ws");
    write(&copy, &[("src/alpha.rs", "pub fn run() {}\n"), ("src/zeta.rs", "pub fn go() {}\n")])?;
    let map = map(&copy, &request(plain.path(), HISTORY_QUERY))?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("src/alpha.rs"));
    Ok(())
}

/// The order of the map of `repo` for `query`.
fn order(repo: &Path, query: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    Ok(map(repo, &request(repo, query))?.ranked.into_iter().map(|r| r.path).collect())
}

#[test]
fn below_the_best_match_a_file_changed_in_the_last_commits_comes_first() -> Res {
    // Two files that match the query as well as each other, below the one that matches best;
    // `src/y_new.rs` changed in the newest commit, `src/x_old.rs` only at the start.
    let caller = "pub fn read() { header(); }\n";
    let dir = new_repo(&[
        ("src/header.rs", "pub fn parse_header() {}\n"),
        ("src/x_old.rs", caller),
        ("src/y_new.rs", "pub fn read() {}\n"),
    ])?;
    commit(dir.path(), &[("src/y_new.rs", caller)], "call it")?;
    assert_eq!(order(dir.path(), "parse header")?[..3], ["src/header.rs", "src/y_new.rs", "src/x_old.rs"]);
    Ok(())
}

#[test]
fn a_recent_change_never_lifts_a_file_above_the_best_match() -> Res {
    // Two files the query matches exactly as well: the first by path is the best, and the
    // other, however recent, stays below it.
    let text = "pub fn header() {}\n";
    let dir = new_repo(&[("src/a.rs", text), ("src/b.rs", "pub fn other() {}\n")])?;
    commit(dir.path(), &[("src/b.rs", text)], "same")?;
    assert_eq!(order(dir.path(), "header")?, ["src/a.rs", "src/b.rs"]);
    Ok(())
}

proptest! {
    /// Whatever the scores and the extra signal: the best file (the first of the highest) stays
    /// first, no score goes down, and every score stays finite and not negative.
    #[test]
    fn what_is_added_below_the_best_never_moves_the_best(
        cases in prop::collection::vec((prop_oneof![Just(0.0), Just(1.0), 0.0f64..4.0], 0.0f64..=1.0), 1..40),
        weight in prop_oneof![Just(0.0), Just(1.0), 0.0f64..10.0],
    ) {
        let (before, extra): (Vec<f64>, Vec<f64>) = cases.into_iter().unzip();
        let mut after = before.clone();
        crate::rank::add_below_the_best(&mut after, &extra, weight);
        let first = |scores: &[f64]| (0..scores.len()).reduce(|b, i| if scores[i] > scores[b] { i } else { b });
        prop_assert_eq!(first(&after), first(&before));
        for (b, a) in before.iter().zip(&after) {
            prop_assert!(a.is_finite() && *a >= 0.0 && a >= b, "{b} became {a}");
        }
    }
}

/// Signal `index` (of [`crate::rank::features`]) of `path` in the map of `root` for `query`.
fn signal(dir: &Path, root: &Path, query: &str, path: &str, index: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let signals = crate::explain(root, &request(dir, query))?;
    let (_, features) = signals.iter().find(|(p, _)| p == path).ok_or("no such file")?;
    Ok(features[index])
}

/// The history signal of `path` in the map of `root` for [`HISTORY_QUERY`].
fn history_signal(dir: &Path, root: &Path, path: &str) -> Result<f64, Box<dyn std::error::Error>> {
    signal(dir, root, HISTORY_QUERY, path, crate::rank::HISTORY)
}

#[test]
fn only_the_history_head_reaches_counts() -> Res {
    let (dir, root) = repo_with_history()?;
    let repo = dir.path();
    // A branch HEAD is not on says the query of alpha.rs: it is not read.
    git(repo, &["checkout", "-q", "-b", "future"])?;
    commit(repo, &[("ws/src/alpha.rs", "pub fn run() { later(); }\n")], "retry backoff too slow, for real")?;
    git(repo, &["checkout", "-q", "main"])?;
    assert_eq!(history_signal(repo, &root, "src/alpha.rs")?, 0.0);
    assert!(history_signal(repo, &root, "src/zeta.rs")? > 0.0);
    // Once HEAD reaches it, it counts (the history kept for the old HEAD is not used).
    git(repo, &["merge", "-q", "--ff-only", "future"])?;
    assert!(history_signal(repo, &root, "src/alpha.rs")? > 0.0);
    Ok(())
}

#[test]
fn the_history_is_kept_per_head_in_the_cache_folder() -> Res {
    let (dir, root) = repo_with_history()?;
    let cache = dir.path().join("cache");
    assert!(history_signal(dir.path(), &root, "src/zeta.rs")? > 0.0);
    // A new process reads the history kept for this HEAD, and runs no `git log`: a doctored
    // file for the same HEAD is what it sees.
    let kept = std::fs::read_to_string(cache.join("history.json"))?;
    assert!(kept.contains(&git(dir.path(), &["rev-parse", "HEAD"])?), "{kept}");
    std::fs::write(cache.join("history.json"), kept.replace("make the retry backoff exponential", "unrelated"))?;
    crate::forget_in_process(&root, Some(&cache));
    assert_eq!(history_signal(dir.path(), &root, "src/zeta.rs")?, 0.0);
    // A new HEAD reads the history again.
    commit(dir.path(), &[("ws/src/alpha.rs", "pub fn run() { step(); step(); }\n")], "more steps")?;
    assert!(history_signal(dir.path(), &root, "src/zeta.rs")? > 0.0);
    Ok(())
}

/// A repository whose config names programs for every hook `git log` could run: the map reads
/// its history without running any of them.
#[test]
fn a_repository_config_runs_nothing_when_the_history_is_read() -> Res {
    let (dir, root) = repo_with_history()?;
    let repo = dir.path();
    let marker = repo.join("ran");
    let script = repo.join("evil.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\nexit 1\n", marker.display()))?;
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    // A signed commit on HEAD, so that showing signatures would run the verifier.
    let tree = git(repo, &["write-tree"])?;
    let parent = git(repo, &["rev-parse", "HEAD"])?;
    let object = format!(
        "tree {tree}\nparent {parent}\nauthor t <t@example.invalid> 1700000000 +0000\ncommitter t \
         <t@example.invalid> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n \
         -----END PGP SIGNATURE-----\n\nsigned: the retry backoff\n"
    );
    std::fs::write(repo.join("object"), object)?;
    let signed = git(repo, &["hash-object", "-t", "commit", "-w", "object"])?;
    git(repo, &["update-ref", "HEAD", &signed])?;
    let evil = script.to_string_lossy().into_owned();
    for (key, value) in [
        ("log.showSignature", "true"),
        ("gpg.program", evil.as_str()),
        ("gpg.ssh.program", evil.as_str()),
        ("core.fsmonitor", evil.as_str()),
        ("core.pager", evil.as_str()),
        ("pager.log", evil.as_str()),
        ("diff.external", evil.as_str()),
        ("core.alternateRefsCommand", evil.as_str()),
        ("core.hooksPath", repo.to_string_lossy().as_ref()),
    ] {
        git(repo, &["config", key, value])?;
    }
    // The attack is real: git as a person runs it reads the config and runs the script.
    git(repo, &["log", "-1", "--format=%s"])?;
    assert!(marker.exists(), "the config runs the script for a plain git log");
    std::fs::remove_file(&marker)?;

    let map = map(&root, &request(repo, HISTORY_QUERY))?;
    assert!(!marker.exists(), "ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("src/zeta.rs"), "the history was read");
    Ok(())
}

/// A repository whose config makes git wait forever (an include that is a FIFO nobody writes):
/// the map gives up on the history and answers as without it.
#[test]
fn a_repository_that_makes_git_hang_costs_only_the_history() -> Res {
    let (dir, root) = repo_with_history()?;
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600))?;
    let config = dir.path().join(".git/config");
    let mut text = std::fs::read_to_string(&config)?;
    text += &format!("[include]\n\tpath = {}\n", fifo.display());
    std::fs::write(&config, text)?;
    let first = map(&root, &request(dir.path(), HISTORY_QUERY))?;
    assert_eq!(first.ranked.first().map(|r| r.path.as_str()), Some("src/alpha.rs"), "no history: {:?}", first.ranked);
    // Given up on once: the next map of the same repository does not ask git again.
    assert!(crate::history::hung(&root));
    let again = map(&root, &request(dir.path(), HISTORY_QUERY))?;
    assert_eq!(again.ranked.first().map(|r| r.path.as_str()), Some("src/alpha.rs"));
    Ok(())
}

/// Two files whose histories both mention `parser`: only `zeta`'s commits were scoped to it
/// (`parser: …`); `alpha`'s named it in passing, with the query's other words, and once in a
/// narrower scope (`parser tests: …`).
#[test]
fn the_files_a_scopes_past_commits_changed_rank_first_for_it() -> Res {
    let dir = new_repo(&[("ws/src/alpha.rs", "pub fn run() {}\n"), ("ws/src/zeta.rs", "pub fn go() {}\n")])?;
    let repo = dir.path();
    for (i, subject) in ["parser: keep", "parser: tidy", "parser, lexer: faster"].iter().enumerate() {
        commit(repo, &[("ws/src/zeta.rs", &format!("pub fn go() {{ {} }}\n", "x();".repeat(i + 1)))], subject)?;
    }
    let alpha =
        ["docs: parser spans of empty input", "cli: parser spans", "build: empty parser input", "parser tests: cases"];
    for (i, subject) in alpha.iter().enumerate() {
        commit(repo, &[("ws/src/alpha.rs", &format!("pub fn run() {{ {} }}\n", "y();".repeat(i + 1)))], subject)?;
    }
    let root = repo.join("ws");
    let query = "parser: spans of empty input";
    let map = map(&root, &request(repo, query))?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("src/zeta.rs"), "{:?}", map.ranked);
    let scoped = |query: &str, path: &str| signal(repo, &root, query, path, crate::rank::SCOPE_HISTORY);
    // Three of the three commits scoped to `parser` changed zeta: 3 / (3 + 1). The narrower
    // `parser tests` commit does not count for `parser`.
    assert_eq!(scoped(query, "src/zeta.rs")?, 0.75);
    assert_eq!(scoped(query, "src/alpha.rs")?, 0.0);
    // A narrower scope counts the broader one's commits however it is written, and its own.
    for query in ["Parser tests: spans of empty input", "parser-tests: spans", "lexer, parser test: spans"] {
        assert_eq!(scoped(query, "src/zeta.rs")?, 0.6, "{query}: 3 / (4 + 1)");
        assert_eq!(scoped(query, "src/alpha.rs")?, 0.2, "{query}: 1 / (4 + 1)");
    }
    assert_eq!(scoped("lexer: spans", "src/zeta.rs")?, 0.5, "one commit had lexer in its scope: 1 / (1 + 1)");
    Ok(())
}

/// A commit's body says more than its subject: the files of a commit whose body reads like the
/// query move up, though less than by a subject that does.
#[test]
fn the_body_of_a_past_commit_counts_too() -> Res {
    let dir = new_repo(&[("ws/src/alpha.rs", "pub fn run() {}\n"), ("ws/src/beta.rs", "pub fn go() {}\n")])?;
    let repo = dir.path();
    commit(
        repo,
        &[("ws/src/beta.rs", "pub fn go() { wait(); }\n")],
        "tidy\n\nThe retry backoff was far too slow: make it exponential.",
    )?;
    commit(repo, &[("ws/src/alpha.rs", "pub fn run() { step(); }\n")], "tidy\n\nA typo in a comment.")?;
    let root = repo.join("ws");
    let map = map(&root, &request(repo, HISTORY_QUERY))?;
    assert_eq!(map.ranked.first().map(|r| r.path.as_str()), Some("src/beta.rs"), "{:?}", map.ranked);
    assert!(signal(repo, &root, HISTORY_QUERY, "src/beta.rs", crate::rank::HISTORY)? > 0.0);
    assert_eq!(signal(repo, &root, HISTORY_QUERY, "src/alpha.rs", crate::rank::HISTORY)?, 0.0);
    Ok(())
}

/// A clone can carry commits with enormous messages: the history read stops at a bound (small
/// in tests), and the newer commits read before it still count; what lies past it does not.
#[test]
fn a_history_of_huge_messages_is_read_only_to_a_bound() -> Res {
    let (dir, root) = repo_with_history()?;
    let repo = dir.path();
    let huge = format!("big\n\n{}", "x ".repeat(crate::history::MAX_LOG_BYTES));
    std::fs::write(repo.join("message"), huge)?;
    write(repo, &[("ws/src/alpha.rs", "pub fn run() { big(); }\n")])?;
    git(repo, &["add", "ws"])?;
    git(repo, &["commit", "-q", "--no-verify", "-F", "message"])?;
    commit(repo, &[("ws/src/alpha.rs", "pub fn run() { later(); }\n")], "the retry backoff again")?;
    let first = map(&root, &request(repo, HISTORY_QUERY))?;
    assert_eq!(first.ranked.first().map(|r| r.path.as_str()), Some("src/alpha.rs"));
    assert!(history_signal(repo, &root, "src/alpha.rs")? > 0.0);
    assert_eq!(history_signal(repo, &root, "src/zeta.rs")?, 0.0, "its commit lies past the huge one");
    Ok(())
}
