build-v2/obj/train/synth.o: train/synth.c train/synth.h \
 common/xtts_common.h cache/writer.h formats/manifest.h kernels/mel.h \
 formats/record.h
train/synth.h:
common/xtts_common.h:
cache/writer.h:
formats/manifest.h:
kernels/mel.h:
formats/record.h:
