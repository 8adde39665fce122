build-v2/obj/train/loader.o: train/loader.c train/loader.h cache/reader.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h formats/record.h \
 train/model.h
train/loader.h:
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
train/model.h:
