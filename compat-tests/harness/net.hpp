// Loopback TCP ports: allocation of free ports and detection of listeners.
#pragma once

#include <cstdint>
#include <vector>

namespace compat {

// Returns `count` distinct free TCP ports on 127.0.0.1 (bind to port 0, read back, close).
std::vector<std::uint16_t> allocate_ports(std::size_t count);

// True if some socket is in LISTEN state on 127.0.0.1:port or 0.0.0.0:port,
// judged from /proc/net/tcp so that no probe connection is made.
bool is_listening(std::uint16_t port);

} // namespace compat
