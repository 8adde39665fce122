/* zip_read.c — the central directory of a zip archive in memory, checked entry by entry
 * (zip_read.h). APPNOTE.TXT 6.3 is the reference for every offset used here. */
#include "formats/model/zip_read.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_EOCD64_LOC 0x07064b50u
#define EOCD_BYTES 22u
#define EOCD64_LOC_BYTES 20u
#define EOCD64_BYTES 56u
#define CENTRAL_BYTES 46u
#define LOCAL_BYTES 30u

#define TRY(expr)                              \
    do {                                       \
        xtts_status try_st_ = (expr);          \
        if (try_st_ != XTTS_OK) return try_st_; \
    } while (0)

struct xtts_zip {
    const uint8_t *data;
    size_t size;
    const char *label;
    xtts_zip_entry *entries; /* central-directory order */
    size_t n;
    const xtts_zip_entry **by_name; /* sorted by name, for xtts_zip_find */
    char *names;             /* every name, NUL-terminated, back to back */
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* True when [off, off + len) lies inside [0, size). */
static int in_bounds(uint64_t off, uint64_t len, size_t size) {
    return off <= size && len <= size - off;
}

/* Where the central directory is and how many entries it has, from the end records. */
typedef struct {
    uint64_t cd_offset, cd_size, n_entries;
} cd_location;

/* The zip64 end record named by the locator just before the end record at eocd. */
static xtts_status find_eocd64(const xtts_zip *z, size_t eocd, cd_location *loc, xtts_error *err) {
    if (eocd < EOCD64_LOC_BYTES || rd32(z->data + eocd - EOCD64_LOC_BYTES) != SIG_EOCD64_LOC)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: end record at offset %zu needs a zip64 locator, none found",
                              z->label, eocd);
    const uint8_t *l = z->data + eocd - EOCD64_LOC_BYTES;
    uint64_t off = rd64(l + 8);
    if (rd32(l + 4) != 0 || rd32(l + 16) > 1)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: multi-disk archives are not supported", z->label);
    if (!in_bounds(off, EOCD64_BYTES, eocd - EOCD64_LOC_BYTES) || rd32(z->data + off) != SIG_EOCD64)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: zip64 end record at offset %llu is missing or outside the file",
                              z->label, (unsigned long long)off);
    const uint8_t *r = z->data + off;
    if (rd32(r + 16) != 0 || rd32(r + 20) != 0 || rd64(r + 24) != rd64(r + 32))
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: multi-disk archives are not supported", z->label);
    loc->n_entries = rd64(r + 32);
    loc->cd_size = rd64(r + 40);
    loc->cd_offset = rd64(r + 48);
    return XTTS_OK;
}

/* Find the end of central directory record: the last signature whose comment ends the file. */
static xtts_status find_cd(const xtts_zip *z, cd_location *loc, xtts_error *err) {
    if (z->size < EOCD_BYTES)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: %zu bytes, too short for a zip archive (truncated?)",
                              z->label, z->size);
    size_t lowest = z->size - EOCD_BYTES > 65535 ? z->size - EOCD_BYTES - 65535 : 0;
    for (size_t at = z->size - EOCD_BYTES + 1; at-- > lowest;) {
        const uint8_t *e = z->data + at;
        if (rd32(e) != SIG_EOCD || at + EOCD_BYTES + rd16(e + 20) != z->size) continue;
        if (rd16(e + 4) != 0 || rd16(e + 6) != 0 || rd16(e + 8) != rd16(e + 10))
            return xtts_error_set(err, XTTS_EINPUT, "%s: zip: multi-disk archives are not supported", z->label);
        loc->n_entries = rd16(e + 10);
        loc->cd_size = rd32(e + 12);
        loc->cd_offset = rd32(e + 16);
        if (loc->n_entries == 0xFFFF || loc->cd_size == 0xFFFFFFFFu || loc->cd_offset == 0xFFFFFFFFu)
            TRY(find_eocd64(z, at, loc, err));
        if (!in_bounds(loc->cd_offset, loc->cd_size, at))
            return xtts_error_set(err, XTTS_EINPUT,
                                  "%s: zip: central directory (offset %llu, %llu bytes) lies outside the file",
                                  z->label, (unsigned long long)loc->cd_offset, (unsigned long long)loc->cd_size);
        if (loc->n_entries > XTTS_ZIP_MAX_ENTRIES || loc->n_entries > loc->cd_size / CENTRAL_BYTES)
            return xtts_error_set(err, XTTS_EINPUT, "%s: zip: central directory claims %llu entries in %llu bytes",
                                  z->label, (unsigned long long)loc->n_entries, (unsigned long long)loc->cd_size);
        return XTTS_OK;
    }
    return xtts_error_set(err, XTTS_EINPUT, "%s: not a zip archive (no end of central directory record; truncated?)",
                          z->label);
}

/* Apply a zip64 extended-information extra field to the entry's 32-bit fields that are
 * saturated (in the order APPNOTE 4.5.3 gives). */
static xtts_status apply_zip64(const xtts_zip *z, const uint8_t *extra, size_t n_extra, xtts_zip_entry *e,
                               uint64_t *local, size_t cd_at, xtts_error *err) {
    for (size_t p = 0; p + 4 <= n_extra;) {
        uint16_t id = rd16(extra + p), len = rd16(extra + p + 2);
        if (p + 4 + len > n_extra) break;
        if (id == 0x0001) {
            const uint8_t *f = extra + p + 4;
            size_t left = len;
            uint64_t *want[3] = {e->size == 0xFFFFFFFFu ? &e->size : NULL,
                                 e->compressed_size == 0xFFFFFFFFu ? &e->compressed_size : NULL,
                                 *local == 0xFFFFFFFFu ? local : NULL};
            for (int k = 0; k < 3; k++) {
                if (!want[k]) continue;
                if (left < 8)
                    return xtts_error_set(err, XTTS_EINPUT, "%s: zip: directory entry at offset %zu: short zip64 field",
                                          z->label, cd_at);
                *want[k] = rd64(f);
                f += 8;
                left -= 8;
            }
            return XTTS_OK;
        }
        p += 4 + (size_t)len;
    }
    if (e->size == 0xFFFFFFFFu || e->compressed_size == 0xFFFFFFFFu || *local == 0xFFFFFFFFu)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: directory entry at offset %zu: sizes need a zip64 field, none found",
                              z->label, cd_at);
    return XTTS_OK;
}

/* Check the local header of entry e at offset local and place e->data_offset after it. */
static xtts_status check_local(const xtts_zip *z, xtts_zip_entry *e, uint64_t local, xtts_error *err) {
    if (!in_bounds(local, LOCAL_BYTES, z->size) || rd32(z->data + local) != SIG_LOCAL)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': local header at offset %llu is missing or outside the file",
                              z->label, e->name, (unsigned long long)local);
    const uint8_t *h = z->data + local;
    size_t name_len = rd16(h + 26), extra_len = rd16(h + 28);
    if (name_len != strlen(e->name) || !in_bounds(local + LOCAL_BYTES, name_len, z->size) ||
        memcmp(h + LOCAL_BYTES, e->name, name_len) != 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': local header at offset %llu names another entry",
                              z->label, e->name, (unsigned long long)local);
    e->data_offset = local + LOCAL_BYTES + name_len + extra_len;
    if (!in_bounds(e->data_offset, e->compressed_size, z->size))
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: zip: entry '%s': %llu bytes at offset %llu run past the end of the file (%zu bytes; truncated?)",
                              z->label, e->name, (unsigned long long)e->compressed_size,
                              (unsigned long long)e->data_offset, z->size);
    if (e->method == 0 && e->compressed_size != e->size)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: stored entry '%s': sizes %llu and %llu differ",
                              z->label, e->name, (unsigned long long)e->compressed_size, (unsigned long long)e->size);
    return XTTS_OK;
}

