/* A bounded work queue of `uint` entries: `count[0]` entries appended so far (it may pass the
 * capacity), `count[1]` entries that did not fit. The host reads both after a launch and turns
 * an overflow into an error (`clforge_runtime::lattice::WorkQueue`). */
#ifndef CLFORGE_QUEUE_WG
#define CLFORGE_QUEUE_WG 256 /* work-group of the compaction kernels (a power of two) */
#endif

uint clforge_queue_push(volatile __global uint* count, __global uint* entries, uint capacity, uint v)
{
    const uint i = atomic_inc(&count[0]);
    if (i < capacity) {
        entries[i] = v;
        return 1u;
    }
    atomic_inc(&count[1]);
    return 0u;
}

/* Stable compaction, pass 1: the number of kept entries of each work-group's slice. */
__kernel void clforge_queue_count(__global const uint* keep, const uint n, __global uint* block_sums)
{
    __local uint part[CLFORGE_QUEUE_WG];
    const uint i = get_global_id(0), l = get_local_id(0);
    part[l] = i < n ? (keep[i] != 0u) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLFORGE_QUEUE_WG / 2; s > 0; s >>= 1) {
        if (l < s) part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) block_sums[get_group_id(0)] = part[0];
}

/* Stable compaction, pass 2: each kept entry goes to its block's offset plus the number of
 * kept entries before it in the block (an exclusive scan in local memory), so the kept
 * entries keep their order. */
__kernel void clforge_queue_scatter(__global const uint* entries, __global const uint* keep, const uint n,
                                    __global const uint* offsets, __global uint* out)
{
    __local uint scan[2][CLFORGE_QUEUE_WG];
    const uint i = get_global_id(0), l = get_local_id(0);
    const uint mine = i < n ? (keep[i] != 0u) : 0u;
    uint src = 0;
    scan[0][l] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < CLFORGE_QUEUE_WG; d <<= 1) {
        scan[1 - src][l] = scan[src][l] + (l >= d ? scan[src][l - d] : 0u);
        src = 1 - src;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (mine) out[offsets[get_group_id(0)] + scan[src][l] - 1u] = entries[i];
}
