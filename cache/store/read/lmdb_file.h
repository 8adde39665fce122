/* lmdb_file.h — the two meta pages of a data.mdb, read with pread before liblmdb maps the
 * file (cache/store/read/lmdb_file.c): one check shared by the writer and the readers. */
#ifndef XTTS_LMDB_FILE_H
#define XTTS_LMDB_FILE_H

#include <stdint.h>

#include "common/xtts_common.h"

#define XTTS_LMDB_META_BYTES 152 /* page header + MDB_meta up to mm_txnid */

/* Read both meta pages of the open data.mdb fd (file_bytes long) into meta. NULL when both
 * are LMDB meta pages agreeing on a page size the file can hold, else what is wrong
 * ("no first meta page", "page size unusable with the file", ...). */
const char *xtts_lmdb_meta_pages(int fd, uint64_t file_bytes, uint8_t meta[2][XTTS_LMDB_META_BYTES]);

/* Before mapping an existing shard: its data.mdb's meta pages must be sound and the last
 * page they name must lie inside the file, else XTTS_ECORRUPT naming the file ("truncated", "damaged"). A missing or empty data.mdb
 * is fine (a new shard). */
xtts_status xtts_lmdb_file_check(const char *shard_dir, xtts_error *err);

#endif
