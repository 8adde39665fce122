build-v2/obj/prep/n2w_ar.o: prep/n2w_ar.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
