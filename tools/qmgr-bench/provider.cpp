// Workload "provider" (limits where receivers enforce them): 40
// one-recipient messages to each of 50 domains whose MX hosts all sit under
// one provider's suffix (mx_provider.hpp), waiting in incoming when the
// queue manager starts; smtp(8) follows the MX records that dnsmasq serves.
// The provider's receiver allows, for all its addresses together, 10
// sessions at once (421 at the greeting beyond them) and 300 messages a
// minute in bursts of at most 10 (450 at MAIL beyond them), and takes
// 0.5 s to answer each DATA.  Stock qmgr limits each of the 50 domains on
// its own, 20 deliveries at once each; cqmgr's side has the provider table
// and the provider limits cqmgr_provider_concurrency_limits = 10 and
// cqmgr_provider_rate_limits = 300/1m,1 (until the daemon knows them they
// change nothing).  The figures: the receiver's exact peak of sessions, the
// share of delivery attempts deferred (in the maillog and at the receiver),
// and the throughput against the receiver's allowance.  A run stops when
// everything is delivered or at a quarter more than the allowance needs,
// and a minute (stop_after()): stock may take many times that.
#include "clock.hpp"
#include "mail_setup.hpp"
#include "mx_provider.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr int kSessions = 10;
constexpr int kPerMinute = 300;
constexpr int kBurst = 10;

class Provider : public Workload {
  public:
    explicit Provider(const Session& s)
        : session_(s), messages_(scaled(40, s.scale, 2) * kProviderDomains) {}

    std::string name() const override { return "provider"; }
    std::string describe() const override {
        return with_commas(messages_) + " one-recipient messages over " +
               std::to_string(kProviderDomains) +
               " domains whose MX hosts sit under one provider suffix (dnsmasq), waiting in "
               "incoming; the provider's receiver allows " +
               std::to_string(kSessions) + " sessions at once (421 beyond) and " +
               std::to_string(kPerMinute) + " messages a minute in bursts of " +
               std::to_string(kBurst) +
               " (450 at MAIL beyond), 0.5 s per DATA; backoff 10-20 s; cqmgr with the "
               "provider table, cqmgr_provider_concurrency_limits = " +
               std::to_string(kSessions) + " and cqmgr_provider_rate_limits = " + rate();
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return static_cast<int>(cap()) + 300; }
    bool deferrals_expected() const override { return true; }
    bool follows_mx() const override { return true; }
    // Everything delivered, or stop_after() the allowance's time.
    bool measured(const DeliveryWatch& w) const override {
        return w.sent() >= messages_ ||
               (w.first_sent_at() > 0 && boot_seconds() - w.first_sent_at() >= cap());
    }
    bool reports_delivery() const override { return false; }

    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = messages_;
        t.inject = [n](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            const std::string from = "sender@example.org";
            for (std::uint64_t i = 0; i < n; ++i)
                c.send_mail(from, {provider_recipient("u", i)}, short_message(from, "provider"));
            c.quit();
        };
        t.ready = {{"incoming", n}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {}; }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = mx_delivery_cf();
        if (run.kind == compat::QmgrKind::Cqmgr)
            for (auto& kv : cqmgr_provider_cf(run, limits()))
                cf.push_back(kv);
        return cf;
    }
    void populate(const RunContext& run) const override {
        template_->copy_into(run.inst);
        if (run.kind == compat::QmgrKind::Cqmgr) write_provider_tables(run, limits());
    }
    std::unique_ptr<RunFixture> fixture(const RunContext& run) const override {
        ReceiverLimits rx = provider_receiver();
        rx.sessions = kSessions;
        rx.rate = kPerMinute;
        rx.rate_burst = kBurst;
        rx.data_seconds = 0.5;
        // Accepted per minute, against the allowance.
        return std::make_unique<ProviderFixture>(
            run, rx, messages_, [](const LimitReceiver&, double, Metrics& m) {
                m["allowance_pct"] = 100.0 * m["rx_per_minute"] / kPerMinute;
            });
    }
    std::vector<MetricDef> extra_metrics() const override {
        auto defs = receiver_metric_defs();
        defs.push_back({"allowance_pct", "throughput, % of the receiver's allowance", 1});
        return defs;
    }

  private:
    double cap() const { return stop_after(static_cast<double>(messages_) * 60 / kPerMinute); }
    static ProviderLimits limits() { return {kSessions, rate()}; }
    // Evenly spaced: a burst would exceed the receiver's.
    static std::string rate() { return std::to_string(kPerMinute) + "/1m,1"; }

    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_provider(const Session& session) {
    return std::make_unique<Provider>(session);
}

} // namespace bench
