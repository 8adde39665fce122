/* quality_store.c — the records' quality metrics read from a cache (quality_store.h). */
#include "cache/store/quality_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xtts_cache_has_metrics(const xtts_cache *c) { return xtts_cache_shards_with_db(c, XTTS_CACHE_DB_QUALITY) > 0; }

void xtts_cache_metrics_hint(const char *dir, char *out, size_t cap) {
    snprintf(out, cap,
             "%s: the cache stores no quality metrics (it was built before xtts-melcache measured them); "
             "rebuild it with the same xtts-melcache command and --force to add them",
             dir);
}

xtts_status xtts_cache_metrics_version(xtts_cache_reader *r, size_t shard, unsigned *version, xtts_error *err) {
    *version = 0;
    char *note = NULL;
    size_t len = 0;
    xtts_error e;
    xtts_status st = xtts_cache_reader_meta(r, shard, "state:" XTTS_CACHE_QUALITY_KEY, &note, &len, &e);
    if (st == XTTS_ENOTFOUND) return XTTS_OK;
    if (st) {
        if (err) *err = e;
        return st;
    }
    xtts_cache_shard s;
    xtts_cache_shard_get(xtts_cache_reader_cache(r), shard, &s);
    if (len == 1 && note[0] >= '1' && note[0] <= '0' + XTTS_QUALITY_VERSION)
        *version = note[0] == '1' ? 0 : (unsigned)(note[0] - '0');
    else
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"state:%s\": \"%.*s\" is not a quality metrics version (1..%d)",
                            s.name, XTTS_CACHE_QUALITY_KEY, (int)(len < 16 ? len : 16), note, XTTS_QUALITY_VERSION);
    free(note);
    return st;
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
    unsigned want;
    if ((st = xtts_cache_metrics_version(r, xtts_cache_shard_index_of(c, index), &want, err))) return st;
    if (want && m->version != want) {
        unsigned got = m->version;
        record_id(r, index, id, sizeof id);
        memset(m, 0, sizeof *m);
        return xtts_error_set(err, XTTS_ECORRUPT,
                              "%s: index %llu, id '%s': quality metrics damaged (version %u in a shard whose build wrote version %u)",
                              xtts_cache_shard_of(c, index), (unsigned long long)index, id, got, want);
    }
    return XTTS_OK;
}
