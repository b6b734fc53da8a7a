// Workload "fanout": one message whose recipients are spread evenly over many
// destinations (d0.example, d1.example, ...), each routed by transport_maps
// to a nexthop of its own. In a private network namespace every nexthop is a
// different loopback address ([127.1.X.Y]:port) that one smtp-sink listening
// on 0.0.0.0 answers; otherwise they all share [127.0.0.1]:port, which makes
// them one destination for the scheduler.
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr std::uint64_t per_destination = 200;

class Fanout : public Workload {
  public:
    explicit Fanout(const Session& s)
        : session_(s), destinations_(scaled(1000, s.scale)),
          recipients_(destinations_ * per_destination) {}

    std::string name() const override { return "fanout"; }
    std::string describe() const override {
        return "one message with " + with_commas(recipients_) + " recipients over " +
               with_commas(destinations_) +
               (session_.private_network ? " destinations (one nexthop each)"
                                         : " domains sharing ONE nexthop (no private network)") +
               ", waiting in incoming";
    }
    std::uint64_t recipients() const override { return recipients_; }
    int timeout() const override { return 300 + static_cast<int>(recipients_ / 100); }

    // One SMTP transaction with pipelined RCPT TO commands, no queue manager;
    // smtpd_recipient_limit and message_size_limit (which counts the envelope)
    // are raised for it.
    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        std::uint64_t n = recipients_;
        t.main_cf = [n](std::uint16_t) {
            return MainCf{{"in_flow_delay", "0"},
                          {"smtpd_recipient_limit", std::to_string(n)},
                          {"message_size_limit", "0"}};
        };
        std::vector<std::string> to;
        to.reserve(recipients_);
        // Interleaved, as a list sorted by local part would be.
        for (std::uint64_t i = 0; i < recipients_; ++i)
            to.push_back("u" + std::to_string(i / destinations_) + "@d" +
                         std::to_string(i % destinations_) + ".example");
        t.inject = [to = std::move(to)](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            c.pipeline_recipients(500);
            c.send_mail("sender@example.org", to,
                        "From: <sender@example.org>\nTo: undisclosed-recipients:;\n"
                        "Subject: fanout\n\nfanout benchmark message\n");
            c.quit();
        };
        t.ready = {{"incoming", 1}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override {
        return {sink_spec("a", {}, session_.private_network ? "0.0.0.0" : "127.0.0.1")};
    }
    MainCf main_cf(const RunContext& run) const override {
        return {{"transport_maps", "texthash:" + run.inst.conf_dir() + "/transport"}};
    }
    // Writes the transport table, then copies the message.
    void populate(const RunContext& run) const override {
        std::string port = std::to_string(run.sink_ports[0]);
        std::string table;
        for (std::uint64_t d = 0; d < destinations_; ++d) {
            std::string host = session_.private_network ? "127.1." + std::to_string(d / 200) + "." +
                                                              std::to_string(d % 200 + 1)
                                                        : "127.0.0.1";
            table += "d" + std::to_string(d) + ".example smtp:[" + host + "]:" + port + "\n";
        }
        compat::write_file(run.inst.conf_dir() + "/transport", table);
        template_->copy_into(run.inst);
    }

  private:
    Session session_;
    std::uint64_t destinations_;
    std::uint64_t recipients_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_fanout(const Session& session) {
    return std::make_unique<Fanout>(session);
}

} // namespace bench
