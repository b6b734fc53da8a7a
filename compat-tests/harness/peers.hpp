// More sending instances beside the run's own, for scenarios of what
// several hosts share (cluster limits on one Redis): `[peers] count = N`.
// Each peer is a Postfix instance of its own in ${dir}/peer-K (K = 1..N),
// made like the run's (the same queue manager, main.cf settings and
// master.cf lines, expanded with the run's variables), with its own smtpd
// port and myhostname peerK.test.example.  An [[inject]] with `peer = K`
// goes to peer K.  After the run's outcome, each peer must reach its own:
// `sent` status=sent lines, nothing left in incoming, active or maildrop
// (and with queue_empty, in any queue directory), and no fatal, panic or
// crash line in its maillog.
#pragma once

#include "instance.hpp"
#include "scenario.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace compat {

class Peers {
  public:
    // Peers of the run in `dir`, configured as `cfg` says the run's own
    // instance is.
    Peers(const PeersSpec& spec, InstanceConfig cfg, const std::string& dir);
    Peers(const Peers&) = delete;
    Peers& operator=(const Peers&) = delete;
    ~Peers(); // stops them

    // Creates and starts every peer.
    void start();
    // Stops them (also on errors); safe to call twice.
    void stop() noexcept;

    int count() const { return static_cast<int>(peers_.size()); }
    // Peer `k` (1..count()) and its smtpd port.
    const Instance& instance(int k) const { return *peers_.at(static_cast<size_t>(k - 1)).inst; }
    std::uint16_t smtpd_port(int k) const { return peers_.at(static_cast<size_t>(k - 1)).port; }

    // Waits until every peer has reached its outcome; throws Error naming
    // what is missing at `deadline`.
    void wait(std::chrono::steady_clock::time_point deadline) const;
    // One line per peer (sent lines, queue files left), for the summary.
    std::vector<std::string> summary() const;
    // Unmet expectations, and sanitizer reports of their queue managers.
    std::vector<std::string> failures() const;

  private:
    struct Peer {
        std::unique_ptr<Instance> inst;
        std::uint16_t port = 0;
    };
    // What is still missing for peer `p`, "" when nothing.
    std::string missing(const Peer& p) const;
    PeersSpec spec_;
    InstanceConfig cfg_;
    std::vector<Peer> peers_;
};

} // namespace compat
