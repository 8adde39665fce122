build-v2/obj/prep/melcache.o: prep/melcache.c prep/melcache.h \
 common/xtts_common.h formats/manifest.h kernels/mel.h prep/audio.h \
 cache/writer.h formats/record.h formats/tokens.h kernels/mel_cuda.h \
 kernels/cuda_plugin.h
prep/melcache.h:
common/xtts_common.h:
formats/manifest.h:
kernels/mel.h:
prep/audio.h:
cache/writer.h:
formats/record.h:
formats/tokens.h:
kernels/mel_cuda.h:
kernels/cuda_plugin.h:
