/* tokenize_run.c — xtts-tokenize's pipeline (see tokenize_run.h).
 *
 * The input is read whole and split into records in place. Then, in chunks, records are
 * normalized, tokenized and formatted in parallel (OpenMP), and written in input order by
 * one thread, so the output is byte-identical whatever the thread count. With --lang auto a
 * first parallel pass detects every record's language and the dataset's majority language,
 * which unsure records fall back to.
 */
#include "prep/tokenize_run.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/tokens.h"
#include "prep/langid.h"
#include "prep/normalize.h"

#define CHUNK_RECORDS 8192

typedef struct {
    size_t line;            /* 1-based line number in the input */
    char *id, *speaker, *lang_col, *audio, *text;
    char *audio_abs;        /* malloc'd absolute audio path */
    const char *reject;     /* static reason, or NULL */
    char *reject_msg;       /* malloc'd reason, or NULL */
    int lang;
    int lang_sure;
    int id_owned;           /* id is malloc'd (taken from the audio file's name) */
    char *line_out;         /* formatted token stream line */
    size_t line_len;
} record;

void xtts_tokenize_opts_init(xtts_tokenize_opts *o) {
    memset(o, 0, sizeof *o);
    o->input = "-";
    o->lang = -1;
    o->max_tokens = 512;
    o->shard_n = 1;
    o->expand = 1;
    o->lowercase = -1;
}

/* ---- reading ----------------------------------------------------------------------------- */

/* Metadata files (and standard input) are read whole, up to XTTS_METADATA_MAX_BYTES: an
 * endless or huge input (/dev/zero) stops with a message instead of filling memory. */
static xtts_status read_all(const char *path, char **buf, size_t *len, xtts_error *err) {
    xtts_status st = xtts_read_file(path, XTTS_METADATA_MAX_BYTES, buf, len, err);
    if (st == XTTS_ERANGE) st = err ? (err->code = XTTS_EINPUT) : XTTS_EINPUT;
    return st;
}

/* Directory of the metadata file, absolute. */
static char *meta_dir(const char *input) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    if (!strcmp(input, "-")) return strdup(cwd);
    char *copy = strdup(input);
    if (!copy) return NULL;
    char *slash = strrchr(copy, '/');
    const char *dir = ".";
    if (slash == copy) dir = "/";
    else if (slash) { *slash = 0; dir = copy; }
    char *res = realpath(dir, NULL);
    if (!res) {
        size_t n = strlen(cwd) + strlen(dir) + 2;
        res = malloc(n);
        if (res) snprintf(res, n, "%s/%s", dir[0] == '/' ? "" : cwd, dir);
    }
    free(copy);
    return res;
}

static char *join_path(const char *dir, const char *a, const char *b) {
    size_t n = strlen(dir) + strlen(a) + strlen(b) + 3;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, a, b);
    return p;
}

