/* writer_fixture.h — for unit tests that write caches through the writer: a scratch
 * directory under $TMPDIR (removed after the test) and a record encoder, made in a cmocka
 * setup and freed in its teardown. */
#ifndef XTTS_TEST_WRITER_FIXTURE_H
#define XTTS_TEST_WRITER_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "formats/record.h"

typedef struct {
    char dir[512];
    xtts_record_encoder *enc;
} fixture;

static inline int fixture_rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

/* Remove a directory tree (links not followed). */
static inline void rm_rf(const char *path) { nftw(path, fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* A fixture in *state: the directory $TMPDIR/NAME.XXXXXX and an encoder of dtype at zstd level. */
static inline int fixture_setup(void **state, const char *name, xtts_dtype dtype, int zstd_level) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    if (!mkdtemp(f->dir) || xtts_record_encoder_new(dtype, zstd_level, 0, &f->enc)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static inline int fixture_teardown(void **state) {
    fixture *f = *state;
    rm_rf(f->dir);
    xtts_record_encoder_delete(f->enc);
    free(f);
    return 0;
}

#endif
