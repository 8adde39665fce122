/* torch_pickle.c — a restricted unpickler for the data.pkl of torch.save.
 *
 * It interprets the opcodes that torch.save emits (pickle protocol 2, and the few protocol
 * 4 additions a pickle_protocol=4 save uses) and builds plain values: None, bools, ints,
 * floats, strings, tuples, lists, dicts, and the storages and tensors torch's persistent
 * ids and rebuild functions describe. GLOBAL is accepted only for the allowlist below;
 * REDUCE calls only OrderedDict() and the two tensor rebuilders; BUILD is accepted only on
 * a dict (torch's OrderedDict carries its _metadata through it; the state is dropped).
 * Every other opcode (INST, OBJ, NEWOBJ, EXT*, the text forms of protocol 0, ...) is
 * refused with its offset. Nothing in the pickle is ever called: the "calls" are this
 * file's own constructors. Memory is bounded (an arena with a cap), nesting is bounded
 * when the result is walked, and self-referencing containers cannot loop. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/model/torch_pth_internal.h"

#define ARENA_MAX ((size_t)512 << 20) /* bytes of values one pickle may build */
#define MAX_DEPTH 32                  /* nesting of dicts and lists walked for tensors */
#define MAX_NAME 4096                 /* bytes of a dotted key path */
#define MAX_KEY 256                   /* bytes of a storage key */
#define MAX_VISITS ((size_t)1 << 22)  /* values walked: shared subtrees cannot blow it up */
#define MAX_SLOTS ((size_t)1 << 22)   /* stack depth and memo indices */

typedef enum { PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_TUPLE, PK_LIST, PK_DICT, PK_GLOBAL, PK_STORAGE, PK_TENSOR } pk_kind;
typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR_V2, G_REBUILD_PARAMETER, G_STORAGE } pk_global;

typedef struct pk_val pk_val;
struct pk_val {
    pk_kind kind;
    int64_t i;          /* INT, BOOL; GLOBAL: a pk_global; STORAGE and storage GLOBAL: an xtts_pth_dtype */
    double f;
    char *s;            /* STR (NUL-terminated); GLOBAL: "module.name"; STORAGE: its key */
    size_t len;
    pk_val **items;     /* TUPLE, LIST; DICT: key, value, key, value, ... */
    size_t n, cap;
    int dtype;          /* storage GLOBAL and STORAGE */
    uint64_t numel;     /* STORAGE */
    xtts_pth_ref *ref;  /* TENSOR (name and storage_key unset; storage in src) */
    pk_val *src;        /* TENSOR: its STORAGE */
};

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

typedef struct {
    const uint8_t *p;
    size_t len, pos, op_at;
    const char *label;
    xtts_error *err;
    arena_block *blocks;
    size_t arena_bytes;
    pk_val **stack;
    size_t sp, stack_cap;
    size_t *marks;
    size_t n_marks, marks_cap;
    pk_val **memo;
    size_t memo_cap, memo_used; /* slots, and slots set (MEMOIZE's next index) */
    size_t visits;              /* values walked for tensors, bounded against shared subtrees */
    pk_val *result;
} vm;

#define NOT_MINE (-1) /* an op group's answer for an opcode it does not handle */

#define TRY(expr)                               \
    do {                                        \
        xtts_status try_st_ = (expr);           \
        if (try_st_ != XTTS_OK) return try_st_; \
    } while (0)

