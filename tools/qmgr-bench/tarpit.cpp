// Workloads "tarpit" and "tarpit-alone" (issue #15, slow-destination
// isolation): one-recipient messages to one healthy destination (an
// smtp-sink that takes 1 s to answer each DATA, so that its throughput is
// bound by the agents it gets, 20 at once at the default destination
// concurrency limit, and not by how fast the queue manager takes 12,000
// messages in) and, in "tarpit", as many to each of 5 tarpits (smtp-sinks
// that accept the connection and wait 30 s before their greeting, and drop
// the session at RSET, so that every delivery attempt pays the 30 s: no
// cached session is reused), interleaved, all waiting in incoming when the
// queue manager starts.  The settings are a typical site's: the default
// process limit (100) and SMTP timeouts (the 300 s greeting timeout lets a
// tarpit hold an agent 30 s per attempt).  On the cqmgr side,
// cqmgr_destination_agent_share = 50%.  A run ends when the healthy
// destination has drained (the tarpits' mail would take far longer); the
// figure is its throughput, with the tarpits and alone.
//
// Stock's tarpits start at initial_destination_concurrency (5) each and
// gain one agent per 30 s success cohort, so they take what the healthy
// destination needs only after minutes of tarpit traffic.  "tarpit-late"
// shows that steady state: the tarpits' mail waits in incoming, and the
// healthy destination's mail arrives (over SMTP, all at once) after
// `head_start` seconds, when stock's tarpit windows have grown to the
// destination concurrency limit (20 each: all 100 agents).
#include "clock.hpp"
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr int tarpits = 5;
constexpr int tarpit_wait = 30; // seconds before the greeting
constexpr int head_start = 480; // tarpit-late: seconds before the healthy mail

// Which mail a run has: the healthy destination's alone, with the tarpits'
// (all waiting at the start), or after the tarpits' (tarpit-late).
enum class Mode { alone, together, late };

// The healthy destination's message `i` into `c`.
void send_healthy(compat::SmtpClient& c, std::uint64_t i) {
    const std::string from = "sender@example.org";
    c.send_mail(from, {"healthy" + std::to_string(i) + "@healthy.example"},
                short_message(from, "healthy"));
}

// tarpit-late: the healthy mail, all at once over one session, head_start
// seconds after the first step.
class LateInjection : public Injection {
  public:
    LateInjection(std::uint16_t port, std::uint64_t messages) : port_(port), messages_(messages) {}
    bool step() override {
        double now = boot_seconds();
        if (due_ == 0) due_ = now + head_start;
        if (now < due_) return false;
        started = now;
        compat::SmtpClient c(port_, std::chrono::seconds(300));
        c.ehlo("bench.example");
        for (std::uint64_t i = 0; i < messages_; ++i)
            send_healthy(c, i);
        c.quit();
        finished = boot_seconds();
        return true;
    }

  private:
    std::uint16_t port_;
    std::uint64_t messages_;
    double due_ = 0;
};

class Tarpit : public Workload {
  public:
    Tarpit(const Session& s, Mode mode)
        : session_(s), mode_(mode), with_tarpits_(mode != Mode::alone),
          per_destination_(scaled(2000, s.scale, 10)) {}

    std::string name() const override {
        return mode_ == Mode::alone  ? "tarpit-alone"
               : mode_ == Mode::late ? "tarpit-late"
                                     : "tarpit";
    }
    std::string describe() const override {
        std::string healthy =
            with_commas(per_destination_) + " one-recipient messages to a healthy smtp-sink";
        if (!with_tarpits_) return healthy + " alone, waiting in incoming";
        std::string when = mode_ == Mode::late ? " (sent " + std::to_string(head_start) +
                                                     " s after the start) and as many to each of "
                                               : " and as many to each of ";
        return healthy + when + std::to_string(tarpits) + " tarpits (" +
               std::to_string(tarpit_wait) + " s before the greeting, no session reuse), " +
               (mode_ == Mode::late ? "waiting in incoming" : "interleaved, waiting in incoming") +
               "; the run ends when the healthy sink has its mail; cqmgr with "
               "cqmgr_destination_agent_share = 50%";
    }
    // The healthy destination's mail: what a run measures.
    std::uint64_t recipients() const override { return per_destination_; }
    int timeout() const override {
        return (mode_ == Mode::late ? head_start : 0) + 600 +
               static_cast<int>(per_destination_ / 5);
    }
    bool deferrals_expected() const override { return with_tarpits_; }
    bool watches_peaks() const override { return true; }
    bool measured(const DeliveryWatch& w) const override {
        return w.tagged_sent() >= per_destination_;
    }

    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = per_destination_;
        bool with = with_tarpits_, healthy = mode_ != Mode::late;
        t.inject = [n, with, healthy](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            const std::string from = "sender@example.org";
            for (std::uint64_t i = 0; i < n; ++i) {
                if (healthy) send_healthy(c, i);
                for (int d = 0; with && d < tarpits; ++d)
                    c.send_mail(
                        from,
                        {"slow" + std::to_string(i) + "@tarpit" + std::to_string(d) + ".example"},
                        short_message(from, "tarpit"));
            }
            c.quit();
        };
        t.ready = {{"incoming", n * ((healthy ? 1 : 0) + (with ? tarpits : 0))}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override {
        std::vector<compat::SinkSpec> out{sink_spec("healthy", {"-w", "1"})};
        for (int d = 0; with_tarpits_ && d < tarpits; ++d)
            out.push_back(
                sink_spec("tarpit" + std::to_string(d),
                          {"-W", "connect:" + std::to_string(tarpit_wait), "-q", "rset"}));
        return out;
    }
    MainCf main_cf(const RunContext& run) const override {
        auto nexthop = [&](size_t i) {
            return "smtp:[127.0.0.1]:" + std::to_string(run.sink_ports[i]);
        };
        std::string table = "inline:{ healthy.example=" + nexthop(0);
        for (int d = 0; with_tarpits_ && d < tarpits; ++d)
            table += ", tarpit" + std::to_string(d) + ".example=" + nexthop(1 + d);
        MainCf cf{{"transport_maps", table + " }"}};
        if (run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_destination_agent_share", "50%");
        return cf;
    }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }
    bool live_injection() const override { return mode_ == Mode::late; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        if (mode_ != Mode::late) return nullptr;
        return std::make_unique<LateInjection>(run.smtpd_port, per_destination_);
    }
    std::string tag() const override { return "healthy"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"healthy_drain", "healthy destination: drain (s)", 1},
                {"healthy_rate", "healthy destination: msg/s", 1}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        // The run's start, as the common "drain" counted it.
        double start = w.last_sent_at() - m["drain"];
        double drain = w.tagged_last_sent_at() - start;
        m["healthy_drain"] = drain;
        m["healthy_rate"] = drain > 0 ? static_cast<double>(w.tagged_sent()) / drain : 0;
    }

  private:
    Session session_;
    Mode mode_;
    bool with_tarpits_;
    std::uint64_t per_destination_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_tarpit(const Session& session) {
    return std::make_unique<Tarpit>(session, Mode::together);
}

// The healthy destination's mail after the tarpits' have had a head start.
std::unique_ptr<Workload> make_tarpit_late(const Session& session) {
    return std::make_unique<Tarpit>(session, Mode::late);
}

// The healthy destination of "tarpit" alone.
std::unique_ptr<Workload> make_tarpit_alone(const Session& session) {
    return std::make_unique<Tarpit>(session, Mode::alone);
}

} // namespace bench
