build-v2/obj/tests/test_mel_cuda.o: tests/test_mel_cuda.c kernels/mel.h \
 common/xtts_common.h kernels/mel_cuda.h kernels/cuda_plugin.h
kernels/mel.h:
common/xtts_common.h:
kernels/mel_cuda.h:
kernels/cuda_plugin.h:
