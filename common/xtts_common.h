/* xtts_common.h — error reporting, checksums, hashes and small helpers shared by
 * every part of xtts-prep.
 *
 * Errors: library functions return an xtts_status (0 = XTTS_OK) and, when given an
 * xtts_error*, fill it with a one-line message naming the file, line or record and what
 * is wrong. Programs print that message once and map the status to an exit code with
 * xtts_exit_code(). Library code never calls exit() and never asserts on user input.
 */
#ifndef XTTS_COMMON_H
#define XTTS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef XTTS_VERSION
#define XTTS_VERSION "0.0.0"
#endif

typedef enum {
    XTTS_OK = 0,
    XTTS_EUSAGE = 1,    /* bad option or argument (exit 1) */
    XTTS_EINPUT = 2,    /* malformed input file or record */
    XTTS_EIO = 3,       /* read/write/open failure, disk full */
    XTTS_ENOMEM = 4,    /* allocation failed */
    XTTS_ECORRUPT = 5,  /* stored data failed a checksum or shape check */
    XTTS_EMISMATCH = 6, /* configuration or version does not match */
    XTTS_ERANGE = 7,    /* value does not fit the caller's buffer or a limit */
    XTTS_ENOTFOUND = 8, /* key, id or file not present */
    XTTS_EBUSY = 9,     /* resource held by another process */
    XTTS_EUNSUPPORTED = 10, /* feature not built in or not available (e.g. CUDA) */
} xtts_status;

#define XTTS_ERRMSG_MAX 512

typedef struct {
    xtts_status code;
    char msg[XTTS_ERRMSG_MAX];
} xtts_error;

/* Record an error: sets err->code and formats err->msg (printf-style). Returns code.
 * err may be NULL, in which case only the code is returned. Errors: none of its own (it
 * returns whatever code it is given). */
xtts_status xtts_error_set(xtts_error *err, xtts_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear an error to XTTS_OK with an empty message. */
void xtts_error_clear(xtts_error *err);

/* A short fixed description of a status code. Never NULL. */
const char *xtts_strerror(xtts_status code);

/* Exit code for a program that stops on this status: 0 ok, 1 usage, 2 otherwise. */
int xtts_exit_code(xtts_status code);

/* Print "prog: msg" on stderr, one line. */
void xtts_error_print(const char *prog, const xtts_error *err);
/* After a usage error (already printed on one line): the hint "Try 'PROG --help' for more
 * information." on stderr, as GNU programs do, instead of the whole help text. */
void xtts_usage_hint(const char *prog);

/* splitmix64: a small seeded generator (the state advances by a constant each call), the
 * one every part uses where a seed must give the same sequence everywhere. */
static inline uint64_t xtts_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* For programs only (called first thing in main): at exit, standard output is flushed and
 * closed, and a failed write (a full disk, /dev/full, a closed pipe) becomes a one-line
 * message "prog: standard output: write failed: REASON" and exit status 2, whatever main
 * returned. Libraries never call it. */
void xtts_check_stdout_at_exit(const char *prog);
/* The program has already said (one line) that writing standard output failed: the check at
 * exit still exits 2 but prints nothing more. */
void xtts_stdout_error_reported(void);
/* For a program that allocates and frees blocks of hundreds of kilobytes per record (a
 * cache writer's records): glibc's malloc keeps blocks up to 32 MiB in its heaps and keeps
 * up to 64 MiB of freed memory instead of mapping and unmapping each block, whose fresh
 * pages fault again every time (measured: xtts-melcache --audio int16 spent half its time
 * in the kernel); all threads share one heap, whose first step (about 80 MiB) is advised
 * for transparent huge pages (the working set's first touches: 6,700 faults -> 1,600 for an
 * hour of audio, -j 2). A no-op elsewhere. Programs call it first thing; libraries never do. */
void xtts_malloc_for_batch(void);
/* buf, or a buffer of at least need elements of elem bytes in its place when *cap is
 * smaller, for a buffer whose contents need not be kept: it is freed and allocated again
 * (realloc would copy the old contents into freshly touched pages), rounded up to 64 Ki
 * elements so that inputs of growing sizes do not renew it each time. NULL when out of
 * memory (buf is freed then, and *cap 0). */
void *xtts_renew(void *buf, size_t *cap, size_t need, size_t elem);

/* ---- checksums and hashes ---------------------------------------------- */

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), continued from crc (start with 0). */
uint32_t xtts_crc32(uint32_t crc, const void *data, size_t len);

/* 64-bit FNV-1a, continued from h (start with XTTS_FNV64_INIT). Cheap and stable:
 * used for deterministic splits and hash tables, never as a content digest. */
#define XTTS_FNV64_INIT 0xcbf29ce484222325ULL
uint64_t xtts_fnv1a64(uint64_t h, const void *data, size_t len);

/* The 64-bit hash of a record id (FNV-1a with a finalizer that spreads the low bits used for
 * table slots); never 0. In-memory duplicate checks only: never stored. */
uint64_t xtts_id_hash(const void *id, size_t len);

/* A set of nonzero 64-bit hashes: open addressing, doubling as it fills (half full at most).
 * Zero-initialize; xtts_hash_set_free releases it. */
typedef struct {
    uint64_t *slots;
    size_t cap, used;
} xtts_hash_set;
/* 1 added, 0 already present, -1 out of memory (the set is unchanged). h must not be 0. */
int xtts_hash_set_add(xtts_hash_set *s, uint64_t h);
int xtts_hash_set_has(const xtts_hash_set *s, uint64_t h);
/* NULL is allowed. */
void xtts_hash_set_free(xtts_hash_set *s);

/* A Bloom filter of nonzero 64-bit hashes in a fixed XTTS_ID_FILTER_BYTES, however many are
 * added: "maybe added" or "surely not". Its false positives grow with the count (4 bits an
 * entry: about 1 in 1,300,000 at 1,000,000 entries, 1 in 230 at 10,000,000), so a caller
 * confirms a "maybe" where the entries are stored. The bytes are allocated on the first add
 * in their own mapping and touched as bits are set: an entry's bits lie in one 4 KiB page,
 * so n entries touch at most n pages. Zero-initialize; xtts_id_filter_free releases it. */
#define XTTS_ID_FILTER_BYTES ((size_t)16 << 20)
typedef struct {
    uint64_t *bits;
} xtts_id_filter;
/* Add h, and say whether it may have been added before: 1 when its bits were all set
 * already ("maybe"), 0 when not (surely new), -1 out of memory (the filter is unchanged).
 * Testing and adding in one pass writes a page on its first touch, where a lookup before
 * the add would fault the page in twice (the zero page, then a copy). */
int xtts_id_filter_add(xtts_id_filter *f, uint64_t h);
int xtts_id_filter_maybe(const xtts_id_filter *f, uint64_t h);
/* NULL is allowed. */
void xtts_id_filter_free(xtts_id_filter *f);

/* SHA-256, streaming. Used for vocabulary hashes, configuration hashes and digests. */
typedef struct {
    uint32_t state[8];
    uint64_t bytes;
    uint8_t block[64];
    size_t used;
} xtts_sha256;
void xtts_sha256_init(xtts_sha256 *s);
void xtts_sha256_update(xtts_sha256 *s, const void *data, size_t len);
void xtts_sha256_final(xtts_sha256 *s, uint8_t out[32]);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void xtts_hex(const uint8_t *bytes, size_t n, char *out);
/* SHA-256 of a whole file as 64 hex chars + NUL.
 * Errors: XTTS_EIO (cannot open or read path, a missing file included). */
xtts_status xtts_sha256_file(const char *path, char out_hex[65], xtts_error *err);

/* ---- numbers --------------------------------------------------------------- */

/* IEEE half precision <-> single, round to nearest even; NaN and Inf preserved. */
uint16_t xtts_f32_to_f16(float f);
float xtts_f16_to_f32(uint16_t h);
/* The same over arrays (little-endian halves); vectorized where the compiler has _Float16
 * (F16C on x86), bit-identical to the scalar forms for every non-NaN value. */
void xtts_f32_to_f16_n(const float *in, uint16_t *out, size_t n);
void xtts_f16_to_f32_n(const uint16_t *in, float *out, size_t n);

static inline void xtts_put_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
}
static inline uint64_t xtts_get_be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}
static inline void xtts_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void xtts_put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint16_t xtts_get_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t xtts_get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* ---- files ----------------------------------------------------------------- */

/* Write len bytes to path atomically: path.tmp.<pid>, fsync, rename, fsync of the
 * directory. On failure the old file (if any) is untouched and the temp file removed.
 * Errors: XTTS_ERANGE (path.tmp.<pid> longer than 4095 bytes), XTTS_EIO (cannot create, write,
 * fsync, close or rename the temp file; a failed fsync of the directory is ignored). */
xtts_status xtts_write_file_atomic(const char *path, const void *data, size_t len, xtts_error *err);

/* Read a whole file into a malloc'd buffer (NUL-terminated; *len excludes the NUL).
 * Files larger than max_bytes are refused with XTTS_ERANGE. Caller frees *out. path "-" reads
 * standard input.
 * Errors: XTTS_ENOTFOUND (path does not exist), XTTS_EIO (cannot open for another reason, or a
 * read error), XTTS_ERANGE (larger than max_bytes), XTTS_ENOMEM. */
xtts_status xtts_read_file(const char *path, size_t max_bytes, char **out, size_t *len, xtts_error *err);

/* Create a directory and its parents (like mkdir -p).
 * Errors: XTTS_ERANGE (path empty or 4096 bytes or longer), XTTS_EIO (a component cannot be
 * created, or path is not a directory at the end). */
xtts_status xtts_mkdir_p(const char *path, xtts_error *err);

/* dir and name joined by one '/' into out (cap bytes, always terminated when cap > 0),
 * however many slashes dir ends with: "ckpt/" and "ckpt" both give "ckpt/train.ckpt"; the
 * root "/" gives "/name", an empty dir name alone. Returns the joined length, as snprintf
 * does: cap or more when it was cut. */
size_t xtts_path_join(char *out, size_t cap, const char *dir, const char *name);

/* Monotonic clock in seconds. */
double xtts_now_s(void);

/* Parse a whole string as an integer/double in [lo, hi]. Returns 0 on success. */
int xtts_parse_long(const char *s, long lo, long hi, long *out);
int xtts_parse_double(const char *s, double lo, double hi, double *out);

/* ---- record ids -------------------------------------------------------------- */

/* The longest record id, in bytes: LMDB's key limit (mdb_env_get_maxkeysize(), 511 in a
 * default liblmdb build) minus the 6 bytes of "audio:" the cache prefixes to an id in a
 * meta key. Checked where ids enter (xtts-tokenize, xtts-melcache) as a per-record
 * rejection; test_writer checks the figure against the linked liblmdb. */
#define XTTS_ID_MAX_BYTES 505
#define XTTS_ID_MAX_BYTES_STR "505"

/* ---- languages ------------------------------------------------------------- */

/* XTTS's 17 languages, in the order that defines language ids everywhere (cache records,
 * special tokens): en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja hi. */
#define XTTS_N_LANGS 17
extern const char *const xtts_lang_codes[XTTS_N_LANGS];
/* Index of a language code (case-insensitive; "zh" is taken as "zh-cn"), or -1. */
int xtts_lang_index(const char *code);

/* Any language (common/lang.c). A language tag here is BCP-47-like: a primary subtag that is
 * an ISO 639-1 code (two letters, from the ISO 639-2 table's alpha-2 column) or any three
 * letters (ISO 639-2/3), then optional -subtags of 1-8 letters or digits; at most 15 bytes.
 * Normalise a tag in place: '_' becomes '-', the primary subtag lower case, a two-letter
 * region upper case ("en_us" -> "en-US"); XTTS's codes keep their spelling ("zh-CN" ->
 * "zh-cn", "zh" -> "zh-cn"). Returns 1 if the result is a valid tag, else 0. */
int xtts_lang_tag_normalize(char *tag);
/* 1 if tag is a valid tag already in normal form. */
int xtts_lang_tag_valid(const char *tag);
/* Language ids: 0..16 are XTTS's 17 (xtts_lang_codes); other tags get ids from 17 on in the
 * order this process first interns them (thread-safe, at most XTTS_MAX_LANGS in all). Files
 * never store these process-local ids: they store codes, or ids from their own table. */
#define XTTS_MAX_LANGS 256
/* Id of a valid normal-form tag, adding it when new; -1 when invalid or the table is full. */
int xtts_lang_intern(const char *tag);
/* Id of a tag already known (XTTS's or interned), or -1. */
int xtts_lang_find(const char *tag);
/* The code of an id, or NULL. */
const char *xtts_lang_code(int id);

/* ---- progress ----------------------------------------------------------------- */

/* A progress line on stderr: "label: done/total (rate unit/s, ETA mm:ss) extra".
 * Active when stderr is a terminal or force is set; rate-limited to ~4 updates/s. */
typedef struct {
    const char *label;
    int active;
    int tty;
    double t0, last;
} xtts_progress;
void xtts_progress_init(xtts_progress *p, const char *label, int force);
void xtts_progress_update(xtts_progress *p, uint64_t done, uint64_t total, const char *extra);
void xtts_progress_finish(xtts_progress *p, uint64_t done, uint64_t total, const char *extra);

#ifdef __cplusplus
}
#endif
#endif
