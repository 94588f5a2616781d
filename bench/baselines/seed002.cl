/*
 * Baseline for clforge-bench: the CUDA kernels of seed 002 ported to OpenCL C by hand.
 *
 * Seed 002: P. A. Perezhogin, "Оценка эффективности разделяемой памяти в задаче решения
 * уравнения Пуассона методом Якоби" (how effective shared memory is for the Poisson
 * equation solved by Jacobi iteration), /work/shared/seeds/002_85d2031240502f1c.txt:
 *   section 2.1   the constants (jacobi_s, tile_s, square_s) in one struct in constant memory;
 *   section 2.2.1 jacobi_k: the tile (32x32 -> a 34x34 shared array) staged by memcpy_cross,
 *                 then jacobi_d reads the neighbours from shared memory;
 *   section 2.2.2 jacobi_k_noshared: the same update reading psi_old from global memory;
 *   section 3     tables 1 and 2: tile/block shapes 32x32/32x4 ... 32x32/32x16 at 512x256
 *                 (41/29 us per iteration on a GTX 570 for 32x32/32x4 shared/no shared);
 *   Fig. 1        the problem: flow around a body in the middle of a rectangular channel.
 *
 * The port keeps the seed's code line for line, names included. Launch shape as in the
 * seed: blocks of blockDim.x x blockDim.y threads, each block covering a tile of
 * blockDim.x x tile.y points, each thread walking tile.ratio = tile.y / blockDim.y rows
 * (global size nx x (ny / tile.y) * blockDim.y; nx and ny multiples of the tile).
 *
 * CUDA -> OpenCL: blockIdx / threadIdx / blockDim -> get_group_id / get_local_id /
 * get_local_size; __syncthreads() -> barrier(CLK_LOCAL_MEM_FENCE); the dynamic shared
 * memory of SharedMemory<T> -> a __local argument of (tile.y + 2) * tile.xp2 elements;
 * template <typename T> -> the REAL define (float, or -D REAL=double); const references
 * to the constant structs -> __constant pointers; `inline __device__` helpers -> plain
 * functions (the compilers inline them; C99 `inline` alone may fail to link un-inlined).
 * The seed ran jacobi_k with cudaFuncCachePreferShared and jacobi_k_noshared with
 * cudaFuncCachePreferL1; OpenCL has no such switch, the driver splits L1/local memory.
 *
 * Not printed in the seed, filled in here:
 *   - inside(): INSIDE for points off the walls (j = 0, j = ny-1), the inlet (i = 0) and
 *     the body square (isSquare); OUTFLOW for the right edge column i = nx-1 between the
 *     walls; anything else (0) keeps its value. clforge-bench's cell mask encodes the same;
 *   - the braces of jacobi_d's loop, lost in the seed's listing at a page break: the loop
 *     covers the whole update, as in jacobi_d_noshared;
 *   - tile.distance, unused by these kernels, is set to ratio * nx by the host.
 * Contraction of a*b+c into FMA is left to the compiler, as nvcc's default (--fmad=true) did.
 */
#ifndef REAL
#define REAL float
#endif
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
typedef REAL T;

#define INSIDE 1
#define OUTFLOW 2

/* section 2.1: constants of the Jacobi iteration, of the tile, of the body */
typedef struct {
    T a, b, c;
} jacobi_s;

typedef struct {
    int y, xp2, xp3, nx, ny, ratio, distance, distance_b;
} tile_s;

typedef struct {
    int x1, y1, x2, y2;
} square_s;

typedef struct {
    jacobi_s jacobi;
    tile_s tile;
    square_s square;
} gpu_constants;

/* section 2.2.1: index of the thread's first point in global and in shared memory */
int id_g(__constant const tile_s* tile) {
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    int j = get_group_id(1) * tile->y + get_local_id(1) * tile->ratio;
    return i + j * tile->nx;
}

int id_sb(__constant const tile_s* tile) {
    return get_local_id(0) + tile->xp3 + tile->distance_b * get_local_id(1);
}

/* section 2.2.1: logical functions */
bool isSquare(const int idx, __constant const square_s* square, __constant const tile_s* tile) {
    int i = idx % tile->nx;
    int j = idx / tile->nx;
    return ((i >= square->x1) && (i <= square->x2) && (j >= square->y1) && (j <= square->y2)) ? true : false;
}

bool outofBorder(const int idx, __constant const tile_s* tile) {
    int i = idx % tile->nx;
    int j = idx / tile->nx;
    return ((i < 0) || (j < 0) || (i > tile->nx - 1) || (j > tile->ny - 1)) ? true : false;
}

/* not printed in the seed; see the header */
int inside(const int idx, __constant const square_s* square, __constant const tile_s* tile) {
    int i = idx % tile->nx;
    int j = idx / tile->nx;
    if ((j <= 0) || (j >= tile->ny - 1) || (i <= 0))
        return 0;
    if (i == tile->nx - 1)
        return OUTFLOW;
    return isSquare(idx, square, tile) ? 0 : INSIDE;
}

