/* Test "plugin" that is not one: named hipkit-plugin-ctor.so but exporting
 * no hk_plugin_ctor_abi/init. Its constructor marks the environment, so the
 * test sees whether the loader ran it (it must not: the exports are read
 * from the file before any dlopen). */
#include <stdlib.h>

__attribute__((constructor)) static void mark(void) { setenv("HK_TEST_CTOR_RAN", "1", 1); }

__attribute__((visibility("default"))) int hk_plugin_ctor_something(void);
int hk_plugin_ctor_something(void) { return 1; }
