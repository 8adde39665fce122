build-v2/obj/train/optim.o: train/optim.c train/optim.h \
 train/train_math.h
train/optim.h:
train/train_math.h:
