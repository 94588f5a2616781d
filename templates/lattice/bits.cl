/* Bit-packed state, 32 bits per `uint` word, bit i in word i / 32 at position i % 32 (the
 * host's `clforge_runtime::lattice::PackedBits`). */
uint clforge_bit_get(__global const uint* words, ulong i)
{
    return (words[i >> 5] >> (uint)(i & 31)) & 1u;
}

/* Sets bit i atomically; returns whether it was already set (another work-item may set other
 * bits of the same word at the same time: `atomic_or` keeps them all). */
uint clforge_bit_set(volatile __global uint* words, ulong i)
{
    const uint mask = 1u << (uint)(i & 31);
    return (atomic_or(&words[i >> 5], mask) & mask) != 0u;
}

/* Clears bit i atomically; returns whether it was set. */
uint clforge_bit_clear(volatile __global uint* words, ulong i)
{
    const uint mask = 1u << (uint)(i & 31);
    return (atomic_and(&words[i >> 5], ~mask) & mask) != 0u;
}
