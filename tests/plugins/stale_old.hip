// What the stale plugin's image was built from (tests/plugins/stale.c).
extern "C" __global__ void put(int *p) { p[0] = 1; }
