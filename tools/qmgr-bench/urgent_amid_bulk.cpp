// Workload "urgent-amid-bulk" (priority lanes): a campaign of
// one-recipient bulk messages, the shape most senders use, to one
// destination (concurrency 20, smtp-sink waiting 1 s before answering each
// DATA: smtp-sink takes whole seconds, so the 0.5 s a message that the
// lanes were designed for is 1 s here), with urgent one-recipient messages arriving while it
// drains.  Each campaign message is a small job of its own, which Rak's
// preemption serves first come, first served; on the cqmgr side,
// cqmgr_priority_maps classifies the campaign's sender domain as bulk and
// the urgent sender's as urgent.  The figures: the urgent messages' delay=
// (arrival to delivery), and the common drain time, which is the bulk's.
#include "mail_setup.hpp"
#include "paced_injection.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <cstdio>

namespace bench {
namespace {

constexpr int concurrency = 20;
constexpr double seconds_per_message = 1.0; // smtp-sink -w 1

class UrgentAmidBulk : public Workload {
  public:
    explicit UrgentAmidBulk(const Session& s)
        : bulk_(scaled(10000, s.scale, 100)), urgent_(50),
          // The urgent messages arrive over the first half of the drain.
          interval_(static_cast<double>(bulk_) * seconds_per_message / concurrency / 2 /
                    static_cast<double>(urgent_)) {}

    std::string name() const override { return "urgent-amid-bulk"; }
    std::string describe() const override {
        char every[32];
        std::snprintf(every, sizeof every, "%.2f", interval_);
        return with_commas(bulk_) + " one-recipient bulk messages, then " + with_commas(urgent_) +
               " urgent ones (one per " + every +
               " s), all to one smtp-sink that waits 1 s before answering DATA, concurrency " +
               std::to_string(concurrency) + "; cqmgr with cqmgr_priority_maps";
    }
    std::uint64_t recipients() const override { return bulk_ + urgent_; }
    int timeout() const override { return 300 + static_cast<int>(bulk_ / 5); }
    std::vector<compat::SinkSpec> sinks() const override {
        return {sink_spec("slow", {"-w", "1"})};
    }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.emplace_back("smtp_destination_concurrency_limit", std::to_string(concurrency));
        if (run.kind == compat::QmgrKind::Cqmgr) {
            cf.emplace_back("cqmgr_priority_maps",
                            "inline:{ campaign.example=bulk, bank.example=urgent }");
            cf.emplace_back("cqmgr_urgent_agent_share", "10");
        }
        return cf;
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        // The whole campaign at once, then the urgent messages paced.
        auto campaign = one_recipient("news@campaign.example", "bulk", "big.example");
        std::uint64_t bulk = bulk_;
        return std::make_unique<PacedInjection>(
            run.smtpd_port,
            [campaign, bulk](compat::SmtpClient& c) {
                for (std::uint64_t b = 0; b < bulk; ++b)
                    campaign(c, b);
            },
            urgent_, interval_, one_recipient("alerts@bank.example", "urgent", "big.example"));
    }
    std::string tag() const override { return "urgent"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"urgent_median", "urgent messages: median delay (s)", 2},
                {"urgent_p99", "urgent messages: p99 delay (s)", 2},
                {"urgent_max", "urgent messages: maximum delay (s)", 2}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        const auto& d = w.tagged_delays();
        m["urgent_median"] = median(d);
        m["urgent_p99"] = percentile(d, 99);
        m["urgent_max"] = d.empty() ? 0 : *std::max_element(d.begin(), d.end());
    }

  private:
    std::uint64_t bulk_;
    std::uint64_t urgent_;
    double interval_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_urgent_amid_bulk(const Session& session) {
    return std::make_unique<UrgentAmidBulk>(session);
}

} // namespace bench
