//! How fast a map of a large tree is: a generated tree of 10,000 source files (Rust, Python,
//! TypeScript, Go, seeded: the same bytes every run, about 1.5 KB each, names shared across
//! files so the graph has edges), mapped cold (empty cache), warm (the same process again), and
//! by a new process (the cache on disk only), each with a query. The tree is a git repository
//! with a history of 3,000 commits (made with `git fast-import`, each changing one to five of
//! the files, the subjects from the same words), which the map reads too. Goals: cold under
//! 2 s, warm under 200 ms.
//!
//! `cargo bench -p tandem-repo-map --bench speed [-- FILES]`: wall time and CPU time (all
//! threads; 10 ms ticks) per map.

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::path::Path;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// xorshift64*: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

const WORDS: &[&str] = &[
    "upload", "retry", "cache", "token", "stream", "buffer", "parse", "render", "config", "session", "queue", "worker",
    "index", "search", "rank", "graph", "store", "client", "server", "request",
];

fn name(rng: &mut Rng) -> String {
    let a = WORDS[rng.below(WORDS.len() as u64) as usize];
    let b = WORDS[rng.below(WORDS.len() as u64) as usize];
    format!("{a}_{b}_{}", rng.below(400))
}

fn generate(root: &Path, files: usize) -> Res<()> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..files {
        let dir = root.join(format!("m{}/d{}", i % 50, (i / 50) % 20));
        std::fs::create_dir_all(&dir)?;
        let defs: Vec<String> = (0..6).map(|_| name(&mut rng)).collect();
        let uses: Vec<String> = (0..10).map(|_| name(&mut rng)).collect();
        let (ext, text) = match i % 4 {
            0 => (
                "rs",
                defs.iter()
                    .enumerate()
                    .map(|(k, d)| {
                        format!(
                            "/// Does {d}.\npub fn {d}(x: u32) -> u32 {{\n    {}(x) + {}(x)\n}}\n",
                            uses[k % 10],
                            uses[(k + 3) % 10]
                        )
                    })
                    .collect::<String>()
                    + "pub struct Holder { value: u32 }\nimpl Holder {\n    pub fn get(&self) -> u32 { self.value }\n}\n",
            ),
            1 => (
                "py",
                defs.iter()
                    .enumerate()
                    .map(|(k, d)| format!("def {d}(x):\n    \"\"\"Does {d}.\"\"\"\n    return {}(x)\n\n", uses[k % 10]))
                    .collect::<String>()
                    + "class Holder:\n    def get(self):\n        return 1\n",
            ),
            2 => (
                "ts",
                defs.iter()
                    .enumerate()
                    .map(|(k, d)| {
                        format!(
                            "// Does {d}.\nexport function {d}(x: number): number {{\n  return {}(x);\n}}\n",
                            uses[k % 10]
                        )
                    })
                    .collect::<String>()
                    + "export class Holder {\n  get(): number { return 1; }\n}\n",
            ),
            _ => (
                "go",
                "package m\n\n".to_owned()
                    + &defs
                        .iter()
                        .enumerate()
                        .map(|(k, d)| {
                            format!("// Does {d}.\nfunc {d}(x int) int {{\n\treturn {}(x)\n}}\n", uses[k % 10])
                        })
                        .collect::<String>(),
            ),
        };
        std::fs::write(dir.join(format!("f{i}.{ext}")), text)?;
    }
    Ok(())
}

/// Makes `root` (a tree of `files` generated files) a git repository whose HEAD has `commits`
/// commits, each changing one to five of the files (`git fast-import`: seconds, not minutes).
fn history(root: &Path, files: usize, commits: usize) -> Res<()> {
    use std::io::Write as _;
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
    };
    git(&["init", "-q", "-b", "main"])?;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut stream = String::new();
    for c in 0..commits {
        let subject =
            format!("{} the {} of {}", WORDS[rng.below(20) as usize], WORDS[rng.below(20) as usize], name(&mut rng));
        stream += &format!(
            "commit refs/heads/main\ncommitter t <t@example.invalid> {} +0000\ndata {}\n{subject}\n",
            1_700_000_000 + c,
            subject.len()
        );
        for _ in 0..=rng.below(5) {
            let i = rng.below(files as u64) as usize;
            let ext = ["rs", "py", "ts", "go"][i % 4];
            let content = format!("v{c}\n");
            stream +=
                &format!("M 644 inline m{}/d{}/f{i}.{ext}\ndata {}\n{content}\n", i % 50, (i / 50) % 20, content.len());
        }
    }
    let mut import = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["fast-import", "--quiet"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    import.stdin.take().ok_or("no stdin")?.write_all(stream.as_bytes())?;
    if !import.wait()?.success() {
        return Err("git fast-import failed".into());
    }
    Ok(())
}

/// The CPU time this process has used (user and system, all threads), from `/proc/self/stat`
/// (Linux; zero elsewhere): on a shared machine the wall time says how busy the others are, the
/// CPU time what the map costs.
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // After the command name (in parentheses), fields 14 and 15 are utime and stime in ticks.
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| f.iter().filter_map(|t| t.parse::<f64>().ok()).sum());
    ticks * 10.0
}

fn main() -> Res<()> {
    let files: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let temp = tempfile::tempdir()?;
    let root = temp.path().join("tree");
    generate(&root, files)?;
    history(&root, files, 3000)?;
    let cache = temp.path().join("cache");
    let request = |query: &str| tandem_repo_map::Request {
        query: query.to_owned(),
        cache: Some(cache.clone()),
        ..Default::default()
    };
    println!(
        "{:<34} {:>10} {:>10} {:>8} {:>8} {:>8}",
        format!("map of {files} files"),
        "time",
        "cpu",
        "read",
        "parsed",
        "goal"
    );
    let row = |label: &str, query: &str, goal: &str| -> Res<()> {
        let (start, cpu) = (Instant::now(), cpu_ms());
        let map = tandem_repo_map::map(&root, &request(query))?;
        let took = start.elapsed();
        println!(
            "{label:<34} {:>8.1}ms {:>8.0}ms {:>8} {:>8} {goal:>8}",
            took.as_secs_f64() * 1000.0,
            cpu_ms() - cpu,
            map.stats.read,
            map.stats.parsed
        );
        Ok(())
    };
    row("cold (empty cache)", "retry uploads in the queue worker", "< 2 s")?;
    row("warm (same process)", "render the search index", "< 200 ms")?;
    row("warm, another query", "session token stream", "< 200 ms")?;
    tandem_repo_map::forget_in_process(&root, Some(&cache));
    row("new process (cache on disk)", "retry uploads in the queue worker", "")?;
    row("warm again", "graph rank", "< 200 ms")?;
    Ok(())
}
