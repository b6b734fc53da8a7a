// Workloads "tarpit" and "tarpit-alone" (slow-destination isolation, and
// what the shares cost when nothing is congested): one-recipient messages
// to one healthy destination (an smtp-sink that answers at once) and, in
// "tarpit", as many to each of 4 tarpits (smtp-sinks that accept the
// connection and wait 30 s before their greeting, and drop the session at
// RSET, so that every delivery attempt pays the 30 s: no cached session is
// reused), interleaved, all waiting in incoming when the queue manager
// starts.  The transport has 20 agents (default_process_limit = 20); the
// SMTP timeouts are a site's defaults (the 300 s greeting timeout lets a
// tarpit hold an agent 30 s per attempt).  On the cqmgr side,
// cqmgr_destination_agent_share = 20% (4 agents while another destination
// waits).  A run ends when the healthy destination has drained (the
// tarpits' mail would take far longer), or, if it starves, `give_up`
// seconds after its first delivery; the figure is its drain, from the
// queue manager's start, with the tarpits and alone.  The session's
// summary (print_tarpit_targets) gives the two ratios the shares are held
// to: cqmgr's drain alone against stock's alone, and cqmgr's with the
// tarpits against its own alone.
#include "clock.hpp"
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "run.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

#include <cstdio>

namespace bench {
namespace {

constexpr int tarpits = 4;
constexpr int tarpit_wait = 30; // seconds before the greeting
constexpr int agents = 20;      // default_process_limit
constexpr const char* share = "20%";
// Seconds after the healthy destination's first delivery when a starving
// run stops: twice the tarpits' delay, 100 times what the healthy mail
// needs alone (stock's starves: its tarpits hold every agent).
constexpr double give_up = 60;

class Tarpit : public Workload {
  public:
    Tarpit(const Session& s, bool with_tarpits)
        : session_(s), with_tarpits_(with_tarpits), per_destination_(scaled(600, s.scale, 10)) {}

    std::string name() const override { return with_tarpits_ ? "tarpit" : "tarpit-alone"; }
    std::string describe() const override {
        std::string healthy = with_commas(per_destination_) +
                              " one-recipient messages to a healthy smtp-sink, " +
                              std::to_string(agents) + " agents";
        std::string cqmgr = std::string("; cqmgr with cqmgr_destination_agent_share = ") + share;
        if (!with_tarpits_) return healthy + ", alone, waiting in incoming" + cqmgr;
        return healthy + ", and as many to each of " + std::to_string(tarpits) + " tarpits (" +
               std::to_string(tarpit_wait) +
               " s before the greeting, no session reuse), interleaved, waiting in incoming; "
               "the run ends when the healthy sink has its mail (or gives up on it " +
               std::to_string(static_cast<int>(give_up)) + " s after its first delivery)" + cqmgr;
    }
    // The healthy destination's mail: what a run measures.
    std::uint64_t recipients() const override { return per_destination_; }
    int timeout() const override { return 600 + static_cast<int>(per_destination_ / 5); }
    bool deferrals_expected() const override { return with_tarpits_; }
    bool watches_peaks() const override { return true; }
    bool measured(const DeliveryWatch& w) const override {
        return w.tagged_sent() >= per_destination_ ||
               (w.first_sent_at() > 0 && boot_seconds() - w.first_sent_at() >= give_up);
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
        std::vector<compat::SinkSpec> out{sink_spec("healthy")};
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
        MainCf cf{{"transport_maps", table + " }"},
                  {"default_process_limit", std::to_string(agents)}};
        if (run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_destination_agent_share", share);
        return cf;
    }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }
    std::string tag() const override { return "healthy"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"healthy_sent", "healthy destination: delivered", 0},
                {"healthy_drain", "healthy destination: drain, or until the run gave up (s)", 2},
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

namespace {

// The median healthy drain of side `side` in `runs`, and how many runs it
// is over (0: none succeeded).
std::pair<double, int> healthy_drain(const std::vector<RunResult>& runs, const std::string& side) {
    std::vector<double> v;
    for (const auto& r : runs)
        if (r.side == side && r.error.empty() && r.metrics.count("healthy_drain"))
            v.push_back(r.metrics.at("healthy_drain"));
    return {median(v), static_cast<int>(v.size())};
}

} // namespace

void print_tarpit_targets(std::ostream& out,
                          const std::map<std::string, std::vector<RunResult>>& runs) {
    auto alone = runs.find("tarpit-alone");
    auto with = runs.find("tarpit");
    if (alone == runs.end() || with == runs.end()) return;
    auto [stock_alone, n1] = healthy_drain(alone->second, "stock");
    auto [cqmgr_alone, n2] = healthy_drain(alone->second, "cqmgr");
    auto [stock_with, n3] = healthy_drain(with->second, "stock");
    auto [cqmgr_with, n4] = healthy_drain(with->second, "cqmgr");
    auto figure = [](double v, int n) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", v);
        return n ? std::string(buf) : std::string("-");
    };
    auto ratio = [](double a, int na, double b, int nb, double target) {
        char buf[64];
        if (!na || !nb || b <= 0)
            std::snprintf(buf, sizeof buf, "- | ≤ %.2f | -", target);
        else
            std::snprintf(buf, sizeof buf, "%.3f | ≤ %.2f | %s", a / b, target,
                          a / b <= target ? "**yes**" : "no");
        return std::string(buf);
    };
    out << "\n### tarpit targets\n\n"
        << "The healthy destination's drain (medians), with cqmgr_destination_agent_share = "
        << share << " and " << agents << " agents.\n\n"
        << "| figure | stock qmgr | cqmgr |\n|---|---|---|\n"
        << "| healthy destination alone: drain (s) | " << figure(stock_alone, n1) << " | "
        << figure(cqmgr_alone, n2) << " |\n"
        << "| with " << tarpits << " tarpits: drain, or until the run gave up (s) | "
        << figure(stock_with, n3) << " | " << figure(cqmgr_with, n4) << " |\n\n"
        << "| ratio | value | target | met? |\n|---|---|---|---|\n"
        << "| cqmgr alone / stock alone | " << ratio(cqmgr_alone, n2, stock_alone, n1, 1.1)
        << " |\n"
        << "| cqmgr with tarpits / cqmgr alone | " << ratio(cqmgr_with, n4, cqmgr_alone, n2, 1.2)
        << " |\n"
        << std::flush;
}

} // namespace bench
