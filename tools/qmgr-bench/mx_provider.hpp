// The one provider of the workloads that follow MX records (provider,
// reply-rule, tenant): 50 recipient domains d1.test ... d50.test, each with
// an MX host of its own, dK.mx.bigprov.test, as Microsoft names its
// customers' MX hosts; every MX host sits under the provider suffix
// .bigprov.test and resolves to one of the provider's four addresses
// (127.0.2.1-4), where one LimitReceiver listens on port 25 and counts
// them all together.  dnsmasq serves the records; smtp(8) follows them.
#pragma once

#include "dns_server.hpp"
#include "limit_receiver.hpp"
#include "workload.hpp"

#include <functional>
#include <string>
#include <vector>

namespace bench {

constexpr int kProviderDomains = 50;
constexpr const char* kProviderName = "bigprov";

// Recipient domain `k` (from 0): "d<k+1>.test".
std::string provider_domain(int k);

// The receiver's limits with its addresses and name filled in.
ReceiverLimits provider_receiver();

// main.cf of both sides: smtp(8) looks up MX records (DNS on), and
// deferred mail comes back within the run (backoff 10-20 s, queue runs
// every 5 s, as in concurrency-421).
MainCf mx_delivery_cf();

// cqmgr's side: the provider table (its MX suffix to the provider) and,
// where given, the provider's concurrency limit and rate (`N/period[,burst]`).
struct ProviderLimits {
    int concurrency = 0; // 0: none
    std::string rate;    // "": none
};
MainCf cqmgr_provider_cf(const RunContext& run, const ProviderLimits& limits);
// Writes the tables cqmgr_provider_cf() names into the instance's conf/.
void write_provider_tables(const RunContext& run, const ProviderLimits& limits);

// A table file in the instance's conf/ (written by populate()).
std::string conf_table(const RunContext& run, const std::string& name);

// dnsmasq with the provider's records, and the receiver on its addresses,
// for one run, which sends it `messages`; at the end, the receiver's
// figures (receiver_metric_defs()) and the workload's own (`report`).
class ProviderFixture : public RunFixture {
  public:
    using Report = std::function<void(const LimitReceiver&, double start, Metrics&)>;
    ProviderFixture(const RunContext& run, const ReceiverLimits& limits, std::uint64_t messages,
                    Report report = nullptr);
    void add_metrics(double start, Metrics& m) const override;

  private:
    DnsServer dns_;
    LimitReceiver rx_;
    std::uint64_t messages_;
    Report report_;
};

// Seconds after the first delivery when a run that has not delivered
// everything stops, for a workload whose receiver's allowance needs
// `allowance_seconds` for all its mail: a quarter more and a minute, so
// that a full-size run stays within about 10 minutes however slowly a
// queue manager goes (stock can take many times the allowance).
double stop_after(double allowance_seconds);

// The receiver's common figures, in table order (for extra_metrics()).
std::vector<MetricDef> receiver_metric_defs();

// Recipient `i` of a workload's mail: PREFIX<i>@ the domains in turn.
std::string provider_recipient(const std::string& prefix, std::uint64_t i);

} // namespace bench
