/* xtts_gpt_acts.c — XTTS's GPT: the batch as GPT.forward rebuilds it (start and stop tokens,
 * Coqui's padding of the codes with the stop token, targets with -1 where ignored, the attention
 * mask) and the activation arenas laid out for its shape. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "train/xtts_gpt_internal.h"

/* the next n floats of an arena (NULL while counting) */
static float *take(float *base, size_t *off, size_t n) {
    float *p = base ? base + *off : NULL;
    *off += n;
    return p;
}

/* Lays out (or, with base NULL, counts) the forward activations. */
static size_t layout_acts(xtts_gpt *m, float *base) {
    xtts_gpt_acts *a = &m->a;
    size_t o = 0, B = m->B, S = m->S, T = m->T, D = m->c.dim, H = m->c.heads, P = XTTS_GPT_LATENTS;
    size_t PDI = XTTS_GPT_PERC_HEADS * XTTS_GPT_PERC_DIM_HEAD, I = m->I, L = m->c.layers;
    a->xin = take(base, &o, B * S * m->c.n_mels);
    for (int k = 0; k <= XTTS_GPT_COND_BLOCKS; k++) a->ce_h[k] = take(base, &o, B * S * D);
    for (int k = 0; k < XTTS_GPT_COND_BLOCKS; k++) {
        a->ce_n[k] = take(base, &o, B * S * D);
        a->ce_mean[k] = take(base, &o, B * m->G);
        a->ce_rstd[k] = take(base, &o, B * m->G);
        a->ce_qkv[k] = take(base, &o, B * S * 3 * D);
        a->ce_att[k] = take(base, &o, B * H * S * S);
        a->ce_a[k] = take(base, &o, B * S * D);
    }
    for (int i = 0; i <= XTTS_GPT_PERC_DEPTH; i++) a->pv_lat[i] = take(base, &o, B * P * D);
    for (int i = 0; i < XTTS_GPT_PERC_DEPTH; i++) {
        a->pv_ctx[i] = take(base, &o, B * (P + S) * D);
        a->pv_q[i] = take(base, &o, B * P * PDI);
        a->pv_kv[i] = take(base, &o, B * (P + S) * 2 * PDI);
        a->pv_att[i] = take(base, &o, B * XTTS_GPT_PERC_HEADS * P * (P + S));
        a->pv_o[i] = take(base, &o, B * P * PDI);
        a->pv_mid[i] = take(base, &o, B * P * D);
        a->pv_f1[i] = take(base, &o, B * P * 2 * I);
        a->pv_g[i] = take(base, &o, B * P * I);
    }
    a->pv_inv = take(base, &o, B * P);
    a->cond = take(base, &o, B * P * D);
    for (size_t l = 0; l <= L; l++) {
        a->x[l] = take(base, &o, B * T * D);
        if (l == L) break;
        a->ln1[l] = take(base, &o, B * T * D);
        a->ln1_m[l] = take(base, &o, B * T);
        a->ln1_r[l] = take(base, &o, B * T);
        a->qkv[l] = take(base, &o, B * T * 3 * D);
        a->att[l] = take(base, &o, B * H * T * T);
        a->atty[l] = take(base, &o, B * T * D);
        a->xmid[l] = take(base, &o, B * T * D);
        a->ln2[l] = take(base, &o, B * T * D);
        a->ln2_m[l] = take(base, &o, B * T);
        a->ln2_r[l] = take(base, &o, B * T);
        a->fc[l] = take(base, &o, B * T * 4 * D);
        a->fcg[l] = take(base, &o, B * T * 4 * D);
    }
    a->lnf = take(base, &o, B * T * D);
    a->lnf_m = take(base, &o, B * T);
    a->lnf_r = take(base, &o, B * T);
    a->fn = take(base, &o, B * (m->Tt + m->Tm) * D);
    a->fn_m = take(base, &o, B * (m->Tt + m->Tm));
    a->fn_r = take(base, &o, B * (m->Tt + m->Tm));
    a->lg_text = take(base, &o, B * m->Tt * m->c.n_text_tokens);
    a->lg_mel = take(base, &o, B * m->Tm * m->c.n_audio_tokens);
    /* the attentions' scratch: 6 planes of (head size, keys) and a row of keys per thread */
    size_t hs = D / H, kmax = T > P + S ? T : P + S, hmax = hs > XTTS_GPT_PERC_DIM_HEAD ? hs : XTTS_GPT_PERC_DIM_HEAD;
    a->mha_scratch = take(base, &o, (size_t)m->mha_threads * (6 * hmax * kmax + kmax));
    return o;
}

