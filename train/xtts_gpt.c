/* xtts_gpt.c — XTTS's GPT: the configuration, the tensor table in Coqui's state-dict order,
 * the model's lifecycle, the activation arenas, and AdamW as torch.optim.AdamW computes it.
 * The forward and backward are in train/xtts_gpt_model.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/xtts_gpt_internal.h"

void xtts_gpt_config_defaults(xtts_gpt_config *c) {
    memset(c, 0, sizeof *c);
    c->layers = 30;
    c->dim = 1024;
    c->heads = 16;
    c->n_text_tokens = 6681;
    c->n_audio_tokens = 1026;
    c->start_text_token = 261;
    c->stop_text_token = 0;
    c->start_audio_token = 1024;
    c->stop_audio_token = 1025;
    c->max_text_tokens = 402;
    c->max_audio_tokens = 605;
    c->max_prompt_tokens = 70;
    c->code_stride = 1024;
    c->use_perceiver = 1;
    c->cond_compression = 256;
    c->n_mels = 80;
}

/* latent_encoder.py's normalization(): the group count for a channel count */
static int groupnorm_groups(int channels) {
    int g = channels <= 16 ? 8 : channels <= 64 ? 16 : 32;
    while (channels % g != 0) g /= 2;
    return g;
}

xtts_status xtts_gpt_config_check(const xtts_gpt_config *c, xtts_error *err) {
    if (!c->use_perceiver)
        return xtts_error_set(err, XTTS_EUNSUPPORTED,
                              "xtts-gpt: gpt_use_perceiver_resampler false (XTTS v1) is not supported");
    const struct { const char *name; int v, lo, hi; } r[] = {
        {"gpt_layers", c->layers, 1, 256}, {"gpt_n_model_channels", c->dim, 2, 65536},
        {"gpt_n_heads", c->heads, 1, 1024}, {"gpt_number_text_tokens", c->n_text_tokens, 1, 1 << 24},
        {"gpt_num_audio_tokens", c->n_audio_tokens, 1, 1 << 24},
        {"gpt_start_text_token", c->start_text_token, 0, c->n_text_tokens - 1},
        {"gpt_stop_text_token", c->stop_text_token, 0, c->n_text_tokens - 1},
        {"gpt_start_audio_token", c->start_audio_token, 0, c->n_audio_tokens - 1},
        {"gpt_stop_audio_token", c->stop_audio_token, 0, c->n_audio_tokens - 1},
        {"gpt_max_text_tokens", c->max_text_tokens, 1, 1 << 20},
        {"gpt_max_audio_tokens", c->max_audio_tokens, 1, 1 << 20},
        {"gpt_max_prompt_tokens", c->max_prompt_tokens, 0, 1 << 20},
        {"gpt_code_stride_len", c->code_stride, 1, 1 << 24}, {"cond_compression", c->cond_compression, 1, 1 << 24},
        {"n_mels", c->n_mels, 1, 4096},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].v < r[i].lo || r[i].v > r[i].hi)
            return xtts_error_set(err, XTTS_EUSAGE, "xtts-gpt: %s = %d is out of [%d, %d]", r[i].name, r[i].v,
                                  r[i].lo, r[i].hi);
    if (c->dim % c->heads != 0)
        return xtts_error_set(err, XTTS_EUSAGE, "xtts-gpt: gpt_n_model_channels %d is not a multiple of gpt_n_heads %d",
                              c->dim, c->heads);
    if (groupnorm_groups(c->dim) <= 2)
        return xtts_error_set(err, XTTS_EUSAGE, "xtts-gpt: gpt_n_model_channels %d gives %d group-norm groups (> 2 needed)",
                              c->dim, groupnorm_groups(c->dim));
    return XTTS_OK;
}

enum { T_DECAY = 1, T_CONV1D = 2 };

/* Appends a tensor (Coqui's shape: up to 3 sizes, 0 for absent). */
static int add_tensor(xtts_gpt *m, int flags, int64_t s0, int64_t s1, int64_t s2, const char *fmt, ...) {
    if (m->nt == m->cap_t) {
        size_t cap = m->cap_t ? 2 * m->cap_t : 256;
        xtts_gpt_tensor *t = realloc(m->t, cap * sizeof *t);
        if (!t) return -1;
        m->t = t;
        char(*n)[XTTS_GPT_NAME_MAX] = realloc(m->names, cap * sizeof *n);
        if (!n) return -1;
        m->names = n;
        m->cap_t = cap;
    }
    xtts_gpt_tensor *t = &m->t[m->nt];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->names[m->nt], XTTS_GPT_NAME_MAX, fmt, ap);
    va_end(ap);
    memset(t, 0, sizeof *t);
    t->shape[0] = s0, t->shape[1] = s1, t->shape[2] = s2;
    t->ndim = s2 ? 3 : s1 ? 2 : 1;
    t->numel = (size_t)s0 * (size_t)(s1 ? s1 : 1) * (size_t)(s2 ? s2 : 1);
    t->offset = m->nparams;
    t->hf_conv1d = (flags & T_CONV1D) != 0;
    t->decay = (flags & T_DECAY) != 0;
    m->nparams += t->numel;
    m->nt++;
    return 0;
}

/* The conditioning encoder's and GPT-2's tensors */
static int add_encoder_and_gpt(xtts_gpt *m) {
    const xtts_gpt_config *c = &m->c;
    int64_t D = c->dim, bad = 0;
    m->ix_ce = m->nt;
    bad |= add_tensor(m, T_DECAY, D, c->n_mels, 1, "conditioning_encoder.init.weight");
    bad |= add_tensor(m, 0, D, 0, 0, "conditioning_encoder.init.bias");
    for (int k = 0; k < XTTS_GPT_COND_BLOCKS; k++) {
        bad |= add_tensor(m, 0, D, 0, 0, "conditioning_encoder.attn.%d.norm.weight", k);
        bad |= add_tensor(m, 0, D, 0, 0, "conditioning_encoder.attn.%d.norm.bias", k);
        bad |= add_tensor(m, T_DECAY, 3 * D, D, 1, "conditioning_encoder.attn.%d.qkv.weight", k);
        bad |= add_tensor(m, 0, 3 * D, 0, 0, "conditioning_encoder.attn.%d.qkv.bias", k);
        bad |= add_tensor(m, T_DECAY, D, D, 1, "conditioning_encoder.attn.%d.proj_out.weight", k);
        bad |= add_tensor(m, 0, D, 0, 0, "conditioning_encoder.attn.%d.proj_out.bias", k);
    }
    m->ix_temb = m->nt;
    bad |= add_tensor(m, 0, c->n_text_tokens, D, 0, "text_embedding.weight");
    m->ix_memb = m->nt;
    bad |= add_tensor(m, 0, c->n_audio_tokens, D, 0, "mel_embedding.weight");
    m->ix_gpt = m->nt;
    for (int l = 0; l < c->layers; l++) {
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.ln_1.weight", l);
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.ln_1.bias", l);
        bad |= add_tensor(m, T_DECAY | T_CONV1D, D, 3 * D, 0, "gpt.h.%d.attn.c_attn.weight", l);
        bad |= add_tensor(m, 0, 3 * D, 0, 0, "gpt.h.%d.attn.c_attn.bias", l);
        bad |= add_tensor(m, T_DECAY | T_CONV1D, D, D, 0, "gpt.h.%d.attn.c_proj.weight", l);
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.attn.c_proj.bias", l);
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.ln_2.weight", l);
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.ln_2.bias", l);
        bad |= add_tensor(m, T_DECAY | T_CONV1D, D, 4 * D, 0, "gpt.h.%d.mlp.c_fc.weight", l);
        bad |= add_tensor(m, 0, 4 * D, 0, 0, "gpt.h.%d.mlp.c_fc.bias", l);
        bad |= add_tensor(m, T_DECAY | T_CONV1D, 4 * D, D, 0, "gpt.h.%d.mlp.c_proj.weight", l);
        bad |= add_tensor(m, 0, D, 0, 0, "gpt.h.%d.mlp.c_proj.bias", l);
    }
    m->ix_lnf = m->nt;
    bad |= add_tensor(m, 0, D, 0, 0, "gpt.ln_f.weight");
    bad |= add_tensor(m, 0, D, 0, 0, "gpt.ln_f.bias");
    return bad ? -1 : 0;
}

/* Positions, final norm, heads and the perceiver's tensors */
static int add_heads_and_perceiver(xtts_gpt *m) {
    const xtts_gpt_config *c = &m->c;
    int64_t D = c->dim, PDI = XTTS_GPT_PERC_HEADS * XTTS_GPT_PERC_DIM_HEAD, bad = 0;
    m->ix_mpos = m->nt; /* GPT: max_mel_tokens + 2 + max_conditioning_inputs (1) */
    bad |= add_tensor(m, 0, c->max_audio_tokens + 3, D, 0, "mel_pos_embedding.emb.weight");
    m->ix_tpos = m->nt;
    bad |= add_tensor(m, 0, c->max_text_tokens + 2, D, 0, "text_pos_embedding.emb.weight");
    m->ix_fin = m->nt;
    bad |= add_tensor(m, 0, D, 0, 0, "final_norm.weight");
    bad |= add_tensor(m, 0, D, 0, 0, "final_norm.bias");
    m->ix_thead = m->nt;
    bad |= add_tensor(m, T_DECAY, c->n_text_tokens, D, 0, "text_head.weight");
    bad |= add_tensor(m, 0, c->n_text_tokens, 0, 0, "text_head.bias");
    m->ix_mhead = m->nt;
    bad |= add_tensor(m, T_DECAY, c->n_audio_tokens, D, 0, "mel_head.weight");
    bad |= add_tensor(m, 0, c->n_audio_tokens, 0, 0, "mel_head.bias");
    m->ix_perc = m->nt;
    bad |= add_tensor(m, T_DECAY, XTTS_GPT_LATENTS, D, 0, "conditioning_perceiver.latents");
    for (int i = 0; i < XTTS_GPT_PERC_DEPTH; i++) {
        bad |= add_tensor(m, T_DECAY, PDI, D, 0, "conditioning_perceiver.layers.%d.0.to_q.weight", i);
        bad |= add_tensor(m, T_DECAY, 2 * PDI, D, 0, "conditioning_perceiver.layers.%d.0.to_kv.weight", i);
        bad |= add_tensor(m, T_DECAY, D, PDI, 0, "conditioning_perceiver.layers.%d.0.to_out.weight", i);
        bad |= add_tensor(m, T_DECAY, 2 * m->I, D, 0, "conditioning_perceiver.layers.%d.1.0.weight", i);
        bad |= add_tensor(m, 0, 2 * m->I, 0, 0, "conditioning_perceiver.layers.%d.1.0.bias", i);
        bad |= add_tensor(m, T_DECAY, D, m->I, 0, "conditioning_perceiver.layers.%d.1.2.weight", i);
        bad |= add_tensor(m, 0, D, 0, 0, "conditioning_perceiver.layers.%d.1.2.bias", i);
    }
    bad |= add_tensor(m, T_DECAY, D, 0, 0, "conditioning_perceiver.norm.gamma");
    return bad ? -1 : 0;
}

xtts_status xtts_gpt_new(const xtts_gpt_config *c, xtts_gpt **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_gpt_config_check(c, err);
    if (st) return st;
    xtts_gpt *m = calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory");
    m->c = *c;
    m->G = groupnorm_groups(c->dim);
    m->I = (int)(c->dim * 4 * 2 / 3); /* FeedForward: int(dim * mult * 2 / 3) */
    if (add_encoder_and_gpt(m) || add_heads_and_perceiver(m)) goto nomem;
    for (size_t i = 0; i < m->nt; i++) m->t[i].name = m->names[i];
    m->params = calloc(m->nparams, sizeof(float));
    m->grads = calloc(m->nparams, sizeof(float));
    if (!m->params || !m->grads) goto nomem;
    *out = m;
    return XTTS_OK;
nomem:
    xtts_gpt_delete(m);
    return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory for the parameters");
}

void xtts_gpt_delete(xtts_gpt *m) {
    if (!m) return;
    free(m->t);
    free(m->names);
    free(m->params);
    free(m->grads);
    free(m->arena);
    free(m->darena);
    free(m->layer_ptrs);
    free(m->text_in);
    free(m->key_mask);
    free(m);
}

size_t xtts_gpt_num_tensors(const xtts_gpt *m) { return m->nt; }
const xtts_gpt_tensor *xtts_gpt_tensor_at(const xtts_gpt *m, size_t i) { return i < m->nt ? &m->t[i] : NULL; }
size_t xtts_gpt_num_params(const xtts_gpt *m) { return m->nparams; }
float *xtts_gpt_params(xtts_gpt *m) { return m->params; }
float *xtts_gpt_grads(xtts_gpt *m) { return m->grads; }

long xtts_gpt_find_tensor(const xtts_gpt *m, const char *key) {
    for (size_t i = 0; i < m->nt; i++)
        if (strcmp(m->names[i], key) == 0) return (long)i;
    return -1;
}

void xtts_gpt_set_tensor(xtts_gpt *m, size_t i, const float *coqui) {
    const xtts_gpt_tensor *t = &m->t[i];
    float *w = m->params + t->offset;
    if (!t->hf_conv1d) {
        memcpy(w, coqui, t->numel * sizeof(float));
        return;
    }
    size_t in = (size_t)t->shape[0], out = (size_t)t->shape[1]; /* (in, out) -> (out, in) */
    for (size_t r = 0; r < in; r++)
        for (size_t o = 0; o < out; o++) w[o * in + r] = coqui[r * out + o];
}

void xtts_gpt_get_tensor(const xtts_gpt *m, size_t i, int grad, float *coqui) {
    const xtts_gpt_tensor *t = &m->t[i];
    const float *w = (grad ? m->grads : m->params) + t->offset;
    if (!t->hf_conv1d) {
        memcpy(coqui, w, t->numel * sizeof(float));
        return;
    }
    size_t in = (size_t)t->shape[0], out = (size_t)t->shape[1];
    for (size_t r = 0; r < in; r++)
        for (size_t o = 0; o < out; o++) coqui[r * out + o] = w[o * in + r];
}

void xtts_gpt_zero_grad(xtts_gpt *m) { memset(m->grads, 0, m->nparams * sizeof(float)); }

void xtts_gpt_adamw(xtts_gpt *m, float *m1, float *m2, long t, const xtts_gpt_recipe *r, float lr) {
    float beta1 = r->beta1, beta2 = r->beta2, eps = r->eps, weight_decay = r->weight_decay;
    double bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - pow(beta2, (double)t);
    float step = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2);
    for (size_t i = 0; i < m->nt; i++) {
        const xtts_gpt_tensor *tt = &m->t[i];
        float keep = tt->decay || !r->wd_only_on_weights ? 1.0f - lr * weight_decay : 1.0f;
        float *p = m->params + tt->offset, *g = m->grads + tt->offset;
        float *a = m1 + tt->offset, *v = m2 + tt->offset;
#pragma omp parallel for schedule(static) if (tt->numel > 65536)
        for (size_t j = 0; j < tt->numel; j++) {
            p[j] *= keep;
            a[j] = a[j] * beta1 + g[j] * (1.0f - beta1);
            v[j] = v[j] * beta2 + g[j] * g[j] * (1.0f - beta2);
            p[j] -= step * (a[j] / (sqrtf(v[j]) / bc2_sqrt + eps));
        }
    }
}
