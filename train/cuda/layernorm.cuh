// cuda/layernorm.cuh — layer normalization on the device (train/cpu/layernorm.h on the CPU;
// eps 1e-5): one warp per row for the forward pass and for the input's gradient, and the
// weight and bias gradients as the deterministic column sums of cuda/common.cuh.
#ifndef XTTS_TRAIN_CUDA_LAYERNORM_CUH
#define XTTS_TRAIN_CUDA_LAYERNORM_CUH

#include "train/cuda/common.cuh"

namespace {

// one warp per row
__global__ void k_layernorm_fwd(float *out, float *mean, float *rstd, const float *inp, const float *w,
                                const float *bias, int N, int C) {
    size_t row = warp_row();
    int lane = lane_id();
    if (row >= (size_t)N) return;
    const float *x = inp + row * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += x[i];
    float m = warp_sum(s) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += 32) v += (x[i] - m) * (x[i] - m);
    v = warp_sum(v) / C;
    float r = 1.0f / sqrtf(v + 1e-5f);
    float *o = out + row * C;
    for (int i = lane; i < C; i += 32) o[i] = (r * (x[i] - m)) * w[i] + bias[i];
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// one warp per row
__global__ void k_layernorm_bwd_inp(float *dinp, const float *dout, const float *inp, const float *w,
                                    const float *mean, const float *rstd, int N, int C) {
    size_t row = warp_row();
    int lane = lane_id();
    if (row >= (size_t)N) return;
    const float *d = dout + row * C, *x = inp + row * C;
    float m = mean[row], s = rstd[row], dm = 0.0f, dnm = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float dn = w[i] * d[i];
        dm += dn;
        dnm += dn * (x[i] - m) * s;
    }
    dm = warp_sum(dm) / C;
    dnm = warp_sum(dnm) / C;
    float *di = dinp + row * C;
    for (int i = lane; i < C; i += 32) {
        float norm = (x[i] - m) * s;
        di[i] += (w[i] * d[i] - dm - norm * dnm) * s;
    }
}

// inp, out are (N,C); mean, rstd are (N); weight, bias are (C)
void layernorm_forward(cudaStream_t stream, float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, int N, int C) {
    k_layernorm_fwd<<<row_blocks(N), THREADS, 0, stream>>>(out, mean, rstd, inp, weight, bias, N, C);
}

// dinp (N,C) += the input's gradient; dweight, dbias (C) += theirs (through cs)
void layernorm_backward(cudaStream_t stream, colsum_buf cs, float *dinp, float *dweight, float *dbias,
                        const float *dout, const float *inp, const float *weight, const float *mean, const float *rstd,
                        int N, int C) {
    k_layernorm_bwd_inp<<<row_blocks(N), THREADS, 0, stream>>>(dinp, dout, inp, weight, mean, rstd, N, C);
    colsum(stream, cs, dweight, dbias, dout, inp, mean, rstd, N, C);
}

}  // namespace

#endif
