/* xtts_common_internal.h — the reference implementations that common/'s fast paths are
 * tested against; outside the library's API (not installed by `make install`).
 */
#ifndef XTTS_COMMON_INTERNAL_H
#define XTTS_COMMON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xtts_crc32 by tables only (slicing-by-8): the reference its carry-less multiplication path
 * (PCLMULQDQ, where the build targets it) is tested against, and its path on CPUs without it. */
uint32_t xtts_crc32_table(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
