/* train_cuda_host.c — train/train_cuda.h for builds without CUDA: every call says so. */
#include "train/train_cuda.h"

#ifndef XTTS_HAVE_CUDA

static xtts_status no_cuda(xtts_error *err) {
    return xtts_error_set(err, XTTS_EUNSUPPORTED, "this build has no CUDA support (built without nvcc, or CUDA=0)");
}

xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_cuda_trainer **out, xtts_error *err) {
    (void)m, (void)ordinal;
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
/* with CUDA, train/train_cuda.cu defines these */
typedef int xtts_train_cuda_host_unused;
#endif
