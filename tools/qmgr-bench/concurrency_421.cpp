// Workload "concurrency-421": Postfix's published 421 experiment. One
// message with 400 recipients, two per delivery (200 deliveries), to a
// receiving smtpd of the same instance that allows 5 connections per client
// (anvil) and answers the sixth with 421, and takes 1 s per DATA; the sender
// may open up to 20. Stock qmgr's feedback does not see a 421 after the
// connection is made, so it keeps hitting the limit and defers part of the
// mail; cqmgr with `cqmgr_adaptive_limit_transports = smtp` learns the
// limit. Deferred recipients come back after a short backoff, so a run ends
// when all 400 are delivered.
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr std::uint64_t rcpts = 400;

class Concurrency421 : public Workload {
  public:
    explicit Concurrency421(const Session& s) : session_(s) {}

    std::string name() const override { return "concurrency-421"; }
    std::string describe() const override {
        return "one message with 400 recipients, 2 per delivery, to a receiving smtpd that "
               "allows 5 connections per client (421 above) and takes 1 s per DATA; sender "
               "concurrency limit 20; cqmgr with cqmgr_adaptive_limit_transports = smtp; "
               "backoff 10-20 s";
    }
    std::uint64_t recipients() const override { return rcpts; }
    int timeout() const override { return 600; }
    bool deferrals_expected() const override { return true; }

    // The message, with no queue manager.
    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        t.inject = [](const compat::Instance&, std::uint16_t port) {
            std::vector<std::string> to;
            for (std::uint64_t i = 0; i < rcpts; ++i)
                to.push_back("u" + std::to_string(i) + "@dest.example");
            compat::SmtpClient c(port, std::chrono::seconds(120));
            c.ehlo("bench.example");
            c.pipeline_recipients(100);
            c.send_mail("sender@example.org", to,
                        "From: <sender@example.org>\nTo: undisclosed-recipients:;\n"
                        "Subject: 421\n\n421 experiment\n");
            c.quit();
        };
        t.ready = {{"incoming", 1}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    // The port of the receiving smtpd, reserved like a sink's.
    std::vector<compat::SinkSpec> sinks() const override {
        compat::SinkSpec rx = sink_spec("rx");
        rx.start = false;
        return {rx};
    }
    std::vector<std::string> master_cf(const RunContext& run) const override {
        return {"127.0.0.1:" + std::to_string(run.sink_ports[0]) +
                " inet n - n - 10 smtpd -o smtpd_client_connection_count_limit=5"
                " -o smtpd_client_event_limit_exceptions="
                " -o smtpd_data_restrictions=sleep,1"
                " -o smtpd_end_of_data_restrictions=check_client_access,static:DISCARD"};
    }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.insert(cf.end(), {{"in_flow_delay", "0"}, // the receiving smtpd shares the tokens
                             {"smtp_destination_recipient_limit", "2"},
                             {"smtp_destination_concurrency_limit", "20"},
                             {"minimal_backoff_time", "10s"},
                             {"maximal_backoff_time", "20s"},
                             {"queue_run_delay", "5s"}});
        if (run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_adaptive_limit_transports", "smtp");
        return cf;
    }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }

  private:
    Session session_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_concurrency_421(const Session& session) {
    return std::make_unique<Concurrency421>(session);
}

} // namespace bench
