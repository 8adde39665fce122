// cuda/gelu.cuh — the element-wise layers on the device (train/cpu/gelu.h on the CPU): GELU
// (tanh form, train/train_math.h) forward and backward, and the residual sum. One thread per
// element. A product's bias is added by the product (cuda/matmul.cuh).
#ifndef XTTS_TRAIN_CUDA_GELU_CUH
#define XTTS_TRAIN_CUDA_GELU_CUH

#include "train/cuda/common.cuh"
#include "train/train_math.h"

namespace {

__global__ void k_gelu_fwd(float *out, const float *inp, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) out[i] = xtts_gelu(inp[i]);
}

// dinp = gelu'(inp) * dout (written, not added: the buffer is the step's own)
__global__ void k_gelu_bwd(float *dinp, const float *inp, const float *dout, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) dinp[i] = xtts_gelu_grad(inp[i]) * dout[i];
}

__global__ void k_residual(float *out, const float *a, const float *b, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) out[i] = a[i] + b[i];
}

// out, inp are (N)
void gelu_forward(cudaStream_t stream, float *out, const float *inp, size_t N) {
    k_gelu_fwd<<<blocks_for(N), THREADS, 0, stream>>>(out, inp, N);
}

// dinp = gelu'(inp) * dout, all (N): written, not added (the CPU's adds)
void gelu_backward(cudaStream_t stream, float *dinp, const float *inp, const float *dout, size_t N) {
    k_gelu_bwd<<<blocks_for(N), THREADS, 0, stream>>>(dinp, inp, dout, N);
}

// out = inp1 + inp2, all (N)
void residual_forward(cudaStream_t stream, float *out, const float *inp1, const float *inp2, size_t N) {
    k_residual<<<blocks_for(N), THREADS, 0, stream>>>(out, inp1, inp2, N);
}

}  // namespace

#endif
