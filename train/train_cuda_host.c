/* train_cuda_host.c — train/train_cuda.h as the programs see it: in a build without CUDA
 * every call says so; in a CUDA build every call forwards to the CUDA plugin
 * (kernels/cuda_plugin.h), where train/train_cuda.cu lives. */
#include "train/train_cuda.h"

#ifndef XTTS_HAVE_CUDA

static xtts_status no_cuda(xtts_error *err) {
    return xtts_error_set(err, XTTS_EUNSUPPORTED, "this build has no CUDA support (built without nvcc, or CUDA=0)");
}

xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_precision precision, xtts_cuda_trainer **out,
                                  xtts_error *err) {
    (void)m, (void)ordinal, (void)precision;
    *out = NULL;
    return no_cuda(err);
}
void xtts_cuda_trainer_delete(xtts_cuda_trainer *t) { (void)t; }
xtts_status xtts_cuda_trainer_pin(xtts_cuda_trainer *t, void *ptr, size_t bytes, xtts_error *err) {
    (void)t, (void)ptr, (void)bytes;
    return no_cuda(err);
}
xtts_status xtts_cuda_trainer_upload(xtts_cuda_trainer *t, const float *p, const float *m, const float *v,
                                     xtts_error *err) {
    (void)t, (void)p, (void)m, (void)v;
    return no_cuda(err);
}
xtts_status xtts_cuda_trainer_download(xtts_cuda_trainer *t, float *p, float *m, float *v, xtts_error *err) {
    (void)t, (void)p, (void)m, (void)v;
    return no_cuda(err);
}
xtts_status xtts_cuda_trainer_stage(xtts_cuda_trainer *t, const xtts_model_batch *bt, xtts_error *err) {
    (void)t, (void)bt;
    return no_cuda(err);
}
xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *ml, float *sl, int *frames,
                                      xtts_error *err) {
    (void)t, (void)loss, (void)ml, (void)sl, (void)frames;
    return no_cuda(err);
}
xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                   float *loss, float *ml, float *sl, float *norm, xtts_error *err) {
    (void)t, (void)t_step, (void)lr, (void)o, (void)loss, (void)ml, (void)sl, (void)norm;
    return no_cuda(err);
}

#else
#include <string.h>

#include "kernels/cuda_plugin.h"

/* The plugin's function as a function pointer of *fp's type; on failure the status to return. */
static xtts_status plugin_fn(void *fp, size_t size, const char *name, xtts_error *err) {
    char why[512];
    void *sym = xtts_cuda_plugin_symbol(name, why, sizeof why);
    if (!sym) return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda trainer: %s", why);
    memcpy(fp, &sym, size);
    return XTTS_OK;
}
#define PLUGIN_FN(fp, name) plugin_fn((void *)(fp), sizeof *(fp), (name), err)

xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_precision precision, xtts_cuda_trainer **out,
                                  xtts_error *err) {
    xtts_status (*f)(const xtts_model *, int, xtts_precision, xtts_cuda_trainer **, xtts_error *);
    *out = NULL;
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_new");
    return st ? st : f(m, ordinal, precision, out, err);
}
void xtts_cuda_trainer_delete(xtts_cuda_trainer *t) {
    void (*f)(xtts_cuda_trainer *);
    void *sym = t ? xtts_cuda_plugin_symbol("xtts_cudaplugin_trainer_delete", NULL, 0) : NULL;
    if (!sym) return;
    memcpy(&f, &sym, sizeof f);
    f(t);
}
xtts_status xtts_cuda_trainer_pin(xtts_cuda_trainer *t, void *ptr, size_t bytes, xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, void *, size_t, xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_pin");
    return st ? st : f(t, ptr, bytes, err);
}
xtts_status xtts_cuda_trainer_upload(xtts_cuda_trainer *t, const float *p, const float *m, const float *v,
                                     xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, const float *, const float *, const float *, xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_upload");
    return st ? st : f(t, p, m, v, err);
}
xtts_status xtts_cuda_trainer_download(xtts_cuda_trainer *t, float *p, float *m, float *v, xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, float *, float *, float *, xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_download");
    return st ? st : f(t, p, m, v, err);
}
xtts_status xtts_cuda_trainer_stage(xtts_cuda_trainer *t, const xtts_model_batch *bt, xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, const xtts_model_batch *, xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_stage");
    return st ? st : f(t, bt, err);
}
xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *ml, float *sl, int *frames,
                                      xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, float *, float *, float *, int *, xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_forward");
    return st ? st : f(t, loss, ml, sl, frames, err);
}
xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                   float *loss, float *ml, float *sl, float *norm, xtts_error *err) {
    xtts_status (*f)(xtts_cuda_trainer *, long, float, const xtts_optim_config *, float *, float *, float *, float *,
                     xtts_error *);
    xtts_status st = PLUGIN_FN(&f, "xtts_cudaplugin_trainer_step");
    return st ? st : f(t, t_step, lr, o, loss, ml, sl, norm, err);
}
#endif
