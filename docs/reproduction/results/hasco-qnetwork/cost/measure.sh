#!/bin/bash
# cost measurements for issue 49 item 1: the Q-network in the loop
cd /work/wt-h49q
export PYTHONPATH=$PWD
PY=/work/main/.venv/bin/python
/usr/bin/time -f "quick wall %e s user %U s sys %S s" $PY -m experiments.reproduce.hasco --quick --sw-method qnetwork --sw-seed run --out runs/h49q-cost/quick > runs/h49q-cost/quick.log 2>&1
/usr/bin/time -f "resnet50-GEMM-1seed wall %e s user %U s sys %S s" $PY -m experiments.reproduce.hasco --pairs resnet50:GEMM --seeds 1 --no-random --sw-method qnetwork --sw-seed run --out runs/h49q-cost/resnet50-gemm > runs/h49q-cost/pair.log 2>&1
echo done > runs/h49q-cost/DONE
