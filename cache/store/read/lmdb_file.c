/* lmdb_file.c — look at a shard's data.mdb before liblmdb maps it.
 *
 * liblmdb trusts its meta pages: a data.mdb cut short is mapped as it is, and the first
 * read of a page past the end of the file is SIGBUS, not an error code. The two meta pages
 * (pages 0 and 1) are read here with pread: both must be LMDB meta pages agreeing on the
 * page size, and the last page the newer one names must lie inside the file.
 *
 * Layout read (liblmdb 0.9, 64-bit): a page header of 16 bytes (flags at 10), then MDB_meta:
 * magic u32 at 16, the free-page database's md_pad (the page size) at 40, mm_last_pg u64
 * at 136, mm_txnid u64 at 144. Little-endian, as written on this machine.
 */
#include "cache/store/read/lmdb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { META_BYTES = XTTS_LMDB_META_BYTES, FLAGS_AT = 10, MAGIC_AT = 16, PSIZE_AT = 40, LAST_PG_AT = 136, TXNID_AT = 144 };

static uint64_t get_le64(const uint8_t *p) { return (uint64_t)xtts_get_le32(p) | (uint64_t)xtts_get_le32(p + 4) << 32; }

const char *xtts_lmdb_meta_pages(int fd, uint64_t file_bytes, uint8_t m[2][XTTS_LMDB_META_BYTES]) {
    if (file_bytes < META_BYTES || pread(fd, m[0], META_BYTES, 0) != META_BYTES) return "no first meta page";
    uint32_t psize = xtts_get_le32(m[0] + PSIZE_AT);
    if (psize < 512 || psize > 65536 || (psize & (psize - 1)) || 2ull * psize > file_bytes)
        return "page size unusable with the file";
    if (pread(fd, m[1], META_BYTES, psize) != META_BYTES) return "no second meta page";
    if (xtts_get_le32(m[1] + PSIZE_AT) != psize) return "the two meta pages disagree on the page size";
    for (int i = 0; i < 2; i++)
        if (!(xtts_get_le16(m[i] + FLAGS_AT) & 0x08) || xtts_get_le32(m[i] + MAGIC_AT) != 0xBEEFC0DEu)
            return i ? "second meta page is not an LMDB meta page" : "first meta page is not an LMDB meta page";
    return NULL;
}

xtts_status xtts_lmdb_file_check(const char *shard_dir, xtts_error *err) {
    char path[4200];
    xtts_path_join(path, sizeof path, shard_dir, "data.mdb");
    /* O_NONBLOCK: a FIFO in data.mdb's place must be refused, not wait in open() (here, or
     * in liblmdb's own open after this check) for a writer that never comes */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) return XTTS_OK; /* a new shard: liblmdb creates it */
        return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged (not a regular file)", path);
    }
    uint64_t file_bytes = (uint64_t)st.st_size;
    if (file_bytes == 0) {
        close(fd);
        return XTTS_OK; /* created, never written: liblmdb writes fresh meta pages */
    }
    uint8_t m[2][META_BYTES];
    const char *why = xtts_lmdb_meta_pages(fd, file_bytes, m);
    close(fd);
    if (why) return xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged (%s)", path, why);
    uint32_t psize = xtts_get_le32(m[0] + PSIZE_AT); /* checked by xtts_lmdb_meta_pages */
    int newer = get_le64(m[1] + TXNID_AT) > get_le64(m[0] + TXNID_AT);
    uint64_t last = get_le64(m[newer] + LAST_PG_AT);
    if (last >= file_bytes / psize)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: truncated (%llu bytes, its pages reach %llu)", path,
                              (unsigned long long)file_bytes, (unsigned long long)((last + 1) * psize));
    return XTTS_OK;
}
