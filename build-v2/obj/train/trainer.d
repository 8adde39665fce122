build-v2/obj/train/trainer.o: train/trainer.c train/trainer.h \
 common/xtts_common.h train/optim.h cache/reader.h formats/manifest.h \
 kernels/mel.h formats/record.h kernels/mel_cuda.h kernels/cuda_plugin.h \
 train/checkpoint.h train/model.h train/loader.h train/train_cuda.h
train/trainer.h:
common/xtts_common.h:
train/optim.h:
cache/reader.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
kernels/mel_cuda.h:
kernels/cuda_plugin.h:
train/checkpoint.h:
train/model.h:
train/loader.h:
train/train_cuda.h:
