/* What the links carry when every GPU of the host moves data to or from
 * every peer at once: the traffic of the large all-gather, reduce-scatter,
 * all-to-all and all-reduce. Pulling (each GPU loads its peers' parts) and
 * pushing (each GPU stores its parts into its peers) move the same bytes;
 * this says which way the links carry more (session 11 probe).
 *
 *   nvcc -O3 -arch=sm_90 -o build/bin/all_pairs bench/gpu_probe/all_pairs.cu
 *   build/bin/all_pairs [gpus]
 *
 * GB/s are bytes per second that crossed NVLink into (pull) or out of (push)
 * the slowest GPU, every GPU running the same pattern at the same time. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define THREADS 512
#define MAXG 8
#define PART ((size_t)64 << 20) /* bytes per (GPU, peer) pair */

/* Up to MAXG-1 (dst, src) pairs of n 16-byte words each, every pair's load
 * issued before any store (the way a block of symcomm's would move a slice
 * to or from all its peers). */
typedef struct {
  uint4 *dst[MAXG];
  const uint4 *src[MAXG];
  int pairs;
} moves_t;

__global__ void __launch_bounds__(THREADS) k_moves(moves_t m, size_t n) {
  size_t stride = (size_t)gridDim.x * THREADS;
  for (size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    uint4 v[MAXG - 1];
#pragma unroll
    for (int p = 0; p < MAXG - 1; p++)
      if (p < m.pairs)
        v[p] = m.src[p][i];
#pragma unroll
    for (int p = 0; p < MAXG - 1; p++)
      if (p < m.pairs)
        m.dst[p][i] = v[p];
  }
}

/* One source word stored into every destination (all-gather by pushing). */
__global__ void __launch_bounds__(THREADS) k_fanout(moves_t m, size_t n) {
  size_t stride = (size_t)gridDim.x * THREADS;
  for (size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    uint4 v = m.src[0][i];
#pragma unroll
    for (int p = 0; p < MAXG - 1; p++)
      if (p < m.pairs)
        m.dst[p][i] = v;
  }
}

/* Own part plus every peer's, summed as float32 into own memory: the pull
 * reduce-scatter (loads from peers). */
__global__ void __launch_bounds__(THREADS) k_sum_pull(moves_t m, float4 *out, const float4 *own,
                                                      size_t n) {
  size_t stride = (size_t)gridDim.x * THREADS;
  for (size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    float4 v[MAXG - 1];
#pragma unroll
    for (int p = 0; p < MAXG - 1; p++)
      if (p < m.pairs)
        v[p] = ((const float4 *)m.src[p])[i];
    float4 a = own[i];
#pragma unroll
    for (int p = 0; p < MAXG - 1; p++)
      if (p < m.pairs) {
        a.x += v[p].x; a.y += v[p].y; a.z += v[p].z; a.w += v[p].w;
      }
    out[i] = a;
  }
}

static int G;
static char *buf[MAXG]; /* per GPU: G regions of PART bytes (what peers push or pull) + out */

