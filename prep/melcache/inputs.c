/* inputs.c — a build's inputs, read in two passes (inputs.h). */
#include "prep/melcache/inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "formats/record.h"

int xtts_melcache_is_val(const char *id, double val_fraction) {
    if (val_fraction <= 0) return 0;
    uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, id, strlen(id));
    /* mix so that similar ids spread evenly */
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL; h ^= h >> 33;
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
    return u < val_fraction;
}

void xtts_melcache_input_free(xtts_melcache_input *x) {
    free(x->id); free(x->audio_path); free(x->speaker); free(x->lang); free(x->tokens);
    free(x->text); free(x->orig_text); free(x->reject);
    memset(x, 0, sizeof *x);
}

/* A FILE that reads the source and appends what it read to the spool (the first pass over
 * a stream that cannot seek). */
typedef struct xtts_melcache_tee { FILE *src, *spool; int failed; } tee_t;

/* The first pass's reader and its source closed; -1 when the copy of a stream that cannot seek
 * failed. */
static int scan_close(xtts_melcache_inputs *in) {
    xtts_tokens_reader_close(in->scan_r);
    in->scan_r = NULL;
    int failed = 0;
    if (in->scan_src && in->scan_src != in->f) {
        fclose(in->scan_src);
        failed = in->tee->failed || fflush(in->spool) != 0;
    }
    in->scan_src = NULL;
    free(in->tee);
    in->tee = NULL;
    return failed ? -1 : 0;
}

void xtts_melcache_inputs_free(xtts_melcache_inputs *in) {
    (void)scan_close(in);
    for (size_t i = 0; i < in->n_speakers; i++) free(in->speakers[i]);
    free(in->speakers);
    free(in->spk.keys); free(in->spk.vals);
    xtts_tokens_reader_close(in->r);
    if (in->spool) fclose(in->spool);
    memset(in, 0, sizeof *in);
}

/* The id of a speaker the first pass saw, or -1 (the table is not changed: the second pass
 * reads records on one thread while others read the table). */
static int known_speaker_id(const xtts_melcache_inputs *in, const char *name) {
    const xtts_melcache_speaker_map *m = &in->spk;
    if (!m->cap) return -1;
    uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, name, strlen(name)) | 1;
    for (size_t j = h & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == h && strcmp(in->speakers[m->vals[j]], name) == 0) return m->vals[j];
    return -1;
}

/* Speaker names to ids during the first pass (a linear probe table keeps it O(n)); once the
 * whole stream is read, speakers_sort numbers them in the order of their names. */
static int speaker_id(xtts_melcache_inputs *in, const char *name) {
    int known = known_speaker_id(in, name);
    if (known >= 0) return known;
    xtts_melcache_speaker_map *m = &in->spk;
    uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, name, strlen(name)) | 1;
    if (m->cap == 0 || (in->n_speakers + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 256;
        uint64_t *nk = calloc(ncap, sizeof *nk);
        int *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) { free(nk); free(nv); return -1; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = m->keys[i] & (ncap - 1);
                while (nk[j]) j = (j + 1) & (ncap - 1);
                nk[j] = m->keys[i]; nv[j] = m->vals[i];
            }
        free(m->keys); free(m->vals);
        m->keys = nk; m->vals = nv; m->cap = ncap;
    }
    size_t j = h & (m->cap - 1);
    while (m->keys[j]) j = (j + 1) & (m->cap - 1); /* a new name: the first free slot */
    if (in->n_speakers == in->cap_speakers) {
        size_t nc = in->cap_speakers ? in->cap_speakers * 2 : 16;
        char **ns = realloc(in->speakers, nc * sizeof *ns);
        if (!ns) return -1;
        in->speakers = ns; in->cap_speakers = nc;
    }
    char *dup = strdup(name);
    if (!dup) return -1;
    int id = (int)in->n_speakers;
    in->speakers[in->n_speakers++] = dup;
    m->keys[j] = h; m->vals[j] = id;
    return id;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Speaker ids in the bytewise order of the speakers' names, not of their first appearance:
 * dropping, adding or moving records then renumbers no speaker unless one comes or goes, so
 * an update keeps the stored records of every other speaker as they are. */
static void speakers_sort(xtts_melcache_inputs *in) {
    xtts_melcache_speaker_map *m = &in->spk;
    if (!m->cap) return;
    qsort(in->speakers, in->n_speakers, sizeof *in->speakers, cmp_names);
    memset(m->keys, 0, m->cap * sizeof *m->keys);
    for (size_t i = 0; i < in->n_speakers; i++) {
        uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, in->speakers[i], strlen(in->speakers[i])) | 1;
        size_t j = h & (m->cap - 1);
        while (m->keys[j]) j = (j + 1) & (m->cap - 1);
        m->keys[j] = h;
        m->vals[j] = (int)i;
    }
}

static const char *rec_speaker(const xtts_tokens_record *rec) {
    return rec->speaker && rec->speaker[0] ? rec->speaker : "default";
}


static ssize_t tee_read(void *c, char *buf, size_t n) {
    tee_t *t = c;
    size_t got = fread(buf, 1, n, t->src);
    if (got && fwrite(buf, 1, got, t->spool) != got) { t->failed = 1; errno = EIO; return -1; }
    if (!got && ferror(t->src)) return -1;
    return (ssize_t)got;
}

static int tee_close(void *c) { (void)c; return 0; }

static xtts_status read_languages(xtts_melcache_inputs *in, const char *name, xtts_error *err) {
    for (int i = 0; i < XTTS_N_LANGS; i++) snprintf(in->langs[i], sizeof in->langs[i], "%s", xtts_lang_codes[i]);
    in->n_langs = XTTS_N_LANGS;
    const char *extra = xtts_tokens_header_get(&in->hdr, "languages");
    while (extra && *extra) {
        const char *c = strchr(extra, ',');
        size_t n = c ? (size_t)(c - extra) : strlen(extra);
        char code[16];
        if (n >= sizeof code || in->n_langs >= XTTS_MAX_LANGS)
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: languages= holds a bad code or too many", name);
        memcpy(code, extra, n);
        code[n] = 0;
        if (!xtts_lang_tag_valid(code))
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: languages= holds '%s', not a language code", name, code);
        snprintf(in->langs[in->n_langs++], sizeof in->langs[0], "%s", code);
        extra += n + (c ? 1 : 0);
    }
    return XTTS_OK;
}

xtts_status xtts_melcache_inputs_open(FILE *f, const char *name, double val_fraction, const xtts_exclude *exclude,
                                      xtts_melcache_inputs *in, xtts_error *err) {
    memset(in, 0, sizeof *in);
    in->name = name;
    in->exclude = exclude;
    in->val_fraction = val_fraction;
    struct stat sb;
    in->f = in->scan_src = f;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || fseeko(f, 0, SEEK_SET) != 0) {
        tee_t *tee = calloc(1, sizeof *tee);
        in->tee = tee;
        in->spool = tee ? tmpfile() : NULL;
        if (!in->spool) {
            int e = errno;
            xtts_melcache_inputs_free(in);
            return xtts_error_set(err, tee ? XTTS_EIO : XTTS_ENOMEM, "%s: cannot create a temporary copy of the stream: %s",
                                  name, strerror(e));
        }
        tee->src = f;
        tee->spool = in->f = in->spool;
        cookie_io_functions_t io = {.read = tee_read, .close = tee_close};
        in->scan_src = fopencookie(tee, "r", io);
        if (!in->scan_src) { xtts_melcache_inputs_free(in); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name); }
    }
    xtts_status st = xtts_tokens_reader_open(in->scan_src, name, &in->scan_r, err);
    if (!st) {
        in->hdr = *xtts_tokens_reader_header(in->scan_r);
        st = read_languages(in, name, err);
        xtts_tokens_reader_lenient(in->scan_r, 1); /* bad language, too many tokens, long id: that record only */
    }
    if (st) xtts_melcache_inputs_free(in);
    return st;
}

