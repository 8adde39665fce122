/* romanize_cat.c — reads lines on stdin, writes xtts_romanize(line, argv[1]) of each on stdout;
 * the C side of tests/golden/check_romanize_random.py. */
#include <stdio.h>
#include <string.h>
#include "prep/text/romanize/romanize.h"
int main(int argc, char **argv) { (void)argc; static char line[1 << 16]; xtts_sb o = {0};
  while (fgets(line, sizeof line, stdin)) { size_t n = strlen(line); if (n && line[n-1]=='\n') line[--n]=0;
    xtts_sb_clear(&o); xtts_romanize(line, n, argv[1], &o); printf("%s\n", o.s ? o.s : ""); } return 0; }
