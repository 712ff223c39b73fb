#!/bin/bash
# Issue 49 item 1: HASCO's flow with the Q-network in the loop, on the subset fixed before the
# run: the first 3 pairs of experiments.reproduce.hasco.PAIRS, seeds 0-9, no random hardware
# search. Resumable: every finished hardware search and finished pair is a record under
# $OUT/records, reused by the next invocation. Run again to resume.
set -u
cd /work/wt-h49q
export PYTHONPATH=$PWD
PY=/work/main/.venv/bin/python
OUT=runs/reproduce/hasco-qnetwork
DOC=docs/reproduction/results/hasco-qnetwork
PAIRS=(resnet50:GEMM resnet50:CONV mobilenet_v2:GEMM)
echo "$(date -Is) start, code $(git rev-parse HEAD)" >> $OUT/drive.log
# (a copy of this script, docs/reproduction/results/hasco-qnetwork/drive.sh, is committed; run that one)

sync_commit() {  # copy finished records (no temporaries) and the latest results; commit only $DOC
  $PY - "$OUT" "$DOC" <<'PYEOF'
import shutil, sys
from pathlib import Path
out, doc = Path(sys.argv[1]), Path(sys.argv[2])
for f in (out / "records").glob("*/*.json"):
    if f.name.startswith(".") or ".dup-" in f.name:
        continue
    dst = doc / "records" / f.parent.name / f.name
    if not dst.exists() or dst.read_bytes() != f.read_bytes():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
for name in ("results.json", "table.md"):
    if (out / name).exists():
        shutil.copyfile(out / name, doc / name)
# the table's page in the site's nav, with the first table (the docs tests want every page there)
nav, page = Path("mkdocs.yml"), "reproduction/results/hasco-qnetwork/table.md"
after = "          - HASCO software search, seeds 6-15: reproduction/results/hasco-sw-search/seeds-6-15/table.md\n"
text = nav.read_text()
if (doc / "table.md").exists() and page not in text and after in text:
    nav.write_text(text.replace(after, after + f"          - HASCO, Q-network in the loop: {page}\n"))
PYEOF
  for try in 1 2 3; do
    git add -A -- $DOC mkdocs.yml && { git diff --cached --quiet -- $DOC mkdocs.yml || git commit -q -m "$1" -- $DOC mkdocs.yml; } && return 0
    sleep 30
  done
  echo "$(date -Is) commit failed: $1" >> $OUT/drive.log
}

for i in 1 2 3; do
  sub=("${PAIRS[@]:0:$i}")
  $PY -m experiments.reproduce.hasco --pairs "${sub[@]}" --seeds 10 --no-random --sw-method qnetwork \
      --sw-seed run --out $OUT >> $OUT/run.log 2>&1 &
  child=$!
  while kill -0 $child 2>/dev/null; do
    for _ in $(seq 120); do kill -0 $child 2>/dev/null || break; sleep 10; done
    n=$(ls $OUT/records/hasco.search 2>/dev/null | wc -l)
    kill -0 $child 2>/dev/null && sync_commit "hasco-qnetwork run (issue 49 item 1): records so far, $n hardware searches; pair ${sub[-1]} under way"
  done
  wait $child; rc=$?
  echo "$(date -Is) pairs ${sub[*]}: rc $rc" >> $OUT/drive.log
  [ $rc -eq 0 ] || exit $rc
  sync_commit "hasco-qnetwork run (issue 49 item 1): ${sub[-1]} finished; results.json and table.md of the pairs ${sub[*]} at 10 seeds, Q-network in the loop (60 schedules a layer, the run's seed)"
done
echo "$(date -Is) done" >> $OUT/drive.log
touch $OUT/DONE
