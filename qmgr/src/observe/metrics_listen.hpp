// Where the /metrics endpoint listens (cqmgr_metrics_listen): the text of
// the parameter as addresses.  A bare PORT means the loopback addresses,
// 127.0.0.1 and ::1, not every interface: the metrics name destinations and
// are served to anyone who can connect, so reaching them from elsewhere
// takes an address written out (IPv4:PORT, [IPv6]:PORT, or 0.0.0.0:PORT
// for every IPv4 interface).
#pragma once

#include "cqmgr/protocol/asio.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

struct MetricsAddress {
    asio::ip::tcp::endpoint endpoint;
    // Left out when the host cannot listen there (::1 of a bare PORT on a
    // host without IPv6).
    bool optional = false;
};

// The addresses `listen` names, in order; empty when it is none of PORT,
// IPv4:PORT or [IPv6]:PORT with a port from 1 to 65535.
std::vector<MetricsAddress> metrics_addresses(std::string_view listen);

} // namespace cqmgr::qmgr
