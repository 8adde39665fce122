/* update_dir.h — replace a finished cache by a new build of it without a moment where a
 * reader sees half of either.
 *
 * An update is built as a whole cache in a directory beside the old one (DIR.update, which
 * holds the mark file .xtts-update while it is being built), then the two directories are
 * exchanged in one rename (renameat2 RENAME_EXCHANGE) and the old cache, now at
 * DIR.update without a mark, is removed. After a kill at any moment DIR is either the old
 * cache or the new one, whole: DIR.update with the mark is an update a re-run finishes,
 * without it the remains of an old cache a re-run removes.
 */
#ifndef XTTS_CACHE_UPDATE_DIR_H
#define XTTS_CACHE_UPDATE_DIR_H

#include <stddef.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XTTS_DIR_EMPTY,      /* missing, or holding nothing of a cache */
    XTTS_DIR_FINISHED,   /* a manifest.json */
    XTTS_DIR_UNFINISHED, /* shards or partial manifests without a manifest.json */
} xtts_cache_dir_state;

/* What dir holds. Errors: XTTS_EIO (cannot be listed), XTTS_ENOMEM. */
xtts_status xtts_cache_dir_probe(const char *dir, xtts_cache_dir_state *state, xtts_error *err);

/* The update directory of dir ("DIR.update", trailing slashes of dir dropped).
 * Errors: XTTS_ERANGE (too long). */
xtts_status xtts_update_dir_path(const char *dir, char *out, size_t cap, xtts_error *err);

/* Before an update of dir is built in stage: dir must hold nothing but the cache's own
 * files (the whole directory is replaced); a mark left in dir by a kill right after an
 * exchange is removed; a stage without the mark (an old cache exchanged out, or a stage
 * never marked) is removed; then stage exists with its mark. *resumed: 1 when stage already
 * held a marked update (a re-run continues it).
 * Errors: XTTS_EINPUT (dir or stage holds a file that is not a cache's, naming it),
 * XTTS_EIO, XTTS_ERANGE. */
xtts_status xtts_update_dir_prepare(const char *dir, const char *stage, int *resumed, xtts_error *err);

/* Put the finished update in stage in the place of dir, atomically, then remove the old
 * cache (now in stage) and the mark. The old cache's audio codes directories are copied into
 * stage first (cache/store/codes_store.h: they are keyed by content key, so a carried record
 * keeps its codes). Errors: XTTS_EIO (the exchange or a removal failed; a
 * failed removal leaves dir the new cache), XTTS_EUNSUPPORTED (the filesystem cannot
 * exchange directories). */
xtts_status xtts_update_dir_switch(const char *dir, const char *stage, xtts_error *err);

/* Take dir's build lock while it is the source of an update: exclusive for a whole update (no
 * build, merge or other update runs in it meanwhile), shared for a part of an update in parts
 * (its parts run side by side, never beside a whole build, a merge or a whole update).
 * *fd for xtts_update_dir_unlock. Errors: XTTS_EBUSY (another holds it), XTTS_EIO. */
xtts_status xtts_update_dir_lock(const char *dir, int exclusive, int *fd, xtts_error *err);
void xtts_update_dir_unlock(int fd);

#ifdef __cplusplus
}
#endif
#endif
