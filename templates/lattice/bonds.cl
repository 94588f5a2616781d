/* Bond growth on a work queue of live bonds (seed 003's fracture schedule, made exact):
 * `clforge_runtime::lattice::bonds`. Pasted after PHILOX_CL, BITS_CL and QUEUE_CL, with
 * -D PX, PY, PZ (bond sites per axis: the sample's extent + 1) and -D KINDS (bonds per site).
 *
 * A bond is the number (x + PX (y + PY z)) KINDS + kind. One launch runs one proposal for every
 * live bond of the queue's first `n` entries (or, thinned, each with probability 1 / thinning): it picks a
 * neighbour bond from the table by its draw 0, and an unbroken neighbour breaks when its draw 1
 * is below the launch's threshold for the move's class. The class and the thresholds come from
 * the state when the launch started (late synchronisation: the host computes the energies of the
 * counters it read, and `groups_old` is the group bits of that moment), so a proposal's outcome
 * depends on nothing another work-item of the launch does: whichever of two work-items breaking
 * one bond wins the atomic, the same bond breaks, is counted once and queued once. Draws are
 * keyed by the entry's bond, not by its place in the queue, so the queue's order (which the
 * atomic appends make arbitrary) never changes a result. */

/* The group (line of sites along GROUP_AXIS) of the site (x, y, z); GROUP_KIND -1: no groups. */
#if GROUP_AXIS == 0
#define GROUP_OF(x, y, z) ((uint)(y) + PY * (uint)(z))
#elif GROUP_AXIS == 1
#define GROUP_OF(x, y, z) ((uint)(x) + PX * (uint)(z))
#else
#define GROUP_OF(x, y, z) ((uint)(x) + PX * (uint)(y))
#endif

typedef struct {
    int dx, dy, dz, kind;
} clforge_neighbour;

/* counters: [0] broken bonds, [1] marked groups, [2] faces reached (bit 0 x = 0, bit 1 y = 0,
 * bit 2 x = max, bit 3 y = max, bit 4 z = 0, bit 5 z = max) */
__kernel void clforge_bonds_step(volatile __global uint* bits, __global const uint* groups_old,
                                 volatile __global uint* groups_new, volatile __global uint* counters,
                                 volatile __global uint* count, __global uint* entries, const uint capacity,
                                 __constant clforge_neighbour* table, const uint n, const uint seed_lo,
                                 const uint seed_hi, const uint step, const uint thinning, const uint threshold0, const uint threshold1,
                                 const uint certain)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint e = entries[i];
    const ulong seed = ((ulong)seed_hi << 32) | seed_lo;
    /* thinning: the entry proposes in this launch with probability 1 / thinning (its draw 3) */
    if (thinning > 1u && mul_hi(clforge_draw(seed, step, e, 3u), thinning) != 0u) return;
    const uint kind = e % KINDS, site = e / KINDS;
    const int x = (int)(site % PX), y = (int)((site / PX) % PY), z = (int)(site / (PX * PY));
    const clforge_neighbour t = table[kind * NEIGHBOURS + mul_hi(clforge_draw(seed, step, e, 0u), (uint)NEIGHBOURS)];
    const int cx = x + t.dx, cy = y + t.dy, cz = z + t.dz;
    if (cx < 0 || cy < 0 || cz < 0 || cx >= PX || cy >= PY || cz >= PZ) return;
    const uint c = ((uint)cx + PX * ((uint)cy + PY * (uint)cz)) * KINDS + (uint)t.kind;
    if (clforge_bit_get((__global const uint*)bits, c)) return;
    const uint g = GROUP_OF(cx, cy, cz);
    const uint s = t.kind == GROUP_KIND && !clforge_bit_get(groups_old, g);
    const uint accept = ((certain >> s) & 1u) || clforge_draw(seed, step, e, 1u) < (s ? threshold1 : threshold0);
    if (!accept) return;
    if (clforge_bit_set(bits, c)) return; /* another work-item broke it first */
    atomic_inc(&counters[0]);
    if (t.kind == GROUP_KIND && !clforge_bit_set(groups_new, g)) atomic_inc(&counters[1]);
    const uint f = (uint)(cx == 0) | ((uint)(cy == 0) << 1) | ((uint)(cx == PX - 1) << 2) | ((uint)(cy == PY - 1) << 3)
                 | ((uint)(cz == 0) << 4) | ((uint)(cz == PZ - 1) << 5);
    if (f) atomic_or(&counters[2], f);
    if (cx >= 1 && cy >= 1 && cz >= 1 && cx < PX - 1 && cy < PY - 1 && cz < PZ - 1)
        clforge_queue_push(count, entries, capacity, c);
}

/* keep[i] = whether entry i is live: one of its neighbours is unbroken. */
__kernel void clforge_bonds_live(__global const uint* bits, __global const uint* entries, const uint n,
                                 __constant clforge_neighbour* table, __global uint* keep)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint e = entries[i];
    const uint kind = e % KINDS, site = e / KINDS;
    const int x = (int)(site % PX), y = (int)((site / PX) % PY), z = (int)(site / (PX * PY));
    uint live = 0u;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        const clforge_neighbour t = table[kind * NEIGHBOURS + k];
        const int cx = x + t.dx, cy = y + t.dy, cz = z + t.dz;
        if (cx < 0 || cy < 0 || cz < 0 || cx >= PX || cy >= PY || cz >= PZ) continue;
        live |= !clforge_bit_get(bits, ((uint)cx + PX * ((uint)cy + PY * (uint)cz)) * KINDS + (uint)t.kind);
    }
    keep[i] = live;
}
