/* The hardware's own numbers on a GPU host, for the design of symcomm's
 * kernels and for the limits docs/PERFORMANCE.md cites: what one flag costs
 * (a kernel in a graph, a read of host memory, a read of a peer's memory, a
 * one-way flag between two GPUs, a system-scope fence) and what the links
 * carry (stores to a peer, loads from a peer, every GPU reading its peers at
 * once, the copy engine), by blocks of 512 threads moving 16-byte words.
 *
 *   nvcc -O3 -arch=sm_90 -o build/bin/gpu_probe bench/gpu_probe/probe.cu
 *   build/bin/gpu_probe [gpus]        (bench/gpu_probe/run.sh does both)
 *
 * One process drives every GPU (peer access between all pairs), which on
 * NVLink moves the same bytes the same way as symcomm's VMM mappings. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "copy_loop.cuh"

#define THREADS 512
#define MAXG 8

static __device__ __forceinline__ uint64_t now_ns(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ uint64_t ld_acq(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ uint64_t ld_rlx(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ void st_rel(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ void st_rlx(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void k_empty(void) {}

/* n dependent loads of *p (mode 0 acquire, 1 relaxed): ns per load in out[0]. */
__global__ void k_chase(const uint64_t *p, int n, int mode, uint64_t *out) {
  uint64_t sum = 0, t0 = now_ns();
  for (int i = 0; i < n; i++) {
    const uint64_t *q = p + (sum & 1); /* the next address depends on the last value */
    sum += mode == 0 ? ld_acq(q) : ld_rlx(q);
  }
  out[0] = (now_ns() - t0) / (uint64_t)n;
  out[1] = sum;
}

/* Ping-pong: side 0 writes i into the peer's flag and waits for i back in
 * its own; side 1 answers. mode 0: release store / acquire poll; mode 1:
 * relaxed store after fence.acq_rel.sys / relaxed poll then fence. Side 0
 * writes the round trip in ns to out. */
__global__ void k_pingpong(uint64_t *mine, uint64_t *theirs, int side, int n, int mode,
                           uint64_t *out) {
  uint64_t t0 = now_ns();
  for (int i = 1; i <= n; i++) {
    if (side == 0) {
      if (mode == 0) st_rel(theirs, i);
      else { asm volatile("fence.acq_rel.sys;" ::: "memory"); st_rlx(theirs, i); }
    }
    if (mode == 0) while (ld_acq(mine) < (uint64_t)i) {}
    else { while (ld_rlx(mine) < (uint64_t)i) {} asm volatile("fence.acq_rel.sys;" ::: "memory"); }
    if (side == 1) {
      if (mode == 0) st_rel(theirs, i);
      else { asm volatile("fence.acq_rel.sys;" ::: "memory"); st_rlx(theirs, i); }
    }
  }
  if (side == 0)
    out[0] = (now_ns() - t0) / (uint64_t)n;
}

/* n rounds of (a 16-byte store to each of `peers`, then one fence.sc.sys):
 * ns per round. */
__global__ void k_fence(uint64_t *const *peers, int npeers, int n, int sc, uint64_t *out) {
  uint64_t t0 = now_ns();
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < npeers; r++)
      st_rlx(peers[r] + 64, i);
    if (sc) asm volatile("fence.sc.sys;" ::: "memory");
    else asm volatile("fence.acq_rel.sys;" ::: "memory");
  }
  out[0] = (now_ns() - t0) / (uint64_t)n;
}

/* The all-reduce's read pattern: this GPU sums its own part and every
 * peer's same part into dst (float32, 16 bytes at a time). */
__global__ void __launch_bounds__(THREADS) k_sum(float4 *dst, const float4 *const *srcs, int nsrcs,
                                                 size_t n) {
  size_t stride = (size_t)gridDim.x * THREADS;
  for (size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    float4 v[MAXG];
#pragma unroll
    for (int s = 0; s < MAXG; s++)
      if (s < nsrcs)
        v[s] = srcs[s][i];
    float4 a = v[0];
#pragma unroll
    for (int s = 1; s < MAXG; s++)
      if (s < nsrcs) {
        a.x += v[s].x; a.y += v[s].y; a.z += v[s].z; a.w += v[s].w;
      }
    dst[i] = a;
  }
}

static int G;
static uint64_t *dev_small[MAXG]; /* 4 KiB of each GPU, flags and outputs */
static char *dev_big[MAXG];       /* BIG bytes of each GPU */
static const size_t BIG = (size_t)512 << 20;

static uint64_t read_out(int g) {
  uint64_t v;
  CK(cudaSetDevice(g));
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&v, dev_small[g] + 256, 8, cudaMemcpyDeviceToHost));
  return v;
}

static double ms_of(cudaEvent_t a, cudaEvent_t b) {
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

static void latency(void) {
  /* a kernel in a graph */
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  const int K = 1000;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < K; i++)
    k_empty<<<1, THREADS, 0, s>>>();
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaEventRecord(a, s));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaEventRecord(b, s));
  CK(cudaStreamSynchronize(s));
  printf("latency  empty kernel in a graph (1 block x %d)      %8.2f us\n", THREADS,
         ms_of(a, b) * 1000.0 / K);
  for (int i = 0; i < K; i++)
    k_empty<<<1, THREADS, 0, s>>>();
  CK(cudaEventRecord(a, s));
  for (int i = 0; i < K; i++)
    k_empty<<<1, THREADS, 0, s>>>();
  CK(cudaEventRecord(b, s));
  CK(cudaStreamSynchronize(s));
  printf("latency  empty kernel, plain launches                %8.2f us\n", ms_of(a, b) * 1000.0 / K);

  /* loads: own memory, a peer's, pinned host memory */
  uint64_t *host;
  CK(cudaHostAlloc((void **)&host, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
  host[0] = host[1] = 0;
  uint64_t *host_dev;
  CK(cudaHostGetDevicePointer((void **)&host_dev, host, 0));
  const char *what[3] = {"own device memory", "peer GPU 1 (NVLink)", "pinned host memory"};
  for (int m = 0; m < 2; m++)
    for (int w = 0; w < 3; w++) {
      if (w == 1 && G < 2)
        continue;
      const uint64_t *p = w == 0 ? dev_small[0] : w == 1 ? dev_small[1] : host_dev;
      k_chase<<<1, 1, 0, s>>>(p, 2000, m, dev_small[0] + 256);
      CK(cudaGetLastError());
      printf("latency  dependent %s load, %-22s %8.2f us\n", m == 0 ? "acquire.sys" : "relaxed.sys",
             what[w], read_out(0) / 1000.0);
    }
  CK(cudaFreeHost(host));

  /* one-way flags between GPUs 0 and 1 */
  if (G >= 2)
    for (int mode = 0; mode < 2; mode++) {
      CK(cudaSetDevice(0));
      CK(cudaMemset(dev_small[0], 0, 256));
      CK(cudaSetDevice(1));
      CK(cudaMemset(dev_small[1], 0, 256));
      CK(cudaDeviceSynchronize());
      CK(cudaSetDevice(0));
      CK(cudaDeviceSynchronize());
      const int n = 10000;
      CK(cudaSetDevice(1));
      k_pingpong<<<1, 1>>>(dev_small[1], dev_small[0], 1, n, mode, 0);
      CK(cudaSetDevice(0));
      k_pingpong<<<1, 1>>>(dev_small[0], dev_small[1], 0, n, mode, dev_small[0] + 256);
      CK(cudaGetLastError());
      uint64_t rt = read_out(0);
      CK(cudaSetDevice(1));
      CK(cudaDeviceSynchronize());
      printf("latency  one-way flag GPU0<->GPU1, %s     %8.2f us\n",
             mode == 0 ? "release/acquire     " : "fence+relaxed       ", rt / 2000.0);
    }

  /* a store to each peer then one fence */
  if (G >= 2) {
    CK(cudaSetDevice(0));
    uint64_t **peers;
    CK(cudaMallocManaged((void **)&peers, sizeof(uint64_t *) * MAXG));
    for (int g = 1; g < G; g++)
      peers[g - 1] = dev_small[g];
    for (int sc = 0; sc < 2; sc++) {
      k_fence<<<1, 1>>>(peers, G - 1, 1000, sc, dev_small[0] + 256);
      CK(cudaGetLastError());
      printf("latency  %d remote stores + fence.%s.sys              %8.2f us\n", G - 1,
             sc ? "sc     " : "acq_rel", read_out(0) / 1000.0);
    }
    CK(cudaFree(peers));
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
}

/* GB/s of `bytes` moved by k_copy with `blocks` on GPU `on`. */
static double copy_rate(int on, void *dst, const void *src, size_t bytes, int blocks) {
  CK(cudaSetDevice(on));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  k_copy<<<blocks, COPY_LOOP_THREADS>>>((uint4 *)dst, (const uint4 *)src, bytes / 16);
  CK(cudaEventRecord(a));
  const int reps = 5;
  for (int i = 0; i < reps; i++)
    k_copy<<<blocks, COPY_LOOP_THREADS>>>((uint4 *)dst, (const uint4 *)src, bytes / 16);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaGetLastError());
  return bytes * (double)reps / (ms_of(a, b) * 1e6);
}

static void bandwidth(void) {
  size_t bytes = (size_t)256 << 20;
  int grid[] = {4, 8, 16, 32, 64, 132};
  printf("bandwidth  (256 MiB, GB/s of bytes copied; blocks of %d threads)\n", THREADS);
  printf("  blocks   local-copy  push-to-peer  pull-from-peer\n");
  for (unsigned i = 0; i < sizeof grid / sizeof grid[0]; i++) {
    double local = copy_rate(0, dev_big[0], dev_big[0] + bytes, bytes, grid[i]);
    double push = G >= 2 ? copy_rate(0, dev_big[1], dev_big[0], bytes, grid[i]) : 0;
    double pull = G >= 2 ? copy_rate(0, dev_big[0], dev_big[1], bytes, grid[i]) : 0;
    printf("  %6d   %10.1f  %12.1f  %14.1f\n", grid[i], local, push, pull);
  }
  if (G >= 2) {
    CK(cudaSetDevice(0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMemcpyPeerAsync(dev_big[1], 1, dev_big[0], 0, bytes, 0));
    CK(cudaEventRecord(a));
    for (int i = 0; i < 5; i++)
      CK(cudaMemcpyPeerAsync(dev_big[1], 1, dev_big[0], 0, bytes, 0));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    printf("  copy engine GPU0->GPU1 (cudaMemcpyPeerAsync)   %8.1f GB/s\n",
           bytes * 5.0 / (ms_of(a, b) * 1e6));
  }
  /* every GPU sums its part with every peer's (the one-shot read pattern):
   * bytes read from peers per GPU per second */
  if (G >= 2) {
    size_t n = ((size_t)64 << 20) / 16;
    int blocks_list[] = {16, 32, 64, 132};
    for (unsigned bi = 0; bi < 4; bi++) {
      int blocks = blocks_list[bi];
      const float4 **srcs[MAXG];
      cudaEvent_t a[MAXG], b[MAXG];
      for (int g = 0; g < G; g++) {
        CK(cudaSetDevice(g));
        CK(cudaMallocManaged((void **)&srcs[g], sizeof(float4 *) * MAXG));
        for (int s = 0; s < G; s++)
          srcs[g][s] = (const float4 *)dev_big[(g + s) % G];
        CK(cudaEventCreate(&a[g]));
        CK(cudaEventCreate(&b[g]));
        CK(cudaDeviceSynchronize());
      }
      for (int rep = 0; rep < 2; rep++) {
        for (int g = 0; g < G; g++) {
          CK(cudaSetDevice(g));
          CK(cudaEventRecord(a[g]));
          for (int i = 0; i < 5; i++)
            k_sum<<<blocks, THREADS>>>((float4 *)(dev_big[g] + BIG / 2), srcs[g], G, n);
          CK(cudaEventRecord(b[g]));
        }
        for (int g = 0; g < G; g++) {
          CK(cudaSetDevice(g));
          CK(cudaEventSynchronize(b[g]));
        }
      }
      double worst = 1e30;
      for (int g = 0; g < G; g++) {
        double r = n * 16.0 * (G - 1) * 5 / (ms_of(a[g], b[g]) * 1e6);
        if (r < worst)
          worst = r;
      }
      printf("  all %d GPUs sum 64 MiB from every peer, %3d blocks: %8.1f GB/s read from peers "
             "per GPU (slowest)\n",
             G, blocks, worst);
      for (int g = 0; g < G; g++)
        CK(cudaFree(srcs[g]));
    }
  }
}

int main(int argc, char **argv) {
  int have;
  CK(cudaGetDeviceCount(&have));
  G = argc > 1 ? atoi(argv[1]) : have;
  if (G > have)
    G = have;
  if (G > MAXG)
    G = MAXG;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("gpu_probe: %d x %s, %d SMs\n", G, prop.name, prop.multiProcessorCount);
  for (int g = 0; g < G; g++) {
    CK(cudaSetDevice(g));
    for (int p = 0; p < G; p++)
      if (p != g)
        CK(cudaDeviceEnablePeerAccess(p, 0));
    CK(cudaMalloc((void **)&dev_small[g], 4096));
    CK(cudaMemset(dev_small[g], 0, 4096));
    CK(cudaMalloc((void **)&dev_big[g], BIG));
    CK(cudaMemset(dev_big[g], 0, BIG));
  }
  latency();
  bandwidth();
  return 0;
}
