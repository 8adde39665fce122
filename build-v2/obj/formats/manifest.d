build-v2/obj/formats/manifest.o: formats/manifest.c formats/manifest.h \
 common/xtts_common.h kernels/mel.h formats/record.h
formats/manifest.h:
common/xtts_common.h:
kernels/mel.h:
formats/record.h:
