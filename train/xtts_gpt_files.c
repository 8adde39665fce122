/* xtts_gpt_files.c — what XTTS's GPT reads from an XTTS model folder: config.json (model_args
 * as Xtts.init_models passes them to GPT, GPTArgs' training fields, the recipe's optimizer), the
 * vocab.json beside it (Coqui takes the number of text tokens and the start/stop tokens from it
 * when there is one), and the weights of model.pth through the restricted reader
 * (formats/model/torch_pth.h: tensors only, nothing executed); and Coqui's initialization for a
 * run without weights. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/model/torch_pth.h"
#include "formats/model/torch_save.h"
#include "train/xtts_gpt_internal.h"

#define CONFIG_MAX_BYTES (64u << 20)

void xtts_gpt_recipe_defaults(xtts_gpt_recipe *r) {
    memset(r, 0, sizeof *r);
    r->lr = 5e-6f; /* recipes/ljspeech/xtts_v2/train_gpt_xtts.py */
    r->beta1 = 0.9f, r->beta2 = 0.96f, r->eps = 1e-8f, r->weight_decay = 1e-2f;
    r->wd_only_on_weights = 1;
    r->milestones[0] = 50000L * 18, r->milestones[1] = 150000L * 18, r->milestones[2] = 300000L * 18;
    r->n_milestones = 3;
    r->gamma = 0.5f;
    r->text_ce_weight = 0.01f, r->mel_ce_weight = 1.0f; /* GPTArgs */
    r->min_cond_samples = 66150, r->max_cond_samples = 132300;
    r->max_wav_samples = 255995, r->max_text_tokens = 200;
    r->masking_gt_prompt = 1;
}

/* an integer member of o into *dst; absent or null leaves it (*was_null says which) */
static xtts_status json_int(const char *path, json_t *o, const char *key, int *dst, int *was_null, xtts_error *err) {
    json_t *v = json_object_get(o, key);
    if (was_null) *was_null = !v || json_is_null(v);
    if (!v || json_is_null(v)) return XTTS_OK;
    if (json_is_boolean(v)) *dst = json_is_true(v);
    else if (json_is_integer(v) && json_integer_value(v) >= -2147483647LL && json_integer_value(v) <= 2147483647LL)
        *dst = (int)json_integer_value(v);
    else return xtts_error_set(err, XTTS_EINPUT, "%s: %s: expected an integer", path, key);
    return XTTS_OK;
}

static xtts_status json_float(const char *path, json_t *o, const char *key, float *dst, xtts_error *err) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return XTTS_OK;
    if (!json_is_number(v)) return xtts_error_set(err, XTTS_EINPUT, "%s: %s: expected a number", path, key);
    *dst = (float)json_number_value(v);
    return XTTS_OK;
}

/* the vocabulary's size (largest id + 1) and the ids of [START] and [STOP], as Coqui's
 * VoiceBpeTokenizer gives them (tokenizers' get_vocab with added tokens, token_to_id) */
static xtts_status load_vocab(const char *path, xtts_gpt_config *c, xtts_error *err) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return xtts_error_set(err, XTTS_EINPUT, "%s: line %d: %s", path, je.line, je.text);
    json_t *vocab = json_object_get(json_object_get(root, "model"), "vocab"), *added = json_object_get(root, "added_tokens");
    long max_id = -1, start = -1, stop = -1;
    const char *k;
    json_t *v;
    size_t i;
    json_object_foreach(vocab, k, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= (1 << 24)) {
            /* (the message first: k is the document's, freed with it) */
            xtts_status st = xtts_error_set(err, XTTS_EINPUT,
                                            "%s: model.vocab: token id of \"%.64s\" is not an integer in [0, %d)", path, k,
                                            1 << 24);
            json_decref(root);
            return st;
        }
        long id = (long)json_integer_value(v);
        max_id = id > max_id ? id : max_id;
        if (!strcmp(k, "[START]")) start = id;
        if (!strcmp(k, "[STOP]")) stop = id;
    }
    json_array_foreach(added, i, v) {
        json_t *jid = json_object_get(v, "id");
        if (!json_is_integer(jid) || json_integer_value(jid) < 0 || json_integer_value(jid) >= (1 << 24)) {
            json_decref(root);
            return xtts_error_set(err, XTTS_EINPUT, "%s: added_tokens[%zu].id is not an integer in [0, %d)", path, i, 1 << 24);
        }
        long id = (long)json_integer_value(jid);
        const char *s = json_string_value(json_object_get(v, "content"));
        max_id = id > max_id ? id : max_id;
        if (s && !strcmp(s, "[START]")) start = id;
        if (s && !strcmp(s, "[STOP]")) stop = id;
    }
    json_decref(root);
    if (max_id < 0 || start < 0 || stop < 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: %s", path,
                              max_id < 0 ? "no model.vocab of a tokenizer.json" : "no [START] or [STOP] token");
    c->n_text_tokens = (int)(max_id + 1), c->start_text_token = (int)start, c->stop_text_token = (int)stop;
    return XTTS_OK;
}

