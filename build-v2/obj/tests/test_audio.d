build-v2/obj/tests/test_audio.o: tests/test_audio.c prep/audio.h \
 common/xtts_common.h
prep/audio.h:
common/xtts_common.h:
