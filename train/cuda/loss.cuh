// cuda/loss.cuh — the model's loss on the device (train/cpu/loss.h on the CPU): the mel head's
// L1 and the stop head's weighted BCE (train/train_math.h) per position, with their gradient
// when asked, and the parts summed in double on the device in a fixed order, so that a step
// launches everything without waiting and reads the sums once, at its end.
#ifndef XTTS_TRAIN_CUDA_LOSS_CUH
#define XTTS_TRAIN_CUDA_LOSS_CUH

#include "train/cuda/common.cuh"
#include "train/train_math.h"

namespace {

// per position: L1 sum over M and the stop BCE (into parts[2*pos]); dhead scaled when given
__global__ void k_loss(float *parts, float *dhead, const float *head, batch_dev bt, int M, float pos_weight,
                       float mel_scale, float stop_scale) {
    size_t pos = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (pos >= (size_t)bt.B * bt.T) return;
    int t = (int)(pos % bt.T), b = (int)(pos / bt.T);
    int nt = bt.n_text[b], nf = bt.n_frames[b], M1 = M + 1;
    const float *h = head + pos * M1;
    float *dh = dhead ? dhead + pos * M1 : nullptr;
    if (nf == 0 || t < nt || t >= nt + nf) {
        parts[2 * pos] = parts[2 * pos + 1] = 0.0f;
        if (dh)
            for (int k = 0; k < M1; k++) dh[k] = 0.0f;
        return;
    }
    int j = t - nt;
    const float *y = bt.mel + ((size_t)b * bt.mel_stride + j) * M;
    float l1 = 0.0f;
    for (int k = 0; k < M; k++) {
        float diff = h[k] - y[k];
        l1 += fabsf(diff);
        if (dh) dh[k] = (diff > 0.0f ? 1.0f : diff < 0.0f ? -1.0f : 0.0f) * mel_scale;
    }
    float target = j == nf - 1 ? 1.0f : 0.0f;
    parts[2 * pos] = l1;
    parts[2 * pos + 1] = xtts_bce_logits(h[M], target, pos_weight);
    if (dh) dh[M] = xtts_bce_logits_grad(h[M], target, pos_weight) * stop_scale;
}

// the loss parts of n positions summed in double by one block in a fixed order: out[0] L1,
// out[1] BCE
const int SUM_THREADS = 1024;
__global__ void k_sum_parts(double *out, const float *parts, size_t n) {
    __shared__ double sa[SUM_THREADS], sb[SUM_THREADS];
    double a = 0.0, b = 0.0;
    for (size_t i = threadIdx.x; i < n; i += SUM_THREADS) a += parts[2 * i], b += parts[2 * i + 1];
    sa[threadIdx.x] = a;
    sb[threadIdx.x] = b;
    __syncthreads();
    for (int w = SUM_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sa[threadIdx.x] += sa[threadIdx.x + w], sb[threadIdx.x] += sb[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = sa[0], out[1] = sb[0];
}

// head is (B,T,M+1), dhead (B,T,M+1) or NULL (forward only); parts (2 B T) scratch; sums[0]
// the L1 sum, sums[1] the BCE sum (the caller divides by frames, the real frames of bt)
void loss_forward_backward(cudaStream_t stream, double *sums, float *parts, float *dhead, const float *head,
                           batch_dev bt, int frames, int M, float pos_weight) {
    size_t BT = (size_t)bt.B * bt.T;
    float mel_scale = frames ? 1.0f / ((float)frames * M) : 0.0f, stop_scale = frames ? 1.0f / frames : 0.0f;
    k_loss<<<blocks_for(BT), THREADS, 0, stream>>>(parts, dhead, head, bt, M, pos_weight, mel_scale, stop_scale);
    k_sum_parts<<<1, SUM_THREADS, 0, stream>>>(sums, parts, BT);
}

}  // namespace

#endif