static float ms_of(cudaEvent_t a, cudaEvent_t b) {
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

enum { PULL, PUSH, FANOUT, SUMPULL, ENGINE, MODES };
static const char *mode_name[MODES] = {"pull: load parts from every peer",
                                       "push: store parts into every peer",
                                       "push one part to every peer (fan-out)",
                                       "pull and sum float32 (reduce-scatter)",
                                       "copy engines: a cudaMemcpyPeerAsync to every peer, a stream each"};
static cudaStream_t side[MAXG][MAXG];

static char *region(int g, int r) { return buf[g] + (size_t)r * PART; }

static void launch(int mode, int g, int blocks) {
  moves_t m;
  m.pairs = 0;
  size_t n = PART / 16;
  for (int k = 1; k < G; k++) {
    int p = (g + k) % G; /* peers in a different order on every GPU */
    if (mode == PULL || mode == SUMPULL) {
      m.dst[m.pairs] = (uint4 *)region(g, p);
      m.src[m.pairs] = (const uint4 *)region(p, g);
    } else {
      m.dst[m.pairs] = (uint4 *)region(p, g);
      m.src[m.pairs] = (const uint4 *)(mode == FANOUT ? region(g, g) : region(g, p));
    }
    m.pairs++;
  }
  if (mode == ENGINE) {
    for (int k = 1; k < G; k++) {
      int p = (g + k) % G;
      CK(cudaMemcpyPeerAsync(region(p, g), p, region(g, p), g, PART, side[g][k]));
    }
    return;
  }
  if (mode == FANOUT)
    k_fanout<<<blocks, THREADS>>>(m, n);
  else if (mode == SUMPULL)
    k_sum_pull<<<blocks, THREADS>>>(m, (float4 *)region(g, G), (const float4 *)region(g, g), n);
  else
    k_moves<<<blocks, THREADS>>>(m, n);
}

/* The copy engines' streams start after and end before the default
 * stream's events. */
static cudaEvent_t mark[MAXG][MAXG];
static void fork(int mode, int g) {
  if (mode != ENGINE)
    return;
  CK(cudaEventRecord(mark[g][0], 0));
  for (int k = 1; k < G; k++)
    CK(cudaStreamWaitEvent(side[g][k], mark[g][0], 0));
}
static void join(int mode, int g) {
  if (mode != ENGINE)
    return;
  for (int k = 1; k < G; k++) {
    CK(cudaEventRecord(mark[g][k], side[g][k]));
    CK(cudaStreamWaitEvent(0, mark[g][k], 0));
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
  if (G < 2) {
    printf("all_pairs: needs 2 GPUs or more\n");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("all_pairs: %d x %s, %d SMs; %zu MiB per pair, 5 launches timed after 1\n", G, prop.name,
         prop.multiProcessorCount, PART >> 20);
  for (int g = 0; g < G; g++) {
    CK(cudaSetDevice(g));
    for (int p = 0; p < G; p++)
      if (p != g)
        CK(cudaDeviceEnablePeerAccess(p, 0));
    CK(cudaMalloc((void **)&buf[g], PART * (G + 1)));
    CK(cudaMemset(buf[g], 0, PART * (G + 1)));
  }
  int grid[] = {16, 32, 48, 64, 96, 132};
  cudaEvent_t a[MAXG], b[MAXG];
  for (int g = 0; g < G; g++) {
    CK(cudaSetDevice(g));
    CK(cudaEventCreate(&a[g]));
    CK(cudaEventCreate(&b[g]));
    for (int k = 0; k < G; k++) {
      CK(cudaStreamCreateWithFlags(&side[g][k], cudaStreamNonBlocking));
      CK(cudaEventCreateWithFlags(&mark[g][k], cudaEventDisableTiming));
    }
  }
  for (int mode = 0; mode < MODES; mode++) {
    printf("%s (GB/s per GPU over NVLink, slowest GPU)\n", mode_name[mode]);
    for (unsigned gi = 0; gi < (mode == ENGINE ? 1 : sizeof grid / sizeof grid[0]); gi++) {
      for (int g = 0; g < G; g++) {
        CK(cudaSetDevice(g));
        CK(cudaDeviceSynchronize());
      }
      for (int g = 0; g < G; g++) {
        CK(cudaSetDevice(g));
        launch(mode, g, grid[gi]);
        join(mode, g);
        CK(cudaEventRecord(a[g]));
        fork(mode, g);
        for (int i = 0; i < 5; i++)
          launch(mode, g, grid[gi]);
        join(mode, g);
        CK(cudaEventRecord(b[g]));
        CK(cudaGetLastError());
      }
      double worst = 1e30;
      for (int g = 0; g < G; g++) {
        CK(cudaSetDevice(g));
        CK(cudaEventSynchronize(b[g]));
        double r = PART * (double)(G - 1) * 5 / (ms_of(a[g], b[g]) * 1e6);
        if (r < worst)
          worst = r;
      }
      if (mode == ENGINE)
        printf("  %8.1f\n", worst);
      else
        printf("  %3d blocks  %8.1f\n", grid[gi], worst);
    }
  }
  return 0;
}
