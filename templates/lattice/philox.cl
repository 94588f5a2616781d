/* Philox4x32-10 (Salmon et al., SC'11, "Parallel random numbers: as easy as 1, 2, 3"), the
 * counter-based generator of clforge's lattice kind. The same function is
 * `clforge_runtime::lattice::rng::philox4x32_10` on the host: equal bits for equal inputs. */
uint4 clforge_philox4x32_10(uint4 c, uint2 k)
{
    for (int i = 0; i < 10; ++i) {
        if (i > 0) {
            k.x += 0x9E3779B9u; /* the key schedule's Weyl increments */
            k.y += 0xBB67AE85u;
        }
        const uint lo0 = 0xD2511F53u * c.x, hi0 = mul_hi(0xD2511F53u, c.x);
        const uint lo1 = 0xCD9E8D57u * c.z, hi1 = mul_hi(0xCD9E8D57u, c.z);
        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

/* Draw `draw` of `site` at `step` of the stream `seed`: counter (site low, site high, step,
 * draw / 4), key (seed low, seed high), word draw % 4. */
uint clforge_draw(ulong seed, uint step, ulong site, uint draw)
{
    const uint4 r = clforge_philox4x32_10((uint4)((uint)site, (uint)(site >> 32), step, draw >> 2),
                                          (uint2)((uint)seed, (uint)(seed >> 32)));
    const uint w = draw & 3u;
    return w == 0u ? r.x : w == 1u ? r.y : w == 2u ? r.z : r.w;
}

/* The top 24 bits as a float in [0, 1): exact (a 24-bit integer times 2^-24). */
float clforge_uniform_f32(uint bits)
{
    return (float)(bits >> 8) * 0x1p-24f;
}

/* The block of draw `draw` of the lattice sites of stream group `group` at `step`: counter
 * (group low, group high, step, draw), key (seed low, seed high); the group's site j takes word j
 * (`clforge_runtime::lattice::rng::site_draw`). */
uint4 clforge_site_block(ulong seed, uint step, ulong group, uint draw)
{
    return clforge_philox4x32_10((uint4)((uint)group, (uint)(group >> 32), step, draw),
                                 (uint2)((uint)seed, (uint)(seed >> 32)));
}

uint clforge_word(uint4 r, int j)
{
    return j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
}
