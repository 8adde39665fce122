/* torch_dvae.c — DiscreteVAE encoder weights and mel norms from model files (torch_dvae.h). */
#include "formats/model/torch_dvae.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FIRST_KEY "encoder.0.0.weight"

/* The prefix before FIRST_KEY ("" for a flat state dict); exactly one tensor may end so. */
static xtts_status find_prefix(const xtts_pth *f, char *prefix, size_t cap, xtts_error *err) {
    const char *label = xtts_pth_label(f);
    size_t found = 0, key_len = strlen(FIRST_KEY);
    for (size_t i = 0; i < xtts_pth_count(f); i++) {
        const char *name = xtts_pth_tensor_at(f, i)->name;
        size_t n = strlen(name);
        if (n < key_len || strcmp(name + n - key_len, FIRST_KEY) != 0) continue;
        if (n > key_len && name[n - key_len - 1] != '.') continue;
        if (found++)
            return xtts_error_set(err, XTTS_EINPUT, "%s: two DiscreteVAE encoders (keys '%s' and '%s" FIRST_KEY "')", label,
                                  name, prefix);
        if (n - key_len >= cap) return xtts_error_set(err, XTTS_EINPUT, "%s: key '%s': prefix too long", label, name);
        memcpy(prefix, name, n - key_len);
        prefix[n - key_len] = '\0';
    }
    if (!found)
        return xtts_error_set(err, XTTS_EINPUT, "%s: key '%s' missing: not a DiscreteVAE state dict (XTTS's dvae.pth)", label,
                              FIRST_KEY);
    return XTTS_OK;
}

/* One conv's weight (cout, cin, k) and bias (cout) under prefix+name. */
static xtts_status conv(const xtts_pth *f, const char *prefix, const char *name, int cout, int cin, int k,
                        const float **wt, const float **bias, xtts_error *err) {
    char key[512];
    const xtts_pth_tensor *t;
    int64_t ws[3] = {cout, cin, k}, bs[1] = {cout};
    snprintf(key, sizeof key, "%s%s.weight", prefix, name);
    xtts_status st = xtts_pth_expect(f, key, 3, ws, &t, err);
    if (st != XTTS_OK) return st;
    *wt = t->data;
    snprintf(key, sizeof key, "%s%s.bias", prefix, name);
    st = xtts_pth_expect(f, key, 1, bs, &t, err);
    if (st != XTTS_OK) return st;
    *bias = t->data;
    return XTTS_OK;
}

/* The sizes, from the first conv and the codebook. */
static xtts_status read_sizes(const xtts_pth *f, const char *prefix, xtts_dvae_config *c, xtts_error *err) {
    char key[512];
    const char *label = xtts_pth_label(f);
    snprintf(key, sizeof key, "%s" FIRST_KEY, prefix);
    const xtts_pth_tensor *w0 = xtts_pth_find(f, key);
    snprintf(key, sizeof key, "%scodebook.embed", prefix);
    const xtts_pth_tensor *e = xtts_pth_find(f, key);
    if (!e) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: key '%s' missing", label, key);
    if (w0->ndim != 3 || w0->shape[2] != 3 || w0->shape[0] > 1 << 20 || w0->shape[1] > 1 << 20)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: key '%s" FIRST_KEY "' is not a kernel-3 Conv1d weight", label, prefix);
    if (e->ndim != 2 || e->shape[0] > 1 << 20 || e->shape[1] > 65536)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: key '%s' is not a (codebook_dim, tokens) codebook of at most 65536 entries",
                              label, key);
    c->hidden = (int)w0->shape[0];
    c->channels = (int)w0->shape[1];
    c->codebook_dim = (int)e->shape[0];
    c->num_tokens = (int)e->shape[1];
    return XTTS_OK;
}

#define TRY(expr)                               \
    do {                                        \
        xtts_status try_st_ = (expr);           \
        if (try_st_ != XTTS_OK) return try_st_; \
    } while (0)

xtts_status xtts_dvae_weights_from_pth(const xtts_pth *f, xtts_dvae_weights *w, xtts_error *err) {
    memset(w, 0, sizeof *w);
    char prefix[256], key[512];
    TRY(find_prefix(f, prefix, sizeof prefix, err));
    TRY(read_sizes(f, prefix, &w->cfg, err));
    int ch = w->cfg.channels, hid = w->cfg.hidden, inner = 2 * hid, dim = w->cfg.codebook_dim;
    TRY(conv(f, prefix, "encoder.0.0", hid, ch, 3, &w->conv0_w, &w->conv0_b, err));
    TRY(conv(f, prefix, "encoder.1.0", inner, hid, 3, &w->conv1_w, &w->conv1_b, err));
    for (int b = 0; b < XTTS_DVAE_RES_BLOCKS; b++)
        for (int k = 0; k < 3; k++) {
            snprintf(key, sizeof key, "encoder.%d.net.%d", 2 + b, 2 * k);
            TRY(conv(f, prefix, key, inner, inner, k == 2 ? 1 : 3, &w->res_w[b][k], &w->res_b[b][k], err));
        }
    snprintf(key, sizeof key, "encoder.%d", 2 + XTTS_DVAE_RES_BLOCKS);
    TRY(conv(f, prefix, key, dim, inner, 1, &w->proj_w, &w->proj_b, err));
    snprintf(key, sizeof key, "%scodebook.embed", prefix);
    w->codebook = xtts_pth_find(f, key)->data;
    return XTTS_OK;
}

xtts_status xtts_mel_norms_from_pth(const xtts_pth *f, int n_mels, const float **norms, xtts_error *err) {
    *norms = NULL;
    const char *label = xtts_pth_label(f);
    const xtts_pth_tensor *t = xtts_pth_find(f, "");
    if (!t)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: not a single tensor (torch.save(tensor), as mel_stats.pth) but %zu named ones",
                              label, xtts_pth_count(f));
    if (t->ndim != 1 || t->shape[0] != n_mels)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: %zu values in %d dimensions, %d mel norms expected", label, t->numel,
                              t->ndim, n_mels);
    for (int i = 0; i < n_mels; i++)
        if (!isfinite(t->data[i]) || t->data[i] <= 0.0f)
            return xtts_error_set(err, XTTS_EINPUT, "%s: mel norm %d is %g, not a positive number", label, i, (double)t->data[i]);
    *norms = t->data;
    return XTTS_OK;
}