/* section 2.2.1: loading the tile and the cross-shaped halo into shared memory */
void memcpy_cross(__local T* destination, __global const T* source, int idx_sb, int idx_g,
                  __constant const tile_s* tile) {
    int idx;
    const int threadIdx_x = get_local_id(0), threadIdx_y = get_local_id(1);
    const int blockIdx_x = get_group_id(0), blockIdx_y = get_group_id(1);
    const int blockDim_x = get_local_size(0), blockDim_y = get_local_size(1);

    // copy boundary
    if (threadIdx_y == 0) {
        idx = idx_g - tile->nx;
        if (outofBorder(idx, tile) == false)
            destination[idx_sb - tile->xp2] = source[idx];
    }

    if (threadIdx_y == 1) {
        idx = blockDim_x * blockIdx_x - 1 + tile->nx * (blockIdx_y * tile->y + threadIdx_x);
        if (outofBorder(idx, tile) == false)
            if (threadIdx_x < tile->y)
                destination[(threadIdx_x + 1) * tile->xp2] = source[idx];
    }

    if (threadIdx_y == 2) {
        idx = blockDim_x * (blockIdx_x + 1) + tile->nx * (blockIdx_y * tile->y + threadIdx_x);
        if (outofBorder(idx, tile) == false)
            if (threadIdx_x < tile->y)
                destination[(threadIdx_x + 2) * tile->xp2 - 1] = source[idx];
    }

    if (threadIdx_y == blockDim_y - 1) {
        idx = idx_g + tile->ratio * tile->nx;
        if (outofBorder(idx, tile) == false)
            destination[idx_sb + tile->distance_b] = source[idx];
    }

    // copy interior of tile
    for (int offset = 0; offset < tile->ratio; offset++, idx_g += tile->nx, idx_sb += tile->xp2)
        destination[idx_sb] = source[idx_g];
}

/* section 2.2.1: the Jacobi iteration from shared memory */
void jacobi_d(__global T* psi, __local const T* psi_s, __global const T* w, int idx_g, int idx_sb,
              __constant const gpu_constants* gpu_c) {
    int mark;
    __constant const square_s* square = &gpu_c->square;
    __constant const tile_s* tile = &gpu_c->tile;
    __constant const jacobi_s* jacobi = &gpu_c->jacobi;

    for (int offset = 0; offset < tile->ratio; offset++, idx_g += tile->nx, idx_sb += tile->xp2) {
        mark = inside(idx_g, square, tile);
        if (mark == INSIDE) {
            psi[idx_g] = jacobi->a * (psi_s[idx_sb + 1] + psi_s[idx_sb - 1])
                       + jacobi->b * (psi_s[idx_sb + tile->xp2] + psi_s[idx_sb - tile->xp2])
                       + jacobi->c * w[idx_g];
        }
        else if (mark == OUTFLOW)
            psi[idx_g] = psi_s[idx_sb - 1];
    }
}

/* section 2.2.1: kernel with shared memory */
__kernel void jacobi_k(__global T* psi, __global const T* psi_old, __global const T* w,
                       __constant const gpu_constants* gpu_c, __local T* psi_s) {
    int idx_g, idx_sb;

    idx_g = id_g(&gpu_c->tile);
    idx_sb = id_sb(&gpu_c->tile);

    memcpy_cross(psi_s, psi_old, idx_sb, idx_g, &gpu_c->tile);
    barrier(CLK_LOCAL_MEM_FENCE);

    jacobi_d(psi, psi_s, w, idx_g, idx_sb, gpu_c);
}

/* section 2.2.2: the Jacobi iteration without shared memory */
void jacobi_d_noshared(__global T* psi, __global const T* psi_old, __global const T* w, int idx_g,
                       __constant const gpu_constants* gpu_c) {
    int mark;
    __constant const square_s* square = &gpu_c->square;
    __constant const tile_s* tile = &gpu_c->tile;
    __constant const jacobi_s* jacobi = &gpu_c->jacobi;

    for (int offset = 0; offset < tile->ratio; offset++, idx_g += tile->nx) {
        mark = inside(idx_g, square, tile);
        if (mark == INSIDE) {
            psi[idx_g] = jacobi->a * (psi_old[idx_g + 1] + psi_old[idx_g - 1])
                       + jacobi->b * (psi_old[idx_g + tile->nx] + psi_old[idx_g - tile->nx])
                       + jacobi->c * w[idx_g];
        }
        else if (mark == OUTFLOW)
            psi[idx_g] = psi_old[idx_g - 1];
    }
}

/* section 2.2.2: kernel without shared memory */
__kernel void jacobi_k_noshared(__global T* psi, __global const T* psi_old, __global const T* w,
                                __constant const gpu_constants* gpu_c) {
    int idx_g;

    idx_g = id_g(&gpu_c->tile);

    jacobi_d_noshared(psi, psi_old, w, idx_g, gpu_c);
}
