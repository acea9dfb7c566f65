// The floor of a small all-reduce between the GPUs of one process, and what
// each of symcomm's extra steps adds to it (session 14 probe; not part of
// symcomm). A minimal LL kernel: every rank stores its 8 bytes with the
// call's flag into each peer's memory in one 16-byte store, polls its own
// memory for the peers' lines, reduces them in rank order; a CUDA graph of
// 1000 calls per GPU, all GPUs at once. Then the same kernel with one step
// of symcomm's LL call added at a time (flags below), and what a cold
// instruction cache costs a kernel that runs a long stretch of code.
// Build: nvcc -O3 -arch=sm_90 -o ll_floor ll_floor.cu; run: ./ll_floor [gpus]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#include "check.h"

#define MAXR 8
#define CALLS 1000
enum {
  F_STOP = 1,   // block 0's leader reads a word of pinned host memory first; the push waits for it
  F_DESC = 2,   // rank count, rank and the peers' regions from a descriptor in device memory
  F_MARKS = 4,  // 64 marks read before the push (one block-wide vote) and again after it
  F_TAG = 8,    // a second line (the call's tag) pushed to every peer and waited for
  F_STACK = 16, // the reduction through arrays in local memory (a stack frame)
  F_FENCE = 32, // a system-scope fence before the counter is written back
  F_VOTE2 = 64, // a second block-wide vote after the waits (sc_dev_any at the end)
  F_CLOCK = 128, // every thread reads %globaltimer at entry and again before the push
};

struct Desc {
  int n, me;
  uint4 *region[MAXR];
};
template <int PAD> struct Args {
  int n, me;
  uint4 *region[MAXR]; // each rank's region as mapped here: [half][source][data, tag]
  const Desc *desc;
  const uint2 *in;
  uint2 *out;
  unsigned long long *calls;
  const unsigned *stop;
  const unsigned long long *marks;
  unsigned char pad[PAD];
};

__device__ __forceinline__ void st_line(uint4 *p, uint32_t lo, uint32_t hi, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(lo), "r"(flag), "r"(hi),
               "r"(flag)
               : "memory");
}
__device__ __forceinline__ uint4 ld_line(const uint4 *p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long ld_sys(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// Waits for the line from `src` to carry `flag`; gives up (failed = 2) after
// about a second so that a mistake here never hangs the host.
__device__ __forceinline__ uint2 wait_line(const uint4 *p, uint32_t flag, unsigned *failed) {
  for (long spins = 0;; spins++) {
    uint4 w = ld_line(p);
    if (w.y == flag && w.w == flag)
      return make_uint2(w.x, w.z);
    if (spins > (1L << 24)) {
      *failed = 2;
      return make_uint2(0, 0);
    }
  }
}

template <int F, int PAD>
__global__ void __launch_bounds__(512, 1) ll(const Args<PAD> a, unsigned *failed) {
  __shared__ uint2 got[MAXR];
  int t = threadIdx.x;
  unsigned long long clock0 = 0, clock1 = 0;
  if (F & F_CLOCK)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(clock0));
  unsigned long long seq;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(seq) : "l"(a.calls) : "memory");
  int n = a.n, me = a.me;
  uint4 *const *region = a.region;
  if (F & F_DESC) {
    n = a.desc->n;
    me = a.desc->me;
    region = a.desc->region;
  }
  uint2 v = *a.in;
  if (F & (F_STOP | F_MARKS)) {
    unsigned bad = 0;
    if ((F & F_STOP) && t == 0 && blockIdx.x == 0)
      asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(bad) : "l"(a.stop) : "memory");
    if ((F & F_MARKS) && t < 64)
      bad |= ld_sys(a.marks + t) != 0;
    if (__syncthreads_or(bad)) {
      if (t == 0)
        *failed = 1;
      return;
    }
  }
  uint32_t flag = (uint32_t)seq + 1;
  int h = (int)(seq & 1);
  if (F & F_CLOCK) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(clock1));
    if (clock1 < clock0) // never: keeps both reads
      *failed = 4;
  }
  if (t < n && t != me) {
    st_line(region[t] + (h * MAXR + me) * 2, v.x, v.y, flag);
    if (F & F_TAG)
      st_line(region[t] + (h * MAXR + me) * 2 + 1, 0x7a6, 0, flag);
  }
  unsigned late = 0;
  if ((F & F_MARKS) && t < 64)
    late = ld_sys(a.marks + t) != 0;
  if (t < n)
    got[t] = t == me ? v : wait_line(region[me] + (h * MAXR + t) * 2, flag, failed);
  if ((F & F_TAG) && t >= 480 && t - 480 < n && t - 480 != me) // the block's last threads, as symcomm
    wait_line(region[me] + (h * MAXR + (t - 480)) * 2 + 1, flag, failed);
  if (F & F_VOTE2) {
    if (__syncthreads_or(late)) {
      if (t == 0)
        *failed = 3;
      return;
    }
  } else {
    __syncthreads();
  }
  if (t == 0) {
    float sx = 0, sy = 0;
    if (F & F_STACK) {
      uint2 w[MAXR];
      const uint2 *src[MAXR];
#pragma unroll 1
      for (int r = 0; r < n; r++) {
        w[r] = got[r];
        src[r] = &w[r];
      }
#pragma unroll 1
      for (int r = 0; r < n; r++) {
        sx += __uint_as_float(src[r]->x);
        sy += __uint_as_float(src[r]->y);
      }
    } else {
      for (int r = 0; r < n; r++) {
        sx += __uint_as_float(got[r].x);
        sy += __uint_as_float(got[r].y);
      }
    }
    *a.out = make_uint2(__float_as_uint(sx), __float_as_uint(sy));
    if (F & F_FENCE)
      asm volatile("fence.acq_rel.sys;" ::: "memory");
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(a.calls), "l"(seq + 1) : "memory");
  }
}

__global__ void __launch_bounds__(512) empty_kernel(unsigned *sink) {
  if (threadIdx.x == 1000)
    *sink = 1;
}

// A long stretch of straight code run twice by one thread, each pass timed:
// the first pass fetches its instructions, the second finds them cached.
template <int K> __global__ void icache(unsigned long long *out, unsigned *slot) {
  if (threadIdx.x != 0)
    return;
  float x[8];
  for (int i = 0; i < 8; i++)
    x[i] = (float)i * 1e-3f;
  long long t[3];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  for (int pass = 0; pass < 2; pass++) {
    t[pass] = clock64();
#pragma unroll
    for (int i = 0; i < K; i++)
#pragma unroll
      for (int j = 0; j < 8; j++)
        x[j] = fmaf(x[j], 1.0001f, (float)(i + j) * 1e-7f);
    asm volatile("" ::: "memory");
  }
  t[2] = clock64();
  unsigned k = atomicAdd(slot, 1);
  float s = 0;
  for (int i = 0; i < 8; i++)
    s += x[i];
  out[3 * k] = (unsigned long long)(t[1] - t[0]) | (s == 12345.f ? 1ull << 63 : 0);
  out[3 * k + 1] = (unsigned long long)(t[2] - t[1]);
  out[3 * k + 2] = smid;
}

struct Rank {
  int dev;
  cudaStream_t s;
  uint4 *region;
  Desc *desc;
  uint2 *in, *out;
  unsigned long long *calls, *marks;
  unsigned *stop, *failed;
};

template <int F, int PAD> static void run(const char *name, std::vector<Rank> &R, int threads) {
  int n = (int)R.size();
  std::vector<cudaGraphExec_t> ge(n);
  for (int g = 0; g < n; g++) {
    CK(cudaSetDevice(R[g].dev));
    Args<PAD> a;
    memset(&a, 0, sizeof(a));
    a.n = n;
    a.me = g;
    for (int r = 0; r < n; r++)
      a.region[r] = R[r].region;
    a.desc = R[g].desc;
    a.in = R[g].in;
    a.out = R[g].out;
    a.calls = R[g].calls;
    a.stop = R[g].stop;
    a.marks = R[g].marks;
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(R[g].s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < CALLS; i++)
      ll<F, PAD><<<1, threads, 0, R[g].s>>>(a, R[g].failed);
    CK(cudaStreamEndCapture(R[g].s, &graph));
    CK(cudaGraphInstantiate(&ge[g], graph, 0));
    CK(cudaGraphDestroy(graph));
  }
  std::vector<cudaEvent_t> e0(n), e1(n);
  for (int g = 0; g < n; g++) {
    CK(cudaSetDevice(R[g].dev));
    CK(cudaEventCreate(&e0[g]));
    CK(cudaEventCreate(&e1[g]));
  }
  float best = 1e30f, best_min = 0;
  for (int rep = 0; rep < 4; rep++) {
    for (int g = 0; g < n; g++) {
      CK(cudaSetDevice(R[g].dev));
      CK(cudaMemsetAsync(R[g].out, 0, sizeof(uint2), R[g].s));
      CK(cudaEventRecord(e0[g], R[g].s));
      CK(cudaGraphLaunch(ge[g], R[g].s));
      CK(cudaEventRecord(e1[g], R[g].s));
    }
    float worst = 0, least = 1e30f;
    for (int g = 0; g < n; g++) {
      CK(cudaSetDevice(R[g].dev));
      CK(cudaEventSynchronize(e1[g]));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0[g], e1[g]));
      worst = std::max(worst, ms);
      least = std::min(least, ms);
    }
    if (rep > 0 && worst < best) { // the first run warms up
      best = worst;
      best_min = least;
    }
  }
  float want = (float)(n * (n + 1) / 2);
  for (int g = 0; g < n; g++) {
    CK(cudaSetDevice(R[g].dev));
    uint2 o;
    unsigned f;
    CK(cudaMemcpy(&o, R[g].out, sizeof(o), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&f, R[g].failed, sizeof(f), cudaMemcpyDeviceToHost));
    if (f != 0 || __builtin_memcmp(&o.x, &want, 4) != 0) {
      float x;
      memcpy(&x, &o.x, 4);
      printf("%-52s WRONG on GPU %d: failed %u, sum %g (want %g)\n", name, g, f, x, want);
      exit(1);
    }
    CK(cudaGraphExecDestroy(ge[g]));
    CK(cudaEventDestroy(e0[g]));
    CK(cudaEventDestroy(e1[g]));
  }
  printf("%-52s %6.2f us a call (slowest GPU; fastest %.2f)\n", name, best * 1000.f / CALLS,
         best_min * 1000.f / CALLS);
}

template <int K> static void icache_probe(const char *name) {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int launches = 200;
  unsigned long long *out;
  unsigned *slot;
  CK(cudaMalloc(&out, sizeof(unsigned long long) * 3 * launches));
  CK(cudaMalloc(&slot, sizeof(unsigned)));
  CK(cudaMemset(slot, 0, sizeof(unsigned)));
  cudaGraph_t graph;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < launches; i++)
    icache<K><<<1, 32, 0, s>>>(out, slot);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&ge, graph, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  std::vector<unsigned long long> h(3 * launches);
  CK(cudaMemcpy(h.data(), out, sizeof(unsigned long long) * 3 * launches, cudaMemcpyDeviceToHost));
  std::vector<long long> cold, warm;
  std::vector<unsigned> sms;
  for (int i = 0; i < launches; i++) {
    cold.push_back((long long)(h[3 * i] & ~(1ull << 63)));
    warm.push_back((long long)h[3 * i + 1]);
    sms.push_back((unsigned)h[3 * i + 2]);
  }
  std::sort(cold.begin(), cold.end());
  std::sort(warm.begin(), warm.end());
  int same = 0;
  for (int i = 1; i < launches; i++)
    same += sms[i] == sms[i - 1];
  std::sort(sms.begin(), sms.end());
  int distinct = (int)(std::unique(sms.begin(), sms.end()) - sms.begin());
  int dev_clock_khz = 0;
  CK(cudaDeviceGetAttribute(&dev_clock_khz, cudaDevAttrClockRate, 0));
  printf("%-52s first pass %lld cycles, second %lld (medians; %.2f us more cold at %d MHz); "
         "%d SMs, %d of %d launches on the SM of the one before\n",
         name, cold[launches / 2], warm[launches / 2],
         (double)(cold[launches / 2] - warm[launches / 2]) / (dev_clock_khz / 1000.0),
         dev_clock_khz / 1000, distinct, same, launches - 1);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(graph));
  CK(cudaFree(out));
  CK(cudaFree(slot));
  CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv) {
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  int n = argc > 1 ? atoi(argv[1]) : count;
  if (n < 2 || n > count || n > MAXR) {
    fprintf(stderr, "ll_floor: needs 2 to %d GPUs (%d here)\n", MAXR, count);
    return 1;
  }
  std::vector<Rank> R(n);
  for (int g = 0; g < n; g++) {
    Rank &r = R[g];
    r.dev = g;
    CK(cudaSetDevice(g));
    for (int p = 0; p < n; p++)
      if (p != g)
        CK(cudaDeviceEnablePeerAccess(p, 0));
    CK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
    CK(cudaMalloc(&r.region, sizeof(uint4) * 2 * MAXR * 2));
    CK(cudaMemset(r.region, 0, sizeof(uint4) * 2 * MAXR * 2));
    CK(cudaMalloc(&r.desc, sizeof(Desc)));
    CK(cudaMalloc(&r.in, sizeof(uint2)));
    CK(cudaMalloc(&r.out, sizeof(uint2)));
    CK(cudaMalloc(&r.calls, sizeof(unsigned long long)));
    CK(cudaMemset(r.calls, 0, sizeof(unsigned long long)));
    CK(cudaMalloc(&r.marks, sizeof(unsigned long long) * 64));
    CK(cudaMemset(r.marks, 0, sizeof(unsigned long long) * 64));
    CK(cudaMalloc(&r.failed, sizeof(unsigned)));
    CK(cudaMemset(r.failed, 0, sizeof(unsigned)));
    CK(cudaHostAlloc(&r.stop, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    memset(r.stop, 0, 64);
    float in[2] = {(float)(g + 1), (float)(2 * (g + 1))};
    CK(cudaMemcpy(r.in, in, sizeof(in), cudaMemcpyHostToDevice));
  }
  for (int g = 0; g < n; g++) {
    Desc d;
    d.n = n;
    d.me = g;
    for (int r = 0; r < n; r++)
      d.region[r] = R[r].region;
    CK(cudaSetDevice(g));
    CK(cudaMemcpy(R[g].desc, &d, sizeof(d), cudaMemcpyHostToDevice));
  }
  printf("%d GPUs, graphs of %d calls each, all GPUs at once\n", n, CALLS);
  {
    CK(cudaSetDevice(0));
    cudaStream_t s = R[0].s;
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    cudaGraph_t graph;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < CALLS; i++)
      empty_kernel<<<1, 512, 0, s>>>(sink);
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&ge, graph, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float best = 1e30f;
    for (int rep = 0; rep < 4; rep++) {
      CK(cudaEventRecord(a, s));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      best = std::min(best, ms);
    }
    printf("%-52s %6.2f us a kernel\n", "empty kernel, 1 block of 512, GPU 0 alone", best * 1000.f / CALLS);
  }
  run<0, 16>("minimal LL, 1 block of 32", R, 32);
  run<0, 16>("minimal LL, 1 block of 512", R, 512);
  run<0, 1088>("+ 1.1 KiB of parameter", R, 512);
  run<F_STOP, 16>("+ host stop word before the push", R, 512);
  run<F_DESC, 16>("+ descriptor in device memory", R, 512);
  run<F_MARKS, 16>("+ marks before and after the push", R, 512);
  run<F_TAG, 16>("+ tag line", R, 512);
  run<F_STACK, 16>("+ reduction through the stack", R, 512);
  run<F_FENCE, 16>("+ system fence before the counter", R, 512);
  run<F_VOTE2, 16>("+ second vote", R, 512);
  run<F_CLOCK, 16>("+ %globaltimer read twice by every thread", R, 512);
  run<F_DESC | F_MARKS | F_TAG | F_STACK | F_VOTE2, 1088>("all but the stop word", R, 512);
  run<F_STOP | F_DESC | F_MARKS | F_TAG | F_STACK | F_VOTE2, 1088>("all", R, 512);
  icache_probe<64>("512 FMAs (8 KiB of code), 1 thread");
  icache_probe<512>("4096 FMAs (64 KiB of code), 1 thread");
  return 0;
}
