/* test_dvae.c — the DiscreteVAE encoder (kernels/dvae.h) with weights and norms read from
 * model files by Coqui's key names (formats/model/torch_dvae.h), against Coqui's own DiscreteVAE
 * run on the same weights and clip (tests/golden/dvae/, made by
 * tests/golden/make_dvae_golden.py): the latent within 1e-4 and the codes equal. Wrong
 * files: a missing key, a wrong shape, a nested state dict, bad mel norms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/model/torch_dvae.h"
#include "formats/model/torch_pth.h"
#include "kernels/dvae.h"

#define GOLDEN "tests/golden/dvae/"
#define CHANNELS 16
#define FRAMES 61
#define CODES 16
#define DIM 8

static xtts_pth *open_golden(const char *name) {
    xtts_pth *f = NULL;
    xtts_error err;
    if (xtts_pth_open(name, &f, &err) != XTTS_OK) fail_msg("%s", err.msg);
    return f;
}

static void read_f32(const char *path, float *out, size_t n) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(out, sizeof(float), n, fp), n);
    fclose(fp);
}

/* The golden clip divided by the golden norms. */
static void golden_input(float *x) {
    xtts_pth *nf = open_golden(GOLDEN "mel_stats.pth");
    const float *norms;
    xtts_error err;
    assert_int_equal(xtts_mel_norms_from_pth(nf, CHANNELS, &norms, &err), XTTS_OK);
    read_f32(GOLDEN "mel.f32", x, CHANNELS * FRAMES);
    for (int c = 0; c < CHANNELS; c++)
        for (int t = 0; t < FRAMES; t++) x[c * FRAMES + t] /= norms[c];
    xtts_pth_close(nf);
}

/* Encode the golden clip with the encoder of file f; codes and latent out. */
static void encode_with(const xtts_pth *f, uint16_t *codes, float *latent) {
    xtts_dvae_weights w;
    xtts_error err;
    if (xtts_dvae_weights_from_pth(f, &w, &err) != XTTS_OK) fail_msg("%s", err.msg);
    assert_int_equal(w.cfg.channels, CHANNELS);
    assert_int_equal(w.cfg.hidden, 4);
    assert_int_equal(w.cfg.codebook_dim, DIM);
    assert_int_equal(w.cfg.num_tokens, 32);
    xtts_dvae *d = NULL;
    assert_int_equal(xtts_dvae_new(&w, &d, &err), XTTS_OK);
    float x[CHANNELS * FRAMES];
    golden_input(x);
    assert_int_equal(xtts_dvae_codes_len(FRAMES), CODES);
    assert_int_equal(xtts_dvae_encode(d, x, FRAMES, codes, latent, &err), XTTS_OK);
    xtts_dvae_delete(d);
}

static void test_codes_equal_coquis_discrete_vae(void **state) {
    (void)state;
    xtts_pth *f = open_golden(GOLDEN "dvae_small.pth");
    uint16_t codes[CODES];
    float latent[DIM * CODES], want[DIM * CODES];
    encode_with(f, codes, latent);
    read_f32(GOLDEN "latent.f32", want, DIM * CODES);
    double worst = 0;
    for (int i = 0; i < DIM * CODES; i++) {
        double e = fabs((double)latent[i] - want[i]) / (1.0 + fabs(want[i]));
        if (e > worst) worst = e;
    }
    if (worst > 1e-4) fail_msg("latent differs from Coqui's by %g", worst);
    print_message("latent within %.2g of Coqui's\n", worst);
    FILE *fp = fopen(GOLDEN "codes.txt", "r");
    assert_non_null(fp);
    char line[256];
    int k = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        assert_true(k < CODES);
        int code = atoi(line);
        double margin = atof(strchr(line, '\t') + 1);
        if (codes[k] != code && margin > 1e-6) fail_msg("code %d: %d, Coqui's %d (margin %g)", k, codes[k], code, margin);
        k++;
    }
    fclose(fp);
    assert_int_equal(k, CODES);
    xtts_pth_close(f);
}

static void test_codes_len_is_one_per_four_frames_rounded_up(void **state) {
    (void)state;
    size_t want[][2] = {{0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 3}, {61, 16}, {1723, 431}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) assert_int_equal(xtts_dvae_codes_len(want[k][0]), want[k][1]);
    xtts_dvae_delete(NULL);
}

