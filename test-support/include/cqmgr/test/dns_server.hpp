// A real DNS server for tests: dnsmasq, started by the test on a free
// loopback port (UDP and TCP), authoritative for the names its options
// give (e.g. --mx-host=d1.test,mx1.prov.test,10 with --local=/test/), and
// killed when the object goes.  It reads no configuration file, no
// /etc/hosts and no resolv.conf, and forwards nothing.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace cqmgr::test {

class DnsServer {
  public:
    static constexpr const char* binary = "/usr/sbin/dnsmasq";
    // True when dnsmasq is installed (tests skip themselves if not).
    static bool available();

    // Starts dnsmasq with `options` (its records: --mx-host, --local,
    // --local-ttl ...) and waits until it takes TCP connections; throws
    // std::runtime_error when it does not start within 10 s.
    explicit DnsServer(const std::vector<std::string>& options);
    ~DnsServer(); // SIGTERM, and waits for it
    DnsServer(const DnsServer&) = delete;
    DnsServer& operator=(const DnsServer&) = delete;

    int port() const { return port_; }
    // "127.0.0.1:PORT", as cqmgr_dns_servers takes it.
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  private:
    bool try_start(const std::vector<std::string>& options);
    int port_ = 0;
    pid_t pid_ = -1;
};

} // namespace cqmgr::test
