/* test_reader_api.c — the stable C interface of cache/store/read/reader_api.h (libxtts-reader.so):
 * batches equal to xtts_cache_reader_batch's whatever the thread count and dtype, narrow
 * rows, errors with their messages, concurrent calls on one handle, a forked child; the
 * per-record reads equal to the reader's, with their sizing and their errors; a dataset item's
 * reads in one call (xtts_api_read_items) equal to the reader's, and the manifest's checks. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <ftw.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/store/read/reader.h"
#include "cache/store/read/reader_api.h"
#include "tests/cache_fixture.h"

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

typedef struct {
    char dir[256];
    fixture_options o;
} fx_t;

static int setup(void **state) {
    static fx_t fx;
    const char *base = getenv("TMPDIR");
    snprintf(fx.dir, sizeof fx.dir, "%s/xtts-reader-api-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(fx.dir)) return -1;
    fixture_defaults(&fx.o);
    fx.o.dtype = XTTS_DTYPE_F16;
    fx.o.shuffle = 1;
    if (fixture_build(fx.dir, &fx.o)) return -1;
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fx_t *fx = *state;
    nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* One batch's arrays. */
typedef struct {
    size_t n, tcap, fcap, esize;
    int32_t *tokens;
    void *mel;
    uint32_t *nt, *nf, *spk, *lang;
    uint8_t *split;
} rows_t;

static void rows_init(rows_t *r, size_t n, size_t tcap, size_t n_mels, size_t fcap, size_t esize) {
    r->n = n;
    r->tcap = tcap;
    r->fcap = fcap;
    r->esize = esize;
    r->tokens = calloc(n * tcap, sizeof(int32_t));
    r->mel = calloc(n * n_mels * fcap, esize);
    r->nt = calloc(n, 4);
    r->nf = calloc(n, 4);
    r->spk = calloc(n, 4);
    r->lang = calloc(n, 4);
    r->split = calloc(n, 1);
    assert_true(r->tokens && r->mel && r->nt && r->nf && r->spk && r->lang && r->split);
}

static void rows_free(rows_t *r) {
    free(r->tokens);
    free(r->mel);
    free(r->nt);
    free(r->nf);
    free(r->spk);
    free(r->lang);
    free(r->split);
}

static int api_read(xtts_api_cache *a, const uint64_t *idx, rows_t *r, int dtype, int threads) {
    return xtts_api_read_batch(a, idx, r->n, r->tokens, r->tcap, r->mel, dtype, r->fcap, r->nt, r->nf, r->spk,
                               r->lang, r->split, threads);
}

static void test_shape_and_version(void **state) {
    fx_t *fx = *state;
    assert_int_equal(xtts_api_abi_version(), XTTS_API_ABI_VERSION);
    assert_string_equal(xtts_api_version(), XTTS_VERSION);
    xtts_api_cache *a = xtts_api_open(fx->dir);
    assert_non_null(a);
    assert_int_equal(xtts_api_count(a), 40);
    assert_int_equal(xtts_api_n_mels(a), 16);
    assert_int_equal(xtts_api_max_tokens(a), 24);
    assert_int_equal(xtts_api_max_frames(a), 48);
    assert_int_equal(xtts_api_pad_token(a), 0);
    assert_int_equal(xtts_api_format_version(a), 2);
    xtts_api_close(a);
    xtts_api_close(NULL);
}

static void test_batches_equal_the_reader_whatever_threads_and_dtype(void **state) {
    fx_t *fx = *state;
    xtts_cache *c;
    xtts_cache_reader *rd;
    xtts_error e;
    assert_int_equal(xtts_cache_open(fx->dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &rd, &e), XTTS_OK);
    xtts_api_cache *a = xtts_api_open(fx->dir);
    assert_non_null(a);
    enum { N = 45 };
    uint64_t idx[N];
    for (int j = 0; j < N; j++) idx[j] = (uint64_t)((j * 17 + 3) % 40);
    for (int dt = 0; dt < 2; dt++) {
        xtts_batch b;
        assert_int_equal(xtts_batch_init(c, N, dt ? XTTS_DTYPE_F16 : XTTS_DTYPE_F32, &b, &e), XTTS_OK);
        assert_int_equal(xtts_cache_reader_batch(rd, idx, N, &b, &e), XTTS_OK);
        size_t esize = dt ? 2 : 4;
        for (int threads = 0; threads <= 5; threads++) {
            rows_t r;
            rows_init(&r, N, 24, 16, 48, esize);
            assert_int_equal(api_read(a, idx, &r, dt ? XTTS_API_MEL_F16 : XTTS_API_MEL_F32, threads), 0);
            assert_memory_equal(r.tokens, b.tokens, (size_t)N * 24 * 4);
            assert_memory_equal(r.mel, b.mel, (size_t)N * 16 * 48 * esize);
            assert_memory_equal(r.nt, b.n_tokens, N * 4);
            assert_memory_equal(r.nf, b.n_frames, N * 4);
            assert_memory_equal(r.spk, b.speaker_id, N * 4);
            assert_memory_equal(r.lang, b.lang_id, N * 4);
            assert_memory_equal(r.split, b.split, N);
            rows_free(&r);
        }
        xtts_batch_free(&b);
    }
    /* narrow rows: the first bucket (12 frames) holds records whose n_frames <= 12 */
    uint64_t small[2] = {0, 3}; /* n_frames 1 and 1 + 39 % 48 = 40: only record 0 fits */
    rows_t r;
    rows_init(&r, 1, 24, 16, 12, 4);
    assert_int_equal(api_read(a, small, &r, XTTS_API_MEL_F32, 1), 0);
    assert_int_equal(r.nf[0], 1);
    assert_float_equal(((float *)r.mel)[11], FIXTURE_PAD_VALUE, 1e-2);
    assert_int_equal(api_read(a, small + 1, &r, XTTS_API_MEL_F32, 1), XTTS_ERANGE);
    assert_non_null(strstr(xtts_api_last_error(), "index 3, id 'utt-00003'"));
    rows_free(&r);
    xtts_api_close(a);
    xtts_cache_reader_delete(rd);
    xtts_cache_close(c);
}

static void test_errors_leave_a_message(void **state) {
    fx_t *fx = *state;
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nope", fx->dir);
    assert_null(xtts_api_open(missing));
    assert_non_null(strstr(xtts_api_last_error(), "nope"));
    assert_null(xtts_api_open(NULL));
    xtts_api_cache *a = xtts_api_open(fx->dir);
    assert_non_null(a);
    rows_t r;
    rows_init(&r, 4, 24, 16, 48, 4);
    uint64_t idx[4] = {1, 2, 40, 3};
    for (int threads = 1; threads <= 4; threads += 3) {
        assert_int_not_equal(api_read(a, idx, &r, XTTS_API_MEL_F32, threads), 0);
        assert_non_null(strstr(xtts_api_last_error(), "40"));
    }
    assert_int_equal(api_read(a, idx, &r, 7, 1), XTTS_EUSAGE);
    assert_int_equal(xtts_api_read_batch(a, idx, 2, NULL, 24, r.mel, 0, 48, r.nt, r.nf, r.spk, r.lang, r.split, 1),
                     XTTS_EUSAGE);
    assert_int_equal(xtts_api_read_batch(a, idx, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 1), 0);
    assert_int_equal(xtts_api_read_batch(NULL, idx, 1, r.tokens, 24, r.mel, 0, 48, r.nt, r.nf, r.spk, r.lang,
                                         r.split, 1),
                     XTTS_EUSAGE);
    rows_free(&r);
    xtts_api_close(a);
}

typedef struct {
    xtts_api_cache *a;
    int seed, failures;
} conc_t;

static void *concurrent(void *arg) {
    conc_t *x = arg;
    rows_t r;
    r.n = 8;
    r.tcap = 24;
    r.fcap = 48;
    r.tokens = calloc(8 * 24, 4);
    r.mel = calloc(8 * 16 * 48, 4);
    r.nt = calloc(8, 4);
    r.nf = calloc(8, 4);
    r.spk = calloc(8, 4);
    r.lang = calloc(8, 4);
    r.split = calloc(8, 1);
    for (int round = 0; round < 40; round++) {
        uint64_t idx[8];
        for (int j = 0; j < 8; j++) idx[j] = (uint64_t)((round * 8 + j + x->seed) * 7 % 40);
        if (api_read(x->a, idx, &r, XTTS_API_MEL_F32, 1 + round % 3)) x->failures++;
        for (int j = 0; j < 8; j++) {
            float want = fixture_mel_value((int)idx[j], 0, 0);
            float got = ((float *)r.mel)[(size_t)j * 16 * 48];
            if (fabsf(got - want) > 1e-2f || r.nf[j] != (uint32_t)(1 + (13 * (int)idx[j]) % 48)) x->failures++;
        }
    }
    free(r.tokens);
    free(r.mel);
    free(r.nt);
    free(r.nf);
    free(r.spk);
    free(r.lang);
    free(r.split);
    return NULL;
}

static void test_concurrent_calls_on_one_handle(void **state) {
    fx_t *fx = *state;
    xtts_api_cache *a = xtts_api_open(fx->dir);
    assert_non_null(a);
    conc_t x[3];
    pthread_t tid[3];
    for (int k = 0; k < 3; k++) {
        x[k] = (conc_t){a, 11 * k, 0};
        assert_int_equal(pthread_create(&tid[k], NULL, concurrent, &x[k]), 0);
    }
    for (int k = 0; k < 3; k++) {
        pthread_join(tid[k], NULL);
        assert_int_equal(x[k].failures, 0);
    }
    xtts_api_close(a);
}

static void test_a_forked_child_opens_its_own(void **state) {
    fx_t *fx = *state;
    xtts_api_cache *a = xtts_api_open(fx->dir);
    assert_non_null(a);
    rows_t r;
    rows_init(&r, 6, 24, 16, 48, 4);
    uint64_t idx[6] = {5, 4, 3, 2, 1, 0};
    assert_int_equal(api_read(a, idx, &r, XTTS_API_MEL_F32, 3), 0); /* helper threads made */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int bad = api_read(a, idx, &r, XTTS_API_MEL_F32, 2) != XTTS_EUSAGE; /* the parent's handle */
        xtts_api_cache *b = xtts_api_open(fx->dir);
        bad |= !b || api_read(b, idx, &r, XTTS_API_MEL_F32, 3) != 0 || r.nf[5] != 1;
        xtts_api_close(b);
        _exit(bad);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(api_read(a, idx, &r, XTTS_API_MEL_F32, 3), 0);
    rows_free(&r);
    xtts_api_close(a);
}

