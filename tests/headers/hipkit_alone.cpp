// hipkit.h must compile on its own, first, in C++ with -Werror.
#include <hipkit/hipkit.h>
#include <cstdio>

int main()
{
    hk_arg a = hk_arg_int(-3);
    std::printf("ok 1 - hipkit.h compiles alone in C++ (%s)\n", hk_errname(HK_ECOMPILE));
    std::printf("%s 2 - inline argument helpers work in C++\n", a.v.i == -3 ? "ok" : "not ok");
    std::printf("1..2\n");
    return 0;
}
