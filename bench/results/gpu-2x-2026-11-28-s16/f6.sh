#!/usr/bin/env bash
# session 16 call 6 (2 GPUs): make test-gpu with the review's fix (a failed LL call is counted, later calls refused
# without a second path; new step coll_stopped_stream_2) and send/recv reading the stop word's device copy;
# test_coll stopped 5 more times; sendrecv and small collectives against febc6d0 (old) and NCCL -R 1, 2 runs.
nvidia-smi -L; mkdir -p $OUT/logs/x
for i in 1 2 3 4 5; do
  timeout 60 env SYMCOMM_BACKEND=cuda build/bin/symcomm-run -n 2 --timeout 50 -- build/tests/mp/test_coll stopped > $OUT/logs/x/stopped_$i.log 2>&1
  echo "test_coll stopped run $i rc=$?"
done
TT=330 TAG=t KEEP=1 bash build/bin/ab9.sh T
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="old:build-ab/old/lib:$C new:build/lib:$C nccl:nccl" OPS="sendrecv" B=8 E=1M F=4 REPS=2 EXTRA="-R 1" TAG=sr bash $S
VARS="old:build-ab/old/lib:$C new:build/lib:$C nccl:nccl" OPS="allreduce allgather broadcast" B=8 E=4K F=8 REPS=2 EXTRA="-R 1" TAG=ll bash $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
