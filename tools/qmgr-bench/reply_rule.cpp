// Workload "reply-rule" (reply rules that act): 10 one-recipient messages
// to each of the provider's 50 domains (mx_provider.hpp), waiting in
// incoming.  The provider's receiver behaves as Yahoo's does: a sender may
// send 300 messages a minute (all at once if it likes), and once it goes
// past that, every MAIL it sends for the next 2 minutes is answered
// `421 4.7.0 [TSS04] Messages from ADDRESS temporarily deferred due to
// unexpected volume or user complaints` and the session closed; after
// that it is counted afresh, and the rest of the mail fits in its
// allowance.  Both sides retry deferred mail after 10-20 s.  cqmgr's side
// has the provider table and cqmgr_reply_actions with
// `/\[TSS04\]/ suspend provider after 3/10m for 2m` (until the daemon knows
// it, it changes nothing).  The figures: the delivery attempts the
// receiver saw during the 2 minutes, and the time from their end until it
// accepted mail again.
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "mx_provider.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr double kBlockSeconds = 120;

class ReplyRule : public Workload {
  public:
    explicit ReplyRule(const Session& s)
        : session_(s), messages_(scaled(10, s.scale, 2) * kProviderDomains),
          per_minute_(static_cast<int>(scaled(300, s.scale, 10))) {}

    std::string name() const override { return "reply-rule"; }
    std::string describe() const override {
        return with_commas(messages_) + " one-recipient messages over " +
               std::to_string(kProviderDomains) +
               " domains whose MX hosts sit under one provider suffix (dnsmasq), waiting in "
               "incoming; the provider's receiver allows " +
               std::to_string(per_minute_) +
               " messages a minute, then answers every MAIL with \"421 4.7.0 [TSS04] ... "
               "temporarily deferred due to unexpected volume\" for 2 minutes; backoff 10-20 s; "
               "cqmgr with the provider table and cqmgr_reply_actions = " +
               rule();
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 900; }
    bool deferrals_expected() const override { return true; }
    bool follows_mx() const override { return true; }

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
                c.send_mail(from, {provider_recipient("u", i)}, short_message(from, "tss04"));
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
            for (auto& kv : cqmgr_provider_cf(run, {}))
                cf.push_back(kv);
            cf.emplace_back("cqmgr_reply_actions", "pcre:" + conf_table(run, "bench-actions"));
        }
        return cf;
    }
    void populate(const RunContext& run) const override {
        template_->copy_into(run.inst);
        if (run.kind == compat::QmgrKind::Cqmgr) {
            write_provider_tables(run, {});
            compat::write_file(conf_table(run, "bench-actions"), rule() + "\n");
        }
    }
    std::unique_ptr<RunFixture> fixture(const RunContext& run) const override {
        ReceiverLimits rx = provider_receiver();
        rx.rate = per_minute_;
        rx.rate_burst = per_minute_;
        rx.block_seconds = kBlockSeconds;
        return std::make_unique<ProviderFixture>(run, rx, messages_, report);
    }
    std::vector<MetricDef> extra_metrics() const override {
        auto defs = receiver_metric_defs();
        defs.push_back({"blocks", "receiver: 2-minute blocks", 0});
        defs.push_back({"block_attempts", "attempts (MAIL) during the first block", 0});
        defs.push_back({"block_sessions", "sessions during the first block", 0});
        defs.push_back(
            {"resume_after", "first message accepted after the first block, from its end (s)", 2});
        return defs;
    }

  private:
    static std::string rule() { return "/\\[TSS04\\]/ suspend provider after 3/10m for 2m"; }

    // The first block's attempts, and when mail was accepted after it.
    static void report(const LimitReceiver& rx, double, Metrics& m) {
        auto blocks = rx.blocks();
        m["blocks"] = static_cast<double>(blocks.size());
        if (blocks.empty()) return;
        auto [from, to] = blocks.front();
        auto events = rx.events();
        ReceiverCounts c = count_events(events, from, to);
        m["block_attempts"] = static_cast<double>(c.mails + c.rate_refused + c.blocked);
        m["block_sessions"] = static_cast<double>(c.sessions);
        for (const auto& e : events)
            if (e.kind == ReceiverEvent::mail && e.at >= to) {
                m["resume_after"] = e.at - to;
                break;
            }
    }

    Session session_;
    std::uint64_t messages_;
    int per_minute_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_reply_rule(const Session& session) {
    return std::make_unique<ReplyRule>(session);
}

} // namespace bench
