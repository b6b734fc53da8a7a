// Workload "deferred-restart": one-recipient messages in deferred, with
// their defer logs, because their destination was down; now it is back up
// and the queue manager starts. Reports the time to the first delivery too.
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

class DeferredRestart : public Workload {
  public:
    explicit DeferredRestart(const Session& s) : session_(s), messages_(scaled(50000, s.scale)) {}

    std::string name() const override { return "deferred-restart"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages in deferred (deferred by stock qmgr while the "
               "destination refused connections), due now, destination back up";
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 20); }

    // Stock qmgr with the relay host on a port nothing listens on defers every
    // message once; the template keeps deferred/ and defer/.
    void prepare() override {
        template_ =
            std::make_unique<QueueTemplate>(deferred_template(name(), messages_), session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a")}; }
    MainCf main_cf(const RunContext& run) const override { return relay_to(run.sink_ports[0]); }
    // The copies, made due now.
    void populate(const RunContext& run) const override { copy_due(*template_, run.inst); }

  private:
    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_deferred_restart(const Session& session) {
    return std::make_unique<DeferredRestart>(session);
}

} // namespace bench
