// Pieces the workloads share: scaled sizes, the sink every workload relays
// to, and smtp-source injection (blocking, or as a running process).
#pragma once

#include "instance.hpp"
#include "process.hpp"
#include "scenario.hpp"
#include "workload.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace bench {

// round(full * scale), at least `minimum`.
std::uint64_t scaled(double full, double scale, std::uint64_t minimum = 1);

// "20,000".
std::string with_commas(std::uint64_t n);

// An smtp-sink destination named `name` with a deep listen backlog.
compat::SinkSpec sink_spec(const std::string& name, std::vector<std::string> args = {},
                           const std::string& host = "127.0.0.1");

// A short message from `from` whose subject says what it is (`kind`).
std::string short_message(const std::string& from, const std::string& kind);

// relayhost = [127.0.0.1]:port, so all mail goes to that one destination.
MainCf relay_to(std::uint16_t port);

// default_transport = discard: every non-local recipient goes to discard(8),
// its domain the nexthop (one destination per domain).
MainCf discard_everything();

// smtp-source -s sessions -m messages -r 1 -l 1000, to `to`, into the
// instance's smtpd; output in DIR/LOG_NAME.log.
compat::SpawnOptions smtp_source(const compat::Instance& inst, std::uint16_t smtpd_port,
                                 std::uint64_t messages, int sessions, const std::string& to,
                                 const std::string& log_name);

// Injects `messages` one-recipient messages to bob@dest.example with
// smtp-source over 20 sessions and waits for it (for a queue template).
std::function<void(const compat::Instance&, std::uint16_t)>
smtp_source_injector(std::uint64_t messages);

} // namespace bench
