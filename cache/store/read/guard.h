/* guard.h — the readers' fault guard (cache/store/read/reader.c), for the other readers of
 * LMDB files in this folder (codes_read.c).
 *
 * liblmdb follows page numbers without bounds checks, so a damaged file can fault inside it.
 * Once xtts_cache_guard_faults() has installed the handlers, a SIGSEGV or SIGBUS (or an LMDB
 * assertion, with mdb_env_set_assert(env, xtts_guard_lmdb_assert)) inside
 *     GUARD(sig) { ...reads... } GUARD_END(sig)
 * jumps back with sig nonzero; any other fault goes to the handler installed before. Locals
 * written inside the block and read after a fault must be volatile. */
#ifndef XTTS_CACHE_READ_GUARD_H
#define XTTS_CACHE_READ_GUARD_H

#include <lmdb.h>
#include <setjmp.h>

/* The innermost guarded block of this thread, NULL outside one. */
extern __thread sigjmp_buf *xtts_guard_jb;

/* LMDB's assertion hook: leaves the guarded block instead of abort(). */
void xtts_guard_lmdb_assert(MDB_env *env, const char *msg);

/* "SIGBUS", "SIGSEGV" or "LMDB assertion". */
const char *xtts_guard_signame(int sig);

#define GUARD(sig)                                                                              \
    sigjmp_buf guard_jb_##sig;                                                                  \
    sigjmp_buf *guard_prev_##sig = xtts_guard_jb;                                               \
    int sig = sigsetjmp(guard_jb_##sig, 0);                                                     \
    if (sig) xtts_guard_jb = guard_prev_##sig;                                                  \
    else {                                                                                      \
        xtts_guard_jb = &guard_jb_##sig;
#define GUARD_END(sig)                                                                          \
    xtts_guard_jb = guard_prev_##sig;                                                           \
    }

#endif
