/* tokenize_run.c — xtts-tokenize's pipeline (see tokenize_run.h).
 *
 * Records come from the metadata reader (prep/dataset/metadata.h), one small block each. Then, in chunks, records are
 * normalized, tokenized and formatted in parallel (OpenMP), and written in input order by
 * one thread, so the output is byte-identical whatever the thread count. With --lang auto a
 * first parallel pass scores every record's language (the results are kept, up to
 * LANGID_KEPT_BYTES), then a sequential pass combines the scores with the dataset's and the
 * speaker's language distribution (prep/text/langid/langid.h).
 */
#include "prep/tokenize/tokenize_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/tokens.h"
#include "prep/text/langid/langid.h"
#include "prep/dataset/metadata.h"
#include "prep/text/normalize/normalize.h"
#include "prep/text/normalize/xtts_text.h"

#define CHUNK_RECORDS 8192
#define LANGID_KEPT_BYTES ((size_t)64 << 20) /* language id results kept between passes: 650,000 records or more */

typedef struct {
    size_t line;            /* 1-based line number in the input */
    const char *source;     /* the file it came from */
    char *id, *speaker, *lang_col, *audio, *text, *split;
    char *store;            /* malloc'd block holding id, speaker, lang_col, text, split */
    char *audio_abs;        /* malloc'd absolute audio path */
    const char *reject;     /* static reason, or NULL */
    char *reject_msg;       /* malloc'd reason, or NULL */
    int lang;
    int lang_sure;
    size_t chars;           /* code points of the text, when over_limit */
    int over_limit;         /* XTTS's character limit of its language when the text is longer */
    int long_rejected;      /* rejected by --max-chars */
    int excluded;           /* left out by --exclude: neither written nor a reject */
    char *line_out;         /* formatted token stream line */
    size_t line_len;
} record;

void xtts_tokenize_options_defaults(xtts_tokenize_options *o) {
    memset(o, 0, sizeof *o);
    o->input = "-";
    o->format = XTTS_META_AUTO;
    o->lang = -1;
    o->max_tokens = 512;
    o->shard_n = 1;
    o->expand = 1;
    o->normalize = -1;
    o->lowercase = -1;
}

static int has_control(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) return 1;
        if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) return 1; /* C1 controls */
    }
    return 0;
}

/* ---- duplicate ids ------------------------------------------------------------------------------ */

typedef struct { const char **keys; size_t cap; } id_set;

static int id_set_add(id_set *s, const char *id) { /* 1 added, 0 present, -1 oom */
    size_t n = strlen(id);
    size_t i = xtts_fnv1a64(XTTS_FNV64_INIT, id, n) & (s->cap - 1);
    while (s->keys[i]) {
        if (!strcmp(s->keys[i], id)) return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->keys[i] = id;
    return 1;
}

/* ---- id lists and sources ------------------------------------------------------------------------- */

typedef struct { char **v; size_t n, cap; } strlist_t;

static int strlist_add(strlist_t *l, const char *s) {
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, c * sizeof *nv);
        if (!nv) return -1;
        l->v = nv;
        l->cap = c;
    }
    if (!(l->v[l->n] = strdup(s))) return -1;
    l->n++;
    return 0;
}

/* A file of ids, one a line (blank lines and lines starting with '#' skipped), into a set
 * whose keys point into *buf. Bounded: 1 GiB. */
static xtts_status read_id_list(const char *path, char **buf, id_set *set, xtts_error *err) {
    if (!path) return XTTS_OK;
    size_t len;
    xtts_status st = xtts_read_file(path, (size_t)1 << 30, buf, &len, err);
    if (st) return st;
    if (strlen(*buf) != len) return xtts_error_set(err, XTTS_EINPUT, "%s: NUL byte in the id list", path);
    size_t n = 1;
    for (size_t i = 0; i < len; i++) n += (*buf)[i] == '\n';
    set->cap = 16;
    while (set->cap < n * 2 + 2) set->cap *= 2;
    set->keys = calloc(set->cap, sizeof *set->keys);
    if (!set->keys) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    char *p = *buf;
    while (p && *p) {
        char *line = p;
        char *nl = strchr(p, '\n');
        if (nl) { *nl = 0; p = nl + 1; } else p = NULL;
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\r' || line[l - 1] == ' ' || line[l - 1] == '\t')) line[--l] = 0;
        if (!l || line[0] == '#') continue;
        id_set_add(set, line);
    }
    return XTTS_OK;
}

static int id_set_has(const id_set *s, const char *id) {
    if (!s->keys) return 0;
    size_t i = xtts_fnv1a64(XTTS_FNV64_INIT, id, strlen(id)) & (s->cap - 1);
    while (s->keys[i]) {
        if (!strcmp(s->keys[i], id)) return 1;
        i = (i + 1) & (s->cap - 1);
    }
    return 0;
}

/* The language id for a tag from the input or --lang: the tag itself when the tokenizer
 * serves it, else its primary subtag ("sv-SE" -> "sv") when that is served. -1 when the tag
 * is not a language code, -2 when the tokenizer serves neither. */
static int resolve_lang(const xtts_tokenizer *tok, const char *tag) {
    char b[16];
    if (strlen(tag) >= sizeof b) return -1;
    strcpy(b, tag);
    if (!xtts_lang_tag_normalize(b)) return -1;
    int id = xtts_lang_intern(b);
    if (id < 0) return -1;
    if (xtts_tokenizer_has_lang(tok, id)) return id;
    char *dash = strchr(b, '-');
    if (dash && strcmp(b, "zh-cn")) {
        *dash = 0;
        int p = xtts_lang_intern(b);
        if (p >= 0 && xtts_tokenizer_has_lang(tok, p)) return p;
    }
    return -2;
}

/* ---- the run ------------------------------------------------------------------------------------ */

static void reject(record *r, const char *why) { if (!r->reject && !r->reject_msg) r->reject = why; }

/* A record named in a message: "FILE:LINE: record N (ID)" (N counts the input's records from
 * 1, as every program does; docs/design.md, "Naming records"). */
static void print_record_name(const xtts_tokenize_options *o, const record *r, size_t index) {
    const char *name = r->source ? r->source : o->input ? o->input : "-";
    fprintf(stderr, "xtts-tokenize: %s:%zu: record %zu", name, r->line, index + 1);
    if (r->id && *r->id) fprintf(stderr, " (%s)", r->id);
}

static void report_reject(const xtts_tokenize_options *o, FILE *rej, const record *r, size_t index) {
    const char *why = r->reject_msg ? r->reject_msg : r->reject;
    char idbuf[64];
    const char *id = r->id && *r->id ? r->id : NULL;
    if (!id) { snprintf(idbuf, sizeof idbuf, "line:%zu", r->line); id = idbuf; }
    if (!o->quiet) {
        print_record_name(o, r, index);
        fprintf(stderr, ": rejected: %s\n", why);
    }
    if (rej) {
        for (const char *p = id; *p; p++) fputc(*p == '\t' || *p == '\n' ? ' ' : *p, rej);
        fprintf(rej, "\t%s\n", why);
    }
}

/* ---- ids seen: 64-bit hashes (bounded memory per record), exact where two collide ---------------- */

/* Every id's hash, to find the hashes that occur twice in bounded memory: hashes collect in a
 * buffer of HASH_RUN entries; a full buffer is sorted and written to a temporary file (a
 * run); at the end the runs are merged and every hash met twice goes into a set. Memory:
 * the buffer and a small read buffer per run, whatever the number of records. */
#define HASH_RUN ((size_t)1 << 18)   /* 2 MiB of hashes */
#define HASH_RUN_READ 1024           /* hashes read at once from each run when merging */

typedef struct {
    uint64_t *buf;
    size_t n;
    FILE **runs;
    size_t n_runs;
} hash_runs;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void hash_runs_free(hash_runs *h) {
    free(h->buf);
    for (size_t i = 0; i < h->n_runs; i++) fclose(h->runs[i]);
    free(h->runs);
    memset(h, 0, sizeof *h);
}

static xtts_status hash_runs_flush(hash_runs *h, xtts_error *err) {
    qsort(h->buf, h->n, sizeof *h->buf, cmp_u64);
    FILE **nr = realloc(h->runs, (h->n_runs + 1) * sizeof *nr);
    if (!nr) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    h->runs = nr;
    FILE *f = tmpfile();
    if (!f) return xtts_error_set(err, XTTS_EIO, "cannot create a temporary file for the ids: %s", strerror(errno));
    if (fwrite(h->buf, sizeof *h->buf, h->n, f) != h->n || fflush(f) || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return xtts_error_set(err, XTTS_EIO, "cannot write the ids' temporary file (disk full?)");
    }
    h->runs[h->n_runs++] = f;
    h->n = 0;
    return XTTS_OK;
}

static xtts_status hash_runs_add(hash_runs *h, uint64_t v, xtts_error *err) {
    if (!h->buf) { /* whole from the start (touched), so the memory held is the same at any size */
        if (!(h->buf = malloc(HASH_RUN * sizeof *h->buf))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        memset(h->buf, 0, HASH_RUN * sizeof *h->buf);
    }
    if (h->n == HASH_RUN) {
        xtts_status st = hash_runs_flush(h, err);
        if (st) return st;
    }
    h->buf[h->n++] = v;
    return XTTS_OK;
}

/* The hashes that occur more than once, into dups. */
static xtts_status hash_runs_dups(hash_runs *h, xtts_hash_set *dups, xtts_error *err) {
    if (!h->n_runs) { /* all in memory (none at all when no record has an id) */
        if (h->n) qsort(h->buf, h->n, sizeof *h->buf, cmp_u64);
        for (size_t i = 1; i < h->n; i++)
            if (h->buf[i] == h->buf[i - 1] && xtts_hash_set_add(dups, h->buf[i]) < 0)
                return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        return XTTS_OK;
    }
    xtts_status st = h->n ? hash_runs_flush(h, err) : XTTS_OK;
    if (st) return st;
    size_t R = h->n_runs;
    uint64_t *rb = malloc(R * HASH_RUN_READ * sizeof *rb);
    size_t *pos = calloc(R, sizeof *pos), *len = calloc(R, sizeof *len);
    if (!rb || !pos || !len) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto out; }
    for (size_t r = 0; r < R; r++) len[r] = fread(rb + r * HASH_RUN_READ, sizeof *rb, HASH_RUN_READ, h->runs[r]);
    int have_prev = 0;
    uint64_t prev = 0;
    for (;;) {
        size_t m = R;
        for (size_t r = 0; r < R; r++)
            if (pos[r] < len[r] && (m == R || rb[r * HASH_RUN_READ + pos[r]] < rb[m * HASH_RUN_READ + pos[m]])) m = r;
        if (m == R) break;
        uint64_t v = rb[m * HASH_RUN_READ + pos[m]];
        if (have_prev && v == prev && xtts_hash_set_add(dups, v) < 0) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto out; }
        prev = v;
        have_prev = 1;
        if (++pos[m] == len[m]) {
            len[m] = fread(rb + m * HASH_RUN_READ, sizeof *rb, HASH_RUN_READ, h->runs[m]);
            pos[m] = 0;
            if (!len[m] && ferror(h->runs[m])) { st = xtts_error_set(err, XTTS_EIO, "cannot read the ids' temporary file"); goto out; }
        }
    }
out:
    free(rb);
    free(pos);
    free(len);
    return st;
}

/* The exact ids of the records whose hash was seen twice in the first pass (real duplicates,
 * or, very rarely, two ids with one hash): the second pass keeps the first of each id. */
typedef struct { char **v; size_t n, cap; id_set set; } id_store;

static int id_store_add(id_store *d, const char *id) { /* 1 added, 0 present, -1 oom */
    if (id_set_has(&d->set, id)) return 0;
    if ((d->n + 1) * 2 > d->set.cap) {
        size_t nc = d->set.cap ? d->set.cap * 2 : 64;
        const char **nk = calloc(nc, sizeof *nk);
        if (!nk) return -1;
        free(d->set.keys);
        d->set.keys = nk;
        d->set.cap = nc;
        for (size_t i = 0; i < d->n; i++) id_set_add(&d->set, d->v[i]);
    }
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 16;
        char **nv = realloc(d->v, nc * sizeof *nv);
        if (!nv) return -1;
        d->v = nv;
        d->cap = nc;
    }
    if (!(d->v[d->n] = strdup(id))) return -1;
    id_set_add(&d->set, d->v[d->n++]);
    return 1;
}

static void id_store_free(id_store *d) {
    for (size_t i = 0; i < d->n; i++) free(d->v[i]);
    free(d->v);
    free(d->set.keys);
}

/* ---- the run ---------------------------------------------------------------------------------------- */

static void record_free(record *r) {
    free(r->audio_abs);
    free(r->reject_msg);
    free(r->line_out);
    free(r->store);
    memset(r, 0, sizeof *r);
}

/* One metadata entry into r, with the checks that need nothing but the entry. */
static xtts_status record_fill(record *r, const xtts_meta_entry *e, strlist_t *sources, xtts_error *err) {
    memset(r, 0, sizeof *r);
    r->line = e->line;
    r->lang = -1;
    if (!sources->n || strcmp(sources->v[sources->n - 1], e->source)) {
        if (strlist_add(sources, e->source)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    r->source = sources->v[sources->n - 1];
    /* one block holds the record's strings: id speaker lang text split */
    const char *fs[5] = {e->id, e->speaker, e->lang, e->text, e->split};
    size_t fl[5], total = 0;
    for (int k = 0; k < 5; k++) total += (fl[k] = strlen(fs[k])) + 1;
    r->store = malloc(total);
    r->audio_abs = strdup(e->audio);
    if (!r->store || !r->audio_abs) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    char *q = r->store, *f[5];
    for (int k = 0; k < 5; k++) { f[k] = q; memcpy(q, fs[k], fl[k] + 1); q += fl[k] + 1; }
    r->id = f[0];
    r->speaker = f[1];
    r->lang_col = f[2];
    r->text = f[3];
    r->split = f[4];
    int utf8 = 1;
    for (int k = 0; k < 5; k++) utf8 &= xtts_utf8_valid(f[k], fl[k]);
    utf8 &= xtts_utf8_valid(r->audio_abs, strlen(r->audio_abs));
    if (!xtts_utf8_valid(r->id, fl[0])) r->id = "";
    if (e->reject) {
        r->reject_msg = strdup(e->reject);
        if (!r->reject_msg) reject(r, "malformed record");
        return XTTS_OK;
    }
    if (!utf8) reject(r, "invalid UTF-8");
    else if (!*r->audio_abs) reject(r, "missing audio path");
    else if (!*r->id) reject(r, "missing id");
    else if (has_control(r->text) || has_control(r->id) || has_control(r->speaker)) reject(r, "control character");
    else if (strlen(r->id) > XTTS_ID_MAX_BYTES) reject(r, "id longer than " XTTS_ID_MAX_BYTES_STR " bytes");
    return XTTS_OK;
}

/* The state both passes share. */
typedef struct {
    const xtts_tokenize_options *o;
    xtts_meta_options mo;
    xtts_meta_reader *mr;
    strlist_t sources;
    record *recs;           /* one chunk */
    size_t n, base;         /* records in the chunk; index of its first */
    hash_runs ids;          /* every id's hash (first pass) */
    xtts_hash_set dup_hashes;    /* the hashes met twice */
    id_store dups;          /* later passes: exact ids behind dup_hashes */
    id_set val_ids, test_ids;
    char *val_buf, *test_buf;
    void *spill;            /* input read once: its temporary copy, mapped (spill_len bytes) */
    size_t spill_len;
    int forced_lang, lang_column, has_split, threads;
    xtts_langid_prior prior;
    xtts_langid_result *res;
    int *detect;            /* per chunk record: 1 when its language is detected, 2 when res[k] is already known */
    xtts_langid_store kept; /* the results of the prior's pass */
    FILE *rej;              /* --rejects */
    char extra_langs[224];  /* languages beyond XTTS's 17 the stream names */
    xtts_normalize_options nopts;
} run_t;

static xtts_status pass_open(run_t *R, xtts_error *err) {
    xtts_meta_close(R->mr);
    R->mr = NULL;
    for (size_t i = 0; i < R->sources.n; i++) free(R->sources.v[i]);
    R->sources.n = 0;
    R->base = 0;
    R->n = 0;
    xtts_status st = xtts_meta_open(&R->mo, &R->mr, err);
    if (!st) R->lang_column = xtts_meta_reader_has_lang(R->mr);
    /* the reader's notices (the format it recognised, the files read, speakers without
     * transcripts) are the input's, not the pass's: the first of the three passes says them */
    R->mo.quiet = 1;
    return st;
}

/* The next chunk of records (0 of them at the end). */
static xtts_status read_chunk(run_t *R, xtts_error *err) {
    for (size_t i = 0; i < R->n; i++) record_free(&R->recs[i]);
    if (R->n) malloc_trim(0); /* the chunk's strings go back: no slow growth from fragments */
    R->base += R->n;
    R->n = 0;
    xtts_meta_entry e;
    int mrc = 0;
    while (R->n < CHUNK_RECORDS && (mrc = xtts_meta_next(R->mr, &e, err)) == 1) {
        record *r = &R->recs[R->n++];
        xtts_status st = record_fill(r, &e, &R->sources, err);
        if (st) return st;
        if (!r->reject && !r->reject_msg && xtts_exclude_has(R->o->exclude, r->id)) {
            r->excluded = 1;
            reject(r, "excluded"); /* every later step skips it as it skips a reject */
        }
    }
    if (mrc < 0) return err ? err->code : XTTS_EINPUT;
    return XTTS_OK;
}

static int in_shard(const run_t *R, size_t i) { return i % (size_t)R->o->shard_n == (size_t)R->o->shard_k; }

/* Splits from --val-list / --test-list over the record's own field. */
static void apply_lists(run_t *R, record *r) {
    if (r->reject || r->reject_msg || !r->id) return;
    int v = id_set_has(&R->val_ids, r->id), t = id_set_has(&R->test_ids, r->id);
    if (v && t) { reject(r, "id in both --val-list and --test-list"); return; }
    if (v) r->split = "val";
    else if (t) r->split = "test";
    if (r->split && *r->split) R->has_split = 1;
}

/* A record's language when it is forced or in the lang column; R->detect[k] = 1 when it
 * must be detected. Counts the shard's records. */
static void resolve_record_lang(run_t *R, size_t k, xtts_tokenize_stats *stats) {
    record *r = &R->recs[k];
    R->detect[k] = 0;
    if (!in_shard(R, R->base + k)) return;
    stats->selected++;
    if (r->reject || r->reject_msg) return;
    if (R->forced_lang >= 0) { r->lang = R->forced_lang; return; }
    if (r->lang_col && *r->lang_col) {
        int l = resolve_lang(R->o->tok, r->lang_col);
        if (l == -1) { reject(r, "unknown language in the lang column (not a BCP-47/ISO 639 language code)"); return; }
        if (l == -2) {
            char served[200];
            xtts_tokenizer_lang_list(R->o->tok, served, sizeof served);
            r->reject_msg = malloc(320);
            if (r->reject_msg) snprintf(r->reject_msg, 320, "language '%.15s' in the lang column is not served by the tokenizer (%s)", r->lang_col, served);
            else reject(r, "language not served by the tokenizer");
            return;
        }
        r->lang = l;
        return;
    }
    R->detect[k] = 1;
}

/* Detect the chunk's languages to be detected (parallel); quick: xtts_langid_detect_quick. */
static void detect_chunk(run_t *R, int quick) {
    #pragma omp parallel for schedule(dynamic, 64) num_threads(R->threads)
    for (size_t k = 0; k < R->n; k++) {
        if (R->detect[k] != 1) continue;
        record *r = &R->recs[k];
        char *basic = NULL;
        xtts_error e;
        memset(&R->res[k], 0, sizeof R->res[k]);
        R->res[k].lang = -1;
        if (xtts_normalize_basic(r->text, strlen(r->text), &basic, &e)) continue;
        if (quick) xtts_langid_detect_quick(basic, strlen(basic), &R->res[k]);
        else xtts_langid_detect(basic, strlen(basic), &R->res[k]);
        free(basic);
    }
}

/* Languages beyond XTTS's 17 that the stream will name (over all records, so that every
 * --part writes the same table). */
static xtts_status note_extra_lang(run_t *R, const record *r, char *extra_langs, size_t cap, xtts_error *err) {
    if (R->forced_lang >= 0 || r->reject || r->reject_msg || !*r->lang_col) return XTTS_OK;
    int l = resolve_lang(R->o->tok, r->lang_col);
    if (l < XTTS_N_LANGS) return XTTS_OK;
    const char *code = xtts_lang_code(l);
    size_t cl = strlen(code), el = strlen(extra_langs);
    for (const char *q = extra_langs; *q;) {
        const char *c = strchr(q, ',');
        size_t n = c ? (size_t)(c - q) : strlen(q);
        if (n == cl && !strncmp(q, code, n)) return XTTS_OK;
        q += n + (c ? 1 : 0);
    }
    if (el + cl + 2 > cap)
        return xtts_error_set(err, XTTS_EINPUT, "%s: more languages beyond XTTS's 17 than a token stream header holds (%s ...)", R->o->input, extra_langs);
    if (el) strcat(extra_langs, ",");
    strcat(extra_langs, code);
    return XTTS_OK;
}

/* Duplicate ids: the first occurrence wins. Only ids whose hash occurs twice are kept,
 * whole, to tell a real duplicate from two ids sharing a hash. */
static xtts_status reject_duplicates(run_t *R, xtts_error *err) {
    for (size_t k = 0; k < R->n; k++) {
        record *r = &R->recs[k];
        if (r->reject || r->reject_msg || !r->id || !xtts_hash_set_has(&R->dup_hashes, xtts_id_hash(r->id, strlen(r->id)))) continue;
        int a = id_store_add(&R->dups, r->id);
        if (a < 0) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (a == 0) reject(r, "duplicate id");
    }
    return XTTS_OK;
}

/* An unlinked temporary file in $TMPDIR (or /tmp), -1 with errno set when none can be made. */
static int spill_file(void) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/xtts-tokenize.XXXXXX", dir) >= (int)sizeof path) { errno = ENAMETOOLONG; return -1; }
    fd = mkstemp(path);
    if (fd >= 0) unlink(path);
    return fd;
}

/* Copies what gz yields into the file tfd, up to the metadata size limit; a NUL byte stops it
 * at once with an error naming its line and offset (text never holds one: the input is binary,
 * e.g. /dev/urandom, and is not read on). *len: bytes copied. */
static xtts_status spill_copy(gzFile gz, int tfd, const char *name, size_t *len, xtts_error *err) {
    enum { BLOCK = 1 << 16 };
    char *blk = malloc(BLOCK);
    if (!blk) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    size_t lines = 0;
    for (;;) {
        int got = gzread(gz, blk, BLOCK);
        if (got < 0) {
            int zerr;
            const char *why = gzerror(gz, &zerr);
            st = xtts_error_set(err, zerr == Z_ERRNO ? XTTS_EIO : XTTS_EINPUT, "%s: read error after %zu bytes: %s", name,
                                *len, zerr == Z_ERRNO ? strerror(errno) : why);
            break;
        }
        if (got == 0) break;
        if (*len + (size_t)got > (size_t)XTTS_META_MAX_BYTES) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: larger than %zu bytes (metadata files are read up to that size)",
                                name, (size_t)XTTS_META_MAX_BYTES);
            break;
        }
        for (size_t off = 0; off < (size_t)got && !st;) {
            ssize_t w = write(tfd, blk + off, (size_t)got - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) st = xtts_error_set(err, XTTS_EIO, "%s: cannot keep a copy in the temporary folder ($TMPDIR): %s",
                                            name, strerror(w < 0 ? errno : ENOSPC));
            else off += (size_t)w;
        }
        if (st) break;
        const char *nul = memchr(blk, 0, (size_t)got);
        for (const char *q = blk; (q = memchr(q, '\n', (size_t)((nul ? nul : blk + got) - q))); q++) lines++;
        if (nul) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: binary data (a NUL byte at offset %zu), not a metadata text",
                                name, lines + 1, *len + (size_t)(nul - blk));
            break;
        }
        *len += (size_t)got;
    }
    free(blk);
    return st;
}

/* The metadata is read in three passes (and its first line twice when the format is
 * sniffed), so an input that cannot be read twice — standard input, a FIFO, a pipe given as
 * /dev/fd/N or <(...), a character device — is read once (gzip or plain, as a file would be),
 * up to the metadata size limit, into an unlinked temporary file that the passes read mapped:
 * memory stays bounded whatever the input's size. fd is closed. name is used in messages. */
static xtts_status slurp_input(run_t *R, int fd, const char *name, xtts_error *err) {
    gzFile gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
    if (!gz) {
        if (fd >= 0) close(fd);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot read: %s", name, strerror(errno ? errno : EBADF));
    }
    int tfd = spill_file();
    if (tfd < 0) {
        int e = errno;
        gzclose(gz);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot make a temporary file to read it once ($TMPDIR): %s", name, strerror(e));
    }
    size_t len = 0;
    xtts_status st = spill_copy(gz, tfd, name, &len, err);
    gzclose(gz);
    void *map = NULL;
    if (!st && len && (map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, tfd, 0)) == MAP_FAILED) {
        map = NULL;
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot map its temporary copy: %s", name, strerror(errno));
    }
    close(tfd);
    if (st) return st;
    R->spill = map;
    R->spill_len = len;
    R->mo.data = map ? (const char *)map : "";
    R->mo.len = len;
    return XTTS_OK;
}

/* Standard input, or a path that is neither a regular file nor a directory, read once
 * (slurp_input); regular files and dataset folders are opened by the reader, pass by pass.
 * A missing or unreadable path is left to the reader, whose message names it. */
static xtts_status spool_if_once_only(run_t *R, const char *path, xtts_error *err) {
    if (!strcmp(path, "-")) return slurp_input(R, dup(STDIN_FILENO), "-", err);
    /* opened once, and that descriptor is the one read: a FIFO's writer is met only once */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return XTTS_OK;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) return slurp_input(R, fd, path, err);
    close(fd);
    return XTTS_OK;
}

/* Read the id lists, open the metadata (standard input read once into memory), resolve a
 * forced language. */
static xtts_status run_setup(run_t *R, xtts_error *err) {
    const xtts_tokenize_options *o = R->o;
    R->threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    xtts_langid_prior_init(&R->prior);
    xtts_langid_store_init(&R->kept, LANGID_KEPT_BYTES);
    R->recs = calloc(CHUNK_RECORDS, sizeof *R->recs);
    R->res = calloc(CHUNK_RECORDS, sizeof *R->res);
    R->detect = calloc(CHUNK_RECORDS, sizeof *R->detect);
    if (!R->recs || !R->res || !R->detect) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (o->rejects_path) {
        R->rej = fopen(o->rejects_path, "w");
        if (!R->rej) return xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", o->rejects_path, strerror(errno));
    }
    xtts_status st = read_id_list(o->val_list, &R->val_buf, &R->val_ids, err);
    if (!st) st = read_id_list(o->test_list, &R->test_buf, &R->test_ids, err);
    if (st) return st;
    xtts_meta_options_defaults(&R->mo);
    R->mo.path = o->input;
    R->mo.data = o->input_data;
    R->mo.len = o->input_len;
    R->mo.format = o->format;
    R->mo.audio_dir = o->audio_dir;
    R->mo.original_text = o->original_text;
    if (o->vctk_mic) R->mo.vctk_mic = o->vctk_mic;
    R->mo.text_column = o->text_column;
    R->mo.quiet = o->quiet;
    if (!o->input_data && (st = spool_if_once_only(R, o->input ? o->input : "-", err))) return st;
    R->forced_lang = o->lang;
    if (o->lang_tag) {
        R->forced_lang = resolve_lang(o->tok, o->lang_tag);
        if (R->forced_lang == -1)
            return xtts_error_set(err, XTTS_EUSAGE, "--lang %s is not a BCP-47/ISO 639 language code (or auto)", o->lang_tag);
        if (R->forced_lang == -2) {
            char served[200];
            xtts_tokenizer_lang_list(o->tok, served, sizeof served);
            return xtts_error_set(err, XTTS_EUSAGE, "--lang %s is not served by the tokenizer (%s)", o->lang_tag, served);
        }
    }
    if (R->forced_lang >= XTTS_N_LANGS) snprintf(R->extra_langs, sizeof R->extra_langs, "%s", xtts_lang_code(R->forced_lang));
    return XTTS_OK;
}

/* The first pass: counts and the hash of every id; the hashes met twice come out of a
 * bounded-memory merge of sorted runs. */
static xtts_status pass_ids(run_t *R, xtts_tokenize_stats *stats, xtts_error *err) {
    xtts_status st = pass_open(R, err);
    while (!st && !(st = read_chunk(R, err)) && R->n) {
        stats->records += R->n;
        for (size_t k = 0; k < R->n && !st; k++) {
            record *r = &R->recs[k];
            if (!r->reject && !r->reject_msg && r->id) st = hash_runs_add(&R->ids, xtts_id_hash(r->id, strlen(r->id)), err);
        }
    }
    if (!st) st = hash_runs_dups(&R->ids, &R->dup_hashes, err);
    hash_runs_free(&R->ids);
    return st;
}

/* The second pass: duplicates (exactly), splits, extra languages, the language prior. */
static xtts_status pass_prior(run_t *R, xtts_error *err) {
    xtts_tokenize_stats scratch;
    memset(&scratch, 0, sizeof scratch);
    xtts_status st = pass_open(R, err);
    while (!st && !(st = read_chunk(R, err)) && R->n) {
        if ((st = reject_duplicates(R, err))) break;
        for (size_t k = 0; k < R->n; k++) apply_lists(R, &R->recs[k]);
        for (size_t k = 0; k < R->n && !st; k++)
            st = note_extra_lang(R, &R->recs[k], R->extra_langs, sizeof R->extra_langs, err);
        for (size_t k = 0; k < R->n; k++) resolve_record_lang(R, k, &scratch);
        detect_chunk(R, 1);
        for (size_t k = 0; k < R->n; k++)
            if (R->detect[k]) {
                xtts_langid_prior_add(&R->prior, &R->res[k], R->recs[k].speaker);
                xtts_langid_store_put(&R->kept, R->base + k, &R->res[k]);
            }
    }
    xtts_langid_prior_done(&R->prior);
    id_store_free(&R->dups);
    memset(&R->dups, 0, sizeof R->dups);
    return st;
}

/* The normalization (--normalize, else xtts for XTTS vocabularies, else spoken; Coqui's
 * cleaners lowercase by themselves) and the stream's header line. */
static xtts_status write_header(run_t *R, FILE *out, xtts_error *err) {
    const xtts_tokenize_options *o = R->o;
    xtts_norm_mode mode = o->normalize >= 0 ? (xtts_norm_mode)o->normalize
                        : xtts_tokenizer_is_xtts(o->tok) ? XTTS_NORM_XTTS : XTTS_NORM_SPOKEN;
    if (!o->expand) mode = XTTS_NORM_NONE;
    if (mode == XTTS_NORM_XTTS && o->unify) mode = XTTS_NORM_XTTS_UNIFIED;
    static const char *const mode_names[] = {"spoken-" XTTS_NORMALIZER_VERSION, "xtts-" XTTS_NORMALIZER_VERSION_XTTS,
                                             "none-" XTTS_NORMALIZER_VERSION,
                                             "xtts-unify-" XTTS_NORMALIZER_VERSION_XTTS};
    int lower = mode == XTTS_NORM_XTTS || mode == XTTS_NORM_XTTS_UNIFIED ? 1
              : o->lowercase >= 0 ? o->lowercase : xtts_tokenizer_wants_lowercase(o->tok);
    R->nopts = (xtts_normalize_options){lower, mode != XTTS_NORM_NONE, mode};
    xtts_tokens_header h;
    xtts_tokens_header_defaults(&h);
    h.max_tokens = o->max_tokens;
    xtts_status st = xtts_tokenizer_fill_header(o->tok, &h, err);
    if (st) return st;
    if (R->forced_lang >= 0) snprintf(h.lang_mode, sizeof h.lang_mode, "%s", xtts_lang_code(R->forced_lang));
    else snprintf(h.lang_mode, sizeof h.lang_mode, "%s", R->lang_column ? "column" : "auto");
    if (*R->extra_langs) st = xtts_tokens_header_set(&h, "languages", R->extra_langs, err);
    if (!st && (R->has_split || o->keep_text))
        st = xtts_tokens_header_set(&h, "fields", R->has_split && o->keep_text ? "split,text" : R->has_split ? "split" : "text", err);
    if (!st) st = xtts_tokens_header_set(&h, "lowercase", lower ? "1" : "0", err);
    if (!st) st = xtts_tokens_header_set(&h, "normalize", mode_names[mode], err);
    if (!st && o->shard_n > 1) {
        char sh[32];
        snprintf(sh, sizeof sh, "%d/%d", o->shard_k, o->shard_n);
        st = xtts_tokens_header_set(&h, "shard", sh, err);
    }
    if (!st) st = xtts_tokens_header_set(&h, "tool", "xtts-tokenize-" XTTS_VERSION, err);
    if (!st) st = xtts_tokens_write_header(out, &h, err);
    return st;
}

/* Normalize, tokenize and format the chunk's records of this part, in parallel. Returns the
 * records that kept digits. */
static size_t encode_chunk(run_t *R) {
    const xtts_tokenize_options *o = R->o;
    size_t digits_kept = 0;
    #pragma omp parallel num_threads(R->threads) reduction(+ : digits_kept)
    {
        xtts_ids ids_buf = {0};
        #pragma omp for schedule(dynamic, 16)
        for (size_t k = 0; k < R->n; k++) {
            record *r = &R->recs[k];
            if (!in_shard(R, R->base + k) || r->reject || r->reject_msg) continue;
            /* Coqui's check_input_length: len() of the raw text against its language's limit */
            size_t tl = strlen(r->text);
            int limit = xtts_text_char_limit(xtts_lang_code(r->lang));
            size_t chars = tl > (size_t)limit || o->max_chars > 0 ? xtts_text_char_count(r->text, tl) : 0;
            if (chars > (size_t)limit) {
                r->over_limit = limit;
                r->chars = chars;
            }
            if (o->max_chars && chars > (size_t)(o->max_chars < 0 ? limit : o->max_chars)) {
                r->long_rejected = 1;
                r->reject_msg = malloc(120);
                if (!r->reject_msg) reject(r, "too many characters");
                else if (o->max_chars < 0)
                    snprintf(r->reject_msg, 120, "%zu characters, more than XTTS's limit of %d for '%s' "
                             "(--max-chars auto)", chars, limit, xtts_lang_code(r->lang));
                else snprintf(r->reject_msg, 120, "%zu characters, more than --max-chars %d", chars, o->max_chars);
                continue;
            }
            xtts_error e;
            char *norm = NULL;
            unsigned flags = 0;
            if (xtts_normalize(r->text, strlen(r->text), r->lang, &R->nopts, &norm, &flags, &e)) {
                r->reject_msg = strdup(e.msg);
                if (!r->reject_msg) reject(r, "normalization failed");
                continue;
            }
            if (flags & XTTS_NORM_DIGITS_KEPT) digits_kept++;
            if (!*norm) { free(norm); reject(r, "empty text after normalization"); continue; }
            if (xtts_tokenizer_encode(o->tok, norm, r->lang, &ids_buf, &e)) {
                free(norm);
                r->reject_msg = strdup(e.msg);
                if (!r->reject_msg) reject(r, "tokenizer failed");
                continue;
            }
            if (ids_buf.n > (size_t)o->max_tokens) {
                free(norm);
                r->reject_msg = malloc(80);
                if (r->reject_msg) snprintf(r->reject_msg, 80, "%zu tokens, more than --max-tokens %d", ids_buf.n, o->max_tokens);
                else reject(r, "too many tokens");
                continue;
            }
            xtts_tokens_record tr = {r->id, r->speaker, xtts_lang_code(r->lang), r->audio_abs, norm, ids_buf.ids, ids_buf.n,
                                     R->has_split ? r->split : NULL, o->keep_text ? r->text : NULL, NULL};
            size_t cap = 0;
            if (xtts_tokens_format_record(&tr, &r->line_out, &cap, &r->line_len, &e)) {
                r->reject_msg = strdup(e.msg);
                if (!r->reject_msg) reject(r, "cannot format the record");
                free(r->line_out);
                r->line_out = NULL;
            }
            free(norm);
        }
        free(ids_buf.ids);
    }
    return digits_kept;
}

/* Write the chunk's lines in input order, and report its rejections. */
static xtts_status write_chunk(run_t *R, FILE *out, xtts_tokenize_stats *stats, xtts_error *err) {
    for (size_t k = 0; k < R->n; k++) {
        record *r = &R->recs[k];
        if (!in_shard(R, R->base + k)) continue;
        if (r->over_limit) {
            stats->over_char_limit++;
            if (R->o->verbose && !r->long_rejected) {
                print_record_name(R->o, r, R->base + k);
                fprintf(stderr, ": warning: %zu characters, more than XTTS's limit of %d for '%s' (this might cause "
                        "truncated audio)\n", r->chars, r->over_limit, xtts_lang_code(r->lang));
            }
        }
        if (r->excluded) {
            stats->excluded++;
            continue;
        }
        if (r->reject || r->reject_msg) {
            stats->rejected++;
            report_reject(R->o, R->rej, r, R->base + k);
            continue;
        }
        if (r->line_out) {
            fwrite(r->line_out, 1, r->line_len, out);
            stats->written++;
            if (r->lang < XTTS_N_LANGS) stats->per_lang[r->lang]++;
        }
    }
    if (ferror(out))
        return xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", out == stdout ? "standard output" : "output", strerror(errno));
    return XTTS_OK;
}

/* The third pass, a chunk at a time: the same checks, the language chosen with the prior,
 * then encoded in parallel and written in order. */
static xtts_status pass_output(run_t *R, FILE *out, xtts_tokenize_stats *stats, xtts_error *err) {
    xtts_progress prog;
    xtts_progress_init(&prog, "xtts-tokenize", R->o->progress);
    size_t per[XTTS_N_LANGS] = {0};
    xtts_status st = pass_open(R, err);
    while (!st && !(st = read_chunk(R, err)) && R->n) {
        if ((st = reject_duplicates(R, err))) break;
        for (size_t k = 0; k < R->n; k++) apply_lists(R, &R->recs[k]);
        for (size_t k = 0; k < R->n; k++) resolve_record_lang(R, k, stats);
        for (size_t k = 0; k < R->n; k++) /* detected again: the results not kept, and those the prior leaves open */
            if (R->detect[k] && xtts_langid_store_get(&R->kept, R->base + k, &R->res[k]) &&
                xtts_langid_prior_settles(&R->prior, &R->res[k], R->recs[k].speaker))
                R->detect[k] = 2;
        detect_chunk(R, 0);
        for (size_t k = 0; k < R->n; k++) {
            if (!R->detect[k]) continue;
            record *r = &R->recs[k];
            int l = xtts_langid_prior_choose(&R->prior, &R->res[k], r->speaker);
            if (l < 0) { reject(r, "language could not be identified"); continue; }
            stats->lang_fallback += R->res[k].lang >= 0 && l != R->res[k].lang;
            r->lang = l;
            r->lang_sure = R->res[k].sure;
            per[l]++;
        }
        stats->digits_kept += encode_chunk(R);
        if ((st = write_chunk(R, out, stats, err))) break;
        xtts_progress_update(&prog, R->base + R->n, stats->records, NULL);
    }
    if (st) return st;
    xtts_progress_finish(&prog, stats->records, stats->records, NULL);
    size_t best = 0;
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (per[l] > best) { best = per[l]; stats->majority_lang = l; }
    if (fflush(out) || ferror(out))
        return xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", out == stdout ? "standard output" : "output", strerror(errno));
    return XTTS_OK;
}

static void run_free(run_t *R) {
    if (R->recs)
        for (size_t i = 0; i < R->n; i++) record_free(&R->recs[i]);
    free(R->recs);
    free(R->res);
    free(R->detect);
    hash_runs_free(&R->ids);
    xtts_hash_set_free(&R->dup_hashes);
    id_store_free(&R->dups);
    free(R->val_ids.keys);
    free(R->test_ids.keys);
    free(R->val_buf);
    free(R->test_buf);
    if (R->spill) munmap(R->spill, R->spill_len);
    for (size_t i = 0; i < R->sources.n; i++) free(R->sources.v[i]);
    free(R->sources.v);
    xtts_langid_prior_free(&R->prior);
    xtts_langid_store_free(&R->kept);
    xtts_meta_close(R->mr);
}

xtts_status xtts_tokenize_run(const xtts_tokenize_options *o, FILE *out, xtts_tokenize_stats *stats, xtts_error *err) {
    memset(stats, 0, sizeof *stats);
    stats->majority_lang = -1;
    if (o->shard_n < 1 || o->shard_k < 0 || o->shard_k >= o->shard_n)
        return xtts_error_set(err, XTTS_EUSAGE, "--shard K/N needs 0 <= K < N");
    if (o->max_tokens < 1 || o->max_tokens > XTTS_TOKENS_MAX_IDS)
        return xtts_error_set(err, XTTS_EUSAGE, "--max-tokens must be in 1..%d", XTTS_TOKENS_MAX_IDS);
    if (o->max_chars < -1) return xtts_error_set(err, XTTS_EUSAGE, "--max-chars must be auto or a positive number");
    run_t R;
    memset(&R, 0, sizeof R);
    R.o = o;
    xtts_status st = run_setup(&R, err);
    if (!st) st = pass_ids(&R, stats, err);
    if (!st) st = pass_prior(&R, err);
    if (!st) st = write_header(&R, out, err);
    if (!st) st = pass_output(&R, out, stats, err);
    FILE *rej = R.rej;
    run_free(&R);
    if (rej) { /* a write that failed part way shows in ferror; the last buffer's, in fclose */
        int bad = ferror(rej), e = errno;
        if (fclose(rej) != 0 && !bad) bad = 1, e = errno;
        if (bad && !st) st = xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", o->rejects_path, strerror(e ? e : EIO));
    }
    return st;
}