/* model_args into c and r; text tokens from the vocabulary (tokenizer_file, else vocab.json in
 * the config's folder) when there is one, as Xtts.init_models does */
static xtts_status load_model_args(const char *path, json_t *a, xtts_gpt_config *c, xtts_gpt_recipe *r,
                                   xtts_error *err) {
    int null_start = 1, null_stop = 1;
    const struct { const char *key; int *dst; } ints[] = {
        {"gpt_layers", &c->layers}, {"gpt_n_model_channels", &c->dim}, {"gpt_n_heads", &c->heads},
        {"gpt_number_text_tokens", &c->n_text_tokens}, {"gpt_num_audio_tokens", &c->n_audio_tokens},
        {"gpt_start_audio_token", &c->start_audio_token}, {"gpt_stop_audio_token", &c->stop_audio_token},
        {"gpt_max_text_tokens", &c->max_text_tokens}, {"gpt_max_audio_tokens", &c->max_audio_tokens},
        {"gpt_max_prompt_tokens", &c->max_prompt_tokens}, {"gpt_code_stride_len", &c->code_stride},
        {"gpt_use_perceiver_resampler", &c->use_perceiver}, {"gpt_use_masking_gt_prompt_approach", &r->masking_gt_prompt},
        {"min_conditioning_length", &r->min_cond_samples}, {"max_conditioning_length", &r->max_cond_samples},
        {"max_wav_length", &r->max_wav_samples}, {"max_text_length", &r->max_text_tokens}};
    xtts_status st = XTTS_OK;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !st; i++) st = json_int(path, a, ints[i].key, ints[i].dst, NULL, err);
    if (!st) st = json_int(path, a, "gpt_start_text_token", &c->start_text_token, &null_start, err);
    if (!st) st = json_int(path, a, "gpt_stop_text_token", &c->stop_text_token, &null_stop, err);
    if (!st) st = json_float(path, a, "gpt_loss_text_ce_weight", &r->text_ce_weight, err);
    if (!st) st = json_float(path, a, "gpt_loss_mel_ce_weight", &r->mel_ce_weight, err);
    if (st) return st;
    const char *tok = json_string_value(json_object_get(a, "tokenizer_file"));
    char vocab[4096];
    if (tok && *tok) snprintf(vocab, sizeof vocab, "%s", tok);
    else {
        const char *slash = strrchr(path, '/');
        snprintf(vocab, sizeof vocab, "%.*svocab.json", slash ? (int)(slash - path + 1) : 0, path);
    }
    FILE *f = fopen(vocab, "rb");
    if (f) {
        fclose(f);
        return load_vocab(vocab, c, err);
    }
    if (null_start || null_stop)
        return xtts_error_set(err, XTTS_ENOTFOUND,
                              "%s: gpt_start_text_token or gpt_stop_text_token is null and there is no %s to take "
                              "them from", path, vocab);
    return XTTS_OK;
}

