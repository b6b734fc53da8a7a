// Workload "slow-receiver": bulk mail (messages with 2,000 recipients each)
// and small one-recipient messages to one destination that takes a second to
// answer each DATA (smtp-sink -w 1). The bulk is sent first, then one small
// message every 0.2 s; the figures that matter are the small messages' delays
// (their delay= in the maillog: arrival to delivery), which show whether the
// scheduler lets them past the bulk.
#include "clock.hpp"
#include "mail_setup.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <optional>

namespace bench {
namespace {

constexpr std::uint64_t bulk_recipients = 2000;
constexpr double small_interval = 0.2;

// All bulk messages at once, then the small ones paced, over one SMTP session.
class PacedInjection : public Injection {
  public:
    PacedInjection(std::uint16_t port, std::uint64_t bulk, std::uint64_t small)
        : port_(port), bulk_(bulk), small_(small) {}

    // First call: connect and send the bulk; later calls: the next small
    // message when it is due; done after the last one and QUIT.
    bool step() override {
        double now = boot_seconds();
        if (!client_) {
            started = now;
            client_.emplace(port_, std::chrono::seconds(300));
            client_->ehlo("bench.example");
            client_->pipeline_recipients(500);
            for (std::uint64_t b = 0; b < bulk_; ++b) {
                std::vector<std::string> to;
                for (std::uint64_t r = 0; r < bulk_recipients; ++r)
                    to.push_back("bulk" + std::to_string(b) + "-" + std::to_string(r) +
                                 "@slow.example");
                client_->send_mail("sender@example.org", to, message("bulk"));
            }
            next_small_ = boot_seconds();
            return false;
        }
        if (sent_small_ < small_ && now >= next_small_) {
            client_->send_mail("sender@example.org",
                               {"small" + std::to_string(sent_small_) + "@slow.example"},
                               message("small"));
            ++sent_small_;
            next_small_ += small_interval;
        }
        if (sent_small_ < small_) return false;
        client_->quit();
        finished = boot_seconds();
        return true;
    }

  private:
    // A short message whose subject says what it is.
    static std::string message(const std::string& kind) {
        return "From: <sender@example.org>\nTo: undisclosed-recipients:;\nSubject: " + kind +
               "\n\n" + kind + " benchmark message\n";
    }

    std::uint16_t port_;
    std::uint64_t bulk_;
    std::uint64_t small_;
    std::optional<compat::SmtpClient> client_;
    std::uint64_t sent_small_ = 0;
    double next_small_ = 0;
};

class SlowReceiver : public Workload {
  public:
    explicit SlowReceiver(const Session& s)
        : bulk_(scaled(10, s.scale)), small_(scaled(100, s.scale, 10)) {}

    std::string name() const override { return "slow-receiver"; }
    std::string describe() const override {
        return with_commas(bulk_) + " bulk messages x " + with_commas(bulk_recipients) +
               " recipients, then " + with_commas(small_) +
               " one-recipient messages (one per 0.2 s), all to one smtp-sink that waits 1 s "
               "before answering DATA";
    }
    std::uint64_t recipients() const override { return bulk_ * bulk_recipients + small_; }
    int timeout() const override { return 300 + static_cast<int>(recipients() / 10); }
    std::vector<compat::SinkSpec> sinks() const override {
        return {sink_spec("slow", {"-w", "1"})};
    }
    // smtpd takes 1,000 recipients per message by default.
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.emplace_back("smtpd_recipient_limit", std::to_string(bulk_recipients));
        return cf;
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<PacedInjection>(run.smtpd_port, bulk_, small_);
    }
    std::string tag() const override { return "small"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"small_median", "small messages: median delay (s)", 2},
                {"small_max", "small messages: maximum delay (s)", 2}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        const auto& d = w.tagged_delays();
        m["small_median"] = median(d);
        m["small_max"] = d.empty() ? 0 : *std::max_element(d.begin(), d.end());
    }

  private:
    std::uint64_t bulk_;
    std::uint64_t small_;
};

} // namespace

// See the class comment above.
std::unique_ptr<Workload> make_slow_receiver(const Session& session) {
    return std::make_unique<SlowReceiver>(session);
}

} // namespace bench
