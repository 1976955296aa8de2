//! Download-then-run: a command line (or script) that fetches code and runs it, which is
//! refused in every mode as `rm -rf /` is. Seen: the download piped into an interpreter
//! (`curl … | sh`, `wget -O- … | tee f | bash`), passed to one through a substitution
//! (`sh <(curl …)`, `bash -c "$(curl …)"`, `python -c "$(wget -O- …)"`, `eval "$(curl …)"`,
//! `source <(curl …)`, `bash <<< "$(curl …)"`), and saved to a file that a later command runs
//! (`curl -o f … && sh f`, `wget URL && bash install.sh`, `curl … > f; ./f`), or cloned and
//! run from the clone (`git clone URL && ./repo/install.sh`, `… && cd repo && sh install.sh`).

use super::parse::{Simple, Word};
use super::programs;

/// Programs that download.
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lwp-request"];

/// Programs that run the code they are given as a file, on their input, or in an argument.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "python", "python2", "python3", "pypy", "pypy3", "perl",
    "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "Rscript", "pwsh", "tclsh", "source", ".", "eval",
];

/// The reason given.
pub(super) const REASON: &str = "it runs code it downloads in the same command (`curl … | sh`, `curl -o f … && sh f`): \
    nothing shows what runs. Fetch it on its own first (`curl -fsSL URL -o FILE`), so that the person can read it, \
    then ask to run it";