static xtts_status fail(vm *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xtts_status fail(vm *m, const char *fmt, ...) {
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl offset %zu: %s", m->label, m->op_at, what);
}

static void *arena_alloc(vm *m, size_t size) {
    size = (size + 15) & ~(size_t)15;
    arena_block *b = m->blocks;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        if (m->arena_bytes + cap > ARENA_MAX) return NULL;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = m->blocks;
        b->used = 0;
        b->cap = cap;
        m->blocks = b;
        m->arena_bytes += cap;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

static xtts_status out_of_memory(vm *m) {
    if (m->arena_bytes + 65536 > ARENA_MAX)
        return xtts_error_set(m->err, XTTS_ERANGE, "%s: data.pkl offset %zu: the pickle builds more than %zu MiB of values",
                              m->label, m->op_at, ARENA_MAX >> 20);
    return xtts_error_set(m->err, XTTS_ENOMEM, "%s: data.pkl offset %zu: out of memory", m->label, m->op_at);
}

static xtts_status new_val(vm *m, pk_kind kind, pk_val **out) {
    *out = arena_alloc(m, sizeof **out);
    if (!*out) return out_of_memory(m);
    (*out)->kind = kind;
    return XTTS_OK;
}

static xtts_status item_add(vm *m, pk_val *c, pk_val *item) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        pk_val **items = arena_alloc(m, cap * sizeof *items);
        if (!items) return out_of_memory(m);
        if (c->n) memcpy(items, c->items, c->n * sizeof *items);
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = item;
    return XTTS_OK;
}

static const char *kind_name(pk_kind k) {
    static const char *names[] = {"None", "bool", "int", "float", "str", "tuple", "list", "dict", "global", "storage", "tensor"};
    return names[k];
}

/* ---- the stack and the marks ------------------------------------------------------------ */

static size_t floor_of(const vm *m) { return m->n_marks ? m->marks[m->n_marks - 1] : 0; }

static xtts_status push(vm *m, pk_val *v) {
    if (m->sp == MAX_SLOTS) return fail(m, "more than %zu values on the stack", MAX_SLOTS);
    if (m->sp == m->stack_cap) {
        size_t cap = m->stack_cap ? m->stack_cap * 2 : 64;
        pk_val **s = realloc(m->stack, cap * sizeof *s);
        if (!s) return out_of_memory(m);
        m->stack = s;
        m->stack_cap = cap;
    }
    m->stack[m->sp++] = v;
    return XTTS_OK;
}

static xtts_status pop(vm *m, pk_val **v) {
    *v = NULL;
    if (m->sp <= floor_of(m)) return fail(m, "stack underflow");
    *v = m->stack[--m->sp];
    return XTTS_OK;
}

static xtts_status top(vm *m, pk_kind want, pk_val **v, const char *op) {
    *v = NULL;
    if (m->sp <= floor_of(m)) return fail(m, "%s on an empty stack", op);
    *v = m->stack[m->sp - 1];
    if ((*v)->kind != want) return fail(m, "%s on a %s (a %s expected)", op, kind_name((*v)->kind), kind_name(want));
    return XTTS_OK;
}

static xtts_status push_mark(vm *m) {
    if (m->n_marks == m->marks_cap) {
        size_t cap = m->marks_cap ? m->marks_cap * 2 : 16;
        size_t *s = realloc(m->marks, cap * sizeof *s);
        if (!s) return out_of_memory(m);
        m->marks = s;
        m->marks_cap = cap;
    }
    m->marks[m->n_marks++] = m->sp;
    return XTTS_OK;
}

/* Pop the last MARK: the values pushed since are stack[*start, sp). */
static xtts_status pop_mark(vm *m, size_t *start) {
    *start = 0;
    if (m->n_marks == 0) return fail(m, "no MARK to pop");
    *start = m->marks[--m->n_marks];
    return XTTS_OK;
}

/* ---- reading the opcode's arguments -------------------------------------------------------- */

static xtts_status need(vm *m, size_t n) {
    if (n > m->len - m->pos) return fail(m, "argument runs past the end of data.pkl (truncated?)");
    return XTTS_OK;
}

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | p[k];
    return v;
}

static xtts_status read_le(vm *m, int n, uint64_t *v) {
    TRY(need(m, (size_t)n));
    *v = le(m->p + m->pos, n);
    m->pos += (size_t)n;
    return XTTS_OK;
}

/* A printable copy of untrusted bytes for a message. */
static void printable(char *dst, size_t cap, const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap; i++) dst[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (n > 0 && k + 4 >= cap) dst[k++] = '.', dst[k++] = '.', dst[k++] = '.';
    dst[k] = '\0';
}

static xtts_status push_str(vm *m, const uint8_t *s, size_t n) {
    pk_val *v;
    TRY(new_val(m, PK_STR, &v));
    v->s = arena_alloc(m, n + 1);
    if (!v->s) return out_of_memory(m);
    memcpy(v->s, s, n);
    v->len = n;
    return push(m, v);
}

/* ---- op groups: each handles its opcodes and answers NOT_MINE for the others ------------- */

