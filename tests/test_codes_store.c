/* test_codes_store.c — the audio codes directory of a cache (cache/store/codes_store.h): its
 * name from the two hashes, entries put and read back by content key after a commit and only
 * after it, a damaged entry and a code past the codebook refused, a header of another model
 * refused, a second writer refused while one holds the lock, the count of a clip's codes, and
 * the copy an update makes. Real LMDB environments in a temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/store/codes_store.h"

static char tmp[256];

static int setup(void **state) {
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/test_codes_store.XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static void header(xtts_codes_header *h, char fill) {
    memset(h, 0, sizeof *h);
    memset(h->dvae_sha256, fill, 64);
    memset(h->norms_sha256, 'b', 64);
    h->num_tokens = 1024;
    h->n_mels = 80;
    for (int i = 0; i < 80; i++) h->mel_norms[i] = 1.0f + (float)i / 8;
}

static void test_dir_name_from_both_hashes(void **state) {
    (void)state;
    char a[XTTS_CODES_NAME_MAX], b[XTTS_CODES_NAME_MAX];
    xtts_codes_header h;
    header(&h, 'a');
    xtts_codes_dir_name(h.dvae_sha256, h.norms_sha256, a);
    assert_int_equal(strlen(a), 6 + 16);
    assert_true(xtts_codes_dir_name_valid(a));
    xtts_codes_dir_name(h.norms_sha256, h.dvae_sha256, b); /* the order matters */
    assert_string_not_equal(a, b);
    assert_false(xtts_codes_dir_name_valid("codes-0123"));
    assert_false(xtts_codes_dir_name_valid("codes-0123456789ABCDEF"));
    assert_false(xtts_codes_dir_name_valid("shard-00000"));
}

static void test_codes_counted_as_the_dvae_strides(void **state) {
    (void)state;
    /* frames = n/256 + 1; codes = ceil(ceil(frames/2)/2) */
    assert_int_equal(xtts_codes_expected(22050), 22);  /* 87 frames -> 44 -> 22 */
    assert_int_equal(xtts_codes_expected(1023), 1);    /* 4 frames -> 2 -> 1 */
    assert_int_equal(xtts_codes_expected(1024), 2);    /* 5 frames -> 3 -> 2 */
}

static void test_put_commit_get(void **state) {
    (void)state;
    xtts_codes_header h;
    header(&h, 'a');
    xtts_codes_store *w = NULL, *busy = NULL;
    xtts_error err;
    assert_int_equal(xtts_codes_store_create(tmp, &h, &w, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_create(tmp, &h, &busy, &err), XTTS_EBUSY); /* one writer */
    uint8_t key[32] = {1, 2, 3};
    uint16_t codes[5] = {0, 1, 1023, 7, 512}, out[8];
    size_t n = 0;
    assert_int_equal(xtts_codes_store_put(w, key, codes, 5, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_count(w), 0); /* not yet committed */
    assert_int_equal(xtts_codes_store_commit(w, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_count(w), 1);
    assert_int_equal(xtts_codes_store_get(w, key, out, 8, &n, &err), XTTS_OK);
    assert_int_equal(n, 5);
    assert_memory_equal(out, codes, sizeof codes);
    assert_int_equal(xtts_codes_store_get(w, key, out, 4, &n, &err), XTTS_ERANGE);
    key[0] = 9;
    assert_int_equal(xtts_codes_store_get(w, key, out, 8, &n, &err), XTTS_ENOTFOUND);
    xtts_codes_store_close(w);

    /* read-only: the header, the same codes; another model's header refused for writing */
    char **names;
    size_t nn;
    char path[512];
    assert_int_equal(xtts_codes_dirs(tmp, &names, &nn, &err), XTTS_OK);
    assert_int_equal(nn, 1);
    snprintf(path, sizeof path, "%s/%s", tmp, names[0]);
    xtts_codes_store *r = NULL;
    assert_int_equal(xtts_codes_store_open(path, &r, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_header(r)->num_tokens, 1024);
    assert_int_equal(xtts_codes_store_header(r)->n_mels, 80);
    assert_true(xtts_codes_store_header(r)->mel_norms[79] == 1.0f + 79.0f / 8);
    key[0] = 1;
    assert_int_equal(xtts_codes_store_get(r, key, out, 8, &n, &err), XTTS_OK);
    xtts_codes_store_close(r);
    h.num_tokens = 512;
    assert_int_equal(xtts_codes_store_create(tmp, &h, &w, &err), XTTS_EMISMATCH);

    /* the copy an update makes keeps the entries of the records its new cache holds, so it
     * wants a finished cache there (tests/e2e/codes_update_prune.sh copies into one) */
    char copy[300];
    snprintf(copy, sizeof copy, "%s/new", tmp);
    assert_int_equal(mkdir(copy, 0755), 0);
    assert_int_equal(xtts_codes_dirs_copy(tmp, copy, &err), XTTS_ENOTFOUND);
    snprintf(path, sizeof path, "%s/%s", copy, names[0]);
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);
    xtts_codes_dirs_free(names, nn);
}

/* Rewrite the value under key in the environment at path with one byte changed. */
static void damage(const char *path, const uint8_t *key, size_t at, uint8_t x) {
    MDB_env *env;
    MDB_txn *t;
    MDB_dbi db;
    MDB_val k = {32, (void *)key}, v;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 4);
    assert_int_equal(mdb_env_open(env, path, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &t), 0);
    assert_int_equal(mdb_dbi_open(t, "codes", 0, &db), 0);
    assert_int_equal(mdb_get(t, db, &k, &v), 0);
    uint8_t buf[64];
    memcpy(buf, v.mv_data, v.mv_size);
    buf[at] ^= x;
    v.mv_data = buf;
    assert_int_equal(mdb_put(t, db, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(t), 0);
    mdb_env_close(env);
}

static void test_damaged_entry_refused(void **state) {
    (void)state;
    xtts_codes_header h;
    header(&h, 'c');
    h.num_tokens = 8;
    xtts_codes_store *w = NULL;
    xtts_error err;
    assert_int_equal(xtts_codes_store_create(tmp, &h, &w, &err), XTTS_OK);
    uint8_t key[32] = {7};
    uint16_t codes[3] = {1, 2, 3}, out[3];
    size_t n;
    assert_int_equal(xtts_codes_store_put(w, key, codes, 3, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_put(w, key, codes, 0, &err), XTTS_EUSAGE);
    assert_int_equal(xtts_codes_store_commit(w, &err), XTTS_OK);
    char path[512];
    snprintf(path, sizeof path, "%s", xtts_codes_store_path(w));
    xtts_codes_store_close(w);
    damage(path, key, 8, 0x01); /* a code's low byte: the checksum fails */
    xtts_codes_store *r = NULL;
    assert_int_equal(xtts_codes_store_open(path, &r, &err), XTTS_OK);
    assert_int_equal(xtts_codes_store_get(r, key, out, 3, &n, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum"));
    xtts_codes_store_close(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dir_name_from_both_hashes),
        cmocka_unit_test(test_codes_counted_as_the_dvae_strides),
        cmocka_unit_test_setup_teardown(test_put_commit_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_entry_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
