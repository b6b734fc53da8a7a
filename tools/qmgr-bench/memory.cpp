// Workload "memory": the queue manager's memory per recipient
// it holds in core.  20 messages of 20,000 recipients each are held in core
// at once, and the figure is (peak RSS − idle RSS) / recipients in core.
//
// Holding them: a queue manager reads a message's recipients in batches of
// at most 5,000, the first from what is left under
// qmgr_message_recipient_limit (raised to the total here), the later ones
// paid from its transport's pool (default_recipient_limit, 20,000), which
// the transport's first job takes whole and hands on to the next job only
// as its own entries finish.  With all messages on one transport, the jobs
// after the first keep their first batch only, as long as the first job's
// entries occupy the destination: a first run of this workload that way
// held 112,550 of 400,000 recipients (cqmgr's own count).  So each message
// has a transport of its own (mem0 ... mem19, smtp(8) clones in master.cf,
// its recipients at mK.example), whose pool pays all of its recipients, and
// the destination is slow but alive: one smtp-sink that waits 5 s before it
// answers each DATA, at most 2 deliveries at once per transport
// (default_destination_concurrency_limit = 2), so that the deliveries take
// only a few thousand recipients out while the rest are read.
//
// The baseline: the mail waits in saved/ (where no queue manager looks)
// until the queue manager has run idle for 3 s with an empty queue; its
// VmRSS then is the idle RSS.  The mail is then renamed into incoming and
// the queue manager told to scan it (trigger I).  The run is measured once
// all messages are in active and the peak RSS (VmHWM) has not grown by
// more than 0.5 % for 15 s (three deliveries' time); the recipients in core
// are then all of them less those delivered so far (status=sent lines).
// On the cqmgr side its own count (control socket: summary, active
// recipients) is reported as a cross-check.
#include "actions.hpp"
#include "clock.hpp"
#include "control_link.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "qmgr_probe.hpp"
#include "queue_template.hpp"
#include "smtp_client.hpp"
#include "workloads.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace bench {
namespace {

namespace fs = std::filesystem;

constexpr double idle_seconds = 3;
constexpr double settle_seconds = 15;

// Releases the mail after the idle baseline, then waits for the peak RSS
// to settle.
class HoldInjection : public Injection {
  public:
    HoldInjection(const compat::Instance& inst, compat::QmgrKind kind, std::uint64_t messages)
        : inst_(inst), kind_(kind), probe_(inst), messages_(messages) {}

    bool step() override {
        double now = boot_seconds();
        if (now < next_look_) return false;
        next_look_ = now + 0.5;
        if (started == 0) {
            if (probe_.usage().pid == 0) probe_.await_start(std::chrono::seconds(30));
            if (now < probe_.usage().started + idle_seconds) return false;
            probe_.sample();
            rss_idle = static_cast<double>(probe_.usage().rss_kb);
            release();
            started = boot_seconds();
            return false;
        }
        probe_.sample();
        std::string q = inst_.queue_dir();
        long hwm = probe_.usage().peak_rss_kb;
        // Growth within the tolerance (a delivery record, a page of
        // counters) does not restart the wait.
        if (compat::count_files(q + "/active") != messages_ ||
            compat::count_files(q + "/incoming") != 0 || hwm > last_hwm_ + hwm / 200) {
            last_hwm_ = hwm;
            last_change_ = now;
            return false;
        }
        if (now - last_change_ < settle_seconds) return false;
        if (kind_ == compat::QmgrKind::Cqmgr) cqmgr_in_core = count_in_core();
        finished = now;
        return true;
    }

    double rss_idle = 0;       // VmRSS of the idle queue manager (kB)
    double cqmgr_in_core = -1; // cqmgr's own count when measured; -1 for stock

  private:
    // saved/* → incoming/ (renames: no half-written file is ever seen),
    // then a scan request.
    void release() const {
        std::string q = inst_.queue_dir();
        for (const auto& e : fs::directory_iterator(q + "/saved"))
            fs::rename(e.path(), q + "/incoming/" + e.path().filename().string());
        compat::send_trigger(q + "/public/qmgr", "I");
    }
    // The active recipients of cqmgr's summary reply.
    double count_in_core() const {
        ControlLink link(inst_.queue_dir() + "/private/cqmgr", std::chrono::seconds(30));
        auto r = nlohmann::json::parse(link.request("summary"));
        return r.at("active").at("recipients").get<double>();
    }

