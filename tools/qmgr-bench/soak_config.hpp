// How the soak's instances are set up: the two sending sides (the same
// Postfix settings; cqmgr with every cqmgr_ feature on) and their
// receivers: smtp-sinks for the fast, slow, tarpitting, flapping, bouncing
// and dead destinations, and a receiving Postfix instance for those that
// need smtpd's policies (4xx at random, a connection limit).
#pragma once

#include "soak_traffic.hpp"
#include "workload.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bench {

// One side's ports.
struct SoakPorts {
    std::uint16_t smtpd = 0;              // where the injection submits
    std::map<SoakDest, std::uint16_t> rx; // each destination's receiver
    std::uint16_t metrics = 0;            // cqmgr's /metrics
};

// "[127.0.0.1]:PORT", destination `d`'s nexthop.
std::string soak_nexthop(const SoakPorts& p, SoakDest d);
// "TRANSPORT:[127.0.0.1]:PORT", its queue as cqmgrctl names it.
std::string soak_queue(const SoakPorts& p, SoakDest d);

// smtp-sink's arguments for destination `d` while mail is injected;
// nullopt for the receivers that are smtpd listeners of the receiving
// instance. The dead destination's sink exists but starts only for the
// drain.
std::optional<std::vector<std::string>> soak_sink_args(SoakDest d);
// The tarpit's sink for the drain: no delay.
std::vector<std::string> soak_healed_tarpit_args();

// main.cf of a sending side. `conf` is its configuration directory (for
// cqmgr's tables, written by write_soak_tables()), `redis_socket` cqmgr's
// Redis.
MainCf soak_sender_main_cf(bool cqmgr, const SoakPorts& p, const std::string& conf,
                           const std::string& redis_socket);
// The transport table of the Many destinations, on both sides.
void write_soak_transport(const std::string& conf, const SoakPorts& p, bool private_network);
// cqmgr's tables that soak_sender_main_cf() names.
void write_soak_tables(const std::string& conf, const SoakPorts& p);

// main.cf and master.cf lines of the receiving instance, which serves the
// smtpd receivers of every side.
MainCf soak_receiver_main_cf();
std::vector<std::string> soak_receiver_master_cf(const std::vector<SoakPorts>& sides);

} // namespace bench
