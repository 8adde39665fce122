/* test_train_loader.c — the batch loader over a real cache (written with the cache writer
 * and the record codec by xtts_synth_cache_write): epoch coverage, one bucket per batch,
 * seeded order, resuming at a position, what a row holds, validation passes, and corrupt
 * records (stop with shard, index and id; or skip with a count). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/store/read/reader.h"
#include "train/loader.h"
#include "tests/synth.h"

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

typedef struct {
    char dir[256];
    xtts_cache *cache;
    xtts_dataset ds;
} fixture;

static int setup_with(void **state, int bucketed) {
    fixture *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/test_train_loader.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) return -1;
    xtts_synth_options so;
    xtts_synth_options_defaults(&so);
    so.n_records = 50;
    so.n_mels = 8;
    so.min_tokens = 2;
    so.max_tokens = 30;
    so.max_frames = 96;
    if (bucketed) {
        so.n_buckets = 3;
        so.buckets[0] = 32, so.buckets[1] = 64, so.buckets[2] = 96;
    }
    xtts_error err;
    if (xtts_synth_cache_write(f->dir, &so, &err) != XTTS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    *state = f;
    return 0;
}
static int setup(void **state) { return setup_with(state, 1); }
static int setup_flat(void **state) { return setup_with(state, 0); }

static void open_cache(fixture *f) {
    xtts_error err;
    assert_int_equal(xtts_cache_open(f->dir, &f->cache, &err), XTTS_OK);
    assert_int_equal(xtts_dataset_scan(f->cache, 0, &f->ds, &err), XTTS_OK);
}

static int teardown(void **state) {
    fixture *f = *state;
    xtts_dataset_free(&f->ds);
    if (f->cache) xtts_cache_close(f->cache);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static xtts_loader *start(fixture *f, int batch, int threads, uint64_t seed, uint64_t epoch, uint64_t at, int split,
                          int skip) {
    xtts_loader_options o = {batch, threads, seed, split, skip, epoch, at};
    xtts_loader *l = NULL;
    xtts_error err;
    assert_int_equal(xtts_loader_new(f->cache, &f->ds, &o, &l, &err), XTTS_OK);
    return l;
}

/* Take n batches; write their record indices (UINT64_MAX between batches) into out. */
static size_t take(xtts_loader *l, int n, uint64_t *out) {
    size_t k = 0;
    xtts_error err;
    for (int i = 0; i < n; i++) {
        xtts_loader_batch *b;
        assert_int_equal(xtts_loader_next(l, &b, NULL, &err), XTTS_OK);
        for (int r = 0; r < b->view.B; r++) out[k++] = b->index[r];
        out[k++] = UINT64_MAX;
        xtts_loader_release(l, b);
    }
    return k;
}

static uint32_t bucket_of(const fixture *f, uint64_t idx) {
    for (size_t i = 0; i < f->ds.n_train; i++)
        if (f->ds.train[i] == idx) return f->ds.train_bucket[i];
    fail_msg("record %llu is not a training record", (unsigned long long)idx);
    return 0;
}

static void every_train_record_comes_once_per_epoch_in_batches_of_one_bucket(void **state) {
    fixture *f = *state;
    open_cache(f);
    assert_int_equal(f->ds.n_train + f->ds.n_val, 50);
    assert_true(f->ds.n_val > 0);
    xtts_loader *l = start(f, 4, 3, 9, 0, 0, XTTS_SPLIT_TRAIN, 0);
    int bpe = (int)xtts_loader_batches_per_epoch(l);
    uint64_t *got = malloc((f->ds.n_train + bpe) * sizeof(uint64_t));
    size_t n = take(l, bpe, got);
    int *seen = calloc(50, sizeof(int));
    uint32_t bucket = 0;
    int fresh = 1, n_buckets_seen = 0;
    uint32_t seen_buckets[3] = {0};
    for (size_t i = 0; i < n; i++) {
        if (got[i] == UINT64_MAX) {
            fresh = 1;
            continue;
        }
        seen[got[i]]++;
        uint32_t bk = bucket_of(f, got[i]);
        if (fresh) {
            bucket = bk, fresh = 0;
            int known = 0;
            for (int j = 0; j < n_buckets_seen; j++) known |= seen_buckets[j] == bk;
            if (!known) seen_buckets[n_buckets_seen++] = bk;
        }
        assert_int_equal(bk, bucket);
    }
    for (size_t i = 0; i < f->ds.n_train; i++) assert_int_equal(seen[f->ds.train[i]], 1);
    assert_true(n_buckets_seen >= 2);
    uint64_t e, b;
    xtts_loader_position(l, &e, &b);
    assert_int_equal(e, 1);
    assert_int_equal(b, 0);
    xtts_loader_delete(l);
    free(got), free(seen);
}

static void same_seed_gives_the_same_order_and_the_next_epoch_another(void **state) {
    fixture *f = *state;
    open_cache(f);
    size_t cap = 3 * (f->ds.n_train + 64);
    uint64_t *a = malloc(cap * 8), *b = malloc(cap * 8), *c = malloc(cap * 8);
    xtts_loader *l1 = start(f, 4, 1, 5, 0, 0, XTTS_SPLIT_TRAIN, 0);
    int bpe = (int)xtts_loader_batches_per_epoch(l1);
    size_t na = take(l1, 2 * bpe, a);
    xtts_loader_delete(l1);
    xtts_loader *l2 = start(f, 4, 4, 5, 0, 0, XTTS_SPLIT_TRAIN, 0); /* other thread count, same order */
    size_t nb = take(l2, 2 * bpe, b);
    xtts_loader_delete(l2);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na * 8);
    size_t half = na / 2; /* epoch 0 and epoch 1 have the same length */
    assert_true(memcmp(a, a + half, half * 8) != 0);
    xtts_loader *l3 = start(f, 4, 2, 6, 0, 0, XTTS_SPLIT_TRAIN, 0);
    size_t nc = take(l3, bpe, c);
    xtts_loader_delete(l3);
    assert_true(nc != half || memcmp(a, c, nc * 8) != 0);
    free(a), free(b), free(c);
}

static void loader_started_at_a_position_continues_the_same_sequence(void **state) {
    fixture *f = *state;
    open_cache(f);
    uint64_t *a = malloc(4096 * 8), *b = malloc(4096 * 8);
    xtts_loader *l = start(f, 4, 2, 11, 0, 0, XTTS_SPLIT_TRAIN, 0);
    int bpe = (int)xtts_loader_batches_per_epoch(l);
    int k = bpe + 3; /* cross an epoch boundary */
    size_t n1 = take(l, k, a);
    uint64_t e, at;
    xtts_loader_position(l, &e, &at);
    size_t n2 = take(l, 6, a + n1);
    xtts_loader_delete(l);
    assert_int_equal(e, 1);
    assert_int_equal(at, 3);
    xtts_loader *r = start(f, 4, 3, 11, e, at, XTTS_SPLIT_TRAIN, 0);
    size_t m = take(r, 6, b);
    xtts_loader_delete(r);
    assert_int_equal(m, n2);
    assert_memory_equal(a + n1, b, m * 8);
    free(a), free(b);
}

static void row_holds_language_token_text_and_normalized_time_major_mel(void **state) {
    fixture *f = *state;
    open_cache(f);
    assert_true(f->ds.normalized);
    xtts_loader *l = start(f, 5, 2, 1, 0, 0, XTTS_SPLIT_TRAIN, 0);
    xtts_loader_batch *b;
    xtts_error err;
    assert_int_equal(xtts_loader_next(l, &b, NULL, &err), XTTS_OK);
    xtts_cache_reader *rd;
    assert_int_equal(xtts_cache_reader_new(f->cache, &rd, &err), XTTS_OK);
    int M = f->ds.n_mels, Fcap = f->ds.max_frames, maxT = 0;
    int32_t *tok = malloc(f->ds.max_tokens * 4);
    float *mel = malloc((size_t)M * Fcap * 4);
    for (int r = 0; r < b->view.B; r++) {
        xtts_record_header h;
        assert_int_equal(xtts_cache_reader_get(rd, b->index[r], &h, tok, f->ds.max_tokens, mel, XTTS_DTYPE_F32, M,
                                               Fcap, &err),
                         XTTS_OK);
        assert_int_equal(b->n_text[r], 1 + (int)h.n_tokens);
        assert_int_equal(b->n_frames[r], (int)h.n_frames);
        const int32_t *text = b->text + (size_t)r * b->view.text_stride;
        assert_int_equal(text[0], f->ds.vocab_size + (int)h.lang_id);
        assert_memory_equal(text + 1, tok, h.n_tokens * 4);
        for (uint32_t j = 0; j < h.n_frames; j++)
            for (int c = 0; c < M; c++) {
                float want = (mel[(size_t)c * Fcap + j] - f->ds.mel_mean[c]) / f->ds.mel_std[c];
                assert_true(b->mel[((size_t)r * b->view.mel_stride + j) * M + c] == want);
            }
        if (b->n_text[r] + b->n_frames[r] > maxT) maxT = b->n_text[r] + b->n_frames[r];
    }
    assert_int_equal(b->view.T, maxT);
    xtts_loader_release(l, b);
    xtts_cache_reader_delete(rd);
    xtts_loader_delete(l);
    free(tok), free(mel);
}

