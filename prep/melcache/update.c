/* update.c — content keys of token-stream records (update.h). */
#include "prep/melcache/update.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEMO_SLOTS 4096 /* files remembered; a slot is overwritten by the next file hashing to it */

typedef struct {
    int used;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    uint8_t sha[32];
} memo_slot;

struct xtts_audio_hasher {
    pthread_mutex_t mu;
    memo_slot *slots; /* [MEMO_SLOTS] */
};

xtts_status xtts_audio_hasher_new(xtts_audio_hasher **out, xtts_error *err) {
    xtts_audio_hasher *h = calloc(1, sizeof *h);
    if (h) h->slots = calloc(MEMO_SLOTS, sizeof *h->slots);
    if (!h || !h->slots) {
        if (h) free(h->slots);
        free(h);
        *out = NULL;
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&h->mu, NULL);
    *out = h;
    return XTTS_OK;
}

void xtts_audio_hasher_delete(xtts_audio_hasher *h) {
    if (!h) return;
    pthread_mutex_destroy(&h->mu);
    free(h->slots);
    free(h);
}

static int same_file(const memo_slot *m, const struct stat *sb) {
    return m->used && m->dev == sb->st_dev && m->ino == sb->st_ino && m->size == sb->st_size &&
           m->mtime.tv_sec == sb->st_mtim.tv_sec && m->mtime.tv_nsec == sb->st_mtim.tv_nsec &&
           m->ctime.tv_sec == sb->st_ctim.tv_sec && m->ctime.tv_nsec == sb->st_ctim.tv_nsec;
}

/* XXH64 (Yann Collet's xxHash, 64-bit; the published algorithm), streamed. SHA-256 runs at
 * about 230 MB/s here, which for a 44.1 kHz file is twice the cost of decoding,
 * resampling and computing its mel; XXH64 runs at several GB/s. The hash and the file's
 * size are what the content key (a SHA-256) covers of the file. */
#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

typedef struct {
    uint64_t v[4], seed, total;
    uint8_t carry[32];
    size_t n_carry;
} xxh64_state;

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t read64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; } /* little-endian hosts */
static inline uint32_t read32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t xx_round(uint64_t acc, uint64_t in) { return rotl64(acc + in * XXP2, 31) * XXP1; }
static inline uint64_t xx_merge(uint64_t h, uint64_t v) { return (h ^ xx_round(0, v)) * XXP1 + XXP4; }

static void xxh64_init(xxh64_state *s, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->v[0] = seed + XXP1 + XXP2;
    s->v[1] = seed + XXP2;
    s->v[2] = seed;
    s->v[3] = seed - XXP1;
}

static void xxh64_stripes(xxh64_state *s, const uint8_t *p, size_t n_stripes) {
    uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
    for (size_t i = 0; i < n_stripes; i++, p += 32) {
        v0 = xx_round(v0, read64(p));
        v1 = xx_round(v1, read64(p + 8));
        v2 = xx_round(v2, read64(p + 16));
        v3 = xx_round(v3, read64(p + 24));
    }
    s->v[0] = v0; s->v[1] = v1; s->v[2] = v2; s->v[3] = v3;
}

static void xxh64_update(xxh64_state *s, const uint8_t *p, size_t n) {
    s->total += n;
    if (s->n_carry) {
        size_t take = 32 - s->n_carry < n ? 32 - s->n_carry : n;
        memcpy(s->carry + s->n_carry, p, take);
        s->n_carry += take;
        p += take;
        n -= take;
        if (s->n_carry < 32) return;
        xxh64_stripes(s, s->carry, 1);
        s->n_carry = 0;
    }
    xxh64_stripes(s, p, n / 32);
    memcpy(s->carry, p + n / 32 * 32, n % 32);
    s->n_carry = n % 32;
}

