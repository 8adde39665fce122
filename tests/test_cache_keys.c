/* test_cache_keys.c — carrying records between caches: a record's own databases written
 * with it and found again with it by content key (cache/store/keys.h), the reserved database
 * names, a record's speaker and language ids rewritten with a valid CRC
 * (formats/record_ids.h), the "keys" value, and the update directory exchanged with the
 * cache (cache/store/update_dir.h). Real LMDB shards and records. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/keys.h"
#include "cache/store/update_dir.h"
#include "cache/store/writer.h"
#include "formats/manifest.h"
#include "formats/record.h"
#include "formats/record_ids.h"
#include "prep/melcache/update.h"
#include "tests/writer_fixture.h"

#define N_MELS 4

static int setup(void **state) { return fixture_setup(state, "test_cache_keys", XTTS_DTYPE_F32, 1); }

static int teardown(void **state) { return fixture_teardown(state); }

static void config(xtts_cache_config *c) {
    xtts_cache_config_defaults(c);
    c->mel.n_mels = N_MELS;
    c->max_tokens = 8;
    c->max_frames = 16;
    c->shuffle = 0;
    c->dtype = XTTS_DTYPE_F32;
}

/* Record i (id "r<i>"), speaker i % 3. */
static void make_record(fixture *f, int i, const uint8_t **buf, size_t *len) {
    char id[16];
    snprintf(id, sizeof id, "r%d", i);
    int32_t tokens[8] = {1, 2, 3, i, 0, 0, 0, 0};
    float mel[N_MELS * 16];
    for (int k = 0; k < N_MELS * 16; k++) mel[k] = (float)(k % 16 < 10 ? k + i : -11);
    xtts_record_input in = {.id = id, .speaker_id = (uint32_t)(i % 3), .lang_id = 0, .n_samples = 2560, .n_tokens = 4,
                            .tokens_padded = 8, .n_frames = 10, .frames_padded = 16, .n_mels = N_MELS,
                            .pad_value = -11.0f, .tokens = tokens, .mel = mel};
    xtts_error e;
    assert_int_equal(xtts_record_encode(f->enc, &in, buf, len, &e), XTTS_OK);
}

static void key_of(int i, uint8_t key[XTTS_CONTENT_KEY_BYTES]) {
    memset(key, 0, XTTS_CONTENT_KEY_BYTES);
    key[0] = (uint8_t)i;
    key[31] = 0xa5;
}

/* A finished cache of n records, each with a "keys" entry and an entry in "quality" (a
 * database the writer knows nothing about). */
static void build(fixture *f, const char *name, int n, int with_keys, char out[600]) {
    snprintf(out, 600, "%s/%s", f->dir, name);
    xtts_cache_config c;
    config(&c);
    xtts_cache_writer_options o;
    xtts_cache_writer_options_defaults(&o, out);
    xtts_cache_writer *w;
    xtts_error e;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &e), XTTS_OK);
    for (int i = 0; i < n; i++) {
        const uint8_t *buf;
        size_t len;
        make_record(f, i, &buf, &len);
        uint8_t key[XTTS_CONTENT_KEY_BYTES], kv[XTTS_CONTENT_KEY_BYTES + 4 + 16 * N_MELS];
        double sum[N_MELS] = {i, 1, 2, 3}, sq[N_MELS] = {4, 5, 6, i};
        key_of(i, key);
        xtts_keys_value_pack(key, N_MELS, sum, sq, kv);
        char q[24];
        snprintf(q, sizeof q, "quality %d", i);
        xtts_cache_entry ent[2] = {{XTTS_KEYS_DB, kv, sizeof kv}, {"quality", q, strlen(q)}};
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        assert_int_equal(xtts_cache_writer_put_entries(w, (uint64_t)i, id, buf, len, NULL, with_keys ? ent : ent + 1,
                                                       with_keys ? 2 : 1, &e), XTTS_OK);
    }
    assert_int_equal(xtts_cache_writer_finish(w, NULL, &e), XTTS_OK);
}

