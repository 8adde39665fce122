/* writer_resume.c — the cache writer takes its directory: the locks (a whole build, a part,
 * a merge), what the directory holds (its own shards, another configuration's, another
 * layout's, foreign files), and from that a resumed build (its shards scanned, the state of
 * the last commit loaded), an empty start, a replacement (--force) or a refusal that says
 * which configuration fields differ.
 */
#include "cache/store/writer_core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Read what a shard holds: whether it was ever committed ("format" present), its
 * "config_hash", and its record count and bytes. */
typedef struct {
    int committed;
    char format[32];
    char hash[65];
    uint64_t records, ids, bytes;
    json_t *rejects; /* meta "rejects" (new reference) or NULL */
} shard_scan;

static int meta_get(MDB_txn *txn, MDB_dbi meta, const char *key, MDB_val *v) {
    MDB_val k = {strlen(key), (void *)key};
    return mdb_get(txn, meta, &k, v);
}

static xtts_status scan_shard(xtts_cache_writer *w, MDB_env *env, int number, shard_scan *s,
                              xtts_error *err) {
    char path[4096];
    xtts_writer_shard_path(w, number, path, sizeof path);
    memset(s, 0, sizeof *s);
    MDB_txn *txn;
    MDB_dbi meta, recs, ids;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", path, mdb_strerror(rc));
    rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (rc == MDB_NOTFOUND) { mdb_txn_abort(txn); return XTTS_OK; } /* never committed */
    MDB_val v;
    if (!rc && !(rc = meta_get(txn, meta, "format", &v))) {
        s->committed = 1;
        snprintf(s->format, sizeof s->format, "%.*s", (int)(v.mv_size < 31 ? v.mv_size : 31), (const char *)v.mv_data);
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed && !(rc = meta_get(txn, meta, "config_hash", &v)))
        snprintf(s->hash, sizeof s->hash, "%.*s", (int)(v.mv_size < 64 ? v.mv_size : 64), (const char *)v.mv_data);
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed && !(rc = meta_get(txn, meta, "rejects", &v))) {
        json_error_t je;
        s->rejects = json_loadb(v.mv_data, v.mv_size, 0, &je);
        if (!json_is_array(s->rejects)) {
            mdb_txn_abort(txn);
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"rejects\" is not a JSON array", path);
        }
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed) {
        MDB_stat ms;
        rc = mdb_dbi_open(txn, "records", 0, &recs);
        if (!rc) rc = mdb_stat(txn, recs, &ms);
        if (!rc) s->records = ms.ms_entries;
        if (!rc) rc = mdb_dbi_open(txn, "ids", 0, &ids);
        if (!rc) rc = mdb_stat(txn, ids, &ms);
        if (!rc) s->ids = ms.ms_entries;
        MDB_cursor *cur = NULL;
        if (!rc) rc = mdb_cursor_open(txn, recs, &cur);
        MDB_val k;
        uint64_t expect = 0;
        while (!rc && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
            if (k.mv_size != 8 || xtts_get_be64(k.mv_data) != expect) {
                mdb_cursor_close(cur);
                mdb_txn_abort(txn);
                return xtts_error_set(err, XTTS_ECORRUPT, "%s: record keys are not 0..n-1 (index %llu)", path,
                                      (unsigned long long)expect);
            }
            expect++;
            s->bytes += v.mv_size;
        }
        if (rc == MDB_NOTFOUND) rc = 0;
        if (cur) mdb_cursor_close(cur);
        /* the ids into the filter, for the duplicate check */
        if (!rc) rc = mdb_cursor_open(txn, ids, &cur);
        while (!rc && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)))
            if (xtts_id_filter_add(&w->ids, xtts_id_hash(k.mv_data, k.mv_size)) < 0) rc = ENOMEM;
        if (rc == MDB_NOTFOUND) rc = 0;
        if (cur) mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read the shard: %s", path, mdb_strerror(rc));
    if (s->committed && s->records != s->ids)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: %llu records but %llu ids", path, (unsigned long long)s->records,
                              (unsigned long long)s->ids);
    return XTTS_OK;
}

