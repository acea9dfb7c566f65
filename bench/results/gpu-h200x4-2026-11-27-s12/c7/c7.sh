#!/usr/bin/env bash
# session 12 call 7: which of the tuned settings lifts send/recv between 2 simulated hosts x 2 GPUs (256 MiB): each alone,
# sockets+threads, all four; NCCL's socket mode and tcp_raw 16 sockets again in the same call
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L | head -1
L=$OUT/logs; mkdir -p $L
NS="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1"
sr() { local n=$1; shift; timeout -k 5 60 env SYMCOMM_BACKEND=cuda "$@" build/bin/symcomm-run -n 4 --hosts 2 --timeout 55 -- build/bin/symcomm-perf -o sendrecv -b 256M -e 256M -n 10 -w 3 -c 1 > $L/$n.log 2>&1; echo "$n rc=$? $(grep -E '^ +268435456' $L/$n.log | awk '{print $7, $11}')"; }
for rep in 1 2; do
sr default_$rep
sr s16_$rep SYMCOMM_NET_SOCKETS=16
sr t16_$rep SYMCOMM_NET_THREADS=16
sr w64_$rep SYMCOMM_NET_WINDOW=64
sr s16t16_$rep SYMCOMM_NET_SOCKETS=16 SYMCOMM_NET_THREADS=16
sr s8t16_$rep SYMCOMM_NET_SOCKETS=8 SYMCOMM_NET_THREADS=16
sr all_$rep SYMCOMM_NET_SOCKETS=16 SYMCOMM_NET_THREADS=16 SYMCOMM_NET_WINDOW=64
done
timeout -k 5 60 env $NS build/bin/symcomm-run -n 4 --timeout 55 -- build/bin/symcomm-perf --engine nccl -o sendrecv -b 256M -e 256M -n 10 -w 3 -c 1 > $L/ncclsock.log 2>&1; echo "ncclsock rc=$? $(grep -E '^ +268435456' $L/ncclsock.log | awk '{print $7, $11}')"
timeout -k 5 60 build/bin/symcomm-run -n 2 --hosts 2 --timeout 55 -- build/bench/tcp_raw -s 16 -b 268435456 -n 10 -w 3 > $L/tcp16.log 2>&1; echo "tcp16 rc=$? $(tail -1 $L/tcp16.log)"
cd $OUT && tar czf logs.tgz logs && rm -rf logs
