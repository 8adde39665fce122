/* memory.c — the allocator set up for batch work, and a buffer grown in steps. */
#include "common/xtts_common.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void xtts_malloc_for_batch(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    /* Every thread allocates from the one heap, which grows in steps of 64 MiB; the first
     * step is made now and advised for transparent huge pages. A first touch of a 4 KiB page
     * costs a fault (13 us measured on a virtual machine; 1-2 us on bare metal), one of a
     * 2 MiB page as much for 512 times the memory. Memory the heap gets later, and kernels
     * without huge pages, keep 4 KiB pages. Under a sanitizer's malloc the heap does not
     * move and nothing is advised. */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TOP_PAD, 64 << 20);
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t before = (uintptr_t)sbrk(0);
    void *p = malloc(16 << 20);
    uintptr_t after = (uintptr_t)sbrk(0);
    uintptr_t a = (before + huge - 1) & ~(huge - 1), b = after & ~(huge - 1);
    if (p && before != (uintptr_t)-1 && after != (uintptr_t)-1 && b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
    free(p);
#endif
#endif
}

void *xtts_renew(void *buf, size_t *cap, size_t need, size_t elem) {
    if (buf && need <= *cap) return buf;
    free(buf);
    size_t c = (need / 65536 + 1) * 65536;
    void *p = elem && c > need && c <= SIZE_MAX / elem ? malloc(c * elem) : NULL;
    *cap = p ? c : 0;
    return p;
}
