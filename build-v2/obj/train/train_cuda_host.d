build-v2/obj/train/train_cuda_host.o: train/train_cuda_host.c \
 train/train_cuda.h common/xtts_common.h train/model.h train/optim.h \
 kernels/cuda_plugin.h
train/train_cuda.h:
common/xtts_common.h:
train/model.h:
train/optim.h:
kernels/cuda_plugin.h:
