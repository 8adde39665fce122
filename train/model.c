/* model.c — the xtts-train transformer (see model.h), in the manner of llm.c's train_gpt2.c:
 * its parameters (names, sizes, initial values), its activations, and the forward and backward
 * passes that run its layers in order. This is the CPU path's spine; the CUDA path's is
 * train/train_cuda.cu, in the same order.
 *
 * The layers are train/model_internal.h's (train/layers.c: one call each into the CPU loops of
 * train/cpu/, compiled once per instruction set). The update is train/optim.c's, the loop
 * train/trainer.c's.
 */
#include "train/model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the model: parameters ----------------------------------------------------------- */

static const char *const param_names[XTTS_NUM_PARAM_TENSORS] = {
    "wte",  "wpe_text", "wpe_mel", "melin_w",  "melin_b",  "mel_start", "ln1w",    "ln1b",
    "qkvw", "qkvb",     "attprojw", "attprojb", "ln2w",    "ln2b",      "fcw",     "fcb",
    "fcprojw", "fcprojb", "lnfw",  "lnfb",     "headw",    "headb"};

const char *xtts_param_name(int i) { return i >= 0 && i < XTTS_NUM_PARAM_TENSORS ? param_names[i] : "?"; }

int xtts_model_size_preset(const char *name, int *n_layer, int *channels, int *n_head) {
    static const struct { const char *name; int L, C, NH; } sizes[] = {
        {"tiny", 2, 128, 4}, {"small", 6, 384, 6}, {"base", 12, 768, 12}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (strcmp(name, sizes[i].name) == 0) {
            *n_layer = sizes[i].L;
            *channels = sizes[i].C;
            *n_head = sizes[i].NH;
            return 0;
        }
    }
    return -1;
}

xtts_status xtts_model_config_check(const xtts_model_config *c, xtts_error *err) {
    if (c->n_layer < 1 || c->n_layer > 256)
        return xtts_error_set(err, XTTS_EUSAGE, "model: layers %d not in 1..256", c->n_layer);
    if (c->channels < 1 || c->channels > 16384)
        return xtts_error_set(err, XTTS_EUSAGE, "model: width %d not in 1..16384", c->channels);
    if (c->n_head < 1 || c->channels % c->n_head != 0)
        return xtts_error_set(err, XTTS_EUSAGE, "model: %d heads do not divide width %d", c->n_head, c->channels);
    if (c->n_mels < 1 || c->n_mels > 1024)
        return xtts_error_set(err, XTTS_EUSAGE, "model: n_mels %d not in 1..1024", c->n_mels);
    if (c->vocab_size < 1 || c->vocab_size > 1 << 20)
        return xtts_error_set(err, XTTS_EUSAGE, "model: vocabulary size %d not in 1..1048576", c->vocab_size);
    if (c->max_text_pos < 1 || c->max_text_pos > 1 << 20 || c->max_mel_pos < 1 || c->max_mel_pos > 1 << 20)
        return xtts_error_set(err, XTTS_EUSAGE, "model: position tables %d/%d out of range", c->max_text_pos,
                              c->max_mel_pos);
    return XTTS_OK;
}

static void fill_param_sizes(const xtts_model_config *cfg, size_t *s) {
    size_t L = cfg->n_layer, C = cfg->channels, M = cfg->n_mels;
    s[0] = (size_t)(cfg->vocab_size + XTTS_N_LANGS) * C;
    s[1] = (size_t)cfg->max_text_pos * C;
    s[2] = (size_t)cfg->max_mel_pos * C;
    s[3] = C * M;
    s[4] = C;
    s[5] = M;
    s[6] = L * C;
    s[7] = L * C;
    s[8] = L * 3 * C * C;
    s[9] = L * 3 * C;
    s[10] = L * C * C;
    s[11] = L * C;
    s[12] = L * C;
    s[13] = L * C;
    s[14] = L * 4 * C * C;
    s[15] = L * 4 * C;
    s[16] = L * C * 4 * C;
    s[17] = L * C;
    s[18] = C;
    s[19] = C;
    s[20] = (M + 1) * C;
    s[21] = M + 1;
}

size_t xtts_model_num_parameters(const xtts_model_config *cfg) {
    size_t s[XTTS_NUM_PARAM_TENSORS], n = 0;
    fill_param_sizes(cfg, s);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) n += s[i];
    return n;
}

static void point_params(xtts_param_tensors *p, const size_t *sizes, float *mem) {
    float **ptrs[XTTS_NUM_PARAM_TENSORS] = {
        &p->wte,  &p->wpe_text, &p->wpe_mel,  &p->melin_w,  &p->melin_b, &p->mel_start, &p->ln1w, &p->ln1b,
        &p->qkvw, &p->qkvb,     &p->attprojw, &p->attprojb, &p->ln2w,    &p->ln2b,      &p->fcw,  &p->fcb,
        &p->fcprojw, &p->fcprojb, &p->lnfw,   &p->lnfb,     &p->headw,   &p->headb};
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) {
        *ptrs[i] = mem;
        mem += sizes[i];
    }
}

float *xtts_param_tensor(const xtts_model *m, float *memory, int i) {
    for (int k = 0; k < i; k++) memory += m->param_sizes[k];
    return memory;
}

/* splitmix64 and Box-Muller: a small, portable generator so that a seed gives the same
 * initial weights on every machine. */
static float normal01(uint64_t *s) {
    double u1 = ((xtts_splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (xtts_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void init_params(xtts_model *m, uint64_t seed) {
    uint64_t s = seed ^ 0x5854545354524e31ULL; /* "XTTSTRN1" */
    float proj_std = 0.02f / sqrtf(2.0f * m->config.n_layer);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) {
        float *p = xtts_param_tensor(m, m->params_memory, i);
        size_t n = m->param_sizes[i];
        const char *name = param_names[i];
        int is_ln_weight = !strcmp(name, "ln1w") || !strcmp(name, "ln2w") || !strcmp(name, "lnfw");
        int is_bias = !strcmp(name, "melin_b") || !strcmp(name, "qkvb") || !strcmp(name, "attprojb") ||
                      !strcmp(name, "ln1b") || !strcmp(name, "ln2b") || !strcmp(name, "lnfb") ||
                      !strcmp(name, "fcb") || !strcmp(name, "fcprojb") || !strcmp(name, "headb");
        float std = (!strcmp(name, "attprojw") || !strcmp(name, "fcprojw")) ? proj_std : 0.02f;
        for (size_t k = 0; k < n; k++) p[k] = is_ln_weight ? 1.0f : is_bias ? 0.0f : std * normal01(&s);
    }
}

/* ---- activations --------------------------------------------------------------------- */

static size_t acts_floats(const xtts_model_config *c, size_t B, size_t T) {
    size_t L = c->n_layer, C = c->channels, NH = c->n_head, M1 = c->n_mels + 1;
    return B * T * C                       /* encoded */
           + L * B * T * C + 2 * L * B * T /* ln1 */
           + L * B * T * 3 * C             /* qkv */
           + L * B * T * C                 /* atty */
           + L * B * NH * T * T            /* att */
           + L * B * T * C                 /* residual2 */
           + L * B * T * C + 2 * L * B * T /* ln2 */
           + 2 * L * B * T * 4 * C         /* fch, fch_gelu */
           + L * B * T * C                 /* residual3 */
           + B * T * C + 2 * B * T         /* lnf */
           + B * T * M1;                   /* head */
}

/* Point the activation tensors for the current (B,T): tensors are laid out densely for
 * this shape inside the allocation made for (B_max, T_max). */
static void point_acts(xtts_model *m, int B, int T) {
    size_t L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M1 = m->config.n_mels + 1;
    size_t BT = (size_t)B * T;
    float *p = m->acts_memory;
    xtts_activations *a = &m->acts;
#define TAKE(field, n) do { a->field = p; p += (n); } while (0)
    TAKE(encoded, BT * C);
    TAKE(ln1, L * BT * C);
    TAKE(ln1_mean, L * BT);
    TAKE(ln1_rstd, L * BT);
    TAKE(qkv, L * BT * 3 * C);
    TAKE(atty, L * BT * C);
    TAKE(att, L * B * NH * (size_t)T * T);
    TAKE(residual2, L * BT * C);
    TAKE(ln2, L * BT * C);
    TAKE(ln2_mean, L * BT);
    TAKE(ln2_rstd, L * BT);
    TAKE(fch, L * BT * 4 * C);
    TAKE(fch_gelu, L * BT * 4 * C);
    TAKE(residual3, L * BT * C);
    TAKE(lnf, BT * C);
    TAKE(lnf_mean, BT);
    TAKE(lnf_rstd, BT);
    TAKE(head, BT * M1);
#undef TAKE
    xtts_grad_scratch *g = &m->scratch;
    p = m->scratch_memory;
#define TAKE(field, n) do { g->field = p; p += (n); } while (0)
    TAKE(dresidual, BT * C);
    TAKE(dhead, BT * M1);
    TAKE(dln, BT * C);
    TAKE(datty, BT * C);
    TAKE(dqkv, BT * 3 * C);
    TAKE(dfch, BT * 4 * C);
    TAKE(dfch_gelu, BT * 4 * C);
#undef TAKE
}

/* ---- lifecycle and the batch --------------------------------------------------------- */

xtts_status xtts_model_new(const xtts_model_config *cfg, int B_max, int T_max, uint64_t seed, xtts_model **out,
                           xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_model_config_check(cfg, err);
    if (st) return st;
    if (B_max < 1 || T_max < 1)
        return xtts_error_set(err, XTTS_EUSAGE, "model: batch shape %d x %d is empty", B_max, T_max);
    xtts_model *m = calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "model: out of memory");
    m->config = *cfg;
    m->B_max = B_max;
    m->T_max = T_max;
    m->stop_pos_weight = 1.0f;
    fill_param_sizes(cfg, m->param_sizes);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) m->num_parameters += m->param_sizes[i];
    size_t C = cfg->channels, M1 = cfg->n_mels + 1, BT = (size_t)B_max * T_max;
    size_t n_acts = acts_floats(cfg, B_max, T_max);
    size_t n_scratch = BT * (C + M1 + C + C + 3 * C + 8 * C);
    m->params_memory = malloc(m->num_parameters * sizeof(float));
    m->grads_memory = calloc(m->num_parameters, sizeof(float));
    m->acts_memory = malloc(n_acts * sizeof(float));
    m->scratch_memory = malloc(n_scratch * sizeof(float));
    if (!m->params_memory || !m->grads_memory || !m->acts_memory || !m->scratch_memory) {
        size_t n_params = m->num_parameters;
        xtts_model_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM,
                              "model: out of memory for %zu parameters and %.1f MB of activations (batch %d x %d)",
                              n_params, (double)(n_acts + n_scratch) * 4 / 1e6, B_max, T_max);
    }
    point_params(&m->params, m->param_sizes, m->params_memory);
    point_params(&m->grads, m->param_sizes, m->grads_memory);
    init_params(m, seed);
    *out = m;
    return XTTS_OK;
}

void xtts_model_delete(xtts_model *m) {
    if (!m) return;
    free(m->params_memory);
    free(m->grads_memory);
    free(m->acts_memory);
    free(m->scratch_memory);
    free(m);
}

xtts_status xtts_model_check_batch(const xtts_model *m, const xtts_model_batch *bt, xtts_error *err) {
    const xtts_model_config *c = &m->config;
    if (bt->B < 1 || bt->B > m->B_max || bt->T < 1 || bt->T > m->T_max)
        return xtts_error_set(err, XTTS_ERANGE, "batch %d x %d exceeds the model's %d x %d", bt->B, bt->T,
                              m->B_max, m->T_max);
    int n_tokens = c->vocab_size + XTTS_N_LANGS;
    for (int b = 0; b < bt->B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        if (nt < 0 || nf < 0 || nt > c->max_text_pos || nt > bt->text_stride || nf > c->max_mel_pos ||
            nf > bt->mel_stride || nt + nf > bt->T)
            return xtts_error_set(err, XTTS_ERANGE,
                                  "batch row %d: %d text positions and %d frames do not fit the model "
                                  "(%d text, %d mel positions, T %d)",
                                  b, nt, nf, c->max_text_pos, c->max_mel_pos, bt->T);
        for (int t = 0; t < nt; t++) {
            int32_t id = bt->text[(size_t)b * bt->text_stride + t];
            if (id < 0 || id >= n_tokens)
                return xtts_error_set(err, XTTS_ERANGE, "batch row %d: token %d at %d outside the vocabulary (%d)",
                                      b, (int)id, t, n_tokens);
        }
    }
    return XTTS_OK;
}

