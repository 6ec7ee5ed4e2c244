#include <hip/hip_runtime.h>
extern "C" __global__ void index3d(unsigned *out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = hipBlockIdx_z * hipBlockDim_z + hipThreadIdx_z;
  if (x < nx && y < ny && z < nz)
    out[(z * ny + y) * nx + x] = (unsigned)(x | (y << 10) | (z << 20)) ^ (gridDim.x * 7 + gridDim.y * 5 + gridDim.z * 3);
}
