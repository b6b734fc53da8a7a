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

// Moves this process (and so every process it starts) into a new mount
// namespace, private to it, in which `resolv_conf` is bind-mounted over
// /etc/resolv.conf: the libc resolver of everything started afterwards
// (smtp(8), the queue manager) asks the name servers it lists, e.g. a
// dnsmasq on 127.0.0.1:53 of the private network namespace.  Must be called
// while this process has one thread.  Returns "" on success, otherwise why
// it failed (nothing is mounted then).
std::string use_private_resolver(const std::string& resolv_conf);

} // namespace bench
