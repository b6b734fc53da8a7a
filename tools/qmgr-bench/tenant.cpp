// Workload "tenant" (sender-scoped limits): two senders share one provider
// (mx_provider.hpp).  A campaign of 5,000 one-recipient messages from
// news@campaign.example waits in incoming when the queue manager starts; a
// trickle of 200 from alerts@trickle.example arrives one a second while it
// drains; both go to the provider's 50 domains.  The provider's receiver
// allows 10 sessions at once (421 beyond) and 1,200 messages a minute in
// bursts of at most 20 (450 at MAIL beyond), and takes 0.2 s to answer
// each DATA.  cqmgr's side has the provider table, the provider's limits
// (9 at once, 1200/1m,1) and cqmgr_sender_limits giving the campaign's
// domain `concurrency=7 rate=1110/1m,1 per provider`, so that the trickle
// finds room (until the daemon knows them they change nothing).  The
// figures: the trickle's delays (delay= in the maillog: arrival to
// delivery, of the messages delivered before the run stopped) and the
// campaign's drain (its last message accepted by the receiver, from the
// first injection).  A run stops when everything is delivered or at a
// quarter more than the allowance needs, and a minute (stop_after()):
// stock may take many times that.
#include "clock.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "mx_provider.hpp"
#include "paced_injection.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <cstdio>

namespace bench {
namespace {

constexpr int kSessions = 10;
constexpr int kPerMinute = 1200;
constexpr int kBurst = 20;
const std::string kCampaignSender = "news@campaign.example";
const std::string kTrickleSender = "alerts@trickle.example";

class Tenant : public Workload {
  public:
    explicit Tenant(const Session& s)
        : session_(s), campaign_(scaled(5000, s.scale, 100)), trickle_(scaled(200, s.scale, 20)),
          // The trickle spans four fifths of the campaign's drain at the allowance.
          interval_(static_cast<double>(campaign_) * 60.0 / kPerMinute * 0.8 /
                    static_cast<double>(trickle_)) {}

    std::string name() const override { return "tenant"; }
    std::string describe() const override {
        char every[32];
        std::snprintf(every, sizeof every, "%.2f", interval_);
        return "a campaign of " + with_commas(campaign_) +
               " one-recipient messages waiting in incoming and a trickle of " +
               with_commas(trickle_) + " from another sender domain (one per " + every +
               " s), to " + std::to_string(kProviderDomains) +
               " domains of one provider (dnsmasq); its receiver allows " +
               std::to_string(kSessions) + " sessions at once and " + with_commas(kPerMinute) +
               " messages a minute in bursts of " + std::to_string(kBurst) +
               ", 0.2 s per DATA; backoff 10-20 s; cqmgr with the provider's limits and "
               "cqmgr_sender_limits = " +
               campaign_limit();
    }
    std::uint64_t recipients() const override { return campaign_ + trickle_; }
    int timeout() const override { return static_cast<int>(cap()) + 300; }
    bool deferrals_expected() const override { return true; }
    bool follows_mx() const override { return true; }
    // Everything delivered, or stop_after() the allowance's time.
    bool measured(const DeliveryWatch& w) const override {
        return w.sent() >= recipients() ||
               (w.first_sent_at() > 0 && boot_seconds() - w.first_sent_at() >= cap());
    }
    bool reports_delivery() const override { return false; }

    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = campaign_;
        t.inject = [n](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            for (std::uint64_t i = 0; i < n; ++i)
                c.send_mail(kCampaignSender, {provider_recipient("campaign", i)},
                            short_message(kCampaignSender, "campaign"));
            c.quit();
        };
        t.ready = {{"incoming", n}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {}; }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = mx_delivery_cf();
        if (run.kind == compat::QmgrKind::Cqmgr) {
            for (auto& kv : cqmgr_provider_cf(run, limits()))
                cf.push_back(kv);
            cf.emplace_back("cqmgr_sender_limits", "texthash:" + conf_table(run, "bench-senders"));
        }
        return cf;
    }
    void populate(const RunContext& run) const override {
        template_->copy_into(run.inst);
        if (run.kind == compat::QmgrKind::Cqmgr) {
            write_provider_tables(run, limits());
            compat::write_file(conf_table(run, "bench-senders"),
                               "campaign.example " + campaign_limit() + "\n");
        }
    }
    std::unique_ptr<RunFixture> fixture(const RunContext& run) const override {
        ReceiverLimits rx = provider_receiver();
        rx.sessions = kSessions;
        rx.rate = kPerMinute;
        rx.rate_burst = kBurst;
        rx.data_seconds = 0.2;
        return std::make_unique<ProviderFixture>(run, rx, campaign_ + trickle_, campaign_drain());
    }
    bool live_injection() const override { return true; }
    // Nothing at once (the campaign is in incoming), then the trickle.
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<PacedInjection>(
            run.smtpd_port, [](compat::SmtpClient&) {}, trickle_, interval_,
            [](compat::SmtpClient& c, std::uint64_t i) {
                c.send_mail(kTrickleSender, {provider_recipient("trickle", i)},
                            short_message(kTrickleSender, "trickle"));
            });
    }
    std::string tag() const override { return "trickle"; }
    std::vector<MetricDef> extra_metrics() const override {
        auto defs = receiver_metric_defs();
        defs.push_back({"trickle_delivered", "trickle: messages delivered", 0});
        defs.push_back({"trickle_median", "trickle: median delay (s)", 2});
        defs.push_back({"trickle_p99", "trickle: p99 delay (s)", 2});
        defs.push_back({"trickle_max", "trickle: maximum delay (s)", 2});
        defs.push_back({"campaign_delivered", "campaign: messages delivered", 0});
        defs.push_back({"campaign_drain", "campaign: drain, first injection to its last (s)", 2});
        return defs;
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        const auto& d = w.tagged_delays();
        m["trickle_delivered"] = static_cast<double>(d.size());
        m["trickle_median"] = median(d);
        m["trickle_p99"] = percentile(d, 99);
        m["trickle_max"] = d.empty() ? 0 : *std::max_element(d.begin(), d.end());
    }

  private:
    double cap() const {
        return stop_after(static_cast<double>(campaign_ + trickle_) * 60 / kPerMinute);
    }
    // One session under the receiver's limit: at 19 deliveries a second a
    // session that smtp(8) has just closed, or that the connection cache
    // let go, is still counted by the receiver for a moment when the next
    // one opens (with 10, the receiver refused 811 sessions at the
    // greeting in a run, and each refusal deferred a destination's mail).
    static ProviderLimits limits() { return {kSessions - 1, std::to_string(kPerMinute) + "/1m,1"}; }
    // The trickle's room is left over: 7 of 9 sessions, and 92.5 % of the
    // rate, which leaves 1.5 a second for its one a second (with 95 %, one
    // a second, it waited behind the older campaign for up to a minute).
    static std::string campaign_limit() {
        return "concurrency=7 rate=" + std::to_string(kPerMinute * 925 / 1000) +
               "/1m,1 per provider";
    }

    // The campaign's messages accepted by the receiver, and its last one
    // (if all of them were: else the run stopped first).
    ProviderFixture::Report campaign_drain() const {
        std::uint64_t campaign = campaign_;
        return [campaign](const LimitReceiver& rx, double start, Metrics& m) {
            double last = 0;
            std::uint64_t n = 0;
            for (const auto& e : rx.events())
                if (e.kind == ReceiverEvent::delivered && e.sender_domain == "campaign.example") {
                    last = e.at;
                    ++n;
                }
            m["campaign_delivered"] = static_cast<double>(n);
            if (n >= campaign) m["campaign_drain"] = last - start;
        };
    }

    Session session_;
    std::uint64_t campaign_;
    std::uint64_t trickle_;
    double interval_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_tenant(const Session& session) {
    return std::make_unique<Tenant>(session);
}

} // namespace bench
