// Workload "learned-rate" (adaptive limits against a message rate): 300
// one-recipient messages, waiting in incoming, to a receiving smtpd of the
// same instance whose anvil allows 60 messages a minute per client
// (smtpd_client_message_rate_limit, anvil_rate_time_unit = 60s) and
// answers a MAIL beyond that with `450 4.7.1 Error: too much mail from
// ADDRESS`; deferred mail comes back after 10-20 s.  The allowance alone
// needs 4 minutes (five windows of 60).  cqmgr's side has adaptive limits
// on (cqmgr_adaptive_limit_transports = smtp, as in concurrency-421): what
// they learn of a message rate shows as the share of attempts deferred and
// the drain.  At a smaller --scale, the messages and the allowance shrink
// together, so that a run takes as long.
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

class LearnedRate : public Workload {
  public:
    explicit LearnedRate(const Session& s)
        : session_(s), messages_(scaled(300, s.scale, 10)),
          per_minute_(static_cast<int>(scaled(60, s.scale, 2))) {}

    std::string name() const override { return "learned-rate"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages, waiting in incoming, to a receiving smtpd whose anvil "
               "allows " +
               std::to_string(per_minute_) +
               " messages a minute per client (smtpd_client_message_rate_limit; 450 at MAIL "
               "beyond); backoff 10-20 s; cqmgr with cqmgr_adaptive_limit_transports = smtp";
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 900; }
    bool deferrals_expected() const override { return true; }

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
                c.send_mail(from, {"u" + std::to_string(i) + "@rate.example"},
                            short_message(from, "learned-rate"));
            c.quit();
        };
        t.ready = {{"incoming", n}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    // The port of the receiving smtpd, reserved like a sink's.
    std::vector<compat::SinkSpec> sinks() const override {
        compat::SinkSpec rx = sink_spec("rx");
        rx.start = false;
        return {rx};
    }
    // The event limits apply to mynetworks too (no exceptions); what the
    // receiver accepts is discarded.
    std::vector<std::string> master_cf(const RunContext& run) const override {
        return {"127.0.0.1:" + std::to_string(run.sink_ports[0]) +
                " inet n - n - 20 smtpd -o myhostname=rx.rate.example"
                " -o smtpd_client_message_rate_limit=" +
                std::to_string(per_minute_) +
                " -o smtpd_client_event_limit_exceptions="
                " -o smtpd_end_of_data_restrictions=check_client_access,static:DISCARD"};
    }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.insert(cf.end(), {{"in_flow_delay", "0"}, // the receiving smtpd shares the tokens
                             {"anvil_rate_time_unit", "60s"},
                             {"minimal_backoff_time", "10s"},
                             {"maximal_backoff_time", "20s"},
                             {"queue_run_delay", "5s"}});
        if (run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_adaptive_limit_transports", "smtp");
        return cf;
    }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"allowance_drain", "drain the allowance needs at least (s)", 0}};
    }
    // Whole windows of 60 s before the last one starts.
    void add_metrics(const DeliveryWatch&, const Injection*, Metrics& m) const override {
        m["allowance_drain"] =
            60.0 * static_cast<double>((messages_ - 1) / static_cast<std::uint64_t>(per_minute_));
    }

  private:
    Session session_;
    std::uint64_t messages_;
    int per_minute_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_learned_rate(const Session& session) {
    return std::make_unique<LearnedRate>(session);
}

} // namespace bench