/* Parse the directory entry at *at into e (its name copied to *names), advancing both. */
static xtts_status parse_entry(const xtts_zip *z, size_t *at, size_t cd_end, char **names, xtts_zip_entry *e,
                               xtts_error *err) {
    size_t p = *at;
    if (p + CENTRAL_BYTES > cd_end || rd32(z->data + p) != SIG_CENTRAL)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: corrupt central directory at offset %zu", z->label, p);
    const uint8_t *c = z->data + p;
    size_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
    if (p + CENTRAL_BYTES + name_len + extra_len + comment_len > cd_end)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: directory entry at offset %zu runs past the directory", z->label, p);
    const char *name = (const char *)c + CENTRAL_BYTES;
    if (name_len == 0 || memchr(name, '\0', name_len))
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: directory entry at offset %zu has an empty name or a NUL in it",
                              z->label, p);
    memcpy(*names, name, name_len);
    (*names)[name_len] = '\0';
    e->name = *names;
    *names += name_len + 1;
    if (rd16(c + 8) & 0x0041)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s' is encrypted", z->label, e->name);
    e->method = rd16(c + 10);
    e->crc32 = rd32(c + 16);
    e->compressed_size = rd32(c + 20);
    e->size = rd32(c + 24);
    uint64_t local = rd32(c + 42);
    TRY(apply_zip64(z, c + CENTRAL_BYTES + name_len, extra_len, e, &local, p, err));
    TRY(check_local(z, e, local, err));
    *at = p + CENTRAL_BYTES + name_len + extra_len + comment_len;
    return XTTS_OK;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp((*(const xtts_zip_entry *const *)a)->name, (*(const xtts_zip_entry *const *)b)->name);
}
static int cmp_offset(const void *a, const void *b) {
    uint64_t x = (*(const xtts_zip_entry *const *)a)->data_offset, y = (*(const xtts_zip_entry *const *)b)->data_offset;
    return x < y ? -1 : x > y;
}

/* Refuse duplicate names and entries whose data overlap; leave z->by_name sorted by name. */
static xtts_status check_unique(xtts_zip *z, xtts_error *err) {
    for (size_t i = 0; i < z->n; i++) z->by_name[i] = &z->entries[i];
    qsort(z->by_name, z->n, sizeof *z->by_name, cmp_offset);
    for (size_t i = 1; i < z->n; i++) {
        const xtts_zip_entry *a = z->by_name[i - 1], *b = z->by_name[i];
        if (a->data_offset + a->compressed_size > b->data_offset && b->compressed_size > 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entries '%s' and '%s' overlap", z->label, a->name, b->name);
    }
    qsort(z->by_name, z->n, sizeof *z->by_name, cmp_name);
    for (size_t i = 1; i < z->n; i++)
        if (strcmp(z->by_name[i - 1]->name, z->by_name[i]->name) == 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s: zip: duplicate entry name '%s'", z->label, z->by_name[i]->name);
    return XTTS_OK;
}

static xtts_status parse_directory(xtts_zip *z, xtts_error *err) {
    cd_location loc = {0};
    TRY(find_cd(z, &loc, err));
    z->n = (size_t)loc.n_entries;
    z->entries = calloc(z->n ? z->n : 1, sizeof *z->entries);
    z->by_name = calloc(z->n ? z->n : 1, sizeof *z->by_name);
    z->names = malloc((size_t)loc.cd_size + 1);
    if (!z->entries || !z->by_name || !z->names)
        return xtts_error_set(err, XTTS_ENOMEM, "%s: zip: out of memory for %zu entries", z->label, z->n);
    size_t at = (size_t)loc.cd_offset, end = (size_t)(loc.cd_offset + loc.cd_size);
    char *names = z->names;
    for (size_t i = 0; i < z->n; i++) TRY(parse_entry(z, &at, end, &names, &z->entries[i], err));
    return check_unique(z, err);
}

xtts_status xtts_zip_open_mem(const uint8_t *data, size_t size, const char *label, xtts_zip **out, xtts_error *err) {
    *out = NULL;
    xtts_zip *z = calloc(1, sizeof *z);
    if (!z) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
    z->data = data;
    z->size = size;
    z->label = label;
    xtts_status st = parse_directory(z, err);
    if (st != XTTS_OK) {
        xtts_zip_close(z);
        return st;
    }
    *out = z;
    return XTTS_OK;
}

size_t xtts_zip_count(const xtts_zip *zip) { return zip->n; }

const xtts_zip_entry *xtts_zip_entry_at(const xtts_zip *zip, size_t i) { return i < zip->n ? &zip->entries[i] : NULL; }

const xtts_zip_entry *xtts_zip_find(const xtts_zip *zip, const char *name) {
    size_t lo = 0, hi = zip->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(zip->by_name[mid]->name, name);
        if (c == 0) return zip->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* Inflate e's raw deflate data into exactly e->size bytes at dst: no more, no less. */
static xtts_status inflate_entry(const xtts_zip *zip, const xtts_zip_entry *e, uint8_t *dst, xtts_error *err) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
        return xtts_error_set(err, XTTS_ENOMEM, "%s: zip: entry '%s': cannot start inflate", zip->label, e->name);
    const uint8_t *in = zip->data + e->data_offset;
    uint64_t in_left = e->compressed_size, out_left = e->size;
    int rc = Z_OK;
    s.next_out = dst;
    while (rc == Z_OK) {
        if (s.avail_in == 0 && in_left > 0) {
            s.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            s.next_in = (Bytef *)(uintptr_t)in;
            in += s.avail_in;
            in_left -= s.avail_in;
        }
        if (s.avail_out == 0) {
            s.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
            out_left -= s.avail_out;
        }
        uInt before_in = s.avail_in, before_out = s.avail_out;
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR || (rc == Z_OK && s.avail_in == before_in && s.avail_out == before_out)) break;
    }
    uint64_t produced = s.total_out;
    inflateEnd(&s);
    if (rc != Z_STREAM_END)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': %s", zip->label, e->name,
                              rc == Z_DATA_ERROR ? "corrupt deflate data"
                              : produced >= e->size ? "inflates past its declared size"
                                                    : "deflate data end early (truncated?)");
    if (produced != e->size)
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': inflates to %llu bytes, the directory says %llu",
                              zip->label, e->name, (unsigned long long)produced, (unsigned long long)e->size);
    return XTTS_OK;
}

