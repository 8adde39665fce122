/* test_reader.c — the cache reader, xtts_verify_cache and the inspect exports, on
 * synthetic caches (tests/cache_fixture.h), intact and deliberately damaged.
 *
 * Also a fixture builder for the end-to-end tests:
 *   test_reader --make-cache DIR [RECORDS [PER_SHARD [fp16|fp32 [N_FFT [N_MELS [MAX_FRAMES [shuffle]]]]]]]
 */
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>
#include <sndfile.h>

#include "cache/audit/inspect.h"
#include "cache/store/read/reader.h"
#include "cache/store/writer_internal.h"
#include "cache/audit/verify.h"
#include "prep/melcache/recompute.h"
#include "kernels/mel.h"
#include "prep/audio/audio.h"
#include "tests/cache_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

typedef struct {
    char dir[4096];
} tmpdir_t;

static void tmp_make(tmpdir_t *t) {
    const char *base = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/xtts-reader-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(t->dir));
}

static void tmp_remove(tmpdir_t *t) { nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void build(const char *dir, const fixture_options *o) { assert_int_equal(fixture_build(dir, o), 0); }

/* Faults collected from xtts_verify_cache. */
typedef struct {
    int n;
    char text[64][600];
} faults_t;

static void collect(void *ctx, const xtts_verify_fault *f) {
    faults_t *fs = ctx;
    if (fs->n < 64)
        snprintf(fs->text[fs->n], sizeof fs->text[0], "%s|%lld|%s|%s", f->shard, (long long)f->index, f->id,
                 f->message);
    fs->n++;
}

static int faults_contain(const faults_t *fs, const char *needle) {
    for (int i = 0; i < fs->n && i < 64; i++)
        if (strstr(fs->text[i], needle)) return 1;
    return 0;
}

static void dump_faults(const faults_t *fs) {
    for (int i = 0; i < fs->n && i < 64; i++) fprintf(stderr, "  fault: %s\n", fs->text[i]);
}

static xtts_status verify(const char *dir, int deep, faults_t *fs, xtts_verify_report *rep) {
    xtts_verify_options o;
    xtts_verify_options_defaults(&o);
    o.recompute_fn = xtts_recompute_record;
    o.deep = deep;
    o.on_fault = collect;
    o.ctx = fs;
    memset(fs, 0, sizeof *fs);
    xtts_error e;
    return xtts_verify_cache(dir, &o, rep, &e);
}

static void flip_bit(const char *path, long off, int bit) {
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, off), 1);
    b ^= (uint8_t)(1u << bit);
    assert_int_equal(pwrite(fd, &b, 1, off), 1);
    close(fd);
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

/* Read every record through the API; returns how many failed (never crashes). */
static int read_all(const char *dir, unsigned flags, int *opened) {
    xtts_cache *c;
    xtts_error e;
    *opened = 0;
    if (xtts_cache_open_ex(dir, flags, &c, &e)) return -1;
    *opened = 1;
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    size_t T = xtts_cache_max_frames(c), C = (size_t)xtts_cache_get_config(c)->mel.n_mels;
    size_t K = (size_t)xtts_cache_get_config(c)->max_tokens;
    float *mel = malloc(C * T * sizeof *mel);
    int32_t *tok = malloc(K * sizeof *tok);
    int bad = 0;
    for (uint64_t i = 0; i < xtts_cache_count(c); i++) {
        xtts_record_header h;
        xtts_status st = xtts_cache_reader_get(r, i, &h, tok, K, mel, XTTS_DTYPE_F32, C, T, &e);
        if (st) {
            bad++;
            assert_true(strlen(e.msg) > 0);
            assert_null(strchr(e.msg, '\n'));
        }
        uint64_t idx;
        char id[32];
        snprintf(id, sizeof id, "utt-%05d", (int)i);
        (void)xtts_cache_reader_find(r, id, &idx, &e);
    }
    free(mel);
    free(tok);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    return bad;
}

/* ---- intact caches --------------------------------------------------------------------------- */

static void test_reader_returns_every_record_as_written(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_count(c), 40);
    assert_int_equal(xtts_cache_n_shards(c), 3);
    assert_string_equal(xtts_cache_shard_of(c, 0), "shard-00000");
    assert_string_equal(xtts_cache_shard_of(c, 15), "shard-00001");
    assert_string_equal(xtts_cache_shard_of(c, 39), "shard-00002");
    assert_null(xtts_cache_shard_of(c, 40));
    assert_int_equal(xtts_cache_max_frames(c), 48);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    float mel[16 * 48];
    int32_t tok[24];
    for (int i = 0; i < 40; i++) {
        xtts_record_header h;
        assert_int_equal(xtts_cache_reader_get(r, (uint64_t)i, &h, tok, 24, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_OK);
        char id[32];
        snprintf(id, sizeof id, "utt-%05d", i);
        assert_string_equal(h.id, id);
        assert_int_equal(h.n_tokens, fixture_n_tokens(&o, i));
        assert_int_equal(h.n_frames, fixture_n_frames(&o, i));
        assert_int_equal(h.speaker_id, i % 3);
        assert_int_equal(h.lang_id, i % 2);
        assert_int_equal(h.split, i % 5 == 0);
        for (int k = 0; k < (int)h.n_tokens; k++) assert_int_equal(tok[k], fixture_token(&o, i, k));
        for (int ch = 0; ch < 16; ch++)
            for (int f = 0; f < 48; f++) {
                float want = f < (int)h.n_frames ? fixture_mel_value(i, ch, f) : FIXTURE_PAD_VALUE;
                assert_true(mel[ch * 48 + f] == want);
            }
        xtts_record_header h2;
        assert_int_equal(xtts_cache_reader_header(r, (uint64_t)i, &h2, &e), XTTS_OK);
        assert_int_equal(h2.n_frames, h.n_frames);
        const void *raw;
        size_t len;
        assert_int_equal(xtts_cache_reader_raw(r, (uint64_t)i, &raw, &len, &e), XTTS_OK);
        assert_true(len > XTTS_RECORD_HEADER_BYTES);
        assert_memory_equal(raw, "XTRC", 4);
    }
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

static void test_reader_fp16_shuffled_cache_decodes_within_half_precision(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    o.dtype = XTTS_DTYPE_F16;
    o.shuffle = 1;
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    float mel[16 * 48];
    for (int i = 0; i < 40; i += 7) {
        xtts_record_header h;
        assert_int_equal(xtts_cache_reader_get(r, (uint64_t)i, &h, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_OK);
        for (int ch = 0; ch < 16; ch++)
            for (int f = 0; f < (int)h.n_frames; f++)
                assert_float_equal(mel[ch * 48 + f], fixture_mel_value(i, ch, f), 4e-3);
    }
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

static void test_find_returns_global_index_across_shards_and_notfound_for_unknown(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    for (int i = 0; i < 40; i++) {
        char id[32];
        uint64_t idx = 999;
        snprintf(id, sizeof id, "utt-%05d", i);
        assert_int_equal(xtts_cache_reader_find(r, id, &idx, &e), XTTS_OK);
        assert_int_equal(idx, i);
    }
    uint64_t idx;
    assert_int_equal(xtts_cache_reader_find(r, "nope", &idx, &e), XTTS_ENOTFOUND);
    assert_non_null(strstr(e.msg, "nope"));
    assert_int_equal(xtts_cache_reader_find(r, "", &idx, &e), XTTS_ENOTFOUND);
    float mel[16 * 48];
    assert_int_equal(xtts_cache_reader_get(r, 40, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_ERANGE);
    assert_int_equal(xtts_cache_reader_get(r, UINT64_MAX, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_ERANGE);
    char *v = NULL;
    size_t len;
    assert_int_equal(xtts_cache_reader_meta(r, 1, "format", &v, &len, &e), XTTS_OK);
    assert_string_equal(v, "xtts-cache 2"); /* the fixture's default format */
    free(v);
    assert_int_equal(xtts_cache_reader_meta(r, 1, "audio:utt-00001", &v, &len, &e), XTTS_ENOTFOUND);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

/* The fixture's manifest rewritten as format_version 3 with entries (name, local_first,
 * records) in global order, each entry's bytes summed from the records; the totals and
 * splits, which no longer hold, left out. */
typedef struct {
    const char *name;
    int local_first, records;
} range_t;

static void write_ranged_manifest(const char *dir, const range_t *e, size_t n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    assert_non_null(m);
    xtts_cache *c;
    xtts_cache_reader *r;
    xtts_error err;
    assert_int_equal(xtts_cache_open(dir, &c, &err), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &err), XTTS_OK);
    json_t *shards = json_array();
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        size_t si = 0;
        xtts_cache_shard s;
        for (;; si++) {
            xtts_cache_shard_get(c, si, &s);
            if (!strcmp(s.name, e[i].name)) break;
        }
        uint64_t bytes = 0;
        for (int k = 0; k < e[i].records; k++) {
            const void *buf;
            size_t len;
            assert_int_equal(xtts_cache_reader_raw(r, s.first_index + (uint64_t)(e[i].local_first + k), &buf, &len, &err), XTTS_OK);
            bytes += len;
        }
        json_array_append_new(shards, json_pack("{s:s, s:i, s:I, s:i, s:i}", "name", e[i].name, "records", e[i].records,
                                                "bytes", (json_int_t)bytes, "first_index", first, "local_first",
                                                e[i].local_first));
        first += e[i].records;
    }
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    json_object_set_new(m, "shards", shards);
    json_object_set_new(m, "records", json_integer(first));
    json_object_set_new(m, "format_version", json_integer(XTTS_MANIFEST_VERSION_SHARED));
    json_object_del(m, "splits");
    json_object_del(m, "totals");
    json_object_set_new(m, "stats", json_pack("{s:i}", "frames", 0));
    assert_int_equal(xtts_manifest_write(path, m, &err), XTTS_OK);
    json_decref(m);
}

/* A format_version 3 cache: entries are ranges of shard directories, a directory listed
 * twice; keys no entry lists (garbage) are no records: not read, not found by id, not
 * counted or faulted by verify; a range past the directory's records is damage. */
static void test_ranged_entries_read_and_verify_only_their_keys(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o); /* 40 records, 15 a shard */
    build(t.dir, &o);
    const range_t e[] = {{"shard-00001", 5, 5}, {"shard-00000", 0, 3}, {"shard-00001", 12, 3}};
    write_ranged_manifest(t.dir, e, 3);
    const int want[11] = {20, 21, 22, 23, 24, 0, 1, 2, 27, 28, 29};
    char gone[4200], aside[4200]; /* a shard no entry lists is not the cache's: verify would name it */
    snprintf(gone, sizeof gone, "%s/shard-00002", t.dir);
    snprintf(aside, sizeof aside, "%s/shard-00002.aside", t.dir);
    assert_int_equal(rename(gone, aside), 0);
    xtts_cache *c;
    xtts_error err;
    assert_int_equal(xtts_cache_open(t.dir, &c, &err), XTTS_OK);
    assert_int_equal(xtts_cache_count(c), 11);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &err), XTTS_OK);
    xtts_lengths lens[11];
    assert_int_equal(xtts_cache_lengths(r, lens, &err), XTTS_OK);
    for (uint64_t i = 0; i < 11; i++) {
        xtts_record_header h;
        float mel[16 * 48];
        assert_int_equal(xtts_cache_reader_get(r, i, &h, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &err), XTTS_OK);
        char id[32];
        snprintf(id, sizeof id, "utt-%05d", want[i]);
        assert_string_equal(h.id, id);
        assert_float_equal(mel[0], fixture_mel_value(want[i], 0, 0), 1e-6);
        assert_int_equal(lens[i].n_frames, h.n_frames);
        uint64_t idx = 999;
        assert_int_equal(xtts_cache_reader_find(r, id, &idx, &err), XTTS_OK);
        assert_int_equal(idx, i);
    }
    uint64_t idx;
    assert_int_equal(xtts_cache_reader_find(r, "utt-00003", &idx, &err), XTTS_ENOTFOUND); /* garbage of shard 0 */
    assert_int_equal(xtts_cache_reader_find(r, "utt-00025", &idx, &err), XTTS_ENOTFOUND); /* between two ranges */
    assert_int_equal(xtts_cache_reader_find(r, "utt-00035", &idx, &err), XTTS_ENOTFOUND); /* an unlisted shard */
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    faults_t fs;
    xtts_verify_report rep;
    xtts_status st = verify(t.dir, 1, &fs, &rep);
    if (fs.n) dump_faults(&fs);
    assert_int_equal(st, XTTS_OK);
    assert_int_equal(fs.n, 0);
    assert_int_equal(rep.records_ok, 11);
    assert_int_equal(rep.ids, 11);
    /* a range past the directory's keys: damage, named */
    assert_int_equal(rename(aside, gone), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", t.dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    assert_non_null(m);
    json_object_set_new(m, "shards", json_pack("[{s:s, s:i, s:i, s:i, s:i}, {s:s, s:i, s:i, s:i, s:i}]", "name",
                                               "shard-00002", "records", 4, "bytes", 0, "first_index", 0, "local_first",
                                               8, "name", "shard-00002", "records", 3, "bytes", 0, "first_index", 4,
                                               "local_first", 0));
    json_object_set_new(m, "records", json_integer(7));
    assert_int_equal(xtts_manifest_write(path, m, &err), XTTS_OK);
    json_decref(m);
    assert_int_equal(xtts_cache_open(t.dir, &c, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "range ends at key 12"));
    tmp_remove(&t);
}

static void test_batch_is_fixed_shape_and_padded(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    for (int dt = 0; dt < 2; dt++) {
        xtts_batch b;
        assert_int_equal(xtts_batch_init(c, 5, dt ? XTTS_DTYPE_F16 : XTTS_DTYPE_F32, &b, &e), XTTS_OK);
        assert_int_equal(b.max_tokens, 24);
        assert_int_equal(b.n_mels, 16);
        assert_int_equal(b.max_frames, 48);
        uint64_t idx[5] = {39, 0, 14, 15, 7};
        assert_int_equal(xtts_cache_reader_batch(r, idx, 5, &b, &e), XTTS_OK);
        for (int j = 0; j < 5; j++) {
            int i = (int)idx[j];
            assert_int_equal(b.index[j], i);
            assert_int_equal(b.n_tokens[j], fixture_n_tokens(&o, i));
            assert_int_equal(b.n_frames[j], fixture_n_frames(&o, i));
            assert_int_equal(b.speaker_id[j], i % 3);
            assert_int_equal(b.lang_id[j], i % 2);
            assert_int_equal(b.split[j], i % 5 == 0);
            for (int k = 0; k < 24; k++)
                assert_int_equal(b.tokens[j * 24 + k], k < (int)b.n_tokens[j] ? fixture_token(&o, i, k) : 0);
            for (int ch = 0; ch < 16; ch++)
                for (int f = 0; f < 48; f++) {
                    size_t at = ((size_t)j * 16 + ch) * 48 + f;
                    float got = dt ? xtts_f16_to_f32(((uint16_t *)b.mel)[at]) : ((float *)b.mel)[at];
                    float want = f < (int)b.n_frames[j] ? fixture_mel_value(i, ch, f) : FIXTURE_PAD_VALUE;
                    assert_float_equal(got, want, dt ? 1e-2 : 0);
                }
        }
        uint64_t too_many[6] = {0};
        assert_int_equal(xtts_cache_reader_batch(r, too_many, 6, &b, &e), XTTS_ERANGE);
        xtts_batch_free(&b);
    }
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

static void test_readers_in_parallel_threads_agree(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    int failures = 0;
#pragma omp parallel num_threads(4) reduction(+ : failures)
    {
        xtts_cache_reader *r;
        xtts_error te;
        xtts_batch b;
        if (xtts_cache_reader_new(c, &r, &te) || xtts_batch_init(c, 8, XTTS_DTYPE_F32, &b, &te)) {
            failures++;
        } else {
            for (int round = 0; round < 50; round++) {
                uint64_t idx[8];
                for (int j = 0; j < 8; j++) idx[j] = (uint64_t)((round * 8 + j) * 7 % 40);
                if (xtts_cache_reader_batch(r, idx, 8, &b, &te)) failures++;
                for (int j = 0; j < 8; j++)
                    if (((float *)b.mel)[(size_t)j * 16 * 48] != fixture_mel_value((int)idx[j], 0, 0)) failures++;
            }
            xtts_batch_free(&b);
            xtts_cache_reader_delete(r);
        }
    }
    assert_int_equal(failures, 0);
    xtts_cache_close(c);
    tmp_remove(&t);
}

static void test_reader_opens_a_cache_on_a_read_only_directory_without_lock_files(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char p[4200];
    for (int s = 0; s < 3; s++) {
        snprintf(p, sizeof p, "%s/shard-%05d/lock.mdb", t.dir, s);
        remove(p); /* left by the fixture's writer */
        snprintf(p, sizeof p, "%s/shard-%05d/data.mdb", t.dir, s);
        chmod(p, 0444);
        snprintf(p, sizeof p, "%s/shard-%05d", t.dir, s);
        chmod(p, 0555);
    }
    chmod(t.dir, 0555);
    int opened;
    assert_int_equal(read_all(t.dir, 0, &opened), 0);
    assert_true(opened);
    chmod(t.dir, 0755);
    for (int s = 0; s < 3; s++) {
        snprintf(p, sizeof p, "%s/shard-%05d/lock.mdb", t.dir, s);
        assert_int_equal(access(p, F_OK), -1); /* MDB_NOLOCK: nothing written */
        snprintf(p, sizeof p, "%s/shard-%05d", t.dir, s);
        chmod(p, 0755);
    }
    tmp_remove(&t);
}

/* ---- verify on intact caches ------------------------------------------------------------------ */

static void test_verify_passes_intact_cache_and_digest_ignores_shard_boundaries(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char a[4200], b[4200], d[4200];
    snprintf(a, sizeof a, "%s/a", t.dir);
    snprintf(b, sizeof b, "%s/b", t.dir);
    snprintf(d, sizeof d, "%s/d", t.dir);
    fixture_options o;
    fixture_defaults(&o);
    build(a, &o);
    o.per_shard = 7;
    build(b, &o);
    o.per_shard = 100;
    o.shuffle = 1; /* another byte layout, same content */
    build(d, &o);
    faults_t fs;
    xtts_verify_report ra, rb, rd;
    assert_int_equal(verify(a, 1, &fs, &ra), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(fs.n, 0);
    assert_int_equal(ra.faults, 0);
    assert_int_equal(ra.records_checked, 40);
    assert_int_equal(ra.records_ok, 40);
    assert_int_equal(ra.shards, 3);
    assert_int_equal(ra.val, 8);
    assert_int_equal(ra.ids, 40);
    assert_true(ra.digest_complete);
    assert_int_equal(strlen(ra.digest), 64);
    assert_int_equal(verify(b, 0, &fs, &rb), XTTS_OK);
    assert_int_equal(rb.faults, 0);
    assert_int_equal(rb.shards, 6);
    assert_int_equal(verify(d, 0, &fs, &rd), XTTS_OK);
    assert_int_equal(rd.faults, 0);
    assert_string_equal(ra.digest, rb.digest);
    assert_string_equal(ra.digest, rd.digest);
    /* Another content, another digest. */
    char f[4200];
    snprintf(f, sizeof f, "%s/f", t.dir);
    fixture_defaults(&o);
    o.records = 39;
    build(f, &o);
    xtts_verify_report rf;
    assert_int_equal(verify(f, 0, &fs, &rf), XTTS_OK);
    assert_string_not_equal(ra.digest, rf.digest);
    tmp_remove(&t);
}

static void test_digest_matches_an_independent_computation(void **state) {
    (void)state;
    /* The canonical bytes of docs/xtts-cache-verify.md "Content digest", spelled out here. */
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    o.records = 3;
    build(t.dir, &o);
    xtts_sha256 s;
    xtts_sha256_init(&s);
    for (int i = 0; i < 3; i++) {
        char id[32];
        int n = snprintf(id, sizeof id, "utt-%05d", i);
        uint8_t b[4];
        xtts_put_le32(b, (uint32_t)n);
        xtts_sha256_update(&s, b, 4);
        xtts_sha256_update(&s, id, (size_t)n);
        uint32_t f[6] = {(uint32_t)fixture_n_tokens(&o, i), (uint32_t)fixture_n_frames(&o, i), 16,
                         (uint32_t)fixture_n_frames(&o, i) * 256, (uint32_t)(i % 3), (uint32_t)(i % 2)};
        for (int k = 0; k < 6; k++) xtts_put_le32(b, f[k]), xtts_sha256_update(&s, b, 4);
        uint8_t split = i % 5 == 0;
        xtts_sha256_update(&s, &split, 1);
        for (int k = 0; k < fixture_n_tokens(&o, i); k++)
            xtts_put_le32(b, (uint32_t)fixture_token(&o, i, k)), xtts_sha256_update(&s, b, 4);
        for (int c = 0; c < 16; c++)
            for (int tt = 0; tt < fixture_n_frames(&o, i); tt++) {
                float v = fixture_mel_value(i, c, tt);
                uint32_t u;
                memcpy(&u, &v, 4);
                xtts_put_le32(b, u);
                xtts_sha256_update(&s, b, 4);
            }
    }
    uint8_t d[32];
    char hex[65];
    xtts_sha256_final(&s, d);
    xtts_hex(d, 32, hex);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    assert_string_equal(rep.digest, hex);
    tmp_remove(&t);
}

/* ---- damage ------------------------------------------------------------------------------------ */

static void test_missing_shard_fails_open_naming_it_and_verify_reports_it(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00001", t.dir);
    nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_ENOTFOUND);
    assert_non_null(strstr(e.msg, "shard-00001"));
    /* Tolerant: the other shards still read; the missing one's records fail cleanly. */
    assert_int_equal(xtts_cache_open_ex(t.dir, XTTS_CACHE_OPEN_TOLERANT, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    xtts_record_header h;
    assert_int_equal(xtts_cache_reader_header(r, 3, &h, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_header(r, 20, &h, &e), XTTS_ENOTFOUND);
    assert_non_null(strstr(e.msg, "shard-00001"));
    uint64_t idx;
    assert_int_not_equal(xtts_cache_reader_find(r, "utt-00020", &idx, &e), XTTS_OK);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    assert_true(rep.faults > 0);
    assert_false(rep.digest_complete);
    assert_true(faults_contain(&fs, "shard-00001|-1||"));
    assert_int_equal(rep.records_checked, 25);
    tmp_remove(&t);
}

static void test_manifest_from_another_build_is_a_mismatch(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char a[4200], b[4200], ma[4300], mb[4300];
    snprintf(a, sizeof a, "%s/a", t.dir);
    snprintf(b, sizeof b, "%s/b", t.dir);
    fixture_options o;
    fixture_defaults(&o);
    build(a, &o);
    o.n_fft = 512; /* another configuration, same record counts */
    build(b, &o);
    snprintf(ma, sizeof ma, "%s/manifest.json", a);
    snprintf(mb, sizeof mb, "%s/manifest.json", b);
    assert_int_equal(rename(mb, ma), 0);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(a, &c, &e), XTTS_EMISMATCH);
    assert_non_null(strstr(e.msg, "shard-00000"));
    assert_non_null(strstr(e.msg, "config"));
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(a, 0, &fs, &rep), XTTS_OK);
    assert_true(faults_contain(&fs, "shard-00000|-1||"));
    assert_true(faults_contain(&fs, "shard-00002|-1||"));
    assert_false(rep.digest_complete);
    tmp_remove(&t);
}

static void test_truncated_data_file_is_reported_not_crashed_on(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00002/data.mdb", t.dir);
    long n = file_size(p);
    assert_true(n > 8192);
    long cuts[] = {n - 1, n / 2, 8192, 4096 + 17, 100, 0};
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        assert_int_equal(truncate(p, cuts[k]), 0);
        xtts_cache *c;
        xtts_error e;
        assert_int_not_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
        assert_non_null(strstr(e.msg, "shard-00002"));
        int opened;
        int bad = read_all(t.dir, XTTS_CACHE_OPEN_TOLERANT, &opened);
        assert_true(opened);
        assert_int_equal(bad, 10); /* shard-00002 holds records 30..39 */
        faults_t fs;
        xtts_verify_report rep;
        assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
        assert_true(faults_contain(&fs, "shard-00002"));
    }
    tmp_remove(&t);
}

static void test_bit_flip_inside_a_record_is_reported_with_shard_index_and_id(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    /* Find record 20's bytes in shard-00001's data.mdb. */
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00001/data.mdb", t.dir);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    const void *raw;
    size_t len;
    assert_int_equal(xtts_cache_reader_raw(r, 20, &raw, &len, &e), XTTS_OK);
    uint8_t *copy = malloc(len);
    memcpy(copy, raw, len);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    FILE *f = fopen(p, "rb");
    long n = file_size(p);
    uint8_t *all = malloc((size_t)n);
    assert_int_equal(fread(all, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    uint8_t *at = memmem(all, (size_t)n, copy, len);
    assert_non_null(at);
    long off = at - all;
    free(all);
    /* One flip in the header, one in the zstd frame holding the mel (version 2: the mel
     * section): each is a fault naming index 20. */
    xtts_record_header rh;
    assert_int_equal(xtts_record_parse_header(at == NULL ? NULL : copy, len, &rh, &e), XTTS_OK);
    long mel_end = rh.version >= 2 ? (long)(rh.sections[1].offset + rh.sections[1].stored_bytes) : (long)len;
    long where[2] = {off + 20, off + mel_end - 9};
    free(copy);
    for (int k = 0; k < 2; k++) {
        flip_bit(p, where[k], 3);
        faults_t fs;
        xtts_verify_report rep;
        assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
        dump_faults(&fs);
        assert_int_equal(rep.faults, 1);
        assert_true(faults_contain(&fs, "shard-00001|20|utt-00020|"));
        assert_false(rep.digest_complete);
        assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
        assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
        float mel[16 * 48];
        assert_int_equal(xtts_cache_reader_get(r, 20, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_ECORRUPT);
        assert_non_null(strstr(e.msg, "shard-00001"));
        assert_non_null(strstr(e.msg, "index 20"));
        assert_int_equal(xtts_cache_reader_get(r, 21, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_OK);
        xtts_cache_reader_delete(r);
        xtts_cache_close(c);
        flip_bit(p, where[k], 3);
    }
    tmp_remove(&t);
}

static void test_random_bit_flips_anywhere_never_crash(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    for (int big = 0; big < 2; big++) {
    fixture_options o;
    fixture_defaults(&o);
    o.records = 30;
    o.per_shard = 30;
    if (big) { /* records on overflow pages, a two-level records tree */
        o.records = o.per_shard = 120;
        o.n_mels = 80;
        o.max_frames = 400;
    }
    build(t.dir, &o);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00000/data.mdb", t.dir);
    long n = file_size(p);
    FILE *f = fopen(p, "rb");
    uint8_t *orig = malloc((size_t)n);
    assert_int_equal(fread(orig, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    uint64_t seed = 12345;
    int detected = 0;
    for (int round = 0; round < 60; round++) {
        /* Restore, then flip 1..8 bits at random places (meta, branch, leaf, data pages). */
        f = fopen(p, "wb");
        fwrite(orig, 1, (size_t)n, f);
        fclose(f);
        int flips = 1 + round % 8;
        for (int k = 0; k < flips; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            flip_bit(p, (long)((seed >> 33) % (uint64_t)n), (int)((seed >> 20) & 7));
        }
        int opened;
        (void)read_all(t.dir, XTTS_CACHE_OPEN_TOLERANT, &opened);
        faults_t fs;
        xtts_verify_report rep;
        (void)verify(t.dir, 1, &fs, &rep);
        detected += rep.faults > 0;
        xtts_cache *c;
        xtts_error e;
        if (xtts_cache_open_ex(t.dir, XTTS_CACHE_OPEN_TOLERANT, &c, &e) == XTTS_OK) {
            FILE *null = fopen("/dev/null", "w"); /* the summary is made and printed, not read */
            if (null) {
                (void)xtts_inspect_print_summary(null, c, XTTS_INSPECT_LENGTHS | XTTS_INSPECT_JSON, NULL, &e);
                fclose(null);
            }
            xtts_cache_close(c);
        }
    }
    /* Most flips land in record bytes, which checksums cover. */
    assert_true(detected > 30);
    free(orig);
    }
    tmp_remove(&t);
}

/* Re-encode record (shard, local)'s header with n_frames beyond frames_padded and a
 * valid CRC: the damage a buggy writer could produce. */
static void test_lengths_beyond_padded_shape_with_valid_crc_are_reported(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    const void *raw;
    size_t len;
    assert_int_equal(xtts_cache_reader_raw(r, 33, &raw, &len, &e), XTTS_OK);
    uint8_t *rec = malloc(len);
    memcpy(rec, raw, len);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    uint32_t padded = xtts_get_le32(rec + 28);
    xtts_put_le32(rec + 24, padded + 5);           /* n_frames > frames_padded */
    xtts_put_le32(rec + 16, xtts_get_le32(rec + 20) + 1); /* n_tokens > tokens_padded */
    uint16_t id_len = xtts_get_le16(rec + 12);
    uint32_t crc = xtts_crc32(0, rec, 60);
    crc = xtts_crc32(crc, rec + 64, id_len);
    xtts_put_le32(rec + 60, crc);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00002", t.dir);
    assert_int_equal(fixture_put_record(p, 3, rec, len), 0);
    free(rec);
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    xtts_batch b;
    assert_int_equal(xtts_batch_init(c, 2, XTTS_DTYPE_F32, &b, &e), XTTS_OK);
    uint64_t idx[2] = {32, 33};
    assert_int_equal(xtts_cache_reader_batch(r, idx, 2, &b, &e), XTTS_ECORRUPT);
    assert_non_null(strstr(e.msg, "shard-00002"));
    assert_non_null(strstr(e.msg, "index 33"));
    assert_non_null(strstr(e.msg, "utt-00033"));
    assert_non_null(strstr(e.msg, "exceed padded shape"));
    xtts_batch_free(&b);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 1);
    assert_true(faults_contain(&fs, "shard-00002|33|"));
    assert_true(faults_contain(&fs, "exceed padded shape"));
    tmp_remove(&t);
}

static void test_verify_reports_nan_duplicate_ids_bad_ids_index_and_tables(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    o.nan_at = 17;
    build(t.dir, &o);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00002", t.dir);
    /* Record 31 re-encoded with record 2's id and a speaker outside the table. */
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F32, 3, 0, &enc);
    int32_t tok[24] = {1, 2, 3};
    float mel[16 * 24];
    for (int i = 0; i < 16 * 24; i++) mel[i] = -1.0f;
    xtts_record_input in = {.id = "utt-00002", .speaker_id = 7, .lang_id = 1, .n_tokens = 3, .tokens_padded = 24,
                            .n_frames = 20, .frames_padded = 24, .n_mels = 16, .pad_value = FIXTURE_PAD_VALUE,
                            .tokens = tok, .mel = mel};
    const uint8_t *buf;
    size_t len;
    xtts_error e;
    assert_int_equal(xtts_record_encode(enc, &in, &buf, &len, &e), XTTS_OK);
    assert_int_equal(fixture_put_record(p, 1, buf, len), 0);
    xtts_record_encoder_delete(enc);
    /* "ids" of shard-00002: utt-00035 points at the wrong record. */
    uint8_t kb[8];
    xtts_put_be64(kb, 0);
    assert_int_equal(fixture_put(p, "ids", "utt-00035", 9, kb, 8), 0);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "shard-00001|17|utt-00017|1 mel values are NaN"));
    assert_true(faults_contain(&fs, "shard-00002|31|utt-00002|duplicate id (also at index 2)"));
    assert_true(faults_contain(&fs, "speaker id 7 outside"));
    assert_true(faults_contain(&fs, "shard-00002|30|utt-00035|\"ids\" points here for 'utt-00030' too"));
    assert_true(faults_contain(&fs, "shard-00002|35|utt-00035|no \"ids\" entry points at this record"));
    assert_true(faults_contain(&fs, "shard-00002|31|utt-00002|the \"ids\" entry for this index is 'utt-00031'"));
    assert_true(rep.faults >= 5);
    /* bytes changed too */
    assert_true(faults_contain(&fs, "shard-00002|-1||records hold"));
    tmp_remove(&t);
}

/* An id stored in two shards, each record with its own "ids" entry: found by reading the
 * shards' "ids" together (no table of every id is kept). */
static void test_verify_finds_an_id_stored_by_two_shards(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00002", t.dir);
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F32, 3, 0, &enc);
    int32_t tok[24] = {1, 2, 3};
    float mel[16 * 24];
    for (int i = 0; i < 16 * 24; i++) mel[i] = -1.0f;
    xtts_record_input in = {.id = "utt-00002", .speaker_id = 1, .lang_id = 1, .n_tokens = 3, .tokens_padded = 24,
                            .n_frames = 20, .frames_padded = 24, .n_mels = 16, .pad_value = FIXTURE_PAD_VALUE,
                            .tokens = tok, .mel = mel};
    const uint8_t *buf;
    size_t len;
    xtts_error e;
    assert_int_equal(xtts_record_encode(enc, &in, &buf, &len, &e), XTTS_OK);
    assert_int_equal(fixture_put_record(p, 1, buf, len), 0);
    xtts_record_encoder_delete(enc);
    uint8_t kb[8];
    xtts_put_be64(kb, 1);
    assert_int_equal(fixture_put(p, "ids", "utt-00031", 9, NULL, 0), 0);
    assert_int_equal(fixture_put(p, "ids", "utt-00002", 9, kb, 8), 0);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "shard-00002|31|utt-00002|duplicate id (also at index 2)"));
    assert_false(faults_contain(&fs, "\"ids\" entry"));
    tmp_remove(&t);
}

static int open_descriptors(void) {
    int n = 0;
    for (int fd = 0; fd < 4096; fd++) n += fcntl(fd, F_GETFD) != -1;
    return n;
}

/* 60 shards under a descriptor limit of 12 more than the process holds: two readers read
 * every record in an order that jumps between shards, walk every "lengths" database, and
 * verify finds nothing wrong (its duplicate-id merge too); nothing is left open after. */
static void test_shards_beyond_the_descriptor_limit_are_read_through_the_pool(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    o.records = 120;
    o.per_shard = 2;
    build(t.dir, &o);
    struct rlimit saved, lim;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int before = open_descriptors();
    lim = saved;
    lim.rlim_cur = (rlim_t)before + 12;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_n_shards(c), 60);
    xtts_cache_reader *r[2];
    assert_int_equal(xtts_cache_reader_new(c, &r[0], &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r[1], &e), XTTS_OK);
    float mel[16 * 48];
    int32_t tok[24];
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t k = 0; k < 120; k++) {
            uint64_t i = (k * 37 + (uint64_t)pass * 11) % 120; /* 37 is prime to 120: each once */
            xtts_record_header h;
            xtts_status st = xtts_cache_reader_get(r[k & 1], i, &h, tok, 24, mel, XTTS_DTYPE_F32, 16, 48, &e);
            if (st) fprintf(stderr, "  %s\n", e.msg);
            assert_int_equal(st, XTTS_OK);
            char want[32];
            snprintf(want, sizeof want, "utt-%05llu", (unsigned long long)i);
            assert_string_equal(h.id, want);
        }
    xtts_lengths *lens = calloc(120, sizeof *lens);
    assert_int_equal(xtts_cache_lengths(r[0], lens, &e), XTTS_OK);
    free(lens);
    assert_true(open_descriptors() <= before + 12);
    xtts_cache_reader_delete(r[0]);
    xtts_cache_reader_delete(r[1]);
    xtts_cache_close(c);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 0);
    assert_int_equal(open_descriptors(), before);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    tmp_remove(&t);
}

/* A new directory t holding a fixture cache of `records` records, per_shard a shard. */
static void build_in_shards(tmpdir_t *t, int records, int per_shard) {
    tmp_make(t);
    fixture_options o;
    fixture_defaults(&o);
    o.records = records;
    o.per_shard = per_shard;
    build(t->dir, &o);
}

/* The duplicate-id merge reads each shard's ids in batches: shards of 300 records (more
 * than a batch) verify clean, and an id stored again in the last shard is still found. */
static void test_duplicate_ids_are_found_across_batches_of_the_id_merge(void **state) {
    (void)state;
    tmpdir_t t;
    build_in_shards(&t, 700, 300);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00002", t.dir);
    uint8_t kb[8];
    xtts_put_be64(kb, 5); /* local 5 of shard 2 is index 605, whose own id entry is dropped */
    assert_int_equal(fixture_put(p, "ids", "utt-00605", 9, NULL, 0), 0);
    assert_int_equal(fixture_put(p, "ids", "utt-00299", 9, kb, 8), 0);
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "|duplicate id (also at index 299)"));
    tmp_remove(&t);
}

/* The id merge over ranges of shard directories (a shared cache lists one a run): each id
 * comes once, from the range that holds its local index, with its index within the range and
 * that range's source; ids of no range do not come; of an id in two directories, the lower
 * source's comes first. Ranges of one directory given in any order. */
