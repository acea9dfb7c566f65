// What a kernel launch costs inside a CUDA graph as its parameter grows, and
// what a kernel's first steps add (session 10 probe; not part of symcomm).
// Build: nvcc -O3 -arch=sm_90 -o launch_cost launch_cost.cu; run: ./launch_cost
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

template <int N> struct __align__(16) P { unsigned char b[N]; };

template <int N> __global__ void __launch_bounds__(512) k_param(const P<N> p, unsigned *sink) {
  if (threadIdx.x == 0 && p.b[N - 1] == 77) *sink = 1;
}
// The first steps of symcomm's kernels: a shared record cleared, a sync, one
// word of pinned host memory read by block 0 (the stop word).
template <int N> __global__ void __launch_bounds__(512) k_host(const P<N> p, const unsigned *host, unsigned *sink) {
  __shared__ unsigned v;
  if (threadIdx.x == 0) v = 0;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    unsigned w;
    asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(w) : "l"(host) : "memory");
    if (w == 12345 || p.b[N - 1] == 77) *sink = w;
  }
}
// A store to peer memory (NVLink) at the end: the kernel's end waits for it.
__global__ void __launch_bounds__(512) k_peer_store(uint64_t *peer, uint64_t v) {
  if (threadIdx.x == 0) asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(peer), "l"(v) : "memory");
}

template <typename F> static int timed(const char *name, cudaStream_t s, F launch) {
  const int iters = 1000;
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < iters; i++) launch();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (ms < best) best = ms;
  }
  printf("%-44s %7.2f us per kernel\n", name, best * 1000.0f / iters);
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
  return 0;
}

int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned *sink, *host; CK(cudaMalloc(&sink, 64)); CK(cudaHostAlloc(&host, 64, cudaHostAllocMapped));
  host[0] = 0;
  P<16> p16 = {}; P<256> p256 = {}; P<1024> p1k = {}; P<4096> p4k = {};
  timed("empty, 16 B param, 1 block of 512", s, [&] { k_param<16><<<1, 512, 0, s>>>(p16, sink); });
  timed("empty, 256 B param, 1 block", s, [&] { k_param<256><<<1, 512, 0, s>>>(p256, sink); });
  timed("empty, 1 KiB param, 1 block", s, [&] { k_param<1024><<<1, 512, 0, s>>>(p1k, sink); });
  timed("empty, 4 KiB param, 1 block", s, [&] { k_param<4096><<<1, 512, 0, s>>>(p4k, sink); });
  timed("empty, 4 KiB param, 32 blocks", s, [&] { k_param<4096><<<32, 512, 0, s>>>(p4k, sink); });
  timed("host word, 256 B param, 2 blocks", s, [&] { k_host<256><<<2, 512, 0, s>>>(p256, host, sink); });
  timed("host word, 4 KiB param, 2 blocks", s, [&] { k_host<4096><<<2, 512, 0, s>>>(p4k, host, sink); });
  int n = 0; CK(cudaGetDeviceCount(&n));
  if (n > 1) {
    int ok = 0; CK(cudaDeviceCanAccessPeer(&ok, 0, 1));
    if (ok) {
      CK(cudaDeviceEnablePeerAccess(1, 0));
      uint64_t *peer; CK(cudaSetDevice(1)); CK(cudaMalloc(&peer, 64)); CK(cudaSetDevice(0));
      timed("one store to the peer GPU, 1 block", s, [&] { k_peer_store<<<1, 512, 0, s>>>(peer, 1); });
    }
  }
  return 0;
}