    const compat::Instance& inst_;
    compat::QmgrKind kind_;
    QmgrProbe probe_;
    std::uint64_t messages_;
    double next_look_ = 0;
    long last_hwm_ = -1;
    double last_change_ = 0;
};

// Message K's recipients' domain and its transport.
std::string domain(std::uint64_t k) {
    return "m" + std::to_string(k) + ".example";
}
std::string transport(std::uint64_t k) {
    return "mem" + std::to_string(k);
}

class Memory : public Workload {
  public:
    explicit Memory(const Session& s)
        : session_(s), messages_(20), per_message_(scaled(20000, s.scale, 100)) {}

    std::string name() const override { return "memory"; }
    std::string describe() const override {
        return std::to_string(messages_) + " messages × " + with_commas(per_message_) +
               " recipients, each message on a transport of its own, to one slow smtp-sink "
               "(5 s per DATA, 2 deliveries at once per transport), all held in core "
               "(qmgr_message_recipient_limit = " +
               with_commas(recipients()) +
               "); bytes per recipient = (peak RSS − idle RSS) / (recipients − delivered)";
    }
    std::uint64_t recipients() const override { return messages_ * per_message_; }
    int timeout() const override { return 900; }
    bool reports_delivery() const override { return false; }

    // One SMTP session with pipelined recipients, no queue manager.
    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        std::uint64_t n = per_message_, m = messages_;
        t.main_cf = [n](std::uint16_t) {
            return MainCf{{"in_flow_delay", "0"},
                          {"smtpd_recipient_limit", std::to_string(n)},
                          {"message_size_limit", "0"}};
        };
        t.inject = [n, m](const compat::Instance&, std::uint16_t port) {
            compat::SmtpClient c(port, std::chrono::seconds(600));
            c.ehlo("bench.example");
            c.pipeline_recipients(500);
            const std::string from = "sender@example.org";
            const std::string body = short_message(from, "memory");
            std::vector<std::string> to(n);
            for (std::uint64_t i = 0; i < m; ++i) {
                for (std::uint64_t j = 0; j < n; ++j)
                    to[j] = "r" + std::to_string(j) + "@" + domain(i);
                c.send_mail(from, to, body);
            }
            c.quit();
        };
        t.ready = {{"incoming", messages_}};
        t.queues = {"incoming"};
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override {
        return {sink_spec("slow", {"-w", "5"})};
    }
    // mem<K>: smtp(8) under another name, so that it has a pool of its own.
    std::vector<std::string> master_cf(const RunContext&) const override {
        std::vector<std::string> lines;
        for (std::uint64_t k = 0; k < messages_; ++k)
            lines.push_back(transport(k) + " unix - - n - - smtp");
        return lines;
    }
    MainCf main_cf(const RunContext& run) const override {
        std::string map;
        for (std::uint64_t k = 0; k < messages_; ++k)
            map += (k ? ", " : "inline:{ ") + domain(k) + "=" + transport(k) +
                   ":[127.0.0.1]:" + std::to_string(run.sink_ports[0]);
        return {{"transport_maps", map + " }"},
                {"qmgr_message_recipient_limit", std::to_string(recipients())},
                {"default_recipient_limit", std::to_string(per_message_)},
                {"default_destination_concurrency_limit", "2"}};
    }
    // The messages wait in saved/ until the idle baseline is taken.
    void populate(const RunContext& run) const override {
        template_->copy_queue(run.inst, "incoming", "saved");
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<HoldInjection>(run.inst, run.kind, messages_);
    }
    // The injection ends once the peak has settled.
    bool measured(const DeliveryWatch&) const override { return true; }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"rss_idle", "idle queue manager, empty queue: VmRSS (kB)", 0},
                {"in_core", "recipients in core when measured (all less those delivered)", 0},
                {"cqmgr_in_core", "recipients in core, cqmgr's own count", 0},
                {"settle", "release to measurement (s)", 1},
                {"bytes_per_rcpt", "(peak RSS − idle RSS) per recipient in core (bytes)", 1}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection* inj, Metrics& m) const override {
        const auto* h = dynamic_cast<const HoldInjection*>(inj);
        if (h == nullptr) return;
        double in_core = static_cast<double>(recipients() - std::min(recipients(), w.sent()));
        m["rss_idle"] = h->rss_idle;
        m["in_core"] = in_core;
        if (h->cqmgr_in_core >= 0) m["cqmgr_in_core"] = h->cqmgr_in_core;
        m["settle"] = h->finished - h->started;
        if (in_core > 0) m["bytes_per_rcpt"] = (m["rss"] - h->rss_idle) * 1024 / in_core;
    }

  private:
    Session session_;
    std::uint64_t messages_;
    std::uint64_t per_message_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_memory(const Session& session) {
    return std::make_unique<Memory>(session);
}

} // namespace bench
