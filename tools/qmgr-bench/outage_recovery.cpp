// Workload "outage-recovery": 5,000 one-recipient messages in deferred
// (deferred by stock qmgr while their destination refused connections), due
// now, and the destination back up, answering each DATA after 1 s, with up
// to 100 deliveries at once (about 100 messages per second). Stock moves
// every due message into the active queue at once; cqmgr with
// `cqmgr_recovery_rate = 120` (--recovery-rate) promotes them at 120 per
// second. The figures that matter are the peaks (messages in active/,
// connections at the sink) and the drain time.
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

class OutageRecovery : public Workload {
  public:
    explicit OutageRecovery(const Session& s) : session_(s), messages_(scaled(5000, s.scale)) {}

    std::string name() const override { return "outage-recovery"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages in deferred for one destination, due now, the "
               "destination back up (smtp-sink answering DATA after 1 s, destination "
               "concurrency limit 100); cqmgr with "
               "cqmgr_recovery_rate = " +
               std::to_string(session_.recovery_rate);
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 20); }
    bool watches_peaks() const override { return true; }

    // As deferred-restart: stock qmgr defers every message once against a
    // port nothing listens on.
    void prepare() override {
        template_ =
            std::make_unique<QueueTemplate>(deferred_template(name(), messages_), session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a", {"-w", "1"})}; }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.emplace_back("smtp_destination_concurrency_limit", "100");
        if (run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_recovery_rate", std::to_string(session_.recovery_rate));
        return cf;
    }
    // The copies, made due now.
    void populate(const RunContext& run) const override { copy_due(*template_, run.inst); }

  private:
    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_outage_recovery(const Session& session) {
    return std::make_unique<OutageRecovery>(session);
}

} // namespace bench
