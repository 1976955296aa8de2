#!/usr/bin/env python3
"""How far a ranker learned from the repository map's own signals could go.

    ceiling.py DUMP [DUMP...] [--trees N] [--head K]

Each DUMP is what `cargo bench -p tandem-repo-map --bench history -- --dump DUMP REPO...`
writes: per commit, the files' signals and the map's order. This script learns a ranker
(LambdaMART, LightGBM) over the map's top K files of each case from those signals, and tests
it on each repository after learning it on all the others (leave one repository out), so a
number is never measured on the commits it was learned from. It does it twice:

- with the map's signals alone, plus the map's own order;
- with three priors from the repository's history added, which the map does not use:
  how many commits ago the file last changed, its share of the last 100 commits, and its
  size. They come from git at each commit's parent, so they see nothing newer.

It prints recall at 1 and at 5 of the changed files per repository beside the map's own and
BM25's from the same dump. A learned ranker that does not move much above the map means the
signals, not their weights, bound the map.

Needs numpy and lightgbm (`pip install numpy lightgbm`) and the repositories the dump names.
"""

import argparse
import json
import math
import subprocess
import sys
from collections import Counter, defaultdict

try:
    import lightgbm
    import numpy
except ImportError as err:
    sys.exit(f"ceiling.py needs numpy and lightgbm (pip install numpy lightgbm): {err}")


def git(repo, *args):
    out = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"git {' '.join(args)} in {repo}: {out.stderr.strip()}")
    return out.stdout


def changed_files(repo):
    """Each commit's changed files, by hash."""
    out = git(repo, "log", "--no-merges", "--format=\x1e%H", "--name-only", "-n", "20000")
    files = {}
    for record in out.split("\x1e")[1:]:
        lines = [line for line in record.split("\n") if line.strip()]
        files[lines[0]] = lines[1:]
    return files


def add_priors(repo, cases):
    """Per case and file: commits since it last changed, share of the last 100, size."""
    files_of = changed_files(repo)
    for case in cases:
        since, recent = {}, Counter()
        revs = git(repo, "rev-list", "--no-merges", "-n", "300", case["parent"]).split()
        for age, rev in enumerate(revs):
            for path in files_of.get(rev, []):
                since.setdefault(path, age)
                if age < 100:
                    recent[path] += 1
        sizes = {}
        for line in git(repo, "ls-tree", "-r", "-l", case["parent"]).splitlines():
            meta, path = line.split("\t", 1)
            kind, size = meta.split()[1], meta.split()[3]
            if kind == "blob":
                sizes[path] = int(size)
        most = max(recent.values(), default=1)
        case["priors"] = {
            path: [
                math.exp(-since.get(path, 1000) / 5),
                recent[path] / most,
                math.log(max(sizes.get(path, 0), 100)),
            ]
            for path, _ in case["files"]
        }


def recall(order, changed, k):
    top = set(order[:k])
    return sum(path in top for path in changed) / len(changed)


def rows(case, head, priors):
    signals = dict((path, values) for path, values in case["files"])
    out = []
    for position, path in enumerate(case["map"][:head]):
        row = list(signals[path]) + [1 / (1 + position)]
        if priors:
            row += case["priors"][path]
        out.append(row)
    return out


def learn(cases, head, priors, trees):
    features, labels, groups = [], [], []
    for case in cases:
        changed = set(case["changed"])
        block = rows(case, head, priors)
        features += block
        labels += [int(path in changed) for path in case["map"][:head]]
        groups.append(len(block))
    model = lightgbm.LGBMRanker(
        n_estimators=trees, learning_rate=0.05, num_leaves=7, min_child_samples=20, verbose=-1
    )
    model.fit(numpy.array(features), numpy.array(labels), group=groups)
    return model


def reorder(model, case, head, priors):
    scores = model.predict(numpy.array(rows(case, head, priors)))
    ranked = [case["map"][i] for i in numpy.argsort(-scores, kind="stable")]
    return ranked + case["map"][head:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dumps", nargs="+")
    parser.add_argument("--trees", type=int, default=150)
    parser.add_argument("--head", type=int, default=40, help="the map's top files re-ranked")
    args = parser.parse_args()

    by_repo = defaultdict(list)
    for dump in args.dumps:
        try:
            with open(dump) as f:
                cases = json.load(f)
        except (OSError, ValueError) as err:
            sys.exit(f"{dump}: {err}")
        for case in cases:
            if "repo" not in case or "map" not in case:
                sys.exit(f"{dump}: not a dump of this version of the history bench (no `repo` or `map`)")
            by_repo[case["repo"]].append(case)
    if len(by_repo) < 2:
        sys.exit(f"leave one repository out needs cases of two repositories at least; the dumps have {len(by_repo)}")
    for repo, cases in by_repo.items():
        add_priors(repo, cases)

    header = f"{'repository':<20} {'cases':>5} {'map@1':>7} {'map@5':>7} {'learned@1':>9} {'learned@5':>9}"
    print(header + f" {'+priors@1':>9} {'+priors@5':>9} {'bm25@1':>7} {'bm25@5':>7}")
    totals = defaultdict(float)
    for repo, test in by_repo.items():
        train = [case for other, cases in by_repo.items() if other != repo for case in cases]
        plain = learn(train, args.head, False, args.trees)
        primed = learn(train, args.head, True, args.trees)
        sums = defaultdict(float)
        for case in test:
            bm25 = [path for path, _ in sorted(case["bm25"], key=lambda x: (-x[1], x[0]))]
            orders = {
                "map": case["map"],
                "learned": reorder(plain, case, args.head, False),
                "priors": reorder(primed, case, args.head, True),
                "bm25": bm25,
            }
            for name, order in orders.items():
                for k in (1, 5):
                    sums[(name, k)] += recall(order, case["changed"], k)
        print_row(repo.rstrip("/").split("/")[-1], sums, len(test))
        for key, value in sums.items():
            totals[key] += value
        totals["n"] += len(test)
    print_row("all", totals, int(totals["n"]))


def print_row(name, sums, n):
    """One row of the table: recall at 1 and 5 of each ranking, `sums` over `n` cases."""
    cells = " ".join(
        f"{sums[(ranking, k)] / n:>{width}.3f}"
        for ranking, width in (("map", 7), ("learned", 9), ("priors", 9), ("bm25", 7))
        for k in (1, 5)
    )
    print(f"{name:<20} {n:>5} {cells}")


if __name__ == "__main__":
    main()
