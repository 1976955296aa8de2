//! The option corpus: every option of an auto-approved program that runs another program or
//! writes a file, taken from each program's own manual, written in every form its parser
//! accepts: the long name and each of its unique prefixes (getopt_long reads `--compress-prog`
//! as `--compress-program`), `--opt=value` and `--opt value`, short options glued to their
//! argument (`-S'cmd'`), inside a cluster (`-nS cmd`), and quoted. None may run without asking.
//! The read-only forms around them (harmless options, abbreviated too) must still run without
//! asking.

use super::{Verdict, classify};

/// `(program and what comes before the option, long option, short option, value, what comes
/// after)`: the option with `value` makes the program run something or write somewhere.
const DOORS: &[(&str, &str, Option<char>, &str, &str)] = &[
    ("env", "split-string", Some('S'), "./x.sh", ""),
    ("sed", "expression", Some('e'), "1e ./x.sh", "in.txt"),
    ("sed", "expression", Some('e'), "w out", "in.txt"),
    ("sed", "expression", Some('e'), "W out", "in.txt"),
    ("sed", "expression", Some('e'), "s/a/b/e", "in.txt"),
    ("sed", "expression", Some('e'), "s/a/b/w out", "in.txt"),
    ("sed", "expression", Some('e'), "s|a|b|gw out", "in.txt"),
    ("sed", "expression", Some('e'), "1!e ./x.sh", "in.txt"),
    ("sed", "expression", Some('e'), "/x/{e ./x.sh\n}", "in.txt"),
    ("sed", "expression", Some('e'), "$ w out", "in.txt"),
    ("sed", "file", Some('f'), "script.sed", "in.txt"),
    ("sed", "in-place", None, "", "in.txt"),
    ("sort", "compress-program", None, "./x.sh", "-S 1K big.txt"),
    ("sort", "output", Some('o'), "out", "in.txt"),
    ("git grep", "open-files-in-pager", Some('O'), "./x.sh", "alpha"),
    ("git diff", "output", None, "out", ""),
    ("git log", "output", None, "out", ""),
    ("git show", "output", None, "out", "HEAD"),
    ("git stash list", "output", None, "out", ""),
    ("git diff", "ext-diff", None, "", ""),
    ("git", "git-dir", None, "fixtures/evil.git", "status"),
    ("git", "work-tree", None, "fixtures", "status"),
    ("git", "exec-path", None, "./bin", "status"),
    ("git", "config-env", None, "core.fsmonitor=X", "status"),
    ("git", "namespace", None, "x", "status"),
    ("git", "paginate", Some('p'), "", "log"),
    ("git", "", Some('C'), "fixtures/evil2.git", "status"),
    ("git", "", Some('c'), "core.fsmonitor=./x.sh", "status"),
    ("git config", "edit", Some('e'), "", ""),
    ("date", "set", Some('s'), "2020-01-01", ""),
    ("hostname", "file", Some('F'), "name.txt", ""),
    ("hostname", "boot", Some('b'), "", ""),
    ("file", "compile", Some('C'), "", "-m magic"),
    ("less", "log-file", Some('o'), "out", "in.txt"),
    ("less", "LOG-FILE", Some('O'), "out", "in.txt"),
    ("less", "lesskey-file", Some('k'), "keys", "in.txt"),
    ("less", "lesskey-src", None, "keys.src", "in.txt"),
    ("rg", "pre", None, "./x.sh", "alpha"),
    ("rg", "search-zip", Some('z'), "", "alpha"),
    ("rg", "hostname-bin", None, "./x.sh", "alpha"),
    ("tree", "", Some('o'), "out.txt", ""),
    ("tar -tf a.tar", "to-command", None, "./x.sh", ""),
    ("tar -tf a.tar", "use-compress-program", Some('I'), "./x.sh", ""),
    ("tar -tf a.tar", "checkpoint-action", None, "exec=./x.sh", "--checkpoint=1"),
    ("tar -tf a.tar", "info-script", Some('F'), "./x.sh", "-M"),
    ("tar -tf a.tar", "new-volume-script", None, "./x.sh", "-M"),
    ("tar -tf a.tar", "rsh-command", None, "./x.sh", ""),
    ("tar -tf a.tar", "index-file", None, "out", ""),
    ("xargs", "process-slot-var", None, "PATH", "ls"),
];

