build-v2/obj/prep/langid.o: prep/langid.c prep/langid.h \
 common/xtts_common.h
prep/langid.h:
common/xtts_common.h:
