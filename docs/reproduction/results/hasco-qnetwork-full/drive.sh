#!/bin/bash
# Issue 49 item 1: HASCO's flow with the Q-network in the loop on all 17 pairs of
# experiments.reproduce.hasco.PAIRS, seeds 0-9, no random hardware search, the settings of the
# subset run (results/hasco-qnetwork/, whose records seed this run's: its 3 pairs are reused,
# not rerun). Pairs are added in PAIRS' order, one a step. Resumable: every finished hardware search and finished pair is a record under
# $OUT/records, reused by the next invocation. Run again to resume.
set -u
cd "$(dirname "$0")/../../../.."   # the repository root (the driver lives in $DOC)
export PYTHONPATH=$PWD
PY=${PY:-/work/main/.venv/bin/python}   # the interpreter (a worktree has no .venv of its own)
OUT=runs/reproduce/hasco-qnetwork-full
DOC=docs/reproduction/results/hasco-qnetwork-full
PAIRS=(resnet50:GEMM resnet50:CONV mobilenet_v2:GEMM mobilenet_v2:CONV xception:GEMM xception:CONV
       gemm:GEMM gemm:GEMV gemv:GEMV conv2d:CONV conv2d:GEMM conv2d:GEMV depthwise:DOT depthwise:GEMV
       mttkrp:GEMV ttm:GEMM ttm:GEMV)
# the committed records, reused: the subset's (its 3 pairs) and this run's so far (a new
# checkout has no runs/); cp -n keeps any record already in $OUT
mkdir -p $OUT/records
for src in docs/reproduction/results/hasco-qnetwork/records $DOC/records; do
  [ -d $src ] && cp -rn $src/. $OUT/records/
done
echo "$(date -Is) start, code $(git rev-parse HEAD)" >> $OUT/drive.log
# (this script is committed as docs/reproduction/results/hasco-qnetwork-full/drive.sh; run that one)

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
nav, page = Path("mkdocs.yml"), "reproduction/results/hasco-qnetwork-full/table.md"
after = "          - HASCO, Q-network in the loop: reproduction/results/hasco-qnetwork/table.md\n"
text = nav.read_text()
if (doc / "table.md").exists() and page not in text and after in text:
    nav.write_text(text.replace(after, after + f"          - HASCO, Q-network in the loop, 17 pairs: {page}\n"))
PYEOF
  for try in 1 2 3; do
    git add -A -- $DOC mkdocs.yml && { git diff --cached --quiet -- $DOC mkdocs.yml || git commit -q -m "$1" -- $DOC mkdocs.yml; } && return 0
    sleep 30
  done
  echo "$(date -Is) commit failed: $1" >> $OUT/drive.log
}

for i in $(seq 4 ${#PAIRS[@]}); do
  sub=("${PAIRS[@]:0:$i}")
  $PY -m experiments.reproduce.hasco --pairs "${sub[@]}" --seeds 10 --no-random --sw-method qnetwork \
      --sw-seed run --out $OUT >> $OUT/run.log 2>&1 &
  child=$!
  while kill -0 $child 2>/dev/null; do
    for _ in $(seq 120); do kill -0 $child 2>/dev/null || break; sleep 10; done
    n=$(ls $OUT/records/hasco.search 2>/dev/null | wc -l)
    kill -0 $child 2>/dev/null && sync_commit "hasco-qnetwork-full run (issue 49 item 1): records so far, $n hardware searches; pair ${sub[-1]} under way"
  done
  wait $child; rc=$?
  echo "$(date -Is) pairs ${sub[*]}: rc $rc" >> $OUT/drive.log
  [ $rc -eq 0 ] || exit $rc
  sync_commit "hasco-qnetwork-full run (issue 49 item 1): ${sub[-1]} finished; results.json and table.md of the pairs ${sub[*]} at 10 seeds, Q-network in the loop (60 schedules a layer, the run's seed)"
done
echo "$(date -Is) done" >> $OUT/drive.log
touch $OUT/DONE