/* x from the stream's record rec, its speaker numbered spk: its own copies of the strings, its
 * language's id, its split. Errors: XTTS_ENOMEM. */
static xtts_status input_fill(const xtts_melcache_inputs *in, const xtts_tokens_record *rec, int spk,
                              xtts_melcache_input *x, xtts_error *err) {
    xtts_melcache_input_free(x);
    x->id = strdup(rec->id ? rec->id : "");
    x->audio_path = strdup(rec->audio_path ? rec->audio_path : "");
    x->speaker = strdup(rec_speaker(rec));
    x->lang = strdup(rec->lang ? rec->lang : "");
    x->n_tokens = (uint32_t)rec->n_tokens;
    x->tokens = malloc((rec->n_tokens ? rec->n_tokens : 1) * sizeof(int32_t));
    x->text = strdup(rec->text ? rec->text : "");
    x->orig_text = strdup(rec->orig_text ? rec->orig_text : "");
    x->reject = rec->reject ? strdup(rec->reject) : NULL;
    if (!x->id || !x->audio_path || !x->speaker || !x->lang || !x->tokens || !x->text || !x->orig_text ||
        (rec->reject && !x->reject)) {
        xtts_melcache_input_free(x);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", in->name);
    }
    if (rec->n_tokens) memcpy(x->tokens, rec->tokens, rec->n_tokens * sizeof(int32_t));
    x->lang_id = -1;
    for (int l = 0; l < in->n_langs; l++)
        if (!strcmp(in->langs[l], x->lang)) { x->lang_id = l; break; }
    x->split = !rec->split || !*rec->split ? -1 : !strcmp(rec->split, "val") ? XTTS_SPLIT_VAL : XTTS_SPLIT_TRAIN;
    x->speaker_id = spk;
    return XTTS_OK;
}

int xtts_melcache_inputs_scan_next(xtts_melcache_inputs *in, xtts_melcache_input *x, xtts_tokens_pos *pos,
                                   xtts_error *err) {
    xtts_tokens_record rec;
    int rc;
    for (;;) {
        if (pos) xtts_tokens_reader_tell(in->scan_r, pos);
        if ((rc = xtts_tokens_reader_next(in->scan_r, &rec, err)) != 1) break;
        if (rec.split && !strcmp(rec.split, "test")) { in->n_test++; continue; }
        if (xtts_exclude_has(in->exclude, rec.id ? rec.id : "")) { in->n_excluded++; continue; }
        in->n++;
        if (rec.split && rec.split[0]) in->split_given++;
        else in->val_by_fraction += (uint64_t)xtts_melcache_is_val(rec.id ? rec.id : "", in->val_fraction);
        int spk = speaker_id(in, rec_speaker(&rec));
        if (spk < 0) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", in->name), -1;
        if (x && input_fill(in, &rec, spk, x, err)) return -1;
        return 1;
    }
    return rc;
}

/* renumber[i]: the id of the speaker first seen i-th, now that speakers_sort has numbered them
 * (first: the names in that order, which the sort moves). */
static xtts_status speakers_renumber(xtts_melcache_inputs *in, int **renumber, xtts_error *err) {
    size_t n = in->n_speakers;
    char **first = malloc((n ? n : 1) * sizeof *first);
    int *map = malloc((n ? n : 1) * sizeof *map);
    if (!first || !map) {
        free(first);
        free(map);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", in->name);
    }
    memcpy(first, in->speakers, n * sizeof *first);
    speakers_sort(in);
    for (size_t i = 0; i < n; i++) map[i] = known_speaker_id(in, first[i]);
    free(first);
    *renumber = map;
    return XTTS_OK;
}

xtts_status xtts_melcache_inputs_scan_end(xtts_melcache_inputs *in, int **renumber, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (renumber) *renumber = NULL;
    if (scan_close(in))
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot write the temporary copy of the stream (disk full?)", in->name);
    if (!st && in->n == 0) st = xtts_error_set(err, XTTS_EINPUT, "%s: no records in the token stream", in->name);
    if (!st && renumber) st = speakers_renumber(in, renumber, err);
    else if (!st) speakers_sort(in);
    if (st) xtts_melcache_inputs_free(in);
    in->lo = 0;
    in->hi = in->n;
    return st;
}

