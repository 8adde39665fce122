/* guard.h — the readers' fault guard (guard.c), for the readers of LMDB files in this folder
 * (cache.c, reader.c, codes_read.c, and lmdb_env.c's assertion hook).
 *
 * Why. liblmdb follows page numbers without bounds checks, so a damaged data.mdb can fault
 * inside it (or inside a read of mapped record bytes): SIGSEGV or SIGBUS, not an error code.
 *
 * Where it is installed. xtts_cache_guard_faults() (reader.h), once per process
 * (pthread_once), never behind the caller's back: every program that reads a cache calls it
 * first (programs/xtts-cache-verify.c, -inspect, -report, -codes, xtts-train.c), and so do
 * libxtts-reader.so's xtts_api_open and xtts_api_codes_open (reader_api.c), so a Python
 * process gets it on its first open of a cache, not when it loads the library.
 *
 * Which signals. SIGSEGV and SIGBUS, with sigaction (SA_SIGINFO | SA_NODEFER | SA_ONSTACK),
 * and LMDB's assertions (not a signal: mdb_env_set_assert(env, xtts_guard_lmdb_assert), which
 * lmdb_env.c sets for every read role). Nothing else: SIGABRT, SIGFPE, SIGILL, SIGINT are
 * left as they are.
 *
 * How a host process keeps its own handlers. Installing saves the SIGSEGV and SIGBUS
 * handlers that were there before. A fault inside a guarded block
 *     GUARD(sig) { ...reads... } GUARD_END(sig)
 * jumps back with sig nonzero (the read returns XTTS_ECORRUPT naming the shard); a fault
 * anywhere else (no guarded block on the faulting thread) goes to the saved handler, with
 * its siginfo when it took one; where there was none (SIG_DFL, SIG_IGN) the default is put
 * back and the faulting access runs again, so the process dies of the signal as it would
 * have without the library. So a handler the host installed before the first open (Python's
 * faulthandler, enabled with -X faulthandler or faulthandler.enable(); a crash reporter)
 * still runs for its own faults (tests/e2e/reader_guard_host_handler.sh). A handler
 * installed after it is in front of the guard: it must pass on the faults it does not own
 * to the handler before it (faulthandler does, as it re-raises the signal after dumping the
 * tracebacks), or damaged shards become fatal again.
 *
 * Locals written inside a guarded block and read after a fault must be volatile. */
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