static void test_id_merge_gives_each_range_its_ids(void **state) {
    (void)state;
    tmpdir_t t;
    build_in_shards(&t, 700, 350); /* shard-00000: utt-00000..00349, shard-00001: utt-00350..00699 */
    char p0[4200], p1[4200];
    snprintf(p0, sizeof p0, "%s/shard-00000", t.dir);
    snprintf(p1, sizeof p1, "%s/shard-00001", t.dir);
    uint8_t kb[8];
    xtts_put_be64(kb, 5);
    assert_int_equal(fixture_put(p1, "ids", "utt-00010", 9, kb, 8), 0); /* in both directories */
    const char *paths[3] = {p1, p0, p0};
    const uint64_t lo[3] = {0, 100, 0}, count[3] = {300, 250, 100}; /* shard-00001's last 50 in no range */
    xtts_id_merge *m;
    xtts_error e;
    assert_int_equal(xtts_id_merge_open_ranges(paths, lo, count, 3, &m, &e), XTTS_OK);
    int got, n = 0, seen10 = 0;
    const void *id;
    size_t len, src;
    uint64_t local;
    while (xtts_id_merge_next(m, &got, &id, &len, &src, &local, &e) == XTTS_OK && got) {
        char s[16];
        snprintf(s, sizeof s, "%.*s", (int)len, (const char *)id);
        int k = atoi(s + 4);
        if (k == 10 && seen10++ == 0) { /* shard-00001's entry first: source 0, local 5 */
            assert_true(src == 0 && local == 5);
            continue;
        }
        size_t want_src = k < 100 ? 2 : k < 350 ? 1 : 0;
        uint64_t want_local = (uint64_t)(k < 100 ? k : k < 350 ? k - 100 : k - 350);
        if (src != want_src || local != want_local) fail_msg("%s: source %zu local %llu", s, src, (unsigned long long)local);
        assert_true(k < 650);
        n++;
    }
    assert_int_equal(n, 650);
    assert_int_equal(seen10, 2);
    xtts_id_merge_close(m);
    tmp_remove(&t);
}

