build-v2/obj/tests/test_manifest.o: tests/test_manifest.c \
 formats/manifest.h common/xtts_common.h kernels/mel.h formats/record.h
formats/manifest.h:
common/xtts_common.h:
kernels/mel.h:
formats/record.h:
