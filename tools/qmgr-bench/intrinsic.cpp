// Workloads "intrinsic" and "intrinsic-fanout": the queue
// manager's own work, with nothing else setting the pace.  Every recipient
// goes to discard(8) (default_transport = discard, each domain a
// destination of its own) and the run's queue directory is a tmpfs, so
// that neither a delivery agent nor the disk limits the drain.
//
// "intrinsic" is Postfix's own measure of a queue manager: 20,000
// one-recipient messages waiting in incoming (the flush workload's queue).
// "intrinsic-fanout" measures the work per recipient: 2,000 messages of 50
// recipients each, the recipients of message i at the 50 consecutive
// domains from 50·i mod 500 on (500 domains, 200 recipients each, every
// message 50 deliveries).
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

// What both share: a queue template made once, copied into a tmpfs queue,
// delivered by discard(8).
class DiscardOnTmpfs : public Workload {
  public:
    DiscardOnTmpfs(const Session& s, std::uint64_t recipients)
        : session_(s), recipients_(recipients) {}

    std::uint64_t recipients() const override { return recipients_; }
    int timeout() const override { return 300 + static_cast<int>(recipients_ / 20); }
    bool queue_on_tmpfs() const override { return true; }
    void prepare() override {
        template_ = std::make_unique<QueueTemplate>(queue_spec(), session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {}; }
    MainCf main_cf(const RunContext&) const override { return discard_everything(); }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }

  protected:
    // The mail of the template (injected with no queue manager).
    virtual TemplateSpec queue_spec() const = 0;

  private:
    Session session_;
    std::uint64_t recipients_;
    std::unique_ptr<QueueTemplate> template_;
};

class Intrinsic : public DiscardOnTmpfs {
  public:
    explicit Intrinsic(const Session& s) : DiscardOnTmpfs(s, scaled(20000, s.scale)) {}

    std::string name() const override { return "intrinsic"; }
    std::string describe() const override {
        return with_commas(recipients()) +
               " one-recipient messages (1 kB) waiting in incoming, delivered by discard(8), "
               "the queue on a tmpfs";
    }

  protected:
    TemplateSpec queue_spec() const override { return incoming_template(name(), recipients()); }
};

constexpr std::uint64_t per_message = 50;
constexpr std::uint64_t domains = 500;

class IntrinsicFanout : public DiscardOnTmpfs {
  public:
    explicit IntrinsicFanout(const Session& s)
        : DiscardOnTmpfs(s, scaled(2000, s.scale) * per_message) {}

    std::string name() const override { return "intrinsic-fanout"; }
    std::string describe() const override {
        return with_commas(messages()) + " messages × " + std::to_string(per_message) +
               " recipients over " + std::to_string(domains) +
               " domains waiting in incoming, delivered by discard(8), the queue on a tmpfs";
    }

  protected:
    // One SMTP session, the recipients of a message pipelined.
    TemplateSpec queue_spec() const override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = messages();
        t.inject = [n](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            c.pipeline_recipients(per_message);
            const std::string from = "sender@example.org";
            const std::string body = short_message(from, "intrinsic-fanout");
            std::vector<std::string> to(per_message);
            for (std::uint64_t i = 0; i < n; ++i) {
                for (std::uint64_t j = 0; j < per_message; ++j)
                    to[j] = "u" + std::to_string(i) + "@d" +
                            std::to_string((i * per_message + j) % domains) + ".example";
                c.send_mail(from, to, body);
            }
            c.quit();
        };
        t.ready = {{"incoming", n}};
        t.queues = {"incoming"};
        return t;
    }

  private:
    std::uint64_t messages() const { return recipients() / per_message; }
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_intrinsic(const Session& session) {
    return std::make_unique<Intrinsic>(session);
}

// See the comment at the top of this file.
std::unique_ptr<Workload> make_intrinsic_fanout(const Session& session) {
    return std::make_unique<IntrinsicFanout>(session);
}

} // namespace bench