/* ---- forward ------------------------------------------------------------------------- */

void xtts_model_forward(xtts_model *m, const xtts_model_batch *bt) {
    int B = bt->B, T = bt->T;
    int L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M = m->config.n_mels;
    size_t BT = (size_t)B * T;
    point_acts(m, B, T);
    xtts_param_tensors *p = &m->params;
    xtts_activations *a = &m->acts;

    xtts_encoder_forward(a->encoded, bt, p->wte, p->wpe_text, p->wpe_mel, p->melin_w, p->melin_b, p->mel_start, C, M);
    for (int l = 0; l < L; l++) {
        const float *residual = l == 0 ? a->encoded : a->residual3 + (size_t)(l - 1) * BT * C;
        float *l_ln1 = a->ln1 + l * BT * C, *l_ln1_mean = a->ln1_mean + l * BT, *l_ln1_rstd = a->ln1_rstd + l * BT;
        float *l_qkv = a->qkv + l * BT * 3 * C, *l_atty = a->atty + l * BT * C;
        float *l_att = a->att + (size_t)l * B * NH * T * T;
        float *l_residual2 = a->residual2 + l * BT * C;
        float *l_ln2 = a->ln2 + l * BT * C, *l_ln2_mean = a->ln2_mean + l * BT, *l_ln2_rstd = a->ln2_rstd + l * BT;
        float *l_fch = a->fch + l * BT * 4 * C, *l_fch_gelu = a->fch_gelu + l * BT * 4 * C;
        float *l_residual3 = a->residual3 + l * BT * C;
        /* attention output projection and MLP output go into scratch before the residual add */
        float *tmp = m->scratch.dln; /* (B,T,C), free during forward */

        xtts_layernorm_forward(l_ln1, l_ln1_mean, l_ln1_rstd, residual, p->ln1w + l * C, p->ln1b + l * C, B, T, C);
        xtts_matmul_forward(l_qkv, l_ln1, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, B, T, C, 3 * C);
        xtts_attention_forward(l_atty, l_att, l_qkv, B, T, C, NH);
        xtts_matmul_forward(tmp, l_atty, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, B, T, C, C);
        xtts_residual_forward(l_residual2, residual, tmp, BT * C);
        xtts_layernorm_forward(l_ln2, l_ln2_mean, l_ln2_rstd, l_residual2, p->ln2w + l * C, p->ln2b + l * C, B, T, C);
        xtts_matmul_forward(l_fch, l_ln2, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, B, T, C, 4 * C);
        xtts_gelu_forward(l_fch_gelu, l_fch, BT * 4 * C);
        xtts_matmul_forward(tmp, l_fch_gelu, p->fcprojw + (size_t)l * C * 4 * C, p->fcprojb + l * C, B, T, 4 * C, C);
        xtts_residual_forward(l_residual3, l_residual2, tmp, BT * C);
    }
    const float *last = a->residual3 + (size_t)(L - 1) * BT * C;
    xtts_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, last, p->lnfw, p->lnfb, B, T, C);
    xtts_matmul_forward(a->head, a->lnf, p->headw, p->headb, B, T, C, M + 1);
    m->n_frames_total = xtts_mel_stop_loss_forward_backward(&m->mel_loss, &m->stop_loss, NULL, a->head, bt, M,
                                                            m->stop_pos_weight);
    m->loss = m->mel_loss + m->stop_loss;
}

/* ---- backward ------------------------------------------------------------------------ */

void xtts_model_zero_grad(xtts_model *m) { memset(m->grads_memory, 0, m->num_parameters * sizeof(float)); }