/* Load next_input and the state blobs from the last shard's meta. */
static xtts_status load_state(xtts_cache_writer *w, int number, xtts_error *err) {
    char path[4096];
    xtts_writer_shard_path(w, number, path, sizeof path);
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc = mdb_txn_begin(w->env, NULL, MDB_RDONLY, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (!rc) rc = meta_get(txn, meta, "next_input", &v);
    if (rc) goto lmdb_fail;
    if (v.mv_size != 8) {
        mdb_txn_abort(txn);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"next_input\" is %zu bytes, not 8", path, v.mv_size);
    }
    w->next_input = w->next_input_pending = xtts_get_be64(v.mv_data);
    rc = mdb_cursor_open(txn, meta, &cur);
    static const char prefix[] = "state:";
    k.mv_size = sizeof prefix - 1;
    k.mv_data = (void *)prefix;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size < sizeof prefix - 1 || memcmp(k.mv_data, prefix, sizeof prefix - 1)) break;
        state_blob *nb = realloc(w->state, (w->n_state + 1) * sizeof *nb);
        if (!nb) { rc = ENOMEM; break; }
        w->state = nb;
        state_blob *b = &w->state[w->n_state];
        size_t kl = k.mv_size - (sizeof prefix - 1);
        b->key = malloc(kl + 1);
        b->data = malloc(v.mv_size ? v.mv_size : 1);
        b->len = v.mv_size;
        if (!b->key || !b->data) { free(b->key); free(b->data); rc = ENOMEM; break; }
        memcpy(b->key, (const char *)k.mv_data + sizeof prefix - 1, kl);
        b->key[kl] = '\0';
        memcpy(b->data, v.mv_data, v.mv_size);
        w->n_state++;
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    mdb_cursor_close(cur);
lmdb_fail:
    mdb_txn_abort(txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read the writer state: %s", path, mdb_strerror(rc));
    return XTTS_OK;
}

/* config_hash of a manifest file, or "" when it cannot be read. */
static void manifest_hash(const char *path, char out[65]) {
    out[0] = '\0';
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    json_t *h = json_object_get(m, "config_hash");
    if (json_is_string(h)) snprintf(out, 65, "%s", json_string_value(h));
    json_decref(m);
}

/* Append "key A -> B" for the fields in which old and now differ (objects compared field
 * by field, as "mel.hop_samples"), up to 4 of them. */
static void json_differences(const json_t *old, const json_t *now, const char *prefix, char *out, size_t cap, int *shown) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)now, key, v) {
        json_t *was = json_object_get(old, key);
        if (was && json_equal(was, v)) continue;
        char name[96];
        snprintf(name, sizeof name, "%s%s", prefix, key);
        if (json_is_object(was) && json_is_object(v)) {
            char sub[100];
            snprintf(sub, sizeof sub, "%s.", name);
            json_differences(was, v, sub, out, cap, shown);
            continue;
        }
        size_t n = strlen(out);
        if (*shown == 4) {
            if (n < 5 || strcmp(out + n - 5, ", ...")) snprintf(out + n, cap - n, ", ...");
            return;
        }
        char *a = was ? json_dumps(was, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char *b = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(out + n, cap - n, "%s%s %.24s%s -> %.24s%s", *shown ? ", " : "", name, a ? a : "(none)",
                 a && strlen(a) > 24 ? "..." : "", b ? b : "?", b && strlen(b) > 24 ? "..." : "");
        free(a);
        free(b);
        (*shown)++;
    }
}

/* The configuration fields in which a manifest differs from cfg, or "" when the
 * manifest's "config" cannot be read. */
static void config_differences(const char *manifest_path, const xtts_cache_config *cfg, char *out, size_t cap) {
    out[0] = '\0';
    json_error_t je;
    json_t *m = json_load_file(manifest_path, 0, &je);
    json_t *old = json_object_get(m, "config");
    json_t *now = xtts_cache_config_to_json(cfg);
    int shown = 0;
    if (json_is_object(old) && now) json_differences(old, now, "", out, cap, &shown);
    json_decref(now);
    json_decref(m);
}

/* Append a line to a mismatch description (kept short: the first reasons win). */
static void why_add(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_add(char *why, size_t cap, const char *fmt, ...) {
    size_t n = strlen(why);
    if (n + 4 >= cap) return;
    if (n) { snprintf(why + n, cap - n, "; "); n += 2; }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, cap - n, fmt, ap);
    va_end(ap);
}

/* Remove what another configuration or another layout left in the directory. */
static xtts_status remove_old(xtts_cache_writer *w, const xtts_dir_listing *l, xtts_error *err) {
    char path[4096];
    xtts_status st;
    /* every shard to remove holds LMDB's files alone, checked before the first goes */
    for (size_t i = 0; i < l->n_shards; i++) {
        if (w->part >= 0 && l->shards[i].part >= 0 && l->shards[i].part != w->part) continue;
        char name[32];
        xtts_shard_name(name, l->shards[i].part, l->shards[i].number);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_shard_dir_check(path, err))) return st;
    }
    /* Newest first: a kill part way leaves shards 0..k, which a re-run reads again. */
    for (size_t i = l->n_shards; i-- > 0;) {
        const xtts_dir_shard *s = &l->shards[i];
        /* A part build removes its own shards and whole-build shards, never other parts'. */
        if (w->part >= 0 && s->part >= 0 && s->part != w->part) continue;
        char name[32];
        xtts_shard_name(name, s->part, s->number);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_remove_shard_dir(path, err))) return st;
    }
    xtts_path_join(path, sizeof path, w->dir, "manifest.json");
    if ((st = xtts_remove_file(path, err))) return st;
    if (l->n_base && (st = xtts_remove_base_dirs(w->dir, err))) return st;
    for (size_t i = 0; i < l->n_parts; i++) {
        if (w->part >= 0 && l->parts[i] != w->part) continue;
        char name[40];
        xtts_manifest_name(name, l->parts[i]);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_remove_file(path, err))) return st;
    }
    return XTTS_OK;
}

/* Open the own shards in order, check their configuration, and load the state. */
static xtts_status open_existing(xtts_cache_writer *w, const xtts_dir_listing *l, char *why, size_t why_cap,
                                 xtts_error *err) {
    size_t n_own = 0;
    for (size_t i = 0; i < l->n_shards; i++)
        if (l->shards[i].part == w->part) n_own++;
    int *nums = malloc((n_own ? n_own : 1) * sizeof *nums);
    if (!nums) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    n_own = 0;
    for (size_t i = 0; i < l->n_shards; i++)
        if (l->shards[i].part == w->part) nums[n_own++] = l->shards[i].number;
    xtts_status st = XTTS_OK;
    char path[4096];
    for (size_t i = 0; i < n_own; i++) {
        xtts_writer_shard_path(w, (int)i, path, sizeof path);
        if (nums[i] != (int)i) {
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: missing (the next shard present is number %d)", path, nums[i]);
            break;
        }
        MDB_env *env;
        if ((st = xtts_writer_env_open(w, (int)i, 0, &env, err))) break;
        shard_scan s;
        st = scan_shard(w, env, (int)i, &s, err);
        if (st) { json_decref(s.rejects); mdb_env_close(env); break; }
        json_decref(w->shard_rejects);
        w->shard_rejects = s.rejects ? s.rejects : json_array();
        if (!w->shard_rejects || json_array_extend(w->rejects, w->shard_rejects)) {
            mdb_env_close(env);
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
            break;
        }
        if (!s.committed) {
            mdb_env_close(env);
            if (i + 1 == n_own) { /* created by a rotation that was killed before its first commit */
                st = xtts_remove_shard_dir(path, err);
                break;
            }
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: shard holds no commit but later shards exist", path);
            break;
        }
        if (strcmp(s.format, xtts_cache_format_name(w->cfg.format_version))) {
            why_add(why, why_cap, "%s has format \"%s\", this build writes \"%s\"", path, s.format,
                    xtts_cache_format_name(w->cfg.format_version));
        } else if (strcmp(s.hash, w->hash)) {
            why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...", path, s.hash, w->hash);
        }
        if ((st = xtts_writer_shards_push(w, (int)i, s.records, s.bytes, err))) { mdb_env_close(env); break; }
        if (w->env) mdb_env_close(w->env);
        w->env = env;
        w->last_committed = 1;
    }
    free(nums);
    if (st) return st;
    if (why[0] || !w->n_shards) return XTTS_OK;
    return load_state(w, w->shards[w->n_shards - 1].number, err);
}

