// dnsmasq serving MX and address records on 127.0.0.1:53 for one run, so
// that smtp(8) really follows MX records to the receivers.  It is reached
// through /etc/resolv.conf, which the session has replaced in its own mount
// namespace (netns.hpp, use_private_resolver()); the libc resolver has no
// port setting.
#pragma once

#include "process.hpp"

#include <string>
#include <vector>

namespace bench {

struct MxRecord {
    std::string domain; // e.g. d1.test
    std::string host;   // e.g. d1.mx.bigprov.test
    int preference = 10;
};

struct HostRecord {
    std::string host;
    std::string address; // IPv4
};

class DnsServer {
  public:
    // Writes DIR/dnsmasq.conf, starts dnsmasq (output in DIR/dnsmasq.log),
    // authoritative for `zone` (unknown names in it are NXDOMAIN), and waits
    // until the first MX record is answered through /etc/resolv.conf;
    // throws compat::Error saying what is missing otherwise.
    DnsServer(const std::string& dir, const std::string& zone, const std::vector<MxRecord>& mx,
              const std::vector<HostRecord>& hosts);
    DnsServer(const DnsServer&) = delete;
    DnsServer& operator=(const DnsServer&) = delete;
    ~DnsServer(); // stops dnsmasq

  private:
    compat::Process proc_;
};

} // namespace bench
