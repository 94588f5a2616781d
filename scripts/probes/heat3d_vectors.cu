// The 3-D 7-point heat step at 512³ f32 on the GPU machine, written by hand in several shapes,
// to see which access pattern can pass 85 % of copy before the DSL's vector variant is changed:
//   nvcc -O3 -arch=sm_90 heat3d_vectors.cu -o heat3d && ./heat3d
// Every variant is checked against the scalar kernel (bit for bit: the same expression order).
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N 512
#define NXY (N * N)

__device__ __forceinline__ float upd(float c, float xm, float xp, float ym, float yp, float zm, float zp, float r) {
  const float lap = xp + xm + yp + ym + zp + zm - 6.0f * c;
  return c + r * lap;
}

__device__ __forceinline__ bool inside(int x, int y, int z) {
  return x >= 1 && x < N - 1 && y >= 1 && y < N - 1 && z >= 1 && z < N - 1;
}

// One point per thread, PTS planes walked along z (the DSL's plain variant).
template <int PTS>
__global__ void plain(float* __restrict__ out, const float* __restrict__ u, float r) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z0 = blockIdx.z * PTS;
#pragma unroll
  for (int z = z0; z < z0 + PTS; ++z) {
    if (!inside(x, y, z)) continue;
    const int c = x + N * y + NXY * z;
    out[c] = upd(u[c], u[c - 1], u[c + 1], u[c - N], u[c + N], u[c - NXY], u[c + NXY], r);
  }
}

// V consecutive points per thread along x from aligned vector loads; the x neighbours from the
// vectors beside (their last / first lane); PTS planes along z.
template <int PTS>
__global__ void vec4(float* __restrict__ out, const float* __restrict__ u, float r) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z0 = blockIdx.z * PTS;
  const float4* u4 = reinterpret_cast<const float4*>(u);
  float4* o4 = reinterpret_cast<float4*>(out);
  if (x0 >= N || y < 1 || y >= N - 1) return;
#pragma unroll
  for (int z = z0; z < z0 + PTS; ++z) {
    if (z < 1 || z >= N - 1) continue;
    const int c = (x0 + N * y + NXY * z) / 4;
    const float4 m = u4[c], w = x0 > 0 ? u4[c - 1] : m, e = x0 + 4 < N ? u4[c + 1] : m;
    const float4 ym = u4[c - N / 4], yp = u4[c + N / 4], zm = u4[c - NXY / 4], zp = u4[c + NXY / 4];
    float4 o = m;
    if (x0 >= 1) o.x = upd(m.x, w.w, m.y, ym.x, yp.x, zm.x, zp.x, r);
    o.y = upd(m.y, m.x, m.z, ym.y, yp.y, zm.y, zp.y, r);
    o.z = upd(m.z, m.y, m.w, ym.z, yp.z, zm.z, zp.z, r);
    if (x0 + 3 < N - 1) o.w = upd(m.w, m.z, e.x, ym.w, yp.w, zm.w, zp.w, r);
    o4[c] = o;
  }
}

// 8 consecutive points per thread as two float4 (the DSL's vector variant's layout).
template <int PTS>
__global__ void vec8(float* __restrict__ out, const float* __restrict__ u, float r) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z0 = blockIdx.z * PTS;
  const float4* u4 = reinterpret_cast<const float4*>(u);
  float4* o4 = reinterpret_cast<float4*>(out);
  if (x0 >= N || y < 1 || y >= N - 1) return;
#pragma unroll
  for (int z = z0; z < z0 + PTS; ++z) {
    if (z < 1 || z >= N - 1) continue;
    const int c = (x0 + N * y + NXY * z) / 4;
    const float4 m0 = u4[c], m1 = u4[c + 1], w = x0 > 0 ? u4[c - 1] : m0, e = x0 + 8 < N ? u4[c + 2] : m1;
    const float4 ym0 = u4[c - N / 4], yp0 = u4[c + N / 4], zm0 = u4[c - NXY / 4], zp0 = u4[c + NXY / 4];
    const float4 ym1 = u4[c + 1 - N / 4], yp1 = u4[c + 1 + N / 4], zm1 = u4[c + 1 - NXY / 4], zp1 = u4[c + 1 + NXY / 4];
    float4 o0 = m0, o1 = m1;
    if (x0 >= 1) o0.x = upd(m0.x, w.w, m0.y, ym0.x, yp0.x, zm0.x, zp0.x, r);
    o0.y = upd(m0.y, m0.x, m0.z, ym0.y, yp0.y, zm0.y, zp0.y, r);
    o0.z = upd(m0.z, m0.y, m0.w, ym0.z, yp0.z, zm0.z, zp0.z, r);
    o0.w = upd(m0.w, m0.z, m1.x, ym0.w, yp0.w, zm0.w, zp0.w, r);
    o1.x = upd(m1.x, m0.w, m1.y, ym1.x, yp1.x, zm1.x, zp1.x, r);
    o1.y = upd(m1.y, m1.x, m1.z, ym1.y, yp1.y, zm1.y, zp1.y, r);
    o1.z = upd(m1.z, m1.y, m1.w, ym1.z, yp1.z, zm1.z, zp1.z, r);
    if (x0 + 7 < N - 1) o1.w = upd(m1.w, m1.z, e.x, ym1.w, yp1.w, zm1.w, zp1.w, r);
    o4[c] = o0;
    o4[c + 1] = o1;
  }
}