static void reset_loaded(xtts_cache_writer *w) {
    if (w->env) mdb_env_close(w->env);
    w->env = NULL;
    w->n_shards = 0;
    w->last_committed = 0;
    w->next_input = w->next_input_pending = 0;
    json_array_clear(w->rejects);
    json_array_clear(w->shard_rejects);
    xtts_writer_blobs_free(w->state, w->n_state);
    w->state = NULL;
    w->n_state = 0;
    xtts_id_filter_free(&w->ids);
    memset(&w->ids, 0, sizeof w->ids);
}

/* A whole build or a merge holds the directory lock exclusively; part builds share it (so
 * parts run side by side but never beside a whole build or a merge) and hold their own part
 * lock exclusively. The locks are taken in dir (w->dir, or the new directory's temporary name). */
static xtts_status writer_lock_in(xtts_cache_writer *w, const char *dir, xtts_error *err) {
    xtts_status st;
    if (w->part < 0) {
        st = xtts_lock(dir, XTTS_LOCK_NAME, 1, &w->lock_fd, "another build or merge is running in this directory", err);
    } else {
        st = xtts_lock(dir, XTTS_LOCK_NAME, 0, &w->lock_fd, "a whole build or a merge is running in this directory", err);
        if (!st) {
            char name[40];
            snprintf(name, sizeof name, "%s-part-%05d", XTTS_LOCK_NAME, w->part);
            char what[64];
            snprintf(what, sizeof what, "part %d is already being built", w->part);
            st = xtts_lock(dir, name, 1, &w->part_lock_fd, what, err);
        }
    }
    return st;
}

/* A directory that does not exist yet appears already locked, so that no reader ever sees it
 * without its lock (and takes it for an empty or broken cache): it is made under a temporary
 * name beside it (DIR.xtts-new.PID), locked there, and renamed into place, never over a
 * directory that appeared meanwhile. 1 when done so; 0 when DIR exists (or appeared, or the
 * file system cannot rename without replacing) and is to be locked where it is. */
static int writer_lock_new_dir(xtts_cache_writer *w, xtts_status *st, xtts_error *err) {
    struct stat sb;
    if (stat(w->dir, &sb) == 0 || errno != ENOENT) return 0;
    char dir[4096], tmp[4200], lock[4300];
    snprintf(dir, sizeof dir, "%s", w->dir);
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = '\0';
    snprintf(tmp, sizeof tmp, "%s.xtts-new.%ld", dir, (long)getpid());
    if (mkdir(tmp, 0755) != 0) return 0;
    *st = writer_lock_in(w, tmp, err);
    if (!*st && renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == 0) return 1;
    xtts_unlock(w->part_lock_fd);
    xtts_unlock(w->lock_fd);
    w->lock_fd = w->part_lock_fd = -1;
    DIR *d = opendir(tmp); /* it holds the lock files this call made, nothing else */
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && xtts_path_join(lock, sizeof lock, tmp, e->d_name) < sizeof lock)
            unlink(lock);
    if (d) closedir(d);
    rmdir(tmp);
    return 0;
}