/* Lays out (or counts) the gradients of the activations. */
static size_t layout_dacts(xtts_gpt *m, float *base) {
    xtts_gpt_dacts *d = &m->d;
    size_t o = 0, B = m->B, S = m->S, T = m->T, D = m->c.dim, P = XTTS_GPT_LATENTS;
    size_t PDI = XTTS_GPT_PERC_HEADS * XTTS_GPT_PERC_DIM_HEAD, I = m->I;
    d->lg_text = take(base, &o, B * m->Tt * m->c.n_text_tokens);
    d->lg_mel = take(base, &o, B * m->Tm * m->c.n_audio_tokens);
    d->fn = take(base, &o, B * (m->Tt + m->Tm) * D);
    d->lnf = take(base, &o, B * T * D);
    d->x = take(base, &o, B * T * D);
    d->ln = take(base, &o, B * T * D);
    d->qkv = take(base, &o, B * T * 3 * D);
    d->atty = take(base, &o, B * T * D);
    d->fc = take(base, &o, B * T * 4 * D);
    d->fcg = take(base, &o, B * T * 4 * D);
    d->cond = take(base, &o, B * P * D);
    d->lat = take(base, &o, B * P * D);
    d->mid = take(base, &o, B * P * D);
    d->f1 = take(base, &o, B * P * 2 * I);
    d->g = take(base, &o, B * P * I);
    d->o = take(base, &o, B * P * PDI);
    d->q = take(base, &o, B * P * PDI);
    d->kv = take(base, &o, B * (P + S) * 2 * PDI);
    d->ctx = take(base, &o, B * (P + S) * D);
    d->h = take(base, &o, B * S * D);
    d->n = take(base, &o, B * S * D);
    d->ce_qkv = take(base, &o, B * S * 3 * D);
    d->ce_a = take(base, &o, B * S * D);
    d->xin = take(base, &o, B * S * m->c.n_mels);
    return o;
}

xtts_status xtts_gpt_acts_ensure(xtts_gpt *m, xtts_error *err) {
    if (m->arena && m->shape_B == m->B && m->shape_S == m->S && m->shape_Tt == m->Tt && m->shape_Tm == m->Tm &&
        m->mha_threads == omp_get_max_threads())
        return XTTS_OK;
    m->mha_threads = omp_get_max_threads();
    size_t L = m->c.layers;
    if (!m->layer_ptrs) {
        m->layer_ptrs = calloc(13 * (L + 1), sizeof(float *));
        if (!m->layer_ptrs) return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory");
        float ***lists[] = {&m->a.x, &m->a.ln1, &m->a.ln1_m, &m->a.ln1_r, &m->a.qkv, &m->a.att, &m->a.atty,
                            &m->a.xmid, &m->a.ln2, &m->a.ln2_m, &m->a.ln2_r, &m->a.fc, &m->a.fcg};
        for (size_t i = 0; i < 13; i++) *lists[i] = m->layer_ptrs + i * (L + 1);
    }
    size_t n = layout_acts(m, NULL), dn = layout_dacts(m, NULL);
    free(m->arena);
    free(m->darena);
    m->arena = malloc(n * sizeof(float));
    m->darena = malloc(dn * sizeof(float));
    if (!m->arena || !m->darena) {
        free(m->arena), free(m->darena);
        m->arena = m->darena = NULL;
        return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory for the activations (%zu MB)",
                              (n + dn) * sizeof(float) >> 20);
    }
    layout_acts(m, m->arena);
    layout_dacts(m, m->darena);
    m->arena_n = n, m->darena_n = dn;
    m->shape_B = m->B, m->shape_S = m->S, m->shape_Tt = m->Tt, m->shape_Tm = m->Tm;
    return XTTS_OK;
}
