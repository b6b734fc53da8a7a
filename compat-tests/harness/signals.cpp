#include "signals.hpp"

#include "error.hpp"

#include <csignal>

namespace compat {
namespace {

volatile std::sig_atomic_t g_signal = 0;

// Records the signal; everything else happens outside the handler.
extern "C" void on_signal(int sig) {
    g_signal = sig;
}

} // namespace

// Installs the termination handlers; without SA_RESTART blocking calls return EINTR.
void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    if (sigemptyset(&sa.sa_mask) != 0) throw sys_error("sigemptyset");
    sa.sa_flags = 0;
    if (sigaction(SIGINT, &sa, nullptr) != 0) throw sys_error("sigaction(SIGINT)");
    if (sigaction(SIGTERM, &sa, nullptr) != 0) throw sys_error("sigaction(SIGTERM)");
    if (sigaction(SIGHUP, &sa, nullptr) != 0) throw sys_error("sigaction(SIGHUP)");
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    if (sigemptyset(&ign.sa_mask) != 0) throw sys_error("sigemptyset");
    if (sigaction(SIGPIPE, &ign, nullptr) != 0) throw sys_error("sigaction(SIGPIPE)");
}

// Reports whether a termination signal has been received.
bool interrupted() {
    return g_signal != 0;
}

// Converts a pending termination signal into an exception.
void check_interrupted() {
    if (g_signal != 0) throw Interrupted();
}

// Returns the received signal number, or 0.
int received_signal() {
    return static_cast<int>(g_signal);
}

} // namespace compat
