// Workload "slow-receiver": bulk mail (messages with 2,000 recipients each)
// and small one-recipient messages to one destination that takes a second to
// answer each DATA (smtp-sink -w 1). The bulk is sent first, then one small
// message every 0.2 s; the figures that matter are the small messages' delays
// (their delay= in the maillog: arrival to delivery), which show whether the
// scheduler lets them past the bulk.
#include "mail_setup.hpp"
#include "paced_injection.hpp"
#include "workloads.hpp"

#include <algorithm>

namespace bench {
namespace {

constexpr std::uint64_t bulk_recipients = 2000;
constexpr double small_interval = 0.2;

class SlowReceiver : public Workload {
  public:
    explicit SlowReceiver(const Session& s)
        : bulk_(scaled(10, s.scale)), small_(scaled(100, s.scale, 10)) {}

    std::string name() const override { return "slow-receiver"; }
    std::string describe() const override {
        return with_commas(bulk_) + " bulk messages x " + with_commas(bulk_recipients) +
               " recipients, then " + with_commas(small_) +
               " one-recipient messages (one per 0.2 s), all to one smtp-sink that waits 1 s "
               "before answering DATA";
    }
    std::uint64_t recipients() const override { return bulk_ * bulk_recipients + small_; }
    int timeout() const override { return 300 + static_cast<int>(recipients() / 10); }
    std::vector<compat::SinkSpec> sinks() const override {
        return {sink_spec("slow", {"-w", "1"})};
    }
    // smtpd takes 1,000 recipients per message by default.
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.emplace_back("smtpd_recipient_limit", std::to_string(bulk_recipients));
        return cf;
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        // All bulk messages at once, then the small ones paced.
        std::uint64_t bulk = bulk_;
        return std::make_unique<PacedInjection>(
            run.smtpd_port,
            [bulk](compat::SmtpClient& c) {
                for (std::uint64_t b = 0; b < bulk; ++b) {
                    std::vector<std::string> to;
                    for (std::uint64_t r = 0; r < bulk_recipients; ++r)
                        to.push_back("bulk" + std::to_string(b) + "-" + std::to_string(r) +
                                     "@slow.example");
                    c.send_mail("sender@example.org", to,
                                short_message("sender@example.org", "bulk"));
                }
            },
            small_, small_interval, one_recipient("sender@example.org", "small", "slow.example"));
    }
    std::string tag() const override { return "small"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"small_median", "small messages: median delay (s)", 2},
                {"small_max", "small messages: maximum delay (s)", 2}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        const auto& d = w.tagged_delays();
        m["small_median"] = median(d);
        m["small_max"] = d.empty() ? 0 : *std::max_element(d.begin(), d.end());
    }

  private:
    std::uint64_t bulk_;
    std::uint64_t small_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_slow_receiver(const Session& session) {
    return std::make_unique<SlowReceiver>(session);
}

} // namespace bench
