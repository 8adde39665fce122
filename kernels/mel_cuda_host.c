/* mel_cuda_host.c — the kernels/mel_cuda.h API as the programs see it, so callers need no
 * #ifdef: in a CUDA build, functions that forward to the CUDA plugin (kernels/cuda_plugin.h;
 * the code itself is kernels/mel.cu, loaded at run time); in a build without CUDA, functions
 * that say so and return XTTS_EUNSUPPORTED.
 */
#include "kernels/mel_cuda.h"

#include <stdio.h>
#include <string.h>

#ifdef XTTS_HAVE_CUDA
#include "kernels/cuda_plugin.h"

/* The plugin's function `name` as a function pointer of the type of *fp; 0 when missing
 * (why says why). */
#define PLUGIN_FN(fp, name, why, why_len) plugin_fn((void *)(fp), sizeof *(fp), (name), (why), (why_len))
static int plugin_fn(void *fp, size_t size, const char *name, char *why, size_t why_len) {
    void *sym = xtts_cuda_plugin_symbol(name, why, why_len);
    if (!sym) return 0;
    memcpy(fp, &sym, size);
    return 1;
}

int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len) {
    int (*f)(int, char *, size_t);
    if (!PLUGIN_FN(&f, "xtts_cudaplugin_device_usable", why, why_len)) return 0;
    return f(ordinal, why, why_len);
}

xtts_status xtts_mel_cuda_new(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                              xtts_mel_cuda **out, xtts_error *err) {
    xtts_status (*f)(const xtts_mel_params *, int, size_t, size_t, xtts_mel_cuda **, xtts_error *);
    char why[512];
    *out = NULL;
    if (!PLUGIN_FN(&f, "xtts_cudaplugin_mel_cuda_new", why, sizeof why))
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda:%d is not usable: %s", ordinal, why);
    return f(p, ordinal, max_clips, max_batch_samples, out, err);
}

void xtts_mel_cuda_delete(xtts_mel_cuda *m) {
    void (*f)(xtts_mel_cuda *);
    if (m && PLUGIN_FN(&f, "xtts_cudaplugin_mel_cuda_delete", NULL, 0)) f(m);
}

xtts_status xtts_mel_cuda_compute_batch(xtts_mel_cuda *m, size_t n_clips, const float *const *samples,
                                        const size_t *n_samples, float *const *out, const size_t *out_stride,
                                        size_t *n_frames, float *pad_values, xtts_error *err) {
    xtts_status (*f)(xtts_mel_cuda *, size_t, const float *const *, const size_t *, float *const *, const size_t *,
                     size_t *, float *, xtts_error *);
    char why[512];
    if (!PLUGIN_FN(&f, "xtts_cudaplugin_mel_cuda_compute_batch", why, sizeof why))
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda mel: %s", why);
    return f(m, n_clips, samples, n_samples, out, out_stride, n_frames, pad_values, err);
}

#else

int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len) {
    (void)ordinal;
    if (why) snprintf(why, why_len, "this build has no CUDA support (built without nvcc, or with CUDA=0)");
    return 0;
}

xtts_status xtts_mel_cuda_new(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                              xtts_mel_cuda **out, xtts_error *err) {
    (void)p; (void)max_clips; (void)max_batch_samples;
    *out = NULL;
    return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda:%d is not usable: this build has no CUDA support", ordinal);
}

void xtts_mel_cuda_delete(xtts_mel_cuda *m) { (void)m; }

xtts_status xtts_mel_cuda_compute_batch(xtts_mel_cuda *m, size_t n_clips, const float *const *samples,
                                        const size_t *n_samples, float *const *out, const size_t *out_stride,
                                        size_t *n_frames, float *pad_values, xtts_error *err) {
    (void)m; (void)n_clips; (void)samples; (void)n_samples; (void)out; (void)out_stride; (void)n_frames;
    (void)pad_values;
    return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda mel: this build has no CUDA support");
}

#endif

xtts_status xtts_device_choose(const char *spec, const char *prog, int *ordinal, xtts_error *err) {
    char why[256] = "";
    *ordinal = -1;
    if (!spec || !strcmp(spec, "auto")) {
        if (xtts_cuda_device_usable(0, why, sizeof why)) {
            *ordinal = 0;
            fprintf(stderr, "%s: device: cuda:0\n", prog);
        } else {
            fprintf(stderr, "%s: device: cpu (CUDA not used: %s)\n", prog, why);
        }
        return XTTS_OK;
    }
    if (!strcmp(spec, "cpu")) return XTTS_OK;
    if (!strncmp(spec, "cuda", 4) && (spec[4] == '\0' || spec[4] == ':')) {
        long n = 0;
        if (spec[4] == ':' && xtts_parse_long(spec + 5, 0, 1024, &n) != 0)
            return xtts_error_set(err, XTTS_EUSAGE, "--device %s: expected cuda or cuda:N with N a device number", spec);
        if (!xtts_cuda_device_usable((int)n, why, sizeof why))
            return xtts_error_set(err, XTTS_EUNSUPPORTED, "--device %s: no usable CUDA device: %s", spec, why);
        *ordinal = (int)n;
        return XTTS_OK;
    }
    return xtts_error_set(err, XTTS_EUSAGE, "--device %s: expected auto, cpu, cuda or cuda:N", spec);
}
