/*
** hash.h -- 64-bit FNV-1a, the one hash libfa4 uses: cache keys and source
** hashes (jit.c) and the compiled binaries' checksums (db.c).  Not
** cryptographic: it detects corruption and changed sources, nothing more.
*/
#ifndef FA4_HASH_H
#define FA4_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_INIT 0xcbf29ce484222325ULL

/* Continue the FNV-1a hash H over N bytes at DATA. */
static inline uint64_t hash_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n--) {
        h ^= *p++;
        h *= 0x100000001b3ULL;
    }
    return h;
}

#endif
