// SIGINT/SIGTERM handling: the handler only records the signal; the polling
// loops notice it and unwind by exception, so RAII tears everything down.
#pragma once

namespace compat {

// Installs the handlers for SIGINT/SIGTERM (without SA_RESTART) and ignores SIGPIPE.
void install_signal_handlers();

// True once SIGINT or SIGTERM has arrived.
bool interrupted();

// Throws Interrupted if a termination signal has arrived.
void check_interrupted();

// Number of the signal that arrived (0 if none); used for the exit status.
int received_signal();

} // namespace compat