// Two points per thread as one float2.
template <int PTS>
__global__ void vec2(float* __restrict__ out, const float* __restrict__ u, float r) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 2, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z0 = blockIdx.z * PTS;
  const float2* u2 = reinterpret_cast<const float2*>(u);
  float2* o2 = reinterpret_cast<float2*>(out);
  if (x0 >= N || y < 1 || y >= N - 1) return;
#pragma unroll
  for (int z = z0; z < z0 + PTS; ++z) {
    if (z < 1 || z >= N - 1) continue;
    const int c = (x0 + N * y + NXY * z) / 2;
    const float2 m = u2[c], w = x0 > 0 ? u2[c - 1] : m, e = x0 + 2 < N ? u2[c + 1] : m;
    const float2 ym = u2[c - N / 2], yp = u2[c + N / 2], zm = u2[c - NXY / 2], zp = u2[c + NXY / 2];
    float2 o = m;
    if (x0 >= 1) o.x = upd(m.x, w.y, m.y, ym.x, yp.x, zm.x, zp.x, r);
    if (x0 + 1 < N - 1) o.y = upd(m.y, m.x, e.x, ym.y, yp.y, zm.y, zp.y, r);
    o2[c] = o;
  }
}

__global__ void copy4(float4* __restrict__ out, const float4* __restrict__ in, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
}

template <typename F>
static float median_us(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 5) t.push_back(ms * 1000.0f);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const size_t n = (size_t)N * N * N;
  std::vector<float> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
  float *u, *ref, *out;
  cudaMalloc(&u, n * 4);
  cudaMalloc(&ref, n * 4);
  cudaMalloc(&out, n * 4);
  cudaMemcpy(u, h.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(ref, h.data(), n * 4, cudaMemcpyHostToDevice);
  const float r = 0.1f;
  const double bytes = 8.0 * n;
  const float tc = median_us([&] { copy4<<<132 * 16, 256>>>((float4*)out, (const float4*)u, n / 4); });
  const double copy = 2.0 * n * 4 / tc / 1e3;
  printf("copy float4: %.1f us, %.1f GB/s\n", tc, copy);
  plain<4><<<dim3(N / 128, N / 2, N / 4), dim3(128, 2)>>>(ref, u, r);
  std::vector<float> want(n), got(n);
  cudaMemcpy(want.data(), ref, n * 4, cudaMemcpyDeviceToHost);
  auto report = [&](const char* name, float us) {
    cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += got[i] != want[i];
    printf("%-28s %8.1f us %7.1f GB/s %5.1f %% of copy  %s\n", name, us, bytes / us / 1e3, 100.0 * bytes / us / 1e3 / copy,
           bad ? "DIFFERS" : "same bits");
    cudaMemcpy(out, h.data(), n * 4, cudaMemcpyHostToDevice);
  };
  cudaMemcpy(out, h.data(), n * 4, cudaMemcpyHostToDevice);
#define PLAIN(P, BX, BY) report("plain " #BX "x" #BY " pts " #P, median_us([&] { plain<P><<<dim3(N / BX, N / BY, N / P), dim3(BX, BY)>>>(out, u, r); }))
  PLAIN(4, 128, 2);
  PLAIN(4, 32, 8);
  PLAIN(8, 64, 4);
  PLAIN(8, 128, 4);
  PLAIN(4, 256, 2);
#define VEC(K, W, P, BX, BY) report(#K " " #BX "x" #BY " pts " #P, median_us([&] { K<P><<<dim3(N / W / BX, N / BY, N / P), dim3(BX, BY)>>>(out, u, r); }))
  VEC(vec4, 4, 1, 32, 4);
  VEC(vec4, 4, 4, 32, 4);
  VEC(vec4, 4, 4, 64, 2);
  VEC(vec4, 4, 8, 32, 4);
  VEC(vec4, 4, 8, 64, 4);
  VEC(vec4, 4, 4, 128, 2);
  VEC(vec4, 4, 4, 32, 8);
  VEC(vec4, 4, 16, 32, 4);
  VEC(vec8, 8, 1, 32, 4);
  VEC(vec8, 8, 2, 32, 4);
  VEC(vec8, 8, 4, 32, 4);
  VEC(vec8, 8, 2, 64, 2);
  VEC(vec2, 2, 4, 64, 2);
  VEC(vec2, 2, 4, 128, 2);
  VEC(vec2, 2, 8, 64, 4);
  VEC(vec2, 2, 8, 128, 2);
  return 0;
}