static void a_record_is_found_by_id_and_key_with_every_database_of_its_own(void **state) {
    fixture *f = *state;
    char dir[600];
    build(f, "c", 5, 1, dir);
    xtts_cache_config c;
    config(&c);
    char hash[65];
    xtts_cache_config_hash(&c, hash);
    xtts_cache_source *s;
    xtts_error e;
    assert_int_equal(xtts_cache_source_open(dir, hash, &s, &e), XTTS_OK);
    assert_int_equal(xtts_cache_source_records(s), 5);
    uint8_t key[XTTS_CONTENT_KEY_BYTES];
    key_of(3, key);
    xtts_cache_source_hit h;
    assert_int_equal(xtts_cache_source_find(s, "r3", key, &h, &e), XTTS_OK);
    assert_true(h.found && h.same);
    const uint8_t *buf;
    size_t len;
    make_record(f, 3, &buf, &len);
    assert_int_equal(h.len, len);
    assert_memory_equal(h.record, buf, len);
    assert_int_equal(h.n_entries, 2);
    int seen_quality = 0, seen_keys = 0;
    for (size_t i = 0; i < h.n_entries; i++) {
        if (!strcmp(h.entries[i].db, "quality")) {
            seen_quality = 1;
            assert_int_equal(h.entries[i].len, strlen("quality 3"));
            assert_memory_equal(h.entries[i].data, "quality 3", h.entries[i].len);
        }
        if (!strcmp(h.entries[i].db, XTTS_KEYS_DB)) seen_keys = 1;
    }
    assert_true(seen_quality && seen_keys);
    double sum[N_MELS], sq[N_MELS];
    assert_int_equal(xtts_keys_value_unpack(h.keys_value, h.keys_len, N_MELS, sum, sq), 0);
    assert_true(sum[0] == 3.0 && sq[3] == 3.0 && sum[1] == 1.0);
    assert_int_equal(xtts_keys_value_unpack(h.keys_value, h.keys_len, N_MELS + 1, sum, sq), -1);
    key_of(2, key); /* r3 under another key: found, not the same */
    assert_int_equal(xtts_cache_source_find(s, "r3", key, &h, &e), XTTS_OK);
    assert_true(h.found && !h.same && h.record == NULL);
    assert_int_equal(xtts_cache_source_find(s, "r99", key, &h, &e), XTTS_OK);
    assert_false(h.found);
    xtts_cache_source_close(s);
}

static void a_source_of_another_configuration_or_without_keys_is_refused(void **state) {
    fixture *f = *state;
    char dir[600], old[600];
    build(f, "c", 3, 1, dir);
    build(f, "old", 3, 0, old);
    xtts_cache_config c;
    config(&c);
    char hash[65];
    xtts_cache_config_hash(&c, hash);
    xtts_cache_source *s = NULL;
    xtts_error e;
    assert_int_equal(xtts_cache_source_open(dir, "0000000000000000000000000000000000000000000000000000000000000000", &s, &e),
                     XTTS_EMISMATCH);
    assert_null(s);
    assert_int_equal(xtts_cache_source_open(old, hash, &s, &e), XTTS_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "no content keys"));
    char none[700];
    snprintf(none, sizeof none, "%s/none", f->dir);
    assert_int_equal(xtts_cache_source_open(none, hash, &s, &e), XTTS_ENOTFOUND);
}

static void the_writers_own_databases_cannot_take_entries(void **state) {
    fixture *f = *state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/c", f->dir);
    xtts_cache_config c;
    config(&c);
    xtts_cache_writer_options o;
    xtts_cache_writer_options_defaults(&o, dir);
    xtts_cache_writer *w;
    xtts_error e;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &e), XTTS_OK);
    const uint8_t *buf;
    size_t len;
    make_record(f, 0, &buf, &len);
    static const char *bad[] = {"records", "ids", "meta", "lengths", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        xtts_cache_entry ent = {bad[i], "x", 1};
        assert_int_equal(xtts_cache_writer_put_entries(w, 0, "r0", buf, len, NULL, &ent, 1, &e), XTTS_EUSAGE);
    }
    assert_int_equal(xtts_cache_writer_count(w), 0); /* a refused put changes nothing */
    xtts_cache_entry ok = {"quality", "x", 1};
    assert_int_equal(xtts_cache_writer_put_entries(w, 0, "r0", buf, len, NULL, &ok, 1, &e), XTTS_OK);
    assert_int_equal(xtts_cache_writer_count(w), 1);
    xtts_cache_writer_abort(w);
}

