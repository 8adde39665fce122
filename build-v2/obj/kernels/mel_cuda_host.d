build-v2/obj/kernels/mel_cuda_host.o: kernels/mel_cuda_host.c \
 kernels/mel_cuda.h common/xtts_common.h kernels/mel.h \
 kernels/cuda_plugin.h
kernels/mel_cuda.h:
common/xtts_common.h:
kernels/mel.h:
kernels/cuda_plugin.h:
