// Workloads "hostile-reply" and "hostile-reply-off" (bounded
// matching): one-recipient messages to a healthy smtp-sink, interleaved
// with messages of 5 recipients each to a receiving smtpd that answers
// every RCPT TO with a 2 KB `450 4.2.0` text made to defeat a backtracking
// pattern (the default greylist rule's `4\.[27]\.[01]\b.*(try|...).*
// later`: "4.2.0 try" over and over, never "later"), all waiting in
// incoming when the queue manager starts.  Each delivery to the hostile
// receiver defers its 5 recipients, and with adaptive limits on, the queue
// manager classifies the replies it reads back from the defer log on its
// event loop.  In "hostile-reply" the cqmgr side has
// cqmgr_adaptive_limit_transports = smtp; in "hostile-reply-off" it has no
// cqmgr_ parameter: the same run with adaptive limits off.  A run ends
// when the healthy destination has drained (the hostile receiver's mail
// stays deferred); the figure is the healthy destination's drain time.
#include "clock.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

constexpr int hostile_rcpts = 5; // recipients per message to the hostile receiver

// The receiver's text: about 2 KB of "4.2.0 try " (an SMTP client reads
// reply lines of up to line_length_limit, 2048 bytes).
std::string crafted_text() {
    std::string text;
    while (text.size() < 1900)
        text += "4.2.0 try ";
    return text;
}

class HostileReply : public Workload {
  public:
    HostileReply(const Session& s, bool adaptive)
        : session_(s), adaptive_(adaptive), healthy_(scaled(2000, s.scale, 10)),
          hostile_(scaled(100, s.scale, 2)) {}

    std::string name() const override { return adaptive_ ? "hostile-reply" : "hostile-reply-off"; }
    std::string describe() const override {
        return with_commas(healthy_) +
               " one-recipient messages to a healthy smtp-sink, interleaved with " +
               with_commas(hostile_) + " messages of " + std::to_string(hostile_rcpts) +
               " recipients to a receiving smtpd that answers each RCPT TO with a 2 KB "
               "\"450 4.2.0 4.2.0 try 4.2.0 try ...\" text, waiting in incoming; the run ends "
               "when the healthy sink has its mail; cqmgr " +
               (adaptive_ ? std::string("with cqmgr_adaptive_limit_transports = smtp")
                          : std::string("with no cqmgr_ parameter (adaptive limits off)"));
    }
    // The healthy destination's mail: what a run measures.
    std::uint64_t recipients() const override { return healthy_; }
    int timeout() const override { return 600; }
    bool deferrals_expected() const override { return true; }
    bool measured(const DeliveryWatch& w) const override { return w.tagged_sent() >= healthy_; }

    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t healthy = healthy_, hostile = hostile_;
        t.inject = [healthy, hostile](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            const std::string from = "sender@example.org";
            // The hostile messages spread over the healthy ones.
            std::uint64_t every = std::max<std::uint64_t>(1, healthy / hostile);
            std::uint64_t sent_hostile = 0;
            for (std::uint64_t i = 0; i < healthy; ++i) {
                c.send_mail(from, {"healthy" + std::to_string(i) + "@healthy.example"},
                            short_message(from, "healthy"));
                if (i % every == 0 && sent_hostile < hostile) {
                    std::vector<std::string> to;
                    for (int r = 0; r < hostile_rcpts; ++r)
                        to.push_back("h" + std::to_string(sent_hostile) + "-" + std::to_string(r) +
                                     "@hostile.example");
                    c.send_mail(from, to, short_message(from, "hostile"));
                    ++sent_hostile;
                }
            }
            c.quit();
        };
        t.ready = {{"incoming", healthy + std::min(hostile, healthy)}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    // The healthy sink, and the port of the receiving smtpd (reserved like
    // a sink's; master.cf starts it).
    std::vector<compat::SinkSpec> sinks() const override {
        compat::SinkSpec rx = sink_spec("hostile");
        rx.start = false;
        return {sink_spec("healthy"), rx};
    }
    std::vector<std::string> master_cf(const RunContext& run) const override {
        return {"127.0.0.1:" + std::to_string(run.sink_ports[1]) +
                " inet n - n - 10 smtpd -o myhostname=rx.hostile.example"
                " -o smtpd_recipient_restrictions=check_recipient_access,pcre:" +
                table_path(run)};
    }
    MainCf main_cf(const RunContext& run) const override {
        auto nexthop = [&](size_t i) {
            return "smtp:[127.0.0.1]:" + std::to_string(run.sink_ports[i]);
        };
        MainCf cf{{"transport_maps", "inline:{ healthy.example=" + nexthop(0) +
                                         ", hostile.example=" + nexthop(1) + " }"},
                  {"in_flow_delay", "0"}}; // the receiving smtpd shares the tokens
        if (adaptive_ && run.kind == compat::QmgrKind::Cqmgr)
            cf.emplace_back("cqmgr_adaptive_limit_transports", "smtp");
        return cf;
    }
    // The queue, and the receiving smtpd's access table.
    void populate(const RunContext& run) const override {
        template_->copy_into(run.inst);
        compat::write_file(table_path(run), "/^/ 450 4.2.0 " + crafted_text() + "\n");
    }
    std::string tag() const override { return "healthy"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"healthy_drain", "healthy destination: drain (s)", 2}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection*, Metrics& m) const override {
        // The run's start, as the common "drain" counted it.
        double start = w.last_sent_at() - m["drain"];
        m["healthy_drain"] = w.tagged_last_sent_at() - start;
    }

  private:
    static std::string table_path(const RunContext& run) {
        return run.inst.conf_dir() + "/hostile-rcpt.pcre";
    }

    Session session_;
    bool adaptive_;
    std::uint64_t healthy_;
    std::uint64_t hostile_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_hostile_reply(const Session& session) {
    return std::make_unique<HostileReply>(session, true);
}

// The same with adaptive limits off on the cqmgr side.
std::unique_ptr<Workload> make_hostile_reply_off(const Session& session) {
    return std::make_unique<HostileReply>(session, false);
}

} // namespace bench
