/* melcache.c — the cache build pipeline behind xtts-melcache (see melcache.h).
 *
 * Shape of a run: read the whole token stream (small next to the audio), build the
 * speaker table from it (so that every part of a sharded build agrees), open the shard
 * writer (which tells where a previous run stopped), then process the selected records
 * in chunks: worker threads decode, resample, compute mels, pad and encode into per-slot
 * buffers; the calling thread appends the chunk to the writer in input order together
 * with the running statistics, so a kill at any moment loses at most the uncommitted
 * tail and a re-run recomputes exactly that.
 *
 * Where a device computes the mels (the CUDA path), each chunk goes through the batch
 * pipeline instead (compute_batched): cut into sub-batches, the engine (kernels/mel_batch.h)
 * computes one on a thread of its own while the workers decode the next and encode the one
 * before. The CPU batch engine runs the same pipeline on the CPU (XTTS_MELCACHE_BATCH), so
 * that it is tested where there is no GPU.
 */
#include "prep/melcache/melcache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/exclude.h"
#include "cache/store/keys.h"
#include "cache/store/quality_store.h"
#include "cache/store/share.h"
#include "cache/store/update_dir.h"
#include "cache/store/writer.h"
#include "formats/record.h"
#include "formats/record_ids.h"
#include "formats/tokens.h"
#include "kernels/mel.h"
#include "kernels/mel_batch.h"
#include "kernels/mel_cuda.h"
#include "kernels/quality.h"
#include "prep/audio/audio.h"
#include "prep/melcache/builder.h"
#include "prep/melcache/device.h"
#include "prep/melcache/update.h"

#define STATS_KEY "melcache-stats"
/* SHA-256 over the content keys (prep/melcache/update.h) of the inputs the build (or part)
 * has consumed, then the last one's id: a resume proves the stored build is this stream's,
 * whatever the audio files' paths. Builds of earlier versions saved "melcache-inputs" (over
 * the audio paths) instead and resume without the check. */
#define INPUTS_KEY "melcache-keys"
#define STATS_MAGIC 0x58535431u /* "XST1" */
/* Set with the first record of a build that stores quality metrics: a resume of a build
 * without it (made before the metrics) goes on without them, so that no cache holds some
 * records with metrics and some without. */
#define QUALITY_KEY "melcache-quality"
/* State key "melcache-speakers": "sorted" in a build whose speaker ids follow the names'
 * order. Builds begun before it numbered speakers by first appearance: their stored ids
 * would not agree with this run's, so they are not resumed (--force rebuilds them). */
#define SPEAKERS_KEY "melcache-speakers"

void xtts_melcache_options_defaults(xtts_melcache_options *o) {
    memset(o, 0, sizeof *o);
    xtts_cache_config_defaults(&o->cfg);
    o->cfg.shuffle = 1; /* byte planes compress better and decode faster (docs/benchmarks.md) */
    o->part = -1;
    o->n_parts = 1;
    o->threads = 0;
    o->shard_bytes = (uint64_t)1 << 30;
    o->commit_every = 256;
    o->device = "auto";
}

void xtts_melcache_config_finish(xtts_cache_config *c, const char *resample_quality, int max_frames_given) {
    if (resample_quality) snprintf(c->resample_quality, sizeof c->resample_quality, "%s", resample_quality);
    else if (!strcmp(c->resampler, "libsamplerate")) snprintf(c->resample_quality, sizeof c->resample_quality, "sinc_medium");
    if (c->n_buckets) c->max_frames = c->buckets[c->n_buckets - 1];
    else if (!max_frames_given) c->max_frames = xtts_mel_default_max_frames(&c->mel);
}

int xtts_melcache_is_val(const char *id, double val_fraction) {
    if (val_fraction <= 0) return 0;
    uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, id, strlen(id));
    /* mix so that similar ids spread evenly */
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL; h ^= h >> 33;
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
    return u < val_fraction;
}

/* ---- input ----------------------------------------------------------------- */

typedef struct {
    char *id, *audio_path;
    int speaker_id, lang_id;
    int split;              /* the stream's split field: -1 none (--val-fraction decides), else xtts_split */
    char *lang;
    int32_t *tokens;
    uint32_t n_tokens;
    char *text, *orig_text; /* normalized and original (may be "") text, stored in the record */
    char *reject; /* the token stream's reason to reject this record (formats/tokens.h), or NULL */
} input_rec;

/* SHA-256 over the content keys of the inputs consumed so far: saved with every commit so
 * that a resume can prove the stream is the same. */
typedef struct {
    xtts_sha256 ctx;
    uint64_t upto;
} inputs_hash;

/* The inputs are streamed, never held: a first pass over the token stream counts the
 * records and builds the speaker table (every part of a build must agree on it, so it comes
 * from the whole stream); the second pass hands records to the pipeline one chunk at a
 * time. A stream that cannot be read twice (a pipe, stdin) is copied to a temporary file as
 * the first pass reads it. Memory is bounded by the chunk and the speaker table, not by the
 * number of records. */
typedef struct { uint64_t *keys; int *vals; size_t cap; } spk_map;

typedef struct {
    size_t n;               /* records (test split excluded) */
    char **speakers;
    size_t n_speakers, cap_speakers;
    spk_map spk;
    xtts_tokens_header hdr;
    /* the cache's language table: XTTS's 17, then the stream's languages= list */
    char langs[XTTS_MAX_LANGS][16];
    int n_langs;
    size_t n_test;          /* records of the test split, held out of the cache */
    const xtts_exclude *exclude; /* ids left out (--exclude), or NULL */
    size_t n_excluded;      /* records of the stream left out by it */
    uint64_t split_given, val_by_fraction;
    /* the second pass */
    FILE *f;                /* the stream (seekable), or the spool */
    FILE *spool;            /* owned temporary copy of a stream that cannot seek */
    const char *name;
    xtts_tokens_reader *r;
    uint64_t next;          /* index of the next record the second pass returns */
    inputs_hash ih;         /* over inputs 0..next-1 */
} input_set;

static void input_rec_free(input_rec *x) {
    free(x->id); free(x->audio_path); free(x->lang); free(x->tokens);
    free(x->text); free(x->orig_text); free(x->reject);
    memset(x, 0, sizeof *x);
}

static void input_free(input_set *in) {
    for (size_t i = 0; i < in->n_speakers; i++) free(in->speakers[i]);
    free(in->speakers);
    free(in->spk.keys); free(in->spk.vals);
    xtts_tokens_reader_close(in->r);
    if (in->spool) fclose(in->spool);
    memset(in, 0, sizeof *in);
}

/* Speaker names to ids during the first pass (a linear probe table keeps it O(n)); once the
 * whole stream is read, speakers_sort numbers them in the order of their names. */
static int speaker_id(input_set *in, const char *name) {
    spk_map *m = &in->spk;
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
    while (m->keys[j]) {
        if (m->keys[j] == h && strcmp(in->speakers[m->vals[j]], name) == 0) return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
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
static void speakers_sort(input_set *in) {
    spk_map *m = &in->spk;
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

/* A FILE that reads the source and appends what it read to the spool (the first pass over
 * a stream that cannot seek). */
typedef struct { FILE *src, *spool; int failed; } tee_t;

static ssize_t tee_read(void *c, char *buf, size_t n) {
    tee_t *t = c;
    size_t got = fread(buf, 1, n, t->src);
    if (got && fwrite(buf, 1, got, t->spool) != got) { t->failed = 1; errno = EIO; return -1; }
    if (!got && ferror(t->src)) return -1;
    return (ssize_t)got;
}

static int tee_close(void *c) { (void)c; return 0; }

static xtts_status read_languages(input_set *in, const char *name, xtts_error *err) {
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

/* The first pass: header, languages, counts, the speaker table. */
static xtts_status scan_inputs(FILE *f, const char *name, double val_fraction, const xtts_exclude *exclude,
                               input_set *in, xtts_error *err) {
    memset(in, 0, sizeof *in);
    in->name = name;
    in->exclude = exclude;
    struct stat sb;
    FILE *src = f;
    tee_t tee = {0};
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || fseeko(f, 0, SEEK_SET) != 0) {
        in->spool = tmpfile();
        if (!in->spool) return xtts_error_set(err, XTTS_EIO, "%s: cannot create a temporary copy of the stream: %s", name, strerror(errno));
        tee.src = f;
        tee.spool = in->spool;
        cookie_io_functions_t io = {.read = tee_read, .close = tee_close};
        src = fopencookie(&tee, "r", io);
        if (!src) { input_free(in); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name); }
        in->f = in->spool;
    } else {
        in->f = f;
    }
    xtts_tokens_reader *r = NULL;
    xtts_status st = xtts_tokens_reader_open(src, name, &r, err);
    if (!st) {
        in->hdr = *xtts_tokens_reader_header(r);
        st = read_languages(in, name, err);
    }
    if (!st) {
        xtts_tokens_reader_lenient(r, 1); /* bad language, too many tokens, long id: that record only */
        xtts_tokens_record rec;
        int rc;
        while ((rc = xtts_tokens_reader_next(r, &rec, err)) == 1) {
            if (rec.split && !strcmp(rec.split, "test")) { in->n_test++; continue; }
            if (xtts_exclude_has(exclude, rec.id ? rec.id : "")) { in->n_excluded++; continue; }
            in->n++;
            if (rec.split && rec.split[0]) in->split_given++;
            else in->val_by_fraction += (uint64_t)xtts_melcache_is_val(rec.id ? rec.id : "", val_fraction);
            if (speaker_id(in, rec_speaker(&rec)) < 0) { st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name); break; }
        }
        if (!st && rc < 0) st = err ? err->code : XTTS_EINPUT;
    }
    xtts_tokens_reader_close(r);
    if (src != f) {
        fclose(src);
        if (!st && (tee.failed || fflush(in->spool) != 0))
            st = xtts_error_set(err, XTTS_EIO, "%s: cannot write the temporary copy of the stream (disk full?)", name);
    }
    if (!st && in->n == 0) st = xtts_error_set(err, XTTS_EINPUT, "%s: no records in the token stream", name);
    if (!st) speakers_sort(in);
    if (st) input_free(in);
    return st;
}

/* Start the second pass from the first record. */
static xtts_status inputs_rewind(input_set *in, xtts_error *err) {
    xtts_tokens_reader_close(in->r);
    in->r = NULL;
    if (fseeko(in->f, 0, SEEK_SET) != 0)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot read the stream again: %s", in->name, strerror(errno));
    xtts_status st = xtts_tokens_reader_open(in->f, in->name, &in->r, err);
    if (st) return st;
    xtts_tokens_reader_lenient(in->r, 1);
    in->next = 0;
    xtts_sha256_init(&in->ih.ctx);
    in->ih.upto = 0;
    return XTTS_OK;
}

/* The second pass: the next record (the test split skipped) into x, which owns its strings. */
static xtts_status input_next(input_set *in, input_rec *x, xtts_error *err) {
    xtts_tokens_record rec;
    int rc;
    while ((rc = xtts_tokens_reader_next(in->r, &rec, err)) == 1)
        if (!(rec.split && !strcmp(rec.split, "test")) && !xtts_exclude_has(in->exclude, rec.id ? rec.id : "")) break;
    if (rc < 0) return err ? err->code : XTTS_EINPUT;
    if (rc == 0) return xtts_error_set(err, XTTS_EIO, "%s: the stream changed while it was read (record %llu is missing)",
                                       in->name, (unsigned long long)in->next + 1);
    input_rec_free(x);
    x->id = strdup(rec.id ? rec.id : "");
    x->audio_path = strdup(rec.audio_path ? rec.audio_path : "");
    x->lang = strdup(rec.lang ? rec.lang : "");
    x->n_tokens = (uint32_t)rec.n_tokens;
    x->tokens = malloc((rec.n_tokens ? rec.n_tokens : 1) * sizeof(int32_t));
    x->text = strdup(rec.text ? rec.text : "");
    x->orig_text = strdup(rec.orig_text ? rec.orig_text : "");
    x->reject = rec.reject ? strdup(rec.reject) : NULL;
    if (!x->id || !x->audio_path || !x->lang || !x->tokens || !x->text || !x->orig_text || (rec.reject && !x->reject)) {
        input_rec_free(x);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", in->name);
    }
    if (rec.n_tokens) memcpy(x->tokens, rec.tokens, rec.n_tokens * sizeof(int32_t));
    x->lang_id = -1;
    for (int l = 0; l < in->n_langs; l++)
        if (!strcmp(in->langs[l], x->lang)) { x->lang_id = l; break; }
    x->split = !rec.split || !*rec.split ? -1 : !strcmp(rec.split, "val") ? XTTS_SPLIT_VAL : XTTS_SPLIT_TRAIN;
    x->speaker_id = speaker_id(in, rec_speaker(&rec)); /* known from the first pass */
    if (x->speaker_id < 0) { input_rec_free(x); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", in->name); }
    in->next++;
    return XTTS_OK;
}

/* Position the second pass at input `target`. */
static xtts_status inputs_seek(input_set *in, uint64_t target, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!in->r || in->next > target) st = inputs_rewind(in, err);
    input_rec x = {0};
    while (!st && in->next < target) st = input_next(in, &x, err);
    input_rec_free(&x);
    return st;
}

/* The digest of the keys added so far. */
static void inputs_digest(const input_set *in, uint8_t out[32]) {
    xtts_sha256 c = in->ih.ctx;
    xtts_sha256_final(&c, out);
}

/* The blob for a commit that ends with input i: the digest of inputs 0..i, then input i's id. */
static xtts_status inputs_save(xtts_cache_writer *w, const uint8_t digest[32], const char *id, xtts_error *err) {
    uint8_t buf[32 + 1024];
    memcpy(buf, digest, 32);
    size_t n = strlen(id);
    if (n > sizeof buf - 32) n = sizeof buf - 32;
    memcpy(buf + 32, id, n);
    return xtts_cache_writer_set_state(w, INPUTS_KEY, buf, 32 + n, err);
}

/* ---- running statistics (saved with every commit) ------------------------------ */

typedef struct {
    uint32_t magic, n_mels;
    uint64_t frames, tokens, train, val;
    double audio_seconds;
    double sum[XTTS_RECORD_MAX_MELS], sumsq[XTTS_RECORD_MAX_MELS];
} run_stats;

static xtts_status stats_save(xtts_cache_writer *w, const run_stats *s, xtts_error *err) {
    /* sum[] is full-size in the struct; pack sum[0..n) and sumsq[0..n) contiguously */
    size_t head = offsetof(run_stats, sum);
    size_t n = s->n_mels;
    uint8_t buf[sizeof(run_stats)];
    memcpy(buf, s, head);
    memcpy(buf + head, s->sum, n * sizeof(double));
    memcpy(buf + head + n * sizeof(double), s->sumsq, n * sizeof(double));
    return xtts_cache_writer_set_state(w, STATS_KEY, buf, head + 2 * n * sizeof(double), err);
}

static xtts_status stats_load(xtts_cache_writer *w, run_stats *s, int n_mels, xtts_error *err) {
    memset(s, 0, sizeof *s);
    s->magic = STATS_MAGIC;
    s->n_mels = (uint32_t)n_mels;
    void *data = NULL;
    size_t len = 0;
    xtts_error e2;
    xtts_status st = xtts_cache_writer_get_state(w, STATS_KEY, &data, &len, &e2);
    if (st == XTTS_ENOTFOUND) return XTTS_OK;
    if (st) { if (err) *err = e2; return st; }
    size_t head = offsetof(run_stats, sum);
    size_t need = head + 2 * (size_t)n_mels * sizeof(double);
    run_stats t;
    if (len != need) { free(data); return xtts_error_set(err, XTTS_ECORRUPT, "saved build statistics have the wrong size"); }
    memcpy(&t, data, head);
    if (t.magic != STATS_MAGIC || t.n_mels != (uint32_t)n_mels) {
        free(data);
        return xtts_error_set(err, XTTS_ECORRUPT, "saved build statistics do not match this configuration");
    }
    memcpy(s, &t, head);
    memcpy(s->sum, (uint8_t *)data + head, (size_t)n_mels * sizeof(double));
    memcpy(s->sumsq, (uint8_t *)data + head + (size_t)n_mels * sizeof(double), (size_t)n_mels * sizeof(double));
    free(data);
    return XTTS_OK;
}

/* ---- workers ------------------------------------------------------------------ */

typedef xtts_record_builder worker; /* one per thread (prep/melcache/builder.h) */

/* The large buffers a record needs until it is encoded. On the CPU path a worker loads,
 * computes and encodes one record at a time, so they are the worker's (a few hundred KB
 * each, reused); only the batch pipeline (the CUDA path), which computes a buffer's mels
 * a sub-batch at a time on the engine's thread, gives every record of the buffer being
 * computed its own: the k-th of a buffer's (the writer needs none of them: the record is
 * encoded by then). Fresh pages are not free: each costs a page fault the first time it is
 * touched (about 20 microseconds on some virtual machines). */
typedef struct {
    float *pcm;          /* a copy, when the mel is computed later (the batch pipeline), or the
                            int16-rounded signal when the waveform is stored */
    size_t cap_pcm;
    int16_t *wave;       /* --audio int16|flac: the stored waveform (s->src rounded) */
    size_t cap_wave;
    float *mel;          /* [n_mels][padded] */
    size_t cap_mel;
} slot_bufs;

static void slot_bufs_free(slot_bufs *b) {
    free(b->pcm);
    free(b->wave);
    free(b->mel);
    memset(b, 0, sizeof *b);
}

/* One record in flight through the three phases of a chunk: load (worker threads),
 * mel (worker threads, or a sub-batch of the batch engine), finish (worker threads: check,
 * pad, encode). */
typedef struct {
    uint64_t input;      /* index in the token stream */
    input_rec rec;       /* that input (owned; the slot's next input replaces it) */
    uint8_t digest[32];  /* the digest of the keys up to this input (saved with its commit) */
    uint8_t key[XTTS_CONTENT_KEY_BYTES]; /* its content key */
    int reused;          /* carried over from the source cache: bytes and sums are its */
    int kept;            /* with reused: kept where the source stores it (a shared update): not
                            written, only counted in the statistics */
    xtts_cache_entry ent[XTTS_SHARD_MAX_DBS]; /* with reused: its entries in the records' own
                                                 databases (pointing into the source) */
    size_t n_ent;
    int ok;
    char reason[XTTS_ERRMSG_MAX];
    const float *src;    /* mono samples at the preset's rate: the worker's audio buffer, or b->pcm */
    size_t n_pcm;
    slot_bufs *b;        /* the batch pipeline's k-th buffers, or (CPU path) the worker's: its
                            record is encoded right after */
    uint32_t trim_start; /* samples cut at the start by --trim-db */
    int padded;
    size_t n_frames;
    float pad_value;
    uint8_t *bytes;
    size_t len;
    uint32_t n_tokens;
    uint8_t split;
    double *sum, *sumsq; /* [n_mels] */
    xtts_quality_metrics quality; /* measured in load_one when the build stores metrics */
} slot;

/* Characters (code points) of UTF-8 text: the speaking rate's numerator. */
static uint32_t utf8_chars(const char *t) {
    uint32_t n = 0;
    for (; *t; t++) n += ((unsigned char)*t & 0xC0) != 0x80;
    return n;
}

/* The record's quality metrics, from the samples the mel is computed from (after resampling
 * and --trim-db, before the int16 rounding of a stored waveform and before padding), with
 * the source file's rate and the normalized text's length. 0, or -1 with the reason set. */
static int measure_one(xtts_quality_state *qs, slot *s, const float *pcm, size_t n, int rate,
                       const xtts_audio_info *info) {
    xtts_error e;
    xtts_error_clear(&e);
    if (xtts_quality_measure(qs, pcm, n, rate, info->source_rate, utf8_chars(s->rec.text), s->rec.n_tokens,
                             &s->quality, &e)) {
        snprintf(s->reason, sizeof s->reason, "%.250s: quality metrics: %.200s", s->rec.audio_path, e.msg);
        return -1;
    }
    return 0;
}

/* b: the buffers the record uses. With the record's own (own = 1: the batch pipeline) the
 * samples are copied out of the worker's audio buffer, which the worker's next load
 * overwrites; with the worker's, s->src points into that buffer. qs: the worker's quality
 * state when the build stores metrics, else NULL. */
static void load_one(const xtts_melcache_options *o, worker *w, xtts_quality_state *qs, slot *s, slot_bufs *b,
                     int own) {
    const xtts_cache_config *c = &o->cfg;
    const input_rec *x = &s->rec;
    xtts_error e;
    xtts_error_clear(&e);
    s->ok = 0;
    s->len = 0;
    s->n_pcm = 0;
    s->b = b;
    if (x->reject) {
        snprintf(s->reason, sizeof s->reason, "%s", x->reject);
        return;
    }
    if (x->lang_id < 0) {
        snprintf(s->reason, sizeof s->reason, "unknown language '%s'", x->lang);
        return;
    }
    if (x->n_tokens == 0 || x->n_tokens > (uint32_t)c->max_tokens) {
        snprintf(s->reason, sizeof s->reason, "%u tokens, limit %d", x->n_tokens, c->max_tokens);
        return;
    }
    const float *pcm = NULL;
    size_t n = 0;
    xtts_audio_info info;
    if (xtts_audio_load(w->audio, x->audio_path, &pcm, &n, &info, &e)) {
        snprintf(s->reason, sizeof s->reason, "%s", e.msg);
        return;
    }
    size_t frames = xtts_mel_n_frames(&c->mel, n);
    if (frames == 0) {
        snprintf(s->reason, sizeof s->reason, "%.300s: audio shorter than one frame (%zu samples)", x->audio_path, n);
        return;
    }
    int padded = xtts_cache_config_padded_frames(c, (int)frames);
    if (padded <= 0) {
        snprintf(s->reason, sizeof s->reason, "%.300s: %zu frames, longer than the largest padded length %d",
                 x->audio_path, frames, xtts_cache_config_max_padded_frames(c));
        return;
    }
    size_t need_mel = (size_t)c->mel.n_mels * (size_t)padded;
    if (!(b->mel = xtts_renew(b->mel, &b->cap_mel, need_mel, sizeof(float)))) {
        snprintf(s->reason, sizeof s->reason, "out of memory");
        return;
    }
    if (qs && measure_one(qs, s, pcm, n, c->mel.sample_rate, &info)) return;
    s->trim_start = (uint32_t)info.trimmed_head;
    if (c->audio != XTTS_AUDIO_NONE) {
        /* the waveform is stored as int16: round it, and compute the mel from the rounded
         * signal, so that the stored waveform gives back the stored mel exactly */
        b->wave = xtts_renew(b->wave, &b->cap_wave, n, sizeof(int16_t));
        b->pcm = xtts_renew(b->pcm, &b->cap_pcm, n, sizeof(float));
        if (!b->wave || !b->pcm) {
            snprintf(s->reason, sizeof s->reason, "out of memory");
            return;
        }
        xtts_wave_to_int16(pcm, n, b->wave, b->pcm);
        pcm = b->pcm;
    } else if (own) {
        if (!(b->pcm = xtts_renew(b->pcm, &b->cap_pcm, n, sizeof(float)))) {
            snprintf(s->reason, sizeof s->reason, "out of memory");
            return;
        }
        memcpy(b->pcm, pcm, n * sizeof(float));
        pcm = b->pcm;
    }
    s->src = pcm;
    s->n_pcm = n;
    s->padded = padded;
    s->ok = 1;
}

static void mel_one(worker *w, slot *s) {
    if (!s->ok) return;
    xtts_error e;
    xtts_error_clear(&e);
    if (xtts_mel_compute(w->mel, s->src, s->n_pcm, s->b->mel, (size_t)s->padded, &s->n_frames, &s->pad_value, &e)) {
        snprintf(s->reason, sizeof s->reason, "%.200s: %.300s", s->rec.audio_path, e.msg);
        s->ok = 0;
    }
}

static void finish_one(const xtts_melcache_options *o, worker *w, slot *s) {
    if (!s->ok) return;
    const xtts_cache_config *c = &o->cfg;
    const input_rec *x = &s->rec;
    xtts_error e;
    xtts_error_clear(&e);
    s->ok = 0;
    size_t got = s->n_frames;
    int padded = s->padded;
    int nm = c->mel.n_mels;
    for (int ch = 0; ch < nm; ch++) {
        float *row = s->b->mel + (size_t)ch * padded;
        /* four running sums (in a fixed order, so the same on every run), not one chain of
         * dependent additions; a NaN or infinite value makes its sums non-finite (a finite
         * float squared stays finite in double), so the sums are the check */
        double sm[4] = {0, 0, 0, 0}, sq[4] = {0, 0, 0, 0};
        size_t t = 0;
        for (; t + 4 <= got; t += 4)
            for (int l = 0; l < 4; l++) {
                sm[l] += row[t + l];
                sq[l] += (double)row[t + l] * row[t + l];
            }
        for (; t < got; t++) {
            sm[0] += row[t];
            sq[0] += (double)row[t] * row[t];
        }
        double sum = (sm[0] + sm[1]) + (sm[2] + sm[3]), sumsq = (sq[0] + sq[1]) + (sq[2] + sq[3]);
        if (!isfinite(sum) || !isfinite(sumsq)) {
            snprintf(s->reason, sizeof s->reason, "%.300s: non-finite mel value", x->audio_path);
            return;
        }
        s->sum[ch] = sum;
        s->sumsq[ch] = sumsq;
        /* format 1 stores the padded frames; format 2 only the true ones (its decoder pads) */
        if (c->format_version < 2)
            for (t = got; t < (size_t)padded; t++) row[t] = s->pad_value;
    }
    memcpy(w->tok_buf, x->tokens, x->n_tokens * sizeof(int32_t));
    for (int t = (int)x->n_tokens; t < c->max_tokens; t++) w->tok_buf[t] = c->pad_token;
    s->split = x->split >= 0 ? (uint8_t)x->split
                             : (uint8_t)(xtts_melcache_is_val(x->id, c->val_fraction) ? XTTS_SPLIT_VAL : XTTS_SPLIT_TRAIN);
    xtts_record_input ri = {
        .id = x->id, .split = s->split, .speaker_id = (uint32_t)x->speaker_id, .lang_id = (uint32_t)x->lang_id,
        .n_samples = (uint32_t)s->n_pcm, .n_tokens = x->n_tokens, .tokens_padded = (uint32_t)c->max_tokens,
        .n_frames = (uint32_t)got, .frames_padded = (uint32_t)padded, .n_mels = (uint16_t)nm,
        .pad_value = s->pad_value, .tokens = w->tok_buf, .mel = s->b->mel,
        .pad_token = (uint32_t)c->pad_token, .trim_start = s->trim_start, .text = x->orig_text,
        .text_norm = x->text, .wave = s->b->wave, .sample_rate = (uint32_t)c->mel.sample_rate,
    };
    const uint8_t *bytes;
    size_t len;
    if (xtts_record_encode(w->enc, &ri, &bytes, &len, &e)) {
        snprintf(s->reason, sizeof s->reason, "%s", e.msg);
        return;
    }
    uint8_t *copy = realloc(s->bytes, len);
    if (!copy) {
        snprintf(s->reason, sizeof s->reason, "out of memory");
        return;
    }
    memcpy(copy, bytes, len);
    s->bytes = copy;
    s->len = len;
    s->n_tokens = x->n_tokens;
    s->ok = 1;
}

/* The mels of the slots [lo, hi) of a buffer (at most 1024) that loaded and are not carried
 * over: one batch of the engine. */
static xtts_status mel_range(xtts_mel_batch *engine, slot *slots, size_t lo, size_t hi, xtts_error *err) {
    const float *samples[1024];
    size_t n_samples[1024], stride[1024], frames[1024];
    float *outs[1024];
    float pads[1024];
    size_t idx[1024], n = 0;
    for (size_t k = lo; k < hi && n < 1024; k++) {
        if (!slots[k].ok || slots[k].reused) continue;
        samples[n] = slots[k].src; n_samples[n] = slots[k].n_pcm;
        outs[n] = slots[k].b->mel; stride[n] = (size_t)slots[k].padded;
        idx[n++] = k;
    }
    if (n == 0) return XTTS_OK;
    xtts_status st = xtts_mel_batch_compute(engine, n, samples, n_samples, outs, stride, frames, pads, err);
    if (st) return st;
    for (size_t i = 0; i < n; i++) {
        slots[idx[i]].n_frames = frames[i];
        slots[idx[i]].pad_value = pads[i];
    }
    return XTTS_OK;
}

/* One sub-batch's mels, computed on the engine's thread while the workers load and finish
 * other slots. */
typedef struct {
    xtts_mel_batch *engine;
    slot *slots;
    size_t lo, hi;
    int done;
    xtts_status st;
    xtts_error err;
} mel_job;

static void mel_job_run(mel_job *j) {
    xtts_error_clear(&j->err);
    j->st = mel_range(j->engine, j->slots, j->lo, j->hi, &j->err);
}

/* The engine's thread, made once a run: it computes the job posted to it, one at a time,
 * so that every call into the engine (CUDA's included) comes from one thread, which stays
 * on its core. Without it (the thread could not be made) a job is computed when waited for. */
typedef struct {
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mel_job *job;        /* posted, not done */
    int quit;
} engine_thread;

static void *engine_thread_main(void *arg) {
    engine_thread *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!(e->job && !e->job->done) && !e->quit) pthread_cond_wait(&e->cv, &e->mu);
        if (!e->job || e->job->done) break;
        mel_job *j = e->job;
        pthread_mutex_unlock(&e->mu);
        mel_job_run(j);
        pthread_mutex_lock(&e->mu);
        j->done = 1;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void engine_thread_start(engine_thread *e) {
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->running = pthread_create(&e->thread, NULL, engine_thread_main, e) == 0;
}

/* NULL or never started are allowed. */
static void engine_thread_stop(engine_thread *e) {
    if (!e || !e->running) return;
    pthread_mutex_lock(&e->mu);
    e->quit = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    e->running = 0;
}

static void mel_job_post(engine_thread *e, mel_job *j) {
    if (!e->running) return;
    pthread_mutex_lock(&e->mu);
    j->done = 0;
    e->job = j;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static xtts_status mel_job_wait(engine_thread *e, mel_job *j, xtts_error *err) {
    if (e->running) {
        pthread_mutex_lock(&e->mu);
        while (!j->done) pthread_cond_wait(&e->cv, &e->mu);
        e->job = NULL;
        pthread_mutex_unlock(&e->mu);
    } else {
        mel_job_run(j);
    }
    if (j->st && err) *err = j->err;
    return j->st;
}

/* ---- manifest extras --------------------------------------------------------- */

/* What the build adds to the manifest; mean and std are filled here, the rest points into in
 * and s. */
static void manifest_extra(const input_set *in, const run_stats *s, const char **langs, double *mean, double *sd,
                           xtts_manifest_extra *x) {
    for (int i = 0; i < in->n_langs; i++) langs[i] = in->langs[i];
    for (size_t c = 0; c < s->n_mels; c++) {
        double n = s->frames ? (double)s->frames : 1.0;
        mean[c] = s->sum[c] / n;
        double var = s->sumsq[c] / n - mean[c] * mean[c];
        sd[c] = var > 0 ? sqrt(var) : 0.0;
    }
    *x = (xtts_manifest_extra){
        .has_speakers = 1, .speakers = (const char *const *)in->speakers, .n_speakers = in->n_speakers,
        .languages = langs, .n_languages = (size_t)in->n_langs,
        .has_splits = 1, .split_train = s->train, .split_val = s->val,
        .has_totals = 1, .audio_seconds = s->audio_seconds, .total_frames = s->frames, .total_tokens = s->tokens,
        .stats_frames = s->frames, .n_mels = s->n_mels, .mel_sum = s->sum, .mel_sumsq = s->sumsq,
        .mel_mean = mean, .mel_std = sd, .token_stream = &in->hdr};
}

/* ---- device ------------------------------------------------------------------ */

static int device_is_auto(const xtts_melcache_options *o) { return !o->device || !strcmp(o->device, "auto"); }

/* --device cpu, cuda or cuda:N, checked before anything is read: a device asked for that is not
 * usable stops the run. auto is decided once the build's size is known (choose_auto_device);
 * here its cost model is read, with the environment's overrides. */
static xtts_status choose_device(const xtts_melcache_options *o, xtts_melcache_device_model *m, char *out,
                                 size_t outlen, xtts_error *err) {
    xtts_melcache_device_model_defaults(m);
    if (device_is_auto(o)) return xtts_melcache_device_model_parse(m, getenv(XTTS_MELCACHE_AUTO_ENV), err);
    int ordinal;
    xtts_status st = xtts_device_choose(o->device, "xtts-melcache", &ordinal, err);
    if (st) return st;
    if (ordinal < 0) snprintf(out, outlen, "cpu");
    else snprintf(out, outlen, "cuda:%d", ordinal);
    return XTTS_OK;
}

/* --device auto for a build of n_records records on `threads` threads: cuda:0 only where the
 * cost model (prep/melcache/device.h) says the GPU path is faster and the device is usable;
 * one line on stderr says which and why. The device is not looked for when the CPU path wins
 * anyway, so a build that stays on the CPU pays nothing for the GPU's presence. */
static void choose_auto_device(const xtts_cache_config *c, const xtts_melcache_device_model *m, int threads,
                               uint64_t n_records, char *out, size_t outlen) {
    double max_clip_s = (double)xtts_cache_config_max_padded_frames(c) * c->mel.hop_samples / c->mel.sample_rate;
    double hours = xtts_melcache_audio_hours_estimate(m, n_records, max_clip_s);
    char why[160], cuda_why[256] = "";
    snprintf(out, outlen, "cpu");
    if (!xtts_melcache_gpu_pays(m, threads, hours, why, sizeof why)) {
        fprintf(stderr, "xtts-melcache: device: cpu (auto: %s; --device cuda to force)\n", why);
        return;
    }
    if (!xtts_cuda_device_usable(0, cuda_why, sizeof cuda_why)) {
        fprintf(stderr, "xtts-melcache: device: cpu (CUDA not used: %s)\n", cuda_why);
        return;
    }
    snprintf(out, outlen, "cuda:0");
    fprintf(stderr, "xtts-melcache: device: cuda:0 (auto: %s; --device cpu to force)\n", why);
}

/* ---- the run ------------------------------------------------------------------- */

static void report_reject(const xtts_melcache_options *o, const char *name, const input_rec *x, uint64_t input,
                          const char *reason) {
    if (!o->quiet) fprintf(stderr, "xtts-melcache: %s: record %llu (%s): rejected: %s\n", name,
                           (unsigned long long)input + 1, x->id, reason);
    if (o->rejects) fprintf(o->rejects, "%s\t%s\n", x->id, reason);
}

/* The writer side of the pipeline: one thread appends computed buffers to the shard writer
 * in input order (it is the only thread that touches the writer and the statistics), while
 * the workers compute the next buffer. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready[2];      /* buffer b computed, waiting to be written */
    size_t m[2];
    int stop;          /* no more buffers will come */
    xtts_status st;    /* the writer's first error; later buffers are drained unwritten */
    xtts_error err;
    slot *buf[2];
    const xtts_melcache_options *o;
    const input_set *in;
    const char *tokens_name;
    xtts_cache_writer *w;
    run_stats *stats;
    xtts_progress prog;
    uint64_t done_sel, selected;
    double t0, audio_at_start;
    uint8_t *keys_value;  /* a computed record's "keys" value, packed before its put */
    int measure;       /* store each record's quality metrics */
    int quality_noted; /* QUALITY_KEY is in the writer's state */
    int speakers_noted; /* SPEAKERS_KEY is */
} write_pipe;

/* One record into the writer: a carried-over one with its entries as the source held them;
 * a computed one with its content key and sums, and its quality metrics when the build
 * stores them. */
static xtts_status put_record(write_pipe *p, const slot *s, xtts_error *err) {
    const input_rec *x = &s->rec;
    if (s->reused)
        return xtts_cache_writer_put_entries(p->w, s->input, x->id, s->bytes, s->len, x->audio_path, s->ent, s->n_ent,
                                             err);
    int nm = p->o->cfg.mel.n_mels;
    xtts_keys_value_pack(s->key, nm, s->sum, s->sumsq, p->keys_value);
    xtts_cache_entry v[2] = {{XTTS_KEYS_DB, p->keys_value, xtts_keys_value_bytes(nm)}};
    size_t n = 1;
    uint8_t q[XTTS_QUALITY_BYTES];
    if (p->measure) {
        xtts_quality_encode(&s->quality, q);
        v[n++] = (xtts_cache_entry){XTTS_CACHE_DB_QUALITY, q, sizeof q};
    }
    return xtts_cache_writer_put_entries(p->w, s->input, x->id, s->bytes, s->len, x->audio_path, v, n, err);
}

static xtts_status write_buffer(write_pipe *p, const slot *buf, size_t m, xtts_error *err) {
    const xtts_melcache_options *o = p->o;
    run_stats *stats = p->stats;
    xtts_status st = XTTS_OK;
    for (size_t k = 0; k < m && !st; k++) {
        const slot *s = &buf[k];
        const input_rec *x = &s->rec;
        if (!p->speakers_noted) { /* joins the commit of this first input */
            if ((st = xtts_cache_writer_set_state(p->w, SPEAKERS_KEY, "sorted", 6, err))) break;
            p->speakers_noted = 1;
        }
        if (p->measure && !p->quality_noted) { /* joins the commit of this first input */
            if ((st = xtts_cache_writer_set_state(p->w, QUALITY_KEY, "1", 1, err))) break;
            p->quality_noted = 1;
        }
        if (s->ok) {
            stats->frames += s->n_frames;
            stats->tokens += s->n_tokens;
            stats->audio_seconds += (double)s->n_pcm / o->cfg.mel.sample_rate;
            if (s->split == XTTS_SPLIT_VAL) stats->val++; else stats->train++;
            for (int c = 0; c < o->cfg.mel.n_mels; c++) {
                stats->sum[c] += s->sum[c];
                stats->sumsq[c] += s->sumsq[c];
            }
            /* a kept record is not written: its sums join the state saved with the next
             * input the writer takes, which a resume starts after */
            if (!s->kept) st = stats_save(p->w, stats, err);
            if (!st && !s->kept) st = inputs_save(p->w, s->digest, x->id, err);
            if (!st && !s->kept) st = put_record(p, s, err);
        } else {
            report_reject(o, p->tokens_name, x, s->input, s->reason);
            st = stats_save(p->w, stats, err);
            if (!st) st = inputs_save(p->w, s->digest, x->id, err);
            if (!st) st = xtts_cache_writer_reject(p->w, s->input, x->id, s->reason, err);
        }
        p->done_sel++;
    }
    char extra[128];
    double el = xtts_now_s() - p->t0;
    snprintf(extra, sizeof extra, "%.3f h audio, %.1f h/h", stats->audio_seconds / 3600.0,
             el > 0 ? (stats->audio_seconds - p->audio_at_start) / el : 0.0);
    xtts_progress_update(&p->prog, p->done_sel, p->selected, extra);
    return st;
}

static void *write_loop(void *arg) {
    write_pipe *p = arg;
    for (int b = 0;; b ^= 1) {
        pthread_mutex_lock(&p->mu);
        while (!p->ready[b] && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->ready[b]) { pthread_mutex_unlock(&p->mu); break; }
        int failed = p->st != XTTS_OK;
        pthread_mutex_unlock(&p->mu);
        xtts_error e;
        xtts_status st = failed ? XTTS_OK : write_buffer(p, p->buf[b], p->m[b], &e);
        pthread_mutex_lock(&p->mu);
        if (st && !p->st) { p->st = st; p->err = e; }
        p->ready[b] = 0;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

/* One build, from the options to the result: what the steps of xtts_melcache_run set up,
 * all of it released in one place (run_free) however far the run got. */
typedef struct {
    xtts_melcache_options o;   /* the caller's, with the tokenizer fields taken from the stream */
    const char *tokens_name;
    xtts_melcache_result *res;
    double t0;
    input_set in;
    uint64_t lo, hi;           /* this part's block of inputs, [lo, hi) */
    xtts_cache_writer *w;
    run_stats *stats;
    uint64_t start;            /* the first input the writer has not stored */
    int threads;
    size_t chunk;              /* records a buffer holds */
    worker *wk;                /* [threads] */
    slot_bufs *wbufs;          /* [threads]: the workers' buffers of the CPU path */
    slot_bufs *own;            /* [chunk]: the batch pipeline's, one a record of the buffer computed */
    slot *slots;               /* [2 * chunk]: two buffers, one computed while the other is written */
    double *sums;              /* the slots' sum and sumsq, [2 * chunk][2][n_mels] */
    xtts_mel_batch *engine;    /* the batch engine, once gpu_ready has it (a CUDA one is made on
                                  its own thread) */
    xtts_melcache_device_model auto_model; /* --device auto's cost model */
    xtts_melcache_batch_options batch; /* XTTS_MELCACHE_BATCH's settings */
    int batched;               /* the mels go through the batch pipeline (the CUDA path, or the CPU
                                  engine asked for by XTTS_MELCACHE_BATCH) */
    struct gpu_start *gpu_starting; /* the CUDA engine being made on its own thread, or NULL */
    engine_thread engine_thr;  /* with batched: the thread the engine computes on */
    int measure;               /* the build stores quality metrics */
    xtts_quality_state **qs;   /* [threads], when it does (else NULL) */
    write_pipe wp;
    /* updates and reuse (formats/cache.md, "Content keys") */
    char cfg_hash[65];
    xtts_audio_hasher *hasher;
    xtts_cache_source *src;    /* the cache records are carried from, or NULL */
    char target[4096];         /* with staging: the cache the update replaces (its absolute path) */
    char stage[4096];          /* with staging: where the update is built (o.out_dir points here) */
    int staging;
    int lock_fd;               /* the target's build lock, shared, while it is a source */
    uint8_t *keys_value;       /* [xtts_keys_value_bytes(n_mels)], the writer thread's */
    /* a shared update (cache/share.h) */
    xtts_share_plan *plan;     /* what stays in the old shards, or NULL: every record is written */
    uint8_t *plan_keys;        /* [hi - lo][32]: the inputs' content keys, from the plan's pass */
    uint8_t *keep_bits;        /* [(hi - lo + 7) / 8]: input lo + i is kept */
    uint64_t *found_at;        /* the plan's pass: the source records the inputs' ids name */
    size_t n_found;
} melcache_run;

static void run_init(melcache_run *r, const xtts_melcache_options *o, const char *tokens_name,
                     xtts_melcache_result *res) {
    memset(r, 0, sizeof *r);
    r->o = *o;
    r->tokens_name = tokens_name;
    r->res = res;
    memset(res, 0, sizeof *res);
    r->t0 = xtts_now_s();
    r->lock_fd = -1;
}

/* The options, the device, then the first pass over the token stream, whose header
 * decides the tokenizer fields of the configuration. */
static xtts_status run_read_inputs(melcache_run *r, FILE *tokens, xtts_error *err) {
    xtts_melcache_options *o = &r->o;
    xtts_status st = xtts_mel_params_check(&o->cfg.mel, err);
    if (st) return st;
    if (o->n_parts < 1 || o->part >= o->n_parts) return xtts_error_set(err, XTTS_EUSAGE, "--part: bad part number");
    st = choose_device(o, &r->auto_model, r->res->device, sizeof r->res->device, err);
    if (st) return st;
    xtts_melcache_batch_options_defaults(&r->batch);
    st = xtts_melcache_batch_options_parse(&r->batch, getenv(XTTS_MELCACHE_BATCH_ENV), err);
    if (st) return st;
    st = scan_inputs(tokens, r->tokens_name, o->cfg.val_fraction, o->exclude, &r->in, err);
    if (st) return st;
    const xtts_tokens_header *h = &r->in.hdr;
    snprintf(o->cfg.tokenizer, sizeof o->cfg.tokenizer, "%s", h->tokenizer);
    snprintf(o->cfg.vocab_hash, sizeof o->cfg.vocab_hash, "%s", h->vocab_hash);
    o->cfg.vocab_size = h->vocab_size;
    o->cfg.max_tokens = h->max_tokens;
    o->cfg.pad_token = h->pad_id;
    if (o->cfg.max_tokens <= 0 || o->cfg.max_tokens > XTTS_RECORD_MAX_TOKENS)
        return xtts_error_set(err, XTTS_EINPUT, "%s: header max_tokens=%d out of range", r->tokens_name, o->cfg.max_tokens);
    r->res->inputs = r->in.n;
    r->res->test_held_out = r->in.n_test;
    r->res->excluded = r->in.n_excluded;
    r->res->split_given = r->in.split_given;
    r->res->val_by_fraction = r->in.val_by_fraction;
    r->lo = 0;
    r->hi = r->in.n;
    if (o->part >= 0) xtts_part_block(r->in.n, o->part, o->n_parts, &r->lo, &r->hi);
    xtts_cache_config_hash(&o->cfg, r->cfg_hash);
    return XTTS_OK;
}

static xtts_status inputs_check(melcache_run *r, xtts_error *err);

/* 1 when the writer's state holds key (whatever its value). */
static int state_has(xtts_cache_writer *w, const char *key) {
    void *data = NULL;
    size_t len = 0;
    xtts_error e;
    int has = xtts_cache_writer_get_state(w, key, &data, &len, &e) != XTTS_ENOTFOUND;
    free(data);
    return has;
}

/* 1 when the build in w measures quality metrics: a new one, or one that stored them from its
 * first input on (QUALITY_KEY); 0 for a build begun before the metrics. */
static int build_has_metrics(xtts_cache_writer *w) {
    return xtts_cache_writer_next_input(w) == 0 || state_has(w, QUALITY_KEY);
}

/* 0 when the records stored so far may carry speaker ids of another numbering: a build begun
 * before SPEAKERS_KEY, of a stream with more than one speaker (with one, every id is 0). */
static int speakers_agree(melcache_run *r) {
    return r->start <= r->lo || r->in.n_speakers <= 1 || state_has(r->w, SPEAKERS_KEY);
}

/* With --force: the stored build removed, a new one begun from this stream. */
static xtts_status run_replace(melcache_run *r, xtts_cache_writer_options *wo, xtts_error *err) {
    xtts_cache_writer_abort(r->w);
    r->w = NULL;
    wo->replace = 1;
    xtts_status st = xtts_cache_writer_open(wo, &r->o.cfg, &r->w, err);
    if (!st) st = stats_load(r->w, r->stats, r->o.cfg.mel.n_mels, err);
    r->start = r->w ? xtts_cache_writer_next_input(r->w) : 0;
    r->res->resumed_from = r->start;
    return st;
}

/* Open the part's shard writer, which tells where a previous run stopped, and the statistics
 * saved up to there. A stored build of another input is refused, or with --force replaced by
 * an empty one. */
static xtts_status run_open_or_resume(melcache_run *r, xtts_error *err) {
    const xtts_melcache_options *o = &r->o;
    xtts_cache_writer_options wo = {
        .dir = o->out_dir, .part = o->part, .n_parts = o->n_parts, .force = o->force, .part_first = r->lo,
        .part_end = r->hi, .shard_bytes = o->shard_bytes, .commit_every = o->commit_every,
    };
    xtts_status st = xtts_cache_writer_open(&wo, &o->cfg, &r->w, err);
    if (st) return st;
    if (!(r->stats = calloc(1, sizeof *r->stats))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    st = stats_load(r->w, r->stats, o->cfg.mel.n_mels, err);
    if (st) return st;
    r->start = xtts_cache_writer_next_input(r->w);
    r->res->resumed_from = r->start;
    st = inputs_check(r, err);
    if (st == XTTS_EMISMATCH && o->force) { /* --force: rebuild from this stream */
        st = run_replace(r, &wo, err);
        if (!st) st = inputs_check(r, err);
    }
    if (!st && !speakers_agree(r)) {
        if (o->force) {
            st = run_replace(r, &wo, err);
            if (!st) st = inputs_check(r, err);
        } else {
            st = xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build begun by an earlier xtts-melcache, which "
                                "numbered speakers by first appearance; use --force to rebuild it", o->out_dir);
        }
    }
    /* a build begun before the quality metrics: --force rebuilds it with them; a plain resume
     * goes on without them, so that no cache has them for some records only */
    if (!st && !build_has_metrics(r->w) && o->force) {
        st = run_replace(r, &wo, err);
        if (!st) st = inputs_check(r, err);
    }
    if (st) return st;
    r->measure = build_has_metrics(r->w);
    if (!r->measure)
        fprintf(stderr, "xtts-melcache: %s: the records stored before this run carry no quality metrics, so the "
                "records this run adds carry none either; run it again with --force to rebuild it with them\n", o->out_dir);
    /* A part takes one contiguous block of the input, so the parts' records, joined in part
     * order, are in input order: a cache has the same records at the same indexes however
     * it was built (formats/cache.md, "Builds in parts"). */
    r->res->selected = r->hi - r->lo;
    return XTTS_OK;
}

/* A record builder per thread, two buffers of slots, and the GPU's batch when the mels are
 * computed there. */
/* One quality-metrics state a worker, when the build stores metrics (known once the writer
 * has told whether a resumed build began with them). */
static xtts_status quality_states_new(melcache_run *r, xtts_error *err) {
    if (!r->measure) return XTTS_OK;
    if (!(r->qs = calloc((size_t)r->threads, sizeof *r->qs))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (int t = 0; t < r->threads; t++) {
        xtts_status st = xtts_quality_state_new(&r->qs[t], err);
        if (st) return st;
    }
    return XTTS_OK;
}

static xtts_status run_start_workers(melcache_run *r, xtts_error *err) {
    const xtts_cache_config *cfg = &r->o.cfg;
    size_t nm = (size_t)cfg->mel.n_mels;
    r->threads = r->o.threads > 0 ? r->o.threads : omp_get_max_threads();
    r->chunk = (size_t)r->threads * 16;
    if (r->chunk < 32) r->chunk = 32;
    if (r->chunk > 1024) r->chunk = 1024; /* the CUDA batch's bound */
    if (r->batch.buffer_records > 0) r->chunk = (size_t)r->batch.buffer_records;
    r->wk = calloc((size_t)r->threads, sizeof *r->wk);
    r->wbufs = calloc((size_t)r->threads, sizeof *r->wbufs);
    r->own = calloc(r->chunk, sizeof *r->own);
    r->slots = calloc(2 * r->chunk, sizeof *r->slots);
    r->sums = calloc(2 * r->chunk * 2 * nm, sizeof(double));
    if (!r->wk || !r->wbufs || !r->own || !r->slots || !r->sums) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t k = 0; k < 2 * r->chunk; k++) {
        r->slots[k].sum = r->sums + k * 2 * nm;
        r->slots[k].sumsq = r->slots[k].sum + nm;
    }
    if (!(r->keys_value = malloc(xtts_keys_value_bytes(cfg->mel.n_mels)))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status hs = xtts_audio_hasher_new(&r->hasher, err);
    if (hs) return hs;
    for (int t = 0; t < r->threads; t++) {
        xtts_status st = xtts_record_builder_init(&r->wk[t], cfg, 1, err);
        if (st) return st;
    }
    return XTTS_OK;
}

/* The device context, made on a thread of its own: the device's start-up (context, pinned and
 * device buffers, cuFFT plans) overlaps the decoding of the first buffer instead of preceding
 * it. Nothing else touches CUDA until gpu_ready has joined the thread. */
typedef struct gpu_start {
    pthread_t thread;
    const xtts_mel_params *mel;
    int ordinal;
    size_t max_clips, max_samples;
    xtts_mel_batch *engine;
    xtts_status st;
    xtts_error err;
} gpu_start;

static void *gpu_start_main(void *arg) {
    gpu_start *g = arg;
    xtts_error_clear(&g->err);
    g->st = xtts_mel_batch_new_cuda(g->mel, g->ordinal, g->max_clips, g->max_samples, &g->engine, &g->err);
    return NULL;
}

/* The records this run will compute: the part's inputs not stored yet, less those an update
 * keeps in the old shards (an upper bound where --reuse or an update copies more). */
static uint64_t records_to_compute(const melcache_run *r) {
    uint64_t from = r->start > r->lo ? r->start : r->lo;
    uint64_t n = r->hi > from ? r->hi - from : 0;
    if (r->keep_bits)
        for (uint64_t i = from; i < r->hi; i++)
            if (r->keep_bits[(i - r->lo) / 8] >> ((i - r->lo) % 8) & 1) n--;
    return n;
}

/* The line on stderr that says a build goes through the batch pipeline as XTTS_MELCACHE_BATCH
 * set it. */
static void batch_note(const melcache_run *r, const char *engine) {
    const char *env = getenv(XTTS_MELCACHE_BATCH_ENV);
    if (env && *env)
        fprintf(stderr, "xtts-melcache: batch pipeline: %s engine, buffers of %zu records in %d sub-batches (%s)\n",
                engine, r->chunk, r->batch.sub_batches, XTTS_MELCACHE_BATCH_ENV);
}

/* The engine g made (or failed to make) into r; g is freed. */
static xtts_status gpu_take(melcache_run *r, gpu_start *g, xtts_error *err) {
    r->engine = g->engine;
    xtts_status st = g->st;
    if (st && err) *err = g->err;
    free(g);
    return st;
}

/* Begin the CUDA engine of this run's device on a thread of its own (gpu_ready waits for it),
 * or make it here when no thread can be made. */
static xtts_status gpu_begin(melcache_run *r, xtts_error *err) {
    const xtts_cache_config *cfg = &r->o.cfg;
    gpu_start *g = calloc(1, sizeof *g);
    if (!g) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    g->mel = &cfg->mel;
    g->ordinal = atoi(r->res->device + 5);
    g->max_clips = r->chunk;
    g->max_samples = r->chunk * ((size_t)xtts_cache_config_max_padded_frames(cfg) + 2) * (size_t)cfg->mel.hop_samples +
                     r->chunk * (size_t)cfg->mel.n_fft;
    if (pthread_create(&g->thread, NULL, gpu_start_main, g) == 0) {
        r->gpu_starting = g;
        return XTTS_OK;
    }
    gpu_start_main(g);
    return gpu_take(r, g, err);
}

/* The device for this run (auto decided now that the build's size is known), and the batch
 * engine when the mels go through the batch pipeline: with a CUDA device its engine begun on
 * its own thread (gpu_begin); on the CPU, the CPU batch engine when XTTS_MELCACHE_BATCH asks
 * for it. */
static xtts_status run_start_device(melcache_run *r, xtts_error *err) {
    uint64_t n = records_to_compute(r);
    if (device_is_auto(&r->o))
        choose_auto_device(&r->o.cfg, &r->auto_model, r->threads, n, r->res->device, sizeof r->res->device);
    /* with nothing left to compute (a finished build resumed), no device start-up */
    if (n == 0) return XTTS_OK;
    int cuda = !strncmp(r->res->device, "cuda:", 5);
    if (!cuda && !r->batch.cpu_engine) return XTTS_OK;
    batch_note(r, cuda ? "cuda" : "cpu");
    xtts_status st = cuda ? gpu_begin(r, err) : xtts_mel_batch_new_cpu(&r->o.cfg.mel, &r->engine, err);
    if (st) return st;
    r->batched = 1;
    engine_thread_start(&r->engine_thr);
    return XTTS_OK;
}

/* Wait for the CUDA engine begun by gpu_begin; its error, if it failed. */
static xtts_status gpu_ready(melcache_run *r, xtts_error *err) {
    gpu_start *g = r->gpu_starting;
    if (!g) return XTTS_OK;
    pthread_join(g->thread, NULL);
    r->gpu_starting = NULL;
    return gpu_take(r, g, err);
}

/* Start the writer thread over the two buffers; its progress line counts the records of the
 * part stored before this run as done. */
static xtts_status pipe_start(melcache_run *r, pthread_t *thread, xtts_error *err) {
    write_pipe *p = &r->wp;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->o = &r->o; p->in = &r->in; p->tokens_name = r->tokens_name; p->w = r->w; p->stats = r->stats;
    p->buf[0] = r->slots; p->buf[1] = r->slots + r->chunk;
    p->keys_value = r->keys_value;
    p->selected = r->res->selected;
    p->t0 = r->t0;
    p->audio_at_start = r->stats->audio_seconds;
    p->measure = r->measure;
    r->res->metrics = r->measure;
    p->done_sel = r->start > r->lo ? (r->start < r->hi ? r->start - r->lo : r->hi - r->lo) : 0;
    xtts_progress_init(&p->prog, "xtts-melcache", r->o.progress);
    if (pthread_create(thread, NULL, write_loop, p) != 0) {
        pthread_mutex_destroy(&p->mu); pthread_cond_destroy(&p->cv);
        return xtts_error_set(err, XTTS_ENOMEM, "cannot start the writer thread");
    }
    return XTTS_OK;
}

/* Wait until the writer is done with buffer b; 1 when it has failed (nothing more is computed). */
static int pipe_wait_free(write_pipe *p, int b) {
    pthread_mutex_lock(&p->mu);
    while (p->ready[b] && !p->st) pthread_cond_wait(&p->cv, &p->mu);
    int failed = p->st != XTTS_OK;
    pthread_mutex_unlock(&p->mu);
    return failed;
}

static void pipe_hand_over(write_pipe *p, int b, size_t m) {
    pthread_mutex_lock(&p->mu);
    p->m[b] = m;
    p->ready[b] = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* No more buffers: the writer writes what it was handed, then ends; its error is the run's
 * unless the run already has one. */
static xtts_status pipe_stop(write_pipe *p, pthread_t thread, xtts_status st, xtts_error *err) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    if (!st && p->st) {
        st = p->st;
        if (err) *err = p->err;
    }
    return st;
}

/* The next inputs before `end` into buf, a chunk at most; *m: how many. */
static xtts_status fill_buffer(melcache_run *r, slot *buf, uint64_t *next, uint64_t end, size_t *m, xtts_error *err) {
    xtts_status st = XTTS_OK;
    *m = 0;
    while (*m < r->chunk && *next < end) {
        if ((st = input_next(&r->in, &buf[*m].rec, err))) break;
        buf[*m].input = (*next)++;
        buf[*m].reused = 0;
        buf[*m].n_ent = 0;
        (*m)++;
    }
    return st;
}

/* ---- content keys, carried records ------------------------------------------------ */

/* The content key of the slot's input: its audio file's content hash (read, not decoded)
 * and the stream's fields. */
static void key_one(melcache_run *r, slot *s) {
    const input_rec *x = &s->rec;
    uint8_t audio[32];
    int readable = xtts_audio_hasher_hash(r->hasher, x->audio_path, audio) == 0;
    xtts_content_key_input ki = {
        .config_hash = r->cfg_hash, .audio_hash = readable ? audio : NULL, .id = x->id,
        .speaker = r->in.speakers[x->speaker_id], .lang = x->lang, .split = x->split, .tokens = x->tokens,
        .n_tokens = x->n_tokens, .text = x->text, .orig_text = x->orig_text, .reject = x->reject,
    };
    xtts_content_key(&ki, s->key);
}

/* The buffer's keys (on the worker threads), then, in input order, the running digest of
 * the keys and each slot's copy of it. */
static void keys_buffer(melcache_run *r, slot *buf, size_t m) {
    if (r->plan_keys) /* the plan's pass computed them */
        for (size_t k = 0; k < m; k++) memcpy(buf[k].key, r->plan_keys + (buf[k].input - r->lo) * 32, 32);
    else {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 8)
        for (size_t k = 0; k < m; k++) key_one(r, &buf[k]);
    }
    for (size_t k = 0; k < m; k++) {
        xtts_sha256_update(&r->in.ih.ctx, buf[k].key, XTTS_CONTENT_KEY_BYTES);
        r->in.ih.upto++;
        inputs_digest(&r->in, buf[k].digest);
    }
}

/* Take the source's record for the slot, when it holds one with the slot's key: its bytes
 * with this build's speaker and language ids, its sums, its entries. 0 when it cannot be
 * taken (then it is computed). */
static int take_hit(melcache_run *r, slot *s, const xtts_cache_source_hit *h) {
    const xtts_cache_config *c = &r->o.cfg;
    uint8_t *copy = realloc(s->bytes, h->len);
    if (!copy) return 0;
    s->bytes = copy;
    memcpy(copy, h->record, h->len);
    xtts_record_header hdr;
    xtts_error e;
    if (xtts_record_set_ids(copy, h->len, (uint32_t)s->rec.speaker_id, (uint32_t)s->rec.lang_id, &e) ||
        xtts_record_parse_header(copy, h->len, &hdr, &e) ||
        xtts_keys_value_unpack(h->keys_value, h->keys_len, c->mel.n_mels, s->sum, s->sumsq))
        return 0;
    s->len = h->len;
    s->n_frames = hdr.n_frames;
    s->n_pcm = hdr.n_samples;
    s->n_tokens = hdr.n_tokens;
    s->split = hdr.split;
    memcpy(s->ent, h->entries, h->n_entries * sizeof *h->entries);
    s->n_ent = h->n_entries;
    s->reused = 1;
    s->ok = 1;
    return 1;
}

/* A build that stores quality metrics takes only records that carry them (a source built
 * without them, by resuming a build begun before them, holds none). */
static int hit_complete(const melcache_run *r, const xtts_cache_source_hit *h) {
    if (!r->measure && !r->o.dry_run) return 1;
    for (size_t i = 0; i < h->n_entries; i++)
        if (!strcmp(h->entries[i].db, XTTS_CACHE_DB_QUALITY)) return 1;
    return 0;
}

static int is_kept(const melcache_run *r, uint64_t input) {
    return r->keep_bits && (r->keep_bits[(input - r->lo) / 8] >> ((input - r->lo) % 8) & 1);
}

/* A slot the plan keeps in the source: its figures and sums, for the statistics. */
static xtts_status keep_one(melcache_run *r, slot *s, xtts_error *err) {
    xtts_cache_source_hit h;
    xtts_record_header hdr;
    xtts_error e;
    xtts_status st = xtts_cache_source_find(r->src, s->rec.id, s->key, &h, err);
    if (st) return st;
    if (!h.same || xtts_record_parse_header(h.record, h.len, &hdr, &e) ||
        xtts_keys_value_unpack(h.keys_value, h.keys_len, r->o.cfg.mel.n_mels, s->sum, s->sumsq))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: record '%s' changed since the update planned to keep it",
                              r->target, s->rec.id);
    s->n_frames = hdr.n_frames;
    s->n_pcm = hdr.n_samples;
    s->n_tokens = hdr.n_tokens;
    s->split = hdr.split;
    s->reused = s->kept = s->ok = 1;
    r->res->reused++;
    r->res->shared++;
    return XTTS_OK;
}

/* Look every slot of the buffer up in the source, in input order (one thread: the source's
 * transactions are not shared); with dry_run only count. */
static xtts_status reuse_buffer(melcache_run *r, slot *buf, size_t m, xtts_error *err) {
    const xtts_cache_config *c = &r->o.cfg;
    for (size_t k = 0; k < m; k++) {
        slot *s = &buf[k];
        const input_rec *x = &s->rec;
        s->reused = s->kept = 0;
        if (is_kept(r, s->input)) {
            xtts_status st = keep_one(r, s, err);
            if (st) return st;
            continue;
        }
        /* what the build would reject is computed (and rejected) again */
        int storable = !x->reject && x->lang_id >= 0 && x->n_tokens > 0 && x->n_tokens <= (uint32_t)c->max_tokens;
        xtts_cache_source_hit h = {0};
        if (r->src && storable) {
            xtts_status st = xtts_cache_source_find(r->src, x->id, s->key, &h, err);
            if (st) return st;
        }
        if (h.same && hit_complete(r, &h) && (r->o.dry_run || take_hit(r, s, &h))) {
            s->reused = 1;
            r->res->reused++;
            continue;
        }
        r->res->computed++;
        if (h.found) r->res->replaced++;
    }
    return XTTS_OK;
}

/* On the worker threads, in one loop: load the slots [l0, l1) and finish the slots [f0, f1)
 * of a buffer (either range may be empty). The k-th slot of the buffer loads into the
 * pipeline's k-th buffers (r->own), and a thread takes one slot at a time with its own
 * worker state. */
static void load_and_finish(melcache_run *r, slot *buf, size_t l0, size_t l1, size_t f0, size_t f1) {
    const xtts_melcache_options *o = &r->o;
    worker *wk = r->wk;
    xtts_quality_state **qs = r->qs;
    size_t nl = l1 - l0, n = nl + (f1 - f0);
    if (n == 0) return;
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++) {
        int t = omp_get_thread_num();
        slot *s = i < nl ? &buf[l0 + i] : &buf[f0 + (i - nl)];
        if (s->reused) continue;
        if (i < nl) load_one(o, &wk[t], qs ? qs[t] : NULL, s, &r->own[l0 + i], 1);
        else finish_one(o, &wk[t], s);
    }
}

/* The batch pipeline over a buffer of m slots cut into n_sub sub-batches: while the engine
 * computes the mels of sub-batch s on a thread of its own, the workers load sub-batch s+1 and
 * finish (check, pad, encode) sub-batch s-1. The three touch disjoint slots, and each step
 * ends with the engine's thread joined, so a slot's load, mel and finish follow one another. */
static xtts_status compute_batched(melcache_run *r, slot *buf, size_t m, xtts_error *err) {
    size_t n_sub = (size_t)r->batch.sub_batches < m ? (size_t)r->batch.sub_batches : m;
#define SUB_AT(i) ((i) >= n_sub ? m : m * (i) / n_sub) /* sub-batch i is [SUB_AT(i), SUB_AT(i+1)) */
    load_and_finish(r, buf, 0, SUB_AT(1), 0, 0);
    xtts_error ge;
    xtts_status gs = gpu_ready(r, &ge); /* the first buffer's loading overlapped the CUDA start-up */
    for (size_t sb = 0; !gs && sb < n_sub; sb++) {
        mel_job j = {.engine = r->engine, .slots = buf, .lo = SUB_AT(sb), .hi = SUB_AT(sb + 1)};
        mel_job_post(&r->engine_thr, &j);
        load_and_finish(r, buf, SUB_AT(sb + 1), SUB_AT(sb + 2), sb ? SUB_AT(sb - 1) : 0, sb ? SUB_AT(sb) : 0);
        gs = mel_job_wait(&r->engine_thr, &j, &ge);
    }
    if (!gs) load_and_finish(r, buf, m, m, SUB_AT(n_sub - 1), m);
#undef SUB_AT
    if (gs && err) *err = ge;
    return gs;
}

/* A buffer's records through load, mel and finish: on the CPU path each worker takes a record
 * through all three; on the batch pipeline (compute_batched) the mels go to the engine. A
 * record that fails is rejected in its slot; a failure of the engine stops the run (the
 * writer keeps what is committed, a re-run resumes). */
static xtts_status compute_buffer(melcache_run *r, slot *buf, size_t m, xtts_error *err) {
    const xtts_melcache_options *o = &r->o;
    worker *wk = r->wk;
    slot_bufs *wbufs = r->wbufs;
    int threads = r->threads;
    keys_buffer(r, buf, m);
    xtts_status rs = reuse_buffer(r, buf, m, err);
    if (rs) return rs;
    if (r->batched) return compute_batched(r, buf, m, err);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (size_t k = 0; k < m; k++) {
        if (buf[k].reused) continue;
        worker *wt = &wk[omp_get_thread_num()];
        load_one(o, wt, r->qs ? r->qs[omp_get_thread_num()] : NULL, &buf[k], &wbufs[omp_get_thread_num()], 0);
        mel_one(wt, &buf[k]);
        finish_one(o, wt, &buf[k]);
    }
    return XTTS_OK;
}

/* The part's inputs not stored yet, a buffer at a time: the workers compute one buffer while
 * the writer thread writes the other. */
static xtts_status run_pipeline(melcache_run *r, xtts_error *err) {
    pthread_t writer_thread;
    xtts_status st = pipe_start(r, &writer_thread, err);
    if (st) return st;
    uint64_t next = r->start > r->lo ? r->start : r->lo; /* inputs_check left the stream there */
    for (int b = 0; !st && next < r->hi; b ^= 1) {
        if (pipe_wait_free(&r->wp, b)) break;
        size_t m;
        st = fill_buffer(r, r->wp.buf[b], &next, r->hi, &m, err);
        if (st || m == 0) break;
        st = compute_buffer(r, r->wp.buf[b], m, err);
        if (st) break;
        pipe_hand_over(&r->wp, b, m);
    }
    return pipe_stop(&r->wp, writer_thread, st, err);
}

/* ---- resuming and updating --------------------------------------------------------- */

/* The stored build's identity: the digest of the content keys of the inputs it consumed
 * (from the part's first input) and the last one's id. The stream is left at the first
 * input not stored, its running digest over the keys before it. */
static xtts_status inputs_check(melcache_run *r, xtts_error *err) {
    input_set *in = &r->in;
    const char *dir = r->o.out_dir;
    xtts_status st = inputs_seek(in, r->lo, err);
    xtts_sha256_init(&in->ih.ctx);
    in->ih.upto = 0;
    if (st || r->start <= r->lo) return st;
    void *data = NULL;
    size_t len = 0;
    xtts_error e2;
    st = xtts_cache_writer_get_state(r->w, INPUTS_KEY, &data, &len, &e2);
    if (st == XTTS_ENOTFOUND) return inputs_seek(in, r->start, err); /* a build from before the keys: unchecked */
    if (st) { if (err) *err = e2; return st; }
    if (len < 32) { free(data); return xtts_error_set(err, XTTS_ECORRUPT, "%s: saved input digest is damaged", dir); }
    char last[512], got[512] = "";
    snprintf(last, sizeof last, "%.*s", (int)(len - 32 > 400 ? 400 : len - 32), (const char *)data + 32);
    if (r->start > r->hi) {
        free(data);
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of %llu records (the last '%s'), %s has only %llu; "
                              "use --force to rebuild from this stream", dir, (unsigned long long)(r->start - r->lo), last,
                              r->tokens_name, (unsigned long long)(r->hi - r->lo));
    }
    uint64_t next = r->lo;
    while (!st && next < r->start) {
        size_t m;
        st = fill_buffer(r, r->slots, &next, r->start, &m, err);
        if (!st && m) {
            keys_buffer(r, r->slots, m);
            snprintf(got, sizeof got, "%.400s", r->slots[m - 1].rec.id);
        }
    }
    uint8_t d[32];
    inputs_digest(in, d);
    int same = !st && !memcmp(d, data, 32);
    free(data);
    if (st || same) return st;
    if (strcmp(got, last))
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of another input: its record %llu is '%s', %s's is '%s'; "
                              "use --force to rebuild from this stream", dir, (unsigned long long)r->start, last,
                              r->tokens_name, got);
    return xtts_error_set(err, XTTS_EMISMATCH, "%s: holds a build of another input: the first %llu records of %s differ from "
                          "those stored (ids, speakers, languages, splits, token ids, texts or audio contents); use --force "
                          "to rebuild from this stream", dir, (unsigned long long)(r->start - r->lo), r->tokens_name);
}