xtts_status xtts_zip_read(const xtts_zip *zip, const xtts_zip_entry *e, uint64_t max_bytes, const uint8_t **bytes,
                          uint8_t **owned, size_t *len, xtts_error *err) {
    *bytes = NULL;
    *owned = NULL;
    *len = 0;
    if (e->size > max_bytes || e->size > SIZE_MAX - 1)
        return xtts_error_set(err, XTTS_ERANGE, "%s: zip: entry '%s' claims %llu bytes, over the limit of %llu",
                              zip->label, e->name, (unsigned long long)e->size, (unsigned long long)max_bytes);
    const uint8_t *data;
    if (e->method == 0) {
        data = zip->data + e->data_offset;
    } else if (e->method == 8) {
        if (e->size > XTTS_ZIP_MAX_INFLATE)
            return xtts_error_set(err, XTTS_ERANGE, "%s: zip: deflated entry '%s' claims %llu bytes, over the limit of %llu",
                                  zip->label, e->name, (unsigned long long)e->size, (unsigned long long)XTTS_ZIP_MAX_INFLATE);
        uint8_t *buf = malloc((size_t)e->size + 1);
        if (!buf)
            return xtts_error_set(err, XTTS_ENOMEM, "%s: zip: entry '%s': out of memory for %llu bytes", zip->label,
                                  e->name, (unsigned long long)e->size);
        xtts_status st = inflate_entry(zip, e, buf, err);
        if (st != XTTS_OK) {
            free(buf);
            return st;
        }
        data = *owned = buf;
    } else {
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': compression method %u not supported (stored or deflate only)",
                              zip->label, e->name, e->method);
    }
    if (xtts_crc32(0, data, (size_t)e->size) != e->crc32) {
        free(*owned);
        *owned = NULL;
        return xtts_error_set(err, XTTS_EINPUT, "%s: zip: entry '%s': CRC-32 mismatch (corrupt file)", zip->label, e->name);
    }
    *bytes = data;
    *len = (size_t)e->size;
    return XTTS_OK;
}

void xtts_zip_close(xtts_zip *zip) {
    if (!zip) return;
    free(zip->entries);
    free(zip->by_name);
    free(zip->names);
    free(zip);
}
