/* xtts_gpt_model.c — XTTS's GPT forward and backward, step by step as GPT.forward runs them
 * (gpt.py): the batch's inputs and targets, the conditioning encoder, the perceiver resampler,
 * the embeddings, the GPT-2 stack, the norms and heads, the two cross-entropies; then the same
 * steps backwards. The layers are those of train/model_internal.h (train/cpu/: matmul,
 * layernorm, GELU, and the GPT's own kinds groupnorm, mha, crossentropy, perceiver). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/model_internal.h"
#include "train/xtts_gpt_internal.h"

#define PDI (XTTS_GPT_PERC_HEADS * XTTS_GPT_PERC_DIM_HEAD)

static void zero(float *p, size_t n) { memset(p, 0, n * sizeof(float)); }

/* ---- the batch ------------------------------------------------------------------------- */

/* Checks a batch's ids and lengths and finds its shape (Tt, Tm, T). */
static xtts_status batch_shape(xtts_gpt *m, const xtts_gpt_batch *bt, xtts_error *err) {
    const xtts_gpt_config *c = &m->c;
    int lmax = 0, mmax = 0;
    if (bt->B < 1 || bt->cond_frames < 1)
        return xtts_error_set(err, XTTS_EINPUT, "xtts-gpt: empty batch (%d rows, %d conditioning frames)", bt->B,
                              bt->cond_frames);
    for (int b = 0; b < bt->B; b++) {
        int n = bt->text_lengths[b];
        long codes = ((long)bt->wav_lengths[b] + c->code_stride - 1) / c->code_stride + 3;
        if (n < 1 || n > bt->text_stride || bt->wav_lengths[b] < 1)
            return xtts_error_set(err, XTTS_EINPUT, "xtts-gpt: batch row %d: text length %d, waveform length %d", b,
                                  n, bt->wav_lengths[b]);
        for (int j = 0; j < n; j++)
            if (bt->text[(size_t)b * bt->text_stride + j] < 0 ||
                bt->text[(size_t)b * bt->text_stride + j] >= c->n_text_tokens)
                return xtts_error_set(err, XTTS_EINPUT, "xtts-gpt: batch row %d: text id %d out of [0, %d)", b,
                                      bt->text[(size_t)b * bt->text_stride + j], c->n_text_tokens);
        lmax = n > lmax ? n : lmax;
        mmax = codes > mmax ? (int)codes : mmax;
    }
    m->B = bt->B, m->S = bt->cond_frames, m->Tt = lmax + 2, m->Tm = mmax + 2;
    m->T = XTTS_GPT_LATENTS + m->Tt + m->Tm;
    if (m->Tt > c->max_text_tokens + 2 || m->Tm > c->max_audio_tokens + 3)
        return xtts_error_set(err, XTTS_EINPUT,
                              "xtts-gpt: batch needs %d text and %d code positions, the model has %d and %d", m->Tt,
                              m->Tm, c->max_text_tokens + 2, c->max_audio_tokens + 3);
    return XTTS_OK;
}

/* text inputs [start, ids (padded to the longest), stop], targets [ids, stop, stop] with -1
 * past each row's length + 1; the attention mask keeps positions up to length + 1 (gpt.py) */
static void batch_text(xtts_gpt *m, const xtts_gpt_batch *bt) {
    int Tt = m->Tt, lmax = Tt - 2;
    for (int b = 0; b < m->B; b++) {
        const int32_t *ids = bt->text + (size_t)b * bt->text_stride;
        int32_t *in = m->text_in + (size_t)b * Tt, *tg = m->text_tgt + (size_t)b * Tt;
        uint8_t *mask = m->key_mask + (size_t)b * m->T + XTTS_GPT_LATENTS;
        in[0] = m->c.start_text_token;
        for (int j = 0; j < lmax; j++) in[j + 1] = tg[j] = ids[j];
        in[lmax + 1] = tg[lmax] = tg[lmax + 1] = m->c.stop_text_token;
        for (int j = 0; j < Tt; j++) {
            mask[j] = j <= bt->text_lengths[b];
            if (j > bt->text_lengths[b]) tg[j] = -1;
        }
    }
}

/* codes as GPT.forward pads them: to the longest code length with 0, a stop token appended,
 * the stop token from each row's own length on; inputs [start, codes], targets [codes, stop],
 * -1 past each row's length + 3 + 1; then, in training, the last row's targets over the prompt
 * slice (cond_idxs / cond_compression) are ignored, as Coqui's forward does it */
