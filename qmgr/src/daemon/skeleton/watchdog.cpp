#include "watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <signal.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {

// The alarm went off: the loop is stuck.  Only async-signal-safe calls.
void watchdog_fired(int) {
    static const char msg[] = "cqmgr: fatal: watchdog timeout\n";
    ssize_t n = ::write(2, msg, sizeof msg - 1);
    (void)n;
    ::_exit(1);
}

} // namespace

Watchdog::Watchdog(asio::io_context& io, int64_t period) : timer_(io), period_(period) {
    ::signal(SIGALRM, watchdog_fired);
    pet();
}

void Watchdog::pet() {
    ::alarm(static_cast<unsigned>(period_));
    timer_.expires_after(std::chrono::seconds(std::max<int64_t>(period_ / 3, 1)));
    timer_.async_wait([this](const error_code& ec) {
        if (!ec) pet();
    });
}

} // namespace cqmgr::qmgr
