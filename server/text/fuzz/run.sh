#!/usr/bin/env bash
# Runs tandem-text's fuzz targets for a while each; exits non-zero when one crashes (panic,
# failed assertion, sanitizer report, timeout, out-of-memory).
#
#   server/text/fuzz/run.sh [SECONDS] [TARGET...]     (default: 15 s, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). It runs on stable Rust through
# RUSTC_BOOTSTRAP=1, since cargo-fuzz builds with `-Z` flags. Everything it writes goes under the
# workspace's target/fuzz/: build, corpus/<target> (kept between runs, so later runs go deeper),
# artifacts/<target> (crashing inputs) and logs/<target>.log. Each run also reads, as extra
# corpora, the target's checked-in seeds (fuzz/seeds/<target>, plus the patch fixtures of the
# tests for unified_parse) and crash regressions (fuzz/regressions/<target>): a regression input
# that still crashes fails the run at once.
set -euo pipefail
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
text_dir="$(dirname "$fuzz_dir")"
out="$(cd "$text_dir/../.." && pwd)/target/fuzz"
seconds="${1:-15}"
shift || true
export RUSTC_BOOTSTRAP=1
cd "$text_dir"

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi
if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz: no fuzz target found (cargo fuzz list)" >&2
  exit 1
fi

build_start=$SECONDS
if [ "$#" -gt 0 ]; then
  for target in "${targets[@]}"; do cargo fuzz build --target-dir "$out" "$target"; done
else
  cargo fuzz build --target-dir "$out"
fi
echo "fuzz: built ${#targets[@]} targets in $((SECONDS - build_start)) s"

failed=()
for target in "${targets[@]}"; do
  case "$target" in
    unified_parse | begin_patch_parse) dict=patch.dict ;;
    *) dict=text.dict ;;
  esac
  corpora=("$out/corpus/$target")
  extras=("fuzz/seeds/$target" "fuzz/regressions/$target")
  if [ "$target" = unified_parse ]; then extras+=(tests/patch_fixtures); fi
  for extra in "${extras[@]}"; do
    if [ -d "$extra" ]; then corpora+=("$extra"); fi
  done
  mkdir -p "$out/corpus/$target" "$out/artifacts/$target" "$out/logs"
  log="$out/logs/$target.log"
  if cargo fuzz run --target-dir "$out" "$target" "${corpora[@]}" -- \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -dict="fuzz/dicts/$dict" \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/$target/" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $target: ${runs:-?} executions in $seconds s, no crash"
  else
    echo "fuzz: $target CRASHED (log: $log, input: $out/artifacts/$target/):" >&2
    grep -A 3 'panicked at' "$log" >&2 || true
    tail -n 30 "$log" >&2
    failed+=("$target")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: crashed: ${failed[*]}; reproduce with: cd server/text && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> <input>" >&2
  exit 1
fi