/// Whole commands from the manuals that the option forms above do not cover.
const WHOLE: &[&str] = &[
    "xxd a.txt out.txt",
    "xxd -r a.hex out.bin",
    "xxd -c 8 a.txt out.txt",
    "xxd -l16 a.txt out.txt",
    "xxd -cols 8 a.txt out.txt",
    "xxd - out.txt",
    "uniq in out",
    "uniq -f 1 in out",
    "uniq --skip-fields 1 in out",
    "find . -fprint out",
    "find . -fprint0 out",
    "find . -fprintf out %p",
    "find . -fls out",
    "find . -exec ./x.sh {} ;",
    "find . -execdir ./x.sh {} +",
    "find . -ok ./x.sh {} ;",
    "find . -okdir ./x.sh {} ;",
    "find . -name x -delete",
    "find . $OPTS",
    "sort $(echo --output=out) in.txt",
    "sed \"$SCRIPT\" in.txt",
    "less '+!./x.sh' in.txt",
    "less '+|./x.sh' in.txt",
    "less '+s out' in.txt",
    "tree -R -H . -L 1",
    "tree -aRL 1 -H .",
    "printf -v PATH %s . ; ls",
    "printf -vPATH %s .",
    "bash --rcfile ./x.sh -ic ls",
    "bash --init-file ./x.sh -i -c ls",
    "sh -l -c ls",
    "bash -s -c ls",
    "env -S'./x.sh'",
    "env -iS./x.sh",
    "env -vS ./x.sh",
    "env --split=./x.sh",
    "env -u X -S ./x.sh",
    "env -C . ./x.sh",
    "env -C fixtures/evil2.git git status",
    "env --chdir=fixtures/evil2.git git status",
    "env -- ./x.sh",
    "GIT_DIR=fixtures/evil.git git status",
    "env GIT_DIR=fixtures/evil.git git status",
    "git --bare status",
    "git --git-dir fixtures/evil.git status",
    "git -Cfixtures/evil2.git status",
    "git -c core.pager=./x.sh log",
    "git -ccore.fsmonitor=./x.sh status",
    "git --exec-path status",
    "git grep -nO./x.sh alpha",
    "git grep -O ./x.sh alpha",
    "git grep --open=./x.sh alpha",
    "git grep --o=./x.sh alpha",
    "git config --get x --edit",
    "git config --list -e",
    "git config --global --edit",
    "sed -n -e p -e 'w out' in.txt",
    "sed -ne 'w out' in.txt",
    "sed -nfscript.sed in.txt",
    "sed --fi=script.sed in.txt",
    "sed -s --in=.bak s/a/b/ in.txt",
    "sed 's/a/b/;w out' in.txt",
    "sed '1{w out\n}' in.txt",
    "sed 'y/a/b/;e ./x.sh' in.txt",
    "sed -E 's/(a)/\\1/w out' in.txt",
    "sed 's/a/b/3w out' in.txt",
    "sed --expression=1e\\ ./x.sh in.txt",
    "sed -e '$!N;s/a/b/e' in.txt",
    "sed 'v;e ./x.sh' in.txt",
    "sed '0~3w out' in.txt",
    "sed '/a/,/b/w out' in.txt",
    "sed '\\,a,w out' in.txt",
    "sed 'a\\\nx\ne ./x.sh' in.txt",
    "sed -e 'a x' -e 'w out' in.txt",
    "sed -z 's/a/b/e' in.txt",
    "sort -S1K -o out in.txt",
    "sort -uoout in.txt",
    "sort --compress=./x.sh in.txt",
    "sort --c=./x.sh in.txt",
    "sort --out out in.txt",
    "date --se=2020-01-01",
    "date -us 2020-01-01",
    "hostname evil",
    "hostname --fi name.txt",
    "file -zC -m magic",
    "file --comp -m magic",
    "less -oout in.txt",
    "less -Sofile in.txt",
    "less --log=out in.txt",
    "less --LOG=out in.txt",
    "less --lesskey-c=x in.txt",
    "rg --pre=./x.sh alpha",
    "rg -iz alpha",
    "curl -s http://127.0.0.1:9/x.sh -o /tmp/x.sh && sh /tmp/x.sh",
    "echo --output=out | xargs git diff",
    "printf '%s\\n' -o out | xargs sort in.txt",
    "ls | xargs -0 sed -n p",
    "sort * ",
    "sort {-o,out} in.txt",
    "sort [-]o out in.txt",
    "git log $(echo --output=out)",
    "sort $'-o' out in.txt",
    "sort \"$X\" in.txt",
    "sort ${X} in.txt",
    "uniq in.txt \"src/$name\"",
    "xxd in.bin \"$HOME/out\"",
    "sed \"s/$a/b/e\" in.txt",
    "git diff \"$OPT\"",
    "cat < /dev/tcp/127.0.0.1/9",
    "nohup ls",
    "sort -\\o out in.txt",
    "sort \"-o\"out in.txt",
];

