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

    // Injects the messages once (see incoming_template()).
    void prepare() override {
        template_ =
            std::make_unique<QueueTemplate>(incoming_template(name(), messages_), session_.verbose);
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