static void validation_pass_visits_every_val_record_once_then_ends(void **state) {
    fixture *f = *state;
    open_cache(f);
    xtts_loader *l = start(f, 3, 2, 1, 0, 0, XTTS_SPLIT_VAL, 0);
    int *seen = calloc(50, sizeof(int));
    xtts_loader_batch *b;
    xtts_error err;
    xtts_status st;
    int batches = 0;
    while ((st = xtts_loader_next(l, &b, NULL, &err)) == XTTS_OK) {
        for (int r = 0; r < b->view.B; r++) seen[b->index[r]]++;
        xtts_loader_release(l, b);
        batches++;
    }
    assert_int_equal(st, XTTS_ENOTFOUND);
    assert_int_equal(batches, (int)xtts_loader_batches_per_epoch(l));
    for (size_t i = 0; i < f->ds.n_val; i++) assert_int_equal(seen[f->ds.val[i]], 1);
    xtts_loader_delete(l);
    free(seen);
}

/* Flip a byte inside record index's zstd frame, in the shard's LMDB. */
static void corrupt_record(const fixture *f, uint64_t index) {
    char path[512];
    snprintf(path, sizeof path, "%s/shard-00000", f->dir);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, path, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "records", 0, &dbi), 0);
    uint8_t kb[8];
    xtts_put_be64(kb, index);
    MDB_val k = {8, kb}, v;
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    uint8_t *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    xtts_record_header rh;
    xtts_error re;
    assert_int_equal(xtts_record_parse_header(copy, v.mv_size, &rh, &re), XTTS_OK);
    /* inside the zstd frame holding the mel (version 2: the mel section) */
    size_t mel_end = rh.version >= 2 ? rh.sections[1].offset + rh.sections[1].stored_bytes : v.mv_size;
    copy[mel_end - 6] ^= 0x5a;
    MDB_val nv = {v.mv_size, copy};
    assert_int_equal(mdb_put(txn, dbi, &k, &nv, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    free(copy);
}

static void corrupt_record_stops_the_batch_with_shard_index_and_id(void **state) {
    fixture *f = *state;
    corrupt_record(f, 0); /* record 0 is a training record */
    open_cache(f);
    xtts_loader *l = start(f, (int)f->ds.n_train, 2, 1, 0, 0, XTTS_SPLIT_TRAIN, 0);
    xtts_loader_batch *b;
    xtts_error err;
    assert_int_equal(xtts_loader_next(l, &b, NULL, &err), XTTS_ECORRUPT);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "shard-00000"));
    assert_non_null(strstr(err.msg, "synth00000"));
    xtts_loader_delete(l);
}

static void skip_corrupt_drops_the_record_and_counts_it(void **state) {
    fixture *f = *state;
    corrupt_record(f, 0);
    open_cache(f);
    xtts_loader *l = start(f, (int)f->ds.n_train, 2, 1, 0, 0, XTTS_SPLIT_TRAIN, 1);
    xtts_loader_batch *b;
    xtts_error err;
    assert_int_equal(xtts_loader_next(l, &b, NULL, &err), XTTS_OK);
    assert_int_equal(b->n_skipped, 1);
    assert_non_null(strstr(b->skipped_msg, "synth00000"));
    int empty = 0;
    for (int r = 0; r < b->view.B; r++) empty += b->n_frames[r] == 0;
    assert_int_equal(empty, 1);
    xtts_loader_release(l, b);
    xtts_loader_delete(l);
}

int main(void) {
    xtts_cache_guard_faults(); /* damaged shards become errors, not signals */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_train_record_comes_once_per_epoch_in_batches_of_one_bucket, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(same_seed_gives_the_same_order_and_the_next_epoch_another, setup, teardown),
        cmocka_unit_test_setup_teardown(loader_started_at_a_position_continues_the_same_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(row_holds_language_token_text_and_normalized_time_major_mel, setup, teardown),
        cmocka_unit_test_setup_teardown(validation_pass_visits_every_val_record_once_then_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_record_stops_the_batch_with_shard_index_and_id, setup_flat, teardown),
        cmocka_unit_test_setup_teardown(skip_corrupt_drops_the_record_and_counts_it, setup_flat, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