/* An absolute form of dir (relative to the working directory), malloc'd. */
static char *abs_dir(const char *dir) {
    char *r = realpath(dir, NULL);
    if (r) return r;
    if (dir[0] == '/') return strdup(dir);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    return join_path(cwd, dir, "");
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

/* ---- parsing ------------------------------------------------------------------------------------ */

static char *next_field(char **p, char sep) {
    char *s = *p;
    if (!s) return NULL;
    char *e = strchr(s, sep);
    if (e) { *e = 0; *p = e + 1; } else *p = NULL;
    return s;
}

typedef struct {
    int audio, text, id, speaker, lang, n;
} tsv_columns;

static xtts_status parse_tsv_header(char *line, const char *name, tsv_columns *c, xtts_error *err) {
    c->audio = c->text = c->id = c->speaker = c->lang = -1;
    c->n = 0;
    char *p = line;
    char *f;
    while ((f = next_field(&p, '\t'))) {
        int *slot = !strcmp(f, "audio") ? &c->audio : !strcmp(f, "text") ? &c->text : !strcmp(f, "id") ? &c->id
                  : !strcmp(f, "speaker") ? &c->speaker : !strcmp(f, "lang") ? &c->lang : NULL;
        if (slot) {
            if (*slot >= 0) return xtts_error_set(err, XTTS_EINPUT, "%s:1: column '%s' named twice", name, f);
            *slot = c->n;
        }
        c->n++;
    }
    if (c->n > 64) return xtts_error_set(err, XTTS_EINPUT, "%s:1: more than 64 columns", name);
    if (c->audio < 0 || c->text < 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: the header row must name the columns 'audio' and 'text' (tab-separated)", name);
    return XTTS_OK;
}

static char *stem_of(const char *path) {
    /* id default: the audio file's name without directories and extension (in place) */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *id = malloc(n + 1);
    if (id) { memcpy(id, base, n); id[n] = 0; }
    return id;
}

/* ---- the run ------------------------------------------------------------------------------------ */

static void reject(record *r, const char *why) { if (!r->reject && !r->reject_msg) r->reject = why; }

static void report_reject(const xtts_tokenize_opts *o, const char *name, FILE *rej, const record *r) {
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
    const char *name = o->input;
    if (o->shard_n < 1 || o->shard_k < 0 || o->shard_k >= o->shard_n)
        return xtts_error_set(err, XTTS_EUSAGE, "--shard K/N needs 0 <= K < N");
    if (o->max_tokens < 1 || o->max_tokens > XTTS_TOKENS_MAX_IDS)
        return xtts_error_set(err, XTTS_EUSAGE, "--max-tokens must be in 1..%d", XTTS_TOKENS_MAX_IDS);
    char *buf = NULL;
    size_t len = 0;
    xtts_status st = XTTS_OK;
    if (o->input_data) {
        buf = malloc(o->input_len + 1);
        if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        memcpy(buf, o->input_data, o->input_len);
        buf[o->input_len] = 0;
        len = o->input_len;
    } else {
        st = read_all(o->input, &buf, &len, err);
        if (st) return st;
    }
    char *dir = o->audio_dir ? abs_dir(o->audio_dir) : meta_dir(o->input);
    FILE *rej = NULL;
    record *recs = NULL;
    size_t n_recs = 0, cap_recs = 0;
    id_set ids = {0};
    if (!dir) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
    if (o->rejects_path) {
        rej = fopen(o->rejects_path, "w");
        if (!rej) { st = xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", o->rejects_path, strerror(errno)); goto done; }
    }
    if (strlen(buf) != len) {
        /* a NUL byte: find its line for the message */
        size_t line = 1;
        for (size_t i = 0; i < len && buf[i]; i++) line += buf[i] == '\n';
        st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: NUL byte in the input (not a text file?)", name, line);
        goto done;
    }
    /* split lines */
    char *p = buf;
    if (!strncmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    size_t line_no = 0;
    tsv_columns cols = {.audio = -1, .text = -1, .id = -1, .speaker = -1, .lang = -1, .n = 0};
    int header_done = o->format != XTTS_META_TSV;
    while (p && *p) {
        char *line = p;
        char *nl = strchr(p, '\n');
        if (nl) { *nl = 0; p = nl + 1; } else p = NULL;
        line_no++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r') line[--l] = 0;
        if (!header_done) {
            st = parse_tsv_header(line, name, &cols, err);
            if (st) goto done;
            header_done = 1;
            continue;
        }
        int blank = 1;
        for (char *q = line; *q; q++) if (*q != ' ' && *q != '\t') { blank = 0; break; }
        if (blank) continue;
        if (n_recs == cap_recs) {
            size_t nc = cap_recs ? cap_recs * 2 : 1024;
            record *nr = realloc(recs, nc * sizeof *nr);
            if (!nr) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
            recs = nr;
            cap_recs = nc;
        }
        record *r = &recs[n_recs++];
        memset(r, 0, sizeof *r);
        r->line = line_no;
        r->lang = -1;
        int line_utf8 = xtts_utf8_valid(line, l);
        if (o->format == XTTS_META_LJSPEECH) {
            char *q = line;
            char *f[4];
            int nf = 0;
            while (nf < 4 && (f[nf] = next_field(&q, '|'))) nf++;
            if (nf < 2 || nf > 3) { reject(r, "expected id|text|normalized_text (2 or 3 |-separated fields)"); continue; }
            r->id = xtts_utf8_valid(f[0], strlen(f[0])) ? f[0] : NULL;
            r->text = nf == 3 && *f[2] ? f[2] : f[1];
            if (!line_utf8) { reject(r, "invalid UTF-8"); continue; }
            if (!*r->id) { reject(r, "missing id"); continue; }
            r->speaker = "";
            r->lang_col = "";
            if (o->audio_dir) r->audio_abs = join_path(dir, r->id, ".wav");
            else {
                size_t n = strlen(dir) + strlen(r->id) + 12;
                r->audio_abs = malloc(n);
                if (r->audio_abs) snprintf(r->audio_abs, n, "%s/wavs/%s.wav", dir, r->id);
            }
        } else {
            char *q = line;
            char *f[64];
            int nf = 0;
            char *x;
            while ((x = next_field(&q, '\t'))) { if (nf < 64) f[nf] = x; nf++; }
            if (nf != cols.n) {
                r->reject_msg = malloc(96);
                if (r->reject_msg) snprintf(r->reject_msg, 96, "expected %d tab-separated fields, found %d", cols.n, nf);
                else reject(r, "malformed line");
                continue;
            }
            r->text = f[cols.text];
            r->audio = f[cols.audio];
            r->speaker = cols.speaker >= 0 ? f[cols.speaker] : "";
            r->lang_col = cols.lang >= 0 ? f[cols.lang] : "";
            if (cols.id >= 0) r->id = f[cols.id];
            if (!line_utf8) {
                if (r->id && !xtts_utf8_valid(r->id, strlen(r->id))) r->id = NULL;
                reject(r, "invalid UTF-8");
                continue;
            }
            if (!*r->audio) { reject(r, "missing audio path"); continue; }
            if (cols.id < 0 || !*r->id) {
                r->id = stem_of(r->audio);
                r->id_owned = 1;
                if (!r->id) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
            }
            r->audio_abs = r->audio[0] == '/' ? strdup(r->audio) : join_path(dir, r->audio, "");
            if (!r->id || !*r->id) { reject(r, "missing id"); continue; }
        }
        if (!r->audio_abs) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
        if (has_control(r->text) || has_control(r->id) || has_control(r->speaker)) { reject(r, "control character"); continue; }
        if (strlen(r->id) > XTTS_ID_MAX_BYTES) { reject(r, "id longer than " XTTS_ID_MAX_BYTES_STR " bytes"); continue; }
    }
    if (!header_done) { st = xtts_error_set(err, XTTS_EINPUT, "%s: empty input (no header row)", name); goto done; }
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
    /* languages */
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    int need_detect = 0;
    for (size_t i = 0; i < n_recs; i++) {
        record *r = &recs[i];
        if ((size_t)i % (size_t)o->shard_n != (size_t)o->shard_k) continue;
        stats->selected++;
        if (r->reject || r->reject_msg) continue;
        if (o->lang >= 0) { r->lang = o->lang; continue; }
        if (r->lang_col && *r->lang_col) {
            int l = xtts_lang_index(r->lang_col);
            if (l < 0) { reject(r, "unknown language in the lang column (XTTS codes: en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja hi)"); continue; }
            r->lang = l;
            continue;
        }
        need_detect = 1;
    }
    if (need_detect) {
        size_t votes[XTTS_N_LANGS] = {0}, weak[XTTS_N_LANGS] = {0};
        #pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
        for (size_t i = 0; i < n_recs; i++) {
            record *r = &recs[i];
            if (i % (size_t)o->shard_n != (size_t)o->shard_k || r->reject || r->reject_msg || r->lang >= 0) continue;
            char *basic = NULL;
            xtts_error e;
            if (xtts_normalize_basic(r->text, strlen(r->text), &basic, &e)) continue;
            xtts_langid_result res;
            xtts_langid_detect(basic, strlen(basic), &res);
            free(basic);
            r->lang = res.lang;
            r->lang_sure = res.sure;
        }
        for (size_t i = 0; i < n_recs; i++) {
            record *r = &recs[i];
            if (i % (size_t)o->shard_n != (size_t)o->shard_k || r->reject || r->reject_msg || r->lang < 0) continue;
            if (r->lang_sure) votes[r->lang]++;
            else weak[r->lang]++;
        }
        int maj = -1;
        size_t best = 0;
        for (int l = 0; l < XTTS_N_LANGS; l++)
            if (votes[l] > best) { best = votes[l]; maj = l; }
        if (maj < 0)
            for (int l = 0; l < XTTS_N_LANGS; l++)
                if (weak[l] > best) { best = weak[l]; maj = l; }
        stats->majority_lang = maj;
        for (size_t i = 0; i < n_recs; i++) {
            record *r = &recs[i];
            if (i % (size_t)o->shard_n != (size_t)o->shard_k || r->reject || r->reject_msg) continue;
            if (r->lang_col && *r->lang_col) continue;
            if (r->lang < 0 || !r->lang_sure) {
                if (maj < 0) { reject(r, "language could not be identified"); continue; }
                if (r->lang != maj) stats->lang_fallback++;
                r->lang = maj;
            }
        }
    }
    /* header */
    {
        xtts_tokens_header h;
        xtts_tokens_header_init(&h);
        h.max_tokens = o->max_tokens;
        st = xtts_tokenizer_fill_header(o->tok, &h, err);
        if (st) goto done;
        if (o->lang >= 0) snprintf(h.lang_mode, sizeof h.lang_mode, "%s", xtts_lang_codes[o->lang]);
        else snprintf(h.lang_mode, sizeof h.lang_mode, "%s", cols.lang >= 0 ? "column" : "auto");
        int lower = o->lowercase >= 0 ? o->lowercase : xtts_tokenizer_wants_lowercase(o->tok);
        if (!st) st = xtts_tokens_header_set(&h, "lowercase", lower ? "1" : "0", err);
        if (!st) st = xtts_tokens_header_set(&h, "normalize", o->expand ? "expand-" XTTS_NORMALIZER_VERSION : "basic-" XTTS_NORMALIZER_VERSION, err);
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
    xtts_normalize_opts nopts = {o->lowercase >= 0 ? o->lowercase : xtts_tokenizer_wants_lowercase(o->tok), o->expand, XTTS_NORM_SPOKEN};
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
                xtts_tokens_record tr = {r->id, r->speaker, xtts_lang_codes[r->lang], r->audio_abs, norm, ids_buf.ids, ids_buf.n, NULL};
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
                report_reject(o, name, rej, r);
                continue;
            }
            if (r->line_out) {
                fwrite(r->line_out, 1, r->line_len, out);
                free(r->line_out);
                r->line_out = NULL;
                stats->written++;
                stats->per_lang[r->lang]++;
            }
        }
        if (ferror(out)) { st = xtts_error_set(err, XTTS_EIO, "output: write failed: %s", strerror(errno)); goto done; }
        xtts_progress_update(&prog, c1, n_recs, NULL);
    }
    xtts_progress_finish(&prog, n_recs, n_recs, NULL);
    stats->digits_kept = digits_kept;
    if (fflush(out) || ferror(out)) st = xtts_error_set(err, XTTS_EIO, "output: write failed: %s", strerror(errno));
done:
    for (size_t i = 0; i < n_recs; i++) {
        free(recs[i].audio_abs);
        free(recs[i].reject_msg);
        free(recs[i].line_out);
        if (recs[i].id_owned) free(recs[i].id);
    }
    free(recs);
    free(ids.keys);
    free(dir);
    free(buf);
    if (rej && fclose(rej) && !st) st = xtts_error_set(err, XTTS_EIO, "%s: write failed", o->rejects_path);
    return st;
}
