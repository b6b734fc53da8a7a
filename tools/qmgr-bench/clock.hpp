// The one clock of the benchmark: seconds since boot (CLOCK_BOOTTIME), the
// clock /proc/PID/stat counts a process's start time in.
#pragma once

#include <sys/types.h>

namespace bench {

// Seconds since boot, now.
double boot_seconds();

// Sleeps for `seconds` in small steps, throwing compat::Interrupted on SIGINT/SIGTERM.
void pause(double seconds);

} // namespace bench