static void test_per_record_reads_equal_the_reader(void **state) {
    fx_t *fx = *state;
    xtts_api_cache *a = xtts_api_open_ex(fx->dir, XTTS_API_OPEN_TOLERANT);
    assert_non_null(a);
    xtts_cache *c;
    xtts_cache_reader *r;
    xtts_error e;
    assert_int_equal(xtts_cache_open(fx->dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    uint64_t n = xtts_api_count(a);
    /* the stored bytes: sized with cap 0 first, then equal to the reader's */
    for (uint64_t i = 0; i < n; i++) {
        size_t len = 0;
        assert_int_equal(xtts_api_record(a, i, NULL, 0, &len), 7);
        uint8_t *buf = malloc(len);
        assert_int_equal(xtts_api_record(a, i, buf, len, &len), 0);
        const void *want;
        size_t want_len;
        assert_int_equal(xtts_cache_reader_raw(r, i, &want, &want_len, &e), XTTS_OK);
        assert_int_equal(len, want_len);
        assert_memory_equal(buf, want, len);
        free(buf);
        /* the id back to its index */
        xtts_record_header h;
        assert_int_equal(xtts_cache_reader_header(r, i, &h, &e), XTTS_OK);
        uint64_t got = n;
        assert_int_equal(xtts_api_find(a, h.id, &got), 0);
        assert_int_equal(got, i);
    }
    uint64_t got;
    assert_int_equal(xtts_api_find(a, "no such id", &got), 8);
    assert_non_null(strstr(xtts_api_last_error(), "no such id"));
    /* text: too small, then whole */
    size_t on = 0, nn = 0;
    char ob[4096], nb[4096];
    assert_int_equal(xtts_api_text(a, 0, ob, 0, &on, nb, 0, &nn), 7);
    assert_true(on > 0);
    assert_int_equal(xtts_api_text(a, 0, ob, sizeof ob, &on, nb, sizeof nb, &nn), 0);
    const char *o, *nm;
    size_t ol, nl;
    assert_int_equal(xtts_cache_reader_text(r, 0, &o, &ol, &nm, &nl, &e), XTTS_OK);
    assert_int_equal(on, ol);
    assert_int_equal(nn, nl);
    assert_memory_equal(ob, o, ol);
    /* lengths: the reader's, as rows of 7 */
    uint32_t *rows = malloc(n * 7 * sizeof *rows);
    xtts_lengths *l = malloc(n * sizeof *l);
    assert_int_equal(xtts_api_lengths(a, rows, n + 1), 7);
    assert_int_equal(xtts_api_lengths(a, rows, n), 0);
    assert_int_equal(xtts_cache_lengths(r, l, &e), XTTS_OK);
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(rows[7 * i], l[i].n_frames);
        assert_int_equal(rows[7 * i + 1], l[i].n_tokens);
        assert_int_equal(rows[7 * i + 3], l[i].speaker_id);
        assert_int_equal(rows[7 * i + 5], l[i].split);
    }
    free(rows);
    free(l);
    /* meta: present, absent, no such shard */
    char mv[256];
    size_t ml = 0;
    assert_int_equal(xtts_api_meta(a, 0, "format", mv, sizeof mv, &ml), 0);
    assert_int_equal(ml, strlen("xtts-cache 2"));
    assert_memory_equal(mv, "xtts-cache 2", ml);
    assert_int_equal(xtts_api_meta(a, 0, "no such key", mv, sizeof mv, &ml), 8);
    assert_int_equal(xtts_api_meta(a, 999, "format", mv, sizeof mv, &ml), 7);
    /* a fixture without waveforms, content keys or metrics */
    int16_t wav[4];
    uint8_t key[32];
    assert_int_equal(xtts_api_waveform(a, 0, wav, 0, 4), 8);
    assert_int_equal(xtts_api_content_key(a, 0, key), 8);
    assert_int_equal(xtts_api_shards_with(a, "keys"), 0);
    assert_int_equal(xtts_api_shards_with(a, "quality"), 0);
    size_t len;
    assert_int_equal(xtts_api_record(a, n, NULL, 0, &len), 7);
    assert_int_equal(xtts_api_record(NULL, 0, NULL, 0, &len), 1);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    xtts_api_close(a);
}

static void test_items_equal_the_reader_in_one_call(void **state) {
    fx_t *fx = *state;
    xtts_api_cache *a = xtts_api_open_ex(fx->dir, XTTS_API_OPEN_TOLERANT);
    assert_non_null(a);
    xtts_cache *c;
    xtts_cache_reader *r;
    xtts_error e;
    assert_int_equal(xtts_cache_open(fx->dir, &c, &e), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &e), XTTS_OK);
    size_t n = (size_t)xtts_api_count(a), n_mels = xtts_api_n_mels(a), T = xtts_api_max_tokens(a);
    size_t F = xtts_api_max_frames(a);
    /* every record in one call, unpadded, each row's buffers sized by the cache's largest */
    uint64_t *idx = malloc(n * sizeof *idx);
    void **bufs = calloc(n * XTTS_API_ITEM_PARTS, sizeof *bufs);
    size_t *caps = calloc(n * XTTS_API_ITEM_PARTS, sizeof *caps);
    uint64_t *fields = malloc(n * XTTS_API_ITEM_FIELDS * sizeof *fields);
    char *ids = malloc(n * 1025);
    for (size_t k = 0; k < n; k++) {
        idx[k] = n - 1 - k;
        bufs[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_TOKENS] = malloc(T * 4);
        caps[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_TOKENS] = T;
        bufs[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_MEL] = malloc(n_mels * F * 4);
        caps[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_MEL] = n_mels * F;
    }
    assert_int_equal(xtts_api_read_items(a, NULL, idx, n, XTTS_API_MEL_F32, bufs, caps, fields, ids, 1025), 0);
    int32_t *tok = malloc(T * 4);
    float *mel = malloc(n_mels * F * 4);
    for (size_t k = 0; k < n; k++) {
        xtts_record_header h;
        assert_int_equal(xtts_cache_reader_get(r, idx[k], &h, tok, T, mel, XTTS_DTYPE_F32, n_mels, F, &e), XTTS_OK);
        const uint64_t *f = fields + k * XTTS_API_ITEM_FIELDS;
        assert_int_equal(f[XTTS_API_F_N_TOKENS], h.n_tokens);
        assert_int_equal(f[XTTS_API_F_N_FRAMES], h.n_frames);
        assert_int_equal(f[XTTS_API_F_FRAMES_PADDED], h.frames_padded);
        assert_int_equal(f[XTTS_API_F_SPEAKER_ID], h.speaker_id);
        assert_int_equal(f[XTTS_API_F_VERSION], h.version);
        assert_string_equal(ids + k * 1025, h.id);
        assert_memory_equal(bufs[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_TOKENS], tok, 4 * h.n_tokens);
        const float *got = bufs[k * XTTS_API_ITEM_PARTS + XTTS_API_PART_MEL];
        for (size_t ch = 0; ch < n_mels; ch++) /* [n_mels][n_frames], the reader's rows cut */
            assert_memory_equal(got + ch * h.n_frames, mel + ch * F, 4 * h.n_frames);
    }
    /* a mel buffer too small: 7, with the row's sizes */
    caps[XTTS_API_PART_MEL] = 1;
    assert_int_equal(xtts_api_read_items(a, NULL, idx, 1, XTTS_API_MEL_F32, bufs, caps, fields, NULL, 0), 7);
    assert_int_equal(fields[XTTS_API_F_N_FRAMES] > 0, 1);
    assert_non_null(strstr(xtts_api_last_error(), "room for 1 mel values"));
    /* a waveform or a key of a fixture without them: 8; codes without a codes handle: 1 */
    int16_t wav[4];
    uint8_t key[32];
    void *b2[XTTS_API_ITEM_PARTS] = {0};
    size_t c2[XTTS_API_ITEM_PARTS] = {0};
    b2[XTTS_API_PART_WAVE] = wav, c2[XTTS_API_PART_WAVE] = 4;
    assert_int_equal(xtts_api_read_items(a, NULL, idx, 1, XTTS_API_MEL_F32, b2, c2, fields, NULL, 0), 8);
    b2[XTTS_API_PART_WAVE] = NULL, b2[XTTS_API_PART_KEY] = key, c2[XTTS_API_PART_KEY] = 32;
    assert_int_equal(xtts_api_read_items(a, NULL, idx, 1, XTTS_API_MEL_F32, b2, c2, fields, NULL, 0), 8);
    b2[XTTS_API_PART_KEY] = NULL, b2[XTTS_API_PART_CODES] = wav, c2[XTTS_API_PART_CODES] = 4;
    assert_int_equal(xtts_api_read_items(a, NULL, idx, 1, XTTS_API_MEL_F32, b2, c2, fields, NULL, 0), 1);
    uint64_t out_of_range = n;
    b2[XTTS_API_PART_CODES] = NULL;
    assert_int_equal(xtts_api_read_items(a, NULL, &out_of_range, 1, XTTS_API_MEL_F32, b2, c2, fields, NULL, 0), 7);
    /* metrics of a fixture built without them: 8 */
    uint32_t qi[8];
    float qf[16];
    uint64_t qh[2];
    assert_int_equal(xtts_api_metrics(a, 0, qi, qf, qh), 8);
    assert_int_equal(xtts_api_metrics(a, 0, NULL, qf, qh), 1);
    /* the manifest's checks and its configuration hash */
    char path[512], hash[65];
    snprintf(path, sizeof path, "%s/manifest.json", fx->dir);
    assert_int_equal(xtts_api_manifest_check(path), 0);
    snprintf(path, sizeof path, "%s/no-such.json", fx->dir);
    assert_int_equal(xtts_api_manifest_check(path), 8);
    assert_int_equal(xtts_api_config_hash("{", 1, hash), 2);
    for (size_t k = 0; k < n * XTTS_API_ITEM_PARTS; k++) free(bufs[k]);
    free(idx), free(bufs), free(caps), free(fields), free(ids), free(tok), free(mel);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    xtts_api_close(a);
}

static void test_codes_open_refuses_what_is_not_a_codes_directory(void **state) {
    fx_t *fx = *state;
    char path[400];
    snprintf(path, sizeof path, "%s/codes-0000000000000000", fx->dir);
    assert_null(xtts_api_codes_open(path));
    assert_non_null(strstr(xtts_api_last_error(), "no data.mdb"));
    snprintf(path, sizeof path, "%s/shard-00000", fx->dir);   /* an LMDB file without a codes header */
    assert_null(xtts_api_codes_open(path));
    assert_true(xtts_api_last_error()[0] != '\0');
    xtts_api_codes_close(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_and_version),
        cmocka_unit_test(test_batches_equal_the_reader_whatever_threads_and_dtype),
        cmocka_unit_test(test_errors_leave_a_message),
        cmocka_unit_test(test_concurrent_calls_on_one_handle),
        cmocka_unit_test(test_a_forked_child_opens_its_own),
        cmocka_unit_test(test_per_record_reads_equal_the_reader),
        cmocka_unit_test(test_items_equal_the_reader_in_one_call),
        cmocka_unit_test(test_codes_open_refuses_what_is_not_a_codes_directory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
