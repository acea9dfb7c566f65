// Latency of memory-model primitives on one GPU and across NVLink (session 7 microbenchmark; not part of symcomm).
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
__device__ __forceinline__ uint64_t now() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ uint64_t ld_rs(const uint64_t *p) { uint64_t v; asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint64_t ld_as(const uint64_t *p) { uint64_t v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint64_t ld_rg(const uint64_t *p) { uint64_t v; asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint64_t ld_vo(const uint64_t *p) { uint64_t v; asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_rs(uint64_t *p, uint64_t v) { asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void st_rls(uint64_t *p, uint64_t v) { asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void st_vo(uint64_t *p, uint64_t v) { asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void f_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
__device__ __forceinline__ void f_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ void f_sc_sys() { asm volatile("fence.sc.sys;" ::: "memory"); }

#define K 200
// chains: buf[i] holds the address of buf[i+8 mod N]
__global__ void single(uint64_t *loc, uint64_t *peer, uint64_t *host, double *out) {
  if (threadIdx.x != 0) return;
  uint64_t t0, s = 0; const uint64_t *p; int o = 0;
#define CHAIN(LD, BASE) p = (const uint64_t *)(BASE); t0 = now(); for (int i = 0; i < K; i++) p = (const uint64_t *)LD(p); s += (uint64_t)p; out[o++] = (now() - t0) / (double)K;
  CHAIN(ld_rs, loc) CHAIN(ld_as, loc) CHAIN(ld_rg, loc) CHAIN(ld_vo, loc)
  CHAIN(ld_rs, peer) CHAIN(ld_as, peer) CHAIN(ld_vo, peer) CHAIN(ld_rs, host)
  // 4 independent loads then use (parallel)
  t0 = now(); for (int i = 0; i < K; i++) { uint64_t a = ld_rs(loc + 64), b = ld_rs(loc + 128), c = ld_rs(loc + 192), d = ld_rs(loc + 256); s += a + b + c + d; } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { uint64_t a = ld_as(loc + 64), b = ld_as(loc + 128), c = ld_as(loc + 192), d = ld_as(loc + 256); s += a + b + c + d; } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) f_sys(); out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) f_gpu(); out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(loc + 512, i); f_sys(); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(peer + 512, i); f_sys(); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rls(peer + 512, i); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rls(loc + 512, i); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(peer + 512, i); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(host + 512, i); f_sys(); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(peer + 512, i); f_sc_sys(); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) { st_rs(peer + 512, i); __threadfence(); } out[o++] = (now() - t0) / (double)K;
  t0 = now(); for (int i = 0; i < K; i++) now(); out[o++] = (now() - t0) / (double)K;
  out[o++] = (double)(s & 1);
}
const char *names[] = {"chain ld.relaxed.sys local", "chain ld.acquire.sys local", "chain ld.relaxed.gpu local", "chain ld.volatile local",
  "chain ld.relaxed.sys peer", "chain ld.acquire.sys peer", "chain ld.volatile peer", "chain ld.relaxed.sys host",
  "4 parallel ld.relaxed.sys local", "4 ld.acquire.sys local", "fence.acq_rel.sys alone", "fence.acq_rel.gpu alone",
  "st local + fence.sys", "st peer + fence.sys", "st.release.sys peer", "st.release.sys local", "st.relaxed.sys peer (issue)",
  "st host + fence.sys", "st peer + fence.sc.sys", "st peer + threadfence(gpu)", "globaltimer read", 0};

// ping-pong: GPU a writes flag on b, waits for b's reply on own memory
template <int MODE>
__global__ void pingpong(uint64_t *mine, uint64_t *theirs, int first, double *out) {
  if (threadIdx.x != 0) return;
  uint64_t t0 = now();
  for (uint64_t i = 1; i <= 1000; i++) {
    if (first) { if (MODE == 0) st_rs(theirs, i); else if (MODE == 1) st_rls(theirs, i); else st_vo(theirs, i); }
    if (MODE == 0) while (ld_rs(mine) < i) ; else if (MODE == 1) while (ld_as(mine) < i) ; else while (ld_vo(mine) < i) ;
    if (!first) { if (MODE == 0) st_rs(theirs, i); else if (MODE == 1) st_rls(theirs, i); else st_vo(theirs, i); }
  }
  out[0] = (now() - t0) / 1000.0;
}
__global__ void empty_k() {}
__global__ void __launch_bounds__(512) fat_k(uint64_t *p, int n) {
  __shared__ uint64_t sh[1024];
  uint64_t acc[16];
  for (int i = 0; i < 16; i++) acc[i] = p[(threadIdx.x + i * 64) % 1024];
  sh[threadIdx.x] = acc[threadIdx.x % 16];
  __syncthreads();
  if (n == 12345) for (int i = 0; i < 16; i++) p[i] = acc[i] + sh[i];
}
int main() {
  int n; CK(cudaGetDeviceCount(&n)); if (n < 2) { printf("need 2 GPUs\n"); return 1; }
  uint64_t *b0, *b1, *h; double *out;
  CK(cudaSetDevice(1)); CK(cudaMalloc(&b1, 1 << 20)); CK(cudaDeviceEnablePeerAccess(0, 0));
  CK(cudaSetDevice(0)); CK(cudaMalloc(&b0, 1 << 20)); CK(cudaDeviceEnablePeerAccess(1, 0));
  CK(cudaHostAlloc(&h, 1 << 20, cudaHostAllocMapped | cudaHostAllocPortable)); CK(cudaMallocManaged(&out, 4096));
  static uint64_t tmp[1 << 17];
  for (int which = 0; which < 3; which++) {
    uint64_t *base = which == 0 ? b0 : which == 1 ? b1 : h;
    for (int i = 0; i < 1 << 17; i++) tmp[i] = (uint64_t)(base + (i + 1024) % (1 << 17));
    if (which == 2) memcpy(h, tmp, sizeof tmp); else CK(cudaMemcpy(base, tmp, sizeof tmp, cudaMemcpyHostToDevice));
  }
  for (int rep = 0; rep < 2; rep++) {
    single<<<1, 32>>>(b0, b1, h, out); CK(cudaDeviceSynchronize());
    if (rep == 1) for (int i = 0; names[i]; i++) printf("%-34s %8.0f ns\n", names[i], out[i]);
  }
  const char *pn[] = {"relaxed.sys st / ld", "release st / acquire ld", "volatile st / ld"};
  for (int m = 0; m < 3; m++) {
    CK(cudaMemset(b0, 0, 4096)); CK(cudaSetDevice(1)); CK(cudaMemset(b1, 0, 4096)); CK(cudaDeviceSynchronize()); CK(cudaSetDevice(0)); CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(1));
    if (m == 0) pingpong<0><<<1, 32>>>(b1, b0, 0, out + 100); else if (m == 1) pingpong<1><<<1, 32>>>(b1, b0, 0, out + 100); else pingpong<2><<<1, 32>>>(b1, b0, 0, out + 100);
    CK(cudaSetDevice(0));
    if (m == 0) pingpong<0><<<1, 32>>>(b0, b1, 1, out); else if (m == 1) pingpong<1><<<1, 32>>>(b0, b1, 1, out); else pingpong<2><<<1, 32>>>(b0, b1, 1, out);
    CK(cudaDeviceSynchronize()); CK(cudaSetDevice(1)); CK(cudaDeviceSynchronize()); CK(cudaSetDevice(0));
    printf("pingpong round trip %-26s %8.0f ns\n", pn[m], out[0]);
  }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int kind = 0; kind < 4; kind++) {
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 1000; i++) { if (kind == 0) empty_k<<<1, 32, 0, s>>>(); else if (kind == 1) fat_k<<<4, 512, 0, s>>>(b0, i); else if (kind == 2) fat_k<<<128, 512, 0, s>>>(b0, i); else empty_k<<<128, 512, 0, s>>>(); }
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0, s); CK(cudaGraphLaunch(ge, s)); cudaEventRecord(e1, s); CK(cudaStreamSynchronize(s));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    const char *kn[] = {"empty 1x32", "fat 4x512", "fat 128x512", "empty 128x512"};
    printf("graph of 1000 kernels %-14s %8.2f us per kernel\n", kn[kind], ms);
  }
  return 0;
}
