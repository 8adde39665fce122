build-v2/obj/prep/n2w_hu.o: prep/n2w_hu.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