static void set_ids_rewrites_speaker_and_language_with_a_valid_crc(void **state) {
    fixture *f = *state;
    const uint8_t *buf;
    size_t len;
    make_record(f, 4, &buf, &len);
    uint8_t *copy = malloc(len);
    memcpy(copy, buf, len);
    xtts_error e;
    assert_int_equal(xtts_record_set_ids(copy, len, 7, 19, &e), XTTS_OK);
    xtts_record_header h;
    assert_int_equal(xtts_record_parse_header(copy, len, &h, &e), XTTS_OK);
    assert_int_equal(h.speaker_id, 7);
    assert_int_equal(h.lang_id, 19);
    xtts_record_decoder *dec;
    assert_int_equal(xtts_record_decoder_new(&dec), XTTS_OK);
    assert_int_equal(xtts_record_check(dec, copy, len, &e), XTTS_OK);
    copy[33] ^= 1; /* the CRC still guards the rewritten fields */
    assert_int_not_equal(xtts_record_parse_header(copy, len, &h, &e), XTTS_OK);
    assert_int_equal(xtts_record_set_ids(copy, 10, 1, 1, &e), XTTS_EINPUT);
    xtts_record_decoder_delete(dec);
    free(copy);
}

static int exists(const char *dir, const char *name) {
    char p[800];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void the_update_directory_takes_the_caches_place_and_the_old_one_goes(void **state) {
    fixture *f = *state;
    char dir[600], stage[700];
    build(f, "c", 2, 1, dir);
    xtts_error e;
    assert_int_equal(xtts_update_dir_path(dir, stage, sizeof stage, &e), XTTS_OK);
    int resumed = 1;
    assert_int_equal(xtts_update_dir_prepare(dir, stage, &resumed, &e), XTTS_OK);
    assert_int_equal(resumed, 0);
    assert_true(exists(stage, ".xtts-update"));
    assert_int_equal(xtts_update_dir_prepare(dir, stage, &resumed, &e), XTTS_OK);
    assert_int_equal(resumed, 1); /* a marked stage is continued */
    FILE *m = fopen(strcat(strcpy((char[800]){0}, stage), "/manifest.json"), "w");
    fputs("{\"new\": 1}", m);
    fclose(m);
    assert_int_equal(xtts_update_dir_switch(dir, stage, &e), XTTS_OK);
    assert_false(exists(dir, ".xtts-update"));
    assert_false(exists(dir, "shard-00000"));
    assert_true(exists(dir, "manifest.json"));
    assert_int_equal(access(stage, F_OK), -1);
    /* a file of the user's in the cache stops an update before anything changes */
    FILE *u = fopen(strcat(strcpy((char[800]){0}, dir), "/notes.txt"), "w");
    fclose(u);
    assert_int_equal(xtts_update_dir_prepare(dir, stage, &resumed, &e), XTTS_EINPUT);
    assert_non_null(strstr(e.msg, "notes.txt"));
    assert_int_equal(access(stage, F_OK), -1);
}

/* The file hash read in 64 KiB pieces is the one-shot XXH64 and the size (XXH64 of nothing
 * is 0xef46db3751d8e999, as the reference library gives); a file rewritten in
 * place with its size and modification time restored hashes otherwise, also within one run. */
static void audio_hash_is_xxh64_of_the_bytes_and_sees_a_file_rewritten_in_place(void **state) {
    fixture *f = *state;
    assert_true(xtts_xxh64("", 0, 0) == 0xef46db3751d8e999ULL);
    char path[700];
    snprintf(path, sizeof path, "%s/a.wav", f->dir);
    size_t n = 200003;
    uint8_t *data = malloc(n);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; data[i] = (uint8_t)x; }
    FILE *fp = fopen(path, "wb");
    fwrite(data, 1, n, fp);
    fclose(fp);
    xtts_audio_hasher *hs;
    xtts_error e;
    assert_int_equal(xtts_audio_hasher_new(&hs, &e), XTTS_OK);
    uint8_t a[32], b[32];
    assert_int_equal(xtts_audio_hasher_hash(hs, path, a), 0);
    uint64_t h[2] = {xtts_xxh64(data, n, 0), n};
    for (int i = 0; i < 16; i++) assert_int_equal(a[i], (uint8_t)(h[i / 8] >> (8 * (i % 8))));
    struct stat sb;
    stat(path, &sb);
    data[n / 2] ^= 0xff;
    fp = fopen(path, "r+b");
    fwrite(data, 1, n, fp);
    fclose(fp);
    struct timespec times[2] = {sb.st_atim, sb.st_mtim};
    utimensat(AT_FDCWD, path, times, 0);
    assert_int_equal(xtts_audio_hasher_hash(hs, path, b), 0);
    assert_memory_not_equal(a, b, 32);
    snprintf(path, sizeof path, "%s/missing.wav", f->dir);
    assert_int_equal(xtts_audio_hasher_hash(hs, path, b), -1);
    xtts_audio_hasher_delete(hs);
    free(data);
}

/* A saved stat record spares the read while the file's stat matches it (the hash given is the
 * record's, here a made-up one, so the file was not read); a write moves the change time and
 * the file is read again. Of two loaded records of one file the later change time wins; a
 * file read within a second of its last change is not saved (git's racy entries); a blob
 * that is not one is ignored. A saved record is 56 bytes after a 16-byte head. */
static void stat_records_spare_the_read_until_the_file_changes(void **state) {
    fixture *f = *state;
    char path[700];
    snprintf(path, sizeof path, "%s/s.wav", f->dir);
    FILE *fp = fopen(path, "wb");
    fputs("0123456789", fp);
    fclose(fp);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    uint8_t blob[16 + 2 * 56], out[32];
    memcpy(blob, "XAST", 4);
    xtts_put_le32(blob + 4, 1);
    memset(blob + 8, 0, 8);
    blob[8] = 2; /* records, u64 LE */
    for (int r = 0; r < 2; r++) { /* an older record (change time - 1 ns, hash 41), then the file's (hash 42) */
        uint64_t v[7] = {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino, (uint64_t)sb.st_size,
                         (uint64_t)(sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec),
                         (uint64_t)(sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec) - (r ? 0 : 1), 41u + (unsigned)r, 10};
        for (int k = 0; k < 7; k++)
            for (int i = 0; i < 8; i++) blob[16 + r * 56 + k * 8 + i] = (uint8_t)(v[k] >> (8 * i));
    }
    xtts_audio_hasher *hs;
    xtts_error e;
    uint64_t n_read, n_known;
    assert_int_equal(xtts_audio_hasher_new(&hs, &e), XTTS_OK);
    assert_int_equal(xtts_audio_hasher_load(hs, "XAST junk", 9, &e), XTTS_OK); /* not a blob: ignored */
    assert_int_equal(xtts_audio_hasher_load(hs, blob, sizeof blob, &e), XTTS_OK);
    assert_int_equal(xtts_audio_hasher_hash(hs, path, out), 0);
    assert_int_equal(out[0], 42);
    assert_int_equal(out[8], 10);
    xtts_audio_hasher_counts(hs, &n_read, &n_known);
    assert_true(n_read == 0 && n_known == 1);
    /* the record is saved again (its times are old enough at its first read, not re-checked) */
    void *saved;
    size_t len;
    assert_int_equal(xtts_audio_hasher_save(hs, &saved, &len, &e), XTTS_OK);
    assert_int_equal(len, 16 + 56);
    free(saved);
    xtts_audio_hasher_delete(hs);
    /* the file rewritten (a byte longer, so that even a clock too coarse to move its times
     * shows it): the record no longer matches, the file is read; just changed, it is not saved */
    fp = fopen(path, "wb");
    fputs("0123456789A", fp);
    fclose(fp);
    assert_int_equal(xtts_audio_hasher_new(&hs, &e), XTTS_OK);
    assert_int_equal(xtts_audio_hasher_load(hs, blob, sizeof blob, &e), XTTS_OK);
    assert_int_equal(xtts_audio_hasher_hash(hs, path, out), 0);
    assert_int_equal(out[0], (uint8_t)xtts_xxh64("0123456789A", 11, 0));
    assert_int_equal(out[8], 11);
    xtts_audio_hasher_counts(hs, &n_read, &n_known);
    assert_true(n_read == 1 && n_known == 0);
    assert_int_equal(xtts_audio_hasher_save(hs, &saved, &len, &e), XTTS_OK);
    assert_int_equal(len, 16); /* racy: changed within a second of its read */
    free(saved);
    xtts_audio_hasher_delete(hs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_record_is_found_by_id_and_key_with_every_database_of_its_own, setup, teardown),
        cmocka_unit_test_setup_teardown(a_source_of_another_configuration_or_without_keys_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(the_writers_own_databases_cannot_take_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(set_ids_rewrites_speaker_and_language_with_a_valid_crc, setup, teardown),
        cmocka_unit_test_setup_teardown(the_update_directory_takes_the_caches_place_and_the_old_one_goes, setup, teardown),
        cmocka_unit_test_setup_teardown(audio_hash_is_xxh64_of_the_bytes_and_sees_a_file_rewritten_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(stat_records_spare_the_read_until_the_file_changes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
