// dnsmasq for the MX workloads (see dns_server.hpp).
#include "dns_server.hpp"

#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "signals.hpp"

#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>
#include <sstream>

namespace bench {
namespace {

constexpr const char* kDnsmasq = "/usr/sbin/dnsmasq";

// True if the resolver of /etc/resolv.conf answers an MX query for
// `domain` with at least one record.  A fresh resolver state each time:
// res_ninit reads /etc/resolv.conf then.
bool answers_mx(const std::string& domain) {
    struct __res_state st {};
    if (res_ninit(&st) != 0) return false;
    unsigned char answer[4096];
    int n = res_nquery(&st, domain.c_str(), ns_c_in, ns_t_mx, answer, sizeof answer);
    bool ok = false;
    if (n > 0) {
        ns_msg msg;
        ok = ns_initparse(answer, n, &msg) == 0 && ns_msg_count(msg, ns_s_an) > 0;
    }
    res_nclose(&st);
    return ok;
}

// The tail of a file, for error messages.
std::string tail_of(const std::string& path) {
    std::string text;
    if (!compat::read_file_if_exists(path, text)) return "(no output)";
    return text.size() > 800 ? text.substr(text.size() - 800) : text;
}

} // namespace

DnsServer::DnsServer(const std::string& dir, const std::string& zone,
                     const std::vector<MxRecord>& mx, const std::vector<HostRecord>& hosts) {
    if (mx.empty()) throw compat::Error("dnsmasq: expected at least one MX record, found none");
    std::ostringstream conf;
    conf << "no-resolv\nno-hosts\nbind-interfaces\nlisten-address=127.0.0.1\nport=53\n"
         << "local=/" << zone << "/\n"
         << "local-ttl=300\n"; // a cache may keep the answers for the run
    for (const auto& m : mx)
        conf << "mx-host=" << m.domain << "," << m.host << "," << m.preference << "\n";
    for (const auto& h : hosts)
        conf << "host-record=" << h.host << "," << h.address << "\n";
    std::string conf_path = dir + "/dnsmasq.conf";
    std::string log_path = dir + "/dnsmasq.log";
    compat::write_file(conf_path, conf.str());
    compat::SpawnOptions o;
    // --no-daemon: no fork, no pid file, no change of user; logs to stderr.
    o.argv = {kDnsmasq, "--no-daemon", "--conf-file=" + conf_path, "--log-facility=-"};
    o.output_path = log_path;
    proc_ = compat::Process::spawn(o);
    double deadline = boot_seconds() + 10;
    while (!answers_mx(mx.front().domain)) {
        if (!proc_.running())
            throw compat::Error("dnsmasq: expected `" + compat::join_command(o.argv) +
                                "` to keep running, found " +
                                compat::describe_wait_status(proc_.status()) +
                                "; its output: " + tail_of(log_path));
        if (boot_seconds() >= deadline)
            throw compat::Error(
                "dnsmasq: expected the MX record of " + mx.front().domain +
                " through /etc/resolv.conf within 10 s, found none (the MX workloads need the "
                "session's private network namespace and resolver; see the warnings above)");
        compat::check_interrupted();
        pause(0.05);
    }
}

DnsServer::~DnsServer() {
    proc_.terminate(std::chrono::seconds(2));
}

} // namespace bench
