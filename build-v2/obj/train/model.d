build-v2/obj/train/model.o: train/model.c train/model.h \
 common/xtts_common.h train/train_math.h
train/model.h:
common/xtts_common.h:
train/train_math.h:
