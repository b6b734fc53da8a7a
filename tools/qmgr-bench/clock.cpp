#include "clock.hpp"

#include "error.hpp"
#include "process.hpp"

#include <ctime>

namespace bench {

// clock_gettime(CLOCK_BOOTTIME) as a double.
double boot_seconds() {
    timespec ts{};
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0) throw compat::sys_error("clock_gettime");
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The harness's interruptible sleep.
void pause(double seconds) {
    compat::interruptible_sleep(seconds);
}

} // namespace bench
