/* A hand-written 2-D Ising checkerboard step, the ceiling the lattice suite compares the
 * generated kernels against (bench/src/baselines/ising.rs): one byte per spin (1 up, 0 down),
 * four sites of one colour per work-item (x = 8m + 2j + parity, j = 0..3) sharing one
 * Philox4x32-10 block, word j, counter (m + (nx / 8) y, 0, step, parity), key (seed lo, seed hi).
 * Periodic; nx a multiple of 8. Pasted after PHILOX_CL. */
__kernel void ising_c4(__global uchar* s, const uint t4, const uint t8, const int nx, const int ny,
                       const uint seed_lo, const uint seed_hi, const uint step, const int colour)
{
    const int m = get_global_id(0), y = get_global_id(1);
    if (8 * m >= nx || y >= ny) return;
    const int p = (colour + y) & 1;
    const int ym = y == 0 ? ny - 1 : y - 1, yp = y == ny - 1 ? 0 : y + 1;
    const uint4 r = clforge_philox4x32_10((uint4)((uint)(m + (nx >> 3) * y), 0u, step, (uint)p),
                                          (uint2)(seed_lo, seed_hi));
    __global uchar* row = s + (size_t)nx * y;
    __global const uchar* up = s + (size_t)nx * ym;
    __global const uchar* dn = s + (size_t)nx * yp;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int x = 8 * m + 2 * j + p;
        const int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
        const uchar me = row[x];
        const uchar n = row[xm] + row[xp] + up[x] + dn[x];
        const uchar a = me ? n : 4 - n;
        const uint u = j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
        row[x] = (a <= 2 || (a == 3 && u < t4) || (a == 4 && u < t8)) ? 1 - me : me;
    }
}
