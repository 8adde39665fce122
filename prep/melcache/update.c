/* update.c — content keys of token-stream records (update.h). */
#include "prep/melcache/update.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A stat record: a file's identity and stat, and the content hash of its bytes. */
typedef struct {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    uint64_t xxh, count;  /* XXH64 of the bytes read, and how many */
    uint8_t state;        /* 0 an empty slot; LOADED from a saved blob, not confirmed yet; SEEN this run */
    uint8_t racy;         /* SEEN: its times were too close to its read to be trusted later */
} stat_rec;

enum { LOADED = 1, SEEN = 2 };
#define RACY_NS 1000000000LL       /* a stat record younger than this at its read is not saved */
#define STAT_MAGIC "XAST"           /* a saved blob: "XAST", u32 LE version, u64 LE count, records */
#define STAT_VERSION 1
#define STAT_HEAD 16
#define STAT_REC_BYTES 56           /* dev, ino, size, mtime_ns, ctime_ns, xxh, count: u64 LE each */

struct xtts_audio_hasher {
    pthread_mutex_t mu;
    stat_rec *tab;        /* [cap], open addressing on (dev, ino), cap a power of two */
    size_t cap, n;
    uint64_t n_read, n_known;
};

xtts_status xtts_audio_hasher_new(xtts_audio_hasher **out, xtts_error *err) {
    xtts_audio_hasher *h = calloc(1, sizeof *h);
    if (h) {
        h->cap = 4096;
        h->tab = calloc(h->cap, sizeof *h->tab);
    }
    if (!h || !h->tab) {
        if (h) free(h->tab);
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
    free(h->tab);
    free(h);
}

static void put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int64_t ts_ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

static size_t slot_of(uint64_t dev, uint64_t ino, size_t cap) {
    uint64_t k = xtts_fnv1a64(XTTS_FNV64_INIT, &ino, sizeof ino);
    k = xtts_fnv1a64(k, &dev, sizeof dev);
    return (size_t)(k & (cap - 1));
}

/* The slot of (dev, ino): its record, or the empty slot where it would go. Under h->mu. */
static stat_rec *find_slot(xtts_audio_hasher *h, uint64_t dev, uint64_t ino) {
    size_t j = slot_of(dev, ino, h->cap);
    while (h->tab[j].state && !(h->tab[j].dev == dev && h->tab[j].ino == ino)) j = (j + 1) & (h->cap - 1);
    return &h->tab[j];
}

/* Room for one more record (the table kept at most half full). Under h->mu; -1: no memory. */
static int reserve(xtts_audio_hasher *h) {
    if ((h->n + 1) * 2 <= h->cap) return 0;
    size_t ncap = h->cap * 2;
    stat_rec *nt = calloc(ncap, sizeof *nt), *old = h->tab;
    if (!nt) return -1;
    size_t ocap = h->cap;
    h->tab = nt;
    h->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].state) *find_slot(h, old[i].dev, old[i].ino) = old[i];
    free(old);
    return 0;
}

static int same_stat(const stat_rec *m, const struct stat *sb) {
    return m->size == (uint64_t)sb->st_size && m->mtime_ns == ts_ns(sb->st_mtim) && m->ctime_ns == ts_ns(sb->st_ctim);
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

/* The file's XXH64 (seed 0) and the count of its bytes. */
static int hash_fd(int fd, uint64_t *xxh, uint64_t *count) {
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
    *xxh = xxh64_final(&a);
    *count = a.total;
    return 0;
}

/* The content hash's 32 bytes: the XXH64 and the count, each as 8 bytes LE, then 16 zero bytes. */
static void hash_out(uint64_t xxh, uint64_t count, uint8_t out[32]) {
    memset(out, 0, 32);
    uint64_t v[2] = {xxh, count};
    for (int i = 0; i < 16; i++) out[i] = (uint8_t)(v[i / 8] >> (8 * (i % 8)));
}

/* The hash of the open file from the record the hasher holds for it, when its stat matches
 * (the record is then this run's); 1 when found. */
static int known_hash(xtts_audio_hasher *h, const struct stat *sb, uint8_t out[32]) {
    pthread_mutex_lock(&h->mu);
    stat_rec *m = find_slot(h, (uint64_t)sb->st_dev, (uint64_t)sb->st_ino);
    int hit = m->state && same_stat(m, sb);
    if (hit) {
        hash_out(m->xxh, m->count, out);
        if (m->state == LOADED) h->n_known++;
        m->state = SEEN;
    }
    pthread_mutex_unlock(&h->mu);
    return hit;
}

/* Remember what was read: a record of this run, racy when the file's times were within
 * RACY_NS of the read. */
static void remember(xtts_audio_hasher *h, const struct stat *sb, int64_t read_ns, uint64_t xxh, uint64_t count) {
    int64_t newest = ts_ns(sb->st_mtim) > ts_ns(sb->st_ctim) ? ts_ns(sb->st_mtim) : ts_ns(sb->st_ctim);
    stat_rec r = {.dev = (uint64_t)sb->st_dev, .ino = (uint64_t)sb->st_ino, .size = (uint64_t)sb->st_size,
                  .mtime_ns = ts_ns(sb->st_mtim), .ctime_ns = ts_ns(sb->st_ctim), .xxh = xxh, .count = count,
                  .state = SEEN, .racy = newest >= read_ns - RACY_NS};
    pthread_mutex_lock(&h->mu);
    h->n_read++;
    stat_rec *m = find_slot(h, r.dev, r.ino);
    if (m->state) *m = r;
    else if (reserve(h) == 0) {
        *find_slot(h, r.dev, r.ino) = r;
        h->n++;
    }
    pthread_mutex_unlock(&h->mu);
}

int xtts_audio_hasher_hash(xtts_audio_hasher *h, const char *path, uint8_t out[32]) {
    memset(out, 0, 32);
    struct stat sb;
    /* a file whose stat record matches is not opened: a change of its mode (chmod) or of its
     * bytes moves its change time, so the record no longer matches */
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && known_hash(h, &sb, out)) return 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* O_NONBLOCK: a fifo given as an audio path must not block the open (it is refused
     * below as not a regular file, as the decoder refuses it) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -1;
    }
    if (known_hash(h, &sb, out)) {
        close(fd);
        return 0;
    }
    uint64_t xxh, count;
    int rc = hash_fd(fd, &xxh, &count);
    close(fd);
    if (rc) return -1;
    hash_out(xxh, count, out);
    remember(h, &sb, ts_ns(now), xxh, count);
    return 0;
}

int xtts_audio_hasher_known(xtts_audio_hasher *h, const char *path, uint8_t out[32]) {
    memset(out, 0, 32);
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && known_hash(h, &sb, out);
}

int xtts_audio_hasher_empty(const xtts_audio_hasher *h) { return h->n == 0; }

xtts_status xtts_audio_hasher_load(xtts_audio_hasher *h, const void *blob, size_t len, xtts_error *err) {
    const uint8_t *p = blob;
    if (len < STAT_HEAD || memcmp(p, STAT_MAGIC, 4) || xtts_get_le32(p + 4) != STAT_VERSION) return XTTS_OK;
    uint64_t n = get_le64(p + 8);
    if (n > (len - STAT_HEAD) / STAT_REC_BYTES) return XTTS_OK;
    xtts_status st = XTTS_OK;
    pthread_mutex_lock(&h->mu);
    for (uint64_t i = 0; i < n && !st; i++) {
        const uint8_t *q = p + STAT_HEAD + i * STAT_REC_BYTES;
        stat_rec r = {.dev = get_le64(q), .ino = get_le64(q + 8), .size = get_le64(q + 16),
                      .mtime_ns = (int64_t)get_le64(q + 24), .ctime_ns = (int64_t)get_le64(q + 32),
                      .xxh = get_le64(q + 40), .count = get_le64(q + 48), .state = LOADED};
        stat_rec *m = find_slot(h, r.dev, r.ino);
        if (m->state == LOADED && r.ctime_ns > m->ctime_ns) *m = r; /* a later stat of the file: newer */
        if (m->state) continue;
        if (reserve(h)) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        else { *find_slot(h, r.dev, r.ino) = r; h->n++; }
    }
    pthread_mutex_unlock(&h->mu);
    return st;
}

