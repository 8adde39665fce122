/* xtts_gpt_golden.c — reads the golden files of XTTS's GPT (see xtts_gpt_golden.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/xtts_gpt_golden.h"

static void *read_n(FILE *f, size_t n) {
    void *p = malloc(n ? n : 1);
    if (p && fread(p, 1, n, f) != n) {
        free(p);
        return NULL;
    }
    return p;
}

static int load_tensors(FILE *f, golden *g) {
    if (fread(&g->nt, 4, 1, f) != 1 || g->nt <= 0 || g->nt > 10000) return -1;
    g->names = calloc(g->nt, sizeof(char *));
    g->decay = calloc(g->nt, sizeof(int));
    g->ndim = calloc(g->nt, sizeof(int));
    g->shape = calloc(g->nt, sizeof *g->shape);
    g->numel = calloc(g->nt, sizeof(size_t));
    for (int i = 0; i < g->nt; i++) {
        int32_t len;
        if (fread(&len, 4, 1, f) != 1 || len <= 0 || len > 200) return -1;
        g->names[i] = calloc(len + 1, 1);
        if (fread(g->names[i], 1, len, f) != (size_t)len || fread(&g->decay[i], 4, 1, f) != 1 ||
            fread(&g->ndim[i], 4, 1, f) != 1 || g->ndim[i] < 1 || g->ndim[i] > 4 ||
            fread(g->shape[i], 4, g->ndim[i], f) != (size_t)g->ndim[i])
            return -1;
        g->numel[i] = 1;
        for (int k = 0; k < g->ndim[i]; k++) g->numel[i] *= g->shape[i][k];
        g->total += g->numel[i];
    }
    g->init = read_n(f, g->total * 4);
    if (g->version == 2) return g->init ? 0 : -1;
    g->grad = read_n(f, g->total * 4);
    g->after = read_n(f, g->total * 4);
    return g->init && g->grad && g->after ? 0 : -1;
}

int xtts_test_golden_load(const char *path, golden *g) {
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[4];
    int32_t version;
    int rc = -1;
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "XGPG", 4) || fread(&version, 4, 1, f) != 1 || (version != 1 && version != 2) ||
        fread(g->cfg, 4, 20, f) != 20 || fread(g->opt, 8, 7, f) != 7)
        goto done;
    g->version = version;
    g->B = g->cfg[14], g->L = g->cfg[15], g->MC = g->cfg[16], g->NM = g->cfg[17], g->S = g->cfg[18];
    g->steps = g->cfg[19];
    if (g->steps > 8) goto done;
    g->text_lengths = read_n(f, 4 * g->B);
    g->wav_lengths = read_n(f, 4 * g->B);
    g->cond_idxs = read_n(f, 8 * g->B);
    g->text = read_n(f, 4 * (size_t)g->B * g->L);
    g->codes = read_n(f, 4 * (size_t)g->B * g->MC);
    g->cond = read_n(f, 4 * (size_t)g->B * g->NM * g->S);
    if (!g->cond || fread(g->eval_loss, 8, 2, f) != 2 || fread(g->step_loss, 8, 2 * g->steps, f) != (size_t)2 * g->steps)
        goto done;
    rc = load_tensors(f, g);
done:
    fclose(f);
    return rc;
}

void xtts_test_golden_free(golden *g) {
    for (int i = 0; g->names && i < g->nt; i++) free(g->names[i]);
    free(g->names), free(g->decay), free(g->ndim), free(g->shape), free(g->numel);
    free(g->init), free(g->grad), free(g->after);
    free(g->text_lengths), free(g->wav_lengths), free(g->cond_idxs), free(g->text), free(g->codes), free(g->cond);
}


void xtts_test_golden_config(const golden *g, xtts_gpt_config *c) {
    xtts_gpt_config_defaults(c);
    const int32_t *v = g->cfg;
    c->layers = v[0], c->dim = v[1], c->heads = v[2], c->n_text_tokens = v[3], c->n_audio_tokens = v[4];
    c->start_text_token = v[5], c->stop_text_token = v[6], c->start_audio_token = v[7], c->stop_audio_token = v[8];
    c->max_text_tokens = v[9], c->max_audio_tokens = v[10], c->max_prompt_tokens = v[11], c->code_stride = v[12];
    c->use_perceiver = v[13], c->n_mels = v[17];
}

xtts_gpt_batch xtts_test_golden_batch(const golden *g, int train) {
    xtts_gpt_batch bt = {.B = g->B, .text_stride = g->L, .text = g->text, .text_lengths = g->text_lengths,
                         .codes_stride = g->MC, .codes = g->codes, .wav_lengths = g->wav_lengths,
                         .cond_frames = g->S, .cond_mels = g->cond, .cond_idxs = train ? g->cond_idxs : NULL};
    return bt;
}
