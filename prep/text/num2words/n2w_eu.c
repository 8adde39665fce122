/* n2w_eu.c — num2words' shared algorithm (n2w_eu_internal.h). splitnum builds a small tree of
 * (words, value) pairs and clean() folds it left to right with the language's merge; the
 * order of the folds decides the words, so it is kept exactly. */
#include "prep/text/num2words/n2w_eu_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N2W_NODES 256
#define N2W_TEXT 16384

typedef struct {
    int leaf;
    int64_t num;
    const char *text;
    int nk;
    int k[4];
} n2w_node;

typedef struct {
    n2w_node n[N2W_NODES];
    int nn;
    char text[N2W_TEXT];
    size_t tl;
    int failed;
    const n2w_eu *L;
} n2w_tree;

static int node_new(n2w_tree *t) {
    if (t->nn >= N2W_NODES) { t->failed = 1; return 0; }
    memset(&t->n[t->nn], 0, sizeof t->n[0]);
    return t->nn++;
}

static const char *text_keep(n2w_tree *t, const char *s, size_t len) {
    if (t->tl + len + 1 > N2W_TEXT) { t->failed = 1; return ""; }
    char *d = t->text + t->tl;
    memcpy(d, s, len);
    d[len] = 0;
    t->tl += len + 1;
    return d;
}

static int leaf_new(n2w_tree *t, const char *text, int64_t num) {
    int i = node_new(t);
    t->n[i].leaf = 1;
    t->n[i].text = text;
    t->n[i].num = num;
    return i;
}

static void list_add(n2w_tree *t, int list, int kid) {
    if (t->n[list].nk >= 4) { t->failed = 1; return; }
    t->n[list].k[t->n[list].nk++] = kid;
}

/* The card of value v, or the first card not above v when exact is 0; NULL if none. */
static const n2w_card *card_find(const n2w_eu *L, int64_t v, int exact) {
    for (size_t r = 0; r < sizeof L->cards / sizeof L->cards[0]; r++)
        for (size_t i = 0; i < L->cards[r].n; i++) {
            const n2w_card *c = &L->cards[r].cards[i];
            if (exact ? c->num == v : c->num <= v) return c;
        }
    return NULL;
}

const char *xtts_n2w_eu_word(const n2w_eu *L, int64_t v) {
    const n2w_card *c = card_find(L, v, 1);
    return c ? c->word : "";
}

/* splitnum(value) -> list node */
static int splitnum(n2w_tree *t, int64_t value) {
    const n2w_eu *L = t->L;
    const n2w_card *card = card_find(L, value, 0);
    if (card && !t->failed) {
        int64_t elem = card->num;
        int out = node_new(t);
        int64_t div, mod;
        if (value == 0) { div = 1; mod = 0; }
        else { div = value / elem; mod = value % elem; }
        if (div == 1) list_add(t, out, leaf_new(t, xtts_n2w_eu_word(L, 1), 1));
        else list_add(t, out, splitnum(t, div));
        list_add(t, out, leaf_new(t, card->word, elem));
        if (mod) list_add(t, out, splitnum(t, mod));
        return out;
    }
    t->failed = 1;
    return 0;
}

static int merge_leaves(n2w_tree *t, int a, int b) {
    xtts_sb o = {0};
    int64_t num = 0;
    t->L->merge(t->n[a].text, t->n[a].num, t->n[b].text, t->n[b].num, &o, &num);
    if (o.failed) { t->failed = 1; xtts_sb_free(&o); return leaf_new(t, "", 0); }
    const char *s = text_keep(t, o.s ? o.s : "", o.len);
    xtts_sb_free(&o);
    return leaf_new(t, s, num);
}

static int clean(n2w_tree *t, int val, int depth) {
    if (depth > 64) { t->failed = 1; return val; }
    while (!t->failed && t->n[val].nk != 1) {
        n2w_node *v = &t->n[val];
        if (v->nk < 2) { t->failed = 1; break; }
        int left = v->k[0], right = v->k[1];
        int out = node_new(t);
        v = &t->n[val];
        if (t->n[left].leaf && t->n[right].leaf) {
            list_add(t, out, merge_leaves(t, left, right));
            v = &t->n[val];
            if (v->nk > 2) {
                int rest = node_new(t);
                v = &t->n[val];
                for (int i = 2; i < v->nk; i++) list_add(t, rest, v->k[i]);
                list_add(t, out, rest);
            }
        } else {
            for (int i = 0; i < t->n[val].nk; i++) {
                int e = t->n[val].k[i];
                if (!t->n[e].leaf) {
                    if (t->n[e].nk == 1) list_add(t, out, t->n[e].k[0]);
                    else list_add(t, out, clean(t, e, depth + 1));
                } else list_add(t, out, e);
            }
        }
        val = out;
    }
    return t->failed ? val : t->n[val].k[0];
}

int xtts_n2w_eu_cardinal(const n2w_eu *L, int64_t n, xtts_sb *out) {
    if (n < 0) {
        if (n == INT64_MIN || !L->negword) return -1;
        xtts_sb pos = {0};
        int rc = xtts_n2w_eu_cardinal(L, -n, &pos);
        if (!rc && !pos.failed) {
            xtts_sb_puts(out, L->negword);
            xtts_sb_putc(out, ' ');
            xtts_sb_puts(out, pos.s);
        } else rc = -1;
        xtts_sb_free(&pos);
        return rc;
    }
    /* 28 KiB, not cleared: node_new clears each node it hands out, text_keep writes before
     * anything reads (clearing it all was a sixth of a tokenize run with many numbers) */
    n2w_tree *t = malloc(sizeof *t);
    if (!t) { out->failed = 1; return -1; }
    t->nn = 0;
    t->tl = 0;
    t->failed = 0;
    t->L = L;
    int v = splitnum(t, n);
    int r = t->failed ? v : clean(t, v, 0);
    int rc = -1;
    if (!t->failed && t->n[r].leaf) {
        xtts_sb_puts(out, t->n[r].text);
        rc = 0;
    }
    free(t);
    return rc;
}

int xtts_n2w_endswith(const char *s, size_t len, const char *suffix) {
    size_t k = strlen(suffix);
    return len >= k && !memcmp(s + len - k, suffix, k);
}

/* The exponent of Decimal(repr).as_tuple(): -(digits after the point) + the e exponent. */
static int repr_exponent(const char *repr) {
    const char *dot = strchr(repr, '.');
    const char *e = strpbrk(repr, "eE");
    int frac = 0;
    if (dot) {
        const char *end = e ? e : repr + strlen(repr);
        frac = (int)(end - dot - 1);
    }
    int ex = e ? atoi(e + 1) : 0;
    return ex - frac;
}

int xtts_n2w_float2tuple(const char *repr, int64_t *pre, char *post, int *precision, int *is_integer) {
    char *end;
    double v = strtod(repr, &end);
    if (end == repr || !isfinite(v) || fabs(v) >= 9.2e18) return -1;
    double ip = trunc(v);
    *is_integer = ip == v;
    *pre = (int64_t)ip;
    int p = abs(repr_exponent(repr));
    if (p > 22) return -1;
    *precision = p;
    double post_f = fabs(v - ip) * pow(10.0, p);
    double r = nearbyint(post_f);
    double pv = fabs(r - post_f) < 0.01 ? r : floor(post_f);
    if (pv >= 9.2e18) return -1;
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)pv);
    int nd = (int)strlen(digits);
    int z = p > nd ? p - nd : 0;
    if (p > 31) return -1;
    memset(post, '0', (size_t)z);
    for (int i = z; i < p; i++) post[i] = digits[i - z];
    post[p] = 0;
    return 0;
}

int xtts_n2w_currency_parts(const char *repr, int64_t *units, int64_t *cents) {
    char *end;
    double v = strtod(repr, &end);
    if (end == repr || !isfinite(v) || fabs(v) >= 9.2e18) return -1;
    char buf[512];
    snprintf(buf, sizeof buf, "%.200f", fabs(v)); /* glibc prints the exact binary value */
    char *dot = strchr(buf, '.');
    if (!dot) return -1;
    long long u = strtoll(buf, NULL, 10);
    int c = (dot[1] - '0') * 10 + (dot[2] - '0');
    if (dot[3] >= '5') c++;
    if (c == 100) { u++; c = 0; }
    *units = u;
    *cents = c;
    return 0;
}

int xtts_n2w_generic_float(const char *repr, const char *pointword, int (*cardinal)(int64_t, xtts_sb *), xtts_sb *out) {
    int64_t pre;
    char post[32];
    int prec, isint;
    if (xtts_n2w_float2tuple(repr, &pre, post, &prec, &isint)) return -1;
    if (pre < 0) return -1;
    xtts_sb o = {0};
    int rc = cardinal(pre, &o);
    if (!isint && !rc) {
        if (prec) {
            xtts_sb_putc(&o, ' ');
            xtts_sb_puts(&o, pointword);
        }
        for (int i = 0; i < prec && !rc; i++) {
            xtts_sb_putc(&o, ' ');
            rc = cardinal(post[i] - '0', &o);
        }
    }
    int failed = o.failed;
    if (!rc && !failed) xtts_sb_putn(out, o.s ? o.s : "", o.len);
    else if (failed) out->failed = 1;
    xtts_sb_free(&o);
    return rc || failed ? -1 : 0;
}

int xtts_n2w_generic_currency(const char *repr, int (*cardinal)(int64_t, xtts_sb *), const char *const forms[4],
                              const char *separator, xtts_sb *out) {
    int64_t u, c;
    if (xtts_n2w_currency_parts(repr, &u, &c)) return -1;
    xtts_sb o = {0};
    int rc = cardinal(u, &o);
    xtts_sb_putc(&o, ' ');
    xtts_sb_puts(&o, u == 1 ? forms[0] : forms[1]);
    xtts_sb_puts(&o, separator);
    xtts_sb_putc(&o, ' ');
    rc |= cardinal(c, &o);
    xtts_sb_putc(&o, ' ');
    xtts_sb_puts(&o, c == 1 ? forms[2] : forms[3]);
    int failed = o.failed;
    if (!rc && !failed) xtts_sb_putn(out, o.s, o.len);
    else if (failed) out->failed = 1;
    xtts_sb_free(&o);
    return rc || failed ? -1 : 0;
}
