/* torch_pth.c — the model-file reader (torch_pth.h): the file mapped, its kind told by
 * content, a torch.save zip's data.pkl interpreted by the restricted unpickler
 * (torch_pickle.c), each tensor checked against its storage entry and converted to float32. */
#include "formats/model/torch_pth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/model/torch_pth_internal.h"
#include "formats/model/zip_read.h"

#define TRY(expr)                               \
    do {                                        \
        xtts_status try_st_ = (expr);           \
        if (try_st_ != XTTS_OK) return try_st_; \
    } while (0)

static int cmp_tensor_name(const void *a, const void *b) {
    return strcmp((*(const xtts_pth_tensor *const *)a)->name, (*(const xtts_pth_tensor *const *)b)->name);
}

/* Sort the name index and refuse a name given twice. */
static xtts_status index_names(xtts_pth *f, const char *label, xtts_error *err) {
    f->by_name = malloc((f->n ? f->n : 1) * sizeof *f->by_name);
    if (!f->by_name) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
    for (size_t k = 0; k < f->n; k++) f->by_name[k] = &f->t[k];
    qsort(f->by_name, f->n, sizeof *f->by_name, cmp_tensor_name);
    for (size_t k = 1; k < f->n; k++)
        if (strcmp(f->by_name[k - 1]->name, f->by_name[k]->name) == 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s' is given twice", label, f->by_name[k]->name);
    return XTTS_OK;
}

/* ---- torch.save zip ------------------------------------------------------------------------ */

/* A storage entry, read once however many tensors use it. */
typedef struct {
    const char *key;
    const uint8_t *bytes;
    uint8_t *owned;
    size_t len;
    int read;
} storage_slot;

static int cmp_slot(const void *a, const void *b) {
    return strcmp(((const storage_slot *)a)->key, ((const storage_slot *)b)->key);
}

/* Find ARCHIVE/data.pkl (ARCHIVE: one top-level folder) and check ARCHIVE/byteorder. */
static xtts_status find_pickle(const xtts_zip *z, const char *label, const xtts_zip_entry **pkl, size_t *prefix_len,
                               xtts_error *err) {
    *pkl = NULL;
    for (size_t k = 0; k < xtts_zip_count(z); k++) {
        const xtts_zip_entry *e = xtts_zip_entry_at(z, k);
        const char *slash = strchr(e->name, '/');
        if (!slash || strcmp(slash, "/data.pkl") != 0) continue;
        if (*pkl)
            return xtts_error_set(err, XTTS_EINPUT, "%s: zip holds two pickles, '%s' and '%s'", label, (*pkl)->name, e->name);
        *pkl = e;
        *prefix_len = (size_t)(slash - e->name);
    }
    if (!*pkl)
        return xtts_error_set(err, XTTS_EINPUT, "%s: a zip without ARCHIVE/data.pkl: not a torch.save checkpoint", label);
    char name[600];
    snprintf(name, sizeof name, "%.*s/byteorder", (int)*prefix_len, (*pkl)->name);
    const xtts_zip_entry *bo = xtts_zip_find(z, name);
    if (bo) {
        const uint8_t *b;
        uint8_t *owned;
        size_t n;
        TRY(xtts_zip_read(z, bo, 16, &b, &owned, &n, err));
        int little = n == 6 && memcmp(b, "little", 6) == 0;
        free(owned);
        if (!little) return xtts_error_set(err, XTTS_EINPUT, "%s: '%s' is not \"little\": big-endian checkpoints are not read", label, name);
    }
    return XTTS_OK;
}

/* Check ref against its storage's entry (read into slot on first use) and add it to f. */
static xtts_status add_ref(xtts_pth *f, const xtts_zip *z, const char *prefix, size_t prefix_len, storage_slot *slot,
                           const xtts_pth_ref *r, const char *label, xtts_error *err) {
    size_t es = xtts_pth_dtype_size(r->dtype);
    if (!slot->read) {
        char name[600];
        snprintf(name, sizeof name, "%.*s/data/%s", (int)prefix_len, prefix, r->storage_key);
        const xtts_zip_entry *e = xtts_zip_find(z, name);
        if (!e)
            return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': its storage entry '%s' is missing", label, r->name, name);
        TRY(xtts_zip_read(z, e, XTTS_PTH_MAX_ENTRY, &slot->bytes, &slot->owned, &slot->len, err));
        slot->read = 1;
    }
    uint64_t need;
    if (__builtin_mul_overflow(r->storage_numel, (uint64_t)es, &need) || need != slot->len)
        return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': storage '%s' declares %llu %s values, its entry holds %zu bytes",
                              label, r->name, r->storage_key, (unsigned long long)r->storage_numel,
                              xtts_pth_dtype_name(r->dtype), slot->len);
    if (r->offset > r->storage_numel || r->numel > r->storage_numel - r->offset)
        return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': %llu values from offset %llu run past storage '%s' (%llu values)",
                              label, r->name, (unsigned long long)r->numel, (unsigned long long)r->offset, r->storage_key,
                              (unsigned long long)r->storage_numel);
    return xtts_pth_add_tensor(f, r->name, r->dtype, r->ndim, r->shape, r->numel, slot->bytes + r->offset * es, label, err);
}

