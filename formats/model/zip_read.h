/* zip_read.h — a small reader of zip archives held in memory, for the model files that
 * PyTorch's torch.save writes (a zip of data.pkl and one entry per storage).
 *
 * Reads the central directory (zip64 end records and extra fields included) and checks
 * every entry against the archive's bounds before anything is read: its local header,
 * name and data must lie inside the bytes given, names must be unique, and encrypted or
 * multi-disk archives are refused. Entries are STORED (what torch writes) or DEFLATE; an
 * entry is inflated only up to a bound the caller gives, so a "zip bomb" that claims or
 * produces more is refused instead of filling memory. CRC-32 of what is read is checked.
 * Limits: no spanned archives, no encryption, methods 0 and 8 only.
 *
 * The archive borrows the caller's bytes: they must outlive it.
 */
#ifndef XTTS_ZIP_READ_H
#define XTTS_ZIP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_ZIP_MAX_ENTRIES 1000000 /* entries in one archive */
#define XTTS_ZIP_MAX_INFLATE ((uint64_t)1 << 30) /* bytes one deflated entry may inflate to */

/* One entry of the central directory, its bounds already checked. name is NUL-terminated
 * and owned by the archive. */
typedef struct {
    const char *name;
    uint16_t method;          /* 0 stored, 8 deflate */
    uint32_t crc32;
    uint64_t compressed_size; /* bytes at data_offset */
    uint64_t size;            /* bytes once read */
    uint64_t data_offset;     /* first byte of the (compressed) data in the archive */
} xtts_zip_entry;

typedef struct xtts_zip xtts_zip;

/* Parse the central directory of the zip archive in data[0, size). label names the file
 * in error messages. On success *out holds the archive (free with xtts_zip_close).
 * Errors: XTTS_EINPUT (not a zip archive, a truncated or corrupt directory, an entry
 * outside the archive, a duplicate name, encryption, more than XTTS_ZIP_MAX_ENTRIES
 * entries; the message names the entry or the offset), XTTS_ENOMEM. */
xtts_status xtts_zip_open_mem(const uint8_t *data, size_t size, const char *label, xtts_zip **out,
                              xtts_error *err);

/* Number of entries, and entry i (0 <= i < count), in central-directory order. */
size_t xtts_zip_count(const xtts_zip *zip);
const xtts_zip_entry *xtts_zip_entry_at(const xtts_zip *zip, size_t i);

/* The entry named name, or NULL. */
const xtts_zip_entry *xtts_zip_find(const xtts_zip *zip, const char *name);

/* Read entry e: a stored entry is returned in place (*bytes points into the archive,
 * *owned is NULL); a deflated one is inflated into memory the caller frees (*owned ==
 * *bytes). *len is the entry's size. Entries larger than max_bytes are refused before any
 * memory is taken, deflated ones also above XTTS_ZIP_MAX_INFLATE (a bomb's 16 MB can claim
 * gigabytes; torch.save never compresses), and inflation stops at the entry's declared size.
 * Errors: XTTS_ERANGE (size over either bound), XTTS_EINPUT (unknown method, corrupt deflate
 * data, size or CRC-32 not what the directory says), XTTS_ENOMEM. */
xtts_status xtts_zip_read(const xtts_zip *zip, const xtts_zip_entry *e, uint64_t max_bytes,
                          const uint8_t **bytes, uint8_t **owned, size_t *len, xtts_error *err);

/* Free the archive (not the bytes it borrows). NULL is allowed. */
void xtts_zip_close(xtts_zip *zip);

#ifdef __cplusplus
}
#endif

#endif
