/* `hipkit compile`: code objects built ahead of time (aot.c). */
#ifndef HKL_AOT_H
#define HKL_AOT_H

/* argv[1] is "compile". Returns the exit status. */
int hkl_cmd_compile(int argc, char **argv);

#endif
