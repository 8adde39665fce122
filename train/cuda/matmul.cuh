// cuda/matmul.cuh — the trainer's matrix products on the device: cuBLAS at the trainer's
// precision (llm.c's row-major-as-column-major calls: a row-major (N,C) matrix is cuBLAS's
// column-major (C,N)), and the linear layer's forward/backward pair over them (bias
// included). Attention (cuda/attention.cuh) and the encoder's projection gradient
// (cuda/encoder.cuh) call gemm too.
//
// Precision (XTTS_PRECISION_*, train/train_cuda.h): fp32 products (cuBLAS's default math, as
// PyTorch's default), TF32 tensor cores, or bf16 tensor-core products of operands rounded to
// bf16 with fp32 accumulation and fp32 outputs (as PyTorch's bf16 autocast does for its matrix
// products). The parameters are rounded once a step; an activation is rounded into a16 / b16
// when the product needs it, unless the kernel that made it left a bf16 copy.
#ifndef XTTS_TRAIN_CUDA_MATMUL_CUH
#define XTTS_TRAIN_CUDA_MATMUL_CUH

#include "train/cuda/common.cuh"
#include "train/train_cuda.h"

namespace {

// What a product needs besides its operands. blas runs on stream; in fp32 and TF32 mode the
// bf16 buffers are NULL.
struct matmul_ctx {
    cublasHandle_t blas;
    cudaStream_t stream;
    xtts_precision precision;
    const float *params;  // the parameters, where a weight's bf16 copy is found
    bf16 *params16;       // bf16 mode: the parameters rounded, once a step
    bf16 *a16, *b16;      // bf16 mode: operands rounded for a product
    size_t ab16_elems;    // the elements a16 and b16 hold, each
};

// out (N, OC) = bias in every row (zeros without bias)
__global__ void k_bias_fill(float *out, const float *bias, size_t N, int OC) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx < N * OC) out[idx] = bias ? bias[idx % OC] : 0.0f;
}

// An operand of a product: fp32 data, and in bf16 mode its bf16 rounding when one is at hand
// (the parameters, rounded once a step; the attention probabilities and score gradients,
// rounded by the kernel that made them); elems is how many floats it spans, which are
// rounded into scratch when no bf16 copy is at hand.
struct operand {
    const float *f;
    const bf16 *h;
    int ld;
    long long stride;
    size_t elems;
};

operand act(const float *f, int ld, size_t elems, long long stride = 0) {
    return operand{f, nullptr, ld, stride, elems};
}
operand weight(const matmul_ctx &mc, const float *w, int ld) {
    return operand{w, mc.params16 ? mc.params16 + (w - mc.params) : nullptr, ld, 0, 0};
}

// C (m x n, column-major, ldc) = op(A) op(B) + beta C, over batch strided matrices, at the
// trainer's precision; fp32 forces fp32 products (a part the forward computes in fp32).
xtts_status gemm(const matmul_ctx &mc, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, operand A,
                 operand B, float beta, float *C, int ldc, long long strideC, int batch, const char *what,
                 xtts_error *err, bool fp32 = false) {
    const float one = 1.0f;
    if (fp32 && mc.precision != XTTS_PRECISION_FP32) {
        // float32 whatever the handle's math mode (TF32 would round the operands)
        BL(cublasGemmStridedBatchedEx(mc.blas, ta, tb, m, n, k, &one, A.f, CUDA_R_32F, A.ld, A.stride, B.f, CUDA_R_32F,
                                      B.ld, B.stride, &beta, C, CUDA_R_32F, ldc, strideC, batch,
                                      CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
           what);
        return XTTS_OK;
    }
    if (mc.precision != XTTS_PRECISION_BF16) {
        if (batch == 1)
            BL(cublasSgemm(mc.blas, ta, tb, m, n, k, &one, A.f, A.ld, B.f, B.ld, &beta, C, ldc), what);
        else
            BL(cublasSgemmStridedBatched(mc.blas, ta, tb, m, n, k, &one, A.f, A.ld, A.stride, B.f, B.ld, B.stride,
                                         &beta, C, ldc, strideC, batch),
               what);
        return XTTS_OK;
    }
    const bf16 *a = A.h, *b = B.h;
    if (!a) {
        if (A.elems > mc.ab16_elems) return xtts_error_set(err, XTTS_EIO, "cuda: %s: operand larger than its buffer", what);
        k_to_bf16<<<blocks_for(A.elems), THREADS, 0, mc.stream>>>(mc.a16, A.f, A.elems);
        a = mc.a16;
    }
    if (!b) {
        if (B.elems > mc.ab16_elems) return xtts_error_set(err, XTTS_EIO, "cuda: %s: operand larger than its buffer", what);
        k_to_bf16<<<blocks_for(B.elems), THREADS, 0, mc.stream>>>(mc.b16, B.f, B.elems);
        b = mc.b16;
    }
    BL(cublasGemmStridedBatchedEx(mc.blas, ta, tb, m, n, k, &one, a, CUDA_R_16BF, A.ld, A.stride, b, CUDA_R_16BF, B.ld,
                                  B.stride, &beta, C, CUDA_R_32F, ldc, strideC, batch, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT_TENSOR_OP),
       what);
    return XTTS_OK;
}

// inp is (N,C), weight is (OC,C), bias is (OC) or NULL, out is (N,OC):
// out = inp . weight^T + bias
xtts_status matmul_forward(const matmul_ctx &mc, float *out, const float *inp, const float *w, const float *bias,
                           int N, int C, int OC, xtts_error *err) {
    k_bias_fill<<<blocks_for((size_t)N * OC), THREADS, 0, mc.stream>>>(out, bias, (size_t)N, OC);
    return gemm(mc, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, weight(mc, w, C), act(inp, C, (size_t)N * C), 1.0f, out, OC,
                0, 1, "matmul forward", err);
}

// dinp (N,C) = dinp_beta dinp + dout . weight; dweight (OC,C) += dout^T . inp; dbias (OC) +=
// dout's column sums (through cs, when dbias is given)
xtts_status matmul_backward(const matmul_ctx &mc, colsum_buf cs, float *dinp, float *dw, float *db, const float *dout,
                            const float *inp, const float *w, int N, int C, int OC, xtts_error *err,
                            float dinp_beta = 1.0f) {
    xtts_status st = XTTS_OK;
    if (dinp)
        st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, weight(mc, w, C), act(dout, OC, (size_t)N * OC), dinp_beta,
                  dinp, C, 0, 1, "matmul dinp", err);
    // in bf16 mode the dinp product left dout rounded in b16; the dweight product rounds inp
    // into a16 and reads that b16 again
    operand D = act(dout, OC, (size_t)N * OC);
    if (dinp && mc.precision == XTTS_PRECISION_BF16) D.h = mc.b16;
    if (!st) st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, act(inp, C, (size_t)N * C), D, 1.0f, dw, C, 0, 1,
                       "matmul dweight", err);
    if (!st && db) colsum(mc.stream, cs, nullptr, db, dout, nullptr, nullptr, nullptr, N, OC);
    return st;
}

}  // namespace

#endif
