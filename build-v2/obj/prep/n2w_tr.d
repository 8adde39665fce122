build-v2/obj/prep/n2w_tr.o: prep/n2w_tr.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
