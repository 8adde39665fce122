// cuda/adamw.cuh — the optimizer's update on the device (train/cpu/adamw.h and train/optim.c on
// the CPU): the global gradient norm (sums of squares in double over a fixed grid, the partials
// added in block order), the clipping factor from it (xtts_grad_clip's rule), and AdamW with
// that factor folded into the gradients (train/train_math.h's update per element), all without
// a round trip to the host.
#ifndef XTTS_TRAIN_CUDA_ADAMW_CUH
#define XTTS_TRAIN_CUDA_ADAMW_CUH

#include <cmath>

#include "train/cuda/common.cuh"
#include "train/optim.h"
#include "train/train_math.h"

namespace {

// sum of squares per block (fixed grid), in double as the CPU's xtts_grad_norm (a thread
// adds some n / 65536 squares: 1,300 for 87 M parameters)
__global__ void k_sumsq(double *partial, const float *x, size_t n) {
    __shared__ double sh[THREADS];
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (double)x[i] * x[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

// the norm from the partials in block order, and the clipping scale (xtts_grad_clip's rule):
// out[2] the norm, *scale what the gradients are multiplied by in the update
__global__ void k_norm_finish(double *out, float *scale, const double *partial, int nblocks, float clip) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double sq = 0.0;
    for (int i = 0; i < nblocks; i++) sq += partial[i];
    float norm = (float)sqrt(sq);
    out[2] = norm;
    *scale = (clip > 0.0f && norm > clip && isfinite(norm)) ? clip / (norm + 1e-6f) : 1.0f;
}

__global__ void k_adamw(float *p, const float *g, float *m, float *v, size_t n, const float *grad_scale, float lr,
                        float b1, float b2, float eps, float wd, float b1c, float b2c) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = xtts_adamw_update(p[i], g[i] * *grad_scale, &m[i], &v[i], lr, b1, b2, eps, wd, b1c, b2c);
}

const int NORM_BLOCKS = 256;

// One step t_step (1-based) over params, grads, m, v (P each): grads clipped to o->clip by
// their global norm, then AdamW at lr. norm_partial is (NORM_BLOCKS) scratch; sums[2] receives
// the norm before clipping, clip_scale (1) the factor applied.
void adamw_update(cudaStream_t stream, float *params, const float *grads, float *m, float *v, size_t P,
                  double *norm_partial, double *sums, float *clip_scale, long t_step, float lr,
                  const xtts_optim_config *o) {
    k_sumsq<<<NORM_BLOCKS, THREADS, 0, stream>>>(norm_partial, grads, P);
    k_norm_finish<<<1, 32, 0, stream>>>(sums, clip_scale, norm_partial, NORM_BLOCKS, o->clip);
    float b1c = 1.0f - powf(o->beta1, (float)t_step), b2c = 1.0f - powf(o->beta2, (float)t_step);
    k_adamw<<<blocks_for(P), THREADS, 0, stream>>>(params, grads, m, v, P, clip_scale, lr, o->beta1, o->beta2, o->eps,
                                                   o->weight_decay, b1c, b2c);
}

}  // namespace

#endif