/* A safetensors file of f's tensors, each renamed by rename (NULL: left out). */
static char *safetensors_of(const xtts_pth *f, const char *(*rename)(const char *, char *), size_t *len) {
    size_t hcap = 1 << 16, data_bytes = 0, h = 0;
    for (size_t i = 0; i < xtts_pth_count(f); i++) data_bytes += xtts_pth_tensor_at(f, i)->numel * 4;
    char *header = malloc(hcap), *out = malloc(8 + hcap + data_bytes);
    size_t off = 0;
    h += (size_t)snprintf(header + h, hcap - h, "{");
    for (size_t i = 0; i < xtts_pth_count(f); i++) {
        const xtts_pth_tensor *t = xtts_pth_tensor_at(f, i);
        char buf[256];
        const char *name = rename(t->name, buf);
        if (!name) continue;
        h += (size_t)snprintf(header + h, hcap - h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", off || h > 1 ? "," : "", name);
        for (int d = 0; d < t->ndim; d++) h += (size_t)snprintf(header + h, hcap - h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        h += (size_t)snprintf(header + h, hcap - h, "],\"data_offsets\":[%zu,%zu]}", off, off + t->numel * 4);
        memcpy(out + 8 + hcap + off, t->data, t->numel * 4); /* placed after the header below */
        off += t->numel * 4;
    }
    h += (size_t)snprintf(header + h, hcap - h, "}");
    for (int k = 0; k < 8; k++) out[k] = (char)((uint64_t)h >> (8 * k));
    memcpy(out + 8, header, h);
    memmove(out + 8 + h, out + 8 + hcap, off);
    free(header);
    *len = 8 + h + off;
    return out;
}

static const char *keep(const char *name, char *buf) { return strcpy(buf, name); }
static const char *nest(const char *name, char *buf) { snprintf(buf, 256, "model.%s", name); return buf; }
static const char *drop_one(const char *name, char *buf) {
    return strcmp(name, "encoder.3.net.2.weight") == 0 ? NULL : strcpy(buf, name);
}
static const char *rename_one(const char *name, char *buf) {
    return strcmp(name, "encoder.5.bias") == 0 ? "encoder.5.b" : strcpy(buf, name);
}

static void expect_weights_refused(const xtts_pth *f, const char *(*rename)(const char *, char *), const char *want) {
    size_t len;
    char *bytes = safetensors_of(f, rename, &len);
    xtts_pth *g = NULL;
    xtts_error err;
    assert_int_equal(xtts_pth_open_mem(bytes, len, "dvae.safetensors", &g, &err), XTTS_OK);
    xtts_dvae_weights w;
    xtts_status st = xtts_dvae_weights_from_pth(g, &w, &err);
    if (!want) {
        assert_int_equal(st, XTTS_OK);
    } else {
        assert_int_not_equal(st, XTTS_OK);
        assert_int_equal(xtts_exit_code(st), 2);
        if (strcmp(err.msg, want) != 0) fail_msg("message '%s', want '%s'", err.msg, want);
    }
    xtts_pth_close(g);
    free(bytes);
}

static void test_weights_by_key_missing_or_misshapen_are_refused_by_name(void **state) {
    (void)state;
    xtts_pth *f = open_golden(GOLDEN "dvae_small.pth");
    expect_weights_refused(f, keep, NULL);
    expect_weights_refused(f, nest, NULL); /* a checkpoint nesting the state dict under "model." */
    expect_weights_refused(f, drop_one, "dvae.safetensors: key 'encoder.3.net.2.weight' missing");
    expect_weights_refused(f, rename_one, "dvae.safetensors: key 'encoder.5.bias' missing");
    xtts_pth_close(f);
    /* the norms file is not a DVAE, and a DVAE is not a norms file */
    xtts_pth *n = open_golden(GOLDEN "mel_stats.pth");
    xtts_dvae_weights w;
    xtts_error err;
    assert_int_equal(xtts_dvae_weights_from_pth(n, &w, &err), XTTS_EINPUT);
    assert_string_equal(err.msg, GOLDEN "mel_stats.pth: key 'encoder.0.0.weight' missing: not a DiscreteVAE state dict (XTTS's dvae.pth)");
    const float *norms;
    assert_int_equal(xtts_mel_norms_from_pth(n, 80, &norms, &err), XTTS_EMISMATCH);
    assert_string_equal(err.msg, GOLDEN "mel_stats.pth: 16 values in 1 dimensions, 80 mel norms expected");
    xtts_pth_close(n);
    f = open_golden(GOLDEN "dvae_small.pth");
    assert_int_equal(xtts_mel_norms_from_pth(f, 16, &norms, &err), XTTS_ENOTFOUND);
    xtts_pth_close(f);
}

static void test_misshapen_weight_is_refused_with_both_shapes(void **state) {
    (void)state;
    const char *json = "{\"encoder.0.0.weight\":{\"dtype\":\"F32\",\"shape\":[4,16,3],\"data_offsets\":[0,768]},"
                       "\"encoder.0.0.bias\":{\"dtype\":\"F32\",\"shape\":[5],\"data_offsets\":[768,788]},"
                       "\"codebook.embed\":{\"dtype\":\"F32\",\"shape\":[8,32],\"data_offsets\":[788,1812]}}";
    size_t h = strlen(json), len = 8 + h + 1812;
    char *bytes = calloc(1, len);
    for (int k = 0; k < 8; k++) bytes[k] = (char)((uint64_t)h >> (8 * k));
    memcpy(bytes + 8, json, h);
    xtts_pth *g = NULL;
    xtts_error err;
    assert_int_equal(xtts_pth_open_mem(bytes, len, "dvae.safetensors", &g, &err), XTTS_OK);
    xtts_dvae_weights w;
    assert_int_equal(xtts_dvae_weights_from_pth(g, &w, &err), XTTS_EMISMATCH);
    assert_string_equal(err.msg, "dvae.safetensors: key 'encoder.0.0.bias' has shape (5,), (4,) expected");
    xtts_pth_close(g);
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_equal_coquis_discrete_vae),
        cmocka_unit_test(test_codes_len_is_one_per_four_frames_rounded_up),
        cmocka_unit_test(test_weights_by_key_missing_or_misshapen_are_refused_by_name),
        cmocka_unit_test(test_misshapen_weight_is_refused_with_both_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
