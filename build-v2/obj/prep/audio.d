build-v2/obj/prep/audio.o: prep/audio.c prep/audio.h common/xtts_common.h
prep/audio.h:
common/xtts_common.h:
