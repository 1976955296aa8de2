#!/usr/bin/env python3
"""A git repository with a project's real history, rebuilt from its GNU-style ChangeLog, for
the history benchmark (`cargo bench -p tandem-repo-map --bench history -- REPO...`).

GNU projects (coreutils, grep, sed, tar, ...) ship in their release tarballs a ChangeLog
written from their git log: each commit's subject line, then a `* path (function): ...` line
per file it changed. This script takes an unpacked release, replays those commits, oldest
first, as commits of a new repository that change exactly the files listed (each by one
trailing newline, so the tree stays the release's), with the original subjects. The benchmark
then checks out each commit's parent and asks the map with the subject alone, as it does on a
real clone.

Gnulib's copies (`lib/`, `gnulib-tests/`, `gnu/`, `gl/`, `m4/`) are in a release tarball but
not in the project's own git (they come from a submodule at bootstrap); a file under those
folders that no ChangeLog of the release mentions is left out, so the tree is close to a
clone's.

    changelog_repo.py [--bodies] UNPACKED_RELEASE OUT_REPO [MAX_COMMITS]

With --bodies, each commit's message has the entry's body below the subject, as the
project's own commit had (GNU projects write their ChangeLog lines in their commit messages).

Release tarballs: Debian's `<name>_<version>.orig.tar.xz` under
http://deb.debian.org/debian/pool/main/, for example coreutils 9.1, grep 3.8, sed 4.9,
diffutils 3.8, findutils 4.9.0, gzip 1.12, tar 1.34+dfsg, make-dfsg 4.3.
"""

import glob
import os
import re
import shutil
import subprocess
import sys

GNULIB_FOLDERS = ("lib", "gnulib-tests", "gnu", "gl", "m4")


def commits_of(changelog):
    """The ChangeLog's commits, newest first: {subject, files}."""
    commits, current, after_blank = [], None, True
    for line in changelog.split("\n"):
        if re.match(r"^\d{4}-\d\d-\d\d\s", line):  # a date and author: a new group
            current, after_blank = None, True
            continue
        if not line.strip():
            after_blank = True
            continue
        if not line.startswith(("\t", "        ")):
            after_blank = False
            continue
        text = line.strip()
        if current is not None and not (after_blank and current["files"]):
            current["body"].append(text)
        listed = re.match(r"^\*\s+(.*)", text)
        if listed:
            if current is not None:
                names = re.split(r"[(:]", listed.group(1), maxsplit=1)[0]
                current["files"] += [n.strip() for n in names.split(",") if n.strip()]
        elif current is None or (after_blank and current["files"]):
            # A group's first line, or a paragraph after a commit that listed its files.
            current = {"subject": text, "files": [], "body": []}
            commits.append(current)
        after_blank = False
    return [c for c in commits if c["files"]]


def git(repo, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=env)


def main():
    args = [a for a in sys.argv[1:] if a != "--bodies"]
    bodies = len(args) < len(sys.argv) - 1
    if len(args) < 2:
        sys.exit(__doc__)
    release, out = args[0], args[1]
    limit = int(args[2]) if len(args) > 2 else 3000
    with open(os.path.join(release, "ChangeLog"), encoding="utf-8", errors="replace") as f:
        commits = commits_of(f.read())[:limit]
    commits.reverse()
    mentioned = ""
    for path in glob.glob(os.path.join(release, "ChangeLog*")):
        with open(path, encoding="utf-8", errors="replace") as f:
            mentioned += f.read()

    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(release, out, symlinks=True)
    dropped = 0
    for top in GNULIB_FOLDERS:
        for folder, _, names in os.walk(os.path.join(out, top)):
            for name in names:
                rel = os.path.relpath(os.path.join(folder, name), out)
                if rel not in mentioned:
                    os.remove(os.path.join(folder, name))
                    dropped += 1

    author = ["-c", "user.name=ChangeLog", "-c", "user.email=changelog@example.invalid"]
    git(out, "init", "-q")
    git(out, "add", "-A", "-f")
    git(out, *author, "commit", "-q", "--no-verify", "-m", "import")
    replayed = 0
    for commit in commits:
        touched = []
        for rel in dict.fromkeys(commit["files"]):
            path = os.path.join(out, rel)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    data = f.read()
                data = data[:-1] if data.endswith(b"\n\n") else data + b"\n"
                with open(path, "wb") as f:
                    f.write(data)
                touched.append(rel)
        if touched:
            git(out, "add", "--", *touched)
            message = commit["subject"]
            if bodies and commit["body"]:
                message += "\n\n" + "\n".join(commit["body"])
            git(out, *author, "commit", "-q", "--no-verify", "--cleanup=verbatim", "-m", message)
            replayed += 1
    print(f"{out}: {replayed} of {len(commits)} commits replayed, {dropped} gnulib files left out")


if __name__ == "__main__":
    main()
