build-v2/obj/xtts-melcache.o: prep/xtts-melcache.c common/xtts_common.h \
 formats/record.h prep/melcache.h formats/manifest.h kernels/mel.h \
 prep/audio.h
common/xtts_common.h:
formats/record.h:
prep/melcache.h:
formats/manifest.h:
kernels/mel.h:
prep/audio.h:
