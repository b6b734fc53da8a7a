// A private network namespace for the whole benchmark session.
#pragma once

#include <string>

namespace bench {

// Moves this process (and so every process it starts) into a new network
// namespace whose only interface is a loopback one, brought up: all of
// 127.0.0.0/8 is local there, and a listener on 0.0.0.0 is reachable from
// this namespace only. Returns "" on success, otherwise why it failed (the
// process then stays in its original namespace).
std::string enter_private_network();

} // namespace bench
