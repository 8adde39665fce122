build-v2/obj/xtts-train.o: train/xtts-train.c common/xtts_common.h \
 train/synth.h train/trainer.h train/optim.h
common/xtts_common.h:
train/synth.h:
train/trainer.h:
train/optim.h:
