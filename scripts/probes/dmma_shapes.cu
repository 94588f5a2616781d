// f64 tensor-core throughput per mma.sync shape on the GPU machine (sm_90):
//   nvcc -O3 -arch=sm_90 dmma_shapes.cu -o dmma && ./dmma
// Each warp runs ILP independent accumulators for ITERS steps; FLOP/s = 2 m n k per mma.
#include <cstdio>
#include <cuda_runtime.h>
#define ITERS 4096
#define ILP 8

template <int S> __device__ __forceinline__ void mma(double* d, const double* a, const double* b);
template <> __device__ __forceinline__ void mma<0>(double* d, const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(d[0]), "+d"(d[1]) : "d"(a[0]), "d"(b[0]));
}
template <> __device__ __forceinline__ void mma<1>(double* d, const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
template <> __device__ __forceinline__ void mma<2>(double* d, const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
template <> __device__ __forceinline__ void mma<3>(double* d, const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                 "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

template <int S> __global__ void run(double* out, double seed) {
  double a[8], b[4], d[ILP][4];
  for (int i = 0; i < 8; ++i) a[i] = seed * (threadIdx.x + i);
  for (int i = 0; i < 4; ++i) b[i] = seed * (threadIdx.x - i);
  for (int j = 0; j < ILP; ++j) for (int i = 0; i < 4; ++i) d[j][i] = 0;
  for (int it = 0; it < ITERS; ++it)
#pragma unroll
    for (int j = 0; j < ILP; ++j) mma<S>(d[j], a, b);
  double s = 0;
  for (int j = 0; j < ILP; ++j) for (int i = 0; i < 4; ++i) s += d[j][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int S> void time(const char* name, int flops, int warps, int per_sm = 8) {
  const int blocks = 132 * per_sm;
  double* out;
  cudaMalloc(&out, blocks * warps * 32 * sizeof(double));
  run<S><<<blocks, warps * 32>>>(out, 1e-3);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    run<S><<<blocks, warps * 32>>>(out, 1e-3);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (ms < best) best = ms;
  }
  double total = (double)blocks * warps * ITERS * ILP * flops;
  printf("%-10s warps/block %2d, blocks/SM %d: %.1f TFLOP/s (%s)\n", name, warps, per_sm, total / best / 1e9, cudaGetErrorString(cudaGetLastError()));
  cudaFree(out);
}

// The fragment layout clforge's ke_mma assumes for m16n8k4 f64: lane (g = lane / 4, t = lane % 4)
// holds A[g][t], A[g + 8][t]; B[t][g]; D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1].
__global__ void layout(const double* A, const double* B, double* D) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  double d[4] = {0, 0, 0, 0};
  const double a[2] = {A[g * 4 + t], A[(g + 8) * 4 + t]}, b[1] = {B[t * 8 + g]};
  mma<1>(d, a, b);
  D[g * 8 + 2 * t] = d[0]; D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2]; D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

int check_layout() {
  double A[64], B[32], D[128], R[128];
  for (int i = 0; i < 64; ++i) A[i] = 0.25 * i - 3;
  for (int i = 0; i < 32; ++i) B[i] = 1.5 - 0.125 * i * i;
  for (int r = 0; r < 16; ++r) for (int c = 0; c < 8; ++c) {
    double s = 0; for (int k = 0; k < 4; ++k) s += A[r * 4 + k] * B[k * 8 + c]; R[r * 8 + c] = s;
  }
  double *dA, *dB, *dD;
  cudaMalloc(&dA, sizeof A); cudaMalloc(&dB, sizeof B); cudaMalloc(&dD, sizeof D);
  cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice); cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
  layout<<<1, 32>>>(dA, dB, dD);
  cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < 128; ++i) bad += D[i] != R[i];
  printf("m16n8k4 f64 layout as ke_mma assumes: %s (%d of 128 entries differ)\n", bad ? "NO" : "yes", bad);
  return bad;
}

int main() {
  check_layout();
  for (int w : {4, 8}) {
    time<0>("m8n8k4", 2 * 8 * 8 * 4, w);
    time<1>("m16n8k4", 2 * 16 * 8 * 4, w);
    time<2>("m16n8k8", 2 * 16 * 8 * 8, w);
    time<3>("m16n8k16", 2 * 16 * 8 * 16, w);
  }
  // ke_mma's occupancy: one group of 8 warps per multiprocessor (its registers allow no more)
  time<1>("m16n8k4", 2 * 16 * 8 * 4, 8, 1);
  time<1>("m16n8k4", 2 * 16 * 8 * 4, 4, 1);
  time<1>("m16n8k4", 2 * 16 * 8 * 4, 16, 1);
  time<0>("m8n8k4", 2 * 8 * 8 * 4, 8, 1);
  return 0;
}