static void batch_codes(xtts_gpt *m, const xtts_gpt_batch *bt) {
    int Tm = m->Tm, M = Tm - 2, stop = m->c.stop_audio_token;
    for (int b = 0; b < m->B; b++) {
        int real = (int)(((long)bt->wav_lengths[b] + m->c.code_stride - 1) / m->c.code_stride);
        int32_t *in = m->mel_in + (size_t)b * Tm, *tg = m->mel_tgt + (size_t)b * Tm;
        uint8_t *mask = m->key_mask + (size_t)b * m->T + XTTS_GPT_LATENTS + m->Tt;
        in[0] = m->c.start_audio_token;
        for (int i = 0; i <= M; i++) {
            int v = i == M || i >= real ? stop : i < bt->codes_stride ? bt->codes[(size_t)b * bt->codes_stride + i] : 0;
            in[i + 1] = tg[i] = v;
        }
        tg[M + 1] = stop;
        for (int i = 0; i < Tm; i++) {
            mask[i] = i <= real + 3;
            if (i > real + 3) tg[i] = -1;
        }
    }
    if (bt->cond_idxs) {
        int b = m->B - 1, lo = bt->cond_idxs[2 * b] / m->c.cond_compression;
        int hi = bt->cond_idxs[2 * b + 1] / m->c.cond_compression;
        lo = lo < 0 ? 0 : lo > Tm ? Tm : lo;
        hi = hi < 0 ? 0 : hi > Tm ? Tm : hi;
        for (int i = lo; i < hi; i++) m->mel_tgt[(size_t)b * Tm + i] = -1;
    }
}

static xtts_status batch_prepare(xtts_gpt *m, const xtts_gpt_batch *bt, xtts_error *err) {
    xtts_status st = batch_shape(m, bt, err);
    if (st) return st;
    for (int b = 0; b < bt->B; b++)
        for (int i = 0; i < bt->codes_stride; i++) {
            int v = bt->codes[(size_t)b * bt->codes_stride + i];
            if (v < 0 || v >= m->c.n_audio_tokens)
                return xtts_error_set(err, XTTS_EINPUT, "xtts-gpt: batch row %d: code %d out of [0, %d)", b, v,
                                      m->c.n_audio_tokens);
        }
    free(m->text_in);
    free(m->key_mask);
    m->text_in = malloc((size_t)2 * m->B * (m->Tt + m->Tm) * sizeof(int32_t));
    m->key_mask = malloc((size_t)m->B * m->T);
    if (!m->text_in || !m->key_mask) return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory");
    m->text_tgt = m->text_in + (size_t)m->B * m->Tt;
    m->mel_in = m->text_tgt + (size_t)m->B * m->Tt;
    m->mel_tgt = m->mel_in + (size_t)m->B * m->Tm;
    memset(m->key_mask, 1, (size_t)m->B * m->T); /* the conditioning latents are always seen */
    batch_text(m, bt);
    batch_codes(m, bt);
    return xtts_gpt_acts_ensure(m, err);
}

/* ---- attention views ------------------------------------------------------------------- */

/* QKVAttention: (B,S,3D) with head h's q, k, v at channels h*3ch + {0, ch, 2ch}; out (B,S,D) */
static xtts_mha_shape view_cond(const xtts_gpt *m) {
    size_t S = m->S, D = m->c.dim, ch = D / m->c.heads;
    xtts_mha_shape s = {.B = m->B, .NH = m->c.heads, .Tq = m->S, .Tk = m->S, .hs = (int)ch,
                        .q_b = S * 3 * D, .q_t = 3 * D, .q_h = 3 * ch, .o_b = S * D, .o_t = D, .o_h = ch,
                        .scale = 1.0f / sqrtf((float)ch), .scratch = m->a.mha_scratch, .threads = m->mha_threads};
    s.k_b = s.v_b = s.q_b, s.k_t = s.v_t = s.q_t, s.k_h = s.v_h = s.q_h;
    return s;
}

/* the perceiver: q (B,P,512), kv (B,P+S,1024) = [k | v], out (B,P,512), 8 heads of 64 */
static xtts_mha_shape view_perceiver(const xtts_gpt *m) {
    size_t P = XTTS_GPT_LATENTS, S = m->S;
    xtts_mha_shape s = {.B = m->B, .NH = XTTS_GPT_PERC_HEADS, .Tq = (int)P, .Tk = (int)(P + S),
                        .hs = XTTS_GPT_PERC_DIM_HEAD, .q_b = P * PDI, .q_t = PDI, .q_h = XTTS_GPT_PERC_DIM_HEAD,
                        .k_b = (P + S) * 2 * PDI, .k_t = 2 * PDI, .k_h = XTTS_GPT_PERC_DIM_HEAD,
                        .o_b = P * PDI, .o_t = PDI, .o_h = XTTS_GPT_PERC_DIM_HEAD,
                        .scale = 1.0f / sqrtf((float)XTTS_GPT_PERC_DIM_HEAD), .scratch = m->a.mha_scratch,
                        .threads = m->mha_threads};
    s.v_b = s.k_b, s.v_t = s.k_t, s.v_h = s.k_h;
    return s;
}

/* GPT-2: (B,T,3D) = [q | k | v], causal, with the batch's padding mask; out (B,T,D) */
static xtts_mha_shape view_gpt(const xtts_gpt *m) {
    size_t T = m->T, D = m->c.dim, hs = D / m->c.heads;
    xtts_mha_shape s = {.B = m->B, .NH = m->c.heads, .Tq = m->T, .Tk = m->T, .hs = (int)hs, .q_b = T * 3 * D,
                        .q_t = 3 * D, .q_h = hs, .o_b = T * D, .o_t = D, .o_h = hs,
                        .scale = 1.0f / sqrtf((float)hs), .causal = 1, .key_mask = m->key_mask,
                        .scratch = m->a.mha_scratch, .threads = m->mha_threads};
    s.k_b = s.v_b = s.q_b, s.k_t = s.v_t = s.q_t, s.k_h = s.v_h = s.q_h;
    return s;
}

/* ---- conditioning encoder (latent_encoder.py) ----------------------------------------- */

static void cond_encoder_forward(xtts_gpt *m, const float *cond_mels) {
    xtts_gpt_acts *a = &m->a;
    int B = m->B, S = m->S, D = m->c.dim, NM = m->c.n_mels;
    for (int b = 0; b < B; b++) /* (B,n_mels,S) -> (B,S,n_mels) */
        for (int f = 0; f < NM; f++)
            for (int t = 0; t < S; t++)
                a->xin[((size_t)b * S + t) * NM + f] = cond_mels[((size_t)b * NM + f) * S + t];
    xtts_matmul_forward(a->ce_h[0], a->xin, xtts_gpt_w(m, m->ix_ce), xtts_gpt_w(m, m->ix_ce + 1), B, S, NM, D);
    xtts_mha_shape s = view_cond(m);
    size_t ch = (size_t)D / m->c.heads, N = (size_t)B * S * D;
    for (int k = 0; k < XTTS_GPT_COND_BLOCKS; k++) {
        size_t w = m->ix_ce + 2 + 6 * (size_t)k; /* norm w, b; qkv w, b; proj_out w, b */
        xtts_groupnorm_forward(a->ce_n[k], a->ce_mean[k], a->ce_rstd[k], a->ce_h[k], xtts_gpt_w(m, w),
                               xtts_gpt_w(m, w + 1), B, S, D, m->G);
        xtts_matmul_forward(a->ce_qkv[k], a->ce_n[k], xtts_gpt_w(m, w + 2), xtts_gpt_w(m, w + 3), B, S, D, 3 * D);
        xtts_mha_forward(&s, a->ce_a[k], a->ce_att[k], a->ce_qkv[k], a->ce_qkv[k] + ch, a->ce_qkv[k] + 2 * ch);
        xtts_matmul_forward(a->ce_h[k + 1], a->ce_a[k], xtts_gpt_w(m, w + 4), xtts_gpt_w(m, w + 5), B, S, D, D);
        /* AttentionBlock: the residual is the normed input (x = self.norm(x); ... xp + h) */
        xtts_residual_forward(a->ce_h[k + 1], a->ce_h[k + 1], a->ce_n[k], N);
    }
}