xtts_status xtts_writer_lock(xtts_cache_writer *w, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!writer_lock_new_dir(w, &st, err)) st = writer_lock_in(w, w->dir, err);
    if (st) return st;
    /* this process is now the one writer of its manifest: drop what a killed one left */
    xtts_remove_manifest_temps(w->dir, w->part);
    return XTTS_OK;
}

/* Why the directory cannot be resumed as it is, into why (left "" when it can): what it holds
 * besides this build's own shards, and a manifest of another configuration. */
static void foreign_contents(const xtts_cache_writer *w, const xtts_dir_listing *l, char *why, size_t why_cap) {
    char path[4096];
    if (w->part < 0) {
        for (size_t i = 0; i < l->n_shards; i++)
            if (l->shards[i].part >= 0) {
                why_add(why, why_cap, "it holds shards of a build in parts (shard-%05d-%05d)", l->shards[i].part,
                        l->shards[i].number);
                break;
            }
        if (l->n_parts) why_add(why, why_cap, "it holds partial manifests (manifest.part-%05d.json)", l->parts[0]);
    } else {
        for (size_t i = 0; i < l->n_shards; i++)
            if (l->shards[i].part < 0) {
                why_add(why, why_cap, "it holds shards of a whole build (shard-%05d)", l->shards[i].number);
                break;
            }
        for (size_t i = 0; i < l->n_parts; i++)
            if (l->parts[i] == w->part) {
                char name[40], h[65];
                xtts_manifest_name(name, w->part);
                xtts_path_join(path, sizeof path, w->dir, name);
                manifest_hash(path, h);
                if (strcmp(h, w->hash)) why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...", path, h[0] ? h : "(unreadable)", w->hash);
            }
    }
    if (l->n_base) /* a plain build would list only its own shards: the shared ones would be lost */
        why_add(why, why_cap, "it holds an updated cache sharing shards with an earlier one (base-NNNNN); update it "
                              "with --update");
    if (l->has_manifest) {
        char h[65];
        xtts_path_join(path, sizeof path, w->dir, "manifest.json");
        manifest_hash(path, h);
        if (strcmp(h, w->hash)) {
            char diff[400];
            config_differences(path, &w->cfg, diff, sizeof diff);
            why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...%s%s", path,
                    h[0] ? h : "(unreadable)", w->hash, diff[0] ? ": " : "", diff);
        }
    }
}

/* Resume the own shards when nothing stands against it; otherwise (or on request) replace
 * what the directory holds when forced, and refuse when not. */
static xtts_status resume_or_replace(xtts_cache_writer *w, const xtts_cache_writer_options *opt,
                                     const xtts_dir_listing *l, char *why, size_t why_cap, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!why[0]) {
        st = open_existing(w, l, why, why_cap, err);
        if (st == XTTS_ECORRUPT && opt->force) { /* --force replaces a damaged build too */
            why_add(why, why_cap, "%s", err ? err->msg : "damaged shards");
            st = XTTS_OK;
        } else if (st == XTTS_ECORRUPT && err && strlen(err->msg) < sizeof err->msg - 40) {
            strcat(err->msg, "; use --force to rebuild the cache");
        }
    }
    if (!st && opt->replace && (l->n_shards || l->has_manifest || l->n_parts))
        why_add(why, why_cap, "replaced on request");
    if (st || !why[0]) return st;
    if (!opt->force && !opt->replace)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: holds a cache built with another configuration or layout (%s); use --force to replace it",
                              w->dir, why);
    reset_loaded(w);
    return remove_old(w, l, err);
}

/* What the directory holds decides: resume, start empty, replace, or refuse. */
xtts_status xtts_writer_take_dir(xtts_cache_writer *w, const xtts_cache_writer_options *opt, xtts_error *err) {
    xtts_dir_listing l;
    xtts_status st = xtts_dir_list(w->dir, &l, err);
    if (st) return st;
    char why[1024] = "";
    foreign_contents(w, &l, why, sizeof why);
    st = resume_or_replace(w, opt, &l, why, sizeof why, err);
    xtts_dir_listing_free(&l);
    return st;
}