/// Read-only commands with harmless options in the same forms: they stay auto-approved.
const STILL_SAFE: &[&str] = &[
    "env",
    "env -i ls",
    "env -u HOME ls",
    "env -uHOME ls",
    "env --unset=HOME ls",
    "env LANG=C ls",
    "env -0",
    "sed -n '1,20p' src/main.rs",
    "sed -n '/w/p' a.txt",
    "sed -n '/e$/p' a.txt",
    "sed 's/w/e/g' a.txt",
    "sed -e 's/a/b/' -e 's/c/d/' a.txt",
    "sed -E 's/(x)+/y/2' a.txt",
    "sed -ne '/fn /p' a.txt",
    "sed --quiet --expression=1p a.txt",
    "sed --expr='$p' a.txt",
    "sed -n '$=' a.txt",
    "sed '/^#/d;/^$/d' a.txt",
    "sed -n 'l' a.txt",
    "sed '1~2d' a.txt",
    "sed -s -n 1p a.txt b.txt",
    "sed 'y/abc/xyz/' a.txt",
    "sed -n '/start/,/end/{/x/p}' a.txt",
    "sed 'a\\\nline' a.txt",
    "sed '1i header' a.txt",
    "sed '$a footer' a.txt",
    "sed ':a;N;$!ba;s/\\n/ /g' a.txt",
    "sed 's/[[:space:]]*$//' a.txt",
    "sed 's/e/w/' a.txt",
    "sed 's,a,b,' a.txt",
    "sort -rn a.txt",
    "sort -t: -k2 a.txt",
    "sort -k 2,2 -n a.txt",
    "sort --rev --numeric a.txt",
    "sort -S 1K a.txt",
    "sort -u -T /tmp a.txt",
    "sort --key=2 --field-separator=, a.txt",
    "sort -c a.txt",
    "uniq -c a.txt",
    "uniq -f 1 a.txt",
    "uniq --skip-fields=1 a.txt",
    "uniq -w3 a.txt",
    "xxd a.txt",
    "xxd -l 64 a.txt",
    "xxd -c 8 -g 1 a.txt",
    "xxd -l16 a.txt",
    "xxd -s 0x10 -l 0x20 a.txt",
    "xxd -p a.txt",
    "xxd -i a.txt",
    "date +%Y-%m-%d",
    "date -u",
    "date -d yesterday +%s",
    "date --date='2 days ago'",
    "date -r a.txt",
    "date -Iseconds",
    "hostname",
    "hostname -f",
    "hostname --short",
    "hostname -I",
    "file a.txt",
    "file -b --mime-type a.txt",
    "file -m magic a.txt",
    "less a.txt",
    "less -N a.txt",
    "less -R -S a.txt",
    "less +G a.txt",
    "less +/pattern a.txt",
    "less -p pattern a.txt",
    "less --line-numbers a.txt",
    "find . -name '*.rs' -type f",
    "find src -maxdepth 2 -type d -print",
    "find . -newer a.txt -printf '%p\\n'",
    "find . -name '*.o' -print0",
    "rg -n alpha",
    "rg --pretty alpha",
    "rg --passthru alpha",
    "rg -i -g '*.rs' alpha",
    "tree",
    "tree -L 2 -a",
    "tree -I node_modules",
    "printf '%s\\n' a b",
    "git status",
    "git --version",
    "git log --oneline --decorate --graph --all",
    "git diff --exit-code --word-diff",
    "git grep -e x --or -e y",
    "git ls-files -o --exclude-standard",
    "git --no-pager log --oneline -5",
    "git -P diff --stat",
    "git log --format='%h %s' -3",
    "git log --output-indicator-new=+ -p",
    "git diff --name-only HEAD~1",
    "git grep -n alpha",
    "git grep -e alpha -- src",
    "git grep --count alpha",
    "git show HEAD --stat",
    "git config --get user.name",
    "git config -l",
    "git config --list --show-origin",
    "git stash list",
    "bash -c 'ls'",
    "bash -e -c 'ls'",
    "bash -xc 'ls'",
    "sh -c 'cat a.txt | wc -l'",
    "column -t -o ' ' a.txt",
    "jq -r .name a.json",
    "timeout 5 ls",
    "timeout -k 1 5 ls",
    "nice -n 5 ls",
    "xargs -I{} echo {}",
    "xargs -0 -n1 echo",
    "stdbuf -oL ls",
    "ls | xargs wc -l",
    "find . -name '*.rs' | xargs grep -n fn",
    "cat *.txt",
    "wc -l src/*.rs",
    "sed -n 1p src/*.rs",
    "command -v git",
    "sort -u <(git ls-files)",
    "sort \"$HOME/names.txt\"",
    "uniq -c \"src/$name\"",
    "sed -n 1p \"$HOME/a.txt\"",
    "find \"$HOME/src\" -name x",
    "git log -- \"src/$file\"",
    "xxd \"$HOME/a.bin\"",
];

