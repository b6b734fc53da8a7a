// Workload "intake": smtp-source sends one-recipient messages over 20 SMTP
// sessions while the queue manager delivers them to one smtp-sink, with
// Postfix's default flow control (in_flow_delay = 1s). Drain time counts from
// the first injection; the intake rate is messages per second of injection.
#include "clock.hpp"
#include "error.hpp"
#include "mail_setup.hpp"
#include "workloads.hpp"

#include <sys/wait.h>

namespace bench {
namespace {

// smtp-source as a child process, polled.
class SmtpSourceInjection : public Injection {
  public:
    explicit SmtpSourceInjection(compat::SpawnOptions o) : opts_(std::move(o)) {}

    // Starts smtp-source on the first call; done when it has exited with status 0.
    bool step() override {
        if (started == 0) {
            started = boot_seconds();
            proc_ = compat::Process::spawn(opts_);
            return false;
        }
        if (proc_.running()) return false;
        finished = boot_seconds();
        if (!WIFEXITED(proc_.status()) || WEXITSTATUS(proc_.status()) != 0)
            throw compat::Error("expected `" + compat::join_command(opts_.argv) +
                                "` to exit with status 0, found " +
                                compat::describe_wait_status(proc_.status()) + " (output in " +
                                opts_.output_path + ")");
        return true;
    }

  private:
    compat::SpawnOptions opts_;
    compat::Process proc_;
};

class Intake : public Workload {
  public:
    explicit Intake(const Session& s) : messages_(scaled(20000, s.scale)) {}

    std::string name() const override { return "intake"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages (1 kB) arriving over 20 SMTP sessions (smtp-source) "
               "while they are delivered to one smtp-sink; default flow control";
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 20); }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a")}; }
    MainCf main_cf(const RunContext& run) const override { return relay_to(run.sink_ports[0]); }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<SmtpSourceInjection>(
            smtp_source(run.inst, run.smtpd_port, messages_, 20, "bob@dest.example", "inject"));
    }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"intake_rate", "intake rate (messages accepted per second)", 0},
                {"intake_time", "injection time (s)", 2}};
    }
    void add_metrics(const DeliveryWatch&, const Injection* inj, Metrics& m) const override {
        double t = inj->finished - inj->started;
        m["intake_time"] = t;
        m["intake_rate"] = static_cast<double>(messages_) / t;
    }

  private:
    std::uint64_t messages_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_intake(const Session& session) {
    return std::make_unique<Intake>(session);
}

} // namespace bench