static int op_scalars(vm *m, uint8_t op) {
    pk_val *v;
    uint64_t u, n;
    switch (op) {
    case 'N': TRY(new_val(m, PK_NONE, &v)); return push(m, v);
    case 0x88: case 0x89: TRY(new_val(m, PK_BOOL, &v)); v->i = op == 0x88; return push(m, v);
    case 'K': case 'M': case 'J':
        TRY(read_le(m, op == 'K' ? 1 : op == 'M' ? 2 : 4, &u));
        TRY(new_val(m, PK_INT, &v));
        v->i = op == 'J' ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
        return push(m, v);
    case 0x8a: /* LONG1: n bytes, little-endian two's complement */
        TRY(read_le(m, 1, &n));
        if (n > 8) return fail(m, "LONG1 of %u bytes does not fit 64 bits", (unsigned)n);
        TRY(read_le(m, (int)n, &u));
        if (n > 0 && n < 8 && (u >> (8 * n - 1) & 1)) u |= ~(uint64_t)0 << (8 * n);
        TRY(new_val(m, PK_INT, &v));
        v->i = (int64_t)u;
        return push(m, v);
    case 'G': /* BINFLOAT: big-endian IEEE double */
        TRY(need(m, 8));
        u = 0;
        for (int k = 0; k < 8; k++) u = u << 8 | m->p[m->pos + k];
        m->pos += 8;
        TRY(new_val(m, PK_FLOAT, &v));
        memcpy(&v->f, &u, sizeof v->f);
        return push(m, v);
    case 'X': case 'B': case 0x8c: case 'U': case 'C': case 'T': /* strings and bytes */
        TRY(read_le(m, op == 0x8c || op == 'U' || op == 'C' ? 1 : 4, &n));
        TRY(need(m, (size_t)n));
        TRY(push_str(m, m->p + m->pos, (size_t)n));
        m->pos += (size_t)n;
        return XTTS_OK;
    default: return NOT_MINE;
    }
}

/* Build a tuple (or list) of stack[start, sp) and leave it on the stack in their place. */
static xtts_status collect(vm *m, pk_kind kind, size_t start) {
    pk_val *c;
    TRY(new_val(m, kind, &c));
    for (size_t k = start; k < m->sp; k++) TRY(item_add(m, c, m->stack[k]));
    m->sp = start;
    return push(m, c);
}

/* Move stack[start, sp) into the container just below start (a list, or a dict in pairs). */
static xtts_status fill(vm *m, size_t start, pk_kind want, const char *op) {
    if (start == 0 || start - 1 < floor_of(m)) return fail(m, "%s with no container below its MARK", op);
    pk_val *c = m->stack[start - 1];
    if (c->kind != want) return fail(m, "%s on a %s", op, kind_name(c->kind));
    if (want == PK_DICT && (m->sp - start) % 2) return fail(m, "%s with an odd number of values", op);
    for (size_t k = start; k < m->sp; k++) TRY(item_add(m, c, m->stack[k]));
    m->sp = start;
    return XTTS_OK;
}

static int op_containers(vm *m, uint8_t op) {
    pk_val *v, *k, *c;
    size_t start;
    switch (op) {
    case '(': return push_mark(m);
    case '}': TRY(new_val(m, PK_DICT, &v)); return push(m, v);
    case ']': TRY(new_val(m, PK_LIST, &v)); return push(m, v);
    case ')': TRY(new_val(m, PK_TUPLE, &v)); return push(m, v);
    case 't': TRY(pop_mark(m, &start)); return collect(m, PK_TUPLE, start);
    case 'l': TRY(pop_mark(m, &start)); return collect(m, PK_LIST, start);
    case 0x85: case 0x86: case 0x87: {
        size_t n = (size_t)(op - 0x84);
        if (m->sp < floor_of(m) + n) return fail(m, "TUPLE%zu with %zu values on the stack", n, m->sp - floor_of(m));
        return collect(m, PK_TUPLE, m->sp - n);
    }
    case 'd':
        TRY(pop_mark(m, &start));
        if ((m->sp - start) % 2) return fail(m, "DICT with an odd number of values");
        TRY(collect(m, PK_DICT, start));
        return XTTS_OK;
    case 'u': TRY(pop_mark(m, &start)); return fill(m, start, PK_DICT, "SETITEMS");
    case 'e': TRY(pop_mark(m, &start)); return fill(m, start, PK_LIST, "APPENDS");
    case 's':
        TRY(pop(m, &v));
        TRY(pop(m, &k));
        TRY(top(m, PK_DICT, &c, "SETITEM"));
        TRY(item_add(m, c, k));
        return item_add(m, c, v);
    case 'a':
        TRY(pop(m, &v));
        TRY(top(m, PK_LIST, &c, "APPEND"));
        return item_add(m, c, v);
    case '0': return pop(m, &v);
    case '1': TRY(pop_mark(m, &start)); m->sp = start; return XTTS_OK;
    default: return NOT_MINE;
    }
}

static xtts_status memo_put(vm *m, uint64_t idx) {
    if (m->sp <= floor_of(m)) return fail(m, "memo put on an empty stack");
    if (idx >= m->len || idx >= MAX_SLOTS) return fail(m, "memo index %llu out of range", (unsigned long long)idx);
    if (idx >= m->memo_cap) {
        size_t cap = m->memo_cap ? m->memo_cap : 64;
        while (cap <= idx) cap *= 2;
        pk_val **memo = realloc(m->memo, cap * sizeof *memo);
        if (!memo) return out_of_memory(m);
        memset(memo + m->memo_cap, 0, (cap - m->memo_cap) * sizeof *memo);
        m->memo = memo;
        m->memo_cap = cap;
    }
    if (!m->memo[idx]) m->memo_used++;
    m->memo[idx] = m->stack[m->sp - 1];
    return XTTS_OK;
}

static int op_memo(vm *m, uint8_t op) {
    uint64_t idx;
    switch (op) {
    case 'q': TRY(read_le(m, 1, &idx)); return memo_put(m, idx);
    case 'r': TRY(read_le(m, 4, &idx)); return memo_put(m, idx);
    case 0x94: return memo_put(m, m->memo_used); /* MEMOIZE: the index is the memo's size */
    case 'h': case 'j':
        TRY(read_le(m, op == 'h' ? 1 : 4, &idx));
        if (idx >= m->memo_cap || !m->memo[idx]) return fail(m, "memo get of unset index %llu", (unsigned long long)idx);
        return push(m, m->memo[idx]);
    case 0x80: /* PROTO */
        TRY(read_le(m, 1, &idx));
        if (idx < 2 || idx > 5) return fail(m, "pickle protocol %u not supported (2 to 5)", (unsigned)idx);
        return XTTS_OK;
    case 0x95: return read_le(m, 8, &idx); /* FRAME: a length hint */
    default: return NOT_MINE;
    }
}

/* ---- globals, calls and persistent ids ------------------------------------------------------ */

static const struct {
    const char *name;
    pk_global g;
    int dtype;
} allowed[] = {
    {"collections.OrderedDict", G_ORDERED_DICT, 0},
    {"torch._utils._rebuild_tensor_v2", G_REBUILD_TENSOR_V2, 0},
    {"torch._utils._rebuild_parameter", G_REBUILD_PARAMETER, 0},
    {"torch.FloatStorage", G_STORAGE, XTTS_PTH_FLOAT32},
    {"torch.HalfStorage", G_STORAGE, XTTS_PTH_FLOAT16},
    {"torch.BFloat16Storage", G_STORAGE, XTTS_PTH_BFLOAT16},
    {"torch.DoubleStorage", G_STORAGE, XTTS_PTH_FLOAT64},
    {"torch.LongStorage", G_STORAGE, XTTS_PTH_INT64},
    {"torch.IntStorage", G_STORAGE, XTTS_PTH_INT32},
    {"torch.ShortStorage", G_STORAGE, XTTS_PTH_INT16},
    {"torch.CharStorage", G_STORAGE, XTTS_PTH_INT8},
    {"torch.ByteStorage", G_STORAGE, XTTS_PTH_UINT8},
    {"torch.BoolStorage", G_STORAGE, XTTS_PTH_BOOL},
};

static xtts_status push_global(vm *m, const char *module, size_t nm, const char *name, size_t nn) {
    for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++) {
        const char *a = allowed[k].name, *dot = strrchr(a, '.');
        if ((size_t)(dot - a) == nm && memcmp(a, module, nm) == 0 && strlen(dot + 1) == nn && memcmp(dot + 1, name, nn) == 0) {
            pk_val *v;
            TRY(new_val(m, PK_GLOBAL, &v));
            v->i = allowed[k].g;
            v->dtype = allowed[k].dtype;
            v->s = (char *)allowed[k].name;
            return push(m, v);
        }
    }
    char pm[80], pn[80];
    printable(pm, sizeof pm, module, nm);
    printable(pn, sizeof pn, name, nn);
    return fail(m, "global %s.%s not allowed (only dicts and tensors are read from a model file)", pm, pn);
}

/* GLOBAL: "module\nname\n". */
static xtts_status op_global_text(vm *m) {
    const char *s = (const char *)m->p + m->pos;
    size_t left = m->len - m->pos;
    const char *nl1 = memchr(s, '\n', left);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s)) : NULL;
    if (!nl2) return fail(m, "GLOBAL without its two lines (truncated?)");
    m->pos += (size_t)(nl2 + 1 - s);
    return push_global(m, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static int64_t int_item(const pk_val *t, size_t k) { return t->items[k]->i; }

/* BINPERSID: ('storage', torch.XStorage, key, location, numel) -> a storage value. */
static xtts_status op_persid(vm *m) {
    pk_val *pid, *v;
    TRY(pop(m, &pid));
    if (pid->kind != PK_TUPLE || pid->n != 5 || pid->items[0]->kind != PK_STR || strcmp(pid->items[0]->s, "storage") != 0)
        return fail(m, "persistent id is not a ('storage', type, key, location, size) tuple");
    const pk_val *type = pid->items[1], *key = pid->items[2], *numel = pid->items[4];
    if (type->kind != PK_GLOBAL || type->i != G_STORAGE) return fail(m, "persistent id names no torch storage type");
    if (key->kind != PK_STR || key->len == 0 || key->len > MAX_KEY || strlen(key->s) != key->len)
        return fail(m, "persistent id with a bad storage key");
    if (numel->kind != PK_INT || int_item(pid, 4) < 0) return fail(m, "storage '%s' with a bad element count", key->s);
    TRY(new_val(m, PK_STORAGE, &v));
    v->dtype = type->dtype;
    v->s = key->s;
    v->len = key->len;
    v->numel = (uint64_t)numel->i;
    return push(m, v);
}

/* Read a tuple of non-negative ints (size or stride) into out. */
static xtts_status int_tuple(vm *m, const pk_val *t, const char *what, int64_t *out, int *n) {
    if (t->kind != PK_TUPLE) return fail(m, "tensor %s is a %s, not a tuple", what, kind_name(t->kind));
    if (t->n > XTTS_PTH_MAX_DIMS) return fail(m, "tensor with %zu dimensions (at most %d)", t->n, XTTS_PTH_MAX_DIMS);
    for (size_t k = 0; k < t->n; k++) {
        if (t->items[k]->kind != PK_INT || t->items[k]->i < 0)
            return fail(m, "tensor %s[%zu] is not a non-negative int", what, k);
        out[k] = t->items[k]->i;
    }
    *n = (int)t->n;
    return XTTS_OK;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]). */
