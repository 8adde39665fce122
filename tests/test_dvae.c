/* test_dvae.c — the DiscreteVAE encoder (kernels/dvae.h) with weights and norms read from
 * model files by Coqui's key names (formats/model/torch_dvae.h), against Coqui's own DiscreteVAE
 * run on the same weights and clip (tests/golden/dvae/, made by
 * tests/golden/make_dvae_golden.py): the latent within 1e-4 and the codes equal. Wrong
 * files: a missing key, a wrong shape, a nested state dict, bad mel norms. */
#include <math.h>
#include <omp.h>
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

/* ---- odd sizes against a direct convolution written here ---------------------------------- */

/* Weights of a small encoder (C mel channels, H hidden, I inner, D latent, N codes) carved in
 * order out of wt, which must hold them all. */
static xtts_dvae_weights weights_from(const float *wt, int C, int H, int I, int D, int N) {
    xtts_dvae_weights w = {.cfg = {C, H, D, N}};
    const float *p = wt;
    w.conv0_w = p, p += H * C * 3, w.conv0_b = p, p += H;
    w.conv1_w = p, p += I * H * 3, w.conv1_b = p, p += I;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) w.res_w[r][k] = p, p += I * I * (k == 2 ? 1 : 3), w.res_b[r][k] = p, p += I;
    w.proj_w = p, p += D * I, w.proj_b = p, p += D;
    w.codebook = p;
    return w;
}

static void ref_conv(const float *x, int cin, int tin, const float *w, const float *b, int cout, int k, int stride,
                     int tout, double *y) {
    int pad = (k - 1) / 2;
    for (int o = 0; o < cout; o++)
        for (int t = 0; t < tout; t++) {
            double acc = b[o];
            for (int i = 0; i < cin; i++)
                for (int kk = 0; kk < k; kk++) {
                    int src = t * stride + kk - pad;
                    if (src >= 0 && src < tin) acc += (double)w[(o * cin + i) * k + kk] * x[i * tin + src];
                }
            y[o * tout + t] = acc;
        }
}

static void to_float(const double *in, float *out, int n, int relu) {
    for (int i = 0; i < n; i++) out[i] = (float)(relu && in[i] < 0 ? 0 : in[i]);
}

/* Sizes that leave partial blocks everywhere (rows not a multiple of 4, columns of 16). */
static void test_odd_sizes_match_a_direct_convolution(void **state) {
    (void)state;
    enum { C = 3, H = 3, I = 6, D = 5, N = 7, T = 75 };
    static float wt[20000];
    uint64_t seed = 38;
    for (size_t i = 0; i < sizeof wt / sizeof wt[0]; i++) wt[i] = (float)((xtts_splitmix64(&seed) >> 40) / 16777216.0 - 0.5);
    xtts_dvae_weights w = weights_from(wt, C, H, I, D, N);
    float mel[C * T];
    for (int i = 0; i < C * T; i++) mel[i] = (float)((xtts_splitmix64(&seed) >> 40) / 4194304.0 - 2.0);
    /* the reference, layer by layer, rounded to float between layers as the kernel keeps them */
    int t1 = (T + 1) / 2, t2 = (t1 + 1) / 2;
    static double yd[I * T];
    static float h1[H * T], x[I * T], a[I * T], bb[I * T], z[D * T];
    ref_conv(mel, C, T, w.conv0_w, w.conv0_b, H, 3, 2, t1, yd); to_float(yd, h1, H * t1, 1);
    ref_conv(h1, H, t1, w.conv1_w, w.conv1_b, I, 3, 2, t2, yd); to_float(yd, x, I * t2, 1);
    for (int r = 0; r < 3; r++) {
        ref_conv(x, I, t2, w.res_w[r][0], w.res_b[r][0], I, 3, 1, t2, yd); to_float(yd, a, I * t2, 1);
        ref_conv(a, I, t2, w.res_w[r][1], w.res_b[r][1], I, 3, 1, t2, yd); to_float(yd, bb, I * t2, 1);
        ref_conv(bb, I, t2, w.res_w[r][2], w.res_b[r][2], I, 1, 1, t2, yd);
        for (int i = 0; i < I * t2; i++) x[i] = (float)(x[i] + yd[i]);
    }
    ref_conv(x, I, t2, w.proj_w, w.proj_b, D, 1, 1, t2, yd); to_float(yd, z, D * t2, 0);
    xtts_dvae *d = NULL;
    xtts_error err;
    assert_int_equal(xtts_dvae_new(&w, &d, &err), XTTS_OK);
    uint16_t codes[T];
    float latent[D * T];
    assert_int_equal(xtts_dvae_encode(d, mel, T, codes, latent, &err), XTTS_OK);
    for (int i = 0; i < D * t2; i++)
        if (fabs(latent[i] - z[i]) > 1e-5 * (1 + fabs(z[i]))) fail_msg("latent[%d] = %g, direct %g", i, latent[i], z[i]);
    for (int t = 0; t < t2; t++) {
        double best = 1e300, second = 1e300;
        int arg = 0;
        for (int j = 0; j < N; j++) {
            double dist = 0;
            for (int i = 0; i < D; i++) dist += ((double)latent[i * t2 + t] - w.codebook[i * N + j]) * ((double)latent[i * t2 + t] - w.codebook[i * N + j]);
            if (dist < best) second = best, best = dist, arg = j;
            else if (dist < second) second = dist;
        }
        if (codes[t] != arg && second - best > 1e-5) fail_msg("code %d: %d, nearest %d", t, codes[t], arg);
    }
    assert_int_equal(xtts_dvae_encode(d, mel, 0, codes, NULL, &err), XTTS_EUSAGE);
    xtts_dvae_delete(d);
}

