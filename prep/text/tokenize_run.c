/* tokenize_run.c — xtts-tokenize's pipeline (see tokenize_run.h).
 *
 * Records come from the metadata reader (prep/dataset/metadata.h), one small block each. Then, in chunks, records are
 * normalized, tokenized and formatted in parallel (OpenMP), and written in input order by
 * one thread, so the output is byte-identical whatever the thread count. With --lang auto a
 * first parallel pass scores every record's language, then a sequential pass combines the
 * scores with the dataset's and the speaker's language distribution (prep/text/langid.h).
 */
#include "prep/text/tokenize_run.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/tokens.h"
#include "prep/text/langid.h"
#include "prep/dataset/metadata.h"
#include "prep/text/normalize.h"

#define CHUNK_RECORDS 8192

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
    char *line_out;         /* formatted token stream line */
    size_t line_len;
} record;

void xtts_tokenize_opts_init(xtts_tokenize_opts *o) {
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

static void report_reject(const xtts_tokenize_opts *o, FILE *rej, const record *r) {
    const char *name = r->source ? r->source : o->input;
    const char *why = r->reject_msg ? r->reject_msg : r->reject;
    char idbuf[64];
    const char *id = r->id && *r->id ? r->id : NULL;
    if (!id) { snprintf(idbuf, sizeof idbuf, "line:%zu", r->line); id = idbuf; }
    if (!o->quiet) fprintf(stderr, "xtts-tokenize: %s:%zu: %s: %s\n", name, r->line, id, why);
    if (rej) {
        for (const char *p = id; *p; p++) fputc(*p == '\t' || *p == '\n' ? ' ' : *p, rej);
        fprintf(rej, "\t%s\n", why);
    }
}

xtts_status xtts_tokenize_run(const xtts_tokenize_opts *o, FILE *out, xtts_tokenize_stats *stats, xtts_error *err) {
    memset(stats, 0, sizeof *stats);
    stats->majority_lang = -1;
    if (o->shard_n < 1 || o->shard_k < 0 || o->shard_k >= o->shard_n)
        return xtts_error_set(err, XTTS_EUSAGE, "--shard K/N needs 0 <= K < N");
    if (o->max_tokens < 1 || o->max_tokens > XTTS_TOKENS_MAX_IDS)
        return xtts_error_set(err, XTTS_EUSAGE, "--max-tokens must be in 1..%d", XTTS_TOKENS_MAX_IDS);
    xtts_status st = XTTS_OK;
    FILE *rej = NULL;
    record *recs = NULL;
    size_t n_recs = 0, cap_recs = 0;
    id_set ids = {0};
    id_set val_ids = {0}, test_ids = {0};
    char *val_buf = NULL, *test_buf = NULL;
    xtts_meta_reader *mr = NULL;
    strlist_t sources = {0};
    int lang_column = 0;
    if (o->rejects_path) {
        rej = fopen(o->rejects_path, "w");
        if (!rej) { st = xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", o->rejects_path, strerror(errno)); goto done; }
    }
    st = read_id_list(o->val_list, &val_buf, &val_ids, err);
    if (!st) st = read_id_list(o->test_list, &test_buf, &test_ids, err);
    if (st) goto done;
    {
        xtts_meta_opts mo;
        xtts_meta_opts_init(&mo);
        mo.path = o->input;
        mo.data = o->input_data;
        mo.len = o->input_len;
        mo.format = o->format;
        mo.audio_dir = o->audio_dir;
        mo.original_text = o->original_text;
        if (o->vctk_mic) mo.vctk_mic = o->vctk_mic;
        mo.quiet = o->quiet;
        st = xtts_meta_open(&mo, &mr, err);
        if (st) goto done;
        lang_column = xtts_meta_reader_has_lang(mr);
    }
    xtts_meta_entry e;
    int mrc;
    while ((mrc = xtts_meta_next(mr, &e, err)) == 1) {
        if (n_recs == cap_recs) {
            size_t nc = cap_recs ? cap_recs * 2 : 1024;
            record *nr = realloc(recs, nc * sizeof *nr);
            if (!nr) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
            recs = nr;
            cap_recs = nc;
        }
        record *r = &recs[n_recs++];
        memset(r, 0, sizeof *r);
        r->line = e.line;
        r->lang = -1;
        if (!sources.n || strcmp(sources.v[sources.n - 1], e.source)) {
            if (strlist_add(&sources, e.source)) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
        }
        r->source = sources.v[sources.n - 1];
        /* one block holds the record's strings: id speaker lang text split */
        const char *fs[5] = {e.id, e.speaker, e.lang, e.text, e.split};
        size_t fl[5], total = 0;
        for (int k = 0; k < 5; k++) total += (fl[k] = strlen(fs[k])) + 1;
        r->store = malloc(total);
        r->audio_abs = strdup(e.audio);
        if (!r->store || !r->audio_abs) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
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
        if (e.reject) {
            r->reject_msg = strdup(e.reject);
            if (!r->reject_msg) reject(r, "malformed record");
            continue;
        }
        if (!utf8) { reject(r, "invalid UTF-8"); continue; }
        if (!*r->audio_abs) { reject(r, "missing audio path"); continue; }
        if (!*r->id) { reject(r, "missing id"); continue; }
        if (has_control(r->text) || has_control(r->id) || has_control(r->speaker)) { reject(r, "control character"); continue; }
        if (strlen(r->id) > XTTS_ID_MAX_BYTES) { reject(r, "id longer than " XTTS_ID_MAX_BYTES_STR " bytes"); continue; }
    }
    if (mrc < 0) { st = err ? err->code : XTTS_EINPUT; goto done; }
    stats->records = n_recs;
    /* duplicate ids: the first occurrence wins (checked over all shards so shards agree) */
    ids.cap = 16;
    while (ids.cap < n_recs * 2 + 2) ids.cap *= 2;
    ids.keys = calloc(ids.cap, sizeof *ids.keys);
    if (!ids.keys) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < n_recs; i++) {
        record *r = &recs[i];
        if (r->reject || r->reject_msg || !r->id) continue;
        if (!id_set_add(&ids, r->id)) reject(r, "duplicate id");
    }
    /* splits: --val-list / --test-list over the input's own split field */
    int has_split = val_ids.keys || test_ids.keys;
    for (size_t i = 0; i < n_recs; i++) {
        record *r = &recs[i];
        if (r->reject || r->reject_msg || !r->id) continue;
        int v = id_set_has(&val_ids, r->id), t = id_set_has(&test_ids, r->id);
        if (v && t) { reject(r, "id in both --val-list and --test-list"); continue; }
        if (v) r->split = "val";
        else if (t) r->split = "test";
        if (r->split && *r->split) has_split = 1;
    }
    /* a forced language, and the languages beyond XTTS's 17 that the stream will name (over
     * all records, so that every --part writes the same table) */
    int forced_lang = o->lang;
    if (o->lang_tag) {
        forced_lang = resolve_lang(o->tok, o->lang_tag);
        if (forced_lang == -1) { st = xtts_error_set(err, XTTS_EUSAGE, "--lang %s is not a BCP-47/ISO 639 language code (or auto)", o->lang_tag); goto done; }
        if (forced_lang == -2) {
            char served[200];
            xtts_tokenizer_lang_list(o->tok, served, sizeof served);
            st = xtts_error_set(err, XTTS_EUSAGE, "--lang %s is not served by the tokenizer (%s)", o->lang_tag, served);
            goto done;
        }
    }
    char extra_langs[224] = "";
    if (forced_lang >= XTTS_N_LANGS) snprintf(extra_langs, sizeof extra_langs, "%s", xtts_lang_code(forced_lang));
    for (size_t i = 0; i < n_recs && forced_lang < 0; i++) {
        record *r = &recs[i];
        if (r->reject || r->reject_msg || !*r->lang_col) continue;
        int l = resolve_lang(o->tok, r->lang_col);
        if (l < XTTS_N_LANGS) continue;
        const char *code = xtts_lang_code(l);
        size_t cl = strlen(code), el = strlen(extra_langs);
        int present = 0;
        for (const char *q = extra_langs; *q;) {
            const char *c = strchr(q, ',');
            size_t n = c ? (size_t)(c - q) : strlen(q);
            if (n == cl && !strncmp(q, code, n)) { present = 1; break; }
            q += n + (c ? 1 : 0);
        }
        if (present) continue;
        if (el + cl + 2 > sizeof extra_langs) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: more languages beyond XTTS's 17 than a token stream header holds (%s ...)", o->input, extra_langs);
            goto done;
        }
        if (el) strcat(extra_langs, ",");
        strcat(extra_langs, code);
    }
    /* languages */
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    int need_detect = 0;
    for (size_t i = 0; i < n_recs; i++) {
        record *r = &recs[i];
        if ((size_t)i % (size_t)o->shard_n != (size_t)o->shard_k) continue;
        stats->selected++;
        if (r->reject || r->reject_msg) continue;
        if (forced_lang >= 0) { r->lang = forced_lang; continue; }
        if (r->lang_col && *r->lang_col) {
            int l = resolve_lang(o->tok, r->lang_col);
            if (l == -1) { reject(r, "unknown language in the lang column (not a BCP-47/ISO 639 language code)"); continue; }
            if (l == -2) {
                char served[200];
                xtts_tokenizer_lang_list(o->tok, served, sizeof served);
                r->reject_msg = malloc(320);
                if (r->reject_msg) snprintf(r->reject_msg, 320, "language '%.15s' in the lang column is not served by the tokenizer (%s)", r->lang_col, served);
                else reject(r, "language not served by the tokenizer");
                continue;
            }
            r->lang = l;
            continue;
        }
        need_detect = 1;
    }
    if (need_detect) {
        /* pass 1 (parallel): each record's scores; pass 2: the dataset and speaker prior */
        xtts_langid_result *res = calloc(n_recs ? n_recs : 1, sizeof *res);
        size_t *which = malloc((n_recs ? n_recs : 1) * sizeof *which);
        const char **spk = malloc((n_recs ? n_recs : 1) * sizeof *spk);
        int *chosen = malloc((n_recs ? n_recs : 1) * sizeof *chosen);
        if (!res || !which || !spk || !chosen) {
            free(res); free(which); free(spk); free(chosen);
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", o->input);
            goto done;
        }
        size_t n_det = 0;
        for (size_t i = 0; i < n_recs; i++) {
            record *r = &recs[i];
            if (i % (size_t)o->shard_n != (size_t)o->shard_k || r->reject || r->reject_msg || r->lang >= 0) continue;
            which[n_det] = i;
            spk[n_det] = r->speaker;
            n_det++;
        }
        #pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
        for (size_t k = 0; k < n_det; k++) {
            record *r = &recs[which[k]];
            char *basic = NULL;
            xtts_error e;
            res[k].lang = -1;
            if (xtts_normalize_basic(r->text, strlen(r->text), &basic, &e)) continue;
            xtts_langid_detect(basic, strlen(basic), &res[k]);
            free(basic);
        }
        stats->lang_fallback = xtts_langid_choose(n_det, res, spk, chosen);
        size_t per[XTTS_N_LANGS] = {0}, best = 0;
        for (size_t k = 0; k < n_det; k++) {
            record *r = &recs[which[k]];
            if (chosen[k] < 0) { reject(r, "language could not be identified"); continue; }
            r->lang = chosen[k];
            r->lang_sure = res[k].sure;
            per[r->lang]++;
        }
        for (int l = 0; l < XTTS_N_LANGS; l++)
            if (per[l] > best) { best = per[l]; stats->majority_lang = l; }
        free(res); free(which); free(spk); free(chosen);
    }
    /* normalization mode: --normalize, else xtts for XTTS vocabularies, else spoken */
    xtts_norm_mode mode = o->normalize >= 0 ? (xtts_norm_mode)o->normalize
                        : xtts_tokenizer_is_xtts(o->tok) ? XTTS_NORM_XTTS : XTTS_NORM_SPOKEN;
    if (!o->expand) mode = XTTS_NORM_NONE;
    static const char *const mode_names[] = {"spoken-" XTTS_NORMALIZER_VERSION, "xtts-" XTTS_NORMALIZER_VERSION,
                                             "none-" XTTS_NORMALIZER_VERSION};
    /* Coqui's cleaners lowercase by themselves */
    int lower = mode == XTTS_NORM_XTTS ? 1 : o->lowercase >= 0 ? o->lowercase : xtts_tokenizer_wants_lowercase(o->tok);
    /* header */
    {
        xtts_tokens_header h;
        xtts_tokens_header_init(&h);
        h.max_tokens = o->max_tokens;
        st = xtts_tokenizer_fill_header(o->tok, &h, err);
        if (st) goto done;
        if (forced_lang >= 0) snprintf(h.lang_mode, sizeof h.lang_mode, "%s", xtts_lang_code(forced_lang));
        else snprintf(h.lang_mode, sizeof h.lang_mode, "%s", lang_column ? "column" : "auto");
        if (!st && *extra_langs) st = xtts_tokens_header_set(&h, "languages", extra_langs, err);
        if (!st && (has_split || o->keep_text))
            st = xtts_tokens_header_set(&h, "fields", has_split && o->keep_text ? "split,text" : has_split ? "split" : "text", err);
        if (!st) st = xtts_tokens_header_set(&h, "lowercase", lower ? "1" : "0", err);
        if (!st) st = xtts_tokens_header_set(&h, "normalize", mode_names[mode], err);
        if (!st && o->shard_n > 1) {
            char sh[32];
            snprintf(sh, sizeof sh, "%d/%d", o->shard_k, o->shard_n);
            st = xtts_tokens_header_set(&h, "shard", sh, err);
        }
        if (!st) st = xtts_tokens_header_set(&h, "tool", "xtts-tokenize-" XTTS_VERSION, err);
        if (!st) st = xtts_tokens_write_header(out, &h, err);
        if (st) goto done;
    }
    /* normalize, tokenize, format: parallel per chunk, written in order */
    xtts_normalize_opts nopts = {lower, mode != XTTS_NORM_NONE, mode};
    xtts_progress prog;
    xtts_progress_init(&prog, "xtts-tokenize", o->progress);
    size_t digits_kept = 0;
    for (size_t c0 = 0; c0 < n_recs; c0 += CHUNK_RECORDS) {
        size_t c1 = c0 + CHUNK_RECORDS < n_recs ? c0 + CHUNK_RECORDS : n_recs;
        #pragma omp parallel num_threads(threads) reduction(+ : digits_kept)
        {
            xtts_ids ids_buf = {0};
            #pragma omp for schedule(dynamic, 16)
            for (size_t i = c0; i < c1; i++) {
                record *r = &recs[i];
                if (i % (size_t)o->shard_n != (size_t)o->shard_k || r->reject || r->reject_msg) continue;
                xtts_error e;
                char *norm = NULL;
                unsigned flags = 0;
                if (xtts_normalize(r->text, strlen(r->text), r->lang, &nopts, &norm, &flags, &e)) {
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
                                         has_split ? r->split : NULL, o->keep_text ? r->text : NULL, NULL};
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
        for (size_t i = c0; i < c1; i++) {
            record *r = &recs[i];
            if (i % (size_t)o->shard_n != (size_t)o->shard_k) continue;
            if (r->reject || r->reject_msg) {
                stats->rejected++;
                report_reject(o, rej, r);
                continue;
            }
            if (r->line_out) {
                fwrite(r->line_out, 1, r->line_len, out);
                free(r->line_out);
                r->line_out = NULL;
                stats->written++;
                if (r->lang < XTTS_N_LANGS) stats->per_lang[r->lang]++;
            }
        }
        if (ferror(out)) { st = xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", out == stdout ? "standard output" : "output", strerror(errno)); goto done; }
        xtts_progress_update(&prog, c1, n_recs, NULL);
    }
    xtts_progress_finish(&prog, n_recs, n_recs, NULL);
    stats->digits_kept = digits_kept;
    if (fflush(out) || ferror(out)) st = xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", out == stdout ? "standard output" : "output", strerror(errno));
done:
    for (size_t i = 0; i < n_recs; i++) {
        free(recs[i].audio_abs);
        free(recs[i].reject_msg);
        free(recs[i].line_out);
        free(recs[i].store);
    }
    free(recs);
    free(ids.keys);
    free(val_ids.keys);
    free(test_ids.keys);
    free(val_buf);
    free(test_buf);
    for (size_t i = 0; i < sources.n; i++) free(sources.v[i]);
    free(sources.v);
    xtts_meta_close(mr);
    if (rej && fclose(rej) && !st) st = xtts_error_set(err, XTTS_EIO, "%s: write failed", o->rejects_path);
    return st;
}