/* The source named by --reuse (or the cache an update replaces). */
static xtts_status open_source(melcache_run *r, const char *dir, xtts_error *err) {
    xtts_status st = xtts_cache_source_open(dir, r->cfg_hash, &r->src, err);
    if (st == XTTS_EUNSUPPORTED && err) {
        char m[XTTS_ERRMSG_MAX];
        snprintf(m, sizeof m, "%s", err->msg);
        xtts_error_set(err, XTTS_EUNSUPPORTED, "%.600s: records cannot be carried over from it; %s", m,
                       r->o.update ? "run --update --force once to rebuild it whole (later updates carry records over)"
                                   : "rebuild it with this version first");
    }
    if (!st) r->res->has_source = 1;
    return st;
}

/* --update: where the build goes. A missing or empty --out is a plain build, an unfinished
 * one is finished first; a finished cache of this configuration is the source of a build
 * beside it (staging); of another configuration it is refused, or with --force rebuilt in
 * place as without --update; one without content keys is refused, or with --force rebuilt
 * whole beside it. */
static xtts_status run_update_begin(melcache_run *r, xtts_error *err) {
    xtts_melcache_options *o = &r->o;
    xtts_cache_dir_state ds;
    xtts_status st = xtts_cache_dir_probe(o->out_dir, &ds, err);
    if (st || ds == XTTS_DIR_EMPTY) return st;
    if (ds == XTTS_DIR_UNFINISHED && !o->force)
        return xtts_error_set(err, XTTS_EINPUT, "%s: an unfinished build, not a cache to update: finish it first (the same "
                              "command without --update), or use --force to rebuild it", o->out_dir);
    if (ds == XTTS_DIR_UNFINISHED) return XTTS_OK;
    if (!o->dry_run && (st = xtts_update_dir_lock(o->out_dir, o->part < 0, &r->lock_fd, err))) return st; /* a dry run writes nothing */
    st = open_source(r, o->out_dir, err);
    if (st == XTTS_EMISMATCH && o->force) { /* rebuilt in place, as without --update: its writer locks it */
        xtts_update_dir_unlock(r->lock_fd);
        r->lock_fd = -1;
        return XTTS_OK;
    }
    if (st == XTTS_EUNSUPPORTED && o->force) st = XTTS_OK;
    if (st || o->dry_run) return st;
    /* absolute, so that "--out ." or "--out cache/" has a sibling to be exchanged with */
    errno = 0;
    if (!realpath(o->out_dir, r->target) || !strcmp(r->target, "/"))
        return xtts_error_set(err, XTTS_EIO, "%s: cannot update the cache here: %s", o->out_dir,
                              errno ? strerror(errno) : "the root directory");
    if ((st = xtts_update_dir_path(r->target, r->stage, sizeof r->stage, err))) return st;
    int resumed;
    if ((st = xtts_update_dir_prepare(r->target, r->stage, &resumed, err))) return st;
    r->staging = 1;
    o->out_dir = r->stage;
    o->force = 1; /* the stage is this update's own: whatever it holds that is not this build's goes */
    return XTTS_OK;
}

/* ---- a shared update (cache/share.h) ---------------------------------------------- */

#define SHARE_KEY "melcache-share" /* state: "1" an update that shares the old shards, "0" one that copies */

/* 1 when the source's record carries the ids this build gives the input (the speaker and
 * language tables agree on it), so that its stored bytes are a fresh build's. */
static int same_ids(const slot *s, const xtts_cache_source_hit *h) {
    xtts_record_header hdr;
    xtts_error e;
    return !xtts_record_parse_header(h->record, h->len, &hdr, &e) && hdr.speaker_id == (uint32_t)s->rec.speaker_id &&
           hdr.lang_id == (uint32_t)s->rec.lang_id;
}

/* The plan's step for each slot of a buffer, in input order: kept where the source stores
 * it, or taken by the writer; keys[] and found[] collect the keys and the source records
 * named. */
static xtts_status plan_buffer(melcache_run *r, slot *buf, size_t m, uint8_t *keys, uint8_t *bits, xtts_error *err) {
    const xtts_cache_config *c = &r->o.cfg;
    for (size_t k = 0; k < m; k++) {
        slot *s = &buf[k];
        const input_rec *x = &s->rec;
        uint64_t i = s->input - r->lo;
        memcpy(keys + i * 32, s->key, 32);
        int storable = !x->reject && x->lang_id >= 0 && x->n_tokens > 0 && x->n_tokens <= (uint32_t)c->max_tokens;
        xtts_cache_source_hit h = {0};
        xtts_status st = storable ? xtts_cache_source_find(r->src, x->id, s->key, &h, err) : XTTS_OK;
        if (st) return st;
        if (h.found) r->found_at[r->n_found++] = (uint64_t)h.dir << 40 | h.local;
        if (h.same && hit_complete(r, &h) && same_ids(s, &h)) {
            bits[i / 8] |= (uint8_t)(1u << (i % 8));
            (void)xtts_share_plan_keep(r->plan, h.dir, h.local, h.len); /* past the bound: the plan says so */
        } else {
            (void)xtts_share_plan_write(r->plan, s->input);
        }
    }
    return XTTS_OK;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the plan is taken: not when the stream names one source record twice (the
 * writer would reject the repeat, which it cannot see among kept records), nor when it is
 * not worth it. */
static int plan_taken(melcache_run *r) {
    qsort(r->found_at, r->n_found, sizeof *r->found_at, cmp_u64);
    for (size_t i = 1; i < r->n_found; i++)
        if (r->found_at[i] == r->found_at[i - 1]) {
            snprintf(r->res->compact_why, sizeof r->res->compact_why, "the stream repeats an id the cache holds");
            return 0;
        }
    return xtts_share_plan_worth(r->plan, r->res->compact_why, sizeof r->res->compact_why);
}

/* The mode an update began in (a re-run continues in it): 1 sharing, 0 copying, -1 not begun. */
static int share_mode_saved(melcache_run *r) {
    if (r->start <= r->lo) return -1;
    void *data = NULL;
    size_t len = 0;
    xtts_error e;
    if (xtts_cache_writer_get_state(r->w, SHARE_KEY, &data, &len, &e)) return 0; /* begun before sharing: copies */
    int on = len == 1 && *(char *)data == '1';
    free(data);
    return on;
}

/* The part's inputs from its first, a buffer at a time with their content keys, through
 * look (the plan's or the dry run's lookups; ctx is look's). */
typedef xtts_status (*keyed_look)(melcache_run *r, slot *buf, size_t m, void *ctx, xtts_error *err);
static xtts_status walk_keyed(melcache_run *r, keyed_look look, void *ctx, xtts_error *err) {
    xtts_status st = inputs_seek(&r->in, r->lo, err);
    uint64_t next = r->lo;
    while (!st && next < r->hi) {
        size_t m;
        st = fill_buffer(r, r->slots, &next, r->hi, &m, err);
        if (!st) keys_buffer(r, r->slots, m);
        if (!st) st = look(r, r->slots, m, ctx, err);
    }
    return st;
}

typedef struct {
    uint8_t *keys, *bits;
} plan_out;

static xtts_status plan_look(melcache_run *r, slot *buf, size_t m, void *ctx, xtts_error *err) {
    plan_out *p = ctx;
    return plan_buffer(r, buf, m, p->keys, p->bits, err);
}

static xtts_status reuse_look(melcache_run *r, slot *buf, size_t m, void *ctx, xtts_error *err) {
    (void)ctx;
    return reuse_buffer(r, buf, m, err);
}

/* The plan's pass over the inputs: their keys (kept for the build pass), and for each
 * whether it stays in the old shards. The stream and its running digest are left as the
 * resume left them. */
static xtts_status plan_pass(melcache_run *r, uint8_t *keys, uint8_t *bits, xtts_error *err) {
    inputs_hash saved = r->in.ih;
    plan_out p = {keys, bits};
    xtts_status st = walk_keyed(r, plan_look, &p, err);
    if (!st) st = inputs_seek(&r->in, r->start > r->lo ? r->start : r->lo, err);
    r->in.ih = saved;
    return st;
}

/* A whole update: plan which records stay in the old cache's shards, and share them when
 * that is worth it (else, or with --compact, every record is copied). */
static xtts_status run_plan(melcache_run *r, xtts_error *err) {
    xtts_melcache_result *res = r->res;
    int saved = share_mode_saved(r);
    xtts_error pe;
    if (saved == 0 || (saved < 0 && r->o.compact)) {
        res->compacted = 1;
        snprintf(res->compact_why, sizeof res->compact_why, saved == 0 ? "the update began copying" : "--compact");
    } else if (xtts_share_probe(r->src, r->stage, &pe)) {
        res->compacted = 1;
        snprintf(res->compact_why, sizeof res->compact_why, "%.150s", pe.msg);
    }
    if (res->compacted) return saved < 0 ? xtts_cache_writer_set_state(r->w, SHARE_KEY, "0", 1, err) : XTTS_OK;
    uint64_t n = r->hi - r->lo;
    uint8_t *keys = malloc(n ? n * 32 : 1);
    r->keep_bits = calloc((n + 7) / 8 + 1, 1);
    r->found_at = malloc((n ? n : 1) * sizeof *r->found_at);
    if (!keys || !r->keep_bits || !r->found_at) {
        free(keys);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    xtts_status st = xtts_share_plan_new(r->src, &r->plan, err);
    if (!st) st = plan_pass(r, keys, r->keep_bits, err);
    r->plan_keys = keys; /* the build pass takes the keys from here */
    if (st) return st;
    int take = plan_taken(r) || saved == 1;
    if (take) {
        xtts_share_figures f;
        xtts_share_plan_figures(r->plan, &f);
        res->shared_runs = f.runs;
        res->garbage_bytes = f.garbage_bytes;
        return saved < 0 ? xtts_cache_writer_set_state(r->w, SHARE_KEY, "1", 1, err) : XTTS_OK;
    }
    res->compacted = 1;
    xtts_share_plan_free(r->plan);
    r->plan = NULL;
    free(r->keep_bits);
    r->keep_bits = NULL;
    return xtts_cache_writer_set_state(r->w, SHARE_KEY, "0", 1, err);
}

/* --dry-run: the keys of the part's inputs looked up in the source; nothing is written. */
static xtts_status run_dry(melcache_run *r, xtts_error *err) {
    r->res->selected = r->hi - r->lo;
    xtts_status st = walk_keyed(r, reuse_look, NULL, err);
    if (r->src && r->o.part < 0) {
        uint64_t kept = r->res->reused + r->res->replaced, had = xtts_cache_source_records(r->src);
        r->res->has_dropped = 1;
        r->res->dropped = had > kept ? had - kept : 0;
    }
    return st;
}

/* The last part to finish joins the parts; earlier ones find parts missing. */
static xtts_status run_join_parts(melcache_run *r, xtts_error *err) {
    xtts_error me;
    xtts_status ms = xtts_cache_merge(r->o.out_dir, &me);
    if (ms == XTTS_OK) r->res->merged = 1;
    /* parts still missing, or another part merging right now: not this run's business;
     * anything else (parts built with other options, an id in two parts) is */
    else if (ms != XTTS_ENOTFOUND && ms != XTTS_EBUSY) return xtts_error_set(err, XTTS_EINPUT, "cannot join the parts: %s", me.msg);
    return XTTS_OK;
}

/* Count what the cache (or part) holds, write its manifest with the speakers, languages and
 * statistics, then join the parts when this was one. */
static xtts_status run_finish(melcache_run *r, xtts_error *err) {
    xtts_melcache_result *res = r->res;
    const char *langs[XTTS_MAX_LANGS];
    double mean[XTTS_RECORD_MAX_MELS], sd[XTTS_RECORD_MAX_MELS];
    xtts_manifest_extra extra;
    manifest_extra(&r->in, r->stats, langs, mean, sd, &extra);
    res->stored = xtts_cache_writer_count(r->w);
    res->rejected = xtts_cache_writer_rejected(r->w);
    xtts_status st = xtts_cache_writer_finish(r->w, &extra, err);
    r->w = NULL;
    xtts_progress_finish(&r->wp.prog, r->wp.done_sel, res->selected, NULL);
    if (!st && r->o.part >= 0) st = run_join_parts(r, err);
    if (r->src && r->o.part < 0 && res->resumed_from == 0) {
        uint64_t kept = res->reused + res->replaced, had = xtts_cache_source_records(r->src);
        res->has_dropped = 1;
        res->dropped = had > kept ? had - kept : 0;
    }
    if (!st && r->plan) st = xtts_share_finish(r->plan, r->stage, &res->stored, err);
    if (!st && r->staging && (r->o.part < 0 || res->merged)) {
        xtts_share_plan_free(r->plan);
        r->plan = NULL;
        xtts_cache_source_close(r->src); /* its shards are about to be removed */
        r->src = NULL;
        st = xtts_update_dir_switch(r->target, r->stage, err);
        res->switched = !st;
    }
    return st;
}

/* The one cleanup of a run, whichever step it stopped at: an unfinished writer is aborted
 * (what it committed stays for a re-run). */
static void run_free(melcache_run *r) {
    if (r->w) xtts_cache_writer_abort(r->w);
    if (r->wk)
        for (int t = 0; t < r->threads; t++) xtts_record_builder_free(&r->wk[t]);
    if (r->wbufs)
        for (int t = 0; t < r->threads; t++) slot_bufs_free(&r->wbufs[t]);
    if (r->own)
        for (size_t k = 0; k < r->chunk; k++) slot_bufs_free(&r->own[k]);
    free(r->wk);
    free(r->wbufs);
    free(r->own);
    if (r->slots)
        for (size_t k = 0; k < 2 * r->chunk; k++) {
            free(r->slots[k].bytes);
            input_rec_free(&r->slots[k].rec);
        }
    gpu_ready(r, NULL); /* an engine still being made is waited for, then deleted */
    engine_thread_stop(&r->engine_thr);
    xtts_mel_batch_delete(r->engine);
    if (r->qs)
        for (int t = 0; t < r->threads; t++) xtts_quality_state_delete(r->qs[t]);
    free(r->qs);
    free(r->slots);
    free(r->sums);
    if (r->stats) r->res->audio_seconds = r->stats->audio_seconds;
    free(r->stats);
    input_free(&r->in);
    xtts_share_plan_free(r->plan);
    free(r->plan_keys);
    free(r->keep_bits);
    free(r->found_at);
    xtts_cache_source_close(r->src);
    xtts_audio_hasher_delete(r->hasher);
    free(r->keys_value);
    if (r->lock_fd >= 0) xtts_update_dir_unlock(r->lock_fd);
    r->res->wall_seconds = xtts_now_s() - r->t0;
}

xtts_status xtts_melcache_run(const xtts_melcache_options *o, FILE *tokens, const char *tokens_name,
                              xtts_melcache_result *res, xtts_error *err) {
    melcache_run r;
    run_init(&r, o, tokens_name, res);
    xtts_status st = run_read_inputs(&r, tokens, err);
    if (!st) st = run_start_workers(&r, err);
    if (!st && o->reuse_dir) st = open_source(&r, o->reuse_dir, err);
    if (!st && o->update) st = run_update_begin(&r, err);
    if (!st && o->dry_run) {
        st = run_dry(&r, err);
        run_free(&r);
        return st;
    }
    if (!st) st = run_open_or_resume(&r, err);
    if (!st && r.staging && o->part < 0) st = run_plan(&r, err);
    if (!st) st = quality_states_new(&r, err);
    if (!st) st = run_start_device(&r, err);
    if (!st) st = run_pipeline(&r, err);
    if (!st) st = run_finish(&r, err);
    run_free(&r);
    return st;
}