static xtts_status add_refs(xtts_pth *f, const xtts_zip *z, const char *prefix, size_t prefix_len,
                            const xtts_pth_refs *refs, const char *label, xtts_error *err) {
    storage_slot *slots = calloc(refs->n ? refs->n : 1, sizeof *slots);
    if (!slots) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
    for (size_t k = 0; k < refs->n; k++) slots[k].key = refs->refs[k].storage_key;
    qsort(slots, refs->n, sizeof *slots, cmp_slot);
    size_t n_slots = 0;
    for (size_t k = 0; k < refs->n; k++)
        if (n_slots == 0 || strcmp(slots[n_slots - 1].key, slots[k].key) != 0) slots[n_slots++] = slots[k];
    xtts_status st = XTTS_OK;
    for (size_t k = 0; k < refs->n && st == XTTS_OK; k++) {
        storage_slot probe = {.key = refs->refs[k].storage_key};
        storage_slot *s = bsearch(&probe, slots, n_slots, sizeof *slots, cmp_slot);
        st = add_ref(f, z, prefix, prefix_len, s, &refs->refs[k], label, err);
    }
    for (size_t k = 0; k < n_slots; k++) free(slots[k].owned);
    free(slots);
    return st;
}

static xtts_status read_torch_zip(xtts_pth *f, const uint8_t *data, size_t size, const char *label, xtts_error *err) {
    xtts_zip *z = NULL;
    TRY(xtts_zip_open_mem(data, size, label, &z, err));
    const xtts_zip_entry *pe = NULL;
    size_t prefix_len = 0;
    const uint8_t *pkl = NULL;
    uint8_t *owned = NULL;
    size_t pkl_len = 0;
    xtts_pth_refs refs = {0};
    xtts_status st = find_pickle(z, label, &pe, &prefix_len, err);
    if (st == XTTS_OK) st = xtts_zip_read(z, pe, XTTS_PTH_MAX_PICKLE, &pkl, &owned, &pkl_len, err);
    if (st == XTTS_OK) st = xtts_pth_unpickle(pkl, pkl_len, label, &refs, err);
    if (st == XTTS_OK) st = add_refs(f, z, pe->name, prefix_len, &refs, label, err);
    xtts_pth_refs_free(&refs);
    free(owned);
    xtts_zip_close(z);
    return st;
}

/* ---- the file ---------------------------------------------------------------------------------- */

static xtts_status read_any(xtts_pth *f, const uint8_t *d, size_t size, const char *label, xtts_error *err) {
    if (size >= 4 && d[0] == 'P' && d[1] == 'K' && ((d[2] == 3 && d[3] == 4) || (d[2] == 5 && d[3] == 6)))
        return read_torch_zip(f, d, size, label, err);
    if (size >= 2 && d[0] == 0x80 && d[1] <= 5)
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: the legacy torch.save format (a bare pickle, PyTorch before 1.6) is not read: "
                              "save it again with PyTorch 1.6 or later, or as .safetensors",
                              label);
    if (size >= 10 && d[8] == '{') return xtts_pth_read_safetensors(f, d, size, label, err);
    if (size == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: empty file", label);
    return xtts_error_set(err, XTTS_EINPUT, "%s: neither a torch.save zip nor a safetensors file", label);
}

xtts_status xtts_pth_open_mem(const void *data, size_t size, const char *label, xtts_pth **out, xtts_error *err) {
    *out = NULL;
    xtts_pth *f = calloc(1, sizeof *f);
    if (!f) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
    f->bytes_max = (uint64_t)size * 4 + (1u << 20);
    f->label = strdup(label);
    if (!f->label) {
        free(f);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
    }
    xtts_status st = read_any(f, data, size, label, err);
    if (st == XTTS_OK) st = index_names(f, label, err);
    if (st != XTTS_OK) {
        xtts_pth_close(f);
        return st;
    }
    *out = f;
    return XTTS_OK;
}

xtts_status xtts_pth_open(const char *path, xtts_pth **out, xtts_error *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return xtts_error_set(err, errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return xtts_error_set(err, XTTS_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return xtts_error_set(err, XTTS_EINPUT, "%s: not a regular file", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return xtts_error_set(err, XTTS_EINPUT, "%s: empty file", path);
    }
    void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED) return xtts_error_set(err, XTTS_EIO, "%s: cannot map: %s", path, strerror(e));
    xtts_status st = xtts_pth_open_mem(map, (size_t)sb.st_size, path, out, err);
    munmap(map, (size_t)sb.st_size);
    return st;
}

const xtts_pth_tensor *xtts_pth_find(const xtts_pth *f, const char *name) {
    if (!name) name = "";
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->by_name[mid]->name, name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

size_t xtts_pth_count(const xtts_pth *f) { return f->n; }

const char *xtts_pth_label(const xtts_pth *f) { return f->label; }

const xtts_pth_tensor *xtts_pth_tensor_at(const xtts_pth *f, size_t i) { return i < f->n ? &f->t[i] : NULL; }

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < ndim && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (k < cap) snprintf(buf + k, cap - k, ndim == 1 ? ",)" : ")");
}

xtts_status xtts_pth_expect(const xtts_pth *f, const char *name, int ndim, const int64_t *shape,
                            const xtts_pth_tensor **out, xtts_error *err) {
    *out = xtts_pth_find(f, name);
    if (!*out) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: key '%s' missing", f->label, name);
    int same = (*out)->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = (*out)->shape[d] == shape[d];
    if (!same) {
        char want[160], have[160];
        format_shape(want, sizeof want, ndim, shape);
        format_shape(have, sizeof have, (*out)->ndim, (*out)->shape);
        *out = NULL;
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: key '%s' has shape %s, %s expected", f->label, name, have, want);
    }
    return XTTS_OK;
}

void xtts_pth_close(xtts_pth *f) {
    if (!f) return;
    for (size_t k = 0; k < f->n; k++) {
        free((char *)f->t[k].name);
        free((float *)f->t[k].data);
    }
    free(f->t);
    free(f->by_name);
    free(f->label);
    free(f);
}