/* the recipe's optimizer and schedule fields at the config's top level */
static xtts_status load_recipe(const char *path, json_t *root, xtts_gpt_recipe *r, xtts_error *err) {
    xtts_status st = json_float(path, root, "lr", &r->lr, err);
    json_t *op = json_object_get(root, "optimizer_params"), *sp = json_object_get(root, "lr_scheduler_params");
    if (!st && op) st = json_float(path, op, "eps", &r->eps, err);
    if (!st && op) st = json_float(path, op, "weight_decay", &r->weight_decay, err);
    if (!st) st = json_int(path, root, "optimizer_wd_only_on_weights", &r->wd_only_on_weights, NULL, err);
    if (!st) st = json_float(path, root, "grad_clip", &r->grad_clip, err);
    if (!st && sp) st = json_float(path, sp, "gamma", &r->gamma, err);
    if (st) return st;
    json_t *betas = op ? json_object_get(op, "betas") : NULL, *ms = sp ? json_object_get(sp, "milestones") : NULL;
    if (betas && !(json_is_array(betas) && json_array_size(betas) == 2 && json_is_number(json_array_get(betas, 0)) &&
                   json_is_number(json_array_get(betas, 1))))
        return xtts_error_set(err, XTTS_EINPUT, "%s: optimizer_params.betas: expected two numbers", path);
    if (betas) {
        r->beta1 = (float)json_number_value(json_array_get(betas, 0));
        r->beta2 = (float)json_number_value(json_array_get(betas, 1));
    }
    if (json_is_array(ms)) {
        if (json_array_size(ms) > XTTS_GPT_MAX_MILESTONES)
            return xtts_error_set(err, XTTS_EINPUT, "%s: lr_scheduler_params.milestones: more than %d", path,
                                  XTTS_GPT_MAX_MILESTONES);
        for (size_t i = 0; i < json_array_size(ms); i++)
            if (!json_is_integer(json_array_get(ms, i)) || json_integer_value(json_array_get(ms, i)) < 0)
                return xtts_error_set(err, XTTS_EINPUT, "%s: lr_scheduler_params.milestones[%zu]: expected a step (an integer >= 0)",
                                      path, i);
        r->n_milestones = (int)json_array_size(ms);
        for (int i = 0; i < r->n_milestones; i++) r->milestones[i] = (long)json_integer_value(json_array_get(ms, i));
    }
    return XTTS_OK;
}

/* the recipe's sizes the loader allocates by: conditioning and waveform lengths up to ten
 * minutes at 22050 Hz (Coqui's are 3, 6 and 11.6 s), min_conditioning_length not above max */
static xtts_status check_recipe(const char *path, const xtts_gpt_recipe *r, xtts_error *err) {
    const int ten_minutes = 22050 * 600;
    const struct { const char *name; int v, lo, hi; } f[] = {
        {"min_conditioning_length", r->min_cond_samples, 1, ten_minutes},
        {"max_conditioning_length", r->max_cond_samples, 1, ten_minutes},
        {"max_wav_length", r->max_wav_samples, 1, ten_minutes},
        {"max_text_length", r->max_text_tokens, 1, 1 << 20},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v < f[i].lo || f[i].v > f[i].hi)
            return xtts_error_set(err, XTTS_EINPUT, "%s: model_args: %s = %d is out of [%d, %d]", path, f[i].name, f[i].v,
                                  f[i].lo, f[i].hi);
    if (r->min_cond_samples > r->max_cond_samples)
        return xtts_error_set(err, XTTS_EINPUT, "%s: model_args: min_conditioning_length %d is above max_conditioning_length %d",
                              path, r->min_cond_samples, r->max_cond_samples);
    if (!(r->lr > 0.0f) || !isfinite(r->lr) || !(r->beta1 >= 0.0f && r->beta1 < 1.0f) || !(r->beta2 >= 0.0f && r->beta2 < 1.0f))
        return xtts_error_set(err, XTTS_EINPUT, "%s: lr %g or optimizer_params.betas [%g, %g] out of range (lr > 0, betas in [0, 1))",
                              path, (double)r->lr, (double)r->beta1, (double)r->beta2);
    return XTTS_OK;
}

