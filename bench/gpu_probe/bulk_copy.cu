// What one SM moves with Hopper's bulk copy engine (cp.async.bulk: global
// to shared memory and back, one thread issuing, completion on an mbarrier)
// against the SM copy loop symcomm uses (16-byte loads and stores by every
// thread, 4 in flight each), by 1 to 132 blocks: how many SMs a copy of a
// given rate needs (session 19: NCCL moves 300 GB/s on fewer SMs than
// symcomm). Local copies on GPU 0; with 2 GPUs, pushes to and pulls from
// GPU 1 too. The last copy of each kind and block count is checked. Not
// part of symcomm.
//
//   nvcc -O3 -arch=sm_90 -o build/bin/bulk_copy bench/gpu_probe/bulk_copy.cu
//   build/bin/bulk_copy [MiB]
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "copy_loop.cuh"

#define MAX_STAGES 8

static __device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

// `bytes` from src into a stage buffer, their arrival counted on `bar`.
static __device__ __forceinline__ void bulk_load(char *stage, uint64_t *bar, const char *src,
                                                 uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
               "[%3];" ::"r"(smem_addr(stage)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

static __device__ __forceinline__ void bulk_wait(uint64_t *bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
}

static __device__ __forceinline__ void bulk_store(char *dst, const char *stage, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
               "r"(smem_addr(stage)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// One thread of each block streams its chunks through `stages` buffers of
// `chunk` bytes (2 to MAX_STAGES): `stages` loads in flight at first, then
// `stages` - 1 (a buffer is loaded again once the store reading it has read
// it, which the thread learns after the next chunk landed); each chunk stored
// as soon as it landed.
__global__ void k_copy_bulk(char *dst, const char *src, size_t bytes, uint32_t chunk, int stages) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) uint64_t bar[MAX_STAGES];
  if (threadIdx.x != 0)
    return;
  for (int s = 0; s < stages; s++)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  size_t nchunks = bytes / chunk, mine = 0;
  for (size_t c = blockIdx.x; c < nchunks; c += gridDim.x)
    mine++;
  uint32_t parity = 0; // bit s: the phase stage s waits for next
  for (size_t k = 0; k < mine && k < (size_t)stages; k++) {
    size_t c = blockIdx.x + k * gridDim.x;
    bulk_load(smem + k * chunk, &bar[k], src + c * chunk, chunk);
  }
  for (size_t k = 0; k < mine; k++) {
    int s = (int)(k % stages);
    size_t c = blockIdx.x + k * gridDim.x;
    bulk_wait(&bar[s], parity >> s & 1);
    parity ^= 1u << s;
    bulk_store(dst + c * chunk, smem + s * chunk, chunk);
    // The store before this one has read its buffer: load that buffer's next chunk.
    if (k >= 1 && k - 1 + stages < mine) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      size_t kk = k - 1 + stages;
      int ss = (int)(kk % stages);
      bulk_load(smem + ss * chunk, &bar[ss], src + (blockIdx.x + kk * gridDim.x) * chunk, chunk);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

static float ms_between(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

__global__ void k_fill(uint32_t *p, size_t n, uint32_t seed) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

__global__ void k_check(const uint32_t *p, size_t n, uint32_t seed, unsigned long long *bad) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    if (p[i] != ((uint32_t)(i * 2654435761u) ^ seed))
      atomicAdd(bad, 1ull);
}

// GB/s of `bytes` copied (median of 5 timed copies after one warm-up); the
// destination checked after the last one. bulk: chunk > 0.
static double rate(char *dst, int dst_dev, const char *src, size_t bytes, int blocks, uint32_t chunk,
                   int stages, uint32_t seed, unsigned long long *bad) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float ms[5];
  size_t smem = (size_t)chunk * stages;
  for (int rep = -1; rep < 5; rep++) {
    CK(cudaSetDevice(dst_dev));
    CK(cudaMemset(dst, 0, bytes));
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(0));
    CK(cudaEventRecord(a));
    if (chunk > 0)
      k_copy_bulk<<<blocks, 32, smem>>>(dst, src, bytes, chunk, stages);
    else
      k_copy<<<blocks, COPY_LOOP_THREADS>>>((uint4 *)dst, (const uint4 *)src, bytes / 16);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    if (rep >= 0)
      ms[rep] = ms_between(a, b);
  }
  for (int i = 0; i < 5; i++)
    for (int j = i + 1; j < 5; j++)
      if (ms[j] < ms[i]) {
        float t = ms[i];
        ms[i] = ms[j];
        ms[j] = t;
      }
  CK(cudaSetDevice(dst_dev));
  CK(cudaMemset(bad, 0, sizeof(*bad)));
  k_check<<<264, 512>>>((const uint32_t *)dst, bytes / 4, seed, bad);
  unsigned long long nbad = 0;
  CK(cudaMemcpy(&nbad, bad, sizeof(nbad), cudaMemcpyDeviceToHost));
  if (nbad != 0) {
    fprintf(stderr, "copy by %d blocks (chunk %u, stages %d): %llu of %zu words wrong\n", blocks,
            chunk, stages, nbad, bytes / 4);
    exit(1);
  }
  CK(cudaSetDevice(0));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return bytes / (ms[2] * 1e6);
}

int main(int argc, char **argv) {
  static_assert(MAX_STAGES >= 6, "the kinds below use up to 6 stages");
  size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20;
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, %d GPUs; %zu MiB copies, GB/s (median of 5), the last of each checked\n", prop.name,
         prop.multiProcessorCount, gpus, bytes >> 20);
  CK(cudaFuncSetAttribute(k_copy_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
  char *src, *dst, *peer = NULL, *peer_dst = NULL;
  unsigned long long *bad, *peer_bad = NULL;
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMalloc(&bad, sizeof(*bad)));
  k_fill<<<264, 512>>>((uint32_t *)src, bytes / 4, 0x5eed);
  if (gpus >= 2) {
    CK(cudaDeviceEnablePeerAccess(1, 0));
    CK(cudaSetDevice(1));
    CK(cudaDeviceEnablePeerAccess(0, 0));
    CK(cudaMalloc(&peer, bytes));
    CK(cudaMalloc(&peer_dst, bytes));
    CK(cudaMalloc(&peer_bad, sizeof(*peer_bad)));
    k_fill<<<264, 512>>>((uint32_t *)peer, bytes / 4, 0x5eed);
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(0));
  }
  CK(cudaDeviceSynchronize());
  struct {
    uint32_t chunk;
    int stages;
  } kinds[] = {{0, 0}, {8 << 10, 4}, {16 << 10, 4}, {32 << 10, 4}, {32 << 10, 6}};
  for (unsigned k = 1; k < sizeof kinds / sizeof kinds[0]; k++)
    if (kinds[k].stages < 2 || kinds[k].stages > MAX_STAGES) {
      fprintf(stderr, "a bulk copy needs 2 to %d stages, not %d\n", MAX_STAGES, kinds[k].stages);
      return 2;
    }
  int grid[] = {1, 2, 4, 8, 16, 32, 64, 132};
  const char *where[] = {"local", "push to GPU 1", "pull from GPU 1"};
  for (int w = 0; w < (gpus >= 2 ? 3 : 1); w++) {
    printf("\n%s: blocks, then GB/s for: SM loop (512 threads, 4x16 B in flight)", where[w]);
    for (unsigned k = 1; k < sizeof kinds / sizeof kinds[0]; k++)
      printf(" | bulk %u KiB x %d", kinds[k].chunk >> 10, kinds[k].stages);
    printf("\n");
    for (unsigned g = 0; g < sizeof grid / sizeof grid[0]; g++) {
      printf("%4d", grid[g]);
      for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char *to = w == 1 ? peer_dst : dst;
        const char *from = w == 2 ? peer : src;
        double r = rate(to, w == 1 ? 1 : 0, from, bytes, grid[g], kinds[k].chunk, kinds[k].stages,
                        0x5eed, w == 1 ? peer_bad : bad);
        printf(" %9.1f", r);
      }
      printf("\n");
      fflush(stdout);
    }
  }
  return 0;
}