/* A long clip cut into parts for the threads (kernels/dvae.c, encode_segments): codes and
 * latent equal the whole clip's encoded on one thread, bit for bit, for lengths of every
 * phase modulo 4 and parts of every count up to 5. */
static void test_parts_side_by_side_equal_the_whole_clip(void **state) {
    (void)state;
    enum { C = 3, H = 3, I = 6, D = 5, N = 7, T = 1203 };
    static float wt[20000], mel[C * T], lat1[D * T], latn[D * T];
    static uint16_t codes1[T], codesn[T];
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof wt / sizeof wt[0]; i++) wt[i] = (float)((xtts_splitmix64(&seed) >> 40) / 16777216.0 - 0.5);
    for (int i = 0; i < C * T; i++) mel[i] = (float)((xtts_splitmix64(&seed) >> 40) / 4194304.0 - 2.0);
    xtts_dvae_weights w = weights_from(wt, C, H, I, D, N);
    xtts_dvae *d = NULL;
    xtts_error err;
    assert_int_equal(xtts_dvae_new(&w, &d, &err), XTTS_OK);
    int saved = omp_get_max_threads();
    for (int frames = T - 3; frames <= T; frames++) {
        size_t t2 = xtts_dvae_codes_len((size_t)frames);
        omp_set_num_threads(1);
        assert_int_equal(xtts_dvae_encode(d, mel, (size_t)frames, codes1, lat1, &err), XTTS_OK);
        for (int threads = 2; threads <= 5; threads++) {
            omp_set_num_threads(threads);
            memset(latn, 0, sizeof latn);
            assert_int_equal(xtts_dvae_encode(d, mel, (size_t)frames, codesn, latn, &err), XTTS_OK);
            assert_memory_equal(codesn, codes1, t2 * sizeof(uint16_t));
            assert_memory_equal(latn, lat1, D * t2 * sizeof(float));
        }
    }
    omp_set_num_threads(saved);
    xtts_dvae_delete(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_equal_coquis_discrete_vae),
        cmocka_unit_test(test_codes_len_is_one_per_four_frames_rounded_up),
        cmocka_unit_test(test_weights_by_key_missing_or_misshapen_are_refused_by_name),
        cmocka_unit_test(test_misshapen_weight_is_refused_with_both_shapes),
        cmocka_unit_test(test_odd_sizes_match_a_direct_convolution),
        cmocka_unit_test(test_parts_side_by_side_equal_the_whole_clip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