fn base(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether `program` runs code (`python3.12` too).
pub(super) fn interpreter(program: &str) -> bool {
    let base = base(program);
    INTERPRETERS.contains(&base)
        || base.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether `text` (a word with a substitution in it) calls a downloader.
pub(super) fn downloads_in(text: &str) -> bool {
    (text.contains("$(") || text.contains('`') || text.contains("<(") || text.contains(">("))
        && text.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').any(|w| DOWNLOADERS.contains(&w))
}

/// The last path segment of a URL (what `curl -O` and `wget` name the file).
fn url_name(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = path.rsplit('/').next().unwrap_or(path);
    (url.contains("://") || url.contains('/'))
        .then(|| if name.is_empty() { "index.html".to_owned() } else { name.to_owned() })
}

/// The files a downloading command writes, by base name; `None` inside when one is not known.
fn written(program: &str, args: &[Word], command: &Simple) -> Vec<Option<String>> {
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    let urls = || texts.iter().filter(|t| t.contains("://")).filter_map(|t| url_name(t)).map(Some);
    let mut files: Vec<Option<String>> = Vec::new();
    let mut stdout_only = false;
    let mut i = 0;
    while let Some(text) = texts.get(i) {
        i += 1;
        let value = |i: &mut usize, glued: &str| -> Option<String> {
            if glued.is_empty() {
                *i += 1;
                texts.get(*i - 1).map(|v| (*v).to_owned())
            } else {
                Some(glued.to_owned())
            }
        };
        let long = text.strip_prefix("--").map(|l| l.split_once('=').map_or((l, None), |(n, v)| (n, Some(v))));
        match (base(program), long) {
            ("curl" | "aria2c", Some((name, glued))) if "output".starts_with(name) || name == "out" => {
                files.push(glued.map(str::to_owned).or_else(|| value(&mut i, "")));
            }
            ("curl", Some((name, _))) if name.starts_with("remote-name") => files.extend(urls()),
            ("wget", Some((name, glued))) if "output-document".starts_with(name) && name.len() > 1 => {
                let file = glued.map(str::to_owned).or_else(|| value(&mut i, ""));
                stdout_only |= file.as_deref() == Some("-");
                files.push(file);
            }
            ("curl" | "aria2c" | "wget", None) if text.starts_with('-') && !text.starts_with("--") => {
                // A cluster: `-fsSLo f`, `-qO-`, `-O`.
                let letters = &text[1..];
                if let Some(at) = letters.find(if base(program) == "wget" { 'O' } else { 'o' }) {
                    let file = value(&mut i, &letters[at + 1..]);
                    stdout_only |= file.as_deref() == Some("-");
                    files.push(file);
                } else if base(program) == "curl" && letters.contains('O') {
                    files.extend(urls());
                }
            }
            _ => {}
        }
    }
    // wget saves under the URL's name unless told otherwise.
    if base(program) == "wget" && files.is_empty() {
        files.extend(urls());
    }
    if stdout_only {
        files.retain(|f| f.as_deref() != Some("-"));
    }
    for redirect in &command.redirects {
        if redirect.op.contains('>') && !redirect.op.ends_with('&') {
            files.push(redirect.target.lit().map(str::to_owned));
        }
    }
    files.into_iter().map(|f| f.filter(|f| !f.contains('$')).map(|f| base(&f).to_owned())).collect()
}

/// Why the commands of one line or script run code they download, if they do.
pub(super) fn runs_downloaded(commands: &[Simple]) -> Option<String> {
    let resolved: Vec<programs::Resolved> = commands.iter().map(|c| programs::resolve(&c.words)).collect();
    let program = |i: usize| resolved[i].program.as_deref().unwrap_or_default();
    let fetchers: Vec<usize> = (0..commands.len()).filter(|i| DOWNLOADERS.contains(&base(program(*i)))).collect();
    let mut fetched: Vec<Option<String>> = Vec::new();
    for &f in &fetchers {
        fetched.extend(written(program(f), &resolved[f].args, &commands[f]));
        // `curl … | tee f`.
        let (pipeline, place) = commands[f].pipeline;
        for (t, command) in commands.iter().enumerate() {
            if pipeline != 0
                && command.pipeline.0 == pipeline
                && command.pipeline.1 > place
                && base(program(t)) == "tee"
            {
                fetched.extend(
                    resolved[t]
                        .args
                        .iter()
                        .filter(|a| !a.text().starts_with('-'))
                        .map(|a| a.lit().map(|l| base(l).to_owned())),
                );
            }
        }
    }
    let clones: Vec<String> = (0..commands.len())
        .filter(|i| base(program(*i)) == "git")
        .filter_map(|i| cloned_dir(&resolved[i].args))
        .collect();
    let entered = commands.iter().zip(&resolved).any(|(_, r)| {
        r.program.as_deref() == Some("cd")
            && r.args.first().is_some_and(|d| clones.iter().any(|c| c == d.text().trim_end_matches('/')))
    });
    let in_clone = |path: &str| {
        let path = path.strip_prefix("./").unwrap_or(path);
        clones.iter().any(|c| path.strip_prefix(c.as_str()).is_some_and(|rest| rest.starts_with('/')))
            || (entered && !path.starts_with('/') && !path.starts_with('-'))
    };
    let unknown_file = fetched.iter().any(Option::is_none);
    let names: Vec<String> = fetched.into_iter().flatten().collect();
    for (i, command) in commands.iter().enumerate() {
        let name = program(i);
        let runs_code = interpreter(name);
        // Piped in: `curl … | sh`.
        let (pipeline, place) = command.pipeline;
        if runs_code
            && pipeline != 0
            && fetchers.iter().any(|&f| commands[f].pipeline.0 == pipeline && commands[f].pipeline.1 < place)
        {
            return Some(REASON.to_owned());
        }
        // Through a substitution: `sh <(curl …)`, `bash -c "$(curl …)"`, `bash <<< "$(curl …)"`.
        let inputs = command.redirects.iter().filter(|r| r.op.contains('<')).map(|r| r.target.text());
        let arguments = resolved[i].args.iter().map(Word::text).chain(resolved[i].script.iter().map(Word::text));
        if runs_code && arguments.chain(inputs).any(downloads_in) {
            return Some(REASON.to_owned());
        }
        // Saved, then run: `sh f`, `./f`, `source f`.
        let runs_file = |file: &str| names.iter().any(|n| n == base(file));
        let operand_run =
            runs_code && resolved[i].args.iter().filter(|a| !a.text().starts_with('-')).any(|a| runs_file(a.text()));
        let path_run = name.contains('/') && (runs_file(name) || in_clone(name));
        // Saved under a name only known when it runs, and run under one: `sh "$f"`.
        let dynamic_run = runs_code
            && unknown_file
            && resolved[i].args.iter().any(|a| a.lit().is_none() && !a.text().starts_with('-'));
        let clone_run = runs_code
            && !clones.is_empty()
            && resolved[i].args.iter().find(|a| !a.text().starts_with('-')).is_some_and(|a| in_clone(a.text()));
        if clone_run {
            return Some(REASON.to_owned());
        }
        if !fetchers.contains(&i) && (operand_run || path_run || dynamic_run) {
            return Some(REASON.to_owned());
        }
    }
    None
}

/// The directory `git clone [options] URL [DIR]` makes, by name.
fn cloned_dir(args: &[Word]) -> Option<String> {
    const VALUED: &[&str] = &[
        "-b",
        "--branch",
        "--depth",
        "-o",
        "--origin",
        "-c",
        "--config",
        "--reference",
        "--separate-git-dir",
        "-u",
        "--upload-pack",
        "-j",
        "--jobs",
        "--filter",
        "--template",
        "--shallow-since",
        "--shallow-exclude",
    ];
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    let at = texts.iter().position(|t| *t == "clone")?;
    let mut operands = Vec::new();
    let mut i = at + 1;
    while let Some(text) = texts.get(i) {
        i += 1;
        if VALUED.contains(text) {
            i += 1;
        } else if !text.starts_with('-') {
            operands.push(*text);
        }
    }
    let url = operands.first()?;
    let dir = match operands.get(1) {
        Some(dir) => (*dir).to_owned(),
        None => {
            let name = url.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or(url);
            name.strip_suffix(".git").unwrap_or(name).to_owned()
        }
    };
    Some(dir.trim_end_matches('/').to_owned())
}