static xtts_status rebuild_tensor(vm *m, const pk_val *args) {
    if (args->n != 6 && args->n != 7) return fail(m, "_rebuild_tensor_v2 with %zu arguments (6 or 7)", args->n);
    const pk_val *st = args->items[0], *off = args->items[1];
    if (st->kind != PK_STORAGE) return fail(m, "_rebuild_tensor_v2 of a %s, not a storage", kind_name(st->kind));
    if (off->kind != PK_INT || off->i < 0) return fail(m, "tensor of storage '%s' with a bad offset", st->s);
    int64_t shape[XTTS_PTH_MAX_DIMS], stride[XTTS_PTH_MAX_DIMS];
    int nd, ns;
    TRY(int_tuple(m, args->items[2], "size", shape, &nd));
    TRY(int_tuple(m, args->items[3], "stride", stride, &ns));
    if (nd != ns) return fail(m, "tensor of storage '%s': %d sizes, %d strides", st->s, nd, ns);
    uint64_t numel = 1, expect = 1;
    for (int d = 0; d < nd; d++)
        if (__builtin_mul_overflow(numel, (uint64_t)shape[d], &numel) || numel > ((uint64_t)1 << 62))
            return fail(m, "tensor of storage '%s': sizes overflow", st->s);
    for (int d = nd - 1; d >= 0 && numel != 0; d--) { /* size-1 dimensions may have any stride, as in torch */
        if (shape[d] != 1 && (uint64_t)stride[d] != expect)
            return fail(m, "tensor of storage '%s' is not contiguous (stride %lld in dimension %d, %llu expected)", st->s,
                        (long long)stride[d], d, (unsigned long long)expect);
        expect *= (uint64_t)shape[d];
    }
    pk_val *v;
    TRY(new_val(m, PK_TENSOR, &v));
    v->ref = arena_alloc(m, sizeof *v->ref);
    if (!v->ref) return out_of_memory(m);
    v->src = (pk_val *)st;
    v->ref->dtype = (xtts_pth_dtype)st->dtype;
    v->ref->storage_numel = st->numel;
    v->ref->offset = (uint64_t)off->i;
    v->ref->ndim = nd;
    memcpy(v->ref->shape, shape, sizeof shape);
    v->ref->numel = numel;
    return push(m, v);
}

static xtts_status op_reduce(vm *m) {
    pk_val *args, *fn, *v;
    TRY(pop(m, &args));
    TRY(pop(m, &fn));
    if (fn->kind != PK_GLOBAL) return fail(m, "REDUCE of a %s (only allowed globals are called)", kind_name(fn->kind));
    if (args->kind != PK_TUPLE) return fail(m, "REDUCE of %s with a %s for arguments", fn->s, kind_name(args->kind));
    switch ((pk_global)fn->i) {
    case G_ORDERED_DICT:
        if (args->n != 0) return fail(m, "collections.OrderedDict called with %zu arguments", args->n);
        TRY(new_val(m, PK_DICT, &v));
        return push(m, v);
    case G_REBUILD_TENSOR_V2: return rebuild_tensor(m, args);
    case G_REBUILD_PARAMETER:
        if (args->n < 1 || args->items[0]->kind != PK_TENSOR) return fail(m, "_rebuild_parameter of no tensor");
        return push(m, args->items[0]);
    default: return fail(m, "REDUCE of %s not allowed", fn->s);
    }
}

static int op_objects(vm *m, uint8_t op) {
    pk_val *a, *b;
    switch (op) {
    case 'c': return op_global_text(m);
    case 0x93: /* STACK_GLOBAL */
        TRY(pop(m, &b));
        TRY(pop(m, &a));
        if (a->kind != PK_STR || b->kind != PK_STR) return fail(m, "STACK_GLOBAL of a %s and a %s", kind_name(a->kind), kind_name(b->kind));
        return push_global(m, a->s, a->len, b->s, b->len);
    case 'R': return op_reduce(m);
    case 'Q': return op_persid(m);
    case 'b': /* BUILD: only the state torch's OrderedDict carries (_metadata) */
        TRY(pop(m, &a));
        return top(m, PK_DICT, &b, "BUILD");
    default: return NOT_MINE;
    }
}

/* ---- the loop ---------------------------------------------------------------------------------- */

static xtts_status run(vm *m) {
    while (m->pos < m->len) {
        m->op_at = m->pos;
        uint8_t op = m->p[m->pos++];
        if (op == '.') return pop(m, &m->result);
        int rc = op_scalars(m, op);
        if (rc == NOT_MINE) rc = op_containers(m, op);
        if (rc == NOT_MINE) rc = op_memo(m, op);
        if (rc == NOT_MINE) rc = op_objects(m, op);
        if (rc == NOT_MINE) {
            char c = op >= 0x20 && op < 0x7f ? (char)op : '?';
            return fail(m, "opcode 0x%02x ('%c') not allowed in a model file", op, c);
        }
        if (rc != XTTS_OK) return (xtts_status)rc;
    }
    m->op_at = m->len;
    return fail(m, "pickle ends without STOP (truncated?)");
}

/* ---- the result: tensors by dotted name ------------------------------------------------------ */

static xtts_status walk(vm *m, const pk_val *v, char *name, size_t name_len, int depth, xtts_pth_refs *out);

static xtts_status walk_child(vm *m, const pk_val *v, char *name, size_t name_len, const char *part, size_t part_len,
                              int depth, xtts_pth_refs *out) {
    size_t sep = name_len > 0;
    if (name_len + sep + part_len >= MAX_NAME)
        return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl: key path longer than %d bytes", m->label, MAX_NAME);
    if (sep) name[name_len] = '.';
    memcpy(name + name_len + sep, part, part_len);
    name[name_len + sep + part_len] = '\0';
    xtts_status st = walk(m, v, name, name_len + sep + part_len, depth + 1, out);
    name[name_len] = '\0';
    return st;
}

static xtts_status walk(vm *m, const pk_val *v, char *name, size_t name_len, int depth, xtts_pth_refs *out) {
    if (++m->visits > MAX_VISITS)
        return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl: more than %zu values to walk (shared many times over?)",
                              m->label, MAX_VISITS);
    if (depth > MAX_DEPTH)
        return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl: '%s': values nested deeper than %d levels (or a cycle)",
                              m->label, name, MAX_DEPTH);
    if (v->kind == PK_TENSOR) return xtts_pth_refs_add(out, v->ref, name, v->src->s);
    if (v->kind == PK_STORAGE)
        return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl: '%s' is a bare storage, not a tensor", m->label, name);
    char part[32];
    if (v->kind == PK_LIST || v->kind == PK_TUPLE) {
        for (size_t k = 0; k < v->n; k++) {
            int n = snprintf(part, sizeof part, "%zu", k);
            TRY(walk_child(m, v->items[k], name, name_len, part, (size_t)n, depth, out));
        }
    } else if (v->kind == PK_DICT) {
        for (size_t k = 0; k + 1 < v->n; k += 2) {
            const pk_val *key = v->items[k];
            if (key->kind == PK_STR) {
                if (strlen(key->s) != key->len)
                    return xtts_error_set(m->err, XTTS_EINPUT, "%s: data.pkl: a key under '%s' holds a NUL byte", m->label, name);
                TRY(walk_child(m, v->items[k + 1], name, name_len, key->s, key->len, depth, out));
            } else if (key->kind == PK_INT) {
                int n = snprintf(part, sizeof part, "%lld", (long long)key->i);
                TRY(walk_child(m, v->items[k + 1], name, name_len, part, (size_t)n, depth, out));
            }
        }
    }
    return XTTS_OK;
}

static void vm_free(vm *m) {
    while (m->blocks) {
        arena_block *next = m->blocks->next;
        free(m->blocks);
        m->blocks = next;
    }
    free(m->stack);
    free(m->marks);
    free(m->memo);
}

xtts_status xtts_pth_unpickle(const uint8_t *pkl, size_t len, const char *label, xtts_pth_refs *out, xtts_error *err) {
    memset(out, 0, sizeof *out);
    vm m = {.p = pkl, .len = len, .label = label, .err = err};
    xtts_status st = run(&m);
    if (st == XTTS_OK) {
        char *name = malloc(MAX_NAME);
        if (!name) st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
        else {
            name[0] = '\0';
            st = walk(&m, m.result, name, 0, 0, out);
            if (st == XTTS_ENOMEM) xtts_error_set(err, st, "%s: out of memory", label);
            free(name);
        }
    }
    vm_free(&m);
    if (st != XTTS_OK) xtts_pth_refs_free(out);
    return st;
}

xtts_status xtts_pth_refs_add(xtts_pth_refs *r, const xtts_pth_ref *ref, const char *name, const char *key) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        xtts_pth_ref *refs = realloc(r->refs, cap * sizeof *refs);
        if (!refs) return XTTS_ENOMEM;
        r->refs = refs;
        r->cap = cap;
    }
    xtts_pth_ref *d = &r->refs[r->n];
    *d = *ref;
    d->name = strdup(name);
    d->storage_key = strdup(key ? key : "");
    if (!d->name || !d->storage_key) {
        free(d->name);
        free(d->storage_key);
        return XTTS_ENOMEM;
    }
    r->n++;
    return XTTS_OK;
}

void xtts_pth_refs_free(xtts_pth_refs *r) {
    for (size_t k = 0; k < r->n; k++) {
        free(r->refs[k].name);
        free(r->refs[k].storage_key);
    }
    free(r->refs);
    memset(r, 0, sizeof *r);
}