/* d->h holds the gradient of the encoder's output */
static void cond_encoder_backward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    xtts_gpt_dacts *d = &m->d;
    int B = m->B, S = m->S, D = m->c.dim, NM = m->c.n_mels;
    xtts_mha_shape s = view_cond(m);
    size_t ch = (size_t)D / m->c.heads, N = (size_t)B * S * D;
    for (int k = XTTS_GPT_COND_BLOCKS - 1; k >= 0; k--) {
        size_t w = m->ix_ce + 2 + 6 * (size_t)k;
        zero(d->ce_a, N);
        xtts_matmul_backward(d->ce_a, xtts_gpt_g(m, w + 4), xtts_gpt_g(m, w + 5), d->h, a->ce_a[k],
                             xtts_gpt_w(m, w + 4), B, S, D, D);
        zero(d->ce_qkv, 3 * N);
        xtts_mha_backward(&s, d->ce_qkv, d->ce_qkv + ch, d->ce_qkv + 2 * ch, d->ce_a, a->ce_qkv[k],
                          a->ce_qkv[k] + ch, a->ce_qkv[k] + 2 * ch, a->ce_att[k]);
        memcpy(d->n, d->h, N * sizeof(float));
        xtts_matmul_backward(d->n, xtts_gpt_g(m, w + 2), xtts_gpt_g(m, w + 3), d->ce_qkv, a->ce_n[k],
                             xtts_gpt_w(m, w + 2), B, S, D, 3 * D);
        zero(d->h, N);
        xtts_groupnorm_backward(d->h, xtts_gpt_g(m, w), xtts_gpt_g(m, w + 1), d->n, a->ce_h[k], xtts_gpt_w(m, w),
                                a->ce_mean[k], a->ce_rstd[k], B, S, D, m->G);
    }
    zero(d->xin, (size_t)B * S * NM);
    xtts_matmul_backward(d->xin, xtts_gpt_g(m, m->ix_ce), xtts_gpt_g(m, m->ix_ce + 1), d->h, a->xin,
                         xtts_gpt_w(m, m->ix_ce), B, S, NM, D);
}

/* ---- perceiver resampler (perceiver_encoder.py) ---------------------------------------- */

static void perceiver_forward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    int B = m->B, S = m->S, D = m->c.dim, P = XTTS_GPT_LATENTS, I = m->I;
    size_t NP = (size_t)B * P * D;
    for (int b = 0; b < B; b++) memcpy(a->pv_lat[0] + (size_t)b * P * D, xtts_gpt_w(m, m->ix_perc), (size_t)P * D * 4);
    xtts_mha_shape s = view_perceiver(m);
    for (int i = 0; i < XTTS_GPT_PERC_DEPTH; i++) {
        size_t w = m->ix_perc + 1 + 7 * (size_t)i; /* to_q, to_kv, to_out, ff 0 w, b, ff 2 w, b */
        for (int b = 0; b < B; b++) { /* context = [latents ; encoder output] */
            float *ctx = a->pv_ctx[i] + (size_t)b * (P + S) * D;
            memcpy(ctx, a->pv_lat[i] + (size_t)b * P * D, (size_t)P * D * sizeof(float));
            memcpy(ctx + (size_t)P * D, a->ce_h[XTTS_GPT_COND_BLOCKS] + (size_t)b * S * D, (size_t)S * D * sizeof(float));
        }
        xtts_matmul_forward(a->pv_q[i], a->pv_lat[i], xtts_gpt_w(m, w), NULL, B, P, D, PDI);
        xtts_matmul_forward(a->pv_kv[i], a->pv_ctx[i], xtts_gpt_w(m, w + 1), NULL, B, P + S, D, 2 * PDI);
        xtts_mha_forward(&s, a->pv_o[i], a->pv_att[i], a->pv_q[i], a->pv_kv[i], a->pv_kv[i] + PDI);
        xtts_matmul_forward(a->pv_mid[i], a->pv_o[i], xtts_gpt_w(m, w + 2), NULL, B, P, PDI, D);
        xtts_residual_forward(a->pv_mid[i], a->pv_mid[i], a->pv_lat[i], NP);
        xtts_matmul_forward(a->pv_f1[i], a->pv_mid[i], xtts_gpt_w(m, w + 3), xtts_gpt_w(m, w + 4), B, P, D, 2 * I);
        xtts_geglu_forward(a->pv_g[i], a->pv_f1[i], (size_t)B * P, I);
        xtts_matmul_forward(a->pv_lat[i + 1], a->pv_g[i], xtts_gpt_w(m, w + 5), xtts_gpt_w(m, w + 6), B, P, I, D);
        xtts_residual_forward(a->pv_lat[i + 1], a->pv_lat[i + 1], a->pv_mid[i], NP);
    }
    xtts_rmsnorm_forward(a->cond, a->pv_inv, a->pv_lat[XTTS_GPT_PERC_DEPTH], xtts_gpt_w(m, m->nt - 1), (size_t)B * P,
                         D);
}

/* one layer's attention half backwards: d->mid holds d(mid); adds d(latents) into d->lat and
 * d(encoder output) into d->h */
static void perceiver_attention_backward(xtts_gpt *m, int i) {
    xtts_gpt_acts *a = &m->a;
    xtts_gpt_dacts *d = &m->d;
    int B = m->B, S = m->S, D = m->c.dim, P = XTTS_GPT_LATENTS;
    size_t w = m->ix_perc + 1 + 7 * (size_t)i;
    xtts_mha_shape s = view_perceiver(m);
    memcpy(d->lat, d->mid, (size_t)B * P * D * sizeof(float)); /* mid = latents + attention */
    zero(d->o, (size_t)B * P * PDI);
    xtts_matmul_backward(d->o, xtts_gpt_g(m, w + 2), NULL, d->mid, a->pv_o[i], xtts_gpt_w(m, w + 2), B, P, PDI, D);
    zero(d->q, (size_t)B * P * PDI);
    zero(d->kv, (size_t)B * (P + S) * 2 * PDI);
    xtts_mha_backward(&s, d->q, d->kv, d->kv + PDI, d->o, a->pv_q[i], a->pv_kv[i], a->pv_kv[i] + PDI, a->pv_att[i]);
    xtts_matmul_backward(d->lat, xtts_gpt_g(m, w), NULL, d->q, a->pv_lat[i], xtts_gpt_w(m, w), B, P, D, PDI);
    zero(d->ctx, (size_t)B * (P + S) * D);
    xtts_matmul_backward(d->ctx, xtts_gpt_g(m, w + 1), NULL, d->kv, a->pv_ctx[i], xtts_gpt_w(m, w + 1), B, P + S, D,
                         2 * PDI);
    for (int b = 0; b < B; b++) {
        const float *dc = d->ctx + (size_t)b * (P + S) * D;
        float *dl = d->lat + (size_t)b * P * D, *dh = d->h + (size_t)b * S * D;
        for (size_t j = 0; j < (size_t)P * D; j++) dl[j] += dc[j];
        for (size_t j = 0; j < (size_t)S * D; j++) dh[j] += dc[(size_t)P * D + j];
    }
}

/* d->cond holds d(conditioning latents); leaves d(encoder output) in d->h */
static void perceiver_backward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    xtts_gpt_dacts *d = &m->d;
    int B = m->B, S = m->S, D = m->c.dim, P = XTTS_GPT_LATENTS, I = m->I;
    size_t NP = (size_t)B * P * D;
    zero(d->h, (size_t)B * S * D);
    zero(d->lat, NP);
    xtts_rmsnorm_backward(d->lat, xtts_gpt_g(m, m->nt - 1), d->cond, a->pv_lat[XTTS_GPT_PERC_DEPTH],
                          xtts_gpt_w(m, m->nt - 1), a->pv_inv, (size_t)B * P, D);
    for (int i = XTTS_GPT_PERC_DEPTH - 1; i >= 0; i--) {
        size_t w = m->ix_perc + 1 + 7 * (size_t)i;
        memcpy(d->mid, d->lat, NP * sizeof(float)); /* out = mid + ff(mid) */
        zero(d->g, (size_t)B * P * I);
        xtts_matmul_backward(d->g, xtts_gpt_g(m, w + 5), xtts_gpt_g(m, w + 6), d->lat, a->pv_g[i],
                             xtts_gpt_w(m, w + 5), B, P, I, D);
        zero(d->f1, (size_t)B * P * 2 * I);
        xtts_geglu_backward(d->f1, d->g, a->pv_f1[i], (size_t)B * P, I);
        xtts_matmul_backward(d->mid, xtts_gpt_g(m, w + 3), xtts_gpt_g(m, w + 4), d->f1, a->pv_mid[i],
                             xtts_gpt_w(m, w + 3), B, P, D, 2 * I);
        perceiver_attention_backward(m, i);
    }
    float *dl = xtts_gpt_g(m, m->ix_perc); /* the latents are shared by the batch's rows */
    for (int b = 0; b < B; b++)
        for (size_t j = 0; j < (size_t)P * D; j++) dl[j] += d->lat[(size_t)b * P * D + j];
}

/* ---- embeddings (gpt.py: [conditioning latents ; text ; codes]) ----------------------- */

static void embed_forward(xtts_gpt *m) {
    int P = XTTS_GPT_LATENTS, D = m->c.dim;
    const float *temb = xtts_gpt_w(m, m->ix_temb), *memb = xtts_gpt_w(m, m->ix_memb);
    const float *tpos = xtts_gpt_w(m, m->ix_tpos), *mpos = xtts_gpt_w(m, m->ix_mpos);
    for (int b = 0; b < m->B; b++) {
        float *x = m->a.x[0] + (size_t)b * m->T * D;
        memcpy(x, m->a.cond + (size_t)b * P * D, (size_t)P * D * sizeof(float));
        for (int j = 0; j < m->Tt; j++) {
            const float *e = temb + (size_t)m->text_in[(size_t)b * m->Tt + j] * D, *p = tpos + (size_t)j * D;
            float *o = x + (size_t)(P + j) * D;
            for (int c = 0; c < D; c++) o[c] = e[c] + p[c];
        }
        for (int i = 0; i < m->Tm; i++) {
            const float *e = memb + (size_t)m->mel_in[(size_t)b * m->Tm + i] * D, *p = mpos + (size_t)i * D;
            float *o = x + (size_t)(P + m->Tt + i) * D;
            for (int c = 0; c < D; c++) o[c] = e[c] + p[c];
        }
    }
}

/* d->x holds d(embeddings): tables in (b, position) order; d->cond gets the latents' part */
static void embed_backward(xtts_gpt *m) {
    int P = XTTS_GPT_LATENTS, D = m->c.dim;
    float *temb = xtts_gpt_g(m, m->ix_temb), *memb = xtts_gpt_g(m, m->ix_memb);
    float *tpos = xtts_gpt_g(m, m->ix_tpos), *mpos = xtts_gpt_g(m, m->ix_mpos);
    for (int b = 0; b < m->B; b++) {
        const float *dx = m->d.x + (size_t)b * m->T * D;
        memcpy(m->d.cond + (size_t)b * P * D, dx, (size_t)P * D * sizeof(float));
        for (int j = 0; j < m->Tt; j++) {
            float *e = temb + (size_t)m->text_in[(size_t)b * m->Tt + j] * D, *p = tpos + (size_t)j * D;
            const float *g = dx + (size_t)(P + j) * D;
            for (int c = 0; c < D; c++) e[c] += g[c], p[c] += g[c];
        }
        for (int i = 0; i < m->Tm; i++) {
            float *e = memb + (size_t)m->mel_in[(size_t)b * m->Tm + i] * D, *p = mpos + (size_t)i * D;
            const float *g = dx + (size_t)(P + m->Tt + i) * D;
            for (int c = 0; c < D; c++) e[c] += g[c], p[c] += g[c];
        }
    }
}

/* ---- the GPT-2 stack (HF GPT2Block: pre-LN, causal attention, GELU-tanh MLP) ------------- */

static void gpt_forward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    int B = m->B, T = m->T, D = m->c.dim;
    size_t N = (size_t)B * T * D;
    xtts_mha_shape s = view_gpt(m);
    for (int l = 0; l < m->c.layers; l++) {
        size_t w = m->ix_gpt + 12 * (size_t)l; /* ln_1 w b, c_attn w b, c_proj w b, ln_2 w b, c_fc w b, c_proj w b */
        xtts_layernorm_forward(a->ln1[l], a->ln1_m[l], a->ln1_r[l], a->x[l], xtts_gpt_w(m, w), xtts_gpt_w(m, w + 1),
                               B, T, D);
        xtts_matmul_forward(a->qkv[l], a->ln1[l], xtts_gpt_w(m, w + 2), xtts_gpt_w(m, w + 3), B, T, D, 3 * D);
        xtts_mha_forward(&s, a->atty[l], a->att[l], a->qkv[l], a->qkv[l] + D, a->qkv[l] + 2 * D);
        xtts_matmul_forward(a->xmid[l], a->atty[l], xtts_gpt_w(m, w + 4), xtts_gpt_w(m, w + 5), B, T, D, D);
        xtts_residual_forward(a->xmid[l], a->xmid[l], a->x[l], N);
        xtts_layernorm_forward(a->ln2[l], a->ln2_m[l], a->ln2_r[l], a->xmid[l], xtts_gpt_w(m, w + 6),
                               xtts_gpt_w(m, w + 7), B, T, D);
        xtts_matmul_forward(a->fc[l], a->ln2[l], xtts_gpt_w(m, w + 8), xtts_gpt_w(m, w + 9), B, T, D, 4 * D);
        xtts_gelu_forward(a->fcg[l], a->fc[l], 4 * N);
        xtts_matmul_forward(a->x[l + 1], a->fcg[l], xtts_gpt_w(m, w + 10), xtts_gpt_w(m, w + 11), B, T, 4 * D, D);
        xtts_residual_forward(a->x[l + 1], a->x[l + 1], a->xmid[l], N);
    }
}

