/* resume.c — a build's writer opened where a previous run stopped, and the checks that the
 * stored build is this stream's (resume.h). */
#include "prep/melcache/resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the build in w measures quality metrics: a new one, or one that stored them from its
 * first input on (QUALITY_KEY); 0 for a build begun before the metrics. */
static int build_has_metrics(xtts_cache_writer *w) {
    return xtts_cache_writer_next_input(w) == 0 || xtts_melcache_state_has(w, XTTS_MELCACHE_QUALITY_KEY);
}

/* 0 when the records stored so far may carry speaker ids of another numbering: a build begun
 * before SPEAKERS_KEY, of a stream with more than one speaker (with one, every id is 0). */
static int speakers_agree(const xtts_melcache_build *b, const xtts_melcache_inputs *in) {
    return b->start <= in->lo || in->n_speakers <= 1 || xtts_melcache_state_has(b->w, XTTS_MELCACHE_SPEAKERS_KEY);
}

/* What opening a build works with. */
typedef struct {
    xtts_melcache_build *b;
    const xtts_melcache_options *o;
    const char *dir;      /* where the build is written: --out, or an update's stage */
    xtts_melcache_inputs *in;
    xtts_melcache_buffers *bs;
    xtts_melcache_result *res;
} resume_ctx;

/* The stored build's identity: the digest of the content keys of the inputs it consumed
 * (from the part's first input) and the last one's id. The stream is left at the first
 * input not stored, its running digest over the keys before it. */
static xtts_status inputs_check(resume_ctx *r, xtts_error *err) {
    xtts_melcache_inputs *in = r->in;
    xtts_melcache_build *b = r->b;
    const char *dir = r->dir;
    xtts_status st = xtts_melcache_inputs_seek(in, in->lo, err);
    xtts_melcache_inputs_clear_keys(in);
    if (st || b->start <= in->lo) return st;
    void *data = NULL;
    size_t len = 0;
    xtts_error e2;
    st = xtts_cache_writer_get_state(b->w, XTTS_MELCACHE_INPUTS_KEY, &data, &len, &e2);
    if (st == XTTS_ENOTFOUND) return xtts_melcache_inputs_seek(in, b->start, err); /* a build from before the keys: unchecked */
    if (st) { if (err) *err = e2; return st; }
    if (len < 32) { free(data); return xtts_error_set(err, XTTS_ECORRUPT, "%s: saved input digest is damaged", dir); }
    char last[512], got[512] = "";
    snprintf(last, sizeof last, "%.*s", (int)(len - 32 > 400 ? 400 : len - 32), (const char *)data + 32);
    if (b->start > in->hi) {
        free(data);
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of %llu records (the last '%s'), %s has only %llu; "
                              "use --force to rebuild from this stream", dir, (unsigned long long)(b->start - in->lo), last,
                              in->name, (unsigned long long)(in->hi - in->lo));
    }
    uint64_t next = in->lo;
    while (!st && next < b->start) {
        size_t m;
        st = xtts_melcache_buffer_fill(in, r->bs->slots, r->bs->chunk, &next, b->start, &m, err);
        if (!st && m) {
            xtts_melcache_buffer_keys(r->bs, in, r->bs->slots, m);
            snprintf(got, sizeof got, "%.400s", r->bs->slots[m - 1].rec.id);
        }
    }
    uint8_t d[32];
    xtts_melcache_inputs_digest(in, d);
    int same = !st && !memcmp(d, data, 32);
    free(data);
    if (st || same) return st;
    if (strcmp(got, last))
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of another input: its record %llu is '%s', %s's is '%s'; "
                              "use --force to rebuild from this stream", dir, (unsigned long long)b->start, last,
                              in->name, got);
    return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of another input: the first %llu records of %s differ from "
                          "those stored (ids, speakers, languages, splits, token ids, texts or audio contents); use --force "
                          "to rebuild from this stream", dir, (unsigned long long)(b->start - in->lo), in->name);
}

/* With --force: the stored build removed, a new one begun from this stream. */
static xtts_status run_replace(resume_ctx *r, xtts_cache_writer_options *wo, xtts_error *err) {
    xtts_melcache_build *b = r->b;
    xtts_cache_writer_abort(b->w);
    b->w = NULL;
    wo->replace = 1;
    xtts_status st = xtts_cache_writer_open(wo, &r->o->cfg, &b->w, err);
    if (!st) st = xtts_melcache_stats_load(b->w, b->stats, r->o->cfg.mel.n_mels, err);
    b->start = b->w ? xtts_cache_writer_next_input(b->w) : 0;
    r->res->resumed_from = b->start;
    return st;
}

xtts_status xtts_melcache_resume_open(xtts_melcache_build *b, const xtts_melcache_options *o, const char *out_dir,
                                      int force, xtts_melcache_inputs *in, xtts_melcache_buffers *bs,
                                      xtts_melcache_result *res, xtts_error *err) {
    resume_ctx ctx = {b, o, out_dir, in, bs, res}, *r = &ctx;
    xtts_cache_writer_options wo = {
        .dir = out_dir, .part = o->part, .n_parts = o->n_parts, .force = force, .part_first = in->lo,
        .part_end = in->hi, .shard_bytes = o->shard_bytes, .commit_every = o->commit_every,
    };
    xtts_status st = xtts_cache_writer_open(&wo, &o->cfg, &b->w, err);
    if (st) return st;
    if (!(b->stats = calloc(1, sizeof *b->stats))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    st = xtts_melcache_stats_load(b->w, b->stats, o->cfg.mel.n_mels, err);
    if (st) return st;
    b->start = xtts_cache_writer_next_input(b->w);
    res->resumed_from = b->start;
    st = inputs_check(r, err);
    if (st == XTTS_EMISMATCH && force) { /* --force: rebuild from this stream */
        st = run_replace(r, &wo, err);
        if (!st) st = inputs_check(r, err);
    }
    if (!st && !speakers_agree(b, in)) {
        if (force) {
            st = run_replace(r, &wo, err);
            if (!st) st = inputs_check(r, err);
        } else {
            st = xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build begun by an earlier xtts-melcache, which "
                                "numbered speakers by first appearance; use --force to rebuild it", out_dir);
        }
    }
    /* a build begun before the quality metrics: --force rebuilds it with them; a plain resume
     * goes on without them, so that no cache has them for some records only */
    if (!st && !build_has_metrics(b->w) && force) {
        st = run_replace(r, &wo, err);
        if (!st) st = inputs_check(r, err);
    }
    if (st) return st;
    b->measure = build_has_metrics(b->w);
    if (!b->measure)
        fprintf(stderr, "xtts-melcache: %s: the records stored before this run carry no quality metrics, so the "
                "records this run adds carry none either; run it again with --force to rebuild it with them\n", out_dir);
    /* A part takes one contiguous block of the input, so the parts' records, joined in part
     * order, are in input order: a cache has the same records at the same indexes however
     * it was built (formats/cache.md, "Builds in parts"). */
    res->selected = in->hi - in->lo;
    return XTTS_OK;
}

