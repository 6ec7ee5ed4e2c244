/* hipkit.h must compile on its own, first, in strict C99 with -Werror. */
#include <hipkit/hipkit.h>
#include <stdio.h>

int main(void)
{
    hk_arg a = hk_arg_float(1.5);
    printf("ok 1 - hipkit.h compiles alone in C (%s)\n", hk_errname(HK_EARG));
    printf("ok 2 - inline argument helpers work in C\n");
    printf("1..2\n");
    return a.kind == HK_ARG_FLOAT ? 0 : 1;
}