xtts_status xtts_gpt_config_load(const char *path, xtts_gpt_config *c, xtts_gpt_recipe *r, xtts_error *err) {
    char *text = NULL;
    size_t len = 0;
    xtts_status st = xtts_read_file(path, CONFIG_MAX_BYTES, &text, &len, err);
    if (st) return st;
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    free(text);
    if (!root) return xtts_error_set(err, XTTS_EINPUT, "%s: line %d: %s", path, je.line, je.text);
    json_t *a = json_object_get(root, "model_args");
    if (!json_is_object(a)) st = xtts_error_set(err, XTTS_EINPUT, "%s: no model_args object", path);
    if (!st) st = load_model_args(path, a, c, r, err);
    if (!st) st = load_recipe(path, root, r, err);
    json_decref(root);
    if (!st) st = check_recipe(path, r, err);
    if (!st && xtts_gpt_config_check(c, err)) {
        /* the model's sizes come from this file: named, and an input error (exit 2), not a usage one */
        const char *msg = err ? err->msg : "";
        if (!strncmp(msg, "xtts-gpt: ", 10)) msg += 10;
        char line[XTTS_ERRMSG_MAX];
        snprintf(line, sizeof line, "%s", msg);
        st = xtts_error_set(err, XTTS_EINPUT, "%s: model_args: %s", path, line);
    }
    return st;
}

/* ---- weights ----------------------------------------------------------------------------- */

/* where GPT's tensors sit in a file: Xtts's model.pth ("gpt."), a GPTTrainer checkpoint
 * ("xtts.gpt."), either under a "model" dict, or GPT's own state dict */
static const char *gpt_prefix(const xtts_pth *f) {
    static const char *prefixes[] = {"model.gpt.", "gpt.", "model.xtts.gpt.", "xtts.gpt.", ""};
    char key[XTTS_GPT_NAME_MAX + 32];
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        snprintf(key, sizeof key, "%stext_embedding.weight", prefixes[i]);
        if (xtts_pth_find(f, key)) return prefixes[i];
    }
    return NULL;
}

xtts_status xtts_gpt_load_weights(xtts_gpt *m, const char *path, xtts_error *err) {
    xtts_pth *f = NULL;
    xtts_status st = xtts_pth_open(path, &f, err);
    if (st) return st;
    const char *prefix = gpt_prefix(f);
    if (!prefix) {
        xtts_pth_close(f);
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no gpt.text_embedding.weight (not an XTTS model or GPT state dict)",
                              path);
    }
    for (size_t i = 0; i < m->nt && !st; i++) {
        char key[XTTS_GPT_NAME_MAX + 32];
        snprintf(key, sizeof key, "%s%s", prefix, m->t[i].name);
        const xtts_pth_tensor *t;
        st = xtts_pth_expect(f, key, m->t[i].ndim, m->t[i].shape, &t, err);
        if (!st) xtts_gpt_set_tensor(m, i, t->data);
    }
    xtts_pth_close(f);
    return st;
}

/* ---- Coqui's initialization ---------------------------------------------------------------- */

static double uniform01(uint64_t *s) { return (xtts_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0); }

static double normal01(uint64_t *s) {
    double u1 = ((xtts_splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740993.0), u2 = uniform01(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int ends_with(const char *s, const char *t) {
    size_t a = strlen(s), b = strlen(t);
    return a >= b && !strcmp(s + a - b, t);
}

/* one tensor's initial values by the rule of the module that owns it: torch's Linear and Conv1d
 * (uniform in +-1/sqrt(fan_in), bias too), Embedding (N(0, 1)), norms (1 and 0), HF GPT-2's
 * _init_weights (N(0, 0.02), c_proj N(0, 0.02 / sqrt(2 layers)), biases 0), the position tables
 * and perceiver latents (N(0, 0.02)), zero_module's proj_out (0) */
static void init_tensor(xtts_gpt *m, size_t i, uint64_t *s) {
    const xtts_gpt_tensor *t = &m->t[i];
    float *w = xtts_gpt_w(m, i);
    const char *n = t->name;
    int is_gpt = !strncmp(n, "gpt.", 4), is_bias = ends_with(n, ".bias");
    int norm = strstr(n, "norm") || strstr(n, ".ln_");
    double fan_in = t->ndim >= 2 ? (double)t->shape[1] * (t->ndim == 3 ? (double)t->shape[2] : 1.0) : 0.0;
    if (is_bias && !norm && !is_gpt) { /* a Linear's or Conv1d's bias: its weight's fan-in */
        const xtts_gpt_tensor *wt = &m->t[i - 1];
        fan_in = (double)wt->shape[1] * (wt->ndim == 3 ? (double)wt->shape[2] : 1.0);
    }
    for (size_t j = 0; j < t->numel; j++) {
        double v;
        if (strstr(n, ".proj_out.")) v = 0.0;
        else if (norm || ends_with(n, ".gamma")) v = is_bias ? 0.0 : 1.0;
        else if (is_gpt) v = is_bias ? 0.0 : normal01(s) * (strstr(n, "c_proj") ? 0.02 / sqrt(2.0 * m->c.layers) : 0.02);
        else if (strstr(n, "pos_embedding") || ends_with(n, ".latents")) v = 0.02 * normal01(s);
        else if (!strcmp(n, "text_embedding.weight") || !strcmp(n, "mel_embedding.weight")) v = normal01(s);
        else v = (2.0 * uniform01(s) - 1.0) / sqrt(fan_in);
        w[j] = (float)v;
    }
}

void xtts_gpt_init_random(xtts_gpt *m, uint64_t seed) {
    uint64_t s = seed;
    for (size_t i = 0; i < m->nt; i++) init_tensor(m, i, &s);
}

/* ---- writing model.pth ------------------------------------------------------------------- */

/* the key of GPT tensor i in a file whose GPT tensors carry prefix (as gpt_prefix found it) */
static void key_of(const xtts_gpt *m, size_t i, const char *prefix, char *out, size_t cap) {
    snprintf(out, cap, "%s%s", prefix, m->t[i].name);
}

/* the GPT tensor a key names (rest: the key after GPT's prefix), directly or as one of the
 * aliases that GPT.init_gpt_for_inference adds to the state dict (XTTS v1's model.pth holds
 * them: gpt_inference's transformer, embeddings, norm and head, gpt.wte, each the same
 * Parameter as a training tensor), so that no stale copy is carried next to a trained one */
static long gpt_tensor_of(const xtts_gpt *m, const char *rest) {
    static const char *alias[][2] = {{"gpt_inference.transformer.", "gpt."},
                                     {"gpt_inference.pos_embedding.", "mel_pos_embedding."},
                                     {"gpt_inference.embeddings.", "mel_embedding."},
                                     {"gpt_inference.final_norm.", "final_norm."},
                                     {"gpt_inference.lm_head.0.", "final_norm."},
                                     {"gpt_inference.lm_head.1.", "mel_head."},
                                     {"gpt.wte.", "mel_embedding."}};
    long g = xtts_gpt_find_tensor(m, rest);
    for (size_t i = 0; g < 0 && i < sizeof alias / sizeof alias[0]; i++) {
        size_t n = strlen(alias[i][0]);
        char name[XTTS_GPT_NAME_MAX + 32];
        if (strncmp(rest, alias[i][0], n) != 0) continue;
        snprintf(name, sizeof name, "%s%s", alias[i][1], rest + n);
        g = xtts_gpt_find_tensor(m, name);
    }
    return g;
}

/* a tensor of the input file that is not GPT's is written back as it was stored: float and
 * int64 only (what torch_save writes) */
static xtts_status carried(const xtts_pth *in, const xtts_pth_tensor *src, xtts_error *err) {
    if (strcmp(src->stored_dtype, "float32") && strcmp(src->stored_dtype, "float16") &&
        strcmp(src->stored_dtype, "bfloat16") && strcmp(src->stored_dtype, "int64"))
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "%s: tensor %s: %s is not carried (float and int64 only)",
                              xtts_pth_label(in), src->name, src->stored_dtype);
    return XTTS_OK;
}

/* the tensors to write: every tensor of the input file in its order, GPT's replaced by the
 * model's (Coqui's layout), or GPT's alone under "gpt." without an input */
static xtts_status out_tensors(xtts_gpt *m, const xtts_pth *in, const char *prefix, xtts_pth_out_tensor *t,
                               char (*keys)[XTTS_GPT_NAME_MAX + 32], float *vals, size_t *n, xtts_error *err) {
    size_t k = 0, strip = in && !strncmp(prefix, "model.", 6) ? 6 : 0;
    size_t count = in ? xtts_pth_count(in) : m->nt;
    for (size_t i = 0; i < count; i++) {
        const xtts_pth_tensor *src = in ? xtts_pth_tensor_at(in, i) : NULL;
        long g = -1;
        if (src && strncmp(src->name, prefix, strlen(prefix)) == 0) g = gpt_tensor_of(m, src->name + strlen(prefix));
        if (src && g >= 0 && src->numel != m->t[g].numel) g = -1;
        if (!src) g = (long)i;
        if (src && strip && strncmp(src->name, "model.", 6) != 0) continue; /* optimizer, config: not the model */
        xtts_pth_out_tensor *o = &t[k];
        memset(o, 0, sizeof *o);
        if (g >= 0) {
            const xtts_gpt_tensor *gt = &m->t[g];
            float *dst = vals + gt->offset;
            xtts_gpt_get_tensor(m, (size_t)g, 0, dst);
            if (src) snprintf(keys[k], sizeof keys[k], "%s", src->name + strip);
            else key_of(m, (size_t)g, "gpt.", keys[k], sizeof keys[k]);
            o->ndim = gt->ndim, o->data = dst;
            for (int d = 0; d < gt->ndim; d++) o->shape[d] = gt->shape[d];
        } else {
            xtts_status st = carried(in, src, err);
            if (st) return st;
            snprintf(keys[k], sizeof keys[k], "%s", src->name + strip);
            o->ndim = src->ndim, o->data = src->data, o->dtype = src->stored_dtype;
            for (int d = 0; d < src->ndim; d++) o->shape[d] = src->shape[d];
        }
        o->name = keys[k++];
    }
    *n = k;
    return XTTS_OK;
}

xtts_status xtts_gpt_save_pth(xtts_gpt *m, const char *init_pth, const char *path, xtts_error *err) {
    xtts_pth *in = NULL;
    xtts_status st = init_pth ? xtts_pth_open(init_pth, &in, err) : XTTS_OK;
    if (st) return st;
    const char *prefix = in ? gpt_prefix(in) : "gpt.";
    size_t cap = in ? xtts_pth_count(in) : m->nt, n = 0;
    xtts_pth_out_tensor *t = calloc(cap ? cap : 1, sizeof *t);
    char(*keys)[XTTS_GPT_NAME_MAX + 32] = calloc(cap ? cap : 1, sizeof *keys);
    float *vals = malloc(m->nparams * sizeof(float));
    if (!prefix) st = xtts_error_set(err, XTTS_ENOTFOUND, "%s: no gpt.text_embedding.weight", init_pth);
    else if (!t || !keys || !vals) st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    if (!st) st = out_tensors(m, in, prefix, t, keys, vals, &n, err);
    if (!st) st = xtts_pth_save(path, "model", t, n, err);
    free(t), free(keys), free(vals);
    xtts_pth_close(in);
    return st;
}

xtts_status xtts_gpt_check_carry(const xtts_gpt *m, const char *init_pth, xtts_error *err) {
    xtts_pth *in = NULL;
    xtts_status st = xtts_pth_open(init_pth, &in, err);
    if (st) return st;
    const char *prefix = gpt_prefix(in);
    size_t strip = !strncmp(prefix ? prefix : "", "model.", 6) ? 6 : 0;
    for (size_t i = 0; prefix && !st && i < xtts_pth_count(in); i++) {
        const xtts_pth_tensor *src = xtts_pth_tensor_at(in, i);
        long g = strncmp(src->name, prefix, strlen(prefix)) ? -1 : gpt_tensor_of(m, src->name + strlen(prefix));
        if (g >= 0 && src->numel == m->t[g].numel) continue;
        if (strip && strncmp(src->name, "model.", 6) != 0) continue;
        st = carried(in, src, err);
    }
    xtts_pth_close(in);
    return st;
}
