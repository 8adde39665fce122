/* test_torch_pth.c — the model-file reader (formats/model/torch_pth.h) on torch.save zips and
 * .safetensors files built here byte by byte (pickles in the opcodes torch emits, zips
 * with stored and deflated entries), on hostile variants of them (globals outside the
 * allowlist, calls of arbitrary callables, storages past their entries, sizes that
 * overflow, zip bombs, duplicate names, truncation, a corrupt directory, the legacy
 * format), and on the golden files real torch.save wrote (tests/golden/torch_pth/, made
 * by tests/golden/make_torch_pth_golden.py). Every refusal is one line naming the file
 * and the key or offset, and maps to exit code 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "formats/model/torch_pth.h"
#include "formats/model/zip_read.h"

/* ---- byte builders ------------------------------------------------------------------------ */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} buf;

static void put(buf *o, const void *p, size_t n) {
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2 + 64;
        o->b = realloc(o->b, o->cap);
        assert_non_null(o->b);
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void put8(buf *o, unsigned v) { uint8_t c = (uint8_t)v; put(o, &c, 1); }
static void put16(buf *o, unsigned v) { put8(o, v & 0xff); put8(o, v >> 8 & 0xff); }
static void put32(buf *o, uint32_t v) { put16(o, v & 0xffff); put16(o, v >> 16); }
static void put64(buf *o, uint64_t v) { put32(o, (uint32_t)v); put32(o, (uint32_t)(v >> 32)); }

/* pickle opcodes as torch emits them */
static void pk_str(buf *o, const char *s) { put8(o, 'X'); put32(o, (uint32_t)strlen(s)); put(o, s, strlen(s)); }
static void pk_int(buf *o, int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) { put8(o, 'J'); put32(o, (uint32_t)(int32_t)v); }
    else { put8(o, 0x8a); put8(o, 8); put64(o, (uint64_t)v); }
}
static void pk_global(buf *o, const char *module, const char *name) {
    put8(o, 'c');
    put(o, module, strlen(module)); put8(o, '\n');
    put(o, name, strlen(name)); put8(o, '\n');
}
static void pk_ordered_dict(buf *o) { pk_global(o, "collections", "OrderedDict"); put8(o, ')'); put8(o, 'R'); }

typedef struct {
    const char *storage_type; /* "FloatStorage", ... */
    const char *key;
    int64_t storage_numel, offset;
    int ndim;
    int64_t shape[4], stride[4];
} tensor_spec;

static void pk_tensor(buf *o, const tensor_spec *t) {
    pk_global(o, "torch._utils", "_rebuild_tensor_v2");
    put8(o, '(');
    put8(o, '(');
    pk_str(o, "storage");
    pk_global(o, "torch", t->storage_type);
    pk_str(o, t->key);
    pk_str(o, "cpu");
    pk_int(o, t->storage_numel);
    put8(o, 't');
    put8(o, 'Q');
    pk_int(o, t->offset);
    put8(o, '(');
    for (int d = 0; d < t->ndim; d++) pk_int(o, t->shape[d]);
    put8(o, 't');
    put8(o, '(');
    for (int d = 0; d < t->ndim; d++) pk_int(o, t->stride[d]);
    put8(o, 't');
    put8(o, 0x89);
    pk_ordered_dict(o);
    put8(o, 't');
    put8(o, 'R');
}

/* zip: entries stored or deflated, sizes as given unless claim_size is set */
typedef struct {
    const char *name;
    const void *data;
    size_t len;
    int deflate;
    uint64_t claim_size; /* 0: the true size */
} zent;

/* zip64: every central entry's sizes and offset in a zip64 extra field, and the directory
 * found through a zip64 end record and its locator, as writers do past 4 GiB. */
static void zip_make64(buf *o, const zent *e, int n, int zip64) {
    uint64_t offs[16], csz[16], usz[16];
    uint32_t crcs[16];
    buf comp[16];
    memset(comp, 0, sizeof comp);
    for (int i = 0; i < n; i++) {
        offs[i] = o->n;
        crcs[i] = (uint32_t)crc32(0, e[i].data, (uInt)e[i].len);
        if (e[i].deflate) {
            z_stream s = {0};
            assert_int_equal(deflateInit2(&s, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
            comp[i].cap = deflateBound(&s, e[i].len) + 16;
            comp[i].b = malloc(comp[i].cap);
            s.next_in = (Bytef *)e[i].data;
            s.avail_in = (uInt)e[i].len;
            s.next_out = comp[i].b;
            s.avail_out = (uInt)comp[i].cap;
            assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
            comp[i].n = s.total_out;
            deflateEnd(&s);
        } else {
            put(&comp[i], e[i].data, e[i].len);
        }
        csz[i] = comp[i].n;
        usz[i] = e[i].claim_size ? e[i].claim_size : e[i].len;
        put32(o, 0x04034b50); put16(o, 20); put16(o, 0); put16(o, e[i].deflate ? 8 : 0);
        put16(o, 0); put16(o, 0); put32(o, crcs[i]); put32(o, (uint32_t)csz[i]); put32(o, (uint32_t)usz[i]);
        put16(o, (unsigned)strlen(e[i].name)); put16(o, 0);
        put(o, e[i].name, strlen(e[i].name));
        put(o, comp[i].b, comp[i].n);
        free(comp[i].b);
    }
    uint64_t cd = o->n;
    uint32_t sat = 0xFFFFFFFFu;
    for (int i = 0; i < n; i++) {
        put32(o, 0x02014b50); put16(o, 45); put16(o, 45); put16(o, 0); put16(o, e[i].deflate ? 8 : 0);
        put16(o, 0); put16(o, 0); put32(o, crcs[i]);
        put32(o, zip64 ? sat : (uint32_t)csz[i]); put32(o, zip64 ? sat : (uint32_t)usz[i]);
        put16(o, (unsigned)strlen(e[i].name)); put16(o, zip64 ? 28 : 0); put16(o, 0); put16(o, 0); put16(o, 0); put32(o, 0);
        put32(o, zip64 ? sat : (uint32_t)offs[i]);
        put(o, e[i].name, strlen(e[i].name));
        if (zip64) { put16(o, 0x0001); put16(o, 24); put64(o, usz[i]); put64(o, csz[i]); put64(o, offs[i]); }
    }
    uint64_t cd_size = o->n - cd;
    if (zip64) {
        uint64_t rec = o->n;
        put32(o, 0x06064b50); put64(o, 44); put16(o, 45); put16(o, 45); put32(o, 0); put32(o, 0);
        put64(o, (uint64_t)n); put64(o, (uint64_t)n); put64(o, cd_size); put64(o, cd);
        put32(o, 0x07064b50); put32(o, 0); put64(o, rec); put32(o, 1);
    }
    put32(o, 0x06054b50); put16(o, 0); put16(o, 0); put16(o, zip64 ? 0xFFFF : (unsigned)n); put16(o, zip64 ? 0xFFFF : (unsigned)n);
    put32(o, zip64 ? sat : (uint32_t)cd_size); put32(o, zip64 ? sat : (uint32_t)cd); put16(o, 0);
}

static void zip_make(buf *o, const zent *e, int n) { zip_make64(o, e, n, 0); }

/* The reference state dict: OrderedDict with a float32 weight (2,3) = 0..5 in storage "0",
 * a float16 bias (2,) = {0.5, -2} in storage "1", a (2,) view of storage "0" from offset 4,
 * and the _metadata BUILD torch writes. */
static const float W[6] = {0, 1, 2, 3, 4, 5};
static const uint16_t B16[2] = {0x3800, 0xc000};

static void pickle_reference(buf *p) {
    put8(p, 0x80); put8(p, 2);
    pk_ordered_dict(p);
    put8(p, 'q'); put8(p, 0);
    put8(p, '(');
    tensor_spec w = {"FloatStorage", "0", 6, 0, 2, {2, 3}, {3, 1}};
    tensor_spec b = {"HalfStorage", "1", 2, 0, 1, {2}, {1}};
    tensor_spec v = {"FloatStorage", "0", 6, 4, 1, {2}, {1}};
    pk_str(p, "encoder.0.0.weight"); pk_tensor(p, &w);
    pk_str(p, "encoder.0.0.bias"); pk_tensor(p, &b);
    pk_str(p, "codebook.embed"); pk_tensor(p, &v);
    put8(p, 'u');
    put8(p, '}'); pk_str(p, "_metadata"); pk_ordered_dict(p); put8(p, 's'); /* state: {"_metadata": OrderedDict()} */
    put8(p, 'b');
    put8(p, '.');
}

/* A torch.save zip of pickle p with the reference storages. */
static void zip_with_pickle(buf *z, const buf *p) {
    zent e[] = {
        {"archive/data.pkl", p->b, p->n, 0, 0},
        {"archive/byteorder", "little", 6, 0, 0},
        {"archive/data/0", W, sizeof W, 0, 0},
        {"archive/data/1", B16, sizeof B16, 0, 0},
        {"archive/version", "3\n", 2, 0, 0},
    };
    zip_make(z, e, 5);
}

/* Open bytes; on failure check the one-line message contains want (and the label) and
 * that the status means exit code 2. */
static xtts_pth *open_bytes(const buf *b, const char *want) {
    xtts_pth *f = NULL;
    xtts_error err = {0};
    xtts_status st = xtts_pth_open_mem(b->b, b->n, "m.pth", &f, &err);
    if (!want) {
        if (st != XTTS_OK) fail_msg("unexpected refusal: %s", err.msg);
        assert_non_null(f);
        return f;
    }
    if (st == XTTS_OK) fail_msg("accepted, but '%s' was expected", want);
    assert_null(f);
    assert_int_equal(xtts_exit_code(st), 2);
    if (!strstr(err.msg, want)) fail_msg("message '%s' lacks '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, "m.pth"));
    assert_null(strchr(err.msg, '\n'));
    return NULL;
}

static void expect_refused_pickle(const buf *p, const char *want) {
    buf z = {0};
    zip_with_pickle(&z, p);
    open_bytes(&z, want);
    free(z.b);
}

/* ---- what torch writes is read ------------------------------------------------------------- */

static void test_state_dict_tensors_are_read_by_name_as_float32(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zip_with_pickle(&z, &p);
    xtts_pth *f = open_bytes(&z, NULL);
    assert_int_equal(xtts_pth_count(f), 3);
    assert_string_equal(xtts_pth_tensor_at(f, 0)->name, "encoder.0.0.weight");
    const xtts_pth_tensor *w = xtts_pth_find(f, "encoder.0.0.weight");
    assert_non_null(w);
    assert_int_equal(w->ndim, 2);
    assert_int_equal(w->shape[0], 2);
    assert_int_equal(w->shape[1], 3);
    assert_int_equal(w->numel, 6);
    for (int k = 0; k < 6; k++) assert_true(w->data[k] == (float)k);
    assert_string_equal(w->stored_dtype, "float32");
    const xtts_pth_tensor *b = xtts_pth_find(f, "encoder.0.0.bias");
    assert_string_equal(b->stored_dtype, "float16");
    assert_true(b->data[0] == 0.5f && b->data[1] == -2.0f);
    const xtts_pth_tensor *v = xtts_pth_find(f, "codebook.embed");
    assert_true(v->data[0] == 4.0f && v->data[1] == 5.0f);
    assert_null(xtts_pth_find(f, "encoder.0.0"));
    const xtts_pth_tensor *t;
    xtts_error err;
    int64_t good[2] = {2, 3}, bad[2] = {3, 2};
    assert_int_equal(xtts_pth_expect(f, "encoder.0.0.weight", 2, good, &t, &err), XTTS_OK);
    assert_int_equal(xtts_pth_expect(f, "encoder.0.0.weight", 2, bad, &t, &err), XTTS_EMISMATCH);
    assert_string_equal(err.msg, "m.pth: key 'encoder.0.0.weight' has shape (2, 3), (3, 2) expected");
    assert_int_equal(xtts_pth_expect(f, "encoder.1.0.weight", 2, good, &t, &err), XTTS_ENOTFOUND);
    assert_string_equal(err.msg, "m.pth: key 'encoder.1.0.weight' missing");
    xtts_pth_close(f);
    xtts_pth_close(NULL);
    free(p.b);
    free(z.b);
}

static void test_single_tensor_file_is_named_empty(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    put8(&p, 0x80); put8(&p, 2);
    tensor_spec w = {"FloatStorage", "0", 6, 0, 1, {6}, {1}};
    pk_tensor(&p, &w);
    put8(&p, '.');
    zip_with_pickle(&z, &p);
    xtts_pth *f = open_bytes(&z, NULL);
    assert_int_equal(xtts_pth_count(f), 1);
    const xtts_pth_tensor *t = xtts_pth_find(f, "");
    assert_non_null(t);
    assert_ptr_equal(t, xtts_pth_find(f, NULL));
    assert_true(t->data[5] == 5.0f);
    xtts_pth_close(f);
    free(p.b);
    free(z.b);
}

static void test_nested_dicts_join_keys_and_other_values_are_dropped(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    put8(&p, 0x80); put8(&p, 2);
    put8(&p, '}');
    put8(&p, '(');
    pk_str(&p, "step"); pk_int(&p, 1000);
    pk_str(&p, "lr"); put8(&p, 'G'); put64(&p, 0); /* BINFLOAT 0.0 */
    pk_str(&p, "name"); put8(&p, 'N');
    pk_str(&p, "model");
    put8(&p, '}');
    tensor_spec w = {"FloatStorage", "0", 6, 0, 2, {3, 2}, {2, 1}};
    pk_str(&p, "dvae.w"); pk_tensor(&p, &w);
    put8(&p, 'q'); put8(&p, 1);
    put8(&p, 's');
    put8(&p, 'u');
    put8(&p, '.');
    zip_with_pickle(&z, &p);
    xtts_pth *f = open_bytes(&z, NULL);
    assert_int_equal(xtts_pth_count(f), 1);
    const xtts_pth_tensor *t = xtts_pth_find(f, "model.dvae.w");
    assert_non_null(t);
    assert_int_equal(t->shape[0], 3);
    xtts_pth_close(f);
    free(p.b);
    free(z.b);
}

static void test_zip64_directories_are_read(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zent e[] = {{"archive/data.pkl", p.b, p.n, 0, 0}, {"archive/data/0", W, sizeof W, 1, 0},
                {"archive/data/1", B16, sizeof B16, 0, 0}};
    zip_make64(&z, e, 3, 1);
    xtts_pth *f = open_bytes(&z, NULL);
    assert_int_equal(xtts_pth_count(f), 3);
    assert_true(xtts_pth_find(f, "codebook.embed")->data[1] == 5.0f);
    xtts_pth_close(f);
    /* the locator pointing past the file, and a missing locator */
    size_t loc = z.n - 22 - 20;
    z.b[loc + 8] = 0xff;
    open_bytes(&z, "zip64 end record at offset");
    z.b[loc] = 0;
    open_bytes(&z, "needs a zip64 locator, none found");
    free(p.b);
    free(z.b);
}

static void test_deflated_entries_are_read(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zent e[] = {
        {"arch/data.pkl", p.b, p.n, 1, 0},
        {"arch/data/0", W, sizeof W, 1, 0},
        {"arch/data/1", B16, sizeof B16, 0, 0},
    };
    zip_make(&z, e, 3);
    xtts_pth *f = open_bytes(&z, NULL);
    assert_int_equal(xtts_pth_count(f), 3);
    assert_true(xtts_pth_find(f, "encoder.0.0.weight")->data[5] == 5.0f);
    xtts_pth_close(f);
    free(p.b);
    free(z.b);
}

/* ---- hostile pickles ------------------------------------------------------------------------ */

static void test_globals_outside_the_allowlist_are_refused_by_name(void **state) {
    (void)state;
    const char *bad[][2] = {{"os", "system"}, {"builtins", "eval"}, {"posix", "system"}, {"__builtin__", "exec"},
                            {"torch", "load"}, {"collections", "OrderedDict2"}, {"subprocess", "Popen"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        buf p = {0};
        put8(&p, 0x80); put8(&p, 2);
        pk_global(&p, bad[k][0], bad[k][1]);
        pk_str(&p, "echo pwned");
        put8(&p, 0x85);
        put8(&p, 'R');
        put8(&p, '.');
        char want[128];
        snprintf(want, sizeof want, "data.pkl offset 2: global %s.%s not allowed", bad[k][0], bad[k][1]);
        expect_refused_pickle(&p, want);
        free(p.b);
    }
    /* the same through STACK_GLOBAL (protocol 4) */
    buf p = {0};
    put8(&p, 0x80); put8(&p, 4);
    put8(&p, 0x8c); put8(&p, 2); put(&p, "os", 2);
    put8(&p, 0x8c); put8(&p, 6); put(&p, "system", 6);
    put8(&p, 0x93);
    put8(&p, '.');
    expect_refused_pickle(&p, "data.pkl offset 14: global os.system not allowed");
    free(p.b);
}

static void test_reduce_of_anything_but_the_rebuilders_is_refused(void **state) {
    (void)state;
    buf p = {0};
    put8(&p, 0x80); put8(&p, 2);
    pk_global(&p, "torch", "FloatStorage");
    put8(&p, ')');
    put8(&p, 'R');
    put8(&p, '.');
    expect_refused_pickle(&p, "REDUCE of torch.FloatStorage not allowed");
    p.n = 0;
    put8(&p, 0x80); put8(&p, 2);
    pk_str(&p, "os.system");
    put8(&p, ')');
    put8(&p, 'R');
    put8(&p, '.');
    expect_refused_pickle(&p, "offset 17: REDUCE of a str");
    p.n = 0; /* OrderedDict called with arguments (it would iterate them) */
    put8(&p, 0x80); put8(&p, 2);
    pk_global(&p, "collections", "OrderedDict");
    put8(&p, ']');
    put8(&p, 0x85);
    put8(&p, 'R');
    put8(&p, '.');
    expect_refused_pickle(&p, "collections.OrderedDict called with 1 arguments");
    free(p.b);
}

static void test_opcodes_torch_never_emits_are_refused(void **state) {
    (void)state;
    const uint8_t ops[] = {'i', 'o', 0x81, 0x92, 0x82, 'I', 'L', 'S', 'V', 'F', 'P', '2'};
    for (size_t k = 0; k < sizeof ops; k++) {
        buf p = {0};
        put8(&p, 0x80); put8(&p, 2);
        put8(&p, ops[k]);
        put8(&p, '.');
        char want[64];
        snprintf(want, sizeof want, "offset 2: opcode 0x%02x", ops[k]);
        expect_refused_pickle(&p, want);
        free(p.b);
    }
}

static void test_malformed_pickles_are_refused_with_the_offset(void **state) {
    (void)state;
    struct { const char *bytes; size_t n; const char *want; } cases[] = {
        {"\x80\x02", 2, "ends without STOP"},
        {"\x80\x02.", 3, "offset 2: stack underflow"},
        {"\x80\x02t.", 4, "offset 2: no MARK"},
        {"\x80\x02h\x05.", 5, "offset 2: memo get of unset index 5"},
        {"\x80\x02X\xff\xff\xff\x7f", 7, "offset 2: argument runs past the end"},
        {"\x80\x09.", 3, "protocol 9 not supported"},
        {"\x80\x02(K\x01u.", 6, "SETITEMS with no container"},
        {"\x80\x02]K\x01K\x02s.", 9, "SETITEM on a list"},
        {"\x80\x02}b.", 5, "offset 3: BUILD on an empty stack"},
        {"\x80\x02]}b.", 6, "BUILD on a list"},
        {"\x80\x02(X\x01\x00\x00\x00" "aQ.", 11, "persistent id is not a ('storage'"},
        {"\x80\x02\x8a\x09", 4, "LONG1 of 9 bytes"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        buf p = {0};
        put(&p, cases[k].bytes, cases[k].n);
        expect_refused_pickle(&p, cases[k].want);
        free(p.b);
    }
}

/* A one-tensor pickle whose tensor is t, in a zip with the reference storages. */
static void expect_tensor_refused(const tensor_spec *t, const char *want) {
    buf p = {0};
    put8(&p, 0x80); put8(&p, 2);
    put8(&p, '}');
    pk_str(&p, "w");
    pk_tensor(&p, t);
    put8(&p, 's');
    put8(&p, '.');
    expect_refused_pickle(&p, want);
    free(p.b);
}

static void test_tensors_outside_their_storage_or_with_bad_sizes_are_refused(void **state) {
    (void)state;
    tensor_spec past = {"FloatStorage", "0", 6, 2, 2, {2, 3}, {3, 1}};
    expect_tensor_refused(&past, "tensor 'w': 6 values from offset 2 run past storage '0' (6 values)");
    tensor_spec far = {"FloatStorage", "0", 6, INT64_C(1) << 62, 1, {1}, {1}};
    expect_tensor_refused(&far, "tensor 'w': 1 values from offset 4611686018427387904 run past storage '0'");
    tensor_spec big_storage = {"FloatStorage", "0", 1000, 0, 1, {6}, {1}};
    expect_tensor_refused(&big_storage, "tensor 'w': storage '0' declares 1000 float32 values, its entry holds 24 bytes");
    tensor_spec huge_storage = {"DoubleStorage", "0", INT64_C(1) << 61, 0, 1, {6}, {1}};
    expect_tensor_refused(&huge_storage, "storage '0' declares 2305843009213693952 float64 values");
    tensor_spec overflow = {"FloatStorage", "0", 6, 0, 3, {INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31}, {1, 1, 1}};
    expect_tensor_refused(&overflow, "sizes overflow");
    tensor_spec negative = {"FloatStorage", "0", 6, 0, 2, {-2, 3}, {3, 1}};
    expect_tensor_refused(&negative, "tensor size[0] is not a non-negative int");
    tensor_spec neg_offset = {"FloatStorage", "0", 6, -1, 1, {6}, {1}};
    expect_tensor_refused(&neg_offset, "with a bad offset");
    tensor_spec neg_storage = {"FloatStorage", "0", -6, 0, 1, {6}, {1}};
    expect_tensor_refused(&neg_storage, "storage '0' with a bad element count");
    tensor_spec strided = {"FloatStorage", "0", 6, 0, 2, {3, 2}, {1, 3}};
    expect_tensor_refused(&strided, "is not contiguous");
    tensor_spec missing = {"FloatStorage", "7", 6, 0, 1, {6}, {1}};
    expect_tensor_refused(&missing, "tensor 'w': its storage entry 'archive/data/7' is missing");
    tensor_spec wrong_dtype = {"HalfStorage", "0", 6, 0, 1, {6}, {1}};
    expect_tensor_refused(&wrong_dtype, "storage '0' declares 6 float16 values, its entry holds 24 bytes");
}

static void test_self_referencing_containers_do_not_loop(void **state) {
    (void)state;
    buf p = {0};
    put8(&p, 0x80); put8(&p, 2);
    put8(&p, '}'); put8(&p, 'q'); put8(&p, 0);
    pk_str(&p, "self"); put8(&p, 'h'); put8(&p, 0); put8(&p, 's'); /* d["self"] = d */
    put8(&p, '.');
    expect_refused_pickle(&p, "nested deeper than 32 levels");
    /* a list holding the same list 4 times, 20 levels deep: 4^20 paths, bounded */
    p.n = 0;
    put8(&p, 0x80); put8(&p, 2);
    put8(&p, ']'); put8(&p, 'q'); put8(&p, 0);
    for (int k = 1; k <= 20; k++) {
        put8(&p, '('); for (int j = 0; j < 4; j++) { put8(&p, 'h'); put8(&p, (unsigned)(k - 1)); }
        put8(&p, 'l'); put8(&p, 'q'); put8(&p, (unsigned)k);
    }
    put8(&p, '.');
    expect_refused_pickle(&p, "values to walk");
    free(p.b);
}

static void test_duplicate_keys_are_refused(void **state) {
    (void)state;
    buf p = {0};
    put8(&p, 0x80); put8(&p, 2);
    put8(&p, '}');
    put8(&p, '(');
    tensor_spec w = {"FloatStorage", "0", 6, 0, 1, {6}, {1}};
    pk_str(&p, "a.b"); pk_tensor(&p, &w);
    pk_str(&p, "a"); put8(&p, '}'); pk_str(&p, "b"); pk_tensor(&p, &w); put8(&p, 's');
    put8(&p, 'u');
    put8(&p, '.');
    expect_refused_pickle(&p, "tensor 'a.b' is given twice");
    free(p.b);
}

/* ---- hostile archives ---------------------------------------------------------------------- */

static void test_zip_bomb_entries_are_refused_before_inflating(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    /* data.pkl claims 1 GiB: over the pickle bound, refused before any memory is taken */
    zent e[] = {{"archive/data.pkl", p.b, p.n, 1, (uint64_t)1 << 30}, {"archive/data/0", W, sizeof W, 0, 0}};
    zip_make(&z, e, 2);
    open_bytes(&z, "entry 'archive/data.pkl' claims 1073741824 bytes, over the limit of 67108864");
    /* a storage entry claiming 4 GiB, under the storage bound but over the inflate bound */
    z.n = 0;
    zent e1[] = {{"archive/data.pkl", p.b, p.n, 0, 0}, {"archive/data/0", W, sizeof W, 1, (uint64_t)0xFFFFFFF0u},
                 {"archive/data/1", B16, sizeof B16, 0, 0}};
    zip_make(&z, e1, 3);
    open_bytes(&z, "deflated entry 'archive/data/0' claims 4294967280 bytes, over the limit of 1073741824");
    /* a storage of 16 MiB of zeros claims 4 KiB: inflation stops at the claim */
    size_t zeros_n = 16u << 20;
    uint8_t *zeros = calloc(1, zeros_n);
    assert_non_null(zeros);
    z.n = 0;
    zent e2[] = {{"archive/data.pkl", p.b, p.n, 0, 0}, {"archive/data/0", zeros, zeros_n, 1, 4096},
                 {"archive/data/1", B16, sizeof B16, 0, 0}};
    zip_make(&z, e2, 3);
    open_bytes(&z, "entry 'archive/data/0': inflates past its declared size");
    free(zeros);
    free(p.b);
    free(z.b);
}

static void test_duplicate_entry_names_are_refused(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zent e[] = {{"archive/data.pkl", p.b, p.n, 0, 0}, {"archive/data/0", W, sizeof W, 0, 0},
                {"archive/data/0", W, sizeof W, 0, 0}, {"archive/data/1", B16, sizeof B16, 0, 0}};
    zip_make(&z, e, 4);
    open_bytes(&z, "zip: duplicate entry name 'archive/data/0'");
    free(p.b);
    free(z.b);
}

static void test_every_truncation_is_refused(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zip_with_pickle(&z, &p);
    for (size_t n = 0; n < z.n; n++) {
        xtts_pth *f = NULL;
        xtts_error err = {0};
        uint8_t *copy = malloc(n ? n : 1); /* its own allocation, so ASan sees any read past n */
        memcpy(copy, z.b, n);
        xtts_status st = xtts_pth_open_mem(copy, n, "m.pth", &f, &err);
        free(copy);
        if (st == XTTS_OK) fail_msg("truncated to %zu of %zu bytes, accepted", n, z.n);
        assert_int_equal(xtts_exit_code(st), 2);
        assert_null(strchr(err.msg, '\n'));
    }
    free(p.b);
    free(z.b);
}

static void test_corrupt_central_directory_and_data_are_refused(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zip_with_pickle(&z, &p);
    size_t eocd = z.n - 22;
    uint32_t cd = (uint32_t)(z.b[eocd + 16] | z.b[eocd + 17] << 8 | z.b[eocd + 18] << 16 | (uint32_t)z.b[eocd + 19] << 24);
    struct { size_t at; uint8_t value; const char *want; } cases[] = {
        {cd, 0x51, "corrupt central directory at offset"},        /* signature */
        {cd + 42, 0x7f, "local header at offset"},                /* local header offset */
        {cd + 23, 0x7f, "run past the end of the file"},          /* compressed size */
        {cd + 29, 0x7f, "runs past the directory"},               /* name length */
        {cd + 8, 0x01, "is encrypted"},                           /* flags */
        {cd + 10, 0x0e, "compression method 14 not supported"},   /* method (data.pkl is read first) */
        {eocd + 10, 0x09, "claims 9 entries"},                    /* entry count */
        {eocd + 16, 0xff, "lies outside the file"},               /* directory offset */
        {60, 0x00, "CRC-32 mismatch"},                            /* a byte of data.pkl */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        buf c = {0};
        put(&c, z.b, z.n);
        c.b[cases[k].at] = cases[k].value;
        if (cases[k].at == cd + 10) c.b[cd + 11] = 0;
        if (cases[k].at == eocd + 10) c.b[eocd + 8] = cases[k].value; /* entries on this disk too */
        open_bytes(&c, cases[k].want);
        free(c.b);
    }
    free(p.b);
    free(z.b);
}

static void test_legacy_pickle_and_other_files_are_refused_with_a_clear_line(void **state) {
    (void)state;
    buf b = {0};
    /* what torch.save(..., _use_new_zipfile_serialization=False) starts with: the magic number */
    put(&b, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
    open_bytes(&b, "the legacy torch.save format (a bare pickle, PyTorch before 1.6) is not read");
    b.n = 0;
    put(&b, "PK\x05\x06", 4);
    for (int k = 0; k < 18; k++) put8(&b, 0);
    open_bytes(&b, "a zip without ARCHIVE/data.pkl");
    b.n = 0;
    put(&b, "#!/bin/sh\necho hi\n", 18);
    open_bytes(&b, "neither a torch.save zip nor a safetensors file");
    b.n = 0;
    open_bytes(&b, "empty file");
    free(b.b);
    xtts_pth *f = NULL;
    xtts_error err;
    assert_int_equal(xtts_pth_open("/nonexistent/dvae.pth", &f, &err), XTTS_ENOTFOUND);
    assert_string_equal(err.msg, "/nonexistent/dvae.pth: cannot open: No such file or directory");
    assert_int_equal(xtts_pth_open("/", &f, &err), XTTS_EINPUT);
}

static void test_big_endian_checkpoints_are_refused(void **state) {
    (void)state;
    buf p = {0}, z = {0};
    pickle_reference(&p);
    zent e[] = {{"archive/data.pkl", p.b, p.n, 0, 0}, {"archive/byteorder", "big", 3, 0, 0}};
    zip_make(&z, e, 2);
    open_bytes(&z, "'archive/byteorder' is not \"little\"");
    free(p.b);
    free(z.b);
}

/* ---- safetensors ------------------------------------------------------------------------------ */

static void safetensors(buf *o, const char *header, const void *data, size_t n) {
    o->n = 0;
    put64(o, strlen(header));
    put(o, header, strlen(header));
    put(o, data, n);
}

static void test_safetensors_are_read_and_bad_headers_refused(void **state) {
    (void)state;
    uint8_t data[28];
    memcpy(data, W, 24);
    uint16_t bf[2] = {0x3f80, 0xc040}; /* 1.0, -3.0 */
    memcpy(data + 24, bf, 4);
    buf b = {0};
    safetensors(&b, "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                    "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[24,28]}}", data, sizeof data);
    xtts_pth *f = open_bytes(&b, NULL);
    assert_int_equal(xtts_pth_count(f), 2);
    assert_true(xtts_pth_find(f, "w")->data[4] == 4.0f);
    assert_true(xtts_pth_find(f, "b")->data[1] == -3.0f);
    assert_string_equal(xtts_pth_find(f, "b")->stored_dtype, "bfloat16");
    xtts_pth_close(f);
    struct { const char *header; const char *want; } cases[] = {
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[4,27]}}", "data_offsets [4, 27] do not hold its 6 float32"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,2400]}}", "tensor 'w': data_offsets [0, 2400]"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-2,3],\"data_offsets\":[0,24]}}", "shape[0] is not a non-negative integer"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,24]}}", "sizes overflow"},
        {"{\"w\":{\"dtype\":\"C64\",\"shape\":[3],\"data_offsets\":[0,24]}}", "dtype C64 not supported"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},\"w\":{}}", "duplicate object key"},
        {"{\"w\":[1,2]}", "tensor 'w': header entry is not an object"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[6]", "safetensors header offset"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        safetensors(&b, cases[k].header, data, sizeof data);
        open_bytes(&b, cases[k].want);
    }
    b.n = 0;
    put64(&b, 1u << 20);
    put(&b, "{}", 2);
    open_bytes(&b, "safetensors header of 1048576 bytes runs past the end of the file");
    free(b.b);
}

/* ---- what real torch.save wrote (tests/golden/torch_pth/) ----------------------------------- */

#define GOLDEN "tests/golden/torch_pth/"

/* Check one expected.tsv row (file, key, dtype, shape, values) against f. */
static void check_golden_row(const xtts_pth *f, char *line) {
    char *fields[5];
    char *save = NULL;
    for (int k = 0; k < 5; k++) {
        fields[k] = strtok_r(k ? NULL : line, "\t\n", &save);
        if (k < 4) assert_non_null(fields[k]);
    }
    const char *key = fields[1];
    if (strcmp(fields[0], "mel_stats.pth") == 0) { /* the single tensor is named "" */
        fields[4] = fields[3], fields[3] = fields[2], fields[2] = fields[1];
        key = "";
    }
    const xtts_pth_tensor *t = xtts_pth_find(f, key);
    if (!t) fail_msg("%s: key '%s' not found", fields[0], key);
    const char *dtype = fields[2];
    if (strcmp(dtype, "int64") == 0 || strcmp(dtype, "float16") == 0 || strcmp(dtype, "bfloat16") == 0 ||
        strcmp(dtype, "float32") == 0)
        assert_string_equal(t->stored_dtype, dtype);
    char shape[64] = "";
    for (int d = 0; d < t->ndim; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "x" : "", (long long)t->shape[d]);
    if (t->ndim == 0) strcpy(shape, "scalar");
    assert_string_equal(shape, fields[3]);
    char *v = fields[4], *end;
    for (size_t k = 0; k < t->numel; k++) {
        double want = strtod(v, &end);
        assert_true(end != v);
        if (t->data[k] != (float)want) fail_msg("%s '%s'[%zu] = %g, want %g", fields[0], key, k, t->data[k], want);
        v = end;
    }
}

