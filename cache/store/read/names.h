/* names.h — the entries of a cache directory that its readers must know too, not only its
 * writers (cache/store/writer_internal.h has the others). Not installed. */
#ifndef XTTS_CACHE_NAMES_H
#define XTTS_CACHE_NAMES_H

/* The lock a build holds while it runs (a part's lock: this name and the part's number);
 * a reader that finds it held says "a build is running" (unfinished.c). */
#define XTTS_LOCK_NAME ".xtts-lock"

/* Named databases a shard's environment may hold (LMDB's maxdbs): "records", "ids", "meta",
 * "lengths" and up to twelve of records' own (cache/store/writer.h, xtts_cache_entry); every
 * role that opens a shard may open them all (lmdb_env.c). */
#define XTTS_SHARD_MAX_DBS 16

#endif
