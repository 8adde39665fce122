/* sndfile_open.c — see sndfile_open.h. */
#include "formats/audio/sndfile_open.h"

#include <pthread.h>
#include <stdio.h>

static pthread_rwlock_t sf_open_lock = PTHREAD_RWLOCK_INITIALIZER;

SNDFILE *xtts_sf_open(xtts_sf_opener opener, void *ctx, SF_INFO *si, char *why, size_t why_len) {
    SF_INFO entry = *si;
    pthread_rwlock_rdlock(&sf_open_lock);
    SNDFILE *sf = opener(ctx, si);
    pthread_rwlock_unlock(&sf_open_lock);
    if (sf) return sf;
    *si = entry;
    pthread_rwlock_wrlock(&sf_open_lock);
    sf = opener(ctx, si);
    if (!sf && why && why_len) snprintf(why, why_len, "%s", sf_strerror(NULL));
    pthread_rwlock_unlock(&sf_open_lock);
    return sf;
}
