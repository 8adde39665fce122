build-v2/obj/tests/test_train_loader.o: tests/test_train_loader.c \
 cache/reader.h common/xtts_common.h formats/manifest.h kernels/mel.h \
 formats/record.h train/loader.h train/model.h train/synth.h
cache/reader.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
train/loader.h:
train/model.h:
train/synth.h:
