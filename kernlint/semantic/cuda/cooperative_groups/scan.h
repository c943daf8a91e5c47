/* kernlint stand-in: everything is declared in <cooperative_groups.h>. */
#pragma once
#include <cooperative_groups.h>
