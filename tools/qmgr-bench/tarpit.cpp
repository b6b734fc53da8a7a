// Workloads "tarpit" and "tarpit-alone" (slow-destination
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
// destination has drained (the tarpits' mail would take far longer), or,
// if it starves, `give_up` seconds after its first delivery (three times
// what it needs alone); the figure is its throughput, with the tarpits and
// alone: what it got over the time it took, or until the run gave up.
#include "clock.hpp"
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr int tarpits = 5;
constexpr int tarpit_wait = 30; // seconds before the greeting

class Tarpit : public Workload {
  public:
    Tarpit(const Session& s, bool with_tarpits)
        : session_(s), with_tarpits_(with_tarpits), per_destination_(scaled(2000, s.scale, 10)) {}

    std::string name() const override { return with_tarpits_ ? "tarpit" : "tarpit-alone"; }
    std::string describe() const override {
        std::string healthy =
            with_commas(per_destination_) + " one-recipient messages to a healthy smtp-sink";
        if (!with_tarpits_) return healthy + " alone, waiting in incoming";
        return healthy + " and as many to each of " + std::to_string(tarpits) + " tarpits (" +
               std::to_string(tarpit_wait) +
               " s before the greeting, no session reuse), interleaved, waiting in incoming; "
               "the run ends when the healthy sink has its mail (or gives up on it at three "
               "times its drain alone); cqmgr with "
               "cqmgr_destination_agent_share = 50%";
    }
    // The healthy destination's mail: what a run measures.
    std::uint64_t recipients() const override { return per_destination_; }
    int timeout() const override { return 600 + static_cast<int>(per_destination_ / 5); }
    bool deferrals_expected() const override { return with_tarpits_; }
    bool watches_peaks() const override { return true; }
    bool measured(const DeliveryWatch& w) const override {
        return w.tagged_sent() >= per_destination_ ||
               (w.first_sent_at() > 0 && boot_seconds() - w.first_sent_at() >= give_up());
    }

    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = per_destination_;
        bool with = with_tarpits_;
        t.inject = [n, with](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            const std::string from = "sender@example.org";
            for (std::uint64_t i = 0; i < n; ++i) {
                c.send_mail(from, {"healthy" + std::to_string(i) + "@healthy.example"},
                            short_message(from, "healthy"));
                for (int d = 0; with && d < tarpits; ++d)
                    c.send_mail(
                        from,
                        {"slow" + std::to_string(i) + "@tarpit" + std::to_string(d) + ".example"},
                        short_message(from, "tarpit"));
            }
            c.quit();
        };
        t.ready = {{"incoming", n * (with ? 1 + tarpits : 1)}};
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
    std::string tag() const override { return "healthy"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"healthy_sent", "healthy destination: delivered", 0},
                {"healthy_drain", "healthy destination: drain, or until the run gave up (s)", 1},
                {"healthy_rate", "healthy destination: msg/s", 1}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        // The run's start, as the common "drain" counted it.
        double start = w.last_sent_at() - m["drain"];
        bool drained = w.tagged_sent() >= per_destination_;
        double drain = (drained ? w.tagged_last_sent_at() : boot_seconds()) - start;
        m["healthy_sent"] = static_cast<double>(w.tagged_sent());
        m["healthy_drain"] = drain;
        m["healthy_rate"] = drain > 0 ? static_cast<double>(w.tagged_sent()) / drain : 0;
    }

  private:
    // Seconds after the first delivery when a starving run stops: three
    // times the healthy destination's drain alone (20 deliveries at once,
    // 1 s each).
    double give_up() const { return 3.0 * static_cast<double>(per_destination_) / 20 + 30; }

    Session session_;
    bool with_tarpits_;
    std::uint64_t per_destination_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_tarpit(const Session& session) {
    return std::make_unique<Tarpit>(session, true);
}

// The healthy destination of "tarpit" alone.
std::unique_ptr<Workload> make_tarpit_alone(const Session& session) {
    return std::make_unique<Tarpit>(session, false);
}

} // namespace bench