void xtts_model_backward(xtts_model *m, const xtts_model_batch *bt) {
    int B = bt->B, T = bt->T;
    int L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M = m->config.n_mels;
    size_t BT = (size_t)B * T;
    xtts_param_tensors *p = &m->params, *g = &m->grads;
    xtts_activations *a = &m->acts;
    xtts_grad_scratch *s = &m->scratch;
    float ml, sl;
    xtts_mel_stop_loss_forward_backward(&ml, &sl, s->dhead, a->head, bt, M, m->stop_pos_weight);

    memset(s->dln, 0, BT * C * sizeof(float));
    xtts_matmul_backward(s->dln, g->headw, g->headb, s->dhead, a->lnf, p->headw, B, T, C, M + 1);
    memset(s->dresidual, 0, BT * C * sizeof(float));
    xtts_layernorm_backward(s->dresidual, g->lnfw, g->lnfb, s->dln, a->residual3 + (size_t)(L - 1) * BT * C, p->lnfw,
                            a->lnf_mean, a->lnf_rstd, B, T, C);
    for (int l = L - 1; l >= 0; l--) {
        const float *residual = l == 0 ? a->encoded : a->residual3 + (size_t)(l - 1) * BT * C;
        const float *l_ln1 = a->ln1 + l * BT * C, *l_ln1_mean = a->ln1_mean + l * BT,
                    *l_ln1_rstd = a->ln1_rstd + l * BT;
        const float *l_qkv = a->qkv + l * BT * 3 * C, *l_atty = a->atty + l * BT * C;
        const float *l_att = a->att + (size_t)l * B * NH * T * T;
        const float *l_residual2 = a->residual2 + l * BT * C;
        const float *l_ln2 = a->ln2 + l * BT * C, *l_ln2_mean = a->ln2_mean + l * BT,
                    *l_ln2_rstd = a->ln2_rstd + l * BT;
        const float *l_fch = a->fch + l * BT * 4 * C, *l_fch_gelu = a->fch_gelu + l * BT * 4 * C;

        /* residual3 = residual2 + fcproj: dresidual flows to both */
        memset(s->dfch_gelu, 0, BT * 4 * C * sizeof(float));
        xtts_matmul_backward(s->dfch_gelu, g->fcprojw + (size_t)l * C * 4 * C, g->fcprojb + l * C, s->dresidual,
                             l_fch_gelu, p->fcprojw + (size_t)l * C * 4 * C, B, T, 4 * C, C);
        memset(s->dfch, 0, BT * 4 * C * sizeof(float));
        xtts_gelu_backward(s->dfch, l_fch, s->dfch_gelu, BT * 4 * C);
        memset(s->dln, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->dln, g->fcw + (size_t)l * 4 * C * C, g->fcb + l * 4 * C, s->dfch, l_ln2,
                             p->fcw + (size_t)l * 4 * C * C, B, T, C, 4 * C);
        xtts_layernorm_backward(s->dresidual, g->ln2w + l * C, g->ln2b + l * C, s->dln, l_residual2, p->ln2w + l * C,
                                l_ln2_mean, l_ln2_rstd, B, T, C);
        /* residual2 = residual + attproj */
        memset(s->datty, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->datty, g->attprojw + (size_t)l * C * C, g->attprojb + l * C, s->dresidual, l_atty,
                             p->attprojw + (size_t)l * C * C, B, T, C, C);
        memset(s->dqkv, 0, BT * 3 * C * sizeof(float));
        xtts_attention_backward(s->dqkv, s->datty, l_qkv, l_att, B, T, C, NH);
        memset(s->dln, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->dln, g->qkvw + (size_t)l * 3 * C * C, g->qkvb + l * 3 * C, s->dqkv, l_ln1,
                             p->qkvw + (size_t)l * 3 * C * C, B, T, C, 3 * C);
        xtts_layernorm_backward(s->dresidual, g->ln1w + l * C, g->ln1b + l * C, s->dln, residual, p->ln1w + l * C,
                                l_ln1_mean, l_ln1_rstd, B, T, C);
    }
    xtts_encoder_backward(g->wte, g->wpe_text, g->wpe_mel, g->melin_w, g->melin_b, g->mel_start, s->dresidual, bt,
                          p->mel_start, p->melin_w, C, M);
}