xtts_status xtts_melcache_inputs_scan_rest(xtts_melcache_inputs *in, xtts_error *err) {
    int rc;
    while ((rc = xtts_melcache_inputs_scan_next(in, NULL, NULL, err)) == 1) {}
    if (rc < 0) {
        xtts_status st = err ? err->code : XTTS_EINPUT;
        xtts_melcache_inputs_free(in);
        return st;
    }
    return xtts_melcache_inputs_scan_end(in, NULL, err);
}

/* Start the second pass from the first record. */
static xtts_status inputs_rewind(xtts_melcache_inputs *in, xtts_error *err) {
    xtts_tokens_reader_close(in->r);
    in->r = NULL;
    if (fseeko(in->f, 0, SEEK_SET) != 0)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot read the stream again: %s", in->name, strerror(errno));
    xtts_status st = xtts_tokens_reader_open(in->f, in->name, &in->r, err);
    if (st) return st;
    xtts_tokens_reader_lenient(in->r, 1);
    in->next = 0;
    xtts_melcache_inputs_clear_keys(in);
    return XTTS_OK;
}

/* The second pass: the next record (the test split skipped) into x, which owns its strings. */
xtts_status xtts_melcache_inputs_next(xtts_melcache_inputs *in, xtts_melcache_input *x, xtts_error *err) {
    xtts_tokens_record rec;
    int rc;
    while ((rc = xtts_tokens_reader_next(in->r, &rec, err)) == 1)
        if (!(rec.split && !strcmp(rec.split, "test")) && !xtts_exclude_has(in->exclude, rec.id ? rec.id : "")) break;
    if (rc < 0) return err ? err->code : XTTS_EINPUT;
    if (rc == 0) return xtts_error_set(err, XTTS_EIO, "%s: the stream changed while it was read (record %llu is missing)",
                                       in->name, (unsigned long long)in->next + 1);
    int spk = known_speaker_id(in, rec_speaker(&rec)); /* known from the first pass */
    if (spk < 0)
        return xtts_error_set(err, XTTS_EIO, "%s: the stream changed while it was read (record %llu has a speaker the "
                              "first reading did not see)", in->name, (unsigned long long)in->next + 1);
    xtts_status st = input_fill(in, &rec, spk, x, err);
    if (st) return st;
    in->next++;
    return XTTS_OK;
}

/* Position the second pass at input `target`. */
xtts_status xtts_melcache_inputs_seek(xtts_melcache_inputs *in, uint64_t target, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!in->r || in->next > target) st = inputs_rewind(in, err);
    xtts_melcache_input x = {0};
    while (!st && in->next < target) st = xtts_melcache_inputs_next(in, &x, err);
    xtts_melcache_input_free(&x);
    return st;
}

xtts_status xtts_melcache_inputs_jump(xtts_melcache_inputs *in, uint64_t target, const xtts_tokens_pos *pos,
                                      xtts_error *err) {
    xtts_status st = in->r ? xtts_tokens_reader_seek(in->r, pos, err) : xtts_melcache_inputs_seek(in, target, err);
    if (!st) in->next = target;
    return st;
}

void xtts_melcache_inputs_clear_keys(xtts_melcache_inputs *in) { xtts_sha256_init(&in->keys_ctx); }

void xtts_melcache_inputs_add_key(xtts_melcache_inputs *in, const uint8_t key[32]) {
    xtts_sha256_update(&in->keys_ctx, key, 32);
}

void xtts_melcache_inputs_add_keys(xtts_melcache_inputs *in, const uint8_t *keys, uint64_t n) {
    xtts_sha256_update(&in->keys_ctx, keys, n * 32);
}

void xtts_melcache_inputs_digest(const xtts_melcache_inputs *in, uint8_t out[32]) {
    xtts_sha256 c = in->keys_ctx;
    xtts_sha256_final(&c, out);
}