static uint64_t xxh64_final(const xxh64_state *s) {
    uint64_t h;
    if (s->total >= 32) {
        h = rotl64(s->v[0], 1) + rotl64(s->v[1], 7) + rotl64(s->v[2], 12) + rotl64(s->v[3], 18);
        for (int i = 0; i < 4; i++) h = xx_merge(h, s->v[i]);
    } else {
        h = s->seed + XXP5;
    }
    h += s->total;
    const uint8_t *p = s->carry, *end = s->carry + s->n_carry;
    for (; p + 8 <= end; p += 8) h = rotl64(h ^ xx_round(0, read64(p)), 27) * XXP1 + XXP4;
    if (p + 4 <= end) {
        h = rotl64(h ^ (uint64_t)read32(p) * XXP1, 23) * XXP2 + XXP3;
        p += 4;
    }
    for (; p < end; p++) h = rotl64(h ^ *p * XXP5, 11) * XXP1;
    h ^= h >> 33; h *= XXP2; h ^= h >> 29; h *= XXP3; h ^= h >> 32;
    return h;
}

uint64_t xtts_xxh64(const void *data, size_t len, uint64_t seed) {
    xxh64_state a;
    xxh64_init(&a, seed);
    xxh64_update(&a, data, len);
    return xxh64_final(&a);
}

/* The file's XXH64 (seed 0) and its size, each as 8 bytes LE, then 16 zero bytes. */
static int hash_fd(int fd, uint8_t out[32]) {
    static _Thread_local uint8_t buf[1 << 16];
    xxh64_state a;
    xxh64_init(&a, 0);
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        xxh64_update(&a, buf, (size_t)n);
    }
    memset(out, 0, 32);
    uint64_t h[2] = {xxh64_final(&a), a.total};
    for (int i = 0; i < 16; i++) out[i] = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
    return 0;
}

int xtts_audio_hasher_hash(xtts_audio_hasher *h, const char *path, uint8_t out[32]) {
    memset(out, 0, 32);
    /* O_NONBLOCK: a fifo given as an audio path must not block the open (it is refused
     * below as not a regular file, as the decoder refuses it) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -1;
    }
    uint64_t k = xtts_fnv1a64(XTTS_FNV64_INIT, &sb.st_ino, sizeof sb.st_ino);
    k = xtts_fnv1a64(k, &sb.st_dev, sizeof sb.st_dev);
    memo_slot *m = &h->slots[k % MEMO_SLOTS];
    pthread_mutex_lock(&h->mu);
    int hit = same_file(m, &sb);
    if (hit) memcpy(out, m->sha, 32);
    pthread_mutex_unlock(&h->mu);
    if (hit) {
        close(fd);
        return 0;
    }
    int rc = hash_fd(fd, out);
    close(fd);
    if (rc) {
        memset(out, 0, 32);
        return -1;
    }
    pthread_mutex_lock(&h->mu);
    *m = (memo_slot){.used = 1, .dev = sb.st_dev, .ino = sb.st_ino, .size = sb.st_size, .mtime = sb.st_mtim, .ctime = sb.st_ctim};
    memcpy(m->sha, out, 32);
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static void add_str(xtts_sha256 *s, const char *v) {
    const char *x = v ? v : "";
    xtts_sha256_update(s, x, strlen(x) + 1);
}

void xtts_content_key(const xtts_content_key_input *in, uint8_t out[32]) {
    static const char tag[] = "xtts-content-key 1";
    xtts_sha256 s;
    uint8_t n[4];
    xtts_sha256_init(&s);
    xtts_sha256_update(&s, tag, sizeof tag);
    add_str(&s, in->config_hash);
    uint8_t have = in->audio_hash != NULL;
    xtts_sha256_update(&s, &have, 1);
    if (have) xtts_sha256_update(&s, in->audio_hash, 32);
    add_str(&s, in->id);
    add_str(&s, in->speaker);
    add_str(&s, in->lang);
    uint8_t split = (uint8_t)(in->split < 0 ? 0xff : in->split);
    xtts_sha256_update(&s, &split, 1);
    xtts_put_le32(n, in->n_tokens);
    xtts_sha256_update(&s, n, 4);
    for (uint32_t t = 0; t < in->n_tokens; t++) {
        xtts_put_le32(n, (uint32_t)in->tokens[t]);
        xtts_sha256_update(&s, n, 4);
    }
    add_str(&s, in->text);
    add_str(&s, in->orig_text);
    uint8_t rej = in->reject != NULL;
    xtts_sha256_update(&s, &rej, 1);
    if (rej) add_str(&s, in->reject);
    xtts_sha256_final(&s, out);
}