/* A forged "records" (billions, the last shard's count raised to match) is refused by the
 * reader at the shard, before anything is sized by it; verify names the shard and ends. */
static void test_forged_record_count_is_bounded_by_what_the_shard_can_hold(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o); /* 40 records: shards of 15, 15, 10 */
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/manifest.json", t.dir);
    json_t *m;
    xtts_error e;
    assert_int_equal(xtts_manifest_load(mp, &m, &e), XTTS_OK);
    json_object_set_new(m, "records", json_integer(4000000000LL));
    json_object_set_new(json_array_get(json_object_get(m, "shards"), 2), "records", json_integer(4000000000LL - 30));
    assert_int_equal(xtts_manifest_write(mp, m, &e), XTTS_OK);
    json_decref(m);
    xtts_cache *c;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_ECORRUPT);
    assert_non_null(strstr(e.msg, "shard-00002: the manifest says 3999999970 records, data.mdb of"));
    assert_int_equal(xtts_cache_open_ex(t.dir, XTTS_CACHE_OPEN_TOLERANT, &c, &e), XTTS_OK);
    xtts_cache_shard sh;
    xtts_cache_shard_get(c, 2, &sh);
    assert_int_equal(sh.status, XTTS_ECORRUPT);
    assert_non_null(strstr(sh.error, "holds at most"));
    xtts_cache_close(c);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "shard-00002|-1||the manifest says 3999999970 records"));
    assert_int_equal(rep.records_checked, 30);
    tmp_remove(&t);
}

/* Every id a record carries is checked against the manifest's tables, an empty table too:
 * verify faults each record, and the reader refuses it naming shard, index and id. */
static void test_ids_outside_an_emptied_speakers_table_are_faults(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/manifest.json", t.dir);
    json_t *m;
    xtts_error e;
    assert_int_equal(xtts_manifest_load(mp, &m, &e), XTTS_OK);
    json_object_set_new(m, "speakers", json_array());
    assert_int_equal(xtts_manifest_write(mp, m, &e), XTTS_OK);
    json_decref(m);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    assert_int_equal(rep.faults, 40);
    assert_true(faults_contain(&fs, "shard-00000|0|utt-00000|speaker id 0 outside the manifest's 0 speakers"));
    assert_true(faults_contain(&fs, "|utt-00001|speaker id 1 outside the manifest's 0 speakers"));
    xtts_cache *c;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    xtts_record_header h;
    assert_int_equal(xtts_cache_reader_header(r, 1, &h, &e), XTTS_ECORRUPT);
    assert_string_equal(e.msg, "shard-00000: index 1, id 'utt-00001': speaker id 1 outside the manifest's 0 speakers");
    float mel[16 * 48];
    assert_int_equal(xtts_cache_reader_get(r, 1, NULL, NULL, 0, mel, XTTS_DTYPE_F32, 16, 48, &e), XTTS_ECORRUPT);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

/* Hold dir/name as a build does, in a child process (a process's own locks are not
 * another build); returns the child's pid once the lock is held. */
static pid_t hold_lock_in_child(const char *dir, const char *name, int op) {
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char lp[4200];
        snprintf(lp, sizeof lp, "%s/%s", dir, name);
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || flock(fd, op) != 0) _exit(1);
        if (write(ready[1], "x", 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char c;
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void release_lock_child(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A directory whose build lock is held (the build's first instant: no manifest, no shard;
 * or a build starting over a finished cache) is a build in progress, named with the
 * holder's pid; once free it is not. */
static void test_a_held_build_lock_is_a_build_in_progress(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char msg[600], want[64];
    pid_t pid = hold_lock_in_child(t.dir, ".xtts-lock", LOCK_EX);
    assert_int_equal(xtts_cache_unfinished(t.dir, msg, sizeof msg), 2);
    snprintf(want, sizeof want, "(lock .xtts-lock held by pid %ld)", (long)pid);
    assert_non_null(strstr(msg, want));
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_EBUSY);
    assert_non_null(strstr(e.msg, "a build is running in this directory"));
    release_lock_child(pid);
    /* once free, a directory holding only the lock file is an empty one, and says so */
    assert_int_equal(xtts_cache_unfinished(t.dir, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "no cache here: the directory is empty"));
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_ENOTFOUND);
    assert_non_null(strstr(e.msg, "the directory is empty"));
    /* a finished cache whose directory a build (say --force) has just locked */
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    pid = hold_lock_in_child(t.dir, ".xtts-lock-part-00001", LOCK_EX);
    assert_int_equal(xtts_cache_open_ex(t.dir, XTTS_CACHE_OPEN_TOLERANT, &c, &e), XTTS_EBUSY);
    assert_non_null(strstr(e.msg, "(lock .xtts-lock-part-00001 held by pid"));
    release_lock_child(pid);
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_close(c);
    tmp_remove(&t);
}

/* A reader maps the data file as it is, not the size the writer may grow it to. */
static void test_reader_maps_no_more_than_the_data_file(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(t.dir, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    const void *raw;
    size_t len;
    assert_int_equal(xtts_cache_reader_raw(r, 0, &raw, &len, &e), XTTS_OK);
    char p[4200];
    snprintf(p, sizeof p, "%s/shard-00000/data.mdb", t.dir);
    long file = file_size(p), page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    unsigned long lo = 0, hi = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)raw >= lo && (uintptr_t)raw < hi) break;
    fclose(f);
    assert_true((uintptr_t)raw >= lo && (uintptr_t)raw < hi);
    assert_true((long)(hi - lo) <= (file + page - 1) / page * page);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

static void test_verify_deep_checks_manifest_stats_and_totals(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    o.dtype = XTTS_DTYPE_F16;
    build(t.dir, &o);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 1, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 0);
    /* Edit the manifest's mean of channel 3 and its totals. */
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/manifest.json", t.dir);
    json_t *m;
    xtts_error e;
    assert_int_equal(xtts_manifest_load(mp, &m, &e), XTTS_OK);
    json_array_set_new(json_object_get(json_object_get(m, "stats"), "mel_mean"), 3, json_real(0.5));
    json_object_set_new(json_object_get(m, "totals"), "frames", json_integer(1));
    assert_int_equal(xtts_manifest_write(mp, m, &e), XTTS_OK);
    json_decref(m);
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    assert_int_equal(rep.faults, 0); /* not checked without --deep */
    assert_int_equal(verify(t.dir, 1, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "stats channel 3"));
    assert_true(faults_contain(&fs, "totals.frames is 1"));
    tmp_remove(&t);
}

static void test_verify_checks_manifest_splits_and_rejects_counts(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    fixture_options o;
    fixture_defaults(&o);
    build(t.dir, &o);
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/manifest.json", t.dir);
    json_t *m;
    xtts_error e;
    assert_int_equal(xtts_manifest_load(mp, &m, &e), XTTS_OK);
    json_object_set_new(m, "splits", json_pack("{s:i,s:i}", "train", 999, "val", 0));
    json_object_set_new(m, "rejects", json_pack("[{s:i,s:s,s:s},{s:i,s:s,s:s}]", "input", 1, "id", "a", "reason", "x",
                                                "input", 2, "id", "b", "reason", "y"));
    json_object_set_new(m, "rejected", json_integer(1));
    assert_int_equal(xtts_manifest_write(mp, m, &e), XTTS_OK);
    json_decref(m);
    faults_t fs;
    xtts_verify_report rep;
    assert_int_equal(verify(t.dir, 0, &fs, &rep), XTTS_OK);
    dump_faults(&fs);
    assert_true(faults_contain(&fs, "splits.train is 999"));
    assert_true(faults_contain(&fs, "lists 2 rejects but \"rejected\" is 1"));
    tmp_remove(&t);
}

static void write_tone(const char *path, int rate, double seconds, double hz) {
    SF_INFO info = {.samplerate = rate, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    assert_non_null(f);
    size_t n = (size_t)(seconds * rate);
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = 0.4f * sinf(2.0f * (float)M_PI * (float)hz * (float)i / (float)rate);
    assert_int_equal(sf_writef_float(f, x, (sf_count_t)n), (sf_count_t)n);
    sf_close(f);
    free(x);
}

static void test_recompute_matches_stored_mels_and_finds_changed_audio(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache", t.dir);
    fixture_options o;
    fixture_defaults(&o);
    o.max_frames = 64;
    o.dtype = XTTS_DTYPE_F16;
    xtts_cache_config cfg;
    fixture_config(&o, &cfg);
    /* The records come from 44.1 kHz tones through the real front end and mel code. */
    xtts_audio_options ao = {.target_rate = cfg.mel.sample_rate, .trim_db = 0};
    snprintf(ao.resampler, sizeof ao.resampler, "%s", cfg.resampler);
    snprintf(ao.quality, sizeof ao.quality, "%s", cfg.resample_quality);
    xtts_error e;
    xtts_audio *a;
    xtts_audio_new(&ao, &a, &e);
    assert_non_null(a);
    xtts_mel *m;
    xtts_mel_new(&cfg.mel, &m, &e);
    assert_non_null(m);
    xtts_cache_writer_options wo = {.dir = dir, .part = -1, .shard_bytes = 1 << 20, .commit_every = 2};
    xtts_cache_writer *w;
    assert_int_equal(xtts_cache_writer_open(&wo, &cfg, &w, &e), XTTS_OK);
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F16, 3, 0, &enc);
    char wav[4][4300];
    for (int i = 0; i < 4; i++) {
        snprintf(wav[i], sizeof wav[i], "%s/tone%d.wav", t.dir, i);
        write_tone(wav[i], 44100, 0.2 + 0.1 * i, 220.0 * (i + 1));
        const float *x;
        size_t n, frames;
        assert_int_equal(xtts_audio_load(a, wav[i], &x, &n, NULL, &e), XTTS_OK);
        float mel[16 * 64];
        float pad;
        assert_int_equal(xtts_mel_compute(m, x, n, mel, 64, &frames, &pad, &e), XTTS_OK);
        int fp = xtts_cache_config_padded_frames(&cfg, (int)frames);
        assert_true(fp > 0);
        float padded[16 * 64];
        for (int c = 0; c < 16; c++)
            for (int tt = 0; tt < fp; tt++) padded[c * fp + tt] = tt < (int)frames ? mel[c * 64 + tt] : pad;
        int32_t tok[24] = {5, 6, 7};
        char id[16];
        snprintf(id, sizeof id, "tone%d", i);
        xtts_record_input in = {.id = id, .n_samples = (uint32_t)n, .n_tokens = 3, .tokens_padded = 24,
                                .n_frames = (uint32_t)frames, .frames_padded = (uint32_t)fp, .n_mels = 16,
                                .pad_value = pad, .tokens = tok, .mel = padded};
        const uint8_t *buf;
        size_t len;
        assert_int_equal(xtts_record_encode(enc, &in, &buf, &len, &e), XTTS_OK);
        assert_int_equal(xtts_cache_writer_put(w, (uint64_t)i, id, buf, len, &e), XTTS_OK);
        if (i % 2) { /* half the paths as writer state, half as plain meta keys (below) */
            char key[32];
            snprintf(key, sizeof key, "audio:%s", id);
            assert_int_equal(xtts_cache_writer_set_state(w, key, wav[i], strlen(wav[i]), &e), XTTS_OK);
        }
    }
    fixture_extra_t fe;
    fixture_extra(&o, 0, 0, &fe);
    fe.x.has_splits = 0; /* the fixture's counts are not these records' */
    fe.x.has_totals = 0;
    assert_int_equal(xtts_cache_writer_finish(w, &fe.x, &e), XTTS_OK);
    fixture_extra_free(&fe);
    xtts_record_encoder_delete(enc);
    xtts_mel_delete(m);
    xtts_audio_delete(a);
    char shard[4300];
    snprintf(shard, sizeof shard, "%s/shard-00000", dir);
    for (int i = 0; i < 4; i += 2) {
        char key[32];
        int n = snprintf(key, sizeof key, "audio:tone%d", i);
        assert_int_equal(fixture_put(shard, "meta", key, (size_t)n, wav[i], strlen(wav[i])), 0);
    }
    xtts_verify_options vo;
    xtts_verify_options_defaults(&vo);
    vo.recompute_fn = xtts_recompute_record;
    faults_t fs;
    memset(&fs, 0, sizeof fs);
    vo.on_fault = collect;
    vo.ctx = &fs;
    vo.recompute = 4;
    xtts_verify_report rep;
    assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 0);
    assert_int_equal(rep.recomputed, 4);
    assert_true(rep.recompute_max_abs < 2e-2);
    /* Another tone of the same length under tone2's path: found, named. */
    write_tone(wav[2], 44100, 0.4, 3000.0);
    memset(&fs, 0, sizeof fs);
    assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(rep.faults, 1);
    assert_true(faults_contain(&fs, "shard-00000|2|tone2|recomputed mel differs"));
    /* A missing source file is a fault too. */
    remove(wav[1]);
    memset(&fs, 0, sizeof fs);
    assert_int_equal(xtts_verify_cache(dir, &vo, &rep, &e), XTTS_OK);
    assert_true(faults_contain(&fs, "shard-00000|1|tone1|recompute: "));
    tmp_remove(&t);
}

/* ---- caches built by the writer --------------------------------------------------------------- */

static void test_writer_built_caches_verify_clean_with_the_same_digest(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char a[4200], w1[4200], w3[4200], wr[4200];
    snprintf(a, sizeof a, "%s/fixture", t.dir);
    snprintf(w1, sizeof w1, "%s/whole", t.dir);
    snprintf(w3, sizeof w3, "%s/parts", t.dir);
    snprintf(wr, sizeof wr, "%s/rejects", t.dir);
    fixture_options o;
    fixture_defaults(&o);
    o.dtype = XTTS_DTYPE_F16;
    build(a, &o);
    assert_int_equal(fixture_build_writer(w1, &o, 4096, 1, NULL), 0);  /* rotates to several shards */
    assert_int_equal(fixture_build_writer(w3, &o, 1 << 20, 3, NULL), 0); /* three parts, merged */
    faults_t fs;
    xtts_verify_report ra, r1, r3;
    assert_int_equal(verify(a, 1, &fs, &ra), XTTS_OK);
    assert_int_equal(ra.faults, 0);
    assert_int_equal(verify(w1, 1, &fs, &r1), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(r1.faults, 0);
    assert_true(r1.shards > 1);
    assert_int_equal(verify(w3, 1, &fs, &r3), XTTS_OK);
    dump_faults(&fs);
    assert_int_equal(r3.faults, 0);
    assert_true(r3.shards >= 3);
    assert_true(r1.digest_complete && r3.digest_complete);
    assert_string_equal(ra.digest, r1.digest);
    assert_string_equal(ra.digest, r3.digest);
    /* Rejected inputs leave gaps in the input order but none in the record index. */
    int rejects[] = {3, 17, -1};
    assert_int_equal(fixture_build_writer(wr, &o, 4096, 1, rejects), 0);
    xtts_verify_report rr;
    assert_int_equal(verify(wr, 0, &fs, &rr), XTTS_OK);
    assert_int_equal(rr.records_checked, 38);
    assert_string_not_equal(rr.digest, ra.digest);
    xtts_cache *c;
    xtts_error e;
    assert_int_equal(xtts_cache_open(wr, &c, &e), XTTS_OK);
    xtts_cache_reader *r;
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    uint64_t idx;
    assert_int_equal(xtts_cache_reader_find(r, "utt-00018", &idx, &e), XTTS_OK);
    assert_int_equal(idx, 16);
    assert_int_equal(xtts_cache_reader_find(r, "utt-00017", &idx, &e), XTTS_ENOTFOUND);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    tmp_remove(&t);
}

/* ---- inspect exports ---------------------------------------------------------------------------- */

static void test_npy_export_has_numpy_header_and_data(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char p[4200];
    snprintf(p, sizeof p, "%s/x.npy", t.dir);
    float m[3 * 5];
    for (int i = 0; i < 15; i++) m[i] = (float)i * 0.5f;
    xtts_error e;
    assert_int_equal(xtts_npy_write_f32(p, m, 3, 4, 5, &e), XTTS_OK);
    FILE *f = fopen(p, "rb");
    uint8_t buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
    size_t hl = xtts_get_le16(buf + 8);
    assert_int_equal((10 + hl) % 64, 0);
    assert_int_equal(n, 10 + hl + 12 * 4);
    assert_non_null(memmem(buf + 10, hl, "'shape': (3, 4)", 15));
    assert_int_equal(buf[10 + hl - 1], '\n');
    float got[12];
    memcpy(got, buf + 10 + hl, sizeof got);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) assert_true(got[r * 4 + c] == m[r * 5 + c]);
    tmp_remove(&t);
}

static void test_png_export_is_frames_wide_mels_high_low_bins_at_bottom(void **state) {
    (void)state;
    tmpdir_t t;
    tmp_make(&t);
    char p[4200];
    snprintf(p, sizeof p, "%s/x.png", t.dir);
    /* 4 channels x 6 frames; channel 0 (lowest) loud, others quiet. */
    float m[4 * 6];
    for (int c = 0; c < 4; c++)
        for (int tt = 0; tt < 6; tt++) m[c * 6 + tt] = c == 0 ? 1.0f : -1.0f;
    xtts_png_options po;
    xtts_png_options_defaults(&po);
    po.scale = 2;
    xtts_error e;
    assert_int_equal(xtts_png_write_mel(p, m, 4, 6, 6, &po, &e), XTTS_OK);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&img, p));
    assert_int_equal(img.width, 12);
    assert_int_equal(img.height, 8);
    img.format = PNG_FORMAT_RGB;
    uint8_t px[12 * 8 * 3];
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    uint8_t hi[3], lo[3];
    xtts_colormap_rgb(XTTS_CMAP_VIRIDIS, 1.0, hi);
    xtts_colormap_rgb(XTTS_CMAP_VIRIDIS, 0.0, lo);
    assert_memory_equal(px + (7 * 12 + 0) * 3, hi, 3); /* bottom row: channel 0 */
    assert_memory_equal(px + (0 * 12 + 11) * 3, lo, 3); /* top row: channel 3 */
    tmp_remove(&t);
}

static void test_colormaps_match_matplotlib_anchor_colours(void **state) {
    (void)state;
    /* matplotlib's viridis and magma at 0, 0.5, 1 (from its published tables). */
    static const struct {
        int cm;
        double x;
        double rgb[3];
    } ref[] = {
        {XTTS_CMAP_VIRIDIS, 0.0, {0.267004, 0.004874, 0.329415}},
        {XTTS_CMAP_VIRIDIS, 0.5, {0.127568, 0.566949, 0.550556}},
        {XTTS_CMAP_VIRIDIS, 1.0, {0.993248, 0.906157, 0.143936}},
        {XTTS_CMAP_MAGMA, 0.0, {0.001462, 0.000466, 0.013866}},
        {XTTS_CMAP_MAGMA, 0.5, {0.716387, 0.214982, 0.475290}},
        {XTTS_CMAP_MAGMA, 1.0, {0.987053, 0.991438, 0.749504}},
    };
    for (size_t i = 0; i < sizeof ref / sizeof *ref; i++) {
        uint8_t rgb[3];
        xtts_colormap_rgb((xtts_colormap)ref[i].cm, ref[i].x, rgb);
        for (int k = 0; k < 3; k++) assert_true(fabs(rgb[k] / 255.0 - ref[i].rgb[k]) < 0.03);
    }
    assert_int_equal(xtts_colormap_parse("magma"), XTTS_CMAP_MAGMA);
    assert_int_equal(xtts_colormap_parse("jet"), -1);
}

static void test_histogram_bins_cover_min_to_max(void **state) {
    (void)state;
    uint32_t v[100];
    for (int i = 0; i < 100; i++) v[i] = (uint32_t)(10 + i);
    xtts_histogram h;
    xtts_histogram_build(v, 100, &h);
    assert_int_equal(h.min, 10);
    assert_int_equal(h.max, 109);
    uint64_t total = 0;
    for (int b = 0; b < h.bins; b++) total += h.count[b];
    assert_int_equal(total, 100);
    assert_int_equal(h.lo[0], 10);
    assert_true(h.hi[h.bins - 1] >= 109);
    uint32_t one = 5;
    xtts_histogram_build(&one, 1, &h);
    assert_int_equal(h.bins, 1);
    assert_int_equal(h.count[0], 1);
}

int main(int argc, char **argv) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    if (argc >= 3 && !strcmp(argv[1], "--make-cache")) {
        fixture_options o;
        fixture_defaults(&o);
        if (argc > 3) o.records = atoi(argv[3]);
        if (argc > 4) o.per_shard = atoi(argv[4]);
        if (argc > 5) o.dtype = xtts_dtype_parse(argv[5]) < 0 ? XTTS_DTYPE_F32 : xtts_dtype_parse(argv[5]);
        if (argc > 6) o.n_fft = atoi(argv[6]);
        if (argc > 7) o.n_mels = atoi(argv[7]);
        if (argc > 8) o.max_frames = atoi(argv[8]);
        if (argc > 9) o.shuffle = !strcmp(argv[9], "shuffle");
        if (o.records < 0 || o.per_shard < 1 || o.n_fft < 64 || o.n_mels < 1 || o.n_mels > 1024 || o.max_frames < 4)
            return 1;
        return fixture_build(argv[2], &o) ? 2 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_returns_every_record_as_written),
        cmocka_unit_test(test_reader_fp16_shuffled_cache_decodes_within_half_precision),
        cmocka_unit_test(test_find_returns_global_index_across_shards_and_notfound_for_unknown),
        cmocka_unit_test(test_ranged_entries_read_and_verify_only_their_keys),
        cmocka_unit_test(test_batch_is_fixed_shape_and_padded),
        cmocka_unit_test(test_readers_in_parallel_threads_agree),
        cmocka_unit_test(test_reader_opens_a_cache_on_a_read_only_directory_without_lock_files),
        cmocka_unit_test(test_verify_passes_intact_cache_and_digest_ignores_shard_boundaries),
        cmocka_unit_test(test_digest_matches_an_independent_computation),
        cmocka_unit_test(test_missing_shard_fails_open_naming_it_and_verify_reports_it),
        cmocka_unit_test(test_manifest_from_another_build_is_a_mismatch),
        cmocka_unit_test(test_truncated_data_file_is_reported_not_crashed_on),
        cmocka_unit_test(test_bit_flip_inside_a_record_is_reported_with_shard_index_and_id),
        cmocka_unit_test(test_random_bit_flips_anywhere_never_crash),
        cmocka_unit_test(test_lengths_beyond_padded_shape_with_valid_crc_are_reported),
        cmocka_unit_test(test_verify_reports_nan_duplicate_ids_bad_ids_index_and_tables),
        cmocka_unit_test(test_verify_finds_an_id_stored_by_two_shards),
        cmocka_unit_test(test_shards_beyond_the_descriptor_limit_are_read_through_the_pool),
        cmocka_unit_test(test_duplicate_ids_are_found_across_batches_of_the_id_merge),
        cmocka_unit_test(test_id_merge_gives_each_range_its_ids),
        cmocka_unit_test(test_forged_record_count_is_bounded_by_what_the_shard_can_hold),
        cmocka_unit_test(test_ids_outside_an_emptied_speakers_table_are_faults),
        cmocka_unit_test(test_a_held_build_lock_is_a_build_in_progress),
        cmocka_unit_test(test_reader_maps_no_more_than_the_data_file),
        cmocka_unit_test(test_verify_deep_checks_manifest_stats_and_totals),
        cmocka_unit_test(test_verify_checks_manifest_splits_and_rejects_counts),
        cmocka_unit_test(test_recompute_matches_stored_mels_and_finds_changed_audio),
        cmocka_unit_test(test_writer_built_caches_verify_clean_with_the_same_digest),
        cmocka_unit_test(test_npy_export_has_numpy_header_and_data),
        cmocka_unit_test(test_png_export_is_frames_wide_mels_high_low_bins_at_bottom),
        cmocka_unit_test(test_colormaps_match_matplotlib_anchor_colours),
        cmocka_unit_test(test_histogram_bins_cover_min_to_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
