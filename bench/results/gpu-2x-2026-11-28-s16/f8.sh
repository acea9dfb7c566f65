#!/usr/bin/env bash
# session 16 call 8 (1 GPU: no 2-GPU kind was lent any more): the build with the refusal on `broken != 0` again
# (the second review found the counting of a failed call unordered with broken's store): make test-gpu's 1-GPU steps,
# and the collectives' matrix on one rank (LL and the other paths' kernels load and run).
nvidia-smi -L; mkdir -p $OUT/logs/x
timeout 120 env SYMCOMM_BACKEND=cuda build/bin/symcomm-run -n 1 --timeout 110 -- build/tests/mp/test_coll matrix > $OUT/logs/x/matrix_1.log 2>&1; echo "test_coll matrix, 1 rank: rc=$?"
timeout 120 env SYMCOMM_BACKEND=cuda build/bin/symcomm-run -n 1 --timeout 110 -- build/tests/mp/test_p2p sizes > $OUT/logs/x/p2p_1.log 2>&1; echo "test_p2p sizes, 1 rank: rc=$?"
TT=200 TAG=t KEEP=1 bash build/bin/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