/// Every form in which `--long` / `-s` with `value` can be written: the full name, each prefix
/// that is unique or ambiguous, `=` and a separate word, glued and clustered short forms, and
/// quoting variants.
fn forms(long: &str, short: Option<char>, value: &str, flag: Option<char>) -> Vec<String> {
    let quoted = shell_quote(value);
    let mut out = Vec::new();
    if !long.is_empty() {
        for end in 1..=long.len() {
            let name = &long[..end];
            if value.is_empty() {
                out.push(format!("--{name}"));
            } else {
                out.push(format!("--{name}={quoted}"));
                out.push(format!("--{name} {quoted}"));
                out.push(format!("'--{name}={value_raw}'", value_raw = value.replace('\'', "")));
                out.push(format!("\"--{name}\"={quoted}"));
            }
        }
        out.push(format!("--\"{long}\"{}", if value.is_empty() { String::new() } else { format!("={quoted}") }));
    }
    if let Some(s) = short {
        if value.is_empty() {
            out.push(format!("-{s}"));
            out.push(format!("'-{s}'"));
        } else {
            out.push(format!("-{s} {quoted}"));
            out.push(format!("-{s}{quoted}"));
            out.push(format!("-{s}'{}'", value.replace('\'', "")));
            out.push(format!("\"-{s}\" {quoted}"));
        }
        // Clustered behind a harmless flag of the same program.
        if let Some(f) = flag {
            if value.is_empty() {
                out.push(format!("-{f}{s}"));
            } else {
                out.push(format!("-{f}{s} {quoted}"));
                out.push(format!("-{f}{s}{quoted}"));
            }
        }
    }
    out
}

fn shell_quote(value: &str) -> String {
    if value.chars().all(|c| c.is_ascii_alphanumeric() || "./=_-:".contains(c)) {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

fn is_safe(command: &str) -> bool {
    matches!(classify(command), Verdict::Safe)
}

#[test]
fn no_door_is_auto_approved_in_any_form() {
    let mut commands: Vec<String> = WHOLE.iter().map(|c| (*c).to_owned()).collect();
    for (program, long, short, value, after) in DOORS {
        // A flag of the program that changes nothing, to cluster the option behind.
        let flag = match *program {
            "env" => Some('i'),
            "sed" | "git grep" => Some('n'),
            "sort" | "date" => Some('u'),
            "hostname" => Some('s'),
            "file" => Some('b'),
            "less" => Some('N'),
            "rg" => Some('i'),
            "tree" => Some('a'),
            "tar -tf a.tar" => Some('v'),
            _ => None,
        };
        for form in forms(long, *short, value, flag) {
            commands.push(format!("{program} {form} {after}").trim().to_owned());
        }
    }
    let approved: Vec<&String> = commands.iter().filter(|c| is_safe(c)).collect();
    assert!(
        approved.is_empty(),
        "{} of {} commands that run or write were auto-approved:\n{}",
        approved.len(),
        commands.len(),
        approved.iter().map(|c| c.as_str()).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn read_only_forms_stay_auto_approved() {
    let asked: Vec<String> =
        STILL_SAFE.iter().filter(|c| !is_safe(c)).map(|c| format!("{c:<45} {:?}", classify(c))).collect();
    assert!(asked.is_empty(), "{} read-only commands are no longer auto-approved:\n{}", asked.len(), asked.join("\n"));
}
