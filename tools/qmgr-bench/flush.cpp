// Workload "flush": one-recipient messages waiting in incoming, put there with
// no queue manager in master.cf, then drained to one smtp-sink once the queue
// manager starts.
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

class Flush : public Workload {
  public:
    explicit Flush(const Session& s) : session_(s), messages_(scaled(20000, s.scale)) {}

    std::string name() const override { return "flush"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages (1 kB) waiting in incoming, drained to one smtp-sink";
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 20); }

    // Injects the messages once, with no queue manager and in_flow_delay = 0
    // (without a queue manager to hand out tokens, cleanup would wait 1 s each).
    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        t.inject = smtp_source_injector(messages_);
        t.ready = {{"incoming", messages_}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a")}; }
    MainCf main_cf(const RunContext& run) const override { return relay_to(run.sink_ports[0]); }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }

  private:
    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_flush(const Session& session) {
    return std::make_unique<Flush>(session);
}

} // namespace bench
