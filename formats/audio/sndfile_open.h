/* sndfile_open.h — opening a libsndfile handle safely among threads.
 *
 * libsndfile keeps the reason an open failed in one process-wide variable, which every open
 * resets, a successful one included: with several threads decoding, sf_strerror(NULL) after a
 * failed open could read another thread's "No Error." instead of "Format not recognised.",
 * and a rejected record's reason changed from run to run. Every libsndfile open of the
 * library goes through xtts_sf_open: opens run side by side under a shared lock, and an open
 * that fails is tried once more under the exclusive lock, where the reason is read before any
 * other thread can open a file.
 */
#ifndef XTTS_FORMATS_SNDFILE_OPEN_H
#define XTTS_FORMATS_SNDFILE_OPEN_H

#include <stddef.h>
#include <sndfile.h>

/* Opens a handle (sf_open, sf_open_fd, sf_open_virtual ...) from ctx into si; called once, or
 * twice when the first call fails, with si as it was on entry both times. */
typedef SNDFILE *(*xtts_sf_opener)(void *ctx, SF_INFO *si);

/* The handle opener gives, or NULL with why (why_len bytes, may be 0) set to libsndfile's
 * reason for the failure. Thread-safe. */
SNDFILE *xtts_sf_open(xtts_sf_opener opener, void *ctx, SF_INFO *si, char *why, size_t why_len);

#endif
