// The MX workloads' provider (see mx_provider.hpp).
#include "mx_provider.hpp"

#include "clock.hpp"
#include "fsutil.hpp"

namespace bench {
namespace {

constexpr int kAddresses = 4;

// Address `a` (from 0) of the provider.
std::string provider_address(int a) {
    return "127.0.2." + std::to_string(a + 1);
}

// Domain k's MX host.
std::string mx_host(int k) {
    return "d" + std::to_string(k + 1) + ".mx." + kProviderName + ".test";
}

} // namespace

std::string provider_domain(int k) {
    return "d" + std::to_string(k + 1) + ".test";
}

std::string provider_recipient(const std::string& prefix, std::uint64_t i) {
    return prefix + std::to_string(i) + "@" +
           provider_domain(static_cast<int>(i % kProviderDomains));
}

ReceiverLimits provider_receiver() {
    ReceiverLimits l;
    for (int a = 0; a < kAddresses; ++a)
        l.addresses.push_back(provider_address(a));
    l.name = std::string("mx.") + kProviderName + ".test";
    return l;
}

MainCf mx_delivery_cf() {
    return {{"smtp_dns_support_level", "enabled"},
            {"smtp_host_lookup", "dns"},
            {"minimal_backoff_time", "10s"},
            {"maximal_backoff_time", "20s"},
            {"queue_run_delay", "5s"}};
}

std::string conf_table(const RunContext& run, const std::string& name) {
    return run.inst.conf_dir() + "/" + name;
}

// texthash: tables, as an administrator would write them.
MainCf cqmgr_provider_cf(const RunContext& run, const ProviderLimits& limits) {
    MainCf cf{{"cqmgr_provider_maps", "texthash:" + conf_table(run, "bench-providers")}};
    if (limits.concurrency > 0)
        cf.emplace_back("cqmgr_provider_concurrency_limits",
                        "texthash:" + conf_table(run, "bench-provider-concurrency"));
    if (!limits.rate.empty())
        cf.emplace_back("cqmgr_provider_rate_limits",
                        "texthash:" + conf_table(run, "bench-provider-rates"));
    return cf;
}

void write_provider_tables(const RunContext& run, const ProviderLimits& limits) {
    std::string name = kProviderName;
    compat::write_file(conf_table(run, "bench-providers"), "." + name + ".test " + name + "\n");
    if (limits.concurrency > 0)
        compat::write_file(conf_table(run, "bench-provider-concurrency"),
                           name + " " + std::to_string(limits.concurrency) + "\n");
    if (!limits.rate.empty())
        compat::write_file(conf_table(run, "bench-provider-rates"),
                           name + " " + limits.rate + "\n");
}

// The DNS records: each domain's MX host, and its address.
ProviderFixture::ProviderFixture(const RunContext& run, const ReceiverLimits& limits,
                                 std::uint64_t messages, Report report)
    : dns_(
          run.inst.dir(), "test",
          [] {
              std::vector<MxRecord> mx;
              for (int k = 0; k < kProviderDomains; ++k)
                  mx.push_back({provider_domain(k), mx_host(k), 10});
              return mx;
          }(),
          [] {
              std::vector<HostRecord> hosts;
              for (int k = 0; k < kProviderDomains; ++k)
                  hosts.push_back({mx_host(k), provider_address(k % kAddresses)});
              return hosts;
          }()),
      rx_(limits, run.inst.dir() + "/receiver.log"), messages_(messages),
      report_(std::move(report)) {}

double stop_after(double allowance_seconds) {
    return 1.25 * allowance_seconds + 60;
}

std::vector<MetricDef> receiver_metric_defs() {
    return {{"rx_peak", "receiver: most sessions at once (exact, refused ones included)", 0},
            {"rx_refused", "receiver: sessions refused at the greeting", 0},
            {"rx_rate_refused", "receiver: MAIL refused for the rate", 0},
            {"rx_attempts", "receiver: delivery attempts (refused sessions and MAIL commands)", 0},
            {"rx_refused_pct", "receiver: refused, % of delivery attempts", 1},
            {"rx_client_minute", "receiver: most messages accepted from one client in 60 s", 0},
            {"rx_delivered", "receiver: messages accepted (DATA)", 0},
            {"rx_drain", "receiver: drain, or until the run stopped (s)", 1},
            {"rx_per_minute", "receiver: messages accepted per minute", 1}};
}

void ProviderFixture::add_metrics(double start, Metrics& m) const {
    auto events = rx_.events();
    ReceiverCounts c = count_events(events);
    m["rx_peak"] = rx_.peak();
    m["rx_refused"] = static_cast<double>(c.refused);
    m["rx_rate_refused"] = static_cast<double>(c.rate_refused);
    m["rx_attempts"] = static_cast<double>(c.attempts());
    m["rx_refused_pct"] = c.refused_pct();
    m["rx_client_minute"] = rx_.peak_client_minute();
    // Until the last message if all arrived, else until now (the run stopped).
    double end = boot_seconds();
    if (c.delivered >= messages_)
        for (const auto& e : events)
            if (e.kind == ReceiverEvent::delivered) end = e.at;
    m["rx_delivered"] = static_cast<double>(c.delivered);
    m["rx_drain"] = end - start;
    m["rx_per_minute"] = end > start ? static_cast<double>(c.delivered) * 60 / (end - start) : 0;
    if (report_) report_(rx_, start, m);
}

} // namespace bench
