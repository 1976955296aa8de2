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
