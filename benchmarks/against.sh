#!/usr/bin/env bash
# Runs benchmarks of this checkout and of another revision in turn (A B A B), so that both sides meet
# the same machine weather: `benchmarks/against.sh REV bench_sinks.py "bench_capture.py --rounds 2" ...`
# (each argument is a benchmark with its options, quoted as one word).
# Each benchmark prints its own figures (and its own in-run baseline); this only alternates the two
# checkouts and keeps every output in $OUT (default /tmp/agentevals-against), one file per run:
# <bench>.<side>.<round>.txt with side "this" or the revision. ROUNDS (default 2) sets the alternations.
# The other revision is checked out as a git worktree beside the repository, with its own environment.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: benchmarks/against.sh REV 'BENCH.py [OPTIONS]' ['BENCH.py [OPTIONS]' ...]" >&2
  exit 2
fi
rev="$1"
shift
out="${OUT:-/tmp/agentevals-against}"
rounds="${ROUNDS:-2}"
other="$(mktemp -d)/$rev"
git worktree add --detach --quiet "$other" "$rev"
trap 'git worktree remove --force "$other"' EXIT
(cd "$other" && uv sync --all-packages --quiet)
uv sync --all-packages --quiet
mkdir -p "$out"
for bench in "$@"; do
  read -r -a words <<<"$bench"
  name="${words[0]%.py}"
  for round in $(seq 1 "$rounds"); do
    for side in this "$rev"; do
      dir="$PWD"
      [ "$side" = this ] || dir="$other"
      file="$out/$name.$side.$round.txt"
      echo "== $bench ($side, round $round) -> $file" >&2
      (cd "$dir" && uv run --quiet python "benchmarks/${words[0]}" "${words[@]:1}" >"$file" 2>&1) ||
        echo "   exited $? (see $file)" >&2
    done
  done
done
