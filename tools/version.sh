#!/bin/sh
# Prints the version from include/hipkit/version.h, the one place it lives.
sed -n 's/^#define HK_VERSION_STRING "\(.*\)"/\1/p' "$(dirname "$0")/../include/hipkit/version.h"