static void test_golden_files_from_torch_save_read_exactly(void **state) {
    (void)state;
    FILE *fp = fopen(GOLDEN "expected.tsv", "r");
    assert_non_null(fp);
    const char *files[] = {"dvae_tiny.pth", "mel_stats.pth", "fp16.pth", "nested.pth"};
    size_t rows[4] = {0}, tensors[4] = {0};
    xtts_pth *f[4] = {0};
    for (int k = 0; k < 4; k++) {
        char path[256];
        snprintf(path, sizeof path, GOLDEN "%s", files[k]);
        xtts_error err;
        if (xtts_pth_open(path, &f[k], &err) != XTTS_OK) fail_msg("%s", err.msg);
        tensors[k] = xtts_pth_count(f[k]);
    }
    char line[65536];
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        int k = 0;
        while (k < 4 && strncmp(line, files[k], strlen(files[k])) != 0) k++;
        assert_true(k < 4);
        check_golden_row(f[k], line);
        rows[k]++;
    }
    fclose(fp);
    for (int k = 0; k < 4; k++) {
        if (rows[k] != tensors[k]) fail_msg("%s: %zu tensors read, %zu expected", files[k], tensors[k], rows[k]);
        xtts_pth_close(f[k]);
    }
    /* Coqui's DVAE keys as the reader gives them */
    xtts_pth *d = NULL;
    xtts_error err;
    assert_int_equal(xtts_pth_open(GOLDEN "dvae_tiny.pth", &d, &err), XTTS_OK);
    const xtts_pth_tensor *t;
    int64_t enc0[3] = {2, 2, 3}, embed[2] = {3, 4};
    assert_int_equal(xtts_pth_expect(d, "encoder.0.0.weight", 3, enc0, &t, &err), XTTS_OK);
    assert_int_equal(xtts_pth_expect(d, "codebook.embed", 2, embed, &t, &err), XTTS_OK);
    xtts_pth_close(d);
}

/* Every one-byte change of a real torch.save file is read or refused, never a crash. */
static void test_golden_file_with_any_byte_changed_is_read_or_refused(void **state) {
    (void)state;
    char *data = NULL;
    size_t len = 0;
    xtts_error err;
    assert_int_equal(xtts_read_file(GOLDEN "fp16.pth", 1 << 20, &data, &len, &err), XTTS_OK);
    for (size_t at = 0; at < len; at++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, data, len);
        copy[at] ^= 0x5a;
        xtts_pth *f = NULL;
        xtts_status st = xtts_pth_open_mem(copy, len, "fp16.pth", &f, &err);
        if (st != XTTS_OK) assert_null(strchr(err.msg, '\n'));
        xtts_pth_close(f);
        free(copy);
    }
    free(data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_dict_tensors_are_read_by_name_as_float32),
        cmocka_unit_test(test_single_tensor_file_is_named_empty),
        cmocka_unit_test(test_nested_dicts_join_keys_and_other_values_are_dropped),
        cmocka_unit_test(test_deflated_entries_are_read),
        cmocka_unit_test(test_zip64_directories_are_read),
        cmocka_unit_test(test_globals_outside_the_allowlist_are_refused_by_name),
        cmocka_unit_test(test_reduce_of_anything_but_the_rebuilders_is_refused),
        cmocka_unit_test(test_opcodes_torch_never_emits_are_refused),
        cmocka_unit_test(test_malformed_pickles_are_refused_with_the_offset),
        cmocka_unit_test(test_tensors_outside_their_storage_or_with_bad_sizes_are_refused),
        cmocka_unit_test(test_self_referencing_containers_do_not_loop),
        cmocka_unit_test(test_duplicate_keys_are_refused),
        cmocka_unit_test(test_zip_bomb_entries_are_refused_before_inflating),
        cmocka_unit_test(test_duplicate_entry_names_are_refused),
        cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_corrupt_central_directory_and_data_are_refused),
        cmocka_unit_test(test_legacy_pickle_and_other_files_are_refused_with_a_clear_line),
        cmocka_unit_test(test_big_endian_checkpoints_are_refused),
        cmocka_unit_test(test_safetensors_are_read_and_bad_headers_refused),
        cmocka_unit_test(test_golden_files_from_torch_save_read_exactly),
        cmocka_unit_test(test_golden_file_with_any_byte_changed_is_read_or_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
