#!/usr/bin/env bash
# session 12 call 6: issue 10's GPU row on 4x H200: 2 simulated hosts x 2 GPUs over loopback, send/recv 64-256 MiB, symcomm
# (defaults and tuned) against NCCL's socket mode, and the loopback ceiling: tcp_raw (plain sockets, 2 ranks on 2 simulated
# hosts, both ways at once, every byte checked) with 16 and 4 sockets, all in this one call
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; nproc
L=$OUT/logs; mkdir -p $L
NS="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1"
TUNE="SYMCOMM_NET_SOCKETS=16 SYMCOMM_NET_THREADS=16 SYMCOMM_NET_WINDOW=64 SYMCOMM_NET_CHUNK_BYTES=1048576"
run() { local n=$1; shift; timeout -k 5 110 "$@" > $L/$n.log 2>&1; echo "$n rc=$?"; grep -E "^ +(67108864|268435456)|GB/s" $L/$n.log | tail -3; }
run tcp16 build/bin/symcomm-run -n 2 --hosts 2 --timeout 100 -- build/bench/tcp_raw -s 16 -b 268435456 -n 10 -w 3
run sr_tuned env SYMCOMM_BACKEND=cuda $TUNE build/bin/symcomm-run -n 4 --hosts 2 --timeout 100 -- build/bin/symcomm-perf -o sendrecv -b 64M -e 256M -f 4 -n 10 -w 3 -c 1
run sr_default env SYMCOMM_BACKEND=cuda build/bin/symcomm-run -n 4 --hosts 2 --timeout 100 -- build/bin/symcomm-perf -o sendrecv -b 64M -e 256M -f 4 -n 10 -w 3 -c 1
run sr_ncclsock env $NS build/bin/symcomm-run -n 4 --timeout 100 -- build/bin/symcomm-perf --engine nccl -o sendrecv -b 64M -e 256M -f 4 -n 10 -w 3 -c 1
run tcp4 build/bin/symcomm-run -n 2 --hosts 2 --timeout 100 -- build/bench/tcp_raw -s 4 -b 268435456 -n 10 -w 3
cd $OUT && tar czf logs.tgz logs && rm -rf logs
