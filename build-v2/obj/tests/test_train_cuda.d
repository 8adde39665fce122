build-v2/obj/tests/test_train_cuda.o: tests/test_train_cuda.c \
 kernels/mel_cuda.h common/xtts_common.h kernels/mel.h \
 kernels/cuda_plugin.h train/model.h train/optim.h train/train_cuda.h
kernels/mel_cuda.h:
common/xtts_common.h:
kernels/mel.h:
kernels/cuda_plugin.h:
train/model.h:
train/optim.h:
train/train_cuda.h:
