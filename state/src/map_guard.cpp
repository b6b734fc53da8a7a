#include "map_guard.hpp"

#include <csignal>
#include <mutex>

namespace cqmgr::state::detail {

namespace {

struct sigaction previous_action;

// SIGBUS: back to the innermost guard of the thread that touched the
// page; without one, the disposition from before the guard was installed
// (a fault then happens again when the instruction is retried; a SIGBUS
// sent by kill is raised again).
void on_sigbus(int sig, siginfo_t* info, void*) {
    GuardFrame* g = current_guard();
    if (g) siglongjmp(g->env, 1);
    ::sigaction(SIGBUS, &previous_action, nullptr);
    if (info->si_code <= 0) ::raise(sig);
}

} // namespace

GuardFrame*& current_guard() {
    // initial-exec TLS (the library is linked into the executable): safe
    // to read in a signal handler.
    static thread_local GuardFrame* frame = nullptr;
    return frame;
}

void install_map_guard() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, &previous_action);
    });
}

} // namespace cqmgr::state::detail
