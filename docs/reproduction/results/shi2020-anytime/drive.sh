#!/bin/bash
# Issue 42 item 1: `coexplore reproduce shi2020` from scratch with the committed settings (the
# search's inner mapper the fast default, MAX_NODES = 40,000; the inner-BO ablation at 5 seeds,
# item 3), resumable across sessions: every finished step, search and re-map is a record under
# $OUT/records; the committed ones ($DOC/records) are read back with --cache-from, so a new
# checkout continues where the last commit left it. Run again to resume.
set -u
cd "$(dirname "$0")/../../../.."   # the repository root (the driver lives in $DOC)
export PYTHONPATH=$PWD
PY=${PY:-/work/main/.venv/bin/python}   # the interpreter (a worktree has no .venv of its own)
OUT=runs/reproduce/shi2020-anytime
DOC=docs/reproduction/results/shi2020-anytime
WORKERS=${WORKERS:-1}
mkdir -p $OUT $DOC/records
echo "$(date -Is) start, code $(git rev-parse HEAD), workers $WORKERS" >> $OUT/drive.log

sync_commit() {  # copy finished records (no temporaries) and the log; with "final", results.json
  # and table.md too (before the run ends they would be pages no test reassembles); commit only $DOC
  $PY - "$OUT" "$DOC" "${2:-}" <<'PYEOF'
import shutil, sys
from pathlib import Path
out, doc, final = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "final"
for f in (out / "records").glob("*/*.json"):
    if f.name.startswith(".") or ".dup-" in f.name:
        continue
    dst = doc / "records" / f.parent.name / f.name
    if not dst.exists() or dst.read_bytes() != f.read_bytes():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
for name in ("results.json", "table.md", "run.log") if final else ("run.log",):
    if (out / name).exists():
        shutil.copyfile(out / name, doc / name)
PYEOF
  for try in 1 2 3; do
    git add -A -- $DOC && { git diff --cached --quiet -- $DOC || git commit -q -m "$1" -- $DOC; } && return 0
    sleep 30
  done
  echo "$(date -Is) commit failed: $1" >> $OUT/drive.log
}

$PY -m experiments.reproduce.shi2020 --inner-bo-seeds 5 --workers $WORKERS --out $OUT \
    --cache-from $DOC/records >> $OUT/run.log 2>&1 &
child=$!
while kill -0 $child 2>/dev/null; do
  for _ in $(seq 90); do kill -0 $child 2>/dev/null || break; sleep 10; done
  n=$(ls $OUT/records/shi2020.search 2>/dev/null | wc -l)
  kill -0 $child 2>/dev/null && sync_commit "shi2020-anytime run (issue 42 item 1): records so far, $n searches"
done
wait $child; rc=$?
echo "$(date -Is) rc $rc" >> $OUT/drive.log
sync_commit "shi2020-anytime run (issue 42 item 1): finished (rc $rc); results.json, table.md and the records" final
[ $rc -eq 0 ] && touch $OUT/DONE