static int cmp_rec(const void *a, const void *b) {
    const stat_rec *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

xtts_status xtts_audio_hasher_save(xtts_audio_hasher *h, void **blob, size_t *len, xtts_error *err) {
    pthread_mutex_lock(&h->mu);
    stat_rec *keep = malloc((h->n ? h->n : 1) * sizeof *keep);
    size_t n = 0;
    for (size_t i = 0; keep && i < h->cap; i++)
        if (h->tab[i].state == SEEN && !h->tab[i].racy) keep[n++] = h->tab[i];
    pthread_mutex_unlock(&h->mu);
    uint8_t *out = keep ? malloc(STAT_HEAD + n * STAT_REC_BYTES) : NULL;
    if (!out) {
        free(keep);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    qsort(keep, n, sizeof *keep, cmp_rec); /* the same blob for the same files */
    memcpy(out, STAT_MAGIC, 4);
    xtts_put_le32(out + 4, STAT_VERSION);
    put_le64(out + 8, n);
    for (size_t i = 0; i < n; i++) {
        uint8_t *q = out + STAT_HEAD + i * STAT_REC_BYTES;
        uint64_t v[7] = {keep[i].dev, keep[i].ino, keep[i].size, (uint64_t)keep[i].mtime_ns, (uint64_t)keep[i].ctime_ns,
                         keep[i].xxh, keep[i].count};
        for (int f = 0; f < 7; f++) put_le64(q + 8 * f, v[f]);
    }
    free(keep);
    *blob = out;
    *len = STAT_HEAD + n * STAT_REC_BYTES;
    return XTTS_OK;
}

void xtts_audio_hasher_counts(const xtts_audio_hasher *h, uint64_t *read, uint64_t *known) {
    *read = h->n_read;
    *known = h->n_known;
}

static void add_str(xtts_sha256 *s, const char *v) {
    const char *x = v ? v : "";
    xtts_sha256_update(s, x, strlen(x) + 1);
}

void xtts_content_key(const xtts_content_key_input *in, uint8_t out[32]) {
    static const char tag[] = "xtts-content-key 1";
    /* the tag and the configuration hash, the same for every record of a run: hashed once a thread */
    static _Thread_local struct { char cfg[72]; xtts_sha256 s; int ready; } head;
    if (!head.ready || strcmp(head.cfg, in->config_hash)) {
        xtts_sha256_init(&head.s);
        xtts_sha256_update(&head.s, tag, sizeof tag);
        add_str(&head.s, in->config_hash);
        snprintf(head.cfg, sizeof head.cfg, "%s", in->config_hash);
        head.ready = strlen(in->config_hash) < sizeof head.cfg;
    }
    xtts_sha256 s = head.s;
    uint8_t n[4];
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
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    xtts_sha256_update(&s, in->tokens, 4 * (size_t)in->n_tokens); /* each id's 4 bytes little-endian, as stored */
#else
    for (uint32_t t = 0; t < in->n_tokens; t++) {
        xtts_put_le32(n, (uint32_t)in->tokens[t]);
        xtts_sha256_update(&s, n, 4);
    }
#endif
    add_str(&s, in->text);
    add_str(&s, in->orig_text);
    uint8_t rej = in->reject != NULL;
    xtts_sha256_update(&s, &rej, 1);
    if (rej) add_str(&s, in->reject);
    xtts_sha256_final(&s, out);
}