/* d->x holds d(x[L]); leaves d(x[0]) there */
static void gpt_backward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    xtts_gpt_dacts *d = &m->d;
    int B = m->B, T = m->T, D = m->c.dim;
    size_t N = (size_t)B * T * D;
    xtts_mha_shape s = view_gpt(m);
    for (int l = m->c.layers - 1; l >= 0; l--) {
        size_t w = m->ix_gpt + 12 * (size_t)l;
        zero(d->fcg, 4 * N);
        xtts_matmul_backward(d->fcg, xtts_gpt_g(m, w + 10), xtts_gpt_g(m, w + 11), d->x, a->fcg[l],
                             xtts_gpt_w(m, w + 10), B, T, 4 * D, D);
        zero(d->fc, 4 * N);
        xtts_gelu_backward(d->fc, a->fc[l], d->fcg, 4 * N);
        zero(d->ln, N);
        xtts_matmul_backward(d->ln, xtts_gpt_g(m, w + 8), xtts_gpt_g(m, w + 9), d->fc, a->ln2[l], xtts_gpt_w(m, w + 8),
                             B, T, D, 4 * D);
        xtts_layernorm_backward(d->x, xtts_gpt_g(m, w + 6), xtts_gpt_g(m, w + 7), d->ln, a->xmid[l],
                                xtts_gpt_w(m, w + 6), a->ln2_m[l], a->ln2_r[l], B, T, D);
        zero(d->atty, N);
        xtts_matmul_backward(d->atty, xtts_gpt_g(m, w + 4), xtts_gpt_g(m, w + 5), d->x, a->atty[l],
                             xtts_gpt_w(m, w + 4), B, T, D, D);
        zero(d->qkv, 3 * N);
        xtts_mha_backward(&s, d->qkv, d->qkv + D, d->qkv + 2 * D, d->atty, a->qkv[l], a->qkv[l] + D,
                          a->qkv[l] + 2 * D, a->att[l]);
        zero(d->ln, N);
        xtts_matmul_backward(d->ln, xtts_gpt_g(m, w + 2), xtts_gpt_g(m, w + 3), d->qkv, a->ln1[l], xtts_gpt_w(m, w + 2),
                             B, T, D, 3 * D);
        xtts_layernorm_backward(d->x, xtts_gpt_g(m, w), xtts_gpt_g(m, w + 1), d->ln, a->x[l], xtts_gpt_w(m, w),
                                a->ln1_m[l], a->ln1_r[l], B, T, D);
    }
}

/* ---- norms, heads, losses -------------------------------------------------------------- */

/* ln_f over every position, final_norm and the heads over the text and code positions */
static void heads_forward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    int B = m->B, T = m->T, D = m->c.dim, P = XTTS_GPT_LATENTS, Tt = m->Tt, Tm = m->Tm;
    int NT = m->c.n_text_tokens, NA = m->c.n_audio_tokens;
    xtts_layernorm_forward(a->lnf, a->lnf_m, a->lnf_r, a->x[m->c.layers], xtts_gpt_w(m, m->ix_lnf),
                           xtts_gpt_w(m, m->ix_lnf + 1), B, T, D);
    for (int b = 0; b < B; b++) {
        size_t r = (size_t)b * (Tt + Tm);
        float *fn = a->fn + r * D;
        xtts_layernorm_forward(fn, a->fn_m + r, a->fn_r + r, a->lnf + ((size_t)b * T + P) * D,
                               xtts_gpt_w(m, m->ix_fin), xtts_gpt_w(m, m->ix_fin + 1), 1, Tt + Tm, D);
        xtts_matmul_forward(a->lg_text + (size_t)b * Tt * NT, fn, xtts_gpt_w(m, m->ix_thead),
                            xtts_gpt_w(m, m->ix_thead + 1), 1, Tt, D, NT);
        xtts_matmul_forward(a->lg_mel + (size_t)b * Tm * NA, fn + (size_t)Tt * D, xtts_gpt_w(m, m->ix_mhead),
                            xtts_gpt_w(m, m->ix_mhead + 1), 1, Tm, D, NA);
    }
}

/* d->lg_text and d->lg_mel hold the logits' gradients; leaves d(x[L]) in d->x */
static void heads_backward(xtts_gpt *m) {
    xtts_gpt_acts *a = &m->a;
    xtts_gpt_dacts *d = &m->d;
    int B = m->B, T = m->T, D = m->c.dim, P = XTTS_GPT_LATENTS, Tt = m->Tt, Tm = m->Tm;
    int NT = m->c.n_text_tokens, NA = m->c.n_audio_tokens;
    zero(d->fn, (size_t)B * (Tt + Tm) * D);
    zero(d->lnf, (size_t)B * T * D);
    for (int b = 0; b < B; b++) {
        size_t r = (size_t)b * (Tt + Tm);
        float *fn = a->fn + r * D, *dfn = d->fn + r * D;
        xtts_matmul_backward(dfn, xtts_gpt_g(m, m->ix_thead), xtts_gpt_g(m, m->ix_thead + 1),
                             d->lg_text + (size_t)b * Tt * NT, fn, xtts_gpt_w(m, m->ix_thead), 1, Tt, D, NT);
        xtts_matmul_backward(dfn + (size_t)Tt * D, xtts_gpt_g(m, m->ix_mhead), xtts_gpt_g(m, m->ix_mhead + 1),
                             d->lg_mel + (size_t)b * Tm * NA, fn + (size_t)Tt * D, xtts_gpt_w(m, m->ix_mhead), 1,
                             Tm, D, NA);
        xtts_layernorm_backward(d->lnf + ((size_t)b * T + P) * D, xtts_gpt_g(m, m->ix_fin),
                                xtts_gpt_g(m, m->ix_fin + 1), dfn, a->lnf + ((size_t)b * T + P) * D,
                                xtts_gpt_w(m, m->ix_fin), a->fn_m + r, a->fn_r + r, 1, Tt + Tm, D);
    }
    zero(d->x, (size_t)B * T * D);
    xtts_layernorm_backward(d->x, xtts_gpt_g(m, m->ix_lnf), xtts_gpt_g(m, m->ix_lnf + 1), d->lnf, a->x[m->c.layers],
                            xtts_gpt_w(m, m->ix_lnf), a->lnf_m, a->lnf_r, B, T, D);
}

xtts_status xtts_gpt_forward(xtts_gpt *m, const xtts_gpt_batch *bt, float *loss_text, float *loss_mel,
                             xtts_error *err) {
    xtts_status st = batch_prepare(m, bt, err);
    if (st) return st;
    cond_encoder_forward(m, bt->cond_mels);
    perceiver_forward(m);
    embed_forward(m);
    gpt_forward(m);
    heads_forward(m);
    int bad_t, bad_m;
    if (xtts_crossentropy_forward_backward(loss_text, NULL, m->a.lg_text, m->text_tgt, m->B * m->Tt,
                                           m->c.n_text_tokens, 1.0f, &bad_t) < 0 ||
        xtts_crossentropy_forward_backward(loss_mel, NULL, m->a.lg_mel, m->mel_tgt, m->B * m->Tm,
                                           m->c.n_audio_tokens, 1.0f, &bad_m) < 0)
        return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory");
    return XTTS_OK;
}

void xtts_gpt_backward(xtts_gpt *m, float text_weight, float mel_weight) {
    float lt, lm;
    xtts_crossentropy_forward_backward(&lt, m->d.lg_text, m->a.lg_text, m->text_tgt, m->B * m->Tt,
                                       m->c.n_text_tokens, text_weight, NULL);
    xtts_crossentropy_forward_backward(&lm, m->d.lg_mel, m->a.lg_mel, m->mel_tgt, m->B * m->Tm, m->c.n_audio_tokens,
                                       mel_weight, NULL);
    heads_backward(m);
    gpt_backward(m);
    embed_backward(m);
    perceiver_backward(m);
    cond_encoder_backward(m);
}
