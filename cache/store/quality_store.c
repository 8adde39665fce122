/* quality_store.c — the records' quality metrics read from a cache (quality_store.h). */
#include "cache/store/quality_store.h"

#include <stdio.h>
#include <string.h>

int xtts_cache_has_metrics(const xtts_cache *c) { return xtts_cache_shards_with_db(c, XTTS_CACHE_DB_QUALITY) > 0; }

void xtts_cache_metrics_hint(const char *dir, char *out, size_t cap) {
    snprintf(out, cap,
             "%s: the cache stores no quality metrics (it was built before xtts-melcache measured them); "
             "rebuild it with the same xtts-melcache command and --force to add them",
             dir);
}

/* The record's id for a message, or "?" when its header cannot be read. */
static void record_id(xtts_cache_reader *r, uint64_t index, char *id, size_t cap) {
    xtts_record_header h;
    xtts_error e;
    if (xtts_cache_reader_header(r, index, &h, &e) == XTTS_OK) snprintf(id, cap, "%.100s", h.id);
    else snprintf(id, cap, "?");
}

xtts_status xtts_cache_reader_metrics(xtts_cache_reader *r, uint64_t index, xtts_quality_metrics *m,
                                      xtts_error *err) {
    memset(m, 0, sizeof *m);
    const void *buf;
    size_t len;
    xtts_error e;
    xtts_status st = xtts_cache_reader_value(r, index, XTTS_CACHE_DB_QUALITY, &buf, &len, &e);
    char id[128];
    const xtts_cache *c = xtts_cache_reader_cache(r);
    if (st == XTTS_ENOTFOUND && !xtts_cache_has_metrics(c)) {
        char hint[XTTS_ERRMSG_MAX];
        xtts_cache_metrics_hint(xtts_cache_dir(c), hint, sizeof hint);
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s", hint);
    }
    if (st == XTTS_ENOTFOUND) {
        record_id(r, index, id, sizeof id);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': quality metrics missing",
                              xtts_cache_shard_of(c, index), (unsigned long long)index, id);
    }
    if (st) {
        if (err) *err = e;
        return st;
    }
    if (len != XTTS_QUALITY_BYTES) {
        record_id(r, index, id, sizeof id);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': quality metrics of %zu bytes, expected %d",
                              xtts_cache_shard_of(c, index), (unsigned long long)index, id, len, XTTS_QUALITY_BYTES);
    }
    uint8_t copy[XTTS_QUALITY_BYTES];
    memcpy(copy, buf, sizeof copy);
    if ((st = xtts_quality_decode(copy, m, &e))) {
        record_id(r, index, id, sizeof id);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': quality metrics damaged (%s)",
                              xtts_cache_shard_of(c, index), (unsigned long long)index, id, e.msg);
    }
    return XTTS_OK;
}
